// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Per-event cost of acceltrace's probes against their floor.
 *
 * A loop calls a probed function (or makes a traced syscall) many times, and
 * the time per call is compared between configurations measured in the same
 * run, one after the other within each repetition:
 *
 *   none      nothing attached
 *   floor     this benchmark's empty BPF program, attached exactly where
 *             acceltrace attaches (same offset; same tracepoints)
 *   acceltrace's real programs, attached through probe_session with real
 *             probe-pack fetch programs, the process traced (or not)
 *
 * Uprobes go on functions of this binary whose first instruction is each
 * kind the kernel handles differently: push (emulated), endbr64 and mov
 * (single-stepped), and a real `endbr64; push %rbp` prologue with the probe
 * where probe_placement puts it. The syscall path is pread64 of a regular
 * file. Variants of the fetch program, and pieces of the hot path run alone
 * (a ring-buffer write, user-memory reads), split the cost.
 *
 * Prints BENCH lines (bench.h) for tests/bench/report.py. Environment:
 * BENCH_REPS (default 5), BENCH_CALLS (emulated uprobes and syscalls,
 * default 400000; single-stepped uprobes get 1/20 of it).
 */
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <sys/stat.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bench.h"
#include "bench_bpf.h"
#include "bench.skel.h"
#include "probe/kernel_features.h"
#include "lib/log.h"
#include "discover/probe_packs.h"
#include "discover/probe_placement.h"
#include "probe/probe_session.h"

/*
 * The probed functions. Each takes one pointer (a fake PJRT Args struct)
 * and returns; only the first instruction matters to the kernel.
 */
asm(".text\n"
    ".globl bench_fn_push\n.type bench_fn_push,@function\n"
    ".p2align 4\nbench_fn_push:\n"
    "	push %rbp\n	pop %rbp\n	ret\n"
    ".size bench_fn_push, .-bench_fn_push\n"
    ".globl bench_fn_endbr\n.type bench_fn_endbr,@function\n"
    ".p2align 4\nbench_fn_endbr:\n"
    "	endbr64\n	nop\n	ret\n"
    ".size bench_fn_endbr, .-bench_fn_endbr\n"
    ".globl bench_fn_mov\n.type bench_fn_mov,@function\n"
    ".p2align 4\nbench_fn_mov:\n"
    "	mov %rdi, %rax\n	ret\n"
    ".size bench_fn_mov, .-bench_fn_mov\n"
    ".globl bench_fn_cet\n.type bench_fn_cet,@function\n"
    ".p2align 4\nbench_fn_cet:\n"
    "	endbr64\n	push %rbp\n	mov %rsp, %rbp\n	pop %rbp\n	ret\n"
    ".size bench_fn_cet, .-bench_fn_cet\n"
    /* An optimised prologue: a load before the first push. */
    ".globl bench_fn_prologue\n.type bench_fn_prologue,@function\n"
    ".p2align 4\nbench_fn_prologue:\n"
    "	mov 8(%rdi), %rax\n	push %rbp\n	pop %rbp\n	ret\n"
    ".size bench_fn_prologue, .-bench_fn_prologue\n");

void bench_fn_push(void *arg);
void bench_fn_endbr(void *arg);
void bench_fn_mov(void *arg);
void bench_fn_cet(void *arg);
void bench_fn_prologue(void *arg);

typedef void (*probed_fn)(void *arg);

/* K_PROLOGUE_AT0 and K_PROLOGUE are one function, probed at +0 (where
 * acceltrace put it before it moved probes past single-stepping
 * prologues) and where probe_placement puts it now. */
enum kind { K_PUSH, K_ENDBR, K_MOV, K_CET, K_PROLOGUE_AT0, K_PROLOGUE, K__COUNT };

static const struct {
	const char *name;
	probed_fn fn;
	bool single_steps;
} kinds[K__COUNT] = {
	[K_PUSH] = { "push", bench_fn_push, false },
	[K_ENDBR] = { "endbr64", bench_fn_endbr, true },
	[K_MOV] = { "mov", bench_fn_mov, true },
	[K_CET] = { "cet", bench_fn_cet, false },
	[K_PROLOGUE_AT0] = { "prologue_at0", bench_fn_prologue, true },
	[K_PROLOGUE] = { "prologue", bench_fn_prologue, false },
};

