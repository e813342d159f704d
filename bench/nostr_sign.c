/* nostr_sign.c - keys, ids and BIP-340 signatures for bench events (see nostr_sign.h). */
#include "nostr_sign.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>
#include <secp256k1.h>
#include <secp256k1_schnorrsig.h>

#include "../common/err.h"
#include "../common/hex.h"
#include "../common/jsonstr.h"

struct nostr_signer {
	secp256k1_context *ctx;
	struct buf pre; /* the id preimage, reused */
};

struct nostr_signer *nostr_signer_new(void)
{
	struct nostr_signer *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->ctx = secp256k1_context_create(SECP256K1_CONTEXT_NONE);
	if (!s->ctx) {
		free(s);
		return NULL;
	}
	return s;
}

void nostr_signer_free(struct nostr_signer *s)
{
	if (!s)
		return;
	secp256k1_context_destroy(s->ctx);
	buf_free(&s->pre);
	free(s);
}

static void nostr_sha256(const void *data, size_t len, uint8_t out[32])
{
	unsigned int n = 32;

	EVP_Digest(data, len, out, &n, EVP_sha256(), NULL);
}

int nostr_key_derive(struct nostr_signer *s, uint64_t seed, uint32_t index, struct nostr_key *out)
{
	uint8_t secret[32];
	secp256k1_xonly_pubkey xpk;
	char text[96];

	/* A hash that is not a valid secret (probability ~2^-128) is hashed again. */
	for (unsigned attempt = 0;; attempt++) {
		int n = snprintf(text, sizeof(text), "crelay-bench-key:%llu:%u:%u",
				 (unsigned long long)seed, index, attempt);

		nostr_sha256(text, (size_t)n, secret);
		if (secp256k1_keypair_create(s->ctx, &out->pair, secret))
			break;
	}
	if (!secp256k1_keypair_xonly_pub(s->ctx, &xpk, NULL, &out->pair) ||
	    !secp256k1_xonly_pubkey_serialize(s->ctx, out->pub, &xpk))
		return ERR_INVAL;
	hex_encode(out->pub, 32, out->pubhex);
	return 0;
}

void nostr_tags_reset(struct nostr_tags *t)
{
	buf_reset(&t->json);
	t->count = 0;
}

static int nostr_value_ok(const char *v)
{
	for (; *v; v++) {
		unsigned char c = (unsigned char)*v;

		if (c < 0x20 && c != '\n' && c != '\r' && c != '\t' && c != '\b' && c != '\f')
			return 0;
	}
	return 1;
}

int nostr_tags_add(struct nostr_tags *t, const char *const *values, int n)
{
	size_t mark = t->json.len;
	int rc = buf_append_str(&t->json, t->count ? ",[" : "[");

	for (int i = 0; i < n && !rc; i++) {
		if (!nostr_value_ok(values[i]))
			rc = ERR_INVAL;
		else if (i)
			rc = buf_append_byte(&t->json, ',');
		if (!rc)
			rc = jsonstr_append(&t->json, values[i], strlen(values[i]));
	}
	if (!rc)
		rc = buf_append_byte(&t->json, ']');
	if (rc) {
		t->json.len = mark;
		if (t->json.data)
			t->json.data[mark] = '\0';
		return rc;
	}
	t->count++;
	return 0;
}

void nostr_tags_free(struct nostr_tags *t)
{
	buf_free(&t->json);
	t->count = 0;
}

/* Appends "[" + tags + "]". */
static int nostr_append_tags(struct buf *b, const struct nostr_tags *t)
{
	if (buf_append_byte(b, '['))
		return ERR_NOMEM;
	if (t && t->count && buf_append(b, t->json.data, t->json.len))
		return ERR_NOMEM;
	return buf_append_byte(b, ']');
}

/* [0,"pubkey",created_at,kind,tags,"content"] into s->pre, hashed into id. */
static int nostr_event_id(struct nostr_signer *s, const struct nostr_key *k,
			  const struct nostr_draft *d, uint8_t id[32])
{
	struct buf *b = &s->pre;
	char head[160];
	int n = snprintf(head, sizeof(head), "[0,\"%s\",%lld,%u,", k->pubhex,
			 (long long)d->created_at, d->kind);

	buf_reset(b);
	if (buf_append(b, head, (size_t)n) || nostr_append_tags(b, d->tags) ||
	    buf_append_byte(b, ',') || jsonstr_append(b, d->content, d->content_len) ||
	    buf_append_byte(b, ']'))
		return ERR_NOMEM;
	nostr_sha256(b->data, b->len, id);
	return 0;
}

int nostr_event_sign(struct nostr_signer *s, const struct nostr_key *k,
		     const struct nostr_draft *d, struct buf *out, uint8_t id[32])
{
	uint8_t sig[64];
	char idhex[65], sighex[129], head[256];
	size_t mark = out->len;
	int n;

	if (nostr_event_id(s, k, d, id))
		return ERR_NOMEM;
	if (!secp256k1_schnorrsig_sign32(s->ctx, sig, id, &k->pair, NULL))
		return ERR_INVAL;
	hex_encode(id, 32, idhex);
	hex_encode(sig, 64, sighex);
	n = snprintf(head, sizeof(head),
		     "{\"id\":\"%s\",\"pubkey\":\"%s\",\"created_at\":%lld,\"kind\":%u,\"tags\":",
		     idhex, k->pubhex, (long long)d->created_at, d->kind);
	if (buf_append(out, head, (size_t)n) || nostr_append_tags(out, d->tags) ||
	    buf_append_str(out, ",\"content\":") ||
	    jsonstr_append_wire(out, d->content, d->content_len) ||
	    buf_append_str(out, ",\"sig\":\"") || buf_append(out, sighex, 128) ||
	    buf_append_str(out, "\"}")) {
		out->len = mark;
		if (out->data)
			out->data[mark] = '\0';
		return ERR_NOMEM;
	}
	return 0;
}
