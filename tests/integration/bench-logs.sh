#!/bin/bash
# tcq-bench's logs, rates and curve against a live tcqd on the null
# backend (the target is never the limit): --rate-iops read back from the
# IOPS log interval by interval, the log lines field by field as fio 3.33
# writes them (HOWTO "Log File Formats", log_offset=0), the histogram log
# read back by fio's own fiologparser_hist.py and by its definition,
# --percentiles, --curve's runs at the asked fractions, and a rate the
# target cannot reach (a 20 ms delay backend) said in the output and JSON.
# shellcheck source=tests/integration/lib.sh
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

BENCH=${BENCH:-$top_builddir/tcq-bench}
need_built "$BENCH"
# 200 IOPS (5 ms between I/Os). A paced run never goes past its schedule:
# a window holds at most RATE I/Os plus the turns a stall made it miss (at
# most 1 s of them, tcq-bench(1)) and the I/Os in flight; the whole run
# at most RATE within 5%, plus 2. A slow host can only lower the figures,
# so what is checked is the ceiling the rate sets and that the logs and
# the JSON tell the same run, never a speed the host must reach.
RATE=200
RUN_TOL=0.05

fixture_null() { start_tcqd --backend null --export null0 --size 64M; }
# Every I/O takes 20 ms: one session at depth 1 does at most 50 IOPS.
fixture_slow() {
	start_tcqd --backend delay:latency=20ms,base=null --export slow0 \
		--size 64M
}

# bench ARGS...: tcq-bench on the native engine against the fixture.
bench() {
	run "$BENCH" --quiet --rw randread --bs 4k "$@" "$TCQD_URL" ||
		fail "tcq-bench $* failed"
}

# py SCRIPT ARGS...: a Python check (Debian's python3, where fio's tools'
# pandas lives).
py() {
	local python=/usr/bin/python3
	[ -x "$python" ] || python=python3
	"$python" - "$@"
}

# holds LOG JSON VALUE: LOG's full 1 s windows (VALUE a window at the
# rate) never pass 2 x VALUE plus the I/Os in flight, their mean is the
# run's figure in JSON within 25%, and the run's IOPS never pass the RATE
# asked (within RUN_TOL, plus 2); "rate_reached" says whether it got
# within 5% of it.
holds() {
	py "$1" "$2" "$3" "$RATE" "$RUN_TOL" <<'PY'
import json, sys
log, js, want, rate, rtol = sys.argv[1], sys.argv[2], float(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5])
rows = [[int(x) for x in l.split(", ")] for l in open(log)]
full = [r for r in rows if r[0] % 1000 == 0]	# the last is partial
assert len(full) >= 4, rows
p = json.load(open(js))["points"][0]
inflight = p["depth"] * p["sessions"] * want / rate
for t, v, d, bs, prio in full:
    assert 0 <= v <= 2 * want + inflight, ("window ending at %d ms: %d" % (t, v), rows)
mean = sum(r[1] for r in full) / len(full)
assert abs(mean - p["iops"] * want / rate) <= 0.25 * mean + inflight, (mean, p["iops"], rows)
assert abs(p["rate_iops"] - rate) < 1e-6, p
assert p["iops"] <= rate * (1 + rtol) + 2, p
assert p["rate_reached"] == (p["iops"] >= 0.95 * rate), p
print("windows:", [v for _, v, _, _, _ in full], "run:", p["iops"])
PY
}

rate_iops_holds_in_every_interval() {
	need_tool python3
	bench --depth 4 --sessions 2 --rate-iops $((RATE / 2)) --runtime 5 \
		--log-interval 1000 --log-prefix "$TEST_TMP/r" \
		--json "$TEST_TMP/r.json"
	holds "$TEST_TMP/r_iops.1.log" "$TEST_TMP/r.json" "$RATE" ||
		fail "the IOPS log does not hold the rate"
	ok "$RATE IOPS (2 sessions x $((RATE / 2))): no 1 s window past the rate's ceiling, the run at most the rate, the log's windows the run's figure"
}

