# Nested runs: stockade inside stockade (the backend under test outside,
# each backend that can run there inside), inside bwrap, and under a
# parent whose seccomp filter already holds the notification listener
# (tests/helpers/notifyparent, as WSL2 and other sandboxes leave one).
# The inner run works, narrows what the outer one allows and never
# widens it; where it cannot have what it needs, it says so in one line.
. tests/lib.sh

new_places
NOTIFYPARENT=$BUILD/tests/notifyparent
echo shown >"$W/shown.txt"
RO=$T/ro
mkdir -p "$RO"
echo kept >"$RO/f"
# A hidden path, as the backend inside answers it: inside another jail
# the inner run is always on the landlock backend.
INNER_HIDDEN=EACCES

# outer ARGS... -- CMD...: the backend under test, the probe readable.
outer() {
	jail -C "$W" --read "$PROBE" "$@"
}
# The inner run, as the outer run's command: "${IN[@]}" --backend B ...
IN=("$STOCKADE" -C "$W" --read "$PROBE")

expect_control "outside: the probe reads the workspace" -- "$PROBE" read "$W/shown.txt"
expect_probe "the outer run alone reads the workspace" ok -- outer -- "$PROBE" read "$W/shown.txt"

# --------------------------------------------------- stockade in stockade

for ib in auto landlock; do
	rm -f "$W/inner.json"
	expect_probe "stockade in stockade ($TEST_BACKEND outside, $ib inside): the command runs" ok -- \
		outer -- "${IN[@]}" --backend "$ib" --report "$W/inner.json" -- "$PROBE" read "$W/shown.txt"
	if python3 - "$W/inner.json" <<'PY'; then
import json, sys
d = json.load(open(sys.argv[1]))
gaps = " ".join(g["what"] + ": " + g["why"] for g in d["unenforced"])
assert d["backend"] == "landlock", d["backend"]
assert d["supervisor"]["decides"] == [], d["supervisor"]
assert "holds the only seccomp listener" in gaps, gaps
assert "unix sockets" in gaps and "network loopback" in gaps, gaps
PY
		pass "the inner run ($ib) is on the landlock backend, without a listener, and its report names what that leaves unenforced"
	else
		fail "the inner run ($ib) is on the landlock backend, without a listener, and its report names what that leaves unenforced"
	fi
done
# The namespace jail cannot run inside another jail (its filter refuses
# new user namespaces): asked for by name, one line says why and what to
# do.
fails "an inner --backend namespaces is refused in one line" \
	"cannot build the namespace jail: user namespaces refused" -- \
	outer -- "${IN[@]}" --backend namespaces -- "$PROBE" read "$W/shown.txt"
out=$(outer -- "${IN[@]}" --backend namespaces -- "$PROBE" read "$W/shown.txt" 2>&1)
printf '%s\n' "$out" | grep -q '^hint: this run is nested under a seccomp filter' &&
	pass "the refusal's hint says the run is nested and names --backend landlock" ||
	{ fail "the refusal's hint says the run is nested and names --backend landlock"; diag "$out"; }

# --publish and --connect need the inner run's own supervisor, which has
# no listener here: refused in one line, naming the outer run instead.
fails "an inner --publish is refused, naming the outer run" "cannot give --publish or --connect here" -- \
	outer -- "${IN[@]}" --backend auto --publish 47123 -- "$PROBE" read "$W/shown.txt"

# The inner run narrows: a file the outer run shows, hidden inside.
expect_probe "an inner --hide hides a file the outer run shows" "errno $INNER_HIDDEN" -- \
	outer -- "${IN[@]}" --backend auto --hide "$W/shown.txt" -- "$PROBE" read "$W/shown.txt"
# ... and never widens: a path the outer run made read-only stays so.
expect_probe "the outer run refuses a write to its read-only path" "errno $(readonly_errno)" -- \
	outer --read "$RO" -- "$PROBE" write "$RO/f"
expect_probe "an inner --write of that path still cannot write it" "errno $(readonly_errno)" -- \
	outer --read "$RO" -- "${IN[@]}" --backend auto --write "$RO" -- "$PROBE" write "$RO/f"
