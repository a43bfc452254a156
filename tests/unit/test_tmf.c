/*
 * The device server's task management (scsi/tmf.c), driven through the
 * harness with no transport: every function's effect on the tasks of the
 * nexus that asks and of the others (SAM-5 7), TAS and QErr (SPC-4
 * 7.5.8), the unit attentions a reset leaves (SAM-5 6.3.3, 6.3.4), and
 * the rule the transport relies on: a function is answered only once
 * every task it aborted has ended, the running ones included, on
 * whatever reactor their nexus lives.
 *
 * Reads go to a delay backend (200 ms) so that they are still running
 * when the function comes.
 */
#include <check.h>
#include <semaphore.h>
#include <stdlib.h>
#include <string.h>
#include "tcq/byteorder.h"
#include "tcq/scsi_proto.h"
#include "scsi/lun.h"
#include "scsi/taskset.h"
#include "scsi/tmf.h"
#include "scsi/ua.h"
#include "tests/unit/harness.h"

static struct harness_lun H;

#define SLOW "delay:latency=200ms,dist=fixed,base=ram:size=1M"

static void setup(void)
{
	harness_lun_setup(&H, SLOW, 0, 3);
}

static void teardown(void)
{
	harness_lun_teardown(&H);
}

static const uint8_t tur[6] = { SOP_TEST_UNIT_READY };

/* READ(10) of one block at lba on nexus n, started. */
static struct cmd *read_start(unsigned n, uint8_t attr, uint32_t lba)
{
	uint8_t cdb[10] = { SOP_READ_10 };

	put_be32(cdb + 2, lba);
	put_be16(cdb + 7, 1);
	return start_cdb(&H, n, attr, cdb, sizeof(cdb), NULL, 0, 512);
}

/* ---- running a function ---- */

/* Runs fn from nexus n (on LUN 0, or task t): harness_run_tmf. */
static enum tmf_response run_tmf(struct harness_tmf *c, enum tmf_function fn,
				 unsigned n, struct tcq_task *t)
{
	return harness_run_tmf(&H, c, fn, n, t);
}

/* c ended, aborted, before the function c answered: silently (no TASK
 * ABORTED status) or with TASK ABORTED. */
#define EXPECT_ABORTED(cmd, call, report) do { \
	ck_assert_msg((cmd)->done && (cmd)->t.aborted, "not aborted"); \
	ck_assert_uint_lt((cmd)->done_seq, (call)->seq); \
	if (report) \
		EXPECT_STATUS(cmd, SAM_STAT_TASK_ABORTED); \
	else \
		ck_assert_uint_ne((cmd)->t.status, SAM_STAT_TASK_ABORTED); \
} while (0)

#define EXPECT_UA(n, asc, ascq) do { \
	EXPECT_SENSE(run_cdb(&H, n, tur, 6, NULL, 0, 0), SK_UNIT_ATTENTION, \
		     asc, ascq); \
	EXPECT_GOOD(run_cdb(&H, n, tur, 6, NULL, 0, 0)); \
} while (0)

/* ---- LOGICAL UNIT RESET ---- */

/* Every nexus' tasks go, running or dormant, before the answer; TAS=0:
 * none says TASK ABORTED; each nexus then hears of the reset (29h/03h
 * BUS DEVICE RESET FUNCTION OCCURRED). */
START_TEST(lun_reset_waits_for_every_nexus_task)
{
	struct cmd *r0 = read_start(0, TASK_ATTR_SIMPLE, 0);
	struct cmd *r1 = read_start(1, TASK_ATTR_SIMPLE, 1);
	struct cmd *o1 = read_start(1, TASK_ATTR_ORDERED, 2);	/* dormant */
	struct cmd *r2 = read_start(2, TASK_ATTR_SIMPLE, 3);
	struct harness_tmf c;

	ck_assert_int_eq(run_tmf(&c, TMF_LOGICAL_UNIT_RESET, 0, NULL),
			 TMF_FUNCTION_COMPLETE);
	EXPECT_ABORTED(r0, &c, false);
	EXPECT_ABORTED(r1, &c, false);
	EXPECT_ABORTED(o1, &c, false);
	EXPECT_ABORTED(r2, &c, false);
	ck_assert_uint_lt(o1->done_seq, r1->done_seq);	/* not left waiting */
	for (unsigned n = 0; n < 3; n++)
		EXPECT_UA(n, 0x29, 0x03);
}
END_TEST

