#!/bin/bash
# Live changes against a running tcqd with sessions up (target/live.c):
# LUNs added, resized and removed while a libiscsi session watches for
# the unit attentions SPC-4 asks for (3F/0E, 2A/09) and LOGICAL UNIT NOT
# SUPPORTED (25/00) after a removal; busy LUNs and targets with sessions
# refused unless --force; targets, portals, ACLs and CHAP changed with
# libiscsi's tools logging in; every refused change changes nothing;
# save + restart gives the same running configuration; reload and SIGHUP
# apply an edited file and leave a session up, and a bad file changes
# nothing and names file:line. A forced removal aborts the task in flight;
# mutual CHAP set live; save with no FILE rewrites the -c file. In a tcqd
# of its own (@reload): a reload that removes a LUN, a target, a portal
# and an ACL entry makes each go live, one that would remove a busy LUN
# or a target with a session is refused whole, and a target it does not
# touch keeps its sessions without a unit attention.
# shellcheck source=tests/integration/lib.sh
shopt -s extglob
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

TCQCTL=${TCQCTL:-$top_builddir/tcqctl}
LIVECDB=${LIVECDB:-$top_builddir/tests/integration/livecdb}
BENCH=${BENCH:-$top_builddir/tcq-bench}
CHAPCLIENT=${CHAPCLIENT:-$top_builddir/tests/integration/chapclient}
need_built "$TCQCTL" "$LIVECDB" "$BENCH" "$CHAPCLIENT"

SOCK=$TEST_TMP/ctl.sock
CONF=$TEST_TMP/tcqd.conf
T=iqn.2026-11.org.tcq:live
T2=iqn.2026-11.org.tcq:live-two
T3=iqn.2026-11.org.tcq:live-mutual
TUR=000000000000
RLUNS=a00000000000000001000000:256	# REPORT LUNS, 256 bytes
RCAP10=25000000000000000000:8		# READ CAPACITY(10)
UA_LUNS="CHECK CONDITION key=0x6 asc=0x3f ascq=0x0e"
UA_CAP="CHECK CONDITION key=0x6 asc=0x2a ascq=0x09"
NOT_SUPPORTED="CHECK CONDITION key=0x5 asc=0x25 ascq=0x00"

ctl() { run "$TCQCTL" --ctl "$SOCK" "$@"; }
# refused WANT ARGS...: tcqctl ARGS fails (status 1) saying WANT.
refused() {
	local want=$1 rc=0
	shift
	ctl "$@" || rc=$?
	[ "$rc" -eq 1 ] || fail "tcqctl $*: status $rc, expected 1"
	[[ $OUT == *"$want"* ]] || fail "tcqctl $*: message lacks '$want'"
}
config_now() { tc "$TCQCTL" --ctl "$SOCK" config; }

# ---- a session that watches (lib.sh: watch_start, watch, watch_settle) ------
# expect_answer LINE WANT WHAT
expect_answer() {
	watch "$1"
	[ "$ANS" = "$2" ] || fail "$3: '$1' answered '$ANS', expected '$2'"
	ok "$3"
}

fixture_live() {
	tcqd_conf "$CONF" "$T" 8M "ctl = $SOCK" "state_dir = $TEST_TMP"
	chmod 600 "$CONF"
	start_tcqd -c "$CONF"
}

# ---- LUNs ---------------------------------------------------------------------
lun_add_reports_luns_changed() {
	watch_start "$TCQD_URL"
	watch_settle 0
	ctl lun add "$T/1" path="$TEST_TMP/lun1.img" size=8M create=yes ||
		fail "lun add: $OUT"
	[[ $OUT == *"LUN $T/1 added"* ]] || fail "lun add does not say what it did"
	expect_answer "0 $TUR" "$UA_LUNS" \
		"the open session's next command gets REPORTED LUNS DATA HAS CHANGED"
	expect_answer "0 $RLUNS" \
		"GOOD 000000100000000000000000000000000001000000000000" \
		"REPORT LUNS lists LUN 0 and the new LUN 1"
	watch_settle 1
	expect_answer "1 $RCAP10" "GOOD 00003fff00000200" \
		"the new LUN has 16384 blocks of 512 bytes"
}

