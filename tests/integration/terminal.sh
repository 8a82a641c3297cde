# The terminal: the command never holds the user's terminal (THREATS 1-3,
# 62). It gets a pty of its own, with job control, the window size and
# the exit status passed through and the user's mode restored; it cannot
# inject input, steal what the user types, or change the terminal for
# after the run. Run on a pty that ptyrun owns (the user's terminal, as a
# shell would have it); each attack tried outside first.
. tests/lib.sh

new_places

pending() {
	printf '%s\n' "$PROBE_OUTPUT" | grep '^ptyrun: pending input:' | tail -n 1
}

# This machine lets TIOCSTI work (dev.tty.legacy_tiocsti=1), so the
# control shows a real injection.
if [ "$(cat /proc/sys/dev/tty/legacy_tiocsti 2>/dev/null)" = 0 ]; then
	skip "TIOCSTI is disabled by the kernel here (dev.tty.legacy_tiocsti=0): nothing to inject"
else
	expect_probe "THREATS 1 control: outside, TIOCSTI injects into the terminal" ok -- "$PTYRUN" -- "$PROBE" tiocsti $'id\n'
	[ "$(pending)" = 'ptyrun: pending input: id\n' ] && pass "outside: the shell would read 'id'" ||
		{ fail "outside: the shell would read 'id'"; diag "$(pending)"; }
fi
expect_probe "THREATS 1: TIOCSTI in the jail is refused" "errno EPERM" -- "$PTYRUN" -- "${JAIL[@]}" --net off -C "$W" -- "$PROBE" tiocsti $'id\n'
[ "$(pending)" = 'ptyrun: pending input: none' ] && pass "THREATS 1: nothing was injected" || { fail "THREATS 1: nothing was injected"; diag "$(pending)"; }
expect_probe "THREATS 2: TIOCSTI with high bits in the jail is refused" "errno EPERM" -- "$PTYRUN" -- "${JAIL[@]}" --net off -C "$W" -- "$PROBE" tiocsti-high $'id\n'
[ "$(pending)" = 'ptyrun: pending input: none' ] && pass "THREATS 2: nothing was injected with high bits" || fail "THREATS 2: nothing was injected with high bits"
expect_probe "THREATS 2: TIOCLINUX in the jail is refused" "errno EPERM" -- "$PTYRUN" -- "${JAIL[@]}" --net off -C "$W" -- "$PROBE" tioclinux

# The command is in its terminal's foreground process group (the run's
# own pty): it can read what is typed, and job control works. Its group
# is not the session's: the session is led by the jail's init or the
# keeper (a group without a parent in another group of its session is
# orphaned, and a Ctrl-Z's SIGTSTP is discarded).
expect_probe "the command is in the foreground" ok -- "$PTYRUN" -- "${JAIL[@]}" --net off -C "$W" -- "$PROBE" pgrp
pgrp=$(printf '%s\n' "$PROBE_OUTPUT" | sed -n 's/^pgrp //p')
tpgrp=$(printf '%s\n' "$PROBE_OUTPUT" | sed -n 's/^tpgrp //p')
[ -n "$pgrp" ] && [ "$pgrp" = "$tpgrp" ] && pass "its process group owns the terminal" ||
	{ fail "its process group owns the terminal"; diag "$PROBE_OUTPUT"; }
sid=$(printf '%s\n' "$PROBE_OUTPUT" | sed -n 's/^sid //p')
[ -n "$sid" ] && [ "$sid" != "$pgrp" ] && pass "its group is not its session's leader's (not orphaned)" ||
	{ fail "its group is not its session's leader's (not orphaned)"; diag "$PROBE_OUTPUT"; }
out=$("$PTYRUN" --send '500:hello from the keyboard\n' -- "${JAIL[@]}" --net off -C "$W" -- head -n 1 2>&1)
case $out in *"hello from the keyboard"*"ptyrun: exit 0"*) pass "an interactive program reads the terminal" ;;
*) fail "an interactive program reads the terminal"; diag "$out" ;; esac
expect_probe "the program can open /dev/tty" ok -- "$PTYRUN" --send '500:x\n' -- "${JAIL[@]}" --net off -C "$W" -- "$PROBE" append /dev/tty

# A Ctrl-C reaches the command once: the terminal sends it to the whole
# foreground group, and stockade does not forward it again.
expect_probe "Ctrl-C reaches the command" ok -- "$PTYRUN" --after waiting --send '100:\x03' -- "${JAIL[@]}" --net off -C "$W" -- "$PROBE" signals 2
n=$(printf '%s\n' "$PROBE_OUTPUT" | grep -c '^got SIGINT')
[ "$n" -eq 1 ] && pass "exactly once" || { fail "exactly once (got $n)"; diag "$PROBE_OUTPUT"; }
out=$("$PTYRUN" --after sleep-ready --send '100:\x03' -- "${JAIL[@]}" --net off -C "$W" -- sh -c 'echo sleep-ready; exec sleep 30' 2>&1)
case $out in *"ptyrun: exit 130"*) pass "Ctrl-C ends a command that does not catch it, status 130" ;;
*) fail "Ctrl-C ends a command that does not catch it, status 130"; diag "$out" ;; esac

