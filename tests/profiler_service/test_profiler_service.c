// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The ProfilerService's requests without a network: durations and start
 * times, session and host names (traversal, slashes, NUL, non-UTF-8, too
 * long), repository roots (outside the logdir, "..", relative, a prefix
 * that only looks like the logdir's, the allowlist) and their confined
 * open (a symbolic link planted under the logdir refused, nothing written
 * where it points), an old client's `string backend_name = 11`, the
 * defaults, the other methods, and the responses read back by protobuf-c.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "test.h"
#include "output/xprof_logdir.h"
#include "profiler_service/profiler_service.h"
#include "profiler_service.pb-c.h"

#define NS_PER_SEC 1000000000ull
#define NOW (1700000000ull * NS_PER_SEC)

static char base[256], logdir[300], outside[300];
static struct profiler_service *ps;

/* A ProfileRequest as XProf's client sends it, packed; @edit changes it. */
static size_t pack_request(uint8_t *buf, void (*edit)(Tensorflow__ProfileRequest *r,
						     Tensorflow__ProfileOptions *o))
{
	static char *tools[] = { "trace_viewer", "op_profile", "xplane.pb" };
	static char root[400];
	Tensorflow__ProfileRequest r = TENSORFLOW__PROFILE_REQUEST__INIT;
	Tensorflow__ProfileOptions o = TENSORFLOW__PROFILE_OPTIONS__INIT;

	snprintf(root, sizeof(root), "%s/plugins/profile", logdir);
	r.duration_ms = 2000;
	r.max_events = 1000000;
	r.n_tools = 3;
	r.tools = tools;
	o.version = 1;
	o.host_tracer_level = 2;
	o.device_tracer_level = 1;
	r.opts = &o;
	r.repository_root = root;
	r.session_id = "run_1";
	r.host_name = "worker-0";
	if (edit)
		edit(&r, &o);
	return tensorflow__profile_request__pack(&r, buf);
}

static enum grpc_status parse(void (*edit)(Tensorflow__ProfileRequest *,
					   Tensorflow__ProfileOptions *),
			      struct profiler_request *rq, char *why, size_t len)
{
	uint8_t buf[8192];
	size_t n = pack_request(buf, edit);

	return profiler_service__parse(ps, PROFILER_PATH_PROFILE, buf, n, NOW, rq, why, len);
}

/* ---------------------------------------------------------------- edits */

static void dur_zero(Tensorflow__ProfileRequest *r, Tensorflow__ProfileOptions *o)
{
	r->duration_ms = 0;
	o->duration_ms = 0;
}

static void dur_opts(Tensorflow__ProfileRequest *r, Tensorflow__ProfileOptions *o)
{
	r->duration_ms = 0;
	o->duration_ms = 750;
}

static void dur_opts_v0(Tensorflow__ProfileRequest *r, Tensorflow__ProfileOptions *o)
{
	dur_opts(r, o);
	o->version = 0;
}

static void dur_absurd(Tensorflow__ProfileRequest *r, Tensorflow__ProfileOptions *o)
{
	(void)o;
	r->duration_ms = 1ull << 60;
}

static void start_past(Tensorflow__ProfileRequest *r, Tensorflow__ProfileOptions *o)
{
	(void)r;
	o->start_timestamp_ns = NOW - 5 * NS_PER_SEC;
}

static void start_soon(Tensorflow__ProfileRequest *r, Tensorflow__ProfileOptions *o)
{
	(void)r;
	o->start_timestamp_ns = NOW + 3 * NS_PER_SEC;
}

static void start_far(Tensorflow__ProfileRequest *r, Tensorflow__ProfileOptions *o)
{
	(void)r;
	o->start_timestamp_ns = NOW + 3600 * NS_PER_SEC;
}

static const char *session_value;
static void session_is(Tensorflow__ProfileRequest *r, Tensorflow__ProfileOptions *o)
{
	(void)o;
	r->session_id = (char *)session_value;
}

static void session_from_opts(Tensorflow__ProfileRequest *r, Tensorflow__ProfileOptions *o)
{
	r->session_id = "";
	o->session_id = "from_opts";
}

static void session_none(Tensorflow__ProfileRequest *r, Tensorflow__ProfileOptions *o)
{
	(void)o;
	r->session_id = "";
}

static const char *host_value;
static void host_is(Tensorflow__ProfileRequest *r, Tensorflow__ProfileOptions *o)
{
	(void)o;
	r->host_name = (char *)host_value;
}

static void host_from_opts(Tensorflow__ProfileRequest *r, Tensorflow__ProfileOptions *o)
{
	r->host_name = "";
	o->override_hostname = "opts-host";
}

static Tensorflow__ProfileOptions__AdvancedConfigValue adv_val =
	TENSORFLOW__PROFILE_OPTIONS__ADVANCED_CONFIG_VALUE__INIT;
static Tensorflow__ProfileOptions__AdvancedConfigurationEntry adv =
	TENSORFLOW__PROFILE_OPTIONS__ADVANCED_CONFIGURATION_ENTRY__INIT;
static Tensorflow__ProfileOptions__AdvancedConfigurationEntry *advs[1] = { &adv };

static void host_from_advanced(Tensorflow__ProfileRequest *r, Tensorflow__ProfileOptions *o)
{
	r->host_name = "";
	adv.key = "override_hostname";
	adv_val.value_case = TENSORFLOW__PROFILE_OPTIONS__ADVANCED_CONFIG_VALUE__VALUE_STRING_VALUE;
	adv_val.string_value = "adv-host";
	adv.value = &adv_val;
	o->n_advanced_configuration = 1;
	o->advanced_configuration = advs;
}

static void host_none(Tensorflow__ProfileRequest *r, Tensorflow__ProfileOptions *o)
{
	(void)o;
	r->host_name = "";
}

static const char *root_value;
static void root_is(Tensorflow__ProfileRequest *r, Tensorflow__ProfileOptions *o)
{
	(void)o;
	r->repository_root = (char *)root_value;
}

static void python_on(Tensorflow__ProfileRequest *r, Tensorflow__ProfileOptions *o)
{
	(void)r;
	o->python_tracer_level = 1;
	o->host_tracer_level = 1;
}

/* ---------------------------------------------------------------- tests */

static void test_durations(void)
{
	struct profiler_request rq;
	char why[PROFILER_MAX_STATUS];

	ASSERT_EQ(parse(NULL, &rq, why, sizeof(why)), GRPC_STATUS_OK, "XProf's request");
	ASSERT_EQ(rq.method, PROFILER_PROFILE, "a Profile");
	ASSERT_EQ(rq.profile.duration_ns, 2000000000ull, "duration_ms of the request");
	ASSERT_TRUE(rq.profile.full_detail, "host_tracer_level 2: full detail");
	ASSERT_EQ(rq.profile.start_realtime_ns, 0, "now");
	ASSERT_EQ(parse(dur_zero, &rq, why, sizeof(why)), GRPC_STATUS_INVALID_ARGUMENT,
		  "no duration anywhere");
	ASSERT_STRCONTAINS(why, "duration_ms 0", "said");
	ASSERT_EQ(parse(dur_opts, &rq, why, sizeof(why)), GRPC_STATUS_OK, "the options'");
	ASSERT_EQ(rq.profile.duration_ns, 750000000ull, "opts.duration_ms");
	ASSERT_EQ(parse(dur_opts_v0, &rq, why, sizeof(why)), GRPC_STATUS_INVALID_ARGUMENT,
		  "version 0: the options are ignored");
	ASSERT_EQ(parse(dur_absurd, &rq, why, sizeof(why)), GRPC_STATUS_INVALID_ARGUMENT,
		  "absurd duration");
	ASSERT_STRCONTAINS(why, "max-trigger-duration (600000 ms)", "the limit named");
	ASSERT_EQ(parse(start_past, &rq, why, sizeof(why)), GRPC_STATUS_OK, "a past start");
	ASSERT_TRUE(rq.profile.late, "late");
	ASSERT_EQ(rq.profile.start_realtime_ns, 0, "starts now");
	ASSERT_EQ(parse(start_soon, &rq, why, sizeof(why)), GRPC_STATUS_OK, "a start ahead");
	ASSERT_EQ(rq.profile.start_realtime_ns, NOW + 3 * NS_PER_SEC, "a delay");
	ASSERT_EQ(parse(start_far, &rq, why, sizeof(why)), GRPC_STATUS_INVALID_ARGUMENT,
		  "a start an hour ahead");
}

static void test_sessions(void)
{
	static const char *bad[] = { "../x", "..", ".", "a/b", "/abs", "sp ace", "\xff\xfe",
				     "caf\xc3\xa9" };
	struct profiler_request rq;
	char why[PROFILER_MAX_STATUS], longname[400];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		session_value = bad[i];
		ASSERT_EQ(parse(session_is, &rq, why, sizeof(why)), GRPC_STATUS_INVALID_ARGUMENT,
			  bad[i]);
	}
	memset(longname, 'a', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	session_value = longname;
	ASSERT_EQ(parse(session_is, &rq, why, sizeof(why)), GRPC_STATUS_INVALID_ARGUMENT,
		  "a 399-byte session");
	session_value = "run_1.b-2";
	ASSERT_EQ(parse(session_is, &rq, why, sizeof(why)), GRPC_STATUS_OK, "a good one");
	ASSERT_STREQ(rq.profile.session, "run_1.b-2", "kept");
	ASSERT_EQ(parse(session_from_opts, &rq, why, sizeof(why)), GRPC_STATUS_OK, "opts'");
	ASSERT_STREQ(rq.profile.session, "from_opts", "opts.session_id");
	ASSERT_EQ(parse(session_none, &rq, why, sizeof(why)), GRPC_STATUS_OK, "none");
	ASSERT_EQ(strlen(rq.profile.session), strlen("2023_11_14_22_13_20"),
		  "a timestamp as upstream's client names it");
	ASSERT_EQ(rq.profile.session[4], '_', "YYYY_");
}

static void test_hosts(void)
{
	static const char *bad[] = { "h/../x", "..", "a b", "h\n", "\xc3\x28" };
	struct profiler_request rq;
	char why[PROFILER_MAX_STATUS];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		host_value = bad[i];
		ASSERT_EQ(parse(host_is, &rq, why, sizeof(why)), GRPC_STATUS_INVALID_ARGUMENT,
			  bad[i]);
	}
	host_value = "10.0.0.7:8466";
	ASSERT_EQ(parse(host_is, &rq, why, sizeof(why)), GRPC_STATUS_OK, "host:port");
	ASSERT_STREQ(rq.profile.host, "10.0.0.7:8466", "kept (the file name maps ':')");
	ASSERT_EQ(parse(NULL, &rq, why, sizeof(why)), GRPC_STATUS_OK, "request's");
	ASSERT_STREQ(rq.profile.host, "worker-0", "host_name");
	ASSERT_EQ(parse(host_from_opts, &rq, why, sizeof(why)), GRPC_STATUS_OK, "opts'");
	ASSERT_STREQ(rq.profile.host, "opts-host", "override_hostname");
	ASSERT_EQ(parse(host_from_advanced, &rq, why, sizeof(why)), GRPC_STATUS_OK, "advanced");
	ASSERT_STREQ(rq.profile.host, "adv-host", "advanced_configuration's");
	ASSERT_EQ(parse(host_none, &rq, why, sizeof(why)), GRPC_STATUS_OK, "none");
	ASSERT_STREQ(rq.profile.host, "testhost", "the daemon's");
}

