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
plan_done
