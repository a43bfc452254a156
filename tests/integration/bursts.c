/*
 * bursts: the write data rules of RFC 7143 across the keys that govern them
 * (InitialR2T, ImmediateData, FirstBurstLength, MaxBurstLength,
 * MaxOutstandingR2T; 13.10-13.17), against a running tcqd, with the raw
 * client of pdutest.c. The driver is told what tcqd was configured to
 * offer (-T) and computes every expected value from the RFC's rules: the
 * negotiated values (InitialR2T OR, ImmediateData AND, the others the
 * minimum), the unsolicited data an initiator may send, and what the R2Ts
 * must then ask for. Cases:
 *
 *   matrix_r2t_yes_imm_yes, matrix_r2t_yes_imm_no,
 *   matrix_r2t_no_imm_yes, matrix_r2t_no_imm_no
 *       our InitialR2T and ImmediateData offers, each with (First,
 *       MaxBurstLength) 8K/16K, 8K/256K, 64K/256K and MaxOutstandingR2T
 *       1 and 4: the answers to our offers are the results; writes below,
 *       at and above the bursts send the immediate and unsolicited data
 *       allowed (Data-Out DataSN from 0, F on the last), and the R2Ts are
 *       checked as they come (11.8: F bit, StatSN, R2TSN from 0 with no
 *       gap, Buffer Offset where the data not yet asked for begins,
 *       Desired Data Transfer Length never past MaxBurstLength, never
 *       more than MaxOutstandingR2T unanswered); the status is GOOD with
 *       no residual, and the data reads back exactly, its Data-In in
 *       sequences of at most MaxBurstLength with DataSN from 0 (11.7)
 *   unsolicited_past_first_burst_fails_0c0d
 *   unsolicited_short_of_first_burst_fails_0c0d
 *   r2t_answer_past_desired_length_fails_0c0d
 *   r2t_answer_short_with_final_fails_0c0d
 *       11.4.7.2: unsolicited data that is not FirstBurstLength while
 *       more was to be sent, or a reply to an R2T that is not the amount
 *       asked for, end the command with CHECK CONDITION, ABORTED COMMAND,
 *       0Ch/0Dh ("Incorrect amount of data"); nothing is written and the
 *       session goes on
 *   unsolicited_with_initial_r2t_yes_fails_0c0c
 *       unsolicited Data-Out where InitialR2T=Yes: ABORTED COMMAND,
 *       0Ch/0Ch ("Unexpected unsolicited data")
 *   immediate_past_first_burst_rejected
 *       immediate data longer than FirstBurstLength: the SCSI Command PDU
 *       is a protocol error, answered with a Reject (11.17, reason 04h,
 *       its header as the data); the task never exists, nothing is
 *       written, and the session goes on at the ExpCmdSN the Reject gives
 *
 *   bursts -T IR2T,IMM,FBL,MBL,MOR2T,MRDSL HOST PORT TARGET-IQN [CASE...]
 *
 * -T: tcqd's initial_r2t, immediate_data (0/1), first_burst_length,
 * max_burst_length, max_outstanding_r2t, max_recv_data_segment_length.
 * The excess cases need what r2t.sh's fixtures give them (they skip
 * otherwise). LUN 0: 512-byte blocks, at least 64 MiB, nothing else
 * using it.
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
#include "tests/integration/r2tio.h"

static struct r2t_keys tgt;	/* what tcqd offers (-T) */

/* ---- the matrix ---------------------------------------------------------- */

/* Writes of len bytes at lba through every rule, then reads them back. */
static void write_and_read(struct pt_sess *s, const struct r2t_keys *n,
			   uint32_t lba, uint32_t len, uint32_t seed)
{
	uint8_t *buf = malloc(len);
	struct r2t_write w = { .lba = lba, .len = len, .buf = buf };

	if (!buf) {
		PT_CHECK(0, "memory for %u bytes", len);
		return;
	}
	pc_fill(buf, len, seed);
	r2t_write_plan(n, &w);
	if (r2t_write_run(s, n, &w) == 0)
		PT_CHECK(w.status == SAM_STAT_GOOD && w.residual_flags == 0,
			 "%u-byte write (%u immediate, %u unsolicited): status "
			 "0x%02x, residual flags 0x%02x", len, w.imm, w.unsol,
			 w.status, w.residual_flags);
	r2t_read_check(s, n, lba, len, buf);
	free(buf);
}

