#!/bin/bash
# Discovery: iscsi-ls (SendTargets, then a login per target and REPORT
# LUNS) lists what tcqd exports, first with --export, then with a config
# file holding two targets.
# shellcheck source=tests/integration/lib.sh
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

need_tool iscsi-ls

# check_listed OUTPUT IQN: the target appears with LUN 0 as a disk.
check_listed() {
	local out=$1 iqn=$2 block
	grep -qF "Target:$iqn Portal:127.0.0.1:$TCQD_PORT" <<<"$out" ||
		fail "target $iqn not listed on port $TCQD_PORT"
	# The Lun lines follow their Target line.
	block=$(awk -v t="Target:$iqn " 'index($0, t) == 1 {on = 1; next}
		/^Target:/ {on = 0} on' <<<"$out")
	grep -Eq '^Lun:0 +Type:DIRECT_ACCESS' <<<"$block" ||
		fail "no 'Lun:0 Type:DIRECT_ACCESS' line under $iqn"
	ok "$iqn listed with LUN 0"
}

# 1. One target from the command line.
IQN1=iqn.2026-11.org.tcq:discovery
start_tcqd --iqn "$IQN1"
[ "$TCQD_IQN" = "$IQN1" ] || fail "URL names $TCQD_IQN, expected $IQN1"
run iscsi-ls -i "$INITIATOR" -s "iscsi://127.0.0.1:$TCQD_PORT" ||
	fail "iscsi-ls failed"
check_listed "$OUT" "$IQN1"
[ "$(grep -c '^Target:' <<<"$OUT")" -eq 1 ] ||
	fail "expected exactly one target"
stop_tcqd

# 2. Two targets from a configuration file.
IQN_A=iqn.2026-11.org.tcq:disc-a
IQN_B=iqn.2026-11.org.tcq:disc-b
make_lun "$TEST_TMP/a.img" 32M
make_lun "$TEST_TMP/b.img" 48M
cat >"$TEST_TMP/tcqd.conf" <<CONF
[global]
listen = 127.0.0.1:0

[target $IQN_A]
alias = disc-a

[lun $IQN_A 0]
path = $TEST_TMP/a.img
size = 32M

[target $IQN_B]
alias = disc-b

[lun $IQN_B 0]
path = $TEST_TMP/b.img
size = 48M
CONF
start_tcqd -c "$TEST_TMP/tcqd.conf"
run iscsi-ls -i "$INITIATOR" -s "iscsi://127.0.0.1:$TCQD_PORT" ||
	fail "iscsi-ls failed (config file)"
check_listed "$OUT" "$IQN_A"
check_listed "$OUT" "$IQN_B"
[ "$(grep -c '^Target:' <<<"$OUT")" -eq 2 ] ||
	fail "expected exactly two targets"
stop_tcqd

pass "all checks passed"
