// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* A PJRT plugin's profiler extension into devtrace (pjrt_backend.h). */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include <linux/types.h>

#include "acceltrace/devtrace.h"
#include "agent/agent_log.h"
#include "agent/pjrt_backend.h"
#include "agent/pjrt_profiler_abi.h"
#include "agent/tpu_buffers.h"
#include "agent/xspace_decode.h"

/* A collection larger than this is refused (a plugin's runaway buffer). */
#define MAX_COLLECTION_BYTES (1024ull << 20)
/* Events taken from one collection at most (48 bytes each held). */
#define MAX_EVENTS (4u << 20)
#define MAX_EXTENSIONS 64	/* a chain longer than this is not walked on */

/*
 * tensorflow.ProfileOptions (profiler_options.proto): version = 1 (field
 * 5), device_tracer_level = 1 (field 3); host and Python tracers 0 (off:
 * the probes see the host at a fraction of TraceMe's cost).
 */
static const char profile_options[] = { 0x18, 0x01, 0x28, 0x01 };

static struct plugin_profiler_api *api;
static struct plugin_profiler *session;
static struct tpu_buffers *out;
static char plugin_name[256];
static uint64_t dropped;

/* Says @what failed with the plugin's own words; frees the error. */
static int plugin_error(struct plugin_profiler_error *e, const char *what)
{
	struct plugin_profiler_error_message_args m = {
		.struct_size = PJRT_SIZE_TO(struct plugin_profiler_error_message_args, message_size),
		.error = e,
	};
	struct plugin_profiler_error_destroy_args d = {
		.struct_size = PJRT_SIZE_TO(struct plugin_profiler_error_destroy_args, error),
		.error = e,
	};

	if (api->error_message)
		api->error_message(&m);
	agent_say(AGENT_P_PJRT, "%s's profiler refused to %s: %.*s", plugin_name, what,
		  m.message ? (int)(m.message_size > 400 ? 400 : m.message_size) : 7,
		  m.message ? m.message : "no text");
	if (api->error_destroy)
		api->error_destroy(&d);
	return -EIO;
}

/* ---------------------------------------------------------------- finding */

/* Objects looked at per search at most (a process maps a few hundred). */
#define MAX_OBJECTS 2048

struct loaded {
	char **names;
	uintptr_t *bases;
	size_t n;
};

/* The profiler extension in @head's chain, NULL when none. */
static struct plugin_profiler_api *profiler_in(const struct pjrt_api_head *head)
{
	const struct pjrt_extension_base *e = head->extension_start;

	if (head->struct_size < sizeof(*head))
		return NULL;
	for (int i = 0; e && i < MAX_EXTENSIONS; i++, e = e->next) {
		const struct pjrt_profiler_extension *p = (const void *)e;

		if (e->type != PJRT_EXTENSION_TYPE_PROFILER ||
		    e->struct_size < PJRT_SIZE_TO(struct pjrt_profiler_extension, profiler_api))
			continue;
		if (p->profiler_api && p->profiler_api->struct_size >=
		    PJRT_SIZE_TO(struct plugin_profiler_api, collect_data))
			return p->profiler_api;
	}
	return NULL;
}

/* Only names and bases are taken under the loader's lock: opening an
 * object or running a plugin's code there could deadlock the process. */
static int note_object(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct loaded *l = arg;
	char *name;

	(void)size;
	if (!info->dlpi_name || !info->dlpi_name[0])
		return 0;
	if (l->n == MAX_OBJECTS)
		return 1;
	name = strdup(info->dlpi_name);
	if (!name)
		return 1;
	l->names[l->n] = name;
	l->bases[l->n++] = (uintptr_t)info->dlpi_addr;
	return 0;
}

typedef const struct pjrt_api_head *get_pjrt_api_fn(void);

