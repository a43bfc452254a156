#!/bin/bash
# The rbd backend against a real (throw-away) Ceph cluster: the disk
# suites of libiscsi's conformance suite with 0 failures, tcq-bench
# order-check and a --verify run through rbd, and an `rbd resize` seen by
# a logged-in initiator as CAPACITY DATA HAS CHANGED and the new size in
# READ CAPACITY(16), and commands that fail with sense data, not hang,
# while the OSD is frozen. Skips when tcqd was built without librbd or
# Ceph is not installed; scripts/install-deps installs it, and under
# scripts/check and CI that skip is a failure.
# shellcheck source=tests/integration/lib.sh
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"
# shellcheck source=tests/integration/ceph.sh
. "$top_srcdir/tests/integration/ceph.sh"
# shellcheck source=tests/integration/cu.sh
. "$top_srcdir/tests/integration/cu.sh"

BENCH=${BENCH:-$top_builddir/tcq-bench}
SCSICMD=${SCSICMD:-$top_builddir/tests/integration/scsicmd}
RBDCMD=${RBDCMD:-$top_builddir/tests/integration/rbdcmd}
TCQCTL=${TCQCTL:-$top_builddir/tcqctl}
: "${CONFORMANCE_TIMEOUT:=300}"
need_built "$TCQD" "$BENCH" "$SCSICMD" "$RBDCMD" "$TCQCTL"

ceph_need
need_tool iscsi-test-cu

# The cluster last (tcqd talks to it), then lib.sh's cleanup with the
# test's own status.
# shellcheck disable=SC2317  # called through the EXIT trap
rbd_cleanup() {
	local rc=$?
	ceph_stop
	if [ "$rc" -ne 0 ] && [ -n "$CEPH_DIR" ]; then
		for f in "$CEPH_DIR"/log/osd.0.log "$CEPH_DIR"/log/mon.a.log; do
			[ -s "$f" ] && { echo "# ----- $f -----"; tail -n 30 "$f" | sed 's/^/# /'; }
		done
	fi
	(exit "$rc")
	lib_cleanup
}
trap rbd_cleanup EXIT

# A check that froze the OSD lets it go, whatever happened.
exit_hook() {
	local osd
	osd=$(ceph_pid osd.0)
	[ -n "$osd" ] && kill -CONT "$osd" 2>/dev/null
	return 0
}

if ! listing "$@"; then
	t0=$SECONDS
	ceph_start "$TEST_TMP/ceph" || fail "the Ceph cluster did not start"
	say "Ceph cluster started in $((SECONDS - t0)) s"
	# Layering only: no exclusive lock, whose holder, if killed, would stall
	# the next writer until its watch times out.
	run timeout 60 rbd create --size 128M --image-feature layering rbd/disk ||
		fail "rbd create failed"
fi
CTL_SOCK=$TEST_TMP/ctl.sock

fixture_rbd() {
	start_tcqd --backend rbd:pool=rbd,image=disk,timeout=20 \
		--iqn iqn.2026-11.org.tcq:rbd --ctl "$CTL_SOCK"
}

rbd_image_size_reported() {
	grep -q 'rbd rbd/disk: 134217728 bytes' "$TCQD_LOG" ||
		fail "tcqd did not report the image's size"
	ok "tcqd reports the image's 134217728 bytes"
}

# Skips allowed here, each for a LUN kind a plain disk is not (they run
# in conformance-all.sh on LUNs configured so) or a second path
# (rbd-gateways.sh runs MultipathIO across two gateways).
RBD_SKIPS='not removable|not write-protected|--allow-sanitize|LBPPB < 2|Multipath unavailable'
# ... and these: see conformance.sh (SKIP_OK, KNOWN).
RBD_OTHER=(SCSI.ExtendedCopy.ValidTgtDescr iSCSI.iSCSITMF.LUNResetSimpleAsync)

