#!/bin/bash
# Test backends over iSCSI: a LUN on fault: answers READ of its failing
# range with MEDIUM ERROR / UNRECOVERED READ ERROR and WRITE with MEDIUM
# ERROR / WRITE ERROR, error=enospc gives DATA PROTECT / SPACE ALLOCATION
# FAILED, while other LBAs and the other LUNs (plain ram, delay with
# out-of-order completion, delay over a file created by tcqd) keep working.
# shellcheck source=tests/integration/lib.sh
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

SCSICMD=${SCSICMD:-$top_builddir/tests/integration/scsicmd}
BENCH=${BENCH:-$top_builddir/tcq-bench}
need_built "$SCSICMD" "$BENCH"

IQN=iqn.2026-11.org.tcq:faults
fixture_faults() {
	cat >"$TEST_TMP/tcqd.conf" <<CONF
[global]
listen = 127.0.0.1:0
threads = 2

[target $IQN]

[lun $IQN 0]
backend = fault:lba=1000-1999;5000,ops=all,base=ram:size=16M

[lun $IQN 1]
backend = fault:lba=100-199,ops=write,error=enospc,base=ram:size=16M

[lun $IQN 2]
backend = ram:size=16M

[lun $IQN 3]
backend = delay:latency=300us,dist=exp,parallel=4,seed=9,base=ram:size=16M

[lun $IQN 4]
path = $TEST_TMP/delayed.img
size = 16M
create = yes
backend = delay:latency=100us,base=aio
CONF
	start_tcqd -c "$TEST_TMP/tcqd.conf"
	URL=${TCQD_URL%/*}
}

# expect LUN "LINE..." CMD...: scsicmd's lines must equal the given ones.
expect() {
	local lun=$1 want=$2
	shift 2
	run "$SCSICMD" "$URL/$lun" "$@" || fail "scsicmd failed on LUN $lun"
	[ "$OUT" = "$want" ] ||
		fail "LUN $lun: $* gave '$OUT', expected '$want'"
}
MEDIUM_READ="CHECK CONDITION key=0x3 asc=0x11 ascq=0x00"
MEDIUM_WRITE="CHECK CONDITION key=0x3 asc=0x0c ascq=0x00"
NOSPACE="CHECK CONDITION key=0x7 asc=0x27 ascq=0x07"
G=GOOD

lun0_fault_range_answers_medium_error() {
	expect 0 "$G
$G
$MEDIUM_READ
$MEDIUM_READ
$MEDIUM_WRITE
$G
$MEDIUM_READ
$G" \
	write 0 8 aa nofua read 0 8 aa read 996 8 - read 1999 1 - \
	write 1500 1 bb nofua read 2000 8 00 read 5000 1 - read 4999 1 00
	ok "LUN 0: reads and writes of blocks 1000-1999 and 5000 fail with MEDIUM ERROR, others work"
}

lun1_enospc_answers_space_allocation_failed() {
	expect 1 "$NOSPACE
$G
$G
$G" \
	write 100 1 cc nofua read 100 1 00 write 99 1 cc nofua read 99 1 cc
	ok "LUN 1: error=enospc, ops=write: SPACE ALLOCATION FAILED, reads unharmed, the failed write changed nothing"
}

lun2_plain_ram_unaffected() {
	expect 2 "$G
$G
$G" write 1000 8 dd fua read 1000 8 dd sync
	ok "LUN 2 (plain ram) unaffected"
}

lun3_delay_serves_data() {
	expect 3 "$G
$G
$G
$G" write 0 64 11 nofua write 64 64 22 nofua read 0 64 11 read 64 64 22
	ok "LUN 3 (delay) serves data"
}

# Out-of-order completions under load through the delay backend.
lun3_delay_takes_depth16_load() {
	run "$BENCH" --quiet --runtime 1 --engine libiscsi --rw randrw \
		--bs 4k --depth 16 "$URL/3" ||
		fail "tcq-bench load on the delay LUN failed"
	ok "LUN 3 (delay) takes a queue-depth 16 random load"
}

lun4_delay_over_created_file_works() {
	expect 4 "$G
$G" write 7 3 5e fua read 7 3 5e
	[ -f "$TEST_TMP/delayed.img" ] || fail "delay:base=aio did not create its file"
	ok "LUN 4 (delay over a created file) works"
}

CHECKS=(
	@faults
	lun0_fault_range_answers_medium_error
	lun1_enospc_answers_space_allocation_failed
	lun2_plain_ram_unaffected
	lun3_delay_serves_data
	lun3_delay_takes_depth16_load
	lun4_delay_over_created_file_works
)
run_checks "$@"
