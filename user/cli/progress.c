// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* record's and trigger's progress on stderr: a line updated in place on a
 * terminal, a line per phase elsewhere, nothing with -q (progress.h). */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#define LOG_CONTEXT "record"
#include "lib/clock.h"
#include "lib/log.h"
#include "cli/progress.h"
#include "session/recorder.h"

#define LINE_MAX_BYTES 512

struct progress {
	enum progress_mode mode;
	char what[128];
	bool from_start;
	pthread_mutex_t lock;		/* the line: the ticker thread draws too */
	char line[LINE_MAX_BYTES];	/* what the terminal shows ("" : nothing) */
	bool shown;			/* drawn and not cleared */
	uint64_t drawn_ns;
	pthread_t ticker;
	bool ticking;
	bool stop_ticking;		/* __atomic */
	void (*tick)(void *ctx);
	void *tick_ctx;
	/* progress__recorder: the last phase said, and when attaching began. */
	const char *context;		/* of its log lines: "record", "trigger" */
	int phase;
	uint64_t attach_ns;
	/* progress__trigger: the trigger (CLOCK_REALTIME ns) and the window after. */
	uint64_t at_ns, duration_ns;
};


enum progress_mode progress_mode_for(bool quiet)
{
	if (quiet)
		return PROGRESS_QUIET;
	if (!log_json() && isatty(STDERR_FILENO))
		return PROGRESS_TTY;
	return PROGRESS_LINES;
}

/* The terminal's width less one (a line as wide as the terminal wraps on
 * some terminals, and then "\r" no longer returns to its start). */
static size_t columns(void)
{
	struct winsize ws;

	if (!ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) && ws.ws_col > 20)
		return ws.ws_col - 1 < LINE_MAX_BYTES ? ws.ws_col - 1u : LINE_MAX_BYTES - 1;
	return 79;
}

/* Under the lock. */
static void draw(struct progress *p)
{
	size_t n = strlen(p->line), w = columns();

	if (!p->line[0])
		return;
	fprintf(stderr, "\r%.*s\033[K", (int)(n < w ? n : w), p->line);
	fflush(stderr);
	p->shown = true;
	p->drawn_ns = mono_ns();
}

static void erase(struct progress *p)
{
	if (!p->shown)
		return;
	fputs("\r\033[K", stderr);
	fflush(stderr);
	p->shown = false;
}

/* Log messages: the line cleared before, drawn again below them after. */
static void around_log(void *ctx, bool before)
{
	struct progress *p = ctx;

	if (before) {
		pthread_mutex_lock(&p->lock);
		erase(p);
		return;
	}
	draw(p);
	pthread_mutex_unlock(&p->lock);
}

struct progress *progress__new(enum progress_mode mode, const char *what, bool from_start)
{
	struct progress *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->mode = mode;
	p->from_start = from_start;
	p->phase = -1;
	p->context = "record";
	snprintf(p->what, sizeof(p->what), "%s", what ? what : "the targets");
	pthread_mutex_init(&p->lock, NULL);
	if (mode == PROGRESS_TTY)
		log_set_around(around_log, p);
	return p;
}

void progress__free(struct progress *p)
{
	if (!p)
		return;
	progress__stop_ticker(p);
	if (p->mode == PROGRESS_TTY) {
		log_set_around(NULL, NULL);
		erase(p);
	}
	pthread_mutex_destroy(&p->lock);
	free(p);
}

enum progress_mode progress__mode(const struct progress *p)
{
	return p ? p->mode : PROGRESS_QUIET;
}

static void vshow(struct progress *p, bool force, const char *fmt, va_list ap)
{
	pthread_mutex_lock(&p->lock);
	if (force || !p->shown || mono_ns() - p->drawn_ns >= 1000000000ull / PROGRESS_HZ) {
		vsnprintf(p->line, sizeof(p->line), fmt, ap);
		draw(p);
	}
	pthread_mutex_unlock(&p->lock);
}

