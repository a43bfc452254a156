#!/bin/bash
# The examples of README.md run as written. Every fenced ```sh block is a
# check of its own (named after its first line number), run in order by
# bash with `set -e -o pipefail` in a sandbox: the built tcqd, tcqctl and
# tcq-bench first on PATH, the README's absolute paths under /srv, /etc,
# /run and /var/lib/tcq moved into the sandbox, 0.0.0.0 made 127.0.0.1
# (nothing listens beyond loopback), and port 3260 a free one: a tcqd
# command (or a config file) listens on port 0, and every later command
# gets the port that tcqd printed.
#
# Markers, HTML comments on the line before a fence (invisible on GitHub):
#   <!-- readme-test: file PATH -->   the block (any language) is the
#       content of PATH; it is written, with the same rewriting, before
#       any block runs (mode 0600).
#   <!-- readme-test: not run: REASON -->   the block is not run; its
#       check passes and says "not run: REASON", so the list of examples
#       not run shows in every test log. Keep it short: only what needs
#       a Ceph cluster or would run the whole build/test suite itself.
#
# A tcqd command runs in the background (a shell function in front of the
# real tcqd); the block goes on once tcqd printed its URLs, which are
# shown as its output. It keeps running for the blocks after it until the
# next tcqd command, which first stops it (SIGTERM, it must exit 0), or
# the end. A comment "# prints TEXT" on the line after a tcqd command is
# checked: tcqd must print TEXT (port rewritten).
# The tcq-bench examples take a while: give each block 3 minutes.
: "${CLIENT_TIMEOUT:=180}"
# shellcheck source=tests/integration/lib.sh
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

README=${README:-$top_srcdir/README.md}
need_built "$TCQD" "$top_builddir/tcqctl" "$top_builddir/tcq-bench"
need_tool iscsi-ls qemu-img
[ -f "$README" ] || fail "no $README"
SB=$TEST_TMP/sb		# short: the control socket path must fit 107 bytes
mkdir -p "$SB"/{srv,etc,run,var/lib/tcq,bin}
BLOCKS=$TEST_TMP/blocks

# The blocks: BLOCKS/N.{kind,line,text,note} for N = 1, 2, ... in order;
# kind is sh, file or notrun.
awk -v dir="$BLOCKS" '
	BEGIN { n = 0; inb = 0; marker = "" }
	!inb && /^<!-- readme-test: .* -->$/ {
		marker = $0
		sub(/^<!-- readme-test: /, "", marker); sub(/ -->$/, "", marker)
		next
	}
	!inb && /^```/ {
		lang = substr($0, 4)
		kind = ""
		if (marker ~ /^file /) kind = "file"
		else if (marker ~ /^not run: /) kind = "notrun"
		else if (lang == "sh") kind = "sh"
		if (kind != "") {
			n++
			inb = 1
			printf "%s\n", kind > (dir "/" n ".kind")
			printf "%d\n", NR > (dir "/" n ".line")
			note = marker
			sub(/^(file |not run: )/, "", note)
			printf "%s\n", note > (dir "/" n ".note")
			printf "" > (dir "/" n ".text")
		} else {
			inb = 2
		}
		marker = ""
		next
	}
	inb && /^```$/ { inb = 0; next }
	inb == 1 { print > (dir "/" n ".text") }
	!inb && !/^[ \t]*$/ { marker = "" }
' < <(mkdir -p "$BLOCKS"; cat "$README") ||
	fail "cannot read the blocks of $README"

# rewrite: the sandbox's version of README text on stdin. The port 3260
# becomes 0 in tcqd commands and config files (MODE tcqd), else the port
# the last tcqd printed (the shell variable README_PORT at run time).
rewrite() {
	local mode=$1 port='${README_PORT}'
	[ "$mode" = tcqd ] && port=0
	sed -E -e "s#(^|[ =:\"'])/(srv|etc|run|var/lib/tcq)/#\\1$SB/\\2/#g" \
		-e 's#0\.0\.0\.0#127.0.0.1#g' \
		-e "s#(127\\.0\\.0\\.1|\\[::1\\]|localhost):3260#\\1:$port#g" |
	if [ "$mode" = tcqd ]; then
		cat
	else
		# a tcqd line (and its continuation lines) listens on port 0
		awk -v p='${README_PORT}' '
			/^[ \t]*tcqd[ \t]/ { t = 1 }
			{ line = $0; if (t) gsub(/:\$\{README_PORT\}/, ":0", line); print line }
			!/\\$/ { t = 0 }'
	fi
}

