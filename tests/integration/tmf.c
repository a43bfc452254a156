/*
 * tmf: every task management function (RFC 7143 11.5, RFC 7144 for the
 * QUERY functions and I_T NEXUS RESET, SAM-5 7) one by one against a
 * running tcqd, each with the Response RFC 7143 11.6.1 prescribes and,
 * where it shows, its effect: the task aborted, the task left alone, the
 * unit attention a nexus gets (SAM-5 names them). Initiator A holds a WRITE waiting
 * for its Data-Out (ImmediateData=No, its R2T held back), so that there
 * is a task to act on. Response codes (11.6.1): 0 function complete,
 * 1 task does not exist, 2 LUN does not exist, 4 task allegiance
 * reassignment not supported, 5 function not supported, 7 function
 * succeeded (RFC 7144, for QUERY TASK and QUERY TASK SET).
 *
 *   tmf HOST PORT TARGET-IQN [CASE...]       tmf --list
 *
 * The target must have LUNs 0 and 1 with 512-byte blocks, at least 8 MiB
 * each, no LUN 5, and nothing else using them.
 * Exit status: 0 when every case passed, 1 otherwise, 2 on usage errors.
 */
#include <stdio.h>
#include <string.h>

#include "tcq/pdu.h"
#include "tcq/scsi_proto.h"
#include "tests/integration/pdutest.h"
#include "tests/integration/ptcase.h"
#include "tests/integration/ptcmd.h"

#define XFER (64u << 10)
#define QUIET_MS 400	/* how long "does not happen" is watched for */
#define NO_LUN 5
#define UNUSED_ITT 0x7eadbeefu
#define IQN_A "iqn.2026-11.org.tcq:tmf-a"
#define IQN_B "iqn.2026-11.org.tcq:tmf-b"

/* The unit attentions SAM-5 gives these events (ASC << 8 | ASCQ). */
#define UA_BUS_DEVICE_RESET 0x2903	/* logical unit reset */
#define UA_I_T_NEXUS_LOSS 0x2907	/* I_T nexus loss */
#define UA_COMMANDS_CLEARED 0x2f00	/* CLEAR TASK SET by another initiator */

static uint8_t old[XFER], newer[XFER];

/* A nexus past its first unit attention; ImmediateData=No, so that a
 * WRITE waits for an R2T. */
static int nexus(struct pt_sess *s, const char *iqn)
{
	struct pt_login_opts o = { 0 };

	o.initiator = iqn;
	o.immediate_data = "No";
	if (pt_login(s, &o) < 0) {
		PT_CHECK(0, "login of %s", iqn);
		return -1;
	}
	if (pt_tur(s) != SAM_STAT_GOOD) {
		PT_CHECK(0, "%s: TEST UNIT READY is GOOD", iqn);
		pt_close(s);
		return -1;
	}
	return 0;
}

static int tmf(struct pt_sess *s, uint8_t fn, uint64_t lun, uint32_t rtt,
	       uint32_t refcmdsn, struct pc_cmd *w)
{
	struct pc_tmf t = { .function = fn, .lun = lun, .rtt = rtt,
			    .refcmdsn = refcmdsn };
	struct pc_cmd *one[1] = { w };

	return pc_tmf(s, &t, one, w ? 1 : 0, NULL);
}

/* The old content at lba, then a WRITE of newer over it that waits for
 * its Data-Out. */
static int old_then_pending(struct pt_sess *s, struct pc_cmd *w,
			    uint32_t lba, uint32_t seed)
{
	pc_fill(old, XFER, seed);
	pc_fill(newer, XFER, seed ^ 0xffff);
	if (pc_rw(s, true, lba, XFER, old, 0) != SAM_STAT_GOOD) {
		PT_CHECK(0, "the old content is written");
		return -1;
	}
	return pc_pending_write(s, w, lba, XFER, newer);
}

/*
 * A's own WRITE, aborted by the function A sent: it ends without status
 * (SAM-5: a task aborted at its own nexus' request gets none), its
 * late Data-Out changes nothing, A's next command runs (past unit
 * attentions: their ASC << 8 | ASCQ go to ua) and the old content stays.
 */
