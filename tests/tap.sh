# TAP output for the tree checks (tests/layers.sh, tests/tree.sh), sourced.
# result OK NAME [DETAIL...] prints one line, "ok N - NAME" when OK is 0,
# else "not ok N - NAME" (and sets failed=1), then each DETAIL as a
# diagnostic; tap_end prints the plan and exits with the verdict. tmp is
# a temporary directory of the caller's, removed on exit.
# shellcheck shell=bash

tmp=$(mktemp -d "${TMPDIR:-/tmp}/tcq-tap.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT

n=0
failed=0
result() {
	local ok=$1 name=$2
	shift 2
	n=$((n + 1))
	if [ "$ok" -eq 0 ]; then
		echo "ok $n - $name"
	else
		echo "not ok $n - $name"
		failed=1
	fi
	local line
	for line in "$@"; do
		[ -n "$line" ] && printf '# %s\n' "$line"
	done
	return 0
}

tap_end() {
	echo "1..$n"
	exit "$failed"
}
