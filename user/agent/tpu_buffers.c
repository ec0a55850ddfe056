// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Devtrace buffers of a PJRT plugin's devices (tpu_buffers.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include <linux/types.h>

#include "acceltrace/devtrace.h"
#include "acceltrace/devtrace_publish.h"
#include "agent/agent_files.h"
#include "agent/name_index.h"
#include "agent/tpu_buffers.h"

/* 8 MiB of records a device: a collection at a window's close of 10 ms
 * steps of 100 ops, 30 s long, is 600k records; the reader keeps up
 * with the ring long before it wraps (it reads while the agent writes). */
#define RING_RECORDS (128u << 10)
#define NAME_ENTRIES 16384u
/* Executions of distinct programs counted per device for `step`. */
#define MODULE_COUNTERS 256

struct module_counter {
	uint64_t hash;
	uint64_t runs;
};

struct tpu_buffer {
	void *map;
	uint64_t size;
	struct devtrace_map m;
	struct name_index index;
	uint64_t last_ts;		/* records never step back */
	uint64_t unlabelled;		/* executions without a run_id */
	struct module_counter counters[MODULE_COUNTERS];
};

/* Ops that ended after every execution a collection held: their
 * execution ends in the next one (a plugin reports an event when it ends),
 * so they wait for it, with their names copied. */
#define MAX_CARRIED 65536

struct tpu_buffers {
	char platform[8];
	struct tpu_buffer *bufs[TPU_MAX_DEVICES];
	unsigned int count;
	uint64_t records;
	struct tpu_span *carried;
	size_t ncarried;
};

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

struct tpu_buffers *tpu_buffers__new(const char *platform)
{
	struct tpu_buffers *b = calloc(1, sizeof(*b));

	if (b)
		snprintf(b->platform, sizeof(b->platform), "%s", platform);
	return b;
}

static struct tpu_buffer *buffer_of(struct tpu_buffers *b, uint32_t device, int *err)
{
	struct devtrace_header *h;
	struct tpu_buffer *t;
	uint64_t now = mono_ns();
	char what[32];

	if (device >= TPU_MAX_DEVICES)
		return NULL;
	if (b->bufs[device])
		return b->bufs[device];
	t = calloc(1, sizeof(*t));
	if (!t || name_index__init(&t->index, NAME_ENTRIES)) {
		free(t);
		*err = -ENOMEM;
		return NULL;
	}
	t->size = devtrace_layout(NAME_ENTRIES, RING_RECORDS, NULL, NULL);
	snprintf(what, sizeof(what), "%.4s%u.devtrace", b->platform, device);
	t->map = agent_map_new_file(what, t->size);
	if (!t->map) {
		*err = -errno;
		name_index__free(&t->index);
		free(t);
		return NULL;
	}
	h = t->map;
	devtrace_header__init_layout(h, NAME_ENTRIES, RING_RECORDS);
	h->core = 0;
	h->num_cores = 1;
	h->device_id = device;
	h->clock_rate_hz = 1000000000ull;
	h->run_id = ((uint64_t)getpid() << 32) ^ now ^ ((uint64_t)device << 56);
	if (!h->run_id)
		h->run_id = 1;
	h->sync_host_ns = now;
	h->sync_device_ts = now;
	memcpy(h->platform, b->platform, sizeof(h->platform));
	memcpy(h->device_kind, b->platform, sizeof(b->platform));
	h->owner_pid = (__u32)getpid();
	devtrace_map__publish_header(&t->m, t->map);
	b->bufs[device] = t;
	b->count++;
	return t;
}

static void buffer_free(struct tpu_buffer *t, bool close)
{
	if (!t)
		return;
	if (t->map) {
		if (close)
			devtrace_map__close(&t->m);
		munmap(t->map, t->size);
	}
	name_index__free(&t->index);
	free(t);
}

static void drop_carried(struct tpu_buffers *b)
{
	for (size_t i = 0; i < b->ncarried; i++)
		free((char *)b->carried[i].name);
	free(b->carried);
	b->carried = NULL;
	b->ncarried = 0;
}

void tpu_buffers__free(struct tpu_buffers *b)
{
	if (!b)
		return;
	for (unsigned int i = 0; i < TPU_MAX_DEVICES; i++)
		buffer_free(b->bufs[i], true);
	drop_carried(b);
	free(b);
}

void tpu_buffers__drop(struct tpu_buffers *b)
{
	if (!b)
		return;
	for (unsigned int i = 0; i < TPU_MAX_DEVICES; i++)
		buffer_free(b->bufs[i], false);
	drop_carried(b);
	free(b);
}

