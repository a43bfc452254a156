#!/bin/bash
# Discovery: iscsi-ls (SendTargets, then a login per target and REPORT
# LUNS) lists what tcqd exports, first with --export, then with a config
# file holding two targets.
# shellcheck source=tests/integration/lib.sh
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

need_tool iscsi-ls
IQN1=iqn.2026-11.org.tcq:discovery
IQN_A=iqn.2026-11.org.tcq:disc-a
IQN_B=iqn.2026-11.org.tcq:disc-b

# discover: iscsi-ls of the running tcqd into $OUT.
discover() {
	run iscsi-ls -i "$INITIATOR" -s "iscsi://127.0.0.1:$TCQD_PORT" ||
		fail "iscsi-ls failed"
}

# listed IQN: the target appears on our portal with LUN 0 as a disk.
listed() {
	local iqn=$1 block
	discover
	grep -qF "Target:$iqn Portal:127.0.0.1:$TCQD_PORT,1" <<<"$OUT" ||
		fail "target $iqn not listed on port $TCQD_PORT"
	# The Lun lines follow their Target line.
	block=$(awk -v t="Target:$iqn " 'index($0, t) == 1 {on = 1; next}
		/^Target:/ {on = 0} on' <<<"$OUT")
	grep -Eq '^Lun:0 +Type:DIRECT_ACCESS' <<<"$block" ||
		fail "no 'Lun:0 Type:DIRECT_ACCESS' line under $iqn"
	ok "$iqn listed with LUN 0"
}

# targets N: SendTargets names exactly N targets.
targets() {
	discover
	[ "$(grep -c '^Target:' <<<"$OUT")" -eq "$1" ] ||
		fail "expected exactly $1 target(s)"
	ok "exactly $1 target(s) listed"
}

# ---- one target from the command line --------------------------------------
fixture_one() {
	start_tcqd --iqn "$IQN1"
	[ "$TCQD_IQN" = "$IQN1" ] || fail "URL names $TCQD_IQN, expected $IQN1"
}
one_target_listed_with_lun0() { listed "$IQN1"; }
one_target_nothing_else_listed() { targets 1; }

# ---- two targets from a configuration file ---------------------------------
fixture_two() {
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
}
config_first_target_listed_with_lun0() { listed "$IQN_A"; }
config_second_target_listed_with_lun0() { listed "$IQN_B"; }
config_nothing_else_listed() { targets 2; }

CHECKS=(
	@one
	one_target_listed_with_lun0
	one_target_nothing_else_listed
	@two
	config_first_target_listed_with_lun0
	config_second_target_listed_with_lun0
	config_nothing_else_listed
)
run_checks "$@"
