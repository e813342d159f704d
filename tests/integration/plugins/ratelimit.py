#!/usr/bin/env python3
# ratelimit.py - a write-policy plugin that lets each pubkey publish at most
# LIMIT events an hour, across every worker: the relay runs one plugin
# process for all of them.
import json
import sys
import time

LIMIT = 3
WINDOW = 3600
seen = {}
for line in sys.stdin:
    ev = json.loads(line)["event"]
    now = time.time()
    times = [t for t in seen.get(ev["pubkey"], []) if now - t < WINDOW]
    if len(times) >= LIMIT:
        out = {"id": ev["id"], "action": "reject", "msg": "rate-limited: %d events an hour" % LIMIT}
    else:
        times.append(now)
        out = {"id": ev["id"], "action": "accept"}
    seen[ev["pubkey"]] = times
    print(json.dumps(out), flush=True)
