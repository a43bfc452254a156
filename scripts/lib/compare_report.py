#!/usr/bin/env python3
"""Tables and goal checks for scripts/compare-peers and scripts/limits.

Reads the points the scripts recorded (CP_RES, one JSON object a line: the
target, the workload, the round, tcq-bench's, fio's, iperf3's or
pingpong.py's JSON output, and the target's CPU ticks before and after),
keeps the best of the rounds of every point, prints the tables and writes
them with the machine, versions and commands to CP_OUT as markdown, and
(CP_JSON) the limits table and the goals as JSON. CP_KIND is "peers"
(compare-peers: tgt and istgt too) or "limits" (scripts/limits: tcqd and
the limits only). Everything comes through CP_* environment variables.
"""
import json
import os
import re

E = os.environ
CLK = float(E.get("CP_CLK", "100"))
KIND = E.get("CP_KIND", "peers")

WORKLOADS = [  # name, title, metric
    ("rr4k-qd1", "4K random read, QD1", "iops"),
    ("rr4k-qd32", "4K random read, QD32", "iops"),
    ("rw4k-qd32", "4K random write, QD32", "iops"),
    ("r128k-qd1", "128K read, QD1", "mbps"),
    ("r128k-qd2", "128K read, QD2", "mbps"),
    ("r128k-qd4", "128K read, QD4", "mbps"),
    ("r128k-qd8", "128K read, QD8", "mbps"),
    ("r128k-qd32", "128K read, QD32", "mbps"),
    ("r1m-qd4", "1M read, QD4", "mbps"),
    ("w64k-qd8", "64K write, QD8", "mbps"),
]
TITLE = {n: t for n, t, _ in WORKLOADS}
METRIC = {n: m for n, _, m in WORKLOADS}


