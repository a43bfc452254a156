#!/bin/bash
# scripts/reproduce's host hygiene (scripts/lib/repro_host.py) on made-up
# points, no tcqd: a point whose null companion takes a large share of its
# latency gets no verdict ("host-limited") and a raised time_scale, a
# clean one gets the rule's verdict; the time a command spends outside the
# model (its own statistics) is computed for the table; a point without
# its companion is not clean; the device's time is scaled back and the real
# time kept; the device alone follows Little's law. Expected values are the arithmetic of
# the definitions in repro_host.py's docstring. Prints TAP.
set -u

: "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
command -v python3 >/dev/null || { echo "1..0 # SKIP no python3"; exit 0; }

PYTHONDONTWRITEBYTECODE=1 exec python3 - "$top_srcdir/scripts/lib" <<'PY'
import sys

sys.path.insert(0, sys.argv[1])
import repro_host as h  # noqa: E402

n, failed = 0, False


def check(ok, name, detail=""):
    global n, failed
    n += 1
    print("%s %d - %s" % ("ok" if ok else "not ok", n, name))
    if not ok:
        failed = True
        print("# " + detail)


def pt(lat_us, depth=1, bs=4096, sessions=1, iops=None, model=None):
    p = {"rw": "randread", "bs": bs, "depth": depth, "sessions": sessions,
         "iops": iops if iops is not None else depth * 1e6 / lat_us,
         "mbps": 0.0, "lat_us": {"mean": lat_us}}
    p["mbps"] = p["iops"] * bs / 1e6
    if model:
        p["model"] = model
    return p


def rule(res):
    return "reproduced", "the made-up rule holds"


# The host costs 100 us a command (the null companion); an effect of +13%
# allows a share under 13% / 3 = 4.33%.
NULL = h.scale_back([pt(100.0)], 1)

# Clean: the device takes 10 ms, the host 100 us of it: 1%.
clean = h.scale_back([pt(10000.0)], 1)
j = [("run", clean[0], h.host_share(clean[0], NULL))]
v, why, worst, limit = h.decide(rule, {"run": clean}, j, 0.13, 1)
check(abs(worst - 0.01) < 1e-9 and abs(limit - 0.13 / 3) < 1e-9,
      "share = null latency / model latency (100/10000 = 1%), limit 13%/3",
      "worst %r limit %r" % (worst, limit))
check(v == "reproduced", "a clean point gets the rule's verdict", v)

# Host-limited: the device takes 400 us, so 100/500 = 20% is the host's.
dirty = h.scale_back([pt(500.0)], 1)
j = [("run", dirty[0], h.host_share(dirty[0], NULL))]
v, why, worst, limit = h.decide(rule, {"run": dirty}, j, 0.13, 1)
check(v == "host-limited" and "reproduced" in why and "20.0%" in why,
      "a host-limited point gets no verdict; the rule's reading is kept",
      "%s: %s" % (v, why))
# h / d = 0.2 / 0.8 = 0.25; under 4.33% / 2 = 2.17% needs
# K > 0.25 x (1 - 0.0217) / 0.0217 = 11.3: the next power of two is 16.
k = h.next_scale(1, worst, limit)
check(k == 16, "time_scale raised to 16 (the share 100/(100+400x16) = "
      "1.5%)", "got %r" % k)
check(h.next_scale(h.CAP, worst, limit) is None,
      "no time_scale above the cap: host-limited stays")

# One clean point and one host-limited: still no verdict.
j = [("run", clean[0], 0.01), ("run", dirty[0], 0.2)]
v = h.decide(rule, {}, j, 0.13, 1)[0]
check(v == "host-limited", "one host-limited point of two: no verdict", v)

# No companion point of the same workload (depth 4 against depth 1).
other = h.scale_back([pt(10000.0, depth=4)], 1)
s = h.host_share(other[0], NULL)
v = h.decide(rule, {}, [("run", other[0], s)], 0.13, 1)[0]
check(s is None and v == "host-limited",
      "a point without its null companion is not judged clean", v)

