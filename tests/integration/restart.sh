#!/bin/bash
# tcqd stopped under a verified write load and started again on the same
# port and file, with tcq-bench --reconnect logging in again (same ISID)
# and sending again what had no status:
#   SIGTERM: in-flight I/O finishes, the initiator sees no error at all
#     (native engine; libiscsi's own reconnect too, counted);
#   SIGKILL, libiscsi engine: its own reconnect is counted, with a
#     nonzero time without service;
#   SIGKILL (aio backend, write_cache on and off): the initiator
#     reconnects, and a --verify-journal read afterwards finds every
#     acknowledged write;
#   a restart from tcqctl save'd state with an APTPL reservation held:
#     the reservation is still there, its holder (same initiator name and
#     ISID) is still recognised, and a session logs in again.
# The controls show that each check can fail: without --reconnect the
# same SIGTERM and SIGKILL scenarios end in errors, another I_T nexus
# cannot take the reservation, and without the state the reservation is
# gone.
# shellcheck source=tests/integration/lib.sh
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

TCQCTL=${TCQCTL:-$top_builddir/tcqctl}
BENCH=${BENCH:-$top_builddir/tcq-bench}
PRCLIENT=${PRCLIENT:-$top_builddir/tests/integration/prclient}
need_built "$TCQCTL" "$BENCH" "$PRCLIENT"
need_tool python3 jq
IQN=iqn.2026-11.org.tcq:restart
SOCK=$TEST_TMP/ctl.sock
LOAD_SECS=6

# restart_conf WRITE_CACHE: $CONF serves $TEST_TMP/disk.img (aio) on
# 127.0.0.1:0; start_same fixes the port tcqd bound, so that a restarted
# tcqd is where the initiator expects it.
restart_conf() {
	PORT='' URL=''
	CONF=$TEST_TMP/tcqd.conf
	mkdir -p "$TEST_TMP/state"
	cat >"$CONF" <<EOF
[global]
listen = 127.0.0.1:0
threads = 2
ctl = $SOCK
state_dir = $TEST_TMP/state

[target $IQN]
[lun $IQN 0]
path = $TEST_TMP/disk.img
size = 16M
block_size = 512
create = yes
backend = aio
write_cache = $1
EOF
}

# start_same [CONF]: tcqd from CONF (default $CONF). The first start
# binds a port of tcqd's choosing (no port picked beforehand that another
# test could take meanwhile), read back from its URL and written into
# $CONF: the restarts listen on it again.
start_same() {
	start_tcqd -c "${1:-$CONF}"
	if [ -z "$PORT" ]; then
		PORT=$TCQD_PORT
		sed -i "s|^listen = .*|listen = 127.0.0.1:$PORT|" "$CONF"
		URL=iscsi://127.0.0.1:$PORT/$IQN/0
	fi
	[ "$TCQD_PORT" = "$PORT" ] || fail "tcqd listens on $TCQD_PORT, not $PORT"
}

# load NAME ARGS...: a ${LOAD_SECS} s verified random write load in the
# background (BENCH_PID), journal $TEST_TMP/NAME.j, output NAME.out and
# NAME.json.
load() {
	local name=$1
	shift
	"$BENCH" --quiet --engine native --depth 16 --bs 4k --rw randwrite \
		--runtime "$LOAD_SECS" --span 4M --verify-journal "$TEST_TMP/$name.j" \
		--json "$TEST_TMP/$name.json" "$@" "$URL" \
		>"$TEST_TMP/$name.out" 2>&1 &
	BENCH_PID=$!
	BG_PIDS+=("$BENCH_PID")
}

# wait_load: BENCH_RC, BENCH_OUT.
wait_load() {
	BENCH_RC=0
	wait "$BENCH_PID" || BENCH_RC=$?
	BENCH_OUT=$(cat "$TEST_TMP/$1.out")
	say "tcq-bench exited $BENCH_RC:"
	printf '%s\n' "$BENCH_OUT" | sed 's/^/    /'
}

# point NAME FIELD: a field of the --json point.
point() {
	python3 -c 'import json, sys
p = json.load(open(sys.argv[1]))["points"][0]
print(p[sys.argv[2]])' "$TEST_TMP/$1.json" "$2"
}

