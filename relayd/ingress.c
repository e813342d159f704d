/* ingress.c - parsing lanes and verb dispatch (see ingress.h). */
#include "ingress.h"

#include <cjson/cJSON.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/slice.h"
#include "../common/err.h"
#include "../common/event_sig.h"
#include "../common/hex.h"
#include "../common/json.h"
#include "../common/log.h"
#include "../common/prio.h"
#include "../common/utf8.h"
#include "auth.h"
#include "bundle.h"
#include "fairq.h"
#include "lanepost.h"
#include "mailbox.h"
#include "relayd.h"
#include "reply.h"
#include "verbs.h"

/* Messages a lane may hold before it refuses more.  One connection is not
 * read past max_queued_messages; this bounds the lane when many connections
 * each have that many waiting.  Past it, a connection with earlier messages
 * still in the lane gets one more queued and is paused (so a refusal never
 * overtakes them, and the lane holds at most one extra message for each
 * connection it holds any of); one with none is answered "rate-limited:". */

struct ingress_job {
	struct fairq_item link; /* first: a job is its queue item */
	uint64_t conn_id;
	char *data;
	size_t len;
	bool limited;
	bool resumes; /* queued past lane_depth: its connection waits for it */
};

struct ingress_lane;

/* One thread of a lane: the primary serves every message in turn; the
 * express one only cheap messages of connections the primary does not
 * hold (fairq.h). */
struct ingress_server {
	struct ingress_lane *lane;
	pthread_t thread;
	bool express;
	bool started;
	char name[16]; /* the thread's name (15 characters and a NUL) */
	struct store_bundle bundle; /* this thread's own (bundle.h) */
	struct sig_verifier *verifier;
};

struct ingress_lane {
	struct relayd *r;
	pthread_mutex_t lock;
	pthread_cond_t wake;         /* the primary's */
	pthread_cond_t wake_express; /* the express server's */
	struct fairq jobs; /* connections served in turn (fairq.h) */
	bool stop;
	bool has_express;
	uint32_t pause_at; /* max_queued_messages, read once at start */
	uint32_t depth;    /* lane_depth, read once at start */
	struct ingress_server primary, express;
	/* Requests handled on the service thread itself (ingress_submit); it has
	 * no thread, no verifier and never a bundle. */
	struct ingress_server on_loop;
	struct auth_table *auth; /* shared by both servers (auth.h) */
};

struct ingress {
	struct ingress_lane *lanes;
	uint32_t n;
	/* verify_threads = 0: one lane without a thread, run by the caller on
	 * the service thread.  It exists for the design comparison in
	 * bench/RESULTS.md (verification inline vs off the service thread). */
	bool inline_mode;
};

struct verb_entry {
	const char *name;
	void (*handler)(struct verb_ctx *v);
};

static const struct verb_entry verb_table[] = {
	{ "EVENT", verb_event },
	{ "REQ", verb_req },
	{ "CLOSE", verb_close },
	{ "COUNT", verb_count },
	{ "AUTH", verb_auth },
	{ "NEG-OPEN", verb_neg_open },
	{ "NEG-MSG", verb_neg_msg },
	{ "NEG-CLOSE", verb_neg_close },
};

/* The answer to a message refused without doing its work: the protocol reply
 * its verb calls for (OK false for an EVENT or AUTH, CLOSED for a REQ or
 * COUNT), else a NOTICE (a refused CLOSE leaves its subscription open, so
 * it must not be answered CLOSED).  msg may be anything cJSON parsed, or
 * NULL. */
