# shellcheck shell=bash
# A Linux guest whose kernel iSCSI initiator (iscsi_tcp + open-iscsi) logs
# in to the tcqd a test started: sourced by a test after
# tests/integration/lib.sh. The guest is qemu under TCG (no KVM needed),
# booted from the image tests/guest/build-image.sh builds (Debian's kernel,
# busybox, iscsid/iscsiadm). Its only network is qemu's user-mode one with
# restrict=on: a guestfwd makes 10.0.2.100:3260 in the guest reach the
# tcqd portal 127.0.0.1:PORT on the host, and nothing else.
#
#   guest_boot PORT [TARGET_IQN]   boot, wait for the ready marker (fails the
#                                  check or fixture when it does not come)
#   guest_run [-t SECS] SCRIPT     run SCRIPT with sh in the guest: prints its
#                                  stdout (byte for byte), its stderr on
#                                  stderr, returns its status; 255 when the
#                                  guest did not answer in time
#   guest_do [-t SECS] SCRIPT      the same into GUEST_STDOUT, GUEST_STDERR,
#                                  GUEST_RC (no subshell); returns GUEST_RC
#   guest_must WHAT [-t SECS] SCRIPT   guest_do, and fail "WHAT: ..." unless 0
#   guest_login [IQN [NAME=VALUE...]]  sendtargets discovery on
#                                  10.0.2.100:3260 must list IQN; a node
#                                  record with those settings; login; waits
#                                  for the session (GUEST_SESSION=sessionN)
#   guest_disk LUN                 waits for the disk of LUN (e.g. sda),
#                                  sets GUEST_DISK
#   guest_logout                   logs every session out, waits until gone
#   guest_stop                     clean poweroff (then KILL after 20 s);
#                                  non-zero when it had to kill
#   guest_log_tail [N]             the last N lines of the guest's console
#
# Protocol, on a virtio serial port (name tcq.ctl) whose host end is a pair
# of FIFOs ($TEST_TMP/guest/ctl.in and ctl.out, qemu's pipe chardev):
#   host -> guest   C ID SECS BASE64(SCRIPT)
#   guest -> host   O ID, stdout in base64 lines, R ID, stderr in base64
#                   lines, E ID STATUS
# The guest runs SCRIPT under `timeout -s KILL SECS` (status 137 then);
# the host waits SECS + 15 s
# at most, and reads only the answer with its own ID (a late answer to a
# command that timed out is skipped). The console (kernel messages and
# every command with its status) goes to $GUEST_LOG, guest.console.log in
# the test's temp dir, which a failing check shows from where it began.
#
# A test defines no exit_hook of its own (this file's stops the guest when
# the fixture's shell ends), or calls guest_exit_hook from it.

: "${top_srcdir:?tests/guest/guest.sh is sourced after tests/integration/lib.sh}"
: "${GUEST_TIMEOUT:=60}"
: "${GUEST_BOOT_TIMEOUT:=120}"
: "${GUEST_LIFETIME:=900}"	# qemu dies after this many seconds, whatever
: "${GUEST_MEM:=512M}"
: "${QEMU:=qemu-system-x86_64}"
GUEST_INITIATOR=${GUEST_INITIATOR:-iqn.2026-11.org.tcq:guest}
GUEST_PORTAL=10.0.2.100:3260
# One more forward, when set before guest_boot: GUEST_FWD2=ADDR:PORT=HOSTPORT
# makes ADDR:PORT in the guest reach 127.0.0.1:HOSTPORT (redirect.sh: the
# second tcqd, where the first redirects logins to).
GUEST_FWD2=${GUEST_FWD2:-}
GUEST_PID=
GUEST_QEMU_PID=
GUEST_OWNER=
GUEST_IN=
GUEST_OUT=
GUEST_LOG=$TEST_TMP/guest.console.log
GUEST_TARGET=
GUEST_SESSION=
GUEST_DISK=
GUEST_STDOUT=
GUEST_STDERR=
GUEST_STDOUT_FILE=
GUEST_RC=
GUEST_KERNEL=
GUEST_INITRD=

gsay() { printf '%s: guest: %s\n' "$TEST_NAME" "$*" >&2; }

# guest_log_tail [N]: the end of the console log.
guest_log_tail() {
	[ -s "$GUEST_LOG" ] || return 0
	printf -- '----- guest console (last %s lines) -----\n' "${1:-40}"
	tail -n "${1:-40}" "$GUEST_LOG"
}

