// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Protocol buffers wire encoding to a buffered FILE (see pb_wire.h): the
 * framing a streaming writer needs around the messages protobuf-c packs.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/array.h"
#include "output/pb_wire.h"

int pb_out__init(struct pb_out *o, FILE *f, uint64_t max_bytes)
{
	off_t base = ftello(f);

	memset(o, 0, sizeof(*o));
	if (base < 0)
		return -errno;
	o->f = f;
	o->base = base;
	o->max = max_bytes;
	return 0;
}

void pb_out__release(struct pb_out *o)
{
	free(o->packed);
	o->packed = NULL;
	o->packed_cap = 0;
}

void pb_bytes(struct pb_out *o, const void *p, size_t n)
{
	if (o->err || !n)
		return;
	if (o->pos + n > o->max) {
		o->err = -EFBIG;
		return;
	}
	errno = 0;
	if (fwrite(p, 1, n, o->f) != n) {
		o->err = errno ? -errno : -EIO;
		return;
	}
	o->pos += n;
}

size_t pb_varint_encode(uint8_t *buf, uint64_t v)
{
	size_t n = 0;

	while (v >= 0x80) {
		buf[n++] = (uint8_t)v | 0x80;
		v >>= 7;
	}
	buf[n++] = (uint8_t)v;
	return n;
}

void pb_varint(struct pb_out *o, uint64_t v)
{
	uint8_t buf[10];

	pb_bytes(o, buf, pb_varint_encode(buf, v));
}

void pb_tag(struct pb_out *o, uint32_t field, uint32_t wire)
{
	pb_varint(o, (uint64_t)field << 3 | wire);
}

void pb_len_field(struct pb_out *o, uint32_t field, const void *p, size_t n)
{
	pb_tag(o, field, PB_WIRE_LEN);
	pb_varint(o, n);
	pb_bytes(o, p, n);
}

void pb_string_field(struct pb_out *o, uint32_t field, const char *s)
{
	pb_len_field(o, field, s, strlen(s));
}

void pb_int64_field(struct pb_out *o, uint32_t field, int64_t v)
{
	if (!v)
		return;		/* proto3 default */
	pb_tag(o, field, PB_WIRE_VARINT);
	pb_varint(o, (uint64_t)v);
}

void pb_message_field(struct pb_out *o, uint32_t field, const ProtobufCMessage *msg)
{
	size_t size;

	if (o->err)
		return;
	size = protobuf_c_message_get_packed_size(msg);
	if (size > o->max) {
		o->err = -EFBIG;
		return;
	}
	if (ARRAY_GROW(o->packed, o->packed_cap, size ? size : 1)) {
		o->err = -ENOMEM;
		return;
	}
	protobuf_c_message_pack(msg, o->packed);
	pb_len_field(o, field, o->packed, size);
}

uint64_t pb_begin_len(struct pb_out *o, uint32_t field)
{
	static const uint8_t placeholder[PB_LEN_PLACEHOLDER_BYTES] = {
		0x80, 0x80, 0x80, 0x80, 0x00
	};
	uint64_t at;

	pb_tag(o, field, PB_WIRE_LEN);
	at = o->pos;
	pb_bytes(o, placeholder, sizeof(placeholder));
	return at;
}

void pb_end_len(struct pb_out *o, uint64_t at)
{
	uint64_t len = o->pos - at - PB_LEN_PLACEHOLDER_BYTES;
	uint8_t b[PB_LEN_PLACEHOLDER_BYTES];

	if (o->err)
		return;
	if (len >> (7 * PB_LEN_PLACEHOLDER_BYTES)) {
		o->err = -EFBIG;
		return;
	}
	/* A padded varint: continuation bits on all but the last byte. */
	for (int i = 0; i < PB_LEN_PLACEHOLDER_BYTES; i++)
		b[i] = ((len >> (7 * i)) & 0x7f) |
		       (i < PB_LEN_PLACEHOLDER_BYTES - 1 ? 0x80 : 0);
	errno = 0;
	if (fseeko(o->f, o->base + (off_t)at, SEEK_SET) ||
	    fwrite(b, 1, sizeof(b), o->f) != sizeof(b) ||
	    fseeko(o->f, o->base + (off_t)o->pos, SEEK_SET))
		o->err = errno ? -errno : -EIO;
}
