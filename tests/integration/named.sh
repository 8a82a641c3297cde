# Where a line is owed, one is said, with the option that gives what was
# missing, and the option then works:
# - a connect to a port of the host's loopback that a service of the host
#   serves and nothing of the run does (the namespace jail's loopback is
#   its own: ECONNREFUSED there, looked up outside);
# - a connect to a socket file of the host's (the namespace jail: ENOENT,
#   not in the jail; the landlock backend: the supervisor's refusal);
# - an open of a hidden file of your settings' (the landlock backend,
#   where the supervisor sees the opens of a run with a hide in a folder
#   it may write: the rule and where it comes from);
# - what the run wrote in its fresh home and /tmp, discarded with them:
#   counted and named when the run ends (a line said once for the same
#   places, and the report), with --home DIR or --write /tmp.
#
# The control, on main before this: a bare ECONNREFUSED and ENOENT in the
# namespace jail, and nothing said of the discarded writes.
. tests/lib.sh

new_places
unset XDG_STATE_HOME
in_jail() {
	(cd "$W" && jail "$@")
}
# line_with TEXT: the last stockade line of the probe's output holds TEXT
line_with() {
	printf '%s\n' "$PROBE_OUTPUT" | grep '^stockade: ' | grep -q -F -- "$1"
}

# ---- a service of the host on loopback
netpeer_start tcp 127.0.0.1 0
P=$PEER_PORT
expect_control "outside: the host's service answers" -- "$PROBE" connect-tcp 127.0.0.1 "$P"
want=$([ "$TEST_BACKEND" = landlock ] && echo EACCES || echo ECONNREFUSED)
got=$(in_jail -- "$PROBE" connect-tcp 127.0.0.1 "$P" 2>&1 | sed -n 's/^probe: errno //p')
want=${got:-$want}
expect_probe "in the jail: refused" "errno $want" -- in_jail -- "$PROBE" connect-tcp 127.0.0.1 "$P"
line_with "connect 127.0.0.1:$P ($want); to allow: --connect 127.0.0.1:$P" &&
	pass "a line names it, with --connect 127.0.0.1:PORT" || { fail "a line names it, with --connect 127.0.0.1:PORT"; diag "$PROBE_OUTPUT"; }
expect_probe "with that --connect it is reached" ok -- in_jail --connect "127.0.0.1:$P" -- "$PROBE" connect-tcp 127.0.0.1 "$P"
# a port nobody serves, in the jail or outside: refused alike, and no
# --connect proposed (it would not help)
Q=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
expect_probe "a port nobody serves: refused" "errno ECONNREFUSED" -- \
	in_jail -- "$PROBE" connect-tcp 127.0.0.1 "$Q"
! line_with "--connect 127.0.0.1:$Q" && pass "and no --connect is proposed for it" || { fail "and no --connect is proposed for it"; diag "$PROBE_OUTPUT"; }

# ---- a socket file of the host's
SOCKDIR=$(mktemp -d /var/tmp/stockade-named.XXXXXX)
at_exit rm -rf "$SOCKDIR"
chmod 755 "$SOCKDIR"
netpeer_start unix "$SOCKDIR/db.sock"
expect_control "outside: the socket file answers" -- "$PROBE" connect-unix "$SOCKDIR/db.sock"
expect_probe "in the jail: refused" "errno $([ "$TEST_BACKEND" = landlock ] && echo EACCES || echo ENOENT)" -- \
	in_jail -- "$PROBE" connect-unix "$SOCKDIR/db.sock"
line_with "connect unix:$SOCKDIR/db.sock" && line_with "to allow: --connect unix:$SOCKDIR/db.sock" &&
	pass "a line names it, with --connect unix:PATH" || { fail "a line names it, with --connect unix:PATH"; diag "$PROBE_OUTPUT"; }
expect_probe "with that --connect it is reached" ok -- in_jail --connect "unix:$SOCKDIR/db.sock" -- "$PROBE" connect-unix "$SOCKDIR/db.sock"
expect_probe "a socket file nobody has: ENOENT, as outside" "errno ENOENT" -- in_jail -- "$PROBE" connect-unix "$SOCKDIR/none.sock"
! line_with "none.sock" && pass "and no line for it" || { fail "and no line for it"; diag "$PROBE_OUTPUT"; }

# ---- a hidden file of your settings', touched
echo "SECRET=not-real" >"$W/.env"
printf '[sandbox]\nhide = .env\n' >"$W/stockade.ini"
expect_control "outside: .env is read" -- "$PROBE" read "$W/.env"
expect_probe "hide = .env in stockade.ini: refused" "errno $(covered_errno)" -- in_jail -- "$PROBE" read "$W/.env"
if [ "$TEST_BACKEND" = landlock ]; then
	line_with "open $W/.env (EACCES); to allow: take away the hide it names ($W/stockade.ini line 2" &&
		pass "a line names the hidden file and the settings line that hides it" ||
		{ fail "a line names the hidden file and the settings line that hides it"; diag "$PROBE_OUTPUT"; }
