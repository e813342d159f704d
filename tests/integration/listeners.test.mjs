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
 *
 * A socket file removed from run_dir (a tmp cleaner, a careless rm) is
 * listened on again too, and counted: stored's in its stats, a worker's in
 * its worker report and /metrics.  With listen_check_ms = 0 nothing is
 * checked, and the file stays gone.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { existsSync, readdirSync, statSync, unlinkSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { useRelay, until, sleep } from './lib/relay.mjs';
import { keypair, signed } from './lib/client.mjs';
import { metricValue } from './lib/metrics.mjs';

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

/* The name of worker n's reply socket in run_dir. */
function replySocketOf(relay, n) {
  const name = readdirSync(relay.runDir).find((f) => new RegExp(`^relayd-${n}-.*\\.ipc$`).test(f));
  assert.ok(name, `worker ${n} has a reply socket`);
  return join(relay.runDir, name);
}

async function workerReport(relay, n) {
  const r = await relay.relayctl('--json', 'workers');
  assert.equal(r.code, 0, r.stderr);
  return JSON.parse(r.stdout).worker_list.find((w) => w.worker === n);
}

describe('listeners after their socket file is removed', () => {
  const relay = useRelay({ workers: 2, config: { store_timeout_ms: 2000 } });

  it("a worker's reply socket comes back, is counted, and gets stored's answers", async () => {
    const path = replySocketOf(relay, 1);
    assert.equal((await workerReport(relay, 1)).listener_restarts, 0);
    unlinkSync(path);
    await until(() => existsSync(path), { timeout: 5000, what: `${path} listened on again` });
    await until(async () => (await workerReport(relay, 1)).listener_restarts >= 1,
      { timeout: 5000, what: "worker 1's report to count the listener restart" });
    assert.equal((await workerReport(relay, 2)).listener_restarts, 0);
    await until(async () => metricValue((await relay.httpGet('/metrics')).body,
      'relay_worker_listener_restarts_total{worker="1"}') >= 1,
    { timeout: 5000, what: 'relay_worker_listener_restarts_total{worker="1"} >= 1' });
    /* Its new listener is the one stored dials after a restart. */
    await relay.kill('stored', 'SIGKILL');
    await relay.restartStored();
    const c1 = await relay.connectTo(1);
    await publishUntilAccepted(c1, 'through worker 1 after its socket came back', 10000);
  });

  it("stored's admin socket comes back, for its owner only, and is counted", async () => {
    const path = join(relay.runDir, 'stored-admin.ipc');
    const before = JSON.parse((await relay.relayctl('--json', 'stats')).stdout).listener_restarts;
    unlinkSync(path);
    await until(() => existsSync(path), { timeout: 5000, what: `${path} listened on again` });
    assert.equal(statSync(path).mode & 0o777, 0o600);
    let stats = null;
    await until(async () => {
      const r = await relay.relayctl('--json', 'stats');
      if (r.code === 0) stats = JSON.parse(r.stdout);
      return stats !== null;
    }, { timeout: 5000, interval: 100, what: 'relayctl stats answered' });
    assert.equal(stats.listener_restarts, before + 1);
  });
});

describe('listener checks off (listen_check_ms = 0)', () => {
  const relay = useRelay({ workers: 1, config: { listen_check_ms: 0 } });

  it('a removed socket file stays removed', async () => {
    const path = replySocketOf(relay, 1);
    unlinkSync(path);
    await sleep(2500);
    assert.equal(existsSync(path), false);
    assert.equal((await workerReport(relay, 1)).listener_restarts, 0);
  });
});
