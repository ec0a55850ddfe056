// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The capture model (see capture.h): its lifecycle, identity (host,
 * session, window), devices, tracks, warnings and loss counters, finalize,
 * and the readers. Processes and threads (with their name histories) are
 * threads.c, spans are added and sorted in spans.c, the event budget is
 * budget.c, and strings are a lib/strtab.
 *
 * Memory: a span costs sizeof(struct capture_span) in its track's array and
 * nothing else; strings are stored once and never move, so the pointers
 * capture__string() returns stay valid until capture__free().
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "capture/capture.h"
#include "capture/capture_internal.h"
#include "lib/array.h"
#include "lib/strtab.h"
#include "lib/u64_map.h"
#include "lib/utf8.h"

#define LOG_CONTEXT "capture"
#include "lib/log.h"

/* Distinct warnings kept; more are counted and summarized at finalize. */
#define MAX_WARNINGS 1000
#define NO_ID U64_MAP_NONE

#define offsetofend(type, field) \
	(offsetof(type, field) + sizeof(((type *)0)->field))

#define GROW(arr, cap, need) ARRAY_GROW(arr, cap, need)

static char *default_session(void)
{
	char buf[64];
	time_t now = time(NULL);
	struct tm tm;

	if (!localtime_r(&now, &tm) ||
	    !strftime(buf, sizeof(buf), "%Y_%m_%d_%H_%M_%S", &tm))
		snprintf(buf, sizeof(buf), "%lld", (long long)now);
	return strdup(buf);
}

static char *default_hostname(void)
{
	char buf[256];

	if (gethostname(buf, sizeof(buf) - 1))
		return strdup("localhost");
	buf[sizeof(buf) - 1] = '\0';
	return strdup(buf[0] ? buf : "localhost");
}

static int64_t now_realtime_offset(void)
{
	struct timespec rt, mono;

	clock_gettime(CLOCK_REALTIME, &rt);
	clock_gettime(CLOCK_MONOTONIC, &mono);
	return ((int64_t)rt.tv_sec - mono.tv_sec) * 1000000000LL +
	       ((int64_t)rt.tv_nsec - mono.tv_nsec);
}


struct capture *capture__new(const struct capture_opts *opts)
{
	const char *hostname = NULL, *session = NULL;
	uint64_t max_spans = 0;
	uint32_t window = 0;
	struct capture *c;
	char *base = NULL;
	int err;

	if (opts) {
		size_t sz = opts->sz;

		if (sz < offsetofend(struct capture_opts, sz)) {
			errno = EINVAL;
			return NULL;
		}
		/* A newer caller's extra fields must be zero (unknown here). */
		for (size_t i = sizeof(*opts); i < sz; i++) {
			if (((const char *)opts)[i]) {
				errno = EINVAL;
				return NULL;
			}
		}
		if (sz >= offsetofend(struct capture_opts, hostname))
			hostname = opts->hostname;
		if (sz >= offsetofend(struct capture_opts, session))
			session = opts->session;
		if (sz >= offsetofend(struct capture_opts, max_spans))
			max_spans = opts->max_spans;
		if (sz >= offsetofend(struct capture_opts, window))
			window = opts->window;
	}

	c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->max_spans = max_spans ? max_spans : CAPTURE_DEFAULT_MAX_SPANS;
	c->realtime_offset = now_realtime_offset();
	c->hostname = hostname && hostname[0] ? strdup(hostname) : default_hostname();
	base = session && session[0] ? strdup(session) : default_session();
	if (!base)
		goto nomem;
	if (window) {
		if (asprintf(&c->session, "%s_w%" PRIu32, base, window) < 0)
			c->session = NULL;
		free(base);
	} else {
		c->session = base;
	}
	c->strs = strtab__new();
	if (!c->hostname || !c->session || !c->strs)
		goto nomem;
	return c;

nomem:
	err = ENOMEM;
	capture__free(c);
	errno = err;
	return NULL;
}

void capture__free(struct capture *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->ntracks; i++)
		free(c->tracks[i].spans);
	free(c->tracks);
	u64_map__free(&c->static_strs);
	u64_map__free(&c->host_tracks);
	free(c->devices);
	free(c->device_tracks);
	u64_map__free(&c->device_idx);
	u64_map__free(&c->stream_tracks);
	free(c->procs);
	u64_map__free(&c->proc_idx);
	free(c->threads);
	u64_map__free(&c->thread_idx);
	for (size_t i = 0; i < c->nthreads; i++)
		free(c->thread_names[i].v);
	free(c->thread_names);
	free(c->warnings);
	u64_map__free(&c->warning_set);
	free(c->losses);
	capture_mem_free(c);
	strtab__free(c->strs);
	free(c->hostname);
	free(c->session);
	free(c);
}