# journal_read NAME: every acknowledged write of the journal reads back.
journal_read() {
	run "$BENCH" --quiet --engine native --depth 8 --bs 4k --rw read \
		--runtime 1 --span 4M --verify-journal "$TEST_TMP/$1.j" "$URL" ||
		fail "the journal read after the restart failed: $(tail -3 <<<"$OUT")"
}

# kill_restart SIGNAL: stops tcqd with SIGNAL once the load is under way
# (500 commands done, more in flight), starts it again at once on the
# same port and file.
kill_restart() {
	wait_logins 1
	wait_load_running "$SOCK" 500
	if [ "$1" = TERM ]; then
		stop_tcqd_rc || fail "$STOP_WHY"
	else
		# SIGKILL on purpose: the crash this scenario simulates. The
		# restarted tcqd is ended with SIGTERM (check_exit), and its
		# sanitizer report, if any, fails the check.
		kill -KILL "$TCQD_PID"
		wait "$TCQD_PID" 2>/dev/null
		TCQD_PID=
	fi
	start_same
}

# ---- SIGTERM: the initiator sees nothing but a reconnect ----
sigterm_restart_no_errors_with_reconnect() {
	restart_conf on
	start_same
	load term --reconnect 20
	kill_restart TERM
	wait_load term
	[ "$BENCH_RC" -eq 0 ] || fail "tcq-bench exited $BENCH_RC across a SIGTERM restart"
	[ "$(point term errors)" = 0 ] || fail "errors reported: $(point term errors)"
	[ "$(point term reconnects)" -ge 1 ] || fail "no reconnect counted"
	grep -q 'reconnects, .* s without service' <<<"$BENCH_OUT" ||
		fail "the text output does not report the reconnect"
	journal_read term
	ok "SIGTERM and restart under load: status 0, 0 errors, $(point term reconnects) reconnect(s), $(point term outage_s) s without service; the journal read passes"
}

# The control: the same without --reconnect ends the session in errors.
sigterm_restart_fails_without_reconnect() {
	restart_conf on
	start_same
	load term0
	kill_restart TERM
	wait_load term0
	[ "$BENCH_RC" -ne 0 ] || fail "tcq-bench without --reconnect passed a SIGTERM restart"
	tcqd_alive
	grep -q 'session lost' <<<"$BENCH_OUT" || fail "no 'session lost'"
	[ "$(point term0 reconnects)" = 0 ] || fail "reconnects counted without --reconnect"
	ok "without --reconnect the same SIGTERM restart fails (status $BENCH_RC, $(point term0 errors) errors)"
}

# libiscsi reconnects by itself when --reconnect allows it (tcq-bench
# counts its new logins and their outage); without the option it is off.
libiscsi_sigterm_restart_no_errors_with_reconnect() {
	restart_conf on
	start_same
	load lterm --engine libiscsi --reconnect 20
	kill_restart TERM
	wait_load lterm
	[ "$BENCH_RC" -eq 0 ] || fail "tcq-bench (libiscsi) exited $BENCH_RC across a SIGTERM restart"
	[ "$(point lterm errors)" = 0 ] || fail "errors reported: $(point lterm errors)"
	[ "$(point lterm reconnects)" -ge 1 ] || fail "no reconnect counted"
	journal_read lterm
	ok "libiscsi engine: SIGTERM and restart under load: status 0, 0 errors, $(point lterm reconnects) reconnect(s) of libiscsi's own, $(point lterm outage_s) s without service; the journal read passes"
}

# SIGKILL: libiscsi's own reconnect is counted, with the time without
# service (loss to new login, > 0: tcqd is started again only after the
# kill), and every acknowledged write reads back.
libiscsi_sigkill_restart_counts_reconnect() {
	restart_conf on
	start_same
	load lkill --engine libiscsi --reconnect 20
	kill_restart KILL
	wait_load lkill
	[ "$(point lkill reconnects)" -ge 1 ] || fail "no reconnect counted"
	python3 -c 'import sys; sys.exit(not float(sys.argv[1]) > 0)' \
		"$(point lkill outage_s)" || fail "outage_s is $(point lkill outage_s)"
	grep -q "logged in again after .* (the libiscsi engine's own reconnect)" \
		<<<"$BENCH_OUT" || fail "the reconnect is not reported"
	journal_read lkill
	ok "libiscsi engine: SIGKILL and restart under load: status $BENCH_RC, $(point lkill errors) errors, $(point lkill reconnects) reconnect(s), $(point lkill outage_s) s without service; every acknowledged write reads back"
}

