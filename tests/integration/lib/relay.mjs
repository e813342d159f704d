/*
 * relay.mjs - starts and stops a real relay (one stored, N relayd) on
 * 127.0.0.1 for a test file, and owns everything it started.
 *
 * A Relay picks a free loopback port, writes a config into a fresh temp dir
 * (data_dir and run_dir inside it), starts stored and waits for its RPC
 * socket, then starts relayd 1..N and waits until a websocket handshake has
 * landed on every worker (X-Relay-Worker).  Each process's stdout and stderr
 * are kept for diagnostics.  stop() sends SIGTERM, requires exit code 0 from
 * every process it stopped, and removes the temp dir.
 *
 * useRelay() wires a Relay into the current describe(): start in before(),
 * stop in after(), close the test's clients after each test, and print the
 * relay's logs written during a test that failed.
 *
 * Every wait here is bounded; a failure message carries the logs.
 */
import { spawn, execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { get as httpGet } from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { it, before, after, beforeEach, afterEach } from 'node:test';
import { Client, waitBound } from './client.mjs';

const HERE = dirname(fileURLToPath(import.meta.url));
/* The directory of the built binaries: $RELAY_BUILD, else the checkout's build/. */
export const BUILD = process.env.RELAY_BUILD
  ? resolve(process.env.RELAY_BUILD)
  : resolve(HERE, '../../../build');

/* The only address a test relay binds and a test client dials. */
export const HOST = '127.0.0.1';
const START_TIMEOUT_MS = 10000;
const STOP_TIMEOUT_MS = waitBound(5000);
const LOG_CAP = 256 * 1024;

/* Every child still running when the test process exits, or is interrupted
 * or terminated, is killed, so an aborted run never leaves daemons behind
 * (only SIGKILL of the test process itself escapes this). */
const live = new Set();
function killLive() {
  for (const child of live) {
    try { child.kill('SIGKILL'); } catch { /* already gone */ }
  }
}
process.on('exit', killLive);
for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.once(sig, () => {
    killLive();
    process.kill(process.pid, sig); /* the default action, now unhandled */
  });
}

/* The path of the built program name ('stored', 'relayd', 'relayctl'). */
export function binary(name) {
  return join(BUILD, name);
}

/* A port that was free on 127.0.0.1 a moment ago. */
export function freePort() {
  return new Promise((resolveP, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, HOST, () => {
      const { port } = srv.address();
      srv.close(() => resolveP(port));
    });
  });
}

/* RELAY_TEST_LINK=tcp runs every relay of a test file with its workers on
 * tcp:// over loopback instead of ipc:// (the [link] keys, README
 * "Workers on other hosts"), so any file checks its guarantees there too.
 * Returns those keys, or {} for ipc (the default). */
async function linkConfig() {
  if ((process.env.RELAY_TEST_LINK ?? 'ipc') === 'ipc') return {};
  if (process.env.RELAY_TEST_LINK !== 'tcp') throw new Error('RELAY_TEST_LINK must be ipc or tcp');
  const [rpc, pub, reply] = await freeLinkPorts();
  return {
    link_rpc_url: `tcp://127.0.0.1:${rpc}`,
    link_pub_url: `tcp://127.0.0.1:${pub}`,
    link_reply_url: `tcp://127.0.0.1:${reply}`,
  };
}

/* Whether port is free on 127.0.0.1 a moment ago. */
function portFree(port) {
  return new Promise((resolveP) => {
    const srv = createServer();
    srv.once('error', () => resolveP(false));
    srv.listen(port, HOST, () => srv.close(() => resolveP(true)));
  });
}

/* Link ports for a relay of up to 8 workers: rpc, pub and a reply base
 * whose next 8 are free too.  They come from below the kernel's ephemeral
 * range, where no client connection's own port can take one (a reply
 * port is listened on only when its worker says HELLO). */
