# Network allow: the allowed names reached, by curl, Python, Node and Go,
# with no proxy setting; everything else refused, at the lookup and at the
# connection, and named. The "internet" is tests/fakenet.sh's network
# namespace (10.204.0.0/24, fd00:204::/64), its name server the host's
# resolver for stockade alone: the run goes in a mount namespace of the
# test's own whose /etc/resolv.conf names it (as root: unshare -m; as a
# user: a user namespace of the user's own, mapped to itself, whose
# capabilities go before stockade starts). Each refusal is checked at
# the fake server too: what was refused never reached it.
. tests/lib.sh

new_places
LL=false
[ "$TEST_BACKEND" = landlock ] && LL=true
FK=${STOCKADE_FAKENET:-/tmp/stockade-fakenet}

for tool in curl python3 openssl unshare setpriv; do
	command -v "$tool" >/dev/null || skip_all "no $tool here"
done
if is_root && ! ip netns list 2>/dev/null | grep -q '^stockade-fakenet\b'; then
	at_exit tests/fakenet.sh down "$FK"
	tests/fakenet.sh up "$FK" >/dev/null 2>&1
fi
if ! curl -s --max-time 5 --cacert "$FK/ca.pem" --resolve a.test:443:10.204.0.2 https://a.test/ 2>/dev/null | grep -q 'sni=a.test'; then
	# Making it needs root: .ci/run makes it before the unprivileged run.
	skip_all "no fake internet here (tests/fakenet.sh up DIR, as root, makes it)"
fi
pass "THREATS 77 control: outside, the fake internet answers (https://a.test at 10.204.0.2)"
cp "$FK/ca.pem" "$W/ca.pem"
printf 'nameserver 10.204.0.2\n' >"$T/resolv.conf"
chmod 755 "$T"
chmod 644 "$T/resolv.conf"
# No proxy of any kind reaches the command: it connects as it would
# without stockade.
unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY all_proxy ALL_PROXY no_proxy NO_PROXY

# outside CMD...: CMD with the fake internet's name server as the host's.
outside() {
	if is_root; then
		unshare -m sh -c 'mount --bind "$0" /etc/resolv.conf && exec "$@"' "$T/resolv.conf" "$@"
	else
		unshare -Umc --keep-caps sh -c \
			'mount --bind "$0" /etc/resolv.conf && exec setpriv --inh-caps=-all --ambient-caps=-all "$@"' \
			"$T/resolv.conf" "$@"
	fi
}
# in_jail ARGS... -- CMD...: the stockade under test, the workspace W.
in_jail() {
	outside "${JAIL[@]}" -C "$W" "$@"
}
out=$(outside getent hosts a.test 2>&1)
case $out in
*10.204.0.2* | *fd00:204::2*) pass "THREATS 77 control: outside, the test's resolver answers a.test" ;;
*)
	fail "THREATS 77 control: outside, the test's resolver answers a.test"
	diag "$out"
	plan_done
	;;
esac
seen() {
	grep -q -F -e "$1" "$FK/log"
}
nonce=$(nonce_new | tr -cd 'a-z0-9' | tail -c 20)

# --- clients, with no proxy setting -------------------------------------

# check DESC PATTERN -- CMD...: CMD's output (stdout and stderr) matches
# PATTERN (an extended regular expression).
check() {
	local desc=$1 pattern=$2 out
	shift 3
	out=$("$@" 2>&1)
	if printf '%s\n' "$out" | grep -q -E -- "$pattern"; then
		pass "$desc"
	else
		fail "$desc"
		diag "$out"
	fi
}
# refused DESC PATTERN -- CMD...: the same, and stockade's one line names
# what was refused.
check "THREATS 77: curl reaches an allowed name over HTTPS" 'over https sni=a\.test host=a\.test' -- \
	in_jail --allow a.test -- curl -sS --max-time 10 --cacert ca.pem https://a.test/
check "curl reaches an allowed name over plain HTTP (its Host read)" 'over http sni=None host=a\.test' -- \
	in_jail --allow a.test -- curl -sS --max-time 10 http://a.test/
check "curl reaches an allowed name over IPv6" 'hello from fd00:204::2 over https sni=a\.test' -- \
	in_jail --allow a.test -- curl -6 -sS --max-time 10 --cacert ca.pem https://a.test/
# Every port allowed gets its listeners, however many: here 443 is the
# 41st of 41 (two listeners each, IPv4 and IPv6).
many=()
for port in $(seq 1001 1040); do many+=(--allow a.test:"$port"); done
check "an allowed name is reached on the last of 41 ports allowed, over IPv4 and IPv6" \
	'^4 hello from 10\.204\.0\.[23] over https.*6 hello from fd00:204::2 over https' -- \
	in_jail "${many[@]}" --allow a.test:443 -- sh -c 'echo 4 $(curl -4 -sS --max-time 10 --cacert ca.pem https://a.test/) 6 $(curl -6 -sS --max-time 10 --cacert ca.pem https://a.test/)'
check "python3 reaches an allowed name" 'over https sni=c\.test host=c\.test' -- \
	in_jail --allow c.test -- python3 -c 'import ssl, urllib.request
ctx = ssl.create_default_context(cafile="ca.pem")
print(urllib.request.urlopen("https://c.test/", context=ctx, timeout=10).read().decode())'
if command -v node >/dev/null; then
	check "node reaches an allowed name" 'over https sni=c\.test host=c\.test' -- \
		in_jail --allow c.test -- node -e 'require("https").get("https://c.test/", { ca: require("fs").readFileSync("ca.pem") },
	r => r.pipe(process.stdout)).on("error", e => { console.log("node:", e.message); process.exit(1); })'
