# The process: exit statuses, descriptors, environment, capabilities,
# signals and leftovers.
. tests/lib.sh

new_places
NONCE=$(nonce_new)
canary_home "$HOME" "$NONCE"
in_jail() {
	jail --net off -C "$W" "$@"
}

# Exit statuses: the command's own, 128+N, 126, 127, 125.
in_jail -- sh -c 'exit 3' 2>/dev/null
[ $? -eq 3 ] && pass "the command's exit status comes back" || fail "the command's exit status comes back"
in_jail -- sh -c 'kill -TERM $$' 2>/dev/null
[ $? -eq 143 ] && pass "a command ended by SIGTERM gives 143" || fail "a command ended by SIGTERM gives 143"
out=$(in_jail -- /no/such/program 2>&1)
st=$?
[ $st -eq 127 ] && pass "a missing program gives 127" || fail "a missing program gives 127 (got $st)"
case $out in *"cannot run '/no/such/program'"*) pass "and says so" ;; *) fail "and says so"; diag "$out" ;; esac
printf 'not a program\n' >"$W/plain"
chmod 644 "$W/plain"
out=$(in_jail -- "$W/plain" 2>&1)
st=$?
[ $st -eq 126 ] && pass "a file that is not executable gives 126" || fail "a file that is not executable gives 126 (got $st)"
case $out in *"hint: it is not executable: chmod +x $W/plain, or give it to its interpreter (sh $W/plain)"*)
	pass "and the hint says how to run it" ;; *) fail "and the hint says how to run it"; diag "$out" ;; esac
out=$(in_jail -- "$T" 2>&1)
[ $? -eq 126 ] && case $out in *"hint: '$T' is a directory"*) true ;; *) false ;; esac &&
	pass "a directory given as the command gives 126, and is said to be one" ||
	{ fail "a directory given as the command is said to be one"; diag "$out"; }
printf '#!/no/such/interpreter\n' >"$W/script"
chmod 755 "$W/script"
bash -c "'$W/script'" 2>/dev/null
st=$?
[ $st -eq 127 ] && pass "control: bash gives 127 for a script whose interpreter is missing" || fail "control: bash gives 127 (got $st)"
out=$(in_jail -- "$W/script" 2>&1)
st=$?
[ $st -eq 127 ] && pass "a script whose interpreter is missing gives 127, as a shell does" || fail "a script whose interpreter is missing gives 127 (got $st)"
case $out in *"hint: its first line names the interpreter '/no/such/interpreter', which does not exist"*)
	pass "and the hint names the missing interpreter (not the script, which is there)" ;;
*) fail "and the hint names the missing interpreter"; diag "$out" ;; esac
# A shell's own command is no program: the hint gives the line to a shell
out=$(in_jail -- cd sub 2>&1)
st=$?
[ $st -eq 127 ] && case $out in *"hint: 'cd' is a shell's own command, not a program: run the whole line in one shell, as stockade -- "*"sh -c 'cd sub && NEXT-COMMAND'"*) true ;; *) false ;; esac &&
	pass "cd as the command gives 127, and the hint runs it in a shell" ||
	{ fail "cd as the command: the hint runs it in a shell (status $st)"; diag "$out"; }
# A program named by a symlink that lies where the jail has nothing
# (~/.cargo/bin/cargo -> rustup): it runs.
mkdir -p "$T/links" "$T/real"
printf '#!/bin/sh\necho "linked $0 ran"\n' >"$T/real/tool"
chmod 755 "$T/real/tool"
ln -s "$T/real/tool" "$T/links/tool"
out=$("$T/links/tool" 2>&1)
[ -n "$out" ] && pass "control: the linked program runs outside" || fail "control: the linked program runs outside"
out=$(in_jail -- "$T/links/tool" 2>/dev/null)
st=$?
[ $st -eq 0 ] && case $out in "linked "*" ran") true ;; *) false ;; esac &&
	pass "a program named through a symlink outside what the jail holds runs" ||
	{ fail "a program named through a symlink runs (status $st)"; diag "$out"; }
jail --no-such-option -- true 2>/dev/null
[ $? -eq 125 ] && pass "a bad option gives 125" || fail "a bad option gives 125"

