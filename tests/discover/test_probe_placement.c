// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Uprobe placement: hand-written byte sequences for every rule, functions of
 * this binary with exact first instructions (written in assembly, so the
 * compiler's flags cannot change them), and real functions compiled with
 * -fcf-protection into a .so built at test time when a C compiler is there.
 * Runs unprivileged.
 */
#include <dlfcn.h>
#include <elf.h>
#include <sys/stat.h>

#include "test.h"
#include "discover/elf_image.h"
#include "discover/probe_placement.h"

struct seq {
	const char *what;
	unsigned char bytes[16];
	size_t len;
	uint32_t offset;
	bool single_steps;
	const char *insn;
	uint8_t insn_len;
};

#define ENDBR 0xf3, 0x0f, 0x1e, 0xfa

static const struct seq seqs[] = {
	{ "endbr64 + push rbp", { ENDBR, 0x55, 0x48, 0x89, 0xe5 }, 8, 4, false, "push %rbp", 1 },
	{ "endbr64 + push r15", { ENDBR, 0x41, 0x57, 0x41, 0x56 }, 8, 4, false, "push %r15", 2 },
	{ "endbr64 + push rbx", { ENDBR, 0x53, 0x48, 0x83, 0xec, 0x10 }, 9, 4, false, "push %rbx", 1 },
	{ "endbr64 + mov", { ENDBR, 0x48, 0x89, 0xf8, 0xc3 }, 8, 0, true, "endbr64", 4 },
	{ "endbr64 + sub rsp", { ENDBR, 0x48, 0x83, 0xec, 0x18 }, 8, 0, true, "endbr64", 4 },
	{ "endbr64 + nop", { ENDBR, 0x90, 0xc3 }, 6, 4, false, "nop", 1 },
	{ "endbr64 + jmp rel32", { ENDBR, 0xe9, 0x10, 0x00, 0x00, 0x00 }, 9, 4, false, "jmp rel32", 5 },
	{ "endbr64 alone", { ENDBR }, 4, 0, true, "endbr64", 4 },
	{ "endbr64 + truncated push r15", { ENDBR, 0x41 }, 5, 0, true, "endbr64", 4 },
	{ "push rbp", { 0x55, 0x48, 0x89, 0xe5 }, 4, 0, false, "push %rbp", 1 },
	{ "push r12", { 0x41, 0x54, 0x55 }, 3, 0, false, "push %r12", 2 },
	{ "nop", { 0x90, 0x55 }, 2, 0, false, "nop", 1 },
	{ "66 90", { 0x66, 0x90 }, 2, 0, false, "xchg %ax,%ax", 2 },
	{ "nopl 3", { 0x0f, 0x1f, 0x00, 0x55 }, 4, 0, false, "nopl", 3 },
	{ "nopl 4", { 0x0f, 0x1f, 0x40, 0x00 }, 4, 0, false, "nopl", 4 },
	{ "nopl 5", { 0x0f, 0x1f, 0x44, 0x00, 0x00, 0x55 }, 6, 0, false, "nopl", 5 },
	{ "nopw 6", { 0x66, 0x0f, 0x1f, 0x44, 0x00, 0x00 }, 6, 0, false, "nopw", 6 },
	{ "nopl 7", { 0x0f, 0x1f, 0x80, 0, 0, 0, 0 }, 7, 0, false, "nopl", 7 },
	{ "nopl 8", { 0x0f, 0x1f, 0x84, 0, 0, 0, 0, 0 }, 8, 0, false, "nopl", 8 },
	{ "0f 1f /1 is not a nop", { 0x0f, 0x1f, 0xc8 }, 3, 0, true, "nop (other form)", 0 },
	{ "sub rsp", { 0x48, 0x83, 0xec, 0x08 }, 4, 0, true, "sub", 0 },
	{ "lea", { 0x48, 0x8d, 0x05, 0x10, 0x00, 0x00, 0x00 }, 7, 0, true, "lea", 0 },
	{ "mov", { 0x48, 0x89, 0xe5 }, 3, 0, true, "mov", 0 },
	{ "xor", { 0x31, 0xc0, 0xc3 }, 3, 0, true, "xor", 0 },
	{ "test", { 0x48, 0x85, 0xff }, 3, 0, true, "test", 0 },
	{ "push imm", { 0x6a, 0x01 }, 2, 0, true, "push $imm", 0 },
	{ "jmp *rip (PLT)", { 0xff, 0x25, 0, 0, 0, 0 }, 6, 0, true, "jmp *", 0 },
	{ "call rel32", { 0xe8, 0, 0, 0, 0 }, 5, 0, false, "call rel32", 5 },
	{ "ret", { 0xc3 }, 1, 0, true, "ret", 0 },
	/* After endbr64 a refused instruction leaves the probe on endbr64. */
	{ "endbr64 + notrack jmp", { ENDBR, 0x3e, 0xff, 0xe0 }, 7, 0, true, "endbr64", 4 },
};

/*
 * Single-stepping prologue instructions the probe moves past, to the first
 * emulated instruction after them, and those it must not move past.
 */
static const struct seq moved[] = {
	{ "mov rdi->rax, push", { 0x48, 0x89, 0xf8, 0x55 }, 4, 3, false, "push %rbp", 1 },
	{ "endbr64, mov rdi->rbx, push", { ENDBR, 0x48, 0x89, 0xfb, 0x55 }, 8, 7, false,
	  "push %rbp", 1 },
	{ "test rdi, jcc", { 0x48, 0x85, 0xff, 0x74, 0x05, 0x55 }, 6, 3, false, "jcc rel8", 2 },
	{ "load, cmp, push r15", { 0x48, 0x8b, 0x47, 0x08, 0x48, 0x83, 0xf8, 0x01, 0x41, 0x57 },
	  10, 8, false, "push %r15", 2 },
	{ "xor eax, push", { 0x31, 0xc0, 0x55 }, 3, 2, false, "push %rbp", 1 },
	{ "mov $imm64 rax, nop", { 0x48, 0xb8, 1, 2, 3, 4, 5, 6, 7, 8, 0x90 }, 11, 10, false,
	  "nop", 1 },
	{ "movzx, lea, push", { 0x0f, 0xb6, 0x07, 0x48, 0x8d, 0x04, 0x40, 0x53 }, 8, 7, false,
	  "push %rbx", 1 },
	/* Not moved: it would change what the probe reads, or might not be
	 * reached, or the run is too long or not understood. */
	{ "mov rax->rdi (an argument), push", { 0x48, 0x89, 0xc7, 0x55 }, 4, 0, true, "mov", 0 },
	{ "sub rsp, push", { 0x48, 0x83, 0xec, 0x08, 0x55 }, 5, 0, true, "sub", 0 },
	{ "store through rdi, push", { 0x48, 0x89, 0x07, 0x55 }, 4, 0, true, "mov", 0 },
	{ "mov $1 -> r9d (an argument), push", { 0x41, 0xb9, 1, 0, 0, 0, 0x55 }, 7, 0, true,
	  "unknown", 0 },
	{ "jmp *rax first", { 0xff, 0xe0, 0x55 }, 3, 0, true, "jmp *", 0 },
	{ "five plain, push", { 0x31, 0xc0, 0x31, 0xdb, 0x31, 0xc0, 0x31, 0xdb, 0x31, 0xc0, 0x55 },
	  11, 0, true, "xor", 0 },
	{ "endbr64, sub rsp, push", { ENDBR, 0x48, 0x83, 0xec, 0x18, 0x55 }, 9, 0, true,
	  "endbr64", 4 },
	{ "mov, then refused", { 0x48, 0x89, 0xf8, 0xcc }, 4, 0, true, "mov", 0 },
	{ "mov, truncated", { 0x48, 0x89 }, 2, 0, true, "mov", 0 },
};

/* Instructions the kernel will not probe at all. */
static const struct seq refused[] = {
	{ "cs nopw", { 0x66, 0x2e, 0x0f, 0x1f, 0x84, 0, 0, 0, 0, 0 }, 10 },
	{ "lock incl", { 0xf0, 0xff, 0x07 }, 3 },
	{ "ds prefix", { 0x3e, 0xff, 0xe0 }, 3 },
	{ "int3", { 0xcc, 0x55 }, 2 },
};

static void test_sequences(void)
{
	struct probe_placement pl;

	for (size_t i = 0; i < sizeof(seqs) / sizeof(seqs[0]); i++) {
		const struct seq *s = &seqs[i];

		if (!ASSERT_OK(probe_placement__decide(s->bytes, s->len, &pl), s->what))
			continue;
		if (!ASSERT_EQ(pl.offset, s->offset, s->what) ||
		    !ASSERT_EQ(pl.single_steps, s->single_steps, s->what) ||
		    !ASSERT_STREQ(pl.insn, s->insn, s->what) ||
		    !(s->insn_len ? ASSERT_EQ(pl.insn_len, s->insn_len, s->what) : true))
			printf("  (%s: why: %s)\n", s->what, pl.why);
		ASSERT_TRUE(pl.why[0] != '\0', "a reason");
		if (pl.single_steps)
			ASSERT_STRCONTAINS(pl.why, "single-steps", "reason says it single-steps");
	}
	ASSERT_EQ(probe_placement__decide(seqs[0].bytes, 0, &pl), -EINVAL, "no bytes");
	for (size_t i = 0; i < sizeof(moved) / sizeof(moved[0]); i++) {
		const struct seq *s = &moved[i];

		if (!ASSERT_OK(probe_placement__decide(s->bytes, s->len, &pl), s->what))
			continue;
		if (!ASSERT_EQ(pl.offset, s->offset, s->what) ||
		    !ASSERT_EQ(pl.single_steps, s->single_steps, s->what) ||
		    !ASSERT_EQ(pl.moved, s->offset > 0 && s->offset != 4, s->what) ||
		    !ASSERT_STREQ(pl.insn, s->insn, s->what) ||
		    !(s->insn_len ? ASSERT_EQ(pl.insn_len, s->insn_len, s->what) : true))
			printf("  (%s: why: %s)\n", s->what, pl.why);
		if (pl.moved)
			ASSERT_STRCONTAINS(pl.why, "is emulated", s->what);
	}
	for (size_t i = 0; i < sizeof(seqs) / sizeof(seqs[0]); i++) {
		probe_placement__decide(seqs[i].bytes, seqs[i].len, &pl);
		ASSERT_FALSE(pl.refused, seqs[i].what);
	}
	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		const struct seq *s = &refused[i];

		if (!ASSERT_OK(probe_placement__decide(s->bytes, s->len, &pl), s->what))
			continue;
		ASSERT_TRUE(pl.refused, s->what);
		ASSERT_EQ(pl.offset, 0, s->what);
		ASSERT_FALSE(pl.single_steps, s->what);
		ASSERT_STRCONTAINS(pl.why, "cannot be probed", s->what);
	}
	probe_placement__decide(refused[0].bytes, refused[0].len, &pl);
	ASSERT_STREQ(pl.insn, "nop (other form)", "cs nopw named");
	probe_placement__decide(refused[1].bytes, refused[1].len, &pl);
	ASSERT_STREQ(pl.insn, "unknown", "lock incl");

	/* The bytes shown are the probed instruction's. */
	probe_placement__decide(seqs[0].bytes, seqs[0].len, &pl);
	ASSERT_STREQ(pl.bytes, "55 48 89 e5", "bytes at +4");
	probe_placement__decide(seqs[20].bytes, seqs[20].len, &pl);
	ASSERT_STREQ(pl.bytes, "48 83 ec 08", "bytes at +0");
	probe_placement__decide(seqs[15].bytes, seqs[15].len, &pl);
	ASSERT_STRCONTAINS(pl.why, "6.16", "multi-byte nop caveat");
}

