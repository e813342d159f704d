/* plugin.c - the write-policy plugin's thread (see plugin.h). */
#include "plugin.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "../common/buf.h"
#include "../common/deadline.h"
#include "../common/err.h"
#include "../common/log.h"
#include "../proto/msg.h"
#include "db.h"
#include "ingest.h"
#include "jobs.h"
#include "plugin_proc.h"
#include "plugin_wire.h"
#include "queue.h"
#include "reply.h"
#include "stored.h"
#include "writer.h"

#define PLUGIN_BACKOFF_FIRST_MS 100
#define PLUGIN_BACKOFF_MAX_MS 10000
#define PLUGIN_STAT_EVERY_MS 1000
/* A program just started may take this long (or plugin_timeout_ms, if
 * longer) over its first answer: an interpreter's start is slow. */
#define PLUGIN_START_GRACE_MS 3000
/* The longest answer line; a longer one is garbage. */
#define PLUGIN_LINE_MAX 65536
/* Requests written ahead while the program is slow to read them. */
#define PLUGIN_TX_MAX (4u << 20)

/* SLOT_GONE: handed on ahead of an earlier event of another connection;
 * a hole until the head passes it. */
enum slot_state { SLOT_UNSENT, SLOT_SENT, SLOT_DECIDED, SLOT_GONE };
enum slot_verdict { VERDICT_STORE, VERDICT_REFUSE, VERDICT_SHADOW, VERDICT_DUPLICATE };

struct plugin_slot {
	struct write_job *job;
	int64_t deadline_ms;
	enum slot_state state;
	enum slot_verdict verdict;
	char msg[PLUGIN_MSG_MAX + 64]; /* VERDICT_REFUSE: the OK message */
};

/* One connection seen holding an undecided event, in one scan (gen). */
struct plugin_held {
	uint64_t conn_id;
	uint32_t gen;
	uint16_t worker;
	bool import;
};

struct plugin {
	struct stored *s;
	pthread_t thread;
	struct queue *inbox; /* submitted, not yet in the ring */
	int wake_fd;         /* eventfd: a submission, a reload, the stop */
	atomic_bool reload, stopping;
	atomic_bool asleep;  /* the thread is (about to be) in poll() */
	bool running; /* the thread runs (main thread's) */
	/* The plugin thread's own. */
	struct plugin_slot *ring; /* events in arrival order */
	size_t cap, head, count;
	size_t next_send;         /* ring offset of the first event not yet considered for sending */
	size_t nsent;             /* SLOT_SENT events */
	struct plugin_proc proc;
	bool started_once, draining;
	bool answered;            /* the running program has answered */
	int64_t started_ms;
	int64_t restart_at;       /* when the program may start (ms) */
	int backoff_ms;
	struct plugin_file file;
	int64_t next_stat;
	struct buf tx;            /* request lines not yet written */
	size_t tx_off;
	struct buf rx;            /* an answer line not yet complete */
	struct plugin_held *held; /* connections with an undecided event (plugin_release) */
	size_t held_mask;
	uint32_t held_gen;
	size_t ndecided;          /* SLOT_DECIDED events, not handed on yet */
	bool rescan;              /* one was decided since plugin_release_behind() */
	sqlite3 *db;              /* read-only: is an event stored already? */
	sqlite3_stmt *find_id;
};

static struct plugin_slot *plugin_at(struct plugin *p, size_t offset)
{
	return &p->ring[(p->head + offset) % p->cap];
}

static bool plugin_fail_open(const struct plugin *p)
{
	return p->s->cfg.plugin_fail_open != 0;
}

/* ---- answers ---- */

/* NIP-01's machine-readable prefixes: a plugin's message that starts with
 * one keeps it. */
static bool plugin_has_prefix(const char *msg)
{
	static const char *const prefixes[] = { "duplicate:", "pow:", "blocked:", "rate-limited:",
						"invalid:", "restricted:", "mute:", "error:",
						"auth-required:" };

	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if (strncmp(msg, prefixes[i], strlen(prefixes[i])) == 0)
			return true;
	return false;
}

