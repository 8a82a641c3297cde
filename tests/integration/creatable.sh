# A hide inside a folder the command may write leaves that folder
# creatable, on both backends: `sed -i` beside a hidden .env (its
# temporary file, then a rename over the file), an editor's swap file,
# a new folder and what goes in it, a rename and a removal; the hidden
# file stays unreadable (the probe's errno), cannot be removed, renamed,
# linked or replaced, and `stockade why` says what the kernel does. On
# the landlock backend the supervisor makes what is new there (Landlock
# carves the folder): every open is shown to it, and a touch of the
# hidden file is named with its rule.
#
# The control, on main before this: on the landlock backend `sed -i`
# fails ("couldn't open temporary file") and a new file is EACCES, while
# why said the write was allowed.
. tests/lib.sh

new_places
in_jail() {
	(cd "$W" && jail --hide .env "$@")
}
echo "API_KEY=not-a-real-key" >"$W/.env"
echo "hello" >"$W/notes.txt"

# sed -i beside the hidden file
out=$(cd "$W" && sed -i.orig 's/hello/hello outside/' notes.txt 2>&1 && cat notes.txt)
[ "$out" = "hello outside" ] && pass "outside: sed -i works" || { fail "outside: sed -i works"; diag "$out"; }
echo "hello" >"$W/notes.txt"
rm -f "$W/notes.txt.orig"
out=$(in_jail -- sh -c 'sed -i "s/hello/bye/" notes.txt && cat notes.txt' 2>&1)
st=$?
if [ $st -eq 0 ] && [ "$(printf '%s\n' "$out" | grep -v '^stockade: ')" = "bye" ]; then
	pass "in the jail: sed -i beside a hidden .env works, and the file reads back"
else
	fail "in the jail: sed -i beside a hidden .env works (status $st)"
	diag "$out"
fi
[ "$(cat "$W/notes.txt")" = "bye" ] && pass "the change is in the workspace" || fail "the change is in the workspace"
expect_probe "the file sed replaced is still written in a second run" ok -- in_jail -- "$PROBE" append "$W/notes.txt"
expect_control "outside: the hidden file is readable" -- "$PROBE" read "$W/.env"
expect_probe "the hidden file stays unreadable" "errno $(covered_errno)" -- in_jail -- "$PROBE" read "$W/.env"

# why agrees with the kernel
out=$(cd "$W" && "$STOCKADE" why --backend "$TEST_BACKEND" --hide .env ./newfile 2>&1)
case $out in *"write $W/newfile: allowed (read-write)"*) pass "why: a new file beside the hidden one may be written" ;;
*) fail "why: a new file beside the hidden one may be written"; diag "$out" ;; esac
expect_probe "and the jail agrees: it is made" ok -- in_jail -- "$PROBE" write "$W/newfile"
out=$(cd "$W" && "$STOCKADE" why --backend "$TEST_BACKEND" --hide .env .env 2>&1)
case $out in *"read $W/.env: refused (hidden)"*"write $W/.env: refused (hidden)"*) pass "why: the hidden file is refused" ;;
*) fail "why: the hidden file is refused"; diag "$out" ;; esac

# an editor: a swap file made exclusively, written, read back, removed
expect_probe "a swap file is made (O_CREAT | O_EXCL)" ok -- in_jail -- "$PROBE" create-excl "$W/.notes.txt.swp"
expect_probe "and read back in another run" ok -- in_jail -- "$PROBE" read "$W/.notes.txt.swp"
expect_probe "and removed" ok -- in_jail -- "$PROBE" unlink "$W/.notes.txt.swp"
[ ! -e "$W/.notes.txt.swp" ] && pass "it is gone from the workspace" || fail "it is gone from the workspace"
# a folder and what goes in it; a rename; a removal
out=$(in_jail -- sh -c 'mkdir -p build/obj && echo x >build/obj/a.o && mv build/obj/a.o build/b.o && cat build/b.o && mv build out && rm -r out && echo done' 2>&1)
case $out in *done*) pass "a new folder, a file in it, renames and removals" ;;
*) fail "a new folder, a file in it, renames and removals"; diag "$out" ;; esac
[ ! -e "$W/out" ] && [ ! -e "$W/build" ] && pass "nothing of it is left" || fail "nothing of it is left"

# the hidden file cannot be removed, renamed, linked or replaced
expect_probe "the hidden file cannot be removed" "errno $([ "$TEST_BACKEND" = landlock ] && echo EACCES || echo EBUSY)" -- \
	in_jail -- "$PROBE" unlink "$W/.env"
expect_probe "nor renamed" "errno $([ "$TEST_BACKEND" = landlock ] && echo EACCES || echo EBUSY)" -- \
	in_jail -- "$PROBE" rename "$W/.env" "$W/env.txt"
expect_probe "nor replaced by a rename over it" "errno $([ "$TEST_BACKEND" = landlock ] && echo EACCES || echo EBUSY)" -- \
	in_jail --read "$PROBE" -- sh -c 'echo planted >"$1/planted" && exec "$2" rename "$1/planted" "$1/.env"' sh "$W" "$PROBE"
expect_probe "nor linked to another name" "errno $([ "$TEST_BACKEND" = landlock ] && echo EACCES || echo EXDEV)" -- \
	in_jail -- "$PROBE" link "$W/.env" "$W/env-link"
rm -f "$W/planted"
[ "$(cat "$W/.env")" = "API_KEY=not-a-real-key" ] && [ ! -e "$W/env.txt" ] && [ ! -e "$W/env-link" ] &&
	pass "the hidden file is as it was" || fail "the hidden file is as it was"

# a hidden file touched is named, with its rule (the landlock backend,
# where the supervisor sees every open of such a run)
if [ "$TEST_BACKEND" = landlock ]; then
	in_jail --report "$T/r.json" -- "$PROBE" read "$W/.env" >/dev/null 2>"$T/r.err"
	if grep -q "refused: open $W/.env (EACCES); to allow: take away the hide it names (--hide on the command line)" "$T/r.err" &&
		python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); d=[d for d in r["denials"] if d["kind"]=="open"][0]; assert d["rule"].startswith("hide ") and d["source"]=="--hide on the command line"' "$T/r.json"; then
		pass "the hidden file touched is named, with its rule, on stderr and in the report"
	else
		fail "the hidden file touched is named, with its rule"
		diag "$(cat "$T/r.err")"
	fi
	# a program made there cannot be run, and the report says so
	out=$(in_jail --report "$T/e.json" -- true 2>&1)
	grep -q "programs made in such a folder" "$T/e.json" && pass "the report names what it leaves out: running a program made there" ||
		fail "the report names what it leaves out: running a program made there"
fi
plan_done
