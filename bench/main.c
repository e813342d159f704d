/*
 * main.c - loadgen: the relay's load generator.  Dispatches the first
 * argument to a subcommand through a table; each subcommand owns one file.
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "cmds.h"

static const struct {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *summary;
} commands[] = {
	{ "gen", cmd_gen, "write N signed events (JSONL) reproducibly from a seed" },
	{ "ingest", cmd_ingest, "publish a file over C connections, W EVENTs in flight each" },
	{ "fanout", cmd_fanout, "S live subscribers, one publisher at R events/s" },
	{ "query", cmd_query, "a mix of REQs against a preloaded database, one at a time" },
	{ "bystander", cmd_bystander, "a cheap REQ every 10 ms while an ingest flood runs" },
	{ "conns", cmd_conns, "N idle websocket connections: relay RSS per connection" },
	{ "verify", cmd_verify, "a relay lane's per-event work on one core (no relay)" },
	{ "check", cmd_check, "are these event ids stored? (after ingest --acked)" },
};

static void usage(FILE *out)
{
	fprintf(out, "usage: loadgen <command> [options]   (loadgen <command> --help)\n\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(out, "  %-10s %s\n", commands[i].name, commands[i].summary);
	fprintf(out, "\nEvery run ends with one line: RESULT mode=<command> key=value ...\n");
}

int main(int argc, char **argv)
{
	/* A peer closing mid-write must be an error code, not a signal. */
	signal(SIGPIPE, SIG_IGN);
	if (argc < 2 || !strcmp(argv[1], "help") || !strcmp(argv[1], "--help")) {
		usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(argv[1], commands[i].name))
			return commands[i].run(argc - 1, argv + 1);
	fprintf(stderr, "loadgen: unknown command %s\n", argv[1]);
	usage(stderr);
	return 2;
}
