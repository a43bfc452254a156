/*
 * tasks: task management across sessions and task attributes over the
 * wire, against a running tcqd, with the raw client of pdutest.c. Cases:
 *
 *   lun_reset_from_other_initiator_aborts_waiting_write
 *   preempt_and_abort_aborts_waiting_write_of_preempted
 *       session A leaves a WRITE waiting for its Data-Out; session B
 *       (another initiator) sends LOGICAL UNIT RESET, or PERSISTENT
 *       RESERVE OUT PREEMPT AND ABORT against A's key: A's write ends
 *       without a response (TAS=0; TASK ABORTED with TAS=1), is never
 *       executed, A gets the unit attention SAM-5 / SPC-4 name on its
 *       next command, and both sessions go on working
 *   ordered_write_waits_for_older_simple_write
 *   simple_read_waits_for_older_ordered_write
 *   head_of_queue_passes_waiting_ordered_write
 *       SAM-5 task attributes: an ORDERED WRITE does not complete before
 *       an older SIMPLE WRITE still waiting for its data; a SIMPLE READ
 *       does not overtake an older ORDERED WRITE waiting for its data; a
 *       HEAD OF QUEUE TEST UNIT READY does
 *
 *   tasks HOST PORT TARGET-IQN [CASE...]      tasks --list
 *
 * The LUN must have 512-byte blocks, at least 64 MiB, allow 1 MiB
 * transfers and run with barrier=drain; nothing else may use it.
 * Exit status: 0 when every case passed, 1 otherwise, 2 on usage errors.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tcq/pdu.h"
#include "tcq/scsi_proto.h"
#include "tests/integration/pdutest.h"
#include "tests/integration/ptcase.h"
#include "tests/integration/ptcmd.h"

#define BS PC_BS
#define XFER (64u << 10)
#define BIG (1u << 20)
/* How long "does not happen" is watched for. */
#define QUIET_MS 400

#define IQN_A "iqn.2026-11.org.tcq:tasks-a"
#define IQN_B "iqn.2026-11.org.tcq:tasks-b"

#define KEY_A 0xa11ce00000000a0aull
#define KEY_B 0xb0b0000000000b0bull

#define PRO_REGISTER 0x00
#define PRO_RESERVE 0x01
#define PRO_CLEAR 0x03
#define PRO_PREEMPT_AND_ABORT 0x05
#define PR_TYPE_WE 0x01

static int tas = -1;	/* control mode page TAS (read_tas) */
static uint8_t old[XFER], newer[XFER], rbuf[BIG], big[BIG], small[4096];

static int login_as(struct pt_sess *s, const char *iqn, const char *imm)
{
	struct pt_login_opts o = { 0 };

	o.initiator = iqn;
	o.immediate_data = imm;
	return pt_login(s, &o);
}

/* PERSISTENT RESERVE OUT with a basic 24-byte parameter list. */
static int prout(struct pt_sess *s, uint8_t sa, uint8_t type, uint64_t key,
		 uint64_t sark, uint32_t imm)
{
	uint8_t param[24] = { 0 };
	struct pc_cmd c;

	memset(&c, 0, sizeof(c));
	c.cdb[0] = SOP_PERSISTENT_RESERVE_OUT;
	c.cdb[1] = sa;
	c.cdb[2] = type;
	put_be32(c.cdb + 5, sizeof(param));
	put_be64(param, key);
	put_be64(param + 8, sark);
	c.attr = ISCSI_ATTR_SIMPLE;
	c.write = true;
	c.edtl = sizeof(param);
	c.buf = param;
	c.imm_len = imm ? sizeof(param) : 0;
	return pc_run_past_ua(s, &c, NULL);
}

/* TAS from the control mode page (SPC-4 7.5.8, byte 5 bit 6). */
static int read_tas(struct pt_sess *s)
{
	uint8_t page[12];

	if (pc_mode_page(s, 0x0a, page, sizeof(page)) < 6)
		return -1;
	return (page[5] >> 6) & 1;
}

