# What real test suites (tools/suites/run.sh: tornado, express, ws, curl,
# libuv) do with sockets, answered in the jail as outside: each case runs
# outside first, then on the backend under test.
. tests/lib.sh

new_places

# libuv's tcp_bind_error_inval: a second bind of a bound socket is the
# kernel's EINVAL (the landlock backend once refused it, setting the
# loopback device a second time).
expect_probe "outside: a second bind is EINVAL" "errno EINVAL" -- "$PROBE" bind-twice
expect_probe "a second bind is EINVAL" "errno EINVAL" -- jail -C "$W" -- "$PROBE" bind-twice

# libuv's tcp_bind_error_addrnotavail: an address of no interface of this
# host (TEST-NET-3) is the kernel's EADDRNOTAVAIL: nothing is served.
expect_probe "outside: binding an address of another host is EADDRNOTAVAIL" "errno EADDRNOTAVAIL" -- \
	"$PROBE" bind-tcp 203.0.113.7 0
expect_probe "binding an address of another host is EADDRNOTAVAIL" "errno EADDRNOTAVAIL" -- \
	jail -C "$W" -- "$PROBE" bind-tcp 203.0.113.7 0
expect_probe "binding an address of another host (IPv6) is EADDRNOTAVAIL" "errno EADDRNOTAVAIL" -- \
	jail -C "$W" -- "$PROBE" bind-tcp 2001:db8::7 0

# libuv's tcp_listen_without_bind: listen() on a socket never bound picks
# a port on 0.0.0.0; in the jail the run reaches it, and (the landlock
# backend binds it to the loopback device) the remote host does not.
expect_control "outside: listening on a socket never bound works" -- "$PROBE" listen-unbound
cat >"$W/unbound.sh" <<'SH'
"$1" listen-unbound 3 >unbound.out 2>&1 &
# the test library's wait_until is not in this shell: the same poll, 10 s
i=0
until grep -q -E '^(listening|probe: errno)' unbound.out; do
	i=$((i + 1)); [ "$i" -lt 200 ] || break; sleep 0.05
done
port=$(sed -n 's/^listening //p' unbound.out)
[ -n "$port" ] || { cat unbound.out; exit 1; }
echo "$port" >unbound.port
"$1" connect-tcp 127.0.0.1 "$port"
SH
expect_probe "listening on a socket never bound works, and the run reaches it" ok -- \
	jail -C "$W" --read "$PROBE" -- sh "$W/unbound.sh" "$PROBE"
if is_root && ip netns list 2>/dev/null | grep -q '^stockade-remote\b'; then
	rm -f "$W/unbound.port"
	jail -C "$W" -- "$PROBE" listen-unbound 3 >"$T/unbound.out" 2>&1 &
	server=$!
	wait_until grep -q -E '^(listening|probe: errno)' "$T/unbound.out"
	port=$(sed -n 's/^listening //p' "$T/unbound.out")
	if [ -n "$port" ]; then
		expect_probe "a listener never bound is not reachable from the remote host" "errno ECONNREFUSED" -- \
			ip netns exec stockade-remote "$PROBE" connect-tcp 10.203.0.1 "$port"
	else
		fail "a jailed listener never bound is listening"
		diag "$(cat "$T/unbound.out")"
	fi
	kill "$server" 2>/dev/null
	wait "$server" 2>/dev/null
fi

# libuv's pipe_getsockname and pipe_set_chmod, Node's server.address(): a
# Unix socket is named as the command named it (the landlock backend once
# bound it through a descriptor of its own, /proc/self/fd/N/NAME), by a
# relative and an absolute path, and a chmod of that name works.
cd "$W" || exit 1
expect_control "outside: a Unix socket bears the name it was bound to" -- "$PROBE" unix-name rel.sock
cd - >/dev/null || exit 1
expect_probe "a Unix socket bound by a relative path bears that name" ok -- \
	jail -C "$W" -- "$PROBE" unix-name rel.sock
expect_probe "a Unix socket bound by an absolute path bears that name" ok -- \
	jail -C "$W" -- "$PROBE" unix-name "$W/abs.sock"
mkdir -p "$T/outside"
expect_probe "a Unix socket outside the workspace is still refused" "errno $(hidden_errno)" -- \
	jail -C "$W" -- "$PROBE" unix-name "$T/outside/no.sock"

# The landlock backend approves that bind and lets the kernel make the
# socket: a second thread that swaps the path for one outside the
# workspace after the check must never get a socket made there.
expect_control "outside: the bind race runs" -- "$PROBE" unix-bind-race "$W/good.sock" "$T/outside/bad.sock" 200
expect_probe "the bind race runs in the jail" ok -- \
	jail -C "$W" -- "$PROBE" unix-bind-race "$W/good.sock" "$T/outside/bad.sock" 3000
bad=$(printf '%s\n' "$PROBE_OUTPUT" | sed -n 's/^made-at-bad //p')
good=$(printf '%s\n' "$PROBE_OUTPUT" | sed -n 's/^made-at-good //p')
if [ "$bad" = 0 ] && [ "${good:-0}" -gt 0 ] && [ ! -e "$T/outside/bad.sock" ]; then
	pass "no socket was ever made outside the workspace ($good in it)"
else
	fail "no socket was ever made outside the workspace"
	diag "$PROBE_OUTPUT"
fi

plan_done
