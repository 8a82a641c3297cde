# A grant comes only from the person: the command line, the user's own
# file where no run can write it, a trusted file as it meant when it was
# trusted. Each attack of issue 24 is played as a jailed run (or a file of
# the repository's) would: the control shows the same thing granted where
# the person gave it (outside the jail, or once trusted), then the attack
# is refused, or gives nothing to the next run.
. tests/lib.sh

T=$(tmpdir_new)
export HOME="$T/home" XDG_STATE_HOME="$T/state"
# The workspace in the home, as most are: what the defaults read of the
# home's PATH directories reaches it.
W="$HOME/ws"
mkdir -p "$HOME/private" "$W"
echo "private notes" >"$HOME/private/notes.txt"
chmod 700 "$HOME"
NOTES="$HOME/private/notes.txt"
USER_INI="$HOME/.config/stockade/stockade.ini"
in_jail() {
	jail -q --net off -C "$W" "$@"
}
# contains DESC TEXT PATTERN: TEXT holds PATTERN (a fixed string).
contains() {
	case $2 in
	*"$3"*) pass "$1" ;;
	*) fail "$1"; diag "want: $3"; diag "$2" ;;
	esac
}

expect_control "THREATS 71 control: outside, ~/private/notes.txt is readable" -- "$PROBE" read "$NOTES"

# ----------------------------------------------------------------- THREATS 71
# A settings file widens through a key that is not a grant: the PATH the
# file sets, which the defaults derive a read from.
cat >"$W/stockade.ini" <<EOF
[sandbox]
env = PATH=$HOME/private:/usr/bin:/bin
EOF
fails "THREATS 71: env = PATH=~/private in an untrusted file is refused, naming file, line and key" \
	"$W/stockade.ini line 2: env: 'PATH=$HOME/private:/usr/bin:/bin' widens the jail: with it the built-in defaults would read '$HOME/private'" \
	-- in_jail -- "$PROBE" read "$NOTES"
out=$(in_jail -- true 2>&1)
contains "THREATS 71: and says how to trust it" "$out" "stockade trust '$W/stockade.ini'"
"$STOCKADE" trust "$W/stockade.ini" 2>/dev/null
expect_control "THREATS 71 control: trusted with the hint's command, the same file grants the read" -- \
	in_jail -- "$PROBE" read "$NOTES"
out=$("$STOCKADE" why -C "$W" "$NOTES" 2>&1)
contains "THREATS 71: why says the grant came from the PATH the trusted file set" "$out" \
	"from:  built in: PATH directory $HOME/private, from PATH as $W/stockade.ini line 2 (env) sets it"
"$STOCKADE" trust --revoke "$W/stockade.ini" 2>/dev/null
# Not a list of names: a toolchain's variable the defaults read too.
mkdir -p "$HOME/private/bin"
cat >"$W/stockade.ini" <<EOF
[sandbox]
env = CARGO_HOME=$HOME/private
EOF
fails "THREATS 71: env = CARGO_HOME=~/private in an untrusted file is refused too" \
	"line 2: env: 'CARGO_HOME=$HOME/private' widens the jail: with it the built-in defaults would read '$HOME/private'" \
	-- env PATH="$HOME/private/bin:$PATH" "${JAIL[@]}" -q --net off -C "$W" -- true
"$STOCKADE" trust "$W/stockade.ini" 2>/dev/null
expect_control "THREATS 71 control: trusted, it makes ~/private cargo's home, read" -- \
	env PATH="$HOME/private/bin:$PATH" "${JAIL[@]}" -q --net off -C "$W" -- "$PROBE" read "$NOTES"
"$STOCKADE" trust --revoke "$W/stockade.ini" 2>/dev/null
rm -f "$W/stockade.ini"

