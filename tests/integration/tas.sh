#!/bin/bash
# Task Aborted Status (tcqd.conf(5) tas, SPC-4 7.5.8): tas = 1 in
# tcqd.conf is the TAS bit of the control mode page, current and default
# values; tcqctl set changes it live (the open session's next command
# gets MODE PARAMETERS CHANGED, 2Ah/01h, SPC-4 5.14) and tcqctl config
# (what save writes) keeps it; MODE SELECT from one session changes it
# and the other session hears 2Ah/01h; a bad value is refused by the
# key's name, live and in a file, and changes nothing; write_cache set
# live (the same step) still raises 2Ah/01h. What TAS does to
# aborted tasks is checked in tests/unit/test_tmf.c.
# shellcheck source=tests/integration/lib.sh
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

TCQCTL=${TCQCTL:-$top_builddir/tcqctl}
LIVECDB=${LIVECDB:-$top_builddir/tests/integration/livecdb}
RAWCDB=${RAWCDB:-$top_builddir/tests/integration/rawcdb}
need_built "$TCQCTL" "$LIVECDB" "$RAWCDB"

SOCK=$TEST_TMP/ctl.sock
CONF=$TEST_TMP/tcqd.conf
T=iqn.2026-11.org.tcq:tas
TUR=000000000000
# MODE SENSE(6), DBD, control page 0Ah: current, changeable, default
SENSE_CUR=1a080a00ff00:255
SENSE_CHG=1a084a00ff00:255
SENSE_DEF=1a088a00ff00:255
# MODE SELECT(6), PF, 16 bytes: the header, then the control page as it
# reads with TAS (byte 5) given: TST 001b, BUSY TIMEOUT FFFFh.
select_tas() { printf '151000001000=000000000a0a200000%s0000ffff0000' "$1"; }
UA_MODE="CHECK CONDITION key=0x6 asc=0x2a ascq=0x01"

ctl() { run "$TCQCTL" --ctl "$SOCK" "$@"; }

