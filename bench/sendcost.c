/*
 * sendcost.c - what one delivery's send() costs on this machine.
 *
 * Fan-out to many subscribers is one send() per subscriber per event once
 * events arrive further apart than a connection's frames can be batched.
 * This measures that floor without the relay: a sender thread writes one
 * frame-sized message to each of N loopback TCP connections R times a
 * second (TCP_NODELAY, non-blocking, as relayd's sockets), a receiver
 * thread drains them all through epoll (as a load generator would), and it
 * prints the sender's CPU per send and both threads' CPU in percent of a
 * core.  On loopback the sender's send() also runs the receiving side of
 * TCP, so the figure is the kernel's whole cost of one delivery.
 *
 *   sendcost [--conns N] [--rate ROUNDS_PER_S] [--seconds S] [--size BYTES]
 */
#include <arpa/inet.h>
#include <fcntl.h>
#include <getopt.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

struct receiver {
	const int *fds;
	int count;
	atomic_bool stop;
	long bytes;
	double cpu_s;
};

static double clock_s(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void *receiver_main(void *arg)
{
	struct receiver *r = arg;
	int ep = epoll_create1(0);
	struct epoll_event ev[256];
	static char buf[65536];

	for (int i = 0; ep >= 0 && i < r->count; i++) {
		struct epoll_event e = { .events = EPOLLIN, .data.fd = r->fds[i] };

		epoll_ctl(ep, EPOLL_CTL_ADD, r->fds[i], &e);
	}
	while (ep >= 0 && !atomic_load(&r->stop)) {
		int n = epoll_wait(ep, ev, 256, 50);

		for (int i = 0; i < n; i++) {
			ssize_t got = read(ev[i].data.fd, buf, sizeof(buf));

			if (got > 0)
				r->bytes += got;
		}
	}
	r->cpu_s = clock_s(CLOCK_THREAD_CPUTIME_ID);
	if (ep >= 0)
		close(ep);
	return NULL;
}

/* Opens count loopback connections: out[] the sending ends (non-blocking,
 * no Nagle), in[] the receiving ends.  False if any step fails. */
static bool open_connections(int *out, int *in, int count)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(sa);
	int one = 1, listener = socket(AF_INET, SOCK_STREAM, 0);
	bool ok = listener >= 0 && bind(listener, (struct sockaddr *)&sa, sizeof(sa)) == 0 &&
		  listen(listener, 1024) == 0 && getsockname(listener, (struct sockaddr *)&sa, &len) == 0;

	for (int i = 0; ok && i < count; i++) {
		in[i] = socket(AF_INET, SOCK_STREAM, 0);
		ok = in[i] >= 0 && connect(in[i], (struct sockaddr *)&sa, sizeof(sa)) == 0 &&
		     (out[i] = accept(listener, NULL, NULL)) >= 0 &&
		     setsockopt(out[i], IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) == 0 &&
		     fcntl(out[i], F_SETFL, O_NONBLOCK) == 0;
	}
	if (listener >= 0)
		close(listener);
	return ok;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = { { "conns", required_argument, NULL, 'n' },
					      { "rate", required_argument, NULL, 'r' },
					      { "seconds", required_argument, NULL, 's' },
					      { "size", required_argument, NULL, 'b' },
					      { NULL, 0, NULL, 0 } };
	int conns = 500, rate = 200, seconds = 10, size = 760, c;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (c == 'n')
			conns = atoi(optarg);
		else if (c == 'r')
			rate = atoi(optarg);
		else if (c == 's')
			seconds = atoi(optarg);
		else if (c == 'b')
			size = atoi(optarg);
		else
			conns = 0;
	}
	if (conns < 1 || conns > 10000 || rate < 1 || seconds < 1 || seconds > 600 || size < 1) {
		fprintf(stderr, "usage: sendcost [--conns 1..10000] [--rate N] [--seconds 1..600] [--size BYTES]\n");
		return 2;
	}
	int *out = calloc((size_t)conns, sizeof(int)), *in = calloc((size_t)conns, sizeof(int));
	char *frame = calloc(1, (size_t)size);
	if (!out || !in || !frame || !open_connections(out, in, conns)) {
		fprintf(stderr, "sendcost: cannot open %d loopback connections (ulimit -n?)\n", conns);
		return 1;
	}
	struct receiver rx = { .fds = in, .count = conns };
	pthread_t t;
	pthread_create(&t, NULL, receiver_main, &rx);

	long sends = 0, refused = 0, rounds = (long)rate * seconds;
	double start = clock_s(CLOCK_MONOTONIC), cpu0 = clock_s(CLOCK_THREAD_CPUTIME_ID);
	for (long round = 0; round < rounds; round++) {
		double due = start + (double)round / rate;

		/* Paced like a publisher: sleeping between rounds, so the
		 * receiver gets the CPU a relay's subscribers would. */
		while (clock_s(CLOCK_MONOTONIC) < due)
			nanosleep(&(struct timespec){ 0, 100000 }, NULL);
		for (int i = 0; i < conns; i++) {
			if (send(out[i], frame, (size_t)size, MSG_NOSIGNAL) == size)
				sends++;
			else
				refused++;
		}
	}
	double send_cpu = clock_s(CLOCK_THREAD_CPUTIME_ID) - cpu0;
	double wall = clock_s(CLOCK_MONOTONIC) - start;
	usleep(200000); /* the receiver drains what is still in flight */
	atomic_store(&rx.stop, true);
	pthread_join(t, NULL);
	printf("RESULT mode=sendcost conns=%d rate=%d size=%d sends=%ld refused=%ld sends_per_s=%.0f "
	       "send_cpu_us=%.2f sender_cpu_pct=%.1f receiver_cpu_pct=%.1f received_mb=%.1f\n",
	       conns, rate, size, sends, refused, (double)sends / wall, send_cpu * 1e6 / (double)(sends ? sends : 1),
	       100.0 * send_cpu / wall, 100.0 * rx.cpu_s / wall, (double)rx.bytes / 1e6);
	for (int i = 0; i < conns; i++) {
		close(out[i]);
		close(in[i]);
	}
	free(out);
	free(in);
	free(frame);
	return 0;
}
