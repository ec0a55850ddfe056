// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LOG_CONTEXT "irqs"
#include "lib/log.h"
#include "discover/device_irqs.h"
#include "discover/device_nodes.h"
#include "probe/probe_session.h"

/*
 * One line: "  NN:  count0  count1 ...  chip  hwirq-type  name[, name]".
 * The names follow the last column that is a count or a chip field; the
 * simplest robust reading is the text after the last run of two or more
 * spaces, which the kernel prints before the action names.
 */
static int parse_line(const char *line, size_t len,
		      void (*fn)(uint32_t irq, const char *name, void *ctx),
		      void *ctx)
{
	char buf[512], *names, *tok, *save = NULL;
	const char *p = line;
	unsigned long irq;
	char *end;
	int hits = 0;

	while (p < line + len && isspace((unsigned char)*p))
		p++;
	if (!isdigit((unsigned char)*p))
		return 0;	/* NMI:, LOC:, the header */
	irq = strtoul(p, &end, 10);
	if (*end != ':' || len >= sizeof(buf))
		return 0;
	memcpy(buf, line, len);
	buf[len] = '\0';
	names = strstr(buf, ":") + 1;
	for (char *q = names; (q = strstr(q, "  ")); q++)
		names = q;
	while (isspace((unsigned char)*names))
		names++;
	for (tok = strtok_r(names, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		size_t tl;

		while (isspace((unsigned char)*tok))
			tok++;
		tl = strlen(tok);
		while (tl && isspace((unsigned char)tok[tl - 1]))
			tok[--tl] = '\0';
		if (tl && device_irq_name_match(tok)) {
			fn(irq, tok, ctx);
			hits++;
		}
	}
	return hits;
}

int device_irqs__parse(const char *text, size_t len,
		       void (*fn)(uint32_t irq, const char *name, void *ctx),
		       void *ctx)
{
	const char *p = text, *end = text + len;
	int hits = 0;

	while (p < end) {
		const char *nl = memchr(p, '\n', end - p);
		size_t l = nl ? (size_t)(nl - p) : (size_t)(end - p);

		hits += parse_line(p, l, fn, ctx);
		p += l + 1;
	}
	return hits;
}

static void trace_one(uint32_t irq, const char *name, void *ctx)
{
	struct probe_session *ps = ctx;
	int err = probe_session__trace_irq(ps, irq, 0);

	if (err)
		log_warn("cannot trace irq %u (%s): %s", irq, name, strerror(-err));
	else
		log_debug("tracing irq %u (%s)", irq, name);
}

int device_irqs__trace(struct probe_session *ps)
{
	char *text = NULL;
	size_t cap = 0, len = 0;
	FILE *f = fopen("/proc/interrupts", "re");
	int n;

	if (!f)
		return -errno;
	/* /proc/interrupts reports no size: read it to the end. */
	for (;;) {
		size_t got;

		if (len + 4096 > cap) {
			char *grown = realloc(text, cap + 65536);

			if (!grown) {
				free(text);
				fclose(f);
				return -ENOMEM;
			}
			text = grown;
			cap += 65536;
		}
		got = fread(text + len, 1, cap - len, f);
		len += got;
		if (!got)
			break;
	}
	fclose(f);
	n = text ? device_irqs__parse(text, len, trace_one, ps) : 0;
	free(text);
	return n;
}