/* @name's own GetPjrtApi (not one of its dependencies'), NULL when none. */
static get_pjrt_api_fn *own_get_api(const char *name, uintptr_t base)
{
	get_pjrt_api_fn *get;
	Dl_info where;
	void *h = dlopen(name, RTLD_LAZY | RTLD_NOLOAD);

	if (!h)
		return NULL;
	*(void **)&get = dlsym(h, "GetPjrtApi");
	dlclose(h);	/* a reference dropped: it stays loaded */
	if (!get || !dladdr((void *)get, &where) || (uintptr_t)where.dli_fbase != base)
		return NULL;
	return get;
}

static int count_loads(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	*(unsigned long long *)arg = info->dlpi_adds;
	return 1;	/* the count is the same in every entry */
}

int pjrt_backend_find(void)
{
	static unsigned long long searched_at_loads;
	static int last_err;
	unsigned long long loads = 0;
	struct loaded l = { 0 };
	bool plugin_seen = false;
	const char *found = NULL;

	if (api)
		return 0;
	/* Asked at every lease: looked again only once a library loaded. */
	dl_iterate_phdr(count_loads, &loads);
	if (loads && loads == searched_at_loads)
		return last_err;
	searched_at_loads = loads;
	l.names = calloc(MAX_OBJECTS, sizeof(*l.names));
	l.bases = calloc(MAX_OBJECTS, sizeof(*l.bases));
	if (!l.names || !l.bases) {
		free(l.names);
		free(l.bases);
		searched_at_loads = 0;
		return -ENOMEM;
	}
	dl_iterate_phdr(note_object, &l);
	for (size_t i = 0; i < l.n && !api; i++) {
		get_pjrt_api_fn *get = own_get_api(l.names[i], l.bases[i]);
		const struct pjrt_api_head *head;

		if (!get)
			continue;
		plugin_seen = true;
		found = l.names[i];
		head = get();
		api = head ? profiler_in(head) : NULL;
	}
	if (found) {
		const char *base = strrchr(found, '/');

		snprintf(plugin_name, sizeof(plugin_name), "%s", base ? base + 1 : found);
	}
	for (size_t i = 0; i < l.n; i++)
		free(l.names[i]);
	free(l.names);
	free(l.bases);
	if (!api) {
		last_err = plugin_seen ? -ENOTSUP : -ENOENT;
		return last_err;
	}
	agent_debug("PJRT profiler extension of %s", plugin_name);
	return 0;
}

/* The regular file mapped at [start, end), opened to read; a device node
 * is not opened (its driver's open would run). */
static int open_regular(unsigned long start, unsigned long end)
{
	char path[96];
	struct stat st;
	int at, fd;

	snprintf(path, sizeof(path), "/proc/self/map_files/%lx-%lx", start, end);
	at = open(path, O_PATH | O_CLOEXEC);
	if (at < 0)
		return -1;
	if (fstat(at, &st) || !S_ISREG(st.st_mode)) {
		close(at);
		return -1;
	}
	snprintf(path, sizeof(path), "/proc/self/fd/%d", at);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	close(at);
	return fd;
}

bool pjrt_backend_device_traced(const struct tpu_buffers *ours)
{
	static bool traced;	/* a runtime that writes devtrace keeps doing so */
	FILE *f;
	char line[512];
	bool found = false;
	uint64_t magic;
	int fd;

	if (traced)
		return true;
	f = fopen("/proc/self/maps", "re");
	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f)) {
		unsigned long start, end, offset, inode;
		char perms[8];

		/* A shared, readable file mapping from its start. */
		if (sscanf(line, "%lx-%lx %7s %lx %*s %lu", &start, &end, perms, &offset,
			   &inode) != 5 || perms[0] != 'r' || perms[3] != 's' || offset ||
		    !inode || end - start < DEVTRACE_HEADER_SIZE)
			continue;
		if (tpu_buffers__owns(ours, (const void *)start))
			continue;
		/* Read through the file, not the mapping: a file cut short
		 * under a mapping would fault the process. */
		fd = open_regular(start, end);
		if (fd < 0)
			continue;
		found = pread(fd, &magic, sizeof(magic), 0) == sizeof(magic) &&
			magic == DEVTRACE_MAGIC;
		close(fd);
	}
	fclose(f);
	traced = found;
	return found;
}

