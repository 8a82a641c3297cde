# A program reached through a symlink runs by the name the user gave:
# the path found on PATH (its links kept) is what is exec'd and argv[0]
# is the word as written, as a shell does, on both backends, after the
# policy granted what the link leads to. Multi-call programs decide what
# to be from that name (busybox, Debian's pg_wrapper behind psql, git's
# dashed forms, update-alternatives' links).
#
# The control: outside the jail the same program answers the same; on a
# stockade that execs the link's target instead (main before this), the
# script names its target and psql's wrapper fails ("Can't exec
# "--version"").
. tests/lib.sh

new_places
# The link in a PATH folder under the home (granted as that folder
# alone), the program it leads to in a folder nothing else grants.
mkdir -p "$HOME/bin" "$T/libexec"
cat >"$T/libexec/multi" <<'EOF'
#!/bin/sh
# A multi-call program: what it is called by decides what it does.
case ${0##*/} in
greet) echo "greet: hello (called as $0)" ;;
*) echo "multi: called as $0, which is no command of mine" >&2; exit 3 ;;
esac
EOF
chmod 755 "$T/libexec/multi"
echo "not granted" >"$T/libexec/other"
ln -s ../../libexec/multi "$HOME/bin/greet"
export PATH="$HOME/bin:$PATH"

out=$(cd "$W" && greet 2>&1)
[ "$out" = "greet: hello (called as $HOME/bin/greet)" ] && pass "outside: the program answers by the name it was called by" ||
	{ fail "outside: the program answers by the name it was called by"; diag "$out"; }
out=$(cd "$W" && jail -- greet 2>&1)
st=$?
if [ $st -eq 0 ] && [ "$(printf '%s\n' "$out" | grep -v '^stockade: ')" = "greet: hello (called as $HOME/bin/greet)" ]; then
	pass "in the jail: exec'd by the path found on PATH, not the link's target"
else
	fail "in the jail: exec'd by the path found on PATH, not the link's target (status $st)"
	diag "$out"
fi
# argv[0] as the user wrote it: the shell's $0 is the path, so ask the
# probe, which says what it was called by.
ln -s "$PROBE" "$HOME/bin/probe-link"
out=$(cd "$W" && jail -- probe-link argv0 2>&1)
case $out in *"probe: started"*"probe: argv0 probe-link"*) pass "argv[0] is the word as written" ;;
*) fail "argv[0] is the word as written"; diag "$out" ;; esac
# The policy check of where it leads: the target is granted, and only it.
expect_control "outside: the folder's other file is readable" -- "$PROBE" read "$T/libexec/other"
expect_probe "the grant is the program alone, not its folder" "errno $(hidden_errno)" -- \
	sh -c 'cd "$1" && shift && "$@"' sh "$W" "${JAIL[@]}" -- "$PROBE" read "$T/libexec/other"
# A link whose folder the jail does not have (here: a folder in the
# host's /tmp, which the namespace jail has of its own) still runs, by
# the target the policy granted.
mkdir -p "$T/elsewhere"
ln -s ../libexec/multi "$T/elsewhere/greet"
out=$(cd "$W" && jail -- "$T/elsewhere/greet" 2>&1)
st=$?
case $TEST_BACKEND in
namespaces) want="multi: called as $T/libexec/multi, which is no command of mine" want_st=3 ;;
*) want="greet: hello (called as $T/elsewhere/greet)" want_st=0 ;;
esac
if [ $st -eq $want_st ] && printf '%s\n' "$out" | grep -qxF -- "$want"; then
	pass "a link the jail cannot reach runs by its granted target ($TEST_BACKEND: $want_st)"
else
	fail "a link the jail cannot reach runs by its granted target (status $st, want $want_st)"
	diag "$out"
fi

# Debian's psql: a link to pg_wrapper, which runs the client the name
# asks for.
if [ -L /usr/bin/psql ] && psql --version >/dev/null 2>&1; then
	want=$(psql --version)
	out=$(cd "$W" && jail -- psql --version 2>&1)
	st=$?
	if [ $st -eq 0 ] && printf '%s\n' "$out" | grep -qxF -- "$want"; then
		pass "psql --version through stockade: $want"
	else
		fail "psql --version through stockade (status $st)"
		diag "$out"
	fi
else
	skip "no psql here that is a link (postgresql-client on Debian)"
fi
plan_done
