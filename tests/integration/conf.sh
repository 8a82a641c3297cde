# stockade.ini as a user meets it: a profile hides what it says; a
# [command] section gives its command what it says and nothing to another;
# a planted program matches nothing; what an untrusted workspace file
# widens is refused and named until `stockade trust`, and again once the
# file is edited; the jail cannot change the file in effect; the user's own
# file applies without trust; hide-ignored hides what git ignores.
. tests/lib.sh

new_places
export XDG_STATE_HOME="$T/state"
mkdir -p "$T/outside" "$W/sub"
echo outside >"$T/outside/f"
echo secret >"$W/secret.txt"
echo open >"$W/sub/open.txt"


in_jail() {
	jail --net off -C "$W" "$@"
}

# ---------------------------------------------------------------- profiles
cat >"$W/stockade.ini" <<EOF
[sandbox]
hide = .env

[profile test]
hide = secret.txt
EOF
expect_control "without the profile, secret.txt is readable" -- in_jail -- "$PROBE" read "$W/secret.txt"
expect_probe "--profile test hides secret.txt" "errno $(covered_errno)" -- in_jail -p test -- "$PROBE" read "$W/secret.txt"
expect_control "and nothing else" -- in_jail -p test -- "$PROBE" read "$W/sub/open.txt"
out=$("$STOCKADE" explain -v --backend "$TEST_BACKEND" --net off -C "$W" -p test -- true 2>&1)
case $out in *"hide     $W/secret.txt  ($W/stockade.ini line 5 (hide))"*) pass "explain names the rule's file and line" ;;
*) fail "explain names the rule's file and line"; diag "$out" ;; esac
case $out in *"$W/stockade.ini  (the workspace's; not trusted"*"[profile test] line 4: taken (--profile)"*)
	pass "explain says the file is not trusted and the profile was taken" ;;
*) fail "explain says the file is not trusted and the profile was taken"; diag "$out" ;; esac
fails "a profile the file does not have" "no \[profile lint\] in $W/stockade.ini; the profiles are: test" -- in_jail -p lint -- true

# ------------------------------------------------------------ bad files
cat >"$W/stockade.ini" <<'EOF'
[sandbox]
netwrok = on
EOF
fails "an unknown key: file, line, key and what is allowed" "$W/stockade.ini line 2: netwrok: unknown key: the keys are network, allow, read" -- in_jail -- true
printf '[sandbox]\nhide = \xff\n' >"$W/stockade.ini"
fails "a file that is not UTF-8" "$W/stockade.ini line 2: the line is not UTF-8" -- in_jail -- true
printf '[sandbox]\nhide = a\000b\n' >"$W/stockade.ini"
fails "a NUL byte: named as one, at its line" "$W/stockade.ini line 2: the line holds a NUL byte" -- in_jail -- true
# A byte order mark, as editors write one first: the file applies, and
# its lines keep their numbers.
printf '\357\273\277[sandbox]\nhide = secret.txt\n' >"$W/stockade.ini"
expect_probe "a file starting with a UTF-8 byte order mark applies" "errno $(covered_errno)" -- in_jail -- "$PROBE" read "$W/secret.txt"
printf '\357\273\277[sandbox]\nnetwrok = on\n' >"$W/stockade.ini"
fails "and its errors keep their lines" "$W/stockade.ini line 2: netwrok: unknown key" -- in_jail -- true
printf '[sandbox]\nread = nowhere\n' >"$W/stockade.ini"
fails "a read target that does not exist" "cannot read 'nowhere' in $W/stockade.ini line 2 \(read\)" -- in_jail -- true
printf '[sandbox]\nread = $HOME/nowhere\n' >"$W/stockade.ini"
fails "a path with a variable: no variable is expanded, and the hint says so" \
	"^hint: stockade expands no variable in a path" -- in_jail -- true
# The example kept in conf/examples: its error, exactly.
cp conf/examples/invalid.ini "$W/stockade.ini"
fails "conf/examples/invalid.ini is refused as its comment says" "$(sed -n 's/^; error: //p' conf/examples/invalid.ini)" -- in_jail -- true

