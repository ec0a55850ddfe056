// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The XSpace writer: the XProf mapping of a capture. Which planes there are
 * (/host:CPU, /device:TPU:<n> or GPU, Task Environment), what lines a track
 * becomes, the stats an event carries (args, correlation, clipping, flags)
 * and which go to the event's metadata, plane stats, per-plane metadata
 * tables, warnings and hostnames; the naming XProf expects ("Steps", "XLA
 * Modules", "XLA Ops", a GPU's "Stream #14(Compute)", device_type_string).
 * protobuf-c packs each XLine, metadata entry and plane stat; the framing
 * around them is pb_wire.c, the rows of a track are track_layout.c, the
 * stat tables xspace_stats.c, the stats of one event xspace_events.c, and
 * writing files (atomically, into a logdir) xspace_file.c.
 *
 * Memory: one track's events at a time (reused buffers, grown to the
 * largest track), plus per-plane tables of the distinct names in use.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capture/capture.h"
#include "capture/capture_memory.h"
#include "lib/array.h"
#include "lib/u64_map.h"
#include "output/pb_wire.h"
#include "output/thread_names.h"
#include "output/track_layout.h"
#include "output/step_groups.h"
#include "output/xspace_stats.h"
#include "output/process_origins.h"
#include "output/xspace_writer.h"
#include "output/xspace_memory.h"
#include "output/xspace_writer_internal.h"
#include "xplane.pb-c.h"

#define LOG_CONTEXT "xspace"
#include "lib/log.h"

/* Line ids of device lines; extra lines for overlaps add k << 32. */
#define LINE_ID_STEPS 1
#define LINE_ID_MODULES 2
#define LINE_ID_OPS 3
#define LINE_ID_FIXED_MAX LINE_ID_OPS
/*
 * A stream's line id is its stream id (< 2^32), as on XProf's own GPU
 * planes; a stream id that is a fixed line's (1..3) gets this bit, above
 * every stream id and every extra line's k << 32 (k < 2^30), so ids stay
 * unique within the plane.
 */
#define STREAM_LINE_ID_MOVED (1LL << 62)

/* What XProf needs of a device whose type the capture does not know. */
#define XPROF_DEVICE_TYPE "TPU"

/* ---- names ------------------------------------------------------------- */

#define NO_ID U64_MAP_NONE
#define GROW(arr, cap, need) ARRAY_GROW(arr, cap, need)

const char *xprof_line_name(enum track_kind kind)
{
	switch (kind) {
	case TRACK_DEVICE_STEPS: return "Steps";
	case TRACK_DEVICE_MODULES: return "XLA Modules";
	case TRACK_DEVICE_OPS: return "XLA Ops";
	default: return NULL;
	}
}

/*
 * What a stream line carries, in the order its name lists it: "Compute"
 * (kernels: any name but these), then the copies and memsets by the names
 * CUPTI gives them; a copy of another direction is "MemcpyOther", as XLA's
 * CUPTI collector names it.
 */
enum stream_work {
	STREAM_COMPUTE,
	STREAM_H2D,
	STREAM_D2H,
	STREAM_D2D,
	STREAM_P2P,
	STREAM_COPY_OTHER,
	STREAM_MEMSET,
	STREAM_WORK__COUNT,
};

static const char *const stream_work_names[STREAM_WORK__COUNT] = {
	[STREAM_COMPUTE] = "Compute",
	[STREAM_H2D] = "MemcpyH2D",
	[STREAM_D2H] = "MemcpyD2H",
	[STREAM_D2D] = "MemcpyD2D",
	[STREAM_P2P] = "MemcpyP2P",
	[STREAM_COPY_OTHER] = "MemcpyOther",
	[STREAM_MEMSET] = "Memset",
};

static enum stream_work stream_work_of(const char *name)
{
	if (!name || strncmp(name, "Memcpy", 6))
		return name && !strcmp(name, "Memset") ? STREAM_MEMSET : STREAM_COMPUTE;
	for (int k = STREAM_H2D; k < STREAM_COPY_OTHER; k++) {
		if (!strcmp(name, stream_work_names[k]))
			return k;
	}
	return STREAM_COPY_OTHER;
}

