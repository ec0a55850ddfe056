// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The /host:CPU plane stat acceltrace.processes: every process of the
 * capture with its parent, container and pod, as one JSON object (an
 * XPlane has no per-process message). Readers give a device-less child
 * (a DataLoader worker) to the report of the process that forked it, and
 * name each process's container.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "capture/capture.h"
#include "lib/json_writer.h"
#include "output/process_origins.h"

int process_origins_json(const struct capture *c, char **json)
{
	struct json_writer *jw;
	size_t len = 0, n = capture__num_processes(c);
	char *buf = NULL;
	FILE *f;
	int err = 0;

	*json = NULL;
	if (!n)
		return 0;
	f = open_memstream(&buf, &len);
	if (!f)
		return -ENOMEM;
	jw = jw_new(f, false);
	if (!jw) {
		fclose(f);
		free(buf);
		return -ENOMEM;
	}
	jw_start_object(jw);
	jw_int_field(jw, "version", 1);
	jw_name(jw, "processes");
	jw_start_array(jw);
	for (size_t i = 0; i < n; i++) {
		const struct capture_process *p = capture__process(c, i);

		jw_start_object(jw);
		jw_uint_field(jw, "pid", p->pid);
		jw_uint_field(jw, "ppid", p->ppid);
		jw_string_field(jw, "name", capture__string(c, p->name));
		jw_string_field(jw, "container", capture__string(c, p->container));
		jw_string_field(jw, "pod", capture__string(c, p->pod));
		jw_end_object(jw);
	}
	jw_end_array(jw);
	jw_end_object(jw);
	jw_free(jw);
	if (ferror(f) | fclose(f))
		err = -ENOMEM;
	if (err)
		free(buf);
	else
		*json = buf;
	return err;
}
