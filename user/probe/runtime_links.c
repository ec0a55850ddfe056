// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Runtime probes' kernel links. Each probe id is the cookie of the links
 * that carry it: perf uprobes (one per probe, process and direction), or
 * uprobe_multi links (one per file, program and process, shared by every
 * probe attached in that file at once) where the kernel has them; the
 * choice is made once, at load, since a program loaded for uprobe_multi
 * cannot be attached as a perf uprobe. A pid scope (`record --pid`) makes
 * the kernel install the breakpoints in those processes only.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#define LOG_CONTEXT "probes"
#include "lib/log.h"
#include "probe/bpf_links.h"
#include "probe/fetch_plan.h"
#include "probe/probe_session.h"
#include "probe/probe_session_internal.h"
#include "probe/uprobe_multi.h"
#include "acceltrace.skel.h"

/* The program a runtime probe runs: detail probes run the ones that ask
 * the switch first. */
static struct bpf_program *runtime_prog(const struct probe_session *ps, __u32 spec_flags,
					bool at_return)
{
	bool detail = spec_flags & RT_SPEC_DETAIL;

	if (at_return)
		return detail ? ps->skel->progs.rt_return_detail : ps->skel->progs.rt_return;
	return detail ? ps->skel->progs.rt_entry_detail : ps->skel->progs.rt_entry;
}

int probe_session__runtime_prog_fd(const struct probe_session *ps, uint32_t spec_flags,
				   bool at_return)
{
	return bpf_program__fd(runtime_prog(ps, spec_flags, at_return));
}

void runtime_links__prepare_load(struct probe_session *ps)
{
	struct bpf_program *progs[] = {
		ps->skel->progs.rt_entry, ps->skel->progs.rt_return,
		ps->skel->progs.rt_entry_detail, ps->skel->progs.rt_return_detail,
	};

	if (!ps->uprobe_multi)
		return;
	for (size_t i = 0; i < sizeof(progs) / sizeof(progs[0]); i++)
		bpf_program__set_expected_attach_type(progs[i], UPROBE_MULTI_ATTACH_TYPE);
}

bool probe_session__uprobe_multi(const struct probe_session *ps)
{
	return ps->uprobe_multi;
}

int probe_session__set_pid_scope(struct probe_session *ps, const int *pids, size_t n)
{
	ps->n_scope_pids = 0;
	/* Too many: every process (links per probe would grow with them). */
	if (n > PROBE_SESSION_MAX_PIDS) {
		log_info("%zu processes: runtime probes are attached for every process "
			 "(pid-filtered up to %d)", n, PROBE_SESSION_MAX_PIDS);
		return 0;
	}
	for (size_t i = 0; i < n; i++) {
		if (pids[i] <= 0) {
			ps->n_scope_pids = 0;
			return 0;
		}
		ps->scope_pids[ps->n_scope_pids++] = pids[i];
	}
	if (n)
		log_debug("runtime probes (%s) for %zu process%s only", ps->uprobe_multi ?
			  "uprobe_multi" : "perf uprobes", n, n > 1 ? "es" : "");
	return ps->n_scope_pids;
}

size_t probe_session__pid_scope(const struct probe_session *ps,
				int pids[PROBE_SESSION_MAX_PIDS])
{
	memcpy(pids, ps->scope_pids, ps->n_scope_pids * sizeof(pids[0]));
	return ps->n_scope_pids;
}

/* ---------------------------------------------------------------- links */

static struct rt_link *link_new(void)
{
	struct rt_link *l = calloc(1, sizeof(*l));

	if (l)
		l->fd = -1;
	return l;
}

/* One link of @prog at @cnt offsets of @path for @pid (-1: all), the probe
 * ids as cookies; NULL and -errno in *err. */
