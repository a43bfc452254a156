#!/bin/bash
# ODX, token-based copy offload (SBC-4 POPULATE TOKEN 83h/10h, WRITE
# USING TOKEN 83h/11h; SPC-4 RECEIVE ROD TOKEN INFORMATION 84h/07h) on a
# real tcqd, driven CDB by CDB with rawcdb: the third-party copy VPD page
# 8Fh and REPORT SUPPORTED OPERATION CODES announce it; a token made of
# two ranges of LUN 0 is written to LUN 0 and to LUN 1 and the data read
# back through the target equals the source; a write to a block of the
# source range from another session cancels the token (INVALID TOKEN
# OPERATION, TOKEN CANCELLED: 23h/08h) and RECEIVE ROD TOKEN INFORMATION
# reports the failure; a token altered in its random part is TOKEN
# CORRUPT (23h/05h), one never made TOKEN UNKNOWN (23h/04h); the block
# device zero ROD token (FFFF0001h) writes zeros. Expected bytes are the
# standards' layouts (see tests/unit/test_odx.c).
# shellcheck disable=SC2317
# shellcheck source=tests/integration/lib.sh
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

RAWCDB=${RAWCDB:-$top_builddir/tests/integration/rawcdb}
need_built "$RAWCDB"

CONF=$TEST_TMP/tcqd.conf
T=iqn.2026-11.org.tcq:odx
CANCELLED="CHECK CONDITION key=0x5 asc=0x23 ascq=0x08"

hex4() { printf '%08x' "$1"; }
hex8() { printf '%016x' "$1"; }
hex2() { printf '%04x' "$1"; }

