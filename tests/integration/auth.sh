#!/bin/bash
# Security at login: CHAP (one-way with libiscsi's MD5; SHA-256 and
# SHA3-256 and mutual with the native engine; mutual with libiscsi through
# chapclient), access control by initiator name (login refused, target
# hidden from SendTargets), the login status codes, a silent connection
# dropped by the idle timeout, and a flood of 1000 idle connections shed
# while a real login still gets in.
# shellcheck source=tests/integration/lib.sh
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

need_tool iscsi-inq iscsi-ls
BENCH=${BENCH:-$top_builddir/tcq-bench}
CHAPCLIENT=${CHAPCLIENT:-$top_builddir/tests/integration/chapclient}
CONNFLOOD=${CONNFLOOD:-$top_builddir/tests/integration/connflood}
[ -x "$CHAPCLIENT" ] || fail "chapclient not built at $CHAPCLIENT"
[ -x "$CONNFLOOD" ] || fail "connflood not built at $CONNFLOOD"
CLIENT_TIMEOUT=20

IQN=iqn.2026-11.org.tcq:auth
USER1=tcquser
SECRET1=initiator-secret-1
TUSER=iqn.2026-11.org.tcq:auth-target
TSECRET=target-secret-22

# url [USER%SECRET@]: the LUN 0 URL of the running tcqd.
url() { printf 'iscsi://%s127.0.0.1:%s/%s/0' "${1:-}" "$TCQD_PORT" "$TCQD_IQN"; }

# log_has TEXT WHAT: tcqd's log must hold TEXT (logs are line-buffered).
log_has() {
	local i
	for ((i = 0; i < 20; i++)); do
		grep -qF -- "$1" "$TCQD_LOG" && { ok "$2"; return 0; }
		sleep 0.1
	done
	fail "$2: no '$1' in the tcqd log"
}

# refused WHAT CMD...: the client must fail.
refused() {
	local what=$1
	shift
	if run "$@"; then
		fail "$what: the login succeeded"
	fi
	ok "$what: refused"
}

# ---- 1. one-way and mutual CHAP ------------------------------------------
start_tcqd --iqn "$IQN" --chap "$USER1:$SECRET1" --mutual-chap "$TUSER:$TSECRET"

run iscsi-inq -i "$INITIATOR" "$(url "$USER1%$SECRET1@")" ||
	fail "CHAP (MD5) with the right secret failed"
ok "libiscsi CHAP MD5 with the right secret logs in"
log_has "authenticated by CHAP MD5" "tcqd logged the CHAP MD5 login"

refused "wrong secret" iscsi-inq -i "$INITIATOR" "$(url "$USER1%wrong-secret-99@")"
log_has "failed (0x0201): wrong CHAP response" "wrong secret answered 0x0201"
grep -F "0x0201" "$TCQD_LOG" | grep -qF "$INITIATOR" ||
	fail "the failure log line does not name the initiator"
grep -F "0x0201" "$TCQD_LOG" | grep -qF "127.0.0.1:" ||
	fail "the failure log line does not name the address"
ok "failure log line names initiator and address"
refused "unknown user" iscsi-inq -i "$INITIATOR" "$(url "nosuchuser%$SECRET1@")"
log_has "unknown CHAP user" "unknown user refused by CHAP"
refused "no CHAP at all" iscsi-inq -i "$INITIATOR" "$(url)"
log_has "authentication required" "login without CHAP answered 0x0201"

run "$CHAPCLIENT" -i "$INITIATOR" -u "$USER1" -s "$SECRET1" \
	-U "$TUSER" -S "$TSECRET" "$(url)" || fail "mutual CHAP (libiscsi) failed"
grep -q "with mutual CHAP" <<<"$OUT" || fail "chapclient did not do mutual CHAP"
ok "libiscsi mutual CHAP: the target proved its secret"
refused "initiator expecting another target secret" \
	"$CHAPCLIENT" -i "$INITIATOR" -u "$USER1" -s "$SECRET1" \
	-U "$TUSER" -S "not-the-target-secret" "$(url)"