[ "$(cat "$RO/f")" = kept ] && pass "the read-only file is unchanged" || fail "the read-only file is unchanged"

# The network. A listener of the host's, reached with the outer --net on:
# an inner --net off refuses it (in the inner filter, which answers
# ENOSYS: the table gives socket() several rows), and it accepts nothing.
netpeer_start tcp 127.0.0.1 0
HP=$PEER_PORT
HC=$PEER_COUNT
expect_control "outside: the host's listener answers" -- "$PROBE" connect-tcp 127.0.0.1 "$HP"
expect_probe "the outer run with --net on reaches the host's listener" ok -- \
	outer --net on -- "$PROBE" connect-tcp 127.0.0.1 "$HP"
before=$(cat "$HC")
expect_probe "an inner --net off refuses the connect the outer run allowed" "errno ENOSYS" -- \
	outer --net on -- "${IN[@]}" --backend auto --net off -- "$PROBE" connect-tcp 127.0.0.1 "$HP"
[ "$(cat "$HC")" = "$before" ] && pass "the host's listener accepted nothing from the inner run" ||
	fail "the host's listener accepted nothing from the inner run"

# The inner run's own server on loopback: it works, without a supervisor
# of its own (the outer namespace jail's network has only its loopback;
# the outer supervisor binds and connects for it).
cat >"$W/own.sh" <<'SH'
rm -f own.out
"$1" listen-tcp 127.0.0.1 0 3 >own.out 2>&1 &
for i in $(seq 200); do grep -q listening own.out && break; sleep 0.05; done
port=$(sed -n 's/^listening \([0-9]*\)$/\1/p' own.out | head -n 1)
exec "$1" connect-tcp 127.0.0.1 "$port"
SH
expect_probe "the inner run's own server on loopback answers it" ok -- \
	outer --read "$STOCKADE" -- "${IN[@]}" --backend auto -- sh own.sh "$PROBE"

# A Unix socket of the host's that the outer run does not grant: the inner
# run, whose own filter goes without a listener and checks no socket
# path, still cannot reach it (the outer namespace jail has no such path;
# the outer supervisor refuses it).
netpeer_start unix "$T/host.sock"
UC=$PEER_COUNT
expect_control "outside: the host's Unix socket answers" -- "$PROBE" connect-unix "$T/host.sock"
ubase=$(cat "$UC")
expect_probe "the inner run cannot reach a Unix socket the outer run does not grant" \
	"errno $([ "$TEST_BACKEND" = namespaces ] && echo ENOENT || echo EACCES)" -- \
	outer -- "${IN[@]}" --backend auto -- "$PROBE" connect-unix "$T/host.sock"
[ "$(cat "$UC")" = "$ubase" ] && pass "the host's Unix socket accepted nothing from the inner run" ||
	fail "the host's Unix socket accepted nothing from the inner run"

# The remote host: what the outer run refuses, an inner --net on cannot
# reach.
REMOTE_COUNT=${STOCKADE_REMOTE_COUNT:-/tmp/stockade-remote.count}
if is_root && [ -x tests/remote-host.sh ]; then
	ip netns list 2>/dev/null | grep -q '^stockade-remote\b' || at_exit tests/remote-host.sh down
	tests/remote-host.sh up "$NETPEER" "$REMOTE_COUNT"
fi
if [ -s "$REMOTE_COUNT" ] && "$PROBE" connect-tcp 10.203.0.2 7 >/dev/null 2>&1; then
	pass "outside: the remote host answers"
	expect_probe "the outer run with --net on reaches the remote host" ok -- \
		outer --net on -- "$PROBE" connect-tcp 10.203.0.2 7
	rbase=$(cat "$REMOTE_COUNT")
	# Refused outside: the namespace jail's network has no route; the
	# landlock backend's supervisor answers as it does (ENETUNREACH).
	expect_probe "an inner --net on cannot reach the remote host the outer run refused" \
		"errno ENETUNREACH" -- \
		outer --net loopback -- "${IN[@]}" --backend auto --net on -- "$PROBE" connect-tcp 10.203.0.2 7
	expect_probe "an inner --net off refuses the remote host the outer run allowed" "errno ENOSYS" -- \
		outer --net on -- "${IN[@]}" --backend auto --net off -- "$PROBE" connect-tcp 10.203.0.2 7
	[ "$(cat "$REMOTE_COUNT")" = "$rbase" ] && pass "the remote host accepted nothing from the inner runs" ||
		fail "the remote host accepted nothing from the inner runs"
