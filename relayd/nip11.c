/* nip11.c - relay information document over HTTP (see nip11.h). */
#include "nip11.h"

#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

#include "../common/err.h"
#include "../common/version.h"
#include "../common/json.h"
#include "policy.h"
#include "relayd.h"

static void nip11_add_optional(cJSON *doc, const char *name, const char *value)
{
	if (value[0])
		cJSON_AddStringToObject(doc, name, value);
}

/* NIP-11: auth_required means nothing at all happens before AUTH (only
 * auth_required = all); restricted_writes that some events are refused for
 * who or what they are, not for being invalid. */
static cJSON *nip11_limitation(const struct config *cfg, const struct policy_state *policy)
{
	cJSON *lim = cJSON_CreateObject();

	cJSON_AddNumberToObject(lim, "max_message_length", cfg->max_message_bytes);
	cJSON_AddNumberToObject(lim, "max_subscriptions", cfg->max_subscriptions);
	cJSON_AddNumberToObject(lim, "max_filters", cfg->max_filters);
	cJSON_AddNumberToObject(lim, "max_limit", cfg->max_limit);
	cJSON_AddNumberToObject(lim, "default_limit", cfg->max_limit);
	cJSON_AddNumberToObject(lim, "max_subid_length", cfg->max_subid_length);
	cJSON_AddNumberToObject(lim, "max_event_tags", cfg->max_event_tags);
	cJSON_AddNumberToObject(lim, "max_content_length", cfg->max_content_length);
	if (cfg->created_at_max_past)
		cJSON_AddNumberToObject(lim, "created_at_lower_limit", (double)cfg->created_at_max_past);
	if (cfg->created_at_max_future)
		cJSON_AddNumberToObject(lim, "created_at_upper_limit", (double)cfg->created_at_max_future);
	cJSON_AddBoolToObject(lim, "auth_required", strcmp(cfg->auth_required, "all") == 0);
	cJSON_AddBoolToObject(lim, "payment_required", 0);
	cJSON_AddBoolToObject(lim, "restricted_writes",
			      !strcmp(cfg->auth_required, "writes") || !strcmp(cfg->auth_required, "all") ||
				      cfg->min_pow_difficulty || policy->writes_restricted);
	if (cfg->min_pow_difficulty)
		cJSON_AddNumberToObject(lim, "min_pow_difficulty", cfg->min_pow_difficulty);
	return lim;
}

static const char *nip11_pick(const char *override, const char *configured)
{
	return override && override[0] ? override : configured;
}

/* The fields an operator may set, each present only while set. */
static void nip11_add_urls(cJSON *doc, const struct config *cfg)
{
	nip11_add_optional(doc, "banner", cfg->relay_banner);
	nip11_add_optional(doc, "self", cfg->relay_self);
	nip11_add_optional(doc, "software", cfg->relay_software);
	nip11_add_optional(doc, "privacy_policy", cfg->relay_privacy_policy);
	nip11_add_optional(doc, "terms_of_service", cfg->relay_terms_of_service);
}

int nip11_build(struct relayd *r)
{
	static const int base[] = { 1, 9, 11, 13, 40, 42, 45, 50, 62, 70, 77, 86 };
	int nips[13];
	int n = 0;
	cJSON *doc = cJSON_CreateObject();
	char *text;
	int rc = 0;

	/* NIP-86 changerelayname/description/icon override the config. */
	cJSON_AddStringToObject(doc, "name", nip11_pick(r->policy->name, relayd_cfg(r)->relay_name));
	cJSON_AddStringToObject(doc, "description",
				nip11_pick(r->policy->description, relayd_cfg(r)->relay_description));
	nip11_add_optional(doc, "icon", nip11_pick(r->policy->icon, relayd_cfg(r)->relay_icon));
	nip11_add_optional(doc, "pubkey", relayd_cfg(r)->relay_pubkey);
	nip11_add_optional(doc, "contact", relayd_cfg(r)->relay_contact);
	nip11_add_urls(doc, relayd_cfg(r));
	cJSON_AddStringToObject(doc, "version", RELAY_VERSION);
	/* Only what works now: NIP-50 only while the search index is on,
	 * NIP-77 only while negentropy is. */
	for (size_t i = 0; i < sizeof(base) / sizeof(base[0]); i++)
		if ((base[i] != 50 || relayd_cfg(r)->search) &&
		    (base[i] != 13 || relayd_cfg(r)->min_pow_difficulty) &&
		    (base[i] != 77 || relayd_cfg(r)->negentropy) &&
		    (base[i] != 86 || relayd_cfg(r)->admin_pubkeys[0]))
			nips[n++] = base[i];
	cJSON_AddItemToObject(doc, "supported_nips", cJSON_CreateIntArray(nips, n));
	cJSON_AddItemToObject(doc, "limitation", nip11_limitation(relayd_cfg(r), r->policy));
	text = json_print(doc, false);
	cJSON_Delete(doc);
	if (!text || strlen(text) >= sizeof(r->nip11))
		rc = ERR_TOOBIG;
	else
		r->nip11_len = (size_t)snprintf(r->nip11, sizeof(r->nip11), "%s", text);
	free(text);
	return rc;
}

