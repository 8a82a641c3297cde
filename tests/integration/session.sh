# Sessions: one jail, many commands (stockade.1, SESSIONS). Exit statuses
# and signals, a terminal, what a command leaves running, --publish, many
# commands at once, the guard after each, the end (stop, idle, a killed
# holder), who may use the socket, narrowing and widening, the protocol
# and its Python client.
. tests/lib.sh

new_places
M="$T/marks"
mkdir -p "$M"
export TMPDIR="$T/tmpbase"
mkdir -p "$TMPDIR"
unset XDG_RUNTIME_DIR
SDIR="$HOME/.local/state/stockade/sessions"
TOOLS="$PWD/tools"
git -C "$W" init -q
echo "a secret of the workspace" >"$W/notes.txt"
NONCE=$(nonce_new)
MARK="probe-$NONCE"
ln -s "$PROBE" "$W/$MARK"

# start ARGS...: a session on the backend under test; SID its id.
start() {
	SID=$("$STOCKADE" session start --backend "$TEST_BACKEND" --read "$(dirname "$PROBE")" -C "$W" "$@" 2>"$T/start.err")
	local st=$?
	[ $st -eq 0 ] && [ -n "$SID" ] && [ -S "$SDIR/$SID.sock" ] && at_exit "$STOCKADE" session stop "$SID"
	return $st
}
sx() {
	(cd "$W" && exec "$STOCKADE" session exec "$@")
}

# A name that would be a hidden file, or read as an option: refused, and
# the message says why.
fails "session start --name .x is refused, saying a name begins with neither '.' nor '-'" "not '\.' or '-' first" -- \
	"$STOCKADE" session start --name .x

start --name "t-$TEST_BACKEND"
st=$?
[ $st -eq 0 ] && [ "$SID" = "t-$TEST_BACKEND" ] && pass "session start returns at once with the session's id" ||
	{ fail "session start returns at once with the session's id (status $st)"; diag "$(cat "$T/start.err")"; }
out=$("$STOCKADE" session list)
printf '%s\n' "$out" | grep -q "^$SID .*$TEST_BACKEND .*$W\$" && pass "session list shows it, its backend and workspace" ||
	{ fail "session list shows it"; diag "$out"; }
mode=$(stat -c %a "$SDIR")
smode=$(stat -c %a "$SDIR/$SID.sock")
[ "$mode" = 700 ] && [ "$smode" = 600 ] && pass "THREATS 78: the socket's folder is 0700 and the socket 0600" ||
	fail "THREATS 78: the socket's folder is 0700 and the socket 0600 (got $mode, $smode)"

# Exit statuses and signals, as a run gives them.
sx "$SID" -- sh -c 'exit 7'
[ $? -eq 7 ] && pass "the command's exit status comes back" || fail "the command's exit status comes back"
sx "$SID" -- sh -c 'kill -TERM $$'
[ $? -eq 143 ] && pass "a command ended by SIGTERM gives 143" || fail "a command ended by SIGTERM gives 143"
out=$(sx "$SID" -- /no/such/program 2>&1)
st=$?
[ $st -eq 127 ] && printf '%s' "$out" | grep -q "cannot run '/no/such/program'" &&
	pass "a missing program gives 127, and says so" || { fail "a missing program gives 127 (got $st)"; diag "$out"; }
# How the command is started, as a shell would: a file with no #! line
# runs under /bin/sh; the program is looked for on the command's own
# PATH; a file that is no program gives 126; the command leads a
# session of its own (its own process group, which Ctrl-C reaches).
mkdir -p "$W/bin"
printf 'echo no-shebang-ran\n' >"$W/bin/plain-script"
chmod +x "$W/bin/plain-script"
printf 'data\n' >"$W/bin/not-a-program"
out=$(sx "$SID" -- "$W/bin/plain-script" 2>&1)
[ "$out" = no-shebang-ran ] && pass "a script with no #! line runs under /bin/sh, as from a shell" ||
	{ fail "a script with no #! line runs under /bin/sh"; diag "$out"; }
out=$(cd "$W" && PATH="$W/bin:$PATH" "$STOCKADE" session exec "$SID" -- plain-script 2>&1)
[ "$out" = no-shebang-ran ] && pass "the program is found on the command's own PATH" ||
	{ fail "the program is found on the command's own PATH"; diag "$out"; }