static void own_write_gone(struct pt_sess *a, struct pc_cmd *w,
			   uint32_t lba, int ua[4])
{
	struct pc_cmd *one[1] = { w };
	unsigned late;
	int st;

	pc_wait(a, one, 1, w, pc_is_done, QUIET_MS, NULL);
	PT_CHECK(!w->done, "no status for the aborted WRITE (status %d)",
		 w->status);
	late = pc_after_abort(a, w, ua, &st);
	PT_CHECK(st == SAM_STAT_GOOD,
		 "the next TEST UNIT READY is GOOD (status %d)", st);
	PT_CHECK(late == 0,
		 "nothing came for the aborted WRITE after its late Data-Out (%u PDUs)",
		 late);
	PT_CHECK(pc_same_as(a, lba, XFER, old) == 1,
		 "the blocks hold the old content: the WRITE was not executed");
}

/* One function by A against A's own waiting WRITE: answered want, the
 * WRITE gone. ua gets the unit attentions A saw afterwards. */
static void own_abort(uint8_t fn, uint32_t lba, int want, int ua[4])
{
	struct pt_sess a;
	struct pc_cmd w;
	int rc;

	ua[0] = 0;
	if (nexus(&a, IQN_A) < 0)
		return;
	if (old_then_pending(&a, &w, lba, lba) == 0) {
		rc = tmf(&a, fn, 0, fn == ISCSI_TMF_ABORT_TASK ? w.itt :
			 ISCSI_RSVD_TAG, w.cmdsn, &w);
		PT_CHECK(rc == want, "function %u answered %d (want %d)", fn,
			 rc, want);
		if (rc >= 0)
			own_write_gone(&a, &w, lba, ua);
	}
	pt_logout(&a);
}

/* ---- ABORT TASK ----------------------------------------------------------- */

static void abort_task_of_waiting_write_answers_0(void)
{
	struct pt_sess a;
	struct pc_cmd w;
	int ua[4], rc;

	pt_note("ABORT TASK of a WRITE waiting for Data-Out");
	if (nexus(&a, IQN_A) < 0)
		return;
	if (old_then_pending(&a, &w, 1000, 0xab01) == 0) {
		PT_CHECK(w.r2t[0].offset == 0 && w.r2t[0].length > 0 &&
			 w.r2t[0].length <= XFER &&
			 w.r2t[0].ttt != ISCSI_RSVD_TAG,
			 "R2T for the WRITE: offset %u, length %u, TTT 0x%x",
			 w.r2t[0].offset, w.r2t[0].length, w.r2t[0].ttt);
		/* RefCmdSN: the CmdSN of the task (11.5.4). */
		rc = tmf(&a, ISCSI_TMF_ABORT_TASK, 0, w.itt, w.cmdsn, &w);
		PT_CHECK(rc == ISCSI_TMF_RSP_COMPLETE,
			 "ABORT TASK of the WRITE answered %d (want 0, function complete)",
			 rc);
		if (rc >= 0)
			own_write_gone(&a, &w, 1000, ua);
	}
	pt_logout(&a);
}

static void abort_task_unknown_itt_below_window_answers_1(void)
{
	struct pt_sess a;
	int rc;

	pt_note("ABORT TASK of an unused ITT, RefCmdSN below ExpCmdSN");
	if (nexus(&a, IQN_A) < 0)
		return;
	/* 11.6.1 c): no such task, RefCmdSN outside the CmdSN window. */
	rc = tmf(&a, ISCSI_TMF_ABORT_TASK, 0, UNUSED_ITT, a.exp_cmdsn - 1, NULL);
	PT_CHECK(rc == ISCSI_TMF_RSP_NO_TASK,
		 "answered %d (want 1, task does not exist)", rc);
	PT_CHECK(pt_tur(&a) == SAM_STAT_GOOD,
		 "the session goes on: TEST UNIT READY is GOOD");
	pt_logout(&a);
}

static void abort_task_unknown_itt_above_window_answers_1(void)
{
	struct pt_sess a;
	int rc;

	pt_note("ABORT TASK of an unused ITT, RefCmdSN beyond MaxCmdSN");
	if (nexus(&a, IQN_A) < 0)
		return;
	pt_note("CmdSN window [%u, %u]", a.exp_cmdsn, a.max_cmdsn);
	/* 11.6.1 c) again: outside the window on its far side. */
	rc = tmf(&a, ISCSI_TMF_ABORT_TASK, 0, UNUSED_ITT, a.max_cmdsn + 10,
		 NULL);
	PT_CHECK(rc == ISCSI_TMF_RSP_NO_TASK,
		 "RefCmdSN MaxCmdSN + 10 answered %d (want 1, task does not exist)",
		 rc);
	PT_CHECK(pt_tur(&a) == SAM_STAT_GOOD,
		 "the session goes on: TEST UNIT READY is GOOD");
	pt_logout(&a);
}

