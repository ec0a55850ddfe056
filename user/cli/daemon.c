// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * acceltrace daemon: the always-on host daemon, in the foreground (systemd
 * and Kubernetes supervise it). Here: options and the configuration file
 * become the daemon's settings, signals are counted; daemon/daemon.c runs.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#define LOG_CONTEXT "daemon"
#include "lib/log.h"
#include "cli/cli.h"
#include "daemon/daemon.h"
#include "daemon/daemon_config.h"

void usage_daemon(FILE *out)
{
	fprintf(out,
		"Usage: acceltrace daemon [options]\n"
		"\n"
		"Watches every accelerator user on this host (processes that start and stop,\n"
		"late loads, containers), or only those of one cgroup (--cgroup), keeps the\n"
		"last N seconds in a flight recorder, writes a capture when triggered, and\n"
		"exports Prometheus metrics. Runs in the foreground. Signals: SIGTERM/SIGINT\n"
		"finish a capture in progress and stop; SIGHUP reloads the configuration\n"
		"file; SIGUSR1 triggers a capture.\n"
		"\n"
		"Options (each also a key of the configuration file; flags win):\n"
		"  -c, --config FILE             'key = value' lines, '#' comments\n"
		"      --listen ADDR:PORT        metrics over HTTP, or 'off'\n"
		"                                (default " DAEMON_DEFAULT_LISTEN ")\n"
		"      --profiler-listen ADDR:PORT  XProf's ProfilerService (gRPC: TensorBoard's\n"
		"                                Capture Profile, capture_tpu_profile,\n"
		"                                jax.collect_profile), or 'off'; port 0: any\n"
		"                                (default " DAEMON_DEFAULT_PROFILER_LISTEN "). No\n"
		"                                authentication: whoever reaches it can make\n"
		"                                captures (docs/profiler-service.md)\n"
		"      --profiler-roots DIRS     repository roots a Profile may write under\n"
		"                                besides the logdir, ':'-separated absolute\n"
		"                                paths or bucket prefixes (gs://B/P, s3://B/P)\n"
		"      --socket PATH             control socket, root only\n"
		"                                (default " DAEMON_DEFAULT_SOCKET ")\n"
		"  -o, --logdir DIR              where captures go, as record's:\n"
		"                                DIR/plugins/profile/SESSION/HOST.xplane.pb;\n"
		"                                a bucket, gs://B/P or s3://B/P, through the\n"
		"                                spool (docs/buckets.md)\n"
		"                                (default " DAEMON_DEFAULT_LOGDIR ")\n"
		"      --cgroup PATH             watch only the processes inside this cgroup v2\n"
		"                                directory's subtree (absolute, or relative to\n"
		"                                /sys/fs/cgroup): a container's or a pod's daemon\n"
		"                                (default: every process on the host)\n"
		"      --flight-recorder TIME    how far back a capture reaches (default 60s)\n"
		"      --max-events N            the flight recorder's span budget (default 1000000)\n"
		"      --textfile PATH           also write the metrics there for node_exporter's\n"
		"                                textfile collector\n"
		"      --textfile-interval TIME  how often (default 15s)\n"
		"      --grace TIME              after a capture's stop, wait for host calls still\n"
		"                                open to end (default 0: drawn to the stop)\n"
		"      --max-trigger-duration T  the longest window a trigger may ask (default 10m)\n"
		"      --profile-quota-captures N, --profile-quota-bytes SIZE,\n"
		"      --profile-quota-detail T  what one ProfilerService client (a local user\n"
		"                                on loopback, an address elsewhere) may take\n"
		"                                of a logdir an hour: captures (default 30),\n"
		"                                bytes (4G), full detail (20m); 0: no limit;\n"
		"                                past one, RESOURCE_EXHAUSTED\n"
		"Cost (core probes always; detail, the high-rate probes, attached only in\n"
		"slices and in a trigger's window after it):\n"
		"      --detail sampled|full     full: detail always, as record (default sampled)\n"
		"      --detail-interval TIME    a detail slice this often (default 30s)\n"
		"      --detail-slice TIME       each slice this long; 0: only after\n"
		"                                triggers (default 1s)\n"
		"      --cpu-priority P          idle: the daemon under SCHED_IDLE while it\n"
		"                                keeps up, normal for 30 s when starved of CPU\n"
		"                                (needs CAP_SYS_NICE); or normal (default idle)\n"
		"      --memory-timeline-tiers T device-memory timelines' RESOLUTION:POINTS,...\n"
		"                                finest first (default 1s:600,10s:1080,1m:1440,\n"
		"                                10m:4320: 10 min at 1 s ... 30 days at 10 min)\n"
		"Rules (a capture without anyone asking; the first three off unless set):\n"
		"      --rule-step-time-over TIME    a step slower than TIME\n"
		"      --rule-step-time-factor K     a step over K x its process's recent median\n"
		"      --rule-device-stall TIME      work enqueued, no completion for TIME\n"
		"      --rule-crash BOOL             a traced process killed by a signal\n"
		"                                    (default true)\n"
		"      --rule-duration TIME          window after a rule's trigger (default 0)\n"
		"      --rule-cooldown TIME          between two rule triggers (default 5m)\n"
		"\n"
		"Exit status: 0 after SIGTERM/SIGINT; 1 when it could not start; 2 on a\n"
		"usage error.\n"
		"\n"
		"Options:\n"
		CLI_COMMON_HELP
		"\n"
		"Examples:\n"
		"  acceltrace daemon\n"
		"  acceltrace daemon --config /etc/acceltrace/daemon.conf\n"
		"  acceltrace daemon --flight-recorder 30s --listen 0.0.0.0:9464\n"
		"  acceltrace daemon --cgroup kubepods.slice/kubepods-pod1234.slice\n"
		"  acceltrace daemon --logdir /shared/logs --profiler-listen 0.0.0.0:8466\n"
		"      then TensorBoard --logdir /shared/logs, Capture Profile, host:8466\n");
}