else
	skip "node reaches an allowed name (no node here)"
fi
if command -v go >/dev/null; then
	mkdir -p "$T/go"
	cat >"$T/go/main.go" <<'GO'
package main

import (
	"fmt"
	"io"
	"net/http"
	"os"
)

func main() {
	r, err := http.Get(os.Args[1])
	if err != nil {
		fmt.Println("go:", err)
		os.Exit(1)
	}
	b, _ := io.ReadAll(r.Body)
	fmt.Print(string(b))
}
GO
	if (cd "$T/go" && GOCACHE="$T/go/cache" GOPATH="$T/go/path" GO111MODULE=off GOFLAGS= go build -o "$W/goget" main.go) >"$T/go/build.out" 2>&1; then
		check "go reaches an allowed name" 'over https sni=c\.test host=c\.test' -- \
			in_jail --allow c.test -- env SSL_CERT_FILE=ca.pem ./goget https://c.test/
	else
		fail "go reaches an allowed name (the client did not build)"
		diag "$(cat "$T/go/build.out")"
	fi
else
	skip "go reaches an allowed name (no go here)"
fi

# --- what is refused, and named ------------------------------------------

# The lookup: NXDOMAIN at once, and the name server never asked.
out=$(in_jail --allow a.test --report "$T/r.json" -- curl -sS --max-time 10 https://"$nonce".test/ 2>&1)
case $out in
*"Could not resolve host"*"stockade: refused: name $nonce.test (NXDOMAIN)"*"to allow: --allow $nonce.test"*)
	pass "THREATS 77: a name not allowed: NXDOMAIN, and stockade's line names it with the fix" ;;
*) fail "THREATS 77: a name not allowed: NXDOMAIN, and stockade's line names it with the fix"; diag "$out" ;;
esac
seen "$nonce" && fail "THREATS 77: the host's name server was never asked for it" || pass "THREATS 77: the host's name server was never asked for it"
python3 - "$T/r.json" "$nonce.test" <<'PY' && pass "the report names it: NXDOMAIN, the rule, its source, --allow" || { fail "the report names it: NXDOMAIN, the rule, its source, --allow"; diag "$(cat "$T/r.json")"; }
import json, sys
r = json.load(open(sys.argv[1]))
d = [x for x in r["denials"] if x["what"] == sys.argv[2]]
assert d and d[0]["kind"] == "name" and d[0]["errno"] == "NXDOMAIN" and d[0]["fix"].startswith("--allow " + sys.argv[2]), d
assert d[0]["source"] == "--allow on the command line", d
n = [x for x in r["names"] if x["name"] == sys.argv[2]]
assert n and all(x["verdict"].startswith("refused") for x in n), r["names"]
PY

# The connection: a name not allowed, at an allowed name's address (a
# shared front end: b.test is a.test's address too).
check "THREATS 77: a second name on an allowed name's address (TLS server name b.test at a.test's address) is refused" \
	'stockade: refused: .*connect b\.test:443 at 10\.204\.0\.2:443 \(reset\).*to allow: --allow b\.test' -- \
	in_jail --allow a.test -- curl -sS --max-time 10 --cacert ca.pem --resolve b.test:443:10.204.0.2 https://b.test/"$nonce"-1
check "THREATS 77: and by its HTTP Host" 'connect b\.test:80 at 10\.204\.0\.2:80 \(reset\)' -- \
	in_jail --allow a.test -- curl -sS --max-time 10 --resolve b.test:80:10.204.0.2 http://b.test/"$nonce"-2
# An address alone: no name looked up for it.
check "THREATS 77: an IP literal (HTTPS, no server name) is refused" 'connect 10\.204\.0\.3:443 \(reset\)' -- \
	in_jail --allow a.test -- curl -sS --max-time 10 -k https://10.204.0.3/"$nonce"-3
check "THREATS 77: an IP literal over plain HTTP is refused" 'connect 10\.204\.0\.3:80 \(reset\)' -- \
	in_jail --allow a.test -- curl -sS --max-time 10 http://10.204.0.3/"$nonce"-4
# The name and the address disagree: an allowed name sent to another
# name's address (the command chose it: domain fronting).
check "THREATS 77: a server name that does not match the address (a.test sent to c.test's) is refused" \
	'connect a\.test:443 at 10\.204\.0\.3:443 \(reset\)' -- \
	in_jail --allow a.test -- curl -sS --max-time 10 --cacert ca.pem --resolve a.test:443:10.204.0.3 https://a.test/"$nonce"-5
check "THREATS 77: an HTTP Host that does not match the address is refused" 'connect a\.test:80 at 10\.204\.0\.3:80 \(reset\)' -- \
	in_jail --allow a.test -- curl -sS --max-time 10 --resolve a.test:80:10.204.0.3 http://a.test/"$nonce"-6
seen "$nonce-" && { fail "THREATS 77: no refused connection reached a server"; diag "$(grep -F "$nonce" "$FK/log")"; } ||
	pass "THREATS 77: no refused connection reached a server"

