/*
 * search-index.test.mjs - NIP-50's index is written behind the events, in
 * batches of its own, by stored's indexer thread into search.db
 * (stored/search_index.h), and no search may notice:
 *   - with the batches put off for ten minutes, an event acknowledged a
 *     moment ago is still found by REQ, by COUNT and by relayctl's export
 *     and delete --dry-run, because each waits for the index first;
 *   - the admin socket's stats (and /metrics, as relay_search_index_lag)
 *     show the events waiting, and show them gone once a search needed them;
 *     /metrics gives search.db's size as relay_search_db_bytes;
 *   - after a SIGKILL of stored with text not yet indexed, the restarted
 *     stored still finds every acknowledged event, indexing them from the
 *     database (nothing was kept only in memory);
 *   - a database kept with search = 0 has its history indexed once stored
 *     restarts with search = 1, and search = 0 removes the index file;
 *   - the index is search.db, a file of its own: deleted (or damaged) while
 *     stored is stopped, it is built again from the events.
 * nip50.test.mjs covers what searches find with the default delay.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { existsSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { configText, itStopsCleanly, useRelay, until } from './lib/relay.mjs';
import { keypair, signed } from './lib/client.mjs';
import { metricValue } from './lib/metrics.mjs';

function word() {
  return 'w' + [...randomBytes(8)].map((b) => String.fromCharCode(97 + (b % 26))).join('');
}

const sorted = (ids) => [...ids].sort();

describe('search index written in batches', () => {
  /* Nothing but a search (or a restart) makes the writer index. */
  const relay = useRelay({
    workers: 2,
    config: { search_index_delay_ms: 600000, search_index_batch: 1000000, private_kinds: '' },
  });

  /* Read live from the admin socket (/metrics is refreshed each second). */
  async function lag() {
    const r = await relay.relayctl('--json', 'stats');
    assert.equal(r.code, 0, r.stderr);
    return JSON.parse(r.stdout).search_index_lag;
  }

  async function search(c, filter) {
    const r = await c.req(`s${Math.random()}`, filter);
    assert.equal(r.closed, null, `REQ was closed: ${r.closed}`);
    return r.events.map((e) => e.id);
  }

  it('a search right after the OK finds the event: it waits for the index', async () => {
    const { sk } = keypair();
    const w = word();
    const pub = await relay.connectTo(1);
    const reader = await relay.connectTo(2);
    const ids = [];
    for (let i = 0; i < 5; i++) ids.push((await pub.mustPublish(signed(sk, { content: `${w} note ${i}` }))).id);
    assert.ok((await lag()) >= 5, 'the text was indexed before any search asked for it');

    assert.deepEqual(sorted(await search(reader, { search: w })), sorted(ids));
    assert.equal(await lag(), 0);
    await until(async () => metricValue((await relay.httpGet('/metrics')).body, 'relay_search_index_lag') === 0,
      { timeout: 3000, interval: 100, what: 'relay_search_index_lag 0 on /metrics' });
    assert.ok(metricValue((await relay.httpGet('/metrics')).body, 'relay_search_db_bytes') > 0,
      'relay_search_db_bytes: the size of search.db');

    const more = (await pub.mustPublish(signed(sk, { content: `${w} and one more` }))).id;
    assert.equal((await reader.count('c', { search: w })).count, 6);
    assert.deepEqual(await search(reader, { search: `${w} more` }), [more]);
  });

  it('relayctl export, delete --dry-run and delete wait for the index too', async () => {
    const { sk, pk } = keypair();
    const w = word();
    const c = await relay.connect();
    const ev = await c.mustPublish(signed(sk, { content: `exported ${w}` }));
    assert.ok((await lag()) >= 1);
    const r = await relay.relayctl('export', JSON.stringify({ search: w }));
    assert.equal(r.code, 0, r.stderr);
    const lines = r.stdout.split('\n').filter((l) => l.length > 0);
    assert.deepEqual(lines.map((l) => JSON.parse(l).id), [ev.id]);

    const later = await c.mustPublish(signed(sk, { content: `counted ${w}` }));
    const dry = await relay.relayctl('--json', 'delete', JSON.stringify({ search: w, authors: [pk] }), '--dry-run');
    assert.equal(dry.code, 0, dry.stderr);
    assert.deepEqual(JSON.parse(dry.stdout), { dry_run: true, matched: 2 });
    assert.ok(later.id);

    /* The real delete runs on the writer, which attaches search.db for it
     * alone: twice in a row (the first detached it), with commits between. */
    const third = await c.mustPublish(signed(sk, { content: `third ${w}` }));
    const del = await relay.relayctl('--json', 'delete', JSON.stringify({ search: `counted ${w}` }));
    assert.equal(del.code, 0, del.stderr);
    assert.equal(JSON.parse(del.stdout).deleted, 1);
    assert.deepEqual(sorted(await search(c, { search: w })), sorted([ev.id, third.id]));
    await c.mustPublish(signed(sk, { content: `after the delete ${w}` }));
    const again = await relay.relayctl('--json', 'delete', JSON.stringify({ search: w, authors: [pk] }));
    assert.equal(again.code, 0, again.stderr);
    assert.equal(JSON.parse(again.stdout).deleted, 3);
    assert.deepEqual(await search(c, { search: w }), []);
  });

  it('text not yet indexed when stored is killed is indexed after its restart', async () => {
    const { sk } = keypair();
    const w = word();
    const pub = await relay.connect();
    const ids = [];
    for (let i = 0; i < 3; i++) ids.push((await pub.mustPublish(signed(sk, { content: `${w} before the crash ${i}` }))).id);
    assert.ok((await lag()) >= 3);

    const exit = await relay.kill('stored', 'SIGKILL');
    assert.equal(exit.signal, 'SIGKILL');
    await relay.restartStored();
    /* The restarted writer finds them unindexed in the database. */
    await until(async () => (await lag().catch(() => undefined)) >= 3,
      { timeout: 5000, interval: 100, what: 'the restarted stored to report its backlog' });

    const reader = await relay.connect();
    await until(async () => {
      const r = await reader.req(`s${Math.random()}`, { search: w });
      return r.closed === null && r.events.length === 3;
    }, { timeout: 5000, interval: 100, what: 'a search to find the events after the restart' });
    assert.deepEqual(sorted(await search(reader, { search: w })), sorted(ids));
    assert.equal(await lag(), 0);
  });

  itStopsCleanly(relay);
});

