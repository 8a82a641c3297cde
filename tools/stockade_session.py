#!/usr/bin/env python3
"""A client of a stockade session that keeps one connection for many
commands: what an agent harness's shell tool can use in place of
`stockade session exec ID -- COMMAND` (the protocol: stockade.1, SESSIONS).

    from stockade_session import Session
    s = Session("work")                       # stockade session start --name work
    r = s.run(["npm", "test"], cwd="/home/me/proj")
    print(r.status, r.stdout, r.stderr, r.said)

    python3 tools/stockade_session.py ID [--cwd DIR] -- COMMAND [ARG]...

run() hands the command descriptors of its own (pipes it reads, or the
caller's when given) and returns its status as `stockade session exec`
would: the command's exit code, 128+N for a signal, 122 when the guard
could not undo all it changed, 125 when the session refused it (the
reason in .said, with the fix). Standard library only, Python 3.9+.
"""
import os
import select
import signal
import socket
import sys

VERSION = 1


def sessions_dir():
    rt = os.environ.get("XDG_RUNTIME_DIR")
    if rt and os.path.isabs(rt):
        try:
            st = os.lstat(rt)
            if st.st_uid == os.getuid() and not st.st_mode & 0o077:
                return os.path.join(rt, "stockade", "sessions")
        except OSError:
            pass
    state = os.environ.get("XDG_STATE_HOME") or os.path.join(os.path.expanduser("~"), ".local", "state")
    return os.path.join(state, "stockade", "sessions")


def encode(kind, fields, raw=()):
    """A message: fields as (key, value) pairs, raw as b"key=value"
    already made (the environment's, from os.environb)."""
    out = [kind.encode()]
    for key, value in fields:
        if isinstance(value, str):
            value = value.encode(errors="surrogateescape")
        out.append(key.encode() + b"=" + value)
    out.extend(raw)
    return b"\0".join(out) + b"\0"


def decode(packet):
    if not packet or not packet.endswith(b"\0"):
        raise ValueError("not a message")
    parts = packet[:-1].split(b"\0")
    fields = {}
    for part in parts[1:]:
        key, _, value = part.partition(b"=")
        fields.setdefault(key.decode(), []).append(value.decode(errors="surrogateescape"))
    return parts[0].decode(), fields


class Result:
    def __init__(self):
        self.status = None
        self.code = None
        self.signal = None
        self.stdout = b""
        self.stderr = b""
        self.said = []


class Session:
    """One connection to a running session, for many commands in turn."""

    def __init__(self, session_id, path=None):
        self.id = session_id
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        # one buffer for every message, of the largest one the session
        # sends: read into, not allocated for each (a 256 KiB bytes
        # each time cost more than the rest of a run's reading)
        self._buf = bytearray(256 * 1024)
        self.sock.connect(path or os.path.join(sessions_dir(), session_id + ".sock"))
        self._send("hello", [("version", str(VERSION))])
        kind, fields = self._recv()
        if kind != "hello":
            raise RuntimeError("the session refused: %s" % fields.get("message", [kind])[0])
        self.info = {k: v[0] for k, v in fields.items()}

    def _send(self, kind, fields, fds=(), raw=()):
        data = encode(kind, fields, raw)
        if fds:
            socket.send_fds(self.sock, [data], list(fds))
        else:
            self.sock.send(data)

    def _recv(self):
        n, anc, _, _ = self.sock.recvmsg_into([self._buf], socket.CMSG_SPACE(4 * 4), socket.MSG_CMSG_CLOEXEC)
        for level, kind, data in anc:
            if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                for i in range(0, len(data) - len(data) % 4, 4):
                    os.close(int.from_bytes(data[i:i + 4], sys.byteorder))
        if not n:
            raise EOFError("the session has ended")
        return decode(bytes(self._buf[:n]))

    def run(self, argv, cwd=None, env=None, stdin=None, stdout=None, stderr=None, timeout=None,
            restore_signals=True):
        """Runs argv in the session. stdin/stdout/stderr: a descriptor to
        hand over, or None for a pipe of this client's (stdin: empty).
        On timeout the command's group gets SIGKILL. The signals this
        process ignores stay ignored in the command, as subprocess leaves
        them (restore_signals: but SIGPIPE and SIGXFSZ, which Python
        ignores for itself); every other one is the default. Its signal
        mask, umask, resource limits, niceness and CPUs are this
        process's, within the session's."""
        fields = [("cwd", os.path.abspath(cwd or os.getcwd()))]
        fields += [("arg", a) for a in argv]
        # the environment as bytes, as it is, where it is this process's
        if env is None:
            # the mapping's own dict where it has one: the mapping's
            # items() calls a method for each variable
            data = getattr(os.environb, "_data", None)
            items = data.items() if isinstance(data, dict) else os.environb.items()
            raw = [b"env=" + k + b"=" + v for k, v in items]
        else:
            raw = [("env=%s=%s" % kv).encode(errors="surrogateescape") for kv in env.items()]
        raw += _inherited(restore_signals)
        pipes, fds = {}, []
        for n, given in enumerate((stdin, stdout, stderr)):
            if given is not None:
                fds.append(given)
                continue
            r, w = os.pipe()
            if n == 0:
                os.close(w)
                fds.append(r)
                pipes[n] = r
            else:
                fds.append(w)
                pipes[n] = (r, w)
        try:
            self._send("exec", fields, fds, raw)
        finally:
            for n, p in pipes.items():
                os.close(p if n == 0 else p[1])
        res = Result()
        readers = {pipes[n][0]: n for n in (1, 2) if n in pipes}
        out = {1: [], 2: []}
        deadline = None if timeout is None else _now() + timeout
        killed = False
        while res.status is None or readers:
            wait = None if deadline is None else max(0.0, deadline - _now())
            # Once the command has ended, what a process it left running
            # (a server started with &) may hold of its pipes is not
            # waited for: what is there is read, then the run returns.
            if res.status is not None:
                wait = 0.05
            if not readers and wait is None:
                # nothing to read but the session's answers: wait on them
                ready = [self.sock]
            else:
                ready, _, _ = select.select([self.sock] + list(readers), [], [], wait)
            if not ready and not killed:
                self._send("signal", [("sig", str(int(signal.SIGKILL)))])
                killed = True
                deadline = None
            for fd in ready:
                if fd is self.sock:
                    if res.status is not None:
                        continue
                    kind, f = self._recv()
                    if kind == "said":
                        res.said += f.get("line", [])
                    elif kind == "exit":
                        res.status = int(f["status"][0])
                        res.code = int(f["code"][0]) if "code" in f else None
                        res.signal = int(f["signal"][0]) if "signal" in f else None
                    elif kind == "error":
                        res.status = int(f.get("status", ["125"])[0])
                        res.said += ["stockade: " + m for m in f.get("message", [])]
                        res.said += ["hint: " + h for h in f.get("hint", [])]
                else:
                    chunk = os.read(fd, 65536)
                    if chunk:
                        out[readers[fd]].append(chunk)
                    else:
                        os.close(fd)
                        del readers[fd]
            if res.status is not None and not ready:
                break
        for fd in readers:
            os.close(fd)
        res.stdout, res.stderr = b"".join(out[1]), b"".join(out[2])
        return res

    def close(self):
        self.sock.close()


