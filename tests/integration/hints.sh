# Every fix a stockade line or `stockade why` proposes works as given: for
# each kind of refusal, the test makes it happen (the probe, started, gets
# the errno named), reads the option the line proposes, applies each of
# its alternatives (an option, or the stockade.ini key that says the same
# in the user's own file) and shows the same command then succeeds. Remote
# hosts: only the tests' own 10.203.0.2 (tests/remote-host.sh).
#
# The control, on main before this: the namespace jail proposed
# `--connect 10.203.0.2:7` for a remote address and refused it ("only a
# loopback address or localhost"); why proposed `--connect
# registry.npmjs.org:443` ("numeric address or localhost"); a refused
# socket with the network off proposed only --net on.
. tests/lib.sh

new_places
unset XDG_CONFIG_HOME
CONF="$HOME/.config/stockade/stockade.ini"
mkdir -p "$(dirname "$CONF")"
in_jail() {
	(cd "$W" && jail "$@")
}

# The alternatives a line offers, one per line: "--net on", "--connect
# 10.203.0.2:7", "ini network = on", from its last "to allow: ..." or
# "allow: ..." or "hint: ... --read X" (parenthesised remarks left out).
proposed() {
	printf '%s\n' "$1" | grep -E '(to allow|  allow|^hint): ' | tail -n 1 | sed -E 's/.*(to allow|allow|hint): //; s/\([^)]*\)//g' |
		sed 's/, or /\n/g; s/ *$//' | sed 's/ *$//' | while IFS= read -r alt; do
		case $alt in
		*"in stockade.ini: "*) printf 'ini %s\n' "${alt#*in stockade.ini: }" ;;
		*--*) printf '%s\n' "$alt" | grep -o -E -- '--[a-z-]+ [^ ,;]+' | head -n 1 ;;
		esac
	done
}

# A proposal as a test's name: its paths and ports vary from run to run.
label() {
	printf '%s\n' "$1" | sed -E 's#(unix:)?/[^ ]*#PATH#; s#127\.0\.0\.1:[0-9]+#127.0.0.1:PORT#'
}

# apply_each DESC OUTPUT EXPECT -- [OPTION]... -- CMD...: each
# alternative OUTPUT proposes, applied after the run's own OPTIONs (so
# that it is the one in effect), gives EXPECT (the probe's line); there
# must be at least one.
apply_each() {
	local desc=$1 out=$2 expect=$3 alts alt n=0
	local -a opts=()
	shift 4
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		opts+=("$1")
		shift
	done
	alts=$(proposed "$out")
	if [ -z "$alts" ]; then
		fail "$desc: a fix is proposed"
		diag "$out"
		return
	fi
	while IFS= read -r alt; do
		n=$((n + 1))
		case $alt in
		ini\ *)
			printf '[sandbox]\n%s\n' "${alt#ini }" >"$CONF"
			expect_probe "$desc: in stockade.ini, its '$(label "${alt#ini }")' works" "$expect" -- in_jail "${opts[@]}" "$@"
			rm -f "$CONF"
			;;
		*)
			# shellcheck disable=SC2086 # the option and its value
			expect_probe "$desc: its '$(label "$alt")' works" "$expect" -- in_jail "${opts[@]}" $alt "$@"
			;;
		esac
	done <<EOF
$alts
EOF
}

# refusal DESC ERRNO -- ARGS...: the probe, in the jail, gets ERRNO, and
# stockade's own line is left in $OUT.
refusal() {
	local desc=$1 expect=$2
	shift 3
	expect_probe "$desc" "$expect" -- in_jail "$@"
	OUT=$PROBE_OUTPUT
}

