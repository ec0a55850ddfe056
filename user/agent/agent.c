// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libacceltrace-agent.so: acceltrace's agent inside a traced process
 * (docs/agent.md). Loaded by CUDA's injection hook (CUDA_INJECTION64_PATH:
 * libcuda calls InitializeInjection during cuInit) or by LD_PRELOAD (then
 * it also points CUDA's hook at itself). At load it registers and nothing
 * more: one control page and one thread that sleeps on it. When acceltrace
 * wants device detail (a lease in the page) the thread turns a backend on:
 * CUPTI in a process that initialised CUDA, else the profiler extension of
 * a PJRT plugin the process loaded. CUPTI is flushed every FLUSH_NS with
 * clock pairs; a PJRT session is collected at each flush acceltrace asks
 * for and when the lease runs out, which turns the backend off again. The
 * process never waits on the agent, and nothing the agent cannot do stops
 * the process: it says so once and stays dormant.
 */
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <linux/types.h>

#include "acceltrace/agent_control.h"
#include "agent/agent_files.h"
#include "agent/agent_log.h"
#include "agent/agent_thread.h"
#include "agent/cupti_backend.h"
#include "agent/gpu_buffers.h"
#include "agent/pjrt_backend.h"
#include "agent/tpu_buffers.h"

#define EXPORT __attribute__((visibility("default")))
/* While active: CUPTI's finished buffers handed over, and a clock pair. */
#define FLUSH_NS (100 * 1000000ull)
/* While dormant: how long a missed wake-up can go unnoticed. */
#define DORMANT_WAIT_NS (1000 * 1000000ull)
#define MAX_DEVICES 64

enum backend { BACKEND_NONE, BACKEND_CUPTI, BACKEND_PJRT };

static struct agent_control *page;
static struct gpu_buffers *buffers;
static struct tpu_buffers *tpu;
static pthread_mutex_t start_lock = PTHREAD_MUTEX_INITIALIZER;
static bool started;
/* The control thread (agent_thread.h), under start_lock; pause_asked: 1
 * asked to return while dormant, 2 it is returning, 0 neither. */
static pthread_t control_thread;
static bool thread_running;
static pid_t thread_pid;	/* the process it runs in (a raw clone() runs no atfork) */
static int pause_asked;
static bool control_active;	/* atomic: a lease has a backend on */
/* CUDA called InitializeInjection: CUPTI is this process's backend. */
static bool cuda_entered;
static enum backend backend;

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void set_state(enum agent_state s)
{
	__atomic_store_n(&page->state_since_ns, mono_ns(), __ATOMIC_RELAXED);
	__atomic_store_n(&page->state, s, __ATOMIC_RELEASE);
}

/* Waits for acceltrace's wake-up of the page, at most @ns. The page is a
 * shared file mapping, so the futex is a shared one (no PRIVATE flag). */
static void wait_wake(uint32_t seen, uint64_t ns)
{
	struct timespec ts = { .tv_sec = (time_t)(ns / 1000000000ull),
			       .tv_nsec = (long)(ns % 1000000000ull) };

	syscall(SYS_futex, &page->wake, FUTEX_WAIT, seen, &ts, NULL, 0);
}

/* A driver function: from the global scope (where the H100 runs found
 * them), else from libcuda by name (a loader that opened it
 * RTLD_LOCAL). */
static void *driver_sym(const char *name)
{
	void *f = dlsym(RTLD_DEFAULT, name), *cuda;

	if (f)
		return f;
	cuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
	if (!cuda)
		return NULL;
	f = dlsym(cuda, name);
	dlclose(cuda);	/* a reference dropped: it stays loaded */
	return f;
}

/* The process's GPUs, from the driver that loaded us (libcuda). */
static unsigned int list_devices(struct gpu_device_info *info, unsigned int max)
{
	int (*get_count)(int *) = (int (*)(int *))driver_sym("cuDeviceGetCount");
	int (*get)(int *, int) = (int (*)(int *, int))driver_sym("cuDeviceGet");
	int (*get_name)(char *, int, int) = (int (*)(char *, int, int))driver_sym("cuDeviceGetName");
	int n = 0, dev, err = -1;

	if (get_count)
		err = get_count(&n);
	if (err || n <= 0) {
		agent_debug("no device count from the driver (%s, %d): one buffer",
			    get_count ? "error" : "no cuDeviceGetCount", err);
		return 1;	/* records of other devices are refused */
	}
	if ((unsigned int)n > max)
		n = (int)max;
	for (int i = 0; i < n; i++) {
		memset(info[i].name, 0, sizeof(info[i].name));
		if (!get || !get_name || get(&dev, i) ||
		    get_name(info[i].name, (int)sizeof(info[i].name) - 1, dev))
			strcpy(info[i].name, "GPU");
	}
	return (unsigned int)n;
}

static bool make_buffers(void)
{
	struct gpu_device_info info[MAX_DEVICES];
	uint64_t dev_ts, host_ns;
	unsigned int n;
	int err;

	if (buffers)
		return true;
	memset(info, 0, sizeof(info));
	strcpy(info[0].name, "GPU");
	n = list_devices(info, MAX_DEVICES);
	/* The buffers' first pair: a wide one is still the best there is,
	 * and the pairs that follow outvote it. */
	err = cupti_backend_clock_pair(&dev_ts, &host_ns);
	if (err && err != -EAGAIN)
		return false;
	buffers = gpu_buffers__new(n, info, dev_ts, host_ns);
	if (!buffers) {
		agent_say(AGENT_P_BUFFERS, "no devtrace buffer for the GPUs: %s "
			  "(ACCELTRACE_AGENT_DIR names where they go)", strerror(errno));
		return false;
	}
	__atomic_store_n(&page->buffers, n, __ATOMIC_RELAXED);
	return true;
}

static void clock_pair(void)
{
	uint64_t dev_ts, host_ns;

	if (!cupti_backend_clock_pair(&dev_ts, &host_ns))
		gpu_buffers__clock_sync(buffers, dev_ts, host_ns);
}

static enum agent_state activate_cupti(void)
{
	if (cupti_backend_load() || !make_buffers() || cupti_backend_start(buffers))
		return AGENT_STATE_UNAVAILABLE;
	clock_pair();
	backend = BACKEND_CUPTI;
	return AGENT_STATE_ACTIVE;
}

static void publish_counts(void)
{
	__atomic_store_n(&page->records, gpu_buffers__records(buffers) +
			 tpu_buffers__records(tpu), __ATOMIC_RELAXED);
	__atomic_store_n(&page->runtime_dropped, cupti_backend_dropped() +
			 pjrt_backend_dropped(), __ATOMIC_RELAXED);
	__atomic_store_n(&page->incomplete, cupti_backend_incomplete(), __ATOMIC_RELAXED);
	if (tpu)
		__atomic_store_n(&page->buffers, tpu_buffers__count(tpu), __ATOMIC_RELAXED);
}

/* Without CUDA: a PJRT plugin's profiler, once the process loaded one. */
static enum agent_state activate_pjrt(void)
{
	int err = pjrt_backend_find();

	/* A plugin whose device writes its own devtrace buffers (as the
	 * simulator's does) is read from them, not asked twice. */
	if (err == -ENOENT || pjrt_backend_device_traced(tpu))
		return AGENT_STATE_NO_RUNTIME;
	if (err) {
		agent_say(AGENT_P_PJRT, "the PJRT plugin %s has no profiler extension: no "
			  "device timeline from it", pjrt_backend_plugin());
		return AGENT_STATE_UNAVAILABLE;
	}
	if (!tpu && !(tpu = tpu_buffers__new("TPU")))
		return AGENT_STATE_UNAVAILABLE;
	if (pjrt_backend_start(tpu))
		return AGENT_STATE_UNAVAILABLE;
	backend = BACKEND_PJRT;
	return AGENT_STATE_ACTIVE;
}

/* The state it took: ACTIVE, or why not. */
static enum agent_state activate(void)
{
	enum agent_state st = cuda_entered ? activate_cupti() : activate_pjrt();

	if (st != AGENT_STATE_ACTIVE)
		return st;
	__atomic_add_fetch(&page->activations, 1, __ATOMIC_RELAXED);
	publish_counts();	/* its buffers, before it says it is on */
	set_state(AGENT_STATE_ACTIVE);
	agent_debug("active (%s)", backend == BACKEND_CUPTI ? "CUPTI" : "PJRT profiler");
	return st;
}

static void deactivate(void)
{
	if (backend == BACKEND_CUPTI) {
		cupti_backend_stop();
		clock_pair();
	} else if (backend == BACKEND_PJRT) {
		pjrt_backend_collect(false);
	}
	backend = BACKEND_NONE;
	set_state(AGENT_STATE_DORMANT);
	agent_debug("dormant");
}


/* acceltrace closing a window asks for everything CUPTI holds, finished
 * buffers or not, so that the window's last kernels are in the file. */
static void flush_if_asked(bool active)
{
	uint32_t req = __atomic_load_n(&page->flush_request, __ATOMIC_ACQUIRE);

	if (req == __atomic_load_n(&page->flush_done, __ATOMIC_RELAXED))
		return;
	if (active && backend == BACKEND_CUPTI) {
		cupti_backend_flush(true);
		clock_pair();
	} else if (active && backend == BACKEND_PJRT) {
		/* The session's records so far; a new one goes on. */
		pjrt_backend_collect(true);
	}
	if (active)
		publish_counts();
	__atomic_store_n(&page->flush_done, req, __ATOMIC_RELEASE);
}

static void *control_loop(void *arg)
{
	uint64_t failed_lease = 0, next_flush = 0;
	bool active = false;

	(void)arg;
	for (;;) {
		uint32_t wake = __atomic_load_n(&page->wake, __ATOMIC_ACQUIRE);
		int ask = 1;

		/* Paused (agent_pause_thread): only while dormant, whatever
		 * a lease says now; it asks again when it resumes it. */
		if (!active && __atomic_compare_exchange_n(&pause_asked, &ask, 2, false,
							   __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
			return NULL;
		uint64_t lease = __atomic_load_n(&page->lease_until_ns, __ATOMIC_ACQUIRE);
		uint64_t now = mono_ns();
		bool want = lease > now;

		if (want && !active && lease != failed_lease) {
			enum agent_state st = activate();

			active = st == AGENT_STATE_ACTIVE;
			__atomic_store_n(&control_active, active, __ATOMIC_RELEASE);
			if (!active) {
				/* Tried for this lease; a new one (each renewal)
				 * tries again: a plugin may load later. */
				failed_lease = lease;
				set_state(st);
			}
			next_flush = now + FLUSH_NS;
		} else if (!want && active) {
			deactivate();
			active = false;
			__atomic_store_n(&control_active, false, __ATOMIC_RELEASE);
			publish_counts();
		}
		flush_if_asked(active);
		if (active && backend == BACKEND_CUPTI && now >= next_flush) {
			cupti_backend_flush(false);
			clock_pair();
			publish_counts();
			next_flush = now + FLUSH_NS;
		}
		if (active)
			wait_wake(wake, next_flush > now ? next_flush - now : 1);
		else
			wait_wake(wake, DORMANT_WAIT_NS);
	}
	return NULL;
}

/* The control thread, joinable (agent_pause_thread waits for it); under
 * start_lock. */
static int start_thread(void)
{
	pthread_attr_t attr;
	sigset_t all, old;
	int err;

	/* The thread takes no signal meant for the process's own threads. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 256 << 10);
	err = pthread_create(&control_thread, &attr, control_loop, NULL);
	pthread_attr_destroy(&attr);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err)
		return err;
	thread_running = true;
	thread_pid = getpid();
	pthread_setname_np(control_thread, "acceltrace-agt");
	return 0;
}

bool agent_pause_thread(void)
{
	struct timespec until;
	bool stopped = false;
	int ask = 1;

	pthread_mutex_lock(&start_lock);
	/* None here (a raw clone()'s child has the parent's variables, not
	 * its thread), or active: a lease keeps it, at once. */
	if (!thread_running || !page || thread_pid != getpid() ||
	    __atomic_load_n(&control_active, __ATOMIC_ACQUIRE)) {
		pthread_mutex_unlock(&start_lock);
		return false;
	}
	__atomic_store_n(&pause_asked, 1, __ATOMIC_RELEASE);
	__atomic_add_fetch(&page->wake, 1, __ATOMIC_RELEASE);
	syscall(SYS_futex, &page->wake, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_nsec += 200 * 1000000L;
	if (until.tv_nsec >= 1000000000L) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000L;
	}
	if (!pthread_timedjoin_np(control_thread, NULL, &until)) {
		stopped = true;
	} else if (!__atomic_compare_exchange_n(&pause_asked, &ask, 0, false,
						 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
		/* It took the ask as the time ran out: it is returning. */
		pthread_join(control_thread, NULL);
		stopped = true;
	}
	/* Still running: active (a lease), and so it stays. */
	if (stopped)
		thread_running = false;
	__atomic_store_n(&pause_asked, 0, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&start_lock);
	return stopped;
}

void agent_resume_thread(void)
{
	int err;

	pthread_mutex_lock(&start_lock);
	if (!thread_running && page) {
		err = start_thread();
		if (err)
			agent_say(AGENT_P_THREAD, "no control thread after a namespace change (%s): "
				  "device detail stays off", strerror(err));
	}
	pthread_mutex_unlock(&start_lock);
}

/* The page and the thread: once per process, whichever entry comes. */
static void start_agent(void)
{
	int err;

	page = agent_map_new_file("control", AGENT_CONTROL_SIZE);
	if (!page) {
		agent_say(AGENT_P_CONTROL, "no control page (%s): acceltrace cannot turn device "
			  "detail on in this process", strerror(errno));
		return;
	}
	page->version = AGENT_CONTROL_VERSION;
	page->size = AGENT_CONTROL_SIZE;
	page->pid = (__u32)getpid();
	page->backends = AGENT_BACKEND_CUPTI | AGENT_BACKEND_PJRT;
	page->state = AGENT_STATE_DORMANT;
	page->state_since_ns = mono_ns();
	__atomic_store_n(&page->magic, AGENT_CONTROL_MAGIC, __ATOMIC_RELEASE);
	agent_log_set_page(page);

	err = start_thread();
	if (err) {
		agent_say(AGENT_P_THREAD, "no control thread (%s): device detail stays off",
			  strerror(err));
		return;
	}
	agent_debug("dormant, control page in place");
}

/*
 * A forked child (a DataLoader worker) shares the parent's page and
 * buffers but not its thread: it lets them go, so that acceltrace does not
 * take the parent's page for the child's, and starts afresh if the child
 * itself initialises CUDA.
 */
static void in_child(void)
{
	cupti_backend_forget();
	pjrt_backend_forget();
	if (page)
		munmap(page, AGENT_CONTROL_SIZE);
	page = NULL;
	agent_log_set_page(NULL);
	/* No CUPTI thread runs here (fork copies the calling thread only),
	 * and records no longer come to them: let go. */
	gpu_buffers__drop(buffers);
	buffers = NULL;
	tpu_buffers__drop(tpu);
	tpu = NULL;
	backend = BACKEND_NONE;
	started = false;
	thread_running = false;	/* fork copies the calling thread only */
	pause_asked = 0;
	control_active = false;
	pthread_mutex_init(&start_lock, NULL);
}

/* CUDA's injection entry: libcuda calls it from cuInit. Nonzero: loaded. */
EXPORT int InitializeInjection(void)
{
	pthread_mutex_lock(&start_lock);
	__atomic_store_n(&cuda_entered, true, __ATOMIC_RELEASE);
	if (!started) {
		started = true;
		pthread_atfork(NULL, NULL, in_child);
		start_agent();
	}
	pthread_mutex_unlock(&start_lock);
	return 1;
}

/*
 * Loaded by LD_PRELOAD: registers (the page and the sleeping thread), so
 * that a PJRT plugin the process loads later can be asked for its device
 * timeline, and points CUDA's injection hook at this library, so that a
 * later cuInit makes CUPTI the backend (an injection library set already
 * is kept). Loaded by CUDA's hook instead, the constructor finds
 * CUDA_INJECTION64_PATH set and leaves the start to InitializeInjection.
 */
__attribute__((constructor)) static void on_load(void)
{
	Dl_info self;

	if (getenv("CUDA_INJECTION64_PATH"))
		goto start;
	if (dladdr((void *)on_load, &self) && self.dli_fname && self.dli_fname[0] == '/')
		setenv("CUDA_INJECTION64_PATH", self.dli_fname, 0);
start:
	pthread_mutex_lock(&start_lock);
	if (!started) {
		started = true;
		pthread_atfork(NULL, NULL, in_child);
		start_agent();
	}
	pthread_mutex_unlock(&start_lock);
}
