// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Options every command shares, and the wording of usage errors. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LOG_CONTEXT NULL
#include "lib/log.h"
#include "cli/cli.h"
#include "lib/suggest.h"
#include "lib/units.h"
#include "probe/kernel_features.h"

bool cli_json(void)
{
	return log_json();
}

/*
 * The long options a command's --help lists: every "--name" on a line that
 * starts (after blanks) with '-', so a suggestion is always an option the
 * user can read about. Returns how many names were put in names[], each a
 * pointer into *text (freed by the caller).
 */
#define MAX_HELP_OPTIONS 96

static size_t help_long_options(void (*usage)(FILE *out), char **text,
				const char **names, size_t max)
{
	size_t len = 0, n = 0;
	FILE *f = open_memstream(text, &len);
	char *line, *save = NULL;

	*text = NULL;
	if (!f)
		return 0;
	usage(f);
	if (fclose(f) || !*text)
		return 0;
	for (line = strtok_r(*text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *p = line + strspn(line, " \t");

		if (*p != '-')
			continue;
		while ((p = strstr(p, "--")) && n < max) {
			char *name = p + 2;
			size_t l = strspn(name, "abcdefghijklmnopqrstuvwxyz0123456789-");
			bool seen = false;

			p = name + l;
			if (!l || (p > name && name[0] == '-'))
				continue;
			if (*p)
				*p++ = 0;
			for (size_t i = 0; i < n && !seen; i++)
				seen = !strcmp(names[i], name);
			if (!seen)
				names[n++] = name;
		}
	}
	return n;
}

void cli_say_suggestions(char *buf, size_t size, const char *prefix,
			 const char *const *words, size_t n)
{
	size_t off = 0;

	buf[0] = 0;
	if (!n)
		return;
	off += snprintf(buf + off, size - off, " (did you mean ");
	for (size_t i = 0; i < n && off < size; i++)
		off += snprintf(buf + off, size - off, "%s'%s%s'",
				i == 0 ? "" : i + 1 == n ? " or " : ", ", prefix, words[i]);
	if (off < size)
		snprintf(buf + off, size - off, "?)");
}

/* "unknown option '--durration' (did you mean '--duration'?)" */
static void unknown_long_option(const char *cmd, const char *arg,
				void (*usage)(FILE *out))
{
	const char *names[MAX_HELP_OPTIONS], *close[4];
	char word[SUGGEST_MAX_LEN + 1], hint[256] = "";
	char *text = NULL;
	size_t n, l = strcspn(arg + 2, "=");

	if (usage && l <= SUGGEST_MAX_LEN) {
		memcpy(word, arg + 2, l);
		word[l] = 0;
		n = help_long_options(usage, &text, names, MAX_HELP_OPTIONS);
		n = suggest_closest(word, names, n, close, 4);
		cli_say_suggestions(hint, sizeof(hint), "--", close, n);
	}
	log_err("%s: unknown option '%s'%s; see 'acceltrace %s --help'",
		cmd, arg, hint, cmd);
	free(text);
}

static enum cli_opt_result common_option(const char *cmd, int opt, char **argv,
					 void (*usage)(FILE *out))
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
		else if (!strncmp(argv[optind - 1], "--", 2))
			unknown_long_option(cmd, argv[optind - 1], usage);
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

enum cli_opt_result cli_common_option(const char *cmd, int opt, char **argv)
{
	return common_option(cmd, opt, argv, NULL);
}

int cli_common_or_exit(const char *cmd, int opt, char **argv,
		       void (*usage)(FILE *out))
{
	switch (common_option(cmd, opt, argv, usage)) {
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

int cli_require_privileges(const char *cmd)
{
	char why[256];

	if (features__privileged(why, sizeof(why)))
		return 0;
	log_err("%s %s; run it as root (sudo acceltrace %s ...)", cmd, why, cmd);
	return 1;
}
