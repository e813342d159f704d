/*
 * test_listencheck.c - checks common/listencheck.c against the nng fault
 * it exists for: after peers that close before the SP handshake is done,
 * new peers reach an IPC listening socket again within a few checks; a
 * healthy listener is never replaced; and a pipe from another process is
 * not taken for a check's own.  On nng 1.5.2 (Debian 12's) it also shows
 * the fault itself: without a check, a peer that connects after such a
 * probe is never read.
 */
#include <check.h>
#include <nng/nng.h>
#include <nng/protocol/pipeline0/pull.h>
#include <nng/protocol/pipeline0/push.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../../common/listencheck.h"
#include "../support/suite.h"
#include "../support/tmpdir.h"

TMPDIR_SUITE("listencheck")

/* Under `make sanitize`: a replaced listener leaves memory inside nng that
 * LeakSanitizer would report when the test that replaced one exits; this
 * binary alone suppresses leaks inside libnng (tests/lsan-nng-fault.supp
 * says why).  LeakSanitizer calls this. */
const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void)
{
	return "leak:libnng.so\n";
}

#define NNGCAT "/usr/bin/nngcat" /* nng-utils, etc/install-deps.sh */

/* The listening side, as stored and relayd keep theirs. */
struct listening {
	nng_socket sock;
	nng_listener listener;
	char url[TMPDIR_FILE_MAX + 8];
	int relistened;
};

static void listening_open(struct listening *l)
{
	char path[TMPDIR_FILE_MAX];

	tmpdir_file(path, sizeof(path), tmp_dir, ".ipc");
	snprintf(l->url, sizeof(l->url), "ipc://%s", path);
	ck_assert_int_eq(nng_pull0_open(&l->sock), 0);
	ck_assert_int_eq(nng_socket_set_ms(l->sock, NNG_OPT_RECVTIMEO, 200), 0);
	ck_assert_int_eq(nng_listen(l->sock, l->url, &l->listener, 0), 0);
	l->relistened = 0;
}

static int listening_relisten(void *arg)
{
	struct listening *l = arg;

	nng_listener_close(l->listener);
	unlink(l->url + strlen("ipc://"));
	l->relistened++;
	return nng_listen(l->sock, l->url, &l->listener, 0);
}

/* A peer gone before the listener's half of the SP handshake, made
 * certain: connect, refuse to read (so the listener's header write fails,
 * as it does when a `nc -U -z` closes first), give the listener time to
 * try, close.  This is what stops an nng 1.5.2 listener, though not every
 * time (it also depends on nng's own accept being pending then), so the
 * tests probe PROBES times. */
#define PROBES 5
#define PROBE_ROUNDS 20 /* rounds a test may take to see the fault once */
static void probe_once(const struct listening *l)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);

	ck_assert_int_ge(fd, 0);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", l->url + strlen("ipc://"));
	ck_assert_int_eq(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	ck_assert_int_eq(shutdown(fd, SHUT_RD), 0);
	usleep(100 * 1000);
	close(fd);
}