static struct rt_link *link_attach(struct probe_session *ps, struct bpf_program *prog,
				   const char *path, const uint64_t *offsets,
				   const uint64_t *cookies, uint32_t cnt, bool ret, int pid,
				   int *err)
{
	struct rt_link *l = link_new();

	if (!l) {
		*err = -ENOMEM;
		return NULL;
	}
	if (ps->uprobe_multi) {
		l->fd = uprobe_multi__attach(bpf_program__fd(prog), path, offsets, cookies,
					     cnt, ret, pid);
		if (l->fd < 0) {
			*err = l->fd;
			free(l);
			return NULL;
		}
		return l;
	} else {
		LIBBPF_OPTS(bpf_uprobe_opts, uopts, .bpf_cookie = cookies[0], .retprobe = ret);

		l->perf = bpf_program__attach_uprobe_opts(prog, pid, path, offsets[0], &uopts);
		if (!l->perf) {
			*err = -errno;
			free(l);
			return NULL;
		}
	}
	return l;
}

/* Drops a reference of @rp's links; those nobody holds any more go to
 * @perf/@fds (closed by the caller, all at once). True when some link is
 * still held by other probes. */
static bool probe_unref(struct runtime_probe *rp, struct bpf_link **perf, size_t *n_perf,
			int *fds, size_t *n_fds)
{
	bool shared = false;

	for (uint8_t i = 0; i < rp->n_links; i++) {
		struct rt_link *l = rp->links[i];

		if (--l->refs) {
			shared = true;
			continue;
		}
		if (l->perf)
			perf[(*n_perf)++] = l->perf;
		else
			fds[(*n_fds)++] = l->fd;
		free(l);
	}
	rp->n_links = 0;
	return shared;
}

static void probe_release(struct probe_session *ps, uint32_t id, struct bpf_link **perf,
			  size_t *n_perf, int *fds, size_t *n_fds)
{
	struct runtime_probe *rp = &ps->probes[id];
	bool shared = probe_unref(rp, perf, n_perf, fds, n_fds);

	rp->used = false;
	/* Its cookie still fires in a link other probes hold: another probe
	 * given this id would be credited with those hits. */
	rp->held = shared;
	if (shared)
		log_debug("runtime probe %u detached alone from a shared link: id held", id);
}

static void links_close(struct bpf_link **perf, size_t n_perf, int *fds, size_t n_fds)
{
	if (n_perf || n_fds)
		bpf_links__destroy_mixed(perf, n_perf, fds, n_fds);
}

/* ---------------------------------------------------------------- attach */

/* A free id (attach/detach cycles reuse them), its spec written; -errno. */
static int probe_reserve(struct probe_session *ps, const struct rt_probe_spec *spec)
{
	__u32 id;

	for (id = 0; id < ps->n_probes; id++)
		if (!ps->probes[id].used && !ps->probes[id].held)
			break;
	if (id == AT_MAX_PROBES)
		return -E2BIG;
	if (fetch_plan__check(spec))
		return -EINVAL;
	if (bpf_map_update_elem(bpf_map__fd(ps->skel->maps.rt_specs), &id, spec, BPF_ANY))
		return -errno;
	ps->probes[id] = (struct runtime_probe){ .used = true };
	if (id == ps->n_probes)
		ps->n_probes++;
	return id;
}

/* The processes probes are attached for now: @pid, the scope's, or all. */
static size_t attach_pids(const struct probe_session *ps, int pid, int *pids)
{
	if (pid >= 0 || !ps->n_scope_pids) {
		pids[0] = pid;
		return 1;
	}
	memcpy(pids, ps->scope_pids, ps->n_scope_pids * sizeof(pids[0]));
	return ps->n_scope_pids;
}

/* The programs a batch is split by: entry or return, core or detail. */
#define N_GROUPS 4

static int group_of(const struct rt_probe_spec *spec, bool ret)
{
	return (ret ? 2 : 0) + !!(spec->flags & RT_SPEC_DETAIL);
}