def halved(text):
    """The same workload at half its depth: "rr4k-qd32" -> "rr4k-qd16"."""
    return re.sub(r"(qd|QD)(\d+)",
                  lambda m: m.group(1) + str(int(m.group(2)) // 2), text)


# fio at half the depth of every deeper workload (scripts/lib/limits.sh
# runs the same points): what the device loses when it is left fewer
# commands than the initiator keeps in flight.
HALF = {n: halved(n) for n, _, _ in WORKLOADS if not n.endswith("-qd1")}
for _n, _t, _m in WORKLOADS:
    if _n in HALF and HALF[_n] not in TITLE:
        TITLE[HALF[_n]] = halved(_t) + " (fio only)"
        METRIC[HALF[_n]] = _m
SERIAL = {"rr4k-qd1", "r128k-qd1"}   # QD1: the disk and the wire in series
# scripts/limits runs these again on tcqd with --cut-through off
# ("tcqd-cutoff"): cut-through reads against reads sent whole.
CUT_AB = ["r128k-qd1", "r128k-qd4", "r128k-qd8", "r128k-qd32"]
SECOND = ["rr4k-qd1", "r128k-qd8"]  # also with the libiscsi engine
PEERS = [  # compared with tcqd, in table order
    ("tgt-rdwr", "tgt (rdwr)"),
    ("tgt-aio", "tgt (aio)"),
    ("tcqd-buffered", "tcqd (buffered)"),
    ("istgt", "istgt"),
    ("local", "local (tcq-bench)"),
    ("fio", "local (fio)"),
]
TARGETS = ["tgt-rdwr", "tgt-aio", "istgt"]  # tcqd must be ahead of these
# ... each compared with tcqd in its own caching mode: tgt's stores are
# O_DIRECT as tcqd's default, istgt always uses the page cache.
MINE = {"istgt": "tcqd-buffered"}
LABEL = dict(PEERS, tcqd="tcqd")
GOAL_EFF = 560000.0  # IOPS per target CPU-second on null, 4K QD32
AGREE = 0.15         # the second client within 15% of the native one


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def figures(r, d):
    """The figures of one recorded point, or None when it failed."""
    if r["kind"] == "bench":
        if not d.get("points"):
            return None
        p = d["points"][0]
        if p.get("errors"):
            return None
        v = {"iops": p["iops"], "mbps": p["mbps"],
             "iops_sd": p.get("iops_sd", 0.0),
             "mbps_sd": p.get("mbps_sd", 0.0),
             "p99": p["lat_us"]["p99"], "mean_us": p["lat_us"]["mean"],
             "threads": r.get("threads", 0)}
        wall = r["t1"] - r["t0"]
        cpu = (r["cpu1"] - r["cpu0"]) / CLK
        if cpu > 0 and wall > 0:
            v["cpu_pct"] = 100.0 * cpu / wall
            v["eff"] = p["iops"] * wall / cpu
        return v
    if r["kind"] == "fio":
        job = d["jobs"][0]
        side = job["write"] if job["write"]["iops"] > 0 else job["read"]
        if side["iops"] <= 0:
            return None
        return {"iops": side["iops"], "mbps": side["bw_bytes"] / 1e6,
                "p99": side.get("clat_ns", {}).get("percentile", {}).get(
                    "99.000000", 0) / 1e3}
    if r["kind"] == "iperf3":
        bps = d.get("end", {}).get("sum_received", {}).get("bits_per_second")
        return {"mbps": bps / 8e6} if bps else None
    if r["kind"] == "pingpong":
        return {"mean_us": d["mean_us"]} if d.get("mean_us") else None
    return None


def better(kind, a, b):
    """The better of two rounds' figures (None = failed)."""
    if a is None or b is None:
        return a if b is None else b
    if kind == "pingpong":
        return a if a["mean_us"] <= b["mean_us"] else b
    key = "mbps" if kind == "iperf3" else "iops"
    return a if a[key] >= b[key] else b


def collect():
    """(best, rounds, order): (target, workload) -> the best figures; ->
    {round: figures or None}; the keys in the order they first ran."""
    best, rounds, order, kinds = {}, {}, [], {}
    with open(E["CP_RES"]) as f:
        for line in f:
            r = json.loads(line)
            d = load(r["json"]) if r.get("json") else None
            v = figures(r, d) if d is not None else None
            key = (r["target"], r["name"])
            if key not in rounds:
                rounds[key] = {}
                order.append(key)
            kinds[key] = r["kind"]
            rounds[key][r.get("round", 1)] = v
            best[key] = better(r["kind"], best.get(key), v)
    best = {k: v for k, v in best.items() if v is not None}
    return best, rounds, order, kinds


def num(x, metric):
    if x is None:
        return "-"
    if metric == "iops":
        return "%.1fK" % (x / 1e3) if x < 1e6 else "%.2fM" % (x / 1e6)
    if metric == "mean_us":
        return "%.1f µs" % x
    return "%.0f MB/s" % x


def fig(v, metric):
    return num(v.get(metric) if v else None, metric)


def ratio(a, b):
    return a / b if a is not None and b else None


def rfmt(r):
    return "-" if r is None else "%.2f" % r


def table(head, rows):
    out = ["| " + " | ".join(head) + " |",
           "|" + "|".join("---" for _ in head) + "|"]
    out += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(out)


def val(res, target, name, metric):
    v = res.get((target, name))
    return v.get(metric) if v else None


def limits(res):
    """Per workload: local, null, the limit, tcqd and its shares."""
    rows = []
    for name, title, m in WORKLOADS:
        loc, nul = val(res, "fio", name, m), val(res, "tcqd-null", name, m)
        t = val(res, "tcqd", name, m)
        series = 1 / (1 / loc + 1 / nul) if loc and nul else None
        if name in SERIAL:
            kind, lim = "serial", series
        else:
            kind = "min"
            lim = min(loc, nul) if loc and nul else None
        half = val(res, "fio", HALF[name], m) if name in HALF else None
        rows.append({"workload": name, "title": title, "metric": m,
                     "local": loc, "null": nul, "limit": lim,
                     "limit_kind": kind, "tcqd": t,
                     "share": ratio(t, lim), "share_local": ratio(t, loc),
                     "series": series, "share_series": ratio(t, series),
                     "local_half": half, "half_share": ratio(half, loc)})
    return rows


FALLS_SHORT_INTRO = """\
Throughput at depth D is D over the time each command takes. A target
adds to every command the time it spends away from the device (in the
target, on the wire, in the client), so the device is left fewer than D
commands on average. Where the device gives as much at D/2 as at D (fio
at half the depth ÷ fio near 1.00) it stays saturated when it is left
fewer, and min(local, null) can be reached. Where it gives much less at
D/2, every microsecond away from the device costs throughput, and a
target that does not overlap the device and the wire inside one command
reaches at most the series limit D / (D/local + D/null) =
1/(1/local + 1/null), D/null being the time per command of tcqd on null
at the same depth. local, fio at half the depth and null are all from
this run."""


def falls_short_table(rows):
    return table(
        ["workload", "local (fio)", "fio at half the depth",
         "half ÷ full depth", "series limit", "tcqd", "tcqd ÷ series",
         "tcqd ÷ limit"],
        [[r["title"], num(r["local"], r["metric"]),
          num(r["local_half"], r["metric"]), rfmt(r["half_share"]),
          num(r["series"], r["metric"]), num(r["tcqd"], r["metric"]),
          rfmt(r["share_series"]), rfmt(r["share"])]
         for r in rows if r["workload"] in HALF])


def why(r):
    """Why a deeper point's share falls short, from its measured row."""
    return ("%s: tcqd ÷ series limit %s, fio at half the depth ÷ fio %s" %
            (r["title"], rfmt(r["share_series"]), rfmt(r["half_share"])))


def limits_table(rows):
    kinds = {"serial": "serial: 1/(1/local + 1/null)",
             "min": "min(local, null)"}
    return table(
        ["workload", "local (fio)", "tcqd null", "limit", "limit is",
         "tcqd", "tcqd ÷ limit", "tcqd ÷ local"],
        [[r["title"], num(r["local"], r["metric"]),
          num(r["null"], r["metric"]), num(r["limit"], r["metric"]),
          kinds[r["limit_kind"]], num(r["tcqd"], r["metric"]),
          rfmt(r["share"]), rfmt(r["share_local"])] for r in rows])


def rounds_table(rounds, order, kinds):
    rows = []
    for key in order:
        target, name = key
        kind = kinds[key]
        m = {"iperf3": "mbps", "pingpong": "mean_us"}.get(
            kind, METRIC.get(name, "iops"))
        rs = rounds[key]
        if len(rs) < 2 and name.startswith(("sess-", "sref-")):
            continue
        figs = [rs.get(i) for i in (1, 2)]
        vals = [f.get(m) if f else None for f in figs]
        b = better(kind, *figs) if len(figs) == 2 else figs[0]
        rows.append([TITLE.get(name, name), target] +
                    [num(x, m) if f else ("failed" if i + 1 in rs else "-")
                     for i, (f, x) in enumerate(zip(figs, vals))] +
                    [fig(b, m), rfmt(ratio(vals[1], vals[0]))])
    return table(["point", "target", "round 1", "round 2", "best",
                  "round 2 ÷ round 1"], rows)


def loopback(res, rows):
    rtt = res.get(("tcqd-null", "rtt512-qd1"))
    pp = res.get(("pingpong", "rtt"))
    wire = val(res, "iperf3", "wire", "mbps")
    out = ["- iSCSI round trip, tcqd on null, 512-byte read at QD1: %s" %
           ("mean %.1f µs (%.1fK IOPS)" % (rtt["mean_us"], rtt["iops"] / 1e3)
            if rtt else "failed"),
           "- TCP round trip, 48-byte request and 4 KiB answer "
           "(scripts/lib/pingpong.py): %s" %
           ("mean %.1f µs" % pp["mean_us"] if pp else "failed"),
           "- iperf3, 127.0.0.1, one stream: %s" %
           ("%.0f MB/s" % wire if wire else "failed")]
    qd1 = [r for r in rows if r["workload"] == "rr4k-qd1"][0]
    if qd1["local"] and qd1["null"] and qd1["tcqd"]:
        us = [1e6 / qd1[k] for k in ("local", "null", "tcqd")]
        out.append("- 4K random read at QD1, time per read: local %.1f µs + "
                   "tcqd null %.1f µs = %.1f µs in series; through tcqd "
                   "%.1f µs (%+.1f µs beyond the two)" %
                   (us[0], us[1], us[0] + us[1], us[2],
                    us[2] - us[0] - us[1]))
    return "\n".join(out)


CUT_INTRO = """\
The 128K sequential reads again on tcqd with `--cut-through off` (each
READ read whole before its Data-In), beside tcqd with cut-through reads
(the default, `auto`: a READ of at least two pieces of max(the
initiator's MaxRecvDataSegmentLength, 64 KiB) read in pieces, each
Data-In sent once its bytes are read), local fio and tcqd on null, all
in this run. The limit is the one above (QD1: serial; deeper:
min(local, null))."""


def cut_ab(res, rows):
    by = {r["workload"]: r for r in rows}
    out = []
    for name in CUT_AB:
        r = by[name]
        off = val(res, "tcqd-cutoff", name, r["metric"])
        out.append({"workload": name, "title": r["title"],
                    "metric": r["metric"], "local": r["local"],
                    "null": r["null"], "limit": r["limit"],
                    "auto": r["tcqd"], "off": off,
                    "auto_share": r["share"],
                    "off_share": ratio(off, r["limit"]),
                    "auto_off": ratio(r["tcqd"], off)})
    return out


def cut_table(ab):
    return table(
        ["workload", "local (fio)", "tcqd null", "limit",
         "tcqd, cut_through auto", "÷ limit", "tcqd, cut_through off",
         "÷ limit", "auto ÷ off"],
        [[c["title"], num(c["local"], c["metric"]),
          num(c["null"], c["metric"]), num(c["limit"], c["metric"]),
          num(c["auto"], c["metric"]), rfmt(c["auto_share"]),
          num(c["off"], c["metric"]), rfmt(c["off_share"]),
          rfmt(c["auto_off"])] for c in ab])


def second_client(res):
    out = []
    for name in SECOND:
        m = METRIC[name]
        a, b = val(res, "tcqd", name, m), val(res, "tcqd-libiscsi", name, m)
        r = ratio(b, a)
        out.append({"workload": name, "title": TITLE[name], "metric": m,
                    "native": a, "libiscsi": b, "ratio": r,
                    "agrees": None if r is None else abs(r - 1) <= AGREE})
    return out


def second_table(sc):
    return table(["workload", "native", "libiscsi", "libiscsi ÷ native",
                  "within %.0f%%" % (100 * AGREE)],
                 [[s["title"], num(s["native"], s["metric"]),
                   num(s["libiscsi"], s["metric"]), rfmt(s["ratio"]),
                   "-" if s["agrees"] is None else
                   ("yes" if s["agrees"] else "NO")] for s in sc])


def add_goal(out, text, checks, absent=None, reason=None):
    """Appends a goal to out. checks: (description, value, op, goal);
    value None = no data; reason: the measured figures that explain a goal
    not met."""
    if absent:
        out.append({"status": "not measured", "goal": text,
                    "detail": absent, "checks": []})
        return
    if not checks or any(v is None for _, v, _, _ in checks):
        status = "no data"
    else:
        status = "met" if all(v >= g if op == ">=" else v <= g
                              for _, v, op, g in checks) else "NOT met"

    def n(x, g):
        if x is None:
            return "-"
        if g >= 1000:
            return "%.1fK" % (x / 1e3)
        # a goal of three decimals (1.5 x 0.95) is shown with its third
        return "%.3f" % x if abs(g * 100 - round(g * 100)) > 1e-9 \
            else "%.2f" % x
    detail = "; ".join("%s %s (goal %s %s)" %
                       (d, n(v, g), "≥" if op == ">=" else "≤", n(g, g))
                       for d, v, op, g in checks)
    if status == "NOT met" and reason:
        detail += ". Measured reason (see *Where a share falls " \
                  "short*): " + reason
    out.append({"status": status, "goal": text, "detail": detail,
                "checks": [{"check": d, "value": v, "op": op, "goal": g}
                           for d, v, op, g in checks]})


def goals(res, rows, sc):
    """The goals of issue 12 (part 4): [(status, text, detail)]."""
    out = []
    by = {r["workload"]: r for r in rows}

    def goal(text, checks, absent=None, reason=None):
        add_goal(out, text, checks, absent, reason)

    goal("4K random read QD1 ≥ 0.90 of the serial limit 1/(1/local + 1/null)",
         [("tcqd ÷ serial limit", by["rr4k-qd1"]["share"], ">=", 0.90)])
    goal("4K random read QD32 ≥ 0.85 of local",
         [("tcqd ÷ local", by["rr4k-qd32"]["share_local"], ">=", 0.85)],
         reason=why(by["rr4k-qd32"]))
    big = ("r128k-qd4", "r128k-qd8", "r128k-qd32")
    goal("128K sequential read QD4, QD8, QD32 ≥ 0.85 of min(local, null)",
         [("%s tcqd ÷ limit" % n[6:].upper(), by[n]["share"], ">=", 0.85)
          for n in big],
         reason="; ".join(why(by[n]) for n in big
                          if (by[n]["share"] or 0) < 0.85))
    goal("4K random write QD32 ≥ 0.90 of local",
         [("tcqd ÷ local", by["rw4k-qd32"]["share_local"], ">=", 0.90)],
         reason=why(by["rw4k-qd32"]))
    eff = val(res, "tcqd-null", "rr4k-qd32", "eff")
    goal("IOPS per target CPU-second on null (4K random read QD32) no "
         "worse than %.0fK" % (GOAL_EFF / 1e3),
         [("IOPS per CPU-s", eff, ">=", GOAL_EFF)])
    if KIND == "peers":
        checks = [("%s: %s ÷ %s" % (TITLE[n], LABEL[MINE.get(p, "tcqd")],
                                     LABEL[p]),
                   ratio(val(res, MINE.get(p, "tcqd"), n, METRIC[n]),
                         val(res, p, n, METRIC[n])), ">=", 1.0)
                  for n, _, _ in WORKLOADS for p in TARGETS]
        checks += [("%s on null ÷ tgt null" % TITLE[n],
                    ratio(val(res, "tcqd-null", n, METRIC[n]),
                          val(res, "tgt-null", n, METRIC[n])), ">=", 1.0)
                   for n, _, _ in WORKLOADS]
        goal("Still ahead of tgt and istgt at every point (tgt beside "
             "tcqd with O_DIRECT, istgt, which always uses the page cache, "
             "beside tcqd through the page cache)", checks)
    else:
        goal("Still ahead of tgt and istgt at every point", [],
             absent="scripts/limits runs no peer: see scripts/compare-peers")
    sp = session_points(res)
    if KIND == "peers" and sp:
        # "Its peak": the most that fewer (or as many) sessions gave, so
        # the aggregate rises and then holds.
        checks, peak = [], 0.0
        for n, v, _ in sp:
            peak = max(peak, v["iops"])
            checks.append(("%d sessions ÷ peak so far" % n, v["iops"] / peak,
                           ">=", 0.95))
        checks += [("%d sessions ÷ one session at QD%d" % (n, 8 * n),
                    ratio(v["iops"], ref["iops"]) if ref else None,
                    ">=", 0.90) for n, v, ref in sp]
        goal("1..%d sessions at depth 8: never more than 5%% below the peak, "
             "and within 10%% of one session at QD 8 × sessions" %
             max(n for n, _, _ in sp), checks)
    goal("A second client (tcq-bench --engine libiscsi) agrees with the "
         "native engine within %.0f%%" % (100 * AGREE),
         [("%s |libiscsi ÷ native - 1|" % s["title"],
           None if s["ratio"] is None else abs(s["ratio"] - 1), "<=", AGREE)
          for s in sc])
    return out


# Issue 28's goals. "128K QD1 at 1.5x the figure of the day it was
# filed": that day tcqd gave 0.95 of the serial limit, so 1.5x it is
# 1.425 of the limit measured in the same run (an absolute figure from
# another day says nothing on this machine).
GOAL28_SHARE = 0.90
GOAL28_QD1_FILED = 0.95
GOAL28_LOCAL = 0.95
GOAL28_EFF = 700000.0
GOAL28_TGT_QD8 = 2.0


def goals28(res, rows):
    """The goals of issue 28: [(status, text, detail)], as goals()."""
    out = []
    by = {r["workload"]: r for r in rows}
    big = ("r128k-qd4", "r128k-qd8", "r128k-qd32")
    add_goal(out, "128K sequential read QD4, QD8, QD32 ≥ %.2f of "
             "min(local, null)" % GOAL28_SHARE,
             [("%s tcqd ÷ limit" % n[6:].upper(), by[n]["share"], ">=",
               GOAL28_SHARE) for n in big],
             reason="; ".join(why(by[n]) for n in big
                              if (by[n]["share"] or 0) < GOAL28_SHARE))
    q1 = by["r128k-qd1"]["share"]
    add_goal(out, "128K read QD1 ≥ 1.0 of the serial limit and ≥ 1.5x the "
             "share of the day issue 28 was filed (%.2f of the limit, so "
             "≥ %.3f)" % (GOAL28_QD1_FILED, 1.5 * GOAL28_QD1_FILED),
             [("tcqd ÷ serial limit", q1, ">=", 1.0),
              ("tcqd ÷ serial limit", q1, ">=", 1.5 * GOAL28_QD1_FILED)])
    add_goal(out, "4K random read QD32 and 4K random write QD32 ≥ %.2f of "
             "local" % GOAL28_LOCAL,
             [("read tcqd ÷ local", by["rr4k-qd32"]["share_local"], ">=",
               GOAL28_LOCAL),
              ("write tcqd ÷ local", by["rw4k-qd32"]["share_local"], ">=",
               GOAL28_LOCAL)],
             reason="; ".join(why(by[n]) for n in ("rr4k-qd32", "rw4k-qd32")
                              if (by[n]["share_local"] or 0) < GOAL28_LOCAL))
    add_goal(out, "IOPS per target CPU-second on null (4K random read QD32) "
             "≥ %.0fK" % (GOAL28_EFF / 1e3),
             [("IOPS per CPU-s", val(res, "tcqd-null", "rr4k-qd32", "eff"),
               ">=", GOAL28_EFF)])
    if KIND != "peers":
        add_goal(out, "Ahead of tgt and istgt with both clients, and at "
                 "least 2x tgt at 128K QD8", [],
                 absent="scripts/limits runs no peer: see "
                 "scripts/compare-peers")
        return out
    m = METRIC["r128k-qd8"]
    add_goal(out, "At least %.0fx tgt (rdwr and aio) at 128K read QD8" %
             GOAL28_TGT_QD8,
             [("tcqd ÷ %s" % LABEL[p],
               ratio(val(res, "tcqd", "r128k-qd8", m),
                     val(res, p, "r128k-qd8", m)), ">=", GOAL28_TGT_QD8)
              for p in ("tgt-rdwr", "tgt-aio")])
    # The peers run with the native engine only: tcqd through libiscsi is
    # held to their native figures, which only understates tcqd. istgt is
    # compared with tcqd through the page cache, never run with libiscsi.
    add_goal(out, "Ahead of tgt with the second client too (tcqd through "
             "tcq-bench --engine libiscsi against tgt through the native "
             "engine, at the points run with both engines; native against "
             "native, istgt included, is issue 12's goal above)",
             [("%s: %s (libiscsi) ÷ %s" % (TITLE[n],
                                          LABEL[MINE.get(p, "tcqd")],
                                          LABEL[p]),
               ratio(val(res, "tcqd-libiscsi", n, METRIC[n]),
                     val(res, p, n, METRIC[n])), ">=", 1.0)
              for n in SECOND for p in TARGETS if p not in MINE])
    return out


def goals_text(gs):
    return "\n".join("- **%s**: %s. %s" % (g["status"], g["goal"],
                                           g["detail"]) for g in gs)


def summary(res):
    rows = []
    for name, title, m in WORKLOADS:
        t = val(res, "tcqd", name, m)
        row = [title, fig(res.get(("tcqd", name)), m)]
        row += [rfmt(ratio(t, val(res, p, name, m))) for p, _ in PEERS]
        rows.append(row)
    return table(["workload", "tcqd"] + ["tcqd ÷ " + lb for _, lb in PEERS],
                 rows)


def details(res):
    parts = []
    for name, title, m in WORKLOADS:
        t = val(res, "tcqd", name, m)
        rows = []
        for target in ["tcqd"] + [p for p, _ in PEERS]:
            v = res.get((target, name))
            if v is None:
                rows.append([LABEL[target], "failed or missing",
                             "", "", "", "", ""])
                continue
            rows.append([
                LABEL[target], fig(v, m),
                rfmt(ratio(t, v.get(m))),
                "%.0f" % v["p99"] if v.get("p99") else "-",
                "%.0f%%" % v["cpu_pct"] if "cpu_pct" in v else "-",
                "%.1fK" % (v["eff"] / 1e3) if "eff" in v else "-",
                v.get("threads") or "-"])
        parts.append("### %s (%s)\n\n" % (title, "IOPS" if m == "iops"
                                            else "MB/s") + table(
            ["target", m.upper() if m == "iops" else "MB/s", "tcqd ÷ it",
             "p99 µs", "target CPU", "IOPS per CPU-s", "threads"], rows))
    return "\n\n".join(parts)


def nulls(res, peers):
    wire = val(res, "iperf3", "wire", "mbps")
    rows = []
    for name, title, m in WORKLOADS:
        a, b = res.get(("tcqd-null", name)), res.get(("tgt-null", name))
        ta, tb = val(res, "tcqd-null", name, m), val(res, "tgt-null", name, m)
        row = [title, fig(a, m)]
        if peers:
            row += [fig(b, m), rfmt(ratio(ta, tb))]
        row += [
            "%.0f%%" % (100 * a["mbps"] / wire) if a and wire else "-",
            "%.1fK" % (a["eff"] / 1e3) if a and "eff" in a else "-",
            "%.0f%%" % a["cpu_pct"] if a and "cpu_pct" in a else "-"]
        if peers:
            row += [
                "%.1fK" % (b["eff"] / 1e3) if b and "eff" in b else "-",
                "%.0f%%" % b["cpu_pct"] if b and "cpu_pct" in b else "-"]
        rows.append(row)
    head = ["workload", "tcqd null"]
    if peers:
        head += ["tgt null", "tcqd ÷ tgt"]
    head += ["tcqd % of iperf3", "tcqd IOPS per CPU-s", "tcqd CPU"]
    if peers:
        head += ["tgt IOPS per CPU-s", "tgt CPU"]
    return table(head, rows)


def session_points(res):
    """[(sessions, point, single-session QD 8 x sessions point or None)]"""
    return sorted((int(n[5:]), v, res.get(("tcqd", "sref-" + n[5:])))
                  for (t, n), v in res.items()
                  if t == "tcqd" and n.startswith("sess-"))


def sessions(res):
    rows, peak = [], 0.0
    for s, v, ref in session_points(res):
        peak = max(peak, v["iops"])
        rows.append([s, "%.1fK ± %.1fK" % (v["iops"] / 1e3,
                                          v["iops_sd"] / 1e3),
                     "%.0f" % v["mbps"],
                     "%.1f%%" % (100 * v["iops"] / peak),
                     "%.1fK" % (ref["iops"] / 1e3) if ref else "-",
                     rfmt(ratio(v["iops"], ref["iops"])) if ref else "-",
                     "%.0f%%" % v["cpu_pct"] if "cpu_pct" in v else "-",
                     "%.1fK" % (v["eff"] / 1e3) if "eff" in v else "-"])
    return table(["sessions", "IOPS (mean ± sd)", "MB/s",
                  "of peak so far", "one session at QD 8 × sessions",
                  "sessions ÷ one session", "target CPU",
                  "IOPS per CPU-s"], rows)


LIMITS_INTRO = (
    "Each tcqd figure beside its limit, measured in the same run: "
    "local is fio (libaio, O_DIRECT) on the same file at the same point, "
    "null is tcqd on `--backend null` (the wire and the protocol alone). "
    "At QD1 the disk and the wire are in series, so the limit is "
    "1/(1/local + 1/null); at deeper queues they overlap, and the limit is "
    "min(local, null). Best of two rounds (both in *Rounds* below).")

MACHINE = """| | |
|---|---|
| CPU | {cpu}, {nproc} CPUs (client and target share them) |
| memory | {mem} |
| kernel | {kernel} |
| file system of the data files | {fs} |
| load average at start / end | {load0} / {load1} |
| tcqd | {tcq} |
"""
PEER_VERSIONS = """| tgt | {tgt} |
| istgt | {istgt} |
| libiscsi | {libiscsi} |
| qemu | {qemu} |
"""
TOOL_VERSIONS = """| fio | {fio} |
| iperf3 | {iperf} |
"""


def method(peers):
    out = [
        "- Two files of {size} written from /dev/urandom (kept between "
        "runs): `{img}` for every read, which nothing writes (fio opens "
        "it --readonly), and `{wimg}` for the write points. A file of "
        "zeros or of tcq-bench's patterns reads far faster on a virtual "
        "disk than random data, which would make every ratio to local "
        "meaningless.",
        "- Every point is run in two rounds (all points, then all again); "
        "the tables show the best of the two, *Rounds* shows both.",
        "- The client is tcq-bench's native engine, one tcq-bench run per "
        "point; the QD1 and 128K QD8 points are run again with its "
        "libiscsi engine (a second client).",
        "- Target CPU: utime + stime of the target process (all its "
        "threads) from /proc/PID/stat before and after each tcq-bench "
        "run; \"target CPU\" is that time over the run's wall time (100% "
        "= one core), \"IOPS per CPU-s\" is IOPS divided by it.",
    ]
    if peers:
        out[0:0] = [
            "- The same files serve every target, one target at a time: "
            "tcqd (aio backend, O_DIRECT, write cache on, default "
            "threads), tgt with the rdwr ({rdwr}) and aio (O_DIRECT) "
            "backing stores, and istgt (which always goes through the "
            "page cache, so its reads come from memory, an advantage "
            "over O_DIRECT). Beside istgt, tcqd runs once more through "
            "the page cache too (`--backend aio:direct=0`, \"tcqd "
            "(buffered)\"); before each of these two, both files' pages "
            "are written back and dropped from the cache (dd "
            "oflag/iflag=nocache), so neither reads what the other "
            "cached. The goal compares istgt with tcqd (buffered), tgt "
            "with tcqd.",
            "- \"local (tcq-bench)\" is tcq-bench's local engine (libaio, "
            "O_DIRECT) on the same file, beside fio.",
            "- The null rows use tcqd's `null` backend and tgt's `null` "
            "backing store (nothing stored, reads return zeros) over a "
            "1 GiB span.",
        ]
    return "\n".join(out)


def main():
    best, rounds, order, kinds = collect()
    rows = limits(best)
    sc = second_client(best)
    gs = goals(best, rows, sc)
    gs28 = goals28(best, rows)
    peers = KIND == "peers"
    body = ["## tcqd beside the limits\n\n" + LIMITS_INTRO + "\n\n" +
            limits_table(rows),
            "## Goals of issue 12\n\n" + goals_text(gs),
            "## Goals of issue 28\n\n" + goals_text(gs28),
            "## Where a share falls short\n\n" + FALLS_SHORT_INTRO +
            "\n\n" + falls_short_table(rows),
            "## Loopback\n\n" + loopback(best, rows),
            "## A second client\n\n" + second_table(sc)]
    ab = cut_ab(best, rows)
    if any(c["off"] is not None for c in ab):
        body.insert(3, "## Cut-through reads: auto against off\n\n" +
                    CUT_INTRO + "\n\n" + cut_table(ab))
    if peers:
        body += [
            "## tcqd ÷ each peer\n\nA ratio above 1 means tcqd is ahead; "
            "against local it is the share of what the file itself "
            "gives.\n\n" + summary(best),
            "## Per workload\n\n" + details(best)]
    body.append("## Null backings: the wire and the target's own cost\n\n" +
                nulls(best, peers))
    if peers:
        body.append("## Sessions (tcqd, file LUN, 4K random read, depth 8 "
                    "per session, %s runs each, round 1 only; beside each, one session at\n"
                    "the same number of commands in flight)\n\n" %
                    E.get("CP_REPEAT", "?") + sessions(best))
    body.append("## Rounds\n\n" + rounds_table(rounds, order, kinds))
    print()
    print("\n\n".join(body))

    fmt = dict(
        self=E.get("CP_SELF"), started=E.get("CP_STARTED"),
        mode=E.get("CP_MODE"), rt=E.get("CP_RT"), ramp=E.get("CP_RAMP"),
        secs=E.get("CP_SECS"), cpu=E.get("CP_CPU"), nproc=E.get("CP_NPROC"),
        mem=E.get("CP_MEM"), kernel=E.get("CP_KERNEL"), fs=E.get("CP_FS"),
        load0=E.get("CP_LOAD0"), load1=E.get("CP_LOAD1"),
        tcq=E.get("CP_TCQ"), tgt=E.get("CP_TGT"), istgt=E.get("CP_ISTGT"),
        libiscsi=E.get("CP_LIBISCSI"), qemu=E.get("CP_QEMU"),
        fio=E.get("CP_FIO"), iperf=E.get("CP_IPERF"), img=E.get("CP_IMG"),
        wimg=E.get("CP_WIMG"), size=E.get("CP_SIZE"),
        rdwr=("--bsoflags " + E["TGT_BSOFLAGS"] if E.get("TGT_BSOFLAGS")
              else "buffered: page cache"))
    with open(E["CP_CMDS"]) as f:
        cmds = f.read().rstrip("\n")
    title = ("tcqd beside tgt and istgt, and beside the limits" if peers
             else "tcqd beside the limits of this machine")
    doc = ("# tcq performance: {t}\n\n"
           "Generated by `{{self}}` on {{started}} ({{mode}} mode: {{rt}} s "
           "per point after a\n{{ramp}} s ramp, two rounds, {{secs}} s in "
           "all). The machine is shared and noisy; only the\nratios of one "
           "run are worth comparing, and figures move between runs.\n\n"
           "## Machine and versions\n\n").format(t=title)
    doc = doc.format(**fmt)
    doc += MACHINE.format(**fmt)
    if peers:
        doc += PEER_VERSIONS.format(**fmt)
    doc += TOOL_VERSIONS.format(**fmt)
    doc += "\n## Method\n\n" + method(peers).format(**fmt) + "\n\n"
    doc += "\n\n".join(body)
    doc += "\n\n## Commands\n\nIn the order they ran (URLs as they were " \
           "in this run):\n\n```\n" + cmds + "\n```\n"
    os.makedirs(os.path.dirname(os.path.abspath(E["CP_OUT"])), exist_ok=True)
    with open(E["CP_OUT"], "w") as f:
        f.write(doc)
    if E.get("CP_JSON"):
        with open(E["CP_JSON"], "w") as f:
            json.dump({"kind": KIND, "rows": rows, "goals": gs,
                       "goals_issue28": gs28,
                       "second_client": sc, "cut_through": ab,
                       "loopback": {
                           "iscsi_rtt_us": val(best, "tcqd-null",
                                               "rtt512-qd1", "mean_us"),
                           "tcp_rtt_us": val(best, "pingpong", "rtt",
                                             "mean_us"),
                           "iperf3_mbps": val(best, "iperf3", "wire",
                                              "mbps")},
                       "rounds": [{"target": t, "name": n,
                                   "rounds": {str(k): v for k, v in
                                              rounds[(t, n)].items()}}
                                  for t, n in order]}, f, indent=1)
            f.write("\n")


if __name__ == "__main__":
    main()