lun_resize_reports_capacity_changed() {
	watch_start "$TCQD_URL"
	watch_settle 1
	ctl lun resize "$T/1" 12M || fail "lun resize: $OUT"
	[ "$(stat -c %s "$TEST_TMP/lun1.img")" = 12582912 ] ||
		fail "the file did not grow to 12 MiB"
	expect_answer "1 $TUR" "$UA_CAP" \
		"the open session gets CAPACITY DATA HAS CHANGED"
	expect_answer "1 $RCAP10" "GOOD 00005fff00000200" \
		"READ CAPACITY shows 24576 blocks"
}

lun_shrink_needs_the_flag() {
	refused "--shrink" lun resize "$T/1" 4M
	[ "$(stat -c %s "$TEST_TMP/lun1.img")" = 12582912 ] ||
		fail "a refused shrink changed the file"
	ok "a shrink without --shrink is refused and the file stays 12 MiB"
	ctl lun resize "$T/1" 4M --shrink || fail "lun resize --shrink: $OUT"
	[ "$(stat -c %s "$TEST_TMP/lun1.img")" = 4194304 ] ||
		fail "the file did not shrink to 4 MiB"
	ok "with --shrink the file is 4 MiB"
}

bad_changes_change_nothing() {
	local before
	before=$(config_now) || fail "tcqctl config failed"
	refused "$TEST_TMP/none/x.img" lun add "$T/2" path="$TEST_TMP/none/x.img" size=1M
	refused "unknown key 'colour'" lun add "$T/2" path="$TEST_TMP/x.img" colour=blue
	refused "not a multiple of block_size" lun add "$T/2" path="$TEST_TMP/x.img" size=1000 create=yes
	refused "'queue_depth'" set "$T/0" queue_depth=0 barrier=flush
	refused "duplicate LUN 1" lun add "$T/1" path="$TEST_TMP/x.img" size=1M create=yes
	refused "no target" lun add iqn.2026-11.org.tcq:nope/0 backend=null size=1M
	cp "$CONF" "$CONF.keep"
	sed -i 's/^threads = 2/threads = 1/' "$CONF"
	refused "[global] threads changes only with a restart" reload
	mv "$CONF.keep" "$CONF"
	[ "$(config_now)" = "$before" ] || fail "a refused change changed the configuration"
	[ ! -e "$TEST_TMP/x.img" ] || fail "a refused change created a file"
	ok "every refused change names its cause and changes nothing"
}

lun_remove_gives_not_supported() {
	watch_start "$TCQD_URL"
	watch_settle 0
	watch_settle 1
	ctl lun remove "$T/1" || fail "lun remove: $OUT"
	expect_answer "1 $TUR" "$NOT_SUPPORTED" \
		"a command to the removed LUN gets LOGICAL UNIT NOT SUPPORTED"
	expect_answer "0 $TUR" "$UA_LUNS" \
		"the other LUN's nexus gets REPORTED LUNS DATA HAS CHANGED"
	expect_answer "0 $RLUNS" "GOOD 00000008000000000000000000000000" \
		"REPORT LUNS lists LUN 0 only"
}

# A LUN whose commands take 1.5 s keeps tasks in flight while tcq-bench
# reads from it.
busy_lun_remove_refused_then_forced() {
	ctl lun add "$T/3" backend=delay:latency=1500ms,base=null size=64M ||
		fail "lun add: $OUT"
	"$BENCH" --quiet --rw randread --bs 4k --depth 8 --runtime 4 \
		"iscsi://$TCQD_PORTAL/$T/3" >"$TEST_TMP/bench.out" 2>&1 &
	BG_PIDS+=($!)
	wait_until 50 busy_now || fail "no tasks in flight on LUN 3"
	refused "in flight" lun remove "$T/3"
	ok "removing a LUN with tasks in flight is refused"
	ctl lun remove "$T/3" --force || fail "lun remove --force: $OUT"
	ctl luns
	[[ $OUT != *"$T/3"* ]] || fail "LUN 3 is still listed"
	kill -0 "$TCQD_PID" || fail "tcqd died"
	ok "--force removes it; tcqd keeps serving"
}
busy_now() { lun_busy "$T/3"; }
# lun_busy LUN: tcqctl stats shows tasks in flight on LUN.
lun_busy() {
	OUT=$(tc "$TCQCTL" --ctl "$SOCK" stats "$1" 2>&1) &&
		[[ $OUT =~ in\ flight\ +now\ [1-9] ]]
}

