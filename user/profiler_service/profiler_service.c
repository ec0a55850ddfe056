// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The ProfilerService's requests decoded and checked, its responses
 * encoded (profiler_service.h). Upstream's server is the model
 * (../shared/reference/xprof-contract.md §7.3): the request's duration_ms
 * (else the options'), its session_id, host_name and repository_root; the
 * file <repository_root>/<session_id>/<host_name>.xplane.pb is written by
 * the server, tool_data stays empty.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define LOG_CONTEXT "profiler"
#include "lib/log.h"
#include "profiler_service/profiler_roots.h"
#include "profiler_service/profiler_service.h"
#include "profiler_service.pb-c.h"

#define NS_PER_MS 1000000ull
#define NS_PER_SEC 1000000000ull

struct profiler_service {
	struct profiler_roots roots;
	char hostname[PROFILER_MAX_HOST];
	uint64_t max_duration_ns;
};

struct profiler_service *profiler_service__new(const struct profiler_service_config *cfg)
{
	struct profiler_service *ps = calloc(1, sizeof(*ps));
	int err;

	if (!ps)
		return NULL;
	err = profiler_roots__init(&ps->roots, cfg->logdir, cfg->roots);
	if (err) {
		free(ps);
		errno = -err;
		return NULL;
	}
	if (cfg->hostname && cfg->hostname[0])
		snprintf(ps->hostname, sizeof(ps->hostname), "%s", cfg->hostname);
	else if (gethostname(ps->hostname, sizeof(ps->hostname) - 1))
		snprintf(ps->hostname, sizeof(ps->hostname), "localhost");
	ps->max_duration_ns = cfg->max_duration_ns;
	return ps;
}

void profiler_service__free(struct profiler_service *ps)
{
	free(ps);
}

/* ---------------------------------------------------------------- old clients */

static bool read_varint(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
	*v = 0;
	for (unsigned int shift = 0; shift < 64; shift += 7) {
		if (*p >= end)
			return false;
		*v |= (uint64_t)(**p & 0x7f) << shift;
		if (!(*(*p)++ & 0x80))
			return true;
	}
	return false;
}

/* Past one field's value of @wire type; false when it runs off @end. */
static bool skip_value(const uint8_t **p, const uint8_t *end, unsigned int wire)
{
	uint64_t v;

	switch (wire) {
	case 0:
		return read_varint(p, end, &v);
	case 1:
		v = 8;
		break;
	case 2:
		if (!read_varint(p, end, &v))
			return false;
		break;
	case 5:
		v = 4;
		break;
	default:
		return false;
	}
	if (v > (uint64_t)(end - *p))
		return false;
	*p += v;
	return true;
}

static size_t put_varint(uint8_t *out, uint64_t v)
{
	size_t n = 0;

	do {
		out[n++] = (v & 0x7f) | (v > 0x7f ? 0x80 : 0);
		v >>= 7;
	} while (v);
	return n;
}

/*
 * The older openxla ProfileOptions has `string backend_name = 11` where
 * ours has the TraceOptions message: a name that does not parse as one
 * makes protobuf-c refuse the whole request. A copy of the ProfileRequest
 * with field 11 cut out of its opts (field 4) into @out (at least @len
 * bytes); its length, or 0 when the bytes do not parse at all.
 */
static size_t strip_backend_name(const uint8_t *msg, size_t len, uint8_t *out)
{
	const uint8_t *p = msg, *end = msg + len;
	size_t o = 0;

	while (p < end) {
		const uint8_t *field = p, *val, *q, *qend;
		uint64_t key, n;
		size_t inner = 0;
		uint8_t *tmp;

		if (!read_varint(&p, end, &key))
			return 0;
		if (key >> 3 != 4 || (key & 7) != 2) {
			if (!skip_value(&p, end, key & 7))
				return 0;
			memcpy(out + o, field, p - field);
			o += p - field;
			continue;
		}
		if (!read_varint(&p, end, &n) || n > (uint64_t)(end - p))
			return 0;
		val = p;
		p += n;
		tmp = malloc(n ? n : 1);
		if (!tmp)
			return 0;
		for (q = val, qend = val + n; q < qend;) {
			const uint8_t *f = q;
			uint64_t k;

			if (!read_varint(&q, qend, &k) || !skip_value(&q, qend, k & 7)) {
				free(tmp);
				return 0;
			}
			if (k >> 3 == 11)
				continue;
			memcpy(tmp + inner, f, q - f);
			inner += q - f;
		}
		/* A shorter value: its key and length fit where they were. */
		o += put_varint(out + o, key);
		o += put_varint(out + o, inner);
		memcpy(out + o, tmp, inner);
		o += inner;
		free(tmp);
	}
	return o;
}

/*
 * protobuf-c hands strings over NUL-terminated: "a\0/../b" would arrive as
 * "a". The names and paths that matter are refused whole instead: true
 * when one holds a NUL (repository_root, session_id, host_name; the
 * options' repository_path, session_id, override_hostname).
 */
static bool names_hold_nul(const uint8_t *msg, size_t len, bool in_opts)
{
	const uint8_t *p = msg, *end = msg + len;

	while (p < end) {
		uint64_t key, n, f;

		if (!read_varint(&p, end, &key))
			return false;
		if ((key & 7) != 2) {
			if (!skip_value(&p, end, key & 7))
				return false;
			continue;
		}
		if (!read_varint(&p, end, &n) || n > (uint64_t)(end - p))
			return false;
		f = key >> 3;
		if (!in_opts && f == 4 && names_hold_nul(p, n, true))
			return true;
		if (((!in_opts && f >= 5 && f <= 7) || (in_opts && (f == 10 || f == 14 || f == 15))) &&
		    memchr(p, 0, n))
			return true;
		p += n;
	}
	return false;
}

static Tensorflow__ProfileRequest *unpack_profile(const uint8_t *msg, size_t len, bool *old)
{
	Tensorflow__ProfileRequest *r = tensorflow__profile_request__unpack(NULL, len, msg);
	uint8_t *copy;
	size_t n;

	*old = false;
	if (r)
		return r;
	copy = malloc(len ? len : 1);
	if (!copy)
		return NULL;
	n = strip_backend_name(msg, len, copy);
	if (n && n < len) {
		r = tensorflow__profile_request__unpack(NULL, n, copy);
		*old = r != NULL;
	}
	free(copy);
	return r;
}

/* ---------------------------------------------------------------- Profile */

static void say(char *buf, size_t len, const char *what)
{
	size_t used = strlen(buf);

	snprintf(buf + used, len - used, "%s%s", used ? ", " : "", what);
}

/* A string from the request, or "" for protobuf-c's absent one. */
static const char *str(const char *s)
{
	return s ? s : "";
}

static const char *override_hostname(const Tensorflow__ProfileOptions *o)
{
	for (size_t i = 0; i < o->n_advanced_configuration; i++) {
		const Tensorflow__ProfileOptions__AdvancedConfigurationEntry *e =
			o->advanced_configuration[i];

		if (e && e->key && !strcmp(e->key, "override_hostname") && e->value &&
		    e->value->value_case ==
		    TENSORFLOW__PROFILE_OPTIONS__ADVANCED_CONFIG_VALUE__VALUE_STRING_VALUE)
			return str(e->value->string_value);
	}
	return "";
}

/* The session name upstream's client makes: the local time. */
static void timestamp_session(uint64_t real_ns, char *buf, size_t len)
{
	time_t t = real_ns / NS_PER_SEC;
	struct tm tm;

	if (!localtime_r(&t, &tm) || !strftime(buf, len, "%Y_%m_%d_%H_%M_%S", &tm))
		snprintf(buf, len, "%lld", (long long)t);
}

/* What printing @s in a message may show: bounded, no control bytes. */
static void shown(const char *s, char *out, size_t len)
{
	size_t o = 0;

	for (; *s && o + 5 < len; s++) {
		unsigned char c = *s;

		o += snprintf(out + o, len - o, c >= 0x20 && c < 0x7f ? "%c" : "\\x%02x", c);
	}
	if (*s && o + 4 < len)
		o += snprintf(out + o, len - o, "...");
	out[o] = '\0';
}

/*
 * No component a file system would refuse (over NAME_MAX bytes): the
 * client's error, said briefly, not a server error echoing the name. The
 * characters of the directories it creates are held where they are
 * created (profiler_roots__open).
 */
static enum grpc_status components_fit(const char *root, char *why, size_t why_len)
{
	char comp[NAME_MAX + 1], show[96];
	const char *p = root;

	while (*p) {
		size_t n;

		while (*p == '/')
			p++;
		n = strcspn(p, "/");
		if (n > NAME_MAX) {
			snprintf(comp, sizeof(comp), "%.*s", NAME_MAX, p);
			shown(comp, show, sizeof(show));
			snprintf(why, why_len, "repository_root component \"%s\" is %zu bytes: "
				 "at most %d", show, n, NAME_MAX);
			return GRPC_STATUS_INVALID_ARGUMENT;
		}
		p += n;
	}
	return GRPC_STATUS_OK;
}

static enum grpc_status profile_names(const struct profiler_service *ps,
				      const Tensorflow__ProfileRequest *r,
				      const Tensorflow__ProfileOptions *o, uint64_t now_real,
				      struct profiler_profile *p, char *why, size_t why_len)
{
	const char *session = str(r->session_id), *host = str(r->host_name);
	const char *root = str(r->repository_root);
	char show[96], def_root[PROFILER_MAX_PATH + 32];
	int err;

	if (!session[0])
		session = str(o->session_id);
	if (!session[0])
		timestamp_session(now_real, p->session, sizeof(p->session));
	else if (xprof_valid_name(session, sizeof(p->session), false))
		snprintf(p->session, sizeof(p->session), "%s", session);
	else
		goto bad_session;
	if (!host[0])
		host = str(o->override_hostname);
	if (!host[0])
		host = override_hostname(o);
	if (!host[0])
		host = ps->hostname;
	if (!xprof_valid_name(host, sizeof(p->host), true)) {
		shown(host, show, sizeof(show));
		snprintf(why, why_len, "host_name \"%s\": a host name is 1 to %zu letters, "
			 "digits, '.', '_', '-' or ':'", show, sizeof(p->host) - 1);
		return GRPC_STATUS_INVALID_ARGUMENT;
	}
	snprintf(p->host, sizeof(p->host), "%s", host);
	if (!root[0])
		root = str(o->repository_path);
	if (!root[0]) {
		/* Where XProf's client points it: <logdir>/plugins/profile. */
		snprintf(def_root, sizeof(def_root), "%s/plugins/profile",
			 ps->roots.root[0].path);
		root = def_root;
	}
	err = profiler_path_normalise(root, p->root, sizeof(p->root));
	if (err) {
		shown(root, show, sizeof(show));
		snprintf(why, why_len, "repository_root \"%s\": %s", show,
			 err == -ENAMETOOLONG ? "too long" :
			 "an absolute path or bucket URL without \".\" or \"..\" components "
			 "is required");
		return GRPC_STATUS_INVALID_ARGUMENT;
	}
	if (profiler_roots__match(&ps->roots, p->root, &p->base)) {
		shown(p->root, show, sizeof(show));
		snprintf(why, why_len, "repository_root %s is outside the daemon's logdir %s "
			 "(and its profiler-roots)", show, ps->roots.root[0].path);
		return GRPC_STATUS_PERMISSION_DENIED;
	}
	return components_fit(p->root, why, why_len);
bad_session:
	shown(session, show, sizeof(show));
	snprintf(why, why_len, "session_id \"%s\": a session is 1 to %zu letters, digits, "
		 "'.', '_' or '-', not \".\" or \"..\"", show, sizeof(p->session) - 1);
	return GRPC_STATUS_INVALID_ARGUMENT;
}

/* What was asked and is not done here, into p->not_honoured. */
static void not_honoured(const Tensorflow__ProfileRequest *r,
			 const Tensorflow__ProfileOptions *o, bool versioned, bool old,
			 struct profiler_profile *p)
{
	char *b = p->not_honoured;
	size_t len = sizeof(p->not_honoured);
	bool other_tools = false;

	for (size_t i = 0; i < r->n_tools && i < PROFILER_MAX_REPEATED; i++)
		if (strcmp(str(r->tools[i]), "xplane.pb") &&
		    strcmp(str(r->tools[i]), "trace_viewer"))
			other_tools = true;
	if (other_tools || r->n_tool_options)
		say(b, len, "tools (xplane.pb is written; XProf makes the others from it)");
	if (r->max_events)
		say(b, len, "max_events (the daemon's max-events holds)");
	if (!versioned)
		return;
	if (o->host_tracer_level == 0)
		say(b, len, "host_tracer_level 0 (host events are written)");
	if (o->device_tracer_level == 0)
		say(b, len, "device_tracer_level 0 (device planes are written)");
	if (o->python_tracer_level)
		say(b, len, "python_tracer_level");
	if (o->enable_hlo_proto)
		say(b, len, "enable_hlo_proto");
	if (o->include_dataset_ops)
		say(b, len, "include_dataset_ops");
	if (o->trace_options && o->trace_options->host_traceme_filter_mask)
		say(b, len, "trace_options");
	for (size_t i = 0; i < o->n_advanced_configuration; i++)
		if (o->advanced_configuration[i] &&
		    strcmp(str(o->advanced_configuration[i]->key), "override_hostname")) {
			say(b, len, "advanced_configuration");
			break;
		}
	if (old)
		say(b, len, "backend_name");
}

static enum grpc_status parse_profile(const struct profiler_service *ps, const uint8_t *msg,
				      size_t len, uint64_t now_real, struct profiler_request *rq,
				      char *why, size_t why_len)
{
	static const Tensorflow__ProfileOptions no_opts = TENSORFLOW__PROFILE_OPTIONS__INIT;
	struct profiler_profile *p = &rq->profile;
	const Tensorflow__ProfileOptions *o;
	Tensorflow__ProfileRequest *r;
	enum grpc_status st;
	uint64_t dur_ms;
	bool versioned, old;

	if (names_hold_nul(msg, len, false)) {
		snprintf(why, why_len, "a NUL byte in repository_root, session_id or host_name");
		return GRPC_STATUS_INVALID_ARGUMENT;
	}
	r = unpack_profile(msg, len, &old);
	if (!r) {
		snprintf(why, why_len, "the ProfileRequest does not decode");
		return GRPC_STATUS_INVALID_ARGUMENT;
	}
	o = r->opts ? r->opts : &no_opts;
	if (r->n_tools > PROFILER_MAX_REPEATED || r->n_tool_options > PROFILER_MAX_REPEATED ||
	    o->n_advanced_configuration > PROFILER_MAX_REPEATED) {
		snprintf(why, why_len, "more than %d tools, tool_options or "
			 "advanced_configuration entries", PROFILER_MAX_REPEATED);
		st = GRPC_STATUS_INVALID_ARGUMENT;
		goto out;
	}
	/* Version 0: upstream's server ignores the options and takes its
	 * defaults (host level 2, device level 1). */
	versioned = o->version > 0;
	dur_ms = r->duration_ms ? r->duration_ms : versioned ? o->duration_ms : 0;
	if (!dur_ms) {
		snprintf(why, why_len, "duration_ms 0: a Profile needs a duration "
			 "(the daemon does not profile until interrupted)");
		st = GRPC_STATUS_INVALID_ARGUMENT;
		goto out;
	}
	if (dur_ms > ps->max_duration_ns / NS_PER_MS) {
		snprintf(why, why_len, "duration_ms %llu is over the daemon's "
			 "max-trigger-duration (%llu ms)", (unsigned long long)dur_ms,
			 (unsigned long long)(ps->max_duration_ns / NS_PER_MS));
		st = GRPC_STATUS_INVALID_ARGUMENT;
		goto out;
	}
	p->duration_ns = dur_ms * NS_PER_MS;
	p->full_detail = !versioned || o->host_tracer_level >= 2;
	if (versioned && o->start_timestamp_ns) {
		if (o->start_timestamp_ns <= now_real) {
			p->late = true;
		} else if (o->start_timestamp_ns - now_real > ps->max_duration_ns) {
			snprintf(why, why_len, "start_timestamp_ns is %.0f s ahead, more than "
				 "max-trigger-duration (%.0f s)",
				 (o->start_timestamp_ns - now_real) / 1e9,
				 ps->max_duration_ns / 1e9);
			st = GRPC_STATUS_INVALID_ARGUMENT;
			goto out;
		} else {
			p->start_realtime_ns = o->start_timestamp_ns;
		}
	}
	st = profile_names(ps, r, o, now_real, p, why, why_len);
	if (st == GRPC_STATUS_OK)
		not_honoured(r, o, versioned, old, p);
out:
	tensorflow__profile_request__free_unpacked(r, NULL);
	return st;
}

/* ---------------------------------------------------------------- the rest */

static enum grpc_status parse_terminate(const uint8_t *msg, size_t len,
					struct profiler_request *rq, char *why, size_t why_len)
{
	Tensorflow__TerminateRequest *r = tensorflow__terminate_request__unpack(NULL, len, msg);
	enum grpc_status st = GRPC_STATUS_OK;
	char show[96];

	if (!r) {
		snprintf(why, why_len, "the TerminateRequest does not decode");
		return GRPC_STATUS_INVALID_ARGUMENT;
	}
	if (str(r->session_id)[0] &&
	    !xprof_valid_name(r->session_id, sizeof(rq->session), false)) {
		shown(r->session_id, show, sizeof(show));
		snprintf(why, why_len, "session_id \"%s\" is no session name", show);
		st = GRPC_STATUS_INVALID_ARGUMENT;
	} else {
		snprintf(rq->session, sizeof(rq->session), "%s", str(r->session_id));
	}
	tensorflow__terminate_request__free_unpacked(r, NULL);
	return st;
}

static enum grpc_status parse_monitor(const uint8_t *msg, size_t len,
				      struct profiler_request *rq, char *why, size_t why_len)
{
	Tensorflow__MonitorRequest *r = tensorflow__monitor_request__unpack(NULL, len, msg);

	if (!r) {
		snprintf(why, why_len, "the MonitorRequest does not decode");
		return GRPC_STATUS_INVALID_ARGUMENT;
	}
	rq->monitor_ns = (r->duration_ms < PROFILER_MAX_MONITOR_MS ? r->duration_ms :
			  PROFILER_MAX_MONITOR_MS) * NS_PER_MS;
	rq->monitor_level = r->monitoring_level >= 2 ? 2 : 1;
	rq->monitor_timestamp = r->timestamp;
	tensorflow__monitor_request__free_unpacked(r, NULL);
	return GRPC_STATUS_OK;
}

enum grpc_status profiler_service__parse(const struct profiler_service *ps, const char *path,
					 const uint8_t *msg, size_t len,
					 uint64_t now_realtime_ns, struct profiler_request *rq,
					 char *why, size_t why_len)
{
	char show[96];

	memset(rq, 0, sizeof(*rq));
	why[0] = '\0';
	if (len > GRPC_SERVER_MAX_MESSAGE) {
		snprintf(why, why_len, "a request of %zu bytes (at most %u)", len,
			 GRPC_SERVER_MAX_MESSAGE);
		return GRPC_STATUS_RESOURCE_EXHAUSTED;
	}
	if (!msg && len)
		return GRPC_STATUS_INVALID_ARGUMENT;
	if (!strcmp(path, PROFILER_PATH_PROFILE)) {
		rq->method = PROFILER_PROFILE;
		return parse_profile(ps, msg, len, now_realtime_ns, rq, why, why_len);
	}
	if (!strcmp(path, PROFILER_PATH_TERMINATE)) {
		rq->method = PROFILER_TERMINATE;
		return parse_terminate(msg, len, rq, why, why_len);
	}
	if (!strcmp(path, PROFILER_PATH_MONITOR)) {
		rq->method = PROFILER_MONITOR;
		return parse_monitor(msg, len, rq, why, why_len);
	}
	shown(path, show, sizeof(show));
	snprintf(why, why_len, "%s: acceltrace serves tensorflow.ProfilerService's Profile, "
		 "Terminate and Monitor", show);
	return GRPC_STATUS_UNIMPLEMENTED;
}

int profiler_service__open_root(const struct profiler_service *ps,
				const struct profiler_profile *p, enum grpc_status *code,
				char *why, size_t why_len)
{
	return profiler_roots__open(&ps->roots, p->base, p->root, p->session, code, why,
				    why_len);
}

enum grpc_status profiler_service__write_status(int err)
{
	if (err == -ECANCELED)
		return GRPC_STATUS_ABORTED;	/* ended before its window began */
	return err == -ELOOP ? GRPC_STATUS_PERMISSION_DENIED : GRPC_STATUS_INTERNAL;
}

/* ---------------------------------------------------------------- responses */

static int pack(const ProtobufCMessage *m, uint8_t **out, size_t *len)
{
	*len = protobuf_c_message_get_packed_size(m);
	*out = malloc(*len ? *len : 1);
	if (!*out)
		return -ENOMEM;
	protobuf_c_message_pack(m, *out);
	return 0;
}

int profiler_service__profile_response(bool empty_trace, uint8_t **out, size_t *len)
{
	Tensorflow__ProfileResponse r = TENSORFLOW__PROFILE_RESPONSE__INIT;

	r.empty_trace = empty_trace;
	return pack(&r.base, out, len);
}

int profiler_service__terminate_response(uint8_t **out, size_t *len)
{
	Tensorflow__TerminateResponse r = TENSORFLOW__TERMINATE_RESPONSE__INIT;

	return pack(&r.base, out, len);
}

int profiler_service__monitor_response(const char *text, uint8_t **out, size_t *len)
{
	Tensorflow__MonitorResponse r = TENSORFLOW__MONITOR_RESPONSE__INIT;

	r.data = (char *)text;
	return pack(&r.base, out, len);
}
