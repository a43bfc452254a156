# shellcheck shell=bash
# shellcheck disable=SC2154  # top, tcqd, bench, RT, RAMP, IPERF_T: the caller's
# The limits of this machine and tcqd beside them, shared by
# scripts/compare-peers and scripts/limits (source after peers.sh). A
# round measures, at every point of the file workloads: fio (libaio,
# O_DIRECT) on the same file (and at half each deeper depth), tcqd on
# --backend null, tcqd on the file (and the QD1 and QD8 points again with
# the libiscsi engine: a second client), then a loopback round trip
# (tcq-bench 512-byte reads at QD1 on tcqd null, and
# scripts/lib/pingpong.py) and iperf3 on 127.0.0.1. The
# scripts run two rounds, one after the other; compare_report.py keeps
# the best of them and prints both.
#
# The caller sets top, tcqd, bench, RT, RAMP, IPERF_T, then calls
#   limits_init                 work dir, results file, cleanup trap
#   limits_data DIR SIZE        the read and write files (LIMITS_IMG,
#                               LIMITS_WIMG), from /dev/urandom, kept
#   limits_round N              one round of the limits and tcqd
#   file_sweep TARGET ENGINE START STOP [bench args]
#                               every file workload against a target
#                               that START FILE starts (T_PID, T_URL)
#   point ...                   one tcq-bench point (below)
#   limits_env                  exports the CP_* of the report
# and ROUND is recorded with every point.
#
# The reads go to a file that nothing ever writes (fio opens it
# --readonly), the writes to a second one: tcq-bench writes patterned
# blocks, and a file of patterns or zeros reads far faster than random
# data on a virtual disk, which would make every ratio to local wrong.

# name rw bs depth: the file-LUN points, run against every target and
# limit.
WORKLOADS=(
	"rr4k-qd1 randread 4k 1"
	"rr4k-qd32 randread 4k 32"
	"rw4k-qd32 randwrite 4k 32"
	"r128k-qd1 read 128k 1"
	"r128k-qd2 read 128k 2"
	"r128k-qd4 read 128k 4"
	"r128k-qd8 read 128k 8"
	"r128k-qd32 read 128k 32"
	"r1m-qd4 read 1m 4"
	"w64k-qd8 write 64k 8"
)
# With LIMITS_CUT_AB set (scripts/limits), these run once more on tcqd
# with --cut-through off (target tcqd-cutoff), after tcqd with its
# default (auto): cut-through reads against reads sent whole, in the same
# round (compare_report.py's CUT_AB).
CUT_AB=(
	"r128k-qd1 read 128k 1"
	"r128k-qd4 read 128k 4"
	"r128k-qd8 read 128k 8"
	"r128k-qd32 read 128k 32"
)
# The points measured again with a second client (engine libiscsi).
SECOND_CLIENT=(
	"rr4k-qd1 randread 4k 1"
	"r128k-qd8 read 128k 8"
)
ROUND=1
# Where the output of a failed point is kept (the work dir goes at exit).
LIMITS_FAILED=${LIMITS_FAILED:-${TMPDIR:-/tmp}/tcq-limits-failed}
LIMITS_WHO=${LIMITS_WHO:-limits}
tcqd_pid='' tcqd_url='' iperf_pid='' npt=0 work='' res='' cmds=''
T_PID='' T_URL=''

say() { printf '%s: %s\n' "$LIMITS_WHO" "$*"; }

stop_tcqd() {
	[ -n "$tcqd_pid" ] && peers_kill "$tcqd_pid"
	tcqd_pid=
	return 0
}

limits_cleanup() {
	peers_stop
	stop_tcqd
	[ -n "$iperf_pid" ] && peers_kill "$iperf_pid"
	rm -rf "$work" "$PEERS_DIR"
}

limits_init() {
	work=$(mktemp -d "${TMPDIR:-/tmp}/tcq-$LIMITS_WHO.XXXXXX")
	res=$work/results.jsonl cmds=$work/commands
	: >"$res"
	: >"$cmds"
	trap limits_cleanup EXIT
}

log_cmd() { printf '%s\n' "$*" >>"$cmds"; }

# limits_random FILE SIZE_MIB: FILE of SIZE_MIB MiB from /dev/urandom,
# unless it is there at that size (reads of holes or zeros measure
# nothing; urandom makes it incompressible).
limits_random() {
	local f=$1 mib=$2
	[ "$(stat -c %s "$f" 2>/dev/null || echo 0)" = $((mib * 1048576)) ] &&
		return 0
	say "writing $f ($mib MiB from /dev/urandom, once)"
	dd if=/dev/urandom of="$f.tmp" bs=1M count="$mib" status=none \
		conv=fsync
	mv "$f.tmp" "$f"
}