/* TAS=1: the other nexuses' tasks end with TASK ABORTED, running ones
 * too; the requester's go silently. */
START_TEST(lun_reset_with_tas_reports_to_other_nexuses)
{
	struct cmd *r0, *r1, *o1;
	struct harness_tmf c;

	H.lun->tas = 1;
	r0 = read_start(0, TASK_ATTR_SIMPLE, 0);
	r1 = read_start(1, TASK_ATTR_SIMPLE, 1);
	o1 = read_start(1, TASK_ATTR_ORDERED, 2);
	ck_assert_int_eq(run_tmf(&c, TMF_LOGICAL_UNIT_RESET, 0, NULL),
			 TMF_FUNCTION_COMPLETE);
	EXPECT_ABORTED(r0, &c, false);
	EXPECT_ABORTED(r1, &c, true);
	EXPECT_ABORTED(o1, &c, true);
}
END_TEST

/* ---- the requester's own task set ---- */

START_TEST(abort_task_set_spares_other_nexuses)
{
	struct cmd *r0 = read_start(0, TASK_ATTR_SIMPLE, 0);
	struct cmd *o0 = read_start(0, TASK_ATTR_ORDERED, 1);
	struct cmd *r1 = read_start(1, TASK_ATTR_SIMPLE, 2);
	struct harness_tmf c;

	ck_assert_int_eq(run_tmf(&c, TMF_ABORT_TASK_SET, 0, NULL),
			 TMF_FUNCTION_COMPLETE);
	EXPECT_ABORTED(r0, &c, false);
	EXPECT_ABORTED(o0, &c, false);
	ck_assert(!r1->t.aborted);
	wait_cmd(&H, r1);
	EXPECT_GOOD(r1);
	/* No unit attention for anyone. */
	EXPECT_GOOD(run_cdb(&H, 0, tur, 6, NULL, 0, 0));
	EXPECT_GOOD(run_cdb(&H, 1, tur, 6, NULL, 0, 0));
}
END_TEST

START_TEST(clear_task_set_is_the_requesters_own)
{
	struct cmd *r0 = read_start(0, TASK_ATTR_SIMPLE, 0);
	struct cmd *r1 = read_start(1, TASK_ATTR_SIMPLE, 1);
	struct harness_tmf c;

	/* TST=001b (the control page): one task set per I_T nexus. */
	ck_assert_int_eq(run_tmf(&c, TMF_CLEAR_TASK_SET, 0, NULL),
			 TMF_FUNCTION_COMPLETE);
	EXPECT_ABORTED(r0, &c, false);
	wait_cmd(&H, r1);
	ck_assert(!r1->t.aborted);
	EXPECT_GOOD(r1);
}
END_TEST

/* ABORT TASK of a running read answers once the read has ended; the
 * nexus' other task is left alone. */
START_TEST(abort_task_waits_for_the_running_task)
{
	struct cmd *a = read_start(0, TASK_ATTR_SIMPLE, 0);
	struct cmd *b = read_start(0, TASK_ATTR_SIMPLE, 1);
	struct harness_tmf c;

	ck_assert_int_eq(run_tmf(&c, TMF_ABORT_TASK, 0, &a->t),
			 TMF_FUNCTION_COMPLETE);
	EXPECT_ABORTED(a, &c, false);
	wait_cmd(&H, b);
	ck_assert(!b->t.aborted);
	EXPECT_GOOD(b);
	/* A task already ended: nothing to do, FUNCTION COMPLETE. */
	ck_assert_int_eq(run_tmf(&c, TMF_ABORT_TASK, 0, &b->t),
			 TMF_FUNCTION_COMPLETE);
}
END_TEST

/* QUERY TASK and QUERY TASK SET (SAM-5 7.9, 7.10): FUNCTION SUCCEEDED
 * while the task (a task of the set) is there, COMPLETE after. */
