/* reload.c - configuration reload for a worker (see reload.h). */
#include "reload.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/config.h"
#include "../common/log.h"
#include "../common/notify.h"
#include "iplimit.h"
#include "nip11.h"
#include "relayd.h"
#include "relayurl.h"

void reload_derive(struct relayd *r)
{
	const struct config *cfg = relayd_cfg(r);

	if (cfg->relay_url[0])
		snprintf(r->relay_url, sizeof(r->relay_url), "%s", cfg->relay_url);
	else
		relayurl_of_bind(cfg->bind, cfg->port, r->relay_url, sizeof(r->relay_url));
	if (!cfg->relay_url[0] && relayurl_bind_is_wildcard(cfg->bind))
		log_warnx("relay_url is unset and bind = %s takes every interface: NIP-42 AUTH accepts"
			  " the host each client dialled; set relay_url to the relay's public URL",
			  cfg->bind[0] ? cfg->bind : "\"\"");
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
	config_keep_running(old, next, CONFIG_FOR_WORKER);
	atomic_store(&r->cfg_now, next);
	free((void *)r->cfg_retired);
	r->cfg_retired = old;
	reload_derive(r);
	iplimit_set_config(r->iplimit, next);
	log_set_level((enum log_level)log_level_parse(next->log_level));
	log_set_format((enum log_format)log_format_parse(next->log_format));
	if (nip11_build(r))
		log_warnx("reload: the NIP-11 document does not fit; it keeps its old text");
	log_info("configuration reloaded from %s", r->config_path);
	notify_send("READY=1");
}