/* ---------------------------------------------------------------- sessions */

static int session_start(void)
{
	struct plugin_profiler_create_args c = {
		.struct_size = PJRT_SIZE_TO(struct plugin_profiler_create_args, profiler),
		.options = profile_options,
		.options_size = sizeof(profile_options),
	};
	struct plugin_profiler_args s = {
		.struct_size = PJRT_SIZE_TO(struct plugin_profiler_args, profiler),
	};
	struct plugin_profiler_error *e;

	e = api->create(&c);
	if (e)
		return plugin_error(e, "create a session");
	if (!c.profiler) {
		agent_say(AGENT_P_PJRT, "%s's profiler made no session", plugin_name);
		return -EIO;
	}
	s.profiler = c.profiler;
	e = api->start(&s);
	if (e) {
		plugin_error(e, "start (another profiler session, such as "
			     "jax.profiler's, may be running)");
		api->destroy(&s);
		return -EBUSY;
	}
	session = c.profiler;
	return 0;
}

static void session_destroy(void)
{
	struct plugin_profiler_args s = {
		.struct_size = PJRT_SIZE_TO(struct plugin_profiler_args, profiler),
		.profiler = session,
	};
	struct plugin_profiler_error *e = api->destroy(&s);

	if (e)
		plugin_error(e, "destroy a session");
	session = NULL;
}

int pjrt_backend_start(struct tpu_buffers *buffers)
{
	int err;

	if (!api)
		return -ENOENT;
	out = buffers;
	if (session)
		return 0;
	err = session_start();
	/* At once, an empty collection: its planes name the devices, whose
	 * buffers are then made and found before the window's first step. */
	if (!err && !tpu_buffers__count(out))
		err = pjrt_backend_collect(true);
	return err;
}

/* ---------------------------------------------------------------- collecting */

struct spans {
	struct tpu_span *v;
	size_t n, cap;
	int64_t realtime_to_mono;	/* add to a CLOCK_REALTIME ns */
};

/* CLOCK_REALTIME - CLOCK_MONOTONIC now, read between two monotonic reads. */
static int64_t realtime_offset(void)
{
	struct timespec a, r, b;
	int64_t mono;

	clock_gettime(CLOCK_MONOTONIC, &a);
	clock_gettime(CLOCK_REALTIME, &r);
	clock_gettime(CLOCK_MONOTONIC, &b);
	mono = ((int64_t)a.tv_sec + (int64_t)b.tv_sec) * 500000000ll +
	       ((int64_t)a.tv_nsec + (int64_t)b.tv_nsec) / 2;
	return (int64_t)r.tv_sec * 1000000000ll + r.tv_nsec - mono;
}

static int take_event(void *ctx, const struct xspace_event *ev)
{
	struct spans *s = ctx;
	struct tpu_span *t;
	int64_t start = ev->start_ns - s->realtime_to_mono;

	if (start <= 0 || ev->device >= TPU_MAX_DEVICES) {
		dropped++;
		return 0;	/* before boot: not a time of this host */
	}
	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 4096;
		struct tpu_span *v = realloc(s->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		s->v = v;
		s->cap = cap;
	}
	t = &s->v[s->n++];
	memset(t, 0, sizeof(*t));
	t->device = ev->device;
	t->module = ev->line == XSPACE_LINE_MODULES;
	t->name = ev->name.s;
	t->name_len = ev->name.len;
	t->start = (uint64_t)start;
	t->end = t->start + (uint64_t)(ev->duration_ps / 1000);
	t->run_id = ev->run_id;
	t->has_run_id = ev->has_run_id;
	t->category = tpu_category(ev->category.s, ev->category.len);
	t->flops = ev->flops;
	t->bytes = ev->bytes;
	return 0;
}

