# The network: with loopback, a command reaches its own listeners and
# nothing else; a Unix socket only where the policy grants its path; the
# remote host only with --net on. In the landlock backend the connect
# supervisor decides every connect, bind and listen; in the namespace jail
# the network namespace does.
. tests/lib.sh

new_places
LL=false
[ "$TEST_BACKEND" = landlock ] && LL=true
REFUSED=EACCES    # the supervisor's answer: not ECONNREFUSED
in_jail() {
	jail -C "$W" "$@"
}
# jail_bg OUT ARGS...: a jail in the background, its output in OUT; $bg is
# stockade's own pid (not a shell's), so that stop_bg ends the run whole
# whenever the test is done with it, not after a lifetime guessed ahead.
jail_bg() {
	local out=$1
	shift
	"${JAIL[@]}" -C "$W" "$@" >"$out" 2>&1 &
	bg=$!
}
stop_bg() {
	kill "$bg" 2>/dev/null
	wait "$bg" 2>/dev/null
}

# Listeners of the host's: on all addresses of each family (so that every
# local spelling would reach them), and on 127.0.0.1 alone.
netpeer_start tcp 0.0.0.0 0
PW4=$PEER_PORT
CW4=$PEER_COUNT
netpeer_start tcp :: 0
PW6=$PEER_PORT
CW6=$PEER_COUNT
netpeer_start tcp 127.0.0.1 0
P4=$PEER_PORT
C4=$PEER_COUNT
expect_control "THREATS 40 control: outside, the host's 0.0.0.0 service answers" -- "$PROBE" connect-tcp 127.0.0.1 "$PW4"
expect_control "THREATS 41 control: outside, the host's :: service answers" -- "$PROBE" connect-tcp ::1 "$PW6"
expect_control "THREATS 40 control: outside, the host's 127.0.0.1 service answers" -- "$PROBE" connect-tcp 127.0.0.1 "$P4"
counts() {
	cat "$CW4" "$CW6" "$C4" | tr '\n' ' '
}
base=$(counts)

# Every spelling of this host: none reaches the host's listeners.
host_ip=$(ip -4 -o addr show scope global 2>/dev/null | awk '{ sub(/\/.*/, "", $4); print $4; exit }')
[ -n "$host_ip" ] || host_ip=10.203.0.1
for target in "127.0.0.1 $PW4" "127.0.0.2 $PW4" "0.0.0.0 $PW4" "::ffff:127.0.0.1 $PW4" "::ffff:7f00:1 $PW4" \
	"$host_ip $PW4" "::1 $PW6" ":: $PW6" "127.0.0.1 $PW6" "127.0.0.1 $P4"; do
	set -- $target
	if $LL; then
		expect_probe "THREATS 40, 41: loopback: $1 port $2 (a listener outside the run) is refused" "errno $REFUSED" -- \
			in_jail --net loopback -- "$PROBE" connect-tcp "$1" "$2"
	else
		expect_probe "THREATS 40, 41: loopback: $1 port $2 is the jail's own network" "errno $([ "$1" = "$host_ip" ] && echo ENETUNREACH || echo ECONNREFUSED)" -- \
			in_jail --net loopback -- "$PROBE" connect-tcp "$1" "$2"
	fi
done
[ "$(counts)" = "$base" ] && pass "THREATS 40: the host's listeners accepted nothing" ||
	fail "THREATS 40: the host's listeners accepted nothing (before: $base, after: $(counts))"
if $LL; then
	expect_probe "loopback: a port nobody listens on gives ECONNREFUSED, as usual" "errno ECONNREFUSED" -- \
		in_jail --net loopback -- "$PROBE" connect-tcp 127.0.0.2 "$P4"
fi

# The same port in the other family: the jail listens on [::1]:P, the
# host on 127.0.0.1:P; 127.0.0.1:P is still the host's.
cat >"$W/other-family.sh" <<'SH'
"$1" listen-tcp ::1 "$2" 3 >listen6.out 2>&1 &
for i in $(seq 50); do grep -q listening listen6.out && break; sleep 0.05; done
"$1" connect-tcp ::1 "$2" >/dev/null || exit 3
exec "$1" connect-tcp 127.0.0.1 "$2"
SH
if $LL; then
	expect_probe "THREATS 42: the run's own [::1]:P does not open the host's 127.0.0.1:P" "errno $REFUSED" -- \
		in_jail --net loopback --read "$PROBE" -- sh other-family.sh "$PROBE" "$P4"
fi

# Its own listeners: TCP on 127.0.0.1 and ::1, a Unix path in its tmp, an
# abstract name it bound.
cat >"$W/own.sh" <<'SH'
probe=$1 kind=$2 where=$3
# The last run's own.out must not be read as this one's.
rm -f own.out
case $kind in
tcp) "$probe" listen-tcp "$where" 0 20 >own.out 2>&1 & ;;
unix) "$probe" listen-unix "$where" 20 >own.out 2>&1 & ;;
abstract) "$probe" listen-abstract "$where" 20 >own.out 2>&1 & ;;
esac
for i in $(seq 400); do grep -q listening own.out && break; sleep 0.05; done
port=$(sed -n 's/^listening //p' own.out)
case $kind in
tcp) exec "$probe" connect-tcp "$where" "$port" ;;
unix) exec "$probe" connect-unix "$where" ;;
abstract) exec "$probe" connect-abstract "$where" ;;
esac
SH
for where in 127.0.0.1 ::1; do
	expect_probe "its own listener on $where is reachable" ok -- in_jail --net loopback --read "$PROBE" -- sh own.sh "$PROBE" tcp "$where"
done
# An abstract listener of the run's with connections it accepted open
# (each shows the same name): the next client's connect is decided on the
# listener, not on one of them.
expect_control "control: outside, ten clients of one abstract listener" -- "$PROBE" abstract-clients "stockade-clients-$$" 10
expect_probe "ten clients of the run's own abstract listener, each accepted and kept" ok -- \
	in_jail --net loopback -- "$PROBE" abstract-clients "stockade-clients-$$" 10
# A thread that is not its process's main one binds, listens and connects
# (tornado's and a Java server's threads): the supervisor decides its
# calls as any other's.
expect_control "outside: a second thread serves itself" -- "$PROBE" thread-server 127.0.0.1
for where in 127.0.0.1 ::1; do
	expect_probe "a second thread binds, listens and connects on $where" ok -- in_jail --net loopback -- "$PROBE" thread-server "$where"
done
# The supervisor keeps each caller's pidfd for its next call. A process
# that gets the id of one it kept, reaped since, is still decided as
# itself: the kept pidfd reaches nothing (ESRCH), and a new one is opened
# and checked. To make the kernel give that id again, the run goes in a
# user and pid namespace of the test's own, whose next id a helper there
# sets (ns_last_pid) when the first child is gone; the jailed process
# forks nothing in between.
if $LL; then
	cat >"$W/reuse.py" <<'PY'
import os, socket, sys, time
w = sys.argv[1]
srv = socket.socket()
srv.bind(("127.0.0.1", 0))
srv.listen(8)
srv.settimeout(5)
port = srv.getsockname()[1]
def child():
    try:
        socket.create_connection(("127.0.0.1", port), timeout=5).close()
        os._exit(0)
    except OSError as e:
        print("child connect:", e, flush=True)
        os._exit(1)
def one():
    pid = os.fork()
    if pid == 0:
        child()
    _, st = os.waitpid(pid, 0)
    if st == 0:
        srv.accept()[0].close()
    return pid, st
