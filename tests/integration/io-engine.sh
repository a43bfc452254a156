#!/bin/bash
# io_engine (tcqd.conf(5), tcqd --io-engine; issue 28): the engine tcqd
# runs is the one asked, logged at start ("io engine: uring", "io engine:
# aio (why)"), shown by tcqctl stats and as the tcq_io_engine metric's
# label; auto takes io_uring on a kernel that allows it (this one: 6.x);
# a change of it is refused live by the key's name and changes nothing; a
# bad value is refused by the key's (or the option's) name. Both engines
# serve a write read back whole (every other test runs on one engine or
# the other: scripts/check, TCQ_TEST_IO_ENGINE).
# shellcheck source=tests/integration/lib.sh
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

TCQCTL=${TCQCTL:-$top_builddir/tcqctl}
RAWCDB=${RAWCDB:-$top_builddir/tests/integration/rawcdb}
need_built "$TCQCTL" "$RAWCDB"

SOCK=$TEST_TMP/ctl.sock
CONF=$TEST_TMP/tcqd.conf
T=iqn.2026-11.org.tcq:engine

ctl() { run "$TCQCTL" --ctl "$SOCK" "$@"; }

# engine_is NAME WHY: tcqd logged "io engine: NAME[ (WHY)]", tcqctl stats
# says it and the metric carries it.
engine_is() {
	local line="io engine: $1${2:+ ($2)}"
	grep -qF -- "$line" "$TCQD_LOG" || fail "tcqd did not log '$line'"
	ok "tcqd logged '$line' at start"
	ctl stats || fail "tcqctl stats: $OUT"
	grep -qx "io engine: $1" <<<"$OUT" ||
		fail "tcqctl stats does not say 'io engine: $1'"
	ok "tcqctl stats says 'io engine: $1'"
	ctl metrics || fail "tcqctl metrics: $OUT"
	grep -qx "tcq_io_engine{engine=\"$1\"} 1" <<<"$OUT" ||
		fail "no tcq_io_engine{engine=\"$1\"} 1 in the metrics"
	ok "the metric tcq_io_engine{engine=\"$1\"} is 1"
}

# A WRITE(10) of one 512-byte block at LBA 8, then a READ(10) of it: the
# data comes back whole through the engine's file I/O (O_DIRECT file).
write_reads_back() {
	local data
	# 512 bytes: 00..ff, then ff..00
	data=$(printf '%02x' $(seq 0 255) $(seq 255 -1 0))
	run "$RAWCDB" "$TCQD_URL" "2a000000000800000100=$data" \
		"28000000000800000100:512" || fail "rawcdb: $OUT"
	[ "$OUT" = "$(printf 'GOOD -\nGOOD %s' "$data")" ] ||
		fail "READ(10) did not return the block written"
	ok "a block written through the $1 engine reads back the same"
}

# auto, from the file alone (no --io-engine, which would override it on
# reload too, nor the test pass's TCQ_TEST_IO_ENGINE): uring here.
fixture_auto() {
	tcqd_conf "$CONF" "$T" 8M "ctl = $SOCK" "io_engine = auto"
	TCQ_TEST_IO_ENGINE='' start_tcqd -c "$CONF"
}

auto_takes_uring_here() { engine_is uring; }
uring_reads_back_what_it_wrote() { write_reads_back uring; }

# The key is restart only: a reload that changes it is refused by its
# name, and the running configuration stays as it was.
io_engine_refused_live() {
	local before
	before=$(tc "$TCQCTL" --ctl "$SOCK" config) || fail "tcqctl config"
	cp "$CONF" "$CONF.keep"
	sed -i 's/^io_engine = auto/io_engine = aio/' "$CONF"
	ctl reload && fail "a reload that changes io_engine was taken"
	[[ $OUT == *"[global] io_engine changes only with a restart"* ]] ||
		fail "the refusal does not name io_engine: $OUT"
	mv "$CONF.keep" "$CONF"
	[ "$(tc "$TCQCTL" --ctl "$SOCK" config)" = "$before" ] ||
		fail "a refused change changed the configuration"
	engine_is uring
	ok "a live change of io_engine is refused by its name, nothing changed"
}

fixture_aio() {
	tcqd_conf "$CONF" "$T" 8M "ctl = $SOCK"
	start_tcqd -c "$CONF" --io-engine aio
}

aio_is_logged_with_why() { engine_is aio "io_engine = aio"; }
aio_reads_back_what_it_wrote() { write_reads_back aio; }

bad_engine_refused_by_name() {
	local rc=0
	printf '[global]\nio_engine = epoll\n' >"$TEST_TMP/bad.conf"
	conf_refused "$TEST_TMP/bad.conf" \
		"bad value for 'io_engine': 'epoll' is not auto, uring or aio" \
		"io_engine = epoll"
	ok "io_engine = epoll is refused by the key's name"
	run "$TCQD_BIN" --io-engine epoll --export "$TEST_TMP/x.img" --size 1M ||
		rc=$?
	[ "$rc" -eq 2 ] || fail "tcqd --io-engine epoll: status $rc, expected 2"
	[[ $OUT == *"--io-engine: 'epoll' is not auto, uring or aio"* ]] ||
		fail "the usage error does not name --io-engine: $OUT"
	[ ! -e "$TEST_TMP/x.img" ] || fail "a refused start created the LUN"
	ok "tcqd --io-engine epoll exits 2 naming the option"
}

CHECKS=(
	@auto
	auto_takes_uring_here
	uring_reads_back_what_it_wrote
	io_engine_refused_live
	@aio
	aio_is_logged_with_why
	aio_reads_back_what_it_wrote
	@
	bad_engine_refused_by_name
)
run_checks "$@"