/* ---- strings --------------------------------------------------------- */

uint32_t capture__intern_len(struct capture *c, const char *s, size_t len)
{
	char *clean = NULL;
	uint32_t id;

	if (!s || !len)
		return 0;
	if (len > UINT32_MAX / 4)
		len = UINT32_MAX / 4;
	/* Names come from outside (threads, programs, devices, files): every
	 * string of the model is valid UTF-8 without control characters, as
	 * proto3 strings, JSON and terminals need. */
	if (!utf8_is_clean(s, len, UTF8_REPLACE_CONTROLS)) {
		size_t need = utf8_sanitized_len(s, len, UTF8_REPLACE_CONTROLS);

		clean = malloc(need + 1);
		if (clean)
			len = utf8_sanitize(s, len, clean, need + 1, UTF8_REPLACE_CONTROLS);
		s = clean;
	}
	id = s ? strtab__intern(c->strs, s, len) : 0;
	free(clean);
	if (!id) {
		c->strings_lost++;
		errno = ENOMEM;
	}
	return id;
}

uint32_t capture__intern(struct capture *c, const char *s)
{
	return capture__intern_len(c, s, s ? strlen(s) : 0);
}

uint32_t capture__intern_static(struct capture *c, const char *s)
{
	uint32_t id = u64_map__get(&c->static_strs, (uintptr_t)s);

	if (id != U64_MAP_NONE)
		return id;
	id = capture__intern(c, s);
	/* Not remembered when it failed (id 0 for a non-empty string). */
	if ((id || !s || !*s) && u64_map__put(&c->static_strs, (uintptr_t)s, id))
		errno = ENOMEM;
	return id;
}

const char *capture__string(const struct capture *c, uint32_t id)
{
	return strtab__str(c->strs, id);
}

uint32_t capture__string_id(const struct capture *c, const char *s)
{
	return strtab__find(c->strs, s, strlen(s));
}

size_t capture__num_strings(const struct capture *c)
{
	return strtab__count(c->strs);
}

/* ---- window, processes, threads, devices, tracks --------------------- */

int capture__set_window(struct capture *c, uint64_t start_ns, uint64_t stop_ns)
{
	if (c->finalized)
		return -EBUSY;
	if (stop_ns < start_ns)
		return -EINVAL;
	c->win_start = start_ns;
	c->win_stop = stop_ns;
	c->window_set = true;
	return 0;
}

void capture__set_realtime_offset(struct capture *c, int64_t realtime_minus_mono_ns)
{
	if (!c->finalized)
		c->realtime_offset = realtime_minus_mono_ns;
}

void capture__set_probes_attached(struct capture *c, uint64_t mono_ns)
{
	if (!c->finalized)
		c->probes_attached = mono_ns;
}

int capture__device(struct capture *c, uint32_t pid, uint32_t core,
		    const char *type, double peak_tflops, double peak_hbm_gbps)
{
	uint64_t key = pair_key(pid, core);
	uint32_t i = u64_map__get(&c->device_idx, key);
	struct capture_device *d;

	if (c->finalized)	/* lookups only, like the track functions */
		return i == NO_ID ? -EBUSY : (int)i;
	if (i == NO_ID) {
		size_t cap = c->device_tracks_cap;

		if (c->ndevices >= INT32_MAX)
			return -E2BIG;
		if (!capture_get_process(c, pid) ||
		    GROW(c->devices, c->devices_cap, c->ndevices + 1) ||
		    GROW(c->device_tracks, cap, c->ndevices + 1))
			return -ENOMEM;
		c->device_tracks_cap = cap;
		if (u64_map__put(&c->device_idx, key, c->ndevices))
			return -ENOMEM;
		i = c->ndevices++;
		d = &c->devices[i];
		memset(d, 0, sizeof(*d));
		d->index = i;
		d->pid = pid;
		d->core = core;
		d->type = 0;	/* unknown until a caller says */
		for (int k = 0; k < TRACK_KIND__COUNT; k++)
			c->device_tracks[i][k] = NO_ID;
	}
	d = &c->devices[i];
	if (type && type[0]) {
		uint32_t id = capture__intern(c, type);

		if (id)		/* else counted lost; the old type stays */
			d->type = id;
	}
	if (peak_tflops > 0)
		d->peak_tflops = peak_tflops;
	if (peak_hbm_gbps > 0)
		d->peak_hbm_gbps = peak_hbm_gbps;
	return i;
}

