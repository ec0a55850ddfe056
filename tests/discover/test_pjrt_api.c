// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * PJRT_Api tables: the slot tables per version, then fake tables built in
 * this process's own memory (both layouts, minor 26 and 94) whose function
 * pointers point into this binary's text, read, validated and scanned as
 * acceltrace does for a plugin; then broken one way at a time, each refusal
 * naming its check. A table in the anonymous memory right after a file
 * mapping (a plugin's .bss) is found by the scan, both with an mmap'd file
 * and, when a C compiler is there, with a stripped plugin-like .so built at
 * test time whose GetPjrtApi fills a static table on its first call.
 * Runs unprivileged.
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include "test.h"
#include "discover/elf_image.h"
#include "discover/pjrt_api.h"
#include "discover/proc_maps.h"

#define NSLOTS_94 129
#define NSLOTS_26 88

struct fake_api {
	uint64_t struct_size;
	uint64_t extension_start;
	uint64_t version_struct_size;
	uint64_t version_extension_start;
	int32_t major;
	int32_t minor;
	uint64_t slots[160];
};

/* Function bodies the fake tables point at. */
__asm__(
	".text\n"
	".globl pj_text\n.type pj_text,@function\n"
	"pj_text:\n .fill 256,1,0x90\n ret\n"
	".size pj_text,.-pj_text\n"
	".globl pj_execute\n.type pj_execute,@function\n"
	"pj_execute:\n endbr64\n push %rbp\n pop %rbp\n ret\n"
	".size pj_execute,.-pj_execute\n"
	".globl pj_h2d\n.type pj_h2d,@function\n"
	"pj_h2d:\n endbr64\n sub $8,%rsp\n add $8,%rsp\n ret\n"
	".size pj_h2d,.-pj_h2d\n");
extern const unsigned char pj_text[];
void pj_execute(void);
void pj_h2d(void);

/* A table in .bss far past the file-backed page: anonymous memory. */
static struct {
	char pad[64 << 10];
	struct fake_api t;
} bss_area;
/* A table in .data (file-backed, rw-p). Not a valid header until filled. */
static struct fake_api data_table = { .struct_size = 1 };

static char exe[4096];
static char reason[1024];

static void fill(struct fake_api *t, int minor)
{
	size_t n = minor == 26 ? NSLOTS_26 : NSLOTS_94;

	memset(t, 0, sizeof(*t));
	t->struct_size = 40 + 8 * n;
	t->version_struct_size = 24;
	t->major = 0;
	t->minor = minor;
	for (size_t i = 0; i < n; i++)
		t->slots[i] = (uintptr_t)pj_text + i;
	t->slots[55] = (uintptr_t)pj_execute;		/* LoadedExecutable_Execute */
	t->slots[22] = (uintptr_t)pj_h2d;		/* Client_BufferFromHostBuffer */
}

static void clear_static_tables(void)
{
	memset(&bss_area.t, 0, sizeof(bss_area.t));
	memset(&data_table, 0, sizeof(data_table));
}

static void test_slot_tables(void)
{
	static const struct {
		enum pjrt_fn fn;
		int minor;
		int slot;
	} cases[] = {
		{ PJRT_FN_ERROR_DESTROY, 26, 0 },
		{ PJRT_FN_EVENT_ON_READY, 94, 9 },
		{ PJRT_FN_CLIENT_BUFFER_FROM_HOST_BUFFER, 26, 22 },
		{ PJRT_FN_LOADED_EXECUTABLE_EXECUTE, 26, 55 },
		{ PJRT_FN_LOADED_EXECUTABLE_EXECUTE, 94, 55 },
		{ PJRT_FN_BUFFER_DESTROY, 26, 57 },
		{ PJRT_FN_BUFFER_DESTROY, 33, 58 },
		{ PJRT_FN_BUFFER_DESTROY, 55, 58 },
		{ PJRT_FN_BUFFER_DESTROY, 60, 58 },
		{ PJRT_FN_BUFFER_DESTROY, 94, 58 },
		{ PJRT_FN_BUFFER_TO_HOST_BUFFER, 26, 69 },
		{ PJRT_FN_BUFFER_TO_HOST_BUFFER, 94, 70 },
		{ PJRT_FN_BUFFER_COPY_TO_DEVICE, 26, 68 },
		{ PJRT_FN_BUFFER_COPY_TO_DEVICE, 94, 69 },
		{ PJRT_FN_BUFFER_READY_EVENT, 26, 71 },
		{ PJRT_FN_BUFFER_READY_EVENT, 94, 72 },
		{ PJRT_FN_BUFFER_ON_DEVICE_SIZE_IN_BYTES, 26, 63 },
		{ PJRT_FN_BUFFER_ON_DEVICE_SIZE_IN_BYTES, 94, 64 },
		{ PJRT_FN_COMPILE, 26, 87 },
		{ PJRT_FN_COMPILE, 29, 89 },
		{ PJRT_FN_COMPILE, 94, 89 },
		{ PJRT_FN_COMPILE, 200, 89 },		/* append-only */
		{ PJRT_FN_BUFFER_COPY_TO_MEMORY, 33, 92 },
		{ PJRT_FN_BUFFER_COPY_TO_MEMORY, 32, -ENOENT },
		{ PJRT_FN_BUFFER_COPY_TO_MEMORY, 26, -ENOENT },
		{ PJRT_FN_BUFFER_COPY_RAW_TO_HOST, 94, 100 },
		{ PJRT_FN_BUFFER_COPY_RAW_TO_HOST, 60, -ENOENT },
		{ PJRT_FN_ASYNC_H2D_TRANSFER_DATA, 94, 102 },
		{ PJRT_FN_LOADED_EXECUTABLE_EXECUTE, 27, -ENOTSUP },
		{ PJRT_FN_LOADED_EXECUTABLE_EXECUTE, 28, -ENOTSUP },
		{ PJRT_FN_LOADED_EXECUTABLE_EXECUTE, 25, -ENOTSUP },
		{ PJRT_FN_LOADED_EXECUTABLE_EXECUTE, -1, -ENOTSUP },
		{ PJRT_FN_LOADED_EXECUTABLE_EXECUTE, 5000, -ENOTSUP },
	};
	const char *why;
	char name[96];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		snprintf(name, sizeof(name), "%s at minor %d", pjrt_fn_name(cases[i].fn),
			 cases[i].minor);
		ASSERT_EQ(pjrt_fn_slot(cases[i].fn, cases[i].minor), cases[i].slot, name);
	}
	ASSERT_EQ(pjrt_fn_slot(PJRT_FN__COUNT, 94), -EINVAL, "bad fn");

	/* Every function has a distinct name and, from minor 29 on, a distinct slot. */
	for (int a = 0; a < PJRT_FN__COUNT; a++) {
		ASSERT_TRUE(pjrt_fn_name(a) && pjrt_fn_name(a)[0], "a name");
		for (int b = 0; b < a; b++) {
			ASSERT_TRUE(strcmp(pjrt_fn_name(a), pjrt_fn_name(b)), "names distinct");
			ASSERT_NEQ(pjrt_fn_slot(a, 94), pjrt_fn_slot(b, 94), "slots distinct at 94");
			if (pjrt_fn_slot(a, 26) >= 0)
				ASSERT_NEQ(pjrt_fn_slot(a, 26), pjrt_fn_slot(b, 26), "slots distinct at 26");
		}
	}
	ASSERT_TRUE(pjrt_fn_required(PJRT_FN_LOADED_EXECUTABLE_EXECUTE), "Execute required");
	ASSERT_FALSE(pjrt_fn_required(PJRT_FN_BUFFER_COPY_RAW_TO_HOST), "CopyRawToHost optional");

	ASSERT_EQ(pjrt_layout_of_minor(26, &why), PJRT_LAYOUT_MINOR26, "26");
	ASSERT_STRCONTAINS(why, "verified", "26 verified");
	ASSERT_EQ(pjrt_layout_of_minor(27, &why), PJRT_LAYOUT_UNKNOWN, "27");
	ASSERT_STRCONTAINS(why, "does not guess", "27 refused");
	ASSERT_EQ(pjrt_layout_of_minor(31, &why), PJRT_LAYOUT_CURRENT, "31");
	ASSERT_STRCONTAINS(why, "inferred", "31 inferred");
	ASSERT_EQ(pjrt_layout_of_minor(60, &why), PJRT_LAYOUT_CURRENT, "60");
	ASSERT_STRCONTAINS(why, "verified", "60 in the verified range");
	ASSERT_EQ(pjrt_layout_of_minor(105, &why), PJRT_LAYOUT_CURRENT, "105");
	ASSERT_STRCONTAINS(why, "append-only", "105 by the append-only rule");
}