export async function freeLinkPorts() {
  const low = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').split(/\s+/)[0]);
  for (;;) {
    const base = 10000 + Math.floor(Math.random() * (low - 10000 - 20));
    const ports = Array.from({ length: 11 }, (_, i) => base + i);
    if ((await Promise.all(ports.map(portFree))).every(Boolean)) return [base, base + 1, base + 2];
  }
}

/* Config text: `key = value` lines under a comment, in the given order. */
export function configText(entries) {
  const lines = ['# written by tests/integration/lib/relay.mjs', ''];
  for (const [k, v] of Object.entries(entries)) {
    if (v !== undefined && v !== null) lines.push(`${k} = ${v}`);
  }
  return lines.join('\n') + '\n';
}

function inode(path) {
  try {
    return statSync(path).ino;
  } catch {
    return null;
  }
}

/* Resolves after ms milliseconds. */
export function sleep(ms) {
  return new Promise((r) => setTimeout(r, ms));
}

/* Config for a relay whose processes a test pauses with SIGSTOP.  The
 * listener check runs on wall time: after SIGCONT the overdue checks fail
 * and the process listens again, and nng 1.5.2 then leaks the old
 * listener, which LeakSanitizer reports under make sanitize.  Such tests
 * are not about the check, so it is off. */
export const PAUSABLE = { listen_check_ms: 0 };

/* Polls cond() every interval ms until it returns a truthy value or timeout
 * ms have passed; throws the message from what() on timeout. */
export async function until(cond, { timeout = START_TIMEOUT_MS, interval = 25, what = 'condition' } = {}) {
  timeout = waitBound(timeout);
  const deadline = Date.now() + timeout;
  for (;;) {
    const v = await cond();
    if (v) return v;
    if (Date.now() > deadline)
      throw new Error(`timed out after ${timeout} ms waiting for ${typeof what === 'function' ? what() : what}`);
    await sleep(interval);
  }
}

/* One spawned daemon: its child process, its output, its exit. */
export class Proc {
  constructor(name, bin, args, cwd) {
    if (!existsSync(bin)) throw new Error(`${bin} does not exist (run make; RELAY_BUILD=${BUILD})`);
    this.name = name;
    this.log = '';
    this.exit = null;
    this.stopping = false; /* stop() sent SIGTERM */
    this.killedByTest = false; /* kill() sent a signal */
    this.child = spawn(bin, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    this.pid = this.child.pid;
    live.add(this.child);
    const keep = (chunk) => {
      this.log += chunk.toString('utf8');
      if (this.log.length > LOG_CAP) this.log = this.log.slice(-LOG_CAP);
    };
    this.child.stdout.on('data', keep);
    this.child.stderr.on('data', keep);
    this.exited = new Promise((r) => {
      this.child.once('exit', (code, signal) => {
        this.exit = { code, signal };
        live.delete(this.child);
        r(this.exit);
      });
      this.child.once('error', (err) => {
        this.log += `\n[spawn error: ${err.message}]\n`;
        this.exit = { code: null, signal: null, error: err };
        live.delete(this.child);
        r(this.exit);
      });
    });
  }

  get running() {
    return this.exit === null;
  }

  /* Waits up to timeout ms for exit; resolves the exit or null. */
  async waitExit(timeout = STOP_TIMEOUT_MS) {
    if (this.exit) return this.exit;
    let t;
    const res = await Promise.race([this.exited, new Promise((r) => { t = setTimeout(() => r(null), timeout); })]);
    clearTimeout(t);
    return res;
  }

  describeExit() {
    if (!this.exit) return 'running';
    return this.exit.signal ? `killed by ${this.exit.signal}` : `exit code ${this.exit.code}`;
  }
}

export class Relay {
  /* options: workers (default 2), config (extra or overriding keys),
   * dir (reuse an existing directory, e.g. one kept by stop({keepDir})),
   * defaultDirs (leave data_dir and run_dir out of the config, so the
   * defaults ./var/data and ./var/run apply under the temp dir). */
  constructor({ workers = 2, config = {}, dir = null, defaultDirs = false } = {}) {
    this.workers = workers;
    this.defaultDirs = defaultDirs;
    this.extraConfig = config;
    this.reuseDir = dir;
    this.stored = null;
    this.relayd = {}; /* worker number -> Proc */
    this.retired = []; /* Procs replaced by restartWorker, for the logs */
    this.clients = new Set();
  }

