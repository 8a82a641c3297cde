# The command line: doctor, explain, and bad input, each answered with a
# message that names what was wrong and exit 125, nothing changed.
. tests/lib.sh

new_places


# doctor: found by asking and by trying.
out=$("$STOCKADE" doctor 2>&1)
st=$?
[ $st -eq 0 ] && pass "doctor runs" || fail "doctor runs"
abi=$(python3 -c 'import ctypes,os; l=ctypes.CDLL(None,use_errno=True); print(l.syscall(444,None,0,1))')
case $out in *"landlock:               ABI $abi"*) pass "doctor names the Landlock ABI ($abi)" ;; *) fail "doctor names the Landlock ABI ($abi)"; diag "$out" ;; esac
for word in "user namespaces:" "seccomp notification:" "pidfd_getfd:" "cgroup:" "backend auto picks:"; do
	case $out in *"$word"*) pass "doctor says $word" ;; *) fail "doctor says $word" ;; esac
done
if python3 - <<'PY' "$("$STOCKADE" doctor --json)"; then
import json, sys
d = json.loads(sys.argv[1])
assert d["landlock"]["abi"] >= 1
assert isinstance(d["user_namespaces"]["work"], bool)
assert d["seccomp_user_notification"]["works"] is True
assert d["auto_backend"] in ("namespaces", "landlock")
PY
	pass "doctor --json is JSON with the same facts"
else
	fail "doctor --json is JSON with the same facts"
fi
# The user namespace answer is found by trying: refused under simkernel.
out=$("$SIMKERNEL" --no-userns=EPERM -- "$STOCKADE" doctor 2>&1)
case $out in *"user namespaces:        refused at unshare"*"EPERM"*) pass "doctor finds user namespaces refused by trying" ;;
*) fail "doctor finds user namespaces refused by trying"; diag "$out" ;; esac
out=$("$SIMKERNEL" --no-landlock=EOPNOTSUPP -- "$STOCKADE" doctor 2>&1)
case $out in *"landlock:               not enforced (EOPNOTSUPP)"*) pass "doctor says when Landlock is not enforced" ;;
*) fail "doctor says when Landlock is not enforced"; diag "$out" ;; esac

# explain: every rule with where it came from, the Landlock rules with
# their rights, the seccomp rules, the environment changes.
mkdir -p "$T/extra"
out=$(GITHUB_TOKEN=x "$STOCKADE" explain -v --backend "$TEST_BACKEND" --net off -C "$W" --read "$T/extra" -- true 2>&1)
st=$?
[ $st -eq 0 ] && pass "explain -v runs" || { fail "explain -v runs (status $st)"; diag "$out"; }
for want in "write    $W  (workspace)" "read     $T/extra  (--read on the command line)" "(default: system)" \
	"landlock abi" "handled fs:" "seccomp" "refuse EPERM" "environment changes:" "-GITHUB_TOKEN" "HOME=" "unenforced:"; do
	case $out in *"$want"*) pass "explain -v shows '$want'" ;; *) fail "explain -v shows '$want'" ;; esac
done
# Without -v: one screen, each kind of rule on a line with its source.
out=$("$STOCKADE" explain --backend "$TEST_BACKEND" --net off -C "$W" --read "$T/extra" -- make test 2>&1)
n=$(printf '%s\n' "$out" | wc -l)
[ "$n" -le 60 ] && pass "explain fits one screen ($n lines)" || { fail "explain fits one screen ($n lines)"; diag "$out"; }
for want in "write    workspace: $W" "read     --read on the command line: $T/extra" "explain -v prints every rule"; do
	case $out in *"$want"*) pass "explain's summary shows '$want'" ;; *) fail "explain's summary shows '$want'"; diag "$out" ;; esac
done
if "$STOCKADE" explain --json --backend "$TEST_BACKEND" --net off -C "$W" --read "$T/extra" -- true 2>/dev/null | python3 -c '
import json, sys
d = json.load(sys.stdin)
assert any(r["path"].endswith("/extra") and r["access"] == "read" and "--read" in r["source"] for r in d["rules"])
assert d["seccomp"] and d["network"] == "off" and "enforced" in d and "unenforced" in d
'; then
	pass "explain --json: every rule with its source, and the plans"
else
	fail "explain --json: every rule with its source, and the plans"
fi

# Bad input: exit 125, a message naming the thing, and nothing run.
fails "an unknown option" "unknown option '--bogus'" -- "$STOCKADE" --bogus -- true
fails "a bad --net" "invalid --net 'sideways'" -- "$STOCKADE" --net sideways -- true
fails "a bad --backend" "invalid --backend 'docker'" -- "$STOCKADE" --backend docker -- true
fails "no command" "no command given" -- "$STOCKADE"
fails "--json without doctor" "--json goes with" -- "$STOCKADE" --json -- true
fails "a --read target that does not exist" "cannot read '$T/missing' on the command line: No such file" -- \
	jail --net off -C "$W" --read "$T/missing" -- true
fails "a --write target that does not exist" "cannot write '$T/missing' on the command line" -- \
	jail --net off -C "$W" --write "$T/missing" -- true
fails "a path with a control character" "the path has a control character" -- \
	jail --net off -C "$W" --read "$(printf '%s/a\nb' "$T")" -- true
out=$(jail --net off -C "$W" --hide "$W/no-such-secret" -- true 2>&1)
[ $? -eq 0 ] && case $out in *"--hide '$W/no-such-secret' does not exist: skipped"*) true ;; *) false ;; esac &&
	pass "a --hide target that does not exist is skipped with a note" || { fail "a --hide target that does not exist is skipped with a note"; diag "$out"; }
