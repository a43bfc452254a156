#!/bin/bash
# The rbd backend against a real (throw-away) Ceph cluster: the disk
# suites of libiscsi's conformance suite with 0 failures, tcq-bench
# order-check and a --verify run through rbd, and an `rbd resize` seen by
# a logged-in initiator as CAPACITY DATA HAS CHANGED and the new size in
# READ CAPACITY(16), and commands that fail with sense data, not hang,
# while the OSD is frozen. Skips (77) when tcqd was built without librbd or Ceph
# is not installed; scripts/install-deps installs it, so CI runs it.
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/integration/ceph.sh
. "$top_srcdir/tests/integration/ceph.sh"

BENCH=${BENCH:-$top_builddir/tcq-bench}
SCSICMD=${SCSICMD:-$top_builddir/tests/integration/scsicmd}
RBDCMD=${RBDCMD:-$top_builddir/tests/integration/rbdcmd}
: "${CONFORMANCE_TIMEOUT:=300}"
[ -x "$TCQD" ] || fail "tcqd not built at $TCQD"
[ -x "$BENCH" ] || fail "tcq-bench not built at $BENCH"
[ -x "$SCSICMD" ] || fail "scsicmd not built at $SCSICMD"
[ -x "$RBDCMD" ] || fail "rbdcmd not built at $RBDCMD"

probe=$(CEPH_CONF=/nonexistent timeout 10 "$TCQD" --backend rbd:image=probe \
	--listen 127.0.0.1:0 2>&1 </dev/null)
grep -q 'built without librbd' <<<"$probe" &&
	skip "tcqd was built without librbd (install librbd-dev librados-dev, re-run configure)"
ceph_available ||
	skip "Ceph is not installed (scripts/install-deps installs ceph-mon ceph-osd ceph-mgr ceph-common)"
need_tool iscsi-test-cu

# tcqd first (it talks to the cluster), then the cluster, then lib.sh's
# cleanup with the test's own status.
# shellcheck disable=SC2317  # called through the EXIT trap
rbd_cleanup() {
	local rc=$? i
	if [ -n "$TCQD_PID" ]; then
		kill -TERM "$TCQD_PID" 2>/dev/null
		for ((i = 0; i < 50; i++)); do
			kill -0 "$TCQD_PID" 2>/dev/null || break
			sleep 0.1
		done
		kill -KILL "$TCQD_PID" 2>/dev/null
		wait "$TCQD_PID" 2>/dev/null
		TCQD_PID=
	fi
	ceph_stop
	if [ "$rc" -ne 0 ] && [ "$rc" -ne 77 ] && [ -n "$CEPH_DIR" ]; then
		for f in "$CEPH_DIR"/log/osd.0.log "$CEPH_DIR"/log/mon.a.log; do
			[ -s "$f" ] && { echo "----- $f -----"; tail -n 30 "$f"; }
		done
	fi
	(exit "$rc")
	lib_cleanup
}
trap rbd_cleanup EXIT

t0=$SECONDS
ceph_start "$TEST_TMP/ceph" || fail "the Ceph cluster did not start"
ok "Ceph cluster started in $((SECONDS - t0)) s"
# Layering only: no exclusive lock, whose holder, if killed, would stall
# the next writer until its watch times out.
run timeout 60 rbd create --size 128M --image-feature layering rbd/disk ||
	fail "rbd create failed"

CTL_SOCK=$TEST_TMP/ctl.sock
start_tcqd --backend rbd:pool=rbd,image=disk,timeout=20 \
	--iqn iqn.2026-11.org.tcq:rbd --ctl "$CTL_SOCK"
grep -q 'rbd rbd/disk: 134217728 bytes' "$TCQD_LOG" ||
	fail "tcqd did not report the image's size"

# 1. Every iscsi-test-cu suite (ALL) against the rbd LUN: 0 failures, and
# the only tests skipped are those for LUN kinds a plain disk is not
# (removable media, write-protected, SANITIZE allowed, LBPPB > 0; those
# run in conformance-all.sh on LUNs configured so) and MultipathIO, which
# needs a second URL (rbd-gateways.sh runs it across two gateways).
log=$TEST_TMP/cu-all.log
rc=0
t1=$SECONDS
CLIENT_TIMEOUT=$CONFORMANCE_TIMEOUT tc iscsi-test-cu -d \
	-i "$INITIATOR" -I "$INITIATOR2" --test=ALL "$TCQD_URL" \
	>"$log" 2>&1 || rc=$?
tests=$(awk '$1 == "tests" { print $3 " ran, " $4 " passed, " $5 " failed" }' "$log")
if [ "$rc" -ne 0 ] || [ -z "$tests" ] ||
	! awk '$1 == "tests" && ($5 != 0 || $3 < 229) { exit 1 }' "$log"; then
	cat "$log"
	fail "ALL: iscsi-test-cu exit $rc (${tests:-no summary})"
fi
nskip=$(grep -c 'SKIPPED' "$log" || true)
odd=$(grep 'SKIPPED' "$log" | grep -Ev 'not removable|not write-protected|--allow-sanitize|LBPPB < 2|Multipath unavailable' || true)
[ -z "$odd" ] || { cat "$log"; fail "unexpected skips: $odd"; }
ok "iscsi-test-cu ALL through rbd: $tests, $nskip skipped for other LUN kinds or a second path ($((SECONDS - t1)) s)"
tcqd_alive

