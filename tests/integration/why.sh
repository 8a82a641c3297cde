# stockade why: the rule that governs an access, where it comes from and
# how to allow it, agreeing with what the jail does. For each target the
# probe tries the access outside (it must work), inside (the outcome why
# names), and, with the change why proposes, inside again.
. tests/lib.sh

new_places
in_jail() {
	jail --net off -C "$W" "$@"
}
mkdir -p "$HOME/.ssh" "$W/src"
echo not-a-key >"$HOME/.ssh/id_rsa"
echo data >"$W/src/a.txt"
git -C "$W" init -q

# why_says DESC PATTERN -- WHY-ARGS...: the answer matches PATTERN.
why_says() {
	local desc=$1 pattern=$2 out
	shift 3
	out=$(cd "$W" && "$STOCKADE" why "$@" 2>&1)
	if printf '%s\n' "$out" | grep -q -E -- "$pattern"; then
		pass "$desc"
	else
		fail "$desc"
		diag "$out"
	fi
}

# A hidden credential: refused, the built-in rule named, --read proposed,
# and --read then works.
expect_control "outside: the key is readable" -- "$PROBE" read "$HOME/.ssh/id_rsa"
why_says "why: a credential is hidden by a built-in rule" "^read $HOME/.ssh/id_rsa: refused \(hidden\)" -- "$HOME/.ssh/id_rsa"
why_says "why: it names the rule and its source" "rule:  hide $HOME/.ssh \(default: credentials\)" -- "$HOME/.ssh/id_rsa"
why_says "why: it says how to allow it" "allow: --read $HOME/.ssh/id_rsa" -- "$HOME/.ssh/id_rsa"
expect_probe "the jail agrees: the key is refused" "errno $(hidden_errno)" -- in_jail -- "$PROBE" read "$HOME/.ssh/id_rsa"
expect_probe "with the change why proposes, it is read" ok -- in_jail --read "$HOME/.ssh/id_rsa" -- "$PROBE" read "$HOME/.ssh/id_rsa"
why_says "why with the option: allowed, from the command line" "^read $HOME/.ssh/id_rsa: allowed.*" -- --read "$HOME/.ssh/id_rsa" "$HOME/.ssh/id_rsa"

# The workspace: written.
why_says "why: a workspace file may be written, by the workspace rule" "^write $W/src/a.txt: allowed \(read-write\)" -- src/a.txt
expect_probe "the jail agrees: it is written" ok -- in_jail -- "$PROBE" write "$W/src/a.txt"

# A system file: read-only, --write proposed.
why_says "why: /etc/hostname is read-only by the system rule" "^write /etc/hostname: refused \(read-only\)" -- /etc/hostname
expect_probe "the jail agrees: /etc/hostname cannot be written" "errno $(readonly_errno)" -- in_jail -- "$PROBE" write /etc/hostname

# A trust hand-off: why says the guard keeps it and nothing in the jail
# allows it.
why_says "why: .git/config is a trust hand-off, with no option to allow it" "^write $W/.git/config: refused \(a trust hand-off" -- .git/config
why_says "why: and says what each backend does" "none from inside the jail" -- .git/config

# Nothing grants it: out of reach.
# Outside /tmp, which the namespace jail has of its own.
ELSEWHERE=$(mktemp -d /var/tmp/stockade-why.XXXXXX)
at_exit rm -rf "$ELSEWHERE"
echo x >"$ELSEWHERE/f"
expect_control "outside: a file elsewhere is readable" -- "$PROBE" read "$ELSEWHERE/f"
why_says "why: a file no rule names is out of reach" "^read $ELSEWHERE/f: refused \(out of reach\)" -- "$ELSEWHERE/f"
expect_probe "the jail agrees" "errno $(hidden_errno)" -- in_jail -- "$PROBE" read "$ELSEWHERE/f"
expect_probe "with --read from why's answer, it is read" ok -- in_jail --read "$ELSEWHERE" -- "$PROBE" read "$ELSEWHERE/f"

# The network: the remote host of the tests.
why_says "why: the remote host is refused with --net off" "^connect to 10.203.0.2:7: refused \(no network\)" -- --net off 10.203.0.2:7
why_says "why: and names --net on" "allow: --net on" -- --net off 10.203.0.2:7
why_says "why: the network mode's source is named" "from:  --net on the command line" -- --net off 10.203.0.2:7
why_says "why: --net on allows it" "^connect to 10.203.0.2:7: allowed" -- --net on 10.203.0.2:7
# A host name with no port, where no such path is: the path's answer,
# and a hint with the question for the host, which is answered.
why_says "why: a bare host name where no such path is gets the hint with :443" \
	"^hint: no such path: for the host, ask why registry.npmjs.org:443 in its place" -- --allow @npm Registry.NPMjs.org
why_says "why: and the hinted question is answered, with its list" "rule:  allow registry.npmjs.org \(from @npm\)" -- \
	--allow @npm registry.npmjs.org:443