first, st1 = one()
# written whole, then named: the helper never reads it half made
open(w + "/reuse.ready.tmp", "w").write(str(first))
os.replace(w + "/reuse.ready.tmp", w + "/reuse.ready")
end = time.time() + 20
while not os.path.exists(w + "/reuse.go"):
    if time.time() > end:
        print("the helper never said go", flush=True)
        sys.exit(1)
    time.sleep(0.01)
second, st2 = one()
print("pids", first, second, "connects", st1, st2, flush=True)
PY
	cat >"$W/reuse-helper.py" <<'PY'
import os, sys, time
w = sys.argv[1]
end = time.time() + 20
while not os.path.exists(w + "/reuse.ready") and time.time() < end:
    time.sleep(0.01)
pid = int(open(w + "/reuse.ready").read())
open("/proc/sys/kernel/ns_last_pid", "w").write(str(pid - 1))
open(w + "/reuse.go", "w").close()
PY
	rm -f "$W/reuse.ready" "$W/reuse.go"
	out=$(unshare -Urpfm --mount-proc sh -c 'mount -t tmpfs none /dev/shm || exit 3
		python3 "$1/reuse-helper.py" "$1" &
		"$0" --backend landlock -q -C "$1" --net loopback -- python3 "$1/reuse.py" "$1"' "$STOCKADE" "$W" 2>&1)
	case $out in
	*"pids "*" connects 0 0"*)
		set -- $(printf '%s\n' "$out" | sed -n 's/^pids \([0-9]*\) \([0-9]*\) .*/\1 \2/p')
		if [ "${1:-x}" = "${2:-y}" ]; then
			pass "a process with the id of one gone since is decided as itself (pid $1 twice, both connects allowed)"
		else
			fail "a process with the id of one gone since is decided as itself (the id was not given again: $*)"
		fi
		;;
	*) fail "a process with the id of one gone since is decided as itself"; diag "$out" ;;
	esac
fi
expect_probe "its own Unix socket in its tmp is reachable" ok -- \
	in_jail --net loopback --read "$PROBE" -- sh -c 'exec sh own.sh "$0" unix "$TMPDIR/own.sock"' "$PROBE"
expect_probe "an abstract name it bound is reachable" ok -- in_jail --net loopback --read "$PROBE" -- sh own.sh "$PROBE" abstract "stockade-own-$$"

# The Docker socket stand-in, a D-Bus-like abstract name and a host
# loopback service: never, in any network mode.
netpeer_start unix "$T/docker.sock"
DC=$PEER_COUNT
netpeer_start abstract "stockade-host-$$"
AC=$PEER_COUNT
expect_control "THREATS 49 control: outside, the stand-in Docker socket answers" -- "$PROBE" connect-unix "$T/docker.sock"
expect_control "THREATS 48 control: outside, the host's abstract socket answers" -- "$PROBE" connect-abstract "stockade-host-$$"
dbase=$(cat "$DC") abase=$(cat "$AC")
for net in off loopback on; do
	expect_probe "THREATS 49, 50: --net $net: a socket file outside the grants is refused" "errno $($LL && echo $REFUSED || echo ENOENT)" -- \
		in_jail --net "$net" -- "$PROBE" connect-unix "$T/docker.sock"
	expect_probe "THREATS 48: --net $net: the host's abstract socket is refused" "errno $($LL && echo $REFUSED || { [ $net = on ] && echo EPERM || echo ECONNREFUSED; })" -- \
		in_jail --net "$net" -- "$PROBE" connect-abstract "stockade-host-$$"
done
ln -s "$T/docker.sock" "$W/innocent.sock"
expect_probe "THREATS 50: a workspace symlink to the Docker socket is refused" "errno $($LL && echo $REFUSED || echo ENOENT)" -- \
	in_jail --net loopback -- "$PROBE" connect-unix "$W/innocent.sock"
[ "$(cat "$DC")" = "$dbase" ] && [ "$(cat "$AC")" = "$abase" ] && pass "THREATS 48, 49: the stand-ins accepted nothing" || fail "THREATS 48, 49: the stand-ins accepted nothing"

# A blocking connect to the run's own socket file whose backlog is full
# waits until the server accepts, and reaches that server: on the landlock
# backend the supervisor tries it again later through the socket file it
# pinned, which it keeps open until then.
cat >"$W/backlog.py" <<'PY'
import socket, sys, threading, time
p = sys.argv[1]
srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
srv.bind(p)
srv.listen(0)
held = []
while True:
    c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    c.setblocking(False)
    try:
        c.connect(p)
        held.append(c)
    except BlockingIOError:
        c.close()
        break
def serve():
    time.sleep(0.3)
    for _ in range(len(held) + 1):
        a, _ = srv.accept()
        a.sendall(b"hello")
threading.Thread(target=serve, daemon=True).start()
t0 = time.time()
b = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
b.connect(p)
print("waited %.1f" % (time.time() - t0), "got", b.recv(5).decode(), flush=True)
PY
bl_out=$(cd "$W" && python3 backlog.py "$W/backlog-out.sock" 2>&1)
rm -f "$W/backlog-out.sock"
case $bl_out in
*"got hello"*) pass "outside: a connect to a full Unix backlog waits for the accept" ;;
*) fail "outside: a connect to a full Unix backlog waits for the accept"; diag "$bl_out" ;;
esac
bl_out=$(in_jail --net loopback -- python3 "$W/backlog.py" "$W/backlog.sock" 2>&1)
case $bl_out in
*"waited 0."[2-9]*"got hello"* | *"waited "[1-9]*"got hello"*) pass "a connect to the run's own full Unix backlog waits, then reaches its server" ;;
*) fail "a connect to the run's own full Unix backlog waits, then reaches its server"; diag "$bl_out" ;;
esac

# Sockets loopback does not give, and TCP Fast Open.
if $LL; then
	expect_probe "a UDP socket is given (udp.sh: what it reaches)" ok -- in_jail --net loopback -- "$PROBE" socket inet dgram udp
	expect_probe "UDP-Lite is refused" "errno EPROTONOSUPPORT" -- in_jail --net loopback -- "$PROBE" socket inet dgram udplite
	expect_probe "THREATS 45: a raw socket is refused" "errno EPROTONOSUPPORT" -- in_jail --net loopback -- "$PROBE" socket inet raw icmp
	expect_probe "THREATS 44: MPTCP is refused" "errno EPROTONOSUPPORT" -- in_jail --net loopback -- "$PROBE" socket inet stream mptcp
	expect_probe "THREATS 48: a Unix datagram socket is refused" "errno EPERM" -- in_jail --net loopback -- "$PROBE" socket unix dgram default
	expect_probe "a Unix datagram socketpair still works" ok -- in_jail --net loopback -- "$PROBE" socketpair-dgram
fi
expect_probe "THREATS 43: TCP Fast Open is refused" "errno EPERM" -- in_jail --net loopback -- "$PROBE" fastopen 127.0.0.1 "$PW4"
[ "$(counts)" = "$base" ] && pass "THREATS 43: no SYN reached the host's listeners" || fail "THREATS 43: no SYN reached the host's listeners"

# A server in the jail serves the run, never the network. One on 0.0.0.0
# or :: works (the landlock backend binds it to the loopback device).
for where in 0.0.0.0 ::; do
	expect_probe "listening on $where works" ok -- in_jail --net loopback -- "$PROBE" listen-tcp "$where" 0 0
