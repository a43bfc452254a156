#!/bin/bash
# The crash lab on a real file system (docs/crash-lab.md): the Linux
# guest's ext4 (tests/guest/guest.sh), recorded by tcqd, then every crash
# state SBC-4 allows at each step of a workload checked by tcq-crash.
#
# Three LUNs, each a 32 MiB ext4 made on the host (mkfs.ext4, default
# features) before tcqd starts, so each recording's base is a clean file
# system; each records (record = FILE) with the write cache on:
#   LUN 0  mounted with the default options (journal commits flush and FUA)
#   LUN 1  mounted -o nobarrier (ext4 sends no flush, no FUA)
#   LUN 2  mounted with the default options on a LUN with flush = ignore
#          (a device that answers SYNCHRONIZE CACHE without flushing)
# The guest runs the workload of tests/guest/crash-ext4-check.sh on all
# three, a step at a time, each step ending in an fsync; after each step
# returns, the host marks the three recordings "step N" (tcqctl mark).
# Then the power goes: qemu is killed with the file systems mounted, and
# tcqd stopped, which ends the recordings. tcq-crash check --at-marks runs
# crash-ext4-check.sh on the states of every mark (the journal replayed,
# e2fsck -fn clean, every file fsynced before the mark reads back):
#  - LUN 0: no state fails: what ext4 fsynced survives every crash SCSI
#    allows;
#  - LUN 1 and LUN 2: states fail, each shrunk to the few writes whose
#    loss breaks the promise of an fsync.
#
# In make check; by hand: cd build && bash ../tests/guest/crash-ext4.sh
# (KEEP_TMP=1 keeps the recordings and tcq-crash's reports). CRASH_MAX
# sets --max (states a mark) of the default-options check.
# The checks run by name (checks.sh):
# shellcheck disable=SC2317
# shellcheck source=tests/integration/lib.sh
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"
# shellcheck source=tests/guest/guest.sh
. "$top_srcdir/tests/guest/guest.sh"
# shellcheck source=tests/guest/crash-ext4-check.sh
. "$top_srcdir/tests/guest/crash-ext4-check.sh"

TCQCTL=${TCQCTL:-$top_builddir/tcqctl}
CRASH=${CRASH:-$top_builddir/tcq-crash}
need_built "$TCQCTL" "$CRASH"
need_tool mkfs.ext4 e2fsck debugfs
IQN=iqn.2026-11.org.tcq:guest-crash-ext4
SOCK=$TEST_TMP/ctl.sock
CONF=$TEST_TMP/tcqd.conf
CHECKER=$top_srcdir/tests/guest/crash-ext4-check.sh
: "${CRASH_MAX:=32}"
# LUN -> mount options, and the LUN's own line of tcqd.conf
MOUNT_OPTS=(defaults nobarrier defaults)
LUN_EXTRA=("" "" "flush = ignore")

fixture_ext4() {
	local l n d
	{
		printf '[global]\nlisten = 127.0.0.1:0\nthreads = 2\nctl = %s\n' "$SOCK"
		printf '[target %s]\n' "$IQN"
	} >"$CONF"
	for l in 0 1 2; do
		rm -f "$TEST_TMP/lun$l.img" "$TEST_TMP/rec$l" "$TEST_TMP/rec$l.base"
		truncate -s 32M "$TEST_TMP/lun$l.img" &&
			mkfs.ext4 -q -F "$TEST_TMP/lun$l.img" ||
			fail "mkfs.ext4 of LUN $l failed"
		printf '[lun %s %s]\npath = %s\nsize = 32M\nrecord = %s\nwrite_cache = on\n%s\n' \
			"$IQN" "$l" "$TEST_TMP/lun$l.img" "$TEST_TMP/rec$l" "${LUN_EXTRA[$l]}" >>"$CONF"
	done
	start_tcqd -c "$CONF"
	guest_boot "$TCQD_PORT" "$IQN"
	guest_login "$IQN"
	for l in 0 1 2; do
		guest_disk "$l" || fail "no disk for LUN $l"
		guest_must "mount LUN $l (-o ${MOUNT_OPTS[$l]})" \
			"mkdir -p /m$l && mount -t ext4 -o ${MOUNT_OPTS[$l]} /dev/$GUEST_DISK /m$l &&
			grep ' /m$l ' /proc/mounts"
		say "LUN $l: $GUEST_STDOUT"
		case ${MOUNT_OPTS[$l]},$GUEST_STDOUT in
		nobarrier,*nobarrier*) ;;
		nobarrier,*) fail "ext4 did not take -o nobarrier: $GUEST_STDOUT" ;;
		*nobarrier*) fail "LUN $l is mounted nobarrier: $GUEST_STDOUT" ;;
		esac
	done
	guest_run "dmesg | grep -i 'ext4\|jbd2' | tail -n 6"
	for ((n = 1; n <= ext4_steps; n++)); do
		d=''
		for l in 0 1 2; do
			d+="$(ext4_step_script "$n" "/m$l") || exit 1"$'\n'
		done
		guest_must "step $n" -t 90 "$d"
		for l in 0 1 2; do
			run "$TCQCTL" -s "$SOCK" mark "$IQN/$l" step "$n" ||
				fail "tcqctl mark $IQN/$l 'step $n' failed: $OUT"
		done
	done
	# The power cut: the guest dies with its file systems mounted; then
	# tcqd stops, which ends the recordings.
	guest_kill
	stop_tcqd_rc || fail "$STOP_WHY"
	for l in 0 1 2; do
		run "$CRASH" info "$TEST_TMP/rec$l" || fail "tcq-crash info rec$l"
		grep -q "nexuses, $ext4_steps marks\$" <<<"$OUT" ||
			fail "rec$l: not $ext4_steps marks"
		grep -q '^base: ' <<<"$OUT" && ! grep -q '^base: zeros' <<<"$OUT" ||
			fail "rec$l: its base is not the ext4 made before tcqd started"
		grep -q '^end: stopped' <<<"$OUT" || fail "rec$l did not end with tcqd's stop"
		# SYNCHRONIZE CACHE (0x35): ext4's journal commits, none nobarrier
		if [ "${MOUNT_OPTS[$l]}" = nobarrier ]; then
			! grep -q '^opcodes:.* 0x35 x' <<<"$OUT" ||
				fail "rec$l: SYNCHRONIZE CACHE from a nobarrier mount"
		else
			grep -q '^opcodes:.* 0x35 x' <<<"$OUT" ||
				fail "rec$l: no SYNCHRONIZE CACHE recorded"
		fi
	done
}