# ----------------------------------------------------------------- THREATS 72
# The user's own [command] section, and a repository whose file puts its
# tools/ first on PATH with a cargo that is the shell, which runs the
# repository's script named like cargo's first word.
mkdir -p "$T/sys/bin" "$HOME/.config/stockade" "$W/tools"
cp "$PROBE" "$T/sys/bin/cargo"
cp "$PROBE" "$W/probe"
cat >"$USER_INI" <<'EOF'
[command "cargo connect-tcp"]
network = on
EOF
netpeer_start tcp 127.0.0.1 0
PORT=$PEER_PORT
REFUSED=ECONNREFUSED
[ "$TEST_BACKEND" = landlock ] && REFUSED=EACCES
expect_control "THREATS 72 control: outside, the host's listener answers" -- "$PROBE" connect-tcp 127.0.0.1 "$PORT"
expect_control "THREATS 72 control: your cargo takes your section's network" -- \
	env PATH="$T/sys/bin:$PATH" "${JAIL[@]}" -q -C "$W" -- cargo connect-tcp 127.0.0.1 "$PORT"
ln -s /bin/sh "$W/tools/cargo"
printf '#!/bin/sh\nexec "%s/probe" connect-tcp "$@"\n' "$W" >"$W/connect-tcp"
cat >"$W/stockade.ini" <<EOF
[sandbox]
env = PATH=tools:$T/sys/bin:/usr/bin:/bin
EOF
expect_probe "THREATS 72: the repository's cargo (a shell running its script) does not take your section" \
	"errno $REFUSED" -- env PATH="$T/sys/bin:$PATH" "${JAIL[@]}" -q -C "$W" -- cargo connect-tcp 127.0.0.1 "$PORT"
# The same file as your cargo, reached through a link a run could plant.
ln -sfn "$T/sys/bin/cargo" "$W/tools/cargo"
expect_probe "THREATS 72: your own cargo, reached through a link in the workspace, does not take it either" \
	"errno $REFUSED" -- env PATH="$T/sys/bin:$PATH" "${JAIL[@]}" -q -C "$W" --read "$T/sys/bin" -- cargo connect-tcp 127.0.0.1 "$PORT"
out=$(env PATH="$T/sys/bin:$PATH" "$STOCKADE" explain --backend "$TEST_BACKEND" -C "$W" -- cargo connect-tcp 127.0.0.1 "$PORT" 2>&1)
contains "THREATS 72: explain says why the section did not match" "$out" \
	"does not match: the program '$T/sys/bin/cargo' is reached through the link '$W/tools/cargo' in '$W', which the run may write"
rm -rf "$W/stockade.ini" "$W/tools" "$W/connect-tcp" "$W/probe" "$USER_INI"

# ----------------------------------------------------------------- THREATS 73
# The user's own file where it is missing, planted by a run that can write
# there.
echo "[sandbox]" >"$USER_INI"
echo "read = $HOME/private" >>"$USER_INI"
expect_control "THREATS 73 control: your own file, made outside the jail, applies" -- in_jail -- "$PROBE" read "$NOTES"
rm -f "$USER_INI"
rmdir "$HOME/.config/stockade"
fails "THREATS 73: a run that could write ~/.config (where the file is missing) is refused" \
	"your own settings file '$USER_INI' \(not there yet\) could be made from the jail: the run may write '$HOME/.config'" \
	-- in_jail --write "$HOME/.config" -- true
out=$(in_jail --write "$HOME/.config" -- true 2>&1)
contains "THREATS 73: and says what to do" "$out" "hint: let the run write less than '$HOME/.config'"
mkdir -p "$HOME/.config/nvim"
expect_probe "THREATS 73 control: as the hint says, a narrower write runs" ok -- in_jail --write "$HOME/.config/nvim" -- "$PROBE" write "$HOME/.config/nvim/x"
# A dotfiles checkout the workspace holds, ~/.config linking into it.
rm -rf "$HOME/.config"
mkdir -p "$W/dotfiles/config"
ln -s "$W/dotfiles/config" "$HOME/.config"
in_jail -- sh -c 'mkdir -p dotfiles/config/stockade && printf "[sandbox]\nread = %s\n" "$1" >dotfiles/config/stockade/stockade.ini' \
	sh "$HOME/private" 2>/dev/null
