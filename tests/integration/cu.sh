# shellcheck shell=bash
# libiscsi's conformance suite (iscsi-test-cu) for conformance.sh,
# gateways.sh and rbd.sh (source lib.sh first): what a pattern names, one
# run, and one line per test that the run reported.
#
#   cu_shim              builds cuskip.so (cuskip.c) into CUSKIP, or fails
#   cu_tests PATTERN...  FAMILY.SUITE.TEST of every test the patterns name
#                        (iscsi-test-cu -l), in order; a pattern is a test,
#                        a suite or a family (ALL.* is the family that has
#                        the suite)
#   cu_run LOG ARGS...   iscsi-test-cu ARGS with the shim, output in LOG
#                        (the shim's in LOG.cuskip), its status in LOG.rc
#   cu_results LOG FAM   one line per test the run reported:
#                        FAM.SUITE.TEST<TAB>passed|failed|skipped|partial
#                        <TAB>why, and NOSUMMARY when the run has no CUnit
#                        summary
#
# Skips: a test that skips itself says "[SKIPPED]" in its output, or only
# calls CU_PASS (cuskip.so records each CU_PASS with how many asserts came
# before: none, it did not run at all, "skipped"; some, it skipped a part
# of itself, "partial"). Neither is a pass.

CUSKIP=

cu_shim() {
	[ -n "$CUSKIP" ] && return 0
	"${CUSKIP_CC:-cc}" -shared -fPIC -O1 -o "$TEST_TMP/cuskip.so" \
		"$top_srcdir/tests/integration/cuskip.c" -ldl \
		2>"$TEST_TMP/cuskip.err" ||
		fail "cannot build cuskip.so, so skips would go unseen: $(cat "$TEST_TMP/cuskip.err")"
	CUSKIP=$TEST_TMP/cuskip.so
}

cu_tests() {
	local p
	for p in "$@"; do
		p=${p#ALL.}
		iscsi-test-cu -l | awk -F. -v p="$p" '
			NF == 3 && ($1 == "SCSI" || $1 == "iSCSI") {
				t = $0; st = $2 "." $3
				if (p == "ALL" || t == p || index(t, p ".") == 1 ||
				    st == p || index(st, p ".") == 1) print t
			}'
	done
}

cu_run() {
	local log=$1 rc=0
	shift
	cu_shim
	: >"$log.cuskip"
	CUSKIP_LOG=$log.cuskip LD_PRELOAD=$CUSKIP tc iscsi-test-cu "$@" \
		>"$log" 2>&1 || rc=$?
	echo "$rc" >"$log.rc"
}

# CUnit's basic output: "Suite: S", "  Test: T ...", the test's own lines,
# then "passed" or "FAILED" (the latter followed by the failed asserts);
# "Run Summary:" ends it. [SKIPPED] between a test's start and its result
# is the test skipping itself.
cu_results() {
	awk -v fam="$2" -v skipf="$1.cuskip" '
		BEGIN { FS = "\t"
			while ((getline l < skipf) > 0) {
				split(l, a, "\t")
				r = a[3]; sub(/^CU_PASS\(/, "", r); sub(/\)$/, "", r)
				gsub(/" *"/, "", r); gsub(/"/, "", r)
				if (!(a[1] in cup)) {
					cup[a[1]] = r " (" a[2] ")"
					part[a[1]] = a[4] + 0 > 0 }
			} FS = " " }
		function finish(res) {
			if (test == "") return
			why = ""
			if (res == "passed" && skipmsg != "") { res = "skipped"; why = skipmsg }
			else if (res == "passed" && ((suite "." test) in cup)) {
				# after real asserts: only the rest was skipped
				res = part[suite "." test] ? "partial" : "skipped"
				why = cup[suite "." test] }
			else if (res == "failed") why = failmsg
			printf "%s.%s.%s\t%s\t%s\n", fam, suite, test, res, why
			test = ""
		}
		/^Suite: / { finish("passed"); suite = $2; next }
		/^Run Summary:/ { finish("passed"); summary = 1; next }
		/^  Test: / { finish("passed"); test = $2; skipmsg = ""; failmsg = ""
			rest = substr($0, index($0, "...") + 3) }
		test != "" {
			line = ($0 ~ /^  Test: /) ? rest : $0
			if (line ~ /\[SKIPPED\]/ && skipmsg == "")
				skipmsg = substr(line, index(line, "[SKIPPED]"))
			if (line ~ /\[FAILED\]/ && failmsg == "")
				failmsg = substr(line, index(line, "[FAILED]"))
			if (line ~ /(^|\.\.\.)FAILED$/) {
				if (failmsg == "") failmsg = "FAILED"
				finish("failed"); next }
			if (line ~ /(^|\.\.\.)passed$/) { finish("passed"); next }
		}
		END { if (!summary) print "NOSUMMARY" }
	' "$1"
}