# Every iscsi-test-cu test (ALL) against the rbd LUN: 0 failures, each test
# reported, and no skip but the allowed ones.
rbd_cu_all_passes() {
	local log=$TEST_TMP/cu-all.log t r why bad=() n=0 nskip=0 o
	declare -A got=() reason=()
	CLIENT_TIMEOUT=$CONFORMANCE_TIMEOUT cu_run "$log" -d \
		-i "$INITIATOR" -I "$INITIATOR2" --test=ALL "$TCQD_URL"
	while IFS=$'\t' read -r t r why; do
		[ "$t" = NOSUMMARY ] && { cat "$log"; fail "ALL: no CUnit summary"; }
		# ALL reports each test under the family ALL
		got[${t#ALL.}]=$r reason[${t#ALL.}]=$why
	done < <(cu_results "$log" ALL)
	while read -r t; do
		n=$((n + 1))
		r=${got[${t#*.}]:-missing} why=${reason[${t#*.}]:-}
		for o in "${RBD_OTHER[@]}"; do [ "$o" = "$t" ] && r=other; done
		case $r in
		passed | other) ;;
		skipped | partial)
			grep -Eq "$RBD_SKIPS" <<<"$why" || bad+=("$t: $r: $why")
			nskip=$((nskip + 1)) ;;
		*) bad+=("$t: $r${why:+: $why}") ;;
		esac
	done < <(cu_tests ALL)
	[ "${#bad[@]}" -eq 0 ] || { cat "$log"; fail "ALL: $(printf '%s; ' "${bad[@]}")"; }
	ok "iscsi-test-cu ALL through rbd: all $n tests reported, none failed, $nskip skipped for other LUN kinds or a second path"
	tcqd_alive
}

rbd_order_check_no_violation() { order_check_clean "$TCQD_URL"; }

rbd_every_acknowledged_write_reads_back() {
	run "$BENCH" --engine libiscsi --rw write,randwrite,read --verify \
		--span 16m --bs 4k,64k --depth 8 --sessions 2 --runtime 3 --quiet \
		"$TCQD_URL" || fail "--verify through rbd failed"
	ok "--verify passes through rbd"
}

# COMPARE AND WRITE through rbd_aio_compare_and_write (atomic in the
# cluster; librbd 16.2 takes one 512-byte sector, so the LUN reports a
# maximum of 1 block), a miscompare with the offset of the first differing
# byte in INFORMATION, WRITE SAME(16) through rbd_aio_writesame, and
# cache=none (the default) reported as no volatile write cache.
rbd_compare_and_write_and_write_same() {
	local expect
	run "$RBDCMD" "$TCQD_URL" limits wce write 45000 2 11 caw 45000 1 11 22 \
		read 45000 1 22 caw 45001 1 11 33 300 read 45001 1 11 \
		caw 45000 2 22 33 write 53000 1 00 ws 50000 3000 5c \
		read 50000 256 5c read 52744 256 5c read 53000 1 00 ||
		fail "rbdcmd failed"
	expect=$(printf '%s\n' "MAXCAW 1" "WCE 0 V_SUP 0" GOOD GOOD GOOD \
		"CHECK CONDITION key=0xe asc=0x1d ascq=0x00 info=300" GOOD \
		"CHECK CONDITION key=0x5 asc=0x24 ascq=0x00" GOOD GOOD GOOD GOOD GOOD)
	[ "$OUT" = "$expect" ] || {
		printf 'got:\n%s\nexpected:\n%s\n' "$OUT" "$expect"
		fail "COMPARE AND WRITE / WRITE SAME through rbd"
	}
	ok "COMPARE AND WRITE (match, miscompare at byte 300, limit 1), WRITE SAME 16 and WCE 0 through rbd"
}

# tcqctl cannot claim a cache that cache=none does not have.
rbd_tcqctl_refuses_write_cache_on() {
	local rc=0
	run "$TCQCTL" -s "$CTL_SOCK" set 0 write_cache=on || rc=$?
	[ "$rc" -ne 0 ] && [[ $OUT == *"no volatile write cache"* ]] ||
		fail "tcqctl set write_cache=on on cache=none: rc $rc, '$OUT'"
	run "$RBDCMD" "$TCQD_URL" wce || fail "rbdcmd wce failed"
	[ "$OUT" = "WCE 0 V_SUP 0" ] || fail "WCE changed by tcqctl: $OUT"
	ok "tcqctl refuses write_cache=on on a write-through rbd LUN"
}

# rbd resize under a logged-in initiator: its next command gets CAPACITY
# DATA HAS CHANGED (6/2A/09), then READ CAPACITY(16) the new size; the
# new blocks are usable at once.
rbd_resize_seen_by_logged_in_initiator() {
	local rc=0
	: >"$TEST_TMP/sc.out"
	"$SCSICMD" "$TCQD_URL" readcap waitfile "$TEST_TMP/resized" readcap \
		readcap >"$TEST_TMP/sc.out" 2>&1 &
	BG_PIDS+=($!)
	wait_until 100 grep -q CAPACITY "$TEST_TMP/sc.out"
	grep -qx 'CAPACITY 262144' "$TEST_TMP/sc.out" ||
		{ cat "$TEST_TMP/sc.out"; fail "READ CAPACITY(16) before the resize"; }
	run timeout 60 rbd resize --size 192M rbd/disk || fail "rbd resize failed"
	wait_until 100 log_grep -q 'rbd rbd/disk: resized'
	log_grep -q 'rbd rbd/disk: resized from 134217728 to 201326592' ||
		fail "tcqd did not see the resize within 10 s"
	touch "$TEST_TMP/resized"
	wait "${BG_PIDS[-1]}" || rc=$?
	unset 'BG_PIDS[-1]'
	cat "$TEST_TMP/sc.out"
	[ "$rc" -eq 0 ] || fail "scsicmd exit $rc"
	[ "$(sed -n 3p "$TEST_TMP/sc.out")" = "CHECK CONDITION key=0x6 asc=0x2a ascq=0x09" ] ||
		fail "no CAPACITY DATA HAS CHANGED after the resize"
	[ "$(sed -n 4p "$TEST_TMP/sc.out")" = "CAPACITY 393216" ] ||
		fail "READ CAPACITY(16) does not show the new size"
	ok "rbd resize: CAPACITY DATA HAS CHANGED, then 393216 blocks"
	run "$SCSICMD" "$TCQD_URL" write 393000 8 5a fua read 393000 8 5a ||
		fail "scsicmd failed past the old end"
	[ "$OUT" = $'GOOD\nGOOD' ] || fail "I/O past the old end failed"
	ok "I/O beyond the old size works"
}

# ---- a cluster that stops answering (the OSD frozen) ---------------------
fixture_frozen() {
	start_tcqd --backend rbd:pool=rbd,image=disk,timeout=3 \
		--iqn iqn.2026-11.org.tcq:rbd
}

# Commands fail with sense data after timeout= seconds instead of
# hanging, and work again once the cluster answers.
frozen_osd_gives_medium_error_then_recovers() {
	local osd t1 rc=0
	osd=$(ceph_pid osd.0)
	[ -n "$osd" ] || fail "no OSD pid"
	kill -STOP "$osd"
	t1=$SECONDS
	run "$SCSICMD" "$TCQD_URL" write 100 8 77 fua read 100 8 - || rc=$?
	kill -CONT "$osd"
	[ "$rc" -eq 0 ] || fail "scsicmd exit $rc with the OSD frozen"
	[ "$(grep -c '^CHECK CONDITION key=0x3 ' <<<"$OUT")" -eq 2 ] ||
		fail "commands to a frozen cluster did not end in MEDIUM ERROR"
	ok "frozen cluster: MEDIUM ERROR after $((SECONDS - t1)) s, no hang"
	run "$SCSICMD" "$TCQD_URL" write 100 8 77 fua read 100 8 77 ||
		fail "scsicmd failed after the OSD came back"
	[ "$OUT" = $'GOOD\nGOOD' ] ||
		fail "I/O did not recover once the OSD answered again"
	ok "I/O recovers when the cluster answers again"
}

CHECKS=(
	@rbd
	rbd_image_size_reported
	rbd_cu_all_passes
	rbd_order_check_no_violation
	rbd_every_acknowledged_write_reads_back
	rbd_compare_and_write_and_write_same
	rbd_tcqctl_refuses_write_cache_on
	rbd_resize_seen_by_logged_in_initiator
	@frozen
	frozen_osd_gives_medium_error_then_recovers
)
run_checks "$@"
