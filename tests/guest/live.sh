#!/bin/bash
# Live management seen by the Linux kernel initiator (tests/guest/guest.sh):
# with the guest logged in to a target with LUN 0, tcqctl adds LUN 1 (a
# SCSI host scan finds it; the kernel logs the unit attention REPORTED
# LUNS DATA HAS CHANGED), resizes it (a device rescan shows the new size;
# CAPACITY DATA HAS CHANGED), removes it (its reads fail with LOGICAL UNIT
# NOT SUPPORTED until the disk is deleted, as udev would), and reloads the
# configuration (a new queue_depth applies; the session stays the same,
# with no reconnect). The checks run in that order: remove comes before
# reload so the reloaded file and the live LUNs agree.
#
# In make check; by hand: cd build && bash ../tests/guest/live.sh
# The checks run by name (checks.sh):
# shellcheck disable=SC2317
# shellcheck source=tests/integration/lib.sh
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"
# shellcheck source=tests/guest/guest.sh
. "$top_srcdir/tests/guest/guest.sh"

TCQCTL=${TCQCTL:-$top_builddir/tcqctl}
need_built "$TCQCTL"
need_tool jq
IQN=iqn.2026-11.org.tcq:guest-live
SOCK=$TEST_TMP/ctl.sock
CONF=$TEST_TMP/tcqd.conf
DISK0=

# ctl ARGS...: tcqctl on this tcqd's control socket ($OUT, status).
ctl() { run "$TCQCTL" -s "$SOCK" "$@"; }
# ctl_must WHAT ARGS...
ctl_must() {
	local what=$1
	shift
	ctl "$@" || fail "$what: tcqctl $* failed (status $?): $(head -n 2 <<<"$OUT" | paste -sd ';' -)"
	ok "$what: tcqctl $*"
}

# dmesg_has PATTERN WHAT: the guest's kernel logged PATTERN (grep -E -i),
# within 5 s.
dmesg_has() {
	guest_do -t 10 "
		for i in \$(seq 50); do
			dmesg | grep -Ei -m1 -- '$1' && exit 0
			sleep 0.1
		done
		exit 1" || fail "$2: no '$1' in the guest's dmesg"
	ok "$2: dmesg: $GUEST_STDOUT"
}

# disk_of LUN: its disk in the guest (the variable DISK), or fail.
disk_of() {
	guest_disk "$1" 5 || fail "no disk of LUN $1 in the guest${2:+ ($2)}"
	DISK=$GUEST_DISK
}

