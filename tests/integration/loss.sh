#!/bin/bash
# A lossy network (issue 16, part 5): the whole script runs in a network
# namespace of its own, whose loopback drops a share of the iSCSI port's
# packets with nftables (numgen random mod 100 < N drop, in a table of the
# test's own: it goes with the namespace). Under 1% and 5% loss, with
# digests off and on, a verified random read/write load ends with no
# verify mismatch and no error, in bounded time; and a connection that
# goes silent (every packet dropped) is dropped by tcqd's NOP-In pings, so
# dead sessions do not pile up.
# shellcheck source=tests/integration/lib.sh

# Into a fresh namespace first (re-run there; it goes when we return).
if [ -z "${TCQ_LOSS_NETNS:-}" ]; then
	if [ "$(id -u)" -ne 0 ] || ! command -v ip >/dev/null ||
		! command -v nft >/dev/null; then
		. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"
		need_tool nft
		[ "$(id -u)" -eq 0 ] || skip "needs root for a network namespace"
	fi
	ns=tcq-loss-$$
	ip netns add "$ns" || exit 99
	rc=0
	ip netns exec "$ns" env TCQ_LOSS_NETNS="$ns" bash "$0" "$@" || rc=$?
	ip netns del "$ns"
	exit "$rc"
fi
ip link set lo up
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

BENCH=${BENCH:-$top_builddir/tcq-bench}
TCQCTL=${TCQCTL:-$top_builddir/tcqctl}
LIVECDB=${LIVECDB:-$top_builddir/tests/integration/livecdb}
need_built "$BENCH" "$TCQCTL" "$LIVECDB"
need_tool nft
SOCK=$TEST_TMP/ctl.sock
TUR=000000000000

# loss PCT: drop PCT% of the packets to and from the portal's port (0:
# no rule). Both directions: every packet on lo passes output once.
loss() {
	nft delete table inet tcqloss 2>/dev/null
	[ "$1" -gt 0 ] || return 0
	local sel="numgen random mod 100 < $1"
	[ "$1" -lt 100 ] || sel=	# all of them
	nft -f - <<EOF || fail "cannot set up nftables"
table inet tcqloss {
	chain out {
		type filter hook output priority 0; policy accept;
		tcp dport $TCQD_PORT $sel drop
		tcp sport $TCQD_PORT $sel drop
	}
}
EOF
}

fixture_lossy() {
	start_tcqd --ctl "$SOCK" --threads 2
}

# verified_load PCT [DIGEST-OPTIONS...]: 3 s of verified random 4K-64K
# reads and writes at depth 8 under PCT% loss: no error, no mismatch.
verified_load() {
	local pct=$1
	shift
	loss "$pct"
	run "$BENCH" --quiet --engine native "$@" --rw randrw --bs 4k,64k \
		--depth 8 --runtime 3 --span 8M --verify --json "$TEST_TMP/l.json" \
		"$TCQD_URL"
	local rc=$?
	loss 0
	[ "$rc" -eq 0 ] || fail "the load under $pct% loss failed (status $rc)"
	grep -q 'errors:' <<<"$OUT" && fail "errors under $pct% loss"
	ok "$pct% loss $*: a verified load ends with no error and no mismatch"
}
loss_1pct_no_digests() { verified_load 1; }
loss_1pct_digests() { verified_load 1 --header-digest --data-digest; }
loss_5pct_no_digests() { verified_load 5; }
loss_5pct_digests() { verified_load 5 --header-digest --data-digest; }

# The rule really drops: the kernel counts retransmissions under it.
loss_rule_drops_packets() {
	local before after
	before=$(nstat -az TcpRetransSegs 2>/dev/null | awk '/TcpRetransSegs/ { print $2 }')
	verified_load 5
	after=$(nstat -az TcpRetransSegs 2>/dev/null | awk '/TcpRetransSegs/ { print $2 }')
	[ -n "$before" ] && [ -n "$after" ] || fail "nstat cannot read TcpRetransSegs"
	[ "$after" -gt "$before" ] || fail "no TCP retransmission under 5% loss"
	ok "TCP retransmitted $((after - before)) segments under the 5% rule"
}

fixture_silent() {
	printf '[global]\nlisten = 127.0.0.1:0\nthreads = 2\nctl = %s\n' "$SOCK" \
		>"$TEST_TMP/silent.conf"
	printf 'nop_interval = 1\nnop_timeout = 2\n' >>"$TEST_TMP/silent.conf"
	printf '[target iqn.2026-11.org.tcq:loss]\n[lun iqn.2026-11.org.tcq:loss 0]\n' \
		>>"$TEST_TMP/silent.conf"
	printf 'backend = null\nsize = 64M\n' >>"$TEST_TMP/silent.conf"
	start_tcqd -c "$TEST_TMP/silent.conf"
}
session_count() {
	OUT=$(tc "$TCQCTL" -s "$SOCK" sessions 2>&1) || return 1
	[ "$(grep -c '^TSIH' <<<"$OUT")" = "$1" ]
}

# Three sessions whose packets all vanish: tcqd's pings go unanswered and
# it drops each connection within nop_interval + nop_timeout (and TCP's
# own retries are not what ends them: those take minutes).
silent_connections_are_dropped() {
	local i fd
	# A FIFO held open here is each client's stdin: it stays up, idle.
	mkfifo "$TEST_TMP/idle" || fail "no FIFO"
	exec {fd}<>"$TEST_TMP/idle"
	for i in 1 2 3; do
		"$LIVECDB" "$TCQD_URL" <"$TEST_TMP/idle" >"$TEST_TMP/w$i.out" 2>&1 &
		BG_PIDS+=($!)
	done
	wait_until 100 session_count 3 || fail "not 3 sessions: $OUT"
	loss 100
	wait_until 100 session_count 0 || { loss 0; fail "sessions left after 10 s of silence: $OUT"; }
	loss 0
	log_has "NOP-In ping not answered" \
		"tcqd ended the silent connections after unanswered pings"
}

CHECKS=(
	@lossy
	loss_1pct_no_digests
	loss_1pct_digests
	loss_5pct_no_digests
	loss_5pct_digests
	loss_rule_drops_packets
	@silent
	silent_connections_are_dropped
)
run_checks "$@"
