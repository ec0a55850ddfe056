// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The daemon's settings: one table of keys serves the file and the flags. */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/daemon_config.h"
#include "lib/units.h"
#include "store/store.h"

#define NS_PER_SEC 1000000000ull

enum key_type { K_PROFILER_LISTEN, K_PATHS, K_PATH, K_DURATION, K_COUNT, K_SIZE, K_FACTOR, K_BOOL,
		K_LISTEN, K_DETAIL, K_PRIORITY, K_TIERS };

struct key {
	const char *name;
	enum key_type type;
	size_t offset;
	size_t size;		/* the field's bytes (strings: the buffer's) */
	uint64_t min;		/* durations and counts: the least allowed */
};

#define STR(n, f) { n, K_PATH, offsetof(struct daemon_config, f), \
		    sizeof(((struct daemon_config *)0)->f), 0 }
#define NUM(n, t, f, m) { n, t, offsetof(struct daemon_config, f), \
			  sizeof(((struct daemon_config *)0)->f), m }

static const struct key keys[] = {
	{ "listen", K_LISTEN, offsetof(struct daemon_config, listen),
	  sizeof(((struct daemon_config *)0)->listen), 0 },
	{ "profiler-listen", K_PROFILER_LISTEN, offsetof(struct daemon_config, profiler_listen),
	  sizeof(((struct daemon_config *)0)->profiler_listen), 0 },
	{ "profiler-roots", K_PATHS, offsetof(struct daemon_config, profiler_roots),
	  sizeof(((struct daemon_config *)0)->profiler_roots), 0 },
	STR("socket", socket),
	STR("logdir", logdir),
	STR("textfile", textfile),
	STR("cgroup", cgroup),
	NUM("textfile-interval", K_DURATION, textfile_interval_ns, NS_PER_SEC),
	NUM("flight-recorder", K_DURATION, flight_recorder_ns, NS_PER_SEC),
	NUM("max-events", K_COUNT, max_events, 1000),
	NUM("grace", K_DURATION, grace_ns, 0),
	NUM("max-trigger-duration", K_DURATION, max_trigger_ns, NS_PER_SEC),
	NUM("profile-quota-captures", K_COUNT, profile_quota_captures, 0),
	NUM("profile-quota-bytes", K_SIZE, profile_quota_bytes, 0),
	NUM("profile-quota-detail", K_DURATION, profile_quota_detail_ns, 0),
	NUM("rule-duration", K_DURATION, rule_duration_ns, 0),
	NUM("rule-step-time-over", K_DURATION, rules.step_time_over_ns, 0),
	NUM("rule-step-time-factor", K_FACTOR, rules.step_time_factor, 0),
	NUM("rule-device-stall", K_DURATION, rules.device_stall_ns, 0),
	NUM("rule-crash", K_BOOL, rules.on_crash, 0),
	NUM("rule-cooldown", K_DURATION, rules.cooldown_ns, 0),
	NUM("detail", K_DETAIL, detail_full, 0),
	NUM("detail-interval", K_DURATION, detail_interval_ns, NS_PER_SEC),
	NUM("detail-slice", K_DURATION, detail_slice_ns, 0),
	NUM("cpu-priority", K_PRIORITY, cpu_idle, 0),
	{ "memory-timeline-tiers", K_TIERS, offsetof(struct daemon_config, mem_tiers),
	  sizeof(((struct daemon_config *)0)->mem_tiers), 0 },
};

#define N_KEYS (sizeof(keys) / sizeof(keys[0]))

