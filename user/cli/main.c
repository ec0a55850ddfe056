// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * acceltrace <command> [options]: the command table and global options.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LOG_CONTEXT NULL
#include "lib/log.h"
#include "cli/cli.h"

static int cmd_help(int argc, char **argv);
static void usage_help(FILE *out);

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
		"      --version    print the version\n"
		"\n"
		"Run 'acceltrace <command> --help' for a command's options.\n");
}

static const struct cli_command *find_command(const char *name)
{
	for (size_t i = 0; i < N_COMMANDS; i++)
		if (!strcmp(commands[i].name, name))
			return &commands[i];
	return NULL;
}

static void usage_help(FILE *out)
{
	fprintf(out, "Usage: acceltrace help [command]\n");
}

static int cmd_help(int argc, char **argv)
{
	const struct cli_command *c;

	if (argc < 2) {
		usage_main(stdout);
		return 0;
	}
	c = find_command(argv[1]);
	if (!c) {
		log_err("help: unknown command '%s'; see 'acceltrace --help'", argv[1]);
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
		} else if (!strcmp(a, "--version")) {
			printf("acceltrace %s\n", ACCELTRACE_VERSION);
			return 0;
		} else {
			log_err("unknown option '%s'; see 'acceltrace --help'", a);
			return EXIT_USAGE;
		}
	}
	if (i == argc) {
		usage_main(stderr);
		return EXIT_USAGE;
	}
	c = find_command(argv[i]);
	if (!c) {
		log_err("unknown command '%s'; see 'acceltrace --help'", argv[i]);
		return EXIT_USAGE;
	}
	/* Each command parses its own options with getopt_long from index 1. */
	optind = 1;
	opterr = 0;
	return c->run(argc - i, argv + i);
}