  /* The relay's websocket URL (valid once start() has picked the port). */
  get url() {
    return `ws://${HOST}:${this.port}`;
  }

  /* pid of 'stored' or of worker n. */
  pid(which) {
    const p = which === 'stored' ? this.stored : this.relayd[which];
    return p ? p.pid : null;
  }

  /* {stored: pid, 1: pid, 2: pid, ...}: every current process's pid. */
  get pids() {
    const out = { stored: this.pid('stored') };
    for (const n of Object.keys(this.relayd)) out[n] = this.relayd[n].pid;
    return out;
  }

  /* Writes the config, starts stored and every worker, and resolves with
   * this once each worker serves.  On failure it kills what it started,
   * removes its temp dir (not a reused one) and throws with the logs. */
  async start() {
    this.dir = this.reuseDir ?? mkdtempSync(join(tmpdir(), 'relay-it-'));
    this.port = this.port ?? await freePort();
    this.link = this.link ?? await linkConfig();
    this.runDir = join(this.dir, this.defaultDirs ? 'var/run' : 'run');
    this.dataDir = join(this.dir, this.defaultDirs ? 'var/data' : 'data');
    this.config = {
      bind: HOST,
      port: this.port,
      workers: this.workers,
      data_dir: this.defaultDirs ? undefined : this.dataDir,
      run_dir: this.defaultDirs ? undefined : this.runDir,
      log_level: 'info',
      ...this.link,
      ...this.extraConfig,
    };
    this.configPath = join(this.dir, 'relay.conf');
    writeFileSync(this.configPath, configText(this.config));
    try {
      await this.#startStored();
      for (let n = 1; n <= this.workers; n++) this.relayd[n] = this.#spawnWorker(n);
      for (let n = 1; n <= this.workers; n++) await this.#waitWorker(n);
    } catch (err) {
      await this.#killAll();
      const logs = this.logs();
      this.stopped = true;
      if (!this.reuseDir) rmSync(this.dir, { recursive: true, force: true });
      throw new Error(`${err.message}\n${logs}`);
    }
    return this;
  }

  /* Starts stored and waits until it says it is ready (its "ready:" log
   * line comes after every socket listens).  A file check alone would not
   * do after a crash: the dead process's socket file stays behind, and the
   * new one may even get the same inode. */
  async #startStored() {
    this.stored = new Proc('stored', binary('stored'), ['-c', this.configPath], this.dir);
    const proc = this.stored;
    await until(() => {
      if (!proc.running) throw new Error(`stored ${proc.describeExit()} during start`);
      /* The text line, or the JSON one under log_format = json. */
      return /: info: ready: |"level":"info","message":"ready: /.test(proc.log);
    }, { what: 'stored to log "ready"' });
  }

