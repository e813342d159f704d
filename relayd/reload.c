/* reload.c - configuration reload for a worker (see reload.h). */
#include "reload.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/log.h"
#include "../common/notify.h"
#include "iplimit.h"
#include "nip11.h"
#include "relayd.h"

/* Keys read once at start, by the worker or by stored (whose values the
 * NIP-11 document shows): a change needs a restart of the worker, or of
 * stored and then the workers, so the document keeps saying what runs. */
static void reload_keep_restart_keys(const struct config *old, struct config *next)
{
	struct {
		const char *name;
		void *field;
		const void *running;
		size_t size;
		const char *restart; /* what to restart to apply it */
	} keys[] = {
		{ "max_limit", &next->max_limit, &old->max_limit, sizeof(next->max_limit),
		  "stored, then the workers" },
		{ "search", &next->search, &old->search, sizeof(next->search), "stored, then the workers" },
		{ "bind", next->bind, old->bind, sizeof(next->bind), "the worker" },
		{ "port", &next->port, &old->port, sizeof(next->port), "the worker" },
		{ "run_dir", next->run_dir, old->run_dir, sizeof(next->run_dir), "the worker" },
		{ "data_dir", next->data_dir, old->data_dir, sizeof(next->data_dir), "the worker" },
		{ "verify_threads", &next->verify_threads, &old->verify_threads,
		  sizeof(next->verify_threads), "the worker" },
		{ "max_queued_messages", &next->max_queued_messages, &old->max_queued_messages,
		  sizeof(next->max_queued_messages), "the worker" },
		{ "verify_nice", &next->verify_nice, &old->verify_nice, sizeof(next->verify_nice),
		  "the worker" },
		{ "request_slice_us", &next->request_slice_us, &old->request_slice_us,
		  sizeof(next->request_slice_us), "the worker" },
		{ "express_lane", &next->express_lane, &old->express_lane,
		  sizeof(next->express_lane), "the worker" },
		{ "max_message_bytes", &next->max_message_bytes, &old->max_message_bytes,
		  sizeof(next->max_message_bytes), "the worker" },
		{ "deliver_queue", &next->deliver_queue, &old->deliver_queue,
		  sizeof(next->deliver_queue), "the worker" },
		{ "listen_check_ms", &next->listen_check_ms, &old->listen_check_ms,
		  sizeof(next->listen_check_ms), "the worker" },
		{ "listen_check_timeout_ms", &next->listen_check_timeout_ms,
		  &old->listen_check_timeout_ms, sizeof(next->listen_check_timeout_ms), "the worker" },
	};

	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		if (memcmp(keys[i].field, keys[i].running, keys[i].size) == 0)
			continue;
		log_warnx("reload: %s changed; restart %s to apply it", keys[i].name,
			  keys[i].restart);
		memcpy(keys[i].field, keys[i].running, keys[i].size);
	}
}

void reload_derive(struct relayd *r)
{
	const struct config *cfg = relayd_cfg(r);

	if (cfg->relay_url[0])
		snprintf(r->relay_url, sizeof(r->relay_url), "%s", cfg->relay_url);
	else
		snprintf(r->relay_url, sizeof(r->relay_url), "ws://%s:%u", cfg->bind, cfg->port);
	r->auth_writes = !strcmp(cfg->auth_required, "writes") || !strcmp(cfg->auth_required, "all");
	r->auth_reads = !strcmp(cfg->auth_required, "reads") || !strcmp(cfg->auth_required, "all");
}

void reload_apply(struct relayd *r)
{
	const struct config *old = relayd_cfg(r);
	struct config *next = calloc(1, sizeof(*next));
	char err[512];

	notify_send("RELOADING=1");
	if (!next || config_load(r->config_path, next, err, sizeof(err))) {
		log_warnx("reload refused, the running configuration stays: %s",
			  next ? err : "out of memory");
		free(next);
		notify_send("READY=1");
		return;
	}
	reload_keep_restart_keys(old, next);
	atomic_store(&r->cfg_now, next);
	free((void *)r->cfg_retired);
	r->cfg_retired = old;
	reload_derive(r);
	iplimit_set_config(r->iplimit, next);
	log_set_level((enum log_level)log_level_parse(next->log_level));
	if (nip11_build(r))
		log_warnx("reload: the NIP-11 document does not fit; it keeps its old text");
	log_info("configuration reloaded from %s", r->config_path);
	notify_send("READY=1");
}
