#!/bin/bash
# iSNS registration ([global] isns = HOST[:PORT], tcqd.conf(5); RFC 4171)
# against Debian's open-isns server: an isnsd of the test's own on a free
# loopback port, with its database, control socket and pid file in the
# test's temp dir, started and ended by PID, queried with isnsadm --local
# (its control socket). tcqd registers its entity, its target (an iSCSI
# storage node of type Target, with its alias), its portal and a portal
# group with the tag SendTargets announces; live target add and remove
# and portal add reach the server; the registration outlives several of
# the server's registration periods (refreshed); tcqctl isns off
# deregisters, tcqctl isns sets it again and save keeps it, and a reload
# of the file with and without the key follows it; malformed
# values are refused by the key's name and change nothing; tcqd's exit
# deregisters (isns_stops_cleanly). With the server down at start, tcqd serves at once, says
# "retrying" (logged once, however many attempts fail), and registers
# once the server comes up; a server that comes back with an empty
# database gets everything again.
# shellcheck source=tests/integration/lib.sh
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

TCQCTL=${TCQCTL:-$top_builddir/tcqctl}
need_built "$TCQCTL"
need_tool isnsd isnsadm iscsi-inq iscsi-ls python3

SOCK=$TEST_TMP/ctl.sock
CONF=$TEST_TMP/tcqd.conf
T1=iqn.2026-12.org.tcq:isns-one
T2=iqn.2026-12.org.tcq:isns-two
T3=iqn.2026-12.org.tcq:isns-three
PERIOD=3	# the server's registration period, s (isnsd.conf)
ISNSD_RUNS=0

ctl() { run "$TCQCTL" --ctl "$SOCK" "$@"; }

# free_port: a loopback port nobody listens on now, for isnsd (the
# server, not tcqd, which binds port 0 itself).
free_port() {
	python3 -c 'import socket
s = socket.socket()
s.bind(("127.0.0.1", 0))
print(s.getsockname()[1])'
}

# isns_setup: the server's and isnsadm's configuration for port
# $ISNS_PORT, everything in $ISNS_DIR (never the system's /etc/isns or
# /var/lib/isns); isnsadm's has no BindAddress (it would bind the
# server's port as its source).
isns_setup() {
	ISNS_DIR=$TEST_TMP/isns
	ISNS_PORT=$(free_port) || fail "no free port"
	mkdir -p "$ISNS_DIR/db"
	cat >"$ISNS_DIR/isnsd.conf" <<EOF
SourceName = iqn.2026-12.org.tcq:test-isnsd
Database = $ISNS_DIR/db
BindAddress = 127.0.0.1:$ISNS_PORT
ControlSocket = $ISNS_DIR/isnsctl
PIDFile = $ISNS_DIR/isnsd.pid
Security = 0
SLPRegister = 0
DefaultDiscoveryDomain = 1
RegistrationPeriod = $PERIOD
EOF
	cat >"$ISNS_DIR/isnsadm.conf" <<EOF
SourceName = iqn.2026-12.org.tcq:test-isnsadm
ServerAddress = 127.0.0.1:$ISNS_PORT
ControlSocket = $ISNS_DIR/isnsctl
Security = 0
EOF
}

# isnsadm waits for a server that is down: 10 s at most.
adm() { timeout -k 2 10 isnsadm -c "$ISNS_DIR/isnsadm.conf" --local "$@" 2>&1; }
isns_up() { adm --list entities >/dev/null; }

# start_isnsd [fresh]: isnsd in the foreground, in the background; fresh
# empties its database first (a server that lost it). Its PID goes to a
# file of the test's own: a check may start it and the group end it.
start_isnsd() {
	[ -s "$ISNS_DIR/started.pid" ] && fail "start_isnsd: isnsd already running"
	[ "${1:-}" = fresh ] && rm -rf "$ISNS_DIR/db" && mkdir -p "$ISNS_DIR/db"
	ISNSD_RUNS=$((ISNSD_RUNS + 1))
	say "\$ isnsd -c $ISNS_DIR/isnsd.conf --foreground (port $ISNS_PORT)"
	isnsd -c "$ISNS_DIR/isnsd.conf" --foreground \
		>"$ISNS_DIR/isnsd.$ISNSD_RUNS.log" 2>&1 &
	echo $! >"$ISNS_DIR/started.pid"
	wait_until 100 isns_up || fail "isnsd did not answer within 10 s: $(cat "$ISNS_DIR/isnsd.$ISNSD_RUNS.log")"
	say "isnsd pid $!"
}

