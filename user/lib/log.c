// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Level-filtered messages on stderr, plain or as JSON lines. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <bpf/libbpf.h>

#include "lib/log.h"
#include "lib/json_writer.h"

static enum log_level max_level = LOG_INFO;
static bool json_mode;
static void (*around_fn)(void *ctx, bool before);
static void *around_ctx;

void log_set_around(void (*around)(void *ctx, bool before), void *ctx)
{
	around_fn = around;
	around_ctx = ctx;
}

void log_set_verbosity(enum log_level level)
{
	max_level = level;
}

enum log_level log_verbosity(void)
{
	return max_level;
}

void log_set_json(bool json)
{
	json_mode = json;
}

bool log_json(void)
{
	return json_mode;
}

static const char *level_name(enum log_level level)
{
	switch (level) {
	case LOG_ERROR: return "error";
	case LOG_WARN: return "warning";
	case LOG_INFO: return "info";
	case LOG_DEBUG: return "debug";
	}
	return "?";
}

/*
 * One message, one line: control bytes in it (a process's name, a path a
 * client sent) are written as \xNN, so nothing logged can forge a line of
 * its own ("acceltrace: daemon: capture written: /etc/shadow").
 */
static void escape_controls(const char *in, char *out, size_t size)
{
	size_t o = 0;

	for (; *in && o + 5 < size; in++) {
		unsigned char c = (unsigned char)*in;

		if ((c < 0x20 && c != '\t') || c == 0x7f)
			o += (size_t)snprintf(out + o, size - o, "\\x%02x", c);
		else
			out[o++] = (char)c;
	}
	out[o] = '\0';
}

static void log_vprintf(enum log_level level, const char *context,
			const char *fmt, va_list ap)
{
	char msg[2048], line[4 * 2048 + 1];
	size_t len;

	if (level > max_level)
		return;
	vsnprintf(msg, sizeof(msg), fmt, ap);
	len = strlen(msg);
	while (len && msg[len - 1] == '\n')
		msg[--len] = '\0';

	if (json_mode) {
		struct json_writer *jw = jw_new(stderr, false);

		if (!jw)
			return;
		jw_start_object(jw);
		jw_string_field(jw, "level", level_name(level));
		if (context)
			jw_string_field(jw, "context", context);
		jw_string_field(jw, "message", msg);
		jw_end_object(jw);
		jw_free(jw);
		fputc('\n', stderr);
		return;
	}

	if (around_fn)
		around_fn(around_ctx, true);
	fputs("acceltrace: ", stderr);
	if (level == LOG_ERROR)
		fputs("error: ", stderr);
	else if (level == LOG_WARN)
		fputs("warning: ", stderr);
	if (context)
		fprintf(stderr, "%s: ", context);
	escape_controls(msg, line, sizeof(line));
	fprintf(stderr, "%s\n", line);
	if (around_fn)
		around_fn(around_ctx, false);
}

/*
 * errno as the caller left it: error paths log, then return -errno (or
 * leave errno for theirs), and a failed write to stderr (a closed pipe, a
 * full disk) or the JSON writer's allocation would otherwise replace it.
 */
void log_printf(enum log_level level, const char *context, const char *fmt, ...)
{
	int saved = errno;
	va_list ap;

	va_start(ap, fmt);
	log_vprintf(level, context, fmt, ap);
	va_end(ap);
	errno = saved;
}

static int libbpf_print_fn(enum libbpf_print_level level, const char *fmt,
			   va_list ap)
{
	/*
	 * libbpf warns about things acceltrace probes for on purpose (a
	 * refused fentry load, say); our own code reports what matters, so
	 * libbpf's text is debug output only.
	 */
	int saved = errno;

	(void)level;
	log_vprintf(LOG_DEBUG, NULL, fmt, ap);
	errno = saved;
	return 0;
}

void log_route_libbpf(void)
{
	libbpf_set_print(libbpf_print_fn);
}