# With stdin not a terminal, the Ctrl-C the terminal sends reaches
# stockade, in the terminal's foreground, which forwards it once to the
# command's own session.
expect_probe "Ctrl-C reaches a command whose stdin is not the terminal" ok -- "$PTYRUN" --after waiting --send '100:\x03' -- \
	sh -c 'exec "$@" </dev/null' sh "${JAIL[@]}" --net off -C "$W" -- "$PROBE" signals 2
n=$(printf '%s\n' "$PROBE_OUTPUT" | grep -c '^got SIGINT')
[ "$n" -eq 1 ] && pass "exactly once, forwarded" || { fail "exactly once, forwarded (got $n)"; diag "$PROBE_OUTPUT"; }

# Another terminal of the user is out of reach (THREATS 3). The namespace
# jail has a devpts of its own, where the run's own pty may hold the same
# number as the other terminal on the host: what counts is that nothing
# the jail writes reaches the other one.
if [ -c /dev/pts/ptmx ]; then
	"$PTYRUN" --timeout 60 -- sh -c 'tty; sleep 50' >"$T/other-tty" 2>&1 &
	at_exit kill $!
	wait_until grep -q '^/dev/pts/' "$T/other-tty" 2>/dev/null
	other_tty=$(grep -m1 '^/dev/pts/' "$T/other-tty" | tr -d '\r')
	if [ -n "$other_tty" ]; then
		expect_control "THREATS 3 control: outside, another terminal of the user can be written" -- "$PROBE" append "$other_tty"
		# The control's line reaches the other terminal's log a moment
		# later: counted once it is there, or a late one looks like the
		# jail's.
		wait_until grep -q '^probe' "$T/other-tty"
		sleep 0.3
		before=$(grep -c '^probe' "$T/other-tty")
		"$PTYRUN" -- "${JAIL[@]}" --net off -C "$W" -- "$PROBE" append "$other_tty" >"$T/other-try" 2>&1
		sleep 0.3
		after=$(grep -c '^probe' "$T/other-tty")
		result=$(grep -E '^probe: (ok|errno)' "$T/other-try")
		# Landlock refuses it; the namespace jail has no such path, or
		# that name is the run's own pty.
		if ! grep -q '^probe: started' "$T/other-try"; then
			fail "THREATS 3: another terminal of the user cannot be written from the jail"
			diag "$(cat "$T/other-try")"
		elif [ "$before" = "$after" ] && { [ "$result" = "probe: errno EACCES" ] || fresh_places; }; then
			pass "THREATS 3: another terminal of the user cannot be written from the jail ($result)"
		else
			fail "THREATS 3: another terminal of the user cannot be written from the jail"
			diag "$result; lines on the other terminal: $before, then $after"
		fi
	else
		fail "could not start a second terminal to test with"
	fi
fi

# A pty a program makes for itself (tmux, script, pexpect, libuv's
# tty_pty tests): glibc's openpty opens its slave with TIOCGPTPEER, which
# the landlock backend's supervisor carries out (no /dev/pts name is
# granted there, so the other terminals above stay out of reach); the
# namespace jail's devpts is its own. A child with the new pty as its
# controlling terminal runs in it.
own_pty='import os, pty, sys
pid, fd = pty.fork()
if pid == 0:
    os.execvp("sh", ["sh", "-c", "tty; echo in-its-own-pty"])
out = b""
while True:
    try:
        d = os.read(fd, 100)
    except OSError:
        break
    if not d:
        break
    out += d
