/*
 * gen.c - `loadgen gen`: writes N signed events to a JSONL file, the same
 * bytes for the same options on any machine.
 *
 * The mix: 60% kind 1 notes of 100-1000 bytes (some replies with e/p tags,
 * some mentions, some t hashtags, now and then a quote, a newline or an
 * emoji), 30% kind 7 reactions (e and p of an earlier event), 5% kind 0
 * metadata (JSON in content) and 5% kind 3 contact lists (10-100 p tags).
 * Authors are K keys drawn with a skew (a few prolific authors, a long
 * tail).  created_at is base + i, so every author's replaceable events
 * arrive in order and all of them are accepted.
 *
 * Every event is checked by the relay's own parser (common/event.h: id and
 * canonical form), and every --verify-every'th signature is verified.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "../common/event.h"
#include "../common/event_sig.h"
#include "../common/hex.h"
#include "../common/json.h"
#include "clock.h"
#include "cli.h"
#include "cmds.h"
#include "nostr_sign.h"
#include "report.h"
#include "rng.h"

struct gen_opts {
	const char *out;
	long count, keys, seed, base_time, verify_every;
};

/* Everything generated so far that later events may refer to. */
struct gen_state {
	struct gen_opts o;
	struct rng rng;
	struct nostr_signer *signer;
	struct sig_verifier *verifier;
	struct nostr_key *keys;
	uint8_t (*ids)[32];  /* id of event i */
	uint32_t *author;    /* key index of event i */
	struct nostr_tags tags;
	struct buf content;
	struct buf line;
	uint64_t kinds[4];   /* counts of kinds 1, 7, 0, 3 */
	uint64_t bytes;
	uint64_t canon_diff; /* lines the relay would store differently */
};

static const char *const gen_words[] = {
	"nostr", "relay", "bitcoin", "lightning", "zap", "note", "client", "key", "signature",
	"protocol", "freedom", "speech", "censorship", "resistant", "open", "network", "event",
	"follow", "reply", "thread", "gm", "pura", "vida", "coffee", "morning", "build", "ship",
	"code", "rust", "c", "sqlite", "fast", "slow", "latency", "throughput", "memory", "today",
	"tomorrow", "weekend", "music", "photo", "video", "link", "podcast", "value", "for",
	"the", "a", "of", "and", "to", "in", "is", "it", "that", "this", "with", "on", "my",
	"your", "we", "they", "just", "really",
};
#define GEN_NWORDS (sizeof(gen_words) / sizeof(gen_words[0]))

static const char *const gen_hashtags[] = {
	"nostr", "bitcoin", "grownostr", "plebchain", "art", "music", "photography", "dev",
	"zapathon", "coffeechain",
};

/* An author index skewed toward low numbers: index = K * u^2. */
static uint32_t gen_author(struct gen_state *g)
{
	double u = (double)(rng_next(&g->rng) >> 11) / 9007199254740992.0;

	return (uint32_t)((double)g->o.keys * u * u);
}

/* Cuts b to at most len bytes, dropping a UTF-8 character the cut would split. */
static void gen_cut(struct buf *b, size_t len)
{
	size_t start, need;
	unsigned char lead;

	if (b->len <= len)
		return;
	b->len = len;
	start = len;
	while (start && ((unsigned char)b->data[start - 1] & 0xc0) == 0x80 && len - start < 3)
		start--;
	if (start && (unsigned char)b->data[start - 1] >= 0xc0) {
		start--;
		lead = (unsigned char)b->data[start];
		need = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : 2;
		if (len - start < need)
			b->len = start;
	}
	b->data[b->len] = '\0';
}

/* Appends random words to g->content until it has exactly len bytes. */
static void gen_words_to(struct gen_state *g, size_t len, int decorate)
{
	while (g->content.len < len) {
		uint32_t r = rng_below(&g->rng, 100);

		if (g->content.len)
			buf_append_byte(&g->content, decorate && r < 3 ? '\n' : ' ');
		if (decorate && r >= 3 && r < 5)
			buf_append_str(&g->content, "\"gm\"");
		else if (decorate && r >= 5 && r < 7)
			buf_append_str(&g->content, "\xf0\x9f\xa4\x99"); /* U+1F919 */
		else
			buf_append_str(&g->content, gen_words[rng_below(&g->rng, GEN_NWORDS)]);
	}
	gen_cut(&g->content, len);
}