void daemon_config__defaults(struct daemon_config *c)
{
	memset(c, 0, sizeof(*c));
	snprintf(c->listen, sizeof(c->listen), "%s", DAEMON_DEFAULT_LISTEN);
	snprintf(c->profiler_listen, sizeof(c->profiler_listen), "%s",
		 DAEMON_DEFAULT_PROFILER_LISTEN);
	snprintf(c->socket, sizeof(c->socket), "%s", DAEMON_DEFAULT_SOCKET);
	snprintf(c->logdir, sizeof(c->logdir), "%s", DAEMON_DEFAULT_LOGDIR);
	c->textfile_interval_ns = 15 * NS_PER_SEC;
	c->flight_recorder_ns = DAEMON_DEFAULT_FLIGHT_NS;
	c->max_events = 1000000;
	/* None by default: calls open at a stop are drawn to it, marked, and
	 * go on in the next window (which opens at that stop). */
	c->grace_ns = 0;
	c->max_trigger_ns = 600 * NS_PER_SEC;
	/* What one client may take of a logdir in an hour through the
	 * network door: a capture every two minutes, the size of a few
	 * windows at the span budget, and a third of the hour in full detail. */
	c->profile_quota_captures = 30;
	c->profile_quota_bytes = 4ull << 30;
	c->profile_quota_detail_ns = 20 * 60 * NS_PER_SEC;
	c->rule_duration_ns = 0;
	c->rules.on_crash = true;
	c->rules.cooldown_ns = 300 * NS_PER_SEC;
	/* About 1/30 of full tracing's cost, and two slices in the flight
	 * recorder's default 60 s (docs/daemon.md, "What it costs"). */
	c->detail_full = false;
	c->detail_interval_ns = 30 * NS_PER_SEC;
	c->detail_slice_ns = 1 * NS_PER_SEC;
	c->cpu_idle = true;
}

int daemon_config__split_listen(const char *listen, char *addr, size_t addr_len,
				uint16_t *port)
{
	return daemon_config__split_addr(listen, addr, addr_len, port, false);
}

int daemon_config__split_addr(const char *listen, char *addr, size_t addr_len,
			      uint16_t *port, bool any_port)
{
	const char *colon = strrchr(listen, ':');
	uint64_t p;

	if (!colon || colon == listen || (size_t)(colon - listen) >= addr_len ||
	    parse_uint(colon + 1, &p) || (!p && !any_port) || p > 65535)
		return -EINVAL;
	memcpy(addr, listen, colon - listen);
	addr[colon - listen] = '\0';
	*port = p;
	return 0;
}

/* A string key's value, copied whole or refused. */
static int set_string(char *at, const struct key *k, const char *v, char *err, size_t err_len)
{
	if (strlen(v) >= k->size) {
		snprintf(err, err_len, "%s: too long", k->name);
		return -EINVAL;
	}
	snprintf(at, k->size, "%s", v);
	return 0;
}

/*
 * "1s:600,10s:1080,...": each tier's resolution and how many points it
 * keeps, finest first, each coarser than the last and a multiple of it;
 * "" or "default": the timeline's defaults.
 */
static int set_tiers(struct daemon_mem_tiers *out, const struct key *k, const char *v,
		     char *err, size_t err_len)
{
	struct daemon_mem_tiers t = { .n = 0 };
	char buf[256], *save = NULL;

	if (!*v || !strcmp(v, "default")) {
		*out = t;
		return 0;
	}
	if (strlen(v) >= sizeof(buf))
		goto bad;
	snprintf(buf, sizeof(buf), "%s", v);
	for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *colon = strchr(tok, ':');
		uint64_t res, points;

		if (t.n == DEVMEM_MAX_TIERS) {
			snprintf(err, err_len, "%s: at most %d tiers, got '%s'", k->name,
				 DEVMEM_MAX_TIERS, v);
			return -EINVAL;
		}
		if (!colon)
			goto bad;
		*colon = '\0';
		if (parse_duration(tok, &res) || res < 1000000 || parse_uint(colon + 1, &points) ||
		    !points || points > 1000000)
			goto bad;
		t.t[t.n].resolution_ns = res;
		t.t[t.n++].points = (uint32_t)points;
	}
	if (!t.n)
		goto bad;
	/* Each read is in bounds: what the timeline refuses is their order. */
	if (devmem_timeline__check_tiers(t.t, t.n)) {
		snprintf(err, err_len, "%s: each tier must be coarser than the last and "
			 "a multiple of it, got '%s'", k->name, v);
		return -EINVAL;
	}
	*out = t;
	return 0;