static uint32_t name_id(struct tpu_buffer *t, int kind, const char *s, size_t len)
{
	uint64_t hash = name_index__hash(kind, s, len);
	struct name_slot *slot;
	bool found;

	slot = name_index__slot(&t->index, hash, &found);
	if (!slot)
		return DEVTRACE_NO_NAME;
	if (!found) {
		slot->hash = hash;
		slot->id = devtrace_map__add_name(&t->m, kind, s, len);
		name_index__filled(&t->index);
	}
	return slot->id;
}

/* The execution number of this module on this device, from 1. */
static uint64_t next_run(struct tpu_buffer *t, const struct tpu_span *m)
{
	uint64_t hash = name_index__hash(0, m->name, m->name_len);
	uint32_t i = (uint32_t)hash % MODULE_COUNTERS;

	for (uint32_t probe = 0; probe < MODULE_COUNTERS; probe++) {
		struct module_counter *c = &t->counters[(i + probe) % MODULE_COUNTERS];

		if (!c->hash)
			c->hash = hash;
		if (c->hash == hash)
			return ++c->runs;
	}
	return 0;	/* over MODULE_COUNTERS programs: unnumbered */
}

static void emit(struct tpu_buffers *b, struct tpu_buffer *t, struct devtrace_record *r,
		 struct tpu_write_counts *counts)
{
	if (r->ts < t->last_ts)
		r->ts = t->last_ts;
	t->last_ts = r->ts;
	devtrace_map__emit(&t->m, r);
	b->records++;
	counts->records++;
}

static void clock_pair(struct tpu_buffers *b, struct tpu_buffer *t, uint64_t at,
		       struct tpu_write_counts *counts)
{
	/* The device clock is CLOCK_MONOTONIC: any instant pairs with itself. */
	struct devtrace_record r = { .kind = DEVTRACE_CLOCK_SYNC, .name_id = DEVTRACE_NO_NAME };

	if (at < t->last_ts)
		at = t->last_ts;
	r.ts = r.arg = at;
	emit(b, t, &r, counts);
}

/* Device, then start, executions before the ops they hold (the longer
 * first), so each execution is followed by its ops. */
static int span_cmp(const void *a, const void *c)
{
	const struct tpu_span *x = a, *y = c;

	if (x->device != y->device)
		return x->device < y->device ? -1 : 1;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if (x->module != y->module)
		return x->module ? -1 : 1;
	return (x->end < y->end) - (x->end > y->end);
}

/* One execution @m and the ops after it in @s that began inside it. */
static size_t write_execution(struct tpu_buffers *b, struct tpu_buffer *t,
			      const struct tpu_span *m, const struct tpu_span *s, size_t n,
			      struct tpu_write_counts *counts)
{
	struct devtrace_record r = { 0 };
	size_t nops = 0;
	uint64_t step = next_run(t, m), corr;

	while (nops < n && !s[nops].module && s[nops].device == m->device &&
	       s[nops].start < m->end)
		nops++;
	/* A plugin that gives no run_id: distinct ids, joined by order. */
	corr = m->has_run_id ? m->run_id : (1ull << 63) | ++t->unlabelled;
	r.correlation_id = corr;
	r.step = step;
	r.name_id = name_id(t, DEVTRACE_NAME_MODULE, m->name, m->name_len);
	r.kind = DEVTRACE_MODULE_BEGIN;
	r.ts = m->start;
	r.arg = nops;
	emit(b, t, &r, counts);
	r.kind = DEVTRACE_STEP_BEGIN;
	r.name_id = DEVTRACE_NO_NAME;
	r.arg = 0;
	emit(b, t, &r, counts);
	for (size_t k = 0; k < nops; k++) {
		const struct tpu_span *op = &s[k];
		struct devtrace_record o = {
			.kind = DEVTRACE_OP_BEGIN, .category = op->category,
			.name_id = name_id(t, DEVTRACE_NAME_OP, op->name, op->name_len),
			.correlation_id = corr, .step = step, .ts = op->start, .arg = k,
		};

		emit(b, t, &o, counts);
		o.kind = DEVTRACE_OP_END;
		o.ts = op->end < m->end ? op->end : m->end;
		o.flops = op->flops;
		o.bytes = op->bytes;
		emit(b, t, &o, counts);
	}
	r.kind = DEVTRACE_STEP_END;
	r.ts = m->end;
	emit(b, t, &r, counts);
	r.kind = DEVTRACE_MODULE_END;
	r.name_id = name_id(t, DEVTRACE_NAME_MODULE, m->name, m->name_len);
	r.arg = nops;
	emit(b, t, &r, counts);
	return nops;
}

/* @spans and what the last collection carried, in one array; the carried
 * names are freed with tpu_buffers__write's own copy. */
