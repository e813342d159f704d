/*
 * faults.test.mjs - the relay under overload and faults:
 *   - a client that stops reading its socket while subscribed to a
 *     firehose is dropped at max_outbound_bytes, while another subscriber
 *     keeps receiving everything promptly;
 *   - a worker that falls behind stored (stopped with SIGSTOP while events
 *     pour in) loses live deliveries on the pub/sub link, and the gap is
 *     detected by sequence number and counted in /metrics, also when the
 *     deliveries lost are the first ones after it was stopped;
 *     the stored events among the lost deliveries are sent again, each once,
 *     also to a subscription that was still waiting for its history (and
 *     held more live events than held_deliveries meanwhile), and again
 *     after a stored restart cut the replays off (before they began, or
 *     part way: what they had sent does not come twice); a history asked again
 *     after a stored restart does not bring the live events held for the
 *     first one twice;
 *   - COUNTs waiting at stored when it is killed are each closed error:;
 *   - stored's query pool: CLOSED past query_queue_max, query_queue_per_conn
 *     and query_time_limit_ms (and the subscription unfiled); a client
 *     flooding COUNTs holds another's REQ back by one COUNT, not all of them
 *     (turns), one connection's heavy COUNTs hold one query thread at a time,
 *     and one thread stays for cheap clients while two connections' heavy
 *     COUNTs run;
 *   - a restarted worker counts no gap when nothing was lost: stored numbers
 *     each worker's deliveries from 1 again after its HELLO;
 *   - a stored that stops answering (SIGSTOP) while its link stays up: the
 *     worker answers a waiting EVENT error: itself after store_timeout_ms,
 *     and a waiting REQ and COUNT after answer_timeout_ms, once each, and
 *     stored forgets the subscription; a REQ waiting while stored is away
 *     longer than answer_timeout_ms is asked again and answered.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { useRelay, until, sleep, PAUSABLE } from './lib/relay.mjs';
import { metricValue } from './lib/metrics.mjs';
import { keypair, signed } from './lib/client.mjs';

/* 1,300 notes of kp, signed before any timing starts (signing them takes
 * node a second or two). */
function notesOf(kp) {
  const events = [];
  for (let i = 0; i < 1300; i++) events.push(signed(kp.sk, { kind: 1, content: `n${i}` }));
  return events;
}

/* Publishes events from pub while worker n is stopped, and returns them
 * once all are acknowledged and the worker runs again. */
async function burstWhileStopped(relay, n, pub, events) {
  await relay.kill(n, 'SIGSTOP');
  try {
    for (const ev of events) pub.send(['EVENT', ev]);
    for (const ev of events) assert.equal((await pub.okFor(ev.id, { timeout: 20000 })).ok, true);
  } finally {
    await relay.kill(n, 'SIGCONT');
  }
  return events;
}

/* /metrics once worker n has reported at least frames frames sent: then
 * stored also has the gaps it counted on the way to them. */
async function metricsOnceReported(relay, n, frames) {
  let text = '';
  await until(async () => {
    text = (await relay.httpGet('/metrics')).body;
    return metricValue(text, `relay_worker_messages_out_total{worker="${n}"}`) >= frames;
  }, { timeout: 5000, interval: 200, what: `worker ${n} to report its frames` });
  return text;
}

/* 3,000 notes that holdQueryThread's COUNTs read over and over. */
async function preloadForCounts(pub) {
  const bulk = keypair();
  const preload = [];
  for (let i = 0; i < 3000; i++)
    preload.push(signed(bulk.sk, { kind: 1, content: `p${i}`, created_at: 1700000000 + i }));
  for (const ev of preload) pub.send(['EVENT', ev]);
  for (const ev of preload) assert.equal((await pub.okFor(ev.id, { timeout: 20000 })).ok, true);
}

/* The tests of heavy COUNTs, but for the one about query_time_limit_ms,
 * lift that limit.  It counts wall time, the query threads are niced, and
 * on a loaded machine one COUNT (0.25 s here) ran past the 3 s default. */
const NO_TIME_LIMIT = { query_time_limit_ms: 600000 };

/* 400 filters that each match all the preloaded notes: a COUNT with them
 * reads the notes 400 times over (about 0.25 s here). */
function heavyCountFilters() {
  const filters = [];
  for (let i = 0; i < 400; i++) filters.push({ kinds: [1], since: 1700000000 + i });
  return filters;
}

/* Keeps a relay's one query thread (max_filters 400) busy with COUNTs that
 * each read the preloaded notes 400 times over (about 0.25 s here), until
 * release() is called.  stored serves its query queue one connection at a
 * time, in turn (stored/turnqueue.h), so a job queued behind them waits for
 * one COUNT of each connection that has one queued: depth connections of
 * worker 1 each keep two COUNTs at stored, one running or queued and the
 * next queued, topped up every 50 ms.  A job queued once this resolves so
 * waits for about depth x 0.25 s.  release() returns how many were still
 * unanswered (more than 0 means the thread was busy all along); the rest
 * still run, unless stored is killed.  conns are the COUNTs' connections. */
