# Limits: a fork bomb ends in the jail and the host can still start
# processes; the run's memory and its private tmpfs are bounded where the
# host can bound them, and the report names what it cannot; the namespace
# jail's cgroup tree is its own cgroup namespace's.
. tests/lib.sh

new_places
in_jail() {
	jail -q --net off -C "$W" "$@"
}
report_has() { # FILE KEY TEXT: the report's list KEY holds an entry with TEXT
	python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); l=r[sys.argv[2]]
sys.exit(0 if any(sys.argv[3] in (e if isinstance(e, str) else json.dumps(e)) for e in l) else 1)' "$@"
}

# A bounded fork bomb under a low --max-procs: the forks past the limit
# fail with EAGAIN, while the run holds its processes the host starts
# 200 more, and stockade says what happened.
mkdir -p "$T/marks"
# On the landlock backend a user's limit is RLIMIT_NPROC, which counts
# every process of the user: the run may start what the user runs at its
# start plus the limit (stockade doctor), so each of the user's other
# processes that ends meanwhile (one an earlier test left) is one more
# for the run. Those that ran before the bomb (a second or more) and are
# gone after it are counted; in the namespace jail, and as root, the
# count is the run's own, and none is allowed.
mine() { ps -u "$(id -u)" -o pid=,etimes= | awk '$2 >= 1 { print $1 }' | sort; }
mine >"$T/mine.before"
PROBE_HELD="$T/marks/held" in_jail --write "$T/marks" --max-procs 40 --report "$T/bomb.json" -- \
	"$PROBE" spawn-many 2000 3 >"$T/bomb.out" 2>&1 &
jpid=$!
wait_until test -e "$T/marks/held"
[ -e "$T/marks/held" ] && pass "THREATS 56: the bomb reached its limit and holds its processes" || fail "THREATS 56: the bomb reached its limit and holds its processes"
expect_control "THREATS 56 control: outside, while the bomb holds, the host starts 200 processes" -- "$PROBE" spawn-many 200
wait "$jpid"
started=$(sed -n 's/^started //p' "$T/bomb.out")
ended=0
if [ "$TEST_BACKEND" = landlock ] && ! is_root; then
	mine >"$T/mine.after"
	ended=$(comm -23 "$T/mine.before" "$T/mine.after" | wc -l)
fi
grep -q '^probe: errno EAGAIN$' "$T/bomb.out" && pass "THREATS 56: in the jail, the fork past the limit fails with EAGAIN" ||
	{ fail "THREATS 56: in the jail, the fork past the limit fails with EAGAIN"; diag "$(cat "$T/bomb.out")"; }
[ -n "$started" ] && [ "$started" -lt $((40 + ended)) ] && [ "$started" -ge 30 ] &&
	pass "it started $started of 2000: at most the limit ($ended of the user's other processes ended meanwhile)" ||
	fail "it started at most the limit (started '${started}', $ended of the user's other processes ended meanwhile)"
report_has "$T/bomb.json" enforced "processes: at most 40" && pass "the report names the limit and its mechanism" ||
	{ fail "the report names the limit and its mechanism"; diag "$(cat "$T/bomb.json")"; }
if report_has "$T/bomb.json" enforced "pids.max"; then
	report_has "$T/bomb.json" denials '"limit"' && pass "and, with a cgroup, the forks it refused" ||
		fail "and, with a cgroup, the forks it refused"
fi
expect_control "THREATS 56 control: outside, the same bomb of 2000 runs to its end" -- "$PROBE" spawn-many 2000
expect_probe "the default limit is far above what a build starts" ok -- in_jail -- "$PROBE" spawn-many 500
jail --max-procs 1 -- true 2>"$T/err"
[ $? -eq 125 ] && grep -q -- "--max-procs" "$T/err" && pass "--max-procs 1: an error naming the option" || fail "--max-procs 1: an error naming the option"
jail --memory 12Q -- true 2>"$T/err"
[ $? -eq 125 ] && grep -q -- "--memory" "$T/err" && pass "--memory 12Q: an error naming the option" || fail "--memory 12Q: an error naming the option"

