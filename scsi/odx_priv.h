/*
 * What the ODX files share (scsi/odx_store.c, scsi/odx.c, scsi/odx_wut.c):
 * the token registry and the results held for RECEIVE ROD TOKEN
 * INFORMATION, both in one process-wide table under one lock, so a token
 * made on one LUN is found by a WRITE USING TOKEN to any LUN of tcqd.
 */
#ifndef TCQ_ODX_PRIV_H
#define TCQ_ODX_PRIV_H
#include <stdbool.h>
#include <stdint.h>
#include "scsi/exec.h"
#include "scsi/odx.h"

struct lun;

/* A token's range: blocks [lba, lba+blocks) of its LUN. */
struct odx_range {
	uint64_t lba;
	uint32_t blocks;
};

/* The outcome of a POPULATE TOKEN or WRITE USING TOKEN, per LUN, I_T
 * nexus and LIST IDENTIFIER (SPC-4 RECEIVE ROD TOKEN INFORMATION). */
struct odx_result {
	uint8_t sa;		/* RESPONSE TO SERVICE ACTION */
	uint8_t status;		/* COPY OPERATION STATUS */
	uint8_t scsi_status;	/* the command's status */
	uint8_t sense_len;
	uint8_t sense[SENSE_BUF_MAX];
	uint64_t blocks;	/* TRANSFER COUNT, in logical blocks */
	bool has_token;
	uint8_t token[ODX_TOKEN_LEN];
};

/* COPY OPERATION STATUS values (SPC-4 RECEIVE COPY STATUS(LID4)). */
enum { ODX_CS_OK = 0x01, ODX_CS_ERROR = 0x02, ODX_CS_PARTIAL = 0x03 };

/* Where a ROD byte lies: the token's LUN and the block there, and how
 * many blocks follow in that range (resolved under the registry's lock,
 * only while the token is live). */
struct odx_src {
	struct lun *lun;
	uint64_t lba;
	uint64_t run;		/* blocks left in that range */
};

/*
 * Registers a token for ranges r[0..n) of l (their blocks add up to
 * blocks), inactivity timeout secs; writes its 512 bytes to token.
 * EXEC_OK, or INSUFFICIENT RESOURCES TO CREATE ROD TOKEN.
 */
struct exec_rc odx_token_create(struct lun *l, const struct odx_range *r,
				unsigned n, uint64_t blocks, uint32_t secs,
				uint8_t token[ODX_TOKEN_LEN]);
/*
 * Looks token up and, when it is live, finds ROD block rod_block in src
 * (and marks the token used now). Otherwise the INVALID TOKEN OPERATION
 * failure that says why: unknown, corrupt, expired, cancelled, deleted.
 * total: the blocks the token represents; bs: their size.
 */
struct exec_rc odx_token_resolve(const uint8_t *token, uint64_t rod_block,
				 struct odx_src *src, uint64_t *total,
				 uint32_t *bs);
/* The token is spent (WRITE USING TOKEN with DEL_TKN): deleted. */
void odx_token_delete(const uint8_t *token);

/* Holds res for (l, nexus, list_id), replacing an older one. */
void odx_result_put(struct lun *l, void *nexus, uint32_t list_id,
		    const struct odx_result *res);
/* Takes (and forgets: it is reported once) the result held for (l,
 * nexus, list_id); false when none is held. */
bool odx_result_take(struct lun *l, void *nexus, uint32_t list_id,
		     struct odx_result *res);
/* The result of a failed command: status 02h with its sense data. */
void odx_result_fail(struct tcq_task *t, uint8_t sa, uint32_t list_id,
		     struct exec_rc rc, uint64_t blocks);

/* The block device range descriptors of a parameter list (dlen bytes
 * from byte at), checked against l: at most ODX_MAX_RANGES, inside the
 * medium, not overlapping. Fills r, *n and the sum of their blocks. */
struct exec_rc odx_parse_ranges(const struct lun *l, const uint8_t *p,
				uint32_t at, uint32_t dlen,
				struct odx_range *r, unsigned *n,
				uint64_t *blocks);
/* The lengths of t's parameter list: a header of hdr bytes (its data
 * length at byte 0) and the range descriptor length at byte dl_at, put
 * in *dlen. */
struct exec_rc odx_check_list(const struct tcq_task *t, uint32_t hdr,
			      uint32_t dl_at, uint32_t *dlen);
#endif
