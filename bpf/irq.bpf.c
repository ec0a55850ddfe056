// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Device interrupts: irq_handler_entry/exit for the irq numbers user space
 * resolved from the probe packs' names (tpu_common*, vfio-msix*, apex,
 * nvidia), paired per CPU. Interrupts belong to no process, so the filter is
 * the irq number, not the traced set.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "acceltrace.bpf.h"

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, __u32);	/* irq number */
	__type(value, __u32);	/* index of the probe-pack name that matched */
} traced_irqs SEC(".maps");

struct irq_pending {
	__u64 start_ns;
	__u32 irq;
	__u32 active;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct irq_pending);
} irq_pending SEC(".maps");

static __always_inline int on_irq_entry(int irq)
{
	__u32 key = irq, zero = 0;
	struct irq_pending *p;

	if (detail_off || !bpf_map_lookup_elem(&traced_irqs, &key))
		return 0;
	p = bpf_map_lookup_elem(&irq_pending, &zero);
	if (!p)
		return 0;
	p->start_ns = bpf_ktime_get_ns();
	p->irq = irq;
	p->active = 1;
	return 0;
}

static __always_inline int on_irq_exit(int irq, int ret)
{
	__u32 zero = 0;
	struct irq_pending *p = bpf_map_lookup_elem(&irq_pending, &zero);
	struct ev_irq *rec;
	void *ring;

	if (!p || !p->active || p->irq != (__u32)irq)
		return 0;
	p->active = 0;
	rec = reserve_record(&ring, sizeof(*rec), EV_IRQ);
	if (!rec)
		return 0;
	fill_ids(&rec->h, bpf_get_current_pid_tgid());
	rec->h.start_ns = p->start_ns;
	rec->h.end_ns = bpf_ktime_get_ns();
	rec->irq = irq;
	rec->ret = ret;
	submit_record(ring, rec, EV_IRQ);
	return 0;
}

#define IRQ_PROGS(flavour)						\
SEC(#flavour "/irq_handler_entry")					\
int BPF_PROG(flavour##_irq_entry, int irq, struct irqaction *action)	\
{ return on_irq_entry(irq); }						\
SEC(#flavour "/irq_handler_exit")					\
int BPF_PROG(flavour##_irq_exit, int irq, struct irqaction *action, int ret) \
{ return on_irq_exit(irq, ret); }

IRQ_PROGS(tp_btf)
IRQ_PROGS(raw_tp)
