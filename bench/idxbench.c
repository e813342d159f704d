/*
 * idxbench.c - one owner thread for the subscription index vs a striped or a
 * globally locked index, in one process, on one synthetic workload.
 *
 *   owner        one thread owns one subidx (as stored's broadcaster does);
 *                the main thread, as producer, pushes a job per event into a
 *                stored/queue.h queue of --queue slots, the owner pops and
 *                matches.  Adds and removes travel on the same queue.
 *   striped-K    K subidx stripes, each behind its own mutex, a subscription
 *                in stripe hash(conn_id) % K; two matchers lock every stripe
 *                in turn per event; an add or remove locks one stripe.
 *   global-lock  striped-1: one subidx, one mutex, two matchers.
 *
 * While events are matched, a bystander adds a subscription every 1 ms and
 * removes it (a REQ, then a CLOSE), timing each add: for owner from the push
 * until the owner applied it, otherwise the locked call.  Its filter names
 * real authors, so it lands in busy buckets, but until=1 matches nothing: all
 * designs must report the same callbacks and order-independent checksum (the
 * correctness cross-check; a difference exits 1).  Only the event phase is
 * timed.  Events are unsigned: subidx_match() never reads the signature.
 *
 *   idxbench [--subs 10000] [--events 200000] [--seed 1] [--queue 1024]
 *            [--designs owner,striped-2,striped-4,global-lock]
 */
#include <getopt.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "../common/err.h"
#include "../common/event.h"
#include "../common/filter.h"
#include "../common/hex.h"
#include "../stored/queue.h"
#include "../stored/subidx.h"

#define NPUB 1000      /* distinct authors */
#define NROOT 2000     /* events that #e filters and e tags point at */
#define WORKERS 4      /* relayd workers the connections are spread over */
#define SUBS_PER_CONN 4
#define MATCHERS 2     /* matcher threads of the locked designs */
#define LAT_MAX 120000 /* bystander samples kept: 2 minutes at 1 ms */
#define BYST_CONN (UINT64_C(1) << 40)

struct workload {
	uint8_t pub[NPUB][32];
	char pubhex[NPUB][65], roothex[NROOT][65];
	struct event *events;
	size_t nsubs, nevents;
	uint64_t sub_seed; /* every design draws the same subscriptions from it */
};

/* Sums over callbacks; addition commutes, so the match order does not matter. */
struct tally {
	uint64_t calls, sum;
	size_t ev; /* the event being matched */
};

enum job_kind { JOB_MATCH, JOB_ADD, JOB_REMOVE, JOB_STOP };

struct job {
	enum job_kind kind;
	size_t ev;              /* JOB_MATCH */
	struct filter *filters; /* JOB_ADD; the index takes it */
};

struct stripe {
	_Alignas(64) pthread_mutex_t lock; /* a cache line each: no false sharing */
	struct subidx *idx;
};

/* A matching thread: the owner (m[0]) or one of the locked designs' matchers. */
struct matcher {
	_Alignas(64) struct design *d; /* a line each: tallies change per callback */
	unsigned id;
	struct tally t;
};

/* One run of one design.  The owner design uses stripes[0] without its lock. */
struct design {
	const struct workload *w;
	unsigned k; /* stripes; 0 for owner */
	struct stripe *stripes;
	struct queue *q;    /* owner: the jobs, then the bystander's and stop */
	struct job *jobs, add, remove, stop;
	sem_t added;        /* owner: posted when the bystander's add is applied */
	struct matcher m[MATCHERS];
	atomic_bool done;   /* every event matched */
	double t0, t_end;
	double *lat;        /* bystander add latencies in seconds */
	size_t nlat;
};

static void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (!p) {
		fprintf(stderr, "idxbench: out of memory\n");
		exit(1);
	}
	return p;
}

static void check(int rc, const char *what)
{
	if (rc) {
		fprintf(stderr, "idxbench: %s: %s\n", what, err_name(rc));
		exit(1);
	}
}