describe('search turned on for a database kept without it', () => {
  const relay = useRelay({ workers: 1, config: { search: 0, private_kinds: '' } });

  it('search = 0 keeps no index file', () => {
    assert.equal(existsSync(join(relay.dataDir, 'relay.db')), true);
    assert.equal(existsSync(join(relay.dataDir, 'search.db')), false);
  });

  it('indexes the events stored while it was off', async () => {
    const { sk, pk } = keypair();
    const w = word();
    const c = await relay.connect();
    const ids = [];
    for (let i = 0; i < 3; i++) ids.push((await c.mustPublish(signed(sk, { content: `${w} kept while off ${i}` }))).id);
    const off = await c.req('off', { search: w });
    assert.deepEqual(off.events, [], 'search = 0 serves no search results');
    /* A COUNT too: its search filter counts nothing, the others still count. */
    const counted = await c.count('n', { authors: [pk] }, { search: w });
    assert.equal(counted.count, 3, JSON.stringify(counted));
    assert.equal((await c.count('s', { search: w })).count, 0);

    await relay.kill('stored', 'SIGTERM', { wait: true });
    writeFileSync(relay.configPath, configText({ ...relay.config, search: 1 }));
    await relay.restartStored();
    await until(async () => {
      const r = await c.req(`on${Math.random()}`, { search: w });
      return r.closed === null && r.events.length === 3;
    }, { timeout: 5000, interval: 100, what: 'a search to find the events stored while search was off' });
    const r = await c.req('on', { search: w });
    assert.deepEqual(r.events.map((e) => e.id).sort(), [...ids].sort());
    assert.equal(existsSync(join(relay.dataDir, 'search.db')), true);
  });

  it('a search.db deleted or damaged while stored is stopped is built again', async () => {
    const { sk } = keypair();
    const w = word();
    const c = await relay.connect();
    const ids = [];
    for (let i = 0; i < 3; i++) ids.push((await c.mustPublish(signed(sk, { content: `${w} rebuilt ${i}` }))).id);
    assert.equal((await c.req('before', { search: w })).events.length, 3);

    for (const damage of ['delete', 'garbage']) {
      await relay.kill('stored', 'SIGTERM', { wait: true });
      const index = join(relay.dataDir, 'search.db');
      for (const suffix of ['', '-wal', '-shm']) rmSync(index + suffix, { force: true });
      if (damage === 'garbage') writeFileSync(index, 'not an SQLite database '.repeat(400));
      await relay.restartStored();
      await until(async () => {
        const r = await c.req(`after-${damage}${Math.random()}`, { search: w });
        return r.closed === null && r.events.length === 3;
      }, { timeout: 5000, interval: 100, what: `a search to find the events after: ${damage}` });
      const r = await c.req(`after-${damage}`, { search: w });
      assert.deepEqual(r.events.map((e) => e.id).sort(), [...ids].sort(), `after: ${damage}`);
    }
  });

  it('search = 0 again removes the index file', async () => {
    await relay.kill('stored', 'SIGTERM', { wait: true });
    writeFileSync(relay.configPath, configText({ ...relay.config, search: 0 }));
    await relay.restartStored();
    assert.equal(existsSync(join(relay.dataDir, 'search.db')), false);
  });
});