static int64_t stream_line_id(uint32_t stream)
{
	if (stream >= 1 && stream <= LINE_ID_FIXED_MAX)
		return STREAM_LINE_ID_MOVED | stream;
	return stream;
}

/*
 * "Stream #<id>(<work>)": what the spans written (those overlapping the
 * window) are, joined by ",", in stream_work order; XProf and JAX's
 * profiler name their GPU lines so (`Stream #14(Compute)`).
 */
static void stream_line_name(const struct xw *w, const struct capture_span *sp,
			     size_t n, uint32_t stream, char *buf, size_t len)
{
	bool seen[STREAM_WORK__COUNT] = {};
	const char *sep = "(";
	size_t off;

	for (size_t i = 0; i < n; i++) {
		if (sp[i].start_ns > w->we || sp[i].end_ns < w->ws)
			continue;
		seen[stream_work_of(capture__string(w->c, sp[i].name))] = true;
	}
	off = snprintf(buf, len, "Stream #%" PRIu32, stream);
	for (int k = 0; k < STREAM_WORK__COUNT && off < len; k++) {
		if (!seen[k])
			continue;
		off += snprintf(buf + off, len - off, "%s%s", sep, stream_work_names[k]);
		sep = ",";
	}
	if (*sep == ',' && off < len)
		snprintf(buf + off, len - off, ")");
}

/* ---- the writer -------------------------------------------------------- */

static int xw_init(struct xw *w)
{
	if (xspace_stats__init(&w->stats))
		return -ENOMEM;
	w->layout = track_layout__new();
	return w->layout ? 0 : -ENOMEM;
}

static void xw_free(struct xw *w)
{
	xspace_stats__free(&w->stats);
	u64_map__free(&w->ev_by_key);
	free(w->ev);
	track_layout__free(w->layout);
	free(w->events);
	free(w->event_ptrs);
	free(w->stat_buf);
	free(w->stat_ptrs);
	pb_out__release(&w->o);
	free(w->dev_tracks);
	free(w->streams);
	step_groups__free(&w->groups);
	xw_memory_free(w);
}

static void plane_reset(struct xw *w, bool device_plane)
{
	w->device_plane = device_plane;
	xspace_stats__reset(&w->stats);
	u64_map__clear(&w->ev_by_key);
	w->nev = 0;
	w->st_corr = w->st_true_start = w->st_true_end = w->st_clipped = 0;
	w->st_group = w->st_step_num = 0;
	w->k_launch_id = capture__string_id(w->c, "launch_id");
	memset(w->st_flags, 0, sizeof(w->st_flags));
}

struct line_ident {
	int64_t id;		/* of the first line; extras add k << 32 */
	const char *name;
	const char *display_name;	/* NULL: none */
};

/*
 * Writes one track as XLines: its spans clipped to the window, in (start
 * asc, duration desc) order, on as many lines as it takes for every line
 * to nest (lines after the first share its display_id, so its row).
 */
