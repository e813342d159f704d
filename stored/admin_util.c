/*
 * admin_util.c - what the admin socket's command handlers share: error
 * replies, counters as JSON numbers, a request's filters, file sizes, and
 * handing a job to the writer or the broadcaster (see admin_cmds.h).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "../common/err.h"
#include "../proto/admin.h"
#include "admin_cmds.h"
#include "queue.h"
#include "stored.h"

cJSON *admin__error(const char *fmt, ...)
{
	cJSON *o = cJSON_CreateObject();
	char text[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	cJSON_AddStringToObject(o, ADMIN_F_ERROR, text);
	return o;
}

void admin__add_u64(cJSON *obj, const char *name, uint64_t v)
{
	cJSON_AddNumberToObject(obj, name, (double)v);
}

uint64_t admin__file_size(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 ? (uint64_t)st.st_size : 0;
}

int admin__filters(const cJSON *req, struct filter **out, uint32_t *n, char *why, size_t why_len)
{
	const cJSON *given = cJSON_GetObjectItemCaseSensitive(req, ADMIN_F_FILTER), *item;
	uint32_t count = cJSON_IsArray(given) ? (uint32_t)cJSON_GetArraySize(given) : 1;
	struct filter *fs;

	*out = NULL;
	*n = 0;
	if (!given)
		return 0;
	if ((!cJSON_IsArray(given) && !cJSON_IsObject(given)) || count == 0 || count > 100) {
		snprintf(why, why_len, "filter must be a filter object or an array of 1 to 100");
		return ERR_INVAL;
	}
	fs = calloc(count, sizeof(*fs));
	if (!fs)
		return ERR_NOMEM;
	for (item = cJSON_IsArray(given) ? given->child : given; *n < count; item = item->next) {
		if (!cJSON_IsObject(item) || filter_parse(item, NULL, &fs[*n], why, why_len)) {
			if (!cJSON_IsObject(item))
				snprintf(why, why_len, "filter %u is not an object", *n);
			filters_free(fs, *n);
			*n = 0;
			return ERR_INVAL;
		}
		(*n)++;
	}
	*out = fs;
	return 0;
}

/* Queues a job carrying a reference to `job` for the writer or bcast. */
static int admin_queue(struct admin *a, struct admin_job *job, int to_writer)
{
	int rc;

	admin_job_hold(job);
	if (to_writer) {
		struct write_job *w = calloc(1, sizeof(*w));

		if (!w)
			rc = ERR_NOMEM;
		else if ((w->admin = job, rc = queue_push(a->s->write_q, w)))
			free(w); /* its reference is dropped below */
	} else {
		struct bcast_job *b = calloc(1, sizeof(*b));

		if (!b)
			rc = ERR_NOMEM;
		else if ((b->kind = BCAST_LIST, b->admin = job, rc = queue_push(a->s->bcast_q, b)))
			free(b);
	}
	if (rc)
		admin_job_release(job);
	return rc;
}

int admin__run(struct admin *a, struct admin_job *job, int to_writer)
{
	int rc = admin_queue(a, job, to_writer);

	return rc ? rc : admin_job_wait(job, ADMIN_WAIT_MS);
}

cJSON *admin__job_error(const char *what, int rc)
{
	if (rc == ERR_TIMEOUT)
		return admin__error("%s: no answer within %d s; it may still complete",
				    what, ADMIN_WAIT_MS / 1000);
	if (rc == ERR_FULL || rc == ERR_CLOSED)
		return admin__error("%s: stored is %s; try again", what,
				    rc == ERR_FULL ? "overloaded" : "stopping");
	return admin__error("%s failed (%s)", what, err_name(rc));
}
