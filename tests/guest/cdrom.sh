#!/bin/bash
# A LUN of type = cdrom seen by the Linux kernel initiator
# (tests/guest/guest.sh): the sr driver makes it /dev/sr0; the ISO
# (genisoimage on the host) mounts as iso9660 and its files read back
# byte for byte; sg3-utils in the guest ask the drive itself: sg_inq
# (peripheral device type 05h, RMB), sg_get_config (current profile
# CD-ROM, the features of a read-only drive), sg_readcap (the last LBA,
# 2048-byte blocks). Live: tcqctl set LUN path=OTHER.iso, and the next
# mount reads the other disc's files; path= takes the disc out (the
# kernel finds no medium) and a new path puts one in again.
#
# In make check; by hand: cd build && bash ../tests/guest/cdrom.sh
# shellcheck disable=SC2317
# shellcheck source=tests/integration/lib.sh
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"
# shellcheck source=tests/guest/guest.sh
. "$top_srcdir/tests/guest/guest.sh"

TCQCTL=${TCQCTL:-$top_builddir/tcqctl}
need_built "$TCQCTL"
need_tool genisoimage
IQN=iqn.2026-11.org.tcq:guest-cdrom
SOCK=$TEST_TMP/ctl.sock
CONF=$TEST_TMP/tcqd.conf
SR=

ctl() { run "$TCQCTL" -s "$SOCK" "$@"; }

# make_iso ISO NAME: an ISO 9660 image (Rock Ridge names) of NAME.txt
# and NAME.bin (random).
make_iso() {
	mkdir -p "$TEST_TMP/src.$2"
	printf 'the disc called %s\n' "$2" >"$TEST_TMP/src.$2/$2.txt"
	head -c 1500000 /dev/urandom >"$TEST_TMP/src.$2/$2.bin"
	genisoimage -quiet -r -V "$2" -o "$1" "$TEST_TMP/src.$2" ||
		fail "genisoimage failed"
}

fixture_cdrom() {
	make_iso "$TEST_TMP/a.iso" alpha
	make_iso "$TEST_TMP/b.iso" beta
	{
		printf '[global]\nlisten = 127.0.0.1:0\nthreads = 2\n'
		printf 'ctl = %s\n\n[target %s]\n[lun %s 0]\n' "$SOCK" "$IQN" "$IQN"
		printf 'type = cdrom\npath = %s\n' "$TEST_TMP/a.iso"
	} >"$CONF"
	start_tcqd -c "$CONF"
	guest_boot "$TCQD_PORT" "$IQN"
	guest_login "$IQN"
}

teardown_cdrom() {
	guest_stop || fail "the guest did not power off by itself"
	stop_tcqd
}

sr_of_lun0() {
	guest_disk 0 || fail "no block device of LUN 0"
	[[ $GUEST_DISK == sr* ]] || fail "LUN 0 is /dev/$GUEST_DISK, not an sr device"
	SR=$GUEST_DISK
}

lun_is_an_sr_device() {
	sr_of_lun0
	ok "LUN 0 is /dev/$SR (the sr driver's)"
	guest_must "sr in dmesg" "dmesg | grep -E -m1 'sr[0-9]+: scsi3-mmc|Attached scsi CD-ROM'"
	ok "dmesg: $GUEST_STDOUT"
}

# mounted_reads NAME: the disc in the drive is NAME's: mounted iso9660,
# both files read back byte for byte; unmounted again.
mounted_reads() {
	local sum
	sum=$(md5sum <"$TEST_TMP/src.$1/$1.bin" | cut -d' ' -f1)
	guest_must "mount of /dev/$SR" -t 60 "
		mkdir -p /mnt/cd
		for i in \$(seq 30); do
			mount -t iso9660 -o ro /dev/$SR /mnt/cd 2>/dev/null && exit 0
			sleep 0.5
		done
		mount -t iso9660 -o ro /dev/$SR /mnt/cd"
	guest_must "files of the disc" -t 60 "
		cat /mnt/cd/$1.txt; md5sum /mnt/cd/$1.bin"
	local out=$GUEST_STDOUT
	guest_must "umount" "umount /mnt/cd"
	[[ $out == "the disc called $1"*"$sum  /mnt/cd/$1.bin"* ]] ||
		fail "the disc's files do not read back: $out (expected md5 $sum)"
	ok "mount -t iso9660 /dev/$SR: $1.txt and $1.bin (md5 $sum) read back"
}

