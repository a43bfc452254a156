/*
 * tasks: task management across sessions and task attributes over the
 * wire, against a running tcqd, with the raw client of pdutest.c:
 *
 *   (m) session A leaves a WRITE waiting for its Data-Out; session B
 *       (another initiator) sends LOGICAL UNIT RESET, then PERSISTENT
 *       RESERVE OUT PREEMPT AND ABORT against A's key: A's write ends
 *       without a response (TAS=0; TASK ABORTED with TAS=1), is never
 *       executed, A gets a unit attention on its next command, and both
 *       sessions go on working
 *   (n) SAM-5 task attributes: an ORDERED WRITE does not complete before
 *       an older SIMPLE WRITE still waiting for its data; a SIMPLE READ
 *       does not overtake an older ORDERED WRITE waiting for its data; a
 *       HEAD OF QUEUE TEST UNIT READY does
 *
 *   tasks HOST PORT TARGET-IQN [m|n]
 *
 * With m or n only that part runs.
 * The LUN must have 512-byte blocks, at least 64 MiB, allow 1 MiB
 * transfers and run with barrier=drain; nothing else may use it.
 * Exit status: 0 when every check passed, 1 otherwise, 2 on usage errors.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tcq/pdu.h"
#include "tcq/scsi_proto.h"
#include "tests/integration/pdutest.h"
#include "tests/integration/ptcmd.h"

#define BS 512u
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

static int tas = -1;	/* control mode page TAS, read in (m) */
static uint8_t old[XFER], newer[XFER], rbuf[BIG], big[BIG], small[4096];

static int login_as(struct pt_sess *s, const char *iqn, const char *imm)
{
	struct pt_login_opts o = { 0 };

	o.initiator = iqn;
	o.immediate_data = imm;
	return pt_login(s, &o);
}

/* Runs c, repeating it past unit attentions; returns the final status.
 * ASC << 8 | ASCQ of each unit attention seen goes to ua (up to 3,
 * 0-ended) when ua is not NULL. */
static int run_past_ua(struct pt_sess *s, struct pc_cmd *c, int ua[4])
{
	unsigned n = 0, i;
	int st = -1;

	for (i = 0; i < 4; i++) {
		st = pc_run(s, c, 5000);
		if (st != SAM_STAT_CHECK_CONDITION || c->sense_key != 6)
			break;
		pt_note("(unit attention: ASC 0x%02x ASCQ 0x%02x)", c->asc,
			c->ascq);
		if (ua && n < 3)
			ua[n++] = c->asc << 8 | c->ascq;
	}
	if (ua)
		ua[n] = 0;
	return st;
}

static int rw(struct pt_sess *s, bool write, uint32_t lba, uint32_t len,
	      uint8_t *buf, uint32_t imm)
{
	struct pc_cmd c;

	pc_rw10(&c, write, lba, (uint16_t)(len / BS), buf, BS);
	c.imm_len = imm;
	return run_past_ua(s, &c, NULL);
}

/* READ of len bytes at lba compared with want: 1 same, 0 differs, -1
 * failed. */
static int same_as(struct pt_sess *s, uint32_t lba, uint32_t len,
		   const uint8_t *want)
{
	memset(rbuf, 0xee, len);
	if (rw(s, false, lba, len, rbuf, 0) != SAM_STAT_GOOD)
		return -1;
	return !memcmp(rbuf, want, len);
}

static bool has_ua(const int ua[4], int asc)
{
	for (unsigned i = 0; ua[i]; i++)
		if (ua[i] >> 8 == asc)
			return true;
	return false;
}

/* An immediate TMF to LUN 0: its response code, or -1. */
static int tmf(struct pt_sess *s, uint8_t function)
{
	struct pdu_tmf_req q = { 0 };
	uint8_t bhs[ISCSI_BHS_LEN];
	struct pt_rx r;

	q.immediate = true;
	q.function = function;
	q.itt = s->itt++;
	q.rtt = ISCSI_RSVD_TAG;
	q.cmdsn = s->cmdsn;
	q.expstatsn = s->exp_statsn;
	pdu_encode_tmf_req(bhs, &q);
	pdu_set_data_len(bhs, 0);
	if (pt_sess_send(s, bhs, NULL, 0, 0, 0) < 0)
		return -1;
	for (;;) {
		int resp;

		if (pt_recv(s, &r, 5000) <= 0)
			return -1;
		if (pdu_opcode(r.bhs) == ISCSI_OP_TMF_RSP &&
		    pdu_itt(r.bhs) == q.itt) {
			resp = r.bhs[BHS_B2];
			pt_rx_free(&r);
			return resp;
		}
		pt_note("(opcode 0x%02x ITT 0x%x while waiting for the TMF response)",
			pdu_opcode(r.bhs), pdu_itt(r.bhs));
		pt_rx_free(&r);
	}
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
	return run_past_ua(s, &c, NULL);
}