static void probe(const struct listening *l)
{
	for (int i = 0; i < PROBES; i++)
		probe_once(l);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* A new peer dials and sends; true if the listening socket reads it. */
static bool new_peer_is_read(struct listening *l)
{
	nng_socket push;
	char *got = NULL;
	size_t len = 0;
	bool read = false;

	ck_assert_int_eq(nng_push0_open(&push), 0);
	nng_socket_set_ms(push, NNG_OPT_SENDTIMEO, 200);
	if (nng_dial(push, l->url, NULL, 0) == 0 && nng_send(push, "hello", 6, 0) == 0 &&
	    nng_recv(l->sock, &got, &len, NNG_FLAG_ALLOC) == 0) {
		read = len == 6 && strcmp(got, "hello") == 0;
		nng_free(got, len);
	}
	nng_close(push);
	return read;
}

/* Keeps sending from new peers until one is read or seconds pass. */
static bool new_peer_read_within(struct listening *l, double seconds)
{
	double until = now_s() + seconds;

	do {
		if (new_peer_is_read(l))
			return true;
	} while (now_s() < until);
	return false;
}

/* A checker of l alone, started. */
static struct listencheck *checker_of(struct listening *l, uint32_t interval_ms, uint32_t timeout_ms)
{
	struct listencheck *lc = listencheck_new(interval_ms, timeout_ms);

	ck_assert_ptr_nonnull(lc);
	ck_assert_int_eq(listencheck_add(lc, l->sock, l->url, LISTENCHECK_AS_PUSH, listening_relisten, l, "test"),
			 0);
	ck_assert_int_eq(listencheck_start(lc), 0);
	return lc;
}

START_TEST(test_healthy_listener_is_kept)
{
	struct listening l;
	struct listencheck *lc;

	listening_open(&l);
	/* The timeout is long: a check that times out on a loaded machine
	 * would replace this healthy listener. */
	lc = checker_of(&l, 20, 5000);
	usleep(600 * 1000); /* up to 25 checks */
	listencheck_stop(lc);
	ck_assert_int_eq(l.relistened, 0);
	ck_assert_uint_eq(listencheck_relistens(lc), 0);
	ck_assert(new_peer_read_within(&l, 30.0)); /* one try has 200 ms: too few on a busy machine */
	nng_close(l.sock);
	listencheck_free(lc);
}
END_TEST

START_TEST(test_probe_then_new_peers_are_read)
{
	struct listening l;
	struct listencheck *lc;

	listening_open(&l);
	lc = checker_of(&l, 50, 500);
	ck_assert(new_peer_read_within(&l, 30.0)); /* one try has 200 ms: too few on a busy machine */
	/* A round of probes stops an nng 1.5.2 listener only most of the time
	 * (it depends on nng's accept being pending then).  So probe again
	 * until the check has replaced it once, up to PROBE_ROUNDS rounds;
	 * new peers must be read after every round. */
	for (int round = 0; round < PROBE_ROUNDS; round++) {
		probe(&l);
		/* 30 s: a guard.  A busy machine once needed more than 5 s
		 * of checks to notice and replace the stopped listener. */
		ck_assert_msg(new_peer_read_within(&l, 30.0),
			      "no new peer was read in 30 s after the probes");
		if (listencheck_relistens(lc) >= 1)
			break;
	}
	listencheck_stop(lc); /* joins the thread that counts */
	ck_assert_uint_eq(listencheck_relistens(lc), (uint64_t)l.relistened);
	/* With the fault (nng 1.5.2) the listener had to be replaced. */
	if (strcmp(nng_version(), "1.5.2") == 0)
		ck_assert_uint_ge(listencheck_relistens(lc), 1);
	nng_close(l.sock);
	listencheck_free(lc);
}
END_TEST

/* The fault the module is for, shown where it exists. */
START_TEST(test_nng_152_fault_without_a_check)
{
	struct listening l;

	if (strcmp(nng_version(), "1.5.2") != 0)
		return; /* another nng may not have it */
	listening_open(&l);
	ck_assert(new_peer_read_within(&l, 30.0)); /* one try has 200 ms: too few on a busy machine */
	/* A round of probes stops the listener only most of the time. */
	bool stopped = false;
	for (int round = 0; round < PROBE_ROUNDS && !stopped; round++) {
		probe(&l);
		usleep(100 * 1000);
		stopped = !new_peer_read_within(&l, 1.0);
	}
	ck_assert_msg(stopped, "nng 1.5.2 read new peers after %d rounds of probes", PROBE_ROUNDS);
	nng_close(l.sock);
}
END_TEST

START_TEST(test_pipe_of_another_process_is_not_own)
{
	struct listening l;
	nng_msg *msg;
	pid_t child;
	int status;

	listening_open(&l);
	ck_assert_int_eq(nng_socket_set_ms(l.sock, NNG_OPT_RECVTIMEO, 5000), 0);
	/* Another process: stock nngcat (nng is not safe to use in a child
	 * forked after it started). */
	child = fork();
	ck_assert_int_ge(child, 0);
	if (child == 0) {
		execl(NNGCAT, NNGCAT, "--push0", "--dial", l.url, "--data", "x", (char *)NULL);
		_exit(127);
	}
	ck_assert_int_eq(nng_recvmsg(l.sock, &msg, 0), 0);
	ck_assert(!listencheck_is_own_pipe(nng_msg_get_pipe(msg)));
	nng_msg_free(msg);
	ck_assert_int_eq(waitpid(child, &status, 0), child);
	ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);

	/* and one from this process is */
	nng_socket push;
	ck_assert_int_eq(nng_push0_open(&push), 0);
	ck_assert_int_eq(nng_dial(push, l.url, NULL, 0), 0);
	ck_assert_int_eq(nng_send(push, "y", 1, 0), 0);
	ck_assert_int_eq(nng_recvmsg(l.sock, &msg, 0), 0);
	ck_assert(listencheck_is_own_pipe(nng_msg_get_pipe(msg)));
	nng_msg_free(msg);
	nng_close(push);
	nng_close(l.sock);
}
END_TEST

