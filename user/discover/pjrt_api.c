// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * PJRT_Api tables in running processes: slot tables per version, reading
 * and validating a table, and uprobe targets. The scan for a table lives in
 * pjrt_scan.c; what both share, in pjrt_api_internal.h. See pjrt_api.h and
 * docs/runtime-probes.md.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define LOG_CONTEXT "pjrt"
#include "lib/log.h"
#include "discover/elf_image.h"
#include "discover/pjrt_api.h"
#include "discover/pjrt_api_internal.h"
#include "discover/proc_maps.h"

/*
 * Where each function sits, as data (reference/pjrt-and-probe-points.md
 * 1.4): its slot in the minor-26 layout (-1: absent), its slot in the
 * current layout (minor >= 29), and the first minor at which acceltrace
 * uses the current-layout slot (0: every minor with that layout).
 */
struct fn_desc {
	const char *name;
	int slot_minor26;
	int slot;
	int since_minor;
	bool required;
};

static const struct fn_desc fn_descs[PJRT_FN__COUNT] = {
	[PJRT_FN_ERROR_DESTROY]			= { "Error_Destroy", 0, 0, 0, true },
	[PJRT_FN_ERROR_MESSAGE]			= { "Error_Message", 1, 1, 0, true },
	[PJRT_FN_ERROR_GET_CODE]		= { "Error_GetCode", 2, 2, 0, true },
	[PJRT_FN_PLUGIN_INITIALIZE]		= { "Plugin_Initialize", 3, 3, 0, true },
	[PJRT_FN_EVENT_DESTROY]			= { "Event_Destroy", 5, 5, 0, true },
	[PJRT_FN_EVENT_IS_READY]		= { "Event_IsReady", 6, 6, 0, true },
	[PJRT_FN_EVENT_ERROR]			= { "Event_Error", 7, 7, 0, true },
	[PJRT_FN_EVENT_AWAIT]			= { "Event_Await", 8, 8, 0, true },
	[PJRT_FN_EVENT_ON_READY]		= { "Event_OnReady", 9, 9, 0, true },
	[PJRT_FN_CLIENT_CREATE]			= { "Client_Create", 10, 10, 0, true },
	[PJRT_FN_CLIENT_DESTROY]		= { "Client_Destroy", 11, 11, 0, true },
	[PJRT_FN_CLIENT_PLATFORM_NAME]		= { "Client_PlatformName", 12, 12, 0, true },
	[PJRT_FN_CLIENT_DEVICES]		= { "Client_Devices", 15, 15, 0, true },
	[PJRT_FN_CLIENT_ADDRESSABLE_DEVICES]	= { "Client_AddressableDevices", 16, 16, 0, true },
	[PJRT_FN_CLIENT_COMPILE]		= { "Client_Compile", 20, 20, 0, true },
	[PJRT_FN_CLIENT_BUFFER_FROM_HOST_BUFFER] = { "Client_BufferFromHostBuffer", 22, 22, 0, true },
	[PJRT_FN_LOADED_EXECUTABLE_DESTROY]	= { "LoadedExecutable_Destroy", 50, 50, 0, true },
	[PJRT_FN_LOADED_EXECUTABLE_EXECUTE]	= { "LoadedExecutable_Execute", 55, 55, 0, true },
	/* From here the minor-26 slots are one lower (no Fingerprint at 57). */
	[PJRT_FN_BUFFER_DESTROY]		= { "Buffer_Destroy", 57, 58, 0, true },
	[PJRT_FN_BUFFER_ON_DEVICE_SIZE_IN_BYTES] = { "Buffer_OnDeviceSizeInBytes", 63, 64, 0, true },
	[PJRT_FN_BUFFER_COPY_TO_DEVICE]		= { "Buffer_CopyToDevice", 68, 69, 0, true },
	[PJRT_FN_BUFFER_TO_HOST_BUFFER]		= { "Buffer_ToHostBuffer", 69, 70, 0, true },
	[PJRT_FN_BUFFER_READY_EVENT]		= { "Buffer_ReadyEvent", 71, 72, 0, true },
	/* Two lower at minor 26 (no TopologyDescription_Attributes at 88). */
	[PJRT_FN_COMPILE]			= { "Compile", 87, 89, 0, true },
	/* Optional tail slots, at the minors where they were verified. */
	[PJRT_FN_BUFFER_COPY_TO_MEMORY]		= { "Buffer_CopyToMemory", -1, 92, 33, false },
	[PJRT_FN_BUFFER_COPY_RAW_TO_HOST]	= { "Buffer_CopyRawToHost", -1, 100, 94, false },
	[PJRT_FN_ASYNC_H2D_TRANSFER_DATA]	= { "AsyncHostToDeviceTransferManager_TransferData", -1, 102, 94, false },
	/* In every layout (one lower at minor 26), optional all the same. */
	[PJRT_FN_BUFFER_DELETE]			= { "Buffer_Delete", 66, 67, 0, false },
	[PJRT_FN_CLIENT_CREATE_UNINITIALIZED_BUFFER] = { "Client_CreateUninitializedBuffer", -1, 112, 94, false },
};