# A port no allowed name has: refused at the connect (ENETUNREACH), with
# the name and port to allow.
check "a port the name is not allowed on is refused at once, with --allow NAME:PORT" \
	'(ssh.test|10\.204\.0\.4).*(ENETUNREACH|Network is unreachable)|ENETUNREACH.*--allow ssh\.test:22' -- \
	in_jail --allow ssh.test -- python3 -c 'import socket
try:
    socket.create_connection(("ssh.test", 22), timeout=10)
except OSError as e:
    print("errno", e.errno, e.strerror)
    raise SystemExit(3)'
# Another protocol on an allowed port goes to the addresses handed out.
check "THREATS 77: ssh.test:22 allowed: a server that speaks first is reached" "banner SSH-2.0-fakenet echo: x" -- \
	in_jail --allow ssh.test:22 -- python3 -c 'import socket
s = socket.create_connection(("ssh.test", 22), timeout=10)
f = s.makefile("rb")
banner = f.readline().strip().decode()
s.sendall(b"x\n")
print("banner", banner, f.readline().strip().decode())'
check "THREATS 77: ssh to an allowed port at an address no name was looked up for is refused" 'reset|ECONNRESET|errno 104|closed' -- \
	in_jail --allow ssh.test:22 -- python3 -c 'import socket
try:
    s = socket.create_connection(("10.204.0.4", 22), timeout=15)
    s.sendall(b"SSH-2.0-client\r\n")
    print("got", s.recv(100) or "closed")
except OSError as e:
    print("errno", e.errno)'

