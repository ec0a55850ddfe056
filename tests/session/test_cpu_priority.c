// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The daemon's CPU priority: idle while it keeps up, normal for a while once
 * starved (its run delay half of a second or more), and applied to every
 * thread of the process.
 */
#include <pthread.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "test.h"
#include "session/cpu_priority.h"

#define MS 1000000ull
#define S (1000 * MS)
#define T0 (1000 * S)

static struct cpu_priority usable(void)
{
	struct cpu_priority cp = { .want_idle = true, .usable = true };

	return cp;
}

static void test_decide(void)
{
	struct cpu_priority cp = usable();
	uint64_t t = T0, delay = 7 * S;	/* what the process waited before */

	ASSERT_TRUE(cpu_priority__decide(&cp, t, delay), "idle from the start");
	/* Preempted now and then: a tenth of each second waiting. */
	for (int i = 0; i < 5; i++) {
		t += S;
		delay += 100 * MS;
		ASSERT_TRUE(cpu_priority__decide(&cp, t, delay), "keeping up: idle");
	}
	ASSERT_EQ(cp.starved, 0, "never starved");
	/* Checked once a second: a burst within it waits for the check. */
	delay += 900 * MS;
	ASSERT_TRUE(cpu_priority__decide(&cp, t + 500 * MS, delay), "mid-check: no change");
	t += S;
	ASSERT_FALSE(cpu_priority__decide(&cp, t, delay), "half the second waiting: normal");
	ASSERT_EQ(cp.starved, 1, "counted");
	/* Normal through the hold, whatever the delay then. */
	t += S;
	ASSERT_FALSE(cpu_priority__decide(&cp, t, delay + S), "held at normal");
	t += CPU_PRIORITY_STARVED_HOLD_NS - 2 * S;
	ASSERT_FALSE(cpu_priority__decide(&cp, t, delay + S), "to the hold's end");
	ASSERT_EQ(cp.starved, 1, "no new starvation counted while normal");
	t += S;
	ASSERT_TRUE(cpu_priority__decide(&cp, t, delay + S), "then idle again");
	/* Starved again at once: normal again. */
	t += S;
	ASSERT_FALSE(cpu_priority__decide(&cp, t, delay + 2 * S), "starved again");
	ASSERT_EQ(cp.starved, 2, "counted again");
}

static void test_not_wanted(void)
{
	struct cpu_priority cp = usable();

	cp.want_idle = false;
	ASSERT_FALSE(cpu_priority__decide(&cp, T0, 0), "cpu-priority normal");
	cp = usable();
	cp.usable = false;
	ASSERT_FALSE(cpu_priority__decide(&cp, T0, 0), "no way back from idle: normal");
	/* A counter that went back (a check across a restart) is a new start,
	 * not a huge delay. */
	cp = usable();
	ASSERT_TRUE(cpu_priority__decide(&cp, T0, 5 * S), "first look");
	ASSERT_TRUE(cpu_priority__decide(&cp, T0 + S, 1 * S), "delay went back: afresh");
	ASSERT_EQ(cp.starved, 0, "not starved");
}

static int policy_of(pid_t tid)
{
	return sched_getscheduler(tid);
}

static pid_t worker_tid;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t done = PTHREAD_COND_INITIALIZER;
static int finish;

static void *worker(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&lock);
	worker_tid = syscall(SYS_gettid);
	pthread_cond_broadcast(&done);
	while (!finish)
		pthread_cond_wait(&done, &lock);
	pthread_mutex_unlock(&lock);
	return NULL;
}

/* Every thread, not only the caller: the metrics server's runs too. */
static void test_apply(void)
{
	pthread_t th;

	pthread_create(&th, NULL, worker, NULL);
	pthread_mutex_lock(&lock);
	while (!worker_tid)
		pthread_cond_wait(&done, &lock);
	pthread_mutex_unlock(&lock);

	ASSERT_OK(cpu_priority__apply(true), "to idle");
	ASSERT_EQ(policy_of(0), SCHED_IDLE, "the caller idle");
	ASSERT_EQ(policy_of(worker_tid), SCHED_IDLE, "the other thread idle");
	/* Back needs CAP_SYS_NICE: the tests run as root. */
	ASSERT_OK(cpu_priority__apply(false), "back to normal");
	ASSERT_EQ(policy_of(0), SCHED_OTHER, "the caller normal");
	ASSERT_EQ(policy_of(worker_tid), SCHED_OTHER, "the other thread normal");

	pthread_mutex_lock(&lock);
	finish = 1;
	pthread_cond_broadcast(&done);
	pthread_mutex_unlock(&lock);
	pthread_join(th, NULL);
}

/* init reads what this machine allows: as root, idle and usable. */
static void test_init(void)
{
	struct cpu_priority cp;

	cpu_priority__init(&cp, true, T0);
	ASSERT_TRUE(cp.usable, "schedstat and CAP_SYS_NICE here");
	ASSERT_TRUE(cp.idle, "idle");
	ASSERT_EQ(policy_of(0), SCHED_IDLE, "applied");
	cpu_priority__configure(&cp, false, T0 + S);
	ASSERT_FALSE(cp.idle, "a reload to normal");
	ASSERT_EQ(policy_of(0), SCHED_OTHER, "applied");
}

int main(void)
{
	test_decide();
	test_not_wanted();
	test_apply();
	test_init();
	return test_exit();
}
