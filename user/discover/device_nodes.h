/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Accelerator device nodes and their drivers' interfaces, as data: which
 * paths are device nodes (and of which driver family), how each family's
 * ioctls decode (name, kind, argument fields and what they mean), and which
 * interrupt names belong to accelerators.
 */
#ifndef ACCELTRACE_DEVICE_NODES_H
#define ACCELTRACE_DEVICE_NODES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What an ioctl does, for the report and the capture. */
enum ioctl_kind {
	IOCTL_SETUP,
	IOCTL_DMA_MAP,
	IOCTL_DMA_UNMAP,
	IOCTL_SUBMIT,
	IOCTL_WAIT,
	IOCTL_INTERRUPT,	/* registers or clears a completion eventfd */
	IOCTL_MEMORY,
	IOCTL_OTHER,
};

/* What a decoded argument field means. */
enum ioctl_role {
	ROLE_NONE,
	ROLE_EVENTFD,		/* an eventfd the device will signal */
	ROLE_INTERRUPT,		/* the interrupt / vector index */
	ROLE_SIZE,		/* bytes mapped or transferred */
	ROLE_HOST_ADDR,
	ROLE_DEVICE_ADDR,
	ROLE_COUNT,
};

struct ioctl_field {
	const char *name;
	uint16_t offset;
	uint8_t size;		/* 1, 2, 4 or 8 */
	uint8_t role;		/* enum ioctl_role */
};

#define IOCTL_MAX_FIELDS 6

struct ioctl_decoder {
	uint32_t cmd;
	/* Bits of the command that must match: 0xffffffff exactly, or
	 * 0x0000ffff for type + number where the size bits vary. */
	uint32_t mask;
	const char *name;
	enum ioctl_kind kind;
	struct ioctl_field fields[IOCTL_MAX_FIELDS];
};

struct driver_family {
	const char *name;		/* "gasket", "vfio", "drm-accel/ivpu", ... */
	const char *description;
	const struct ioctl_decoder *ioctls;
	size_t n_ioctls;
};

struct device_node_pattern {
	const char *regex;		/* extended regex on the full path */
	const char *kernel_prefix;	/* matched in BPF on open */
	const struct driver_family *family;
	const char *what;		/* "TPU v2-v4 (gasket)", ... */
};

size_t device_node_pattern_count(void);
const struct device_node_pattern *device_node_pattern(size_t i);
/* The pattern a path matches, or NULL. */
const struct device_node_pattern *device_node_match(const char *path);
/* The distinct kernel prefixes of every pattern (for the BPF side). */
size_t device_node_prefixes(const char **out, size_t max);

/* The decoder for @cmd in @family, or NULL. */
const struct ioctl_decoder *ioctl_decode(const struct driver_family *family,
					 uint32_t cmd);
/* The value of field @f in an argument buffer; false if it is not there. */
bool ioctl_field_value(const struct ioctl_field *f, const uint8_t *buf,
		       size_t len, uint64_t *value);
const char *ioctl_kind_name(enum ioctl_kind kind);

/* Interrupt names of accelerators (irq:irq_handler_entry's "name"). */
bool device_irq_name_match(const char *name);

#endif /* ACCELTRACE_DEVICE_NODES_H */
