# conf/examples/: each profile, copied as a project's stockade.ini, runs
# the test suite of a project of its kind in the jail with the same counts
# as without stockade, offline (nothing is fetched: no registry is
# reached). The projects have what real ones have: a virtualenv made with
# `python3 -m venv` and a package only it holds, node_modules installed
# from a package (npm, offline, from a local tarball), cargo's target/, a
# __pycache__ git ignores, a tracked dotfile (.npmrc, .flake8...), a .env
# git ignores, and tests that start a server of their own on loopback.
# Each suite runs outside first (its counts are the reference), then in
# the jail with the example's test profile.
#
# The controls: the same suite with the network off fails its loopback
# tests (what the examples' `network = off` did) and says why at once
# instead of hanging (the namespace jail once left npm test and pytest
# waiting for ever, with no line); the Python suite with its virtualenv
# hidden fails (what the example's `hide-ignored` did).
#
# A toolchain that is missing is a skip, which STOCKADE_MUST_WORK=1 (CI)
# counts as a failure: .ci/run installs python3, python3-venv,
# python3-pytest, nodejs, cargo, golang-go and build-essential.
. tests/lib.sh

new_places
nonce=$(nonce_new)
export GIT_CONFIG_NOSYSTEM=1 GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@example.invalid \
	GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@example.invalid
# Seconds a suite (a build included) may take, in or out of the jail.
SUITE_TIMEOUT=300

# project KIND DOTFILE: a fresh project folder with the example as its
# stockade.ini, a .env holding the nonce (git ignores it, as real
# projects do), a tracked dotfile and a git repository.
project() {
	P="$T/$1"
	mkdir -p "$P"
	cp "conf/examples/$1.ini" "$P/stockade.ini"
	echo "SECRET=$nonce" >"$P/.env"
	printf '.env\n' >"$P/.gitignore"
	printf '# %s: the project'"'"'s own settings, tracked\n' "$2" >"$P/$2"
	DOTFILE=$2
	git -C "$P" init -q
}

# commit: the project as its repository has it.
commit() {
	git -C "$P" add -A
	git -C "$P" commit -q -m fixture
}

# The counts a runner prints, without its timings.
counts_pytest() { grep -E '^=*[ ]*[0-9]+ (passed|failed|error)' | sed -E 's/ in [0-9.]+s.*//; s/=//g; s/^ *//'; }
counts_node() { grep -E '^# (tests|pass|fail|cancelled|skipped|todo) [0-9]+$'; }
counts_cargo() { grep -E '^test result: ' | sed -E 's/; finished in .*//'; }
counts_go() { grep -E '^[ ]*--- (PASS|FAIL|SKIP): ' | sed -E 's/ \([0-9.]+s\)$//' | sort; }
counts_plain() { grep -E '^[0-9]+ passed, [0-9]+ failed'; }

# suite KIND COUNTS WANT [STOCKADE-OPTION...] -- CMD...: CMD outside, then
# in the jail with the test profile: both exit 0 with the same counts
# (COUNTS extracts them), which hold WANT.
suite() {
	local kind=$1 counts=$2 want=$3 out in st_out st_in opts=()
	shift 3
	while [ "$1" != -- ]; do
		opts+=("$1")
		shift
	done
	shift
	out=$(cd "$P" && _with_timeout "$SUITE_TIMEOUT" "$@" 2>&1)
	st_out=$?
	OUT_COUNTS=$(printf '%s\n' "$out" | $counts)
	if [ $st_out -eq 0 ] && printf '%s\n' "$OUT_COUNTS" | grep -q -E -- "$want"; then
		pass "$kind: outside, the suite passes ($(printf '%s' "$OUT_COUNTS" | head -n 3 | tr '\n' ' '))"
	else
		fail "$kind: outside, the suite passes (status $st_out)"
		diag "$out"
		return 1
	fi
	in=$(cd "$P" && _with_timeout "$SUITE_TIMEOUT" jail -C "$P" -p test "${opts[@]}" -- "$@" 2>&1)
	st_in=$?
	printf '%s\n' "$in" >>"$T/outputs"
	IN_OUTPUT=$in
	if [ $st_in -eq 0 ] && [ "$(printf '%s\n' "$in" | $counts)" = "$OUT_COUNTS" ]; then
		pass "$kind: in the jail (-p test${opts[*]:+ ${opts[*]}}), the same counts"
	else
		fail "$kind: in the jail (-p test${opts[*]:+ ${opts[*]}}), the same counts (status $st_in)"
		diag "outside: $OUT_COUNTS"
		diag "$in"
	fi
}

