/* pub.c - sending on stored's publish socket (see pub.h). */
#include "pub.h"

#include <nng/nng.h>

#include "../common/err.h"
#include "reply.h"
#include "stored.h"

int pub_send(struct stored *s, const void *data, size_t len)
{
	nng_msg *msg;

	if (nng_msg_alloc(&msg, 0))
		return ERR_NOMEM;
	if (nng_msg_append(msg, data, len)) {
		nng_msg_free(msg);
		return ERR_NOMEM;
	}
	if (nng_sendmsg(s->pub, msg, NNG_FLAG_NONBLOCK)) {
		nng_msg_free(msg);
		return ERR_NNG;
	}
	return 0;
}

int pub_deliver(struct stored *s, uint16_t worker, const void *data, size_t len)
{
	if (s->cfg.link_reply_url[0])
		return reply_deliver(s, worker, data, len);
	return pub_send(s, data, len);
}
