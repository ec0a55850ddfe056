// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The capture model (see capture.h): interned strings, tracks with their
 * spans in growable arrays, processes, threads, devices, warnings and loss
 * counters; finalize applies the span budget and sorts every track.
 *
 * Memory: a span costs sizeof(struct capture_span) in its track's array and
 * nothing else; strings are stored once, in chunks, and never move, so the
 * pointers capture__string() returns stay valid until capture__free().
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
#include "lib/array.h"
#include "lib/u64_map.h"

#define LOG_CONTEXT "capture"
#include "lib/log.h"

#define DEFAULT_MAX_SPANS 1000000ULL
/* Distinct warnings kept; more are counted and summarized at finalize. */
#define MAX_WARNINGS 1000
#define STR_CHUNK_SIZE (64 * 1024)
#define NO_ID U64_MAP_NONE

#define offsetofend(type, field) \
	(offsetof(type, field) + sizeof(((type *)0)->field))

#define GROW(arr, cap, need) ARRAY_GROW(arr, cap, need)

/* ---- the model ------------------------------------------------------- */

struct str_chunk {
	struct str_chunk *next;
	size_t used;
	size_t cap;
	char data[];
};

struct track_store {
	struct capture_track info;
	struct capture_span *spans;
	size_t n;
	size_t cap;
};

struct loss {
	uint32_t name;
	uint64_t n;
};

struct capture {
	char *hostname;
	char *session;
	uint64_t max_spans;
	uint64_t total_kept;		/* sum of kept[] */
	bool finalized;

	uint64_t win_start, win_stop;
	bool window_set;
	int64_t realtime_offset;
	uint64_t probes_attached;

	/* Interned strings: id -> string; a hash of ids for lookup. */
	const char **strs;
	uint32_t *str_len;
	uint32_t *str_hash;
	size_t nstrs, strs_cap;
	uint32_t *slots;	/* 0: empty (id 0, "", is never hashed) */
	size_t slots_cap;	/* power of two */
	struct str_chunk *chunks;
	uint64_t strings_lost;
	struct u64_map static_strs;	/* address of a static string -> id */

	struct track_store *tracks;
	size_t ntracks, tracks_cap;
	struct u64_map host_tracks;	/* pid << 32 | tid -> track id */

	struct capture_device *devices;
	uint32_t (*device_tracks)[TRACK_KIND__COUNT];
	size_t ndevices, devices_cap, device_tracks_cap;
	struct u64_map device_idx;	/* pid << 32 | core -> index */

	struct capture_process *procs;
	size_t nprocs, procs_cap;
	struct u64_map proc_idx;	/* pid -> index */

	struct capture_thread *threads;
	size_t nthreads, threads_cap;
	struct u64_map thread_idx;	/* pid << 32 | tid -> index */

	uint32_t *warnings;	/* interned */
	size_t nwarnings, warnings_cap;
	struct u64_map warning_set;
	uint64_t warnings_suppressed;

	struct loss *losses;
	size_t nlosses, losses_cap;

	uint64_t kept[SPAN_KIND__COUNT];
	uint64_t dropped[SPAN_KIND__COUNT];
	/*
	 * After a prune the kept spans fill the budget exactly, all of them
	 * more useful than a kind it dropped entirely, and at least as long
	 * as the partly dropped kind's threshold: later spans below that line
	 * would go at the next prune, so they are refused on arrival.
	 */
	bool refuse_kind[SPAN_KIND__COUNT];
	uint64_t refuse_shorter[SPAN_KIND__COUNT];
};

static uint64_t pair_key(uint32_t hi, uint32_t lo)
{
	return (uint64_t)hi << 32 | lo;
}

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

/* Doubles the id-indexed string arrays. */
static int grow_strings(struct capture *c)
{
	size_t cap = c->strs_cap ? c->strs_cap * 2 : 64;
	const char **strs;
	uint32_t *len, *hash;

	strs = realloc(c->strs, cap * sizeof(*strs));
	if (!strs)
		return -ENOMEM;
	c->strs = strs;
	len = realloc(c->str_len, cap * sizeof(*len));
	if (!len)
		return -ENOMEM;
	c->str_len = len;
	hash = realloc(c->str_hash, cap * sizeof(*hash));
	if (!hash)
		return -ENOMEM;
	c->str_hash = hash;
	c->strs_cap = cap;
	return 0;
}

