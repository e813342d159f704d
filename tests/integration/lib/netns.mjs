/*
 * netns.mjs - separate network stacks for netns.test.mjs: network
 * namespaces made with `ip netns`, veth pairs between them, a test CA and
 * certificates made with openssl, and a forwarder that lets the test's own
 * clients (in the machine's namespace) connect from inside one of them.
 *
 * Namespace and interface names carry the test process's pid, so two runs
 * never meet.  Addresses exist only inside the namespaces made here, and
 * nothing routes them to the machine's own interfaces: nothing leaves the
 * machine.  cleanup() deletes every namespace (and with it its veths).
 * Every command is bounded; a failing one throws with its stderr.
 */
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

function ip(...args) {
  return execFileSync('ip', args, { stdio: 'pipe', timeout: 10000 }).toString();
}

/* Why this machine cannot make namespaces and veths, or null when it can. */
export function netnsProblem() {
  if (typeof process.getuid === 'function' && process.getuid() !== 0)
    return 'creating network namespaces needs root';
  const probe = `rlp${process.pid}`;
  try {
    ip('netns', 'add', probe);
    try {
      ip('-n', probe, 'link', 'add', `${probe}a`, 'type', 'veth', 'peer', 'name', `${probe}b`);
    } finally {
      ip('netns', 'del', probe);
    }
  } catch (err) {
    return `cannot make a network namespace with a veth pair: ${String(err.stderr || err.message).trim()}`;
  }
  return null;
}

export class Netns {
  /* tag: a short word (up to 3 letters) of the test, for the names. */
  constructor(tag) {
    this.prefix = `${tag}${process.pid % 100000}`;
    this.names = [];
  }

  /* Makes namespace <prefix><suffix> with its loopback up; returns its name. */
  add(suffix) {
    const name = `${this.prefix}${suffix}`;
    ip('netns', 'add', name);
    this.names.push(name);
    ip('-n', name, 'link', 'set', 'lo', 'up');
    /* A veth set down keeps its IPv6 addresses, as a pulled cable would. */
    for (const conf of ['all', 'default'])
      execFileSync('ip', ['netns', 'exec', name, 'sh', '-c',
        `echo 1 > /proc/sys/net/ipv6/conf/${conf}/keep_addr_on_down`], { stdio: 'pipe', timeout: 10000 });
    return name;
  }

  /* The interface name of the veth end in namespace a facing b. */
  dev(a, b) {
    return `${this.prefix}${a.slice(-1)}${b.slice(-1)}`;
  }

  /* A veth pair between namespaces a and b, with addresses (CIDR, IPv4 or
   * IPv6; IPv6 without duplicate detection, so it is usable at once). */
  veth(a, addrA, b, addrB) {
    const da = this.dev(a, b);
    const db = this.dev(b, a);
    ip('-n', a, 'link', 'add', da, 'type', 'veth', 'peer', 'name', db, 'netns', b);
    for (const [ns, dev, addr] of [[a, da, addrA], [b, db, addrB]]) {
      for (const one of [].concat(addr)) {
        const v6 = one.includes(':');
        ip('-n', ns, ...(v6 ? ['-6'] : []), 'addr', 'add', one, 'dev', dev, ...(v6 ? ['nodad'] : []));
      }
      ip('-n', ns, 'link', 'set', dev, 'up');
    }
  }

  /* Sets the veth end in a facing b up or down. */
  link(a, b, up) {
    ip('-n', a, 'link', 'set', this.dev(a, b), up ? 'up' : 'down');
  }

  /* Runs tc with args inside namespace ns. */
  tc(ns, ...args) {
    return execFileSync('ip', ['netns', 'exec', ns, 'tc', ...args], { stdio: 'pipe', timeout: 10000 }).toString();
  }

  /* Why tc netem cannot run in namespace ns on the end facing peer, or null. */
  netemProblem(ns, peer) {
    try {
      this.tc(ns, 'qdisc', 'add', 'dev', this.dev(ns, peer), 'root', 'netem', 'delay', '1ms');
      this.tc(ns, 'qdisc', 'del', 'dev', this.dev(ns, peer), 'root');
      return null;
    } catch (err) {
      return `tc netem: ${String(err.stderr || err.message).trim()} (the kernel lacks sch_netem)`;
    }
  }

  /* The command that runs argv inside namespace ns (same pid: ip execs it). */
  command(ns, argv) {
    return ['ip', ['netns', 'exec', ns, ...argv]];
  }

  /* Deletes every namespace made here; the processes in them must be gone. */
  cleanup() {
    for (const name of this.names.reverse()) {
      try { ip('netns', 'del', name); } catch { /* already gone */ }
    }
    this.names = [];
  }
}

/* Makes in dir a CA (ca.pem) with certificates stored.pem and worker.pem
 * (and their .key files), and a second CA (otherca.pem) with stranger.pem:
 * the README's openssl commands, with P-256 keys. */
export function makeCerts(dir) {
  const ssl = (...args) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe', timeout: 30000 });
  const key = (name) => ssl('genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256',
    '-out', `${name}.key`);
  const ca = (name) => {
    key(name);
    ssl('req', '-x509', '-new', '-key', `${name}.key`, '-out', `${name}.pem`, '-days', '2',
      '-subj', `/CN=${name}`);
  };
  const cert = (name, by) => {
    key(name);
    ssl('req', '-new', '-key', `${name}.key`, '-out', `${name}.csr`, '-subj', `/CN=${name}`);
    writeFileSync(join(dir, `${name}.ext`), `subjectAltName=DNS:${name}\n`);
    ssl('x509', '-req', '-in', `${name}.csr`, '-CA', `${by}.pem`, '-CAkey', `${by}.key`,
      '-CAcreateserial', '-out', `${name}.pem`, '-days', '2', '-extfile', `${name}.ext`);
  };
  ca('ca');
  cert('stored', 'ca');
  cert('worker', 'ca');
  ca('otherca');
  cert('stranger', 'otherca');
}
