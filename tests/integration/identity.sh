#!/bin/bash
# A LUN's INQUIRY identity (vendor, product, revision; tcqd.conf(5)):
# set in tcqd.conf it is what standard INQUIRY and VPD page 83h's T10
# vendor ID designator carry, space-padded and left-aligned as SPC-4
# 4.4.1 and 6.6.2 say; changed live with tcqctl set, the open session's
# next command gets INQUIRY DATA HAS CHANGED (3F/03, SPC-4 5.14) and
# INQUIRY then reads the new identity, and tcqctl config (what save
# writes) keeps it; the same value again raises nothing; a value too
# long, not printable ASCII or with a leading space is refused by its
# key's name, live and in a file, and changes nothing.
# shellcheck source=tests/integration/lib.sh
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

TCQCTL=${TCQCTL:-$top_builddir/tcqctl}
LIVECDB=${LIVECDB:-$top_builddir/tests/integration/livecdb}
RAWCDB=${RAWCDB:-$top_builddir/tests/integration/rawcdb}
need_built "$TCQCTL" "$LIVECDB" "$RAWCDB"

SOCK=$TEST_TMP/ctl.sock
CONF=$TEST_TMP/tcqd.conf
T=iqn.2026-11.org.tcq:identity
TUR=000000000000
INQ=120000006000:96		# standard INQUIRY, 96 bytes
VPD83=120183010000:256		# INQUIRY, VPD page 83h
UA_INQ="CHECK CONDITION key=0x6 asc=0x3f ascq=0x03"

ctl() { run "$TCQCTL" --ctl "$SOCK" "$@"; }
# hexpad TEXT N: TEXT left-aligned in N bytes padded with spaces, as hex.
hexpad() { printf "%-$2s" "$1" | od -An -tx1 | tr -d ' \n'; }

# inquiry_is VENDOR PRODUCT REVISION HEX: the standard INQUIRY data in
# HEX (as rawcdb and livecdb print it) carries that identity in bytes
# 8-15, 16-31 and 32-35.
inquiry_is() {
	local hex=$4
	[ "${hex:16:16}" = "$(hexpad "$1" 8)" ] ||
		fail "vendor bytes ${hex:16:16}, expected '$1' padded"
	[ "${hex:32:32}" = "$(hexpad "$2" 16)" ] ||
		fail "product bytes ${hex:32:32}, expected '$2' padded"
	[ "${hex:64:8}" = "$(hexpad "$3" 4)" ] ||
		fail "revision bytes ${hex:64:8}, expected '$3' padded"
}

# ---- a session that watches (lib.sh), and its end
watch_end() {
	printf 'quit\n' >&"${WATCH[1]}"
	wait "$WATCH_PID" || fail "livecdb ended with an error"
	unset 'BG_PIDS[-1]'
}

fixture_identity() {
	tcqd_conf "$CONF" "$T" 8M "ctl = $SOCK"
	printf 'vendor = ACME\nproduct = Bulk Store 9\nrevision = 1.2\n' >>"$CONF"
	start_tcqd -c "$CONF"
}

config_identity_is_in_standard_inquiry() {
	run "$RAWCDB" "$TCQD_URL" "$INQ" || fail "rawcdb INQUIRY failed: $OUT"
	[[ $OUT == "GOOD "* ]] || fail "INQUIRY: $OUT"
	inquiry_is ACME "Bulk Store 9" 1.2 "${OUT#GOOD }"
	ok "INQUIRY reads vendor ACME, product 'Bulk Store 9', revision 1.2, space-padded"
}

