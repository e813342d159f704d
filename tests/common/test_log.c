/*
 * test_log.c - checks common/log.c: level names, the log_enabled threshold
 * for every (level, setting) pair, and the exact lines written to stderr
 * ("relayd@2: warn: ..."), which the test captures by pointing file
 * descriptor 2 at a temporary file with dup2.  fatalx() runs in a forked
 * child so its exit status and line can be checked.  The capture poses as
 * the journal (JOURNAL_STREAM names its device and inode), so those lines
 * carry no time; the last tests check the time off the journal, and the
 * json format.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <regex.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../common/log.h"
#include "../support/suite.h"

static char capture_path[64];
static int saved_stderr = -1;

/* Sends stderr to a fresh temporary file until capture_end(); a journal
 * capture sets JOURNAL_STREAM to the file, as systemd would. */
static void capture_start_as(int journal)
{
	struct stat st;
	char stream[64];
	int fd;

	strcpy(capture_path, "/tmp/test_log-XXXXXX");
	fd = mkstemp(capture_path);
	ck_assert_int_ge(fd, 0);
	fflush(stderr);
	saved_stderr = dup(STDERR_FILENO);
	ck_assert_int_ge(saved_stderr, 0);
	ck_assert_int_eq(dup2(fd, STDERR_FILENO), STDERR_FILENO);
	ck_assert_int_eq(fstat(fd, &st), 0);
	snprintf(stream, sizeof(stream), "%llu:%llu", (unsigned long long)st.st_dev,
		 (unsigned long long)st.st_ino);
	if (journal)
		setenv("JOURNAL_STREAM", stream, 1);
	else
		unsetenv("JOURNAL_STREAM");
	close(fd);
}

static void capture_start(void)
{
	capture_start_as(1);
}

/* Restores stderr and returns what was written meanwhile. */
static const char *capture_end(void)
{
	static char text[8192];
	FILE *f;
	size_t n;

	fflush(stderr);
	dup2(saved_stderr, STDERR_FILENO);
	close(saved_stderr);
	f = fopen(capture_path, "r");
	ck_assert_ptr_nonnull(f);
	n = fread(text, 1, sizeof(text) - 1, f);
	text[n] = '\0';
	fclose(f);
	unlink(capture_path);
	return text;
}

START_TEST(test_level_parse)
{
	static const char *const bad[] = {
		"", "INFO", "Info", "warning", "debug ", "err", "trace"
	};

	ck_assert_int_eq(log_level_parse("error"), LOG_ERROR);
	ck_assert_int_eq(log_level_parse("warn"), LOG_WARN);
	ck_assert_int_eq(log_level_parse("info"), LOG_INFO);
	ck_assert_int_eq(log_level_parse("debug"), LOG_DEBUG);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ck_assert_int_eq(log_level_parse(bad[i]), -1);
}
END_TEST

/* A line at level L prints under setting S exactly when L <= S. */
START_TEST(test_enabled_thresholds)
{
	for (int setting = LOG_ERROR; setting <= LOG_DEBUG; setting++) {
		log_set_level((enum log_level)setting);
		for (int level = LOG_ERROR; level <= LOG_DEBUG; level++)
			ck_assert_msg(!!log_enabled((enum log_level)level) == (level <= setting),
				      "level %d under setting %d", level, setting);
	}
	log_init("x", 0, LOG_WARN);
	ck_assert(log_enabled(LOG_WARN));
	ck_assert(!log_enabled(LOG_INFO));
}
END_TEST

START_TEST(test_line_format)
{
	const char *out;

	log_init("relayd", 2, LOG_INFO);
	capture_start();
	log_warnx("hello %d", 5);
	log_info("an %s line", "info");
	log_debug("suppressed at info");
	out = capture_end();
	ck_assert_str_eq(out, "relayd@2: warn: hello 5\nrelayd@2: info: an info line\n");
}
END_TEST

START_TEST(test_no_instance)
{
	log_init("stored", 0, LOG_DEBUG);
	capture_start();
	log_debug("d");
	log_info("i");
	ck_assert_str_eq(capture_end(), "stored: debug: d\nstored: info: i\n");
}
END_TEST

START_TEST(test_log_warn_errno)
{
	const char *out;

	log_init("relayd", 7, LOG_WARN);
	capture_start();
	errno = ENOENT;
	log_warn("open %s", "relay.conf");
	errno = 0;
	log_warnx("no errno here");
	out = capture_end();
	ck_assert_str_eq(out, "relayd@7: warn: open relay.conf: No such file or directory\n"
			      "relayd@7: warn: no errno here\n");
}
END_TEST

