// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * String interning (see strtab.h): id-indexed arrays of pointer, length and
 * hash; an open-addressing table of ids (linear probing, at most half full)
 * for lookup; the bytes in chunks that are never moved or reallocated.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/strtab.h"

/* Chunks double from the first to the last size: small tables stay small. */
#define FIRST_CHUNK 1024
#define MAX_CHUNK (64 * 1024)
#define MIN_IDS 64

struct chunk {
	struct chunk *next;
	size_t used;
	size_t cap;
	char data[];
};

struct strtab {
	const char **strs;	/* by id; [0] is "" */
	uint32_t *len;
	uint32_t *hash;
	size_t n, cap;
	uint32_t *slots;	/* ids; 0: empty (id 0, "", is never hashed) */
	size_t slots_cap;	/* 0 or a power of two */
	struct chunk *chunks;	/* the first takes new strings */
};

uint32_t strtab__hash(const char *s, size_t len)
{
	uint32_t h = 2166136261u;	/* FNV-1a */

	for (size_t i = 0; i < len; i++) {
		h ^= (unsigned char)s[i];
		h *= 16777619u;
	}
	return h;
}

/* Makes room for one more id; the arrays are unchanged on failure. */
static int grow_ids(struct strtab *t)
{
	size_t cap = t->cap ? t->cap * 2 : MIN_IDS;
	const char **strs;
	uint32_t *len, *hash;

	strs = realloc(t->strs, cap * sizeof(*strs));
	if (!strs)
		return -ENOMEM;
	t->strs = strs;
	len = realloc(t->len, cap * sizeof(*len));
	if (!len)
		return -ENOMEM;
	t->len = len;
	hash = realloc(t->hash, cap * sizeof(*hash));
	if (!hash)
		return -ENOMEM;
	t->hash = hash;
	t->cap = cap;
	return 0;
}

struct strtab *strtab__new(void)
{
	struct strtab *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	if (grow_ids(t)) {
		strtab__free(t);
		errno = ENOMEM;
		return NULL;
	}
	t->strs[0] = "";
	t->len[0] = 0;
	t->hash[0] = 0;
	t->n = 1;
	return t;
}

static void free_chunks(struct chunk *ch)
{
	struct chunk *next;

	for (; ch; ch = next) {
		next = ch->next;
		free(ch);
	}
}

void strtab__free(struct strtab *t)
{
	if (!t)
		return;
	free_chunks(t->chunks);
	free(t->strs);
	free(t->len);
	free(t->hash);
	free(t->slots);
	free(t);
}

void strtab__clear(struct strtab *t)
{
	t->n = 1;
	if (t->slots_cap)
		memset(t->slots, 0, t->slots_cap * sizeof(*t->slots));
	if (t->chunks) {
		/* Keep the newest chunk for the next strings. */
		free_chunks(t->chunks->next);
		t->chunks->next = NULL;
		t->chunks->used = 0;
	}
}

static int rehash(struct strtab *t, size_t cap)
{
	uint32_t *slots = calloc(cap, sizeof(*slots));

	if (!slots)
		return -ENOMEM;
	for (uint32_t id = 1; id < t->n; id++) {
		size_t i = t->hash[id] & (cap - 1);

		while (slots[i])
			i = (i + 1) & (cap - 1);
		slots[i] = id;
	}
	free(t->slots);
	t->slots = slots;
	t->slots_cap = cap;
	return 0;
}

static char *store(struct strtab *t, const char *s, size_t len)
{
	struct chunk *ch = t->chunks;
	char *p;

	if (!ch || ch->cap - ch->used < len + 1) {
		size_t cap = !ch ? FIRST_CHUNK : ch->cap >= MAX_CHUNK ? MAX_CHUNK : ch->cap * 2;

		if (cap < len + 1)
			cap = len + 1;

		ch = malloc(sizeof(*ch) + cap);
		if (!ch)
			return NULL;
		ch->used = 0;
		ch->cap = cap;
		/* A full chunk stays second; the new one takes new strings. */
		ch->next = t->chunks;
		t->chunks = ch;
	}
	p = ch->data + ch->used;
	memcpy(p, s, len);
	p[len] = '\0';
	ch->used += len + 1;
	return p;
}

static uint32_t find(const struct strtab *t, const char *s, size_t len, uint32_t h)
{
	uint32_t id;

	if (!t->slots_cap)
		return 0;
	for (size_t i = h & (t->slots_cap - 1); (id = t->slots[i]);
	     i = (i + 1) & (t->slots_cap - 1)) {
		if (t->hash[id] == h && t->len[id] == len && !memcmp(t->strs[id], s, len))
			return id;
	}
	return 0;
}

uint32_t strtab__find(const struct strtab *t, const char *s, size_t len)
{
	if (!s || !len || len > UINT32_MAX - 1)
		return 0;
	return find(t, s, len, strtab__hash(s, len));
}

uint32_t strtab__intern(struct strtab *t, const char *s, size_t len)
{
	uint32_t h, id;
	size_t i;
	char *p;

	if (!s || !len)
		return 0;
	if (len > UINT32_MAX - 1)
		goto nomem;
	h = strtab__hash(s, len);
	id = find(t, s, len, h);
	if (id)
		return id;
	if (t->n >= UINT32_MAX - 1)
		goto nomem;
	if ((t->n + 1) * 2 > t->slots_cap &&
	    rehash(t, t->slots_cap ? t->slots_cap * 2 : MIN_IDS * 2))
		goto nomem;
	if (t->n + 1 > t->cap && grow_ids(t))
		goto nomem;
	p = store(t, s, len);
	if (!p)
		goto nomem;
	id = t->n++;
	t->strs[id] = p;
	t->len[id] = len;
	t->hash[id] = h;
	for (i = h & (t->slots_cap - 1); t->slots[i]; i = (i + 1) & (t->slots_cap - 1))
		;
	t->slots[i] = id;
	return id;

nomem:
	errno = ENOMEM;
	return 0;
}

const char *strtab__str(const struct strtab *t, uint32_t id)
{
	return id < t->n ? t->strs[id] : NULL;
}

size_t strtab__len(const struct strtab *t, uint32_t id)
{
	return id < t->n ? t->len[id] : 0;
}

size_t strtab__count(const struct strtab *t)
{
	return t->n;
}