isnsd_gone() { ! kill -0 "$1" 2>/dev/null; }

# stop_isnsd [KILL]: ends the isnsd this test started, by its PID.
stop_isnsd() {
	local pid
	[ -s "${ISNS_DIR:-/nonexistent}/started.pid" ] || return 0
	pid=$(cat "$ISNS_DIR/started.pid")
	kill "-${1:-TERM}" "$pid" 2>/dev/null
	wait_until 100 isnsd_gone "$pid" || kill -KILL "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	rm -f "$ISNS_DIR/started.pid"
}

# A group (not a check: a server a check restarts serves the rest of the
# group) ends the isnsd it left running (checks.sh).
exit_hook() {
	[ "$CTX" = fixture ] || return 0
	stop_isnsd KILL
}
# and so does the script, however it ends (then lib.sh's cleanup)
trap 'rc=$?; stop_isnsd KILL; (exit "$rc"); lib_cleanup' EXIT

# The server's objects, as isnsadm prints them.
nodes() { adm --list nodes; }
portals() { adm --list portals; }
has_node() { nodes | grep -qF "iSCSI name = \"$1\""; }
lacks_node() { ! has_node "$1"; }
has_portal() { portals | grep -qF "Portal TCP/UDP port = $1/tcp"; }
has_entity() { adm --list entities | grep -qF 'Entity identifier = "tcqd:'; }
no_entity() { ! has_entity; }

# wait_for WHAT CMD...: CMD holds within 30 s.
wait_for() {
	local what=$1
	shift
	wait_until 300 "$@" || fail "$what: not within 30 s"
}

targets_line() { ctl targets >/dev/null && tail -1 <<<"$OUT"; }
state_is() { [[ $(targets_line) == "isns 127.0.0.1:$ISNS_PORT $1"* ]]; }

metric() {
	ctl metrics >/dev/null || return 1
	sed -n "s/^$1 //p" <<<"$OUT"
}

# ---- a server, then tcqd

fixture_isns() {
	isns_setup
	start_isnsd
	tcqd_conf "$CONF" "$T1" 8M "ctl = $SOCK" "isns = 127.0.0.1:$ISNS_PORT"
	# the target's alias and tag, in its section (before its LUN's)
	sed -i "s/^\[target $T1\]\$/&\nalias = isns disk\ntpgt = 7/" "$CONF"
	start_tcqd -c "$CONF"
}

# isns_stops_cleanly: tcqd exits 0, and its exit deregistered it.
teardown_isns() {
	wait_for "an entity before the exit" has_entity
	stop_tcqd
	no_entity || fail "the entity is still there: $(adm --list entities)"
	ok "tcqd's exit deregistered its entity"
	stop_isnsd
}

target_portal_and_group_registered() {
	local q
	wait_for "$T1 registered" has_node "$T1"
	nodes | grep -A3 -F "iSCSI name = \"$T1\"" | grep -qF 'iSCSI node type = Target' ||
		fail "$T1 is not a Target node: $(nodes)"
	nodes | grep -qF 'iSCSI alias = "isns disk"' || fail "no alias: $(nodes)"
	portals | grep -qF 'Portal IP address = 127.0.0.1' || fail "no portal 127.0.0.1: $(portals)"
	has_portal "$TCQD_PORT" || fail "no portal port $TCQD_PORT: $(portals)"
	# the portal group's tag is the one discovery announces
	run iscsi-ls -i "$INITIATOR" "iscsi://$TCQD_PORTAL" || fail "iscsi-ls failed"
	grep -qF "Portal:$TCQD_PORTAL,7" <<<"$OUT" || fail "SendTargets does not give tag 7: $OUT"
	q=$(tc isnsadm -c "$ISNS_DIR/isnsadm.conf" --query "iscsi-name=$T1" 2>&1)
	say "$q"
	grep -qF 'Portal group tag = 7' <<<"$q" || fail "no portal group with tag 7"
	grep -qF "Portal group port = $TCQD_PORT/tcp" <<<"$q" || fail "no portal group on port $TCQD_PORT"
	ok "$T1 (Target, alias 'isns disk'), portal 127.0.0.1:$TCQD_PORT and portal group tag 7 (as SendTargets says) are on the server"
}