/* Reads t (anywhere in this process) and checks what the table says. */
static void check_accepted(struct fake_api *t, const char *library, int minor,
			   const char *what)
{
	struct pjrt_api *api;
	bool m26 = minor == 26;

	api = pjrt_api__read(0, (uintptr_t)t, library, reason, sizeof(reason));
	if (!ASSERT_OK_PTR(api, what)) {
		printf("  reason: %s\n", reason);
		return;
	}
	ASSERT_STRCONTAINS(reason, "PJRT_Api at 0x", "acceptance reason");
	ASSERT_STREQ(pjrt_api__library(api), exe, "the table's library");
	ASSERT_EQ(pjrt_api__addr(api), (uintptr_t)t, "address");
	ASSERT_EQ(pjrt_api__major(api), 0, "major");
	ASSERT_EQ(pjrt_api__minor(api), minor, "minor");
	ASSERT_EQ(pjrt_api__slot_count(api), m26 ? NSLOTS_26 : NSLOTS_94, "slots");
	ASSERT_EQ(pjrt_api__struct_size(api), t->struct_size, "struct_size");
	ASSERT_EQ(pjrt_api__layout(api), m26 ? PJRT_LAYOUT_MINOR26 : PJRT_LAYOUT_CURRENT, "layout");
	ASSERT_EQ(pjrt_api__fn_addr(api, PJRT_FN_LOADED_EXECUTABLE_EXECUTE),
		  (uintptr_t)pj_execute, "Execute");
	ASSERT_EQ(pjrt_api__fn_addr(api, PJRT_FN_CLIENT_BUFFER_FROM_HOST_BUFFER),
		  (uintptr_t)pj_h2d, "BufferFromHostBuffer");
	ASSERT_EQ(pjrt_api__fn_addr(api, PJRT_FN_BUFFER_DESTROY),
		  (uintptr_t)pj_text + (m26 ? 57 : 58), "Buffer_Destroy");
	ASSERT_EQ(pjrt_api__fn_addr(api, PJRT_FN_BUFFER_TO_HOST_BUFFER),
		  (uintptr_t)pj_text + (m26 ? 69 : 70), "Buffer_ToHostBuffer");
	ASSERT_EQ(pjrt_api__fn_addr(api, PJRT_FN_BUFFER_READY_EVENT),
		  (uintptr_t)pj_text + (m26 ? 71 : 72), "Buffer_ReadyEvent");
	ASSERT_EQ(pjrt_api__fn_addr(api, PJRT_FN_COMPILE),
		  (uintptr_t)pj_text + (m26 ? 87 : 89), "Compile");
	ASSERT_EQ(pjrt_api__slot(api, PJRT_FN_COMPILE), m26 ? 87 : 89, "Compile slot");
	/* Tail slots only where they were verified: 92 from 33, 100 from 94. */
	ASSERT_EQ(pjrt_api__fn_addr(api, PJRT_FN_BUFFER_COPY_RAW_TO_HOST),
		  minor >= 94 ? (uintptr_t)pj_text + 100 : 0, "CopyRawToHost");
	ASSERT_EQ(pjrt_api__slot(api, PJRT_FN_BUFFER_COPY_TO_MEMORY), minor >= 33 ? 92 : -ENOENT,
		  "CopyToMemory");
	pjrt_api__free(api);
}