START_TEST(query_task_and_task_set)
{
	struct cmd *a = read_start(0, TASK_ATTR_SIMPLE, 0);
	struct harness_tmf c;

	ck_assert_int_eq(run_tmf(&c, TMF_QUERY_TASK, 0, &a->t),
			 TMF_FUNCTION_SUCCEEDED);
	ck_assert_int_eq(run_tmf(&c, TMF_QUERY_TASK_SET, 0, NULL),
			 TMF_FUNCTION_SUCCEEDED);
	ck_assert_int_eq(run_tmf(&c, TMF_QUERY_TASK_SET, 1, NULL),
			 TMF_FUNCTION_COMPLETE);
	ck_assert(!a->done);		/* queries abort nothing */
	wait_cmd(&H, a);
	EXPECT_GOOD(a);
	ck_assert_int_eq(run_tmf(&c, TMF_QUERY_TASK, 0, &a->t),
			 TMF_FUNCTION_COMPLETE);
	ck_assert_int_eq(run_tmf(&c, TMF_QUERY_TASK_SET, 0, NULL),
			 TMF_FUNCTION_COMPLETE);
}
END_TEST

/* READ(10) past the end with NACA=1 in its CONTROL byte. */
static const uint8_t bad_naca[10] = { SOP_READ_10, 0, 0x7f, 0xff, 0xff, 0xf0,
				      0, 0, 1, 0x04 };

/* A command with NACA=1 that fails establishes ACA (SAM-5 5.9.1): the
 * nexus' next SIMPLE command gets ACA ACTIVE until CLEAR ACA. */
START_TEST(clear_aca_ends_the_aca_condition)
{
	struct harness_tmf c;

	EXPECT_STATUS(run_cdb(&H, 0, bad_naca, 10, NULL, 0, 512),
		      SAM_STAT_CHECK_CONDITION);
	EXPECT_STATUS(run_cdb(&H, 0, tur, 6, NULL, 0, 0), SAM_STAT_ACA_ACTIVE);
	EXPECT_GOOD(run_cdb(&H, 1, tur, 6, NULL, 0, 0));	/* its own */
	ck_assert_int_eq(run_tmf(&c, TMF_CLEAR_ACA, 0, NULL),
			 TMF_FUNCTION_COMPLETE);
	EXPECT_GOOD(run_cdb(&H, 0, tur, 6, NULL, 0, 0));
}
END_TEST

/* A LUN reset ends ACA too (SAM-5 6.3.3). */
START_TEST(lun_reset_ends_aca)
{
	struct harness_tmf c;

	EXPECT_STATUS(run_cdb(&H, 1, bad_naca, 10, NULL, 0, 512),
		      SAM_STAT_CHECK_CONDITION);
	ck_assert_int_eq(run_tmf(&c, TMF_LOGICAL_UNIT_RESET, 0, NULL),
			 TMF_FUNCTION_COMPLETE);
	EXPECT_UA(1, 0x29, 0x03);
}
END_TEST

/* ---- I_T NEXUS RESET and the target reset ---- */

START_TEST(i_t_nexus_reset_is_the_nexus_loss)
{
	struct cmd *r0 = read_start(0, TASK_ATTR_SIMPLE, 0);
	struct cmd *r1 = read_start(1, TASK_ATTR_SIMPLE, 1);
	struct harness_tmf c;

	ck_assert_int_eq(run_tmf(&c, TMF_I_T_NEXUS_RESET, 0, NULL),
			 TMF_FUNCTION_COMPLETE);
	EXPECT_ABORTED(r0, &c, false);
	wait_cmd(&H, r1);
	ck_assert(!r1->t.aborted);
	EXPECT_GOOD(r1);
	EXPECT_UA(0, 0x29, 0x07);	/* I_T NEXUS LOSS OCCURRED */
	EXPECT_GOOD(run_cdb(&H, 1, tur, 6, NULL, 0, 0));
}
END_TEST

/* A target reset is a LUN reset of every LUN of the device. */
START_TEST(target_reset_resets_every_lun)
{
	struct bdev_params bp = { .size = 1 << 20, .queue_depth = 8 };
	char err[256];
	struct bdev *bd = bdev_open(SLOW, &bp, err, sizeof(err));
	struct lun *l1;
	struct taskset *ts1;
	struct cmd *r0, *r1;
	struct harness_tmf c;

	ck_assert_ptr_nonnull(bd);
	l1 = harness_lun_create(&H.dev, 1, bd);
	ck_assert_ptr_nonnull(l1);
	sdev_set_lun(&H.dev, 1, l1);
	ts1 = lun_nexus_join(l1, &H.r, harness_nexus(&H, 1));
	ck_assert_ptr_nonnull(ts1);
	r0 = read_start(0, TASK_ATTR_SIMPLE, 0);
	r1 = read_start(1, TASK_ATTR_SIMPLE, 1);
	ck_assert_int_eq(run_tmf(&c, TMF_TARGET_RESET, 2, NULL),
			 TMF_FUNCTION_COMPLETE);
	EXPECT_ABORTED(r0, &c, false);
	EXPECT_ABORTED(r1, &c, false);
	pthread_mutex_lock(&l1->lock);	/* LUN 1 heard of it too */
	ck_assert_uint_eq(ts1->ua_n, 1);
	ck_assert_uint_eq(ts1->ua_q[0], ASC_BUS_DEVICE_RESET);
	pthread_mutex_unlock(&l1->lock);
	sdev_set_lun(&H.dev, 1, NULL);
	lun_nexus_leave(ts1);
	lun_destroy(l1);
	bdev_close(bd);
}
END_TEST

