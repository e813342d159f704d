/*
 * express.test.mjs - the express thread of an ingress lane (express_lane,
 * relayd/fairq.h): it answers cheap messages while the lane's first thread
 * checks another client's flood of signatures, and it never takes a
 * connection's message before that connection's earlier ones are done:
 *   - AUTH then REQ sent back to back (auth_required = reads) while another
 *     connection floods EVENTs into the same lane: every REQ is served as
 *     authenticated (a REQ run before its AUTH would be CLOSED
 *     "auth-required:");
 *   - REQ then CLOSE back to back during the flood: nothing is delivered
 *     for the closed subscription afterwards;
 *   - a connection sending far more than its lane can take at once is
 *     paused (max_queued_messages), not refused: each of its EVENTs is
 *     answered, no NOTICE, and another connection's EVENT is stored meanwhile
 *     (relay_worker_reads_paused_total counts it, lane_refused stays 0);
 *   - a REQ too large for the loop (inline_request_bytes) then a small CLOSE
 *     of it, back to back during the flood: the CLOSE is not handled on the
 *     loop before the REQ is handled in the lane (nothing is delivered for
 *     the closed subscription afterwards);
 *   - with express_lane = 0 the same sequences work on one thread;
 *   - small REQ, CLOSE and COUNT messages of a quiet connection are handled
 *     on the loop (relay_worker_requests_on_loop_total counts exactly
 *     those), a large REQ and EVENTs are not, and every one is answered
 *     alike with inline_request_bytes = 0, which counts none;
 *   - with the per-connection pause set out of reach, a burst of one
 *     connection past what the lane holds (4,096 messages) is paused, not
 *     refused: every EVENT is answered "invalid:", and a second REQ of an
 *     id sent while the lane is full replaces the first in turn (no CLOSED
 *     overtakes the queued first REQ);
 *   - connections whose first messages find the lane full get OK false
 *     "rate-limited:" for each, none is lost or answered twice, and
 *     relay_worker_lane_refused_total counts exactly those;
 *   - verify_nice lowers the priority of the lane threads ("lane0") only,
 *     not of the express thread ("express0") or the rest of the worker;
 *     query_nice that of stored's query threads not kept for cheap
 *     connections ("query"), not of the kept one ("query-light");
 *   - request_slice_us gives the request path's threads (relayd's loop,
 *     express, link and nng threads; stored's rpc, bcast, query and nng
 *     threads) that scheduler slice and leaves the lane, writer and
 *     checkpoint thread at the kernel's default (Linux 6.12+ only).
 * One worker with one lane, so the flood and the probes share it.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { useRelay, until, sleep, PAUSABLE } from './lib/relay.mjs';
import { metricValue } from './lib/metrics.mjs';
import { keypair, signed, now, broken } from './lib/client.mjs';

const TRIALS = 40;
const FLOOD_CHUNK = 400;

/* Keeps conn busy sending EVENTs whose signatures must be checked (and
 * fail: no storage work) until stop() is called. */
function flood(conn) {
  const bad = JSON.stringify(['EVENT', broken.badSig(signed(keypair().sk, { content: 'flood' }))]);
  let running = true;
  const timer = setInterval(() => {
    if (!running || conn.ws.bufferedAmount > 1 << 20)
      return;
    for (let i = 0; i < FLOOD_CHUNK; i++)
      conn.send(bad);
    conn.take(); /* the OK false answers are not needed */
  }, 5);
  return () => { running = false; clearInterval(timer); };
}

/* Worker 1's value of a counter on /metrics (undefined while not reported). */
async function workerCounter(relay, name) {
  return metricValue((await relay.httpGet('/metrics')).body, `${name}{worker="1"}`);
}

async function authEventFor(relay, c, kp) {
  await until(() => c.challenge !== null, { timeout: 3000, what: 'an AUTH challenge' });
  return signed(kp.sk, {
    kind: 22242, created_at: now(),
    tags: [['relay', relay.url], ['challenge', c.challenge]],
  });
}

/* n pubkeys nobody uses, to make a filter larger than the loop takes. */
function padding(n) {
  return Array.from({ length: n }, () => keypair().pk);
}