static void matrix(bool ir2t, bool imm)
{
	static const uint32_t bursts[][2] = {
		{ 8192, 16384 }, { 8192, 262144 }, { 65536, 262144 },
	};
	static const uint32_t mor2t[] = { 1, 4 };
	uint32_t lba = 0, seed = 1;

	for (unsigned b = 0; b < 3; b++) {
		for (unsigned m = 0; m < 2; m++) {
			struct r2t_keys ours = {
				.ir2t = ir2t, .imm = imm, .fbl = bursts[b][0],
				.mbl = bursts[b][1], .mor2t = mor2t[m],
			};
			struct r2t_keys n;
			struct pt_sess s;
			uint32_t sizes[6], nsizes;

			if (r2t_login(&s, &tgt, &ours, &n) < 0)
				return;
			pc_tur_ua(&s, NULL);
			/* Below, at and above FirstBurstLength and
			 * MaxBurstLength, and several bursts. */
			nsizes = 0;
			sizes[nsizes++] = n.fbl / 2;
			sizes[nsizes++] = n.fbl;
			sizes[nsizes++] = n.fbl + 512;
			sizes[nsizes++] = n.mbl;
			sizes[nsizes++] = n.mbl + 1536;
			sizes[nsizes++] = 2 * n.mbl + n.fbl + 1024;
			for (unsigned i = 0; i < nsizes; i++) {
				write_and_read(&s, &n, lba, sizes[i], seed++);
				lba += (sizes[i] + PC_BS - 1) / PC_BS;
			}
			pt_logout(&s);
		}
	}
}

static void matrix_r2t_yes_imm_yes(void) { matrix(true, true); }
static void matrix_r2t_yes_imm_no(void) { matrix(true, false); }
static void matrix_r2t_no_imm_yes(void) { matrix(false, true); }
static void matrix_r2t_no_imm_no(void) { matrix(false, false); }

/* ---- data past the limits ------------------------------------------------ */

#define X_LBA 100000u		/* where the excess cases write */
#define X_LEN 32768u

/* A session with our offers; skips unless tcqd's answers give want
 * (InitialR2T and ImmediateData as asked, FirstBurstLength 8K). */
static int excess_login(struct pt_sess *s, bool ir2t, bool imm,
			struct r2t_keys *n, uint8_t *old)
{
	struct r2t_keys ours = {
		.ir2t = ir2t, .imm = imm, .fbl = 8192, .mbl = 16384,
		.mor2t = 1,
	};

	if (r2t_login(s, &tgt, &ours, n) < 0)
		return -1;
	if (n->ir2t != ir2t || n->imm != imm || n->fbl != 8192 ||
	    (imm && n->tmrdsl <= 8192)) {
		pt_logout(s);
		pt_skip("tcqd's keys (-T) do not allow this case");
		return -1;
	}
	pc_tur_ua(s, NULL);
	/* What the LUN holds there before: it must still hold it. */
	pc_fill(old, X_LEN, 0xc0ffee);
	if (pc_rw(s, true, X_LBA, X_LEN, old, 0) != SAM_STAT_GOOD) {
		PT_CHECK(0, "the %u bytes written first", X_LEN);
		pt_logout(s);
		return -1;
	}
	return 0;
}

/* The session goes on, and the failed write changed nothing. */
static void excess_after(struct pt_sess *s, const uint8_t *old)
{
	PT_CHECK(pc_same_as(s, X_LBA, X_LEN, old) == 1,
		 "nothing of the refused write reached the LUN");
	PT_CHECK(pt_tur(s) == SAM_STAT_GOOD, "the session goes on");
	pt_logout(s);
}

static void expect_sense(const struct r2t_write *w, int asc, int ascq)
{
	PT_CHECK(w->status == SAM_STAT_CHECK_CONDITION &&
		 w->sense_key == SK_ABORTED_COMMAND && w->asc == asc &&
		 w->ascq == ascq, "CHECK CONDITION, ABORTED COMMAND, "
		 "%02Xh/%02Xh (got status 0x%02x, %x/%02x/%02x)", asc, ascq,
		 w->status, w->sense_key, w->asc, w->ascq);
}

static void unsolicited_past_first_burst_fails_0c0d(void)
{
	static uint8_t old[X_LEN], buf[X_LEN];
	struct r2t_keys n;
	struct pt_sess s;
	struct r2t_write w = { .lba = X_LBA, .len = X_LEN, .buf = buf };

	if (excess_login(&s, false, true, &n, old) < 0)
		return;
	pc_fill(buf, X_LEN, 0xbad);
	/* 4K immediate, then one unsolicited Data-Out of 8K: 12K of
	 * unsolicited data where FirstBurstLength is 8K. */
	r2t_write_plan(&n, &w);
	w.imm = 4096;
	w.unsol = 4096 + 8192;
	if (r2t_write_run(&s, &n, &w) == 0)
		expect_sense(&w, 0x0c, 0x0d);
	excess_after(&s, old);
}

static void unsolicited_short_of_first_burst_fails_0c0d(void)
{
	static uint8_t old[X_LEN], buf[X_LEN];
	struct r2t_keys n;
	struct pt_sess s;
	struct r2t_write w = { .lba = X_LBA, .len = X_LEN, .buf = buf };

	if (excess_login(&s, false, true, &n, old) < 0)
		return;
	pc_fill(buf, X_LEN, 0xbad);
	/* 4K immediate and 2K of unsolicited Data-Out ended by F: 6K of
	 * unsolicited data, not FirstBurstLength (8K), in a 32K write. */
	r2t_write_plan(&n, &w);
	w.imm = 4096;
	w.unsol = 4096 + 2048;
	if (r2t_write_run(&s, &n, &w) == 0)
		expect_sense(&w, 0x0c, 0x0d);
	excess_after(&s, old);
}