void progress__phase(struct progress *p, const char *fmt, ...)
{
	char msg[LINE_MAX_BYTES];
	va_list ap;

	if (!p || p->mode == PROGRESS_QUIET)
		return;
	va_start(ap, fmt);
	if (p->mode == PROGRESS_TTY) {
		vshow(p, true, fmt, ap);
	} else {
		vsnprintf(msg, sizeof(msg), fmt, ap);
		log_printf(LOG_INFO, p->context, "%s", msg);
	}
	va_end(ap);
}

void progress__update(struct progress *p, const char *fmt, ...)
{
	va_list ap;

	if (!p || p->mode != PROGRESS_TTY)
		return;
	va_start(ap, fmt);
	vshow(p, false, fmt, ap);
	va_end(ap);
}

void progress__clear(struct progress *p)
{
	if (!p || p->mode != PROGRESS_TTY)
		return;
	pthread_mutex_lock(&p->lock);
	erase(p);
	pthread_mutex_unlock(&p->lock);
}

/* ---------------------------------------------------------------- record */

static const char *plural(uint64_t n)
{
	return n == 1 ? "" : "s";
}

/* "1 runtime library, 25 probes, 4 device trace buffers", or that none is
 * loaded yet (a -- CMD traced from its first instruction): "0 probes"
 * would read as nothing traced while the kernel's are on. */
static void placed(const struct recorder_progress *rp, char *buf, size_t len)
{
	if (!rp->libraries && !rp->devtrace_buffers) {
		snprintf(buf, len, "no runtime library loaded yet: its probes go on when "
			 "one is");
		return;
	}
	snprintf(buf, len, "%zu runtime librar%s, %zu probe%s, %zu device trace buffer%s",
		 rp->libraries, rp->libraries == 1 ? "y" : "ies", rp->probes,
		 plural(rp->probes), rp->devtrace_buffers, plural(rp->devtrace_buffers));
}

/* "nothing lost in the kernel" or "12 records lost in the kernel" (since
 * attaching): the capture's summary lists every loss; this is the one
 * known while the window is open, and says which it is. */
static void losses(const struct recorder_progress *rp, char *buf, size_t len)
{
	if (!rp->lost)
		snprintf(buf, len, "nothing lost in the kernel");
	else
		snprintf(buf, len, "%" PRIu64 " record%s lost in the kernel", rp->lost,
			 plural(rp->lost));
}

/* "window 2/5" or "window" */
static void window_name(const struct recorder_progress *rp, char *buf, size_t len)
{
	if (rp->windows > 1)
		snprintf(buf, len, "window %u/%u", rp->window, rp->windows);
	else
		snprintf(buf, len, "window");
}

static double secs(uint64_t ns)
{
	return ns / 1e9;
}

/* Until what the window runs, when no --duration ends it. */
static void window_end(const struct recorder_progress *rp, char *buf, size_t len)
{
	if (rp->steps)
		snprintf(buf, len, "until %" PRIu64 " step%s", rp->steps, plural(rp->steps));
	else
		snprintf(buf, len, "until Ctrl-C or the target's exit");
}

