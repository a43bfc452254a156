#!/bin/bash
# The published CVEs of other iSCSI targets (LIO, tgt, IET, SCST, FreeBSD
# CTL) whose cause an initiator can send, one check each, named after the
# CVE (docs/security.md has the table and the sources). Each sends the
# input to tcqd and checks the answer RFC 7143 or SPC-4/SBC-3 gives:
# login and CHAP input through the raw driver cvepdu, SCSI commands and
# parameter lists through rawcdb and scsicmd. Each group ends with tcqd
# stopped by SIGTERM and exiting 0 (under the sanitizer build a leak or
# an error report fails that), after checking that every connection's
# file descriptor was given back.
# shellcheck source=tests/integration/lib.sh
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

CVEPDU=${CVEPDU:-$top_builddir/tests/integration/cvepdu}
RAWCDB=${RAWCDB:-$top_builddir/tests/integration/rawcdb}
SCSICMD=${SCSICMD:-$top_builddir/tests/integration/scsicmd}
need_built "$CVEPDU" "$RAWCDB" "$SCSICMD"

IQN=iqn.2026-12.org.tcq:cve
CHAP_USER=cveuser
CHAP_SECRET=cve-secret-0123
BAD_OPCODE="CHECK CONDITION key=0x5 asc=0x20 ascq=0x00"
BAD_CDB_FIELD="CHECK CONDITION key=0x5 asc=0x24 ascq=0x00"
BAD_PARAM_FIELD="CHECK CONDITION key=0x5 asc=0x26 ascq=0x00"
NOT_REACHABLE="CHECK CONDITION key=0xa asc=0x0d ascq=0x02"

cvepdu_case() { pdu_case "$CVEPDU" "$1"; }
cvepdu_chap_case() { pdu_case "$CVEPDU" -u "$CHAP_USER" -s "$CHAP_SECRET" "$1"; }

# rawcdb_is URL WANT CDB...: the last CDB's outcome is WANT.
rawcdb_is() {
	local url=$1 want=$2
	shift 2
	run "$RAWCDB" "$url" "$@" || fail "rawcdb: $OUT"
	[ "$(tail -n 1 <<<"$OUT")" = "$want" ] ||
		fail "$* answered '$(tail -n 1 <<<"$OUT")', not '$want'"
}

# A group's baseline of the sockets tcqd holds (its portal and control
# socket), and the check that every connection of the group's checks
# gave its socket back (backend queues open descriptors of their own on
# a reactor's first I/O: those are not counted).
fds_baseline() { FDS0=$(tcqd_fds socket:) && export FDS0; }
fds_given_back() {
	wait_until 50 eval '[ "$(tcqd_fds socket:)" -le "$FDS0" ]' ||
		fail "tcqd holds $(tcqd_fds socket:) sockets, $FDS0 before the checks"
	ok "tcqd holds no more sockets than before the checks ($FDS0)"
}

for g in login chap scsi xcopy ram isns; do
	eval "${g}_fds_given_back() { fds_given_back; }"
done

# ---- login, keys and the session (no CHAP) --------------------------------
fixture_login() {
	start_tcqd --iqn "$IQN"
	fds_baseline
}

# ---- CHAP -----------------------------------------------------------------
fixture_chap() {
	start_tcqd --iqn "$IQN" --chap "$CHAP_USER:$CHAP_SECRET"
	fds_baseline
}

# ---- SCSI commands and parameter lists ------------------------------------
fixture_scsi() {
	start_tcqd --iqn "$IQN"
	fds_baseline
}

