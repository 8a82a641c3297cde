#!/bin/bash
# make bench: stockade's speed and memory, each measured against a peer in
# the same run and quoted as a ratio. Not a test: a shared machine makes
# absolute times noisy, so nothing here passes or fails.
set -u
cd "$(dirname "$0")/.." || exit 1
: "${BUILD:=build}"
: "${STOCKADE:=$BUILD/stockade}"
: "${BENCH_RUNS:=200}"
BENCHRUN="$BUILD/tests/benchrun"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/stockade-bench.XXXXXX")
cleanup() {
	chmod -R u+w "$tmp" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
export HOME="$tmp/home"
mkdir -p "$HOME" "$tmp/ws"

# bwrap running the policy of stockade's namespace jail in workspace $1:
# read-only system, tmpfs home and /tmp, the workspace bound, all
# namespaces, a new session; in the array bw.
bwrap_argv() {
	bw=(bwrap --ro-bind /usr /usr --ro-bind /etc /etc --ro-bind-try /opt /opt)
	local l
	for l in /bin /sbin /lib /lib64 /lib32 /libx32; do
		if [ -L "$l" ]; then
			bw+=(--symlink "$(readlink "$l")" "$l")
		elif [ -d "$l" ]; then
			bw+=(--ro-bind "$l" "$l")
		fi
	done
	bw+=(--tmpfs "$HOME" --tmpfs /tmp --bind "$1" "$1" --proc /proc --dev /dev
		--unshare-all --new-session --die-with-parent --chdir "$1" /bin/true)
}

ratio() {
	python3 -c "import sys; print('%.2f' % (float(sys.argv[1]) / float(sys.argv[2])))" "$1" "$2"
}
median() { python3 -c "import sys, statistics; print('%.1f' % statistics.median(float(x) for x in sys.argv[1:]))" "$@"; }
sub() { python3 -c "import sys; print('%.1f' % (float(sys.argv[1]) - float(sys.argv[2])))" "$1" "$2"; }

# A workspace of 100,000 files: 1000 directories of 100.
make_tree() {
	python3 - "$1" <<'PY'
import os, sys
root = sys.argv[1]
for d in range(1000):
    dd = os.path.join(root, "d%04d" % d)
    os.makedirs(dd, exist_ok=True)
    for f in range(100):
        open(os.path.join(dd, "f%04d" % f), "w").close()
PY
}

# 50 nested repositories, each with a hooks directory of 14 samples and a
# config, like a monorepo with vendored checkouts.
make_repos() {
	python3 - "$1" <<'PY'
import os, sys
root = sys.argv[1]
for r in range(51):
    repo = root if r == 0 else os.path.join(root, "vendor", "repo%02d" % r)
    hooks = os.path.join(repo, ".git", "hooks")
    os.makedirs(hooks, exist_ok=True)
    for h in range(14):
        with open(os.path.join(hooks, "hook%02d.sample" % h), "w") as f:
            f.write("#!/bin/sh\n# sample hook\n" * 20)
    with open(os.path.join(repo, ".git", "config"), "w") as f:
        f.write("[core]\n\trepositoryformatversion = 0\n")
    with open(os.path.join(repo, ".git", "HEAD"), "w") as f:
        f.write("ref: refs/heads/main\n")
PY
}

# A workspace shaped like a real node_modules: 7,000 directories, 22,000
# files, packages nested a few levels, the same every time.
make_node_modules() {
	python3 - "$1" <<'PY'
import os, random, sys
root = os.path.join(sys.argv[1], "node_modules")
random.seed(7)
dirs = [root]
os.makedirs(root, exist_ok=True)
while len(dirs) < 7000:
    parent = random.choice(dirs[-400:] + dirs[:60])
    d = os.path.join(parent, "p%d" % len(dirs))
    os.makedirs(d)
    dirs.append(d)
for i in range(22000):
    open(os.path.join(random.choice(dirs), "f%d.js" % i), "w").close()
PY
}

echo "stockade bench: $(uname -r), $(nproc) CPUs, $BENCH_RUNS runs each, commands interleaved"
echo

# Against another build of stockade (make bench BASE=REV builds REV beside
# this one): each backend's start-up and peak memory, interleaved.
if [ -n "${STOCKADE_BASE:-}" ]; then
	: "${BENCH_BASE_RUNS:=400}"
	echo "== against ${STOCKADE_BASE_NAME:-the base}: start-up of each backend, $BENCH_BASE_RUNS interleaved runs"
	for backend in landlock namespaces; do
		read -r new_med new_p90 new_rss new_rss_max base_med base_p90 base_rss base_rss_max < <("$BENCHRUN" "$BENCH_BASE_RUNS" \
			"$STOCKADE" -q --backend $backend --net off -C "$tmp/ws" -- /bin/true :: \
			"$STOCKADE_BASE" -q --backend $backend --net off -C "$tmp/ws" -- /bin/true | tr '\n' ' ')
		echo "$backend:"
		echo "  this build:     median ${new_med} us, p90 ${new_p90} us, peak ${new_rss} KiB (median), ${new_rss_max} KiB (largest)"
		echo "  base:           median ${base_med} us, p90 ${base_p90} us, peak ${base_rss} KiB (median), ${base_rss_max} KiB (largest)"
		echo "  ratio (median): $(ratio "$new_med" "$base_med")x the base's start-up   (target: at most 1.03x)"
		echo "  memory:         $(ratio "$new_rss" "$base_rss")x the base's peak, medians; $(ratio "$new_rss_max" "$base_rss_max")x, the largest   (target: no higher)"
	done
	echo
fi

# As root, make bench measures a user beside root: the one who ran sudo,
# or BENCH_UID, or nobody; a home and a workspace of that user's own.
# benchrun's @UID:GID and NAME=VALUE words switch to them in the child,
# with no su or setpriv between (stockade -- true is a few milliseconds).
as_user=() as_root=()
if [ "$(id -u)" = 0 ]; then
	b_uid=${BENCH_UID:-${SUDO_UID:-65534}}
	b_gid=$(getent passwd "$b_uid" | cut -d: -f4)
	b_gid=${b_gid:-$b_uid}
	chmod 755 "$tmp"
	mkdir -p "$tmp/user/home" "$tmp/user/ws"
	chown -R "$b_uid:$b_gid" "$tmp/user"
	as_user=("@$b_uid:$b_gid" "HOME=$tmp/user/home")
	as_root=("HOME=$HOME")
	u_ws=$tmp/user/ws
	who="uid $b_uid"
else
	u_ws=$tmp/ws
	who="$(id -un)"
fi

# BENCH_ONLY=sessions: the sessions' part alone (start-up ends after its own)
if [ "${BENCH_ONLY:-}" != sessions ]; then
echo "== start-up: the targets, interleaved ($BENCH_RUNS runs each; as $who$([ ${#as_root[@]} -gt 0 ] && echo ' and as root'))"
# The floors beside stockade -- true in an empty workspace, each backend:
# bare true, a launcher that forks, execs and waits, and bwrap with the
# same mounts and no filter (bwrap_argv). As root, each again as root.
if command -v bwrap >/dev/null; then
	HOME=$tmp/user/home bwrap_argv "$u_ws"
	[ ${#as_user[@]} -eq 0 ] && bwrap_argv "$u_ws"
	bw_user=("${bw[@]}")
	bwrap_argv "$tmp/ws"
	bw_root=("${bw[@]}")
else
	bw_user=(/bin/true) bw_root=(/bin/true)
fi
st_args=(-q -- /bin/true)
startup_cmds=(/bin/true :: "$BUILD/tests/minlaunch" wait /bin/true ::
	"${as_user[@]}" "${bw_user[@]}" ::
	"${as_user[@]}" "$STOCKADE" --backend namespaces -C "$u_ws" "${st_args[@]}" ::
	"${as_user[@]}" "$STOCKADE" --backend landlock -C "$u_ws" "${st_args[@]}")
if [ ${#as_root[@]} -gt 0 ]; then
	startup_cmds+=(:: "${bw_root[@]}" ::
		"${as_root[@]}" "$STOCKADE" --backend namespaces -C "$tmp/ws" "${st_args[@]}" ::
		"${as_root[@]}" "$STOCKADE" --backend landlock -C "$tmp/ws" "${st_args[@]}")
fi
"$BENCHRUN" 3 "${startup_cmds[@]}" >/dev/null || echo "(a command failed: the figures below are not)"
mapfile -t su < <("$BENCHRUN" "$BENCH_RUNS" "${startup_cmds[@]}")
read -r bare_med _ _ _ <<<"${su[0]}"
read -r wt_med _ _ _ <<<"${su[1]}"
startup_line() { # NAME "med p90 rss rss_max" of stockade, "med rss" of bwrap
	local name=$1 med p90 rss rssmax bmed brss
	read -r med p90 rss rssmax <<<"$2"
	read -r bmed _ brss _ <<<"$3"
	printf '%-22s median %6s us, p90 %6s us, peak %5s KiB (bwrap %s KiB: %sx)\n' "$name" "$med" "$p90" "$rss" "$brss" \
		"$(ratio "$rss" "$brss")"
}
echo "bare true:             median ${bare_med} us; fork, exec, wait: ${wt_med} us"
read -r ub_med _ <<<"${su[2]}"
read -r un_med _ <<<"${su[3]}"
read -r ul_med _ <<<"${su[4]}"
echo "bwrap, same mounts:    median ${ub_med} us ($who)"
startup_line "namespaces ($who):" "${su[3]}" "${su[2]}"
startup_line "landlock ($who):" "${su[4]}" "${su[2]}"
echo "namespaces ($who): $(ratio "$un_med" "$ub_med")x bwrap   (target: at most 1.0x)"
echo "landlock ($who):   $(ratio "$ul_med" "$wt_med")x fork-exec-wait   (target: at most 1.5x)"
if [ ${#as_root[@]} -gt 0 ]; then
	read -r rb_med _ <<<"${su[5]}"
	read -r rn_med _ <<<"${su[6]}"
	read -r rl_med _ <<<"${su[7]}"
	echo "bwrap, same mounts:    median ${rb_med} us (root)"
	startup_line "namespaces (root):" "${su[6]}" "${su[5]}"
	startup_line "landlock (root):" "${su[7]}" "${su[5]}"
	echo "namespaces (root): $(ratio "$rn_med" "$rb_med")x bwrap   (target: at most 1.0x); $(ratio "$rn_med" "$un_med")x the user's   (target: at most 1.1x)"
	echo "landlock (root):   $(ratio "$rl_med" "$wt_med")x fork-exec-wait   (target: at most 1.5x); $(ratio "$rl_med" "$ul_med")x the user's   (target: at most 1.1x)"
fi
echo "peak memory: stockade's against bwrap's above   (target: no higher)"
echo

echo "== start-up, phase by phase: stockade -- true in an empty workspace"
# The same run by a stockade built with -DSTOCKADE_PHASES (lib/phase.h),
# whose marks go to descriptor 1000: each phase's median and its share
# of the median start-up. Rows "who:what" are the other processes', beside
# stockade's (the jail's init, the command's process, the keeper).
if [ -x "$BUILD/tools/stockade-phases" ]; then
	ph="$BUILD/tools/stockade-phases"
	phase_cmds=("${as_user[@]}" "$ph" --backend namespaces -C "$u_ws" "${st_args[@]}" ::
		"${as_user[@]}" "$ph" --backend landlock -C "$u_ws" "${st_args[@]}")
	labels="ns $who,landlock $who"
	if [ ${#as_root[@]} -gt 0 ]; then
		phase_cmds+=(:: "${as_root[@]}" "$ph" --backend namespaces -C "$tmp/ws" "${st_args[@]}" ::
			"${as_root[@]}" "$ph" --backend landlock -C "$tmp/ws" "${st_args[@]}")
		labels="$labels,ns root,landlock root"
	fi
	"$BENCHRUN" -p 1000 -l "$labels" "$BENCH_RUNS" "${phase_cmds[@]}"
else
	echo "no $BUILD/tools/stockade-phases (make bench builds it)"
fi
echo
[ "${BENCH_ONLY:-}" = startup ] && exit 0

echo "== start-up: stockade --backend landlock -- true against bare true"
# Two floors measured beside it: a launcher that execs the command in place
# (the issue's "minimal launcher"), and one that forks, execs and waits, as
# stockade must, staying beside the command to reap it, forward signals and
# answer the seccomp listener.
read -r bare_med bare_p90 _ _ ex_med _ _ _ wt_med _ _ _ st_med st_p90 st_rss st_rss_max < <("$BENCHRUN" "$BENCH_RUNS" /bin/true :: \
	"$BUILD/tests/minlaunch" exec /bin/true :: "$BUILD/tests/minlaunch" wait /bin/true :: \
	"$STOCKADE" -q --backend landlock --net off -C "$tmp/ws" -- /bin/true | tr '\n' ' ')
echo "bare true:        median ${bare_med} us, p90 ${bare_p90} us"
echo "exec in place:    median ${ex_med} us ($(ratio "$ex_med" "$bare_med")x bare true)"
echo "fork, exec, wait: median ${wt_med} us ($(ratio "$wt_med" "$bare_med")x bare true)"
echo "stockade landlock: median ${st_med} us, p90 ${st_p90} us"
echo "ratio (median):   $(ratio "$st_med" "$bare_med")x bare true   (target: at most 2x)"
echo "                  $(ratio "$st_med" "$wt_med")x the fork-exec-wait floor, $(ratio "$st_med" "$ex_med")x the exec-in-place one"
echo "peak memory:      ${st_rss} KiB median of the runs, ${st_rss_max} KiB the largest, stockade and the command   (target: under 4096 KiB)"
echo

echo "== a stockade.ini of 200 lines, against the same run without one"
# 40 profiles of three keys, a [sandbox] and ten [command] sections that
# do not match: every line parsed, checked, each command's program
# looked up on PATH; the file untrusted (its trust record looked for).
mkdir -p "$tmp/ini"
{
	echo "; 200 lines"
	printf '[sandbox]\nhide = .env, secrets, private\nnetwork = loopback\n\n'
	for c in "cargo fetch" "npm ci" "go mod download" "pip install" "make dist" sh ls cat env git; do
		printf '[command "%s"]\nnetwork = off\n\n' "$c"
	done
	i=0
	while [ "$i" -lt 32 ]; do
		printf '; profile %s\n[profile p%s]\nhide = a%s, b%s\nnetwork = off\nhide-ignored = false\n' "$i" "$i" "$i" "$i"
		i=$((i + 1))
	done
	printf '; end\n; of\n; the file\n'
} >"$tmp/ini/stockade.ini"
echo "lines: $(wc -l <"$tmp/ini/stockade.ini")"
# The file is a trust hand-off the guard keeps, as it keeps any: the same
# bytes as an .mcp.json, which stockade does not read, separate the
# loader's cost from the guard's.
mkdir -p "$tmp/ini-peer"
cp "$tmp/ini/stockade.ini" "$tmp/ini-peer/.mcp.json"
for backend in landlock namespaces; do
	for w in ini ini-peer; do "$STOCKADE" -q --backend $backend --net off -C "$tmp/$w" -- /bin/true; done
	read -r e_med _ _ _ p_med _ _ _ i_med _ _ _ sh_med _ _ _ < <("$BENCHRUN" "$BENCH_RUNS" \
		"$STOCKADE" -q --backend $backend --net off -C "$tmp/ws" -- /bin/true :: \
		"$STOCKADE" -q --backend $backend --net off -C "$tmp/ini-peer" -- /bin/true :: \
		"$STOCKADE" -q --backend $backend --net off -C "$tmp/ini" -- /bin/true :: \
		"$BUILD/tools/stockade-inih-shared" -q --backend $backend --net off -C "$tmp/ini" -- /bin/true | tr '\n' ' ')
	echo "$backend: with the file ${i_med} us; the same bytes as a hand-off stockade does not read ${p_med} us: $(ratio "$i_med" "$p_med")x   (target: under 1.05x)"
	echo "  against an empty workspace (${e_med} us, no hand-off for the guard to keep): $(ratio "$i_med" "$e_med")x"
	echo "  inih loaded as a shared library instead: ${sh_med} us, $(ratio "$sh_med" "$i_med")x the static link"
done
echo

echo "== hide-ignored: a repository with 10,000 ignored files in 100 folders, and one ignored folder of them"
mkdir -p "$tmp/ign"
git -C "$tmp/ign" init -q
printf '*.o\n' >"$tmp/ign/.gitignore"
python3 - "$tmp/ign" <<'PY'
import os, sys
base = sys.argv[1]
for d in range(100):
    p = os.path.join(base, "src%d" % d)
    os.mkdir(p)
    for f in range(100):
        open(os.path.join(p, "f%d.o" % f), "w").close()
    open(os.path.join(p, "keep.c"), "w").close()
PY
mkdir -p "$tmp/ign1/build"
git -C "$tmp/ign1" init -q
printf 'build/\n' >"$tmp/ign1/.gitignore"
for i in $(seq 10000); do : >"$tmp/ign1/build/f$i"; done 2>/dev/null
git_ms=$(python3 -c 'import subprocess,sys,time; t=time.monotonic(); subprocess.run(["git","-C",sys.argv[1],"-c","core.fsmonitor=false","ls-files","-oi","--exclude-standard","--directory","-z"],stdout=subprocess.DEVNULL); print("%.1f" % ((time.monotonic()-t)*1000))' "$tmp/ign")
for backend in landlock namespaces; do
	"$STOCKADE" -q --backend $backend --net off -C "$tmp/ign" -- /bin/true
	"$STOCKADE" -q --backend $backend --net off -C "$tmp/ign1" -- /bin/true
	read -r n_med _ _ _ h_med _ _ _ o_med _ _ _ < <("$BENCHRUN" 20 \
		"$STOCKADE" -q --backend $backend --net off -C "$tmp/ign" -- /bin/true :: \
		"$STOCKADE" -q --backend $backend --net off -C "$tmp/ign" --hide-ignored -- /bin/true :: \
		"$STOCKADE" -q --backend $backend --net off -C "$tmp/ign1" --hide-ignored -- /bin/true | tr '\n' ' ')
	echo "$backend: without ${n_med} us; 10,000 files hidden one by one $((h_med / 1000)) ms ($(ratio "$h_med" "$n_med")x); one ignored folder of 10,000 files ${o_med} us ($(ratio "$o_med" "$n_med")x)"
done
echo "git ls-files alone on the 10,000: ${git_ms} ms"
echo

echo "== planning the carve-outs: 100,000 files, 1,000 of them hidden"
make_tree "$tmp/big"
read -r rules ms < <("$BUILD/tools/bench-plan" "$tmp/big" 1000 100 1000)
echo "rules: $rules, median of 7 plans: ${ms} ms   (target: under 50 ms)"
echo

echo "== the trust hand-off guard: repeat runs in large workspaces, against the same run in an empty one"
make_repos "$tmp/big"
make_node_modules "$tmp/nm"
read -r nm_dirs nm_floor < <("$BUILD/tools/bench-dirs" "$tmp/nm")
read -r big_dirs big_floor < <("$BUILD/tools/bench-dirs" "$tmp/big")
for backend in landlock namespaces; do
	for w in ws nm big; do
		# the first run takes the baseline and the index
		"$STOCKADE" -q --backend $backend --net off -C "$tmp/$w" -- /bin/true
	done
	read -r e_med _ _ _ n_med _ _ _ b_med _ _ _ < <("$BENCHRUN" "$BENCH_RUNS" \
		"$STOCKADE" -q --backend $backend --net off -C "$tmp/ws" -- /bin/true :: \
		"$STOCKADE" -q --backend $backend --net off -C "$tmp/nm" -- /bin/true :: \
		"$STOCKADE" -q --backend $backend --net off -C "$tmp/big" -- /bin/true | tr '\n' ' ')
	echo "$backend:"
	echo "  empty workspace:             median ${e_med} us"
	echo "  node_modules ($nm_dirs dirs, 22k files): median ${n_med} us, $(ratio "$n_med" "$e_med")x the empty one   (target: at most 1.5x)"
	echo "  100k files, 51 repositories ($big_dirs dirs): median ${b_med} us, $(ratio "$b_med" "$e_med")x   (target: at most 1.5x)"
	[ $backend = namespaces ] && ns_nm_med=$n_med
done
echo "the floor, one fstatat of every directory: node_modules ${nm_floor} us ($(ratio "$nm_floor" "$e_med")x an empty run), the 100k tree ${big_floor} us"
if command -v bwrap >/dev/null; then
	bwrap_argv "$tmp/nm"
	read -r bwn_med _ _ _ sn_med _ _ _ < <("$BENCHRUN" "$BENCH_RUNS" "${bw[@]}" :: \
		"$STOCKADE" -q --backend namespaces --net off -C "$tmp/nm" -- /bin/true | tr '\n' ' ')
	echo "namespaces in node_modules against bwrap there: ${sn_med} us against ${bwn_med} us, $(ratio "$sn_med" "$bwn_med")x   (target: at most 1.5x)"
fi
echo

fi

echo "== sessions: the Nth command of a session, against a fork-exec-wait launcher (coreutils timeout) running true"
# The client is run from inside the workspace, as an agent's would be;
# the guard's per-exec cost in a big workspace is measured below.
abs_st=$(realpath "$STOCKADE") abs_br=$(realpath "$BENCHRUN") abs_ml=$(realpath "$BUILD/tests/minlaunch") abs_tools=$(realpath tools)
rss_kib() { awk '/^VmRSS:/ { print $2 }' "/proc/$1/status" 2>/dev/null || echo 0; }
for backend in landlock namespaces; do
	se=$("$STOCKADE" session start --backend $backend --idle 0 -C "$tmp/ws")
	sdir="$HOME/.local/state/stockade/sessions"
	hpid=$(sed -n 's/^pid=//p' "$sdir/$se.info")
	# the holder, its keeper and its zygote, at rest
	rest=0
	for p in $hpid $(pgrep -P "$hpid") $(pgrep -P "$(pgrep -P "$hpid" -x stockade-keeper)" 2>/dev/null); do
		rest=$((rest + $(rss_kib "$p")))
	done
	read -r s_med s_p90 s_rss _ t_med _ _ _ w_med _ _ _ r_med _ r_rss _ < <(cd "$tmp/ws" && "$abs_br" "$BENCH_RUNS" \
		"$abs_st" session exec "$se" -- /bin/true :: timeout 10 /bin/true :: \
		"$abs_ml" wait /bin/true :: "$abs_st" -q --backend $backend --net off -- /bin/true | tr '\n' ' ')
	after=0
	for p in $hpid $(pgrep -P "$hpid") $(pgrep -P "$(pgrep -P "$hpid" -x stockade-keeper)" 2>/dev/null); do
		after=$((after + $(rss_kib "$p")))
	done
	echo "$backend:"
	echo "  session exec -- true: median ${s_med} us, p90 ${s_p90} us; timeout true ${t_med} us: $(ratio "$s_med" "$t_med")x   (target: at most 1.2x)"
	echo "                        $(ratio "$s_med" "$w_med")x the fork-exec-wait floor (${w_med} us)"
	echo "  memory: the session at rest (holder, keeper, zygote) ${rest} KiB; after $BENCH_RUNS execs ${after} KiB; a client's peak ${s_rss} KiB"
	echo "          beside a run of true in the same workspace: its peak ${r_rss} KiB (stockade and the command), ${r_med} us"
	out=$(cd "$tmp/ws" && PYTHONPATH="$abs_tools" python3 - "$se" "$BENCH_RUNS" <<'PY'
import subprocess, sys, time
from stockade_session import Session
s = Session(sys.argv[1])
n = int(sys.argv[2])
a, b = [], []
for i in range(n):
    t = time.perf_counter(); s.run(["/bin/true"], stdin=0, stdout=1, stderr=2); a.append(time.perf_counter() - t)
    t = time.perf_counter(); subprocess.run(["/bin/true"]); b.append(time.perf_counter() - t)
a.sort(); b.sort()
print("%.1f %.1f" % (a[n // 2] * 1e6, b[n // 2] * 1e6))
PY
)
	read -r py_s py_sub <<<"$out"
	echo "  the Python client on one connection: median ${py_s} us; subprocess.run([\"true\"]) ${py_sub} us: $(ratio "${py_s%.*}" "${py_sub%.*}")x   (target: at most 1.3x)"
	"$STOCKADE" session stop "$se"
done
echo

if [ -z "${nm_dirs:-}" ]; then
	make_node_modules "$tmp/nm"
	read -r nm_dirs _ < <("$BUILD/tools/bench-dirs" "$tmp/nm")
fi
echo "== a session's guard, per command: in an empty workspace and in the node_modules one ($nm_dirs dirs)"
# The guard alone (tools/bench-guard, the workspaces interleaved round by
# round): guard_check on the watched workspace, what a session does after
# each command; beside it, guard_end then guard_begin, what it did before
# (the whole index refreshed, one stat a directory).
"$BUILD/tools/bench-guard" "$tmp/guard-state" 400 "$tmp/ws" "$tmp/nm" >"$tmp/bench-guard.out"
read -r _ ws_chk ws_old < <(sed -n 1p "$tmp/bench-guard.out")
read -r _ nm_chk nm_old < <(sed -n 2p "$tmp/bench-guard.out")
echo "empty workspace:  a check ${ws_chk} us (an end and a begin: ${ws_old} us)"
echo "node_modules:     a check ${nm_chk} us, $(ratio "$nm_chk" "$ws_chk")x the empty one   (target: at most 1.1x); an end and a begin: ${nm_old} us, $(ratio "$nm_old" "$ws_old")x"
# A command of the session, whole (the client, the zygote, the guard), in
# each workspace's session: the same ratio, seen from the caller.
export XDG_RUNTIME_DIR="$tmp/run"
mkdir -m 700 -p "$XDG_RUNTIME_DIR"
for backend in landlock namespaces; do
	ws_id=$("$STOCKADE" session start -q --backend $backend --net off -C "$tmp/ws")
	nm_id=$("$STOCKADE" session start -q --backend $backend --net off -C "$tmp/nm")
	if [ -z "$ws_id" ] || [ -z "$nm_id" ]; then
		echo "$backend: no session here"
		continue
	fi
	read -r se_med _ _ _ sn_med _ _ _ < <("$BENCHRUN" "$BENCH_RUNS" \
		env -C "$tmp/ws" "$STOCKADE" session exec "$ws_id" -- /bin/true :: \
		env -C "$tmp/nm" "$STOCKADE" session exec "$nm_id" -- /bin/true | tr '\n' ' ')
	"$STOCKADE" session stop "$ws_id" >/dev/null
	"$STOCKADE" session stop "$nm_id" >/dev/null
	echo "$backend: session exec -- true: empty ${se_med} us, node_modules ${sn_med} us, $(ratio "$sn_med" "$se_med")x   (target: at most 1.1x)"
done
unset XDG_RUNTIME_DIR
echo

[ "${BENCH_ONLY:-}" = sessions ] && exit 0

echo "== the namespace jail: stockade -- true against bwrap running the same policy"
if command -v bwrap >/dev/null; then
	bwrap_argv "$tmp/ws"
	# Beside them: bwrap loading the seccomp filter stockade loads (the
	# issue's peer loads none), and the floor, a launcher that clones
	# into the same namespaces, maps the ids and execs, with no mount.
	"$BUILD/tools/dump-filter" namespaces loopback >"$tmp/filter.bpf"
	bws=("${bw[@]:0:${#bw[@]}-1}" --seccomp 9 /bin/true)
	read -r bw_med bw_p90 bw_rss bw_rss_max bws_med _ _ _ ml_med _ _ _ ns_med ns_p90 ns_rss ns_rss_max < <("$BENCHRUN" "$BENCH_RUNS" "${bw[@]}" :: \
		"9<$tmp/filter.bpf" "${bws[@]}" :: "$BUILD/tests/minlaunch" ns /bin/true :: \
		"$STOCKADE" -q --backend namespaces -C "$tmp/ws" -- /bin/true | tr '\n' ' ')
	echo "bwrap:            median ${bw_med} us, p90 ${bw_p90} us, peak ${bw_rss} KiB (median), ${bw_rss_max} KiB (largest)"
	echo "stockade:         median ${ns_med} us, p90 ${ns_p90} us, peak ${ns_rss} KiB (median), ${ns_rss_max} KiB (largest)"
	echo "bwrap + filter:   median ${bws_med} us, $(ratio "$bws_med" "$bw_med")x bwrap (the same policy and stockade's seccomp filter)"
	echo "namespaces only:  median ${ml_med} us, $(ratio "$ml_med" "$bw_med")x bwrap (clone, id maps, exec, wait; no mount)"
	echo "ratio (median):   $(ratio "$ns_med" "$bw_med")x bwrap   (target: at most 0.6x)"
	echo "                  $(ratio "$ns_med" "$bws_med")x bwrap with the same filter, $(ratio "$ns_med" "$ml_med")x the namespaces-only floor"
	echo "memory:           $(ratio "$ns_rss" "$bw_rss")x bwrap's peak, medians; $(ratio "$ns_rss_max" "$bw_rss_max")x, the largest   (target: no more than bwrap's)"
else
	echo "bwrap is not installed (apt-get install bubblewrap): no peer to measure against"
fi
echo

echo "== the connect supervisor: connect-accept-close cycles to the run's own listener, 7 rounds of 2,000, interleaved"
probe=$(realpath "$BUILD")/tests/probe
cyc() { "$@" "$probe" connect-cycles 127.0.0.1 2000 | sed -n 's/^us per round //p'; }
sup=() on=() off=() notify=() checked=() wait_=()
for _ in 1 2 3 4 5 6 7; do
	sup+=("$(cyc "$STOCKADE" -q --backend landlock --net loopback -C "$tmp/ws" --)")
	on+=("$(cyc "$STOCKADE" -q --backend landlock --net on -C "$tmp/ws" --)")
	off+=("$(cyc "$STOCKADE" -q --mode off -C "$tmp/ws" --)")
	notify+=("$(cyc "$BUILD/tests/notifyparent" --call connect --)")
	checked+=("$(cyc "$BUILD/tests/notifyparent" --call connect --checked --)")
	wait_+=("$(cyc env)")
done
sup=$(median "${sup[@]}") on=$(median "${on[@]}") off=$(median "${off[@]}")
notify=$(median "${notify[@]}") checked=$(median "${checked[@]}") wait_=$(median "${wait_[@]}")
echo "supervised, loopback:      ${sup} us a cycle"
echo "supervised, --net on:      ${on} us a cycle (Unix socket paths still checked)"
echo "unsupervised (--mode off): ${off} us a cycle"
echo "added per connect:         $(sub "$sup" "$off") us against no supervisor   (target: under 15 us)"
# The floor: a listener that lets every connect go on at once, without
# reading or deciding anything (notifyparent --call connect), against
# the same cycles without one.
echo "the floor, a listener that lets each connect go (notifyparent --call connect): adds $(sub "$notify" "$wait_") us"
# The floor of a safe supervisor: the same listener making each connect
# as one must against a second thread (the address read once, the
# socket copied, the listener asked of sock_diag, the connect made on
# the copy), deciding nothing (notifyparent --call connect --checked).
echo "the floor of a safe supervisor, the connect made on a copy of the socket (notifyparent --call connect --checked): adds $(sub "$checked" "$wait_") us; stockade $(sub "$sup" "$checked") us above it"
echo

echo "== UDP on the landlock backend with loopback: 5,000 ping-pong rounds between two sockets of the run, interleaved with the same without stockade (5 times each)"
udp_rounds() {
	"$@" "$(realpath "$BUILD")/tests/probe" udp-pingpong 127.0.0.1 5000 "$UDP_HOW" | sed -n 's/^us per datagram //p'
}
for UDP_HOW in sendto connected; do
	ll=() plain=()
	for _ in 1 2 3 4 5; do
		ll+=("$(udp_rounds "$STOCKADE" -q --backend landlock --net loopback -C "$tmp/ws" --)")
		plain+=("$(udp_rounds env)")
	done
	ll_med=$(median "${ll[@]}") plain_med=$(median "${plain[@]}")
	case $UDP_HOW in
	sendto) what="sendto with an address (each datagram decided and sent by the supervisor)" ;;
	*) what="connected send (in the kernel: only connect was supervised)" ;;
	esac
	echo "$what: ${ll_med} us a datagram in the jail, ${plain_med} us without stockade (added $(python3 -c "import sys; print('%.1f' % (float(sys.argv[1]) - float(sys.argv[2])))" "$ll_med" "$plain_med") us)"
done
echo

echo "== forwards (--publish): connect-response cycles (7 rounds of 1,000, interleaved with the same on plain loopback and through the least relay) and 2,000 MiB through the forward"
probe=$(realpath "$BUILD")/tests/probe
fwd_port() { "$probe" bind-tcp 127.0.0.1 0 | sed -n 's/^bound //p'; }
cycle() { "$probe" cycles 127.0.0.1 "$1" 1000 | sed -n 's/^us per round //p'; }
# The floor: what any forward adds here, measured as the least relay (the
# probe's: one connection at a time, blocking reads and writes, nothing
# checked) adds to the same cycle.
pp=$(fwd_port) rp=$(fwd_port)
"$probe" listen-tcp 127.0.0.1 "$pp" 600 >/dev/null 2>&1 &
plain_srv=$!
"$probe" relay "$rp" "$pp" >/dev/null 2>&1 &
relay=$!
for backend in namespaces landlock; do
	hp=$(fwd_port) jp=$(fwd_port)
	"$STOCKADE" -q --backend "$backend" -C "$tmp/ws" --publish "$hp:$jp" -- "$probe" listen-tcp 127.0.0.1 "$jp" 600 >/dev/null 2>&1 &
	srv=$!
	for _ in $(seq 100); do "$probe" connect-tcp 127.0.0.1 "$hp" >/dev/null 2>&1 && break; sleep 0.05; done
	fwd_add=() relay_add=()
	for _ in 1 2 3 4 5 6 7; do
		plain=$(cycle "$pp") through_relay=$(cycle "$rp") fwd=$(cycle "$hp")
		fwd_add+=("$(sub "$fwd" "$plain")") relay_add+=("$(sub "$through_relay" "$plain")")
	done
	kill "$srv" 2>/dev/null
	wait "$srv" 2>/dev/null
	hp=$(fwd_port) jp=$(fwd_port) sp=$(fwd_port)
	"$STOCKADE" -q --backend "$backend" -C "$tmp/ws" --publish "$hp:$jp" -- "$probe" sink 127.0.0.1 "$jp" >/dev/null 2>&1 &
	srv=$!
	"$probe" sink 127.0.0.1 "$sp" >/dev/null 2>&1 &
	sink=$!
	sleep 0.5
	plain_mb=$("$probe" blast 127.0.0.1 "$sp" 2000 | sed -n 's/^MB\/s //p')
	fwd_mb=$("$probe" blast 127.0.0.1 "$hp" 2000 | sed -n 's/^MB\/s //p')
	wait "$srv" "$sink" 2>/dev/null
	f=$(median "${fwd_add[@]}") r=$(median "${relay_add[@]}")
	echo "$backend: a cycle forwarded adds ${f} us (target: under 50), the least relay ${r} us ($(ratio "$f" "$r")x it); bulk ${fwd_mb} MB/s forwarded, ${plain_mb} MB/s plain (target: at least 1000)"
done
kill "$plain_srv" "$relay" 2>/dev/null
wait "$plain_srv" "$relay" 2>/dev/null
# A forward puts one more process on the way of a request and of its
# response: stockade wakes for each. Two wake-ups are the least of it.
floor=$("$probe" pipe-pingpong 20000 | sed -n 's/^us per round //p')
echo "two wake-ups (a byte to another process and back): ${floor} us"
echo
echo "== network allow: a request per connection to an allowed name (7 rounds of 500, interleaved with the same straight and through the least relay), 2,000 MiB through it, and lookups"
# The fake internet (tests/fakenet.sh) holds the servers: the relay never
# connects to this host's own addresses. Its name server is the host's
# resolver for stockade alone, in a mount namespace of the bench's own.
FK=${STOCKADE_FAKENET:-/tmp/stockade-fakenet}
if [ "$(id -u)" -ne 0 ] || ! { ip netns list 2>/dev/null | grep -q '^stockade-fakenet\b' || tests/fakenet.sh up "$FK" >/dev/null 2>&1; }; then
	echo "needs root and the fake internet (tests/fakenet.sh up DIR): not measured"
else
	printf 'nameserver 10.204.0.2\n' >"$tmp/resolv.conf"
	fkns() { ip netns exec stockade-fakenet "$@"; }
	outside() { unshare -m sh -c 'mount --bind "$0" /etc/resolv.conf && exec "$@"' "$tmp/resolv.conf" "$@"; }
	fkns "$probe" http-serve 10.204.0.2 18080 >/dev/null 2>&1 &
	hs=$!
	rp=$(fwd_port)
	"$probe" relay "$rp" 18080 10.204.0.2 >/dev/null 2>&1 &
	rl=$!
	sleep 0.3
	hcycle() { sed -n 's/^us per round //p'; }
	for backend in namespaces landlock; do
		allow_add=() relay_add=()
		for _ in 1 2 3 4 5 6 7; do
			plain=$("$probe" http-cycles 10.204.0.2 18080 a.test 500 | hcycle)
			thru=$("$probe" http-cycles 127.0.0.1 "$rp" a.test 500 | hcycle)
			allowed=$(outside "$STOCKADE" -q --backend "$backend" -C "$tmp/ws" --allow a.test:18080 -- \
				"$probe" http-cycles 10.204.0.2 18080 a.test 500 | hcycle)
			allow_add+=("$(sub "$allowed" "$plain")") relay_add+=("$(sub "$thru" "$plain")")
		done
		fkns "$probe" sink 10.204.0.2 18081 >/dev/null 2>&1 &
		sink=$!
		sleep 0.3
		allow_mb=$(outside "$STOCKADE" -q --backend "$backend" -C "$tmp/ws" --allow a.test:18081 --read "$probe" -- \
			sh -c 'getent ahostsv4 a.test >/dev/null; exec "$0" blast 10.204.0.2 18081 2000' "$probe" | sed -n 's/^MB\/s //p')
		kill "$sink" 2>/dev/null
		wait "$sink" 2>/dev/null
		fkns "$probe" sink 10.204.0.2 18082 >/dev/null 2>&1 &
		sink=$!
		sleep 0.3
		plain_mb=$("$probe" blast 10.204.0.2 18082 2000 | sed -n 's/^MB\/s //p')
		kill "$sink" 2>/dev/null
		wait "$sink" 2>/dev/null
		a=$(median "${allow_add[@]}") r=$(median "${relay_add[@]}")
		echo "$backend: a connection to an allowed name (its Host read and checked) adds ${a} us, the least relay ${r} us ($(ratio "$a" "$r")x it; target: at most 1.2x); bulk ${allow_mb} MB/s through it, ${plain_mb} MB/s straight (target: at least 1000)"
		if [ "$backend" = landlock ]; then
			# Every connect of the landlock backend goes to the
			# supervisor first, allow or not: its share, a connect to
			# the run's own listener, beside none.
			sv=() np=()
			for _ in 1 2 3 4 5; do
				sv+=("$("$STOCKADE" -q --backend landlock --net loopback -C "$tmp/ws" -- "$probe" connect-cycles 127.0.0.1 500 | sed -n 's/^us per round //p')")
				np+=("$("$probe" connect-cycles 127.0.0.1 500 | sed -n 's/^us per round //p')")
			done
			s_add=$(sub "$(median "${sv[@]}")" "$(median "${np[@]}")")
			echo "landlock: of that, the supervisor's share of any connect (loopback, to the run's own listener) ${s_add} us; the relay's $(sub "$a" "$s_add") us, $(ratio "$(sub "$a" "$s_add")" "$r")x the least relay"
		fi
		# Lookups: the host's resolver asked straight, names never asked
		# before; the same through stockade (each asked of the host's
		# resolver by stockade); and a name stockade has kept (one round
		# trip to stockade).
		host=() fresh=() kept=()
		for _ in 1 2 3 4 5; do
			host+=("$(outside "$probe" resolve-many rotate.test 200 | sed -n 's/^us per lookup //p')")
			fresh+=("$(outside "$STOCKADE" -q --backend "$backend" -C "$tmp/ws" --allow '*.rotate.test' -- "$probe" resolve-many rotate.test 200 | sed -n 's/^us per lookup //p')")
			kept+=("$(outside "$STOCKADE" -q --backend "$backend" -C "$tmp/ws" --allow a.test -- "$probe" resolve-many a.test 200 same | sed -n 's/^us per lookup //p')")
		done
		h=$(median "${host[@]}") f=$(median "${fresh[@]}") k=$(median "${kept[@]}")
		echo "$backend: a lookup through stockade ${f} us, the host's resolver straight ${h} us, a round trip to stockade ${k} us: $(ratio "$f" "$(python3 -c "import sys; print(1.1 * float(sys.argv[1]) + float(sys.argv[2]))" "$h" "$k")")x of 1.1x the host's plus the round trip (target: at most 1)"
	done
	kill "$hs" "$rl" 2>/dev/null
	wait "$hs" "$rl" 2>/dev/null
fi
echo

echo "== a real test suite with worker processes (node --test, 6 files of loopback servers and clients)"
if command -v node >/dev/null; then
	cp -r tests/bench-suite "$tmp/ws/"
	(cd "$tmp/ws" && node --test bench-suite/ >/dev/null 2>&1)
	read -r on_med _ _ _ lo_med _ _ _ ns_med _ _ _ off_med _ _ _ plain_med _ _ _ floor_med _ _ _ < <("$BENCHRUN" 7 \
		"$STOCKADE" -q --backend landlock --net on -C "$tmp/ws" -- node --test bench-suite/ :: \
		"$STOCKADE" -q --backend landlock --net loopback -C "$tmp/ws" -- node --test bench-suite/ :: \
		"$STOCKADE" -q --backend namespaces --net loopback -C "$tmp/ws" -- node --test bench-suite/ :: \
		"$STOCKADE" -q --mode off -C "$tmp/ws" -- node --test bench-suite/ :: \
		sh -c 'cd "$1" && exec node --test bench-suite/' sh "$tmp/ws" :: \
		sh -c 'cd "$1" && exec "$2" --call connect -- node --test bench-suite/' sh "$tmp/ws" "$(realpath "$BUILD")/tests/notifyparent" | tr '\n' ' ')
	echo "landlock, --net on:     median $((on_med / 1000)) ms"
	echo "landlock, loopback:     median $((lo_med / 1000)) ms"
	echo "namespaces, loopback:   median $((ns_med / 1000)) ms"
	echo "--mode off:             median $((off_med / 1000)) ms"
	echo "without stockade:       median $((plain_med / 1000)) ms"
	echo "against no stockade (target: within 1.02x): landlock loopback $(ratio "$lo_med" "$plain_med")x, namespaces $(ratio "$ns_med" "$plain_med")x, landlock --net on $(ratio "$on_med" "$plain_med")x"
	echo "landlock loopback against --net on (the supervisor's share): $(ratio "$lo_med" "$on_med")x"
	# The floor of any supervisor of connects: each connect sent to a
	# seccomp listener and let go at once (notifyparent --call connect). The suite's
	# processes wait for each answer, and while one waits its CPU goes to
	# another thread.
	echo "the floor, every connect sent to a listener that lets it go (notifyparent --call connect): median $((floor_med / 1000)) ms, $(ratio "$floor_med" "$plain_med")x no stockade; landlock loopback $(ratio "$lo_med" "$floor_med")x the floor"
else
	echo "node is not installed: no suite to run"
fi
echo

echo "== the terminal relay: a pty made by the harness (python's pty module), the command's own under stockade"
# A keystroke's echo (the program in raw mode echoes each byte, as an
# editor does), and cat of a file to the terminal: the same program on
# the harness's pty, and under stockade, whose relay copies between that
# pty and the run's own. Rounds alternate, so that the machine's load
# falls on each alike; the file is sparse (zeros), read from the cache.
: "${BENCH_TTY_MIB:=1024}"
big="$tmp/ws/big"
truncate -s "${BENCH_TTY_MIB}M" "$big"
pty_bench() {
	python3 tools/bench-pty.py "$@"
}
declare -A echo_med echo_p99
for round in 1 2 3; do
	for v in bare landlock namespaces; do
		case $v in
		bare) read -r m p < <(pty_bench echo 1000 --) ;;
		*) read -r m p < <(pty_bench echo 1000 -- "$STOCKADE" -q --backend "$v" -C "$tmp/ws" --) ;;
		esac
		echo_med[$v]+="$m "
		echo_p99[$v]+="$p "
	done
done
median3() {
	python3 -c "import sys; v=sorted(map(float, sys.argv[1:])); print('%.1f' % v[len(v)//2])" $1
}
for v in bare landlock namespaces; do
	printf 'echo, %-12s median %s us, 99th percentile %s us (medians of 3 rounds of 1000 keys)\n' "$v:" \
		"$(median3 "${echo_med[$v]}")" "$(median3 "${echo_p99[$v]}")"
done
echo "echo latency:     $(ratio "$(median3 "${echo_med[landlock]}")" "$(median3 "${echo_med[bare]}")")x without stockade (landlock), $(ratio "$(median3 "${echo_med[namespaces]}")" "$(median3 "${echo_med[bare]}")")x (namespaces)"
read -r cb_s cb_r < <(pty_bench cat "$big" --)
read -r cl_s cl_r < <(pty_bench cat "$big" -- "$STOCKADE" -q --backend landlock -C "$tmp/ws" --)
read -r cn_s cn_r < <(pty_bench cat "$big" -- "$STOCKADE" -q --backend namespaces -C "$tmp/ws" --)
echo "cat ${BENCH_TTY_MIB} MiB, bare:       ${cb_s} s (${cb_r} MiB/s)"
echo "cat ${BENCH_TTY_MIB} MiB, landlock:   ${cl_s} s (${cl_r} MiB/s), $(ratio "$cl_s" "$cb_s")x the time without stockade"
echo "cat ${BENCH_TTY_MIB} MiB, namespaces: ${cn_s} s (${cn_r} MiB/s), $(ratio "$cn_s" "$cb_s")x"
