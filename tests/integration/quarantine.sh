# The quarantine holds any name, and stockade prints none raw: a hand-off
# whose name has a newline, an escape sequence, a backslash or bytes that
# are not UTF-8 is set aside with a record that reads back, named on
# stderr and by `stockade quarantine` with each such byte escaped (\n,
# \x1b), and `stockade quarantine restore ID` puts it back under its very
# name.
. tests/lib.sh

new_places
export GIT_CONFIG_NOSYSTEM=1 GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@example.invalid \
	GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@example.invalid
in_jail() {
	jail -q --net off "$@"
}
# raw FILE: what in FILE a terminal would act on or mis-show: a control
# byte but the newlines that end lines, or bytes that are not UTF-8.
raw() {
	python3 -c '
import sys
b = open(sys.argv[1], "rb").read()
try:
    t = b.decode("utf-8")
except UnicodeDecodeError as e:
    print("not UTF-8 at byte", e.start); sys.exit(0)
bad = [hex(ord(c)) for c in t if (ord(c) < 0x20 and c != "\n") or 0x7f <= ord(c) < 0xa0]
if bad: print("control characters", *bad)' "$1"
}

# ---- names the run gives the hooks of a repository it makes.
W1="$W/names"
mkdir -p "$W1"
plant='import os
os.makedirs(b"sub/.git/hooks", exist_ok=True)
for n in (b"pre-commit\nx", b"\x1b]0;title\x07\x1b[31mred", b"back\\slash", b"\xff\xfe\rbytes"):
    with open(b"sub/.git/hooks/" + n, "wb") as f:
        f.write(b"#!/bin/sh\necho planted\n")
print("planted")'
# The control: outside, these names are what they say (the bytes on disk).
(cd "$T" && python3 -c "$plant" >/dev/null && python3 -c 'import os; print(sorted(os.listdir(b"sub/.git/hooks")))') >"$T/control.out" 2>&1
grep -qF "b'pre-commit\\nx'" "$T/control.out" && grep -qF "b'\\x1b]0;title\\x07\\x1b[31mred'" "$T/control.out" &&
	grep -qF "b'\\xff\\xfe\\rbytes'" "$T/control.out" && pass "control: outside, the names hold a newline, escapes and bytes that are not UTF-8" ||
	{ fail "control: outside, the names hold a newline, escapes and bytes that are not UTF-8"; diag "$(cat "$T/control.out")"; }
out=$(cd "$W1" && in_jail -C "$W1" -- python3 -c "$plant" 2>"$T/run.err")
[ "$out" = planted ] && pass "the run planted hooks with hostile names" || { fail "the run planted hooks with hostile names"; diag "$out"; }
[ -z "$(raw "$T/run.err")" ] && pass "stockade's lines about them hold no raw control byte nor a byte that is not UTF-8" ||
	{ fail "stockade's lines about them hold no raw control byte nor a byte that is not UTF-8"; diag "$(raw "$T/run.err")"; diag "$(cat -A "$T/run.err")"; }
for shown in 'pre-commit\nx' '\x1b]0;title\x07\x1b[31mred' 'back\\slash' '\xff\xfe\rbytes'; do
	grep -qF "sub/.git/hooks/$shown'" "$T/run.err" && pass "stderr names $shown escaped" ||
		{ fail "stderr names $shown escaped"; diag "$(cat "$T/run.err")"; }
done
(cd "$W1" && python3 -c 'import os; print(len(os.listdir(b"sub/.git/hooks")))') >"$T/left" 2>&1
[ "$(cat "$T/left")" = 0 ] && pass "every hook the run planted is set aside" || { fail "every hook the run planted is set aside"; diag "$(ls -b "$W1/sub/.git/hooks")"; }

"$STOCKADE" quarantine >"$T/list" 2>&1
[ -z "$(raw "$T/list")" ] && pass "stockade quarantine prints no raw control byte" ||
	{ fail "stockade quarantine prints no raw control byte"; diag "$(raw "$T/list")"; }
! grep -q 'record cannot be read' "$T/list" && pass "every record reads back" || { fail "every record reads back"; diag "$(cat "$T/list")"; }
ids=$(awk -v w="$W1/sub/.git/hooks/" 'index($0, w) && $1 ~ /^[0-9]/ { print $1 }' "$T/list")
[ "$(printf '%s\n' "$ids" | grep -c .)" = 4 ] && pass "stockade quarantine lists the four, escaped" ||
	{ fail "stockade quarantine lists the four, escaped"; diag "$(cat "$T/list")"; }
for id in $ids; do
	out=$("$STOCKADE" quarantine restore "$id" 2>&1)
	st=$?
	printf '%s\n' "$out" >"$T/restore.out"
	[ $st -eq 0 ] && [ -z "$(raw "$T/restore.out")" ] && pass "stockade quarantine restore $id: 0, said escaped" ||
		{ fail "stockade quarantine restore $id: 0, said escaped (status $st)"; diag "$out"; }
done
(cd "$W1" && python3 -c 'import os; print(sorted(os.listdir(b"sub/.git/hooks")))') >"$T/back" 2>&1
[ "$(cat "$T/back")" = "$(sed -n '1p' "$T/control.out")" ] && pass "each is back under its very name" ||
	{ fail "each is back under its very name"; diag "control: $(cat "$T/control.out")"; diag "back: $(cat "$T/back")"; }

# ---- explain and why print names escaped too: a file of the workspace
# named with an escape sequence, listed where Landlock's carve-out
# enumerates the workspace (a --hide in it), and a path asked about.
W2="$W/explain"
mkdir -p "$W2/secrets"
(cd "$W2" && python3 -c 'open(b"\x1b[2Jcleared\nname", "w").write("x")')
"$STOCKADE" explain -v --backend "$TEST_BACKEND" -C "$W2" --hide "$W2/secrets" -- true >"$T/explain.out" 2>&1
st=$?
[ $st -eq 0 ] && [ -z "$(raw "$T/explain.out")" ] && pass "explain -v prints no raw control byte (status 0)" ||
	{ fail "explain -v prints no raw control byte (status $st)"; diag "$(raw "$T/explain.out")"; }
if [ "$TEST_BACKEND" = landlock ]; then
	grep -qF '\x1b[2Jcleared\nname' "$T/explain.out" && pass "and names the file escaped among the carved entries" ||
		{ fail "and names the file escaped among the carved entries"; diag "$(grep -a cleared "$T/explain.out")"; }
fi
"$STOCKADE" why --backend "$TEST_BACKEND" -C "$W2" "$W2/$(printf 'a\033[2Jb')" >"$T/why.out" 2>&1
st=$?
[ $st -eq 125 ] && [ -z "$(raw "$T/why.out")" ] && grep -qF 'a\x1b[2Jb' "$T/why.out" &&
	pass "why of a path with an escape sequence: refused (125), named escaped" ||
	{ fail "why of a path with an escape sequence: refused (125), named escaped (status $st)"; diag "$(cat -A "$T/why.out")"; }

plan_done
