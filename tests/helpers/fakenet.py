#!/usr/bin/python3
"""The fake internet of network allow's tests, run inside the network
namespace tests/fakenet.sh makes (stockade-fakenet): a name server, HTTPS
servers with certificates of a CA of the test's own (names on a shared
address and on addresses of their own), plain HTTP, an ssh-like service
that speaks first, and a tiny npm registry. Every question and every
connection is written to DIR/log, so that a test can say what reached
the "internet" and what did not.

    fakenet.py DIR       (DIR holds ca.pem, server.pem, server.key, npm/)

Nothing here listens anywhere but the addresses fakenet.sh gave this
namespace. Zone (TTL 300 unless said):
    a.test, b.test              10.204.0.2, fd00:204::2   (one address: a shared front end)
    c.test, registry.test       10.204.0.3
    ssh.test                    10.204.0.4
    N.rotate.test               10.204.0.2, then 10.204.0.3, ... (a new answer at each question; TTL 2)
    big.test                    40 addresses in 10.204.1.0/24 (too large for UDP: TC, then TCP)
    local.test                  127.0.0.1       meta.test  169.254.169.254
    everything else             NXDOMAIN
"""
import os
import socket
import socketserver
import ssl
import struct
import sys
import threading
import http.server

DIR = sys.argv[1]
LOG_LOCK = threading.Lock()


def log(line):
    with LOG_LOCK:
        with open(os.path.join(DIR, "log"), "a") as f:
            f.write(line + "\n")


ZONE = {
    "a.test": (["10.204.0.2"], ["fd00:204::2"], 300),
    "b.test": (["10.204.0.2"], ["fd00:204::2"], 300),
    "c.test": (["10.204.0.3"], [], 300),
    "registry.test": (["10.204.0.3"], [], 300),
    "ssh.test": (["10.204.0.4"], [], 300),
    "big.test": (["10.204.1.%d" % i for i in range(1, 41)], [], 300),
    "local.test": (["127.0.0.1"], [], 300),
    "meta.test": (["169.254.169.254"], [], 300),
}
ROTATE = {}


def answer(q):
    ident, flags, qd = struct.unpack(">HHH", q[:6])
    if qd != 1:
        return None
    at, labels = 12, []
    while q[at]:
        n = q[at]
        labels.append(q[at + 1:at + 1 + n].decode("ascii", "replace"))
        at += 1 + n
    at += 1
    qtype, qclass = struct.unpack(">HH", q[at:at + 4])
    question = q[12:at + 4]
    name = ".".join(labels).lower()
    log("dns %s %d" % (name, qtype))
    rcode, rrs, ttl = 3, [], 300
    if name.endswith(".rotate.test"):
        k = ROTATE.get(name, 0)
        ROTATE[name] = k + 1
        rcode, ttl = 0, 2
        if qtype == 1:
            rrs = [socket.inet_aton("10.204.0.%d" % (2 + k % 2))]
    elif name in ZONE:
        v4, v6, ttl = ZONE[name]
        rcode = 0
        if qtype == 1:
            rrs = [socket.inet_aton(a) for a in v4]
        elif qtype == 28:
            rrs = [socket.inet_pton(socket.AF_INET6, a) for a in v6]
        elif qtype == 16:
            rrs = [b"\x0bsecret-data"]
    out = struct.pack(">HHHHHH", ident, 0x8180 | rcode | (flags & 0x0100), 1, len(rrs), 0, 0) + question
    for rd in rrs:
        out += struct.pack(">HHHIH", 0xc00c, qtype, 1, ttl, len(rd)) + rd
    return out


def dns_udp(addr):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind((addr, 53))
    while True:
        q, peer = s.recvfrom(4096)
        try:
            a = answer(q)
        except Exception:
            continue
        if a is None:
            continue
        if len(a) > 512:
            # Truncated: the question alone, TC set.
            qend = a.index(b"\xc0\x0c") if b"\xc0\x0c" in a else len(a)
            a = a[:2] + bytes([a[2] | 0x02, a[3]]) + a[4:6] + b"\0\0\0\0\0\0" + a[12:qend]
        s.sendto(a, peer)


class DnsTcp(socketserver.BaseRequestHandler):
    def handle(self):
        data = self.request.recv(2)
        if len(data) < 2:
            return
        n = struct.unpack(">H", data)[0]
        q = b""
        while len(q) < n:
            d = self.request.recv(n - len(q))
            if not d:
                return
            q += d
        log("dns-tcp")
        a = answer(q)
        if a:
            self.request.sendall(struct.pack(">H", len(a)) + a)


class Echo(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def reply(self, body, ctype="text/plain"):
        self.send_response(200)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def serve(self):
        sni = getattr(self.request, "stockade_sni", None) if hasattr(self.request, "getpeercert") else None
        host = self.headers.get("Host", "")
        local = self.request.getsockname()[0]
        scheme = "https" if isinstance(self.request, ssl.SSLSocket) else "http"
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        log("%s %s sni=%s host=%s path=%s body=%d" % (scheme, local, sni, host, self.path, len(body)))
        # The registry: a package's metadata and tarball.
        if self.path.startswith("/npm/"):
            f = os.path.join(DIR, "npm", os.path.basename(self.path))
            if os.path.isfile(f):
                self.reply(open(f, "rb").read(), "application/octet-stream")
                return
            self.send_response(404)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        self.reply(("hello from %s over %s sni=%s host=%s\n" % (local, scheme, sni, host)).encode())

    do_GET = do_POST = do_HEAD = do_PUT = serve


class Threaded(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True


class Threaded6(Threaded):
    address_family = socket.AF_INET6


def https(addr, port, cls=Threaded):
    srv = cls((addr, port), Echo)
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(os.path.join(DIR, "server.pem"), os.path.join(DIR, "server.key"))

    def sni_seen(sock, name, _ctx):
        sock.stockade_sni = name

    ctx.sni_callback = sni_seen
    srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
    srv.serve_forever()


def plain(addr, port, cls=Threaded):
    cls((addr, port), Echo).serve_forever()


class Ssh(socketserver.BaseRequestHandler):
    def handle(self):
        log("ssh %s" % self.request.getsockname()[0])
        self.request.sendall(b"SSH-2.0-fakenet\r\n")
        f = self.request.makefile("rb")
        for line in f:
            self.request.sendall(b"echo: " + line)


class TcpServer(socketserver.ThreadingMixIn, socketserver.TCPServer):
    daemon_threads = True
    allow_reuse_address = True


def main():
    threads = [
        (dns_udp, ("10.204.0.2",)),
        (lambda: TcpServer(("10.204.0.2", 53), DnsTcp).serve_forever(), ()),
        (https, ("10.204.0.2", 443)),
        (https, ("10.204.0.3", 443)),
        (https, ("fd00:204::2", 443, Threaded6)),
        (plain, ("10.204.0.2", 80)),
        (plain, ("10.204.0.3", 80)),
        (lambda: TcpServer(("10.204.0.4", 22), Ssh).serve_forever(), ()),
    ]
    for fn, args in threads:
        threading.Thread(target=fn, args=args, daemon=True).start()
    print("ready", flush=True)
    threading.Event().wait()


main()
