// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Uprobe placement on x86-64 function entries: see probe_placement.h for why.
 *
 * This is not a disassembler. It recognises exactly the instructions the
 * kernel emulates (so that "emulated" is never claimed wrongly) and endbr64,
 * and gives the others a best-effort mnemonic for the report.
 */
#include <elf.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#define LOG_CONTEXT "placement"
#include "lib/log.h"
#include "discover/elf_image.h"
#include "discover/probe_placement.h"

/* Enough for a few prologue instructions before an emulated one. */
#define CODE_BYTES 32
/* Instructions a probe may be moved past (endbr64 not counted). */
#define MAX_SKIPPED 4

struct insn_info {
	bool emulated;
	bool refused;		/* the kernel will not probe it */
	uint8_t len;		/* 0: not decoded */
	char name[32];
	const char *note;	/* a caveat for the reason line, or NULL */
};

static const char *const reg64[16] = {
	"rax", "rcx", "rdx", "rbx", "rsp", "rbp", "rsi", "rdi",
	"r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15",
};

static const uint8_t endbr64[4] = { 0xf3, 0x0f, 0x1e, 0xfa };

/*
 * Length of a ModRM-addressed instruction whose ModRM byte is c[i], or 0
 * when it runs past len.
 */
static size_t modrm_len(const uint8_t *c, size_t len, size_t i)
{
	uint8_t modrm, mod, rm;
	size_t n = i + 1;

	if (i >= len)
		return 0;
	modrm = c[i];
	mod = modrm >> 6;
	rm = modrm & 7;
	if (mod != 3 && rm == 4) {		/* SIB */
		if (n >= len)
			return 0;
		if (mod == 0 && (c[n] & 7) == 5)
			n += 4;			/* no base: disp32 */
		n++;
	}
	if (mod == 1)
		n += 1;
	else if (mod == 2 || (mod == 0 && rm == 5))
		n += 4;				/* disp32 or rip-relative */
	return n <= len ? n : 0;
}

/* A guess at the mnemonic of an instruction the kernel does not emulate. */
static const char *other_name(const uint8_t *c, size_t len)
{
	size_t i = 0;
	uint8_t op, reg;

	if (len >= 4 && !memcmp(c, endbr64, 4))
		return "endbr64";
	while (i < len && i < 14 && strchr("\x26\x2e\x36\x3e\x64\x65\x66\x67\xf0\xf2\xf3", c[i]) && c[i])
		i++;					/* legacy prefixes */
	if (i < len && c[i] >= 0x40 && c[i] <= 0x4f)	/* REX */
		i++;
	if (i >= len)
		return "unknown";
	op = c[i];
	reg = i + 1 < len ? (c[i + 1] >> 3) & 7 : 0xff;
	switch (op) {
	case 0x88: case 0x89: case 0x8a: case 0x8b: case 0xc7:
		return "mov";
	case 0x8d:
		return "lea";
	case 0x30: case 0x31: case 0x32: case 0x33:
		return "xor";
	case 0x84: case 0x85:
		return "test";
	case 0x38: case 0x39: case 0x3a: case 0x3b:
		return "cmp";
	case 0x00: case 0x01: case 0x02: case 0x03:
		return "add";
	case 0x28: case 0x29: case 0x2a: case 0x2b:
		return "sub";
	case 0x80: case 0x81: case 0x83:
		switch (reg) {
		case 0: return "add";
		case 4: return "and";
		case 5: return "sub";
		case 7: return "cmp";
		}
		return "arith";
	case 0x68: case 0x6a:
		return "push $imm";
	case 0xc3:
		return "ret";
	case 0xcc:
		return "int3";
	case 0x0f:
		if (i + 1 < len && c[i + 1] == 0x1f)
			return "nop (other form)";
		return "unknown";
	case 0xff:
		switch (reg) {
		case 2: return "call *";
		case 4: return "jmp *";
		case 6: return "push (memory)";
		}
		return "unknown";
	}
	return "unknown";
}