static void plugin_answer_worker(struct plugin *p, const struct write_job *job, bool accepted,
				 const char *msg)
{
	struct msg_header h = msg_header_for(job->to.worker, job->to.request_id);
	struct msg_event_result r = { .conn_id = job->conn_id, .accepted = accepted,
				      .message = { msg, (uint32_t)strlen(msg) } };
	struct buf out = BUF_INIT;

	memcpy(r.id, job->event.id, EVENT_ID_LEN);
	if (msg_encode_event_result(&out, &h, &r) == 0)
		reply_send(p->s, &job->to, out.data, out.len);
	buf_free(&out);
}

/* Answers job (a worker's OK, or an import's result) and frees it. */
static void plugin_answer(struct plugin *p, struct write_job *job, int outcome, const char *msg)
{
	struct stored_stats *st = &p->s->stats;
	bool accepted = outcome != INGEST_REFUSED && outcome != INGEST_FAILED;

	writer_count_reject(st, msg);
	if (outcome == INGEST_DUPLICATE)
		atomic_fetch_add(&st->events_duplicate, 1);
	else if (!accepted)
		atomic_fetch_add(&st->events_rejected, 1);
	if (job->admin) {
		struct admin_result *r = &job->admin->results[job->admin_index];

		r->outcome = outcome;
		snprintf(r->text, sizeof(r->text), "%s", msg);
		r->message = r->text;
	} else {
		plugin_answer_worker(p, job, accepted, msg);
	}
	write_job_free(job);
}

/* An event leaves the ring: on to the writer, or answered here. */
static void plugin_finish(struct plugin *p, struct plugin_slot *slot)
{
	struct write_job *job = slot->job;

	slot->job = NULL;
	switch (slot->verdict) {
	case VERDICT_STORE:
		if (queue_push(p->s->write_q, job))
			plugin_answer(p, job, INGEST_FAILED, "error: the relay is overloaded, retry");
		break;
	case VERDICT_DUPLICATE:
		plugin_answer(p, job, INGEST_DUPLICATE, "duplicate: already have this event");
		break;
	case VERDICT_SHADOW:
		/* OK true to its client; an operator's import is told the truth. */
		if (job->admin)
			plugin_answer(p, job, INGEST_REFUSED, "blocked: shadow-rejected by the write policy");
		else
			plugin_answer(p, job, INGEST_STORED, "");
		break;
	case VERDICT_REFUSE:
		plugin_answer(p, job, INGEST_REFUSED, slot->msg);
		break;
	}
}

static void plugin_pop_head(struct plugin *p)
{
	p->head = (p->head + 1) % p->cap;
	p->count--;
	if (p->next_send)
		p->next_send--;
}

/* Finds job's connection in this scan's table; with add, notes it.
 * Imports count as one connection. */
static bool plugin_held_by(struct plugin *p, const struct write_job *job, bool add)
{
	bool import = job->admin != NULL;
	uint64_t conn = import ? 0 : job->conn_id;
	uint16_t worker = import ? 0 : job->to.worker;
	size_t i = (size_t)((conn * 0x9e3779b97f4a7c15ull) >> 32 ^ worker) & p->held_mask;

	for (;; i = (i + 1) & p->held_mask) {
		struct plugin_held *h = &p->held[i];

		if (h->gen != p->held_gen) {
			if (add)
				*h = (struct plugin_held){ conn, p->held_gen, worker, import };
			return false;
		}
		if (h->conn_id == conn && h->worker == worker && h->import == import)
			return true;
	}
}

/* Hands on decided events behind the head whose connection has no
 * earlier event still undecided: one slow answer holds back only its own
 * connection's later events. */
static void plugin_release_behind(struct plugin *p)
{
	if (++p->held_gen == 0) { /* wrapped: forget every old stamp */
		memset(p->held, 0, (p->held_mask + 1) * sizeof(*p->held));
		p->held_gen = 1;
	}
	for (size_t i = 0; i < p->count; i++) {
		struct plugin_slot *slot = plugin_at(p, i);

		if (slot->state == SLOT_GONE)
			continue;
		if (slot->state != SLOT_DECIDED) {
			plugin_held_by(p, slot->job, true);
		} else if (!plugin_held_by(p, slot->job, false)) {
			plugin_finish(p, slot);
			slot->state = SLOT_GONE;
			p->ndecided--;
		}
	}
}