teardown_ext4() { ok "the recordings ended with tcqd's stop"; }

# crash_check LUN MAX: tcq-crash check of recording LUN at every mark with
# the checker ($OUT, its status in CRASH_RC); the report is kept in
# $TEST_TMP/check.LUN.
CRASH_RC=
crash_check() {
	local l=$1 max=$2 t0=$SECONDS fast
	CRASH_RC=0
	# The state's image and the checker's copy on a tmpfs when there is
	# one: e2fsck's fsyncs there cost nothing.
	fast=$(mktemp -d /dev/shm/tcq-crash-ext4.XXXXXX 2>/dev/null) ||
		{ fast=$TEST_TMP/work.$l && mkdir -p "$fast"; }
	CLIENT_TIMEOUT=300 run env TMPDIR="$fast" "$CRASH" check "$TEST_TMP/rec$l" \
		--at-marks --max "$max" --workdir "$fast" \
		--cmd "CRASH_EXT4_LOG=$TEST_TMP/why.$l CRASH_EXT4_CACHE=$fast bash $CHECKER {image} {mark}" ||
		CRASH_RC=$?
	rm -rf "$fast"
	printf '%s\n' "$OUT" >"$TEST_TMP/check.$l"
	say "tcq-crash check of LUN $l: status $CRASH_RC in $((SECONDS - t0)) s"
	[ "$CRASH_RC" -le 1 ] || fail "tcq-crash check rec$l: status $CRASH_RC"
	grep -q '^[0-9]* states checked at [0-9]* points' <<<"$OUT" ||
		fail "tcq-crash check rec$l: no summary line"
}

# points_checked: every mark was a crash point of the last crash_check.
points_checked() {
	local p
	p=$(grep -c "^crash point: .*, mark step [0-9]* " <<<"$OUT")
	[ "$p" = "$ext4_steps" ] || fail "$p crash points checked, not $ext4_steps"
}

default_mount_survives_every_crash() {
	local states
	crash_check 0 "$CRASH_MAX"
	points_checked
	states=$(sed -n 's/^\([0-9]*\) states checked at .*/\1/p' <<<"$OUT")
	[ "$states" -gt "$ext4_steps" ] || fail "only $states states checked"
	[ "$CRASH_RC" = 0 ] && grep -q ', 0 failing (' <<<"$OUT" ||
		fail "a crash state of the default mount lost fsynced data: $(head -n 3 "$TEST_TMP/why.0" 2>/dev/null)"
	ok "default mount options: $states states at $ext4_steps marks, 0 failing"
}

# fails_somewhere LUN WHAT: the last crash_check found failing states,
# each shrunk to the writes it drops.
fails_somewhere() {
	local l=$1 what=$2 nfail
	points_checked
	nfail=$(sed -n 's/.* states checked at .*, \([0-9]*\) failing (.*/\1/p' <<<"$OUT")
	[ "$CRASH_RC" = 1 ] && [ "${nfail:-0}" -gt 0 ] ||
		fail "$what: no failing crash state (status $CRASH_RC)"
	grep -q '^  FAIL state ' <<<"$OUT" || fail "$what: no FAIL line"
	grep -A1 -m1 '^    the fewest writes it drops' <<<"$OUT" | grep -q 'task [0-9]* (nexus' ||
		fail "$what: a failing state without its minimal set of dropped writes"
	# the first failing state: its crash point, label, fewest dropped
	# writes; the checker's first complaint is about it (it ran first)
	ok "$what: $nfail failing states; the first, at mark $(awk '
		/^crash point: / { sub(/.*, mark /, ""); sub(/ \(model.*/, ""); m = $0 }
		/^  FAIL state / { sub(/: CRASH_EXT4_LOG=.*/, ""); sub(/^  FAIL /, ""); print m ", " $0; f = 1; next }
		f && /^      / { sub(/^ */, ""); print "drops " $0; exit }' <<<"$OUT" |
		paste -sd ' ' -): $(head -n 1 "$TEST_TMP/why.$l" 2>/dev/null)"
}

nobarrier_loses_fsynced_data() {
	crash_check 1 4
	fails_somewhere 1 "mount -o nobarrier"
}

flush_ignore_loses_fsynced_data() {
	crash_check 2 4
	fails_somewhere 2 "flush = ignore"
}

CHECKS=(
	@ext4
	default_mount_survives_every_crash
	nobarrier_loses_fsynced_data
	flush_ignore_loses_fsynced_data
)
run_checks "$@"