struct capture *capture__new(const struct capture_opts *opts)
{
	const char *hostname = NULL, *session = NULL;
	uint64_t max_spans = 0;
	struct capture *c;
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
	}

	c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->max_spans = max_spans ? max_spans : DEFAULT_MAX_SPANS;
	c->realtime_offset = now_realtime_offset();
	c->hostname = hostname && hostname[0] ? strdup(hostname) : default_hostname();
	c->session = session && session[0] ? strdup(session) : default_session();
	if (!c->hostname || !c->session || grow_strings(c))
		goto nomem;
	/* Id 0 is the empty string, never hashed. */
	c->strs[0] = "";
	c->str_len[0] = 0;
	c->str_hash[0] = 0;
	c->nstrs = 1;
	return c;

nomem:
	err = ENOMEM;
	capture__free(c);
	errno = err;
	return NULL;
}

void capture__free(struct capture *c)
{
	struct str_chunk *ch, *next;

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
	free(c->procs);
	u64_map__free(&c->proc_idx);
	free(c->threads);
	u64_map__free(&c->thread_idx);
	free(c->warnings);
	u64_map__free(&c->warning_set);
	free(c->losses);
	for (ch = c->chunks; ch; ch = next) {
		next = ch->next;
		free(ch);
	}
	free(c->strs);
	free(c->str_len);
	free(c->str_hash);
	free(c->slots);
	free(c->hostname);
	free(c->session);
	free(c);
}

/* ---- strings --------------------------------------------------------- */

static uint32_t str_hash(const char *s, size_t len)
{
	uint32_t h = 2166136261u;	/* FNV-1a */

	for (size_t i = 0; i < len; i++) {
		h ^= (unsigned char)s[i];
		h *= 16777619u;
	}
	return h;
}

static int rehash_strings(struct capture *c, size_t new_cap)
{
	uint32_t *slots = calloc(new_cap, sizeof(*slots));

	if (!slots)
		return -ENOMEM;
	for (uint32_t id = 1; id < c->nstrs; id++) {
		size_t i = c->str_hash[id] & (new_cap - 1);

		while (slots[i])
			i = (i + 1) & (new_cap - 1);
		slots[i] = id;
	}
	free(c->slots);
	c->slots = slots;
	c->slots_cap = new_cap;
	return 0;
}

static char *str_store(struct capture *c, const char *s, size_t len)
{
	struct str_chunk *ch = c->chunks;
	char *p;

	if (!ch || ch->cap - ch->used < len + 1) {
		size_t cap = len + 1 > STR_CHUNK_SIZE ? len + 1 : STR_CHUNK_SIZE;

		ch = malloc(sizeof(*ch) + cap);
		if (!ch)
			return NULL;
		ch->used = 0;
		ch->cap = cap;
		/* A full chunk stays second; the new one takes new strings. */
		ch->next = c->chunks;
		c->chunks = ch;
	}
	p = ch->data + ch->used;
	memcpy(p, s, len);
	p[len] = '\0';
	ch->used += len + 1;
	return p;
}

uint32_t capture__intern_len(struct capture *c, const char *s, size_t len)
{
	uint32_t h, id;
	size_t i;
	char *p;

	if (!s || !len)
		return 0;
	if (len > UINT32_MAX - 1)
		len = UINT32_MAX - 1;
	h = str_hash(s, len);
	if (c->slots_cap) {
		for (i = h & (c->slots_cap - 1); (id = c->slots[i]);
		     i = (i + 1) & (c->slots_cap - 1)) {
			if (c->str_hash[id] == h && c->str_len[id] == len &&
			    !memcmp(c->strs[id], s, len))
				return id;
		}
	}
	if (c->nstrs >= UINT32_MAX - 1)
		goto nomem;
	if ((c->nstrs + 1) * 2 > c->slots_cap &&
	    rehash_strings(c, c->slots_cap ? c->slots_cap * 2 : 64))
		goto nomem;
	if (c->nstrs + 1 > c->strs_cap && grow_strings(c))
		goto nomem;
	p = str_store(c, s, len);
	if (!p)
		goto nomem;
	id = c->nstrs++;
	c->strs[id] = p;
	c->str_len[id] = len;
	c->str_hash[id] = h;
	for (i = h & (c->slots_cap - 1); c->slots[i]; i = (i + 1) & (c->slots_cap - 1))
		;
	c->slots[i] = id;
	return id;

nomem:
	c->strings_lost++;
	errno = ENOMEM;
	return 0;
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
	return id < c->nstrs ? c->strs[id] : NULL;
}

