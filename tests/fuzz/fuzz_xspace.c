// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * XSpace files of any producer (reader/): decoded into the model, then
 * analysed as `acceltrace report` does, since the report walks every time
 * and name the reader let through.
 */
#include "fuzz_input.h"
#include "reader/xspace_reader.h"
#include "reader/xspace_processes.h"
#include "report/report.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct xs_space *xs = NULL;
	struct report r;
	char err[256];

	if (xs_read_buffer(data, size, "fuzz", &xs, err, sizeof(err)))
		return 0;
	if (!report_build(xs, &r))
		report_free(&r);
	/* And per process, as report does for a whole-host capture: the
	 * thread map and the lines' labels are the file's. */
	{
		struct xs_process *v;
		size_t n;

		if (!xs_processes(xs, &v, &n)) {
			for (size_t i = 0; i < n && i < 4; i++)
				if (!report_build_process(xs, v[i].pid, &r))
					report_free(&r);
			free(v);
		}
	}
	xs_free(xs);
	return 0;
}