/*
 * 11.6.1 b): the task named is not there, but RefCmdSN is in the window
 * and below the TMF's own CmdSN: the target "must consider the CmdSN
 * received" (the command was lost on the way) and answer function
 * complete. The command after the hole then runs.
 */
static void abort_task_of_lost_command_fills_cmdsn_hole(void)
{
	static const uint8_t tur[6] = { SOP_TEST_UNIT_READY };
	struct pc_cmd t, *one[1] = { &t };
	struct pt_sess a;
	uint32_t hole;
	int rc;

	pt_note("ABORT TASK of a command that never arrived (a CmdSN hole)");
	if (nexus(&a, IQN_A) < 0)
		return;
	hole = a.cmdsn++;	/* never sent */
	pc_nodata(&t, tur, sizeof(tur));
	if (pc_start(&a, &t) < 0) {
		PT_CHECK(0, "send TEST UNIT READY");
		pt_close(&a);
		return;
	}
	rc = pc_wait(&a, one, 1, &t, pc_is_done, QUIET_MS, NULL);
	PT_CHECK(rc == 0 && !t.done,
		 "TEST UNIT READY at CmdSN %u waits for CmdSN %u (%s)", t.cmdsn,
		 hole, t.done ? "RAN FIRST" : "waiting");
	rc = tmf(&a, ISCSI_TMF_ABORT_TASK, 0, UNUSED_ITT, hole, &t);
	PT_CHECK(rc == ISCSI_TMF_RSP_COMPLETE,
		 "ABORT TASK with RefCmdSN %u (in the window, below the TMF's CmdSN %u) answered %d (want 0)",
		 hole, a.cmdsn, rc);
	if (rc >= 0 && !t.done)
		pc_wait(&a, one, 1, &t, pc_is_done, 3000, NULL);
	pt_note("the target's ExpCmdSN is now %u (%u once CmdSN %u counts as received and %u has run)",
		a.exp_cmdsn, hole + 2, hole, hole + 1);
	PT_CHECK(t.done && t.status == SAM_STAT_GOOD,
		 "CmdSN %u counts as received: the TEST UNIT READY after it ran (%s, status %d)",
		 hole, t.done ? "done" : "STILL WAITING", t.status);
	if (t.done)
		pt_logout(&a);
	else
		pt_close(&a);
}

/* ---- ABORT TASK SET, CLEAR TASK SET --------------------------------------- */

static void abort_task_set_answers_0_and_aborts_own_write(void)
{
	int ua[4];

	pt_note("ABORT TASK SET while A's WRITE waits for Data-Out");
	own_abort(ISCSI_TMF_ABORT_TASK_SET, 2000, ISCSI_TMF_RSP_COMPLETE, ua);
}

static void clear_task_set_answers_0_and_aborts_own_write(void)
{
	int ua[4];

	pt_note("CLEAR TASK SET while A's WRITE waits for Data-Out");
	own_abort(ISCSI_TMF_CLEAR_TASK_SET, 3000, ISCSI_TMF_RSP_COMPLETE, ua);
}

/*
 * B's WRITE waits for its Data-Out while A sends fn; spared: B's WRITE
 * then completes GOOD and is on the medium. Otherwise it must end as
 * TAS says with the unit attention clear_ua on B's next command.
 */