# off_named KIND -- CMD...: with the network off, the suite's loopback
# tests fail, at once, and stockade names what it refused.
off_named() {
	local kind=$1 out st
	shift 2
	out=$(cd "$P" && _with_timeout 120 jail -C "$P" -p test --net off -- "$@" 2>&1)
	st=$?
	printf '%s\n' "$out" >>"$T/outputs"
	if [ $st -ne 0 ] && [ $st -ne 124 ] && printf '%s\n' "$out" | grep -q '^stockade: refused: syscall socket (EAFNOSUPPORT)'; then
		pass "$kind: control: with the network off its loopback tests fail, at once, and stockade says why"
	else
		fail "$kind: control: with the network off its loopback tests fail, at once, and stockade says why (status $st)"
		[ $st -eq 124 ] && diag "it hung (killed after 120 s)"
		diag "$out"
	fi
}

# git_clean KIND: git in the jail sees the project as git outside does:
# nothing changed (a hidden tracked dotfile once showed as modified, and
# made git diff fail).
git_clean() {
	local out st
	out=$(cd "$P" && jail -q -C "$P" -p test -- sh -c 'git status --porcelain && git diff --quiet && cat "$0" >/dev/null' "$DOTFILE" 2>&1)
	st=$?
	if [ -z "$(git -C "$P" status --porcelain)" ] && [ $st -eq 0 ] && [ -z "$out" ]; then
		pass "$1: git status and git diff in the jail: nothing changed, the tracked $DOTFILE readable"
	else
		fail "$1: git status and git diff in the jail: nothing changed, the tracked $DOTFILE readable (status $st)"
		diag "$out"
	fi
}

env_hidden() {
	local out
	out=$(jail -C "$P" -p test -- cat "$P/.env" 2>&1)
	if [ $? -ne 0 ] && ! printf '%s\n' "$out" | grep -q "$nonce"; then
		pass "$1: the project's .env is hidden"
	else
		fail "$1: the project's .env is hidden"
		diag "$out"
	fi
}

need() {
	command -v "$1" >/dev/null || { skip "$2: $1 is not installed"; return 1; }
}

# ---------------------------------------------------------------- Python
# A python3 with venv (and ensurepip, python3-venv) and pytest
# (python3-pytest): the system's, which PATH may not find first.
py=
for c in /usr/bin/python3 python3; do
	"$c" -c 'import venv, ensurepip, pytest' >/dev/null 2>&1 && { py=$c; break; }
done
if [ -z "$py" ]; then
	skip "python: no python3 with venv and pytest here (apt-get install python3-venv python3-pytest)"