_, st = os.waitpid(pid, 0)
print(out.decode().replace("\r", ""))
m, s = os.openpty()
os.write(m, b"ping\n")
print("read", os.read(s, 5))
print("status", st)'
for where in outside jail; do
	if [ $where = outside ]; then
		out=$(python3 -c "$own_pty" </dev/null 2>&1)
	else
		out=$(jail --net off -C "$W" -- python3 -c "$own_pty" </dev/null 2>&1)
	fi
	case $out in
	*/dev/pts/*in-its-own-pty*"read b'ping\n'"*"status 0"*) pass "$where: a program makes a pty of its own and runs a child in it" ;;
	*) fail "$where: a program makes a pty of its own and runs a child in it"; diag "$out" ;;
	esac
done
# libuv's reopen of a tty by its name (uv_tty_init: O_NOCTTY | O_CLOEXEC)
# works for a pty the run made; once that pty is gone, its number may be
# one of yours, and the same name reaches nothing of yours.
reopen='import os, sys, time
m, s = os.openpty()
name = os.ttyname(s)
fd = os.open(name, os.O_RDWR | os.O_NOCTTY | os.O_CLOEXEC)
os.write(fd, b"x\n")
print("reopened", name, os.read(m, 3))
os.close(fd); os.close(s); os.close(m)
open("gone", "w").write(name)
while not os.path.exists("go"):
    time.sleep(0.05)
try:
    fd = os.open(name, os.O_RDWR | os.O_NOCTTY | os.O_CLOEXEC)
    os.write(fd, b"from the jail\n")
    print("the name reaches", name)
except OSError as e:
    print("reopen after errno", e.errno)'
rm -f "$W/gone" "$W/go"
jail --net off -C "$W" -- python3 -c "$reopen" >"$T/reopen.out" 2>&1 </dev/null &
jailed=$!
wait_until test -s "$W/gone"
# Yours: a pty made now, outside, takes the lowest free number, which is
# the one the run's had.
python3 -c 'import os, sys, time
m, s = os.openpty()
print(os.ttyname(s), flush=True)
os.set_blocking(m, False)
time.sleep(3)
try:
    print("got", os.read(m, 100))
except BlockingIOError:
    print("got nothing")' >"$T/yours.out" 2>&1 &
yours=$!
wait_until test -s "$T/yours.out"
: >"$W/go"
wait "$jailed"
wait "$yours"
out=$(cat "$T/reopen.out")
case $out in
*"reopened /dev/pts/"*"b'x"*) pass "a program reopens the slave of its own pty by its name (libuv's uv_tty_init)" ;;
*) fail "a program reopens the slave of its own pty by its name (libuv's uv_tty_init)"; diag "$out" ;;
esac
theirs=$(cat "$W/gone" 2>/dev/null)
mine=$(head -1 "$T/yours.out")
if ! fresh_places && [ "$theirs" = "$mine" ]; then
	case $out:$(cat "$T/yours.out") in
	*"reopen after errno"*"got nothing"*) pass "once gone, its number is yours, and the name reaches nothing of yours"; diag "$mine" ;;
	*) fail "once gone, its number is yours, and the name reaches nothing of yours"; diag "$mine"; diag "$out"; diag "$(cat "$T/yours.out")" ;;
	esac
else
	case $out:$(cat "$T/yours.out") in
	*"reopen after errno"*"got nothing"*) pass "once gone, the name reaches nothing (the jail's devpts, or another number)"; diag "$theirs, $mine" ;;
	*) fail "once gone, the name reaches nothing"; diag "$out"; diag "$(cat "$T/yours.out")" ;;
	esac
fi
rm -f "$W/gone" "$W/go"
# TIOCGPTPEER on what is not a pty's master answers as the kernel does.
out=$(jail --net off -C "$W" -- python3 -c 'import fcntl, os
fd = os.open("/dev/null", os.O_RDWR)
try:
    fcntl.ioctl(fd, 0x5441, os.O_RDWR | os.O_NOCTTY)
    print("a peer")
except OSError as e:
    print("errno", e.errno)' 2>&1)
[ "$out" = "errno 25" ] && pass "TIOCGPTPEER on /dev/null: ENOTTY, as outside" || { fail "TIOCGPTPEER on /dev/null: ENOTTY, as outside"; diag "$out"; }

# THREATS 62, CVE-2016-2779: the user's terminal taken. An agent runs a
# tool with stdin from /dev/null, its session's terminal a pty: the tool
# opens /dev/tty, ignores SIGTTOU, makes itself the foreground and reads
# what the user types next (a password at the shell's prompt).
nonce=$(nonce_new)
# typed_outside OP ARG...: the probe's OP on the user's terminal, stdin
# from /dev/null, while the user types the nonce; typed_inside: the same
# jailed, which then stays a moment (the user types while it runs).
typed_outside() {
	"$PTYRUN" --send "700:$nonce\n" -- sh -c 'exec "$@" </dev/null' sh "$PROBE" "$@"
}
typed_inside() {
	"$PTYRUN" --send "700:$nonce\n" -- sh -c 'exec "$@" </dev/null' sh "${JAIL[@]}" --net off -C "$W" --read "$PROBE" -- \
		sh -c '"$0" "$@"; r=$?; sleep 1.5; exit $r' "$PROBE" "$@"
}
expect_probe "THREATS 62 control: outside, /dev/tty opened and the foreground taken, the user's next line read" ok -- typed_outside tty-steal 3
case $PROBE_OUTPUT in *"stole: $nonce"*) pass "THREATS 62 control: what the user typed was stolen" ;;
*) fail "THREATS 62 control: what the user typed was stolen"; diag "$PROBE_OUTPUT" ;; esac
expect_probe "THREATS 62: in the jail /dev/tty is no terminal (no controlling terminal)" "errno ENXIO" -- typed_inside tty-steal 3
case $PROBE_OUTPUT in *"stole:"*) fail "THREATS 62: the jail read nothing the user typed"; diag "$PROBE_OUTPUT" ;;
*) pass "THREATS 62: the jail read nothing the user typed" ;; esac
[ "$(pending)" = "ptyrun: pending input: $nonce\n" ] && pass "THREATS 62: what the user typed is still the shell's" ||
	{ fail "THREATS 62: what the user typed is still the shell's"; diag "$(pending)"; }

# The same through a descriptor: stdout, the terminal, read as a process
# with no controlling terminal may read any terminal it holds.
expect_probe "THREATS 62 control: outside, the user's next line read through stdout" ok -- typed_outside read-fd 1 3
expect_probe "THREATS 62: in the jail stdout is a pty of the run's own, where nobody types" "errno ETIMEDOUT" -- typed_inside read-fd 1 3
[ "$(pending)" = "ptyrun: pending input: $nonce\n" ] && pass "THREATS 62: what the user typed is still the shell's (stdout)" ||
	{ fail "THREATS 62: what the user typed is still the shell's (stdout)"; diag "$(pending)"; }
out=$("$PTYRUN" -- sh -c 'exec "$@" </dev/null' sh "${JAIL[@]}" --net off -C "$W" -- sh -c '[ -t 1 ] && echo stdout-a-terminal; [ -t 0 ] || echo stdin-not' 2>&1)
case $out in *stdout-a-terminal*stdin-not*) pass "stdout that was the terminal is still one (the run's pty), stdin as it was" ;;
*) fail "stdout that was the terminal is still one (the run's pty), stdin as it was"; diag "$out" ;; esac
out=$("$PTYRUN" -- sh -c '"$@" >"$0"; cat "$0"' "$T/redirected" "${JAIL[@]}" --net off -C "$W" -- sh -c '[ -t 0 ] && echo stdin-a-terminal; [ -t 1 ] || echo stdout-a-file' 2>&1)
case $out in *stdin-a-terminal*stdout-a-file*) pass "a redirected stdout stays as it was, stdin the run's pty" ;;
*) fail "a redirected stdout stays as it was, stdin the run's pty"; diag "$out" ;; esac

# THREATS 62: TIOCSETD, a line discipline that outlives the run (N_NULL
# takes no input), refused; the terminal works afterwards.
# (N_NULL swallows the probe's own lines too: they go to a file.)
out=$("$PTYRUN" -- sh -c 'exec "$0" tiocsetd 0 27 >"$1" 2>&1' "$PROBE" "$T/setd.out" 2>&1)
case $(cat "$T/setd.out")/$out in *"probe: ok"*/*"ptyrun: ldisc 27"*) pass "THREATS 62 control: outside, TIOCSETD sets N_NULL on the terminal, and it outlives the process" ;;
*) fail "THREATS 62 control: outside, TIOCSETD sets N_NULL on the terminal, and it outlives the process"; diag "$(cat "$T/setd.out")" "$out" ;; esac
rm -f "$T/setd.json"
expect_probe "THREATS 62: TIOCSETD in the jail is refused" "errno EPERM" -- "$PTYRUN" -- "${JAIL[@]}" --net off -C "$W" --report "$T/setd.json" -- "$PROBE" tiocsetd 0 27
case $PROBE_OUTPUT in *"ptyrun: ldisc 0"*) pass "THREATS 62: the terminal's line discipline is unchanged" ;;
*) fail "THREATS 62: the terminal's line discipline is unchanged"; diag "$PROBE_OUTPUT" ;; esac
grep -q '"what": "ioctl TIOCSETD"' "$T/setd.json" 2>/dev/null && pass "the report names the refused TIOCSETD" ||
	{ fail "the report names the refused TIOCSETD"; diag "$(cat "$T/setd.json" 2>/dev/null)"; }
