/*
 * test_hll.c - checks stored/hll.c, the NIP-45 HyperLogLog.
 *
 * Eligibility: a filter (parsed from JSON with filter_parse) qualifies when
 * it has exactly one tag constraint with exactly one value of 64 lowercase
 * hex digits; other fields (kinds, authors, since...) do not matter.  The
 * offset is the hex digit at position 32 of that value plus 8.
 *
 * Registers: for each pubkey, index = pubkey[offset], value = 1 + the
 * number of leading zero bits of the bytes after offset; a register keeps
 * its maximum.  The vectors below were worked out by hand from that rule
 * (the comment on each says how), not produced by the code under test.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "../../common/filter.h"
#include "../../stored/hll.h"
#include "../support/suite.h"

/* 64 hex digits whose digit at position 32 is d (positions 0..31 are "1",
 * 33..63 are "2"). */
static const char *value_with_digit(char d)
{
	static char v[65];

	memset(v, '1', 32);
	v[32] = d;
	memset(v + 33, '2', 31);
	v[64] = '\0';
	return v;
}

static int offset_of(const char *json)
{
	cJSON *obj = cJSON_Parse(json);
	struct filter f;
	char why[160];
	int offset;

	ck_assert_msg(obj != NULL, "test JSON does not parse: %s", json);
	ck_assert_msg(filter_parse(obj, NULL, &f, why, sizeof(why)) == 0, "%s: %s", json, why);
	cJSON_Delete(obj);
	offset = hll_offset(&f);
	filter_free(&f);
	return offset;
}

/* The hex digit at position 32 decides the offset: 0 -> 8 ... f -> 23. */
START_TEST(test_offset_per_digit)
{
	static const char digits[] = "0123456789abcdef";
	char json[200];

	snprintf(json, sizeof(json), "{\"kinds\":[7],\"#e\":[\"%s\"]}", value_with_digit(digits[_i]));
	ck_assert_int_eq(offset_of(json), _i + 8);
}
END_TEST

/* Only position 32 matters, not its neighbours. */
START_TEST(test_offset_position)
{
	char v[65], json[200];

	memset(v, 'f', 64);
	v[32] = '3';
	v[64] = '\0';
	snprintf(json, sizeof(json), "{\"#p\":[\"%s\"]}", v);
	ck_assert_int_eq(offset_of(json), 11);
	v[32] = 'f';
	v[31] = '0';
	v[33] = '0';
	snprintf(json, sizeof(json), "{\"#p\":[\"%s\"]}", v);
	ck_assert_int_eq(offset_of(json), 23);
}
END_TEST

/* Other fields and the tag's letter do not matter. */
START_TEST(test_offset_eligible_shapes)
{
	char json[400];
	const char *v = value_with_digit('a');

	snprintf(json, sizeof(json), "{\"#e\":[\"%s\"]}", v);
	ck_assert_int_eq(offset_of(json), 18);
	snprintf(json, sizeof(json), "{\"kinds\":[3],\"#p\":[\"%s\"]}", v);
	ck_assert_int_eq(offset_of(json), 18);
	snprintf(json, sizeof(json), "{\"#t\":[\"%s\"],\"since\":1,\"until\":2,\"limit\":3}", v);
	ck_assert_int_eq(offset_of(json), 18);
	snprintf(json, sizeof(json), "{\"#q\":[\"%s\"],\"authors\":[\"%s\"]}", v, v);
	ck_assert_int_eq(offset_of(json), 18);
}
END_TEST

/* Not eligible: no tag, two tags, two values, a value that is not 64
 * lowercase hex digits. */
START_TEST(test_offset_ineligible)
{
	const char *v = value_with_digit('5');
	char upper[65], json[400];

	ck_assert_int_eq(offset_of("{}"), -1);
	ck_assert_int_eq(offset_of("{\"kinds\":[7]}"), -1);
	snprintf(json, sizeof(json), "{\"ids\":[\"%s\"]}", v);
	ck_assert_int_eq(offset_of(json), -1);
	snprintf(json, sizeof(json), "{\"authors\":[\"%s\"]}", v);
	ck_assert_int_eq(offset_of(json), -1);
	ck_assert_int_eq(offset_of("{\"#e\":[]}"), -1);
	snprintf(json, sizeof(json), "{\"#e\":[\"%s\",\"%s\"]}", v, value_with_digit('6'));
	ck_assert_int_eq(offset_of(json), -1);
	snprintf(json, sizeof(json), "{\"#e\":[\"%s\"],\"#t\":[\"x\"]}", v);
	ck_assert_int_eq(offset_of(json), -1);
	snprintf(json, sizeof(json), "{\"#t\":[\"%.63s\"]}", v);
	ck_assert_int_eq(offset_of(json), -1);
	snprintf(json, sizeof(json), "{\"#t\":[\"%s0\"]}", v);
	ck_assert_int_eq(offset_of(json), -1);
	snprintf(json, sizeof(json), "{\"#t\":[\"%.63sg\"]}", v);
	ck_assert_int_eq(offset_of(json), -1);
	strcpy(upper, value_with_digit('b'));
	upper[32] = 'B';
	snprintf(json, sizeof(json), "{\"#t\":[\"%s\"]}", upper);
	ck_assert_int_eq(offset_of(json), -1);
	strcpy(upper, value_with_digit('b'));
	upper[0] = 'A';
	snprintf(json, sizeof(json), "{\"#t\":[\"%s\"]}", upper);
	ck_assert_int_eq(offset_of(json), -1);
}
END_TEST