# ---- the network: a remote host, with loopback (the default)
REMOTE_COUNT=${STOCKADE_REMOTE_COUNT:-/tmp/stockade-remote.count}
if [ -s "$REMOTE_COUNT" ] && "$PROBE" connect-tcp 10.203.0.2 7 >/dev/null 2>&1; then
	expect_control "outside: the remote host answers" -- "$PROBE" connect-tcp 10.203.0.2 7
	refusal "a connect to the remote host is refused" "errno ENETUNREACH" -- -- "$PROBE" connect-tcp 10.203.0.2 7
	case $OUT in *"to allow: --connect 10.203.0.2:7"*) pass "the line proposes --connect 10.203.0.2:7" ;;
	*) fail "the line proposes --connect 10.203.0.2:7"; diag "$OUT" ;; esac
	apply_each "remote host" "$OUT" ok -- -- "$PROBE" connect-tcp 10.203.0.2 7
	# why agrees, and its fix works the same
	out=$(cd "$W" && "$STOCKADE" why --backend "$TEST_BACKEND" 10.203.0.2:7 2>&1)
	apply_each "why 10.203.0.2:7" "$out" ok -- -- "$PROBE" connect-tcp 10.203.0.2 7
	# --connect gives that port alone: another of the same host is still refused
	expect_probe "--connect 10.203.0.2:7 does not give port 9 of the same host" "errno $([ "$TEST_BACKEND" = landlock ] && echo ENETUNREACH || echo ECONNREFUSED)" -- \
		in_jail --connect 10.203.0.2:7 -- "$PROBE" connect-tcp 10.203.0.2 9
else
	skip "no remote host here (tests/remote-host.sh up, as root, makes it)"
fi

# ---- why for a name: that name alone (network allow), then the network,
#      never --connect NAME (which takes a numeric address); a .localhost
#      name: 127.0.0.1. (allow.sh applies --allow against its fake
#      internet; here each proposal is checked to be one the tool takes.)
out=$(cd "$W" && "$STOCKADE" why --backend "$TEST_BACKEND" registry.npmjs.org:443 2>&1)
alts=$(proposed "$out")
if [ "$alts" = "--allow registry.npmjs.org
ini allow = registry.npmjs.org
--net on
ini network = on" ]; then
	pass "why NAME:443 proposes --allow NAME, then the network, not --connect NAME"
else
	fail "why NAME:443 proposes --allow NAME, then the network, not --connect NAME"
	diag "$out"
fi
out=$(cd "$W" && "$STOCKADE" why --backend "$TEST_BACKEND" --allow registry.npmjs.org registry.npmjs.org:443 2>&1)
case $out in
*": allowed "*) pass "and why with that --allow says it is allowed" ;;
*) fail "and why with that --allow says it is allowed"; diag "$out" ;;
esac
printf '[sandbox]\nallow = registry.npmjs.org\n' >"$CONF"
out=$(cd "$W" && "$STOCKADE" why --backend "$TEST_BACKEND" registry.npmjs.org:443 2>&1)
rm -f "$CONF"
case $out in
*": allowed "*) pass "and why with that allow = in stockade.ini says it is allowed" ;;
*) fail "and why with that allow = in stockade.ini says it is allowed"; diag "$out" ;;
esac
out=$(cd "$W" && "$STOCKADE" why --backend "$TEST_BACKEND" api.localhost:5432 2>&1)
case $(proposed "$out" | head -n 1) in
"--connect 127.0.0.1:5432") pass "why api.localhost:5432 proposes --connect 127.0.0.1:5432" ;;
*) fail "why api.localhost:5432 proposes --connect 127.0.0.1:5432"; diag "$out" ;;
esac

# ---- a service of the host on loopback: --connect
netpeer_start tcp 127.0.0.1 0
expect_control "outside: the host's service answers" -- "$PROBE" connect-tcp 127.0.0.1 "$PEER_PORT"
out=$(cd "$W" && "$STOCKADE" why --backend "$TEST_BACKEND" "127.0.0.1:$PEER_PORT" 2>&1)
apply_each "why 127.0.0.1:PORT (a host service)" "$out" ok -- -- "$PROBE" connect-tcp 127.0.0.1 "$PEER_PORT"

# ---- the network off: the run's own server on loopback needs loopback,
#      not the whole network
expect_control "outside: a listener of its own, connected to" -- "$PROBE" connect-cycles 127.0.0.1 3
expect_probe "network off: the run's own loopback server fails" "errno EAFNOSUPPORT" -- \
	in_jail --net off -- "$PROBE" connect-cycles 127.0.0.1 3
OUT=$PROBE_OUTPUT
if [ "$TEST_BACKEND" = landlock ]; then
	case $(proposed "$OUT" | head -n 1) in
	"--net loopback") pass "network off: the line proposes --net loopback first" ;;
	*) fail "network off: the line proposes --net loopback first"; diag "$OUT" ;;
	esac
	apply_each "network off, the run's own server" "$OUT" ok -- --net off -- "$PROBE" connect-cycles 127.0.0.1 3
