#!/bin/bash
# The Linux kernel initiator across a restart of tcqd (tests/guest/guest.sh):
# the guest writes a known pattern with O_DIRECT while tcqd is killed
# (SIGKILL) and started again on the same port and file, then the same
# with a graceful stop (SIGTERM); each time the kernel initiator
# reconnects within its replacement timeout, the writer ends without an
# error, and every byte reads back, in the guest and in the backing file.
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

# A fixed free port: the restarted tcqd must listen where the old one did.
free_port() {
	python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

fixture_restart() {
	local port
	port=$(free_port) || fail "no free port"
	printf '[global]\nlisten = 127.0.0.1:%s\nthreads = 2\n' "$port" >"$CONF"
	printf '[target %s]\n[lun %s 0]\npath = %s\nsize = 64M\ncreate = yes\n' \
		"$IQN" "$IQN" "$TEST_TMP/lun0.img" >>"$CONF"
	start_tcqd -c "$CONF"
	guest_boot "$TCQD_PORT" "$IQN"
	guest_login "$IQN" node.session.timeo.replacement_timeout=60
}

teardown_restart() {
	guest_stop || fail "the guest did not power off by itself"
}

# restart_tcqd SIGNAL: stops tcqd with SIGNAL, starts it again on the same
# port and file (this check's tcqd from now on).
restart_tcqd() {
	kill "-$1" "$TCQD_PID" || fail "cannot signal tcqd"
	wait "$TCQD_PID" 2>/dev/null
	TCQD_PID=
	start_tcqd -c "$CONF"
	say "tcqd restarted after SIG$1 on port $TCQD_PORT"
}

# write_through_restart SIGNAL SEEK_MIB: a $MIB MiB pattern is written
# from the guest while tcqd restarts; it must all be there afterwards.
write_through_restart() {
	local sig=$1 seek=$2 sum host
	guest_disk 0 || fail "no disk for LUN 0"
	DISK=$GUEST_DISK
	guest_must "pattern" "dd if=/dev/urandom of=/tmp/pat bs=1M count=$MIB 2>/dev/null &&
		rm -f /tmp/dd.rc && sha256sum </tmp/pat"
	sum=${GUEST_STDOUT%% *}
	# The writer outlives the command that starts it (setsid).
	guest_must "writer started" "setsid sh -c 'dd if=/tmp/pat of=/dev/$DISK bs=64k \
		seek=$((seek * 16)) oflag=direct conv=fsync 2>/tmp/dd.err; echo \$? >/tmp/dd.rc' \
		</dev/null >/dev/null 2>&1 &"
	sleep 1
	restart_tcqd "$sig"
	guest_must "writer finished" -t 150 "
		for i in \$(seq 1400); do [ -s /tmp/dd.rc ] && break; sleep 0.1; done
		[ -s /tmp/dd.rc ] || { echo the writer is still running; exit 1; }
		rc=\$(cat /tmp/dd.rc); [ \"\$rc\" = 0 ] || { cat /tmp/dd.err; echo status \$rc; exit 1; }"
	ok "SIG$sig: the O_DIRECT writer across the restart ended without an error"
	guest_must "session back" "cat /sys/class/iscsi_session/$GUEST_SESSION/state"
	[ "$GUEST_STDOUT" = LOGGED_IN ] || fail "the session is $GUEST_STDOUT"
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

# One check does both: a tcqd it restarts is its own, and ends with it.
kernel_initiator_survives_kill_and_graceful_restart() {
	write_through_restart KILL 0
	write_through_restart TERM 32
}

CHECKS=(
	@restart
	kernel_initiator_survives_kill_and_graceful_restart
)
run_checks "$@"
