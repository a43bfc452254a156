#!/bin/bash
# Per-initiator CHAP and LUN maps ([initiator TARGET INITIATOR-NAME],
# tcqd.conf(5)), with libiscsi clients of three initiator names against
# one target of 3 LUNs, each holding its own data:
#  - each initiator's REPORT LUNS lists exactly its map, under its numbers
#    (SPC-4 6.33: LUN LIST LENGTH 8 bytes a LUN, single-level peripheral
#    addressing 00h LL 00h...), and its LUN numbers read the data of the
#    target LUN the map names;
#  - a LUN mapped :ro answers WRITE with DATA PROTECT, WRITE PROTECTED
#    (07h/27h/00h), SYNCHRONIZE CACHE with GOOD, and MODE SENSE shows WP=1
#    (SBC-3 6.4.1) to that initiator only; a number not in the map gets
#    LOGICAL UNIT NOT SUPPORTED (05h/25h/00h) and INQUIRY peripheral
#    qualifier 3 (SPC-4 6.6.2: byte 0 = 7Fh);
#  - on a target without CHAP, an initiator with its own CHAP must use it
#    (0x0201 without), the others log in without; on a target with CHAP,
#    an initiator's own secret replaces the target's for it alone; a
#    wrong secret of one initiator leaves the others logging in;
#  - tcqctl acl set/clear changes a map live: the open session's next
#    command gets REPORTED LUNS DATA HAS CHANGED (06h/3Fh/0Eh), then the
#    new map (a LUN taken out answers 25h/00h); a new secret counts from
#    the next login; save, a restart from the saved file and a reload keep
#    the sections; bad input is refused by name and changes nothing.
# shellcheck source=tests/integration/lib.sh
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

TCQCTL=${TCQCTL:-$top_builddir/tcqctl}
LIVECDB=${LIVECDB:-$top_builddir/tests/integration/livecdb}
RAWCDB=${RAWCDB:-$top_builddir/tests/integration/rawcdb}
SCSICMD=${SCSICMD:-$top_builddir/tests/integration/scsicmd}
need_built "$TCQCTL" "$LIVECDB" "$RAWCDB" "$SCSICMD"
need_tool iscsi-inq

SOCK=$TEST_TMP/ctl.sock
CONF=$TEST_TMP/tcqd.conf
SAVED=$TEST_TMP/saved.conf
T=iqn.2026-11.org.tcq:initiators
I1=$INITIATOR I2=$INITIATOR2 I3=iqn.2026-11.org.tcq:test-initiator-3
S1=host1-secret-01		# I1's own CHAP secret
TSECRET=target-secret-01	# the target's (fixture chap_target)
AUTH_FAILED=0x0201

TUR=000000000000
INQ=120000006000:96
REPORT_LUNS=a00000000000000001000000:256	# REPORT LUNS, 256 bytes
MODE_SENSE=1a003f00ff00:255			# MODE SENSE(6), all pages
READ1=28000000000000000100:512			# READ(10) of LBA 0
UA_LUNS="CHECK CONDITION key=0x6 asc=0x3f ascq=0x0e"
NO_LUN="CHECK CONDITION key=0x5 asc=0x25 ascq=0x00"
WRITE_PROTECTED="CHECK CONDITION key=0x7 asc=0x27 ascq=0x00"

ctl() { run "$TCQCTL" --ctl "$SOCK" "$@"; }
# url LUN [USER%SECRET@]: a LUN of the running tcqd.
url() { printf 'iscsi://%s127.0.0.1:%s/%s/%s' "${2:-}" "$TCQD_PORT" "$T" "$1"; }
# as NAME PROG ARGS...: PROG runs as initiator NAME.
as() { local name=$1; shift; INITIATOR=$name run "$@"; }
# I1 logs in with its own CHAP.
url1() { url "$1" "host1%$S1@"; }

