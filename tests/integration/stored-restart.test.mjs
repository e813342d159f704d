/*
 * stored-restart.test.mjs - stored can die and come back without the
 * workers' clients noticing more than a short refusal:
 *   - while stored is down, an EVENT is answered OK false "error:" (never
 *     true) and a REQ is answered CLOSED "error:" (never left hanging);
 *   - the websocket connections stay open throughout;
 *   - once stored is back, live subscriptions opened before the crash
 *     deliver again without the client doing anything, on both workers;
 *   - every event acknowledged before the crash is still served;
 *   - a live subscription gets every event committed while its worker was
 *     cut off from stored, also more than max_limit of them;
 *   - a history cut off by the restart is asked again, and the events the
 *     client already got from it do not come twice;
 *   - with 3,000 subscriptions on one worker, more than nng's send buffer
 *     holds, every one is registered again and delivers (none lost);
 *   - a worker whose link stays down dials stored afresh within a second
 *     (nng's own redialling has been seen to fall silent after a restart),
 *     says so once per outage, and is back as soon as stored is.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { useRelay, until, sleep, PAUSABLE } from './lib/relay.mjs';
import { keypair, signed } from './lib/client.mjs';

const author = keypair();

describe('stored restart', () => {
  const relay = useRelay({ workers: 2 });

  it('SIGKILL of stored: errors during the gap, subscriptions resume after', async () => {
    const watch1 = await relay.connectTo(1);
    const watch2 = await relay.connectTo(2);
    const pub = await relay.connect();
    const acked = [];
    for (let i = 0; i < 20; i++) acked.push((await pub.mustPublish(signed(author.sk, { content: `before #${i}` }))).id);
    for (const w of [watch1, watch2]) {
      const r = await w.req('live', { authors: [author.pk], limit: 0 });
      assert.equal(r.eose, true);
    }

    const exit = await relay.kill('stored', 'SIGKILL');
    assert.equal(exit.signal, 'SIGKILL');

    /* During the gap: explicit refusals, connections stay open. */
    const gap = signed(author.sk, { content: 'during the gap' });
    const ok = await pub.publish(gap);
    assert.equal(ok.ok, false, `an event was acknowledged while stored was down: ${JSON.stringify(ok)}`);
    assert.match(ok.message, /^error: /);
    const refused = await pub.req('gap', { authors: [author.pk] });
    assert.equal(refused.eose, false);
    assert.match(refused.closed ?? '', /^error: /);

    await relay.restartStored();

    /* Live delivery resumes on both workers without new REQs. */
    let after;
    await until(async () => {
      const r = await pub.publish(signed(author.sk, { content: 'after the restart' }));
      if (r.ok === true) after = r.id;
      return r.ok === true;
    }, { timeout: 5000, interval: 100, what: 'an EVENT accepted after stored came back' });
    await watch1.liveEvent('live', after, { timeout: 5000 });
    await watch2.liveEvent('live', after, { timeout: 5000 });

    /* Nothing acknowledged was lost. */
    const all = await pub.req('all', { authors: [author.pk], limit: 500 });
    const have = new Set(all.events.map((e) => e.id));
    assert.deepEqual(acked.filter((id) => !have.has(id)), []);
    assert.ok(have.has(after));
  });
});

/* A worker re-registers every subscription after stored comes back, far
 * more than nng's send buffer (1024 messages) holds at once: the rest wait
 * in the worker's backlog (relayd/backlog.h) instead of being lost. */
