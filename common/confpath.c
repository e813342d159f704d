/* confpath.c - choosing the config file without -c (see confpath.h). */
#include "confpath.h"

#include <unistd.h>

const char *confpath_pick(const char *given, const char *env, const char *const *candidates,
			  size_t n)
{
	if (given)
		return given;
	if (env && env[0])
		return env;
	for (size_t i = 0; i < n; i++)
		if (access(candidates[i], F_OK) == 0)
			return candidates[i];
	return NULL;
}
