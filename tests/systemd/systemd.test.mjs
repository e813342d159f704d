/*
 * systemd.test.mjs - the installed relay under a real systemd.
 *
 * tests/systemd/run.sh boots a Debian container with the relay installed
 * (make install DESTDIR=...) and runs this file with:
 *   CRELAY_CT_LEADER  pid, on this side, of the container's systemd
 *   CRELAY_CT_PORT    the port in the container's /etc/crelay/relay.conf
 * systemctl runs inside the container through nsenter; the websocket
 * clients run here and reach the relay over the loopback the container
 * shares with us.  The steps run in order and build on each other:
 *   - the units pass systemd-analyze verify;
 *   - relay.target brings up stored, relayd@1 and relayd@2 as the user crelay;
 *   - systemctl reload signals without restarting;
 *   - restarting relayd@2 disturbs neither stored nor worker 1's clients;
 *   - SIGKILL of stored while events are published: systemd restarts it,
 *     every event answered OK true is still served, and live subscriptions
 *     deliver again without the clients reconnecting;
 *   - a third worker is added the documented way;
 *   - stopping relay.target stops every unit, each exiting with code 0.
 * Every wait is bounded.
 */
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readlinkSync } from 'node:fs';
import { Client, keypair, signed } from '../integration/lib/client.mjs';

const LEADER = process.env.CRELAY_CT_LEADER;
const PORT = process.env.CRELAY_CT_PORT;
if (!LEADER || !PORT) throw new Error('run through tests/systemd/run.sh (make test-systemd)');
const URL = `ws://127.0.0.1:${PORT}`;
const WORKERS = ['relayd@1.service', 'relayd@2.service'];
const UNITS = ['stored.service', ...WORKERS];
const UNIT_DIR = '/etc/systemd/system';

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/* ------------------------------------------------------- the container */

/* Runs a command inside the container; resolves {code, stdout, stderr}. */
function inContainer(args, { timeout = 30000 } = {}) {
  return new Promise((resolve) => {
    execFile('nsenter', ['-t', LEADER, '-a', '--root', '--wd', ...args], { timeout },
      (err, stdout, stderr) => {
        let code = 0;
        if (err) code = err.killed ? `killed after ${timeout} ms` : (err.code ?? err.signal);
        resolve({ code, stdout, stderr });
      });
  });
}

/* Runs a command inside the container and returns its stdout; throws
 * unless it exits 0. */
async function ct(...args) {
  const r = await inContainer(args, { timeout: 60000 });
  if (r.code !== 0)
    throw new Error(`${args.join(' ')} (in the container) exited ${r.code}:\n${r.stderr}${r.stdout}`);
  return r.stdout;
}

const systemctl = (...args) => ct('systemctl', ...args);

/* The properties of a unit the tests look at, as strings. */
async function unit(name) {
  const props = 'ActiveState,SubState,Result,MainPID,ExecMainCode,ExecMainStatus,NRestarts,InvocationID';
  const out = await systemctl('show', '-p', props, name);
  const u = {};
  for (const line of out.split('\n')) {
    const i = line.indexOf('=');
    if (i > 0) u[line.slice(0, i)] = line.slice(i + 1);
  }
  return u;
}

/* How the run of a unit with this InvocationID ended, from the journal:
 * the line run.sh's drop-in logs after the main process ended ("exited 0",
 * "killed 9", ...), or systemd's "Failed with result ..." when there is one.
 * (systemctl show cannot say: a unit that stopped cleanly is unloaded at
 * once, with its exit status.)  The drop-in's line is found by the run it
 * names, not by the run journald filed it under: for a unit restarted at
 * once, journald often files it under the new run. */
