/*
 * admin.test.mjs - stored's admin socket through relayctl and stock nngcat:
 * every command (stats, workers, subs, config, checkpoint, vacuum, delete
 * with its dry run, ban/unban/bans, export, import, backup) in --json and
 * readable form, the errors, an export -> import round trip into a second
 * relay, and a backup taken during ingest served by a second relay.
 *
 * The relay is shared by the tests in order; each test uses its own
 * authors, so counts are exact.  Import feeds relayctl's stdin (the harness'
 * relay.relayctl() has no stdin), through relayctlWith() below.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { Relay, useRelay, itStopsCleanly, run, until, relayctlInput as relayctlWith } from './lib/relay.mjs';
import { keypair, signed, broken, now } from './lib/client.mjs';

const NNGCAT = '/usr/bin/nngcat';

/* relayctl --json COMMAND ARGS, asserted to succeed; the parsed reply. */
async function ctlJson(relay, ...args) {
  const r = await relay.relayctl('--json', ...args);
  assert.equal(r.code, 0, `relayctl ${args.join(' ')}: ${r.stderr}`);
  return JSON.parse(r.stdout);
}

/* relayctl COMMAND ARGS (readable), asserted to succeed; its stdout. */
async function ctlText(relay, ...args) {
  const r = await relay.relayctl(...args);
  assert.equal(r.code, 0, `relayctl ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
}

function nngcat(relay, data) {
  const url = `ipc://${join(relay.runDir, 'stored-admin.ipc')}`;
  return run(NNGCAT, ['--req', '--dial', url, '--data', data, '--ascii'], { cwd: relay.dir });
}

async function publishAll(conn, events) {
  for (const ev of events) await conn.mustPublish(ev);
  return events;
}

const exportLines = (stdout) => stdout.split('\n').filter((l) => l.length > 0);

describe('admin socket and relayctl', () => {
  const relay = useRelay({ workers: 2 });

  it('stats: events, sizes, rates, rejects and every worker', async () => {
    const c = await relay.connect();
    const { sk } = keypair();
    const before = await ctlJson(relay, 'stats');
    const [first] = await publishAll(c, [signed(sk, { content: 'a' }), signed(sk, { content: 'b' })]);
    const dup = await c.publish(first);
    assert.deepEqual([dup.ok, dup.message.split(':')[0]], [true, 'duplicate']);
    assert.equal((await c.req('s', { limit: 1 })).eose, true);

    const s = await ctlJson(relay, 'stats');
    assert.equal(s.events, before.events + 2);
    for (const k of ['db_bytes', 'wal_bytes', 'search_db_bytes', 'ingest_rate', 'query_rate', 'uptime_seconds'])
      assert.equal(typeof s[k], 'number', `${k} in ${JSON.stringify(s)}`);
    assert.ok(s.db_bytes + s.wal_bytes > 0);
    assert.ok(s.search_db_bytes > 0, 'search = 1 keeps search.db');
    assert.equal(s.rejects.duplicate, before.rejects.duplicate + 1);
    for (const k of ['duplicate', 'blocked', 'error']) assert.equal(typeof s.rejects[k], 'number');
    /* the ingest rate is sampled once a second: two events within 10 s */
    await until(async () => (await ctlJson(relay, 'stats')).ingest_rate > 0,
      { timeout: 5000, what: 'a non-zero ingest_rate' });
    assert.equal(s.worker_list.length, 2);
    for (const w of s.worker_list) {
      assert.equal(w.pid, relay.pid(w.worker));
      for (const k of ['uptime_seconds', 'connections', 'subscriptions', 'messages_in',
        'messages_out', 'deliver_gaps', 'events_rejected', 'reads_paused', 'lane_refused', 'requests_on_loop',
        'listener_restarts', 'unmasked_closed', 'store_timeouts', 'too_big_closed', 'pings_sent',
        'ping_timeouts'])
        assert.equal(typeof w[k], 'number', `worker ${w.worker} ${k}`);
    }

    const text = await ctlText(relay, 'stats');
    assert.match(text, /^events +\d+$/m);
    assert.match(text, /^ingest_rate +[\d.]+$/m);
    assert.match(text, /^rejects:\n {2}duplicate +\d+$/m);
    assert.match(text, new RegExp(`^worker 1: pid ${relay.pid(1)}, up \\d+ s`, 'm'));
    assert.match(text, /^worker 1: .*, \d+ reads paused, \d+ lane-refused, \d+ deliver gaps, \d+ listener restarts, \d+ store timeouts, \d+ closed too big, \d+ pings sent, \d+ ping timeouts$/m);
  });

  it('stock nngcat gets JSON for a bare word and for {"cmd": ...}', async () => {
    for (const data of ['stats', '{"cmd":"stats"}']) {
      const r = await nngcat(relay, data);
      assert.equal(r.code, 0, r.stderr);
      const s = JSON.parse(r.stdout);
      assert.equal(typeof s.events, 'number', r.stdout);
      assert.equal(s.worker_list.length, 2);
    }
    const w = JSON.parse((await nngcat(relay, '{"cmd":"workers"}')).stdout);
    assert.deepEqual(w.worker_list.map((x) => x.worker).sort(), [1, 2]);
    const bad = JSON.parse((await nngcat(relay, 'bogus')).stdout);
    assert.match(bad.error, /unknown command 'bogus'/);
  });

  it('workers: pid and counters per worker', async () => {
    const w = await ctlJson(relay, 'workers');
    assert.deepEqual(w.worker_list.map((x) => [x.worker, x.pid]).sort(),
      [[1, relay.pid(1)], [2, relay.pid(2)]]);
    const text = await ctlText(relay, 'workers');
    assert.match(text, new RegExp(`^worker 2: pid ${relay.pid(2)}, up \\d+ s, \\d+ connections`, 'm'));
  });

  it('subs: a client\'s open REQ with its worker, connection, id and filters', async () => {
    const c = await relay.connectTo(2);
    const { pk } = keypair();
    const filters = [{ kinds: [1, 7], '#t': ['x', 'a"b'], since: 5 }, { authors: [pk], limit: 3 }];
    assert.equal((await c.req('watch-me', ...filters)).eose, true);
    const subs = await until(async () => {
      const r = await ctlJson(relay, 'subs');
      return r.subscriptions.some((s) => s.sub_id === 'watch-me') && r;
    }, { what: 'the REQ in the subs listing' });
    const mine = subs.subscriptions.filter((s) => s.sub_id === 'watch-me');
    assert.equal(mine.length, 1);
    assert.equal(mine[0].worker, 2);
    assert.equal(typeof mine[0].conn_id, 'number');
    assert.deepEqual(mine[0].filters, filters);
    assert.equal(subs.truncated, false);
    assert.ok(subs.total >= 1);
    const text = await ctlText(relay, 'subs');
    assert.match(text, /^worker 2 {2}conn \d+ {2}sub "watch-me" {2}\[\{"kinds":\[1,7\]/m);
    assert.match(text, /^\d+ subscriptions$/m);

    /* bounded: "subs 0" lists none and says the listing was truncated */
    const none = await ctlJson(relay, 'subs', '0');
    assert.deepEqual([none.listed, none.truncated], [0, true]);

    c.closeSub('watch-me');
    await until(async () => !(await ctlJson(relay, 'subs')).subscriptions.some((s) => s.sub_id === 'watch-me'),
      { what: 'the closed REQ to leave the listing' });
  });

  it('config: the running configuration as JSON and as a config file', async () => {
    const { config } = await ctlJson(relay, 'config');
    assert.equal(config.port, relay.port);
    assert.equal(config.run_dir, relay.runDir);
    assert.equal(config.workers, 2);
    assert.equal(config.max_limit, 500);
    const text = await ctlText(relay, 'config');
    assert.match(text, new RegExp(`^port = ${relay.port}$`, 'm'));
    assert.match(text, /^db_synchronous = full$/m);
  });

  it('checkpoint and vacuum run on the writer and report sizes', async () => {
    const c = await relay.connect();
    const { sk } = keypair();
    await publishAll(c, [signed(sk, { content: 'wal 1' }), signed(sk, { content: 'wal 2' })]);
    const cp = await ctlJson(relay, 'checkpoint');
    for (const k of ['wal_bytes_before', 'db_bytes', 'wal_bytes'])
      assert.equal(typeof cp[k], 'number', `${k} in ${JSON.stringify(cp)}`);
    assert.equal(typeof cp.busy, 'boolean');
    assert.ok(cp.wal_bytes_before > 0, JSON.stringify(cp));
    if (!cp.busy) assert.equal(cp.wal_bytes, 0, JSON.stringify(cp));
    assert.match(await ctlText(relay, 'checkpoint'), /^checkpointed: WAL \d+ bytes -> \d+ bytes; database \d+ bytes$/m);

    const v = await ctlJson(relay, 'vacuum');
    assert.ok(v.db_bytes_before > 0 && v.db_bytes > 0, JSON.stringify(v));
    assert.match(await ctlText(relay, 'vacuum'), /^vacuumed: database \d+ bytes -> \d+ bytes/m);
    /* the relay still serves and stores after both */
    await c.mustPublish(signed(sk, { content: 'after vacuum' }));
    assert.equal((await c.req('after', { authors: [keypair().pk] })).eose, true);
  });

  it('delete: the dry-run count equals what is then deleted', async () => {
    const c = await relay.connect();
    const a = keypair();
    const b = keypair();
    const events = [];
    for (let i = 0; i < 6; i++) events.push(signed(a.sk, { kind: i % 2 ? 1 : 7, content: `a${i}` }));
    events.push(signed(a.sk, { kind: 30023, tags: [['d', 'art']], content: 'addressable' }));
    for (let i = 0; i < 3; i++) events.push(signed(b.sk, { kind: 7, content: `b${i}` }));
    await publishAll(c, events);

    /* two filters OR'ed: a's kind 7 and b's everything (each event once) */
    const filter = JSON.stringify([{ authors: [a.pk], kinds: [7] }, { authors: [b.pk] }]);
    const dry = await ctlJson(relay, 'delete', filter, '--dry-run');
    assert.deepEqual(dry, { dry_run: true, matched: 6 });
    assert.match(await ctlText(relay, 'delete', filter, '--dry-run'),
      /^6 events match \(dry run: nothing deleted\)$/m);
    assert.equal((await c.req('still', { authors: [a.pk, b.pk] })).events.length, 10);

    const done = await ctlJson(relay, 'delete', filter);
    assert.equal(done.deleted, dry.matched);
    const left = await c.req('left', { authors: [a.pk, b.pk] });
    assert.deepEqual(left.events.map((e) => e.kind).sort(), [1, 1, 1, 30023]);
    assert.deepEqual(await ctlJson(relay, 'delete', filter, '--dry-run'), { dry_run: true, matched: 0 });
    assert.match(await ctlText(relay, 'delete', JSON.stringify({ authors: [a.pk] })), /^deleted 4 events$/m);
    assert.equal((await c.req('gone', { authors: [a.pk] })).events.length, 0);
    /* no tombstone: a deleted event may be published again */
    await c.mustPublish(events[0]);
  });

  it('ban: later events of the pubkey are refused with blocked:, stored ones stay; unban', async () => {
    const c = await relay.connect();
    const bad = keypair();
    const kept = await c.mustPublish(signed(bad.sk, { content: 'before the ban' }));
    const r = await ctlJson(relay, 'ban', bad.pk, 'spam', 'and', 'abuse');
    assert.deepEqual([r.pubkey, r.banned, r.was_banned], [bad.pk, true, false]);
    assert.match(r.note, /kept/);

    const refused = await c.publish(signed(bad.sk, { content: 'after the ban' }));
    assert.deepEqual([refused.ok, refused.message], [false, 'blocked: this pubkey is banned']);
    const deletion = await c.publish(signed(bad.sk, { kind: 5, tags: [['e', kept.id]] }));
    assert.equal(deletion.ok, false, 'a banned author cannot delete either');
    const stored = await c.req('kept', { authors: [bad.pk] });
    assert.deepEqual(stored.events.map((e) => e.id), [kept.id]);
    const other = keypair();
    await c.mustPublish(signed(other.sk, { content: 'others are fine' }));

    const bans = await ctlJson(relay, 'bans');
    const mine = bans.bans.find((x) => x.pubkey === bad.pk);
    assert.equal(mine.reason, 'spam and abuse');
    assert.ok(Math.abs(mine.created_at - now()) < 60);
    assert.match(await ctlText(relay, 'bans'), new RegExp(`^${bad.pk} {2}\\d{4}-\\d\\d-\\d\\d .*spam and abuse$`, 'm'));
    /* banning again updates the reason */
    assert.equal((await ctlJson(relay, 'ban', bad.pk, 'still spam')).was_banned, true);
    assert.match(await ctlText(relay, 'ban', bad.pk), /relayctl delete '\{"authors":\["[0-9a-f]{64}"\]\}'/);

    assert.deepEqual(await ctlJson(relay, 'unban', bad.pk), { pubkey: bad.pk, unbanned: true });
    await c.mustPublish(signed(bad.sk, { content: 'after the unban' }));
    assert.match(await ctlText(relay, 'unban', bad.pk), /was not banned/);
    assert.ok(!(await ctlJson(relay, 'bans')).bans.some((x) => x.pubkey === bad.pk));
  });

  it('errors: bad arguments are refused with a message and a nonzero exit', async () => {
    const cases = [
      [['ban', 'not-hex'], 2, /a pubkey as 64 hex digits or npub1/],
      [['delete', '{not json'], 2, /not valid JSON/],
      [['delete', '{"kinds":"x"}'], 1, /delete: invalid: /],
      [['delete', '[]'], 1, /filter must be/],
      [['export', '[1]'], 1, /filter 0 is not an object/],
      [['nonsense'], 2, /usage: relayctl/],
      [['stats', 'extra'], 2, /usage: relayctl/],
      [['subs', 'abc'], 2, /subs takes a number of subscriptions, not 'abc'/],
      [['subs', '10x'], 2, /subs takes a number/],
    ];
    for (const [args, code, message] of cases) {
      const r = await relay.relayctl(...args);
      assert.equal(r.code, code, `${args.join(' ')}: ${r.stdout} ${r.stderr}`);
      assert.match(r.stderr, message, args.join(' '));
    }
  });

  it('export: JSONL of a filter, in commit order, exactly as served', async () => {
    const c = await relay.connect();
    const { sk, pk } = keypair();
    const events = await publishAll(c, [1, 2, 3, 4].map((i) => signed(sk, { kind: i % 2 ? 1 : 7, content: `x${i}` })));
    const r = await relay.relayctl('export', JSON.stringify({ authors: [pk] }));
    assert.equal(r.code, 0, r.stderr);
    const lines = exportLines(r.stdout);
    assert.deepEqual(lines.map((l) => JSON.parse(l).id), events.map((e) => e.id));
    assert.deepEqual(lines.map((l) => JSON.parse(l)), events);
    const kinds = exportLines((await relay.relayctl('export', JSON.stringify([{ authors: [pk], kinds: [7] }]))).stdout);
    assert.deepEqual(kinds.map((l) => JSON.parse(l).id), [events[1].id, events[3].id]);
    /* one page at a time over the socket, too */
    const page = JSON.parse((await nngcat(relay, JSON.stringify({ cmd: 'export', filter: { authors: [pk] }, limit: 3 }))).stdout);
    assert.deepEqual([page.events.length, page.more], [3, true]);
    const rest = JSON.parse((await nngcat(relay, JSON.stringify({ cmd: 'export', filter: { authors: [pk] }, after: page.last }))).stdout);
    assert.deepEqual([rest.events.map((e) => e.id), rest.more], [[events[3].id], false]);
  });

  it('export -> import into a second relay gives the same events; bad lines are reported by number', async () => {
    const c = await relay.connect();
    const { sk, pk } = keypair();
    const t = now() - 100;
    const target = signed(sk, { content: 'to be deleted', created_at: t });
    await publishAll(c, [
      signed(sk, { kind: 0, content: '{"name":"old"}', created_at: t }),
      signed(sk, { kind: 0, content: '{"name":"new"}', created_at: t + 1 }),
      signed(sk, { kind: 30023, tags: [['d', 'post']], content: 'v1', created_at: t }),
      target,
      signed(sk, { kind: 5, tags: [['e', target.id]], created_at: t + 2 }),
      signed(sk, { content: 'expires later', tags: [['expiration', String(now() + 3600)]] }),
      signed(sk, { content: 'with "quotes"\n\u00e9 and \\ backslash', tags: [['t', 'x'], ['p', pk]] }),
    ]);
    const all = await relay.relayctl('export');
    assert.equal(all.code, 0, all.stderr);
    const dump = exportLines(all.stdout);
    assert.equal(dump.length, (await ctlJson(relay, 'stats')).events);
    const mine = dump.filter((l) => JSON.parse(l).pubkey === pk);
    assert.equal(mine.length, 5, 'newest kind 0, the article, the deletion, two regular');

    const second = new Relay({ workers: 1 });
    await second.start();
    try {
      const { sk: esk } = keypair();
      const input = [
        ...dump.slice(0, 2),
        'not json at all',
        '',
        JSON.stringify({ ...signed(esk, { content: 'x' }), content: 'tampered' }),
        JSON.stringify(signed(esk, { kind: 20001, content: 'ephemeral' })),
        JSON.stringify(broken.badSig(signed(esk, { content: 'bad signature' }))),
        ...dump.slice(2),
      ].join('\n') + '\n';
      const imp = await relayctlWith(second, ['import'], input);
      assert.equal(imp.code, 0, imp.stderr);
      assert.match(imp.stderr, /^line 3: invalid: not a JSON object \(bad JSON at column 1\)$/m);
      assert.match(imp.stderr, /^line 5: invalid: id does not match/m);
      assert.match(imp.stderr, /^line 6: invalid: ephemeral events are not stored$/m);
      assert.match(imp.stderr, /^line 7: invalid: bad signature$/m);
      assert.equal(imp.stderr.trim().split('\n').length, 4, imp.stderr);
      assert.match(imp.stdout, new RegExp(`^${dump.length + 5} lines: ${dump.length} stored, 0 duplicate, 0 superseded, 0 refused, 4 invalid, 1 blank; 0 with extra fields$`, 'm'));

      const back = await second.relayctl('export');
      assert.deepEqual(exportLines(back.stdout), dump);
      /* the deletion's tombstone came along: the deleted event is refused */
      const c2 = await second.connect();
      const again = await c2.publish(target);
      assert.deepEqual([again.ok, again.message.split(':')[0]], [false, 'blocked']);
      const seen = await c2.req('imported', { authors: [pk] });
      assert.equal(seen.events.length, 5);

      /* importing again changes nothing */
      const twice = await relayctlWith(second, ['--json', 'import'], dump.join('\n'));
      assert.equal(twice.code, 0, twice.stderr);
      assert.deepEqual(JSON.parse(twice.stdout),
        { lines: dump.length, stored: 0, duplicate: dump.length, superseded: 0, refused: 0, invalid: 0, blank: 0, extra_fields: 0, complete: true });
    } finally {
      await second.stop();
    }
  });

  it('import of more than a batch and export of more than a page', async () => {
    const { sk, pk } = keypair();
    const t = now() - 5000;
    const lines = [];
    for (let i = 0; i < 1010; i++) lines.push(JSON.stringify(signed(sk, { content: `bulk ${i}`, created_at: t + i })));
    const imp = await relayctlWith(relay, ['--json', 'import'], lines.join('\n') + '\n', 60000);
    assert.equal(imp.code, 0, imp.stderr);
    assert.equal(JSON.parse(imp.stdout).stored, 1010);
    /* imported events are live: a REQ sees them at once */
    const c = await relay.connect();
    assert.equal((await c.req('bulk', { authors: [pk], limit: 500 })).events.length, 500);
    const exp = await relay.relayctl('export', JSON.stringify({ authors: [pk] }));
    assert.equal(exp.code, 0, exp.stderr);
    assert.deepEqual(exportLines(exp.stdout).map((l) => JSON.parse(l).content), lines.map((l) => JSON.parse(l).content));
    const del = await ctlJson(relay, 'delete', JSON.stringify({ authors: [pk] }));
    assert.equal(del.deleted, 1010);
  });

  it('backup: a copy taken during ingest serves every event acknowledged before it, from a second relay',
    async () => {
      const { copyFileSync, mkdirSync, mkdtempSync, rmSync } = await import('node:fs');
      const { tmpdir } = await import('node:os');
      const c = await relay.connect();
      const a = keypair();
      const before = [];
      for (let i = 0; i < 100; i++) before.push(signed(a.sk, { content: `before ${i}` }));
      await publishAll(c, before);
      /* Events keep coming while the copy is made. */
      const flood = await relay.connect();
      const b = keypair();
      const acked = [];
      let stop = false;
      const loop = (async () => {
        for (let i = 0; !stop; i++) {
          const ev = signed(b.sk, { content: `during ${i}` });
          if ((await flood.publish(ev)).ok) acked.push(ev.id);
        }
      })();
      await until(() => acked.length >= 20, { what: '20 events of the flood acknowledged' });
      const ackedBefore = acked.slice();
      /* A relative path is relayctl's: relay.dir here. */
      const r = await relay.relayctl('backup', 'copy.db');
      stop = true;
      await loop;
      assert.equal(r.code, 0, r.stderr);
      const shown = r.stdout.match(/^backup to (\S+): done, (\d+) of (\d+) pages, (\d+) events/);
      assert.ok(shown, r.stdout);
      assert.equal(shown[1], join(relay.dir, 'copy.db'));
      assert.equal(shown[2], shown[3]);
      const status = await ctlJson(relay, 'backup');
      assert.equal(status.state, 'done');
      assert.equal(status.events, Number(shown[4]));
      /* Never over a file. */
      const again = await relay.relayctl('backup', 'copy.db');
      assert.equal(again.code, 1);
      assert.match(again.stderr, /exists already/);

      const dir = mkdtempSync(join(tmpdir(), 'relay-it-copy-'));
      let restored = null;
      try {
        mkdirSync(join(dir, 'data'));
        copyFileSync(join(relay.dir, 'copy.db'), join(dir, 'data', 'relay.db'));
        restored = new Relay({ workers: 1, dir });
        await restored.start();
        const q = await restored.connect();
        const gotA = await q.req('a', { authors: [a.pk], limit: 500 });
        assert.equal(gotA.events.length, before.length);
        const gotB = new Set((await q.req('b', { authors: [b.pk], limit: 5000 })).events.map((e) => e.id));
        assert.deepEqual(ackedBefore.filter((id) => !gotB.has(id)), []);
        const stats = JSON.parse((await restored.relayctl('--json', 'stats')).stdout);
        assert.equal(stats.events, status.events);
      } finally {
        if (restored) await restored.stop();
        rmSync(dir, { recursive: true, force: true });
      }
    });

  it('the admin socket is mode 0600', async () => {
    const { statSync } = await import('node:fs');
    assert.equal(statSync(join(relay.runDir, 'stored-admin.ipc')).mode & 0o777, 0o600);
  });

  itStopsCleanly(relay);
});