static void test_roots(void)
{
	struct profiler_request rq;
	char why[PROFILER_MAX_STATUS], r[700];
	struct {
		const char *fmt;
		enum grpc_status want;
	} cases[] = {
		{ "%s/plugins/profile", GRPC_STATUS_OK },
		{ "%s//plugins/./profile", GRPC_STATUS_INVALID_ARGUMENT },
		{ "%s//plugins///profile/", GRPC_STATUS_OK },
		{ "%s/elsewhere/deep", GRPC_STATUS_OK },
		{ "%s", GRPC_STATUS_PERMISSION_DENIED },
		{ "%s/../x", GRPC_STATUS_INVALID_ARGUMENT },
		{ "%s/plugins/profile/..", GRPC_STATUS_INVALID_ARGUMENT },
		{ "%s-evil/plugins/profile", GRPC_STATUS_PERMISSION_DENIED },
		{ "/etc%.0s", GRPC_STATUS_PERMISSION_DENIED },
		{ "relative/plugins%.0s", GRPC_STATUS_INVALID_ARGUMENT },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		snprintf(r, sizeof(r), cases[i].fmt, logdir);
		root_value = r;
		ASSERT_EQ(parse(root_is, &rq, why, sizeof(why)), cases[i].want, r);
	}
	/* A component no file system takes: the client's mistake, said
	 * briefly, not a server error echoing it whole. */
	snprintf(r, sizeof(r), "%s/%0300d", logdir, 7);
	root_value = r;
	ASSERT_EQ(parse(root_is, &rq, why, sizeof(why)), GRPC_STATUS_INVALID_ARGUMENT,
		  "a 300-byte component");
	ASSERT_STRCONTAINS(why, "is 300 bytes: at most 255", "said why");
	ASSERT_LE(strlen(why), 200, "and briefly");
	snprintf(r, sizeof(r), "%s/allowed/x", base);
	root_value = r;
	ASSERT_EQ(parse(root_is, &rq, why, sizeof(why)), GRPC_STATUS_OK, "under profiler-roots");
	root_value = "";
	ASSERT_EQ(parse(root_is, &rq, why, sizeof(why)), GRPC_STATUS_OK, "none: the default");
	snprintf(r, sizeof(r), "%s/plugins/profile", logdir);
	ASSERT_STREQ(rq.profile.root, r, "<logdir>/plugins/profile");
}

