# The manuals against the code: --help and stockade.1 list the same
# options (stockade.5's keys against the loader's are a unit test,
# test-conf). The binary's own text, not a copy of it.
# backends: namespaces
. tests/lib.sh

help_opts=$("$STOCKADE" --help | grep -oE -- '(^|[ [])--?[a-zA-Z][a-z-]*' | sed 's/^[ []//' | sort -u)
# stockade.1's SYNOPSIS and OPTIONS, roff's "\-" read as "-".
man_opts=$(sed -n '/^\.SH SYNOPSIS/,/^\.SH COMMANDS/p' stockade.1 | sed 's/\\-/-/g' |
	grep -oE -- '(^|[ "])--?[a-zA-Z][a-z-]*' | sed 's/^[ "]//' | sort -u)
if [ -n "$help_opts" ] && [ "$help_opts" = "$man_opts" ]; then
	pass "--help and stockade.1 list the same options ($(echo "$help_opts" | wc -l))"
else
	fail "--help and stockade.1 list the same options"
	diag "only in --help: $(comm -23 <(echo "$help_opts") <(echo "$man_opts") | tr '\n' ' ')"
	diag "only in stockade.1: $(comm -13 <(echo "$help_opts") <(echo "$man_opts") | tr '\n' ' ')"
fi
# Every option the parser takes is in --help: each one given alone is
# either accepted or refused for its argument or its place, never unknown.
for opt in $help_opts; do
	out=$("$STOCKADE" "$opt" 2>&1 </dev/null)
	case $out in
	*"unknown option"*) fail "$opt is an option the parser knows"; diag "$out" ;;
	*) pass "$opt is an option the parser knows" ;;
	esac
done
out=$("$STOCKADE" --no-such-option 2>&1)
case $out in *"unknown option '--no-such-option'"*) pass "an unknown option is said" ;; *) fail "an unknown option is said"; diag "$out" ;; esac
T=$(tmpdir_new)
# tests/threats-coverage.txt lists the rows of ../shared/THREATS.md (and
# the rows added after it) by number: its "rows: N" is the number of rows
# it lists, they run 1..N, and a test of tests/integration names each
# ("THREATS N: ...", or a list "THREATS N, M: ..."; a control's name,
# "THREATS N control", does not count). A row without a test fails here.
if python3 - tests/threats-coverage.txt tests/integration/*.sh >"$T/threats.out" 2>&1 <<'PY'; then
import re, sys
text = open(sys.argv[1]).read()
m = re.search(r"^rows: (\d+)$", text, re.M)
assert m, "no 'rows: N' line"
want = int(m.group(1))
rows = [int(n) for n in re.findall(r"^(\d+)\t", text, re.M)]
assert rows == list(range(1, want + 1)), "rows listed: %s, not 1..%d" % (rows, want)
named = {}
for f in sys.argv[2:]:
    for line in open(f):
        if line.lstrip().startswith("#"):
            continue
        for t in re.finditer(r"THREATS ((?:\d+)(?:, \d+)*)(?: \([^)]*\))?:", line):
            for n in t.group(1).split(", "):
                named.setdefault(int(n), set()).add(f.rsplit("/", 1)[-1])
missing = [n for n in rows if n not in named]
assert not missing, "no test names THREATS %s" % ", ".join(map(str, missing))
extra = sorted(n for n in named if n > want)
assert not extra, "tests name rows the list does not have: %s" % extra
for n in rows:
    block = re.search(r"^%d\t.*?(?=^\d+\t|\Z)" % n, text, re.M | re.S).group(0)
    for f in named[n]:
        assert f in block, "row %d: %s names it, the list does not say so" % (n, f)
print(want)
PY
	pass "every row of tests/threats-coverage.txt ($(cat "$T/threats.out")) is named by a test, and the list says where"
else
	fail "every row of tests/threats-coverage.txt is named by a test, and the list says where"
	diag "$(cat "$T/threats.out")"
fi
plan_done
