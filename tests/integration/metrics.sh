#!/bin/bash
# Prometheus metrics of a live tcqd: /metrics over HTTP (tcqd --metrics)
# and tcqctl stats --prometheus. Counters move by what a tcq-bench load
# did (bytes = bs x I/Os from its JSON), refused logins count under their
# reason, promtool accepts both texts, other paths get 404 and other
# methods 405, and a bad --metrics or metrics = value stops tcqd with a
# message naming it.
# shellcheck source=tests/integration/lib.sh
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

TCQCTL=${TCQCTL:-$top_builddir/tcqctl}
BENCH=${BENCH:-$top_builddir/tcq-bench}
need_built "$TCQCTL" "$BENCH"
need_tool curl jq promtool

SOCK=$TEST_TMP/ctl.sock
IQN=iqn.2026-11.org.tcq:metrics
CHAP_USER=tcquser
CHAP_SECRET=initiator-secret-1
L="target=\"$IQN\",lun=\"0\""
CLIENT_TIMEOUT=30

# metrics_addr: the HOST:PORT tcqd logged for /metrics (port 0 picked).
metrics_addr() {
	local a
	wait_until 50 grep -q 'metrics on http://' "$TCQD_LOG" ||
		fail "tcqd did not log 'metrics on http://...'"
	a=$(sed -n 's|.*metrics on http://\([^ ]*\)/metrics$|\1|p' "$TCQD_LOG" | tail -n 1)
	[ -n "$a" ] || fail "cannot read the metrics address from the log"
	printf '%s\n' "$a"
}

# scrape: GET /metrics into $TEST_TMP/m.txt (and $OUT), status 200.
scrape() {
	local code
	code=$(tc curl -sg -o "$TEST_TMP/m.txt" -w '%{http_code}' \
		"http://$MADDR/metrics") || fail "curl http://$MADDR/metrics failed"
	[ "$code" = 200 ] || fail "GET /metrics: HTTP $code"
	OUT=$(cat "$TEST_TMP/m.txt")
}

# val NAME{LABELS}: V is the sample's value in the last scrape; fails
# when there is not exactly one such sample.
V=
val() {
	V=$(awk -v k="$1" '$1 == k { print $2; n++ } END { exit n != 1 }' \
		<<<"$OUT") || fail "no single sample '$1' in the metrics"
}

bench() {
	run "$BENCH" --quiet --initiator-name "$INITIATOR" --ramp 0 "$@" \
		"$TCQD_URL"
}

fixture_metrics() {
	start_tcqd --iqn "$IQN" --allow "$INITIATOR" --ctl "$SOCK" \
		--metrics 127.0.0.1:0 --threads 2
	MADDR=$(metrics_addr) || exit 1
	export MADDR
	say "metrics at http://$MADDR/metrics"
}

metrics_served_on_loopback_with_format_004() {
	local hdr
	[[ $MADDR == 127.0.0.1:* ]] || fail "metrics not on 127.0.0.1: $MADDR"
	hdr=$(tc curl -sgI "http://$MADDR/metrics") || fail "HEAD /metrics failed"
	printf '%s\n' "$hdr" | sed 's/^/    /'
	grep -q '^HTTP/1.1 200' <<<"$hdr" || fail "HEAD /metrics is not 200"
	grep -qi '^Content-Type: text/plain; version=0.0.4' <<<"$hdr" ||
		fail "Content-Type is not the text format 0.0.4"
	ok "HEAD /metrics: 200, text format 0.0.4"
	scrape
	val "tcq_build_info{version=\"$("$TCQD" --version | awk '{ print $2 }')\"}"
	[ "$V" = 1 ] || fail "tcq_build_info is not 1"
	ok "tcq_build_info names the version"
}

