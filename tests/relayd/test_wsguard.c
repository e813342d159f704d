/*
 * test_wsguard.c - checks relayd/wsguard.c's scanner: masked frames of
 * every length encoding pass whole; the first unmasked frame is cut at its
 * first byte, wherever the reads split the stream; plain requests are
 * followed past their bodies to an upgrade on the same connection; and the
 * descriptor table forgets.
 */
#include <check.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../relayd/wsguard.h"
#include "../support/suite.h"

static const char upgrade_head[] = "GET / HTTP/1.1\r\nHost: x\r\nUPGRADE:  WebSocket\r\n"
				   "Connection: Upgrade\r\nSec-WebSocket-Version: 13\r\n\r\n";

struct stream_bytes {
	uint8_t data[200000];
	size_t len;
};

static void put(struct stream_bytes *b, const void *p, size_t n)
{
	ck_assert_uint_le(b->len + n, sizeof(b->data));
	memcpy(b->data + b->len, p, n);
	b->len += n;
}

/* A text frame of n payload bytes, masked or not. */
static void put_frame(struct stream_bytes *b, size_t n, int masked)
{
	uint8_t hdr[14];
	size_t h = 0;

	hdr[h++] = 0x81;
	if (n < 126) {
		hdr[h++] = (uint8_t)((masked ? 0x80 : 0) | n);
	} else if (n < 65536) {
		hdr[h++] = (uint8_t)((masked ? 0x80 : 0) | 126);
		hdr[h++] = (uint8_t)(n >> 8);
		hdr[h++] = (uint8_t)n;
	} else {
		hdr[h++] = (uint8_t)((masked ? 0x80 : 0) | 127);
		for (int i = 7; i >= 0; i--)
			hdr[h++] = (uint8_t)((uint64_t)n >> (8 * i));
	}
	if (masked)
		for (int i = 0; i < 4; i++)
			hdr[h++] = (uint8_t)(0x10 + i);
	put(b, hdr, h);
	for (size_t i = 0; i < n; i++)
		put(b, "x", 1);
}

/* Scans b in reads of at most chunk bytes; returns the bytes passed on. */
static size_t scan_in_chunks(const struct stream_bytes *b, size_t chunk, struct wsguard_stream *st)
{
	size_t passed = 0;

	wsguard_stream_init(st);
	for (size_t at = 0; at < b->len; at += chunk) {
		size_t n = b->len - at < chunk ? b->len - at : chunk;
		size_t pass = wsguard_scan(st, b->data + at, n);

		passed += pass;
		if (pass < n)
			break;
	}
	return passed;
}

START_TEST(test_masked_frames_pass)
{
	static struct stream_bytes b;
	struct wsguard_stream st;

	b.len = 0;
	put(&b, upgrade_head, strlen(upgrade_head));
	put_frame(&b, 0, 1);
	put_frame(&b, 125, 1);
	put_frame(&b, 126, 1);
	put_frame(&b, 70000, 1);
	put_frame(&b, 5, 1);
	for (size_t chunk = 1; chunk <= 4096; chunk = chunk * 3 + 1) {
		ck_assert_uint_eq(scan_in_chunks(&b, chunk, &st), b.len);
		ck_assert_int_eq(st.phase, WSGUARD_FRAME);
	}
}
END_TEST

START_TEST(test_unmasked_frame_is_cut_at_its_first_byte)
{
	static struct stream_bytes b;
	struct wsguard_stream st;
	size_t cut;

	b.len = 0;
	put(&b, upgrade_head, strlen(upgrade_head));
	put_frame(&b, 300, 1);
	cut = b.len;
	put_frame(&b, 10, 0);
	put_frame(&b, 10, 1);
	/* Whole, and in every split: what passes never reaches the unmasked
	 * frame's first byte, and stops no earlier than the read it began in. */
	ck_assert_uint_eq(scan_in_chunks(&b, b.len, &st), cut);
	ck_assert_int_eq(st.phase, WSGUARD_BROKEN);
	for (size_t chunk = 1; chunk < 64; chunk++) {
		size_t passed = scan_in_chunks(&b, chunk, &st);

		ck_assert_int_eq(st.phase, WSGUARD_BROKEN);
		ck_assert_uint_le(passed, cut + 1); /* its first byte may have come in the read before */
		ck_assert_uint_ge(passed + chunk, cut + 1);
	}
	/* Broken stays broken. */
	ck_assert_uint_eq(wsguard_scan(&st, (const uint8_t *)"\x81\x80\0\0\0\0", 6), 0);
}
END_TEST

/* Plain requests are followed past their bodies to the next request on
 * the connection: frame-like bytes in a body are no frame, and an upgrade
 * after them is followed. */
START_TEST(test_keep_alive_requests_then_an_upgrade)
{
	static struct stream_bytes b;
	static const char get[] = "GET / HTTP/1.1\r\nAccept: application/nostr+json\r\n\r\n";
	static const char post[] = "POST / HTTP/1.1\r\nContent-Type: application/nostr+json+rpc\r\n"
				   "Content-Length:  6\r\n\r\n";
	struct wsguard_stream st;
	size_t cut;

	b.len = 0;
	put(&b, get, strlen(get));
	put(&b, post, strlen(post));
	put(&b, "\x81\x04" "abcd", 6); /* the body: looks like an unmasked frame */
	put(&b, "GET /x HTTP/1.1\r\nUpgrade: h2c\r\n\r\n", 34);
	put(&b, upgrade_head, strlen(upgrade_head));
	put_frame(&b, 2, 1);
	cut = b.len;
	put_frame(&b, 2, 0);
	for (size_t chunk = 1; chunk <= b.len; chunk = chunk * 2 + 1) {
		size_t passed = scan_in_chunks(&b, chunk, &st);

		ck_assert_int_eq(st.phase, WSGUARD_BROKEN);
		ck_assert_uint_le(passed, cut + 1);
		ck_assert_uint_ge(passed + chunk, cut + 1);
	}
}
END_TEST

