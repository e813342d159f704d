/*
 * ctl_judge.c - relayctl import's check of each line on its own, and the
 * threads that check a batch of lines on every core (see ctl.h).
 *
 * A line passes when it holds exactly one JSON object that is a valid
 * NIP-01 event (structure, id) with a good BIP-340 signature.  Fields
 * beyond NIP-01's seven are dropped first (the id and signature cover only
 * those seven), and the line is marked as having had them.  What stored
 * gets is the event's canonical JSON, never the line's own text, so white
 * space, a BOM or annotations cannot reach its parser.
 */
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../common/event_sig.h"
#include "../../common/json.h"
#include "ctl.h"

/* Lines a thread takes at a time from the batch. */
#define CTL_JUDGE_STEP 16

static const char *const ctl_nip01_fields[] = {
	"id", "pubkey", "created_at", "kind", "tags", "content", "sig",
};

static bool ctl_is_nip01_field(const char *name)
{
	for (size_t i = 0; i < sizeof(ctl_nip01_fields) / sizeof(ctl_nip01_fields[0]); i++)
		if (strcmp(name, ctl_nip01_fields[i]) == 0)
			return true;
	return false;
}

/* Removes obj's fields that NIP-01 does not define; returns whether any. */
static bool ctl_drop_extra_fields(cJSON *obj)
{
	cJSON *f = obj->child, *next;
	bool any = false;

	for (; f; f = next) {
		next = f->next;
		if (f->string && ctl_is_nip01_field(f->string))
			continue;
		cJSON_Delete(cJSON_DetachItemViaPointer(obj, f));
		any = true;
	}
	return any;
}

static bool ctl_space(char ch)
{
	return ch == ' ' || ch == '\t' || ch == '\r' || ch == '\n';
}