/*
 * After the abort: A's write must end as TAS says, stay dead when its
 * Data-Out comes late, and A's next command sees the unit attention
 * want (ASC << 8 | ASCQ).
 */
static void after_abort(struct pt_sess *a, struct pc_cmd *w, int want)
{
	struct pc_cmd *one[1] = { w };
	unsigned stray = 0, late;
	int ua[4] = { 0 }, st;

	pc_wait(a, one, 1, w, pc_is_done, QUIET_MS, &stray);
	if (tas == 1)
		PT_CHECK(w->done && w->status == SAM_STAT_TASK_ABORTED,
			 "TAS=1: A's WRITE ended with TASK ABORTED (status %d)",
			 w->status);
	else
		PT_CHECK(!w->done,
			 "TAS=0: no SCSI Response for A's WRITE (status %d)",
			 w->status);
	late = pc_after_abort(a, w, ua, &st);
	PT_CHECK(pc_has_ua(ua, want) && st == SAM_STAT_GOOD,
		 "A's next TEST UNIT READY reports the unit attention %02xh/%02xh (first seen 0x%04x), then GOOD (status %d)",
		 want >> 8, want & 0xff, ua[0], st);
	PT_CHECK(late == 0 && (tas == 1 || !w->done),
		 "nothing came for the aborted WRITE after its late Data-Out (%u PDUs)",
		 late);
}

/* Logs in A (ImmediateData=No: its WRITEs wait for R2Ts) and B, reads
 * TAS and writes the old content A's WRITE is to overwrite. */
static int two_nexuses(struct pt_sess *a, struct pt_sess *b)
{
	if (login_as(a, IQN_A, "No") < 0) {
		PT_CHECK(0, "login of A (%s)", IQN_A);
		return -1;
	}
	if (login_as(b, IQN_B, "Yes") < 0) {
		PT_CHECK(0, "login of B (%s)", IQN_B);
		pt_close(a);
		return -1;
	}
	PT_CHECK(pt_tur(a) == SAM_STAT_GOOD && pt_tur(b) == SAM_STAT_GOOD,
		 "both sessions serve TEST UNIT READY");
	tas = read_tas(a);
	pt_note("control mode page: TAS=%d", tas);
	PT_CHECK(tas == 0 || tas == 1, "MODE SENSE reports the control page");
	pc_fill(old, XFER, 0x01d);
	pc_fill(newer, XFER, 0x7e3);
	PT_CHECK(pc_rw(a, true, 5000, XFER, old, 0) == SAM_STAT_GOOD,
		 "A writes the old content");
	return 0;
}

static void lun_reset_from_other_initiator_aborts_waiting_write(void)
{
	struct pc_tmf m = { .function = ISCSI_TMF_LUN_RESET, .lun = 0,
			    .rtt = ISCSI_RSVD_TAG };
	struct pt_sess a, b;
	struct pc_cmd w;
	int rc;

	pt_note("LUN RESET from B while A's WRITE waits for Data-Out");
	if (two_nexuses(&a, &b) < 0)
		return;
	if (pc_pending_write(&a, &w, 5000, XFER, newer) < 0)
		goto out;
	rc = pc_tmf(&b, &m, NULL, 0, NULL);
	PT_CHECK(rc == ISCSI_TMF_RSP_COMPLETE,
		 "B's LOGICAL UNIT RESET answered %d (want 0, function complete)",
		 rc);
	/* SAM-5 6.3.3: BUS DEVICE RESET FUNCTION OCCURRED. */
	after_abort(&a, &w, 0x2903);
	PT_CHECK(pc_same_as(&a, 5000, XFER, old) == 1,
		 "A reads the old content back: the aborted WRITE was not executed");
	pc_fill(small, sizeof(small), 0x5a11);
	PT_CHECK(pc_rw(&a, true, 6000, sizeof(small), small, 0) == SAM_STAT_GOOD &&
		 pc_same_as(&a, 6000, sizeof(small), small) == 1,
		 "A goes on: WRITE and READ back of 4 KiB");
	PT_CHECK(pt_tur(&b) == SAM_STAT_GOOD,
		 "B goes on: TEST UNIT READY is GOOD");
out:
	pt_logout(&a);
	pt_logout(&b);
}