# limits_data DIR SIZE (e.g. 1g, 64m): sets LIMITS_IMG (reads only) and
# LIMITS_WIMG (the write points).
limits_data() {
	local dir=$1 size=${2,,} mib
	case $size in
	*g) mib=$((${size%g} * 1024)) ;;
	*m) mib=${size%m} ;;
	*) echo "$LIMITS_WHO: size $2: give it in m or g" >&2; exit 2 ;;
	esac
	mkdir -p "$dir"
	LIMITS_IMG=$dir/read-$size.img LIMITS_WIMG=$dir/write-$size.img
	LIMITS_SIZE=$size
	limits_random "$LIMITS_IMG" "$mib"
	limits_random "$LIMITS_WIMG" "$mib"
	LIMITS_FS=$(df -T "$dir" | awk 'NR == 2 { print $2 " on " $1 }')
}

# file_for RW: the file a workload of RW runs on.
file_for() {
	case $1 in
	*write | randrw) echo "$LIMITS_WIMG" ;;
	*) echo "$LIMITS_IMG" ;;
	esac
}

# start_tcqd ARGS...: tcqd on 127.0.0.1:0; sets tcqd_pid, tcqd_url.
start_tcqd() {
	local i
	log_cmd "tcqd $* --listen 127.0.0.1:0 --log-level warn"
	"$tcqd" "$@" --listen 127.0.0.1:0 --log-level warn \
		>"$work/tcqd.url" 2>"$work/tcqd.log" &
	tcqd_pid=$!
	for ((i = 0; i < 100; i++)); do
		tcqd_url=$(grep -m1 '^iscsi://' "$work/tcqd.url" 2>/dev/null ||
			true)
		[ -n "$tcqd_url" ] && return 0
		kill -0 "$tcqd_pid" 2>/dev/null || break
		sleep 0.1
	done
	cat "$work/tcqd.log" >&2
	echo "$LIMITS_WHO: tcqd did not start" >&2
	exit 1
}

# point TARGET PID URL ENGINE NAME RW BS DEPTH [SESSIONS REPEAT] [args]
# Runs one tcq-bench point and records it with the target's CPU time.
point() {
	local target=$1 pid=$2 url=$3 engine=$4 name=$5 rw=$6 bs=$7 depth=$8
	local sess=${9:-1} rep=${10:-1} json c0 c1 t0 t1 rc=0
	shift 10 2>/dev/null || shift $#
	npt=$((npt + 1))
	json=$work/pt-$npt.json
	local cmd=("$bench" --quiet --engine "$engine" --rw "$rw" --bs "$bs"
		--depth "$depth" --sessions "$sess" --runtime "$RT" --ramp "$RAMP"
		"$@")
	[ "$rep" -gt 1 ] && cmd+=(--repeat "$rep")
	cmd+=(--json "$json" "$url")
	log_cmd "tcq-bench ${cmd[*]:1}"
	printf '  r%s %-13s %-10s %-9s %4s x%-3s ... ' "$ROUND" "$target" \
		"$name" "$rw" "$bs" "$depth"
	[ "$sess" != 1 ] && printf '(%s sessions) ' "$sess"
	c0=$( [ -n "$pid" ] && peers_cpu "$pid" || echo "0 0")
	t0=$(date +%s.%N)
	"${cmd[@]}" >"$work/pt-$npt.out" 2>&1 || rc=$?
	t1=$(date +%s.%N)
	c1=$( [ -n "$pid" ] && peers_cpu "$pid" || echo "0 0")
	# A point counts when tcq-bench wrote one point without errors.
	if [ -s "$json" ] && python3 -c 'import json,sys
p = json.load(open(sys.argv[1]))["points"]
if not p or p[0].get("errors"):
    sys.exit(1)
p = p[0]
print("%.0f IOPS, %.1f MB/s, mean %.1f us" % (p["iops"], p["mbps"], p["lat_us"]["mean"]))' "$json" 2>/dev/null; then
		:
	else
		local keep=$LIMITS_FAILED/r$ROUND-$target-$name
		mkdir -p "$LIMITS_FAILED"
		cp "$work/pt-$npt.out" "$keep.out"
		[ -s "$json" ] && cp "$json" "$keep.json"
		case $target in
		tcqd*) cp "$work/tcqd.log" "$keep.tcqd.log" ;;
		esac
		echo "failed (rc $rc): $(tail -1 "$work/pt-$npt.out") (kept: $keep.*)"
		json=
	fi
	printf '{"target":"%s","name":"%s","kind":"bench","round":%d,"json":"%s","rc":%d,"cpu0":%s,"cpu1":%s,"threads":%s,"t0":%s,"t1":%s,"sessions":%s}\n' \
		"$target" "$name" "$ROUND" "$json" "$rc" "${c0% *}" "${c1% *}" \
		"${c1#* }" "$t0" "$t1" "$sess" >>"$res"
	return 0
}

