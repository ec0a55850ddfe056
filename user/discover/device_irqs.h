/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Accelerator interrupts by name: /proc/interrupts maps irq numbers to the
 * names drivers request them under (tpu_common0-17, vfio-msix[3](...),
 * apex, nvidia); the BPF side filters irq_handler_entry by number.
 */
#ifndef ACCELTRACE_DEVICE_IRQS_H
#define ACCELTRACE_DEVICE_IRQS_H

#include <stddef.h>
#include <stdint.h>

/*
 * Calls fn for every numbered interrupt in @text (the format of
 * /proc/interrupts) whose name, or one of its comma-separated names, is an
 * accelerator's. Returns how many matched.
 */
int device_irqs__parse(const char *text, size_t len,
		       void (*fn)(uint32_t irq, const char *name, void *ctx),
		       void *ctx);

struct device_irq {
	uint32_t irq;
	char name[64];
};

/* Reads /proc/interrupts: its accelerator interrupts in *@irqs (free()
 * it), up to 1024. Returns how many, or -errno. */
int device_irqs__find(struct device_irq **irqs);

#endif /* ACCELTRACE_DEVICE_IRQS_H */
