/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * acceltrace daemon's loop: the flight recorder, the control socket, the
 * trigger rules, the metrics (HTTP and textfile), in one thread; the HTTP
 * server only serves the text this loop publishes.
 *
 * Signals are the caller's: it counts them in the flags below and the loop
 * acts on each change (SIGTERM/SIGINT: finish a capture in progress and
 * return; SIGHUP: reload the configuration file; SIGUSR1: trigger).
 */
#ifndef ACCELTRACE_DAEMON_H
#define ACCELTRACE_DAEMON_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "daemon/daemon_config.h"

struct daemon_opts {
	size_t sz;
	const char *config_path;	/* NULL: none (SIGHUP reloads nothing) */
	/* The settings: the file's and the flags' (flags.from_flags marks
	 * which keys the command line set, kept over reloads). */
	struct daemon_config config;
	const volatile sig_atomic_t *stops;
	const volatile sig_atomic_t *reloads;
	const volatile sig_atomic_t *triggers;
	/* When the first stop came (CLOCK_MONOTONIC); NULL or 0: when the
	 * loop saw it. A capture in progress ends there. */
	const volatile uint64_t *stop_at_ns;
};
#define daemon_opts__last_field stop_at_ns

/* Runs until stopped; 0 after a clean stop, -errno when it could not
 * start (the reason logged). */
int daemon_run(const struct daemon_opts *opts);

#endif /* ACCELTRACE_DAEMON_H */