/* Ten REQs (filter(pk), ids prefix0..prefix9), each followed at once by its
 * CLOSE, while another connection floods the lane; then an event that
 * every one of them would match: none may get it. */
async function reqThenCloseDuringFlood(relay, prefix, filter) {
  const kp = keypair();
  const publisher = await relay.connect();
  const watcher = await relay.connect();
  const auth = await authEventFor(relay, watcher, kp);
  watcher.send(['AUTH', auth]);
  assert.equal((await watcher.okFor(auth.id)).ok, true);
  const stop = flood(await relay.connect());
  try {
    for (let t = 0; t < 10; t++) {
      watcher.send(['REQ', `${prefix}${t}`, filter(kp.pk)]);
      watcher.closeSub(`${prefix}${t}`);
    }
    /* A REQ after them, answered in order, shows the CLOSEs were handled;
     * it stays open, and one delivery carries an event to all of a
     * connection's matching subscriptions at once. */
    assert.equal((await watcher.req('control', { authors: [kp.pk], kinds: [1] })).eose, true);
    const ev = await publisher.mustPublish(signed(kp.sk, { content: `after the ${prefix} closes` }));
    await watcher.liveEvent('control', ev.id);
    const closed = new RegExp(`^${prefix}\\d+$`);
    const late = watcher.take((f) => f[0] === 'EVENT' && closed.test(f[1]));
    assert.deepEqual(late, [], 'a closed subscription got an event');
  } finally {
    stop();
  }
}

function suite(expressLane) {
  describe(`express_lane = ${expressLane}`, () => {
    const relay = useRelay({
      workers: 1,
      config: { auth_required: 'reads', verify_threads: 1, express_lane: expressLane, auth_challenge: 'connect' },
    });

    it('AUTH then REQ back to back during a flood: the REQ always sees the AUTH', async () => {
      const stop = flood(await relay.connect());
      try {
        for (let t = 0; t < TRIALS; t++) {
          const c = await relay.connect();
          const auth = await authEventFor(relay, c, keypair());
          c.send(['AUTH', auth]);
          c.send(['REQ', 'after-auth', { kinds: [1], limit: 1 }]);
          const r = await c.collect('after-auth', { timeout: 10000 });
          assert.equal(r.closed, null, `trial ${t}: the REQ ran before its AUTH`);
          assert.equal(r.eose, true);
          assert.equal((await c.okFor(auth.id)).ok, true);
          await c.end();
        }
      } finally {
        stop();
      }
    });

    it('a connection in the slot of one closed with messages still queued is read to the end', async () => {
      /* A lane counts a connection's queued messages by its slot, and the
       * next connection takes a freed slot at once: the closed one's
       * messages still count towards the new one's pause, so the resume
       * has to reach whoever holds the slot now, not the connection whose
       * message happened to be taken when the count fell. */
      const big = JSON.stringify(['EVENT',
        broken.badSig(signed(keypair().sk, { content: 'x'.repeat(60000) }))]);
      /* The lane shares its time with a flood, so the closed connection's
       * messages are still queued when the next connection takes its slot. */
      const stop = flood(await relay.connect());
      try {
        for (let trial = 0; trial < 10; trial++) {
          /* Below the pause mark, so its close is read at once. */
          const gone = await relay.connect();
          for (let i = 0; i < 60; i++)
            gone.send(big);
          await sleep(2);
          gone.ws.terminate();
          const c = await relay.connect();
          const ev = broken.badSig(signed(keypair().sk, { content: `after ${trial}` }));
          const text = JSON.stringify(['EVENT', ev]);
          for (let i = 0; i < 300; i++)
            c.send(text);
          let answered = 0;
          await until(() => {
            answered += c.take((f) => f[0] === 'OK' && f[1] === ev.id).length;
            return answered === 300;
          }, { timeout: 10000, what: `300 answers in trial ${trial}` });
          await c.end();
        }
      } finally {
        stop();
      }
    });

    it('a connection far ahead of its lane is paused, not refused', async () => {
      const burst = 6000; /* more than a lane holds (4096) */
      const c = await relay.connect();
      const bad = broken.badSig(signed(keypair().sk, { content: 'burst' }));
      const text = JSON.stringify(['EVENT', bad]);
      for (let i = 0; i < burst; i++)
        c.send(text);
      const other = await relay.connect();
      await other.mustPublish(signed(keypair().sk, { content: 'meanwhile' }));
      let answered = 0;
      await until(() => {
        answered += c.take((f) => f[0] === 'OK' && f[1] === bad.id && f[2] === false).length;
        return answered === burst;
      }, { timeout: 20000, what: `${burst} OK false answers` });
      assert.deepEqual(c.take((f) => f[0] === 'NOTICE'), []);
      await until(async () => (await workerCounter(relay, 'relay_worker_reads_paused_total')) > 0,
        { timeout: 5000, what: 'relay_worker_reads_paused_total above 0' });
      assert.equal(await workerCounter(relay, 'relay_worker_lane_refused_total'), 0);
    });

    it('a valid EVENT among a flood of invalid ones is stored within the bundle wait, not after the flood', async () => {
      /* Several flooders, so the lane always has work even while one of
       * them is paused for being too far ahead. */
      const stops = [];
      for (let i = 0; i < 4; i++) stops.push(flood(await relay.connect()));
      const stop = () => stops.forEach((s) => s());
      const publisher = await relay.connect();
      try {
        await new Promise((resolve) => setTimeout(resolve, 200)); /* the lane is busy */
        for (let t = 0; t < 10; t++) {
          const ev = signed(keypair().sk, { content: `among the flood ${t}` });
          const ok = await publisher.publish(ev, { timeout: 2000 });
          assert.equal(ok.ok, true, `trial ${t}: ${ok.message}`);
        }
      } finally {
        stop();
      }
    });

    it('REQ then CLOSE back to back during a flood: nothing arrives after the CLOSE', async () => {
      await reqThenCloseDuringFlood(relay, 's', (pk) => ({ authors: [pk], kinds: [1] }));
    });

    it('a REQ too large for the loop then its CLOSE during a flood: nothing arrives after the CLOSE', async () => {
      /* ~1.4 KB: above inline_request_bytes, so the REQ goes to the lane
       * and the small CLOSE behind it must wait for it there. */
      const padded = padding(20);
      const filter = (pk) => ({ authors: [pk, ...padded], kinds: [1] });
      assert.ok(JSON.stringify(['REQ', 'big0', filter(keypair().pk)]).length > 1024);
      await reqThenCloseDuringFlood(relay, 'big', filter);
    });
  });
}

