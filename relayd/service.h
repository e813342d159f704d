/*
 * service.h - what the service thread does besides websocket I/O.
 *
 * service_drain() handles every mail posted since the last call: frames to
 * queue, subscriptions to open or close (with the per-connection limit),
 * events waiting for stored, stored's replies and deliveries (answer.h),
 * and the link to stored coming and going.  The first link up starts
 * accepting connections (listen.h), so no client meets a worker that
 * cannot store.  When stored comes back, every live subscription is
 * registered again, so clients keep receiving without doing anything.
 */
#ifndef RELAYD_SERVICE_H
#define RELAYD_SERVICE_H

#include <stdbool.h>
#include <stdint.h>

struct relayd;
struct conn;
struct service;

/* The service thread's own state for r, or NULL without memory.  r keeps
 * it (r->service) until service_free(). */
struct service *service_new(struct relayd *r);
/* Frees what service_new() returned.  NULL-safe. */
void service_free(struct service *sv);

/* Handles all mail queued so far, then writes the frames it queued
 * (send.h).  From the mailbox's wake-up callback. */
void service_drain(struct relayd *r);
/* Once a second.  Answers "error:" to the EVENTs stored did not answer
 * within store_timeout_ms, and to the COUNTs, histories and resumes it sent
 * nothing for within answer_timeout_ms.  Also expires NIP-86 requests,
 * sweeps the address limits, trims the heap and sends this worker's
 * counters to stored. */
void service_tick(struct relayd *r);
/* c closed: tells stored (CONN_CLOSED, if it had registered a
 * subscription), its lane and the address limits, then frees c. */
void service_conn_gone(struct relayd *r, struct conn *c);
/* Hands nng what waits in the link's backlog, and keeps a short timer
 * running while something still waits (MAIL_PUMP). */
void service_pump(struct relayd *r);

#endif