# Each exec's environment and working directory are its own, one after
# another with the same or another (the holder keeps the last scrub; the
# caller has no PWD of its own here, as a program that chdir()s has not):
# a variable changed between two, the same again, another directory; a
# credential taken away each time.
mkdir -p "$W/sub"
envs=""
for c in "$W:1" "$W:2" "$W/sub:2" "$W:2" "$W/sub:3"; do
	d=${c%:*} v=${c##*:}
	out=$(cd "$d" && env -u PWD -u OLDPWD STOCKADE_T_VAR=$v AWS_SECRET_ACCESS_KEY=k "$STOCKADE" session exec "$SID" -- env 2>&1)
	pwd=$(printf '%s\n' "$out" | sed -n 's/^PWD=//p')
	envs="$envs $(printf '%s\n' "$out" | sed -n 's/^STOCKADE_T_VAR=//p'):${pwd#"$W"}:$(printf '%s\n' "$out" | grep -c '^AWS_SECRET_ACCESS_KEY=')"
done
[ "$envs" = " 1::0 2::0 2:/sub:0 2::0 3:/sub:0" ] &&
	pass "each exec has its own caller's environment and directory, one after another; a credential taken each time" ||
	{ fail "each exec has its own caller's environment and directory"; diag "$envs"; }
rmdir "$W/sub"
sx "$SID" -- "$W/bin/not-a-program" >/dev/null 2>&1
st=$?
"$W/bin/not-a-program" >/dev/null 2>&1
[ $st -eq $? ] && [ $st -ne 0 ] && pass "a file of words with no #! line: run by /bin/sh, with the status it gives outside ($st)" ||
	fail "a file of words with no #! line: the status it gives outside (got $st)"
chmod -x "$W/bin/not-a-program"
out=$(sx "$SID" -- "$W/bin/not-a-program" 2>&1)
st=$?
[ $st -eq 126 ] && printf '%s' "$out" | grep -q "cannot run" &&
	pass "a file that may not be run gives 126, and says so" || { fail "a file that may not be run gives 126 (got $st)"; diag "$out"; }
out=$(sx "$SID" -- sh -c 'ps -o pid=,pgid=,sid= -p $$' 2>&1)
read -r c_pid c_pgid c_sid <<<"$out"
[ -n "$c_pid" ] && [ "$c_pid" = "$c_pgid" ] && [ "$c_pid" = "$c_sid" ] &&
	pass "the command leads a session and a process group of its own" ||
	{ fail "the command leads a session and a process group of its own"; diag "$out"; }
out=$(sx "$SID" -- sh -c 'ls -l /proc/self/fd | grep -c -- "->"' 2>&1)
[ "${out:-99}" -le 4 ] && pass "the command holds no descriptor of stockade's (0 to 2, and ls's own)" ||
	{ fail "the command holds only its own descriptors (got $out)"; diag "$(sx "$SID" -- ls -l /proc/self/fd 2>&1)"; }
rm -rf "$W/bin"

# Signal dispositions, as an exec outside leaves them: what the caller
# ignores stays ignored (nohup's SIGHUP, a background job's SIGINT and
# SIGQUIT), every other signal is the default, whatever the holder
# ignores for itself (SIGHUP and SIGPIPE). The standard signals, 1 to 31:
# glibc's posix_spawn ignores its own internal 32 and 33, outside too.
# Each case is run under env's signal options, so that it does not hang
# on what the test's own caller ignores, with the same program outside
# as its control.
std_ign() { local m; m=$(sed -n 's/^SigIgn:[[:space:]]*//p'); printf '%x' $((0x${m:-ffffffff} & 0x7fffffff)); }
std_blk() { local m; m=$(sed -n 's/^SigBlk:[[:space:]]*//p'); printf '%x' $((0x${m:-ffffffff} & 0x7fffffff)); }
for case in "none:--default-signal" "SIGHUP:--default-signal --ignore-signal=HUP" \
	"SIGHUP, SIGINT and SIGQUIT:--default-signal --ignore-signal=HUP,INT,QUIT" "SIGTERM and SIGUSR1:--default-signal --ignore-signal=TERM,USR1"; do
	what=${case%%:*} opts=${case#*:}
	# shellcheck disable=SC2086
	outside=$(cd "$W" && env $opts grep SigIgn /proc/self/status | std_ign)
	# shellcheck disable=SC2086
	inside=$(cd "$W" && env $opts "$STOCKADE" session exec "$SID" -- grep SigIgn /proc/self/status 2>&1 | std_ign)
	[ -n "$outside" ] && [ "$inside" = "$outside" ] && pass "a caller ignoring $what: the command ignores the same signals as outside ($outside)" ||
		fail "a caller ignoring $what: the command ignores the same signals as outside (outside $outside, in the session $inside)"
done
outside=$(env --default-signal sh -c 'seq 1 100000 | head -1' 2>&1)
inside=$(cd "$W" && env --default-signal "$STOCKADE" session exec "$SID" -- sh -c 'seq 1 100000 | head -1' 2>&1)
[ "$outside" = 1 ] && [ "$inside" = 1 ] && pass "a pipeline's writer dies of SIGPIPE, as outside, without a broken-pipe error" ||
	{ fail "a pipeline's writer dies of SIGPIPE, as outside"; diag "outside: $outside"; diag "in the session: $inside"; }

# And what else an exec inherits: the caller's signal mask, umask (files
# a umask 077 caller makes are private, as outside), resource limits and
# niceness, each within the session's.
cat >"$T/blocked.py" <<'PY'
import signal, subprocess, sys
signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGUSR1, signal.SIGTERM])
sys.exit(subprocess.run(sys.argv[1:]).returncode)
PY
outside=$(cd "$W" && python3 "$T/blocked.py" grep SigBlk /proc/self/status | std_blk)
in=$(cd "$W" && python3 "$T/blocked.py" "$STOCKADE" session exec "$SID" -- grep SigBlk /proc/self/status 2>&1 | std_blk)
plain_outside=$(cd "$W" && grep SigBlk /proc/self/status | std_blk)
plain=$(cd "$W" && "$STOCKADE" session exec "$SID" -- grep SigBlk /proc/self/status 2>&1 | std_blk)
[ "$outside" = 4200 ] && [ "$in" = "$outside" ] && [ "$plain" = "$plain_outside" ] &&
	pass "the command starts with the caller's signal mask (SIGUSR1 and SIGTERM blocked, then this shell's), as outside" ||
	fail "the command starts with the caller's signal mask, as outside (outside: $outside, $plain_outside; in the session: $in, $plain)"
out=$(cd "$W" && umask 077 && ulimit -S -n 256 && nice -n 3 sh -c 'umask; ulimit -n; touch um.f; stat -c %a um.f; rm -f um.f; cut -d" " -f19 /proc/self/stat' 2>&1 | tr '\n' ' ')
in=$(cd "$W" && umask 077 && ulimit -S -n 256 && nice -n 3 "$STOCKADE" session exec "$SID" -- sh -c 'umask; ulimit -n; touch um.f; stat -c %a um.f; rm -f um.f; cut -d" " -f19 /proc/self/stat' 2>&1 | tr '\n' ' ')
[ "${out%% *}" = 0077 ] && [ "$in" = "$out" ] && pass "the command has the caller's umask, open-files limit and niceness, as outside ($out)" ||
	fail "the command has the caller's umask, open-files limit and niceness, as outside (outside: $out; in the session: $in)"
out=$(taskset -c 0 grep Cpus_allowed_list /proc/self/status 2>&1)
in=$(cd "$W" && taskset -c 0 "$STOCKADE" session exec "$SID" -- grep Cpus_allowed_list /proc/self/status 2>&1)
all=$(cd "$W" && "$STOCKADE" session exec "$SID" -- grep Cpus_allowed_list /proc/self/status 2>&1)
[ "$in" = "$out" ] && [ "$all" = "$(grep Cpus_allowed_list /proc/self/status)" ] &&
	pass "the command may run on the caller's CPUs (taskset -c 0, then all), as outside" ||
	fail "the command may run on the caller's CPUs, as outside (outside: $out; in the session: $in, then $all)"
hard=$(ulimit -H -n)
if [ "$hard" != unlimited ] && [ "$hard" -gt 64 ]; then
	low=$(cd "$W" && ulimit -n 64 && taskset -c 0 "$STOCKADE" session start --backend "$TEST_BACKEND" -C "$W" 2>"$T/low.err")
	[ -n "$low" ] && at_exit "$STOCKADE" session stop "$low"
	in=$(cd "$W" && "$STOCKADE" session exec "$low" -- sh -c 'ulimit -S -n; ulimit -H -n; grep Cpus_allowed_list /proc/self/status' 2>&1 | tr '\n' ' ')
	[ "$in" = "64 64 $(printf 'Cpus_allowed_list:\t0') " ] &&
		pass "a caller's higher limit and wider CPUs stay within the session's (64 and CPU 0; the caller's $hard and all)" ||
		{ fail "a caller's higher limit and wider CPUs stay within the session's (got $in)"; diag "$(cat "$T/low.err")"; }
	[ -n "$low" ] && "$STOCKADE" session stop "$low"
else
	fail "a caller's higher limit stays within the session's: this shell's open-files hard limit is $hard"
fi

# stockade itself in the background (no function around it), so that $!
# is its pid.
(cd "$W" && exec "$STOCKADE" session exec "$SID" -- "$PROBE" signals 5) >"$T/sig.out" 2>&1 &
cpid=$!
wait_until grep -q waiting "$T/sig.out" 2>/dev/null
kill -USR1 "$cpid"
kill -TERM "$cpid"
wait "$cpid"
st=$?
grep -q '^got SIGUSR1$' "$T/sig.out" && grep -q '^got SIGTERM$' "$T/sig.out" &&
	pass "signals sent to session exec reach the command" || { fail "signals sent to session exec reach the command (status $st)"; diag "$(cat "$T/sig.out")"; }
(cd "$W" && exec "$STOCKADE" session exec "$SID" -- sleep 60) &
cpid=$!
sleep 0.5
kill -INT "$cpid"
wait "$cpid"
[ $? -eq 130 ] && pass "Ctrl-C's SIGINT to session exec ends the command: 130" || fail "SIGINT to session exec ends the command: 130"