read_bytes_equal_bs_times_bench_reads() {
	local r0 c0 r1 c1 ios
	scrape
	val "tcq_lun_read_bytes_total{$L}"
	r0=$V
	val "tcq_lun_commands_by_class_total{$L,class=\"read\"}"
	c0=$V
	bench --rw randread --bs 4k --depth 4 --ios 3000 \
		--json "$TEST_TMP/read.json" || fail "tcq-bench randread failed"
	ios=$(jq -e '.points[0].ios' "$TEST_TMP/read.json") ||
		fail "no ios in tcq-bench's JSON"
	[ "$ios" -gt 0 ] || fail "tcq-bench did no reads"
	scrape
	val "tcq_lun_read_bytes_total{$L}"
	r1=$V
	val "tcq_lun_commands_by_class_total{$L,class=\"read\"}"
	c1=$V
	[ $((r1 - r0)) -eq $((4096 * ios)) ] ||
		fail "read bytes moved by $((r1 - r0)), expected 4096 x $ios = $((4096 * ios))"
	ok "tcq_lun_read_bytes_total moved by 4096 x $ios"
	[ $((c1 - c0)) -eq "$ios" ] ||
		fail "read commands moved by $((c1 - c0)), expected $ios"
	ok "read commands moved by $ios"
}

write_bytes_equal_bs_times_bench_writes() {
	local w0 w1 ios
	scrape
	val "tcq_lun_write_bytes_total{$L}"
	w0=$V
	bench --rw randwrite --bs 16k --depth 4 --ios 1000 \
		--json "$TEST_TMP/write.json" || fail "tcq-bench randwrite failed"
	ios=$(jq -e '.points[0].ios' "$TEST_TMP/write.json") ||
		fail "no ios in tcq-bench's JSON"
	scrape
	val "tcq_lun_write_bytes_total{$L}"
	w1=$V
	[ "$ios" -gt 0 ] && [ $((w1 - w0)) -eq $((16384 * ios)) ] ||
		fail "write bytes moved by $((w1 - w0)), expected 16384 x $ios"
	ok "tcq_lun_write_bytes_total moved by 16384 x $ios"
}

latency_histogram_is_cumulative_and_counts_completions() {
	local n inf done prev=0 v le
	scrape
	val "tcq_lun_latency_seconds_count{$L}"
	n=$V
	val "tcq_lun_latency_seconds_bucket{$L,le=\"+Inf\"}"
	inf=$V
	val "tcq_lun_commands_completed_total{$L}"
	done=$V
	[ "$n" -gt 0 ] || fail "no latency samples after the loads"
	[ "$n" = "$inf" ] || fail "_count $n differs from the +Inf bucket $inf"
	[ "$n" = "$done" ] || fail "_count $n differs from completed commands $done"
	ok "latency _count = +Inf bucket = completed commands ($n)"
	for le in 1e-05 0.0001 0.001 0.01 0.1 1 10; do
		val "tcq_lun_latency_seconds_bucket{$L,le=\"$le\"}"
		v=$V
		[ "$v" -ge "$prev" ] || fail "bucket le=$le ($v) below the one before ($prev)"
		prev=$v
	done
	[ "$inf" -ge "$prev" ] || fail "+Inf below le=10"
	val "tcq_lun_latency_seconds_sum{$L}"
	awk -v s="$V" 'BEGIN { exit !(s > 0) }' ||
		fail "latency _sum is not positive"
	ok "buckets are cumulative, _sum is positive"
}

promtool_accepts_http_metrics() {
	scrape
	run promtool check metrics <"$TEST_TMP/m.txt" ||
		fail "promtool check metrics rejects /metrics"
	ok "promtool accepts /metrics"
}