static void preempt_and_abort_aborts_waiting_write_of_preempted(void)
{
	struct pt_sess a, b;
	struct pc_cmd w;
	int st;

	pt_note("PERSISTENT RESERVE OUT PREEMPT AND ABORT from B against A's key");
	if (two_nexuses(&a, &b) < 0)
		return;
	st = prout(&a, PRO_REGISTER, 0, 0, KEY_A, 0);
	PT_CHECK(st == SAM_STAT_GOOD, "A registers its key (status %d)", st);
	st = prout(&a, PRO_RESERVE, PR_TYPE_WE, KEY_A, 0, 0);
	PT_CHECK(st == SAM_STAT_GOOD,
		 "A reserves the LUN, Write Exclusive (status %d)", st);
	st = prout(&b, PRO_REGISTER, 0, 0, KEY_B, 1);
	PT_CHECK(st == SAM_STAT_GOOD, "B registers its key (status %d)", st);
	if (pc_pending_write(&a, &w, 5000, XFER, newer) < 0)
		goto out;
	st = prout(&b, PRO_PREEMPT_AND_ABORT, PR_TYPE_WE, KEY_B, KEY_A, 1);
	PT_CHECK(st == SAM_STAT_GOOD,
		 "B's PREEMPT AND ABORT of A's key is GOOD (status %d)", st);
	/* SPC-4 5.13.11.2.4: the preempted nexus gets REGISTRATIONS
	 * PREEMPTED. */
	after_abort(&a, &w, 0x2a05);
	st = pc_rw(&a, true, 6000, sizeof(small), small, 0);
	PT_CHECK(st == SAM_STAT_RESERVATION_CONFLICT,
		 "A, preempted, may not write under B's reservation (status 0x%02x, want 0x18)",
		 st);
	PT_CHECK(pc_same_as(&a, 5000, XFER, old) == 1,
		 "A may read, and reads the old content: the aborted WRITE was not executed");
	st = pc_rw(&b, true, 6000, sizeof(small), small, sizeof(small));
	PT_CHECK(st == SAM_STAT_GOOD, "B, the holder now, writes (status %d)", st);
out:
	st = prout(&b, PRO_CLEAR, 0, KEY_B, 0, 1);
	PT_CHECK(st == SAM_STAT_GOOD, "B clears the reservation (status %d)", st);
	st = pc_rw(&a, true, 6000, sizeof(small), small, 0);
	PT_CHECK(st == SAM_STAT_GOOD,
		 "A writes again once it is cleared (status %d)", st);
	pt_logout(&a);
	pt_logout(&b);
}

/* ---- task attributes ---------------------------------------------------- */