static void ingress_refuse(struct relayd *r, uint64_t conn_id, const cJSON *msg, const char *why)
{
	const cJSON *verb = cJSON_GetArrayItem(msg, 0), *arg = cJSON_GetArrayItem(msg, 1);
	const cJSON *id = cJSON_GetObjectItemCaseSensitive(arg, "id");
	const char *name = cJSON_IsString(verb) ? verb->valuestring : "";
	uint8_t raw[32];
	size_t len;

	if ((!strcmp(name, "EVENT") || !strcmp(name, "AUTH")) && cJSON_IsString(id) &&
	    !hex_decode(id->valuestring, strlen(id->valuestring), raw, 32)) {
		char *text = reply_ok(raw, false, why, &len);

		lanepost_text(r, conn_id, text, len);
	} else if (!strcmp(name, "REQ") && cJSON_IsString(arg)) {
		lanepost_req_refused(r, conn_id, arg->valuestring, strlen(arg->valuestring), why);
	} else if (!strcmp(name, "COUNT") && cJSON_IsString(arg)) {
		lanepost_closed(r, conn_id, arg->valuestring, strlen(arg->valuestring), why);
	} else if ((!strcmp(name, "NEG-OPEN") || !strcmp(name, "NEG-MSG")) && cJSON_IsString(arg)) {
		lanepost_neg_err(r, conn_id, arg->valuestring, strlen(arg->valuestring), why);
	} else {
		lanepost_notice(r, conn_id, why);
	}
}

/* A message the lane could not take: parsed here, only to answer it. */
static void ingress_refuse_unqueued(struct relayd *r, uint64_t conn_id, const char *data,
				    size_t len)
{
	cJSON *msg = json_parse(data, len, true);

	atomic_fetch_add(&r->stats.lane_refused, 1);
	ingress_refuse(r, conn_id, msg, "rate-limited: too many messages in flight, slow down");
	cJSON_Delete(msg);
}

/* The id of an EVENT the JSON reader refused (a lone UTF-16 surrogate, say):
 * the text begins ["EVENT", and holds "id":"<64 lowercase hex>".  Inside a
 * JSON string every quote is escaped, so that pattern is only ever a key. */
