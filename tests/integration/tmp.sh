# The host's /tmp (THREATS 50, 51). The namespace jail's /tmp is a tmpfs
# of its own. On the landlock backend the command gets nothing of the
# host's /tmp from Landlock (whatever right a new file there had, every
# file already there would have too); the supervisor makes what glibc's
# tmpfile() and mkstemp() ask for there and the sockets the run names
# directly in it in the run's own tmp instead, which the host never sees
# and which goes with the run. A Unix
# socket file is reached only when a socket of the run is bound to it or
# --connect unix:PATH names it, never because its directory is granted.
. tests/lib.sh

new_places
LL=false
[ "$TEST_BACKEND" = landlock ] && LL=true
in_jail() {
	jail --net loopback -C "$W" "$@"
}
# Names of this file's own in the host's /tmp (root and stockade-ci, both
# backends, may run this side by side).
N="stockade-test-tmp-$(id -u)-$$"
at_exit sh -c 'rm -rf /tmp/"$0"* /tmp/krb5cc_TEST_"$0"' "$N"

# tmpfile() and mkstemp() in /tmp work, whatever TMPDIR says.
expect_control "outside: tmpfile() works" -- "$PROBE" tmpfile
expect_probe "tmpfile() (O_TMPFILE in /tmp) works in the jail" ok -- in_jail -- "$PROBE" tmpfile
expect_control "outside: mkstemp(/tmp/NAME-XXXXXX) works" -- "$PROBE" mkstemp "/tmp/$N.control-XXXXXX"
expect_probe "mkstemp(/tmp/NAME-XXXXXX) works in the jail" ok -- in_jail -- "$PROBE" mkstemp "/tmp/$N.made-XXXXXX"
made=$(printf '%s\n' "$PROBE_OUTPUT" | sed -n 's/^made //p')
if [ -n "$made" ] && [ ! -e "$made" ]; then
	pass "the file it made in /tmp is gone once the run ends"
else
	fail "the file it made in /tmp is gone once the run ends ('$made')"
fi
if $LL; then
	# Made for the run in its own tmp, used through its descriptor: the
	# /tmp name is not the host's (read again, unlink: ENOENT there).
	cat >"$W/again.sh" <<'SH'
"$1" mkstemp "$2" >made.out || exit 3
exec "$1" "$3" "$(sed -n 's/^made //p' made.out)"
SH
	for op in read unlink; do
		expect_probe "the file mkstemp made in /tmp, $op by name: not in the host's /tmp (ENOENT)" "errno ENOENT" -- \
			in_jail --read "$PROBE" -- sh again.sh "$PROBE" "/tmp/$N.again-XXXXXX" "$op"
	done
	expect_probe "mkdir in /tmp is refused (EACCES)" "errno EACCES" -- in_jail -- "$PROBE" mkdir "/tmp/$N.dir"
	expect_probe "a plain open(O_CREAT) in /tmp is refused (EACCES)" "errno EACCES" -- in_jail -- "$PROBE" write "/tmp/$N.plain"
	expect_probe "listing /tmp is refused (EACCES)" "errno EACCES" -- in_jail -- "$PROBE" ls /tmp
	# --write /tmp on purpose: Landlock grants it, and what the run
	# makes there stays. (This file's home, and maybe the build, are
	# under /tmp: stockade, its state, your settings file, the home
	# (where the default state directory lies) and the probe go
	# elsewhere, or it would refuse to hand the run what it must not
	# write.)
	S=$(mktemp -d /dev/shm/stockade-test-tmp.XXXXXX)
	at_exit rm -rf "$S"
	cp "$STOCKADE" "$S/stockade" && cp "$PROBE" "$S/probe"
	mkdir -p "$S/home"
	expect_probe "with --write /tmp, mkstemp there works" ok -- \
		env HOME="$S/home" XDG_STATE_HOME="$S/state" XDG_CONFIG_HOME="$S/config" "$S/stockade" --backend landlock --net loopback -C "$W" --write /tmp -- \
		"$S/probe" mkstemp "/tmp/$N.kept-XXXXXX"
	kept=$(printf '%s\n' "$PROBE_OUTPUT" | sed -n 's/^made //p')
	[ -n "$kept" ] && [ -f "$kept" ] && pass "and the file stays after the run" || fail "and the file stays after the run ('$kept')"
	rm -f "$kept"
fi
ls -d /tmp/"$N".made-* /tmp/"$N".again-* /tmp/"$N".plain >/dev/null 2>&1 &&
	fail "nothing the runs made is left in /tmp" || pass "nothing the runs made is left in /tmp"