# A report per exec, when asked for.
sx --report "$T/exec-report.json" "$SID" -- sh -c 'exit 9'
if python3 - "$T/exec-report.json" "$TEST_BACKEND" <<'PY'; then
import json, sys
r = json.load(open(sys.argv[1]))
assert r["backend"] == sys.argv[2], r["backend"]
assert r["exit"] == {"code": 9}, r["exit"]
assert r["stockade"]["status"] == 9
PY
	pass "session exec --report writes the command's report: its backend and exit"
else
	fail "session exec --report writes the command's report"
	diag "$(cat "$T/exec-report.json" 2>&1)"
fi

# Descriptors handed over, not copied: the command writes the caller's
# own file; its environment is scrubbed; it runs where the caller is.
mkdir -p "$W/sub"
(cd "$W/sub" && AWS_SECRET_ACCESS_KEY=x FOO=bar "$STOCKADE" session exec "$SID" -- sh -c 'pwd; echo "foo=$FOO aws=${AWS_SECRET_ACCESS_KEY:-none}"; ls -l /proc/self/fd/1' >"$T/handed" 2>&1)
grep -qx "$W/sub" "$T/handed" && grep -q 'foo=bar aws=none' "$T/handed" &&
	pass "the command runs in the caller's directory, its environment scrubbed" ||
	{ fail "the command runs in the caller's directory, its environment scrubbed"; diag "$(cat "$T/handed")"; }
expect_probe "only 0, 1 and 2 reach the command of a session" ok -- sx "$SID" -- "$PROBE" fds

# One /tmp for all of a session's commands and servers: a server one
# command leaves running listens at /tmp/NAME, and a later command reaches
# it by that name; the host's /tmp never has the name (on the landlock
# backend it is made in the session's own tmp, THREATS 50).
SN="stockade-test-session-$(id -u)-$$"
at_exit sh -c 'rm -f /tmp/"$0"*' "$SN"
sx "$SID" -- sh -c '"$0" listen-unix "/tmp/$1.sock" 30 >tmp-srv.out 2>&1 &
for i in $(seq 200); do grep -q listening tmp-srv.out && exit 0; sleep 0.05; done; exit 1' "$PROBE" "$SN" &&
	pass "a command of the session leaves a server listening at /tmp/NAME" ||
	{ fail "a command of the session leaves a server listening at /tmp/NAME"; diag "$(cat "$W/tmp-srv.out")"; }
expect_probe "a later command of the session reaches that server by /tmp/NAME" ok -- \
	sx "$SID" -- "$PROBE" connect-unix "/tmp/$SN.sock"
[ ! -e "/tmp/$SN.sock" ] && pass "THREATS 50: the host's /tmp has no such name while the session lives" ||
	fail "THREATS 50: the host's /tmp has no such name while the session lives"

# A terminal: a pty of its own, its size, Ctrl-C and Ctrl-Z through it.
out=$(cd "$W" && "$PTYRUN" --after shell-ready --winch 100:33x101 --send 400:'stty size; tty; exit 4\n' -- "$STOCKADE" session exec "$SID" -- sh -c 'echo shell-ready; exec sh -i' 2>&1 | tr -d '\r')
printf '%s\n' "$out" | grep -q '33 101$' && printf '%s\n' "$out" | grep -q '^/dev/pts/' &&
	printf '%s\n' "$out" | grep -q 'ptyrun: exit 4' && printf '%s\n' "$out" | grep -q 'ptyrun: mode same' &&
	pass "a tty exec gets a pty of its own, resized with the user's, the mode given back" ||
	{ fail "a tty exec gets a pty of its own, resized"; diag "$out"; }
out=$(cd "$W" && "$PTYRUN" --after sleep-ready --send 100:'\x03' -- "$STOCKADE" session exec "$SID" -- sh -c 'echo sleep-ready; exec sleep 30' 2>&1)
printf '%s\n' "$out" | grep -q 'ptyrun: exit 130' && pass "Ctrl-C in the terminal reaches the command's group" ||
	{ fail "Ctrl-C in the terminal reaches the command's group"; diag "$out"; }
out=$(cd "$W" && "$PTYRUN" --after sleep-ready --send 100:'\x1a' --signal 900:CONT --send 1300:'\x03' -- "$STOCKADE" session exec "$SID" -- sh -c 'echo sleep-ready; exec sleep 30' 2>&1)
printf '%s\n' "$out" | grep -q 'ptyrun: exit 130' && pass "Ctrl-Z stops it and session exec with it; continued, Ctrl-C ends it" ||
	{ fail "Ctrl-Z stops it and session exec with it"; diag "$out"; }

# A command that stops the session's zygote (on the landlock backend the
# parent of its process; in the namespace jail init, which ignores it)
# does not hold the session: its exec ends, and the next one runs. Before,
# on the landlock backend, both hung until the session was stopped.
out=$(cd "$W" && timeout 30 "$STOCKADE" session exec "$SID" -- sh -c 'kill -STOP $PPID && echo stopped-parent' 2>&1)
st=$?
out2=$(cd "$W" && timeout 30 "$STOCKADE" session exec "$SID" -- echo next-ran 2>&1)
st2=$?
[ $st -eq 0 ] && [ "$out" = stopped-parent ] && [ $st2 -eq 0 ] && [ "$out2" = next-ran ] &&
	pass "a command that sends the zygote SIGSTOP holds no exec: its own ends, and the next runs" ||
	{ fail "a command that sends the zygote SIGSTOP holds no exec (status $st, then $st2)"; diag "$out"; diag "$out2"; }

# What a command leaves running stays: a server started by one exec is
# reached by the next, and from the host through --publish.
"$STOCKADE" session stop "$SID"
# (Ports nobody holds: on the landlock backend the run's are the host's.)
PORT=$(free_port)
JP=$(free_port)
start --name "p-$TEST_BACKEND" --publish "$PORT:$JP"
sx "$SID" -- sh -c 'python3 -m http.server "$0" --bind 127.0.0.1 >/dev/null 2>&1 &' "$JP"
for _ in $(seq 50); do sx "$SID" -- python3 -c 'import sys, urllib.request; urllib.request.urlopen("http://127.0.0.1:%s/" % sys.argv[1])' "$JP" 2>/dev/null && break; sleep 0.1; done
out=$(sx "$SID" -- python3 -c 'import sys, urllib.request; print(urllib.request.urlopen("http://127.0.0.1:%s/" % sys.argv[1]).status)' "$JP" 2>&1)
[ "$out" = 200 ] && pass "a server one exec left is reached by the next" || { fail "a server one exec left is reached by the next"; diag "$out"; }
out=$(python3 -c "import urllib.request; print(urllib.request.urlopen('http://127.0.0.1:$PORT/').status)" 2>&1)
[ "$out" = 200 ] && pass "and from the host through the session's --publish" || { fail "and from the host through --publish"; diag "$out"; }

# 16 at once.
# (Their pids kept: jobs -p forgets a job that has ended.)
pids=()
for i in $(seq 16); do
	sx "$SID" -- sh -c "sleep 0.3; exit $i" &
	pids+=($!)