# 2. SAM-5 ordering survives the trip through RADOS.
run "$BENCH" order-check --count 2000 "$TCQD_URL" ||
	fail "order-check through rbd failed"
grep -q '^order-check: 0 violations' <<<"$OUT" ||
	fail "order-check reported violations"
ok "order-check through rbd: 0 violations"

# 3. Every acknowledged write reads back.
run "$BENCH" --engine libiscsi --rw write,randwrite,read --verify \
	--span 16m --bs 4k,64k --depth 8 --sessions 2 --runtime 3 --quiet \
	"$TCQD_URL" || fail "--verify through rbd failed"
ok "--verify passes through rbd"

# 3b. COMPARE AND WRITE through rbd_aio_compare_and_write (atomic in the
# cluster; librbd 16.2 takes one 512-byte sector, so the LUN reports a
# maximum of 1 block), a miscompare with the offset of the first differing
# byte in INFORMATION, WRITE SAME(16) through rbd_aio_writesame, and
# cache=none (the default) reported as no volatile write cache.
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
# ... and tcqctl cannot claim a cache that cache=none does not have.
TCQCTL=${TCQCTL:-$top_builddir/tcqctl}
rc=0
run "$TCQCTL" -s "$CTL_SOCK" set 0 write_cache=on || rc=$?
[ "$rc" -ne 0 ] && [[ $OUT == *"no volatile write cache"* ]] ||
	fail "tcqctl set write_cache=on on cache=none: rc $rc, '$OUT'"
run "$RBDCMD" "$TCQD_URL" wce || fail "rbdcmd wce failed"
[ "$OUT" = "WCE 0 V_SUP 0" ] || fail "WCE changed by tcqctl: $OUT"
ok "tcqctl refuses write_cache=on on a write-through rbd LUN"

# 4. rbd resize under a logged-in initiator: its next command gets
# CAPACITY DATA HAS CHANGED (6/2A/09), then READ CAPACITY(16) the new size.
: >"$TEST_TMP/sc.out"
"$SCSICMD" "$TCQD_URL" readcap waitfile "$TEST_TMP/resized" readcap \
	readcap >"$TEST_TMP/sc.out" 2>&1 &
sc_pid=$!
for ((i = 0; i < 100; i++)); do
	grep -q CAPACITY "$TEST_TMP/sc.out" && break
	sleep 0.1
done
grep -qx 'CAPACITY 262144' "$TEST_TMP/sc.out" ||
	{ cat "$TEST_TMP/sc.out"; fail "READ CAPACITY(16) before the resize"; }
run timeout 60 rbd resize --size 192M rbd/disk || fail "rbd resize failed"
for ((i = 0; i < 100; i++)); do
	grep -q 'rbd rbd/disk: resized' "$TCQD_LOG" && break
	sleep 0.1
done
grep -q 'rbd rbd/disk: resized from 134217728 to 201326592' "$TCQD_LOG" ||
	fail "tcqd did not see the resize within 10 s"
touch "$TEST_TMP/resized"
rc=0
wait "$sc_pid" || rc=$?
cat "$TEST_TMP/sc.out"
[ "$rc" -eq 0 ] || fail "scsicmd exit $rc"
[ "$(sed -n 3p "$TEST_TMP/sc.out")" = "CHECK CONDITION key=0x6 asc=0x2a ascq=0x09" ] ||
	fail "no CAPACITY DATA HAS CHANGED after the resize"
[ "$(sed -n 4p "$TEST_TMP/sc.out")" = "CAPACITY 393216" ] ||
	fail "READ CAPACITY(16) does not show the new size"
ok "rbd resize: CAPACITY DATA HAS CHANGED, then 393216 blocks"
# The new blocks are usable at once.
run "$SCSICMD" "$TCQD_URL" write 393000 8 5a fua read 393000 8 5a ||
	fail "scsicmd failed past the old end"
[ "$(printf '%s\n' "$OUT" | grep -c '^GOOD$')" -eq 2 ] ||
	fail "I/O past the old end failed"
ok "I/O beyond the old size works"

stop_tcqd

# 5. A cluster that stops answering (the OSD frozen): commands fail with
# sense data after timeout= seconds instead of hanging, and work again
# once it is back.
start_tcqd --backend rbd:pool=rbd,image=disk,timeout=3 \
	--iqn iqn.2026-11.org.tcq:rbd
osd=$(ceph_pid osd.0)
[ -n "$osd" ] || fail "no OSD pid"
kill -STOP "$osd"
t1=$SECONDS
run "$SCSICMD" "$TCQD_URL" write 100 8 77 fua read 100 8 -
rc=$?
kill -CONT "$osd"
[ "$rc" -eq 0 ] || fail "scsicmd exit $rc with the OSD frozen"
[ "$(printf '%s\n' "$OUT" | grep -c '^CHECK CONDITION key=0x3 ')" -eq 2 ] ||
	fail "commands to a frozen cluster did not end in MEDIUM ERROR"
ok "frozen cluster: MEDIUM ERROR after $((SECONDS - t1)) s, no hang"
run "$SCSICMD" "$TCQD_URL" write 100 8 77 fua read 100 8 77 ||
	fail "scsicmd failed after the OSD came back"
[ "$(printf '%s\n' "$OUT" | grep -c '^GOOD$')" -eq 2 ] ||
	fail "I/O did not recover once the OSD answered again"
ok "I/O recovers when the cluster answers again"
stop_tcqd
pass "rbd backend: conformance, ordering, verify, resize and timeouts in $((SECONDS - t0)) s"