done
# The command's first call is the supervisor's from its first instruction:
# a listen on 0.0.0.0 as the first thing it does, 60 times (on the landlock
# backend the process that execs says so first, and the listener is left
# to the supervisor from then; once a call there was answered ENOSYS).
expect_control "control: outside, a listen on 0.0.0.0 as the first act works" -- "$PROBE" listen-tcp 0.0.0.0 0 0
n_ok=0 last=
for _ in $(seq 60); do
	out=$(in_jail --net loopback -- "$PROBE" listen-tcp 0.0.0.0 0 0 2>&1)
	case $out in *"probe: ok"*) n_ok=$((n_ok + 1)) ;; *) last=$out ;; esac
done
[ $n_ok = 60 ] && pass "a listen on 0.0.0.0 as the command's first act: 60 runs of 60 work" ||
	{ fail "a listen as the command's first act: $n_ok runs of 60 work"; diag "$last"; }
if $LL; then
	expect_probe "binding the host's own address is refused" "errno $REFUSED" -- in_jail --net loopback -- "$PROBE" bind-tcp "$host_ip" 0
	# listen() picks a port on 0.0.0.0; bound to the loopback device
	# first (suites.sh: the remote host does not reach it).
	expect_probe "listening on a socket never bound works" ok -- \
		in_jail --net loopback -- "$PROBE" listen-unbound
	expect_probe "listening on 127.0.0.1 is fine" ok -- in_jail --net loopback -- "$PROBE" listen-tcp 127.0.0.1 0 0
fi

# The remote host: a network namespace with 10.203.0.2, made for the test.
REMOTE_COUNT=${STOCKADE_REMOTE_COUNT:-/tmp/stockade-remote.count}
if is_root; then
	ip netns list 2>/dev/null | grep -q '^stockade-remote\b' || at_exit tests/remote-host.sh down
	tests/remote-host.sh up "$NETPEER" "$REMOTE_COUNT"