else
	project python .flake8
	printf '.venv/\n__pycache__/\n.pytest_cache/\nbuild/\n' >>"$P/.gitignore"
	# The virtualenv, with pip as python3 -m venv makes it; pytest from
	# the system's site-packages, and a package of its own that the
	# system's Python has not.
	(cd "$P" && "$py" -m venv --system-site-packages .venv) || fail "python: python3 -m venv"
	purelib=$("$P/.venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
	printf 'def add(a, b):\n    return a + b\n' >"$purelib/tiny.py"
	mkdir -p "$P/calc" "$P/tests" "$P/build" "$P/old/__pycache__"
	echo "old build output" >"$P/build/out.txt"
	printf 'from tiny import add\n' >"$P/calc/__init__.py"
	touch "$P/tests/__init__.py"
	cat >"$P/tests/test_calc.py" <<'EOF'
import http.server, os, sys, threading, urllib.request
from calc import add

def test_add():
    assert add(2, 3) == 5

def test_in_the_virtualenv():
    assert os.path.realpath(sys.prefix) == os.path.realpath(".venv")

def serve(host):
    srv = http.server.ThreadingHTTPServer((host, 0), http.server.SimpleHTTPRequestHandler)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv

def test_a_server_on_loopback():
    srv = serve("127.0.0.1")
    with urllib.request.urlopen("http://127.0.0.1:%d/.flake8" % srv.server_address[1], timeout=10) as r:
        assert r.status == 200
    srv.shutdown()

def test_a_server_on_localhost():
    srv = serve("localhost")
    with urllib.request.urlopen("http://localhost:%d/" % srv.server_address[1], timeout=10) as r:
        assert r.status == 200
    srv.shutdown()

def test_the_tracked_dotfile():
    assert "tracked" in open(".flake8").read()
EOF
	# __pycache__ as a run outside leaves it, and a stale one whose
	# module is gone
	(cd "$P" && PYTHONDONTWRITEBYTECODE= "$P/.venv/bin/python" -m compileall -q calc tests >/dev/null)
	cp "$P/calc/__pycache__/"*.pyc "$P/old/__pycache__/gone.cpython-3.pyc"
	commit
	suite python counts_pytest '^5 passed$' -- .venv/bin/python -m pytest -q
	suite python counts_pytest '^5 passed$' --hide-ignored -- .venv/bin/python -m pytest -q
	printf '%s\n' "$IN_OUTPUT" | grep -q "^stockade: hide-ignored .*: hid 2 entries git ignores: .env, build/$" &&
		printf '%s\n' "$IN_OUTPUT" | grep -q "^stockade: hide-ignored: kept .*\.venv/ .*__pycache__/" &&
		pass "python: hide-ignored says it hid build/ and kept the virtualenv and __pycache__" ||
		{ fail "python: hide-ignored says it hid build/ and kept the virtualenv and __pycache__"; diag "$IN_OUTPUT"; }
	expect_probe "python: hide-ignored hides build/" "errno $(covered_errno)" -- \
		jail -C "$P" -p test --hide-ignored -- "$PROBE" read "$P/build/out.txt"
	out=$(cd "$P" && _with_timeout "$SUITE_TIMEOUT" jail -C "$P" -p test --hide "$P/.venv" -- .venv/bin/python -m pytest -q 2>&1)
	[ $? -ne 0 ] && pass "python: control: the suite fails with its virtualenv hidden" ||
		{ fail "python: control: the suite fails with its virtualenv hidden"; diag "$out"; }
	off_named python -- .venv/bin/python -m pytest -q
	git_clean python
	env_hidden python
fi

# ------------------------------------------------------------------ Node
if need node node; then
	project node .npmrc
	printf 'node_modules/\n' >>"$P/.gitignore"
	printf 'fund=false\naudit=false\n' >>"$P/.npmrc"
	# a package as the registry would give it: outside the project
	mkdir -p "$T/tiny"
	echo '{ "name": "tiny", "version": "1.0.0", "main": "index.js" }' >"$T/tiny/package.json"
	echo 'module.exports = (a, b) => a + b;' >"$T/tiny/index.js"
	cat >"$P/package.json" <<'EOF'
{ "name": "sum", "version": "1.0.0", "private": true, "scripts": { "test": "node --test" } }
EOF
	if command -v npm >/dev/null; then
		# installed by npm, offline, from the package's tarball
		(cd "$T/tiny" && npm pack -q >/dev/null 2>&1) &&
			(cd "$P" && npm install --offline --no-audit --no-fund "$T/tiny/tiny-1.0.0.tgz" >/dev/null 2>&1) ||
			fail "node: npm install --offline of a local package"
		node_cmd=(npm test)
	else
		diag "no npm here: node_modules made as npm makes it, the suite run with node --test"
		mkdir -p "$P/node_modules/tiny"
		cp "$T/tiny/"* "$P/node_modules/tiny/"
		node_cmd=(node --test)
	fi
	mkdir -p "$P/test"
	cat >"$P/test/sum.test.js" <<'EOF'
const test = require("node:test");
const assert = require("node:assert");
const fs = require("node:fs");
const http = require("node:http");
const tiny = require("tiny");

test("adds", () => assert.strictEqual(tiny(2, 3), 5));

function get(host, port) {
  return new Promise((resolve, reject) => {
    http.get({ host, port }, (res) => {
      let body = "";
      res.on("data", (d) => (body += d));
      res.on("end", () => resolve(body));
    }).on("error", reject);
  });
}

// as a framework's suite does it: the server closed after the test,
// whatever it did
async function withServer(listen, host) {
  const srv = http.createServer((q, r) => r.end("hi"));
  await new Promise((resolve) => listen(srv, resolve));
  try {
    assert.strictEqual(await get(host, srv.address().port), "hi");
  } finally {
    srv.close();
  }
}

test("a server on loopback", () => withServer((s, cb) => s.listen(0, "127.0.0.1", cb), "127.0.0.1"));
test("a server on every address, reached as localhost", () => withServer((s, cb) => s.listen(0, cb), "localhost"));
test("the tracked .npmrc", () => assert.match(fs.readFileSync(".npmrc", "utf8"), /tracked/));
EOF
	commit
	suite node counts_node '^# pass 4$' -- "${node_cmd[@]}"
	off_named node -- "${node_cmd[@]}"
	git_clean node
	env_hidden node
fi

# ------------------------------------------------------------------ Rust
# The cargo that works here with the test's home: rustup's needs a
# toolchain in ~/.rustup, which the test's fresh home has not.
cargo=
for c in cargo /usr/bin/cargo; do
	"$c" --version >/dev/null 2>&1 && { cargo=$c; break; }
done
rustc=$(dirname "$(command -v "$cargo" 2>/dev/null || echo /usr/bin/cargo)")/rustc
if [ -z "$cargo" ]; then
	skip "rust: no cargo works here (apt-get install cargo)"
else
	project rust .rustfmt.toml
	printf '/target\n' >>"$P/.gitignore"
	mkdir -p "$P/src"
	cat >"$P/Cargo.toml" <<'EOF'
[package]
name = "sum"
version = "0.1.0"
edition = "2018"

[dependencies]
EOF
	cat >"$P/src/lib.rs" <<'EOF'
pub fn add(a: i32, b: i32) -> i32 { a + b }

#[cfg(test)]
mod tests {
    use std::io::{Read, Write};
    use std::net::{TcpListener, TcpStream};

    #[test]
    fn adds() { assert_eq!(super::add(2, 3), 5); }

    #[test]
    fn a_server_on_loopback() {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        let t = std::thread::spawn(move || {
            let (mut s, _) = l.accept().unwrap();
            s.write_all(b"hi").unwrap();
        });
        let mut c = TcpStream::connect(("127.0.0.1", port)).unwrap();
        let mut got = String::new();
        c.read_to_string(&mut got).unwrap();
        t.join().unwrap();
        assert_eq!(got, "hi");
    }

    #[test]
    fn the_tracked_dotfile() {
        assert!(std::fs::read_to_string(".rustfmt.toml").unwrap().contains("tracked"));
    }
}
EOF
	rust_cmd=(env RUSTC="$rustc" RUSTDOC="${rustc%c}doc" "$cargo" test --offline)
	# Cargo.lock and target/ as after a first build, which the suite's
	# run outside makes (see PATH RULES in stockade.1 for the landlock
	# backend and a hide at the top)
	suite rust counts_cargo '^test result: ok. 3 passed' -- "${rust_cmd[@]}"
	commit
	git_clean rust
	off_named rust -- "${rust_cmd[@]}"
	env_hidden rust
fi

# -------------------------------------------------------------------- Go
if need go go; then
	project go .golangci.yml
	cat >"$P/go.mod" <<'EOF'
module example.invalid/sum

go 1.19
EOF
	cat >"$P/sum.go" <<'EOF'
package sum

func Add(a, b int) int { return a + b }
EOF
	cat >"$P/sum_test.go" <<'EOF'
package sum

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
)