# file_sweep TARGET ENGINE START STOP [tcq-bench args]: every file
# workload, the reads on the read file and the writes on the write file;
# "START FILE" starts the target on FILE and sets T_PID and T_URL, STOP
# ends it. SWEEP_AFTER_READS, when set, is run (with the target up on
# the read file) after the read points.
file_sweep() {
	local target=$1 engine=$2 start=$3 stop=$4 w f name rw bs depth
	shift 4
	local extra=("$@")
	for f in "$LIMITS_IMG" "$LIMITS_WIMG"; do
		"$start" "$f"
		for w in "${WORKLOADS[@]}"; do
			read -r name rw bs depth <<<"$w"
			[ "$(file_for "$rw")" = "$f" ] || continue
			point "$target" "$T_PID" "$T_URL" "$engine" "$name" "$rw" \
				"$bs" "$depth" 1 1 "${extra[@]}"
		done
		if [ "$f" = "$LIMITS_IMG" ] && [ -n "${SWEEP_AFTER_READS:-}" ]; then
			"$SWEEP_AFTER_READS"
		fi
		"$stop"
	done
}

tcqd_start_file() { start_tcqd --export "$1"; T_PID=$tcqd_pid T_URL=$tcqd_url; }
local_start_file() { T_PID='' T_URL=$1; }
no_stop() { :; }

# The second client: the same points with tcq-bench's libiscsi engine.
second_client() {
	local w
	for w in "${SECOND_CLIENT[@]}"; do
		# shellcheck disable=SC2086
		point tcqd-libiscsi "$T_PID" "$T_URL" libiscsi $w
	done
}

# fio_point NAME RW BS DEPTH: fio on the workload's file.
fio_point() {
	local json f ro=()
	f=$(file_for "$2")
	[ "$f" = "$LIMITS_IMG" ] && ro=(--readonly)
	npt=$((npt + 1))
	json=$work/pt-$npt.json
	local cmd=(fio --name=cmp --filename="$f" "${ro[@]}" --direct=1
		--ioengine=libaio --rw="$2" --bs="$3" --iodepth="$4"
		--runtime="$RT" --ramp_time="$RAMP" --time_based
		--output-format=json --output="$json")
	log_cmd "${cmd[*]}"
	printf '  r%s %-13s %-10s %-9s %4s x%-3s ... ' "$ROUND" fio "$1" "$2" \
		"$3" "$4"
	if "${cmd[@]}" >/dev/null 2>"$work/fio.err"; then
		python3 -c 'import json,sys; j=json.load(open(sys.argv[1]))["jobs"][0]; s=j["write"] if j["write"]["iops"] > 0 else j["read"]; print("%.0f IOPS, %.1f MB/s" % (s["iops"], s["bw_bytes"] / 1e6))' "$json"
	else
		echo "failed: $(tail -1 "$work/fio.err")"
		json=
	fi
	printf '{"target":"fio","name":"%s","kind":"fio","round":%d,"json":"%s"}\n' \
		"$1" "$ROUND" "$json" >>"$res"
}

# The loopback round trip without iSCSI (scripts/lib/pingpong.py).
pingpong_point() {
	local json=$work/pingpong-$ROUND.json n=${PINGPONG_N:-20000}
	log_cmd "scripts/lib/pingpong.py -n $n"
	printf '  r%s %-13s ... ' "$ROUND" "tcp ping-pong"
	if python3 "$top/scripts/lib/pingpong.py" -n "$n" --json "$json" \
		>"$work/pingpong.out" 2>&1; then
		sed 's/.*: //' "$work/pingpong.out"
	else
		echo "failed: $(tail -1 "$work/pingpong.out")"
		json=
	fi
	printf '{"target":"pingpong","name":"rtt","kind":"pingpong","round":%d,"json":"%s"}\n' \
		"$ROUND" "$json" >>"$res"
}

iperf_point() {
	local port ij=$work/iperf3-$ROUND.json
	port=$(peers_free_port)
	iperf3 -s -B 127.0.0.1 -p "$port" >"$work/iperf3-server.log" 2>&1 &
	iperf_pid=$!
	# Not peers_wait_port: a probe connection would count as a test.
	for _ in $(seq 100); do
		[ -n "$(ss -Hltn "sport = :$port")" ] && break
		sleep 0.1
	done
	log_cmd "iperf3 -s -B 127.0.0.1 -p PORT; iperf3 -c 127.0.0.1 -p PORT -t $IPERF_T -J"
	printf '  r%s %-13s ... ' "$ROUND" "iperf3 ${IPERF_T}s"
	if iperf3 -c 127.0.0.1 -p "$port" -t "$IPERF_T" -J >"$ij" 2>&1; then
		python3 -c 'import json,sys; print("%.0f MB/s" % (json.load(open(sys.argv[1]))["end"]["sum_received"]["bits_per_second"] / 8e6))' "$ij"
	else
		echo "failed"
		ij=
	fi
	printf '{"target":"iperf3","name":"wire","kind":"iperf3","round":%d,"json":"%s"}\n' \
		"$ROUND" "$ij" >>"$res"
	peers_kill "$iperf_pid"
	iperf_pid=
}

