// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Plugin configuration, the way real plugins take theirs: PJRT_Client_Create
 * create_options (PJRT_NamedValue), with ACCELTRACE_SIM_<NAME> environment
 * variables as the fallback. Unknown options are ignored, as frameworks
 * pass their own (ml_framework_name, ...).
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "plugin.h"

enum opt_type { OPT_INT, OPT_BOOL, OPT_PATH };

struct opt_desc {
	const char *name;		/* create_options name */
	enum opt_type type;
	size_t off;
	int64_t min, max;
};

#define OFF(f) offsetof(struct sim_options, f)

static const struct opt_desc descs[] = {
	{ "sim_cores", OPT_INT, OFF(cores), 1, SIM_MAX_CORES },
	{ "sim_device_dir", OPT_PATH, OFF(device_dir), 0, 0 },
	{ "sim_trace_dir", OPT_PATH, OFF(trace_dir), 0, 0 },
	{ "sim_no_devtrace", OPT_BOOL, OFF(no_devtrace), 0, 1 },
	{ "sim_trace_records", OPT_INT, OFF(trace_records), 1, 1ll << 30 },
	{ "sim_submit_ioctl", OPT_BOOL, OFF(submit_ioctl), 0, 1 },
	{ "sim_truth_path", OPT_PATH, OFF(truth_path), 0, 0 },
	{ "sim_truth_ops", OPT_BOOL, OFF(truth_ops), 0, 1 },
	{ "sim_clock_rate_hz", OPT_INT, OFF(clock_rate_hz), 1000, 10000000000ll },
	{ "sim_clock_drift_ppb", OPT_INT, OFF(clock_drift_ppb), -1000000, 1000000 },
	{ "sim_clock_offset", OPT_INT, OFF(clock_offset), 0, 1ll << 62 },
	{ "sim_compile_ns", OPT_INT, OFF(compile_ns), 0, 600000000000ll },
	{ "sim_device_memory", OPT_INT, OFF(device_memory), 1, 1ll << 50 },
};

static int set_int(const struct opt_desc *d, struct sim_options *o, int64_t v,
		   char *err, size_t err_len)
{
	void *p = (char *)o + d->off;

	if (v < d->min || v > d->max) {
		snprintf(err, err_len, "%s=%lld is out of range [%lld, %lld]", d->name,
			 (long long)v, (long long)d->min, (long long)d->max);
		return -EINVAL;
	}
	switch (d->type) {
	case OPT_BOOL:
		*(bool *)p = v != 0;
		break;
	case OPT_INT:
		if (d->off == OFF(cores))
			*(int *)p = (int)v;
		else if (d->off == OFF(clock_drift_ppb))
			*(int64_t *)p = v;
		else
			*(uint64_t *)p = (uint64_t)v;
		break;
	default:
		break;
	}
	return 0;
}

static int set_string(const struct opt_desc *d, struct sim_options *o,
		      const char *s, size_t n, char *err, size_t err_len)
{
	char *end, buf[64];
	long long v;

	if (d->type == OPT_PATH) {
		if (n >= PATH_MAX) {
			snprintf(err, err_len, "%s is too long", d->name);
			return -EINVAL;
		}
		memcpy((char *)o + d->off, s, n);
		((char *)o + d->off)[n] = 0;
		return 0;
	}
	if (n >= sizeof(buf))
		n = sizeof(buf) - 1;
	memcpy(buf, s, n);
	buf[n] = 0;
	if (d->type == OPT_BOOL && (!strcmp(buf, "true") || !strcmp(buf, "false")))
		return set_int(d, o, buf[0] == 't', err, err_len);
	errno = 0;
	v = strtoll(buf, &end, 0);
	if (errno || end == buf || *end) {
		snprintf(err, err_len, "%s: '%s' is not a number", d->name, buf);
		return -EINVAL;
	}
	return set_int(d, o, v, err, err_len);
}

static void env_name(const char *name, char *out, size_t len)
{
	size_t i, n = (size_t)snprintf(out, len, "ACCELTRACE_%s", name);

	for (i = 0; i < n && i < len; i++)
		out[i] = (char)toupper((unsigned char)out[i]);
}

int sim_options_parse(struct sim_options *o, const PJRT_NamedValue *v, size_t n,
		      char *err, size_t err_len)
{
	size_t i, j;
	char env[64];
	int ret;

	memset(o, 0, sizeof(*o));
	o->cores = 4;
	snprintf(o->device_dir, sizeof(o->device_dir), "/run/acceltrace-sim/%d",
		 (int)getpid());
	o->trace_records = 65536;
	o->truth_ops = true;
	o->clock_rate_hz = 940000000;
	o->clock_drift_ppb = 37000;
	o->clock_offset = 5000000000000ull;
	o->compile_ns = 20000000;
	o->device_memory = 32ull << 30;		/* a TPU v4 core's HBM */

	for (j = 0; j < sizeof(descs) / sizeof(descs[0]); j++) {
		const char *s;

		env_name(descs[j].name, env, sizeof(env));
		s = getenv(env);
		if (s && *s) {
			ret = set_string(&descs[j], o, s, strlen(s), err, err_len);
			if (ret)
				return ret;
		}
	}

	for (i = 0; i < n; i++) {
		const PJRT_NamedValue *nv = &v[i];

		for (j = 0; j < sizeof(descs) / sizeof(descs[0]); j++)
			if (strlen(descs[j].name) == nv->name_size &&
			    !memcmp(descs[j].name, nv->name, nv->name_size))
				break;
		if (j == sizeof(descs) / sizeof(descs[0]))
			continue;
		switch (nv->type) {
		case PJRT_NamedValue_kString:
			ret = set_string(&descs[j], o, nv->string_value, nv->value_size,
					 err, err_len);
			break;
		case PJRT_NamedValue_kInt64:
			ret = descs[j].type == OPT_PATH ? -EINVAL :
				set_int(&descs[j], o, nv->int64_value, err, err_len);
			break;
		case PJRT_NamedValue_kBool:
			ret = descs[j].type == OPT_PATH ? -EINVAL :
				set_int(&descs[j], o, nv->bool_value, err, err_len);
			break;
		default:
			ret = -EINVAL;
			break;
		}
		if (ret) {
			if (!*err)
				snprintf(err, err_len, "option %s has the wrong type",
					 descs[j].name);
			return ret;
		}
	}
	if (!o->trace_dir[0])
		snprintf(o->trace_dir, sizeof(o->trace_dir), "%.4000s/devtrace",
			 o->device_dir);
	return 0;
}
