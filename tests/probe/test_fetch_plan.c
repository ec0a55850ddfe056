// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Block planning for fetch programs: dereferences of one base and phase
 * share a read when their bytes fit in one block; anything else is left to
 * read alone. The BPF side of blocks (and the fallback when a block cannot
 * be read) is checked by tests/probe/test_probe_session.
 */
#include "test.h"
#include "probe/fetch_plan.h"
#include "discover/probe_packs.h"

#define DEREF(s, off, sz) \
	((struct at_fetch_op){ .src = (s), .size = (sz), .flags = FETCH_DEREF, .offset = (off) })
#define DEREF_RET(s, off, sz) \
	((struct at_fetch_op){ .src = (s), .size = (sz), \
			       .flags = FETCH_DEREF | FETCH_AT_RETURN, .offset = (off) })

static const struct rt_pack_entry *pack_entry(enum rt_event_kind kind)
{
	for (size_t p = 0; p < rt_pack_count(); p++)
		for (size_t i = 0; i < rt_pack_get(p)->n_entries; i++)
			if (rt_pack_get(p)->entries[i].event == kind)
				return &rt_pack_get(p)->entries[i];
	return NULL;
}

/* PJRT Execute: six Args fields at entry, eight event pointers at return. */
static void check_execute(void)
{
	const struct rt_pack_entry *e = pack_entry(RT_EV_EXECUTE);
	struct rt_probe_spec spec;
	const struct at_fetch_block *b;

	if (!ASSERT_OK_PTR(e, "Execute in the PJRT pack"))
		return;
	rt_pack_entry__spec(e, &spec);
	ASSERT_EQ(spec.n_blocks, 2, "two blocks");
	b = &spec.blocks[0];
	ASSERT_TRUE(b->src == FETCH_ARG0 && !b->flags && b->offset == 0 && b->len == 72,
		    "entry block: Args bytes 0..72");
	b = &spec.blocks[1];
	ASSERT_TRUE(b->src == FETCH_VAL + V_EXEC_EVENTS && b->flags == FETCH_AT_RETURN &&
		    b->offset == 0 && b->len == 64, "return block: eight event pointers");
	ASSERT_EQ(spec.ops[V_EXEC_OPTIONS].block, 1, "options pointer in block 1");
	ASSERT_EQ(spec.ops[V_EXEC_EVENTS].block, 1, "events pointer in block 1");
	ASSERT_EQ(spec.ops[V_EXEC_LAUNCH_ID].block, 0, "launch id read alone");
	for (__u32 i = V_EXEC_STRUCT_SIZE + 1; i < spec.n_ops; i++)
		ASSERT_EQ(spec.ops[i].block, 2, "event pointer in block 2");
}