[ ! -e "$USER_INI" ] && pass "THREATS 73: the file a run planted through the dotfiles checkout is not left there" ||
	{ fail "THREATS 73: the file a run planted through the dotfiles checkout is not left there"; diag "$(cat "$USER_INI")"; }
expect_probe "THREATS 73: the next run does not read ~/private" "errno $(hidden_errno)" -- in_jail -- "$PROBE" read "$NOTES"
rm -f "$HOME/.config"
mkdir -p "$HOME/.config"

# ----------------------------------------------------------------- THREATS 74
# A trusted file's relative path, redirected by a symlink a run planted.
mkdir -p "$W/fixtures"
echo fixture >"$W/fixtures/a"
cat >"$W/stockade.ini" <<'EOF'
[profile t]
read = fixtures
EOF
"$STOCKADE" trust "$W/stockade.ini" 2>/dev/null
expect_control "THREATS 74 control: the trusted profile reads its fixtures" -- in_jail -p t -- "$PROBE" read "$W/fixtures/a"
in_jail -- sh -c 'rm -rf fixtures && ln -s "$1" fixtures' sh "$HOME/private"
[ -L "$W/fixtures" ] && pass "THREATS 74 control: a run without the profile replaced fixtures/ by a symlink" ||
	fail "THREATS 74 control: a run without the profile replaced fixtures/ by a symlink"
fails "THREATS 74: the next --profile run is refused, naming the key" \
	"cannot read 'fixtures' in $W/stockade.ini line 2 \(read\): it leads to '$HOME/private' through '$W/fixtures'" \
	-- in_jail -p t -- "$PROBE" read "$NOTES"
out=$(in_jail -p t -- true 2>&1)
contains "THREATS 74: and says how to name the place if it is meant" "$out" "(read = $HOME/private)"
printf '[profile t]\nread = %s\n' "$HOME/private" >"$W/stockade.ini"
"$STOCKADE" trust "$W/stockade.ini" 2>/dev/null
expect_control "THREATS 74 control: named as it is and trusted, as the hint says, it is read" -- \
	in_jail -p t -- "$PROBE" read "$NOTES"
"$STOCKADE" trust --revoke "$W/stockade.ini" 2>/dev/null
rm -rf "$W/stockade.ini" "$W/fixtures"

# The command line's paths, the same way: a link a run planted in the
# directory stockade runs from (every run's workspace there) does not
# choose what a later run reads or writes, nor its workspace.
mkdir -p "$HOME/autostart"
in_jail -- sh -c 'ln -s "$1" data && mkdir -p packages && ln -s "$2" packages/app && mkdir real && ln -s real inside' \
	sh "$HOME/private" "$HOME/autostart"
[ -L "$W/data" ] && [ -L "$W/packages/app" ] && pass "THREATS 74 control: a run planted data -> ~/private and packages/app -> ~/autostart" ||
	fail "THREATS 74 control: a run planted data -> ~/private and packages/app -> ~/autostart"
fails "THREATS 74: --read of a planted link is refused, naming where it leads" \
	"cannot read 'data' on the command line: it leads to '$HOME/private' through '$W/data'" \
	-- sh -c 'cd "$1" && shift && exec "$@"' sh "$W" "${JAIL[@]}" --net off --read data -- "$PROBE" read "$W/data/notes.txt"
out=$(cd "$W" && "${JAIL[@]}" --net off --read data -- true 2>&1)
contains "THREATS 74: and says how to name the place if it is meant" "$out" "(--read $HOME/private)"
fails "THREATS 74: --write of a planted link is refused" "cannot write 'data' on the command line" \
	-- sh -c 'cd "$1" && shift && exec "$@"' sh "$W" "${JAIL[@]}" --net off --write data -- true
