// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The /host:CPU plane stat acceltrace.processes: every process of the
 * capture with its parent, container and pod, as one JSON object (an
 * XPlane has no per-process message). Readers give a device-less child
 * (a DataLoader worker) to the report of the process that forked it, and
 * name each process's container.
 */
#include <stddef.h>

#include "capture/capture.h"
#include "lib/json_writer.h"
#include "output/process_origins.h"

int process_origins_json(const struct capture *c, char **json)
{
	size_t n = capture__num_processes(c);
	struct jw_memory m;
	int err;

	*json = NULL;
	if (!n)
		return 0;
	err = jw_memory_open(&m);
	if (err)
		return err;
	jw_start_object(m.jw);
	jw_int_field(m.jw, "version", 1);
	jw_name(m.jw, "processes");
	jw_start_array(m.jw);
	for (size_t i = 0; i < n; i++) {
		const struct capture_process *p = capture__process(c, i);

		jw_start_object(m.jw);
		jw_uint_field(m.jw, "pid", p->pid);
		jw_uint_field(m.jw, "ppid", p->ppid);
		jw_string_field(m.jw, "name", capture__string(c, p->name));
		jw_string_field(m.jw, "container", capture__string(c, p->container));
		jw_string_field(m.jw, "pod", capture__string(c, p->pod));
		jw_end_object(m.jw);
	}
	jw_end_array(m.jw);
	jw_end_object(m.jw);
	return jw_memory_close(&m, json);
}