# Descriptors: only 0, 1 and 2 reach the command (CVE-2024-21626).
exec 3<"$HOME/.ssh/id_rsa" 4<"$HOME"
"$PROBE" fds >"$T/fds-outside" 2>&1
grep -q "^fd 3 -> $HOME/.ssh/id_rsa" "$T/fds-outside" && grep -q "^fd 4 -> $HOME\$" "$T/fds-outside" &&
	pass "THREATS 5 control: outside, the probe sees the caller's descriptors" || fail "THREATS 5 control: outside, the probe sees the caller's descriptors"
expect_probe "THREATS 5, 6, 7: only 0, 1 and 2 reach the command" ok -- in_jail -- "$PROBE" fds
expect_probe "THREATS 5: a descriptor of the caller cannot be reopened by number" "errno ENOENT" -- in_jail -- "$PROBE" read /proc/self/fd/3
exec 3<&- 4<&-
expect_probe "the command starts in the workspace" ok -- in_jail -- "$PROBE" cwd
case $PROBE_OUTPUT in *"$W"*) pass "THREATS 6: getcwd is the workspace" ;; *) fail "THREATS 6: getcwd is the workspace"; diag "$PROBE_OUTPUT" ;; esac

# The environment: credentials removed, the jail's places set.
export GITHUB_TOKEN="$NONCE" AWS_SECRET_ACCESS_KEY="$NONCE" OPENAI_API_KEY="$NONCE" \
	SSH_AUTH_SOCK="/tmp/agent-$NONCE" DATABASE_URL="postgres://u:$NONCE@db/x" NPM_TOKEN_FILE="$NONCE" \
	STOCKADE_TEST_PLAIN=visible
expect_probe "the environment is readable" ok -- in_jail -- "$PROBE" environ
printf '%s\n' "$PROBE_OUTPUT" >"$T/environ"
assert_absent "$NONCE" "THREATS 52: no credential variable reaches the command" "$T/environ"
grep -q '^STOCKADE_TEST_PLAIN=visible$' "$T/environ" && pass "other variables pass" || fail "other variables pass"
expect_probe "HOME is not the real home: its files are not there" "errno ENOENT" -- in_jail --read "$PROBE" -- sh -c 'exec "$0" read "$HOME/notes.txt"' "$PROBE"
grep -q '^TMPDIR=/' "$T/environ" && pass "TMPDIR is set" || fail "TMPDIR is set"
grep -q '^XDG_RUNTIME_DIR=' "$T/environ" && fail "XDG_RUNTIME_DIR is removed" || pass "XDG_RUNTIME_DIR is removed"
expect_probe "--env NAME passes a removed variable through" ok -- in_jail --env GITHUB_TOKEN -- "$PROBE" env GITHUB_TOKEN
case $PROBE_OUTPUT in *"GITHUB_TOKEN=$NONCE"*) pass "with its value" ;; *) fail "with its value" ;; esac
expect_probe "--env NAME=VALUE sets it" ok -- in_jail --env FOO=bar -- "$PROBE" env FOO
case $PROBE_OUTPUT in *"FOO=bar"*) pass "to VALUE" ;; *) fail "to VALUE" ;; esac
expect_probe "--unset NAME removes it" ok -- in_jail --unset STOCKADE_TEST_PLAIN -- "$PROBE" env STOCKADE_TEST_PLAIN
case $PROBE_OUTPUT in *"STOCKADE_TEST_PLAIN unset"*) pass "it is gone" ;; *) fail "it is gone" ;; esac
unset GITHUB_TOKEN AWS_SECRET_ACCESS_KEY OPENAI_API_KEY SSH_AUTH_SOCK DATABASE_URL NPM_TOKEN_FILE STOCKADE_TEST_PLAIN

# Capabilities and no_new_privs, root included.
expect_probe "capabilities are readable" ok -- in_jail -- "$PROBE" caps
for set in CapInh CapPrm CapEff CapAmb; do
	printf '%s\n' "$PROBE_OUTPUT" | grep -q "^$set:[[:space:]]*0000000000000000$" &&
		pass "$set is empty" || { fail "$set is empty"; diag "$PROBE_OUTPUT"; }
