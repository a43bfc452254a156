#!/bin/bash
# Login redirect (redirect = ADDR:PORT[,permanent], tcqd.conf(5)): two
# real tcqd, the first redirecting target T to the second, which serves
# T. libiscsi's tools and drivers, given the first's URL, follow the
# redirect and read the second's INQUIRY, capacity and data; the first
# logs the redirect and makes no session. The Login Response as sent
# (tests/integration/redirect.c) carries status class 01h, detail 01h or
# 02h and TargetAddress=ADDR:PORT without a portal group tag (RFC 7143
# 11.13.5, 13.8), before security negotiation; discovery is not
# redirected and SendTargets lists T at the first's own portal. Live:
# tcqctl target set T redirect=... (temporary, permanent, empty to clear:
# a login to the first is then served there), an open session stays;
# tcqctl targets shows it and save keeps it. Malformed values are refused
# by the key's name, live and in a file, and change nothing.
# shellcheck source=tests/integration/lib.sh
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"
# shellcheck source=tests/integration/tcqd2.sh
. "$top_srcdir/tests/integration/tcqd2.sh"

TCQCTL=${TCQCTL:-$top_builddir/tcqctl}
RAWCDB=${RAWCDB:-$top_builddir/tests/integration/rawcdb}
LIVECDB=${LIVECDB:-$top_builddir/tests/integration/livecdb}
REDIRECT=${REDIRECT:-$top_builddir/tests/integration/redirect}
SCSICMD=${SCSICMD:-$top_builddir/tests/integration/scsicmd}
need_built "$TCQCTL" "$RAWCDB" "$LIVECDB" "$REDIRECT" "$SCSICMD"
listing "$@" || need_tool iscsi-inq iscsi-readcapacity16

SOCK=$TEST_TMP/ctl.sock
B_ADDR=""			# the second tcqd's portal (TCQD2_ADDR)
T=iqn.2026-11.org.tcq:moved
READ0=28000000000000000100:512	# READ(10) of LBA 0, one block
exit_hook() { tcqd2_exit_hook; }

ctl() { run "$TCQCTL" --ctl "$SOCK" "$@"; }
# block_hex BYTE: one 512-byte block of BYTE (hex), as livecdb prints it.
block_hex() { printf "%0.s$1" $(seq 512); }

# lun_conf NAME SIZE PRODUCT BYTE: the LUN 0 of T in its own file, its
# first 8 blocks filled with BYTE (hex).
lun_conf() {
	make_lun "$TEST_TMP/$1.img" "$2"
	head -c 4096 /dev/zero | tr '\0' "\\$(printf '%03o' "0x$4")" |
		dd of="$TEST_TMP/$1.img" conv=notrunc status=none
	printf '[lun %s 0]\npath = %s\nproduct = %s\n' "$T" "$TEST_TMP/$1.img" "$3"
}

fixture_redirect() {
	# The second serves T (8 MiB, product "Second").
	{
		printf '[global]\nlisten = 127.0.0.1:0\nthreads = 1\n\n[target %s]\n' "$T"
		lun_conf second 8M Second b2
	} >"$TEST_TMP/second.conf"
	tcqd2_start "$TEST_TMP/second.conf"
	B_ADDR=$TCQD2_ADDR
	# The first has T too (4 MiB, "First"), redirected to the second.
	{
		printf '[global]\nlisten = 127.0.0.1:0\nthreads = 2\nctl = %s\n' "$SOCK"
		printf '\n[target %s]\nredirect = %s\n' "$T" "$B_ADDR"
		lun_conf first 4M First a1
	} >"$TEST_TMP/first.conf"
	start_tcqd -c "$TEST_TMP/first.conf"
	say "the first at $TCQD_PORTAL redirects $T to the second at $B_ADDR"
}

teardown_redirect() {
	tcqd2_stop
	stop_tcqd
}