static void r2t_answer(bool past)
{
	static uint8_t old[X_LEN], buf[X_LEN];
	struct r2t_keys n;
	struct pt_sess s;
	struct r2t_write w = { .lba = X_LBA, .len = X_LEN, .buf = buf };

	if (excess_login(&s, true, false, &n, old) < 0)
		return;
	pc_fill(buf, X_LEN, 0xbad);
	r2t_write_plan(&n, &w);
	/* The first R2T (16K) answered with 20K, or with 8K and F=1. */
	w.reply_delta = past ? 4096 : -8192;
	if (r2t_write_run(&s, &n, &w) == 0)
		expect_sense(&w, 0x0c, 0x0d);
	excess_after(&s, old);
}

static void r2t_answer_past_desired_length_fails_0c0d(void)
{
	r2t_answer(true);
}

static void r2t_answer_short_with_final_fails_0c0d(void)
{
	r2t_answer(false);
}

static void unsolicited_with_initial_r2t_yes_fails_0c0c(void)
{
	static uint8_t old[X_LEN], buf[X_LEN];
	struct r2t_keys n;
	struct pt_sess s;
	struct r2t_write w = { .lba = X_LBA, .len = X_LEN, .buf = buf };

	if (excess_login(&s, true, false, &n, old) < 0)
		return;
	pc_fill(buf, X_LEN, 0xbad);
	/* The command says no unsolicited data follows (F=1), and a
	 * Data-Out without a TTT follows all the same. */
	r2t_write_plan(&n, &w);
	w.unsol = 4096;
	w.final_anyway = true;
	if (r2t_write_run(&s, &n, &w) == 0)
		expect_sense(&w, 0x0c, 0x0c);
	excess_after(&s, old);
}

static void immediate_past_first_burst_rejected(void)
{
	static uint8_t old[X_LEN], buf[X_LEN];
	struct r2t_keys n;
	struct pt_sess s;
	struct r2t_write w = { .lba = X_LBA, .len = X_LEN, .buf = buf };

	if (excess_login(&s, false, true, &n, old) < 0)
		return;
	pc_fill(buf, X_LEN, 0xbad);
	r2t_write_plan(&n, &w);
	w.imm = w.unsol = 8192 + 4096;	/* past FirstBurstLength (8K) */
	w.expect_reject = true;
	if (r2t_write_run(&s, &n, &w) == 0) {
		PT_CHECK(w.reject_reason == ISCSI_REJECT_PROTOCOL_ERROR &&
			 w.reject_has_header && !w.answered,
			 "Reject reason 0x%02x (want 04h, Protocol Error), "
			 "with the command's header: %s; a response for the "
			 "task: %s", w.reject_reason,
			 w.reject_has_header ? "yes" : "no",
			 w.answered ? "yes" : "no");
		/* Whether the rejected command used up its CmdSN is the
		 * target's call: go on at the ExpCmdSN the Reject gave. */
		s.cmdsn = s.exp_cmdsn;
	}
	excess_after(&s, old);
}

static const struct pt_case cases[] = {
	PT_CASE(matrix_r2t_yes_imm_yes),
	PT_CASE(matrix_r2t_yes_imm_no),
	PT_CASE(matrix_r2t_no_imm_yes),
	PT_CASE(matrix_r2t_no_imm_no),
	PT_CASE(unsolicited_past_first_burst_fails_0c0d),
	PT_CASE(unsolicited_short_of_first_burst_fails_0c0d),
	PT_CASE(r2t_answer_past_desired_length_fails_0c0d),
	PT_CASE(r2t_answer_short_with_final_fails_0c0d),
	PT_CASE(unsolicited_with_initial_r2t_yes_fails_0c0c),
	PT_CASE(immediate_past_first_burst_rejected),
};

int main(int argc, char **argv)
{
	int opt;
	unsigned v[6];

	pt_prog = "bursts";
	pt_initiator = "iqn.2026-11.org.tcq:bursts";
	while ((opt = getopt(argc, argv, "T:")) != -1) {
		if (opt != 'T' || sscanf(optarg, "%u,%u,%u,%u,%u,%u", &v[0],
					 &v[1], &v[2], &v[3], &v[4], &v[5]) != 6)
			return 2;
		tgt = (struct r2t_keys){ .ir2t = v[0], .imm = v[1],
			.fbl = v[2], .mbl = v[3], .mor2t = v[4], .tmrdsl = v[5] };
	}
	if (!tgt.mbl)
		return 2;
	return pt_run_cases(argc - optind, argv + optind, cases,
			    PT_NCASES(cases),
			    "bursts -T IR2T,IMM,FBL,MBL,MOR2T,MRDSL HOST PORT "
			    "TARGET-IQN [CASE...] | --list");
}
