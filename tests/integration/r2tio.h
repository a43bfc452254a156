/*
 * r2tio: a WRITE sent through every write data rule of RFC 7143 and its
 * R2Ts checked as they come, and a READ whose Data-In is checked, for
 * bursts.c. Expected values come from the negotiated keys (struct r2t_keys)
 * and the RFC's rules, never from what the target sent before.
 */
#ifndef TCQ_TESTS_R2TIO_H
#define TCQ_TESTS_R2TIO_H
#include <stdbool.h>
#include <stdint.h>

#include "tests/integration/pdutest.h"

/* The keys of the write rules: one side's offer, or their results. */
struct r2t_keys {
	bool ir2t, imm;			/* InitialR2T, ImmediateData */
	uint32_t fbl, mbl, mor2t;	/* First/MaxBurstLength, MaxOutstandingR2T */
	uint32_t tmrdsl;		/* the target's MaxRecvDataSegmentLength */
};

/* Logs in offering ours (and MaxRecvDataSegmentLength 8192); *n gets the
 * results RFC 7143 13 gives with tgt's offers, and the answers to our
 * offers are checked against them. 0, or -1 (checked) on failure. */
int r2t_login(struct pt_sess *s, const struct r2t_keys *tgt,
	      const struct r2t_keys *ours, struct r2t_keys *n);

struct r2t_write {
	uint32_t lba, len;		/* 512-byte blocks */
	const uint8_t *buf;
	/* The plan (r2t_write_plan; a case may change it): immediate
	 * bytes, and immediate + unsolicited Data-Out bytes. */
	uint32_t imm, unsol;
	/* Faults: the first R2T answered with its length + reply_delta
	 * (F on the last PDU); the command's F bit set although unsolicited
	 * Data-Out follows; a Reject awaited for the command. */
	int reply_delta;
	bool final_anyway, expect_reject;

	/* Filled in by r2t_write_run. */
	int status;			/* -1: no status */
	int sense_key, asc, ascq;
	uint8_t residual_flags;		/* O and U bits of the response */
	unsigned r2ts;			/* R2Ts seen */
	int reject_reason;		/* -1: no Reject */
	bool reject_has_header;		/* its data is the command's BHS */
	bool answered;			/* a response came for the task */
};

/* What an initiator may send unsolicited for w->len bytes (RFC 7143
 * 13.10, 13.11, 13.14): fills w->imm and w->unsol. */
void r2t_write_plan(const struct r2t_keys *n, struct r2t_write *w);
/* Sends w and answers its R2Ts, checking each (11.8) and how many are
 * outstanding, until its status (or, with expect_reject, the Reject and
 * a ping after it). 0 when it ran to the end, -1 (checked) otherwise. */
int r2t_write_run(struct pt_sess *s, const struct r2t_keys *n,
		  struct r2t_write *w);
/* READ(10) of len bytes at lba: the Data-In checked (11.7: DataSN from
 * 0, offsets in order, sequences of at most MaxBurstLength, F on the
 * last of each) and the data compared with want. */
void r2t_read_check(struct pt_sess *s, const struct r2t_keys *n,
		    uint32_t lba, uint32_t len, const uint8_t *want);

#endif
