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
PROBE_HELD="$T/marks/held" in_jail --write "$T/marks" --max-procs 40 --report "$T/bomb.json" -- \
	"$PROBE" spawn-many 2000 3 >"$T/bomb.out" 2>&1 &
jpid=$!
for _ in $(seq 200); do [ -e "$T/marks/held" ] && break; sleep 0.05; done
[ -e "$T/marks/held" ] && pass "THREATS 56: the bomb reached its limit and holds its processes" || fail "THREATS 56: the bomb reached its limit and holds its processes"
expect_control "THREATS 56 control: outside, while the bomb holds, the host starts 200 processes" -- "$PROBE" spawn-many 200
wait "$jpid"
started=$(sed -n 's/^started //p' "$T/bomb.out")
grep -q '^probe: errno EAGAIN$' "$T/bomb.out" && pass "THREATS 56: in the jail, the fork past the limit fails with EAGAIN" ||
	{ fail "THREATS 56: in the jail, the fork past the limit fails with EAGAIN"; diag "$(cat "$T/bomb.out")"; }
[ -n "$started" ] && [ "$started" -lt 40 ] && [ "$started" -ge 30 ] && pass "it started $started of 2000: at most the limit" ||
	fail "it started at most the limit (started '${started}')"
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
	in_jail -- sh -c 'grep " /sys/fs/cgroup " /proc/self/mountinfo' >"$T/cg.out" 2>&1
	grep -q " - cgroup2 " "$T/cg.out" && pass "THREATS 69: the jail's /sys/fs/cgroup is a cgroup2 mount of its own" ||
		{ fail "THREATS 69: the jail's /sys/fs/cgroup is a cgroup2 mount of its own"; diag "$(cat "$T/cg.out")"; }
	in_jail -- sh -c 'cat /proc/self/cgroup' >"$T/cg.self" 2>&1
	grep -q '^0::/$' "$T/cg.self" && pass "THREATS 69: its own cgroup is the namespace's root" || { fail "THREATS 69: its own cgroup is the namespace's root"; diag "$(cat "$T/cg.self")"; }
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

plan_done
