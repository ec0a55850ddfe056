// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Loading and driving acceltrace's BPF object. Attach flavours are chosen from
 * what the kernel offers (kernel_features) with bpf_program__set_autoload,
 * never with #if; ring buffers are sharded so that at most a few CPUs contend
 * for one; runtime probes are attached one by one as libraries are found.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#define LOG_CONTEXT "probes"
#include "lib/log.h"
#include "probe/bpf_links.h"
#include "probe/fetch_plan.h"
#include "probe/probe_session.h"
#include "acceltrace.skel.h"

#define DEFAULT_RING_BYTES (8ull << 20)
#define MAX_KERNEL_LINKS 64

struct runtime_probe {
	struct bpf_link *entry;
	struct bpf_link *ret;
	bool used;
};

struct probe_session {
	struct acceltrace *skel;
	struct ring_buffer *rb;
	int ring_fds[AT_MAX_RINGS];
	uint32_t nr_rings;
	probe_record_fn fn;
	void *ctx;
	enum probe_mechanism mech[PROBE__COUNT];
	bool attached;
	struct runtime_probe probes[AT_MAX_PROBES];
	uint32_t n_probes;	/* high-water mark of probe ids */
	struct bpf_link *kernel_links[MAX_KERNEL_LINKS];
	uint32_t n_kernel_links;
	/* The traced-process table (a byte per pid), mapped from BPF. */
	volatile uint8_t *traced;
	/* The syscall slots, mapped read-only from BPF. */
	const volatile struct sys_slot *sys_slots;
	/* The runtime-call slots, mapped from BPF (freed here for processes
	 * that exit mid-call). */
	volatile struct rt_slot *rt_slots;
	uint32_t n_slots;
};

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
	default: return "?";
	}
}