# What busy_lun_remove_refused_then_forced leaves out: the task in
# flight is aborted as a LUN reset aborts them (SAM-5 5.6: with TAS=0,
# the Control mode page default, a task aborted for another nexus ends
# without status), it never completes, and the session goes on: its
# next commands to that LUN get LOGICAL UNIT NOT SUPPORTED.
READ10=28000000000000000100:512		# READ(10) of LBA 0, one block
async_answered() { watch pending; [ "$ANS" != PENDING ]; }
forced_lun_remove_aborts_tasks_in_flight() {
	ctl lun add "$T/6" backend=delay:latency=1500ms,base=null size=1M ||
		fail "lun add: $OUT"
	watch_start "$TCQD_URL"
	watch_settle 0
	watch_settle 6
	# The control: the same READ to LUN 0, which nothing aborts, is
	# answered, and "pending" shows it (a removal that did not abort
	# would show up the same way).
	watch "&0 $READ10"
	[ "$ANS" = SENT ] || fail "livecdb could not send the READ: $ANS"
	wait_until 50 async_answered || fail "the READ to LUN 0 got no answer"
	[[ $ANS == "ASYNC GOOD "* ]] || fail "the READ to LUN 0: $ANS"
	ok "control: a READ sent the same way to LUN 0 is answered GOOD"
	watch "&6 $READ10"
	[ "$ANS" = SENT ] || fail "livecdb could not send the READ: $ANS"
	wait_until 50 lun_busy "$T/6" || fail "the READ is not in flight on LUN 6"
	ctl lun remove "$T/6" --force || fail "lun remove --force: $OUT"
	# tcqd logs "T/6: removed" once no reactor holds a task of the LUN
	# any more: the READ's 1.5 s in the backend are over, and a status
	# would have been sent by then.
	wait_until 100 log_grep -qF "$T/6: removed" ||
		fail "LUN 6 is still held 10 s after its removal"
	expect_answer pending PENDING \
		"the READ in flight got no status: aborted, not completed"
	expect_answer "6 $READ10" "$NOT_SUPPORTED" \
		"a READ to the removed LUN gets LOGICAL UNIT NOT SUPPORTED"
	expect_answer "6 $TUR" "$NOT_SUPPORTED" "so does TEST UNIT READY"
	expect_answer pending PENDING "the aborted READ stays unanswered"
	expect_answer "0 $TUR" "$UA_LUNS" \
		"the same session goes on: LUN 0 reports the removal"
}

# ---- targets, portals, ACLs, CHAP -------------------------------------------
target_add_serves_logins() {
	ctl target add "$T2" alias=second || fail "target add: $OUT"
	ctl lun add "$T2/0" backend=null size=64M || fail "lun add: $OUT"
	run iscsi-readcapacity16 -i "$INITIATOR" "iscsi://$TCQD_PORTAL/$T2/0" ||
		fail "iscsi-readcapacity16 on the new target failed"
	grep -q "Total size:67108864" <<<"$OUT" || fail "size is not 64 MiB"
	run iscsi-ls -i "$INITIATOR" "iscsi://$TCQD_PORTAL" || fail "iscsi-ls failed"
	grep -q "Target:$T2" <<<"$OUT" || fail "discovery does not list $T2"
	ok "a target added live serves logins and is listed by SendTargets"
}

acl_changes_live() {
	ctl acl add "$T2" iqn.2026-11.org.tcq:someone-else || fail "acl add: $OUT"
	login_refused 0x0202 "an initiator outside the new ACL" \
		iscsi-inq -i "$INITIATOR" "iscsi://$TCQD_PORTAL/$T2/0"
	tcqd_alive
	ctl acl add "$T2" "$INITIATOR" || fail "acl add: $OUT"
	run iscsi-inq -i "$INITIATOR" "iscsi://$TCQD_PORTAL/$T2/0" ||
		fail "an initiator added to the ACL cannot log in"
	ctl acl remove "$T2" iqn.2026-11.org.tcq:someone-else || fail "acl remove: $OUT"
	ctl acl remove "$T2" "$INITIATOR" || fail "acl remove: $OUT"
	refused "not in its ACL" acl remove "$T2" "$INITIATOR"
	ok "ACL entries added and removed live decide the next logins"
}