# ranges LBA:BLOCKS...: block device range descriptors, as hex.
ranges() {
	local r
	for r in "$@"; do
		printf '%s%s00000000' "$(hex8 "${r%:*}")" "$(hex4 "${r#*:}")"
	done
}

# pt_rrti URL LIST LBA:BLOCKS...: POPULATE TOKEN then RECEIVE ROD TOKEN
# INFORMATION on one session (results are per I_T nexus); OUT has both
# lines, TOKEN the 512 bytes of the token (hex).
pt_rrti() {
	local url=$1 list=$2 r
	shift 2
	r=$(ranges "$@")
	local n=$((${#r} / 2))
	local p="$(hex2 $((14 + n)))0000""00000000""00000000""0000$(hex2 $n)$r"
	local pt="8310""00000000""$(hex4 "$list")$(hex4 $((16 + n)))0000"
	local rr="8407$(hex4 "$list")00000000""000004000000:1024"
	run "$RAWCDB" "$url" "$pt=$p" "$rr" || fail "rawcdb failed: $OUT"
	local l1 l2
	l1=$(sed -n 1p <<<"$OUT")
	l2=$(sed -n 2p <<<"$OUT")
	[ "$l1" = "GOOD -" ] || fail "POPULATE TOKEN: $l1"
	[[ $l2 == "GOOD "* ]] || fail "RECEIVE ROD TOKEN INFORMATION: $l2"
	RRTI=${l2#GOOD }
	TOKEN=${RRTI:76:1024}
	[ ${#TOKEN} -eq 1024 ] || fail "no 512-byte token in $RRTI"
}

# wut_cdbs LIST TOKEN FLAGS OFFSET LBA:BLOCKS...: the WRITE USING TOKEN
# argument of rawcdb (CDB=DATA) in WUT.
wut_arg() {
	local list=$1 tok=$2 flags=$3 off=$4 r
	shift 4
	r=$(ranges "$@")
	local n=$((${#r} / 2))
	local p="$(hex2 $((534 + n)))${flags}0000000000$(hex8 "$off")$tok"
	p+="000000000000$(hex2 $n)$r"
	WUT="8311""00000000""$(hex4 "$list")$(hex4 $((536 + n)))0000=$p"
}

# read16 URL LBA BLOCKS: READ (16), its data (hex) in DATA.
read16() {
	run "$RAWCDB" "$1" "8800$(hex8 "$2")$(hex4 "$3")0000:$(($3 * 512))" ||
		fail "READ (16): $OUT"
	[[ $OUT == "GOOD "* ]] || fail "READ (16): $OUT"
	DATA=${OUT#GOOD }
}

# same URL1 LBA1 URL2 LBA2 BLOCKS: the blocks read through the target
# are equal.
same() {
	local a
	read16 "$1" "$2" "$5"
	a=$DATA
	read16 "$3" "$4" "$5"
	[ "$a" = "$DATA" ] || fail "blocks $2 of $1 and $4 of $3 differ"
}

fixture_odx() {
	dd if=/dev/urandom of="$TEST_TMP/lun0.img" bs=1M count=8 status=none ||
		fail "cannot fill lun0.img"
	tcqd_conf "$CONF" "$T" 8M
	printf '\n[lun %s 1]\npath = %s\nsize = 8M\nblock_size = 512\ncreate = yes\n' \
		"$T" "$TEST_TMP/lun1.img" >>"$CONF"
	start_tcqd -c "$CONF"
	URL0=$TCQD_URL
	URL1=${TCQD_URL%/0}/1
}

vpd_8f_announces_odx() {
	run "$RAWCDB" "$URL0" "12018f00ff00:255" || fail "rawcdb: $OUT"
	local h=${OUT#GOOD }
	# header, then Block Device ROD Token Limits: 64 ranges, 600 s
	# maximum and 60 s default inactivity timeout
	[ "${h:0:8}" = 008f00b4 ] || fail "VPD 8Fh header: ${h:0:8}"
	[ "${h:8:72}" = "000000200000000000000040000002580000003c0000000000800000""0000000000000800" ] ||
		fail "Block Device ROD Token Limits: ${h:8:72}"
	# Supported Commands: 83h (00h 10h 11h), 84h (00h 03h 07h)
	[ "${h:80:32}" = 0001000c0a83030010118403000307""00 ] ||
		fail "Supported Commands: ${h:80:32}"
	# Supported ROD Types: 00800001h in and out, FFFF0001h in
	[ "${h:304:64}" = 0108001c00000018008000010300000000000000ffff000102000000""00000000 ] ||
		fail "Supported ROD Types: ${h:304:64}"
	ok "VPD page 8Fh: limits, supported commands, ROD types as SBC-4/SPC-4 lay them out"
}

rsoc_reports_the_odx_commands() {
	# REPORTING OPTIONS 010b: one command, its service action
	run "$RAWCDB" "$URL0" "a30c02830010000001000000:256" \
		"a30c02830011000001000000:256" "a30c02840007000001000000:256" ||
		fail "rawcdb: $OUT"
	# SUPPORT 011b, CDB SIZE 16, then the CDB USAGE DATA: LIST
	# IDENTIFIER (bytes 6-9, 2-5 for 84h/07h) and the length evaluated,
	# GROUP NUMBER ignored, CONTROL 04h (NACA)
	local ffff=ffffffff want
	want="GOOD 00030010831000000000${ffff}${ffff}0004
GOOD 00030010831100000000${ffff}${ffff}0004
GOOD 000300108407${ffff}00000000${ffff}0004"
	[ "$OUT" = "$want" ] || fail "RSOC one-command answers: $OUT"
	ok "REPORT SUPPORTED OPERATION CODES: 83h/10h, 83h/11h, 84h/07h supported, 16-byte CDBs"
}

token_copies_within_the_lun() {
	pt_rrti "$URL0" 1 100:16 1000:8
	# RRTI: POPULATE TOKEN (10h) completed (01h), 24 blocks (units F1h)
	[ "${RRTI:8:4}" = 1001 ] || fail "RRTI status bytes ${RRTI:8:4}"
	[ "${RRTI:30:2}${RRTI:32:16}" = f10000000000000018 ] ||
		fail "RRTI transfer count ${RRTI:30:18}"
	[ "${TOKEN:0:8}${TOKEN:12:4}" = 0080000101f8 ] ||
		fail "token type/length ${TOKEN:0:16}"
	wut_arg 2 "$TOKEN" 00 0 4000:24
	run "$RAWCDB" "$URL0" "$WUT" || fail "rawcdb: $OUT"
	[ "$OUT" = "GOOD -" ] || fail "WRITE USING TOKEN: $OUT"
	same "$URL0" 100 "$URL0" 4000 16
	same "$URL0" 1000 "$URL0" 4016 8
	ok "POPULATE TOKEN of 100+16 and 1000+8, WRITE USING TOKEN to 4000: equal"
}

token_of_lun0_written_to_lun1() {
	pt_rrti "$URL0" 3 2000:64
	wut_arg 4 "$TOKEN" 00 8 10:56
	run "$RAWCDB" "$URL1" "$WUT" || fail "rawcdb: $OUT"
	[ "$OUT" = "GOOD -" ] || fail "WRITE USING TOKEN to LUN 1: $OUT"
	same "$URL0" 2008 "$URL1" 10 56
	ok "a token of LUN 0 written to LUN 1 from OFFSET INTO ROD 8: equal"
}

write_to_the_source_refuses_the_token() {
	pt_rrti "$URL0" 5 3000:32
	# another session writes one block inside the range
	run "$RAWCDB" "$URL0" "8a000000000000000bcf000000010000=$(printf '%01024d' 7)" ||
		fail "rawcdb WRITE: $OUT"
	[ "$OUT" = "GOOD -" ] || fail "WRITE (16) of block 3023: $OUT"
	wut_arg 6 "$TOKEN" 00 0 5000:32
	run "$RAWCDB" "$URL0" "$WUT" "8407$(hex4 6)00000000000004000000:1024" ||
		fail "rawcdb: $OUT"
	[ "$(sed -n 1p <<<"$OUT")" = "$CANCELLED" ] ||
		fail "WRITE USING TOKEN after the write: $OUT"
	local r
	r=$(sed -n 2p <<<"$OUT")
	r=${r#GOOD }
	# RRTI: WRITE USING TOKEN (11h) completed with errors (02h), status
	# CHECK CONDITION, 18 bytes of fixed sense: ILLEGAL REQUEST 23h/08h
	[ "${r:8:4}" = 1102 ] || fail "RRTI status bytes ${r:8:4} in $r"
	[ "${r:24:6}" = 021212 ] || fail "RRTI status/sense lengths ${r:24:6}"
	[ "${r:68:2}" = 05 ] && [ "${r:88:4}" = 2308 ] ||
		fail "RRTI sense data ${r:64:36}"
	ok "a write to the source range cancels the token: 23h/08h, RRTI says so"
}

altered_and_unknown_tokens_refused() {
	pt_rrti "$URL0" 7 100:8
	local bad=${TOKEN:0:800}$([ "${TOKEN:800:2}" = 00 ] && echo 01 || echo 00)${TOKEN:802}
	wut_arg 8 "$bad" 00 0 6000:8
	run "$RAWCDB" "$URL0" "$WUT" || fail "rawcdb: $OUT"
	[ "$OUT" = "CHECK CONDITION key=0x5 asc=0x23 ascq=0x05" ] ||
		fail "an altered token: $OUT"
	bad=${TOKEN:0:16}ffffffffffffff00${TOKEN:32}
	wut_arg 8 "$bad" 00 0 6000:8
	run "$RAWCDB" "$URL0" "$WUT" || fail "rawcdb: $OUT"
	[ "$OUT" = "CHECK CONDITION key=0x5 asc=0x23 ascq=0x04" ] ||
		fail "a token never made: $OUT"
	ok "an altered token is TOKEN CORRUPT (23h/05h), an unknown one TOKEN UNKNOWN (23h/04h)"
}

zero_rod_token_writes_zeros() {
	local zero
	zero=ffff0001000001f8$(printf '%01008d' 0)
	wut_arg 9 "$zero" 00 0 100:8
	run "$RAWCDB" "$URL0" "$WUT" || fail "rawcdb: $OUT"
	[ "$OUT" = "GOOD -" ] || fail "WRITE USING TOKEN (zero ROD): $OUT"
	read16 "$URL0" 100 8
	[ "$DATA" = "$(printf '%08192d' 0)" ] || fail "blocks 100-107 are not zeros"
	ok "the block device zero ROD token writes zeros"
}

CHECKS=(
	@odx
	vpd_8f_announces_odx
	rsoc_reports_the_odx_commands
	token_copies_within_the_lun
	token_of_lun0_written_to_lun1
	write_to_the_source_refuses_the_token
	altered_and_unknown_tokens_refused
	zero_rod_token_writes_zeros
)
run_checks "$@"