static void other_nexus_write(uint8_t fn, uint32_t lba, bool spared,
			      int clear_ua)
{
	uint8_t ctl[12];
	struct pt_sess a, b;
	struct pc_cmd w, *one[1] = { &w };
	int rc, tas, ua[4], st;
	unsigned late;

	if (nexus(&a, IQN_A) < 0)
		return;
	if (nexus(&b, IQN_B) < 0) {
		pt_logout(&a);
		return;
	}
	tas = pc_mode_page(&b, 0x0a, ctl, sizeof(ctl)) >= 6 ?
	      (ctl[5] >> 6) & 1 : -1;
	if (old_then_pending(&b, &w, lba, lba) < 0)
		goto out;
	rc = tmf(&a, fn, 0, ISCSI_RSVD_TAG, 0, NULL);
	PT_CHECK(rc == ISCSI_TMF_RSP_COMPLETE,
		 "A's function %u answered %d (want 0)", fn, rc);
	pc_wait(&b, one, 1, &w, pc_is_done, QUIET_MS, NULL);
	if (spared) {
		PT_CHECK(!w.done, "B's WRITE still waits for its Data-Out");
		pc_release(&b, &w);
		pc_wait(&b, one, 1, &w, pc_is_done, 5000, NULL);
		PT_CHECK(w.done && w.status == SAM_STAT_GOOD,
			 "B's WRITE then completes GOOD (status %d)", w.status);
		PT_CHECK(pc_same_as(&b, lba, XFER, newer) == 1,
			 "B's new content is on the medium");
		goto out;
	}
	PT_CHECK(tas == 1 ? w.done && w.status == SAM_STAT_TASK_ABORTED :
			    !w.done,
		 "B's WRITE ended as TAS=%d says (status %d)", tas, w.status);
	late = pc_after_abort(&b, &w, ua, &st);
	PT_CHECK(pc_has_ua(ua, clear_ua) && st == SAM_STAT_GOOD && late == 0,
		 "B's next command: unit attention %02xh/%02xh (first seen 0x%04x), then GOOD (status %d); %u late PDUs",
		 clear_ua >> 8, clear_ua & 0xff, ua[0], st, late);
	PT_CHECK(pc_same_as(&b, lba, XFER, old) == 1,
		 "B's blocks hold the old content");
out:
	pt_logout(&a);
	pt_logout(&b);
}

/* SAM-5: ABORT TASK SET aborts the tasks of the I_T nexus it came on
 * only. */
static void abort_task_set_spares_other_nexus_tasks(void)
{
	pt_note("ABORT TASK SET from A while B's WRITE waits for Data-Out");
	other_nexus_write(ISCSI_TMF_ABORT_TASK_SET, 4000, true, 0);
}

/* SAM-5: CLEAR TASK SET clears the task set the nexus belongs to: with
 * TST=001b (a task set per I_T nexus, SPC-4 control mode page) B's is another
 * one; with TST=000b B's task is cleared and B is told COMMANDS CLEARED
 * BY ANOTHER INITIATOR. */
static void clear_task_set_affects_other_nexus_as_tst_says(void)
{
	uint8_t ctl[12];
	struct pt_sess a;
	int tst;

	if (nexus(&a, IQN_A) < 0)
		return;
	tst = pc_mode_page(&a, 0x0a, ctl, sizeof(ctl)) >= 3 ? ctl[2] >> 5 : -1;
	pt_logout(&a);
	PT_CHECK(tst == 0 || tst == 1, "control mode page: TST=%d", tst);
	pt_note("CLEAR TASK SET from A, TST=%d, while B's WRITE waits", tst);
	if (tst == 0 || tst == 1)
		other_nexus_write(ISCSI_TMF_CLEAR_TASK_SET, 5000, tst == 1,
				  UA_COMMANDS_CLEARED);
}

/* ---- CLEAR ACA --------------------------------------------------------------- */

static void clear_aca_without_aca_answers_0(void)
{
	struct pt_sess a;
	int rc;

	pt_note("CLEAR ACA with no ACA condition");
	if (nexus(&a, IQN_A) < 0)
		return;
	rc = tmf(&a, ISCSI_TMF_CLEAR_ACA, 0, ISCSI_RSVD_TAG, 0, NULL);
	PT_CHECK(rc == ISCSI_TMF_RSP_COMPLETE, "answered %d (want 0)", rc);
	PT_CHECK(pt_tur(&a) == SAM_STAT_GOOD, "TEST UNIT READY is GOOD");
	pt_logout(&a);
}

/*
 * SAM-5 (ACA): a command with NACA=1 that ends in CHECK CONDITION
 * establishes ACA; until CLEAR ACA the nexus' tasks without the ACA
 * attribute end in ACA ACTIVE. A target that does not support NACA
 * (INQUIRY NormACA=0) must refuse NACA=1 with INVALID FIELD IN CDB.
 */