chap_changes_live() {
	ctl chap set "$T2" user=live-user secret=live-secret-0001 ||
		fail "chap set: $OUT"
	login_refused 0x0201 "a login without CHAP" \
		iscsi-inq -i "$INITIATOR" "iscsi://$TCQD_PORTAL/$T2/0"
	tcqd_alive
	run iscsi-inq -i "$INITIATOR" \
		"iscsi://live-user%live-secret-0001@$TCQD_PORTAL/$T2/0" ||
		fail "a login with the new CHAP credentials failed"
	refused "secret must be" chap set "$T2" user=u secret=short
	ctl chap clear "$T2" || fail "chap clear: $OUT"
	run iscsi-inq -i "$INITIATOR" "iscsi://$TCQD_PORTAL/$T2/0" ||
		fail "after chap clear a login without CHAP failed"
	ok "CHAP set and cleared live decides the next logins"
}

target_remove_refused_with_session_then_forced() {
	watch_start "iscsi://$TCQD_PORTAL/$T2/0"
	watch_settle 0
	refused "has 1 session" target remove "$T2"
	ok "removing a target with a session is refused"
	ctl target remove "$T2" --force || fail "target remove --force: $OUT"
	wait_until 100 no_session_of "$T2" || fail "the session of $T2 is still there"
	log_has "asked to log out within 2 s" \
		"the session was sent an async logout request"
	ctl targets
	[[ $OUT != *"$T2"* ]] || fail "$T2 is still listed"
	ok "--force logs the session out and removes the target"
}
no_session_of() {
	OUT=$(tc "$TCQCTL" --ctl "$SOCK" sessions 2>&1) && [[ $OUT != *"$1"* ]]
}

portal_add_and_remove() {
	local port
	ctl portal add 127.0.0.1:0 || fail "portal add: $OUT"
	port=$(sed -n 's/^portal 127\.0\.0\.1:\([0-9]*\) added$/\1/p' <<<"$OUT")
	[ -n "$port" ] || fail "portal add does not name the port"
	run iscsi-inq -i "$INITIATOR" "iscsi://127.0.0.1:$port/$T/0" ||
		fail "no login through the new portal"
	ctl portal remove "127.0.0.1:$port" || fail "portal remove: $OUT"
	tcp_open "$port" 127.0.0.1 &&
		fail "the removed portal 127.0.0.1:$port still accepts connections"
	tcqd_alive
	refused "last portal" portal remove "$TCQD_PORTAL"
	ok "a portal added live accepts logins; removed, it does not"
}

# ---- reload ---------------------------------------------------------------------
reload_applies_the_file_and_the_session_stays() {
	local before after
	watch_start "$TCQD_URL"
	watch_settle 0
	before=$(tc "$TCQCTL" --ctl "$SOCK" sessions | grep -o 'TSIH [0-9]*')
	set_conf_qd 5
	printf '\n[lun %s 4]\nbackend = null\nsize = 16M\n' "$T" >>"$CONF"
	ctl reload || fail "reload: $OUT"
	[[ $OUT == *"LUN $T/4 added"* ]] || fail "reload did not add LUN 4"
	ctl luns "$T/0"
	[[ $OUT == *"queue_depth 5"* ]] || fail "queue_depth is not 5 after reload"
	expect_answer "0 $TUR" "$UA_LUNS" \
		"the session sees the new LUN as REPORTED LUNS DATA HAS CHANGED"
	expect_answer "0 $TUR" "GOOD -" "and keeps working"
	after=$(tc "$TCQCTL" --ctl "$SOCK" sessions | grep -o 'TSIH [0-9]*')
	[ -n "$before" ] && [ "$before" = "$after" ] ||
		fail "the session changed across the reload ($before / $after)"
	ok "the same session ($after) is up after the reload"
}

# set_conf_qd N: queue_depth = N in LUN 0's section of the file.
set_conf_qd() {
	sed -i '/^queue_depth = /d' "$CONF"
	sed -i "s/^create = yes/create = yes\nqueue_depth = $1/" "$CONF"
}

sighup_reloads() {
	set_conf_qd 6
	kill -HUP "$TCQD_PID"
	wait_until 50 qd_is 6 || fail "SIGHUP did not apply queue_depth 6"
	kill -0 "$TCQD_PID" || fail "SIGHUP killed tcqd"
	log_has "reload: LUN $T/0 settings changed" "SIGHUP reloads the file"
}
qd_is() {
	OUT=$(tc "$TCQCTL" --ctl "$SOCK" luns "$T/0" 2>&1) &&
		[[ $OUT == *"queue_depth $1 "* ]]
}

