/*
 * cli.h - each subcommand's options as one declarative table.
 *
 * A subcommand lists its options (name, type, where the value goes, one line
 * of help) with the defaults already in the variables; cli_parse() fills
 * them from "--name value" or "--name=value" arguments and cli_usage()
 * prints the same table as help.  Unknown options, missing values and values
 * that do not parse completely are errors.
 */
#ifndef BENCH_CLI_H
#define BENCH_CLI_H

#include <stdio.h>

enum cli_type {
	CLI_INT,    /* long */
	CLI_DOUBLE, /* double */
	CLI_STR,    /* const char *, pointing into argv */
};

struct cli_opt {
	const char *name; /* without the leading "--" */
	enum cli_type type;
	void *value;
	const char *help;
};

/* The number of entries in a static option table. */
#define CLI_COUNT(table) (sizeof(table) / sizeof((table)[0]))

/*
 * Parses argv[1..argc-1] (argv[0] is the subcommand's name) against the n
 * options.  Returns 0 when every argument was used, 1 when --help was asked
 * for (usage, with summary, already printed to stdout), or ERR_INVAL after
 * printing what was wrong to stderr.
 */
int cli_parse(const char *summary, const struct cli_opt *opts, size_t n, int argc, char **argv);

/* Prints "usage: loadgen <cmd> [options]", the summary and each option with
 * its current (default) value. */
void cli_usage(FILE *out, const char *cmd, const char *summary, const struct cli_opt *opts,
	       size_t n);

#endif
