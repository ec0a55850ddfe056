/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Where in a function a uprobe should go (x86-64).
 *
 * A uprobe replaces the first byte of an instruction with int3. When it
 * fires, the kernel must then execute the instruction it replaced. For a few
 * instructions it emulates them (arch/x86/kernel/uprobes.c): push of a
 * general register (50-57, 41 50-57), nop (90, 66 90; the 0f 1f multi-byte
 * nops since Linux 6.16), and the relative jmp/call/jcc. Every other
 * instruction is copied to an out-of-line slot and single-stepped there,
 * which costs two traps: about 14 us a hit on the project's VMs against about
 * 0.4 us for an emulated one (reference/perf-anchors.md, "Measured on the
 * project's own machines").
 *
 * CET builds (-fcf-protection, the default of most distributions and wheels)
 * begin functions with endbr64 (f3 0f 1e fa), which is not emulated. When
 * the next instruction is one that is (typically push %rbp or push %r15), the
 * uprobe goes there, at +4: endbr64 changes no register and no memory, so a
 * probe at +4 sees the same arguments, stack and return address as one at +0,
 * and every call (direct or indirect) passes through it.
 *
 * Optimised code often opens with an instruction that is not emulated
 * (mov, test, cmp, lea, an ALU op) before its first push. When a run of
 * such instructions, each one decoded, writes no argument register and not
 * the stack pointer, writes no memory and does not branch, and an emulated
 * instruction follows, the uprobe goes on that one: every call reaches it
 * with the arguments, stack and return address it had at entry (so entry
 * and return probes read the same), and the instructions before it still
 * run as always. The one thing this cannot see is a jump from elsewhere in
 * the function to the new place, which compilers do not emit into the
 * prologue. Otherwise the probe stays at +0 and the placement says it
 * single-steps, so `acceltrace probes` can report it and hot paths can be
 * kept off it.
 */
#ifndef ACCELTRACE_PROBE_PLACEMENT_H
#define ACCELTRACE_PROBE_PLACEMENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct elf_image;
struct elf_symbol;

struct probe_placement {
	/* Bytes past the function's first byte where the uprobe goes. */
	uint32_t offset;
	/* Moved past single-stepping instructions to an emulated one. */
	bool moved;
	/* The probed instruction is single-stepped (slow), not emulated. */
	bool single_steps;
	/*
	 * The kernel refuses a uprobe on this instruction (attaching fails
	 * with ENOTSUPP): it has a segment-override or lock prefix (26, 2e,
	 * 36, 3e, f0), or it is an int3. Only for a first instruction with no
	 * endbr64 before it; offset is 0 and single_steps false then.
	 */
	bool refused;
	/* Length of the probed instruction; 0 when not decoded. */
	uint8_t insn_len;
	/* The probed instruction: "push %rbp", "nop", "endbr64", "sub", ... */
	char insn[32];
	/* Up to 8 bytes at the probe point, as hex: "55 48 89 e5". */
	char bytes[8 * 3];
	/* Why this place, in one line. */
	char why[256];
};

/*
 * Decides from the first len bytes of an x86-64 function (32 are plenty; a
 * shorter function may give fewer). Returns 0, or -EINVAL when len is 0.
 */
int probe_placement__decide(const void *code, size_t len,
			    struct probe_placement *pl);

/*
 * The same, reading the function's bytes from the file through img: at
 * virtual address vaddr, or at the function name (see
 * elf_image__find_symbol; *sym gets the symbol when not NULL). Returns 0,
 * -ENOENT when vaddr is not in an executable segment's file image (or name
 * is not defined), -EOPNOTSUPP when the file is not x86-64, or a read error.
 */
int probe_placement__for_vaddr(const struct elf_image *img, uint64_t vaddr,
			       struct probe_placement *pl);
int probe_placement__for_symbol(const struct elf_image *img, const char *name,
				struct probe_placement *pl,
				struct elf_symbol *sym);

#endif /* ACCELTRACE_PROBE_PLACEMENT_H */
