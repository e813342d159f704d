#!/bin/sh
# install.sh install|uninstall - `make install` and `make uninstall`.
#
# The Makefile passes every path in the environment:
#   BUILD    where stored, relayd and relayctl were built
#   DESTDIR  prefixed to every installed path (empty for a real install)
#   BINDIR   where the binaries go ($PREFIX/bin)
#   UNITDIR  where the systemd units go (/etc/systemd/system)
#   CONFDIR  where relay.conf goes (/etc/crelay)
#   WORKER_HOST  1 on a host whose workers dial a stored elsewhere: adds
#            relayd@.service.d/worker-host.conf and masks stored.service
#
# The units are generated from etc/systemd/*.in with the real BINDIR and
# CONFDIR (without DESTDIR, which is only where the files are put).  The
# config is written once from `stored --print-config` with the directories
# systemd gives the units (StateDirectory=, RuntimeDirectory=) and is never
# overwritten.  The system user is created, and systemd told to reload,
# only for a real install (DESTDIR empty) by root on a machine where
# systemd runs.
set -eu

user=crelay
state_dir=/var/lib/crelay
run_dir=/run/crelay
src=$(dirname "$0")
: "${BUILD:?}" "${BINDIR:?}" "${UNITDIR:?}" "${CONFDIR:?}"
DESTDIR=${DESTDIR:-}

say() {
	printf '%s\n' "$*"
}

real_install() {
	[ -z "$DESTDIR" ] && [ "$(id -u)" -eq 0 ]
}

systemd_running() {
	[ -z "$DESTDIR" ] && [ -d /run/systemd/system ]
}

install_units() {
	install -d -m 0755 "$DESTDIR$UNITDIR"
	install -m 0644 "$src/relay.target" "$DESTDIR$UNITDIR/relay.target"
	for tmpl in "$src"/*.in; do
		unit=$(basename "$tmpl" .in)
		sed -e "s|@BINDIR@|$BINDIR|g" -e "s|@CONFDIR@|$CONFDIR|g" "$tmpl" >"$DESTDIR$UNITDIR/$unit.tmp"
		chmod 0644 "$DESTDIR$UNITDIR/$unit.tmp"
		mv "$DESTDIR$UNITDIR/$unit.tmp" "$DESTDIR$UNITDIR/$unit"
	done
	say "installed relay.target stored.service relayd@.service relay-stream@.service in $DESTDIR$UNITDIR"
	[ "${WORKER_HOST:-0}" = 1 ] && install_worker_host
	return 0
}

# A worker host (WORKER_HOST=1): the drop-in that starts workers for a
# stored on another host, and stored.service masked there.
install_worker_host() {
	dropin=$DESTDIR$UNITDIR/relayd@.service.d
	install -d -m 0755 "$dropin"
	sed -e "s|@BINDIR@|$BINDIR|g" -e "s|@CONFDIR@|$CONFDIR|g" -e "s|@UNITDIR@|$UNITDIR|g" \
		"$src/relayd@.service.d/worker-host.conf.in" >"$dropin/worker-host.conf"
	chmod 0644 "$dropin/worker-host.conf"
	ln -sf /dev/null "$DESTDIR$UNITDIR/stored.service"
	say "worker host: installed $dropin/worker-host.conf and masked stored.service;" \
		"set link_rpc_url, link_pub_url, link_reply_url and link_tls_* in $CONFDIR/relay.conf"
}

install_config() {
	conf=$DESTDIR$CONFDIR/relay.conf
	if [ -e "$conf" ]; then
		say "kept the existing $conf (not overwritten)"
		return
	fi
	install -d -m 0755 "$DESTDIR$CONFDIR"
	{
		say "# $CONFDIR/relay.conf - written by make install; edit freely, it is"
		say "# never overwritten.  Under systemd the workers are the relayd@N units"
		say "# relay.target wants (the workers key counts only for make run)."
		say ""
		"$BUILD/stored" --print-config |
			sed -e "s|^data_dir *=.*|data_dir = $state_dir|" -e "s|^run_dir *=.*|run_dir = $run_dir|"
	} >"$conf.tmp"
	chmod 0644 "$conf.tmp"
	mv "$conf.tmp" "$conf"
	say "wrote $conf"
}

create_user() {
	if ! real_install; then
		say "not creating the user '$user' (DESTDIR set or not root); on the target run:"
		say "  useradd --system --user-group --home-dir $state_dir --no-create-home --shell /usr/sbin/nologin $user"
		return
	fi
	if getent passwd "$user" >/dev/null; then
		say "user '$user' exists"
		return
	fi
	useradd --system --user-group --home-dir "$state_dir" --no-create-home \
		--shell /usr/sbin/nologin --comment "crelay Nostr relay" "$user"
	say "created the system user '$user'"
}

daemon_reload() {
	if systemd_running; then
		systemctl daemon-reload
		say "systemctl daemon-reload done"
	fi
}

do_install() {
	install -d -m 0755 "$DESTDIR$BINDIR"
	for b in stored relayd relayctl; do
		install -m 0755 "$BUILD/$b" "$DESTDIR$BINDIR/$b"
	done
	say "installed stored relayd relayctl in $DESTDIR$BINDIR"
	install_units
	install_config
	create_user
	daemon_reload
	say "start it with: systemctl start relay.target (at boot: systemctl enable relay.target)"
}

do_uninstall() {
	if systemd_running && systemctl is-active --quiet relay.target; then
		say "relay.target is active; stopping it"
		# Naming the units too makes systemctl wait until they are down.
		systemctl stop relay.target stored.service 'relayd@*.service'
	fi
	for b in stored relayd relayctl; do
		rm -f "$DESTDIR$BINDIR/$b"
	done
	for u in relay.target stored.service relayd@.service relayd@.service.d/worker-host.conf; do
		rm -f "$DESTDIR$UNITDIR/$u"
	done
	rmdir "$DESTDIR$UNITDIR/relayd@.service.d" 2>/dev/null || true
	# Links made by `systemctl enable relay.target` and `add-wants`.
	rm -f "$DESTDIR/etc/systemd/system/multi-user.target.wants/relay.target"
	rm -rf "$DESTDIR/etc/systemd/system/relay.target.wants"
	daemon_reload
	say "removed the binaries and units; kept $DESTDIR$CONFDIR/relay.conf, $state_dir and the user '$user'"
}

case ${1:-} in
install) do_install ;;
uninstall) do_uninstall ;;
*)
	say "usage: install.sh install|uninstall" >&2
	exit 2
	;;
esac
