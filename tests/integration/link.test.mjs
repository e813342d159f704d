/*
 * link.test.mjs - the [link] keys on one machine: workers on tcp:// over
 * loopback (IPv4 and IPv6), serving and surviving a stored restart as on
 * ipc; plain tcp:// off loopback refused at start unless link_insecure;
 * and a protocol version mismatch logged on both sides (a HELLO of another
 * version sent to stored, and a worker whose "stored" never answers).
 * netns.test.mjs covers tls+tcp:// across network namespaces.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { keypair, signed } from './lib/client.mjs';
import { Proc, Relay, binary, configText, freeLinkPorts, freePort, run, until } from './lib/relay.mjs';


describe('workers on tcp:// over loopback', () => {
  const relay = new Relay({ workers: 2 });
  before(async () => {
    const [rpc, pub, reply] = await freeLinkPorts();
    relay.extraConfig = {
      link_rpc_url: `tcp://127.0.0.1:${rpc}`,
      link_pub_url: `tcp://[::1]:${pub}`,
      link_reply_url: `tcp://127.0.0.1:${reply}`,
    };
    await relay.start();
  });
  after(async () => { if (!relay.stopped) await relay.stop(); });

  it('delivers across workers and answers REQs', async () => {
    const a = await relay.connectTo(1);
    const b = await relay.connectTo(2);
    const { sk } = keypair();
    b.send(['REQ', 'live', { authors: [signed(sk).pubkey] }]);
    await b.collect('live');
    const ev = await a.mustPublish(signed(sk, { content: 'over tcp' }));
    await b.liveEvent('live', ev.id);
    assert.deepEqual((await a.req('h', { ids: [ev.id] })).events.map((e) => e.id), [ev.id]);
  });

  it('keeps its clients through a stored restart and registers their subscriptions again', async () => {
    const a = await relay.connectTo(1);
    const b = await relay.connectTo(2);
    const { sk } = keypair();
    b.send(['REQ', 'live', { authors: [signed(sk).pubkey] }]);
    await b.collect('live');
    const logs = [relay.relayd[1].log.length, relay.relayd[2].log.length];
    await relay.kill('stored', 'SIGKILL');
    await relay.restartStored();
    await until(() => [1, 2].every((n) => /connected to stored; registering [1-9]/.test(relay.relayd[n].log.slice(logs[n - 1]))),
      { timeout: 20000, what: 'both workers to register their subscriptions again' });
    const ev = await a.mustPublish(signed(sk, { content: 'after the restart' }), { timeout: 20000 });
    await b.liveEvent('live', ev.id, { timeout: 20000 });
    assert.equal(a.isOpen && b.isOpen, true);
  });

  it('every process exits with code 0 on SIGTERM', async () => { await relay.stop(); });
});

describe('link URLs the daemons refuse at start', () => {
  const CASES = [
    ['plain tcp:// to another host', 'link_rpc_url = tcp://192.0.2.1:7801\nlink_reply_url = tcp://192.0.2.1:7900\n',
      'not loopback'],
    ['tls+tcp:// without its files', 'link_rpc_url = tls+tcp://192.0.2.1:7801\nlink_reply_url = tls+tcp://192.0.2.1:7900\n',
      'link_tls_ca_file'],
    ['a remote request channel without a reply URL', 'link_rpc_url = tcp://127.0.0.1:7801\n', 'link_reply_url'],
  ];
  for (const [prog, args] of [['stored', []], ['relayd', ['-i', '1']]]) {
    for (const [name, extra, mention] of CASES) {
      it(`${prog} with ${name} exits non-zero and says why`, async () => {
        const dir = mkdtempSync(join(tmpdir(), 'relay-link-'));
        try {
          const path = join(dir, 'relay.conf');
          writeFileSync(path, configText({ port: await freePort(), data_dir: join(dir, 'data'), run_dir: join(dir, 'run') }) + extra);
          const r = await run(binary(prog), ['-c', path, ...args], { cwd: dir, timeout: 5000 });
          assert.equal(r.timedOut, false);
          assert.notEqual(r.code, 0);
          assert.ok(r.stderr.includes(mention), `stderr should name ${mention}: ${JSON.stringify(r.stderr)}`);
        } finally {
          rmSync(dir, { recursive: true, force: true });
        }
      });
    }
  }
});

describe('a worker of another protocol version', () => {
  it('is named in stored\'s log when its HELLO arrives', async () => {
    const relay = new Relay({ workers: 1 });
    relay.link = {}; /* ipc, whatever RELAY_TEST_LINK says: nngcat dials its socket */
    await relay.start();
    try {
      const hello = join(relay.dir, 'hello.bin');
      /* version 99, HELLO (1), worker 7, request id 1; then pid and boot id */
      writeFileSync(hello, Buffer.from([99, 1, 0, 7, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 2]));
      const cat = spawn('nngcat', ['--req0', '--dial', `ipc://${join(relay.runDir, 'stored-rpc.ipc')}`,
        '--file', hello, '--recv-timeout', '1'], { stdio: 'ignore' });
      await until(() => /a worker speaks protocol version 99 and this stored \d+/.test(relay.stored.log),
        { what: 'stored to name the version' });
      cat.kill('SIGKILL');
    } finally {
      await relay.stop();
    }
  });

  it('says so itself when stored never answers its HELLO', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'relay-link-'));
    const runDir = join(dir, 'run');
    mkdirSync(runDir, { mode: 0o700 });
    const conf = join(dir, 'relay.conf');
    writeFileSync(conf, configText({ bind: '127.0.0.1', port: await freePort(), data_dir: join(dir, 'data'), run_dir: runDir }));
    /* A "stored" that takes the connections and answers nothing, as one
     * of another version does. */
    const procs = [
      new Proc('rep', '/usr/bin/nngcat', ['--rep0', '--listen', `ipc://${join(runDir, 'stored-rpc.ipc')}`], dir),
      new Proc('pub', '/usr/bin/nngcat', ['--pub0', '--listen', `ipc://${join(runDir, 'stored-pub.ipc')}`,
        '--data', 'x', '--interval', '1'], dir),
    ];
    try {
      await until(() => procs.every((p) => p.running), { what: 'nngcat' });
      const worker = new Proc('relayd@1', binary('relayd'), ['-c', conf, '-i', '1'], dir);
      procs.push(worker);
      await until(() => {
        if (!worker.running) throw new Error(`relayd ${worker.describeExit()}: ${worker.log}`);
        return /stored has not answered this worker's HELLO in \d+ ms/.test(worker.log);
      }, { timeout: 20000, what: () => `the worker to say its HELLO went unanswered: ${worker.log}` });
    } finally {
      for (const p of procs) {
        p.child.kill('SIGTERM');
        await p.waitExit();
      }
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
