// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * acceltrace doctor: what this kernel offers, found by trying, and which
 * mechanism each kind of probe will use. Exit 0 when acceltrace can run here.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>

#define LOG_CONTEXT "doctor"
#include "lib/log.h"
#include "cli/cli.h"
#include "probe/kernel_features.h"
#include "lib/json_writer.h"

void usage_doctor(FILE *out)
{
	fprintf(out,
		"Usage: acceltrace doctor [options]\n"
		"\n"
		"Tries every kernel feature acceltrace uses (BTF, ring buffer, tracefs,\n"
		"syscall/raw/BTF tracepoints, uprobes, fentry, kprobes, io_uring,\n"
		"capabilities, BPF memory accounting) by loading, attaching and firing\n"
		"it, mounts tracefs if it is missing and may be mounted, and says which\n"
		"mechanism each kind of probe will use on this kernel.\n"
		"\n"
		"Exit status: 0 when acceltrace can run here, 1 when something it needs\n"
		"is missing (named on stderr), 2 on a usage error.\n"
		"\n"
		"Options:\n"
		CLI_COMMON_HELP
		"\n"
		"Examples:\n"
		"  acceltrace doctor\n"
		"  acceltrace doctor -j\n");
}

/* Features in the order the plain report lists them. */
static const enum feature_id kernel_features[] = {
	FEAT_BTF, FEAT_RINGBUF, FEAT_TRACEFS, FEAT_SYSCALL_TP, FEAT_RAW_TP,
	FEAT_TP_BTF, FEAT_UPROBE, FEAT_UPROBE_MULTI, FEAT_FENTRY, FEAT_KPROBE,
	FEAT_IO_URING, FEAT_MEMCG_ACCOUNTING,
};
static const enum feature_id privilege_features[] = {
	FEAT_CAP_BPF, FEAT_CAP_PERFMON, FEAT_CAP_SYS_ADMIN,
};

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

static const char *yes_no(const struct feature_result *r)
{
	if (!r->probed)
		return "?";
	return r->available ? "yes" : "no";
}

/* ENOTSUPP is the kernel's own, not in errno.h. */
#define KERNEL_ENOTSUPP 524

/* Why the kernel refuses a mechanism with this errno, as far as it can be told. */
static const char *refusal_reason(const struct features *f, enum feature_id id)
{
	const struct feature_result *r = &f->r[id];
	bool caps = (f->r[FEAT_CAP_BPF].available && f->r[FEAT_CAP_PERFMON].available) ||
		    f->r[FEAT_CAP_SYS_ADMIN].available;

	if (r->kernel_said[0])
		return "the verifier's last line above says why";
	switch (r->err) {
	case EPERM:
	case EACCES:
		if (!caps)
			return "acceltrace lacks CAP_BPF and CAP_PERFMON: run it as root";
		return "acceltrace holds CAP_BPF and CAP_PERFMON, so the refusal comes "
		       "from a policy above BPF's own checks: kernel lockdown, a "
		       "security module (SELinux, AppArmor, BPF LSM) or the sandbox "
		       "or hypervisor this kernel runs under";
	case EOPNOTSUPP:
	case KERNEL_ENOTSUPP:
		return "this kernel cannot attach BPF trampolines here (no BPF JIT, "
		       "or no ftrace direct calls on this architecture)";
	case ENOENT:
		if (id == FEAT_KPROBE)
			return "this kernel has no kprobes (built without CONFIG_KPROBES)";
		return "the kernel does not have the function the probe names";
	case EINVAL:
		return "the kernel rejected the program without saying more";
	default:
		return NULL;
	}
}

/* text on lines of at most 78 columns, each after indent spaces. */
static void print_wrapped(int indent, const char *text)
{
	const int width = 78 - indent;

	while (*text) {
		int n = strlen(text), cut = n;

		if (n > width) {
			for (cut = width; cut > 0 && text[cut] != ' '; cut--)
				;
			if (!cut)
				cut = width;
		}
		printf("%*s%.*s\n", indent, "", cut, text);
		text += cut;
		while (*text == ' ')
			text++;
	}
}

/*
 * Under the table: for each refused mechanism that probes could use, why
 * (errno and the kernel's words) and what it means for a capture.
 */
static void print_refusals(const struct features *f)
{
	static const enum feature_id optional[] = { FEAT_FENTRY, FEAT_KPROBE };
	struct probe_choice c = features__choose(f, PROBE_DRIVER_FUNCTIONS);
	struct probe_choice drv = features__choose(f, PROBE_DRIVER);
	bool header = false;
	char text[768];

	for (size_t i = 0; i < ARRAY_LEN(optional); i++) {
		const struct feature_result *r = &f->r[optional[i]];
		const char *why = refusal_reason(f, optional[i]);

		if (!r->probed || r->available)
			continue;
		if (!header)
			printf("\nWhat the refusals mean\n");
		header = true;
		snprintf(text, sizeof(text), "%s: %s.", feature_name(optional[i]), r->detail);
		print_wrapped(2, text);
		if (why) {
			snprintf(text, sizeof(text), "Why: %s.", why);
			print_wrapped(4, text);
		}
	}
	if (!header)
		return;
	if (c.mech == MECH_FENTRY)
		snprintf(text, sizeof(text),
			 "For you: driver functions are probed with fentry; nothing is lost.");
	else if (c.mech != MECH_NONE)
		snprintf(text, sizeof(text),
			 "For you: driver functions are probed with %s instead of fentry: "
			 "the same events, at a somewhat higher cost per hit.",
			 probe_mechanism_name(c.mech));
	else
		snprintf(text, sizeof(text),
			 "For you: driver functions are not probed. The driver interface "
			 "(device-node opens, ioctls, eventfds) is still seen, through %s, "
			 "and runtimes through uprobes. Lost: finer timing inside driver "
			 "code, where a probe pack names a driver function; no built-in "
			 "pack does, so captures lose nothing today.",
			 drv.mech != MECH_NONE ? probe_mechanism_name(drv.mech) : "nothing");
	print_wrapped(2, text);
}

