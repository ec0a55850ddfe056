// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * CUDA's two layers: the runtime (libcudart) reaches the driver (libcuda)
 * through a private table, so its calls are seen once, at the runtime;
 * code that calls the driver API itself (XLA, cuBLAS, Triton) is seen at
 * the driver. A driver call made inside a runtime call on its thread (a
 * runtime that does use the exported functions) is that call seen again:
 * it is kept on the thread's track, marked, and not counted. Driver spans
 * are held per thread, (pid, tid) in a hash map, until a runtime call of
 * the thread says which.
 */
#include <stdlib.h>
#include <string.h>

#include "collect/collector_internal.h"
#include "discover/probe_packs.h"

void collect_span_stat(struct collector *c, struct capture_span *s, const char *key,
		       uint64_t v)
{
	capture_span__add_u64(s, collect_intern_static(c, key), v);
}

/* A launch's stats: the grid, the threads of a block, and the stream. */
void collect_cuda_launch_stats(struct collector *c, struct capture_span *s,
			       uint64_t gx, uint64_t gy, uint64_t gz, uint64_t block,
			       uint64_t stream)
{
	collect_span_stat(c, s, "grid_x", gx);
	collect_span_stat(c, s, "grid_y", gy);
	collect_span_stat(c, s, "grid_z", gz);
	collect_span_stat(c, s, "block_threads", block);
	collect_span_stat(c, s, "stream", stream);
}

void collect_cudart_launch(struct collector *c, const struct ev_rt_call *r,
			   struct capture_span *s)
{
	uint64_t gxy = r->vals[V_CUDART_GRID_XY], bxy = r->vals[V_CUDART_BLOCK_XY];
	uint64_t bz = (uint32_t)r->vals[V_CUDART_BLOCK_Z];

	s->kind = SPAN_EXECUTE;
	c->st.executions++;
	collect_cuda_launch_stats(c, s, (uint32_t)gxy, gxy >> 32, (uint32_t)r->vals[V_CUDART_GRID_Z],
			 (uint64_t)(uint32_t)bxy * (bxy >> 32) * bz,
			 r->vals[V_CUDART_STREAM]);
	collect_span_stat(c, s, "shared_bytes", r->vals[V_CUDART_SHARED]);
	collect_note_activity(c, r->h.start_ns, ACT_EXECUTION);
}

/* cudaMemcpy(Async): the direction is an argument (enum cudaMemcpyKind). */
void collect_cudart_memcpy(struct collector *c, const struct ev_rt_call *r,
			   const struct rt_pack_entry *entry, struct capture_span *s)
{
	static const char *const dirs[] = {
		[CUDART_MEMCPY_H2H] = "host-to-host",
		[CUDART_MEMCPY_H2D] = "host-to-device",
		[CUDART_MEMCPY_D2H] = "device-to-host",
		[CUDART_MEMCPY_D2D] = "device-to-device",
		[CUDART_MEMCPY_DEFAULT] = "inferred from the pointers",
	};
	uint32_t kind = (uint32_t)r->vals[V_CUDART_MEM_KIND];

	s->kind = kind == CUDART_MEMCPY_H2D ? SPAN_H2D :
		  kind == CUDART_MEMCPY_D2H ? SPAN_D2H : SPAN_HOST_OTHER;
	capture_span__add_u64(s, c->k_bytes, r->vals[V_CUDART_MEM_BYTES]);
	capture_span__add_str(s, collect_intern_static(c, "direction"),
			      collect_intern_static(c, kind < sizeof(dirs) / sizeof(dirs[0]) ?
						     dirs[kind] : "unknown"));
	if (entry->n_ops > V_CUDART_MEM_STREAM)
		collect_span_stat(c, s, "stream", r->vals[V_CUDART_MEM_STREAM]);
	collect_note_activity(c, r->h.start_ns, ACT_OTHER);
}

/* Keeps a held driver span: nested in a runtime call, it is that call's
 * work seen again, so it stays on the thread's track but is no launch,
 * copy or sync of its own. */
static void keep_driver_span(struct collector *c, struct capture_span *s, bool nested)
{
	if (nested) {
		s->kind = SPAN_HOST_OTHER;
		collect_span_stat(c, s, "nested_in_runtime_call", 1);
		c->st.cuda_nested++;
	} else if (s->kind == SPAN_EXECUTE) {
		c->st.executions++;	/* a launch, counted once */
	}
	collect_keep_span(c, s);
}

