"""The five published results scripts/reproduce runs (texts in
../shared/references/, README.md there).

Each experiment gives: the published table, the model and where its
parameters come from (drive specifications of that class and year, never
fitted to the table), the mapping of the published setup onto tcqd +
tcq-bench, the runs, the measured table in the published layout, a plot,
and the rule that decides whether the shape holds, fixed here before any
run.

Model keys are those of tcqd's disk backend (disk:model=hdd|hdd-15k|ssd,
see tcqd.conf); a key left out takes the preset's value. Only values with
a source are set.
"""
from repro import Run, md_table, pct, point, svg_lines

K = 1024

# ---- drive specifications (sources in the report) ------------------------

# Hitachi Deskstar 7K500 (HDS725050KLA360, the sdd of the 2006 table):
# 7200 rpm, 500 GB, 8.5 ms average read seek, 16 MB cache, NCQ; sustained
# 31..64.8 MB/s. Source: The Tech Report, "Hitachi's Deskstar 7K500 hard
# drive" (2005), specification table,
# https://techreport.com/review/8752/hitachi-deskstar-7k500-hard-drive
HDD_7K500 = "disk:model=hdd,rpm=7200,capacity=500G,avg_seek=8.5ms"
# The hdd preset is now this drive (backend/disk.c, docs/disk-models.md):
# its zones and head switch from its own specification's table 10, its
# overhead from table 12. Its sheet's seek table was not at hand, so the
# preset's single-track 1.0 ms and full stroke 17 ms are assumed; they are
# set here so that the commands show them (the 2.5-inch Travelstar 7K320's
# 20 ms that stood here was another drive's).
HDD_SEEK_CURVE = "track_seek=1.0ms,full_seek=17ms"

# Hitachi Ultrastar 15K450 (2008; 15K rpm, 450 GB, the class of the one
# "15K RPM Wide SCSI HDD" of 2010): 3.3 ms average read seek.
# Source: Ultrastar 15K450 Hard Disk Drive Specification v1.2 (29 Oct
# 2008), 4.5.1, table 7,
# https://manualsdump.com/en/manuals/hitachi-hus154545vlf400-hus154530vlf400/112307/27
HDD_15K450 = "disk:model=hdd-15k,rpm=15000,capacity=450G,avg_seek=3.3ms"

# Hitachi Travelstar 7K200 (HTS722016K9SA00, the drive of the 2009
# tiobench runs: "NCQ (depth 0/32)", so no NCQ): 7200 rpm, 160 GB
# (312581808 sectors, from the kernel log quoted in the thread). No seek
# figure is set: the preset's stand (a 3.5" drive is faster than this
# 2.5" one; see the report).
HDD_7K200 = "disk:model=hdd,rpm=7200,capacity=160G"

# Micron RealSSD P320h (2011, the PCIe device of the thread), 350 GB:
# 32 ONFI 2.1 channels, 34 nm 16 Gb SLC NAND in 64 packages of 4 die
# (256 die: 8 a channel), up to 256 outstanding commands, READ latency
# < 47 us at depth 1, random read up to 785,000 IOPS at depth 256,
# sequential read 3.2 GB/s (the ssd preset's ctrl_iops and iface_rate).
# Source: Micron, RealSSD P320h HHHL PCIe NAND SSD data sheet
# (realssd_p320h_hhhl_distribution.pdf), General Description, tables 1
# and 2, https://manualmachine.com/micron/mtfdgar350sah1n1ab/8099443-user-manual
# The page read (25 us) and program (200 us) times are the usual figures
# of SLC NAND of that generation, not from this data sheet.
SSD_P320H = "disk:model=ssd,channels=32,dies=8,read_us=25,program_us=200," \
            "queue=256"
# The same card behind ahci: its 32 NCQ tags are all the drive sees,
# whatever the application's depth (AHCI 1.3: 32 command slots a port).
SSD_P320H_AHCI = SSD_P320H.replace("queue=256", "queue=32")


# tcqd runs the rotating-disk experiments on one reactor: one drive is
# one queue and one head, whatever the model does across reactors.
ONE = ["--threads", "1"]


def spec(*parts):
    """Joins spec parts: the model first, base=null last."""
    return ",".join(p for p in parts if p) + ",base=null"


def _num(v, fmt="%.0f"):
    return fmt % v if v is not None else "-"


# ---- axboe-2006 ------------------------------------------------------------

AXBOE_PUB = [  # drive, KiB/s at 1/1, 1, 31, and the diffs as published
    ("sda Maxtor 7B300S0", 397, 513, 673, "+29%", "+31+", "+69%"),
    ("sdb Maxtor 7L320S0", 397, 535, 741, "+35%", "+38%", "+87%"),
    ("sdc SAMSUNG HD160JJ", 372, 449, 507, "+21%", "+13%", "+36%"),
    ("sdd HDS725050KLA360", 489, 650, 941, "+33%", "+45%", "+92%"),
]


# The 48 requests in front of the drive went through Linux's elevator;
# the model's host queue stands for it (disk_elevator.c: deadline with
# its default tunables).
ELV = "elevator=deadline"