/* Functions with known first instructions, exactly as written. */
__asm__(
	".text\n"
	".globl pp_endbr_push_rbp\n.type pp_endbr_push_rbp,@function\n"
	"pp_endbr_push_rbp:\n endbr64\n push %rbp\n mov %rsp,%rbp\n pop %rbp\n ret\n"
	".size pp_endbr_push_rbp,.-pp_endbr_push_rbp\n"
	".globl pp_endbr_push_r15\n.type pp_endbr_push_r15,@function\n"
	"pp_endbr_push_r15:\n endbr64\n push %r15\n pop %r15\n ret\n"
	".size pp_endbr_push_r15,.-pp_endbr_push_r15\n"
	".globl pp_endbr_mov\n.type pp_endbr_mov,@function\n"
	"pp_endbr_mov:\n endbr64\n mov %rdi,%rax\n ret\n"
	".size pp_endbr_mov,.-pp_endbr_mov\n"
	".globl pp_push\n.type pp_push,@function\n"
	"pp_push:\n push %rbx\n pop %rbx\n ret\n"
	".size pp_push,.-pp_push\n"
	".globl pp_nop\n.type pp_nop,@function\n"
	"pp_nop:\n nop\n ret\n"
	".size pp_nop,.-pp_nop\n"
	".globl pp_sub\n.type pp_sub,@function\n"
	"pp_sub:\n sub $8,%rsp\n add $8,%rsp\n ret\n"
	".size pp_sub,.-pp_sub\n"
	".globl pp_lea\n.type pp_lea,@function\n"
	"pp_lea:\n lea 1(%rdi),%rax\n ret\n"
	".size pp_lea,.-pp_lea\n"
	/* A function shorter than the 16 bytes read: endbr64 + ret. */
	".globl pp_tiny\n.type pp_tiny,@function\n"
	"pp_tiny:\n endbr64\n ret\n"
	".size pp_tiny,.-pp_tiny\n"
	/* A symbol that is not code: data in .rodata. */
	".section .rodata\n"
	".globl pp_not_code\n.type pp_not_code,@object\n"
	"pp_not_code:\n .byte 0x55, 0x55, 0x55, 0x55\n"
	".size pp_not_code,.-pp_not_code\n"
	".text\n");

