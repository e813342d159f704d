#!/bin/sh
# whitelist.sh - a write-policy plugin in POSIX shell: accepts the events of
# the pubkeys listed in whitelist.txt (one hex pubkey a line, in the working
# directory), rejects the others.  It reads the id and pubkey from the
# relay's request, which starts {"type":"new","event":{"id":..,"pubkey":..
while IFS= read -r line; do
	id=$(printf '%s\n' "$line" | sed -n 's/^{"type":"new","event":{"id":"\([0-9a-f]*\)".*/\1/p')
	pk=$(printf '%s\n' "$line" | sed -n 's/^{"type":"new","event":{"id":"[0-9a-f]*","pubkey":"\([0-9a-f]*\)".*/\1/p')
	if [ -n "$pk" ] && grep -qx "$pk" whitelist.txt 2>/dev/null; then
		printf '{"id":"%s","action":"accept"}\n' "$id"
	else
		printf '{"id":"%s","action":"reject","msg":"blocked: not on the whitelist"}\n' "$id"
	fi
done
