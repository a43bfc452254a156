#!/bin/bash
# Thin provisioning that warns: a 12 MiB sparse LUN file on an 8 MiB
# tmpfs of its own (with a 1 MiB file beside it), thin_threshold = 50.
# VPD B2h gives the THRESHOLD EXPONENT (12 MiB = 24576 blocks: sets of 2
# blocks, exponent 1), LOG SENSE page 0Ch the used and available counts
# in those sets; the write that brings the allocation to 6 MiB makes the
# next command of every logged-in initiator report THIN PROVISIONING SOFT
# THRESHOLD REACHED (6/38/07), once; writes past the tmpfs's end answer
# DATA PROTECT, SPACE ALLOCATION FAILED WRITE PROTECT (7/27/07) while
# reads work and tcqd stays up, and every write that got GOOD during
# the fill reads back exactly; freeing space (a file removed, UNMAP)
# lets writes through again without a restart, and UNMAP re-arms the
# threshold.
# shellcheck source=tests/integration/lib.sh
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

SCSICMD=${SCSICMD:-$top_builddir/tests/integration/scsicmd}
RAWCDB=${RAWCDB:-$top_builddir/tests/integration/rawcdb}
need_built "$SCSICMD" "$RAWCDB"

IQN=iqn.2026-11.org.tcq:thin
MNT=$TEST_TMP/mnt
UA_THRESHOLD="CHECK CONDITION key=0x6 asc=0x38 ascq=0x07"
NOSPACE="CHECK CONDITION key=0x7 asc=0x27 ascq=0x07"
# LOG SENSE, PC 01b, page 0Ch, 64 bytes; INQUIRY VPD B2h.
LOG_LBP=4d004c00000000004000:64
VPD_B2=1201b2004000:64

unmount_tmpfs() {
	if mountpoint -q "$MNT" 2>/dev/null; then
		umount "$MNT" 2>/dev/null || umount -l "$MNT"
	fi
}
# Unmounted by the fixture's teardown, and at the script's exit whatever
# happened (lib_cleanup removes TEST_TMP, which must not hold a mount
# then). Not in exit_hook: checks.sh runs that after every check.
trap 'rc=$?; unmount_tmpfs; (exit $rc); lib_cleanup' EXIT