fi
out=$(cd "$W" && "$STOCKADE" why --backend "$TEST_BACKEND" --net off 127.0.0.1:5432 2>&1)
case $(proposed "$out" | head -n 1) in
"--net loopback") pass "why with the network off: loopback for a loopback address" ;;
*) fail "why with the network off: loopback for a loopback address"; diag "$out" ;;
esac
# --connect with the network off: its hint
out=$(in_jail --net off --connect "127.0.0.1:$PEER_PORT" -- "$PROBE" connect-tcp 127.0.0.1 "$PEER_PORT" 2>&1)
[ $? -eq 125 ] && pass "--connect with the network off: refused (125)" || fail "--connect with the network off: refused (125)"
case $out in *"hint: --net loopback with --connect"*)
	expect_probe "the hint's --net loopback with the same --connect works" ok -- \
		in_jail --net loopback --connect "127.0.0.1:$PEER_PORT" -- "$PROBE" connect-tcp 127.0.0.1 "$PEER_PORT" ;;
*) fail "--connect with the network off: the hint names --net loopback"; diag "$out" ;;
esac

# ---- a socket file of the host's: --connect unix:PATH
SOCKDIR=$(mktemp -d /var/tmp/stockade-hints.XXXXXX)
at_exit rm -rf "$SOCKDIR"
chmod 755 "$SOCKDIR"
netpeer_start unix "$SOCKDIR/s.sock"
expect_control "outside: the socket file answers" -- "$PROBE" connect-unix "$SOCKDIR/s.sock"
out=$(cd "$W" && "$STOCKADE" why "unix:$SOCKDIR/s.sock" 2>&1)
apply_each "why unix:PATH" "$out" ok -- -- "$PROBE" connect-unix "$SOCKDIR/s.sock"
if [ "$TEST_BACKEND" = landlock ]; then
	refusal "a host socket file is refused" "errno EACCES" -- -- "$PROBE" connect-unix "$SOCKDIR/s.sock"
	apply_each "a host socket file" "$OUT" ok -- -- "$PROBE" connect-unix "$SOCKDIR/s.sock"
fi

# ---- files: why's --read and --write, as given
ELSEWHERE=$(mktemp -d /var/tmp/stockade-hints.XXXXXX)
at_exit rm -rf "$ELSEWHERE"
echo data >"$ELSEWHERE/f"
expect_control "outside: a file elsewhere is read" -- "$PROBE" read "$ELSEWHERE/f"
out=$(cd "$W" && "$STOCKADE" why "$ELSEWHERE/f" 2>&1)
apply_each "why PATH (read)" "$(printf '%s\n' "$out" | sed -n '1,/^write/p' | grep -v '^write')" ok -- -- "$PROBE" read "$ELSEWHERE/f"
expect_control "outside: a new file there is made" -- "$PROBE" write "$ELSEWHERE/new-outside"
out=$(cd "$W" && "$STOCKADE" why "$ELSEWHERE/new" 2>&1)
case $out in *"allow: --write $ELSEWHERE (it does not exist yet"*) pass "why of a file not made yet: --write its folder" ;;
*) fail "why of a file not made yet: --write its folder"; diag "$out" ;; esac
apply_each "why NEWFILE (write)" "$out" ok -- -- "$PROBE" write "$ELSEWHERE/new"
# what the user cannot do outside, the jail does not give: no option
if ! is_root; then
	out=$(cd "$W" && "$STOCKADE" why /etc/hostname 2>&1)
	case $out in *"allow: none: you cannot write it outside the jail either"*) pass "why /etc/hostname as a user: no option proposed (you cannot write it outside)" ;;
	*) fail "why /etc/hostname as a user: no option proposed"; diag "$out" ;; esac
fi
# a failed command that names a file the jail cannot read: the run does
# not see the refusal (ENOENT in the namespace jail, Landlock's EACCES),
# so stockade looks at the command's words, and the fix it says works;
# a path in a shell's script, and a relative one, the same
refusal "a command naming a file elsewhere cannot read it" "errno $(hidden_errno)" -- -- "$PROBE" read "$ELSEWHERE/f"
case $OUT in *"hint: the command names what the jail cannot read: $ELSEWHERE/f; to allow: --read $ELSEWHERE/f"*)
	pass "the failed command is told the path it names, and the --read" ;;