async function holdQueryThread(relay, depth = 8) {
  const filters = heavyCountFilters();
  const conns = [];
  for (let i = 0; i < depth; i++) conns.push(await relay.connectTo(1));
  const sent = conns.map(() => 0);
  const answered = conns.map(() => 0);
  const takeAnswers = () => conns.forEach((c, i) => {
    answered[i] += c.take((f) => f[0] === 'COUNT' || f[0] === 'CLOSED').length;
  });
  let timer = null;
  const topUp = () => {
    if (conns.some((c) => c.ws.readyState !== c.ws.OPEN)) {
      clearInterval(timer); /* the test ended without release() */
      return;
    }
    takeAnswers();
    conns.forEach((c, i) => {
      while (sent[i] - answered[i] < 2) c.send(['COUNT', `busy${sent[i]++}`, ...filters]);
    });
  };
  topUp();
  timer = setInterval(topUp, 50);
  timer.unref(); /* never what keeps the test process alive */
  /* Queued at stored, not only sent: worker 1 parses them first, and a
   * request sent sooner through worker 2 could pass them. */
  await until(async () => JSON.parse((await relay.relayctl('stats', '--json')).stdout)
    .query_queue_senders >= depth - 1, { timeout: 10000, interval: 20,
    what: 'the COUNTs queued at stored' });
  return {
    conns,
    release() {
      clearInterval(timer);
      takeAnswers();
      return conns.reduce((n, c, i) => n + sent[i] - answered[i], 0);
    },
  };
}

/* Deep enough to hold a job for ~8 s: for the tests that kill stored at
 * release(), so that the COUNTs left cost nothing, and that must not see
 * the held job run early even on a slow sanitizer build. */
const HOLD_UNTIL_KILL = 32;

/* Waits until stored has registered n subscriptions (a REQ's history may
 * still be waiting). */
async function untilRegistered(relay, n) {
  await until(async () => JSON.parse((await relay.relayctl('stats', '--json')).stdout)
    .subscriptions >= n, { timeout: 5000, interval: 20, what: 'stored to register the REQ' });
}

/* A subscriber on worker 2 whose REQ ("notes", kp's notes) stored has
 * registered but whose history waits behind holdQueryThread's COUNTs, sent
 * by connections of their own on worker 1; pub is a publisher on worker 1.
 * Sign what is to be published before: while node signs, it tops up no
 * COUNT. */
async function heldBackSubscription(relay, kp) {
  const pub = await relay.connectTo(1);
  await preloadForCounts(pub);
  const hold = await holdQueryThread(relay);
  const sub = await relay.connectTo(2);
  sub.send(['REQ', 'notes', { kinds: [1], authors: [kp.pk] }]);
  await untilRegistered(relay, 1);
  return { pub, hold, sub };
}

/* The history of a heldBackSubscription: it ends, and it is empty (kp
 * published nothing before the REQ).  It waits behind up to 16 heavy
 * COUNTs, which took over 20 s with two unit suites on both cores: the
 * 60 s are a guard against a hang. */
async function assertEmptyHistory(sub, subid) {
  const history = await sub.collect(subid, { timeout: 60000 });
  assert.equal(history.eose, true);
  assert.equal(history.events.length, 0, 'the history predates the burst');
}

/* Waits until sub has every one of events under subid (counting the
 * frames already taken from it in earlier), then checks that none came
 * twice and nothing else came. */
async function assertEachOnce(sub, subid, events, earlier = []) {
  const want = new Set(events.map((e) => e.id));
  const seen = new Map();
  const takeSome = (frames = sub.take((m) => m[0] === 'EVENT' && m[1] === subid)) => {
    for (const f of frames)
      seen.set(f[2].id, (seen.get(f[2].id) || 0) + 1);
  };
  takeSome(earlier);
  await until(() => {
    takeSome();
    return [...want].every((id) => seen.has(id));
  }, { timeout: 20000, interval: 200,
    what: () => `all ${want.size} events at the subscriber (has ${seen.size})` });
  await sleep(300); /* a duplicate would arrive by now */
  takeSome();
  const twice = [...seen].filter(([, n]) => n > 1);
  /* Which ones, by their place in events (publish order), for a failure
   * that does not come back on demand. */
  const at = twice.map(([id]) => events.findIndex((e) => e.id === id)).sort((a, b) => a - b);
  assert.equal(twice.length, 0, `${twice.length} events delivered more than once, at places ` +
    `${at.slice(0, 20).join(' ')}${at.length > 20 ? ' …' : ''} of ${events.length}`);
  assert.equal(seen.size, want.size);
}

describe('a slow reader', () => {
  const relay = useRelay({ workers: 1, config: { max_outbound_bytes: 65536 } });

  it('is disconnected at its outbound cap; other subscribers keep up', async () => {
    const kp = keypair();
    const slow = await relay.connect();
    const fast = await relay.connect();
    const pub = await relay.connect();
    assert.equal((await slow.req('fire', { kinds: [1], limit: 0 })).eose, true);
    assert.equal((await fast.req('fire', { kinds: [1], limit: 0 })).eose, true);
    slow.ws._socket.pause(); /* stops reading: the kernel buffers fill, then the relay's queue */
    const ids = [];
    /* In step: fast reads each event before the next is published, so it
     * never has more than one (under the cap) queued, however busy the
     * machine; slow has them all queued and must be cut. */
    for (let i = 0; i < 120; i++) {
      /* Random hex: it keeps ~30 KB per event when deflate is negotiated. */
      const ev = signed(kp.sk, { content: `${i} ${randomBytes(30000).toString('hex')}` });
      ids.push(ev.id);
      assert.equal((await pub.publish(ev)).ok, true);
      await fast.liveEvent('fire', ev.id, { timeout: 5000 });
    }
    slow.ws._socket.resume();
    await slow.waitClosed({ timeout: 5000 });
    const got = slow.take((f) => f[0] === 'EVENT').length;
    assert.ok(got < ids.length, `the slow reader received all ${got} events instead of being cut off`);
  });
});

