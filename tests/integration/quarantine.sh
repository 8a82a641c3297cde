# The quarantine holds any name, and stockade prints none raw: a hand-off
# whose name has a newline, an escape sequence, a backslash or bytes that
# are not UTF-8 is set aside with a record that reads back, named on
# stderr and by `stockade quarantine` with each such byte escaped (\n,
# \x1b), and `stockade quarantine restore ID` puts it back under its very
# name. And a git config whose settings the guard dropped (a clone's
# remote.origin.url naming a repository in the workspace) is restored by
# putting those settings back into the config as it is now, or whole
# elsewhere with --as PATH: every hint said for it works.
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

# ---- dropped settings put back: git clone of a repository in the
# workspace, in the jail; its remote.origin.url names a path the run can
# write, so the guard drops it and git fetch outside fails.
W3="$W/clone"
mkdir -p "$W3"
git -C "$W3" init -q src
git -C "$W3/src" commit -q --allow-empty -m one
# The control: the same clone made outside keeps its url and fetches.
git -C "$T" clone -q "$W3/src" outside-clone && git -C "$T/outside-clone" fetch -q 2>/dev/null &&
	pass "control: outside, a clone of it fetches" || fail "control: outside, a clone of it fetches"
clone_in_jail() { # NAME: git clone src NAME in the jail; its stderr in $T/NAME.err
	(cd "$W3" && in_jail -C "$W3" -- sh -c 'echo started; git clone -q src "$1"' sh "$1") >"$T/$1.out" 2>"$T/$1.err"
	grep -qx started "$T/$1.out" && [ -d "$W3/$1/.git" ] && pass "git clone src $1 ran in the jail" ||
		{ fail "git clone src $1 ran in the jail"; diag "$(cat "$T/$1.out" "$T/$1.err")"; }
}
item_of() { # NAME: the quarantine's id of NAME's .git/config
	"$STOCKADE" quarantine 2>/dev/null | awk -v p="$W3/$1/.git/config" '$1 ~ /^[0-9]/ && $NF == p { print $1 }'
}
clone_in_jail c1
grep -qF "undid the rest (remote.origin.url)" "$T/c1.err" && grep -qF -- "--as PATH" "$T/c1.err" &&
	pass "the guard says it dropped remote.origin.url, and how to restore it either way" || { fail "the guard says it dropped remote.origin.url, and how to restore it either way"; diag "$(cat "$T/c1.err")"; }
! git -C "$W3/c1" fetch -q 2>/dev/null && pass "so git fetch fails outside (what restoring is for)" || fail "so git fetch fails outside (what restoring is for)"
id=$(item_of c1)
"$STOCKADE" quarantine >"$T/list2" 2>&1
[ -n "$id" ] && grep -A1 "^$id " "$T/list2" | grep -qx '    dropped: remote.origin.url' &&
	pass "stockade quarantine lists it with the setting dropped" || { fail "stockade quarantine lists it with the setting dropped"; diag "$(cat "$T/list2")"; }
git -C "$W3/c1" config user.name outside-since
git -C "$W3/src" commit -q --allow-empty -m two
out=$("$STOCKADE" quarantine restore "$id" 2>&1)
st=$?
[ $st -eq 0 ] && printf '%s\n' "$out" | grep -qF "remote.origin.url = '$W3/src' (was: (none))" &&
	pass "stockade quarantine restore $id puts remote.origin.url back into the config, and says so" ||
	{ fail "stockade quarantine restore $id puts remote.origin.url back into the config, and says so (status $st)"; diag "$out"; }
[ "$(git -C "$W3/c1" config --get remote.origin.url)" = "$W3/src" ] && [ "$(git -C "$W3/c1" config --get user.name)" = outside-since ] &&
	pass "the config as it is now keeps what changed since, with the setting back" ||
	{ fail "the config as it is now keeps what changed since, with the setting back"; diag "$(cat "$W3/c1/.git/config")"; }
git -C "$W3/c1" fetch -q 2>"$T/fetch.err" && [ "$(git -C "$W3/c1" log -1 --format=%s origin/HEAD 2>/dev/null || git -C "$W3/c1" log -1 --format=%s FETCH_HEAD)" = two ] &&
	pass "git fetch works outside, and brings the new commit" || { fail "git fetch works outside, and brings the new commit"; diag "$(cat "$T/fetch.err")"; }