/* Links @prog at the @m offsets @offs (cookies: ids) for @pid, counted in
 * every member's probe; a member whose link failed gets its error in
 * @errs. One uprobe_multi link for them all; should the kernel refuse it
 * (one offset it cannot probe), each alone, so the others still go in. */
static void link_group(struct probe_session *ps, struct bpf_program *prog, bool ret,
		       const char *path, const uint64_t *offs, const uint64_t *cookies,
		       const size_t *members, size_t m, int pid, int *errs)
{
	size_t step = ps->uprobe_multi ? m : 1;

	if (step > UPROBE_MULTI_MAX)
		step = UPROBE_MULTI_MAX;
	for (size_t k = 0; k < m; k += step) {
		size_t cnt = m - k < step ? m - k : step;
		struct rt_link *l;
		int err = 0;

		l = link_attach(ps, prog, path, offs + k, cookies + k, cnt, ret, pid, &err);
		if (!l && cnt > 1) {
			link_group(ps, prog, ret, path, offs + k, cookies + k, members + k, 1,
				   pid, errs);
			for (size_t j = k + 1; j < k + cnt; j++)
				link_group(ps, prog, ret, path, offs + j, cookies + j,
					   members + j, 1, pid, errs);
			continue;
		}
		if (!l) {
			log_debug("%s %s+0x%llx (pid %d): %s", ret ? "uretprobe" : "uprobe",
				  path, (unsigned long long)offs[k], pid, strerror(-err));
			errs[members[k]] = err;
			continue;
		}
		for (size_t j = k; j < k + cnt; j++) {
			struct runtime_probe *rp = &ps->probes[cookies[j]];

			rp->links[rp->n_links++] = l;
			l->refs++;
		}
	}
}

static size_t attach_many(struct probe_session *ps, const struct rt_probe_spec *const *specs,
			  const char *path, const uint64_t *offsets, size_t n, int *ids,
			  int pid)
{
	int pids[PROBE_SESSION_MAX_PIDS];
	size_t n_pids = attach_pids(ps, pid, pids), done = 0, n_perf = 0, n_fds = 0;
	uint64_t *offs = calloc(n + 1, sizeof(*offs));
	uint64_t *cookies = calloc(n + 1, sizeof(*cookies));
	size_t *members = calloc(n + 1, sizeof(*members));
	int *errs = calloc(n + 1, sizeof(*errs));
	struct bpf_link **perf = NULL;
	int *fds = NULL;

	for (size_t i = 0; i < n; i++) {
		ids[i] = probe_reserve(ps, specs[i]);
		if (ids[i] == -EINVAL)
			log_debug("uprobe %s+0x%llx: its fetch program's blocks are malformed",
				  path, (unsigned long long)offsets[i]);
	}
	if (!offs || !cookies || !members || !errs) {
		for (size_t i = 0; i < n; i++)
			if (ids[i] >= 0) {
				ps->probes[ids[i]].used = false;
				ids[i] = -ENOMEM;
			}
		goto out;
	}
	for (size_t p = 0; p < n_pids; p++) {
		for (int g = 0; g < N_GROUPS; g++) {
			bool ret = g >= 2;
			size_t m = 0;

			for (size_t i = 0; i < n; i++) {
				if (ids[i] < 0 || errs[i] ||
				    (ret && !(specs[i]->flags & RT_SPEC_RETURN)) ||
				    group_of(specs[i], ret) != g)
					continue;
				members[m] = i;
				offs[m] = offsets[i];
				cookies[m] = ids[i];
				m++;
			}
			if (m)
				link_group(ps, runtime_prog(ps, g & 1 ? RT_SPEC_DETAIL : 0, ret),
					   ret, path, offs, cookies, members, m, pids[p], errs);
		}
	}
	/* A probe some of whose links failed is undone whole. */
	perf = calloc(RT_MAX_LINKS * n + 1, sizeof(*perf));
	fds = calloc(RT_MAX_LINKS * n + 1, sizeof(*fds));
	for (size_t i = 0; i < n; i++) {
		if (ids[i] < 0)
			continue;
		if (!errs[i]) {
			done++;
			continue;
		}
		if (perf && fds)
			probe_release(ps, ids[i], perf, &n_perf, fds, &n_fds);
		ids[i] = errs[i];
	}
	links_close(perf, n_perf, fds, n_fds);
out:
	free(perf);
	free(fds);
	free(offs);
	free(cookies);
	free(members);
	free(errs);
	return done;
}

