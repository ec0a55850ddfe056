// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Compile programs named off the ring-draining path.
 *
 * A program is read from the target's memory while its Compile runs (JAX
 * frees its bytecode as the call returns), which costs reads of another
 * process and time that grows with the program: done in the ring
 * callback, one large program stalled every ring on the host. So
 * Compile's entry only queues the program; collector__name_programs(),
 * called after the drain, names the queue in order within a byte budget
 * per poll. Until its programs are named, a process's runtime records wait
 * here (its Compile's return, the Executes of what it compiled, their
 * completions, in their order) and are handled once the name is known,
 * exactly as if it had been known at once. Bounds: MAX_PENDING_NAMINGS
 * namings and MAX_HELD_RECORDS records; past one, the oldest pending work
 * is named at once (each naming is bounded by mlir_bytecode.h's limits).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LOG_CONTEXT "collector"
#include "lib/log.h"
#include "lib/array.h"
#include "analyze/mlir_bytecode.h"
#include "analyze/program_name.h"
#include "collect/collector_internal.h"
#include "discover/probe_packs.h"

/* Another process's memory as a byte source, through the controller,
 * counting what it reads against the poll's budget. */
struct target_program {
	struct collector *c;
	uint32_t pid;
	uint64_t addr;
	uint64_t bytes;
};

static int read_target(void *ctx, uint64_t off, void *buf, size_t len)
{
	struct target_program *t = ctx;

	t->bytes += len;
	return t->c->ctl.read_memory(t->c->ctl.ctx, t->pid, t->addr + off, buf, len);
}

/* Names @n's program, for its thread's Compile return; the bytes read. */
static uint64_t name_program(struct collector *c, const struct program_naming *n)
{
	struct target_program t = { .c = c, .pid = n->pid, .addr = n->addr };
	struct byte_source src = { .ctx = &t, .size = n->size, .read = read_target };
	char name[64], *copy, *old = NULL;
	int err = pjrt_program_module_name_from(&src, name, sizeof(name));

	if (err == -E2BIG) {
		/* Named for what it is: a hostile or huge program is not
		 * read further, and the capture says so. */
		snprintf(name, sizeof(name), "unnamed program (%llu bytes, past the naming bounds)",
			 (unsigned long long)n->size);
		if (!c->st.programs_too_large++)
			log_warn("pid %u: a program of %llu bytes is past the naming bounds: "
				 "named \"%s\" (counted in the capture)", n->pid,
				 (unsigned long long)n->size, name);
	} else if (err) {
		c->st.programs_unnamed++;
		return t.bytes;
	}
	copy = strdup(name);
	if (!copy) {
		collect_out_of_memory(c);
		return t.bytes;
	}
	if (collect_put(c, c->compiling, n->pid, n->tid, copy, (void **)&old))
		free(copy);
	free(old);
	return t.bytes;
}

/* One naming of @pid's is done: when it was the last, its held records
 * are handled, in their order (one may queue a naming and be held again). */
static void naming_done(struct collector *c, uint32_t pid)
{
	struct held_records *h = hashmap__get(c->held, pid, 0);

	if (!h || --h->namings)
		return;
	hashmap__remove(c->held, pid, 0);
	c->n_held -= h->n;
	for (size_t i = 0; i < h->n; i++) {
		collect_record_in(c, h->recs[i]->data, h->recs[i]->size);
		free(h->recs[i]);
	}
	free(h->recs);
	free(h);
}

/* Takes the naming at ring position @k (0: the oldest) out of the queue. */
static struct program_naming take_naming(struct collector *c, size_t k)
{
	size_t at = (c->namings_head + k) % MAX_PENDING_NAMINGS;
	struct program_naming n = c->namings[at];

	if (!k) {
		c->namings_head = (c->namings_head + 1) % MAX_PENDING_NAMINGS;
	} else {
		/* Later ones move up a place: the queue keeps its order. */
		for (size_t i = k; i + 1 < c->n_namings; i++)
			c->namings[(c->namings_head + i) % MAX_PENDING_NAMINGS] =
				c->namings[(c->namings_head + i + 1) % MAX_PENDING_NAMINGS];
	}
	c->n_namings--;
	return n;
}

static uint64_t name_next(struct collector *c)
{
	struct program_naming n = take_naming(c, 0);
	uint64_t bytes = name_program(c, &n);

	naming_done(c, n.pid);
	return bytes;
}

void collect_programs_queue(struct collector *c, const struct ev_rt_call *r)
{
	struct program_naming n = { .pid = r->h.pid, .tid = r->h.tid,
				    .addr = r->vals[V_COMPILE_CODE],
				    .size = r->vals[V_COMPILE_CODE_SIZE] };
	struct held_records *h;

	if (!c->ctl.read_memory || !n.addr || !n.size || r->fault_mask)
		return;
	c->st.programs_read++;
	if (c->n_namings == MAX_PENDING_NAMINGS)
		name_next(c);
	h = hashmap__get(c->held, n.pid, 0);
	if (!h) {
		h = calloc(1, sizeof(*h));
		if (!h || collect_put(c, c->held, n.pid, 0, h, NULL)) {
			/* Nothing could wait for it: named now. */
			if (!h)
				collect_out_of_memory(c);
			free(h);
			name_program(c, &n);
			return;
		}
	}
	h->namings++;
	c->namings[(c->namings_head + c->n_namings++) % MAX_PENDING_NAMINGS] = n;
}

bool collect_programs_hold(struct collector *c, const void *data, size_t size)
{
	const struct ev_rt_call *r = data;
	const struct rt_pack_entry *entry;
	struct held_records *h;
	struct raw_record *rec;

	/* The common case, nothing held, costs no lookup. */
	if (r->h.type != EV_RT_CALL || !hashmap__count(c->held) ||
	    !(h = hashmap__get(c->held, r->h.pid, 0)))
		return false;
	/* GetPjrtApi's return is wanted at once (its table is probed before
	 * the runtime uses it) and needs no name. */
	entry = c->ctl.probe_entry ? c->ctl.probe_entry(c->ctl.ctx, r->probe_id) : NULL;
	if (entry && entry->event == RT_EV_GET_PJRT_API)
		return false;
	if (c->n_held >= MAX_HELD_RECORDS) {
		collect_programs_flush_pid(c, r->h.pid);
		return collect_programs_hold(c, data, size);
	}
	rec = malloc(sizeof(*rec) + size);
	if (!rec || ARRAY_GROW(h->recs, h->cap, h->n + 1)) {
		free(rec);
		collect_out_of_memory(c);
		collect_programs_flush_pid(c, r->h.pid);
		return collect_programs_hold(c, data, size);
	}
	rec->size = size;
	memcpy(rec->data, data, size);
	h->recs[h->n++] = rec;
	c->n_held++;
	return true;
}

size_t collector__name_programs(struct collector *c)
{
	uint64_t bytes = 0;
	size_t named = 0;

	while (c->n_namings && bytes < NAMING_BYTES_PER_POLL) {
		bytes += name_next(c);
		named++;
	}
	return named;
}

void collect_programs_flush_pid(struct collector *c, uint32_t pid)
{
	for (size_t k = 0; k < c->n_namings;) {
		struct program_naming n;

		if (c->namings[(c->namings_head + k) % MAX_PENDING_NAMINGS].pid != pid) {
			k++;
			continue;
		}
		n = take_naming(c, k);
		name_program(c, &n);
		naming_done(c, pid);
		/* Handling the held records may have queued more of pid's:
		 * they are found from k on, in order. */
	}
}

void collect_programs_flush(struct collector *c)
{
	while (c->n_namings)
		name_next(c);
}

static void free_held(void *v)
{
	struct held_records *h = v;

	for (size_t i = 0; i < h->n; i++)
		free(h->recs[i]);
	free(h->recs);
	free(h);
}

void collect_programs_free(struct collector *c)
{
	hashmap__free(c->held, free_held);
	c->held = NULL;
	c->n_namings = 0;
	c->n_held = 0;
}
