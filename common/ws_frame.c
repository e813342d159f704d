/* ws_frame.c - client-side websocket framing (see ws_frame.h). */
#include "ws_frame.h"

#include <string.h>

#include "buf.h"
#include "err.h"

/* Writes the header (with mask key) into hdr; returns its length. */
static size_t ws_frame_header(uint8_t hdr[14], int op, bool fin, size_t len,
			      uint32_t mask_key)
{
	size_t n = 2;

	hdr[0] = (uint8_t)((fin ? 0x80 : 0) | op);
	if (len < 126) {
		hdr[1] = (uint8_t)(0x80 | len);
	} else if (len <= 0xffff) {
		hdr[1] = 0x80 | 126;
		hdr[2] = (uint8_t)(len >> 8);
		hdr[3] = (uint8_t)len;
		n = 4;
	} else {
		hdr[1] = 0x80 | 127;
		for (int i = 0; i < 8; i++)
			hdr[2 + i] = (uint8_t)((uint64_t)len >> (56 - 8 * i));
		n = 10;
	}
	memcpy(hdr + n, &mask_key, 4);
	return n + 4;
}

/* Copies src into dst masked with key, continuing at key offset *k. */
static void ws_mask_copy(uint8_t *dst, const uint8_t *src, size_t len, const uint8_t key[4],
			 size_t *k)
{
	size_t i = 0;

	/* Eight bytes at a time once the key phase is aligned. */
	while (i < len && (*k & 3)) {
		dst[i] = src[i] ^ key[*k & 3];
		i++, ++*k;
	}
	if (len - i >= 8) {
		uint64_t k8, v;
		uint32_t k4;

		memcpy(&k4, key, 4);
		k8 = ((uint64_t)k4 << 32) | k4;
		for (; len - i >= 8; i += 8) {
			memcpy(&v, src + i, 8);
			v ^= k8;
			memcpy(dst + i, &v, 8);
		}
	}
	for (; i < len; i++, ++*k)
		dst[i] = src[i] ^ key[*k & 3];
}

int ws_frame_appendv(struct buf *out, enum ws_opcode op, bool fin, const struct iovec *iov,
		     int iovcnt, uint32_t mask_key)
{
	uint8_t hdr[14], key[4];
	size_t len = 0, hlen, k = 0;
	uint8_t *dst;

	for (int i = 0; i < iovcnt; i++)
		len += iov[i].iov_len;
	hlen = ws_frame_header(hdr, op, fin, len, mask_key);
	if (buf_reserve(out, hlen + len))
		return ERR_NOMEM;
	memcpy(key, &mask_key, 4);
	dst = (uint8_t *)out->data + out->len;
	memcpy(dst, hdr, hlen);
	dst += hlen;
	for (int i = 0; i < iovcnt; i++) {
		ws_mask_copy(dst, iov[i].iov_base, iov[i].iov_len, key, &k);
		dst += iov[i].iov_len;
	}
	out->len += hlen + len;
	out->data[out->len] = '\0';
	return 0;
}

int ws_frame_append(struct buf *out, enum ws_opcode op, bool fin, const void *payload,
		    size_t len, uint32_t mask_key)
{
	struct iovec iov = { (void *)payload, len };

	return ws_frame_appendv(out, op, fin, &iov, 1, mask_key);
}

static bool ws_opcode_known(unsigned op)
{
	return op <= WS_OP_BINARY || (op >= WS_OP_CLOSE && op <= WS_OP_PONG);
}

int ws_frame_decode(const uint8_t *data, size_t len, size_t max_payload, struct ws_frame *f)
{
	return ws_frame_decode_ext(data, len, max_payload, false, f);
}

int ws_frame_decode_ext(const uint8_t *data, size_t len, size_t max_payload, bool rsv1_ok,
			struct ws_frame *f)
{
	size_t hlen = 2;
	uint64_t plen;
	unsigned op;
	bool rsv1;

	if (len < 2)
		return 0;
	op = data[0] & 0x0f;
	rsv1 = (data[0] & 0x40) != 0;
	if ((data[0] & 0x30) || (rsv1 && (!rsv1_ok || op >= WS_OP_CLOSE)) || (data[1] & 0x80) ||
	    !ws_opcode_known(op))
		return ERR_INVAL;
	plen = data[1] & 0x7f;
	if (plen == 126 || plen == 127) {
		size_t ext = plen == 126 ? 2 : 8;

		if (len < 2 + ext)
			return 0;
		plen = 0;
		for (size_t i = 0; i < ext; i++)
			plen = (plen << 8) | data[2 + i];
		hlen += ext;
	}
	if (op >= WS_OP_CLOSE && (plen > 125 || !(data[0] & 0x80)))
		return ERR_INVAL;
	if (plen > max_payload)
		return ERR_TOOBIG;
	if (len - hlen < plen)
		return 0;
	*f = (struct ws_frame){ (enum ws_opcode)op, (data[0] & 0x80) != 0, rsv1, data + hlen,
				(size_t)plen, hlen + (size_t)plen };
	return 1;
}