promtool_accepts_tcqctl_stats_prometheus() {
	run "$TCQCTL" -s "$SOCK" stats --prometheus || fail "tcqctl stats --prometheus failed"
	printf '%s\n' "$OUT" >"$TEST_TMP/ctl.txt"
	grep -q "^tcq_lun_read_bytes_total{$L} [1-9]" "$TEST_TMP/ctl.txt" ||
		fail "tcqctl stats --prometheus lacks the LUN's read bytes"
	run promtool check metrics <"$TEST_TMP/ctl.txt" ||
		fail "promtool check metrics rejects tcqctl stats --prometheus"
	ok "promtool accepts tcqctl stats --prometheus"
	run "$TCQCTL" -s "$SOCK" metrics || fail "tcqctl metrics failed"
	grep -q '^# TYPE tcq_lun_latency_seconds histogram$' <<<"$OUT" ||
		fail "tcqctl metrics prints no latency histogram"
	ok "tcqctl metrics prints the same text"
}

other_paths_404_other_methods_405() {
	local p code
	for p in / /metric /metrics/ /metrics/x /foo; do
		code=$(tc curl -sg -o /dev/null -w '%{http_code}' "http://$MADDR$p")
		[ "$code" = 404 ] || fail "GET $p: HTTP $code, expected 404"
	done
	ok "other paths: 404"
	code=$(tc curl -sg -o /dev/null -w '%{http_code}' -X POST -d x \
		"http://$MADDR/metrics")
	[ "$code" = 405 ] || fail "POST /metrics: HTTP $code, expected 405"
	ok "POST /metrics: 405"
}

sessions_are() {
	scrape
	val "tcq_target_sessions{target=\"$IQN\"}"
	[ "$V" = "$1" ]
}

session_gauge_counts_live_session() {
	"$BENCH" --quiet --initiator-name "$INITIATOR" --rw randread --bs 4k \
		--depth 2 --runtime 3 "$TCQD_URL" >"$TEST_TMP/hold.out" 2>&1 &
	BG_PIDS+=($!)
	wait_until 30 sessions_are 1 ||
		fail "tcq_target_sessions did not show the live session"
	val tcq_sessions
	[ "$V" -ge 1 ] || fail "tcq_sessions is 0 with a session up"
	ok "tcq_target_sessions = 1 while tcq-bench runs"
	wait "${BG_PIDS[-1]}" || { cat "$TEST_TMP/hold.out"; fail "the load failed"; }
	unset 'BG_PIDS[-1]'
	wait_until 30 sessions_are 0 ||
		fail "tcq_target_sessions stays up after logout"
	ok "and 0 once it logged out"
}

acl_refusal_counted_under_acl() {
	local t0 g0 t1 g1
	scrape
	val "tcq_target_logins_refused_total{target=\"$IQN\",reason=\"acl\"}"
	t0=$V
	val 'tcq_logins_refused_total{reason="acl"}'
	g0=$V
	if run "$BENCH" --quiet --initiator-name "$INITIATOR2" --ios 10 "$TCQD_URL"; then
		fail "$INITIATOR2 logged in past the ACL"
	fi
	log_has "initiator $INITIATOR2 is not allowed on $IQN" "the ACL refused $INITIATOR2"
	scrape
	val "tcq_target_logins_refused_total{target=\"$IQN\",reason=\"acl\"}"
	t1=$V
	val 'tcq_logins_refused_total{reason="acl"}'
	g1=$V
	[ $((t1 - t0)) -eq 1 ] || fail "target's acl refusals moved by $((t1 - t0)), expected 1"
	[ $((g1 - g0)) -eq 1 ] || fail "daemon-wide acl refusals moved by $((g1 - g0)), expected 1"
	val "tcq_target_logins_refused_total{target=\"$IQN\",reason=\"chap\"}"
	[ "$V" = 0 ] || fail "an ACL refusal counted as chap"
	ok "one ACL refusal: reason=\"acl\" +1, for the target and daemon-wide"
}

unknown_target_refusal_counted() {
	local g0 g1
	scrape
	val 'tcq_logins_refused_total{reason="unknown_target"}'
	g0=$V
	if run "$BENCH" --quiet --initiator-name "$INITIATOR" --ios 10 \
		"iscsi://$TCQD_PORTAL/iqn.2026-11.org.tcq:nobody/0"; then
		fail "a login to an unknown target succeeded"
	fi
	scrape
	val 'tcq_logins_refused_total{reason="unknown_target"}'
	g1=$V
	[ $((g1 - g0)) -eq 1 ] ||
		fail "unknown_target refusals moved by $((g1 - g0)), expected 1"
	ok "a login to an unknown target: reason=\"unknown_target\" +1"
}