# THREATS 51: the user's own file in /tmp (a Kerberos ticket cache): the
# run neither reads, overwrites, truncates, renames nor deletes it.
K="/tmp/krb5cc_TEST_$N"
echo "ticket-$N" >"$K"
chmod 600 "$K"
sum=$(cksum <"$K")
expect_control "outside: the user's $K is readable" -- "$PROBE" read "$K"
# The namespace jail's /tmp is its own: the name there is another file.
for op in read write append truncate unlink; do
	if $LL; then
		expect_probe "THREATS 51: the user's krb5cc in /tmp, $op: refused (EACCES)" "errno EACCES" -- in_jail -- "$PROBE" "$op" "$K"
	else
		case $op in write | append) want=ok ;; *) want="errno ENOENT" ;; esac
		expect_probe "THREATS 51: the user's krb5cc in /tmp, $op: not there (the jail's own /tmp)" "$want" -- in_jail -- "$PROBE" "$op" "$K"
	fi
done
expect_probe "THREATS 51: the user's krb5cc in /tmp, renamed: refused ($($LL && echo EACCES || echo ENOENT))" \
	"errno $($LL && echo EACCES || echo ENOENT)" -- in_jail -- "$PROBE" rename "$K" "/tmp/$N.stolen"
if $LL; then
	# Made again with O_EXCL: the run's own, in its own tmp, as in the
	# namespace jail's /tmp; the user's file is not touched.
	expect_probe "THREATS 51: the user's krb5cc in /tmp, made again with O_EXCL: the run's own file" ok -- \
		in_jail -- "$PROBE" create-excl "$K"
fi
[ "$(cksum <"$K")" = "$sum" ] && pass "and the file is unchanged" || fail "and the file is unchanged"

# THREATS 50: a tmux-like server of the user's, its socket in a directory
# of its own under /tmp: refused, never accepted; outside it answers.
mkdir -m 700 "/tmp/$N.tmux"
netpeer_start unix "/tmp/$N.tmux/default"
TC=$PEER_COUNT
expect_control "outside: the user's tmux-like socket in /tmp answers" -- "$PROBE" connect-unix "/tmp/$N.tmux/default"
tbase=$(cat "$TC")
expect_probe "THREATS 50: the user's tmux-like socket in /tmp is refused ($($LL && echo EACCES || echo ENOENT))" \
	"errno $($LL && echo EACCES || echo ENOENT)" -- in_jail -- "$PROBE" connect-unix "/tmp/$N.tmux/default"
expect_probe "THREATS 51: a socket bound beside it in its directory is refused ($($LL && echo EACCES || echo ENOENT))" \
	"errno $($LL && echo EACCES || echo ENOENT)" -- in_jail -- "$PROBE" unix-cycle "/tmp/$N.tmux/squat"
[ ! -e "/tmp/$N.tmux/squat" ] && pass "and nothing was made there" || fail "and nothing was made there"
[ "$(cat "$TC")" = "$tbase" ] && pass "the tmux-like server accepted nothing" ||
	fail "the tmux-like server accepted nothing (before: $tbase, after: $(cat "$TC"))"
# --connect unix:PATH reaches that socket, and only that one.
expect_probe "--connect unix:PATH reaches the user's socket in /tmp" ok -- \
	in_jail --connect "unix:/tmp/$N.tmux/default" -- "$PROBE" connect-unix "/tmp/$N.tmux/default"
[ "$(cat "$TC")" = "$((tbase + 1))" ] && pass "and it accepted exactly that connection" ||
	fail "and it accepted exactly that connection (before: $tbase, after: $(cat "$TC"))"

# A socket the run binds directly in /tmp is its own: bound by the name
# getsockname() gives, chmod()ed by it, reached, bound again after the
# close (libuv's pipe tests, whose unlink Landlock refuses), and gone once
# the run ends.
expect_control "outside: a socket in /tmp, bound, chmod'ed, reached, twice" -- "$PROBE" unix-cycle "/tmp/$N.control.sock"
expect_probe "a socket the run binds in /tmp: bound, chmod'ed, reached, twice" ok -- \
	in_jail -- "$PROBE" unix-cycle "/tmp/$N.own.sock"
# The namespace jail's /tmp is its own; on the landlock backend the
# socket is made in the run's own tmp (its TMPDIR), and getsockname()
# gives that path, which the run may chmod and connect to.
if $LL; then
	printf '%s\n' "$PROBE_OUTPUT" | grep -q "^sockname /.*/tmp/$N.own.sock\$" &&
		! printf '%s\n' "$PROBE_OUTPUT" | grep -qx "sockname /tmp/$N.own.sock" &&
		pass "getsockname() gives the path in the run's own tmp it was bound at" ||
		{ fail "getsockname() gives the path in the run's own tmp it was bound at"; diag "$PROBE_OUTPUT"; }
else
	printf '%s\n' "$PROBE_OUTPUT" | grep -qx "sockname /tmp/$N.own.sock" &&
		pass "getsockname() gives the path it bound" || { fail "getsockname() gives the path it bound"; diag "$PROBE_OUTPUT"; }