int capture__device_platform(struct capture *c, uint32_t index,
			     const char *platform, const char *vendor)
{
	struct capture_device *d;
	uint32_t id;

	if (index >= c->ndevices)
		return -ENOENT;
	if (c->finalized)
		return -EBUSY;
	d = &c->devices[index];
	if (platform && platform[0]) {
		id = capture__intern(c, platform);
		if (!id)	/* counted lost; what was known stays */
			return -ENOMEM;
		d->platform = id;
	}
	if (vendor && vendor[0]) {
		id = capture__intern(c, vendor);
		if (!id)
			return -ENOMEM;
		d->vendor = id;
	}
	return 0;
}

static int new_track(struct capture *c, const struct capture_track *info)
{
	struct track_store *t;

	if (c->ntracks >= INT32_MAX)
		return -E2BIG;
	if (GROW(c->tracks, c->tracks_cap, c->ntracks + 1))
		return -ENOMEM;
	t = &c->tracks[c->ntracks];
	memset(t, 0, sizeof(*t));
	t->info = *info;
	t->info.id = c->ntracks;
	return c->ntracks++;
}

/* A new track known in @map by @key (host threads, GPU streams); the
 * track is taken back when the map cannot hold it. */
static int new_keyed_track(struct capture *c, struct u64_map *map, uint64_t key,
			   const struct capture_track *info)
{
	int ret = new_track(c, info);

	if (ret < 0)
		return ret;
	if (u64_map__put(map, key, ret)) {
		c->ntracks--;
		return -ENOMEM;
	}
	return ret;
}

int capture__host_track(struct capture *c, uint32_t pid, uint32_t tid)
{
	uint64_t key = pair_key(pid, tid);
	uint32_t id = u64_map__get(&c->host_tracks, key);
	struct capture_thread *t;
	struct capture_track info = {
		.kind = TRACK_HOST_THREAD,
		.pid = pid,
		.tid = tid,
		.device = UINT32_MAX,
	};

	if (id != NO_ID)
		return id;
	if (c->finalized)
		return -EBUSY;
	t = capture_get_thread(c, pid, tid);
	if (!t)
		return -ENOMEM;
	info.name = t->name;
	return new_keyed_track(c, &c->host_tracks, key, &info);
}

int capture__device_track(struct capture *c, uint32_t device,
			  enum track_kind kind)
{
	struct capture_track info = {
		.kind = kind,
		.tid = 0,
		.device = device,
	};
	int ret;

	/* Streams are many per device: capture__stream_track keys them. */
	if (kind <= TRACK_HOST_THREAD || kind >= TRACK_KIND__COUNT ||
	    kind == TRACK_DEVICE_STREAM)
		return -EINVAL;
	if (device >= c->ndevices)
		return -ENOENT;
	if (c->device_tracks[device][kind] != NO_ID)
		return c->device_tracks[device][kind];
	if (c->finalized)
		return -EBUSY;
	info.pid = c->devices[device].pid;
	ret = new_track(c, &info);
	if (ret < 0)
		return ret;
	c->device_tracks[device][kind] = ret;
	return ret;
}

int capture__stream_track(struct capture *c, uint32_t device, uint32_t stream)
{
	uint64_t key = pair_key(device, stream);
	struct capture_track info = {
		.kind = TRACK_DEVICE_STREAM,
		.tid = stream,
		.device = device,
	};
	uint32_t id;

	if (device >= c->ndevices)
		return -ENOENT;
	id = u64_map__get(&c->stream_tracks, key);
	if (id != NO_ID)
		return id;
	if (c->finalized)
		return -EBUSY;
	info.pid = c->devices[device].pid;
	return new_keyed_track(c, &c->stream_tracks, key, &info);
}

/* ---- warnings and losses --------------------------------------------- */

void capture_add_warning(struct capture *c, const char *msg)
{
	uint32_t id;

	if (c->nwarnings >= MAX_WARNINGS) {
		c->warnings_suppressed++;
		return;
	}
	id = capture__intern(c, msg);
	if (!id)
		return;
	if (u64_map__get(&c->warning_set, id) != NO_ID)
		return;		/* said already */
	if (GROW(c->warnings, c->warnings_cap, c->nwarnings + 1) ||
	    u64_map__put(&c->warning_set, id, c->nwarnings)) {
		c->warnings_suppressed++;
		return;
	}
	c->warnings[c->nwarnings++] = id;
}