done
printf '%s\n' "$PROBE_OUTPUT" | grep -q '^NoNewPrivs:[[:space:]]*1$' && pass "THREATS 10: no_new_privs is set" || fail "THREATS 10: no_new_privs is set"
if is_root; then
	printf '%s\n' "$PROBE_OUTPUT" | grep -q '^CapBnd:[[:space:]]*0000000000000000$' &&
		pass "root's bounding set is empty" || fail "root's bounding set is empty"
fi

# Nothing outside the run can be signalled or traced.
sleep 300 &
outside=$!
at_exit kill "$outside"
expect_control "THREATS 31 control: outside, the probe can signal a process of the user" -- "$PROBE" kill "$outside" 0
expect_probe "THREATS 31: a process outside the run cannot be signalled" "errno $(outside_pid_errno)" -- in_jail -- "$PROBE" kill "$outside" TERM
kill -0 "$outside" && pass "THREATS 31: the outside process is alive" || fail "THREATS 31: the outside process is alive"
expect_probe "THREATS 30: a process outside the run cannot be traced" "errno $(outside_pid_errno)" -- in_jail -- "$PROBE" ptrace "$outside"
expect_probe "THREATS 30: a descriptor of a process outside cannot be taken" "errno ESRCH" -- in_jail -- "$PROBE" pidfd-getfd "$outside" 0
expect_probe "THREATS 30: another process's memory cannot be read" "errno $([ "$TEST_BACKEND" = namespaces ] && echo ENOENT || echo EACCES)" -- \
	in_jail -- "$PROBE" read-mem "$outside"

# What the command leaves behind is killed when it exits, setsid or not.
# The probe runs under a name of its own, so that its processes can be
# found from outside whatever pid namespace they are in: a copy in the
# workspace (a link there would not be followed out of it).
MARK="probe-$NONCE"
cp "$PROBE" "$W/$MARK"
expect_probe "the command leaves an orphan in a new session" ok -- in_jail -- "$W/$MARK" orphan "$W/orphan.pid" 300
if gone "$MARK"; then
	pass "THREATS 57: the orphan is gone when stockade returns"
else
	fail "THREATS 57: the orphan is gone when stockade returns"
	pkill -9 -f -- "$MARK"
fi

# Signals that did not come from a terminal reach the command once.
for sig in TERM INT HUP USR1 USR2 QUIT WINCH; do
	out="$T/signals-$sig"
	# stockade itself in the background, so that $! is its pid.
	"$STOCKADE" --backend "$TEST_BACKEND" --net off -C "$W" -- "$PROBE" signals 3 >"$out" 2>&1 &
	jpid=$!
	wait_until grep -q waiting "$out" 2>/dev/null
	kill -"$sig" "$jpid"
	wait "$jpid"
	n=$(grep -c "^got SIG$sig\$" "$out")
	[ "$n" -eq 1 ] && pass "SIG$sig sent to stockade reaches the command once" ||
		{ fail "SIG$sig sent to stockade reaches the command once (got $n)"; diag "$(cat "$out")"; }
done

# stockade killed: the command goes with it.
# spawn-wait: the command, and a child of its own, both under MARK.
"$STOCKADE" -v --backend "$TEST_BACKEND" --net off -C "$W" -- "$W/$MARK" spawn-wait 300 >"$T/killed.out" 2>"$T/killed.err" &
jpid=$!
wait_until grep -q '^child ' "$T/killed.out" 2>/dev/null
[ "$(pgrep -f -- "$MARK" | wc -l)" -ge 2 ] && pass "the command and its child run" || fail "the command and its child run"
kill -KILL "$jpid"
wait "$jpid" 2>/dev/null
# The keeper kills them (killed.sh measures its bound, 2 s): a loaded
# machine gets ten.
for _ in $(seq 200); do gone "$MARK" && break; sleep 0.05; done
if gone "$MARK"; then
	pass "THREATS 57: the command and its child die with stockade"
else
	fail "THREATS 57: the command and its child die with stockade"
	pkill -9 -f -- "$MARK"
fi

# The report.
expect_probe "a run with a report" ok -- in_jail --report "$T/report.json" -- "$PROBE" write "$W/r"
if python3 - "$T/report.json" <<'PY'; then
import json, sys
r = json.load(open(sys.argv[1]))
for k in ("backend", "enforced", "unenforced", "network", "supervisor", "denials", "exit", "ms"):
    assert k in r, k