# The same limit from stockade.ini: the workspace's file lowers it (a
# lower limit narrows: no trust needed), and a bad value is refused with
# its file, line and key.
printf '[sandbox]\nnetwork = off\nmax-procs = 50\n' >"$W/stockade.ini"
in_jail -- "$PROBE" spawn-many 2000 >"$T/ini.out" 2>&1
started=$(sed -n 's/^started //p' "$T/ini.out")
grep -q '^probe: errno EAGAIN$' "$T/ini.out" && [ -n "$started" ] && [ "$started" -lt 50 ] && [ "$started" -ge 40 ] &&
	pass "stockade.ini max-procs = 50: the fork loop stops at $started" ||
	{ fail "stockade.ini max-procs = 50: the fork loop stops at about 50"; diag "$(cat "$T/ini.out")"; }
printf '[sandbox]\nnetwork = off\nmax-procs = lots\n' >"$W/stockade.ini"
fails "stockade.ini max-procs = lots: refused (125), naming the file, line and key" \
	"$W/stockade.ini line 3: max-procs: invalid value 'lots': use a number of processes from 2 to 4194304" -- in_jail -- true
printf '[sandbox]\nmemory = 12Q\n' >"$W/stockade.ini"
fails "stockade.ini memory = 12Q: refused (125), naming the file, line and key" \
	"$W/stockade.ini line 2: memory: invalid value '12Q': use a size" -- in_jail -- true
printf '[sandbox]\nmax-procs = 100000\n' >"$W/stockade.ini"
fails "stockade.ini max-procs above the default, untrusted: a widening, refused (125)" \
	"$W/stockade.ini line 2: max-procs: '100000' widens the jail" -- in_jail -- true
rm -f "$W/stockade.ini"

# doctor says what bounds the run here, and the run's report agrees.
"$STOCKADE" doctor --json >"$T/doctor.json" 2>/dev/null
in_jail --report "$T/default.json" -- true
python3 - "$T/doctor.json" "$T/default.json" "$TEST_BACKEND" <<'PY' && pass "doctor names what bounds processes and memory here, as the run's report does" ||
import json, sys
d = json.load(open(sys.argv[1]))["limits"][sys.argv[3]]
r = json.load(open(sys.argv[2]))
for kind, word in (("processes", "processes: at most"), ("memory", "memory: at most")):
    if d[kind]:
        assert any(e.startswith(word) and d[kind] in e for e in r["enforced"]), (kind, d, r["enforced"])
    else:
        assert any(g["what"].startswith(word) for g in r["unenforced"]), (kind, r["unenforced"])
PY
	fail "doctor names what bounds processes and memory here, as the run's report does"

# Memory: bounded by a cgroup where one can be made, named otherwise.
in_jail --memory 64M --report "$T/mem.json" -- true
if report_has "$T/mem.json" enforced "memory: at most 64.0 MiB"; then
	pass "the report says the memory limit holds"
	expect_probe "THREATS 57: past --memory 64M the run is killed" "signal KILL" -- in_jail --memory 64M -- "$PROBE" alloc 256
	expect_probe "within it the same allocation works" ok -- in_jail --memory 512M -- "$PROBE" alloc 256
else
	report_has "$T/mem.json" unenforced "memory: at most 64.0 MiB" && pass "THREATS 57: the report names the memory it cannot bound" ||
		{ fail "THREATS 57: the report names the memory it cannot bound"; diag "$(cat "$T/mem.json")"; }
fi
expect_control "THREATS 57 control: outside, the allocation works" -- "$PROBE" alloc 256