fails "the home as the workspace" "refusing to use '$HOME' as the workspace: it is your home" -- jail --net off -C "$HOME" -- true
fails "/ as the workspace" "refusing to use '/' as the workspace" -- jail --net off -C / -- true
fails "an ancestor of the home as the workspace" "it is your home or holds it" -- jail --net off -C "$T" -- true
fails "a workspace that does not exist" "cannot use --workspace '$T/nope'" -- jail --net off -C "$T/nope" -- true
fails "--home set to the real home" "refusing --home" -- jail --net off -C "$W" --home "$HOME" -- true
# stockade's own files must not be writable from the jail.
mkdir -p "$HOME/.local/state"
fails "a workspace holding stockade's state" "state directory .* could be made or changed from the jail" -- \
	jail --net off -C "$HOME/.local" -- true
cp "$STOCKADE" "$W/stockade-copy"
fails "stockade inside the workspace" "stockade itself .* would be writable" -- "$W/stockade-copy" --backend "$TEST_BACKEND" --net off -C "$W" -- true
rm -f "$W/stockade-copy"
# The settings files' options, when there is nothing to read.
fails "trust without a file" "no stockade.ini or .stockade.ini in" -- "$STOCKADE" trust -C "$W"
fails "--config of a missing file" "x.ini: cannot read it: No such file" -- "$STOCKADE" --config "$W/x.ini" -- true
fails "--profile without a file" "cannot use --profile 'lint': no stockade.ini" -- "$STOCKADE" -C "$W" --profile lint -- true
fails "--list with a file" "usage: stockade trust" -- "$STOCKADE" trust --list x.ini
fails "--revoke elsewhere" "--revoke goes with 'stockade trust'" -- "$STOCKADE" --revoke x.ini -- true
fails "--backend seatbelt off macOS" "Seatbelt runs on macOS only" -- "$STOCKADE" --backend seatbelt -C "$W" -- true

# Help and version.
"$STOCKADE" --help | grep -q '^usage: stockade \[OPTION\]... \[--\] COMMAND \[ARG\]...' && pass "--help shows the synopsis" || fail "--help shows the synopsis"
"$STOCKADE" --version | grep -q '^stockade [0-9]' && pass "--version" || fail "--version"
# The command's own options are its own.
out=$(jail --net off -C "$W" -- sh -c 'echo "$@"' sh --net on -C / 2>/dev/null)
[ "$out" = "--net on -C /" ] && pass "options after the command are the command's" || fail "options after the command are the command's"

# make install's AppArmor profile: put in place where AppArmor restricts
# user namespaces (the sysctl given as a file here), naming the installed
# binary; not where it does not; removed by uninstall. doctor says.
aa="$PWD/tools/apparmor/install.sh"
echo 1 >"$T/restrict-on"; echo 0 >"$T/restrict-off"
RESTRICT="$T/restrict-on" "$aa" install /opt/st/bin "$T/dest" >/dev/null
prof="$T/dest/etc/apparmor.d/stockade"
if grep -q '^profile stockade /opt/st/bin/stockade flags=(unconfined) {' "$prof" 2>/dev/null && grep -q '^  userns,' "$prof"; then
	pass "make install: the AppArmor profile names the installed binary and allows it user namespaces"
else
	fail "make install: the AppArmor profile"; diag "$(cat "$prof" 2>&1)"
fi
RESTRICT="$T/restrict-on" "$aa" uninstall /opt/st/bin "$T/dest"
[ ! -e "$prof" ] && pass "make uninstall removes it" || fail "make uninstall removes it"
RESTRICT="$T/restrict-off" "$aa" install /opt/st/bin "$T/dest2" >/dev/null
[ ! -e "$T/dest2/etc/apparmor.d/stockade" ] && pass "no profile where AppArmor does not restrict user namespaces" ||
	fail "no profile where AppArmor does not restrict user namespaces"
grep -q 'tools/apparmor/install.sh install' Makefile && pass "make install runs it" || fail "make install runs it"
out=$("$STOCKADE" doctor)
case $out in *"apparmor userns:"*) pass "doctor says whether AppArmor restricts user namespaces and the profile is loaded" ;;
*) fail "doctor says whether AppArmor restricts user namespaces"; diag "$out" ;; esac


# A word of stockade's own (session, why, doctor...) after options is
# taken for the command's program: not found, the hint gives the line
# with the word first, and that line works.
out=$(cd "$W" && "${JAIL[@]}" -q session list 2>&1)
st=$?
hint=$(printf '%s\n' "$out" | sed -n "s/^hint: 'session' is a command of stockade's own, which comes first, before its options: //p")
if [ $st -eq 127 ] && [ "$hint" = "stockade session list --backend $TEST_BACKEND -q" ]; then
	pass "options before 'session': the hint puts it first ($hint)"
else
	fail "options before 'session': the hint puts it first (status $st)"; diag "$out"
fi
out=$(cd "$W" && "$STOCKADE" ${hint#stockade } 2>&1)
st=$?
# (it lists the sessions: none may be running)
[ $st -eq 0 ] && ! printf '%s\n' "$out" | grep -q 'cannot run' && pass "the hint's line works" || { fail "the hint's line works (status $st)"; diag "$out"; }
out=$(cd "$W" && "${JAIL[@]}" -q -- no-such-program-stockade 2>&1)
case $out in *"cannot run 'no-such-program-stockade'"*"command of stockade's own"*) fail "no such hint for another program"; diag "$out" ;;
*"cannot run 'no-such-program-stockade'"*) pass "no such hint for another program" ;;
*) fail "no such hint for another program"; diag "$out" ;; esac

plan_done
