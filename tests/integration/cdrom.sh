#!/bin/bash
# A LUN of type = cdrom (tcqd.conf(5)): an ISO image made by genisoimage
# served as an MMC-6 CD-ROM, driven by libiscsi (rawcdb, livecdb,
# iscsi-inq, iscsi-test-cu). Expected bytes are MMC-6's and SPC-4's:
# INQUIRY peripheral device type 05h with RMB; READ CAPACITY the image's
# last LBA and 2048; the image read back byte for byte with READ (10)
# and READ CD; READ TOC formats 0 (LBA and MSF), 1 and 2 of a
# single-session disc with one data track; GET CONFIGURATION's current
# profile CD-ROM 0008h; READ DISC INFORMATION of a complete disc; a
# block command is INVALID COMMAND OPERATION CODE and a WRITE DATA
# PROTECT. Live, tcqctl set LUN path=OTHER.iso changes the disc (the
# open session's next command: 06/28/00, GET EVENT STATUS NOTIFICATION:
# NewMedia, the new image reads back) and path= takes it out (02/3A/01,
# MediaRemoval); PREVENT ALLOW MEDIUM REMOVAL holds the disc against
# tcqctl and START STOP UNIT (05/53/02), unless tcqctl is forced; save
# keeps type and disc; an image that is not whole 2048-byte sectors and
# keys that do not apply are refused by name and change nothing.
# shellcheck source=tests/integration/lib.sh
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"
# shellcheck source=tests/integration/cu.sh
. "$top_srcdir/tests/integration/cu.sh"

TCQCTL=${TCQCTL:-$top_builddir/tcqctl}
LIVECDB=${LIVECDB:-$top_builddir/tests/integration/livecdb}
RAWCDB=${RAWCDB:-$top_builddir/tests/integration/rawcdb}
need_built "$TCQCTL" "$LIVECDB" "$RAWCDB"
need_tool genisoimage

SOCK=$TEST_TMP/ctl.sock
CONF=$TEST_TMP/tcqd.conf
T=iqn.2026-11.org.tcq:cdrom
TUR=000000000000
UA_CHANGED="CHECK CONDITION key=0x6 asc=0x28 ascq=0x00"
NO_DISC="CHECK CONDITION key=0x2 asc=0x3a ascq=0x01"	# tray closed
TRAY_OPEN="CHECK CONDITION key=0x2 asc=0x3a ascq=0x02"
GESN_MEDIA=4a01000010000000080000:8	# polled, media class, 8 bytes

ctl() { run "$TCQCTL" --ctl "$SOCK" "$@"; }
hex_of() { od -An -tx1 -v "$1" | tr -d ' \n'; }
blocks_of() { echo $(($(stat -c %s "$1") / 2048)); }
watch_end() {
	printf 'quit\n' >&"${WATCH[1]}"
	wait "$WATCH_PID" || fail "livecdb ended with an error"
	unset 'BG_PIDS[-1]'
}

# make_iso ISO NAME TEXT: an ISO 9660 image holding the file NAME.
make_iso() {
	mkdir -p "$TEST_TMP/src.$2"
	printf '%s\n' "$3" >"$TEST_TMP/src.$2/$2"
	head -c 400000 /dev/urandom >"$TEST_TMP/src.$2/$2.bin"
	genisoimage -quiet -V "$2" -o "$1" "$TEST_TMP/src.$2" ||
		fail "genisoimage failed"
}

fixture_cdrom() {
	make_iso "$TEST_TMP/a.iso" alpha "the first disc"
	make_iso "$TEST_TMP/b.iso" beta "the second disc, a little longer"
	head -c $((2048 * 10 + 512)) /dev/urandom >"$TEST_TMP/odd.iso"
	{
		printf '[global]\nlisten = 127.0.0.1:0\nthreads = 2\n'
		printf 'ctl = %s\n\n[target %s]\n[lun %s 0]\n' "$SOCK" "$T" "$T"
		printf 'type = cdrom\npath = %s\n' "$TEST_TMP/a.iso"
	} >"$CONF"
	start_tcqd -c "$CONF"
}

# cdb CDB[:ALLOC]: one command over a new session (rawcdb), into OUT.
cdb() { run "$RAWCDB" "$TCQD_URL" "$1" || fail "rawcdb $1: $OUT"; }