static int count_entries(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
	closedir(d);
	return n;
}

static void test_open(void)
{
	struct profiler_request rq;
	struct xprof_profile *xp;
	enum grpc_status code;
	char why[PROFILER_MAX_STATUS], r[700], path[900];
	struct stat st;
	int fd;

	/* A good one: the chain is created, the file written beneath it. */
	ASSERT_EQ(parse(NULL, &rq, why, sizeof(why)), GRPC_STATUS_OK, "parse");
	fd = profiler_service__open_root(ps, &rq.profile, &code, why, sizeof(why));
	if (!ASSERT_GE(fd, 0, "open the root"))
		return;
	xp = xprof_profile__openat(fd, rq.profile.root, rq.profile.session, rq.profile.host);
	if (ASSERT_OK_PTR(xp, "a capture file")) {
		fputs("x", xprof_profile__stream(xp));
		ASSERT_OK(xprof_profile__commit(xp, 1), "commit");
		xprof_profile__free(xp);
	}
	close(fd);
	snprintf(path, sizeof(path), "%s/plugins/profile/run_1/worker-0.xplane.pb", logdir);
	ASSERT_OK(stat(path, &st), "written at root/session/host.xplane.pb");

	/* A symbolic link planted under the logdir, pointing outside. */
	snprintf(path, sizeof(path), "%s/planted", logdir);
	ASSERT_OK(symlink(outside, path), "plant");
	snprintf(r, sizeof(r), "%s/planted/plugins/profile", logdir);
	root_value = r;
	ASSERT_EQ(parse(root_is, &rq, why, sizeof(why)), GRPC_STATUS_OK,
		  "the string is under the logdir");
	fd = profiler_service__open_root(ps, &rq.profile, &code, why, sizeof(why));
	ASSERT_LE(fd, -1, "refused at the open");
	ASSERT_EQ(code, GRPC_STATUS_PERMISSION_DENIED, "PERMISSION_DENIED");
	ASSERT_STRCONTAINS(why, "symbolic link", "said why");
	ASSERT_EQ(count_entries(outside), 0, "nothing created where it points");

	/* One planted as the session directory. */
	snprintf(path, sizeof(path), "%s/plugins/profile/evil", logdir);
	ASSERT_OK(symlink(outside, path), "plant a session");
	session_value = "evil";
	ASSERT_EQ(parse(session_is, &rq, why, sizeof(why)), GRPC_STATUS_OK, "parse");
	fd = profiler_service__open_root(ps, &rq.profile, &code, why, sizeof(why));
	ASSERT_LE(fd, -1, "a session that is a link refused");
	ASSERT_EQ(code, GRPC_STATUS_PERMISSION_DENIED, "PERMISSION_DENIED");
	ASSERT_EQ(count_entries(outside), 0, "nothing written where it points");

	/* Directories a client would create: a session's characters; one
	 * that exists is the operator's, whatever its name. */
	{
		static const char *const bad[] = {
			"run\nacceltrace: daemon: capture written: /etc/shadow", "\x01ctl",
			"caf\xc3\xa9",
		};

		for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
			snprintf(r, sizeof(r), "%s/%s/plugins/profile", logdir, bad[i]);
			root_value = r;
			ASSERT_EQ(parse(root_is, &rq, why, sizeof(why)), GRPC_STATUS_OK, "parse");
			fd = profiler_service__open_root(ps, &rq.profile, &code, why, sizeof(why));
			ASSERT_LE(fd, -1, bad[i]);
			ASSERT_EQ(code, GRPC_STATUS_INVALID_ARGUMENT, "INVALID_ARGUMENT");
			ASSERT_STRCONTAINS(why, "would create", "said why");
			snprintf(path, sizeof(path), "%s/%s", logdir, bad[i]);
			ASSERT_NEQ(stat(path, &st), 0, "and not created");
		}
		snprintf(path, sizeof(path), "%s/lr=0.1,bs=32", logdir);
		ASSERT_OK(mkdir(path, 0750), "a run directory the operator made");
		snprintf(r, sizeof(r), "%s/lr=0.1,bs=32/plugins/profile", logdir);
		root_value = r;
		ASSERT_EQ(parse(root_is, &rq, why, sizeof(why)), GRPC_STATUS_OK, "parse");
		fd = profiler_service__open_root(ps, &rq.profile, &code, why, sizeof(why));
		ASSERT_GE(fd, 0, "its name is no client's: written beneath it");
		if (fd >= 0)
			close(fd);
	}

	/* A file where a directory goes. */
	snprintf(path, sizeof(path), "%s/afile", logdir);
	close(open(path, O_CREAT | O_WRONLY, 0600));
	snprintf(r, sizeof(r), "%s/afile/x", logdir);
	root_value = r;
	ASSERT_EQ(parse(root_is, &rq, why, sizeof(why)), GRPC_STATUS_OK, "parse");
	fd = profiler_service__open_root(ps, &rq.profile, &code, why, sizeof(why));
	ASSERT_LE(fd, -1, "not a directory");
	ASSERT_EQ(code, GRPC_STATUS_FAILED_PRECONDITION, "FAILED_PRECONDITION");
}

