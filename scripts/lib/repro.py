"""Helpers for scripts/reproduce: running tcqd + tcq-bench (optionally
inside scripts/link), the delay stand-in used only to test the pipeline,
markdown tables and hand-written SVG plots.

Nothing here knows about a particular published result; the experiments
are in repro_experiments.py.
"""
import html
import json
import os
import re
import shlex
import statistics
import subprocess
import tempfile

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(
    __file__))))
SERVE = os.path.join(TOP, "scripts", "lib", "serve-bench")
LINK = os.path.join(TOP, "scripts", "link")


class ReproError(Exception):
    pass


class Run:
    """One tcqd (one backend spec) and one tcq-bench sweep against it.

    bench: tcq-bench arguments (lists allowed: --bs 4k,128k ...), without
    --json and the URL. link: scripts/link's RATE and options (split at
    spaces: "1gbit --rtt 0.125"), or None.
    scalable: whether raising the experiment's time_scale slows this run
    (repro_host.py); False keeps it in real time.
    window: rates over the point's runtime only (tcq-bench's bandwidth
    log, whole intervals up to --runtime), not to its last completion:
    for a source that ran far longer than a point does, where the drain
    after the runtime (under cfq, up to one round of slices with a seek
    each) would weigh on a short point as it did not on the long run.
    """

    def __init__(self, key, spec, bench, tcqd=(), link=None, size="1G",
                 scalable=True, window=False):
        self.key, self.spec, self.bench = key, spec, list(bench)
        self.tcqd, self.link, self.size = list(tcqd), link, size
        self.scalable, self.window = scalable, window


def parse_spec(spec):
    """disk:model=hdd,k=v,... -> ('disk', {'model': 'hdd', ...})"""
    name, _, rest = spec.partition(":")
    kv = {}
    for part in rest.split(",") if rest else []:
        k, _, v = part.partition("=")
        kv[k] = v
    return name, kv


