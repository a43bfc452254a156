#!/bin/bash
# The shape of the tree (DESIGN.md, Where each concern lives, and the
# code rules of the README): no source file, script or test is longer
# than 800 lines, and DESIGN.md's tables of section 3 name every .c and
# .h of the directories they cover, each of which exists. Each rule is
# also run once on a planted violation, which it must catch. Prints TAP.
set -u
set -o pipefail

: "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
MAX_LINES=800

# shellcheck source=tests/tap.sh
. "$top_srcdir/tests/tap.sh"

# sources ROOT: the code of the tree, one path a line, relative to ROOT.
sources() {
	(cd "$1" && find include common crash backend scsi target initiator ctl \
		tests scripts -type f \( -name '*.c' -o -name '*.h' \
		-o -name '*.sh' -o -name '*.py' -o -path 'scripts/*' \) \
		! -name '*.pyc' ! -path '*/__pycache__/*' 2>/dev/null | sort)
}

# long_files ROOT: "PATH: N lines" for every source over MAX_LINES.
long_files() {
	local f l
	while read -r f; do
		l=$(wc -l <"$1/$f")
		[ "$l" -le "$MAX_LINES" ] || echo "$f: $l lines"
	done < <(sources "$1")
}

# design_gaps DESIGN ROOT: the files DESIGN.md's section 3 names that do
# not exist, and the .c/.h of its directories it does not name.
design_gaps() {
	python3 - "$1" "$2" <<'PY'
import fnmatch, os, re, sys
text = open(sys.argv[1]).read()
root = sys.argv[2]
start = text.index("## 3. Where each concern lives")
end = text.index("\n## ", start + 4)
named = {}      # directory -> names and globs in its tables
cur = []
for line in text[start:end].splitlines():
    m = re.match(r"### (.*?) —", line)
    if m:
        cur = re.findall(r"([a-z][a-z/]*)/", m.group(1))
        for d in cur:
            named.setdefault(d, set())
        continue
    if cur and line.startswith("| `"):
        for w in re.findall(r"`([^`]+)`", line.split("|")[1]):
            if re.fullmatch(r"[A-Za-z0-9_*.-]+\.(c|h|\*)", w):
                for d in cur:
                    named[d].add(w)
if not named:
    print("no tables found in section 3")
for d, names in sorted(named.items()):
    dirs = [x for x in named if x == d]
    have = sorted(f for f in os.listdir(os.path.join(root, d))
                  if f.endswith((".c", ".h")))
    for w in sorted(names):
        # a name may be listed under one of the heading's directories
        where = [x for x, ns in named.items() if w in ns]
        if not any(fnmatch.filter(os.listdir(os.path.join(root, x)), w)
                   for x in where):
            print("DESIGN.md names %s/%s, which does not exist" % (d, w))
    for f in have:
        if not any(fnmatch.fnmatch(f, w) for w in names):
            print("%s/%s is not named in DESIGN.md section 3" % (d, f))
PY
}

# files_short: no source over MAX_LINES lines; a planted 801-line file
# is caught.
out=$(long_files "$top_srcdir")
result "$([ -z "$out" ] && echo 0 || echo 1)" \
	"no source file is longer than $MAX_LINES lines" "$out"
mkdir -p "$tmp/plant/tests"
seq 1 $((MAX_LINES + 1)) >"$tmp/plant/tests/long.sh"
out=$(long_files "$tmp/plant")
result "$([ "$out" = "tests/long.sh: $((MAX_LINES + 1)) lines" ] && echo 0 || echo 1)" \
	"a planted $((MAX_LINES + 1))-line file is caught" "${out:-not caught}"

# design_map: DESIGN.md's tables and the tree agree; a table missing one
# file is caught.
if ! command -v python3 >/dev/null; then
	result 1 "DESIGN.md names every file of its directories" "needs python3"
else
	out=$(design_gaps "$top_srcdir/DESIGN.md" "$top_srcdir")
	result "$([ -z "$out" ] && echo 0 || echo 1)" \
		"DESIGN.md section 3 names every .c and .h of its directories, and each exists" "$out"
	sed 's/`bdev.h`, `bdev.c`, /`bdev.c`, /' "$top_srcdir/DESIGN.md" >"$tmp/DESIGN.md"
	out=$(design_gaps "$tmp/DESIGN.md" "$top_srcdir")
	result "$(grep -qx 'backend/bdev.h is not named in DESIGN.md section 3' <<<"$out" && echo 0 || echo 1)" \
		"a table that leaves out backend/bdev.h is caught" "${out:-not caught}"
fi

tap_end