# Plain HTTP to an allowed name's address, naming b.test (a.test's
# address too) as a lenient server would read it: refused, never passed
# on as another protocol or on its address once the wait is over; b.test
# never reached. http80.py MODE PATH: one request to a.test's address,
# port 80; prints what came back, or the error.
cat >"$W/http80.py" <<'PY'
import socket, sys, time
mode, path = sys.argv[1], sys.argv[2]
ip = socket.gethostbyname("a.test")
parts = {
    "leading-crlf": [b"\r\nGET /%s HTTP/1.1\r\nHost: b.test\r\n\r\n"],
    "lowercase": [b"get /%s HTTP/1.1\r\nHost: b.test\r\n\r\n"],
    "bare-lf": [b"GET /%s HTTP/1.1\nHost: b.test\n\n"],
    "bare-lf-allowed": [b"GET /%s HTTP/1.1\nHost: a.test\n\n"],
    "slow": [b"GET /%s HTTP/1.1\r\nX: y\r\n", 11, b"Host: b.test\r\n\r\n"],
    "no-host": [b"GET /%s HTTP/1.0\r\n\r\n"],
    "h2c": [b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\0\0\0\4\0\0\0\0\0/%s"],
}[mode]
t = time.monotonic()
try:
    s = socket.create_connection((ip, 80), timeout=25)
    for p in parts:
        if isinstance(p, int):
            time.sleep(p)
        else:
            s.sendall(p.replace(b"%s", path.encode()))
    got = b""
    while True:
        # The head and the body may come apart: until the body's line.
        more = s.recv(4096)
        got += more
        if not more or got.endswith(b"\n") and b"\r\n\r\n" in got and not got.endswith(b"\r\n\r\n"):
            break
    print("got", got.decode("latin-1").split("\r\n\r\n")[-1].strip() if got else "closed", "after %.1f s" % (time.monotonic() - t))
except OSError as e:
    print("errno", e.errno, "after %.1f s" % (time.monotonic() - t))
    sys.exit(3)
PY
# refused80 DESC WHY MODE: http80.py MODE to a.test's address, a.test
# allowed: reset, stockade's line names it, and the report says WHY.
refused80() {
	local desc=$1 why=$2 mode=$3 out
	out=$(in_jail --allow a.test --report "$T/h.json" -- python3 http80.py "$mode" "$nonce-h-$mode" 2>&1)
	if printf '%s\n' "$out" | grep -q -E '^errno 104 ' &&
		printf '%s\n' "$out" | grep -q -E '^stockade: refused: connect (b\.test:80 at )?10\.204\.0\.2:80 \(reset\)' &&
		python3 - "$T/h.json" "$why" <<'PY'; then
import json, sys
r = json.load(open(sys.argv[1]))
c = [x for x in r["connections"] if x["address"] == "10.204.0.2:80"]
assert c and c[0]["verdict"] == "refused" and c[0]["bytes_out"] == 0, r["connections"]
assert sys.argv[2] in c[0]["why"], c
PY
		pass "$desc"
	else
		fail "$desc"
		diag "$out"
		diag "$(cat "$T/h.json")"
	fi
}
refused80 "THREATS 77: an HTTP request after an empty line, Host b.test at a.test's address, is refused" \
	"HTTP Host b.test is not allowed on port 80" leading-crlf
refused80 "THREATS 77: an HTTP request with a lowercase method, Host b.test, is refused" \
	"HTTP Host b.test is not allowed on port 80" lowercase
refused80 "THREATS 77: an HTTP request with bare LF line ends, Host b.test, is refused" \
	"HTTP Host b.test is not allowed on port 80" bare-lf
check "THREATS 77: and it is refused at once, not after the 10 s wait" 'errno 104 after [0-4]\.' -- \
	in_jail --allow a.test -- python3 http80.py bare-lf "$nonce"-h-bare-lf-2
check "an HTTP request with bare LF line ends, Host a.test: its name read, reached" \
	'hello from 10\.204\.0\.2 over http sni=None host=a\.test after [0-4]\.' -- \
	in_jail --allow a.test -- python3 http80.py bare-lf-allowed lf-allowed-$$
refused80 "THREATS 77: an HTTP head held back past 10 s (Host b.test sent later) is refused at the bound, and says so" \
	"a first message not whole within 10 s" slow
refused80 "THREATS 77: an HTTP/1.0 request without Host (the server's default site would answer) is refused" \
	"an HTTP request without a Host" no-host
refused80 "THREATS 77: HTTP/2 with prior knowledge (h2c: its host in a HEADERS frame) is refused" \
	"HTTP/2 with prior knowledge (h2c)" h2c
seen "$nonce-h" && { fail "THREATS 77: none of those requests reached the server"; diag "$(grep -F "$nonce" "$FK/log")"; } ||
	pass "THREATS 77: none of those requests reached the server"
# A ClientHello without a server name at an allowed name's address: the
# server's default site would answer, on a shared address perhaps b.test.
out=$(in_jail --allow a.test --report "$T/sni.json" -- python3 -c 'import socket, ssl
ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
ctx.check_hostname = False
ctx.verify_mode = ssl.CERT_NONE
ip = socket.gethostbyname("a.test")
try:
    with ctx.wrap_socket(socket.create_connection((ip, 443), timeout=15)) as s:
        s.sendall(b"GET / HTTP/1.1\r\nHost: b.test\r\n\r\n")
        print("got", s.recv(4096)[-60:])
except OSError as e:
    print("errno", e.errno)
    raise SystemExit(3)' 2>&1)
if printf '%s\n' "$out" | grep -q '^errno ' && ! printf '%s\n' "$out" | grep -q '^got' &&
	python3 - "$T/sni.json" <<'PY'; then
import json, sys
r = json.load(open(sys.argv[1]))
c = [x for x in r["connections"] if x["address"] == "10.204.0.2:443"]
assert c and c[0]["verdict"] == "refused" and "without a server name" in c[0]["why"], r["connections"]
PY
	pass "THREATS 77: a ClientHello without a server name at an allowed name's address is refused, and says why"
else
	fail "THREATS 77: a ClientHello without a server name at an allowed name's address is refused, and says why"
	diag "$out"
	diag "$(cat "$T/sni.json")"
fi
# The same in the SSLv2 form of a ClientHello, which OpenSSL's servers
# still read to begin TLS 1.2: it has no server name. Before, it was
# passed on a.test's address as "neither TLS nor HTTP" (the server's
# alert came back).
out=$(in_jail --allow a.test --report "$T/sslv2.json" -- python3 -c 'import os, socket, struct
suites = b"".join(b"\0" + struct.pack(">H", c) for c in (0xc02f, 0x009c, 0x002f, 0x00ff))
body = b"\1\3\3" + struct.pack(">HHH", len(suites), 0, 16) + suites + os.urandom(16)
print("started", flush=True)
try:
    s = socket.create_connection((socket.gethostbyname("a.test"), 443), timeout=15)
    s.sendall(struct.pack(">H", 0x8000 | len(body)) + body)
    print("got", s.recv(4096).hex())
except OSError as e:
    print("errno", e.errno)
    raise SystemExit(3)' 2>&1)
if printf '%s\n' "$out" | grep -q '^started' && printf '%s\n' "$out" | grep -q '^errno ' &&
	! printf '%s\n' "$out" | grep -q '^got' &&
	python3 - "$T/sslv2.json" <<'PY'; then
import json, sys
r = json.load(open(sys.argv[1]))
c = [x for x in r["connections"] if x["address"] == "10.204.0.2:443"]
assert c and c[0]["verdict"] == "refused" and "SSLv2" in c[0]["why"] and c[0]["bytes_out"] == 0, r["connections"]
PY
	pass "THREATS 77: an SSLv2-format ClientHello (no server name) at an allowed name's address is refused, and says why"
else
	fail "THREATS 77: an SSLv2-format ClientHello (no server name) at an allowed name's address is refused, and says why"
	diag "$out"
	diag "$(cat "$T/sslv2.json")"
fi

# UDP and QUIC: no datagram leaves.
check "THREATS 77: a datagram out (QUIC to an allowed name) is refused at once, named" \
	'errno 101.*|stockade: refused: .*datagram 10\.204\.0\.2:443 \(ENETUNREACH\)' -- \
	in_jail --allow a.test -- python3 -c 'import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
try:
    s.connect(("10.204.0.2", 443))
    s.send(b"quic")
    s.settimeout(2)
    s.recv(10)
except OSError as e:
    print("errno", e.errno)
    raise SystemExit(3)'

# At once: a connected UDP socket (as HTTP/3 clients use) gets
# ENETUNREACH within a second, not at its own timeout.
check "a datagram out on a connected socket (QUIC) fails at once with ENETUNREACH" '^errno 101 after 0\.' -- \
	in_jail --allow a.test -- python3 -c 'import socket, time
t = time.monotonic()
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.settimeout(5)
try:
    s.connect(("10.204.0.2", 443))
    s.send(b"quic")
    s.recv(10)
    print("no error after %.2f" % (time.monotonic() - t))
except OSError as e:
    print("errno", e.errno, "after %.2f" % (time.monotonic() - t))'
# A lookup's UDP connects (glibc's getaddrinfo connects one to each
# address only to sort them; nothing is sent) are no datagram refused: a
# failed command's lines and the report name none. A datagram sent is.
out=$(in_jail --allow a.test --report "$T/gai.json" -- python3 -c 'import socket, sys
print(sorted({a[4][0] for a in socket.getaddrinfo("a.test", 443, type=socket.SOCK_STREAM)}))
sys.exit(1)' 2>&1)
if printf '%s\n' "$out" | grep -q "10\.204\.0\.2" && ! printf '%s\n' "$out" | grep -q 'refused: .*datagram' &&
	! grep -q '"datagram"' "$T/gai.json"; then
	pass "a lookup's sorting (UDP connects, nothing sent) is not reported as a datagram refused"
else
	fail "a lookup's sorting (UDP connects, nothing sent) is not reported as a datagram refused"
	diag "$out"
	diag "$(grep -A1 datagram "$T/gai.json")"
fi
check "a datagram sent (sendto) to an allowed name is refused, named" \
	'stockade: refused: .*datagram 10\.204\.0\.2:443 \(ENETUNREACH\)' -- \
	in_jail --allow a.test -- python3 -c 'import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.settimeout(2)
try:
    s.sendto(b"quic", ("10.204.0.2", 443))
    s.recvfrom(10)
except OSError as e:
    print("errno", e.errno)
    raise SystemExit(3)'

# A connected UDP socket hears at once that its datagram out goes nowhere,
# IPv6 too: the namespace jail's way out answers an IPv6 datagram
# "administratively prohibited" (EACCES; IPv6 has no hard error that is
# ENETUNREACH) and names it, where "no route" left the client to its
# timeout (3 s here, on main before this); the landlock backend refuses
# the connect itself. Outside, the same probe's datagram reaches the fake internet's
# address, whose answer is not EACCES.
cat >"$W/udp6.py" <<'PY'
import socket, sys, time
s = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
s.settimeout(3)
t = time.monotonic()
try:
    s.connect(("fd00:204::2", 9))
    s.send(b"quic")
    s.recv(10)
    print("no error")
except OSError as e:
    print("errno", e.errno if e.errno is not None else "timeout", "after %.1f" % (time.monotonic() - t))
    sys.exit(3)
PY
out=$(cd "$W" && outside python3 udp6.py 2>&1)
case $out in *"errno 13 "*) fail "outside: a connected IPv6 datagram to the fake internet is not refused EACCES"; diag "$out" ;;
*) pass "outside: a connected IPv6 datagram to the fake internet is not refused EACCES" ;; esac
# (The landlock backend refuses the UDP connect itself, unrecorded:
# glibc's getaddrinfo makes one to each address it sorts.)
want="errno 13 after 0" named="datagram [fd00:204::2]:9 (EACCES)"
$LL && want="errno 101 after 0" named=
out=$(in_jail --allow a.test -- python3 udp6.py 2>&1)
case $out in *"$want"*"$named"*) pass "a connected IPv6 datagram out fails at once ($want) ${named:+, named}" ;;
*) fail "a connected IPv6 datagram out fails at once ($want) ${named:+, named}"; diag "$out" ;; esac