void capture__warn(struct capture *c, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (c->finalized) {
		/* Too late for the capture: say it here rather than lose it. */
		log_warn("%s (after finalize, not in the capture)", msg);
		return;
	}
	capture_add_warning(c, msg);
}

static void count_loss(struct capture *c, const char *what, uint64_t n, bool of_events)
{
	uint32_t name;
	size_t i;

	if (c->finalized) {
		log_warn("%s: %" PRIu64 " (after finalize, not in the capture)",
			 what, n);
		return;
	}
	name = capture__intern(c, what);
	if (!name && what && what[0]) {
		log_warn("%s: %" PRIu64 " (out of memory, not in the capture)",
			 what, n);
		return;
	}
	for (i = 0; i < c->nlosses; i++) {
		if (c->losses[i].name == name) {
			c->losses[i].n += n;
			c->losses[i].of_events |= of_events;
			return;
		}
	}
	if (GROW(c->losses, c->losses_cap, c->nlosses + 1)) {
		log_warn("%s: %" PRIu64 " (out of memory, not in the capture)",
			 what, n);
		return;
	}
	c->losses[c->nlosses].name = name;
	c->losses[c->nlosses].n = n;
	c->losses[c->nlosses].of_events = of_events;
	c->nlosses++;
}

void capture__count_loss(struct capture *c, const char *what, uint64_t n)
{
	count_loss(c, what, n, false);
}

void capture__count_event_loss(struct capture *c, const char *what, uint64_t n)
{
	count_loss(c, what, n, true);
}

bool capture__loss_of_events(const struct capture *c, size_t i)
{
	return i < c->nlosses && c->losses[i].of_events;
}

int capture__finalize(struct capture *c)
{
	int err;

	if (c->finalized)
		return -EBUSY;
	if (!c->window_set) {
		uint64_t lo = UINT64_MAX, hi = 0;

		for (size_t t = 0; t < c->ntracks; t++) {
			for (size_t i = 0; i < c->tracks[t].n; i++) {
				const struct capture_span *s = &c->tracks[t].spans[i];

				if (s->start_ns < lo)
					lo = s->start_ns;
				if (s->end_ns > hi)
					hi = s->end_ns;
			}
		}
		if (lo > hi)
			lo = hi = 0;
		c->win_start = lo;
		c->win_stop = hi;
		c->window_set = true;
		log_debug("no window set: using the spans' extent");
	}
	err = capture_budget_apply(c, true);
	if (err)
		return err;
	for (size_t t = 0; t < c->ntracks; t++) {
		err = capture_sort_track(&c->tracks[t]);
		if (err)
			return err;
	}
	err = capture_mem_finalize(c);
	if (err)
		return err;
	if (c->strings_lost) {
		char msg[128];

		snprintf(msg, sizeof(msg),
			 "%" PRIu64 " names or values lost (out of memory)",
			 c->strings_lost);
		capture_add_warning(c, msg);
	}
	if (c->thread_names_lost) {
		char msg[128];

		snprintf(msg, sizeof(msg),
			 "%" PRIu64 " thread renames not kept in name histories (out of memory)",
			 c->thread_names_lost);
		capture_add_warning(c, msg);
	}
	if (c->warnings_suppressed) {
		char msg[128];
		uint64_t n = c->warnings_suppressed;

		/* Room for the summary even when the list is full. */
		c->warnings_suppressed = 0;
		if (c->nwarnings >= MAX_WARNINGS)
			c->nwarnings = MAX_WARNINGS - 1;
		snprintf(msg, sizeof(msg), "%" PRIu64 " more warnings not kept", n);
		capture_add_warning(c, msg);
	}
	c->finalized = true;
	return 0;
}

/* ---- reading --------------------------------------------------------- */

bool capture__is_finalized(const struct capture *c)
{
	return c->finalized;
}

const char *capture__hostname(const struct capture *c)
{
	return c->hostname;
}

int capture__set_session(struct capture *c, const char *session)
{
	char *name = session && session[0] ? strdup(session) : default_session();

	if (!name)
		return -ENOMEM;
	free(c->session);
	c->session = name;
	return 0;
}

int capture__set_reason(struct capture *c, const char *why)
{
	uint32_t id = why && why[0] ? capture__intern(c, why) : 0;

	if (!id && why && why[0])
		return -ENOMEM;
	c->reason = id;
	return 0;
}

