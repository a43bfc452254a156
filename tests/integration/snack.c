/*
 * snack: SNACK Requests at ErrorRecoveryLevel=0 (RFC 7143 11.16), against
 * a running tcqd, with the raw client of pdutest.c. tcqd negotiates ERL 0
 * only (13.20), where a target need not support SNACK ("If the
 * implementation supports ErrorRecoveryLevel greater than zero, it MUST
 * support all SNACK types"): nothing is kept to send again, and what a
 * SNACK asks for is, for this target, never to be sent (again), which
 * 11.16 makes a protocol error: "Any SNACK that requests a numbered
 * response, data, or R2T that was not sent by the target or was already
 * acknowledged by the initiator MUST be rejected with a reason code of
 * 'Protocol Error'". Each case sends one SNACK type and checks the
 * Reject (11.17: opcode 3Fh, F bit, reason 04h, ITT ffffffffh, the
 * SNACK's header as its data, StatSN the next one and advanced after
 * it), then that the session goes on: no connection closed, nothing else
 * sent, the next commands answered. Cases:
 *
 *   data_r2t_snack_rejected_04_with_next_r2tsn
 *       a Data/R2T SNACK for a write holding its first R2T: the Reject's
 *       DataSN/R2TSN is the next R2TSN the target would send (11.17.2:
 *       1), the write then completes and reads back
 *   status_snack_rejected_04
 *       a Status SNACK for a status already acknowledged
 *   data_ack_rejected_04
 *       a DataACK after a read (tcqd never sets the A bit at ERL 0)
 *   rdata_snack_rejected_04
 *       an R-Data SNACK for a finished read
 *
 *   snack HOST PORT TARGET-IQN [CASE...]       snack --list
 *
 * LUN 0: 512-byte blocks, MaxBurstLength 16K (snack.sh), nothing else
 * using it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tcq/pdu.h"
#include "tcq/scsi_proto.h"
#include "tests/integration/pdutest.h"
#include "tests/integration/ptcase.h"
#include "tests/integration/ptcmd.h"

#define BURST 16384u		/* snack.sh's max_burst_length */

static int login(struct pt_sess *s)
{
	if (pt_login(s, NULL) < 0) {
		PT_CHECK(0, "login");
		return -1;
	}
	return pc_tur_ua(s, NULL) == SAM_STAT_GOOD ? 0 : -1;
}

/*
 * Sends a SNACK of type for itt (BegRun, RunLength, TTT) and checks the
 * Reject it gets: 11.17 and reason 04h. *datasn gets its DataSN/R2TSN.
 * Returns 0 when the Reject was right.
 */
static int snack_rejected(struct pt_sess *s, uint8_t type, uint32_t itt,
			  uint32_t ttt, uint32_t begrun, uint32_t runlength,
			  uint32_t *datasn)
{
	struct pdu_snack sn = { 0 };
	uint8_t bhs[ISCSI_BHS_LEN];
	uint32_t statsn = s->exp_statsn;
	struct pt_rx r;
	bool ok;

	sn.type = type;
	sn.itt = itt;
	sn.ttt = ttt;
	sn.expstatsn = s->exp_statsn;
	sn.begrun = begrun;
	sn.runlength = runlength;
	pdu_encode_snack(bhs, &sn);
	pdu_set_data_len(bhs, 0);
	if (pt_sess_send(s, bhs, NULL, 0, 0, 0) < 0 ||
	    pt_recv(s, &r, 5000) <= 0) {
		PT_CHECK(0, "an answer to the SNACK");
		return -1;
	}
	ok = pdu_opcode(r.bhs) == ISCSI_OP_REJECT;
	PT_CHECK(ok, "SNACK type %u answered with a Reject (opcode 0x%02x)",
		 type, pdu_opcode(r.bhs));
	if (ok) {
		ok = r.bhs[1] == ISCSI_FLAG_FINAL &&
		     r.bhs[BHS_B2] == ISCSI_REJECT_PROTOCOL_ERROR &&
		     pdu_itt(r.bhs) == ISCSI_RSVD_TAG &&
		     get_be32(r.bhs + BHS_STATSN) == statsn &&
		     r.len == ISCSI_BHS_LEN && !memcmp(r.data, bhs, r.len);
		PT_CHECK(ok, "the Reject: byte 1 0x%02x (80h), reason 0x%02x "
			 "(04h, Protocol Error), ITT 0x%x, StatSN %u (%u), "
			 "the SNACK's header as its %u bytes of data",
			 r.bhs[1], r.bhs[BHS_B2], pdu_itt(r.bhs),
			 get_be32(r.bhs + BHS_STATSN), statsn, r.len);
		if (datasn)
			*datasn = get_be32(r.bhs + BHS_F36);
	}
	pt_rx_free(&r);
	return ok ? 0 : -1;
}