async function howEnded(invocation) {
  let text = '';
  let exit = null;
  const line = new RegExp(`^test-exit: (.*) \\(${invocation}\\)$`, 'm');
  await until(async () => {
    text = await ct('journalctl', '--no-pager', '-o', 'cat', `INVOCATION_ID=${invocation}`,
      '+', `_SYSTEMD_INVOCATION_ID=${invocation}`);
    exit = (await ct('journalctl', '--no-pager', '-o', 'cat')).match(line);
    /* The drop-in's line comes from its own process's stdout, which
     * journald may store after systemd's "Deactivated" message. */
    return /Failed with result/.test(text) || (/Deactivated successfully/.test(text) && exit);
  }, { timeout: 5000, what: `the end of invocation ${invocation} in the journal` }).catch(() => {});
  const failed = text.match(/Failed with result .*/);
  if (failed) return `${failed[0]}\n${text}`;
  return exit ? exit[1] : `no test-exit line\n${text}`;
}

async function mainPids() {
  const pids = {};
  for (const name of UNITS) pids[name] = (await unit(name)).MainPID;
  return pids;
}

/* Polls cond() until it returns a truthy value; throws after timeout ms. */
async function until(cond, { timeout = 30000, interval = 100, what = 'a condition' } = {}) {
  const deadline = Date.now() + timeout;
  for (;;) {
    const v = await cond();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeout} ms waiting for ${what}`);
    await sleep(interval);
  }
}

async function journal() {
  const r = await inContainer(['journalctl', '--no-pager', '-o', 'short-monotonic', '-n', '200',
    '-u', 'stored.service', '-u', 'relayd@*.service']);
  return r.stdout + r.stderr;
}

/* A test step whose failure carries the relay's journal. */
function step(name, fn) {
  it(name, async () => {
    try {
      await fn();
    } catch (err) {
      err.message += `\n----- journal of the relay's units -----\n${await journal()}`;
      throw err;
    }
  });
}

/* ----------------------------------------------------------- clients */

const clients = new Set();

async function connect() {
  const c = await Client.open(URL);
  clients.add(c);
  return c;
}

/* A client on worker n: opens connections until one lands there. */
async function connectTo(n, attempts = 64) {
  for (let i = 0; i < attempts; i++) {
    const c = await connect();
    if (c.worker === n) return c;
    await c.end();
    clients.delete(c);
  }
  throw new Error(`no connection landed on worker ${n} in ${attempts} attempts`);
}

/* Opens a live-only subscription (limit 0) to author's events. */
async function watch(c, subid, author) {
  const r = await c.req(subid, { authors: [author.pk], limit: 0 });
  assert.equal(r.eose, true, `REQ ${subid} refused: ${r.closed}`);
  return c;
}

/* Publishes events from c one after another until stop() is called,
 * keeping the ids answered OK true and the messages of OK false. */
function publishLoop(c, author, label) {
  const s = { acked: [], refused: [], failure: null, stopping: false };
  s.done = (async () => {
    for (let i = 0; !s.stopping; i++) {
      const ev = signed(author.sk, { content: `${label} #${i}` });
      let r;
      try {
        r = await c.publish(ev, { timeout: 10000 });
      } catch (err) {
        s.failure = err;
        return;
      }
      if (r.ok === true) {
        s.acked.push(ev.id);
      } else {
        s.refused.push(r.message);
        await sleep(20);
      }
    }
  })();
  s.stop = async () => {
    s.stopping = true;
    await s.done;
    if (s.failure) throw s.failure;
    return s;
  };
  return s;
}

/* The ids among want that a REQ for them returns (chunks of 500 = max_limit). */
async function served(c, want) {
  const have = new Set();
  for (let i = 0; i < want.length; i += 500) {
    const ids = want.slice(i, i + 500);
    const r = await c.req(`ids${i}`, { ids, limit: ids.length });
    assert.equal(r.eose, true, `REQ by ids refused: ${r.closed}`);
    for (const ev of r.events) have.add(ev.id);
  }
  return have;
}