*) fail "the failed command is told the path it names, and the --read"; diag "$OUT" ;; esac
apply_each "a path the command names" "$OUT" ok -- -- "$PROBE" read "$ELSEWHERE/f"
(cd "$W" && jail --report "$T/named.json" -- "$PROBE" read "$ELSEWHERE/f" >/dev/null 2>&1)
python3 -c 'import json, sys; said = json.load(open(sys.argv[1]))["stockade"]["said"]; sys.exit(not any("names what the jail cannot read: " + sys.argv[2] in l for l in said))' "$T/named.json" "$ELSEWHERE/f" &&
	pass "and the report's said keeps that line" || fail "and the report's said keeps that line"
# a file to make in a folder out of reach: the --write of its folder
refusal "a command naming a file to make elsewhere cannot make it" "errno $(hidden_errno)" -- -- "$PROBE" write "$ELSEWHERE/made-by-run"
case $OUT in *"hint: the command names a file to make in a folder out of the jail's reach: $ELSEWHERE/made-by-run; to allow: --write $ELSEWHERE"*)
	pass "the failed command is told the file it names to make, and the --write of its folder" ;;
*) fail "the failed command is told the file it names to make, and the --write of its folder"; diag "$OUT" ;; esac
apply_each "a file the command names to make" "$OUT" ok -- -- "$PROBE" write "$ELSEWHERE/made-by-run"
rm -f "$ELSEWHERE/made-by-run"
# What the command makes in its fresh home is its own: a ~/ word (the
# jail's HOME, wherever the backend put it) is not named to make, nor, in
# the namespace jail, any path of your home (the fresh home is mounted
# there). A folder whose --write stockade refuses (your home holds
# stockade's own state) is never offered: the line says so, and what
# works instead, which works. The control, on main before this: on the
# landlock backend both proposed "--write $HOME", which stockade then
# refused (exit 125).
"$PROBE" write "$HOME/made-outside" >/dev/null 2>&1 && [ -f "$HOME/made-outside" ] &&
	pass "outside the jail, the probe makes a file in your home" || fail "outside the jail, the probe makes a file in your home"
rm -f "$HOME/made-outside"
out=$(cd "$W" && jail --read "$PROBE" -- sh -c "\"\$1\" write ~/made-in-fresh-home; exit 3" sh "$PROBE" 2>&1)
case $out in *"ok"*) pass "a ~/ file is made in the fresh home" ;; *) fail "a ~/ file is made in the fresh home"; diag "$out" ;; esac
case $out in *"file to make"*) fail "a ~/ file is not named to make"; diag "$out" ;; *) pass "a ~/ file is not named to make" ;; esac
out=$(cd "$W" && jail --read "$PROBE" -- sh -c "\"\$1\" write '$HOME/made-by-run'; exit 3" sh "$PROBE" 2>&1)
case $TEST_BACKEND in
namespaces)
	case $out in *"ok"*) pass "a file of your home is made in the fresh home mounted there" ;;
	*) fail "a file of your home is made in the fresh home mounted there"; diag "$out" ;; esac
	case $out in *"file to make"*) fail "and it is not named to make"; diag "$out" ;; *) pass "and it is not named to make" ;; esac ;;