# DNS: nothing of a query leaves but an allowed name's addresses.
cat >"$W/dnsq.py" <<'PY'
# dnsq.py NAME TYPE [SERVER [tcp]]: one query, to the first name server of
# /etc/resolv.conf (or 127.0.0.1), sent with sendto and read with
# recvfrom, as the C library does; prints the rcode, the TTLs and the
# data of the answers.
import random, socket, struct, sys
name, qtype = sys.argv[1], int(sys.argv[2])
server = sys.argv[3] if len(sys.argv) > 3 else None
if not server:
    server = "127.0.0.1"
    try:
        for line in open("/etc/resolv.conf"):
            if line.split()[:1] == ["nameserver"]:
                server = line.split()[1]
                break
    except OSError:
        pass
ident = random.randrange(65536)
q = struct.pack(">HHHHHH", ident, 0x0100, 1, 0, 0, 0)
for label in name.split("."):
    b = label.encode("utf-8", "surrogateescape")
    q += bytes([len(b)]) + b
q += b"\0" + struct.pack(">HH", qtype, 1)
try:
    if len(sys.argv) > 4:
        s = socket.create_connection((server, 53), timeout=5)
        s.sendall(struct.pack(">H", len(q)) + q)
        a = s.recv(4096)[2:]
    else:
        s = socket.socket(socket.AF_INET6 if ":" in server else socket.AF_INET, socket.SOCK_DGRAM)
        s.settimeout(2)
        s.sendto(q, (server, 53))
        a, frm = s.recvfrom(4096)
except OSError as e:
    print("errno", e.errno, e.strerror)
    sys.exit(3)
rcode = a[3] & 15
qd, an = struct.unpack(">HH", a[4:8])
at = 12
while qd and a[at]:
    at += 1 + a[at]
at += 5 if qd else 0
out = []
for _ in range(an):
    at += 2
    t, c, ttl, n = struct.unpack(">HHIH", a[at:at + 10])
    data = a[at + 10:at + 10 + n]
    at += 10 + n
    out.append("%s ttl=%d" % (socket.inet_ntop(socket.AF_INET, data) if t == 1 else socket.inet_ntop(socket.AF_INET6, data) if t == 28 else data.hex(), ttl))
print("rcode", rcode, "answers", len(out), " ".join(out))
PY
check "THREATS 77: a TXT query of an allowed name gets no record, and is not asked of the host" 'rcode 0 answers 0' -- \
	in_jail --allow '*.rotate.test' -- python3 dnsq.py "$nonce"-txt.rotate.test 16