static void gen_tag2(struct gen_state *g, const char *name, const char *value)
{
	const char *v[2] = { name, value };

	nostr_tags_add(&g->tags, v, 2);
}

/* Adds ["e", id of event j, "", marker] and ["p", its author]. */
static void gen_ref(struct gen_state *g, uint32_t j, const char *marker)
{
	char idhex[65];

	hex_encode(g->ids[j], 32, idhex);
	if (marker) {
		const char *v[4] = { "e", idhex, "", marker };

		nostr_tags_add(&g->tags, v, 4);
	} else {
		gen_tag2(g, "e", idhex);
	}
	gen_tag2(g, "p", g->keys[g->author[j]].pubhex);
}

static void gen_note(struct gen_state *g, uint32_t i)
{
	if (i && rng_chance(&g->rng, 30))
		gen_ref(g, rng_below(&g->rng, i), "root");
	if (rng_chance(&g->rng, 20))
		gen_tag2(g, "p", g->keys[rng_below(&g->rng, (uint32_t)g->o.keys)].pubhex);
	if (rng_chance(&g->rng, 25))
		for (uint32_t n = rng_range(&g->rng, 1, 3); n; n--)
			gen_tag2(g, "t", gen_hashtags[rng_below(&g->rng, 10)]);
	gen_words_to(g, rng_range(&g->rng, 100, 1000), 1);
}

static void gen_reaction(struct gen_state *g, uint32_t i)
{
	static const char *const emoji[] = { "+", "+", "+", "+", "\xf0\x9f\xa4\x99",
					     "\xe2\x9d\xa4\xef\xb8\x8f" };

	if (i)
		gen_ref(g, rng_below(&g->rng, i), NULL);
	buf_append_str(&g->content, emoji[rng_below(&g->rng, 6)]);
}

static void gen_metadata(struct gen_state *g, uint32_t author)
{
	char head[160];

	snprintf(head, sizeof(head), "{\"name\":\"bench%u\",\"picture\":\"https://example.com/p/%u.jpg\","
		 "\"about\":\"", author, author);
	buf_append_str(&g->content, head);
	gen_words_to(g, g->content.len + rng_range(&g->rng, 30, 150), 0);
	buf_append_str(&g->content, "\"}");
}

static void gen_contacts(struct gen_state *g)
{
	for (uint32_t n = rng_range(&g->rng, 10, 100); n; n--)
		gen_tag2(g, "p", g->keys[rng_below(&g->rng, (uint32_t)g->o.keys)].pubhex);
}

/* Chooses the kind of event i and fills tags and content for it. */
static uint32_t gen_body(struct gen_state *g, uint32_t i, uint32_t author)
{
	uint32_t r = rng_below(&g->rng, 100);

	nostr_tags_reset(&g->tags);
	buf_reset(&g->content);
	if (r < 60) {
		g->kinds[0]++;
		gen_note(g, i);
		return 1;
	}
	if (r < 90) {
		g->kinds[1]++;
		gen_reaction(g, i);
		return 7;
	}
	if (r < 95) {
		g->kinds[2]++;
		gen_metadata(g, author);
		return 0;
	}
	g->kinds[3]++;
	gen_contacts(g);
	return 3;
}

/* Parses the line as the relay would; returns 0 when the id checks out. */
static int gen_check(struct gen_state *g, uint32_t i)
{
	cJSON *obj = json_parse(g->line.data, g->line.len, false);
	struct event ev;
	char reason[160];
	int rc = obj ? event_parse(obj, NULL, &ev, reason, sizeof(reason)) : -1;

	if (!obj || rc) {
		fprintf(stderr, "loadgen gen: event %u fails the relay's parser: %s\n", i,
			obj ? reason : "not JSON");
		cJSON_Delete(obj);
		return -1;
	}
	if (ev.json_len != g->line.len || memcmp(ev.json, g->line.data, g->line.len))
		g->canon_diff++;
	if (g->o.verify_every > 0 && i % (uint32_t)g->o.verify_every == 0 &&
	    sig_verify_event(g->verifier, &ev)) {
		fprintf(stderr, "loadgen gen: event %u has a bad signature\n", i);
		rc = -1;
	}
	event_free(&ev);
	cJSON_Delete(obj);
	return rc;
}

