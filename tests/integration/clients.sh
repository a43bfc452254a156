#!/bin/bash
# libiscsi's utilities and qemu-io against tcqd: standard and VPD
# INQUIRY, READ CAPACITY(16) for 512- and 4096-byte blocks, and a
# read-only LUN that refuses writes.
# shellcheck source=tests/integration/lib.sh
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

need_tool iscsi-inq iscsi-readcapacity16 qemu-io
SCSICMD=${SCSICMD:-$top_builddir/tests/integration/scsicmd}
need_built "$SCSICMD"

# expect PATTERN WHAT: $OUT must match the extended regex.
expect() {
	grep -Eq -- "$1" <<<"$OUT" || fail "$2 (no line matching /$1/)"
	ok "$2"
}

# readcap BLOCK_SIZE SIZE_BYTES: READ CAPACITY(16) reports exactly these.
readcap() {
	local bs=$1 bytes=$2
	run iscsi-readcapacity16 -i "$INITIATOR" "$TCQD_URL" ||
		fail "iscsi-readcapacity16 failed"
	expect "^LOGICAL BLOCK LENGTH IN BYTES:$bs\$" "block length $bs"
	expect "^RETURNED LOGICAL BLOCK ADDRESS:$((bytes / bs - 1))\$" \
		"last LBA $((bytes / bs - 1))"
	expect "^Total size:$bytes\$" "total size $bytes"
	run iscsi-readcapacity16 -i "$INITIATOR" -s "$TCQD_URL" ||
		fail "iscsi-readcapacity16 -s failed"
	[ "$OUT" = "$bytes" ] || fail "size-only output '$OUT' != $bytes"
	ok "size-only output is $bytes"
}

# inquiry: standard INQUIRY data of a TCQ disk.
inquiry() {
	run iscsi-inq -i "$INITIATOR" "$TCQD_URL" || fail "standard INQUIRY failed"
	expect '^Vendor:TCQ( |$)' "vendor is TCQ"
	expect '^Peripheral Device Type:DIRECT_ACCESS' "device type is a disk"
	expect '^Peripheral Qualifier:CONNECTED' "peripheral qualifier: connected"
}

# vpd PAGE: INQUIRY of a VPD page (decimal: Debian's iscsi-inq parses -c
# with atoi()).
vpd() {
	run iscsi-inq -i "$INITIATOR" -e 1 -c "$1" "$TCQD_URL" ||
		fail "INQUIRY VPD $1 failed"
}

# ---- 64 MiB, 512-byte blocks ---------------------------------------------
fixture_b512() {
	make_lun "$TEST_TMP/lun512.img" 64M
	start_tcqd --export "$TEST_TMP/lun512.img" --size 64M --block-size 512 \
		--iqn iqn.2026-11.org.tcq:clients
}
b512_standard_inquiry() { inquiry; }
b512_vpd_supported_pages_list_80_83_86() {
	vpd 0
	expect '^Page:0x80' "supported pages list 0x80"
	expect '^Page:0x83' "supported pages list 0x83"
	expect '^Page:0x86' "supported pages list 0x86"
}
b512_vpd_80_unit_serial_number_set() {
	vpd 128
	expect '^Unit Serial Number:\[ *[^] ][^]]*\]' "unit serial number is set"
}
b512_vpd_83_designates_the_logical_unit() {
	vpd 131
	expect '^DEVICE DESIGNATOR #0' "at least one designator"
	expect '^Association:\(0\)' "a designator of the logical unit"
	expect '^Designator Type:\((1|2|3|8)\)' \
		"an EUI-64, NAA, T10 or SCSI name designator"
}
b512_read_capacity16_exact() { readcap 512 $((64 << 20)); }

# ---- 64 MiB, 4096-byte blocks --------------------------------------------
fixture_b4k() {
	make_lun "$TEST_TMP/lun4k.img" 64M
	start_tcqd --export "$TEST_TMP/lun4k.img" --size 64M --block-size 4096 \
		--iqn iqn.2026-11.org.tcq:clients-4k
}
b4k_read_capacity16_exact() { readcap 4096 $((64 << 20)); }
b4k_standard_inquiry() { inquiry; }

# ---- read-only LUN -------------------------------------------------------
fixture_ro() {
	make_lun "$TEST_TMP/ro.img" 16M
	printf 'tcq-readonly-marker' |
		dd of="$TEST_TMP/ro.img" conv=notrunc status=none
	cp --sparse=always "$TEST_TMP/ro.img" "$TEST_TMP/ro.orig"
	start_tcqd --export "$TEST_TMP/ro.img" --size 16M --read-only \
		--iqn iqn.2026-11.org.tcq:clients-ro
}

# The positive control: reads work, so a failing write means the refusal.
ro_lun_readable() {
	run qemu-io -r -f raw -c 'read 0 4k' "$TCQD_URL" ||
		fail "qemu-io read from the read-only LUN failed"
	expect '^read 4096/4096 bytes' "read-only LUN is readable"
}

# qemu-io opens the device for writing only if MODE SENSE has WP clear.
ro_lun_qemu_io_write_refused() {
	local rc=0
	run qemu-io -f raw -c 'write -P 0x5a 0 4k' "$TCQD_URL" || rc=$?
	grep -q '^wrote ' <<<"$OUT" && fail "write to a read-only LUN succeeded"
	[ "$rc" -ne 0 ] || fail "qemu-io exited 0"
	expect 'LUN is write protected' "qemu-io sees the write protection (WP)"
}

# SBC-3: a write to a write-protected LUN ends in DATA PROTECT, WRITE
# PROTECTED (7/27h/00h).
ro_lun_write_answers_data_protect() {
	run "$SCSICMD" "$TCQD_URL" write 0 8 5a fua || fail "scsicmd failed"
	[ "$OUT" = "CHECK CONDITION key=0x7 asc=0x27 ascq=0x00" ] ||
		fail "WRITE(16) answered '$OUT'"
	ok "WRITE(16): DATA PROTECT, WRITE PROTECTED"
}

ro_backing_file_unchanged() {
	cmp "$TEST_TMP/ro.img" "$TEST_TMP/ro.orig" ||
		fail "the read-only backing file changed"
	ok "backing file unchanged"
}

CHECKS=(
	@b512
	b512_standard_inquiry
	b512_vpd_supported_pages_list_80_83_86
	b512_vpd_80_unit_serial_number_set
	b512_vpd_83_designates_the_logical_unit
	b512_read_capacity16_exact
	@b4k
	b4k_read_capacity16_exact
	b4k_standard_inquiry
	@ro
	ro_lun_readable
	ro_lun_qemu_io_write_refused
	ro_lun_write_answers_data_protect
	ro_backing_file_unchanged
)
run_checks "$@"