check "THREATS 77: a query of a name beneath an allowed one (data in its labels) is NXDOMAIN" 'rcode 3 answers 0' -- \
	in_jail --allow a.test -- python3 dnsq.py "$nonce"-data-0123456789abcdef0123456789.a.test 1
check "THREATS 77: a query with a label of 64 bytes or more is FORMERR" 'rcode 1 answers 0' -- \
	in_jail --allow '*.rotate.test' -- python3 dnsq.py "$nonce"-long-label-0123456789abcdef0123456789abcdef.rotate.test 1
check "THREATS 77: a query with bytes no host name holds is NXDOMAIN" 'rcode 3 answers 0' -- \
	in_jail --allow '*.rotate.test' -- python3 dnsq.py "$(printf '%s\001\377x' "$nonce")-bin.rotate.test" 1
if $LL; then
	# Every datagram to port 53 is stockade's to answer.
	check "THREATS 77: a query sent straight to the name server is answered by stockade (NXDOMAIN)" 'rcode 3 answers 0' -- \
		in_jail --allow a.test -- python3 dnsq.py "$nonce"-direct.test 1 10.204.0.2
else
	check "THREATS 77: a query sent straight to a name server is refused (ENETUNREACH), named" \
		'stockade: refused: .*datagram 10\.204\.0\.2:53 \(ENETUNREACH\)' -- \
		in_jail --allow a.test -- python3 dnsq.py "$nonce"-direct.test 1 10.204.0.2
fi
check "THREATS 77: DNS over TCP to the name server is refused" 'errno (101|111|13)' -- \
	in_jail --allow a.test -- python3 dnsq.py "$nonce"-tcp.test 1 10.204.0.2 tcp
check "THREATS 77: DNS over TLS (853) is refused" 'errno 101' -- \
	in_jail --allow a.test -- python3 -c 'import socket
try:
    socket.create_connection(("10.204.0.2", 853), timeout=5)
except OSError as e:
    print("errno", e.errno)'
seen "$nonce" && { fail "THREATS 77: none of those queries reached the name server"; diag "$(grep -F "$nonce" "$FK/log")"; } ||
	pass "THREATS 77: none of those queries reached the name server"

# The reply's source: the address and port the query was sent to, as a
# resolver that checks it (c-ares, musl) demands, on sockets connected
# or not, blocking or not, IPv4 and (to a name server named outright,
# which the landlock backend answers too) IPv6.
cat >"$W/dnsfrom.py" <<'PY'
import select, socket, struct, sys
q = struct.pack(">HHHHHH", 0x1234, 0x0100, 1, 0, 0, 0) + b"\x01c\x04test\x00" + struct.pack(">HH", 1, 1)
# The C library's default without a nameserver line: 127.0.0.1.
servers = sys.argv[1:] or [([l.split()[1] for l in open("/etc/resolv.conf") if l.startswith("nameserver")] + ["127.0.0.1"])[0]]
for srv in servers:
    for mode in ("sendto", "connect", "connect-nonblocking"):
        s = socket.socket(socket.AF_INET6 if ":" in srv else socket.AF_INET, socket.SOCK_DGRAM)
        s.settimeout(5)
        if mode.startswith("connect"):
            s.connect((srv, 53))
            s.send(q)
        else:
            s.sendto(q, (srv, 53))
        if mode.endswith("nonblocking"):
            s.setblocking(False)
            select.select([s], [], [], 5)
        try:
            d, a = s.recvfrom(512)
        except OSError as e:
            print(mode, "errno", e.errno)
            continue
        print(mode, "asked", srv, "reply from", a[0], a[1], "same" if (a[0], a[1]) == (srv, 53) else "OTHER")
PY
check "a DNS reply comes from the name server asked (sendto, connect, non-blocking; IPv4)" \
	'^sendto asked .* same.*connect asked .* same.*connect-nonblocking asked .* same$' -- \
	in_jail --allow c.test -- sh -c 'python3 dnsfrom.py | tr "\n" " " | sed "s/ $//"'
if $LL; then
	check "a DNS reply comes from the name server asked (IPv6, named outright)" \
		'^sendto asked .* same.*connect asked .* same.*connect-nonblocking asked .* same$' -- \
		in_jail --allow c.test -- sh -c 'python3 dnsfrom.py fd00:204::2 | tr "\n" " " | sed "s/ $//"'
fi
if command -v node >/dev/null; then
	check "node's c-ares resolver (dns.resolve4) gets an allowed name's address" "resolve4 c\.test null \[ '10\.204\.0\.3' \]" -- \
		in_jail --allow c.test -- node -e 'const t = setTimeout(() => { console.log("timed out"); process.exit(1); }, 8000);
require("dns").resolve4("c.test", (e, a) => { console.log("resolve4 c.test", e && e.code, a); clearTimeout(t); process.exit(e ? 1 : 0); })'
else
	skip "node's c-ares resolver (no node here)"
fi

# An allowed name that resolves to this host, loopback or link-local is
# never handed out.
check "an allowed name that resolves to loopback or link-local gets no address" 'rcode 0 answers 0 +rcode 0 answers 0' -- \
	in_jail --allow local.test --allow meta.test -- sh -c 'echo $(python3 dnsq.py local.test 1) $(python3 dnsq.py meta.test 1)'