*)
	case $out in *"errno EACCES"*) pass "a file of your home cannot be made (EACCES)" ;;
	*) fail "a file of your home cannot be made (EACCES)"; diag "$out" ;; esac
	case $out in *"--write $HOME "* | *"--write $HOME;"* | *"--write $HOME") fail "your home's --write, which stockade refuses, is not offered"; diag "$out" ;;
	*) pass "your home's --write, which stockade refuses, is not offered" ;; esac
	case $out in *"hint: the command names a file to make in a folder the run may not write: $HOME/made-by-run; a --write of $HOME is refused (the run would reach stockade's own state)"*)
		pass "the line says why, and what works instead" ;;
	*) fail "the line says why, and what works instead"; diag "$out" ;; esac
	out=$(cd "$W" && jail --write "$HOME" -- true 2>&1); rc=$?
	[ "$rc" = 125 ] && pass "a --write of your home is refused, as the line says" || { fail "a --write of your home is refused, as the line says"; diag "rc=$rc $out"; }
	: >"$HOME/made-by-run"
	out=$(cd "$W" && jail --write "$HOME/made-by-run" -- "$PROBE" write "$HOME/made-by-run" 2>&1)
	case $out in *"ok"*) pass "the file made outside first and granted with --write is written" ;;
	*) fail "the file made outside first and granted with --write is written"; diag "$out" ;; esac
	rm -f "$HOME/made-by-run"
	# why agrees: a file not made yet in your home gets its own
	# --write once it exists, not the home's; a folder that holds
	# stockade's state gets none (on main before this: --write $HOME,
	# and --write $HOME/.local, each refused)
	out=$(cd "$W" && "$STOCKADE" why --backend "$TEST_BACKEND" "$HOME/made-by-run" 2>&1 | sed -n '/^write/,$p')
	case $out in *"allow: --write $HOME/made-by-run once it exists (make it outside the jail first: a --write of its folder $HOME is refused"*)
		pass "why of a file to make in your home: its own --write, once made" ;;
	*) fail "why of a file to make in your home: its own --write, once made"; diag "$out" ;; esac
	: >"$HOME/made-by-run"
	apply_each "why's --write of a file in your home, once made" "$out" ok -- -- "$PROBE" write "$HOME/made-by-run"
	mkdir -p "$HOME/.local/state"
	out=$(cd "$W" && "$STOCKADE" why --backend "$TEST_BACKEND" "$HOME/.local" 2>&1 | sed -n '/^write/,$p')
	case $out in *"allow: none: a --write of $HOME/.local is refused, for the run would reach stockade's own state"*)
		pass "why of a folder holding stockade's state offers no --write" ;;
	*) fail "why of a folder holding stockade's state offers no --write"; diag "$out" ;; esac
	out=$(cd "$W" && jail --write "$HOME/.local" -- true 2>&1); rc=$?
	[ "$rc" = 125 ] && pass "which stockade indeed refuses" || { fail "which stockade indeed refuses"; diag "rc=$rc $out"; } ;;
esac
rm -f "$HOME/made-by-run"
out=$(cd "$W" && jail -- sh -c "cat '$ELSEWHERE/f' >/dev/null" 2>&1)
case $out in *"names what the jail cannot read: $ELSEWHERE/f;"*) pass "a path in a shell's -c script is named too" ;;
*) fail "a path in a shell's -c script is named too"; diag "$out" ;; esac
rel=$(python3 -c 'import os,sys; print(os.path.relpath(sys.argv[1], sys.argv[2]))' "$ELSEWHERE/f" "$W")
out=$(cd "$W" && jail -- cat "$rel" 2>&1)
case $out in *"names what the jail cannot read: $ELSEWHERE/f;"*) pass "a relative path ($rel) is named as it is" ;;
*) fail "a relative path is named as it is"; diag "$out" ;; esac
out=$(cd "$W" && jail -- sh -c "cat '$ELSEWHERE/f' >/dev/null; exit 0" 2>&1)
case $out in *"names what the jail"*) fail "a command that succeeds is told nothing"; diag "$out" ;;
*) pass "a command that succeeds is told nothing" ;; esac
# a credential of the home, which the run does not watch (nothing grants
# its folder): named with its rule, never offered; why is
mkdir -p "$HOME/.aws"
echo k >"$HOME/.aws/credentials"
out=$(cd "$W" && jail -- cat "$HOME/.aws/credentials" 2>&1)
case $out in *"names what the jail hides: $HOME/.aws/credentials (default: "*"stockade why $HOME/.aws/credentials says why"*)
	case $out in *"--read $HOME/.aws/credentials"*) fail "a hidden path it names is not offered"; diag "$out" ;;
	*) pass "a hidden credential it names is named with its rule, not offered; why is" ;; esac ;;
