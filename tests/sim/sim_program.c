// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Parses the simulator's HLO-like program text into ops. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/types.h>

#include <acceltrace/devtrace.h>

#include "sim_program.h"

static const char *const category_names[DEVTRACE_CAT_MAX] = {
	[DEVTRACE_CAT_NONE] = "none",
	[DEVTRACE_CAT_CONVOLUTION] = "convolution",
	[DEVTRACE_CAT_FUSION] = "fusion",
	[DEVTRACE_CAT_ALL_REDUCE] = "all-reduce",
	[DEVTRACE_CAT_INFEED] = "infeed",
	[DEVTRACE_CAT_OUTFEED] = "outfeed",
	[DEVTRACE_CAT_DOT] = "dot",
	[DEVTRACE_CAT_COPY] = "copy",
	[DEVTRACE_CAT_OTHER] = "other",
};

const char *sim_category_name(int category)
{
	if (category < 0 || category >= DEVTRACE_CAT_MAX)
		return "other";
	return category_names[category];
}

/* The category of an op named `<opcode>.<n>` (or just `<opcode>`). */
static int category_of(const char *name)
{
	size_t n = strcspn(name, ".");
	int c;

	for (c = DEVTRACE_CAT_CONVOLUTION; c < DEVTRACE_CAT_OTHER; c++)
		if (strlen(category_names[c]) == n && !strncmp(name, category_names[c], n))
			return c;
	return DEVTRACE_CAT_OTHER;
}

static uint64_t attr(const char *line, const char *key)
{
	const char *p = strstr(line, key);

	return p ? strtoull(p + strlen(key), NULL, 10) : 0;
}

int sim_program_parse(const char *code, size_t len, struct sim_program *p,
		      char *err, size_t err_len)
{
	char *text, *line, *save = NULL;
	int ret = 0;
	size_t n;

	memset(p, 0, sizeof(*p));
	p->output_bytes = 1024;
	if (len < 10 || strncmp(code, "HloModule ", 10)) {
		snprintf(err, err_len, "program text does not begin with 'HloModule '");
		return -EINVAL;
	}
	text = strndup(code, len);
	if (!text) {
		snprintf(err, err_len, "out of memory");
		return -ENOMEM;
	}
	n = strcspn(text + 10, ", \t\n");
	if (!n || n >= sizeof(p->module)) {
		snprintf(err, err_len, "bad module name");
		ret = -EINVAL;
		goto out;
	}
	memcpy(p->module, text + 10, n);
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		struct sim_op *op;
		const char *name;

		if (strstr(line, "sim_output_bytes="))
			p->output_bytes = attr(line, "sim_output_bytes=");
		if (!strstr(line, "sim_ns="))
			continue;
		name = strchr(line, '%');
		if (!name) {
			snprintf(err, err_len, "op line without %%name: %.60s", line);
			ret = -EINVAL;
			goto out;
		}
		if (p->nops == SIM_MAX_OPS) {
			snprintf(err, err_len, "more than %d ops", SIM_MAX_OPS);
			ret = -EINVAL;
			goto out;
		}
		op = &p->ops[p->nops++];
		name++;
		n = strcspn(name, " \t=");
		if (!n || n >= sizeof(op->name)) {
			snprintf(err, err_len, "bad op name: %.60s", line);
			ret = -EINVAL;
			goto out;
		}
		memcpy(op->name, name, n);
		op->category = category_of(op->name);
		op->duration_ns = attr(line, "sim_ns=");
		op->flops = attr(line, "sim_flops=");
		op->bytes = attr(line, "sim_bytes=");
	}
	if (!p->nops) {
		snprintf(err, err_len, "module %s has no ops", p->module);
		ret = -EINVAL;
	}
out:
	free(text);
	return ret;
}