describe('a worker that falls behind stored', () => {
  const relay = useRelay({ workers: 2, config: { ...PAUSABLE, deliver_queue: 16 } });

  it('loses deliveries, and the gap is counted', async () => {
    const kp = keypair();
    const sub = await relay.connectTo(2);
    const pub = await relay.connectTo(1);
    assert.equal((await sub.req('eph', { kinds: [20001] })).eose, true);
    await relay.kill(2, 'SIGSTOP');
    try {
      const events = [];
      for (let i = 0; i < 1300; i++) events.push(signed(kp.sk, { kind: 20001, content: `e${i}` }));
      for (const ev of events) pub.send(['EVENT', ev]);
      await pub.okFor(events[events.length - 1].id, { timeout: 20000 });
    } finally {
      await relay.kill(2, 'SIGCONT');
    }
    /* A worker sees a gap when a message arrives after the hole: if every
     * message after the first few was dropped while it was stopped, only
     * the next event shows it.  So each poll publishes one more. */
    let gaps;
    let nudge = 0;
    let seen = '';
    await until(async () => {
      gaps = metricValue((await relay.httpGet('/metrics')).body, 'relay_worker_deliver_gaps_total{worker="2"}');
      if (gaps > 0) return true;
      pub.send(['EVENT', signed(kp.sk, { kind: 20001, content: `nudge${nudge++}` })]);
      /* What stored last heard from each worker, for the message if this
       * times out.  It did, 1 run in 30-50, until a loss of the *first*
       * deliveries was counted (bench/RESULTS.md, finding 6). */
      seen = (await relay.relayctl('workers')).stdout.trim();
      return false;
    }, { timeout: 15000, interval: 300, what: () => `a deliver gap counted for worker 2 (after ${nudge} nudges; ${seen})` });
    assert.ok(gaps > 0);
    /* The worker is healthy again: a new event reaches the subscriber. */
    await sleep(500);
    const after = signed(kp.sk, { kind: 20001, content: 'after' });
    sub.take(() => true);
    assert.equal((await pub.publish(after)).ok, true);
    await sub.liveEvent('eph', after.id, { timeout: 5000 });
  });

  it('sends the stored events it lost again, each once', async () => {
    const kp = keypair();
    const sub = await relay.connectTo(2);
    const pub = await relay.connectTo(1);
    assert.equal((await sub.req('notes', { kinds: [1], authors: [kp.pk] })).eose, true);
    const replaysBefore = metricValue((await relay.httpGet('/metrics')).body,
      'relay_deliver_replays_total');
    const events = await burstWhileStopped(relay, 2, pub, notesOf(kp));
    /* A loss at the end of the burst shows only with a later delivery. */
    const closing = signed(kp.sk, { kind: 1, content: 'closing' });
    events.push(closing);
    assert.equal((await pub.publish(closing)).ok, true);
    await assertEachOnce(sub, 'notes', events);
    /* Whether any were lost depends on timing; if some were, stored was
     * asked for them (one replay per live subscription of worker 2). */
    const text = await metricsOnceReported(relay, 2, 1302);
    const gaps = metricValue(text, 'relay_worker_deliver_gaps_total{worker="2"}');
    const replays = metricValue(text, 'relay_deliver_replays_total') - replaysBefore;
    console.log(`# falls behind: ${gaps} deliveries counted lost in all, ${replays} replays`);
    if (gaps > 0) assert.ok(replays > 0, 'deliveries were lost and none was asked for again');
  });
});

describe('a worker that falls behind stored, with private kinds', () => {
  const relay = useRelay({ workers: 2, config: { ...PAUSABLE, deliver_queue: 16, private_kinds: '4', auth_challenge: 'connect' } });

  it("sends its reader's lost direct messages again, each once", async () => {
    const alice = keypair();
    const bob = keypair();
    const sub = await relay.connectTo(2);
    await until(() => sub.challenge !== null, { timeout: 3000, what: 'a challenge' });
    const auth = signed(bob.sk, { kind: 22242, tags: [['relay', relay.url], ['challenge', sub.challenge]] });
    sub.send(['AUTH', auth]);
    assert.equal((await sub.okFor(auth.id)).ok, true);
    assert.equal((await sub.req('dms', { kinds: [4], '#p': [bob.pk] })).eose, true);
    const dms = [];
    for (let i = 0; i < 1300; i++) dms.push(signed(alice.sk, { kind: 4, tags: [['p', bob.pk]], content: `c${i}` }));
    const pub = await relay.connectTo(1);
    const events = await burstWhileStopped(relay, 2, pub, dms);
    const closing = signed(alice.sk, { kind: 4, tags: [['p', bob.pk]], content: 'closing' });
    events.push(closing);
    assert.equal((await pub.publish(closing)).ok, true);
    /* The replay names no reader: stored must leave the check to the
     * worker, not drop every private event from it. */
    await assertEachOnce(sub, 'dms', events);
    const text = await metricsOnceReported(relay, 2, 1302);
    console.log(`# private, falls behind: ${metricValue(text, 'relay_worker_deliver_gaps_total{worker="2"}')} deliveries counted lost`);
  });
});

