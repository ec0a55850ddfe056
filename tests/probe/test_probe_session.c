// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * acceltrace's own BPF object, end to end, through both attach flavours
 * (syscall + BTF tracepoints, then raw tracepoints): a runtime probe with a
 * fetch program on a function of this binary (its reads planned into a block
 * read), a block that cannot be read falling back to reads of its own ops
 * (one beside an unmapped page), a call still in progress read
 * from the open-span table, a file read with the file's identity, a device
 * node opened and ioctl'ed, an eventfd read with its value, and a thread's
 * life (created, renamed, exited). Every trigger comes from this process.
 */
#include <fcntl.h>
#include <liburing.h>
#include <sys/ioctl.h>
#include <pthread.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <time.h>

#include "bpf_test.h"
#include "self_offset.h"
#include "probe/fetch_plan.h"
#include "lib/log.h"
#include "probe/probe_session.h"
#include "probe/packed_records.h"

#define CALLS 100

/* Mimics a PJRT Args struct: header, then fields at fixed offsets. */
struct fake_options {
	char pad[48];
	int launch_id;		/* @48, as in PJRT_ExecuteOptions */
};

struct fake_args {
	uint64_t struct_size;		/* @0 */
	void *ext;			/* @8 */
	uint64_t executable;		/* @16 */
	struct fake_options *options;	/* @24 */
	const char *name;		/* @32 */
	uint64_t out;			/* @40: written by the callee */
};

__attribute__((noinline)) uint64_t test_runtime_call(struct fake_args *a)
{
	a->out = a->executable * 3;
	asm volatile("" ::: "memory");
	return a->executable + 1;
}

/* Entry only, with two reads of one block: the second crosses into a
 * page nothing maps. */
__attribute__((noinline)) int test_fault_call(void *p)
{
	asm volatile("" ::: "memory");
	return p != NULL;
}

#define FAULT_CALLS 10
#define TEST_SLOTS 2

static int block_pipe[2];