done
good=0
for i in $(seq 16); do
	wait "${pids[i - 1]}"
	[ $? -eq "$i" ] && good=$((good + 1))
done
[ "$good" -eq 16 ] && pass "16 commands at once in one session, each with its own status" ||
	fail "16 commands at once in one session, each with its own status ($good of 16)"

# The guard: what one exec planted is undone before its status returns;
# what a process it left plants between execs, by the next one's end.
out=$(sx "$SID" -- sh -c 'echo "echo pwned" >.envrc; mkdir -p .vscode; echo "{}" >.vscode/tasks.json' 2>&1)
[ ! -e "$W/.envrc" ] && [ ! -e "$W/.vscode/tasks.json" ] && printf '%s' "$out" | grep -q "undid a change to trust hand-off '.envrc'" &&
	pass "THREATS 29: what an exec planted is undone before its status returns, and said to its caller" ||
	{ fail "THREATS 29: what an exec planted is undone before its status returns"; diag "$out"; }
sx "$SID" -- sh -c '(sleep 0.3; echo "echo later" >.envrc) >/dev/null 2>&1 &'
sleep 1
sx "$SID" -- true 2>/dev/null
[ ! -e "$W/.envrc" ] && pass "what a process left running planted between execs is undone by the next" ||
	fail "what a process left running planted between execs is undone by the next"

# Who may use it: not a jailed process (of this session, or of a run),
# nor another user.
expect_control "THREATS 78 control: outside, the user's own client gets hello" -- "$PROBE" session-hello "$SDIR/$SID.sock"
expect_probe "THREATS 78: a command of the session cannot reach its control socket" \
	"errno $([ "$TEST_BACKEND" = namespaces ] && echo ENOENT || echo EACCES)" -- \
	sx "$SID" -- "$PROBE" session-hello "$SDIR/$SID.sock"
expect_probe "THREATS 78: a run's command cannot reach a session's control socket" \
	"errno $([ "$TEST_BACKEND" = namespaces ] && echo ENOENT || echo EACCES)" -- \
	jail -q -C "$W" -- "$PROBE" session-hello "$SDIR/$SID.sock"
expect_probe "THREATS 78: a run's command that reads the whole home cannot reach a session's control socket" \
	"errno EACCES" -- jail -q -C "$W" --read "$HOME" -- "$PROBE" session-hello "$SDIR/$SID.sock"
out=$(jail -C "$W" --read "$HOME" -- "$PROBE" session-hello "$SDIR/$SID.sock" 2>&1)
! printf '%s\n' "$out" | grep -q -- "--connect" && pass "and no --connect is offered for it" ||
	{ fail "and no --connect is offered for it"; diag "$out"; }
fails "THREATS 78: a --connect of a session's control socket is refused, named" "it is stockade's own state" -- \
	jail -C "$W" --connect "unix:$SDIR/$SID.sock" -- true
if is_root && id stockade-ci >/dev/null 2>&1; then
	chmod 755 "$T" "$_lib_tmp_root" 2>/dev/null
	out=$(su stockade-ci -s /bin/sh -c "'$PROBE' session-hello '$SDIR/$SID.sock'" 2>&1)
	printf '%s' "$out" | grep -q 'errno EACCES' && pass "THREATS 78: another user cannot reach the session's socket" ||
		{ fail "THREATS 78: another user cannot reach the session's socket"; diag "$out"; }
	# A session of that user's, reached by root: refused by its peer's
	# credentials, whatever the modes.
	UH=$(mktemp -d /tmp/stockade-session-user.XXXXXX)
	chown stockade-ci: "$UH"
	mkdir -p "$UH/ws"
	chown stockade-ci: "$UH/ws"
	usid=$(su stockade-ci -s /bin/sh -c "export TMPDIR=/tmp; cd '$UH/ws' && HOME='$UH' '$STOCKADE' session start --backend $TEST_BACKEND --name u" 2>&1)
	[ "$usid" = u ] || diag "$usid"
	out=$("$PROBE" session-hello "$UH/.local/state/stockade/sessions/u.sock" 2>&1)
	printf '%s' "$out" | grep -q 'answer error.*another user' && printf '%s' "$out" | grep -q 'errno EPROTO' &&
		pass "THREATS 78: root is refused by another user's session (its peer's credentials)" ||
		{ fail "THREATS 78: root is refused by another user's session"; diag "$out"; }
	su stockade-ci -s /bin/sh -c "TMPDIR=/tmp HOME='$UH' '$STOCKADE' session stop u" >/dev/null 2>&1
	rm -rf "$UH"
	chmod 700 "$T" "$_lib_tmp_root" 2>/dev/null
else
	out=$(ls -ld "$SDIR" | cut -c1-10)
	[ "$out" = drwx------ ] && pass "THREATS 78 (a user: no other uid to be): the folder is the user's alone" ||
		fail "THREATS 78: the folder is the user's alone ($out)"
fi

# A working directory outside the workspace; a widening; a narrowing.
out=$(cd / && "$STOCKADE" session exec "$SID" -- pwd 2>&1)
st=$?
[ $st -eq 125 ] && printf '%s' "$out" | grep -q "outside the session's workspace" &&
	pass "an exec whose working directory is outside the workspace is refused (125), said" ||
	{ fail "an exec whose working directory is outside the workspace is refused (status $st)"; diag "$out"; }
for widen in "--net on" "--allow a.test" "--write /tmp" "--publish 9999" "--read /" "--max-procs 5" "--hide-ignored"; do
	# shellcheck disable=SC2086 # the words are the options
	out=$(sx $widen "$SID" -- true 2>&1)
	st=$?
	[ $st -eq 125 ] && printf '%s' "$out" | grep -q "session start" &&
		pass "a widening exec ($widen) is refused (125), naming the start that gives it" ||
		{ fail "a widening exec ($widen) is refused (status $st)"; diag "$out"; }
done
# The hint for what only a start gives is that start, as written, and it
# is taken (a fix printed is a fix that works).
out=$(sx --max-procs 64 "$SID" -- true 2>&1)
fix=$(printf '%s\n' "$out" | sed -n "s/^hint: start a session with it: stockade \(session start --max-procs '64'\), or run .*/\1/p")
if [ -n "$fix" ] && sid2=$(cd "$W" && eval "\"\$STOCKADE\" $fix --name mp-$TEST_BACKEND" 2>&1); then
	pass "an exec with --max-procs is told the start that gives it, and that start works"
	"$STOCKADE" session stop "$sid2" >/dev/null 2>&1
else
	fail "an exec with --max-procs is told the start that gives it, and that start works"
	diag "$out"
	diag "${sid2:-}"
fi
# A program the session's commands cannot read: a run grants its own, a
# session started before it cannot. The exec fails as exec does (126 or
# 127) and says what to start instead; that start runs it.
mkdir -p "$T/elsewhere"
cp "$PROBE" "$T/elsewhere/tool"
expect_control "control: the program outside the session runs outside the jail" -- "$T/elsewhere/tool" cwd
out=$(sx "$SID" -- "$T/elsewhere/tool" cwd 2>&1)
st=$?
fix=$(printf '%s\n' "$out" | sed -n "s/^hint: the program .* lies outside what the jail can read; to allow: start a session with it: stockade \(session start --read .*\)$/\1/p")
if [ $st -ge 126 ] && [ $st -le 127 ] && [ -n "$fix" ] &&
	sid2=$(cd "$W" && eval "\"\$STOCKADE\" $fix --backend $TEST_BACKEND --name rd-$TEST_BACKEND" 2>&1) &&
	(cd "$W" && "$STOCKADE" session exec "$sid2" -- "$T/elsewhere/tool" cwd 2>&1) | grep -q '^probe: ok'; then
	pass "an exec of a program the session cannot read fails ($st), told the start that gives it; that start runs it"
