/*
 * test_rundir.c - checks common/rundir.c: run_dir is made 0700 (0770 and
 * socket_group's group) whatever the umask, a run_dir open to others or to
 * a group other than socket_group is refused, and every socket listens
 * with a fixed mode under umask 000.
 */
#include <check.h>
#include <grp.h>
#include <nng/nng.h>
#include <nng/protocol/pipeline0/pull.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../common/err.h"
#include "../../common/rundir.h"
#include "../support/suite.h"
#include "../support/tmpdir.h"

static char top[TMPDIR_PATH_MAX];
static struct config cfg;

/* A fresh top directory per test with run_dir = top/a/run (not made). */
static void rundir_setup(void)
{
	tmpdir_make(top, "rundir");
	memset(&cfg, 0, sizeof(cfg));
	snprintf(cfg.run_dir, sizeof(cfg.run_dir), "%s/a/run", top);
}

static void rundir_teardown(void)
{
	char a[TMPDIR_PATH_MAX + 8];

	rmdir(cfg.run_dir); /* the tests leave no file in it */
	snprintf(a, sizeof(a), "%s/a", top);
	rmdir(a);
	tmpdir_remove(top);
}

/* The name of a group this process may give its files: its own. */
static void use_own_group(void)
{
	struct group *g = getgrgid(getegid());

	ck_assert_ptr_nonnull(g);
	snprintf(cfg.socket_group, sizeof(cfg.socket_group), "%s", g->gr_name);
}

static mode_t mode_of(const char *path)
{
	struct stat st;

	ck_assert_int_eq(stat(path, &st), 0);
	return st.st_mode & 07777;
}

START_TEST(test_mkdirs_makes_parents_and_says_so)
{
	bool created = false;

	ck_assert_int_eq(rundir_mkdirs(cfg.run_dir, 0700, &created), 0);
	ck_assert(created);
	ck_assert_int_eq(rundir_mkdirs(cfg.run_dir, 0700, &created), 0);
	ck_assert(!created);
	ck_assert_int_eq(rundir_mkdirs(cfg.run_dir, 0700, NULL), 0);
}
END_TEST

START_TEST(test_created_0700_under_umask_000)
{
	char err[256] = "";
	mode_t old = umask(0);

	ck_assert_int_eq(rundir_prepare(&cfg, true, err, sizeof(err)), 0);
	umask(old);
	ck_assert_uint_eq(mode_of(cfg.run_dir), 0700);
}
END_TEST

START_TEST(test_trailing_slash_is_run_dir_itself)
{
	char err[256] = "";
	mode_t old = umask(0);

	strcat(cfg.run_dir, "/");
	ck_assert_int_eq(rundir_prepare(&cfg, true, err, sizeof(err)), 0);
	umask(old);
	ck_assert_uint_eq(mode_of(cfg.run_dir), 0700);
}
END_TEST

START_TEST(test_created_0770_with_the_group)
{
	char err[256] = "";
	struct stat st;
	mode_t old = umask(077);

	use_own_group();
	ck_assert_int_eq(rundir_prepare(&cfg, true, err, sizeof(err)), 0);
	umask(old);
	ck_assert_int_eq(stat(cfg.run_dir, &st), 0);
	ck_assert_uint_eq(st.st_mode & 07777, 0770);
	ck_assert_uint_eq(st.st_gid, getegid());
}
END_TEST

START_TEST(test_open_run_dir_is_refused)
{
	static const mode_t refused[] = { 0777, 0755, 0750, 0710, 0701, 0704 };
	char err[256];

	ck_assert_int_eq(rundir_mkdirs(cfg.run_dir, 0700, NULL), 0);
	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		ck_assert_int_eq(chmod(cfg.run_dir, refused[i]), 0);
		err[0] = '\0';
		ck_assert_int_eq(rundir_prepare(&cfg, true, err, sizeof(err)), ERR_CONFIG);
		ck_assert_ptr_nonnull(strstr(err, "not starting"));
		ck_assert_ptr_nonnull(strstr(err, cfg.run_dir));
		ck_assert_uint_eq(mode_of(cfg.run_dir), refused[i]); /* left as the operator set it */
	}
	ck_assert_int_eq(chmod(cfg.run_dir, 0700), 0);
	ck_assert_int_eq(rundir_prepare(&cfg, false, err, sizeof(err)), 0);
}
END_TEST

