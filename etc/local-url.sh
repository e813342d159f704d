#!/bin/sh
# local-url.sh BIND PORT - prints the ws:// URL a client on this machine
# dials for a relay listening on BIND and PORT: localhost for a wildcard
# bind, brackets around an IPv6 address.  relayurl_of_bind() in
# relayd/relayurl.c makes the same URL for the worker's own use.
set -u
case $1 in
'' | 0.0.0.0 | :: | '[::]') host=localhost ;;
\[*) host=$1 ;;
*:*) host="[$1]" ;;
*) host=$1 ;;
esac
echo "ws://$host:$2"