/* Hands on decided events: in arrival order for each connection. */
static void plugin_release(struct plugin *p)
{
	while (p->count && plugin_at(p, 0)->state >= SLOT_DECIDED) {
		if (plugin_at(p, 0)->state == SLOT_DECIDED) {
			plugin_finish(p, plugin_at(p, 0));
			p->ndecided--;
		}
		plugin_pop_head(p);
	}
	/* Answers in order (a plugin that answers one by one) leave nothing
	 * decided behind the head, and no scan; nor do events still held
	 * when nothing was decided since the last scan. */
	if (p->ndecided && p->rescan)
		plugin_release_behind(p);
	p->rescan = false;
}

static void plugin_decide(struct plugin *p, struct plugin_slot *slot, enum slot_verdict v,
			  const char *msg)
{
	if (slot->state == SLOT_SENT)
		p->nsent--;
	if (slot->state != SLOT_DECIDED)
		p->ndecided++;
	p->rescan = true;
	slot->state = SLOT_DECIDED;
	slot->verdict = v;
	snprintf(slot->msg, sizeof(slot->msg), "%s", msg ? msg : "");
}

/* An event the program could not judge: refused error:, or stored when
 * the operator chose to fail open. */
static void plugin_decide_failed(struct plugin *p, struct plugin_slot *slot, const char *why)
{
	if (plugin_fail_open(p)) {
		atomic_fetch_add(&p->s->stats.plugin.fail_open, 1);
		plugin_decide(p, slot, VERDICT_STORE, NULL);
	} else {
		plugin_decide(p, slot, VERDICT_REFUSE, why);
	}
}

/* ---- the program ---- */

/* Stops the program and forgets the lines to and from it. */
static void plugin_end(struct plugin *p)
{
	plugin_proc_stop(&p->proc);
	buf_reset(&p->tx);
	buf_reset(&p->rx);
	p->tx_off = 0;
}

/* The next start waits twice as long as the last, 100 ms to 10 s. */
static void plugin_back_off(struct plugin *p, int64_t now)
{
	p->backoff_ms = p->backoff_ms ? p->backoff_ms * 2 : PLUGIN_BACKOFF_FIRST_MS;
	if (p->backoff_ms > PLUGIN_BACKOFF_MAX_MS)
		p->backoff_ms = PLUGIN_BACKOFF_MAX_MS;
	p->restart_at = now + p->backoff_ms;
}

/* The program failed (why: for its clients): every event it held is
 * decided, it is stopped, and it starts again after the backoff. */
static void plugin_fail(struct plugin *p, const char *why, const char *log_why)
{
	for (size_t i = 0; i < p->next_send; i++) {
		struct plugin_slot *slot = plugin_at(p, i);

		if (slot->state == SLOT_SENT)
			plugin_decide_failed(p, slot, why);
	}
	log_warnx("write-policy plugin %s: %s; starting it again in %d ms", p->s->cfg.plugin,
		  log_why, p->backoff_ms ? p->backoff_ms : PLUGIN_BACKOFF_FIRST_MS);
	atomic_fetch_add(&p->s->stats.plugin.failures, 1);
	plugin_end(p);
	plugin_back_off(p, deadline_now_ms());
}

static void plugin_launch(struct plugin *p, int64_t now)
{
	const char *path = p->s->cfg.plugin;

	if (p->proc.pid || now < p->restart_at || atomic_load(&p->stopping))
		return;
	if (plugin_file_stat(path, &p->file))
		memset(&p->file, 0, sizeof(p->file));
	if (plugin_proc_start(&p->proc, path)) {
		log_warn("cannot run the write-policy plugin %s", path);
		plugin_back_off(p, now);
		return;
	}
	p->answered = false;
	p->started_ms = now;
	if (p->started_once)
		atomic_fetch_add(&p->s->stats.plugin.restarts, 1);
	p->started_once = true;
	log_info("write-policy plugin %s started (pid %d)", path, (int)p->proc.pid);
}

/* A reload asked (SIGHUP) or a changed file: the program is started again
 * once it holds no event, new ones waiting meanwhile. */