if [ -x "$BENCH" ] && "$BENCH" --help 2>&1 | grep -q -- '--chap-algs'; then
	B=(--engine native --ios 100 --rw randread --bs 4k --depth 1 --quiet)
	for alg in SHA-256 SHA3-256 SHA-1; do
		run "$BENCH" "${B[@]}" --chap-algs "$alg" \
			"$(url "$USER1%$SECRET1@")" || fail "native CHAP $alg failed"
		log_has "authenticated by CHAP $alg" "native engine logs in with $alg"
	done
	run "$BENCH" "${B[@]}" --chap-algs SHA3-256 --mutual-user "$TUSER" \
		--mutual-secret "$TSECRET" "$(url "$USER1%$SECRET1@")" ||
		fail "native mutual CHAP SHA3-256 failed"
	ok "native engine: mutual CHAP with SHA3-256"
	refused "native: wrong secret with SHA-256" "$BENCH" "${B[@]}" \
		--chap-algs SHA-256 "$(url "$USER1%bad-secret-bad@")"
else
	say "tcq-bench without CHAP options: SHA-2 CHAP not exercised"
fi
tcqd_alive
stop_tcqd

# ---- 2. access control -----------------------------------------------------
start_tcqd --iqn "$IQN" --allow "$INITIATOR2"
refused "initiator not on the list" iscsi-inq -i "$INITIATOR" "$(url)"
log_has "failed (0x0202)" "not allowed: 0x0202"
log_has "initiator $INITIATOR is not allowed on $IQN" "refusal logged"
run iscsi-inq -i "$INITIATOR2" "$(url)" || fail "allowed initiator refused"
ok "allowed initiator logs in"

run iscsi-ls -i "$INITIATOR" -s "iscsi://127.0.0.1:$TCQD_PORT" || true
grep -qF "$IQN" <<<"$OUT" && fail "SendTargets showed $IQN to $INITIATOR"
ok "SendTargets hides the target from an initiator not on the list"
run iscsi-ls -i "$INITIATOR2" -s "iscsi://127.0.0.1:$TCQD_PORT" ||
	fail "iscsi-ls as $INITIATOR2 failed"
grep -qF "Target:$IQN" <<<"$OUT" || fail "SendTargets hid $IQN from $INITIATOR2"
ok "SendTargets lists the target to an allowed initiator"

refused "unknown target" iscsi-inq -i "$INITIATOR2" \
	"iscsi://127.0.0.1:$TCQD_PORT/iqn.2026-11.org.tcq:nosuch/0"
log_has "failed (0x0203)" "unknown target: 0x0203"
stop_tcqd

# ---- 3. configuration file: networks, timeouts, flood ----------------------
make_lun "$TEST_TMP/a.img" 16M
cat >"$TEST_TMP/tcqd.conf" <<CONF
[global]
listen = 127.0.0.1:0
threads = 2
login_timeout = 3
login_idle_timeout = 1
max_pending_logins = 32
discovery_chap_user = $USER1
discovery_chap_secret = $SECRET1

[target $IQN]
chap_user = $USER1
chap_secret = $SECRET1
max_sessions_per_initiator = 1
allow_initiator = iqn.2026-11.org.tcq:test-*
allow_network = 127.0.0.0/8
allow_network = ::1

[target $IQN-far]
allow_network = 192.0.2.0/24

[lun $IQN 0]
path = $TEST_TMP/a.img

[lun $IQN-far 0]
backend = null
size = 1M
CONF
chmod 644 "$TEST_TMP/tcqd.conf"
start_tcqd -c "$TEST_TMP/tcqd.conf"
grep -q "readable by group or others" "$TCQD_LOG" ||
	fail "no warning about a readable file holding secrets"
ok "a world-readable file with secrets is warned about"
TCQD_IQN=$IQN
run iscsi-inq -i "$INITIATOR" "$(url "$USER1%$SECRET1@")" ||
	fail "config-file CHAP login failed"
ok "config-file CHAP + ACL login"
refused "discovery without CHAP" iscsi-ls -i "$INITIATOR" \
	-s "iscsi://127.0.0.1:$TCQD_PORT"
run iscsi-ls -i "$INITIATOR" -s \
	"iscsi://$USER1%$SECRET1@127.0.0.1:$TCQD_PORT" ||
	fail "discovery with CHAP failed"
