#!/bin/bash
# shellcheck disable=SC2317  # checks run by run_checks in subshells
# scripts/reproduce, the pipeline only: a --stand-in delay run of two
# experiments must write a report whose every section says it is NOT a
# reproduction, with the published and measured tables, the commands and
# a well-formed SVG plot; a stand-in run must refuse to write
# docs/reproductions.md; and without the disk model in tcqd the real run
# must stop with "the disk model backend is not built". Nothing here
# judges the figures.
# shellcheck source=tests/integration/lib.sh
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

REPRO=$top_srcdir/scripts/reproduce
need_built "$TCQD" "$top_builddir/tcq-bench"
listing "$@" || {
	[ "$(id -u)" = 0 ] || skip "needs root (scripts/link: ip netns, tc)"
	need_tool python3 ip tc
}

reproduce_needs_the_disk_model() {
	if run "$REPRO" --quick --builddir "$top_builddir" --only li-2009 \
		--out "$TEST_TMP/real.md"; then
		ok "tcqd has the disk model: the real run works"
		return
	fi
	if ! grep -q "unknown backend 'disk'" < <("$TCQD" --export null0 \
		--size 1M --backend disk:model=hdd --listen 127.0.0.1:0 2>&1 &
		sleep 1; kill $! 2>/dev/null); then
		fail "the real run failed although tcqd has a disk backend"
	fi
	grep -qF "reproduce: the disk model backend is not built" <<<"$OUT" ||
		fail "no 'the disk model backend is not built' message"
	[ ! -e "$TEST_TMP/real.md" ] || fail "a report was written anyway"
	ok "without the disk model the run stops with the reason, no report"
}

reproduce_standin_pipeline() {
	local md=$TEST_TMP/standin.md n s
	run "$REPRO" --quick --builddir "$top_builddir" --stand-in delay \
		--only li-2009,micron-2011 --out "$md" ||
		fail "the stand-in run failed"
	[ -s "$md" ] || fail "no report written"
	n=$(grep -c '^## ' "$md")
	[ "$n" = 2 ] || fail "$n sections, expected 2"
	s=$(grep -c '^\*\*STAND-IN RUN, NOT A REPRODUCTION\.\*\*' "$md")
	[ "$s" = 3 ] || fail "the NOT-a-reproduction banner appears $s times, expected 3 (top and each section)"
	grep -q 'Verdict: stand-in run, no verdict' "$md" ||
		fail "a stand-in section gives a verdict"
	[ "$(grep -c '^### Published' "$md")" = 2 ] || fail "published tables missing"
	[ "$(grep -c '^### Measured (STAND-IN' "$md")" = 2 ] || fail "measured tables missing"
	grep -q '^scripts/lib/serve-bench .*--backend delay:' "$md" ||
		fail "the commands are missing"
	for s in li-2009 micron-2011; do
		python3 -c 'import sys, xml.dom.minidom as m; m.parse(sys.argv[1])' \
			"$TEST_TMP/reproductions/$s.svg" || fail "$s.svg is not well-formed"
		grep -qF "](reproductions/$s.svg)" "$md" || fail "$s.svg not linked"
	done
	ok "stand-in report: 2 sections, each labelled NOT a reproduction, tables, commands, SVG"
}

reproduce_standin_never_writes_docs() {
	if run "$REPRO" --quick --builddir "$top_builddir" --stand-in delay \
		--only li-2009 --out "$top_srcdir/docs/reproductions.md"; then
		fail "a stand-in run wrote docs/reproductions.md"
	fi
	grep -qF "never writes docs/reproductions.md" <<<"$OUT" || fail "no reason given"
	ok "a stand-in run refuses to write docs/reproductions.md"
}

CHECKS=(
	reproduce_needs_the_disk_model
	reproduce_standin_pipeline
	reproduce_standin_never_writes_docs
)
run_checks "$@"