# The answer's TTL: kept by stockade as the host's resolver gave it (2 s),
# asked again once it is over.
out=$(in_jail --allow '*.rotate.test' -- sh -c 'python3 dnsq.py "$0" 1; python3 dnsq.py "$0" 1; sleep 3; python3 dnsq.py "$0" 1' "$nonce"-ttl.rotate.test 2>&1)
first=$(printf '%s\n' "$out" | sed -n '1s/.*answers 1 \([0-9.]*\) ttl=\([0-9]*\).*/\1 \2/p')
second=$(printf '%s\n' "$out" | sed -n '2s/.*answers 1 \([0-9.]*\) ttl=\([0-9]*\).*/\1 \2/p')
third=$(printf '%s\n' "$out" | sed -n '3s/.*answers 1 \([0-9.]*\) ttl=\([0-9]*\).*/\1 \2/p')
asked=$(grep -c -F "dns $nonce-ttl.rotate.test 1" "$FK/log")
if [ -n "$first" ] && [ "${first%% *}" = "${second%% *}" ] && [ "${second#* }" -le 2 ] && [ -n "$third" ] &&
	[ "${third%% *}" != "${first%% *}" ] && [ "$asked" = 2 ]; then
	pass "THREATS 77: the answer's TTL is kept (2 s: the same address within it, a new one asked after it; asked $asked times)"
else
	fail "THREATS 77: the answer's TTL is kept (2 s: the same address within it, a new one asked after it)"
	diag "answers: '$first' '$second' '$third'; the name server asked $asked times"
	diag "$out"
fi

# An answer too large for a datagram: asked again over TCP.
check "an answer too large for UDP is asked again over TCP (16 addresses handed out)" 'rcode 0 answers 16' -- \
	in_jail --allow big.test -- python3 dnsq.py big.test 1

# A ClientHello held back: refused once the bound is over (10 s).
check "THREATS 77: a connection that never says its name is refused after 10 s" 'refused after (1[0-4])\.' -- \
	in_jail --allow a.test -- python3 -c 'import socket, time
t = time.monotonic()
s = socket.create_connection(("10.204.0.3", 443), timeout=30)
s.sendall(b"\x16\x03\x01")
try:
    print("got", s.recv(10))
except OSError as e:
    pass
print("refused after %.1f s" % (time.monotonic() - t))'

# npm ci against a registry of the fake internet: with allow, and refused,
# named, without it.
if command -v npm >/dev/null; then
	mkdir -p "$W/app"
	cp "$FK/ca.pem" "$W/app/ca.pem"
	integrity=$(cat "$FK/npm/integrity")
	printf '{"name": "app", "version": "1.0.0", "dependencies": {"stockade-demo": "1.0.0"}}\n' >"$W/app/package.json"
	cat >"$W/app/package-lock.json" <<JSON
{
  "name": "app", "version": "1.0.0", "lockfileVersion": 3, "requires": true,
  "packages": {
    "": {"name": "app", "version": "1.0.0", "dependencies": {"stockade-demo": "1.0.0"}},
    "node_modules/stockade-demo": {"version": "1.0.0",
      "resolved": "https://registry.test/npm/stockade-demo-1.0.0.tgz", "integrity": "$integrity"}
  }
}
JSON
	npm_ci() {
		in_jail "$@" -- sh -c 'cd app && npm ci --no-audit --no-fund --no-update-notifier --cafile ca.pem --cache "$TMPDIR/npm" \
			--registry https://registry.test/npm/ && node -e "console.log(require(\"stockade-demo\"))"'
	}
	check "THREATS 77: npm ci against the registry, allowed: installs" 'stockade-demo 1\.0\.0' -- npm_ci --allow registry.test
	rm -rf "$W/app/node_modules"
	check "THREATS 77: npm ci without the registry allowed: fails, and stockade names it with the fix" \
		'stockade: refused: .*name registry\.test \(NXDOMAIN\).*to allow: --allow registry\.test' -- npm_ci --allow a.test
else
	skip "npm ci against the registry (no npm here)"
fi

# --connect: a host service alongside the allow list (a local database
# beside a registry), at 127.0.0.1 and at another loopback address (the
# namespace jail makes that one its own); without it, refused, with a
# fix that works as printed.
for ca in 127.0.0.1 127.0.0.2; do
	netpeer_start tcp "$ca" 0
	CP=$PEER_PORT
	expect_control "control: outside, the host service at $ca:$CP answers" -- "$PROBE" connect-tcp "$ca" "$CP"
	cbase=$(peer_count)
	expect_probe "--allow with --connect $ca:$CP reaches that host service" ok -- \
		in_jail --allow a.test --connect "$ca:$CP" -- "$PROBE" connect-tcp "$ca" "$CP"
	printf '%s\n' "$PROBE_OUTPUT" | grep -q '^netpeer' && pass "and it answered" || { fail "and it answered"; diag "$PROBE_OUTPUT"; }
	out=$(in_jail --allow a.test -- "$PROBE" connect-tcp "$ca" "$CP" 2>&1)
	fix=$(printf '%s\n' "$out" | sed -n "s/^stockade: refused: connect $ca:$CP .*; to allow: \(--connect [0-9.:]*\).*/\1/p")
	# --net on is no fix beside --allow (it takes the allow list's place).
	if [ -n "$fix" ] && ! printf '%s\n' "$out" | grep -q -e '^probe: ok' -e '--net on'; then
		pass "without --connect, $ca:$CP is refused, and stockade names the fix ($fix), not --net on"
	else
		fail "without --connect, $ca:$CP is refused, and stockade names the fix"
		diag "$out"
	fi
	# shellcheck disable=SC2086 # the fix's words
	expect_probe "the fix as printed ($fix) works" ok -- in_jail --allow a.test $fix -- "$PROBE" connect-tcp "$ca" "$CP"
	[ "$(peer_count)" = $((cbase + 2)) ] && pass "the service counted exactly those connections" ||
		fail "the service counted exactly those connections (before: $cbase, after: $(peer_count))"