/* What is attached for one measurement. */
enum config {
	C_NONE,
	C_FLOOR,		/* empty uprobe */
	C_FLOOR_RET,		/* empty uprobe + empty uretprobe */
	C_CALLBACK,		/* pack: OnReady callback entry (2 register ops) */
	C_ONREADY,		/* pack: PJRT_Event_OnReady (3 reads) */
	C_EXECUTE,		/* pack: PJRT_LoadedExecutable_Execute (paired, 15 ops) */
	C_OPS0,			/* no fetch ops, entry only */
	C_OPS0_RET,		/* no fetch ops, paired */
	C_DEREF8,		/* 8 reads, entry only */
	C_UNTRACED,		/* callback entry, this process not traced */
	C_UNTRACED_RET,		/* Execute (paired), this process not traced */
	C_OTHER_PID,		/* callback entry, attached for another process
				 * (record --pid of another): no trap here */
	C_PIECE_RING,		/* ring-buffer write alone */
	C_PIECE_READ0,		/* the read piece with 0 reads */
	C_PIECE_READ8,		/* 8 bpf_probe_read_user */
	C__COUNT,
};

static const char *const config_names[C__COUNT] = {
	[C_NONE] = "none", [C_FLOOR] = "floor", [C_FLOOR_RET] = "floor_ret",
	[C_CALLBACK] = "callback", [C_ONREADY] = "onready",
	[C_EXECUTE] = "execute", [C_OPS0] = "ops0", [C_OPS0_RET] = "ops0_ret",
	[C_DEREF8] = "deref8", [C_UNTRACED] = "untraced", [C_UNTRACED_RET] = "untraced_ret",
	[C_OTHER_PID] = "other_pid",
	[C_PIECE_RING] = "piece_ring", [C_PIECE_READ0] = "piece_read0",
	[C_PIECE_READ8] = "piece_read8",
};

/* Configurations per function kind: the full split on push only. */
static const enum config push_configs[] = {
	C_NONE, C_FLOOR, C_FLOOR_RET, C_CALLBACK, C_ONREADY, C_EXECUTE, C_OPS0,
	C_OPS0_RET, C_DEREF8, C_UNTRACED, C_UNTRACED_RET, C_OTHER_PID, C_PIECE_RING,
	C_PIECE_READ0, C_PIECE_READ8,
};
static const enum config other_configs[] = { C_NONE, C_FLOOR, C_CALLBACK };

/* A fake PJRT Args struct every pack fetch program can read. */
static uint64_t fake_options[8];
static uint64_t fake_events[8];
static uint64_t fake_args[16];

struct consumer {
	pthread_mutex_t lock;
	struct probe_session *ps[2];
	struct ring_buffer *pieces;
	volatile bool stop;
	volatile uint64_t records;
};

static struct consumer cons = { .lock = PTHREAD_MUTEX_INITIALIZER };

static int count_record(void *ctx, const void *data, size_t size)
{
	cons.records++;
	return 0;
}

static int count_piece(void *ctx, void *data, size_t size)
{
	cons.records++;
	return 0;
}

/* Drains every ring on another CPU, so producers never find one full. */
static void *consumer_main(void *arg)
{
	if (bench_ncpus() > 1)
		bench_pin(1);
	while (!cons.stop) {
		pthread_mutex_lock(&cons.lock);
		for (int i = 0; i < 2; i++)
			if (cons.ps[i])
				probe_session__drain(cons.ps[i]);
		if (cons.pieces)
			ring_buffer__consume(cons.pieces);
		pthread_mutex_unlock(&cons.lock);
		usleep(200);
	}
	return NULL;
}

static void set_session(int slot, struct probe_session *ps)
{
	pthread_mutex_lock(&cons.lock);
	cons.ps[slot] = ps;
	pthread_mutex_unlock(&cons.lock);
}

static double time_calls(probed_fn fn, long n)
{
	volatile probed_fn f = fn;
	uint64_t t0;

	for (long i = 0; i < n / 100 + 10; i++)
		f(fake_args);
	t0 = bench_now_ns();
	for (long i = 0; i < n; i++)
		f(fake_args);
	return (double)(bench_now_ns() - t0) / n;
}

static double time_preads(int fd, long n)
{
	char c;
	uint64_t t0;

	for (long i = 0; i < n / 100 + 10; i++)
		if (pread(fd, &c, 1, 0) != 1)
			return -1;
	t0 = bench_now_ns();
	for (long i = 0; i < n; i++)
		if (pread(fd, &c, 1, 0) != 1)
			return -1;
	return (double)(bench_now_ns() - t0) / n;
}

