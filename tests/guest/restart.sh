#!/bin/bash
# The Linux kernel initiator across a restart of tcqd (tests/guest/guest.sh):
# the guest writes a known pattern with O_DIRECT while tcqd is killed
# (SIGKILL) and started again on the same port and file, then the same
# with a graceful stop (SIGTERM); each time the kernel initiator
# reconnects within its replacement timeout, the writer ends without an
# error, and every byte reads back, in the guest and in the backing file.
# The writer's second half waits for a gate the check opens once the old
# tcqd is gone, so it is sent to a target that is down whatever the speed
# of the machine (a writer that ended before the stop tested nothing, and
# found the session still reconnecting).
# The same with files written on a mounted ext4: e2fsck finds it clean
# afterwards and every file reads back. And a read error of the backing
# store (the fault backend) reaches the guest as an I/O error, not a hang.
# The checks run by name (checks.sh):
# shellcheck disable=SC2317
# shellcheck source=tests/integration/lib.sh
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"
# shellcheck source=tests/guest/guest.sh
. "$top_srcdir/tests/guest/guest.sh"

IQN=iqn.2026-11.org.tcq:guest-restart
CONF=$TEST_TMP/tcqd.conf
MIB=24		# the pattern's size
DISK=

fixture_restart() {
	printf '[global]\nlisten = 127.0.0.1:0\nthreads = 2\n' >"$CONF"
	printf '[target %s]\n[lun %s 0]\npath = %s\nsize = 64M\ncreate = yes\n' \
		"$IQN" "$IQN" "$TEST_TMP/lun0.img" >>"$CONF"
	printf '[lun %s 1]\npath = %s\nsize = 64M\ncreate = yes\n' \
		"$IQN" "$TEST_TMP/lun1.img" >>"$CONF"
	# blocks 1000-1099 of LUN 2 fail to read, as a dying disk's would
	printf '[lun %s 2]\nbackend = fault:lba=1000-1099,error=eio,base=null\nsize = 16M\n' \
		"$IQN" >>"$CONF"
	start_tcqd -c "$CONF"
	# The port tcqd bound goes into the file: the restarted tcqd must
	# listen where the old one did (no port picked beforehand that
	# another test could take meanwhile).
	sed -i "s|^listen = .*|listen = 127.0.0.1:$TCQD_PORT|" "$CONF"
	guest_boot "$TCQD_PORT" "$IQN"
	guest_login "$IQN" node.session.timeo.replacement_timeout=60
}

teardown_restart() {
	guest_stop || fail "the guest did not power off by itself"
}

port_free() { ! ss -Hltn "sport = :$1" | grep -q .; }

# restart_tcqd SIGNAL: stops tcqd with SIGNAL, opens the guest writer's
# gate (/tmp/go) once it is gone, and starts it again on the same port and
# file (this check's tcqd from now on).
restart_tcqd() {
	kill "-$1" "$TCQD_PID" || fail "cannot signal tcqd"
	# tcqd is the fixture's child, not this check's: wait for its port.
	wait_until 300 port_free "$TCQD_PORT" ||
		fail "tcqd still listens on $TCQD_PORT after SIG$1"
	TCQD_PID=
	guest_must "gate opened" "touch /tmp/go"
	start_tcqd -c "$CONF"
	say "tcqd restarted after SIG$1 on port $TCQD_PORT"
}

# writer_started FILE: waits until the guest's writer has written FILE
# (it has begun).
writer_started() {
	guest_must "writer begun" -t 60 "
		for i in \$(seq 600); do [ -e $1 ] && exit 0; sleep 0.1; done
		echo the writer did not begin; exit 1"
}

