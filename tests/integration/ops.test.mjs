/*
 * ops.test.mjs - what an operator meets first (issue 32, "Operator
 * basics"): --version on the three programs and relay_build_info; the
 * process_* metrics of stored and of each worker; relayctl finding its
 * config without -c and taking an npub; HEAD answered as GET without a
 * body; log lines with their time, or JSON with log_format = json; and
 * `make run` (etc/run.sh) failing clearly instead of printing its banner.
 */
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, connect } from 'node:net';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { npubEncode } from 'nostr-tools/nip19';
import { BUILD, HOST, binary, configText, freePort, run, until, useRelay } from './lib/relay.mjs';
import { metricValue } from './lib/metrics.mjs';
import { keypair } from './lib/client.mjs';

const HERE = dirname(fileURLToPath(import.meta.url));
const RUN_SH = resolve(HERE, '../../etc/run.sh');
/* The lines of a log that are complete: a process may be mid-write. */
const wholeLines = (log) => log.split('\n').slice(0, -1).filter(Boolean);
const TIME = '\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}\\.\\d{3}Z';

describe('--version and relay_build_info', () => {
  const relay = useRelay({ workers: 1 });

  it('each program prints its version and commit and exits 0', async () => {
    const commits = new Set();
    for (const name of ['stored', 'relayd', 'relayctl']) {
      const r = await run(binary(name), ['--version']);
      assert.equal(r.code, 0, r.stderr);
      const m = r.stdout.match(new RegExp(`^${name} (\\d+\\.\\d+\\.\\d+) \\(commit ([0-9a-f]{12}|unknown)\\)\\n$`));
      assert.ok(m, `${name} --version printed ${JSON.stringify(r.stdout)}`);
      commits.add(`${m[1]} ${m[2]}`);
    }
    assert.equal(commits.size, 1, [...commits].join(', '));
  });

  it('relay_build_info carries the same version and commit, value 1', async () => {
    const v = (await run(binary('stored'), ['--version'])).stdout.match(/ (\S+) \(commit (\S+)\)/);
    const text = await until(async () => {
      const t = (await relay.httpGet('/metrics')).body;
      return t.includes('relay_build_info') && t;
    }, { timeout: 6000, interval: 200, what: 'relay_build_info in /metrics' });
    assert.match(text, /# TYPE relay_build_info gauge/);
    assert.equal(metricValue(text, `relay_build_info{version="${v[1]}",commit="${v[2]}"}`), 1);
    const nip11 = JSON.parse((await relay.httpGet('/', { Accept: 'application/nostr+json' })).body);
    assert.equal(nip11.version, v[1]);
  });
});

describe('process_* metrics', () => {
  const relay = useRelay({ workers: 2 });

  it('stored (unlabelled) and each worker (worker="N") report memory, CPU, fds and start', async () => {
    const names = ['process_resident_memory_bytes', 'process_cpu_seconds_total', 'process_open_fds',
      'process_max_fds', 'process_start_time_seconds'];
    const text = await until(async () => {
      const t = (await relay.httpGet('/metrics')).body;
      return metricValue(t, 'process_open_fds{worker="2"}') > 0 && t;
    }, { timeout: 6000, interval: 200, what: 'both workers in process_open_fds' });
    const nowS = Date.now() / 1000;
    for (const name of names) {
      assert.match(text, new RegExp(`# TYPE ${name} ${name.endsWith('_total') ? 'counter' : 'gauge'}`));
      for (const series of [name, `${name}{worker="1"}`, `${name}{worker="2"}`])
        assert.ok(metricValue(text, series) > 0, `${series} = ${metricValue(text, series)}`);
    }
    for (const series of ['process_start_time_seconds', 'process_start_time_seconds{worker="1"}']) {
      const start = metricValue(text, series);
      assert.ok(start <= nowS + 1 && start > nowS - 600, `${series} = ${start}, now ${nowS}`);
    }
    /* A process holds far less than 1 GiB here, and more than 1 MiB. */
    const rss = metricValue(text, 'process_resident_memory_bytes{worker="1"}');
    assert.ok(rss > 1 << 20 && rss < 1 << 30, `rss ${rss}`);
    assert.ok(metricValue(text, 'process_max_fds') >= metricValue(text, 'process_open_fds'));
  });
});

describe('relayctl without -c, and with an npub', () => {
  const relay = useRelay({ workers: 1 });
  const ctl = (args, opts) => run(binary('relayctl'), args, opts);

  it('reads the file CRELAY_CONFIG names', async () => {
    const r = await new Promise((res) => {
      const child = spawn(binary('relayctl'), ['--json', 'stats'],
        { cwd: tmpdir(), env: { ...process.env, CRELAY_CONFIG: relay.configPath } });
      let out = '';
      child.stdout.on('data', (d) => { out += d; });
      child.on('exit', (code) => res({ code, out }));
    });
    assert.equal(r.code, 0);
    assert.equal(typeof JSON.parse(r.out).events, 'number');
  });

  it('reads ./etc/relay.conf when neither -c nor CRELAY_CONFIG is given', { skip: existsSync('/etc/crelay/relay.conf') && 'this machine has /etc/crelay/relay.conf' }, async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'relayctl-cwd-'));
    try {
      mkdirSync(join(cwd, 'etc'));
      writeFileSync(join(cwd, 'etc/relay.conf'), configText({ run_dir: relay.runDir }));
      const env = { ...process.env };
      delete env.CRELAY_CONFIG;
      const r = await new Promise((res) => {
        const child = spawn(binary('relayctl'), ['workers'], { cwd, env });
        let out = '';
        child.stdout.on('data', (d) => { out += d; });
        child.on('exit', (code) => res({ code, out }));
      });
      assert.equal(r.code, 0);
      assert.match(r.out, /^worker 1: pid \d+/m);
    } finally {
      rmSync(cwd, { recursive: true, force: true });
    }
  });

  it('ban and unban take an npub and send its hex key', async () => {
    const kp = keypair();
    const r = await relay.relayctl('ban', npubEncode(kp.pk), 'by', 'npub');
    assert.equal(r.code, 0, r.stderr);
    const bans = JSON.parse((await relay.relayctl('--json', 'bans')).stdout);
    assert.ok(JSON.stringify(bans).includes(kp.pk), JSON.stringify(bans));
    assert.equal((await relay.relayctl('unban', npubEncode(kp.pk))).code, 0);
    assert.ok(!(await relay.relayctl('--json', 'bans')).stdout.includes(kp.pk));
  });

  it('a malformed pubkey is bad usage: exit 2, and nothing is sent', async () => {
    const kp = keypair();
    const npub = npubEncode(kp.pk);
    /* Its last checksum character changed, so the checksum fails. */
    const broken = npub.slice(0, -1) + (npub.endsWith('q') ? 'p' : 'q');
    for (const bad of ['xyz', kp.pk.slice(1), kp.pk.toUpperCase(), broken]) {
      const r = await relay.relayctl('ban', bad);
      assert.equal(r.code, 2, `ban ${bad}: ${r.stderr}`);
      assert.match(r.stderr, /64 hex digits or npub1/);
    }
    assert.equal((await ctl(['-c', relay.configPath, 'unban', 'nope'])).code, 2);
  });
});

