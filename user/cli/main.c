// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * acceltrace <command> [options]: the command table and global options.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LOG_CONTEXT NULL
#include "lib/log.h"
#include "lib/suggest.h"
#include "cli/cli.h"

static int cmd_help(int argc, char **argv);
static void usage_help(FILE *out);
static int cmd_version(int argc, char **argv);
static void usage_version(FILE *out);

static const struct cli_command commands[] = {
	{ "record", "capture a window of accelerator work for TensorBoard/XProf",
	  cmd_record, usage_record },
	{ "report", "say what a capture shows: steps, input-bound %, top ops, losses",
	  cmd_report, usage_report },
	{ "convert", "convert a capture to Perfetto's trace or Chrome trace JSON",
	  cmd_convert, usage_convert },
	{ "probes", "show what record would attach to a process, and why",
	  cmd_probes, usage_probes },
	{ "doctor", "check which kernel features exist and which probes will be used",
	  cmd_doctor, usage_doctor },
	{ "daemon", "always-on host daemon: flight recorder, triggers, Prometheus metrics",
	  cmd_daemon, usage_daemon },
	{ "trigger", "ask the host's daemon for a capture and print its path",
	  cmd_trigger, usage_trigger },
	{ "help", "show help for acceltrace or one command", cmd_help, usage_help },
	{ "version", "print the version", cmd_version, usage_version },
};

#define N_COMMANDS (sizeof(commands) / sizeof(commands[0]))

static void usage_main(FILE *out)
{
	fprintf(out,
		"Usage: acceltrace [-v] [-j] <command> [options]\n"
		"\n"
		"A low-overhead tracer for machine-learning work on accelerators.\n"
		"\n"
		"Commands:\n");
	for (size_t i = 0; i < N_COMMANDS; i++)
		fprintf(out, "  %-10s %s\n", commands[i].name, commands[i].summary);
	fprintf(out,
		"\n"
		"Options:\n"
		CLI_COMMON_HELP
		"  -V, --version    print the version\n"
		"\n"
		"Examples:\n"
		"  acceltrace doctor                          can acceltrace run here?\n"
		"  acceltrace record --pid 4242 --duration 10s --logdir /tmp/tb\n"
		"  acceltrace report /tmp/tb                  what the capture shows\n"
		"\n"
		"Run 'acceltrace <command> --help' for a command's options and\n"
		"examples; 'man acceltrace-<command>' once installed.\n");
}

static const struct cli_command *find_command(const char *name)
{
	for (size_t i = 0; i < N_COMMANDS; i++)
		if (!strcmp(commands[i].name, name))
			return &commands[i];
	return NULL;
}

/* "unknown command 'reprot' (did you mean 'report'?); see 'acceltrace --help'" */
static void unknown_command(const char *prefix, const char *name)
{
	const char *names[N_COMMANDS], *close[4];
	char hint[256];
	size_t n;

	for (size_t i = 0; i < N_COMMANDS; i++)
		names[i] = commands[i].name;
	n = suggest_closest(name, names, N_COMMANDS, close, 4);
	cli_say_suggestions(hint, sizeof(hint), "", close, n);
	log_err("%sunknown command '%s'%s; see 'acceltrace --help'", prefix, name, hint);
}

/* The options main() itself takes, for "did you mean" on a mistyped one. */
static const char *const global_long_options[] = { "verbose", "json", "help", "version" };

static void unknown_global_option(const char *a)
{
	const char *close[4];
	char hint[256] = "";
	size_t n = 0;

	if (!strncmp(a, "--", 2))
		n = suggest_closest(a + 2, global_long_options,
				    sizeof(global_long_options) / sizeof(global_long_options[0]),
				    close, 4);
	cli_say_suggestions(hint, sizeof(hint), "--", close, n);
	log_err("unknown option '%s'%s; see 'acceltrace --help'", a, hint);
}

static void usage_help(FILE *out)
{
	fprintf(out,
		"Usage: acceltrace help [command]\n"
		"\n"
		"Shows acceltrace's help, or a command's (the same as 'acceltrace\n"
		"<command> --help').\n"
		"\n"
		"Examples:\n"
		"  acceltrace help\n"
		"  acceltrace help record\n");
}

static void usage_version(FILE *out)
{
	fprintf(out,
		"Usage: acceltrace version\n"
		"\n"
		"Prints acceltrace's version, as 'acceltrace --version' and\n"
		"'acceltrace -V' do.\n"
		"\n"
		"Examples:\n"
		"  acceltrace version\n"
		"  acceltrace -V\n");
}

static int print_version(void)
{
	printf("acceltrace %s\n", ACCELTRACE_VERSION);
	return 0;
}

static int cmd_version(int argc, char **argv)
{
	if (argc > 1 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
		usage_version(stdout);
		return 0;
	}
	if (argc > 1)
		return cli_bad_argument("version", argv[1]);
	return print_version();
}

static int cmd_help(int argc, char **argv)
{
	const struct cli_command *c;

	if (argc < 2) {
		usage_main(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		usage_help(stdout);
		return 0;
	}
	c = find_command(argv[1]);
	if (!c) {
		unknown_command("help: ", argv[1]);
		return EXIT_USAGE;
	}
	c->usage(stdout);
	return 0;
}

int main(int argc, char **argv)
{
	const struct cli_command *c;
	int i;

	log_route_libbpf();

	/* Global options come before the command name. */
	for (i = 1; i < argc && argv[i][0] == '-'; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "-v") || !strcmp(a, "--verbose")) {
			log_set_verbosity(LOG_DEBUG);
		} else if (!strcmp(a, "-j") || !strcmp(a, "--json")) {
			log_set_json(true);
		} else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			usage_main(stdout);
			return 0;
		} else if (!strcmp(a, "-V") || !strcmp(a, "--version")) {
			return print_version();
		} else {
			unknown_global_option(a);
			return EXIT_USAGE;
		}
	}
	if (i == argc) {
		usage_main(stderr);
		return EXIT_USAGE;
	}
	c = find_command(argv[i]);
	if (!c) {
		unknown_command("", argv[i]);
		return EXIT_USAGE;
	}
	/* Each command parses its own options with getopt_long from index 1. */
	optind = 1;
	opterr = 0;
	return c->run(argc - i, argv + i);
}