describe('a subscription waiting for its history while its worker falls behind', () => {
  /* One query thread, kept busy by COUNTs that each read the preloaded
   * events 400 times over, holds the subscription's history back. */
  const relay = useRelay({ workers: 2, config: { ...PAUSABLE, ...NO_TIME_LIMIT, deliver_queue: 16, query_threads: 1,
    max_filters: 400, reqs_per_second: 0 } });

  it('gets the stored events lost meanwhile once it is live, each once', async () => {
    const kp = keypair();
    const notes = notesOf(kp);
    const { pub, hold, sub } = await heldBackSubscription(relay, kp);
    const events = await burstWhileStopped(relay, 2, pub, notes);
    /* The query thread is still on the COUNTs, so the worker takes the
     * burst's deliveries (and sees their loss) before the history ends. */
    assert.ok(hold.release() > 0, 'the query thread was idle before the worker resumed');
    const closing = signed(kp.sk, { kind: 1, content: 'closing' });
    events.push(closing);
    assert.equal((await pub.publish(closing)).ok, true);
    await assertEmptyHistory(sub, 'notes');
    await assertEachOnce(sub, 'notes', events);
    const text = await metricsOnceReported(relay, 2, 1302);
    console.log(`# waiting for its history: ${metricValue(text,
      'relay_worker_deliver_gaps_total{worker="2"}')} deliveries counted lost`);
  });
});

describe('a subscription whose history takes longer than held_deliveries live events', () => {
  const relay = useRelay({ workers: 2, config: { ...NO_TIME_LIMIT, held_deliveries: 50, query_threads: 1,
    max_filters: 400, reqs_per_second: 0 } });

  it('gets the ones past the cap from the database after its EOSE, each once', async () => {
    const kp = keypair();
    const events = [];
    for (let i = 0; i < 300; i++) events.push(signed(kp.sk, { kind: 1, content: `h${i}` }));
    const { pub, hold, sub } = await heldBackSubscription(relay, kp);
    for (const ev of events) pub.send(['EVENT', ev]);
    for (const ev of events) assert.equal((await pub.okFor(ev.id, { timeout: 20000 })).ok, true);
    assert.ok(hold.release() > 0, 'the query thread was idle before the burst was stored');
    await assertEmptyHistory(sub, 'notes');
    await assertEachOnce(sub, 'notes', events);
  });
});

describe('a subscription waiting for its history when stored restarts', () => {
  const relay = useRelay({ workers: 2, config: { ...NO_TIME_LIMIT, query_threads: 1, max_filters: 400,
    reqs_per_second: 0 } });

  it('gets the events it held live once, from the history asked again', async () => {
    const kp = keypair();
    const events = [];
    for (let i = 0; i < 50; i++) events.push(signed(kp.sk, { kind: 1, content: `r${i}` }));
    const pub = await relay.connectTo(1);
    /* Live on the same worker: once it has an event, so has the worker. */
    const watcher = await relay.connectTo(2);
    assert.equal((await watcher.req('w', { kinds: [1], authors: [kp.pk] })).eose, true);
    await preloadForCounts(pub);
    const hold = await holdQueryThread(relay, HOLD_UNTIL_KILL);
    const sub = await relay.connectTo(2);
    sub.send(['REQ', 'notes', { kinds: [1], authors: [kp.pk] }]);
    await untilRegistered(relay, 2);
    for (const ev of events) pub.send(['EVENT', ev]);
    for (const ev of events) assert.equal((await pub.okFor(ev.id, { timeout: 20000 })).ok, true);
    for (const ev of events) await watcher.liveEvent('w', ev.id, { timeout: 5000 });
    assert.equal(sub.take((m) => m[0] === 'EVENT' || m[0] === 'EOSE').length, 0,
      'the history waits, and the live events with it');
    assert.ok(hold.release() > 0, 'the query thread was idle before stored was killed');
    await relay.kill('stored', 'SIGKILL');
    await relay.restartStored();
    /* The worker asks for the history again, and stored now has the held
     * events in it: they must not also be sent as held live events. */
    await assertEachOnce(sub, 'notes', events);
  });
});

/* Preloads the notes, then sends sent heavy COUNTs (q0, q1, …) on busy,
 * a connection of worker 1, and waits for the first answer that refused
 * matches.  other is a second client of worker 1. */
async function countsPastABound(relay, sent, refused) {
  const pub = await relay.connectTo(1);
  const busy = await relay.connectTo(1);
  const other = await relay.connectTo(1);
  await preloadForCounts(pub);
  const filters = heavyCountFilters();
  for (let i = 0; i < sent; i++) busy.send(['COUNT', `q${i}`, ...filters]);
  const first = await busy.waitFor(refused, { timeout: 20000, what: 'a COUNT refused' });
  return { busy, other, first };
}

/* Every one of countsPastABound's COUNTs gets exactly one answer, counted
 * or refused (first is the refusal taken already), and 1 to maxCounted of
 * them are counted. */
async function assertEachCountAnsweredOnce(busy, first, sent, maxCounted) {
  const answers = new Map([[first[1], ['CLOSED']]]);
  await until(() => {
    for (const m of busy.take((f) => f[0] === 'COUNT' || f[0] === 'CLOSED'))
      answers.set(m[1], [...(answers.get(m[1]) || []), m[0]]);
    return answers.size >= sent;
  }, { timeout: 20000, interval: 20, what: 'an answer to every COUNT' });
  const counted = [...answers.values()].filter((a) => a[0] === 'COUNT').length;
  assert.ok(counted >= 1 && counted <= maxCounted, `${counted} counted of ${sent}`);
  for (const [id, a] of answers) assert.equal(a.length, 1, `${id} answered ${a}`);
}

