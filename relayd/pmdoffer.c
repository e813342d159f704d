/* pmdoffer.c - permessage-deflate offer negotiation (see pmdoffer.h). */
#include "pmdoffer.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

/* A slice of the header. */
struct span {
	const char *p;
	size_t n;
};

static bool pmd_space(char c)
{
	return c == ' ' || c == '\t';
}

static struct span pmd_trim(struct span s)
{
	while (s.n && pmd_space(s.p[0])) {
		s.p++;
		s.n--;
	}
	while (s.n && pmd_space(s.p[s.n - 1]))
		s.n--;
	return s;
}

/* Parameter names are compared without case. */
static bool pmd_is(struct span s, const char *word)
{
	return s.n == strlen(word) && strncasecmp(s.p, word, s.n) == 0;
}

/* The extension's name exactly, as libwebsockets compares it: it asks
 * about (wsext.h) only the offers so named, and the count must agree. */
static bool pmd_is_ours(struct span s)
{
	static const char name[] = "permessage-deflate";

	s = pmd_trim(s);
	return s.n == sizeof(name) - 1 && memcmp(s.p, name, s.n) == 0;
}

/* Cuts s at the first sep outside double quotes: *head gets what is
 * before, s what is after (empty when sep is absent).  Returns false when
 * s was empty. */
static bool pmd_cut(struct span *s, char sep, struct span *head)
{
	bool quoted = false;
	size_t i;

	if (!s->n)
		return false;
	for (i = 0; i < s->n; i++) {
		if (s->p[i] == '"')
			quoted = !quoted;
		else if (s->p[i] == sep && !quoted)
			break;
	}
	head->p = s->p;
	head->n = i;
	s->p += i < s->n ? i + 1 : i;
	s->n -= i < s->n ? i + 1 : i;
	return true;
}

/* A window size 8-15, bare or quoted (RFC 7692 7.1.2); -1 if not one. */
static int pmd_bits(struct span v)
{
	if (v.n >= 2 && v.p[0] == '"' && v.p[v.n - 1] == '"') {
		v.p++;
		v.n -= 2;
	}
	if (v.n == 1 && v.p[0] >= '8' && v.p[0] <= '9')
		return v.p[0] - '0';
	if (v.n == 2 && v.p[0] == '1' && v.p[1] >= '0' && v.p[1] <= '5')
		return 10 + v.p[1] - '0';
	return -1;
}

enum { PMD_SNCT, PMD_CNCT, PMD_SMWB, PMD_CMWB, PMD_NPARAMS };

static const char *const pmd_names[PMD_NPARAMS] = {
	"server_no_context_takeover", "client_no_context_takeover",
	"server_max_window_bits", "client_max_window_bits",
};

/* Whether one parameter of an offer can be honoured; records it in seen. */
static bool pmd_param_ok(struct span param, bool seen[PMD_NPARAMS], bool *smwb)
{
	struct span name = { param.p, 0 }, value;
	bool has_value;
	int k;

	if (!pmd_cut(&param, '=', &name))
		return false; /* an empty parameter */
	has_value = name.n < (size_t)(param.p - name.p); /* an '=' was cut */
	value = pmd_trim(param);
	name = pmd_trim(name);
	for (k = 0; k < PMD_NPARAMS && !pmd_is(name, pmd_names[k]); k++)
		;
	if (k == PMD_NPARAMS || seen[k])
		return false;
	seen[k] = true;
	switch (k) {
	case PMD_SNCT:
	case PMD_CNCT: return !has_value;
	case PMD_SMWB: *smwb = true; return has_value && pmd_bits(value) == 15;
	default: return !has_value || pmd_bits(value) > 0;
	}
}

/* Whether the parameters after an offer's name (params) can all be
 * honoured; *smwb is set when server_max_window_bits must be answered. */
static bool pmd_offer_ok(struct span params, bool *smwb)
{
	bool seen[PMD_NPARAMS] = { false };
	struct span param;

	*smwb = false;
	while (pmd_cut(&params, ';', &param))
		if (!pmd_param_ok(param, seen, smwb))
			return false;
	return true;
}

static void pmd_answer(struct pmdoffer_choice *out, bool smwb)
{
	snprintf(out->answer, sizeof(out->answer),
		 "permessage-deflate; server_no_context_takeover; client_no_context_takeover%s",
		 smwb ? "; server_max_window_bits=15" : "");
}

int pmdoffer_choose(const char *hdr, size_t len, int lws_safe, struct pmdoffer_choice *out)
{
	struct span rest = { hdr, len }, elem, name;
	int seen = 0, total = 0;

	out->offer = -1;
	out->answer[0] = '\0';
	/* Counted first, so that "the last offer" is known (lws_safe). */
	for (struct span r = rest; pmd_cut(&r, ',', &elem);)
		total += pmd_cut(&elem, ';', &name) && pmd_is_ours(name);
	while (pmd_cut(&rest, ',', &elem)) {
		bool has_params, smwb;

		if (!pmd_cut(&elem, ';', &name) || !pmd_is_ours(name))
			continue;
		has_params = pmd_trim(elem).n > 0 || name.n < (size_t)(elem.p - name.p);
		seen++;
		if (out->offer >= 0 || !pmd_offer_ok(elem, &smwb))
			continue;
		if (lws_safe && !has_params && seen < total)
			continue;
		out->offer = seen - 1;
		pmd_answer(out, smwb);
	}
	return total;
}
