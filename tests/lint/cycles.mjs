// cycles.mjs - fails when the production .c files depend on each other in a circle.
//
// Usage: node tests/lint/cycles.mjs BUILD
//        node tests/lint/cycles.mjs --self-test BUILD
// BUILD is the build directory; each X.c has its object at BUILD/obj/X.o.
// `make cycles` builds the objects and runs both forms.
//
// The files: every .c in common/, proto/, stored/, stored/relayctl/ and relayd/.
// Tests, tests/fuzz/ and bench/ are out of scope.
// A file's module is X.c plus its own header X.h, when X.h exists.
//
// File A depends on file B (A != B) when either holds:
// - include: A.c or A.h has `#include "..."` naming B.h, B's own header;
// - call: A.o has an undefined symbol (nm's U) that B.o defines as a global symbol.
// A header with no .c of the same name (stored/stored.h, relayd/relayd.h) belongs to
// no file, so including it adds no edge.
// A symbol resolves as the linker resolves it: first within A's own program
// (stored/, stored/relayctl/ or relayd/), then in common/ and proto/.
// A cycle is a strongly connected component of two or more files.
//
// Output: one block per cycle, each edge with its kinds, and the symbols or headers behind them.
// Exit status: 0 without a cycle; 1 with one; 2 on a usage error or a missing object.
// --self-test runs the check on tests/lint/fixture/ (objects under BUILD/obj/tests/lint/fixture/).
// It exits 0 only when its report is exactly the fixture's two planted cycles, so the check cannot silently pass.