# CVE-2024-42416 (FreeBSD CTL, FreeBSD-SA-24:11.ctl): REPORT SUPPORTED
# OPERATION CODES with REPORTING OPTIONS 010b used the requested service
# action as a table index unchecked. SPC-4 6.35: an opcode with service
# actions and one it does not support gets SUPPORT 001b; one it does
# (READ CAPACITY(16), 9Eh/10h) 011b; an opcode without service actions
# is an invalid field in the CDB.
cve_2024_42416_rsoc_requested_service_action_checked() {
	local sup
	run "$RAWCDB" "$TCQD_URL" a30c029effff000001000000:256 \
		a30c029e0010000001000000:256 a30c02280000000001000000:256 ||
		fail "rawcdb: $OUT"
	mapfile -t A <<<"$OUT"
	[[ ${A[0]} == "GOOD "* ]] || fail "9Eh service action FFFFh: ${A[0]}"
	sup=$((0x${A[0]:7:2} & 7))
	[ "$sup" = 1 ] || fail "9Eh/FFFFh: SUPPORT $sup, not 001b (not supported)"
	ok "9Eh with service action FFFFh: GOOD, SUPPORT 001b"
	[[ ${A[1]} == "GOOD "* ]] || fail "9Eh service action 10h: ${A[1]}"
	sup=$((0x${A[1]:7:2} & 7))
	[ "$sup" = 3 ] || fail "9Eh/10h: SUPPORT $sup, not 011b"
	ok "9Eh/10h (READ CAPACITY(16)): SUPPORT 011b"
	[ "${A[2]}" = "$BAD_CDB_FIELD" ] ||
		fail "28h (no service actions) with options 010b: ${A[2]}"
	ok "28h with reporting options 010b: ILLEGAL REQUEST, INVALID FIELD IN CDB"
}

# CVE-2024-8178 (FreeBSD CTL, FreeBSD-SA-24:11.ctl): READ BUFFER and
# WRITE BUFFER returned uninitialised memory and trusted the buffer
# offset. tcqd implements neither on a disk: INVALID COMMAND OPERATION
# CODE (SPC-4 4.5.6, 20h/00h), also for an offset of FFFFFFh.
cve_2024_8178_read_buffer_offset_refused() {
	rawcdb_is "$TCQD_URL" "$BAD_OPCODE" 3c0200ffffff00ffff00:65535
	ok "READ BUFFER, offset FFFFFFh: ILLEGAL REQUEST, INVALID COMMAND OPERATION CODE"
}

# CVE-2024-45063 (FreeBSD CTL, FreeBSD-SA-24:11.ctl): WRITE BUFFER's
# completion used freed memory. Refused the same way, its 512 bytes of
# Data-Out taken and dropped: the session's next command runs.
cve_2024_45063_write_buffer_refused() {
	rawcdb_is "$TCQD_URL" "GOOD -" \
		"3b020000000000020000=$(printf '%01024d' 5)" 000000000000
	[ "$(head -n 1 <<<"$OUT")" = "$BAD_OPCODE" ] ||
		fail "WRITE BUFFER answered '$(head -n 1 <<<"$OUT")'"
	ok "WRITE BUFFER with 512 bytes: INVALID COMMAND OPERATION CODE, then TEST UNIT READY is GOOD"
}

# CVE-2022-21546 (LIO): WRITE SAME with NDOB=1 (no data-out buffer)
# dereferenced the buffer it does not have. SBC-4 5.50: NDOB=1 writes
# zeros and takes no Data-Out; the blocks then read as zeros.
cve_2022_21546_write_same_ndob_writes_zeros() {
	run "$SCSICMD" "$TCQD_URL" write 100 8 a5 fua read 100 8 a5 ||
		fail "scsicmd: $OUT"
	rawcdb_is "$TCQD_URL" "GOOD -" 93010000000000000064000000080000
	ok "WRITE SAME(16), NDOB=1, 8 blocks: GOOD"
	run "$SCSICMD" "$TCQD_URL" read 100 8 00 || fail "scsicmd: $OUT"
	[ "$OUT" = GOOD ] || fail "the blocks do not read as zeros: $OUT"
	ok "the 8 blocks read back as zeros"
}

