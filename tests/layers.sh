#!/bin/bash
# The walls between the layers (DESIGN.md, Layers), checked on the tree and
# on the built libraries:
#   - no source file includes a header of a layer above its own (or of a
#     sibling: target/, initiator/ and ctl/ stand side by side);
#   - each layer's library, linked whole against only the layers below it,
#     has no undefined symbol: nothing calls upward (the initiator links
#     against common/ alone, as the target's sibling).
# Each rule is also run once on a planted violation, which it must catch,
# so that a rule that cannot fail does not pass. Prints TAP.
#
# Environment (set by Makefile.am): top_srcdir, top_builddir, LAYER_CC,
# LAYER_CFLAGS, LAYER_LDFLAGS and LAYER_LINK_<layer> (the layer's library
# first, then everything below it, external libraries included).
set -u
set -o pipefail

: "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${top_builddir:=$(pwd)}"
: "${LAYER_CC:=cc}"
: "${LAYER_CFLAGS:=}"
: "${LAYER_LDFLAGS:=}"

# shellcheck source=tests/tap.sh
. "$top_srcdir/tests/tap.sh"

# upward_includes ROOT: prints "file:line: includes DIR/HEADER" for every
# include of a header above (or beside, for rank 4) the file's layer. One
# awk over every file (a fork per include line took over a minute).
# Ranks: include and common 0, crash 1, backend 2, scsi 3, and the
# siblings target, initiator and ctl 4; other directories are not ranked.
# "tcq/x.h" is include/tcq; a bare name is the file's own directory (or
# autoconf's config.h) and is not checked.
upward_includes() {
	local root=$1
	(cd "$root" && find include common crash backend scsi target initiator ctl \
		-name '*.[ch]' 2>/dev/null | sort) |
	(cd "$root" && xargs -r awk '
		function rank(d) {
			if (d == "include" || d == "common") return 0
			if (d == "crash") return 1
			if (d == "backend") return 2
			if (d == "scsi") return 3
			if (d == "target" || d == "initiator" || d == "ctl") return 4
			return -1
		}
		FNR == 1 { dir = FILENAME; sub(/\/.*/, "", dir); r = rank(dir) }
		/^[[:space:]]*#[[:space:]]*include[[:space:]]*"/ {
			path = $0
			sub(/^[^"]*"/, "", path); sub(/".*/, "", path)
			if (index(path, "/") == 0) next
			incdir = path; sub(/\/.*/, "", incdir)
			if (incdir == "tcq") incdir = "include"
			ri = rank(incdir)
			if (ri < 0) next
			if (ri > r || (ri == 4 && incdir != dir))
				printf "%s:%d: includes %s\n", FILENAME, FNR, path
		}')
}

# ---- includes -------------------------------------------------------------
out=$(upward_includes "$top_srcdir")
if [ -z "$out" ]; then
	result 0 "no source file includes a header of a higher or sibling layer"
else
	mapfile -t lines <<<"$out"
	result 1 "no source file includes a header of a higher or sibling layer" \
		"${lines[@]}"
fi

# The rule on a planted tree: scsi/ including the transport, the
# initiator including the target, common/ including a backend.
mkdir -p "$tmp/tree/scsi" "$tmp/tree/initiator" "$tmp/tree/common"
printf '#include "target/session.h"\n' >"$tmp/tree/scsi/bad.c"
printf '#include "target/param.h"\n' >"$tmp/tree/initiator/bad.c"
printf '#include "backend/bdev.h"\n#include "tcq/log.h"\n' \
	>"$tmp/tree/common/bad.c"
out=$(upward_includes "$tmp/tree")
want=$'common/bad.c:1: includes backend/bdev.h\ninitiator/bad.c:1: includes target/param.h\nscsi/bad.c:1: includes target/session.h'
if [ "$out" = "$want" ]; then
	result 0 "the include rule catches three planted upward includes"
else
	mapfile -t lines <<<"$out"
	result 1 "the include rule catches three planted upward includes" \
		"got:" "${lines[@]}"
fi

# ---- links ----------------------------------------------------------------
# link_whole OUT LINKLINE...: links the first library of LINKLINE whole,
# the rest as usual, behind an empty main. Linker messages in OUT.log.
printf 'int main(void) { return 0; }\n' >"$tmp/main.c"
"$LAYER_CC" $LAYER_CFLAGS -c "$tmp/main.c" -o "$tmp/main.o" ||
	{ echo "Bail out! cannot compile an empty main with $LAYER_CC"; exit 99; }
link_whole() {
	local out=$1 lib=$2
	shift 2
	# shellcheck disable=SC2086
	"$LAYER_CC" $LAYER_LDFLAGS -o "$out" "$tmp/main.o" \
		-Wl,--whole-archive "$lib" -Wl,--no-whole-archive "$@" \
		>"$out.log" 2>&1
}

cd "$top_builddir" || exit 99
for layer in common crash backend scsi target initiator; do
	var=LAYER_LINK_$layer
	line=${!var:-}
	if [ -z "$line" ]; then
		result 1 "$layer links whole against the layers below it" \
			"$var is not set (run through make check)"
		continue
	fi
	# shellcheck disable=SC2086
	set -- $line
	if link_whole "$tmp/$layer" "$@"; then
		result 0 "$layer links whole against the layers below it"
	else
		mapfile -t lines < <(grep -E 'undefined reference' \
			"$tmp/$layer.log" | sed -E 's/.*(undefined reference to .*)/\1/' |
			sort -u | head -20)
		result 1 "$layer links whole against the layers below it" \
			"${lines[@]}"
	fi
done

# The rule on a planted call: an object in a "scsi" archive that calls the
# transport must not link against scsi and below, and must link once the
# transport is there (so the failure is the layering, not the command).
if [ -n "${LAYER_LINK_scsi:-}" ] && [ -n "${LAYER_LINK_target:-}" ]; then
	printf 'const char *sess_initiator_port(const void *nexus);\n%s\n' \
		'const char *layer_probe(void) { return sess_initiator_port(0); }' \
		>"$tmp/probe.c"
	"$LAYER_CC" $LAYER_CFLAGS -c "$tmp/probe.c" -o "$tmp/probe.o" &&
		ar rcs "$tmp/libprobe.a" "$tmp/probe.o" ||
		{ echo "Bail out! cannot build the probe"; exit 99; }
	# shellcheck disable=SC2086
	if link_whole "$tmp/probe-low" "$tmp/libprobe.a" $LAYER_LINK_scsi; then
		result 1 "an upward call from the scsi layer fails to link" \
			"the probe linked without the transport"
	elif grep -q "undefined reference to .sess_initiator_port" \
		"$tmp/probe-low.log"; then
		# shellcheck disable=SC2086
		if link_whole "$tmp/probe-all" "$tmp/libprobe.a" $LAYER_LINK_target; then
			result 0 "an upward call from the scsi layer fails to link"
		else
			mapfile -t lines <"$tmp/probe-all.log"
			result 1 "an upward call from the scsi layer fails to link" \
				"the probe does not link even with the transport:" \
				"${lines[@]}"
		fi
	else
		mapfile -t lines <"$tmp/probe-low.log"
		result 1 "an upward call from the scsi layer fails to link" \
			"the link failed for another reason:" "${lines[@]}"
	fi
else
	result 1 "an upward call from the scsi layer fails to link" \
		"LAYER_LINK_scsi / LAYER_LINK_target are not set"
fi

tap_end