else
	fail "an exec of a program the session cannot read fails, told the start that gives it (status $st)"
	diag "$out"
	diag "${sid2:-}"
fi
[ -n "${sid2:-}" ] && "$STOCKADE" session stop "$sid2" >/dev/null 2>&1
# A program a hide of the session keeps from it: named with the rule and
# why, never a session start --read that the hide would refuse.
mkdir -p "$T/hidbin"
cp "$PROBE" "$T/hidbin/tool"
sid3=$(cd "$W" && "$STOCKADE" session start --backend "$TEST_BACKEND" --read "$T/hidbin" --hide "$T/hidbin/tool" --name hid-$TEST_BACKEND 2>&1)
out=$(cd "$W" && "$STOCKADE" session exec "$sid3" -- "$T/hidbin/tool" cwd 2>&1)
st=$?
[ $st -eq 126 ] && case $out in *"hint: the jail hides the program: $T/hidbin/tool (--hide on the command line); stockade why $T/hidbin/tool says why"*) true ;; *) false ;; esac &&
	! printf '%s\n' "$out" | grep -q -- "--read" &&
	pass "an exec of a program the session hides: named with its rule and why, no --read offered" ||
	{ fail "an exec of a program the session hides: named with its rule and why, no --read offered (status $st)"; diag "$out"; diag "$sid3"; }
"$STOCKADE" session stop "$sid3" >/dev/null 2>&1
# a file a failed command names, which the session cannot read: said,
# with the start that gives it
echo data >"$T/elsewhere/data"
out=$(sx "$SID" -- cat "$T/elsewhere/data" 2>&1)
case $out in *"hint: the command names what the jail cannot read: $T/elsewhere/data; to allow: start a session with it: stockade session start --read $T/elsewhere/data"*)
	pass "a failed command is told the file it names that the session cannot read, with the start that gives it" ;;
*) fail "a failed command is told the file it names that the session cannot read"; diag "$out" ;; esac
# a PATH directory the jail cannot search (Landlock's EACCES, which
# execvp gives back) holds nothing: a program found nowhere is 127, as a
# shell says, not 126
mkdir -p "$T/closed"
chmod 000 "$T/closed"
out=$(cd "$W" && PATH="$T/closed:$PATH" "$STOCKADE" session exec "$SID" -- no-such-program-$NONCE 2>&1)
st=$?
chmod 755 "$T/closed"
[ $st -eq 127 ] && pass "an exec of a program found nowhere, a PATH directory closed, gives 127 (not found)" ||
	{ fail "an exec of a program found nowhere, a PATH directory closed, gives 127 (got $st)"; diag "$out"; }
out=$(sx "$SID" -- cd sub 2>&1)
st=$?
[ $st -eq 127 ] && case $out in *"hint: 'cd' is a shell's own command, not a program: run the whole line in one shell, as stockade session exec $SID -- "*"sh -c 'cd sub && NEXT-COMMAND'"*) true ;; *) false ;; esac &&
	pass "an exec of cd gives 127, and the hint runs the line in a shell of the session" ||
	{ fail "an exec of cd: the hint runs the line in a shell of the session (status $st)"; diag "$out"; }
out=$(sx "$SID" -- sh -c 'exit 127' 2>&1)
[ $? -eq 127 ] && ! printf '%s\n' "$out" | grep -q '^hint:' &&
	pass "a command of its own ending in 127, its program readable, gets no such hint" ||
	{ fail "a command of its own ending in 127 gets no hint"; diag "$out"; }
# A command that fails says what was refused while it ran, as a run
# does; its fix is the session start that gives it (an exec cannot widen).
out=$(sx "$SID" -- sh -c '"$0" resolve "$1"; exit 3' "$PROBE" "stockade-$$-sx.example.test" 2>&1)
st=$?
[ $st -eq 3 ] && printf '%s\n' "$out" | grep -q '^stockade: refused: .*; to allow, start a session with it: stockade session start --' &&
	pass "a failed command's refusals are said in one line, the fix as the session's start" ||
	{ fail "a failed command's refusals are said in one line, the fix as the session's start (status $st)"; diag "$out"; }
out=$(sx "$SID" -- sh -c 'exit 4' 2>&1)
[ $? -eq 4 ] && ! printf '%s\n' "$out" | grep -q 'stockade: refused' && pass "and the next failed command, refused nothing, says nothing" ||
	{ fail "and the next failed command, refused nothing, says nothing"; diag "$out"; }
expect_control "control: the session's command reads notes.txt" -- sx "$SID" -- "$PROBE" read "$W/notes.txt"
expect_probe "a narrowing exec (--hide notes.txt) cannot read it" "errno EACCES" -- sx --hide notes.txt "$SID" -- "$PROBE" read "$W/notes.txt"
expect_probe "a narrowing exec (--net off) has no network" "errno EACCES" -- sx --net off "$SID" -- "$PROBE" listen-tcp 127.0.0.1 0 0
expect_probe "and the next exec has the session's again" ok -- sx "$SID" -- "$PROBE" read "$W/notes.txt"
# A narrowing exec cannot take over a process of the session that is not
# narrowed (a server an earlier exec left, the zygote): ptrace would let it
# connect from there, and plant code that every later exec runs. Before,
# --net off alone added no Landlock layer, and the attach worked.
rm -f "$W/sibling.pid"
sx "$SID" -- sh -c 'echo $$ >sibling.pid; exec sleep 60' >/dev/null 2>&1 &
sibling_exec=$!
wait_until test -s "$W/sibling.pid"
expect_control "control: an exec of the session may ptrace another of its processes" -- \
	sx "$SID" -- sh -c 'exec "$0" ptrace "$(cat sibling.pid)"' "$PROBE"
for narrowing in "--net off" "--hide notes.txt"; do
	# shellcheck disable=SC2086 # the option and its value are two words
	expect_probe "a narrowing exec ($narrowing) cannot ptrace a process of the session outside its narrowing" "errno EPERM" -- \
		sx $narrowing "$SID" -- sh -c 'exec "$0" ptrace "$(cat sibling.pid)"' "$PROBE"
done
kill "$sibling_exec" 2>/dev/null
# An exec's --read of what the session cannot read widens: refused on both
# backends (in the namespace jail the home is the jail's own, at the same
# path: a read there once passed and read the jail's, the host's dropped
# without a word); the start it names gives it.
mkdir -p "$HOME/private"
echo mine >"$HOME/private/f"
fails "an exec's --read of what the session cannot read (the home's) is refused" \
	"^stockade: cannot give --read '$HOME/private' to one command of the session: the session does not let its commands read it" -- \
	sx --read "$HOME/private" "$SID" -- true