static void say_phase(struct progress *p, const struct recorder_progress *rp)
{
	const char *first = p->from_start ? "device activity" : "step";
	char what[160], lost[64], win[32], end[64];
	uint64_t left;

	placed(rp, what, sizeof(what));
	losses(rp, lost, sizeof(lost));
	window_name(rp, win, sizeof(win));
	window_end(rp, end, sizeof(end));
	left = rp->deadline_ns > rp->now_ns ? rp->deadline_ns - rp->now_ns : 0;
	switch (rp->phase) {
	case RECORDER_ATTACHING:
		p->attach_ns = rp->phase_ns;
		progress__phase(p, "attaching to %s: loading and placing probes", p->what);
		break;
	case RECORDER_ARMING:
		if (rp->window <= 1 && p->attach_ns)
			progress__phase(p, "waiting for %s, up to %.0f s%s; Ctrl-C to stop "
					"(probes placed in %.1f s: %s)", rp->no_runtime ?
					"an accelerator runtime to be loaded" :
					p->from_start ? "the first device activity" : "the first step",
					secs(left), rp->bounded_by_duration ? " (--duration)" : "",
					secs(rp->phase_ns - p->attach_ns), what);
		else
			progress__phase(p, "%s: waiting for the first %s, up to %.0f s; "
					"Ctrl-C to stop", win, first, secs(left));
		break;
	case RECORDER_DELAY:
		progress__phase(p, "armed: the %s opens in %.1f s (--delay); Ctrl-C to stop",
				win, secs(left));
		break;
	case RECORDER_OPEN:
		if (rp->deadline_ns)
			progress__phase(p, "%s open after %.3f s of waiting: %.1f s; "
					"Ctrl-C ends it early", win, secs(rp->arm_wait_ns),
					secs(rp->deadline_ns - rp->window_start_ns));
		else
			progress__phase(p, "%s open after %.3f s of waiting: %s; "
					"Ctrl-C ends it", win, secs(rp->arm_wait_ns), end);
		break;
	case RECORDER_CLOSING:
		progress__phase(p, "%s closed after %.3f s: %" PRIu64 " event%s, %s; "
				"writing the capture", win,
				secs(rp->deadline_ns > rp->window_start_ns ?
				     rp->deadline_ns - rp->window_start_ns : 0),
				rp->spans, plural(rp->spans), lost);
		break;
	case RECORDER_BETWEEN:
		progress__phase(p, "next window (%u/%u) in %.1f s (--interval)", rp->window,
				rp->windows, secs(left));
		break;
	}
}

/* The line within a phase, on a terminal: the phase's words and what moves. */
static void say_tick(struct progress *p, const struct recorder_progress *rp)
{
	char what[160], lost[64], win[32], end[64];
	uint64_t left = rp->deadline_ns > rp->now_ns ? rp->deadline_ns - rp->now_ns : 0;
	uint64_t in = rp->now_ns - rp->phase_ns;

	placed(rp, what, sizeof(what));
	losses(rp, lost, sizeof(lost));
	window_name(rp, win, sizeof(win));
	window_end(rp, end, sizeof(end));
	switch (rp->phase) {
	case RECORDER_ATTACHING:
		progress__update(p, "attaching to %s: loading and placing probes (%.1f s)",
				 p->what, secs(in));
		break;
	case RECORDER_ARMING:
		if (rp->no_runtime)
			progress__update(p, "no accelerator runtime yet: waiting %.1f s of "
					 "%.0f s%s; Ctrl-C to stop", secs(in),
					 secs(rp->deadline_ns - rp->phase_ns),
					 rp->bounded_by_duration ? " (--duration)" : "");
		else
			progress__update(p, "waiting for the first %s, %.1f s of up to %.0f s; "
					 "Ctrl-C to stop (%s)", p->from_start ? "device activity" :
					 "step", secs(in), secs(rp->deadline_ns - rp->phase_ns), what);
		break;
	case RECORDER_DELAY:
		progress__update(p, "armed: the %s opens in %.1f s (--delay); Ctrl-C to stop",
				 win, secs(left));
		break;
	case RECORDER_OPEN: {
		uint64_t el = rp->now_ns > rp->window_start_ns ?
			      rp->now_ns - rp->window_start_ns : 0;

		if (rp->deadline_ns)
			progress__update(p, "%s %.1f / %.1f s, %" PRIu64 " event%s, %s; "
					 "Ctrl-C ends it early", win, secs(el),
					 secs(rp->deadline_ns - rp->window_start_ns), rp->spans,
					 plural(rp->spans), lost);
		else
			progress__update(p, "%s %.1f s (%s), %" PRIu64 " event%s, %s; "
					 "Ctrl-C ends it", win, secs(el), end, rp->spans,
					 plural(rp->spans), lost);
		break;
	}
	case RECORDER_CLOSING:
		progress__update(p, "%s closed: %" PRIu64 " event%s, %s; finishing the "
				 "capture (%.1f s)", win, rp->spans, plural(rp->spans), lost,
				 secs(in));
		break;
	case RECORDER_BETWEEN:
		progress__update(p, "next window (%u/%u) in %.1f s (--interval)", rp->window,
				 rp->windows, secs(left));
		break;
	}
}