fi
if [ -s "$REMOTE_COUNT" ] && "$PROBE" connect-tcp 10.203.0.2 7 >/dev/null 2>&1; then
	pass "THREATS 47 control: outside, the remote host answers"
	rbase=$(cat "$REMOTE_COUNT")
	expect_probe "THREATS 47: loopback: the remote host is refused (ENETUNREACH)" "errno ENETUNREACH" -- \
		in_jail --net loopback -- "$PROBE" connect-tcp 10.203.0.2 7
	expect_probe "THREATS 47: off: the remote host is refused" "errno EAFNOSUPPORT" -- \
		in_jail --net off -- "$PROBE" connect-tcp 10.203.0.2 7
	expect_probe "THREATS 47: loopback: the remote host as a mapped IPv6 address is refused (ENETUNREACH)" "errno ENETUNREACH" -- \
		in_jail --net loopback -- "$PROBE" connect-tcp ::ffff:10.203.0.2 7
	if ! $LL; then
		# The namespace jail's way out that leads nowhere: refused at
		# once as before (ENETUNREACH), and each address recorded, with
		# the rule, its source and what would allow it.
		out=$(in_jail --net loopback --read "$PROBE" --report "$T/out.json" -- sh -c \
			'"$0" connect-tcp 10.203.0.2 7; "$0" udp-send 10.203.0.2 7; python3 -c "$1"; exit 3' "$PROBE" \
			'import socket, time
t = time.monotonic()
try:
    socket.create_connection(("10.203.0.2", 7), timeout=5)
except OSError as e:
    print("py", e.errno, int((time.monotonic() - t) * 1000))' 2>&1)
		printf '%s\n' "$out" | grep -q '^probe: errno ENETUNREACH' && pass "a connect out is refused with ENETUNREACH, as before" ||
			{ fail "a connect out is refused with ENETUNREACH, as before"; diag "$out"; }
		ms=$(printf '%s\n' "$out" | sed -n 's/^py 101 //p')
		[ -n "$ms" ] && [ "$ms" -lt 100 ] && pass "at once (${ms} ms, under 100), never left to time out" ||
			{ fail "at once (under 100 ms), never left to time out"; diag "$out"; }
		python3 - "$T/out.json" <<'PY' && pass "the report names the address, the rule, its source and --connect" || { fail "the report names the address, the rule, its source and --connect"; diag "$(cat "$T/out.json")"; }
import json, sys
d = [x for x in json.load(open(sys.argv[1]))["denials"] if x["what"] == "10.203.0.2:7"]
c = [x for x in d if x["kind"] == "connect"]
u = [x for x in d if x["kind"] == "datagram"]
assert c and c[0]["errno"] == "ENETUNREACH" and "network loopback" in c[0]["rule"], d
assert c[0]["source"] == "--net on the command line" and c[0]["fix"].startswith("--connect 10.203.0.2:7"), c
assert u and "--net on" in u[0]["fix"], d
PY
		printf '%s\n' "$out" | grep -q '^stockade: refused: connect 10.203.0.2:7 (ENETUNREACH).*; to allow: --connect 10.203.0.2:7' &&
			pass "and one stderr line names it and --connect" || { fail "and one stderr line names it and --connect"; diag "$out"; }
		out=$(in_jail --net loopback -- sh -c 'cat /proc/net/route' 2>&1)
		printf '%s\n' "$out" | grep -q '^stockade0' && pass "the jail's default route is the way that leads nowhere" ||
			{ fail "the jail's default route is the way that leads nowhere"; diag "$out"; }
	fi
	[ "$(cat "$REMOTE_COUNT")" = "$rbase" ] && pass "THREATS 47: the remote host accepted nothing" || fail "THREATS 47: the remote host accepted nothing"
	expect_probe "--net on: the remote host is reachable" ok -- in_jail --net on -- "$PROBE" connect-tcp 10.203.0.2 7
	if is_root; then
		# A server in the jail serves nobody on the LAN. The control: the
		# same server outside is reachable from the remote host.
		wait_listening() {
			for _ in $(seq 100); do grep -q '^listening' "$1" 2>/dev/null && return 0; sleep 0.05; done
			return 1
		}
		plain_port=$(free_port)
		"$PROBE" listen-tcp 0.0.0.0 "$plain_port" 3 >"$T/plain.out" 2>&1 &
		plain=$!
		wait_listening "$T/plain.out"
		expect_control "outside: a server on 0.0.0.0 is reachable from the remote host" -- \
			ip netns exec stockade-remote "$PROBE" connect-tcp 10.203.0.1 "$plain_port"
		kill "$plain" 2>/dev/null
		wait "$plain" 2>/dev/null
		# In the jail: servers on 0.0.0.0, :: and 127.0.0.1 (the landlock
		# backend binds the first two to the loopback device; the
		# namespace jail's addresses are its own loopback's), each
		# listening before the remote host tries; on the landlock backend
		# the host itself reaches them.
		for where in 0.0.0.0 :: 127.0.0.1; do
			lan_port=$(free_port)
			lan_out="$T/lan-$lan_port.out"
			jail_bg "$lan_out" --net loopback -- "$PROBE" listen-tcp "$where" "$lan_port" 60
			wait_until grep -q -E '^(listening|probe: errno)' "$lan_out"
			if ! grep -q '^listening' "$lan_out"; then
				fail "a jailed server on $where is listening"
				diag "$(cat "$lan_out")"
			else
				expect_probe "a jailed server on $where is not reachable from the remote host" "errno ECONNREFUSED" -- \
					ip netns exec stockade-remote "$PROBE" connect-tcp 10.203.0.1 "$lan_port"
				if $LL; then
					expect_probe "and the host reaches it on 127.0.0.1" ok -- "$PROBE" connect-tcp 127.0.0.1 "$lan_port"
				fi
			fi
			stop_bg
		done
	fi
else
	# Making the remote host needs root: .ci/run makes it before the
	# unprivileged run (and there a skip is a failure).
	skip "no remote host here (tests/remote-host.sh up, as root, makes it)"
fi

# Servers as developers start them, and their clients in the run: Python's
# http.server and Node's listen(0) bind :: and are reached on 127.0.0.1
# (supertest's way) and on ::1.
cat >"$W/servers.sh" <<'SH'
# a file of this run's own: the outside run's, read before the server
# writes this one, named its port
out=http.out.$$
python3 -u -m http.server 0 --bind :: >"$out" 2>&1 &
srv=$!
for i in $(seq 600); do grep -q '^Serving' "$out" 2>/dev/null && break; sleep 0.05; done
port=$(sed -n 's/.* port \([0-9]*\).*/\1/p' "$out")
curl -s -o /dev/null -w 'http.server v4 %{http_code}\n' "http://127.0.0.1:$port/"
curl -s -o /dev/null -w 'http.server v6 %{http_code}\n' "http://[::1]:$port/"
kill "$srv"
node -e '
const http = require("http");
const s = http.createServer((q, r) => r.end("hi")).listen(0, () => {
	const p = s.address().port;
	http.get("http://127.0.0.1:" + p, (r) => {
		console.log("node v4 " + r.statusCode);
		http.get("http://[::1]:" + p, (r) => { console.log("node v6 " + r.statusCode); s.close(); });
	});
});'
SH
want_servers="http.server v4 200 http.server v6 200 node v4 200 node v6 200"
got=$(cd "$W" && sh servers.sh 2>&1 | tr '\n' ' ' | sed 's/ $//')
[ "$got" = "$want_servers" ] && pass "outside: http.server and node's listen(0) answer on 127.0.0.1 and ::1" ||
	{ fail "outside: http.server and node's listen(0) answer on 127.0.0.1 and ::1"; diag "got: $got"; }
got=$(in_jail --net loopback -q -- sh servers.sh 2>&1 | tr '\n' ' ' | sed 's/ $//')
[ "$got" = "$want_servers" ] && pass "in the jail: http.server and node's listen(0) answer on 127.0.0.1 and ::1" ||
	{ fail "in the jail: http.server and node's listen(0) answer on 127.0.0.1 and ::1"; diag "got: $got"; }

# Squatting: a service outside listens with SO_REUSEPORT; a jailed server
# of the same user tries to join its port and take half its connections.
# Without stockade the join works (the control); in the jail it is
# refused (landlock: EADDRINUSE, every spelling; the namespace jail's
# port is on its own loopback), and the outside listener gets every one
# of 100 connections.
"$PROBE" listen-reuseport 127.0.0.1 0 30 >"$T/squat-host.out" 2>&1 &
squat_host=$!
wait_until grep -q '^listening' "$T/squat-host.out"
SQ=$(sed -n 's/^listening //p' "$T/squat-host.out")
expect_control "THREATS 64 control: outside, a second SO_REUSEPORT listener joins the port (the attack, without stockade)" -- \
	"$PROBE" listen-reuseport 127.0.0.1 "$SQ" 0
if $LL; then
	for where in 127.0.0.1 0.0.0.0 :: ::ffff:127.0.0.1; do
		expect_probe "THREATS 64, 42: squatting $where port $SQ with SO_REUSEPORT is refused" "errno EADDRINUSE" -- \
			in_jail --net loopback -- "$PROBE" listen-reuseport "$where" "$SQ" 3
	done
	expect_probe "and with --net on" "errno EADDRINUSE" -- in_jail --net on -- "$PROBE" listen-reuseport 127.0.0.1 "$SQ" 3
fi
jail_bg "$T/squat-jail.out" --net loopback -- "$PROBE" listen-reuseport 127.0.0.1 "$SQ" 60
squat_jail=$bg
wait_until grep -q -E '^(listening|probe: errno)' "$T/squat-jail.out"
if $LL; then
	grep -q '^probe: errno EADDRINUSE' "$T/squat-jail.out" && pass "the squatter is refused its bind" ||
		{ fail "the squatter is refused its bind"; diag "$(cat "$T/squat-jail.out")"; }
else
	grep -q '^listening' "$T/squat-jail.out" && pass "THREATS 64, 42: the squatter listens on its own loopback, not the host's" ||
		{ fail "THREATS 64, 42: the squatter listens on its own loopback, not the host's"; diag "$(cat "$T/squat-jail.out")"; }
fi
for _ in $(seq 100); do "$PROBE" connect-tcp 127.0.0.1 "$SQ" >/dev/null 2>&1; done
kill "$squat_jail" "$squat_host" 2>/dev/null
wait "$squat_jail" "$squat_host" 2>/dev/null
got=$(sed -n 's/^accepted //p' "$T/squat-host.out")
[ "$got" = 100 ] && pass "THREATS 64: the outside listener got every one of 100 connections" ||
	{ fail "THREATS 64: the outside listener got every one of 100 connections"; diag "accepted: '$got'"; }
# An outside listener on the other family's dual-stack ::.
if $LL; then
	"$PROBE" listen-reuseport :: 0 5 >"$T/squat6.out" 2>&1 &
	squat6=$!
	wait_until grep -q '^listening' "$T/squat6.out"
	SQ6=$(sed -n 's/^listening //p' "$T/squat6.out")
	expect_probe "squatting 127.0.0.1 beside an outside dual-stack :: listener is refused" "errno EADDRINUSE" -- \
		in_jail --net loopback -- "$PROBE" listen-reuseport 127.0.0.1 "$SQ6" 3
	kill "$squat6" 2>/dev/null
	wait "$squat6" 2>/dev/null
fi

# THREATS 42: a service of the host's that comes and goes (restarted
# while the command runs) must not be reached in the moment between the
# supervisor's check (nobody listens) and its connect: a command that
# connects again and again would win that race now and then. The landlock
# backend asks again once the connect is made and tears a connection an
# outside listener took down before the command can send a byte; in the
# namespace jail the host's loopback is never reached at all. The
# control: outside, the same spray reaches the service and sends data.
comes_and_goes() {
	python3 -c 'import socket, sys, time
port, seconds = int(sys.argv[1]), float(sys.argv[2])
end = time.time() + seconds
data = accepted = rounds = 0
print("up", flush=True)
while time.time() < end:
    l = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    l.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        l.bind(("127.0.0.1", port))
    except OSError:
        time.sleep(0.001)
        continue
    l.listen(128)
    l.setblocking(False)
    rounds += 1
    conns, t = [], time.time() + 0.003
    while time.time() < t:
        try:
            conns.append(l.accept()[0])
            accepted += 1
        except BlockingIOError:
            time.sleep(0.0002)
    l.close()
    for c in conns:
        c.settimeout(0.05)
        try:
            data += len(c.recv(1))
        except OSError:
            pass
        c.close()
    time.sleep(0.002)
print("rounds", rounds, "accepted", accepted, "data", data)' "$@"
}
CG=$(free_port)
for where in outside jail; do
	comes_and_goes "$CG" 4 >"$T/cg-$where.out" 2>&1 &
	cg=$!
	wait_until grep -q '^up' "$T/cg-$where.out"
	if [ $where = outside ]; then
		spray=$("$PROBE" connect-spray 127.0.0.1 "$CG" 3 2>&1)
	else
		spray=$(in_jail --net loopback -- "$PROBE" connect-spray 127.0.0.1 "$CG" 3 2>&1)
	fi
	wait "$cg"
	made=$(printf '%s\n' "$spray" | sed -n 's/^made //p')
	data=$(sed -n 's/^rounds .* data //p' "$T/cg-$where.out")
	if [ $where = outside ]; then
		[ "${made:-0}" -gt 0 ] && [ "${data:-0}" -gt 0 ] &&
			{ pass "THREATS 42 control: outside, connects to a service that comes and goes reach it"; diag "$made made, $data with data"; } ||
			{ fail "THREATS 42 control: outside, connects to a service that comes and goes reach it"; diag "$spray"; diag "$(cat "$T/cg-$where.out")"; }
	else
		case $spray in *"probe: ok"*) ;; *) made=x ;; esac
		[ "$made" = 0 ] && [ "$data" = 0 ] &&
			{ pass "THREATS 42: a host service that comes and goes is never reached, not in the moment after the check"
			  diag "$(sed -n 's/^rounds \([0-9]*\) accepted \([0-9]*\).*/\1 rounds, \2 handshakes torn down/p' "$T/cg-$where.out")"; } ||
			{ fail "THREATS 42: a host service that comes and goes is never reached, not in the moment after the check"; diag "$spray"; diag "$(cat "$T/cg-$where.out")"; }
	fi