static void ordered_after_simple(struct pt_sess *s)
{
	static const char *tag = "ORDERED after a waiting SIMPLE WRITE:";
	struct pc_cmd w1, w2, *both[2] = { &w1, &w2 };
	int rc;

	pt_note("an ORDERED WRITE behind a SIMPLE 1 MiB WRITE waiting for its data");
	pc_fill(big, BIG, 0xb16);
	pc_fill(small, sizeof(small), 0x0dd);
	pc_rw10(&w1, true, 10000, BIG / BS, big, BS);
	w1.hold_r2t = true;
	pc_rw10(&w2, true, 20000, sizeof(small) / BS, small, BS);
	w2.attr = ISCSI_ATTR_ORDERED;
	w2.imm_len = sizeof(small);	/* all its data comes with it */
	if (pc_start(s, &w1) < 0 ||
	    pc_wait(s, both, 1, &w1, pc_has_r2t, 5000, NULL) != 1) {
		PT_CHECK(0, "%s the SIMPLE WRITE gets an R2T", tag);
		return;
	}
	if (pc_start(s, &w2) < 0) {
		PT_CHECK(0, "%s send the ORDERED WRITE", tag);
		return;
	}
	rc = pc_wait(s, both, 2, &w2, pc_is_done, QUIET_MS, NULL);
	PT_CHECK(rc == 0 && !w2.done,
		 "%s the ORDERED WRITE, its data all in, waits for the older one (%s)",
		 tag, w2.done ? "COMPLETED FIRST" : rc < 0 ? "closed" : "waiting");
	pc_release(s, &w1);
	rc = pc_wait(s, both, 2, &w2, pc_is_done, 10000, NULL);
	if (rc == 1 && !w1.done)
		pc_wait(s, both, 2, &w1, pc_is_done, 10000, NULL);
	PT_CHECK(w1.status == SAM_STAT_GOOD && w2.status == SAM_STAT_GOOD,
		 "%s both are GOOD (SIMPLE %d, ORDERED %d)", tag, w1.status,
		 w2.status);
	PT_CHECK(w1.done && w2.done && w1.done_seq < w2.done_seq,
		 "%s the SIMPLE WRITE completed before the ORDERED one (%s)",
		 tag, !w1.done || !w2.done ? "missing" :
		 w1.done_seq < w2.done_seq ? "in order" : "OUT OF ORDER");
	PT_CHECK(pc_same_as(s, 10000, BIG, big) == 1 &&
		 pc_same_as(s, 20000, sizeof(small), small) == 1,
		 "%s both writes are on the medium", tag);
}

static void read_after_ordered(struct pt_sess *s)
{
	static const char *tag = "SIMPLE READ after a waiting ORDERED WRITE:";
	struct pc_cmd w, r, *both[2] = { &w, &r };
	int rc;

	pt_note("a SIMPLE READ behind an ORDERED WRITE waiting for its data");
	/* The READ is of other blocks: with QAM=0 an overlapping READ would
	 * wait for the WRITE even if the WRITE were SIMPLE. */
	pc_fill(old, XFER, 0x3ead);
	PT_CHECK(pc_rw(s, true, 31000, XFER, old, 0) == SAM_STAT_GOOD,
		 "%s the READ's blocks are written first", tag);
	pc_fill(newer, XFER, 0x0de);
	pc_rw10(&w, true, 30000, XFER / BS, newer, BS);
	w.attr = ISCSI_ATTR_ORDERED;
	w.hold_r2t = true;
	memset(rbuf, 0xee, XFER);
	pc_rw10(&r, false, 31000, XFER / BS, rbuf, BS);
	if (pc_start(s, &w) < 0 ||
	    pc_wait(s, both, 1, &w, pc_has_r2t, 5000, NULL) != 1) {
		PT_CHECK(0, "%s the ORDERED WRITE gets an R2T", tag);
		return;
	}
	if (pc_start(s, &r) < 0) {
		PT_CHECK(0, "%s send the READ", tag);
		return;
	}
	rc = pc_wait(s, both, 2, &r, pc_is_done, QUIET_MS, NULL);
	PT_CHECK(rc == 0 && r.pdus == 0,
		 "%s the READ waits: no Data-In nor status while the WRITE waits (%u PDUs)",
		 tag, r.pdus);
	pc_release(s, &w);
	rc = pc_wait(s, both, 2, &r, pc_is_done, 10000, NULL);
	if (rc == 1 && !w.done)
		pc_wait(s, both, 2, &w, pc_is_done, 10000, NULL);
	PT_CHECK(w.status == SAM_STAT_GOOD && r.status == SAM_STAT_GOOD,
		 "%s both are GOOD (WRITE %d, READ %d)", tag, w.status, r.status);
	PT_CHECK(w.done && r.done && r.first_in_seq && w.done_seq < r.first_in_seq,
		 "%s the WRITE completed before the READ sent data (%s)", tag,
		 !w.done || !r.done || !r.first_in_seq ? "missing" :
		 w.done_seq < r.first_in_seq ? "in order" : "OUT OF ORDER");
	PT_CHECK(r.in_bytes == XFER && !memcmp(rbuf, old, XFER) &&
		 pc_same_as(s, 30000, XFER, newer) == 1,
		 "%s the READ returns its blocks, the WRITE wrote its own", tag);
}