*) fail "a hidden credential it names is named with its rule"; diag "$out" ;; esac
rm -rf "$HOME/.aws"
# a program a hide of yours keeps from the jail: the program and the rule
# are named, with why, and no --read (which the hide would refuse) is
# offered; by --hide and by the user's own file
mkdir -p "$T/hidbin"
cp "$PROBE" "$T/hidbin/tool"
expect_control "control: the tool runs outside the jail" -- "$T/hidbin/tool" cwd
out=$(cd "$W" && PATH="$T/hidbin:$PATH" jail --hide "$T/hidbin/tool" -- tool cwd 2>&1)
st=$?
[ $st -eq 126 ] && case $out in *"hint: the jail hides the program: $T/hidbin/tool (--hide on the command line); stockade why $T/hidbin/tool says why"*) true ;; *) false ;; esac &&
	! printf '%s
' "$out" | grep -q -- "--read" &&
	pass "a program hidden by --hide: named with its rule and why, no --read offered" ||
	{ fail "a program hidden by --hide: named with its rule and why, no --read offered (status $st)"; diag "$out"; }
printf '[sandbox]\nhide = %s\n' "$T/hidbin/tool" >"$CONF"
out=$(cd "$W" && PATH="$T/hidbin:$PATH" jail -- tool cwd 2>&1)
st=$?
[ $st -eq 126 ] && case $out in *"hint: the jail hides the program: $T/hidbin/tool ($CONF line 2 (hide)); stockade why $T/hidbin/tool says why"*) true ;; *) false ;; esac &&
	! printf '%s
' "$out" | grep -q -- "--read" &&
	pass "a program hidden by the user's own file: the file and line named, no --read offered" ||
	{ fail "a program hidden by the user's own file: the file and line named, no --read offered (status $st)"; diag "$out"; }
out=$("$STOCKADE" why -C "$W" "$T/hidbin/tool" 2>&1)
case $out in *"hide $T/hidbin/tool ($CONF line 2 (hide))"*) pass "and stockade why names that rule" ;;
*) fail "and stockade why names that rule"; diag "$out" ;; esac
rm -f "$CONF"
# a hide the run watches names the open itself, with its fix: once
echo k >"$ELSEWHERE/f.key"
out=$(cd "$W" && jail --hide "$ELSEWHERE/f.key" -- cat "$ELSEWHERE/f.key" 2>&1)
n=$(printf '%s\n' "$out" | grep -c "f.key")
case $out in *"refused: open $ELSEWHERE/f.key"*)
	[ "$n" -le 2 ] && ! printf '%s' "$out" | grep -q "names what the jail" &&
		pass "a watched hide's open is named once, by its refusal" ||
		{ fail "a watched hide's open is named once"; diag "$out"; } ;;
*) fail "a watched hide's open is named by its refusal"; diag "$out" ;; esac
# a hide of yours: why says to take it away; without it, read
echo secret >"$W/.env"
expect_probe "--hide .env: refused" "errno $(covered_errno)" -- in_jail --hide .env -- "$PROBE" read "$W/.env"
out=$(cd "$W" && "$STOCKADE" why --hide .env .env 2>&1)
case $out in *"allow: take away the hide it names (--hide on the command line)"*)
	expect_probe "why's fix: without the --hide, read" ok -- in_jail -- "$PROBE" read "$W/.env" ;;
*) fail "why names the --hide to take away"; diag "$out" ;; esac

# ---- a hidden path touched: named with its rule, on either backend (the
#      run has a hide the command can reach: its opens go to stockade
#      first), and the fix the line proposes works. The control, on main
#      before this: the probe got EACCES and stockade said nothing.
mkdir -p "$W/secrets"
echo k >"$W/secrets/key"
expect_control "outside: a file in the folder to hide is read" -- "$PROBE" read "$W/secrets/key"
refusal "--hide secrets: a file in it is refused" "errno EACCES" -- --hide secrets -- "$PROBE" read "$W/secrets/key"
case $OUT in *"refused: open $W/secrets/key (EACCES); to allow: take away the hide it names (--hide on the command line)"*)
	pass "the open of a hidden file is named with the hide and where it came from" ;;
