# The seatbelt backend as it can be checked on Linux: explain prints the
# profile (its quoting, the network modes, the hides); a path SBPL cannot
# express is refused by name; a run is refused off macOS and the command
# never starts. Whether sandbox-exec enforces the profile needs a Mac.
# backends: namespaces
. tests/lib.sh

new_places
mkdir -p "$HOME/.ssh" "$W/secret dir"
explain() {
	"$STOCKADE" explain --backend seatbelt "$@"
}

out=$(explain -C "$W" --hide "$W/secret dir" -- true 2>/dev/null)
st=$?
[ $st -eq 0 ] && pass "explain --backend seatbelt runs on Linux" || fail "explain --backend seatbelt runs on Linux (status $st)"
for want in '(version 1)' '(deny default)' \
	"(allow file-read* file-write* process-exec file-map-executable (subpath \"$W\")" \
	"(deny file-read* file-write* process-exec file-map-executable (subpath \"$HOME/.ssh\")" \
	"(deny file-read* file-write* process-exec file-map-executable (subpath \"$W/secret dir\")" \
	"(deny file-write-unlink (literal \"$W\")" \
	'(allow network-outbound (remote ip "localhost:*"))'; do
	case $out in *"$want"*) pass "the profile has: $want" ;; *) fail "the profile has: $want"; diag "$out" ;; esac
done
# The workspace rule comes after the home's hides it lies beside, and the
# hide beneath the workspace after the workspace: the last match decides.
ws_line=$(printf '%s\n' "$out" | grep -n -F "(allow file-read* file-write* process-exec file-map-executable (subpath \"$W\")" | cut -d: -f1 | head -1)
hide_line=$(printf '%s\n' "$out" | grep -n -F "(subpath \"$W/secret dir\")" | grep deny | cut -d: -f1 | head -1)
[ -n "$ws_line" ] && [ -n "$hide_line" ] && [ "$hide_line" -gt "$ws_line" ] &&
	pass "the deeper hide is written after the workspace" || fail "the deeper hide is written after the workspace ($ws_line, $hide_line)"

off=$(explain -C "$W" --net off -- true 2>/dev/null)
case $off in *'(remote ip'* | *'(local ip'*) fail "--net off: no address is allowed" ;; *) pass "--net off: no address is allowed" ;; esac
on=$(explain -C "$W" --net on -- true 2>/dev/null)
case $on in *'(allow network-outbound (remote ip "*:*"))'*) pass "--net on: any host" ;; *) fail "--net on: any host" ;; esac
# Unix sockets only by path, in every mode: no line allows them wholesale.
for o in "$off" "$out" "$on"; do
	if printf '%s\n' "$o" | grep -E '^\(allow network[^ ]*( network[^ ]*)* *\)|\(allow network\*' >/dev/null; then
		fail "no mode allows every socket"
		break
	fi
done && pass "no mode allows every socket"

# THREATS 58: on macOS a unix-socket connect is a network operation: the
# profile denies it under a hidden path (~/.ssh, an agent's socket there)
# as it denies the file. THREATS 59: no mach service that opens programs
# or reads the Keychain (LaunchServices, SecurityServer), no lsopen, no
# POSIX shared memory beyond notify(3)'s page. The profile's text only:
# whether sandbox-exec enforces it needs a Mac.
case $out in *"(deny network-outbound (remote unix-socket (subpath \"$HOME/.ssh\")"*) pass "THREATS 58: a unix-socket connect under ~/.ssh is denied as a network operation" ;;
*) fail "THREATS 58: a unix-socket connect under ~/.ssh is denied as a network operation"; diag "$(printf '%s\n' "$out" | grep -F .ssh)" ;; esac
allows=$(printf '%s\n' "$out" | grep '^(allow')
bad59=$(printf '%s\n' "$allows" | grep -E 'launchservicesd|SecurityServer|lsopen|coreservices|appleevents|ipc-posix-shm-write' | head -3)
[ -n "$allows" ] && [ -z "$bad59" ] && pass "THREATS 59: no allow line names LaunchServices, SecurityServer, lsopen, Apple events or a shm write" ||
	{ fail "THREATS 59: no allow line names LaunchServices, SecurityServer, lsopen, Apple events or a shm write"; diag "$bad59"; }

# Quoting: a workspace whose name has quotes, a backslash and parentheses.
Q="$T/q \"x\" \\ (y)"
mkdir -p "$Q"
qout=$(cd "$Q" && explain -- true 2>/dev/null)
case $qout in *'(subpath "'"$T"'/q \"x\" \\ (y)")'*) pass "quotes, backslashes and parentheses are escaped" ;; *) fail "quotes, backslashes and parentheses are escaped"; diag "$(printf '%s\n' "$qout" | grep -F '(y)' | head -2)" ;; esac

# A newline has no SBPL spelling: refused, naming the path, exit 125.
N="$T/new
line"
mkdir -p "$N"
err=$(cd "$N" && explain -- true 2>&1 >/dev/null)
st=$?
[ $st -eq 125 ] && pass "a path with a newline: exit 125" || fail "a path with a newline: exit 125 (status $st)"
case $err in *"cannot write the path '$T/new\\nline' in a Seatbelt profile"*) pass "the refusal names the path" ;; *) fail "the refusal names the path"; diag "$err" ;; esac

# A run needs macOS: refused, and the command never starts.
err=$("$STOCKADE" --backend seatbelt -C "$W" -- sh -c "touch '$W/ran'" 2>&1)
st=$?
[ $st -eq 125 ] && pass "a run with --backend seatbelt on Linux: exit 125" || fail "a run with --backend seatbelt on Linux: exit 125 (status $st)"
case $err in *"Seatbelt runs on macOS only"*) pass "it says that it needs macOS" ;; *) fail "it says that it needs macOS"; diag "$err" ;; esac
[ ! -e "$W/ran" ] && pass "the command did not run" || fail "the command did not run"
"$STOCKADE" --backend seatbelt --report "$T/report.json" -C "$W" -- true 2>/dev/null
if python3 - "$T/report.json" <<'PY'; then
import json, sys
d = json.load(open(sys.argv[1]))
assert d["backend"] == "seatbelt" and d["exit"] is None
assert any(g["what"] == "everything" for g in d["unenforced"])
PY
	pass "the report says seatbelt did not run"
else
	fail "the report says seatbelt did not run"
fi

plan_done
