#!/bin/bash
# The man pages (man/, docs/tcq-bench.1): each renders without a warning
# from man/groff; tcqd.conf(5) has every key of the key table
# (tests/dump_keys) under its section, with the table's syntax, a default,
# a range when the key has one, and the table's live class; tcqd(8) and
# tcqctl(8) have an entry for every option and command of --help.
# shellcheck source=tests/integration/lib.sh
. "${top_srcdir:-$(dirname "$0")/..}/tests/integration/lib.sh"

DUMP_KEYS=${DUMP_KEYS:-$top_builddir/tests/dump_keys}
TCQCTL=${TCQCTL:-$top_builddir/tcqctl}
CRASH=${CRASH:-$top_builddir/tcq-crash}
need_built "$DUMP_KEYS" "$TCQD" "$TCQCTL" "$CRASH"
MAN=$top_srcdir/man

render() {
	local f=$top_srcdir/$1 w
	need_tool man
	[ -f "$f" ] || fail "no $1"
	w=$(LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -l "$f" 2>&1 >/dev/null) ||
		fail "man -l $1 failed: $w"
	[ -z "$w" ] || fail "man --warnings: $w"
	ok "$1 renders without warnings"
}

# tp_lines FILE: the lines that follow a .TP (the entries' tags), with
# roff's \- made -.
tp_lines() {
	awk 'prev == ".TP" { gsub(/\\-/, "-"); print } { prev = $0 }' "$1"
}

# conf_entries: SECTION TAB NAME TAB SYNTAX TAB LIVE TAB HAS-DEFAULT TAB
# HAS-RANGE, one line per key entry of tcqd.conf.5.
conf_entries() {
	awk '
	function flush() {
		if (name != "")
			printf "%s\t%s\t%s\t%s\t%d\t%d\n", sec, name, syn, live, def, rng
		name = ""
	}
	/^\.S[HS]/ { flush(); sec = "" }
	/^\.SS "\[global/ { sec = "global" }
	/^\.SS "\[target/ { sec = "target" }
	/^\.SS "\[lun/ { sec = "lun" }
	/^\.SS "\[initiator/ { sec = "initiator" }
	/^\.TP/ { flush(); tp = 1; next }
	tp && sec != "" && match($0, /^\\fB[a-z0-9_]+\\fR = \\fI.*\\fR$/) {
		line = $0
		sub(/^\\fB/, "", line); name = line; sub(/\\fR.*/, "", name)
		syn = line; sub(/^[^=]*= \\fI/, "", syn); sub(/\\fR$/, "", syn)
		gsub(/\\-/, "-", syn)
		live = "?"; def = 0; rng = 0
	}
	{ tp = 0 }
	name != "" && /Default:/ { def = 1 }
	name != "" && /Range:/ { rng = 1 }
	name != "" && /Change: live\./ { live = "live" }
	name != "" && /Change: re-creates the (LUN|target)\./ { live = "recreate" }
	name != "" && /Change: restart only\./ { live = "restart" }
	END { flush() }' "$MAN/tcqd.conf.5"
}

conf_has_every_key_of_the_table() {
	local sec name syn min max rep live help entry n=0 bad=()
	declare -A man=()
	while IFS=$'\t' read -r sec name syn live def rng; do
		[ -z "${man[$sec/$name]:-}" ] ||
			bad+=("[$sec] $name: two entries")
		man[$sec/$name]="$syn|$live|$def|$rng"
	done < <(conf_entries)
	while IFS=$'\t' read -r sec name syn min max rep live help; do
		n=$((n + 1))
		entry=${man[$sec/$name]:-}
		if [ -z "$entry" ]; then
			bad+=("[$sec] $name: missing from tcqd.conf.5")
			continue
		fi
		IFS='|' read -r -a e <<<"$entry"
		# The syntax of a choice has | in it: rejoin what read split.
		local msyn=${entry%|*|*|*}
		[ "$msyn" = "$syn" ] ||
			bad+=("[$sec] $name: syntax '$msyn', the table says '$syn'")
		[ "${e[-3]}" = "$live" ] ||
			bad+=("[$sec] $name: 'Change:' says ${e[-3]}, the table says $live")
		[ "${e[-2]}" = 1 ] || bad+=("[$sec] $name: no 'Default:'")
		if [ "$min" != 0 ] || [ "$max" != 0 ]; then
			[ "${e[-1]}" = 1 ] ||
				bad+=("[$sec] $name: no 'Range:' ($min..$max)")
		fi
		unset "man[$sec/$name]"
	done < <("$DUMP_KEYS")
	[ "$n" -gt 40 ] || fail "dump_keys printed only $n keys"
	for entry in "${!man[@]}"; do
		bad+=("$entry: in tcqd.conf.5 but not in the key table")
	done
	[ "${#bad[@]}" -eq 0 ] || fail "$(printf '%s; ' "${bad[@]}")"
	ok "tcqd.conf.5 documents the $n keys of the table, with their live class"
}

