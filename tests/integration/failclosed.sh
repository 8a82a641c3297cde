# Fail closed: when the host cannot confine the command, stockade refuses
# (exit 125) and the command never runs. An older or restricted kernel is
# simulated by running stockade under simkernel, a seccomp filter that
# answers ENOSYS, EOPNOTSUPP or EPERM for what that kernel would refuse.
. tests/lib.sh

new_places

# never_ran DESC STATUS -- CMD...: CMD ends with STATUS, the probe never
# started, and the sentinel it would have written does not exist.
never_ran() {
	local desc=$1 want=$2 out st
	shift 3
	rm -f "$W/sentinel"
	out=$("$@" 2>&1)
	st=$?
	if [ "$st" -eq "$want" ] && ! printf '%s\n' "$out" | grep -q '^probe: started' && [ ! -e "$W/sentinel" ]; then
		pass "$desc"
	else
		fail "$desc (status $st)"
		diag "$out"
	fi
	LAST_OUTPUT=$out
}

expect_control "THREATS 53 control: outside under simkernel, the probe runs" -- "$SIMKERNEL" --no-landlock=EOPNOTSUPP -- "$PROBE" write "$W/sentinel"
for e in EOPNOTSUPP ENOSYS; do
	never_ran "THREATS 53: Landlock answering $e, no user namespaces: exit 125, the command never ran" 125 -- \
		"$SIMKERNEL" --no-landlock=$e --no-userns=EPERM -- "$STOCKADE" --net off -C "$W" -- "$PROBE" write "$W/sentinel"
	case $LAST_OUTPUT in *"nothing on this host can confine the command"*) pass "and says why" ;;
	*) fail "and says why"; diag "$LAST_OUTPUT" ;; esac
	never_ran "THREATS 53: --backend landlock with Landlock answering $e: exit 125" 125 -- \
		"$SIMKERNEL" --no-landlock=$e -- "$STOCKADE" --backend landlock --net off -C "$W" -- "$PROBE" write "$W/sentinel"
done
never_ran "THREATS 53: landlock_restrict_self refused: exit 125" 125 -- \
	"$SIMKERNEL" --errno landlock_restrict_self=EPERM -- "$STOCKADE" --backend landlock --net off -C "$W" -- "$PROBE" write "$W/sentinel"
case $LAST_OUTPUT in *"Landlock"*) pass "and names Landlock" ;; *) fail "and names Landlock"; diag "$LAST_OUTPUT" ;; esac
never_ran "THREATS 53: landlock_add_rule refused: exit 125" 125 -- \
	"$SIMKERNEL" --errno landlock_add_rule=EPERM -- "$STOCKADE" --backend landlock --net off -C "$W" -- "$PROBE" write "$W/sentinel"
never_ran "the seccomp filter refused: exit 125" 125 -- \
	"$SIMKERNEL" --errno seccomp=EINVAL -- "$STOCKADE" --backend landlock --net off -C "$W" -- "$PROBE" write "$W/sentinel"
case $LAST_OUTPUT in *"seccomp"*) pass "and names seccomp" ;; *) fail "and names seccomp"; diag "$LAST_OUTPUT" ;; esac

# --mode off runs the command without a jail, on purpose, and says so.
rm -f "$W/sentinel"
expect_probe "--mode off runs the command plain" ok -- "$STOCKADE" --mode off -C "$W" --report "$T/off.json" -- "$PROBE" write "$W/sentinel"
python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); assert r["backend"] == "none", r' "$T/off.json" &&
	pass "the report says backend none" || fail "the report says backend none"
expect_probe "--mode off reaches what the jail hides" ok -- "$SIMKERNEL" --no-landlock=ENOSYS -- "$STOCKADE" --mode off -C "$W" -- "$PROBE" ls "$HOME"

# --mode required refuses when any part of the policy is unenforced here.
jail --net off -C "$W" --report "$T/auto.json" -- true 2>/dev/null
gaps=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["unenforced"]))' "$T/auto.json")
if [ "${gaps:-0}" -gt 0 ]; then
	never_ran "--mode required with $gaps unenforced part(s): exit 125" 125 -- \
		"${JAIL[@]}" --mode required --net off -C "$W" -- "$PROBE" write "$W/sentinel"
	case $LAST_OUTPUT in *"unenforced here"*) pass "and names each" ;; *) fail "and names each"; diag "$LAST_OUTPUT" ;; esac
else
	expect_probe "--mode required runs when everything is enforced" ok -- jail --mode required --net off -C "$W" -- "$PROBE" write "$W/sentinel"
fi

plan_done
