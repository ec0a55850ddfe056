// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Container and pod from a cgroup path: one component at a time. */
#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "discover/cgroup_labels.h"

#define CONTAINER_ID_LEN 64

static bool all_hex(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!isxdigit((unsigned char)s[i]))
			return false;
	return true;
}

/* A container id: 64 hex digits, alone or after a runtime's prefix and
 * before ".scope". */
static bool container_of(const char *comp, size_t len, char *out)
{
	static const char *const prefixes[] = {
		"", "docker-", "cri-containerd-", "crio-", "libpod-", "containerd-",
	};

	if (len > 6 && !memcmp(comp + len - 6, ".scope", 6))
		len -= 6;
	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++) {
		size_t p = strlen(prefixes[i]);

		if (len == p + CONTAINER_ID_LEN && !memcmp(comp, prefixes[i], p) &&
		    all_hex(comp + p, CONTAINER_ID_LEN)) {
			memcpy(out, comp + p, CONTAINER_ID_LEN);
			out[CONTAINER_ID_LEN] = '\0';
			return true;
		}
	}
	return false;
}

/* A pod: "pod<UID>" (cgroupfs) or "...-pod<UID>.slice" (systemd, '_' for '-'). */
static bool pod_of(const char *comp, size_t len, char *out, size_t out_len)
{
	const char *p = NULL;
	size_t n, i;

	if (len > 6 && !memcmp(comp + len - 6, ".slice", 6)) {
		len -= 6;
		for (i = len; i >= 4; i--) {
			if (!memcmp(comp + i - 4, "-pod", 4)) {
				p = comp + i;
				break;
			}
		}
	} else if (len > 3 && !memcmp(comp, "pod", 3)) {
		p = comp + 3;
	}
	if (!p)
		return false;
	n = len - (size_t)(p - comp);
	if (!n || n >= out_len)
		return false;
	for (i = 0; i < n; i++) {
		char ch = p[i] == '_' ? '-' : p[i];

		if (!isxdigit((unsigned char)ch) && ch != '-')
			return false;
		out[i] = ch;
	}
	out[n] = '\0';
	return true;
}

void cgroup_labels_parse(const char *path, struct cgroup_labels *out)
{
	const char *s = path ? path : "";

	out->container[0] = out->pod[0] = '\0';
	while (*s) {
		size_t len;

		s += strspn(s, "/");
		len = strcspn(s, "/");
		if (!len)
			break;
		/* The innermost container wins: nested runtimes name theirs last. */
		container_of(s, len, out->container);
		if (!out->pod[0])
			pod_of(s, len, out->pod, sizeof(out->pod));
		s += len;
	}
}