def axboe_runs(quick):
    rt = "3" if quick else "10"
    common = ["--rw", "randread", "--bs", "4k", "--span", "32G",
              "--runtime", rt, "--seed", "1"]
    hdd = HDD_7K500 + "," + HDD_SEEK_CURVE
    return [
        Run("d1-ncq1", spec(hdd, "ncq=1"), common + ["--depth", "1"],
            tcqd=ONE, size="500G"),
        Run("d48-ncq1", spec(hdd, "ncq=1", ELV), common + ["--depth", "48"],
            tcqd=ONE, size="500G"),
        Run("d48-ncq31", spec(hdd, "ncq=31,sched=sptf", ELV),
            common + ["--depth", "48"], tcqd=ONE, size="500G"),
        Run("d48-ncq31-fifo", spec(hdd, "ncq=31,sched=fifo", ELV),
            common + ["--depth", "48"], tcqd=ONE, size="500G"),
    ]


def _kib(res, key):
    return res[key][0]["iops"] * 4.0  # 4 KiB reads: KiB/s


def axboe_tables(res):
    pub = md_table(["drive", "depth", "KiB/sec", "diff", "diff 1/1"],
                   [r for d, a, b, c, db, dc, dca in AXBOE_PUB for r in (
                       (d, "1/1", a, "", ""),
                       ("", "1", b, db, ""),
                       ("", "31", c, dc, dca))])
    a, b, c = (_kib(res, k) for k in ("d1-ncq1", "d48-ncq1", "d48-ncq31"))
    f = _kib(res, "d48-ncq31-fifo")
    meas = md_table(["drive", "depth", "KiB/sec", "diff", "diff 1/1"], [
        ("model hdd (7K500 specs)", "1/1", _num(a), "", ""),
        ("", "1", _num(b), pct(b, a), ""),
        ("", "31", _num(c), pct(c, b), pct(c, a)),
        ("", "31 fifo (extra)", _num(f), pct(f, b), pct(f, a)),
    ])
    return pub, meas


def axboe_plot(res, path):
    xs = ["1/1", "1 (48 queued)", "31 (48 queued)"]
    series = [{"label": d.split()[0] + " published", "dashed": True,
               "ys": [1.0, b / a, c / a]} for d, a, b, c, *_ in AXBOE_PUB]
    a, b, c = (_kib(res, k) for k in ("d1-ncq1", "d48-ncq1", "d48-ncq31"))
    series.append({"label": "model hdd", "ys": [1.0, b / a, c / a],
                   "color": "black"})
    svg_lines(path, "axboe-2006: 4K random reads, relative to depth 1/1", xs,
              series, "throughput / depth 1/1",
              "dashed: published drives; solid: the model")


def axboe_verdict(res):
    a, b, c = (_kib(res, k) for k in ("d1-ncq1", "d48-ncq1", "d48-ncq31"))
    f = _kib(res, "d48-ncq31-fifo")
    ncq = c / a - 1
    sched = b / a - 1
    holds = ncq >= 0.13
    parts = []
    parts.append("NCQ with 48 queued gives %s over depth 1/1 (published "
                 "+36..92%%)" % pct(c, a))
    if f < a * (1 + ncq / 2):
        parts.append("the same depth in fifo order gives %s, so the gain "
                     "is the drive's reordering, not the depth" % pct(f, a))
    else:
        parts.append("the same depth in fifo order gives %s as well, so "
                     "the gain comes from serving several at once, not "
                     "from reordering (one head cannot)" % pct(f, a))
    if sched >= 0.13:
        parts.append("48 queued at drive depth 1, sorted by the deadline "
                     "elevator, give %s (published +21..35%%)" % pct(b, a))
    else:
        parts.append("48 queued at drive depth 1, sorted by the deadline "
                     "elevator, give only %s where the published scheduler "
                     "gave +21..35%%, so that row is not reproduced"
                     % pct(b, a))
    if c / b - 1 > 0.45:
        parts.append("NCQ over the sorted depth 1 gives %s, above every "
                     "published drive (+13..45%%): the model's sptf is "
                     "ideal -- it knows the head's angle exactly and "
                     "weighs all 31 commands -- where the firmware of "
                     "2006 did less (the Samsung, +13%%, least)"
                     % pct(c, b))
    # The size of NCQ's own gain is part of the shape: far above every
    # published drive, the direction holds and the magnitude does not.
    too_big = c / b - 1 > 0.45
    verdict = ("partly reproduced" if holds and (sched < 0.13 or too_big)
               else "reproduced" if holds else "not reproduced")
    return verdict, "; ".join(parts) + "."