config_vendor_is_in_the_t10_designator() {
	local hex
	run "$RAWCDB" "$TCQD_URL" "$VPD83" || fail "rawcdb VPD 83h failed: $OUT"
	hex=${OUT#GOOD }
	# a T10 vendor ID designator (code set 2, type 1, LU): 02 01 00 LEN,
	# then the vendor in 8 bytes
	[[ $hex == *"020100"??"$(hexpad ACME 8)"* ]] ||
		fail "VPD 83h has no T10 vendor ID designator starting ACME: $hex"
	ok "VPD page 83h's T10 vendor ID designator starts with 'ACME    '"
}

luns_shows_the_identity() {
	ctl luns || fail "tcqctl luns failed"
	grep -qxF '  inquiry  vendor "ACME"  product "Bulk Store 9"  revision "1.2"' <<<"$OUT" ||
		fail "tcqctl luns shows no identity line: $OUT"
	ok "tcqctl luns shows the identity"
}

live_set_raises_inquiry_data_has_changed() {
	watch_start "$TCQD_URL"
	watch_settle 0
	ctl set 0 "product=Other Disk" revision=2 || fail "set: $OUT"
	watch "0 $TUR"
	[ "$ANS" = "$UA_INQ" ] ||
		fail "the open session's next command got '$ANS', expected INQUIRY DATA HAS CHANGED"
	ok "the open session's next command gets INQUIRY DATA HAS CHANGED (3F/03)"
	watch "0 $INQ"
	[[ $ANS == "GOOD "* ]] || fail "INQUIRY after the change: $ANS"
	inquiry_is ACME "Other Disk" 2 "${ANS#GOOD }"
	ok "INQUIRY reads the new product and revision, the vendor kept"
	watch "0 $TUR"
	[ "$ANS" = "GOOD -" ] || fail "a second unit attention: $ANS"
	# the same identity again changes nothing, so says nothing
	ctl set 0 "product=Other Disk" || fail "set the same: $OUT"
	watch "0 $TUR"
	[ "$ANS" = "GOOD -" ] || fail "setting the same identity raised '$ANS'"
	ok "setting the same identity raises no unit attention"
	watch_end
}

config_keeps_the_live_identity() {
	OUT=$(tc "$TCQCTL" --ctl "$SOCK" config) || fail "tcqctl config failed"
	grep -qx 'vendor = ACME' <<<"$OUT" || fail "config lacks vendor = ACME"
	grep -qx 'product = Other Disk' <<<"$OUT" || fail "config lacks product = Other Disk"
	grep -qx 'revision = 2' <<<"$OUT" || fail "config lacks revision = 2"
	ok "tcqctl config (what save writes) has the live identity"
}

# refused WANT ARGS...: tcqctl ARGS fails (status 1) saying WANT, and the
# identity INQUIRY reads is still ACME / Other Disk / 2.
refused() {
	local want=$1 rc=0
	shift
	ctl "$@" || rc=$?
	[ "$rc" -eq 1 ] || fail "tcqctl $*: status $rc, expected 1"
	[[ $OUT == *"$want"* ]] || fail "tcqctl $*: message lacks '$want': $OUT"
	run "$RAWCDB" "$TCQD_URL" "$INQ" || fail "rawcdb INQUIRY failed: $OUT"
	inquiry_is ACME "Other Disk" 2 "${OUT#GOOD }"
	ok "tcqctl $* refused naming '$want'; the identity is unchanged"
}
vendor_of_9_characters_refused() { refused vendor set 0 vendor=ACMEACME9; }
product_of_17_characters_refused() { refused product set 0 product=ABCDEFGHIJKLMNOPQ; }
revision_of_5_characters_refused() { refused revision set 0 revision=12345; }
non_ascii_product_refused() { refused product set 0 "product=Disk $(printf '\303\251')"; }
leading_space_refused() { refused vendor set 0 "vendor= ACME"; }
refused_whole_with_a_good_key() { refused revision set 0 vendor=GOOD revision=TOOLONG; }

bad_identity_in_a_file_names_its_key() {
	tcqd_conf "$TEST_TMP/bad.conf" "$T" 8M
	printf 'product = A product name too long\n' >>"$TEST_TMP/bad.conf"
	conf_refused "$TEST_TMP/bad.conf" ".*product" "a 25-character product"
	ok "tcqd refuses the file: $OUT"
}

CHECKS=(
	@identity
	config_identity_is_in_standard_inquiry
	config_vendor_is_in_the_t10_designator
	luns_shows_the_identity
	live_set_raises_inquiry_data_has_changed
	config_keeps_the_live_identity
	vendor_of_9_characters_refused
	product_of_17_characters_refused
	revision_of_5_characters_refused
	non_ascii_product_refused
	leading_space_refused
	refused_whole_with_a_good_key
	bad_identity_in_a_file_names_its_key
)
run_checks "$@"
