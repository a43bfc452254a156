#!/bin/bash
# Wildcard and IPv6 portals: tcqd listening on 0.0.0.0:0, [::]:0 and
# [::1]:0, and on 0.0.0.0 and [::] at once. A login and I/O go through
# 127.0.0.1 and ::1, and SendTargets answers with the address the
# connection reached (RFC 7143 13.8: TargetAddress is where the target
# can be reached), never 0.0.0.0 or ::, and with no address the
# initiator cannot reach. The ::1 checks skip only when the kernel has no
# IPv6 on lo (and under scripts/check and CI that skip fails too).
# shellcheck source=tests/integration/lib.sh
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

need_tool iscsi-inq
SCSICMD=${SCSICMD:-$top_builddir/tests/integration/scsicmd}
SENDTARGETS=${SENDTARGETS:-$top_builddir/tests/integration/sendtargets}
need_built "$SCSICMD" "$SENDTARGETS"
IQN=iqn.2026-11.org.tcq:portals

# ::1 on lo: /proc/net/if_inet6 has it (address in 32 hex digits).
have_ipv6_lo() {
	grep -Eq '^0{31}1 .* lo$' /proc/net/if_inet6 2>/dev/null
}
need_ipv6() {
	have_ipv6_lo || skip "the kernel has no IPv6 address ::1 on lo"
}

# listen ADDR...: tcqd on each portal; PORT[HOST] is the port it got
# (HOST without brackets: 0.0.0.0, ::, ::1).
declare -A PORT=()
host_of() { local h=${1%:*}; h=${h#[}; printf '%s' "${h%]}"; }
listen() {
	local a args=() line
	for a in "$@"; do args+=(--listen "$a"); done
	start_tcqd --iqn "$IQN" "${args[@]}"
	while read -r line; do
		a=${line##*listening on }
		PORT[$(host_of "$a")]=${a##*:}
	done < <(grep 'listening on ' "$TCQD_LOG")
	for a in "$@"; do
		[ -n "${PORT[$(host_of "$a")]:-}" ] || fail "tcqd did not say it listens on $a"
	done
}

# io HOST PORT: a login, a WRITE and its READ back through HOST:PORT.
io() {
	run "$SCSICMD" "iscsi://$1:$2/$IQN/0" write 16 8 c4 fua read 16 8 c4 ||
		fail "login or I/O through $1:$2 failed"
	[ "$OUT" = $'GOOD\nGOOD' ] || fail "I/O through $1:$2: $OUT"
	ok "login, WRITE and READ back through $1:$2"
}

# addresses HOST PORT: the TargetAddresses SendTargets gives a discovery
# session to HOST:PORT for our target, as sent, one per line, into ADDRS.
addresses() {
	local h=${1#[}
	run "$SENDTARGETS" "${h%]}" "$2" "$INITIATOR" ||
		fail "SendTargets through $1:$2 failed"
	ADDRS=$(awk -v t="TargetName=$IQN" '/^TargetName=/ { on = $0 == t; next }
		on && sub(/^TargetAddress=/, "") { print }' <<<"$OUT")
	[ -n "$ADDRS" ] || fail "SendTargets through $1:$2 lists no address of $IQN"
}

# reached HOST PORT: SendTargets through HOST:PORT names HOST:PORT itself,
# not a wildcard.
reached() {
	addresses "$1" "$2"
	grep -qxF "$1:$2,1" <<<"$ADDRS" ||
		fail "TargetAddress is not $1:$2,1: $(echo $ADDRS)"
	grep -Eq '^(0\.0\.0\.0|\[::\]):' <<<"$ADDRS" &&
		fail "a wildcard address in SendTargets: $(echo $ADDRS)"
	ok "SendTargets through $1:$2 answers $1:$2,1"
}

# every_address_reachable HOST PORT: each TargetAddress SendTargets gives
# through HOST:PORT takes a login.
every_address_reachable() {
	local a host port
	addresses "$1" "$2"
	for a in $ADDRS; do
		a=${a%,*}
		host=${a%:*} port=${a##*:}
		run iscsi-inq -i "$INITIATOR" "iscsi://$host:$port/$IQN/0" ||
			fail "TargetAddress $a (from $1:$2) takes no login"
		ok "TargetAddress $a takes a login"
	done
}

fixture_any4() { listen 0.0.0.0:0; }
any4_login_and_io_through_127_0_0_1() { io 127.0.0.1 "${PORT[0.0.0.0]}"; }
any4_sendtargets_names_address_reached() { reached 127.0.0.1 "${PORT[0.0.0.0]}"; }

fixture_any6() { need_ipv6; listen '[::]:0'; }
any6_login_and_io_through_ipv6_loopback() { io '[::1]' "${PORT[::]}"; }
any6_sendtargets_names_address_reached() { reached '[::1]' "${PORT[::]}"; }

fixture_lo6() { need_ipv6; listen '[::1]:0'; }
lo6_login_and_io_through_ipv6_loopback() { io '[::1]' "${PORT[::1]}"; }
lo6_sendtargets_names_its_address() { reached '[::1]' "${PORT[::1]}"; }

# Both wildcards at once ([::] is IPv6 only): each family reaches its own.
fixture_dual() { need_ipv6; listen 0.0.0.0:0 '[::]:0'; }
dual_sendtargets_through_ipv4_gives_reachable_addresses() {
	reached 127.0.0.1 "${PORT[0.0.0.0]}"
	every_address_reachable 127.0.0.1 "${PORT[0.0.0.0]}"
}
dual_sendtargets_through_ipv6_gives_reachable_addresses() {
	reached '[::1]' "${PORT[::]}"
	every_address_reachable '[::1]' "${PORT[::]}"
}
dual_io_through_both_families() {
	io 127.0.0.1 "${PORT[0.0.0.0]}"
	io '[::1]' "${PORT[::]}"
}

CHECKS=(
	@any4
	any4_login_and_io_through_127_0_0_1
	any4_sendtargets_names_address_reached
	@any6
	any6_login_and_io_through_ipv6_loopback
	any6_sendtargets_names_address_reached
	@lo6
	lo6_login_and_io_through_ipv6_loopback
	lo6_sendtargets_names_its_address
	@dual
	dual_io_through_both_families
	dual_sendtargets_through_ipv4_gives_reachable_addresses
	dual_sendtargets_through_ipv6_gives_reachable_addresses
)
run_checks "$@"