# The private tmpfs: the namespace jail's home, /tmp and /dev/shm are one
# tmpfs of --tmp-size together; the landlock backend says it cannot bound
# its home and tmp.
write_mib() { # PATH MIB
	sh -c 'head -c $(($2 * 1048576)) /dev/zero >"$1"' sh "$1" "$2"
}
in_jail --tmp-size 16M --report "$T/tmp.json" -- true
if fresh_places; then
	report_has "$T/tmp.json" enforced "one tmpfs of at most 16.0 MiB" && pass "the report names the tmpfs bound" ||
		fail "the report names the tmpfs bound"
	in_jail --tmp-size 16M -- sh -c 'head -c 10485760 /dev/zero >/tmp/a && head -c 10485760 /dev/zero >/dev/shm/b' 2>"$T/tmp.err"
	[ $? -ne 0 ] && grep -q "No space left" "$T/tmp.err" && pass "THREATS 57: 10 MiB in /tmp and 10 more in /dev/shm: ENOSPC, the bound is shared" ||
		{ fail "THREATS 57: 10 MiB in /tmp and 10 more in /dev/shm: ENOSPC"; diag "$(cat "$T/tmp.err")"; }
	in_jail --tmp-size 16M -- sh -c 'head -c 6291456 /dev/zero >/tmp/a && head -c 6291456 /dev/zero >"$HOME/b"' &&
		pass "6 MiB in each of /tmp and the home fit" || fail "6 MiB in each of /tmp and the home fit"
	expect_probe "the jail's /tmp is 1777" ok -- in_jail -- "$PROBE" stat /tmp
	case $PROBE_OUTPUT in *"mode=41777 "*) pass "mode 1777" ;; *) fail "mode 1777"; diag "$PROBE_OUTPUT" ;; esac
else
	report_has "$T/tmp.json" unenforced "the home and tmp: at most 16.0 MiB" && pass "THREATS 57: the report names the home and tmp it cannot bound" ||
		{ fail "THREATS 57: the report names the home and tmp it cannot bound"; diag "$(cat "$T/tmp.json")"; }
fi
head -c 10485760 /dev/zero >"$T/outside-tmp" && pass "THREATS 57 control: outside, the same write works" || fail "THREATS 57 control: outside, the same write works"

# The cgroup tree: the namespace jail mounts a cgroup2 of its own cgroup
# namespace, not the host's /sys/fs/cgroup.
if [ "$TEST_BACKEND" = namespaces ]; then
	# Each hierarchy the host mounts under /sys/fs/cgroup (cgroup2 alone,
	# or v1's beside it on a hybrid host), mounted afresh in the jail
	# from its own cgroup namespace's root, at the host's path.
	cg_mounts() { awk '$5 ~ "^/sys/fs/cgroup(/|$)" { split($0, a, " - "); split(a[2], t, " "); if (t[1] ~ /^cgroup2?$/) print $5, t[1], $4 }' "$@" | sort; }
	cg_mounts /proc/self/mountinfo | awk '{ print $1, $2 }' >"$T/cg.host"
	in_jail -- cat /proc/self/mountinfo >"$T/cg.mi" 2>&1
	cg_mounts "$T/cg.mi" >"$T/cg.out"
	[ -s "$T/cg.out" ] && [ "$(awk '{ print $1, $2 }' "$T/cg.out")" = "$(cat "$T/cg.host")" ] && ! awk '$3 != "/"' "$T/cg.out" | grep -q . &&
		pass "THREATS 69: the jail's cgroup tree is mounted afresh from its own namespace's root, as the host lays it out" ||
		{ fail "THREATS 69: the jail's cgroup tree is mounted afresh from its own namespace's root, as the host lays it out"; diag "host: $(cat "$T/cg.host")"; diag "jail: $(cat "$T/cg.out")"; }
	in_jail -- sh -c 'cat /proc/self/cgroup' >"$T/cg.self" 2>&1
	grep -q '^0::/$' "$T/cg.self" && ! grep -v ':/$' "$T/cg.self" | grep -q . &&
		pass "THREATS 69: its own cgroup is the namespace's root, in every hierarchy" ||
		{ fail "THREATS 69: its own cgroup is the namespace's root, in every hierarchy"; diag "$(cat "$T/cg.self")"; }
	# A cgroup made outside, beside stockade's own, where the host lets
	# us make one: not in the jail's tree.
	own=$(sed -n 's/^0:://p' /proc/self/cgroup)
	for m in /sys/fs/cgroup /sys/fs/cgroup/unified; do
		if [ "$(stat -f -c %T "$m" 2>/dev/null)" = cgroup2fs ] && mkdir "$m$own/stockade-test-$$" 2>/dev/null; then
			at_exit rmdir "$m$own/stockade-test-$$"
			[ -d "$m$own/stockade-test-$$" ] && pass "THREATS 69 control: outside, a cgroup of the host's is there" || fail "THREATS 69 control: outside, a cgroup of the host's is there"
			in_jail -- ls /sys/fs/cgroup >"$T/cg.ls" 2>&1
			grep -q "stockade-test-$$" "$T/cg.ls" && fail "THREATS 69: the host's cgroup is not in the jail's tree" ||
				pass "THREATS 69: the host's cgroup is not in the jail's tree"
			break
		fi
	done
