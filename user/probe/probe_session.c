// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Loading and driving acceltrace's BPF object. Attach flavours are chosen from
 * what the kernel offers (kernel_features) with bpf_program__set_autoload,
 * never with #if; ring buffers are sharded so that at most a few CPUs contend
 * for one; runtime probes are attached as libraries are found (their links:
 * runtime_links.c).
 * Reading the open-call tables and forgetting a dead process's entries is
 * open_calls.c's; struct probe_session is in probe_session_internal.h.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#define LOG_CONTEXT "probes"
#include "lib/clock.h"
#include "lib/log.h"
#include "probe/bpf_links.h"
#include "probe/probe_session.h"
#include "probe/probe_session_internal.h"
#include "acceltrace.skel.h"

#define DEFAULT_RING_BYTES (8ull << 20)

#define TRACED_TABLE_BYTES ((size_t)AT_PID_SPACE)

const char *loss_kind_name(enum loss_kind kind)
{
	switch (kind) {
	case LOSS_RINGBUF_FULL: return "ring buffer full";
	case LOSS_PENDING_FULL: return "open-call table full";
	case LOSS_FETCH_FAULT: return "unreadable probe arguments";
	case LOSS_FD_TABLE_FULL: return "device fd table full";
	case LOSS_TRACED_FULL: return "traced-process table full";
	case LOSS_RETURN_UNMATCHED: return "returns without their entry";
	case LOSS_AGG_FULL: return "per-process aggregate table full";
	case LOSS_MEM_TABLE_FULL: return "device-memory table full";
	default: return "?";
	}
}

/* The clock is read this often against a poll's deadline: a vDSO call per
 * record would be a third of the record's cost. */
#define POLL_CLOCK_EVERY 64
#define DEFAULT_POLL_BUDGET_NS (20 * 1000000ull)

static int on_record(void *ctx, void *data, size_t size)
{
	struct probe_session *ps = ctx;
	int err = ps->fn ? ps->fn(ps->ctx, data, size) : 0;

	if (err || !ps->poll_deadline_ns || ++ps->poll_records % POLL_CLOCK_EVERY)
		return err;
	if (mono_ns() < ps->poll_deadline_ns)
		return 0;
	/* libbpf has already moved past this record: the next poll starts
	 * at the one after. */
	ps->poll_cut = true;
	return -ECANCELED;
}

/* Syscall flavour: per-syscall tracepoints, or raw sys_enter/sys_exit. */
static void choose_syscall_programs(struct probe_session *ps, bool tracepoints)
{
	struct bpf_program *p;

	bpf_object__for_each_program(p, ps->skel->obj) {
		const char *name = bpf_program__name(p);

		if (!strncmp(name, "sc_enter_", 9) || !strncmp(name, "sc_exit_", 8))
			bpf_program__set_autoload(p, tracepoints);
		else if (!strncmp(name, "sc_raw_", 7))
			bpf_program__set_autoload(p, !tracepoints);
	}
}

/* Task, sched and irq programs: the tp_btf or raw_tp twin of each. */
static void choose_twin_programs(struct probe_session *ps, const char *suffix_set[],
				 size_t n, enum probe_mechanism mech, bool enable)
{
	struct bpf_program *p;

	bpf_object__for_each_program(p, ps->skel->obj) {
		const char *name = bpf_program__name(p);
		bool btf = !strncmp(name, "tp_btf_", 7);
		bool raw = !strncmp(name, "raw_tp_", 7);
		const char *rest;

		if (!btf && !raw)
			continue;
		rest = name + 7;
		for (size_t i = 0; i < n; i++) {
			if (strcmp(rest, suffix_set[i]))
				continue;
			bpf_program__set_autoload(p, enable &&
				((btf && mech == MECH_TP_BTF) ||
				 (raw && mech == MECH_RAW_TP)));
		}
	}
}

