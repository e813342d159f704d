/*
 * relayctl.c - the operator's client for stored's admin socket.
 *
 * Usage: relayctl [-c CONFIG] [--json] COMMAND
 * It reads the same config file as the daemons to find run_dir, sends
 * {"cmd": COMMAND} to stored-admin.ipc and prints the reply, as aligned
 * "key: value" lines or, with --json, as the JSON stored sent.
 * Exit status: 0 on an answer, 1 when stored cannot be reached or answers
 * with an error, 2 on bad usage.
 */
#include <cjson/cJSON.h>
#include <nng/nng.h>
#include <nng/protocol/reqrep0/req.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/config.h"

struct ctl_args {
	const char *config;
	const char *command;
	int json;
};

static void ctl_usage(void)
{
	fprintf(stderr, "usage: relayctl [-c CONFIG] [--json] stats|workers\n");
	exit(2);
}

static void ctl_parse(int argc, char **argv, struct ctl_args *a)
{
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "-c") == 0 && i + 1 < argc)
			a->config = argv[++i];
		else if (strcmp(argv[i], "--json") == 0)
			a->json = 1;
		else if (argv[i][0] != '-' && !a->command)
			a->command = argv[i];
		else
			ctl_usage();
	}
	if (!a->command)
		ctl_usage();
}

/* Sends the request and returns the reply text (malloc'ed), or NULL. */
static char *ctl_call(const struct config *cfg, const char *command)
{
	char url[256], request[128];
	nng_socket sock;
	char *reply = NULL;
	size_t len = 0;
	int rv;

	config_socket_url(cfg, "stored-admin.ipc", url, sizeof(url));
	snprintf(request, sizeof(request), "{\"cmd\":\"%s\"}", command);
	if ((rv = nng_req0_open(&sock)) == 0) {
		nng_socket_set_ms(sock, NNG_OPT_RECVTIMEO, 10000);
		nng_socket_set_ms(sock, NNG_OPT_SENDTIMEO, 10000);
		if ((rv = nng_dial(sock, url, NULL, 0)) == 0 &&
		    (rv = nng_send(sock, request, strlen(request), 0)) == 0)
			rv = nng_recv(sock, &reply, &len, NNG_FLAG_ALLOC);
		nng_close(sock);
	}
	if (rv) {
		fprintf(stderr, "relayctl: cannot reach stored at %s: %s\n", url, nng_strerror(rv));
		return NULL;
	}
	char *text = malloc(len + 1);
	if (text) {
		memcpy(text, reply, len);
		text[len] = '\0';
	}
	nng_free(reply, len);
	return text;
}

static void ctl_print_value(const char *indent, const cJSON *item)
{
	if (cJSON_IsNumber(item))
		printf("%s%-22s %.0f\n", indent, item->string, item->valuedouble);
	else if (cJSON_IsString(item))
		printf("%s%-22s %s\n", indent, item->string, item->valuestring);
	else if (cJSON_IsBool(item))
		printf("%s%-22s %s\n", indent, item->string, cJSON_IsTrue(item) ? "yes" : "no");
}

static void ctl_print(const cJSON *answer)
{
	const cJSON *item;

	cJSON_ArrayForEach(item, answer) {
		if (!cJSON_IsArray(item)) {
			ctl_print_value("", item);
			continue;
		}
		const cJSON *entry;
		cJSON_ArrayForEach(entry, item) {
			const cJSON *field;

			printf("%s:\n", item->string);
			cJSON_ArrayForEach(field, entry)
				ctl_print_value("  ", field);
		}
	}
}

int main(int argc, char **argv)
{
	struct ctl_args a = { NULL, NULL, 0 };
	struct config cfg;
	char err[512];
	char *text;
	cJSON *answer;
	int status;

	ctl_parse(argc, argv, &a);
	if (config_load(a.config, &cfg, err, sizeof(err))) {
		fprintf(stderr, "relayctl: config: %s\n", err);
		return 2;
	}
	text = ctl_call(&cfg, a.command);
	if (!text)
		return 1;
	answer = cJSON_Parse(text);
	status = !answer || cJSON_GetObjectItemCaseSensitive(answer, "error") ? 1 : 0;
	if (a.json || !answer)
		fputs(text, stdout);
	else if (!status)
		ctl_print(answer);
	if (status && answer)
		fprintf(stderr, "relayctl: %s\n",
			cJSON_GetObjectItemCaseSensitive(answer, "error")->valuestring);
	cJSON_Delete(answer);
	free(text);
	return status;
}