else
	skip "no remote host here (tests/remote-host.sh up, as root, makes it)"
fi

# The inner run's state: where it can write, keyed to nothing of the
# outer run's. With its XDG_STATE_HOME read-only, it keeps it in its
# TMPDIR; the outer run's own state directory gains nothing.
ST=$T/state-ro
mkdir -p "$ST/stockade"
before=$(ls -A "$HOME/.local/state/stockade" 2>/dev/null | grep -v -E '^said-once(.new)?$' | sort | tr '\n' ' ')
out=$(outer --env XDG_STATE_HOME="$ST" --read "$ST" -- "$STOCKADE" quarantine 2>&1)
if printf '%s\n' "$out" | grep -q -E "the quarantine in '[^']*/stockade-[0-9]+/state' is empty"; then
	pass "a nested run whose XDG_STATE_HOME is read-only keeps its state in its TMPDIR"
else
	fail "a nested run whose XDG_STATE_HOME is read-only keeps its state in its TMPDIR"
	diag "$out"
fi
expect_probe "and runs its command" ok -- \
	outer --env XDG_STATE_HOME="$ST" --read "$ST" -- "${IN[@]}" --backend auto -- "$PROBE" read "$W/shown.txt"
[ -z "$(ls -A "$ST/stockade")" ] && pass "the read-only state directory is untouched" ||
	fail "the read-only state directory is untouched"
after=$(ls -A "$HOME/.local/state/stockade" 2>/dev/null | grep -v -E '^said-once(.new)?$' | sort | tr '\n' ' ')
[ "$after" = "$before" ] && pass "the outer run's state directory gained nothing from the inner runs" ||
	{ fail "the outer run's state directory gained nothing from the inner runs"; diag "before: $before after: $after"; }

# The guard, nested: a hook the inner run's command plants is gone once
# the runs end (the outer namespace jail binds the hooks read-only; on the
# landlock backend a guard undoes it).
G=$T/gws
mkdir -p "$G"
git -C "$G" init -q
expect_control "outside: a hook can be written" -- "$PROBE" write "$G/.git/hooks/probe-control"
rm -f "$G/.git/hooks/probe-control"
expect_probe "a hook the inner run's command plants: $([ "$TEST_BACKEND" = namespaces ] && echo refused || echo written, then undone)" \
	"$([ "$TEST_BACKEND" = namespaces ] && echo "errno EROFS" || echo ok)" -- \
	jail -C "$G" --read "$PROBE" -- "$STOCKADE" -C "$G" --read "$PROBE" -- "$PROBE" write "$G/.git/hooks/pre-commit"
[ ! -e "$G/.git/hooks/pre-commit" ] && pass "the planted hook is gone after the nested run" ||
	fail "the planted hook is gone after the nested run"

# The terminal, nested: the inner run's command runs and job control
# reaches it (Ctrl-C through both relays).
expect_probe "stockade in stockade on a terminal: the command runs" ok -- \
	"$PTYRUN" --timeout 60 -- "${JAIL[@]}" -C "$W" --read "$PROBE" -- "${IN[@]}" --backend auto -- "$PROBE" read "$W/shown.txt"
out=$("$PTYRUN" --after sleep-ready --send 100:'\x03' --timeout 60 -- "${JAIL[@]}" -C "$W" --read "$PROBE" -- "${IN[@]}" --backend auto -- sh -c 'echo sleep-ready; exec sleep 30' 2>&1)
printf '%s\n' "$out" | grep -q '^ptyrun: exit 130$' && pass "Ctrl-C reaches the inner run's command" ||
	{ fail "Ctrl-C reaches the inner run's command"; diag "$out"; }

# ------------------------------------- a parent that holds the listener