size_t capture__num_strings(const struct capture *c)
{
	return c->nstrs;
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

static struct capture_process *get_process(struct capture *c, uint32_t pid)
{
	uint32_t i = u64_map__get(&c->proc_idx, pid);
	struct capture_process *p;

	if (i != NO_ID)
		return &c->procs[i];
	if (GROW(c->procs, c->procs_cap, c->nprocs + 1) ||
	    u64_map__put(&c->proc_idx, pid, c->nprocs))
		return NULL;
	p = &c->procs[c->nprocs++];
	memset(p, 0, sizeof(*p));
	p->pid = pid;
	return p;
}

int capture__set_process(struct capture *c, uint32_t pid, const char *name)
{
	struct capture_process *p;

	if (c->finalized)
		return -EBUSY;
	p = get_process(c, pid);
	if (!p)
		return -ENOMEM;
	if (name && name[0])
		p->name = capture__intern(c, name);
	return 0;
}

int capture__process_exited(struct capture *c, uint32_t pid, uint64_t ts_ns)
{
	struct capture_process *p;

	if (c->finalized)
		return -EBUSY;
	p = get_process(c, pid);
	if (!p)
		return -ENOMEM;
	p->exit_ns = ts_ns;
	return 0;
}

static struct capture_thread *get_thread(struct capture *c, uint32_t pid,
					 uint32_t tid)
{
	uint64_t key = pair_key(pid, tid);
	uint32_t i = u64_map__get(&c->thread_idx, key);
	struct capture_thread *t;

	if (i != NO_ID)
		return &c->threads[i];
	if (!get_process(c, pid))
		return NULL;
	if (GROW(c->threads, c->threads_cap, c->nthreads + 1) ||
	    u64_map__put(&c->thread_idx, key, c->nthreads))
		return NULL;
	t = &c->threads[c->nthreads++];
	memset(t, 0, sizeof(*t));
	t->pid = pid;
	t->tid = tid;
	return t;
}

int capture__set_thread(struct capture *c, uint32_t pid, uint32_t tid,
			const char *name, uint64_t start_ns)
{
	struct capture_thread *t;
	uint32_t track;

	if (c->finalized)
		return -EBUSY;
	t = get_thread(c, pid, tid);
	if (!t)
		return -ENOMEM;
	if (start_ns)
		t->start_ns = start_ns;
	if (name && name[0]) {
		t->name = capture__intern(c, name);
		track = u64_map__get(&c->host_tracks, pair_key(pid, tid));
		if (track != NO_ID)
			c->tracks[track].info.name = t->name;
		/* The main thread names an unnamed process. */
		if (pid == tid) {
			struct capture_process *p = get_process(c, pid);

			if (p && !p->name)
				p->name = t->name;
		}
	}
	return 0;
}

int capture__thread_exited(struct capture *c, uint32_t pid, uint32_t tid,
			   uint64_t ts_ns)
{
	struct capture_thread *t;

	if (c->finalized)
		return -EBUSY;
	t = get_thread(c, pid, tid);
	if (!t)
		return -ENOMEM;
	t->exit_ns = ts_ns;
	return 0;
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
		if (!get_process(c, pid) ||
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
		d->type = capture__intern(c, "TPU");
		for (int k = 0; k < TRACK_KIND__COUNT; k++)
			c->device_tracks[i][k] = NO_ID;
	}
	d = &c->devices[i];
	if (type && type[0])
		d->type = capture__intern(c, type);
	if (peak_tflops > 0)
		d->peak_tflops = peak_tflops;
	if (peak_hbm_gbps > 0)
		d->peak_hbm_gbps = peak_hbm_gbps;
	return i;
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
	int ret;

	if (id != NO_ID)
		return id;
	if (c->finalized)
		return -EBUSY;
	t = get_thread(c, pid, tid);
	if (!t)
		return -ENOMEM;
	info.name = t->name;
	ret = new_track(c, &info);
	if (ret < 0)
		return ret;
	if (u64_map__put(&c->host_tracks, key, ret)) {
		c->ntracks--;
		return -ENOMEM;
	}
	return ret;
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

	if (kind <= TRACK_HOST_THREAD || kind >= TRACK_KIND__COUNT)
		return -EINVAL;
	if (device >= c->ndevices)
		return -ENOENT;
	if (c->device_tracks[device][kind] != NO_ID)
		return c->device_tracks[device][kind];
	if (c->finalized)
		return -EBUSY;
	info.pid = c->devices[device].pid;
	info.name = capture__intern(c, track_kind_line_name(kind));
	ret = new_track(c, &info);
	if (ret < 0)
		return ret;
	c->device_tracks[device][kind] = ret;
	return ret;
}

/* ---- spans ----------------------------------------------------------- */

static int apply_budget(struct capture *c, bool final);

static uint64_t span_dur(const struct capture_span *s)
{
	return s->end_ns - s->start_ns;
}

int capture__add_span(struct capture *c, const struct capture_span *s)
{
	struct track_store *t;

	if (c->finalized)
		return -EBUSY;
	if (s->track >= c->ntracks)
		return -ENOENT;
	if (s->kind >= SPAN_KIND__COUNT || s->nargs > CAPTURE_MAX_ARGS ||
	    s->end_ns < s->start_ns)
		return -EINVAL;
	for (uint32_t i = 0; i < s->nargs; i++) {
		if (s->args[i].type > ARG_STR)
			return -EINVAL;
	}
	if (c->refuse_kind[s->kind] || span_dur(s) < c->refuse_shorter[s->kind]) {
		c->dropped[s->kind]++;
		return 0;
	}
	t = &c->tracks[s->track];
	if (GROW(t->spans, t->cap, t->n + 1))
		return -ENOMEM;
	t->spans[t->n++] = *s;
	c->kept[s->kind]++;
	c->total_kept++;
	/* Memory stays bounded during long windows: past one and a half times
	 * the budget, drop down to it (least useful kinds first). */
	if (c->total_kept >= c->max_spans + c->max_spans / 2)
		return apply_budget(c, false);
	return 0;
}

uint64_t capture__drop_after(struct capture *c, uint64_t stop_ns)
{
	uint64_t gone = 0;

	if (c->finalized)
		return 0;
	for (size_t t = 0; t < c->ntracks; t++) {
		struct track_store *ts = &c->tracks[t];
		size_t w = 0;

		for (size_t i = 0; i < ts->n; i++) {
			const struct capture_span *s = &ts->spans[i];

			if (s->start_ns > stop_ns) {
				c->kept[s->kind]--;
				c->total_kept--;
				gone++;
				continue;
			}
			if (w != i)
				ts->spans[w] = *s;
			w++;
		}
		ts->n = w;
	}
	return gone;
}

static int span_add_arg(struct capture_span *s, uint32_t key, uint32_t type,
			struct capture_arg *arg)
{
	if (s->nargs >= CAPTURE_MAX_ARGS)
		return -E2BIG;
	arg->key = key;
	arg->type = type;
	s->args[s->nargs++] = *arg;
	return 0;
}

int capture_span__add_u64(struct capture_span *s, uint32_t key, uint64_t v)
{
	struct capture_arg a = { .value.u = v };

	return span_add_arg(s, key, ARG_U64, &a);
}

int capture_span__add_i64(struct capture_span *s, uint32_t key, int64_t v)
{
	struct capture_arg a = { .value.i = v };

	return span_add_arg(s, key, ARG_I64, &a);
}

int capture_span__add_double(struct capture_span *s, uint32_t key, double v)
{
	struct capture_arg a = { .value.d = v };

	return span_add_arg(s, key, ARG_DOUBLE, &a);
}

int capture_span__add_str(struct capture_span *s, uint32_t key, uint32_t str)
{
	struct capture_arg a = { .value.str = str };

	return span_add_arg(s, key, ARG_STR, &a);
}

/* ---- warnings and losses --------------------------------------------- */

static void add_warning(struct capture *c, const char *msg)
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
	add_warning(c, msg);
}

