#!/bin/sh
# crash.sh - a write-policy plugin that exits (status 3) on an event whose
# request mentions "crash-now", and accepts every other.
while IFS= read -r line; do
	case "$line" in
	*crash-now*) exit 3 ;;
	esac
	id=$(printf '%s\n' "$line" | sed -n 's/^{"type":"new","event":{"id":"\([0-9a-f]*\)".*/\1/p')
	printf '{"id":"%s","action":"accept"}\n' "$id"
done