# --rate in MB/s (10^6 bytes) for the point in all: 0.8192 MB/s of 4096
# bytes is RATE IOPS, 800 KiB/s in the bandwidth log.
rate_mbps_total_holds_in_every_interval() {
	need_tool python3
	bench --depth 2 --sessions 2 --rate 0.8192 --rate-per total \
		--runtime 5 --log-interval 1000 --log-prefix "$TEST_TMP/m" \
		--json "$TEST_TMP/m.json"
	holds "$TEST_TMP/m_bw.1.log" "$TEST_TMP/m.json" 800 ||
		fail "the bandwidth log does not hold the rate"
	ok "--rate 0.8192 --rate-per total over 2 sessions: no window past 800 KiB/s's ceiling, at most $RATE IOPS in all"
}

# Every line of the four logs of a randrw run: fio 3.33's windowed
# entries, "time (ms), value, data direction, block size, priority".
log_lines_are_fios() {
	need_tool python3
	bench --rw randrw --depth 2 --rate-iops "$RATE" --runtime 2 \
		--log-interval 250 --log-prefix "$TEST_TMP/f" \
		--json "$TEST_TMP/f.json"
	py "$TEST_TMP/f" <<'PY' || fail "a log line is not fio's"
import sys
pre = sys.argv[1]
logs = {}
for kind in ("bw", "iops", "lat", "clat"):
    rows = []
    for l in open("%s_%s.1.log" % (pre, kind)):
        f = l.rstrip("\n").split(", ")
        assert len(f) == 5, (kind, l)             # no offset: log_offset=0
        assert all(x.isdigit() for x in f), (kind, l)
        t, v, d, bs, prio = map(int, f)
        assert d in (0, 1), (kind, l)             # 0 read, 1 write
        assert bs == 0, (kind, l)                 # windowed: block size 0
        assert prio == 0, (kind, l)               # normal priority
        rows.append((t, v, d))
    logs[kind] = rows
# bandwidth and IOPS: one line per direction per window, both directions
for kind in ("bw", "iops"):
    rows = logs[kind]
    for d in (0, 1):
        ts = [t for t, _, dd in rows if dd == d]
        assert ts == sorted(set(ts)) and len(ts) >= 7, (kind, d, ts)
        assert all(t % 250 == 0 for t in ts[:-1]), (kind, ts)
# KiB/s against IOPS of 4096-byte I/Os: bw = 4 x iops (rounding)
for (t, bw, d), (t2, io, d2) in zip(logs["bw"], logs["iops"]):
    assert (t, d) == (t2, d2) and abs(bw - 4 * io) <= 4, (t, bw, io)
# latency in ns, sane for a null target (1 us .. 1 s); lat == clat
assert logs["lat"] == logs["clat"], "lat and clat differ"
assert all(1000 <= v <= 10**9 for _, v, _ in logs["lat"]), logs["lat"]
idx = [l.rstrip("\n") for l in open(pre + "_index.txt")]
assert idx[1] == "1, randrw, 4096, 2, 1, 1, %d" % 200, idx
PY
	ok "bw, iops, lat and clat logs are fio's windowed lines, field by field"
}

# The histogram log: 3 + 1856 fields a line (fio's FIO_IO_U_PLAT_NR), its
# bins summing to the I/Os of the run, and fio's own reader agreeing.
hist_log_counts_every_io() {
	need_tool python3
	bench --rw randrw --depth 4 --ios 3000 --runtime 60 --hist-log 200 \
		--log-prefix "$TEST_TMP/h" --json "$TEST_TMP/h.json"
	py "$TEST_TMP/h_clat_hist.1.log" "$TEST_TMP/h.json" <<'PY' ||
import json, sys
ios = json.load(open(sys.argv[2]))["points"][0]["ios"]
n = 0
for l in open(sys.argv[1]):
    f = [int(x) for x in l.split(", ")]
    assert len(f) == 3 + 1856, len(f)
    assert f[1] in (0, 1) and f[2] == 4096, f[:3]
    n += sum(f[3:])
assert ios == 3000 and n == ios, (n, ios)
PY
		fail "the histogram log does not count the run's I/Os"
	ok "the histogram log's bins count the 3000 I/Os"
	local tool=/usr/share/doc/fio/fiologparser_hist.py.gz
	[ -f "$tool" ] || skip "fio's fiologparser_hist.py not installed (package fio)"
	/usr/bin/python3 -c 'import pandas' 2>/dev/null ||
		skip "python3-pandas not installed (fiologparser_hist.py needs it)"
	zcat "$tool" >"$TEST_TMP/fiologparser_hist.py"
	run /usr/bin/python3 "$TEST_TMP/fiologparser_hist.py" --noweight \
		-i 200 --directions rw "$TEST_TMP/h_clat_hist.1.log" ||
		fail "fiologparser_hist.py cannot read the log"
	awk -F', ' 'NR > 1 { n += $3 } END { exit n != 3000 }' <<<"$OUT" ||
		fail "fiologparser_hist.py counts other than 3000 samples"
	ok "fio's fiologparser_hist.py reads it and counts the 3000 I/Os"
}

