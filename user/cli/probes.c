// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * acceltrace probes: what `record` would attach to a process (or to every
 * accelerator user on the host) and why, attaching nothing: runtime libraries
 * and their build ids, the PJRT table (version, address, or why it is
 * refused), device nodes, and per probe its target, offsets, the instruction
 * it sits on and whether the kernel must single-step it.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#define LOG_CONTEXT "probes"
#include "lib/log.h"
#include "cli/cli.h"
#include "lib/json_writer.h"
#include "probe/kernel_features.h"
#include "attach/runtime_attach.h"
#include "discover/targets.h"
#include "attach/attach_control.h"

#define MAX_PIDS 64
#define MAX_LIBRARIES 16

void usage_probes(FILE *out)
{
	fprintf(out,
		"Usage: acceltrace probes (--pid PID | -a) [options]\n"
		"\n"
		"Shows what 'acceltrace record' would attach, and why, without attaching\n"
		"anything: the runtime libraries a process maps (path, build id, probe\n"
		"pack), its PJRT_Api table (version and address, or why it is refused),\n"
		"its device nodes and eventfds, and for every probe the function, the\n"
		"file offset, where the uprobe goes, whether it single-steps (several\n"
		"times an emulated one's cost: 10-20 us a hit against 0.5-5 us on the\n"
		"VMs we measured), whether it has a return probe (a second trap) and\n"
		"whether it is detail (the daemon attaches those only in slices). Also\n"
		"the mechanism each kind of kernel probe will use.\n"
		"\n"
		"  -p, --pid PID      a running process (repeatable)\n"
		"  -a, --all          every process using an accelerator runtime or device\n"
		"      --library PATH also show the probes for this library file\n"
		"\n"
		"Options:\n"
		CLI_COMMON_HELP
		"\n"
		"Examples:\n"
		"  acceltrace probes --pid 4242\n"
		"  acceltrace probes -a\n"
		"  acceltrace probes --pid 4242 --library /opt/libtpu/libtpu.so\n");
}

static const char *lib_table_state(const struct attached_library *l, char *buf,
				   size_t len)
{
	if (!l->pack->pjrt)
		return "no PJRT table (not a PJRT plugin)";
	if (l->table_refused)
		snprintf(buf, len, "PJRT table refused: %s", l->table_note);
	else if (l->has_table)
		snprintf(buf, len, "PJRT %d.%d table at 0x%" PRIx64 " in process %d (%s)%s%s",
			 l->pjrt_major, l->pjrt_minor, l->table_addr, l->table_pid,
			 l->table_scanned ? "found by scanning its data" : "GetPjrtApi's return",
			 l->table_note[0] ? "; " : "", l->table_note);
	else
		snprintf(buf, len, "PJRT table not found yet: %s",
			 l->table_note[0] ? l->table_note :
			 "GetPjrtApi not called; its return probe will find it");
	return buf;
}

/* A line on the process's CUDA runtime layer, when it has CUDA at all. */
static void print_cuda_runtime(const struct process_report *r)
{
	const struct attached_library *lib;

	switch (process_report__cuda_runtime(r, &lib)) {
	case CUDA_RT_STATIC:
		printf("  CUDA runtime linked statically into %s: probed at its exported symbols\n",
		       lib->path);
		break;
	case CUDA_RT_NOT_FOUND:
		printf("  CUDA runtime: not found. The process maps a CUDA driver but no library\n"
		       "    exports the CUDA runtime API (cudaLaunchKernel): a runtime linked in\n"
		       "    without exported symbols cannot be probed, and the launches made\n"
		       "    through it reach the driver by a private table, unseen. Calls to the\n"
		       "    driver API itself (XLA, cuBLAS, Triton) are still seen.\n");
		break;
	default:
		break;
	}
}