static void check_rules(void)
{
	struct rt_probe_spec spec = { .n_ops = 6 };

	/* Too far apart for one block, paired up two by two. */
	spec.ops[0] = DEREF(FETCH_ARG0, 0, 8);
	spec.ops[1] = DEREF(FETCH_ARG0, 200, 8);
	spec.ops[2] = DEREF(FETCH_ARG0, 8, 4);
	spec.ops[3] = DEREF(FETCH_ARG0, 204, 4);
	/* Same offsets, other base or other phase: not merged. */
	spec.ops[4] = DEREF(FETCH_ARG0 + 1, 0, 8);
	spec.ops[5] = DEREF_RET(FETCH_VAL + 0, 0, 8);
	fetch_plan__blocks(&spec);
	ASSERT_EQ(spec.n_blocks, 2, "two blocks");
	ASSERT_TRUE(spec.ops[0].block == 1 && spec.ops[2].block == 1, "low pair");
	ASSERT_TRUE(spec.blocks[0].offset == 0 && spec.blocks[0].len == 12, "low range");
	ASSERT_TRUE(spec.ops[1].block == 2 && spec.ops[3].block == 2, "high pair");
	ASSERT_TRUE(spec.blocks[1].offset == 200 && spec.blocks[1].len == 8, "high range");
	ASSERT_TRUE(!spec.ops[4].block && !spec.ops[5].block, "lone ops read alone");

	/* The widest block: first byte to last within AT_FETCH_BLOCK_MAX. */
	memset(&spec, 0, sizeof(spec));
	spec.n_ops = 3;
	spec.ops[0] = DEREF(FETCH_ARG0, -8, 8);
	spec.ops[1] = DEREF(FETCH_ARG0, AT_FETCH_BLOCK_MAX - 24, 8);
	spec.ops[2] = DEREF(FETCH_ARG0, AT_FETCH_BLOCK_MAX - 9, 1);
	fetch_plan__blocks(&spec);
	ASSERT_TRUE(spec.n_blocks == 1 && spec.blocks[0].offset == -8 &&
		    spec.blocks[0].len == AT_FETCH_BLOCK_MAX && spec.ops[2].block == 1,
		    "negative offsets, up to the limit");
	spec.ops[2].offset = AT_FETCH_BLOCK_MAX - 8;
	fetch_plan__blocks(&spec);
	ASSERT_TRUE(spec.n_blocks == 1 && !spec.ops[2].block, "one byte over: read alone");

	/* Payload copies and plain values never join a block. */
	memset(&spec, 0, sizeof(spec));
	spec.n_ops = 3;
	spec.ops[0] = DEREF(FETCH_ARG0, 0, 8);
	spec.ops[1] = (struct at_fetch_op){ .src = FETCH_ARG0, .flags = FETCH_PAYLOAD_BYTES };
	spec.ops[2] = (struct at_fetch_op){ .src = FETCH_ARG0, .offset = 8 };
	fetch_plan__blocks(&spec);
	ASSERT_EQ(spec.n_blocks, 0, "nothing to share");

	/* Past AT_MAX_FETCH_BLOCKS, pairs stay single reads. */
	memset(&spec, 0, sizeof(spec));
	spec.n_ops = 2 * (AT_MAX_FETCH_BLOCKS + 1);
	for (__u32 i = 0; i < spec.n_ops; i++)
		spec.ops[i] = DEREF(FETCH_ARG0 + i / 2, 8 * (i % 2), 8);
	fetch_plan__blocks(&spec);
	ASSERT_EQ(spec.n_blocks, AT_MAX_FETCH_BLOCKS, "blocks capped");
	ASSERT_TRUE(!spec.ops[spec.n_ops - 1].block && !spec.ops[spec.n_ops - 2].block,
		    "the last pair reads alone");

	/* Planning again starts afresh. */
	fetch_plan__blocks(&spec);
	ASSERT_EQ(spec.n_blocks, AT_MAX_FETCH_BLOCKS, "replanned");
}

/* What attach refuses: a plan the BPF side would misread. */
static void check_validation(void)
{
	const struct rt_pack_entry *e = pack_entry(RT_EV_EXECUTE);
	struct rt_probe_spec spec, bad;

	if (!ASSERT_OK_PTR(e, "Execute in the PJRT pack"))
		return;
	rt_pack_entry__spec(e, &spec);
	ASSERT_OK(fetch_plan__check(&spec), "a planned spec passes");
	bad = spec;
	bad.ops[V_EXEC_OPTIONS].block = spec.n_blocks + 1;
	ASSERT_EQ(fetch_plan__check(&bad), -EINVAL, "a block past n_blocks");
	bad = spec;
	bad.blocks[0].len = 0;
	ASSERT_EQ(fetch_plan__check(&bad), -EINVAL, "an empty block");
	bad = spec;
	bad.ops[V_EXEC_OPTIONS].offset = spec.blocks[0].offset + spec.blocks[0].len - 4;
	ASSERT_EQ(fetch_plan__check(&bad), -EINVAL, "an op past its block's end");
	bad = spec;
	bad.ops[V_EXEC_OPTIONS].flags |= FETCH_AT_RETURN;
	ASSERT_EQ(fetch_plan__check(&bad), -EINVAL, "an op of the other phase");
	bad = spec;
	bad.ops[V_EXEC_OPTIONS].src = FETCH_ARG0 + 1;
	ASSERT_EQ(fetch_plan__check(&bad), -EINVAL, "an op on another base");
	bad = spec;
	bad.ops[V_EXEC_OPTIONS].size = 3;
	ASSERT_EQ(fetch_plan__check(&bad), -EINVAL, "an op of 3 bytes");
	bad = spec;
	bad.n_blocks = AT_MAX_FETCH_BLOCKS + 1;
	ASSERT_EQ(fetch_plan__check(&bad), -EINVAL, "too many blocks");
}

int main(void)
{
	check_execute();
	check_rules();
	check_validation();
	return test_exit();
}