done

# THREATS 42, later: a connect whose SYN the run's own full listener
# dropped is sent again by the kernel a second later, to whatever listens
# on the port then. The run closes its listener at once; a service of the
# host's starts there half a second later. The landlock backend refuses a
# handshake not made at once (after a short wait), rather than leave it
# to the kernel; the namespace jail's SYN never reaches the host. The
# control: outside, the service gets the connection and its bytes.
# late_listener PORT [close]: with close, its listening socket is closed
# once it has accepted (a service restarting, which keeps the connection).
late_listener() {
	python3 -c 'import os, socket, sys, time
# Once the probe says its listener is closed (the file it makes, the
# second argument); or with "seen", once its own listener has the port
# and as soon as it has let it go.
port = int(sys.argv[1])
seen = sys.argv[2] == "seen"
print("ready", flush=True)
t = time.monotonic()
while not seen and not os.path.exists(sys.argv[2]) and time.monotonic() - t < 20:
    time.sleep(0.005)
def listening():
    for f in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in open(f).readlines()[1:]:
            w = line.split()
            if int(w[1].rsplit(":", 1)[1], 16) == port and w[3] == "0A":
                return True
    return False
t = time.monotonic()
while seen and not listening() and time.monotonic() - t < 20:
    time.sleep(0.005)
l = socket.socket()
l.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
t = time.monotonic()
while True:
    try:
        l.bind(("127.0.0.1", port))
        break
    except OSError:
        if time.monotonic() - t > 10:
            raise
        time.sleep(0.005)
l.listen(8)
l.settimeout(3.5)
try:
    c = l.accept()[0]
    if len(sys.argv) > 3:
        l.close()
    c.settimeout(3)
    print("accepted", c.recv(16))
except OSError:
    print("accepted nothing")' "$@"
}
# late_case WHAT OP SECONDS JAIL_OUTCOME [CROWD]: the probe OP on a port of
# its own while a listener comes there half a second later; outside (the
# control) that listener gets the probe's bytes, in the jail it gets
# nothing and the probe ends with JAIL_OUTCOME. With CROWD, the probe's
# last argument, the listener closes once it has accepted. LATE_PORT: the
# jail's port.
late_case() {
	local what=$1 op=$2 secs=$3 want=$4 crowd=${5:-} where ll out
	for where in outside jail; do
		LATE_PORT=$(free_port)
		out="$T/late-$op-$where.out"
		# Behind a crowd, in the landlock backend's jail, the probe may
		# take longer than half a second to have its own listener on a
		# loaded machine (its supervisor makes the 64 connects first):
		# then the late one waits to see that listener and binds once it
		# has gone, not before it (the supervisor refuses a bind on a
		# port an outside socket has).
		# Else it binds once the probe has closed its own (the file the
		# probe makes then), which is before the kernel sends the SYN
		# again, a second after.
		seen=$W/late-closed
		rm -f "$seen"
		[ -n "$crowd" ] && [ $where = jail ] && [ "$TEST_BACKEND" = landlock ] && seen=seen
		late_listener "$LATE_PORT" "$seen" ${crowd:+close} >"$out" 2>&1 &
		ll=$!
		# Started before the probe: the kernel sends the SYN again one
		# second after the probe's connect, and Python can take longer
		# than that to start on a loaded machine.
		wait_until grep -q -E '^ready' "$out" || { fail "the late listener started"; diag "$(cat "$out")"; }
		if [ $where = outside ]; then
			PROBE_CLOSED=$W/late-closed expect_control "THREATS 42 control: outside, $what reaches a listener that came later" -- \
				"$PROBE" "$op" 127.0.0.1 "$LATE_PORT" "$secs" $crowd
			wait "$ll"
			grep -q "^accepted b'" "$out" && pass "THREATS 42 control: and that listener got its bytes" ||
				{ fail "THREATS 42 control: and that listener got its bytes"; diag "$(cat "$out")"; }
		else
			PROBE_CLOSED=$W/late-closed expect_probe "THREATS 42: $what ends with $want in the jail" "$want" -- \
				in_jail --net loopback -- "$PROBE" "$op" 127.0.0.1 "$LATE_PORT" "$secs" $crowd
			wait "$ll"
			grep -q "^accepted nothing" "$out" && pass "THREATS 42: the listener that came later got nothing" ||
				{ fail "THREATS 42: the listener that came later got nothing"; diag "$(cat "$out")"; }
		fi
	done
}
# The landlock backend refuses the connect whose SYN the run's full
# listener dropped.
late_case "a connect left in progress" connect-armed 3 "errno ECONNREFUSED"
if $LL; then
	printf '%s\n' "$PROBE_OUTPUT" | grep -q "^stockade: refused: connect 127.0.0.1:$LATE_PORT (ECONNREFUSED)" &&
		pass "the refusal is named on stderr" || { fail "the refusal is named on stderr"; diag "$PROBE_OUTPUT"; }
fi
# The same while 64 other connects of the run wait (blocking connects to
# a full Unix backlog of its own, which the supervisor tries again each
# round): its deadline is kept all the same, though poll is not given
# that many descriptors. The listener that came later closes once it has
# accepted, so that nothing outside the run listens on the port by the
# time a check could look.
late_case "a connect left in progress behind 64 waiting ones" connect-armed 4 "errno ECONNREFUSED" 64
if $LL; then
	printf '%s\n' "$PROBE_OUTPUT" | grep -q "^stockade: refused: connect 127.0.0.1:$LATE_PORT (ECONNREFUSED)" &&
		pass "the refusal is named on stderr" || { fail "the refusal is named on stderr"; diag "$PROBE_OUTPUT"; }
fi
# The same, with the SYN deferred by the command: TCP_FASTOPEN_CONNECT
# and TCP_FASTOPEN_NO_COOKIE make connect() answer at once and send no SYN
# until the first write, a second later here. The landlock backend makes
# that connect a plain one (the option turned off), to the run's own
# listener, whose close resets it; the namespace jail's deferred SYN
# finds nobody.
late_case "a deferred connect's first write (TCP_FASTOPEN_CONNECT)" connect-deferred 1 \
	"errno $($LL && echo ECONNRESET || echo ECONNREFUSED)"

