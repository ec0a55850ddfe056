// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Feature probing by trying. Each BPF mechanism is loaded on its own, attached,
 * fired from this process and checked at the far end of the ring buffer, so a
 * "yes" means the whole path works here, not that a version number says so.
 */
#include <errno.h>
#include <liburing.h>
#include <linux/capability.h>
#include <linux/magic.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#define LOG_CONTEXT "features"
#include "lib/clock.h"
#include "lib/log.h"
#include "probe/kernel_features.h"
#include "probe/uprobe_multi.h"
#include <linux/types.h>
#include "acceltrace/feature_probe.h"
#include "feature_probe.skel.h"

#define TRIGGER_COUNT 3

static const struct {
	const char *name;
	const char *key;
} feature_names[FEAT__COUNT] = {
	[FEAT_BTF] = { "kernel BTF", "btf" },
	[FEAT_RINGBUF] = { "BPF ring buffer", "ringbuf" },
	[FEAT_TRACEFS] = { "tracefs", "tracefs" },
	[FEAT_SYSCALL_TP] = { "syscall tracepoints", "syscall_tracepoints" },
	[FEAT_RAW_TP] = { "raw tracepoints", "raw_tracepoints" },
	[FEAT_TP_BTF] = { "BTF tracepoints", "btf_tracepoints" },
	[FEAT_UPROBE] = { "uprobes", "uprobes" },
	[FEAT_FENTRY] = { "fentry/fexit", "fentry" },
	[FEAT_KPROBE] = { "kprobes", "kprobes" },
	[FEAT_IO_URING] = { "io_uring", "io_uring" },
	[FEAT_CAP_BPF] = { "CAP_BPF", "cap_bpf" },
	[FEAT_CAP_PERFMON] = { "CAP_PERFMON", "cap_perfmon" },
	[FEAT_CAP_SYS_ADMIN] = { "CAP_SYS_ADMIN", "cap_sys_admin" },
	[FEAT_MEMCG_ACCOUNTING] = { "BPF memory accounting", "bpf_memcg_accounting" },
	[FEAT_UPROBE_MULTI] = { "uprobe_multi links", "uprobe_multi" },
};

const char *feature_name(enum feature_id id)
{
	return id < FEAT__COUNT ? feature_names[id].name : "?";
}

const char *feature_key(enum feature_id id)
{
	return id < FEAT__COUNT ? feature_names[id].key : "?";
}

const char *probe_class_name(enum probe_class pc)
{
	static const char *const names[PROBE__COUNT] = {
		[PROBE_DRIVER] = "driver interface",
		[PROBE_DRIVER_FUNCTIONS] = "driver functions",
		[PROBE_RUNTIME] = "runtime libraries",
		[PROBE_SCHED] = "scheduler",
		[PROBE_FILE_IO] = "file I/O",
		[PROBE_IRQ] = "device interrupts",
	};
	return pc < PROBE__COUNT ? names[pc] : "?";
}

const char *probe_class_key(enum probe_class pc)
{
	static const char *const keys[PROBE__COUNT] = {
		[PROBE_DRIVER] = "driver",
		[PROBE_DRIVER_FUNCTIONS] = "driver_functions",
		[PROBE_RUNTIME] = "runtime",
		[PROBE_SCHED] = "scheduler",
		[PROBE_FILE_IO] = "file_io",
		[PROBE_IRQ] = "irq",
	};
	return pc < PROBE__COUNT ? keys[pc] : "?";
}

const char *probe_mechanism_name(enum probe_mechanism m)
{
	switch (m) {
	case MECH_NONE: return "none";
	case MECH_FENTRY: return "fentry";
	case MECH_KPROBE: return "kprobe";
	case MECH_TP_BTF: return "BTF tracepoint";
	case MECH_RAW_TP: return "raw tracepoint";
	case MECH_SYSCALL_TP: return "syscall tracepoint";
	case MECH_UPROBE: return "uprobe";
	}
	return "?";
}

