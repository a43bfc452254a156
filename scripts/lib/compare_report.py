#!/usr/bin/env python3
"""Tables and goal checks for scripts/compare-peers.

Reads the points the script recorded (CP_RES, one JSON object a line: the
target, the workload, tcq-bench's, fio's or iperf3's JSON output, and the
target's CPU ticks before and after), prints the tables and writes them
with the machine, versions and commands to CP_OUT as markdown. Everything
comes through CP_* environment variables set by the script.
"""
import json
import os
import statistics

E = os.environ
CLK = float(E.get("CP_CLK", "100"))

WORKLOADS = [  # name, title, metric
    ("rr4k-qd1", "4K random read, QD1", "iops"),
    ("rr4k-qd32", "4K random read, QD32", "iops"),
    ("rw4k-qd32", "4K random write, QD32", "iops"),
    ("r128k-qd4", "128K read, QD4", "mbps"),
    ("r128k-qd8", "128K read, QD8", "mbps"),
    ("r128k-qd32", "128K read, QD32", "mbps"),
]
NULL_WORKLOADS = [w for w in WORKLOADS if w[0] != "rw4k-qd32"]
PEERS = [  # compared with tcqd, in table order
    ("tgt-rdwr", "tgt (rdwr)"),
    ("tgt-aio", "tgt (aio)"),
    ("istgt", "istgt"),
    ("local", "local (tcq-bench)"),
    ("fio", "local (fio)"),
]
LABEL = dict(PEERS, tcqd="tcqd")


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def collect():
    """(target, workload) -> dict of figures."""
    res = {}
    with open(E["CP_RES"]) as f:
        for line in f:
            r = json.loads(line)
            d = load(r["json"]) if r.get("json") else None
            if d is None:
                continue
            key = (r["target"], r["name"])
            if r["kind"] == "bench":
                p = d["points"][0]
                if p.get("errors"):
                    continue
                v = {"iops": p["iops"], "mbps": p["mbps"],
                     "iops_sd": p.get("iops_sd", 0.0),
                     "mbps_sd": p.get("mbps_sd", 0.0),
                     "p99": p["lat_us"]["p99"],
                     "threads": r.get("threads", 0)}
                wall = r["t1"] - r["t0"]
                cpu = (r["cpu1"] - r["cpu0"]) / CLK
                if cpu > 0 and wall > 0:
                    v["cpu_pct"] = 100.0 * cpu / wall
                    v["eff"] = p["iops"] * wall / cpu
                res[key] = v
            elif r["kind"] == "fio":
                job = d["jobs"][0]
                side = job["write"] if job["write"]["iops"] > 0 else job["read"]
                res[key] = {"iops": side["iops"],
                            "mbps": side["bw_bytes"] / 1e6,
                            "p99": side.get("clat_ns", {}).get(
                                "percentile", {}).get("99.000000", 0) / 1e3}
            elif r["kind"] == "iperf3":
                bps = d.get("end", {}).get("sum_received", {}).get(
                    "bits_per_second")
                if bps:
                    res[key] = {"mbps": bps / 8e6}
    return res


def fig(v, metric):
    if v is None or metric not in v:
        return "-"
    x = v[metric]
    if metric == "iops":
        return "%.1fK" % (x / 1e3) if x < 1e6 else "%.2fM" % (x / 1e6)
    return "%.0f MB/s" % x


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


def summary(res):
    rows = []
    for name, title, m in WORKLOADS:
        t = val(res, "tcqd", name, m)
        row = [title, fig(res.get(("tcqd", name)), m)]
        row += [rfmt(ratio(t, val(res, p, name, m))) for p, _ in PEERS]
        rows.append(row)
    return table(["workload", "tcqd"] + ["tcqd / " + l for _, l in PEERS],
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
            ["target", m.upper() if m == "iops" else "MB/s", "tcqd / it",
             "p99 µs", "target CPU", "IOPS per CPU-s", "threads"], rows))
    return "\n\n".join(parts)