/* Classifies the instruction at c[0..len). */
static void classify(const uint8_t *c, size_t len, struct insn_info *ii)
{
	size_t p = 0, n;

	memset(ii, 0, sizeof(*ii));
	if (!len) {
		snprintf(ii->name, sizeof(ii->name), "(none)");
		return;
	}

	/*
	 * uprobe_init_insn() refuses ES/CS/SS/DS segment overrides and lock
	 * prefixes, and a uprobe on an int3 is refused too.
	 */
	for (size_t i = 0; i < len && i < 14; i++) {
		uint8_t b = c[i];

		if (b == 0x26 || b == 0x2e || b == 0x36 || b == 0x3e || b == 0xf0) {
			ii->refused = true;
			break;
		}
		if (b != 0x64 && b != 0x65 && b != 0x66 && b != 0x67 &&
		    b != 0xf2 && b != 0xf3)
			break;		/* past the legacy prefixes */
	}
	if (c[0] == 0xcc)
		ii->refused = true;
	if (ii->refused) {
		snprintf(ii->name, sizeof(ii->name), "%s", other_name(c, len));
		return;
	}

	/* push %reg (50-57) and push %r8-%r15 (41 50-57): emulated. */
	if (c[0] >= 0x50 && c[0] <= 0x57) {
		ii->emulated = true;
		ii->len = 1;
		snprintf(ii->name, sizeof(ii->name), "push %%%s", reg64[c[0] - 0x50]);
		return;
	}
	if (len >= 2 && c[0] == 0x41 && c[1] >= 0x50 && c[1] <= 0x57) {
		ii->emulated = true;
		ii->len = 2;
		snprintf(ii->name, sizeof(ii->name), "push %%%s",
			 reg64[8 + c[1] - 0x50]);
		return;
	}

	/* nop: 90 with any 66 prefixes ("prefix* + nop" in the kernel). */
	while (p < len && p < 14 && c[p] == 0x66)
		p++;
	if (p < len && c[p] == 0x90) {
		ii->emulated = true;
		ii->len = p + 1;
		snprintf(ii->name, sizeof(ii->name), p ? "xchg %%ax,%%ax" : "nop");
		return;
	}
	/* Multi-byte nop 0f 1f /0, optionally 66-prefixed. */
	if (p + 2 < len && c[p] == 0x0f && c[p + 1] == 0x1f &&
	    ((c[p + 2] >> 3) & 7) == 0 && (n = modrm_len(c, len, p + 2))) {
		ii->emulated = true;
		ii->len = n;
		ii->note = "multi-byte nops are emulated since Linux 6.16 and "
			   "single-stepped before";
		snprintf(ii->name, sizeof(ii->name), p ? "nopw" : "nopl");
		return;
	}

	/* Relative jmp, call and jcc: emulated (without a 66 prefix). */
	switch (c[0]) {
	case 0xeb:
		ii->emulated = len >= 2;
		ii->len = 2;
		snprintf(ii->name, sizeof(ii->name), "jmp rel8");
		return;
	case 0xe9:
	case 0xe8:
		ii->emulated = len >= 5;
		ii->len = 5;
		snprintf(ii->name, sizeof(ii->name), "%s rel32",
			 c[0] == 0xe8 ? "call" : "jmp");
		return;
	}
	if (c[0] >= 0x70 && c[0] <= 0x7f) {
		ii->emulated = len >= 2;
		ii->len = 2;
		snprintf(ii->name, sizeof(ii->name), "jcc rel8");
		return;
	}
	if (len >= 2 && c[0] == 0x0f && c[1] >= 0x80 && c[1] <= 0x8f) {
		ii->emulated = len >= 6;
		ii->len = 6;
		snprintf(ii->name, sizeof(ii->name), "jcc rel32");
		return;
	}

	if (len >= 4 && !memcmp(c, endbr64, 4))
		ii->len = 4;
	snprintf(ii->name, sizeof(ii->name), "%s", other_name(c, len));
}