/* A chunked body is not followed: the connection is left alone after it. */
START_TEST(test_chunked_body_ends_the_following)
{
	static const char req[] = "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"
				  "2\r\n\x81\x04\r\n0\r\n\r\n";
	struct wsguard_stream st;

	wsguard_stream_init(&st);
	ck_assert_uint_eq(wsguard_scan(&st, (const uint8_t *)req, strlen(req)), strlen(req));
	ck_assert_int_eq(st.phase, WSGUARD_OFF);
}
END_TEST

/* Blank lines ahead of the request do not end its head early. */
START_TEST(test_leading_blank_lines)
{
	static struct stream_bytes b;
	struct wsguard_stream st;

	b.len = 0;
	put(&b, "\r\n", 2);
	put(&b, upgrade_head, strlen(upgrade_head));
	put_frame(&b, 3, 0);
	ck_assert_uint_eq(scan_in_chunks(&b, b.len, &st), b.len - 5);
	ck_assert_int_eq(st.phase, WSGUARD_BROKEN);
}
END_TEST

START_TEST(test_head_too_long_is_left_alone)
{
	static struct stream_bytes b;
	struct wsguard_stream st;

	b.len = 0;
	put(&b, "GET / HTTP/1.1\r\n", 16);
	while (b.len < WSGUARD_HEAD_MAX + 100)
		put(&b, "X-Filler: 0123456789\r\n", 22);
	put(&b, "Upgrade: websocket\r\n\r\n", 22);
	put_frame(&b, 3, 0);
	ck_assert_uint_eq(scan_in_chunks(&b, 1000, &st), b.len);
	ck_assert_int_eq(st.phase, WSGUARD_OFF);
}
END_TEST

/* A followed descriptor is filtered; one never followed, or forgotten,
 * passes everything.  (The descriptor numbers are not opened: the table
 * only keys on them, and a broken stream's shutdown() of a closed number
 * fails harmlessly.) */
START_TEST(test_table_follows_and_forgets)
{
	static struct stream_bytes b;
	const int fd = 7;

	b.len = 0;
	put(&b, upgrade_head, strlen(upgrade_head));
	put_frame(&b, 4, 0);
	ck_assert_uint_eq(wsguard_filter(fd, b.data, b.len), b.len);
	wsguard_follow(fd);
	ck_assert_uint_eq(wsguard_filter(fd, b.data, b.len), strlen(upgrade_head));
	ck_assert_uint_eq(wsguard_refused(), 1);
	ck_assert_uint_eq(wsguard_filter(fd, b.data, 3), 0);
	ck_assert_uint_eq(wsguard_refused(), 1);
	wsguard_forget(fd);
	ck_assert_uint_eq(wsguard_filter(fd, b.data, b.len), b.len);
	/* Followed again (a new connection on the number): a fresh stream. */
	wsguard_follow(fd);
	ck_assert_uint_eq(wsguard_filter(fd, b.data, strlen(upgrade_head)), strlen(upgrade_head));
	wsguard_forget(fd);
}
END_TEST

/* The table is shared by every thread that reads or closes a descriptor:
 * threads following, filtering and forgetting their own numbers at once
 * (TSan's run of this suite checks the table for races). */
static void *churn_fds(void *arg)
{
	int base = *(int *)arg;
	static const char head[] = "GET / HTTP/1.1\r\nUpgrade: websocket\r\n\r\n\x81\x80" "abcd";

	for (int round = 0; round < 2000; round++) {
		int fd = base + round % 8;

		wsguard_follow(fd);
		ck_assert_uint_eq(wsguard_filter(fd, head, sizeof(head) - 1), sizeof(head) - 1);
		wsguard_forget(fd);
	}
	return NULL;
}

START_TEST(test_table_shared_by_threads)
{
	pthread_t t[3];
	int bases[3] = { 100, 200, 300 };

	for (int i = 0; i < 3; i++)
		ck_assert_int_eq(pthread_create(&t[i], NULL, churn_fds, &bases[i]), 0);
	for (int i = 0; i < 3; i++)
		pthread_join(t[i], NULL);
	ck_assert_uint_eq(wsguard_refused(), 0);
}
END_TEST

static Suite *wsguard_suite(void)
{
	Suite *s = suite_create("wsguard");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_masked_frames_pass);
	tcase_add_test(tc, test_unmasked_frame_is_cut_at_its_first_byte);
	tcase_add_test(tc, test_keep_alive_requests_then_an_upgrade);
	tcase_add_test(tc, test_chunked_body_ends_the_following);
	tcase_add_test(tc, test_leading_blank_lines);
	tcase_add_test(tc, test_head_too_long_is_left_alone);
	tcase_add_test(tc, test_table_follows_and_forgets);
	tcase_add_test(tc, test_table_shared_by_threads);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return suite_run(wsguard_suite());
}
