/*
 * relayctl import never loses a line silently (issue 32): every line is
 * judged on its own and a bad one is reported by number with its reason
 * while the import goes on; a FILE argument, a UTF-8 BOM and CRLF; events
 * annotated with fields beyond NIP-01's seven; the superseded count; an
 * import request without relayctl's "verified" mark is still checked by
 * stored; and export saying it ignores a filter's limit.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { useRelay, itStopsCleanly, run, relayctlInput as relayctl } from './lib/relay.mjs';
import { keypair, signed, now } from './lib/client.mjs';

async function importJson(relay, args, input) {
  const r = await relayctl(relay, ['--json', 'import', ...args], input);
  assert.equal(r.code, 0, r.stderr);
  return { ...r, summary: JSON.parse(r.stdout) };
}

/* The ids stored for pk, by export. */
async function storedIds(relay, pk) {
  const r = await relayctl(relay, ['export', JSON.stringify({ authors: [pk] })]);
  assert.equal(r.code, 0, r.stderr);
  return r.stdout.split('\n').filter((l) => l).map((l) => JSON.parse(l).id);
}

const counts = (o) => ({ lines: 0, stored: 0, duplicate: 0, superseded: 0, refused: 0, invalid: 0, blank: 0, extra_fields: 0, complete: true, ...o });