# SPC-4 6.33: REPORT LUNS tells the nexus the new inventory, so its
# REPORTED LUNS DATA HAS CHANGED goes from every LUN, not just that one.
report_luns_clears_the_ua_on_every_lun() {
	watch_start "$TCQD_URL"
	watch_settle 0
	watch_settle 4
	ctl lun add "$T/5" backend=null size=16M || fail "lun add: $OUT"
	watch "0 $RLUNS"
	[[ $ANS == GOOD* ]] || fail "REPORT LUNS: $ANS"
	expect_answer "0 $TUR" "GOOD -" "no unit attention left on LUN 0"
	expect_answer "4 $TUR" "GOOD -" "nor on LUN 4, after REPORT LUNS on LUN 0"
	ctl lun remove "$T/5" || fail "lun remove: $OUT"
	expect_answer "4 $TUR" "$UA_LUNS" "a removal is announced again"
}

reload_of_a_bad_file_changes_nothing() {
	local before line
	before=$(config_now)
	cp "$CONF" "$CONF.good"
	printf 'queue_depth = many\n' >>"$CONF"
	line=$(wc -l <"$CONF")
	refused "$CONF:$line: bad value for 'queue_depth'" reload
	mv "$CONF.good" "$CONF"
	[ "$(config_now)" = "$before" ] || fail "a refused reload changed something"
	ok "a file with an error is refused with file:line, nothing changes"
}

# ---- save ---------------------------------------------------------------------
save_and_restart_give_the_same_state() {
	local saved=$TEST_TMP/saved.conf copy=$TEST_TMP/copy.conf pid i
	local sock2=$TEST_TMP/ctl2.sock live_cfg live_luns
	ctl set "$T/0" barrier=flush write_cache=off || fail "set: $OUT"
	ctl save "$saved" || fail "save: $OUT"
	[ "$(stat -c %a "$saved")" = 600 ] || fail "the saved file is not mode 0600"
	live_cfg=$(config_now | sed "s|^ctl = .*|ctl = $sock2|")
	live_luns=$(tc "$TCQCTL" --ctl "$SOCK" luns)
	# A second tcqd from what save wrote (its own socket; its own port,
	# as listen is 127.0.0.1:0), beside the first.
	sed "s|^ctl = .*|ctl = $sock2|" "$saved" >"$copy"
	chmod 600 "$copy"
	"$TCQD" -c "$copy" >"$TEST_TMP/second.out" 2>"$TEST_TMP/tcqd.second.log" &
	pid=$!
	BG_PIDS+=("$pid")
	for ((i = 0; i < 100; i++)); do
		grep -q '^iscsi://' "$TEST_TMP/second.out" && break
		sleep 0.1
	done
	OUT=$(tc "$TCQCTL" --ctl "$sock2" config) ||
		{ cat "$TEST_TMP/tcqd.second.log"; fail "the second tcqd does not answer"; }
	[ "$OUT" = "$live_cfg" ] ||
		fail "started from the saved file, tcqd runs another configuration: $(diff <(echo "$live_cfg") <(echo "$OUT"))"
	OUT=$(tc "$TCQCTL" --ctl "$sock2" luns)
	[ "$OUT" = "$live_luns" ] && [[ $OUT == *"barrier flush  write_cache off"* ]] ||
		fail "the LUNs and their live settings differ: $OUT"
	kill -TERM "$pid"
	wait "$pid" || fail "the second tcqd did not stop cleanly"
	ok "started from what save wrote, tcqd runs the same configuration"
}

