// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Attaching and detaching runtime probes: a sampled slice of the daemon
 * brings back a library's detail probes at once and takes them away at its
 * end. SLICE_PROBES probes in one file (this binary), attached and detached
 * together through uprobe_multi links (one per program) and through
 * per-probe perf uprobes, each in a probe session of its own.
 *
 * Prints BENCH lines (bench.h): slice.attach.MODE and slice.detach.MODE,
 * microseconds per slice. Environment: BENCH_REPS (default 5).
 */
#include <errno.h>
#include <limits.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"
#include "lib/log.h"
#include "probe/kernel_features.h"
#include "probe/probe_session.h"

#define SLICE_PROBES 12

__attribute__((noinline)) int attach_fn_a(int x) { asm volatile("" ::: "memory"); return x + 1; }
__attribute__((noinline)) int attach_fn_b(int x) { asm volatile("" ::: "memory"); return x + 2; }
__attribute__((noinline)) int attach_fn_c(int x) { asm volatile("" ::: "memory"); return x + 3; }

static int no_record(void *ctx, const void *data, size_t size)
{
	(void)ctx;
	(void)data;
	(void)size;
	return 0;
}

int main(void)
{
	static const char *const modes[] = { "multi", "perf" };
	const void *fns[] = { (void *)attach_fn_a, (void *)attach_fn_b, (void *)attach_fn_c };
	int reps = bench_env("BENCH_REPS", 5);
	struct rt_probe_spec spec = { .flags = RT_SPEC_DETAIL };
	uint64_t offs[3];
	char path[PATH_MAX];
	struct features f;
	char missing[512];

	if (geteuid() != 0) {
		fprintf(stderr, "bench_attach: needs root (loads BPF programs)\n");
		return 77;
	}
	log_route_libbpf();
	features__probe(&f);
	if (!features__can_run(&f, missing, sizeof(missing))) {
		fprintf(stderr, "bench_attach: acceltrace cannot run here: %s\n", missing);
		return 77;
	}
	for (int i = 0; i < 3; i++) {
		if (bench_file_offset(fns[i], path, sizeof(path), &offs[i])) {
			fprintf(stderr, "bench_attach: no file offset for its functions\n");
			return 1;
		}
	}
	for (int m = 0; m < 2; m++) {
		struct probe_session_opts opts = { .sz = sizeof(opts) };
		struct bench_metric ma = { .unit = "us/slice" }, md = { .unit = "us/slice" };
		const struct rt_probe_spec *specs[SLICE_PROBES];
		uint64_t offsets[SLICE_PROBES];
		int ids[SLICE_PROBES];
		struct probe_session *ps;
		struct features g = f;
		char na[64], nd[64];

		if (m == 0 && !f.r[FEAT_UPROBE_MULTI].available) {
			fprintf(stderr, "bench_attach: no uprobe_multi here: %s\n",
				f.r[FEAT_UPROBE_MULTI].detail);
			continue;
		}
		g.r[FEAT_UPROBE_MULTI].available = m == 0;
		opts.features = &g;
		ps = probe_session__open(&opts, no_record, NULL);
		if (!ps) {
			fprintf(stderr, "bench_attach: session (%s): %s\n", modes[m], strerror(errno));
			return 1;
		}
		/* Several probes share an offset, as a pack's entries can. */
		for (int i = 0; i < SLICE_PROBES; i++) {
			specs[i] = &spec;
			offsets[i] = offs[i % 3];
		}
		for (int r = 0; r < reps; r++) {
			uint64_t t0 = bench_now_ns(), t1, t2;
			size_t ok = probe_session__attach_runtime_many(ps, specs, path, offsets,
								       SLICE_PROBES, ids);

			t1 = bench_now_ns();
			probe_session__detach_runtime_many(ps, ids, SLICE_PROBES);
			t2 = bench_now_ns();
			if (ok != SLICE_PROBES) {
				fprintf(stderr, "bench_attach: slice (%s): %zu of %d attached\n",
					modes[m], ok, SLICE_PROBES);
				probe_session__free(ps);
				return 1;
			}
			bench_add(&ma, (t1 - t0) / 1e3);
			bench_add(&md, (t2 - t1) / 1e3);
		}
		snprintf(na, sizeof(na), "slice.attach.%s", modes[m]);
		snprintf(nd, sizeof(nd), "slice.detach.%s", modes[m]);
		ma.name = na;
		md.name = nd;
		bench_print(&ma);
		bench_print(&md);
		probe_session__free(ps);
	}
	return 0;
}
