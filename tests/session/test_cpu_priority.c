// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The daemon's CPU priority: idle while it keeps up, normal for a while once
 * starved (its run delay half of a check's span or more, or records lost
 * to full ring buffers), and applied to every thread of the process.
 */
#include <pthread.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "test.h"
#include "discover/procfs.h"
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
	const uint64_t C = CPU_PRIORITY_CHECK_NS;

	ASSERT_TRUE(cpu_priority__decide(&cp, t, delay), "idle from the start");
	/* Preempted now and then: a tenth of each check's span waiting. */
	for (int i = 0; i < 5; i++) {
		t += C;
		delay += C / 10;
		ASSERT_TRUE(cpu_priority__decide(&cp, t, delay), "keeping up: idle");
	}
	ASSERT_EQ(cp.starved, 0, "never starved");
	/* Checked every C: a burst within it waits for the check. */
	delay += C * 9 / 10;
	ASSERT_TRUE(cpu_priority__decide(&cp, t + C / 2, delay), "mid-check: no change");
	t += C;
	ASSERT_FALSE(cpu_priority__decide(&cp, t, delay), "half the span waiting: normal");
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
	t += C;
	ASSERT_FALSE(cpu_priority__decide(&cp, t, delay + S + C), "starved again");
	ASSERT_EQ(cp.starved, 2, "counted again");
}

/* The rings turned records away: normal at once, for the hold; losses
 * already seen change nothing. */
static void test_note_lost(void)
{
	struct cpu_priority cp = usable();

	cp.idle = true;
	cpu_priority__note_lost(&cp, T0, 0);
	ASSERT_TRUE(cp.idle && !cp.starved, "no loss: still idle");
	/* (set_idle applies the policy for real: this process may take
	 * normal back, being root or at nice 0; elsewhere it is said.) */
	cpu_priority__note_lost(&cp, T0 + MS, 12);
	ASSERT_EQ(cp.starved, 1, "a loss: counted as starved");
	ASSERT_EQ(cp.normal_until_ns, T0 + MS + CPU_PRIORITY_STARVED_HOLD_NS, "held normal");
	ASSERT_FALSE(cpu_priority__decide(&cp, T0 + 2 * MS, 0), "normal through the hold");
	cpu_priority__note_lost(&cp, T0 + 3 * MS, 12);
	ASSERT_EQ(cp.starved, 1, "the same losses again: nothing new");
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

static double pressure_pct;

static int fake_pressure(double *some)
{
	*some = pressure_pct;
	return 0;
}

/* configure reads what this machine allows: as root, idle and usable. */
static void test_init(void)
{
	struct cpu_priority cp = { .cpu_pressure = fake_pressure };

	pressure_pct = 3;
	cpu_priority__configure(&cp, true, T0);
	ASSERT_TRUE(cp.usable, "schedstat and CAP_SYS_NICE here");
	ASSERT_TRUE(cp.idle, "idle");
	ASSERT_EQ(policy_of(0), SCHED_IDLE, "applied");
	cpu_priority__configure(&cp, false, T0 + S);
	ASSERT_FALSE(cp.idle, "a reload to normal");
	ASSERT_EQ(policy_of(0), SCHED_OTHER, "applied");
}

/* A host whose CPUs are all busy: no yield, counted as starved, held
 * normal; once the hold is over and the host quiet, idle. */
static void test_busy_host(void)
{
	struct cpu_priority cp = { .cpu_pressure = fake_pressure };

	pressure_pct = 61.9;
	cpu_priority__configure(&cp, true, T0);
	ASSERT_TRUE(cp.usable, "usable here");
	ASSERT_FALSE(cp.idle, "busy host: normal");
	ASSERT_EQ(cp.starved, 1, "counted starved");
	ASSERT_EQ(policy_of(0), SCHED_OTHER, "applied");
	pressure_pct = 2;
	cpu_priority__poll(&cp, T0 + CPU_PRIORITY_STARVED_HOLD_NS + S);
	ASSERT_TRUE(cp.idle, "the hold over, a quiet host: idle");
	cpu_priority__configure(&cp, false, T0 + CPU_PRIORITY_STARVED_HOLD_NS + 2 * S);
	ASSERT_FALSE(cp.idle, "back to normal");
	ASSERT_OK(procfs_parse_cpu_pressure("some avg10=61.91 avg60=50.52 avg300=27.53 "
					    "total=547029699\nfull avg10=0.00\n", &pressure_pct),
		  "PSI's cpu line");
	ASSERT_TRUE(pressure_pct > 61.9 && pressure_pct < 61.92, "its avg10");
	ASSERT_EQ(procfs_parse_cpu_pressure("full avg10=1.00", &pressure_pct), -EINVAL,
		  "no some line");
	ASSERT_EQ(procfs_parse_cpu_pressure("some avg10=nan", &pressure_pct), -EINVAL,
		  "no number");
}

int main(void)
{
	test_decide();
	test_note_lost();
	test_not_wanted();
	test_apply();
	test_init();
	test_busy_host();
	return test_exit();
}