/* Two HTTP requests on one raw connection, the second asking to close
 * it; resolves everything the relay sent.  A HEAD answer with body bytes
 * would show them in front of the second answer. */
function twoRequests(port, first, second) {
  return new Promise((res, rej) => {
    const s = connect(port, HOST);
    let got = '';
    s.setTimeout(5000, () => s.destroy(new Error(`timed out; got ${JSON.stringify(got)}`)));
    s.on('data', (d) => { got += d.toString('latin1'); });
    s.on('end', () => res(got));
    s.on('error', rej);
    s.write(`${first} HTTP/1.1\r\nHost: ${HOST}:${port}\r\nAccept: text/html\r\n\r\n` +
      `${second} HTTP/1.1\r\nHost: ${HOST}:${port}\r\nConnection: close\r\n\r\n`);
  });
}

function head(port, path, headers = {}) {
  return new Promise((res, rej) => {
    const req = request({ method: 'HEAD', host: HOST, port, path, headers, timeout: 5000 }, (r) => {
      r.resume();
      r.on('end', () => res({ status: r.statusCode, headers: r.headers }));
    });
    req.on('timeout', () => req.destroy(new Error('HEAD timed out')));
    req.on('error', rej);
    req.end();
  });
}

describe('HEAD', () => {
  const relay = useRelay({ workers: 1 });

  for (const [path, headers] of [['/', { Accept: 'text/html' }], ['/', {}], ['/', { Accept: 'application/nostr+json' }],
    ['/stats.json', {}], ['/nope', {}]]) {
    it(`HEAD ${path} ${JSON.stringify(headers)} has GET's status and headers`, async () => {
      const got = await relay.httpGet(path, headers);
      const h = await head(relay.port, path, headers);
      assert.equal(h.status, got.status);
      assert.equal(h.headers['content-type'], got.headers['content-type']);
      /* /stats.json changes from second to second; the page and NIP-11 do not. */
      if (path !== '/stats.json')
        assert.equal(Number(h.headers['content-length']), Buffer.byteLength(got.body));
    });
  }

  it('sends no body: the next request on the connection is answered cleanly', async () => {
    const text = await twoRequests(relay.port, 'HEAD /', 'GET /nope');
    const [first, rest] = [text.slice(0, text.indexOf('\r\n\r\n') + 4), text.slice(text.indexOf('\r\n\r\n') + 4)];
    assert.match(first, /^HTTP\/1\.1 200 /);
    assert.match(first, /content-length: [1-9]\d*/i);
    assert.match(rest, /^HTTP\/1\.1 404 /, `after the HEAD answer came ${JSON.stringify(rest.slice(0, 80))}`);
  });
});