/* The older openxla ProfileOptions: `string backend_name = 11`. */
static void test_old_client(void)
{
	Tensorflow__ProfileOptions o = TENSORFLOW__PROFILE_OPTIONS__INIT;
	uint8_t opts[256], msg[512];
	struct profiler_request rq;
	char why[PROFILER_MAX_STATUS];
	size_t n, m = 0;

	o.version = 1;
	o.host_tracer_level = 2;
	o.device_tracer_level = 1;
	n = tensorflow__profile_options__pack(&o, opts);
	/* "tpu": 0x74 is field 14's end-group, which no TraceOptions is. */
	memcpy(opts + n, "\x5a\x03tpu", 5);
	n += 5;
	msg[m++] = 0x08;		/* duration_ms */
	msg[m++] = 0xe8;
	msg[m++] = 0x07;		/* 1000 */
	msg[m++] = 0x22;		/* opts */
	msg[m++] = n;
	memcpy(msg + m, opts, n);
	m += n;
	memcpy(msg + m, "\x32\x03old", 5);	/* session_id */
	m += 5;
	ASSERT_EQ(tensorflow__profile_request__unpack(NULL, m, msg), NULL,
		  "protobuf-c alone refuses it");
	ASSERT_EQ(profiler_service__parse(ps, PROFILER_PATH_PROFILE, msg, m, NOW, &rq, why,
					  sizeof(why)), GRPC_STATUS_OK, "served");
	ASSERT_EQ(rq.profile.duration_ns, 1000000000ull, "its duration");
	ASSERT_STREQ(rq.profile.session, "old", "its session");
	ASSERT_STRCONTAINS(rq.profile.not_honoured, "backend_name", "said");

	/* A NUL inside a name: refused whole, not cut short. */
	m = 0;
	memcpy(msg, "\x08\x01\x32\x06ok\0/..", 10);
	m = 10;
	ASSERT_EQ(profiler_service__parse(ps, PROFILER_PATH_PROFILE, msg, m, NOW, &rq, why,
					  sizeof(why)), GRPC_STATUS_INVALID_ARGUMENT, "NUL");
	ASSERT_EQ(profiler_service__parse(ps, PROFILER_PATH_PROFILE, (const uint8_t *)"\xff\xff",
					  2, NOW, &rq, why, sizeof(why)),
		  GRPC_STATUS_INVALID_ARGUMENT, "undecodable");
}

