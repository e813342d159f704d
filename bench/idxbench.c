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
 * The events and subscriptions come from idxwork.c.
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
#include "../stored/queue.h"
#include "../stored/subidx.h"
#include "idxwork.h"

#define MATCHERS 2     /* matcher threads of the locked designs */
#define LAT_MAX 120000 /* bystander samples kept: 2 minutes at 1 ms */
#define MAX_DESIGNS 16
#define BYST_CONN (UINT64_C(1) << 40)

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
	const struct idxwork *w;
	const struct event *events; /* borrowed from w */
	size_t nevents;
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

static void on_match(void *arg, uint16_t worker, uint64_t conn_id, uint32_t serial)
{
	struct tally *t = arg;

	t->calls++;
	t->sum += idxwork_mix64(((uint64_t)serial << 32 | worker) ^ conn_id ^
				((uint64_t)t->ev << 40));
}

/* ---- the two ways to reach the index ---- */

static struct stripe *stripe_of(struct design *d, uint64_t conn_id)
{
	return &d->stripes[d->k ? idxwork_mix64(conn_id) % d->k : 0];
}

/* idxwork_place_fn: a subscription goes in its connection's stripe. */
static struct subidx *place_sub(void *arg, uint64_t conn_id)
{
	return stripe_of(arg, conn_id)->idx;
}

/* The bystander's add (taking f) or remove, on an index it may touch now. */
static void byst_apply(struct subidx *idx, enum job_kind kind, struct filter *f)
{
	if (kind == JOB_ADD)
		idxwork_check(subidx_add(idx, 9, BYST_CONN, "byst", 4, 0, f, 1), "subidx_add");
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
		subidx_match(d->stripes[0].idx, &d->events[j->ev], on_match, &d->m[0].t);
		if (++matched == d->nevents) {
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

	for (size_t i = id; i < d->nevents; i += MATCHERS) {
		m->t.ev = i;
		for (unsigned s = 0; s < d->k; s++) {
			struct stripe *st = &d->stripes[(s + id) % d->k];

			pthread_mutex_lock(&st->lock);
			subidx_match(st->idx, &d->events[i], on_match, &m->t);
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
	uint64_t rng = IDXWORK_BYST_SEED;
	double next = now();

	while (!atomic_load(&d->done) && d->nlat < LAT_MAX) {
		struct filter *f = idxwork_byst_filter(d->w, &rng);
		double t = now();

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

static void design_setup(struct design *d, const struct idxwork *w, unsigned k, size_t qcap)
{
	unsigned n = k ? k : 1;

	memset(d, 0, sizeof(*d));
	d->w = w, d->k = k;
	d->events = idxwork_events(w, &d->nevents);
	d->stripes = aligned_alloc(64, n * sizeof(struct stripe));
	d->lat = idxwork_xmalloc(LAT_MAX * sizeof(double));
	if (!d->stripes || !(d->q = queue_new(qcap)))
		idxwork_check(ERR_NOMEM, "setup");
	for (unsigned s = 0; s < n; s++) {
		pthread_mutex_init(&d->stripes[s].lock, NULL);
		if (!(d->stripes[s].idx = subidx_new()))
			idxwork_check(ERR_NOMEM, "subidx_new");
	}
	idxwork_add_subs(w, place_sub, d);
	d->jobs = idxwork_xmalloc(d->nevents * sizeof(*d->jobs));
	for (size_t i = 0; i < d->nevents; i++)
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
		for (size_t i = 0; i < d->nevents; i++) /* this thread is the producer */
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
static struct tally run_design(const struct idxwork *w, const char *name, size_t qcap)
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
	       name, (double)d.nevents / (d.t_end - d.t0), (unsigned long long)t.calls,
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

struct opts {
	size_t nsubs, nevents, qcap, nd;
	unsigned long long seed;
	char designs[256]; /* names[] points into it */
	char *names[MAX_DESIGNS];
};

/* Fills *o from the command line; returns 0, or -1 for usage(). */
static int parse_args(int argc, char **argv, struct opts *o)
{
	static const struct option opts[] = {
		{ "subs", required_argument, NULL, 's' },
		{ "events", required_argument, NULL, 'e' },
		{ "seed", required_argument, NULL, 'S' },
		{ "queue", required_argument, NULL, 'q' },
		{ "designs", required_argument, NULL, 'd' },
		{ NULL, 0, NULL, 0 },
	};
	char *save = NULL;
	int c;

	*o = (struct opts){ .nsubs = 10000, .nevents = 200000, .qcap = 1024, .seed = 1,
			    .designs = "owner,striped-2,striped-4,global-lock" };
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 's': o->nsubs = strtoul(optarg, NULL, 10); break;
		case 'e': o->nevents = strtoul(optarg, NULL, 10); break;
		case 'S': o->seed = strtoull(optarg, NULL, 10); break;
		case 'q': o->qcap = strtoul(optarg, NULL, 10); break;
		case 'd': snprintf(o->designs, sizeof(o->designs), "%s", optarg); break;
		default: return -1;
		}
	}
	for (char *n = strtok_r(o->designs, ",", &save); n; n = strtok_r(NULL, ",", &save)) {
		if (design_stripes(n) < 0 || o->nd == MAX_DESIGNS)
			return -1;
		o->names[o->nd++] = n;
	}
	if (optind != argc || !o->nd || !o->qcap || !o->nevents || o->nsubs > UINT32_MAX)
		return -1;
	return 0;
}

/* Runs every design named; 1 if one disagrees with the first, else 0. */
static int run_designs(const struct idxwork *w, const struct opts *o)
{
	struct tally first = { 0, 0, 0 }, t;
	int rc = 0;

	for (size_t i = 0; i < o->nd; i++) {
		t = run_design(w, o->names[i], o->qcap);
		if (i == 0)
			first = t;
		else if (t.calls != first.calls || t.sum != first.sum) {
			fprintf(stderr, "idxbench: %s disagrees with %s\n", o->names[i],
				o->names[0]);
			rc = 1;
		}
	}
	return rc;
}

int main(int argc, char **argv)
{
	struct opts o;
	struct idxwork *w;
	int rc;

	if (parse_args(argc, argv, &o))
		return usage();
	w = idxwork_new(o.nsubs, o.nevents, o.seed);
	printf("# idxbench subs=%zu events=%zu seed=%llu queue=%zu matchers=%d\n", o.nsubs,
	       o.nevents, o.seed, o.qcap, MATCHERS);
	rc = run_designs(w, &o);
	idxwork_free(w);
	return rc;
}