# lands_on NAME PRODUCT SIZE BYTE: libiscsi, given the first's URL,
# reads INQUIRY, READ CAPACITY (16) and LBA 0..7 of the tcqd called NAME.
lands_on() {
	run iscsi-inq "$TCQD_URL" || fail "iscsi-inq failed"
	grep -q "^Product:$2 " <<<"$OUT" || fail "iscsi-inq does not show product $2"
	run iscsi-readcapacity16 "$TCQD_URL" || fail "iscsi-readcapacity16 failed"
	grep -q "^Total size:$3\$" <<<"$OUT" || fail "capacity is not $3 bytes"
	run "$SCSICMD" "$TCQD_URL" read 0 8 "$4" || fail "scsicmd failed: $OUT"
	[ "$OUT" = GOOD ] || fail "LBA 0..7 are not all $4h: $OUT"
	ok "libiscsi with the first's URL reads the $1's INQUIRY ($2), capacity ($3) and data ($4h)"
}

# no_session_here: the first logged no login and holds no session.
no_session_here() {
	if log_grep -qF ": logged in ($T)"; then
		fail "the first logged a login of $T"
	fi
	ctl targets || fail "tcqctl targets failed"
	grep -q "^$T  tpgt 1  sessions 0 " <<<"$OUT" || fail "the first has sessions of $T"
	ok "the first made no session"
}

libiscsi_follows_redirect_to_second() {
	lands_on second Second 8388608 b2
	no_session_here
}

first_logs_one_line_per_redirect() {
	local n
	run iscsi-inq "$TCQD_URL" || fail "iscsi-inq failed"
	log_has "to $T redirected (0x0101, target moved temporarily) to $B_ADDR" \
		"the first logs the redirect, status 0x0101, and the address"
	n=$(log_grep -c ' redirected (0x0101')
	[ "$n" -eq 1 ] || fail "$n redirect lines for one login"
	ok "one line for one redirected login"
	if log_grep -q 'failed (0x'; then
		fail "a redirect is logged as a failed login"
	fi
	ok "not logged as a refusal"
}

login_response_moved_temporarily_0101() {
	pdu_case "$REDIRECT" -a "$B_ADDR" moved_temporarily_0101
}

# Before security negotiation: with CHAP on T, the driver's first request
# (AuthMethod=None, which would be refused 0201h) is still redirected.
redirect_comes_before_chap() {
	ctl chap set "$T" user=moved-user secret=moved-secret-0123 ||
		fail "chap set: $OUT"
	pdu_case "$REDIRECT" -a "$B_ADDR" moved_temporarily_0101
	ctl chap clear "$T" || fail "chap clear: $OUT"
}

discovery_not_redirected_lists_first_portal() {
	pdu_case "$REDIRECT" discovery_lists_target_here
}

targets_shows_redirect() {
	ctl targets || fail "tcqctl targets failed"
	grep -qxF "  redirect $B_ADDR (target moved temporarily)" <<<"$OUT" ||
		fail "tcqctl targets does not show the redirect"
	ok "tcqctl targets shows 'redirect $B_ADDR (target moved temporarily)'"
}

live_set_permanent_0102() {
	ctl target set "$T" "redirect=$B_ADDR,permanent" || fail "set: $OUT"
	pdu_case "$REDIRECT" -a "$B_ADDR" moved_permanently_0102
	log_has "redirected (0x0102, target moved permanently) to $B_ADDR" \
		"the first logs 0x0102"
	# libiscsi (1.19 and its master) follows 0101h only
	# (lib/connect.c, SCSI_STATUS_REDIRECT): it reports the status.
	if run iscsi-inq "$TCQD_URL"; then
		fail "libiscsi logged in through a permanent redirect"
	fi
	grep -q 'Target moved permanently(258)' <<<"$OUT" ||
		fail "libiscsi does not report status 0x0102 (258)"
	ok "libiscsi reports 'Target moved permanently' (0x0102)"
	ctl targets || fail "tcqctl targets failed"
	grep -qxF "  redirect $B_ADDR (target moved permanently)" <<<"$OUT" ||
		fail "tcqctl targets does not show the permanent redirect"
	ok "tcqctl targets shows it permanent"
}

