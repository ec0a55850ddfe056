/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Finding and probing what traced processes run on: runtime libraries
 * recognised by their exports as the probe packs' signatures say
 * (discover/runtime_kind.h; attached once per library file, for every
 * process that maps it), their PJRT_Api tables (from GetPjrtApi's return or
 * a validated scan), OnReady callbacks learned at run time, and the device
 * nodes and eventfds processes already hold.
 *
 * Without a probe session it only plans: `acceltrace probes` shows what
 * would be attached and why, attaching nothing.
 */
#ifndef ACCELTRACE_RUNTIME_ATTACH_H
#define ACCELTRACE_RUNTIME_ATTACH_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "discover/probe_packs.h"
#include "discover/probe_placement.h"
#include "discover/targets.h"

struct probe_session;
struct runtime_attach;

struct runtime_attach_opts {
	size_t sz;
	/* Library files to probe before any process maps them (--library). */
	const char *const *libraries;
	size_t n_libraries;
};
#define runtime_attach_opts__last_field n_libraries

/* A library file acceltrace knows, with what it attached there. */
struct attached_library {
	/* Its name, for people: as the first process that mapped it
	 * knows it (through /proc/PID/root in a container). acceltrace
	 * opens it by the mapping, never by this name. */
	char path[PATH_MAX];
	uint64_t dev, ino;		/* its identity */
	char build_id[41];
	const struct rt_pack *pack;
	/* How it was recognised: "exports GetPjrtApi" (runtime_kind.h). */
	char recognised_by[160];
	/* PJRT: the table once found, and why not when it was refused. */
	bool has_table;
	uint64_t table_addr;		/* in the process it was found in */
	int table_pid;
	int pjrt_major, pjrt_minor;
	bool table_scanned;		/* found by scan (not GetPjrtApi's return) */
	char table_note[1024];		/* acceptance notes, or the refusal */
	bool table_refused;
	bool slots_attached;
	unsigned int n_probes;		/* probes attached (or planned) here */
	unsigned int users;		/* traced processes mapping it */
	bool pinned;			/* named with --library: kept */
};

/* One attached (or planned) probe. */
struct attached_probe {
	int probe_id;			/* -1 in plan mode or when attach failed */
	const struct rt_pack_entry *entry;
	const struct attached_library *lib;
	char target[96];		/* "symbol GetPjrtApi", "slot 55", "callback" */
	uint64_t file_offset;		/* of the function */
	uint64_t attach_offset;		/* where the uprobe is */
	/* The file it is attached in ("/proc/self/fd/N", held open): the
	 * library's, or for a PJRT slot or a callback, whichever file holds
	 * the function. */
	char attach_path[64];
	struct probe_placement placement;
	int error;			/* attach error, -errno; 0 when fine */
};

/*
 * Where a process's CUDA runtime layer is. Frameworks launch through it,
 * and it reaches the driver through a private table, so without it a
 * CUDA process's launches go unseen (docs/runtime-probes.md).
 */
enum cuda_runtime_layer {
	CUDA_RT_NONE,		/* no CUDA in the process */
	CUDA_RT_SHARED,		/* libcudart itself */
	CUDA_RT_STATIC,		/* exported by another library that links it in */
	CUDA_RT_NOT_FOUND,	/* a CUDA driver, and nothing exports the runtime */
};

/* @r's CUDA runtime layer, and the library that exports it (or NULL). */
enum cuda_runtime_layer process_report__cuda_runtime(const struct process_report *r,
						     const struct attached_library **lib);
const char *cuda_runtime_layer_name(enum cuda_runtime_layer layer);

struct runtime_attach *runtime_attach__new(struct probe_session *ps,
					   const struct runtime_attach_opts *opts);
void runtime_attach__free(struct runtime_attach *ra);

/*
 * Examines a process: probes its runtime libraries (and those its
 * environment names, for late dlopen), finds their PJRT tables, and tells
 * the BPF side about its device-node fds and eventfds. @report may be NULL.
 * Returns the number of runtime libraries it maps, or -errno (ESRCH: gone).
 */
int runtime_attach__add_process(struct runtime_attach *ra, pid_t pid,
				struct process_report *report);
/*
 * Detail on (the default) attaches every probe; off detaches the detail
 * ones (rt_event_kind_is_detail: transfers, completions, callbacks, feeds,
 * kernel launches), so that a process between sampled slices pays no
 * uprobe trap for them, and keeps probes found meanwhile parked. On again
 * attaches the parked probes of libraries and callbacks still in use.
 * Returns how many probes changed.
 */
size_t runtime_attach__set_detail(struct runtime_attach *ra, bool on);

/* A file mapping made executable, as the kernel saw it (struct ev_mapped). */
struct runtime_mapping {
	uint64_t start, end;		/* end 0: unknown (all fields are) */
	uint64_t pgoff;			/* file offset, in pages */
	uint64_t dev, ino;		/* the file's identity */
};

/*
 * @pid mapped a file executable (a library's text, at the mmap or
 * mprotect exit): a runtime library @pid's probes lack is probed now, as
 * runtime_attach__add_process() would at the next rescan; a file known
 * already (recognised once per identity, runtime or not) costs a lookup.
 * Returns 1 when the process was examined, 0 when nothing was new, or
 * -errno (ESRCH: gone).
 */
int runtime_attach__on_mapped(struct runtime_attach *ra, pid_t pid,
			      const struct runtime_mapping *m);
/* The process exited: libraries nobody traced maps any more are detached. */
void runtime_attach__remove_process(struct runtime_attach *ra, pid_t pid);

/* GetPjrtApi returned @table in @pid: validate it, probe its slots. */
int runtime_attach__on_pjrt_api(struct runtime_attach *ra, pid_t pid,
				uint64_t table);
/* OnReady registered @callback in @pid: probe it (once per function). */
int runtime_attach__on_callback(struct runtime_attach *ra, pid_t pid,
				uint64_t callback);
/* True once the callback at @callback in @pid is probed. */
bool runtime_attach__callback_ready(struct runtime_attach *ra, pid_t pid,
				    uint64_t callback);
/*
 * The kind of device @pid's runtimes drive, from the packs of the runtime
 * libraries it maps (a CUDA driver or runtime: GPU; the TPU C API: TPU);
 * RT_PLATFORM_UNKNOWN when none says. @vendor: XProf's device_vendor, or
 * NULL.
 */
enum rt_platform runtime_attach__platform(const struct runtime_attach *ra,
					 pid_t pid, const char **vendor);
/* Work still to do that could lose events (a table not found yet...). */
bool runtime_attach__settled(const struct runtime_attach *ra);

const struct attached_probe *runtime_attach__probe(const struct runtime_attach *ra,
						   int probe_id);
size_t runtime_attach__probe_count(const struct runtime_attach *ra);
const struct attached_probe *runtime_attach__probe_at(const struct runtime_attach *ra,
						      size_t i);
size_t runtime_attach__library_count(const struct runtime_attach *ra);
const struct attached_library *runtime_attach__library(const struct runtime_attach *ra,
						       size_t i);

/* PJRT tables refused so far, in every process (each said in the log at
 * the 1st, 2nd, 4th, ... refusal in its process). */
uint64_t runtime_attach__refusals(const struct runtime_attach *ra);

#endif /* ACCELTRACE_RUNTIME_ATTACH_H */