static void clear_aca_ends_aca_condition(void)
{
	static const uint8_t inq[6] = { SOP_INQUIRY, 0, 0, 0, 36, 0 };
	/* READ(10) past any LBA these LUNs have, CONTROL: NACA=1 */
	static const uint8_t bad[10] = { SOP_READ_10, 0, 0xff, 0xff, 0xff,
					 0xf0, 0, 0, 1, 0x04 };
	static const uint8_t tur[6] = { SOP_TEST_UNIT_READY };
	uint8_t data[36];
	struct pc_cmd c;
	struct pt_sess a;
	int st, rc;

	pt_note("ACA established by a NACA=1 command, then CLEAR ACA");
	if (nexus(&a, IQN_A) < 0)
		return;
	pc_nodata(&c, inq, sizeof(inq));
	c.read = true;
	c.edtl = sizeof(data);
	c.buf = data;
	st = pc_run(&a, &c, 5000);
	PT_CHECK(st == SAM_STAT_GOOD && c.in_bytes >= 4, "INQUIRY (status %d)", st);
	pt_note("INQUIRY NormACA=%d", (data[3] >> 5) & 1);
	pc_nodata(&c, bad, sizeof(bad));
	c.read = true;
	c.edtl = 512;
	c.buf = old;
	st = pc_run(&a, &c, 5000);
	if (!((data[3] >> 5) & 1)) {
		PT_CHECK(st == SAM_STAT_CHECK_CONDITION && c.sense_key == 5 &&
			 c.asc == 0x24 && c.ascq == 0,
			 "NormACA=0: NACA=1 is refused with ILLEGAL REQUEST, INVALID FIELD IN CDB (status %d, %d/%02x/%02x)",
			 st, c.sense_key, c.asc, c.ascq);
	} else {
		PT_CHECK(st == SAM_STAT_CHECK_CONDITION && c.sense_key == 5 &&
			 c.asc == 0x21,
			 "the NACA=1 READ past the end: CHECK CONDITION, LBA OUT OF RANGE (status %d, %d/%02x/%02x)",
			 st, c.sense_key, c.asc, c.ascq);
		pc_nodata(&c, tur, sizeof(tur));
		st = pc_run(&a, &c, 5000);
		PT_CHECK(st == SAM_STAT_ACA_ACTIVE,
			 "while ACA lasts, a SIMPLE TEST UNIT READY ends in ACA ACTIVE (status 0x%02x, want 0x30)",
			 st);
	}
	rc = tmf(&a, ISCSI_TMF_CLEAR_ACA, 0, ISCSI_RSVD_TAG, 0, NULL);
	PT_CHECK(rc == ISCSI_TMF_RSP_COMPLETE, "CLEAR ACA answered %d (want 0)",
		 rc);
	pc_nodata(&c, tur, sizeof(tur));
	st = pc_run(&a, &c, 5000);
	PT_CHECK(st == SAM_STAT_GOOD,
		 "after CLEAR ACA, TEST UNIT READY is GOOD (status 0x%02x)", st);
	pt_logout(&a);
}

/* ---- resets ------------------------------------------------------------------ */

static void lun_reset_answers_0_and_aborts_own_write(void)
{
	int ua[4];

	pt_note("LOGICAL UNIT RESET while A's WRITE waits for Data-Out");
	own_abort(ISCSI_TMF_LUN_RESET, 6000, ISCSI_TMF_RSP_COMPLETE, ua);
}

/* who's next command on lun: the unit attention want, then GOOD. */
static void sees_ua(struct pt_sess *s, const char *who, uint64_t lun,
		    int want)
{
	static const uint8_t tur[6] = { SOP_TEST_UNIT_READY };
	struct pc_cmd c;
	int ua[4], st;

	pc_nodata(&c, tur, sizeof(tur));
	c.lun = lun;
	st = pc_run_past_ua(s, &c, ua);
	PT_CHECK(pc_has_ua(ua, want) && st == SAM_STAT_GOOD,
		 "%s on LUN %llu: unit attention %02xh/%02xh (first seen 0x%04x), then GOOD (status %d)",
		 who, (unsigned long long)lun, want >> 8, want & 0xff, ua[0],
		 st);
}

/* A new nexus' first command on each LUN reports POWER ON, RESET (its
 * nexus is new): past it, a unit attention can only be the event's. */
static void settle(struct pt_sess *s)
{
	int ua[4];

	for (uint64_t lun = 0; lun < 2; lun++) {
		static const uint8_t tur[6] = { SOP_TEST_UNIT_READY };
		struct pc_cmd c;

		pc_nodata(&c, tur, sizeof(tur));
		c.lun = lun;
		pc_run_past_ua(s, &c, ua);
	}
}

/* RFC 7143 11.5.1: TARGET WARM RESET resets every LU of the target (the
 * Target Reset of SAM-2: a logical unit reset of each); the
 * sessions stay. */