# Written once, sourced by every block (under set -e): tcqd in the
# background.
cat >"$SB/bin/preamble.sh" <<PRE
SB='$SB'
TCQD_BIN='$TCQD'
export PATH='$top_builddir':"\$PATH"
README_PORT=\$(cat "\$SB/port" 2>/dev/null || echo 3260)
cd "\$SB"
readme_stop() {
	local pid i
	pid=\$(cat "\$SB/tcqd.pid" 2>/dev/null) || return 0
	rm -f "\$SB/tcqd.pid"
	kill -TERM "\$pid" 2>/dev/null || true
	for ((i = 0; i < 100; i++)); do
		[ -s "\$SB/tcqd.rc" ] && break
		sleep 0.1
	done
	[ "\$(cat "\$SB/tcqd.rc" 2>/dev/null)" = 0 ] || {
		echo "readme.sh: the previous tcqd did not exit 0 on SIGTERM (\$(cat "\$SB/tcqd.rc" 2>/dev/null || echo 'still running'))" >&2
		return 1
	}
}
tcqd() {
	local i line
	case " \$* " in
	*" --help "* | *" -h "* | *" --version "* | *" -V "*)
		"\$TCQD_BIN" "\$@"; return ;;
	esac
	readme_stop || return 1
	: >"\$SB/tcqd.out"; : >"\$SB/tcqd.log"; rm -f "\$SB/tcqd.rc"
	( "\$TCQD_BIN" "\$@" >"\$SB/tcqd.out" 2>"\$SB/tcqd.log" &
	  echo \$! >"\$SB/tcqd.pid.new"; rc=0; wait \$! || rc=\$?
	  echo \$rc >"\$SB/tcqd.rc" ) \
		</dev/null >/dev/null 2>&1 &
	for ((i = 0; i < 100; i++)); do
		line=\$(grep -m1 '^iscsi://' "\$SB/tcqd.out" 2>/dev/null) && break
		[ -s "\$SB/tcqd.rc" ] && break
		sleep 0.1
	done
	mv "\$SB/tcqd.pid.new" "\$SB/tcqd.pid" 2>/dev/null || true
	if [ -z "\$line" ]; then
		echo "readme.sh: tcqd printed no URL (status \$(cat "\$SB/tcqd.rc" 2>/dev/null || echo 'still running')):" >&2
		sed 's/^/    /' "\$SB/tcqd.log" >&2
		return 1
	fi
	cat "\$SB/tcqd.out"
	[[ \$line =~ :([0-9]+)/ ]] && README_PORT=\${BASH_REMATCH[1]}
	echo "\$README_PORT" >"\$SB/port"
}
PRE

# The README tcqd still running at the end (by the PID it wrote):
# SIGTERM, then SIGKILL if it is still there 10 s later.
readme_kill() {
	local pid
	pid=$(cat "$SB/tcqd.pid" 2>/dev/null) || return 0
	kill -TERM "$pid" 2>/dev/null
	# shellcheck disable=SC2016  # eval expands it
	wait_until 100 eval '! kill -0 "$pid" 2>/dev/null' || kill -KILL "$pid" 2>/dev/null
	rm -f "$SB/tcqd.pid"
}
trap 'rc=$?; readme_kill; (exit $rc); lib_cleanup' EXIT

# Only loopback: every listen address left after rewriting.
loopback_only() {
	local bad
	bad=$(grep -Eo -- '(--listen[ =]|listen *= *)[^ ]+' "$1" |
		grep -Ev -- '(127\.0\.0\.1|\[::1\]):' || true)
	[ -z "$bad" ] || fail "would listen beyond loopback: $bad"
}

write_files() {
	local k n path
	for k in "$BLOCKS"/*.kind; do
		[ "$(cat "$k")" = file ] || continue
		n=$(basename "$k" .kind)
		path=$(rewrite tcqd <"$BLOCKS/$n.note")
		mkdir -p "$(dirname "$path")"
		rewrite tcqd <"$BLOCKS/$n.text" >"$path"
		chmod 600 "$path"
		loopback_only "$path"
	done
}

# block N: one README block, by its kind.
block() {
	local n=$1 kind note script=$SB/bin/block$1.sh rc=0 want
	kind=$(cat "$BLOCKS/$n.kind")
	note=$(cat "$BLOCKS/$n.note")
	case $kind in
	notrun)
		say "not run ($note):"
		sed 's/^/    /' "$BLOCKS/$n.text"
		ok "not run: $note"
		return ;;
	file)
		ok "the content of $note (written before the blocks ran)"
		return ;;
	esac
	{
		echo "set -e -o pipefail"
		echo ". '$SB/bin/preamble.sh'"
		rewrite sh <"$BLOCKS/$n.text"
	} >"$script"
	loopback_only "$script"
	say "README.md line $(cat "$BLOCKS/$n.line"), as run:"
	sed -n '3,$p' "$script" | sed 's/^/    /'
	run bash "$script" || rc=$?
	[ "$rc" -eq 0 ] || fail "the example failed (status $rc): $(tail -n 3 <<<"$OUT" | paste -sd ' ' -)"
	ok "the example ran"
	# "# prints TEXT" after a tcqd command
	while IFS= read -r want; do
		[ -n "$want" ] || continue
		want=${want//'${README_PORT}'/$(cat "$SB/port")}
		grep -qF -- "$want" "$SB/tcqd.out" ||
			fail "tcqd did not print '$want' (it printed: $(paste -sd ' ' "$SB/tcqd.out"))"
		ok "tcqd printed $want"
	done < <(rewrite sh <"$BLOCKS/$n.text" | sed -n 's/^# prints \([^ ]*\).*/\1/p')
}

# The last README tcqd stops on SIGTERM with status 0.
readme_tcqd_stops_cleanly() {
	[ -s "$SB/tcqd.pid" ] || { ok "no tcqd left running"; return; }
	bash -c ". '$SB/bin/preamble.sh'; readme_stop" ||
		fail "the last tcqd of the README did not stop cleanly"
	ok "the last tcqd of the README exited 0 on SIGTERM"
}

listing "$@" || write_files
CHECKS=()
for k in $(ls "$BLOCKS" | sed -n 's/\.kind$//p' | sort -n); do
	line=$(cat "$BLOCKS/$k.line")
	eval "readme_line_$line() { block $k; }"
	CHECKS+=("readme_line_$line")
done
[ "${#CHECKS[@]}" -gt 5 ] || fail "only ${#CHECKS[@]} blocks found in $README"
CHECKS+=(readme_tcqd_stops_cleanly)
run_checks "$@"