static void set_result(struct features *f, enum feature_id id, bool ok,
		       const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void set_result(struct features *f, enum feature_id id, bool ok,
		       const char *fmt, ...)
{
	va_list ap;

	f->r[id].available = ok;
	f->r[id].probed = true;
	va_start(ap, fmt);
	vsnprintf(f->r[id].detail, sizeof(f->r[id].detail), fmt, ap);
	va_end(ap);
}

/* ---------------------------------------------------------------- tracefs */

static bool is_tracefs(const char *path)
{
	struct statfs st;

	return statfs(path, &st) == 0 && st.f_type == TRACEFS_MAGIC;
}

int features__ensure_tracefs(bool *mounted_by_us, char *where, size_t len)
{
	static const char *const paths[] = {
		"/sys/kernel/tracing", "/sys/kernel/debug/tracing",
	};

	*mounted_by_us = false;
	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
		if (is_tracefs(paths[i])) {
			snprintf(where, len, "%s", paths[i]);
			return 0;
		}
	}
	/* libbpf reads tracepoint ids from tracefs: mount it if we may. */
	if (mount("tracefs", paths[0], "tracefs", 0, NULL)) {
		int err = -errno;

		snprintf(where, len, "not mounted, and mounting %s failed: %s",
			 paths[0], strerror(-err));
		return err;
	}
	*mounted_by_us = true;
	snprintf(where, len, "%s", paths[0]);
	return 0;
}

/* ---------------------------------------------------------------- BPF trials */

/* The uprobe trial's target: a function of acceltrace's own. */
__attribute__((noinline, used)) void acceltrace_feature_uprobe_target(void)
{
	asm volatile("" ::: "memory");
}

struct trial {
	enum fp_kind kind;
	int count;
	int bad_order;		/* records out of sequence or time order */
	__u64 last_ts;
	__u64 lo_ts, hi_ts;	/* the window the records must fall into */
	int bad_time;
};

static int trial_record(void *ctx, void *data, size_t size)
{
	struct trial *t = ctx;
	const struct fp_record *rec = data;

	if (size < sizeof(*rec) || rec->type != t->kind)
		return 0;
	t->count++;
	if (rec->seq != (__u64)t->count || rec->ts_ns < t->last_ts)
		t->bad_order++;
	if (rec->ts_ns < t->lo_ts || rec->ts_ns > t->hi_ts)
		t->bad_time++;
	t->last_ts = rec->ts_ns;
	return 0;
}

/* The last non-empty line of a verifier log, trimmed, into out. */
static void last_log_line(const char *log, char *out, size_t len)
{
	const char *end = log + strlen(log), *start;

	while (end > log && (end[-1] == '\n' || end[-1] == ' '))
		end--;
	start = end;
	while (start > log && start[-1] != '\n')
		start--;
	snprintf(out, len, "%.*s", (int)(end - start), start);
}

/* A mechanism refused: "load refused: EPERM (Operation not permitted); the
 * kernel said: ..." or "...; no word from the verifier". */
static void refused(struct features *f, enum feature_id id, const char *what,
		    int err, const char *log)
{
	struct feature_result *r = &f->r[id];
	const char *name = strerrorname_np(err);
	char said[sizeof(r->kernel_said)];

	last_log_line(log, said, sizeof(said));
	if (said[0])
		set_result(f, id, false, "%s: %s (%s); the kernel said: %s", what,
			   name ? name : "?", strerror(err), said);
	else
		set_result(f, id, false, "%s: %s (%s)%s", what, name ? name : "?",
			   strerror(err), !strcmp(what, "load refused") ?
			   ", before the verifier said anything" : "");
	r->err = err;
	snprintf(r->kernel_said, sizeof(r->kernel_said), "%s", said);
}


static struct bpf_program *trial_program(struct feature_probe *skel,
					 enum fp_kind kind)
{
	switch (kind) {
	case FP_UPROBE: return skel->progs.fp_uprobe;
	case FP_SYSCALL_TP: return skel->progs.fp_syscall_tp;
	case FP_RAW_TP: return skel->progs.fp_raw_tp;
	case FP_TP_BTF: return skel->progs.fp_tp_btf;
	case FP_FENTRY: return skel->progs.fp_fentry;
	case FP_KPROBE: return skel->progs.fp_kprobe;
	default: return NULL;
	}
}

static struct bpf_link *trial_attach(struct bpf_program *prog, enum fp_kind kind)
{
	LIBBPF_OPTS(bpf_uprobe_opts, uopts,
		    .func_name = "acceltrace_feature_uprobe_target");

