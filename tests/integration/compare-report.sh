#!/bin/bash
# shellcheck disable=SC2317  # checks run by run_checks in subshells
# scripts/lib/compare_report.py on recorded points whose figures the test
# chose (no target runs): the series limit, fio at half the depth and
# the goals' pairing of peers are computed as the report defines them.
# Expected values come from those definitions: series 1/(1/local +
# 1/null), half share fio(D/2) ÷ fio(D), istgt (page cache) compared
# with tcqd through the page cache, tgt with tcqd.
# shellcheck source=tests/integration/lib.sh
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

REPORT=$top_srcdir/scripts/lib/compare_report.py
listing "$@" || need_tool python3

# report_run DIR BUFFERED [CUTOFF]: records every point (fio local 100
# units, fio at half the depth 80, tcqd on null 300, tcqd 60, tgt 50,
# istgt 100, tcqd through the page cache BUFFERED, and with CUTOFF tcqd
# with --cut-through off at the 128K reads of QD1, 4, 8, 32) and runs the
# report in peers mode into DIR/r.md and DIR/r.json.
report_run() {
	local d=$1 buffered=$2 cutoff=${3:-0}
	mkdir -p "$d"
	python3 - "$d" "$buffered" "$cutoff" <<'PY' || fail "could not write the recorded points"
import json, os, sys
d, buffered, cutoff = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
work = ["rr4k-qd1", "rr4k-qd32", "rw4k-qd32", "r128k-qd1", "r128k-qd2",
        "r128k-qd4", "r128k-qd8", "r128k-qd32", "r1m-qd4", "w64k-qd8"]
half = ["rr4k-qd16", "rw4k-qd16", "r128k-qd16", "r1m-qd2", "w64k-qd4"]
res, n = [], 0
def put(target, name, kind, body, rnd, extra=None):
    global n
    n += 1
    p = os.path.join(d, "p%d.json" % n)
    json.dump(body, open(p, "w"))
    r = {"target": target, "name": name, "kind": kind, "round": rnd,
         "json": p}
    r.update(extra or {})
    res.append(r)
def fio(v):  # v IOPS and v MB/s: one figure whichever the metric
    return {"jobs": [{"read": {"iops": v, "bw_bytes": v * 1e6},
                      "write": {"iops": 0, "bw_bytes": 0}}]}
def bench(v):
    return {"points": [{"iops": v, "mbps": v,
                        "lat_us": {"mean": 1.0, "p99": 2.0}}]}
cpu = {"cpu0": 0, "cpu1": 100, "threads": 1, "t0": 0.0, "t1": 1.0,
       "sessions": 1}
for rnd in (1, 2):
    for w in work:
        put("fio", w, "fio", fio(100.0), rnd)
        for t, v in (("tcqd-null", 300.0), ("tcqd", 60.0),
                     ("tgt-rdwr", 50.0), ("tgt-aio", 50.0),
                     ("istgt", 100.0), ("tcqd-buffered", buffered),
                     ("tgt-null", 200.0), ("local", 100.0)):
            put(t, w, "bench", bench(v), rnd, cpu)
    for w in half:
        put("fio", w, "fio", fio(80.0), rnd)
    if cutoff:
        for w in ("r128k-qd1", "r128k-qd4", "r128k-qd8", "r128k-qd32"):
            put("tcqd-cutoff", w, "bench", bench(cutoff), rnd, cpu)
    # r128k-qd1, -qd2 and -qd4 are workloads and the halves of -qd2, -qd4
    # and -qd8: 80 there too would change a workload, so those half
    # shares are 100/100.
    for w in ("rr4k-qd1", "r128k-qd8"):
        put("tcqd-libiscsi", w, "bench", bench(60.0), rnd, cpu)
    put("tcqd-null", "rtt512-qd1", "bench", bench(10.0), rnd, cpu)
    put("pingpong", "rtt", "pingpong", {"mean_us": 30.0}, rnd)
    put("iperf3", "wire", "iperf3",
        {"end": {"sum_received": {"bits_per_second": 8e9}}}, rnd)
with open(os.path.join(d, "res.jsonl"), "w") as f:
    for r in res:
        f.write(json.dumps(r) + "\n")
open(os.path.join(d, "cmds"), "w").close()
PY
	CP_RES=$d/res.jsonl CP_CMDS=$d/cmds CP_OUT=$d/r.md CP_JSON=$d/r.json \
		CP_KIND=peers CP_CLK=100 python3 "$REPORT" >"$d/out" 2>&1 ||
		{ cat "$d/out"; fail "compare_report.py failed"; }
}