# tas_of HEX: the TAS bit (byte 5 of the page after the 4-byte header)
# of MODE SENSE data as rawcdb and livecdb print it: 1 or 0.
tas_of() { echo $(((16#${1:18:2} & 0x40) >> 6)); }

# sense_tas CDB: TAS, the bit a fresh session reads.
sense_tas() {
	run "$RAWCDB" "$TCQD_URL" "$1" || fail "rawcdb MODE SENSE failed: $OUT"
	[[ $OUT == "GOOD "?????????????????????* ]] || fail "MODE SENSE $1: $OUT"
	TAS=$(tas_of "${OUT#GOOD }")
}

watch_end() {
	printf 'quit\n' >&"${WATCH[1]}"
	wait "$WATCH_PID" || fail "livecdb ended with an error"
	unset 'BG_PIDS[-1]'
}

fixture_tas() {
	tcqd_conf "$CONF" "$T" 8M "ctl = $SOCK"
	printf 'tas = 1\n' >>"$CONF"
	start_tcqd -c "$CONF"
}

config_tas_1_is_in_the_control_page() {
	sense_tas $SENSE_CUR; [ "$TAS" = 1 ] || fail "current control page TAS is not 1"
	ok "tas = 1: the current control page has TAS set"
	sense_tas $SENSE_DEF; [ "$TAS" = 1 ] || fail "default control page TAS is not 1"
	ok "and the default page too"
	sense_tas $SENSE_CHG; [ "$TAS" = 1 ] || fail "TAS is not changeable"
	ok "TAS is changeable (changeable values page)"
}

live_set_raises_mode_parameters_changed() {
	watch_start "$TCQD_URL"
	watch_settle 0
	ctl set 0 tas=0 || fail "set tas=0: $OUT"
	watch "0 $TUR"
	[ "$ANS" = "$UA_MODE" ] ||
		fail "the open session's next command got '$ANS', expected MODE PARAMETERS CHANGED"
	ok "tcqctl set 0 tas=0: the open session gets MODE PARAMETERS CHANGED (2A/01)"
	watch "0 $SENSE_CUR"
	[[ $ANS == "GOOD "* ]] || fail "MODE SENSE after the change: $ANS"
	[ "$(tas_of "${ANS#GOOD }")" = 0 ] || fail "TAS still set: $ANS"
	ok "the control page then reads TAS=0"
	ctl set 0 tas=0 || fail "set the same: $OUT"
	watch "0 $TUR"
	[ "$ANS" = "GOOD -" ] || fail "setting the same TAS raised '$ANS'"
	ok "setting the same value raises no unit attention"
	ctl set 0 tas=1 || fail "set tas=1: $OUT"
	watch "0 $TUR"
	[ "$ANS" = "$UA_MODE" ] || fail "tas=1 again raised '$ANS'"
	sense_tas $SENSE_CUR; [ "$TAS" = 1 ] || fail "TAS not back to 1"
	ok "tcqctl set 0 tas=1 sets it back"
	watch_end
}

# write_cache shares the step that sets tas live (lun_set_mode_keys).
live_write_cache_still_raises_mode_parameters_changed() {
	watch_start "$TCQD_URL"
	watch_settle 0
	ctl set 0 write_cache=off || fail "set write_cache=off: $OUT"
	watch "0 $TUR"
	[ "$ANS" = "$UA_MODE" ] || fail "write_cache=off raised '$ANS'"
	ok "tcqctl set 0 write_cache=off: MODE PARAMETERS CHANGED (2A/01)"
	ctl set 0 write_cache=on || fail "set write_cache=on: $OUT"
	watch "0 $TUR"
	[ "$ANS" = "$UA_MODE" ] || fail "write_cache=on raised '$ANS'"
	sense_tas $SENSE_CUR; [ "$TAS" = 1 ] || fail "write_cache changed TAS"
	ok "and back on; TAS untouched"
	watch_end
}

config_keeps_the_live_tas() {
	ctl set 0 tas=0 || fail "set tas=0: $OUT"
	OUT=$(tc "$TCQCTL" --ctl "$SOCK" config) || fail "tcqctl config failed"
	grep -qx 'tas = 1' <<<"$OUT" && fail "config still has tas = 1"
	ok "tcqctl config (what save writes) no longer says tas = 1"
	ctl set 0 tas=1 || fail "set tas=1: $OUT"
	OUT=$(tc "$TCQCTL" --ctl "$SOCK" config) || fail "tcqctl config failed"
	grep -qx 'tas = 1' <<<"$OUT" || fail "config lacks tas = 1"
	ok "tcqctl config has tas = 1 after the live set"
}

mode_select_tells_the_other_session() {
	watch_start "$TCQD_URL"
	watch_settle 0
	run "$RAWCDB" "$TCQD_URL" "$(select_tas 00)" || fail "rawcdb MODE SELECT failed: $OUT"
	[ "$OUT" = "GOOD -" ] || fail "MODE SELECT TAS=0: $OUT"
	ok "MODE SELECT of the control page with TAS=0 is GOOD"
	watch "0 $TUR"
	[ "$ANS" = "$UA_MODE" ] ||
		fail "the other session's next command got '$ANS', expected MODE PARAMETERS CHANGED"
	ok "the other session gets MODE PARAMETERS CHANGED (2A/01)"
	watch "0 $SENSE_CUR"
	[ "$(tas_of "${ANS#GOOD }")" = 0 ] || fail "TAS still set after MODE SELECT: $ANS"
	ok "and reads TAS=0"
	watch_end
	run "$RAWCDB" "$TCQD_URL" "$(select_tas 40)" || fail "rawcdb MODE SELECT failed: $OUT"
	[ "$OUT" = "GOOD -" ] || fail "MODE SELECT TAS=1: $OUT"
	sense_tas $SENSE_CUR; [ "$TAS" = 1 ] || fail "MODE SELECT TAS=1 did not set it"
	ok "MODE SELECT with TAS=1 sets it again"
}

# refused VALUE: tcqctl set 0 tas=VALUE fails (status 1) naming tas, and
# the control page still says TAS=1.
refused() {
	local rc=0
	ctl set 0 "tas=$1" || rc=$?
	[ "$rc" -eq 1 ] || fail "tcqctl set 0 tas=$1: status $rc, expected 1"
	[[ $OUT == *tas* ]] || fail "tcqctl set 0 tas=$1: message lacks 'tas': $OUT"
	sense_tas $SENSE_CUR; [ "$TAS" = 1 ] || fail "TAS changed by a refused set"
	ok "tcqctl set 0 tas=$1 refused naming tas; TAS is unchanged"
}
tas_2_refused() { refused 2; }
tas_yes_refused() { refused yes; }
tas_empty_refused() { refused ''; }

bad_tas_in_a_file_names_its_key() {
	tcqd_conf "$TEST_TMP/bad.conf" "$T" 8M
	printf 'tas = on\n' >>"$TEST_TMP/bad.conf"
	conf_refused "$TEST_TMP/bad.conf" ".*tas" "tas = on"
	ok "tcqd refuses the file: $OUT"
}

CHECKS=(
	@tas
	config_tas_1_is_in_the_control_page
	live_set_raises_mode_parameters_changed
	live_write_cache_still_raises_mode_parameters_changed
	config_keeps_the_live_tas
	mode_select_tells_the_other_session
	tas_2_refused
	tas_yes_refused
	tas_empty_refused
	bad_tas_in_a_file_names_its_key
)
run_checks "$@"
