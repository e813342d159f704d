/* relay_msg.c - scanning the head of relay messages (see relay_msg.h). */
#include "relay_msg.h"

#include <string.h>

#include "../common/err.h"

struct scan {
	const char *p, *end;
};

static void scan_ws(struct scan *s)
{
	while (s->p < s->end && (*s->p == ' ' || *s->p == '\t' || *s->p == '\n' || *s->p == '\r'))
		s->p++;
}

static int scan_char(struct scan *s, char c)
{
	scan_ws(s);
	if (s->p >= s->end || *s->p != c)
		return ERR_INVAL;
	s->p++;
	return 0;
}

/* A JSON string: *out and *len get its raw contents between the quotes. */
static int scan_string(struct scan *s, const char **out, size_t *len)
{
	const char *start;

	if (scan_char(s, '"'))
		return ERR_INVAL;
	start = s->p;
	while (s->p < s->end && *s->p != '"')
		s->p += (*s->p == '\\') ? 2 : 1;
	if (s->p >= s->end)
		return ERR_INVAL;
	*out = start;
	*len = (size_t)(s->p - start);
	s->p++;
	return 0;
}

static int scan_bool(struct scan *s, bool *v)
{
	scan_ws(s);
	if (s->end - s->p >= 4 && !memcmp(s->p, "true", 4)) {
		*v = true;
		s->p += 4;
		return 0;
	}
	if (s->end - s->p >= 5 && !memcmp(s->p, "false", 5)) {
		*v = false;
		s->p += 5;
		return 0;
	}
	return ERR_INVAL;
}

static const struct {
	const char *name;
	enum relay_msg_type type;
} relay_msg_types[] = {
	{ "OK", RMSG_OK },         { "EOSE", RMSG_EOSE },     { "EVENT", RMSG_EVENT },
	{ "CLOSED", RMSG_CLOSED }, { "NOTICE", RMSG_NOTICE },
};

static enum relay_msg_type relay_msg_type_of(const char *name, size_t len)
{
	for (size_t i = 0; i < sizeof(relay_msg_types) / sizeof(relay_msg_types[0]); i++)
		if (strlen(relay_msg_types[i].name) == len && !memcmp(relay_msg_types[i].name, name, len))
			return relay_msg_types[i].type;
	return RMSG_OTHER;
}

/* What follows the first argument, by type. */
static int relay_msg_rest(struct scan *s, struct relay_msg *m)
{
	switch (m->type) {
	case RMSG_OK:
		if (scan_char(s, ',') || scan_bool(s, &m->accepted) || scan_char(s, ','))
			return ERR_INVAL;
		return scan_string(s, &m->text, &m->text_len);
	case RMSG_CLOSED:
		if (scan_char(s, ','))
			return ERR_INVAL;
		return scan_string(s, &m->text, &m->text_len);
	case RMSG_EVENT:
		if (scan_char(s, ','))
			return ERR_INVAL;
		scan_ws(s);
		m->text = s->p;
		m->text_len = (size_t)(s->end - s->p);
		return s->p < s->end && *s->p == '{' ? 0 : ERR_INVAL;
	default:
		return 0;
	}
}

int relay_msg_scan(const char *data, size_t len, struct relay_msg *m)
{
	struct scan s = { data, data + len };
	const char *name;
	size_t nlen;

	memset(m, 0, sizeof(*m));
	if (scan_char(&s, '[') || scan_string(&s, &name, &nlen))
		return ERR_INVAL;
	m->type = relay_msg_type_of(name, nlen);
	if (m->type == RMSG_OTHER)
		return 0;
	if (scan_char(&s, ',') || scan_string(&s, &m->arg, &m->arg_len) || relay_msg_rest(&s, m)) {
		m->type = RMSG_OTHER;
		return ERR_INVAL;
	}
	return 0;
}