/* ---- QErr ---- */

/* A read past the end: CHECK CONDITION, LBA OUT OF RANGE, at once. */
static struct cmd *read_fails(unsigned n)
{
	return read_start(n, TASK_ATTR_SIMPLE, 0x7fffffff);
}

/* QErr=01b: a CHECK CONDITION aborts every other task of the LUN; the
 * other nexuses that lost one hear COMMANDS CLEARED BY ANOTHER INITIATOR
 * (2Fh/00h, TAS=0). */
START_TEST(qerr_01_aborts_every_nexus_tasks)
{
	struct cmd *r0, *bad, *r1, *after;

	H.lun->qerr = 1;
	r0 = read_start(0, TASK_ATTR_SIMPLE, 0);
	r1 = read_start(1, TASK_ATTR_SIMPLE, 1);
	bad = read_fails(0);
	wait_cmd(&H, bad);
	EXPECT_SENSE(bad, SK_ILLEGAL_REQUEST, 0x21, 0x00);
	wait_cmd(&H, r0);
	wait_cmd(&H, r1);
	ck_assert(r0->t.aborted && r1->t.aborted);
	ck_assert_uint_ne(r1->t.status, SAM_STAT_TASK_ABORTED);
	EXPECT_GOOD(run_cdb(&H, 0, tur, 6, NULL, 0, 0));
	EXPECT_UA(1, 0x2f, 0x00);
	EXPECT_GOOD(run_cdb(&H, 2, tur, 6, NULL, 0, 0));	/* lost none */
	after = read_start(1, TASK_ATTR_SIMPLE, 2);	/* later: untouched */
	wait_cmd(&H, after);
	EXPECT_GOOD(after);
}
END_TEST

/* QErr=11b: only the failing nexus' other tasks. */
START_TEST(qerr_11_aborts_the_nexus_own_tasks)
{
	struct cmd *r0, *bad, *r1;

	H.lun->qerr = 3;
	r0 = read_start(0, TASK_ATTR_SIMPLE, 0);
	r1 = read_start(1, TASK_ATTR_SIMPLE, 1);
	bad = read_fails(0);
	wait_cmd(&H, bad);
	wait_cmd(&H, r0);
	wait_cmd(&H, r1);
	ck_assert(r0->t.aborted);
	ck_assert(!r1->t.aborted);
	EXPECT_GOOD(r1);
	EXPECT_GOOD(run_cdb(&H, 1, tur, 6, NULL, 0, 0));
}
END_TEST

/* QErr=00b (the default): nothing else is aborted. */
START_TEST(qerr_00_aborts_nothing)
{
	struct cmd *r0 = read_start(0, TASK_ATTR_SIMPLE, 0);
	struct cmd *bad = read_fails(0);

	wait_cmd(&H, bad);
	wait_cmd(&H, r0);
	ck_assert(!r0->t.aborted);
	EXPECT_GOOD(r0);
}
END_TEST

/* MODE SELECT(6) of the control page (SPC-4 7.5.8) with byte 3 (QAM,
 * QErr) and byte 5 (TAS) as given; the rest as the page is. */
static struct cmd *select_control(unsigned n, uint8_t b3, uint8_t b5)
{
	static const uint8_t cdb[6] = { SOP_MODE_SELECT_6, 0x10, 0, 0, 16, 0 };
	uint8_t p[16] = { 0 };

	p[4] = 0x0a;		/* page code */
	p[5] = 0x0a;		/* page length */
	p[6] = 0x20;		/* TST 001b */
	p[7] = b3;
	p[9] = b5;
	p[12] = p[13] = 0xff;	/* BUSY TIMEOUT PERIOD: unlimited */
	return run_cdb(&H, n, cdb, sizeof(cdb), p, sizeof(p), 0);
}

