// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Finding the PJRT_Api table in a process that called GetPjrtApi before
 * acceltrace arrived: every 8-byte-aligned candidate header in the plugin's
 * data and the rest of its .bss is validated, and exactly one valid table
 * (identical copies aside) is accepted. See pjrt_api__scan() in pjrt_api.h
 * and docs/runtime-probes.md.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define LOG_CONTEXT "pjrt"
#include "lib/log.h"
#include "discover/elf_image.h"
#include "discover/pjrt_api.h"
#include "discover/pjrt_api_internal.h"
#include "discover/proc_maps.h"

#define SCAN_CHUNK (1u << 20)
/* How much anonymous memory after a library is scanned when its file does
 * not say where its .bss ends. */
#define BSS_SCAN_FALLBACK (64u << 20)

/*
 * Where lib's memory image ends in the process: the end of its highest
 * PT_LOAD segment (p_vaddr + p_memsz, .bss included), relocated by the load
 * bias that its lowest mapping gives. 0 when the file cannot tell.
 */
static uint64_t image_end(pid_t pid, const struct proc_maps *maps,
			  const struct proc_object *lib)
{
	const struct proc_map *m0 = proc_maps__get(maps, lib->first);
	uint64_t pg = sysconf(_SC_PAGESIZE), bias = 0, end = 0;
	struct elf_image *img;
	bool have_bias = false;
	struct stat st;
	int pfd;

	pfd = proc_map__open(pid, m0, &st);
	if (pfd < 0)
		return 0;
	img = elf_image__reopen(pfd, m0->path);
	close(pfd);
	if (!img)
		return 0;
	for (size_t i = 0; i < elf_image__segment_count(img); i++) {
		struct elf_segment seg;

		elf_image__segment(img, i, &seg);
		/* The loader maps each segment from its page-aligned offset. */
		if (!have_bias && (seg.offset & ~(pg - 1)) == m0->offset) {
			bias = m0->start - (seg.vaddr & ~(pg - 1));
			have_bias = true;
		}
		if (seg.vaddr + seg.memsz > end)
			end = seg.vaddr + seg.memsz;
	}
	elf_image__free(img);
	return have_bias ? bias + end : 0;
}

/*
 * A candidate header: version struct_size 24 at +16, major 0 at +32, a
 * minor in [1, 999] at +36, struct_size 40 + 8 * n with n <= 4096. A few
 * words of ordinary data match that by chance (.dynamic has
 * {DT_RELAENT, 24} followed by a small tag), which validation refuses.
 * *other_major is set for a header that is plausible but for a major in
 * [1, 15]: the caller checks its first slots before calling it a candidate,
 * so that a table of a newer major is refused by name, not missed.
 */
static bool plausible_header(const unsigned char *p, bool *other_major)
{
	struct api_header h;

	memcpy(&h, p, sizeof(h));
	*other_major = false;
	if (h.version_struct_size != PJRT_API_VERSION_SIZE)
		return false;
	if (h.minor < 1 || h.minor > PJRT_MINOR_MAX_PLAUSIBLE)
		return false;
	if (h.struct_size < PJRT_API_HEADER_SIZE + 8 ||
	    (h.struct_size - PJRT_API_HEADER_SIZE) % 8 ||
	    (h.struct_size - PJRT_API_HEADER_SIZE) / 8 > PJRT_MAX_SLOTS)
		return false;
	if (h.major == PJRT_KNOWN_MAJOR)
		return true;
	*other_major = h.major > 0 && h.major <= 15;
	return false;
}

struct scan_state {
	pid_t pid;
	const struct proc_maps *maps;
	const struct proc_object *lib;
	size_t candidates;
	uint64_t bytes, unreadable;
	size_t regions;
	struct table valid[2];	/* the first, and the first different one */
	size_t nvalid, ncopies;
	enum stage best_stage;
	bool have_best;
	uint64_t best_addr;
	char best_reason[512];
	int best_err;		/* how the furthest-reaching candidate failed */
	int err;		/* a hard error (ENOMEM) */
};

