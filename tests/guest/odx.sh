#!/bin/bash
# ODX through the Linux kernel's disk, in the qemu guest logged in to a
# tcqd with two LUNs (tests/guest/guest.sh): ddptctl (ddpt's ODX helper)
# reads the third-party copy VPD page's limits; POPULATE TOKEN and
# RECEIVE ROD TOKEN INFORMATION on LUN 0's disk, then WRITE USING TOKEN on
# LUN 1's, sent through SG_IO with sg_raw, copy 2 MiB that compare equal
# in the guest and in the backing files; and a token whose source range
# the guest wrote in between is refused with INVALID TOKEN OPERATION,
# TOKEN CANCELLED (SBC-4), the destination unchanged. (Why not ddpt
# --odx itself: below.)
# shellcheck disable=SC2317
# shellcheck source=tests/integration/lib.sh
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"
# shellcheck source=tests/guest/guest.sh
. "$top_srcdir/tests/guest/guest.sh"

IQN=iqn.2026-11.org.tcq:guest-odx
MIB=16
SRC=
DST=

fixture_odx() {
	dd if=/dev/urandom of="$TEST_TMP/lun0.img" bs=1M count="$MIB" status=none ||
		fail "cannot fill lun0.img"
	tcqd_conf "$TEST_TMP/tcqd.conf" "$IQN" "${MIB}M"
	printf '\n[lun %s 1]\npath = %s\nsize = %sM\nblock_size = 512\ncreate = yes\n' \
		"$IQN" "$TEST_TMP/lun1.img" "$MIB" >>"$TEST_TMP/tcqd.conf"
	start_tcqd -c "$TEST_TMP/tcqd.conf"
	guest_boot "$TCQD_PORT" "$IQN"
	guest_login "$IQN"
}

teardown_odx() {
	guest_stop || fail "the guest did not power off by itself"
	stop_tcqd
}

# ddpt_must WHAT [-t SECS] SCRIPT: as guest_must, its output in the
# failure (ddpt says what the target answered).
ddpt_must() {
	local what=$1
	shift
	guest_do "$@" && return 0
	say "ddpt said: $GUEST_STDOUT $GUEST_STDERR"
	fail "$what: status $GUEST_RC: $(tail -n 3 <<<"$GUEST_STDOUT" | paste -sd ';' -)"
}

need_disks() {
	guest_disk 0 || fail "no disk for LUN 0"
	SRC=$GUEST_DISK
	guest_disk 1 || fail "no disk for LUN 1"
	DST=$GUEST_DISK
}

# sums DISK SKIP COUNT: sha256 of COUNT 512-byte blocks of /dev/DISK from
# SKIP, read with O_DIRECT in the guest, into SUM.
sums() {
	guest_must "read $1" "dd if=/dev/$1 bs=512 skip=$2 count=$3 iflag=direct 2>/dev/null | sha256sum"
	SUM=${GUEST_STDOUT%% *}
}


# ddpt 0.97 (Debian 12) cannot drive ODX as such: it turns every skip=
# and seek= (given or not) into an LBA,NUM list, whose range
# descriptors it writes one byte early (do_pop_tok and do_wut start them
# at byte 15 and 535, not 16 and 536), and without one it asks for
# tokens of zero blocks. So ddptctl reads tcqd's third-party copy VPD
# page as ddpt does, and sg_raw (sg3-utils) sends the CDBs, through the
# same kernel path (SG_IO on the disk).

