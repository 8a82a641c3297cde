# The census: real programs run in the jail (a C build, Python, Node, and
# stockade's own unit tests), and the report shows the seccomp allowlist
# refused them nothing: every system call they make is in the table.
. tests/lib.sh

new_places

# census DESC [STOCKADE-OPTION]... -- CMD...: CMD succeeds in the jail and
# the listener recorded no refused system call.
census() {
	local desc=$1 out st
	local -a opts=()
	shift
	while [ "$1" != -- ]; do
		opts+=("$1")
		shift
	done
	shift
	rm -f "$T/report.json"
	out=$(jail --net off -C "$W" --report "$T/report.json" "${opts[@]}" -- "$@" 2>&1)
	st=$?
	if [ $st -ne 0 ]; then
		fail "$desc runs in the jail (status $st)"
		diag "$out"
		return
	fi
	pass "$desc runs in the jail"
	if python3 - "$T/report.json" <<'PY'; then
import json, sys
r = json.load(open(sys.argv[1]))
calls = [d for d in r["denials"] if d["kind"] == "syscall"]
assert not calls, calls
PY
		pass "$desc: no system call refused"
	else
		fail "$desc: no system call refused"
		diag "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["denials"])' "$T/report.json")"
	fi
}

cat >"$W/prog.c" <<'C'
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/wait.h>
static void *work(void *arg) { return arg; }
int main(void)
{
	pthread_t t[4];
	for (int i = 0; i < 4; i++)
		pthread_create(&t[i], NULL, work, NULL);
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	char tmp[4096];
	snprintf(tmp, sizeof(tmp), "%s/censusXXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	int fd = mkstemp(tmp);
	if (fd < 0 || write(fd, "x", 1) != 1)
		return 1;
	close(fd);
	unlink(tmp);
	if (system("true") != 0)
		return 1;
	puts("c ok");
	return 0;
}
C
printf 'all: prog\n\t./prog\nprog: prog.o\n\t$(CC) -pthread -o $@ prog.o\nprog.o: prog.c\n\t$(CC) -O2 -g -Wall -c -o $@ prog.c\n' >"$W/Makefile"
census "a C build with make and gcc" -- make -B -C "$W"

census "Python" -- python3 -c '
import asyncio, hashlib, json, os, socket, sqlite3, ssl, subprocess, sys, tempfile, threading
t = threading.Thread(target=lambda: None); t.start(); t.join()
assert subprocess.run(["echo", "sub"], capture_output=True).stdout == b"sub\n"
with tempfile.TemporaryDirectory() as d:
    open(os.path.join(d, "x"), "w").write("1")
sqlite3.connect(":memory:").execute("select 1")
async def main(): await asyncio.sleep(0.01)
asyncio.run(main())
hashlib.sha256(b"x").hexdigest()
a, b = socket.socketpair(); a.send(b"x"); assert b.recv(1) == b"x"
print("python ok")'

if command -v node >/dev/null; then
	census "Node" -- node -e '
const fs = require("fs"), cp = require("child_process"), os = require("os"), wt = require("worker_threads");
fs.writeFileSync("n.txt", "x");
cp.execSync("true");
os.cpus();
require("crypto").randomBytes(8);
const w = new wt.Worker("require(\"worker_threads\").parentPort.postMessage(1)", { eval: true });
w.on("message", () => { w.terminate(); console.log("node ok"); });'
else
	skip "node is not installed"
fi

# stockade's own unit tests inside the jail: those whose subject is not
# the jail itself (test-paths changes owners, test-netns and test-guard
# make namespaces and state directories).
SRC=$PWD
for t in policy landlock seccomp env report cli; do
	bin="$BUILD/tests/test-$t"
	[ -x "$bin" ] || { fail "unit test $t is built"; continue; }
	STOCKADE_SRCDIR=$SRC census "stockade's unit test $t" --read "$SRC/tests/golden" -- "$bin"
done

plan_done
