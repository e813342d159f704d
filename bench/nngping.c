/*
 * nngping.c - what one message hop over nng costs on this machine.
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
 * --transport tcp and tls put both channels on tcp:// or tls+tcp:// over
 * loopback (IPv4, or IPv6 with --host ::1), the links of workers on other
 * hosts; tls takes a CA, a certificate and its key from --tls-dir
 * (ca.pem, stored.pem, stored.key: bench/linkbench makes them) and checks
 * the peer both ways, as common/peerlink.c does.  Every line also gives the
 * process's CPU (all threads, nng's included) per round trip.
 *
 *   nngping [--count N] [--size BYTES] [--request push|req]
 *           [--transport ipc|tcp|tls|unix] [--host ADDR] [--tls-dir DIR]
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
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "../common/peerlink.h"

/* Where the nng channels go (--transport, --host, --tls-dir). */
struct where {
	const char *transport; /* ipc, tcp or tls */
	const char *host;
	struct peerlink_tls tls;
	char files[3][512];
};

/* The CPU this process used so far (user + system, every thread), in µs. */
static double cpu_us(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e6 +
	       (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
}

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

/* Listens on a free port (tcp, tls) or a fresh ipc path, and dials it:
 * pull is the listener, as stored is for requests. */
static int open_pair(nng_socket *pull, nng_socket *push, const struct where *w, char tag, bool req)
{
	char url[300];
	nng_listener l;
	int port = 0;

	if (req ? nng_rep0_open_raw(pull) || nng_req0_open_raw(push)
		: nng_pull0_open(pull) || nng_push0_open(push))
		return -1;
	if (strcmp(w->transport, "ipc") == 0)
		snprintf(url, sizeof(url), "ipc:///tmp/nngping-%d-%c.ipc", (int)getpid(), tag);
	else
		snprintf(url, sizeof(url), "%s://%s%s%s:0", strcmp(w->transport, "tls") ? "tcp" : "tls+tcp",
			 strchr(w->host, ':') ? "[" : "", w->host, strchr(w->host, ':') ? "]" : "");
	if (peerlink_listen(*pull, url, &w->tls, &l))
		return -1;
	if (strcmp(w->transport, "ipc") != 0) {
		if (nng_listener_get_int(l, NNG_OPT_TCP_BOUND_PORT, &port))
			return -1;
		snprintf(strrchr(url, ':') + 1, 8, "%d", port);
	}
	/* The dial goes in the background; the first send waits for it. */
	return peerlink_dial(*push, url, &w->tls, NULL);
}

/* Fills rtt[] with count round trips over two nng channels (the request
 * one PUSH/PULL or raw REQ/REP), one thread echoing; false on error. */
static bool nng_round_trips(double *rtt, int count, int size, bool req, const struct where *w)
{
	nng_socket a_pull, a_push, b_pull, b_push;
	struct echo e;
	pthread_t t;
	bool ok = true;

	if (open_pair(&a_pull, &a_push, w, 'a', req) || open_pair(&b_pull, &b_push, w, 'b', false)) {
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
					      { "host", required_argument, NULL, 'h' },
					      { "tls-dir", required_argument, NULL, 'd' },
					      { NULL, 0, NULL, 0 } };
	int count = 20000, size = 100, c;
	bool req = false, unix_socket = false, bad = false;
	static struct where w = { "ipc", "127.0.0.1", { "", "", "", "stored" }, { "", "", "" } };
	const char *tls_dir = ".";

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (c == 'c')
			count = atoi(optarg);
		else if (c == 's')
			size = atoi(optarg);
		else if (c == 'r')
			req = strcmp(optarg, "req") == 0;
		else if (c == 'h')
			w.host = optarg;
		else if (c == 'd')
			tls_dir = optarg;
		else if (c == 't' && strcmp(optarg, "unix") == 0)
			unix_socket = true;
		else if (c == 't' && strcmp(optarg, "nng") == 0)
			w.transport = "ipc"; /* the name before tcp and tls came */
		else if (c == 't' && (strcmp(optarg, "ipc") == 0 || strcmp(optarg, "tcp") == 0 ||
				      strcmp(optarg, "tls") == 0))
			w.transport = optarg;
		else
			bad = true;
	}
	if (bad || count < 100 || size < 1) {
		fprintf(stderr, "usage: nngping [--count N>=100] [--size BYTES] [--request push|req] "
				"[--transport ipc|tcp|tls|unix] [--host ADDR] [--tls-dir DIR]\n");
		return 2;
	}
	snprintf(w.files[0], sizeof(w.files[0]), "%s/ca.pem", tls_dir);
	snprintf(w.files[1], sizeof(w.files[1]), "%s/stored.pem", tls_dir);
	snprintf(w.files[2], sizeof(w.files[2]), "%s/stored.key", tls_dir);
	w.tls = (struct peerlink_tls){ w.files[0], w.files[1], w.files[2], "stored" };
	double *rtt = calloc((size_t)count, sizeof(*rtt));
	double cpu0 = cpu_us();
	if (!rtt || !(unix_socket ? unix_round_trips(rtt, count, size)
				  : nng_round_trips(rtt, count, size, req, &w))) {
		fprintf(stderr, "nngping: the round trips failed\n");
		free(rtt);
		return 1;
	}
	double cpu = (cpu_us() - cpu0) / count;
	qsort(rtt, (size_t)count, sizeof(*rtt), compare_doubles);
	printf("RESULT mode=nngping transport=%s request=%s count=%d size=%d rtt_p50_us=%.1f rtt_p90_us=%.1f "
	       "rtt_p99_us=%.1f rtt_max_us=%.1f cpu_per_rtt_us=%.1f\n",
	       unix_socket ? "unix" : w.transport, req ? "req" : "push", count, size, rtt[count / 2],
	       rtt[count * 9 / 10], rtt[count * 99 / 100], rtt[count - 1], cpu);
	free(rtt);
	return 0;
}