static void test_accept(void)
{
	struct proc_maps *maps = proc_maps__read(0);
	const struct proc_map *m;
	struct fake_api *heap;

	/* The .bss table really is in anonymous memory after the binary. */
	m = maps ? proc_maps__find(maps, (uintptr_t)&bss_area.t) : NULL;
	if (ASSERT_OK_PTR(m, "bss mapping")) {
		const struct proc_map *prev = proc_maps__get(maps, proc_maps__index(maps, m) - 1);

		ASSERT_TRUE(m->inode == 0 && m->path[0] == '\0', "bss table is in anonymous memory");
		ASSERT_STREQ(prev->path, exe, "right after the binary's mapping");
		ASSERT_EQ(prev->end, m->start, "adjacent");
	}
	m = maps ? proc_maps__find(maps, (uintptr_t)&data_table) : NULL;
	if (ASSERT_OK_PTR(m, "data mapping"))
		ASSERT_STREQ(m->path, exe, "data table is in the binary's file mapping");
	proc_maps__free(maps);

	fill(&bss_area.t, 94);
	check_accepted(&bss_area.t, NULL, 94, "minor 94 in .bss");
	ASSERT_STRCONTAINS(reason, "verified", "94 is verified");
	fill(&bss_area.t, 26);
	check_accepted(&bss_area.t, NULL, 26, "minor 26 in .bss");
	fill(&data_table, 94);
	check_accepted(&data_table, NULL, 94, "minor 94 in .data");
	fill(&data_table, 26);
	check_accepted(&data_table, exe, 26, "minor 26 in .data, library named");
	clear_static_tables();

	/* A table on the heap belongs to no library until one is named. */
	heap = calloc(1, sizeof(*heap));
	if (!ASSERT_OK_PTR(heap, "calloc"))
		return;
	fill(heap, 94);
	errno = 0;
	ASSERT_TRUE(!pjrt_api__read(0, (uintptr_t)heap, NULL, reason, sizeof(reason)) &&
		    errno == EINVAL, "heap table without a library");
	ASSERT_STRCONTAINS(reason, "name the library", "says why");
	check_accepted(heap, exe, 94, "heap table, library named");
	ASSERT_STRCONTAINS(reason, "test_pjrt_api", "reason names the library");

	/* The uretprobe path. */
	{
		struct pjrt_api *api;

		api = pjrt_api__from_getpjrtapi(0, exe, (uintptr_t)heap, reason, sizeof(reason));
		ASSERT_OK_PTR(api, "GetPjrtApi return value");
		pjrt_api__free(api);
		errno = 0;
		ASSERT_TRUE(!pjrt_api__from_getpjrtapi(0, exe, 0, reason, sizeof(reason)) &&
			    errno == EINVAL, "GetPjrtApi returned NULL");
		ASSERT_STRCONTAINS(reason, "returned NULL", "says so");
	}

	/* Minors 29-32 (inferred) and above 94 (append-only) are accepted. */
	fill(heap, 30);
	check_accepted(heap, exe, 30, "minor 30");
	ASSERT_STRCONTAINS(reason, "inferred", "30 says inferred");
	fill(heap, 120);
	check_accepted(heap, exe, 120, "minor 120");
	ASSERT_STRCONTAINS(reason, "append-only", "120 says append-only");

	/* Optional functions: NULL is absence, a short table has no tail. */
	{
		struct pjrt_api *api;

		fill(heap, 94);
		heap->slots[100] = 0;
		api = pjrt_api__read(0, (uintptr_t)heap, exe, reason, sizeof(reason));
		if (ASSERT_OK_PTR(api, "optional NULL accepted")) {
			ASSERT_EQ(pjrt_api__slot(api, PJRT_FN_BUFFER_COPY_RAW_TO_HOST), -ENOENT,
				  "NULL optional is absent");
			ASSERT_EQ(pjrt_api__fn_addr(api, PJRT_FN_BUFFER_COPY_RAW_TO_HOST), 0,
				  "no address");
		}
		pjrt_api__free(api);

		fill(heap, 94);
		heap->struct_size = 40 + 8 * 90;
		api = pjrt_api__read(0, (uintptr_t)heap, exe, reason, sizeof(reason));
		if (ASSERT_OK_PTR(api, "90 slots at minor 94")) {
			ASSERT_EQ(pjrt_api__slot(api, PJRT_FN_BUFFER_COPY_TO_MEMORY), -ENOENT,
				  "beyond struct_size is absent");
			ASSERT_EQ(pjrt_api__slot(api, PJRT_FN_COMPILE), 89, "Compile there");
		}
		pjrt_api__free(api);
	}
	free(heap);
}

