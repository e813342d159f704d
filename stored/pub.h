/*
 * pub.h - sending on stored's publish socket (stored-pub.ipc).
 *
 * The broadcaster's DELIVERs and the metrics thread's METRICS and POLICY
 * all leave on one PUB socket, which nng lets any thread use.  Sends never
 * block: a worker that cannot keep up loses messages, which its gap count
 * shows (relayd/gapcount.h), instead of stalling stored.
 */
#ifndef STORED_PUB_H
#define STORED_PUB_H

#include <stddef.h>
#include <stdint.h>

struct stored;

/*
 * Publishes one encoded message (header included).  Returns 0, or ERR_NOMEM
 * / ERR_NNG when it was not sent (nng refused it: the message is freed).
 * A message nng accepted is nng's to free; nng 1.5.2 sometimes keeps one
 * for a pipe that is going away when stored closes the socket, which is
 * why `make sanitize` suppresses leaks allocated here (tests/lsan.supp).
 */
int pub_send(struct stored *s, const void *data, size_t len);

/*
 * Sends worker's DELIVER (encoded, header included), never blocking.  With
 * link_reply_url set it goes on that worker's reply channel
 * (reply_deliver()): PUB hands every message to every worker's pipe, so on
 * the network each event would cost W x W messages for W workers, each
 * encrypted.  Otherwise it is published as pub_send() does.  Returns as
 * pub_send(), or ERR_FULL / ERR_CLOSED when the reply channel has no room
 * or is gone (the worker counts the gap, as it does PUB's drops).
 */
int pub_deliver(struct stored *s, uint16_t worker, const void *data, size_t len);

#endif
