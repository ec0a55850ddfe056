// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * A GPU's stream buffer (docs/devtrace.md, "GPU streams"), written here
 * with the writer's helpers (devtrace_publish.h) as the agent writes it:
 * KERNEL and TRANSFER records out of ts order, a kernel name longer than
 * one name entry, LAUNCH records, a device clock 5 s ahead of the host.
 * Host spans as the uprobes make them: a cudaLaunchKernel; a PJRT Execute
 * holding a cuGraphLaunch; a runtime call holding a driver call marked
 * nested_in_runtime_call; a driver entry (no length) inside a runtime call
 * the probes do not see (cuBLASLt's own runtime). Checked: the stream
 * tracks and what is on them,
 * names whole, times converted, the device a GPU, and each launch's
 * correlation id given to the innermost counted host span around it.
 */
#include <fcntl.h>
#include <sys/mman.h>
#include <linux/types.h>

#include "test.h"
#include "acceltrace/devtrace.h"
#include "acceltrace/devtrace_publish.h"
#include "capture/capture.h"
#include "capture_find.h"
#include "collect/collector.h"

#define US 1000ull
#define MS 1000000ull
#define OFFSET (5000 * MS)	/* the device clock is 5 s ahead */
#define PID 4242
#define TID 4243

static const char long_name[] =
	"void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>,"
	" std::array<char*, 3ul> >(int, at::native::CUDAFunctor_add<float>, "
	"std::array<char*, 3ul>)";

static char path[] = "/tmp/acceltrace-gpu.XXXXXX";

static void emit(struct devtrace_map *m, __u16 kind, uint64_t host0, uint64_t host1,
		 __u32 name, uint64_t corr, uint64_t step, uint64_t bytes)
{
	struct devtrace_record r = {
		.ts = host0 + OFFSET, .arg = host1 + OFFSET, .kind = kind, .name_id = name,
		.correlation_id = corr, .step = step, .bytes = bytes,
		.category = kind == DEVTRACE_TRANSFER ? DEVTRACE_CAT_COPY : 0,
	};

	devtrace_map__emit(m, &r);
}

static void write_buffer(int fd)
{
	struct devtrace_map m = {};
	struct devtrace_header *h;
	struct devtrace_record sync = { .kind = DEVTRACE_CLOCK_SYNC };
	__u64 names_off, rec_off, size = devtrace_layout(64, 64, &names_off, &rec_off);
	__u32 gemm, add, h2d, launch, graph, memcpy_api, launch_exc, lt_gemm;
	void *map;

	ASSERT_OK(ftruncate(fd, (off_t)size), "size");
	map = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (!ASSERT_TRUE(map != MAP_FAILED, "map"))
		return;
	h = map;
	*h = (struct devtrace_header){
		.version = DEVTRACE_VERSION, .header_size = 4096, .record_size = 64,
		.name_size = 64, .name_capacity = 64, .names_offset = names_off,
		.records_offset = rec_off, .record_capacity = 64, .clock_rate_hz = 1000000000ull,
		.run_id = 9, .num_cores = 1, .flags = DEVTRACE_F_STREAMS,
		.sync_host_ns = 1 * MS, .sync_device_ts = 1 * MS + OFFSET,
		.device_kind = "NVIDIA H100 80GB HBM3", .platform = "GPU", .owner_pid = PID,
	};
	devtrace_map__publish_header(&m, map);
	gemm = devtrace_map__add_name(&m, DEVTRACE_NAME_OP, "sm90_gemm", 9);
	add = devtrace_map__add_name(&m, DEVTRACE_NAME_OP, long_name, strlen(long_name));
	h2d = devtrace_map__add_name(&m, DEVTRACE_NAME_OP, "MemcpyH2D", 9);
	launch = devtrace_map__add_name(&m, DEVTRACE_NAME_API, "cudaLaunchKernel_v7000", 22);
	graph = devtrace_map__add_name(&m, DEVTRACE_NAME_API, "cuGraphLaunch", 13);
	memcpy_api = devtrace_map__add_name(&m, DEVTRACE_NAME_API, "cudaMemcpyAsync_v3020", 21);
	launch_exc = devtrace_map__add_name(&m, DEVTRACE_NAME_API, "cudaLaunchKernelExC_v11060", 26);
	lt_gemm = devtrace_map__add_name(&m, DEVTRACE_NAME_OP, "sm90_xmma_gemm", 14);
	ASSERT_EQ(h->name_count, 7 + (strlen(long_name) + 55) / 56,
		  "the long name takes one entry per 56 bytes");
	sync.ts = 10 * MS + OFFSET;
	sync.arg = 10 * MS;
	devtrace_map__emit(&m, &sync);
	/* Work as it completes: stream 9's copy, then stream 7's kernels,
	 * the later-starting one first. */
	emit(&m, DEVTRACE_TRANSFER, 20 * MS, 20 * MS + 40 * US, h2d, 103, 9, 4096);
	emit(&m, DEVTRACE_KERNEL, 12 * MS + 100 * US, 12 * MS + 300 * US, add, 102, 7, 0);
	emit(&m, DEVTRACE_KERNEL, 11 * MS + 20 * US, 11 * MS + 90 * US, gemm, 101, 7, 0);
	emit(&m, DEVTRACE_LAUNCH, 11 * MS + 1 * US, 11 * MS + 4 * US, launch, 101, TID, 0);
	emit(&m, DEVTRACE_LAUNCH, 12 * MS + 12 * US, 12 * MS + 25 * US, graph, 102, TID, 0);
	emit(&m, DEVTRACE_LAUNCH, 19 * MS + 900 * US, 19 * MS + 950 * US, memcpy_api, 103, TID, 0);
	/* cuBLASLt's own runtime: CUPTI names the runtime call, the probes
	 * see the driver's entry inside it. */
	emit(&m, DEVTRACE_KERNEL, 25 * MS + 20 * US, 25 * MS + 60 * US, lt_gemm, 104, 7, 0);
	emit(&m, DEVTRACE_LAUNCH, 25 * MS, 25 * MS + 12 * US, launch_exc, 104, TID, 0);
	sync.ts = 30 * MS + OFFSET;
	sync.arg = 30 * MS;
	devtrace_map__emit(&m, &sync);
	munmap(map, size);
}

static int host_span(struct capture *cap, const char *name, uint64_t start, uint64_t end,
		     bool nested)
{
	struct capture_span s = {
		.start_ns = start, .end_ns = end, .kind = SPAN_EXECUTE,
		.name = capture__intern(cap, name),
	};
	int t = capture__host_track(cap, PID, TID);

	if (t < 0)
		return t;
	s.track = (uint32_t)t;
	if (nested)
		capture_span__add_u64(&s, capture__intern_static(cap, "nested_in_runtime_call"), 1);
	return capture__add_span(cap, &s);
}

static const struct capture_span *find(const struct capture *cap, const char *what,
				       const struct capture_track **track)
{
	return test_find_span(cap, what, -1, track);
}

static bool near(uint64_t a, uint64_t b)
{
	return (a > b ? a - b : b - a) <= 1000;
}

int main(void)
{
	struct capture_opts copts = { .sz = sizeof(copts), .hostname = "t", .session = "t" };
	struct collector_opts o = { .sz = sizeof(o) };
	const struct capture_device *dev;
	const struct capture_track *t = NULL;
	const struct capture_span *s;
	struct collector *col = NULL;
	struct capture *cap = NULL;
	int fd = mkstemp(path);

	if (!ASSERT_GE(fd, 0, "mkstemp"))
		return test_exit();
	write_buffer(fd);
	cap = capture__new(&copts);
	o.capture = cap;
	col = collector__new(&o);
	if (!ASSERT_OK_PTR(cap, "capture") || !ASSERT_OK_PTR(col, "collector"))
		goto out;
	capture__set_probes_attached(cap, 5 * MS);
	ASSERT_EQ(collector__add_devtrace(col, open(path, O_RDONLY), path, NULL), 0, "add");
	ASSERT_OK(collector__open_window(col, 10 * MS), "open window");
	ASSERT_EQ(collector__poll_devtrace(col), 10, "records read, out of order too");
	/* The uprobes' spans: a runtime launch; JAX's Execute around a graph
	 * launch; a runtime copy around the driver copy it made. */
	ASSERT_OK(host_span(cap, "cudaLaunchKernel", 11 * MS, 11 * MS + 6 * US, false), "launch");
	ASSERT_OK(host_span(cap, "PJRT_LoadedExecutable_Execute", 12 * MS, 12 * MS + 60 * US,
			    false), "execute");
	ASSERT_OK(host_span(cap, "cuGraphLaunch", 12 * MS + 10 * US, 12 * MS + 30 * US, false),
		  "graph launch");
	ASSERT_OK(host_span(cap, "cudaMemcpyAsync", 19 * MS + 899 * US, 19 * MS + 960 * US,
			    false), "runtime copy");
	ASSERT_OK(host_span(cap, "cuMemcpyHtoDAsync_v2", 19 * MS + 905 * US, 19 * MS + 945 * US,
			    true), "driver copy inside it");
	ASSERT_OK(host_span(cap, "cuLaunchKernelEx", 25 * MS + 6 * US, 25 * MS + 6 * US, false),
		  "a driver entry inside the runtime call");
	collector__begin_close(col, 40 * MS);
	ASSERT_OK(collector__finish(col), "finish");
	if (!ASSERT_OK(capture__finalize(cap), "finalize"))
		goto out;

	ASSERT_EQ(capture__num_devices(cap), 1, "one GPU");
	dev = capture__device_info(cap, 0);
	ASSERT_STREQ(capture__string(cap, dev->platform), "GPU", "platform from the header");
	ASSERT_STREQ(capture__string(cap, dev->vendor), "Nvidia", "vendor");
	ASSERT_STREQ(capture__string(cap, dev->type), "NVIDIA H100 80GB HBM3", "the GPU's name");

	s = find(cap, "sm90_gemm", &t);
	if (ASSERT_OK_PTR(s, "kernel")) {
		ASSERT_EQ(t->kind, TRACK_DEVICE_STREAM, "on a stream line");
		ASSERT_EQ(t->tid, 7, "stream 7");
		ASSERT_TRUE(near(s->start_ns, 11 * MS + 20 * US) && near(s->end_ns, 11 * MS + 90 * US),
			    "device times converted");
		ASSERT_EQ(s->correlation_id, 101, "its correlation id");
	}
	s = find(cap, long_name, &t);
	ASSERT_TRUE(s && t->tid == 7 && s->correlation_id == 102,
		    "a name of several entries read whole");
	s = find(cap, "MemcpyH2D", &t);
	ASSERT_TRUE(s && t->kind == TRACK_DEVICE_STREAM && t->tid == 9 && s->correlation_id == 103,
		    "the copy on stream 9");

	s = find(cap, "cudaLaunchKernel", &t);
	ASSERT_TRUE(s && s->correlation_id == 101, "the launch joined to its kernel");
	s = find(cap, "cuGraphLaunch", &t);
	ASSERT_TRUE(s && s->correlation_id == 102, "the graph launch: the innermost span");
	s = find(cap, "PJRT_LoadedExecutable_Execute", &t);
	ASSERT_TRUE(s && s->correlation_id == 0, "the Execute around it is not the launch");
	s = find(cap, "cudaMemcpyAsync", &t);
	ASSERT_TRUE(s && s->correlation_id == 103, "the runtime call, not the nested driver call");
	s = find(cap, "cuMemcpyHtoDAsync_v2", &t);
	ASSERT_TRUE(s && s->correlation_id == 0, "the nested driver call stays unjoined");
	s = find(cap, "cuLaunchKernelEx", &t);
	ASSERT_TRUE(s && s->correlation_id == 104,
		    "a driver entry joined to the runtime call around it");
	for (size_t i = 0; i < capture__num_warnings(cap); i++)
		ASSERT_FALSE(strstr(capture__warning(cap, i), "without their host launch"),
			     "every kernel joined: no warning");
out:
	collector__free(col);
	capture__free(cap);
	close(fd);
	unlink(path);
	return test_exit();
}
