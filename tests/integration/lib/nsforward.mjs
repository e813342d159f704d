/*
 * nsforward.mjs - run inside a test's network namespace (lib/netns.mjs):
 * `node nsforward.mjs SOCKET HOST PORT` listens on the Unix socket SOCKET
 * (a file, so reachable from the machine's namespace) and carries each
 * connection on to HOST:PORT over TCP from inside the namespace.  Prints
 * "listening" once it does; exits 0 on SIGTERM.
 */
import { connect, createServer } from 'node:net';

const [path, host, port] = process.argv.slice(2);
const server = createServer((inner) => {
  const outer = connect({ host, port: Number(port) });
  inner.pipe(outer);
  outer.pipe(inner);
  for (const [a, b] of [[inner, outer], [outer, inner]]) {
    a.on('error', () => b.destroy());
    a.on('close', () => b.destroy());
  }
});
server.listen(path, () => console.log('listening'));
process.on('SIGTERM', () => process.exit(0));
