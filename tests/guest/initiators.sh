#!/bin/bash
# A per-initiator LUN map seen by the Linux kernel initiator
# (tests/guest/guest.sh; tcqd.conf(5) [initiator TARGET INITIATOR-NAME]):
# the target has LUNs 0, 1 and 2 (16, 24 and 32 MiB, each its own data);
# the guest's initiator name has the map "luns = 2:0,1:1:ro". After
# login the kernel's scan (REPORT LUNS) finds exactly two disks: its LUN
# 0 is target LUN 2 (its size and data), its LUN 1 is target LUN 1, which
# the kernel makes read-only (MODE SENSE WP=1: /sys/block/X/ro is 1) and
# refuses to write; target LUN 0 appears nowhere.
#
# In make check; by hand: cd build && bash ../tests/guest/initiators.sh
# shellcheck disable=SC2317
# shellcheck source=tests/integration/lib.sh
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"
# shellcheck source=tests/guest/guest.sh
. "$top_srcdir/tests/guest/guest.sh"

IQN=iqn.2026-11.org.tcq:guest-initiators
CONF=$TEST_TMP/tcqd.conf
MIB=(16 24 32)			# sizes of LUNs 0, 1 and 2

fixture_map() {
	local n
	{
		printf '[global]\nlisten = 127.0.0.1:0\nthreads = 2\n'
		printf '[target %s]\n' "$IQN"
		for n in 0 1 2; do
			make_lun "$TEST_TMP/lun$n.img" "${MIB[$n]}M"
			# each LUN's first block says which it is
			printf 'tcq target LUN %d\n' "$n" |
				dd of="$TEST_TMP/lun$n.img" conv=notrunc status=none
			printf '[lun %s %d]\npath = %s\n' "$IQN" "$n" "$TEST_TMP/lun$n.img"
		done
		printf '[initiator %s %s]\nluns = 2:0,1:1:ro\n' "$IQN" "$GUEST_INITIATOR"
	} >"$CONF"
	start_tcqd -c "$CONF"
	guest_boot "$TCQD_PORT" "$IQN"
	guest_login "$IQN"
	guest_disk 0 || fail "no disk of LUN 0 after login"
	guest_disk 1 || fail "no disk of LUN 1 after login"
}

teardown_map() {
	guest_stop || fail "the guest did not power off by itself"
	stop_tcqd
}

# disk_of LUN: DISK is the guest's disk of its LUN, or fail.
disk_of() {
	guest_disk "$1" 5 || fail "no disk of LUN $1 in the guest"
	DISK=$GUEST_DISK
}

# first_line DISK: what the disk's first block starts with (O_DIRECT).
first_line() {
	guest_must "read of $1" \
		"dd if=/dev/$1 bs=512 count=1 iflag=direct 2>/dev/null | head -n 1"
	FIRST=$GUEST_STDOUT
}

kernel_sees_exactly_the_map() {
	guest_must "the session's LUNs" "
		for d in /sys/class/iscsi_session/$GUEST_SESSION/device/target*/*:*:*:*; do
			[ -d \"\$d/block\" ] && echo \${d##*:}
		done | sort -n | paste -sd ' ' -"
	[ "$GUEST_STDOUT" = "0 1" ] ||
		fail "the kernel found the LUNs '$GUEST_STDOUT', expected '0 1'"
	ok "the kernel's scan found LUNs 0 and 1 only (REPORT LUNS of its map)"
}

lun0_is_target_lun2() {
	disk_of 0
	guest_must "size of $DISK" "cat /sys/block/$DISK/size"
	[ "$GUEST_STDOUT" = $((MIB[2] * 2048)) ] ||
		fail "/dev/$DISK has $GUEST_STDOUT sectors, target LUN 2 $((MIB[2] * 2048))"
	first_line "$DISK"
	[ "$FIRST" = "tcq target LUN 2" ] || fail "/dev/$DISK starts '$FIRST'"
	ok "its LUN 0 (/dev/$DISK) is target LUN 2: 32 MiB, its data"
	guest_must "write to $DISK" \
		"dd if=/dev/zero of=/dev/$DISK bs=4k count=1 seek=8 oflag=direct 2>&1"
	ok "and takes a write"
}

lun1_is_target_lun1_read_only() {
	disk_of 1
	guest_must "size of $DISK" "cat /sys/block/$DISK/size"
	[ "$GUEST_STDOUT" = $((MIB[1] * 2048)) ] ||
		fail "/dev/$DISK has $GUEST_STDOUT sectors, target LUN 1 $((MIB[1] * 2048))"
	first_line "$DISK"
	[ "$FIRST" = "tcq target LUN 1" ] || fail "/dev/$DISK starts '$FIRST'"
	ok "its LUN 1 (/dev/$DISK) is target LUN 1"
	guest_must "ro of $DISK" "cat /sys/block/$DISK/ro"
	[ "$GUEST_STDOUT" = 1 ] || fail "/sys/block/$DISK/ro is $GUEST_STDOUT"
	ok "the kernel made it read-only (MODE SENSE WP=1)"
	if guest_do -t 30 "dd if=/dev/zero of=/dev/$DISK bs=4k count=1 oflag=direct"; then
		fail "a write to read-only /dev/$DISK succeeded"
	fi
	ok "a write to it fails: $GUEST_STDERR"
	cmp -n 512 <(printf 'tcq target LUN 1\n'; head -c 495 /dev/zero) \
		"$TEST_TMP/lun1.img" || fail "target LUN 1 changed"
	ok "target LUN 1's data is unchanged"
}

CHECKS=(
	@map
	kernel_sees_exactly_the_map
	lun0_is_target_lun2
	lun1_is_target_lun1_read_only
)
run_checks "$@"
