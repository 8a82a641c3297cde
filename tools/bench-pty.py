#!/usr/bin/env python3
"""make bench: the terminal relay, against the same command on the
harness's pty without stockade.

    bench-pty.py echo N  -- COMMAND...   keystroke echo latency, N keys
    bench-pty.py cat FILE -- COMMAND...  cat FILE to the terminal, seconds

The harness makes a pty (python's pty module: the command leads a new
session with the pty's slave as its controlling terminal, as under a
terminal emulator) and plays the emulator's part on the master. COMMAND
is stockade and its options, or nothing, before the measured program.

echo: the program puts its terminal in raw mode and echoes each byte
back (an editor's way); one key is written, and the time until it comes
back is one sample. Printed: median and 99th percentile, microseconds.

cat: the time from the start until the last byte of FILE has come out
of the master and the command has exited. Printed: seconds, and MiB/s.
"""
import os
import pty
import signal
import sys
import time


def spawn(argv):
    pid, fd = pty.fork()
    if pid == 0:
        try:
            os.execvp(argv[0], argv)
        finally:
            os._exit(127)
    return pid, fd


def read_until(fd, marker, limit=10.0):
    got = b""
    end = time.monotonic() + limit
    while marker not in got:
        if time.monotonic() > end:
            raise SystemExit("bench-pty: no %r from the command: %r" % (marker, got[-200:]))
        got += os.read(fd, 4096)
    return got


def echo(n, prefix):
    pid, fd = spawn(prefix + ["sh", "-c", "stty raw -echo; echo READY; exec cat"])
    read_until(fd, b"READY")
    time.sleep(0.2)
    samples = []
    for i in range(n):
        key = bytes([0x61 + i % 26])
        t0 = time.perf_counter_ns()
        os.write(fd, key)
        got = b""
        while key not in got:
            got += os.read(fd, 64)
        samples.append((time.perf_counter_ns() - t0) / 1000.0)
    os.kill(pid, signal.SIGTERM)
    try:
        while os.read(fd, 65536):
            pass
    except OSError:
        pass
    os.waitpid(pid, 0)
    samples.sort()
    print("%.1f %.1f" % (samples[len(samples) // 2], samples[int(len(samples) * 0.99)]))


def cat(path, prefix):
    size = os.path.getsize(path)
    t0 = time.perf_counter()
    pid, fd = spawn(prefix + ["cat", path])
    total = 0
    while True:
        try:
            b = os.read(fd, 1 << 16)
        except OSError:
            break
        if not b:
            break
        total += len(b)
    os.waitpid(pid, 0)
    dt = time.perf_counter() - t0
    if total < size:
        raise SystemExit("bench-pty: %d bytes of %d came out" % (total, size))
    print("%.2f %.0f" % (dt, size / dt / (1 << 20)))


def main():
    if len(sys.argv) < 4 or "--" not in sys.argv:
        raise SystemExit(__doc__)
    sep = sys.argv.index("--")
    what, arg, prefix = sys.argv[1], sys.argv[2], sys.argv[sep + 1:]
    if what == "echo":
        echo(int(arg), prefix)
    elif what == "cat":
        cat(arg, prefix)
    else:
        raise SystemExit(__doc__)


if __name__ == "__main__":
    main()
