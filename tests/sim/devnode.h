/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The runtime's use of the device node, as a driver's user does it: open the
 * node, reset, register an eventfd per core for completion interrupts,
 * DMA-map host buffers around transfers, and in submit mode one submit ioctl
 * per execution. The simulator's node is a character device with /dev/null's
 * numbers, so every ioctl fails with ENOTTY, which is ignored: what matters
 * is that each is issued, with real numbers and arguments, and recorded.
 *
 *   gasket mode (TPU v2-v4):  <dir>/accel0
 *   submit mode (DRM accel):  <dir>/accel/accel0
 */
#ifndef ACCELTRACE_SIM_DEVNODE_H
#define ACCELTRACE_SIM_DEVNODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct devnode;

/* Opens the node under `dir`. Without one it still returns an object (whose
 * calls do nothing) and says so on stderr; NULL only when out of memory. */
struct devnode *devnode__open(const char *dir, bool submit_mode);
void devnode__free(struct devnode *n);
bool devnode__present(const struct devnode *n);
const char *devnode__path(const struct devnode *n);

void devnode__reset(struct devnode *n);
void devnode__register_interrupt(struct devnode *n, int core, int event_fd);
void devnode__unregister_interrupt(struct devnode *n, int core);
/* MAP_BUFFER (gasket mode); returns the device address used. */
uint64_t devnode__map(struct devnode *n, const void *host, size_t size);
void devnode__unmap(struct devnode *n, const void *host, size_t size,
		    uint64_t device_address);
/* One DRM_IOCTL_IVPU_SUBMIT (submit mode only). */
void devnode__submit(struct devnode *n, uint64_t launch_id, uint32_t buffer_count);

#endif /* ACCELTRACE_SIM_DEVNODE_H */
