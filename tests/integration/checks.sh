# shellcheck shell=bash
# The check runner of the integration tests (sourced by lib.sh): every
# behaviour is a check of its own that passes or fails on its own TAP line
# (automake's tap-driver.sh turns each into a PASS/FAIL/SKIP of its own).
#
# A script lists its checks, in the order they run, in CHECKS and ends
# with run_checks "$@". An entry is
#   NAME         the shell function NAME is the check
#   FN:NAME      the check NAME runs "FN NAME" (e.g. a C driver's case)
#   @FIXTURE     the checks that follow, up to the next @ entry (a lone @
#                ends the group), share what the function fixture_FIXTURE
#                sets up (a tcqd, say). It runs before the first of them
#                that is selected; after the last one, teardown_FIXTURE
#                (default: stop_tcqd) is the check FIXTURE_stops_cleanly.
#                When the fixture fails, each of its checks fails with
#                the reason; the groups after it still run.
#
# A check named in DEVIATION (an associative array: NAME -> how tcqd
# departs from the specification) still runs, as a TAP TODO: its failure
# is an expected one (XFAIL) that does not fail the run, and once tcqd is
# fixed its pass (XPASS) does, until the entry goes.
#
# A check passes when it returns having asserted something (ok ...), fails
# at its first fail ..., and skips with skip ...: under scripts/check and
# whenever CI=true (TCQ_SKIPS_FAIL=1), where every tool is installed, a
# skip is a failure. Each check runs in a subshell: what it starts itself
# (a tcqd, background clients in BG_PIDS) is stopped when it ends; on a
# failure the tcqd log lines written during the check are shown.
#
# listing "$@": the script was asked for --list only (it may then leave
# out a costly set-up of its own, a Ceph cluster, say).
#
# One check, or a few, by name (shell patterns allowed):
#   bash tests/integration/auth.sh chap_md5_wrong_secret_refused_0201
#   TCQ_CHECK='chap_*' make check TESTS=tests/integration/auth.sh
# and --list prints the names.

CTX=script		# script | fixture | check
OK_COUNT=0
BG_PIDS=()
declare -A LOG_MARK=()
TAP_FD=1
TAP_FAILED=0
declare -A DEVIATION=()

listing() { [ "${1:-}" = --list ]; }

skips_fail() { [ "${TCQ_SKIPS_FAIL:-0}" = 1 ] || [ "${CI:-}" = true ]; }

# tap_plan N / tap_result ok|fail|skip|todo|xpass NAME [REASON]: TAP lines
# for scripts that produce their own results (conformance.sh).
tap_plan() { printf '1..%s\n' "$1" >&"$TAP_FD"; }
tap_result() {
	local what=$1 name=${2//#/_} why=${3:-}

	why=${why//#/_}
	why=${why//$'\n'/ }
	case $what in
	ok) printf 'ok - %s\n' "$name" ;;
	skip)
		if skips_fail; then
			printf 'not ok - %s # SKIP %s (a skip fails here: every tool is installed)\n' \
				"$name" "$why"
			TAP_FAILED=1
		else
			printf 'ok - %s # SKIP %s\n' "$name" "$why"
		fi ;;
	todo) printf 'not ok - %s # TODO %s\n' "$name" "$why" ;;
	xpass)
		printf 'ok - %s # TODO %s\n' "$name" "$why"
		TAP_FAILED=1 ;;
	*)
		printf 'not ok - %s\n' "$name"
		[ -n "$why" ] && printf '# %s: %s\n' "$name" "$why"
		TAP_FAILED=1 ;;
	esac >&"$TAP_FD"
}

# Remembers how long each tcqd log is, so that a failing check shows only
# what was logged while it ran.
log_mark() {
	local f
	LOG_MARK=()
	for f in "$TEST_TMP"/tcqd*.log "$TEST_TMP"/guest.*.log; do
		[ -f "$f" ] && LOG_MARK[$f]=$(stat -c %s "$f")
	done
}

# Prints the tcqd logs of this test (on failure), and the console of a
# guest (tests/guest/guest.sh): from the mark on, at most the last 200
# lines of each.
dump_logs() {
	local f from
	for f in "$TEST_TMP"/tcqd.*.log "$TEST_TMP"/tcqd.*.out \
		"$TEST_TMP"/guest.*.log; do
		[ -s "$f" ] || continue
		from=${LOG_MARK[$f]:-0}
		[ "$(stat -c %s "$f")" -gt "$from" ] || continue
		printf -- '----- %s%s -----\n' "$(basename "$f")" \
			"$([ "$from" -gt 0 ] && echo " (from byte $from)")"
		tail -c +"$((from + 1))" "$f" | tail -n 200
	done
}