bad:
	snprintf(err, err_len, "%s: expected RESOLUTION:POINTS,... finest first (resolution "
		 "at least 1ms, 1 to 1000000 points), such as 1s:600,10s:1080, got '%s'",
		 k->name, v);
	return -EINVAL;
}

static int set_value(struct daemon_config *c, const struct key *k, const char *v,
		     char *err, size_t err_len)
{
	char *at = (char *)c + k->offset, addr[64], *end;
	uint64_t n;
	uint16_t port;
	double d;

	switch (k->type) {
	case K_PROFILER_LISTEN:
		if (strcmp(v, "off") &&
		    daemon_config__split_addr(v, addr, sizeof(addr), &port, true)) {
			snprintf(err, err_len, "%s: expected ADDR:PORT or off, got '%s'",
				 k->name, v);
			return -EINVAL;
		}
		return set_string(at, k, v, err, err_len);
	case K_PATHS:
		/* Absolute paths or bucket URLs, ':'-separated; "" for none. */
		for (const char *q = v; *q;) {
			const char *end;

			if (*q != '/' && !store_is_url(q)) {
				snprintf(err, err_len, "%s: expected absolute paths or bucket URLs "
					 "(s3://, gs://) separated by ':', got '%s'", k->name, v);
				return -EINVAL;
			}
			end = strchr(store_is_url(q) ? q + 5 : q, ':');
			q = end ? end + 1 : q + strlen(q);
		}
		return set_string(at, k, v, err, err_len);
	case K_LISTEN:
		if (strcmp(v, "off") &&
		    daemon_config__split_listen(v, addr, sizeof(addr), &port)) {
			snprintf(err, err_len, "%s: expected ADDR:PORT or off, got '%s'",
				 k->name, v);
			return -EINVAL;
		}
		/* fallthrough */
	case K_PATH:
		/* The control protocol's replies are space-separated. */
		if (k->type == K_PATH && (!*v || strpbrk(v, " \t\r\n"))) {
			snprintf(err, err_len, "%s: expected a path without spaces, got '%s'",
				 k->name, v);
			return -EINVAL;
		}
		return set_string(at, k, v, err, err_len);
	case K_DURATION:
		if (parse_duration(v, &n) || n < k->min) {
			snprintf(err, err_len, "%s: expected a time%s such as 10s or 500ms, "
				 "got '%s'", k->name, k->min ? " of at least 1s" : "", v);
			return -EINVAL;
		}
		*(uint64_t *)at = n;
		return 0;
	case K_SIZE:
		if (parse_size(v, &n)) {
			snprintf(err, err_len, "%s: expected a size such as 4G or 512M, got '%s'",
				 k->name, v);
			return -EINVAL;
		}
		*(uint64_t *)at = n;
		return 0;
	case K_COUNT:
		if (parse_uint(v, &n) || n < k->min) {
			snprintf(err, err_len, "%s: expected a number of at least %llu, got '%s'",
				 k->name, (unsigned long long)k->min, v);
			return -EINVAL;
		}
		*(uint64_t *)at = n;
		return 0;
	case K_FACTOR:
		errno = 0;
		d = strtod(v, &end);
		if (errno || end == v || *end || !(d == 0 || d > 1) || d > 1e6) {
			snprintf(err, err_len, "%s: expected 0 (off) or a factor over 1, got '%s'",
				 k->name, v);
			return -EINVAL;
		}
		*(double *)at = d;
		return 0;
	case K_DETAIL:
		if (strcmp(v, "sampled") && strcmp(v, "full")) {
			snprintf(err, err_len, "%s: expected sampled or full, got '%s'",
				 k->name, v);
			return -EINVAL;
		}
		*(bool *)at = !strcmp(v, "full");
		return 0;
	case K_PRIORITY:
		if (strcmp(v, "idle") && strcmp(v, "normal")) {
			snprintf(err, err_len, "%s: expected idle or normal, got '%s'",
				 k->name, v);
			return -EINVAL;
		}
		*(bool *)at = !strcmp(v, "idle");
		return 0;
	case K_TIERS:
		return set_tiers((struct daemon_mem_tiers *)at, k, v, err, err_len);
	case K_BOOL:
		if (!strcmp(v, "true") || !strcmp(v, "yes") || !strcmp(v, "1"))
			*(bool *)at = true;
		else if (!strcmp(v, "false") || !strcmp(v, "no") || !strcmp(v, "0"))
			*(bool *)at = false;
		else {
			snprintf(err, err_len, "%s: expected true or false, got '%s'", k->name, v);
			return -EINVAL;
		}
		return 0;
	}
	return -EINVAL;
}

