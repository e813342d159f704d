/*
 * test_pmdz.c - checks relayd/pmdz.c: what it compresses inflates back
 * (zlib's own inflater agrees), a stored block of a prefix followed by a
 * shared compressed body inflates to the whole message, a bomb stops at
 * max + 1 bytes with ERR_TOOBIG, invalid data is ERR_INVAL, and output that
 * would not be shorter is ERR_FULL.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "../../common/err.h"
#include "../../relayd/pmdz.h"
#include "../support/suite.h"

static const char body[] =
	"{\"id\":\"5c83da77af1dec6d7289834998ad7aafbd9e2191396d75ec3cc27f5a77226f36\","
	"\"pubkey\":\"f7234bd4c1394dda46d09f35bd384dd30cc552ad5541990f98844fb06676e9ca\","
	"\"created_at\":1700000000,\"kind\":1,\"tags\":[[\"p\",\"f7234bd4c1394dda46d09f35bd384dd3"
	"0cc552ad5541990f98844fb06676e9ca\"]],\"content\":\"hello hello hello hello hello\","
	"\"sig\":\"0000000000000000000000000000000000000000000000000000000000000000000000000000"
	"0000000000000000000000000000000000000000000000000000\"}";

START_TEST(round_trip)
{
	struct pmdz *z = pmdz_new(6);
	unsigned char c[1024], out[1024];
	size_t n, m;

	ck_assert_ptr_nonnull(z);
	ck_assert_int_eq(pmdz_compress(z, body, strlen(body), "]", 1, c, sizeof(c), &n), 0);
	ck_assert_uint_lt(n, strlen(body));
	/* The sync flush's last four bytes are left off (RFC 7692 7.2.1). */
	ck_assert_int_eq(pmdz_inflate(z, c, n, out, sizeof(out) - 1, &m), 0);
	ck_assert_uint_eq(m, strlen(body) + 1);
	ck_assert(memcmp(out, body, strlen(body)) == 0 && out[m - 1] == ']');
	/* Again, after a reset, the same. */
	ck_assert_int_eq(pmdz_inflate(z, c, n, out, sizeof(out) - 1, &m), 0);
	ck_assert_uint_eq(m, strlen(body) + 1);
	pmdz_free(z);
}
END_TEST

/* send.c's live delivery: a stored block of the prefix, then the body
 * compressed once. */
START_TEST(stored_prefix_then_shared_body)
{
	static const char head[] = "[\"EVENT\",\"sub-1\",";
	struct pmdz *z = pmdz_new(6);
	unsigned char msg[1024], out[1024];
	size_t at = 0, n, m;

	pmdz_stored_header(msg, strlen(head));
	at = PMDZ_STORED_HEAD;
	memcpy(msg + at, head, strlen(head));
	at += strlen(head);
	ck_assert_int_eq(pmdz_compress(z, body, strlen(body), "]", 1, msg + at, sizeof(msg) - at, &n),
			 0);
	at += n;
	ck_assert_int_eq(pmdz_inflate(z, msg, at, out, sizeof(out) - 1, &m), 0);
	ck_assert_uint_eq(m, strlen(head) + strlen(body) + 1);
	ck_assert(memcmp(out, head, strlen(head)) == 0);
	ck_assert(memcmp(out + strlen(head), body, strlen(body)) == 0);
	pmdz_free(z);
}
END_TEST

/* size bytes of 'a' deflated by zlib itself, sync-flushed, tail cut. */
static unsigned char *bomb(size_t size, size_t *len)
{
	z_stream s;
	unsigned char *in = malloc(size), *out = malloc(size / 100 + 1024);

	memset(in, 'a', size);
	memset(&s, 0, sizeof(s));
	ck_assert_int_eq(deflateInit2(&s, 9, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY), Z_OK);
	s.next_in = in;
	s.avail_in = (uInt)size;
	s.next_out = out;
	s.avail_out = (uInt)(size / 100 + 1024);
	ck_assert_int_eq(deflate(&s, Z_SYNC_FLUSH), Z_OK);
	*len = s.total_out - 4;
	deflateEnd(&s);
	free(in);
	return out;
}

