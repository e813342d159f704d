/*
 * admin-access.test.mjs - only stored's user (and root) may use the admin
 * socket: the socket file is mode 0600, and even with the mode loosened
 * stored checks the peer's uid and refuses others.  Runs only as root
 * (it needs another user to try from).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { useRelay } from './lib/relay.mjs';

const asRoot = process.getuid && process.getuid() === 0;

function nngcatAs(user, socket) {
  return spawnSync('runuser', ['-u', user, '--', 'nngcat', '--req', '--dial', `ipc://${socket}`,
    '--data', 'stats', '--ascii', '--recv-timeout', '3'], { encoding: 'utf8', timeout: 10000 });
}

describe('admin socket access', { skip: !asRoot && 'needs root to try another user' }, () => {
  const relay = useRelay({ workers: 1 });

  it('is mode 0600, and refuses another uid even when the mode is loosened', async () => {
    const socket = join(relay.runDir, 'stored-admin.ipc');
    assert.equal(statSync(socket).mode & 0o777, 0o600);
    for (const dir of [relay.dir, relay.runDir]) chmodSync(dir, 0o755);
    const denied = nngcatAs('nobody', socket);
    assert.doesNotMatch(denied.stdout, /"events"/, 'nobody read stats through a 0600 socket');
    chmodSync(socket, 0o666);
    const refused = nngcatAs('nobody', socket);
    assert.match(refused.stdout, /permission denied/);
    const root = spawnSync('nngcat', ['--req', '--dial', `ipc://${socket}`, '--data', 'stats', '--ascii'],
      { encoding: 'utf8', timeout: 10000 });
    assert.match(root.stdout, /"events"/);
  });
});