out=$("$PTYRUN" --after run-over --send '100:typed after\n' -- sh -c '"$@"; echo run-over; head -n 1' sh "${JAIL[@]}" --net off -C "$W" -- "$PROBE" tiocsetd 0 27 2>&1)
case $out in *"probe: errno EPERM"*"typed after"*) pass "THREATS 62: the terminal takes input after the run" ;;
*) fail "THREATS 62: the terminal takes input after the run"; diag "$out" ;; esac

# The window size: the start's, and each change (SIGWINCH) after.
expect_probe "control: outside, a resize reaches the command" ok -- "$PTYRUN" --winch 800:40x100 -- "$PROBE" winsize 4
case $PROBE_OUTPUT in *"size 24x80"*"winch 40x100"*) pass "control: 24x80, then SIGWINCH and 40x100" ;;
*) fail "control: 24x80, then SIGWINCH and 40x100"; diag "$PROBE_OUTPUT" ;; esac
expect_probe "a resize reaches the jailed command" ok -- "$PTYRUN" --after 'size 24x80' --winch 100:40x100 -- "${JAIL[@]}" --net off -C "$W" -- "$PROBE" winsize 5
case $PROBE_OUTPUT in *"size 24x80"*"winch 40x100"*) pass "the jail's pty: 24x80, then SIGWINCH and 40x100" ;;
*) fail "the jail's pty: 24x80, then SIGWINCH and 40x100"; diag "$PROBE_OUTPUT" ;; esac
# Started in a session of its own (su -c, setsid): the terminal is not
# stockade's controlling terminal and no SIGWINCH reaches it; the size is
# followed as the user types. Outside, such a command sees no resize at
# all.
if command -v setsid >/dev/null; then
	expect_probe "control: outside, in a session of its own, no SIGWINCH comes" ok -- \
		"$PTYRUN" --winch 300:40x100 --send 600:x -- setsid -w "$PROBE" winsize 2
	case $PROBE_OUTPUT in *"no winch"*) pass "control: no SIGWINCH outside the terminal's session" ;;
	*) fail "control: no SIGWINCH outside the terminal's session"; diag "$PROBE_OUTPUT" ;; esac
	expect_probe "stockade in a session of its own: the resize reaches the command at the next key" ok -- \
		"$PTYRUN" --after 'size 24x80' --winch 100:40x100 --send 400:x -- setsid -w "${JAIL[@]}" --net off -C "$W" -- \
		"$PROBE" winsize 5
	case $PROBE_OUTPUT in *"size 24x80"*"winch 40x100"*) pass "without a controlling terminal: 24x80, then SIGWINCH and 40x100" ;;
	*) fail "without a controlling terminal: 24x80, then SIGWINCH and 40x100"; diag "$PROBE_OUTPUT" ;; esac