func TestAdd(t *testing.T) {
	if Add(2, 3) != 5 {
		t.Fatal("2 + 3")
	}
}

func TestServerOnLoopback(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "hi") }))
	defer srv.Close()
	res, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if b, _ := io.ReadAll(res.Body); string(b) != "hi" {
		t.Fatalf("got %q", b)
	}
}

func TestTrackedDotfile(t *testing.T) {
	b, err := os.ReadFile(".golangci.yml")
	if err != nil || !strings.Contains(string(b), "tracked") {
		t.Fatal(err)
	}
}
EOF
	commit
	suite go counts_go 'PASS: TestServerOnLoopback' -- go test -count=1 -v ./...
	[ "$(printf '%s\n' "$OUT_COUNTS" | grep -c PASS)" = 3 ] && pass "go: the three tests ran" || fail "go: the three tests ran"
	off_named go -- go test -count=1 -v ./...
	git_clean go
	env_hidden go
fi

# ------------------------------------------------------------------ make
if need make make && need cc make; then
	project make .clang-format
	cat >"$P/sum.c" <<'EOF'
int add(int a, int b) { return a + b; }
EOF
	# the suite: the sum, and a server of its own on loopback
	cat >"$P/test.c" <<'EOF'
#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
int add(int, int);
static int loopback(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t n = sizeof(a);
	int l = socket(AF_INET, SOCK_STREAM, 0), c = socket(AF_INET, SOCK_STREAM, 0), s;
	char buf[3] = { 0 };
	if (l < 0 || c < 0 || bind(l, (void *)&a, sizeof(a)) || listen(l, 1) || getsockname(l, (void *)&a, &n) ||
	    connect(c, (void *)&a, sizeof(a)) || (s = accept(l, NULL, NULL)) < 0 || write(s, "hi", 2) != 2 ||
	    read(c, buf, 2) != 2) {
		perror("loopback");
		return 0;
	}
	return strcmp(buf, "hi") == 0;
}
int main(void)
{
	int passed = (add(2, 3) == 5) + loopback();
	printf("%d passed, %d failed\n", passed, 2 - passed);
	return passed == 2 ? 0 : 1;
}
EOF
	# objects and the program in obj/, the project's (see the Rust one)
	mkdir -p "$P/obj"
	touch "$P/obj/.gitkeep"
	printf 'obj/*.o\nobj/test\n' >>"$P/.gitignore"
	printf 'all: obj/test\nobj/%%.o: %%.c\n\t$(CC) -c -o $@ $<\nobj/test: obj/test.o obj/sum.o\n\t$(CC) -o $@ $^\ncheck: obj/test\n\t./obj/test\n' >"$P/Makefile"
	commit
	suite make counts_plain '^2 passed, 0 failed' -- make check
	off_named make -- make check
	git_clean make
	env_hidden make
fi

assert_absent "$nonce" "no example's output holds the .env's nonce" "$T/outputs"
plan_done