	if (kind == FP_UPROBE)
		return bpf_program__attach_uprobe_opts(prog, 0, "/proc/self/exe",
						       0, &uopts);
	return bpf_program__attach(prog);
}

static void trial_fire(enum fp_kind kind)
{
	for (int i = 0; i < TRIGGER_COUNT; i++) {
		if (kind == FP_UPROBE)
			acceltrace_feature_uprobe_target();
		else
			syscall(SYS_getppid);
	}
}

/*
 * Loads only the program for @kind, attaches it, fires it TRIGGER_COUNT times
 * and checks that exactly that many records arrive, in order and in time.
 */
static void try_mechanism(struct features *f, enum feature_id id,
			  enum fp_kind kind, const char *what)
{
	struct feature_probe *skel = NULL;
	struct ring_buffer *rb = NULL;
	struct bpf_link *link = NULL;
	struct bpf_program *prog, *want;
	struct trial t = { .kind = kind };
	static char log_buf[16384];
	int err;

	skel = feature_probe__open();
	if (!skel) {
		set_result(f, id, false, "BPF object open failed: %s", strerror(errno));
		goto cleanup;
	}
	skel->rodata->target_tgid = getpid();
	skel->rodata->trigger_syscall_nr = SYS_getppid;
	want = trial_program(skel, kind);
	bpf_object__for_each_program(prog, skel->obj)
		bpf_program__set_autoload(prog, prog == want);

	/* The verifier's own words when it refuses (libbpf retries a failed
	 * load with logging on into this buffer). */
	log_buf[0] = 0;
	bpf_program__set_log_buf(want, log_buf, sizeof(log_buf));
	err = feature_probe__load(skel);
	if (err) {
		refused(f, id, "load refused", -err, log_buf);
		goto cleanup;
	}
	link = trial_attach(want, kind);
	if (!link) {
		refused(f, id, "attach failed", errno, "");
		goto cleanup;
	}
	rb = ring_buffer__new(bpf_map__fd(skel->maps.fp_events), trial_record,
			      &t, NULL);
	if (!rb) {
		set_result(f, id, false, "ring buffer setup failed: %s",
			   strerror(errno));
		goto cleanup;
	}
	t.lo_ts = mono_ns();
	trial_fire(kind);
	t.hi_ts = mono_ns();
	err = ring_buffer__consume(rb);
	if (err < 0) {
		set_result(f, id, false, "ring buffer read failed: %s",
			   strerror(-err));
		goto cleanup;
	}
	if (t.count != TRIGGER_COUNT || t.bad_order || t.bad_time) {
		set_result(f, id, false,
			   "%s attached but delivered %d of %d records (%d out of order, %d outside the trigger window)",
			   what, t.count, TRIGGER_COUNT, t.bad_order, t.bad_time);
		goto cleanup;
	}
	set_result(f, id, true, "%s fired %d/%d through the ring buffer",
		   what, t.count, TRIGGER_COUNT);
cleanup:
	ring_buffer__free(rb);
	bpf_link__destroy(link);
	feature_probe__destroy(skel);
}

/* ---------------------------------------------------------------- others */

static void probe_btf(struct features *f)
{
	struct btf *btf = btf__load_vmlinux_btf();

	if (!btf) {
		set_result(f, FEAT_BTF, false, "no vmlinux BTF: %s", strerror(errno));
		return;
	}
	set_result(f, FEAT_BTF, true, "%u types in /sys/kernel/btf/vmlinux",
		   btf__type_cnt(btf));
	btf__free(btf);
}

static void probe_ringbuf(struct features *f)
{
	long page = sysconf(_SC_PAGESIZE);
	int fd = bpf_map_create(BPF_MAP_TYPE_RINGBUF, NULL, 0, 0, page, NULL);

	if (fd < 0) {
		set_result(f, FEAT_RINGBUF, false, "map creation refused: %s",
			   strerror(-fd));
		return;
	}
	close(fd);
	set_result(f, FEAT_RINGBUF, true, "map created");
}

