// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "discover/device_irqs.h"
#include "discover/device_nodes.h"
#include "discover/procfs.h"
#include "lib/array.h"

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

#define MAX_DEVICE_IRQS 1024

struct found_irqs {
	struct device_irq *irqs;
	size_t n, cap;
	bool no_memory;
};

static void keep_one(uint32_t irq, const char *name, void *ctx)
{
	struct found_irqs *f = ctx;

	if (f->n >= MAX_DEVICE_IRQS)
		return;
	if (ARRAY_GROW(f->irqs, f->cap, f->n + 1)) {
		f->no_memory = true;
		return;
	}
	f->irqs[f->n].irq = irq;
	snprintf(f->irqs[f->n].name, sizeof(f->irqs[f->n].name), "%s", name);
	f->n++;
}

int device_irqs__find(struct device_irq **irqs)
{
	struct found_irqs found = { 0 };
	char *text = NULL;
	size_t len = 0;
	int n = procfs_read_file("/proc/interrupts", PROCFS_READ_MAX, &text, &len);

	if (n)
		return n;
	if (text)
		device_irqs__parse(text, len, keep_one, &found);
	free(text);
	if (found.no_memory) {
		free(found.irqs);
		return -ENOMEM;
	}
	*irqs = found.irqs;
	n = (int)found.n;
	return n;
}
