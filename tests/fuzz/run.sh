#!/bin/bash
# Builds the libFuzzer harnesses with clang and runs each for FUZZ_SECONDS
# (make fuzz sets the variables below from the Makefile). The library
# sources are compiled once into OUT/obj with coverage instrumentation;
# each harness is linked against them. Each run starts from the seed
# corpus in tests/fuzz/corpus/NAME plus a growing working corpus in
# OUT/corpus/NAME; crashes land in OUT/artifacts (copy them into
# tests/fuzz/regress/NAME/ so test_fuzz_regress replays them).
#
#   run.sh SRCDIR OUT NAME...
# Environment: FUZZ_CC, FUZZ_CPPFLAGS, FUZZ_LIBS, FUZZ_SOURCES,
# FUZZ_SECONDS (default 60; 0 only builds), FUZZ_JOBS (parallel runs,
# default 1), FUZZ_ARGS (extra libFuzzer options).
set -eu
srcdir=$1
out=$2
shift 2
: "${FUZZ_CC:=clang}" "${FUZZ_SECONDS:=60}" "${FUZZ_JOBS:=1}"
: "${FUZZ_ARGS:=}" "${FUZZ_CPPFLAGS:=}" "${FUZZ_LIBS:=}"
: "${FUZZ_SOURCES:?list of library sources}"

command -v "$FUZZ_CC" >/dev/null || {
	echo "fuzz: $FUZZ_CC not found (clang with libFuzzer is needed)" >&2
	exit 1
}
san="-fsanitize=address,undefined -fno-sanitize-recover=undefined"
cflags="-std=gnu11 -g -O1 -fno-omit-frame-pointer $san -I$srcdir $FUZZ_CPPFLAGS"
mkdir -p "$out/obj" "$out/artifacts"

# Compiled FUZZ_BUILD_JOBS at a time (default: the CPUs).
objs=()
njobs=0
rc=0
for src in $FUZZ_SOURCES; do
	obj=$out/obj/$(echo "$src" | tr / _).o
	path=$srcdir/$src
	[ -f "$path" ] || path=$src
	if [ ! -f "$obj" ] || [ "$path" -nt "$obj" ] ||
	   [ -n "$(find "$srcdir/include" "$srcdir/target" "$srcdir/scsi" \
		"$srcdir/backend" "$srcdir/initiator" "$srcdir/tests/fuzz" \
		-name '*.h' -newer "$obj" 2>/dev/null | head -1)" ]; then
		echo "  CC (fuzz) $src"
		# shellcheck disable=SC2086
		$FUZZ_CC $cflags -fsanitize=fuzzer-no-link -c "$path" -o "$obj" &
		njobs=$((njobs + 1))
		if [ "$njobs" -ge "${FUZZ_BUILD_JOBS:-$(nproc)}" ]; then
			wait -n || rc=1
			njobs=$((njobs - 1))
		fi
	fi
	objs+=("$obj")
done
while [ "$njobs" -gt 0 ]; do
	wait -n || rc=1
	njobs=$((njobs - 1))
done
[ "$rc" -eq 0 ] || { echo "fuzz: compiling failed" >&2; exit 1; }

# An archive, so each harness links only the objects it needs.
rm -f "$out/libtcq-fuzz.a"
ar rcs "$out/libtcq-fuzz.a" "${objs[@]}"
for name in "$@"; do
	echo "  LINK fuzz_$name"
	# shellcheck disable=SC2086
	$FUZZ_CC $cflags -fsanitize=fuzzer -o "$out/fuzz_$name" \
		"$srcdir/tests/fuzz/fuzz_$name.c" "$out/libtcq-fuzz.a" $FUZZ_LIBS
done
[ "$FUZZ_SECONDS" -gt 0 ] || exit 0

rc=0
for name in "$@"; do
	mkdir -p "$out/corpus/$name"
	dict='' jobs=''
	[ "$FUZZ_JOBS" -gt 1 ] && jobs="-jobs=$FUZZ_JOBS -workers=$FUZZ_JOBS"
	[ -f "$srcdir/tests/fuzz/$name.dict" ] &&
		dict=-dict=$srcdir/tests/fuzz/$name.dict
	echo "fuzz: $name for ${FUZZ_SECONDS}s"
	# shellcheck disable=SC2086
	"$out/fuzz_$name" -max_total_time="$FUZZ_SECONDS" -max_len=65536 \
		-timeout=10 -rss_limit_mb=4096 -print_final_stats=1 \
		-artifact_prefix="$out/artifacts/$name-" $jobs $dict $FUZZ_ARGS \
		"$out/corpus/$name" "$srcdir/tests/fuzz/corpus/$name" ||
		{ echo "fuzz: $name found a failure (see $out/artifacts)"; rc=1; }
done
exit $rc
