/*
 * listeners.test.mjs - a connect-and-close on one of the relay's IPC
 * sockets (what a health check with `nc -U` does) locks nobody out.
 *
 * nng 1.5.2, Debian 12's, stops an IPC listener for good when a peer closes
 * before the SP handshake is done: later peers connect, and are never read.
 * Whether one probe stops it depends on which side is first (the listener's
 * handshake write failing on the closed connection is what does it), so
 * each test probes ten times.
 * The relay checks its listeners every second and listens again where one
 * stopped (common/listencheck.h).  Each test probes a socket several times,
 * as a health check would, and then needs someone new to get through it:
 *   - stored's request and delivery sockets: a worker restarted afterwards
 *     serves, and its subscriptions get live events;
 *   - stored's admin socket: relayctl answers, and stats and /metrics
 *     count the listeners stored replaced;
 *   - a worker's reply socket: after the next stored restart that worker
 *     gets stored's answers again.
 * Against a relay without the check these failed 11 times in 12 (four runs
 * of this file; bench/RESULTS.md finding 11).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { readdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { useRelay, until, sleep } from './lib/relay.mjs';
import { keypair, signed } from './lib/client.mjs';

const author = keypair();

/* Under `make sanitize` the relays of this file use tests/lsan-nng-fault.supp:
 * a replaced listener leaves memory inside nng that LeakSanitizer would
 * report at exit.  (Each test file runs in a process of its own.) */
if (process.env.LSAN_OPTIONS) {
  const supp = resolve(dirname(fileURLToPath(import.meta.url)), '../lsan-nng-fault.supp');
  process.env.LSAN_OPTIONS = /suppressions=[^:]*/.test(process.env.LSAN_OPTIONS)
    ? process.env.LSAN_OPTIONS.replace(/suppressions=[^:]*/, `suppressions=${supp}`)
    : `${process.env.LSAN_OPTIONS}:suppressions=${supp}`;
}

/* Connects to the Unix socket at path and closes at once, as `nc -U -z`
 * does; resolves when closed. */
function connectAndClose(path) {
  return new Promise((resolve, reject) => {
    const s = connect({ path }, () => s.destroy());
    s.on('close', resolve);
    s.on('error', reject);
  });
}

/* Probes some milliseconds apart, as a health check would make. */
async function probe(path, times = 10) {
  for (let i = 0; i < times; i++) {
    await connectAndClose(path);
    await sleep(20);
  }
}

/* Publishes through c until an event is accepted; returns it.  An EVENT
 * sent while replies still go into a stopped listener is answered "error:
 * storage did not answer in time" after store_timeout_ms (2 s here). */
async function publishUntilAccepted(c, content, timeout) {
  let accepted = null;
  await until(async () => {
    const r = await c.publish(signed(author.sk, { content }));
    if (r.ok === true) accepted = r;
    else assert.match(r.message, /^error: /);
    return r.ok === true;
  }, { timeout, interval: 200, what: `an EVENT accepted (${content})` });
  return accepted;
}

describe('listeners after a connect-and-close', () => {
  const relay = useRelay({ workers: 2, config: { store_timeout_ms: 2000 } });

  it("stored's request and delivery sockets: a worker restarted afterwards serves", async () => {
    await probe(join(relay.runDir, 'stored-rpc.ipc'));
    await probe(join(relay.runDir, 'stored-pub.ipc'));
    await relay.kill(2, 'SIGKILL');
    await relay.restartWorker(2);
    const c2 = await relay.connectTo(2);
    await publishUntilAccepted(c2, 'through the restarted worker', 10000);
    assert.equal((await c2.req('live', { authors: [author.pk], limit: 0 })).eose, true);
    const c1 = await relay.connectTo(1);
    const ev = await c1.mustPublish(signed(author.sk, { content: 'from worker 1 to 2' }));
    await c2.liveEvent('live', ev.id, { timeout: 5000 });
  });

  it("stored's admin socket: relayctl answers", async () => {
    await probe(join(relay.runDir, 'stored-admin.ipc'));
    let out = null;
    await until(async () => {
      const r = await relay.relayctl('workers');
      if (r.code === 0 && /worker 1/.test(r.stdout)) out = r.stdout;
      return out !== null;
    }, { timeout: 20000, interval: 100, what: 'relayctl workers answered' });
    assert.match(out, /worker 2/);
    /* stored counts the listeners it replaced (none on an nng without the fault). */
    const stats = JSON.parse((await relay.relayctl('--json', 'stats')).stdout);
    assert.ok(Number.isInteger(stats.listener_restarts), JSON.stringify(stats));
    const line = new RegExp(`^relay_listener_restarts_total ${stats.listener_restarts}$`, 'm');
    await until(async () => line.test((await relay.httpGet('/metrics')).body),
      { timeout: 5000, interval: 100, what: `/metrics to say ${stats.listener_restarts} listener restarts` });
  });

  it("a worker's reply socket: the worker gets stored's answers after stored restarts", async () => {
    const name = readdirSync(relay.runDir).find((n) => /^relayd-1-.*\.ipc$/.test(n));
    assert.ok(name, 'worker 1 has a reply socket');
    await probe(join(relay.runDir, name));
    await relay.kill('stored', 'SIGKILL');
    await relay.restartStored();
    const c1 = await relay.connectTo(1);
    await publishUntilAccepted(c1, 'through worker 1 after the restart', 10000);
    const r = await c1.req('back', { authors: [author.pk], limit: 5 });
    assert.equal(r.eose, true, `REQ refused: ${r.closed}`);
  });
});