describe('stored restart with 3,000 subscriptions on one worker', () => {
  const SUBS = 3000;
  const relay = useRelay({
    workers: 1,
    config: { max_subscriptions: SUBS, query_queue_per_conn: 2 * SUBS, query_queue_max: 4 * SUBS },
  });

  it('every subscription delivers again, none is lost or closed', async () => {
    const { sk, pk } = keypair();
    const c = await relay.connect();
    /* Opened in steps of 500, so the REQs themselves never queue. */
    for (let from = 0; from < SUBS; from += 500) {
      for (let i = from; i < from + 500; i++) c.send(['REQ', `s${i}`, { authors: [pk], limit: 0 }]);
      let eose = 0;
      await until(() => {
        const frames = c.take((f) => f[0] === 'EOSE' || f[0] === 'CLOSED');
        assert.deepEqual(frames.filter((f) => f[0] === 'CLOSED'), []);
        eose += frames.length;
        return eose === 500;
      }, { timeout: 20000, what: () => `500 EOSE (have ${eose})` });
    }
    await relay.kill('stored', 'SIGKILL');
    await relay.restartStored();
    const pub = await relay.connect();
    let ev;
    await until(async () => {
      ev = signed(sk, { content: 'after the restart' });
      return (await pub.publish(ev)).ok === true;
    }, { timeout: 10000, interval: 100, what: 'an EVENT accepted after stored came back' });
    const got = new Set();
    await until(() => {
      for (const f of c.take((x) => x[0] === 'EVENT' && x[2].id === ev.id)) got.add(f[1]);
      return got.size === SUBS;
    }, { timeout: 30000, what: () => `the event on all ${SUBS} subscriptions (have ${got.size})` });
    assert.deepEqual(c.take((f) => f[0] === 'CLOSED'), []);
  });
});

/* With db_synchronous = normal the WAL is not synced at commit, and the
 * writer's WAL buffer (stored/walbuf.h) holds a commit's pages until its
 * commit frame is written: a SIGKILL right after a stream of OKs must
 * still find every acknowledged event, whole, after the restart. */
describe('stored restart with db_synchronous = normal', () => {
  const relay = useRelay({ workers: 1, config: { db_synchronous: 'normal' } });

  it('SIGKILL of stored loses nothing acknowledged', async () => {
    const { sk, pk } = keypair();
    const pub = await relay.connect();
    const sent = [];
    /* Many in flight at once, so commits hold several events each. */
    for (let i = 0; i < 300; i++) sent.push(signed(sk, { content: `normal mode #${i} ${'x'.repeat(i % 7 * 100)}` }));
    const oks = await Promise.all(sent.map((ev) => pub.publish(ev)));
    assert.deepEqual(oks.filter((ok) => ok.ok !== true), []);

    const exit = await relay.kill('stored', 'SIGKILL');
    assert.equal(exit.signal, 'SIGKILL');
    await relay.restartStored();

    let all;
    await until(async () => {
      all = await pub.req(`all${Math.random()}`, { authors: [pk], limit: 500 });
      return all.closed === null && all.eose;
    }, { timeout: 5000, interval: 100, what: 'a REQ answered after the restart' });
    assert.deepEqual(all.events.map((e) => e.id).sort(), sent.map((e) => e.id).sort());
    const byId = new Map(sent.map((e) => [e.id, e]));
    for (const e of all.events) assert.deepEqual(e, byId.get(e.id));
  });
});

describe('stored away for a while', () => {
  const relay = useRelay({ workers: 1 });

  it('the worker dials afresh within a second, warns once, and is back with stored', async () => {
    const { sk } = keypair();
    const worker = relay.relayd[1];
    const from = worker.log.length;
    const killed = Date.now();
    await relay.kill('stored', 'SIGKILL');
    await until(() => /dialing again/.test(worker.log.slice(from)),
      { timeout: 1800, interval: 20, what: 'the worker to give its link fresh dialers' });
    const firstRedialMs = Date.now() - killed;
    assert.ok(firstRedialMs < 1800, `first fresh dial after ${firstRedialMs} ms`);

    /* Two more fresh dials happen meanwhile; the operator is told once. */
    await sleep(1700);
    assert.equal(worker.log.slice(from).match(/dialing again/g).length, 1, worker.log.slice(from));

    await relay.restartStored();
    const pub = await relay.connect();
    await until(async () => (await pub.publish(signed(sk, { content: 'back' }))).ok === true,
      { timeout: 3000, interval: 50, what: 'an EVENT accepted once stored is back' });
  });
});