static void probe_tracefs(struct features *f)
{
	char where[160];
	bool ours;
	int err = features__ensure_tracefs(&ours, where, sizeof(where));

	f->tracefs_mounted_by_us = ours;
	if (err)
		set_result(f, FEAT_TRACEFS, false, "%s", where);
	else
		set_result(f, FEAT_TRACEFS, true, "%s%s", where,
			   ours ? " (mounted by acceltrace)" : "");
}

static void probe_io_uring(struct features *f)
{
	struct io_uring ring;
	struct io_uring_sqe *sqe;
	struct io_uring_cqe *cqe;
	int err;

	err = io_uring_queue_init(4, &ring, 0);
	if (err) {
		set_result(f, FEAT_IO_URING, false, "setup failed: %s", strerror(-err));
		return;
	}
	sqe = io_uring_get_sqe(&ring);
	io_uring_prep_nop(sqe);
	err = io_uring_submit(&ring);
	if (err == 1)
		err = io_uring_wait_cqe(&ring, &cqe);
	else if (err >= 0)
		err = -EIO;
	if (err) {
		set_result(f, FEAT_IO_URING, false, "no-op request failed: %s",
			   strerror(-err));
	} else {
		if (cqe->res < 0)
			set_result(f, FEAT_IO_URING, false, "no-op completed with %s",
				   strerror(-cqe->res));
		else
			set_result(f, FEAT_IO_URING, true, "no-op request completed");
		io_uring_cqe_seen(&ring, cqe);
	}
	io_uring_queue_exit(&ring);
}

static void probe_capabilities(struct features *f)
{
	struct __user_cap_header_struct hdr = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct data[2] = {};
	static const struct {
		enum feature_id id;
		int cap;
	} caps[] = {
		{ FEAT_CAP_BPF, CAP_BPF },
		{ FEAT_CAP_PERFMON, CAP_PERFMON },
		{ FEAT_CAP_SYS_ADMIN, CAP_SYS_ADMIN },
	};

	if (syscall(SYS_capget, &hdr, data)) {
		for (size_t i = 0; i < 3; i++)
			set_result(f, caps[i].id, false, "capget failed: %s",
				   strerror(errno));
		return;
	}
	for (size_t i = 0; i < 3; i++) {
		int c = caps[i].cap;
		bool eff = data[c / 32].effective & (1u << (c % 32));

		set_result(f, caps[i].id, eff, "%s effective set",
			   eff ? "in the" : "not in the");
	}
}

bool features__privileged(char *why, size_t len)
{
	struct features f = {};

	probe_capabilities(&f);
	if ((f.r[FEAT_CAP_BPF].available && f.r[FEAT_CAP_PERFMON].available) ||
	    f.r[FEAT_CAP_SYS_ADMIN].available)
		return true;
	snprintf(why, len, "needs root: CAP_BPF and CAP_PERFMON (or CAP_SYS_ADMIN), "
		 "to load BPF programs and place probes; this process (uid %u) has %s",
		 (unsigned)getuid(),
		 f.r[FEAT_CAP_BPF].available ? "CAP_BPF only" :
		 f.r[FEAT_CAP_PERFMON].available ? "CAP_PERFMON only" : "neither");
	return false;
}

/*
 * Since 5.11 BPF memory is charged to the memory cgroup; before, to
 * RLIMIT_MEMLOCK. A child with a zero memlock limit creating a map tells which.
 */
static void probe_memcg(struct features *f)
{
	int status;
	pid_t pid;

	if (!f->r[FEAT_CAP_BPF].available && !f->r[FEAT_CAP_SYS_ADMIN].available) {
		f->r[FEAT_MEMCG_ACCOUNTING].probed = false;
		snprintf(f->r[FEAT_MEMCG_ACCOUNTING].detail,
			 sizeof(f->r[FEAT_MEMCG_ACCOUNTING].detail),
			 "not tried: no privilege to create BPF maps");
		return;
	}
	pid = fork();
	if (pid < 0) {
		set_result(f, FEAT_MEMCG_ACCOUNTING, false, "fork failed: %s",
			   strerror(errno));
		return;
	}
	if (pid == 0) {
		struct rlimit zero = { 0, 0 };
		int fd;

		if (setrlimit(RLIMIT_MEMLOCK, &zero))
			_exit(3);
		fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, NULL, 4, 8, 1024, NULL);
		_exit(fd >= 0 ? 0 : (fd == -EPERM ? 1 : 2));
	}
	if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status)) {
		set_result(f, FEAT_MEMCG_ACCOUNTING, false, "probe child failed");
		return;
	}
	switch (WEXITSTATUS(status)) {
	case 0:
		set_result(f, FEAT_MEMCG_ACCOUNTING, true,
			   "memory cgroup (RLIMIT_MEMLOCK not needed)");
		break;
	case 1:
		set_result(f, FEAT_MEMCG_ACCOUNTING, false,
			   "RLIMIT_MEMLOCK (acceltrace raises it)");
		break;
	default:
		set_result(f, FEAT_MEMCG_ACCOUNTING, false,
			   "could not create a map with a zero memlock limit");
	}
}

