#!/bin/bash
# The Linux kernel initiator (open-iscsi in the qemu guest,
# tests/guest/guest.sh) follows a login redirect (redirect =, tcqd.conf(5)):
# two tcqd serve target T, the first (the guest's 10.0.2.100:3260) with
# redirect = 10.0.2.101:3260, which the guest reaches as the second tcqd.
# iscsiadm discovers T on the first and logs in through it; the session's
# connection ends up on the second, whose disk appears (its size) and whose
# data reads and writes through it; the first logs the redirect and makes
# no session. The same with ,permanent set live; cleared live, the login
# through the first is served by the first.
# shellcheck disable=SC2317
# shellcheck source=tests/integration/lib.sh
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"
# shellcheck source=tests/integration/tcqd2.sh
. "$top_srcdir/tests/integration/tcqd2.sh"
# shellcheck source=tests/guest/guest.sh
. "$top_srcdir/tests/guest/guest.sh"

TCQCTL=${TCQCTL:-$top_builddir/tcqctl}
need_built "$TCQCTL"
T=iqn.2026-11.org.tcq:guest-moved
SOCK=$TEST_TMP/ctl.sock
MOVED=10.0.2.101:3260		# the second tcqd, as the guest reaches it
FIRST_BYTES=$((8 * 1024 * 1024))
SECOND_BYTES=$((16 * 1024 * 1024))

exit_hook() { guest_exit_hook; tcqd2_exit_hook; }
ctl() { run "$TCQCTL" --ctl "$SOCK" "$@"; }

# lun_conf NAME SIZE: LUN 0 of T on NAME.img, 1 MiB of random data at 0.
lun_conf() {
	make_lun "$TEST_TMP/$1.img" "$2"
	head -c 1048576 /dev/urandom |
		dd of="$TEST_TMP/$1.img" conv=notrunc status=none
	printf '[lun %s 0]\npath = %s\n' "$T" "$TEST_TMP/$1.img"
}
sum_of() { dd if="$1" bs=1M skip="$2" count=1 2>/dev/null | sha256sum | cut -c1-64; }

fixture_moved() {
	{
		printf '[global]\nlisten = 127.0.0.1:0\nthreads = 1\n\n[target %s]\n' "$T"
		lun_conf second 16M
	} >"$TEST_TMP/second.conf"
	tcqd2_start "$TEST_TMP/second.conf"
	{
		printf '[global]\nlisten = 127.0.0.1:0\nthreads = 2\nctl = %s\n' "$SOCK"
		printf '\n[target %s]\nredirect = %s\n' "$T" "$MOVED"
		lun_conf first 8M
	} >"$TEST_TMP/first.conf"
	start_tcqd -c "$TEST_TMP/first.conf"
	GUEST_FWD2=$MOVED=$TCQD2_PORT
	guest_boot "$TCQD_PORT" "$T"
}

teardown_moved() {
	guest_stop || fail "the guest did not power off by itself"
	tcqd2_stop
	stop_tcqd
}

# login_via_first: a fresh node record on the first's portal, and login.
login_via_first() {
	guest_must "old node records gone" "iscsiadm -m node -o delete 2>/dev/null; true"
	guest_login "$T"
	ok "iscsiadm discovered $T on $GUEST_PORTAL and logged in through it ($GUEST_SESSION)"
}

# connected_to ADDR: the session's connection is to ADDR (IP, port).
connected_to() {
	guest_must "connection address" "
		c=\$(ls -d /sys/class/iscsi_session/$GUEST_SESSION/device/connection*/iscsi_connection/connection* | head -n 1)
		echo \$(cat \$c/address):\$(cat \$c/port)"
	[ "$GUEST_STDOUT" = "$1" ] ||
		fail "the connection is to $GUEST_STDOUT, expected $1"
	ok "the session's connection is to $1"
}

# disk_of BYTES FILE: LUN 0's disk has BYTES and reads FILE's first MiB;
# 1 MiB written with O_DIRECT at 2 MiB lands in FILE.
disk_of() {
	local sum
	guest_disk 0 || fail "no disk for LUN 0 under $GUEST_SESSION within 10 s"
	guest_must "size" "cat /sys/block/$GUEST_DISK/size"
	[ "$GUEST_STDOUT" = $(($1 / 512)) ] ||
		fail "/dev/$GUEST_DISK has $GUEST_STDOUT sectors, expected $(($1 / 512))"
	ok "/dev/$GUEST_DISK has $(($1 / 512)) sectors (that LUN's size)"
	guest_must "read at 0" \
		"dd if=/dev/$GUEST_DISK bs=1M count=1 iflag=direct 2>/dev/null | sha256sum"
	[ "${GUEST_STDOUT%% *}" = "$(sum_of "$2" 0)" ] ||
		fail "the disk's first MiB is not $(basename "$2")'s"
	ok "its first MiB is $(basename "$2")'s, byte for byte"
	guest_must "write at 2 MiB" "
		dd if=/dev/urandom of=/tmp/pat bs=1M count=1 2>/dev/null &&
		dd if=/tmp/pat of=/dev/$GUEST_DISK bs=1M seek=2 oflag=direct conv=fsync 2>/dev/null &&
		sha256sum </tmp/pat"
	sum=${GUEST_STDOUT%% *}
	[ "$(sum_of "$2" 2)" = "$sum" ] ||
		fail "what the guest wrote at 2 MiB is not in $(basename "$2")"
	ok "1 MiB written with oflag=direct is in $(basename "$2")"
}

kernel_login_redirected_to_second() {
	login_via_first
	connected_to "$MOVED"
	log_has "redirected (0x0101, target moved temporarily) to $MOVED" \
		"the first logs the redirect"
	# (the discovery session before it is the first's own)
	if log_grep -qF ": logged in ($T)"; then
		fail "the first made a session of $T"
	fi
	ok "the first made no session of $T"
	grep -q ": logged in ($T)" "$TCQD2_LOG" || fail "the second logged no login of $T"
	ok "the second logged the login of $T"
}

disk_is_the_seconds() {
	disk_of "$SECOND_BYTES" "$TEST_TMP/second.img"
	guest_logout
	ok "logged out"
}

permanent_redirect_followed() {
	ctl target set "$T" "redirect=$MOVED,permanent" || fail "set: $OUT"
	login_via_first
	connected_to "$MOVED"
	log_has "redirected (0x0102, target moved permanently) to $MOVED" \
		"the first logs the permanent redirect"
	disk_of "$SECOND_BYTES" "$TEST_TMP/second.img"
	guest_logout
	ok "logged out"
}

cleared_login_served_by_first() {
	ctl target set "$T" redirect= || fail "clear: $OUT"
	login_via_first
	log_has ": logged in ($T)" "the first serves the login itself"
	disk_of "$FIRST_BYTES" "$TEST_TMP/first.img"
	guest_logout
	ok "logged out"
}

CHECKS=(
	@moved
	kernel_login_redirected_to_second
	disk_is_the_seconds
	permanent_redirect_followed
	cleared_login_served_by_first
)
run_checks "$@"