# write_through_restart SIGNAL SEEK_MIB: a $MIB MiB pattern is written
# from the guest while tcqd restarts; it must all be there afterwards.
write_through_restart() {
	local sig=$1 seek=$2 sum host half
	guest_disk 0 || fail "no disk for LUN 0"
	DISK=$GUEST_DISK
	guest_must "pattern" "dd if=/dev/urandom of=/tmp/pat bs=1M count=$MIB 2>/dev/null &&
		rm -f /tmp/dd.rc && sha256sum </tmp/pat"
	sum=${GUEST_STDOUT%% *}
	# The writer outlives the command that starts it (setsid). Its first
	# half may be in flight at the stop; its second half waits for the
	# gate, opened when the old tcqd is gone, so it needs the new one.
	half=$((MIB * 8))	# 64k blocks
	guest_must "writer started" "rm -f /tmp/go /tmp/w.begun; setsid sh -c '
		touch /tmp/w.begun
		dd if=/tmp/pat of=/dev/$DISK bs=64k count=$half seek=$((seek * 16)) \
			oflag=direct 2>/tmp/dd.err || { echo \$? >/tmp/dd.rc; exit; }
		while [ ! -e /tmp/go ]; do sleep 0.05; done
		dd if=/tmp/pat of=/dev/$DISK bs=64k skip=$half seek=$((seek * 16 + half)) \
			oflag=direct conv=fsync 2>>/tmp/dd.err; echo \$? >/tmp/dd.rc' \
		</dev/null >/dev/null 2>&1 &"
	writer_started /tmp/w.begun
	restart_tcqd "$sig"
	guest_must "writer finished" -t 150 "
		for i in \$(seq 1400); do [ -s /tmp/dd.rc ] && break; sleep 0.1; done
		[ -s /tmp/dd.rc ] || { echo the writer is still running; exit 1; }
		rc=\$(cat /tmp/dd.rc); [ \"\$rc\" = 0 ] || { cat /tmp/dd.err; echo status \$rc; exit 1; }"
	ok "SIG$sig: the O_DIRECT writer across the restart ended without an error"
	# Its last writes went through the new tcqd, so the session is back;
	# a moment's wait covers the state file catching up.
	guest_do -t 60 "for i in \$(seq 300); do
		[ \"\$(cat /sys/class/iscsi_session/$GUEST_SESSION/state)\" = LOGGED_IN ] && exit 0
		sleep 0.1; done; cat /sys/class/iscsi_session/$GUEST_SESSION/state; exit 1"
	[ "$GUEST_RC" = 0 ] || fail "the session is $GUEST_STDOUT"
	ok "SIG$sig: the kernel initiator is logged in again ($GUEST_SESSION)"
	guest_must "read back" "dd if=/dev/$DISK bs=1M skip=$seek count=$MIB iflag=direct \
		2>/dev/null | sha256sum"
	[ "${GUEST_STDOUT%% *}" = "$sum" ] ||
		fail "SIG$sig: the guest reads back ${GUEST_STDOUT%% *}, wrote $sum"
	host=$(dd if="$TEST_TMP/lun0.img" bs=1M skip="$seek" count=$MIB 2>/dev/null | sha256sum)
	[ "${host%% *}" = "$sum" ] ||
		fail "SIG$sig: the backing file holds ${host%% *}, the guest wrote $sum"
	ok "SIG$sig: every byte of the $MIB MiB is there, in the guest and in the file"
}

# ext4_through_restart SIGNAL: files written (and fsynced) on a mounted
# ext4 while tcqd restarts; then the file system checks clean and every
# file reads back.
ext4_through_restart() {
	local sig=$1 fs
	guest_disk 1 || fail "no disk for LUN 1"
	fs=$GUEST_DISK
	guest_must "ext4 made and mounted" -t 60 "
		mountpoint -q /mnt && umount /mnt
		mkfs.ext4 -q -F /dev/$fs && mkdir -p /mnt && mount -t ext4 /dev/$fs /mnt"
	# Six files before the gate (the first perhaps in flight at the
	# stop), six after it: those need the new tcqd.
	guest_must "files writer started" "rm -f /tmp/fs.rc /tmp/go /tmp/fs.begun; setsid sh -c '
		touch /tmp/fs.begun
		for i in \$(seq 12); do
			[ \$i = 7 ] && while [ ! -e /tmp/go ]; do sleep 0.05; done
			dd if=/tmp/pat of=/mnt/f\$i bs=1M count=2 conv=fsync 2>/tmp/fs.err || { echo 1 >/tmp/fs.rc; exit; }
		done; sync; echo 0 >/tmp/fs.rc' </dev/null >/dev/null 2>&1 &"
	writer_started /tmp/fs.begun
	restart_tcqd "$sig"
	guest_must "files writer finished" -t 150 "
		for i in \$(seq 1400); do [ -s /tmp/fs.rc ] && break; sleep 0.1; done
		[ \"\$(cat /tmp/fs.rc 2>/dev/null)\" = 0 ] || { cat /tmp/fs.err; exit 1; }"
	ok "SIG$sig: 12 files written on ext4 across the restart, no error"
	guest_must "unmounted and checked" -t 60 "umount /mnt && e2fsck -fn /dev/$fs"
	ok "SIG$sig: e2fsck -fn finds the file system clean"
	guest_must "files read back" -t 60 "
		mount -t ext4 /dev/$fs /mnt && want=\$(head -c 2097152 /tmp/pat | sha256sum) &&
		for i in \$(seq 12); do
			[ \"\$(sha256sum </mnt/f\$i)\" = \"\$want\" ] || { echo f\$i differs; exit 1; }
		done; umount /mnt"
	ok "SIG$sig: every file reads back"
}

# A read error of the backing store reaches the guest as an I/O error,
# at once, not as a hang; the blocks around it still read.
read_error_reaches_the_guest() {
	local d
	guest_disk 2 || fail "no disk for LUN 2"
	d=$GUEST_DISK
	guest_do -t 60 "dd if=/dev/$d of=/dev/null bs=512 skip=1050 count=1 iflag=direct"
	[ "$GUEST_RC" -ne 0 ] && [ "$GUEST_RC" -ne 255 ] ||
		fail "a read of a failing block returned status $GUEST_RC"
	# A MEDIUM ERROR reaches user space as EIO or ENODATA (BLK_STS_MEDIUM).
	grep -qiE "error|no data available" <<<"$GUEST_STDERR" ||
		fail "dd does not report an error: $GUEST_STDERR"
	ok "a read of a block the backend fails gives the guest an I/O error ($GUEST_STDERR)"
	guest_must "dmesg" "dmesg | grep -Ei -m1 'medium error|unrecovered read|I/O error|FAILED Result'"
	ok "the kernel logs it: $GUEST_STDOUT"
	guest_must "good blocks" "dd if=/dev/$d of=/dev/null bs=512 skip=900 count=50 iflag=direct"
	ok "blocks outside the failing range still read"
}

# One check does all: a tcqd it restarts is its own, and ends with it.
kernel_initiator_survives_kill_and_graceful_restart() {
	write_through_restart KILL 0
	write_through_restart TERM 32
	ext4_through_restart KILL
	ext4_through_restart TERM
}

CHECKS=(
	@restart
	read_error_reaches_the_guest
	kernel_initiator_survives_kill_and_graceful_restart
)
run_checks "$@"