iso_mounts_and_reads_back() {
	sr_of_lun0
	mounted_reads alpha
}

sg_inq_says_cd_dvd() {
	sr_of_lun0
	guest_must "sg_inq" "sg_inq /dev/$SR"
	grep -q "RMB=1" <<<"$GUEST_STDOUT" || fail "sg_inq: no RMB=1: $GUEST_STDOUT"
	grep -qi "Peripheral device type: cd/dvd" <<<"$GUEST_STDOUT" ||
		fail "sg_inq: not cd/dvd: $GUEST_STDOUT"
	ok "sg_inq: peripheral device type cd/dvd (05h), RMB=1"
}

sg_get_config_says_cd_rom() {
	sr_of_lun0
	guest_must "sg_get_config" "sg_get_config /dev/$SR"
	grep -q "Current profile: CD-ROM" <<<"$GUEST_STDOUT" ||
		fail "sg_get_config: $GUEST_STDOUT"
	ok "sg_get_config: current profile CD-ROM"
	local f
	for f in "Profile list" "Core" "Morphing" "Removable media" \
		"Random readable" "CD read" "DVD read"; do
		grep -qi "$f" <<<"$GUEST_STDOUT" || fail "sg_get_config lists no '$f': $GUEST_STDOUT"
	done
	ok "sg_get_config lists Profile list, Core, Morphing, Removable media, Random readable, CD read, DVD read"
}

sg_readcap_is_the_image() {
	local nb
	sr_of_lun0
	nb=$(($(stat -c %s "$TEST_TMP/a.iso") / 2048))
	guest_must "sg_readcap" "sg_readcap /dev/$SR"
	grep -q "Last LBA=$((nb - 1)) " <<<"$GUEST_STDOUT" ||
		fail "sg_readcap: expected last LBA $((nb - 1)): $GUEST_STDOUT"
	grep -q "Logical block length=2048 bytes" <<<"$GUEST_STDOUT" ||
		fail "sg_readcap: $GUEST_STDOUT"
	ok "sg_readcap: last LBA $((nb - 1)), 2048-byte blocks"
}

live_change_seen_by_the_guest() {
	sr_of_lun0
	ctl set 0 "path=$TEST_TMP/b.iso" || fail "tcqctl set path: $OUT"
	ok "tcqctl set 0 path=b.iso"
	mounted_reads beta
}

eject_and_load_seen_by_the_guest() {
	sr_of_lun0
	ctl set 0 path= || fail "tcqctl set path=: $OUT"
	if guest_do -t 30 "mount -t iso9660 -o ro /dev/$SR /mnt/cd"; then
		guest_do "umount /mnt/cd"
		fail "a disc mounted after path="
	fi
	[[ $GUEST_STDERR == *"No medium found"* ]] ||
		fail "the mount failed otherwise: $GUEST_STDERR"
	guest_must "sg_turs" "sg_turs -v /dev/$SR 2>&1; true"
	grep -qi "medium not present - tray closed" <<<"$GUEST_STDOUT" ||
		fail "sg_turs: $GUEST_STDOUT"
	ok "no disc: mount finds no medium, TEST UNIT READY: medium not present - tray closed"
	ctl set 0 "path=$TEST_TMP/a.iso" || fail "tcqctl set path=a.iso: $OUT"
	mounted_reads alpha
}

CHECKS=(
	@cdrom
	lun_is_an_sr_device
	iso_mounts_and_reads_back
	sg_inq_says_cd_dvd
	sg_get_config_says_cd_rom
	sg_readcap_is_the_image
	live_change_seen_by_the_guest
	eject_and_load_seen_by_the_guest
)
run_checks "$@"