describe('the status page with relay_url set', () => {
  const relay = useRelay({ workers: 1, config: { relay_url: 'wss://relay.example.org/<x>' } });

  it('embeds the configured URL for the page to show, escaped inside the script', async () => {
    const r = await relay.httpGet('/', { Accept: 'text/html' });
    assert.equal(r.status, 200);
    assert.match(r.body, /const configuredUrl = "wss:\/\/relay\.example\.org\/\\u003cx>";/);
    assert.match(r.body, /<code id="url"><\/code>/);
  });
});

describe('log lines off the journal carry their time', () => {
  const relay = useRelay({ workers: 1, config: {} });

  it('every line of stored and the worker starts with its UTC time', () => {
    for (const p of [relay.stored, relay.relayd[1]]) {
      const lines = wholeLines(p.log);
      assert.ok(lines.length > 0, `${p.name} logged nothing`);
      for (const line of lines)
        assert.match(line, new RegExp(`^${TIME} (stored|relayd@1): (error|warn|info|debug): `), line);
    }
  });
});

describe('log_format = json', () => {
  const relay = useRelay({ workers: 1, config: { log_format: 'json' } });

  it('gives one JSON object per line with time, process, instance, level and message', () => {
    for (const [p, process, instance] of [[relay.stored, 'stored', 0], [relay.relayd[1], 'relayd', 1]]) {
      const lines = wholeLines(p.log);
      assert.ok(lines.length > 0, `${p.name} logged nothing`);
      for (const line of lines) {
        const o = JSON.parse(line);
        assert.deepEqual(Object.keys(o), ['time', 'process', 'instance', 'level', 'message'], line);
        assert.match(o.time, new RegExp(`^${TIME}$`));
        assert.equal(o.process, process);
        assert.equal(o.instance, instance);
        assert.ok(['error', 'warn', 'info', 'debug'].includes(o.level), line);
      }
    }
    assert.ok(wholeLines(relay.stored.log).some((l) => JSON.parse(l).message.startsWith('ready: ')));
  });
});

/* etc/run.sh, which `make run` runs, on a config in a fresh directory. */
describe('make run (etc/run.sh)', () => {
  const dirs = [];
  after(() => { for (const d of dirs) rmSync(d, { recursive: true, force: true }); });

  async function setup(extra = {}) {
    const dir = mkdtempSync(join(tmpdir(), 'relay-run-'));
    dirs.push(dir);
    const port = extra.port ?? await freePort();
    const config = join(dir, 'relay.conf');
    writeFileSync(config, configText({ bind: HOST, port, workers: 2, data_dir: join(dir, 'data'),
      run_dir: join(dir, 'run'), ...extra }));
    return { dir, port, config };
  }

  /* Starts run.sh; resolves when it exits, or at the banner with the
   * child still running. */
  function start({ dir, config }, timeout = 30000) {
    return new Promise((res, rej) => {
      const child = spawn('sh', [RUN_SH, BUILD, config], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
      const out = { stdout: '', stderr: '', child };
      const t = setTimeout(() => { child.kill('SIGKILL'); rej(new Error(`run.sh neither failed nor printed the banner: ${JSON.stringify(out.stdout + out.stderr)}`)); }, timeout);
      child.stdout.on('data', (d) => {
        out.stdout += d;
        if (/^relay: /m.test(out.stdout)) { clearTimeout(t); res({ ...out, code: null }); }
      });
      child.stderr.on('data', (d) => { out.stderr += d; });
      child.on('exit', (code) => { clearTimeout(t); res({ ...out, code }); });
    });
  }

  it('a bad config: exit 1, stored\'s reason and a clear line, no banner', async () => {
    const r = await start(await setup({ max_filters: 'many' }));
    assert.equal(r.code, 1, r.stdout + r.stderr);
    assert.match(r.stderr, /max_filters/);
    assert.match(r.stderr, /make run: stored did not start/);
    assert.doesNotMatch(r.stdout, /^relay: /m);
  });

  it('a port another program serves: exit 1, no worker could listen, no banner', async () => {
    const srv = createServer();
    await new Promise((r) => srv.listen(0, HOST, r));
    try {
      const r = await start(await setup({ port: srv.address().port }));
      assert.equal(r.code, 1, r.stdout + r.stderr);
      assert.match(r.stderr, /cannot listen on/);
      assert.match(r.stderr, /make run: no worker could listen on 127\.0\.0\.1 port \d+/);
      assert.doesNotMatch(r.stdout, /^relay: /m);
    } finally {
      srv.close();
    }
  });

  it('a good config: the banner once both workers serve, exit 0 on SIGTERM', async () => {
    const s = await setup();
    const r = await start(s);
    assert.equal(r.code, null, r.stdout + r.stderr);
    assert.match(r.stdout, new RegExp(`^relay: ws://127\\.0\\.0\\.1:${s.port} \\(2 workers; Ctrl-C stops\\)$`, 'm'));
    const list = await run(binary('relayctl'), ['-c', s.config, '--json', 'workers']);
    assert.equal(JSON.parse(list.stdout).worker_list.length, 2);
    const exited = new Promise((res) => r.child.once('exit', (code) => res(code)));
    r.child.kill('SIGTERM');
    assert.equal(await exited, 0);
  });
});