static int fill_syscall_numbers(struct probe_session *ps)
{
	static const struct { long nr; __u32 sc; } table[] = {
		{ SYS_read, SC_READ },
		{ SYS_pread64, SC_PREAD64 },
		{ SYS_readv, SC_READV },
		{ SYS_preadv, SC_PREADV },
		{ SYS_ioctl, SC_IOCTL },
		{ SYS_openat, SC_OPENAT },
		{ SYS_close, SC_CLOSE },
		{ SYS_eventfd2, SC_EVENTFD },
		{ SYS_mmap, SC_MMAP },
		{ SYS_mprotect, SC_MPROTECT },
	};
	int fd = bpf_map__fd(ps->skel->maps.sc_by_nr);

	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
		__u32 key = table[i].nr;

		if (bpf_map_update_elem(fd, &key, &table[i].sc, BPF_ANY))
			return -errno;
	}
	return 0;
}

static int fill_dev_prefixes(struct probe_session *ps,
			     const struct probe_session_opts *opts)
{
	int fd = bpf_map__fd(ps->skel->maps.dev_prefixes);

	if (opts->n_dev_prefixes > AT_MAX_DEV_PREFIXES)
		return -E2BIG;
	for (__u32 i = 0; i < opts->n_dev_prefixes; i++) {
		struct dev_prefix p = {};
		size_t len = strlen(opts->dev_prefixes[i]);

		if (!len || len > AT_DEV_PREFIX_LEN)
			return -EINVAL;
		p.len = len;
		memcpy(p.bytes, opts->dev_prefixes[i], len);
		if (bpf_map_update_elem(fd, &i, &p, BPF_ANY))
			return -errno;
	}
	return 0;
}

static int create_rings(struct probe_session *ps, uint64_t ring_bytes)
{
	int outer = bpf_map__fd(ps->skel->maps.rings);

	for (uint32_t i = 0; i < ps->nr_rings; i++) {
		int fd = i ? bpf_map_create(BPF_MAP_TYPE_RINGBUF, "at_ring", 0, 0,
					    ring_bytes, NULL) : ps->ring_fds[0];

		if (fd < 0) {
			log_err("creating ring buffer shard %u (%llu bytes) failed: %s",
				i, (unsigned long long)ring_bytes, strerror(-fd));
			return fd;
		}
		ps->ring_fds[i] = fd;
		if (bpf_map_update_elem(outer, &i, &fd, BPF_ANY))
			return -errno;
		if (i == 0)
			ps->rb = ring_buffer__new(fd, on_record, ps, NULL);
		else if (ps->rb && ring_buffer__add(ps->rb, fd, on_record, ps))
			return -errno;
		if (!ps->rb)
			return -errno;
	}
	return 0;
}

static bool power_of_two(uint64_t v)
{
	return v && !(v & (v - 1));
}

/* Device memory's live-allocation table and a process's share of it
 * (probe_session_opts). */
static int size_mem_live(struct probe_session *ps, const struct probe_session_opts *opts)
{
	uint32_t max = opts->mem_live_max ? opts->mem_live_max : AT_MEM_LIVE_MAX;
	uint32_t proc_max = opts->mem_live_proc_max ? opts->mem_live_proc_max : max / 4;

	if (max < 64 || max > (1u << 24)) {
		log_err("a live-allocation table of %u entries: from 64 to %u", max, 1u << 24);
		return -EINVAL;
	}
	ps->skel->rodata->cfg_mem_live_proc_max = proc_max < max ? proc_max : max;
	return bpf_map__set_max_entries(ps->skel->maps.mem_live, max);
}

/* The traced-process table is written through a shared mapping: a byte
 * store, where a map update would be a syscall. */
