#!/bin/bash
# The disk backend (device models) over iSCSI: 4K random reads at depth 1
# on the hdd preset take the service time its arithmetic predicts on the
# model's own clock, sptf shortens that service at depth 32, data written
# through a model read back from its base, the ssd model takes a deep
# load, tcqctl shows the model's statistics (and tcq-bench --ctl in its
# JSON and --detail table), and a bad key is refused naming the key.
#
# The arithmetic (backend/disk.c, the hdd preset, a Deskstar 7K500):
# overhead 0.23 ms + average seek 8.5 ms + half a revolution at 7200 rpm
# 4.17 ms + 4 KiB at >= 36.5 MB/s 0.11 ms = 13.01 ms a read. The checks read the service
# times the model computed (busy_fraction x elapsed_ns over media_ops),
# never the IOPS the host achieved: a loaded host adds idle time between
# reads, not service time, so no check here depends on the host's speed.
# The IOPS figures, printed and never asserted:
#   scripts/lib/serve-bench BUILDDIR --backend disk:model=hdd -- \
#     --rw randread --bs 4k --depth 1,32 --runtime 3
# shellcheck source=tests/integration/lib.sh
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

SCSICMD=${SCSICMD:-$top_builddir/tests/integration/scsicmd}
BENCH=${BENCH:-$top_builddir/tcq-bench}
TCQCTL=${TCQCTL:-$top_builddir/tcqctl}
need_built "$SCSICMD" "$BENCH" "$TCQCTL"