# pr_out SA PARAMETERS-HEX: PERSISTENT RESERVE OUT (scope 0, type 0).
pr_out() {
	local len=$((${#2} / 2))
	printf '5f%02x000000%08x00=%s' "$1" "$len" "$2"
}

# CVE-2026-72084 (LIO): an iSCSI TransportID of PR OUT REGISTER with
# SPEC_I_PT was scanned as a C string past the parameter list when its
# name had no NUL. SPC-4 7.6.4.6: the name is NUL-terminated; without
# one the list is invalid (INVALID FIELD IN PARAMETER LIST, 26h/00h) and
# nothing is registered (READ KEYS lists no key).
cve_2026_72084_pr_transport_id_without_nul_refused() {
	local tid list
	tid="05000040$(printf '61%.0s' {1..64})"	# iSCSI, 64 x 'a', no NUL
	list=$(printf '%016x%016x%08x%02x%02x%04x%08x%s' 0 1 0 8 0 0 \
		$((${#tid} / 2)) "$tid")	# RK 0, SARK 1, SPEC_I_PT
	rawcdb_is "$TCQD_URL" "$BAD_PARAM_FIELD" "$(pr_out 0 "$list")"
	ok "REGISTER, SPEC_I_PT, a TransportID without NUL: INVALID FIELD IN PARAMETER LIST"
	run "$RAWCDB" "$TCQD_URL" 5e000000000000000800:8 || fail "rawcdb: $OUT"
	[[ $OUT == "GOOD "????????00000000 ]] ||
		fail "READ KEYS: $OUT (want ADDITIONAL LENGTH 0)"
	ok "READ KEYS: no key registered"
}

# CVE-2025-38399 (LIO): REGISTER with SPEC_I_PT naming an initiator port
# the target had never seen took an error path that dereferenced NULL.
# SPC-4 5.13.7: SPEC_I_PT registers the I_T nexuses its TransportIDs name
# as well as the sender's; a well-formed one (format 00b, the name, NUL
# padded to a multiple of 4) of an initiator never logged in is GOOD, and
# READ KEYS then lists both keys. The I_T nexus of a fresh session.
cve_2025_38399_pr_spec_i_pt_unknown_initiator_registered() {
	local name tid list
	export INITIATOR=iqn.2026-12.org.tcq:cve-pr
	name=$(printf '%s' iqn.2026-12.org.tcq:never-seen | od -An -tx1 | tr -d ' \n')
	name+=$(printf '00%.0s' $(seq $((4 - ${#name} / 2 % 4))))
	tid=$(printf '0500%04x%s' $((${#name} / 2)) "$name")
	list=$(printf '%016x%016x%08x%02x%02x%04x%08x%s' 0 2 0 8 0 0 \
		$((${#tid} / 2)) "$tid")	# RK 0, SARK 2, SPEC_I_PT
	rawcdb_is "$TCQD_URL" "GOOD -" "$(pr_out 0 "$list")"
	ok "REGISTER, SPEC_I_PT, an initiator never seen: GOOD"
	run "$RAWCDB" "$TCQD_URL" 5e000000000000002000:32 || fail "rawcdb: $OUT"
	[[ $OUT == "GOOD "????????00000010"$(printf '%016x%016x' 2 2)" ]] ||
		fail "READ KEYS: $OUT (want the key 2 twice)"
	ok "READ KEYS: key 2 for both I_T nexuses"
}

# ---- two targets, one initiator's LUN map (XCOPY) -------------------------
XI=iqn.2026-12.org.tcq:cve-xcopy
T2=iqn.2026-12.org.tcq:cve-other
fixture_xcopy() {
	local conf=$TEST_TMP/xcopy.conf
	tcqd_conf "$conf" "$IQN" 8M
	cat >>"$conf" <<EOF
[lun $IQN 1]
path = $TEST_TMP/lun1.img
size = 8M
block_size = 512
create = yes
[target $T2]
[lun $T2 0]
path = $TEST_TMP/other.img
size = 8M
block_size = 512
create = yes
[initiator $IQN $XI]
luns = 0
EOF
	start_tcqd -c "$conf"
	fds_baseline
	U0=iscsi://$TCQD_PORTAL/$IQN/0
	U1=iscsi://$TCQD_PORTAL/$IQN/1
	UO=iscsi://$TCQD_PORTAL/$T2/0
	# the hidden LUN and the other target's hold 0x5a, LUN 0 0x11
	run "$SCSICMD" "$U1" write 0 16 5a fua || fail "scsicmd: $OUT"
	run "$SCSICMD" "$UO" write 0 16 5a fua || fail "scsicmd: $OUT"
	run "$SCSICMD" "$U0" write 0 16 11 fua || fail "scsicmd: $OUT"
	NAA0=$(naa_of "$U0") && NAA1=$(naa_of "$U1") && NAAO=$(naa_of "$UO") &&
		[ -n "$NAA0" ] && [ -n "$NAA1" ] && [ -n "$NAAO" ] ||
		fail "no NAA designator in VPD page 83h"
	export U0 U1 UO NAA0 NAA1 NAAO
}

# naa_of URL: the LUN's NAA designator (VPD 83h: binary, LU, NAA, 16 bytes).
naa_of() {
	tc "$RAWCDB" "$1" 120183010000:256 |
		grep -o '01030010[0-9a-f]\{32\}' | head -n 1 | cut -c 9-
}

# xcopy_cdb SRC-NAA DST-NAA: EXTENDED COPY (LID1) of 8 blocks from LBA 0
# of the one to LBA 8 of the other (SPC-4 6.4: a 16-byte header, two
# identification CSCD descriptors E4h of 32 bytes with a disk block
# length of 512, one block-to-block segment descriptor 02h of 28 bytes;
# LIST ID USAGE 11b), as rawcdb's CDB=DATA.
xcopy_cdb() {
	local list seg
	cscd() { printf 'e400000001030010%s0000000000000200' "$1"; }
	seg=$(printf '02000018%04x%04x0000%04x%016x%016x' 0 1 8 0 8)
	list="00180040000000000000001c00000000$(cscd "$1")$(cscd "$2")$seg"
	printf '830000000000000000000000%04x0000=%s' $((${#list} / 2)) "$list"
}

# CVE-2020-28374 (LIO): EXTENDED COPY found its copy targets by NAA among
# every LUN of the system, so an initiator could read and write LUNs its
# ACL does not show. SPC-4 6.4.5: a CSCD the copy manager cannot reach
# ends the copy with COPY ABORTED, COPY TARGET DEVICE NOT REACHABLE
# (0Dh/02h). A copy within the initiator's own LUN works (control), one
# to or from the LUN its map hides, or another target's, is refused and
# changes nothing.
cve_2020_28374_xcopy_outside_lun_map_not_reachable() {
	export INITIATOR=$XI
	rawcdb_is "$U0" "GOOD -" "$(xcopy_cdb "$NAA0" "$NAA0")"
	run "$SCSICMD" "$U0" read 8 8 11 || fail "scsicmd: $OUT"
	[ "$OUT" = GOOD ] || fail "the copy within LUN 0 did not copy: $OUT"
	ok "a copy within its own LUN 0: GOOD, the blocks copied"
	rawcdb_is "$U0" "$NOT_REACHABLE" "$(xcopy_cdb "$NAA0" "$NAA1")"
	ok "to the LUN its map hides: COPY ABORTED, COPY TARGET DEVICE NOT REACHABLE"
	rawcdb_is "$U0" "$NOT_REACHABLE" "$(xcopy_cdb "$NAA1" "$NAA0")"
	ok "from the LUN its map hides: COPY TARGET DEVICE NOT REACHABLE"
	rawcdb_is "$U0" "$NOT_REACHABLE" "$(xcopy_cdb "$NAA0" "$NAAO")"
	ok "to another target's LUN: COPY TARGET DEVICE NOT REACHABLE"
	export INITIATOR=iqn.2026-12.org.tcq:cve-all
	for u in "$U1" "$UO"; do
		run "$SCSICMD" "$u" read 0 16 5a || fail "scsicmd: $OUT"
		[ "$OUT" = GOOD ] || fail "$u changed: $OUT"
	done
	run "$SCSICMD" "$U0" read 0 16 11 || fail "scsicmd: $OUT"
	[ "$OUT" = GOOD ] || fail "LUN 0 changed (a copy from a hidden LUN landed): $OUT"
	ok "the hidden LUN, the other target's and LUN 0's source are unchanged"
}

# ---- the ram backend -------------------------------------------------------
fixture_ram() {
	start_tcqd --iqn "$IQN" --backend ram:size=8M --export ram0
	fds_baseline
}

# CVE-2014-4027 (LIO): the rd_mcp ramdisk handed out pages it had not
# cleared, so reads of blocks never written leaked kernel memory. SBC-3
# 4.6: a block never written reads as what the medium was formatted
# with; tcqd's ram LUN reads zeros, over all of it.
cve_2014_4027_ram_blocks_never_written_read_zeros() {
	local args=() lba
	for ((lba = 0; lba < 16384; lba += 2048)); do
		args+=(read "$lba" 2048 00)
	done
	run "$SCSICMD" "$TCQD_URL" "${args[@]}" || fail "scsicmd: $OUT"
	[ "$(grep -cx GOOD <<<"$OUT")" = 8 ] ||
		fail "8 MiB never written do not read as zeros: $OUT"
	ok "8 MiB of a ram LUN never written read as zeros"
}

# ---- iSNS answers (tcqd is an iSNS client: target/isns*.c) ---------------
# fakeisns.py: an iSNS "server" on a loopback port of its own that answers
# every request (RFC 4171 5.1: a 12-byte header, then TLVs) as the file
# MODE says: badtlv (a TLV whose length runs 2 GiB past the PDU), longname
# (an Entity Identifier of 512 and an iSCSI Name of 1024 bytes made of
# printf conversions), shortpdu (a header announcing 1000 bytes, 8 sent,
# then the connection closed). Each answer adds "MODE" to the file ANSWERED.
write_fake_isns() {
	cat >"$TEST_TMP/fakeisns.py" <<'EOF'
import socket, struct, sys
d = sys.argv[1]
srv = socket.socket()
srv.bind(("127.0.0.1", 0))
srv.listen(8)
open(d + "/port.tmp", "w").write(str(srv.getsockname()[1]))
import os; os.rename(d + "/port.tmp", d + "/port")
def tlv(tag, val):
    val += b"\0" * (-len(val) % 4)
    return struct.pack(">II", tag, len(val)) + val
def recv_all(c, n):
    b = b""
    while len(b) < n:
        x = c.recv(n - len(b))
        if not x:
            raise EOFError
        b += x
    return b
while True:
    c, _ = srv.accept()
    c.settimeout(10)
    try:
        while True:
            ver, fn, plen, flags, xid, seq = struct.unpack(">HHHHHH", recv_all(c, 12))
            recv_all(c, plen)
            mode = open(d + "/MODE").read().strip()
            if mode == "badtlv":
                pl = struct.pack(">I", 0) + struct.pack(">II", 1, 0x7ffffff0) + b"x" * 8
            elif mode == "longname":
                fmt = b"%n%s%x%p" * 256
                pl = struct.pack(">I", 0) + tlv(1, fmt[:511] + b"\0") + tlv(32, fmt[:1023] + b"\0")
            else:
                pl = b"\0" * 8
            hdr = struct.pack(">HHHHHH", 1, fn | 0x8000,
                              1000 if mode == "shortpdu" else len(pl),
                              0x4c00, xid, seq)
            c.sendall(hdr + pl)
            open(d + "/ANSWERED", "a").write(mode + "\n")
            if mode == "shortpdu":
                break
    except (EOFError, OSError, ValueError):
        pass
    c.close()
EOF
}

TCQCTL=${TCQCTL:-$top_builddir/tcqctl}
fixture_isns() {
	need_tool python3
	need_built "$TCQCTL"
	grep -q 'HAVE_LIBISNS 1' "$top_builddir/config.h" ||
		skip "tcqd built without libisns (configure --with-isns)"
	ISNS_DIR=$TEST_TMP/fakeisns
	mkdir -p "$ISNS_DIR"
	echo badtlv >"$ISNS_DIR/MODE"
	write_fake_isns
	python3 "$TEST_TMP/fakeisns.py" "$ISNS_DIR" &
	FAKE_PID=$!
	wait_until 100 test -s "$ISNS_DIR/port" || fail "the fake iSNS server did not start"
	SOCK=$TEST_TMP/ctl.sock
	tcqd_conf "$TEST_TMP/isns.conf" "$IQN" 8M "ctl = $SOCK" \
		"isns = 127.0.0.1:$(cat "$ISNS_DIR/port")"
	start_tcqd -c "$TEST_TMP/isns.conf"
	fds_baseline
	export ISNS_DIR FAKE_PID SOCK
}
teardown_isns() {
	kill "$FAKE_PID" 2>/dev/null
	wait "$FAKE_PID" 2>/dev/null
	stop_tcqd
}

# answered_more: the fake server has answered in mode A_MODE more often
# than A_N times.
answered_more() {
	[ "$(grep -cx "$A_MODE" "$ISNS_DIR/ANSWERED" 2>/dev/null)" -gt "$A_N" ]
}

# isns_answers MODE registered|failing: the fake server answers in MODE;
# tcqd is told to register again now (tcqctl isns off, then the server)
# and the server must have answered it; tcqd then still serves a login
# and READ CAPACITY, and shows the registration as the answer's status
# says (success, or the failure libisns found in the PDU).
isns_answers() {
	# shellcheck disable=SC2034  # A_WANT is read in the eval below
	A_MODE=$1 A_WANT=$2
	echo "$1" >"$ISNS_DIR/MODE"
	A_N=$(grep -cx "$1" "$ISNS_DIR/ANSWERED" 2>/dev/null || true)
	A_N=${A_N:-0}
	run "$TCQCTL" --ctl "$SOCK" isns off || fail "tcqctl isns off: $OUT"
	run "$TCQCTL" --ctl "$SOCK" isns "127.0.0.1:$(cat "$ISNS_DIR/port")" ||
		fail "tcqctl isns: $OUT"
	wait_until 300 answered_more ||
		fail "tcqd sent the fake server no request for $1"
	ok "tcqd asked, the server answered $1"
	tcqd_alive
	run "$SCSICMD" "$TCQD_URL" readcap || fail "scsicmd: $OUT"
	[[ $OUT == "CAPACITY 16384" ]] || fail "READ CAPACITY after $1: $OUT"
	ok "tcqd serves a login and READ CAPACITY after the $1 answer"
	wait_until 50 eval 'run "$TCQCTL" --ctl "$SOCK" targets >/dev/null &&
		[[ $(tail -n 1 <<<"$OUT") == *" $A_WANT "* ]]' ||
		fail "after $1, tcqctl targets says '$(tail -n 1 <<<"$OUT")', not $2"
	ok "tcqctl targets: $(tail -n 1 <<<"$OUT")"
}

# CVE-2010-2221 (tgt, IET, SCST): isns.c overflowed buffers on a long
# iSCSI Name in an SCN and on an invalid PDU. tcqd takes no SCN (it
# registers no ESI or SCN port), so the input it can get is the answer
# to its own registration: a TLV whose length runs past the PDU, and a
# PDU shorter than its header says.
cve_2010_2221_isns_invalid_answer_pdus() {
	isns_answers badtlv retrying
	isns_answers shortpdu retrying
}

# CVE-2010-0743 (tgt, IET): isns.c printed names from the server's
# answers as printf formats. An answer whose Entity Identifier (512
# bytes) and iSCSI Name (1024 bytes) are made of %n%s%x%p, with status
# 0 (success): tcqd takes it as registered and prints none of it.
cve_2010_0743_isns_answer_of_format_strings() {
	isns_answers longname registered
	log_grep -q '%n%s' && fail "tcqd logged the server's %n%s text"
	ok "tcqd did not log the server's names"
}

CHECKS=(
	@login
	cvepdu_case:cve_2013_2850_key_over_63_bytes_refused_0200
	cvepdu_case:cve_2026_90011_login_text_without_nul_refused_0200
	cvepdu_case:cve_2026_63887_many_unknown_keys_each_not_understood
	cvepdu_case:cve_2011_0001_login_pdu_of_16mib_refused
	cvepdu_case:cve_2022_50350_data_after_login_pdu
	cvepdu_case:cve_2024_26845_abort_unknown_task_then_lun_reset
	cvepdu_case:cve_2026_23216_logout_and_drop_with_reads_in_flight
	login_fds_given_back
	@chap
	cvepdu_chap_case:cve_2018_14633_chap_r_over_digest_hex_refused_0201
	cvepdu_chap_case:cve_2026_63886_chap_r_over_digest_base64_refused_0201
	chap_fds_given_back
	@scsi
	cve_2024_42416_rsoc_requested_service_action_checked
	cve_2024_8178_read_buffer_offset_refused
	cve_2024_45063_write_buffer_refused
	cve_2022_21546_write_same_ndob_writes_zeros
	cve_2026_72084_pr_transport_id_without_nul_refused
	cve_2025_38399_pr_spec_i_pt_unknown_initiator_registered
	scsi_fds_given_back
	@xcopy
	cve_2020_28374_xcopy_outside_lun_map_not_reachable
	xcopy_fds_given_back
	@ram
	cve_2014_4027_ram_blocks_never_written_read_zeros
	ram_fds_given_back
	@isns
	cve_2010_2221_isns_invalid_answer_pdus
	cve_2010_0743_isns_answer_of_format_strings
	isns_fds_given_back
	@
)
run_checks "$@"