static int write_track(struct xw *w, const struct capture_span *sp, size_t n,
		       const struct line_ident *li)
{
	size_t norder, nrows, nstats = 0, used = 0;
	const uint32_t *order, *slot;
	int err;

	w->last_rows = 0;
	err = track_layout__run(w->layout, sp, n, w->ws, w->we);
	if (err)
		return err;
	w->outside += track_layout__outside(w->layout);
	norder = track_layout__count(w->layout);
	if (!norder)
		return 0;
	order = track_layout__order(w->layout);
	slot = track_layout__slot(w->layout);
	nrows = track_layout__rows(w->layout);

	for (size_t k = 0; k < norder; k++)
		nstats += xw_max_stats(w, &sp[order[k]]);
	if (GROW(w->events, w->events_cap, norder) ||
	    GROW(w->event_ptrs, w->event_ptrs_cap, norder) ||
	    GROW(w->stat_buf, w->stat_buf_cap, nstats ? nstats : 1) ||
	    GROW(w->stat_ptrs, w->stat_ptrs_cap, nstats ? nstats : 1))
		return -ENOMEM;

	for (size_t k = 0; k < norder; k++) {
		const struct capture_span *s = &sp[order[k]];
		uint64_t cs = span_clip_start(s, w->ws);
		uint64_t ce = span_clip_end(s, w->we);
		XEvent *ev = &w->events[k];
		bool md_new;
		int idx, cnt;

		idx = xw_event_md_index(w, s, &md_new);
		if (idx < 0)
			return idx;
		tensorflow__profiler__xevent__init(ev);
		ev->metadata_id = idx + 1;
		ev->data_case = TENSORFLOW__PROFILER__XEVENT__DATA_OFFSET_PS;
		ev->offset_ps = (int64_t)(cs - w->ws) * 1000;
		ev->duration_ps = (int64_t)(ce - cs) * 1000;
		cnt = xw_event_stats(w, s, &w->ev[idx], md_new, &w->stat_buf[used],
				  &w->stat_ptrs[used]);
		if (cnt < 0)
			return cnt;
		ev->n_stats = cnt;
		ev->stats = cnt ? &w->stat_ptrs[used] : NULL;
		used += cnt;
		w->event_ptrs[slot[k]] = ev;
	}

	for (size_t j = 0; j < nrows; j++) {
		XLine line = TENSORFLOW__PROFILER__XLINE__INIT;
		size_t first, count;

		track_layout__row(w->layout, j, &first, &count);
		line.id = li->id + ((int64_t)j << EXTRA_LINE_SHIFT);
		line.display_id = li->id;
		line.name = (char *)li->name;
		line.display_name = (char *)(li->display_name ? li->display_name : "");
		line.timestamp_ns = 0;	/* the window start */
		line.duration_ps = (int64_t)(w->we - w->ws) * 1000;
		line.n_events = count;
		line.events = &w->event_ptrs[first];
		pb_message_field(&w->o, XPLANE_LINES, &line.base);
	}
	w->events_written += norder;
	w->last_rows = nrows;
	if (!w->o.err && w->stats.oom)
		w->o.err = -ENOMEM;
	return w->o.err;
}

/* A plane stat, packed as XPlane.stats; errors stick in w->o.err. */
static void plane_stat(struct xw *w, const char *name, XStat *st)
{
	uint32_t id = xspace_stats__id(&w->stats, name);

	if (!id) {
		w->o.err = w->o.err ? w->o.err : -ENOMEM;
		return;
	}
	st->metadata_id = id;
	pb_message_field(&w->o, XPLANE_STATS, &st->base);
}

static void plane_stat_str(struct xw *w, const char *name, const char *v)
{
	XStat st = TENSORFLOW__PROFILER__XSTAT__INIT;

	st.value_case = TENSORFLOW__PROFILER__XSTAT__VALUE_STR_VALUE;
	st.str_value = (char *)v;
	plane_stat(w, name, &st);
}

static void plane_stat_double(struct xw *w, const char *name, double v)
{
	XStat st = TENSORFLOW__PROFILER__XSTAT__INIT;

	st.value_case = TENSORFLOW__PROFILER__XSTAT__VALUE_DOUBLE_VALUE;
	st.double_value = v;
	plane_stat(w, name, &st);
}

static void plane_stat_u64(struct xw *w, const char *name, uint64_t v)
{
	XStat st = TENSORFLOW__PROFILER__XSTAT__INIT;

	st.value_case = TENSORFLOW__PROFILER__XSTAT__VALUE_UINT64_VALUE;
	st.uint64_value = v;
	plane_stat(w, name, &st);
}

static void plane_stat_i64(struct xw *w, const char *name, int64_t v)
{
	XStat st = TENSORFLOW__PROFILER__XSTAT__INIT;

	st.value_case = TENSORFLOW__PROFILER__XSTAT__VALUE_INT64_VALUE;
	st.int64_value = v;
	plane_stat(w, name, &st);
}

static void plane_stat_bytes(struct xw *w, const char *name, const uint8_t *v, size_t len)
{
	XStat st = TENSORFLOW__PROFILER__XSTAT__INIT;

	st.value_case = TENSORFLOW__PROFILER__XSTAT__VALUE_BYTES_VALUE;
	st.bytes_value.data = (uint8_t *)v;
	st.bytes_value.len = len;
	plane_stat(w, name, &st);
}

static uint64_t begin_plane(struct xw *w, int64_t id, const char *name, bool device)
{
	uint64_t at;

	plane_reset(w, device);
	/* Declared on every host and device plane: XProf's IsXSpaceGrouped. */
	if (w->groups.n && strcmp(name, "Task Environment") &&
	    !xw_fixed_stat(w, &w->st_group, "group_id"))
		w->o.err = -ENOMEM;
	at = pb_begin_len(&w->o, XSPACE_PLANES);
	pb_int64_field(&w->o, XPLANE_ID, id);
	pb_string_field(&w->o, XPLANE_NAME, name);
	return at;
}

