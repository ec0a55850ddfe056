// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The XSpace writer streams: 2 million spans over 500 lines are written
 * with peak extra memory bounded by the largest line, not by the capture
 * (the packed output alone is ~50 MB, the built messages several hundred).
 *
 * Peak heap is measured by counting every allocation (malloc and friends
 * are wrapped below, over glibc's __libc_* entry points): RSS is no good
 * here, since some VMs do not account anonymous pages in VmRSS/VmHWM. A
 * control allocation proves the counter sees memory. Also prints the write
 * throughput (DESIGN.md asks >= 1M events/s).
 */
#include <malloc.h>
#include <time.h>

#include "test.h"
#include "capture/capture.h"
#include "output/xspace_writer.h"

#define TRACKS 500
#define PER_TRACK 4000		/* the largest line */
#define WS 1000000000ULL

/* ---- heap accounting: in use now, and the peak since the last reset */

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);
extern void __libc_free(void *);

/* volatile: the compiler assumes malloc leaves globals alone. */
static volatile long long heap_now, heap_peak;

static void heap_add(void *p)
{
	if (!p)
		return;
	heap_now += malloc_usable_size(p);
	if (heap_now > heap_peak)
		heap_peak = heap_now;
}

static void heap_sub(void *p)
{
	if (p)
		heap_now -= malloc_usable_size(p);
}

void *malloc(size_t n)
{
	void *p = __libc_malloc(n);

	heap_add(p);
	return p;
}

void *calloc(size_t a, size_t b)
{
	void *p = __libc_calloc(a, b);

	heap_add(p);
	return p;
}

void *realloc(void *old, size_t n)
{
	size_t before = old ? malloc_usable_size(old) : 0;
	void *p = __libc_realloc(old, n);

	if (p || !n) {
		heap_now -= before;
		heap_add(p);
	}
	return p;
}

void *memalign(size_t align, size_t n)
{
	void *p = __libc_memalign(align, n);

	heap_add(p);
	return p;
}

void *aligned_alloc(size_t align, size_t n)
{
	return memalign(align, n);
}

int posix_memalign(void **out, size_t align, size_t n)
{
	void *p = __libc_memalign(align, n);

	if (!p)
		return ENOMEM;
	heap_add(p);
	*out = p;
	return 0;
}