/* Breaks a good table one way at a time; each refusal names its check. */
static void test_refuse(void)
{
	struct fake_api *t = calloc(1, sizeof(*t));
	uintptr_t libc_fn = (uintptr_t)dlsym(RTLD_DEFAULT, "getpid");
	char want[256];

	if (!ASSERT_OK_PTR(t, "calloc"))
		return;

#define REFUSED(err_, name_) ({ \
	errno = 0; \
	struct pjrt_api *___a = pjrt_api__read(0, (uintptr_t)t, exe, reason, sizeof(reason)); \
	bool ___ok = ASSERT_TRUE(!___a, name_) && ASSERT_EQ(errno, err_, name_); \
	if (!___ok) printf("  reason: %s\n", reason); \
	pjrt_api__free(___a); ___ok; })

	fill(t, 94);
	t->major = 1;
	if (REFUSED(ENOTSUP, "major 1"))
		ASSERT_STREQ(reason, "major version 1 is not supported (acceltrace knows major 0)",
			     "major reason");

	fill(t, 94);
	t->version_struct_size = 32;
	if (REFUSED(EINVAL, "version struct_size 32"))
		ASSERT_STREQ(reason, "pjrt_api_version.struct_size (at +16) is 32, expected 24 "
			     "(sizeof PJRT_Api_Version)", "version size reason");

	fill(t, 94);
	t->struct_size = 40 + 8 * 80;
	if (REFUSED(EINVAL, "struct_size too small at 94"))
		ASSERT_STREQ(reason, "struct_size 680 holds 80 slots; minor 94 needs at least 90 "
			     "(slot 89, Compile)", "struct_size reason");
	fill(t, 26);
	t->struct_size = 40 + 8 * 80;
	if (REFUSED(EINVAL, "struct_size too small at 26"))
		ASSERT_STRCONTAINS(reason, "needs at least 88 (slot 87, Compile)", "26 needs 88");
	/* A minor-26 table that claims minor 94 is too short for it. */
	fill(t, 26);
	t->minor = 94;
	if (REFUSED(EINVAL, "minor-26 table labelled 94"))
		ASSERT_STRCONTAINS(reason, "holds 88 slots; minor 94 needs at least 90", "too short");
	fill(t, 94);
	t->struct_size = 1073;
	if (REFUSED(EINVAL, "struct_size not 40 + 8n"))
		ASSERT_STREQ(reason, "struct_size 1073 is not 40 + 8 * n", "not 40 + 8n");
	fill(t, 94);
	t->struct_size = 40 + 8 * 5000;
	if (REFUSED(EINVAL, "struct_size huge"))
		ASSERT_STRCONTAINS(reason, "is not plausible", "huge");

	fill(t, 94);
	t->slots[55] = (uintptr_t)&bss_area;
	if (REFUSED(EINVAL, "slot into data")) {
		snprintf(want, sizeof(want), "slot 55 (LoadedExecutable_Execute) = 0x%" PRIxPTR
			 " is outside test_pjrt_api's executable segment", (uintptr_t)&bss_area);
		ASSERT_STRCONTAINS(reason, want, "data pointer reason");
	}
	fill(t, 94);
	t->slots[9] = libc_fn;
	if (REFUSED(EINVAL, "slot into another library's text")) {
		ASSERT_STRCONTAINS(reason, "slot 9 (Event_OnReady)", "names the slot");
		ASSERT_STRCONTAINS(reason, "r-xp", "says where it points");
		ASSERT_STRCONTAINS(reason, "libc", "another library");
	}
	fill(t, 94);
	t->slots[22] = 0;
	if (REFUSED(EINVAL, "NULL used slot"))
		ASSERT_STREQ(reason, "slot 22 (Client_BufferFromHostBuffer) is NULL", "NULL reason");
	fill(t, 26);
	t->slots[69] = 0;
	if (REFUSED(EINVAL, "NULL used slot at 26"))
		ASSERT_STREQ(reason, "slot 69 (Buffer_ToHostBuffer) is NULL", "26 slot numbering");
	fill(t, 94);
	t->slots[100] = (uintptr_t)&data_table;
	if (REFUSED(EINVAL, "optional slot into data"))
		ASSERT_STRCONTAINS(reason, "slot 100 (Buffer_CopyRawToHost)", "optional checked too");

	fill(t, 94);
	t->minor = 27;
	if (REFUSED(ENOTSUP, "minor 27"))
		ASSERT_STRCONTAINS(reason, "minor version 27 is not supported", "27 reason");
	fill(t, 94);
	t->minor = 25;
	if (REFUSED(ENOTSUP, "minor 25"))
		ASSERT_STRCONTAINS(reason, "older than minor 26", "25 reason");
	fill(t, 94);
	t->minor = 5000;
	if (REFUSED(EINVAL, "minor 5000"))
		ASSERT_STRCONTAINS(reason, "not a plausible minor", "5000 reason");