describe('COUNTs waiting at stored when it is killed', () => {
  const relay = useRelay({ workers: 2, config: { ...NO_TIME_LIMIT, query_threads: 1, max_filters: 400,
    reqs_per_second: 0 } });

  it('are each closed with error: at once, and COUNT works again after the restart', async () => {
    const pub = await relay.connectTo(1);
    const counter = await relay.connectTo(2);
    await preloadForCounts(pub);
    const hold = await holdQueryThread(relay, HOLD_UNTIL_KILL);
    counter.send(['COUNT', 'c', { kinds: [1] }]);
    /* The COUNT reached stored's queue: a REQ after it on the same worker
     * is registered, and its history waits behind it. */
    counter.send(['REQ', 'after', { kinds: [7] }]);
    await untilRegistered(relay, 1);
    const waiting = hold.release();
    assert.ok(waiting > 0, 'the query thread was idle before stored was killed');
    await relay.kill('stored', 'SIGKILL');
    /* stored is down: the worker closes what stored will never answer,
     * without waiting for it to come back. */
    const closed = await counter.waitFor((m) => m[1] === 'c', { timeout: 5000,
      what: 'an answer to the COUNT' });
    assert.equal(closed[0], 'CLOSED');
    assert.match(closed[2], /^error: /);
    let busyClosed = 0;
    await until(() => {
      for (const c of hold.conns)
        busyClosed += c.take((m) => m[0] === 'CLOSED' && /^error: storage restarted/.test(m[2]))
          .length;
      return busyClosed >= waiting;
    }, { timeout: 5000, interval: 20, what: 'a CLOSED for every COUNT left at stored' });
    await relay.restartStored();
    assert.deepEqual(await counter.waitFor((m) => m[0] === 'COUNT' || m[1] === 'c',
      { timeout: 1000 }).catch(() => null), null, 'the closed COUNT was answered again');
    counter.send(['COUNT', 'c2', { kinds: [1] }]);
    const again = await counter.waitFor((m) => m[1] === 'c2', { timeout: 20000 });
    assert.deepEqual(again, ['COUNT', 'c2', { count: 3000 }]);
  });
});

describe('a full query queue', () => {
  const relay = useRelay({ workers: 1, config: { ...NO_TIME_LIMIT, query_threads: 1, query_queue_max: 4,
    max_filters: 400, reqs_per_second: 0 } });

  it('refuses a COUNT or REQ past query_queue_max with CLOSED error:, and answers the rest',
    async () => {
      const sent = 12;
      const { busy, other, first } = await countsPastABound(relay, sent,
        (m) => m[0] === 'CLOSED' && m[2] === 'error: the relay is overloaded, retry');
      /* One running and four waiting, each reading 1.2M rows: the queue is
       * still full. */
      other.send(['REQ', 'r', { kinds: [1], limit: 1 }]);
      const req = await other.waitFor((m) => m[1] === 'r', { timeout: 20000 });
      assert.deepEqual(req, ['CLOSED', 'r', 'error: the relay is overloaded, retry']);
      /* One ran and at most four waited. */
      await assertEachCountAnsweredOnce(busy, first, sent, 5);
      /* With the queue free again, a REQ is answered. */
      assert.equal((await other.req('r2', { kinds: [1], limit: 1 })).eose, true);
      /* stored keeps r2 and nothing of the refused r, which it had filed
       * before its history was refused (the worker unfiles it). */
      await until(async () =>
        metricValue((await relay.httpGet('/metrics')).body, 'relay_subscriptions') === 1,
      { timeout: 5000, what: 'relay_subscriptions = 1 (r2 only)' });
    });
});

describe('a history past query_time_limit_ms', () => {
  const relay = useRelay({ workers: 1, config: { query_time_limit_ms: 10, max_filters: 400,
    reqs_per_second: 0 } });

  it('is CLOSED error:, and stored forgets the subscription it had filed', async () => {
    const c = await relay.connect();
    await preloadForCounts(c);
    const r = await c.req('slow', ...heavyCountFilters());
    assert.equal(r.eose, false);
    assert.match(r.closed ?? '', /^error: the query took too long/);
    /* The connection stays open: unfiled only by the worker's SUB_CLOSE. */
    await until(async () =>
      metricValue((await relay.httpGet('/metrics')).body, 'relay_subscriptions') === 0,
    { timeout: 5000, what: 'relay_subscriptions = 0' });
    assert.equal((await c.req('quick', { kinds: [1], limit: 1 })).eose, true);
  });
});

describe("one connection's bound on its queued queries", () => {
  const relay = useRelay({ workers: 1, config: { ...NO_TIME_LIMIT, query_threads: 1, query_queue_per_conn: 3,
    max_filters: 400, reqs_per_second: 0 } });

  it('refuses that connection past query_queue_per_conn with CLOSED rate-limited:, and no one else',
    async () => {
      const sent = 10;
      const { busy, other, first } = await countsPastABound(relay, sent,
        (m) => m[0] === 'CLOSED' && /^rate-limited: /.test(m[2]));
      /* busy's COUNTs still wait (one running, three queued), and another
       * client's REQ is served, not refused. */
      assert.equal((await other.req('r', { kinds: [1], limit: 1 })).eose, true);
      /* One ran and at most three waited. */
      await assertEachCountAnsweredOnce(busy, first, sent, 4);
    });
});