/* A pubkey of filler bytes 0xff with the given bytes set from at. */
static void pubkey(uint8_t pk[32], int at, const uint8_t *bytes, int n)
{
	memset(pk, 0xff, 32);
	memcpy(pk + at, bytes, (size_t)n);
}

static void assert_only(const uint8_t reg[HLL_REGISTERS], int index, uint8_t value)
{
	for (int i = 0; i < HLL_REGISTERS; i++)
		ck_assert_msg(reg[i] == (i == index ? value : 0), "register %d is %u (want %u)", i,
			      reg[i], i == index ? value : 0);
}

/* {bytes from offset on, index, value}: index is the byte at offset, value
 * 1 + leading zero bits of what follows (the filler 0xff stops the count). */
static const struct {
	int offset;
	uint8_t bytes[10];
	int n;
	int index;
	uint8_t value;
} vectors[] = {
	{ 8, { 0x05, 0x80 }, 2, 5, 1 },          /* 1000 0000: no zeros */
	{ 8, { 0x05, 0x40 }, 2, 5, 2 },          /* 0100 0000: one */
	{ 8, { 0x05, 0x01 }, 2, 5, 8 },          /* 0000 0001: seven */
	{ 8, { 0xfe, 0x00, 0x80 }, 3, 254, 9 },  /* a zero byte, then 1... */
	{ 8, { 0x00, 0x00, 0x00, 0x10 }, 4, 0, 20 }, /* 8 + 8 + 3 zeros */
	{ 12, { 0x80, 0x20 }, 2, 128, 3 },       /* 0010 0000 */
	{ 23, { 0x11, 0x0f }, 2, 17, 5 },        /* 0000 1111 */
	{ 23, { 0xff, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01 }, 9, 255, 64 },
	{ 23, { 0x07, 0, 0, 0, 0, 0, 0, 0, 0 }, 9, 7, 65 }, /* all 64 bits zero */
	{ 15, { 0x42, 0xff }, 2, 66, 1 },
};

START_TEST(test_register_vectors)
{
	uint8_t reg[HLL_REGISTERS] = { 0 }, pk[32];

	pubkey(pk, vectors[_i].offset, vectors[_i].bytes, vectors[_i].n);
	hll_add(reg, vectors[_i].offset, pk);
	assert_only(reg, vectors[_i].index, vectors[_i].value);
}
END_TEST

/* Bytes before the offset play no part. */
START_TEST(test_register_ignores_prefix)
{
	uint8_t reg[HLL_REGISTERS] = { 0 }, pk[32];

	memset(pk, 0, 32);
	pk[10] = 0x09;
	pk[11] = 0x10; /* 0001 0000: three zeros */
	memset(pk + 12, 0xff, 20);
	hll_add(reg, 10, pk);
	assert_only(reg, 9, 4);
}
END_TEST

/* A register keeps the largest value seen; registers are independent. */
START_TEST(test_register_keeps_max)
{
	uint8_t reg[HLL_REGISTERS] = { 0 }, pk[32];

	pubkey(pk, 8, (const uint8_t[]){ 0x30, 0x10 }, 2); /* index 48, value 4 */
	hll_add(reg, 8, pk);
	pubkey(pk, 8, (const uint8_t[]){ 0x30, 0x40 }, 2); /* index 48, value 2 */
	hll_add(reg, 8, pk);
	ck_assert_uint_eq(reg[48], 4);
	pubkey(pk, 8, (const uint8_t[]){ 0x30, 0x02 }, 2); /* index 48, value 7 */
	hll_add(reg, 8, pk);
	ck_assert_uint_eq(reg[48], 7);
	pubkey(pk, 8, (const uint8_t[]){ 0x31, 0x80 }, 2); /* index 49, value 1 */
	hll_add(reg, 8, pk);
	ck_assert_uint_eq(reg[48], 7);
	ck_assert_uint_eq(reg[49], 1);
	for (int i = 0; i < HLL_REGISTERS; i++)
		if (i != 48 && i != 49)
			ck_assert_uint_eq(reg[i], 0);
	/* the same pubkey twice changes nothing */
	hll_add(reg, 8, pk);
	ck_assert_uint_eq(reg[49], 1);
}
END_TEST

/* The same pubkeys at different offsets land in different registers. */
START_TEST(test_register_offset_matters)
{
	uint8_t a[HLL_REGISTERS] = { 0 }, b[HLL_REGISTERS] = { 0 }, pk[32];

	for (int i = 0; i < 32; i++)
		pk[i] = (uint8_t)(i * 8 + 1); /* byte i = 8i+1 */
	hll_add(a, 8, pk);  /* index 65; next byte 73 = 0100 1001: value 2 */
	hll_add(b, 20, pk); /* index 161; next byte 169 = 1010 1001: value 1 */
	assert_only(a, 65, 2);
	assert_only(b, 161, 1);
}
END_TEST

static Suite *hll_suite(void)
{
	Suite *s = suite_create("hll");
	TCase *tc = tcase_create("offset");

	tcase_add_loop_test(tc, test_offset_per_digit, 0, 16);
	tcase_add_test(tc, test_offset_position);
	tcase_add_test(tc, test_offset_eligible_shapes);
	tcase_add_test(tc, test_offset_ineligible);
	suite_add_tcase(s, tc);
	tc = tcase_create("registers");
	tcase_add_loop_test(tc, test_register_vectors, 0, (int)(sizeof(vectors) / sizeof(vectors[0])));
	tcase_add_test(tc, test_register_ignores_prefix);
	tcase_add_test(tc, test_register_keeps_max);
	tcase_add_test(tc, test_register_offset_matters);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return suite_run(hll_suite());
}