size_t probe_session__attach_runtime_many(struct probe_session *ps,
					  const struct rt_probe_spec *const *specs,
					  const char *path, const uint64_t *offsets,
					  size_t n, int *ids)
{
	return attach_many(ps, specs, path, offsets, n, ids, -1);
}

int probe_session__attach_runtime(struct probe_session *ps,
				  const struct rt_probe_spec *spec,
				  const char *path, uint64_t offset, int pid)
{
	int id;

	attach_many(ps, &spec, path, &offset, 1, &id, pid);
	return id;
}

/* ---------------------------------------------------------------- detach */

static bool probe_attached(const struct probe_session *ps, int probe_id)
{
	return probe_id >= 0 && (uint32_t)probe_id < ps->n_probes &&
	       ps->probes[probe_id].used;
}

int probe_session__detach_runtime(struct probe_session *ps, int probe_id)
{
	if (!probe_attached(ps, probe_id))
		return -ENOENT;
	probe_session__detach_runtime_many(ps, &probe_id, 1);
	return 0;
}

void probe_session__detach_runtime_many(struct probe_session *ps,
					const int *probe_ids, size_t n)
{
	struct bpf_link **perf = calloc(RT_MAX_LINKS * n + 1, sizeof(*perf));
	int *fds = calloc(RT_MAX_LINKS * n + 1, sizeof(*fds));
	size_t n_perf = 0, n_fds = 0;

	for (size_t i = 0; i < n; i++) {
		if (!probe_attached(ps, probe_ids[i]))
			continue;
		if (perf && fds) {
			probe_release(ps, probe_ids[i], perf, &n_perf, fds, &n_fds);
			continue;
		}
		/* No memory for the batch: one at a time. */
		{
			struct bpf_link *p1[RT_MAX_LINKS];
			int f1[RT_MAX_LINKS];
			size_t np = 0, nf = 0;

			probe_release(ps, probe_ids[i], p1, &np, f1, &nf);
			links_close(p1, np, f1, nf);
		}
	}
	links_close(perf, n_perf, fds, n_fds);
	free(perf);
	free(fds);
}

void runtime_links__release_all(struct probe_session *ps, struct bpf_link **more,
				size_t n_more)
{
	size_t cap = (size_t)RT_MAX_LINKS * ps->n_probes + n_more + 1;
	struct bpf_link **perf = calloc(cap, sizeof(*perf));
	int *fds = calloc(cap, sizeof(*fds));
	size_t n_perf = 0, n_fds = 0;

	if (!perf || !fds) {
		free(perf);
		free(fds);
		for (uint32_t i = 0; i < ps->n_probes; i++)
			probe_session__detach_runtime(ps, i);
		bpf_links__destroy_all(more, n_more);
		return;
	}
	for (uint32_t i = 0; i < ps->n_probes; i++)
		if (ps->probes[i].used)
			probe_release(ps, i, perf, &n_perf, fds, &n_fds);
	for (size_t i = 0; i < n_more; i++)
		if (more[i])
			perf[n_perf++] = more[i];
	/* One grace period for all of them, not one each. */
	links_close(perf, n_perf, fds, n_fds);
	for (size_t i = 0; i < n_more; i++)
		more[i] = NULL;
	free(perf);
	free(fds);
}

size_t probe_session__runtime_probes(const struct probe_session *ps)
{
	size_t n = 0;

	for (uint32_t i = 0; i < ps->n_probes; i++)
		n += ps->probes[i].used;
	return n;
}