/* Event metadata, then stat metadata (event metadata may add names). */
static int end_plane(struct xw *w, uint64_t at)
{
	for (size_t i = 0; i < w->nev && !w->o.err; i++) {
		Tensorflow__Profiler__XPlane__EventMetadataEntry e =
			TENSORFLOW__PROFILER__XPLANE__EVENT_METADATA_ENTRY__INIT;
		XEventMetadata md = TENSORFLOW__PROFILER__XEVENT_METADATA__INIT;
		XStat st[CAPTURE_MAX_ARGS], *sp[CAPTURE_MAX_ARGS];
		size_t n = 0;

		md.id = i + 1;
		md.name = (char *)w->ev[i].name;
		for (uint32_t k = 0; k < w->ev[i].nargs; k++) {
			if (!xw_arg_to_stat(w, &w->ev[i].args[k], &st[n]) ||
			    xw_has_stat(sp, n, st[n].metadata_id))
				continue;
			sp[n] = &st[n];
			n++;
		}
		md.n_stats = n;
		md.stats = n ? sp : NULL;
		e.key = md.id;
		e.value = &md;
		pb_message_field(&w->o, XPLANE_EVENT_METADATA, &e.base);
	}
	for (size_t id = 1; id < xspace_stats__count(&w->stats) && !w->o.err; id++) {
		Tensorflow__Profiler__XPlane__StatMetadataEntry e =
			TENSORFLOW__PROFILER__XPLANE__STAT_METADATA_ENTRY__INIT;
		XStatMetadata md = TENSORFLOW__PROFILER__XSTAT_METADATA__INIT;

		md.id = id;
		md.name = (char *)xspace_stats__name(&w->stats, id);
		e.key = id;
		e.value = &md;
		pb_message_field(&w->o, XPLANE_STAT_METADATA, &e.base);
	}
	if (!w->o.err && w->stats.oom)
		w->o.err = -ENOMEM;
	pb_end_len(&w->o, at);
	return w->o.err;
}

static int write_host_plane(struct xw *w, int64_t plane_id)
{
	const struct capture *c = w->c;
	size_t ntracks = capture__num_tracks(c);
	struct name_histories hist = {};
	bool multi = false, have_pid = false;
	char *json = NULL;
	uint32_t first_pid = 0;
	/* acceltrace.thread_pids: (tid, pid) little-endian u32 pairs, a pair
	 * per thread line, so that a reader can tell each line's process. */
	uint8_t *pids = NULL;
	size_t n_pids = 0, pids_cap = 0;
	uint64_t at;
	int err = 0, err2;

	for (size_t t = 0; t < ntracks && !multi; t++) {
		const struct capture_track *tr = capture__track(c, t);

		if (tr->kind != TRACK_HOST_THREAD)
			continue;
		if (have_pid && tr->pid != first_pid)
			multi = true;
		first_pid = tr->pid;
		have_pid = true;
	}

	at = begin_plane(w, plane_id, "/host:CPU", false);
	for (size_t t = 0; t < ntracks && !err; t++) {
		const struct capture_track *tr = capture__track(c, t);
		const struct capture_thread_name *h;
		const struct capture_span *sp;
		char name[64], display[512];
		struct line_ident li = {};
		uint64_t more, before;
		size_t n, nh;

		if (tr->kind != TRACK_HOST_THREAD)
			continue;
		sp = capture__track_spans(c, t, &n);
		if (!sp) {
			err = -errno;
			break;
		}
		li.id = tr->tid;
		li.name = capture__string(c, tr->name);
		if (!li.name || !li.name[0]) {
			snprintf(name, sizeof(name), "thread %u", tr->tid);
			li.name = name;
		}
		/* The line is the thread's latest name; a rename is not a line. */
		h = thread_history(c, tr, &nh, &more);
		li.display_name = thread_line_label(c, li.name, tr->pid, multi, h, nh,
						    more, display, sizeof(display));
		before = w->events_written;
		err = write_track(w, sp, n, &li);
		if (!err)
			err = xw_memory_thread_line(w, tr->pid, tr->tid, w->last_rows, li.name,
						    li.display_name);
		if (!err && !ARRAY_GROW(pids, pids_cap, (n_pids + 1) * 8)) {
			for (int b = 0; b < 4; b++) {
				pids[n_pids * 8 + b] = (uint8_t)(tr->tid >> (8 * b));
				pids[n_pids * 8 + 4 + b] = (uint8_t)(tr->pid >> (8 * b));
			}
			n_pids++;
		} else if (!err) {
			err = -ENOMEM;
		}
		if (!err && h && w->events_written > before)
			err = name_histories__add(&hist, c, w->ws, tr, h, nh, more);
	}
	if (!err)
		err = xw_memory_other_threads(w, multi);
	if (!err)
		err = xw_memory_counter_lines(w);
	err2 = name_histories__finish(&hist, &json);
	err = err ? err : err2;
	if (!err && json)
		plane_stat_str(w, STAT_THREAD_NAMES, json);
	free(json);
	json = NULL;
	if (!err)
		err = xw_memory_timelines_json(w, &json);
	if (!err && json)
		plane_stat_str(w, "acceltrace.memory_timelines", json);
	free(json);
	if (!err && capture__mem_events_dropped(c))
		plane_stat_i64(w, "acceltrace.memory_events_dropped",
			       (int64_t)capture__mem_events_dropped(c));
	if (!err && n_pids)
		plane_stat_bytes(w, STAT_THREAD_PIDS, pids, n_pids * 8);
	free(pids);
	json = NULL;
	if (!err)
		err = process_origins_json(c, &json);
	if (!err && json)
		plane_stat_str(w, STAT_PROCESSES, json);
	free(json);
	return err ? err : end_plane(w, at);
}

