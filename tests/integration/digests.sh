#!/bin/bash
# CRC32C header and data digests at the PDU level (tests/integration/
# digests.c): a session with both digests moves data with every digest
# checked; a corrupted header digest or data digest (Data-Out and
# immediate data) drops the connection, the write is not executed and
# tcqd logs the digest error. Then with header_digest = deny, and with
# data_digest = deny: the target grants only the other digest, and
# framing with one digest works.
# shellcheck source=tests/integration/lib.sh
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

DIGESTS=${DIGESTS:-$top_builddir/tests/integration/digests}
need_built "$DIGESTS"
IQN=iqn.2026-11.org.tcq:digests

# digest_target HEADER DATA GRANTED: tcqd with header_digest = HEADER and
# data_digest = DATA; GRANTED is what a session asking for both gets.
# The group's checks are named PREFIX + the case of digests.c.
digest_target() {
	tcqd_conf "$TEST_TMP/tcqd-$1-$2.conf" "$IQN" 16M \
		"header_digest = $1" "data_digest = $2"
	start_tcqd -c "$TEST_TMP/tcqd-$1-$2.conf"
	GRANTED=$3 PREFIX=$4
}
fixture_both() { digest_target allow allow CRC32C,CRC32C both_; }
fixture_header_deny() { digest_target deny allow None,CRC32C header_deny_; }
fixture_data_deny() { digest_target allow deny CRC32C,None data_deny_; }

dg_case() { pdu_case "$DIGESTS" -d "$GRANTED" "${1#"$PREFIX"}"; }
# ... and one with a corrupted digest: tcqd says so in its log.
dg_bad() {
	dg_case "$1"
	log_has "digest error" "tcqd logged the digest error"
}

CHECKS=(
	@both
	dg_case:both_crc32c_rfc3720_test_vectors
	dg_case:both_digests_granted_and_checked_on_io
	dg_bad:both_bad_header_digest_drops_connection
	dg_bad:both_bad_data_digest_in_data_out_drops_connection
	dg_bad:both_bad_data_digest_in_immediate_data_drops_connection
	@header_deny
	dg_case:header_deny_digests_granted_and_checked_on_io
	dg_bad:header_deny_bad_data_digest_in_data_out_drops_connection
	dg_bad:header_deny_bad_data_digest_in_immediate_data_drops_connection
	@data_deny
	dg_case:data_deny_digests_granted_and_checked_on_io
	dg_bad:data_deny_bad_header_digest_drops_connection
)
run_checks "$@"