save_keeps_redirect() {
	ctl save "$TEST_TMP/saved.conf" || fail "save: $OUT"
	grep -qxF "redirect = $B_ADDR,permanent" "$TEST_TMP/saved.conf" ||
		fail "the saved file lacks 'redirect = $B_ADDR,permanent'"
	ok "tcqctl save writes redirect = $B_ADDR,permanent"
}

# refused VALUE WANT: tcqctl target set T redirect=VALUE fails naming the
# key and saying WANT; the first still redirects permanently to B.
refused() {
	local rc=0
	ctl target set "$T" "redirect=$1" || rc=$?
	[ "$rc" -eq 1 ] || fail "redirect=$1: status $rc, expected 1"
	[[ $OUT == *"bad value for 'redirect'"*"$2"* ]] ||
		fail "redirect=$1: message does not name the key and say '$2'"
	ok "redirect=$1 refused: $OUT"
}
malformed_live_refused_nothing_changed() {
	refused 127.0.0.1 "no port"
	refused 127.0.0.1:0 "out of range 1..65535"
	refused 127.0.0.1:65536 "out of range 1..65535"
	refused 'junk!:3260' "is not an IPv4 address, a bracketed IPv6 address or a DNS name"
	refused "$B_ADDR,temporary" "only ',permanent' may follow"
	refused "$B_ADDR,permanent,x" "only ',permanent' may follow"
	run "$TCQCTL" --ctl "$SOCK" config || fail "tcqctl config failed"
	grep -qxF "redirect = $B_ADDR,permanent" <<<"$OUT" ||
		fail "the running configuration lost its redirect"
	ok "the running configuration still has redirect = $B_ADDR,permanent"
	pdu_case "$REDIRECT" -a "$B_ADDR" moved_permanently_0102
}

# Cleared, the first serves T itself; a session open then stays there
# when the redirect is set again, and new logins are redirected.
clear_serves_here_open_session_stays() {
	ctl target set "$T" redirect= || fail "clear: $OUT"
	ctl targets || fail "tcqctl targets failed"
	if grep -q '  redirect ' <<<"$OUT"; then
		fail "tcqctl targets still shows a redirect"
	fi
	pdu_case "$REDIRECT" login_served_here
	lands_on first First 4194304 a1
	watch_start "$TCQD_URL"
	watch_settle 0
	ctl target set "$T" "redirect=$B_ADDR" || fail "set: $OUT"
	watch "0 000000000000"
	[ "$ANS" = "GOOD -" ] || fail "the open session's TEST UNIT READY: $ANS"
	watch "0 $READ0"
	[ "$ANS" = "GOOD $(block_hex a1)" ] ||
		fail "the open session no longer reads the first's LUN"
	ok "a session open on the first stays there when the redirect is set"
	printf 'quit\n' >&"${WATCH[1]}"
	wait "$WATCH_PID" || fail "livecdb ended with an error"
	unset 'BG_PIDS[-1]'
	lands_on second Second 8388608 b2
}

malformed_in_file_refused() {
	local v
	for v in 127.0.0.1 127.0.0.1:0 127.0.0.1:65536 'no_such host:1' \
		127.0.0.1:3260,temp; do
		printf '[global]\nlisten = 127.0.0.1:0\n[target %s]\nredirect = %s\n' \
			"$T" "$v" >"$TEST_TMP/bad.conf"
		lun_conf bad 1M Bad 00 >>"$TEST_TMP/bad.conf"
		conf_refused "$TEST_TMP/bad.conf" "bad value for 'redirect'" \
			"redirect = $v"
		ok "redirect = $v in a file: $OUT"
	done
}

CHECKS=(
	@redirect
	libiscsi_follows_redirect_to_second
	first_logs_one_line_per_redirect
	login_response_moved_temporarily_0101
	redirect_comes_before_chap
	discovery_not_redirected_lists_first_portal
	targets_shows_redirect
	live_set_permanent_0102
	save_keeps_redirect
	malformed_live_refused_nothing_changed
	clear_serves_here_open_session_stays
	@
	malformed_in_file_refused
)
run_checks "$@"
