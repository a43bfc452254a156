#!/bin/bash
# The Linux kernel's own iSCSI initiator (iscsi_tcp, driven by open-iscsi's
# iscsid and iscsiadm) in a qemu guest against a tcqd this test starts on
# a free loopback port (tests/guest/guest.sh): SendTargets discovery and
# login, the LUN as a SCSI disk of the configured size, O_DIRECT writes
# that land byte for byte in the backing file (and host writes that the
# guest reads), and logout taking the disk away. One boot for all checks.
# The checks run by name (checks.sh):
# shellcheck disable=SC2317
# shellcheck source=tests/integration/lib.sh
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"
# shellcheck source=tests/guest/guest.sh
. "$top_srcdir/tests/guest/guest.sh"

TCQCTL=${TCQCTL:-$top_builddir/tcqctl}
need_built "$TCQCTL"
need_tool jq
IQN=iqn.2026-11.org.tcq:guest-disk
SOCK=$TEST_TMP/ctl.sock
LUN_SIZE=64M
LUN_BYTES=$((64 * 1024 * 1024))
DISK=

# sessions_listed N: tcqctl lists N sessions of the guest's initiator.
sessions_listed() {
	local out
	out=$(tc "$TCQCTL" -s "$SOCK" --json sessions 2>&1) || return 1
	[ "$(jq --arg i "$GUEST_INITIATOR" \
		'[.sessions[] | select(.initiator == $i)] | length' <<<"$out")" = "$1" ]
}

fixture_guest() {
	tcqd_conf "$TEST_TMP/tcqd.conf" "$IQN" "$LUN_SIZE" "ctl = $SOCK"
	start_tcqd -c "$TEST_TMP/tcqd.conf"
	guest_boot "$TCQD_PORT" "$IQN"
}

teardown_guest() {
	guest_stop || fail "the guest did not power off by itself"
	stop_tcqd
}

kernel_initiator_logs_in() {
	guest_login "$IQN"
	ok "discovery lists $IQN; the kernel initiator logged in ($GUEST_SESSION)"
	wait_until 50 sessions_listed 1 ||
		fail "tcqctl sessions does not list $GUEST_INITIATOR"
	ok "tcqd lists the session of $GUEST_INITIATOR"
}

# The disk of LUN 0 under the session, with the configured size. (What a
# check sets dies with it: each runs in a subshell; the next finds the
# disk again with need_disk.)
disk_appears_with_lun_size() {
	guest_disk 0 || fail "no disk for LUN 0 under $GUEST_SESSION within 10 s"
	DISK=$GUEST_DISK
	ok "LUN 0 is /dev/$DISK"
	guest_must "size of $DISK" "cat /sys/block/$DISK/size /sys/block/$DISK/queue/logical_block_size"
	read -r -d '' sectors bs <<<"$GUEST_STDOUT" || true
	[ "$sectors" = $((LUN_BYTES / 512)) ] ||
		fail "/sys/block/$DISK/size is $sectors sectors, expected $((LUN_BYTES / 512)) ($LUN_SIZE)"
	[ "$bs" = 512 ] || fail "logical block size $bs, expected 512"
	ok "/dev/$DISK has $sectors sectors of 512 bytes ($LUN_SIZE)"
}

need_disk() {
	[ -n "$DISK" ] || { guest_disk 0 && DISK=$GUEST_DISK; } ||
		fail "no disk for LUN 0 (the login check failed?)"
}

# A 4 MiB random pattern written with O_DIRECT at 8 MiB: the backing file
# holds it byte for byte, and an O_DIRECT read in the guest returns it.
direct_write_lands_in_backing_file() {
	local sum host
	need_disk
	guest_must "pattern written" "
		dd if=/dev/urandom of=/tmp/pat bs=1M count=4 2>/dev/null &&
		dd if=/tmp/pat of=/dev/$DISK bs=1M seek=8 oflag=direct conv=fsync 2>/dev/null &&
		sha256sum </tmp/pat"
	sum=${GUEST_STDOUT%% *}
	[ ${#sum} -eq 64 ] || fail "no checksum from the guest: $GUEST_STDOUT"
	host=$(dd if="$TEST_TMP/lun0.img" bs=1M skip=8 count=4 2>/dev/null | sha256sum)
	[ "${host%% *}" = "$sum" ] ||
		fail "the backing file at 8 MiB differs from what the guest wrote (guest $sum, host ${host%% *})"
	ok "4 MiB written with oflag=direct is in the backing file (sha256 $sum)"
	guest_must "pattern read back" \
		"dd if=/dev/$DISK bs=1M skip=8 count=4 iflag=direct 2>/dev/null | sha256sum"
	[ "${GUEST_STDOUT%% *}" = "$sum" ] ||
		fail "read back with iflag=direct: ${GUEST_STDOUT%% *}, wrote $sum"
	ok "read back with iflag=direct: the same bytes"
}

# The other way: the host writes the backing file, the guest reads it.
host_write_reads_in_guest() {
	local host
	need_disk
	head -c 1048576 /dev/urandom >"$TEST_TMP/pat2" || fail "no pattern"
	dd if="$TEST_TMP/pat2" of="$TEST_TMP/lun0.img" bs=1M seek=20 conv=notrunc,fsync \
		2>/dev/null || fail "cannot write the backing file"
	host=$(sha256sum <"$TEST_TMP/pat2")
	guest_must "read at 20 MiB" \
		"dd if=/dev/$DISK bs=1M skip=20 count=1 iflag=direct 2>/dev/null | sha256sum"
	[ "${GUEST_STDOUT%% *}" = "${host%% *}" ] ||
		fail "the guest reads ${GUEST_STDOUT%% *} at 20 MiB, the host wrote ${host%% *}"
	ok "1 MiB the host wrote reads the same in the guest"
}

logout_removes_disk() {
	need_disk
	guest_logout
	ok "logout: no session left in /sys/class/iscsi_session"
	guest_must "disk gone" -t 15 "
		for i in \$(seq 100); do [ -e /sys/block/$DISK ] || exit 0; sleep 0.1; done
		echo /sys/block/$DISK still there; exit 1"
	ok "/sys/block/$DISK is gone"
	wait_until 50 sessions_listed 0 || fail "tcqd still lists the guest's session"
	ok "tcqd lists no session of the guest any more"
}

CHECKS=(
	@guest
	kernel_initiator_logs_in
	disk_appears_with_lun_size
	direct_write_lands_in_backing_file
	host_write_reads_in_guest
	logout_removes_disk
)
run_checks "$@"