struct rt_ctx {
	struct probe_session *ps;
	struct bench *skel;
	struct rt_probe_spec specs[C__COUNT];
	bool have_spec[C__COUNT];
};

static void build_specs(struct rt_ctx *rc)
{
	const struct rt_pack_entry *e;
	struct rt_probe_spec *s;

	rt_pack_entry__spec(rt_pack_callback_entry(), &rc->specs[C_CALLBACK]);
	rt_pack_entry__spec(rt_pack_callback_entry(), &rc->specs[C_UNTRACED]);
	rc->have_spec[C_CALLBACK] = rc->have_spec[C_UNTRACED] = true;
	e = rt_pack_entry_named("PJRT_Event_OnReady");
	if (e) {
		rt_pack_entry__spec(e, &rc->specs[C_ONREADY]);
		rc->have_spec[C_ONREADY] = true;
	}
	e = rt_pack_entry_named("PJRT_LoadedExecutable_Execute");
	if (e) {
		rt_pack_entry__spec(e, &rc->specs[C_EXECUTE]);
		rt_pack_entry__spec(e, &rc->specs[C_UNTRACED_RET]);
		rc->have_spec[C_EXECUTE] = rc->have_spec[C_UNTRACED_RET] = true;
	}
	rc->have_spec[C_OPS0] = true;		/* all zero */
	rc->specs[C_OPS0_RET].flags = RT_SPEC_RETURN;
	rc->have_spec[C_OPS0_RET] = true;
	s = &rc->specs[C_DEREF8];
	s->n_ops = 8;
	for (int i = 0; i < 8; i++)
		s->ops[i] = (struct at_fetch_op){ .src = FETCH_ARG0, .size = 8,
						  .flags = FETCH_DEREF, .offset = 8 * i };
	rc->have_spec[C_DEREF8] = true;
}

/* Attaches @cfg at (path, off); links go to @links. 0 or -errno. */
static int attach(struct rt_ctx *rc, enum config cfg, const char *path,
		  uint64_t off, struct bpf_link *links[2], int *probe_id)
{
	LIBBPF_OPTS(bpf_uprobe_opts, uo);
	struct bpf_program *entry = NULL;
	int id;

	*probe_id = -1;
	switch (cfg) {
	case C_NONE:
		return 0;
	case C_FLOOR:
	case C_FLOOR_RET:
		entry = rc->skel->progs.floor_entry;
		break;
	case C_PIECE_RING:
		entry = rc->skel->progs.piece_ringbuf;
		break;
	case C_PIECE_READ0:
	case C_PIECE_READ8:
		rc->skel->bss->piece_reads = cfg == C_PIECE_READ8 ? 8 : 0;
		entry = rc->skel->progs.piece_read;
		break;
	case C_OTHER_PID:
		/* Traced, so that a trap would be counted and recorded; the
		 * parent (alive, never calling it) is the process asked for. */
		probe_session__trace_pid(rc->ps, getpid(), TRACED_TARGET);
		id = probe_session__attach_runtime(rc->ps, &rc->specs[C_CALLBACK], path, off,
						   getppid());
		if (id < 0)
			return id;
		*probe_id = id;
		return 0;
	default:
		if (!rc->have_spec[cfg])
			return -ENOENT;
		if (cfg == C_UNTRACED || cfg == C_UNTRACED_RET)
			probe_session__untrace_pid(rc->ps, getpid());
		else
			probe_session__trace_pid(rc->ps, getpid(), TRACED_TARGET);
		id = probe_session__attach_runtime(rc->ps, &rc->specs[cfg], path, off, -1);
		if (id < 0)
			return id;
		*probe_id = id;
		return 0;
	}
	links[0] = bpf_program__attach_uprobe_opts(entry, -1, path, off, &uo);
	if (!links[0])
		return -errno;
	if (cfg == C_FLOOR_RET) {
		uo.retprobe = true;
		links[1] = bpf_program__attach_uprobe_opts(rc->skel->progs.floor_return,
							   -1, path, off, &uo);
		if (!links[1])
			return -errno;
	}
	return 0;
}

