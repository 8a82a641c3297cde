# stockade's own build caches are one set per workspace: what a run in one
# project writes to GOCACHE, ccache's, npm's or XDG_CACHE_HOME no run in
# another project reads.
. tests/lib.sh

new_places
A="$T/proj"
B="$T/other/proj"	# the same last name, another path
mkdir -p "$A" "$B"
NONCE=$(nonce_new)

for var in GOCACHE CCACHE_DIR npm_config_cache XDG_CACHE_HOME; do
	jail -q --net off -C "$A" -- sh -c 'printf "%s\n" "$2" >"$(printenv "$1")/planted" && printenv "$1"' sh "$var" "$NONCE" \
		>"$T/a.dir" 2>"$T/a.err"
	adir=$(cat "$T/a.dir")
	[ -n "$adir" ] && grep -q "$NONCE" "$adir/planted" 2>/dev/null && pass "THREATS 70: $var: a run in one workspace writes its cache" ||
		{ fail "THREATS 70: $var: a run in one workspace writes its cache"; diag "$(cat "$T/a.err")"; }
	expect_probe "$var: the next run in the same workspace reads it" ok -- \
		jail -q --net off -C "$A" --read "$PROBE" -- sh -c 'exec "$0" read "$(printenv "$1")/planted"' "$PROBE" "$var"
	expect_probe "THREATS 70: $var: a run in another workspace has a cache of its own, without it" "errno ENOENT" -- \
		jail -q --net off -C "$B" --read "$PROBE" -- sh -c 'exec "$0" read "$(printenv "$1")/planted"' "$PROBE" "$var"
	expect_probe "THREATS 70: $var: nor can it reach the first workspace's" "errno $(hidden_errno)" -- \
		jail -q --net off -C "$B" -- "$PROBE" read "$adir/planted"
	expect_control "THREATS 70 control: $var: outside, the planted entry is there" -- "$PROBE" read "$adir/planted"
done
case $adir in "$HOME/.cache/stockade/ws/proj-"*) pass "the cache is named after the workspace" ;;
*) fail "the cache is named after the workspace"; diag "$adir" ;; esac

plan_done