START_TEST(bomb_stops_past_max)
{
	struct pmdz *z = pmdz_new(6);
	size_t len, m = 0, max = 4096;
	unsigned char *in = bomb(64 << 20, &len);
	unsigned char *out = malloc(max + 2);

	out[max + 1] = 0xee;
	ck_assert_int_eq(pmdz_inflate(z, in, len, out, max, &m), ERR_TOOBIG);
	ck_assert_uint_eq(out[max + 1], 0xee); /* nothing written past max + 1 */
	free(in);
	/* Exactly max inflates; one more byte does not. */
	in = bomb(max, &len);
	ck_assert_int_eq(pmdz_inflate(z, in, len, out, max, &m), 0);
	ck_assert_uint_eq(m, max);
	ck_assert_int_eq(pmdz_inflate(z, in, len, out, max - 1, &m), ERR_TOOBIG);
	free(in);
	free(out);
	pmdz_free(z);
}
END_TEST

START_TEST(invalid_data)
{
	static const unsigned char reserved_type[] = { 0xff, 0xff, 0xff };
	static const unsigned char bad_stored[] = { 0x00, 0x05, 0x00, 0x00, 0x00, 'a' };
	struct pmdz *z = pmdz_new(6);
	unsigned char out[64];
	size_t m;

	ck_assert_int_eq(pmdz_inflate(z, reserved_type, sizeof(reserved_type), out, 63, &m), ERR_INVAL);
	ck_assert_int_eq(pmdz_inflate(z, bad_stored, sizeof(bad_stored), out, 63, &m), ERR_INVAL);
	/* The inflater is usable after an error. */
	ck_assert_int_eq(pmdz_inflate(z, (const unsigned char *)"", 0, out, 63, &m), 0);
	ck_assert_uint_eq(m, 0);
	pmdz_free(z);
}
END_TEST

/* A message ending with a final block (BFINAL) is fine too. */
START_TEST(final_block)
{
	unsigned char c[1024], out[1024];
	struct pmdz *z = pmdz_new(6);
	z_stream s;
	size_t m;

	memset(&s, 0, sizeof(s));
	ck_assert_int_eq(deflateInit2(&s, 6, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY), Z_OK);
	s.next_in = (Bytef *)body;
	s.avail_in = (uInt)strlen(body);
	s.next_out = c;
	s.avail_out = sizeof(c);
	ck_assert_int_eq(deflate(&s, Z_FINISH), Z_STREAM_END);
	ck_assert_int_eq(pmdz_inflate(z, c, s.total_out, out, sizeof(out) - 1, &m), 0);
	ck_assert_uint_eq(m, strlen(body));
	deflateEnd(&s);
	pmdz_free(z);
}
END_TEST

START_TEST(incompressible_is_full)
{
	unsigned char in[512], c[512 + 4];
	struct pmdz *z = pmdz_new(6);
	size_t n;

	srand(7);
	for (size_t i = 0; i < sizeof(in); i++)
		in[i] = (unsigned char)rand();
	ck_assert_int_eq(pmdz_compress(z, in, sizeof(in), NULL, 0, c, sizeof(c), &n), ERR_FULL);
	pmdz_free(z);
}
END_TEST

START_TEST(stored_header)
{
	unsigned char h[PMDZ_STORED_HEAD];

	pmdz_stored_header(h, 0x1234);
	ck_assert(h[0] == 0 && h[1] == 0x34 && h[2] == 0x12 && h[3] == 0xcb && h[4] == 0xed);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("pmdz");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, round_trip);
	tcase_add_test(tc, stored_prefix_then_shared_body);
	tcase_add_test(tc, bomb_stops_past_max);
	tcase_add_test(tc, invalid_data);
	tcase_add_test(tc, final_block);
	tcase_add_test(tc, incompressible_is_full);
	tcase_add_test(tc, stored_header);
	suite_add_tcase(s, tc);
	return suite_run(s);
}