out=$(sx --read "$HOME/private" "$SID" -- true 2>&1)
fix=$(printf '%s\n' "$out" | sed -n "s/^hint: start a session with it: stockade \(session start --read .*\)$/\1/p")
if [ -n "$fix" ] && sid4=$(cd "$W" && eval "\"\$STOCKADE\" $fix --read \"\$(dirname \"\$PROBE\")\" --backend $TEST_BACKEND --name pr-$TEST_BACKEND" 2>&1); then
	expect_control "the start it names gives it: the exec's --read then narrows nothing away" -- \
		sx --read "$HOME/private" "$sid4" -- "$PROBE" read "$HOME/private/f"
	"$STOCKADE" session stop "$sid4" >/dev/null 2>&1
else
	fail "the start it names gives it"; diag "$out"; diag "${sid4:-}"
fi

# The session's [command] sections: a nested layer for that command, which
# narrows (hide, network off, env) and never widens (named with its file,
# line and key, and the start that gives it).
"$STOCKADE" session stop "$SID"
cat >"$W/.stockade.ini" <<'INI'
[command "cat"]
hide = notes.txt

[command "python3"]
network = off
env = FROM_SECTION=yes

[command "ls"]
write = /etc
INI
start --name "c-$TEST_BACKEND"
out=$(sx "$SID" -- cat notes.txt 2>&1)
[ $? -ne 0 ] && printf '%s' "$out" | grep -q 'Permission denied' && pass "a [command \"cat\"] section's hide applies to cat in the session" ||
	{ fail "a [command \"cat\"] section's hide applies to cat in the session"; diag "$out"; }