suite(1);
suite(0);

for (const bytes of [1024, 0]) {
  describe(`inline_request_bytes = ${bytes}`, () => {
    const relay = useRelay({ workers: 1, config: { inline_request_bytes: bytes, auth_challenge: 'connect',
      private_kinds: '' } });

    it(bytes ? 'handles a quiet connection\'s small requests on the loop, and only those'
      : 'hands every request to a lane', async () => {
      const kp = keypair();
      const c = await relay.connect();
      const ev = await c.mustPublish(signed(kp.sk, { content: 'found either way' }));
      const small = await c.req('small', { authors: [kp.pk] });
      assert.deepEqual(small.events.map((e) => e.id), [ev.id]);
      const big = await c.req('big', { authors: [kp.pk, ...padding(20)] });
      assert.deepEqual(big.events.map((e) => e.id), [ev.id]);
      c.closeSub('small');
      assert.equal((await c.count('n', { authors: [kp.pk] })).count, 1);
      /* The small REQ, its CLOSE and the COUNT; not the EVENT, not the big REQ. */
      const expected = bytes ? 3 : 0;
      await until(async () =>
        (await workerCounter(relay, 'relay_worker_requests_on_loop_total')) === expected,
      { timeout: 5000, what: `relay_worker_requests_on_loop_total = ${expected}` });
      await sleep(1200); /* one more report: the count stays there */
      assert.equal(await workerCounter(relay, 'relay_worker_requests_on_loop_total'), expected);
    });
  });
}

