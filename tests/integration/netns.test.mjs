/*
 * netns.test.mjs - workers on another network stack than stored, over
 * mutual TLS (tls+tcp://, IPv6), in namespaces the test makes:
 *
 *   S (stored) --veth, fd00:36::/64-- W (relayd 1 and 2) --veth, 10.36.1.0/24-- C
 *
 * The test's clients reach the workers from C through lib/nsforward.mjs.
 * Cases: NIP-01 end to end; workers with a certificate of another CA or
 * without TLS refused, and a TLS client without a certificate; the S-W link down for 5 s during ingest (nothing
 * acknowledged lost, EVENT answered error: at once while down, the same
 * subscription delivering again after, EVENT and REQ answered error: at
 * once while it is down); tc netem delay and loss on the link.
 * Every wait is on a condition.  Skipped where namespaces cannot be made.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client, keypair, signed } from './lib/client.mjs';
import { Netns, makeCerts, netnsProblem } from './lib/netns.mjs';
import { Proc, binary, configText, sleep, until } from './lib/relay.mjs';

const HERE = dirname(fileURLToPath(import.meta.url));
const IP = ['/usr/sbin/ip', '/sbin/ip', '/usr/bin/ip', '/bin/ip'].find((p) => existsSync(p));
const STORED_ADDR = 'fd00:36::1';
const WORKER_ADDR = '10.36.1.1';
const PORT = 7777;
const problem = IP ? netnsProblem() : 'no ip command';

/* One stored in S, workers in W, a forwarder in C, and what they need. */
class NetRelay {
  async start() {
    this.dir = mkdtempSync(join(tmpdir(), 'relay-netns-'));
    this.sock = join(this.dir, 'clients.sock');
    this.procs = [];
    this.net = new Netns('rl');
    this.S = this.net.add('s');
    this.W = this.net.add('w');
    this.C = this.net.add('c');
    this.net.veth(this.S, `${STORED_ADDR}/64`, this.W, 'fd00:36::2/64');
    this.net.veth(this.W, `${WORKER_ADDR}/24`, this.C, '10.36.1.2/24');
    makeCerts(this.dir);
    this.stored = this.spawn(this.S, 'stored', ['-c', this.conf('stored', 'stored')]);
    await this.waitLog(this.stored, /info: ready: /, 'stored to log "ready"');
    this.forward = this.spawn(this.C, 'forward',
      [process.execPath, join(HERE, 'lib/nsforward.mjs'), this.sock, WORKER_ADDR, String(PORT)]);
    await this.waitLog(this.forward, /listening/, 'the forwarder');
    this.workers = {};
    for (const n of [1, 2]) this.workers[n] = this.worker(n, 'worker', 'worker');
    for (const n of [1, 2]) await this.waitServed(n);
  }

  /* A config for process name with certificate cert (file stem) and extra
   * keys; returns its path. */
  conf(name, cert, extra = {}) {
    const run = join(this.dir, `run-${name}`);
    mkdirSync(run, { recursive: true, mode: 0o700 });
    const path = join(this.dir, `${name}.conf`);
    writeFileSync(path, configText({
      bind: WORKER_ADDR,
      port: PORT,
      data_dir: join(this.dir, 'data'),
      run_dir: run,
      log_level: 'info',
      link_rpc_url: `tls+tcp://[${STORED_ADDR}]:7801`,
      link_pub_url: `tls+tcp://[${STORED_ADDR}]:7802`,
      link_reply_url: `tls+tcp://[${STORED_ADDR}]:7900`,
      link_tls_ca_file: join(this.dir, 'ca.pem'),
      link_tls_cert_file: join(this.dir, `${cert}.pem`),
      link_tls_key_file: join(this.dir, `${cert}.key`),
      link_tls_server_name: 'stored',
      link_timeout_ms: 2000,
      /* An EVENT's or a REQ's error: then comes from the link, never from these. */
      store_timeout_ms: 600000,
      answer_timeout_ms: 3600000,
      ...extra,
    }));
    return path;
  }

  spawn(ns, name, argv) {
    const [bin, args] = this.net.command(ns, argv[0].startsWith('/') ? argv : [binary(name), ...argv]);
    const p = new Proc(name, IP ?? bin, args, this.dir);
    this.procs.push(p);
    return p;
  }

  /* Worker n with its own config named name, certificate cert. */
  worker(n, cert, name = `relayd${n}`, extra = {}) {
    const p = this.spawn(this.W, 'relayd', ['-c', this.conf(name, cert, extra), '-i', String(n)]);
    p.name = `relayd@${n}`;
    return p;
  }

  async waitLog(p, re, what) {
    await until(() => {
      if (!p.running) throw new Error(`${p.name} ${p.describeExit()}\n${this.logs()}`);
      return re.test(p.log);
    }, { timeout: 20000, what });
  }

