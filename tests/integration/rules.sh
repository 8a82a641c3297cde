# Every rule the user asks for is honoured or the run is refused with an
# error naming the option and the path (exit 125): --hide / (which would
# take the workspace, and the system with it), a hide of the workspace's
# parent, a rule another decides on its own path (--write /usr, which the
# defaults read), a rule on the jail's own /proc or /dev. A --hide of the
# user's also takes the built-in grants beneath it. (A --read of a
# credential's own path stands: fs.sh.)
. tests/lib.sh

new_places
NONCE=$(nonce_new)
canary_home "$HOME" "$NONCE"
in_jail() {
	jail -q --net off -C "$W" "$@"
}
# refused DESC OPTION PATH ARGS...: exit 125, the command never ran, and
# the message names OPTION and PATH.
refused() {
	local desc=$1 opt=$2 path=$3
	shift 3
	rm -f "$T/ran"
	(cd "$W" && in_jail "$@" -- sh -c 'touch "$0"' "$T/ran") 2>"$T/err"
	local st=$?
	if [ $st -eq 125 ] && [ ! -e "$T/ran" ] && grep -q -- "$opt '$path'" "$T/err"; then
		pass "THREATS 66: $desc: refused, naming $opt '$path'"
	else
		fail "THREATS 66: $desc: refused, naming $opt '$path' (status $st)"
		diag "$(cat "$T/err")"
	fi
}

expect_probe "THREATS 66 control: the workspace is writable with no option" ok -- in_jail -- "$PROBE" write "$W/control"
refused "--hide /" --hide / --hide /
refused "--hide .. (the workspace's parent)" --hide "$T" --hide ..
refused "--hide of the workspace itself" --hide "$W" --hide "$W"
refused "--write of a system tree the defaults read (read beats write on one path)" --write /usr --write /usr
mkdir -p "$W/both"
refused "--write of a path a --read of yours decides" --write "$W/both" --read "$W/both" --write "$W/both"
refused "--read of /proc" --read /proc/1 --read /proc/1
refused "--write of /dev" --write /dev/shm --write /dev/shm

# Honoured: a deeper rule than the default is the user's to make, and a
# same-access rule changes nothing.
expect_probe "--read of a file beneath a hidden directory is honoured: deepest wins" ok -- \
	in_jail --read "$HOME/.ssh/id_rsa" -- "$PROBE" read "$HOME/.ssh/id_rsa"
expect_probe "--read of the workspace makes it read-only" "errno $(readonly_errno)" -- \
	in_jail --read "$W" -- "$PROBE" write "$W/ro"
expect_probe "the design's example: --write . --read .git --hide .env" ok -- \
	sh -c 'cd "$0" && mkdir -p .git && touch .env && exec "$@"' "$W" "${JAIL[@]}" -q --net off --write . --read .git --hide .env -- "$PROBE" ls .git

# A hide of the user's takes the built-in grants beneath it: a toolchain
# the defaults read in the home, hidden with the home's part it lies in.
mkdir -p "$HOME/.cargo/bin"
printf 'tool\n' >"$HOME/.cargo/bin/tool"
expect_probe "control: the toolchain on PATH is readable" ok -- \
	env PATH="$HOME/.cargo/bin:$PATH" "${JAIL[@]}" -q --net off -C "$W" -- "$PROBE" read "$HOME/.cargo/bin/tool"
expect_probe "--hide ~/.cargo hides it, the default grant beneath included" "errno $(hidden_errno)" -- \
	env PATH="$HOME/.cargo/bin:$PATH" "${JAIL[@]}" -q --net off -C "$W" --hide "$HOME/.cargo" -- "$PROBE" read "$HOME/.cargo/bin/tool"
expect_probe "a rule of the user's beneath it stands" ok -- \
	env PATH="$HOME/.cargo/bin:$PATH" "${JAIL[@]}" -q --net off -C "$W" --hide "$HOME/.cargo" --read "$HOME/.cargo/bin" -- "$PROBE" read "$HOME/.cargo/bin/tool"
expect_control "outside: the toolchain file is there" -- "$PROBE" read "$HOME/.cargo/bin/tool"

plan_done