inquiry_is_an_mmc_device() {
	cdb 120000006000:96
	# byte 0: peripheral qualifier 0, device type 05h; byte 1: RMB
	[[ $OUT == "GOOD 0580"* ]] || fail "INQUIRY: $OUT"
	ok "INQUIRY: peripheral device type 05h, RMB=1"
	run iscsi-inq "$TCQD_URL" || fail "iscsi-inq: $OUT"
	grep -qi "Peripheral Device Type:.*5\|MMC" <<<"$OUT" ||
		fail "iscsi-inq does not say MMC: $OUT"
	cdb 120100000400:4
	[ "$OUT" = "GOOD 05000003" ] ||
		fail "VPD 00h lists not just 00h, 80h, 83h: $OUT"
	cdb 120100000700:7
	[ "$OUT" = "GOOD 05000003008083" ] || fail "VPD 00h: $OUT"
	ok "VPD page 00h lists 00h, 80h, 83h"
}

read_capacity_is_the_image_in_2048_byte_blocks() {
	local nb
	nb=$(blocks_of "$TEST_TMP/a.iso")
	cdb 25000000000000000000:8
	[ "$OUT" = "GOOD $(printf '%08x%08x' $((nb - 1)) 2048)" ] ||
		fail "READ CAPACITY(10): $OUT, expected last LBA $((nb - 1)), 2048"
	ok "READ CAPACITY(10): last LBA $((nb - 1)), 2048-byte blocks"
}

# read_all ISO: the LUN's content now, as hex, through READ (10).
read_all() {
	local nb
	nb=$(blocks_of "$1")
	cdb "$(printf '28000000000000%04x00:%d' "$nb" $((nb * 2048)))"
	[[ $OUT == "GOOD "* ]] || fail "READ(10): $OUT"
}

the_image_reads_back_byte_for_byte() {
	read_all "$TEST_TMP/a.iso"
	[ "${OUT#GOOD }" = "$(hex_of "$TEST_TMP/a.iso")" ] ||
		fail "READ(10) of the whole disc differs from a.iso"
	ok "READ(10) of all $(blocks_of "$TEST_TMP/a.iso") blocks is a.iso byte for byte"
	# READ CD, Mode 1 sectors, user data only, of block 16 (the
	# primary volume descriptor)
	cdb be080000001000000110000000:2048
	[ "${OUT#GOOD }" = "$(dd if="$TEST_TMP/a.iso" bs=2048 skip=16 count=1 2>/dev/null | od -An -tx1 -v | tr -d ' \n')" ] ||
		fail "READ CD of block 16: ${OUT:0:40}..."
	ok "READ CD (user data) of block 16 is the image's"
}

toc_is_one_data_track_and_lead_out() {
	local nb f lo
	nb=$(blocks_of "$TEST_TMP/a.iso")
	# format 0, LBA: length 18, tracks 1..1; track 1 (ADR 1, CONTROL 4:
	# a data track) at 0; the lead-out (AAh) at the image's end
	cdb 4300000000000000140000:20
	[ "$OUT" = "GOOD 00120101""0014010000000000""0014aa00$(printf '%08x' "$nb")" ] ||
		fail "READ TOC format 0: $OUT"
	ok "READ TOC format 0: one data track at LBA 0, the lead-out at $nb"
	# MSF: track 1 at 00:02:00, the lead-out 150 frames after its LBA
	f=$((nb + 150))
	lo=$(printf '%02x%02x%02x' $((f / 4500)) $((f / 75 % 60)) $((f % 75)))
	cdb 4302000000000000140000:20
	[ "$OUT" = "GOOD 00120101""0014010000000200""0014aa0000$lo" ] ||
		fail "READ TOC format 0, MSF: $OUT"
	ok "READ TOC format 0, MSF: track 1 at 00:02:00, the lead-out at $lo"
	cdb 43000100000000000c0000:12
	[ "$OUT" = "GOOD 000a0101""0014010000000000" ] ||
		fail "READ TOC format 1: $OUT"
	ok "READ TOC format 1: sessions 1..1, its first track 1 at LBA 0"
	# format 2, raw: points A0h (first track 1, CD-ROM), A1h (last
	# track 1), A2h (lead-out MSF), 01h (00:02:00)
	cdb 4300020000000000340000:52
	[ "$OUT" = "GOOD 002e0101""011400a0000000000100""00""011400a1000000000100""00""011400a200000000$lo""0114000100000000000200" ] ||
		fail "READ TOC format 2: $OUT"
	ok "READ TOC format 2: A0h, A1h, A2h and track 1 of session 1"
}

