// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Device memory in the metrics, from the daemon's book: in use, peak and
 * bytes past the kernel's live table per (process, device, allocator), one device's two layers told apart by
 * the allocator label; a process the metrics do not report, and an exited
 * one, left out; at most METRICS_MAX_MEM allocators a process.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"
#include "capture/capture.h"
#include "capture/capture_memory.h"
#include "daemon/metrics.h"
#include "devmem/devmem_book.h"

#define SEC 1000000000ull

static bool resolve(void *ctx, const struct at_mem_agg_key *key, uint32_t *ordinal,
		    const char **platform)
{
	(void)ctx;
	*ordinal = (uint32_t)key->device;
	*platform = "GPU";
	return true;
}

static void sample(struct devmem_book *b, uint32_t pid, uint16_t layer, uint64_t device,
		   uint64_t in_use, uint64_t peak)
{
	struct at_mem_agg_key k = { .pid = pid, .layer = layer, .device = device };
	/* Past the live table: as many bytes untracked as in use. */
	struct at_mem_agg a = { .in_use = in_use, .peak = peak, .untracked = pid == 200,
				.untracked_bytes = pid == 200 ? in_use : 0 };

	ASSERT_OK(devmem_book__sample(b, SEC, &k, &a, resolve, NULL), "sample");
}

static char *render(struct metrics *m)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	if (!f)
		return NULL;
	ASSERT_OK(metrics__render(m, NULL, 2 * SEC, f), "render");
	fclose(f);
	return text;
}

#define LABELS(pid) "{pid=\"" pid "\",command=\"\",container=\"\",pod=\"\","

int main(void)
{
	struct capture_opts copts = { .sz = sizeof(copts) };
	struct metrics_opts mo = { .sz = sizeof(mo), .no_proc_labels = true };
	struct devmem_book_opts bo = { .sz = sizeof(bo) };
	static const struct devmem_tier tiers[] = { { SEC, 4 } };
	struct capture *c = capture__new(&copts);
	struct metrics *m = metrics__new(&mo);
	struct devmem_book *b;
	struct capture_span s = { .start_ns = SEC, .end_ns = SEC + 1000, .kind = SPAN_EXECUTE };
	char *text;

	bo.tiers = tiers;
	bo.n_tiers = 1;
	b = devmem_book__new(&bo);
	if (!ASSERT_OK_PTR(c, "capture") || !ASSERT_OK_PTR(m, "metrics") ||
	    !ASSERT_OK_PTR(b, "book"))
		goto out;
	/* pids 100 and 200 did device work; 300 only allocated. */
	s.track = capture__host_track(c, 100, 100);
	metrics__span(m, c, &s);
	s.track = capture__host_track(c, 200, 200);
	metrics__span(m, c, &s);
	sample(b, 100, MEM_LAYER_CUDA, 0, 1 << 30, 3u << 29);
	sample(b, 100, MEM_LAYER_PJRT, 0, 1 << 20, 1 << 21);
	/* A buffer on a device no runtime call named. */
	sample(b, 100, MEM_LAYER_PJRT, CAPTURE_MEM_DEVICE_UNKNOWN, 512, 512);
	sample(b, 200, MEM_LAYER_CUDA, 1, 4096, 8192);
	sample(b, 300, MEM_LAYER_CUDA, 0, 1, 1);
	/* pid 200 has more allocators than a process may show. */
	for (uint64_t d = 2; d < 2 + METRICS_MAX_MEM; d++)
		sample(b, 200, MEM_LAYER_CUDA, d, d, d);
	metrics__set_device_memory(m, b);
	text = render(m);
	if (ASSERT_OK_PTR(text, "text")) {
		ASSERT_STRCONTAINS(text, "# TYPE acceltrace_device_memory_bytes gauge\n", "type");
		ASSERT_STRCONTAINS(text, "acceltrace_device_memory_bytes" LABELS("100")
				   "device=\"0\",allocator=\"GPU_0_cuda_reserved\"} 1073741824\n",
				   "CUDA layer in use");
		ASSERT_STRCONTAINS(text, "acceltrace_device_memory_bytes" LABELS("100")
				   "device=\"0\",allocator=\"GPU_0_pjrt_buffers\"} 1048576\n",
				   "PJRT layer on the same device, apart");
		ASSERT_STRCONTAINS(text, "acceltrace_device_memory_bytes" LABELS("100")
				   "device=\"unknown\",allocator=\"GPU_unknown_pjrt_buffers\"} 512\n",
				   "an unknown device is 'unknown', as its allocator says");
		ASSERT_FALSE(strstr(text, "4294967295"), "no device=\"4294967295\"");
		ASSERT_STRCONTAINS(text, "acceltrace_device_memory_peak_bytes" LABELS("100")
				   "device=\"0\",allocator=\"GPU_0_cuda_reserved\"} 1610612736\n",
				   "peak");
		ASSERT_STRCONTAINS(text, "acceltrace_device_memory_bytes" LABELS("200")
				   "device=\"1\",allocator=\"GPU_1_cuda_reserved\"} 4096\n",
				   "another process");
		ASSERT_STRCONTAINS(text, "acceltrace_device_memory_untracked_bytes" LABELS("200")
				   "device=\"1\",allocator=\"GPU_1_cuda_reserved\"} 4096\n",
				   "untracked bytes of a process past the live table");
		ASSERT_STRCONTAINS(text, "acceltrace_device_memory_untracked_bytes" LABELS("100")
				   "device=\"0\",allocator=\"GPU_0_cuda_reserved\"} 0\n",
				   "none of one within it");
		ASSERT_FALSE(strstr(text, "pid=\"300\""), "not reported: not in the metrics");
		ASSERT_FALSE(strstr(text, "allocator=\"GPU_17_cuda_reserved\""),
			     "past METRICS_MAX_MEM: left out");
	}
	free(text);
	/* An exit: its series go at once (metrics), and stay gone while the
	 * book keeps its timeline for captures. */
	devmem_book__process_exited(b, 100, 2 * SEC);
	metrics__set_device_memory(m, b);
	text = render(m);
	if (ASSERT_OK_PTR(text, "text after exit"))
		ASSERT_FALSE(strstr(text, "acceltrace_device_memory_bytes{pid=\"100\""),
			     "an exited process's memory is not reported");
	free(text);
out:
	devmem_book__free(b);
	metrics__free(m);
	capture__free(c);
	return test_exit();
}
