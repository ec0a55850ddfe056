// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Options every command shares, and the wording of usage errors. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LOG_CONTEXT NULL
#include "lib/log.h"
#include "cli/cli.h"
#include "lib/units.h"

bool cli_json(void)
{
	return log_json();
}

enum cli_opt_result cli_common_option(const char *cmd, int opt, char **argv)
{
	switch (opt) {
	case 'v':
		log_set_verbosity(LOG_DEBUG);
		return CLI_OPT_HANDLED;
	case 'j':
		log_set_json(true);
		return CLI_OPT_HANDLED;
	case 'h':
		return CLI_OPT_HELP;
	case '?':
		if (optopt)
			log_err("%s: unknown option '-%c'; see 'acceltrace %s --help'",
				cmd, optopt, cmd);
		else
			log_err("%s: unknown option '%s'; see 'acceltrace %s --help'",
				cmd, argv[optind - 1], cmd);
		return CLI_OPT_BAD;
	case ':':
		log_err("%s: option '%s' needs a value; see 'acceltrace %s --help'",
			cmd, argv[optind - 1], cmd);
		return CLI_OPT_BAD;
	default:
		return CLI_OPT_OWN;
	}
}

int cli_common_or_exit(const char *cmd, int opt, char **argv,
		       void (*usage)(FILE *out))
{
	switch (cli_common_option(cmd, opt, argv)) {
	case CLI_OPT_HANDLED:
		return -1;
	case CLI_OPT_HELP:
		usage(stdout);
		return 0;
	default:
		return EXIT_USAGE;
	}
}

int cli_bad_argument(const char *cmd, const char *arg)
{
	log_err("%s: unexpected argument '%s'; see 'acceltrace %s --help'",
		cmd, arg, cmd);
	return EXIT_USAGE;
}

int cli_bad_value(const char *cmd, const char *opt, const char *value,
		  const char *expected)
{
	log_err("%s: bad value '%s' for %s: expected %s", cmd, value, opt,
		expected);
	return EXIT_USAGE;
}

int cli_parse_uint(const char *s, uint64_t *v)
{
	return parse_uint(s, v);
}

int cli_parse_duration(const char *s, uint64_t *ns)
{
	return parse_duration(s, ns);
}

int cli_parse_size(const char *s, uint64_t *bytes)
{
	return parse_size(s, bytes);
}
