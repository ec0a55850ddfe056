// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The daemon's settings: defaults, the file, flags winning, bad input. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test.h"
#include "daemon/daemon_config.h"

static char *write_file(const char *text)
{
	static char path[] = "/tmp/at-daemon-config-XXXXXX";
	int fd;

	strcpy(path, "/tmp/at-daemon-config-XXXXXX");
	fd = mkstemp(path);
	if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text))
		return NULL;
	close(fd);
	return path;
}

static void test_defaults(void)
{
	struct daemon_config c;

	daemon_config__defaults(&c);
	ASSERT_STREQ(c.listen, "127.0.0.1:9464", "listen default");
	ASSERT_STREQ(c.socket, "/run/acceltrace/daemon.sock", "socket default");
	ASSERT_EQ(c.flight_recorder_ns, 60000000000ull, "60 s flight recorder");
	ASSERT_TRUE(c.rules.on_crash, "crash rule on by default");
	ASSERT_EQ(c.rules.step_time_over_ns, 0, "threshold rule off by default");
	ASSERT_FALSE(c.detail_full, "sampled detail by default");
	ASSERT_EQ(c.detail_interval_ns, 30000000000ull, "a slice every 30 s");
	ASSERT_EQ(c.detail_slice_ns, 1000000000ull, "of 1 s");
	ASSERT_TRUE(c.cpu_idle, "cpu-priority idle by default");
	ASSERT_EQ(c.mem_tiers.n, 0, "the timeline's own tiers by default");
}

/* Short tiers for tests; a flag's are kept over a reload (all of them, not
 * the first bytes). */
static void test_memory_tiers(void)
{
	struct daemon_config flags, c;
	char err[256] = "";
	char *path;

	daemon_config__defaults(&flags);
	ASSERT_OK(daemon_config__set(&flags, "memory-timeline-tiers", "1s:60,10s:30,1m:4", true,
				     err, sizeof(err)), err);
	ASSERT_EQ(flags.mem_tiers.n, 3, "three tiers");
	ASSERT_EQ(flags.mem_tiers.t[1].resolution_ns, 10000000000ull, "10 s");
	ASSERT_EQ(flags.mem_tiers.t[2].points, 4, "4 points");
	path = write_file("memory-timeline-tiers = 1s:5\ncpu-priority = normal\n");
	if (!ASSERT_OK_PTR(path, "config file"))
		return;
	ASSERT_OK(daemon_config__load(path, &flags, &c, err, sizeof(err)), err);
	ASSERT_EQ(c.mem_tiers.n, 3, "the flag's tiers win");
	ASSERT_EQ(c.mem_tiers.t[2].resolution_ns, 60000000000ull, "whole");
	ASSERT_FALSE(c.cpu_idle, "the file's other keys stay");
	unlink(path);
	ASSERT_OK(daemon_config__set(&flags, "memory-timeline-tiers", "default", false, err,
				     sizeof(err)), err);
	ASSERT_EQ(flags.mem_tiers.n, 0, "back to the defaults");
}

static void test_file_and_flags(void)
{
	struct daemon_config flags, c;
	char err[256] = "";
	char *path;

	daemon_config__defaults(&flags);
	ASSERT_OK(daemon_config__set(&flags, "flight-recorder", "30s", true, err, sizeof(err)),
		  "flag");
	path = write_file("# a comment\n"
			  "flight-recorder = 90s   # the flag wins\n"
			  "  logdir=/var/tmp/at-logs\n"
			  "\n"
			  "rule-step-time-factor = 3.5\n"
			  "rule-device-stall = 2s\n"
			  "rule-crash = no\n"
			  "listen = [::1]:9000\n"
			  "detail = full\n"
			  "detail-interval = 10s\n"
			  "detail-slice = 0\n"
			  "cpu-priority = normal\n");
	if (!ASSERT_OK_PTR(path, "config file"))
		return;
	ASSERT_OK(daemon_config__load(path, &flags, &c, err, sizeof(err)), err);
	ASSERT_EQ(c.flight_recorder_ns, 30000000000ull, "the flag wins over the file");
	ASSERT_STREQ(c.logdir, "/var/tmp/at-logs", "logdir from the file");
	ASSERT_TRUE(c.rules.step_time_factor == 3.5, "factor");
	ASSERT_EQ(c.rules.device_stall_ns, 2000000000ull, "stall");
	ASSERT_FALSE(c.rules.on_crash, "crash rule off");
	ASSERT_STREQ(c.listen, "[::1]:9000", "IPv6 listen");
	ASSERT_TRUE(c.detail_full, "detail full");
	ASSERT_EQ(c.detail_interval_ns, 10000000000ull, "detail interval");
	ASSERT_EQ(c.detail_slice_ns, 0, "no slices");
	ASSERT_FALSE(c.cpu_idle, "cpu-priority normal");
	unlink(path);
}

static void expect_bad(const char *text, const char *needle)
{
	struct daemon_config flags, c;
	char err[256] = "";
	char *path = write_file(text);

	daemon_config__defaults(&flags);
	daemon_config__defaults(&c);
	snprintf(c.logdir, sizeof(c.logdir), "untouched");
	if (!ASSERT_OK_PTR(path, "config file"))
		return;
	ASSERT_NEQ(daemon_config__load(path, &flags, &c, err, sizeof(err)), 0, text);
	ASSERT_STRCONTAINS(err, needle, "the error says why");
	ASSERT_STRCONTAINS(err, path, "and names the file");
	ASSERT_STREQ(c.logdir, "untouched", "a bad file changes nothing");
	unlink(path);
}

static void test_bad_input(void)
{
	struct daemon_config flags, c;
	char err[256];

	expect_bad("logdir = /x\nflight-recorder = soon\n", ":2: flight-recorder");
	expect_bad("no-such-key = 1\n", "unknown key 'no-such-key'");
	expect_bad("just words\n", "expected 'key = value'");
	expect_bad("listen = localhost\n", "ADDR:PORT");
	expect_bad("listen = 127.0.0.1:70000\n", "ADDR:PORT");
	expect_bad("rule-step-time-factor = 0.5\n", "factor over 1");
	expect_bad("logdir = /a b\n", "without spaces");
	expect_bad("flight-recorder = 100ms\n", "at least 1s");
	expect_bad("detail = some\n", "sampled or full");
	expect_bad("cpu-priority = low\n", "idle or normal");
	expect_bad("detail-interval = 500ms\n", "at least 1s");
	expect_bad("memory-timeline-tiers = 10s:60,1s:60\n", "coarser than the last");
	expect_bad("memory-timeline-tiers = 1s:60,1500ms:60\n", "a multiple of it");
	expect_bad("memory-timeline-tiers = 1s\n", "RESOLUTION:POINTS");
	expect_bad("memory-timeline-tiers = 1s:0\n", "RESOLUTION:POINTS");
	expect_bad("memory-timeline-tiers = 1us:10\n", "at least 1ms");
	expect_bad("memory-timeline-tiers = 1s:1,2s:1,4s:1,8s:1,16s:1,32s:1,64s:1\n",
		   "at most 6 tiers");
	daemon_config__defaults(&flags);
	ASSERT_EQ(daemon_config__load("/nonexistent/at.conf", &flags, &c, err, sizeof(err)),
		  -ENOENT, "missing file");
	ASSERT_STRCONTAINS(err, "/nonexistent/at.conf", "names the missing file");
}

int main(void)
{
	test_defaults();
	test_file_and_flags();
	test_memory_tiers();
	test_bad_input();
	return test_exit();
}
