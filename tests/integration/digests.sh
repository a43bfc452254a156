#!/bin/bash
# CRC32C header and data digests at the PDU level (tests/integration/
# digests.c): a session with both digests moves data with every digest
# checked; a corrupted header digest or data digest (Data-Out and
# immediate data) drops the connection and the write is not executed.
# Then with header_digest = deny, and with data_digest = deny: the
# target grants only the other digest, and framing with one digest works.
# shellcheck source=tests/integration/lib.sh
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

DIGESTS=${DIGESTS:-$top_builddir/tests/integration/digests}
[ -x "$DIGESTS" ] || fail "digests not built at $DIGESTS (make check builds it)"

IQN=iqn.2026-11.org.tcq:digests
make_lun "$TEST_TMP/lun0.img" 16M

# run_digests HEADER DATA EXPECT: tcqd with header_digest = HEADER and
# data_digest = DATA, checked by digests (EXPECT: the digests granted).
run_digests() {
	local conf=$TEST_TMP/tcqd-$1-$2.conf rc=0
	cat >"$conf" <<CONF
[global]
listen = 127.0.0.1:0
threads = 2
header_digest = $1
data_digest = $2

[target $IQN]
[lun $IQN 0]
path = $TEST_TMP/lun0.img
block_size = 512
CONF
	start_tcqd -c "$conf"
	run "$DIGESTS" "$TCQD_HOST" "$TCQD_PORT" "$TCQD_IQN" "$3" || rc=$?
	[ "$rc" -eq 124 ] && fail "digests timed out"
	[ "$rc" -eq 0 ] || fail "header_digest=$1 data_digest=$2: digests reported failures (status $rc)"
	tcqd_alive
	ok "header_digest=$1 data_digest=$2: $3 granted, and every check passed"
	grep -q 'digest error' "$TCQD_LOG" ||
		fail "tcqd logged no digest error for the corrupted PDUs"
	ok "tcqd logged the digest errors"
	stop_tcqd
}

run_digests allow allow CRC32C,CRC32C
run_digests deny allow None,CRC32C
run_digests allow deny CRC32C,None

pass "all checks passed"
