/*
 * plugin.h - the write-policy plugin: one program, run by stored for the
 * whole relay, that judges every new event before it is stored.
 *
 * The rpc thread (a worker's event) and the admin thread (an import) hand
 * events here instead of to the writer.  The plugin thread owns the rest:
 * it skips events already stored (answered duplicate: as the writer
 * would), writes a request line for each other event to the program
 * (plugin_wire.h), several in flight, and matches its answers by id.
 * Events leave in the order they came, so the writer sees each
 * connection's events in order: accepted ones go on to the writer, the
 * others are answered here (reject: OK false, with "blocked: " put before
 * a message that has no NIP-01 prefix; shadowReject: OK true, nothing
 * stored).
 *
 * Failures: an event waits at most plugin_timeout_ms.  Past it, or when
 * the program exits or prints a line that is not an answer, each event it
 * held is refused "error:" (stored, with plugin_fail_open = 1), never
 * half-decided; the program is stopped and started again after a delay
 * that doubles from 100 ms to 10 s and resets at its first good answer.
 * It is started again too when its file changes (checked each second) and
 * on SIGHUP (plugin_reload()), once the events it holds are answered.
 *
 * Ephemeral events do not come here: they are never stored.
 */
#ifndef STORED_PLUGIN_H
#define STORED_PLUGIN_H

struct plugin;
struct stored;
struct write_job;

/* Starts the plugin thread for s->cfg.plugin (which must be set); the
 * program itself starts on the thread.  Returns NULL on failure (logged). */
struct plugin *plugin_start(struct stored *s);

/*
 * Takes job (its source fields set, jobs.h) to be judged.  Any thread.
 * Returns 0 (taken: it will be answered, or go on to the writer), or
 * ERR_FULL (plugin_queue events wait already) or ERR_CLOSED (stopping),
 * the job staying with the caller, who answers it.
 */
int plugin_submit(struct plugin *p, struct write_job *job);

/* Starts the program again once the events it holds are answered.  Any
 * thread (stored's SIGHUP).  NULL-safe. */
void plugin_reload(struct plugin *p);

/* Refuses what waits ("error:", retried by its client: nothing had an OK
 * true), stops the program and the thread.  Later submissions get
 * ERR_CLOSED.  Call before the write queue closes.  NULL-safe. */
void plugin_stop(struct plugin *p);
/* Frees p once no thread can submit to it any more.  NULL-safe. */
void plugin_free(struct plugin *p);

#endif