describe('a full lane', () => {
  /* A lane of 64: one connection's burst fills it before the verify
   * thread can drain it, however fast or slow this machine is.  Without
   * deflate: with it negotiated the loop took a burst in more slowly. */
  const relay = useRelay({ workers: 1,
    config: { ...PAUSABLE, ws_deflate: 0, verify_threads: 1, max_queued_messages: 100000, lane_depth: 64 } });

  it('takes one more message of a connection it holds earlier ones of, and pauses it: nothing is refused, no REQ answered out of turn', async () => {
    const c = await relay.connect();
    const kp = keypair();
    const stored = await c.mustPublish(signed(kp.sk, { content: 'found by both REQs' }));
    const bad = broken.badSig(signed(keypair().sk, { content: 'overflow' }));
    const text = JSON.stringify(['EVENT', bad]);
    const pausedBefore = (await workerCounter(relay, 'relay_worker_reads_paused_total')) ?? 0;
    /* Far past the lane's 64: the second REQ of the id arrives while
     * the lane is full and the first is still queued. A refusal answered
     * at once would overtake it ("CLOSED" for x, then x's EOSE). */
    const parts = [4000, 9000, 4000];
    for (let i = 0; i < parts[0]; i++) c.send(text);
    c.send(JSON.stringify(['REQ', 'x', { ids: [stored.id] }]));
    for (let i = 0; i < parts[1]; i++) c.send(text);
    c.send(JSON.stringify(['REQ', 'x', { authors: [kp.pk] }]));
    for (let i = 0; i < parts[2]; i++) c.send(text);
    const burst = parts[0] + parts[1] + parts[2];
    const answers = [];
    const frames = [];
    await until(() => {
      for (const f of c.take()) (f[0] === 'OK' && f[1] === bad.id ? answers : frames).push(f);
      return answers.length === burst && frames.filter((f) => f[0] === 'EOSE').length === 2;
    }, { timeout: 60000, what: () => `${burst} OK answers and two EOSE (have ${answers.length})` });
    assert.deepEqual(answers.filter((f) => !/^invalid: /.test(f[3])), []);
    assert.deepEqual(frames.filter((f) => f[0] !== 'EVENT' && f[0] !== 'EOSE'), []);
    assert.deepEqual(frames.map((f) => f[0] === 'EVENT' ? [f[0], f[1], f[2].id] : f),
      [['EVENT', 'x', stored.id], ['EOSE', 'x'], ['EVENT', 'x', stored.id], ['EOSE', 'x']]);
    await until(async () => (await workerCounter(relay, 'relay_worker_reads_paused_total')) > pausedBefore,
      { timeout: 5000, what: 'relay_worker_reads_paused_total up (the connection paused)' });
    assert.equal(await workerCounter(relay, 'relay_worker_lane_refused_total'), 0);
  });

  it('answers the EVENTs of connections it holds nothing of with OK false "rate-limited:", each exactly once', async () => {
    /* 150 connections, 64 EVENTs each, all at once: more than the lane
     * holds, and the later connections find it full before any of their
     * own is in it. */
    const conns = [];
    for (let i = 0; i < 150; i++) conns.push(await relay.connect());
    const bad = broken.badSig(signed(keypair().sk, { content: 'overflow' }));
    const text = JSON.stringify(['EVENT', bad]);
    const refusedBefore = (await workerCounter(relay, 'relay_worker_lane_refused_total')) ?? 0;
    /* The worker is stopped while the EVENTs reach its sockets, so it
     * reads them all in one go, far faster than one verify thread drains
     * them, however slowly this test's client sends (deflate, a busy
     * machine). */
    await relay.kill(1, 'SIGSTOP');
    try {
      for (const c of conns)
        for (let i = 0; i < 64; i++) c.send(text);
      await until(() => conns.every((c) => c.ws.bufferedAmount === 0),
        { timeout: 30000, what: 'every EVENT handed to the kernel' });
    } finally {
      await relay.kill(1, 'SIGCONT');
    }
    const answers = conns.map(() => []);
    await until(() => {
      conns.forEach((c, i) => answers[i].push(...c.take((f) => f[0] === 'OK' && f[1] === bad.id)));
      return answers.every((a) => a.length === 64);
    }, { timeout: 30000, what: () => `64 OK answers on each connection (have ${answers.map((a) => a.length).join(' ')})` });
    const all = answers.flat();
    const limited = all.filter((f) => f[2] === false && /^rate-limited: /.test(f[3]));
    const invalid = all.filter((f) => f[2] === false && /^invalid: /.test(f[3]));
    assert.ok(limited.length > 0, 'the burst never filled the lane');
    assert.equal(limited.length + invalid.length, all.length);
    for (const c of conns) assert.deepEqual(c.take((f) => f[0] === 'NOTICE'), []);
    await until(async () =>
      (await workerCounter(relay, 'relay_worker_lane_refused_total')) - refusedBefore === limited.length,
    { timeout: 5000, what: `relay_worker_lane_refused_total up by ${limited.length}` });
  });
});