static struct tpu_span *with_carried(struct tpu_buffers *b, const struct tpu_span *spans,
				     size_t *n, struct tpu_span **old, size_t *nold)
{
	struct tpu_span *all = malloc((*n + b->ncarried + 1) * sizeof(*all));

	*old = b->carried;
	*nold = b->ncarried;
	b->carried = NULL;
	b->ncarried = 0;
	if (!all)
		return NULL;
	if (*nold)
		memcpy(all, *old, *nold * sizeof(*all));
	if (*n)
		memcpy(all + *nold, spans, *n * sizeof(*all));
	*n += *nold;
	return all;
}

/* Keeps @op (ended after its device's last execution) for the next write. */
static void carry(struct tpu_buffers *b, const struct tpu_span *op,
		  struct tpu_write_counts *counts)
{
	struct tpu_span *v;
	char *name;

	if (!(b->ncarried % 1024)) {
		v = b->ncarried < MAX_CARRIED ?
		    realloc(b->carried, (b->ncarried + 1024) * sizeof(*v)) : NULL;
		if (!v) {
			counts->orphan_ops++;
			return;
		}
		b->carried = v;
	}
	name = strndup(op->name, op->name_len);
	if (!name) {
		counts->orphan_ops++;
		return;
	}
	b->carried[b->ncarried] = *op;
	b->carried[b->ncarried].name = name;
	b->ncarried++;
}

int tpu_buffers__write(struct tpu_buffers *b, struct tpu_span *in, size_t n,
		       struct tpu_write_counts *counts)
{
	struct tpu_span *spans, *old;
	size_t i = 0, nold;
	int err = 0;

	memset(counts, 0, sizeof(*counts));
	spans = with_carried(b, in, &n, &old, &nold);
	if (!spans) {
		counts->orphan_ops += n;
		err = -ENOMEM;
		goto out;
	}
	if (n)
		qsort(spans, n, sizeof(*spans), span_cmp);
	while (i < n) {
		uint32_t device = spans[i].device;
		struct tpu_buffer *t = buffer_of(b, device, &err);
		size_t end = i;

		while (end < n && spans[end].device == device)
			end++;
		if (!t) {
			counts->devices_refused += end - i;
			i = end;
			continue;
		}
		clock_pair(b, t, spans[i].start, counts);
		while (i < end) {
			size_t next = i;

			if (spans[i].module) {
				i += 1 + write_execution(b, t, &spans[i], &spans[i + 1],
							 end - i - 1, counts);
				continue;
			}
			/* Ops after the device's last execution wait for theirs;
			 * others are outside any execution. */
			while (next < end && !spans[next].module)
				next++;
			for (; i < next; i++) {
				if (next == end)
					carry(b, &spans[i], counts);
				else
					counts->orphan_ops++;
			}
		}
		clock_pair(b, t, t->last_ts, counts);
	}
out:
	for (size_t k = 0; k < nold; k++)
		free((char *)old[k].name);
	free(old);
	free(spans);
	return err;
}

int tpu_buffers__ensure(struct tpu_buffers *b, uint32_t device)
{
	int err = -ERANGE;

	return buffer_of(b, device, &err) ? 0 : err;
}

uint8_t tpu_category(const char *text, size_t len)
{
	static const struct {
		const char *word;
		uint8_t category;
	} words[] = {	/* the first found names it: "convolution fusion" */
		{ "convolution", DEVTRACE_CAT_CONVOLUTION },
		{ "all-reduce", DEVTRACE_CAT_ALL_REDUCE },
		{ "outfeed", DEVTRACE_CAT_OUTFEED },
		{ "infeed", DEVTRACE_CAT_INFEED },
		{ "fusion", DEVTRACE_CAT_FUSION },
		{ "dot", DEVTRACE_CAT_DOT },
		{ "copy", DEVTRACE_CAT_COPY },
	};

	if (!len)
		return DEVTRACE_CAT_NONE;
	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++) {
		size_t w = strlen(words[i].word);

		for (size_t at = 0; at + w <= len; at++)
			if (!memcmp(text + at, words[i].word, w))
				return words[i].category;
	}
	return DEVTRACE_CAT_OTHER;
}

bool tpu_buffers__owns(const struct tpu_buffers *b, const void *addr)
{
	for (unsigned int i = 0; b && i < TPU_MAX_DEVICES; i++)
		if (b->bufs[i] && b->bufs[i]->map == addr)
			return true;
	return false;
}

unsigned int tpu_buffers__count(const struct tpu_buffers *b)
{
	return b ? b->count : 0;
}

uint64_t tpu_buffers__records(const struct tpu_buffers *b)
{
	return b ? b->records : 0;
}
