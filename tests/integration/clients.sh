#!/bin/bash
# libiscsi's utilities and qemu-io against tcqd: standard and VPD
# INQUIRY, READ CAPACITY(16) for 512- and 4096-byte blocks, and a
# read-only LUN that refuses writes.
# shellcheck source=tests/integration/lib.sh
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

need_tool iscsi-inq iscsi-readcapacity16 qemu-io

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
}

# --- 64 MiB, 512-byte blocks ---------------------------------------------
make_lun "$TEST_TMP/lun512.img" 64M
start_tcqd --export "$TEST_TMP/lun512.img" --size 64M --block-size 512 \
	--iqn iqn.2026-11.org.tcq:clients

run iscsi-inq -i "$INITIATOR" "$TCQD_URL" || fail "standard INQUIRY failed"
expect '^Vendor:TCQ( |$)' "vendor is TCQ"
expect '^Peripheral Device Type:DIRECT_ACCESS' "device type is a disk"
expect '^Peripheral Qualifier:' "peripheral qualifier present"

# Page codes in decimal: Debian's iscsi-inq parses -c with atoi().
run iscsi-inq -i "$INITIATOR" -e 1 -c 0 "$TCQD_URL" ||
	fail "INQUIRY VPD 0x00 failed"
expect '^Page:0x80' "supported pages list 0x80"
expect '^Page:0x83' "supported pages list 0x83"
expect '^Page:0x86' "supported pages list 0x86"

run iscsi-inq -i "$INITIATOR" -e 1 -c 128 "$TCQD_URL" ||
	fail "INQUIRY VPD 0x80 failed"
expect '^Unit Serial Number:\[ *[^] ][^]]*\]' "unit serial number is set"

run iscsi-inq -i "$INITIATOR" -e 1 -c 131 "$TCQD_URL" ||
	fail "INQUIRY VPD 0x83 failed"
expect '^DEVICE DESIGNATOR #0' "at least one designator"
expect '^Association:\(0\)' "a designator of the logical unit"
expect '^Designator Type:\((1|2|3|8)\)' \
	"an EUI-64, NAA, T10 or SCSI name designator"

readcap 512 $((64 << 20))
stop_tcqd

# --- 64 MiB, 4096-byte blocks --------------------------------------------
make_lun "$TEST_TMP/lun4k.img" 64M
start_tcqd --export "$TEST_TMP/lun4k.img" --size 64M --block-size 4096 \
	--iqn iqn.2026-11.org.tcq:clients-4k
readcap 4096 $((64 << 20))
run iscsi-inq -i "$INITIATOR" "$TCQD_URL" || fail "INQUIRY failed (4k)"
expect '^Vendor:TCQ( |$)' "vendor is TCQ (4k)"
stop_tcqd

# --- read-only LUN -------------------------------------------------------
make_lun "$TEST_TMP/ro.img" 16M
printf 'tcq-readonly-marker' | dd of="$TEST_TMP/ro.img" conv=notrunc status=none
cp --sparse=always "$TEST_TMP/ro.img" "$TEST_TMP/ro.orig"
start_tcqd --export "$TEST_TMP/ro.img" --size 16M --read-only \
	--iqn iqn.2026-11.org.tcq:clients-ro

# Positive control: reads work, so a failing write means the refusal.
run qemu-io -r -f raw -c 'read 0 4k' "$TCQD_URL" ||
	fail "qemu-io read from the read-only LUN failed"
expect '^read 4096/4096 bytes' "read-only LUN is readable"

rc=0
run qemu-io -f raw -c 'write -P 0x5a 0 4k' "$TCQD_URL" || rc=$?
grep -q '^wrote ' <<<"$OUT" && fail "write to a read-only LUN succeeded"
# Older qemu-io exits 0 after a failed command; then the text must say so.
if [ "$rc" -eq 0 ] &&
	! grep -Eqi 'fail|error|protect|denied|not permitted' <<<"$OUT"; then
	fail "qemu-io neither failed nor reported an error"
fi
ok "qemu-io write to the read-only LUN was refused"
stop_tcqd
cmp "$TEST_TMP/ro.img" "$TEST_TMP/ro.orig" ||
	fail "the read-only backing file changed"
ok "backing file unchanged"

pass "all checks passed"