START_TEST(test_group_bits_need_socket_group)
{
	char err[256];

	ck_assert_int_eq(rundir_mkdirs(cfg.run_dir, 0700, NULL), 0);
	ck_assert_int_eq(chmod(cfg.run_dir, 0770), 0);
	ck_assert_int_eq(rundir_prepare(&cfg, false, err, sizeof(err)), ERR_CONFIG);
	use_own_group();
	ck_assert_int_eq(rundir_prepare(&cfg, false, err, sizeof(err)), 0);
	ck_assert_int_eq(chmod(cfg.run_dir, 0775), 0); /* others still never */
	ck_assert_int_eq(rundir_prepare(&cfg, false, err, sizeof(err)), ERR_CONFIG);
}
END_TEST

START_TEST(test_missing_or_unknown_is_refused)
{
	char err[256] = "";

	ck_assert_int_eq(rundir_prepare(&cfg, false, err, sizeof(err)), ERR_IO);
	ck_assert_ptr_nonnull(strstr(err, cfg.run_dir));
	snprintf(cfg.socket_group, sizeof(cfg.socket_group), "no-such-group-rundir");
	ck_assert_int_eq(rundir_prepare(&cfg, true, err, sizeof(err)), ERR_CONFIG);
	ck_assert_ptr_nonnull(strstr(err, "no-such-group-rundir"));
}
END_TEST

/* Listens under umask 000 as peers and returns the socket file's stat. */
static struct stat listen_and_stat(enum rundir_peers peers)
{
	char url[CONFIG_PATH_MAX + 32], err[256];
	nng_socket sock;
	nng_listener l;
	struct stat st;
	mode_t old;

	ck_assert_int_eq(rundir_prepare(&cfg, true, err, sizeof(err)), 0);
	ck_assert_int_eq(config_socket_url(&cfg, "t.ipc", url, sizeof(url)), 0);
	ck_assert_int_eq(nng_pull0_open(&sock), 0);
	old = umask(0);
	ck_assert_int_eq(rundir_listen(sock, url, peers, &cfg, &l), 0);
	umask(old);
	ck_assert_int_eq(stat(url + strlen("ipc://"), &st), 0);
	ck_assert_int_eq(nng_listener_close(l), 0);
	nng_close(sock);
	unlink(url + strlen("ipc://"));
	return st;
}

START_TEST(test_sockets_0600_under_umask_000)
{
	ck_assert_uint_eq(listen_and_stat(RUNDIR_WORKERS).st_mode & 07777, 0600);
	ck_assert_uint_eq(listen_and_stat(RUNDIR_OWNER).st_mode & 07777, 0600);
}
END_TEST

START_TEST(test_sockets_0660_for_the_group_but_admin)
{
	struct stat st;

	use_own_group();
	st = listen_and_stat(RUNDIR_WORKERS);
	ck_assert_uint_eq(st.st_mode & 07777, 0660);
	ck_assert_uint_eq(st.st_gid, getegid());
	ck_assert_uint_eq(listen_and_stat(RUNDIR_OWNER).st_mode & 07777, 0600);
}
END_TEST

static Suite *rundir_suite(void)
{
	Suite *s = suite_create("rundir");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, rundir_setup, rundir_teardown);
	tcase_add_test(tc, test_mkdirs_makes_parents_and_says_so);
	tcase_add_test(tc, test_created_0700_under_umask_000);
	tcase_add_test(tc, test_trailing_slash_is_run_dir_itself);
	tcase_add_test(tc, test_created_0770_with_the_group);
	tcase_add_test(tc, test_open_run_dir_is_refused);
	tcase_add_test(tc, test_group_bits_need_socket_group);
	tcase_add_test(tc, test_missing_or_unknown_is_refused);
	tcase_add_test(tc, test_sockets_0600_under_umask_000);
	tcase_add_test(tc, test_sockets_0660_for_the_group_but_admin);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return suite_run(rundir_suite());
}
