#!/usr/bin/env python3
# garbage.py - a write-policy plugin that prints a line that is not an answer
# for an event whose content starts with "garbage", and accepts every other.
import json
import sys

for line in sys.stdin:
    ev = json.loads(line)["event"]
    if ev["content"].startswith("garbage"):
        print("this is not JSON {", flush=True)
    else:
        print(json.dumps({"id": ev["id"], "action": "accept"}), flush=True)
