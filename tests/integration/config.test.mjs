/*
 * config.test.mjs - the config file as an interface: unknown keys make both
 * daemons refuse to start with a message naming the key, a missing file is
 * an error, the default data_dir and run_dir are created, and relayctl stats
 * reports what stored holds.  The URL `make run` prints is one a client can
 * dial, also for a wildcard or IPv6 bind.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { Relay, itStopsCleanly, useRelay, binary, configText, freePort, run } from './lib/relay.mjs';
import { keypair, signed } from './lib/client.mjs';

/* A temp dir holding relay.conf with the given extra lines; returns paths. */
async function tempConfig(extra) {
  const dir = mkdtempSync(join(tmpdir(), 'relay-conf-'));
  const path = join(dir, 'relay.conf');
  const base = configText({
    bind: '127.0.0.1', port: await freePort(), workers: 1,
    data_dir: join(dir, 'data'), run_dir: join(dir, 'run'),
  });
  writeFileSync(path, base + extra);
  return { dir, path };
}

describe('config errors stop the daemons at start', () => {
  /* [program, arguments after -c CONFIG] */
  const PROGRAMS = [['stored', []], ['relayd', ['-i', '1']]];
  /* [name, extra config text, text stderr must contain] */
  const BAD = [
    ['an unknown key', 'no_such_key = 1\n', 'no_such_key'],
    ['a misspelled key', 'max_subscription = 5\n', 'max_subscription'],
  ];
  for (const [prog, args] of PROGRAMS) {
    for (const [name, extra, mention] of BAD) {
      it(`${prog} with ${name} exits non-zero and says why`, async () => {
        const { dir, path } = await tempConfig(extra);
        try {
          const r = await run(binary(prog), ['-c', path, ...args], { cwd: dir, timeout: 5000 });
          assert.equal(r.timedOut, false, `${prog} was still running after 5 s`);
          assert.notEqual(r.code, 0, `${prog} exit code`);
          assert.equal(r.signal, null, `${prog} died of ${r.signal} instead of exiting`);
          assert.ok(r.stderr.includes(mention), `stderr should name ${mention}: ${JSON.stringify(r.stderr)}`);
        } finally {
          rmSync(dir, { recursive: true, force: true });
        }
      });
    }

    it(`${prog} with a config file that does not exist exits non-zero and says why`, async () => {
      const dir = mkdtempSync(join(tmpdir(), 'relay-conf-'));
      try {
        const missing = join(dir, 'absent.conf');
        const r = await run(binary(prog), ['-c', missing, ...args], { cwd: dir, timeout: 5000 });
        assert.equal(r.timedOut, false, `${prog} was still running after 5 s`);
        assert.notEqual(r.code, 0);
        assert.ok(r.stderr.trim().length > 0, 'stderr explains');
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });
  }
});

describe('default data_dir and run_dir', () => {
  it('are ./var/data and ./var/run, created when missing, and the relay serves', async () => {
    const relay = new Relay({ workers: 1, defaultDirs: true });
    await relay.start();
    try {
      assert.ok(existsSync(join(relay.dir, 'var/run/stored-rpc.ipc')));
      assert.ok(existsSync(join(relay.dir, 'var/data')));
      const c = await relay.connect();
      const ev = await c.mustPublish(signed(keypair().sk, { content: 'default dirs' }));
      assert.deepEqual((await c.req('x', { ids: [ev.id] })).events, [ev]);
    } finally {
      await relay.stop();
    }
  });
});

describe('relayctl stats', () => {
  const relay = useRelay();

  /* Paths of numeric fields whose key mentions "event", with their values. */
  function eventCounters(value, path = []) {
    if (value === null || typeof value !== 'object') return [];
    const out = [];
    for (const [k, v] of Object.entries(value)) {
      if (typeof v === 'number' && /event/i.test(k)) out.push([[...path, k].join('.'), v]);
      out.push(...eventCounters(v, [...path, k]));
    }
    return out;
  }

  async function statsJson() {
    const r = await relay.relayctl('stats', '--json');
    assert.equal(r.code, 0, `relayctl stats --json failed: ${r.stderr}`);
    let doc;
    assert.doesNotThrow(() => { doc = JSON.parse(r.stdout); }, `stdout is JSON: ${r.stdout}`);
    return doc;
  }

  it('--json reports the number of stored events', async () => {
    const { sk } = keypair();
    const c = await relay.connect();
    const before = eventCounters(await statsJson());
    /* three regular, two versions of one replaceable (one stays), one
     * ephemeral (never stored), one event sent twice: five stored events */
    for (const tpl of [{ content: '1' }, { content: '2' }, { content: '3' }]) await c.mustPublish(signed(sk, tpl));
    await c.mustPublish(signed(sk, { kind: 0, created_at: 1700000000, content: 'v1' }));
    await c.mustPublish(signed(sk, { kind: 0, created_at: 1700000001, content: 'v2' }));
    await c.mustPublish(signed(sk, { kind: 20001, content: 'ephemeral' }));
    const dup = signed(sk, { content: 'dup' });
    await c.mustPublish(dup);
    await c.mustPublish(dup);
    const after = eventCounters(await statsJson());
    const stored = before.length === 0 ? [] : after.filter(([path, v]) => {
      const was = before.find(([p]) => p === path);
      return was && was[1] === 0 && v === 5;
    });
    assert.ok(stored.length > 0,
      `no event counter went from 0 to 5 (3 regular + 1 replaceable + 1 deduplicated); before ${JSON.stringify(before)}, after ${JSON.stringify(after)}`);

    /* the same counter follows two more */
    await c.mustPublish(signed(sk, { content: '6' }));
    await c.mustPublish(signed(sk, { content: '7' }));
    const later = new Map(eventCounters(await statsJson()));
    assert.ok(stored.some(([path]) => later.get(path) === 7),
      `${stored.map(([p]) => p).join(', ')} should now be 7: ${JSON.stringify([...later])}`);
  });

  it('without --json prints a readable report', async () => {
    const r = await relay.relayctl('stats');
    assert.equal(r.code, 0, r.stderr);
    assert.ok(r.stdout.trim().length > 0);
    assert.match(r.stdout, /event/i);
  });

  itStopsCleanly(relay);
});

/* Workers share the port through SO_REUSEPORT, which would also let a
 * second relay on the same port take half the clients unseen: stored holds
 * a per-port lock (stored/portlock.h) and a second one refuses to start. */
describe('one relay per port', () => {
  const relay = useRelay({ workers: 1 });

  it('a second stored for a port in use exits non-zero and says why; the first keeps serving', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'relay-conf-'));
    try {
      const path = join(dir, 'relay.conf');
      writeFileSync(path, configText({
        bind: '127.0.0.1', port: relay.port, workers: 1,
        data_dir: join(dir, 'data'), run_dir: join(dir, 'run'),
      }));
      const r = await run(binary('stored'), ['-c', path], { cwd: dir, timeout: 5000 });
      assert.equal(r.timedOut, false, 'the second stored was still running after 5 s');
      assert.notEqual(r.code, 0);
      assert.match(r.stderr, new RegExp(`another relay already serves port ${relay.port}`));
      const { sk } = keypair();
      await (await relay.connect()).mustPublish(signed(sk, { content: 'still here' }));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  itStopsCleanly(relay);
});


/* The URL `make run` prints (etc/run.sh), by etc/local-url.sh. */
describe('the URL make run prints', () => {
  const script = join(dirname(fileURLToPath(import.meta.url)), '../../etc/local-url.sh');
  for (const [bind, url] of [['::', 'ws://localhost:18083'], ['0.0.0.0', 'ws://localhost:18083'],
    ['127.0.0.1', 'ws://127.0.0.1:18083'], ['::1', 'ws://[::1]:18083'],
    ['2001:db8::7', 'ws://[2001:db8::7]:18083']]) {
    it(`bind = ${bind} prints ${url}`, () => {
      assert.equal(execFileSync('sh', [script, bind, '18083'], { encoding: 'utf8' }).trim(), url);
    });
  }
});