describe('a worker cut off while stored restarts', () => {
  const relay = useRelay({ workers: 2, config: { ...PAUSABLE, max_limit: 100 } });

  it('resumes its live subscriptions with every event it missed, past max_limit', async () => {
    const kp = keypair();
    const events = [];
    for (let i = 0; i < 300; i++) events.push(signed(kp.sk, { content: `missed #${i}` }));
    const sub = await relay.connectTo(2);
    assert.equal((await sub.req('live', { authors: [kp.pk] })).eose, true);
    const pub = await relay.connectTo(1);
    /* Worker 2 stays stopped until stored is back and 300 events are
     * committed without it: it learns of them only from its resume. */
    await relay.kill(2, 'SIGSTOP');
    try {
      await relay.kill('stored', 'SIGKILL');
      await relay.restartStored();
      await until(async () => (await pub.publish(events[0])).ok === true,
        { timeout: 5000, interval: 100, what: 'worker 1 storing again' });
      for (const ev of events.slice(1)) pub.send(['EVENT', ev]);
      for (const ev of events.slice(1))
        assert.equal((await pub.okFor(ev.id, { timeout: 20000 })).ok, true);
    } finally {
      await relay.kill(2, 'SIGCONT');
    }
    const seen = new Map();
    await until(() => {
      for (const f of sub.take((m) => m[0] === 'EVENT' && m[1] === 'live'))
        seen.set(f[2].id, (seen.get(f[2].id) || 0) + 1);
      return seen.size === events.length;
    }, { timeout: 20000, interval: 200,
      what: () => `all ${events.length} events at the subscriber (has ${seen.size})` });
    await sleep(300);
    for (const f of sub.take((m) => m[0] === 'EVENT' && m[1] === 'live'))
      seen.set(f[2].id, (seen.get(f[2].id) || 0) + 1);
    assert.deepEqual([...seen.values()].filter((n) => n > 1), [], 'events delivered twice');
    for (const ev of events) assert.ok(seen.has(ev.id), `missing ${ev.id}`);
  });
});

describe('a history cut off by a stored restart', () => {
  const relay = useRelay({ workers: 1, config: { ...PAUSABLE, query_threads: 1, max_filters: 400,
    reqs_per_second: 0 } });

  it('is asked again, and the events the client already got do not come twice', async () => {
    const kp = keypair();
    const bulk = keypair();
    const pub = await relay.connect();
    const notes = [];
    for (let i = 0; i < 300; i++) notes.push(signed(kp.sk, { kind: 1, content: `c${i}` }));
    const older = [];
    for (let i = 0; i < 3000; i++)
      older.push(signed(bulk.sk, { kind: 1, content: `o${i}`, created_at: 1700000000 + i }));
    for (const ev of [...notes, ...older]) pub.send(['EVENT', ev]);
    for (const ev of [...notes, ...older])
      assert.equal((await pub.okFor(ev.id, { timeout: 20000 })).ok, true);
    /* The first filter's 300 notes fill stored's first chunk (256 events),
     * which is sent at once; the other 399 each read the 500 newest kind-1
     * notes again (the 300 and the 200 newest older ones; each found once,
     * sent once), which keeps stored busy for a while after the first
     * chunk left. */
    const filters = [{ kinds: [1], authors: [kp.pk] }];
    for (let i = 1; i < 400; i++) filters.push({ kinds: [1], since: 1700000000 + i });
    const want = [...notes, ...older.slice(2800)].map((e) => e.id);
    const sub = await relay.connect();
    sub.send(['REQ', 'h', ...filters]);
    const first = await sub.waitFor((m) => m[0] === 'EVENT' && m[1] === 'h',
      { timeout: 10000, what: "the history's first chunk" });
    await relay.kill('stored', 'SIGSTOP');
    const early = [first, ...sub.take((m) => m[0] === 'EVENT' && m[1] === 'h')];
    assert.equal(sub.take((m) => m[0] === 'EOSE').length, 0,
      'the history ended before stored was stopped: nothing was cut off');
    await relay.kill('stored', 'SIGKILL');
    await relay.restartStored();
    /* A bound, not a speed: under the sanitizers on a busy machine the
     * 400 filters took over 20 s after the restart. */
    const rest = await sub.collect('h', { timeout: 90000 });
    assert.equal(rest.eose, true);
    const seen = new Map();
    for (const ev of [...early.map((m) => m[2]), ...rest.events])
      seen.set(ev.id, (seen.get(ev.id) || 0) + 1);
    const twice = [...seen].filter(([, n]) => n > 1).length;
    assert.equal(twice, 0, `${twice} events came twice (${early.length} had arrived when stored` +
      ' was stopped)');
    assert.deepEqual([...seen.keys()].sort(), [...want].sort());
  });
});