# --plot's latency over time and histograms; fio's fio_generate_plots
# draws bw, iops, lat and clat from the logs.
plots_drawn_from_the_logs() {
	local d=$TEST_TMP/plots f
	need_tool gnuplot fio_generate_plots
	mkdir -p "$d"
	bench --rw randrw --depth 2 --rate-iops "$RATE" --runtime 2 \
		--log-interval 250 --log-prefix "$d/g" --plot "$d/p.svg"
	for f in p-lat-time p-lat-hist; do
		grep -q 'randrw s1 4K d2 at 200 IOPS' "$d/$f.svg" ||
			fail "$f.svg does not plot the run"
	done
	ok "--plot draws p-lat-time.svg and p-lat-hist.svg beside p.svg"
	(cd "$d" && tc fio_generate_plots t >/dev/null 2>&1) ||
		fail "fio_generate_plots failed on the logs"
	for f in bw iops lat clat; do
		[ "$(grep -c '<path' "$d/t-$f.svg")" -gt 2 ] ||
			fail "fio_generate_plots drew no $f"
	done
	ok "fio_generate_plots draws bw, iops, lat and clat from the logs"
}

percentiles_ordered_and_present() {
	need_tool python3
	bench --depth 4 --ios 2000 --runtime 60 --percentiles 99.9,50,90,99 \
		--json "$TEST_TMP/p.json"
	grep -Eq '^  randread sessions=1 bs=4K depth=4: 50%=[0-9.]+ 90%=[0-9.]+ 99%=[0-9.]+ 99.9%=[0-9.]+$' <<<"$OUT" ||
		fail "no percentile line in ascending order"
	py "$TEST_TMP/p.json" <<'PY' || fail "JSON percentiles wrong"
import json, sys
p = json.load(open(sys.argv[1]))["points"][0]
pc = p["lat_percentiles_us"]
assert list(pc) == ["50.000000", "90.000000", "99.000000", "99.900000"], pc
v = list(pc.values())
assert 0 < v[0] <= v[1] <= v[2] <= v[3], v
# the same definition as the fixed p50/p99/p999
assert (v[0], v[2], v[3]) == (p["lat_us"]["p50"], p["lat_us"]["p99"], p["lat_us"]["p999"]), (v, p["lat_us"])
PY
	ok "--percentiles printed and in --json, ascending"
	bench --depth 1 --ios 200 --runtime 60 --json "$TEST_TMP/d.json"
	! grep -q 'latency percentiles' <<<"$OUT" ||
		fail "percentiles printed without --percentiles"
	py "$TEST_TMP/d.json" <<'PY' || fail "default percentiles wrong"
import json, sys
pc = json.load(open(sys.argv[1]))["points"][0]["lat_percentiles_us"]
want = [1, 5, 10, 20, 30, 40, 50, 60, 70, 80, 90, 95, 99, 99.5, 99.9, 99.95, 99.99]
assert [float(k) for k in pc] == want, list(pc)
assert list(pc.values()) == sorted(pc.values()), pc
PY
	ok "without --percentiles, --json has fio's default list"
}

