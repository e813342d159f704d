/* err.c - names for the project's error codes. */
#include "err.h"

static const char *const err_names[] = {
	"ok",      "nomem",  "inval", "trunc",    "trailing", "version", "type",   "toobig",
	"io",      "db",     "nng",   "notfound", "full",     "closed",  "config", "sig",
	"timeout",
};

const char *err_name(int code)
{
	int count = (int)(sizeof(err_names) / sizeof(err_names[0]));

	/* Compare before negating: -INT_MIN does not exist. */
	if (code > 0 || code <= -count)
		return "unknown";
	return err_names[-code];
}