fi
# The terminal closed (a window shut) under a stockade in a session of its
# own: no SIGHUP comes to it, and the command still hears one. A parent
# that outlives the hangup (its SIGHUP handled, not ignored: the child's
# is the default again) waits for it and exits with its status.
cat >"$T/own-session.py" <<'PY'
import os, signal, sys
signal.signal(signal.SIGHUP, lambda *a: None)
pid = os.fork()
if pid == 0:
    os.setsid()
    os.execvp(sys.argv[1], sys.argv[1:])
while True:
    try:
        _, st = os.waitpid(pid, 0)
        break
    except InterruptedError:
        continue
code = os.waitstatus_to_exitcode(st)
sys.exit(code if code >= 0 else 128 - code)
PY
hup_mark=hangup-$(nonce_new | tr -cd 'a-z0-9' | tail -c 12)
out=$("$PTYRUN" --after ready --hangup 300 --timeout 10 -- python3 "$T/own-session.py" sh -c 'echo ready; read x' 2>&1)
case $out in *"ptyrun: exit 1"*) pass "control: outside, in a session of its own, a command reading the closed terminal ends (EOF)" ;;
*) fail "control: outside, in a session of its own, a command reading the closed terminal ends (EOF)"; diag "$out" ;; esac
out=$("$PTYRUN" --after ready --hangup 300 --timeout 10 -- python3 "$T/own-session.py" "${JAIL[@]}" --net off -C "$W" -- \
	sh -c 'echo ready; read x; : '"$hup_mark" 2>&1)
case $out in *"ptyrun: exit 129"*) pass "the terminal closed under stockade in a session of its own: the command hears SIGHUP (129)" ;;
*) fail "the terminal closed under stockade in a session of its own: the command hears SIGHUP (129)"; diag "$out"
	pkill -KILL -f "$hup_mark" ;; esac

# The exit status, passed through.
for cmd in 'exit 42' 'kill -TERM $$'; do
	want=$("$PTYRUN" -- sh -c "$cmd" 2>&1 | grep -E '^ptyrun: (exit|signal)')
	got=$("$PTYRUN" -- "${JAIL[@]}" --net off -C "$W" -- sh -c "$cmd" 2>&1 | grep -E '^ptyrun: (exit|signal)')
	case $want/$got in
	"ptyrun: exit 42/ptyrun: exit 42" | "ptyrun: signal SIGTERM/ptyrun: exit 143")
		pass "the status of '$cmd' passes through ($want outside, $got)" ;;
	*) fail "the status of '$cmd' passes through"; diag "outside: $want; jailed: $got" ;;
	esac
done

# The user's terminal is in raw mode while the command runs, and as it
# was at every end stockade sees. The control: a SIGKILL, which nothing
# can catch, leaves it raw (so the check sees a mode not restored).
expect_probe "control: stockade killed with SIGKILL leaves the terminal raw" "signal SIGKILL" -- \
	"$PTYRUN" --after 'probe: started' --signal 200:KILL -- "${JAIL[@]}" --net off -C "$W" -- "$PROBE" sleep 30
