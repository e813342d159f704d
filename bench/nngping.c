/*
 * nngping.c - what one message hop over nng IPC costs on this machine.
 *
 * The relay's floor for a REQ is two such hops (relayd -> stored and back)
 * plus the threads on each side.  This measures the hop alone: a pair of
 * sockets each way over ipc:// between two threads of one process, one
 * message in flight, and prints the round trip's percentiles.  Replies
 * travel PUSH -> PULL as stored's do; requests travel PUSH -> PULL too, or
 * with --request req over raw REQ -> raw REP sockets (a request id in the
 * nng header), the shape relayd and stored used before (bench/RESULTS.md).
 *
 * --transport unix takes nng out: the same round trip over one AF_UNIX
 * stream socketpair, one thread echoing, which is what the kernel's own
 * wake-ups and copies cost on this machine (the part nng cannot go below).
 *
 *   nngping [--count N] [--size BYTES] [--request push|req] [--transport nng|unix]
 */
#include <getopt.h>
#include <nng/nng.h>
#include <nng/protocol/pipeline0/pull.h>
#include <nng/protocol/pipeline0/push.h>
#include <nng/protocol/reqrep0/rep.h>
#include <nng/protocol/reqrep0/req.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int compare_doubles(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

struct echo {
	nng_socket in, out;
	int count;
};

/* The "stored" side: every message straight back on the other channel. */
static void *echo_main(void *arg)
{
	struct echo *e = arg;

	for (int i = 0; i < e->count; i++) {
		nng_msg *m;

		if (nng_recvmsg(e->in, &m, 0))
			return NULL;
		nng_msg_header_clear(m);
		if (nng_sendmsg(e->out, m, 0))
			return NULL;
	}
	return NULL;
}

/* Reads or writes exactly len bytes; false on error or end of stream. */
static bool io_full(int fd, char *buf, size_t len, bool writing)
{
	while (len > 0) {
		ssize_t n = writing ? write(fd, buf, len) : read(fd, buf, len);

		if (n <= 0)
			return false;
		buf += n;
		len -= (size_t)n;
	}
	return true;
}

struct unix_echo {
	int fd, count;
	size_t size;
};

/* The kernel-only echo: every message read is written straight back. */
static void *unix_echo_main(void *arg)
{
	struct unix_echo *e = arg;
	char *buf = malloc(e->size);

	for (int i = 0; buf && i < e->count; i++)
		if (!io_full(e->fd, buf, e->size, false) || !io_full(e->fd, buf, e->size, true))
			break;
	free(buf);
	return NULL;
}

/* Fills rtt[] with count round trips over a socketpair; false on error. */
static bool unix_round_trips(double *rtt, int count, int size)
{
	int fds[2];
	pthread_t t;
	char *payload = calloc(1, (size_t)size);
	bool ok = true;

	if (!payload || socketpair(AF_UNIX, SOCK_STREAM, 0, fds) != 0) {
		free(payload);
		return false;
	}
	struct unix_echo e = { fds[1], count, (size_t)size };
	if (pthread_create(&t, NULL, unix_echo_main, &e) != 0) {
		ok = false;
	} else {
		for (int i = 0; ok && i < count; i++) {
			double t0 = now_us();

			ok = io_full(fds[0], payload, (size_t)size, true) &&
			     io_full(fds[0], payload, (size_t)size, false);
			rtt[i] = now_us() - t0;
		}
		shutdown(fds[0], SHUT_RDWR); /* lets the echo thread out if we stopped early */
		pthread_join(t, NULL);
	}
	close(fds[0]);
	close(fds[1]);
	free(payload);
	return ok;
}

static int open_pair(nng_socket *pull, nng_socket *push, const char *url, bool req)
{
	if (req)
		return nng_rep0_open_raw(pull) || nng_listen(*pull, url, NULL, 0) ||
		       nng_req0_open_raw(push) || nng_dial(*push, url, NULL, 0);
	return nng_pull0_open(pull) || nng_listen(*pull, url, NULL, 0) || nng_push0_open(push) ||
	       nng_dial(*push, url, NULL, 0);
}

/* Fills rtt[] with count round trips over two nng IPC channels (the
 * request one PUSH/PULL or raw REQ/REP), one thread echoing; false on error. */
static bool nng_round_trips(double *rtt, int count, int size, bool req)
{
	char url_a[128], url_b[128];
	nng_socket a_pull, a_push, b_pull, b_push;
	struct echo e;
	pthread_t t;
	bool ok = true;

	snprintf(url_a, sizeof(url_a), "ipc:///tmp/nngping-%d-a.ipc", (int)getpid());
	snprintf(url_b, sizeof(url_b), "ipc:///tmp/nngping-%d-b.ipc", (int)getpid());
	if (open_pair(&a_pull, &a_push, url_a, req) || open_pair(&b_pull, &b_push, url_b, false)) {
		fprintf(stderr, "nngping: cannot open the sockets\n");
		return false;
	}
	e = (struct echo){ a_pull, b_push, count };
	pthread_create(&t, NULL, echo_main, &e);

	char *payload = calloc(1, (size_t)size);
	for (int i = 0; ok && i < count; i++) {
		double t0 = now_us();
		nng_msg *m;

		ok = payload && !nng_msg_alloc(&m, 0) && !nng_msg_append(m, payload, (size_t)size) &&
		     !(req && nng_msg_header_append_u32(m, 0x80000000u | (uint32_t)i)) &&
		     !nng_sendmsg(a_push, m, 0) && !nng_recvmsg(b_pull, &m, 0);
		if (ok)
			nng_msg_free(m);
		rtt[i] = now_us() - t0;
	}
	nng_close(a_pull); /* lets the echo thread out if we stopped early */
	pthread_join(t, NULL);
	nng_close(a_push);
	nng_close(b_pull);
	nng_close(b_push);
	free(payload);
	return ok;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = { { "count", required_argument, NULL, 'c' },
					      { "size", required_argument, NULL, 's' },
					      { "request", required_argument, NULL, 'r' },
					      { "transport", required_argument, NULL, 't' },
					      { NULL, 0, NULL, 0 } };
	int count = 20000, size = 100, c;
	bool req = false, unix_socket = false, bad = false;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (c == 'c')
			count = atoi(optarg);
		else if (c == 's')
			size = atoi(optarg);
		else if (c == 'r')
			req = strcmp(optarg, "req") == 0;
		else if (c == 't' && (strcmp(optarg, "unix") == 0 || strcmp(optarg, "nng") == 0))
			unix_socket = strcmp(optarg, "unix") == 0;
		else
			bad = true;
	}
	if (bad || count < 100 || size < 1) {
		fprintf(stderr, "usage: nngping [--count N>=100] [--size BYTES] [--request push|req] "
				"[--transport nng|unix]\n");
		return 2;
	}
	double *rtt = calloc((size_t)count, sizeof(*rtt));
	if (!rtt || !(unix_socket ? unix_round_trips(rtt, count, size) : nng_round_trips(rtt, count, size, req))) {
		fprintf(stderr, "nngping: the round trips failed\n");
		free(rtt);
		return 1;
	}
	qsort(rtt, (size_t)count, sizeof(*rtt), compare_doubles);
	printf("RESULT mode=nngping transport=%s request=%s count=%d size=%d rtt_p50_us=%.1f rtt_p90_us=%.1f "
	       "rtt_p99_us=%.1f rtt_max_us=%.1f\n",
	       unix_socket ? "unix" : "nng", req ? "req" : "push", count, size, rtt[count / 2], rtt[count * 9 / 10],
	       rtt[count * 99 / 100], rtt[count - 1]);
	free(rtt);
	return 0;
}