# Mutual CHAP set live (RFC 7143 12.1.3): chapclient (libiscsi, which
# checks the target's CHAP_R) logs in with the new credentials both
# ways, and refuses a target that does not prove the secret it expects.
chap_mutual_set_live() {
	local url="iscsi://$TCQD_PORTAL/$T3/0"
	ctl target add "$T3" || fail "target add: $OUT"
	ctl lun add "$T3/0" backend=null size=16M || fail "lun add: $OUT"
	ctl chap set "$T3" user=mu-init secret=mu-init-secret-1 \
		mutual_user=mu-target mutual_secret=mu-target-secret-1 ||
		fail "chap set: $OUT"
	run "$CHAPCLIENT" -u mu-init -s mu-init-secret-1 \
		-U mu-target -S mu-target-secret-1 "$url" ||
		fail "a login with mutual CHAP after chap set failed"
	[[ $OUT == *"logged in with mutual CHAP"* ]] || fail "chapclient: $OUT"
	ok "after chap set, a login with mutual CHAP succeeds"
	if run "$CHAPCLIENT" -u mu-init -s mu-init-secret-1 \
		-U mu-target -S not-the-secret-1 "$url"; then
		fail "the initiator accepted a target that answered with another secret"
	fi
	[[ $OUT == *"Invalid CHAP_R response from the target"* ]] ||
		fail "the login failed, but not on the target's CHAP_R"
	ok "an initiator expecting another target secret refuses the target's CHAP_R"
	login_refused 0x0201 "a wrong initiator secret" "$CHAPCLIENT" \
		-u mu-init -s not-the-secret-1 -U mu-target -S mu-target-secret-1 "$url"
}

# tcqctl save without FILE writes the file tcqd was started with (-c),
# 0600 as it holds CHAP secrets (T3's), and a tcqd started from it runs
# the same configuration.
save_without_file_writes_the_started_file() {
	local copy=$TEST_TMP/copy2.conf sock2=$TEST_TMP/ctl3.sock pid i live_cfg
	grep -qF "[target $T3]" "$CONF" && fail "$T3 is in the file before save"
	# The control: save to another FILE leaves the started file as it was
	# (the checks below fail on a save that writes elsewhere).
	ctl save "$TEST_TMP/elsewhere.conf" || fail "save FILE: $OUT"
	grep -qF "[target $T3]" "$TEST_TMP/elsewhere.conf" ||
		fail "save FILE lacks $T3"
	grep -qF "[target $T3]" "$CONF" && fail "save FILE wrote $T3 into $CONF too"
	ok "control: save with another FILE leaves $CONF without $T3"
	chmod 644 "$CONF"
	ctl save || fail "save: $OUT"
	[[ $OUT == *"saved to $CONF"* ]] || fail "save does not name $CONF: $OUT"
	grep -qF "[target $T3]" "$CONF" || fail "the file tcqd started with lacks $T3"
	grep -q '^mutual_chap_secret = ' "$CONF" || fail "no CHAP secret in the file"
	[ "$(stat -c %a "$CONF")" = 600 ] ||
		fail "the saved file is mode $(stat -c %a "$CONF"), not 0600"
	ok "save with no FILE rewrote $CONF, mode 0600 with CHAP secrets"
	live_cfg=$(config_now | sed "s|^ctl = .*|ctl = $sock2|")
	sed "s|^ctl = .*|ctl = $sock2|" "$CONF" >"$copy"
	chmod 600 "$copy"
	"$TCQD" -c "$copy" >"$TEST_TMP/third.out" 2>"$TEST_TMP/tcqd.third.log" &
	pid=$!
	BG_PIDS+=("$pid")
	for ((i = 0; i < 100; i++)); do
		grep -q '^iscsi://' "$TEST_TMP/third.out" && break
		sleep 0.1
	done
	OUT=$(tc "$TCQCTL" --ctl "$sock2" config) ||
		{ cat "$TEST_TMP/tcqd.third.log"; fail "a tcqd from the saved file does not answer"; }
	[ "$OUT" = "$live_cfg" ] ||
		fail "from the saved file, tcqd runs another configuration: $(diff <(echo "$live_cfg") <(echo "$OUT"))"
	kill -TERM "$pid"
	wait "$pid" || fail "the tcqd from the saved file did not stop cleanly"
	ok "a tcqd started from it has the same tcqctl config"
}

# ---- reload: what the file removed goes, what it left alone stays ------------
# A tcqd of its own: three targets (RA with an ACL of two initiators and
# LUNs 0 and 1, RB, RC), portals on 127.0.0.1 and [::1]. The file is made
# of parts (rconf PART...), so a check writes it with some left out;
# rcur lists the parts of the file as it is (a check's variables do not
# outlive it, the file does).
RA=iqn.2026-11.org.tcq:reload-a
RB=iqn.2026-11.org.tcq:reload-b
RC=iqn.2026-11.org.tcq:reload-c
RPARTS=(g g6 ra ra_acl2 ra0 ra1 ra2 ra3 ra4 rb rc)
rconf() {
	local p q
	for p in "${RPARTS[@]}"; do
		for q in "$@"; do
			[ "$p" = "$q" ] && cat "$TEST_TMP/part.$p"
		done
	done >"$CONF"
	echo "$*" >"$TEST_TMP/part.list"
}
rcur() { cat "$TEST_TMP/part.list"; }
rpart() { printf "$2" "${@:3}" >"$TEST_TMP/part.$1"; }
LUN_PART='\n[lun %s %s]\nbackend = null\nsize = 16M\n'