void pp_endbr_push_rbp(void);
void pp_endbr_push_r15(void);
void pp_endbr_mov(void);
void pp_push(void);
void pp_nop(void);
void pp_sub(void);
void pp_lea(void);
void pp_tiny(void);
extern const unsigned char pp_not_code[];

static void test_own_functions(void)
{
	static const struct {
		const char *name;
		void (*fn)(void);
		uint32_t offset;
		bool single_steps;
		const char *insn;
	} fns[] = {
		{ "pp_endbr_push_rbp", pp_endbr_push_rbp, 4, false, "push %rbp" },
		{ "pp_endbr_push_r15", pp_endbr_push_r15, 4, false, "push %r15" },
		{ "pp_endbr_mov", pp_endbr_mov, 0, true, "endbr64" },
		{ "pp_push", pp_push, 0, false, "push %rbx" },
		{ "pp_nop", pp_nop, 0, false, "nop" },
		{ "pp_sub", pp_sub, 0, true, "sub" },
		{ "pp_lea", pp_lea, 0, true, "lea" },
		{ "pp_tiny", pp_tiny, 0, true, "endbr64" },
	};
	struct probe_placement pl, by_vaddr;
	struct elf_image *img;
	struct elf_symbol sym;

	img = elf_image__open("/proc/self/exe");
	if (!ASSERT_OK_PTR(img, "open self"))
		return;
	for (size_t i = 0; i < sizeof(fns) / sizeof(fns[0]); i++) {
		if (!ASSERT_OK(probe_placement__for_symbol(img, fns[i].name, &pl, &sym), fns[i].name))
			continue;
		ASSERT_EQ(pl.offset, fns[i].offset, fns[i].name);
		ASSERT_EQ(pl.single_steps, fns[i].single_steps, fns[i].name);
		ASSERT_STREQ(pl.insn, fns[i].insn, fns[i].name);
		/* By address too; the symbol's bytes are the running code's. */
		ASSERT_OK(probe_placement__for_vaddr(img, sym.value, &by_vaddr), "by vaddr");
		ASSERT_EQ(by_vaddr.offset, pl.offset, "same by vaddr");
		ASSERT_OK(probe_placement__decide((const void *)fns[i].fn, sym.size, &by_vaddr),
			  "from memory");
		ASSERT_STREQ(by_vaddr.insn, pl.insn, "memory and file agree");
	}
	ASSERT_EQ(probe_placement__for_symbol(img, "no_such_function", &pl, NULL), -ENOENT,
		  "unknown symbol");
	{
		uint64_t base = (uintptr_t)pp_nop, v;

		/* pp_not_code's vaddr relative to pp_nop's: not executable. */
		if (ASSERT_OK(elf_image__find_symbol(img, "pp_nop", &sym), "pp_nop")) {
			v = sym.value + ((uintptr_t)pp_not_code - base);
			ASSERT_EQ(probe_placement__for_vaddr(img, v, &pl), -ENOENT, "data: ENOENT");
		}
	}
	elf_image__free(img);
}