/* TAS from the control mode page (MODE SENSE(6), DBD). */
static int read_tas(struct pt_sess *s)
{
	static const uint8_t cdb[6] = { SOP_MODE_SENSE_6, 0x08, 0x0a, 0, 255 };
	uint8_t buf[255];
	struct pc_cmd c;
	uint32_t off;

	pc_nodata(&c, cdb, sizeof(cdb));
	c.read = true;
	c.edtl = sizeof(buf);
	c.buf = buf;
	memset(buf, 0, sizeof(buf));
	if (run_past_ua(s, &c, NULL) != SAM_STAT_GOOD || c.in_bytes < 4)
		return -1;
	off = 4u + buf[3];
	if (off + 6 > c.in_bytes || (buf[off] & 0x3f) != 0x0a)
		return -1;
	return (buf[off + 5] >> 6) & 1;
}

/*
 * Starts a WRITE of newer over `old` at lba on A, holding its R2T.
 * Returns 0 once the R2T is in.
 */
static int pending_write(struct pt_sess *a, struct pc_cmd *w, uint32_t lba,
			 const char *tag)
{
	struct pc_cmd *one[1] = { w };
	int rc;

	pc_rw10(w, true, lba, XFER / BS, newer, BS);
	w->hold_r2t = true;
	if (pc_start(a, w) < 0) {
		PT_CHECK(0, "%s send the WRITE", tag);
		return -1;
	}
	rc = pc_wait(a, one, 1, w, pc_has_r2t, 5000, NULL);
	PT_CHECK(rc == 1, "%s A's WRITE got its R2T and waits for Data-Out (%s)",
		 tag, rc == 1 ? "R2T" : w->done ? "completed instead" :
		 rc ? "connection closed" : "timeout");
	return rc == 1 ? 0 : -1;
}

/*
 * After the abort: A's write must end as TAS says, stay dead when its
 * Data-Out comes late, and A's next command sees a unit attention with
 * the given ASC.
 */
static void after_abort(struct pt_sess *a, struct pc_cmd *w, int want_asc,
			const char *tag)
{
	struct pc_cmd t, *both[2] = { w, &t };
	static const uint8_t tur[6] = { SOP_TEST_UNIT_READY };
	unsigned pdus, stray = 0, i;
	int ua[4] = { 0 }, n = 0, st = -1;

	pc_wait(a, both, 1, w, pc_is_done, QUIET_MS, &stray);
	if (tas == 1)
		PT_CHECK(w->done && w->status == SAM_STAT_TASK_ABORTED,
			 "%s TAS=1: A's WRITE ended with TASK ABORTED (status %d)",
			 tag, w->status);
	else
		PT_CHECK(!w->done,
			 "%s TAS=0: no SCSI Response for A's WRITE (status %d)",
			 tag, w->status);
	/* Its Data-Out may already be on the way: the target drops it. */
	pdus = w->pdus;
	pc_release(a, w);
	/* The next command reports the unit attention(s), then runs. */
	for (i = 0; i < 4; i++) {
		pc_nodata(&t, tur, sizeof(tur));
		if (pc_start(a, &t) < 0 ||
		    pc_wait(a, both, 2, &t, pc_is_done, 5000, &stray) <= 0)
			break;
		st = t.status;
		if (st != SAM_STAT_CHECK_CONDITION || t.sense_key != 6)
			break;
		pt_note("%s (A: unit attention ASC 0x%02x ASCQ 0x%02x)", tag,
			t.asc, t.ascq);
		if (n < 3)
			ua[n++] = t.asc << 8 | t.ascq;
	}
	PT_CHECK(has_ua(ua, want_asc) && st == SAM_STAT_GOOD,
		 "%s A's next TEST UNIT READY reports a unit attention with ASC 0x%02x (%d seen: first 0x%04x), then GOOD (status %d)",
		 tag, want_asc, n, ua[0], st);
	PT_CHECK(w->pdus == pdus && (tas == 1 || !w->done),
		 "%s nothing came for the aborted WRITE after its late Data-Out (%u PDUs)",
		 tag, w->pdus - pdus);
	if (stray)
		pt_note("%s (%u other PDU(s) on A, e.g. Rejects of the late Data-Out)",
			tag, stray);
}