fails "THREATS 74: a workspace (-C) through a planted link is refused" \
	"cannot write 'packages/app' on the command line: it leads to '$HOME/autostart'" \
	-- sh -c 'cd "$1" && shift && exec "$@"' sh "$W" "${JAIL[@]}" --net off -C packages/app -- "$PROBE" write evil
[ ! -e "$HOME/autostart/evil" ] && pass "THREATS 74: nothing was written where the link leads" ||
	fail "THREATS 74: nothing was written where the link leads"
expect_control "THREATS 74 control: named as it is, as the hint says, it is read" -- \
	sh -c 'cd "$1" && shift && exec "$@"' sh "$W" "${JAIL[@]}" -q --net off --read "$HOME/private" -- "$PROBE" read "$NOTES"
expect_control "THREATS 74 control: a link that stays inside the workspace is taken as it leads" -- \
	sh -c 'cd "$1" && shift && exec "$@"' sh "$W" "${JAIL[@]}" -q --net off -C inside -- "$PROBE" write "$W/real/x"
rm -rf "$W/data" "$W/packages" "$W/real" "$W/inside" "$HOME/autostart"

# ----------------------------------------------------------------- THREATS 75
# Built-in grants that follow the workspace: the caller's PATH holds a
# directory of the workspace.
mkdir -p "$HOME/.local/bin"
ln -s "$NOTES" "$HOME/.local/bin/notes"
expect_control "THREATS 75 control: a link in a PATH directory of the home brings what it reaches" -- \
	env PATH="$HOME/.local/bin:$PATH" "${JAIL[@]}" -q --net off -C "$W" -- "$PROBE" read "$NOTES"
rm -f "$HOME/.local/bin/notes"
mkdir -p "$W/.venv/bin" "$W/node_modules/.bin"
in_jail -- ln -s "$NOTES" "$W/.venv/bin/x"
[ -L "$W/.venv/bin/x" ] && pass "THREATS 75 control: a run planted .venv/bin/x -> ~/private/notes.txt" ||
	fail "THREATS 75 control: a run planted .venv/bin/x -> ~/private/notes.txt"
expect_probe "THREATS 75: the next run with .venv/bin on PATH does not read ~/private" "errno $(hidden_errno)" -- \
	env PATH="$W/.venv/bin:$PATH" "${JAIL[@]}" -q --net off -C "$W" -- "$PROBE" read "$NOTES"
out=$(env PATH="$W/.venv/bin:$PATH" "${JAIL[@]}" --net off -C "$W" -- true 2>&1)
contains "THREATS 75: the run says what it did not grant, and why" "$out" \
	"not granted: '$HOME/private' (default: linked from PATH ($W/.venv/bin/x"
in_jail -- sh -c 'rm -rf node_modules/.bin && ln -s "$1" node_modules/.bin' sh "$HOME/private"
[ -L "$W/node_modules/.bin" ] && pass "THREATS 75 control: a run replaced node_modules/.bin by a symlink to ~/private" ||
	fail "THREATS 75 control: a run replaced node_modules/.bin by a symlink to ~/private"
expect_probe "THREATS 75: the next run with node_modules/.bin on PATH does not read ~/private" "errno $(hidden_errno)" -- \
	env PATH="$W/node_modules/.bin:$PATH" "${JAIL[@]}" -q --net off -C "$W" -- "$PROBE" read "$NOTES"
# (asked of the landlock backend: the namespace jail's fresh home covers ~ and answers for it)
out=$(env PATH="$W/node_modules/.bin:$PATH" "$STOCKADE" why --backend landlock -C "$W" "$NOTES" 2>&1)
contains "THREATS 75: why says the built-in grant was not given, and why" "$out" \
	"note:  not granted by default (default: PATH directory $W/node_modules/.bin"
expect_control "THREATS 75 control: outside, the same link reads it" -- "$PROBE" read "$W/node_modules/.bin/notes.txt"

plan_done