  #spawnWorker(n) {
    return new Proc(`relayd@${n}`, binary('relayd'), ['-c', this.configPath, '-i', String(n)], this.dir);
  }

  /* Waits until a websocket handshake lands on worker n. */
  async #waitWorker(n) {
    await until(async () => {
      const p = this.relayd[n];
      if (!p.running) throw new Error(`relayd@${n} ${p.describeExit()} during start`);
      const c = await this.tryConnect(1000);
      if (!c) return false;
      const hit = c.worker === n;
      await c.end();
      return hit;
    }, { interval: 10, what: `a websocket connection served by worker ${n}` });
  }

  /* A connection, or null if the handshake failed. */
  async tryConnect(timeout = 2000) {
    try {
      return await Client.open(this.url, { timeout });
    } catch {
      return null;
    }
  }

  /* A client on whichever worker the kernel picks; closed after the test.
   * opts go to Client.open (headers). */
  async connect(opts = {}) {
    const c = await Client.open(this.url, opts);
    this.clients.add(c);
    return c;
  }

  /* A client on worker n: opens connections until one lands there. */
  async connectTo(n, attempts = 64) {
    for (let i = 0; i < attempts; i++) {
      const c = await Client.open(this.url);
      if (c.worker === n) {
        this.clients.add(c);
        return c;
      }
      await c.end();
    }
    throw new Error(`no connection landed on worker ${n} in ${attempts} attempts`);
  }

  /* Ends every client connect() or connectTo() opened. */
  async closeClients() {
    const all = [...this.clients];
    this.clients.clear();
    await Promise.all(all.map((c) => c.end()));
  }

  /* Sends signal to 'stored' or worker n; for SIGKILL (or with wait: true)
   * waits for the exit and returns it. */
  async kill(which, signal = 'SIGTERM', { wait = signal === 'SIGKILL' } = {}) {
    const p = which === 'stored' ? this.stored : this.relayd[which];
    if (!p || !p.running) throw new Error(`${which} is not running`);
    p.killedByTest = true;
    p.child.kill(signal);
    if (!wait) return null;
    const ex = await p.waitExit();
    if (!ex) throw new Error(`${p.name} still running ${STOP_TIMEOUT_MS} ms after ${signal}`);
    return ex;
  }

  /* Starts worker n again (it must have exited) and waits until it serves. */
  async restartWorker(n) {
    const old = this.relayd[n];
    if (old && old.running) throw new Error(`relayd@${n} is still running`);
    if (old) this.retired.push(old);
    this.relayd[n] = this.#spawnWorker(n);
    try {
      await this.#waitWorker(n);
    } catch (err) {
      throw new Error(`${err.message}\n${this.logs()}`);
    }
  }

  /* Starts stored again (it must have exited) and waits for its socket. */
  async restartStored() {
    if (this.stored && this.stored.running) throw new Error('stored is still running');
    if (this.stored) this.retired.push(this.stored);
    try {
      await this.#startStored();
    } catch (err) {
      throw new Error(`${err.message}\n${this.logs()}`);
    }
  }

  /* GET path over HTTP with the given headers; resolves {status, headers, body}. */
  httpGet(path = '/', headers = {}) {
    return new Promise((resolveP, reject) => {
      const req = httpGet({ host: HOST, port: this.port, path, headers, timeout: 5000 }, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (d) => { body += d; });
        res.on('end', () => resolveP({ status: res.statusCode, headers: res.headers, body }));
      });
      req.on('timeout', () => req.destroy(new Error(`GET ${path} timed out`)));
      req.on('error', reject);
    });
  }

  /* Runs relayctl with this relay's config; resolves {code, stdout, stderr}. */
  relayctl(...args) {
    return run(binary('relayctl'), ['-c', this.configPath, ...args], { cwd: this.dir });
  }

  /* SIGTERM to every running process (workers first), waits for each, and
   * throws if any did not exit with code 0, or if any had exited before
   * without a test killing it (a crash).  Removes the temp dir unless
   * keepDir. */
  async stop({ keepDir = false } = {}) {
    this.stopped = true;
    await this.closeClients();
    const failures = [];
    for (const p of this.#allProcs()) {
      if (!p.running && !p.killedByTest && !p.stopping)
        failures.push(`${p.name} ${p.describeExit()} before stop (nothing asked it to exit)`);
    }
    const procs = [...Object.values(this.relayd), this.stored].filter((p) => p && p.running);
    for (const p of procs) {
      p.stopping = true;
      p.child.kill('SIGTERM');
      const ex = await p.waitExit();
      if (!ex) {
        p.child.kill('SIGKILL');
        await p.waitExit();
        failures.push(`${p.name} did not exit within ${STOP_TIMEOUT_MS} ms of SIGTERM`);
      } else if (ex.code !== 0) {
        failures.push(`${p.name} ${p.describeExit()} after SIGTERM (expected exit code 0)`);
      }
    }
    const logs = this.logs();
    if (!keepDir && this.dir) rmSync(this.dir, { recursive: true, force: true });
    if (failures.length) throw new Error(`${failures.join('; ')}\n${logs}`);
  }

  async #killAll() {
    const procs = [...Object.values(this.relayd), this.stored].filter((p) => p && p.running);
    for (const p of procs) p.child.kill('SIGKILL');
    await Promise.all(procs.map((p) => p.waitExit()));
  }

  /* Marks the current end of every log, for logsSince(). */
  mark() {
    const m = new Map();
    for (const p of this.#allProcs()) m.set(p, p.log.length);
    return m;
  }

  /* Every process's output (since mark, if given), each under a header. */
  logs(mark = null) {
    let out = '';
    for (const p of this.#allProcs()) {
      const from = mark && mark.has(p) ? Math.min(mark.get(p), p.log.length) : 0;
      const text = p.log.slice(from);
      out += `----- ${p.name} (pid ${p.pid}, ${p.describeExit()}) -----\n${text || '(no output)\n'}`;
    }
    return out;
  }

  #allProcs() {
    return [this.stored, ...this.retired, ...Object.values(this.relayd)].filter(Boolean);
  }
}