assert r["exit"] == {"code": 0}, r["exit"]
assert r["network"] == "off"
assert r["ms"]["setup"] > 0 and r["ms"]["run"] > 0
assert all("what" in g and "why" in g for g in r["unenforced"])
PY
	pass "the report has the keys DESIGN.md names"
else
	fail "the report has the keys DESIGN.md names"
	diag "$(cat "$T/report.json")"
fi
in_jail --report "$T/report2.json" -- sh -c 'kill -KILL $$' 2>/dev/null
python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); assert r["exit"] == {"signal": "SIGKILL"}, r["exit"]' "$T/report2.json" &&
	pass "a signal is reported by name" || fail "a signal is reported by name"

# The report's file is opened before the command runs, and written
# through that descriptor: one that cannot be opened refuses the run
# before anything starts; what the command does to its path meanwhile
# cannot point the write elsewhere.
rm -f "$T/ran"
out=$(in_jail --report "$T/no/such/dir/r.json" -- touch "$T/ran" 2>&1)
st=$?
if [ $st -eq 125 ] && [ ! -e "$T/ran" ] && printf '%s' "$out" | grep -q "nothing ran"; then
	pass "an unwritable --report is refused before the command runs (125, said, nothing ran)"
else
	fail "an unwritable --report is refused before the command runs (status $st)"
	diag "$out"
fi
touch "$T/ran-control" && pass "control: the same command outside makes its file" || fail "control"
mkfifo "$W/fifo"
out=$(timeout 20 "${JAIL[@]}" -C "$W" --report "$W/fifo" -- true 2>&1)
st=$?
[ $st -eq 125 ] && pass "a FIFO with no reader as --report: refused (125), not waited on" ||
	{ fail "a FIFO with no reader as --report (status $st)"; diag "$out"; }
printf 'mine\n' >"$HOME/.victimrc"
out=$(in_jail --report "$W/r.json" -- sh -c 'echo started >"$1"; rm -f "$2"; ln -s "$3" "$2"' sh "$W/started" "$W/r.json" "$HOME/.victimrc" 2>&1)
if [ -s "$W/started" ] && [ "$(cat "$HOME/.victimrc")" = mine ] && printf '%s' "$out" | grep -q "moved or replaced"; then
	pass "THREATS 63: a report replaced by a symlink during the run: the link's target is untouched, and the user is told"
else
	fail "THREATS 63: a report replaced by a symlink during the run"
	diag "$out"; diag "$(cat "$HOME/.victimrc")"
fi
out=$(in_jail --report "$T/failed.json" --read "$T/does-not-exist" -- true 2>&1)
if python3 - "$T/failed.json" <<'PY'; then
import json, sys
r = json.load(open(sys.argv[1]))
assert r["exit"] is None, r["exit"]
s = r["stockade"]
assert s["status"] == 125 and s["command_ran"] is False, s
assert any("does-not-exist" in l for l in s["said"]), s
PY
	pass "stockade's own failure is in the report: its status, that the command did not run, what it said"
else
	fail "stockade's own failure is in the report"
	diag "$(cat "$T/failed.json")"
fi
# -q hides notes, not the line that says a refusal made the command fail
out=$(in_jail -q --report "$T/denied.json" -- unshare -U true 2>&1 >/dev/null)
if python3 - "$T/denied.json" <<'PY'; then
import json, sys
d = [x for x in json.load(open(sys.argv[1]))["denials"] if x["what"] == "unshare"]
assert d, "no unshare denial"
d = d[0]
assert d["kind"] == "syscall" and d["errno"] == "EPERM", d
assert "system call table" in d["rule"] and "new namespace" in d["rule"], d
assert d["source"].startswith("built in"), d
assert d["fix"].startswith("none"), d
PY
	pass "the report's denial names the rule, its source, and that no option allows it"
else
	fail "the report's denial names the rule, its source and the fix"
	diag "$(cat "$T/denied.json")"
fi
case $out in *"refused:"*) pass "-q: the refused line is still said when the command fails" ;;
*) fail "-q: the refused line is still said when the command fails"; diag "$out" ;; esac

