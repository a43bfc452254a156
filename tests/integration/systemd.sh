#!/bin/bash
# systemd: the unit (conf/tcqd.service.in, made to point at the built
# tcqd) passes `systemd-analyze verify` (and a broken copy does not), and
# a tcqd started with NOTIFY_SOCKET sends READY=1 once its portal accepts
# connections and STOPPING=1 on SIGTERM (Type=notify, target/notify.c),
# and RELOADING=1 (with MONOTONIC_USEC=) then READY=1 on SIGHUP.
# shellcheck source=tests/integration/lib.sh
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

need_built "$TCQD"
UNIT_IN=$top_srcdir/conf/tcqd.service.in

# unit DIR: the unit with the built tcqd in ExecStart, as DIR/tcqd.service.
unit() {
	mkdir -p "$1"
	sed -e "s|@sbindir@|$(cd "$(dirname "$TCQD")" && pwd)|g" \
		-e "s|@sysconfdir@|$TEST_TMP|g" "$UNIT_IN" >"$1/tcqd.service" ||
		fail "cannot make the unit from $UNIT_IN"
}

# verify FILE: systemd-analyze verify, its complaints in $OUT (none: 0).
# --man=no: the man pages of Documentation= are not installed here.
verify() {
	run systemd-analyze verify --man=no "$1" || return 1
	[ -z "$OUT" ]
}

unit_passes_systemd_analyze_verify() {
	need_tool systemd-analyze
	unit "$TEST_TMP/good"
	verify "$TEST_TMP/good/tcqd.service" ||
		fail "systemd-analyze verify complains: $OUT"
	ok "systemd-analyze verify: no complaint"
	grep -qx 'Type=notify' "$TEST_TMP/good/tcqd.service" || fail "not Type=notify"
	grep -qx 'ExecReload=/bin/kill -HUP $MAINPID' "$TEST_TMP/good/tcqd.service" ||
		fail "ExecReload is not kill -HUP \$MAINPID"
	ok "Type=notify, ExecReload sends SIGHUP"
}

broken_unit_fails_systemd_analyze_verify() {
	need_tool systemd-analyze
	unit "$TEST_TMP/bad"
	sed -i 's|^ExecStart=[^ ]*|ExecStart=/nonexistent/tcqd|' \
		"$TEST_TMP/bad/tcqd.service"
	verify "$TEST_TMP/bad/tcqd.service" &&
		fail "a unit whose ExecStart does not exist passes"
	ok "a unit whose ExecStart does not exist fails verify"
	unit "$TEST_TMP/bad2"
	sed -i 's|^Type=notify|Type=notifyy|' "$TEST_TMP/bad2/tcqd.service"
	verify "$TEST_TMP/bad2/tcqd.service" &&
		fail "a unit with a bad Type= passes"
	ok "a unit with a bad Type= fails verify"
}

# A unix datagram socket that logs every message it gets, one line per
# message ("READY=1", "STOPPING=1", "STATUS=..."); on READY=1 it connects
# to the portal tcqd printed (its URL in the file $2) and logs
# "portal: connected" or "portal: FAILED ..." right after.
LISTENER='
import re, socket, sys, time
path, url_file, log = sys.argv[1:4]
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(path)
s.settimeout(60)
out = open(log, "a", buffering=1)
out.write("listening\n")
while True:
    try:
        data = s.recv(65536).decode()
    except socket.timeout:
        out.write("timeout\n")
        break
    for line in data.split("\n"):
        out.write(line + "\n")
    if "READY=1" in data.split("\n"):
        m = None
        try:
            m = re.search(r"iscsi://([0-9.]+):([0-9]+)/", open(url_file).read())
        except OSError:
            pass
        if not m:
            out.write("portal: FAILED no URL printed before READY=1\n")
        else:
            try:
                socket.create_connection((m.group(1), int(m.group(2))), 5).close()
                out.write("portal: connected\n")
            except OSError as e:
                out.write("portal: FAILED %s\n" % e)
    if "STOPPING=1" in data.split("\n"):
        break
'