# A file over 1 MiB is refused whole, never read cut short at 1 MiB (its
# keys past that once dropped without a word): the workspace's, the
# user's own, --config's, and stockade trust's.
big_ini() {
	printf '[sandbox]\n'
	yes '# a comment line that pads the file out past the most stockade reads' | head -n 16000
	printf 'hide = secret.txt\nnetwrok = on\n'
}
big_ini >"$W/stockade.ini"
toobig="$W/stockade.ini: cannot read it: larger than 1 MiB \(1048576 bytes\)"
fails "a workspace file over 1 MiB: the file and the limit" "$toobig" -- in_jail -- true
fails "stockade trust of it" "$toobig" -- "$STOCKADE" trust -C "$W"
fails "--config naming it" "$toobig" -- jail --net off -C "$T" --config "$W/stockade.ini" -- true
mkdir -p "$HOME/.config/stockade"
mv "$W/stockade.ini" "$HOME/.config/stockade/stockade.ini"
fails "the user's own file over 1 MiB" "$HOME/.config/stockade/stockade.ini: cannot read it: larger than 1 MiB" -- in_jail -- true
rm -f "$HOME/.config/stockade/stockade.ini"

# ------------------------------------------------------- trust, widening
cat >"$W/stockade.ini" <<EOF
[sandbox]
hide = secret.txt
read = $T/outside
EOF
fails "an untrusted read outside the workspace is refused, named by line and key" \
	"$W/stockade.ini line 3: read: '$T/outside' widens the jail \(before it: none\), and the file is not trusted" -- in_jail -- true
out=$(in_jail -- true 2>&1)
case $out in *"stockade trust '$W/stockade.ini'"*) pass "the refusal says how to trust it" ;; *) fail "the refusal says how to trust it"; diag "$out" ;; esac
out=$("$STOCKADE" trust -C "$W" 2>&1)
st=$?
[ $st -eq 0 ] && pass "stockade trust" || { fail "stockade trust (status $st)"; diag "$out"; }
expect_control "after stockade trust, the read outside works" -- in_jail -- "$PROBE" read "$T/outside/f"
expect_control "and with the workspace named relatively (-C ws)" -- sh -c 'cd "$1" && shift && "$@"' sh "$T" \
	"${JAIL[@]}" --net off -C ws -- "$PROBE" read "$T/outside/f"
expect_probe "and the file's narrowing holds" "errno $(covered_errno)" -- in_jail -- "$PROBE" read "$W/secret.txt"
out=$("$STOCKADE" trust --list 2>&1)
case $out in "trusted  $W/stockade.ini  sha256:"*) pass "trust --list names it" ;; *) fail "trust --list names it"; diag "$out" ;; esac
echo "; an edit" >>"$W/stockade.ini"
fails "an edited file is refused again" "line 3: read: .* not trusted" -- in_jail -- true
out=$("$STOCKADE" trust --list 2>&1)
case $out in "changed  $W/stockade.ini"*) pass "trust --list says it changed" ;; *) fail "trust --list says it changed"; diag "$out" ;; esac
"$STOCKADE" trust "$W/stockade.ini" 2>/dev/null
expect_control "trusted again" -- in_jail -- "$PROBE" read "$T/outside/f"
"$STOCKADE" trust --revoke "$W/stockade.ini" 2>/dev/null
fails "after --revoke, refused again" "line 3: read: .* not trusted" -- in_jail -- true
cat >"$W/stockade.ini" <<'EOF'
[sandbox]
network = on
mode = off
EOF
out=$(in_jail -- true 2>&1)
st=$?
if [ $st -eq 125 ] && [[ $out == *"line 2: network: 'on' widens the jail (before it: loopback)"* ]] &&
	[[ $out == *"line 3: mode: 'off' widens the jail (before it: auto)"* ]]; then
	pass "each widening key is named with its line"
else
	fail "each widening key is named with its line (status $st)"
	diag "$out"
fi

# ------------------------------------------ the jail cannot change the file
cat >"$W/stockade.ini" <<'EOF'
[sandbox]
hide = secret.txt
EOF
sum=$(sha256sum <"$W/stockade.ini")
want="ok"
[ "$TEST_BACKEND" = namespaces ] && want="errno EROFS"
expect_probe "appending to the stockade.ini in effect" "$want" -- in_jail -- "$PROBE" append "$W/stockade.ini"
[ "$(sha256sum <"$W/stockade.ini")" = "$sum" ] && pass "the stockade.ini in effect is as it was after the run" ||
	fail "the stockade.ini in effect is as it was after the run"