cnt=$T/notify.count
expect_control "outside: the probe runs under notifyparent" -- "$NOTIFYPARENT" -- "$PROBE" read "$W/shown.txt"
rm -f "$cnt" "$W/np.json"
expect_probe "under a parent's listener: the command runs" ok -- \
	"$NOTIFYPARENT" --count "$cnt" -- "${JAIL[@]}" -C "$W" --read "$PROBE" --report "$W/np.json" -- "$PROBE" read "$W/shown.txt"
wait_until test -s "$cnt"
[ "$(cat "$cnt" 2>/dev/null || echo 0)" -gt 0 ] && pass "the parent's listener still saw the run's calls (its filter still applies)" ||
	fail "the parent's listener still saw the run's calls (its filter still applies)"
if python3 - "$W/np.json" "$TEST_BACKEND" <<'PY'; then
import json, sys
d = json.load(open(sys.argv[1]))
gaps = " ".join(g["what"] + ": " + g["why"] for g in d["unenforced"])
said = " ".join(d["enforced"])
assert d["backend"] == sys.argv[2], d["backend"]
assert d["supervisor"]["decides"] == [], d["supervisor"]
assert "refusals answered in the filter" in said, said
if sys.argv[2] == "landlock":
    assert "holds the only seccomp listener" in gaps and "network loopback" in gaps, gaps
PY
	pass "its report says the filter goes without a listener, and names what that leaves unenforced"
else
	fail "its report says the filter goes without a listener, and names what that leaves unenforced"
fi
expect_probe "under a parent's listener: --hide still hides" "errno $(covered_errno)" -- \
	"$NOTIFYPARENT" -- "${JAIL[@]}" -C "$W" --read "$PROBE" --hide "$W/shown.txt" -- "$PROBE" read "$W/shown.txt"
expect_probe "under a parent's listener: entering another namespace is still refused" "errno EPERM" -- \
	"$NOTIFYPARENT" -- "${JAIL[@]}" -C "$W" --read "$PROBE" -- "$PROBE" setns
if [ "$TEST_BACKEND" = landlock ]; then
	# In the host's network, with no supervisor to vet them, Landlock
	# keeps refusing the command every TCP bind and connect (fail closed;
	# named as the loopback gap above).
	expect_probe "under a parent's listener, in the host's network: TCP stays refused, its own server's too" "errno EACCES" -- \
		"$NOTIFYPARENT" -- "${JAIL[@]}" -C "$W" --read "$PROBE" -- sh own.sh "$PROBE"
	fails "under a parent's listener: --mode required refuses, naming the listener's gaps" \
		"unenforced here: network loopback: .*holds the only seccomp listener" -- \
		"$NOTIFYPARENT" -- "${JAIL[@]}" -C "$W" --mode required --read "$PROBE" -- "$PROBE" read "$W/shown.txt"
fi

# ----------------------------------------------------------- inside bwrap

if command -v bwrap >/dev/null; then
	expect_control "outside: the probe runs in bwrap" -- bwrap --dev-bind / / -- "$PROBE" read "$W/shown.txt"
	expect_probe "inside bwrap: the command runs" ok -- \
		bwrap --dev-bind / / -- "${JAIL[@]}" -C "$W" --read "$PROBE" -- "$PROBE" read "$W/shown.txt"
	expect_probe "inside bwrap --unshare-user: --hide still hides" "errno $(covered_errno)" -- \
		bwrap --unshare-user --dev-bind / / -- "${JAIL[@]}" -C "$W" --read "$PROBE" --hide "$W/shown.txt" -- \
		"$PROBE" read "$W/shown.txt"
	# A read-only root with a /proc of bwrap's own: the namespace jail is
	# refused there (auto falls back), the home cannot be written (the
	# state goes to the tmpfs /tmp), and the run works.
	expect_probe "inside a read-only bwrap root with its own /proc: the command runs" ok -- \
		bwrap --unshare-user --unshare-pid --ro-bind / / --dev /dev --proc /proc --tmpfs /tmp \
		--bind "$W" "$W" --ro-bind "$PROBE" "$PROBE" --ro-bind "$STOCKADE" "$STOCKADE" --chdir "$W" -- \
		"$STOCKADE" -C "$W" --read "$PROBE" -- "$PROBE" read "$W/shown.txt"
else
	fail "bwrap is not installed (/usr/bin/bwrap)"
fi

plan_done