mkdir -p "$W/docs.example"
out=$(cd "$W" && "$STOCKADE" why docs.example 2>&1)
case $out in
*"for the host"*) fail "why: a path that is there gets no host hint"; diag "$out" ;;
*) pass "why: a path that is there gets no host hint" ;;
esac
REMOTE_COUNT=${STOCKADE_REMOTE_COUNT:-/tmp/stockade-remote.count}
if [ -s "$REMOTE_COUNT" ] && "$PROBE" connect-tcp 10.203.0.2 7 >/dev/null 2>&1; then
	pass "outside: the remote host answers"
	expect_probe "the jail agrees: refused with --net off" "errno EAFNOSUPPORT" -- \
		in_jail --net off -- "$PROBE" connect-tcp 10.203.0.2 7
	expect_probe "and reached with --net on, as why says" ok -- in_jail --net on -- "$PROBE" connect-tcp 10.203.0.2 7
else
	skip "no remote host here (tests/remote-host.sh up, as root, makes it)"
fi

# Inside a run: the same question answered from the run's own policy
# (the read-only file STOCKADE_POLICY names), agreeing with the answer
# outside and with what the jail does.
BIN_DIR=$(dirname "$STOCKADE")
# verdicts ARGS...: each target's "read/write/connect X: allowed|refused"
# lines, as the answer gives them.
verdicts() {
	grep -E '^(read|write|connect to) .*: (allowed|refused)' | sed 's/ (.*//'
}
inside_why() {
	(cd "$W" && in_jail --read "$BIN_DIR" "$@" 2>&1)
}
targets=("$HOME/.ssh/id_rsa" "$W/src/a.txt" /etc/hostname "$ELSEWHERE/f" 127.0.0.1:5432)
out=$(inside_why -- sh -c 'for t; do "$0" why "$t"; done' "$STOCKADE" "${targets[@]}")
if printf '%s\n' "$out" | grep -q "^inside a run ($TEST_BACKEND backend): answered from the run's own policy"; then
	pass "inside a run: why says it answers from the run's own policy"
else
	fail "inside a run: why says it answers from the run's own policy"
	diag "$out"
fi
inside=$(printf '%s\n' "$out" | verdicts)
outside=$(cd "$W" && for t in "${targets[@]}"; do "$STOCKADE" why --backend "$TEST_BACKEND" --net off "$t"; done 2>&1 | verdicts)
if [ -n "$inside" ] && [ "$inside" = "$outside" ] && [ "$(printf '%s\n' "$inside" | wc -l)" -eq 9 ]; then
	pass "inside and outside a run, why gives the same verdicts (9 of them)"
else
	fail "inside and outside a run, why gives the same verdicts (9 of them)"
	diag "inside: $inside"
	diag "outside: $outside"
fi
case $out in
*"read $HOME/.ssh/id_rsa: refused (hidden)"*"rule:  hide $HOME/.ssh (default: credentials)"*) pass "inside: the credential's rule and its source are named" ;;
*) fail "inside: the credential's rule and its source are named"; diag "$out" ;;
esac
expect_probe "and the jail agrees: the key is refused" "errno $(hidden_errno)" -- in_jail -- "$PROBE" read "$HOME/.ssh/id_rsa"
out=$(inside_why --read "$HOME/.ssh/id_rsa" -- "$STOCKADE" why "$HOME/.ssh/id_rsa")
case $out in
*"read $HOME/.ssh/id_rsa: allowed"*"from:  --read on the command line"*) pass "inside a run given --read: allowed, and the option named as its source" ;;
*) fail "inside a run given --read: allowed, and the option named as its source"; diag "$out" ;;
esac
out=$(inside_why -- sh -c '"$0" why "$TMPDIR/new" && "$1" write "$TMPDIR/new"' "$STOCKADE" "$PROBE")
case $out in
*"write "*"/new: allowed (read-write: the run's own place"*"probe: started"*"probe: ok"*) pass "inside: the run's own tmp is its own, and the probe writes it" ;;
*) fail "inside: the run's own tmp is its own, and the probe writes it"; diag "$out" ;;
esac
out=$(inside_why -- sh -c 'echo forged >"$STOCKADE_POLICY"; echo "exit $?"' 2>&1)
case $out in
*"exit 0"*) fail "the run's policy file cannot be changed by the command"; diag "$out" ;;
*"exit "[1-9]*) pass "the run's policy file cannot be changed by the command" ;;
*) fail "the run's policy file cannot be changed by the command"; diag "$out" ;;
esac
echo 'not a policy' >"$T/forged"
out=$(STOCKADE_POLICY="$T/forged" "$STOCKADE" why /etc/hostname 2>&1)
st=$?
[ $st -eq 125 ] && case $out in *"cannot read the run's policy '$T/forged'"*"line 1"*) true ;; *) false ;; esac &&
	pass "a file that is not a run's policy: 125, naming the file and line" ||
	{ fail "a file that is not a run's policy: 125, naming the file and line"; diag "$st $out"; }
out=$(STOCKADE_POLICY="$T/missing" "$STOCKADE" why /etc/hostname 2>&1)
[ $? -eq 125 ] && case $out in *"$T/missing"*"No such file"*) true ;; *) false ;; esac &&
	pass "a missing run's policy: 125, naming the file" || { fail "a missing run's policy: 125, naming the file"; diag "$out"; }

# Bad input: a control character, and no target.
out=$("$STOCKADE" why "$(printf 'a\tb')" 2>&1)
[ $? -eq 125 ] && pass "a target with a control character: 125" || fail "a target with a control character: 125"
out=$("$STOCKADE" why 2>&1)
[ $? -eq 125 ] && case $out in *"usage: stockade why"*) true ;; *) false ;; esac && pass "no target: 125, with the usage" ||
	{ fail "no target: 125, with the usage"; diag "$out"; }
plan_done
