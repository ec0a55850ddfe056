// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Block reads for runtime probes' fetch programs. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>

#include "probe/fetch_plan.h"

static bool plain_deref(const struct at_fetch_op *op)
{
	return (op->flags & FETCH_DEREF) &&
	       !(op->flags & (FETCH_PAYLOAD_STR | FETCH_PAYLOAD_BYTES));
}

static bool same_base(const struct at_fetch_op *a, const struct at_fetch_op *b)
{
	return a->src == b->src &&
	       (a->flags & FETCH_AT_RETURN) == (b->flags & FETCH_AT_RETURN);
}

/* Gives the ops in @members[0..n) block @b when there are two or more. */
static void close_block(struct rt_probe_spec *spec, const __u32 *members, __u32 n,
			__s64 lo, __s64 hi)
{
	struct at_fetch_block *blk;

	if (n < 2 || spec->n_blocks >= AT_MAX_FETCH_BLOCKS)
		return;
	blk = &spec->blocks[spec->n_blocks++];
	blk->src = spec->ops[members[0]].src;
	blk->flags = spec->ops[members[0]].flags & FETCH_AT_RETURN;
	blk->offset = lo;
	blk->len = hi - lo;
	for (__u32 k = 0; k < n; k++)
		spec->ops[members[k]].block = spec->n_blocks;
}

void fetch_plan__blocks(struct rt_probe_spec *spec)
{
	bool planned[AT_MAX_FETCH_OPS] = {};
	__u32 n_ops = spec->n_ops < AT_MAX_FETCH_OPS ? spec->n_ops : AT_MAX_FETCH_OPS;

	spec->n_blocks = 0;
	for (__u32 i = 0; i < AT_MAX_FETCH_OPS; i++)
		spec->ops[i].block = 0;

	for (__u32 i = 0; i < n_ops; i++) {
		__u32 group[AT_MAX_FETCH_OPS], members[AT_MAX_FETCH_OPS];
		__u32 n = 0, m = 0;
		__s64 lo = 0, hi = 0;

		if (planned[i] || !plain_deref(&spec->ops[i]))
			continue;
		/* Every op on this base, by offset (insertion sort: n <= 16). */
		for (__u32 j = i; j < n_ops; j++) {
			const struct at_fetch_op *op = &spec->ops[j];
			__u32 k = n++;

			if (planned[j] || !plain_deref(op) || !same_base(op, &spec->ops[i])) {
				n--;
				continue;
			}
			planned[j] = true;
			while (k && spec->ops[group[k - 1]].offset > op->offset) {
				group[k] = group[k - 1];
				k--;
			}
			group[k] = j;
		}
		/* Sweep: a block grows while its bytes fit. */
		for (__u32 g = 0; g < n; g++) {
			const struct at_fetch_op *op = &spec->ops[group[g]];
			__s64 start = op->offset, end = start + op->size;

			if (m && end - lo > AT_FETCH_BLOCK_MAX) {
				close_block(spec, members, m, lo, hi);
				m = 0;
			}
			if (!m)
				lo = start, hi = end;
			hi = end > hi ? end : hi;
			members[m++] = group[g];
		}
		close_block(spec, members, m, lo, hi);
	}
}

int fetch_plan__check(const struct rt_probe_spec *spec)
{
	if (spec->n_ops > AT_MAX_FETCH_OPS || spec->n_blocks > AT_MAX_FETCH_BLOCKS)
		return -EINVAL;
	for (__u32 i = 0; i < spec->n_ops; i++) {
		const struct at_fetch_op *op = &spec->ops[i];
		const struct at_fetch_block *blk;

		if (!op->block)
			continue;
		if (op->block > spec->n_blocks || !plain_deref(op) ||
		    (op->size != 1 && op->size != 2 && op->size != 4 && op->size != 8))
			return -EINVAL;
		blk = &spec->blocks[op->block - 1];
		if (!blk->len || blk->len > AT_FETCH_BLOCK_MAX || blk->src != op->src ||
		    blk->flags != (op->flags & FETCH_AT_RETURN) ||
		    op->offset < blk->offset ||
		    (__s64)op->offset + op->size > (__s64)blk->offset + blk->len)
			return -EINVAL;
	}
	return 0;
}