static void hoq_past_ordered(struct pt_sess *s)
{
	static const char *tag = "HEAD OF QUEUE past a waiting ORDERED WRITE:";
	static const uint8_t tur[6] = { SOP_TEST_UNIT_READY };
	struct pc_cmd w, t, *both[2] = { &w, &t };
	int rc;

	pt_note("a HEAD OF QUEUE TEST UNIT READY while an ORDERED WRITE waits for data");
	pc_fill(newer, XFER, 0x40e);
	pc_rw10(&w, true, 40000, XFER / BS, newer, BS);
	w.attr = ISCSI_ATTR_ORDERED;
	w.hold_r2t = true;
	pc_nodata(&t, tur, sizeof(tur));
	t.attr = ISCSI_ATTR_HEAD_OF_QUEUE;
	if (pc_start(s, &w) < 0 ||
	    pc_wait(s, both, 1, &w, pc_has_r2t, 5000, NULL) != 1) {
		PT_CHECK(0, "%s the ORDERED WRITE gets an R2T", tag);
		return;
	}
	if (pc_start(s, &t) < 0) {
		PT_CHECK(0, "%s send the TEST UNIT READY", tag);
		return;
	}
	rc = pc_wait(s, both, 2, &t, pc_is_done, 3000, NULL);
	PT_CHECK(rc == 1 && t.status == SAM_STAT_GOOD && !w.done,
		 "%s the TEST UNIT READY completes GOOD while the WRITE still waits (%s, status %d)",
		 tag, rc == 1 ? "done" : rc ? "closed" : "timeout", t.status);
	pc_release(s, &w);
	rc = pc_wait(s, both, 2, &w, pc_is_done, 10000, NULL);
	PT_CHECK(rc == 1 && w.status == SAM_STAT_GOOD &&
		 pc_same_as(s, 40000, XFER, newer) == 1,
		 "%s then the ORDERED WRITE completes GOOD (status %d)", tag,
		 w.status);
}

/* One session, TEST UNIT READY first, then the attribute check. */
static void attribute_case(void (*check)(struct pt_sess *))
{
	struct pt_sess s;

	if (login_as(&s, "iqn.2026-11.org.tcq:tasks-n", "Yes") < 0) {
		PT_CHECK(0, "login");
		return;
	}
	PT_CHECK(pt_tur(&s) == SAM_STAT_GOOD, "TEST UNIT READY is GOOD");
	check(&s);
	PT_CHECK(s.digest_errors == 0, "session still sound");
	pt_logout(&s);
}

static void ordered_write_waits_for_older_simple_write(void)
{
	attribute_case(ordered_after_simple);
}

static void simple_read_waits_for_older_ordered_write(void)
{
	attribute_case(read_after_ordered);
}

static void head_of_queue_passes_waiting_ordered_write(void)
{
	attribute_case(hoq_past_ordered);
}

static const struct pt_case cases[] = {
	PT_CASE(lun_reset_from_other_initiator_aborts_waiting_write),
	PT_CASE(preempt_and_abort_aborts_waiting_write_of_preempted),
	PT_CASE(ordered_write_waits_for_older_simple_write),
	PT_CASE(simple_read_waits_for_older_ordered_write),
	PT_CASE(head_of_queue_passes_waiting_ordered_write),
};

static const struct pt_driver driver = {
	"tasks", IQN_A, cases, PT_NCASES(cases),
};

int main(int argc, char **argv)
{
	return pt_main(&driver, argc, argv);
}
