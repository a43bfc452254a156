#!/bin/bash
# The shape of the tree (DESIGN.md, sections 3 and 6): no source file,
# script or test is longer than 800 lines, no function of the product
# code is longer than 120, and DESIGN.md's tables of section 3 name
# every .c and .h of the directories they cover, each of which exists.
# Each rule is also run once on a planted violation, which it must
# catch. Prints TAP.
set -u
set -o pipefail

: "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
MAX_LINES=800
MAX_FUNC=120
# The product's code; tests/ is exempt from MAX_FUNC: a test driver's
# main or table of cases reads best whole, and it does not ship.
PRODUCT="include common crash backend scsi target initiator ctl"
# Functions let stay over MAX_FUNC while a change splits them, "PATH NAME"
# a line; the rule fails once one is short, so it leaves. None today.
KNOWN_LONG=""

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

# long_functions ROOT: "PATH:LINE: NAME is N lines" for every function
# of PRODUCT whose body, from its { to its }, is over MAX_FUNC lines.
# Bodies are found by brace depth (comments, literals and preprocessor
# lines skipped) and cross-checked with the tree's convention: a body
# opens with { alone at column 0 and closes with } alone at column 0
# (or the whole function is one line). A file the finder cannot read
# that way is reported, so no function goes unmeasured.
long_functions() {
	# shellcheck disable=SC2086
	python3 - "$1" "$MAX_FUNC" "$KNOWN_LONG" $PRODUCT <<'PY'
import os, re, sys
root, limit, known = sys.argv[1], int(sys.argv[2]), sys.argv[3]
known = {tuple(k.split()) for k in known.splitlines() if k.strip()}
IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")

def functions(path):
    """[(name, open line, close line)] of the file's function bodies."""
    src = open(path, encoding="utf-8", errors="replace").read()
    i, n, line, bol = 0, len(src), 1, True
    depth = parens = 0
    prev, last, name, cur, out = ";", None, None, None, []
    def fail(what):
        raise ValueError("%s:%d: cannot measure: %s" % (path, line, what))
    while i < n:
        c = src[i]
        if c == "\n":
            line, i, bol = line + 1, i + 1, True
            continue
        if c in " \t\r\f\v":
            i += 1
            continue
        if bol and c == "#":            # a directive, continuations too
            while i < n and src[i] != "\n":
                if src.startswith("\\\n", i):
                    line, i = line + 1, i + 1
                i += 1
            continue
        bol = False
        if src.startswith("//", i):
            while i < n and src[i] != "\n":
                i += 1
            continue
        if src.startswith("/*", i):
            j = src.find("*/", i + 2)
            if j < 0:
                fail("unterminated comment")
            line, i = line + src.count("\n", i, j), j + 2
            continue
        if c in "\"'":
            j = i + 1
            while j < n and src[j] != c:
                j += 2 if src[j] == "\\" else 1
                if j >= n or src[j - 1] == "\n":
                    fail("unterminated literal")
            i = j + 1
            continue
        m = IDENT.match(src, i)
        if m:
            if depth == 0:
                last, prev = m.group(0), "id"
            i = m.end()
            continue
        if c == "{":
            if depth == 0:
                cur = (name or "?", line) if prev == ")" else None
            depth += 1
        elif c == "}":
            depth -= 1
            if depth < 0:
                fail("} without {")
            if depth == 0:
                if cur:
                    out.append((cur[0], cur[1], line))
                cur, prev, name = None, "}", None
        elif depth == 0:
            if c == "(":
                if parens == 0 and name is None and last != "__attribute__":
                    name = last
                parens += 1
            elif c == ")":
                parens -= 1
            elif c == ";":
                name = None
            prev = c
        i += 1
    if depth:
        fail("%d { never closed" % depth)
    return out

for d in sys.argv[4:]:
    for dirpath, dirs, files in os.walk(os.path.join(root, d)):
        dirs.sort()
        for f in sorted(files):
            if not f.endswith((".c", ".h")):
                continue
            path = os.path.join(dirpath, f)
            rel = os.path.relpath(path, root)
            try:
                funcs = functions(path)
            except ValueError as e:
                print(str(e).replace(root + "/", "", 1))
                continue
            text = open(path, encoding="utf-8", errors="replace").read()
            lines = text.split("\n")
            multi = [fn for fn in funcs if fn[1] != fn[2]]
            for name, o, c in multi:
                if lines[o - 1] != "{" or lines[c - 1] != "}":
                    print("%s:%d: cannot measure: %s's body does not open "
                          "and close with { and } alone at column 0"
                          % (rel, o, name))
            opens = sum(1 for l in lines if l == "{")
            closes = sum(1 for l in lines if l == "}")
            if opens != len(multi) or closes != len(multi):
                print("%s: cannot measure: %d lines are { alone, %d are } "
                      "alone, %d function bodies span lines"
                      % (rel, opens, closes, len(multi)))
            for name, o, c in funcs:
                long = c - o + 1 > limit
                if (rel, name) in known:
                    known.discard((rel, name))
                    if not long:
                        print("%s:%d: %s is %d lines now: remove it from "
                              "KNOWN_LONG" % (rel, o, name, c - o + 1))
                elif long:
                    print("%s:%d: %s is %d lines" % (rel, o, name, c - o + 1))
for k in sorted(known):
    print("%s: KNOWN_LONG names %s, which is not there" % k)
PY
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

# plant_function NAME BODY_LINES: a C function whose body, braces
# included, is BODY_LINES lines long.
plant_function() {
	local i

	printf 'int %s(int x)\n{\n' "$1"
	for ((i = 2; i < $2; i++)); do
		printf '\tx += %d; /* { */\n' "$i"
	done
	printf '}\n'
}

# functions_short: no function of the product over MAX_FUNC lines but
# KNOWN_LONG's. Planted: a MAX_FUNC + 1-line body is caught while a
# MAX_FUNC-line one and a one-line function pass; a known long function
# is let pass, and reported once short; a body opened on its signature's
# line is reported.
if ! command -v python3 >/dev/null; then
	result 1 "no product function is longer than $MAX_FUNC lines" "needs python3"
else
	mapfile -t found < <(long_functions "$top_srcdir")
	result "${#found[@]}" \
		"no product function is longer than $MAX_FUNC lines" "${found[@]}"
	mkdir -p "$tmp/plantf/common" "$tmp/plantf/ctl"
	{
		plant_function at_limit "$MAX_FUNC"
		echo 'static const char *s = "}";'
		plant_function over_limit $((MAX_FUNC + 1))
		echo 'static int one(void) { return 1; }'
	} >"$tmp/plantf/common/long.c"
	out=$(KNOWN_LONG='' long_functions "$tmp/plantf")
	want="common/long.c:$((MAX_FUNC + 4)): over_limit is $((MAX_FUNC + 1)) lines"
	result "$([ "$out" = "$want" ] && echo 0 || echo 1)" \
		"a planted $((MAX_FUNC + 1))-line function is caught, a $MAX_FUNC-line one passes" \
		"${out:-not caught}"
	printf 'int main(void)\n{\n\treturn 0;\n}\n' >"$tmp/plantf/ctl/tcqctl.c"
	out=$(KNOWN_LONG='common/long.c over_limit
ctl/tcqctl.c main' long_functions "$tmp/plantf")
	want="ctl/tcqctl.c:2: main is 3 lines now: remove it from KNOWN_LONG"
	result "$([ "$out" = "$want" ] && echo 0 || echo 1)" \
		"a known long function is let pass, and reported once it is short" \
		"${out:-not reported}"
	printf 'int f(void) {\n\treturn 0;\n}\n' >"$tmp/plantf/common/long.c"
	mapfile -t found < <(KNOWN_LONG='' long_functions "$tmp/plantf")
	result "$(grep -q '^common/long.c:1: cannot measure' <<<"${found[0]:-}" && echo 0 || echo 1)" \
		"a body that breaks the { and } at column 0 convention is reported" \
		"${found[@]:-not reported}"
fi

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