libiscsi_sigterm_restart_fails_without_reconnect() {
	restart_conf on
	start_same
	load lterm0 --engine libiscsi
	kill_restart TERM
	wait_load lterm0
	[ "$BENCH_RC" -ne 0 ] || fail "tcq-bench (libiscsi) without --reconnect passed a SIGTERM restart"
	tcqd_alive
	[ "$(point lterm0 reconnects)" = 0 ] || fail "reconnects counted without --reconnect"
	ok "libiscsi engine without --reconnect: the same SIGTERM restart fails (status $BENCH_RC, $(point lterm0 errors) errors)"
}

# Nobody comes back: the session stops once SECS are over, as it would
# without the option, and says why.
reconnect_gives_up_after_secs() {
	restart_conf on
	start_same
	load giveup --reconnect 1.5
	wait_logins 1
	wait_load_running "$SOCK" 500
	# SIGKILL on purpose: the target vanishes as in a crash, and nothing
	# comes back.
	kill -KILL "$TCQD_PID"
	wait "$TCQD_PID" 2>/dev/null
	TCQD_PID=
	wait_load giveup
	[ "$BENCH_RC" -eq 1 ] || fail "tcq-bench exited $BENCH_RC with the target gone"
	grep -q 'no new login within 1.5 s' <<<"$BENCH_OUT" ||
		fail "it does not say that it gave up"
	[ "$(point giveup reconnects)" = 0 ] || fail "a reconnect counted with no target"
	ok "with the target gone, --reconnect 1.5 gives up, counts the lost I/Os as errors (status 1)"
}

# ---- SIGKILL: nothing acknowledged is lost (aio: it is in the kernel) ----
# tcq-bench sends again what had no status once tcqd is back, so with
# --reconnect the run ends with status 0 and 0 errors of any kind (no
# transport error either: every command completes after the new login),
# and the journal read finds every acknowledged write; only the writes in
# flight at the kill, unacknowledged until their resend, may have read old
# or new in between (the journal's own rule).
sigkill_check() {
	local name=$1 wc=$2
	restart_conf "$wc"
	start_same
	load "$name" --reconnect 20
	kill_restart KILL
	wait_load "$name"
	[ "$(point "$name" reconnects)" -ge 1 ] || fail "no reconnect counted"
	[ "$BENCH_RC" -eq 0 ] || fail "tcq-bench exited $BENCH_RC across a SIGKILL restart with --reconnect"
	[ "$(point "$name" errors)" = 0 ] || fail "errors reported: $(point "$name" errors)"
	journal_read "$name"
	ok "write_cache=$wc: SIGKILL and restart under load: status $BENCH_RC, $(point "$name" errors) errors, $(point "$name" reconnects) reconnect(s), $(point "$name" outage_s) s without service; every acknowledged write reads back"
}
sigkill_restart_keeps_acknowledged_writes_wce_on() { sigkill_check kill_on on; }
sigkill_restart_keeps_acknowledged_writes_wce_off() { sigkill_check kill_off off; }

sigkill_restart_fails_without_reconnect() {
	restart_conf on
	start_same
	load kill0
	kill_restart KILL
	wait_load kill0
	[ "$BENCH_RC" -ne 0 ] || fail "tcq-bench without --reconnect passed a SIGKILL restart"
	tcqd_alive
	grep -q 'transport' <<<"$BENCH_OUT" || fail "no transport errors named"
	ok "without --reconnect the same SIGKILL restart fails (status $BENCH_RC)"
}