fi
# A bare name (libuv's TEST_PIPENAME "uv-test-sock", in the current
# directory) is bound as that name: getsockname() gives it back.
expect_probe "a socket bound by a bare name in the workspace: bound, chmod'ed, reached, twice" ok -- \
	in_jail -- "$PROBE" unix-cycle uv-test-sock
printf '%s\n' "$PROBE_OUTPUT" | grep -qx "sockname uv-test-sock" &&
	pass "getsockname() gives the bare name" || { fail "getsockname() gives the bare name"; diag "$PROBE_OUTPUT"; }
cat >"$W/own.sh" <<'SH'
"$1" listen-unix "$2" 20 >own.out 2>&1 &
for i in $(seq 400); do grep -q listening own.out && break; sleep 0.05; done
exec "$1" connect-unix "$2"
SH
expect_probe "its listener in /tmp is reachable by the run" ok -- \
	in_jail --read "$PROBE" -- sh own.sh "$PROBE" "/tmp/$N.listen.sock"
[ ! -e "/tmp/$N.listen.sock" ] && [ ! -e "/tmp/$N.own.sock" ] && pass "its sockets in /tmp are gone once the run ends" ||
	fail "its sockets in /tmp are gone once the run ends"

# What the run makes in /tmp is never seen in the host's /tmp, not even
# while the run goes on: a listener at a name of the run's choosing
# (/tmp/.s.PGSQL.5432, /tmp/.X11-unix/X0's kin, a language server's) is one
# a program of yours would connect to. Inside, a server binds the name and
# a client reaches it by that name; outside, nothing is there during the
# run or after it (the mkstemp() file beside it neither).
cat >"$W/seen.sh" <<'SH'
"$1" mkstemp "$2.seen-XXXXXX" >seen-mk.out 2>&1 || exit 3
"$1" listen-unix "$2.seen.sock" 30 >seen.out 2>&1 &
for i in $(seq 400); do grep -q listening seen.out && break; sleep 0.05; done
"$1" connect-unix "$2.seen.sock" >seen-c.out 2>&1 || exit 4
: >seen.up
for i in $(seq 600); do [ -e seen.done ] && break; sleep 0.05; done
kill $! 2>/dev/null
exec "$1" connect-unix "$2.seen.sock"
SH
rm -f "$W"/seen.up "$W"/seen.done "$W"/seen*.out
in_jail --read "$PROBE" -- sh seen.sh "$PROBE" "/tmp/$N" >"$T/seen.log" 2>&1 &
seen_pid=$!
for i in $(seq 600); do [ -e "$W/seen.up" ] && break; sleep 0.05; done
if [ -e "$W/seen.up" ] && grep -q '^probe: ok' "$W/seen-c.out"; then
	pass "inside the run, a client reaches the run's server at /tmp/NAME by that name"
else
	fail "inside the run, a client reaches the run's server at /tmp/NAME by that name"
	diag "$(cat "$W"/seen*.out "$T/seen.log" 2>&1)"
fi
during=$(ls -d /tmp/"$N".seen* 2>/dev/null)
[ -e "$W/seen.up" ] && [ -z "$during" ] &&
	pass "THREATS 50: outside, nothing the run made in /tmp (its listener, its mkstemp file) is seen while it runs" ||
	fail "THREATS 50: outside, nothing the run made in /tmp (its listener, its mkstemp file) is seen while it runs ($during)"
if [ -n "$during" ]; then
	expect_probe "THREATS 50: outside, the run's listener in /tmp is not reached" "errno ENOENT" -- \
		"$PROBE" connect-unix "/tmp/$N.seen.sock"
fi
: >"$W/seen.done"
wait "$seen_pid"
ls -d /tmp/"$N".seen* >/dev/null 2>&1 && fail "nor after it" || pass "nor after it"

# A host socket in a tree the run may write (the workspace): the landlock
# backend's supervisor refuses it; the namespace jail has no supervisor
# and a Landlock that governs no Unix connect (ABI < 9), so there it is
# reached, as stockade.1 says (unenforced).
netpeer_start unix "$W/host.sock"
WC=$PEER_COUNT
expect_control "outside: a host socket in the workspace answers" -- "$PROBE" connect-unix "$W/host.sock"
wbase=$(cat "$WC")
if $LL; then
	expect_probe "THREATS 50: a host socket in the writable workspace is refused (EACCES)" "errno EACCES" -- \
		in_jail -- "$PROBE" connect-unix "$W/host.sock"
	[ "$(cat "$WC")" = "$wbase" ] && pass "and it accepted nothing" || fail "and it accepted nothing"
else
	expect_probe "namespaces: a host socket in a --write tree is reached (unenforced, named in stockade.1)" ok -- \
		in_jail -- "$PROBE" connect-unix "$W/host.sock"
fi
plan_done