fixture_chap() {
	start_tcqd --iqn "$IQN" --chap "$CHAP_USER:$CHAP_SECRET" --metrics 0
	MADDR=$(metrics_addr) || exit 1
	export MADDR
}

chap_refusal_counted_under_chap() {
	local before after url
	[[ $MADDR == 127.0.0.1:* ]] || fail "a bare port 0 is not on 127.0.0.1: $MADDR"
	ok "--metrics 0 listens on 127.0.0.1 ($MADDR)"
	scrape
	val "tcq_target_logins_refused_total{target=\"$IQN\",reason=\"chap\"}"
	before=$V
	url="iscsi://$CHAP_USER%wrong-secret-99@$TCQD_PORTAL/$IQN/0"
	if run "$BENCH" --quiet --engine native --ios 10 "$url"; then
		fail "a wrong CHAP secret logged in"
	fi
	log_has "failed (0x0201)" "CHAP refused the login"
	scrape
	val "tcq_target_logins_refused_total{target=\"$IQN\",reason=\"chap\"}"
	after=$V
	[ $((after - before)) -eq 1 ] ||
		fail "chap refusals moved by $((after - before)), expected 1"
	ok "a wrong CHAP secret: reason=\"chap\" +1"
	run "$BENCH" --quiet --engine native --ios 10 \
		"iscsi://$CHAP_USER%$CHAP_SECRET@$TCQD_PORTAL/$IQN/0" ||
		fail "the right CHAP secret was refused"
	scrape
	val "tcq_target_logins_refused_total{target=\"$IQN\",reason=\"chap\"}"
	[ "$V" = "$after" ] || fail "a good CHAP login counted as refused"
	ok "a good CHAP login is not counted"
}

# max_sessions = 1: a second session while one is up is refused (0x0302).
fixture_limit() {
	tcqd_conf "$TEST_TMP/limit.conf" "$IQN" 16M "max_sessions = 1" \
		"metrics = 127.0.0.1:0"
	start_tcqd -c "$TEST_TMP/limit.conf"
	MADDR=$(metrics_addr) || exit 1
	export MADDR
}

session_limit_refusal_counted_under_limit() {
	local t0 g0
	scrape
	val "tcq_target_logins_refused_total{target=\"$IQN\",reason=\"limit\"}"
	t0=$V
	val 'tcq_logins_refused_total{reason="limit"}'
	g0=$V
	"$BENCH" --quiet --rw randread --bs 4k --depth 1 --runtime 3 \
		"$TCQD_URL" >"$TEST_TMP/hold.out" 2>&1 &
	BG_PIDS+=($!)
	wait_until 30 sessions_are 1 || fail "the first session did not show"
	if run "$BENCH" --quiet --ios 10 "$TCQD_URL"; then
		fail "a second session logged in past max_sessions = 1"
	fi
	log_has "max_sessions of the daemon reached" "the second session hit the limit"
	scrape
	val "tcq_target_logins_refused_total{target=\"$IQN\",reason=\"limit\"}"
	[ $((V - t0)) -eq 1 ] || fail "the target's limit refusals moved by $((V - t0)), expected 1"
	val 'tcq_logins_refused_total{reason="limit"}'
	[ $((V - g0)) -eq 1 ] || fail "daemon-wide limit refusals moved by $((V - g0)), expected 1"
	ok "max_sessions refusal: reason=\"limit\" +1"
	wait "${BG_PIDS[-1]}" || { cat "$TEST_TMP/hold.out"; fail "the first load failed"; }
	unset 'BG_PIDS[-1]'
}