const char *pjrt_fn_name(enum pjrt_fn fn)
{
	return (unsigned)fn < PJRT_FN__COUNT ? fn_descs[fn].name : "?";
}

bool pjrt_fn_required(enum pjrt_fn fn)
{
	return (unsigned)fn < PJRT_FN__COUNT && fn_descs[fn].required;
}

enum pjrt_layout pjrt_layout_of_minor(int minor, const char **why)
{
	const char *w;
	enum pjrt_layout l = PJRT_LAYOUT_UNKNOWN;

	if (minor < 0 || minor > PJRT_MINOR_MAX_PLAUSIBLE) {
		w = "not a plausible minor version";
	} else if (minor < PJRT_MINOR_OLDEST) {
		w = "older than minor 26, the oldest PJRT_Api layout acceltrace knows";
	} else if (minor == 26) {
		l = PJRT_LAYOUT_MINOR26;
		w = "layout verified against the minor-26 header";
	} else if (minor <= 28) {
		w = "minors 27 and 28 lie between minor 26 (no LoadedExecutable_Fingerprint) "
		    "and minor 29 (Fingerprint at slot 57); which layout they have is not "
		    "known, and acceltrace does not guess";
	} else if (minor <= 32) {
		l = PJRT_LAYOUT_CURRENT;
		w = "current layout inferred, not verified: the CHANGELOG's 0.29 appends "
		    "slots 90-91 to it and 0.30-0.32 only append; accepted because every "
		    "check passed";
	} else if (minor <= PJRT_MINOR_NEWEST_VERIFIED) {
		l = PJRT_LAYOUT_CURRENT;
		w = "current layout, verified at minors 33, 55, 60 and 94 (append-only between)";
	} else {
		l = PJRT_LAYOUT_CURRENT;
		w = "newer than minor 94, the newest verified: accepted under PJRT's "
		    "append-only rule, with the slots known at 94";
	}
	if (why)
		*why = w;
	return l;
}

static int slot_in_layout(enum pjrt_fn fn, enum pjrt_layout layout, int minor)
{
	const struct fn_desc *d = &fn_descs[fn];

	switch (layout) {
	case PJRT_LAYOUT_MINOR26:
		return d->slot_minor26 >= 0 ? d->slot_minor26 : -ENOENT;
	case PJRT_LAYOUT_CURRENT:
		return minor >= d->since_minor ? d->slot : -ENOENT;
	default:
		return -ENOTSUP;
	}
}

int pjrt_fn_slot(enum pjrt_fn fn, int minor)
{
	if ((unsigned)fn >= PJRT_FN__COUNT)
		return -EINVAL;
	return slot_in_layout(fn, pjrt_layout_of_minor(minor, NULL), minor);
}

/* ---------------------------------------------------------------- tables */