AXBOE = {
    "name": "axboe-2006",
    "file": "axboe-2006-ncq-depth.txt",
    "title": "NCQ and the I/O scheduler, 4K random reads on 7200 rpm SATA",
    "claim": "drive depth 1 vs 31 with 48 requests queued in front: NCQ "
             "+13..45%, scheduler + NCQ +36..92% over depth 1/1",
    "model": "`" + HDD_7K500 + "," + HDD_SEEK_CURVE + "` with `ncq=1` or "
             "`ncq=31,sched=sptf` (and `ncq=31,sched=fifo` as a control), "
             "and `elevator=deadline` in front for the rows of 48 queued "
             "(Linux's deadline scheduler with its default tunables: "
             "sector order, 500 ms read expiry, batches of 16); "
             "LUN 500G on a null base. Sources: Hitachi Deskstar 7K500 "
             "(the sdd drive of the table): 7200 rpm, 500 GB, 8.5 ms "
             "average read seek, 16 MB cache ([The Tech Report, 2005]"
             "(https://techreport.com/review/8752/hitachi-deskstar-7k500-"
             "hard-drive)); the rest is the hdd preset, this drive: 30 "
             "zones of 76.3..36.5 MB/s and a 1.48 ms head switch from its "
             "specification's table 10, 0.23 ms command overhead from its "
             "table 12, single-track 1.0 ms and full stroke 17 ms assumed "
             "(docs/disk-models.md cites each key).",
    "mapping": "fio's 4K O_DIRECT random reads over the first 32 GB for "
               "20 s become `tcq-bench --rw randread --bs 4k --span 32G`. "
               "Row 1/1 is application depth 1 on a drive of depth 1 "
               "(`--depth 1`, `ncq=1`); row 1 is 48 requests queued in "
               "front of a drive of depth 1 (`--depth 48`, `ncq=1`); row "
               "31 is 48 queued on a drive of depth 31 that orders its "
               "queue by shortest positioning time (`ncq=31,sched=sptf`). "
               "In 2006 the 48 requests in front were sorted by Linux's "
               "elevator (by LBA, blind to rotation) before the drive saw "
               "them; tcqd passes commands on in arrival order, so the "
               "model's host queue plays that elevator "
               "(`elevator=deadline`, the deadline scheduler of that "
               "kernel; the thread does not say which one ran, CFQ or "
               "anticipatory sort the same way). Only one drive (the "
               "Hitachi, sdd) is modelled.",
    "runs": axboe_runs,
    "tables": axboe_tables,
    "plot": axboe_plot,
    "verdict": axboe_verdict,
    "rule": "holds when ncq=31 with 48 queued is at least 13% above depth "
            "1/1 (the smallest published NCQ gain); the scheduler row "
            "holds when 48 queued at depth 1 is at least 13% above 1/1; "
            "only partly when NCQ's own gain (row 31 over row 1) is above "
            "the largest published one, +45%",
}

# ---- bolkhovitin-2010 ------------------------------------------------------

BOLK_DEPTHS = [1, 2, 4, 8, 32]
BOLK_BS = [4, 16, 32, 64, 128]
BOLK_PUB = {4: [16, 25, 32, 34, 34], 16: [25, 57, 72, 85, 85],
            32: [44, 72, 97, 106, 106], 64: [65, 95, 114, 115, 115],
            128: [80, 112, 115, 115, 115]}


# The wire: 1 GbE with the round trip of a switched gigabit LAN whose
# NICs coalesce interrupts, 125 us (docs/link.md).
BOLK_LINK = "1gbit --rtt 0.125"
# The initiator's CPU (tcq-bench --initiator-cpu, one CPU): per byte,
# the "1 GHz per 1 Gbit/s" of TCP processing (8 cycles a byte; Foong et
# al., "TCP performance re-visited", ISPASS 2003) on the 1.7 GHz Xeon;
# per command, calibrated on the one cell the source marks as CPU-bound
# at the deepest queue, 4K at depth 32 (34 MB/s): the whole time of one
# command there less its bytes' share. Every other cell is predicted.
BOLK_CPU_BYTE_NS = 8 / 1.7
BOLK_CPU_CELL = (4, 32)
BOLK_CPU_PUB = BOLK_PUB[BOLK_CPU_CELL[0]][BOLK_DEPTHS.index(BOLK_CPU_CELL[1])]
BOLK_CPU_CMD_US = (BOLK_CPU_CELL[0] * K / (BOLK_CPU_PUB * 1e6) * 1e6 -
                   BOLK_CPU_CELL[0] * K * BOLK_CPU_BYTE_NS / 1e3)


def bolk_cpu_ceiling(bs_k):
    """MB/s the modelled initiator CPU allows at bs_k KiB, deep queues."""
    us = BOLK_CPU_CMD_US + bs_k * K * BOLK_CPU_BYTE_NS / 1e3
    return bs_k * K / us


def bolk_sizes(quick):
    return ([4, 16, 64, 128], [1, 2, 8, 32]) if quick else (BOLK_BS,
                                                            BOLK_DEPTHS)


def bolk_runs(quick):
    bss, ds = bolk_sizes(quick)
    return [Run("sweep", spec(HDD_15K450, "ncq=32,sched=sptf"), [
        "--rw", "read", "--span", "128M",
        "--bs", ",".join("%dk" % b for b in bss),
        "--depth", ",".join(str(d) for d in ds),
        "--runtime", "2" if quick else "5",
        "--initiator-cpu", "%.1f,%.3f" % (BOLK_CPU_CMD_US, BOLK_CPU_BYTE_NS)],
        link=BOLK_LINK, tcqd=ONE, size="450G")]