# The falls-short figures of every deeper row, from the definitions.
report_series_and_half_depth() {
	report_run "$TEST_TMP/a" 150
	python3 - "$TEST_TMP/a/r.json" <<'PY' || fail "the rows are wrong (above)"
import json, sys
rows = {r["workload"]: r for r in json.load(open(sys.argv[1]))["rows"]}
bad = []
series = 1 / (1 / 100.0 + 1 / 300.0)       # 75
want_half = {"rr4k-qd32": 0.8, "rw4k-qd32": 0.8, "r128k-qd2": 1.0,
             "r128k-qd4": 1.0, "r128k-qd8": 1.0, "r128k-qd32": 0.8,
             "r1m-qd4": 0.8, "w64k-qd8": 0.8}
for w, r in rows.items():
    if abs(r["series"] - series) > 1e-9:
        bad.append("%s: series %r, expected %r" % (w, r["series"], series))
    if abs(r["share_series"] - 60.0 / series) > 1e-9:
        bad.append("%s: tcqd ÷ series %r" % (w, r["share_series"]))
    h = want_half.get(w)
    if (h is None) != (r["half_share"] is None) or \
            (h is not None and abs(r["half_share"] - h) > 1e-9):
        bad.append("%s: half share %r, expected %r" % (w, r["half_share"], h))
for w in ("rr4k-qd1", "r128k-qd1"):
    if rows[w]["limit_kind"] != "serial" or \
            abs(rows[w]["limit"] - series) > 1e-9:
        bad.append("%s: limit %s %r, expected serial" %
                   (w, rows[w]["limit_kind"], rows[w]["limit"]))
if len(rows) != 10:
    bad.append("%d rows, expected 10" % len(rows))
print("\n".join(bad))
sys.exit(1 if bad else 0)
PY
	ok "series limit 75 of local 100 and null 300 (the limit at QD1, 4K and 128K), tcqd 0.80 of it; fio at half the depth 0.80 of full (1.00 where the half is a workload); 10 rows"
}

# The 128K reads with --cut-through off beside the default: shares of
# the limit (QD1: serial 75; deeper: min 100) and auto ÷ off.
report_cut_through_auto_against_off() {
	[ -s "$TEST_TMP/a/r.md" ] || fail "no report (report_series_and_half_depth failed)"
	grep -q '^## Cut-through reads' "$TEST_TMP/a/r.md" &&
		fail "a run without --cut-through off points has the section"
	report_run "$TEST_TMP/c" 150 40
	python3 - "$TEST_TMP/c/r.json" <<'PY' || fail "the cut-through rows are wrong (above)"
import json, sys
ab = json.load(open(sys.argv[1]))["cut_through"]
bad = []
if [c["workload"] for c in ab] != ["r128k-qd1", "r128k-qd4", "r128k-qd8",
                                   "r128k-qd32"]:
    bad.append("rows %r" % [c["workload"] for c in ab])
for c in ab:
    lim = 75.0 if c["workload"] == "r128k-qd1" else 100.0
    for k, want in (("auto_share", 60 / lim), ("off_share", 40 / lim),
                    ("auto_off", 1.5)):
        if c[k] is None or abs(c[k] - want) > 1e-9:
            bad.append("%s: %s %r, expected %r" % (c["workload"], k, c[k],
                                                   want))
print("\n".join(bad))
sys.exit(1 if bad else 0)
PY
	grep -q '^| 128K read, QD8 | 100 MB/s | 300 MB/s | 100 MB/s | 60 MB/s | 0.60 | 40 MB/s | 0.40 | 1.50 |$' "$TEST_TMP/c/r.md" ||
		fail "no QD8 row in the cut-through table: $(grep -A7 '^## Cut-through' "$TEST_TMP/c/r.md")"
	ok "cut-through auto 60 against off 40: 1.50, shares of the serial limit at QD1 and of min(local, null) deeper; no section without off points"
}

# A goal not met names its measured reason; the falls-short table is there.
report_reason_of_a_goal_not_met() {
	[ -s "$TEST_TMP/a/r.md" ] || fail "no report (report_series_and_half_depth failed)"
	grep -q '^- \*\*NOT met\*\*: 4K random read QD32 ≥ 0.85 of local\. tcqd ÷ local 0\.60 (goal ≥ 0\.85)\. Measured reason (see \*Where a share falls short\*): 4K random read, QD32: tcqd ÷ series limit 0\.80, fio at half the depth ÷ fio 0\.80$' "$TEST_TMP/a/r.md" ||
		fail "the QD32 goal does not carry its reason: $(grep -m1 'QD32 ≥ 0.85' "$TEST_TMP/a/r.md")"
	[ "$(sed -n '/^## Where a share falls short/,/^## Loopback/p' "$TEST_TMP/a/r.md" | grep -c '^| [0-9]')" = 8 ] ||
		fail "the falls-short table has not 8 rows"
	ok "a goal not met carries tcqd ÷ series and fio's half-depth share; 8 falls-short rows"
}