# time_scale 16: 5000 real IOPS and 3200 us real latency become 80000
# IOPS and 200 us in the device's time; the real figures stay.
sc = h.scale_back([pt(3200.0, iops=5000.0)], 16)[0]
check(sc["iops"] == 80000.0 and sc["lat_us"]["mean"] == 200.0 and
      sc["real"]["lat"] == 3200.0 and sc["real"]["iops"] == 5000.0,
      "scaled back: IOPS x16, latency /16, real time kept", repr(sc))
check(abs(h.host_share(sc, NULL) - 100.0 / 3200.0) < 1e-12,
      "the share is taken on real time (100 / 3200)")

# Little's law: 0.8 commands in the model at 100 real IOPS, time_scale 10:
# W = 0.8 / 100 / 10 s = 800 us of model time; depth 1 alone: 1250 IOPS.
m = {"mean_drive_queue": 0.5, "mean_host_queue": 0.3}
d = h.device_alone(h.scale_back([pt(1e4, iops=100.0, model=m)], 10)[0])
check(abs(d["lat_us"] - 800.0) < 1e-9 and abs(d["iops"] - 1250.0) < 1e-9,
      "device alone: W = occupancy / throughput on the model's clock",
      repr(d))
# A cut READ's two pieces are both in the queues (1.6 pieces on average)
# while one command is (mean_commands 0.8): Little's law divides commands
# per second into commands, so the same 800 us and 1250 IOPS.
m = {"mean_drive_queue": 1.0, "mean_host_queue": 0.6, "mean_commands": 0.8}
d = h.device_alone(h.scale_back([pt(1e4, iops=100.0, model=m)], 10)[0])
check(abs(d["lat_us"] - 800.0) < 1e-9 and abs(d["iops"] - 1250.0) < 1e-9,
      "device alone counts a command's pieces once (mean_commands)",
      repr(d))

# Shown beside the share: a point of 10 ms mean latency whose model held
# each command 7 ms of it (0.7 commands in it on average at 100 IOPS:
# W = 0.7 / 100 s): 30% outside the model; the host share stays null's 1%.
m = {"mean_drive_queue": 0.5, "mean_host_queue": 0.2}
late = h.scale_back([pt(10000.0, model=m)], 1)
o, s = h.outside_share(late[0]), h.host_share(late[0], NULL)
check(abs(o - 0.3) < 1e-9 and abs(s - 0.01) < 1e-9,
      "outside the model 1 - W / latency = 30%, host share null's 1%",
      "%r %r" % (o, s))
four = h.scale_back([pt(10000.0, sessions=4, model=m)], 1)
check(h.outside_share(four[0]) is None,
      "several sessions: nothing outside the model is claimed")

# Slowing a run: time_scale multiplies (base=null stays last), the link
# is slowed as much, a real-time run is left alone.
r = h.Run("x", "disk:model=ssd,time_scale=20,base=null", [], link="1gbit")
s4 = h.scaled(r, 4)
check(s4.spec == "disk:model=ssd,time_scale=80,base=null" and
      s4.link == "250000kbit", "time_scale 20 x 4 = 80, 1gbit / 4",
      "%s %s" % (s4.spec, s4.link))
check(h.scaled(h.Run("n", "null", [], link="1gbit"), 4).link == "1gbit",
      "a null run is never slowed")
# scripts/link's round trip and tcq-bench's modelled initiator CPU are the
# model's: slowed with it; the companion runs without the CPU model.
r = h.Run("b", "disk:model=hdd,base=null", ["--depth", "1",
          "--initiator-cpu", "110.5,4.7"], link="1gbit --rtt 0.125")
s8 = h.scaled(r, 8)
check(s8.link == "125000kbit --rtt 1" and
      s8.bench[-1] == "884,37.6", "x8: rate / 8, --rtt and CPU x 8",
      "%s %s" % (s8.link, s8.bench))