fixture_thin() {
	mkdir -p "$MNT"
	mount -t tmpfs -o size=8m tmpfs "$MNT" ||
		{ note_set "cannot mount a tmpfs (needs root)"; exit 77; }
	dd if=/dev/zero of="$MNT/other" bs=1M count=1 status=none ||
		fail "cannot write the other file"
	cat >"$TEST_TMP/tcqd.conf" <<CONF
[global]
listen = 127.0.0.1:0

[target $IQN]

[lun $IQN 0]
path = $MNT/lun.img
size = 12M
create = yes
thin_threshold = 50
CONF
	start_tcqd -c "$TEST_TMP/tcqd.conf"
	URL=${TCQD_URL%/*}/0
}

teardown_thin() {
	stop_tcqd
	unmount_tmpfs
}

# scsicmd URL CMD...: each line of its output must be GOOD.
all_good() {
	run "$SCSICMD" "$URL" "$@" || fail "scsicmd failed"
	[ -z "$(grep -vx GOOD <<<"$OUT")" ] || fail "$* did not all succeed"
}

# writes LBA END BYTE: WRITE(16) of 512 KiB chunks over [LBA, END).
writes() {
	local lba=$1 end=$2 byte=$3 a=()
	for ((; lba < end; lba += 1024)); do
		a+=(write "$lba" 1024 "$byte" nofua)
	done
	all_good "${a[@]}"
}

# log_counts: LOG SENSE 0Ch into USED and AVAIL (RESOURCE COUNT of
# parameters 0002h and 0001h), checking the page's layout on the way.
log_counts() {
	run "$RAWCDB" "$URL" "$LOG_LBP" || fail "rawcdb LOG SENSE failed"
	local hex=${OUT#GOOD }
	[[ $OUT == GOOD\ * ]] && [ "${#hex}" -eq 56 ] ||
		fail "LOG SENSE 0Ch: '$OUT'"
	[ "${hex:0:8}" = 8c000018 ] && [ "${hex:8:8}" = 00012308 ] &&
		[ "${hex:24:8}" = 02000000 ] && [ "${hex:32:8}" = 00022308 ] &&
		[ "${hex:48:8}" = 01000000 ] ||
		fail "LOG SENSE 0Ch layout: $hex"
	AVAIL=$((16#${hex:16:8}))
	USED=$((16#${hex:40:8}))
	say "used $USED, available $AVAIL threshold sets"
}

# bg_session NAME OUTFILE GOFILE: an initiator of its own that reads,
# waits for GOFILE, then reads twice; returns once it is logged in.
bg_session() {
	INITIATOR=iqn.2026-11.org.tcq:thin-$1 "$SCSICMD" "$URL" read 0 1 - \
		waitfile "$3" read 0 1 - read 0 1 - >"$2" 2>&1 &
	BG_PIDS+=($!)
	wait_until 100 grep -q . "$2" || fail "session $1 did not start"
}

# bg_expect OUTFILE: the session saw the threshold once, on its first
# command after it was reached.
bg_expect() {
	local rc=0
	wait "${BG_PIDS[-1]}" || rc=$?
	unset 'BG_PIDS[-1]'
	cat "$1"
	[ "$rc" -eq 0 ] || fail "scsicmd exit $rc"
	[ "$(cat "$1")" = "GOOD
WAITED
$UA_THRESHOLD
GOOD" ] || fail "$1: not GOOD, WAITED, 6/38/07 once, GOOD"
}

vpd_b2_reports_threshold_exponent() {
	run "$RAWCDB" "$URL" "$VPD_B2" || fail "rawcdb INQUIRY failed"
	# LBPU LBPWS LBPWS10 LBPRZ, thin; THRESHOLD EXPONENT 1.
	[ "$OUT" = "GOOD 00b2000401e40200" ] || fail "VPD B2h: '$OUT'"
	ok "VPD B2h: THRESHOLD EXPONENT 1 for 24576 blocks"
}

log_sense_used_count_grows_with_writes() {
	log_counts
	# Nothing allocated; 7 MiB of the tmpfs free: 7168 sets of 1 KiB.
	[ "$USED" -eq 0 ] && [ "$AVAIL" -eq 7168 ] ||
		fail "before writing: used $USED, available $AVAIL"
	writes 0 2048 11
	log_counts
	[ "$USED" -eq 1024 ] && [ "$AVAIL" -eq 6144 ] ||
		fail "after 1 MiB: used $USED (want 1024), available $AVAIL (want 6144)"
	ok "LOG SENSE 0Ch: 1 MiB written is 1024 more used sets, 1024 fewer available"
}

soft_threshold_warns_every_initiator_once() {
	bg_session a "$TEST_TMP/a.out" "$TEST_TMP/go"
	bg_session b "$TEST_TMP/b.out" "$TEST_TMP/go"
	# 1 MiB is there: 5 MiB more, the last write reaches 6 MiB (50%).
	writes 2048 12288 22
	log_counts
	[ "$USED" -eq 6144 ] || fail "used $USED sets, want 6144"
	wait_until 20 log_grep -q 'soft threshold of 50% reached' ||
		fail "tcqd did not log the threshold"
	touch "$TEST_TMP/go"
	bg_expect "$TEST_TMP/b.out"
	bg_expect "$TEST_TMP/a.out"
	ok "6 MiB of 12 allocated: each initiator's next command reports 6/38/07, once"
}

full_tmpfs_answers_space_allocation_failed() {
	# 7 MiB of 8 are taken: 2 MiB more cannot all be allocated. 384 KiB
	# writes: the third finds 256 KiB and stops short (the file system
	# is full then), the next ones find nothing.
	local a=() lba short
	for ((lba = 12288; lba < 16384; lba += 768)); do
		a+=(write "$lba" 768 33 nofua)
	done
	run "$SCSICMD" "$URL" "${a[@]}" || fail "scsicmd failed"
	grep -qxF "$NOSPACE" <<<"$OUT" || fail "no 7/27/07 on a full tmpfs"
	[ -z "$(grep -vxF -e GOOD -e "$NOSPACE" <<<"$OUT")" ] ||
		fail "writes on a full tmpfs: other than GOOD or 7/27/07"
	# The writes acknowledged (GOOD, line K of the output for the K-th
	# write) must read back exactly, here and in the next check; the one
	# that stopped short was not acknowledged and may hold anything.
	good_during_fill "$OUT" >"$TEST_TMP/fill.good"
	[ -s "$TEST_TMP/fill.good" ] || fail "no write got GOOD before the tmpfs filled"
	short=$(awk -v ns="$NOSPACE" '$0 == ns { print 12288 + 768 * (NR - 1); exit }' <<<"$OUT")
	read_fill_writes
	# The control: the write that stopped short does not read back whole,
	# so a read-back that took it for acknowledged would fail.
	run "$SCSICMD" "$URL" read "$short" 768 33
	grep -q '^MISMATCH' <<<"$OUT" ||
		fail "the write that stopped short (LBA $short) reads back whole: $OUT"
	ok "control: the write that stopped short (LBA $short) does not read back whole"
	tcqd_alive
	ok "writes past the tmpfs's end: DATA PROTECT, SPACE ALLOCATION FAILED WRITE PROTECT; the $(wc -l <"$TEST_TMP/fill.good") acknowledged ones read back"
}

# good_during_fill OUT: the LBAs of the fill's writes that got GOOD, one a
# line (the K-th line of OUT is the status of the write at 12288 + 768 K).
good_during_fill() {
	awk '$0 == "GOOD" { print 12288 + 768 * (NR - 1) }' <<<"$1"
}

# read_fill_writes: each acknowledged write of the fill (fill.good) reads
# back as written, byte 33 over its 768 blocks.
read_fill_writes() {
	local lba a=()
	while read -r lba; do
		a+=(read "$lba" 768 33)
	done <"$TEST_TMP/fill.good"
	run "$SCSICMD" "$URL" "${a[@]}" || fail "scsicmd failed"
	[ -z "$(grep -vx GOOD <<<"$OUT")" ] ||
		fail "an acknowledged write of the fill does not read back: $(grep -vx GOOD <<<"$OUT" | head -3)"
}

reads_work_on_a_full_tmpfs() {
	all_good read 0 2048 11 read 2048 1024 22 read 11264 1024 22
	read_fill_writes
	tcqd_alive
	ok "reads of written blocks work while the tmpfs is full, the fill's acknowledged writes too"
}

freed_space_lets_writes_through() {
	run "$SCSICMD" "$URL" write 16384 1024 44 nofua
	[ "$OUT" = "$NOSPACE" ] || fail "still full: want 7/27/07, got '$OUT'"
	rm -f "$MNT/other"
	all_good write 16384 1024 44 nofua read 16384 1024 44
	ok "a file removed from the tmpfs: writes work again, no restart"
}

unmap_rearms_the_threshold() {
	# WRITE SAME(16), UNMAP and NDOB, over the whole LUN.
	run "$RAWCDB" "$URL" 93090000000000000000000060000000 ||
		fail "rawcdb WRITE SAME failed"
	[ "$OUT" = "GOOD -" ] || fail "WRITE SAME with UNMAP: '$OUT'"
	log_counts
	[ "$USED" -eq 0 ] || fail "used $USED sets after UNMAP of everything"
	bg_session c "$TEST_TMP/c.out" "$TEST_TMP/go2"
	writes 0 12288 55
	wait_until 20 log_grep -q 'soft threshold of 50% reached' ||
		fail "tcqd did not log the threshold again"
	touch "$TEST_TMP/go2"
	bg_expect "$TEST_TMP/c.out"
	ok "UNMAP below the threshold re-arms it: 6/38/07 again at 50%"
}

CHECKS=(
	@thin
	vpd_b2_reports_threshold_exponent
	log_sense_used_count_grows_with_writes
	soft_threshold_warns_every_initiator_once
	full_tmpfs_answers_space_allocation_failed
	reads_work_on_a_full_tmpfs
	freed_space_lets_writes_through
	unmap_rearms_the_threshold
)
run_checks "$@"