static int on_record(void *ctx, void *data, size_t size)
{
	struct probe_session *ps = ctx;

	return ps->fn ? ps->fn(ps->ctx, data, size) : 0;
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
	for (enum probe_class pc = 0; pc < PROBE__COUNT; pc++)
		ps->mech[pc] = features__choose(opts->features, pc).mech;

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
	bpf_map__set_max_entries(ps->skel->maps.sys_slots, ps->n_slots);
	bpf_map__set_max_entries(ps->skel->maps.rt_slots, ps->n_slots);
	ps->skel->rodata->cfg_whole_host = opts->whole_host;
	ps->skel->rodata->cfg_children = opts->children;
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
	{
		/* One grace period for all of them, not one each. */
		struct bpf_link **all = calloc(2 * ps->n_probes + ps->n_kernel_links + 1,
					       sizeof(*all));
		size_t n = 0;

		for (uint32_t i = 0; i < ps->n_probes; i++) {
			if (all) {
				all[n++] = ps->probes[i].ret;
				all[n++] = ps->probes[i].entry;
			} else {
				bpf_link__destroy(ps->probes[i].ret);
				bpf_link__destroy(ps->probes[i].entry);
			}
		}
		for (uint32_t i = 0; i < ps->n_kernel_links; i++) {
			if (all)
				all[n++] = ps->kernel_links[i];
			else
				bpf_link__destroy(ps->kernel_links[i]);
		}
		if (all)
			bpf_links__destroy_all(all, n);
		free(all);
	}
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

int probe_session__attach_kernel(struct probe_session *ps)
{
	struct bpf_program *p;

	if (ps->attached)
		return 0;
	bpf_object__for_each_program(p, ps->skel->obj) {
		const char *name = bpf_program__name(p);
		struct bpf_link *link;

		/* Runtime probes attach per library, with cookies. */
		if (!bpf_program__autoload(p) || !strncmp(name, "rt_", 3))
			continue;
		if (ps->n_kernel_links == MAX_KERNEL_LINKS)
			return -E2BIG;
		link = bpf_program__attach(p);
		if (!link) {
			int err = -errno;

			log_err("attaching %s (%s) failed: %s", name,
				bpf_program__section_name(p), strerror(-err));
			return err;
		}
		ps->kernel_links[ps->n_kernel_links++] = link;
	}
	ps->attached = true;
	return 0;
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

bool probe_session__pid_traced(struct probe_session *ps, uint32_t pid)
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

/* Deletes every key of @map_fd for which @match says yes. */
/* Values of the maps delete_matching() walks, as read for @match. */
union map_value {
	struct ev_header h;
	struct ev_rt_call rt;
	struct ev_syscall sc;
};

/*
 * Deletes every entry of @map_fd for which @match(key, value, pid) says yes
 * (the value is read only when @val_size is not 0), counting each off
 * *@in_hash when set. The next key is taken before a delete: a deleted key
 * cannot be a cursor.
 */
static int delete_matching(int map_fd, size_t key_size, size_t val_size,
			   bool (*match)(const void *key, const union map_value *val,
					 uint32_t pid),
			   uint32_t pid, __u64 *in_hash)
{
	char key[64], next[64];
	union map_value val;
	bool have, have_next;
	int deleted = 0;

	if (key_size > sizeof(key) || val_size > sizeof(val))
		return -EINVAL;
	have = !bpf_map_get_next_key(map_fd, NULL, key);
	while (have) {
		have_next = !bpf_map_get_next_key(map_fd, key, next);
		if ((!val_size || !bpf_map_lookup_elem(map_fd, key, &val)) &&
		    match(key, &val, pid) && !bpf_map_delete_elem(map_fd, key)) {
			deleted++;
			if (in_hash)
				__atomic_fetch_sub(in_hash, 1, __ATOMIC_SEQ_CST);
		}
		memcpy(key, next, key_size);
		have = have_next;
	}
	return deleted;
}

static bool fd_key_of(const void *key, const union map_value *val, uint32_t pid)
{
	return ((const struct fd_key *)key)->pid == pid;
}

static bool call_of(const void *key, const union map_value *val, uint32_t pid)
{
	return val->h.pid == pid;
}

int probe_session__forget_pid_fds(struct probe_session *ps, uint32_t pid)
{
	return delete_matching(bpf_map__fd(ps->skel->maps.fd_kinds), sizeof(struct fd_key),
			       0, fd_key_of, pid, NULL);
}

int probe_session__trace_irq(struct probe_session *ps, uint32_t irq, uint32_t idx)
{
	if (bpf_map_update_elem(bpf_map__fd(ps->skel->maps.traced_irqs), &irq,
				&idx, BPF_ANY))
		return -errno;
	return 0;
}

int probe_session__attach_runtime(struct probe_session *ps,
				  const struct rt_probe_spec *spec,
				  const char *path, uint64_t offset, int pid)
{
	LIBBPF_OPTS(bpf_uprobe_opts, uopts);
	struct runtime_probe *rp;
	__u32 id;
	int err;

	/* Reuse a free id, so attach/detach cycles never run out. */
	for (id = 0; id < ps->n_probes; id++)
		if (!ps->probes[id].used)
			break;
	if (id == AT_MAX_PROBES)
		return -E2BIG;
	if (fetch_plan__check(spec)) {
		log_debug("uprobe %s+0x%llx: its fetch program's blocks are malformed",
			  path, (unsigned long long)offset);
		return -EINVAL;
	}
	if (bpf_map_update_elem(bpf_map__fd(ps->skel->maps.rt_specs), &id, spec,
				BPF_ANY))
		return -errno;
	rp = &ps->probes[id];
	uopts.bpf_cookie = id;
	rp->entry = bpf_program__attach_uprobe_opts(ps->skel->progs.rt_entry, pid,
						    path, offset, &uopts);
	if (!rp->entry) {
		err = -errno;
		log_debug("uprobe %s+0x%llx: %s", path, (unsigned long long)offset,
			  strerror(-err));
		return err;
	}
	if (spec->flags & RT_SPEC_RETURN) {
		uopts.retprobe = true;
		rp->ret = bpf_program__attach_uprobe_opts(ps->skel->progs.rt_return,
							  pid, path, offset, &uopts);
		if (!rp->ret) {
			err = -errno;
			bpf_link__destroy(rp->entry);
			rp->entry = NULL;
			log_debug("uretprobe %s+0x%llx: %s", path,
				  (unsigned long long)offset, strerror(-err));
			return err;
		}
	}
	rp->used = true;
	if (id == ps->n_probes)
		ps->n_probes++;
	return id;
}

int probe_session__detach_runtime(struct probe_session *ps, int probe_id)
{
	struct runtime_probe *rp;

	if (probe_id < 0 || (uint32_t)probe_id >= ps->n_probes)
		return -ENOENT;
	rp = &ps->probes[probe_id];
	if (!rp->used)
		return -ENOENT;
	bpf_link__destroy(rp->ret);
	bpf_link__destroy(rp->entry);
	memset(rp, 0, sizeof(*rp));
	return 0;
}

void probe_session__detach_runtime_many(struct probe_session *ps,
					const int *probe_ids, size_t n)
{
	struct bpf_link **links = calloc(2 * n + 1, sizeof(*links));
	size_t k = 0;

	if (!links) {
		for (size_t i = 0; i < n; i++)
			probe_session__detach_runtime(ps, probe_ids[i]);
		return;
	}
	for (size_t i = 0; i < n; i++) {
		struct runtime_probe *rp;

		if (probe_ids[i] < 0 || (uint32_t)probe_ids[i] >= ps->n_probes)
			continue;
		rp = &ps->probes[probe_ids[i]];
		if (!rp->used)
			continue;
		links[k++] = rp->ret;
		links[k++] = rp->entry;
		memset(rp, 0, sizeof(*rp));
	}
	bpf_links__destroy_all(links, k);
	free(links);
}

size_t probe_session__runtime_probes(const struct probe_session *ps)
{
	size_t n = 0;

	for (uint32_t i = 0; i < ps->n_probes; i++)
		n += ps->probes[i].used;
	return n;
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
	int n = ring_buffer__poll(ps->rb, timeout_ms), m;

	/* A signal interrupting the wait is not an error for the caller. */
	if (n == -EINTR)
		n = 0;
	if (n < 0)
		return n;
	/*
	 * The BPF side wakes us only when a shard is an eighth full, so a
	 * quiet ring never signals: drain whatever is there on every tick, or
	 * records would wait for thousands more to arrive.
	 */
	m = ring_buffer__consume(ps->rb);
	return m < 0 ? m : n + m;
}

int probe_session__drain(struct probe_session *ps)
{
	return ring_buffer__consume(ps->rb);
}

/* A slot's owner field: a tid (4 bytes) or a runtime call's key (8). */
static uint64_t load_owner(const volatile void *owner, size_t size)
{
	if (size == sizeof(uint64_t))
		return __atomic_load_n((const volatile uint64_t *)owner, __ATOMIC_ACQUIRE);
	return __atomic_load_n((const volatile uint32_t *)owner, __ATOMIC_ACQUIRE);
}

/*
 * Copies a slot's record (@size bytes at @src) into @dst when a call is
 * kept there: taken between two equal, even reads of the slot's sequence
 * @seq, with the same owner and a start (struct sys_slot); a call that
 * returned meanwhile sends its record through the ring. Returns the owner,
 * or 0; *@seqp (if set) gets the sequence read.
 */
static uint64_t read_slot(const volatile void *owner, size_t owner_size,
			  const volatile uint32_t *seq, const volatile void *src,
			  void *dst, size_t size, uint32_t *seqp)
{
	uint32_t s0 = __atomic_load_n(seq, __ATOMIC_ACQUIRE);
	uint64_t who = load_owner(owner, owner_size);
	const struct ev_header *h = dst;

	if (!who || (s0 & 1))
		return 0;
	memcpy(dst, (const void *)src, size);
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	if (*seq != s0 || load_owner(owner, owner_size) != who || !h->start_ns)
		return 0;
	if (seqp)
		*seqp = s0;
	return who;
}

/* Slot @i's runtime call into @rec, as read_slot(); its key, or 0. */
static uint64_t read_rt_slot(const struct probe_session *ps, uint32_t i,
			     struct ev_rt_call *rec, uint32_t *seqp)
{
	const volatile struct rt_slot *slot = &ps->rt_slots[i];
	uint64_t key = read_slot(&slot->key, sizeof(slot->key), &slot->seq, &slot->rec,
				 rec, sizeof(*rec), seqp);

	return key && rec->h.tid == key >> 32 ? key : 0;
}

/* Calls in progress: their pending records, marked open. */
static int open_runtime_calls(struct probe_session *ps, probe_record_fn fn,
			      void *ctx)
{
	int fd = bpf_map__fd(ps->skel->maps.rt_pending);
	struct rt_pending_key key, next;
	struct ev_rt_call rec;
	bool first = true;
	int err;

	for (uint32_t i = 0; i < ps->n_slots; i++) {
		if (!read_rt_slot(ps, i, &rec, NULL))
			continue;
		rec.flags |= RT_F_OPEN;
		err = fn(ctx, &rec, sizeof(rec));
		if (err)
			return err;
	}
	while (!bpf_map_get_next_key(fd, first ? NULL : &key, &next)) {
		first = false;
		key = next;
		if (bpf_map_lookup_elem(fd, &key, &rec))
			continue;	/* returned meanwhile */
		rec.flags |= RT_F_OPEN;
		err = fn(ctx, &rec, sizeof(rec));
		if (err)
			return err;
	}
	return 0;
}

/* openat/eventfd in progress are not spans worth keeping. */
static bool open_syscall_wanted(const struct ev_syscall *rec)
{
	return rec->sc != SC_OPENAT && rec->sc != SC_EVENTFD;
}

/* Syscalls in progress in their threads' slots. */
static int open_syscalls_in_slots(struct probe_session *ps, probe_record_fn fn,
				  void *ctx)
{
	for (uint32_t i = 0; i < ps->n_slots; i++) {
		const volatile struct sys_slot *slot = &ps->sys_slots[i];
		struct ev_syscall rec;
		uint64_t tid = read_slot(&slot->tid, sizeof(slot->tid), &slot->seq,
					 &slot->rec, &rec, sizeof(rec), NULL);
		int err;

		if (!tid || rec.h.tid != tid || !open_syscall_wanted(&rec))
			continue;
		err = fn(ctx, &rec, sizeof(rec));
		if (err)
			return err;
	}
	return 0;
}

/* Syscalls in progress: in the slots, then the threads' whose slot was taken. */
static int open_syscalls(struct probe_session *ps, probe_record_fn fn, void *ctx)
{
	int fd = bpf_map__fd(ps->skel->maps.sys_pending);
	__u32 key, next;
	bool first = true;
	int err = open_syscalls_in_slots(ps, fn, ctx);

	if (err)
		return err;
	while (!bpf_map_get_next_key(fd, first ? NULL : &key, &next)) {
		struct ev_syscall rec;

		first = false;
		key = next;
		if (bpf_map_lookup_elem(fd, &key, &rec) || !open_syscall_wanted(&rec))
			continue;
		err = fn(ctx, &rec, sizeof(rec));
		if (err)
			return err;
	}
	return 0;
}

int probe_session__for_each_open(struct probe_session *ps, probe_record_fn fn,
				 void *ctx)
{
	int err = open_runtime_calls(ps, fn, ctx);

	return err ? err : open_syscalls(ps, fn, ctx);
}

int probe_session__forget_pid_calls(struct probe_session *ps, uint32_t pid)
{
	int deleted = 0;

	/* Its threads are gone, so nothing of theirs writes these slots; a
	 * new thread that reused a tid could, and the owner check keeps its
	 * call. The release mirrors SLOT_BEGIN/END_RELEASE in the BPF side. */
	for (uint32_t i = 0; i < ps->n_slots; i++) {
		volatile struct rt_slot *slot = &ps->rt_slots[i];
		struct ev_rt_call val;
		uint32_t seq;
		uint64_t skey = read_rt_slot(ps, i, &val, &seq);

		if (!skey || val.h.pid != pid ||
		    !__atomic_compare_exchange_n(&slot->seq, &seq, seq + 1, false,
						 __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
			continue;
		slot->rec.h.start_ns = 0;
		if (__atomic_compare_exchange_n(&slot->key, &skey, 0, false,
						__ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
			deleted++;
		__atomic_fetch_add(&slot->seq, 1, __ATOMIC_SEQ_CST);
	}
	deleted += delete_matching(bpf_map__fd(ps->skel->maps.rt_pending),
				   sizeof(struct rt_pending_key), sizeof(struct ev_rt_call),
				   call_of, pid, &ps->skel->bss->rt_in_hash);
	deleted += delete_matching(bpf_map__fd(ps->skel->maps.sys_pending), sizeof(__u32),
				   sizeof(struct ev_syscall), call_of, pid,
				   &ps->skel->bss->sys_in_hash);
	return deleted;
}

void probe_session__calls_in_hash(const struct probe_session *ps, uint64_t *rt,
				  uint64_t *sys)
{
	*rt = __atomic_load_n(&ps->skel->bss->rt_in_hash, __ATOMIC_RELAXED);
	*sys = __atomic_load_n(&ps->skel->bss->sys_in_hash, __ATOMIC_RELAXED);
}

void probe_session__losses(const struct probe_session *ps,
			   uint64_t losses[LOSS_KIND_MAX])
{
	for (int i = 0; i < LOSS_KIND_MAX; i++)
		losses[i] = ps->skel->bss->losses[i];
}

uint64_t probe_session__emitted(const struct probe_session *ps, enum ev_type t)
{
	return t < EV_TYPE_MAX ? ps->skel->bss->events_emitted[t] : 0;
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