c = h.companion(r)
check(c.spec == "null" and c.bench == ["--depth", "1"] and
      c.link == r.link, "the companion: null, no CPU model, the same link",
      "%s %s %s" % (c.spec, c.bench, c.link))
r = h.Run("y", "disk:model=hdd,ncq=1,base=null", [])
check(h.scaled(r, 8).spec == "disk:model=hdd,ncq=1,time_scale=8,base=null",
      "time_scale added before base=null", h.scaled(r, 8).spec)
r.scalable = False
check(h.scaled(r, 8).spec == r.spec, "a real-time run is not slowed")

# A window run (repro.py's Run.window): rates over the runtime only, from
# tcq-bench's bandwidth log (fio's format: ms, KiB/s, ...). Two repeats of
# one point, --runtime 0.5: whole intervals 1000 and 2000 KiB/s, then
# 3000 and 3000; the drain's interval after 500 ms is left out. MB/s are
# KiB/s x 1024 / 1e6: 1.536 and 3.072, mean 2.304, sample sd
# 1.536 / sqrt(2). Slowed runs and companions stay window runs.
import os  # noqa: E402
import tempfile  # noqa: E402
import repro  # noqa: E402

with tempfile.TemporaryDirectory() as d:
    pre = os.path.join(d, "P")
    with open(pre + "_index.txt", "w") as f:
        f.write("# N, rw, bs, depth, sessions, repeat, rate_iops\n"
                "1, read, 131072, 1, 32, 1, 0\n2, read, 131072, 1, 32, 2, 0\n")
    for i, rows in ((1, [(250, 1000), (500, 2000), (501, 50)]),
                    (2, [(250, 3000), (500, 3000), (640, 10)])):
        with open("%s_bw.%d.log" % (pre, i), "w") as f:
            f.writelines("%d, %d, 0, 0, 0\n" % r for r in rows)
    wp = [{"rw": "read", "bs": 131072, "depth": 1, "sessions": 32,
           "mbps": 1.0, "iops": 7.6, "mbps_sd": 0.5, "iops_sd": 3.8}]
    repro.window_rates(wp, pre, ["--runtime", "0.5"])
    w = wp[0]
    check(abs(w["mbps"] - 2.304) < 1e-9 and
          abs(w["mbps_sd"] - 1.536 / 2 ** 0.5) < 1e-9 and
          abs(w["iops"] - 2.304e6 / 131072) < 1e-9 and
          w["drained"] == {"mbps": 1.0, "iops": 7.6},
          "window: the mean of the whole intervals, sd over repeats, "
          "the drained rate kept", repr(w))
    try:
        repro.window_rates(wp, pre, ["--runtime", "0.25"])
        check(False, "one whole interval is refused", "no error")
    except repro.ReproError as e:
        check("1 whole intervals" in str(e), "one whole interval is "
              "refused", str(e))
    # With --ramp the log's times count from the point's start: --ramp
    # 0.25 --runtime 0.5 takes the intervals ending in (250, 750] ms,
    # 1000 and 2000 KiB/s, not the ramp's 100 nor the drain's 5.
    with open(pre + "_index.txt", "w") as f:
        f.write("1, read, 131072, 1, 32, 1, 0\n")
    with open(pre + "_bw.1.log", "w") as f:
        f.write("250, 100, 0, 0, 0\n500, 1000, 0, 0, 0\n"
                "750, 2000, 0, 0, 0\n751, 5, 0, 0, 0\n")
    repro.window_rates(wp, pre, ["--ramp", "0.25", "--runtime", "0.5"])
    check(abs(wp[0]["mbps"] - 1500 * 1024 / 1e6) < 1e-9 and
          wp[0]["mbps_sd"] == 0.0,
          "window after --ramp: the ramp's and the drain's intervals "
          "left out", repr(wp[0]))
wr = h.Run("k", "disk:model=hdd,base=null", ["--runtime", "8"],
           window=True)
check(h.scaled(wr, 4).window and h.companion(wr).window,
      "a slowed window run and its companion are window runs")

print("1..%d" % n)
sys.exit(1 if failed else 0)
PY