describe('relayctl import', () => {
  const relay = useRelay({ workers: 1 });

  it('judges every line alone: 2,000 lines with three broken ones store the 1,997 good events', async () => {
    const { sk, pk } = keypair();
    const t = now() - 10000;
    const events = Array.from({ length: 2000 }, (_, i) => signed(sk, { content: `line ${i + 1}`, created_at: t + i }));
    const lines = events.map((e) => JSON.stringify(e));
    const extra = signed(sk, { content: 'the second on line 1200', created_at: t - 1 });
    lines[9] += ' trailing';                      /* line 10: bytes after the object */
    lines[1199] += JSON.stringify(extra);         /* line 1200: two events on one line */
    lines[1899] += ',';                           /* line 1900: a comma after it */
    const r = await importJson(relay, [], lines.join('\n') + '\n');
    assert.deepEqual(r.summary, counts({ lines: 2000, stored: 1997, invalid: 3 }));
    assert.deepEqual(r.stderr.trim().split('\n'), [
      'line 10: invalid: bytes after the JSON object, at column ' + (JSON.stringify(events[9]).length + 2),
      'line 1200: invalid: a second JSON value after the JSON object, at column ' + (JSON.stringify(events[1199]).length + 1),
      'line 1900: invalid: bytes after the JSON object, at column ' + (JSON.stringify(events[1899]).length + 1),
    ]);
    const ids = new Set(await storedIds(relay, pk));
    assert.equal(ids.size, 1997);
    for (const i of [9, 1199, 1899]) assert.equal(ids.has(events[i].id), false, `line ${i + 1}`);
    assert.equal(ids.has(extra.id), false);
    assert.equal(ids.has(events[1999].id), true, 'the last line');
  });

  it('reads a FILE argument; a UTF-8 BOM at its start is skipped, CRLF line ends work', async () => {
    const { sk, pk } = keypair();
    const events = [1, 2, 3].map((i) => signed(sk, { content: `file ${i}`, created_at: now() - 10 + i }));
    const path = join(relay.dir, 'bom-crlf.jsonl');
    writeFileSync(path, '\uFEFF' + events.map((e) => JSON.stringify(e)).join('\r\n') + '\r\n');
    const r = await importJson(relay, [path]);
    assert.deepEqual(r.summary, counts({ lines: 3, stored: 3 }));
    assert.equal(r.stderr, '');
    assert.deepEqual((await storedIds(relay, pk)).sort(), events.map((e) => e.id).sort());
  });

  it('a BOM on stdin is skipped too; a missing FILE is an error', async () => {
    const { sk } = keypair();
    const r = await importJson(relay, [], '\uFEFF' + JSON.stringify(signed(sk, { content: 'bom' })) + '\n');
    assert.deepEqual(r.summary, counts({ lines: 1, stored: 1 }));
    const missing = await relayctl(relay, ['import', join(relay.dir, 'no-such-file.jsonl')]);
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /^relayctl: cannot read .*no-such-file\.jsonl: No such file or directory$/m);
  });

  it('imports events annotated with fields beyond the seven, and counts those lines', async () => {
    const { sk, pk } = keypair();
    const a = signed(sk, { content: 'seen somewhere' });
    const b = signed(sk, { kind: 7, content: '+', tags: [['e', a.id]] });
    const input = [
      JSON.stringify({ ...a, seen_on: ['wss://relay.example'] }),
      JSON.stringify({ relays: [], ...b, _score: 3 }),
      JSON.stringify({ ...signed(sk, { content: 'x' }), content: 'tampered', seen_on: [] }),
    ].join('\n');
    const r = await importJson(relay, [], input);
    assert.deepEqual(r.summary, counts({ lines: 3, stored: 2, invalid: 1, extra_fields: 2 }));
    assert.match(r.stderr, /^line 3: invalid: id does not match/m);
    const dump = await relayctl(relay, ['export', JSON.stringify({ authors: [pk] })]);
    /* stored as the seven fields the id and signature cover */
    assert.deepEqual(dump.stdout.trim().split('\n').map((l) => JSON.parse(l)), [a, b]);
    const text = await relayctl(relay, ['import'], JSON.stringify({ ...a, seen_on: [] }) + '\n');
    assert.match(text.stdout, /^1 lines: 0 stored, 1 duplicate, 0 superseded, 0 refused, 0 invalid, 0 blank; 1 with extra fields$/m);
  });

  it('counts versions superseded by newer ones apart from duplicates, so the counts add up', async () => {
    const { sk, pk } = keypair();
    const t = now() - 100;
    const newest = signed(sk, { kind: 0, content: '{"name":"new"}', created_at: t + 2 });
    const older = signed(sk, { kind: 0, content: '{"name":"old"}', created_at: t });
    const art2 = signed(sk, { kind: 30023, tags: [['d', 'post']], content: 'v2', created_at: t + 1 });
    const art1 = signed(sk, { kind: 30023, tags: [['d', 'post']], content: 'v1', created_at: t });
    const note = signed(sk, { content: 'regular', created_at: t });
    const input = [newest, older, art2, art1, note, note].map((e) => JSON.stringify(e)).join('\n') + '\n\n';
    const r = await importJson(relay, [], input);
    assert.deepEqual(r.summary, counts({ lines: 7, stored: 3, duplicate: 1, superseded: 2, blank: 1 }));
    assert.deepEqual((await storedIds(relay, pk)).sort(), [newest.id, art2.id, note.id].sort());
  });

  it('an import request without the "verified" mark still has its signatures checked by stored', async () => {
    const { sk } = keypair();
    const good = signed(sk, { content: 'good' });
    const forged = { ...signed(sk, { content: 'forged' }), sig: good.sig };
    const url = `ipc://${join(relay.runDir, 'stored-admin.ipc')}`;
    const r = await run('/usr/bin/nngcat', ['--req', '--dial', url, '--ascii', '--data',
      JSON.stringify({ cmd: 'import', events: [good, forged] })], { cwd: relay.dir });
    const reply = JSON.parse(r.stdout);
    assert.deepEqual([reply.stored, reply.invalid, reply.problems], [1, 1, [{ index: 1, message: 'invalid: bad signature' }]]);
    /* relayctl checks it itself */
    const ctl = await importJson(relay, [], JSON.stringify(forged) + '\n');
    assert.deepEqual(ctl.summary, counts({ lines: 1, invalid: 1 }));
    assert.match(ctl.stderr, /^line 1: invalid: bad signature$/m);
  });

  it('export says it ignores a filter\'s limit, and writes every match', async () => {
    const { sk, pk } = keypair();
    const events = [1, 2, 3].map((i) => signed(sk, { content: `e${i}`, created_at: now() - 10 + i }));
    await importJson(relay, [], events.map((e) => JSON.stringify(e)).join('\n'));
    const r = await relayctl(relay, ['export', JSON.stringify({ authors: [pk], limit: 1 })]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /^relayctl: export ignores the filter's "limit" and writes every match$/m);
    assert.equal(r.stdout.trim().split('\n').length, 3);
    const plain = await relayctl(relay, ['export', JSON.stringify({ authors: [pk] })]);
    assert.equal(plain.stderr, '');
  });

  itStopsCleanly(relay);
});