fi

# ---- THREATS 69 on both backends: another cgroup of the host's is
# neither listed nor read in the jail, while runtimes that size
# themselves by their own group's limits (Python, Go, Node, the JVM)
# still find them. The namespace jail mounts its own cgroup namespace's
# tree; the landlock backend grants the run's own group's files and the
# limits above it, and no listing of a group it shares.
#
# cg_dirs: "TYPE MOUNT GROUP" for each cgroup hierarchy mounted under
# /sys/fs/cgroup, GROUP this process's group's directory in it.
cg_dirs() {
	python3 -c '
import os
lines = [l.rstrip("\n").split(":", 2) for l in open("/proc/self/cgroup")]
for m in open("/proc/self/mountinfo"):
    pre, post = m.split(" - ")
    f, p = pre.split(), post.split()
    root, mp, typ, sup = f[3], f[4], p[0], p[2].split(",")
    if typ not in ("cgroup", "cgroup2") or not (mp == "/sys/fs/cgroup" or mp.startswith("/sys/fs/cgroup/")):
        continue
    for _, ctl, path in lines:
        if (typ == "cgroup2" and ctl == "") or (typ == "cgroup" and ctl and set(ctl.split(",")) & set(sup)):
            if root != "/" and not path.startswith(root):
                break
            rel = path[len(root):] if root != "/" else path
            print(typ, mp, os.path.normpath(mp + "/" + rel))
            break'
}
cg_dirs >"$T/cg.dirs"
other=
if is_root; then
	# One of the test's own making in the v2 tree, beside the group
	# stockade makes there for each run (beneath the test's own): the
	# run must not see it.
	while read -r type m own; do
		if [ "$type" = cgroup2 ] && mkdir "$own/stockade-test-other-$$" 2>/dev/null; then
			other="$own/stockade-test-other-$$"
			at_exit rmdir "$other"
			break
		fi
	done <"$T/cg.dirs"