/* The session after the SNACK: a command answered, with the StatSN after
 * the Reject's (11.17.3: StatSN is advanced after a Reject). */
static void goes_on(struct pt_sess *s)
{
	uint32_t want = s->exp_statsn;
	uint32_t before = want - 1;	/* the Reject's */

	PT_CHECK(pt_tur(s) == SAM_STAT_GOOD && s->exp_statsn == want + 1,
		 "the session goes on: TEST UNIT READY GOOD with StatSN %u, "
		 "after the Reject's %u", s->exp_statsn - 1, before);
	pt_logout(s);
}

static void data_r2t_snack_rejected_04_with_next_r2tsn(void)
{
	static uint8_t buf[2 * BURST];
	struct pc_cmd w;
	struct pt_sess s;
	uint32_t next = 0xdead;

	if (login(&s) < 0)
		return;
	pc_fill(buf, sizeof(buf), 7);
	/* Two bursts, MaxOutstandingR2T 1: R2TSN 0 is out, 1 is next. */
	if (pc_pending_write(&s, &w, 64, sizeof(buf), buf) < 0) {
		PT_CHECK(0, "the write's first R2T");
		pt_logout(&s);
		return;
	}
	PT_CHECK(w.n_held == 1 && w.r2t[0].r2tsn == 0, "one R2T (R2TSN %u) "
		 "held (%u), %u in all", w.r2t[0].r2tsn, w.n_held, w.n_r2t);
	if (snack_rejected(&s, ISCSI_SNACK_DATA_R2T, w.itt, ISCSI_RSVD_TAG,
			   0, 0, &next) == 0)
		PT_CHECK(next == 1, "the Reject's DataSN/R2TSN is the next "
			 "R2TSN of the task: %u (want 1)", next);
	pc_release(&s, &w);
	{
		struct pc_cmd *cs[] = { &w };

		pc_wait(&s, cs, 1, &w, pc_is_done, 5000, NULL);
	}
	PT_CHECK(w.status == SAM_STAT_GOOD && w.n_r2t == 2,
		 "the write completes after its second R2T (status %d, "
		 "%u R2Ts)", w.status, w.n_r2t);
	PT_CHECK(pc_same_as(&s, 64, sizeof(buf), buf) == 1,
		 "the write reads back");
	goes_on(&s);
}

static void status_snack_rejected_04(void)
{
	struct pt_sess s;

	if (login(&s) < 0)
		return;
	/* The last status, acknowledged by the ExpStatSN sent with it. */
	if (snack_rejected(&s, ISCSI_SNACK_STATUS, ISCSI_RSVD_TAG,
			   ISCSI_RSVD_TAG, s.exp_statsn - 1, 1, NULL) == 0)
		goes_on(&s);
	else
		pt_logout(&s);
}

/* A read of one burst, done; its ITT. */
static uint32_t read_done(struct pt_sess *s)
{
	static uint8_t buf[BURST];
	struct pc_cmd r;

	pc_rw10(&r, false, 0, BURST / PC_BS, buf, PC_BS);
	PT_CHECK(pc_run(s, &r, 5000) == SAM_STAT_GOOD, "a %u-byte read",
		 BURST);
	return r.itt;
}

static void data_ack_rejected_04(void)
{
	struct pt_sess s;

	if (login(&s) < 0)
		return;
	read_done(&s);
	/* 11.16: a DataACK's ITT is ffffffffh; BegRun acknowledges the
	 * Data-In before it (here all four, DataSN 0-3). */
	if (snack_rejected(&s, ISCSI_SNACK_DATA_ACK, ISCSI_RSVD_TAG,
			   ISCSI_RSVD_TAG, 4, 0, NULL) == 0)
		goes_on(&s);
	else
		pt_logout(&s);
}

static void rdata_snack_rejected_04(void)
{
	struct pt_sess s;
	uint32_t itt;

	if (login(&s) < 0)
		return;
	itt = read_done(&s);
	/* 11.16: an R-Data SNACK's TTT is a SNACK Tag (not 0, not
	 * ffffffffh); BegRun 0 and RunLength 0: all of it. */
	if (snack_rejected(&s, ISCSI_SNACK_RDATA, itt, 0x5a, 0, 0, NULL) == 0)
		goes_on(&s);
	else
		pt_logout(&s);
}

static const struct pt_case cases[] = {
	PT_CASE(data_r2t_snack_rejected_04_with_next_r2tsn),
	PT_CASE(status_snack_rejected_04),
	PT_CASE(data_ack_rejected_04),
	PT_CASE(rdata_snack_rejected_04),
};

static const struct pt_driver driver = {
	.prog = "snack",
	.initiator = "iqn.2026-11.org.tcq:snack",
	.cases = cases,
	.ncases = PT_NCASES(cases),
};

int main(int argc, char **argv)
{
	return pt_main(&driver, argc, argv);
}