get_configuration_says_cd_rom() {
	# RT=2, Profile List only: current profile 0008h; DVD-ROM 0010h and
	# CD-ROM 0008h listed, CD-ROM current
	cdb 46020000000000ff0000:255
	[ "$OUT" = "GOOD 00000010""00000008""0000030800100000""0008""0100" ] ||
		fail "GET CONFIGURATION RT=2 0000h: $OUT"
	ok "GET CONFIGURATION: current profile CD-ROM (0008h), Profile List DVD-ROM, CD-ROM"
	# RT=1: the current features only; the DVD Read feature is not
	cdb 46010000000000ff0000:255
	[[ $OUT == "GOOD "*"001e09"* ]] || fail "RT=1 lacks CD Read current: $OUT"
	[[ $OUT != *"001f"* ]] || fail "RT=1 lists DVD Read: $OUT"
	ok "GET CONFIGURATION RT=1: CD Read current, DVD Read not listed"
}

disc_information_is_a_complete_disc() {
	# disc information length 32; not erasable, last session complete,
	# disc complete (0Eh); first track 1, 1 session, tracks 1..1
	cdb 5100000000000000220000:34
	[[ $OUT == "GOOD 00200e01010101"* ]] || fail "READ DISC INFORMATION: $OUT"
	ok "READ DISC INFORMATION: a complete disc of one session and one track"
	cdb 52010000000100003000:48
	[[ $OUT == "GOOD 002e0101000401"* ]] || fail "READ TRACK INFORMATION: $OUT"
	ok "READ TRACK INFORMATION of track 1: session 1, data mode 1"
}

block_commands_are_not_mmc() {
	local c
	# SYNCHRONIZE CACHE (10), READ (16), WRITE SAME (16), READ (6)
	for c in 35000000000000000000 88000000000000000000000000010000 \
		93000000000000000000000000000000 080000000100; do
		cdb "$c"
		[ "$OUT" = "CHECK CONDITION key=0x5 asc=0x20 ascq=0x00" ] ||
			fail "${c:0:2}h: $OUT, expected INVALID COMMAND OPERATION CODE"
	done
	ok "SYNCHRONIZE CACHE, READ (16), WRITE SAME, READ (6): INVALID COMMAND OPERATION CODE"
	cdb 2a000000000000000000
	[ "$OUT" = "CHECK CONDITION key=0x7 asc=0x27 ascq=0x00" ] ||
		fail "WRITE (10): $OUT"
	ok "WRITE (10): DATA PROTECT, WRITE PROTECTED"
}

luns_shows_type_and_medium() {
	ctl luns || fail "tcqctl luns: $OUT"
	grep -q "cdrom  medium loaded  profile CD-ROM" <<<"$OUT" ||
		fail "tcqctl luns: $OUT"
	ok "tcqctl luns: cdrom, medium loaded, CD-ROM"
}

live_change_loads_the_other_disc() {
	watch_start "$TCQD_URL"
	watch_settle 0
	watch "0 $GESN_MEDIA"		# whatever was pending
	ctl set 0 "path=$TEST_TMP/b.iso" || fail "set path: $OUT"
	watch "0 $TUR"
	[ "$ANS" = "$UA_CHANGED" ] ||
		fail "the next command got '$ANS', expected 06/28/00"
	ok "the open session's next command: NOT READY TO READY CHANGE, MEDIUM MAY HAVE CHANGED"
	watch "0 $GESN_MEDIA"
	# event length 6, media class (4), classes 1, 4, 6; NewMedia (2),
	# medium present
	[ "$ANS" = "GOOD 0006045202020000" ] || fail "GESN: $ANS"
	ok "GET EVENT STATUS NOTIFICATION: media class, NewMedia, medium present"
	watch "0 $GESN_MEDIA"
	[ "$ANS" = "GOOD 0006045200020000" ] || fail "GESN again: $ANS"
	ok "reported once: the next poll says no change"
	watch_end
	read_all "$TEST_TMP/b.iso"
	[ "${OUT#GOOD }" = "$(hex_of "$TEST_TMP/b.iso")" ] ||
		fail "the LUN does not read b.iso"
	ok "the whole disc reads back as b.iso"
	run "$TCQCTL" --ctl "$SOCK" config || fail "config: $OUT"
	grep -qx "path = $TEST_TMP/b.iso" <<<"$OUT" || fail "config: $OUT"
	grep -qx "type = cdrom" <<<"$OUT" || fail "config lacks type: $OUT"
	ok "tcqctl config (what save writes): type = cdrom, path = b.iso"
}