notify_ready_after_listen_stopping_on_sigterm() {
	local sock=$TEST_TMP/notify.sock log=$TEST_TMP/notify.log pid
	need_tool python3
	: >"$log"
	# tcqd's stdout file of the next start_tcqd (lib.sh).
	python3 -c "$LISTENER" "$sock" "$TEST_TMP/tcqd.$((TCQD_RUNS + 1)).out" \
		"$log" &
	pid=$!
	BG_PIDS+=("$pid")
	wait_until 50 grep -qx listening "$log" ||
		fail "the notify listener did not start"
	export NOTIFY_SOCKET=$sock
	start_tcqd
	unset NOTIFY_SOCKET
	wait_until 50 grep -q '^portal: ' "$log" ||
		fail "no READY=1 within 5 s: $(paste -sd' ' "$log")"
	grep -qx 'portal: connected' "$log" ||
		fail "READY=1 came before the portal listened: $(grep '^portal' "$log")"
	ok "READY=1 once the portal $TCQD_PORTAL accepts connections"
	grep -q '^STATUS=1 target on 1 portal$' "$log" ||
		fail "no STATUS= line: $(paste -sd' ' "$log")"
	ok "STATUS= tells the targets and portals"
	grep -q STOPPING=1 "$log" && fail "STOPPING=1 before SIGTERM"
	stop_tcqd
	wait_until 50 grep -qx 'STOPPING=1' "$log" ||
		fail "no STOPPING=1 after SIGTERM: $(paste -sd' ' "$log")"
	ok "STOPPING=1 on SIGTERM"
	wait "$pid" || fail "the notify listener failed"
}

# One line per datagram: the CLOCK_MONOTONIC microseconds it came at,
# then its fields joined by "|"; ends at STOPPING=1.
DGRAMS='
import socket, sys, time
path, log = sys.argv[1:3]
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(path)
s.settimeout(60)
out = open(log, "a", buffering=1)
out.write("listening\n")
while True:
    try:
        data = s.recv(65536).decode()
    except socket.timeout:
        out.write("timeout\n")
        break
    now = time.clock_gettime_ns(time.CLOCK_MONOTONIC) // 1000
    out.write("%d %s\n" % (now, "|".join(data.split("\n"))))
    if "STOPPING=1" in data.split("\n"):
        break
'

# reload_notified LOG SENT: the datagrams in LOG (DGRAMS' lines) that
# follow a SIGHUP sent at CLOCK_MONOTONIC microsecond SENT keep the reload
# protocol: RELOADING=1 with MONOTONIC_USEC= in one message, stamped
# between SENT and its arrival, then READY=1 again.
reload_notified() {
	local log=$1 sent=$2 line recv usec n
	wait_until 50 grep -q 'RELOADING=1' "$log" ||
		fail "no RELOADING=1 within 5 s of SIGHUP: $(paste -sd' ' "$log")"
	line=$(grep -m1 'RELOADING=1' "$log")
	[[ $line =~ ^([0-9]+)\ (.*\|)?MONOTONIC_USEC=([0-9]+)(\||$) ]] ||
		fail "RELOADING=1 without MONOTONIC_USEC= in its message: $line"
	recv=${BASH_REMATCH[1]} usec=${BASH_REMATCH[3]}
	# Before: usec <= recv and recv - usec < 5 s (a latency ceiling).
	# Now an order on CLOCK_MONOTONIC alone: stamped after the SIGHUP was
	# sent and before the message came; another clock (CLOCK_REALTIME,
	# CLOCK_BOOTTIME after a suspend) falls outside, however slow the host.
	[ "$sent" -le "$usec" ] && [ "$usec" -le "$recv" ] ||
		fail "MONOTONIC_USEC=$usec is not CLOCK_MONOTONIC between the SIGHUP ($sent) and the message ($recv)"
	ok "SIGHUP: RELOADING=1 with MONOTONIC_USEC=$usec (CLOCK_MONOTONIC) in one message"
	wait_until 50 eval '[ "$(grep -c " READY=1$" "$log")" -ge 2 ]' ||
		fail "no READY=1 after the reload: $(paste -sd' ' "$log")"
	n=$(grep -n 'RELOADING=1' "$log" | cut -d: -f1)
	tail -n +"$n" "$log" | grep -q ' READY=1$' ||
		fail "READY=1 came before RELOADING=1, not after: $(paste -sd' ' "$log")"
}