static int map_shared_tables(struct probe_session *ps)
{
	void *mem = mmap(NULL, TRACED_TABLE_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED,
			 bpf_map__fd(ps->skel->maps.traced_table), 0);

	if (mem == MAP_FAILED)
		return -errno;
	ps->traced = mem;
	/* The calls in progress, read at window edges: a scan of a few MB,
	 * where reading the elements through the maps would be a syscall
	 * each. */
	mem = mmap(NULL, ps->n_slots * sizeof(struct sys_slot), PROT_READ, MAP_SHARED,
		   bpf_map__fd(ps->skel->maps.sys_slots), 0);
	if (mem == MAP_FAILED)
		return -errno;
	ps->sys_slots = mem;
	mem = mmap(NULL, ps->n_slots * sizeof(struct rt_slot), PROT_READ | PROT_WRITE,
		   MAP_SHARED, bpf_map__fd(ps->skel->maps.rt_slots), 0);
	if (mem == MAP_FAILED)
		return -errno;
	ps->rt_slots = mem;
	return 0;
}

/* Before any program attaches: until then no one is in scope. */
static int fill_scope_cgroup(struct probe_session *ps, int cgroup_fd)
{
	__u32 zero = 0, fd = cgroup_fd;

	if (bpf_map_update_elem(bpf_map__fd(ps->skel->maps.scope_cgroup), &zero, &fd, BPF_ANY))
		return -errno;
	return 0;
}