# A name lookup is refused at once, never left to time out, and named:
# the namespace jail's responder answers NXDOMAIN and records the name;
# the landlock backend refuses the datagram to the resolver. Either way the
# report says so, and one stderr line does when the command then fails.
expect_probe "localhost still resolves (the hosts file)" ok -- in_jail --net loopback -- "$PROBE" resolve localhost
printf '%s\n' "$PROBE_OUTPUT" | grep -q '^resolved' && pass "and it resolved" || { fail "and it resolved"; diag "$PROBE_OUTPUT"; }
name="stockade-$$-nonce.example.test"
out=$(in_jail --net loopback --read "$PROBE" --report "$T/dns.json" -- sh -c '"$0" resolve "$1"; exit 3' "$PROBE" "$name" 2>&1)
printf '%s\n' "$out" | grep -q '^probe: started resolve' && pass "THREATS 46: the lookup ran in the jail" || { fail "THREATS 46: the lookup ran in the jail"; diag "$out"; }
ms=$(printf '%s\n' "$out" | sed -n 's/^ms //p')
[ -n "$ms" ] && [ "$ms" -lt 100 ] && pass "it was answered at once (${ms} ms, under 100)" || { fail "it was answered at once (under 100 ms)"; diag "$out"; }
if $LL; then
	printf '%s\n' "$out" | grep -q -E '^gai EAI_(AGAIN|SYSTEM|FAIL)' && pass "THREATS 46: the lookup failed" || { fail "THREATS 46: the lookup failed"; diag "$out"; }
	# The resolver's UDP socket is given; its connect (or sendto) to
	# the nameserver's port 53, no socket of the run's, is refused.
	grep -q '"what": *"[^"]*:53"' "$T/dns.json" && pass "the report names the refused resolver address" ||
		{ fail "the report names the refused resolver address"; diag "$(cat "$T/dns.json")"; }
	printf '%s\n' "$out" | grep -q '^stockade: refused: .*\(connect\|send\) [^ ]*:53 (\(EACCES\|ENETUNREACH\)).*to allow: --net on' &&
		pass "one stderr line names it and --net on" || { fail "one stderr line names it and --net on"; diag "$out"; }
else
	printf '%s\n' "$out" | grep -q '^gai EAI_NONAME' && pass "THREATS 46: the name does not exist (NXDOMAIN, not EAI_AGAIN, which npm retries)" ||
		{ fail "THREATS 46: the name does not exist (NXDOMAIN, not EAI_AGAIN, which npm retries)"; diag "$out"; }
	grep -q "\"what\": *\"$name\"" "$T/dns.json" && pass "the report names the name asked" ||
		{ fail "the report names the name asked"; diag "$(cat "$T/dns.json")"; }
	printf '%s\n' "$out" | grep -q "^stockade: refused: name $name (NXDOMAIN).*to allow: --allow $name (this name only),.* or --net on" &&
		pass "one stderr line names it, --allow for that name and --net on" ||
		{ fail "one stderr line names it, --allow for that name and --net on"; diag "$out"; }
fi
# On the landlock backend a question sent straight to a name server (a
# datagram with its address: the remote host's port 53 here) is refused
# too, and the report names the name it asked with the same fixes.
if $LL && [ -s "$REMOTE_COUNT" ]; then
	cat >"$W/dnsq-send.py" <<'PY'
import socket, struct, sys
q = struct.pack(">HHHHHH", 0x5354, 0x0100, 1, 0, 0, 0)
q += b"".join(bytes([len(p)]) + p.encode() for p in sys.argv[1].split(".")) + b"\0" + struct.pack(">HH", 1, 1)
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
try:
    s.sendto(q, ("10.203.0.2", 53))
    print("sent")
except OSError as e:
    print("errno", __import__("errno").errorcode[e.errno])
PY
	qname="stockade-$$-sent.example.test"
	out=$(python3 "$W/dnsq-send.py" "$qname" 2>&1)
	[ "$out" = sent ] && pass "THREATS 46 control: outside, a question to the remote host's port 53 is sent" ||
		{ fail "THREATS 46 control: outside, a question to the remote host's port 53 is sent"; diag "$out"; }
	out=$(in_jail --net loopback --report "$T/dnsq.json" -- sh -c 'python3 dnsq-send.py "$0"; exit 3' "$qname" 2>&1)
	case $out in
	*"errno E"*"stockade: refused: "*"send 10.203.0.2:53"*"name $qname"*)
		pass "THREATS 46: a question sent straight to a name server is refused, and named" ;;
	*) fail "THREATS 46: a question sent straight to a name server is refused, and named"; diag "$out" ;;
	esac
	python3 - "$T/dnsq.json" "$qname" <<'PY' && pass "the report gives the name --allow for it, then the network" ||
import json, sys
d = [x for x in json.load(open(sys.argv[1]))["denials"] if x["kind"] == "name" and x["what"] == sys.argv[2]]
n = sys.argv[2]
assert d and d[0]["fix"] == "--allow %s (this name only), or in stockade.ini: allow = %s, or --net on, or in stockade.ini: network = on" % (n, n), d
PY
		{ fail "the report gives the name --allow for it, then the network"; diag "$(cat "$T/dnsq.json")"; }
fi

# --publish: a jailed dev server opened from the host, on the host's
# loopback only. PORT:JAIL_PORT forwards; on the landlock backend the same
# port needs no forward (the run's listener is on the host's loopback).
# serve.sh PORT: until stop_bg ends the run (a minute at most).
cat >"$W/serve.sh" <<'SH'
exec timeout 60 python3 -m http.server "$1" --bind :: >serve.out 2>&1
SH
# wait_http URL [CMD...]: whether the server behind URL answers 200 within
# 30 s, asked by curl (run by CMD..., as ip netns exec NS, if given);
# $http_status is its last answer. On the namespace backend the forward's
# own listener accepts before the jailed server listens: only the
# server's answer says it is there.
wait_http() {
	wait_until http_200 "$@"
}
http_200() {
	local url=$1
	shift
	http_status=$("$@" curl -s -o /dev/null -m 2 -w '%{http_code}' "$url" 2>/dev/null)
	[ "$http_status" = 200 ]
}
HP=$(free_port)
JP=$(free_port)
jail_bg /dev/null --net loopback -q --publish "$HP:$JP" -- sh serve.sh "$JP"
if wait_http "http://127.0.0.1:$HP/"; then
	pass "--publish $HP:$JP: the jailed http.server answers the host on 127.0.0.1:$HP"
	got=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$HP/serve.sh")
	[ "$got" = 200 ] && pass "a file of the workspace comes through it" || fail "a file of the workspace comes through it (got $got)"
	expect_probe "and not on the host's $host_ip" "errno ECONNREFUSED" -- "$PROBE" connect-tcp "$host_ip" "$HP"
	if is_root && ip netns list 2>/dev/null | grep -q '^stockade-remote\b'; then
		expect_probe "nor from the remote host" "errno ECONNREFUSED" -- \
			ip netns exec stockade-remote "$PROBE" connect-tcp 10.203.0.1 "$HP"
	fi
else
	fail "--publish $HP:$JP: the jailed http.server answers the host on 127.0.0.1:$HP"