# The message of a failure or skip, for the TAP line.
note_set() { printf '%s\n' "$*" >"$TEST_TMP/.note"; }
note_get() { cat "$TEST_TMP/.note" 2>/dev/null; rm -f "$TEST_TMP/.note"; }

fail() {
	say "FAIL: $*"
	case $CTX in
	check)
		note_set "$*"
		exit 1 ;;
	fixture)
		note_set "$*"
		dump_logs
		exit 1 ;;
	*)
		dump_logs
		LOGS_DUMPED=1
		printf 'Bail out! %s\n' "$*" >&"$TAP_FD"
		exit 1 ;;
	esac
}

skip() {
	say "SKIP: $*"
	case $CTX in
	check | fixture)
		note_set "$*"
		exit 77 ;;
	*)
		if skips_fail; then
			printf 'Bail out! skipped, and a skip fails here (every tool is installed): %s\n' \
				"$*" >&"$TAP_FD"
			exit 1
		fi
		printf '1..0 # SKIP %s\n' "$*" >&"$TAP_FD"
		exit 0 ;;
	esac
}

ok() {
	say "ok: $*"
	OK_COUNT=$((OK_COUNT + 1))
}

# Ends the check's own processes: background clients (SIGKILL), and a
# tcqd it started itself (not the fixture's) with SIGTERM (tcqd_end). A
# check that passed fails when a tcqd of the test logged a sanitizer
# report while it ran (lib.sh, san_reports).
check_exit() {
	local rc=$? pid san
	trap - EXIT
	for pid in "${BG_PIDS[@]}"; do
		kill -KILL "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
	done
	if [ -n "$TCQD_PID" ] && [ "$TCQD_PID" != "$CHECK_FIXTURE_PID" ]; then
		tcqd_end "$TCQD_PID"
	fi
	# What else the script starts (gateways.sh) goes the same way.
	declare -F exit_hook >/dev/null && exit_hook
	if [ "$rc" -eq 0 ]; then
		san=$(san_reports)
		if [ -n "$san" ]; then
			say "FAIL: sanitizer report: $san"
			note_set "sanitizer report: $san"
			rc=1
		fi
	fi
	[ "$rc" -ne 0 ] && [ "$rc" -ne 77 ] && dump_logs
	exit "$rc"
}

# run_check NAME CMD...: one check in a subshell, its output as TAP
# comments, then its result line.
run_check() {
	local name=$1 rc
	shift
	log_mark
	rm -f "$TEST_TMP/.note"
	(
		CTX=check OK_COUNT=0 BG_PIDS=()
		CHECK_FIXTURE_PID=$TCQD_PID
		trap check_exit EXIT
		say "----- $name"
		"$@"
		rc=$?
		[ "$rc" -eq 0 ] || fail "check returned status $rc"
		[ "$OK_COUNT" -gt 0 ] || fail "the check asserted nothing"
		exit 0
	) 2>&1 | sed -u 's/^/# /'
	rc=${PIPESTATUS[0]}
	if [ -n "${DEVIATION[$name]:-}" ]; then
		note_get >/dev/null
		[ "$rc" -eq 0 ] && tap_result xpass "$name" "passes now: take it off DEVIATION"
		[ "$rc" -ne 0 ] && tap_result todo "$name" "known deviation: ${DEVIATION[$name]}"
		return
	fi
	case $rc in
	0) tap_result ok "$name" ;;
	77) tap_result skip "$name" "$(note_get)" ;;
	*) tap_result fail "$name" "$(note_get)" ;;
	esac
}

