// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * acceltrace trigger: asks the host's daemon for a capture over its control
 * socket and prints the path of the capture it caused, once written.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define LOG_CONTEXT "trigger"
#include "lib/log.h"
#include "cli/cli.h"
#include "cli/progress.h"
#include "daemon/control.h"
#include "daemon/daemon_config.h"
#include "lib/json_writer.h"

/* Beyond the window itself: the flight recorder's write and the grace. */
#define REPLY_SLACK_MS (120 * 1000)

void usage_trigger(FILE *out)
{
	fprintf(out,
		"Usage: acceltrace trigger [options]\n"
		"\n"
		"Asks this host's acceltrace daemon for a capture: the flight recorder's\n"
		"last N seconds before the trigger, plus --duration after it. Prints the\n"
		"capture's path once it is written. Run the same command on every host\n"
		"(kubectl exec, pdsh, Ansible) with --at and --session for one wall-clock\n"
		"window across a fleet: the session directories line up for XProf.\n"
		"\n"
		"  --socket PATH       the daemon's control socket\n"
		"                      (default " DAEMON_DEFAULT_SOCKET ")\n"
		"  -d, --duration TIME full detail for TIME after the trigger (default 0)\n"
		"  --at TIME           trigger at this wall-clock time: seconds since the\n"
		"                      epoch (1700000000.5) or @ followed by them\n"
		"  --session NAME      session directory name (default: the trigger's local\n"
		"                      time)\n"
		"  --pid PID           the capture is about this process (as the daemon\n"
		"                      numbers it): refused at once when the daemon does\n"
		"                      not trace it; the capture says so and report puts\n"
		"                      its report first (the capture still holds every\n"
		"                      process the daemon traces)\n"
		"  -q, --quiet         errors only on stderr (the path is printed as ever)\n"
		"\n"
		"While it waits, a line on stderr says what the daemon is doing (on a\n"
		"terminal it counts the time down). Ctrl-C stops the waiting only: the\n"
		"daemon still writes the capture.\n"
		"\n"
		"Exit status: 0 when the capture was written; 1 when the daemon could not\n"
		"be reached or the capture failed; 2 on a usage error.\n"
		"\n"
		"Options:\n"
		CLI_COMMON_HELP
		"\n"
		"Examples:\n"
		"  acceltrace trigger\n"
		"  acceltrace trigger --duration 5s\n"
		"  acceltrace trigger --pid 4711 --duration 10s\n"
		"  acceltrace trigger --at @1700000000 --session fleet-run-1\n");
}

