/*-------------------------------------------------------------------------
 *
 * fuzz_input.h
 *	  Reading a fuzzer's byte string as a sequence of choices.
 *
 * Every target decodes its input with these: a choice reads the next few
 * bytes, and an exhausted input reads as zeros, so that every byte string
 * is a valid input and short ones mean "the simplest choice".  Small
 * changes to the bytes are small changes to the decoded case, which is
 * what lets coverage guidance work.
 *
 * test/fuzz/fuzz_input.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef WA_FUZZ_INPUT_H
#define WA_FUZZ_INPUT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef struct fuzz_input
{
	const uint8_t *data;
	size_t		size;
	size_t		pos;
} fuzz_input;

static inline uint8_t
take_u8(fuzz_input *in)
{
	return in->pos < in->size ? in->data[in->pos++] : 0;
}

static inline uint16_t
take_u16(fuzz_input *in)
{
	uint16_t	v = take_u8(in);

	return (uint16_t) (v | take_u8(in) << 8);
}

static inline uint64_t
take_u64(fuzz_input *in)
{
	uint64_t	v = 0;

	for (int i = 0; i < 8; i++)
		v |= (uint64_t) take_u8(in) << (8 * i);
	return v;
}

/* A number in [0, n), n > 0, from as few bytes as it needs. */
static inline uint64_t
take_below(fuzz_input *in, uint64_t n)
{
	uint64_t	v = take_u8(in);

	if (n > 256)
		v |= (uint64_t) take_u8(in) << 8;
	if (n > 65536)
		v = take_u64(in);
	return v % n;
}

/* Up to max bytes, as many as are left; returns how many. */
static inline size_t
take_bytes(fuzz_input *in, const uint8_t **p, size_t max)
{
	size_t		n = in->size - in->pos;

	if (n > max)
		n = max;
	*p = in->data + in->pos;
	in->pos += n;
	return n;
}

static inline size_t
fuzz_left(const fuzz_input *in)
{
	return in->size - in->pos;
}

#endif							/* WA_FUZZ_INPUT_H */