START_TEST(test_add_is_bounded_and_ipc_only)
{
	struct listencheck *lc = listencheck_new(1000, 1000);
	nng_socket s[LISTENCHECK_MAX + 1];

	for (int i = 0; i <= LISTENCHECK_MAX; i++) {
		int rc;

		ck_assert_int_eq(nng_pull0_open(&s[i]), 0);
		rc = listencheck_add(lc, s[i], "ipc:///nonexistent", LISTENCHECK_AS_PUSH, listening_relisten, NULL,
				     "x");
		if (i < LISTENCHECK_MAX)
			ck_assert_int_eq(rc, 0);
		else
			ck_assert_int_ne(rc, 0);
	}
	for (int i = 0; i <= LISTENCHECK_MAX; i++)
		nng_close(s[i]);
	listencheck_free(lc);

	/* Only ipc:// paths a Unix socket address can hold. */
	lc = listencheck_new(1000, 1000);
	ck_assert_int_eq(nng_pull0_open(&s[0]), 0);
	ck_assert_int_ne(listencheck_add(lc, s[0], "tcp://127.0.0.1:1", LISTENCHECK_AS_PUSH,
					 listening_relisten, NULL, "x"), 0);
	char longurl[300] = "ipc:///";
	memset(longurl + 7, 'a', sizeof(longurl) - 8);
	longurl[sizeof(longurl) - 1] = '\0';
	ck_assert_int_ne(listencheck_add(lc, s[0], longurl, LISTENCHECK_AS_PUSH, listening_relisten,
					 NULL, "x"), 0);
	nng_close(s[0]);
	listencheck_free(lc);
}
END_TEST

/*
 * A plain Unix socket at a path, standing in for a listener whose nng
 * socket never sees the connections (checks are added for an nng socket
 * that listens nowhere).  answer_ms < 0: it never accepts, so connections
 * wait in its backlog unanswered; FAKE_ANSWER_LATE: a thread accepts each
 * one and answers it only once the next check's connection arrives, so
 * every answer comes after its own check gave up; otherwise a thread
 * accepts each one and sends an SP header after answer_ms.
 */
#define FAKE_ANSWER_LATE 1000000
struct fake_listener {
	int fd;
	char url[TMPDIR_FILE_MAX + 8];
	int answer_ms;
	pthread_t thread;
	atomic_int accepted;
	atomic_int relistened;
	atomic_int accepted_at_first_relisten; /* -1 until then */
	atomic_int backlog_at_first_relisten; /* never-accepting kind: open connections waiting then */
	nng_socket sock;
};

struct fake_conn {
	int fd, answer_ms;
};

/* Answers one connection late, then keeps it until the checker closes. */
static void *fake_answer(void *arg)
{
	struct fake_conn *fc = arg;
	const uint8_t header[8] = { 0, 'S', 'P', 0, 0, 0x51, 0, 0 }; /* a PULL */
	char sink[16];

	usleep((useconds_t)fc->answer_ms * 1000);
	if (send(fc->fd, header, sizeof(header), MSG_NOSIGNAL) == (ssize_t)sizeof(header))
		while (recv(fc->fd, sink, sizeof(sink), 0) > 0)
			;
	close(fc->fd);
	free(fc);
	return NULL;
}

/* Answers fd after answer_ms on a thread of its own. */
static void fake_answer_start(int fd, int answer_ms)
{
	struct fake_conn *fc = malloc(sizeof(*fc));
	pthread_t t;

	ck_assert_ptr_nonnull(fc);
	*fc = (struct fake_conn){ fd, answer_ms };
	ck_assert_int_eq(pthread_create(&t, NULL, fake_answer, fc), 0);
	pthread_detach(t);
}

static void *fake_accept(void *arg)
{
	struct fake_listener *f = arg;
	int fd, waiting = -1; /* FAKE_ANSWER_LATE: the connection not answered yet */

	while ((fd = accept(f->fd, NULL, NULL)) >= 0) {
		atomic_fetch_add(&f->accepted, 1);
		if (f->answer_ms != FAKE_ANSWER_LATE) {
			fake_answer_start(fd, f->answer_ms);
			continue;
		}
		if (waiting >= 0)
			fake_answer_start(waiting, 0);
		waiting = fd;
	}
	if (waiting >= 0)
		close(waiting);
	return NULL;
}

