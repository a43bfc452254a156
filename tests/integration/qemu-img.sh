#!/bin/bash
# qemu-img round trip: 64 MiB of random data into the LUN and back; the
# checksums of the source, the read-back and the backing file all match.
# shellcheck source=tests/integration/lib.sh
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

need_tool qemu-img sha256sum
SIZE=64M
if ! listing "$@"; then
	head -c "$SIZE" /dev/urandom >"$TEST_TMP/src.raw" || fail "no random data"
	SRC=$(sha256sum <"$TEST_TMP/src.raw" | cut -d' ' -f1)
	say "source    sha256 $SRC"
fi

fixture_qemu() {
	make_lun "$TEST_TMP/lun0.img" "$SIZE"
	start_tcqd --export "$TEST_TMP/lun0.img" --size "$SIZE" \
		--iqn iqn.2026-11.org.tcq:qemu-img
}

qemu_img_convert_round_trip_matches() {
	local back
	run qemu-img convert -n -f raw -O raw "$TEST_TMP/src.raw" "$TCQD_URL" ||
		fail "qemu-img convert into the LUN failed"
	run qemu-img convert -f raw -O raw "$TCQD_URL" "$TEST_TMP/back.raw" ||
		fail "qemu-img convert from the LUN failed"
	back=$(head -c "$SIZE" "$TEST_TMP/back.raw" | sha256sum | cut -d' ' -f1)
	say "read-back sha256 $back"
	[ "$SRC" = "$back" ] || fail "read-back data differs from the source"
	ok "read-back matches"
}

# After the group: tcqd has exited.
backing_file_matches_after_shutdown() {
	local file
	file=$(head -c "$SIZE" "$TEST_TMP/lun0.img" | sha256sum | cut -d' ' -f1)
	say "backing   sha256 $file"
	[ "$SRC" = "$file" ] || fail "backing file differs from the source"
	ok "backing file matches after shutdown"
}

CHECKS=(
	@qemu
	qemu_img_convert_round_trip_matches
	@
	backing_file_matches_after_shutdown
)
run_checks "$@"