grep -qF "Target:$IQN " <<<"$OUT" || fail "SendTargets did not list $IQN"
grep -qF "$IQN-far" <<<"$OUT" && fail "SendTargets showed a target of another network"
ok "discovery CHAP; SendTargets hides a target whose allow_network excludes us"

# max_sessions_per_initiator = 1: a second session of the same name waits.
if [ -x "$BENCH" ]; then
	"$BENCH" --engine native --runtime 2 --rw randread --bs 4k --depth 1 \
		--quiet --initiator-name "$INITIATOR" \
		"$(url "$USER1%$SECRET1@")" >"$TEST_TMP/hold.out" 2>&1 &
	HOLD_PID=$!
	for ((i = 0; i < 30; i++)); do
		# the native engine prefers SHA3-256; libiscsi only has MD5
		grep -qF "authenticated by CHAP SHA3-256" "$TCQD_LOG" && break
		sleep 0.1
	done
	grep -qF "authenticated by CHAP SHA3-256" "$TCQD_LOG" ||
		fail "the session-holding tcq-bench did not log in"
	refused "second session of one initiator" \
		iscsi-inq -i "$INITIATOR" "$(url "$USER1%$SECRET1@")"
	log_has "max_sessions_per_initiator reached" "session limit: 0x0302"
	run iscsi-inq -i "$INITIATOR2" "$(url "$USER1%$SECRET1@")" ||
		fail "another initiator was refused by the per-initiator limit"
	ok "another initiator still logs in"
	wait "$HOLD_PID" || fail "the session-holding tcq-bench failed"
fi

# A connection that never speaks is dropped by login_idle_timeout (1 s).
exec 3<>"/dev/tcp/127.0.0.1/$TCQD_PORT" || fail "cannot connect"
t0=$SECONDS
rc=0
read -r -t 6 -u 3 _ || rc=$?
exec 3<&-
[ "$rc" -eq 1 ] || fail "silent connection not closed within 6 s (read rc $rc)"
ok "silent connection closed after $((SECONDS - t0)) s"
log_has "login idle timeout" "idle timeout logged"

# One that trickles a byte every 0.5 s stays under the idle timeout but
# not under login_timeout (3 s).
exec 3<>"/dev/tcp/127.0.0.1/$TCQD_PORT" || fail "cannot connect"
t0=$SECONDS
closed=0
for ((i = 0; i < 20; i++)); do
	printf 'x' >&3 2>/dev/null || { closed=1; break; }
	rc=0
	read -r -t 0.5 -u 3 _ || rc=$?
	[ "$rc" -eq 1 ] && { closed=1; break; }
done
exec 3<&-
[ "$closed" -eq 1 ] || fail "trickling connection still open after 10 s"
ok "trickling connection closed after $((SECONDS - t0)) s"
log_has "login timeout" "login timeout logged"

# A flood of 1000 idle connections: shed, and a real login still works.
"$CONNFLOOD" 127.0.0.1 "$TCQD_PORT" 1000 30 >"$TEST_TMP/flood.out" 2>&1 &
FLOOD_PID=$!
for ((i = 0; i < 150; i++)); do
	grep -q '^opened' "$TEST_TMP/flood.out" && break
	sleep 0.1
done
grep -q '^opened' "$TEST_TMP/flood.out" || {
	kill "$FLOOD_PID" 2>/dev/null
	fail "connflood did not open its connections in 15 s"
}
say "$(head -1 "$TEST_TMP/flood.out")"
run iscsi-inq -i "$INITIATOR" "$(url "$USER1%$SECRET1@")" || {
	kill "$FLOOD_PID" 2>/dev/null
	fail "login during the flood failed"
}
ok "a real login gets in during the flood"
kill -TERM "$FLOOD_PID" 2>/dev/null
wait "$FLOOD_PID"
cat "$TEST_TMP/flood.out"
shed=$(sed -n 's/^closed_by_peer //p' "$TEST_TMP/flood.out")
[ "${shed:-0}" -ge 900 ] || fail "only ${shed:-0} of 1000 idle connections shed"
ok "$shed idle connections shed"
log_has "shedding the oldest" "shedding logged"
tcqd_alive
stop_tcqd

pass "all checks passed"