rm -f "$W/stockade.ini"
out=$(in_jail -- sh -c 'printf "[sandbox]\nnetwork = on\n" >.stockade.ini' 2>&1)
[ ! -e "$W/.stockade.ini" ] && pass "a .stockade.ini the jail makes does not outlive the run" ||
	{ fail "a .stockade.ini the jail makes does not outlive the run"; diag "$out"; }
mkdir -p "$W/conf"
printf '[sandbox]\nhide = secret.txt\n' >"$W/conf/dev.ini"
sum=$(sha256sum <"$W/conf/dev.ini")
expect_probe "a --config file in the workspace: appending to it" "$want" -- in_jail --config "$W/conf/dev.ini" -- "$PROBE" append "$W/conf/dev.ini"
[ "$(sha256sum <"$W/conf/dev.ini")" = "$sum" ] && pass "the --config file is as it was after the run" ||
	fail "the --config file is as it was after the run"
mkdir -p "$T/writable"
printf '[sandbox]\nhide = secret.txt\n' >"$T/writable/x.ini"
fails "a --config file in another writable tree is refused" "settings file '$T/writable/x.ini' would be writable" -- \
	in_jail --write "$T/writable" --config "$T/writable/x.ini" -- true

# ------------------------------------------- the user's file, [command]
mkdir -p "$HOME/.config/stockade"
cat >"$HOME/.config/stockade/stockade.ini" <<EOF
[command "$PROBE read"]
read = $T/outside
EOF
expect_control "the user's own [command] section applies without trust" -- in_jail -- "$PROBE" read "$T/outside/f"
expect_probe "and gives nothing to another command" "errno $(hidden_errno)" -- in_jail -- "$PROBE" ls "$T/outside"
out=$("$STOCKADE" explain --backend "$TEST_BACKEND" --net off -C "$W" -- "$PROBE" ls "$T/outside" 2>&1)
case $out in *"[command \"$PROBE read\"] $HOME/.config/stockade/stockade.ini line 1: does not match: word 2 is 'ls', not 'read'"*)
	pass "explain says why the section did not match" ;;
*) fail "explain says why the section did not match"; diag "$out" ;; esac
# A program planted in the workspace, found first on PATH, matches nothing.
cat >"$HOME/.config/stockade/stockade.ini" <<EOF
[command "probe"]
read = $T/outside
EOF
mkdir -p "$W/bin" "$T/tools"
cp "$PROBE" "$W/bin/probe"
cp "$PROBE" "$T/tools/probe"
PATH="$T/tools:$PATH" expect_control "a program outside writable trees matches by name" -- in_jail -- probe read "$T/outside/f"
PATH="$W/bin:$PATH" expect_probe "the same program planted in the workspace matches nothing" "errno $(hidden_errno)" -- \
	in_jail -- probe read "$T/outside/f"
out=$(PATH="$W/bin:$PATH" "$STOCKADE" explain --backend "$TEST_BACKEND" --net off -C "$W" -- probe read x 2>&1)
case $out in *"does not match: the program '$W/bin/probe' lies in '$W', which the run may write"*) pass "explain says it was planted-able" ;;
*) fail "explain says it was planted-able"; diag "$out" ;; esac
rm -f "$HOME/.config/stockade/stockade.ini"