static int write_device_plane(struct xw *w, uint32_t index)
{
	static const struct {
		enum track_kind kind;
		int64_t line_id;
	} lines[] = {
		{ TRACK_DEVICE_STEPS, LINE_ID_STEPS },
		{ TRACK_DEVICE_MODULES, LINE_ID_MODULES },
		{ TRACK_DEVICE_OPS, LINE_ID_OPS },
	};
	const struct capture_device *d = capture__device_info(w->c, index);
	const char *type = capture__string(w->c, d->type);
	const char *platform = capture__string(w->c, d->platform);
	const char *vendor = capture__string(w->c, d->vendor);
	char name[64], type_buf[256];
	uint64_t at;
	int err = 0;

	/*
	 * XProf tells TPUs from GPUs by the plane's name. A device whose
	 * runtime did not say is named a TPU (the platform XProf needs a
	 * device_type_string for, which then says "TPU").
	 */
	if (!platform || !platform[0])
		platform = XPROF_DEVICE_TYPE;
	snprintf(name, sizeof(name), "/device:%s:%u", platform, index);
	at = begin_plane(w, index, name, true);
	if (vendor && vendor[0])
		plane_stat_str(w, "device_vendor", vendor);
	if (!strcmp(platform, XPROF_DEVICE_TYPE)) {
		/* XProf classifies TPU hardware by the substring "TPU" in
		 * device_type_string: an unknown type is "TPU", another is
		 * prefixed. GPU planes carry no such stat (XProf's own have
		 * device_vendor and the GPU's name instead). */
		if (!type || !type[0]) {
			type = XPROF_DEVICE_TYPE;
		} else if (!strstr(type, "TPU")) {
			snprintf(type_buf, sizeof(type_buf), XPROF_DEVICE_TYPE " %s", type);
			type = type_buf;
		}
		plane_stat_str(w, "device_type_string", type);
	} else if (type && type[0] && !strcmp(platform, "GPU")) {
		plane_stat_str(w, "gpu_device_name", type);
	}
	if (d->peak_tflops > 0)
		plane_stat_double(w, "peak_teraflops_per_second", d->peak_tflops);
	if (d->peak_hbm_gbps > 0)
		plane_stat_double(w, "peak_hbm_bw_gigabytes_per_second", d->peak_hbm_gbps);
	plane_stat_i64(w, "acceltrace.pid", d->pid);
	plane_stat_i64(w, "acceltrace.core", d->core);

	for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]) && !err; i++) {
		uint32_t t = w->dev_tracks[index][lines[i].kind];
		struct line_ident li = {
			.id = lines[i].line_id,
			.name = xprof_line_name(lines[i].kind),
		};
		const struct capture_span *sp;
		size_t n;

		if (t == NO_ID)
			continue;
		sp = capture__track_spans(w->c, t, &n);
		if (!sp)
			return -errno;
		err = write_track(w, sp, n, &li);
	}
	/* Then its streams, by stream id (w->streams is sorted so). */
	for (; w->next_stream < w->nstreams && !err; w->next_stream++) {
		uint32_t t = w->streams[w->next_stream];
		const struct capture_track *tr = capture__track(w->c, t);
		const struct capture_span *sp;
		char sname[128];
		size_t n;

		if (tr->device != index)
			break;
		sp = capture__track_spans(w->c, t, &n);
		if (!sp)
			return -errno;
		stream_line_name(w, sp, n, tr->tid, sname, sizeof(sname));
		err = write_track(w, sp, n, &(struct line_ident){
			.id = stream_line_id(tr->tid),
			.name = sname,
			.display_name = sname,
		});
	}
	return err ? err : end_plane(w, at);
}