# The disk backend's keys (tests/dump_keys --disk): each has an entry in
# tcqd.conf.5's DEVICE MODELS (a .TP tag \fBkey\fR=...), a line in
# conf/tcqd.conf and a mention in tcqd --help; no entry there names a key
# the backend does not have.
disk_keys_documented() {
	local key help n=0 bad=() tags
	tags=$(awk '/^\.SH/ { on = ($0 ~ /DEVICE MODELS/) }
		on && prev == ".TP" { print } { prev = $0 }' "$MAN/tcqd.conf.5" |
		sed -n 's/^\\fB\([a-z_]*\)\\fR=.*/\1/p')
	[ -n "$tags" ] || fail "tcqd.conf.5 has no DEVICE MODELS entries"
	help=$("$TCQD" --help)
	while IFS=$'\t' read -r key _; do
		n=$((n + 1))
		grep -qx -- "$key" <<<"$tags" ||
			bad+=("$key: not in tcqd.conf.5 DEVICE MODELS")
		grep -qE -- "^;[[:space:]]+([a-z_]+=[^ ]*[[:space:]]+.*)?$key[=:]" \
			"$top_srcdir/conf/tcqd.conf" ||
			bad+=("$key: not in conf/tcqd.conf")
		grep -qE -- "[ ,(:]$key=" <<<"$help" ||
			bad+=("$key: not in tcqd --help")
	done < <("$DUMP_KEYS" --disk)
	[ "$n" -gt 20 ] || fail "dump_keys --disk printed only $n keys"
	for key in $tags; do
		"$DUMP_KEYS" --disk | cut -f1 | grep -qx -- "$key" ||
			bad+=("$key: in tcqd.conf.5 but not a disk key")
	done
	[ "${#bad[@]}" -eq 0 ] || fail "$(printf '%s; ' "${bad[@]}")"
	ok "the $n disk backend keys are in tcqd.conf.5, conf/tcqd.conf and tcqd --help"
}

tcqd_options_documented() {
	local opts o tags missing=()
	opts=$("$TCQD" --help | grep -oE -- '(^|[ ,])--?[a-zA-Z][a-z-]*' |
		sed 's/^[ ,]*//' | sort -u)
	[ -n "$opts" ] || fail "tcqd --help shows no options"
	tags=$(tp_lines "$MAN/tcqd.8")
	for o in $opts; do
		grep -qE -- "(^|[^a-z-])$o([^a-z-]|$)" <<<"$tags" || missing+=("$o")
	done
	[ "${#missing[@]}" -eq 0 ] || fail "not in tcqd.8: ${missing[*]}"
	ok "tcqd.8 has every option of tcqd --help ($(wc -w <<<"$opts"))"
}

tcqctl_commands_documented() {
	local help cmds opts c tags missing=()
	help=$("$TCQCTL" --help)
	cmds=$(sed -n '1,/^options:/p' <<<"$help" |
		sed -n 's/^  \([a-z][a-z-]*\).*/\1/p' | sort -u)
	opts=$(sed -n '/^options:/,$p' <<<"$help" |
		grep -oE -- '(^|[ ,])--?[a-zA-Z][a-z-]*' | sed 's/^[ ,]*//' |
		sort -u)
	[ -n "$cmds" ] && [ -n "$opts" ] ||
		fail "cannot read the commands and options of tcqctl --help"
	tags=$(tp_lines "$MAN/tcqctl.8" | sed 's/\\f[BIR]//g; s/"//g')
	for c in $cmds $opts; do
		grep -qE -- "(^|[^a-z-])$c([^a-z-]|$)" <<<"$tags" || missing+=("$c")
	done
	[ "${#missing[@]}" -eq 0 ] || fail "not in tcqctl.8: ${missing[*]}"
	ok "tcqctl.8 has every command and option of tcqctl --help ($(wc -w <<<"$cmds $opts"))"
}

# tcq-crash(1) has an entry for every option of tcq-crash --help.
tcq_crash_options_documented() {
	local opts o tags missing=()
	opts=$("$CRASH" --help 2>&1 | grep -oE -- '--[a-z][a-z-]*' | sort -u)
	[ -n "$opts" ] || fail "cannot read the options of tcq-crash --help"
	tags=$(tp_lines "$MAN/tcq-crash.1" | sed 's/\\f[BIR]//g; s/"//g')
	for o in $opts; do
		grep -qE -- "(^|[^a-z-])$o([^a-z-]|$)" <<<"$tags" || missing+=("$o")
	done
	[ "${#missing[@]}" -eq 0 ] || fail "not in tcq-crash.1: ${missing[*]}"
	ok "tcq-crash.1 has every option of tcq-crash --help ($(wc -w <<<"$opts"))"
}

CHECKS=(
	render:man/tcq-crash.1
	render:man/tcqd.8
	render:man/tcqctl.8
	render:man/tcqd.conf.5
	render:docs/tcq-bench.1
	conf_has_every_key_of_the_table
	disk_keys_documented
	tcqd_options_documented
	tcqctl_commands_documented
	tcq_crash_options_documented
)
run_checks "$@"