def _bolk(res):
    pts = res["sweep"]
    bss = sorted({q["bs"] // K for q in pts})
    ds = sorted({q["depth"] for q in pts})
    m = {b: {d: point(pts, bs=b * K, depth=d)["mbps"] for d in ds}
         for b in bss}
    return bss, ds, m


def bolk_tables(res):
    hdr = ["X \\ Y"] + [str(d) for d in BOLK_DEPTHS]
    pub = md_table(hdr, [["%dK" % b] + BOLK_PUB[b] for b in BOLK_BS])
    bss, ds, m = _bolk(res)
    meas = md_table(hdr, [["%dK" % b] + [_num(m[b].get(d)) if d in ds else
                                          "-" for d in BOLK_DEPTHS]
                          for b in BOLK_BS if b in bss])
    return pub, meas


def bolk_plot(res, path):
    bss, ds, m = _bolk(res)
    series = []
    for i, b in enumerate(bss):
        series.append({"label": "%dK published" % b, "dashed": True,
                       "color": None, "ys": [BOLK_PUB[b][BOLK_DEPTHS.index(d)]
                                             for d in ds]})
        series.append({"label": "%dK model" % b, "ys": [m[b][d] for d in ds]})
    for i, s in enumerate(series):
        s["color"] = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd",
                      "#ff7f0e"][(i // 2) % 5]
    svg_lines(path, "bolkhovitin-2010: iSCSI over 1 GbE to one 15K disk",
              [str(d) for d in ds], series, "MB/s",
              "x: queue depth; dashed: published, solid: model over "
              "scripts/link " + BOLK_LINK)


def bolk_verdict(res):
    bss, ds, m = _bolk(res)
    top = max(v for b in bss for v in m[b].values())
    big, small = max(bss), min(bss)
    sat = m[big].get(2, 0) >= 0.9 * top
    rise = m[small][max(ds)] / m[small][1]
    holds = sat and rise >= 2
    s = ("%dK reads reach %.0f MB/s at depth 2 (%.0f%% of the highest "
         "cell, %.0f MB/s; scripts/link 1gbit carries at most about 118 "
         "MB/s of 128K reads, docs/link.md); %dK rises %.1fx from depth "
         "1 to %d "
         "(published 16 -> 34, 2.1x)" % (big, m[big].get(2, 0),
                                        100 * m[big].get(2, 0) / top, top,
                                        small, rise, max(ds)))
    if not sat:
        s += "; 128K does not saturate the wire by depth 2"
    if rise < 2:
        s += ("; the small-block rise is smaller: the model's sequential "
              "4K reads are served from its read-ahead, and the modelled "
              "initiator CPU (%.0f MB/s at 4K) caps the deep end"
              % bolk_cpu_ceiling(small))
    return ("reproduced" if holds else "not reproduced"), s + "."


BOLK = {
    "name": "bolkhovitin-2010",
    "file": "bolkhovitin-2010-iscsi-scst-bs-depth.txt",
    "title": "iSCSI over 1 GbE to one 15K rpm disk, MB/s by block size "
             "and depth",
    "claim": "128K saturates the wire by depth 2; 4K rises 16 -> 34 MB/s; "
             "'350% from tagged queuing'",
    "model": "`" + HDD_15K450 + ",ncq=32,sched=sptf` (LUN 450G, null "
             "base) behind `scripts/link " + BOLK_LINK + "` (docs/link.md). "
             "Source: "
             "Hitachi Ultrastar 15K450 Hard Disk Drive Specification v1.2 "
             "(2008), 4.5.1 table 7: 3.3 ms average read seek for the "
             "450 GB model ([manualsdump](https://manualsdump.com/en/"
             "manuals/hitachi-hus154545vlf400-hus154530vlf400/112307/27)); "
             "15K rpm; the rest (seek curve, media rate, cache) is the "
             "hdd-15k preset's, now the Seagate Cheetah 15K.7 (204..122 "
             "MB/s sustained, SAS 600 MB/s; docs/disk-models.md). The "
             "initiator's CPU: `tcq-bench "
             "--initiator-cpu %.1f,%.3f` (one CPU): %.3f ns a byte is 8 "
             "cycles at 1.7 GHz, the 1 GHz per 1 Gbit/s of TCP processing "
             "(Foong et al., \"TCP performance re-visited\", ISPASS 2003, "
             "[scilit](https://scilit.net/publications/"
             "1734f453bbbe2378bb143d3511bce209)); %.1f us a command is "
             "calibrated on one cell, %dK at depth %d (%d MB/s, 'initiator "
             "CPU overloaded'); every other cell is predicted (the CPU "
             "alone allows %s MB/s at %s)." % (
                 BOLK_CPU_CMD_US, BOLK_CPU_BYTE_NS, BOLK_CPU_BYTE_NS,
                 BOLK_CPU_CMD_US, BOLK_CPU_CELL[0], BOLK_CPU_CELL[1],
                 BOLK_CPU_PUB,
                 ", ".join("%.0f" % bolk_cpu_ceiling(b) for b in BOLK_BS),
                 ", ".join("%dK" % b for b in BOLK_BS)),
    "mapping": "fio `--rw=read --size=128M --loops=100 --iodepth=Y "
               "--bs=X` through iSCSI-SCST over 1 GbE become `tcq-bench "
               "--rw read --span 128M --bs X --depth Y --initiator-cpu ...` "
               "against tcqd, both inside `scripts/link " + BOLK_LINK +
               "` (one namespace, loopback shaped by tbf with a peak "
               "rate: both directions share the 1 Gbit/s; the reverse "
               "direction of a read carries only commands and ACKs; every "
               "packet held 62.5 us on its way: a 125 us round trip, the "
               "published one of a switched gigabit LAN with interrupt "
               "coalescing, added to loopback's own). fio's MB/s are taken "
               "as 10^6 bytes a second, as tcq-bench's.",
    # the one declared cell a parameter is fitted on; the rest predicted
    "calibration": {"cell": "%dK at depth %d" % BOLK_CPU_CELL,
                    "published_mbps": BOLK_CPU_PUB,
                    "parameter": "tcq-bench --initiator-cpu CMD_US",
                    "value": round(BOLK_CPU_CMD_US, 1)},
    "runs": bolk_runs,
    "tables": bolk_tables,
    "plot": bolk_plot,
    "verdict": bolk_verdict,
    "rule": "holds when the largest block size reaches 90% of the highest "
            "cell at depth 2 and the smallest block size gains at least "
            "2x from depth 1 to the deepest point",
}

# ---- li-2009 ---------------------------------------------------------------


def li_runs(quick):
    rt = "3" if quick else "8"
    common = ["--rw", "read", "--bs", "4k", "--span", "256M",
              "--runtime", rt]
    hdd = HDD_7K500 + "," + HDD_SEEK_CURVE + ",readahead=on"
    deep = "1,2,4" if quick else "1,2,4,8,31"
    return [
        Run("ncq1", spec(hdd, "ncq=1"), common + ["--depth", "1"],
            tcqd=ONE, size="500G"),
        Run("ncq31", spec(hdd, "ncq=31,sched=sptf"), common + [
            "--depth", deep], tcqd=ONE, size="500G"),
    ]


def _li(res):
    off = res["ncq1"][0]["mbps"]
    on = {q["depth"]: q["mbps"] for q in res["ncq31"]}
    return off, on


def li_tables(res):
    pub = md_table(["queue_depth (NCQ)", "fio iodepth", "MB/s"],
                   [("1 (NCQ off)", 1, "~27"), ("2..31", 1, "~24")])
    off, on = _li(res)
    rows = [("1 (ncq=1)", 1, "%.1f" % off)]
    rows += [("31 (ncq=31)", d, "%.1f (%s)" % (v, pct(v, off)))
             for d, v in sorted(on.items())]
    meas = md_table(["queue_depth (NCQ)", "tcq-bench depth", "MB/s"], rows)
    return pub, meas


def li_plot(res, path):
    off, on = _li(res)
    ds = sorted(on)
    svg_lines(path, "li-2009: 4K sequential reads, NCQ off vs on",
              [str(d) for d in ds], [
                  {"label": "published NCQ off", "dashed": True,
                   "ys": [27] + [None] * (len(ds) - 1)},
                  {"label": "published NCQ on", "dashed": True,
                   "ys": [24] * len(ds)},
                  {"label": "model ncq=1", "ys": [off] + [None] * (
                      len(ds) - 1)},
                  {"label": "model ncq=31", "ys": [on[d] for d in ds]}],
              "MB/s", "x: application depth (published: 1 only)")


def li_verdict(res):
    off, on = _li(res)
    d1 = on.get(1)
    holds = d1 is not None and d1 <= 0.95 * off
    s = ("at application depth 1 the drive with NCQ on gives %.1f MB/s, "
         "NCQ off %.1f MB/s (%s; published about -10%%)" % (
             d1, off, pct(d1, off)))
    if not holds:
        s += ("; with one command outstanding there is nothing to reorder "
              "and the model charges the same per command with NCQ on or "
              "off; the thread blames the firmware (blktrace: D2C, the "
              "drive's own time, +10%), and no published specification "
              "gives an NCQ-mode overhead to set, so it is not invented")
    deeper = sorted(d for d in on if d > 1)
    if deeper:
        s += ("; at depth %s it gives %s MB/s" % (
            ",".join(str(d) for d in deeper),
            ", ".join("%.1f" % on[d] for d in deeper)))
    return ("reproduced" if holds else "not reproduced"), s + "."


LI = {
    "name": "li-2009",
    "file": "li-2009-ncq-sequential-slower.txt",
    "title": "Sequential reads at depth 1: NCQ on is slower",
    "claim": "fio sequential reads at iodepth 1: ~27 MB/s with "
             "queue_depth 1, ~24 MB/s with queue_depth 2..31",
    "model": "`" + HDD_7K500 + "," + HDD_SEEK_CURVE + ",readahead=on` "
             "with `ncq=1` or `ncq=31,sched=sptf` (the WDC and Seagate "
             "drives of the thread are not named; the 7K500 figures "
             "above stand for a 7200 rpm SATA drive of the time).",
    "mapping": "the attached fio job (libaio, direct, rw=read, size=256m, "
               "iodepth=1, 4K blocks by default) becomes `tcq-bench --rw "
               "read --bs 4k --span 256M --depth 1`; the kernel's "
               "queue_depth is the drive's `ncq`. Only the application "
               "depth 1 is in the published result; deeper application "
               "depths on the NCQ drive are measured as an addition "
               "(read-ahead against reordering).",
    "runs": li_runs,
    "tables": li_tables,
    "plot": li_plot,
    "verdict": li_verdict,
    "rule": "holds when ncq=31 at application depth 1 is at least 5% "
            "slower than ncq=1",
}

# ---- micron-2011 -----------------------------------------------------------

# The thread compares two drivers of one card: ahci (32 NCQ tags, so the
# card never holds more than 32 commands) and Micron's own (256). Both
# are run here at the same application depths, the drive's tags (the
# ssd model's `queue`) the only difference. The card did 785,000 IOPS;
# a host serves a fraction of that over iSCSI (the null backend: some
# 300K on 2 shared cores), so time_scale=20 runs the model 20 times
# slower than real time: the data sheet's 785K become 39K, an eighth of
# what this host does on null at depth 256, and the host's own cost is a
# small share of each command. Fixed here, before any run; the verdict
# checks that the host stayed out of the way (at most half of null).
MICRON_SCALE = 20
# tcqd lets the LUN and every session take 1024: depth 256 must reach
# the drive, not wait in tcqd's default CmdSN window of 128.
MICRON_TCQD = ["--queue-depth", "1024", "--cmd-window", "1024"]
# The card's 350 GB are 325.96 GiB: the LUN no larger than the model.
MICRON_SIZE = "325G"


def micron_runs(quick):
    bench = ["--rw", "randread", "--bs", "4k", "--depth", "32,256",
             "--runtime", "3" if quick else "8"]
    scale = "time_scale=%d" % MICRON_SCALE
    return [Run("ahci", spec(SSD_P320H_AHCI, scale), bench,
                tcqd=MICRON_TCQD, size=MICRON_SIZE),
            Run("native", spec(SSD_P320H, scale), bench, tcqd=MICRON_TCQD,
                size=MICRON_SIZE),
            # the same points on the null backend: what the host (tcqd,
            # tcq-bench, loopback, two shared cores) can do at all
            Run("host", "null", bench, tcqd=MICRON_TCQD, size=MICRON_SIZE)]


def _micron(res):
    return {k: (point(res[k], depth=32)["iops"],
                point(res[k], depth=256)["iops"])
            for k in ("ahci", "native", "host")}


def micron_tables(res):
    pub = md_table(["application queue depth", "Micron driver vs ahci"],
                   [(32, "+43% IOPS"), (256, "> +225% IOPS")])
    m = _micron(res)
    (a32, a256), (n32, n256), (h32, h256) = m["ahci"], m["native"], m["host"]
    k = MICRON_SCALE
    meas = md_table(["application queue depth",
                     "IOPS, 32 tags (ahci), time_scale=%d" % k,
                     "IOPS, 256 tags (Micron's driver)",
                     "256 tags vs 32", "x %d (model time): 32, 256 tags" % k,
                     "IOPS (null backend: the host's limit)"],
                    [(32, _num(a32), _num(n32), pct(n32, a32),
                      "%s, %s" % (_num(a32 * k), _num(n32 * k)), _num(h32)),
                     (256, _num(a256), _num(n256), pct(n256, a256),
                      "%s, %s" % (_num(a256 * k), _num(n256 * k)),
                      _num(h256))])
    return pub, meas


def micron_plot(res, path):
    m = _micron(res)
    svg_lines(path, "micron-2011: 256 tags vs ahci's 32, by application "
              "depth", ["32", "256"], [
                  {"label": "published (Micron driver / ahci)",
                   "dashed": True, "ys": [1.43, 3.25]},
                  {"label": "ssd model, 256 tags / 32 (time_scale=%d)"
                            % MICRON_SCALE,
                   "ys": [m["native"][0] / m["ahci"][0],
                          m["native"][1] / m["ahci"][1]]}],
              "IOPS / ahci's IOPS",
              "published: +43% at 32 (the driver's CPU path), > +225% at "
              "256")


def micron_verdict(res):
    m = _micron(res)
    (a32, a256), (n32, n256), (h32, h256) = m["ahci"], m["native"], m["host"]
    r = n256 / a256
    k = MICRON_SCALE
    s = ("at application depth 256 the card with 256 tags gives %.0f "
         "IOPS, %.2fx the %.0f it gives behind ahci's 32 (published: more "
         "than 3.25x); in model time %.0fK and %.0fK (by the data "
         "sheet's arithmetic the card tops out at 781K, its 3.2 GB/s "
         "interface just under its controller's 785K, while 32 commands "
         "each taking at least 10 + 25 + 20.5 + 1.3 us (controller, page "
         "read, page over the channel, interface) make at most 564K); "
         "at depth 32 the same 32 commands reach the card either way, "
         "so the two differ only by the host's noise (%.2fx here; "
         "published 1.43x, which the thread puts on the drivers' CPU "
         "path, a queue lock, that the model of the card does not have)"
         % (n256, r, a256, n256 * k / 1e3, a256 * k / 1e3, n32 / a32))
    host_ok = n256 <= 0.5 * h256
    if host_ok:
        s += ("; the host stayed out of the way: the null backend does "
              "%.0f IOPS at 256, %.1fx the dilated figure"
              % (h256, h256 / n256))
    else:
        s += ("; but the dilated figure is %.0f%% of the null backend's "
              "%.0f IOPS at 256, so the host shares the limit"
              % (100 * n256 / h256, h256))
    if r < 3.25:
        s += ("; the tags alone give %.2fx here, and on the model's own "
              "clock, without a host, 780K against 499K IOPS, 1.56x "
              "(docs/disk-models.md): the rest of the published gain is "
              "not in the card's arithmetic" % r)
    return ("reproduced" if r > 3.25 and host_ok else "not reproduced"), \
        s + "."


MICRON = {
    "name": "micron-2011",
    "file": "micron-2011-queue-depth-32-256.txt",
    "title": "A device with much internal parallelism: depth 32 vs 256",
    "claim": "at application depth 256 the card behind Micron's driver "
             "(256 commands) gives more than 3.25x the IOPS it gives "
             "behind ahci (32 tags); +43% at depth 32",
    "model": "`" + SSD_P320H + "` (256 tags) and `" + SSD_P320H_AHCI +
             "` (ahci's 32), both with the preset's controller stage "
             "(`ctrl_iops=785000`, `overhead=10us`) and interface "
             "(`iface_rate=3200`), null base, `--queue-depth 1024 "
             "--cmd-window 1024` so that tcqd lets 256 through, run "
             "with `time_scale=" + str(MICRON_SCALE) + "` (the drive " +
             str(MICRON_SCALE) + " times slower than real time, the host "
             "at its own speed: 785K IOPS become 39K). Source: Micron's "
             "RealSSD P320h data sheet ([manualmachine](https://"
             "manualmachine.com/micron/mtfdgar350sah1n1ab/8099443-user-"
             "manual)): 32 ONFI 2.1 channels, 64 packages of 4 SLC die "
             "(256 die, 8 a channel) for 350 GB, up to 256 outstanding "
             "commands, READ latency < 47 us at depth 1 (512 bytes: the "
             "model gives 37.7 us), 785,000 random-read IOPS, 3.2 GB/s "
             "sequential read. The page times (25 us read, 200 us "
             "program) and the controller's 10 us are assumed (SLC NAND "
             "of that generation; docs/disk-models.md).",
    "mapping": "vdbench 4K random reads at application depth 32 and 256 "
               "become `tcq-bench --rw randread --bs 4k --depth 32,256`; "
               "ahci is the card holding 32 commands (`queue=32`: AHCI's "
               "32 command slots), Micron's block driver the card holding "
               "256 (`queue=256`), the application's depth the same. The "
               "drivers' own CPU cost (the thread's +43% at 32, a queue "
               "lock) is not modelled.",
    "runs": micron_runs,
    "tables": micron_tables,
    "plot": micron_plot,
    "verdict": micron_verdict,
    "rule": "holds when, with time_scale=" + str(MICRON_SCALE) + ", at "
            "application depth 256 the card with 256 tags gives more than "
            "3.25x the IOPS it gives with ahci's 32 (published: more than "
            "+225%; no upper bound published) and at most half of what "
            "the null backend does at 256 (the host out of the way); "
            "depth 32 is shown beside it",
}

# ---- kara-2009 -------------------------------------------------------------

KARA_THREADS = [1, 2, 4, 8, 16, 32]
KARA_PUB = {  # 4 GB file: threads -> (avg, sd) per kernel
    "2.6.29": [(42.043333, 0.860439), (40.836667, 0.322938),
               (41.810000, 0.114310), (40.190000, 0.419603),
               (39.950000, 0.403072), (39.373333, 0.766913)],
    "2.6.32-rc7": [(41.580000, 0.403072), (39.163333, 0.374641),
                   (39.483333, 0.400111), (38.560000, 0.106145),
                   (37.966667, 0.098770), (36.476667, 0.032998)],
}


def kara_threads(quick):
    return [1, 4, 16, 32] if quick else KARA_THREADS


def kara_runs(quick):
    return [Run("threads", spec(HDD_7K200, "ncq=1,readahead=on,elevator=cfq"), [
        "--rw", "read", "--bs", "128k", "--depth", "1", "--span", "4G",
        "--sessions", ",".join(str(t) for t in kara_threads(quick)),
        "--repeat", "3", "--runtime", "2" if quick else "8"],
        tcqd=ONE, size="160G")]


def _kara(res):
    return {q["sessions"]: (q["mbps"], q.get("mbps_sd", 0.0))
            for q in res["threads"]}


def kara_tables(res):
    rows = []
    for i, t in enumerate(KARA_THREADS):
        a, b = KARA_PUB["2.6.29"][i], KARA_PUB["2.6.32-rc7"][i]
        rows.append((t, "%.2f" % a[0], "%.2f" % a[1], "%.2f" % b[0],
                     "%.2f" % b[1]))
    pub = md_table(["Threads", "2.6.29 Avg", "Stddev", "2.6.32-rc7 Avg",
                    "Stddev"], rows)
    m = _kara(res)
    meas = md_table(["Threads", "model Avg (MB/s)", "Stddev"],
                    [(t, "%.2f" % m[t][0], "%.2f" % m[t][1])
                     for t in KARA_THREADS if t in m])
    return pub, meas


def kara_plot(res, path):
    m = _kara(res)
    ts = sorted(m)
    series = []
    for k, v in KARA_PUB.items():
        series.append({"label": k + " published", "dashed": True,
                       "ys": [v[KARA_THREADS.index(t)][0] / v[0][0]
                              for t in ts]})
    series.append({"label": "model", "color": "black",
                   "ys": [m[t][0] / m[ts[0]][0] for t in ts],
                   "err": [m[t][1] / m[ts[0]][0] for t in ts]})
    svg_lines(path, "kara-2009: throughput by threads (relative to 1)",
              [str(t) for t in ts], series, "MB/s / MB/s at 1 thread",
              "bars: stddev of 3 runs")


def kara_verdict(res):
    m = _kara(res)
    ts = sorted(m)
    one, last = m[ts[0]][0], m[ts[-1]][0]
    drop = last / one - 1
    holds = -0.20 <= drop <= -0.03
    s = ("from 1 to %d threads the model goes %.1f -> %.1f MB/s (%s; "
         "published 2.6.29 -6%%, 2.6.32-rc7 -12%%)" % (ts[-1], one, last,
                                                     pct(last, one)))
    if drop < -0.20:
        s += ("; steeper, though cfq (2.6.29's, as in front of the "
              "published drive) serves each session's stream in 100 ms "
              "slices: what the slices do not hide is a seek at each "
              "switch and the host's time between a stream's commands "
              "(a stream whose next command comes more than slice_idle, "
              "8 ms, after its last loses the disk, and one that thinks "
              "longer than that on average is no longer idled for); "
              "ext3's layout is not modelled")
    elif drop > 0.03:
        s += ("; it rises: more streams keep more of the backend busy, "
              "which one head without NCQ could not")
    elif drop > -0.03:
        s += "; flat: the drive's read-ahead segments hide the interleaving"
    s += ("; the regression between the two kernels is a host scheduler "
          "difference and is outside the model")
    return ("reproduced" if holds else "not reproduced"), s + "."


KARA = {
    "name": "kara-2009",
    "file": "kara-2009-tiobench-threads.txt",
    "title": "tiobench throughput by thread count, SATA without NCQ",
    "claim": "throughput by thread count 1..32, mean and stddev of 3 "
             "runs; falls slowly as threads rise, and the regression "
             "between the kernels grows with threads",
    "model": "`" + HDD_7K200 + ",ncq=1,readahead=on,elevator=cfq` (LUN "
             "160G, null base). Source: the drive and its size are in the "
             "thread's kernel log (Hitachi HTS722016K9SA00, 312581808 "
             "sectors, NCQ depth 0/32: no NCQ); 7200 rpm is the Travelstar "
             "7K200's spindle speed; seek, media rate and cache are the "
             "hdd preset's (a 3.5\" drive: faster media than this 2.5\" "
             "one). The host's scheduler is 2.6.29's CFQ with its "
             "defaults (`elevator=cfq`, docs/disk-models.md), each "
             "session its own queue as each tiobench thread was a "
             "process.",
    "mapping": "tiobench with N threads over a 4 GB file becomes `tcq-bench "
               "--rw read --bs 128k --depth 1 --span 4G --sessions N "
               "--repeat 3`: N sequential streams, each starting at its "
               "own place of the 4 GB (tcq-bench spreads the sessions "
               "over the span), 128K reads (the kernel's read-ahead "
               "window), one outstanding each, mean and stddev over 3 "
               "runs. 2.6.29's CFQ is modelled, with each session (I_T "
               "nexus) as a process; the page cache, ext3 and "
               "2.6.32-rc7's CFQ are not: only one curve is measured.",
    "runs": kara_runs,
    "tables": kara_tables,
    "plot": kara_plot,
    "verdict": kara_verdict,
    "rule": "holds when the deepest thread count is 3..20% below 1 thread "
            "(a slow decline, as published: -6% and -12%)",
}

EXPERIMENTS = [AXBOE, BOLK, LI, MICRON, KARA]
