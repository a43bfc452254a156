# shellcheck shell=bash
# A throw-away Ceph cluster for the rbd tests: one monitor, one manager and
# one BlueStore OSD on a sparse file, all on 127.0.0.1, all state in one
# directory. Source it, then:
#
#   ceph_start DIR      starts the cluster, creates pool "rbd", exports
#                       CEPH_CONF (clients need it) and CEPH_DIR
#   ceph_stop           kills the daemons this library started (by PID)
#   ceph_available      0 when the Ceph daemons and rbd CLI are installed
#   ceph_need           skips the script (lib.sh) unless tcqd has librbd
#                       and Ceph is installed
#
# Facts this relies on (Debian's Ceph 16.2): loopback needs public addr,
# cluster addr, public network 127.0.0.1/32 and an explicit monitor
# address; a size-1 pool needs "mon warn on pool no redundancy = false";
# "bluestore block create" makes the OSD's block device a plain sparse
# file (no LVM, no udev). Authentication is off: nothing but loopback can
# reach the daemons, and it saves keyrings for every client.
#
# Also runnable by hand: `bash ceph.sh start DIR` / `bash ceph.sh stop DIR`.

CEPH_DIR=
CEPH_PIDS=()

ceph_available() {
	local t
	for t in ceph-mon ceph-mgr ceph-osd ceph rbd monmaptool ceph-authtool; do
		command -v "$t" >/dev/null 2>&1 || return 1
	done
}

ceph_need() {
	local probe
	probe=$(CEPH_CONF=/nonexistent timeout 10 "$TCQD" --backend rbd:image=probe \
		--listen 127.0.0.1:0 2>&1 </dev/null)
	grep -q 'built without librbd' <<<"$probe" &&
		skip "tcqd was built without librbd (install librbd-dev librados-dev, re-run configure)"
	ceph_available ||
		skip "Ceph is not installed (scripts/install-deps installs ceph-mon ceph-osd ceph-mgr ceph-common)"
}