out=$(sx "$SID" -- sh -c 'cat notes.txt' 2>&1)
[ "$out" = "a secret of the workspace" ] && pass "and not to another command" || { fail "and not to another command"; diag "$out"; }
out=$(sx "$SID" -- python3 -c 'import os, socket
print(os.environ.get("FROM_SECTION"))
socket.socket()' 2>&1)
printf '%s' "$out" | grep -q '^yes$' && printf '%s' "$out" | grep -q 'PermissionError' &&
	pass "a section's network off and env apply to its command" || { fail "a section's network off and env apply"; diag "$out"; }
out=$(sx "$SID" -- ls 2>&1)
st=$?
[ $st -eq 125 ] && printf '%s' "$out" | grep -q "\.stockade\.ini line 9: write '/etc'" && printf '%s' "$out" | grep -q 'hint: start a session with it' &&
	pass "a section that would widen (write = /etc) is refused (125), naming its file, line and key" ||
	{ fail "a section that would widen is refused (status $st)"; diag "$out"; }
rm -f "$W/.stockade.ini"
"$STOCKADE" session stop "$SID"

# A command's allow list: the session's relay answers for all of its
# commands at once, so a command has the session's names or none (--net
# off). In a session whose network is on, a command's --allow cannot be
# honoured (it would have the whole network): refused, with the start
# that gives it; in a session with names, another list is refused too.
start --name "n-$TEST_BACKEND" --net on
expect_control "control: a command of a session with the network has an inet socket" -- sx "$SID" -- "$PROBE" listen-tcp 0.0.0.0 0 0
out=$(sx --allow a.test "$SID" -- true 2>&1)
st=$?
[ $st -eq 125 ] && printf '%s' "$out" | grep -q "^hint: start a session with it: stockade session start --allow 'a.test'$" &&
	pass "a command's --allow in a session with the whole network is refused (125), with the start that gives it" ||
	{ fail "a command's --allow in a session with the whole network is refused (status $st)"; diag "$out"; }
"$STOCKADE" session stop "$SID"
printf '[command "true"]\nallow = c.test\n' >"$W/.stockade.ini"
start --name "a-$TEST_BACKEND" --allow a.test --allow b.test:22
out=$(sx --allow a.test "$SID" -- true 2>&1)
st=$?
[ $st -eq 125 ] && printf '%s' "$out" | grep -q "give it none (the session's names), or start a session with it: stockade session start --allow 'a.test'" &&
	pass "a command's own allow list in a session with names is refused (125), with both ways" ||
	{ fail "a command's own allow list in a session with names is refused (status $st)"; diag "$out"; }
out=$(sx --allow b.test:22 --allow a.test "$SID" -- sh -c true 2>&1)
[ $? -eq 0 ] && pass "the session's own names, in any order, are taken" || { fail "the session's own names, in any order, are taken"; diag "$out"; }
out=$(sx "$SID" -- true 2>&1)
st=$?
[ $st -eq 125 ] && printf '%s' "$out" | grep -q "\.stockade\.ini line 2: allow c.test" &&
	pass "a [command] section's allow list is refused the same, naming its file, line and key" ||
	{ fail "a [command] section's allow list is refused the same (status $st)"; diag "$out"; }
rm -f "$W/.stockade.ini"
"$STOCKADE" session stop "$SID"
start --name "q-$TEST_BACKEND"

# The Python client: one connection, many commands.
out=$(cd "$W" && PYTHONPATH="$TOOLS" python3 - "$SID" <<'PY' 2>&1
import sys
from stockade_session import Session
s = Session(sys.argv[1])
codes = [s.run(["sh", "-c", "exit %d" % i]).status for i in range(20)]
r = s.run(["sh", "-c", "echo out; echo err >&2"])
bad = s.run(["pwd"], cwd="/")
print(codes == list(range(20)), r.stdout == b"out\n", r.stderr == b"err\n", bad.status, "outside" in " ".join(bad.said))
PY
)
[ "$out" = "True True True 125 True" ] && pass "the Python client runs 22 commands on one connection" ||
	{ fail "the Python client runs 22 commands on one connection"; diag "$out"; }
# Its commands' ignored signals are subprocess's: the client's own, but
# SIGPIPE and SIGXFSZ, which Python ignores for itself.
out=$(cd "$W" && env --default-signal --ignore-signal=HUP PYTHONPATH="$TOOLS" python3 - "$SID" <<'PY' 2>&1
import subprocess, sys
from stockade_session import Session
def std(text):
    for line in text.decode().splitlines():
        if line.startswith("SigIgn:"):
            return int(line.split()[1], 16) & 0x7fffffff
argv = ["grep", "SigIgn", "/proc/self/status"]
inside = std(Session(sys.argv[1]).run(argv).stdout)
outside = std(subprocess.run(argv, stdout=subprocess.PIPE).stdout)
print(inside == outside == 1, inside, outside)
PY
)
[ "${out%% *}" = True ] && pass "the Python client's commands ignore the signals subprocess's would (SIGHUP here)" ||
	{ fail "the Python client's commands ignore the signals subprocess's would"; diag "$out"; }
out=$(cd "$W" && umask 027 && ulimit -S -n 200 && PYTHONPATH="$TOOLS" python3 - "$SID" <<'PY' 2>&1
import os, subprocess, sys
from stockade_session import Session
argv = ["sh", "-c", "umask; ulimit -n; grep Cpus_allowed_list /proc/self/status"]
os.sched_setaffinity(0, {0})
inside = Session(sys.argv[1]).run(argv).stdout
outside = subprocess.run(argv, stdout=subprocess.PIPE).stdout
print(inside == outside == b"0027\n200\nCpus_allowed_list:\t0\n", inside, outside)
PY
)
[ "${out%% *}" = True ] && pass "the Python client's commands have its umask, limits and CPUs, as subprocess's would" ||
	{ fail "the Python client's commands have its umask, limits and CPUs, as subprocess's would"; diag "$out"; }

# The README's recipe: an agent's shell tool through conf/examples/agent-shell.
mkdir -p "$T/bin"
ln -sf "$STOCKADE" "$T/bin/stockade"
out=$(cd "$W" && PATH="$T/bin:$PATH" STOCKADE_SESSION="$SID" "$OLDPWD/conf/examples/agent-shell" -c 'echo "in $(pwd)"; exit 5' 2>&1)
st=$?
[ $st -eq 5 ] && [ "$out" = "in $W" ] && pass "the recipe's agent-shell runs a command in the session, its status back" ||
	{ fail "the recipe's agent-shell runs a command in the session (status $st)"; diag "$out"; }
out=$(cd "$W" && PATH="$T/bin:$PATH" STOCKADE_SESSION="$SID" "$OLDPWD/conf/examples/agent-shell" -c 'echo x >.envrc' 2>&1)
printf '%s' "$out" | grep -q "undid a change to trust hand-off '.envrc'" && printf '%s' "$out" | grep -q '^hint: ' &&
	[ ! -e "$W/.envrc" ] && pass "what the recipe shows when a command plants a hand-off: undone, said, with a hint" ||
	{ fail "what the recipe shows when a command plants a hand-off"; diag "$out"; }
out=$(cd "$W" && PATH="$T/bin:$PATH" "$STOCKADE" --session "$SID" --allow @npm -- true 2>&1)
[ $? -eq 125 ] && printf '%s' "$out" | grep -q "^hint: start a session with it: stockade session start --allow '@npm'\$" &&
	pass "what the recipe shows for a widening: refused, with the start that gives it" ||
	{ fail "what the recipe shows for a widening"; diag "$out"; }

# The protocol's answers to an exec, as stockade.1 writes them: said
# lines, then exit; "started" with the pid only when asked for.
out=$(cd "$W" && python3 - "$SDIR/$SID.sock" <<'PY' 2>&1
import os, socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
s.connect(sys.argv[1])
s.send(b"hello\0version=1\0")
s.recv(65536)
fds = [os.open("/dev/null", os.O_RDWR) for _ in range(3)]
for extra in (b"", b"started=1\0"):
    msg = b"exec\0cwd=" + os.getcwd().encode() + b"\0arg=sh\0arg=-c\0arg=echo $$ >/dev/stderr; exit 3\0" + extra
    socket.send_fds(s, [msg], fds)
    kinds, kind = [], ""
    while kind not in ("exit", "error"):
        s.settimeout(20)
        parts = s.recv(65536).split(b"\0")
        kind = parts[0].decode()
        said = kind
        if kind == "started":
            said += " pid" if any(p.startswith(b"pid=") and int(p[4:]) > 0 for p in parts) else " no-pid"
        if kind in ("exit", "error"):
            said += " " + " ".join(p.decode() for p in parts[1:] if p)
        kinds.append(said)
    print(",".join(kinds), end="; ")
PY
)
[ "$out" = "exit code=3 status=3; started pid,exit code=3 status=3; " ] &&
	pass "the protocol: an exec is answered exit with its code and status; started with the pid only when asked (started=1)" ||
	{ fail "the protocol: an exec is answered exit; started only when asked"; diag "$out"; }

# The protocol's reader: what it cannot read is refused, not fatal.
out=$(python3 - "$SDIR/$SID.sock" <<'PY' 2>&1
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
s.connect(sys.argv[1])
for junk in [b"", b"no-nul", b"\0\0", b"exec\0noequals\0", b"HELLO\0", b"exec\0cwd=/\0"]:
    s.send(junk) if junk else None
    if junk:
        print(s.recv(4096).split(b"\0")[0].decode(), end=" ")
s.send(b"hello\0version=1\0")
print(s.recv(4096).split(b"\0")[0].decode())
PY
)
[ "$out" = "error error error error error hello" ] && pass "bad messages are answered with an error; the connection goes on" ||
	{ fail "bad messages are answered with an error"; diag "$out"; }

# A session that ends while a command runs: the command ran, and was
# killed with the session's processes; its exec gives what it got (137),
# never the 125 of a command that did not run.
sid_main=$SID
start --name "e-$TEST_BACKEND"
sid_e=$SID
sx "$sid_e" -- sh -c 'echo started; exec sleep 30' >"$T/ended.out" 2>"$T/ended.err" &
cpid=$!
wait_until grep -q started "$T/ended.out"
"$STOCKADE" session stop "$sid_e" 2>"$T/stop-e.err"
st_stop=$?
wait $cpid
st=$?
[ $st_stop -eq 0 ] && [ $st -eq 137 ] && grep -q "was stopped while the command ran: it was killed" "$T/ended.err" &&
	pass "session stop while a command runs: its exec ends 137 (SIGKILL), saying so" ||
	{ fail "session stop while a command runs: its exec ends 137 (got $st, stop $st_stop)"; diag "$(cat "$T/ended.err" "$T/stop-e.err")"; }
[ ! -e "$SDIR/$sid_e.log" ] && [ ! -e "$SDIR/$sid_e.info" ] && pass "session stop leaves no log of a session that said everything" ||
	{ fail "session stop leaves no log of a session that said everything"; ls -l "$SDIR/$sid_e".* 2>&1 | while read -r l; do diag "$l"; done; }

# A holder that does not answer (stopped): list and stop wait for it a
# bounded time and say so; an exec sent SIGTERM ends.
start --name "w-$TEST_BACKEND"
sid_w=$SID
wpid=$(sed -n 's/^pid=//p' "$SDIR/$sid_w.info")
kill -STOP "$wpid"
out=$(timeout -k 5 20 "$STOCKADE" session list 2>&1)
st=$?
[ $st -eq 0 ] && printf '%s\n' "$out" | grep -q "^$sid_w .*(not answering)" &&
	printf '%s\n' "$out" | grep -q "kill -CONT $wpid" &&
	pass "session list marks a stopped holder 'not answering' and does not hang" ||
	{ fail "session list marks a stopped holder 'not answering' (status $st)"; diag "$out"; }
out=$(timeout -k 5 20 "$STOCKADE" session stop "$sid_w" 2>&1)
st=$?
[ $st -eq 125 ] && printf '%s' "$out" | grep -q "did not answer within 2 s" &&
	pass "session stop of a stopped holder fails (125) in bounded time, naming its pid" ||
	{ fail "session stop of a stopped holder fails (125) in bounded time (status $st)"; diag "$out"; }
(cd "$W" && exec timeout -k 5 30 "$STOCKADE" session exec "$sid_w" -- sleep 30) 2>"$T/wedged.err" &
cpid=$!
sleep 0.5
kill -TERM $cpid 2>/dev/null
# timeout passes SIGTERM on to stockade
wait $cpid
st=$?
[ $st -eq 143 ] && grep -q "did not answer" "$T/wedged.err" &&
	pass "an exec sent SIGTERM with its session's holder stopped ends (143), saying why" ||
	{ fail "an exec sent SIGTERM with its session's holder stopped ends (got $st)"; diag "$(cat "$T/wedged.err")"; }
kill -CONT "$wpid"
"$STOCKADE" session stop "$sid_w" >/dev/null 2>&1

# Root with another user's HOME: the refusal says whose the folder is,
# and its hint (your own HOME) works.
if [ "$(id -u)" = 0 ]; then
	OH="$T/other-home"
	mkdir -p "$OH/.local/state/stockade/sessions"
	chmod -R 700 "$OH"
	chown -R nobody "$OH"
	out=$(env -u XDG_STATE_HOME HOME="$OH" "$STOCKADE" session list 2>&1)
	st=$?
	hint=$(printf '%s\n' "$out" | sed -n "s/^hint: run it with your own home: HOME='\([^']*\)' stockade session \.\.\.\$/\1/p")
	[ $st -eq 125 ] && printf '%s' "$out" | grep -q "it is nobody's (uid [0-9]*), and a session's folder must be yours alone" &&
		[ -n "$hint" ] && ! printf '%s' "$out" | grep -q "chmod 700" &&
		pass "root with another user's HOME: refused, saying whose the folder is, without a chmod that cannot help" ||
		{ fail "root with another user's HOME: refused, saying whose the folder is"; diag "$out"; }
	env -u XDG_STATE_HOME HOME="$hint" "$STOCKADE" session list >/dev/null 2>&1 &&
		pass "its hint (your own HOME) works" || fail "its hint (your own HOME '$hint') works"
	out=$(env XDG_STATE_HOME="$OH/.local/state" "$STOCKADE" session list 2>&1)
	printf '%s' "$out" | grep -q "^hint: unset XDG_STATE_HOME" &&
		pass "root with another user's XDG_STATE_HOME: the hint is to unset it" ||
		{ fail "root with another user's XDG_STATE_HOME: the hint is to unset it"; diag "$out"; }
	env -u XDG_STATE_HOME "$STOCKADE" session list >/dev/null 2>&1 && pass "and unset, list works" ||
		fail "and unset, list works"
fi

# The ID missing, a --idle in days.
fails "session exec -- COMMAND says the session's ID is missing" "no session ID given" -- \
	"$STOCKADE" session exec -- true
if start --name "d-$TEST_BACKEND" --idle 30d; then
	pass "--idle 30d is a time (days)"
	"$STOCKADE" session stop "$SID" >/dev/null 2>&1
else
	fail "--idle 30d is a time (days)"
	diag "$(cat "$T/start.err")"
fi
SID=$sid_main

# The end: stop leaves no process, place or file; a killed holder, the
# same through its keeper.
sx "$SID" -- "$W/$MARK" orphan "$W/orphan.pid" 300 >/dev/null 2>&1
run_dir=$(ls "$TMPDIR/stockade-$(id -u)" 2>/dev/null | grep '^run-' | head -1)
[ -n "$run_dir" ] && ! gone "$MARK" && pass "control: the session has a run directory and a process left running" ||
	fail "control: the session has a run directory and a process left running"
"$STOCKADE" session stop "$SID"
st=$?
[ $st -eq 0 ] && gone "$MARK" && [ ! -e "$SDIR/$SID.sock" ] && ! ls "$TMPDIR/stockade-$(id -u)" 2>/dev/null | grep -q '^run-' &&
	pass "session stop: every process, place and file of the session gone when it returns" ||
	fail "session stop: every process, place and file of the session gone when it returns (status $st)"

start --name "k-$TEST_BACKEND"
sx "$SID" -- "$W/$MARK" orphan "$W/orphan.pid" 300 >/dev/null 2>&1
# a sleep of this test's own (another test's, or another run's of this
# one, may be sleeping 600 s beside it)
long="600 0.$$${RANDOM}1"
sx "$SID" -- sh -c "(sleep 0.2; echo planted >.envrc) >/dev/null 2>&1 & exec sleep $long" 2>"$T/killed.err" &
kpid=$!
wait_until test -e "$W/.envrc"
hpid=$(sed -n 's/^pid=//p' "$SDIR/$SID.info")
[ -e "$W/.envrc" ] && pass "THREATS 76 control: a process of the session planted .envrc" || fail "THREATS 76 control: a process of the session planted .envrc"
kill -KILL "$hpid"
for _ in $(seq 200); do gone "$MARK" && [ ! -e "$W/.envrc" ] && [ ! -e "$SDIR/$SID.sock" ] && break; sleep 0.01; done
gone "$MARK" && ! pgrep -f "sleep $long" >/dev/null && pass "THREATS 76: a SIGKILLed holder leaves no process of the session" ||
	fail "THREATS 76: a SIGKILLed holder leaves no process of the session"
[ ! -e "$W/.envrc" ] && pass "THREATS 76: a SIGKILLed holder's keeper undoes what the session planted" ||
	fail "THREATS 76: a SIGKILLed holder's keeper undoes what the session planted"
[ ! -e "$SDIR/$SID.sock" ] && ! ls "$TMPDIR/stockade-$(id -u)" 2>/dev/null | grep -q '^run-' &&
	pass "a SIGKILLed holder's keeper removes its socket and places" || fail "a SIGKILLed holder's keeper removes its socket and places"
wait $kpid
st=$?
[ $st -eq 137 ] && grep -q "ended before the command did (its holder is gone)" "$T/killed.err" &&
	pass "a SIGKILLed holder: the exec of a command that ran ends 137, not 125" ||
	{ fail "a SIGKILLed holder: the exec of a command that ran ends 137 (got $st)"; diag "$(cat "$T/killed.err")"; }
# the keeper's lines, which nobody was told, stay in the log, and an exec
# of the session names it
k=$SID
wait_until test -s "$SDIR/$k.log"
out=$(sx "$k" -- true 2>&1)
[ -s "$SDIR/$k.log" ] && printf '%s' "$out" | grep -qF "is in '$SDIR/$k.log'" &&
	pass "a killed holder's log stays, and an exec of the session names it" ||
	{ fail "a killed holder's log stays, and an exec of the session names it"; diag "$out"; }
rm -f "$SDIR/$k.log"
wait 2>/dev/null

# Idle: a session nobody uses ends by itself.
start --name "i-$TEST_BACKEND" --idle 1s
sleep 1
wait_until test ! -e "$SDIR/$SID.sock"
[ ! -e "$SDIR/$SID.sock" ] && ! "$STOCKADE" session list | grep -q "^i-$TEST_BACKEND " &&
	pass "--idle 1s: a session with no command for a second ends" || fail "--idle 1s: a session with no command for a second ends"
wait_until test ! -e "$SDIR/$SID.log"
[ ! -e "$SDIR/$SID.log" ] && pass "an idle end leaves no empty log" || fail "an idle end leaves no empty log"
out=$("$STOCKADE" session start --idle forever 2>&1)
[ $? -eq 125 ] && printf '%s' "$out" | grep -q "invalid --idle" && pass "a bad --idle is refused (125), said" ||
	{ fail "a bad --idle is refused"; diag "$out"; }
out=$("$STOCKADE" session exec no-such-session -- true 2>&1)
[ $? -eq 125 ] && printf '%s' "$out" | grep -q "no session 'no-such-session' is running" &&
	pass "an exec in no session is refused (125), with the way to start one" || { fail "an exec in no session is refused"; diag "$out"; }
plan_done
