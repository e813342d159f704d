#!/usr/bin/env node
// hang.mjs - a write-policy plugin in Node that never answers an event whose
// content starts with "hang" and accepts every other.  Each request is
// appended to requests.log in the working directory (the relay's).  It
// ends when its stdin does.
import { appendFileSync } from 'node:fs';
import { createInterface } from 'node:readline';

for await (const line of createInterface({ input: process.stdin })) {
  appendFileSync('requests.log', line + '\n');
  const ev = JSON.parse(line).event;
  if (!ev.content.startsWith('hang'))
    process.stdout.write(JSON.stringify({ id: ev.id, action: 'accept', msg: '' }) + '\n');
}