done

# The report: every name and every connection, with bytes and verdicts.
in_jail --allow a.test --report "$T/all.json" -- sh -c 'curl -sS --max-time 10 --cacert ca.pem https://a.test/ >/dev/null;
	curl -sS --max-time 10 https://b.test/ >/dev/null 2>&1; curl -sS --max-time 10 -k https://10.204.0.3/ >/dev/null 2>&1; true' >/dev/null 2>&1
python3 - "$T/all.json" <<'PY' && pass "the report lists the names looked up and each connection with its name, port, bytes and verdict" || { fail "the report lists the names looked up and each connection with its name, port, bytes and verdict"; diag "$(cat "$T/all.json")"; }
import json, sys
r = json.load(open(sys.argv[1]))
names = {(n["name"], n["verdict"].split(":")[0]) for n in r["names"]}
assert ("a.test", "answered") in names and ("b.test", "refused") in names, r["names"]
ok = [c for c in r["connections"] if c["name"] == "a.test" and c["verdict"] == "allowed"]
assert ok and ok[0]["address"].endswith(":443") and ok[0]["bytes_out"] > 0 and ok[0]["bytes_in"] > 0, r["connections"]
bad = [c for c in r["connections"] if c["address"] == "10.204.0.3:443" and c["verdict"] == "refused"]
assert bad and bad[0]["bytes_out"] == 0, r["connections"]
assert r["network"] == "allow", r["network"]
PY

# why and explain answer for names.
check "stockade why: an allowed name, with its rule and source" 'rule: +allow a\.test' -- \
	"$STOCKADE" why -C "$W" --allow a.test a.test:443
check "stockade why: a name not allowed, with the fix" 'allow: --allow b\.test' -- \
	"$STOCKADE" why -C "$W" --allow a.test b.test:443
check "stockade why: an address in network allow: never alone" 'refused.*never' -- \
	"$STOCKADE" why -C "$W" --allow a.test 10.204.0.2:443
check "stockade explain lists the allow list, with a list's source" 'allow: registry\.npmjs\.org \(ports 443 and 80\)  \(--allow on the command line, from @npm\)' -- \
	"$STOCKADE" explain -C "$W" --allow @npm -- true
check "--allow with --net on is an error" 'take one of the two away' -- "$STOCKADE" -C "$W" --net on --allow a.test -- true
# Never a fix the option refuses: a name server's port, a name --allow
# does not take.
no_fix() {
	local desc=$1 pattern=$2 out
	shift 2
	out=$("$@" 2>&1)
	if printf '%s\n' "$out" | grep -q -F -- "$pattern" && ! printf '%s\n' "$out" | grep -q -E -- '--allow [^ ]*(:53|:853|\.\.)'; then
		pass "$desc"
	else
		fail "$desc"
		diag "$out"
	fi
}
# the line, and the report's fix
dns53() {
	in_jail --allow a.test --report "$T/d53.json" -- python3 -c 'import socket
try:
    socket.create_connection((socket.gethostbyname("a.test"), 53), timeout=5)
except OSError as e:
    print("errno", e.errno)
    raise SystemExit(3)'
	cat "$T/d53.json"
}
no_fix "a connection to port 53 of an allowed name's address: no --allow NAME:53 offered" "name lookups are stockade's own" dns53
no_fix "stockade why: a name on port 53: no fix (lookups are stockade's own)" "name lookups are stockade's own" \
	"$STOCKADE" why -C "$W" --allow a.test a.test:53
no_fix "stockade why: a name on port 853: no fix" "name lookups are stockade's own" \
	"$STOCKADE" why -C "$W" --allow a.test a.test:853
no_fix "stockade why: a name --allow does not take: said so, no fix" "'a..b' is not a name --allow takes" \
	"$STOCKADE" why -C "$W" --allow a.test 'a..b:443'
"$STOCKADE" -C "$W" --allow http://a.test -- true >"$T/url.out" 2>&1
code=$?
if [ $code = 125 ] && grep -q -F "give the host name alone" "$T/url.out" && ! grep -q -i "port" "$T/url.out"; then
	pass "--allow http://a.test: exit 125, give the host name alone, not a URL"
else
	fail "--allow http://a.test: exit 125, give the host name alone, not a URL"
	diag "exit $code: $(cat "$T/url.out")"
fi
for wide in '*.co.uk' '*.com.au' '*.co.jp'; do
	"$STOCKADE" -C "$W" --allow "$wide" -- true >"$T/wide.out" 2>&1
	code=$?
	if [ $code = 125 ] && grep -q -F "public second level" "$T/wide.out"; then
		pass "--allow '$wide': exit 125, too wide (a country's public second level)"
	else
		fail "--allow '$wide': exit 125, too wide (a country's public second level)"
		diag "exit $code: $(cat "$T/wide.out")"
	fi
done
plan_done
