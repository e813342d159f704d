#!/usr/bin/env node
// hang.mjs - a write-policy plugin in Node that never answers an event whose
// content starts with "hang" and accepts every other.  It ends when its
// stdin does.
import { createInterface } from 'node:readline';

for await (const line of createInterface({ input: process.stdin })) {
  const ev = JSON.parse(line).event;
  if (!ev.content.startsWith('hang'))
    process.stdout.write(JSON.stringify({ id: ev.id, action: 'accept', msg: '' }) + '\n');
}
