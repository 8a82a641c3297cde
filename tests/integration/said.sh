# Notes that would be the same on every run are said once while they stay
# the same, one rule for all of them: a hide target that does not exist
# (an example profile's .env.local), the parts of the policy this host
# leaves out (once per line, so a switch of backend does not say the
# other's again), the fallback to the landlock backend. With -v always;
# with -q never (and counted as said: the report has it); in the
# report's notes every time.
#
# The control, on main before this: the hide note on every run, and the
# landlock backend's unenforced block again after a namespace run.
. tests/lib.sh

new_places
unset XDG_STATE_HOME
in_jail() {
	(cd "$W" && jail "$@")
}
# said WHAT FILE: the note's line is in FILE (stderr)
said() {
	grep -q -F -- "$1" "$2"
}
# noted WHAT REPORT: the report's notes hold it
noted() {
	python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); sys.exit(0 if any(sys.argv[2] in n for n in r["stockade"]["notes"]) else 1)' "$2" "$1"
}

note="--hide '.env.local' does not exist: skipped"
in_jail -q --hide .env.local --report "$T/q.json" -- "$PROBE" cwd >"$T/q.out" 2>"$T/q.err"
grep -q '^probe: ok' "$T/q.out" && ! said "$note" "$T/q.err" && noted "$note" "$T/q.json" &&
	pass "-q: the note is not said, and is in the report" || { fail "-q: the note is not said, and is in the report"; diag "$(cat "$T/q.err")"; }
for i in 1 2 3; do
	in_jail --hide .env.local --report "$T/r$i.json" -- "$PROBE" cwd >"$T/r$i.out" 2>"$T/r$i.err"
	grep -q '^probe: ok' "$T/r$i.out" || { fail "run $i: the probe ran"; diag "$(cat "$T/r$i.out" "$T/r$i.err")"; }
done
! said "$note" "$T/r1.err" && ! said "$note" "$T/r2.err" && ! said "$note" "$T/r3.err" &&
	pass "the runs after it do not say it again (what -q kept quiet counts as said)" ||
	{ fail "the runs after it do not say it again"; diag "$(cat "$T/r1.err" "$T/r2.err")"; }
noted "$note" "$T/r1.json" && noted "$note" "$T/r2.json" && noted "$note" "$T/r3.json" &&
	pass "every run's report has it" || fail "every run's report has it"
in_jail -v --hide .env.local -- true 2>"$T/v.err"
said "$note" "$T/v.err" && pass "-v says it every run" || { fail "-v says it every run"; diag "$(cat "$T/v.err")"; }
# Another note is news: said once too.
in_jail --hide .env.other -- true 2>"$T/o.err"
in_jail --hide .env.other -- true 2>"$T/o2.err"
said "--hide '.env.other' does not exist: skipped" "$T/o.err" && ! said "$note" "$T/o.err" &&
	! said ".env.other" "$T/o2.err" &&
	pass "a note that changed is said once, the one said before is not" || { fail "a note that changed is said once"; diag "$(cat "$T/o.err")"; }
# An example profile's hides, as a user runs it every day.
cp conf/examples/node.ini "$W/stockade.ini"
(cd "$W" && "$STOCKADE" trust stockade.ini >/dev/null 2>&1)
in_jail -p test -- true 2>"$T/p1.err"
in_jail -p test -- true 2>"$T/p2.err"
if said ".env.local' (" "$T/p1.err" && ! said "does not exist: skipped" "$T/p2.err"; then
	pass "an example profile's missing hides: said on the first run, not on the next"
else
	fail "an example profile's missing hides: said on the first run, not on the next"
	diag "$(cat "$T/p1.err")"
	diag "--"
	diag "$(cat "$T/p2.err")"
fi
rm -f "$W/stockade.ini"

# The unenforced lines, across a switch of backend: the landlock
# backend always has some (/proc of other processes); a namespace run
# without Landlock (simulated) has its own.
gh=$(tmpdir_new)
(cd "$W" && HOME=$gh "$STOCKADE" --backend landlock -- true 2>"$T/l1.err")
(cd "$W" && HOME=$gh "$SIMKERNEL" --no-landlock=EOPNOTSUPP -- "$STOCKADE" --backend namespaces -- true 2>"$T/n1.err")
said "unenforced: landlock: not enforced here" "$T/n1.err" && pass "the namespace run without Landlock says its own line" ||
	{ fail "the namespace run without Landlock says its own line"; diag "$(cat "$T/n1.err")"; }
(cd "$W" && HOME=$gh "$STOCKADE" --backend landlock --report "$T/l2.json" -- true 2>"$T/l2.err")
if said "unenforced: /proc of other processes" "$T/l1.err" && ! said "unenforced:" "$T/l2.err"; then
	pass "the landlock backend's unenforced lines: said once, not again after a namespace run"
else
	fail "the landlock backend's unenforced lines: said once, not again after a namespace run"
	diag "$(cat "$T/l1.err")"
	diag "--"
	diag "$(cat "$T/l2.err")"
fi
python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); assert any("/proc of other processes" in g["what"] for g in r["unenforced"])' "$T/l2.json" &&
	pass "and the report still lists them" || fail "and the report still lists them"

# The fallback to the landlock backend, simulated: said once.
fh=$(tmpdir_new)
for i in 1 2; do
	(cd "$W" && HOME=$fh "$SIMKERNEL" --no-userns=EPERM -- "$STOCKADE" --report "$T/f$i.json" -- "$PROBE" cwd >"$T/f$i.out" 2>"$T/f$i.err")
done
if grep -q '^probe: ok' "$T/f2.out" && said "the namespace jail is not available here" "$T/f1.err" &&
	! said "not available here" "$T/f2.err" && noted "the namespace jail is not available here" "$T/f2.json"; then
	pass "the fallback: said on the first run, in the report of every run"
else
	fail "the fallback: said on the first run, in the report of every run"
	diag "$(cat "$T/f1.err")"
	diag "--"
	diag "$(cat "$T/f2.out" "$T/f2.err")"
fi
plan_done