static void probe_uprobe_multi(struct features *f)
{
	char detail[sizeof(f->r[0].detail)];
	int err = uprobe_multi__try(detail, sizeof(detail));

	set_result(f, FEAT_UPROBE_MULTI, !err, "%s", detail);
	log_debug("uprobe_multi links: %s", detail);
	/* Turned off on purpose is not a refusal to explain. */
	if (err && err != -EPERM)
		f->r[FEAT_UPROBE_MULTI].err = -err;
}

int features__probe_feature(struct features *f, enum feature_id id)
{
	switch (id) {
	case FEAT_BTF: probe_btf(f); break;
	case FEAT_RINGBUF: probe_ringbuf(f); break;
	case FEAT_TRACEFS: probe_tracefs(f); break;
	case FEAT_SYSCALL_TP:
		try_mechanism(f, id, FP_SYSCALL_TP, "syscalls:sys_enter_getppid");
		break;
	case FEAT_RAW_TP:
		try_mechanism(f, id, FP_RAW_TP, "raw_tp sys_enter");
		break;
	case FEAT_TP_BTF:
		try_mechanism(f, id, FP_TP_BTF, "tp_btf sys_enter");
		break;
	case FEAT_UPROBE:
		try_mechanism(f, id, FP_UPROBE, "uprobe on acceltrace's own function");
		break;
	case FEAT_FENTRY:
		try_mechanism(f, id, FP_FENTRY, "fentry on __do_sys_getppid");
		break;
	case FEAT_KPROBE:
		try_mechanism(f, id, FP_KPROBE, "kprobe on __do_sys_getppid");
		break;
	case FEAT_IO_URING: probe_io_uring(f); break;
	case FEAT_CAP_BPF:
	case FEAT_CAP_PERFMON:
	case FEAT_CAP_SYS_ADMIN:
		probe_capabilities(f);
		break;
	case FEAT_MEMCG_ACCOUNTING: probe_memcg(f); break;
	case FEAT_UPROBE_MULTI: probe_uprobe_multi(f); break;
	default:
		return -EINVAL;
	}
	return 0;
}

int features__probe(struct features *f)
{
	memset(f, 0, sizeof(*f));
	probe_capabilities(f);
	probe_btf(f);
	/* tracefs first: classic tracepoints need it to attach. */
	probe_tracefs(f);
	probe_ringbuf(f);
	for (enum feature_id id = FEAT_SYSCALL_TP; id <= FEAT_KPROBE; id++)
		features__probe_feature(f, id);
	probe_io_uring(f);
	probe_memcg(f);
	probe_uprobe_multi(f);
	return 0;
}

/* ---------------------------------------------------------------- choices */

static bool has(const struct features *f, enum feature_id id)
{
	return f->r[id].available;
}