struct probe_session *probe_session__open(const struct probe_session_opts *opts,
					  probe_record_fn fn, void *ctx)
{
	static const char *task_progs[] = { "newtask", "rename", "exit", "exec" };
	static const char *switch_progs[] = { "switch" };
	static const char *irq_progs[] = { "irq_entry", "irq_exit" };
	struct probe_session *ps;
	uint64_t ring_bytes;
	long ncpus;
	int err;

	if (!opts || !opts->features) {
		errno = EINVAL;
		return NULL;
	}
	ps = calloc(1, sizeof(*ps));
	if (!ps)
		return NULL;
	for (int i = 0; i < AT_MAX_RINGS; i++)
		ps->ring_fds[i] = -1;
	ps->fn = fn;
	ps->ctx = ctx;
	ps->poll_budget_ns = opts->poll_budget_ns ? opts->poll_budget_ns : DEFAULT_POLL_BUDGET_NS;
	for (enum probe_class pc = 0; pc < PROBE__COUNT; pc++)
		ps->mech[pc] = features__choose(opts->features, pc).mech;
	ps->uprobe_multi = opts->features->r[FEAT_UPROBE_MULTI].available;
	probe_session__set_pid_scope(ps, opts->scope_pids, opts->n_scope_pids);

	ring_bytes = opts->ring_bytes ? opts->ring_bytes : DEFAULT_RING_BYTES;
	if (!power_of_two(ring_bytes) || ring_bytes < (uint64_t)getpagesize()) {
		log_err("ring buffer size %llu is not a power of two of at least a page",
			(unsigned long long)ring_bytes);
		err = -EINVAL;
		goto err_out;
	}
	ncpus = libbpf_num_possible_cpus();
	if (ncpus <= 0)
		ncpus = 1;

	ps->skel = acceltrace__open();
	if (!ps->skel) {
		err = -errno;
		log_err("opening the BPF object failed: %s", strerror(-err));
		goto err_out;
	}
	ps->n_slots = opts->call_slots ? opts->call_slots : AT_CALL_SLOTS;
	if (!power_of_two(ps->n_slots) || ps->n_slots > AT_CALL_SLOTS) {
		log_err("%u call slots: not a power of two up to %u", ps->n_slots,
			AT_CALL_SLOTS);
		err = -EINVAL;
		goto err_out;
	}
	ps->skel->rodata->cfg_slot_mask = ps->n_slots - 1;
	err = size_mem_live(ps, opts);
	if (err)
		goto err_out;
	bpf_map__set_max_entries(ps->skel->maps.sys_slots, ps->n_slots);
	bpf_map__set_max_entries(ps->skel->maps.rt_slots, ps->n_slots);
	ps->skel->rodata->cfg_whole_host = opts->whole_host;
	ps->skel->rodata->cfg_children = opts->children;
	ps->skel->rodata->cfg_cgroup_scoped = opts->cgroup_scoped;
	ps->skel->rodata->cfg_self_pid = getpid();
	ps->skel->rodata->cfg_cpus_per_ring = opts->cpus_per_ring ? opts->cpus_per_ring : 4;
	ps->nr_rings = (ncpus + ps->skel->rodata->cfg_cpus_per_ring - 1) /
		       ps->skel->rodata->cfg_cpus_per_ring;
	if (ps->nr_rings > AT_MAX_RINGS)
		ps->nr_rings = AT_MAX_RINGS;
	ps->skel->rodata->cfg_nr_rings = ps->nr_rings;
	/* Wake the consumer at an eighth full: room for bursts meanwhile. */
	ps->skel->rodata->cfg_wakeup_bytes = ring_bytes / 8;
	bpf_map__set_max_entries(ps->skel->maps.rings, ps->nr_rings);
	/* The first shard doubles as the outer map's inner-map template. */
	ps->ring_fds[0] = bpf_map_create(BPF_MAP_TYPE_RINGBUF, "at_ring", 0, 0,
					 ring_bytes, NULL);
	if (ps->ring_fds[0] < 0) {
		err = ps->ring_fds[0];
		log_err("creating a %llu-byte ring buffer failed: %s",
			(unsigned long long)ring_bytes, strerror(-err));
		goto err_out;
	}
	bpf_map__set_inner_map_fd(ps->skel->maps.rings, ps->ring_fds[0]);

	if (ps->mech[PROBE_FILE_IO] == MECH_NONE || ps->mech[PROBE_SCHED] == MECH_NONE ||
	    ps->mech[PROBE_RUNTIME] == MECH_NONE) {
		log_err("this kernel lacks a mechanism acceltrace needs; run 'acceltrace doctor'");
		err = -EOPNOTSUPP;
		goto err_out;
	}
	choose_syscall_programs(ps, ps->mech[PROBE_FILE_IO] == MECH_SYSCALL_TP);
	choose_twin_programs(ps, task_progs, 4, ps->mech[PROBE_SCHED], true);
	choose_twin_programs(ps, switch_progs, 1, ps->mech[PROBE_SCHED], opts->sched_switch);
	choose_twin_programs(ps, irq_progs, 2, ps->mech[PROBE_IRQ], opts->irqs);
	/* io_uring's tracepoints are classic ones: they need tracefs. */
	bpf_program__set_autoload(ps->skel->progs.uring_submit,
				  opts->io_uring && ps->mech[PROBE_FILE_IO] == MECH_SYSCALL_TP);
	bpf_program__set_autoload(ps->skel->progs.uring_complete,
				  opts->io_uring && ps->mech[PROBE_FILE_IO] == MECH_SYSCALL_TP);

	runtime_links__prepare_load(ps);
	err = acceltrace__load(ps->skel);
	if (err) {
		log_err("loading the BPF programs failed: %s (run with -v for the verifier log)",
			strerror(-err));
		goto err_out;
	}
	err = map_shared_tables(ps);
	if (!err)
		err = fill_syscall_numbers(ps);
	if (!err)
		err = fill_dev_prefixes(ps, opts);
	if (!err && opts->cgroup_scoped)
		err = fill_scope_cgroup(ps, opts->cgroup_fd);
	if (err) {
		log_err("configuring the BPF maps failed: %s", strerror(-err));
		goto err_out;
	}
	err = create_rings(ps, ring_bytes);
	if (err)
		goto err_out;
	return ps;

err_out:
	probe_session__free(ps);
	errno = -err;
	return NULL;
}