__attribute__((noinline)) int test_blocking_call(int fd)
{
	char c;

	return read(fd, &c, 1);
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

struct seen {
	int calls, calls_bad, opens_seen;
	int faulted_ok, faulted_bad, fault_probe_id;
	uint64_t fault_value;
	int pread_ok, ioctl_ok, eventfd_ok, devopen_ok, uring_ok, syscalls_bad;
	int task_new, task_rename, task_exit;
	/* syscalls in progress: a blocked eventfd read in its slot, and a
	 * pread by a thread whose slot the blocked one holds */
	uint32_t blocker_tid, collider_tid;
	/* runtime calls whose slot the blocked call holds: one that returns,
	 * one that blocks too */
	uint32_t rt_collider_slot, rt_collider_tid, rt_blocked_collider_tid;
	int blocker_efd, collider_efd;
	int open_read_seen, open_collider_read_seen, blocker_read_ok, collider_read_ok;
	uint32_t thread_tid;
	uint64_t lo, hi;
	int probe_id;
	struct stat file_st;
	uint64_t ioctl_cmd;
	uint8_t ioctl_arg[32];
	char dev_path[160];
	int dev_fd, efd;
};

/* Call i's module name: long and short names alternate. */
static const char *call_name(uint64_t i)
{
	return i % 2 ? "a_module_name_much_longer_than_the_other_one" : "module7";
}

static bool zero_from(const char *buf, size_t from, size_t len)
{
	for (size_t k = from; k < len; k++)
		if (buf[k])
			return false;
	return true;
}

static int on_record(void *ctx, const void *data, size_t size)
{
	struct seen *s = ctx;
	const struct ev_header *h = data;

	if (size < sizeof(*h) || h->pid != (uint32_t)getpid())
		return 0;
	switch (h->type) {
	case EV_RT_CALL: {
		struct ev_rt_call unpacked, *r = &unpacked;
		uint64_t i;

		if (rt_record__unpack(&unpacked, data, size)) {
			s->calls_bad++;
			break;
		}
		i = r->vals[0];
		if ((int)r->probe_id == s->fault_probe_id) {
			bool rest_zero = true;

			/* Entry-only, two values, no payload: the small
			 * class, not the full struct. */
			if (size != RT_CALL_SIZE(AT_RT_SMALL_VALS, 0))
				s->faulted_bad++;

			for (int k = 2; k < AT_MAX_FETCH_OPS; k++)
				rest_zero &= !r->vals[k];
			if (r->vals[0] == s->fault_value && !r->vals[1] &&
			    r->fault_mask == 2 && r->flags == (RT_F_NO_RETURN | RT_F_FETCH_FAULT) &&
			    rest_zero && !r->payload_len)
				s->faulted_ok++;
			else
				s->faulted_bad++;
			break;
		}
		if ((int)r->probe_id != s->probe_id)
			break;
		s->calls++;
		/* Six values and a payload: past the ring's small class,
		 * so the full struct's size (unpacked by its counts). */
		if (size != sizeof(*r))
			s->calls_bad++;
		/* vals: executable, options, launch_id, name, out (at return);
		 * the payload, a name whose bytes past its NUL read 0 although
		 * a longer name came before it. */
		if (r->vals[2] != i + 1000 || r->ret != i + 1 || r->vals[4] != i * 3 ||
		    r->payload_len != strlen(call_name(i)) + 1 ||
		    strcmp(r->payload, call_name(i)) ||
		    !zero_from(r->payload, r->payload_len, AT_RT_PAYLOAD) ||
		    r->h.start_ns < s->lo || r->h.end_ns > (s->hi ? s->hi : mono_ns()) ||
		    r->h.end_ns < r->h.start_ns || r->flags) {
			s->calls_bad++;
			if (getenv("TEST_VERBOSE"))
				fprintf(stderr, "call vals %llu %#llx %llu %#llx %llu ret %llu payload %u [%.8s] flags %#x faults %#x t %llu-%llu in %llu-%llu\n",
					(unsigned long long)r->vals[0], (unsigned long long)r->vals[1],
					(unsigned long long)r->vals[2], (unsigned long long)r->vals[3],
					(unsigned long long)r->vals[4], (unsigned long long)r->ret,
					r->payload_len, r->payload, r->flags, r->fault_mask, (unsigned long long)r->h.start_ns, (unsigned long long)r->h.end_ns, (unsigned long long)s->lo, (unsigned long long)s->hi);
		}
		break;
	}
	case EV_SYSCALL: {
		struct ev_syscall unpacked, *r = &unpacked;

		/* Packed: no argbuf when it holds nothing (a read). */
		if (sys_record__unpack(&unpacked, data, size) ||
		    size != (r->argbuf_len ? sizeof(*r) : SYSCALL_HEAD)) {
			s->syscalls_bad++;
			break;
		}
		if (getenv("TEST_VERBOSE"))
			fprintf(stderr, "syscall sc=%u fd=%u kind=%u ret=%lld args=%llu,%lld dev=%llu ino=%llu argbuf_len=%u\n",
				r->sc, r->fd, r->fd_kind, (long long)r->ret,
				(unsigned long long)r->args[0], (long long)r->args[1],
				(unsigned long long)r->dev, (unsigned long long)r->ino, r->argbuf_len);
		if (r->sc == SC_IO_URING_READ && r->ret == 4096 && r->ino == s->file_st.st_ino &&
		    r->h.tid == (uint32_t)syscall(SYS_gettid))
			s->uring_ok++;
		if (r->sc == SC_PREAD64 && r->ret == 4096 && r->args[1] == 8192 &&
		    r->fd_kind == FD_UNKNOWN &&
		    r->args[0] == 4096 && r->ino == s->file_st.st_ino &&
		    r->dev == (uint64_t)makedev(major(s->file_st.st_dev),
						minor(s->file_st.st_dev)))
			s->pread_ok++;
		if (r->sc == SC_IOCTL && r->fd_kind == FD_DEVICE &&
		    r->args[0] == s->ioctl_cmd && r->argbuf_len == 32 &&
		    !memcmp(r->argbuf, s->ioctl_arg, 32) && r->ret == -ENOTTY)
			s->ioctl_ok++;
		if (r->sc == SC_READ && r->fd_kind == FD_EVENTFD && r->ret == 8 &&
		    r->argbuf_len == 8 && *(uint64_t *)r->argbuf == 3)
			s->eventfd_ok++;
		if (r->h.tid == s->blocker_tid && r->sc == SC_READ &&
		    r->fd == (uint32_t)s->blocker_efd && r->ret == 8 &&
		    r->argbuf_len == 8 && *(uint64_t *)r->argbuf == 5)
			s->blocker_read_ok++;
		if (r->h.tid == s->collider_tid && r->sc == SC_READ &&
		    r->fd == (uint32_t)s->collider_efd && r->ret == 8 &&
		    r->argbuf_len == 8 && *(uint64_t *)r->argbuf == 7)
			s->collider_read_ok++;
		break;
	}
	case EV_DEV_OPEN: {
		const struct ev_dev_open *r = data;

		if (getenv("TEST_VERBOSE"))
			fprintf(stderr, "devopen fd=%d path=%s\n", r->fd, r->path);
		if (size >= sizeof(*r) && r->fd == s->dev_fd &&
		    !strcmp(r->path, s->dev_path))
			s->devopen_ok++;
		break;
	}
	case EV_TASK: {
		const struct ev_task *r = data;

		if (size < sizeof(*r) || r->h.tid != s->thread_tid)
			break;
		if (r->event == TASK_NEW)
			s->task_new++;
		if (r->event == TASK_RENAME && !strcmp(r->comm, "at_input_0"))
			s->task_rename++;
		if (r->event == TASK_EXIT)
			s->task_exit++;
		break;
	}
	}
	return 0;
}

static int on_open(void *ctx, const void *data, size_t size)
{
	struct seen *s = ctx;
	const struct ev_rt_call *r = data;

	if (r->h.type == EV_RT_CALL && size >= sizeof(*r) && (r->flags & RT_F_OPEN) &&
	    r->h.start_ns >= s->lo && r->h.end_ns == 0 &&
	    (r->h.tid == s->thread_tid ||
	     (s->rt_blocked_collider_tid && r->h.tid == s->rt_blocked_collider_tid)))
		s->opens_seen++;
	return 0;
}

/* Syscalls in progress, seen open: an eventfd read, blocked. */
static int on_open_syscall(void *ctx, const void *data, size_t size)
{
	struct seen *s = ctx;
	const struct ev_syscall *r = data;

	if (r->h.type != EV_SYSCALL || size < sizeof(*r) || r->sc != SC_READ ||
	    r->fd_kind != FD_EVENTFD || r->h.end_ns || r->h.start_ns < s->lo)
		return 0;
	if (r->h.tid == s->blocker_tid && r->fd == (uint32_t)s->blocker_efd)
		s->open_read_seen++;
	if (s->collider_tid && r->h.tid == s->collider_tid &&
	    r->fd == (uint32_t)s->collider_efd)
		s->open_collider_read_seen++;
	return 0;
}

static void *blocker_fn(void *arg)
{
	struct seen *s = arg;
	uint64_t v;

	__atomic_store_n(&s->blocker_tid, syscall(SYS_gettid), __ATOMIC_SEQ_CST);
	if (read(s->blocker_efd, &v, sizeof(v)) != sizeof(v))
		return NULL;
	return NULL;
}

/* Blocks in an eventfd read too when its tid shares the blocked thread's
 * syscall slot. */
static void *collider_fn(void *arg)
{
	struct seen *s = arg;
	uint32_t tid = syscall(SYS_gettid);
	uint64_t v;

	if ((tid & (TEST_SLOTS - 1)) != (s->blocker_tid & (TEST_SLOTS - 1)))
		return NULL;
	__atomic_store_n(&s->collider_tid, tid, __ATOMIC_SEQ_CST);
	if (read(s->collider_efd, &v, sizeof(v)) != sizeof(v))
		return NULL;
	return NULL;
}

/*
 * Starts threads running @fn until one sets *@found (it then blocks, and
 * is left running in *@t): each either returns at once or is the one.
 */
static bool start_collider(void *(*fn)(void *), struct seen *s, uint32_t *found,
			   pthread_t *t)
{
	for (int i = 0; i < 64; i++) {
		if (pthread_create(t, NULL, fn, s))
			return false;
		for (int w = 0; w < 1000; w++) {
			if (__atomic_load_n(found, __ATOMIC_SEQ_CST))
				return true;
			if (!pthread_tryjoin_np(*t, NULL))
				break;
			usleep(1000);
		}
	}
	return false;
}

/*
 * A thread blocked in a syscall holds its slot, and the open-syscall table
 * shows it; a thread whose tid maps to the same slot meanwhile goes through
 * the hash table (counted there) and is seen open too; both records arrive
 * whole, and slots and hash table are empty after.
 */
static void check_syscall_slots(struct probe_session *ps, struct seen *s)
{
	pthread_t blocker, collider;
	uint64_t v, rt_hashed, sys_hashed;

	s->collider_efd = -1;
	s->blocker_efd = eventfd(0, 0);
	if (!ASSERT_GE(s->blocker_efd, 0, "eventfd for the blocked read"))
		goto out;
	s->collider_efd = eventfd(0, 0);
	if (!ASSERT_GE(s->collider_efd, 0, "eventfd for the colliding read"))
		goto out;
	pthread_create(&blocker, NULL, blocker_fn, s);
	WAIT_UNTIL(, __atomic_load_n(&s->blocker_tid, __ATOMIC_SEQ_CST) &&
		   test_thread_blocked_in(s->blocker_tid, SYS_read), 5000,
		   "the eventfd read blocked");
	probe_session__calls_in_hash(ps, &rt_hashed, &sys_hashed);
	ASSERT_EQ(sys_hashed, 0, "the blocked read in its slot, not the hash table");
	probe_session__for_each_open(ps, on_open_syscall, s);
	ASSERT_EQ(s->open_read_seen, 1, "a blocked eventfd read is seen in progress");
	if (ASSERT_TRUE(start_collider(collider_fn, s, &s->collider_tid, &collider),
			"a thread sharing the slot blocks in a read")) {
		WAIT_UNTIL(, test_thread_blocked_in(s->collider_tid, SYS_read), 5000,
			   "the colliding read blocked");
		probe_session__calls_in_hash(ps, &rt_hashed, &sys_hashed);
		ASSERT_EQ(sys_hashed, 1, "its read kept in the hash table");
		s->open_read_seen = 0;
		probe_session__for_each_open(ps, on_open_syscall, s);
		ASSERT_EQ(s->open_read_seen, 1, "the blocked read still in its slot");
		ASSERT_EQ(s->open_collider_read_seen, 1, "the colliding read seen in progress");
		v = 7;
		ASSERT_EQ(write(s->collider_efd, &v, 8), 8, "unblock the colliding read");
		pthread_join(collider, NULL);
		WAIT_UNTIL(probe_session__drain(ps), s->collider_read_ok >= 1, 5000,
			   "the colliding read drained");
		ASSERT_EQ(s->collider_read_ok, 1, "the colliding read recorded with its value");
	}
	v = 5;
	ASSERT_EQ(write(s->blocker_efd, &v, 8), 8, "unblock the read");
	pthread_join(blocker, NULL);
	WAIT_UNTIL(probe_session__drain(ps), s->blocker_read_ok >= 1, 5000,
		   "the blocked read drained");
	ASSERT_EQ(s->blocker_read_ok, 1, "the blocked read recorded with its value");
	s->open_read_seen = s->open_collider_read_seen = 0;
	probe_session__for_each_open(ps, on_open_syscall, s);
	ASSERT_TRUE(!s->open_read_seen && !s->open_collider_read_seen,
		    "nothing open once both returned");
	probe_session__calls_in_hash(ps, &rt_hashed, &sys_hashed);
	ASSERT_EQ(sys_hashed, 0, "the hash table empty again");
out:
	if (s->blocker_efd >= 0)
		close(s->blocker_efd);
	if (s->collider_efd >= 0)
		close(s->collider_efd);
}

/* Makes call number CALLS (one more than the loop's) when its tid puts
 * it in the slot the blocked call holds. */
static void *rt_collider_fn(void *arg)
{
	struct seen *s = arg;
	uint32_t tid = syscall(SYS_gettid);
	struct fake_options o = { .launch_id = CALLS + 1000 };
	struct fake_args a = { .struct_size = sizeof(a), .executable = CALLS,
			       .options = &o, .name = call_name(CALLS) };

	if (at_rt_slot_index(tid, s->probe_id, TEST_SLOTS - 1) != s->rt_collider_slot)
		return NULL;
	s->rt_collider_tid = tid;
	test_runtime_call(&a);
	return NULL;
}

static int collider_pipe[2];
static int blocked_probe_id;

/* Blocks in the blocking probe too when its tid puts it in the slot the
 * blocked call holds. */
static void *rt_blocked_collider_fn(void *arg)
{
	struct seen *s = arg;
	uint32_t tid = syscall(SYS_gettid);

	if (at_rt_slot_index(tid, blocked_probe_id, TEST_SLOTS - 1) != s->rt_collider_slot)
		return NULL;
	__atomic_store_n(&s->rt_blocked_collider_tid, tid, __ATOMIC_SEQ_CST);
	test_blocking_call(collider_pipe[0]);
	return NULL;
}

/*
 * Paired calls whose slot another call holds go through rt_pending: one
 * that returns (its record checked with the loop's), and one that blocks,
 * counted in the hash table and seen open beside the slot's call.
 */
static void check_rt_slot_collision(struct probe_session *ps, struct seen *s,
				    int blocked_probe)
{
	uint64_t rt_hashed, sys_hashed;
	pthread_t t;

	s->rt_collider_slot = at_rt_slot_index(s->thread_tid, blocked_probe, TEST_SLOTS - 1);
	probe_session__calls_in_hash(ps, &rt_hashed, &sys_hashed);
	ASSERT_EQ(rt_hashed, 0, "the blocked call in its slot, not the hash table");
	for (uint32_t i = 0; i < 64 && !s->rt_collider_tid; i++) {
		if (pthread_create(&t, NULL, rt_collider_fn, s))
			break;
		pthread_join(t, NULL);
	}
	ASSERT_TRUE(s->rt_collider_tid != 0, "a call sharing the blocked call's slot");

	blocked_probe_id = blocked_probe;
	if (!ASSERT_OK(pipe(collider_pipe), "pipe for the blocked collider"))
		return;
	if (ASSERT_TRUE(start_collider(rt_blocked_collider_fn, s,
				       &s->rt_blocked_collider_tid, &t),
			"a call sharing the slot blocks")) {
		WAIT_UNTIL(, test_thread_blocked_in(s->rt_blocked_collider_tid, SYS_read), 5000,
			   "the colliding call blocked in its read");
		probe_session__calls_in_hash(ps, &rt_hashed, &sys_hashed);
		ASSERT_EQ(rt_hashed, 1, "the blocked colliding call in the hash table");
		s->opens_seen = 0;
		probe_session__for_each_open(ps, on_open, s);
		ASSERT_EQ(s->opens_seen, 2, "both blocked calls seen open");
		ASSERT_EQ(write(collider_pipe[1], "x", 1), 1, "unblock the colliding call");
		pthread_join(t, NULL);
		probe_session__calls_in_hash(ps, &rt_hashed, &sys_hashed);
		ASSERT_EQ(rt_hashed, 0, "the hash table empty again");
	}
	close(collider_pipe[0]);
	close(collider_pipe[1]);
}

static void *thread_fn(void *arg)
{
	struct seen *s = arg;

	__atomic_store_n(&s->thread_tid, syscall(SYS_gettid), __ATOMIC_SEQ_CST);
	pthread_setname_np(pthread_self(), "at_input_0");
	test_blocking_call(block_pipe[0]);
	return NULL;
}

static void run_flavour(const char *what, struct features *f, const char *dir,
			bool uring)
{
	static const char *prefixes[1];
	static char dev_dir[128];
	/* Two call slots: threads share them, so a call whose slot is held
	 * (the hash-map path) is easy to make. */
	struct probe_session_opts opts = { .sz = sizeof(opts), .call_slots = TEST_SLOTS };
	struct rt_probe_spec spec = {};
	struct probe_session *ps = NULL;
	static struct seen s;
	char path[256];
	pthread_t th;
	uint64_t v;
	int fd = -1;

	memset(&s, 0, sizeof(s));
	s.probe_id = s.fault_probe_id = -1;
	s.dev_fd = s.efd = -1;
	fprintf(stderr, "--- %s\n", what);
	snprintf(dev_dir, sizeof(dev_dir), "%s/dev/", dir);
	snprintf(s.dev_path, sizeof(s.dev_path), "%saccel0", dev_dir);
	mkdir(dev_dir, 0700);
	prefixes[0] = dev_dir;
	opts.features = f;
	opts.dev_prefixes = prefixes;
	opts.n_dev_prefixes = 1;
	opts.io_uring = true;
	opts.ring_bytes = 1 << 20;

	ps = probe_session__open(&opts, on_record, &s);
	if (!ASSERT_OK_PTR(ps, "open and load"))
		return;
	if (!ASSERT_OK(probe_session__attach_kernel(ps), "attach kernel programs"))
		goto out;
	ASSERT_OK(probe_session__trace_pid(ps, getpid(), TRACED_TARGET), "trace self");

	/* Runtime probe: executable, options, *(int)(options+48), name string,
	 * and at return the field the callee wrote. */
	spec.flags = RT_SPEC_RETURN;
	spec.n_ops = 5;
	spec.ops[0] = (struct at_fetch_op){ .src = FETCH_ARG0, .size = 8, .flags = FETCH_DEREF, .offset = 16 };
	spec.ops[1] = (struct at_fetch_op){ .src = FETCH_ARG0, .size = 8, .flags = FETCH_DEREF, .offset = 24 };
	spec.ops[2] = (struct at_fetch_op){ .src = FETCH_VAL + 1, .size = 4, .flags = FETCH_DEREF, .offset = 48 };
	spec.ops[3] = (struct at_fetch_op){ .src = FETCH_ARG0, .size = 8, .flags = FETCH_DEREF, .offset = 32 };
	spec.ops[4] = (struct at_fetch_op){ .src = FETCH_ARG0, .size = 8, .flags = FETCH_DEREF | FETCH_AT_RETURN, .offset = 40 };
	/* A string through a pointer fetched by op 3: a sixth op. */
	spec.ops[5] = (struct at_fetch_op){ .src = FETCH_VAL + 3, .flags = FETCH_PAYLOAD_STR, .offset = 0 };
	spec.n_ops = 6;
	/* Ops 0, 1 and 3 read 24 bytes of one struct: one block read. */
	fetch_plan__blocks(&spec);
	ASSERT_EQ(spec.n_blocks, 1, "one block planned");
	ASSERT_TRUE(spec.ops[0].block == 1 && spec.ops[1].block == 1 &&
		    spec.ops[3].block == 1 && !spec.ops[4].block, "block members");
	s.probe_id = probe_session__attach_runtime(ps, &spec, "/proc/self/exe",
						   self_file_offset(test_runtime_call), -1);
	if (!ASSERT_GE(s.probe_id, 0, "attach runtime probe"))
		goto out;

	s.lo = mono_ns();
	for (int i = 0; i < CALLS; i++) {
		struct fake_options o = { .launch_id = i + 1000 };
		struct fake_args a = { .struct_size = sizeof(a), .executable = i,
				       .options = &o, .name = call_name(i) };

		test_runtime_call(&a);
	}

	/* A call in progress: visible in the open-span table. */
	{
		struct rt_probe_spec bspec = { .flags = RT_SPEC_RETURN };
		int bid;

		ASSERT_OK(pipe(block_pipe), "pipe");
		bid = probe_session__attach_runtime(ps, &bspec, "/proc/self/exe",
						    self_file_offset(test_blocking_call), -1);
		ASSERT_GE(bid, 0, "attach blocking probe");
		pthread_create(&th, NULL, thread_fn, &s);
		/* In the read: the probed call entered. */
		WAIT_UNTIL(, __atomic_load_n(&s.thread_tid, __ATOMIC_SEQ_CST) &&
			   test_thread_blocked_in(s.thread_tid, SYS_read), 5000,
			   "the probed call blocked in its read");
		probe_session__for_each_open(ps, on_open, &s);
		ASSERT_EQ(s.opens_seen, 1, "call in progress seen in the open table");
		check_rt_slot_collision(ps, &s, bid);
		ASSERT_EQ(write(block_pipe[1], "x", 1), 1, "unblock");
		pthread_join(th, NULL);
	}

	/* A regular file read at an offset: bytes and the file's identity.
	 * It lives beside the device node, under the device prefix: it is no
	 * character device, so it is a file, not a device. */
	snprintf(path, sizeof(path), "%sdata.bin", dev_dir);
	fd = open(path, O_CREAT | O_RDWR | O_TRUNC, 0600);
	if (ASSERT_GE(fd, 0, "create data file")) {
		char buf[4096];

		memset(buf, 7, sizeof(buf));
		for (int i = 0; i < 4; i++)
			ASSERT_EQ(write(fd, buf, sizeof(buf)), sizeof(buf), "write data");
		fstat(fd, &s.file_st);
		ASSERT_EQ(pread(fd, buf, sizeof(buf), 8192), sizeof(buf), "pread");
		if (uring) {
			/* The same read through io_uring. */
			struct io_uring ring;
			struct io_uring_cqe *cqe;

			if (ASSERT_OK(io_uring_queue_init(4, &ring, 0), "io_uring setup")) {
				io_uring_prep_read(io_uring_get_sqe(&ring), fd, buf, sizeof(buf), 4096);
				ASSERT_EQ(io_uring_submit(&ring), 1, "io_uring submit");
				if (ASSERT_OK(io_uring_wait_cqe(&ring, &cqe), "io_uring wait")) {
					ASSERT_EQ(cqe->res, (int)sizeof(buf), "io_uring read");
					io_uring_cqe_seen(&ring, cqe);
				}
				io_uring_queue_exit(&ring);
			}
		}
		close(fd);
	}

	/* A device node (a char device with /dev/null's numbers). */
	unlink(s.dev_path);
	if (ASSERT_OK(mknod(s.dev_path, S_IFCHR | 0600, makedev(1, 3)), "mknod")) {
		s.dev_fd = open(s.dev_path, O_RDWR);
		ASSERT_GE(s.dev_fd, 0, "open device node");
		for (int i = 0; i < 32; i++)
			s.ioctl_arg[i] = i * 5;
		s.ioctl_cmd = 0x4020dc0b;	/* gasket REGISTER_INTERRUPT */
		ASSERT_EQ(ioctl(s.dev_fd, s.ioctl_cmd, s.ioctl_arg), -1, "ioctl fails on /dev/null");
	}

	/* An eventfd created, signalled and read: the completion value. */
	s.efd = eventfd(0, 0);
	v = 3;
	ASSERT_EQ(write(s.efd, &v, 8), 8, "signal eventfd");
	ASSERT_EQ(read(s.efd, &v, 8), 8, "read eventfd");

	s.hi = mono_ns();
	/* The thread's exit is recorded after pthread_join returned (its tid
	 * is cleared before the exit tracepoint): drained until it came. */
	WAIT_UNTIL(ASSERT_GE(probe_session__drain(ps), 0, "drain"),
		   s.calls >= CALLS + 1 && s.pread_ok && (!uring || s.uring_ok) &&
		   s.devopen_ok && s.ioctl_ok && s.eventfd_ok && s.task_new &&
		   s.task_rename && s.task_exit, 5000, "every record of the above drained");

	ASSERT_EQ(s.calls, CALLS + 1, "runtime calls recorded (the loop's and the colliding one)");
	ASSERT_EQ(s.calls_bad, 0, "runtime call values, times and return");
	ASSERT_EQ(s.syscalls_bad, 0, "syscall records packed: no argbuf when it holds nothing");
	ASSERT_EQ(s.pread_ok, 1, "pread with bytes, offset and file identity");
	if (uring)
		ASSERT_EQ(s.uring_ok, 1, "io_uring read with bytes and file identity");
	ASSERT_EQ(s.devopen_ok, 1, "device node open matched by prefix");
	ASSERT_EQ(s.ioctl_ok, 1, "ioctl with its argument struct");
	ASSERT_EQ(s.eventfd_ok, 1, "eventfd read with its value");
	ASSERT_EQ(s.task_new, 1, "thread creation");
	ASSERT_EQ(s.task_rename, 1, "thread rename");
	ASSERT_EQ(s.task_exit, 1, "thread exit");
	check_syscall_slots(ps, &s);
	/* A block beside an unmapped page: its ops are read alone, and only
	 * the unreadable one faults. */
	{
		struct rt_probe_spec fspec = { .n_ops = 2 };
		long page = sysconf(_SC_PAGESIZE);
		char *mem = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		uint64_t *last;

		fspec.ops[0] = (struct at_fetch_op){ .src = FETCH_ARG0, .size = 8, .flags = FETCH_DEREF, .offset = 0 };
		fspec.ops[1] = (struct at_fetch_op){ .src = FETCH_ARG0, .size = 8, .flags = FETCH_DEREF, .offset = 8 };
		fetch_plan__blocks(&fspec);
		ASSERT_EQ(fspec.n_blocks, 1, "fault block planned");
		if (ASSERT_TRUE(mem != MAP_FAILED, "map two pages") &&
		    ASSERT_OK(mprotect(mem + page, page, PROT_NONE), "unmap the second")) {
			s.fault_probe_id = probe_session__attach_runtime(
				ps, &fspec, "/proc/self/exe", self_file_offset(test_fault_call), -1);
			ASSERT_GE(s.fault_probe_id, 0, "attach fault probe");
			last = (uint64_t *)(mem + page - 8);
			*last = s.fault_value = 0x5eed;
			for (int i = 0; i < FAULT_CALLS; i++)
				test_fault_call(last);
			probe_session__drain(ps);
			ASSERT_EQ(s.faulted_ok, FAULT_CALLS, "readable op kept, unreadable one faulted");
			ASSERT_EQ(s.faulted_bad, 0, "fault records as expected");
			probe_session__detach_runtime(ps, s.fault_probe_id);
		}
		if (mem != MAP_FAILED)
			munmap(mem, 2 * page);
	}

	{
		uint64_t losses[LOSS_KIND_MAX];

		probe_session__losses(ps, losses);
		for (int i = 0; i < LOSS_KIND_MAX; i++)
			ASSERT_EQ(losses[i], i == LOSS_FETCH_FAULT ? FAULT_CALLS : 0,
				  loss_kind_name(i));
	}
out:
	if (s.dev_fd >= 0)
		close(s.dev_fd);
	if (s.efd >= 0)
		close(s.efd);
	close(block_pipe[0]);
	close(block_pipe[1]);
	probe_session__free(ps);
	unlink(path);
	unlink(s.dev_path);
	rmdir(dev_dir);
}

int main(void)
{
	char dir[] = "/tmp/at-test-XXXXXX";
	struct features f;

	if (!test_require_bpf(&f))
		return TEST_SKIP;
	if (!mkdtemp(dir))
		return 1;
	run_flavour("syscall tracepoints, BTF tracepoints", &f, dir, true);
	if (f.r[FEAT_RAW_TP].available) {
		f.r[FEAT_SYSCALL_TP].available = false;
		f.r[FEAT_TP_BTF].available = false;
		/* io_uring's tracepoints are classic ones: not in this flavour. */
		run_flavour("raw tracepoints", &f, dir, false);
	} else {
		test_skip_part("no raw tracepoints here: the raw flavour not run");
	}
	rmdir(dir);
	return test_exit();
}
