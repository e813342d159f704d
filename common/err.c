/* err.c - names for the project's error codes. */
#include "err.h"

static const char *const err_names[] = {
	"ok",      "nomem",  "inval", "trunc",    "trailing", "version", "type",   "toobig",
	"io",      "db",     "nng",   "notfound", "full",     "closed",  "config", "sig",
};

const char *err_name(int code)
{
	int index = -code;

	if (index < 0 || index >= (int)(sizeof(err_names) / sizeof(err_names[0])))
		return "unknown";
	return err_names[index];
}