static void test_reset_other(struct pt_sess *a, struct pt_sess *b)
{
	static const char *tag = "(m) LUN RESET:";
	struct pc_cmd w;
	int rc;

	pt_note("(m) LUN RESET from B while A's WRITE waits for Data-Out");
	PT_CHECK(rw(a, true, 5000, XFER, old, 0) == SAM_STAT_GOOD,
		 "%s A writes the old content", tag);
	if (pending_write(a, &w, 5000, tag) < 0)
		return;
	rc = tmf(b, ISCSI_TMF_LUN_RESET);
	PT_CHECK(rc == ISCSI_TMF_RSP_COMPLETE,
		 "%s B's LOGICAL UNIT RESET answered %d (want 0)", tag, rc);
	after_abort(a, &w, 0x29, tag);
	PT_CHECK(same_as(a, 5000, XFER, old) == 1,
		 "%s A reads the old content back: the aborted WRITE was not executed",
		 tag);
	pc_fill(small, sizeof(small), 0x5a11);
	PT_CHECK(rw(a, true, 6000, sizeof(small), small, 0) == SAM_STAT_GOOD &&
		 same_as(a, 6000, sizeof(small), small) == 1,
		 "%s A goes on: WRITE and READ back of 4 KiB", tag);
	PT_CHECK(pt_tur(b) == SAM_STAT_GOOD,
		 "%s B goes on: TEST UNIT READY is GOOD", tag);
}

static void test_preempt_abort(struct pt_sess *a, struct pt_sess *b)
{
	static const char *tag = "(m) PREEMPT AND ABORT:";
	struct pc_cmd w;
	int st;

	pt_note("(m) PERSISTENT RESERVE OUT PREEMPT AND ABORT from B against A's key");
	st = prout(a, PRO_REGISTER, 0, 0, KEY_A, 0);
	PT_CHECK(st == SAM_STAT_GOOD, "%s A registers its key (status %d)",
		 tag, st);
	st = prout(a, PRO_RESERVE, PR_TYPE_WE, KEY_A, 0, 0);
	PT_CHECK(st == SAM_STAT_GOOD,
		 "%s A reserves the LUN, Write Exclusive (status %d)", tag, st);
	st = prout(b, PRO_REGISTER, 0, 0, KEY_B, 1);
	PT_CHECK(st == SAM_STAT_GOOD, "%s B registers its key (status %d)",
		 tag, st);
	if (pending_write(a, &w, 5000, tag) < 0)
		return;
	st = prout(b, PRO_PREEMPT_AND_ABORT, PR_TYPE_WE, KEY_B, KEY_A, 1);
	PT_CHECK(st == SAM_STAT_GOOD,
		 "%s B's PREEMPT AND ABORT of A's key is GOOD (status %d)", tag,
		 st);
	/* 2Ah: RESERVATIONS or REGISTRATIONS PREEMPTED. */
	after_abort(a, &w, 0x2a, tag);
	st = rw(a, true, 6000, sizeof(small), small, 0);
	PT_CHECK(st == SAM_STAT_RESERVATION_CONFLICT,
		 "%s A, preempted, may not write under B's reservation (status 0x%02x, want 0x18)",
		 tag, st);
	PT_CHECK(same_as(a, 5000, XFER, old) == 1,
		 "%s A may read, and reads the old content: the aborted WRITE was not executed",
		 tag);
	st = rw(b, true, 6000, sizeof(small), small, sizeof(small));
	PT_CHECK(st == SAM_STAT_GOOD, "%s B, the holder now, writes (status %d)",
		 tag, st);
	st = prout(b, PRO_CLEAR, 0, KEY_B, 0, 1);
	PT_CHECK(st == SAM_STAT_GOOD, "%s B clears the reservation (status %d)",
		 tag, st);
	st = rw(a, true, 6000, sizeof(small), small, 0);
	PT_CHECK(st == SAM_STAT_GOOD,
		 "%s A writes again once it is cleared (status %d)", tag, st);
}