static void target_warm_reset_resets_every_lun(void)
{
	struct pt_sess a, b;
	int rc;

	pt_note("TARGET WARM RESET from A; B on LUNs 0 and 1");
	if (nexus(&a, IQN_A) < 0)
		return;
	if (nexus(&b, IQN_B) < 0) {
		pt_logout(&a);
		return;
	}
	settle(&b);
	rc = tmf(&a, ISCSI_TMF_TARGET_WARM_RESET, 0, ISCSI_RSVD_TAG, 0, NULL);
	PT_CHECK(rc == ISCSI_TMF_RSP_COMPLETE, "answered %d (want 0)", rc);
	sees_ua(&b, "B", 0, UA_BUS_DEVICE_RESET);
	sees_ua(&b, "B", 1, UA_BUS_DEVICE_RESET);
	PT_CHECK(pt_tur(&a) == SAM_STAT_GOOD,
		 "A's session stays: TEST UNIT READY is GOOD");
	pt_logout(&a);
	pt_logout(&b);
}

static void target_warm_reset_aborts_own_write(void)
{
	int ua[4];

	pt_note("TARGET WARM RESET while A's WRITE waits for Data-Out");
	own_abort(ISCSI_TMF_TARGET_WARM_RESET, 7000, ISCSI_TMF_RSP_COMPLETE, ua);
}

/* RFC 7143 11.5.1: TARGET COLD RESET is also a power on event "thus
 * terminating all of its TCP connections to all initiators"; the
 * response itself "may not be reliably delivered". */
static void target_cold_reset_closes_every_connection(void)
{
	struct pt_sess a, b, c;
	int64_t a_ms, b_ms;
	int rc;

	pt_note("TARGET COLD RESET from A while B is logged in");
	if (nexus(&a, IQN_A) < 0)
		return;
	if (nexus(&b, IQN_B) < 0) {
		pt_logout(&a);
		return;
	}
	rc = tmf(&a, ISCSI_TMF_TARGET_COLD_RESET, 0, ISCSI_RSVD_TAG, 0, NULL);
	PT_CHECK(rc == ISCSI_TMF_RSP_COMPLETE || rc < 0,
		 "answered %d (want 0, or no answer)", rc);
	a_ms = pt_wait_closed(&a, 3000);
	PT_CHECK(a_ms >= 0, "A's connection was closed by the target");
	b_ms = pt_wait_closed(&b, 3000);
	PT_CHECK(b_ms >= 0,
		 "B's connection was closed by the target too (%s)",
		 b_ms >= 0 ? "closed" : "STILL OPEN after 3 s");
	pt_close(&a);
	pt_close(&b);
	if (nexus(&c, IQN_B) == 0) {
		PT_CHECK(1, "the target takes new logins");
		pt_logout(&c);
	}
}

/* RFC 7144, SAM-5: I_T NEXUS RESET ends what the nexus had (its tasks
 * aborted) as an I_T nexus loss would. */
static void i_t_nexus_reset_answers_0_and_aborts_own_write(void)
{
	int ua[4];

	pt_note("I_T NEXUS RESET while A's WRITE waits for Data-Out");
	own_abort(ISCSI_TMF_I_T_NEXUS_RESET, 8000, ISCSI_TMF_RSP_COMPLETE, ua);
}

/* SAM-5: I_T nexus loss establishes a unit attention I_T NEXUS LOSS
 * OCCURRED for the initiator port of that nexus, on every LU. */
static void i_t_nexus_reset_reports_nexus_loss(void)
{
	struct pt_sess a;
	int rc;

	pt_note("I_T NEXUS RESET, then A's next command on LUNs 0 and 1");
	if (nexus(&a, IQN_A) < 0)
		return;
	settle(&a);
	rc = tmf(&a, ISCSI_TMF_I_T_NEXUS_RESET, 0, ISCSI_RSVD_TAG, 0, NULL);
	PT_CHECK(rc == ISCSI_TMF_RSP_COMPLETE, "answered %d (want 0)", rc);
	sees_ua(&a, "A", 0, UA_I_T_NEXUS_LOSS);
	sees_ua(&a, "A", 1, UA_I_T_NEXUS_LOSS);
	pt_logout(&a);
}

/* ---- QUERY TASK, QUERY TASK SET (RFC 7144) --------------------------------- */