curve_runs_at_asked_fractions() {
	need_tool python3
	bench --depth 1 --runtime 1 --curve --curve-pct 20,50 \
		--json "$TEST_TMP/c.json"
	grep -Eq '^curve: randread sessions=1 bs=4K depth=1: maximum [0-9]+ IOPS$' <<<"$OUT" ||
		fail "no curve table"
	[ "$(grep -Ec '^ +(max|20|50) \|' <<<"$OUT")" -eq 3 ] ||
		fail "the curve table has not its 3 rows"
	py "$TEST_TMP/c.json" <<'PY' || fail "the curve's runs are not at the fractions"
import json, sys
pt = json.load(open(sys.argv[1]))["points"][0]
m, rows = pt["max_iops"], pt["curve"]
assert m > 0 and [r["pct"] for r in rows] == [0, 20, 50], rows
assert "rate_iops" not in rows[0] and rows[0]["iops"] == m, rows[0]
for r in rows[1:]:
    want = m * r["pct"] / 100
    assert abs(r["rate_iops"] - want) <= 0.001 * want + 0.001, (r, want)
    # reached means within 5% of the rate asked, and it is said
    assert r["rate_reached"] == (r["iops"] >= 0.95 * r["rate_iops"]), r
    assert r["iops"] <= r["rate_iops"] * 1.05 + 2, r
    assert r["errors"] == 0 and r["ios"] > 0, r
PY
	ok "--curve runs the maximum, then 20% and 50% of it"
}

unreachable_rate_is_said() {
	need_tool python3
	bench --depth 1 --rate-iops "$RATE" --runtime 1 --json "$TEST_TMP/u.json"
	grep -Eq "^rate not reached: randread sessions=1 bs=4K depth=1: asked $RATE IOPS \\(0.819 MB/s\\), did [0-9]+ IOPS" <<<"$OUT" ||
		fail "the missed rate is not said"
	py "$TEST_TMP/u.json" <<'PY' || fail "JSON does not say the rate was missed"
import json, sys
p = json.load(open(sys.argv[1]))["points"][0]
assert p["rate_iops"] == 200 and p["rate_reached"] is False, p
assert p["iops"] <= 50 * 1.1, p
PY
	ok "a rate the 20 ms target cannot reach is said (text and rate_reached)"
}

bad_values_refused() {
	local a rc
	for a in "--rate-iops 0" "--rate -1" "--rate-per both" \
		"--log-interval 0" "--hist-log x" "--percentiles 0,50" \
		"--percentiles 101" "--curve-pct 0" "--curve-pct 10,200" \
		"--rate-iops 1e10" "--log-prefix="; do
		rc=0
		# shellcheck disable=SC2086
		run "$BENCH" $a iscsi://127.0.0.1:1/x/0 || rc=$?
		[ "$rc" -eq 2 ] || fail "$a: expected exit 2, got $rc"
		a=${a%% *}
		grep -q -- "bad value for ${a%=}: " <<<"$OUT" ||
			fail "$a: the option is not named"
	done
	rc=0
	run "$BENCH" --curve --rate-iops 10 iscsi://127.0.0.1:1/x/0 || rc=$?
	[ "$rc" -eq 2 ] || fail "--curve with --rate-iops: exit $rc, not 2"
	grep -q -- '--curve sets the rate' <<<"$OUT" ||
		fail "--curve with --rate-iops not refused"
	rc=0
	run "$BENCH" --hist-log 1 --runtime 3600 iscsi://127.0.0.1:1/x/0 || rc=$?
	[ "$rc" -eq 2 ] || fail "--hist-log 1 for an hour: exit $rc, not 2"
	grep -q -- '--hist-log 1: .* MiB of bins' <<<"$OUT" ||
		fail "a --hist-log of more than 1 GiB of bins not refused"
	ok "bad --rate, --log-interval, --percentiles, --curve-pct values exit 2 naming the option"
}

CHECKS=(
	@null
	rate_iops_holds_in_every_interval
	rate_mbps_total_holds_in_every_interval
	log_lines_are_fios
	hist_log_counts_every_io
	plots_drawn_from_the_logs
	percentiles_ordered_and_present
	curve_runs_at_asked_fractions
	@slow
	unreachable_rate_is_said
	@
	bad_values_refused
)
run_checks "$@"
