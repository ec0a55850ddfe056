/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The PJRT_Api function table of a PJRT plugin (libtpu.so, the CUDA plugin)
 * in a running process: where each function acceltrace probes sits in it at a
 * given version, reading and validating a table, finding one in a process
 * that called GetPjrtApi before acceltrace arrived, and turning its function
 * pointers into uprobe targets (file, file offset, placement).
 *
 * Layout (x86-64, reference/pjrt-and-probe-points.md 1.4):
 *   +0  size_t struct_size            = 40 + 8 * number of slots
 *   +8  PJRT_Extension_Base *extension_start
 *   +16 pjrt_api_version.struct_size  = 24
 *   +24 pjrt_api_version.extension_start
 *   +32 int major_version             = 0 (PJRT_API_MAJOR)
 *   +36 int minor_version
 *   +40 + 8 * i  function pointer of slot i
 *
 * Versions (docs/runtime-probes.md has the reasoning): minor 26 has its own
 * layout (no LoadedExecutable_Fingerprint at 57, no
 * TopologyDescription_Attributes at 88); minors 29 and later share the
 * current one; 27 and 28 are refused (which of the two layouts they have is
 * not known); minors above the newest verified one (94) are accepted under
 * the append-only rule, with the known slots. Any major but 0 is refused.
 *
 * Nothing is guessed: a table is used only after every check below passed,
 * and a refusal names the check that failed.
 */
#ifndef ACCELTRACE_PJRT_API_H
#define ACCELTRACE_PJRT_API_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "discover/probe_placement.h"

#define PJRT_KNOWN_MAJOR 0		/* PJRT_API_MAJOR acceltrace understands */
#define PJRT_API_HEADER_SIZE 40		/* bytes before slot 0 */
#define PJRT_API_VERSION_SIZE 24	/* sizeof(PJRT_Api_Version) */
#define PJRT_MINOR_OLDEST 26		/* oldest minor with a known layout */
#define PJRT_MINOR_NEWEST_VERIFIED 94	/* newest minor checked against a header */
#define PJRT_MINOR_MAX_PLAUSIBLE 999	/* above this a "minor" is garbage */
#define PJRT_MAX_SLOTS 4096		/* above this a struct_size is garbage */

/* The functions acceltrace probes or uses to validate a table. */
enum pjrt_fn {
	PJRT_FN_ERROR_DESTROY,
	PJRT_FN_ERROR_MESSAGE,
	PJRT_FN_ERROR_GET_CODE,
	PJRT_FN_PLUGIN_INITIALIZE,
	PJRT_FN_EVENT_DESTROY,
	PJRT_FN_EVENT_IS_READY,
	PJRT_FN_EVENT_ERROR,
	PJRT_FN_EVENT_AWAIT,
	PJRT_FN_EVENT_ON_READY,
	PJRT_FN_CLIENT_CREATE,
	PJRT_FN_CLIENT_DESTROY,
	PJRT_FN_CLIENT_PLATFORM_NAME,
	PJRT_FN_CLIENT_DEVICES,
	PJRT_FN_CLIENT_ADDRESSABLE_DEVICES,
	PJRT_FN_CLIENT_COMPILE,
	PJRT_FN_CLIENT_BUFFER_FROM_HOST_BUFFER,
	PJRT_FN_LOADED_EXECUTABLE_DESTROY,
	PJRT_FN_LOADED_EXECUTABLE_EXECUTE,
	PJRT_FN_BUFFER_DESTROY,
	PJRT_FN_BUFFER_ON_DEVICE_SIZE_IN_BYTES,
	PJRT_FN_BUFFER_COPY_TO_DEVICE,
	PJRT_FN_BUFFER_TO_HOST_BUFFER,
	PJRT_FN_BUFFER_READY_EVENT,
	PJRT_FN_COMPILE,
	/*
	 * Optional: used when the table has them (late minors only; a NULL
	 * pointer means the plugin does not implement it), never required.
	 */
	PJRT_FN_BUFFER_COPY_TO_MEMORY,
	PJRT_FN_BUFFER_COPY_RAW_TO_HOST,
	PJRT_FN_ASYNC_H2D_TRANSFER_DATA,
	/* Device memory (docs/runtime-probes.md): optional so that a plugin
	 * leaving them NULL is still traced. */
	PJRT_FN_BUFFER_DELETE,
	PJRT_FN_CLIENT_CREATE_UNINITIALIZED_BUFFER,
	PJRT_FN__COUNT,
};

enum pjrt_layout {
	PJRT_LAYOUT_UNKNOWN,	/* refused */
	PJRT_LAYOUT_MINOR26,	/* minor 26: 88 slots, PJRT_Compile last at 87 */
	PJRT_LAYOUT_CURRENT,	/* minor >= 29: LoadedExecutable_Fingerprint at 57 */
};

/* "LoadedExecutable_Execute": the name without the PJRT_ prefix. */
const char *pjrt_fn_name(enum pjrt_fn fn);
/* Whether every accepted table must hold fn (non-NULL, in the plugin's text). */
bool pjrt_fn_required(enum pjrt_fn fn);

/*
 * The layout of a given minor version; *why (may be NULL) gets a sentence
 * saying how sure that is (verified, inferred, append-only rule) or why the
 * minor is refused.
 */
enum pjrt_layout pjrt_layout_of_minor(int minor, const char **why);

/*
 * The slot index of fn in a table of the given minor version. Returns the
 * slot (>= 0), -ENOENT when that minor has no such slot (an optional
 * function newer than the minor), -ENOTSUP when the minor's layout is not
 * known (see pjrt_layout_of_minor).
 */