describe('a client that floods the query thread with COUNTs', () => {
  const relay = useRelay({ workers: 1, config: { ...NO_TIME_LIMIT, query_threads: 1, max_filters: 400,
    reqs_per_second: 0 } });

  it("holds another client's REQ back by one COUNT, not by all of them", async () => {
    const pub = await relay.connectTo(1);
    const flood = await relay.connectTo(1);
    const other = await relay.connectTo(1);
    await preloadForCounts(pub);
    const filters = heavyCountFilters();
    const sent = 16;
    for (let i = 0; i < sent; i++) flood.send(['COUNT', `f${i}`, ...filters]);
    await until(async () => JSON.parse((await relay.relayctl('stats', '--json')).stdout)
      .query_queue >= sent - 2, { timeout: 10000, interval: 20, what: 'the flood queued at stored' });
    /* The order is the check; the 60 s are a guard: the query thread is
     * niced, and a loaded machine once took over 5 s for one COUNT. */
    other.send(['REQ', 'cheap', { kinds: [1], limit: 1 }]);
    assert.equal((await other.collect('cheap', { timeout: 60000 })).eose, true);
    const before = flood.take((m) => m[0] === 'COUNT' || m[0] === 'CLOSED');
    /* A first-come queue would answer all 16 first (about 4 s of work). */
    assert.ok(before.length <= 2, `${before.length} of the ${sent} COUNTs came before the EOSE`);
    /* The flood is still answered in full, in the order sent. */
    const all = [...before];
    await until(() => {
      all.push(...flood.take((m) => m[0] === 'COUNT' || m[0] === 'CLOSED'));
      return all.length >= sent;
    }, { timeout: 30000, interval: 20, what: 'every COUNT of the flood answered' });
    assert.deepEqual(all.map((m) => m[1]), Array.from({ length: sent }, (_, i) => `f${i}`));
    assert.ok(all.every((m) => m[0] === 'COUNT' && m[2].count === 3000));
  });
});

describe("one connection's heavy COUNTs", () => {
  /* Two query threads; query_threads_per_conn is 1 by default. */
  const relay = useRelay({ workers: 1, config: { ...NO_TIME_LIMIT, query_threads: 2, max_filters: 400,
    reqs_per_second: 0 } });

  it('hold one query thread at a time, and leave the other to another client', async () => {
    const pub = await relay.connectTo(1);
    const flood = await relay.connectTo(1);
    const other = await relay.connectTo(1);
    await preloadForCounts(pub);
    const filters = heavyCountFilters();
    const sent = 8;
    for (let i = 0; i < sent; i++) flood.send(['COUNT', `f${i}`, ...filters]);
    const stats = async () => JSON.parse((await relay.relayctl('stats', '--json')).stdout);
    /* Every COUNT at stored, one of them running: the second thread stays
     * idle with seven of the flood's jobs queued (without the bound both
     * threads take one, and query_running is 2). */
    const all = [];
    const answers = () => flood.take((m) => m[0] === 'COUNT' || m[0] === 'CLOSED');
    let seen;
    await until(async () => {
      seen = await stats();
      all.push(...answers());
      return seen.query_running + seen.query_queue + all.length >= sent;
    }, { timeout: 10000, interval: 20, what: 'the flood at stored' });
    for (let i = 0; i < 5 && seen.query_queue > 0; i++, seen = await stats())
      assert.equal(seen.query_running, 1, `${JSON.stringify(seen)}: the flood holds both threads`);
    assert.equal((await other.req('cheap', { kinds: [1], limit: 1 })).eose, true);
    /* The flood is answered in full, in the order sent. */
    await until(() => {
      all.push(...answers());
      return all.length >= sent;
    }, { timeout: 30000, interval: 20, what: 'every COUNT of the flood answered' });
    assert.deepEqual(all.map((m) => m[1]), Array.from({ length: sent }, (_, i) => `f${i}`));
    assert.ok(all.every((m) => m[0] === 'COUNT' && m[2].count === 3000));
    assert.equal((await stats()).query_running, 0);
  });
});

describe("two connections' heavy COUNTs", () => {
  /* Two query threads, one of them kept for connections known to be cheap
   * (query_threads_light is 1 by default); a COUNT here costs far more
   * than query_heavy_ms (10 ms) of CPU, a REQ for one note far less. */
  const relay = useRelay({ workers: 1, config: { ...NO_TIME_LIMIT, query_threads: 2, max_filters: 400,
    reqs_per_second: 0 } });

  it('run on one thread, and leave the other to a client known cheap', async () => {
    const pub = await relay.connectTo(1);
    const floods = [await relay.connectTo(1), await relay.connectTo(1)];
    const cheap = await relay.connectTo(1);
    await preloadForCounts(pub);
    const stats = async () => JSON.parse((await relay.relayctl('stats', '--json')).stdout);
    assert.equal((await cheap.req('before', { kinds: [1], limit: 1 })).eose, true);
    await until(async () => (await stats()).query_cheap_conns >= 1,
      { timeout: 5000, interval: 20, what: 'the cheap client known cheap' });
    const filters = heavyCountFilters();
    const sent = 5;
    for (let i = 0; i < sent; i++)
      for (const [f, flood] of floods.entries()) flood.send(['COUNT', `f${f}-${i}`, ...filters]);
    const answers = floods.map(() => []);
    const take = () => floods.forEach((flood, f) =>
      answers[f].push(...flood.take((m) => m[0] === 'COUNT' || m[0] === 'CLOSED')));
    /* New connections, then heavy ones: their jobs hold one thread at a
     * time (both would run, query_running 2, without the kept thread). */
    let seen;
    await until(async () => (seen = await stats()).query_queue > 0,
      { timeout: 10000, interval: 20, what: 'the floods queued at stored' });
    let checked = 0;
    for (; seen.query_queue > 0 && checked < 8; seen = await stats(), checked++) {
      take();
      assert.ok(seen.query_running <= 1, `${JSON.stringify(seen)}: the floods hold both threads`);
    }
    /* The kept thread answers the cheap client, and a newcomer is answered
     * in its turn with the floods. */
    assert.equal((await cheap.req('during', { kinds: [1], limit: 1 })).eose, true);
    const newcomer = await relay.connectTo(1);
    newcomer.send(['REQ', 'new', { kinds: [1], limit: 1 }]);
    assert.equal((await newcomer.collect('new', { timeout: 20000 })).eose, true);
    await until(() => {
      take();
      return answers.flat().length >= 2 * sent;
    }, { timeout: 30000, interval: 20, what: 'every COUNT of the floods answered' });
    for (const [f, got] of answers.entries()) {
      assert.deepEqual(got.map((m) => m[1]), Array.from({ length: sent }, (_, i) => `f${f}-${i}`));
      assert.ok(got.every((m) => m[0] === 'COUNT' && m[2].count === 3000));
    }
    const end = await stats();
    assert.equal(end.query_running, 0);
    assert.equal(end.query_heavy_conns, 2);
    assert.ok(end.query_heavy_jobs >= 2 * sent, `${end.query_heavy_jobs} heavy jobs counted`);
    /* The same on /metrics (published once a second). */
    await until(async () => {
      const body = (await relay.httpGet('/metrics')).body;
      return metricValue(body, 'relay_query_heavy_jobs_total') >= 2 * sent &&
        metricValue(body, 'relay_query_heavy_connections') === 2;
    }, { timeout: 5000, interval: 100, what: 'the heavy jobs and connections on /metrics' });
  });
});