def nulls(res):
    wire = val(res, "iperf3", "wire", "mbps")
    rows = []
    for name, title, m in NULL_WORKLOADS:
        a, b = res.get(("tcqd-null", name)), res.get(("tgt-null", name))
        ta, tb = val(res, "tcqd-null", name, m), val(res, "tgt-null", name, m)
        rows.append([
            title, fig(a, m), fig(b, m), rfmt(ratio(ta, tb)),
            "%.0f%%" % (100 * a["mbps"] / wire) if a and wire else "-",
            "%.1fK" % (a["eff"] / 1e3) if a and "eff" in a else "-",
            "%.0f%%" % a["cpu_pct"] if a and "cpu_pct" in a else "-",
            "%.1fK" % (b["eff"] / 1e3) if b and "eff" in b else "-",
            "%.0f%%" % b["cpu_pct"] if b and "cpu_pct" in b else "-"])
    return ("iperf3, 127.0.0.1, one stream: **%s**\n\n" %
            ("%.0f MB/s" % wire if wire else "failed")) + table(
        ["workload", "tcqd null", "tgt null", "tcqd / tgt",
         "tcqd % of iperf3", "tcqd IOPS per CPU-s", "tcqd CPU",
         "tgt IOPS per CPU-s", "tgt CPU"], rows)


def sessions(res):
    pts = sorted((int(n[5:]), v) for (t, n), v in res.items()
                 if t == "tcqd" and n.startswith("sess-"))
    rows, peak = [], 0.0
    for s, v in pts:
        peak = max(peak, v["iops"])
        rows.append([s, "%.1fK ± %.1fK" % (v["iops"] / 1e3,
                                          v["iops_sd"] / 1e3),
                     "%.0f" % v["mbps"],
                     "%.1f%%" % (100 * v["iops"] / peak),
                     "%.0f%%" % v["cpu_pct"] if "cpu_pct" in v else "-",
                     "%.1fK" % (v["eff"] / 1e3) if "eff" in v else "-"])
    return pts, table(["sessions", "IOPS (mean ± sd)", "MB/s",
                       "of peak so far", "target CPU", "IOPS per CPU-s"],
                      rows)


def goals(res, sess_pts):
    out = []

    def goal(text, checks):
        """checks: list of (description, value, limit); value None = no data."""
        if not checks or any(v is None for _, v, _ in checks):
            status = "no data"
        else:
            status = "met" if all(v >= lim for _, v, lim in checks) \
                else "NOT met"
        def num(x, lim):
            if x is None:
                return "-"
            return "%.2f" % x if lim < 1000 else "%.1fK" % (x / 1e3)
        detail = "; ".join("%s %s (goal ≥ %s)" % (d, num(v, lim),
                                                 num(lim, lim))
                           for d, v, lim in checks)
        out.append("- **%s**: %s. %s" % (status, text, detail))

    def r(name, peer, m="iops"):
        return ratio(val(res, "tcqd", name, m), val(res, peer, name, m))

    goal("4K random read QD32, file LUN: ≥ 2x tgt and istgt, ≥ 80% of local",
         [("÷ tgt rdwr", r("rr4k-qd32", "tgt-rdwr"), 2),
          ("÷ tgt aio", r("rr4k-qd32", "tgt-aio"), 2),
          ("÷ istgt", r("rr4k-qd32", "istgt"), 2),
          ("÷ local", r("rr4k-qd32", "local"), 0.8)])
    goal("4K random write QD32, write cache on: ≥ 2x tgt",
         [("÷ tgt rdwr", r("rw4k-qd32", "tgt-rdwr"), 2),
          ("÷ tgt aio", r("rw4k-qd32", "tgt-aio"), 2)])
    goal("128K read, file LUN: ≥ 90% of local at QD4, 8 and 32",
         [("%s ÷ local" % n[6:].upper(), r(n, "local", "mbps"), 0.9)
          for n in ("r128k-qd4", "r128k-qd8", "r128k-qd32")])
    wire = val(res, "iperf3", "wire", "mbps")
    goal("128K read on null: ≥ 90% of iperf3's loopback bandwidth",
         [("%s ÷ iperf3" % n[6:].upper(),
           ratio(val(res, "tcqd-null", n, "mbps"), wire), 0.9)
          for n in ("r128k-qd4", "r128k-qd8", "r128k-qd32")])
    goal("4K read QD1: ≥ 85% of local IOPS",
         [("÷ local", r("rr4k-qd1", "local"), 0.85)])
    eff = res.get(("tcqd-null", "rr4k-qd32"), {}).get("eff")
    teff = res.get(("tgt-null", "rr4k-qd32"), {}).get("eff")
    goal("Efficiency on null, 4K random read QD32: ≥ 150K IOPS per "
         "target CPU-second (tgt null here: %s)" %
         ("%.1fK" % (teff / 1e3) if teff else "-"),
         [("IOPS per CPU-s", eff, 150000)])
    checks = []
    if len(sess_pts) > 1:
        peak_i = max(range(len(sess_pts)), key=lambda i: sess_pts[i][1]["iops"])
        peak = sess_pts[peak_i][1]["iops"]
        worst = min(v["iops"] for _, v in sess_pts[peak_i:])
        checks = [("lowest after the peak (%d sessions) ÷ peak" %
                   sess_pts[peak_i][0], worst / peak, 0.95)]
    goal("Sessions 1..32 at depth 8 (4K random read): never more than 5% "
         "below the peak as sessions grow", checks)
    return "\n".join(out)


