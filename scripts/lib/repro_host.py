"""Host hygiene for scripts/reproduce: how much of each measured point is
the host (tcqd, tcq-bench, loopback, this machine's load) rather than the
modelled device, and whether a rule may judge it.

Every model run has a companion: the same tcq-bench arguments, tcqd
arguments and link on the `null` backend, run right after it. Its mean
latency at a point is what the host alone costs a command there, so

    null share = null mean latency / model mean latency

(both in real time, same rw, block size, depth and sessions) is what the
host alone takes of the model point's time: the host share. The model's
statistics give the part outside the model (outside_share), shown beside
it. The companion runs on
the experiment's own link rate whatever the time_scale: the host's time
does not change with K, and the slowed wire is part of the model. The
host adds its time
to both sides of every ratio a rule takes, pulling the ratio towards 1 by
about that share; a rule may judge a point only where the share is below
FRACTION of the relative effect the rule measures. Otherwise the device
is slowed down (the disk model's time_scale: model time = real time / K,
so the device's part of each command grows K times while the host's stays)
and the run repeated, up to CAP; the figures are scaled back (IOPS and
MB/s times K, latency over K), the host-share uses the real ones.

Nothing here knows a particular experiment.
"""
import re

from repro import Run

FRACTION = 1.0 / 3   # a verdict needs host share < FRACTION x effect
CAP = 64             # the largest time_scale tried
MARGIN = 2.0         # raising K aims at the limit / MARGIN


# ---- the host's load over a run -------------------------------------------