static void detach(struct rt_ctx *rc, struct bpf_link *links[2], int probe_id)
{
	bpf_link__destroy(links[0]);
	bpf_link__destroy(links[1]);
	links[0] = links[1] = NULL;
	if (probe_id >= 0)
		probe_session__detach_runtime(rc->ps, probe_id);
}

/*
 * bpf_stats cross-check: the kernel's own count of a program's run time
 * (kernel.bpf_stats_enabled, here through BPF_ENABLE_STATS while the
 * returned fd is open). Programs are found among this process's own fds,
 * by name, so programs other processes load are never read.
 */
static int own_prog_fd(const char *name)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int found = -1;
	__u32 best_id = 0;

	/* Several of our objects may hold one: the latest loaded is the
	 * one just attached. */
	while (d && (e = readdir(d))) {
		struct bpf_prog_info info = {};
		__u32 len = sizeof(info);
		int fd = atoi(e->d_name);

		if (e->d_name[0] < '0' || e->d_name[0] > '9')
			continue;
		if (!bpf_obj_get_info_by_fd(fd, &info, &len) &&
		    !strcmp(info.name, name) && info.id > best_id) {
			found = fd;
			best_id = info.id;
		}
	}
	if (d)
		closedir(d);
	return found;
}

/*
 * ns per run of the programs @cfg runs, over @calls calls with it attached:
 * the benchmark's own by name, acceltrace's as the probe session says (a
 * detail probe runs the switch-first programs).
 */
static void stats_pass(struct rt_ctx *rc, enum config cfg, const char *path,
		       uint64_t off, long calls)
{
	static const char *const own_progs[] = {
		[C_FLOOR] = "floor_entry",
		[C_PIECE_RING] = "piece_ringbuf",
	};
	struct bpf_link *links[2] = {};
	uint64_t ns0[2], cnt0[2], ns1, cnt1;
	int id, fds[2] = { -1, -1 };

	if (attach(rc, cfg, path, off, links, &id)) {
		detach(rc, links, id);
		return;
	}
	if (cfg == C_FLOOR || cfg == C_PIECE_RING) {
		fds[0] = own_prog_fd(own_progs[cfg]);
	} else {
		__u32 flags = rc->specs[cfg].flags;

		fds[0] = probe_session__runtime_prog_fd(rc->ps, flags, false);
		if (flags & RT_SPEC_RETURN)
			fds[1] = probe_session__runtime_prog_fd(rc->ps, flags, true);
	}
	for (int i = 0; i < 2; i++)
		bench_prog_stats(fds[i], &ns0[i], &cnt0[i]);
	time_calls(bench_fn_push, calls);
	for (int i = 0; i < 2; i++) {
		if (fds[i] < 0)
			continue;
		bench_prog_stats(fds[i], &ns1, &cnt1);
		if (cnt1 > cnt0[i])
			printf("BENCH stats.%s.%s ns/run %.1f\n", config_names[cfg],
			       i ? "return" : "entry",
			       (double)(ns1 - ns0[i]) / (cnt1 - cnt0[i]));
	}
	detach(rc, links, id);
}

struct kind_state {
	uint64_t off;			/* attach offset in the file */
	struct bench_metric m[C__COUNT];
};

