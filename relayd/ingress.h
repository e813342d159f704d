/*
 * ingress.h - the threads that turn client text into validated work.
 *
 * Each connection is bound to one ingress lane (conn slot % lanes), so its
 * messages are handled in the order they arrived.  A lane parses the JSON,
 * dispatches on the verb through a table (verbs.h) and posts the outcome to
 * the service thread's mailbox.  Events go to stored from here, so
 * signature checks and JSON parsing stay off the service thread.
 */
#ifndef RELAYD_INGRESS_H
#define RELAYD_INGRESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct relayd;
struct ingress;

/* Starts verify_threads lanes for r (0: one lane without a thread, which
 * ingress_submit() runs on the caller's thread).  Returns NULL on failure. */
struct ingress *ingress_start(struct relayd *r);
/* Stops the lanes (dropping queued messages) and frees them.  NULL-safe. */
void ingress_stop(struct ingress *in);
/*
 * Queues one complete client message of conn_id on its lane.
 *   data     malloc'ed, len bytes and a NUL after them (as buf_take()
 *            returns).  Always taken: freed by the lane, or before an error
 *            returns.
 *   limited  the sender's address is over its rate: the lane answers
 *            "rate-limited:" instead of acting.
 *   pause    set to true when the caller should stop reading from the
 *            connection until a MAIL_RESUME for conn_id.
 * Returns 0, ERR_FULL (the lane is full and holds nothing of the
 * connection's) or ERR_NOMEM.  On an error the message is already answered
 * "rate-limited:" as its verb calls for: OK false for an EVENT or AUTH,
 * CLOSED for a REQ or COUNT, else a NOTICE.
 * *pause is set in two cases.  The connection may have max_queued_messages
 * waiting; the lane posts MAIL_RESUME once half of them are handled.  Or
 * the lane was full and took this message only because earlier ones of the
 * connection are still in it, so that a refusal never overtakes them; the
 * lane posts MAIL_RESUME once it takes this message.
 */
int ingress_submit(struct ingress *in, uint64_t conn_id, char *data, size_t len, bool limited,
		   bool *pause);

/* Copies the NIP-42 pubkeys conn_id authenticated as into out (room for
 * AUTH_MAX_PUBKEYS, auth.h) and returns how many.  Takes its lane's auth
 * lock briefly; any thread. */
uint32_t ingress_auth_list(struct ingress *in, uint64_t conn_id, uint8_t out[][32]);

/* Notes the Host header of conn_id's handshake in its lane's NIP-42 table
 * (auth_note_host()).  Service thread, before the connection's first
 * message; without memory the note is dropped and AUTH needs relay_url. */
void ingress_note_host(struct ingress *in, uint64_t conn_id, const char *host);

/* Notes the client's address of conn_id in its lane's table
 * (auth_note_peer()), for the EVENTs it sends stored while a write-policy
 * plugin is configured.  Service thread, before the connection's first
 * message; without memory its events carry no address. */
void ingress_note_peer(struct ingress *in, uint64_t conn_id, const char *ip);

/* Tells conn_id's lane the connection closed (after its last message), so
 * the lane forgets what it knew about it.  Never refused. */
void ingress_forget(struct ingress *in, uint64_t conn_id);

#endif