case $PROBE_OUTPUT in *"ptyrun: mode changed"*) pass "control: the mode was changed, and not restored" ;;
*) fail "control: the mode was changed, and not restored"; diag "$PROBE_OUTPUT" ;; esac
expect_probe "a SIGTERM to stockade ends the command" "exit 143" -- \
	"$PTYRUN" --after 'probe: started' --signal 200:TERM -- "${JAIL[@]}" --net off -C "$W" -- "$PROBE" sleep 30
case $PROBE_OUTPUT in *"ptyrun: mode same"*) pass "the terminal's mode is restored after a SIGTERM to stockade" ;;
*) fail "the terminal's mode is restored after a SIGTERM to stockade"; diag "$PROBE_OUTPUT" ;; esac
out=$("$PTYRUN" -- "${JAIL[@]}" --net off -C "$W" -- /nonexistent/program 2>&1)
case $out in *"ptyrun: mode same"*"ptyrun: exit 127"*) pass "and after a command that cannot start (127)" ;;
*) fail "and after a command that cannot start (127)"; diag "$out" ;; esac

# A command that stops itself (or is stopped): stockade stops too, with
# the user's mode back, and continues it when continued. Under ptyrun,
# with no job control, the kernel leaves stockade running, and the
# command goes on at once instead of hanging the run.
out=$("$PTYRUN" --timeout 20 -- "${JAIL[@]}" --net off -C "$W" -- sh -c 'kill -STOP $$; echo resumed' 2>&1)
case $out in *resumed*"ptyrun: exit 0"*) pass "a stopped command is continued, not left hanging" ;;
*) fail "a stopped command is continued, not left hanging"; diag "$out" ;; esac

