/*
 * cmds.h - the subcommands of loadgen, one file each, dispatched by main.c.
 *
 * Each takes its own argv (argv[0] is the subcommand's name), prints what it
 * measured for people, ends with one RESULT line (report.h) and returns the
 * process exit status: 0 when the run completed (whatever the figures), 1
 * when it could not run, 2 on bad options.  Every loop in them is bounded in
 * count and in time.
 */
#ifndef BENCH_CMDS_H
#define BENCH_CMDS_H

int cmd_gen(int argc, char **argv);
int cmd_ingest(int argc, char **argv);
int cmd_fanout(int argc, char **argv);
int cmd_query(int argc, char **argv);
int cmd_bystander(int argc, char **argv);
int cmd_conns(int argc, char **argv);
int cmd_verify(int argc, char **argv);
int cmd_check(int argc, char **argv);

#endif