/* "1700000000.25" or "@1700000000.25": realtime nanoseconds. */
static int parse_at(const char *s, uint64_t *ns)
{
	char *end;
	double v;

	if (*s == '@')
		s++;
	if (*s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtod(s, &end);
	if (errno || *end || v <= 0 || v > 1e10)
		return -EINVAL;
	*ns = (uint64_t)(v * 1e9 + 0.5);
	return 0;
}

/*
 * The daemon never writes over a capture: when the session asked for holds
 * this host's capture already, it writes to "<session>-2" (or later). Said
 * here too, since a fleet's session name is what users look for.
 */
static void say_session_moved(const char *asked, const char *path)
{
	const char *end = strrchr(path, '/'), *start = end;

	if (!asked[0] || !end)
		return;
	while (start > path && start[-1] != '/')
		start--;
	if ((size_t)(end - start) == strlen(asked) && !strncmp(start, asked, end - start))
		return;
	log_warn("session %s holds a capture of this host already: this one is in "
		 "session %.*s", asked, (int)(end - start), start);
}

int cmd_trigger(int argc, char **argv)
{
	enum { OPT_SOCKET = 256, OPT_AT, OPT_SESSION, OPT_PID };
	static const struct option longopts[] = {
		{ "socket", required_argument, NULL, OPT_SOCKET },
		{ "duration", required_argument, NULL, 'd' },
		{ "at", required_argument, NULL, OPT_AT },
		{ "session", required_argument, NULL, OPT_SESSION },
		{ "pid", required_argument, NULL, OPT_PID },
		{ "quiet", no_argument, NULL, 'q' },
		CLI_COMMON_LONGOPTS,
		{}
	};
	const char *socket = DAEMON_DEFAULT_SOCKET;
	struct control_request rq = {};
	char reply[CONTROL_MAX_LINE];
	uint64_t wait_ms, start = 0, stop = 0;
	char *path, *fields;
	struct progress *progress;
	struct timespec now;
	bool quiet = false;
	int opt, err, rc;

	while ((opt = getopt_long(argc, argv, "+:d:q" CLI_COMMON_SHORTOPTS, longopts,
				  NULL)) != -1) {
		switch (opt) {
		case OPT_SOCKET:
			socket = optarg;
			break;
		case 'd':
			if (cli_parse_duration(optarg, &rq.duration_ns))
				return cli_bad_value("trigger", "--duration", optarg,
						     "a time such as 10s or 500ms");
			break;
		case OPT_AT:
			if (parse_at(optarg, &rq.at_realtime_ns))
				return cli_bad_value("trigger", "--at", optarg,
						     "seconds since the epoch, e.g. 1700000000.5");
			break;
		case OPT_SESSION:
			if (!control_valid_session(optarg))
				return cli_bad_value("trigger", "--session", optarg,
						     "letters, digits, '.', '_' and '-'");
			snprintf(rq.session, sizeof(rq.session), "%s", optarg);
			break;
		case OPT_PID: {
			uint64_t v;

			if (cli_parse_uint(optarg, &v) || !v || v > INT32_MAX)
				return cli_bad_value("trigger", "--pid", optarg, "a process id");
			rq.pid = (uint32_t)v;
			break;
		}
		case 'q':
			quiet = true;
			break;
		default:
			rc = cli_common_or_exit("trigger", opt, argv, usage_trigger);
			if (rc >= 0)
				return rc;
		}
	}
	if (optind < argc)
		return cli_bad_argument("trigger", argv[optind]);
	/* Wait for the window to pass, from now or from --at. */
	clock_gettime(CLOCK_REALTIME, &now);
	wait_ms = rq.duration_ns / 1000000 + REPLY_SLACK_MS;
	if (rq.at_realtime_ns) {
		uint64_t real = (uint64_t)now.tv_sec * 1000000000ull + now.tv_nsec;

		if (rq.at_realtime_ns > real)
			wait_ms += (rq.at_realtime_ns - real) / 1000000;
	}
	if (quiet)
		log_set_verbosity(LOG_ERROR);
	progress = progress__new(progress_mode_for(quiet), NULL, false);
	if (progress)
		progress__trigger(progress, rq.at_realtime_ns, rq.duration_ns);
	err = control_request(socket, &rq, reply, sizeof(reply),
			      wait_ms > 0x7fffffff ? 0x7fffffff : (int)wait_ms);
	progress__free(progress);
	if (err == -ENOENT || err == -ECONNREFUSED) {
		/* Nothing listens there: say how to start one. */
		log_err("no daemon is running at %s (%s): start one with 'acceltrace "
			"daemon' (or 'systemctl start acceltrace' where it is installed), "
			"or name its socket with --socket", socket, strerror(-err));
		return 1;
	}
	if (err) {
		log_err("no answer from the daemon at %s: %s", socket, strerror(-err));
		return 1;
	}
	if (strncmp(reply, "ok ", 3)) {
		log_err("the daemon said: %s", strncmp(reply, "error ", 6) ? reply : reply + 6);
		return 1;
	}
	path = reply + 3;
	fields = strchr(path, ' ');
	if (fields) {
		*fields++ = '\0';
		if (sscanf(fields, "window_start_ns=%" SCNu64 " window_stop_ns=%" SCNu64,
			   &start, &stop) != 2)
			start = stop = 0;
	}
	say_session_moved(rq.session, path);
	if (cli_json()) {
		struct json_writer *jw = jw_new(stdout, true);

		if (jw) {
			jw_start_object(jw);
			jw_string_field(jw, "path", path);
			jw_uint_field(jw, "window_start_ns", start);
			jw_uint_field(jw, "window_stop_ns", stop);
			jw_end_object(jw);
			jw_free(jw);
			putchar('\n');
		}
	} else {
		printf("%s\n", path);
	}
	if (fflush(stdout) || ferror(stdout)) {
		log_err("writing to standard output failed");
		return 1;
	}
	return 0;
}