ipv6_loopback_metrics() {
	local code
	start_tcqd --metrics '[::1]:0'
	MADDR=$(metrics_addr) || exit 1
	[[ $MADDR == '[::1]:'* ]] || fail "metrics not on [::1]: $MADDR"
	code=$(tc curl -sg -o /dev/null -w '%{http_code}' "http://$MADDR/metrics")
	[ "$code" = 200 ] || fail "GET http://$MADDR/metrics: HTTP $code"
	ok "--metrics [::1]:0 serves /metrics on $MADDR"
}

metrics_from_config_file() {
	tcqd_conf "$TEST_TMP/m.conf" "$IQN" 16M "metrics = :0"
	start_tcqd -c "$TEST_TMP/m.conf"
	MADDR=$(metrics_addr) || exit 1
	[[ $MADDR == 127.0.0.1:* ]] || fail "metrics = :0 is not on 127.0.0.1: $MADDR"
	scrape
	val "tcq_target_sessions{target=\"$IQN\"}"
	ok "metrics = :0 in [global] serves /metrics on $MADDR"
}

# bad_value_stops_tcqd WHAT TEXT ARGS...: tcqd ARGS exits non-zero, saying
# TEXT on stderr.
bad_value_stops_tcqd() {
	local what=$1 text=$2 rc=0
	shift 2
	run "$TCQD" "$@" || rc=$?
	[ "$rc" -ne 0 ] || fail "$what: tcqd exited 0"
	[ "$rc" -ne 124 ] || fail "$what: tcqd did not exit"
	grep -qF -- "$text" <<<"$OUT" || fail "$what: no '$text' in what tcqd said"
	ok "$what: exit status $rc, '$text'"
}

bad_metrics_option_refused() {
	make_lun "$TEST_TMP/bad.img" 1M
	bad_value_stops_tcqd "--metrics abc" "tcqd: --metrics: 'abc': expected [ADDR:]PORT" \
		--export "$TEST_TMP/bad.img" --listen 127.0.0.1:0 --metrics abc
	bad_value_stops_tcqd "--metrics 1.2.3:80" "tcqd: --metrics: bad IPv4 address '1.2.3'" \
		--export "$TEST_TMP/bad.img" --listen 127.0.0.1:0 --metrics 1.2.3:80
	bad_value_stops_tcqd "--metrics 70000" "--metrics: '70000'" \
		--export "$TEST_TMP/bad.img" --listen 127.0.0.1:0 --metrics 70000
}

bad_metrics_key_refused() {
	tcqd_conf "$TEST_TMP/bad.conf" "$IQN" 1M "metrics = [::1]"
	bad_value_stops_tcqd "metrics = [::1]" "bad value for 'metrics'" \
		-c "$TEST_TMP/bad.conf"
}

metrics_port_in_use_refused() {
	local a
	start_tcqd --metrics 0
	a=$(metrics_addr) || exit 1
	make_lun "$TEST_TMP/second.img" 1M
	bad_value_stops_tcqd "a busy port" "metrics $a: cannot listen" \
		--export "$TEST_TMP/second.img" --listen 127.0.0.1:0 --metrics "$a"
}

CHECKS=(
	@metrics
	metrics_served_on_loopback_with_format_004
	read_bytes_equal_bs_times_bench_reads
	write_bytes_equal_bs_times_bench_writes
	latency_histogram_is_cumulative_and_counts_completions
	promtool_accepts_http_metrics
	promtool_accepts_tcqctl_stats_prometheus
	other_paths_404_other_methods_405
	session_gauge_counts_live_session
	acl_refusal_counted_under_acl
	unknown_target_refusal_counted
	@chap
	chap_refusal_counted_under_chap
	@limit
	session_limit_refusal_counted_under_limit
	@
	ipv6_loopback_metrics
	metrics_from_config_file
	bad_metrics_option_refused
	bad_metrics_key_refused
	metrics_port_in_use_refused
)
run_checks "$@"