def main():
    res = collect()
    sess_pts, sess_table = sessions(res)
    body = [
        "## Summary: tcqd's figure and tcqd ÷ each peer\n\n"
        "A ratio above 1 means tcqd is ahead; against local it is the share "
        "of what the file itself gives.\n\n" + summary(res),
        "## Goals of issue 7\n\n" + goals(res, sess_pts),
        "## Per workload\n\n" + details(res),
        "## Null backings: the wire and the target's own cost\n\n" +
        nulls(res),
        "## Sessions (tcqd, file LUN, 4K random read, depth 8 per session, "
        "%s runs each)\n\n" % E.get("CP_REPEAT", "?") + sess_table,
    ]
    print()
    print("\n\n".join(body))

    with open(E["CP_CMDS"]) as f:
        cmds = f.read().rstrip("\n")
    doc = """# tcq performance: tcqd beside tgt and istgt

Generated by `{self}` on {started} ({mode} mode: {rt} s per point after a
{ramp} s ramp, {secs} s in all). The machine is shared and noisy; only the
ratios of one run are worth comparing, and figures move between runs.

## Machine and versions

| | |
|---|---|
| CPU | {cpu}, {nproc} CPUs (client and target share them) |
| memory | {mem} |
| kernel | {kernel} |
| file system of the data file | {fs} |
| load average at start / end | {load0} / {load1} |
| tcqd | {tcq} |
| tgt | {tgt} |
| istgt | {istgt} |
| libiscsi | {libiscsi} |
| qemu | {qemu} |
| fio | {fio} |
| iperf3 | {iperf} |

## Method

- One 1 GiB file written from /dev/urandom serves every target, one
  target at a time: tcqd (aio backend, O_DIRECT, write cache on, default
  threads), tgt with the rdwr ({rdwr}) and aio (O_DIRECT) backing
  stores, and istgt (which always goes through the page cache, so its
  reads of this file come from memory, an advantage over O_DIRECT).
- The client is tcq-bench's native engine, one tcq-bench run per point.
  "local" is tcq-bench's local engine (libaio, O_DIRECT) on the same file;
  fio (libaio, O_DIRECT) is shown as a second opinion.
- Target CPU: utime + stime of the target process (all its threads) from
  /proc/PID/stat before and after each tcq-bench run; "target CPU" is
  that time over the run's wall time (100% = one core), "IOPS per CPU-s"
  is IOPS divided by it.
- The null rows use tcqd's `null` backend and tgt's `null` backing store
  (nothing stored, reads return zeros) over a 1 GiB span.

""".format(self=E.get("CP_SELF"), started=E.get("CP_STARTED"),
           mode=E.get("CP_MODE"), rt=E.get("CP_RT"), ramp=E.get("CP_RAMP"),
           secs=E.get("CP_SECS"),
           rdwr=("--bsoflags " + E["TGT_BSOFLAGS"]
                 if E.get("TGT_BSOFLAGS") else "buffered: page cache"), cpu=E.get("CP_CPU"),
           nproc=E.get("CP_NPROC"), mem=E.get("CP_MEM"),
           kernel=E.get("CP_KERNEL"), fs=E.get("CP_FS"),
           load0=E.get("CP_LOAD0"), load1=E.get("CP_LOAD1"),
           tcq=E.get("CP_TCQ"), tgt=E.get("CP_TGT"), istgt=E.get("CP_ISTGT"),
           libiscsi=E.get("CP_LIBISCSI"), qemu=E.get("CP_QEMU"),
           fio=E.get("CP_FIO"), iperf=E.get("CP_IPERF"))
    doc += "\n\n".join(body)
    doc += "\n\n## Commands\n\nIn the order they ran (URLs as they were " \
           "in this run):\n\n```\n" + cmds + "\n```\n"
    os.makedirs(os.path.dirname(os.path.abspath(E["CP_OUT"])), exist_ok=True)
    with open(E["CP_OUT"], "w") as f:
        f.write(doc)


if __name__ == "__main__":
    main()