empty_path_takes_the_disc_out() {
	watch_start "$TCQD_URL"
	watch_settle 0
	watch "0 $GESN_MEDIA"
	ctl set 0 path= || fail "set path=: $OUT"
	watch "0 $TUR"
	[ "$ANS" = "$NO_DISC" ] || fail "TEST UNIT READY: $ANS"
	ok "no disc: NOT READY, MEDIUM NOT PRESENT - TRAY CLOSED (02/3A/01)"
	watch "0 $GESN_MEDIA"
	[ "$ANS" = "GOOD 0006045203000000" ] || fail "GESN: $ANS"
	ok "GESN: MediaRemoval (3), no medium"
	watch "0 46020000000000ff0000:255"
	[[ $ANS == "GOOD 00000010""00000000"* ]] || fail "GET CONFIGURATION: $ANS"
	ok "GET CONFIGURATION: current profile 0000h"
	ctl luns || fail "luns: $OUT"
	grep -q "medium none  profile none" <<<"$OUT" || fail "luns: $OUT"
	ctl set 0 "path=$TEST_TMP/a.iso" || fail "set path back: $OUT"
	watch "0 $TUR"
	[ "$ANS" = "$UA_CHANGED" ] || fail "after the load: $ANS"
	watch_settle 0
	ok "loaded again: 06/28/00, then ready"
	watch_end
}

prevent_holds_the_disc() {
	watch_start "$TCQD_URL"
	watch_settle 0
	watch "0 1e0000000100"		# PREVENT
	[ "$ANS" = "GOOD -" ] || fail "PREVENT: $ANS"
	local rc=0
	ctl set 0 "path=$TEST_TMP/b.iso" || rc=$?
	[ "$rc" -eq 1 ] && [[ $OUT == *"prevents medium removal"* ]] ||
		fail "tcqctl set path while prevented: status $rc: $OUT"
	ok "tcqctl set path refused while an initiator prevents removal"
	watch "0 1b0000000200"		# START STOP UNIT: LoEj, eject
	[ "$ANS" = "CHECK CONDITION key=0x5 asc=0x53 ascq=0x02" ] ||
		fail "eject while prevented: $ANS"
	ok "START STOP UNIT eject: MEDIUM REMOVAL PREVENTED (05/53/02)"
	watch "0 1e0000000000"		# ALLOW
	watch "0 1b0000000200"
	[ "$ANS" = "GOOD -" ] || fail "eject: $ANS"
	watch "0 $TUR"
	[ "$ANS" = "$TRAY_OPEN" ] || fail "TEST UNIT READY, tray open: $ANS"
	watch "0 bd000000000000000008000000:8"
	[ "$ANS" = "GOOD 0010000000000000" ] || fail "MECHANISM STATUS: $ANS"
	ok "ejected: 02/3A/02, MECHANISM STATUS door open"
	watch "0 1b0000000300"		# LoEj, Start: the tray closes
	[ "$ANS" = "GOOD -" ] || fail "load: $ANS"
	watch "0 $TUR"
	[ "$ANS" = "GOOD -" ] || fail "after the load: $ANS"
	ok "START STOP UNIT load: ready again"
	watch_end
	read_all "$TEST_TMP/a.iso"
	[ "${OUT#GOOD }" = "$(hex_of "$TEST_TMP/a.iso")" ] ||
		fail "the disc changed while prevented"
	ok "the disc is still a.iso"
}

force_changes_a_held_disc() {
	watch_start "$TCQD_URL"
	watch_settle 0
	watch "0 1e0000000100"		# PREVENT
	ctl set 0 "path=$TEST_TMP/b.iso" --force || fail "set --force: $OUT"
	watch "0 $TUR"
	[ "$ANS" = "$UA_CHANGED" ] || fail "after the forced change: $ANS"
	ok "tcqctl set --force changes a prevented disc; the nexus gets 06/28/00"
	watch "0 1e0000000000"		# ALLOW
	watch_end
	read_all "$TEST_TMP/b.iso"
	[ "${OUT#GOOD }" = "$(hex_of "$TEST_TMP/b.iso")" ] ||
		fail "the forced change did not load b.iso"
	ctl set 0 "path=$TEST_TMP/a.iso" || fail "set path back: $OUT"
	ok "the disc read back is b.iso"
}