  /* A client from C, on whichever worker the kernel picks. */
  connect() {
    return Client.openUnix(this.sock, { timeout: 5000 });
  }

  async connectTo(n) {
    for (let i = 0; i < 64; i++) {
      const c = await this.connect();
      if (c.worker === n) return c;
      await c.end();
    }
    throw new Error(`no connection landed on worker ${n}`);
  }

  async waitServed(n) {
    await until(async () => {
      let c = null;
      try { c = await this.connect(); } catch { return false; }
      const hit = c.worker === n;
      await c.end();
      return hit;
    }, { timeout: 20000, interval: 50, what: `worker ${n} serving through C\n${this.logs()}` });
  }

  logs() {
    return (this.procs ?? []).map((p) => `----- ${p.name} (${p.describeExit()}) -----\n${p.log}`).join('');
  }

  /* SIGTERM to every process started here (by pid), then the namespaces go. */
  async stop() {
    const failures = [];
    for (const p of [...this.procs].reverse()) {
      if (!p.running) continue;
      p.stopping = true;
      p.child.kill('SIGTERM');
      const ex = await p.waitExit();
      if (!ex) {
        p.child.kill('SIGKILL');
        await p.waitExit();
        failures.push(`${p.name} did not exit after SIGTERM`);
      } else if (ex.code !== 0 && !p.refused) {
        failures.push(`${p.name} ${p.describeExit()} after SIGTERM`);
      }
    }
    const logs = this.logs();
    this.net?.cleanup();
    if (this.dir) rmSync(this.dir, { recursive: true, force: true });
    return failures.length ? `${failures.join('; ')}\n${logs}` : null;
  }
}