fi
if [ -z "$other" ]; then
	# One that is there: a group beside the test's own or beside one
	# above it, in a hierarchy where the test's own is not the root
	# (where it is, every group is beneath the run's own). On a host
	# with no such group (a VM whose only group is the test's own, as a
	# user who can make none), the group above the test's own: another
	# group of the host's, whose listing shows the test's own.
	other=$(python3 -c '
import os, sys
dirs = [line.split() for line in open(sys.argv[1])]
for typ, m, own in dirs:
    d = own
    while d != m:
        parent = os.path.dirname(d)
        for e in sorted(os.listdir(parent)):
            c = os.path.join(parent, e)
            if c != d and os.path.isdir(c) and not os.path.islink(c) and os.path.exists(os.path.join(c, "cgroup.procs")):
                print(c)
                sys.exit(0)
        d = parent
for typ, m, own in dirs:
    parent = os.path.dirname(own)
    if own != m and parent != m and os.path.exists(os.path.join(parent, "cgroup.procs")):
        print(parent)
        sys.exit(0)' "$T/cg.dirs")
fi
if [ -z "$other" ]; then
	skip "THREATS 69: no other cgroup of the host's here, and none can be made"
else
	name=$(basename "$other")
	diag "another cgroup of the host's: $other"
	expect_control "THREATS 69 control: outside, its parent lists it" -- "$PROBE" ls "$(dirname "$other")"
	printf '%s\n' "$PROBE_OUTPUT" | grep -qxF -- "$name" && pass "THREATS 69 control: $name is listed outside" ||
		{ fail "THREATS 69 control: $name is listed outside"; diag "$PROBE_OUTPUT"; }
	expect_control "THREATS 69 control: outside, its cgroup.procs is read" -- "$PROBE" read "$other/cgroup.procs"
	# Landlock refuses the listing; the namespace jail has no such
	# directory, or (its parent being the jail's own tree's root) one
	# without it.
	out=$(in_jail -- "$PROBE" ls "$(dirname "$other")" 2>&1)
	if [ "$TEST_BACKEND" = landlock ]; then
		case $out in
		*"probe: started"*"probe: errno EACCES"*) pass "THREATS 69: its parent is not listed in the jail (EACCES)" ;;
		*) fail "THREATS 69: its parent is not listed in the jail (EACCES)"; diag "$out" ;;
		esac
	else
		case $out in
		*"probe: started"*"probe: errno ENOENT"*) pass "THREATS 69: its parent is not in the jail's tree (ENOENT)" ;;
		*"probe: started"*"probe: ok"*) printf '%s\n' "$out" | grep -qxF -- "$name" &&
			{ fail "THREATS 69: its parent in the jail does not list it"; diag "$out"; } ||
			pass "THREATS 69: its parent in the jail does not list it" ;;
		*) fail "THREATS 69: its parent is not in the jail's tree"; diag "$out" ;;
		esac
	fi
	expect_probe "THREATS 69: its cgroup.procs is not read in the jail" "errno $([ "$TEST_BACKEND" = landlock ] && echo EACCES || echo ENOENT)" -- \
		in_jail -- "$PROBE" read "$other/cgroup.procs"
	in_jail -- sh -c 'echo started; find /sys/fs/cgroup 2>&1' >"$T/cg.find" 2>&1
	head -n 1 "$T/cg.find" | grep -qx started && ! grep -qF -- "$other" "$T/cg.find" &&
		{ case $name in stockade-test-other-*) ! grep -qF -- "$name" "$T/cg.find" ;; esac; } &&
		pass "THREATS 69: a walk of /sys/fs/cgroup in the jail finds no trace of it" ||
		{ fail "THREATS 69: a walk of /sys/fs/cgroup in the jail finds no trace of it"; diag "$(head -n 20 "$T/cg.find")"; }
fi
# The run's own group: /proc/self/cgroup names it, and its limits read
# there are the run's (stockade's own group's where it made none).
expect_probe "THREATS 69: the run reads its own cgroup" ok -- in_jail -- "$PROBE" read /proc/self/cgroup

