/*
 * fuzz_neg.c - libFuzzer target for the negentropy message decoder
 * (common/neg.c).
 *
 * The first input byte picks the side (initiator or responder) and the
 * frame limit; the rest is one message, reconciled against a fixed set of
 * 300 items with many equal timestamps.  Besides crashes, leaks and
 * undefined behaviour it checks three properties: a refused message leaves
 * the output untouched, every reply stays within the frame limit, and
 * every reply is itself a message the other side accepts.
 *
 * Build and run: `make fuzz` (FUZZ_SECONDS each), seeds in
 * tests/fuzz/corpus/neg.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/buf.h"
#include "../../common/neg.h"

#define NITEMS 300

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct neg_item items[NITEMS];
static int ready;

/* The same items on every run: timestamps 0..29 (ten of each), ids from a
 * small linear congruential sequence. */
static void make_items(void)
{
	uint64_t x = 12345;

	for (int i = 0; i < NITEMS; i++) {
		items[i].ts = (uint64_t)(i / 10);
		for (int b = 0; b < NEG_ID_LEN; b++) {
			x = x * 6364136223846793005ull + 1442695040888963407ull;
			items[i].id[b] = (uint8_t)(x >> 56);
		}
	}
	neg_sort(items, NITEMS);
	ready = 1;
}

static void ignore(void *arg, const uint8_t id[NEG_ID_LEN])
{
	(void)arg;
	(void)id;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct neg_side side = { 0 }, other = { 0 };
	struct buf out = BUF_INIT, back = BUF_INIT;
	size_t frame;
	int rc;

	if (!ready)
		make_items();
	if (size < 1)
		return 0;
	side.initiator = data[0] & 1;
	side.have = side.need = ignore;
	frame = NEG_FRAME_MIN + (size_t)(data[0] >> 1) * 512;
	rc = neg_reconcile(items, NITEMS / (1 + (data[0] >> 7)), data + 1, size - 1, frame, &side,
			   &out);
	if (rc && out.len != 0)
		abort();
	if (!rc && (out.len > frame || out.len < 1 || (uint8_t)out.data[0] != NEG_VERSION))
		abort();
	if (!rc) {
		/* The other side must accept the reply (an initiator's "done" is
		 * the version byte alone, which a responder also accepts). */
		other.initiator = !side.initiator;
		other.have = other.need = ignore;
		if (neg_reconcile(items, NITEMS, (const uint8_t *)out.data, out.len, frame, &other,
				  &back))
			abort();
	}
	buf_free(&out);
	buf_free(&back);
	return 0;
}