void capture__set_focus_pid(struct capture *c, uint32_t pid)
{
	c->focus_pid = pid;
}

uint32_t capture__focus_pid(const struct capture *c)
{
	return c->focus_pid;
}

const char *capture__reason(const struct capture *c)
{
	const char *s = capture__string(c, c->reason);

	return s ? s : "";
}

const char *capture__session(const struct capture *c)
{
	return c->session;
}

void capture__window(const struct capture *c, uint64_t *start_ns, uint64_t *stop_ns)
{
	if (start_ns)
		*start_ns = c->win_start;
	if (stop_ns)
		*stop_ns = c->win_stop;
}

int64_t capture__realtime_offset(const struct capture *c)
{
	return c->realtime_offset;
}

uint64_t capture__probes_attached(const struct capture *c)
{
	return c->probes_attached;
}

size_t capture__num_tracks(const struct capture *c)
{
	return c->ntracks;
}

const struct capture_track *capture__track(const struct capture *c, uint32_t id)
{
	if (id >= c->ntracks) {
		errno = ENOENT;
		return NULL;
	}
	return &c->tracks[id].info;
}

const struct capture_span *capture__track_spans(const struct capture *c,
						uint32_t track, size_t *n)
{
	static const struct capture_span no_spans[1];

	*n = 0;
	if (!c->finalized) {
		errno = EAGAIN;
		return NULL;
	}
	if (track >= c->ntracks) {
		errno = ENOENT;
		return NULL;
	}
	*n = c->tracks[track].n;
	return c->tracks[track].n ? c->tracks[track].spans : no_spans;
}

size_t capture__num_devices(const struct capture *c)
{
	return c->ndevices;
}

const struct capture_device *capture__device_info(const struct capture *c,
						  uint32_t index)
{
	if (index >= c->ndevices) {
		errno = ENOENT;
		return NULL;
	}
	return &c->devices[index];
}

size_t capture__num_warnings(const struct capture *c)
{
	return c->nwarnings;
}

const char *capture__warning(const struct capture *c, size_t i)
{
	return i < c->nwarnings ? strtab__str(c->strs, c->warnings[i]) : NULL;
}

size_t capture__num_losses(const struct capture *c)
{
	return c->nlosses;
}

const char *capture__loss(const struct capture *c, size_t i, uint64_t *n)
{
	if (i >= c->nlosses) {
		if (n)
			*n = 0;
		return NULL;
	}
	if (n)
		*n = c->losses[i].n;
	return strtab__str(c->strs, c->losses[i].name);
}

uint64_t capture__spans_kept(const struct capture *c)
{
	return c->total_kept;
}

uint64_t capture__span_count(const struct capture *c, enum span_kind kind)
{
	return kind < SPAN_KIND__COUNT ? c->kept[kind] : 0;
}

uint64_t capture__spans_dropped(const struct capture *c, enum span_kind kind)
{
	return kind < SPAN_KIND__COUNT ? c->dropped[kind] : 0;
}

/* ---- kinds ----------------------------------------------------------- */

static const char *const span_kind_names[SPAN_KIND__COUNT] = {
	[SPAN_EXECUTE] = "execute",
	[SPAN_H2D] = "h2d",
	[SPAN_D2H] = "d2h",
	[SPAN_INFEED] = "infeed",
	[SPAN_OUTFEED] = "outfeed",
	[SPAN_COMPILE] = "compile",
	[SPAN_AWAIT] = "await",
	[SPAN_CALLBACK] = "callback",
	[SPAN_FILE_READ] = "file_read",
	[SPAN_IOCTL] = "ioctl",
	[SPAN_DEVICE_WAIT] = "device_wait",
	[SPAN_HOST_OTHER] = "host_other",
	[SPAN_DEVICE_STEP] = "device_step",
	[SPAN_DEVICE_MODULE] = "device_module",
	[SPAN_DEVICE_OP] = "device_op",
	[SPAN_DEVICE_TRANSFER] = "device_transfer",
	[SPAN_INSTANT_COMPLETION] = "completion",
	[SPAN_INSTANT_INTERRUPT] = "interrupt",
	[SPAN_INSTANT_THREAD] = "thread_event",
};

const char *span_kind_name(enum span_kind kind)
{
	return (unsigned)kind < SPAN_KIND__COUNT ? span_kind_names[kind] : "unknown";
}