/*
 * What a probe reads when it fires: the SysV argument registers (rdi, rsi,
 * rdx, rcx, r8, r9), the stack pointer (stack arguments, and the return
 * address a return probe swaps at (%rsp)), and memory through them.
 */
#define REG_BIT(r) (1u << (r))
static const uint16_t probe_reads = REG_BIT(7) | REG_BIT(6) | REG_BIT(2) |
				    REG_BIT(1) | REG_BIT(8) | REG_BIT(9) | REG_BIT(4);

/*
 * Decodes one instruction of the forms optimised prologues open with (mov,
 * lea, movzx/movsx, test, cmp, and ALU ops on registers) and says which
 * register it writes. Returns its length, or 0 for anything else: an
 * instruction it does not know, one that writes memory, or a branch. The
 * probe is only ever moved past instructions this accepts.
 */
static size_t plain_insn(const uint8_t *c, size_t len, int *writes, const char **name)
{
	size_t i = 0, n;
	uint8_t rex = 0, op, modrm, reg, rm, mod;
	bool w, movx = false;

	if (i < len && c[i] >= 0x40 && c[i] <= 0x4f)
		rex = c[i++];
	if (i >= len)
		return 0;
	w = rex & 8;
	op = c[i];
	*writes = -1;			/* flags only */

	/* mov $imm, %reg: b8+r (imm32, or imm64 with REX.W). */
	if (op >= 0xb8 && op <= 0xbf) {
		n = i + 1 + (w ? 8 : 4);
		*writes = (op - 0xb8) | (rex & 1 ? 8 : 0);
		*name = "mov $imm";
		return n <= len ? n : 0;
	}
	/* cmp/test on the accumulator with an immediate: flags only. */
	if (op == 0x3c || op == 0xa8 || op == 0x3d || op == 0xa9) {
		n = i + 1 + (op == 0x3c || op == 0xa8 ? 1 : 4);
		*name = op == 0x3c || op == 0x3d ? "cmp" : "test";
		return n <= len ? n : 0;
	}

	if (op == 0x0f) {		/* movzx/movsx r, r/m */
		if (i + 1 >= len || (c[i + 1] != 0xb6 && c[i + 1] != 0xb7 &&
				     c[i + 1] != 0xbe && c[i + 1] != 0xbf))
			return 0;
		i++;
		movx = true;
	}
	if (i + 1 >= len)
		return 0;
	modrm = c[i + 1];
	mod = modrm >> 6;
	reg = ((modrm >> 3) & 7) | (rex & 4 ? 8 : 0);
	rm = (modrm & 7) | (rex & 1 ? 8 : 0);
	n = modrm_len(c, len, i + 1);
	if (!n)
		return 0;

	if (movx) {
		*writes = reg;
		*name = "movzx";
		return n;
	}
	switch (op) {
	case 0x8b: case 0x03: case 0x0b: case 0x23: case 0x2b: case 0x33:
	case 0x63:
		/* reg <- r/m (mov, add, or, and, sub, xor, movsxd): a memory
		 * operand is only read. */
		*writes = reg;
		*name = op == 0x8b ? "mov" : op == 0x63 ? "movsxd" : "alu";
		return n;
	case 0x8d:			/* lea: no memory access at all */
		if (mod == 3)
			return 0;
		*writes = reg;
		*name = "lea";
		return n;
	case 0x89: case 0x01: case 0x09: case 0x21: case 0x29: case 0x31:
		/* r/m <- reg: only register destinations. */
		if (mod != 3)
			return 0;
		*writes = rm;
		*name = op == 0x89 ? "mov" : op == 0x31 ? "xor" : op == 0x29 ? "sub" :
			"alu";
		return n;
	case 0x85: case 0x84: case 0x39: case 0x38: case 0x3b: case 0x3a:
		*name = op == 0x85 || op == 0x84 ? "test" : "cmp";
		return n;		/* flags only; memory only read */
	case 0x83: case 0x81: case 0x80: {
		size_t imm = op == 0x81 ? 4 : 1;

		if (n + imm > len)
			return 0;
		if (((modrm >> 3) & 7) == 7) {	/* cmp r/m, imm */
			*name = "cmp";
			return n + imm;
		}
		if (mod != 3 || op == 0x80)
			return 0;
		*writes = rm;
		*name = ((modrm >> 3) & 7) == 5 ? "sub" : ((modrm >> 3) & 7) == 0 ?
			"add" : "alu";
		return n + imm;
	}
	case 0xf6: case 0xf7: {		/* test r/m, imm (/0 only) */
		size_t imm = op == 0xf7 ? 4 : 1;

		if (((modrm >> 3) & 7) != 0 || n + imm > len)
			return 0;
		*name = "test";
		return n + imm;
	}
	case 0xc7:			/* mov $imm32, %reg */
		if (mod != 3 || ((modrm >> 3) & 7) != 0 || n + 4 > len)
			return 0;
		*writes = rm;
		*name = "mov $imm";
		return n + 4;
	default:
		return 0;
	}
}

