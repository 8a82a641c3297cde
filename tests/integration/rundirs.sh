# The landlock backend's run directories (its home and tmp) never stay
# behind: a killed stockade's are removed by the next run once no process
# holds anything in them, however deep the tree the command made, and a
# live run's are never taken by another run starting. Each case shows the
# directory there first, then gone (or kept).
# backends: landlock
. tests/lib.sh

new_places
# A TMPDIR of this file's own: the run directories go in its base, apart
# from every other run on this host and what they leave.
export TMPDIR="$T/tmp"
mkdir -p "$TMPDIR"
BASE="$TMPDIR/stockade-$(id -u)"

in_jail() {
	jail --net off -C "$W" "$@"
}

# wait_for FILE [SECONDS]: until FILE has something in it (10 s unless
# given: 2,000 mkdirs on a loaded machine take longer).
wait_for() {
	for _ in $(seq $((${2:-10} * 20))); do [ -s "$1" ] && return 0; sleep 0.05; done
	return 1
}

# wait_gone PID: until the process is gone (10 s at most).
wait_gone() {
	for _ in $(seq 200); do alive "$1" || return 0; sleep 0.05; done
	return 1
}

# check DESC CMD...: passes when CMD succeeds.
check() {
	local desc=$1
	shift
	if "$@"; then pass "$desc"; else fail "$desc"; fi
}

# holds PID DIR: the process's cwd, a descriptor or a mapping is in DIR.
holds() {
	{ readlink "/proc/$1/cwd"; ls -l "/proc/$1/fd" 2>/dev/null; cat "/proc/$1/maps" 2>/dev/null; } |
		grep -q -F -- "$(readlink -f "$2")"
}

# A run that ends: what sweeps the base. Its notes go to the log.
another_run() {
	in_jail -- true 2>>"$T/runs.err"
}

# stop PID: a holder of the test's own, killed and reaped.
stop() {
	kill -KILL "$1" 2>/dev/null
	wait "$1" 2>/dev/null
}

# ---- (a) stockade and its keeper killed while the command sleeps

# stockade killed alone, its keeper ends the run and removes the places
# (killed.sh). Both killed (the keeper stopped first, so that it cannot),
# the run directory stays for a later run to sweep; a child of the
# command's, with its cwd in the private tmp, outlives them both unless a
# cgroup of the run's own takes it too.
rm -f "$W/a.home" "$W/a.pid"
"${JAIL[@]}" -v --net off -C "$W" -- sh -c \
	'(cd "$TMPDIR" && exec sleep 300) & echo $! >"$0/a.pid"; echo "$HOME" >"$0/a.home"; wait' "$W" \
	>"$T/a.out" 2>"$T/a.err" &
jpid=$!
wait_for "$W/a.home" && wait_for "$W/a.pid"
leftover=$(cat "$W/a.pid" 2>/dev/null)
[ -n "$leftover" ] && at_exit kill -KILL "$leftover"
kpid=
for _ in $(seq 100); do kpid=$(pgrep -P "$jpid" -x stockade-keeper) && break; sleep 0.05; done
[ -n "$kpid" ] || diag "no keeper of stockade $jpid found to stop"
{ kill -STOP $kpid; kill -KILL "$jpid"; wait "$jpid"; kill -KILL $kpid; } 2>/dev/null
run=$(dirname "$(cat "$W/a.home")")
check "a killed stockade leaves its run directory behind" test -d "$run/tmp"
check "the killed run's directory has its lock file" test -f "$run/lock"

if alive "$leftover"; then
	holder=$leftover
	check "the command's child outlived stockade, its cwd in the run's tmp" holds "$holder" "$run"
else
	# A cgroup took the command's processes with stockade: a holder of
	# the test's own instead.
	wait_gone "$leftover"
	(cd "$run/tmp" && exec sleep 300) &
	holder=$!
	at_exit kill -KILL "$holder"
	check "a process has its cwd in the killed run's tmp" holds "$holder" "$run"
fi
another_run
check "the next run keeps it while a process has its cwd there" test -d "$run/tmp"
stop "$holder"
wait_gone "$holder"

# A mapping alone holds it too: a program run from the tmp, its cwd
# elsewhere.
cp "$(command -v sleep)" "$run/tmp/sleep-copy"
(cd / && exec "$run/tmp/sleep-copy" 300) &
holder=$!
at_exit kill -KILL "$holder"
sleep 0.2
if alive "$holder"; then
	check "a program run from the killed run's tmp maps it" holds "$holder" "$run"
	another_run
	check "the next run keeps it while a process maps a file in it" test -d "$run/tmp"
	stop "$holder"
	wait_gone "$holder"
else
	skip "cannot run a program from '$run/tmp'"
fi