struct pjrt_api {
	pid_t pid;
	struct table t;
	struct proc_maps *maps;		/* the snapshot it was validated against */
	const struct proc_object *lib;	/* in maps */
	char note[384];
	struct elf_image *elf;		/* the last file probe_target opened */
	uint64_t elf_dev, elf_ino;	/* its identity */
};

void pjrt_say(char *buf, size_t size, const char *fmt, ...)
{
	va_list ap;

	if (!buf || !size)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, size, fmt, ap);
	va_end(ap);
}

const char *pjrt_base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s && s[1] ? s + 1 : path;
}

/* "libtpu.so r-xp", "[heap] rw-p", "anonymous memory rw-p", "no mapping". */
static void describe_addr(const struct proc_maps *maps, uint64_t addr,
			  char *buf, size_t size)
{
	const struct proc_map *m = proc_maps__find(maps, addr);
	const char *what;

	if (!m) {
		snprintf(buf, size, "no mapping");
		return;
	}
	if (proc_map__is_file(m))
		what = pjrt_base_name(m->path);
	else if (m->path[0])
		what = m->path;
	else
		what = "anonymous memory";
	snprintf(buf, size, "%s %c%c%c%c", what, m->r ? 'r' : '-',
		 m->w ? 'w' : '-', m->x ? 'x' : '-', m->shared ? 's' : 'p');
}

bool pjrt_in_lib_text(const struct proc_maps *maps,
		      const struct proc_object *lib, uint64_t addr)
{
	const struct proc_map *m = proc_maps__find(maps, addr);

	return m && m->x && proc_maps__object_of(maps, m) == lib;
}

/*
 * Validates the table at addr against lib. On success t holds it (slots
 * malloc'd); on failure reason says which check failed. *stage is how far
 * it got.
 */
