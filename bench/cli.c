/* cli.c - option tables for the subcommands (see cli.h). */
#include "cli.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../common/err.h"

static const struct cli_opt *cli_find(const struct cli_opt *opts, size_t n, const char *name,
				      size_t len)
{
	for (size_t i = 0; i < n; i++)
		if (strlen(opts[i].name) == len && !memcmp(opts[i].name, name, len))
			return &opts[i];
	return NULL;
}

static int cli_set(const struct cli_opt *o, const char *text)
{
	char *end = NULL;

	errno = 0;
	switch (o->type) {
	case CLI_INT:
		*(long *)o->value = strtol(text, &end, 0);
		break;
	case CLI_DOUBLE:
		*(double *)o->value = strtod(text, &end);
		break;
	case CLI_STR:
		*(const char **)o->value = text;
		return 0;
	}
	if (errno || !end || end == text || *end)
		return ERR_INVAL;
	return 0;
}

/* Handles argv[*i] (an option); advances *i past its value. */
static int cli_one(const struct cli_opt *opts, size_t n, int argc, char **argv, int *i)
{
	const char *arg = argv[*i], *name = arg + 2, *eq = strchr(name, '=');
	size_t len = eq ? (size_t)(eq - name) : strlen(name);
	const struct cli_opt *o = strncmp(arg, "--", 2) ? NULL : cli_find(opts, n, name, len);
	const char *value = eq ? eq + 1 : NULL;

	if (!o) {
		fprintf(stderr, "loadgen %s: unknown option %s\n", argv[0], arg);
		return ERR_INVAL;
	}
	if (!value && *i + 1 < argc)
		value = argv[++*i];
	if (!value) {
		fprintf(stderr, "loadgen %s: --%s needs a value\n", argv[0], o->name);
		return ERR_INVAL;
	}
	if (cli_set(o, value)) {
		fprintf(stderr, "loadgen %s: bad value for --%s: %s\n", argv[0], o->name, value);
		return ERR_INVAL;
	}
	return 0;
}

int cli_parse(const char *summary, const struct cli_opt *opts, size_t n, int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			cli_usage(stdout, argv[0], summary, opts, n);
			return 1;
		}
		if (cli_one(opts, n, argc, argv, &i))
			return ERR_INVAL;
	}
	return 0;
}

static void cli_default(FILE *out, const struct cli_opt *o)
{
	switch (o->type) {
	case CLI_INT:
		fprintf(out, "%ld", *(const long *)o->value);
		break;
	case CLI_DOUBLE:
		fprintf(out, "%g", *(const double *)o->value);
		break;
	case CLI_STR: {
		const char *s = *(const char *const *)o->value;

		fprintf(out, "%s", s ? s : "(none)");
		break;
	}
	}
}

void cli_usage(FILE *out, const char *cmd, const char *summary, const struct cli_opt *opts,
	       size_t n)
{
	fprintf(out, "usage: loadgen %s [options]\n%s\n\noptions:\n", cmd, summary);
	for (size_t i = 0; i < n; i++) {
		fprintf(out, "  --%-12s %s (default: ", opts[i].name, opts[i].help);
		cli_default(out, &opts[i]);
		fprintf(out, ")\n");
	}
}