# The sd_notify(3) reload protocol (Type=notify-reload, systemd 253):
# on SIGHUP, RELOADING=1 with MONOTONIC_USEC= (CLOCK_MONOTONIC, in the
# same message), then READY=1 once the reload is done.
notify_reloading_then_ready_on_sighup() {
	local sock=$TEST_TMP/reload.sock log=$TEST_TMP/reload.log pid conf
	local line usec recv n sent
	need_tool python3
	conf=$TEST_TMP/reload.conf
	tcqd_conf "$conf" iqn.2026-11.org.tcq:notify 8M
	: >"$log"
	python3 -c "$DGRAMS" "$sock" "$log" &
	pid=$!
	BG_PIDS+=("$pid")
	wait_until 50 grep -qx listening "$log" ||
		fail "the notify listener did not start"
	export NOTIFY_SOCKET=$sock
	start_tcqd -c "$conf"
	unset NOTIFY_SOCKET
	wait_until 50 grep -q ' READY=1$' "$log" ||
		fail "no READY=1 at start: $(paste -sd' ' "$log")"
	grep -q RELOADING=1 "$log" && fail "RELOADING=1 before SIGHUP"
	printf '\n[lun iqn.2026-11.org.tcq:notify 1]\nbackend = null\nsize = 1M\n' \
		>>"$conf"
	sent=$(monotonic_usec)
	kill -HUP "$TCQD_PID"
	reload_notified "$log" "$sent"
	# Its whole log: an earlier check's tcqd wrote a file of the same
	# name (each check counts its tcqds from 1), so the mark is off.
	wait_until 20 grep -qF "reload: LUN iqn.2026-11.org.tcq:notify/1 added" \
		"$TCQD_LOG" || fail "the reload did not add LUN 1"
	ok "then READY=1 again, the file applied (LUN 1 added)"
	stop_tcqd
	wait "$pid" || fail "the notify listener failed"
}

# A stand-in for tcqd that breaks the reload protocol one way (argv[1]):
# on SIGHUP it sends READY=1 alone (no-reloading), RELOADING=1 without
# MONOTONIC_USEC= (no-usec), RELOADING=1 stamped on CLOCK_REALTIME
# (realtime), or RELOADING=1 and no READY=1 after it (no-ready).
FAKE='
import os, signal, socket, sys, time
mode = sys.argv[1]
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.connect(os.environ["NOTIFY_SOCKET"])
send = lambda m: s.send(m.encode())
def hup(*_):
    usec = time.clock_gettime_ns(time.CLOCK_MONOTONIC) // 1000
    if mode == "no-reloading":
        send("READY=1")
    elif mode == "no-usec":
        send("RELOADING=1"); send("READY=1")
    elif mode == "realtime":
        send("RELOADING=1\nMONOTONIC_USEC=%d" % (time.time_ns() // 1000))
        send("READY=1")
    else:
        send("RELOADING=1\nMONOTONIC_USEC=%d" % usec)
def term(*_):
    send("STOPPING=1"); sys.exit(0)
signal.signal(signal.SIGHUP, hup)
signal.signal(signal.SIGTERM, term)
send("READY=1")
while True:
    signal.pause()
'

monotonic_usec() {
	python3 -c 'import time
print(time.clock_gettime_ns(time.CLOCK_MONOTONIC) // 1000)'
}

# The control of notify_reloading_then_ready_on_sighup, kept: the same
# assertions (reload_notified) fail against a daemon that leaves out any
# one part of the protocol, so a change that takes their teeth fails here.
reload_check_fails_each_broken_protocol() {
	local mode sock log pid fake sent
	need_tool python3
	for mode in no-reloading no-usec realtime no-ready; do
		sock=$TEST_TMP/fake-$mode.sock log=$TEST_TMP/fake-$mode.log
		: >"$log"
		python3 -c "$DGRAMS" "$sock" "$log" &
		pid=$!
		BG_PIDS+=("$pid")
		wait_until 50 grep -qx listening "$log" ||
			fail "the notify listener did not start"
		NOTIFY_SOCKET=$sock python3 -c "$FAKE" "$mode" &
		fake=$!
		BG_PIDS+=("$fake")
		wait_until 50 grep -q ' READY=1$' "$log" ||
			fail "the $mode stand-in sent no READY=1: $(paste -sd' ' "$log")"
		sent=$(monotonic_usec)
		kill -HUP "$fake"
		if (reload_notified "$log" "$sent") >/dev/null 2>&1; then
			fail "reload_notified passes a daemon whose reload is $mode: $(paste -sd' ' "$log")"
		fi
		note_get >/dev/null
		kill -TERM "$fake"
		wait "$fake" || fail "the $mode stand-in failed"
		wait "$pid" || fail "the notify listener failed"
	done
	ok "the reload checks fail a daemon that sends no RELOADING=1, one without MONOTONIC_USEC=, one stamped on CLOCK_REALTIME, and one without READY=1 after it"
}

CHECKS=(
	unit_passes_systemd_analyze_verify
	broken_unit_fails_systemd_analyze_verify
	notify_ready_after_listen_stopping_on_sigterm
	notify_reloading_then_ready_on_sighup
	reload_check_fails_each_broken_protocol
)
run_checks "$@"