# fio at half the depth of each deeper workload, unless that is a
# workload of its own: how much the device loses when it is left fewer
# commands than the initiator keeps, as a target whose commands also
# spend time away from the device leaves it (compare_report.py: "Where a
# share falls short"; it derives the same names).
half_depth_points() {
	local w name rw bs depth half
	for w in "${WORKLOADS[@]}"; do
		read -r name rw bs depth <<<"$w"
		[ "$depth" -gt 1 ] || continue
		half=${name%-qd*}-qd$((depth / 2))
		printf '%s\n' "${WORKLOADS[@]}" | grep -q "^$half " && continue
		fio_point "$half" "$rw" "$bs" $((depth / 2))
	done
}

# limits_round N: fio, tcqd on null (and the iSCSI round trip there),
# tcqd on the file with the second client (and with LIMITS_CUT_AB the
# 128K reads with --cut-through off), the TCP round trip, iperf3.
limits_round() {
	local w
	ROUND=$1
	echo "== round $ROUND: local fio on $LIMITS_IMG (writes: $LIMITS_WIMG)"
	for w in "${WORKLOADS[@]}"; do
		# shellcheck disable=SC2086
		fio_point $w
	done
	half_depth_points
	echo "== round $ROUND: tcqd on --backend null (nothing stored)"
	start_tcqd --export "$work/null.img" --backend null --size 1G
	for w in "${WORKLOADS[@]}" "rtt512-qd1 randread 512 1"; do
		# shellcheck disable=SC2086
		point tcqd-null "$tcqd_pid" "$tcqd_url" native $w 1 1 --span 1g
	done
	stop_tcqd
	echo "== round $ROUND: tcqd on the file"
	SWEEP_AFTER_READS=second_client file_sweep tcqd native \
		tcqd_start_file stop_tcqd
	if [ -n "${LIMITS_CUT_AB:-}" ]; then
		echo "== round $ROUND: tcqd on the file, --cut-through off"
		start_tcqd --export "$LIMITS_IMG" --cut-through off
		for w in "${CUT_AB[@]}"; do
			# shellcheck disable=SC2086
			point tcqd-cutoff "$tcqd_pid" "$tcqd_url" native $w
		done
		stop_tcqd
	fi
	echo "== round $ROUND: loopback"
	pingpong_point
	iperf_point
}

# Machine, versions and the run, for compare_report.py.
limits_env() {
	pkgver() { dpkg-query -W -f='${Version}' "$1" 2>/dev/null || echo '?'; }
	local rev
	CP_STARTED=${CP_STARTED:-?}
	CP_LOAD1=$(cut -d' ' -f1-3 /proc/loadavg)
	CP_NPROC=$(nproc)
	CP_MEM=$(awk '/MemTotal/ { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo)
	CP_KERNEL=$(uname -r)
	CP_CPU=$(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //')
	CP_FS=$LIMITS_FS CP_IMG=$LIMITS_IMG CP_WIMG=$LIMITS_WIMG
	CP_SIZE=$LIMITS_SIZE
	rev=$(git -C "$top" rev-parse --short HEAD 2>/dev/null || echo '?')
	git -C "$top" diff --quiet HEAD -- 2>/dev/null ||
		rev="$rev + uncommitted changes"
	CP_TCQ="$("$tcqd" --version 2>&1 | sed -n 1p) ($rev)"
	CP_TGT=$(pkgver tgt) CP_ISTGT=$(pkgver istgt)
	CP_LIBISCSI=$(pkgver libiscsi7) CP_QEMU=$(pkgver qemu-utils)
	CP_FIO=$(fio --version)
	CP_IPERF=$(iperf3 --version | sed -n 1p)
	CP_CLK=$(getconf CLK_TCK) CP_CMDS=$cmds CP_RES=$res
	CP_RT=$RT CP_RAMP=$RAMP
	export CP_STARTED CP_LOAD1 CP_NPROC CP_MEM CP_KERNEL CP_CPU CP_FS CP_IMG \
		CP_WIMG CP_SIZE CP_TCQ CP_TGT CP_ISTGT CP_LIBISCSI CP_QEMU CP_FIO \
		CP_IPERF CP_CLK CP_CMDS CP_RES CP_RT CP_RAMP
}
