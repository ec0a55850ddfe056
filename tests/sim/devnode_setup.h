/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The simulator's "udev": creates the device node the plugin opens, a real
 * character device with /dev/null's major:minor (1:3), so opening it and
 * issuing ioctls on it are real syscalls on a real device (which answers
 * ENOTTY). Needs CAP_MKNOD.
 */
#ifndef ACCELTRACE_SIM_DEVNODE_SETUP_H
#define ACCELTRACE_SIM_DEVNODE_SETUP_H

#include <stdbool.h>
#include <stddef.h>

/* Creates <dir>/accel0, or <dir>/accel/accel0 in submit mode, and stores
 * its path. Returns 0 or -errno. */
int devnode_setup_create(const char *dir, bool submit_mode, char *path, size_t len);
/* Removes the node (and the accel/ directory it made). */
void devnode_setup_remove(const char *dir, bool submit_mode);

#endif /* ACCELTRACE_SIM_DEVNODE_SETUP_H */