/* TAS and QErr are changeable: the other nexuses hear MODE PARAMETERS
 * CHANGED (2Ah/01h); QErr 10b is reserved and refused, pointing at the
 * field (byte 7 of the list, bit 2), changing nothing. */
START_TEST(mode_select_sets_tas_and_qerr)
{
	static const uint8_t sense_ctl[6] = { SOP_MODE_SENSE_6, 0x08, 0x0a, 0,
					      255, 0 };
	struct cmd *c;

	EXPECT_GOOD(select_control(0, 0x01 << 1, 0x40));
	ck_assert_uint_eq(H.lun->qerr, 1);
	ck_assert_uint_eq(H.lun->tas, 1);
	EXPECT_UA(1, 0x2a, 0x01);
	c = run_cdb(&H, 0, sense_ctl, 6, NULL, 0, 255);
	EXPECT_GOOD(c);
	ck_assert_uint_eq(cmd_data(c)[4 + 3] & 0x06, 0x02);
	ck_assert_uint_eq(cmd_data(c)[4 + 5] & 0x40, 0x40);
	c = select_control(0, 0x02 << 1, 0);
	EXPECT_SENSE(c, SK_ILLEGAL_REQUEST, 0x26, 0x00);
	EXPECT_SENSE_FIELD(c, false, 7, 2);
	ck_assert_uint_eq(H.lun->qerr, 1);
	ck_assert_uint_eq(H.lun->tas, 1);
	EXPECT_GOOD(select_control(0, 0, 0));
	ck_assert_uint_eq(H.lun->qerr, 0);
	ck_assert_uint_eq(H.lun->tas, 0);
}
END_TEST

/* MODE SENSE(6), DBD, of the control page with page control pc (SPC-4
 * 6.11: 0 current, 1 changeable, 2 default) on nexus n: its TAS bit. */
static unsigned control_tas(unsigned n, unsigned pc)
{
	uint8_t cdb[6] = { SOP_MODE_SENSE_6, 0x08, 0x0a, 0, 255, 0 };
	struct cmd *c;

	cdb[2] |= (uint8_t)(pc << 6);
	c = run_cdb(&H, n, cdb, sizeof(cdb), NULL, 0, 255);
	EXPECT_GOOD(c);
	return cmd_data(c)[4 + 5] & 0x40;
}

/* [lun] tas (tcqctl set, at creation the same field): the current and
 * the default page say TAS=1, and a LOGICAL UNIT RESET from nexus 0 ends nexus 1's task with TASK
 * ABORTED (SPC-4 7.5.8), nexus 0's silently. */
START_TEST(tas_key_reaches_the_page_and_lun_reset)
{
	struct cmd *r0, *r1;
	struct harness_tmf c;

	ck_assert_uint_eq(control_tas(0, 2), 0);	/* default TAS=0 */
	/* true: changed, the caller (target/live.c) raises 2Ah/01h */
	ck_assert(!lun_set_mode_keys(H.lun, -1, 0));
	ck_assert(lun_set_mode_keys(H.lun, -1, 1));
	ck_assert_uint_eq(control_tas(0, 0), 0x40);
	ck_assert_uint_eq(control_tas(0, 2), 0x40);
	r0 = read_start(0, TASK_ATTR_SIMPLE, 0);
	r1 = read_start(1, TASK_ATTR_SIMPLE, 1);
	ck_assert_int_eq(run_tmf(&c, TMF_LOGICAL_UNIT_RESET, 0, NULL),
			 TMF_FUNCTION_COMPLETE);
	EXPECT_ABORTED(r0, &c, false);
	EXPECT_ABORTED(r1, &c, true);
}
END_TEST

/* TAS is changeable; MODE SELECT on nexus 1 sets it: nexus 0 and 2 hear
 * 2Ah/01h, nexus 1 does not (SPC-4 6.11), and nexus 1's LOGICAL UNIT
 * RESET then ends nexus 0's task with TASK ABORTED. */