# And an open descriptor, nothing else.
: >"$run/tmp/open"
(cd / && exec sleep 300 3<"$run/tmp/open") &
holder=$!
at_exit kill -KILL "$holder"
check "a process has a file of the killed run's tmp open" holds "$holder" "$run"
another_run
check "the next run keeps it while a process has a file in it open" test -d "$run/tmp"
stop "$holder"
wait_gone "$holder"

another_run
check "the next run removes it once nothing holds it" test ! -e "$run"

# ---- (b) a tree deeper than any walk

rm -f "$W/b.home" "$W/b.made" "$W/b.go"
in_jail -- sh -c '
	echo "$HOME" >"$0/b.home"
	for top in "$HOME" "$TMPDIR"; do
		cd "$top" || exit 1
		i=0
		while [ $i -lt 1000 ]; do mkdir d && cd d || exit 1; i=$((i + 1)); done
		: >leaf
	done
	echo made >"$0/b.made"
	while [ ! -e "$0/b.go" ]; do sleep 0.05; done' "$W" >"$T/b.out" 2>&1 &
jpid=$!
wait_for "$W/b.made" 120
run=$(dirname "$(cat "$W/b.home")")
for place in home tmp; do
	n=$(find "$run/$place" -type d -name d 2>/dev/null | wc -l)
	check "the command made 1,000 levels in its $place (found $n)" test "$n" -ge 1000
done
touch "$W/b.go"
wait "$jpid"
check "the run with the 1,000-level trees ended well" test "$?" -eq 0
check "after it, its run directory is gone" test ! -e "$run"

# ---- (c) a live run's directory, while another run starts

rm -f "$W/c.home" "$W/c.go"
in_jail -- sh -c '
	echo "$HOME" >"$0/c.home"
	while [ ! -e "$0/c.go" ]; do sleep 0.05; done
	echo still >"$TMPDIR/after" && cat "$TMPDIR/after"' "$W" >"$T/c.out" 2>&1 &
jpid=$!
wait_for "$W/c.home"
run=$(dirname "$(cat "$W/c.home")")
check "a live run has its run directory" test -d "$run/tmp"
# Nothing holds it but the lock: the command's cwd is the workspace.
another_run
check "another run starting leaves the live run's directory" test -d "$run/tmp"
touch "$W/c.go"
wait "$jpid"
status=$?
# (stockade's own lines may follow the command's: the note on what the run
# wrote in its tmp)
check "the live run still writes its tmp afterwards" test "$status" -eq 0 -a "$(grep -v '^stockade: ' "$T/c.out" | tail -n 1)" = still

# Runs starting together: none takes another's.
pids=()
for i in 1 2 3 4 5 6; do
	in_jail -- sh -c 'sleep 0.5; echo "$0" >"$TMPDIR/f" && test -d "$HOME" && cat "$TMPDIR/f"' "$i" >"$T/c$i.out" 2>&1 &
	pids+=($!)
done
good=0
for i in 1 2 3 4 5 6; do
	wait "${pids[$((i - 1))]}" && [ "$(tail -n 1 "$T/c$i.out")" = "$i" ] && good=$((good + 1))
done
check "six runs started at once all keep their home and tmp ($good of 6)" test "$good" -eq 6

# ---- (d) an older stockade's directory, with no lock

old="$BASE/run-00000000deadbeef"
mkdir -p "$old/home/.cache/x" "$old/tmp/a/b"
echo data >"$old/tmp/a/b/file"
mkdir -p "$T/outside/sub"
echo keep >"$T/outside/keep"
ln -s "$T/outside" "$old/tmp/link-out"
ln -s "$T/outside/keep" "$old/home/link-file"
chmod 500 "$old/tmp/a/b"
chmod 000 "$old/home/.cache"
check "an older stockade's run directory, without a lock, is there" test -d "$old/tmp/a/b"
# The same, held by a process.
held="$BASE/run-00000000cafef00d"
mkdir -p "$held/tmp"
(cd "$held/tmp" && exec sleep 300) &
holder=$!
at_exit kill -KILL "$holder"
# A directory being made (new-*, just now), and one left long ago by a
# stockade killed while it made one; and something else of the base's.
mkdir -p "$BASE/new-0000000000000001" "$BASE/new-0000000000000002" "$BASE/other"
touch -d '2 hours ago' "$BASE/new-0000000000000002"
another_run
check "the next run removes the lockless one nothing holds" test ! -e "$old"
check "what its symlinks point at is untouched" test "$(cat "$T/outside/keep")" = keep -a -d "$T/outside/sub"
check "a lockless one a process holds is kept" test -d "$held/tmp"
check "a directory being made just now is kept" test -d "$BASE/new-0000000000000001"
check "one being made, left two hours ago, is removed" test ! -e "$BASE/new-0000000000000002"
check "what is not a run directory is left alone" test -d "$BASE/other"
stop "$holder"
wait_gone "$holder"
another_run
check "once its holder is gone, the next run removes it" test ! -e "$held"
rmdir "$BASE/new-0000000000000001" "$BASE/other"

