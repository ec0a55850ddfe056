/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * One set of level macros for every message acceltrace prints.
 *
 * Each file defines LOG_CONTEXT before including this header; messages go to
 * stderr as "acceltrace: <context>: <text>", or as one JSON object per line
 * in JSON mode so that stdout stays a single parseable document. Logging
 * leaves errno as it found it, so an error path may log before it reads it.
 */
#ifndef ACCELTRACE_LOG_H
#define ACCELTRACE_LOG_H

#include <stdbool.h>

enum log_level {
	LOG_ERROR,
	LOG_WARN,
	LOG_INFO,
	LOG_DEBUG,
};

#ifndef LOG_CONTEXT
#define LOG_CONTEXT NULL
#endif

void log_set_verbosity(enum log_level max_level);
enum log_level log_verbosity(void);
void log_set_json(bool json);
bool log_json(void);
/*
 * @around is called before (true) and after (false) each plain message
 * written, so that a line updated in place on the same terminal (record's
 * progress) is cleared first and drawn again after. NULL: none.
 */
void log_set_around(void (*around)(void *ctx, bool before), void *ctx);
/* Route libbpf's own messages through log_printf (debug level). */
void log_route_libbpf(void);

__attribute__((format(printf, 3, 4)))
void log_printf(enum log_level level, const char *context, const char *fmt, ...);

#define log_err(fmt, ...) log_printf(LOG_ERROR, LOG_CONTEXT, fmt, ##__VA_ARGS__)
#define log_warn(fmt, ...) log_printf(LOG_WARN, LOG_CONTEXT, fmt, ##__VA_ARGS__)
#define log_info(fmt, ...) log_printf(LOG_INFO, LOG_CONTEXT, fmt, ##__VA_ARGS__)
#define log_debug(fmt, ...) log_printf(LOG_DEBUG, LOG_CONTEXT, fmt, ##__VA_ARGS__)

#endif /* ACCELTRACE_LOG_H */