START_TEST(mode_select_tas_reaches_lun_reset)
{
	struct cmd *r0, *r1;
	struct harness_tmf c;

	ck_assert_uint_eq(control_tas(1, 1), 0x40);
	EXPECT_GOOD(select_control(1, 0, 0x40));
	EXPECT_UA(0, 0x2a, 0x01);
	EXPECT_UA(2, 0x2a, 0x01);
	EXPECT_GOOD(run_cdb(&H, 1, tur, 6, NULL, 0, 0));
	ck_assert_uint_eq(control_tas(1, 0), 0x40);
	r0 = read_start(0, TASK_ATTR_SIMPLE, 0);
	r1 = read_start(1, TASK_ATTR_SIMPLE, 1);
	ck_assert_int_eq(run_tmf(&c, TMF_LOGICAL_UNIT_RESET, 1, NULL),
			 TMF_FUNCTION_COMPLETE);
	EXPECT_ABORTED(r0, &c, true);
	EXPECT_ABORTED(r1, &c, false);
}
END_TEST

/* The key's TAS=1 undone by MODE SELECT TAS=0: the reset is silent to
 * every nexus again. */
START_TEST(mode_select_tas_0_silences_lun_reset)
{
	struct cmd *r0, *r1;
	struct harness_tmf c;

	ck_assert(lun_set_mode_keys(H.lun, -1, 1));
	EXPECT_GOOD(select_control(1, 0, 0));
	EXPECT_UA(0, 0x2a, 0x01);
	ck_assert_uint_eq(control_tas(1, 0), 0);
	r0 = read_start(0, TASK_ATTR_SIMPLE, 0);
	r1 = read_start(1, TASK_ATTR_SIMPLE, 1);
	ck_assert_int_eq(run_tmf(&c, TMF_LOGICAL_UNIT_RESET, 1, NULL),
			 TMF_FUNCTION_COMPLETE);
	EXPECT_ABORTED(r0, &c, false);
	EXPECT_ABORTED(r1, &c, false);
}
END_TEST

/* ---- holding a LUN still (the crash lab's record start) ---- */

static void stop_soon(struct reactor_timer *t)
{
	reactor_stop(&H.r);
}

/* Runs the reactor for ms: what can start would have started. */
static void idle_ms(unsigned ms)
{
	struct reactor_timer tm;

	reactor_timer_init(&tm, stop_soon, NULL);
	reactor_timer_arm(&H.r, &tm, ms);
	harness_run_guarded(&H.r, ms + 5000);
}

/* A held LUN starts no task: running ones end (lun_running falls to 0),
 * new ones of every nexus wait, and start once it is released. */
START_TEST(hold_keeps_new_tasks_waiting_until_release)
{
	struct cmd *r0 = read_start(0, TASK_ATTR_SIMPLE, 0), *w1, *w2;

	idle_ms(20);		/* r0 runs (200 ms) */
	ck_assert_uint_eq(lun_running(H.lun), 1);
	lun_hold(H.lun);
	w1 = read_start(1, TASK_ATTR_SIMPLE, 1);
	w2 = read_start(2, TASK_ATTR_HEAD_OF_QUEUE, 2);
	wait_cmd(&H, r0);
	EXPECT_GOOD(r0);
	ck_assert_uint_eq(lun_running(H.lun), 0);
	idle_ms(300);		/* longer than a read: nothing started */
	ck_assert(!w1->done && !w2->done);
	ck_assert_uint_eq(lun_running(H.lun), 0);
	lun_release(H.lun);
	wait_cmd(&H, w1);
	wait_cmd(&H, w2);
	EXPECT_GOOD(w1);
	EXPECT_GOOD(w2);
}
END_TEST

/* ---- nexuses on other reactors ---- */

static struct reactor R2;
static struct harness_thread T2;
static int far_nexus;
static struct taskset *far_ts;
static struct tcq_task far_task;
static unsigned far_done_seq;	/* harness_seq stamp, from R2's thread */
static uint8_t far_buf[512];

static void far_done(struct tcq_task *t)
{
	__atomic_store_n(&far_done_seq,
			 __atomic_add_fetch(&harness_seq, 1, __ATOMIC_SEQ_CST),
			 __ATOMIC_SEQ_CST);
}

static void far_join(void *arg)
{
	struct sense_info si;

	far_ts = lun_nexus_join(H.lun, &R2, &far_nexus);
	ck_assert_ptr_nonnull(far_ts);
	ck_assert(ua_take(far_ts, &si));	/* its POWER ON, RESET */
}