int pjrt_validate(pid_t pid, const struct proc_maps *maps,
		  const struct proc_object *lib, uint64_t addr,
		  struct table *t, enum stage *stage, char *reason,
		  size_t size)
{
	const char *lib_name = pjrt_base_name(lib->path);
	struct api_header h;
	size_t n, needed = 0;
	int needed_fn = -1;
	uint64_t *slots = NULL;
	char where[160];
	int err;

	memset(t, 0, sizeof(*t));
	*stage = STAGE_READ;
	err = process_read(pid, addr, &h, sizeof(h));
	if (err) {
		pjrt_say(reason, size, "cannot read the PJRT_Api header at 0x%" PRIx64
			 " in process %d: %s", addr, (int)pid, strerror(-err));
		return err;
	}

	*stage = STAGE_VERSION_SIZE;
	if (h.version_struct_size != PJRT_API_VERSION_SIZE) {
		pjrt_say(reason, size, "pjrt_api_version.struct_size (at +16) is %" PRIu64
			 ", expected %d (sizeof PJRT_Api_Version)",
			 h.version_struct_size, PJRT_API_VERSION_SIZE);
		return -EINVAL;
	}

	*stage = STAGE_MAJOR;
	if (h.major != PJRT_KNOWN_MAJOR) {
		pjrt_say(reason, size, "major version %d is not supported (acceltrace "
			 "knows major %d)", h.major, PJRT_KNOWN_MAJOR);
		return -ENOTSUP;
	}

	*stage = STAGE_MINOR;
	t->layout = pjrt_layout_of_minor(h.minor, &t->layout_why);
	if (t->layout == PJRT_LAYOUT_UNKNOWN) {
		pjrt_say(reason, size, "minor version %d is not supported: %s", h.minor,
			 t->layout_why);
		return h.minor < 0 || h.minor > PJRT_MINOR_MAX_PLAUSIBLE ?
		       -EINVAL : -ENOTSUP;
	}

	*stage = STAGE_STRUCT_SIZE;
	for (int fn = 0; fn < PJRT_FN__COUNT; fn++) {
		int slot = slot_in_layout(fn, t->layout, h.minor);

		if (fn_descs[fn].required && slot >= 0 && (size_t)slot + 1 > needed) {
			needed = slot + 1;
			needed_fn = fn;
		}
	}
	if (h.struct_size < PJRT_API_HEADER_SIZE ||
	    (h.struct_size - PJRT_API_HEADER_SIZE) % 8) {
		pjrt_say(reason, size, "struct_size %" PRIu64 " is not 40 + 8 * n",
			 h.struct_size);
		return -EINVAL;
	}
	n = (h.struct_size - PJRT_API_HEADER_SIZE) / 8;
	if (n > PJRT_MAX_SLOTS) {
		pjrt_say(reason, size, "struct_size %" PRIu64 " (%zu slots) is not "
			 "plausible (at most %d slots)", h.struct_size, n, PJRT_MAX_SLOTS);
		return -EINVAL;
	}
	if (n < needed) {
		pjrt_say(reason, size, "struct_size %" PRIu64 " holds %zu slots; minor %d "
			 "needs at least %zu (slot %zu, %s)", h.struct_size, n, h.minor,
			 needed, needed - 1, pjrt_fn_name(needed_fn));
		return -EINVAL;
	}

	*stage = STAGE_SLOTS_READ;
	slots = malloc(n * sizeof(*slots));
	if (!slots)
		return -ENOMEM;
	err = process_read(pid, addr + PJRT_API_HEADER_SIZE, slots, n * sizeof(*slots));
	if (err) {
		pjrt_say(reason, size, "cannot read the %zu function pointers after the "
			 "header at 0x%" PRIx64 ": %s", n, addr, strerror(-err));
		goto cleanup;
	}

	*stage = STAGE_POINTERS;
	for (int fn = 0; fn < PJRT_FN__COUNT; fn++) {
		int slot = slot_in_layout(fn, t->layout, h.minor);
		uint64_t p;

		if (slot < 0 || (size_t)slot >= n)
			continue;	/* optional and absent (required ones fit) */
		p = slots[slot];
		if (!p) {
			if (!fn_descs[fn].required)
				continue;
			pjrt_say(reason, size, "slot %d (%s) is NULL", slot,
				 pjrt_fn_name(fn));
			err = -EINVAL;
			goto cleanup;
		}
		if (!pjrt_in_lib_text(maps, lib, p)) {
			describe_addr(maps, p, where, sizeof(where));
			pjrt_say(reason, size, "slot %d (%s) = 0x%" PRIx64 " is outside "
				 "%s's executable segment (it lies in %s)", slot,
				 pjrt_fn_name(fn), p, lib_name, where);
			err = -EINVAL;
			goto cleanup;
		}
	}

	*stage = STAGE_VALID;
	t->addr = addr;
	t->h = h;
	t->nslots = n;
	t->slots = slots;
	slots = NULL;
	pjrt_say(reason, size, "PJRT_Api at 0x%" PRIx64 " in %s: version %d.%d, %zu "
		 "slots; %s", addr, lib_name, h.major, h.minor, n, t->layout_why);
	err = 0;
cleanup:
	free(slots);
	return err;
}

/* ---------------------------------------------------------------- libraries */

/*
 * The mapped object that is library: named so in maps. Never by looking
 * the name up as a path: callers pass the name maps gave them, and a
 * path the process controls is not resolved as root (safe_open.h).
 */
const struct proc_object *pjrt_find_library(const struct proc_maps *maps,
					    const char *library)
{
	for (size_t i = 0; i < proc_maps__object_count(maps); i++) {
		const struct proc_object *o = proc_maps__object(maps, i);

		if (!strcmp(o->path, library))
			return o;
	}
	return NULL;
}

/* The object a table at addr belongs to: the file it lies in, or the file
 * whose last mapping ends where its anonymous mapping (.bss) begins. */