static int gen_one(struct gen_state *g, uint32_t i, FILE *out)
{
	uint32_t author = gen_author(g);
	struct nostr_draft d = { g->o.base_time + i, 0, &g->tags, NULL, 0 };

	d.kind = gen_body(g, i, author);
	d.content = g->content.data ? g->content.data : "";
	d.content_len = g->content.len;
	buf_reset(&g->line);
	if (nostr_event_sign(g->signer, &g->keys[author], &d, &g->line, g->ids[i]) || gen_check(g, i))
		return -1;
	g->author[i] = author;
	buf_append_byte(&g->line, '\n');
	g->bytes += g->line.len;
	return fwrite(g->line.data, 1, g->line.len, out) == g->line.len ? 0 : -1;
}

static int gen_setup(struct gen_state *g)
{
	rng_seed(&g->rng, (uint64_t)g->o.seed);
	g->signer = nostr_signer_new();
	g->verifier = sig_verifier_new();
	g->keys = calloc((size_t)g->o.keys, sizeof(*g->keys));
	g->ids = calloc((size_t)g->o.count, sizeof(*g->ids));
	g->author = calloc((size_t)g->o.count, sizeof(*g->author));
	if (!g->signer || !g->verifier || !g->keys || !g->ids || !g->author)
		return -1;
	for (long k = 0; k < g->o.keys; k++)
		nostr_key_derive(g->signer, (uint64_t)g->o.seed, (uint32_t)k, &g->keys[k]);
	return 0;
}

static void gen_teardown(struct gen_state *g)
{
	nostr_signer_free(g->signer);
	sig_verifier_free(g->verifier);
	free(g->keys);
	free(g->ids);
	free(g->author);
	nostr_tags_free(&g->tags);
	buf_free(&g->content);
	buf_free(&g->line);
}

static void gen_report(const struct gen_state *g, double secs, FILE *to)
{
	struct report r;

	report_begin(&r, "gen");
	report_int(&r, "events", g->o.count);
	report_int(&r, "keys", g->o.keys);
	report_int(&r, "seed", g->o.seed);
	report_int(&r, "bytes", (int64_t)g->bytes);
	report_int(&r, "kind1", (int64_t)g->kinds[0]);
	report_int(&r, "kind7", (int64_t)g->kinds[1]);
	report_int(&r, "kind0", (int64_t)g->kinds[2]);
	report_int(&r, "kind3", (int64_t)g->kinds[3]);
	report_int(&r, "canonical_diff", (int64_t)g->canon_diff);
	report_num(&r, "elapsed_s", secs, 2);
	report_num(&r, "events_per_s", secs > 0 ? (double)g->o.count / secs : 0, 1);
	report_end_to(&r, to);
}

static int gen_write(struct gen_state *g)
{
	FILE *out = strcmp(g->o.out, "-") ? fopen(g->o.out, "w") : stdout;
	uint64_t t0 = clock_ns();
	int rc = 0;

	if (!out) {
		perror(g->o.out);
		return 1;
	}
	for (long i = 0; i < g->o.count && !rc; i++)
		rc = gen_one(g, (uint32_t)i, out);
	if ((out != stdout && fclose(out)) || rc) {
		fprintf(stderr, "loadgen gen: failed writing %s\n", g->o.out);
		return 1;
	}
	if (out == stdout)
		fflush(stdout);
	gen_report(g, (double)(clock_ns() - t0) / 1e9, out == stdout ? stderr : stdout);
	return 0;
}

int cmd_gen(int argc, char **argv)
{
	struct gen_state g = { .o = { "events.jsonl", 200000, 1000, 1, 1700000000, 64 } };
	const struct cli_opt opts[] = {
		{ "out", CLI_STR, &g.o.out, "output file (- for stdout; RESULT then goes to stderr)" },
		{ "count", CLI_INT, &g.o.count, "events to write" },
		{ "keys", CLI_INT, &g.o.keys, "distinct authors" },
		{ "seed", CLI_INT, &g.o.seed, "seed: same seed, same file" },
		{ "base-time", CLI_INT, &g.o.base_time, "created_at of the first event" },
		{ "verify-every", CLI_INT, &g.o.verify_every, "verify every n-th signature (0: none)" },
	};
	int rc = cli_parse("Writes signed events as JSON lines.", opts, CLI_COUNT(opts), argc, argv);

	if (rc)
		return rc > 0 ? 0 : 2;
	if (g.o.count < 1 || g.o.keys < 1 || g.o.base_time < 0) {
		fprintf(stderr, "loadgen gen: --count and --keys must be positive\n");
		return 2;
	}
	rc = gen_setup(&g) ? 1 : gen_write(&g);
	gen_teardown(&g);
	return rc;
}