describe('replays that a stored restart cut off', () => {
  const relay = useRelay({ workers: 2, config: { ...PAUSABLE, ...NO_TIME_LIMIT, deliver_queue: 16, query_threads: 1,
    max_filters: 400, reqs_per_second: 0 } });

  it('are asked again after the resume, and every lost event arrives once', async () => {
    const kp = keypair();
    const pub = await relay.connectTo(1);
    const sub = await relay.connectTo(2);
    assert.equal((await sub.req('notes', { kinds: [1], authors: [kp.pk] })).eose, true);
    await preloadForCounts(pub);
    const notes = notesOf(kp);
    const hold = await holdQueryThread(relay, HOLD_UNTIL_KILL);
    const events = await burstWhileStopped(relay, 2, pub, notes);
    const closing = signed(kp.sk, { kind: 1, content: 'closing' });
    events.push(closing);
    assert.equal((await pub.publish(closing)).ok, true);
    /* The worker saw the loss and asked; the replays wait behind the COUNTs. */
    await until(async () => JSON.parse((await relay.relayctl('stats', '--json')).stdout)
      .deliver_replays >= 1, { timeout: 5000, interval: 20, what: 'a replay at stored' });
    assert.ok(hold.release() > 0, 'the query thread was idle before stored was killed');
    await relay.kill('stored', 'SIGKILL');
    await relay.restartStored();
    await assertEachOnce(sub, 'notes', events);
  });
});

describe('a replay that a stored restart cut off part way', () => {
  /* One lost range, and a known one: the deliveries past held_deliveries
   * while the history waits, asked for in one replay once it is live. */
  const relay = useRelay({ workers: 2, config: { ...PAUSABLE, ...NO_TIME_LIMIT, held_deliveries: 50, query_threads: 1,
    max_filters: 400, reqs_per_second: 0 } });

  it('is asked again, and the events it had sent do not come twice', async () => {
    const kp = keypair();
    /* 16 KB notes: stored sends a replay in chunks of 256 KiB, 16 of them
     * each, as it reads them. */
    const pad = 'x'.repeat(16000);
    const events = [];
    for (let i = 0; i < 300; i++) events.push(signed(kp.sk, { kind: 1, content: `n${i} ${pad}` }));
    /* 399 more filters for the same notes: a replay reads its commits once
     * per filter, so it goes on after the first filter's chunks left. */
    const filters = [{ kinds: [1], authors: [kp.pk] }];
    for (let i = 1; i < 400; i++) filters.push({ kinds: [1], authors: [kp.pk], since: i });
    const pub = await relay.connectTo(1);
    await preloadForCounts(pub);
    const hold = await holdQueryThread(relay);
    const sub = await relay.connectTo(2);
    sub.send(['REQ', 'notes', ...filters]);
    await untilRegistered(relay, 1);
    for (const ev of events) pub.send(['EVENT', ev]);
    for (const ev of events) assert.equal((await pub.okFor(ev.id, { timeout: 20000 })).ok, true);
    assert.ok(hold.release() > 0, 'the query thread was idle before the events were stored');
    await assertEmptyHistory(sub, 'notes');
    /* 50 held, then the replay's chunks: stop stored at the first of them,
     * while it reads the commits for the other filters. */
    const isNote = (m) => m[0] === 'EVENT' && m[1] === 'notes';
    const earlier = [];
    while (earlier.length <= 50)
      earlier.push(await sub.waitFor(isNote, { timeout: 15000, what: 'a replayed event' }));
    await relay.kill('stored', 'SIGSTOP');
    earlier.push(...sub.take(isNote));
    assert.ok(earlier.length < events.length,
      'the replay was answered before stored was stopped: nothing was cut off');
    console.log(`# cut off: ${earlier.length - 50} of 250 replayed events had arrived when stored stopped`);
    await relay.kill('stored', 'SIGKILL');
    await relay.restartStored();
    await assertEachOnce(sub, 'notes', events, earlier);
  });
});