static int run_uprobes(struct rt_ctx *rc, const struct features *f, int reps,
		       long calls)
{
	struct probe_session_opts opts = { .sz = sizeof(opts) };
	static struct kind_state ks[K__COUNT];
	/* Per-probe perf uprobes, as the bare floors are: each row compares
	 * one dispatch path (bench_attach.c times uprobe_multi's links). */
	static struct features g;
	char path[PATH_MAX];
	char name[96];
	int err;

	g = *f;
	g.r[FEAT_UPROBE_MULTI].available = false;
	opts.features = &g;
	rc->ps = probe_session__open(&opts, count_record, NULL);
	if (!rc->ps) {
		fprintf(stderr, "bench_probe: opening acceltrace's BPF object failed: %s\n",
			strerror(errno));
		return -errno;
	}
	set_session(0, rc->ps);
	build_specs(rc);

	for (int k = 0; k < K__COUNT; k++) {
		struct probe_placement pl;

		err = bench_file_offset((void *)kinds[k].fn, path, sizeof(path), &ks[k].off);
		if (err) {
			fprintf(stderr, "bench_probe: no file offset for %s\n", kinds[k].name);
			return err;
		}
		/* Where acceltrace's placement puts the probe, from the code. */
		err = probe_placement__decide((const void *)kinds[k].fn, 16, &pl);
		if (err)
			return err;
		if (k == K_CET || k == K_PROLOGUE)
			ks[k].off += pl.offset;
		if (k == K_CET || k == K_PROLOGUE)
			fprintf(stderr, "bench_probe: %-8s placed at +%u on %s (%s)\n",
				kinds[k].name, pl.offset, pl.insn,
				pl.single_steps ? "single-stepped" : "emulated");
		else
			fprintf(stderr, "bench_probe: %-8s probe at +0 on its first instruction\n",
				kinds[k].name);
		for (int c = 0; c < C__COUNT; c++) {
			snprintf(name, sizeof(name), "up.%s.%s", kinds[k].name, config_names[c]);
			ks[k].m[c].name = strdup(name);
			ks[k].m[c].unit = "ns/call";
		}
	}

	for (int r = 0; r < reps; r++) {
		for (int k = 0; k < K__COUNT; k++) {
			const enum config *cfgs = k == K_PUSH ? push_configs : other_configs;
			size_t n = k == K_PUSH ? sizeof(push_configs) / sizeof(push_configs[0]) :
				   sizeof(other_configs) / sizeof(other_configs[0]);
			long nc = kinds[k].single_steps ? calls / 20 : calls;

			/* Rotate the order so no configuration always runs first. */
			for (size_t i = 0; i < n; i++) {
				enum config c = cfgs[(i + r) % n];
				struct bpf_link *links[2] = {};
				int id;

				err = attach(rc, c, path, ks[k].off, links, &id);
				if (err) {
					fprintf(stderr, "bench_probe: attaching %s on %s failed: %s\n",
						config_names[c], kinds[k].name, strerror(-err));
					detach(rc, links, id);
					return err;
				}
				bench_add(&ks[k].m[c], time_calls(kinds[k].fn, nc));
				detach(rc, links, id);
			}
		}
	}
	for (int k = 0; k < K__COUNT; k++)
		for (int c = 0; c < C__COUNT; c++)
			if (ks[k].m[c].n)
				bench_print(&ks[k].m[c]);

	/* The cross-check, with run-time statistics on (they cost a clock
	 * read per run, so never during the timed repetitions above). */
	{
		static const enum config cfgs[] = {
			C_FLOOR, C_OPS0, C_CALLBACK, C_ONREADY, C_DEREF8, C_EXECUTE,
			C_UNTRACED, C_UNTRACED_RET, C_PIECE_RING,
		};
		int stats_fd = bpf_enable_stats(BPF_STATS_RUN_TIME);

		if (stats_fd < 0) {
			fprintf(stderr, "bench_probe: no BPF run-time statistics: %s\n",
				strerror(errno));
			return 0;
		}
		for (size_t i = 0; i < sizeof(cfgs) / sizeof(cfgs[0]); i++)
			stats_pass(rc, cfgs[i], path, ks[K_PUSH].off, calls / 4);
		close(stats_fd);
	}
	return 0;
}

/* Run time per run of the syscall programs (the cross-check). */
static void syscall_prog_stats(const char *label, const char *const *names,
			       int n, int fd, long calls)
{
	uint64_t ns0[2], cnt0[2], ns1, cnt1;
	int fds[2];

	for (int i = 0; i < n; i++) {
		fds[i] = own_prog_fd(names[i]);
		bench_prog_stats(fds[i], &ns0[i], &cnt0[i]);
	}
	time_preads(fd, calls);
	for (int i = 0; i < n; i++) {
		bench_prog_stats(fds[i], &ns1, &cnt1);
		if (fds[i] >= 0 && cnt1 > cnt0[i])
			printf("BENCH stats.%s.%s ns/run %.1f\n", label,
			       i ? "exit" : "enter", (double)(ns1 - ns0[i]) / (cnt1 - cnt0[i]));
	}
}

