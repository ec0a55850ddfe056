// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * ELF images and runtime recognition (discover/): a library file a traced
 * process maps, opened and asked what acceltrace asks of it: its build id,
 * segments, the exports every probe pack's signature and entries name,
 * which runtime it is, and where a uprobe on GetPjrtApi would go.
 */
#include "fuzz_input.h"
#include "discover/elf_image.h"
#include "discover/probe_packs.h"
#include "discover/probe_placement.h"
#include "discover/runtime_kind.h"

static void lookup(const struct elf_image *img, const char *name)
{
	struct elf_symbol sym;
	uint64_t off, vaddr;
	uint8_t code[32];

	if (!name)
		return;
	if (!elf_image__find_export(img, name, &sym)) {
		elf_image__read(img, sym.value, code, sizeof(code));
		if (!elf_image__vaddr_to_offset(img, sym.value, &off))
			elf_image__offset_to_vaddr(img, off, &vaddr);
		elf_image__vaddr_is_exec(img, sym.value);
	}
	elf_image__find_symbol(img, name, &sym);
}

static void lookup_list(const struct elf_image *img, const char *const *names)
{
	for (size_t i = 0; names && names[i]; i++)
		lookup(img, names[i]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int fd = fuzz_memfd(data, size, 0);
	struct probe_placement pl;
	struct elf_segment seg;
	struct elf_symbol sym;
	struct elf_image *img;
	char path[64], hex[41], why[160];

	fuzz_fd_path(fd, path, sizeof(path));
	img = elf_image__open(path);
	close(fd);
	if (!img)
		return 0;
	elf_image__machine(img);
	elf_image__type(img);
	elf_image__build_id(img, hex, sizeof(hex));
	for (size_t i = 0; i < elf_image__segment_count(img); i++)
		if (!elf_image__segment(img, i, &seg))
			elf_image__vaddr_is_exec(img, seg.vaddr);
	for (size_t i = 0; i < rt_pack_count(); i++) {
		const struct rt_pack *p = rt_pack_get(i);

		lookup_list(img, p->abi.all_of);
		lookup_list(img, p->abi.any_of);
		for (size_t k = 0; k < p->n_entries; k++)
			lookup(img, p->entries[k].symbol);
	}
	runtime_kind__recognise(img, "libtpu.so", why, sizeof(why));
	probe_placement__for_symbol(img, "GetPjrtApi", &pl, &sym);
	elf_image__free(img);
	return 0;
}