describe('a restarted worker', () => {
  const relay = useRelay({ workers: 2 });

  it('counts no deliver gap when nothing was lost (stored numbers its deliveries afresh)', async () => {
    const kp = keypair();
    const pub = await relay.connectTo(1);
    const first = await relay.connectTo(2);
    assert.equal((await first.req('live', { kinds: [20002] })).eose, true);
    for (let i = 0; i < 20; i++) {
      const ev = signed(kp.sk, { kind: 20002, content: `before ${i}` });
      assert.equal((await pub.publish(ev)).ok, true);
      await first.liveEvent('live', ev.id, { timeout: 5000 });
    }
    await relay.kill(2, 'SIGKILL');
    await relay.restartWorker(2);
    const again = await relay.connectTo(2);
    assert.equal((await again.req('live', { kinds: [20002] })).eose, true);
    for (let i = 0; i < 5; i++) {
      const ev = signed(kp.sk, { kind: 20002, content: `after ${i}` });
      assert.equal((await pub.publish(ev)).ok, true);
      await again.liveEvent('live', ev.id, { timeout: 5000 });
    }
    /* Once stored has the report covering those frames (EOSE and five
     * EVENTs), it also has the gaps counted on the way to them. */
    const text = await metricsOnceReported(relay, 2, 6);
    assert.equal(metricValue(text, 'relay_worker_deliver_gaps_total{worker="2"}'), 0);
  });
});

describe('a stored that stops answering', () => {
  const relay = useRelay({ workers: 1, config: { ...PAUSABLE, store_timeout_ms: 1000, answer_timeout_ms: 2500 } });

  it('has the worker answer an EVENT, then a REQ and a COUNT error: after their timeouts, once each',
    async () => {
      const kp = keypair();
      const c = await relay.connect();
      const kept = await c.mustPublish(signed(kp.sk, { kind: 1, content: 'kept' }));
      const late = signed(kp.sk, { kind: 1, content: 'late' });
      const mine = { kinds: [1], authors: [kp.pk] };
      const timedOut = /^error: storage did not answer in time/;
      const took = {};
      /* The link stays up (the process is only stopped), so nothing but
       * the worker's own deadlines can answer these. */
      await relay.kill('stored', 'SIGSTOP');
      try {
        const sent = Date.now();
        c.send(['REQ', 'h', mine]);
        c.send(['COUNT', 'n', mine]);
        c.send(['EVENT', late]);
        const ok = await c.okFor(late.id, { timeout: 5000 });
        took.event = Date.now() - sent;
        assert.equal(ok.ok, false);
        assert.match(ok.message, timedOut);
        const h = await c.collect('h', { timeout: 5000 });
        took.req = Date.now() - sent;
        assert.deepEqual(h, { events: [], eose: false, closed: h.closed });
        assert.match(h.closed, timedOut);
        const n = await c.waitFor((m) => m[1] === 'n', { timeout: 5000, what: 'an answer to COUNT n' });
        took.count = Date.now() - sent;
        assert.equal(n[0], 'CLOSED');
        assert.match(n[2], timedOut);
      } finally {
        await relay.kill('stored', 'SIGCONT');
      }
      /* Each by its own timeout (checked once a second). */
      assert.ok(took.event >= 900 && took.event < 2400, `the EVENT answered after ${took.event} ms`);
      assert.ok(took.req >= 2400, `the REQ closed after ${took.req} ms, before answer_timeout_ms`);
      assert.ok(took.count >= 2400, `the COUNT closed after ${took.count} ms, before answer_timeout_ms`);
      /* stored now takes what was sent to it while it was stopped and
       * answers all three: the worker drops those answers. */
      await sleep(1500);
      assert.deepEqual(c.take((m) => m[1] === 'h' || m[1] === 'n' || m[1] === late.id), []);
      /* The worker unfiled the subscription it closed (asked of stored
       * itself, not of a snapshot). */
      await until(async () => JSON.parse((await relay.relayctl('--json', 'subs')).stdout).total === 0,
        { timeout: 5000, what: 'no subscription filed at stored' });
      await until(async () => metricValue((await relay.httpGet('/metrics')).body,
        'relay_worker_store_timeouts_total{worker="1"}') === 3,
      { timeout: 5000, what: 'relay_worker_store_timeouts_total = 3' });
      /* As the README says of such an EVENT: it may still have been
       * committed, and publishing it again says so. */
      const again = await c.req('again', mine);
      assert.deepEqual(again.events.map((e) => e.id).sort(), [kept.id, late.id].sort());
      const dup = await c.publish(late);
      assert.equal(dup.ok, true);
      assert.match(dup.message, /^duplicate:/);
    });

  it('keeps a REQ waiting while stored is away for longer than answer_timeout_ms, and answers it',
    async () => {
      const kp = keypair();
      const c = await relay.connect();
      const kept = await c.mustPublish(signed(kp.sk, { kind: 1, content: 'kept' }));
      /* Stopped, so the REQ waits; then killed, so the link drops before
       * answer_timeout_ms has passed. */
      await relay.kill('stored', 'SIGSTOP');
      c.send(['REQ', 'w', { kinds: [1], authors: [kp.pk] }]);
      await sleep(300);
      await relay.kill('stored', 'SIGKILL');
      await sleep(4000);
      await relay.restartStored();
      /* Asked again once stored is back, with a deadline of its own. */
      const w = await c.collect('w', { timeout: 10000 });
      assert.deepEqual(w, { events: [kept], eose: true, closed: null });
    });
});