void progress__recorder(void *ctx, const struct recorder_progress *rp)
{
	struct progress *p = ctx;

	if (!p || p->mode == PROGRESS_QUIET)
		return;
	if (rp->changed || (int)rp->phase != p->phase) {
		p->phase = rp->phase;
		say_phase(p, rp);
		return;
	}
	say_tick(p, rp);
}

/* ---------------------------------------------------------------- trigger */

static uint64_t real_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static void trigger_tick(void *ctx)
{
	struct progress *p = ctx;
	uint64_t now = real_ns(), at = p->at_ns, end = at + p->duration_ns;

	if (now < at)
		progress__update(p, "the trigger is in %.1f s; Ctrl-C stops waiting (the daemon "
				 "still captures)", secs(at - now));
	else if (now < end)
		progress__update(p, "capturing %.1f / %.1f s after the trigger; Ctrl-C stops "
				 "waiting (the daemon still captures)", secs(now - at),
				 secs(p->duration_ns));
	else
		progress__update(p, "the daemon is writing the capture (%.1f s); Ctrl-C stops "
				 "waiting", secs(now - end));
}

int progress__trigger(struct progress *p, uint64_t at_realtime_ns, uint64_t duration_ns)
{
	uint64_t now = real_ns();
	char when[64] = "now";

	if (!p || p->mode == PROGRESS_QUIET)
		return 0;
	p->context = "trigger";
	p->at_ns = at_realtime_ns ? at_realtime_ns : now;
	p->duration_ns = duration_ns;
	if (at_realtime_ns > now)
		snprintf(when, sizeof(when), "in %.1f s", secs(at_realtime_ns - now));
	if (duration_ns)
		progress__phase(p, "asking the daemon for a capture %s: its flight recorder's "
				"last seconds and %.1f s after; Ctrl-C stops waiting (the daemon "
				"still captures)", when, secs(duration_ns));
	else
		progress__phase(p, "asking the daemon for a capture %s: its flight recorder's "
				"last seconds; Ctrl-C stops waiting (the daemon still captures)",
				when);
	return progress__start_ticker(p, trigger_tick, p);
}

/* ---------------------------------------------------------------- ticker */

static void *ticker_main(void *arg)
{
	struct progress *p = arg;
	struct timespec ts = { 0, 1000000000L / PROGRESS_HZ };

	while (!__atomic_load_n(&p->stop_ticking, __ATOMIC_ACQUIRE)) {
		p->tick(p->tick_ctx);
		nanosleep(&ts, NULL);
	}
	return NULL;
}

int progress__start_ticker(struct progress *p, void (*tick)(void *ctx), void *ctx)
{
	int err;

	if (!p || p->mode != PROGRESS_TTY || p->ticking)
		return 0;
	p->tick = tick;
	p->tick_ctx = ctx;
	__atomic_store_n(&p->stop_ticking, false, __ATOMIC_RELEASE);
	err = pthread_create(&p->ticker, NULL, ticker_main, p);
	if (err)
		return -err;
	p->ticking = true;
	return 0;
}

void progress__stop_ticker(struct progress *p)
{
	if (!p || !p->ticking)
		return;
	__atomic_store_n(&p->stop_ticking, true, __ATOMIC_RELEASE);
	pthread_join(p->ticker, NULL);
	p->ticking = false;
}