# ------------------------------------------------------------ hide-ignored
G="$T/repo"
mkdir -p "$G/build" "$G/src"
git -C "$G" init -q
printf 'build/\n*.o\n' >"$G/.gitignore"
echo obj >"$G/src/x.o"
echo out >"$G/build/out"
echo code >"$G/src/x.c"
expect_probe "--hide-ignored hides an ignored file" "errno $(covered_errno)" -- jail --net off -C "$G" --hide-ignored -- "$PROBE" read "$G/src/x.o"
expect_probe "and an ignored folder's contents" "errno $(covered_errno)" -- jail --net off -C "$G" --hide-ignored -- "$PROBE" read "$G/build/out"
expect_control "and not what git tracks or would" -- jail --net off -C "$G" --hide-ignored -- "$PROBE" read "$G/src/x.c"
expect_control "without it, the ignored file is readable" -- jail --net off -C "$G" -- "$PROBE" read "$G/src/x.o"
printf '[profile test]\nhide-ignored = true\n' >"$G/stockade.ini"
expect_probe "hide-ignored = true in a profile" "errno $(covered_errno)" -- jail --net off -C "$G" -p test -- "$PROBE" read "$G/src/x.o"
# git is asked with hooks off and from /usr/bin, never from the PATH.
mkdir -p "$T/fakegit"
printf '#!/bin/sh\ntouch %s/fake-git-ran\nexec /usr/bin/git "$@"\n' "$T" >"$T/fakegit/git"
chmod +x "$T/fakegit/git"
PATH="$T/fakegit:$PATH" jail --net off -C "$G" --hide-ignored -- true 2>/dev/null
[ ! -e "$T/fake-git-ran" ] && pass "the git on the caller's PATH is not the one asked" || fail "the git on the caller's PATH is not the one asked"
git -C "$G" config core.fsmonitor "touch $T/fsmonitor-ran"
jail --net off -C "$G" --hide-ignored -- true 2>/dev/null
[ ! -e "$T/fsmonitor-ran" ] && pass "the repository's core.fsmonitor does not run" || fail "the repository's core.fsmonitor does not run"
# A toolchain's own trees stay: the one the command's program lies in (a
# virtualenv's python, a link to the system's), the PATH's, a virtualenv,
# node_modules, __pycache__, a folder marked with CACHEDIR.TAG. Each is
# one git ignores (the control: hide-ignored hid every one of them).
mkdir -p "$G/.venv/bin" "$G/env2" "$G/node_modules/tiny" "$G/src/__pycache__" "$G/target" "$G/tools/bin"
printf '.venv/
env2/
node_modules/
__pycache__/
target/
tools/
' >>"$G/.gitignore"
# a copy, as a virtualenv holds its tools (a link there, which a run may
# change, grants the command nothing where it leads)
cp "$PROBE" "$G/.venv/bin/probe"
echo 'home = /usr/bin' >"$G/env2/pyvenv.cfg"
echo 'module.exports = 1' >"$G/node_modules/tiny/index.js"
echo pyc >"$G/src/__pycache__/x.cpython-311.pyc"
echo 'Signature: 8a477f597d28d172789f06886806bc55' >"$G/target/CACHEDIR.TAG"
echo tool >"$G/tools/bin/tool"
n=0
for f in .venv env2 node_modules src/__pycache__ target tools; do
	git -C "$G" check-ignore -q "$f" && n=$((n + 1))
done
[ $n = 6 ] && pass "control: git ignores each of the toolchains' trees" || fail "control: git ignores each of the toolchains' trees ($n of 6)"
expect_probe "hide-ignored keeps the tree the command's program lies in (a virtualenv's bin/)" ok -- \
	jail --net off -C "$G" --hide-ignored -- "$G/.venv/bin/probe" read "$G/.venv/bin/probe"
for f in env2/pyvenv.cfg node_modules/tiny/index.js src/__pycache__/x.cpython-311.pyc target/CACHEDIR.TAG; do
	expect_probe "hide-ignored keeps ${f%%/*}/ (${f#*/})" ok -- jail --net off -C "$G" --hide-ignored -- "$PROBE" read "$G/$f"
done
expect_probe "hide-ignored keeps a folder the PATH holds" ok -- \
	env PATH="$G/tools/bin:$PATH" "${JAIL[@]}" --net off -C "$G" --hide-ignored -- "$PROBE" read "$G/tools/bin/tool"
expect_probe "and hides it otherwise" "errno $(covered_errno)" -- jail --net off -C "$G" --hide-ignored -- "$PROBE" read "$G/tools/bin/tool"
expect_probe "and still hides build/" "errno $(covered_errno)" -- jail --net off -C "$G" --hide-ignored -- "$PROBE" read "$G/build/out"
out=$(cd "$G" && jail --net off -C "$G" --hide-ignored -- "$G/.venv/bin/probe" cwd 2>&1)
printf '%s\n' "$out" | grep -q "^stockade: hide-ignored (--hide-ignored on the command line): hid 3 entries git ignores: .*build/" &&
	printf '%s\n' "$out" | grep -q "^stockade: hide-ignored: kept .*\.venv/ (the command runs from it).*node_modules/ (Node's packages)" &&
	pass "hide-ignored says what it hid and what it kept" || { fail "hide-ignored says what it hid and what it kept"; diag "$out"; }
out=$(jail --net off -C "$W" --hide-ignored -- true 2>&1)
case $out in *"is not a git working tree git will read: nothing hidden"*) pass "outside a git tree, hide-ignored says it hides nothing" ;;
*) fail "outside a git tree, hide-ignored says it hides nothing"; diag "$out" ;; esac

plan_done
