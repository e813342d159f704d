/* cidr.c - address and range parsing (see cidr.h). */
#include "cidr.h"

#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>

static const uint8_t cidr_v4_prefix[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

int cidr_addr_parse(const char *text, size_t len, uint8_t out[16])
{
	char copy[CIDR_ADDR_TEXT];
	uint8_t v4[4];

	if (len == 0 || len >= sizeof(copy))
		return -1;
	memcpy(copy, text, len);
	copy[len] = '\0';
	if (inet_pton(AF_INET, copy, v4) == 1) {
		memcpy(out, cidr_v4_prefix, sizeof(cidr_v4_prefix));
		memcpy(out + 12, v4, 4);
		return 0;
	}
	return inet_pton(AF_INET6, copy, out) == 1 ? 0 : -1;
}

void cidr_addr_format(const uint8_t addr[16], char *out, size_t out_len)
{
	if (memcmp(addr, cidr_v4_prefix, sizeof(cidr_v4_prefix)) == 0)
		inet_ntop(AF_INET, addr + 12, out, (socklen_t)out_len);
	else
		inet_ntop(AF_INET6, addr, out, (socklen_t)out_len);
}

/* One range: "addr" or "addr/bits", len bytes at text. */
static int cidr_parse_one(const char *text, size_t len, struct cidr *out)
{
	const char *slash = memchr(text, '/', len);
	size_t alen = slash ? (size_t)(slash - text) : len;
	bool v4 = memchr(text, ':', alen) == NULL;
	unsigned long bits = v4 ? 32 : 128;

	if (cidr_addr_parse(text, alen, out->addr))
		return -1;
	if (slash) {
		char digits[4];
		size_t dlen = len - alen - 1;
		char *end;

		if (dlen == 0 || dlen >= sizeof(digits) || slash[1] < '0' || slash[1] > '9')
			return -1;
		memcpy(digits, slash + 1, dlen);
		digits[dlen] = '\0';
		bits = strtoul(digits, &end, 10);
		if (*end || bits > (v4 ? 32u : 128u))
			return -1;
	}
	out->bits = (uint8_t)(v4 ? bits + 96 : bits);
	return 0;
}

int cidr_list_parse(const char *text, struct cidr_list *out)
{
	static const char seps[] = " \t,";

	out->n = 0;
	for (const char *p = text + strspn(text, seps); *p; p += strspn(p, seps)) {
		size_t len = strcspn(p, seps);

		if (out->n == CIDR_MAX || cidr_parse_one(p, len, &out->nets[out->n]))
			return -1;
		out->n++;
		p += len;
	}
	return 0;
}

static bool cidr_match(const struct cidr *net, const uint8_t addr[16])
{
	unsigned whole = net->bits / 8, rest = net->bits % 8;
	uint8_t mask = (uint8_t)(0xff << (8 - rest));

	if (memcmp(net->addr, addr, whole) != 0)
		return false;
	if (rest == 0)
		return true;
	return (net->addr[whole] & mask) == (addr[whole] & mask);
}

bool cidr_list_has(const struct cidr_list *l, const uint8_t addr[16])
{
	for (uint32_t i = 0; i < l->n; i++)
		if (cidr_match(&l->nets[i], addr))
			return true;
	return false;
}