#undef REFUSED

	errno = 0;
	ASSERT_TRUE(!pjrt_api__read(0, 16, exe, reason, sizeof(reason)) && errno == EFAULT,
		    "unreadable address");
	ASSERT_STRCONTAINS(reason, "cannot read the PJRT_Api header", "unreadable reason");
	errno = 0;
	fill(t, 94);
	ASSERT_TRUE(!pjrt_api__read(0, (uintptr_t)t, "/nonexistent/libtpu.so", reason,
				    sizeof(reason)) && errno == ENOENT, "library not mapped");
	ASSERT_STRCONTAINS(reason, "is not mapped by process", "not mapped reason");
	free(t);
}

static void test_probe_targets(void)
{
	struct pjrt_probe_target tg;
	struct elf_image *img;
	struct elf_symbol sym;
	struct pjrt_api *api;
	uint64_t off;

	fill(&bss_area.t, 94);
	bss_area.t.slots[100] = 0;
	api = pjrt_api__read(0, (uintptr_t)&bss_area.t, NULL, reason, sizeof(reason));
	img = elf_image__open(exe);
	if (!ASSERT_OK_PTR(api, "table") || !ASSERT_OK_PTR(img, "own image"))
		goto out;

	if (ASSERT_OK(pjrt_api__probe_target(api, PJRT_FN_LOADED_EXECUTABLE_EXECUTE, &tg), "Execute") &&
	    ASSERT_OK(elf_image__find_symbol(img, "pj_execute", &sym), "pj_execute symbol") &&
	    ASSERT_OK(elf_image__vaddr_to_offset(img, sym.value, &off), "its offset")) {
		ASSERT_EQ(tg.slot, 55, "slot");
		ASSERT_EQ(tg.addr, (uintptr_t)pj_execute, "address");
		ASSERT_STREQ(tg.path, exe, "file to attach to");
		ASSERT_EQ(tg.file_offset, off, "file offset = symbol's");
		ASSERT_EQ(tg.attach_offset, off + 4, "attach after endbr64");
		ASSERT_STREQ(tg.placement.insn, "push %rbp", "on the push");
		ASSERT_FALSE(tg.placement.single_steps, "emulated");
	}
	if (ASSERT_OK(pjrt_api__probe_target(api, PJRT_FN_CLIENT_BUFFER_FROM_HOST_BUFFER, &tg), "H2D")) {
		ASSERT_EQ(tg.attach_offset, tg.file_offset, "at entry");
		ASSERT_TRUE(tg.placement.single_steps, "single-steps");
	}
	if (ASSERT_OK(pjrt_api__probe_target(api, PJRT_FN_BUFFER_TO_HOST_BUFFER, &tg), "D2H") &&
	    ASSERT_OK(elf_image__find_symbol(img, "pj_text", &sym), "pj_text symbol") &&
	    ASSERT_OK(elf_image__vaddr_to_offset(img, sym.value + 70, &off), "offset")) {
		ASSERT_EQ(tg.file_offset, off, "slot 70 offset");
		ASSERT_STREQ(tg.placement.insn, "nop", "nop");
		ASSERT_FALSE(tg.placement.single_steps, "nop emulated");
	}
	ASSERT_EQ(pjrt_api__probe_target(api, PJRT_FN_BUFFER_COPY_RAW_TO_HOST, &tg), -ENOENT,
		  "absent optional");
out:
	elf_image__free(img);
	pjrt_api__free(api);
	clear_static_tables();
}

static struct pjrt_api *scan_self(void)
{
	return pjrt_api__scan(0, exe, reason, sizeof(reason));
}