import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { dirname, join, normalize, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const DIRS = ['common', 'proto', 'stored', 'stored/relayctl', 'relayd'];
// A program's files resolve symbols among themselves first, then in the library.
const LIBRARY = ['common', 'proto'];
const FIXTURE = 'tests/lint/fixture';
// The fixture plants one include cycle (up.c, down.c) and one call cycle (ping.c, pong.c);
// leaf.c is called by ping.c and is in neither.
const F = FIXTURE;
const FIXTURE_REPORT = [
  `${F}/down.c -> ${F}/up.c -> ${F}/down.c`,
  `  ${F}/down.c -> ${F}/up.c: include (${F}/up.h)`,
  `  ${F}/up.c -> ${F}/down.c: include (${F}/down.h)`,
  `${F}/ping.c -> ${F}/pong.c -> ${F}/ping.c`,
  `  ${F}/ping.c -> ${F}/pong.c: call (pong)`,
  `  ${F}/pong.c -> ${F}/ping.c: call (ping)`,
];

function listSources(dirs) {
  const files = [];
  for (const dir of dirs) {
    for (const name of readdirSync(join(ROOT, dir)).sort()) {
      if (name.endsWith('.c')) files.push(`${dir}/${name}`);
    }
  }
  return files;
}

function groupOf(file) {
  const dir = dirname(file);
  return LIBRARY.includes(dir) ? 'library' : dir;
}

// The quoted includes of one file, as paths relative to ROOT.
function includesOf(file) {
  const path = join(ROOT, file);
  if (!existsSync(path)) return [];
  const out = [];
  for (const line of readFileSync(path, 'utf8').split('\n')) {
    const m = /^\s*#\s*include\s*"([^"]+)"/.exec(line);
    if (m) out.push(relative(ROOT, normalize(join(ROOT, dirname(file), m[1]))));
  }
  return out;
}

// nm's view of each object: the global symbols it defines and those it needs.
function readObjects(files, objdir) {
  const objects = files.map((f) => join(objdir, f.replace(/\.c$/, '.o')));
  const missing = objects.filter((o) => !existsSync(o));
  if (missing.length) {
    console.error(`cycles: missing objects (build them first): ${missing.join(' ')}`);
    process.exit(2);
  }
  const byObject = new Map(objects.map((o, i) => [o, files[i]]));
  const syms = new Map(files.map((f) => [f, { defs: new Set(), undefs: new Set() }]));
  const text = execFileSync('nm', ['-A', '-g', ...objects], { encoding: 'utf8', maxBuffer: 64 << 20 });
  for (const line of text.split('\n')) {
    const m = /^(.*\.o):\s*(?:[0-9a-fA-F]+)?\s+([A-Za-z])\s+(\S+)$/.exec(line);
    if (!m) continue;
    const entry = syms.get(byObject.get(m[1]));
    if (m[2] === 'U') entry.undefs.add(m[3]);
    else entry.defs.add(m[3]);
  }
  return syms;
}

function addEdge(graph, from, to, kind, what) {
  if (from === to) return;
  const edges = graph.get(from);
  if (!edges.has(to)) edges.set(to, { include: new Set(), call: new Set() });
  edges.get(to)[kind].add(what);
}

function buildGraph(files, objdir) {
  const graph = new Map(files.map((f) => [f, new Map()]));
  const owner = new Map(files.map((f) => [f.replace(/\.c$/, '.h'), f]));
  for (const file of files) {
    for (const inc of [...includesOf(file), ...includesOf(file.replace(/\.c$/, '.h'))]) {
      if (owner.has(inc)) addEdge(graph, file, owner.get(inc), 'include', inc);
    }
  }
  const syms = readObjects(files, objdir);
  const definer = new Map(); // group -> symbol -> file
  for (const file of files) {
    const group = groupOf(file);
    if (!definer.has(group)) definer.set(group, new Map());
    for (const s of syms.get(file).defs) definer.get(group).set(s, file);
  }
  const library = definer.get('library') || new Map();
  for (const file of files) {
    const own = definer.get(groupOf(file));
    for (const s of syms.get(file).undefs) {
      const to = own.get(s) || library.get(s);
      if (to) addEdge(graph, file, to, 'call', s);
    }
  }
  return graph;
}

// Tarjan's algorithm, iterative; returns the components of two or more files.
function cyclicComponents(graph) {
  const index = new Map();
  const low = new Map();
  const onStack = new Set();
  const stack = [];
  const comps = [];
  let next = 0;
  for (const start of graph.keys()) {
    if (index.has(start)) continue;
    const work = [[start, [...graph.get(start).keys()], 0]];
    index.set(start, next); low.set(start, next); next++;
    stack.push(start); onStack.add(start);
    while (work.length) {
      const frame = work[work.length - 1];
      const [v, succ] = frame;
      if (frame[2] < succ.length) {
        const w = succ[frame[2]++];
        if (!index.has(w)) {
          index.set(w, next); low.set(w, next); next++;
          stack.push(w); onStack.add(w);
          work.push([w, [...graph.get(w).keys()], 0]);
        } else if (onStack.has(w)) {
          low.set(v, Math.min(low.get(v), index.get(w)));
        }
        continue;
      }
      work.pop();
      if (work.length) {
        const parent = work[work.length - 1][0];
        low.set(parent, Math.min(low.get(parent), low.get(v)));
      }
      if (low.get(v) !== index.get(v)) continue;
      const comp = [];
      let w;
      do { w = stack.pop(); onStack.delete(w); comp.push(w); } while (w !== v);
      if (comp.length > 1) comps.push(comp.sort());
    }
  }
  return comps.sort((a, b) => (a[0] < b[0] ? -1 : 1));
}

// The shortest cycle through the component's first file (breadth-first, inside the component).
function cyclePath(graph, comp) {
  const members = new Set(comp);
  const start = comp[0];
  const prev = new Map([[start, null]]);
  const queue = [start];
  while (queue.length) {
    const v = queue.shift();
    for (const w of [...graph.get(v).keys()].sort()) {
      if (!members.has(w)) continue;
      if (w === start) {
        const path = [start];
        for (let u = v; u !== null; u = prev.get(u)) path.unshift(u);
        return path;
      }
      if (!prev.has(w)) { prev.set(w, v); queue.push(w); }
    }
  }
  return [start];
}

function describeEdge(edge) {
  const parts = [];
  if (edge.include.size) parts.push(`include (${[...edge.include].sort().join(', ')})`);
  if (edge.call.size) parts.push(`call (${[...edge.call].sort().join(', ')})`);
  return parts.join(', ');
}

function report(graph, comps) {
  const lines = [];
  for (const comp of comps) {
    const path = cyclePath(graph, comp);
    lines.push(path.join(' -> '));
    for (let i = 0; i + 1 < path.length; i++) {
      lines.push(`  ${path[i]} -> ${path[i + 1]}: ${describeEdge(graph.get(path[i]).get(path[i + 1]))}`);
    }
    if (comp.length > path.length - 1) lines.push(`  (one cycle of a component of ${comp.length} files: ${comp.join(' ')})`);
  }
  return lines;
}

function check(dirs, objdir) {
  const graph = buildGraph(listSources(dirs), objdir);
  const comps = cyclicComponents(graph);
  return { comps, lines: report(graph, comps) };
}

function main(argv) {
  const selfTest = argv[0] === '--self-test';
  const build = selfTest ? argv[1] : argv[0];
  if (!build || argv.length !== (selfTest ? 2 : 1)) {
    console.error('usage: node tests/lint/cycles.mjs [--self-test] BUILD');
    process.exit(2);
  }
  const objdir = join(resolve(build), 'obj');
  if (selfTest) {
    const { lines } = check([FIXTURE], objdir);
    if (lines.join('\n') !== FIXTURE_REPORT.join('\n')) {
      console.error(`cycles: self-test failed; the report on ${FIXTURE} differs from the planted cycles:`);
      console.error(lines.join('\n') || '(no cycles found)');
      process.exit(1);
    }
    console.log(`cycles: self-test ok (the planted include and call cycles of ${FIXTURE})`);
    return;
  }
  const { comps, lines } = check(DIRS, objdir);
  if (!comps.length) {
    console.log(`cycles: none among the .c files of ${DIRS.join(', ')}`);
    return;
  }
  console.log(lines.join('\n'));
  console.log(`cycles: ${comps.length} found`);
  process.exit(1);
}

main(process.argv.slice(2));
