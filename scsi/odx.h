/*
 * ODX: token-based copy offload (SBC-4 5.x POPULATE TOKEN, WRITE USING
 * TOKEN; SPC-4 6.x RECEIVE ROD TOKEN INFORMATION; the third-party copy
 * VPD page 8Fh) on the copy manager of scsi/xcopy.c. Tokens are of ROD
 * type "point in time copy - change vulnerable" (00800001h): a token
 * stands for the data of its ranges when it was made, and a write to any
 * of them (any medium-modifying command, from any initiator) cancels it;
 * WRITE USING TOKEN also takes the block device zero ROD token.
 */
#ifndef TCQ_ODX_H
#define TCQ_ODX_H
#include <stdint.h>
#include "scsi/exec.h"

struct lun;
struct tcq_task;

#define ODX_TOKEN_LEN 512
#define ODX_ROD_PIT_VULN 0x00800001u	/* point in time - change vulnerable */
#define ODX_ROD_PIT_ANY 0x0080ffffu	/* point in time - any */
#define ODX_ROD_ZERO 0xffff0001u	/* block device zero ROD token */
#define ODX_MAX_RANGES 64		/* MAXIMUM RANGE DESCRIPTORS */
#define ODX_DEFAULT_TIMEOUT 60		/* seconds of inactivity */
#define ODX_MAX_TIMEOUT 600
#define ODX_MAX_BLOCKS (1u << 23)	/* MAXIMUM TOKEN TRANSFER SIZE */
#define ODX_TOKENS_PER_LUN 64		/* live tokens a LUN's data may have */

/* Executors (command table rows, scsi/opcodes.c). */
struct exec_rc sbc_populate_token(struct tcq_task *t);
struct exec_rc sbc_write_using_token(struct tcq_task *t);
struct exec_rc sbc_receive_rod_token_info(struct tcq_task *t);

/* The third-party copy VPD page (8Fh) into p (512 bytes, zeroed, header
 * bytes 0-1 set); returns its length. */
uint32_t odx_vpd_tpc(const struct lun *l, uint8_t *p);

/*
 * A medium-modifying command is about to run on t's LUN (lun_dispatch):
 * the live tokens of the blocks it writes are cancelled first, so a copy
 * that reads a block after this sees a cancelled token. A command whose
 * ranges are not in its CDB (UNMAP, SANITIZE) cancels every token of the
 * LUN; WRITE USING TOKEN cancels by its own ranges. Called again when
 * the command has ended (lun_task_completed): a token made while the
 * write was in flight (POPULATE TOKEN from another nexus) may stand for
 * some of its data, and is cancelled then.
 */
void odx_note_write(struct tcq_task *t);
/* The same for blocks [lba, lba+blocks) of l written by the copy manager
 * itself: before each write of EXTENDED COPY and WRITE USING TOKEN is
 * submitted, and again once one of WRITE USING TOKEN has completed. */
void odx_note_range(struct lun *l, uint64_t lba, uint64_t blocks);
/* An I_T nexus leaves l: the results held for it are forgotten (a later
 * session at the same address must not read them). Its tokens stay:
 * any nexus may use them. */
void odx_nexus_gone(struct lun *l, void *nexus);
/* l goes away: its tokens and held results are forgotten. */
void odx_lun_gone(struct lun *l);

/* The clock of inactivity timeouts, in seconds (tests set their own;
 * NULL: CLOCK_MONOTONIC). */
void odx_set_clock(uint64_t (*now)(void));
#endif