static uint64_t mix64(uint64_t z)
{
	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

/* splitmix64: the same stream from the same --seed on every machine. */
static uint32_t rng_below(uint64_t *s, uint32_t n)
{
	return (uint32_t)(mix64(*s += UINT64_C(0x9e3779b97f4a7c15)) % n);
}

static void rng_bytes(uint64_t *s, uint8_t *out, size_t n)
{
	for (size_t i = 0; i < n; i++)
		out[i] = (uint8_t)rng_below(s, 256);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void sleep_until(double t)
{
	struct timespec ts = { (time_t)t, (long)((t - (double)(time_t)t) * 1e9) };

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL))
		;
}

static double cpu_seconds(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
	       (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

/* ---- the workload ---- */

static void f_authors(struct filter *f, const struct workload *w, uint64_t *rng, uint32_t n)
{
	f->has_authors = true, f->nauthors = n;
	f->authors = xmalloc(n * 32u);
	for (uint32_t i = 0; i < n; i++)
		memcpy(f->authors[i], w->pub[rng_below(rng, NPUB)], 32);
}

static void f_kinds(struct filter *f, uint32_t a, uint32_t b)
{
	f->has_kinds = true, f->nkinds = b ? 2 : 1;
	f->kinds = xmalloc(2 * sizeof(uint32_t));
	f->kinds[0] = a, f->kinds[1] = b;
}

/* `#name` with n values drawn from pool (64-character hex strings). */
static void f_tag(struct filter *f, char name, const char (*pool)[65], uint32_t npool,
		  uint64_t *rng, uint32_t n)
{
	struct filter_tag *t = f->tags = xmalloc(sizeof(*t));

	f->ntags = 1, t->name = name, t->nvalues = n;
	t->values = xmalloc(n * sizeof(char *));
	t->lens = xmalloc(n * sizeof(uint32_t));
	for (uint32_t i = 0; i < n; i++) {
		t->values[i] = memcpy(xmalloc(65), pool[rng_below(rng, npool)], 65);
		t->lens[i] = 64;
	}
}

/* Home feeds (authors, 75%), notifications (#p), threads (#e), some global
 * feeds (kinds only, 2.5%) and a few match-all with a limit (0.5%). */
static void make_filter(const struct workload *w, uint64_t *rng, struct filter *f)
{
	uint32_t r = rng_below(rng, 1000);

	filter_init(f);
	if (r < 750) {
		f_authors(f, w, rng, 1 + rng_below(rng, 20));
		if (rng_below(rng, 2))
			f_kinds(f, 1, 0);
	} else if (r < 870) {
		f_tag(f, 'p', w->pubhex, NPUB, rng, 1);
		f_kinds(f, 1, 7);
	} else if (r < 970) {
		f_tag(f, 'e', w->roothex, NROOT, rng, 1 + rng_below(rng, 3));
	} else {
		if (r < 995)
			f_kinds(f, rng_below(rng, 2) ? 1 : 7, 0);
		f->has_limit = true, f->limit = 50;
	}
}

/* A kind 1 note (70%) or a kind 7 reaction; e tags name roots, p tags authors. */
static void make_event(const struct workload *w, uint64_t *rng, size_t i, struct event *ev)
{
	uint8_t id[32], sig[64] = { 0 };
	struct event_tag tags[3];
	uint32_t nt = 0, kind = rng_below(rng, 10) < 7 ? 1 : 7;
	uint32_t np = kind == 7 ? 1 : rng_below(rng, 3);

	rng_bytes(rng, id, sizeof(id));
	if (kind == 7 || rng_below(rng, 2))
		tags[nt++] = (struct event_tag){ 'e', 64, w->roothex[rng_below(rng, NROOT)] };
	while (np--)
		tags[nt++] = (struct event_tag){ 'p', 64, w->pubhex[rng_below(rng, NPUB)] };
	check(event_build(ev, id, w->pub[rng_below(rng, NPUB)], sig, 1700000000 + (int64_t)i,
			  kind, tags, nt, "{}", 2), "event_build");
}

static struct workload *workload_new(size_t nsubs, size_t nevents, uint64_t seed)
{
	struct workload *w = xmalloc(sizeof(*w));
	uint8_t root[32];

	for (int i = 0; i < NPUB; i++) {
		rng_bytes(&seed, w->pub[i], 32);
		hex_encode(w->pub[i], 32, w->pubhex[i]);
	}
	for (int i = 0; i < NROOT; i++) {
		rng_bytes(&seed, root, 32);
		hex_encode(root, 32, w->roothex[i]);
	}
	w->nsubs = nsubs, w->nevents = nevents, w->sub_seed = mix64(seed);
	w->events = xmalloc(nevents * sizeof(*w->events));
	for (size_t i = 0; i < nevents; i++)
		make_event(w, &seed, i, &w->events[i]);
	return w;
}

static uint64_t sub_conn(size_t i)
{
	return i / SUBS_PER_CONN + 1;
}

/* Adds subscription i, drawing its filter from *rng (called in order of i). */
static void add_sub(struct subidx *idx, const struct workload *w, uint64_t *rng, size_t i)
{
	struct filter *f = xmalloc(sizeof(*f));
	char sid[16];
	uint64_t conn = sub_conn(i);

	make_filter(w, rng, f);
	snprintf(sid, sizeof(sid), "s%zu", i % SUBS_PER_CONN);
	check(subidx_add(idx, (uint16_t)(conn % WORKERS), conn, sid, strlen(sid), (uint32_t)i, f,
			 1), "subidx_add");
}

static void on_match(void *arg, uint16_t worker, uint64_t conn_id, uint32_t serial)
{
	struct tally *t = arg;

	t->calls++;
	t->sum += mix64(((uint64_t)serial << 32 | worker) ^ conn_id ^ ((uint64_t)t->ev << 40));
}

/* ---- the two ways to reach the index ---- */

static struct stripe *stripe_of(struct design *d, uint64_t conn_id)
{
	return &d->stripes[d->k ? mix64(conn_id) % d->k : 0];
}

/* The bystander's add (taking f) or remove, on an index it may touch now. */
static void byst_apply(struct subidx *idx, enum job_kind kind, struct filter *f)
{
	if (kind == JOB_ADD)
		check(subidx_add(idx, 9, BYST_CONN, "byst", 4, 0, f, 1), "subidx_add");
	else
		subidx_remove(idx, 9, BYST_CONN, "byst", 4);
}

/* A full queue refuses the push (queue.h), so a pusher that must not drop
 * the job sleeps briefly and retries. */
static void push_wait(struct queue *q, struct job *j)
{
	while (queue_push(q, j) == ERR_FULL)
		sleep_until(now() + 20e-6);
}

static void *owner_main(void *arg)
{
	struct design *d = arg;
	struct job *j;
	size_t matched = 0;

	while ((j = queue_pop(d->q)) != NULL && j->kind != JOB_STOP) {
		if (j->kind != JOB_MATCH) {
			byst_apply(d->stripes[0].idx, j->kind, j->filters);
			if (j->kind == JOB_ADD)
				sem_post(&d->added);
			continue;
		}
		d->m[0].t.ev = j->ev;
		subidx_match(d->stripes[0].idx, &d->w->events[j->ev], on_match, &d->m[0].t);
		if (++matched == d->w->nevents) {
			d->t_end = now();
			atomic_store(&d->done, true);
		}
	}
	return NULL;
}

/* Matcher id takes events id, id + MATCHERS, ... and starts at its own
 * stripe, so the two matchers do not queue on stripe 0 together. */
static void *matcher_main(void *arg)
{
	struct matcher *m = arg;
	struct design *d = m->d;
	unsigned id = m->id;

	for (size_t i = id; i < d->w->nevents; i += MATCHERS) {
		m->t.ev = i;
		for (unsigned s = 0; s < d->k; s++) {
			struct stripe *st = &d->stripes[(s + id) % d->k];

			pthread_mutex_lock(&st->lock);
			subidx_match(st->idx, &d->w->events[i], on_match, &m->t);
			pthread_mutex_unlock(&st->lock);
		}
	}
	return NULL;
}

/* ---- the bystander: a REQ and a CLOSE every millisecond ---- */

static void byst_call(struct design *d, enum job_kind kind, struct filter *f)
{
	struct stripe *st = stripe_of(d, BYST_CONN);

	if (!d->k) { /* a CLOSE is not waited for; FIFO keeps the jobs reusable */
		struct job *j = kind == JOB_ADD ? &d->add : &d->remove;

		j->filters = f;
		push_wait(d->q, j);
		while (kind == JOB_ADD && sem_wait(&d->added))
			;
		return;
	}
	pthread_mutex_lock(&st->lock);
	byst_apply(st->idx, kind, f);
	pthread_mutex_unlock(&st->lock);
}

static void *bystander_main(void *arg)
{
	struct design *d = arg;
	uint64_t rng = 0xb5;
	double next = now();

	while (!atomic_load(&d->done) && d->nlat < LAT_MAX) {
		struct filter *f = xmalloc(sizeof(*f));
		double t;

		filter_init(f);
		f_authors(f, d->w, &rng, 5);
		f->until = 1;
		t = now();
		byst_call(d, JOB_ADD, f);
		d->lat[d->nlat++] = now() - t;
		byst_call(d, JOB_REMOVE, NULL);
		next += 0.001;
		if (next < now())
			next = now(); /* late: no burst to catch up */
		sleep_until(next);
	}
	return NULL;
}

/* ---- one design, start to finish ---- */

static void design_setup(struct design *d, const struct workload *w, unsigned k, size_t qcap)
{
	unsigned n = k ? k : 1;
	uint64_t rng = w->sub_seed;

	memset(d, 0, sizeof(*d));
	d->w = w, d->k = k;
	d->stripes = aligned_alloc(64, n * sizeof(struct stripe));
	d->lat = xmalloc(LAT_MAX * sizeof(double));
	if (!d->stripes || !(d->q = queue_new(qcap)))
		check(ERR_NOMEM, "setup");
	for (unsigned s = 0; s < n; s++) {
		pthread_mutex_init(&d->stripes[s].lock, NULL);
		if (!(d->stripes[s].idx = subidx_new()))
			check(ERR_NOMEM, "subidx_new");
	}
	for (size_t i = 0; i < w->nsubs; i++)
		add_sub(stripe_of(d, sub_conn(i))->idx, w, &rng, i);
	d->jobs = xmalloc(w->nevents * sizeof(*d->jobs));
	for (size_t i = 0; i < w->nevents; i++)
		d->jobs[i] = (struct job){ JOB_MATCH, i, NULL };
	for (unsigned i = 0; i < MATCHERS; i++)
		d->m[i].d = d, d->m[i].id = i;
	d->add.kind = JOB_ADD, d->remove.kind = JOB_REMOVE, d->stop.kind = JOB_STOP;
	sem_init(&d->added, 0, 0);
}

/* Starts the threads and returns once every event is matched and the
 * bystander has stopped. */
static void design_run(struct design *d)
{
	pthread_t th[MATCHERS], byst;

	d->t0 = now();
	pthread_create(&byst, NULL, bystander_main, d);
	if (!d->k) {
		pthread_create(&th[0], NULL, owner_main, d);
		for (size_t i = 0; i < d->w->nevents; i++) /* this thread is the producer */
			push_wait(d->q, &d->jobs[i]);
		pthread_join(byst, NULL); /* returns once the owner has matched all */
		push_wait(d->q, &d->stop);
		pthread_join(th[0], NULL);
		return;
	}
	for (unsigned i = 0; i < MATCHERS; i++)
		pthread_create(&th[i], NULL, matcher_main, &d->m[i]);
	for (unsigned i = 0; i < MATCHERS; i++)
		pthread_join(th[i], NULL);
	d->t_end = now();
	atomic_store(&d->done, true);
	pthread_join(byst, NULL);
}

static void design_free(struct design *d)
{
	for (unsigned s = 0; s < (d->k ? d->k : 1); s++) {
		subidx_free(d->stripes[s].idx);
		pthread_mutex_destroy(&d->stripes[s].lock);
	}
	sem_destroy(&d->added);
	queue_free(d->q);
	free(d->stripes);
	free(d->jobs);
	free(d->lat);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* The q-quantile of the n sorted seconds in v, in milliseconds (0 if none). */
static double quantile_ms(const double *v, size_t n, double q)
{
	return n ? v[(size_t)((double)(n - 1) * q)] * 1e3 : 0;
}

/* "owner" is 0 stripes, "global-lock" 1, "striped-K" K (1..64); -1 if unknown. */
static int design_stripes(const char *name)
{
	char *end;
	long k;

	if (strcmp(name, "owner") == 0)
		return 0;
	if (strcmp(name, "global-lock") == 0)
		return 1;
	if (strncmp(name, "striped-", 8) != 0)
		return -1;
	k = strtol(name + 8, &end, 10);
	return *end || k < 1 || k > 64 ? -1 : (int)k;
}

/* Runs one design, prints its RESULT line and returns its tally. */
static struct tally run_design(const struct workload *w, const char *name, size_t qcap)
{
	struct design d;
	struct tally t = { 0, 0, 0 };
	double cpu;

	design_setup(&d, w, (unsigned)design_stripes(name), qcap);
	cpu = cpu_seconds();
	design_run(&d);
	cpu = (cpu_seconds() - cpu) / (now() - d.t0) * 100;
	for (unsigned i = 0; i < MATCHERS; i++)
		t.calls += d.m[i].t.calls, t.sum += d.m[i].t.sum;
	qsort(d.lat, d.nlat, sizeof(double), cmp_double);
	printf("RESULT design=%s events_per_s=%.0f callbacks=%llu bystander_p50_ms=%.3f "
	       "bystander_p99_ms=%.3f bystander_max_ms=%.3f cpu_pct=%.0f bystander_adds=%zu "
	       "checksum=%016llx\n",
	       name, (double)w->nevents / (d.t_end - d.t0), (unsigned long long)t.calls,
	       quantile_ms(d.lat, d.nlat, 0.5), quantile_ms(d.lat, d.nlat, 0.99),
	       quantile_ms(d.lat, d.nlat, 1), cpu, d.nlat, (unsigned long long)t.sum);
	fflush(stdout);
	design_free(&d);
	return t;
}

static int usage(void)
{
	fprintf(stderr, "usage: idxbench [--subs N] [--events N] [--seed N] [--queue N] "
			"[--designs owner,striped-2,striped-4,global-lock]\n");
	return 2;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "subs", required_argument, NULL, 's' }, { "events", required_argument, NULL, 'e' },
		{ "seed", required_argument, NULL, 'S' }, { "queue", required_argument, NULL, 'q' },
		{ "designs", required_argument, NULL, 'd' }, { NULL, 0, NULL, 0 },
	};
	size_t nsubs = 10000, nevents = 200000, qcap = 1024, nd = 0;
	unsigned long long seed = 1;
	char designs[256] = "owner,striped-2,striped-4,global-lock", *names[16], *save = NULL;
	struct tally first = { 0, 0, 0 }, t;
	int c, rc = 0;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 's': nsubs = strtoul(optarg, NULL, 10); break;
		case 'e': nevents = strtoul(optarg, NULL, 10); break;
		case 'S': seed = strtoull(optarg, NULL, 10); break;
		case 'q': qcap = strtoul(optarg, NULL, 10); break;
		case 'd': snprintf(designs, sizeof(designs), "%s", optarg); break;
		default: return usage();
		}
	}
	for (char *n = strtok_r(designs, ",", &save); n; n = strtok_r(NULL, ",", &save)) {
		if (design_stripes(n) < 0 || nd == 16)
			return usage();
		names[nd++] = n;
	}
	if (optind != argc || !nd || !qcap || !nevents || nsubs > UINT32_MAX)
		return usage();
	struct workload *w = workload_new(nsubs, nevents, seed);

	printf("# idxbench subs=%zu events=%zu seed=%llu queue=%zu matchers=%d\n", nsubs, nevents,
	       seed, qcap, MATCHERS);
	for (size_t i = 0; i < nd; i++) {
		t = run_design(w, names[i], qcap);
		if (i == 0)
			first = t;
		else if (t.calls != first.calls || t.sum != first.sum) {
			fprintf(stderr, "idxbench: %s disagrees with %s\n", names[i], names[0]);
			rc = 1;
		}
	}
	for (size_t i = 0; i < nevents; i++)
		event_free(&w->events[i]);
	free(w->events), free(w);
	return rc;
}