int pjrt_fn_slot(enum pjrt_fn fn, int minor);

/* A validated table in one process. */
struct pjrt_api;

/*
 * Reads and validates the table at addr in process pid (0: this process).
 *
 * library is the plugin the table must belong to: its path as the process's
 * maps show it (another spelling is not looked up: a path the process
 * controls is not resolved as root). NULL: the file the table lies
 * in, or, for a table in anonymous memory, the file whose mapping ends where
 * that memory begins (its .bss); a table elsewhere (heap) needs library.
 *
 * Checks, in order: the 40-byte header is readable;
 * pjrt_api_version.struct_size == 24; major == 0; the minor is plausible and
 * its layout known; struct_size == 40 + 8 * n with n covering every required
 * slot at that minor; every required function pointer is non-NULL and lies
 * in an executable mapping of the library; every optional one present is
 * NULL or lies there too.
 *
 * Returns the table, or NULL with errno: EINVAL (a check failed), ENOTSUP
 * (a major or minor acceltrace does not know), EFAULT (unreadable memory),
 * ENOENT (library not mapped by pid), ESRCH/EPERM/EACCES (no such process,
 * no access), ENOMEM. reason (may be NULL) gets one line either way: on
 * refusal the check that failed, with the values, e.g. "slot 55
 * (LoadedExecutable_Execute) = 0x7f0012345678 is outside libtpu.so's
 * executable segment (it lies in libtpu.so rw-p)"; on success what was
 * accepted and how sure the layout is.
 */
struct pjrt_api *pjrt_api__read(pid_t pid, uint64_t addr, const char *library,
				char *reason, size_t reason_size);

/*
 * The uretprobe path: ret is what GetPjrtApi in library returned in process
 * pid. The same checks as pjrt_api__read with that library.
 */
struct pjrt_api *pjrt_api__from_getpjrtapi(pid_t pid, const char *library,
					   uint64_t ret, char *reason,
					   size_t reason_size);

/*
 * Finds the table of a running process that called GetPjrtApi before
 * acceltrace arrived: scans library's data mappings (its file-backed
 * readable, non-executable mappings, and the anonymous mapping right after
 * its last file-backed one, which holds the rest of its .bss) for 8-aligned
 * candidate headers (version struct_size 24 at +16, a small major at +32, a
 * plausible minor at +36, a plausible struct_size at +0) and validates each
 * as pjrt_api__read does.
 *
 * Returns the one valid table (identical copies count as one), or NULL with
 * errno: ENOENT when there is no candidate header at all (a table built on
 * the first GetPjrtApi call is all zeroes before it); when candidates exist
 * and none is valid, the error of the one that got furthest (EINVAL: a check
 * failed, ENOTSUP: an unknown version), the reason saying how many there
 * were and what failed; ENOTUNIQ when different valid tables exist (reason
 * names two), or the errors of pjrt_api__read.
 */
struct pjrt_api *pjrt_api__scan(pid_t pid, const char *library, char *reason,
				size_t reason_size);

/* Accepts NULL. */
void pjrt_api__free(struct pjrt_api *api);

uint64_t pjrt_api__addr(const struct pjrt_api *api);
int pjrt_api__major(const struct pjrt_api *api);
int pjrt_api__minor(const struct pjrt_api *api);
uint64_t pjrt_api__struct_size(const struct pjrt_api *api);
size_t pjrt_api__slot_count(const struct pjrt_api *api);
enum pjrt_layout pjrt_api__layout(const struct pjrt_api *api);
/* The plugin's path as the process's maps show it. */
const char *pjrt_api__library(const struct pjrt_api *api);
/* What was accepted, as the success reason said. */
const char *pjrt_api__note(const struct pjrt_api *api);

/*
 * The slot of fn in this table (>= 0), or -ENOENT when the table does not
 * have it: absent at its minor, beyond its struct_size, or NULL (optional
 * functions only; a required one is always there).
 */
int pjrt_api__slot(const struct pjrt_api *api, enum pjrt_fn fn);
/* fn's address in the process, or 0 when the table does not have it. */
uint64_t pjrt_api__fn_addr(const struct pjrt_api *api, enum pjrt_fn fn);

/* Where to attach a uprobe for one function of the table. */
struct pjrt_probe_target {
	enum pjrt_fn fn;
	int slot;
	uint64_t addr;			/* the function in the process */
	char path[4096];		/* the file's name in the process (messages) */
	/* The file itself, opened through its mapping (proc_map__open): the
	 * offsets are in it and the uprobe goes on it, as "/proc/self/fd/N".
	 * Owned by the api: valid until the next call or pjrt_api__free. */
	int fd;
	uint64_t dev, ino;		/* its identity */
	uint64_t file_offset;		/* of the function's first byte */
	struct probe_placement placement;	/* from the file's code bytes */
	uint64_t attach_offset;		/* file_offset + placement.offset */
};

/*
 * Resolves fn to a uprobe target: the process address -> (file, file
 * offset) through the maps read at validation, the file opened by its
 * mapping (refused when the range maps another file now), and the placement
 * decided from the code bytes at that offset in the file. Returns 0,
 * -ENOENT when the table does not have fn, -ESTALE when the file no longer
 * holds code at that offset (replaced on disk), -EOPNOTSUPP when the file
 * is not x86-64 (place at attach_offset = file_offset then; t is filled),
 * or the error opening the file.
 */
int pjrt_api__probe_target(struct pjrt_api *api, enum pjrt_fn fn,
			   struct pjrt_probe_target *t);

#endif /* ACCELTRACE_PJRT_API_H */