# What is unenforced is said once while it stays the same, and kept in
# every report (the landlock backend always has some: /proc).
if [ "$TEST_BACKEND" = landlock ]; then
	gh=$(tmpdir_new)
	HOME=$gh in_jail --report "$T/g1.json" -- true 2>"$T/g1.err"
	HOME=$gh in_jail --report "$T/g2.json" -- true 2>"$T/g2.err"
	HOME=$gh in_jail -v -- true 2>"$T/g3.err"
	if grep -q "unenforced:" "$T/g1.err" && ! grep -q "unenforced:" "$T/g2.err" && grep -q "unenforced:" "$T/g3.err" &&
		python3 -c 'import json,sys; a,b=(json.load(open(f))["unenforced"] for f in sys.argv[1:]); assert a and a == b' "$T/g1.json" "$T/g2.json"; then
		pass "the unenforced lines: said on the first run, not the next, with -v always, in every report"
	else
		fail "the unenforced lines said once, kept in every report"
		diag "$(cat "$T/g1.err")"; diag "--"; diag "$(cat "$T/g2.err")"
	fi
fi

# A failed start changes nothing on disk: no cache, state or run
# directory is made for a run that never started.
fh=$(tmpdir_new)
for bad in "--read $T/no-such-path" "--report $T/no/such/dir/r.json" "--hide /" "--net sideways"; do
	# shellcheck disable=SC2086 # the words are the options
	HOME=$fh in_jail $bad -- true 2>/dev/null
	st=$?
	left=$(find "$fh" -mindepth 1 | head -3)
	if [ $st -eq 125 ] && [ -z "$left" ]; then
		pass "a failed start ($bad) leaves nothing in the home"
	else
		fail "a failed start ($bad) leaves nothing in the home (status $st)"
		diag "$left"
	fi
done
HOME=$fh in_jail -- /no/such/program 2>/dev/null
[ $? -eq 127 ] && [ -z "$(find "$fh" -mindepth 1 | head -1)" ] && pass "a missing program (127) leaves nothing in the home" ||
	fail "a missing program (127) leaves nothing in the home"

# Python's multiprocessing: POSIX semaphores in /dev/shm. The namespace
# jail has a /dev/shm of its own; on the landlock backend the host's is
# refused, with one line that says why and what would allow it.
cat >"$W/mp.py" <<'PY'
import multiprocessing as mp
def sq(x): return x * x
if __name__ == "__main__":
    with mp.Pool(2) as p:
        print("mp", sum(p.map(sq, range(10))))
PY
out=$(cd "$W" && python3 mp.py 2>&1)
[ "$out" = "mp 285" ] && pass "control: multiprocessing works outside" || { fail "control: multiprocessing works outside"; diag "$out"; }
out=$(in_jail -- python3 "$W/mp.py" 2>&1)
st=$?
if [ "$TEST_BACKEND" = namespaces ]; then
	[ $st -eq 0 ] && case $out in *"mp 285"*) true ;; *) false ;; esac &&
		pass "multiprocessing works in the namespace jail" || { fail "multiprocessing works in the namespace jail"; diag "$out"; }
else
	case $out in *"stockade: refused: shm /dev/shm/sem."*"(EACCES)"*)
		[ $st -ne 0 ] && pass "multiprocessing on the landlock backend fails with one line naming /dev/shm" ||
			fail "multiprocessing: the command failed" ;;
	*) fail "multiprocessing on the landlock backend: one line naming /dev/shm"; diag "$out" ;; esac
	out=$(in_jail -q --report "$T/mp.json" -- python3 "$W/mp.py" 2>/dev/null)
	python3 -c 'import json,sys; d=[x for x in json.load(open(sys.argv[1]))["denials"] if x["kind"] == "shm"]; assert d and "namespace jail" in d[0]["fix"] and "/dev/shm" in d[0]["rule"], d' "$T/mp.json" &&
		pass "the report names the rule and that the namespace jail gives one" || { fail "the report's shm denial"; diag "$(cat "$T/mp.json")"; }
	out=$(in_jail -q -- python3 -c 'import tempfile, os; fd, p = tempfile.mkstemp(); print("mkstemp", os.path.dirname(p) == os.environ["TMPDIR"])' 2>&1)
	[ "$out" = "mkstemp True" ] && pass "a temporary file with the same flags is not taken for one" ||
		{ fail "a temporary file with the same flags"; diag "$out"; }
fi

plan_done