*) fail "the open of a hidden file is named with the hide and where it came from"; diag "$OUT" ;; esac
expect_probe "the line's fix: without the --hide, read" ok -- in_jail -- "$PROBE" read "$W/secrets/key"
# a hide of a settings file (the user's own): named with its file and line
printf '[sandbox]\nhide = %s\n' "$W/secrets" >"$CONF"
refusal "hide = secrets in stockade.ini: refused" "errno EACCES" -- -- "$PROBE" read "$W/secrets/key"
case $OUT in *"refused: open $W/secrets/key (EACCES); to allow: take away the hide it names ($CONF line 2 (hide))"*)
	pass "a settings file's hide is named with its file and line" ;;
*) fail "a settings file's hide is named with its file and line"; diag "$OUT" ;; esac
rm -f "$CONF"
# a credential inside a tree you grant: named, and the one path given
mkdir -p "$HOME/.config/gh"
echo token >"$HOME/.config/gh/hosts.yml"
echo other >"$HOME/.config/other"
expect_control "outside: the credential is read" -- "$PROBE" read "$HOME/.config/gh/hosts.yml"
expect_probe "--read ~/.config: a file beside the credential is read" ok -- in_jail --read "$HOME/.config" -- "$PROBE" read "$HOME/.config/other"
refusal "--read ~/.config: the credential in it is refused" "errno EACCES" -- --read "$HOME/.config" -- "$PROBE" read "$HOME/.config/gh/hosts.yml"
case $OUT in *"refused: open $HOME/.config/gh/hosts.yml (EACCES); to allow: --read $HOME/.config/gh/hosts.yml"*)
	pass "a hidden credential's open is named, with the one path to read" ;;
*) fail "a hidden credential's open is named, with the one path to read"; diag "$OUT" ;; esac
apply_each "a hidden credential" "$OUT" ok -- --read "$HOME/.config" -- "$PROBE" read "$HOME/.config/gh/hosts.yml"
# a credential of the home the run does not grant: not in reach, so no
# open goes to stockade and nothing is named; -v names it too
refusal "a credential of the home, not granted: out of reach" "errno $([ "$TEST_BACKEND" = namespaces ] && echo ENOENT || echo EACCES)" -- -- "$PROBE" read "$HOME/.config/gh/hosts.yml"
case $OUT in *"refused: open"*) fail "without -v it is not named (no open goes to stockade)"; diag "$OUT" ;;
*) pass "without -v it is not named (no open goes to stockade)" ;; esac
refusal "-v: the credential, out of reach" "errno $([ "$TEST_BACKEND" = namespaces ] && echo ENOENT || echo EACCES)" -- -v -- "$PROBE" read "$HOME/.config/gh/hosts.yml"
case $OUT in *"refused: open $HOME/.config/gh/hosts.yml ($([ "$TEST_BACKEND" = namespaces ] && echo ENOENT || echo EACCES)); to allow: --read $HOME/.config/gh/hosts.yml"*)
	pass "-v: an open of a credential the run does not hold is named, with the one path to read" ;;
*) fail "-v: an open of a credential the run does not hold is named, with the one path to read"; diag "$OUT" ;; esac
apply_each "-v: a credential out of reach" "$OUT" ok -- -v -- "$PROBE" read "$HOME/.config/gh/hosts.yml"
# a write to it, and a new file beside it: each its own fix (why's)
refusal "--read ~/.config: a write to the credential is refused" "errno EACCES" -- --read "$HOME/.config" -- "$PROBE" append "$HOME/.config/gh/hosts.yml"
case $OUT in *"to allow: --write $HOME/.config/gh/hosts.yml"*) pass "a write to a hidden credential: --write of that one path" ;;
*) fail "a write to a hidden credential: --write of that one path"; diag "$OUT" ;; esac
apply_each "a write to a hidden credential" "$OUT" ok -- --read "$HOME/.config" -- "$PROBE" append "$HOME/.config/gh/hosts.yml"
refusal "--read ~/.config: a new file in the credential's folder is refused" "errno EACCES" -- --read "$HOME/.config" -- "$PROBE" write "$HOME/.config/gh/made"
case $OUT in *"to allow: --write $HOME/.config/gh (it does not exist yet: its folder)"*) pass "a new file in a hidden folder: --write of the folder" ;;
*) fail "a new file in a hidden folder: --write of the folder"; diag "$OUT" ;; esac
apply_each "a new file in a hidden folder" "$OUT" ok -- --read "$HOME/.config" -- "$PROBE" write "$HOME/.config/gh/made"
rm -f "$HOME/.config/gh/made"
# the one path given leaves the rest of the credential's folder hidden
expect_probe "--read of one file in it: a new file there is still refused" "errno $([ "$TEST_BACKEND" = namespaces ] && echo EROFS || echo EACCES)" -- \
	in_jail --read "$HOME/.config" --read "$HOME/.config/gh/hosts.yml" -- "$PROBE" write "$HOME/.config/gh/new"