fi
stop_bg
# A server on [::1] alone (Vite's "localhost" with a recent Node): the
# forward finds it on the other family's loopback.
HP=$(free_port)
JP=$(free_port)
jail_bg /dev/null --net loopback -q --publish "$HP:$JP" -- "$PROBE" listen-tcp ::1 "$JP" 60
answers() { "$PROBE" connect-tcp 127.0.0.1 "$1" 2>/dev/null | grep -q '^probe$'; }
wait_until answers "$HP"
expect_probe "--publish $HP:$JP reaches a jailed server on [::1] alone" ok -- "$PROBE" connect-tcp 127.0.0.1 "$HP"
printf '%s\n' "$PROBE_OUTPUT" | grep -q '^probe$' && pass "and the server answered through it" || { fail "and the server answered through it"; diag "$PROBE_OUTPUT"; }
stop_bg
# The bytes through a forward, whole, both ways and in halves: each
# client sends 24 MiB and shuts its side; the jailed server answers only
# then, with the digest of what it got and 8 MiB of its own, and closes.
# Eight clients at once, over one forward.
cat >"$W/halves.py" <<'PY'
import hashlib, socket, sys, threading
def pattern(n, seed):
    return (hashlib.sha256(seed).digest() * (n // 32 + 1))[:n]
if sys.argv[1] == "serve":
    ls = socket.create_server(("127.0.0.1", int(sys.argv[2])))
    open("halves.ready", "w").close()
    def one(c):
        h, n = hashlib.sha256(), 0
        while True:
            b = c.recv(1 << 16)
            if not b:
                break
            h.update(b); n += len(b)
        c.sendall(("%d %s\n" % (n, h.hexdigest())).encode() + pattern(8 << 20, b"down"))
        c.close()
    while True:
        c, _ = ls.accept()
        threading.Thread(target=one, args=(c,)).start()
else:
    up = pattern(24 << 20, b"up")
    want = ("%d %s\n" % (len(up), hashlib.sha256(up).hexdigest())).encode() + pattern(8 << 20, b"down")
    bad = []
    def client(i):
        got = bytearray()
        try:
            c = socket.create_connection(("127.0.0.1", int(sys.argv[2])), timeout=20)
            c.sendall(up)
            c.shutdown(socket.SHUT_WR)
            while True:
                b = c.recv(1 << 16)
                if not b:
                    break
                got += b
        except OSError as e:
            bad.append("client %d: %s after %d bytes back" % (i, e, len(got)))
            return
        if bytes(got) != want:
            bad.append("client %d: %d bytes back, %r" % (i, len(got), bytes(got[:80])))
    ts = [threading.Thread(target=client, args=(i,)) for i in range(8)]
    [t.start() for t in ts]
    [t.join() for t in ts]
    print("\n".join(bad) if bad else "intact")
PY
HP=$(free_port)
JP=$(free_port)
# The forward's own listener answers at once, before the server in the
# jail listens (a client then is reset, as at a port nobody serves): the
# server says when it listens.
rm -f "$W/halves.ready"
jail_bg /dev/null --net loopback -q --publish "$HP:$JP" -- timeout 60 python3 halves.py serve "$JP"
wait_until test -e "$W/halves.ready"
got=$(python3 "$W/halves.py" client "$HP" 2>&1)
[ "$got" = intact ] && pass "--publish: 8 clients at once, 24 MiB up, a half-close, 8 MiB down: every byte intact" ||
	{ fail "--publish: 8 clients at once, 24 MiB up, a half-close, 8 MiB down: every byte intact"; diag "$got"; }
stop_bg
SP=$(free_port)
jail_bg /dev/null --net loopback -q --publish "$SP" -- sh serve.sh "$SP"
wait_http "http://127.0.0.1:$SP/" && pass "--publish $SP: the same port on the host" || fail "--publish $SP: the same port on the host"
stop_bg
# curl (a browser) before the jailed server listens: stockade's forward
# meets a reset in the jail, which is no connect of the command's, and
# the host's listener on that port is the run's own --publish: nothing
# is said of it (it once said "refused: connect 127.0.0.1:PORT; to
# allow: --connect 127.0.0.1:PORT").
SP=$(free_port)
jail_bg "$T/early.out" --net loopback --publish "$SP" -- sh -c 'sleep 2; exec sh serve.sh "$0"' "$SP"
for i in 1 2 3 4 5 6; do
	http_200 "http://127.0.0.1:$SP/" && break
	sleep 0.2
done
wait_http "http://127.0.0.1:$SP/" || fail "--publish $SP: the late server answers"
stop_bg
if grep -q "refused: connect" "$T/early.out"; then
	fail "a request before the server listens is not said as the command's refused connect"
	diag "$(cat "$T/early.out")"
else
	pass "a request before the server listens is not said as the command's refused connect"
fi
# Without --publish, the namespace jail's server is its own.
if ! $LL; then
	NP=$(free_port)
	jail_bg "$T/nopub.out" --net loopback -q -- "$PROBE" listen-tcp 0.0.0.0 "$NP" 60
	wait_until grep -q -E '^listening' "$T/nopub.out" || { fail "a jailed server without --publish listens"; diag "$(cat "$T/nopub.out")"; }
	expect_probe "without --publish the host does not reach the jailed server" "errno ECONNREFUSED" -- \
		"$PROBE" connect-tcp 127.0.0.1 "$NP"
	stop_bg
fi
# On purpose on another address: it works there, and stderr says so.
if is_root && ip netns list 2>/dev/null | grep -q '^stockade-remote\b'; then
	LP=$(free_port)
	jail_bg "$T/lanpub.err" --net loopback --publish "10.203.0.1:$LP:$LP" -- sh serve.sh "$LP"
	wait_http "http://10.203.0.1:$LP/" ip netns exec stockade-remote && pass "--publish 10.203.0.1:$LP: the remote host reaches the jailed server, as asked" ||
		{ fail "--publish 10.203.0.1:$LP: the remote host reaches the jailed server, as asked"; diag "http status: $http_status"; }
	stop_bg
	grep -q "^stockade: --publish 10.203.0.1:$LP: reachable from other hosts" "$T/lanpub.err" && pass "and stderr names it" ||
		{ fail "and stderr names it"; diag "$(cat "$T/lanpub.err")"; }
fi
# refused_at_start DESC PATTERN -- CMD...: exit 125, the message, and the
# probe never started.
refused_at_start() {
	local desc=$1 pattern=$2 out st
	shift 3
	out=$("$@" 2>&1)
	st=$?
	if [ "$st" = 125 ] && printf '%s\n' "$out" | grep -q -- "$pattern" && ! printf '%s\n' "$out" | grep -q '^probe: started'; then
		pass "$desc"
	else
		fail "$desc"
		diag "status $st: $out"
	fi
}
refused_at_start "a bad --publish is refused before anything runs" "invalid --publish '70000': use" -- \
	in_jail --publish 70000 -- "$PROBE" cwd
if [ "$TEST_BACKEND" = landlock ]; then
	# The run shares the host's ports: stockade cannot listen on every
	# address of the port the run serves. The hint's other form works
	# (the LAN --publish above, and the next).
	WP=$(free_port)
	refused_at_start "landlock: --publish 0.0.0.0:PORT of the run's own port is refused, with what works" \
		"hint: --publish ADDRESS:$WP for the address of one interface, or --publish 0.0.0.0:$WP:OTHER_PORT" -- \
		in_jail --net loopback --publish "0.0.0.0:$WP" -- "$PROBE" cwd
	JP=$(free_port)
	jail_bg /dev/null --net loopback -q --publish "0.0.0.0:$WP:$JP" -- sh serve.sh "$JP"
	wait_http "http://127.0.0.1:$WP/" && pass "landlock: --publish 0.0.0.0:$WP:OTHER_PORT, as the hint says: served" ||
		fail "landlock: --publish 0.0.0.0:$WP:OTHER_PORT, as the hint says: served"
	stop_bg
fi
refused_at_start "--publish of a port in use is refused before anything runs" "cannot publish on '127.0.0.1:$P4'" -- \
	in_jail --publish "$P4:$(free_port)" -- "$PROBE" cwd
refused_at_start "a --connect host by name is refused" "the host must be a numeric address or localhost" -- \
	in_jail --connect db.example:5432 -- "$PROBE" cwd

# --connect: one host service reached, a second one still not.
netpeer_start tcp 127.0.0.1 0
CP=$PEER_PORT
CC=$PEER_COUNT
netpeer_start tcp 127.0.0.1 0
OP=$PEER_PORT
OC=$PEER_COUNT
netpeer_start unix "$T/pg.sock"
UC=$PEER_COUNT
cbase="$(cat "$CC") $(cat "$OC") $(cat "$UC")"
for spelled in "127.0.0.1:$CP" "localhost:$CP"; do
	expect_probe "--connect $spelled reaches that service" ok -- \
		in_jail --net loopback --connect "$spelled" -- "$PROBE" connect-tcp 127.0.0.1 "$CP"
	printf '%s\n' "$PROBE_OUTPUT" | grep -q '^netpeer' && pass "and it answered" || { fail "and it answered"; diag "$PROBE_OUTPUT"; }
done
expect_probe "a second host service stays unreachable" "errno $($LL && echo $REFUSED || echo ECONNREFUSED)" -- \
	in_jail --net loopback --connect "127.0.0.1:$CP" -- "$PROBE" connect-tcp 127.0.0.1 "$OP"
if $LL; then
	printf '%s\n' "$PROBE_OUTPUT" | grep -q "^stockade: refused: connect 127.0.0.1:$OP (EACCES); to allow: --connect 127.0.0.1:$OP" &&
		pass "the refused line names --connect for it" || { fail "the refused line names --connect for it"; diag "$PROBE_OUTPUT"; }
fi
expect_probe "--connect unix:PATH reaches that socket" ok -- \
	in_jail --net loopback --connect "unix:$T/pg.sock" -- "$PROBE" connect-unix "$T/pg.sock"
expect_probe "without it, the socket is refused" "errno $($LL && echo $REFUSED || echo ENOENT)" -- \
	in_jail --net loopback -- "$PROBE" connect-unix "$T/pg.sock"
[ "$(cat "$CC") $(cat "$OC") $(cat "$UC")" = "$(( ${cbase%% *} + 2 )) $(echo "$cbase" | cut -d' ' -f2) $(( ${cbase##* } + 1 ))" ] &&
	pass "the services counted exactly those connections" ||
	fail "the services counted exactly those connections (before: $cbase, after: $(cat "$CC") $(cat "$OC") $(cat "$UC"))"
refused_at_start "--connect with the network off is refused before anything runs" "the network is off" -- \
	in_jail --net off --connect "127.0.0.1:$CP" -- "$PROBE" cwd

# A root stockade acts with the command's privileges, which are none: a
# port below 1024 stays unbindable (the supervisor binds for the command
# on the landlock backend), and a socket file's mode holds (a root
# stockade's DAC override stays out of the connect the supervisor makes).
# As a user the control would fail outside too: the root run has these.
if is_root; then
	low=""
	for p in 999 998 997 996 995; do
		"$PROBE" bind-tcp 127.0.0.1 "$p" >/dev/null 2>&1 && { low=$p; break; }
	done
	if [ -n "$low" ]; then
		expect_control "control: outside, root binds 127.0.0.1:$low" -- "$PROBE" bind-tcp 127.0.0.1 "$low"
		expect_probe "as root, the command cannot bind 127.0.0.1:$low (no CAP_NET_BIND_SERVICE)" "errno EACCES" -- \
			in_jail --net loopback -- "$PROBE" bind-tcp 127.0.0.1 "$low"
	else
		fail "a free port below 1024 to bind (999-995 all taken)"
	fi
	if $LL; then
		netpeer_start unix "$T/closed.sock"
		chmod 000 "$T/closed.sock"
		expect_control "control: outside, root connects to a socket file of mode 000" -- "$PROBE" connect-unix "$T/closed.sock"
		expect_probe "as root, --connect unix:PATH of mode 000 is refused by its mode (EACCES)" "errno EACCES" -- \
			in_jail --net loopback --connect "unix:$T/closed.sock" -- "$PROBE" connect-unix "$T/closed.sock"
		expect_probe "as root, an inet connect the supervisor makes as it is still works" ok -- \
			in_jail --net loopback --connect "127.0.0.1:$CP" -- "$PROBE" connect-tcp 127.0.0.1 "$CP"
	fi
fi

# A second thread rewriting the address during connect: the kernel never
# reads it again after the supervisor's check (the namespace jail's own
# network has no host listener to win).
expect_probe "THREATS 39: the address race (10,000 connects, the other thread flipping to the host's port)" ok -- \
	in_jail --net loopback -- "$PROBE" connect-race 127.0.0.1 1 127.0.0.1 "$PW4" 10000
won=$(printf '%s\n' "$PROBE_OUTPUT" | sed -n 's/^connected-to-2 //p')
[ "${won:-x}" = 0 ] && pass "THREATS 39: no connect reached the host's listener" || fail "THREATS 39: no connect reached the host's listener (got '$won')"
[ "$(counts)" = "$base" ] && pass "THREATS 39: and the host's listeners accepted nothing" || fail "THREATS 39: and the host's listeners accepted nothing"
# The race needs the other thread to run while the first connects: on a
# loaded machine it may not in one round, so up to five.
for _ in 1 2 3 4 5; do
	out=$("$PROBE" connect-race 127.0.0.1 1 127.0.0.1 "$PW4" 2000 2>&1)
	won=$(printf '%s\n' "$out" | sed -n 's/^connected-to-2 //p')
	[ "${won:-0}" -gt 0 ] && break
done
PROBE_OUTPUT=$out
printf '%s\n' "$out" | grep -q '^probe: ok' && pass "THREATS 39 control: outside, the same race reaches the host's port" ||
	{ fail "THREATS 39 control: outside, the same race reaches the host's port"; diag "$out"; }
[ "${won:-0}" -gt 0 ] && pass "THREATS 39 control: $won connects reached it" || { fail "THREATS 39 control: some connects reached it"; diag "$PROBE_OUTPUT"; }
# The listener counts what it accepted a moment later: the new base once
# it has stopped moving.
base=$(counts)
for _ in $(seq 50); do
	sleep 0.2
	[ "$(counts)" = "$base" ] && break
	base=$(counts)
done

# stockade killed mid-run: the command is gone, and nothing it tried after
# was allowed. The hammer says it runs (and its connects were refused)
# before stockade is killed.
if $LL; then
	cat >"$W/hammer.sh" <<'SH'
while :; do "$1" connect-tcp 127.0.0.1 "$2" >>hammer.out 2>&1; done
SH
	rm -f "$W/hammer.out"
	"$STOCKADE" --backend landlock --net loopback -C "$W" --read "$PROBE" -- sh hammer.sh "$PROBE" "$PW4" >/dev/null 2>&1 &
	jpid=$!
	wait_until grep -q "^probe: errno $REFUSED" "$W/hammer.out" 2>/dev/null
	grep -q "^probe: errno $REFUSED" "$W/hammer.out" 2>/dev/null && pass "THREATS 54: the command ran, its connects refused, before stockade is killed" ||
		{ fail "the command ran, its connects refused, before stockade is killed"; diag "$(tail -n 5 "$W/hammer.out" 2>&1)"; }
	kill -KILL "$jpid"
	wait "$jpid" 2>/dev/null
	for _ in $(seq 200); do pgrep -f "hammer.sh $PROBE" >/dev/null || break; sleep 0.05; done
	pgrep -f "hammer.sh $PROBE" >/dev/null && { fail "THREATS 54: the command is gone once stockade is killed"; pkill -9 -f "hammer.sh $PROBE"; } ||
		pass "THREATS 54: the command is gone once stockade is killed"
	[ "$(counts)" = "$base" ] && pass "THREATS 54: nothing it tried reached the host's listeners" || fail "THREATS 54: nothing it tried reached the host's listeners"
fi

plan_done
