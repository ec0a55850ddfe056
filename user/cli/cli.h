/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The command table's contract: every command is a function taking its own
 * argv (argv[0] is the command name), returning an exit status, with a usage
 * printer for `--help`. Options every command accepts are parsed here.
 */
#ifndef ACCELTRACE_CLI_H
#define ACCELTRACE_CLI_H

#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define ACCELTRACE_VERSION "0.1.0"

/* Exit statuses: 0 success, 1 failure, 2 usage error (bad command or flag). */
#define EXIT_USAGE 2

struct cli_command {
	const char *name;
	const char *summary;
	int (*run)(int argc, char **argv);
	void (*usage)(FILE *out);
};

/* Long options every command accepts; append to a command's own table. */
#define CLI_COMMON_LONGOPTS \
	{ "verbose", no_argument, NULL, 'v' }, \
	{ "json", no_argument, NULL, 'j' }, \
	{ "help", no_argument, NULL, 'h' }
#define CLI_COMMON_SHORTOPTS "vjh"
#define CLI_COMMON_HELP \
	"  -j, --json       print JSON (errors too, as JSON lines on stderr)\n" \
	"  -v, --verbose    debug output, including libbpf's messages\n" \
	"  -h, --help       this help\n"

enum cli_opt_result {
	CLI_OPT_HANDLED,	/* a common option, applied */
	CLI_OPT_HELP,		/* --help: print usage, exit 0 */
	CLI_OPT_BAD,		/* unknown option or missing argument: exit 2 */
	CLI_OPT_OWN,		/* not common: the command handles it */
};

/*
 * Classifies one getopt_long() result. On CLI_OPT_BAD it has already said
 * what was wrong, naming the command and the option.
 */
enum cli_opt_result cli_common_option(const char *cmd, int opt, char **argv);
/*
 * For an option a command does not handle itself: applies a common one and
 * returns -1 (go on parsing), or returns the exit status the command should
 * return now: 0 after printing usage for --help, EXIT_USAGE for a bad option.
 * An unknown long option gets "did you mean" from the long options that
 * `usage` prints (lib/suggest.h).
 */
int cli_common_or_exit(const char *cmd, int opt, char **argv,
		       void (*usage)(FILE *out));
/*
 * " (did you mean 'PREFIXa' or 'PREFIXb'?)" into buf for n words, "" for
 * none: the tail of an unknown-command or unknown-option message.
 */
void cli_say_suggestions(char *buf, size_t size, const char *prefix,
			 const char *const *words, size_t n);
/* Reports an unexpected positional argument; returns EXIT_USAGE. */
int cli_bad_argument(const char *cmd, const char *arg);
/* Reports a malformed option value; returns EXIT_USAGE. */
int cli_bad_value(const char *cmd, const char *opt, const char *value,
		  const char *expected);
bool cli_json(void);
/*
 * Before any work, for commands that load BPF: 0 when this process may,
 * else says "CMD needs root: ..." and returns 1 (the exit status).
 */
int cli_require_privileges(const char *cmd);

/* "10s", "500ms", "2m", "1h", "250us", "3" (seconds) -> nanoseconds. */
int cli_parse_duration(const char *s, uint64_t *ns);
/* "64M", "1G", "4096", "8k" -> bytes. */
int cli_parse_size(const char *s, uint64_t *bytes);
/* A positive decimal integer. */
int cli_parse_uint(const char *s, uint64_t *v);

/* Commands. */
int cmd_doctor(int argc, char **argv);
void usage_doctor(FILE *out);
int cmd_record(int argc, char **argv);
void usage_record(FILE *out);
int cmd_probes(int argc, char **argv);
void usage_probes(FILE *out);
int cmd_report(int argc, char **argv);
void usage_report(FILE *out);
int cmd_convert(int argc, char **argv);
void usage_convert(FILE *out);
int cmd_daemon(int argc, char **argv);
void usage_daemon(FILE *out);
int cmd_trigger(int argc, char **argv);
void usage_trigger(FILE *out);

#endif /* ACCELTRACE_CLI_H */