# ---- (f) the workspace's name: HOME and TMPDIR the same from run to run

# As in the namespace jail, where they are the same paths every run:
# caches keyed on them hit (go test's, for a test that read either).
# Each run's directory is still made empty and removed after it.
in_jail -- sh -c 'echo "$HOME $TMPDIR"; echo x >"$TMPDIR/left"' >"$T/f1.out" 2>/dev/null
in_jail -- sh -c 'echo "$HOME $TMPDIR"; ls -A "$TMPDIR"' >"$T/f2.out" 2>/dev/null
f1=$(head -n 1 "$T/f1.out")
f2=$(head -n 1 "$T/f2.out")
case $f1 in "$BASE"/run-w*/home\ "$BASE"/run-w*/tmp) named=yes ;; *) named=no ;; esac
check "a landlock run's home and tmp are in the workspace's own run directory ($f1)" test "$named" = yes
check "the next run's home and tmp are the same paths ($f2)" test -n "$f1" -a "$f1" = "$f2"
check "the next run's tmp is empty: nothing of the last run's" test "$(wc -l <"$T/f2.out")" -eq 1
check "after the runs, the directory is gone" test ! -e "$(dirname "${f1%% *}")"
# A run while another of the workspace is live: a name of its own.
rm -f "$W/f.home" "$W/f.go"
in_jail -- sh -c '
	echo "$HOME" >"$0/f.home"
	while [ ! -e "$0/f.go" ]; do sleep 0.05; done
	echo still >"$TMPDIR/after" && cat "$TMPDIR/after"' "$W" >"$T/f3.out" 2>&1 &
jpid=$!
wait_for "$W/f.home"
in_jail -- sh -c 'echo "$HOME"; echo mine >"$TMPDIR/x" && cat "$TMPDIR/x"' >"$T/f4.out" 2>/dev/null
check "the live run has the workspace's name" test "$(cat "$W/f.home")" = "${f1%% *}"
check "a run beside it has another, and works ($(head -n 1 "$T/f4.out"))" \
	test "$(head -n 1 "$T/f4.out")" != "${f1%% *}" -a "$(tail -n 1 "$T/f4.out")" = mine
touch "$W/f.go"
wait "$jpid"
check "the live run still writes its tmp afterwards" test "$(grep -v '^stockade: ' "$T/f3.out" | tail -n 1)" = still
if command -v go >/dev/null; then
	mkdir -p "$W/gomod"
	printf 'module example.com/m\n\ngo 1.19\n' >"$W/gomod/go.mod"
	cat >"$W/gomod/m_test.go" <<'EOF'
package m

import (
	"os"
	"path/filepath"
	"testing"
)

func TestTempAndHome(t *testing.T) {
	if err := os.WriteFile(filepath.Join(t.TempDir(), "x"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := os.UserHomeDir(); err != nil {
		t.Fatal(err)
	}
}
EOF
	jail --net off -C "$W/gomod" -- go test ./... >"$T/g1.out" 2>&1
	jail --net off -C "$W/gomod" -- go test ./... >"$T/g2.out" 2>&1
	diag "$(cat "$T/g1.out" "$T/g2.out")"
	check "go test: a test that reads TMPDIR and HOME passes" grep -q '^ok' "$T/g1.out"
	check "go test: run again, its result is cached" grep -q '^ok.*(cached)' "$T/g2.out"
else
	skip "go test's cache: go is not installed"
fi

# ---- a live namespace jail's run directory, where a landlock run starts

# Its home and /tmp are tmpfs of its own; its run directory, the mount
# point of its root, is locked all the same: removing it would detach the
# jail's root.
before=$(ls "$BASE")
rm -f "$W/n.ready" "$W/n.go"
"$STOCKADE" --backend namespaces --net off -C "$W" -- sh -c '
	echo ready >"$0/n.ready"
	while [ ! -e "$0/n.go" ]; do sleep 0.05; done
	echo still >/tmp/after && cat /tmp/after' "$W" >"$T/n.out" 2>&1 &
jpid=$!
if wait_for "$W/n.ready"; then
	ns_run=$(comm -13 <(printf '%s\n' "$before") <(ls "$BASE") | head -n 1)
	check "a live namespace jail has a run directory in the base" test -n "$ns_run" -a -d "$BASE/$ns_run"
	another_run
	check "a landlock run starting leaves it" test -n "$ns_run" -a -d "$BASE/$ns_run"
	touch "$W/n.go"
	wait "$jpid"
	status=$?
	check "the namespace jail runs on, unharmed" test "$status" -eq 0 -a "$(grep -v '^stockade: ' "$T/n.out" | tail -n 1)" = still
else
	kill -KILL "$jpid" 2>/dev/null
	wait "$jpid" 2>/dev/null
	diag "$(cat "$T/n.out")"
	skip "the namespace jail does not run here"
fi

plan_done