static bool ingress_unparsed_event_id(const char *data, size_t len, uint8_t id[32])
{
	static const char key[] = "\"id\":\"";
	const char *p = data, *end = data + len, *at;

	while (p < end && (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n'))
		p++;
	if (p == end || *p++ != '[')
		return false;
	while (p < end && (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n'))
		p++;
	if ((size_t)(end - p) < 7 || memcmp(p, "\"EVENT\"", 7) != 0)
		return false;
	at = memmem(p, (size_t)(end - p), key, sizeof(key) - 1);
	if (!at || (size_t)(end - at) < sizeof(key) - 1 + 65 || at[sizeof(key) - 1 + 64] != '"')
		return false;
	return hex_decode(at + sizeof(key) - 1, 64, id, 32) == 0;
}

/* A message that is not JSON: an EVENT whose id can still be read gets its
 * OK false (NIP-01: every EVENT is answered so), anything else a NOTICE. */
static void ingress_unparsed(struct relayd *r, uint64_t conn_id, const char *data, size_t len)
{
	static const char why[] = "invalid: not valid JSON";
	uint8_t id[32];
	size_t n = 0;
	char *text;

	if (ingress_unparsed_event_id(data, len, id)) {
		text = reply_ok(id, false, why, &n);
		lanepost_text(r, conn_id, text, n);
	} else {
		lanepost_notice(r, conn_id, why);
	}
}

static void ingress_dispatch(struct ingress_server *server, const struct ingress_job *job)
{
	struct ingress_lane *lane = server->lane;
	/* whole: anything but whitespace after the array is refused. */
	cJSON *msg = json_parse(job->data, job->len, true);
	const cJSON *verb = cJSON_GetArrayItem(msg, 0);
	struct verb_ctx v = { lane->r,	 server->verifier, job->conn_id, msg, 0, lane->auth,
			      &server->bundle };
	char why[96];

	if (job->limited && cJSON_IsArray(msg)) {
		ingress_refuse(lane->r, job->conn_id, msg, "rate-limited: slow down");
	} else if (memchr(job->data, '\0', job->len)) {
		lanepost_notice(lane->r, job->conn_id, "invalid: a message may not contain NUL bytes");
	} else if (!msg) {
		ingress_unparsed(lane->r, job->conn_id, job->data, job->len);
	} else if (!cJSON_IsArray(msg)) {
		lanepost_notice(lane->r, job->conn_id, "invalid: a message must be a JSON array");
	} else if (!cJSON_IsString(verb)) {
		lanepost_notice(lane->r, job->conn_id, "invalid: the first element must be a verb string");
	} else {
		v.nargs = cJSON_GetArraySize(msg) - 1;
		/* Requests leave in the order the lane handles them: only a run
		 * of EVENTs waits in the bundle. */
		if (strcmp(verb->valuestring, "EVENT") != 0)
			bundle_flush(lane->r, &server->bundle);
		for (size_t i = 0; i < sizeof(verb_table) / sizeof(verb_table[0]); i++) {
			if (strcmp(verb->valuestring, verb_table[i].name) == 0) {
				verb_table[i].handler(&v);
				cJSON_Delete(msg);
				return;
			}
		}
		/* cut between characters: a text frame must stay valid UTF-8 */
		snprintf(why, sizeof(why), "invalid: unknown message type '%.*s'",
			 (int)utf8_prefix(verb->valuestring, strlen(verb->valuestring), 40),
			 verb->valuestring);
		lanepost_notice(lane->r, job->conn_id, why);
	}
	cJSON_Delete(msg);
}

/* JSON whitespace (RFC 8259). */
static bool ingress_is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

/* Where a message's verb starts (just past "[" and any whitespace), or
 * len when it does not start like a JSON array.  Only the verb's spelling is
 * looked at, never parsed: these judgements are made before any parse. */
static size_t ingress_verb_at(const char *data, size_t len)
{
	size_t i = 0;

	while (i < len && ingress_is_space(data[i]))
		i++;
	if (i == len || data[i++] != '[')
		return len;
	while (i < len && ingress_is_space(data[i]))
		i++;
	return i;
}

/* Whether the verb at data + at is spelled exactly as quoted (with its quotes). */
static bool ingress_verb_is(const char *data, size_t len, size_t at, const char *quoted)
{
	size_t n = strlen(quoted);

	return len - at >= n && memcmp(data + at, quoted, n) == 0;
}

/*
 * Whether a message is cheap to handle, judged from its verb at data + at
 * (ingress_verb_at) without parsing it: everything but EVENT and AUTH, which carry a signature to
 * check.  Anything malformed counts as cheap (it is refused quickly).
 */
static bool ingress_is_cheap(const char *data, size_t len, size_t at)
{
	return !ingress_verb_is(data, len, at, "\"EVENT\"") &&
	       !ingress_verb_is(data, len, at, "\"AUTH\"");
}

/*
 * Whether a message is a request (REQ, CLOSE or COUNT) with its verb spelled
 * plainly: the only messages the service thread may handle itself
 * (ingress_submit).  A verb spelled with escapes goes to a lane as usual,
 * so a signature is never checked on the service thread.
 */
static bool ingress_is_request(const char *data, size_t len, size_t at)
{
	return ingress_verb_is(data, len, at, "\"REQ\"") ||
	       ingress_verb_is(data, len, at, "\"CLOSE\"") ||
	       ingress_verb_is(data, len, at, "\"COUNT\"");
}

/*
 * Whether the service thread should handle this message itself: a small
 * request of a connection with nothing in its lane.  Parsing a few hundred
 * bytes costs it less than handing them over: a wake-up of the express
 * thread, whose mail then wakes the service thread again, is two thread
 * switches (bench/RESULTS.md item 35).  Nothing of the connection can
 * overtake it: only the service thread submits the connection's messages,
 * and none is queued or in a lane thread's hands.
 */
static bool ingress_on_loop(struct ingress_lane *lane, uint64_t conn_id, const char *data,
			    size_t len, size_t verb_at)
{
	bool idle;

	if (len > relayd_cfg(lane->r)->inline_request_bytes || !ingress_is_request(data, len, verb_at))
		return false;
	pthread_mutex_lock(&lane->lock);
	idle = fairq_sender_idle(&lane->jobs, (uint32_t)(conn_id & 0xffffffffu));
	pthread_mutex_unlock(&lane->lock);
	return idle;
}

/* Queues job behind its connection's earlier ones and wakes a server: the
 * express one for cheap work (if the primary holds the connection, the
 * primary is busy and will come to it), else the primary.  Called with the
 * lane's lock held (so cheap is judged before taking it). */
static int ingress_queue(struct ingress_lane *lane, struct ingress_job *job, bool cheap)
{
	/* The connection's slot (conn.h: the id's low 32 bits). */
	if (fairq_push(&lane->jobs, (uint32_t)(job->conn_id & 0xffffffffu), &job->link, cheap))
		return ERR_NOMEM;
	pthread_cond_signal(cheap && lane->has_express ? &lane->wake_express : &lane->wake);
	return 0;
}

/* Called with the lane's lock held after a job was taken: when its slot's
 * backlog falls to half the pause mark, the reads of the connection in that
 * slot may resume (the service thread resumes whichever connection holds
 * the slot now, and ignores this unless it paused it). */
static void ingress_after_pop(struct ingress_lane *lane, const struct ingress_job *job)
{
	uint32_t slot = (uint32_t)(job->conn_id & 0xffffffffu);
	const struct ingress_job *last;
	struct mail *m;

	if (!job->resumes) {
		if (fairq_pending(&lane->jobs, slot) != lane->pause_at / 2)
			return;
		/* A connection paused behind a full lane waits for that job
		 * (the last it queued), not for half its backlog. */
		last = (const struct ingress_job *)fairq_last(&lane->jobs, slot);
		if (last && last->resumes)
			return;
	}
	m = mail_new(MAIL_RESUME, job->conn_id);
	if (m)
		mailbox_post(lane->r->mailbox, m);
}

/*
 * The primary's next job.  With an empty bundle it holds nothing of any
 * connection's, so every connection may go to the express server again;
 * before waiting it sends the run of events it holds.  NULL when stopping.
 */
static struct ingress_job *ingress_next(struct ingress_server *server)
{
	struct ingress_lane *lane = server->lane;
	struct ingress_job *job = NULL;

	pthread_mutex_lock(&lane->lock);
	while (!lane->stop) {
		if (!server->bundle.count) {
			fairq_release(&lane->jobs);
			if (lane->has_express && fairq_express_ready(&lane->jobs))
				pthread_cond_signal(&lane->wake_express);
		}
		job = (struct ingress_job *)fairq_pop(&lane->jobs);
		if (job) {
			ingress_after_pop(lane, job);
			break;
		}
		if (server->bundle.count) {
			pthread_mutex_unlock(&lane->lock);
			bundle_flush(lane->r, &server->bundle);
			pthread_mutex_lock(&lane->lock);
			continue;
		}
		pthread_cond_wait(&lane->wake, &lane->lock);
	}
	pthread_mutex_unlock(&lane->lock);
	return job;
}

/* The express server's next job, its connection's slot in *slot. */
static struct ingress_job *ingress_next_express(struct ingress_lane *lane, uint32_t *slot)
{
	struct ingress_job *job = NULL;

	pthread_mutex_lock(&lane->lock);
	while (!lane->stop && !(job = (struct ingress_job *)fairq_pop_express(&lane->jobs, slot)))
		pthread_cond_wait(&lane->wake_express, &lane->lock);
	if (job)
		ingress_after_pop(lane, job);
	pthread_mutex_unlock(&lane->lock);
	return job;
}

/* Handles one job and frees it. */
static void ingress_run(struct ingress_server *server, struct ingress_job *job)
{
	if (job->data)
		ingress_dispatch(server, job);
	else
		auth_forget(server->lane->auth, job->conn_id); /* the connection closed */
	free(job->data);
	free(job);
}

static void *ingress_main(void *arg)
{
	struct ingress_server *server = arg;
	struct ingress_job *job;

	prio_set_this_thread((int)relayd_cfg(server->lane->r)->verify_nice);
	while ((job = ingress_next(server))) {
		ingress_run(server, job);
		bundle_flush_if_due(server->lane->r, &server->bundle);
	}
	bundle_flush(server->lane->r, &server->bundle); /* stopping: send or fail what is left */
	return NULL;
}

static void *ingress_express_main(void *arg)
{
	struct ingress_server *server = arg;
	struct ingress_lane *lane = server->lane;
	struct ingress_job *job;
	uint32_t slot;

	slice_set_this_thread(relayd_cfg(lane->r)->request_slice_us);
	while ((job = ingress_next_express(lane, &slot))) {
		ingress_run(server, job);
		/* Only a cheap-looking message whose verb was spelled with JSON
		 * escapes fills it; it leaves before the connection's next one. */
		bundle_flush(lane->r, &server->bundle);
		pthread_mutex_lock(&lane->lock);
		fairq_express_done(&lane->jobs, slot);
		if (lane->jobs.count)
			pthread_cond_signal(&lane->wake); /* its next may be the primary's */
		pthread_mutex_unlock(&lane->lock);
	}
	return NULL;
}

/* The lane conn_id is bound to: its slot (conn.h) modulo the lanes. */
static struct ingress_lane *ingress_lane_of(struct ingress *in, uint64_t conn_id)
{
	return &in->lanes[(conn_id & 0xffffffffu) % in->n];
}

uint32_t ingress_auth_list(struct ingress *in, uint64_t conn_id, uint8_t out[][32])
{
	return auth_list(ingress_lane_of(in, conn_id)->auth, conn_id, out);
}

void ingress_note_host(struct ingress *in, uint64_t conn_id, const char *host)
{
	(void)auth_note_host(ingress_lane_of(in, conn_id)->auth, conn_id, host);
}

void ingress_note_peer(struct ingress *in, uint64_t conn_id, const char *ip)
{
	(void)auth_note_peer(ingress_lane_of(in, conn_id)->auth, conn_id, ip);
}

void ingress_forget(struct ingress *in, uint64_t conn_id)
{
	struct ingress_lane *lane = ingress_lane_of(in, conn_id);
	struct ingress_job *job;

	if (in->inline_mode) {
		auth_forget(lane->auth, conn_id);
		return;
	}
	job = calloc(1, sizeof(*job));
	if (!job) {
		/* Out of memory: forget it now rather than never (entries are
		 * keyed by the whole id, which no later connection reuses).  An
		 * AUTH of it still queued may add it back; that one lingers. */
		auth_forget(lane->auth, conn_id);
		return;
	}
	job->conn_id = conn_id;
	pthread_mutex_lock(&lane->lock);
	if (ingress_queue(lane, job, true)) {
		free(job);
		auth_forget(lane->auth, conn_id); /* as above */
	}
	pthread_mutex_unlock(&lane->lock);
}

int ingress_submit(struct ingress *in, uint64_t conn_id, char *data, size_t len, bool limited,
		   bool *pause)
{
	uint32_t slot = (uint32_t)(conn_id & 0xffffffffu); /* conn.h */
	struct ingress_lane *lane = &in->lanes[slot % in->n];
	struct ingress_job *job;
	size_t verb_at;
	bool cheap, over_depth = false;
	int rc = 0;

	*pause = false;
	if (in->inline_mode) {
		struct ingress_job now = { { NULL, false }, conn_id, data, len, limited, false };

		ingress_dispatch(&lane->primary, &now);
		bundle_flush(lane->r, &lane->primary.bundle);
		free(data);
		return 0;
	}
	verb_at = ingress_verb_at(data, len);
	if (ingress_on_loop(lane, conn_id, data, len, verb_at)) {
		struct ingress_job now = { { NULL, false }, conn_id, data, len, limited, false };

		atomic_fetch_add(&lane->r->stats.requests_on_loop, 1);
		ingress_dispatch(&lane->on_loop, &now);
		free(data);
		return 0;
	}
	/* Callers pass buffers from buf_take(), which end with a NUL past len. */
	job = malloc(sizeof(*job));
	if (!job) {
		ingress_refuse_unqueued(lane->r, conn_id, data, len);
		free(data);
		return ERR_NOMEM;
	}
	*job = (struct ingress_job){ { NULL, false }, conn_id, data, len, limited, false };
	cheap = ingress_is_cheap(data, len, verb_at);
	pthread_mutex_lock(&lane->lock);
	if (lane->jobs.count >= lane->depth) {
		/* Answering now would overtake the connection's earlier messages
		 * (a REQ refused before the queued REQ of its id opens it). */
		if (fairq_sender_idle(&lane->jobs, slot))
			rc = ERR_FULL;
		else
			job->resumes = over_depth = true;
	}
	if (!rc)
		rc = ingress_queue(lane, job, cheap);
	if (!rc)
		*pause = over_depth || fairq_pending(&lane->jobs, slot) >= lane->pause_at;
	pthread_mutex_unlock(&lane->lock);
	if (rc) {
		ingress_refuse_unqueued(lane->r, conn_id, data, len);
		free(data);
		free(job);
	}
	return rc;
}

/* Sets up a server of lane number i (its thread starts later). */
static void ingress_server_init(struct ingress_lane *lane, uint32_t i,
				struct ingress_server *server, bool express)
{
	server->lane = lane;
	server->express = express;
	/* Named for top -H and perf: "lane0", "express0", ... */
	snprintf(server->name, sizeof(server->name), "%s%u", express ? "express" : "lane",
		 i % 1000); /* verify_threads <= 64 */
	server->verifier = sig_verifier_new();
	if (!server->verifier)
		fatalx("cannot start an ingress lane: no memory");
}

static void ingress_server_start(struct ingress_server *server)
{
	if (pthread_create(&server->thread, NULL,
			   server->express ? ingress_express_main : ingress_main, server))
		fatalx("cannot start an ingress thread");
	pthread_setname_np(server->thread, server->name);
	server->started = true;
}

struct ingress *ingress_start(struct relayd *r)
{
	struct ingress *in = calloc(1, sizeof(*in));
	uint32_t n = relayd_cfg(r)->verify_threads;

	if (!in || !(in->lanes = calloc(n ? n : 1, sizeof(*in->lanes)))) {
		free(in);
		return NULL;
	}
	in->inline_mode = n == 0;
	in->n = n ? n : 1;
	for (uint32_t i = 0; i < in->n; i++) {
		struct ingress_lane *lane = &in->lanes[i];

		lane->r = r;
		lane->jobs = (struct fairq)FAIRQ_INIT;
		pthread_mutex_init(&lane->lock, NULL);
		pthread_cond_init(&lane->wake, NULL);
		pthread_cond_init(&lane->wake_express, NULL);
		lane->has_express = !in->inline_mode && relayd_cfg(r)->express_lane;
		lane->pause_at = relayd_cfg(r)->max_queued_messages;
		lane->depth = relayd_cfg(r)->lane_depth;
		ingress_server_init(lane, i, &lane->primary, false);
		lane->on_loop.lane = lane;
		if (lane->has_express)
			ingress_server_init(lane, i, &lane->express, true);
		lane->auth = auth_table_new();
		if (!lane->auth)
			fatalx("cannot start ingress lane %u", i);
	}
	for (uint32_t i = 0; i < n; i++) {
		ingress_server_start(&in->lanes[i].primary);
		if (in->lanes[i].has_express)
			ingress_server_start(&in->lanes[i].express);
	}
	return in;
}

static void ingress_server_stop(struct ingress_server *server)
{
	if (server->started)
		pthread_join(server->thread, NULL);
	sig_verifier_free(server->verifier);
}

void ingress_stop(struct ingress *in)
{
	if (!in)
		return;
	for (uint32_t i = 0; i < in->n; i++) {
		struct ingress_lane *lane = &in->lanes[i];
		struct ingress_job *job;

		pthread_mutex_lock(&lane->lock);
		lane->stop = true;
		pthread_cond_broadcast(&lane->wake);
		pthread_cond_broadcast(&lane->wake_express);
		pthread_mutex_unlock(&lane->lock);
		ingress_server_stop(&lane->primary);
		if (lane->has_express)
			ingress_server_stop(&lane->express);
		while ((job = (struct ingress_job *)fairq_pop(&lane->jobs))) {
			free(job->data);
			free(job);
		}
		fairq_free(&lane->jobs);
		auth_table_free(lane->auth);
	}
	free(in->lanes);
	free(in);
}