struct probe_choice features__choose(const struct features *f,
				     enum probe_class pc)
{
	struct probe_choice c = { .mech = MECH_NONE };
	char missing[160] = "";

#define MISSING(id) do { \
	if (!has(f, id)) { \
		size_t l = strlen(missing); \
		snprintf(missing + l, sizeof(missing) - l, "%s%s", \
			 l ? ", " : "", feature_name(id)); \
	} } while (0)

	switch (pc) {
	case PROBE_DRIVER:
	case PROBE_FILE_IO:
		/* Per-syscall tracepoints fire only for the syscalls we want. */
		if (has(f, FEAT_SYSCALL_TP))
			c.mech = MECH_SYSCALL_TP;
		else if (has(f, FEAT_RAW_TP))
			c.mech = MECH_RAW_TP;
		MISSING(FEAT_SYSCALL_TP);
		if (c.mech == MECH_NONE)
			MISSING(FEAT_RAW_TP);
		break;
	case PROBE_DRIVER_FUNCTIONS:
		if (has(f, FEAT_FENTRY))
			c.mech = MECH_FENTRY;
		else if (has(f, FEAT_KPROBE))
			c.mech = MECH_KPROBE;
		MISSING(FEAT_FENTRY);
		MISSING(FEAT_KPROBE);
		break;
	case PROBE_RUNTIME:
		if (has(f, FEAT_UPROBE))
			c.mech = MECH_UPROBE;
		MISSING(FEAT_UPROBE);
		break;
	case PROBE_SCHED:
	case PROBE_IRQ:
		/* Same arguments either way; BTF ones need no probe reads. */
		if (has(f, FEAT_TP_BTF))
			c.mech = MECH_TP_BTF;
		else if (has(f, FEAT_RAW_TP))
			c.mech = MECH_RAW_TP;
		MISSING(FEAT_TP_BTF);
		if (c.mech == MECH_NONE)
			MISSING(FEAT_RAW_TP);
		break;
	default:
		break;
	}
#undef MISSING
	if (missing[0])
		snprintf(c.reason, sizeof(c.reason), "missing here: %s", missing);
	return c;
}

bool probe_class_optional(enum probe_class pc)
{
	/* Without driver-function hooks the driver interface is still seen. */
	return pc == PROBE_DRIVER_FUNCTIONS;
}

bool features__can_run(const struct features *f, char *missing, size_t len)
{
	size_t used = 0;
	bool ok = true;

#define NEED(cond, what) do { \
	if (!(cond)) { \
		ok = false; \
		used += snprintf(missing + used, used < len ? len - used : 0, \
				 "%s%s", used ? "; " : "", what); \
	} } while (0)
#define NEED_FEATURE(id, what) do { \
	char ___w[256]; \
	snprintf(___w, sizeof(___w), "%s (%s)", what, f->r[id].detail); \
	NEED(has(f, id), ___w); } while (0)

	if (len)
		missing[0] = '\0';
	NEED(has(f, FEAT_CAP_BPF) || has(f, FEAT_CAP_SYS_ADMIN),
	     "CAP_BPF (or CAP_SYS_ADMIN): run as root");
	NEED(has(f, FEAT_CAP_PERFMON) || has(f, FEAT_CAP_SYS_ADMIN),
	     "CAP_PERFMON (or CAP_SYS_ADMIN): run as root");
	/* Without them every load below is refused: naming each refusal
	 * would bury the one thing to do. */
	if (!ok)
		return false;
	NEED_FEATURE(FEAT_BTF, "kernel BTF");
	NEED_FEATURE(FEAT_RINGBUF, "BPF ring buffer");
	NEED_FEATURE(FEAT_UPROBE, "uprobes");
	for (enum probe_class pc = 0; pc < PROBE__COUNT; pc++) {
		struct probe_choice c = features__choose(f, pc);
		char what[96];

		if (probe_class_optional(pc))
			continue;
		snprintf(what, sizeof(what), "a mechanism for %s probes",
			 probe_class_name(pc));
		NEED(c.mech != MECH_NONE, what);
	}
#undef NEED_FEATURE
#undef NEED
	return ok;
}

/* ---------------------------------------------------------------- runtime attach */

const char *runtime_attach_mode_name(enum runtime_attach_mode m)
{
	return m == RT_ATTACH_UPROBE_MULTI ? "uprobe_multi" : "perf uprobe";
}

enum runtime_attach_mode features__runtime_attach(const struct features *f,
						  char *why, size_t len)
{
	const struct feature_result *r = &f->r[FEAT_UPROBE_MULTI];

	if (has(f, FEAT_UPROBE_MULTI)) {
		snprintf(why, len, "one link per library file and program; --pid: "
			 "for those processes only");
		return RT_ATTACH_UPROBE_MULTI;
	}
	snprintf(why, len, "one perf uprobe per probe (no uprobe_multi: %s); --pid: "
		 "one per probe and process, for those processes only",
		 r->probed ? r->detail : "not tried");
	return RT_ATTACH_PERF_UPROBE;
}
