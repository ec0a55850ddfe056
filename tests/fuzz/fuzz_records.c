// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Packed ring records (probe/packed_records.c): their lengths and counts
 * come from the kernel, their bytes from what a traced process's calls
 * passed. Byte 0 picks the record (even: a runtime call, odd: a syscall);
 * the rest is the record as the ring handed it over. An unpacked record
 * must be whole and its own unpacking.
 */
#include "fuzz_input.h"
#include "probe/packed_records.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *rec;

	if (size < 1)
		return 0;
	/* A copy of its own size, so that a read past it is seen. */
	rec = malloc(size - 1 ? size - 1 : 1);
	if (!rec)
		abort();
	memcpy(rec, data + 1, size - 1);
	if (!(data[0] & 1)) {
		struct ev_rt_call rt, again;

		if (!rt_record__unpack(&rt, rec, size - 1)) {
			if (rt.n_vals != AT_MAX_FETCH_OPS || rt.payload_len > AT_RT_PAYLOAD ||
			    rt_record__unpack(&again, &rt, sizeof(rt)) ||
			    memcmp(&rt, &again, sizeof(rt)))
				abort();
			for (size_t i = rt.payload_len; i < AT_RT_PAYLOAD; i++)
				if (rt.payload[i])
					abort();
		}
	} else {
		struct ev_syscall sc, again;

		if (!sys_record__unpack(&sc, rec, size - 1)) {
			if (sc.argbuf_len > AT_ARGBUF ||
			    sys_record__unpack(&again, &sc, sizeof(sc)) ||
			    memcmp(&sc, &again, sizeof(sc)))
				abort();
			for (size_t i = sc.argbuf_len; i < AT_ARGBUF; i++)
				if (sc.argbuf[i])
					abort();
		}
	}
	free(rec);
	return 0;
}