static void test_cross_session(void)
{
	struct pt_sess a, b;

	if (login_as(&a, IQN_A, "No") < 0) {
		PT_CHECK(0, "(m) login of A (%s)", IQN_A);
		return;
	}
	if (login_as(&b, IQN_B, "Yes") < 0) {
		PT_CHECK(0, "(m) login of B (%s)", IQN_B);
		pt_close(&a);
		return;
	}
	PT_CHECK(pt_tur(&a) == SAM_STAT_GOOD && pt_tur(&b) == SAM_STAT_GOOD,
		 "(m) both sessions serve TEST UNIT READY");
	tas = read_tas(&a);
	pt_note("(m) control mode page: TAS=%d", tas);
	PT_CHECK(tas == 0 || tas == 1, "(m) MODE SENSE reports the control page");
	pc_fill(old, XFER, 0x01d);
	pc_fill(newer, XFER, 0x7e3);

	test_reset_other(&a, &b);
	test_preempt_abort(&a, &b);
	pt_logout(&a);
	pt_logout(&b);
}

/* ---- (n) ---------------------------------------------------------------- */

static void test_ordered_after_simple(struct pt_sess *s)
{
	static const char *tag = "(n) ORDERED after a waiting SIMPLE WRITE:";
	struct pc_cmd w1, w2, *both[2] = { &w1, &w2 };
	int rc;

	pt_note("(n) an ORDERED WRITE behind a SIMPLE 1 MiB WRITE waiting for its data");
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
	PT_CHECK(same_as(s, 10000, BIG, big) == 1 &&
		 same_as(s, 20000, sizeof(small), small) == 1,
		 "%s both writes are on the medium", tag);
}

static void test_read_after_ordered(struct pt_sess *s)
{
	static const char *tag = "(n) SIMPLE READ after a waiting ORDERED WRITE:";
	struct pc_cmd w, r, *both[2] = { &w, &r };
	int rc;

	pt_note("(n) a SIMPLE READ behind an ORDERED WRITE waiting for its data");
	/* The READ is of other blocks: with QAM=0 an overlapping READ would
	 * wait for the WRITE even if the WRITE were SIMPLE. */
	pc_fill(old, XFER, 0x3ead);
	PT_CHECK(rw(s, true, 31000, XFER, old, 0) == SAM_STAT_GOOD,
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
		 same_as(s, 30000, XFER, newer) == 1,
		 "%s the READ returns its blocks, the WRITE wrote its own", tag);
}

static void test_hoq(struct pt_sess *s)
{
	static const char *tag = "(n) HEAD OF QUEUE past a waiting ORDERED WRITE:";
	static const uint8_t tur[6] = { SOP_TEST_UNIT_READY };
	struct pc_cmd w, t, *both[2] = { &w, &t };
	int rc;

	pt_note("(n) a HEAD OF QUEUE TEST UNIT READY while an ORDERED WRITE waits for data");
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
		 same_as(s, 40000, XFER, newer) == 1,
		 "%s then the ORDERED WRITE completes GOOD (status %d)", tag,
		 w.status);
}

static void test_attributes(void)
{
	struct pt_sess s;

	if (login_as(&s, "iqn.2026-11.org.tcq:tasks-n", "Yes") < 0) {
		PT_CHECK(0, "(n) login");
		return;
	}
	PT_CHECK(pt_tur(&s) == SAM_STAT_GOOD, "(n) TEST UNIT READY is GOOD");
	test_ordered_after_simple(&s);
	test_read_after_ordered(&s);
	test_hoq(&s);
	PT_CHECK(s.digest_errors == 0, "(n) session still sound");
	pt_logout(&s);
}

int main(int argc, char **argv)
{
	int64_t t0 = pt_now_ms();
	const char *part = argc == 5 ? argv[4] : "mn";

	if ((argc != 4 && argc != 5) || !*part ||
	    strspn(part, "mn") != strlen(part)) {
		fprintf(stderr, "usage: %s HOST PORT TARGET-IQN [m|n]\n", argv[0]);
		return 2;
	}
	pt_prog = "tasks";
	pt_initiator = IQN_A;
	pt_host = argv[1];
	pt_port = argv[2];
	pt_target_iqn = argv[3];
	setvbuf(stdout, NULL, _IOLBF, 0);
	/* Every receive has a deadline; this is the last resort. */
	alarm(30);

	if (strchr(part, 'm'))
		test_cross_session();
	if (strchr(part, 'n'))
		test_attributes();

	pt_note("%s (%d failure%s) in %lld ms",
		pt_failures ? "FAILED" : "passed", pt_failures,
		pt_failures == 1 ? "" : "s", (long long)(pt_now_ms() - t0));
	return pt_failures ? 1 : 0;
}