static void far_read(void *arg)
{
	struct tcq_task *t = &far_task;

	memset(t, 0, sizeof(*t));
	lun_task_init(t);
	t->cdb[0] = SOP_READ_10;
	put_be16(t->cdb + 7, 1);
	t->cdb_len = 16;
	t->lun = H.lun;
	t->dev = &H.dev;
	t->nexus = &far_nexus;
	t->attr = TASK_ATTR_SIMPLE;
	t->dir_in = true;
	t->exp_len = 512;
	t->buf = far_buf;
	t->buf_len = sizeof(far_buf);
	t->done = far_done;
	lun_task_arrive(far_ts, t);
}

static void far_leave(void *arg)
{
	lun_nexus_leave(far_ts);
}

static void far_start(void)
{
	far_done_seq = 0;
	ck_assert_int_eq(reactor_init(&R2, 1), 0);
	harness_thread_start(&T2, &R2);
	harness_call_on(&R2, far_join, NULL);
}

/* The reset answers only after the read of a nexus living on another
 * reactor has ended there. */
START_TEST(lun_reset_waits_for_a_nexus_on_another_reactor)
{
	struct harness_tmf c;

	far_start();
	harness_call_on(&R2, far_read, NULL);
	ck_assert_int_eq(run_tmf(&c, TMF_LOGICAL_UNIT_RESET, 0, NULL),
			 TMF_FUNCTION_COMPLETE);
	ck_assert_uint_ne(__atomic_load_n(&far_done_seq, __ATOMIC_SEQ_CST), 0);
	ck_assert_uint_lt(far_done_seq, c.seq);
	ck_assert(far_task.aborted);
	harness_thread_stop(&T2, far_leave, NULL);
	reactor_fini(&R2);
}
END_TEST

static sem_t hold;

static void blocker(void *arg)
{
	sem_wait(&hold);
}

static void release_hold(struct reactor_timer *t)
{
	sem_post(&hold);
}

/* A nexus that leaves after the reset took its task set, before the
 * abort reaches it: skipped, and its set freed once (ASan would see a
 * use after free or a leak). */
START_TEST(nexus_leaving_during_a_reset_is_skipped)
{
	struct reactor_timer tm;
	struct harness_tmf c;

	far_start();
	sem_init(&hold, 0, 0);
	ck_assert_int_eq(reactor_post(&R2, blocker, NULL), 0);
	ck_assert_int_eq(reactor_post(&R2, far_leave, NULL), 0);
	reactor_timer_init(&tm, release_hold, NULL);
	reactor_timer_arm(&H.r, &tm, 20);
	ck_assert_int_eq(run_tmf(&c, TMF_LOGICAL_UNIT_RESET, 0, NULL),
			 TMF_FUNCTION_COMPLETE);
	reactor_timer_cancel(&H.r, &tm);
	harness_thread_stop(&T2, NULL, NULL);
	reactor_fini(&R2);
	sem_destroy(&hold);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("tmf");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 30);
	harness_add(tc, lun_reset_waits_for_every_nexus_task);
	harness_add(tc, lun_reset_with_tas_reports_to_other_nexuses);
	harness_add(tc, abort_task_set_spares_other_nexuses);
	harness_add(tc, clear_task_set_is_the_requesters_own);
	harness_add(tc, abort_task_waits_for_the_running_task);
	harness_add(tc, query_task_and_task_set);
	harness_add(tc, clear_aca_ends_the_aca_condition);
	harness_add(tc, lun_reset_ends_aca);
	harness_add(tc, i_t_nexus_reset_is_the_nexus_loss);
	harness_add(tc, target_reset_resets_every_lun);
	harness_add(tc, qerr_01_aborts_every_nexus_tasks);
	harness_add(tc, qerr_11_aborts_the_nexus_own_tasks);
	harness_add(tc, qerr_00_aborts_nothing);
	harness_add(tc, mode_select_sets_tas_and_qerr);
	harness_add(tc, tas_key_reaches_the_page_and_lun_reset);
	harness_add(tc, mode_select_tas_reaches_lun_reset);
	harness_add(tc, mode_select_tas_0_silences_lun_reset);
	harness_add(tc, hold_keeps_new_tasks_waiting_until_release);
	harness_add(tc, lun_reset_waits_for_a_nexus_on_another_reactor);
	harness_add(tc, nexus_leaving_during_a_reset_is_skipped);
	suite_add_tcase(s, tc);
	return s;
}

int main(int argc, char **argv)
{
	return harness_main(argc, argv, suite);
}
