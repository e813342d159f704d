/* ctl_call.c - relayctl's connection to stored's admin socket (see ctl.h). */
#include <nng/nng.h>
#include <nng/protocol/reqrep0/req.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/json.h"
#include "ctl.h"

/* stored waits up to 60 s for its writer; this waits a little longer. */
#define CTL_TIMEOUT_MS 75000
/* Replies are bounded by stored (the largest is a subs listing). */
#define CTL_MAX_REPLY (64u << 20)

int ctl_open(struct ctl *c)
{
	int rv;

	config_socket_url(&c->cfg, "stored-admin.ipc", c->url, sizeof(c->url));
	if ((rv = nng_req0_open(&c->sock)) == 0) {
		nng_socket_set_ms(c->sock, NNG_OPT_RECVTIMEO, CTL_TIMEOUT_MS);
		nng_socket_set_ms(c->sock, NNG_OPT_SENDTIMEO, 10000);
		/* One request at a time on a local socket: never resend (stored
		 * may be busy with a vacuum, not lost). */
		nng_socket_set_ms(c->sock, NNG_OPT_REQ_RESENDTIME, NNG_DURATION_INFINITE);
		nng_socket_set_size(c->sock, NNG_OPT_RECVMAXSZ, CTL_MAX_REPLY);
		rv = nng_dial(c->sock, c->url, NULL, 0);
	}
	if (rv)
		fprintf(stderr, "relayctl: cannot reach stored at %s: %s\n", c->url,
			nng_strerror(rv));
	return rv ? 1 : 0;
}

int ctl_call(struct ctl *c, cJSON *req, cJSON **reply, char **text)
{
	char *request = admin_request_stamp(req, c->cmd) ? NULL : json_print(req, false);
	int status;

	if (!request)
		return 1;
	status = ctl_call_text(c, request, strlen(request), reply, text);
	free(request);
	return status;
}

int ctl_call_text(struct ctl *c, const char *request, size_t request_len, cJSON **reply,
		  char **text)
{
	char *data = NULL;
	size_t len = 0;
	int rv;

	rv = nng_send(c->sock, (void *)request, request_len, 0);
	if (rv == 0)
		rv = nng_recv(c->sock, &data, &len, NNG_FLAG_ALLOC);
	if (rv) {
		fprintf(stderr, "relayctl: %s at %s: %s\n", c->command, c->url, nng_strerror(rv));
		return 1;
	}
	*reply = json_parse(data, len, false);
	if (*reply && text && (*text = malloc(len + 1))) {
		memcpy(*text, data, len);
		(*text)[len] = '\0';
	}
	nng_free(data, len);
	if (!*reply)
		fprintf(stderr, "relayctl: stored's reply is not JSON\n");
	return *reply ? 0 : 1;
}

int ctl_failed(const cJSON *reply)
{
	const cJSON *error = cJSON_GetObjectItemCaseSensitive(reply, ADMIN_F_ERROR);

	if (!error)
		return 0;
	fprintf(stderr, "relayctl: %s\n", cJSON_IsString(error) ? error->valuestring : "error");
	return 1;
}

double ctl_num(const cJSON *obj, const char *name)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, name);

	return cJSON_IsNumber(v) ? v->valuedouble : 0;
}