void free(void *p)
{
	heap_sub(p);
	__libc_free(p);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static uint64_t read_varint(FILE *f, bool *ok)
{
	uint64_t v = 0;
	int c;

	for (int shift = 0; shift < 64; shift += 7) {
		c = fgetc(f);
		if (c == EOF) {
			*ok = false;
			return 0;
		}
		v |= (uint64_t)(c & 0x7f) << shift;
		if (!(c & 0x80))
			return v;
	}
	*ok = false;
	return 0;
}

/* Walks the XSpace's top-level fields: every length lands inside the file. */
static int count_planes(const char *path, uint64_t size)
{
	FILE *f = fopen(path, "rb");
	int planes = 0;
	bool ok = true;

	if (!f)
		return -1;
	while (ok && (uint64_t)ftello(f) < size) {
		uint64_t tag = read_varint(f, &ok), len;

		if (!ok || (tag & 7) != 2) {
			ok = false;
			break;
		}
		len = read_varint(f, &ok);
		if (!ok || (uint64_t)ftello(f) + len > size || fseeko(f, len, SEEK_CUR)) {
			ok = false;
			break;
		}
		planes += (tag >> 3) == 1;
	}
	fclose(f);
	return ok ? planes : -1;
}

int main(void)
{
	struct capture_opts opts = {
		.sz = sizeof(opts), .hostname = "stream", .session = "s",
		.max_spans = 3000000,
	};
	char dir[] = "/tmp/test_xspace_stream.XXXXXX", path[256];
	struct capture *c = capture__new(&opts);
	uint32_t names[16], key_bytes, key_path, paths[8];
	long long heap_before, extra, bound;
	uint64_t bytes = 0, total = 0;
	double t0, t1;
	FILE *f;
	int err = 0;

	if (!ASSERT_OK_PTR(c, "new") || !ASSERT_OK_PTR(mkdtemp(dir), "mkdtemp"))
		return test_exit();
	for (int i = 0; i < 16; i++) {
		snprintf(path, sizeof(path), "op_%d", i);
		names[i] = capture__intern(c, path);
	}
	for (int i = 0; i < 8; i++) {
		snprintf(path, sizeof(path), "/data/shard-%04d", i);
		paths[i] = capture__intern(c, path);
	}
	key_bytes = capture__intern(c, "bytes");
	key_path = capture__intern(c, "path");

	/*
	 * Per track: an outer span every 10 events holding 8 children, plus a
	 * span that overlaps the next outer one partially (an extra line).
	 */
	for (int t = 0; t < TRACKS && !err; t++) {
		int track = capture__host_track(c, 1000, 1000 + t);
		uint64_t ts = WS;

		for (int i = 0; i < PER_TRACK && !err; i++) {
			struct capture_span s = {
				.track = track,
				.kind = SPAN_HOST_OTHER,
				.name = names[i % 16],
			};
			int pos = i % 10;

			if (pos == 0) {
				s.start_ns = ts;
				s.end_ns = ts + 1000;
			} else if (pos < 9) {
				s.start_ns = ts + pos * 100;
				s.end_ns = s.start_ns + 50;
			} else {
				s.start_ns = ts + 950;
				s.end_ns = ts + 1100;	/* into the next outer span */
				ts += 1000;
			}
			capture_span__add_u64(&s, key_bytes, i);
			capture_span__add_str(&s, key_path, paths[i % 8]);
			err = capture__add_span(c, &s);
			total++;
		}
	}
	ASSERT_OK(err, "add spans");
	ASSERT_OK(capture__set_window(c, WS, WS + 1000ULL * PER_TRACK), "window");
	ASSERT_OK(capture__finalize(c), "finalize");
	ASSERT_EQ(total, (uint64_t)TRACKS * PER_TRACK, "spans");

	snprintf(path, sizeof(path), "%s/big.xplane.pb", dir);
	f = fopen(path, "w");
	if (!ASSERT_OK_PTR(f, "open output"))
		goto out;
	heap_before = heap_now;
	heap_peak = heap_now;
	t0 = now_s();
	err = xspace_write_stream(c, f, NULL, &bytes);
	t1 = now_s();
	extra = heap_peak - heap_before;
	ASSERT_OK(err, "write 2M spans");
	ASSERT_OK(fclose(f), "close");

	printf("wrote %" PRIu64 " spans (%" PRIu64 " bytes) in %.3f s: %.2f M spans/s\n",
	       total, bytes, t1 - t0, total / (t1 - t0) / 1e6);
	ASSERT_GE(total / (t1 - t0), 300000, "throughput (spans/s)");

	/* Generous: 4 MiB fixed plus 1 KiB per span of the largest line. */
	bound = 4LL * 1024 * 1024 + PER_TRACK * 1024LL;
	printf("peak extra heap while writing: %lld KiB (bound %lld KiB; output %" PRIu64
	       " KiB; capture %lld KiB; largest line %d spans)\n", extra / 1024,
	       bound / 1024, bytes / 1024, heap_before / 1024, PER_TRACK);
	ASSERT_LE(extra, bound, "peak extra heap bounded by the largest line");
	ASSERT_LE(extra, (long long)bytes / 8, "far below the output size");

	/* Control: the counter sees memory, so holding the output would show. */
	heap_peak = heap_now;
	heap_before = heap_now;
	{
		char *volatile hold = malloc(bytes);

		if (hold)
			hold[0] = 1;
		ASSERT_GE(heap_peak - heap_before, (long long)bytes, "control allocation counted");
		free(hold);
	}
	ASSERT_EQ(count_planes(path, bytes), 2, "framing walks: host plane + task environment");
out:
	capture__free(c);
	unlink(path);
	rmdir(dir);
	return test_exit();
}