# istgt beside tcqd through the page cache, tgt beside tcqd: with tcqd
# (O_DIRECT) below istgt but tcqd (buffered) above it, the goal is met;
# with tcqd (buffered) below istgt, it is not.
peers_goal() {
	python3 - "$1" <<'PY'
import json, sys
g = [x for x in json.load(open(sys.argv[1]))["goals"]
     if x["goal"].startswith("Still ahead of tgt")][0]
istgt = [c for c in g["checks"] if c["check"].endswith("÷ istgt")]
assert len(istgt) == 10 and all("tcqd (buffered) ÷ istgt" in c["check"]
                               for c in istgt), istgt
print(g["status"], " ".join("%.2f" % c["value"] for c in istgt))
PY
}
report_peers_paired_by_cache_mode() {
	local got
	got=$(peers_goal "$TEST_TMP/a/r.json") || fail "no peers goal in run a"
	[ "$got" = "met 1.50 1.50 1.50 1.50 1.50 1.50 1.50 1.50 1.50 1.50" ] ||
		fail "tcqd (buffered) 150 against istgt 100: '$got', expected met, 1.50 each"
	report_run "$TEST_TMP/b" 90
	got=$(peers_goal "$TEST_TMP/b/r.json") || fail "no peers goal in run b"
	[ "$got" = "NOT met 0.90 0.90 0.90 0.90 0.90 0.90 0.90 0.90 0.90 0.90" ] ||
		fail "tcqd (buffered) 90 against istgt 100: '$got', expected NOT met, 0.90 each"
	ok "istgt is compared with tcqd through the page cache (1.50: met; 0.90: NOT met)"
}

# Issue 28's goals in run a (tcqd 60, fio 100, null 300, tgt 50, tcqd
# through libiscsi 60): 128K shares 0.60 of min(local, null) and QD1 0.80
# of the serial limit 75, both NOT met; 1.20x tgt at 128K QD8 against 2x,
# NOT met; null's 300 IOPS per CPU-second (100 ticks of 100 Hz in 1 s)
# against 700K, NOT met; through libiscsi 1.20 of tgt at both points run
# with it, met.
report_issue28_goals() {
	[ -s "$TEST_TMP/a/r.json" ] || fail "no report (report_series_and_half_depth failed)"
	python3 - "$TEST_TMP/a/r.json" <<'PY' || fail "issue 28's goals are wrong (above)"
import json, sys
gs = json.load(open(sys.argv[1]))["goals_issue28"]
bad = []
def goal(prefix, status, values, goals):
    g = [x for x in gs if x["goal"].startswith(prefix)]
    if len(g) != 1:
        bad.append("%d goals start %r" % (len(g), prefix))
        return
    g = g[0]
    got = [round(c["value"], 6) for c in g["checks"]]
    want = [round(v, 6) for v in values]
    if g["status"] != status or got != want or \
            [c["goal"] for c in g["checks"]] != goals:
        bad.append("%s: %s %r %r, expected %s %r %r" % (
            prefix, g["status"], got, [c["goal"] for c in g["checks"]],
            status, want, goals))
goal("128K sequential read QD4, QD8, QD32", "NOT met", [0.6] * 3, [0.9] * 3)
goal("128K read QD1", "NOT met", [60 / 75.0] * 2, [1.0, 1.5 * 0.95])
goal("4K random read QD32 and 4K random write", "NOT met", [0.6] * 2,
     [0.95] * 2)
goal("IOPS per target CPU-second", "NOT met", [300.0], [700000.0])
goal("At least 2x tgt", "NOT met", [1.2] * 2, [2.0] * 2)
goal("Ahead of tgt with the second client", "met", [1.2] * 4, [1.0] * 4)
print("\n".join(bad))
sys.exit(1 if bad else 0)
PY
	grep -q 'tcqd ÷ serial limit 0\.800 (goal ≥ 1\.425)' "$TEST_TMP/a/r.md" ||
		fail "a goal of three decimals is not shown with them: $(grep -m1 '128K read QD1 ≥' "$TEST_TMP/a/r.md")"
	grep -q '^## Goals of issue 28$' "$TEST_TMP/a/r.md" ||
		fail "the report has no section for issue 28's goals"
	ok "issue 28: 128K 0.60 and QD1 0.80 of their limits, 1.20x tgt at QD8: NOT met; 1.20 of tgt through libiscsi: met"
}

CHECKS=(
	report_series_and_half_depth
	report_reason_of_a_goal_not_met
	report_peers_paired_by_cache_mode
	report_cut_through_auto_against_off
	report_issue28_goals
)
run_checks "$@"
