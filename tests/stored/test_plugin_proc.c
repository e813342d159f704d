/*
 * test_plugin_proc.c - checks stored/plugin_proc.c: a program started
 * with its stdin and stdout on pipes echoes a line back (/bin/cat), a
 * program that ignores SIGTERM is killed after the grace and reaped, a
 * path that cannot be executed fails with ERR_IO, and a file's identity
 * changes when it is rewritten.
 */
#include <check.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../common/err.h"
#include "../../stored/plugin_proc.h"
#include "../support/suite.h"

START_TEST(test_echo)
{
	struct plugin_proc pp;
	struct pollfd pfd;
	char got[16] = "";
	ssize_t n;

	ck_assert_int_eq(plugin_proc_start(&pp, "/bin/cat"), 0);
	ck_assert_int_gt(pp.pid, 0);
	ck_assert_int_eq(write(pp.in_fd, "hello\n", 6), 6);
	pfd = (struct pollfd){ pp.out_fd, POLLIN, 0 };
	ck_assert_int_eq(poll(&pfd, 1, 10000), 1);
	n = read(pp.out_fd, got, sizeof(got) - 1);
	ck_assert_int_eq(n, 6);
	ck_assert_str_eq(got, "hello\n");
	ck_assert_int_ge(plugin_proc_stop(&pp), 0);
	ck_assert_int_eq(pp.pid, 0);
	ck_assert_int_eq(pp.in_fd, -1);
	ck_assert_int_eq(plugin_proc_stop(&pp), -1);
}
END_TEST

START_TEST(test_stubborn_is_killed)
{
	char dir[] = "/tmp/plugin-proc-XXXXXX", path[64];
	struct plugin_proc pp;
	FILE *f;
	int status;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/stubborn.sh", dir);
	f = fopen(path, "w");
	fputs("#!/bin/sh\ntrap '' TERM\nwhile :; do sleep 1; done\n", f);
	fclose(f);
	chmod(path, 0755);
	ck_assert_int_eq(plugin_proc_start(&pp, path), 0);
	sleep(1); /* lets the shell set its trap */
	status = plugin_proc_stop(&pp);
	ck_assert(WIFSIGNALED(status));
	ck_assert_int_eq(WTERMSIG(status), SIGKILL);
	unlink(path);
	rmdir(dir);
}
END_TEST

START_TEST(test_not_executable)
{
	struct plugin_proc pp;

	plugin_proc_init(&pp);
	ck_assert_int_eq(plugin_proc_start(&pp, "/nonexistent/plugin"), ERR_IO);
	ck_assert_int_eq(pp.pid, 0);
}
END_TEST

START_TEST(test_file_identity)
{
	char path[] = "/tmp/plugin-file-XXXXXX";
	struct plugin_file a, b;
	int fd = mkstemp(path);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, "v1", 2), 2);
	ck_assert_int_eq(plugin_file_stat(path, &a), 0);
	ck_assert_int_eq(plugin_file_stat(path, &b), 0);
	ck_assert(plugin_file_same(&a, &b));
	ck_assert_int_eq(write(fd, "v2", 2), 2);
	ck_assert_int_eq(plugin_file_stat(path, &b), 0);
	ck_assert(!plugin_file_same(&a, &b));
	close(fd);
	unlink(path);
	ck_assert_int_eq(plugin_file_stat(path, &b), ERR_IO);
}
END_TEST

static Suite *plugin_proc_suite(void)
{
	Suite *s = suite_create("plugin_proc");
	TCase *tc = tcase_create("process");

	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_echo);
	tcase_add_test(tc, test_stubborn_is_killed);
	tcase_add_test(tc, test_not_executable);
	tcase_add_test(tc, test_file_identity);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return suite_run(plugin_proc_suite());
}
