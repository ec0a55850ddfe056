// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Header and record checks of the devtrace format; see devtrace_format.h. */
#include "devtrace/devtrace_format.h"

const char *devtrace_header_problem(const struct devtrace_header *h, uint64_t file_size)
{
	uint64_t names_end, ring_bytes;

	if (h->magic != DEVTRACE_MAGIC)
		return "not a devtrace buffer (bad magic)";
	if (h->version != DEVTRACE_VERSION)
		return "unsupported devtrace version";
	if (h->record_size != DEVTRACE_RECORD_SIZE || h->name_size != DEVTRACE_NAME_SIZE)
		return "unexpected record or name size";
	if (h->header_size < DEVTRACE_HEADER_READ || h->names_offset < h->header_size)
		return "header overlaps its name table";
	if (h->name_capacity > DEVTRACE_NAME_CAPACITY_MAX)
		return "name_capacity over 65536 (DEVTRACE_NAME_CAPACITY_MAX)";
	if (h->records_offset % 4096)
		return "records_offset is not page aligned";
	if (!h->record_capacity || h->record_capacity > (UINT64_MAX - h->records_offset) /
							DEVTRACE_RECORD_SIZE)
		return "impossible record_capacity";
	if (__builtin_add_overflow(h->names_offset,
				   (uint64_t)h->name_capacity * DEVTRACE_NAME_SIZE, &names_end) ||
	    names_end > h->records_offset)
		return "name table overlaps the record ring";
	ring_bytes = h->record_capacity * DEVTRACE_RECORD_SIZE;
	if (h->records_offset + ring_bytes > file_size)
		return "record ring extends past the end of the file";
	if (!h->run_id)
		return "run_id is 0";
	if (!h->clock_rate_hz)
		return "clock_rate_hz is 0";
	if (h->num_cores && h->core >= h->num_cores)
		return "core index beyond num_cores";
	return NULL;
}

bool devtrace_kind_has_name(unsigned int kind)
{
	switch (kind) {
	case DEVTRACE_MODULE_BEGIN:
	case DEVTRACE_MODULE_END:
	case DEVTRACE_OP_BEGIN:
	case DEVTRACE_OP_END:
	case DEVTRACE_INFEED_WAIT_BEGIN:
	case DEVTRACE_INFEED_WAIT_END:
	case DEVTRACE_KERNEL:
	case DEVTRACE_TRANSFER:
	case DEVTRACE_LAUNCH:
		return true;
	}
	return false;
}

enum devtrace_record_verdict devtrace_record_check(const struct devtrace_record *r,
						   uint64_t names)
{
	if (r->kind == 0)
		return DEVTRACE_REC_EMPTY;
	if (r->kind >= DEVTRACE_KIND_MAX)
		return DEVTRACE_REC_UNKNOWN;
	if (devtrace_kind_has_name(r->kind) && r->name_id != DEVTRACE_NO_NAME && r->name_id >= names)
		return DEVTRACE_REC_BAD;
	switch (r->kind) {
	case DEVTRACE_OP_BEGIN:
	case DEVTRACE_OP_END:
		if (r->category >= DEVTRACE_CAT_MAX)
			return DEVTRACE_REC_BAD;
		break;
	case DEVTRACE_CLOCK_SYNC:
		if (!r->arg)
			return DEVTRACE_REC_BAD;
		break;
	case DEVTRACE_DMA_BEGIN:
	case DEVTRACE_DMA_END:
		if (r->arg != 1 && r->arg != 2)
			return DEVTRACE_REC_BAD;
		break;
	case DEVTRACE_KERNEL:
	case DEVTRACE_TRANSFER:
	case DEVTRACE_LAUNCH:
		/* A span ends no earlier than it began. */
		if (r->arg < r->ts || r->category >= DEVTRACE_CAT_MAX)
			return DEVTRACE_REC_BAD;
		break;
	default:
		if (r->category)
			return DEVTRACE_REC_BAD;
	}
	return DEVTRACE_REC_OK;
}

const char *devtrace_kind_name(unsigned int kind)
{
	static const char *const names[DEVTRACE_KIND_MAX] = {
		[DEVTRACE_MODULE_BEGIN] = "MODULE_BEGIN", [DEVTRACE_MODULE_END] = "MODULE_END",
		[DEVTRACE_STEP_BEGIN] = "STEP_BEGIN", [DEVTRACE_STEP_END] = "STEP_END",
		[DEVTRACE_OP_BEGIN] = "OP_BEGIN", [DEVTRACE_OP_END] = "OP_END",
		[DEVTRACE_INFEED_WAIT_BEGIN] = "INFEED_WAIT_BEGIN",
		[DEVTRACE_INFEED_WAIT_END] = "INFEED_WAIT_END",
		[DEVTRACE_CLOCK_SYNC] = "CLOCK_SYNC", [DEVTRACE_DMA_BEGIN] = "DMA_BEGIN",
		[DEVTRACE_DMA_END] = "DMA_END", [DEVTRACE_KERNEL] = "KERNEL",
		[DEVTRACE_TRANSFER] = "TRANSFER", [DEVTRACE_LAUNCH] = "LAUNCH",
	};

	return kind < DEVTRACE_KIND_MAX && names[kind] ? names[kind] : "unknown";
}

const char *devtrace_category_name(unsigned int cat)
{
	/* The names XLA gives these categories in hlo_category. */
	static const char *const names[DEVTRACE_CAT_MAX] = {
		[DEVTRACE_CAT_CONVOLUTION] = "convolution", [DEVTRACE_CAT_FUSION] = "fusion",
		[DEVTRACE_CAT_ALL_REDUCE] = "all-reduce", [DEVTRACE_CAT_INFEED] = "infeed",
		[DEVTRACE_CAT_OUTFEED] = "outfeed", [DEVTRACE_CAT_DOT] = "dot",
		[DEVTRACE_CAT_COPY] = "copy", [DEVTRACE_CAT_OTHER] = "other",
	};

	return cat < DEVTRACE_CAT_MAX ? names[cat] : NULL;
}