void capture__count_loss(struct capture *c, const char *what, uint64_t n)
{
	uint32_t name;
	size_t i;

	if (c->finalized) {
		log_warn("%s: %" PRIu64 " (after finalize, not in the capture)",
			 what, n);
		return;
	}
	name = capture__intern(c, what);
	for (i = 0; i < c->nlosses; i++) {
		if (c->losses[i].name == name) {
			c->losses[i].n += n;
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
	c->nlosses++;
}

/* ---- finalize -------------------------------------------------------- */

static void swap_u64(uint64_t *a, uint64_t *b)
{
	uint64_t t = *a;

	*a = *b;
	*b = t;
}

/* The k-th smallest (0-based) of v[0..n), k < n, reordering v. */
static uint64_t select_kth(uint64_t *v, size_t n, size_t k)
{
	ptrdiff_t lo = 0, hi = n - 1, kk = k;

	while (lo < hi) {
		uint64_t a = v[lo], b = v[lo + (hi - lo) / 2], c = v[hi], p;
		ptrdiff_t lt = lo, i = lo, gt = hi;

		/* Median of three, then a three-way partition (many ties). */
		p = a < b ? (b < c ? b : (a < c ? c : a)) : (a < c ? a : (b < c ? c : b));
		while (i <= gt) {
			if (v[i] < p)
				swap_u64(&v[lt++], &v[i++]);
			else if (v[i] > p)
				swap_u64(&v[i], &v[gt--]);
			else
				i++;
		}
		if (kk < lt)
			hi = lt - 1;
		else if (kk > gt)
			lo = gt + 1;
		else
			return p;
	}
	return v[kk];
}

static int kind_order_cmp(const void *a, const void *b)
{
	int ka = *(const int *)a, kb = *(const int *)b;
	int pa = span_kind_priority(ka), pb = span_kind_priority(kb);

	if (pa != pb)
		return pa < pb ? -1 : 1;
	return ka - kb;
}

/*
 * Over budget, drop whole kinds from the lowest priority up; the kind where
 * the budget is reached loses only its shortest spans (ties spread evenly
 * over the capture), so what is left of it is the work that took time.
 */
static int apply_budget(struct capture *c, bool final)
{
	bool drop_all[SPAN_KIND__COUNT] = {};
	int order[SPAN_KIND__COUNT], partial = -1;
	uint64_t total = 0, excess, partial_n = 0;
	uint64_t threshold = 0, ties_drop = 0, ties_total = 0, tie_i = 0;
	uint64_t dropped_now[SPAN_KIND__COUNT] = {};
	char msg[1024];
	bool first = true;
	size_t off;
	int k;

	for (k = 0; k < SPAN_KIND__COUNT; k++) {
		total += c->kept[k];
		order[k] = k;
	}
	qsort(order, SPAN_KIND__COUNT, sizeof(order[0]), kind_order_cmp);
	if (total <= c->max_spans) {
		if (final)
			goto warn;	/* earlier prunes dropped spans: say so */
		return 0;
	}
	excess = total - c->max_spans;
	for (int i = 0; i < SPAN_KIND__COUNT && excess; i++) {
		k = order[i];
		if (!c->kept[k])
			continue;
		if (c->kept[k] <= excess) {
			drop_all[k] = true;
			excess -= c->kept[k];
		} else {
			partial = k;
			partial_n = excess;
			excess = 0;
		}
	}

	if (partial >= 0) {
		uint64_t *durs = malloc(c->kept[partial] * sizeof(*durs));
		uint64_t below = 0;
		size_t n = 0;

		if (!durs)
			return -ENOMEM;
		for (size_t t = 0; t < c->ntracks; t++) {
			for (size_t i = 0; i < c->tracks[t].n; i++) {
				const struct capture_span *s = &c->tracks[t].spans[i];

				if (s->kind == partial)
					durs[n++] = span_dur(s);
			}
		}
		/* n == kept[partial] > partial_n >= 1 (the kind is not dropped
		 * whole); the check says so to the compiler too. */
		if (n < partial_n) {
			free(durs);
			return -EIO;
		}
		threshold = select_kth(durs, n, partial_n - 1);
		for (size_t i = 0; i < n; i++) {
			if (durs[i] < threshold)
				below++;
			else if (durs[i] == threshold)
				ties_total++;
		}
		ties_drop = partial_n - below;
		free(durs);
	}

	for (size_t t = 0; t < c->ntracks; t++) {
		struct track_store *ts = &c->tracks[t];
		size_t w = 0;

		for (size_t i = 0; i < ts->n; i++) {
			const struct capture_span *s = &ts->spans[i];
			bool drop = drop_all[s->kind];

			if (s->kind == partial) {
				uint64_t d = span_dur(s);

				if (d < threshold) {
					drop = true;
				} else if (d == threshold) {
					unsigned __int128 a = (unsigned __int128)tie_i * ties_drop;
					unsigned __int128 b = a + ties_drop;

					drop = b / ties_total > a / ties_total;
					tie_i++;
				}
			}
			if (drop) {
				dropped_now[s->kind]++;
				continue;
			}
			if (w != i)
				ts->spans[w] = *s;
			w++;
		}
		ts->n = w;
		if (w < ts->cap / 2) {
			struct capture_span *p = realloc(ts->spans, (w ? w : 1) * sizeof(*p));

			if (p) {
				ts->spans = p;
				ts->cap = w ? w : 1;
			}
		}
	}

	for (int i = 0; i < SPAN_KIND__COUNT; i++) {
		k = order[i];
		c->dropped[k] += dropped_now[k];
		c->kept[k] -= dropped_now[k];
		c->total_kept -= dropped_now[k];
		c->refuse_kind[k] |= drop_all[k];
	}
	if (partial >= 0 && threshold > c->refuse_shorter[partial])
		c->refuse_shorter[partial] = threshold;
	if (!final)
		return 0;
warn:
	/* One warning for the whole capture, however many prunes it took. */
	{
		uint64_t all = 0;

		for (k = 0; k < SPAN_KIND__COUNT; k++)
			all += c->dropped[k];
		if (!all)
			return 0;
		off = snprintf(msg, sizeof(msg),
			       "span budget of %" PRIu64 " exceeded by %" PRIu64 " (%" PRIu64
			       " spans): dropped", c->max_spans, all, c->total_kept + all);
	}
	for (int i = 0; i < SPAN_KIND__COUNT; i++) {
		k = order[i];
		if (!c->dropped[k])
			continue;
		if (off < sizeof(msg))
			off += snprintf(msg + off, sizeof(msg) - off, "%s %" PRIu64 " %s%s",
					first ? "" : ",", c->dropped[k], span_kind_name(k),
					c->kept[k] ? " (the shortest)" : " (all)");
		first = false;
	}
	add_warning(c, msg);
	return 0;
}

struct sort_key {
	uint64_t start;
	uint64_t end;
	uint32_t idx;
};

static int sort_key_cmp(const void *a, const void *b)
{
	const struct sort_key *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if (x->end != y->end)
		return x->end > y->end ? -1 : 1;	/* outer first */
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* Stable sort by (start asc, end desc), permuting the spans in place. */
static int sort_track(struct track_store *t)
{
	struct sort_key *keys;
	struct capture_span tmp;
	size_t i;

	for (i = 1; i < t->n; i++) {
		const struct capture_span *a = &t->spans[i - 1], *b = &t->spans[i];

		if (a->start_ns > b->start_ns ||
		    (a->start_ns == b->start_ns && a->end_ns < b->end_ns))
			break;
	}
	if (i >= t->n)
		return 0;	/* already in order, the common case */

	keys = malloc(t->n * sizeof(*keys));
	if (!keys)
		return -ENOMEM;
	for (i = 0; i < t->n; i++) {
		keys[i].start = t->spans[i].start_ns;
		keys[i].end = t->spans[i].end_ns;
		keys[i].idx = i;
	}
	qsort(keys, t->n, sizeof(*keys), sort_key_cmp);
	/* keys[j].idx is the span that belongs at j: follow each cycle once. */
	for (i = 0; i < t->n; i++) {
		size_t j = i, k;

		if (keys[i].idx == i)
			continue;
		tmp = t->spans[i];
		for (;;) {
			k = keys[j].idx;
			keys[j].idx = j;
			if (k == i) {
				t->spans[j] = tmp;
				break;
			}
			t->spans[j] = t->spans[k];
			j = k;
		}
	}
	free(keys);
	return 0;
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
	err = apply_budget(c, true);
	if (err)
		return err;
	for (size_t t = 0; t < c->ntracks; t++) {
		err = sort_track(&c->tracks[t]);
		if (err)
			return err;
	}
	if (c->strings_lost) {
		char msg[128];

		snprintf(msg, sizeof(msg),
			 "%" PRIu64 " names or values lost (out of memory)",
			 c->strings_lost);
		add_warning(c, msg);
	}
	if (c->warnings_suppressed) {
		char msg[128];
		uint64_t n = c->warnings_suppressed;

		/* Room for the summary even when the list is full. */
		c->warnings_suppressed = 0;
		if (c->nwarnings >= MAX_WARNINGS)
			c->nwarnings = MAX_WARNINGS - 1;
		snprintf(msg, sizeof(msg), "%" PRIu64 " more warnings not kept", n);
		add_warning(c, msg);
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

size_t capture__num_processes(const struct capture *c)
{
	return c->nprocs;
}

const struct capture_process *capture__process(const struct capture *c, size_t i)
{
	if (i >= c->nprocs) {
		errno = ENOENT;
		return NULL;
	}
	return &c->procs[i];
}

size_t capture__num_threads(const struct capture *c)
{
	return c->nthreads;
}

const struct capture_thread *capture__thread(const struct capture *c, size_t i)
{
	if (i >= c->nthreads) {
		errno = ENOENT;
		return NULL;
	}
	return &c->threads[i];
}

size_t capture__num_warnings(const struct capture *c)
{
	return c->nwarnings;
}

const char *capture__warning(const struct capture *c, size_t i)
{
	return i < c->nwarnings ? c->strs[c->warnings[i]] : NULL;
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
	return c->strs[c->losses[i].name];
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

/*
 * What survives a tight budget, least useful first: instants (markers with
 * no duration), then syscall-level detail (ioctls, eventfd waits), host
 * annotations and callbacks, file reads, host waits, transfers, device ops
 * (numerous; a partial cut keeps the long ones), and last the launches,
 * program executions and steps that every analysis starts from.
 */
static const int span_kind_priorities[SPAN_KIND__COUNT] = {
	[SPAN_INSTANT_THREAD] = 0,
	[SPAN_INSTANT_INTERRUPT] = 1,
	[SPAN_INSTANT_COMPLETION] = 2,
	[SPAN_IOCTL] = 3,
	[SPAN_DEVICE_WAIT] = 4,
	[SPAN_CALLBACK] = 5,
	[SPAN_HOST_OTHER] = 6,
	[SPAN_FILE_READ] = 7,
	[SPAN_AWAIT] = 8,
	[SPAN_DEVICE_TRANSFER] = 9,
	[SPAN_H2D] = 10,
	[SPAN_D2H] = 11,
	[SPAN_INFEED] = 12,
	[SPAN_OUTFEED] = 13,
	[SPAN_DEVICE_OP] = 14,
	[SPAN_COMPILE] = 15,
	[SPAN_EXECUTE] = 16,
	[SPAN_DEVICE_MODULE] = 17,
	[SPAN_DEVICE_STEP] = 18,
};

int span_kind_priority(enum span_kind kind)
{
	return (unsigned)kind < SPAN_KIND__COUNT ? span_kind_priorities[kind] : -1;
}

const char *track_kind_line_name(enum track_kind kind)
{
	switch (kind) {
	case TRACK_DEVICE_STEPS: return "Steps";
	case TRACK_DEVICE_MODULES: return "XLA Modules";
	case TRACK_DEVICE_OPS: return "XLA Ops";
	default: return NULL;
	}
}