static void print_plain(const struct features *f, const struct utsname *u,
			bool can_run, const char *missing)
{
	printf("acceltrace doctor: Linux %s (%s)\n\nKernel features\n",
	       u->release, u->machine);
	for (size_t i = 0; i < ARRAY_LEN(kernel_features); i++) {
		const struct feature_result *r = &f->r[kernel_features[i]];

		printf("  %-24s %-4s %s\n", feature_name(kernel_features[i]),
		       yes_no(r), r->detail);
	}
	printf("\nPrivileges\n");
	for (size_t i = 0; i < ARRAY_LEN(privilege_features); i++) {
		const struct feature_result *r = &f->r[privilege_features[i]];

		printf("  %-24s %-4s %s\n", feature_name(privilege_features[i]),
		       yes_no(r), r->detail);
	}
	printf("\nProbe mechanisms on this kernel\n");
	for (enum probe_class pc = 0; pc < PROBE__COUNT; pc++) {
		struct probe_choice c = features__choose(f, pc);

		const char *mech = probe_mechanism_name(c.mech);

		if (c.mech == MECH_NONE && probe_class_optional(pc))
			mech = "none (optional)";
		printf("  %-24s %-20s %s\n", probe_class_name(pc), mech, c.reason);
	}
	{
		char why[256];
		enum runtime_attach_mode m = features__runtime_attach(f, why, sizeof(why));

		printf("\nRuntime probes are attached as\n");
		printf("  %s\n", runtime_attach_mode_name(m));
		print_wrapped(4, why);
	}
	print_refusals(f);
	if (can_run)
		printf("\nacceltrace can run here.\n");
	else
		printf("\nacceltrace cannot run here: missing %s.\n", missing);
}

static void print_json(const struct features *f, const struct utsname *u,
		       bool can_run, const char *missing)
{
	struct json_writer *jw = jw_new(stdout, true);

	if (!jw)
		return;
	jw_start_object(jw);
	jw_name(jw, "kernel");
	jw_start_object(jw);
	jw_string_field(jw, "release", u->release);
	jw_string_field(jw, "machine", u->machine);
	jw_end_object(jw);

	jw_name(jw, "features");
	jw_start_object(jw);
	for (enum feature_id id = 0; id < FEAT__COUNT; id++) {
		jw_name(jw, feature_key(id));
		jw_start_object(jw);
		jw_string_field(jw, "name", feature_name(id));
		jw_bool_field(jw, "available", f->r[id].available);
		jw_bool_field(jw, "probed", f->r[id].probed);
		jw_string_field(jw, "detail", f->r[id].detail);
		if (f->r[id].err) {
			const char *name = strerrorname_np(f->r[id].err);

			jw_string_field(jw, "errno", name ? name : "?");
			jw_string_field(jw, "kernel_said", f->r[id].kernel_said);
			jw_string_field(jw, "why", refusal_reason(f, id));
		}
		jw_end_object(jw);
	}
	jw_end_object(jw);
	jw_bool_field(jw, "tracefs_mounted_by_acceltrace", f->tracefs_mounted_by_us);

	jw_name(jw, "probes");
	jw_start_object(jw);
	for (enum probe_class pc = 0; pc < PROBE__COUNT; pc++) {
		struct probe_choice c = features__choose(f, pc);

		jw_name(jw, probe_class_key(pc));
		jw_start_object(jw);
		jw_string_field(jw, "name", probe_class_name(pc));
		jw_string_field(jw, "mechanism", probe_mechanism_name(c.mech));
		jw_string_field(jw, "reason", c.reason);
		jw_bool_field(jw, "optional", probe_class_optional(pc));
		jw_end_object(jw);
	}
	jw_end_object(jw);
	{
		char why[256];
		enum runtime_attach_mode m = features__runtime_attach(f, why, sizeof(why));

		jw_name(jw, "runtime_attach");
		jw_start_object(jw);
		jw_string_field(jw, "mode", runtime_attach_mode_name(m));
		jw_string_field(jw, "reason", why);
		jw_end_object(jw);
	}
	jw_bool_field(jw, "can_run", can_run);
	jw_string_field(jw, "missing", missing);
	jw_end_object(jw);
	jw_free(jw);
	putchar('\n');
}

int cmd_doctor(int argc, char **argv)
{
	static const struct option longopts[] = {
		CLI_COMMON_LONGOPTS,
		{}
	};
	struct features f;
	struct utsname u;
	char missing[512];
	bool can_run;
	int opt;

	while ((opt = getopt_long(argc, argv, ":" CLI_COMMON_SHORTOPTS,
				  longopts, NULL)) != -1) {
		int rc = cli_common_or_exit("doctor", opt, argv, usage_doctor);

		if (rc >= 0)
			return rc;
	}
	if (optind < argc)
		return cli_bad_argument("doctor", argv[optind]);

	if (uname(&u))
		memset(&u, 0, sizeof(u));
	features__probe(&f);
	can_run = features__can_run(&f, missing, sizeof(missing));

	if (cli_json())
		print_json(&f, &u, can_run, missing);
	else
		print_plain(&f, &u, can_run, missing);
	if (fflush(stdout) || ferror(stdout)) {
		log_err("writing the report failed");
		return 1;
	}
	if (!can_run) {
		log_err("acceltrace cannot run here: missing %s", missing);
		return 1;
	}
	return 0;
}
