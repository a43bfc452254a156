/*
 * ptcmd: SCSI commands with data over a pdutest session, for tests that
 * keep several commands in flight and look at the order things happen:
 * immediate data, R2Ts answered at once or held back until the test
 * releases them, Data-In gathered into the command's buffer, and every
 * completion stamped with a sequence number shared by all sessions.
 */
#ifndef TCQ_TESTS_PTCMD_H
#define TCQ_TESTS_PTCMD_H
#include <stdbool.h>
#include <stdint.h>

#include "tcq/iscsi_proto.h"
#include "tests/integration/pdutest.h"

#define PC_MAX_R2T 32
#define PC_BS 512u		/* the LUNs these tests use have 512-byte blocks */

struct pc_cmd {
	/* Set by the caller before pc_start. */
	uint8_t cdb[16];
	uint64_t lun;			/* LUN number (0 after pc_rw10/pc_nodata) */
	uint8_t attr;			/* ISCSI_ATTR_* */
	bool read, write;
	uint32_t edtl;
	uint8_t *buf;			/* edtl bytes: data out, or data in */
	uint32_t imm_len;		/* immediate data sent with the command */
	bool hold_r2t;			/* keep R2Ts for pc_release */
	/* Corruption: XOR into the data digest of the immediate data, and
	 * of the last Data-Out PDU answering the last R2T. */
	uint32_t imm_dd_xor, last_dd_xor;

	/* Filled in as the command runs. */
	uint32_t itt, cmdsn;
	struct pdu_r2t r2t[PC_MAX_R2T];	/* held R2Ts */
	unsigned n_held, n_r2t;		/* held now; seen in all */
	bool r2t_bad;			/* an R2T outside the transfer */
	uint32_t in_bytes;		/* Data-In received */
	bool in_bad;			/* Data-In outside the buffer */
	unsigned first_in_seq;		/* pc_seq at the first Data-In (0: none) */
	bool done;
	unsigned done_seq;		/* pc_seq at completion */
	int status;			/* SAM status; -1 until done */
	int response;			/* iSCSI response code */
	int sense_key, asc, ascq;	/* -1 without sense */
	uint32_t residual;
	unsigned pdus;			/* PDUs seen with this ITT */
};

/* Completion order across every session of the program. */
extern unsigned pc_seq;

/* Sends c (itt and cmdsn taken from s) with its immediate data. */
int pc_start(struct pt_sess *s, struct pc_cmd *c);
/* Answers the R2Ts held for c, then lets new ones through. */
int pc_release(struct pt_sess *s, struct pc_cmd *c);

/*
 * Receives PDUs of s for the commands in cmds (n of them) until want
 * holds (when want is non-NULL) or timeout_ms passes. Returns 1 when want
 * holds, 0 at the timeout, -1 when the connection closed. PDUs for no
 * listed command are shown and counted in *stray (may be NULL).
 */
typedef bool (*pc_pred)(const struct pc_cmd *c);
int pc_wait(struct pt_sess *s, struct pc_cmd **cmds, unsigned n,
	    const struct pc_cmd *target, pc_pred want, int timeout_ms,
	    unsigned *stray);
bool pc_is_done(const struct pc_cmd *c);
bool pc_has_r2t(const struct pc_cmd *c);

/* One command on its own: start, wait for its end. Returns its status
 * (-1: no response within timeout_ms). */
int pc_run(struct pt_sess *s, struct pc_cmd *c, int timeout_ms);

/* A task management function request to LUN lun (a number, encoded on
 * the wire by the codec); immediate unless queued. */
struct pc_tmf {
	uint8_t function;
	uint64_t lun;
	uint32_t rtt, refcmdsn;
	bool queued;
	/* Filled in by pc_tmf. */
	uint32_t itt;
	int response;			/* -1 until the response came */
	uint8_t rsp[ISCSI_BHS_LEN];	/* its header */
	uint32_t rsp_len;		/* its data segment length */
};

/* Sends t and waits up to 5 s for its response, handing the PDUs of the
 * commands in cmds to them meanwhile (an aborted task's status, say);
 * others count in *stray (may be NULL). Returns the response code, -1
 * when none came. */
int pc_tmf(struct pt_sess *s, struct pc_tmf *t, struct pc_cmd **cmds,
	   unsigned n, unsigned *stray);

/* Runs c, again past unit attentions (the first command of a nexus may
 * report one); returns the final status. The ASC << 8 | ASCQ of each
 * unit attention seen goes to ua (up to 3, 0-ended) when ua is not NULL. */
int pc_run_past_ua(struct pt_sess *s, struct pc_cmd *c, int ua[4]);
/* TEST UNIT READY the same way. */
int pc_tur_ua(struct pt_sess *s, int ua[4]);
bool pc_has_ua(const int ua[4], int asc_ascq);
/* READ(10)/WRITE(10) of len bytes at lba (past unit attentions), imm of
 * them as immediate data; the status. */
int pc_rw(struct pt_sess *s, bool write, uint32_t lba, uint32_t len,
	  uint8_t *buf, uint32_t imm);
/* READ of len bytes at lba compared with want: 1 same, 0 differs, -1
 * failed. */
int pc_same_as(struct pt_sess *s, uint32_t lba, uint32_t len,
	       const uint8_t *want);
/* Mode page page (MODE SENSE(6), DBD) into out: its length, or -1. */
int pc_mode_page(struct pt_sess *s, uint8_t page, uint8_t *out,
		 unsigned outlen);
/* Starts a WRITE of len bytes of buf at lba that holds its R2T: 0 once
 * the R2T is in (checked), -1 otherwise. */
int pc_pending_write(struct pt_sess *s, struct pc_cmd *w, uint32_t lba,
		     uint32_t len, uint8_t *buf);
/* After w (a WRITE holding its R2Ts) was aborted: answers its R2Ts late,
 * then TEST UNIT READY until it is not a unit attention (4 tries); the
 * unit attentions seen go to ua (0-ended), the last status to
 * *tur_status. Returns how many PDUs still came for w. */
unsigned pc_after_abort(struct pt_sess *s, struct pc_cmd *w, int ua[4],
			int *tur_status);

/* Helpers that fill a pc_cmd (attr SIMPLE, no held R2Ts). */
void pc_rw10(struct pc_cmd *c, bool write, uint32_t lba, uint16_t blocks,
	     uint8_t *buf, uint32_t block_size);
void pc_nodata(struct pc_cmd *c, const uint8_t *cdb, unsigned cdb_len);

/* A repeatable pattern: buf[i] depends on seed and i. */
void pc_fill(uint8_t *buf, uint32_t len, uint32_t seed);

#endif