# lun_list N...: REPORT LUNS parameter data listing LUNs N, as rawcdb
# prints it (SPC-4 6.33: the list length, 4 reserved bytes, then 8 bytes
# a LUN: peripheral device addressing, 00h and the number).
lun_list() {
	local n
	printf 'GOOD %08x00000000' $((8 * $#))
	for n in "$@"; do printf '00%02x000000000000' "$n"; done
}

# report_is NAME URL N...: NAME's REPORT LUNS lists LUNs N.
report_is() {
	local name=$1 u=$2 want
	shift 2
	want=$(lun_list "$@")
	as "$name" "$RAWCDB" "$u" "$REPORT_LUNS" ||
		fail "$name: REPORT LUNS failed: $OUT"
	[ "$OUT" = "$want" ] ||
		fail "$name: REPORT LUNS gave '$OUT', expected LUNs $* ('$want')"
}

# reads NAME URL BYTE: NAME reads 8 blocks of BYTE at LBA 0 of URL.
reads() {
	as "$1" "$SCSICMD" "$2" read 0 8 "$3" || fail "$1: read failed: $OUT"
	[ "$OUT" = GOOD ] || fail "$1: $2 does not hold $3: $OUT"
}

# target_conf [KEY-LINE...]: target T with the KEY-LINEs, and LUNs 0-2 of
# 1 MiB each.
target_conf() {
	{
		printf '[global]\nlisten = 127.0.0.1:0\nthreads = 2\n'
		printf 'ctl = %s\n[target %s]\n' "$SOCK" "$T"
		printf '%s\n' "$@"
		for n in 0 1 2; do
			printf '[lun %s %d]\npath = %s\nsize = 1M\ncreate = yes\n' \
				"$T" "$n" "$TEST_TMP/lun$n.img"
		done
	} >"$CONF"
}

# ua_seen LUN: the open session's commands to LUN (up to 3) report
# REPORTED LUNS DATA HAS CHANGED before they run GOOD (a LUN the session
# reaches for the first time reports POWER ON, RESET (29h/00h) first).
ua_seen() {
	local i seen=0
	for ((i = 0; i < 3; i++)); do
		watch "$1 $TUR"
		[ "$ANS" = "$UA_LUNS" ] && seen=1
		[ "$ANS" = "GOOD -" ] && break
	done
	[ "$seen" = 1 ] && [ "$ANS" = "GOOD -" ] ||
		fail "LUN $1 of the open session: no 3F/0E before GOOD (last: $ANS)"
}

# ---- a target without CHAP ------------------------------------------------
fixture_maps() {
	target_conf
	cat >>"$CONF" <<EOF
[initiator $T $I1]
chap_user = host1
chap_secret = $S1
luns = 0,2:1:ro
[initiator $T $I2]
luns = 1:0,2
EOF
	chmod 600 "$CONF"
	start_tcqd -c "$CONF"
	# each LUN its own data, written by I3, which sees the target's
	# LUNs as they are
	for n in 0 1 2; do
		as "$I3" "$SCSICMD" "$(url $n)" write 0 8 "a$n" nofua ||
			fail "writing LUN $n: $OUT"
		[ "$OUT" = GOOD ] || fail "writing LUN $n: $OUT"
	done
}

report_luns_lists_each_map() {
	report_is "$I1" "$(url1 0)" 0 1
	ok "I1 (luns = 0,2:1:ro) reports LUNs 0 and 1"
	report_is "$I2" "$(url 0)" 0 2
	ok "I2 (luns = 1:0,2) reports LUNs 0 and 2"
	report_is "$I3" "$(url 0)" 0 1 2
	ok "I3 (no section) reports the target's LUNs 0, 1 and 2"
}

each_reads_its_mapped_lun() {
	reads "$I1" "$(url1 0)" a0
	reads "$I1" "$(url1 1)" a2
	ok "I1's LUN 0 holds LUN 0's data, its LUN 1 LUN 2's"
	reads "$I2" "$(url 0)" a1
	reads "$I2" "$(url 2)" a2
	ok "I2's LUN 0 holds LUN 1's data, its LUN 2 LUN 2's"
	reads "$I3" "$(url 1)" a1
	ok "I3's LUN 1 holds LUN 1's data"
}

ro_mapping_refuses_writes_07_27_00() {
	as "$I1" "$SCSICMD" "$(url1 1)" write 0 8 ee nofua sync read 0 8 a2 ||
		fail "scsicmd: $OUT"
	[ "$(sed -n 1p <<<"$OUT")" = "$WRITE_PROTECTED" ] ||
		fail "WRITE to I1's read-only LUN 1: $(sed -n 1p <<<"$OUT")"
	ok "WRITE(16) to I1's :ro LUN 1 gets DATA PROTECT, WRITE PROTECTED"
	[ "$(sed -n 2p <<<"$OUT")" = GOOD ] ||
		fail "SYNCHRONIZE CACHE on the :ro LUN: $(sed -n 2p <<<"$OUT")"
	ok "SYNCHRONIZE CACHE on it is GOOD"
	[ "$(sed -n 3p <<<"$OUT")" = GOOD ] || fail "the data changed"
	ok "its data is unchanged"
	# WRITE USING TOKEN (SBC-4 83h/11h) of the block device zero ROD
	# token (FFFF0001h) over blocks 0-7: a medium write the map refuses
	local zero range
	zero=ffff0001000001f8$(printf '%01008d' 0)
	range=0000000000000000""00000008""00000000
	as "$I1" "$RAWCDB" "$(url1 1)" \
		"8311000000000000000100000228""0000=0226000000000000""0000000000000000$zero""0000000000000010$range" ||
		fail "rawcdb: $OUT"
	[ "$OUT" = "$WRITE_PROTECTED" ] ||
		fail "WRITE USING TOKEN to I1's read-only LUN 1: $OUT"
	ok "WRITE USING TOKEN to it gets DATA PROTECT, WRITE PROTECTED too"
	# the same target LUN, mapped read-write for I2
	as "$I2" "$SCSICMD" "$(url 2)" write 0 8 a2 nofua || fail "I2: $OUT"
	[ "$OUT" = GOOD ] || fail "I2's write to LUN 2 (read-write for it): $OUT"
	ok "I2 writes the same target LUN, mapped read-write for it"
}

# wp NAME URL: WP is the WP bit of MODE SENSE(6)'s device-specific
# parameter (header byte 2, bit 7) as NAME sees it: 1 or 0.
wp() {
	as "$1" "$RAWCDB" "$2" "$MODE_SENSE" || fail "MODE SENSE: $OUT"
	[[ $OUT == "GOOD "* ]] || fail "MODE SENSE: $OUT"
	WP=$(((0x${OUT:9:2} >> 7) & 1))
}

ro_mapping_mode_sense_shows_wp() {
	wp "$I1" "$(url1 1)"
	[ "$WP" = 1 ] || fail "I1's :ro LUN 1: WP=$WP"
	ok "MODE SENSE shows WP=1 on I1's :ro LUN 1"
	wp "$I1" "$(url1 0)"
	[ "$WP" = 0 ] || fail "I1's LUN 0: WP=$WP"
	wp "$I2" "$(url 2)"
	[ "$WP" = 0 ] || fail "I2's LUN 2 (the same target LUN): WP=$WP"
	ok "WP=0 on I1's read-write LUN 0 and on I2's view of the same LUN"
}

unmapped_lun_not_supported_25_00() {
	as "$I1" "$RAWCDB" "$(url1 2)" "$TUR" "$INQ" || fail "rawcdb: $OUT"
	[ "$(sed -n 1p <<<"$OUT")" = "$NO_LUN" ] ||
		fail "TEST UNIT READY to I1's LUN 2: $(sed -n 1p <<<"$OUT")"
	ok "I1's LUN 2 (not in its map) answers LOGICAL UNIT NOT SUPPORTED"
	[[ $(sed -n 2p <<<"$OUT") == "GOOD 7f"* ]] ||
		fail "INQUIRY of it: $(sed -n 2p <<<"$OUT")"
	ok "INQUIRY of it: peripheral qualifier 3, type 1Fh (7Fh)"
	as "$I2" "$RAWCDB" "$(url 1)" "$TUR" || fail "rawcdb: $OUT"
	[ "$OUT" = "$NO_LUN" ] || fail "I2's LUN 1: $OUT"
	ok "I2's LUN 1 (not in its map) answers LOGICAL UNIT NOT SUPPORTED"
}

own_chap_required_on_a_chapless_target() {
	login_refused $AUTH_FAILED "I1 without its CHAP" \
		iscsi-inq -i "$I1" "$(url 0)"
	run iscsi-inq -i "$I1" "$(url1 0)" || fail "I1 with its CHAP: $OUT"
	ok "I1 logs in with its own CHAP"
	run iscsi-inq -i "$I2" "$(url 0)" || fail "I2 without CHAP: $OUT"
	run iscsi-inq -i "$I3" "$(url 0)" || fail "I3 without CHAP: $OUT"
	ok "I2 and I3 log in without CHAP to the same target"
}

wrong_secret_locks_out_no_one_else() {
	local i
	for i in 1 2 3; do
		login_refused $AUTH_FAILED "I1 with a wrong secret ($i)" \
			iscsi-inq -i "$I1" "$(url 0 "host1%wrong-secret-$i@")"
	done
	run iscsi-inq -i "$I2" "$(url 0)" || fail "I2 after I1's failures: $OUT"
	ok "I2 logs in right after I1's three failures"
	run iscsi-inq -i "$I1" "$(url1 0)" || fail "I1, right secret: $OUT"
	ok "I1 itself logs in with the right secret"
}

live_map_change_reaches_the_open_session() {
	INITIATOR=$I2
	watch_start "$(url 0)"
	watch_settle 0
	watch_settle 2
	watch "0 $READ1"
	[[ $ANS == "GOOD a1a1a1a1"* ]] || fail "I2's LUN 0 before: $ANS"
	ctl acl set "$T" "$I2" luns=0,2 || fail "acl set: $OUT"
	grep -q "changed" <<<"$OUT" || fail "acl set says: $OUT"
	watch "2 $TUR"
	[ "$ANS" = "$UA_LUNS" ] ||
		fail "the open session's next command got '$ANS', expected 3F/0E"
	ok "the open session's next command gets REPORTED LUNS DATA HAS CHANGED"
	ua_seen 0
	ok "so does its LUN 0, now target LUN 0 (after its POWER ON)"
	watch "0 $READ1"
	[[ $ANS == "GOOD a0a0a0a0"* ]] || fail "I2's LUN 0 after: $ANS"
	ok "its LUN 0 now reads target LUN 0 (luns = 0,2)"
	watch "0 $REPORT_LUNS"
	[ "$ANS" = "$(lun_list 0 2)" ] || fail "REPORT LUNS: $ANS"
	ctl acl set "$T" "$I2" luns=2:0 || fail "acl set: $OUT"
	ua_seen 0
	watch "2 $TUR"
	[ "$ANS" = "$NO_LUN" ] || fail "its LUN 2, out of the map: '$ANS'"
	ok "a LUN taken out of the map answers LOGICAL UNIT NOT SUPPORTED"
	watch "0 $READ1"
	[[ $ANS == "GOOD a2a2a2a2"* ]] || fail "I2's LUN 0 now: $ANS"
	ctl acl clear "$T" "$I2" || fail "acl clear: $OUT"
	ua_seen 0
	watch "0 $REPORT_LUNS"
	[ "$ANS" = "$(lun_list 0 1 2)" ] || fail "REPORT LUNS: $ANS"
	watch "1 $READ1"
	[[ $ANS == "GOOD a1a1a1a1"* ]] || fail "I2's LUN 1 after clear: $ANS"
	ok "acl clear: the open session sees the target's own LUNs"
	printf 'quit\n' >&"${WATCH[1]}"
	wait "$WATCH_PID" || fail "livecdb ended with an error"
	unset 'BG_PIDS[-1]'
	# back as the fixture had it, for the checks after this one
	ctl acl set "$T" "$I2" luns=1:0,2 || fail "acl set: $OUT"
}

new_secret_counts_from_the_next_login() {
	INITIATOR=$I1
	watch_start "$(url1 0)"
	watch_settle 0
	ctl acl set "$T" "$I1" chap_secret=host1-secret-02 || fail "acl set: $OUT"
	watch "0 $TUR"
	[ "$ANS" = "GOOD -" ] || fail "the open session got '$ANS'"
	ok "the open session goes on (its map did not change: no UA)"
	login_refused $AUTH_FAILED "the old secret at a new login" \
		iscsi-inq -i "$I1" "$(url1 0)"
	run iscsi-inq -i "$I1" "$(url 0 "host1%host1-secret-02@")" ||
		fail "the new secret: $OUT"
	ok "a new login takes the new secret"
	printf 'quit\n' >&"${WATCH[1]}"
	wait "$WATCH_PID" || fail "livecdb ended with an error"
	unset 'BG_PIDS[-1]'
	ctl acl set "$T" "$I1" chap_secret="$S1" || fail "acl set: $OUT"
}

# refused WANT ARGS...: tcqctl ARGS fails (status 1) naming WANT; the
# running configuration and I1's and I2's REPORT LUNS are unchanged.
refused() {
	local want=$1 rc=0 before
	shift
	before=$(tc "$TCQCTL" --ctl "$SOCK" config) || fail "tcqctl config"
	ctl "$@" || rc=$?
	[ "$rc" -eq 1 ] || fail "tcqctl $*: status $rc, expected 1"
	[[ $OUT == *"$want"* ]] || fail "tcqctl $*: no '$want' in: $OUT"
	[[ $OUT != *short* ]] || fail "the message shows the secret: $OUT"
	[ "$(tc "$TCQCTL" --ctl "$SOCK" config)" = "$before" ] ||
		fail "tcqctl $*: the configuration changed"
	report_is "$I1" "$(url1 0)" 0 1
	report_is "$I2" "$(url 0)" 0 2
	ok "tcqctl $* refused naming '$want'; nothing changed"
}
map_naming_a_missing_lun_refused() {
	refused "has no LUN 5" acl set "$T" "$I2" luns=0,5
}
two_entries_to_one_number_refused() {
	refused "LUN 1 is mapped twice" acl set "$T" "$I2" luns=0:1,2:1
}
bad_lun_number_refused() { refused "'luns'" acl set "$T" "$I2" luns=0,x; }
short_secret_refused() {
	refused "'chap_secret'" acl set "$T" "$I2" chap_user=u chap_secret=short
}
whole_or_nothing() {
	refused "has no LUN 7" acl set "$T" "$I2" luns=0 chap_user=u \
		chap_secret=long-enough-1 luns=7
}
unknown_target_refused() {
	refused "no target 'iqn.2026-11.org.tcq:nosuch'" acl set \
		iqn.2026-11.org.tcq:nosuch "$I2" luns=0
}
clear_without_a_section_refused() {
	refused "no [initiator] section" acl clear "$T" "$I3"
}
removing_a_mapped_lun_refused() {
	refused "[initiator $T $I1]: luns: target $T has no LUN 2" \
		lun remove "$T/2"
}

save_writes_the_sections() {
	ctl save "$SAVED" || fail "save: $OUT"
	grep -qxF "[initiator $T $I1]" "$SAVED" || fail "no I1 section saved"
	grep -qxF "luns = 0,2:1:ro" "$SAVED" || fail "I1's map not saved"
	grep -qxF "chap_user = host1" "$SAVED" || fail "I1's CHAP user not saved"
	grep -qxF "luns = 1:0,2" "$SAVED" || fail "I2's map not saved"
	ok "tcqctl save writes both [initiator] sections"
	OUT=$(tc "$TCQCTL" --ctl "$SOCK" config) || fail "config"
	grep -qxF "[initiator $T $I2]" <<<"$OUT" || fail "config lacks I2"
	ok "tcqctl config shows them"
	log_grep -qF "$S1" && fail "the log shows I1's secret"
	ok "the log never shows the secret"
}

# ---- the saved file again --------------------------------------------------
fixture_saved() {
	start_tcqd -c "$SAVED"
}

restart_from_saved_file_keeps_maps() {
	report_is "$I1" "$(url1 0)" 0 1
	report_is "$I2" "$(url 0)" 0 2
	reads "$I1" "$(url1 1)" a2
	ok "restarted from the saved file: the same maps"
	login_refused $AUTH_FAILED "I1 without CHAP" iscsi-inq -i "$I1" "$(url 0)"
}

reload_changes_a_map() {
	sed -i "s/^luns = 1:0,2\$/luns = 2/" "$SAVED"
	ctl reload || fail "reload: $OUT"
	report_is "$I2" "$(url 0)" 2
	ok "after a reload I2 (luns = 2) reports LUN 2 alone"
}

# ---- a target with CHAP ------------------------------------------------------
fixture_chap_target() {
	target_conf "chap_user = tuser" "chap_secret = $TSECRET"
	cat >>"$CONF" <<EOF
[initiator $T $I1]
chap_user = host1
chap_secret = $S1
[initiator $T $I2]
luns = 2:0
EOF
	chmod 600 "$CONF"
	start_tcqd -c "$CONF"
}

own_secret_replaces_the_targets() {
	run iscsi-inq -i "$I1" "$(url1 0)" || fail "I1, own secret: $OUT"
	ok "I1 logs in with its own secret"
	login_refused $AUTH_FAILED "I1 with the target's secret" \
		iscsi-inq -i "$I1" "$(url 0 "tuser%$TSECRET@")"
	run iscsi-inq -i "$I2" "$(url 0 "tuser%$TSECRET@")" ||
		fail "I2, the target's secret: $OUT"
	run iscsi-inq -i "$I3" "$(url 0 "tuser%$TSECRET@")" ||
		fail "I3, the target's secret: $OUT"
	ok "I2 (a section without CHAP keys) and I3 use the target's CHAP"
	login_refused $AUTH_FAILED "I3 with I1's secret" \
		iscsi-inq -i "$I3" "$(url1 0)"
	login_refused $AUTH_FAILED "I2 without CHAP" iscsi-inq -i "$I2" "$(url 0)"
	report_is "$I2" "$(url 0 "tuser%$TSECRET@")" 0
	ok "I2's map applies with the target's CHAP"
}

bad_section_in_a_file_is_named() {
	local rc=0
	target_conf
	printf '[initiator iqn.2026-11.org.tcq:nosuch %s]\nluns = 0\n' "$I1" >>"$CONF"
	timeout 20 "$TCQD" -c "$CONF" >"$TEST_TMP/bad.out" 2>&1 || rc=$?
	[ "$rc" -ne 0 ] || fail "tcqd started with a section of no target"
	grep -q "tcqd.conf:[0-9]*: \[initiator iqn.2026-11.org.tcq:nosuch $I1\]: unknown target" \
		"$TEST_TMP/bad.out" || fail "not named: $(cat "$TEST_TMP/bad.out")"
	ok "tcqd refuses it: $(head -1 "$TEST_TMP/bad.out")"
}

CHECKS=(
	@maps
	report_luns_lists_each_map
	each_reads_its_mapped_lun
	ro_mapping_refuses_writes_07_27_00
	ro_mapping_mode_sense_shows_wp
	unmapped_lun_not_supported_25_00
	own_chap_required_on_a_chapless_target
	wrong_secret_locks_out_no_one_else
	live_map_change_reaches_the_open_session
	new_secret_counts_from_the_next_login
	map_naming_a_missing_lun_refused
	two_entries_to_one_number_refused
	bad_lun_number_refused
	short_secret_refused
	whole_or_nothing
	unknown_target_refused
	clear_without_a_section_refused
	removing_a_mapped_lun_refused
	save_writes_the_sections
	@saved
	restart_from_saved_file_keeps_maps
	reload_changes_a_map
	@chap_target
	own_secret_replaces_the_targets
	@
	bad_section_in_a_file_is_named
)
run_checks "$@"