void probe_session__free(struct probe_session *ps)
{
	if (!ps)
		return;
	/* One grace period for all of them, not one each. */
	runtime_links__release_all(ps, ps->kernel_links, ps->n_kernel_links);
	if (ps->traced)
		munmap((void *)ps->traced, TRACED_TABLE_BYTES);
	if (ps->sys_slots)
		munmap((void *)ps->sys_slots, ps->n_slots * sizeof(struct sys_slot));
	if (ps->rt_slots)
		munmap((void *)ps->rt_slots, ps->n_slots * sizeof(struct rt_slot));
	ring_buffer__free(ps->rb);
	for (int i = 0; i < AT_MAX_RINGS; i++)
		if (ps->ring_fds[i] >= 0)
			close(ps->ring_fds[i]);
	acceltrace__destroy(ps->skel);
	free(ps);
}

/*
 * Kernel programs that record nothing but detail (reads, ioctls, io_uring
 * reads, interrupts, off-CPU switches): attached only while the detail
 * switch is on, so that between the daemon's slices a trainer's reads and
 * ioctls (eight ioctls and five reads a step on the simulated trainer) pay
 * no probe at all. Opens, closes and mappings share these syscall
 * programs' code but are core: their tracepoints stay. The raw
 * sys_enter/sys_exit flavour serves every syscall at once, so it stays too,
 * and the switch turns its detail away.
 */
static bool kernel_prog_is_detail(const struct bpf_program *p)
{
	const char *name = bpf_program__name(p);
	static const char *const detail[] = {
		"sc_enter_read", "sc_exit_read", "sc_enter_pread64", "sc_exit_pread64",
		"sc_enter_readv", "sc_exit_readv", "sc_enter_preadv", "sc_exit_preadv",
		"sc_enter_ioctl", "sc_exit_ioctl", "uring_submit", "uring_complete",
		"tp_btf_irq_entry", "tp_btf_irq_exit", "raw_tp_irq_entry", "raw_tp_irq_exit",
		"tp_btf_switch", "raw_tp_switch",
	};

	for (size_t i = 0; i < sizeof(detail) / sizeof(detail[0]); i++)
		if (!strcmp(name, detail[i]))
			return true;
	return false;
}

static int attach_kernel_link(struct probe_session *ps, uint32_t i)
{
	struct bpf_program *p = ps->kernel_progs[i];
	struct bpf_link *link = bpf_program__attach(p);

	if (!link) {
		int err = -errno;

		log_err("attaching %s (%s) failed: %s", bpf_program__name(p),
			bpf_program__section_name(p), strerror(-err));
		return err;
	}
	ps->kernel_links[i] = link;
	return 0;
}

int probe_session__attach_kernel(struct probe_session *ps)
{
	struct bpf_program *p;

	if (ps->attached)
		return 0;
	bpf_object__for_each_program(p, ps->skel->obj) {
		const char *name = bpf_program__name(p);
		uint32_t i = ps->n_kernel_links;
		int err;

		/* Runtime probes attach per library, with cookies. */
		if (!bpf_program__autoload(p) || !strncmp(name, "rt_", 3))
			continue;
		if (i == MAX_KERNEL_LINKS)
			return -E2BIG;
		ps->kernel_progs[i] = p;
		ps->n_kernel_links++;
		if (kernel_prog_is_detail(p) && ps->skel->bss->detail_off)
			continue;
		err = attach_kernel_link(ps, i);
		if (err)
			return err;
	}
	ps->attached = true;
	return 0;
}

uint32_t probe_session__kernel_links(const struct probe_session *ps, bool detail)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < ps->n_kernel_links; i++)
		n += ps->kernel_links[i] && kernel_prog_is_detail(ps->kernel_progs[i]) == detail;
	return n;
}

int probe_session__trace_pid(struct probe_session *ps, uint32_t pid, uint32_t flags)
{
	if (pid >= AT_PID_SPACE || !(flags & 0xff))
		return -EINVAL;
	ps->traced[pid] = flags;
	return 0;
}

int probe_session__untrace_pid(struct probe_session *ps, uint32_t pid)
{
	if (pid >= AT_PID_SPACE)
		return -EINVAL;
	ps->traced[pid] = 0;
	return 0;
}

