# backends: namespaces
# The namespace jail: what it is built of, what it shows, its network, and
# how auto falls back when the host refuses it.
. tests/lib.sh

new_places
NONCE=$(nonce_new)
canary_home "$HOME" "$NONCE"
in_jail() {
	"$STOCKADE" --backend namespaces -C "$W" "$@"
}

# The user namespace maps the caller's own ids.
out=$(in_jail --net off -- id -u 2>/dev/null)
[ "$out" = "$(id -u)" ] && pass "the command runs as the caller's uid" || fail "the command runs as the caller's uid (got '$out')"

# /proc shows the jail's processes only.
sleep 300 &
outside=$!
at_exit kill "$outside"
expect_probe "/proc is readable" ok -- in_jail --net off -- "$PROBE" ls /proc
pids=$(printf '%s\n' "$PROBE_OUTPUT" | grep -c -E '^[0-9]+$')
[ "$pids" -le 3 ] && pass "THREATS 35: /proc lists the jail's processes only ($pids)" || { fail "THREATS 35: /proc lists the jail's processes only ($pids)"; diag "$PROBE_OUTPUT"; }
printf '%s\n' "$PROBE_OUTPUT" | grep -q -x "$outside" && fail "THREATS 35: an outside process is not in /proc" || pass "THREATS 35: an outside process is not in /proc"

# Every capability set empty, the bounding set included.
expect_probe "capabilities" ok -- in_jail --net off -- "$PROBE" caps
for set in CapInh CapPrm CapEff CapBnd CapAmb; do
	printf '%s\n' "$PROBE_OUTPUT" | grep -q "^$set:[[:space:]]*0000000000000000$" && pass "$set is empty" || fail "$set is empty"
done

# chown and setuid to an id the namespace does not map answer EPERM, as
# they would outside for this user, not EINVAL.
touch "$W/owned"
other=$([ "$(id -u)" -eq 0 ] && echo 1000 || echo 0)
expect_probe "chown to another user answers EPERM" "errno EPERM" -- in_jail --net off -- "$PROBE" chown "$W/owned" "$other" -1
expect_probe "chown to oneself works" ok -- in_jail --net off -- "$PROBE" chown "$W/owned" "$(id -u)" "$(id -g)"
expect_probe "setuid to another user answers EPERM" "errno EPERM" -- in_jail --net off -- "$PROBE" setuid "$other"
expect_probe "setgid to another group answers EPERM" "errno EPERM" -- in_jail --net off -- "$PROBE" setgid "$other"
expect_probe "setuid to oneself works" ok -- in_jail --net off -- "$PROBE" setuid "$(id -u)"

# The network: the jail's own loopback, never the host's.
netpeer_start tcp 127.0.0.1 0
expect_control "outside: the host's loopback service answers" -- "$PROBE" connect-tcp 127.0.0.1 "$PEER_PORT"
before=$(peer_count)
expect_probe "a service on the host's loopback is unreachable (loopback)" "errno ECONNREFUSED" -- \
	in_jail --net loopback -- "$PROBE" connect-tcp 127.0.0.1 "$PEER_PORT"
expect_probe "a service on the host's loopback is unreachable (off: no inet socket)" "errno EAFNOSUPPORT" -- \
	in_jail --net off -- "$PROBE" connect-tcp 127.0.0.1 "$PEER_PORT"
[ "$(peer_count)" = "$before" ] && pass "the host's service saw nothing" || fail "the host's service saw nothing"
expect_probe "--net on reaches the host's loopback" ok -- in_jail --net on -- "$PROBE" connect-tcp 127.0.0.1 "$PEER_PORT"
cat >"$W/self.sh" <<'SH'
"$1" listen-tcp 127.0.0.1 47123 3 >listen.out 2>&1 &
for i in $(seq 50); do grep -q listening listen.out && break; sleep 0.05; done
"$2" udp 127.0.0.1 47124 udp.count >udp.out 2>&1 &
for i in $(seq 50); do grep -q ready udp.out && break; sleep 0.05; done
"$1" udp-send 127.0.0.1 47124 >/dev/null
"$1" connect-tcp 127.0.0.1 47123
SH
expect_probe "the jail's own loopback works (TCP)" ok -- in_jail --net loopback --read "$NETPEER" --read "$PROBE" -- sh self.sh "$PROBE" "$NETPEER"
[ "$(cat "$W/udp.count" 2>/dev/null)" = 1 ] && pass "the jail's own loopback works (UDP)" || fail "the jail's own loopback works (UDP)"
expect_probe "with --net off there is no inet socket" "errno EAFNOSUPPORT" -- in_jail --net off -- "$PROBE" udp-send 127.0.0.1 9

# The setup race (THREATS 20) is threats.sh's, on both backends.