int daemon_config__set(struct daemon_config *c, const char *key, const char *value,
		       bool from_flag, char *err, size_t err_len)
{
	for (size_t i = 0; i < N_KEYS; i++) {
		int e;

		if (strcmp(keys[i].name, key))
			continue;
		e = set_value(c, &keys[i], value, err, err_len);
		if (!e && from_flag)
			c->from_flags |= 1ull << i;
		return e;
	}
	snprintf(err, err_len, "unknown key '%s'", key);
	return -ENOENT;
}

static char *trim(char *s)
{
	char *end;

	s += strspn(s, " \t");
	end = s + strlen(s);
	while (end > s && (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\n' ||
			   end[-1] == '\r'))
		*--end = '\0';
	return s;
}

/* Copies the keys the command line set from @flags into @c. */
static void keep_flags(struct daemon_config *c, const struct daemon_config *flags)
{
	for (size_t i = 0; i < N_KEYS; i++) {
		if (!(flags->from_flags & (1ull << i)))
			continue;
		memcpy((char *)c + keys[i].offset, (const char *)flags + keys[i].offset,
		       keys[i].size);
	}
	c->from_flags = flags->from_flags;
}

int daemon_config__load(const char *path, const struct daemon_config *flags,
			struct daemon_config *out, char *err, size_t err_len)
{
	struct daemon_config c;
	char line[2048], why[256];
	unsigned int lineno = 0;
	int e = 0;
	FILE *f;

	daemon_config__defaults(&c);
	f = fopen(path, "re");
	if (!f) {
		e = -errno;
		snprintf(err, err_len, "%s: %s", path, strerror(-e));
		return e;
	}
	while (fgets(line, sizeof(line), f)) {
		char *s, *eq;

		lineno++;
		if (!strchr(line, '\n') && !feof(f)) {
			snprintf(err, err_len, "%s:%u: line too long", path, lineno);
			e = -EINVAL;
			break;
		}
		s = line;
		s[strcspn(s, "#")] = '\0';
		s = trim(s);
		if (!*s)
			continue;
		eq = strchr(s, '=');
		if (!eq) {
			snprintf(err, err_len, "%s:%u: expected 'key = value'", path, lineno);
			e = -EINVAL;
			break;
		}
		*eq = '\0';
		e = daemon_config__set(&c, trim(s), trim(eq + 1), false, why, sizeof(why));
		if (e) {
			snprintf(err, err_len, "%s:%u: %s", path, lineno, why);
			e = -EINVAL;
			break;
		}
	}
	if (!e && ferror(f)) {
		snprintf(err, err_len, "%s: read error", path);
		e = -EIO;
	}
	fclose(f);
	if (e)
		return e;
	keep_flags(&c, flags);
	*out = c;
	return 0;
}

size_t daemon_config__num_keys(void)
{
	return N_KEYS;
}

const char *daemon_config__key(size_t i)
{
	return i < N_KEYS ? keys[i].name : NULL;
}