static const struct proc_object *library_of_table(const struct proc_maps *maps,
						  uint64_t addr)
{
	const struct proc_map *m = proc_maps__find(maps, addr), *prev;
	const struct proc_object *o;
	size_t i;

	if (!m)
		return NULL;
	o = proc_maps__object_of(maps, m);
	if (o)
		return o;
	if (m->inode || m->path[0])
		return NULL;
	i = proc_maps__index(maps, m);
	if (!i)
		return NULL;
	prev = proc_maps__get(maps, i - 1);
	if (prev->end != m->start)
		return NULL;
	return proc_maps__object_of(maps, prev);
}

struct proc_maps *pjrt_read_maps(pid_t pid, char *reason, size_t size)
{
	struct proc_maps *maps = proc_maps__read(pid);
	int err;

	if (maps)
		return maps;
	err = errno == ENOENT ? ESRCH : errno;
	pjrt_say(reason, size, "cannot read the memory map of process %d: %s",
		 (int)pid, strerror(err));
	errno = err;
	return NULL;
}

struct pjrt_api *pjrt_make_api(pid_t pid, struct proc_maps *maps,
			       const struct proc_object *lib,
			       struct table *t, const char *note)
{
	struct pjrt_api *api = calloc(1, sizeof(*api));

	if (!api)
		return NULL;
	api->pid = pid;
	api->maps = maps;
	api->lib = lib;
	api->t = *t;
	t->slots = NULL;
	snprintf(api->note, sizeof(api->note), "%s", note);
	return api;
}

static struct pjrt_api *read_with(pid_t pid, uint64_t addr,
				  const char *library, const char *what,
				  char *reason, size_t size)
{
	struct proc_maps *maps;
	const struct proc_object *lib;
	struct pjrt_api *api = NULL;
	struct table t = {};
	char msg[512], where[160];
	enum stage stage;
	int err;

	maps = pjrt_read_maps(pid, reason, size);
	if (!maps)
		return NULL;
	if (library) {
		lib = pjrt_find_library(maps, library);
		if (!lib) {
			pjrt_say(reason, size, "%s is not mapped by process %d", library,
				 (int)pid);
			err = -ENOENT;
			goto cleanup;
		}
	} else {
		lib = library_of_table(maps, addr);
		if (!lib) {
			describe_addr(maps, addr, where, sizeof(where));
			pjrt_say(reason, size, "the %s at 0x%" PRIx64 " lies in %s, not in "
				 "a library or right after one; name the library", what,
				 addr, where);
			err = -EINVAL;
			goto cleanup;
		}
	}
	err = pjrt_validate(pid, maps, lib, addr, &t, &stage, msg, sizeof(msg));
	if (err) {
		pjrt_say(reason, size, "%s", msg);
		goto cleanup;
	}
	api = pjrt_make_api(pid, maps, lib, &t, msg);
	if (!api) {
		err = -ENOMEM;
		goto cleanup;
	}
	pjrt_say(reason, size, "%s", msg);
	return api;

cleanup:
	free(t.slots);
	proc_maps__free(maps);
	errno = -err;
	return NULL;
}

struct pjrt_api *pjrt_api__read(pid_t pid, uint64_t addr, const char *library,
				char *reason, size_t reason_size)
{
	return read_with(pid, addr, library, "table", reason, reason_size);
}

struct pjrt_api *pjrt_api__from_getpjrtapi(pid_t pid, const char *library,
					   uint64_t ret, char *reason,
					   size_t reason_size)
{
	if (!library) {
		pjrt_say(reason, reason_size, "no library given for GetPjrtApi's "
			 "return value");
		errno = EINVAL;
		return NULL;
	}
	if (!ret) {
		pjrt_say(reason, reason_size, "GetPjrtApi in %s returned NULL",
			 pjrt_base_name(library));
		errno = EINVAL;
		return NULL;
	}
	return read_with(pid, ret, library, "table GetPjrtApi returned", reason,
			 reason_size);
}

/* ---------------------------------------------------------------- accessors */

void pjrt_api__free(struct pjrt_api *api)
{
	if (!api)
		return;
	elf_image__free(api->elf);
	proc_maps__free(api->maps);
	free(api->t.slots);
	free(api);
}