static volatile sig_atomic_t stops, reloads, triggers;
/* When the first stop signal came: a capture in progress ends there, not
 * when the loop next looks (a 64-bit store, atomic on the 64-bit targets
 * acceltrace supports; clock_gettime is async-signal-safe). */
static volatile uint64_t stop_at_ns;

static void on_signal(int sig)
{
	struct timespec ts;

	if (sig == SIGHUP) {
		reloads++;
	} else if (sig == SIGUSR1) {
		triggers++;
	} else {
		if (!stop_at_ns && !clock_gettime(CLOCK_MONOTONIC, &ts))
			stop_at_ns = (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
		stops++;
	}
}

static void install_signals(void)
{
	struct sigaction sa = { .sa_handler = on_signal };

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	sigaction(SIGUSR1, &sa, NULL);
}

int cmd_daemon(int argc, char **argv)
{
	enum { OPT_KEY = 256 };
	/* Every option but --config is a key of the configuration file. */
	static const struct option longopts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "logdir", required_argument, NULL, 'o' },
		{ "listen", required_argument, NULL, OPT_KEY },
		{ "profiler-listen", required_argument, NULL, OPT_KEY },
		{ "profiler-roots", required_argument, NULL, OPT_KEY },
		{ "socket", required_argument, NULL, OPT_KEY },
		{ "flight-recorder", required_argument, NULL, OPT_KEY },
		{ "max-events", required_argument, NULL, OPT_KEY },
		{ "textfile", required_argument, NULL, OPT_KEY },
		{ "cgroup", required_argument, NULL, OPT_KEY },
		{ "textfile-interval", required_argument, NULL, OPT_KEY },
		{ "grace", required_argument, NULL, OPT_KEY },
		{ "max-trigger-duration", required_argument, NULL, OPT_KEY },
		{ "profile-quota-captures", required_argument, NULL, OPT_KEY },
		{ "profile-quota-bytes", required_argument, NULL, OPT_KEY },
		{ "profile-quota-detail", required_argument, NULL, OPT_KEY },
		{ "rule-step-time-over", required_argument, NULL, OPT_KEY },
		{ "rule-step-time-factor", required_argument, NULL, OPT_KEY },
		{ "rule-device-stall", required_argument, NULL, OPT_KEY },
		{ "rule-crash", required_argument, NULL, OPT_KEY },
		{ "rule-duration", required_argument, NULL, OPT_KEY },
		{ "rule-cooldown", required_argument, NULL, OPT_KEY },
		{ "detail", required_argument, NULL, OPT_KEY },
		{ "detail-interval", required_argument, NULL, OPT_KEY },
		{ "detail-slice", required_argument, NULL, OPT_KEY },
		{ "cpu-priority", required_argument, NULL, OPT_KEY },
		{ "memory-timeline-tiers", required_argument, NULL, OPT_KEY },
		CLI_COMMON_LONGOPTS,
		{}
	};
	struct daemon_opts o = { .sz = sizeof(o) };
	struct daemon_config flags;
	char err[512];
	int opt, idx, rc;

	daemon_config__defaults(&flags);
	while ((opt = getopt_long(argc, argv, "+:c:o:" CLI_COMMON_SHORTOPTS, longopts,
				  &idx)) != -1) {
		const char *key = opt == 'o' ? "logdir" : longopts[idx].name;

		switch (opt) {
		case 'c':
			o.config_path = optarg;
			break;
		case 'o':
		case OPT_KEY:
			if (daemon_config__set(&flags, key, optarg, true, err, sizeof(err))) {
				log_err("%s", err);
				return EXIT_USAGE;
			}
			break;
		default:
			rc = cli_common_or_exit("daemon", opt, argv, usage_daemon);
			if (rc >= 0)
				return rc;
		}
	}
	if (optind < argc)
		return cli_bad_argument("daemon", argv[optind]);
	if (o.config_path) {
		if (daemon_config__load(o.config_path, &flags, &o.config, err, sizeof(err))) {
			log_err("%s", err);
			return 1;
		}
	} else {
		o.config = flags;
	}
	if (cli_require_privileges("daemon"))
		return 1;
	install_signals();
	o.stops = &stops;
	o.stop_at_ns = &stop_at_ns;
	o.reloads = &reloads;
	o.triggers = &triggers;
	return daemon_run(&o) ? 1 : 0;
}