tcqctl_and_metrics_show_registered() {
	wait_for "registered" state_is registered
	[[ $(targets_line) == *"targets 1  portals 1  period ${PERIOD}s" ]] ||
		fail "tcqctl targets: $(targets_line)"
	[ "$(metric "tcq_isns_registered{server=\"127.0.0.1:$ISNS_PORT\"}")" = 1 ] ||
		fail "tcq_isns_registered is not 1"
	ok "tcqctl targets: '$(targets_line)'; tcq_isns_registered 1"
}

registration_outlives_the_period() {
	local i
	wait_for "registered" has_node "$T1"
	# the server drops an entity not heard from for PERIOD s (RFC 4171
	# 6.2.6): three periods later tcqd's is still there
	for ((i = 0; i < 3 * PERIOD; i++)); do
		sleep 1
		has_node "$T1" || fail "the server dropped $T1 after ${i}s"
	done
	ok "$T1 is still registered after $((3 * PERIOD)) s, three registration periods"
}

live_target_add_registered() {
	ctl target add "$T2" || fail "target add failed"
	wait_for "$T2 registered" has_node "$T2"
	has_node "$T1" || fail "$T1 went"
	ok "tcqctl target add $T2: the server has it, and $T1"
}

live_portal_add_registered() {
	local p
	# tcqd binds a port of its own choosing and names it (tcqctl(8)):
	# no port picked beforehand that another test could take meanwhile
	ctl portal add 127.0.0.1:0 || fail "portal add failed"
	p=$(sed -n 's/^portal 127\.0\.0\.1:\([0-9]*\) added$/\1/p' <<<"$OUT")
	[ -n "$p" ] || fail "portal add does not name the port: $OUT"
	wait_for "portal $p registered" has_portal "$p"
	has_portal "$TCQD_PORT" || fail "portal $TCQD_PORT went"
	ok "tcqctl portal add 127.0.0.1:$p: the server has it, and the first"
}

live_target_remove_deregistered() {
	ctl target remove "$T1" || fail "target remove failed"
	wait_for "$T1 deregistered" lacks_node "$T1"
	has_node "$T2" || fail "$T2 went with $T1"
	# the node that sent the earlier messages is gone: a new target is
	# still taken (open-iscsi/target-isns#10, #38)
	ctl target add "$T3" || fail "target add failed"
	wait_for "$T3 registered" has_node "$T3"
	ok "tcqctl target remove $T1: gone from the server, $T2 stays; $T3 added after it is registered"
}

bad_values_refused_by_name() {
	local v rc before
	ctl config || fail "tcqctl config failed"
	before=$OUT
	for v in 127.0.0.1:0 127.0.0.1:65536 ::1 'bad_host' a..b '[::1'; do
		rc=0
		ctl isns "$v" || rc=$?
		[ "$rc" -eq 1 ] || fail "tcqctl isns $v: status $rc, expected 1"
		[[ $OUT == *"bad value for 'isns'"* ]] || fail "tcqctl isns $v: the message does not name isns: $OUT"
	done
	ctl config || fail "tcqctl config failed"
	[ "$OUT" = "$before" ] || fail "the configuration changed"
	state_is registered || fail "no longer registered: $(targets_line)"
	ok "malformed values refused naming 'isns'; configuration and registration unchanged"
}

isns_off_deregisters() {
	ctl isns off || fail "tcqctl isns off failed"
	wait_for "the entity deregistered" no_entity
	[ "$(targets_line)" = "isns off" ] || fail "tcqctl targets: $(targets_line)"
	[ -z "$(metric "tcq_isns_registered{server=\"127.0.0.1:$ISNS_PORT\"}")" ] ||
		fail "tcq_isns_registered still there"
	ok "tcqctl isns off: the server has no tcqd entity; 'isns off'"
}

isns_set_live_and_saved() {
	ctl isns "127.0.0.1:$ISNS_PORT" || fail "tcqctl isns failed"
	wait_for "registered again" has_node "$T3"
	has_node "$T2" || fail "$T2 is not registered"
	ctl save "$TEST_TMP/saved.conf" || fail "save failed"
	grep -qxF "isns = 127.0.0.1:$ISNS_PORT" "$TEST_TMP/saved.conf" ||
		fail "saved file has no isns line: $(cat "$TEST_TMP/saved.conf")"
	ok "tcqctl isns 127.0.0.1:$ISNS_PORT registers $T2 and $T3 again; save writes it"
}

# The file, edited and reloaded (tcqctl reload, as SIGHUP): isns taken
# out deregisters, put back registers again.
reload_follows_the_file() {
	[ -s "$TEST_TMP/saved.conf" ] || fail "no saved file (isns_set_live_and_saved)"
	grep -v '^isns = ' "$TEST_TMP/saved.conf" >"$CONF"
	ctl reload || fail "reload failed"
	wait_for "the entity deregistered" no_entity
	cp "$TEST_TMP/saved.conf" "$CONF"
	ctl reload || fail "reload failed"
	wait_for "$T2 registered" has_node "$T2"
	has_node "$T3" || fail "$T3 not registered"
	ok "reload without isns deregistered; with it again, $T2 and $T3 are registered"
}

server_back_empty_gets_it_all() {
	wait_for "registered" state_is registered
	stop_isnsd
	wait_for "retrying" state_is retrying
	start_isnsd fresh
	wait_for "$T2 registered again" has_node "$T2"
	has_node "$T3" || fail "$T3 not registered again"
	wait_for "registered" state_is registered
	ok "isnsd restarted with an empty database: $T2, $T3 registered again"
}

# ---- tcqd first, the server later

fixture_down() {
	isns_setup
	tcqd_conf "$CONF" "$T1" 8M "ctl = $SOCK" "isns = 127.0.0.1:$ISNS_PORT"
	start_tcqd -c "$CONF"
}

teardown_down() {
	stop_tcqd
	stop_isnsd
}

serves_at_once_while_server_down() {
	run iscsi-inq -i "$INITIATOR" "$TCQD_URL" || fail "iscsi-inq failed"
	wait_for "retrying" state_is retrying
	[[ $(targets_line) == *"error: "* ]] || fail "no error shown: $(targets_line)"
	ok "iscsi-inq answered while the server is down; tcqctl targets: '$(targets_line)'"
}

failures() { metric "tcq_isns_failures_total{server=\"127.0.0.1:$ISNS_PORT\"}"; }
two_failures() { [ "$(failures)" -ge 2 ] 2>/dev/null; }

registers_when_server_comes_up() {
	local warns
	wait_for "two failed attempts" two_failures
	start_isnsd
	wait_for "$T1 registered" has_node "$T1"
	wait_for "registered" state_is registered
	warns=$(grep -c 'iSNS: .*retrying in the background' "$TCQD_LOG")
	[ "$warns" -eq 1 ] || fail "$(failures) failures logged $warns times, not once"
	ok "$(failures) failed attempts, logged once; registered once the server came up"
}

bad_isns_in_a_file_names_its_key() {
	tcqd_conf "$TEST_TMP/bad.conf" "$T1" 8M "isns = 127.0.0.1:99999"
	conf_refused "$TEST_TMP/bad.conf" "bad value for 'isns'" "isns port 99999"
	ok "tcqd refuses the file: $OUT"
}

CHECKS=(
	@isns
	target_portal_and_group_registered
	tcqctl_and_metrics_show_registered
	registration_outlives_the_period
	live_target_add_registered
	live_portal_add_registered
	live_target_remove_deregistered
	bad_values_refused_by_name
	isns_off_deregisters
	isns_set_live_and_saved
	reload_follows_the_file
	server_back_empty_gets_it_all
	@down
	serves_at_once_while_server_down
	registers_when_server_comes_up
	@
	bad_isns_in_a_file_names_its_key
)
run_checks "$@"
