/*
 * fuzz_inflate.c - libFuzzer target for relayd's permessage-deflate input
 * path: the bytes are a client's compressed message given to
 * pmdz_inflate() with a small max, as wsext.c gives it, and the header
 * text given to pmdoffer_choose().  Anything may be refused; nothing may
 * crash, leak, read out of bounds or write past max + 1 bytes.  Whatever
 * inflates must compress and inflate back to the same bytes.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/err.h"
#include "../../relayd/pmdoffer.h"
#include "../../relayd/pmdz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_MAX 4096

static struct pmdz *z;

/* What inflated must survive a compress and inflate unchanged. */
static void fuzz_round_trip(const unsigned char *text, size_t len)
{
	static unsigned char c[FUZZ_MAX + 64], back[FUZZ_MAX + 1];
	size_t n, m;
	int rc = pmdz_compress(z, text, len, NULL, 0, c, sizeof(c), &n);

	if (rc == ERR_FULL)
		return;
	if (rc || pmdz_inflate(z, c, n, back, FUZZ_MAX, &m) || m != len || memcmp(back, text, len))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static unsigned char out[FUZZ_MAX + 2];
	struct pmdoffer_choice choice;
	size_t n = 0;
	int rc;

	if (!z && !(z = pmdz_new(6)))
		abort();
	out[FUZZ_MAX + 1] = 0xee;
	rc = pmdz_inflate(z, data, size, out, FUZZ_MAX, &n);
	if (out[FUZZ_MAX + 1] != 0xee)
		abort();
	if (rc != 0 && rc != ERR_TOOBIG && rc != ERR_INVAL)
		abort();
	if (rc == 0 && n > FUZZ_MAX)
		abort();
	if (rc == 0)
		fuzz_round_trip(out, n);
	pmdoffer_choose((const char *)data, size, (int)(size & 1), &choice);
	if (choice.offer >= 0 && strncmp(choice.answer, "permessage-deflate;", 19))
		abort();
	return 0;
}