# Job control under a real shell (tmux): Ctrl-Z suspends the jailed
# command back to the user's shell, fg resumes it, as without stockade.
# The command's process group must have a parent in another group of its
# session (the jail's init, the keeper), else it is orphaned and the
# kernel discards the SIGTSTP. The same steps outside first.
if command -v tmux >/dev/null; then
	TMUX_SOCK="$T/tmux.sock"
	tm() { tmux -S "$TMUX_SOCK" -f /dev/null "$@"; }
	at_exit tmux -S "$TMUX_SOCK" kill-server
	pane() { tm capture-pane -p -J -S -100 -t jobs 2>/dev/null; }
	pane_has() { pane | grep -q -- "$1"; }
	# job_control WHERE CMD...: CMD run by an interactive bash in tmux:
	# it says ready and reads a line; Ctrl-Z, jobs, fg, a line typed,
	# its exit status.
	job_control() {
		local where=$1
		shift
		printf "PS1='OUT\$ '\nJ=(%s)\n" "$(printf '%q ' "$@")" >"$T/tmux.rc"
		tm kill-session -t jobs 2>/dev/null
		tm new-session -d -s jobs -x 200 -y 50 -c "$W" "bash --noprofile --rcfile '$T/tmux.rc' -i"
		wait_until pane_has 'OUT\$' || { fail "$where: the shell in tmux starts"; diag "$(pane)"; return; }
		tm send-keys -t jobs 'clear; "${J[@]}" sh -c '\''echo job-ready; read x; echo "job-read $x"; exit 3'\' Enter
		wait_until pane_has '^job-ready' || { fail "$where: the job starts"; diag "$(pane)"; return; }
		sleep 0.3
		tm send-keys -t jobs C-z
		local end=$((SECONDS + 10))
		until pane_has 'Stopped' || [ $SECONDS -ge $end ]; do sleep 0.05; done
		if pane_has 'Stopped'; then
			pass "$where: Ctrl-Z suspends the job back to the shell"
		else
			fail "$where: Ctrl-Z suspends the job back to the shell"
			diag "$(pane)"
			tm send-keys -t jobs C-c
			return
		fi
		tm send-keys -t jobs 'jobs -s | wc -l | sed "s/^/stopped-jobs /"' Enter
		wait_until pane_has '^stopped-jobs' && pane_has '^stopped-jobs 1' && pass "$where: the shell has it as a stopped job" ||
			{ fail "$where: the shell has it as a stopped job"; diag "$(pane)"; }
		tm send-keys -t jobs 'fg' Enter
		sleep 0.5
		tm send-keys -t jobs 'typed after fg' Enter
		wait_until pane_has '^job-read typed after fg' && pass "$where: fg resumes it, and it reads what is typed" ||
			{ fail "$where: fg resumes it, and it reads what is typed"; diag "$(pane)"; }
		tm send-keys -t jobs 'echo "status $?"' Enter
		wait_until pane_has '^status 3' && pass "$where: its exit status after fg" ||
			{ fail "$where: its exit status after fg"; diag "$(pane)"; }
		# bg: it goes on in the background, its output still shown.
		tm send-keys -t jobs 'clear; "${J[@]}" sh -c '\''echo bg-ready; sleep 1.5; echo bg-finished; exit 4'\' Enter
		wait_until pane_has '^bg-ready' || { fail "$where: the second job starts"; diag "$(pane)"; return; }
		tm send-keys -t jobs C-z
		wait_until pane_has 'Stopped' || { fail "$where: Ctrl-Z suspends the second job"; diag "$(pane)"; return; }
		tm send-keys -t jobs 'bg; wait %1; echo "bg-status $?"' Enter
		wait_until pane_has '^bg-status' && pane_has '^bg-finished' && pane_has '^bg-status 4' &&
			pass "$where: bg lets it go on in the background to its end" ||
			{ fail "$where: bg lets it go on in the background to its end"; diag "$(pane)"; }
		# Started with &: it runs in the background to its end, where a
		# raw mode set at its start stopped it (SIGTTOU) at once.
		tm send-keys -t jobs 'clear; "${J[@]}" sh -c '\''sleep 1; echo amp-finished; exit 5'\'' & wait %1; echo "amp-status $?"' Enter
		wait_until pane_has '^amp-status' && pane_has '^amp-finished' && pane_has '^amp-status 5' &&
			pass "$where: started with &, it runs in the background to its end" ||
			{ fail "$where: started with &, it runs in the background to its end"; diag "$(pane)"; }
		# kill %1 of a stopped job: it ends by that signal.
		tm send-keys -t jobs 'clear; "${J[@]}" sh -c '\''echo kill-ready; exec sleep 30'\' Enter
		wait_until pane_has '^kill-ready' || { fail "$where: the third job starts"; diag "$(pane)"; return; }
		tm send-keys -t jobs C-z
		wait_until pane_has 'Stopped' || { fail "$where: Ctrl-Z suspends the third job"; diag "$(pane)"; return; }
		tm send-keys -t jobs 'kill %1' Enter
		sleep 1
		# (bash's own SIGCONT after the SIGTERM does not always take, even
		# outside: one more.)
		tm send-keys -t jobs 'kill -CONT %1 2>/dev/null; wait %1; echo "kill-status $?"' Enter
		wait_until pane_has '^kill-status' && pane_has '^kill-status 143' && pass "$where: kill %1 ends the stopped job (143)" ||
			{ fail "$where: kill %1 ends the stopped job (143)"; diag "$(pane)"; }
	}
	job_control outside env
	job_control jailed "${JAIL[@]}" -q --net off -C "$W" --
	# A session's command: session exec relays its pty as a run does.
	sid=$("$STOCKADE" session start --backend "$TEST_BACKEND" -q --net off -C "$W" 2>"$T/session.err")
	if [ -n "$sid" ]; then
		at_exit "$STOCKADE" session stop "$sid"
		job_control "session exec" "$STOCKADE" session exec "$sid" --
		"$STOCKADE" session stop "$sid"
	else
		fail "a session starts for session exec's job control"
		diag "$(cat "$T/session.err")"
	fi
	tm kill-server 2>/dev/null
else
	skip "tmux is needed for job control under a shell"
fi

