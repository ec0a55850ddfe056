/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Protocol buffers wire encoding, written straight to a FILE: varints,
 * tags, length-delimited fields, whole protobuf-c messages as fields, and
 * length-delimited fields whose length is not known in advance (a
 * fixed-width varint placeholder, patched by seeking back once the field is
 * done; parsers accept such non-minimal varints). Knows no message of ours.
 *
 * Errors are sticky: the first one stays in o->err and every later call
 * does nothing, so a writer checks once at the end.
 *
 *	struct pb_out o;
 *	pb_out__init(&o, f, max_bytes);	// f seekable for pb_begin_len
 *	at = pb_begin_len(&o, 1);
 *	pb_string_field(&o, 2, "name");
 *	pb_end_len(&o, at);
 *	err = o.err;
 *	pb_out__release(&o);
 */
#ifndef ACCELTRACE_PB_WIRE_H
#define ACCELTRACE_PB_WIRE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include <protobuf-c/protobuf-c.h>

#define PB_WIRE_VARINT 0
#define PB_WIRE_LEN 2
/* Placeholder width: 35 bits, every length under a 2 GiB message cap. */
#define PB_LEN_PLACEHOLDER_BYTES 5

struct pb_out {
	FILE *f;
	off_t base;		/* stream offset where the output starts */
	uint64_t pos;		/* bytes written */
	uint64_t max;		/* more is -EFBIG */
	int err;		/* first error, sticky: 0 or -errno */
	uint8_t *packed;	/* pb_message_field's buffer, reused */
	size_t packed_cap;
};

/* Starts at f's current offset; -errno when f cannot tell it. */
int pb_out__init(struct pb_out *o, FILE *f, uint64_t max_bytes);
/* Frees the buffer; o->err and o->pos stay readable. */
void pb_out__release(struct pb_out *o);

/* The varint encoding of v into buf (10 bytes suffice); its length. */
size_t pb_varint_encode(uint8_t *buf, uint64_t v);

void pb_bytes(struct pb_out *o, const void *p, size_t n);
void pb_varint(struct pb_out *o, uint64_t v);
void pb_tag(struct pb_out *o, uint32_t field, uint32_t wire);
void pb_len_field(struct pb_out *o, uint32_t field, const void *p, size_t n);
void pb_string_field(struct pb_out *o, uint32_t field, const char *s);
/* An int64 field; nothing for 0 (the proto3 default). */
void pb_int64_field(struct pb_out *o, uint32_t field, int64_t v);
/* A protobuf-c message, packed, as a length-delimited field. */
void pb_message_field(struct pb_out *o, uint32_t field, const ProtobufCMessage *msg);

/*
 * Opens a length-delimited field of unknown length: the tag and a
 * placeholder. Returns where the placeholder is, for pb_end_len, which
 * patches in the length of everything written since (-EFBIG when it does
 * not fit the placeholder).
 */
uint64_t pb_begin_len(struct pb_out *o, uint32_t field);
void pb_end_len(struct pb_out *o, uint64_t at);

#endif /* ACCELTRACE_PB_WIRE_H */