/* Counts the connections waiting in a never-accepting fake's backlog
 * whose checker still holds them open (a read finds nothing yet, not the
 * end), and closes them. */
static int fake_drain_backlog(struct fake_listener *f)
{
	int open = 0, fd;
	uint8_t header[8];

	while ((fd = accept4(f->fd, NULL, NULL, SOCK_NONBLOCK)) >= 0) {
		/* The checker's SP header, then nothing yet: not the end. */
		if (recv(fd, header, sizeof(header), 0) == (ssize_t)sizeof(header) &&
		    recv(fd, header, 1, 0) < 0 && errno == EAGAIN)
			open++;
		close(fd);
	}
	return open;
}

/* Runs on the checker's thread alone.  The first call's findings are
 * stored before relistened counts it: a test that sees relistened > 0
 * then reads them, never their initial -1 (the atomics are seq_cst). */
static int fake_relisten(void *arg)
{
	struct fake_listener *f = arg;

	if (atomic_load(&f->relistened) == 0) {
		atomic_store(&f->accepted_at_first_relisten, atomic_load(&f->accepted));
		if (f->answer_ms < 0)
			atomic_store(&f->backlog_at_first_relisten, fake_drain_backlog(f));
	}
	atomic_fetch_add(&f->relistened, 1);
	return 0;
}