# oct HEX: the bytes as printf octal escapes (busybox printf).
oct() {
	local h=$1 i
	for ((i = 0; i < ${#h}; i += 2)); do
		printf '\\%03o' "0x${h:i:2}"
	done
}

ddptctl_reads_the_odx_limits() {
	need_disks
	ddpt_must "ddptctl --info" "ddptctl --info /dev/$SRC 2>&1"
	say "ddptctl: $GUEST_STDOUT"
	local want
	for want in "Maximum Range Descriptors: 64" \
		"Maximum Inactivity Timeout: 600 seconds" \
		"Default Inactivity Timeout: 60 seconds"; do
		grep -q "$want" <<<"$GUEST_STDOUT" ||
			fail "ddptctl --info does not show '$want' (VPD page 8Fh)"
	done
	ok "ddptctl --info reads the Block Device ROD Token Limits (64 ranges, 600 s, 60 s)"
}

# token LBA BLOCKS LIST: POPULATE TOKEN of LUN 0's blocks, then RECEIVE
# ROD TOKEN INFORMATION (the same I_T nexus); the token in /tmp/tok.bin.
token() {
	local pl
	pl="001e000000000000000000000000""0010$(printf '%016x%08x' "$1" "$2")00000000"
	ddpt_must "POPULATE TOKEN" "printf '$(oct "$pl")' >/tmp/pt.bin &&
		sg_raw -s 32 -i /tmp/pt.bin /dev/$SRC 83 10 00 00 00 00 00 00 00 $(printf '%02x' "$3") 00 00 00 20 00 00 2>&1 &&
		sg_raw -r 1024 -o /tmp/rrti.bin /dev/$SRC 84 07 00 00 00 $(printf '%02x' "$3") 00 00 00 00 00 00 04 00 00 00 2>&1 &&
		dd if=/tmp/rrti.bin of=/tmp/tok.bin bs=1 skip=38 count=512 2>/dev/null"
}

# wut LBA BLOCKS LIST: WRITE USING TOKEN /tmp/tok.bin to LUN 1's blocks;
# its status in GUEST_RC, sg_raw's words in GUEST_STDOUT.
wut() {
	local hd=02260000000000000000000000000000 tl
	tl="0000000000000010$(printf '%016x%08x' "$1" "$2")00000000"
	guest_do -t 60 "printf '$(oct "$hd")' >/tmp/wut.bin && cat /tmp/tok.bin >>/tmp/wut.bin &&
		printf '$(oct "$tl")' >>/tmp/wut.bin &&
		sg_raw -s 552 -i /tmp/wut.bin /dev/$DST 83 11 00 00 00 00 00 00 00 $(printf '%02x' "$3") 00 00 02 28 00 00 2>&1"
}

token_copy_through_the_kernel_disk() {
	local a
	need_disks
	token 0 4096 1
	wut 8192 4096 2
	[ "$GUEST_RC" = 0 ] || fail "WRITE USING TOKEN: status $GUEST_RC: $GUEST_STDOUT"
	sums "$SRC" 0 4096
	a=$SUM
	sums "$DST" 8192 4096
	[ "$a" = "$SUM" ] || fail "LUN 1's blocks 8192.. differ from LUN 0's 0.."
	cmp -s <(dd if="$TEST_TMP/lun0.img" bs=512 count=4096 status=none) \
		<(dd if="$TEST_TMP/lun1.img" bs=512 skip=8192 count=4096 status=none) ||
		fail "the backing files differ"
	ok "POPULATE TOKEN on /dev/$SRC, WRITE USING TOKEN on /dev/$DST (SG_IO): 2 MiB equal in the guest and the files"
}

token_refused_after_the_source_is_written() {
	local before
	need_disks
	token 4096 2048 3
	sums "$DST" 0 2048
	before=$SUM
	guest_must "write into the source range" "dd if=/dev/urandom of=/dev/$SRC bs=512 seek=5000 count=1 oflag=direct 2>&1"
	wut 0 2048 4
	say "sg_raw (status $GUEST_RC): $GUEST_STDOUT"
	[ "$GUEST_RC" != 0 ] || fail "WRITE USING TOKEN after the write succeeded"
	grep -qi "token cancelled" <<<"$GUEST_STDOUT" ||
		fail "not INVALID TOKEN OPERATION, TOKEN CANCELLED: $GUEST_STDOUT"
	sums "$DST" 0 2048
	[ "$before" = "$SUM" ] || fail "the refused copy changed the destination"
	ok "after the guest wrote a block of its source, the token is refused (TOKEN CANCELLED), LUN 1 unchanged"
}

CHECKS=(
	@odx
	ddptctl_reads_the_odx_limits
	token_copy_through_the_kernel_disk
	token_refused_after_the_source_is_written
)
run_checks "$@"