# ---- a restart from tcqctl save'd state with an APTPL reservation ----
# prclient uses a fixed ISID: INITIATOR with it is one I_T nexus across
# runs and restarts. A read load of tcq-bench (reads pass a Write
# Exclusive reservation) spans the restart and logs in again.
aptpl_saved_state_restart_keeps_reservation() {
	local saved=$TEST_TMP/saved.conf before
	restart_conf on
	# tcqctl save writes the portal as configured: a tcqd of the fixed
	# port, so that the saved file names it.
	start_same
	stop_tcqd_rc || fail "$STOP_WHY"
	start_same
	run "$PRCLIENT" "$URL" "$INITIATOR" set || fail "register/reserve with APTPL failed"
	before=$(logins)
	"$BENCH" --quiet --engine native --depth 8 --bs 4k --rw randread \
		--runtime 5 --span 4M --verify --reconnect 20 \
		--json "$TEST_TMP/pr.json" "$URL" >"$TEST_TMP/pr.out" 2>&1 &
	BENCH_PID=$!
	BG_PIDS+=("$BENCH_PID")
	wait_logins $((before + 1))
	wait_load_running "$SOCK" 500
	run "$TCQCTL" -s "$SOCK" save "$saved" || fail "tcqctl save failed"
	grep -qx "listen = 127.0.0.1:$PORT" "$saved" || fail "the saved state lost the portal"
	stop_tcqd_rc || fail "$STOP_WHY"
	start_same "$saved"
	# READ RESERVATION from another initiator shows the reservation.
	run "$PRCLIENT" "$URL" "$INITIATOR2" check ||
		fail "after the restart from the saved state: $OUT"
	grep -qx 'reserved by 0x7c0ffee5 type 1' <<<"$OUT" ||
		fail "no Write Exclusive reservation by 0x7c0ffee5: $OUT"
	# The holder's I_T nexus (same name, same ISID) logs in again and is
	# still the holder: reserving again is no conflict.
	run "$PRCLIENT" "$URL" "$INITIATOR" set ||
		fail "the holder, logged in again with its ISID, is not the holder: $OUT"
	wait_load pr
	[ "$BENCH_RC" -eq 0 ] || fail "the read load across the restart failed (status $BENCH_RC)"
	[ "$(point pr reconnects)" -ge 1 ] || fail "tcq-bench did not log in again"
	ok "restart from the saved state: the APTPL reservation is held, its holder logs in again with the same ISID, tcq-bench's session logged in again ($(point pr reconnects) reconnect(s), $(point pr outage_s) s) without errors"
}

# The controls: another I_T nexus cannot reserve; without the state the
# reservation is gone.
aptpl_controls() {
	local rc=0
	restart_conf on
	start_same
	run "$PRCLIENT" "$URL" "$INITIATOR" set || fail "register/reserve with APTPL failed"
	# Its REGISTER AND IGNORE passes; its RESERVE (service action 1) is a
	# RESERVATION CONFLICT, status 18h (SPC-4 5.13.9).
	if run "$PRCLIENT" "$URL" "$INITIATOR2" set; then
		fail "another initiator took the reservation"
	fi
	grep -q '^PROUT sa 1: status 24 ' <<<"$OUT" ||
		fail "another initiator's RESERVE did not get RESERVATION CONFLICT"
	tcqd_alive
	stop_tcqd_rc || fail "$STOP_WHY"
	mkdir -p "$TEST_TMP/empty"
	sed -i "s|^state_dir = .*|state_dir = $TEST_TMP/empty|" "$CONF"
	start_same
	run "$PRCLIENT" "$URL" "$INITIATOR2" check || rc=$?
	[ "$rc" -eq 1 ] && grep -qx 'not reserved' <<<"$OUT" ||
		fail "reserved without the state (status $rc): $OUT"
	ok "controls: another I_T nexus gets a conflict; without the saved state there is no reservation"
}

CHECKS=(
	sigterm_restart_no_errors_with_reconnect
	sigterm_restart_fails_without_reconnect
	libiscsi_sigterm_restart_no_errors_with_reconnect
	libiscsi_sigterm_restart_fails_without_reconnect
	libiscsi_sigkill_restart_counts_reconnect
	reconnect_gives_up_after_secs
	sigkill_restart_keeps_acknowledged_writes_wce_on
	sigkill_restart_keeps_acknowledged_writes_wce_off
	sigkill_restart_fails_without_reconnect
	aptpl_saved_state_restart_keeps_reservation
	aptpl_controls
)
run_checks "$@"
