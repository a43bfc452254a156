# shellcheck shell=bash
# shellcheck disable=SC2034  # TGT_URL, ISTGT_URL, ...: for the scripts that source this
# Peer targets for side-by-side measurements: tgt (tgtd) and istgt from
# Debian, started on 127.0.0.1 with a LUN over a given file, and stopped
# by PID. Source this file; every function prints errors to stderr.
#
#   peers_install                       apt-get the peers if missing
#   peers_free_port                     prints a free TCP port on 127.0.0.1
#   peers_start_tgt FILE rdwr|aio       sets TGT_PID, TGT_URL
#   peers_start_istgt FILE              sets ISTGT_PID, ISTGT_URL
#   peers_stop                          stops whatever was started
#   peers_need CMD:PKG...               apt-get the packages of missing CMDs
#   peers_cpu PID                       prints "TICKS THREADS": utime+stime
#                                       of all its threads, in clock ticks
#
# TGT_BSOFLAGS (default "direct": O_DIRECT like tcqd, so both read the
# disk and not the page cache; empty for buffered) is tgt's --bsoflags
# for the rdwr store (aio always opens O_DIRECT and refuses the flag).
# istgt has no such switch: it always goes through the page cache.
# PEERS_WRAP (words) prefixes tgtd and istgt, e.g. a valgrind command;
# PEERS_KILL_WAIT is how long peers_kill waits before SIGKILL (seconds).

TGT_BSOFLAGS=${TGT_BSOFLAGS-direct}
PEERS_DIR=${PEERS_DIR:-$(mktemp -d "${TMPDIR:-/tmp}/tcq-peers.XXXXXX")}
TGT_PID='' ISTGT_PID='' TGT_URL='' ISTGT_URL='' TGT_CTL=''