/* Ids of live events for subid already in c's inbox (taken out of it). */
function liveIds(c, subid) {
  return new Set(c.take((f) => Array.isArray(f) && f[0] === 'EVENT' && f[1] === subid)
    .map((f) => f[2].id));
}

/* ------------------------------------------------------------- steps */

describe('relay.target under systemd', () => {
  after(async () => {
    await Promise.all([...clients].map((c) => c.end()));
  });

  step('the container shares this network namespace (its loopback is ours)', () => {
    assert.equal(readlinkSync(`/proc/${LEADER}/ns/net`), readlinkSync('/proc/self/ns/net'));
  });

  step('systemd-analyze verify passes on the installed units', async () => {
    const files = ['relay.target', 'stored.service', 'relayd@.service', 'relay-stream@.service']
      .map((u) => `${UNIT_DIR}/${u}`);
    for (const args of [files, ['relayd@1.service', 'relayd@7.service']]) {
      const r = await inContainer(['systemd-analyze', 'verify', ...args]);
      assert.equal(r.code, 0, `systemd-analyze verify ${args.join(' ')}:\n${r.stderr}${r.stdout}`);
      assert.equal((r.stderr + r.stdout).trim(), '', 'systemd-analyze verify printed warnings');
    }
  });

  step('systemctl start relay.target brings up stored and two workers as crelay', async () => {
    await systemctl('start', 'relay.target');
    for (const name of ['relay.target', ...UNITS]) {
      const u = await unit(name);
      assert.equal(u.ActiveState, 'active', `${name}: ${JSON.stringify(u)}`);
    }
    for (const name of UNITS) {
      const u = await unit(name);
      assert.equal(u.SubState, 'running', `${name}: ${JSON.stringify(u)}`);
      assert.equal((await ct('stat', '-c', '%U', `/proc/${u.MainPID}`)).trim(), 'crelay', name);
      const limits = await ct('cat', `/proc/${u.MainPID}/limits`, '/proc/1/limits');
      const nofile = [...limits.matchAll(/^Max open files\s+(\d+)\s+(\d+)/gm)].map((m) => Number(m[1]));
      /* LimitNOFILE=65536, clamped by systemd to what its own hard limit
       * allows where it may not raise it (no CAP_SYS_RESOURCE). */
      assert.equal(nofile[0], Math.min(65536, nofile[1]), `${name} open files: ${nofile}`);
      if (nofile[0] < 65536)
        console.log(`# ${name}: LimitNOFILE=65536 clamped to ${nofile[0]} (the container's own limit)`);
    }
    for (const sock of ['stored-rpc.ipc', 'stored-pub.ipc', 'stored-admin.ipc']) {
      await ct('test', '-S', `/run/crelay/${sock}`);
      assert.equal((await ct('stat', '-c', '%U %a', `/run/crelay/${sock}`)).trim(), 'crelay 600', sock);
    }
    assert.equal((await ct('stat', '-c', '%U %a', '/run/crelay')).trim(), 'crelay 700');
    assert.equal((await ct('stat', '-c', '%U', '/var/lib/crelay/relay.db')).trim(), 'crelay');
    /* root reaches the admin socket with the installed config */
    await ct('relayctl', '-c', '/etc/crelay/relay.conf', 'workers');
    for (const n of [1, 2]) await (await connectTo(n)).end();
  });

  step('relayctl backup writes a copy into the state directory, and nowhere else', async () => {
    const pub = await connectTo(1);
    const ev = signed(keypair().sk, { kind: 1, content: 'before the backup' });
    assert.equal((await pub.publish(ev)).ok, true);
    await pub.end();
    const out = await ct('relayctl', '-c', '/etc/crelay/relay.conf', '--json', 'backup',
      '/var/lib/crelay/backups/copy.db');
    const done = JSON.parse(out);
    assert.equal(done.state, 'done');
    assert.ok(done.events >= 1, out);
    assert.equal((await ct('stat', '-c', '%U %s', '/var/lib/crelay/backups/copy.db')).trim(),
      `crelay ${done.bytes}`);
    /* The sandbox: stored cannot write outside its state directory. */
    const r = await inContainer(['relayctl', '-c', '/etc/crelay/relay.conf', 'backup',
      '/etc/crelay/copy.db'], { timeout: 60000 });
    assert.equal(r.code, 1, r.stdout + r.stderr);
    assert.match(r.stderr, /cannot create \/etc\/crelay\/copy\.db\.partial: Read-only file system/);
    /* stored's /tmp is its own (PrivateTmp=yes): relayctl says it does not
     * see the copy rather than report a backup the operator cannot find. */
    const t = await inContainer(['relayctl', '-c', '/etc/crelay/relay.conf', 'backup', '/tmp/copy.db'],
      { timeout: 60000 });
    assert.equal(t.code, 1, t.stdout + t.stderr);
    assert.match(t.stderr, /does not see that file/);
  });

  step('systemctl reload signals stored and a worker without restarting them', async () => {
    const before = await mainPids();
    await systemctl('reload', 'stored.service', 'relayd@1.service');
    await sleep(300);
    assert.deepEqual(await mainPids(), before);
    for (const name of UNITS) assert.equal((await unit(name)).ActiveState, 'active', name);
  });

  step('restarting relayd@2 disturbs neither stored nor worker 1 and its clients', async () => {
    const author = keypair();
    const watcher = await watch(await connectTo(1), 'live', author);
    const pub = await connectTo(1);
    const onTwo = await watch(await connectTo(2), 'live', author);
    const before = await mainPids();
    const oldRun = (await unit('relayd@2.service')).InvocationID;

    const loop = publishLoop(pub, author, 'worker restart');
    await until(() => loop.acked.length >= 20, { what: '20 events published before the restart' });
    await systemctl('restart', 'relayd@2.service');
    const mid = loop.acked.length;
    await until(() => loop.acked.length >= mid + 20, { what: '20 events published after the restart' });
    await loop.stop();

    assert.equal(loop.refused.length, 0,
      `events refused while only worker 2 restarted: ${JSON.stringify([...new Set(loop.refused)])}`);
    const after = await mainPids();
    assert.equal(after['stored.service'], before['stored.service'], 'stored restarted');
    assert.equal(after['relayd@1.service'], before['relayd@1.service'], 'relayd@1 restarted');
    assert.notEqual(after['relayd@2.service'], before['relayd@2.service'], 'relayd@2 did not restart');
    assert.equal((await unit('relayd@2.service')).ActiveState, 'active');
    assert.equal(await howEnded(oldRun), 'exited 0', 'relayd@2 did not stop cleanly on SIGTERM');

    /* Worker 1's subscriber stayed connected and received every event. */
    await watcher.liveEvent('live', loop.acked.at(-1), { timeout: 5000 });
    const got = liveIds(watcher, 'live');
    got.add(loop.acked.at(-1));
    assert.ok(watcher.isOpen, 'worker 1 client was disconnected');
    assert.deepEqual(loop.acked.filter((id) => !got.has(id)), [], 'live events missed on worker 1');

    /* Worker 2's client was dropped; a new connection to worker 2 works. */
    await onTwo.waitClosed({ timeout: 5000 });
    const again = await watch(await connectTo(2), 'live', author);
    const ev = await pub.mustPublish(signed(author.sk, { content: 'after worker 2 is back' }));
    await again.liveEvent('live', ev.id);
    await watcher.liveEvent('live', ev.id);
  });

  step('SIGKILL of stored while publishing: restarted by systemd, nothing acknowledged lost, ' +
    'subscriptions resume without reconnecting', async () => {
    const author = keypair();
    const watchers = [await watch(await connectTo(1), 'live', author),
      await watch(await connectTo(2), 'live', author)];
    const pubs = [await connectTo(1), await connectTo(2)];
    const old = await unit('stored.service');

    const loops = pubs.map((p, i) => publishLoop(p, author, `worker ${i + 1} during the kill`));
    await until(() => loops.every((l) => l.acked.length >= 20), { what: 'events published before the kill' });
    await systemctl('kill', '-s', 'KILL', 'stored.service');
    const atKill = loops.map((l) => l.acked.length);

    await until(async () => {
      const u = await unit('stored.service');
      return u.ActiveState === 'active' && u.MainPID !== old.MainPID && u.MainPID !== '0';
    }, { what: 'systemd to restart stored' });
    await until(() => loops.every((l, i) => l.acked.length >= atKill[i] + 20),
      { what: '20 events acknowledged on each worker after stored came back' });
    await Promise.all(loops.map((l) => l.stop()));

    const now = await unit('stored.service');
    assert.ok(Number(now.NRestarts) > Number(old.NRestarts), `NRestarts: ${old.NRestarts} -> ${now.NRestarts}`);
    for (const name of WORKERS) assert.equal((await unit(name)).ActiveState, 'active', name);
    const refused = loops.flatMap((l) => l.refused);
    const odd = [...new Set(refused.filter((m) => !/^error: /.test(m)))];
    assert.deepEqual(odd, [], 'OK false during the gap without "error:"');
    console.log(`# stored killed: ${loops.map((l) => l.acked.length).join(' + ')} events acknowledged, ` +
      `${refused.length} refused with error: during the gap`);

    /* Every acknowledged event is served. */
    const acked = loops.flatMap((l) => l.acked);
    const have = await served(pubs[0], acked);
    assert.deepEqual(acked.filter((id) => !have.has(id)), [], 'acknowledged events lost');

    /* The watchers never reconnected and receive live events again. */
    const ev = await pubs[0].mustPublish(signed(author.sk, { content: 'after stored is back' }));
    for (const w of watchers) {
      assert.ok(w.isOpen, `the client on worker ${w.worker} was disconnected`);
      await w.liveEvent('live', ev.id, { timeout: 10000 });
      const got = liveIds(w, 'live');
      console.log(`# worker ${w.worker}'s subscriber got ${got.size} of ${acked.length} ` +
        'acknowledged events live');
    }
  });

  step('a third worker is added with systemctl add-wants relay.target relayd@3.service', async () => {
    await systemctl('add-wants', 'relay.target', 'relayd@3.service');
    await systemctl('start', 'relay.target');
    assert.equal((await unit('relayd@3.service')).ActiveState, 'active');
    await (await connectTo(3, 128)).end();
  });

  step('systemctl stop relay.target stops every unit cleanly', async () => {
    const watcher = await connect();
    const units = [...UNITS, 'relayd@3.service'];
    const runs = {};
    for (const name of units) runs[name] = (await unit(name)).InvocationID;
    await systemctl('stop', 'relay.target');
    /* systemctl returns once relay.target is down; the units it is PartOf
     * stop after it (they are ordered before it, for start), so wait,
     * bounded by their TimeoutStopSec. */
    await until(async () => {
      for (const name of ['relay.target', ...units])
        if (!['inactive', 'failed'].includes((await unit(name)).ActiveState)) return false;
      return true;
    }, { timeout: 40000, interval: 200, what: 'every unit to stop' }).catch(() => {});
    for (const name of ['relay.target', ...units]) {
      const u = await unit(name);
      assert.equal(u.ActiveState, 'inactive', `${name}: ${JSON.stringify(u)}`);
    }
    for (const name of units)
      assert.equal(await howEnded(runs[name]), 'exited 0', `${name} did not stop cleanly`);
    await watcher.waitClosed({ timeout: 5000 });
    /* The shared runtime directory outlives the units (RuntimeDirectoryPreserve). */
    await ct('test', '-d', '/run/crelay');
  });
});
