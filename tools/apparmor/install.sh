#!/bin/sh
# tools/apparmor/install.sh install|uninstall BINDIR DESTDIR
#
# The AppArmor profile that lets the installed stockade make user
# namespaces, where the host restricts them (RESTRICT names the sysctl;
# APPARMOR=yes installs it whatever the host says, for a package built
# elsewhere). Loaded at once when installing for this host as root.
set -eu
what=$1 bindir=$2 destdir=${3:-}
restrict=${RESTRICT:-/proc/sys/kernel/apparmor_restrict_unprivileged_userns}
profile="$destdir/etc/apparmor.d/stockade"
here=$(dirname "$0")

case $what in
install)
	if [ "${APPARMOR:-}" != yes ] && [ "$(cat "$restrict" 2>/dev/null || echo 0)" != 1 ]; then
		echo "AppArmor does not restrict user namespaces here: no profile needed"
		exit 0
	fi
	mkdir -p "$destdir/etc/apparmor.d"
	sed "s|@BINDIR@|$bindir|g" "$here/stockade.in" >"$profile.tmp"
	chmod 644 "$profile.tmp"
	mv "$profile.tmp" "$profile"
	echo "installed $profile"
	if [ -z "$destdir" ] && command -v apparmor_parser >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
		apparmor_parser -r "$profile" && echo "loaded it"
	fi
	;;
uninstall)
	if [ -e "$profile" ]; then
		if [ -z "$destdir" ] && command -v apparmor_parser >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
			apparmor_parser -R "$profile" 2>/dev/null || true
		fi
		rm -f "$profile"
	fi
	;;
*)
	echo "usage: $0 install|uninstall BINDIR DESTDIR" >&2
	exit 2
	;;
esac