[ -e "$HOME/.config/gh/new" ] && fail "nothing was made in the credential's folder" || pass "nothing was made in the credential's folder"
if [ "$TEST_BACKEND" = namespaces ]; then
	expect_probe "--read of one file in it: the folder is not listed" "errno EACCES" -- \
		in_jail --read "$HOME/.config" --read "$HOME/.config/gh/hosts.yml" -- "$PROBE" ls "$HOME/.config/gh"
fi
# a run with no hide the command can reach sends no open to stockade
out=$(cd "$W" && "$STOCKADE" explain -v 2>&1)
case $out in *"first: every open to the listener"*) fail "no hide in reach: the opens stay in the kernel"; diag "$out" ;;
*) pass "no hide in reach: the opens stay in the kernel" ;; esac
out=$(cd "$W" && "$STOCKADE" explain -v --hide secrets 2>&1)
case $out in *"first: every open to the listener"*) pass "a hide in reach: the opens go to stockade first" ;;
*) fail "a hide in reach: the opens go to stockade first"; diag "$out" ;; esac
rm -rf "$W/secrets" "$HOME/.config/gh" "$HOME/.config/other"

# ---- a script whose interpreter lies outside: the hint's --read
mkdir -p "$ELSEWHERE/interp"
cp /bin/sh "$ELSEWHERE/interp/sh"
printf '#!%s\necho "probe: started script"\necho "probe: ok"\n' "$ELSEWHERE/interp/sh" >"$W/script"
chmod 755 "$W/script"
expect_control "outside: the script runs" -- "$W/script"
out=$(in_jail -- "$W/script" 2>&1)
st=$?
if [ $st -eq 126 ] || [ $st -eq 127 ]; then
	pass "the script's interpreter is out of reach ($st)"
	apply_each "a script's interpreter" "$out" ok -- -- "$W/script"
else
	fail "the script's interpreter is out of reach (status $st)"
	diag "$out"
fi

# ---- limits: the size or count proposed
in_jail --memory 64M --report "$T/mem.json" -- true
if python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); sys.exit(0 if any(e.startswith("memory: at most 64.0 MiB") for e in r["enforced"]) else 1)' "$T/mem.json"; then
	expect_probe "past --memory 64M the run is killed" "signal KILL" -- in_jail --memory 64M -- "$PROBE" alloc 96
	apply_each "the memory limit" "$PROBE_OUTPUT" ok -- --memory 64M -- "$PROBE" alloc 96
else
	diag "no memory bound here: its fix is not proposed"
fi
mkdir -p "$T/marks"
expect_probe "--max-procs 20: forks past it fail" "errno EAGAIN" -- in_jail --max-procs 20 -- "$PROBE" spawn-many 30
if printf '%s\n' "$PROBE_OUTPUT" | grep -q -- 'to allow: --max-procs'; then
	apply_each "the process limit" "$PROBE_OUTPUT" ok -- --max-procs 20 -- "$PROBE" spawn-many 30
else
	diag "no line for the process limit here (RLIMIT_NPROC: the kernel does not count refusals)"
fi

# ---- a rename over .git/config in the namespace jail: --backend landlock
if [ "$TEST_BACKEND" = namespaces ]; then
	git -C "$W" init -q
	out=$(in_jail -- git -C "$W" config user.name jailed 2>&1)
	case $out in *"hint: set it outside the jail, or run with --backend landlock"*)
		out=$(cd "$W" && "$STOCKADE" --backend landlock -- git -C "$W" config user.name jailed 2>&1)
		[ "$(git -C "$W" config user.name)" = jailed ] && pass "the hint's --backend landlock: git config works, the inert setting kept" ||
			{ fail "the hint's --backend landlock: git config works"; diag "$out"; } ;;
	*) fail "a refused git config names --backend landlock"; diag "$out" ;;
	esac
fi
plan_done
