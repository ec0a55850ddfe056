// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * GetPjrtApi and the function table.
 *
 * The table is a function-local static, zero until the first call fills it,
 * as newer XLA plugins build theirs: it lives in the library's writable data
 * (.bss), not in read-only data, so a tracer that attaches to a running
 * process must find it by scanning the plugin's data mappings. It is filled
 * by assignments, not copied from an array, so no second list of the same
 * pointers exists to be found instead.
 *
 * Every slot the simulator does not implement gets its own function that
 * returns UNIMPLEMENTED naming the slot (weak, so the implementations in the
 * other files replace them at link time).
 *
 * extension_start points to the profiler extension (plugin_profiler.c),
 * the one extension libtpu's frameworks look for.
 */
#include "plugin.h"

#define SIM_STUB(n, name)						\
	__attribute__((weak, noinline)) PJRT_Error *sim_PJRT_##name(void *args) \
	{								\
		(void)args;						\
		return sim_error(PJRT_Error_Code_UNIMPLEMENTED,		\
				 "PJRT_" #name " is not implemented by the " \
				 "simulated TPU plugin");		\
	}
PJRT_SLOTS(SIM_STUB)
#undef SIM_STUB

static void fill(PJRT_Api *api)
{
	int nslots = pjrt_num_slots(SIM_PJRT_MINOR), s;

	api->hdr.struct_size = sizeof(PJRT_Api_Header) + (size_t)nslots * sizeof(PJRT_Fn);
	api->hdr.extension_start = sim_profiler_extension();
	api->hdr.pjrt_api_version.struct_size = sizeof(PJRT_Api_Version);
	api->hdr.pjrt_api_version.extension_start = NULL;
	api->hdr.pjrt_api_version.major_version = PJRT_API_MAJOR;
	api->hdr.pjrt_api_version.minor_version = SIM_PJRT_MINOR;
#define SIM_FILL(n, name)						\
	s = pjrt_slot_for_minor(n, SIM_PJRT_MINOR);			\
	if (s >= 0)							\
		api->fns[s] = sim_PJRT_##name;
	PJRT_SLOTS(SIM_FILL)
#undef SIM_FILL
}

SIM_EXPORT const PJRT_Api *GetPjrtApi(void)
{
	static union {
		PJRT_Api api;
		char bytes[sizeof(PJRT_Api_Header) + PJRT_SLOTS_94 * sizeof(PJRT_Fn)];
	} table;
	static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	static int filled;

	if (!__atomic_load_n(&filled, __ATOMIC_ACQUIRE)) {
		pthread_mutex_lock(&lock);
		if (!filled) {
			fill(&table.api);
			__atomic_store_n(&filled, 1, __ATOMIC_RELEASE);
		}
		pthread_mutex_unlock(&lock);
	}
	return &table.api;
}