# A TCP port nobody listens on (the monitor's); the OSD and manager bind
# whatever the kernel gives them within their default range.
ceph_free_port() {
	local p
	for ((p = 20000 + RANDOM % 20000; ; p++)); do
		(exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null || { echo "$p"; return; }
	done
}

ceph_log() { printf 'ceph: %s\n' "$*" >&2; }

# ceph_pid NAME: pid of a daemon from its pid file.
ceph_pid() { cat "$CEPH_DIR/run/$1.pid" 2>/dev/null; }

ceph_start() {
	local dir=$1 port fsid osd_uuid i t0=$SECONDS
	CEPH_DIR=$(mkdir -p "$dir" && cd "$dir" && pwd) || return 1
	mkdir -p "$CEPH_DIR"/{run,log,mon,mgr,osd}
	port=$(ceph_free_port)
	fsid=$(cat /proc/sys/kernel/random/uuid)
	osd_uuid=$(cat /proc/sys/kernel/random/uuid)
	cat >"$CEPH_DIR/ceph.conf" <<-EOF
	[global]
	fsid = $fsid
	mon host = [v2:127.0.0.1:$port]
	mon initial members = a
	public addr = 127.0.0.1
	cluster addr = 127.0.0.1
	public network = 127.0.0.1/32
	ms bind msgr1 = false
	auth cluster required = none
	auth service required = none
	auth client required = none
	auth supported = none
	run dir = $CEPH_DIR/run
	pid file = $CEPH_DIR/run/\$name.pid
	admin socket = $CEPH_DIR/run/\$name.\$pid.asok
	log file = $CEPH_DIR/log/\$name.log
	keyring = $CEPH_DIR/keyring
	osd pool default size = 1
	osd pool default min size = 1
	osd pool default pg autoscale mode = off
	osd crush chooseleaf type = 0
	mon warn on pool no redundancy = false
	mon allow pool delete = true
	mon data avail warn = 2
	mon data avail crit = 1
	mon warn on insecure global id reclaim = false
	mon warn on insecure global id reclaim allowed = false
	# a dead client's watch (tcqd killed) must not stall the next one long
	osd client watch timeout = 10
	[mon]
	mon data = $CEPH_DIR/mon/\$cluster-\$id
	mon cluster log file = $CEPH_DIR/log/cluster.log
	[mgr]
	mgr data = $CEPH_DIR/mgr/\$cluster-\$id
	[osd]
	osd data = $CEPH_DIR/osd/\$cluster-\$id
	osd objectstore = bluestore
	bluestore block create = true
	bluestore block size = 4294967296
	bluestore fsck on mount = false
	osd memory target = 1073741824
	bluestore cache autotune = false
	bluestore cache size = 268435456
	osd op num shards = 2
	osd op num threads per shard = 2
	EOF
	export CEPH_CONF=$CEPH_DIR/ceph.conf
	(
		set -e
		cd "$CEPH_DIR"
		ceph-authtool --create-keyring keyring --gen-key -n mon. \
			--cap mon 'allow *' >/dev/null
		ceph-authtool keyring --gen-key -n client.admin \
			--cap mon 'allow *' --cap osd 'allow *' \
			--cap mgr 'allow *' >/dev/null
		monmaptool --create --fsid "$fsid" \
			--addv a "[v2:127.0.0.1:$port]" monmap >/dev/null
		ceph-mon --mkfs -i a --monmap monmap --keyring keyring
	) >"$CEPH_DIR/log/setup.log" 2>&1 ||
		{ ceph_log "monitor mkfs failed"; cat "$CEPH_DIR/log/setup.log" >&2; return 1; }
	ceph-mon -i a || { ceph_log "ceph-mon did not start"; return 1; }
	CEPH_PIDS+=("$(ceph_pid mon.a)")
	ceph-mgr -i x || { ceph_log "ceph-mgr did not start"; return 1; }
	CEPH_PIDS+=("$(ceph_pid mgr.x)")
	timeout 60 ceph osd new "$osd_uuid" 0 >/dev/null ||
		{ ceph_log "ceph osd new failed"; return 1; }
	mkdir -p "$CEPH_DIR/osd/ceph-0"
	ceph-osd -i 0 --mkfs --osd-uuid "$osd_uuid" \
		>>"$CEPH_DIR/log/setup.log" 2>&1 ||
		{ ceph_log "ceph-osd --mkfs failed"; tail -20 "$CEPH_DIR/log/osd.0.log" >&2; return 1; }
	ceph-osd -i 0 >>"$CEPH_DIR/log/setup.log" 2>&1 ||
		{ ceph_log "ceph-osd did not start"; return 1; }
	for ((i = 0; i < 50; i++)); do
		[ -n "$(ceph_pid osd.0)" ] && break
		sleep 0.1
	done
	CEPH_PIDS+=("$(ceph_pid osd.0)")
	timeout 60 ceph osd pool create rbd 8 8 >/dev/null 2>&1 ||
		{ ceph_log "pool create failed"; return 1; }
	timeout 60 rbd pool init rbd ||
		{ ceph_log "rbd pool init failed"; return 1; }
	# Ready when every placement group is active+clean.
	for ((i = 0; i < 600; i++)); do
		if timeout 10 ceph pg stat 2>/dev/null |
			grep -Eq '^([0-9]+) pgs: \1 active\+clean;'; then
			ceph_log "cluster up in $((SECONDS - t0)) s ($CEPH_DIR)"
			return 0
		fi
		sleep 0.2
	done
	ceph_log "placement groups not active+clean within 120 s"
	timeout 10 ceph -s >&2
	return 1
}

ceph_stop() {
	local p i
	[ -n "$CEPH_DIR" ] || return 0
	# Pid files, too: a daemon that started after a failed step.
	for p in "${CEPH_PIDS[@]}" $(cat "$CEPH_DIR"/run/*.pid 2>/dev/null); do
		[ -n "$p" ] && kill -TERM "$p" 2>/dev/null &&
			kill -CONT "$p" 2>/dev/null	# a test may have frozen it
	done
	for ((i = 0; i < 50; i++)); do
		local alive=0
		for p in "${CEPH_PIDS[@]}"; do
			[ -n "$p" ] && kill -0 "$p" 2>/dev/null && alive=1
		done
		[ "$alive" -eq 0 ] && break
		sleep 0.1
	done
	for p in "${CEPH_PIDS[@]}"; do
		[ -n "$p" ] && kill -KILL "$p" 2>/dev/null
	done
	CEPH_PIDS=()
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
	case ${1:-} in
	start) ceph_start "${2:?usage: ceph.sh start DIR}" && echo "export CEPH_CONF=$CEPH_CONF" ;;
	stop)
		CEPH_DIR=${2:?usage: ceph.sh stop DIR}
		ceph_stop
		;;
	*) echo "usage: ceph.sh start|stop DIR" >&2; exit 2 ;;
	esac
fi
