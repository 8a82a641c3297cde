#!/usr/bin/env python3
"""Write tests/threats-coverage.txt from the logs of full test runs.

    python3 tests/threats-coverage.py THREATS.md ROOT_BUILD [USER_BUILD] >tests/threats-coverage.txt

THREATS.md is ../shared/THREATS.md (the rows' titles); ROOT_BUILD and
USER_BUILD are build directories where `make check` ran, as root and as
an unprivileged user: their tests/logs/NAME.sh.BACKEND.log hold each
test's TAP line. A row lists, per backend, the tests that passed naming
it ("ok N - THREATS N: ..."), file by file; a name that passed in one of
the runs only says which. Rows added after THREATS.md's table, and each
row's note (a documented limit, a part that needs root, a backend the row
does not apply to), are kept here, beside the code that writes them.
"""
import collections
import glob
import os
import re
import sys

ADDED = {
    66: "A rule that cannot be honoured dropped silently: --hide / (the command reads the system), "
        "a hide of the workspace's parent, a rule another decides",
    67: "prlimit64, setpriority, sched_setaffinity, sched_setscheduler, ioprio_set, pidfds on a process "
        "of the user's outside the run (RLIMIT_CPU kills it; renice, pin, starve it)",
    68: "prlimit64 on stockade itself (the command's parent): RLIMIT_NOFILE 8, so the guard cannot undo "
        "a planted .git/config",
    69: "The host's cgroup tree visible (and writable) under /sys/fs/cgroup",
    70: "Cross-workspace build cache poisoning: GOCACHE, ccache, npm's cache, XDG_CACHE_HOME shared by "
        "every workspace",
}

NOTES = {
    4: "documented pass-through: the test asserts the bytes pass unchanged and that stockade.1 says so",
    7: "namespaces: n/a in THREATS.md (no supervisor in the jail); the descriptor check runs on both",
    10: "the setuid binary of another owner needs root to make: as a user, NoNewPrivs: 1 is what is shown",
    15: "documented limit: a hard link made before the run is readable by its other name (asserted, "
        "and that stockade.1 says so)",
    21: "the mount made after the start needs root (as a user only the documentation is checked); "
        "landlock: documented, the grant covers the new mount",
    22: "landlock: documented limit, stat of a hidden file succeeds (asserted, and stockade.1 says so)",
    33: "namespaces: an IPC namespace (EINVAL); landlock: seccomp refuses the System V calls (EPERM)",
    34: "landlock: n/a in THREATS.md; setgroups is refused on both all the same; the outside control "
        "needs root",
    35: "landlock: documented limit, /proc/PID/cmdline of other processes readable",
    39: "namespaces: n/a in THREATS.md (the network namespace, no supervisor); the race runs on both",
    42: "the other-family case is the landlock backend's (the namespace jail's loopback is its own)",
    44: "namespaces: an MPTCP socket is allowed and reaches only the jail's own loopback (SCTP refused)",
    47: "needs the remote host (tests/remote-host.sh, made as root before the unprivileged run)",
    54: "namespaces: n/a (no supervisor)",
    55: "landlock: n/a (the fallback is the namespace jail's)",
    57: "a memory limit and the kill of a killed stockade's leftovers need a cgroup: as a user here "
        "(none delegated) the report names what is not bounded",
    61: "the full-disk case mounts a small tmpfs: root only",
    58: "macOS: the Seatbelt profile's text only; enforcement needs a Mac",
    59: "macOS: the Seatbelt profile's text only; enforcement needs a Mac",
    76: "landlock: the kill goes through the run's cgroup where there is one (root); as a user, through "
        "the keeper, a subreaper that every orphan of the run comes to (an orphan in a session of its own shown)",
    77: "needs the fake internet (tests/fakenet.sh, made as root before the unprivileged run)",
    69: "landlock: the run's own group's files and the limits above it, no listing of a group it shares; "
        "the other group is made beside the run's (root) or one beside the test's own is used (user)",
}

