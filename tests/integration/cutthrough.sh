#!/bin/bash
# Cut-through reads ([lun] cut_through, scsi/sbc_cut.c) against a live
# tcqd, driven by tests/integration/cutread.c: every Data-In of large
# READs checked against RFC 7143 11.7 (DataSN, Buffer Offset, F bit,
# MaxBurstLength sequences, data digests, the status collapsed into the
# last) with the data as written; a failed piece answered MEDIUM ERROR
# with its first LBA and nothing sent past it; ABORT TASK and LOGICAL
# UNIT RESET of a cut READ whose pieces are in flight (nothing of it after
# the TMF response). The backend I/Os a READ becomes (tcqctl stats) follow
# tcqd.conf(5)'s rule for the piece, and cut_through set live (bad values
# refused by name, nothing changed) and saved.
# shellcheck source=tests/integration/lib.sh
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

CUTREAD=${CUTREAD:-$top_builddir/tests/integration/cutread}
TCQCTL=${TCQCTL:-$top_builddir/tcqctl}
need_built "$CUTREAD" "$TCQCTL"

IQN=iqn.2026-12.org.tcq:cut
SOCK=$TEST_TMP/ctl.sock
ctl() { run "$TCQCTL" -s "$SOCK" "$@"; }

fixture_cut() {
	cat >"$TEST_TMP/tcqd.conf" <<CONF
[global]
listen = 127.0.0.1:0
threads = 2
ctl = $SOCK

[target $IQN]

[lun $IQN 0]
backend = delay:latency=1ms,dist=exp,seed=28,base=ram:size=2M

[lun $IQN 1]
backend = fault:lba=647,ops=read,base=delay:latency=1ms,parallel=1,base=ram:size=2M

[lun $IQN 2]
backend = delay:latency=60ms,parallel=1,base=ram:size=2M

[lun $IQN 3]
backend = ram:size=2M
CONF
	start_tcqd -c "$TEST_TMP/tcqd.conf"
}

cut_case() { pdu_case "$CUTREAD" "$1"; }

# The backend I/Os LUN 3 has had (tcqctl stats).
lun3_ios() {
	tc "$TCQCTL" -s "$SOCK" --json stats |
		jq -e '[.luns[] | select(.lun == 3) | .inflight.ios] | add'
}

# pieces CASE N: cutread's CASE on LUN 3 becomes N backend I/Os (from
# the count the last call left, IOS, which nothing else on LUN 3 moves).
IOS=
pieces() {
	local after
	[ -n "$IOS" ] || IOS=$(lun3_ios) || fail "no statistics of LUN 3"
	pdu_case "$CUTREAD" "$1"
	after=$(lun3_ios) || fail "no statistics of LUN 3"
	[ $((after - IOS)) -eq "$2" ] ||
		fail "$1: $((after - IOS)) backend I/Os, expected $2"
	IOS=$after
	ok "$1: $2 backend I/O(s)"
}

# 512 KiB at MaxRecvDataSegmentLength 8K: pieces of 64K (the floor); at
# 128K: pieces of 128K; 64 KiB is one piece: read whole. (A 128K READ at
# 256K is two of 64K: half the READ.)
reads_are_cut_in_pieces_of_mrdsl_at_least_64k() {
	pieces read_512k 8
	pieces read_512k_mrdsl_128k 4
	pieces read_64k 1
	pieces read_128k_mrdsl_256k 2
}

cut_through_off_live_reads_whole() {
	ctl set 3 cut_through=off || fail "set cut_through=off: $OUT"
	lun3_cut_through_is off
	pieces read_512k 1
	ctl config || fail "config: $OUT"
	grep -qx 'cut_through = off' <<<"$OUT" ||
		fail "the configuration (what save writes) lacks cut_through = off"
	ctl luns || fail "luns: $OUT"
	grep -qxF '  reads    cut_through off' <<<"$OUT" ||
		fail "tcqctl luns prints no 'reads    cut_through off' line: $OUT"
	ctl set 3 cut_through=auto || fail "set cut_through=auto: $OUT"
	lun3_cut_through_is auto
	ok "cut_through set live both ways, shown, and saved"
}

# lun3_cut_through_is VALUE: tcqctl luns shows it for LUN 3.
lun3_cut_through_is() {
	ctl --json luns || fail "luns: $OUT"
	jq -e --arg v "$1" '.luns[] | select(.lun == 3) | .cut_through == $v' \
		<<<"$OUT" >/dev/null || fail "luns does not show cut_through $1"
}

bad_cut_through_refused_by_name() {
	local rc=0
	run "$TCQCTL" -s "$SOCK" set 3 cut_through=yes || rc=$?
	[ "$rc" -eq 1 ] || fail "set cut_through=yes: status $rc, expected 1"
	[[ $OUT == *cut_through* ]] || fail "the refusal does not name cut_through: $OUT"
	lun3_cut_through_is auto
	ok "cut_through=yes refused naming the key; still auto"
}

bad_cut_through_in_file_or_option_refused() {
	local rc=0
	tcqd_conf "$TEST_TMP/bad.conf" "$IQN" 1M
	printf 'cut_through = on\n' >>"$TEST_TMP/bad.conf"
	conf_refused "$TEST_TMP/bad.conf" ".*cut_through" "cut_through = on"
	run "$TCQD" --export "$TEST_TMP/x.img" --size 1M --cut-through on || rc=$?
	[ "$rc" -eq 2 ] || fail "--cut-through on: status $rc, expected 2"
	[[ $OUT == *--cut-through* ]] || fail "the error does not name --cut-through: $OUT"
	ok "cut_through = on refused in [lun], --cut-through on too"
}

CHECKS=(
	@cut
	cut_case:reads_follow_rfc7143
	cut_case:failed_piece_medium_error
	cut_case:abort_task_of_cut_read
	cut_case:lun_reset_of_cut_read
	reads_are_cut_in_pieces_of_mrdsl_at_least_64k
	cut_through_off_live_reads_whole
	bad_cut_through_refused_by_name
	bad_cut_through_in_file_or_option_refused
)
run_checks "$@"