/* Real compiler output: cc -O2 -fcf-protection into a .so, when cc exists. */
static const char cf_src[] =
	"int (*volatile hook)(int);\n"
	"/* Values live across two calls: callee-saved registers, so pushes. */\n"
	"int pp_saves(int n) { int a = hook(n); int b = hook(a + n); return a + b + n; }\n"
	"/* A leaf: endbr64 then a mov. */\n"
	"int pp_leaf(const int *p) { return p[0] + p[1]; }\n";

static void test_compiled(void)
{
	const char *cc = getenv("CC") && getenv("CC")[0] ? getenv("CC") : "cc";
	char dir[4096], src[4200], so[4200], cmd[16384];
	struct probe_placement pl, mem;
	struct elf_image *img = NULL;
	struct elf_symbol sym;
	void *handle = NULL, *fn;
	FILE *f;
	ssize_t n;

	/* Next to the test binary (it must allow exec for dlopen), else /tmp. */
	n = readlink("/proc/self/exe", dir, sizeof(dir) - 64);
	if (n <= 0)
		return;
	dir[n] = '\0';
	*strrchr(dir, '/') = '\0';
	strcat(dir, "/placement-test.XXXXXX");
	if (!mkdtemp(dir)) {
		snprintf(dir, sizeof(dir), "/tmp/placement-test.XXXXXX");
		if (!mkdtemp(dir)) {
			test_skip_part("no temporary directory; compiled-function checks skipped");
			return;
		}
	}
	snprintf(src, sizeof(src), "%s/cf.c", dir);
	snprintf(so, sizeof(so), "%s/libcf.so", dir);
	f = fopen(src, "w");
	if (!f)
		goto out;
	fputs(cf_src, f);
	fclose(f);
	snprintf(cmd, sizeof(cmd), "%s -O2 -fcf-protection=full -fPIC -shared -o '%s' '%s' 2>/dev/null",
		 cc, so, src);
	if (system(cmd) != 0) {
		test_skip_part("no C compiler with -fcf-protection; compiled-function checks skipped");
		goto out;
	}
	img = elf_image__open(so);
	if (!ASSERT_OK_PTR(img, "open compiled .so"))
		goto out;

	if (ASSERT_OK(probe_placement__for_symbol(img, "pp_saves", &pl, &sym), "pp_saves")) {
		printf("pp_saves: +%u %s [%s] %s\n", pl.offset, pl.insn, pl.bytes, pl.why);
		ASSERT_EQ(pl.offset, 4, "compiled: probe after endbr64");
		ASSERT_FALSE(pl.single_steps, "compiled: on an emulated push");
		ASSERT_STRCONTAINS(pl.insn, "push", "compiled: a push");
	}
	if (ASSERT_OK(probe_placement__for_symbol(img, "pp_leaf", &pl, &sym), "pp_leaf")) {
		printf("pp_leaf: +%u %s [%s] %s\n", pl.offset, pl.insn, pl.bytes, pl.why);
		ASSERT_EQ(pl.offset, 0, "leaf: at entry");
		ASSERT_TRUE(pl.single_steps, "leaf: single-steps");
		ASSERT_STREQ(pl.insn, "endbr64", "leaf: on endbr64");
	}

	/* The file's bytes are the loaded code's: decide from memory too. */
	handle = dlopen(so, RTLD_NOW | RTLD_LOCAL);
	if (!handle) {
		test_skip_part("cannot dlopen %s (%s); memory cross-check skipped", so, dlerror());
		goto out;
	}
	fn = dlsym(handle, "pp_saves");
	if (ASSERT_OK_PTR(fn, "dlsym pp_saves") &&
	    ASSERT_OK(elf_image__find_symbol(img, "pp_saves", &sym), "sym") &&
	    ASSERT_OK(probe_placement__decide(fn, sym.size < 16 ? sym.size : 16, &mem), "from memory") &&
	    ASSERT_OK(probe_placement__for_symbol(img, "pp_saves", &pl, NULL), "from file")) {
		ASSERT_STREQ(mem.bytes, pl.bytes, "file bytes = loaded bytes");
		ASSERT_EQ(mem.offset, pl.offset, "same placement");
	}
out:
	if (handle)
		dlclose(handle);
	elf_image__free(img);
	unlink(src);
	unlink(so);
	rmdir(dir);
}

int main(void)
{
	test_sequences();
	test_own_functions();
	test_compiled();
	return test_exit();
}