uint64_t pjrt_api__addr(const struct pjrt_api *api)
{
	return api->t.addr;
}

int pjrt_api__major(const struct pjrt_api *api)
{
	return api->t.h.major;
}

int pjrt_api__minor(const struct pjrt_api *api)
{
	return api->t.h.minor;
}

uint64_t pjrt_api__struct_size(const struct pjrt_api *api)
{
	return api->t.h.struct_size;
}

size_t pjrt_api__slot_count(const struct pjrt_api *api)
{
	return api->t.nslots;
}

enum pjrt_layout pjrt_api__layout(const struct pjrt_api *api)
{
	return api->t.layout;
}

const char *pjrt_api__library(const struct pjrt_api *api)
{
	return api->lib->path;
}

const char *pjrt_api__note(const struct pjrt_api *api)
{
	return api->note;
}

int pjrt_api__slot(const struct pjrt_api *api, enum pjrt_fn fn)
{
	int slot;

	if ((unsigned)fn >= PJRT_FN__COUNT)
		return -EINVAL;
	slot = slot_in_layout(fn, api->t.layout, api->t.h.minor);
	if (slot < 0)
		return slot == -ENOTSUP ? -ENOENT : slot;
	if ((size_t)slot >= api->t.nslots || !api->t.slots[slot])
		return -ENOENT;
	return slot;
}

uint64_t pjrt_api__fn_addr(const struct pjrt_api *api, enum pjrt_fn fn)
{
	int slot = pjrt_api__slot(api, fn);

	return slot < 0 ? 0 : api->t.slots[slot];
}

/* ---------------------------------------------------------------- targets */

int pjrt_api__probe_target(struct pjrt_api *api, enum pjrt_fn fn,
			   struct pjrt_probe_target *t)
{
	const struct proc_map *m;
	uint64_t vaddr;
	int slot, err, pfd;
	struct stat st;

	memset(t, 0, sizeof(*t));
	t->fd = -1;
	slot = pjrt_api__slot(api, fn);
	if (slot < 0)
		return slot;
	t->fn = fn;
	t->slot = slot;
	t->addr = api->t.slots[slot];
	err = proc_maps__addr_to_file_offset(api->maps, t->addr, &m,
					     &t->file_offset);
	if (err)
		return err;
	/* The file the mapping holds, opened by the mapping: the offsets
	 * above are in it, and so is the attach (through t->fd). */
	pfd = proc_map__open(api->pid, m, &st);
	if (pfd < 0) {
		log_debug("cannot open the file mapped at 0x%" PRIx64 " in process %d: %s",
			  m->start, api->pid, strerror(-pfd));
		return pfd;
	}
	if (!api->elf || api->elf_dev != st.st_dev || api->elf_ino != st.st_ino) {
		elf_image__free(api->elf);
		api->elf = elf_image__reopen(pfd, m->path);
		if (!api->elf) {
			err = -errno;
			close(pfd);
			log_debug("cannot read %s: %s", m->path, strerror(-err));
			return err;
		}
		api->elf_dev = st.st_dev;
		api->elf_ino = st.st_ino;
	}
	close(pfd);
	t->fd = elf_image__fd(api->elf);
	t->dev = st.st_dev;
	t->ino = st.st_ino;
	snprintf(t->path, sizeof(t->path), "%s", m->path);
	if (elf_image__offset_to_vaddr(api->elf, t->file_offset, &vaddr)) {
		log_debug("%s: no segment holds file offset 0x%" PRIx64,
			  t->path, t->file_offset);
		return -ESTALE;
	}
	err = probe_placement__for_vaddr(api->elf, vaddr, &t->placement);
	if (err == -EOPNOTSUPP) {
		snprintf(t->placement.why, sizeof(t->placement.why),
			 "not an x86-64 file: placement not decided, probe at +0");
		return err;
	}
	if (err == -ENOENT)
		return -ESTALE;	/* the offset is not code in this file */
	if (err)
		return err;
	t->attach_offset = t->file_offset + t->placement.offset;
	return 0;
}