static void syscall_stats(const struct features *f, struct bench *skel, int fd,
			  long calls)
{
	static const char *const floor_progs[] = { "floor_sys_enter", "floor_sys_exit" };
	static const char *const at_progs[] = { "sc_enter_pread6", "sc_exit_pread64" };
	static const char *const core_prog[] = { "piece_fileid_co" };
	static const char *const btf_prog[] = { "piece_fileid_bt" };
	struct probe_session_opts opts = { .sz = sizeof(opts), .features = f };
	struct bpf_link *l1, *l2;
	struct probe_session *ps;
	int stats_fd = bpf_enable_stats(BPF_STATS_RUN_TIME);

	if (stats_fd < 0)
		return;
	l1 = bpf_program__attach(skel->progs.floor_sys_enter);
	l2 = bpf_program__attach(skel->progs.floor_sys_exit);
	syscall_prog_stats("tp_floor", floor_progs, 2, fd, calls);
	bpf_link__destroy(l1);
	bpf_link__destroy(l2);
	l1 = bpf_program__attach(skel->progs.piece_fileid_core);
	syscall_prog_stats("tp_fileid_core", core_prog, 1, fd, calls);
	bpf_link__destroy(l1);
	l1 = bpf_program__attach(skel->progs.piece_fileid_btf);
	syscall_prog_stats("tp_fileid_btf", btf_prog, 1, fd, calls);
	bpf_link__destroy(l1);
	ps = probe_session__open(&opts, count_record, NULL);
	if (!ps)
		fprintf(stderr, "bench_probe: stats: opening a session failed: %s\n",
			strerror(errno));
	if (ps && !probe_session__attach_kernel(ps)) {
		set_session(1, ps);
		probe_session__trace_pid(ps, getpid(), TRACED_TARGET);
		syscall_prog_stats("tp_traced", at_progs, 2, fd, calls);
		probe_session__untrace_pid(ps, getpid());
		syscall_prog_stats("tp_untraced", at_progs, 2, fd, calls);
		usleep(2000);
		set_session(1, NULL);
	}
	probe_session__free(ps);
	close(stats_fd);
}

static int run_syscalls(const struct features *f, struct bench *skel, int reps,
			long calls)
{
	struct bench_metric m_none = { "tp.pread64.none", "ns/call" },
			    m_floor = { "tp.pread64.floor", "ns/call" },
			    m_traced = { "tp.pread64.traced", "ns/call" },
			    m_untraced = { "tp.pread64.untraced", "ns/call" },
			    m_floor1 = { "tp.pread64.floor_enter", "ns/call" },
			    m_core = { "tp.pread64.piece_fileid_core", "ns/call" },
			    m_btf = { "tp.pread64.piece_fileid_btf", "ns/call" };
	struct { struct bpf_program *prog; struct bench_metric *m; } pieces[] = {
		{ skel->progs.floor_sys_enter, &m_floor1 },
		{ skel->progs.piece_fileid_core, &m_core },
		{ skel->progs.piece_fileid_btf, &m_btf },
	};
	struct probe_session_opts opts = { .sz = sizeof(opts), .features = f };
	char tmpl[] = "/tmp/acceltrace-bench-XXXXXX";
	uint64_t losses[LOSS_KIND_MAX], emitted = 0;
	char block[4096];
	int fd, err = 0;

	fd = mkstemp(tmpl);
	if (fd < 0)
		return -errno;
	unlink(tmpl);
	memset(block, 'a', sizeof(block));
	if (write(fd, block, sizeof(block)) != sizeof(block)) {
		close(fd);
		return -EIO;
	}
	for (int r = 0; r < reps && !err; r++) {
		struct bpf_link *enter = NULL, *exit_ = NULL;
		struct probe_session *ps;

		if (r & 1)
			bench_add(&m_none, time_preads(fd, calls));
		enter = bpf_program__attach(skel->progs.floor_sys_enter);
		exit_ = bpf_program__attach(skel->progs.floor_sys_exit);
		if (!enter || !exit_) {
			err = -errno;
			fprintf(stderr, "bench_probe: attaching the syscall floor failed\n");
		} else {
			bench_add(&m_floor, time_preads(fd, calls));
		}
		bpf_link__destroy(enter);
		bpf_link__destroy(exit_);
		if (!(r & 1))
			bench_add(&m_none, time_preads(fd, calls));
		if (err)
			break;
		/* Enter-only programs: the floor and the file-lookup pieces. */
		for (size_t i = 0; i < sizeof(pieces) / sizeof(pieces[0]) && !err; i++) {
			struct bpf_link *l = bpf_program__attach(pieces[i].prog);

			if (!l) {
				err = -errno;
				break;
			}
			bench_add(pieces[i].m, time_preads(fd, calls));
			bpf_link__destroy(l);
		}
		if (err)
			break;

		ps = probe_session__open(&opts, count_record, NULL);
		if (!ps) {
			err = -errno;
			break;
		}
		set_session(1, ps);
		err = probe_session__attach_kernel(ps);
		if (!err) {
			probe_session__trace_pid(ps, getpid(), TRACED_TARGET);
			bench_add(&m_traced, time_preads(fd, calls));
			probe_session__untrace_pid(ps, getpid());
			bench_add(&m_untraced, time_preads(fd, calls));
			probe_session__losses(ps, losses);
			emitted += probe_session__emitted(ps, EV_SYSCALL);
			if (losses[LOSS_RINGBUF_FULL] || losses[LOSS_PENDING_FULL])
				fprintf(stderr, "bench_probe: syscall records lost: %llu (ring), %llu (table)\n",
					(unsigned long long)losses[LOSS_RINGBUF_FULL],
					(unsigned long long)losses[LOSS_PENDING_FULL]);
		}
		usleep(2000);
		set_session(1, NULL);
		probe_session__free(ps);
	}
	if (!err)
		syscall_stats(f, skel, fd, calls / 4);
	close(fd);
	if (err)
		return err;
	fprintf(stderr, "bench_probe: %llu syscall records emitted\n",
		(unsigned long long)emitted);
	bench_print(&m_none);
	bench_print(&m_floor);
	bench_print(&m_traced);
	bench_print(&m_untraced);
	bench_print(&m_floor1);
	bench_print(&m_core);
	bench_print(&m_btf);
	return 0;
}