# Runtimes, outside and in the jail: the same where the limit is the
# same; the run's own (--memory 1G) where stockade bounds it by a cgroup.
in_jail --memory 1G --report "$T/mem.json" -- true
by_cgroup=false
report_has "$T/mem.json" enforced "memory: at most 1.0 GiB" && report_has "$T/mem.json" enforced "cgroup" && by_cgroup=true
same() { # DESC OUTSIDE INSIDE
	[ "$2" = "$3" ] && [ -n "$2" ] && { pass "$1"; diag "$2"; } || { fail "$1"; diag "outside: $2"; diag "in the jail: $3"; }
}
py='import os; print(getattr(os, "process_cpu_count", os.cpu_count)(), os.cpu_count())'
same "THREATS 69: Python's CPU count in the jail is the one outside" "$(python3 -c "$py" 2>&1)" "$(in_jail -- python3 -c "$py" 2>&1)"
if command -v go >/dev/null 2>&1; then
	mkdir -p "$T/go"
	printf 'package main\n\nimport (\n\t"fmt"\n\t"runtime"\n)\n\nfunc main() { fmt.Println(runtime.GOMAXPROCS(0), runtime.NumCPU()) }\n' >"$T/go/main.go"
	if (cd "$T/go" && GOCACHE="$T/go/cache" GO111MODULE=off GOFLAGS= go build -o prog main.go) >"$T/go/build.out" 2>&1; then
		same "THREATS 69: Go's GOMAXPROCS in the jail is the one outside" "$("$T/go/prog" 2>&1)" "$(in_jail --read "$T/go" -- "$T/go/prog" 2>&1)"
	else
		fail "THREATS 69: a Go program builds outside"; diag "$(cat "$T/go/build.out")"
	fi
else
	skip "THREATS 69: no go here"
fi
if command -v node >/dev/null 2>&1; then
	js='console.log(process.constrainedMemory ? process.constrainedMemory() : "none")'
	in=$(in_jail --memory 1G -- node -e "$js" 2>&1)
	if $by_cgroup; then
		same "THREATS 69: Node's constrained memory in the jail is the run's --memory 1G" 1073741824 "$in"
	else
		same "THREATS 69: Node's constrained memory in the jail is the one outside" "$(node -e "$js" 2>&1)" "$in"
	fi
else
	skip "THREATS 69: no node here"
fi
if command -v java >/dev/null 2>&1; then
	# The metrics but the limits stockade sets (memory, processes).
	jmetrics() { sed -n '/^Operating System Metrics/,/^$/p' | grep -v -e 'Memory Limit' -e 'Memory & Swap Limit' -e 'Maximum Processes Limit'; }
	out=$(java -XshowSettings:system -version 2>&1)
	in=$(in_jail --memory 1G -- java -XshowSettings:system -version 2>&1)
	same "THREATS 69: the JVM's container metrics in the jail are the ones outside" "$(printf '%s\n' "$out" | jmetrics)" "$(printf '%s\n' "$in" | jmetrics)"
	if $by_cgroup; then
		same "THREATS 69: the JVM's memory limit in the jail is the run's" "Memory Limit: 1.00G" "$(printf '%s\n' "$in" | grep -o 'Memory Limit: .*' | head -n 1)"
	else
		same "THREATS 69: the JVM's memory limit in the jail is the one outside" "$(printf '%s\n' "$out" | grep -o 'Memory Limit: .*' | head -n 1)" \
			"$(printf '%s\n' "$in" | grep -o 'Memory Limit: .*' | head -n 1)"
	fi
else
	skip "THREATS 69: no java here"
fi

# The caller's open-files limit low (ulimit -n 32): stockade's own
# passes hold no more descriptors than it leaves room for (the closer
# of landlock_build's and mount_apply's, lib/fd.h), and the command
# starts with that limit, as outside.
out=$(sh -c 'ulimit -n 32 && "$@"' sh "$PROBE" env PATH 2>&1)
case $out in *"probe: started"*) pass "outside: a command runs under ulimit -n 32" ;;
*) fail "outside: a command runs under ulimit -n 32"; diag "$out" ;; esac
out=$(sh -c 'ulimit -n 32 && "$@"' sh "${JAIL[@]}" -q --net off -C "$W" -- sh -c 'ulimit -n' 2>&1)
[ "$out" = 32 ] && pass "under ulimit -n 32 the jail is built and the command has that limit" ||
	{ fail "under ulimit -n 32 the jail is built and the command has that limit"; diag "$out"; }

plan_done