static void test_not_honoured(void)
{
	struct profiler_request rq;
	char why[PROFILER_MAX_STATUS];

	ASSERT_EQ(parse(python_on, &rq, why, sizeof(why)), GRPC_STATUS_OK, "parse");
	ASSERT_STRCONTAINS(rq.profile.not_honoured, "python_tracer_level", "python");
	ASSERT_STRCONTAINS(rq.profile.not_honoured, "tools", "op_profile among the tools");
	ASSERT_STRCONTAINS(rq.profile.not_honoured, "max_events", "max_events");
	ASSERT_FALSE(rq.profile.full_detail, "host_tracer_level 1: sampled detail");
}

static void test_other_methods(void)
{
	Tensorflow__MonitorRequest mr = TENSORFLOW__MONITOR_REQUEST__INIT;
	Tensorflow__TerminateRequest tr = TENSORFLOW__TERMINATE_REQUEST__INIT;
	Tensorflow__ProfileResponse *pr;
	Tensorflow__MonitorResponse *mo;
	struct profiler_request rq;
	char why[PROFILER_MAX_STATUS];
	uint8_t buf[128], *out;
	size_t n;

	mr.duration_ms = 3600000;
	mr.monitoring_level = 2;
	mr.timestamp = 1;
	n = tensorflow__monitor_request__pack(&mr, buf);
	ASSERT_EQ(profiler_service__parse(ps, PROFILER_PATH_MONITOR, buf, n, NOW, &rq, why,
					  sizeof(why)), GRPC_STATUS_OK, "Monitor");
	ASSERT_EQ(rq.monitor_ns, PROFILER_MAX_MONITOR_MS * 1000000ull, "capped");
	ASSERT_EQ(rq.monitor_level, 2, "level");
	ASSERT_TRUE(rq.monitor_timestamp, "timestamp");
	tr.session_id = "run_1";
	n = tensorflow__terminate_request__pack(&tr, buf);
	ASSERT_EQ(profiler_service__parse(ps, PROFILER_PATH_TERMINATE, buf, n, NOW, &rq, why,
					  sizeof(why)), GRPC_STATUS_OK, "Terminate");
	ASSERT_STREQ(rq.session, "run_1", "its session");
	tr.session_id = "../x";
	n = tensorflow__terminate_request__pack(&tr, buf);
	ASSERT_EQ(profiler_service__parse(ps, PROFILER_PATH_TERMINATE, buf, n, NOW, &rq, why,
					  sizeof(why)), GRPC_STATUS_INVALID_ARGUMENT, "bad session");
	ASSERT_EQ(profiler_service__parse(ps, "/tensorflow.ProfilerService/GetSnapShot", buf, 0,
					  NOW, &rq, why, sizeof(why)),
		  GRPC_STATUS_UNIMPLEMENTED, "unknown method");

	ASSERT_OK(profiler_service__profile_response(true, &out, &n), "profile response");
	pr = tensorflow__profile_response__unpack(NULL, n, out);
	if (ASSERT_OK_PTR(pr, "decodes")) {
		ASSERT_TRUE(pr->empty_trace, "empty_trace");
		ASSERT_EQ(pr->n_tool_data, 0, "no tool_data");
		tensorflow__profile_response__free_unpacked(pr, NULL);
	}
	free(out);
	ASSERT_OK(profiler_service__monitor_response("step time 10 ms\n", &out, &n), "monitor");
	mo = tensorflow__monitor_response__unpack(NULL, n, out);
	if (ASSERT_OK_PTR(mo, "decodes")) {
		ASSERT_STREQ(mo->data, "step time 10 ms\n", "data");
		tensorflow__monitor_response__free_unpacked(mo, NULL);
	}
	free(out);
}