# sectors_are DISK N: /sys/block/DISK/size reaches N within 5 s.
sectors_are() {
	guest_do -t 10 "
		for i in \$(seq 50); do
			[ \"\$(cat /sys/block/$1/size)\" = $2 ] && exit 0
			sleep 0.1
		done
		cat /sys/block/$1/size; exit 1" ||
		fail "/sys/block/$1/size is $GUEST_STDOUT, expected $2"
	ok "/sys/block/$1 has $2 sectors"
}

# session_key: the guest's session as tcqd lists it (ISID and TSIH).
session_key() {
	local out
	out=$(tc "$TCQCTL" -s "$SOCK" --json sessions) || fail "tcqctl sessions failed"
	jq -r --arg i "$GUEST_INITIATOR" \
		'.sessions[] | select(.initiator == $i) | "\(.isid)/\(.tsih)"' <<<"$out"
}

fixture_live() {
	tcqd_conf "$CONF" "$IQN" 64M "ctl = $SOCK"
	start_tcqd -c "$CONF"
	guest_boot "$TCQD_PORT" "$IQN"
	guest_login "$IQN"
	guest_disk 0 || fail "no disk of LUN 0 after login"
	DISK0=$GUEST_DISK
}

teardown_live() {
	guest_stop || fail "the guest did not power off by itself"
	stop_tcqd
}

lun_add_appears_after_host_scan() {
	local host
	ctl_must "LUN 1 added" lun add "$IQN/1" "path=$TEST_TMP/lun1.img" size=16M create=yes
	# The unit attention comes with the next command to the LUN the
	# initiator has: a read of LUN 0.
	guest_must "read of LUN 0" "dd if=/dev/$DISK0 of=/dev/null bs=4k count=1 iflag=direct"
	dmesg_has 'LUN assignments on this target have changed|reported luns data has changed' \
		"unit attention 3F/0E"
	guest_must "SCSI host of $GUEST_SESSION" \
		"d=\$(readlink -f /sys/class/iscsi_session/$GUEST_SESSION/device); d=\${d%/*}; echo \${d##*/}"
	host=$GUEST_STDOUT
	guest_must "scan of $host" "echo '- - -' >/sys/class/scsi_host/$host/scan"
	disk_of 1 "after the scan of $host"
	ok "LUN 1 is /dev/$DISK after the scan"
	sectors_are "$DISK" $((16 * 2048))
}

lun_resize_shows_after_rescan() {
	ctl_must "LUN 1 resized" lun resize "$IQN/1" 32M
	disk_of 1 "lun add failed?"
	guest_must "rescan of $DISK" "echo 1 >/sys/block/$DISK/device/rescan"
	sectors_are "$DISK" $((32 * 2048))
	dmesg_has 'capacity change|capacity data has changed' "unit attention 2A/09"
}

lun_remove_fails_io_then_delete() {
	ctl_must "LUN 1 removed" lun remove "$IQN/1"
	disk_of 1 "lun add failed?"
	if guest_do -t 30 "dd if=/dev/$DISK of=/dev/null bs=4k count=1 iflag=direct"; then
		fail "a read of /dev/$DISK (removed LUN 1) succeeded"
	fi
	[ "$GUEST_RC" != 255 ] || fail "the guest did not answer the read of /dev/$DISK"
	ok "a read of /dev/$DISK fails (status $GUEST_RC)"
	dmesg_has 'logical unit not supported' "sense 25/00"
	guest_must "delete of $DISK" "echo 1 >/sys/block/$DISK/device/delete"
	guest_must "$DISK gone" -t 10 "
		for i in \$(seq 50); do [ -e /sys/block/$DISK ] || exit 0; sleep 0.1; done
		exit 1"
	ok "/sys/block/$DISK is gone after delete"
}

reload_keeps_session() {
	local before after errs
	before=$(session_key)
	[ -n "$before" ] || fail "tcqd lists no session of the guest"
	guest_must "connection errors so far" \
		"dmesg | grep -Eic 'conn error|session recovery|reinstat|connection[0-9:]* .*(error|fail)' || true"
	errs=$GUEST_STDOUT
	ctl --json luns || fail "tcqctl luns failed"
	jq -e '.luns[0].queue_depth != 16' <<<"$OUT" >/dev/null ||
		fail "queue_depth is 16 before the reload: the check would prove nothing"
	printf 'queue_depth = 16\n' >>"$CONF"	# into [lun IQN 0], the last section
	ctl_must "configuration reloaded" reload
	ctl --json luns || fail "tcqctl luns failed"
	jq -e '.luns[0].queue_depth == 16' <<<"$OUT" >/dev/null ||
		fail "queue_depth is not 16 after the reload"
	ok "the reload applied queue_depth = 16"
	guest_must "I/O after reload" "
		dd if=/dev/urandom of=/tmp/p bs=64k count=4 2>/dev/null &&
		dd if=/tmp/p of=/dev/$DISK0 bs=64k seek=16 oflag=direct 2>/dev/null &&
		dd if=/dev/$DISK0 bs=64k skip=16 count=4 iflag=direct 2>/dev/null | cmp - /tmp/p"
	ok "I/O after the reload works"
	after=$(session_key)
	[ "$after" = "$before" ] || fail "the session changed: $before before, $after after"
	ok "tcqd lists the same session (ISID/TSIH $after)"
	guest_must "session state" "cat /sys/class/iscsi_session/$GUEST_SESSION/state"
	[ "$GUEST_STDOUT" = LOGGED_IN ] || fail "$GUEST_SESSION is $GUEST_STDOUT"
	guest_must "connection errors now" \
		"dmesg | grep -Eic 'conn error|session recovery|reinstat|connection[0-9:]* .*(error|fail)' || true"
	[ "$GUEST_STDOUT" = "$errs" ] || fail "the guest's kernel logged connection errors during the reload"
	ok "$GUEST_SESSION still logged in, no reconnect in dmesg"
}

CHECKS=(
	@live
	lun_add_appears_after_host_scan
	lun_resize_shows_after_rescan
	lun_remove_fails_io_then_delete
	reload_keeps_session
)
run_checks "$@"