static void flush(struct collector *c, struct cuda_nest *n)
{
	for (uint32_t i = 0; i < n->n_held; i++)
		if (n->gen == c->cap_gen)
			keep_driver_span(c, &n->held[i], false);
		else
			c->st.spans_outside++;	/* held across windows */
	n->n_held = 0;
}

static int flush_thread(uint64_t pid, uint64_t tid, void *value, void *ctx)
{
	(void)pid;
	(void)tid;
	flush(ctx, value);
	return 0;
}

void collect_cuda_flush_all(struct collector *c)
{
	hashmap__filter(c->cuda_threads, flush_thread, c);
}

struct exiting {
	struct collector *c;
	uint32_t pid;
};

static int forget_thread(uint64_t pid, uint64_t tid, void *value, void *ctx)
{
	struct exiting *x = ctx;

	(void)tid;
	if (pid != x->pid)
		return 0;
	flush(x->c, value);
	free(value);
	return 1;
}

void collect_cuda_process_exit(struct collector *c, uint32_t pid)
{
	struct exiting x = { .c = c, .pid = pid };

	hashmap__filter(c->cuda_threads, forget_thread, &x);
}

/* The thread's state, made on first use with @create; NULL when none (or
 * out of memory: counted, and its calls are then counted as they come). */
static struct cuda_nest *cuda_nest_of(struct collector *c, uint32_t pid, uint32_t tid,
				      bool create)
{
	struct cuda_nest *n = hashmap__get(c->cuda_threads, pid, tid);

	if (n || !create)
		return n;
	n = calloc(1, sizeof(*n));
	if (!n) {
		collect_out_of_memory(c);
		return NULL;
	}
	if (collect_put(c, c->cuda_threads, pid, tid, n, NULL)) {
		free(n);
		return NULL;
	}
	n->pid = pid;
	n->tid = tid;
	n->gen = c->cap_gen;
	return n;
}

static bool encloses(uint64_t s0, uint64_t e0, const struct capture_span *in)
{
	return s0 <= in->start_ns && in->end_ns <= e0;
}

/*
 * A driver call's span: nested when a runtime call just seen on the thread
 * encloses it, else held until the thread's next runtime call returns (it
 * may be the caller) or more driver calls push it out. Returns true when
 * it took the span.
 */
bool collect_cuda_driver_span(struct collector *c, const struct ev_rt_call *r,
			      struct capture_span *s)
{
	struct cuda_nest *n = cuda_nest_of(c, r->h.pid, r->h.tid, true);

	if (!n)
		return false;
	for (uint32_t i = 0; i < n->n_recent; i++)
		if (encloses(n->recent_start[i], n->recent_end[i], s)) {
			keep_driver_span(c, s, true);
			return true;
		}
	if (n->gen != c->cap_gen)
		flush(c, n);
	n->gen = c->cap_gen;
	if (n->n_held == CUDA_NEST_HELD) {
		/* The oldest has waited longest: no enclosing call came. */
		keep_driver_span(c, &n->held[0], false);
		memmove(&n->held[0], &n->held[1], sizeof(n->held[0]) * (CUDA_NEST_HELD - 1));
		n->n_held--;
	}
	n->held[n->n_held++] = *s;
	return true;
}

/*
 * A runtime call returned: the driver spans it encloses are nested; those
 * that ended before it began are their own work (the thread moved on);
 * those after it wait (a record of an older call, late from another ring
 * shard, decides nothing about later ones).
 */
void collect_cuda_runtime_call(struct collector *c, const struct ev_rt_call *r)
{
	struct cuda_nest *n = cuda_nest_of(c, r->h.pid, r->h.tid, true);
	uint32_t w = 0;

	if (!n)
		return;
	for (uint32_t i = 0; i < n->n_held; i++) {
		struct capture_span *d = &n->held[i];

		if (n->gen != c->cap_gen)
			c->st.spans_outside++;
		else if (encloses(r->h.start_ns, r->h.end_ns, d))
			keep_driver_span(c, d, true);
		else if (d->end_ns <= r->h.start_ns)
			keep_driver_span(c, d, false);
		else
			n->held[w++] = *d;
	}
	n->n_held = w;
	n->recent_start[n->recent_head] = r->h.start_ns;
	n->recent_end[n->recent_head] = r->h.end_ns;
	n->recent_head = (n->recent_head + 1) % CUDA_NEST_RECENT;
	if (n->n_recent < CUDA_NEST_RECENT)
		n->n_recent++;
}
