/*
 * sockets.test.mjs - who may open the relay's nng IPC sockets.  Started
 * under umask 000, run_dir is 0700 and every socket 0600, also one the
 * listener check makes again, and the user nobody can open none of them.
 * With socket_group the workers' sockets are 0660 in that group, and
 * its members can reach them but not the admin socket.  stored and relayd
 * refuse to start in a run_dir that other users can reach.  The cases as
 * nobody, and those with a group, run only as root.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { createConnection } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { binary, configText, freePort, HOST, itStopsCleanly, run, until, useRelay } from './lib/relay.mjs';

const asRoot = process.getuid && process.getuid() === 0;
const NOT_ROOT = !asRoot && 'needs root to try as the user nobody';

/* SP protocol numbers a probe speaks as (the peer of each socket). */
const AS_REQ = 0x30; /* to stored-rpc.ipc (REP) and stored-admin.ipc */
const AS_SUB = 0x21; /* to stored-pub.ipc (PUB) */
const AS_PUSH = 0x50; /* to relayd-N-*.ipc (PULL) */

/* Connects to path, does the SP handshake as proto and closes only once
 * both headers crossed (an earlier close upsets nng 1.5.2's listener:
 * common/listencheck.h).  Resolves 'handshake' or the connect error's code.
 * Kept as one function so that it also runs, as text, under another user. */
function handshake(path, proto, net = { createConnection }) {
  return new Promise((done) => {
    const s = net.createConnection(path);
    let got = Buffer.alloc(0);
    const bound = setTimeout(() => { s.destroy(); done('no answer within 10 s'); }, 10000);
    s.once('connect', () => s.write(Buffer.from([0, 0x53, 0x50, 0, proto >> 8, proto & 0xff, 0, 0])));
    s.on('data', (d) => {
      got = Buffer.concat([got, d]);
      if (got.length < 8) return;
      clearTimeout(bound);
      s.destroy();
      done(got.subarray(1, 3).toString() === 'SP' ? 'handshake' : 'not SP');
    });
    s.once('error', (err) => { clearTimeout(bound); done(err.code); });
  });
}

/* Runs handshake() on each [path, proto] as nobody:nogroup with no other
 * groups, or with nogroup as its group only; resolves {path: result}. */
function handshakesAsNobody(targets) {
  const script = `const net = require('node:net'); const handshake = ${handshake.toString()};
    (async () => { const out = {};
      for (const [p, proto] of JSON.parse(process.argv[1])) out[p] = await handshake(p, proto, net);
      console.log(JSON.stringify(out)); })();`;
  const r = spawnSync('setpriv', ['--reuid=nobody', '--regid=nogroup', '--clear-groups', process.execPath,
    '-e', script, JSON.stringify(targets)], { cwd: '/', encoding: 'utf8', timeout: 60000 });
  assert.equal(r.status, 0, `probe as nobody: ${r.stderr}`);
  return JSON.parse(r.stdout);
}

/* Every socket in the relay's run_dir with the protocol a probe speaks. */
function sockets(relay) {
  const names = readdirSync(relay.runDir).sort();
  const proto = (n) => (n === 'stored-pub.ipc' ? AS_SUB : n.startsWith('relayd-') ? AS_PUSH : AS_REQ);
  return names.map((n) => ({ name: n, path: join(relay.runDir, n), proto: proto(n) }));
}

function assertEverySocket(relay, workers) {
  const names = sockets(relay).map((s) => s.name);
  for (const want of ['stored-admin.ipc', 'stored-pub.ipc', 'stored-rpc.ipc'])
    assert.ok(names.includes(want), `${want} in ${names}`);
  for (let n = 1; n <= workers; n++)
    assert.ok(names.some((x) => new RegExp(`^relayd-${n}-.*\\.ipc$`).test(x)), `worker ${n}'s socket in ${names}`);
}

const mode = (path) => statSync(path).mode & 0o7777;
const octal = (m) => `0${m.toString(8)}`;

/* Starts the describe()'s relay under umask 000: the hooks around
 * useRelay()'s own before() set and restore it. */
function useRelayUnderUmask000(options) {
  let saved;
  before(() => { saved = process.umask(0); });
  const relay = useRelay(options);
  before(() => { process.umask(saved); });
  return relay;
}