# The session's leader, which job control needs, is no way out: the
# landlock backend's keeper is out of the command's reach (Landlock's
# signal scope), and the namespace jail's leader is its own init (pid 1),
# in the jail.
expect_control "control: outside, a process of the user's can be signalled (0)" -- "$PROBE" kill $$ 0
out=$("$PTYRUN" -- "${JAIL[@]}" --net off -C "$W" --read "$PROBE" -- sh -c 'sid=$(cut -d" " -f6 /proc/self/stat); echo "sid $sid"
	"$0" kill "$sid" 0; echo still-here' "$PROBE" 2>&1)
sid=$(printf '%s\n' "$out" | sed -n 's/^sid \([0-9]*\).*/\1/p')
if [ "$TEST_BACKEND" = namespaces ]; then
	case $sid/$out in 1/*"probe: ok"*still-here*"ptyrun: exit 0"*) pass "the namespace jail's session is led by its init (pid 1)" ;;
	*) fail "the namespace jail's session is led by its init (pid 1)"; diag "$out" ;; esac
else
	case $out in *"probe: started"*"probe: errno EPERM"*still-here*"ptyrun: exit 0"*) pass "the keeper, which leads the session ($sid), cannot be signalled from the jail" ;;
	*) fail "the keeper, which leads the session, cannot be signalled from the jail"; diag "$out" ;; esac
fi

# An interactive shell in the jail: its prompt, its terminal, its own job
# control (Ctrl-Z through the pty's line discipline stops its job).
bash_session() {
	# (from its first prompt, bash-5.2$ or bash-5.2#)
	"$PTYRUN" --timeout 30 --after bash- --send '100:echo $((6*7)); tty\n' --send '800:sleep 30\n' --send '2100:\x1a' \
		--send '3100:jobs; kill -9 %1\n' --send '4100:exit 7\n' --send '4800:exit 7\n' -- "$@" bash --norc -i 2>&1
}
for where in outside jail; do
	if [ $where = outside ]; then out=$(bash_session); else out=$(bash_session "${JAIL[@]}" --net off -C "$W" --); fi
	case $out in *42*/dev/pts/*Stopped*"sleep 30"*"ptyrun: mode same"*"ptyrun: exit 7"*)
		pass "bash -i $where: runs, has a terminal, stops a job with Ctrl-Z, exits 7" ;;
	*) fail "bash -i $where: runs, has a terminal, stops a job with Ctrl-Z, exits 7"; diag "$out" ;; esac
done

# The list of terminal requests keeps everyday tools working, on the
# terminal and off it (sockets, pipes, files: FIONBIO, FIONREAD,
# FICLONE): each says ok, and the report has no ioctl refused.
echo data >"$W/copy-me"
tools_session() {
	"$PTYRUN" --timeout 60 --send '2500:q' -- "$@" sh -c '
		stty size >/dev/null && tput cols >/dev/null && echo stty-tput-ok
		seq 200 | less && echo less-ok
		python3 -c "
import fcntl, os, socket, struct, termios
s = socket.socket(socket.AF_UNIX); s.setblocking(False)
r, w = os.pipe(); os.write(w, b\"abc\")
assert struct.unpack(\"i\", fcntl.ioctl(r, termios.FIONREAD, b\"\\0\" * 4))[0] == 3
fcntl.ioctl(0, termios.TIOCGWINSZ, b\"\\0\" * 8)
termios.tcsetattr(0, termios.TCSADRAIN, termios.tcgetattr(0))
print(\"python-ok\")"
		node -e "process.stdout.write(process.stdout.isTTY ? \"node-ok\\n\" : \"node-no-tty\\n\")"
		cp --reflink=auto copy-me copied && echo cp-ok' 2>&1
}
tools_ok() {
	case $1 in *stty-tput-ok*less-ok*python-ok*node-ok*cp-ok*) return 0 ;; esac
	return 1
}
if command -v python3 >/dev/null && command -v node >/dev/null && command -v less >/dev/null; then
	out=$(cd "$W" && tools_session)
	tools_ok "$out" && pass "control: outside, stty, tput, less, python, node and cp work on the terminal" ||
		{ fail "control: outside, stty, tput, less, python, node and cp work on the terminal"; diag "$out"; }
	rm -f "$W/copied" "$T/tools.json"
	out=$(cd "$W" && tools_session "${JAIL[@]}" -q --net off -C "$W" --report "$T/tools.json" --)
	tools_ok "$out" && pass "jailed: stty, tput, less, python, node and cp work on the run's pty" ||
		{ fail "jailed: stty, tput, less, python, node and cp work on the run's pty"; diag "$out"; }
	if [ -s "$T/tools.json" ] && ! grep -q '"what": "ioctl' "$T/tools.json"; then
		pass "no ioctl of theirs was refused"
	else
		fail "no ioctl of theirs was refused"
		diag "$(cat "$T/tools.json" 2>/dev/null)"
	fi
else
	skip "python3, node and less are needed for the tools' session"
fi

# THREATS 4: output injection (an OSC 52 clipboard write, a title). The
# relay passes what the command writes as it wrote it, and stockade(1)
# says so (TERMINAL AND SIGNALS): the bytes reach the terminal unchanged,
# as they would without stockade.
osc=$'\e]52;c;c3RvY2thZGU=\a\e]0;title\a'
want=$("$PTYRUN" -- printf '%s' "$osc" 2>&1 | head -c 64 | od -An -c | tr -d ' \n')
got=$("$PTYRUN" -- "${JAIL[@]}" -q --net off -C "$W" -- printf '%s' "$osc" 2>&1 | head -c 64 | od -An -c | tr -d ' \n')
case $want in *033]52\;c\;c3RvY2thZGU=\\a*) pass "THREATS 4 control: outside, the escape sequences reach the terminal" ;;
*) fail "THREATS 4 control: outside, the escape sequences reach the terminal"; diag "$want" ;; esac
[ -n "$got" ] && [ "$got" = "$want" ] && pass "THREATS 4: from the jail they pass unchanged, as documented" ||
	{ fail "THREATS 4: from the jail they pass unchanged, as documented"; diag "outside: $want" "jailed: $got"; }
tr '\n' ' ' <stockade.1 | grep -q 'escape sequences (a title, a clipboard write with OSC 52, links) are not filtered' && pass "THREATS 4: stockade.1 documents the pass-through" ||
	fail "THREATS 4: stockade.1 documents the pass-through"

plan_done