static void query_task_of_waiting_write_answers_7(void)
{
	struct pc_cmd w, *one[1] = { &w };
	struct pt_sess a;
	int rc;

	pt_note("QUERY TASK of a WRITE waiting for Data-Out");
	if (nexus(&a, IQN_A) < 0)
		return;
	if (old_then_pending(&a, &w, 9000, 0x9a9a) == 0) {
		rc = tmf(&a, ISCSI_TMF_QUERY_TASK, 0, w.itt, w.cmdsn, &w);
		PT_CHECK(rc == ISCSI_TMF_RSP_SUCCEEDED,
			 "answered %d (want 7, function succeeded: the task exists)",
			 rc);
		pc_release(&a, &w);
		pc_wait(&a, one, 1, &w, pc_is_done, 5000, NULL);
		PT_CHECK(w.done && w.status == SAM_STAT_GOOD &&
			 pc_same_as(&a, 9000, XFER, newer) == 1,
			 "the queried WRITE goes on and completes GOOD (status %d)",
			 w.status);
	}
	pt_logout(&a);
}

static void query_task_of_unknown_task_answers_0(void)
{
	struct pt_sess a;
	int rc;

	pt_note("QUERY TASK of an ITT no task has");
	if (nexus(&a, IQN_A) < 0)
		return;
	rc = tmf(&a, ISCSI_TMF_QUERY_TASK, 0, UNUSED_ITT, a.exp_cmdsn - 1, NULL);
	PT_CHECK(rc == ISCSI_TMF_RSP_COMPLETE,
		 "answered %d (want 0, function complete: no such task)", rc);
	pt_logout(&a);
}

static void query_task_set_with_waiting_write_answers_7(void)
{
	struct pc_cmd w, *one[1] = { &w };
	struct pt_sess a;
	int rc;

	pt_note("QUERY TASK SET with a WRITE waiting, and once it is done");
	if (nexus(&a, IQN_A) < 0)
		return;
	if (old_then_pending(&a, &w, 10000, 0x10aa) == 0) {
		rc = tmf(&a, ISCSI_TMF_QUERY_TASK_SET, 0, ISCSI_RSVD_TAG, 0, &w);
		PT_CHECK(rc == ISCSI_TMF_RSP_SUCCEEDED,
			 "with the WRITE waiting: answered %d (want 7, function succeeded)",
			 rc);
		pc_release(&a, &w);
		pc_wait(&a, one, 1, &w, pc_is_done, 5000, NULL);
		PT_CHECK(w.done && w.status == SAM_STAT_GOOD,
			 "the WRITE completes GOOD (status %d)", w.status);
	}
	pt_logout(&a);
}

static void query_task_set_empty_answers_0(void)
{
	struct pt_sess a;
	int rc;

	pt_note("QUERY TASK SET with no task");
	if (nexus(&a, IQN_A) < 0)
		return;
	rc = tmf(&a, ISCSI_TMF_QUERY_TASK_SET, 0, ISCSI_RSVD_TAG, 0, NULL);
	PT_CHECK(rc == ISCSI_TMF_RSP_COMPLETE,
		 "answered %d (want 0, function complete: no task)", rc);
	pt_logout(&a);
}

/* ---- what is not supported, and what is not there ---------------------------- */

/* 11.5.1, 6.2.2: ErrorRecoveryLevel 0 (pdutest's login) has no task
 * allegiance reassignment. */
static void task_reassign_at_erl0_answers_4(void)
{
	struct pc_cmd w, *one[1] = { &w };
	struct pt_sess a;
	int rc;

	pt_note("TASK REASSIGN at ErrorRecoveryLevel 0");
	if (nexus(&a, IQN_A) < 0)
		return;
	if (old_then_pending(&a, &w, 11000, 0x11bb) == 0) {
		rc = tmf(&a, ISCSI_TMF_TASK_REASSIGN, 0, w.itt, 0, &w);
		PT_CHECK(rc == ISCSI_TMF_RSP_NO_REASSIGN,
			 "answered %d (want 4, task allegiance reassignment not supported)",
			 rc);
		pc_release(&a, &w);
		pc_wait(&a, one, 1, &w, pc_is_done, 5000, NULL);
		PT_CHECK(w.done && w.status == SAM_STAT_GOOD,
			 "the task stays where it was and completes GOOD (status %d)",
			 w.status);
	}
	pt_logout(&a);
}

static void unknown_function_answers_5(void)
{
	static const uint8_t fns[] = { 13, 0x40, 0x7f };
	struct pt_sess a;

	pt_note("functions RFC 7143 and RFC 7144 do not define");
	if (nexus(&a, IQN_A) < 0)
		return;
	for (unsigned i = 0; i < sizeof(fns); i++) {
		int rc = tmf(&a, fns[i], 0, ISCSI_RSVD_TAG, 0, NULL);

		PT_CHECK(rc == ISCSI_TMF_RSP_NOT_SUPPORTED,
			 "function %u answered %d (want 5, not supported)",
			 fns[i], rc);
	}
	PT_CHECK(pt_tur(&a) == SAM_STAT_GOOD, "the session goes on");
	pt_logout(&a);
}