fixture_reload() {
	SOCK=$TEST_TMP/reload.sock CONF=$TEST_TMP/reload.conf
	TCQD_RUNS=10	# its own log files, beside the first group's
	rpart g '[global]\nlisten = 127.0.0.1:0\nthreads = 2\nctl = %s\nstate_dir = %s\n' \
		"$SOCK" "$TEST_TMP"
	rpart g6 'listen = [::1]:0\n'
	rpart ra '\n[target %s]\nallow_initiator = %s\n' "$RA" "$INITIATOR"
	rpart ra_acl2 'allow_initiator = %s\n' "$INITIATOR2"
	rpart ra0 "$LUN_PART" "$RA" 0
	rpart ra1 "$LUN_PART" "$RA" 1
	rpart ra2 "$LUN_PART" "$RA" 2
	rpart ra4 "$LUN_PART" "$RA" 4
	rpart rb "\n[target %s]$LUN_PART" "$RB" "$RB" 0
	rpart rc "\n[target %s]$LUN_PART" "$RC" "$RC" 0
	rconf g g6 ra ra_acl2 ra0 ra1 rb rc
	chmod 600 "$CONF"
	start_tcqd -c "$CONF"
	V6_PORT=$(sed -n 's/.*listening on \[::1\]:\([0-9]*\)$/\1/p' "$TCQD_LOG")
	[ -n "$V6_PORT" ] || fail "tcqd does not say its [::1] port"
}

# session_of IQN: "TSIH N ... peer ADDR:PORT" of the one session of IQN.
session_of() {
	tc "$TCQCTL" --ctl "$SOCK" sessions | grep "target $1 " |
		sed -n 's/^\(TSIH [0-9]*\) .* \(peer [^ ]*\).*/\1 \2/p'
}

reload_leaves_untouched_targets_sessions_alone() {
	local before after cur
	read -r -a cur < <(rcur)
	watch_start "iscsi://$TCQD_PORTAL/$RC/0"
	watch_settle 0
	before=$(session_of "$RC")
	[ -n "$before" ] || fail "no session of $RC listed"
	rconf "${cur[@]}" ra2
	ctl reload || fail "reload: $OUT"
	[[ $OUT == *"LUN $RA/2 added"* ]] || fail "the reload did not add $RA/2"
	expect_answer "0 $TUR" "GOOD -" \
		"the session of $RC, a target the reload did not touch, gets no unit attention"
	after=$(session_of "$RC")
	[ "$before" = "$after" ] ||
		fail "the session of $RC changed across the reload ($before / $after)"
	ok "it keeps its TSIH and connection ($after)"
}

# lun_busy_reader LUN: a tcq-bench that keeps tasks in flight on LUN.
lun_busy_reader() {
	"$BENCH" --quiet --rw randread --bs 4k --depth 8 --runtime 4 \
		--initiator-name "$INITIATOR" "iscsi://$TCQD_PORTAL/$1" \
		>"$TEST_TMP/bench2.out" 2>&1 &
	BENCH_PID=$!
	BG_PIDS+=("$BENCH_PID")
	wait_until 50 lun_busy "$1" || fail "no tasks in flight on $1"
}

reload_refused_when_busy_changes_nothing() {
	local before cur
	read -r -a cur < <(rcur)
	ctl lun add "$RA/3" backend=delay:latency=1500ms,base=null size=64M ||
		fail "lun add: $OUT"
	lun_busy_reader "$RA/3"
	before=$(config_now)
	# The file lacks LUN 3 (added live) and adds LUN 4.
	rconf "${cur[@]}" ra4
	refused "LUN $RA/3 has" reload
	[[ $OUT == *"in flight: removing it refused"* ]] ||
		fail "the refusal does not say the LUN has tasks in flight"
	[ "$(config_now)" = "$before" ] || fail "the refused reload changed something"
	ok "a reload removing a LUN with tasks in flight is refused; LUN 4 not added"
	wait "$BENCH_PID"
	ctl lun remove "$RA/3" || fail "lun remove: $OUT"
	watch_start "iscsi://$TCQD_PORTAL/$RB/0"
	watch_settle 0
	rconf "${cur[@]/rb/}"
	before=$(config_now)
	refused "target $RB has 1 session: removing it refused" reload
	[ "$(config_now)" = "$before" ] || fail "the refused reload changed something"
	expect_answer "0 $TUR" "GOOD -" \
		"a reload removing a target with a session is refused; the session goes on"
	rconf "${cur[@]}"
}