def _bit(sig):
    """Signal sig's bit: N-1 for signal N."""
    return 1 << (int(sig) - 1)


# The signals one can ask the disposition of, with their bits, and the
# resources one can ask the limit of, found once: run() asks each of
# them at every command, the cost of its message.
_SIGNALS = []
for _sig in range(1, 32):
    try:
        signal.getsignal(_sig)
        _SIGNALS.append((_sig, _bit(_sig)))
    except (ValueError, OSError):
        pass
# what restore_signals gives back its default, and what cannot be ignored
_RESTORED = _bit(signal.SIGPIPE) | (_bit(signal.SIGXFSZ) if hasattr(signal, "SIGXFSZ") else 0)
_NEVER = _bit(signal.SIGKILL) | _bit(signal.SIGSTOP)
try:
    import resource
    _RESOURCES = []
    for _res in range(64):
        try:
            resource.getrlimit(_res)
        except (ValueError, OSError):
            break
        _RESOURCES.append((_res, b"rlimit=%d %%d %%d" % _res))
except ImportError:
    resource, _RESOURCES = None, []
_FULL = 2**64 - 1


def _inherited(restore_signals):
    """What an exec of this thread's would inherit beside its descriptors,
    as fields made (b"key=value"): the signals it ignores (less SIGPIPE
    and SIGXFSZ, which Python ignores for itself, with restore_signals, as
    subprocess), its signal mask, umask, niceness, CPUs and resource
    limits."""
    getsignal, ign = signal.getsignal, signal.SIG_IGN
    ignored = 0
    for sig, bit in _SIGNALS:
        if getsignal(sig) is ign:
            ignored |= bit
    ignored &= ~(_NEVER | (_RESTORED if restore_signals else 0))
    blocked = 0
    for sig in signal.pthread_sigmask(signal.SIG_BLOCK, []):
        if 1 <= sig < 32:
            blocked |= 1 << (sig - 1)
    mask = os.umask(0)
    os.umask(mask)
    raw = [b"sigblk=%d" % blocked, b"umask=%d" % mask, b"nice=%d" % os.getpriority(os.PRIO_PROCESS, 0)]
    if ignored:
        raw.append(b"sigign=%d" % ignored)
    bits = sum(1 << c for c in os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else 0
    if bits:
        raw.append(b"cpus=" + bits.to_bytes((bits.bit_length() + 7) // 8, "little").hex().encode())
    if resource:
        getrlimit, full = resource.getrlimit, _FULL
        for res, field in _RESOURCES:
            soft, hard = getrlimit(res)
            raw.append(field % (soft & full, hard & full))
    return raw


def _now():
    import time
    return time.monotonic()


def main(args):
    if len(args) < 3 or "--" not in args:
        print("usage: stockade_session.py ID [--cwd DIR] -- COMMAND [ARG]...", file=sys.stderr)
        return 125
    sep = args.index("--")
    sid, opts, argv = args[0], args[1:sep], args[sep + 1:]
    cwd = opts[opts.index("--cwd") + 1] if "--cwd" in opts else None
    s = Session(sid)
    r = s.run(argv, cwd=cwd, stdin=0, stdout=1, stderr=2)
    for line in r.said:
        print(line, file=sys.stderr)
    s.close()
    return r.status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