static bool same_table(const struct table *a, const struct table *b)
{
	return a->h.struct_size == b->h.struct_size && a->h.major == b->h.major &&
	       a->h.minor == b->h.minor && a->nslots == b->nslots &&
	       !memcmp(a->slots, b->slots, a->nslots * sizeof(*a->slots));
}

static void scan_candidate(struct scan_state *s, uint64_t addr)
{
	char msg[512];
	enum stage stage;
	struct table t;
	int err;

	s->candidates++;
	err = pjrt_validate(s->pid, s->maps, s->lib, addr, &t, &stage, msg, sizeof(msg));
	if (err == -ENOMEM) {
		s->err = err;
		return;
	}
	if (err) {
		if (!s->have_best || stage > s->best_stage) {
			s->have_best = true;
			s->best_stage = stage;
			s->best_addr = addr;
			s->best_err = err;
			snprintf(s->best_reason, sizeof(s->best_reason), "%s", msg);
		}
		return;
	}
	if (s->nvalid && same_table(&s->valid[0], &t)) {
		s->ncopies++;
		free(t.slots);
		return;
	}
	if (s->nvalid < 2) {
		s->valid[s->nvalid++] = t;
		return;
	}
	free(t.slots);
}

/* The first four slots of a header at addr all point into the library's text. */
static bool slots_look_like_code(const struct scan_state *s, uint64_t addr)
{
	uint64_t slots[4];

	if (process_read(s->pid, addr + PJRT_API_HEADER_SIZE, slots, sizeof(slots)))
		return false;
	for (int i = 0; i < 4; i++)
		if (!pjrt_in_lib_text(s->maps, s->lib, slots[i]))
			return false;
	return true;
}

static void scan_region(struct scan_state *s, unsigned char *buf,
			uint64_t start, uint64_t end)
{
	uint64_t pos = start;

	s->regions++;
	while (pos + PJRT_API_HEADER_SIZE <= end && !s->err) {
		uint64_t len = end - pos;
		int err;

		if (len > SCAN_CHUNK)
			len = SCAN_CHUNK;
		err = process_read(s->pid, pos, buf, len);
		if (err) {
			log_debug("scan: cannot read %" PRIu64 " bytes at 0x%" PRIx64
				  ": %s", len, pos, strerror(-err));
			s->unreadable += len;
			pos += len;
			continue;
		}
		s->bytes += len;
		for (uint64_t off = 0; off + PJRT_API_HEADER_SIZE <= len; off += 8) {
			bool other_major;

			if (plausible_header(buf + off, &other_major) ||
			    (other_major && slots_look_like_code(s, pos + off)))
				scan_candidate(s, pos + off);
		}
		if (pos + len >= end)
			break;
		/* Overlap so a header across the chunk boundary is seen. */
		pos += len - PJRT_API_HEADER_SIZE + 8;
	}
}