reload_removes_lun_target_portal_acl() {
	local url="iscsi://$TCQD_PORTAL/$RA/0" cur
	read -r -a cur < <(rcur)
	run iscsi-inq -i "$INITIATOR2" "$url" || fail "$INITIATOR2 cannot log in yet"
	run iscsi-ls -i "$INITIATOR" "iscsi://$TCQD_PORTAL" || fail "iscsi-ls failed"
	[[ $OUT == *"Target:$RB"* ]] || fail "discovery does not list $RB yet"
	tcp_open "$V6_PORT" || fail "the [::1] portal does not accept connections yet"
	watch_start "$url"
	watch_settle 0
	watch_settle 1
	# Out of the file: LUN 1 of RA, target RB, the [::1] portal and
	# RA's ACL entry for INITIATOR2.
	rconf "${cur[@]/@(g6|ra1|rb|ra_acl2)/}"
	ctl reload || fail "reload: $OUT"
	[[ $OUT == *"LUN $RA/2 removed"* ]] && fail "the reload removed LUN 2 as well"
	expect_answer "0 $TUR" "$UA_LUNS" \
		"LUN 1 gone: the session on LUN 0 of $RA gets REPORTED LUNS DATA HAS CHANGED"
	expect_answer "1 $TUR" "$NOT_SUPPORTED" \
		"and LOGICAL UNIT NOT SUPPORTED from LUN 1"
	config_now >"$TEST_TMP/after.conf"
	grep -qF "$RB" "$TEST_TMP/after.conf" && fail "tcqctl config still has $RB"
	run iscsi-ls -i "$INITIATOR" "iscsi://$TCQD_PORTAL" || fail "iscsi-ls failed"
	[[ $OUT == *"Target:$RB"* ]] && fail "discovery still lists $RB"
	ok "$RB is gone from tcqctl config and from discovery"
	grep -qF '[::1]' "$TEST_TMP/after.conf" && fail "tcqctl config still listens on [::1]"
	tcp_open "$V6_PORT" && fail "the removed portal [::1]:$V6_PORT still accepts connections"
	ok "the removed portal [::1]:$V6_PORT refuses connections"
	login_refused 0x0202 "$INITIATOR2, out of the ACL now" \
		iscsi-inq -i "$INITIATOR2" "$url"
	run iscsi-inq -i "$INITIATOR" "$url" || fail "$INITIATOR, still in the ACL, cannot log in"
	ok "$INITIATOR, left in the ACL, still logs in"
}
# tcp_open PORT: a TCP connection to [::1]:PORT is accepted.
# tcp_open PORT [HOST]: a TCP connection to HOST (default ::1) succeeds.
tcp_open() {
	timeout 5 bash -c "exec 3<>/dev/tcp/${2:-::1}/$1" 2>/dev/null
}

CHECKS=(
	@live
	lun_add_reports_luns_changed
	lun_resize_reports_capacity_changed
	lun_shrink_needs_the_flag
	bad_changes_change_nothing
	lun_remove_gives_not_supported
	busy_lun_remove_refused_then_forced
	forced_lun_remove_aborts_tasks_in_flight
	target_add_serves_logins
	acl_changes_live
	chap_changes_live
	target_remove_refused_with_session_then_forced
	portal_add_and_remove
	reload_applies_the_file_and_the_session_stays
	sighup_reloads
	report_luns_clears_the_ua_on_every_lun
	reload_of_a_bad_file_changes_nothing
	save_and_restart_give_the_same_state
	chap_mutual_set_live
	save_without_file_writes_the_started_file
	@reload
	reload_leaves_untouched_targets_sessions_alone
	reload_refused_when_busy_changes_nothing
	reload_removes_lun_target_portal_acl
)
run_checks "$@"
