/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The writer's side of a devtrace buffer (docs/devtrace.md, "Writing"), as
 * inline functions over a buffer already mapped and laid out: the one
 * publication order every writer follows (the simulated device, the
 * in-process agent). Creating and mapping the file is each writer's own
 * business; so is finding a name already published (the table is
 * append-only, so a writer may keep its own index of it).
 *
 * Include acceltrace/devtrace.h first. Like every shared header this one
 * includes nothing.
 */
#ifndef ACCELTRACE_DEVTRACE_PUBLISH_H
#define ACCELTRACE_DEVTRACE_PUBLISH_H

struct devtrace_map {
	struct devtrace_header *hdr;
	struct devtrace_name *names;
	struct devtrace_record *ring;
	__u64 capacity;
	__u64 seq;		/* the last seq published */
};

/* Offsets of a buffer with @name_capacity names and @record_capacity
 * slots (either pointer may be NULL); returns the file's size. */
static inline __u64 devtrace_layout(__u32 name_capacity, __u64 record_capacity,
				    __u64 *names_offset, __u64 *records_offset)
{
	__u64 names = DEVTRACE_HEADER_SIZE;
	__u64 records = (names + (__u64)name_capacity * DEVTRACE_NAME_SIZE + 4095) & ~4095ULL;

	if (names_offset)
		*names_offset = names;
	if (records_offset)
		*records_offset = records;
	return records + record_capacity * DEVTRACE_RECORD_SIZE;
}

/* The format's part of a new header of that layout (version, sizes,
 * offsets, capacities); what the device is, the writer fills. */
static inline void devtrace_header__init_layout(struct devtrace_header *h,
						__u32 name_capacity, __u64 record_capacity)
{
	__u64 names_offset, records_offset;

	devtrace_layout(name_capacity, record_capacity, &names_offset, &records_offset);
	h->version = DEVTRACE_VERSION;
	h->header_size = DEVTRACE_HEADER_SIZE;
	h->record_size = DEVTRACE_RECORD_SIZE;
	h->name_size = DEVTRACE_NAME_SIZE;
	h->name_capacity = name_capacity;
	h->names_offset = names_offset;
	h->records_offset = records_offset;
	h->record_capacity = record_capacity;
}

/* @base: the mapped file, its header filled except magic, which this
 * stores last (a reader that sees it sees a whole header). */
static inline void devtrace_map__publish_header(struct devtrace_map *m, void *base)
{
	m->hdr = (struct devtrace_header *)base;
	m->names = (struct devtrace_name *)((char *)base + m->hdr->names_offset);
	m->ring = (struct devtrace_record *)((char *)base + m->hdr->records_offset);
	m->capacity = m->hdr->record_capacity;
	m->seq = 0;
	__atomic_store_n(&m->hdr->magic, DEVTRACE_MAGIC, __ATOMIC_RELEASE);
}

/*
 * Publishes @rec (its seq is set here) and returns its seq. Claims the slot
 * first: a reader that copied it meanwhile sees begin_seq past it and drops
 * the copy. A single writer per buffer.
 */
static inline __u64 devtrace_map__emit(struct devtrace_map *m, const struct devtrace_record *rec)
{
	__u64 s = ++m->seq;
	struct devtrace_record *slot = &m->ring[(s - 1) % m->capacity];

	__atomic_store_n(&m->hdr->begin_seq, s, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	__builtin_memcpy((char *)slot + 8, (const char *)rec + 8, sizeof(*rec) - 8);
	__atomic_store_n(&slot->seq, s, __ATOMIC_RELEASE);
	__atomic_store_n(&m->hdr->write_seq, s, __ATOMIC_RELEASE);
	return s;
}

/*
 * Appends a name of @len bytes: the first DEVTRACE_NAME_MAX in an entry of
 * @kind, the rest (up to DEVTRACE_LONG_NAME_MAX in all) in MORE entries
 * after it, all published by one name_count store. Returns the first
 * entry's id, or DEVTRACE_NO_NAME when the table has no room for the
 * whole name (counted in names_dropped).
 */
static inline __u32 devtrace_map__add_name(struct devtrace_map *m, int kind, const char *name,
					   __u64 len)
{
	__u64 n = m->hdr->name_count, entries, i;

	if (len > DEVTRACE_LONG_NAME_MAX)
		len = DEVTRACE_LONG_NAME_MAX;
	entries = len > DEVTRACE_NAME_MAX ? (len + DEVTRACE_NAME_MAX - 1) / DEVTRACE_NAME_MAX : 1;
	if (n + entries > m->hdr->name_capacity) {
		__atomic_store_n(&m->hdr->names_dropped, m->hdr->names_dropped + 1,
				 __ATOMIC_RELAXED);
		return DEVTRACE_NO_NAME;
	}
	for (i = 0; i < entries; i++) {
		struct devtrace_name *e = &m->names[n + i];
		__u64 part = len - i * DEVTRACE_NAME_MAX;

		if (part > DEVTRACE_NAME_MAX)
			part = DEVTRACE_NAME_MAX;
		e->id = (__u32)(n + i);
		e->kind = (__u16)(i ? DEVTRACE_NAME_MORE : kind);
		e->len = (__u16)part;
		__builtin_memset(e->name, 0, DEVTRACE_NAME_MAX);
		__builtin_memcpy(e->name, name + i * DEVTRACE_NAME_MAX, part);
	}
	__atomic_store_n(&m->hdr->name_count, n + entries, __ATOMIC_RELEASE);
	return (__u32)n;
}

/* A clean shutdown: no more records will come. */
static inline void devtrace_map__close(struct devtrace_map *m)
{
	if (m->hdr)
		__atomic_fetch_or(&m->hdr->flags, DEVTRACE_F_CLOSED, __ATOMIC_RELEASE);
}

#endif /* ACCELTRACE_DEVTRACE_PUBLISH_H */
