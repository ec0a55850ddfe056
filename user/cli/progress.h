/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What `record` and `trigger` say while they work, on stderr:
 *
 * - on a terminal (and not -j): one line that updates in place ("\r", the
 *   text, clear to the end of the line), cut to the terminal's width,
 *   redrawn at most PROGRESS_HZ times a second; log messages clear it and
 *   it is drawn again below them (log_set_around);
 * - otherwise (a pipe, a file, -j): one log line per phase change;
 * - with -q: nothing (errors still come through log_err).
 *
 * Lifecycle: progress__new() -> progress__phase() / progress__update() ...
 * [progress__clear() before writing to stdout] -> progress__free().
 * progress__recorder() is the recorder's progress callback (ctx: the
 * struct progress); trigger draws its own lines from a ticker thread.
 */
#ifndef ACCELTRACE_PROGRESS_H
#define ACCELTRACE_PROGRESS_H

#include <stdbool.h>
#include <stdint.h>

struct progress;
struct recorder_progress;

#define PROGRESS_HZ 5

enum progress_mode {
	PROGRESS_QUIET,		/* -q: nothing */
	PROGRESS_LINES,		/* one log line per phase */
	PROGRESS_TTY,		/* one line updated in place */
};

/* QUIET with @quiet; TTY when stderr is a terminal and not in JSON mode;
 * LINES else. */
enum progress_mode progress_mode_for(bool quiet);

/*
 * @what names the target for the attach line ("pid 1234", "every
 * accelerator process on this host", "the command"); @from_start: the
 * window arms at any device activity, not the first step. NULL and errno
 * on failure. In TTY mode it hooks the log (log_set_around) until freed.
 */
struct progress *progress__new(enum progress_mode mode, const char *what, bool from_start);
/* Clears the line and unhooks the log. Accepts NULL. */
void progress__free(struct progress *p);
enum progress_mode progress__mode(const struct progress *p);

/* A new phase: the terminal's line shows it now; otherwise one log line. */
__attribute__((format(printf, 2, 3)))
void progress__phase(struct progress *p, const char *fmt, ...);
/* Within a phase: the terminal's line shows this, unless it was drawn
 * less than 1/PROGRESS_HZ s ago; nothing in the other modes. */
__attribute__((format(printf, 2, 3)))
void progress__update(struct progress *p, const char *fmt, ...);
/* Erases the terminal's line (before stdout output); the next phase or
 * update draws it again. */
void progress__clear(struct progress *p);

/* The recorder's progress callback (recorder_progress_fn), @ctx a struct
 * progress: attaching, arming, the window, closing, each in words. */
void progress__recorder(void *ctx, const struct recorder_progress *rp);

/*
 * trigger's wait for the daemon's reply: a line says what the daemon does
 * (the trigger at @at_realtime_ns, 0: now; its window @duration_ns after)
 * and that Ctrl-C stops only the waiting; on a terminal a ticker thread
 * then counts the time down until progress__free(). 0 or -errno.
 */
int progress__trigger(struct progress *p, uint64_t at_realtime_ns, uint64_t duration_ns);

/*
 * Calls @tick every 1/PROGRESS_HZ s from a thread of its own, while the
 * caller blocks (trigger waiting for the daemon's reply); TTY mode only
 * (0 and nothing started otherwise). 0 or -errno.
 */
int progress__start_ticker(struct progress *p, void (*tick)(void *ctx), void *ctx);
void progress__stop_ticker(struct progress *p);

#endif /* ACCELTRACE_PROGRESS_H */