static void plugin_check_reload(struct plugin *p, int64_t now)
{
	struct plugin_file f;

	if (now >= p->next_stat) {
		p->next_stat = now + PLUGIN_STAT_EVERY_MS;
		if (p->proc.pid && plugin_file_stat(p->s->cfg.plugin, &f) == 0 &&
		    !plugin_file_same(&f, &p->file))
			p->draining = true;
	}
	if (atomic_exchange(&p->reload, false))
		p->draining = true;
	if (!p->draining || p->nsent)
		return;
	p->draining = false;
	if (p->proc.pid) {
		log_info("write-policy plugin %s: starting it again (reload)", p->s->cfg.plugin);
		plugin_end(p);
	}
	p->backoff_ms = 0;
	p->restart_at = now;
}

/* ---- requests and answers ---- */

static void plugin_queue_requests(struct plugin *p)
{
	while (p->proc.pid && !p->draining && p->next_send < p->count && p->tx.len < PLUGIN_TX_MAX) {
		struct plugin_slot *slot = plugin_at(p, p->next_send++);
		const struct write_job *job = slot->job;

		if (slot->state != SLOT_UNSENT)
			continue;
		if (plugin_wire_request(&p->tx, &job->event, job->received_at,
					(enum plugin_source)job->source, job->source_info)) {
			plugin_decide(p, slot, VERDICT_REFUSE, "error: out of memory");
			continue;
		}
		slot->state = SLOT_SENT;
		p->nsent++;
	}
}