/*
 * A later place for a probe whose instruction at @start single-steps: the
 * first emulated instruction after a run of plain ones (plain_insn) that
 * write none of probe_reads. The run cannot branch, write memory or move
 * the stack pointer, so every call reaches the later place with the same
 * arguments, stack and return address as at @start, and the instructions
 * before it still run, in order, as they always did. Returns the later
 * offset from @c, or 0 when there is none; @skipped gets their names.
 */
static size_t later_emulated(const uint8_t *c, size_t len, size_t start,
			     struct insn_info *next, char *skipped, size_t size)
{
	size_t at = start, w = 0;

	skipped[0] = '\0';
	for (int k = 0; k < MAX_SKIPPED && at < len; k++) {
		const char *name = "?";
		int writes;
		size_t n = plain_insn(c + at, len - at, &writes, &name);

		if (!n || (writes >= 0 && (probe_reads & REG_BIT(writes))))
			return 0;
		if (w < size)
			w += snprintf(skipped + w, size - w, "%s%s", k ? ", " : "", name);
		at += n;
		classify(c + at, len - at, next);
		if (next->refused)
			return 0;
		if (next->emulated)
			return at;
	}
	return 0;
}

static void hex_bytes(const uint8_t *c, size_t len, char *out, size_t size)
{
	size_t w = 0;

	out[0] = '\0';
	for (size_t i = 0; i < len && i < 8 && w + 3 <= size; i++)
		w += snprintf(out + w, size - w, i ? " %02x" : "%02x", c[i]);
}

/* Places the probe past the single-stepping instructions from @start when
 * later_emulated() finds a place; false when it does not. */
static bool place_later(const uint8_t *c, size_t len, size_t start,
			struct probe_placement *pl)
{
	struct insn_info next;
	char skipped[64];
	size_t at = later_emulated(c, len, start, &next, skipped, sizeof(skipped));

	if (!at)
		return false;
	pl->offset = at;
	pl->single_steps = false;
	pl->moved = true;
	pl->insn_len = next.len;
	snprintf(pl->insn, sizeof(pl->insn), "%s", next.name);
	hex_bytes(c + at, len - at, pl->bytes, sizeof(pl->bytes));
	snprintf(pl->why, sizeof(pl->why),
		 "%s%s single-step%s; the %s at +%zu is emulated and what runs "
		 "before it changes no argument register, stack or memory: probe there",
		 start ? "endbr64, " : "", skipped, start || strchr(skipped, ',') ? "" : "s",
		 next.name, at);
	return true;
}