# guest_need: the tools and the image (skips when they are missing).
guest_need() {
	local out rc=0
	need_tool "$QEMU" socat
	out=$(bash "$top_srcdir/tests/guest/build-image.sh") || rc=$?
	case $rc in
	0) ;;
	77) skip "no guest image (tests/guest/build-image.sh skipped)" ;;
	*) fail "tests/guest/build-image.sh failed (status $rc)" ;;
	esac
	GUEST_KERNEL=$(sed -n 1p <<<"$out")
	GUEST_INITRD=$(sed -n 2p <<<"$out")
	if [ ! -s "$GUEST_KERNEL" ] || [ ! -s "$GUEST_INITRD" ]; then
		fail "build-image.sh printed no kernel and initramfs"
	fi
}

guest_alive() { [ -n "$GUEST_PID" ] && kill -0 "$GUEST_PID" 2>/dev/null; }

# guest_boot PORT [TARGET_IQN]
guest_boot() {
	local port=$1 dir=$TEST_TMP/guest nonce line acc='' chunk t0=$SECONDS
	GUEST_TARGET=${2:-}
	[ -z "$GUEST_PID" ] || fail "guest_boot: a guest is already running"
	guest_need
	mkdir -p "$dir"
	rm -f "$dir/ctl.in" "$dir/ctl.out"
	mkfifo "$dir/ctl.in" "$dir/ctl.out" || fail "cannot make the FIFOs in $dir"
	: >"$GUEST_LOG"
	nonce=$$-$SRANDOM
	local net="user,id=n0,restrict=on,guestfwd=tcp:$GUEST_PORTAL-cmd:socat - TCP:127.0.0.1:$port"
	[ -z "$GUEST_FWD2" ] ||
		net+=",guestfwd=tcp:${GUEST_FWD2%=*}-cmd:socat - TCP:127.0.0.1:${GUEST_FWD2##*=}"
	gsay "booting (portal $GUEST_PORTAL -> 127.0.0.1:$port${GUEST_FWD2:+, ${GUEST_FWD2%=*} -> 127.0.0.1:${GUEST_FWD2##*=}}, console $GUEST_LOG)"
	# Under timeout: a guest never outlives a test that died hard.
	timeout -k 5 "$GUEST_LIFETIME" "$QEMU" -name tcq-guest \
		-machine q35 -accel tcg -m "$GUEST_MEM" -smp 1 \
		-nographic -no-reboot -monitor none -parallel none \
		-serial "file:$GUEST_LOG" -pidfile "$dir/qemu.pid" \
		-kernel "$GUEST_KERNEL" -initrd "$GUEST_INITRD" \
		-append "console=ttyS0 panic=-1 tcq.nonce=$nonce tcq.initiator=$GUEST_INITIATOR" \
		-netdev "$net" \
		-device virtio-net-pci,netdev=n0 \
		-device virtio-serial-pci \
		-chardev "pipe,id=ctl,path=$dir/ctl" \
		-device virtserialport,chardev=ctl,name=tcq.ctl \
		</dev/null >"$dir/qemu.out" 2>&1 &
	GUEST_PID=$!
	GUEST_OWNER=$BASHPID
	trap guest_signal INT TERM HUP PIPE
	exec {GUEST_OUT}<>"$dir/ctl.out" {GUEST_IN}<>"$dir/ctl.in"
	while :; do
		if [ $((SECONDS - t0)) -ge "$GUEST_BOOT_TIMEOUT" ]; then
			guest_log_tail 40 >&2
			guest_kill
			fail "guest not ready within ${GUEST_BOOT_TIMEOUT}s"
		fi
		if read -r -t 1 chunk <&"$GUEST_OUT"; then
			line=$acc$chunk acc=''
			[ "$line" = "READY $nonce" ] && break
		else
			[ $? -gt 128 ] && acc+=$chunk
			if ! guest_alive; then
				sed 's/^/    qemu: /' "$dir/qemu.out" >&2
				guest_log_tail 40 >&2
				guest_kill
				fail "qemu exited before the guest was ready"
			fi
		fi
	done
	[ -s "$dir/qemu.pid" ] && GUEST_QEMU_PID=$(cat "$dir/qemu.pid")
	gsay "ready after $((SECONDS - t0))s (qemu pid ${GUEST_QEMU_PID:-?})"
}

# guest_send ID SECS SCRIPT: one command line to the guest.
guest_send() {
	printf 'C %s %s %s\n' "$1" "$2" "$(printf '%s' "$3" | base64 -w0)" >&"$GUEST_IN"
}