/* 11.5.1: the LUN field names the LU of the functions that address one;
 * 11.6.1: 2, LUN does not exist, when there is none. */
static void lu_functions_to_missing_lun_answer_2(void)
{
	static const uint8_t fns[] = {
		ISCSI_TMF_ABORT_TASK, ISCSI_TMF_ABORT_TASK_SET,
		ISCSI_TMF_CLEAR_ACA, ISCSI_TMF_CLEAR_TASK_SET,
		ISCSI_TMF_LUN_RESET,
	};
	struct pt_sess a;

	pt_note("functions that address an LU, to LUN %d (there is none)",
		NO_LUN);
	if (nexus(&a, IQN_A) < 0)
		return;
	for (unsigned i = 0; i < sizeof(fns); i++) {
		int rc = tmf(&a, fns[i], NO_LUN, UNUSED_ITT, a.exp_cmdsn, NULL);

		PT_CHECK(rc == ISCSI_TMF_RSP_NO_LUN,
			 "function %u to LUN %d answered %d (want 2, LUN does not exist)",
			 fns[i], NO_LUN, rc);
	}
	PT_CHECK(pt_tur(&a) == SAM_STAT_GOOD, "the session goes on");
	pt_logout(&a);
}

/* 11.6: the Response PDU: F bit, no AHS nor data, our ITT, the next
 * StatSN. */
static void tmf_response_header_is_well_formed(void)
{
	struct pc_tmf t = { .function = ISCSI_TMF_QUERY_TASK_SET, .lun = 0,
			    .rtt = ISCSI_RSVD_TAG };
	struct pt_sess a;
	uint32_t statsn;
	int rc;

	pt_note("the TMF Response header");
	if (nexus(&a, IQN_A) < 0)
		return;
	statsn = a.exp_statsn;
	rc = pc_tmf(&a, &t, NULL, 0, NULL);
	PT_CHECK(rc >= 0, "a response came (%d)", rc);
	if (rc >= 0)
		pt_check_bare_rsp(t.rsp, t.rsp_len, ISCSI_OP_TMF_RSP, t.itt,
				  statsn);
	pt_logout(&a);
}

static const struct pt_case cases[] = {
	PT_CASE(abort_task_of_waiting_write_answers_0),
	PT_CASE(abort_task_unknown_itt_below_window_answers_1),
	PT_CASE(abort_task_unknown_itt_above_window_answers_1),
	PT_CASE(abort_task_of_lost_command_fills_cmdsn_hole),
	PT_CASE(abort_task_set_answers_0_and_aborts_own_write),
	PT_CASE(abort_task_set_spares_other_nexus_tasks),
	PT_CASE(clear_task_set_answers_0_and_aborts_own_write),
	PT_CASE(clear_task_set_affects_other_nexus_as_tst_says),
	PT_CASE(clear_aca_without_aca_answers_0),
	PT_CASE(clear_aca_ends_aca_condition),
	PT_CASE(lun_reset_answers_0_and_aborts_own_write),
	PT_CASE(target_warm_reset_resets_every_lun),
	PT_CASE(target_warm_reset_aborts_own_write),
	PT_CASE(i_t_nexus_reset_answers_0_and_aborts_own_write),
	PT_CASE(i_t_nexus_reset_reports_nexus_loss),
	PT_CASE(query_task_of_waiting_write_answers_7),
	PT_CASE(query_task_of_unknown_task_answers_0),
	PT_CASE(query_task_set_with_waiting_write_answers_7),
	PT_CASE(query_task_set_empty_answers_0),
	PT_CASE(task_reassign_at_erl0_answers_4),
	PT_CASE(unknown_function_answers_5),
	PT_CASE(lu_functions_to_missing_lun_answer_2),
	PT_CASE(tmf_response_header_is_well_formed),
	/* last: it ends every session of the target */
	PT_CASE(target_cold_reset_closes_every_connection),
};

static const struct pt_driver driver = {
	"tmf", IQN_A, cases, PT_NCASES(cases),
};

int main(int argc, char **argv)
{
	return pt_main(&driver, argc, argv);
}