/* relayctl with relay's config and args, input written to its stdin
 * (bounded by timeout ms, scaled); resolves {code, signal, stdout, stderr}. */
export function relayctlInput(relay, args, input = '', timeout = 60000) {
  timeout = waitBound(timeout);
  return new Promise((resolveP, reject) => {
    const child = spawn(binary('relayctl'), ['-c', relay.configPath, ...args], { cwd: relay.dir });
    let stdout = '';
    let stderr = '';
    const t = setTimeout(() => child.kill('SIGKILL'), timeout);
    child.stdout.on('data', (d) => { stdout += d; });
    child.stderr.on('data', (d) => { stderr += d; });
    child.once('error', reject);
    child.once('close', (code, signal) => {
      clearTimeout(t);
      resolveP({ code, signal, stdout, stderr });
    });
    child.stdin.on('error', () => {});
    child.stdin.end(input);
  });
}

/* Runs a program to completion (bounded); resolves {code, signal, stdout, stderr}. */
export function run(bin, args, { cwd, timeout = 10000 } = {}) {
  timeout = waitBound(timeout);
  return new Promise((resolveP, reject) => {
    if (!existsSync(bin)) {
      reject(new Error(`${bin} does not exist (run make; RELAY_BUILD=${BUILD})`));
      return;
    }
    execFile(bin, args, { cwd, timeout, killSignal: 'SIGKILL' }, (err, stdout, stderr) => {
      const code = err ? (typeof err.code === 'number' ? err.code : null) : 0;
      resolveP({ code, signal: err ? err.signal ?? null : null, stdout, stderr, timedOut: !!(err && err.killed) });
    });
  });
}

/* The last test of a describe() using useRelay(): stopping the relay is
 * itself checked (exit code 0 on SIGTERM, no process gone before), and
 * reported as a test rather than as a hook. */
export function itStopsCleanly(relay) {
  it('every process exits with code 0 on SIGTERM and none died before', async () => {
    await relay.stop();
  });
}

/* Registers hooks in the enclosing describe(): a Relay started before its
 * tests and stopped after them, the test's clients closed after each test,
 * and the relay output of a failed test printed. */
export function useRelay(options = {}) {
  const relay = new Relay(options);
  let mark = null;
  before(async () => { await relay.start(); });
  after(async () => {
    if (relay.stored && !relay.stopped) await relay.stop();
  });
  beforeEach(() => { mark = relay.stored ? relay.mark() : null; });
  afterEach(async (t) => {
    await relay.closeClients();
    if (t.passed === false && relay.stored)
      console.error(`relay output during failed test "${t.name}":\n${relay.logs(mark)}`);
  });
  return relay;
}