# guest_do [-t SECS] SCRIPT
# The answer is read by sed, not bash's read (which takes a byte per system
# call from a FIFO): sed stops at the line E ID, and nothing follows that
# line until the next command is sent, so the data sed read ahead (if any)
# belongs to no one. It runs under timeout; while it waits, qemu is
# watched, so a guest that dies (a panic powers it off) ends the wait.
guest_do() {
	local secs=$GUEST_TIMEOUT id line rc=0 rpid
	local f=$TEST_TMP/guest/answer.$BASHPID
	[ "${1:-}" = -t ] && { secs=$2; shift 2; }
	GUEST_STDOUT='' GUEST_STDERR='' GUEST_RC=255
	GUEST_STDOUT_FILE=$f.out
	: >"$f.out"
	if ! guest_alive; then
		GUEST_STDERR="guest_run: no guest running"
		printf '%s\n' "$GUEST_STDERR" >&2
		return 255
	fi
	id=$BASHPID-$SRANDOM
	line=$(tr -s ' \t\n' ' ' <<<"$*")
	gsay "\$ ${line:0:200}"
	guest_send "$id" "$secs" "$*"
	timeout -k 1 $((secs + 15)) sed -n "p; /^E $id /q" <&"$GUEST_OUT" >"$f" &
	rpid=$!
	while kill -0 "$rpid" 2>/dev/null; do
		if ! guest_alive; then
			kill "$rpid" 2>/dev/null
			wait "$rpid" 2>/dev/null
			GUEST_STDERR="guest_run: the guest died (qemu exited)"
			printf '%s\n' "$GUEST_STDERR" >&2
			return 255
		fi
		sleep 0.02
	done
	wait "$rpid" || rc=$?
	line=$(grep -m1 "^E $id " "$f")
	if [ -z "$line" ]; then
		GUEST_STDERR="guest_run: no answer within $((secs + 15))s to: $*"
		[ "$rc" = 124 ] || GUEST_STDERR="guest_run: no answer (reader status $rc) to: $*"
		printf '%s\n' "$GUEST_STDERR" >&2
		return 255
	fi
	GUEST_RC=${line##* }
	# The sections of this ID only (a late answer to an earlier command
	# that timed out may come first).
	awk -v h="O $id" '$0 == h { s = 1; next } /^[ORE] / { s = 0 } s' "$f" |
		base64 -d >"$f.out"
	GUEST_STDOUT=$(cat "$f.out")
	GUEST_STDERR=$(awk -v h="R $id" '$0 == h { s = 1; next } /^[ORE] / { s = 0 } s' "$f" |
		base64 -d)
	rm -f "$f"
	[ -n "$GUEST_STDERR" ] && printf '%s\n' "$GUEST_STDERR" | sed 's/^/    guest stderr: /' >&2
	[ "$GUEST_RC" = 0 ] || gsay "status $GUEST_RC"
	return "$GUEST_RC"
}

# guest_run [-t SECS] SCRIPT: stdout byte for byte, the status.
guest_run() {
	local rc=0
	guest_do "$@" || rc=$?
	cat "$GUEST_STDOUT_FILE"
	rm -f "$GUEST_STDOUT_FILE"
	return "$rc"
}

# guest_must WHAT [-t SECS] SCRIPT
guest_must() {
	local what=$1
	shift
	guest_do "$@" ||
		fail "$what: status $GUEST_RC${GUEST_STDERR:+: $(head -n 3 <<<"$GUEST_STDERR" | paste -sd ';' -)}"
}

# guest_login [IQN [NAME=VALUE...]]: discovery must list IQN (default:
# guest_boot's), then a node record for it on the forwarded portal, with
# the node settings NAME=VALUE (iscsid.conf names, e.g.
# node.session.timeo.replacement_timeout=10), and login. (The portal that
# SendTargets names is tcqd's 127.0.0.1:PORT, which is not the host from
# inside the guest, so the record is made by hand.)
guest_login() {
	local iqn=${1:-$GUEST_TARGET} kv
	[ -n "$iqn" ] || fail "guest_login: no target IQN"
	shift $(($# > 0 ? 1 : 0))
	guest_must "sendtargets discovery" \
		"iscsiadm -m discovery -t sendtargets -p $GUEST_PORTAL -o nonpersistent"
	grep -q " $iqn\$" <<<"$GUEST_STDOUT" ||
		fail "sendtargets discovery does not list $iqn: $GUEST_STDOUT"
	guest_must "node record" "iscsiadm -m node -o new -T $iqn -p $GUEST_PORTAL,1 >/dev/null"
	for kv in "$@"; do
		guest_must "node setting $kv" \
			"iscsiadm -m node -T $iqn -p $GUEST_PORTAL -o update -n ${kv%%=*} -v ${kv#*=}"
	done
	guest_must "login to $iqn" "iscsiadm -m node -T $iqn -p $GUEST_PORTAL -l"
	guest_must "session of $iqn" -t 20 "
		for i in \$(seq 100); do
			for s in /sys/class/iscsi_session/session*; do
				[ \"\$(cat \$s/targetname 2>/dev/null)\" = '$iqn' ] &&
					[ \"\$(cat \$s/state 2>/dev/null)\" = LOGGED_IN ] &&
					{ echo \${s##*/}; exit 0; }
			done
			sleep 0.1
		done
		exit 1"
	GUEST_SESSION=$GUEST_STDOUT
	gsay "logged in to $iqn: $GUEST_SESSION"
}

# guest_disk LUN [SECS]: waits (10 s by default) for the disk of LUN of the
# session GUEST_SESSION (of any session when it is empty, as in a check
# after the one that logged in: each check is a subshell): GUEST_DISK=sdX.
guest_disk() {
	local lun=$1 secs=${2:-10}
	GUEST_DISK=
	guest_do -t $((secs + 5)) "
		for i in \$(seq $((secs * 10))); do
			for b in /sys/class/iscsi_session/${GUEST_SESSION:-session*}/device/target*/*:*:*:$lun/block/*; do
				[ -e \"\$b\" ] && [ -b /dev/\${b##*/} ] && { echo \${b##*/}; exit 0; }
			done
			sleep 0.1
		done
		exit 1" && GUEST_DISK=$GUEST_STDOUT
	[ -n "$GUEST_DISK" ]
}

# guest_logout: every session logged out, and their disks gone.
guest_logout() {
	guest_must "logout" "iscsiadm -m node -u"
	guest_must "sessions gone after logout" -t 20 "
		for i in \$(seq 100); do
			ls /sys/class/iscsi_session/ 2>/dev/null | grep -q . || exit 0
			sleep 0.1
		done
		ls /sys/class/iscsi_session/; exit 1"
	GUEST_SESSION=
}

# guest_kill: qemu ends now (TERM, then KILL), the FIFOs close.
guest_kill() {
	local i
	[ -n "$GUEST_PID" ] || return 0
	kill -TERM "$GUEST_PID" 2>/dev/null
	for ((i = 0; i < 50; i++)); do
		guest_alive || break
		sleep 0.1
	done
	if guest_alive; then
		[ -n "$GUEST_QEMU_PID" ] && kill -KILL "$GUEST_QEMU_PID" 2>/dev/null
		kill -KILL "$GUEST_PID" 2>/dev/null
	fi
	wait "$GUEST_PID" 2>/dev/null
	GUEST_PID='' GUEST_QEMU_PID=''
	[ -n "$GUEST_IN" ] && exec {GUEST_IN}>&-
	[ -n "$GUEST_OUT" ] && exec {GUEST_OUT}<&-
	GUEST_IN='' GUEST_OUT=''
	return 0
}

# guest_stop: poweroff from inside (no answer comes), qemu exits by
# itself within 20 s; else it is killed and guest_stop returns 1.
guest_stop() {
	local i
	[ -n "$GUEST_PID" ] || return 0
	guest_alive && guest_send "$BASHPID-$SRANDOM" 10 "sync; poweroff -f"
	# 60 s: a TCG guest on two loaded CPUs (the sanitizers' make check
	# runs guests beside everything else) once took more than 20
	for ((i = 0; i < 600; i++)); do
		guest_alive || break
		sleep 0.1
	done
	if guest_alive; then
		gsay "no poweroff within 60 s: killing qemu"
		guest_log_tail 40 >&2
		guest_kill
		return 1
	fi
	guest_kill
}

# A signal to the shell that booted the guest (PIPE too: a reader of the
# TAP output that went away, as | head) stops qemu and the tcqd at once:
# the EXIT traps of checks.sh write TAP first, and a second SIGPIPE there
# would end the shell before they stop anything.
guest_signal() {
	trap '' PIPE
	guest_exit_hook
	if [ -n "${TCQD_PID:-}" ]; then
		kill -KILL "$TCQD_PID" 2>/dev/null
		wait "$TCQD_PID" 2>/dev/null
		TCQD_PID=''
	fi
	exit 1
}

# The fixture's shell (or the script's) stops its guest when it ends.
guest_exit_hook() {
	[ -n "$GUEST_PID" ] && [ "$BASHPID" = "$GUEST_OWNER" ] && guest_kill
	return 0
}
exit_hook() { guest_exit_hook; }
# A guest booted outside any fixture: the script's own exit stops it.
guest_script_cleanup() {
	local rc=$?
	guest_exit_hook
	(exit "$rc")
	lib_cleanup
}
trap guest_script_cleanup EXIT