def _ms(v, default):
    """'8.5ms' / '500us' / '3' (ms) -> milliseconds."""
    if not v:
        return default
    m = re.match(r"^([0-9.]+)(ns|us|ms|s)?$", v)
    if not m:
        return default
    f = {"ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1e3, None: 1.0}[m.group(2)]
    return float(m.group(1)) * f


def stand_in(spec):
    """The delay backend in place of a disk model: a mean service time and
    a number in service, nothing else (no seek, no rotation, no cache).
    Used ONLY to test the pipeline (--stand-in delay); its tables are not
    reproductions of anything."""
    name, kv = parse_spec(spec)
    if name != "disk":
        return spec
    model = kv.get("model", "hdd")
    if model == "ssd":
        lat = _ms(kv.get("read_us", "") and kv["read_us"] + "us", 0.05)
        par = int(kv.get("channels", "8")) * int(kv.get("dies", "4"))
    else:
        rpm = float(kv.get("rpm", "15000" if model == "hdd-15k" else "7200"))
        seek = _ms(kv.get("avg_seek"), 3.5 if model == "hdd-15k" else 8.5)
        lat = seek + 30000.0 / rpm
        par = int(kv.get("ncq", "1"))
    lat *= int(kv.get("time_scale", "1"))
    return "delay:latency=%.0fus,dist=exp,parallel=%d,base=null" % (
        lat * 1000, max(par, 1))


def probe_disk_backend(builddir):
    """Raises ReproError unless tcqd accepts --backend disk:model=hdd."""
    cmd = [SERVE, builddir, "--backend", "disk:model=hdd",
           "--export", "null0", "--size", "1G", "--",
           "--quiet", "--rw", "read", "--bs", "4k", "--depth", "1",
           "--ios", "1", "--runtime", "1"]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    if p.returncode == 0:
        return
    if "unknown backend 'disk'" in p.stderr:
        raise ReproError("the disk model backend is not built (tcqd "
                         "--backend disk:model=hdd: unknown backend 'disk')")
    raise ReproError("tcqd --backend disk:model=hdd failed:\n" +
                     p.stderr.strip())


# The control socket as the report shows it (each run makes its own):
# tcq-bench asks tcqd's disk model for its statistics per point through it.
CTL_SHOWN = "/tmp/tcq-repro.ctl"


def command_line(run, builddir, spec):
    """The shell command that reruns RUN (for the report)."""
    b = os.path.relpath(builddir, TOP) if builddir.startswith(TOP) else builddir
    words = []
    if run.link:
        words += ["scripts/link"] + run.link.split() + ["--builddir", b, "--"]
    words += ["scripts/lib/serve-bench", b, "--backend", spec]
    words += ["--export", "null0", "--size", run.size] + run.tcqd
    words += ["--ctl", CTL_SHOWN, "--"] + run.bench + ["--ctl", CTL_SHOWN]
    if run.window:
        words += WINDOW_LOG + ["/tmp/tcq-repro"]
    return " ".join(shlex.quote(w) for w in words)


# tcq-bench's bandwidth log for Run.window: 250 ms intervals.
WINDOW_MS = 250
WINDOW_LOG = ["--log-interval", str(WINDOW_MS), "--log-prefix"]


def _window_ms(bench):
    """(start, end) of the runtime in the bandwidth log's ms, which count
    from the point's start: after --ramp, for --runtime."""
    opt = {bench[i]: bench[i + 1] for i in range(len(bench) - 1)
           if bench[i] in ("--runtime", "--ramp")}
    if "--runtime" not in opt:
        raise ReproError("a window run needs --runtime")
    ramp = float(opt.get("--ramp", 0)) * 1000
    return ramp, ramp + float(opt["--runtime"]) * 1000


def window_rates(pts, prefix, bench):
    """Replaces each point's MB/s and IOPS (mean and sample sd over its
    repeats, as tcq-bench folds them) by those over its runtime: the
    mean of the bandwidth log's whole intervals that end within the
    runtime (after --ramp, by its end).
    The rates to the last completion stay in p['drained']."""
    start, end = _window_ms(bench)
    reps = {}
    with open(prefix + "_index.txt") as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            n, rw, bs, depth, sess = [w.strip() for w in line.split(",")][:5]
            v = []
            with open("%s_bw.%s.log" % (prefix, n)) as g:
                for row in g:
                    t, kib = row.split(",")[:2]
                    if start < float(t) <= end + 1e-6:
                        v.append(float(kib) * 1024 / 1e6)
            if len(v) < 2:
                raise ReproError("bandwidth log %s of %s: %d whole "
                                 "intervals" % (n, prefix, len(v)))
            key = (rw, int(bs), int(depth), int(sess))
            reps.setdefault(key, []).append(statistics.mean(v))
    for p in pts:
        x = reps.get((p["rw"], p["bs"], p["depth"], p["sessions"]))
        if not x:
            raise ReproError("no bandwidth log for point %r" % (
                {k: p.get(k) for k in ("rw", "bs", "depth", "sessions")},))
        m = statistics.mean(x)
        sd = statistics.stdev(x) if len(x) > 1 else 0.0  # n - 1, as tcq-bench
        p["drained"] = {"mbps": p["mbps"], "iops": p["iops"]}
        p["mbps"], p["mbps_sd"] = m, sd
        p["iops"] = m * 1e6 / p["bs"]
        if "iops_sd" in p:
            p["iops_sd"] = sd * 1e6 / p["bs"]
    return pts


def execute(run, builddir, spec, log, probe=None):
    """Runs RUN; returns tcq-bench's JSON points (with the device model's
    statistics per point, tcq-bench --ctl) and, when PROBE (a callable
    returning an object with stop()) is given, what stop() returned at
    the end of the run. Raises ReproError."""
    with tempfile.TemporaryDirectory(prefix="tcq-repro.") as d:
        js, ctl = os.path.join(d, "r.json"), os.path.join(d, "ctl")
        cmd = []
        if run.link:
            cmd += [LINK] + run.link.split() + ["--builddir", builddir, "--"]
        cmd += [SERVE, builddir, "--backend", spec, "--export", "null0",
                "--size", run.size] + run.tcqd + ["--ctl", ctl, "--"] + \
            run.bench + ["--ctl", ctl, "--quiet", "--json", js]
        if run.window:
            cmd += WINDOW_LOG + [os.path.join(d, "P")]
        log("  $ " + " ".join(shlex.quote(c) for c in cmd))
        pr = probe() if probe else None
        p = subprocess.run(cmd, capture_output=True, text=True)
        load = pr.stop() if pr else None
        for line in p.stdout.splitlines():
            log("    " + line)
        if not os.path.exists(js):
            raise ReproError("%s: no result (status %d): %s" % (
                run.key, p.returncode, p.stderr.strip()[-800:]))
        with open(js) as f:
            pts = json.load(f)["points"]
        bad = [q for q in pts if q.get("errors")]
        if bad:
            raise ReproError("%s: %d points had errors: %s" % (
                run.key, len(bad), p.stdout.strip()[-800:]))
        if run.window:
            window_rates(pts, os.path.join(d, "P"), run.bench)
        return (pts, load) if probe else pts


def point(pts, **want):
    """The one point of PTS whose fields match WANT (bs in bytes)."""
    got = [q for q in pts if all(q.get(k) == v for k, v in want.items())]
    if len(got) != 1:
        raise ReproError("expected one point with %r, found %d" % (
            want, len(got)))
    return got[0]


def widen(lo, hi, tol):
    """The bounds of a measured ratio for a published one (LO == HI) or a
    range of them across drives: TOL below LO, TOL above HI."""
    return lo * (1 - tol), hi * (1 + tol)


def inside(x, b):
    return b[0] <= x <= b[1]


def btxt(b):
    return "%.2fx..%.2fx" % b


# ---- markdown -------------------------------------------------------------

def md_table(header, rows):
    out = ["| " + " | ".join(str(h) for h in header) + " |",
           "|" + "---|" * len(header)]
    for r in rows:
        out.append("| " + " | ".join(str(c) for c in r) + " |")
    return "\n".join(out)


def pct(a, b):
    """a relative to b in % (+12%)."""
    if not b:
        return "n/a"
    return "%+.0f%%" % (100.0 * (a / b - 1.0))


# ---- SVG --------------------------------------------------------------------

COLORS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e",
          "#8c564b", "#17becf", "#7f7f7f"]


