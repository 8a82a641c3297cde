#!/bin/bash
# The fake internet of network allow's tests: a network namespace of its
# own (stockade-fakenet), joined to this machine by a veth pair with
# private addresses (10.204.0.1 and fd00:204::1 here; 10.204.0.2 to .4
# and fd00:204::2 there), where tests/helpers/fakenet.py serves a name
# server, HTTPS, HTTP, an ssh-like service and an npm registry, with a CA
# of its own (DIR/ca.pem). Nothing else is routed; no traffic leaves the
# machine. Needs root: .ci/run brings it up before the suites run, and a
# test run as root brings it up itself when it is missing.
#
#     tests/fakenet.sh up DIR      (idempotent; DIR world-readable: ca.pem, log)
#     tests/fakenet.sh down DIR
set -u
NS=stockade-fakenet
here=$(cd "$(dirname "$0")" && pwd)
case ${1:-} in
up)
	dir=$2
	mkdir -p "$dir/npm"
	chmod 755 "$dir" "$dir/npm"
	if [ ! -s "$dir/server.pem" ]; then
		openssl req -x509 -newkey rsa:2048 -nodes -days 3650 -subj "/CN=stockade fakenet CA" \
			-keyout "$dir/ca.key" -out "$dir/ca.pem" >/dev/null 2>&1 || exit 1
		openssl req -newkey rsa:2048 -nodes -subj "/CN=a.test" -keyout "$dir/server.key" \
			-out "$dir/server.csr" >/dev/null 2>&1 || exit 1
		printf 'subjectAltName=DNS:a.test,DNS:b.test,DNS:c.test,DNS:registry.test,DNS:*.rotate.test,DNS:ssh.test,IP:10.204.0.2,IP:10.204.0.3\n' >"$dir/san.ext"
		openssl x509 -req -in "$dir/server.csr" -CA "$dir/ca.pem" -CAkey "$dir/ca.key" -CAcreateserial \
			-days 3650 -extfile "$dir/san.ext" -out "$dir/server.pem" >/dev/null 2>&1 || exit 1
		chmod 644 "$dir/ca.pem" "$dir/server.pem"
		chmod 600 "$dir/ca.key" "$dir/server.key"
	fi
	# The registry's one package: its tarball and its integrity, for a
	# package-lock.json of the test's.
	if [ ! -s "$dir/npm/stockade-demo-1.0.0.tgz" ]; then
		pkg=$(mktemp -d) || exit 1
		mkdir "$pkg/package"
		printf '{"name": "stockade-demo", "version": "1.0.0", "main": "index.js"}\n' >"$pkg/package/package.json"
		printf 'module.exports = "stockade-demo 1.0.0";\n' >"$pkg/package/index.js"
		tar -C "$pkg" --owner=0 --group=0 --mtime=2026-01-01 -czf "$dir/npm/stockade-demo-1.0.0.tgz" package || exit 1
		rm -rf "$pkg"
		printf 'sha512-%s\n' "$(openssl dgst -sha512 -binary "$dir/npm/stockade-demo-1.0.0.tgz" | base64 -w0)" \
			>"$dir/npm/integrity"
		chmod 644 "$dir/npm/"*
	fi
	if ! ip netns list | grep -q "^$NS\b"; then
		ip netns add "$NS" || exit 1
		ip link add stockade-f0 type veth peer name stockade-f1 netns "$NS" || exit 1
		ip addr add 10.204.0.1/24 dev stockade-f0
		ip -6 addr add fd00:204::1/64 dev stockade-f0 nodad
		ip link set stockade-f0 up
		for a in 10.204.0.2/24 10.204.0.3/24 10.204.0.4/24; do
			ip -n "$NS" addr add "$a" dev stockade-f1
		done
		ip -n "$NS" -6 addr add fd00:204::2/64 dev stockade-f1 nodad
		ip -n "$NS" link set stockade-f1 up
		ip -n "$NS" link set lo up
	fi
	if ! ip netns pids "$NS" 2>/dev/null | grep -q .; then
		: >"$dir/log"
		chmod 666 "$dir/log"
		rm -f "$dir/out"
		ip netns exec "$NS" /usr/bin/python3 "$here/helpers/fakenet.py" "$dir" >"$dir/out" 2>&1 </dev/null &
		for _ in $(seq 100); do grep -q ready "$dir/out" 2>/dev/null && break; sleep 0.05; done
		grep -q ready "$dir/out" || { cat "$dir/out" >&2; exit 1; }
	fi
	;;
down)
	for pid in $(ip netns pids "$NS" 2>/dev/null); do kill "$pid"; done
	ip link del stockade-f0 2>/dev/null
	ip netns del "$NS" 2>/dev/null
	;;
*)
	echo "usage: $0 up DIR | down DIR" >&2
	exit 2
	;;
esac