static void ctl_bad(struct ctl_line *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Judges l invalid, for the reason fmt formats. */
static void ctl_bad(struct ctl_line *l, const char *fmt, ...)
{
	va_list ap;

	l->verdict = CTL_INVALID;
	va_start(ap, fmt);
	vsnprintf(l->why, sizeof(l->why), fmt, ap);
	va_end(ap);
}

/* Why text is not one JSON object with nothing after it but white space:
 * judges l invalid, naming the column where cJSON stopped. */
static void ctl_parse_why(const char *text, size_t len, struct ctl_line *l)
{
	const char *end = NULL;
	cJSON *obj = cJSON_ParseWithLengthOpts(text, len, &end, 0);
	bool object = cJSON_IsObject(obj);

	cJSON_Delete(obj);
	if (!obj) {
		ctl_bad(l, "invalid: not a JSON object (bad JSON at column %zu)",
			end && end >= text ? (size_t)(end - text) + 1 : 1);
		return;
	}
	while (end < text + len && ctl_space(*end))
		end++;
	if (end < text + len)
		ctl_bad(l, "invalid: %s after the JSON object, at column %zu",
			*end == '{' || *end == '[' ? "a second JSON value" : "bytes",
			(size_t)(end - text) + 1);
	else if (!object)
		ctl_bad(l, "invalid: not a JSON object");
	else
		ctl_bad(l, "invalid: not valid UTF-8 (the bytes C0 80)");
}

/* Parses text as one JSON object with nothing after it but white space
 * (json.h: U+0000 kept).  Returns it (the caller deletes it), or NULL with
 * l judged invalid. */
static cJSON *ctl_parse_one(const char *text, size_t len, struct ctl_line *l)
{
	cJSON *obj = json_parse(text, len, true);

	if (cJSON_IsObject(obj))
		return obj;
	cJSON_Delete(obj);
	ctl_parse_why(text, len, l);
	return NULL;
}

/* The NIP-01 and signature checks of a parsed line. */
static void ctl_judge_event(struct sig_verifier *v, cJSON *obj, struct ctl_line *l)
{
	l->extra = ctl_drop_extra_fields(obj);
	if (event_parse(obj, NULL, &l->ev, l->why, sizeof(l->why))) {
		l->verdict = CTL_INVALID;
		return;
	}
	if (sig_verify_event(v, &l->ev)) {
		event_free(&l->ev);
		ctl_bad(l, "invalid: bad signature");
		return;
	}
	l->verdict = CTL_GOOD;
}

void ctl_judge_line(struct sig_verifier *v, uint32_t max_bytes, const char *text,
		    struct ctl_line *l)
{
	size_t len = l->len;
	cJSON *obj;

	while (len && ctl_space(*text)) {
		text++;
		len--;
	}
	while (len && ctl_space(text[len - 1]))
		len--;
	l->extra = false;
	if (l->too_long) {
		ctl_bad(l, "invalid: longer than max_message_bytes (%u)", max_bytes);
		return;
	}
	if (len == 0) {
		l->verdict = CTL_BLANK;
		return;
	}
	obj = ctl_parse_one(text, len, l);
	if (obj)
		ctl_judge_event(v, obj, l);
	cJSON_Delete(obj);
}

/* ---- the threads ---- */

struct ctl_judge_thread {
	struct ctl_judges *pool;
	struct sig_verifier *verifier;
	pthread_t thread;
	bool started;
};

struct ctl_judges {
	unsigned n;
	struct ctl_judge_thread *threads;
	/* the batch being judged */
	const char *text;
	struct ctl_line *lines;
	size_t nlines;
	uint32_t max_bytes;
	atomic_size_t next;
};

static void ctl_judge_some(struct ctl_judges *j, struct sig_verifier *v)
{
	size_t first;

	while ((first = atomic_fetch_add(&j->next, CTL_JUDGE_STEP)) < j->nlines) {
		size_t last = first + CTL_JUDGE_STEP < j->nlines ? first + CTL_JUDGE_STEP : j->nlines;

		for (size_t i = first; i < last; i++)
			ctl_judge_line(v, j->max_bytes, j->text + j->lines[i].off, &j->lines[i]);
	}
}

static void *ctl_judge_main(void *arg)
{
	struct ctl_judge_thread *t = arg;

	ctl_judge_some(t->pool, t->verifier);
	return NULL;
}

struct ctl_judges *ctl_judges_new(unsigned threads)
{
	struct ctl_judges *j = calloc(1, sizeof(*j));

	if (!j)
		return NULL;
	j->n = threads ? threads : 1;
	j->threads = calloc(j->n, sizeof(*j->threads));
	for (unsigned i = 0; j->threads && i < j->n; i++) {
		j->threads[i].pool = j;
		if (!(j->threads[i].verifier = sig_verifier_new())) {
			ctl_judges_free(j);
			return NULL;
		}
	}
	if (!j->threads) {
		free(j);
		return NULL;
	}
	return j;
}

void ctl_judges_start(struct ctl_judges *j, const char *text, struct ctl_line *lines, size_t n,
		      uint32_t max_bytes)
{
	j->text = text;
	j->lines = lines;
	j->nlines = n;
	j->max_bytes = max_bytes;
	atomic_store(&j->next, 0);
	for (unsigned i = 0; i < j->n; i++)
		j->threads[i].started =
			pthread_create(&j->threads[i].thread, NULL, ctl_judge_main, &j->threads[i]) == 0;
}

void ctl_judges_wait(struct ctl_judges *j)
{
	for (unsigned i = 0; i < j->n; i++) {
		if (j->threads[i].started)
			pthread_join(j->threads[i].thread, NULL);
		j->threads[i].started = false;
	}
	/* Whatever a thread that could not start left undone. */
	ctl_judge_some(j, j->threads[0].verifier);
}

void ctl_judges_free(struct ctl_judges *j)
{
	if (!j)
		return;
	for (unsigned i = 0; j->threads && i < j->n; i++)
		sig_verifier_free(j->threads[i].verifier);
	free(j->threads);
	free(j);
}

unsigned ctl_cores(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	return n < 1 ? 1 : n > 64 ? 64 : (unsigned)n;
}