static void print_plain(const struct targets *t, const struct runtime_attach *ra,
			const struct features *f)
{
	char buf[1400];

	for (size_t i = 0; i < targets__count(t); i++) {
		const struct process_report *r = targets__report(t, i);

		printf("process %d%s\n", r->pid, r->in_container ?
		       " (in another mount namespace: libraries via /proc/PID/root)" : "");
		if (!r->n_libraries)
			printf("  runtime libraries: none mapped\n");
		for (unsigned int l = 0; l < r->n_libraries; l++) {
			const struct attached_library *lib = r->libraries[l];

			printf("  library %s\n    pack %s (%s), build id %s\n    %s\n",
			       lib->path, lib->pack->name, lib->recognised_by,
			       lib->build_id[0] ? lib->build_id : "none",
			       lib_table_state(lib, buf, sizeof(buf)));
		}
		print_cuda_runtime(r);
		printf("  device nodes: %s", r->n_device_nodes ? "" : "none");
		for (unsigned int d = 0; d < r->n_device_nodes; d++)
			printf("%sfd %d %s (%s)", d ? ", " : "", r->device_nodes[d].fd,
			       r->device_nodes[d].path, r->device_nodes[d].family);
		printf("\n  eventfds: %u\n", r->n_eventfds);
	}
	printf("\nprobes (uprobes, attached once per library file)\n");
	for (size_t i = 0; i < runtime_attach__probe_count(ra); i++) {
		const struct attached_probe *p = runtime_attach__probe_at(ra, i);
		const char *lib = p->lib ? strrchr(p->lib->path, '/') : NULL;

		printf("  %-45s %-22s %s+0x%" PRIx64 " -> +0x%" PRIx64 " on %-10s %s%s%s\n",
		       p->entry->name, p->target, lib ? lib + 1 : "?", p->file_offset,
		       p->attach_offset, p->placement.insn[0] ? p->placement.insn : "?",
		       p->placement.refused ? "REFUSED by the kernel" :
		       p->placement.single_steps ? "single-steps (slow)" :
		       p->placement.moved ? "emulated (moved past a single-stepping prologue)" :
		       "emulated",
		       p->entry->spec_flags & RT_SPEC_RETURN ? ", with return probe" : "",
		       rt_event_kind_is_detail(p->entry->event) ? ", detail" : "");
	}
	if (!runtime_attach__probe_count(ra))
		printf("  none: no runtime library found\n");
	printf("\nkernel probes\n");
	for (enum probe_class pc = 0; pc < PROBE__COUNT; pc++) {
		struct probe_choice c = features__choose(f, pc);

		printf("  %-22s %-20s %s\n", probe_class_name(pc),
		       probe_mechanism_name(c.mech), c.reason);
	}
}

static void json_cuda_runtime(struct json_writer *jw, const struct process_report *r)
{
	const struct attached_library *cudart;
	enum cuda_runtime_layer layer = process_report__cuda_runtime(r, &cudart);

	jw_string_field(jw, "cuda_runtime_layer", cuda_runtime_layer_name(layer));
	if (cudart)
		jw_string_field(jw, "cuda_runtime_library", cudart->path);
}

static void print_json(const struct targets *t, const struct runtime_attach *ra,
		       const struct features *f)
{
	struct json_writer *jw = jw_new(stdout, true);
	char buf[1400];

	if (!jw)
		return;
	jw_start_object(jw);
	jw_name(jw, "processes");
	jw_start_array(jw);
	for (size_t i = 0; i < targets__count(t); i++) {
		const struct process_report *r = targets__report(t, i);

		jw_start_object(jw);
		jw_int_field(jw, "pid", r->pid);
		jw_bool_field(jw, "in_container", r->in_container);
		json_cuda_runtime(jw, r);
		jw_name(jw, "libraries");
		jw_start_array(jw);
		for (unsigned int l = 0; l < r->n_libraries; l++) {
			const struct attached_library *lib = r->libraries[l];

			jw_start_object(jw);
			jw_string_field(jw, "path", lib->path);
			jw_string_field(jw, "build_id", lib->build_id);
			jw_string_field(jw, "pack", lib->pack->name);
			jw_string_field(jw, "recognised_by", lib->recognised_by);
			jw_bool_field(jw, "pjrt", lib->pack->pjrt);
			jw_bool_field(jw, "table_found", lib->has_table);
			jw_bool_field(jw, "table_refused", lib->table_refused);
			if (lib->has_table) {
				jw_int_field(jw, "pjrt_major", lib->pjrt_major);
				jw_int_field(jw, "pjrt_minor", lib->pjrt_minor);
				jw_uint_field(jw, "table_addr", lib->table_addr);
				jw_bool_field(jw, "table_found_by_scan", lib->table_scanned);
			}
			jw_string_field(jw, "table", lib_table_state(lib, buf, sizeof(buf)));
			jw_end_object(jw);
		}
		jw_end_array(jw);
		jw_name(jw, "device_nodes");
		jw_start_array(jw);
		for (unsigned int d = 0; d < r->n_device_nodes; d++) {
			jw_start_object(jw);
			jw_int_field(jw, "fd", r->device_nodes[d].fd);
			jw_string_field(jw, "path", r->device_nodes[d].path);
			jw_string_field(jw, "driver", r->device_nodes[d].family);
			jw_end_object(jw);
		}
		jw_end_array(jw);
		jw_uint_field(jw, "eventfds", r->n_eventfds);
		jw_end_object(jw);
	}
	jw_end_array(jw);
	jw_name(jw, "probes");
	jw_start_array(jw);
	for (size_t i = 0; i < runtime_attach__probe_count(ra); i++) {
		const struct attached_probe *p = runtime_attach__probe_at(ra, i);

		jw_start_object(jw);
		jw_string_field(jw, "function", p->entry->name);
		jw_string_field(jw, "event", rt_event_kind_name(p->entry->event));
		jw_string_field(jw, "target", p->target);
		jw_string_field(jw, "library", p->lib ? p->lib->path : "");
		jw_string_field(jw, "mechanism", "uprobe");
		jw_bool_field(jw, "return_probe", p->entry->spec_flags & RT_SPEC_RETURN);
		jw_bool_field(jw, "detail", rt_event_kind_is_detail(p->entry->event));
		jw_uint_field(jw, "file_offset", p->file_offset);
		jw_uint_field(jw, "attach_offset", p->attach_offset);
		jw_string_field(jw, "instruction", p->placement.insn);
		jw_bool_field(jw, "single_steps", p->placement.single_steps);
		jw_bool_field(jw, "moved_past_prologue", p->placement.moved);
		jw_bool_field(jw, "refused", p->placement.refused);
		jw_string_field(jw, "why", p->placement.why);
		jw_end_object(jw);
	}
	jw_end_array(jw);
	jw_name(jw, "kernel_probes");
	jw_start_object(jw);
	for (enum probe_class pc = 0; pc < PROBE__COUNT; pc++) {
		struct probe_choice c = features__choose(f, pc);

		jw_name(jw, probe_class_key(pc));
		jw_start_object(jw);
		jw_string_field(jw, "mechanism", probe_mechanism_name(c.mech));
		jw_string_field(jw, "reason", c.reason);
		jw_end_object(jw);
	}
	jw_end_object(jw);
	jw_end_object(jw);
	jw_free(jw);
	putchar('\n');
}