def svg_lines(path, title, xlabels, series, ylabel, note=""):
    """A line chart over categorical x (xlabels). series: list of dicts
    {label, ys (None = no point), dashed, err (optional list), color}."""
    W, H, L, R, T, B = 720, 420, 70, 200, 40, 60
    pw, ph = W - L - R, H - T - B
    vals = []
    for s in series:
        err = s.get("err") or [0] * len(s["ys"])
        vals += [y + (err[i] or 0) for i, y in enumerate(s["ys"])
                 if y is not None]
    ymax = max(vals) if vals else 1.0
    ymax = _nice(ymax * 1.08)
    n = len(xlabels)

    def X(i):
        return L + (pw * (i + 0.5) / n)

    def Y(v):
        return T + ph - ph * v / ymax

    e = html.escape
    o = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" '
         'viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">'
         % (W, H, W, H),
         '<rect width="100%" height="100%" fill="white"/>',
         '<text x="%d" y="22" font-size="14" font-weight="bold">%s</text>'
         % (L, e(title))]
    for k in range(6):
        v = ymax * k / 5
        o.append('<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#ddd"/>'
                 % (L, Y(v), L + pw, Y(v)))
        o.append('<text x="%d" y="%.1f" text-anchor="end">%s</text>'
                 % (L - 6, Y(v) + 4, _fmt(v)))
    o.append('<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="black"/>'
             % (L, T + ph, L + pw, T + ph))
    o.append('<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="black"/>'
             % (L, T, L, T + ph))
    for i, xl in enumerate(xlabels):
        o.append('<text x="%.1f" y="%d" text-anchor="middle">%s</text>'
                 % (X(i), T + ph + 18, e(str(xl))))
    o.append('<text x="15" y="%d" transform="rotate(-90 15 %d)" '
             'text-anchor="middle">%s</text>' % (T + ph // 2, T + ph // 2,
                                                  e(ylabel)))
    if note:
        o.append('<text x="%d" y="%d" fill="#555">%s</text>'
                 % (L, H - 12, e(note)))
    for si, s in enumerate(series):
        c = s.get("color") or COLORS[si % len(COLORS)]
        dash = ' stroke-dasharray="%s"' % (
            "2 3" if s.get("dotted") else "6 4") \
            if s.get("dashed") or s.get("dotted") else ""
        pts = [(X(i), Y(y)) for i, y in enumerate(s["ys"]) if y is not None]
        if len(pts) > 1:
            o.append('<polyline fill="none" stroke="%s" stroke-width="2"%s '
                     'points="%s"/>' % (c, dash, " ".join(
                         "%.1f,%.1f" % p for p in pts)))
        for i, y in enumerate(s["ys"]):
            if y is None:
                continue
            o.append('<circle cx="%.1f" cy="%.1f" r="3.5" fill="%s"/>'
                     % (X(i), Y(y), c))
            err = (s.get("err") or [None] * len(s["ys"]))[i]
            if err:
                o.append('<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" '
                         'stroke="%s"/>' % (X(i), Y(y - err), X(i),
                                            Y(y + err), c))
        ly = T + 14 + 18 * si
        o.append('<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s" '
                 'stroke-width="2"%s/>' % (L + pw + 12, ly, L + pw + 36, ly,
                                           c, dash))
        o.append('<text x="%d" y="%d">%s</text>' % (L + pw + 42, ly + 4,
                                                    e(s["label"])))
    o.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(o) + "\n")


def _nice(v):
    if v <= 0:
        return 1.0
    p = 10 ** len(str(int(v))) / 10.0
    for m in (1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10):
        if m * p >= v:
            return m * p
    return v


def _fmt(v):
    return ("%.0f" % v) if v >= 10 or v == 0 else ("%.2g" % v)