int probe_placement__decide(const void *code, size_t len,
			    struct probe_placement *pl)
{
	const uint8_t *c = code;
	struct insn_info first, next;

	if (!len)
		return -EINVAL;
	memset(pl, 0, sizeof(*pl));

	if (len >= 4 && !memcmp(c, endbr64, 4)) {
		classify(c + 4, len - 4, &next);
		if (next.emulated) {
			pl->offset = 4;
			pl->single_steps = false;
			pl->insn_len = next.len;
			snprintf(pl->insn, sizeof(pl->insn), "%s", next.name);
			hex_bytes(c + 4, len - 4, pl->bytes, sizeof(pl->bytes));
			snprintf(pl->why, sizeof(pl->why),
				 "endbr64 is single-stepped, the %s after it is "
				 "emulated: probe at +4%s%s", next.name,
				 next.note ? "; " : "", next.note ? next.note : "");
			return 0;
		}
		if (!next.refused && place_later(c, len, 4, pl))
			return 0;
		pl->offset = 0;
		pl->single_steps = true;
		pl->insn_len = 4;
		snprintf(pl->insn, sizeof(pl->insn), "endbr64");
		hex_bytes(c, len, pl->bytes, sizeof(pl->bytes));
		snprintf(pl->why, sizeof(pl->why),
			 "endbr64 then %s: neither is emulated, the probe at +0 "
			 "single-steps (~14 us a hit on our VMs)", next.name);
		return 0;
	}

	classify(c, len, &first);
	pl->offset = 0;
	if (first.refused) {
		pl->refused = true;
		pl->insn_len = first.len;
		snprintf(pl->insn, sizeof(pl->insn), "%s", first.name);
		hex_bytes(c, len, pl->bytes, sizeof(pl->bytes));
		snprintf(pl->why, sizeof(pl->why), "%s at entry cannot be probed: the "
			 "kernel refuses uprobes on int3 and on segment-override or "
			 "lock prefixes", first.name);
		return 0;
	}
	if (!first.emulated && place_later(c, len, 0, pl))
		return 0;
	pl->single_steps = !first.emulated;
	pl->insn_len = first.len;
	snprintf(pl->insn, sizeof(pl->insn), "%s", first.name);
	hex_bytes(c, len, pl->bytes, sizeof(pl->bytes));
	if (first.emulated)
		snprintf(pl->why, sizeof(pl->why), "%s at entry is emulated: "
			 "probe at +0%s%s", first.name, first.note ? "; " : "",
			 first.note ? first.note : "");
	else
		snprintf(pl->why, sizeof(pl->why), "%s at entry is not emulated: "
			 "the probe at +0 single-steps (~14 us a hit on our VMs)",
			 first.name);
	return 0;
}

static int decide_at(const struct elf_image *img, uint64_t vaddr,
		     uint64_t size, struct probe_placement *pl)
{
	uint8_t code[CODE_BYTES];
	size_t want = sizeof(code);
	int n;

	if (elf_image__machine(img) != EM_X86_64)
		return -EOPNOTSUPP;
	if (!elf_image__vaddr_is_exec(img, vaddr))
		return -ENOENT;
	/* Never look past the function's end when the symbol says where. */
	if (size && size < want)
		want = size;
	n = elf_image__read(img, vaddr, code, want);
	if (n < 0)
		return n;
	return probe_placement__decide(code, n, pl);
}

int probe_placement__for_vaddr(const struct elf_image *img, uint64_t vaddr,
			       struct probe_placement *pl)
{
	return decide_at(img, vaddr, 0, pl);
}

int probe_placement__for_symbol(const struct elf_image *img, const char *name,
				struct probe_placement *pl,
				struct elf_symbol *sym)
{
	struct elf_symbol s;
	int err;

	err = elf_image__find_symbol(img, name, &s);
	if (err)
		return err;
	if (sym)
		*sym = s;
	return decide_at(img, s.value, s.size, pl);
}
