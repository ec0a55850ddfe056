// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The plugin's PJRT profiler extension at both minors, driven as XLA's
 * PluginTracer drives libtpu's: found in the PJRT_Api extension chain,
 * create with serialized ProfileOptions, start, executions through the
 * PJRT table, stop, collect. The XSpace is decoded with protobuf-c's code
 * generated from user/output/xplane.proto (not the plugin's writer) and
 * checked against the ground truth the device wrote: the executions and ops
 * of the session and nothing else, names, run ids, categories, flops and
 * bytes, exact durations, order, realtime timestamps, a cancelled
 * execution cut where the truth cut it, metadata maps. Also: error paths
 * (collect while running, bad options, NULL args), start/stop no-ops,
 * device_tracer_level 0, the trailing zero byte and the caller-buffer
 * second call, the event bound with dropped_events, destroy while started,
 * and sim_no_devtrace writing no buffers.
 */
#include <dlfcn.h>
#include <sys/stat.h>
#include <time.h>

#include "test.h"
#include "pjrt_abi.h"
#include "simtruth.h"
#include "xplane.pb-c.h"
#include "xplane_c.h"

typedef Tensorflow__Profiler__XLine XLine;
typedef Tensorflow__Profiler__XEvent XEvent;
typedef Tensorflow__Profiler__XStat XStat;

struct plugin {
	int minor;
	const PJRT_Api *api;
	const PLUGIN_Profiler_Api *prof;
	uint64_t launch_base;
};

static const struct plugin *cur;

/* ---------------------------------------------------------------- PJRT */

static PJRT_Error *call(int slot94, void *args)
{
	return cur->api->fns[pjrt_slot_for_minor(slot94, cur->minor)](args);
}

static bool pjrt_ok(PJRT_Error *err, const char *what)
{
	PJRT_Error_Message_Args m = { .struct_size = sizeof(m), .error = err };
	PJRT_Error_Destroy_Args d = { .struct_size = sizeof(d), .error = err };

	if (!err)
		return true;
	call(PJRT_SLOT_Error_Message, &m);
	test_check(false, __FILE__, __LINE__, what, "%.*s", (int)m.message_size, m.message);
	call(PJRT_SLOT_Error_Destroy, &d);
	return false;
}

static PJRT_Client *client_create(const char *dir, const char *trace_dir)
{
	PJRT_NamedValue opts[] = {
		{ .struct_size = sizeof(PJRT_NamedValue), .name = "sim_cores", .name_size = 9,
		  .type = PJRT_NamedValue_kInt64, .int64_value = 2, .value_size = 1 },
		{ .struct_size = sizeof(PJRT_NamedValue), .name = "sim_device_dir", .name_size = 14,
		  .type = PJRT_NamedValue_kString, .string_value = dir, .value_size = strlen(dir) },
		{ .struct_size = sizeof(PJRT_NamedValue), .name = "sim_trace_dir", .name_size = 13,
		  .type = PJRT_NamedValue_kString, .string_value = trace_dir,
		  .value_size = strlen(trace_dir) },
		{ .struct_size = sizeof(PJRT_NamedValue), .name = "sim_compile_ns", .name_size = 14,
		  .type = PJRT_NamedValue_kInt64, .int64_value = 0, .value_size = 1 },
		{ .struct_size = sizeof(PJRT_NamedValue), .name = "sim_no_devtrace", .name_size = 15,
		  .type = PJRT_NamedValue_kBool, .bool_value = true, .value_size = 1 },
	};
	PJRT_Client_Create_Args a = {
		.struct_size = cur->minor >= 94 ? PJRT_Client_Create_Args_SIZE_94 :
						  PJRT_Client_Create_Args_SIZE_26,
		.create_options = opts,
		.num_options = sizeof(opts) / sizeof(opts[0]),
	};

	return pjrt_ok(call(PJRT_SLOT_Client_Create, &a), "Client_Create") ? a.client : NULL;
}

static void client_destroy(PJRT_Client *c)
{
	PJRT_Client_Destroy_Args a = { .struct_size = sizeof(a), .client = c };

	pjrt_ok(call(PJRT_SLOT_Client_Destroy, &a), "Client_Destroy");
}

static PJRT_LoadedExecutable *compile(PJRT_Client *c, const char *code)
{
	PJRT_Program prog = {
		.struct_size = sizeof(prog), .code = (char *)code, .code_size = strlen(code),
		.format = "hlo", .format_size = 3,
	};
	PJRT_Client_Compile_Args a = { .struct_size = sizeof(a), .client = c, .program = &prog };

	return pjrt_ok(call(PJRT_SLOT_Client_Compile, &a), "Compile") ? a.executable : NULL;
}

static void executable_free(PJRT_LoadedExecutable *x)
{
	PJRT_LoadedExecutable_Destroy_Args a = { .struct_size = sizeof(a), .executable = x };

	if (x)
		call(PJRT_SLOT_LoadedExecutable_Destroy, &a);
}

/* Runs x on `ndev` cores as launch `id`; with `wait`, until it completed
 * (then frees what it made). Without, the events and outputs stay in ev/out. */
static bool execute(PJRT_LoadedExecutable *x, int id, int ndev, bool wait,
		    PJRT_Event **ev, PJRT_Buffer **out)
{
	PJRT_ExecuteOptions o = {
		.struct_size = cur->minor >= 94 ? PJRT_ExecuteOptions_SIZE_94 :
						  PJRT_ExecuteOptions_SIZE_26,
		.launch_id = id,
	};
	PJRT_Buffer **outs[2] = { &out[0], &out[1] };
	PJRT_LoadedExecutable_Execute_Args a = {
		.struct_size = sizeof(a), .executable = x, .options = &o,
		.num_devices = (size_t)ndev, .output_lists = outs,
		.device_complete_events = ev,
	};
	int d;

	if (!pjrt_ok(call(PJRT_SLOT_LoadedExecutable_Execute, &a), "Execute"))
		return false;
	if (!wait)
		return true;
	for (d = 0; d < ndev; d++) {
		PJRT_Event_Await_Args aw = { .struct_size = sizeof(aw), .event = ev[d] };
		PJRT_Event_Destroy_Args ed = { .struct_size = sizeof(ed), .event = ev[d] };
		PJRT_Buffer_Destroy_Args bd = { .struct_size = sizeof(bd), .buffer = out[d] };

		pjrt_ok(call(PJRT_SLOT_Event_Await, &aw), "Await");
		call(PJRT_SLOT_Event_Destroy, &ed);
		call(PJRT_SLOT_Buffer_Destroy, &bd);
	}
	return true;
}

/* ---------------------------------------------------------------- profiler */

static int prof_code(PLUGIN_Profiler_Error *err, char *msg, size_t len)
{
	PLUGIN_Profiler_Error_GetCode_Args g = { .struct_size = sizeof(g), .error = err };
	PLUGIN_Profiler_Error_Message_Args m = { .struct_size = sizeof(m), .error = err };
	PLUGIN_Profiler_Error_Destroy_Args d = { .struct_size = sizeof(d), .error = err };
	PLUGIN_Profiler_Error *e2;

	if (!err)
		return 0;
	e2 = cur->prof->error_get_code(&g);
	ASSERT_TRUE(e2 == NULL, "error_get_code succeeds");
	cur->prof->error_message(&m);
	snprintf(msg, len, "%.*s", (int)m.message_size, m.message);
	cur->prof->error_destroy(&d);
	return g.code;
}

static bool prof_ok(PLUGIN_Profiler_Error *err, const char *what)
{
	char msg[256];
	int code = prof_code(err, msg, sizeof(msg));

	return test_check(code == 0, __FILE__, __LINE__, what, "code %d: %s", code, msg);
}

/* The call failed with `code` and a message. */
static void prof_fails(PLUGIN_Profiler_Error *err, int code, const char *what)
{
	char msg[256] = "";

	ASSERT_EQ(prof_code(err, msg, sizeof(msg)), code, what);
	ASSERT_TRUE(msg[0] != 0, what);
}

static PLUGIN_Profiler *prof_create(const void *opts, size_t n)
{
	PLUGIN_Profiler_Create_Args a = {
		.struct_size = sizeof(a), .options = opts, .options_size = n,
	};

	return prof_ok(cur->prof->create(&a), "create") ? a.profiler : NULL;
}

static PLUGIN_Profiler_Error *prof_start(PLUGIN_Profiler *p)
{
	/* As XLA's PluginTracer does: struct_size left unset. */
	PLUGIN_Profiler_Start_Args a;

	a.struct_size = 0xdead;
	a.profiler = p;
	return cur->prof->start(&a);
}

static PLUGIN_Profiler_Error *prof_stop(PLUGIN_Profiler *p)
{
	PLUGIN_Profiler_Stop_Args a = { .struct_size = sizeof(a), .profiler = p };

	return cur->prof->stop(&a);
}

static void prof_destroy(PLUGIN_Profiler *p)
{
	PLUGIN_Profiler_Destroy_Args a = { .struct_size = sizeof(a), .profiler = p };

	prof_ok(cur->prof->destroy(&a), "destroy");
}

/* Collects into the plugin's buffer; the XSpace decoded (NULL on failure). */
static XSpace *collect(PLUGIN_Profiler *p, const uint8_t **raw, size_t *raw_len)
{
	PLUGIN_Profiler_CollectData_Args a = { .struct_size = sizeof(a), .profiler = p };
	XSpace *xs;

	if (!prof_ok(cur->prof->collect_data(&a), "collect_data"))
		return NULL;
	if (!ASSERT_TRUE(a.buffer != NULL, "collect_data returns a buffer") ||
	    !ASSERT_GE(a.buffer_size_in_bytes, 1, "XSpace size + 1"))
		return NULL;
	ASSERT_EQ(a.buffer[a.buffer_size_in_bytes - 1], 0, "the trailing zero byte");
	if (raw) {
		*raw = a.buffer;
		*raw_len = a.buffer_size_in_bytes;
	}
	xs = tensorflow__profiler__xspace__unpack(NULL, a.buffer_size_in_bytes - 1, a.buffer);
	ASSERT_OK_PTR(xs, "protobuf-c decodes the XSpace");
	return xs;
}

/* ---------------------------------------------------------------- truth */

struct truth_rec {
	bool module;
	int core;
	uint64_t launch_id, t_start, t_end, flops, bytes;
	char name[64];
	bool cancelled;
	bool seen;
};

static struct truth_rec truth[4096];
static int ntruth;

static bool json_u64(const char *line, const char *key, uint64_t *v)
{
	char k[64];
	const char *s;

	snprintf(k, sizeof(k), "\"%s\":", key);
	s = strstr(line, k);
	if (!s)
		return false;
	*v = strtoull(s + strlen(k), NULL, 10);
	return true;
}

static bool json_str(const char *line, const char *key, char *out, size_t len)
{
	char k[64];
	const char *s, *e;

	snprintf(k, sizeof(k), "\"%s\":\"", key);
	s = strstr(line, k);
	if (!s)
		return false;
	s += strlen(k);
	e = strchr(s, '"');
	if (!e)
		return false;
	snprintf(out, len, "%.*s", (int)(e - s), s);
	return true;
}

/* The op and device_execution records of launches [lo, hi]. */
static void load_truth(const char *path, uint64_t lo, uint64_t hi)
{
	char line[4096];
	FILE *f = fopen(path, "r");

	ntruth = 0;
	if (!ASSERT_OK_PTR(f, path))
		return;
	while (fgets(line, sizeof(line), f) && ntruth < (int)(sizeof(truth) / sizeof(truth[0]))) {
		struct truth_rec *r = &truth[ntruth];
		bool op = strstr(line, "{\"type\":\"op\"") == line;
		bool mod = strstr(line, "{\"type\":\"device_execution\"") == line;
		uint64_t core;

		if (!op && !mod)
			continue;
		memset(r, 0, sizeof(*r));
		r->module = mod;
		json_u64(line, "launch_id", &r->launch_id);
		if (r->launch_id < lo || r->launch_id > hi)
			continue;
		json_u64(line, "core", &core);
		r->core = (int)core;
		json_u64(line, "t_start", &r->t_start);
		json_u64(line, "t_end", &r->t_end);
		json_u64(line, "flops", &r->flops);
		json_u64(line, "bytes", &r->bytes);
		json_str(line, mod ? "module" : "name", r->name, sizeof(r->name));
		r->cancelled = strstr(line, "\"cancelled\":true") != NULL;
		ntruth++;
	}
	fclose(f);
}

static struct truth_rec *truth_find(bool module, int core, uint64_t launch_id,
				    const char *name)
{
	int i;

	for (i = 0; i < ntruth; i++)
		if (truth[i].module == module && truth[i].core == core &&
		    truth[i].launch_id == launch_id && !truth[i].seen &&
		    !strcmp(truth[i].name, name))
			return &truth[i];
	return NULL;
}

/* ---------------------------------------------------------------- XSpace */

static const char *stat_name(const XPlane *p, int64_t id)
{
	size_t i;

	for (i = 0; i < p->n_stat_metadata; i++)
		if (p->stat_metadata[i]->key == id)
			return p->stat_metadata[i]->value ? p->stat_metadata[i]->value->name : NULL;
	return NULL;
}

static const XStat *stat_of(const XPlane *p, XStat **stats, size_t n, const char *name)
{
	size_t i;

	for (i = 0; i < n; i++) {
		const char *s = stat_name(p, stats[i]->metadata_id);

		if (s && !strcmp(s, name))
			return stats[i];
	}
	return NULL;
}

static uint64_t stat_u64(const XPlane *p, const XEvent *e, const char *name, bool *found)
{
	const XStat *s = stat_of(p, e->stats, e->n_stats, name);

	*found = s && s->value_case == TENSORFLOW__PROFILER__XSTAT__VALUE_UINT64_VALUE;
	return *found ? s->uint64_value : 0;
}

static const XLine *line_of(const XPlane *p, const char *name)
{
	size_t i;

	for (i = 0; i < p->n_lines; i++)
		if (!strcmp(p->lines[i]->name, name))
			return p->lines[i];
	return NULL;
}

static uint64_t plane_dropped(const XPlane *p)
{
	const XStat *s = stat_of(p, p->stats, p->n_stats, "dropped_events");

	return s ? s->uint64_value : 0;
}

static size_t space_events(const XSpace *xs)
{
	size_t i, j, n = 0;

	for (i = 0; i < xs->n_planes; i++)
		for (j = 0; j < xs->planes[i]->n_lines; j++)
			n += xs->planes[i]->lines[j]->n_events;
	return n;
}

/*
 * Every event of `line` is one truth record (same core, launch, name,
 * duration to the ns, start to the offset), in start order; ops do not
 * overlap and lie inside their module. Returns the number checked.
 */
static int check_line(const XPlane *p, int core, const XLine *l, bool module,
		      int64_t offset_ns, const XLine *mods)
{
	int64_t prev_end = INT64_MIN, prev_start = INT64_MIN;
	/* Picoseconds from the module line's start: both lines on one scale. */
	int64_t base_ns = mods ? mods->timestamp_ns : l->timestamp_ns;
	char what[160];
	size_t i, j;
	int n = 0;

	for (i = 0; i < l->n_events; i++) {
		const XEvent *e = l->events[i];
		const char *name = xplane_event_name(p, e->metadata_id);
		int64_t start = (l->timestamp_ns - base_ns) * 1000 + e->offset_ps;
		int64_t end = start + e->duration_ps;
		uint64_t run_id;
		struct truth_rec *r;
		bool has;

		snprintf(what, sizeof(what), "minor %d core %d %s event %zu (%s)", cur->minor,
			 core, module ? "module" : "op", i, name ? name : "?");
		if (!ASSERT_OK_PTR(name, what))
			continue;
		ASSERT_EQ(e->data_case, TENSORFLOW__PROFILER__XEVENT__DATA_OFFSET_PS, what);
		ASSERT_GE(e->offset_ps, 0, "offset_ps from the line's first start");
		ASSERT_GE(start, prev_start, "events in start order");
		if (!module)
			ASSERT_GE(start, prev_end, "ops do not overlap");
		prev_start = start;
		prev_end = end;
		run_id = stat_u64(p, e, "run_id", &has);
		ASSERT_TRUE(has, "run_id stat");
		r = truth_find(module, core, run_id, name);
		if (!test_check(r != NULL, __FILE__, __LINE__, what,
				"no truth record for launch %llu", (unsigned long long)run_id))
			continue;
		r->seen = true;
		n++;
		ASSERT_EQ(e->duration_ps, (int64_t)(r->t_end - r->t_start) * 1000, "duration as truth");
		/* Realtime = monotonic + the offset the test measured at Start. */
		{
			int64_t want = (int64_t)r->t_start + offset_ns;
			int64_t got = l->timestamp_ns + e->offset_ps / 1000;

			ASSERT_LE(llabs(got - want), 2000000, "CLOCK_REALTIME start within 2 ms");
		}
		ASSERT_EQ(stat_u64(p, e, "cancelled", &has), r->cancelled ? 1 : 0, "cancelled stat");
		if (!module) {
			const XStat *cat = stat_of(p, e->stats, e->n_stats, "hlo_category");
			const char *want_cat = !strncmp(name, "fusion", 6) ? "fusion" :
					       !strncmp(name, "all-reduce", 10) ? "all-reduce" :
					       "convolution";

			ASSERT_TRUE(cat && cat->value_case ==
				    TENSORFLOW__PROFILER__XSTAT__VALUE_STR_VALUE &&
				    !strcmp(cat->str_value, want_cat), "hlo_category");
			ASSERT_EQ(stat_u64(p, e, "flops", &has), r->flops, "flops as truth");
			ASSERT_EQ(has, r->flops != 0, "flops only where known");
			ASSERT_EQ(stat_u64(p, e, "bytes_accessed", &has), r->bytes, "bytes as truth");
			/* Inside its module on this core. */
			for (j = 0; mods && j < mods->n_events; j++) {
				const XEvent *m = mods->events[j];
				int64_t ms = m->offset_ps;
				bool h2;

				if (stat_u64(p, m, "run_id", &h2) != run_id)
					continue;
				ASSERT_GE(start, ms, "op starts inside its module");
				ASSERT_LE(end, ms + m->duration_ps, "op ends inside its module");
				break;
			}
			ASSERT_TRUE(mods && j < mods->n_events, "the op's module is on the plane");
		}
	}
	return n;
}

static void check_metadata(const XPlane *p)
{
	size_t i, j, k;

	for (i = 0; i < p->n_event_metadata; i++)
		ASSERT_EQ(p->event_metadata[i]->key, p->event_metadata[i]->value->id,
			  "event metadata key = id");
	for (i = 0; i < p->n_stat_metadata; i++)
		ASSERT_EQ(p->stat_metadata[i]->key, p->stat_metadata[i]->value->id,
			  "stat metadata key = id");
	for (i = 0; i < p->n_lines; i++)
		for (j = 0; j < p->lines[i]->n_events; j++) {
			const XEvent *e = p->lines[i]->events[j];

			for (k = 0; k < e->n_stats; k++)
				ASSERT_OK_PTR(stat_name(p, e->stats[k]->metadata_id),
					      "every stat has metadata");
		}
}

/* ---------------------------------------------------------------- the run */

static const char *program =
	"HloModule tiny_step\n"
	"ENTRY %tiny_step () -> f32[256] {\n"
	"  %fusion.1 = f32[4,8]{1,0} fusion(), kind=kLoop, sim_ns=300000, sim_flops=10, sim_bytes=20\n"
	"  %all-reduce.2 = f32[256]{0} all-reduce(%fusion.1), sim_ns=100000\n"
	"  ROOT %tuple.3 = (f32[256]) tuple(%all-reduce.2), sim_output_bytes=1024\n}\n";

static const char *long_program =
	"HloModule long_step\n"
	"  %convolution.1 = f32[] convolution(), sim_ns=30000000000, sim_flops=7\n";

/* ProfileOptions: host 2, device 1, python 0, version 1, and fields the
 * plugin must skip: device_type (6, varint), start_timestamp_ns (8),
 * repository_path (10, string), a fixed64 and a fixed32 of future fields. */
static const uint8_t opts_device[] = {
	0x08, 0x00, 0x10, 0x02, 0x18, 0x01, 0x20, 0x00, 0x28, 0x01,
	0x30, 0x02, 0x40, 0x80, 0x94, 0xeb, 0xdc, 0x03, 0x52, 0x03, 'r', 'e', 'p',
	0xf1, 0x06, 1, 2, 3, 4, 5, 6, 7, 8, 0xf5, 0x06, 1, 2, 3, 4,
};
static const uint8_t opts_no_device[] = { 0x10, 0x02, 0x18, 0x00, 0x28, 0x01 };

static int64_t realtime_minus_monotonic(void)
{
	struct timespec rt, mono;

	clock_gettime(CLOCK_REALTIME, &rt);
	clock_gettime(CLOCK_MONOTONIC, &mono);
	return ((int64_t)rt.tv_sec - mono.tv_sec) * 1000000000ll + (rt.tv_nsec - mono.tv_nsec);
}

static void check_errors(void)
{
	static const uint8_t truncated[] = { 0x18 };
	static const uint8_t bad_wire[] = { 0x1b };	/* field 3, start group */
	PLUGIN_Profiler_Create_Args c = { .struct_size = sizeof(c) };
	PLUGIN_Profiler_CollectData_Args cd = { .struct_size = sizeof(cd) };
	PLUGIN_Profiler_Error_GetCode_Args g = { .struct_size = sizeof(g) };
	PLUGIN_Profiler *p;
	char msg[256];

	c.options = (const char *)truncated;
	c.options_size = sizeof(truncated);
	prof_fails(cur->prof->create(&c), 3, "create with truncated options");
	c.options = (const char *)bad_wire;
	c.options_size = sizeof(bad_wire);
	prof_fails(cur->prof->create(&c), 3, "create with a group");
	c.options = NULL;
	c.options_size = 4;
	prof_fails(cur->prof->create(&c), 3, "create with NULL options of size 4");
	prof_fails(cur->prof->collect_data(&cd), 3, "collect_data without a profiler");
	prof_fails(cur->prof->error_get_code(&g), 3, "error_get_code of NULL");
	prof_fails(prof_start(NULL), 3, "start without a profiler");

	/* Empty options: the ProfilerSession defaults, device tracer on. */
	p = prof_create(NULL, 0);
	if (!p)
		return;
	{
		const uint8_t *raw;
		size_t len;
		XSpace *xs = collect(p, &raw, &len);	/* never started: nothing */

		ASSERT_EQ(len, 1, "an empty XSpace and its zero byte");
		if (xs)
			ASSERT_EQ(xs->n_planes, 0, "no planes before any start");
		tensorflow__profiler__xspace__free_unpacked(xs, NULL);
	}
	prof_ok(prof_start(p), "start");
	prof_ok(prof_start(p), "start again: no-op");
	ASSERT_EQ(prof_code(cur->prof->collect_data(&(PLUGIN_Profiler_CollectData_Args){
			.struct_size = sizeof(cd), .profiler = p }), msg, sizeof(msg)),
		  9, "collect while started: FAILED_PRECONDITION");
	ASSERT_STRCONTAINS(msg, "stop", "the message says what to do");
	prof_ok(prof_stop(p), "stop");
	prof_ok(prof_stop(p), "stop again: no-op");
	prof_destroy(p);
	prof_destroy(NULL);
}

static void check_plugin(const char *dir, const char *truth_path)
{
	PLUGIN_Profiler *prof, *off, *small, *gone;
	PJRT_LoadedExecutable *x, *longx;
	PJRT_Event *ev[2];
	PJRT_Buffer *out[2];
	PJRT_Client *c;
	const uint8_t *raw = NULL;
	size_t raw_len = 0;
	uint64_t base = cur->launch_base;
	int64_t offset;
	char trace_dir[4200];
	XSpace *xs;
	int id;

	check_errors();
	snprintf(trace_dir, sizeof(trace_dir), "%s/devtrace-%d", dir, cur->minor);
	c = client_create(dir, trace_dir);
	if (!c)
		return;
	ASSERT_TRUE(access(trace_dir, F_OK) != 0, "sim_no_devtrace: no trace directory");
	x = compile(c, program);
	longx = compile(c, long_program);
	if (!x || !longx)
		return;

	execute(x, (int)base, 2, true, ev, out);		/* before the session */

	prof = prof_create(opts_device, sizeof(opts_device));
	off = prof_create(opts_no_device, sizeof(opts_no_device));
	setenv("ACCELTRACE_SIM_PROFILER_MAX_EVENTS", "5", 1);
	small = prof_create(NULL, 0);
	unsetenv("ACCELTRACE_SIM_PROFILER_MAX_EVENTS");
	gone = prof_create(NULL, 0);
	if (!prof || !off || !small || !gone)
		return;
	offset = realtime_minus_monotonic();
	prof_ok(prof_start(prof), "start");
	prof_ok(prof_start(off), "start level 0");
	prof_ok(prof_start(small), "start bounded");
	prof_ok(prof_start(gone), "start the one destroyed while started");
	prof_destroy(gone);

	for (id = 1; id <= 3; id++)
		execute(x, (int)(base + id), 2, true, ev, out);
	/* Cut by Client_Destroy 20 ms into its 30 s op. */
	execute(longx, (int)(base + 5), 1, false, ev, out);
	usleep(20000);
	client_destroy(c);
	{
		PJRT_Event_Destroy_Args ed = { .struct_size = sizeof(ed), .event = ev[0] };
		PJRT_Buffer_Destroy_Args bd = { .struct_size = sizeof(bd), .buffer = out[0] };

		call(PJRT_SLOT_Event_Destroy, &ed);
		call(PJRT_SLOT_Buffer_Destroy, &bd);
	}
	executable_free(x);
	executable_free(longx);
	prof_ok(prof_stop(prof), "stop");
	prof_ok(prof_stop(off), "stop level 0");
	prof_ok(prof_stop(small), "stop bounded");

	/* After the session, on a new client: not recorded. */
	c = client_create(dir, trace_dir);
	if (c) {
		x = compile(c, program);
		if (x)
			execute(x, (int)(base + 6), 2, true, ev, out);
		executable_free(x);
		client_destroy(c);
	}
	truth_flush();
	load_truth(truth_path, base, base + 9);
	ASSERT_EQ(ntruth, 3 * 2 + 3 * 2 * 3 + 2 + 3 * 2, "truth records of the run");

	/* Level 0: no device planes. */
	xs = collect(off, NULL, NULL);
	if (xs)
		ASSERT_EQ(xs->n_planes, 0, "device_tracer_level 0: no planes");
	tensorflow__profiler__xspace__free_unpacked(xs, NULL);
	prof_destroy(off);

	/* The bound: 5 events kept, the rest counted on their planes. */
	xs = collect(small, NULL, NULL);
	if (xs) {
		uint64_t dropped = 0;
		size_t i;

		for (i = 0; i < xs->n_planes; i++)
			dropped += plane_dropped(xs->planes[i]);
		ASSERT_EQ(space_events(xs), 5, "max events kept");
		/* Launches 1-3: 2 cores x (2 ops + 1 module); 5: op + module. */
		ASSERT_EQ(dropped + 5, 3 * 2 * 3 + 2, "dropped_events counts the rest");
	}
	tensorflow__profiler__xspace__free_unpacked(xs, NULL);
	prof_destroy(small);

	xs = collect(prof, &raw, &raw_len);
	if (!xs)
		return;
	ASSERT_EQ(xs->n_planes, 2, "one plane per core");
	for (id = 0; id < (int)xs->n_planes && id < 2; id++) {
		char name[32];
		const XPlane *p;
		const XLine *mods, *ops;
		int n;

		snprintf(name, sizeof(name), "/device:TPU:%d", id);
		p = xplane_plane(xs, name);
		if (!ASSERT_OK_PTR(p, name))
			continue;
		ASSERT_EQ(p->id, id, "plane id = core");
		ASSERT_EQ(plane_dropped(p), 0, "nothing dropped");
		check_metadata(p);
		mods = line_of(p, "XLA Modules");
		ops = line_of(p, "XLA Ops");
		if (!ASSERT_OK_PTR(mods, "XLA Modules line") || !ASSERT_OK_PTR(ops, "XLA Ops line"))
			continue;
		ASSERT_NEQ(mods->id, ops->id, "two lines");
		ASSERT_EQ(mods->n_events, id == 0 ? 4 : 3, "executions of the session");
		ASSERT_EQ(ops->n_events, id == 0 ? 7 : 6, "ops of the session");
		n = check_line(p, id, mods, true, offset, NULL);
		n += check_line(p, id, ops, false, offset, mods);
		ASSERT_EQ(n, id == 0 ? 11 : 9, "every event is in the truth");
	}
	{
		int i, missing = 0;

		for (i = 0; i < ntruth; i++)
			if (!truth[i].seen && truth[i].launch_id != base &&
			    truth[i].launch_id != base + 6)
				missing++;
			else if (truth[i].seen && (truth[i].launch_id == base ||
						   truth[i].launch_id == base + 6))
				missing += 1000;
		ASSERT_EQ(missing, 0, "the session's truth is all there, and only it");
		for (i = 0; i < ntruth; i++)
			if (truth[i].launch_id == base + 5)
				ASSERT_TRUE(truth[i].cancelled, "launch 5 was cut");
	}
	tensorflow__profiler__xspace__free_unpacked(xs, NULL);

	/* The caller's buffer: the same bytes; without room for the zero
	 * byte, the XSpace alone; with less, an error. A second collect
	 * returns the same buffer. */
	{
		uint8_t *mine = malloc(raw_len);
		PLUGIN_Profiler_CollectData_Args a = {
			.struct_size = sizeof(a), .profiler = prof, .buffer = mine,
		};

		if (ASSERT_OK_PTR(mine, "malloc")) {
			prof_ok(cur->prof->collect_data(&a), "collect into the caller's buffer");
			ASSERT_EQ(a.buffer_size_in_bytes, raw_len, "same size");
			ASSERT_TRUE(!memcmp(mine, raw, raw_len), "same bytes");
			a.buffer_size_in_bytes = raw_len - 1;
			prof_ok(cur->prof->collect_data(&a), "collect, room for the XSpace only");
			ASSERT_EQ(a.buffer_size_in_bytes, raw_len - 1, "the XSpace alone");
			a.buffer_size_in_bytes = raw_len - 2;
			prof_fails(cur->prof->collect_data(&a), 3, "collect into too small a buffer");
			a.buffer = NULL;
			prof_ok(cur->prof->collect_data(&a), "collect again");
			ASSERT_TRUE(a.buffer == raw && a.buffer_size_in_bytes == raw_len,
				    "the same buffer again");
			free(mine);
		}
	}

	/* A new session forgets the old one (no client now: no planes). */
	prof_ok(prof_start(prof), "restart");
	prof_ok(prof_stop(prof), "stop");
	xs = collect(prof, NULL, NULL);
	if (xs)
		ASSERT_EQ(space_events(xs), 0, "a restarted session is empty");
	tensorflow__profiler__xspace__free_unpacked(xs, NULL);
	prof_destroy(prof);
}

int main(void)
{
	const char *outdir = getenv("OUTPUT") ? getenv("OUTPUT") : "build";
	char dir[] = "/tmp/plugin-profiler-XXXXXX";
	char truth_path[4200], cmd[4200];
	struct plugin ps[2] = {
		{ .minor = 94, .launch_base = 100 },
		{ .minor = 26, .launch_base = 200 },
	};
	int k, err;

	if (!ASSERT_OK_PTR(mkdtemp(dir), "mkdtemp"))
		return test_exit();
	snprintf(truth_path, sizeof(truth_path), "%s/truth.jsonl", dir);
	err = truth_open(truth_path);
	if (!ASSERT_OK(err, "truth_open"))
		return test_exit();
	for (k = 0; k < 2; k++) {
		struct plugin *p = &ps[k];
		PJRT_Plugin_Initialize_Args init = { .struct_size = sizeof(init) };
		const PJRT_Api *(*get)(void);
		const PJRT_Profiler_Extension *ext;
		char path[4200];
		void *lib;

		snprintf(path, sizeof(path), "%s/sim/pjrt-0.%d/libtpu.so", outdir, p->minor);
		lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
		if (!ASSERT_OK_PTR(lib, dlerror()))
			continue;
		get = (const PJRT_Api *(*)(void))dlsym(lib, "GetPjrtApi");
		if (!ASSERT_OK_PTR(get, "GetPjrtApi"))
			continue;
		p->api = get();
		ASSERT_EQ(p->api->hdr.pjrt_api_version.minor_version, p->minor, "minor");
		ext = (const PJRT_Profiler_Extension *)pjrt_find_extension(
			p->api->hdr.extension_start, PJRT_Extension_Type_Profiler);
		if (!ASSERT_OK_PTR(ext, "the profiler extension") ||
		    !ASSERT_OK_PTR(ext->profiler_api, "profiler_api"))
			continue;
		ASSERT_EQ(ext->base.struct_size, sizeof(PJRT_Profiler_Extension), "struct_size");
		ASSERT_GE(ext->profiler_api->struct_size, sizeof(PLUGIN_Profiler_Api),
			  "PLUGIN_Profiler_Api struct_size");
		p->prof = ext->profiler_api;
		cur = p;
		if (!pjrt_ok(call(PJRT_SLOT_Plugin_Initialize, &init), "Plugin_Initialize"))
			continue;
		check_plugin(dir, truth_path);
	}
	truth_close();
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd))
		fprintf(stderr, "could not remove %s\n", dir);
	return test_exit();
}