# Reports every check of a group not reported yet as failed (the fixture
# or its teardown failed), and stops what the fixture left running.
group_exit() {
	local rc=$? why i
	trap - EXIT
	# To the TAP stream: a fixture that failed is still inside
	# in_fixture's redirection, and sed appending the file to itself
	# never reaches its end (it filled the disk).
	[ -s "$TEST_TMP/.fixture.out" ] && sed 's/^/# /' "$TEST_TMP/.fixture.out" >&"$TAP_FD"
	: >"$TEST_TMP/.fixture.out"
	why=$(note_get)
	[ "$rc" -eq 77 ] && why="fixture skipped: $why"
	for ((i = GROUP_DONE; i < ${#GROUP_CHECKS[@]}; i++)); do
		if [ "$rc" -eq 77 ]; then
			tap_result skip "${GROUP_CHECKS[$i]}" "$why"
		else
			tap_result fail "${GROUP_CHECKS[$i]}" \
				"fixture $GROUP_FIXTURE failed: ${why:-status $rc}"
		fi
	done
	[ -n "$TCQD_PID" ] && tcqd_end "$TCQD_PID"
	declare -F exit_hook >/dev/null && exit_hook
	exit "$TAP_FAILED"
}

# in_fixture FN: runs FN in the group's shell (what it sets stays), its
# output kept for the log; a fail in it ends the group (group_exit).
in_fixture() {
	log_mark
	"$@" >>"$TEST_TMP/.fixture.out" 2>&1
	sed 's/^/# /' "$TEST_TMP/.fixture.out"
	: >"$TEST_TMP/.fixture.out"
}

default_teardown() {
	stop_tcqd
}

# run_group FIXTURE "CHECK=CMD"...: in a subshell.
run_group() {
	local fix=$1 e teardown=default_teardown
	shift
	CTX=fixture GROUP_FIXTURE=$fix GROUP_DONE=0 GROUP_CHECKS=()
	for e in "$@"; do GROUP_CHECKS+=("${e%%=*}"); done
	GROUP_CHECKS+=("${fix}_stops_cleanly")
	trap group_exit EXIT
	: >"$TEST_TMP/.fixture.out"
	in_fixture "fixture_$fix"
	for e in "$@"; do
		# shellcheck disable=SC2086  # CMD is a function and its words
		run_check "${e%%=*}" ${e#*=}
		GROUP_DONE=$((GROUP_DONE + 1))
	done
	declare -F "teardown_$fix" >/dev/null && teardown=teardown_$fix
	in_fixture "$teardown"
	tap_result ok "${fix}_stops_cleanly"
	GROUP_DONE=$((GROUP_DONE + 1))
	exit "$TAP_FAILED"
}

# selected NAME: whether NAME was asked for (all when no names were).
selected() {
	local p
	[ "${#SELECT[@]}" -eq 0 ] && return 0
	for p in "${SELECT[@]}"; do
		# shellcheck disable=SC2053  # p is a pattern
		[[ $1 == $p ]] && { USED[$p]=1; return 0; }
	done
	return 1
}

run_checks() {
	local e name cmd fix='' n=0 i list=0 rc
	local -a names=() cmds=() fixes=() order=()
	declare -gA USED=()
	SELECT=()
	[ "${1:-}" = --list ] && { list=1; shift; }
	if [ $# -gt 0 ]; then
		SELECT=("$@")
	elif [ -n "${TCQ_CHECK:-}" ]; then
		read -r -a SELECT <<<"${TCQ_CHECK//,/ }"
	fi
	for e in "${CHECKS[@]}"; do
		case $e in
		@*) fix=${e#@}; continue ;;
		*:*) name=${e#*:} cmd="${e%%:*} $name" ;;
		*) name=$e cmd=$e ;;
		esac
		declare -F "${cmd%% *}" >/dev/null ||
			fail "check $name: no function ${cmd%% *}"
		if [ "$list" = 1 ]; then
			echo "$name"
			continue
		fi
		selected "$name" || continue
		names+=("$name") cmds+=("$cmd") fixes+=("$fix")
	done
	[ "$list" = 1 ] && exit 0
	# shellcheck disable=SC2034  # read by lib_cleanup
	LOGS_DUMPED=1	# each failing check shows its own
	for e in "${SELECT[@]}"; do
		[ -n "${USED[$e]:-}" ] || fail "no check matches '$e' (--list shows them)"
	done
	# The plan first: a run that dies early is an error, not a pass.
	n=${#names[@]}
	fix=
	for ((i = 0; i < ${#names[@]}; i++)); do
		[ -n "${fixes[$i]}" ] && [ "${fixes[$i]}" != "$fix" ] && n=$((n + 1))
		fix=${fixes[$i]}
	done
	exec 7>&1
	TAP_FD=7
	tap_plan "$n"
	i=0
	while [ "$i" -lt "${#names[@]}" ]; do
		fix=${fixes[$i]}
		if [ -z "$fix" ]; then
			# shellcheck disable=SC2086  # CMD is a function and its words
			run_check "${names[$i]}" ${cmds[$i]}
			i=$((i + 1))
			continue
		fi
		order=()
		while [ "$i" -lt "${#names[@]}" ] && [ "${fixes[$i]}" = "$fix" ]; do
			order+=("${names[$i]}=${cmds[$i]}")
			i=$((i + 1))
		done
		rc=0
		(run_group "$fix" "${order[@]}") || rc=$?
		[ "$rc" -eq 0 ] || TAP_FAILED=1
	done
	exit "$TAP_FAILED"
}