static void test_scan_self(void)
{
	struct pjrt_api *api;

	clear_static_tables();
	errno = 0;
	api = scan_self();
	ASSERT_TRUE(!api && errno == ENOENT, "nothing to find");
	ASSERT_STRCONTAINS(reason, "no candidate header", "says there was no candidate");
	pjrt_api__free(api);

	fill(&bss_area.t, 94);
	api = scan_self();
	if (ASSERT_OK_PTR(api, "table in .bss (anonymous) found")) {
		ASSERT_EQ(pjrt_api__addr(api), (uintptr_t)&bss_area.t, "its address");
		ASSERT_STRCONTAINS(pjrt_api__note(api), "found by scan", "note");
		ASSERT_EQ(pjrt_api__fn_addr(api, PJRT_FN_LOADED_EXECUTABLE_EXECUTE),
			  (uintptr_t)pj_execute, "Execute");
	} else {
		printf("  reason: %s\n", reason);
	}
	pjrt_api__free(api);

	/* An identical copy in .data is the same table. */
	memcpy(&data_table, &bss_area.t, sizeof(data_table));
	api = scan_self();
	if (ASSERT_OK_PTR(api, "identical copies")) {
		ASSERT_TRUE(pjrt_api__addr(api) == (uintptr_t)&bss_area.t ||
			    pjrt_api__addr(api) == (uintptr_t)&data_table, "one of them");
		ASSERT_STRCONTAINS(reason, "identical copies", "says so");
	}
	pjrt_api__free(api);

	/* A different one: refuse to choose. */
	fill(&data_table, 26);
	errno = 0;
	api = scan_self();
	ASSERT_TRUE(!api && errno == ENOTUNIQ, "two different tables");
	ASSERT_STRCONTAINS(reason, "two different valid PJRT_Api tables", "says so");
	pjrt_api__free(api);

	/* A candidate that fails: the reason is its failure. */
	clear_static_tables();
	fill(&bss_area.t, 94);
	bss_area.t.slots[55] = 0;
	errno = 0;
	api = scan_self();
	ASSERT_TRUE(!api && errno == EINVAL, "invalid candidate only: refused");
	ASSERT_STRCONTAINS(reason, "1 candidate header", "counts candidates");
	ASSERT_STRCONTAINS(reason, "slot 55 (LoadedExecutable_Execute) is NULL", "best failure");
	pjrt_api__free(api);

	/*
	 * Anonymous memory placed right after the .bss (the kernel merges it
	 * into the .bss mapping) lies past the binary's image: not scanned.
	 */
	clear_static_tables();
	{
		struct proc_maps *maps = proc_maps__read(0);
		const struct proc_map *m = maps ? proc_maps__find(maps, (uintptr_t)&bss_area.t) : NULL;
		long pg = sysconf(_SC_PAGESIZE);
		void *after = MAP_FAILED;

		if (m)
			after = mmap((void *)(uintptr_t)m->end, pg, PROT_READ | PROT_WRITE,
				     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
		if (after != MAP_FAILED && after != (void *)(uintptr_t)m->end) {
			munmap(after, pg);
			after = MAP_FAILED;
		}
		proc_maps__free(maps);	/* m is gone with it */
		if (after != MAP_FAILED) {
			fill((struct fake_api *)after, 94);
			errno = 0;
			api = scan_self();
			ASSERT_TRUE(!api && errno == ENOENT, "past the image end: not scanned");
			pjrt_api__free(api);
			munmap(after, pg);
		} else {
			test_skip_part("cannot map right after .bss; image-end check skipped");
			if (after != MAP_FAILED)
				munmap(after, pg);
		}
	}

	/* A major-1 table is a candidate and refused by name. */
	fill(&bss_area.t, 94);
	bss_area.t.major = 1;
	api = scan_self();
	ASSERT_TRUE(!api, "major 1 not accepted by scan");
	ASSERT_STRCONTAINS(reason, "major version 1 is not supported", "major named");
	pjrt_api__free(api);
	clear_static_tables();

	errno = 0;
	ASSERT_TRUE(!pjrt_api__scan(0, "/nonexistent/libtpu.so", reason, sizeof(reason)) &&
		    errno == ENOENT, "scan of an unmapped library");
}

/* Next to the test binary (exec allowed), else $TMPDIR or /tmp. */
static bool make_dir(char *dir, size_t size, const char *name)
{
	const char *tmp = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	char base[4096];

	snprintf(base, sizeof(base), "%s", exe);
	*strrchr(base, '/') = '\0';
	if (snprintf(dir, size, "%s/%s.XXXXXX", base, name) < (int)size && mkdtemp(dir))
		return true;
	if (snprintf(dir, size, "%s/%s.XXXXXX", tmp, name) >= (int)size)
		return false;
	return mkdtemp(dir) != NULL;
}

/*
 * A file mapped r-x with anonymous rw memory right after it, as a plugin's
 * text and .bss: the table there, pointing into the file's text, is found.
 */
static void test_scan_mmap(void)
{
	long pg = sysconf(_SC_PAGESIZE);
	char dir[4096], path[4200];
	struct fake_api *t;
	struct pjrt_api *api;
	unsigned char *base, *text;
	int fd;

	if (!make_dir(dir, sizeof(dir), "pjrt-mmap"))
		return;
	snprintf(path, sizeof(path), "%s/libfake text.so", dir);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);
	if (!ASSERT_GE(fd, 0, "create file") || !ASSERT_OK(ftruncate(fd, 2 * pg), "size"))
		goto out;
	base = mmap(NULL, 4 * pg, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (!ASSERT_TRUE(base != MAP_FAILED, "reserve"))
		goto out;
	text = mmap(base, 2 * pg, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_FIXED, fd, 0);
	if (text == MAP_FAILED) {
		test_skip_part("cannot map %s executable (%s); mmap scan check skipped", path,
		       strerror(errno));
		munmap(base, 4 * pg);
		goto out;
	}
	ASSERT_OK(mprotect(base + 2 * pg, 2 * pg, PROT_READ | PROT_WRITE), "anonymous rw after it");
	t = (struct fake_api *)(base + 2 * pg + 64);
	fill(t, 94);
	for (int i = 0; i < NSLOTS_94; i++)
		t->slots[i] = (uintptr_t)text + 16 * i;

	api = pjrt_api__scan(0, path, reason, sizeof(reason));
	if (ASSERT_OK_PTR(api, "table after an mmap'd file found")) {
		ASSERT_EQ(pjrt_api__addr(api), (uintptr_t)t, "address");
		ASSERT_STREQ(pjrt_api__library(api), path, "library");
		ASSERT_EQ(pjrt_api__fn_addr(api, PJRT_FN_BUFFER_DESTROY),
			  (uintptr_t)text + 16 * 58, "Buffer_Destroy");
	} else {
		printf("  reason: %s\n", reason);
	}
	pjrt_api__free(api);
	/* The same table read directly: its library is the file before it. */
	api = pjrt_api__read(0, (uintptr_t)t, NULL, reason, sizeof(reason));
	if (ASSERT_OK_PTR(api, "read with the library derived"))
		ASSERT_STREQ(pjrt_api__library(api), path, "derived library");
	/* Not an ELF file: no placement, and it says so rather than guessing. */
	if (api) {
		struct pjrt_probe_target tg;

		ASSERT_EQ(pjrt_api__probe_target(api, PJRT_FN_LOADED_EXECUTABLE_EXECUTE, &tg),
			  -ENOEXEC, "not ELF");
	}
	pjrt_api__free(api);
	/* Pointers outside the file's text: refused. */
	t->slots[8] = (uintptr_t)pj_text;
	errno = 0;
	ASSERT_TRUE(!pjrt_api__scan(0, path, reason, sizeof(reason)) && errno == EINVAL,
		    "pointer into another file");
	ASSERT_STRCONTAINS(reason, "slot 8 (Event_Await)", "names the slot");
	ASSERT_STRCONTAINS(reason, "libfake text.so's executable segment", "names the library");
	munmap(base, 4 * pg);
out:
	if (fd >= 0)
		close(fd);
	unlink(path);
	rmdir(dir);
}

/* A plugin-like .so: stripped, exports GetPjrtApi only, builds its table in
 * .bss on the first call. */
static const char plugin_src[] =
	"#include <stddef.h>\n"
	"typedef struct { size_t struct_size; void *ext; size_t vss; void *vext;\n"
	"                 int major, minor; void *fns[NSLOTS]; } Api;\n"
	"void impl_generic(void), impl_execute(void), impl_await(void);\n"
	"__asm__(\".text\\n\"\n"
	"  \"impl_generic:\\n endbr64\\n push %rbp\\n pop %rbp\\n xor %eax,%eax\\n ret\\n\"\n"
	"  \"impl_execute:\\n endbr64\\n push %r15\\n pop %r15\\n xor %eax,%eax\\n ret\\n\"\n"
	"  \"impl_await:\\n endbr64\\n mov %rdi,%rax\\n xor %eax,%eax\\n ret\\n\");\n"
	"static struct { char pad[1 << 16]; Api api; } state;\n"
	"__attribute__((visibility(\"default\"))) const Api *GetPjrtApi(void)\n"
	"{\n"
	"  if (!state.api.struct_size) {\n"
	"    for (int i = 0; i < NSLOTS; i++) state.api.fns[i] = (void *)impl_generic;\n"
	"    state.api.fns[55] = (void *)impl_execute;\n"
	"    state.api.fns[8] = (void *)impl_await;\n"
	"    state.api.vss = 24; state.api.major = 0; state.api.minor = MINOR;\n"
	"    state.api.struct_size = 40 + 8 * NSLOTS;\n"
	"  }\n"
	"  return &state.api;\n"
	"}\n";

static void check_plugin(const char *dir, int minor, int nslots)
{
	const char *cc = getenv("CC") && getenv("CC")[0] ? getenv("CC") : "cc";
	char src[4200], so[4200], cmd[16384];
	const void *(*get)(void);
	struct pjrt_probe_target tg;
	struct pjrt_api *api = NULL;
	struct proc_maps *maps;
	const struct proc_map *m;
	unsigned char file_bytes[8], mem[8];
	void *handle = NULL;
	uintptr_t ret;
	FILE *f;
	int fd;

	snprintf(src, sizeof(src), "%s/plugin%d.c", dir, minor);
	snprintf(so, sizeof(so), "%s/libtpu-%d.so", dir, minor);
	f = fopen(src, "w");
	if (!f)
		return;
	fputs(plugin_src, f);
	fclose(f);
	snprintf(cmd, sizeof(cmd), "%s -O2 -fPIC -shared -s -fvisibility=hidden -DMINOR=%d "
		 "-DNSLOTS=%d -o '%s' '%s' 2>/dev/null", cc, minor, nslots, so, src);
	if (system(cmd) != 0) {
		test_skip_part("no working C compiler; plugin .so checks skipped");
		goto out;
	}
	handle = dlopen(so, RTLD_NOW | RTLD_LOCAL);
	if (!handle) {
		test_skip_part("cannot dlopen %s (%s); plugin .so checks skipped", so, dlerror());
		goto out;
	}
	get = (const void *(*)(void))dlsym(handle, "GetPjrtApi");
	if (!ASSERT_OK_PTR(get, "GetPjrtApi exported"))
		goto out;

	/* Before the first call the table is zeroes: nothing to find. */
	errno = 0;
	ASSERT_TRUE(!pjrt_api__scan(0, so, reason, sizeof(reason)) && errno == ENOENT,
		    "plugin: nothing before GetPjrtApi");
	ASSERT_STRCONTAINS(reason, "no candidate header", "zero table");

	ret = (uintptr_t)get();
	maps = proc_maps__read(0);
	m = maps ? proc_maps__find(maps, ret) : NULL;
	ASSERT_TRUE(m && !m->inode && !m->path[0], "plugin table in anonymous .bss");
	proc_maps__free(maps);

	api = pjrt_api__scan(0, so, reason, sizeof(reason));
	if (!ASSERT_OK_PTR(api, "plugin: scan finds the table")) {
		printf("  reason: %s\n", reason);
		goto out;
	}
	ASSERT_EQ(pjrt_api__addr(api), ret, "scan = GetPjrtApi's return");
	ASSERT_EQ(pjrt_api__minor(api), minor, "plugin minor");
	pjrt_api__free(api);

	api = pjrt_api__from_getpjrtapi(0, so, ret, reason, sizeof(reason));
	if (!ASSERT_OK_PTR(api, "plugin: uretprobe path")) {
		printf("  reason: %s\n", reason);
		goto out;
	}
	if (ASSERT_OK(pjrt_api__probe_target(api, PJRT_FN_LOADED_EXECUTABLE_EXECUTE, &tg),
		      "plugin Execute target")) {
		ASSERT_STREQ(tg.path, so, "attach to the plugin file");
		ASSERT_EQ(tg.attach_offset, tg.file_offset + 4, "after endbr64");
		ASSERT_STREQ(tg.placement.insn, "push %r15", "on push %r15");
		/* The file offset holds the bytes the process runs. */
		fd = open(so, O_RDONLY | O_CLOEXEC);
		if (ASSERT_GE(fd, 0, "open plugin")) {
			ASSERT_EQ(pread(fd, file_bytes, 8, tg.file_offset), 8, "pread");
			ASSERT_OK(process_read(0, tg.addr, mem, 8), "read code");
			ASSERT_TRUE(!memcmp(file_bytes, mem, 8), "file bytes = code at the address");
			close(fd);
		}
	}
	if (ASSERT_OK(pjrt_api__probe_target(api, PJRT_FN_EVENT_AWAIT, &tg), "plugin Await")) {
		ASSERT_EQ(tg.attach_offset, tg.file_offset, "mov after endbr64: at entry");
		ASSERT_TRUE(tg.placement.single_steps, "and it single-steps");
	}
	if (ASSERT_OK(pjrt_api__probe_target(api, PJRT_FN_BUFFER_TO_HOST_BUFFER, &tg), "D2H"))
		ASSERT_EQ(tg.slot, minor == 26 ? 69 : 70, "slot by minor");
out:
	pjrt_api__free(api);
	if (handle)
		dlclose(handle);
	unlink(src);
	unlink(so);
}

static void test_plugin_so(void)
{
	char dir[4096];

	if (!make_dir(dir, sizeof(dir), "pjrt-plugin")) {
		test_skip_part("no temporary directory; plugin .so checks skipped");
		return;
	}
	check_plugin(dir, 94, NSLOTS_94);
	check_plugin(dir, 26, NSLOTS_26);
	rmdir(dir);
}

int main(void)
{
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	if (n <= 0) {
		printf("SKIP: cannot read /proc/self/exe\n");
		return TEST_SKIP;
	}
	exe[n] = '\0';
	test_slot_tables();
	test_accept();
	test_refuse();
	test_probe_targets();
	test_scan_self();
	test_scan_mmap();
	test_plugin_so();
	return test_exit();
}