static void fake_open(struct fake_listener *f, int answer_ms)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char path[TMPDIR_FILE_MAX];

	tmpdir_file(path, sizeof(path), tmp_dir, ".sock");
	snprintf(f->url, sizeof(f->url), "ipc://%s", path);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", f->url + strlen("ipc://"));
	f->answer_ms = answer_ms;
	atomic_init(&f->accepted, 0);
	atomic_init(&f->relistened, 0);
	atomic_init(&f->accepted_at_first_relisten, -1);
	atomic_init(&f->backlog_at_first_relisten, -1);
	f->fd = socket(AF_UNIX, SOCK_STREAM, 0);
	ck_assert_int_ge(f->fd, 0);
	ck_assert_int_eq(bind(f->fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	ck_assert_int_eq(listen(f->fd, 64), 0);
	if (answer_ms < 0)
		ck_assert_int_eq(fcntl(f->fd, F_SETFL, O_NONBLOCK), 0);
	else
		ck_assert_int_eq(pthread_create(&f->thread, NULL, fake_accept, f), 0);
	ck_assert_int_eq(nng_pull0_open(&f->sock), 0);
}

/* Stops the checker first: it must not see the fake go away. */
static void fake_close(struct fake_listener *f, struct listencheck *lc)
{
	listencheck_stop(lc);
	shutdown(f->fd, SHUT_RDWR); /* ends a blocked accept() */
	if (f->answer_ms >= 0)
		pthread_join(f->thread, NULL);
	close(f->fd);
	nng_close(f->sock);
	listencheck_free(lc);
}

static struct listencheck *fake_checker(struct fake_listener *f, uint32_t interval_ms, uint32_t timeout_ms)
{
	struct listencheck *lc = listencheck_new(interval_ms, timeout_ms);

	ck_assert_ptr_nonnull(lc);
	ck_assert_int_eq(listencheck_add(lc, f->sock, f->url, LISTENCHECK_AS_PUSH, fake_relisten, f, "fake"), 0);
	ck_assert_int_eq(listencheck_start(lc), 0);
	return lc;
}

/* Waits until the checker has counted a relisten of f, which it does
 * after fake_relisten() returned: then every field the fake stored is
 * visible, and so is listencheck_relistens(). */
static bool relistened_within(struct fake_listener *f, const struct listencheck *lc, double seconds)
{
	double until = now_s() + seconds;

	while (listencheck_relistens(lc) == 0 && now_s() < until)
		usleep(10 * 1000);
	return listencheck_relistens(lc) > 0 && atomic_load(&f->relistened) > 0;
}

/* The fault's sign: the handshake is answered and the socket takes no
 * pipe.  Replaced at the first check, not after several. */
START_TEST(test_stuck_listener_is_replaced_at_first_check)
{
	struct fake_listener f;
	struct listencheck *lc;

	fake_open(&f, 0);
	/* A timeout a busy machine's answer thread cannot miss: with 100 ms
	 * the first check once went unanswered (silent), and the second
	 * replaced it (TSan on a loaded machine). */
	lc = fake_checker(&f, 20, 1000);
	ck_assert_msg(relistened_within(&f, lc, 30.0), "not replaced in 30 s");
	int accepted = atomic_load(&f.accepted_at_first_relisten);
	ck_assert_int_eq(accepted, 1);
	ck_assert_uint_ge(listencheck_relistens(lc), 1);
	fake_close(&f, lc);
}
END_TEST

/* No handshake at all: most likely a busy process.  Replaced only after
 * LISTENCHECK_SILENT_CHECKS checks in a row, whose connections were all
 * kept open until then (closing one unanswered is what causes the fault). */
START_TEST(test_silent_listener_is_replaced_after_checks_in_a_row)
{
	struct fake_listener f;
	struct listencheck *lc;

	fake_open(&f, -1);
	lc = fake_checker(&f, 20, 100);
	/* Each silent check waits out its 100 ms: at most 3 have run. */
	usleep(350 * 1000);
	int early = atomic_load(&f.relistened);
	ck_assert_int_eq(early, 0);
	ck_assert_msg(relistened_within(&f, lc, 30.0), "not replaced in 30 s");
	int backlog = atomic_load(&f.backlog_at_first_relisten);
	ck_assert_int_eq(backlog, LISTENCHECK_SILENT_CHECKS);
	fake_close(&f, lc);
}
END_TEST

/* A listener that answers every check, but late: slow, not stopped. */
START_TEST(test_late_answers_keep_the_listener)
{
	struct fake_listener f;
	struct listencheck *lc;

	fake_open(&f, FAKE_ANSWER_LATE);
	/* Each answer comes from the fake's threads after the next check
	 * connects; 250 ms a check leaves them a busy machine's delays. */
	lc = fake_checker(&f, 20, 250);
	/* Twice as many checks as silent ones in a row would replace it. */
	double until = now_s() + 60.0;
	while (atomic_load(&f.accepted) < 2 * LISTENCHECK_SILENT_CHECKS && now_s() < until)
		usleep(10 * 1000);
	int accepted = atomic_load(&f.accepted), relistened = atomic_load(&f.relistened);
	ck_assert_int_ge(accepted, 2 * LISTENCHECK_SILENT_CHECKS);
	ck_assert_int_eq(relistened, 0);
	fake_close(&f, lc);
}
END_TEST

/* A removed socket file: nothing to connect to, listened on again at once. */
START_TEST(test_removed_path_is_listened_again)
{
	struct listening l;
	struct listencheck *lc;

	listening_open(&l);
	unlink(l.url + strlen("ipc://"));
	lc = checker_of(&l, 20, 500);
	ck_assert_msg(new_peer_read_within(&l, 30.0), "no new peer was read in 30 s");
	listencheck_stop(lc); /* joins the thread that counts */
	ck_assert_int_eq(l.relistened, 1);
	nng_close(l.sock);
	listencheck_free(lc);
}
END_TEST

/* Interval 0: no thread, no checks. */
START_TEST(test_interval_zero_checks_nothing)
{
	struct listening l;
	struct listencheck *lc;

	listening_open(&l);
	unlink(l.url + strlen("ipc://"));
	lc = checker_of(&l, 0, 100);
	usleep(300 * 1000);
	ck_assert_int_eq(l.relistened, 0);
	ck_assert(!new_peer_is_read(&l));
	nng_close(l.sock);
	listencheck_free(lc);
}
END_TEST

static Suite *listencheck_suite(void)
{
	Suite *s = suite_create("listencheck");
	TCase *tc = tcase_create("core");

	tcase_add_unchecked_fixture(tc, tmp_dir_setup, tmp_dir_teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_healthy_listener_is_kept);
	tcase_add_test(tc, test_probe_then_new_peers_are_read);
	tcase_add_test(tc, test_nng_152_fault_without_a_check);
	tcase_add_test(tc, test_pipe_of_another_process_is_not_own);
	tcase_add_test(tc, test_add_is_bounded_and_ipc_only);
	tcase_add_test(tc, test_stuck_listener_is_replaced_at_first_check);
	tcase_add_test(tc, test_silent_listener_is_replaced_after_checks_in_a_row);
	tcase_add_test(tc, test_late_answers_keep_the_listener);
	tcase_add_test(tc, test_removed_path_is_listened_again);
	tcase_add_test(tc, test_interval_zero_checks_nothing);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	signal(SIGPIPE, SIG_IGN);
	return suite_run(listencheck_suite());
}