# refused WANT ARGS...: tcqctl ARGS fails naming WANT; the disc is a.iso.
refused() {
	local want=$1 rc=0
	shift
	ctl "$@" || rc=$?
	[ "$rc" -eq 1 ] || fail "tcqctl $*: status $rc, expected 1"
	[[ $OUT == *"$want"* ]] || fail "tcqctl $*: message lacks '$want': $OUT"
	read_all "$TEST_TMP/a.iso"
	[ "${OUT#GOOD }" = "$(hex_of "$TEST_TMP/a.iso")" ] ||
		fail "the disc changed"
	ok "tcqctl $* refused naming '$want'; the disc is unchanged"
}
odd_sized_image_refused() { refused "path = $TEST_TMP/odd.iso" set 0 "path=$TEST_TMP/odd.iso"; }
write_cache_refused() { refused write_cache set 0 write_cache=no; }
thin_refused() { refused thin set 0 thin=yes; }

odd_sized_image_in_a_file_refused() {
	local rc=0
	sed "s|^path = .*|path = $TEST_TMP/odd.iso|" "$CONF" >"$TEST_TMP/odd.conf"
	timeout 20 "$TCQD" -c "$TEST_TMP/odd.conf" >"$TEST_TMP/odd.out" 2>&1 || rc=$?
	[ "$rc" -ne 0 ] || fail "tcqd started with odd.iso"
	grep -q "path = .*odd.iso: 20992 bytes is not an ISO image" "$TEST_TMP/odd.out" ||
		fail "the error does not name path: $(cat "$TEST_TMP/odd.out")"
	ok "tcqd refuses it: $(grep odd.iso "$TEST_TMP/odd.out" | head -1)"
}

save_keeps_type_and_disc() {
	ctl save || fail "save: $OUT"
	grep -qx "type = cdrom" "$CONF" || fail "saved file lacks type = cdrom"
	grep -qx "path = $TEST_TMP/a.iso" "$CONF" || fail "saved file lacks path"
	ok "tcqctl save writes type = cdrom and the disc's path"
}

# libiscsi has no MMC suite: its SPC tests and the SBC ones that also
# hold for an MMC device run on the cdrom; each passes, or skips itself
# as "Not SBC device" (its device type is read from INQUIRY) or for want
# of PERSISTENT RESERVE IN, which an MMC-6 drive need not have. The
# MODE SENSE control page (0Ah) is not an MMC-6 page: ModeSense6 is out.
CU_MMC=(SCSI.Inquiry SCSI.TestUnitReady SCSI.ReadCapacity10 SCSI.Read10
	SCSI.Read12 SCSI.ReportSupportedOpcodes SCSI.StartStopUnit)
iscsi_test_cu_on_the_cdrom() {
	local s t res why log n=0
	for s in "${CU_MMC[@]}"; do
		log=$TEST_TMP/cu.${s#SCSI.}.log
		cu_run "$log" --dataloss --test="$s" "$TCQD_URL"
		while IFS=$'\t' read -r t res why; do
			say "$t: $res $why"
			[ "$res" = NOSUMMARY ] && fail "$s: no summary: $(tail -5 "$log")"
			[ "$res" = passed ] && n=$((n + 1)) && continue
			[ "$res" = skipped ] &&
				[[ $why == *"Not SBC device"* ||
					$why == *"PERSISTENT RESERVE IN is not implemented"* ]] &&
				continue
			fail "$t: $res $why"
		done < <(cu_results "$log" SCSI)
	done
	[ "$n" -gt 0 ] || fail "no test ran"
	ok "iscsi-test-cu ${CU_MMC[*]}: $n passed, the rest SBC-only"
}

CHECKS=(
	@cdrom
	inquiry_is_an_mmc_device
	read_capacity_is_the_image_in_2048_byte_blocks
	the_image_reads_back_byte_for_byte
	toc_is_one_data_track_and_lead_out
	get_configuration_says_cd_rom
	disc_information_is_a_complete_disc
	block_commands_are_not_mmc
	luns_shows_type_and_medium
	live_change_loads_the_other_disc
	empty_path_takes_the_disc_out
	prevent_holds_the_disc
	force_changes_a_held_disc
	odd_sized_image_refused
	write_cache_refused
	thin_refused
	odd_sized_image_in_a_file_refused
	save_keeps_type_and_disc
	iscsi_test_cu_on_the_cdrom
)
run_checks "$@"