/* The session's XSpace into the buffers; the plugin's bytes stay valid
 * until the session is destroyed. */
static int write_collection(void)
{
	struct plugin_profiler_collect_data_args c = {
		.struct_size = PJRT_SIZE_TO(struct plugin_profiler_collect_data_args,
					    buffer_size_in_bytes),
		.profiler = session,
	};
	struct xspace_limits lim = {
		.max_bytes = MAX_COLLECTION_BYTES, .max_events = MAX_EVENTS,
		.max_metadata = 1u << 20,
	};
	struct spans s = { .realtime_to_mono = realtime_offset() };
	struct tpu_write_counts wc;
	struct xspace_counts xc;
	struct plugin_profiler_error *e;
	uint8_t *own = NULL;
	int err;

	e = api->collect_data(&c);
	if (e)
		return plugin_error(e, "hand over its data");
	/* The plugin's own buffer (XLA's), else the documented second call
	 * into one of ours. */
	if (!c.buffer && c.buffer_size_in_bytes) {
		if (c.buffer_size_in_bytes > MAX_COLLECTION_BYTES) {
			agent_say(AGENT_P_PJRT_DATA, "%s's profiler collected %zu bytes, over "
				  "the %llu MiB the agent reads: not read", plugin_name,
				  c.buffer_size_in_bytes, MAX_COLLECTION_BYTES >> 20);
			return -E2BIG;
		}
		own = malloc(c.buffer_size_in_bytes);
		if (!own)
			return -ENOMEM;
		c.buffer = own;
		e = api->collect_data(&c);
		if (e) {
			free(own);
			return plugin_error(e, "copy its data");
		}
	}
	err = c.buffer ? xspace_decode(c.buffer, c.buffer_size_in_bytes, &lim, take_event,
				       &s, &xc) : 0;
	if (err) {
		agent_say(AGENT_P_PJRT_DATA, "%s's profiler handed over %zu bytes the agent "
			  "could not read (%s): that collection is left out", plugin_name,
			  c.buffer_size_in_bytes, strerror(-err));
	} else if (c.buffer) {
		dropped += xc.events_over + xc.events_unnamed;
		/* Every device the plugin reported has its buffer, events or
		 * not: acceltrace reads a device's executions from it only
		 * once it has found it. */
		for (uint32_t dev = 0; dev < 256; dev++)
			if (xc.devices[dev / 64] & (1ull << (dev % 64)))
				tpu_buffers__ensure(out, dev);
		err = tpu_buffers__write(out, s.v, s.n, &wc);
		dropped += wc.orphan_ops + wc.devices_refused;
		if (err)
			agent_say(AGENT_P_BUFFERS, "no devtrace buffer for a device of %s: %s "
				  "(ACCELTRACE_AGENT_DIR names where they go)", plugin_name,
				  strerror(-err));
		agent_debug("collected %zu bytes: %zu device planes, %zu events, %llu records",
			    c.buffer_size_in_bytes, xc.planes, xc.events,
			    (unsigned long long)wc.records);
	}
	free(s.v);
	free(own);
	return err;
}

int pjrt_backend_collect(bool again)
{
	struct plugin_profiler_args s = {
		.struct_size = PJRT_SIZE_TO(struct plugin_profiler_args, profiler),
		.profiler = session,
	};
	struct plugin_profiler_error *e;
	int err;

	if (!api || !session)
		return -ENOENT;
	e = api->stop(&s);
	err = e ? plugin_error(e, "stop") : write_collection();
	session_destroy();
	if (again) {
		int e2 = session_start();

		if (!err)
			err = e2;
	}
	return err;
}

void pjrt_backend_forget(void)
{
	/* The session lives in the parent's plugin state; fork copied it, but
	 * its tracers' threads did not come along. Left alone. */
	session = NULL;
	out = NULL;
}

const char *pjrt_backend_plugin(void)
{
	return plugin_name;
}

uint64_t pjrt_backend_dropped(void)
{
	return dropped;
}
