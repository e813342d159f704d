#!/usr/bin/env python3
# policy.py - a write-policy plugin (strfry's format) that acts on each
# event's content, for plugin.test.mjs:
#   "reject-plain ..."   reject, message without a prefix
#   "reject-prefixed ..." reject, message "restricted: members only"
#   "shadow ..."          shadowReject
#   anything else         accept
# Each request is appended to requests.log in the working directory (the
# relay's), one JSON line, so the test sees what the relay sent.
import json
import sys

log = open("requests.log", "a", buffering=1)
for line in sys.stdin:
    req = json.loads(line)
    log.write(line if line.endswith("\n") else line + "\n")
    ev = req["event"]
    content = ev.get("content", "")
    out = {"id": ev["id"], "action": "accept"}
    if content.startswith("reject-plain"):
        out = {"id": ev["id"], "action": "reject", "msg": "not today"}
    elif content.startswith("reject-prefixed"):
        out = {"id": ev["id"], "action": "reject", "msg": "restricted: members only"}
    elif content.startswith("shadow"):
        out = {"id": ev["id"], "action": "shadowReject"}
    print(json.dumps(out), flush=True)
