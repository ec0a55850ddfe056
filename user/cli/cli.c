// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Options every command shares, and the wording of usage errors. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LOG_CONTEXT NULL
#include "lib/log.h"
#include "cli/cli.h"

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
	char *end;
	unsigned long long x;

	if (!s || !*s || *s == '-')
		return -EINVAL;
	errno = 0;
	x = strtoull(s, &end, 10);
	if (errno || *end)
		return -EINVAL;
	*v = x;
	return 0;
}

int cli_parse_duration(const char *s, uint64_t *ns)
{
	static const struct { const char *unit; double scale; } units[] = {
		{ "ns", 1 }, { "us", 1e3 }, { "ms", 1e6 }, { "s", 1e9 },
		{ "m", 60e9 }, { "h", 3600e9 }, { "", 1e9 },
	};
	char *end;
	double v;

	if (!s || !*s || *s == '-')
		return -EINVAL;
	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || v < 0)
		return -EINVAL;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (!strcmp(end, units[i].unit)) {
			if (v * units[i].scale > 1e18)
				return -ERANGE;
			*ns = (uint64_t)(v * units[i].scale + 0.5);
			return 0;
		}
	}
	return -EINVAL;
}

int cli_parse_size(const char *s, uint64_t *bytes)
{
	static const struct { const char *unit; uint64_t scale; } units[] = {
		{ "", 1 }, { "k", 1ull << 10 }, { "K", 1ull << 10 },
		{ "m", 1ull << 20 }, { "M", 1ull << 20 },
		{ "g", 1ull << 30 }, { "G", 1ull << 30 },
	};
	unsigned long long v;
	char *end;

	if (!s || !*s || *s == '-')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s)
		return -EINVAL;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		if (!strcmp(end, units[i].unit)) {
			*bytes = v * units[i].scale;
			return 0;
		}
	return -EINVAL;
}
