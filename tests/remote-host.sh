#!/bin/bash
# The "remote host" of the network tests: a network namespace this machine
# makes for itself, joined to the host by a veth pair with private
# addresses (10.203.0.1 here, 10.203.0.2 there), with a counting listener
# on 10.203.0.2:7. Nothing else is routed; no traffic leaves the machine.
# Needs root: .ci/run brings it up before the suites run, and a test run
# as root brings it up itself when it is missing.
#
#     tests/remote-host.sh up NETPEER COUNTFILE     (idempotent)
#     tests/remote-host.sh down
set -u
NS=stockade-remote
case ${1:-} in
up)
	netpeer=$2 count=$3
	if ! ip netns list | grep -q "^$NS\b"; then
		ip netns add "$NS" || exit 1
		ip link add stockade-r0 type veth peer name stockade-r1 netns "$NS" || exit 1
		ip addr add 10.203.0.1/24 dev stockade-r0
		ip link set stockade-r0 up
		ip -n "$NS" addr add 10.203.0.2/24 dev stockade-r1
		ip -n "$NS" link set stockade-r1 up
		ip -n "$NS" link set lo up
	fi
	if ! ip netns pids "$NS" 2>/dev/null | grep -q .; then
		rm -f "$count" "$count.out"
		ip netns exec "$NS" "$netpeer" tcp 10.203.0.2 7 "$count" >"$count.out" 2>&1 </dev/null &
		for _ in $(seq 100); do grep -q ready "$count.out" 2>/dev/null && break; sleep 0.05; done
		chmod 644 "$count" 2>/dev/null
	fi
	;;
down)
	for pid in $(ip netns pids "$NS" 2>/dev/null); do kill "$pid"; done
	ip link del stockade-r0 2>/dev/null
	ip netns del "$NS" 2>/dev/null
	;;
*)
	echo "usage: $0 up NETPEER COUNTFILE | down" >&2
	exit 2
	;;
esac