static void plugin_flush(struct plugin *p)
{
	while (p->proc.pid && p->tx_off < p->tx.len) {
		ssize_t n = write(p->proc.in_fd, p->tx.data + p->tx_off, p->tx.len - p->tx_off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return;
		if (n < 0) {
			plugin_fail(p, "error: the write-policy plugin failed, retry", "its stdin closed");
			return;
		}
		p->tx_off += (size_t)n;
	}
	buf_reset(&p->tx);
	p->tx_off = 0;
}

static struct plugin_slot *plugin_find_sent(struct plugin *p, const uint8_t *id)
{
	for (size_t i = 0; i < p->next_send; i++) {
		struct plugin_slot *slot = plugin_at(p, i);

		if (slot->state == SLOT_SENT && memcmp(slot->job->event.id, id, EVENT_ID_LEN) == 0)
			return slot;
	}
	return NULL;
}

static void plugin_take_answer(struct plugin *p, const struct plugin_answer *a)
{
	struct plugin_slot *slot = plugin_find_sent(p, a->id);
	struct stored_plugin_stats *st = &p->s->stats.plugin;
	char msg[PLUGIN_MSG_MAX + 64];

	p->backoff_ms = 0; /* it works */
	p->answered = true;
	if (!slot) {
		log_debug("write-policy plugin answered an event it was not asked about");
		return;
	}
	switch (a->action) {
	case PLUGIN_ACCEPT:
		atomic_fetch_add(&st->accepted, 1);
		plugin_decide(p, slot, VERDICT_STORE, NULL);
		break;
	case PLUGIN_SHADOW_REJECT:
		atomic_fetch_add(&st->shadow_rejected, 1);
		plugin_decide(p, slot, VERDICT_SHADOW, NULL);
		break;
	case PLUGIN_REJECT:
		atomic_fetch_add(&st->rejected, 1);
		if (plugin_has_prefix(a->msg))
			snprintf(msg, sizeof(msg), "%s", a->msg);
		else
			snprintf(msg, sizeof(msg), "blocked: %s",
				 a->msg[0] ? a->msg : "refused by the relay's write policy");
		plugin_decide(p, slot, VERDICT_REFUSE, msg);
		break;
	}
}

/* One line of the program's stdout; returns false when it was garbage
 * (the program is then stopped). */
static bool plugin_line(struct plugin *p, const char *line, size_t len)
{
	struct plugin_answer a;

	if (len && line[len - 1] == '\r')
		len--;
	if (!len)
		return true;
	if (plugin_wire_answer(line, len, &a)) {
		plugin_fail(p, "error: the write-policy plugin gave no valid answer, retry",
			    "it printed a line that is not an answer");
		return false;
	}
	plugin_take_answer(p, &a);
	return true;
}

static void plugin_read(struct plugin *p)
{
	char chunk[16384];

	while (p->proc.pid) {
		ssize_t n = read(p->proc.out_fd, chunk, sizeof(chunk));
		size_t start = 0;

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return;
		if (n <= 0) {
			plugin_fail(p, "error: the write-policy plugin failed, retry", "it exited");
			return;
		}
		if (buf_append(&p->rx, chunk, (size_t)n))
			return;
		for (size_t i = 0; i < p->rx.len; i++) {
			if (p->rx.data[i] != '\n')
				continue;
			if (!plugin_line(p, p->rx.data + start, i - start))
				return; /* rx was reset */
			start = i + 1;
		}
		memmove(p->rx.data, p->rx.data + start, p->rx.len - start);
		p->rx.len -= start;
		if (p->rx.len > PLUGIN_LINE_MAX) {
			plugin_fail(p, "error: the write-policy plugin gave no valid answer, retry",
				    "it printed a line too long to be an answer");
			return;
		}
	}
}

/* ---- intake and deadlines ---- */

static bool plugin_stored_already(struct plugin *p, const struct event *ev)
{
	int rc;

	if (!p->find_id)
		return false;
	sqlite3_bind_blob(p->find_id, 1, ev->id, EVENT_ID_LEN, SQLITE_STATIC);
	rc = sqlite3_step(p->find_id);
	sqlite3_reset(p->find_id);
	return rc == SQLITE_ROW;
}

/* Moves submitted events into the ring while it has room. */
static void plugin_intake(struct plugin *p, int64_t now)
{
	struct write_job *job;

	while (p->count < p->cap && (job = queue_pop_nowait(p->inbox))) {
		struct plugin_slot *slot = plugin_at(p, p->count++);

		*slot = (struct plugin_slot){ .job = job,
					      .deadline_ms = now + p->s->cfg.plugin_timeout_ms };
		if (plugin_stored_already(p, &job->event))
			plugin_decide(p, slot, VERDICT_DUPLICATE, NULL);
	}
}

/* Until a new program's first answer, the end of its start's grace. */
static int64_t plugin_start_ends(const struct plugin *p)
{
	int64_t grace = PLUGIN_START_GRACE_MS;

	if (!p->proc.pid || p->answered)
		return 0;
	if (p->s->cfg.plugin_timeout_ms > grace)
		grace = p->s->cfg.plugin_timeout_ms;
	return p->started_ms + grace;
}

/* Deadlines grow along the ring, so only the head can be late first. */
static void plugin_expire(struct plugin *p, int64_t now)
{
	for (;;) {
		struct plugin_slot *slot;

		plugin_release(p);
		if (!p->count || (slot = plugin_at(p, 0))->deadline_ms > now)
			return;
		if (slot->state == SLOT_SENT && now < plugin_start_ends(p))
			return; /* still starting */
		if (slot->state == SLOT_SENT) {
			atomic_fetch_add(&p->s->stats.plugin.timeouts, 1);
			plugin_fail(p, "error: the write-policy plugin did not answer in time, retry",
				    "it did not answer in time");
		} else {
			plugin_decide_failed(p, slot, "error: the write-policy plugin is not running, retry");
		}
	}
}

static int plugin_poll_timeout(const struct plugin *p, int64_t now)
{
	int64_t until = p->next_stat;

	if (p->count && p->ring[p->head].deadline_ms < until)
		until = p->ring[p->head].deadline_ms;
	if (until < plugin_start_ends(p))
		until = plugin_start_ends(p) < p->next_stat ? plugin_start_ends(p) : p->next_stat;
	if (!p->proc.pid && p->restart_at < until)
		until = p->restart_at;
	return until <= now ? 0 : (int)(until - now);
}

static void plugin_wait(struct plugin *p, int64_t now)
{
	struct pollfd fds[3] = { { p->wake_fd, POLLIN, 0 } };
	nfds_t n = 1;
	uint64_t count;

	if (p->proc.pid) {
		fds[n++] = (struct pollfd){ p->proc.out_fd, POLLIN, 0 };
		if (p->tx_off < p->tx.len)
			fds[n++] = (struct pollfd){ p->proc.in_fd, POLLOUT, 0 };
	}
	int timeout = plugin_poll_timeout(p, now);

	/* A full ring takes nothing new: the inbox then waits, unwatched. */
	if (p->count == p->cap)
		fds[0].events = 0;
	/* Submitters wake the thread only while it sleeps (plugin_submit);
	 * one that pushed before this store saw no sleeper, so look. */
	atomic_store(&p->asleep, true);
	if (p->count < p->cap && queue_length(p->inbox))
		timeout = 0;
	if (poll(fds, n, timeout) > 0 && (fds[0].revents & POLLIN))
		(void)!read(p->wake_fd, &count, sizeof(count));
	atomic_store(&p->asleep, false);
}

/* ---- the thread ---- */

/* At the stop: what the program holds and what waits is refused. */
static void plugin_drain(struct plugin *p)
{
	struct write_job *job;

	for (size_t i = 0; i < p->count; i++) {
		struct plugin_slot *slot = plugin_at(p, i);

		if (slot->state < SLOT_DECIDED)
			plugin_decide(p, slot, VERDICT_REFUSE, "error: the relay is restarting, retry");
	}
	plugin_release(p);
	while ((job = queue_pop_nowait(p->inbox)))
		plugin_answer(p, job, INGEST_FAILED, "error: the relay is restarting, retry");
	plugin_proc_stop(&p->proc);
}

static void *plugin_main(void *arg)
{
	struct plugin *p = arg;

	pthread_setname_np(pthread_self(), "plugin");
	while (!atomic_load(&p->stopping)) {
		int64_t now = deadline_now_ms();

		plugin_intake(p, now);
		plugin_check_reload(p, now);
		plugin_launch(p, now);
		plugin_queue_requests(p);
		plugin_flush(p);
		plugin_expire(p, now);
		plugin_wait(p, now);
		if (p->proc.pid)
			plugin_read(p);
	}
	plugin_drain(p);
	return NULL;
}

void plugin_free(struct plugin *p)
{
	if (!p)
		return;
	sqlite3_finalize(p->find_id);
	db_close(p->db);
	queue_free(p->inbox);
	if (p->wake_fd >= 0)
		close(p->wake_fd);
	buf_free(&p->tx);
	buf_free(&p->rx);
	free(p->ring);
	free(p->held);
	free(p);
}

/* Without it every event goes to the program; the writer still answers a
 * duplicate correctly. */
static void plugin_open_db(struct plugin *p)
{
	if (db_open(p->s->db_path, false, NULL, &p->db) ||
	    sqlite3_prepare_v2(p->db, "SELECT 1 FROM events WHERE id = ?1", -1, &p->find_id, NULL))
		log_warnx("write-policy plugin: cannot check for stored events; every event goes to it");
}

struct plugin *plugin_start(struct stored *s)
{
	struct plugin *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->s = s;
	p->cap = s->cfg.plugin_queue;
	p->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	p->ring = calloc(p->cap, sizeof(*p->ring));
	for (p->held_mask = 1; p->held_mask < 2 * p->cap; p->held_mask <<= 1)
		;
	p->held = calloc(p->held_mask, sizeof(*p->held));
	p->held_mask--;
	p->inbox = queue_new(p->cap);
	plugin_proc_init(&p->proc);
	if (p->wake_fd < 0 || !p->ring || !p->held || !p->inbox) {
		plugin_free(p);
		return NULL;
	}
	plugin_open_db(p);
	if (pthread_create(&p->thread, NULL, plugin_main, p)) {
		plugin_free(p);
		return NULL;
	}
	p->running = true;
	return p;
}

static void plugin_wake(struct plugin *p)
{
	uint64_t one = 1;

	(void)!write(p->wake_fd, &one, sizeof(one));
}

int plugin_submit(struct plugin *p, struct write_job *job)
{
	int rc = queue_push(p->inbox, job);

	if (rc == ERR_FULL)
		atomic_fetch_add(&p->s->stats.plugin.queue_full, 1);
	/* One eventfd write per sleep, not per event, while it keeps up. */
	if (rc == 0 && atomic_exchange(&p->asleep, false))
		plugin_wake(p);
	return rc == ERR_FULL ? ERR_FULL : rc ? ERR_CLOSED : 0;
}

void plugin_reload(struct plugin *p)
{
	if (!p)
		return;
	atomic_store(&p->reload, true);
	plugin_wake(p);
}

void plugin_stop(struct plugin *p)
{
	if (!p || !p->running)
		return;
	queue_close(p->inbox);
	atomic_store(&p->stopping, true);
	plugin_wake(p);
	pthread_join(p->thread, NULL);
	p->running = false;
}