# Where a row does not apply: said instead of MISSING.
NOT_APPLICABLE = {
    (54, "namespaces"): "n/a: no supervisor in the namespace jail",
    (55, "landlock"): "n/a: the fallback is from the namespace jail to this backend (namespaces.sh)",
    (58, "landlock"): "n/a: macOS (seatbelt.sh checks the profile once)",
    (59, "landlock"): "n/a: macOS (seatbelt.sh checks the profile once)",
}

# What changes from run to run in a test's name: its temporary directory,
# canaries, ports, pids and counts.
VARYING = [
    (re.compile(r"/tmp/stockade-test\.[A-Za-z0-9]+/t\.[A-Za-z0-9]+"), "$T"),
    (re.compile(r"stockade-canary-[0-9a-f]+"), "NONCE"),
    (re.compile(r"stockade-\d+/run-[0-9a-f]+"), "stockade-UID/run-ID"),
    (re.compile(r"\b\d{3,}\b"), "N"),
    (re.compile(r"\(\d+ KiB\)"), "(N KiB)"),
]

NAME = re.compile(r"^ok \d+ - (THREATS ((?:\d+)(?:, \d+)*)(?: \([^)]*\))?: .*)$")


def titles(threats_md):
    out = {}
    for line in open(threats_md, encoding="utf-8"):
        m = re.match(r"^\| (\d+) \| (.*?) \| ", line)
        if not m:
            continue
        t = m.group(2).replace("`", "").replace("\\|", "|").replace("\\<", "<").replace("\\>", ">")
        t = re.sub(r"\s+", " ", t)
        if len(t) > 100:
            t = t[:100].rsplit(" ", 1)[0] + " ..."
        out[int(m.group(1))] = t
    return out


def passed(build):
    """{(row, backend): {file: [names]}} of the tests that passed."""
    got = collections.defaultdict(lambda: collections.defaultdict(list))
    for log in sorted(glob.glob(os.path.join(build, "tests", "logs", "*.sh.*.log"))):
        base = os.path.basename(log)[: -len(".log")]
        name, backend = base.rsplit(".", 1)
        for line in open(log, encoding="utf-8", errors="replace"):
            m = NAME.match(line.rstrip("\n"))
            if not m or "# SKIP" in line:
                continue
            desc = m.group(1)
            for pattern, stands in VARYING:
                desc = pattern.sub(stands, desc)
            for row in m.group(2).split(", "):
                names = got[(int(row), backend)][name]
                if desc not in names:
                    names.append(desc)
    return got


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    rows = titles(sys.argv[1])
    rows.update(ADDED)
    runs = [("root", passed(sys.argv[2]))]
    if len(sys.argv) > 3:
        runs.append(("user", passed(sys.argv[3])))
    n = max(rows)
    print("# Which integration tests show each row of ../shared/THREATS.md failing,")
    print("# on each backend. The rows mirror that table (its number and the start")
    print("# of its attack; rows 66-70 in the words of issue 13, which added them).")
    print("# Made by tests/threats-coverage.py from full runs of")
    print("# make check as %s; a name passed in every run unless marked." % " and as ".join(r[0] for r in runs))
    print("# tests/integration/docs.sh checks that the rows run 1..N, N as below,")
    print("# and that a test names each row (\"THREATS N: ...\").")
    print("rows: %d" % n)
    for row in range(1, n + 1):
        print()
        print("%d\t%s" % (row, rows[row]))
        for backend in ("namespaces", "landlock"):
            files = collections.OrderedDict()
            for who, got in runs:
                for f, names in got.get((row, backend), {}).items():
                    for d in names:
                        files.setdefault(f, collections.OrderedDict()).setdefault(d, []).append(who)
            if not files:
                print("\t%s: %s" % (backend, NOT_APPLICABLE.get((row, backend), "MISSING")))
                continue
            print("\t%s:" % backend)
            for f, names in files.items():
                print("\t\t%s" % f)
                for d, who in names.items():
                    mark = "" if len(who) == len(runs) else "  [%s only]" % who[0]
                    print("\t\t\t%s%s" % (d, mark))
        if row in NOTES:
            print("\tnote: %s" % NOTES[row])


main()