describe('workers in another network namespace over mutual TLS', { skip: problem ? `skipped: ${problem}` : false }, () => {
  const relay = new NetRelay();
  let stopped = false;
  before(async () => {
    try {
      await relay.start();
    } catch (err) {
      await relay.stop();
      stopped = true;
      throw err;
    }
  });
  after(async () => {
    if (!stopped) await relay.stop();
  });

  it('serves NIP-01 end to end: stored, two workers and clients on three network stacks', async () => {
    assert.match(relay.stored.log, /worker 1 \(pid \d+\) connected/);
    assert.match(relay.stored.log, /worker 2 \(pid \d+\) connected/);
    const a = await relay.connectTo(1);
    const b = await relay.connectTo(2);
    const { sk } = keypair();
    b.send(['REQ', 'live', { kinds: [1], authors: [signed(sk).pubkey] }]);
    await b.collect('live');
    const ev = await a.mustPublish(signed(sk, { content: 'across namespaces' }));
    assert.equal((await b.liveEvent('live', ev.id)).content, 'across namespaces');
    const back = await a.req('h', { ids: [ev.id] });
    assert.deepEqual(back.events.map((e) => e.id), [ev.id]);
    await a.end();
    await b.end();
  });

  it('refuses a worker whose certificate another CA signed, one without TLS, and a TLS client without a certificate', async () => {
    const stranger = relay.worker(3, 'stranger', 'relayd3', { port: PORT + 1, log_level: 'debug' });
    const plain = relay.worker(4, 'worker', 'relayd4', {
      port: PORT + 2, link_insecure: 1, log_level: 'debug',
      link_rpc_url: `tcp://[${STORED_ADDR}]:7801`, link_pub_url: `tcp://[${STORED_ADDR}]:7802`,
      link_reply_url: `tcp://[${STORED_ADDR}]:7900`,
    });
    for (const p of [stranger, plain]) {
      p.refused = true;
      /* Three fresh dialers mean dozens of dials failed (one every 100 ms
       * at most). */
      await relay.waitLog(p, /stored still unreachable; dialing again \(3\)/,
        `${p.name} to renew its dialers three times`);
    }
    assert.match(stranger.log, /refused this worker's certificate/);
    for (const p of [stranger, plain]) {
      assert.doesNotMatch(p.log, /connected to stored/);
      assert.doesNotMatch(p.log, /accepting connections/);
    }
    assert.doesNotMatch(relay.stored.log, /worker [34] \(pid/);
    /* A TLS client that shows no certificate is cut off in the handshake;
     * the same client with the workers' certificate gets through. */
    const dial = (...cert) => spawnSync(IP, ['netns', 'exec', relay.W, 'nngcat', '--req0', '--dial',
      `tls+tcp://[${STORED_ADDR}]:7801`, '--insecure', ...cert, '--data', 'x', '--recv-timeout', '1'],
    { timeout: 20000, encoding: 'utf8' });
    const bare = dial();
    assert.notEqual(bare.status, 0);
    assert.match(bare.stderr, /Unable to dial/);
    const certified = dial('--cert', join(relay.dir, 'worker.pem'), '--key', join(relay.dir, 'worker.key'));
    assert.equal(certified.status, 0, certified.stderr);
    for (const p of [stranger, plain]) {
      p.child.kill('SIGTERM');
      await p.waitExit();
    }
  });

  it('loses nothing acknowledged while the link is down for 5 s, and delivers again on the same subscription', async () => {
    const pub = await relay.connectTo(1);
    const sub = await relay.connectTo(2);
    const { sk } = keypair();
    const author = signed(sk).pubkey;
    sub.send(['REQ', 'live', { kinds: [1], authors: [author] }]);
    await sub.collect('live');
    const acked = [];
    let errors = 0;
    let stop = false;
    let failed = null;
    const ingest = (async () => {
      for (let i = 0; !stop; i++) {
        const r = await pub.publish(signed(sk, { content: `ingest ${i}` }), { timeout: 120000 });
        if (r.ok) acked.push(r.id);
        else if (/^error:/.test(r.message)) errors++;
        else throw new Error(`unexpected OK ${JSON.stringify(r.frame)}`);
        await sleep(20);
      }
    })().catch((err) => { failed = err; stop = true; });
    try {
      await until(() => acked.length >= 20, { timeout: 30000, what: '20 events stored before the cut' });
      const w = relay.workers;
      const marks = [w[1].log.length, w[2].log.length];
      relay.net.link(relay.W, relay.S, false);
      const down = Date.now();
      /* The worker notices the silence, and then answers at once. */
      await relay.waitLog(w[1], /stored sent nothing for/, 'worker 1 to close the silent link');
      await until(() => errors > 0, { timeout: 30000, what: 'an EVENT answered error: while the link is down' });
      const refused = await pub.req('while-down', { kinds: [1], limit: 1 });
      assert.match(refused.closed ?? '', /^error:/);
      await sleep(Math.max(0, 5000 - (Date.now() - down)));
      relay.net.link(relay.W, relay.S, true);
      await until(() => [1, 2].every((n) => /connected to stored; registering/.test(w[n].log.slice(marks[n - 1]))),
        { timeout: 60000, what: () => `both workers to register again\n${relay.logs()}` });
      const before = acked.length;
      await until(() => acked.length >= before + 20, { timeout: 60000, what: '20 more events stored after the link came back' });
    } finally {
      stop = true;
      await ingest;
    }
    if (failed) throw failed;
    /* The subscriber kept its connection and its subscription. */
    assert.equal(sub.isOpen, true);
    const marker = await pub.mustPublish(signed(sk, { content: 'after the cut' }));
    await sub.liveEvent('live', marker.id, { timeout: 30000 });
    const back = await pub.req('all', { authors: [author], limit: 5000 });
    const have = new Set(back.events.map((e) => e.id));
    const lost = acked.filter((id) => !have.has(id));
    assert.deepEqual(lost, [], `${lost.length} of ${acked.length} acknowledged events lost`);
    await pub.end();
    await sub.end();
  });

  it('stays correct with tc netem delay 20ms loss 1% on the link', async (t) => {
    const why = relay.net.netemProblem(relay.W, relay.S);
    if (why) {
      t.skip(`skipped: ${why}`);
      return;
    }
    for (const [a, b] of [[relay.W, relay.S], [relay.S, relay.W]])
      relay.net.tc(a, 'qdisc', 'add', 'dev', relay.net.dev(a, b), 'root', 'netem', 'delay', '20ms', 'loss', '1%');
    const pub = await relay.connectTo(1);
    const sub = await relay.connectTo(2);
    const { sk } = keypair();
    sub.send(['REQ', 'live', { kinds: [1], authors: [signed(sk).pubkey] }]);
    await sub.collect('live', { timeout: 30000 });
    const ids = [];
    for (let i = 0; i < 100; i++)
      ids.push((await pub.mustPublish(signed(sk, { content: `lossy ${i}` }), { timeout: 60000 })).id);
    for (const id of ids) await sub.liveEvent('live', id, { timeout: 60000 });
    const back = await pub.req('all', { authors: [signed(sk).pubkey], limit: 500 });
    assert.deepEqual(back.events.map((e) => e.id).sort(), [...ids].sort());
    for (const [a, b] of [[relay.W, relay.S], [relay.S, relay.W]])
      relay.net.tc(a, 'qdisc', 'del', 'dev', relay.net.dev(a, b), 'root');
    await pub.end();
    await sub.end();
  });

  it('every process exits with code 0 on SIGTERM, and the namespaces go', async () => {
    stopped = true;
    const failure = await relay.stop();
    assert.equal(failure, null);
    const left = execIpNetns().filter((n) => n.startsWith(relay.net.prefix));
    assert.deepEqual(left, []);
  });
});

/* The names `ip netns list` shows. */
function execIpNetns() {
  return execFileSync(IP, ['netns', 'list']).toString().split('\n').map((l) => l.split(' ')[0]).filter(Boolean);
}