[ -z "$(item_of c1)" ] && pass "the item is gone from the quarantine" || fail "the item is gone from the quarantine"
out=$("$STOCKADE" quarantine restore "$id" 2>&1)
[ $? -eq 125 ] && printf '%s\n' "$out" | grep -q "no such item" && pass "restoring it again: no such item, 125" ||
	{ fail "restoring it again: no such item, 125"; diag "$out"; }

# The other choice: the whole config as the run left it, at PATH.
clone_in_jail c2
id=$(item_of c2)
sum=$(sha256sum <"$W3/c2/.git/config")
out=$("$STOCKADE" quarantine restore "$id" --as "$T/c2-config" 2>&1)
st=$?
[ $st -eq 0 ] && grep -qF "url = $W3/src" "$T/c2-config" && [ "$(sha256sum <"$W3/c2/.git/config")" = "$sum" ] && [ -z "$(item_of c2)" ] &&
	pass "restore $id --as PATH: the whole config at PATH, the repository's untouched, the item gone" ||
	{ fail "restore $id --as PATH: the whole config at PATH, the repository's untouched, the item gone (status $st)"; diag "$out"; }
clone_in_jail c3
id=$(item_of c3)
out=$("$STOCKADE" quarantine restore "$id" --as "$T/c2-config" 2>&1)
[ $? -eq 125 ] && printf '%s\n' "$out" | grep -qF "'$T/c2-config' is there now" && pass "--as onto a file that is there: refused, 125, nothing replaced" ||
	{ fail "--as onto a file that is there: refused, 125, nothing replaced"; diag "$out"; }
out=$("$STOCKADE" quarantine restore "$id" --as "$T/no/such/dir/config" 2>&1)
[ $? -eq 125 ] && printf '%s\n' "$out" | grep -qF "its folder does not exist" && pass "--as into a folder that does not exist: 125, said" ||
	{ fail "--as into a folder that does not exist: 125, said"; diag "$out"; }
out=$("$STOCKADE" quarantine list --as "$T/x" 2>&1)
[ $? -eq 125 ] && printf '%s\n' "$out" | grep -qF -- "--as goes with 'stockade quarantine restore ID'" && pass "--as with list: 125, said" ||
	{ fail "--as with list: 125, said"; diag "$out"; }

# A hand-off that is set aside whole, with something at its path now: the
# hint's --as PATH puts it elsewhere. (A repository the run makes: the
# namespace jail binds an existing one's hooks read-only.)
(cd "$W3" && in_jail -C "$W3" -- sh -c 'git init -q c4 && printf "#!/bin/sh\necho planted\n" > c4/.git/hooks/post-merge') >/dev/null 2>&1
hid=$("$STOCKADE" quarantine 2>/dev/null | awk -v p="$W3/c4/.git/hooks/post-merge" '$1 ~ /^[0-9]/ && $NF == p { print $1 }')
echo mine >"$W3/c4/.git/hooks/post-merge"
out=$("$STOCKADE" quarantine restore "$hid" 2>&1)
st=$?
hint=$(printf '%s\n' "$out" | sed -n 's/^hint: .*\(stockade quarantine restore [^ ]* --as PATH\).*/\1/p')
[ -n "$hid" ] && [ $st -eq 125 ] && [ -n "$hint" ] && pass "a hook whose path is taken now: refused, 125, the hint names --as PATH" ||
	{ fail "a hook whose path is taken now: refused, 125, the hint names --as PATH (status $st)"; diag "$out"; }
hint_cmd=${hint/PATH/$T/post-merge.planted}
out=$("$STOCKADE" ${hint_cmd#stockade } 2>&1)
st=$?
[ $st -eq 0 ] && grep -q planted "$T/post-merge.planted" && [ "$(cat "$W3/c4/.git/hooks/post-merge")" = mine ] &&
	pass "the hint applied puts it at PATH, the user's own left as it is" || { fail "the hint applied puts it at PATH, the user's own left as it is (status $st)"; diag "$out"; }

plan_done