struct pjrt_api *pjrt_api__scan(pid_t pid, const char *library, char *reason,
				size_t reason_size)
{
	struct scan_state s = { .pid = pid };
	struct proc_maps *maps;
	const struct proc_object *lib;
	const struct proc_map *after;
	struct pjrt_api *api = NULL;
	unsigned char *buf = NULL;
	const char *name;
	char msg[768];
	int err;

	if (!library) {
		pjrt_say(reason, reason_size, "no library given to scan");
		errno = EINVAL;
		return NULL;
	}
	maps = pjrt_read_maps(pid, reason, reason_size);
	if (!maps)
		return NULL;
	lib = pjrt_find_library(maps, library);
	if (!lib) {
		pjrt_say(reason, reason_size, "%s is not mapped by process %d", library,
			 (int)pid);
		err = -ENOENT;
		goto cleanup;
	}
	name = pjrt_base_name(lib->path);
	s.maps = maps;
	s.lib = lib;
	buf = malloc(SCAN_CHUNK);
	if (!buf) {
		err = -ENOMEM;
		goto cleanup;
	}

	/* The library's readable data: .rodata, .data.rel.ro, .data, .bss. */
	for (size_t i = lib->first; i <= lib->last && !s.err; i++) {
		const struct proc_map *m = proc_maps__get(maps, i);

		if (proc_maps__object_of(maps, m) == lib && m->r && !m->x)
			scan_region(&s, buf, m->start, m->end);
	}
	/*
	 * The rest of .bss: anonymous memory right after its last mapping, up
	 * to where the file's PT_LOAD segments say its image ends (an
	 * unrelated mapping may have been placed right after the .bss).
	 */
	after = proc_maps__get(maps, lib->last + 1);
	if (after && !s.err && !after->inode && !after->path[0] && after->r &&
	    after->start == proc_maps__get(maps, lib->last)->end) {
		uint64_t end = image_end(pid, maps, lib);

		if (!end) {
			log_debug("%s: image end unknown; scanning at most %u MiB after it",
				  name, BSS_SCAN_FALLBACK >> 20);
			end = after->start + BSS_SCAN_FALLBACK;
		}
		if (end > after->end)
			end = after->end;
		if (end > after->start)
			scan_region(&s, buf, after->start, end);
	}
	if (s.err) {
		err = s.err;
		goto cleanup;
	}

	if (s.nvalid == 2) {
		struct table *a = &s.valid[0], *b = &s.valid[1];

		pjrt_say(reason, reason_size, "two different valid PJRT_Api tables in "
			 "%s: at 0x%" PRIx64 " (%d.%d, %zu slots) and at 0x%" PRIx64
			 " (%d.%d, %zu slots); acceltrace does not choose", name,
			 a->addr, a->h.major, a->h.minor, a->nslots, b->addr,
			 b->h.major, b->h.minor, b->nslots);
		err = -ENOTUNIQ;
		goto cleanup;
	}
	if (!s.nvalid) {
		int n;

		n = snprintf(msg, sizeof(msg), "no valid PJRT_Api table in %s's "
			     "data (%" PRIu64 " bytes in %zu mappings",
			     name, s.bytes, s.regions);
		if (s.unreadable && n > 0 && (size_t)n < sizeof(msg))
			n += snprintf(msg + n, sizeof(msg) - n, ", %" PRIu64
				      " unreadable", s.unreadable);
		if (n > 0 && (size_t)n < sizeof(msg)) {
			if (s.candidates)
				snprintf(msg + n, sizeof(msg) - n, "): %zu candidate "
					 "header%s; the best, at 0x%" PRIx64 ": %s",
					 s.candidates, s.candidates == 1 ? "" : "s",
					 s.best_addr, s.best_reason);
			else
				snprintf(msg + n, sizeof(msg) - n, "): no candidate "
					 "header (a table the plugin builds on its "
					 "first GetPjrtApi call is zero until then, "
					 "and one on the heap is not scanned)");
		}
		pjrt_say(reason, reason_size, "%s", msg);
		/* No candidate: not built yet. Candidates that all failed
		 * validation: a table that is there and is refused. */
		err = s.candidates && s.best_err ? s.best_err : -ENOENT;
		goto cleanup;
	}

	snprintf(msg, sizeof(msg), "PJRT_Api at 0x%" PRIx64 " in %s found by "
		 "scan (%zu candidate%s%s): version %d.%d, %zu slots; %s",
		 s.valid[0].addr, name, s.candidates, s.candidates == 1 ? "" : "s",
		 s.ncopies ? ", identical copies ignored" : "",
		 s.valid[0].h.major, s.valid[0].h.minor, s.valid[0].nslots,
		 s.valid[0].layout_why);
	api = pjrt_make_api(pid, maps, lib, &s.valid[0], msg);
	if (!api) {
		err = -ENOMEM;
		goto cleanup;
	}
	maps = NULL;
	pjrt_say(reason, reason_size, "%s", msg);
	err = 0;

cleanup:
	for (size_t i = 0; i < s.nvalid; i++)
		free(s.valid[i].slots);
	free(buf);
	proc_maps__free(maps);
	if (err)
		errno = -err;
	return api;
}