int main(int argc, char **argv)
{
	int reps = bench_env("BENCH_REPS", 5);
	long calls = bench_env("BENCH_CALLS", 400000);
	struct rt_ctx rc = {};
	struct features f;
	char missing[512];
	pthread_t th;
	uint64_t losses[LOSS_KIND_MAX];
	int err;

	if (geteuid() != 0) {
		fprintf(stderr, "bench_probe: needs root (loads BPF programs)\n");
		return 77;
	}
	if (reps > BENCH_MAX_REPS)
		reps = BENCH_MAX_REPS;
	log_route_libbpf();
	features__probe(&f);
	if (!features__can_run(&f, missing, sizeof(missing))) {
		fprintf(stderr, "bench_probe: acceltrace cannot run here: %s\n", missing);
		return 77;
	}
	fake_args[0] = sizeof(fake_args);
	fake_args[2] = 0x1000;			/* executable */
	fake_args[3] = (uint64_t)(uintptr_t)fake_options;
	fake_args[4] = 0x2000;			/* user_arg / num_devices */
	fake_args[5] = 4;
	fake_args[6] = 1;
	fake_args[8] = (uint64_t)(uintptr_t)fake_events;
	fake_options[6] = 42;			/* launch_id @48 */
	for (int i = 0; i < 8; i++)
		fake_events[i] = 0x3000 + i;

	rc.skel = bench__open_and_load();
	if (!rc.skel) {
		fprintf(stderr, "bench_probe: loading the benchmark's BPF object failed\n");
		return 1;
	}
	cons.pieces = ring_buffer__new(bpf_map__fd(rc.skel->maps.piece_ring),
				       count_piece, NULL, NULL);
	bench_pin(0);
	pthread_create(&th, NULL, consumer_main, NULL);

	err = run_uprobes(&rc, &f, reps, calls);
	if (!err) {
		probe_session__losses(rc.ps, losses);
		fprintf(stderr, "bench_probe: runtime records emitted %llu, lost %llu (ring) %llu (fetch faults)\n",
			(unsigned long long)probe_session__emitted(rc.ps, EV_RT_CALL),
			(unsigned long long)losses[LOSS_RINGBUF_FULL],
			(unsigned long long)losses[LOSS_FETCH_FAULT]);
		printf("BENCH up.lost count %llu\n",
		       (unsigned long long)(losses[LOSS_RINGBUF_FULL] +
					    losses[LOSS_FETCH_FAULT] +
					    rc.skel->bss->piece_drops));
		err = run_syscalls(&f, rc.skel, reps, calls);
	}

	cons.stop = true;
	pthread_join(th, NULL);
	set_session(0, NULL);
	probe_session__free(rc.ps);
	ring_buffer__free(cons.pieces);
	bench__destroy(rc.skel);
	if (err) {
		fprintf(stderr, "bench_probe: %s\n", strerror(-err));
		return 1;
	}
	return 0;
}
