# The terminal: the command keeps it and its job control, cannot inject
# input into it, and a Ctrl-C reaches it once. Run on a pty that ptyrun
# owns, as a shell would.
. tests/lib.sh

new_places

pending() {
	printf '%s\n' "$PROBE_OUTPUT" | grep '^ptyrun: pending input:' | tail -n 1
}

# This machine lets TIOCSTI work (dev.tty.legacy_tiocsti=1), so the
# control shows a real injection.
if [ "$(cat /proc/sys/dev/tty/legacy_tiocsti 2>/dev/null)" = 0 ]; then
	skip "TIOCSTI is disabled by the kernel here (dev.tty.legacy_tiocsti=0): nothing to inject"
else
	expect_probe "outside: TIOCSTI injects into the terminal" ok -- "$PTYRUN" -- "$PROBE" tiocsti $'id\n'
	[ "$(pending)" = 'ptyrun: pending input: id\n' ] && pass "outside: the shell would read 'id'" ||
		{ fail "outside: the shell would read 'id'"; diag "$(pending)"; }
fi
expect_probe "TIOCSTI in the jail is refused" "errno EPERM" -- "$PTYRUN" -- "${JAIL[@]}" --net off -C "$W" -- "$PROBE" tiocsti $'id\n'
[ "$(pending)" = 'ptyrun: pending input: none' ] && pass "nothing was injected" || { fail "nothing was injected"; diag "$(pending)"; }
expect_probe "TIOCSTI with high bits in the jail is refused" "errno EPERM" -- "$PTYRUN" -- "${JAIL[@]}" --net off -C "$W" -- "$PROBE" tiocsti-high $'id\n'
[ "$(pending)" = 'ptyrun: pending input: none' ] && pass "nothing was injected with high bits" || fail "nothing was injected with high bits"
expect_probe "TIOCLINUX in the jail is refused" "errno EPERM" -- "$PTYRUN" -- "${JAIL[@]}" --net off -C "$W" -- "$PROBE" tioclinux

# The command is in the terminal's foreground process group: it can read
# the terminal, and job control works as without stockade.
expect_probe "the command is in the foreground" ok -- "$PTYRUN" -- "${JAIL[@]}" --net off -C "$W" -- "$PROBE" pgrp
pgrp=$(printf '%s\n' "$PROBE_OUTPUT" | sed -n 's/^pgrp //p')
tpgrp=$(printf '%s\n' "$PROBE_OUTPUT" | sed -n 's/^tpgrp //p')
[ -n "$pgrp" ] && [ "$pgrp" = "$tpgrp" ] && pass "its process group owns the terminal" ||
	{ fail "its process group owns the terminal"; diag "$PROBE_OUTPUT"; }
out=$("$PTYRUN" --send '500:hello from the keyboard\n' -- "${JAIL[@]}" --net off -C "$W" -- head -n 1 2>&1)
case $out in *"hello from the keyboard"*"ptyrun: exit 0"*) pass "an interactive program reads the terminal" ;;
*) fail "an interactive program reads the terminal"; diag "$out" ;; esac
expect_probe "the program can open /dev/tty" ok -- "$PTYRUN" --send '500:x\n' -- "${JAIL[@]}" --net off -C "$W" -- "$PROBE" append /dev/tty

# A Ctrl-C reaches the command once: the terminal sends it to the whole
# foreground group, and stockade does not forward it again.
expect_probe "Ctrl-C reaches the command" ok -- "$PTYRUN" --send '700:\x03' -- "${JAIL[@]}" --net off -C "$W" -- "$PROBE" signals 2
n=$(printf '%s\n' "$PROBE_OUTPUT" | grep -c '^got SIGINT')
[ "$n" -eq 1 ] && pass "exactly once" || { fail "exactly once (got $n)"; diag "$PROBE_OUTPUT"; }
out=$("$PTYRUN" --send '700:\x03' -- "${JAIL[@]}" --net off -C "$W" -- sleep 30 2>&1)
case $out in *"ptyrun: exit 130"*) pass "Ctrl-C ends a command that does not catch it, status 130" ;;
*) fail "Ctrl-C ends a command that does not catch it, status 130"; diag "$out" ;; esac

# Another terminal of the same user is out of reach.
if [ -c /dev/pts/ptmx ]; then
	sleep 30 </dev/null &
	other=$!
	at_exit kill "$other"
	"$PTYRUN" -- sh -c 'tty; sleep 5' >"$T/other-tty" 2>&1 &
	at_exit kill $!
	for _ in $(seq 50); do grep -q '^/dev/pts/' "$T/other-tty" 2>/dev/null && break; sleep 0.1; done
	other_tty=$(grep -m1 '^/dev/pts/' "$T/other-tty" | tr -d '\r')
	if [ -n "$other_tty" ]; then
		expect_control "outside: another terminal of the user can be written" -- "$PROBE" append "$other_tty"
		expect_probe "another terminal of the user cannot be opened" "errno EACCES" -- \
			"$PTYRUN" -- "${JAIL[@]}" --net off -C "$W" -- "$PROBE" append "$other_tty"
	else
		fail "could not start a second terminal to test with"
	fi
fi

plan_done