# Fallback, simulated: auto lands on the landlock backend and says why.
for how in "--no-userns=EPERM" "--no-mount=EPERM"; do
	rm -f "$T/fallback.json"
	out=$("$SIMKERNEL" $how -- "$STOCKADE" --net off -C "$W" --report "$T/fallback.json" -- "$PROBE" read "$HOME/.ssh/id_rsa" 2>&1)
	case $out in *"probe: errno EACCES"*) pass "THREATS 55: $how: the command ran on the landlock backend, the credential hidden" ;;
	*) fail "THREATS 55: $how: the command ran on the landlock backend, the credential hidden"; diag "$out" ;; esac
	case $out in *"the namespace jail is not available here"*"using the landlock backend"*) pass "$how: one line says so" ;;
	*) fail "$how: one line says so"; diag "$out" ;; esac
	python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); assert r["backend"] == "landlock" and r["fallback"], r' "$T/fallback.json" &&
		pass "$how: the report says landlock, and why" || { fail "$how: the report says landlock, and why"; diag "$(cat "$T/fallback.json")"; }
	out=$("$SIMKERNEL" $how -- "$STOCKADE" --backend namespaces --net off -C "$W" -- "$PROBE" read "$HOME/notes.txt" 2>&1)
	st=$?
	[ $st -eq 125 ] && ! printf '%s\n' "$out" | grep -q '^probe: started' && pass "THREATS 55: $how: --backend namespaces refuses instead (125)" ||
		{ fail "THREATS 55: $how: --backend namespaces refuses instead (125, got $st)"; diag "$out"; }
	out=$("$SIMKERNEL" $how -- "$STOCKADE" doctor 2>&1)
	case $out in *"user namespaces:        refused at "*"EPERM"*"backend auto picks:     landlock"*) pass "$how: doctor says this host falls back" ;;
	*) fail "$how: doctor says this host falls back"; diag "$out" ;; esac
done

# Landlock refused: the namespace jail still hides every credential.
rm -f "$T/nolandlock.json"
for f in .ssh/id_rsa .aws/credentials .netrc .config/gh/hosts.yml; do
	expect_probe "THREATS 53: without Landlock, ~/$f is still hidden" "errno ENOENT" -- \
		"$SIMKERNEL" --no-landlock=EOPNOTSUPP -- "$STOCKADE" --net off -C "$W" --report "$T/nolandlock.json" -- "$PROBE" read "$HOME/$f"
done
python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); assert r["backend"] == "namespaces" and any(g["what"] == "landlock" for g in r["unenforced"]), r' "$T/nolandlock.json" &&
	pass "without Landlock the report names the missing layer" || { fail "without Landlock the report names the missing layer"; diag "$(cat "$T/nolandlock.json")"; }

# The home, /tmp and /dev/shm are directories of the run's one tmpfs,
# cloned from it while it is detached (Linux 6.15 and later), so that its
# root is never in the jail's tree; on an older kernel, simulated by
# refusing that clone as it did (EINVAL), it is attached aside until they
# are bound. Either way each is written, the run's end counts what was
# left there, and nothing of the tmpfs's root shows.
expect_probe "the simulated older kernel answers open_tree of a path EINVAL" "errno EINVAL" -- \
	"$SIMKERNEL" --old-open-tree -- "$PROBE" open_tree /
out=$("$PROBE" open_tree / 2>&1)
case $out in *"errno EINVAL"*) fail "outside: this kernel does not answer open_tree of a path EINVAL"; diag "$out" ;;
*"probe: started"*) pass "outside: this kernel does not answer open_tree of a path EINVAL" ;;
*) fail "outside: this kernel does not answer open_tree of a path EINVAL"; diag "$out" ;; esac
# (Each run's own names: what was said once is not said again.)
for how in "" "--old-open-tree"; do
	what=${how:-"a detached tmpfs"}
	n=${how:+old}
	out=$(${how:+"$SIMKERNEL" $how --} "$STOCKADE" --backend namespaces --net off -C "$W" -- \
		sh -c 'echo one >"$HOME/shared-home$1" && echo two >/tmp/shared-tmp$1 && echo three >/dev/shm/shared-shm$1 &&
			cat "$HOME/shared-home$1" /tmp/shared-tmp$1 /dev/shm/shared-shm$1 &&
			grep -c stockade-shared /proc/self/mountinfo' sh "$n" 2>&1)
	st=$?
	case $out in *one*two*three*) pass "$what: the home, /tmp and /dev/shm are written in the jail" ;;
	*) fail "$what: the home, /tmp and /dev/shm are written in the jail (status $st)"; diag "$out" ;; esac
	printf '%s\n' "$out" | grep -q -x 0 && pass "$what: no mount of the tmpfs's root is in the jail's tree" ||
		{ fail "$what: no mount of the tmpfs's root is in the jail's tree"; diag "$out"; }
	case $out in *"wrote 1 file"*"fresh home"*"~/shared-home$n"*) pass "$what: the run's end counts what the command left in its home" ;;
	*) fail "$what: the run's end counts what the command left in its home"; diag "$out" ;; esac
done

# The caller's own home from the user database (root's is /root, which
# the defaults hide whole): the jail's home is a fresh tmpfs there, written
# by the command, and nothing of it reaches the real one.
real_home=$(getent passwd "$(id -u)" | cut -d: -f6)
if [ -d "$real_home" ]; then
	name=stockade-fresh-home.$$
	expect_control "outside: the real home ($real_home) is writable" -- "$PROBE" write "$real_home/$name"
	rm -f "$real_home/$name"
	expect_probe "the fresh home at $real_home is writable in the jail" ok -- \
		env HOME="$real_home" "$STOCKADE" --backend namespaces --net off -C "$W" -- "$PROBE" write "$real_home/$name"
	[ ! -e "$real_home/$name" ] && pass "and nothing was written to the real home" ||
		{ fail "and nothing was written to the real home"; rm -f "$real_home/$name"; }
fi

plan_done