/* name -> what read(tid) gives for each thread of pid named so (a list:
 * names repeat, e.g. nng's task threads). */
function threadsOf(pid, read) {
  const out = {};
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    const name = readFileSync(`/proc/${pid}/task/${tid}/comm`, 'utf8').trim();
    (out[name] ??= []).push(read(`/proc/${pid}/task/${tid}`));
  }
  return out;
}

/* nice value of a thread (proc(5): stat field 19). */
function niceOf(dir) {
  const stat = readFileSync(`${dir}/stat`, 'utf8');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]);
}

describe('verify_nice = 7', () => {
  const relay = useRelay({ workers: 1, config: { verify_threads: 2, verify_nice: 7 } });

  it('lowers the lane threads only', () => {
    const nices = threadsOf(relay.pid(1), niceOf);
    assert.deepEqual(nices.lane0, [7]);
    assert.deepEqual(nices.lane1, [7]);
    assert.deepEqual(nices.express0, [0]);
    assert.deepEqual(nices.express1, [0]);
    assert.deepEqual(nices.relayd, [0], 'the loop');
  });
});

describe('query_nice = 9', () => {
  const relay = useRelay({ workers: 1, config: { query_threads: 3, query_threads_light: 1, query_nice: 9 } });

  it('lowers the query threads not kept for cheap connections only', () => {
    const nices = threadsOf(relay.pid('stored'), niceOf);
    assert.deepEqual(nices.query, [9, 9]);
    assert.deepEqual(nices['query-light'], [0], 'the kept thread answers cheap REQs at full priority');
    assert.deepEqual(nices.rpc, [0]);
    assert.deepEqual(nices.bcast, [0]);
  });
});

/* se.slice of a thread in ns, from its sched file (null where the kernel
 * reports none, before Linux 6.6). */
function sliceOf(dir) {
  const m = /^se\.slice\s*:\s*(\d+)/m.exec(readFileSync(`${dir}/sched`, 'utf8'));
  return m ? Number(m[1]) : null;
}

/* Custom slices (sched_attr::sched_runtime for the fair class) came with Linux 6.12. */
const [major, minor] = readFileSync('/proc/sys/kernel/osrelease', 'utf8').split('.').map(Number);
const customSlices = major > 6 || (major === 6 && minor >= 12);

describe('request_slice_us = 300', { skip: !customSlices && 'the kernel has no custom slices (Linux < 6.12)' }, () => {
  const relay = useRelay({ workers: 1, config: { request_slice_us: 300 } });

  it('the request path asks for the slice, the throughput threads keep the default', async () => {
    /* The loop sets its own once the links are open, after the port is. */
    await until(() => threadsOf(relay.pid(1), sliceOf).relayd[0] === 300000,
      { timeout: 5000, interval: 50, what: "relayd's loop thread to take its slice" });
    const worker = threadsOf(relay.pid(1), sliceOf);
    const stored = threadsOf(relay.pid('stored'), sliceOf);
    for (const name of ['relayd', 'express0', 'link-reply', 'link-sub', 'nng:task', 'nng:poll:epoll'])
      assert.deepEqual([...new Set(worker[name])], [300000], `relayd ${name}`);
    for (const name of ['rpc', 'bcast', 'query', 'query-light', 'nng:task'])
      assert.deepEqual([...new Set(stored[name])], [300000], `stored ${name}`);
    assert.ok(!worker.lane0.includes(300000), 'the lane keeps the default');
    assert.ok(!stored.writer.includes(300000), 'the writer keeps the default');
    assert.ok(!stored.checkpoint.includes(300000), 'the checkpoint thread keeps the default');
  });
});