static void test_paths(void)
{
	char out[64];

	ASSERT_OK(profiler_path_normalise("//a///b/", out, sizeof(out)), "slashes");
	ASSERT_STREQ(out, "/a/b", "collapsed");
	ASSERT_OK(profiler_path_normalise("/", out, sizeof(out)), "root");
	ASSERT_STREQ(out, "/", "stays");
	ASSERT_EQ(profiler_path_normalise("/a/../b", out, sizeof(out)), -EINVAL, "..");
	ASSERT_EQ(profiler_path_normalise("/a/./b", out, sizeof(out)), -EINVAL, ".");
	ASSERT_EQ(profiler_path_normalise("a/b", out, sizeof(out)), -EINVAL, "relative");
	ASSERT_EQ(profiler_path_normalise("/...x/..y", out, sizeof(out)), 0, "dots in names");
	ASSERT_TRUE(xprof_valid_name("a.b_c-1", 16, false), "a name");
	ASSERT_FALSE(xprof_valid_name("a:b", 16, false), "':' only in hosts");
	ASSERT_TRUE(xprof_valid_name("a:b", 16, true), "host:port");
	ASSERT_FALSE(xprof_valid_name("0123456789abcdef", 16, false), "too long");
}

int main(void)
{
	struct profiler_service_config cfg = { .sz = sizeof(cfg), .hostname = "testhost",
					       .max_duration_ns = 600 * NS_PER_SEC };
	char roots[400];

	snprintf(base, sizeof(base), "/tmp/test_profiler_service.XXXXXX");
	if (!mkdtemp(base)) {
		perror("mkdtemp");
		return 1;
	}
	snprintf(logdir, sizeof(logdir), "%s/logs", base);
	snprintf(outside, sizeof(outside), "%s/outside", base);
	snprintf(roots, sizeof(roots), "%s/allowed", base);
	mkdir(logdir, 0750);
	mkdir(outside, 0750);
	mkdir(roots, 0750);
	cfg.logdir = logdir;
	cfg.roots = roots;
	ps = profiler_service__new(&cfg);
	if (!ASSERT_OK_PTR(ps, "new"))
		return test_exit();
	cfg.roots = "relative/dir";
	ASSERT_EQ(profiler_service__new(&cfg), NULL, "a relative profiler-root refused");
	test_paths();
	test_durations();
	test_sessions();
	test_hosts();
	test_roots();
	test_open();
	test_old_client();
	test_not_honoured();
	test_other_methods();
	profiler_service__free(ps);
	if (!test_failures) {
		char cmd[400];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", base);
		if (system(cmd))
			fprintf(stderr, "could not remove %s\n", base);
	}
	return test_exit();
}
