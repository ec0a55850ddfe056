/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * How a renamed thread's line reads (docs/capture-format.md, "Thread
 * names"): one line per thread, named by its latest name, labelled with the
 * names it had before, and the whole history with times as one JSON array
 * for the /host:CPU plane stat acceltrace.thread_names (an XLine has no
 * stats).
 */
#ifndef ACCELTRACE_THREAD_NAMES_H
#define ACCELTRACE_THREAD_NAMES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct capture;
struct capture_thread_name;
struct capture_track;
struct json_writer;

#define STAT_THREAD_NAMES "acceltrace.thread_names"
/* /host:CPU's map of threads to processes: bytes, a little-endian (u32 tid,
 * u32 pid) pair per host thread (an XLine has no stats to say it). */
#define STAT_THREAD_PIDS "acceltrace.thread_pids"

/*
 * A host track's thread's name history when it was renamed (two names or
 * more, kept or counted), else NULL; *n kept entries, *more not kept.
 */
const struct capture_thread_name *thread_history(const struct capture *c,
						 const struct capture_track *tr,
						 size_t *n, uint64_t *more);

/*
 * A host line's display name: "<name> (pid <pid>, was <a>, <b>, +<n> more)",
 * the pid when @multi (threads of more than one process), the earlier
 * names when @h is a history. NULL when there is nothing to add.
 */
const char *thread_line_label(const struct capture *c, const char *name,
			      uint32_t pid, bool multi,
			      const struct capture_thread_name *h, size_t n,
			      uint64_t more, char *buf, size_t size);

/* The histories of a plane's renamed threads, as one JSON array. */
struct name_histories {
	FILE *f;
	char *buf;
	size_t len;
	struct json_writer *jw;
};

/* Adds one thread's history; times from @window_start_ns. 0 or -ENOMEM. */
int name_histories__add(struct name_histories *nh, const struct capture *c,
			uint64_t window_start_ns, const struct capture_track *tr,
			const struct capture_thread_name *h, size_t n, uint64_t more);
/*
 * Ends the array: *json is the caller's to free (NULL when no history was
 * added). Frees the rest either way. 0 or -ENOMEM.
 */
int name_histories__finish(struct name_histories *nh, char **json);

#endif /* ACCELTRACE_THREAD_NAMES_H */