bool probe_session__pid_traced(const struct probe_session *ps, uint32_t pid)
{
	return pid < AT_PID_SPACE && ps->traced[pid];
}

int probe_session__set_fd(struct probe_session *ps, uint32_t pid, uint32_t fd,
			  enum fd_kind kind)
{
	struct fd_key key = { .pid = pid, .fd = fd };
	__u32 v = kind;

	if (bpf_map_update_elem(bpf_map__fd(ps->skel->maps.fd_kinds), &key, &v,
				BPF_ANY))
		return -errno;
	return 0;
}

int probe_session__trace_irq(struct probe_session *ps, uint32_t irq, uint32_t idx)
{
	if (bpf_map_update_elem(bpf_map__fd(ps->skel->maps.traced_irqs), &irq,
				&idx, BPF_ANY))
		return -errno;
	return 0;
}

uint64_t probe_session__runtime_hits(const struct probe_session *ps, int probe_id)
{
	int ncpus = libbpf_num_possible_cpus();
	__u32 key = probe_id;
	uint64_t total = 0;
	__u64 *vals;

	if (ncpus <= 0 || probe_id < 0)
		return 0;
	vals = calloc(ncpus, sizeof(*vals));
	if (!vals)
		return 0;
	if (!bpf_map_lookup_elem(bpf_map__fd(ps->skel->maps.rt_hits), &key, vals))
		for (int i = 0; i < ncpus; i++)
			total += vals[i];
	free(vals);
	return total;
}

int probe_session__poll(struct probe_session *ps, int timeout_ms)
{
	int n, m = 0;

	ps->poll_deadline_ns = mono_ns() + (uint64_t)(timeout_ms > 0 ? timeout_ms : 0) * 1000000ull +
			       ps->poll_budget_ns;
	ps->poll_records = 0;
	ps->poll_cut = false;
	n = ring_buffer__poll(ps->rb, timeout_ms);
	/* A signal interrupting the wait is not an error for the caller. */
	if (n == -EINTR || ps->poll_cut)
		n = 0;
	/*
	 * The BPF side wakes us only when a shard is an eighth full, so a
	 * quiet ring never signals: drain whatever is there on every tick, or
	 * records would wait for thousands more to arrive.
	 */
	if (n >= 0 && !ps->poll_cut)
		m = ring_buffer__consume(ps->rb);
	if (ps->poll_cut) {
		/* What was handed on before the budget ran out is not counted
		 * by libbpf: the clock's count stands in for it. */
		ps->polls_cut++;
		n = 0;
		m = ps->poll_records;
	}
	ps->poll_deadline_ns = 0;
	if (n < 0)
		return n;
	return m < 0 ? m : n + m;
}

uint64_t probe_session__polls_cut(const struct probe_session *ps)
{
	return ps->polls_cut;
}

int probe_session__drain(struct probe_session *ps)
{
	return ring_buffer__consume(ps->rb);
}

int probe_session__set_detail(struct probe_session *ps, bool on)
{
	struct bpf_link *gone[MAX_KERNEL_LINKS];
	size_t n = 0;
	int err = 0;

	if (!on) {
		/* The switch first: hits until the detach are turned away. */
		ps->skel->bss->detail_off = 1;
		for (uint32_t i = 0; i < ps->n_kernel_links; i++) {
			if (ps->kernel_links[i] && kernel_prog_is_detail(ps->kernel_progs[i])) {
				gone[n++] = ps->kernel_links[i];
				ps->kernel_links[i] = NULL;
			}
		}
		/* One grace period for all of them, not one each. */
		bpf_links__destroy_all(gone, n);
		return 0;
	}
	if (ps->attached) {
		for (uint32_t i = 0; i < ps->n_kernel_links; i++) {
			int e;

			if (ps->kernel_links[i] || !kernel_prog_is_detail(ps->kernel_progs[i]))
				continue;
			e = attach_kernel_link(ps, i);
			if (e && !err)
				err = e;
		}
	}
	/* The .bss is mapped: the next probe hit sees it. The time first:
	 * every read or ioctl entered with the switch on begins after it. */
	ps->skel->bss->detail_on_ns = mono_ns();
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	ps->skel->bss->detail_off = 0;
	return err;
}