fi
rm -f "$W/stockade.ini"
expect_probe "without that line, read" ok -- in_jail -- "$PROBE" read "$W/.env"

# ---- writes discarded with the fresh home and /tmp
TMPNAME=stockade-named-$$
at_exit rm -f "/tmp/$TMPNAME"
out=$(in_jail --report "$T/d.json" -- sh -c 'mkdir -p "$HOME/.cache/tool" && echo x >"$HOME/.cache/tool/state" && echo y >"$HOME/.toolrc" && echo z >"${TMPDIR:-/tmp}/scratch"' 2>&1)
st=$?
[ $st -eq 0 ] && pass "the run writes its home and tmp (status 0)" || { fail "the run writes its home and tmp (status $st)"; diag "$out"; }
case $out in *"the run wrote 2 files (4 bytes) in its fresh home, discarded with it at the end: ~/.cache, ~/.toolrc; --home DIR keeps a home across runs"*)
	pass "a line counts what it wrote in its fresh home, and names --home DIR" ;;
*) fail "a line counts what it wrote in its fresh home, and names --home DIR"; diag "$out" ;; esac
case $out in *"the run wrote 1 file (2 bytes) in its "*"TMP"*"discarded with it"*|*"the run wrote 1 file (2 bytes) in its /tmp"*) pass "and what it wrote in its tmp" ;;
*) fail "and what it wrote in its tmp"; diag "$out" ;; esac
python3 - "$T/d.json" <<'PY' && pass "the report lists them: place, count, bytes, paths, the option" || fail "the report lists them"
import json, sys
r = json.load(open(sys.argv[1]))
d = {x["place"]: x for x in r["discarded"]}
h = d["home"]
assert h["files"] == 2 and h["bytes"] == 4 and "~/.toolrc" in h["paths"] and h["keep"].startswith("--home DIR"), h
t = d.get("/tmp") or d.get("TMPDIR")
assert t["files"] == 1 and t["bytes"] == 2, t
PY
out=$(in_jail -- sh -c 'mkdir -p "$HOME/.cache/tool" && echo x >"$HOME/.cache/tool/state" && echo y >"$HOME/.toolrc"' 2>&1)
case $out in *"discarded with it"*) fail "the same places again: not said again"; diag "$out" ;; *) pass "the same places again: not said again" ;; esac
out=$(in_jail -v -- sh -c 'echo y >"$HOME/.toolrc"' 2>&1)
case $out in *"discarded with it"*) pass "-v says it every run" ;; *) fail "-v says it every run"; diag "$out" ;; esac
# the options that keep them
KEPT=$T/kept-home
mkdir -p "$KEPT" && chmod 700 "$KEPT"
expect_probe "with --home DIR, what it writes there stays" ok -- in_jail --home "$KEPT" -- "$PROBE" write "$KEPT/.toolrc"
[ -f "$KEPT/.toolrc" ] && pass "the file is in DIR after the run" || fail "the file is in DIR after the run"
! line_with "fresh home" && pass "and nothing is said discarded" || { fail "and nothing is said discarded"; diag "$PROBE_OUTPUT"; }
if [ "$TEST_BACKEND" = namespaces ]; then
	# (stockade's state outside /tmp: a tree the jail may write must not hold it)
	XDG_STATE_HOME=$(mktemp -d /var/tmp/stockade-named.XXXXXX)
	export XDG_STATE_HOME
	at_exit rm -rf "$XDG_STATE_HOME"
	# (and the user's settings file: a run that could make it is refused)
	XDG_CONFIG_HOME="$XDG_STATE_HOME/config"
	export XDG_CONFIG_HOME
	# (and stockade itself outside /tmp, which it refuses to leave
	# writable: a copy, where the tree is built in /tmp)
	case $STOCKADE in /tmp/*)
		mkdir -p "$XDG_STATE_HOME/bin" && cp "$STOCKADE" "$XDG_STATE_HOME/bin/stockade"
		JAIL=("$XDG_STATE_HOME/bin/stockade" --backend "$TEST_BACKEND") ;;
	esac
	# (and the home, where the default state directory lies, which a
	# run that could write it could plant trust records in)
	mkdir -p "$XDG_STATE_HOME/home"
	HOME="$XDG_STATE_HOME/home"
	export HOME
	expect_probe "with --write /tmp, a file in /tmp stays" ok -- in_jail --write /tmp -- "$PROBE" write "/tmp/$TMPNAME"
	[ -f "/tmp/$TMPNAME" ] && pass "it is in the host's /tmp after the run" || fail "it is in the host's /tmp after the run"
fi
plan_done