def _cpu():
    """(busy, total) jiffies of all CPUs from /proc/stat."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    idle = v[3] + (v[4] if len(v) > 4 else 0)   # idle + iowait
    return sum(v) - idle, sum(v)


def _load1():
    with open("/proc/loadavg") as f:
        return float(f.read().split()[0])


class LoadProbe:
    """The 1-minute load average at both ends of a run and the CPUs' busy
    share over it (all processes: ours and everyone else's)."""

    def __init__(self):
        self.l0, self.c0 = _load1(), _cpu()

    def stop(self):
        b1, t1 = _cpu()
        b0, t0 = self.c0
        busy = (b1 - b0) / (t1 - t0) if t1 > t0 else 0.0
        return {"load1": (self.l0, _load1()), "cpu_busy": busy}


def load_text(ld):
    return "load %.1f -> %.1f, CPUs %.0f%% busy" % (
        ld["load1"][0], ld["load1"][1], 100 * ld["cpu_busy"])


# ---- time_scale ----------------------------------------------------------

def scale_of(spec):
    """The time_scale of a backend spec (1 when not set)."""
    m = re.search(r"(?:^|[:,])time_scale=([0-9]+)", spec)
    return int(m.group(1)) if m else 1


def _with_scale(spec, k):
    """SPEC with its time_scale multiplied by K (base=null stays last)."""
    if k == 1 or not spec.startswith("disk:"):
        return spec
    f = scale_of(spec) * k
    if re.search(r"[:,]time_scale=[0-9]+", spec):
        return re.sub(r"([:,])time_scale=[0-9]+", r"\1time_scale=%d" % f,
                      spec)
    head, sep, tail = spec.rpartition(",base=")
    if not sep:
        return spec + ",time_scale=%d" % f
    return "%s,time_scale=%d,base=%s" % (head, f, tail)


_RATE = re.compile(r"^([0-9.]+)([kmgt]?)(bit|bps)$", re.I)


def _slow_rate(rate, k):
    """A tc rate K times slower ('1gbit', 4 -> '250000kbit'): the wire
    keeps its share of a command beside a slowed device."""
    m = _RATE.match(rate)
    if not m or k == 1:
        return rate
    mult = {"": 1e-3, "k": 1, "m": 1e3, "g": 1e6, "t": 1e9}[m.group(2).lower()]
    return "%dk%s" % (round(float(m.group(1)) * mult / k), m.group(3))


def _slow_link(link, k):
    """scripts/link's 'RATE [--rtt MS]' with the rate K times lower and
    the round trip K times longer."""
    w = link.split()
    w[0] = _slow_rate(w[0], k)
    for i in range(1, len(w) - 1):
        if w[i] == "--rtt":
            w[i + 1] = "%g" % (float(w[i + 1]) * k)
    return " ".join(w)


# tcq-bench's modelled initiator CPU: part of the modelled setup.
CPU = "--initiator-cpu"


def _slow_bench(bench, k):
    """tcq-bench arguments with the modelled initiator CPU K times slower."""
    b = list(bench)
    for i in range(len(b) - 1):
        if b[i] == CPU:
            b[i + 1] = ",".join("%g" % (float(x) * k)
                                for x in b[i + 1].split(","))
    return b


def scaled(run, k):
    """RUN with the device, the link and the modelled initiator CPU K
    times slower (the host as is)."""
    if k == 1 or not getattr(run, "scalable", True) or \
            not run.spec.startswith("disk:"):
        return run
    r = Run(run.key, _with_scale(run.spec, k), _slow_bench(run.bench, k),
            run.tcqd, _slow_link(run.link, k) if run.link else None,
            run.size, window=run.window)
    r.scalable = True
    return r


def companion(run):
    """The same workload, tcqd arguments and link on the null backend,
    without the modelled initiator CPU (the model's time, not the
    host's)."""
    b, i = list(run.bench), 0
    while i < len(b):
        if b[i] in (CPU, "--initiator-cpus"):
            del b[i:i + 2]
        else:
            i += 1
    return Run(run.key + "@null", "null", b, run.tcqd, run.link, run.size,
               window=run.window)


def ident(run):
    """What makes two runs the same workload apart from the backend."""
    return (tuple(run.bench), tuple(run.tcqd), run.link, run.size)


def scale_back(pts, f):
    """The points in the device's own time: IOPS and MB/s times F, latency
    over F; the measured real-time figures kept in p['real']."""
    for p in pts:
        p["real"] = {"iops": p["iops"], "mbps": p["mbps"],
                     "lat": p["lat_us"]["mean"]}
        p["scale"] = f
        if f != 1:
            p["iops"] *= f
            p["mbps"] *= f
            p["lat_us"] = {k: v / f for k, v in p["lat_us"].items()}
    return pts


# ---- the host's share ------------------------------------------------------

def _same(a, b):
    return all(a.get(k) == b.get(k) for k in ("rw", "bs", "depth",
                                               "sessions"))


def match(p, nulls):
    """The null companion's point of the same workload as P, or None."""
    return next((q for q in nulls if _same(p, q)), None)


def null_share(p, nulls):
    """The null companion's mean latency over the model point's (real
    time), or None when no companion point matches."""
    n = match(p, nulls)
    if n is None or not p["real"]["lat"]:
        return None
    return n["real"]["lat"] / p["real"]["lat"]


def outside_share(p):
    """The part of the point's mean latency the model did not hold the
    command: 1 - W / latency, W the model's own mean time per command
    (device_alone). It holds what null does not have, the disk backend's
    path around the model, whose timer wake-ups are late on a loaded
    host, and any time the model's statistics leave out. Only for one
    session: with several, the model's window holds
    their logins one after another. None without the statistics."""
    d = device_alone(p)
    if not d or p.get("sessions", 1) != 1 or not p["lat_us"]["mean"]:
        return None
    return max(0.0, 1.0 - d["lat_us"] / p["lat_us"]["mean"])


def host_share(p, nulls):
    """The null share: outside_share is shown, not judged, for it grows
    with time_scale (micron-2011's ssd: 45% at x20, 68% at x64), so part
    of it is the model's own time its statistics leave out."""
    return null_share(p, nulls)


def label(p):
    s = "%s %dK depth %d" % (p.get("rw", "?"), p.get("bs", 0) // 1024,
                             p.get("depth", 0))
    if p.get("sessions", 1) != 1:
        s += " x %d sessions" % p["sessions"]
    return s


def gate(points, effect):
    """points: [(key, point, share)]. -> (clean, worst share, limit): clean
    when every share is known and below FRACTION x effect."""
    limit = FRACTION * effect
    shares = [s for _, _, s in points]
    if not shares or any(s is None for s in shares):
        return False, None, limit
    worst = max(shares)
    return worst < limit, worst, limit


def decide(verdict, res, judged, effect, k):
    """The section's verdict: VERDICT(res) -> (verdict, why) when every
    judged point is clean, else 'host-limited' with the rule's reading
    kept in the reason. -> (verdict, why, worst, limit)."""
    clean, worst, limit = gate(judged, effect)
    v, why = verdict(res)
    if clean:
        return v, why, worst, limit
    return "host-limited", (
        "the host's share of a judged point is %s at time_scale x%d (the "
        "cap is %d), not under the limit %s, so no verdict is given; the "
        "rule would read: %s: %s" % (fmt_share(worst), k, CAP,
                                     fmt_share(limit), v, why)), worst, limit


def next_scale(k, worst, limit, cap=CAP):
    """The time_scale that should bring WORST under LIMIT, MARGIN below it:
    the host's time h stays and the device's grows with K, so at K' the
    share is h / (h + d K') with h / d = worst K / (1 - worst). A power of
    two, at least twice K; None once K is at the cap."""
    if k >= cap:
        return None
    target = limit / MARGIN
    w = min(worst, 0.999)
    need = w * k / (1 - w) * (1 - target) / target
    nk = 2 * k
    while nk < need:
        nk *= 2
    return min(nk, cap)


# ---- the device alone, on the model's clock -----------------------------

def device_alone(p):
    """What the modelled device itself did at point P, from the model's
    statistics (tcq-bench --ctl): its mean occupancy in commands (host
    queue of the model plus the drive's, a cut-through READ's pieces
    counted once: mean_commands; from tcq versions without it, the sum
    of the two queues, which counts pieces) and, by Little's law, its own
    mean time per command W = occupancy / throughput, on the model's
    clock; and the
    throughput the application's whole depth would get from it at that W
    (depth x sessions / W): where the host holds commands back, what the
    drive would do without it. The model's queue statistics leave out
    part of the drive's own time, if any, so these figures would read high
    by that part. None without the model's statistics."""
    m = p.get("model")
    real = p.get("real", {})
    if not m or not real.get("iops"):
        return None
    occ = m.get("mean_commands")
    if occ is None:
        occ = m.get("mean_drive_queue", 0.0) + m.get("mean_host_queue", 0.0)
    if occ <= 0:
        return None
    w = occ / real["iops"] / p.get("scale", 1)        # seconds, model clock
    n = p.get("depth", 1) * p.get("sessions", 1)
    iops = n / w
    return {"occupancy": occ, "lat_us": w * 1e6, "iops": iops,
            "mbps": iops * p.get("bs", 0) / 1e6}


def alone(p, f="mbps"):
    """The device alone's figure F at point P (model clock), or None."""
    d = device_alone(p)
    return d[f] if d else None


def fmt_share(s):
    return "-" if s is None else "%.1f%%" % (100 * s)