peers_install() {
	local missing=()
	command -v tgtd >/dev/null || missing+=(tgt)
	command -v istgt >/dev/null || missing+=(istgt)
	[ ${#missing[@]} -eq 0 ] && return 0
	apt-get install -y -qq "${missing[@]}" >/dev/null ||
		{ apt-get update -qq && apt-get install -y -qq "${missing[@]}"; }
}

peers_need() {
	local want pkgs=()
	for want in "$@"; do
		command -v "${want%%:*}" >/dev/null || pkgs+=("${want#*:}")
	done
	[ ${#pkgs[@]} -eq 0 ] && return 0
	export DEBIAN_FRONTEND=noninteractive
	apt-get install -y -qq --no-install-recommends "${pkgs[@]}" >/dev/null ||
		{ apt-get update -qq &&
		  apt-get install -y -qq --no-install-recommends "${pkgs[@]}"; }
}

# The process's stat sums its live threads and the ones that ended;
# fields after the ")" of comm: 12 utime, 13 stime, 18 num_threads.
peers_cpu() {
	local st
	st=$(cat "/proc/$1/stat" 2>/dev/null) || { echo "0 0"; return 1; }
	st=${st##*) }
	awk '{ print $12 + $13, $18 }' <<<"$st"
}

peers_free_port() {
	python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}

# Waits until something listens on 127.0.0.1:$1 (up to 10 s).
peers_wait_port() {
	local i
	for ((i = 0; i < 100; i++)); do
		(exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0
		sleep 0.1
	done
	echo "peers: nothing listens on 127.0.0.1:$1" >&2
	return 1
}

peers_start_tgt() {
	local file=$1 bs=${2:-rdwr} port ctl iqn=iqn.2026-11.org.tcq:tgt flags=()
	[ "$bs" = rdwr ] && [ -n "$TGT_BSOFLAGS" ] &&
		flags=(--bsoflags "$TGT_BSOFLAGS")
	port=$(peers_free_port)
	ctl=$((1000 + RANDOM % 30000))
	TGT_CTL=$ctl
	${PEERS_WRAP:-} tgtd -f -C "$ctl" --iscsi "portal=127.0.0.1:$port" \
		>"$PEERS_DIR/tgtd.log" 2>&1 &
	TGT_PID=$!
	peers_wait_port "$port" || return 1
	# shellcheck disable=SC2015  # any step failing is the one error
	tgtadm -C "$ctl" --lld iscsi --op new --mode target --tid 1 -T "$iqn" &&
	tgtadm -C "$ctl" --lld iscsi --op new --mode logicalunit --tid 1 \
		--lun 1 --bstype "$bs" -b "$file" \
		"${flags[@]}" &&
	tgtadm -C "$ctl" --lld iscsi --op bind --mode target --tid 1 -I ALL ||
		{ echo "peers: tgtadm failed (see $PEERS_DIR/tgtd.log)" >&2; return 1; }
	TGT_URL=iscsi://127.0.0.1:$port/$iqn/1
}

peers_start_istgt() {
	local file=$1 port uc size base=iqn.2026-11.org.tcq
	port=$(peers_free_port)
	uc=$(peers_free_port)
	size=$(( $(stat -c %s "$file") / 1048576 ))MB
	: >"$PEERS_DIR/auth.conf"
	cat >"$PEERS_DIR/istgt.conf" <<CONF
[Global]
  NodeBase "$base"
  PidFile $PEERS_DIR/istgt.pid
  AuthFile $PEERS_DIR/auth.conf
  MediaDirectory $PEERS_DIR
  Timeout 30
  NopInInterval 20
  DiscoveryAuthMethod None
  MaxSessions 64
  MaxConnections 1
  MaxR2T 32
  MaxOutstandingR2T 16
  DefaultTime2Wait 2
  DefaultTime2Retain 60
  FirstBurstLength 262144
  MaxBurstLength 1048576
  MaxRecvDataSegmentLength 262144
  InitialR2T Yes
  ImmediateData Yes
  DataPDUInOrder Yes
  DataSequenceInOrder Yes
  ErrorRecoveryLevel 0
[UnitControl]
  AuthMethod None
  Portal UC1 127.0.0.1:$uc
  Netmask 127.0.0.1
[PortalGroup1]
  Portal DA1 127.0.0.1:$port
[InitiatorGroup1]
  InitiatorName "ALL"
  Netmask 127.0.0.1
[LogicalUnit1]
  TargetName istgt
  Mapping PortalGroup1 InitiatorGroup1
  AuthMethod None
  UseDigest Auto
  UnitType Disk
  QueueDepth 64
  LUN0 Storage $file $size
CONF
	${PEERS_WRAP:-} istgt -c "$PEERS_DIR/istgt.conf" -p "$PEERS_DIR/istgt.pid" -D \
		>"$PEERS_DIR/istgt.log" 2>&1 &
	ISTGT_PID=$!
	peers_wait_port "$port" || return 1
	ISTGT_URL=iscsi://127.0.0.1:$port/$base:istgt/0
}

# Ends a peer by PID: SIGTERM, then SIGKILL after PEERS_KILL_WAIT s (5).
peers_kill() {
	local p=$1 i
	kill "$p" 2>/dev/null || { wait "$p" 2>/dev/null; return 0; }
	for ((i = 0; i < ${PEERS_KILL_WAIT:-5} * 10; i++)); do
		kill -0 "$p" 2>/dev/null || break
		sleep 0.1
	done
	kill -9 "$p" 2>/dev/null || true
	wait "$p" 2>/dev/null || true
	return 0
}

peers_stop() {
	# tgtd leaves on SIGTERM only once it has no targets, and deleting
	# the system (after which it exits by itself) needs the target gone.
	if [ -n "$TGT_PID" ]; then
		tgtadm -C "$TGT_CTL" --op delete --mode target --tid 1 --force \
			>/dev/null 2>&1 || true
		tgtadm -C "$TGT_CTL" --op delete --mode system \
			>/dev/null 2>&1 || true
	fi
	[ -n "$TGT_PID" ] && peers_kill "$TGT_PID"
	[ -n "$ISTGT_PID" ] && peers_kill "$ISTGT_PID"
	TGT_PID='' ISTGT_PID=''
	return 0	# callers run under set -e
}