int cmd_probes(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "pid", required_argument, NULL, 'p' },
		{ "all", no_argument, NULL, 'a' },
		{ "library", required_argument, NULL, 'L' },
		CLI_COMMON_LONGOPTS,
		{}
	};
	struct runtime_attach_opts aopts = { .sz = sizeof(aopts) };
	struct targets_opts topts = { .sz = sizeof(topts) };
	const char *libraries[MAX_LIBRARIES];
	struct attach_control *ac = NULL;
	struct runtime_attach *ra = NULL;
	struct targets *t = NULL;
	pid_t pids[MAX_PIDS];
	size_t n_pids = 0, n_libs = 0;
	bool all = false;
	struct features f;
	int opt, rc = 1;
	uint64_t v;

	while ((opt = getopt_long(argc, argv, ":p:a" CLI_COMMON_SHORTOPTS, longopts,
				  NULL)) != -1) {
		switch (opt) {
		case 'p':
			if (cli_parse_uint(optarg, &v) || !v || v > INT32_MAX ||
			    n_pids == MAX_PIDS)
				return cli_bad_value("probes", "--pid", optarg, "a process id");
			pids[n_pids++] = v;
			break;
		case 'a':
			all = true;
			break;
		case 'L':
			if (n_libs == MAX_LIBRARIES)
				return cli_bad_value("probes", "--library", optarg,
						     "at most 16 libraries");
			libraries[n_libs++] = optarg;
			break;
		default: {
			int done = cli_common_or_exit("probes", opt, argv, usage_probes);

			if (done >= 0)
				return done;
		}
		}
	}
	if (optind < argc)
		return cli_bad_argument("probes", argv[optind]);
	if (!!n_pids + all != 1 && !n_libs) {
		log_err("name --pid PID or -a (or --library PATH)");
		return EXIT_USAGE;
	}
	features__probe(&f);
	aopts.libraries = libraries;
	aopts.n_libraries = n_libs;
	ra = runtime_attach__new(NULL, &aopts);	/* plan only */
	if (!ra)
		goto out;
	topts.pids = pids;
	topts.n_pids = n_pids;
	topts.whole_host = all;
	/* The attach controller without a probe session: it examines, the
	 * plan is made, nothing is placed. */
	ac = attach_control__new(NULL, ra);
	if (!ac) {
		log_err("out of memory");
		goto out;
	}
	t = targets__new(&topts, NULL);
	if (!t || targets__start(t))
		goto out;
	attach_control__visit_targets(ac, t);
	if (cli_json())
		print_json(t, ra, &f);
	else
		print_plain(t, ra, &f);
	rc = 0;
	if (fflush(stdout) || ferror(stdout)) {
		log_err("writing the report failed");
		rc = 1;
	}
out:
	targets__free(t);
	attach_control__free(ac);
	runtime_attach__free(ra);
	return rc;
}