describe('started under umask 000', () => {
  const relay = useRelayUnderUmask000({ workers: 2, config: { listen_check_ms: 200 } });

  it('run_dir is 0700 and every socket in it 0600', () => {
    assert.equal(octal(mode(relay.runDir)), '0700');
    assertEverySocket(relay, 2);
    for (const s of sockets(relay)) {
      assert.ok(statSync(s.path).isSocket(), s.name);
      assert.equal(octal(mode(s.path)), '0600', s.name);
    }
  });

  it('the user nobody opens none of them, through run_dir or with run_dir opened', { skip: NOT_ROOT }, () => {
    const targets = sockets(relay).map((s) => [s.path, s.proto]);
    chmodSync(relay.dir, 0o755); /* the temp dir above run_dir: only run_dir keeps nobody out */
    for (const [path, got] of Object.entries(handshakesAsNobody(targets)))
      assert.equal(got, 'EACCES', `nobody reached ${path} through run_dir`);
    chmodSync(relay.runDir, 0o755); /* now only each socket's own mode stands */
    try {
      for (const [path, got] of Object.entries(handshakesAsNobody(targets)))
        assert.equal(got, 'EACCES', `nobody reached ${path} with run_dir 0755`);
    } finally {
      chmodSync(relay.runDir, 0o700);
    }
  });

  it('a socket the listener check makes again is 0600 too', async () => {
    const again = sockets(relay);
    for (const s of again) unlinkSync(s.path);
    /* The handshake answers only once the listener listens, after nng set
     * the mode: the file alone could be seen a moment before. */
    for (const s of again)
      await until(async () => (await handshake(s.path, s.proto)) === 'handshake',
        { timeout: 30000, interval: 50, what: `${s.name} to listen again` });
    for (const s of again) assert.equal(octal(mode(s.path)), '0600', s.name);
    assert.match(relay.logs(), /listening again/);
  });

  itStopsCleanly(relay);
});

describe('with socket_group = nogroup', { skip: NOT_ROOT }, () => {
  const relay = useRelayUnderUmask000({ workers: 1, config: { socket_group: 'nogroup' } });
  const nogroup = () => Number(spawnSync('getent', ['group', 'nogroup'], { encoding: 'utf8' }).stdout.split(':')[2]);

  it('run_dir is 0770 and the workers\' sockets 0660 in the group; the admin socket stays 0600', () => {
    const gid = nogroup();
    assert.equal(octal(mode(relay.runDir)), '0770');
    assert.equal(statSync(relay.runDir).gid, gid);
    assertEverySocket(relay, 1);
    for (const s of sockets(relay)) {
      const admin = s.name === 'stored-admin.ipc';
      assert.equal(octal(mode(s.path)), admin ? '0600' : '0660', s.name);
      if (!admin) assert.equal(statSync(s.path).gid, gid, s.name);
    }
  });

  it('a member of the group reaches the workers\' sockets, not the admin socket', () => {
    const targets = sockets(relay).map((s) => [s.path, s.proto]);
    chmodSync(relay.dir, 0o755);
    for (const [path, got] of Object.entries(handshakesAsNobody(targets)))
      assert.equal(got, path.endsWith('/stored-admin.ipc') ? 'EACCES' : 'handshake', path);
  });

  itStopsCleanly(relay);
});

describe('a run_dir other users can reach', () => {
  let dir, configPath;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'relay-it-'));
    mkdirSync(join(dir, 'run'));
    chmodSync(join(dir, 'run'), 0o777);
    configPath = join(dir, 'relay.conf');
    writeFileSync(configPath, configText({
      bind: HOST, port: await freePort(), data_dir: join(dir, 'data'), run_dir: join(dir, 'run'),
    }));
  });

  for (const name of ['stored', 'relayd']) {
    it(`makes ${name} exit non-zero with a one-line reason`, async () => {
      const args = name === 'relayd' ? ['-c', configPath, '-i', '1'] : ['-c', configPath];
      const r = await run(binary(name), args, { cwd: dir });
      assert.equal(r.timedOut, false, `${name} kept running in a run_dir of mode 0777`);
      assert.notEqual(r.code, 0);
      assert.match(r.stderr, /run_dir \S+ is mode 0777, open to other users; not starting/);
      assert.equal(octal(mode(join(dir, 'run'))), '0777', 'the relay changed the operator\'s mode');
    });
  }

  after(() => { if (dir) rmSync(dir, { recursive: true, force: true }); });
});