/* Stream tracks by (device, stream id). */
static int stream_cmp(const void *a, const void *b, void *c)
{
	const struct capture_track *x = capture__track(c, *(const uint32_t *)a);
	const struct capture_track *y = capture__track(c, *(const uint32_t *)b);

	if (x->device != y->device)
		return x->device < y->device ? -1 : 1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

static uint64_t wall_ns(const struct xw *w, uint64_t mono)
{
	int64_t off = capture__realtime_offset(w->c);

	if (off < 0 && (uint64_t)-off > mono)
		return 0;
	return mono + (uint64_t)off;
}

/* What the capture does not hold, for readers to judge their figures by:
 * spans its budget dropped, per kind, and the window's records lost on the
 * way (not its edges' nor bookkeeping's: capture__count_event_loss). */
static void write_incompleteness(struct xw *w)
{
	uint64_t lost = 0, n;
	char name[64];

	for (int k = 0; k < SPAN_KIND__COUNT; k++) {
		n = capture__spans_dropped(w->c, k);
		if (!n)
			continue;
		snprintf(name, sizeof(name), STAT_DROPPED_PREFIX "%s", span_kind_name(k));
		plane_stat_i64(w, name, (int64_t)(n > INT64_MAX ? INT64_MAX : n));
	}
	for (size_t i = 0; i < capture__num_losses(w->c); i++) {
		capture__loss(w->c, i, &n);
		if (capture__loss_of_events(w->c, i))
			lost += n;
	}
	if (lost)
		plane_stat_i64(w, STAT_LOST_RECORDS, (int64_t)(lost > INT64_MAX ? INT64_MAX : lost));
}

static int write_task_env_plane(struct xw *w, int64_t plane_id)
{
	uint64_t attached = capture__probes_attached(w->c);
	uint64_t at;

	at = begin_plane(w, plane_id, "Task Environment", false);
	plane_stat_u64(w, "profile_start_time", wall_ns(w, w->ws));
	plane_stat_u64(w, "profile_stop_time", wall_ns(w, w->we));
	/* The XSpace's time 0 on CLOCK_MONOTONIC: exports give true times. */
	plane_stat_u64(w, "acceltrace.window_start_ns", w->ws);
	if (attached)
		plane_stat_i64(w, "acceltrace.probes_attached_ns",
			       (int64_t)(attached - w->ws));
	/* Why it was taken (a daemon's rule or trigger), for reports to
	 * lead with. */
	if (capture__reason(w->c)[0])
		plane_stat_str(w, STAT_CAPTURE_REASON, capture__reason(w->c));
	if (capture__focus_pid(w->c))
		plane_stat_i64(w, STAT_FOCUS_PID, capture__focus_pid(w->c));
	write_incompleteness(w);
	return end_plane(w, at);
}

static void write_warnings(struct xw *w)
{
	const struct capture *c = w->c;
	char buf[512];

	for (size_t i = 0; i < capture__num_warnings(c); i++)
		pb_string_field(&w->o, XSPACE_WARNINGS, capture__warning(c, i));
	for (size_t i = 0; i < capture__num_losses(c); i++) {
		uint64_t n;
		const char *what = capture__loss(c, i, &n);

		if (!n)
			continue;	/* counted, nothing lost */
		snprintf(buf, sizeof(buf), "%s: %" PRIu64, what, n);
		pb_string_field(&w->o, XSPACE_WARNINGS, buf);
	}
	if (w->outside) {
		snprintf(buf, sizeof(buf),
			 "%" PRIu64 " spans wholly outside the capture window not written",
			 w->outside);
		pb_string_field(&w->o, XSPACE_WARNINGS, buf);
	}
	if (w->mem_outside) {
		snprintf(buf, sizeof(buf),
			 "%" PRIu64 " device-memory events outside the capture window not written",
			 w->mem_outside);
		pb_string_field(&w->o, XSPACE_WARNINGS, buf);
	}
}

int xspace_write_stream(const struct capture *c, FILE *out,
			const struct xspace_write_opts *opts, uint64_t *bytes)
{
	struct xw w = { .c = c };
	uint64_t max_bytes = 0;
	size_t ndev = capture__num_devices(c);
	const char *host = capture__hostname(c);
	char host_buf[256];
	int err = 0;

	if (bytes)
		*bytes = 0;
	if (opts) {
		if (opts->sz < offsetof(struct xspace_write_opts, max_bytes) + sizeof(uint64_t))
			return -EINVAL;
		max_bytes = opts->max_bytes;
	}
	if (!capture__is_finalized(c))
		return -EAGAIN;
	capture__window(c, &w.ws, &w.we);
	if (w.we - w.ws > (uint64_t)INT64_MAX / 1000)
		return -EOVERFLOW;
	err = pb_out__init(&w.o, out, max_bytes ? max_bytes : XSPACE_MAX_BYTES);
	if (err)
		return err;

	err = xw_init(&w);
	if (err)
		goto cleanup;
	w.dev_tracks = malloc((ndev ? ndev : 1) * sizeof(*w.dev_tracks));
	if (!w.dev_tracks) {
		err = -ENOMEM;
		goto cleanup;
	}
	memset(w.dev_tracks, 0xff, (ndev ? ndev : 1) * sizeof(*w.dev_tracks));
	err = step_groups__build(&w.groups, c, w.ws, w.we);
	if (!err)
		err = xw_memory_prepare(&w);
	if (err)
		goto cleanup;
	for (size_t t = 0; t < capture__num_tracks(c); t++) {
		const struct capture_track *tr = capture__track(c, t);

		if (tr->kind == TRACK_HOST_THREAD || tr->kind >= TRACK_KIND__COUNT ||
		    tr->device >= ndev)
			continue;
		if (tr->kind != TRACK_DEVICE_STREAM) {
			w.dev_tracks[tr->device][tr->kind] = t;
			continue;
		}
		if (GROW(w.streams, w.nstreams_cap, w.nstreams + 1)) {
			err = -ENOMEM;
			goto cleanup;
		}
		w.streams[w.nstreams++] = t;
	}
	/* No streams is no array: qsort_r(NULL) is undefined even for 0. */
	if (w.nstreams > 1)
		qsort_r(w.streams, w.nstreams, sizeof(*w.streams), stream_cmp, (void *)c);

	/* Plane ids: devices 0..N-1 (the trace viewer's pid), then host, task. */
	err = write_host_plane(&w, ndev);
	for (size_t d = 0; d < ndev && !err; d++)
		err = write_device_plane(&w, d);
	if (!err)
		err = write_task_env_plane(&w, ndev + 1);
	if (err)
		goto cleanup;
	write_warnings(&w);
	/* The file stem replaces ':' with '_'; hostnames[0] must match it. */
	snprintf(host_buf, sizeof(host_buf), "%s", host);
	for (char *p = host_buf; *p; p++) {
		if (*p == ':' || *p == '/')
			*p = '_';
	}
	pb_string_field(&w.o, XSPACE_HOSTNAMES, host_buf);
	err = w.o.err;
	if (!err && fflush(out))
		err = -errno;
	log_debug("%" PRIu64 " events, %" PRIu64 " bytes", w.events_written, w.o.pos);

cleanup:
	if (!err)
		err = w.o.err;
	if (bytes)
		*bytes = w.o.pos;
	xw_free(&w);
	return err;
}