IQN=iqn.2026-11.org.tcq:disk
fixture_disk() {
	SOCK=$TEST_TMP/ctl.sock
	cat >"$TEST_TMP/tcqd.conf" <<CONF
[global]
listen = 127.0.0.1:0
threads = 2
ctl = $SOCK

[target $IQN]

[lun $IQN 0]
backend = disk:model=hdd,seed=3

[lun $IQN 1]
backend = disk:model=hdd,capacity=1G,base=ram:size=64M

[lun $IQN 2]
backend = disk:model=ssd,capacity=1G

[lun $IQN 3]
backend = disk:model=ssd,capacity=1G,time_scale=100

[lun $IQN 4]
backend = disk:model=hdd,capacity=1G,ncq=1,elevator=cfq
CONF
	start_tcqd -c "$TEST_TMP/tcqd.conf"
	URL=${TCQD_URL%/*}
}

# model_totals LUN: the running totals of LUN's model, on the model's
# clock scaled to real time: "media_ops busy_ns die_busy_ns elapsed_ns
# commands" (busy_ns: the sum of the service times the model computed).
model_totals() {
	need_tool python3
	run "$TCQCTL" -s "$SOCK" --json luns >/dev/null ||
		fail "tcqctl luns failed"
	python3 -c '
import json, sys
d = json.load(sys.stdin)
m = [l for l in d["luns"] if l["lun"] == int(sys.argv[1])][0]["model"]
print(m["media_ops"], m["busy_fraction"] * m["elapsed_ns"],
      m["mean_busy_dies"] * m["elapsed_ns"], m["elapsed_ns"], m["commands"])
' "$1" <<<"$OUT" || fail "no model statistics for LUN $1"
}

# reads LUN DEPTH N: N 4K random reads at DEPTH (60 s only guards a hang);
# sets OPS (media ops), CMDS (commands the model completed), BUSY_US
# (mean model service per media op, us), DIES (mean busy dies over the
# run) from the model's totals before and after.
reads() {
	local a b
	a=$(model_totals "$1")
	run "$BENCH" --quiet --runtime 60 --ios "$3" --rw randread --bs 4k \
		--depth "$2" --json "$TEST_TMP/b.json" "$URL/$1" ||
		fail "tcq-bench on LUN $1 at depth $2 failed"
	jq -e '.points[0].errors == 0' "$TEST_TMP/b.json" >/dev/null ||
		fail "tcq-bench reported errors on LUN $1"
	IOPS=$(jq '.points[0].iops | floor' "$TEST_TMP/b.json")
	b=$(model_totals "$1")
	read -r OPS CMDS BUSY_US DIES < <(awk -v a="$a" -v b="$b" 'BEGIN {
		split(a, x); split(b, y); n = y[1] - x[1]; us = dies = 0
		if (n) us = (y[2] - x[2]) / n / 1000
		if (y[4] > x[4]) dies = (y[3] - x[3]) / (y[4] - x[4])
		printf "%d %d %.0f %.2f\n", n, y[5] - x[5], us, dies }')
	say "LUN $1 depth $2: $CMDS commands, $OPS media ops, $BUSY_US us each, $DIES busy dies, $IOPS IOPS (host figure, not checked)"
}

# Before: 45..160 IOPS at depth 1 (the host's speed decided it). Now the
# mean service time per read on the model's clock against the arithmetic
# above: 13.01 ms; the band 11..15 ms holds the sample mean of 150 random
# seeks and rotations (one read's spread ~5 ms, the mean's ~0.4 ms).
hdd_qd1_random_reads_in_the_arithmetic_band() {
	need_tool jq
	reads 0 1 150
	[ "$OPS" -ge 150 ] || fail "hdd depth 1: $OPS media ops for 150 reads"
	[ "$BUSY_US" -ge 11000 ] && [ "$BUSY_US" -le 15000 ] ||
		fail "hdd depth 1: $BUSY_US us a read on the model's clock, arithmetic 13010 (band 11000..15000)"
	ok "hdd preset: 4K random reads at depth 1 take $BUSY_US us each on the model's clock (arithmetic 13010)"
}

# Before: depth 32 IOPS > 1.25 x depth 1 IOPS. Now the same claim on the
# model's clock: with 32 to choose from, sptf picks the nearest, so the
# mean service (seek + rotation) per read is below 0.8 x depth 1's.
hdd_sptf_depth32_beats_depth1() {
	local one
	need_tool jq
	reads 0 1 100
	one=$BUSY_US
	reads 0 32 400
	[ "$OPS" -ge 400 ] || fail "hdd depth 32: $OPS media ops for 400 reads"
	[ "$BUSY_US" -lt $((one * 4 / 5)) ] ||
		fail "sptf depth 32: $BUSY_US us a read, depth 1: $one us (want < 0.8x)"
	ok "hdd preset with sptf: depth 32 $BUSY_US us a read < 0.8 x depth 1 $one us (model clock)"
}

expect() {
	local lun=$1 want=$2
	shift 2
	run "$SCSICMD" "$URL/$lun" "$@" || fail "scsicmd failed on LUN $lun"
	[ "$OUT" = "$want" ] ||
		fail "LUN $lun: $* gave '$OUT', expected '$want'"
}

data_written_reads_back_from_the_base() {
	expect 1 "GOOD
GOOD
GOOD
GOOD
GOOD
GOOD" write 0 8 a1 nofua write 100000 64 b2 fua sync \
		read 0 8 a1 read 100000 64 b2 read 50000 8 00
	ok "disk over ram: cached and FUA writes read back, the rest reads zeros"
}

ssd_takes_a_deep_load() {
	need_tool jq
	reads 2 256 5000
	[ "$CMDS" -ge 5000 ] || fail "ssd depth 256: the model completed $CMDS commands for 5000 reads"
	ok "ssd preset: 5000 4K random reads at depth 256, no errors"
}

tcqctl_shows_the_model_statistics() {
	need_tool python3
	run "$TCQCTL" -s "$SOCK" --json luns || fail "tcqctl luns failed"
	python3 - <<PY || fail "no model statistics in tcqctl luns"
import json
d = json.loads('''$OUT''')
m = {l["lun"]: l.get("model") for l in d["luns"]}
assert m[0]["model"] == "hdd" and m[0]["commands"] > 0, m
assert m[0]["mean_drive_queue"] > 0, m
assert m[1]["model"] == "hdd" and m[1]["cached_writes"] >= 1, m
assert m[2]["model"] == "ssd" and m[2]["mean_busy_dies"] > 0, m
PY
	run "$TCQCTL" -s "$SOCK" luns || fail "tcqctl luns failed"
	grep -q "model hdd: .* mean drive queue" <<<"$OUT" ||
		fail "tcqctl luns does not print the model line"
	ok "tcqctl luns shows mean drive queue, cache hits and busy dies"
}

# tcq-bench --ctl: each point of the JSON carries the model's statistics
# over that point; a closed loop of 8 keeps about 8 at the drive.
bench_json_carries_model_stats() {
	need_tool python3
	run "$BENCH" --quiet --runtime 2 --rw randread --bs 4k --depth 1,8 \
		--ctl "$SOCK" --detail --json "$TEST_TMP/m.json" "$URL/0" ||
		fail "tcq-bench --ctl failed"
	grep -q "model hdd: read hits" <<<"$OUT" ||
		fail "--detail has no model line"
	python3 - "$TEST_TMP/m.json" <<'PY' || fail "no model statistics per point"
import json, sys
pts = json.load(open(sys.argv[1]))["points"]
assert len(pts) == 2, pts
for p in pts:
    m = p["model"]
    assert m["model"] == "hdd" and m["commands"] > 0, p
    assert 0 < m["mean_drive_queue"] <= p["depth"] + 0.01, p
assert pts[1]["model"]["mean_drive_queue"] > 4, pts
PY
	ok "tcq-bench --ctl adds the model's mean drive queue per point"
}

# A 128K READ is read in two 64K pieces (cut-through, scsi/sbc_cut.c),
# both in the model at once: the model's queues hold pieces, up to two
# per command, while mean_commands counts each command once, so at
# depth 1 it is at most 1 and the queues' sum is well above it (each
# command's first piece waits for the second: 1 + T1/T2 of it, > 1.2).
bench_model_counts_a_cut_command_once() {
	need_tool python3
	run "$BENCH" --quiet --runtime 60 --ios 300 --rw read --bs 128k \
		--depth 1 --ctl "$SOCK" --json "$TEST_TMP/p.json" "$URL/0" ||
		fail "tcq-bench --ctl failed"
	python3 - "$TEST_TMP/p.json" <<'PY' || fail "mean_commands does not count a cut READ's pieces once"
import json, sys
m = json.load(open(sys.argv[1]))["points"][0]["model"]
pieces = m["mean_drive_queue"] + m["mean_host_queue"]
assert 0 < m["mean_commands"] <= 1.01, m
assert pieces > 1.2 * m["mean_commands"], m
PY
	ok "128K reads at depth 1: pieces in the model above commands, commands <= 1"
}

# The --detail table (a row per point) gains the model's columns with
# --ctl on a disk LUN: mean drive queue, mean host queue and the share of
# commands the drive's caches served, the same figures as the JSON;
# without --ctl the table has none of them.
bench_detail_model_columns_only_with_ctl() {
	need_tool python3
	run "$BENCH" --quiet --runtime 1 --rw randwrite --bs 4k --depth 1,8 \
		--ctl "$SOCK" --detail --json "$TEST_TMP/c.json" "$URL/1" ||
		fail "tcq-bench --ctl --detail failed"
	printf '%s\n' "$OUT" >"$TEST_TMP/c.out"
	python3 - "$TEST_TMP/c.json" "$TEST_TMP/c.out" <<'PY' || fail "the --detail table lacks the model's columns or disagrees with the JSON"
import json, sys
pts = json.load(open(sys.argv[1]))["points"]
lines = open(sys.argv[2]).read().splitlines()
head = [l for l in lines if l.startswith("rw ") and "p50us" in l]
assert len(head) == 1, lines
assert head[0].split()[-7:] == ["errors", "drive", "q", "host", "q", "hit",
                                "%"], head
rows = [l.split() for l in lines if l.startswith("randwrite ")]
assert len(rows) == len(pts) == 2, (rows, pts)
for r, p in zip(rows, pts):
    m = p["model"]
    assert int(r[3]) == p["depth"], (r, p)
    assert abs(float(r[12]) - m["mean_drive_queue"]) < 0.01, (r, m)
    assert abs(float(r[13]) - m["mean_host_queue"]) < 0.01, (r, m)
    hit = (m["read_hits"] + m["cached_writes"]) / m["commands"] * 100
    assert abs(float(r[14]) - hit) < 0.051, (r, m)
    assert m["cached_writes"] > 0 and float(r[14]) > 0, (r, m)
PY
	run "$BENCH" --quiet --runtime 1 --rw randwrite --bs 4k --depth 1 \
		--detail "$URL/1" || fail "tcq-bench --detail failed"
	grep -q '^rw .*errors$' <<<"$OUT" ||
		fail "without --ctl the --detail header does not end at errors: $OUT"
	if grep -Eq 'drive q|hit %|model hdd' <<<"$OUT"; then
		fail "model columns without --ctl: $OUT"
	fi
	ok "--detail has drive q, host q and hit % columns with --ctl, as in the JSON, and none without"
}

# The ssd preset's 4K read at depth 1 is at least overhead 10 us + page
# read 25 us at the die = 35 us of model time; time_scale=100 makes that
# 3.5 ms of real time, so 300 reads one at a time take about 1.05 s or
# more (load only lengthens it); the check asks 0.9 s, as a read's model
# time may start at the reactor pass that received it, a little before
# the read itself (ctl.sh's path check saw 230 us of that under ASan),
# and without the time_scale the reads take 10 ms. Before: depth 32 IOPS > 8 x depth 1 IOPS. Now the overlap on the
# model's clock: at depth 1 at most one die is ever busy (mean <= 1), at
# depth 32 the reads spread over the channels and dies (mean > 2), however
# slowly the host turns commands round. tcqctl's elapsed_ns is real time
# (two runs of >= 1 s), not model time (10 ms).
time_scale_slows_the_drive_not_the_host() {
	local one
	need_tool jq python3
	reads 3 1 300
	one=$DIES
	[ "$CMDS" -ge 300 ] || fail "ssd time_scale=100: the model completed $CMDS of 300 reads"
	awk -v r="$(jq '.points[0].runtime_s' "$TEST_TMP/b.json")" \
		'BEGIN { exit !(r >= 0.9) }' ||
		fail "ssd time_scale=100: 300 reads at depth 1 in under 0.9 s (about 3.5 ms a read)"
	awk -v d="$one" 'BEGIN { exit !(d > 0 && d <= 1.0) }' ||
		fail "ssd time_scale=100 depth 1: $one busy dies (want 0 < x <= 1)"
	reads 3 32 3000
	[ "$CMDS" -ge 3000 ] || fail "ssd time_scale=100: the model completed $CMDS of 3000 reads"
	awk -v d="$DIES" 'BEGIN { exit !(d > 2) }' ||
		fail "ssd time_scale=100 depth 32: $DIES busy dies (want > 2)"
	run "$TCQCTL" -s "$SOCK" --json luns || fail "tcqctl luns failed"
	python3 - <<PY || fail "elapsed_ns of the dilated LUN is not real time"
import json
d = json.loads('''$OUT''')
lun = [l for l in d["luns"] if l["lun"] == 3][0]
assert lun["model"]["elapsed_ns"] >= 2e9, lun["model"]
PY
	ok "ssd time_scale=100: 300 reads at depth 1 >= 0.9 s, busy dies $one at depth 1, $DIES at depth 32, elapsed in real time"
}

# bad_key SPEC WORDS: tcqd refuses to start and names the key.
bad_key() {
	run "$TCQD" --export "$TEST_TMP/x.img" --size 1M --listen 127.0.0.1:0 \
		--backend "$1" && fail "tcqd started with --backend $1"
	grep -q "$2" <<<"$OUT" || fail "--backend $1: message lacks '$2'"
}

# elevator=cfq (Linux 2.6.29's, backend/disk_cfq.c) is accepted and
# serves two sessions' sequential readers, each I_T nexus its own queue
# (the unit checks of tests/unit/test_disk_cfq.c test the algorithm).
cfq_elevator_serves_two_sessions() {
	need_tool jq
	local a b
	a=$(model_totals 4)
	run "$BENCH" --quiet --runtime 60 --ios 200 --rw read --bs 64k \
		--depth 1 --sessions 2 --json "$TEST_TMP/q.json" "$URL/4" ||
		fail "tcq-bench on the cfq LUN failed"
	jq -e '.points[0].errors == 0 and .points[0].sessions == 2' \
		"$TEST_TMP/q.json" >/dev/null ||
		fail "tcq-bench reported errors on the cfq LUN"
	b=$(model_totals 4)
	awk -v a="$a" -v b="$b" 'BEGIN { split(a, x); split(b, y)
		exit !(y[5] - x[5] >= 200) }' ||
		fail "the cfq LUN's model completed fewer than 200 reads ($a -> $b)"
	ok "elevator=cfq: 200 sequential 64K reads of 2 sessions, no errors"
}

bad_keys_are_named() {
	bad_key disk:model=hdd,ncq=99 "disk: bad ncq '99'"
	bad_key disk:model=hdd,bogus=1 "disk: unknown option 'bogus'"
	bad_key disk:model=hdd,avg_seek=40ms "disk: avg_seek"
	bad_key disk:model=ssd,queue=0 "disk: bad queue '0'"
	bad_key disk:model=ssd,time_scale=0 "disk: bad time_scale '0'"
	bad_key disk:model=hdd,elevator=cfq2 "disk: bad elevator 'cfq2'"
	ok "bad disk keys are refused naming the key"
}

CHECKS=(
	@disk
	hdd_qd1_random_reads_in_the_arithmetic_band
	hdd_sptf_depth32_beats_depth1
	data_written_reads_back_from_the_base
	ssd_takes_a_deep_load
	tcqctl_shows_the_model_statistics
	bench_json_carries_model_stats
	bench_detail_model_columns_only_with_ctl
	bench_model_counts_a_cut_command_once
	time_scale_slows_the_drive_not_the_host
	cfq_elevator_serves_two_sessions
	@
	bad_keys_are_named
)
run_checks "$@"