bool probe_session__detail(const struct probe_session *ps)
{
	return !ps->skel->bss->detail_off;
}

int probe_session__proc_aggregates(const struct probe_session *ps, uint32_t pid,
				   uint64_t out[AGG_MAX])
{
	int ncpus = libbpf_num_possible_cpus();
	struct at_proc_agg *per_cpu;
	int err = 0;

	memset(out, 0, AGG_MAX * sizeof(out[0]));
	if (ncpus <= 0)
		return ncpus ? ncpus : -EINVAL;
	per_cpu = calloc(ncpus, sizeof(*per_cpu));
	if (!per_cpu)
		return -ENOMEM;
	if (bpf_map_lookup_elem(bpf_map__fd(ps->skel->maps.proc_aggs), &pid, per_cpu)) {
		err = -errno;
		goto out;
	}
	for (int c = 0; c < ncpus; c++)
		for (int i = 0; i < AGG_MAX; i++)
			out[i] += per_cpu[c].v[i];
out:
	free(per_cpu);
	return err;
}

int probe_session__forget_pid_aggregates(struct probe_session *ps, uint32_t pid)
{
	if (bpf_map_delete_elem(bpf_map__fd(ps->skel->maps.proc_aggs), &pid))
		return errno == ENOENT ? 0 : -errno;
	return 1;
}

/* The BPF side's counters (struct at_counters: all u64), summed over the
 * CPUs' copies; zeros when they cannot be read. */
static void sum_counters(const struct probe_session *ps, struct at_counters *sum)
{
	size_t n = libbpf_num_possible_cpus() > 0 ? libbpf_num_possible_cpus() : 0;
	uint64_t *per = n ? calloc(n, sizeof(*sum)) : NULL, *out = (uint64_t *)sum;
	int fd = bpf_map__fd(ps->skel->maps.counters);

	memset(sum, 0, sizeof(*sum));
	if (per && !bpf_map_lookup_elem(fd, &(uint32_t){ 0 }, per))
		for (size_t i = 0; i < n * sizeof(*sum) / sizeof(*per); i++)
			out[i % (sizeof(*sum) / sizeof(*per))] += per[i];
	free(per);
}

void probe_session__losses(const struct probe_session *ps,
			   uint64_t losses[LOSS_KIND_MAX])
{
	struct at_counters sum;

	sum_counters(ps, &sum);
	memcpy(losses, sum.losses, sizeof(sum.losses));
}

uint64_t probe_session__emitted(const struct probe_session *ps, enum ev_type t)
{
	struct at_counters sum;

	sum_counters(ps, &sum);
	return t < EV_TYPE_MAX ? sum.emitted[t] : 0;
}

static uint64_t prog_misses(struct bpf_program *p)
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);
	int fd = bpf_program__fd(p);

	if (fd < 0 || bpf_obj_get_info_by_fd(fd, &info, &len))
		return 0;
	return info.recursion_misses;
}

void probe_session__skipped(const struct probe_session *ps, uint64_t *runtime,
			    uint64_t *kernel)
{
	struct bpf_program *p;

	*runtime = *kernel = 0;
	bpf_object__for_each_program(p, ps->skel->obj) {
		if (!bpf_program__autoload(p))
			continue;
		if (!strncmp(bpf_program__name(p), "rt_", 3))
			*runtime += prog_misses(p);
		else
			*kernel += prog_misses(p);
	}
}

enum probe_mechanism probe_session__mechanism(const struct probe_session *ps,
					      enum probe_class pc)
{
	return pc < PROBE__COUNT ? ps->mech[pc] : MECH_NONE;
}