/* At error level nothing but fatalx prints; set_level changes it live. */
START_TEST(test_error_level_silences)
{
	log_init("stored", 0, LOG_ERROR);
	capture_start();
	errno = EIO;
	log_warn("w");
	log_warnx("x");
	log_info("i");
	log_debug("d");
	log_set_level(LOG_WARN);
	log_warnx("now");
	log_info("not yet");
	ck_assert_str_eq(capture_end(), "stored: warn: now\n");
}
END_TEST

/* An over-long message is cut, but stays one line. */
START_TEST(test_long_message)
{
	char msg[3000];
	const char *out;
	size_t len;

	memset(msg, 'm', sizeof(msg) - 1);
	msg[sizeof(msg) - 1] = '\0';
	log_init("relayd", 1, LOG_INFO);
	capture_start();
	log_info("%s", msg);
	log_info("next");
	out = capture_end();
	ck_assert_int_eq(strncmp(out, "relayd@1: info: mmm", 19), 0);
	len = strcspn(out, "\n");
	ck_assert_uint_lt(len, 1024);
	ck_assert_uint_gt(len, 900);
	ck_assert_str_eq(out + len, "\nrelayd@1: info: next\n");
}
END_TEST

START_TEST(test_fatalx)
{
	int status = 0;
	pid_t pid;

	log_init("stored", 0, LOG_ERROR);
	capture_start();
	pid = fork();
	if (pid == 0) {
		fatalx("broken invariant %d", 7);
		_exit(99); /* not reached */
	}
	ck_assert_int_gt(pid, 0);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_str_eq(capture_end(), "stored: error: broken invariant 7\n");
	ck_assert(WIFEXITED(status));
	ck_assert_int_ne(WEXITSTATUS(status), 0);
	ck_assert_int_ne(WEXITSTATUS(status), 99);
}
END_TEST

static int matches(const char *text, const char *pattern)
{
	regex_t re;
	int hit;

	ck_assert_int_eq(regcomp(&re, pattern, REG_EXTENDED | REG_NOSUB), 0);
	hit = regexec(&re, text, 0, NULL, 0) == 0;
	regfree(&re);
	return hit;
}

#define TIME_RE "[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\\.[0-9]{3}Z"

/* Off the journal a line starts with its UTC time; a JOURNAL_STREAM that
 * names another stream (a child whose stderr was redirected) is not it. */
START_TEST(test_time_off_journal)
{
	log_init("relayd", 3, LOG_INFO);
	log_set_format(LOG_FORMAT_TEXT);
	capture_start_as(0);
	log_info("plain");
	setenv("JOURNAL_STREAM", "1:1", 1);
	log_info("inherited");
	ck_assert_msg(matches(capture_end(), "^" TIME_RE " relayd@3: info: plain\n"
					      TIME_RE " relayd@3: info: inherited\n$"),
		      "no time in front");
}
END_TEST

/* log_format = json: one object per line, the message escaped. */
START_TEST(test_json_lines)
{
	const char *out;

	log_init("relayd", 2, LOG_INFO);
	log_set_format(LOG_FORMAT_JSON);
	capture_start();
	errno = ENOENT;
	log_warn("open \"%s\"\tnow", "a\\b");
	log_info("two");
	out = capture_end();
	log_set_format(LOG_FORMAT_TEXT);
	ck_assert_msg(matches(out, "^\\{\"time\":\"" TIME_RE "\",\"process\":\"relayd\",\"instance\":2,"
				   "\"level\":\"warn\",\"message\":\"open \\\\\"a\\\\\\\\b\\\\\"\\\\u0009now: "
				   "No such file or directory\"\\}\n\\{[^\n]*\"level\":\"info\",\"message\":\"two\"\\}\n$"),
		      "%s", out);
	ck_assert_int_eq(log_format_parse("json"), LOG_FORMAT_JSON);
	ck_assert_int_eq(log_format_parse("text"), LOG_FORMAT_TEXT);
	ck_assert_int_eq(log_format_parse("JSON"), -1);
}
END_TEST

static Suite *log_suite(void)
{
	Suite *s = suite_create("log");
	TCase *tc = tcase_create("log");

	tcase_add_test(tc, test_level_parse);
	tcase_add_test(tc, test_enabled_thresholds);
	tcase_add_test(tc, test_line_format);
	tcase_add_test(tc, test_no_instance);
	tcase_add_test(tc, test_log_warn_errno);
	tcase_add_test(tc, test_error_level_silences);
	tcase_add_test(tc, test_long_message);
	tcase_add_test(tc, test_fatalx);
	tcase_add_test(tc, test_time_off_journal);
	tcase_add_test(tc, test_json_lines);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return suite_run(log_suite());
}
