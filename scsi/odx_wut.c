/*
 * WRITE USING TOKEN (SBC-4): the blocks a token represents, from OFFSET
 * INTO ROD on, are written to the command's ranges, one chunk at a time
 * through a scratch buffer: read from the token's LUN (any LUN of tcqd),
 * then written here. The token is looked up again before every read and
 * after it, so a write to its source ranges that ran before a chunk was
 * read (and cancelled the token: scsi/odx_store.c) fails the copy with
 * TOKEN CANCELLED instead of copying changed data. The block device zero
 * ROD token writes zeros.
 *
 * Progress: t->exec.pending is the range being written, t->req.lba the
 * blocks written in it, t->exec.pos the blocks written in all.
 */
#include <string.h>
#include "tcq/byteorder.h"
#include "tcq/compiler.h"
#include "tcq/reactor.h"
#include "tcq/scsi_proto.h"
#include "scsi/lun.h"
#include "scsi/odx_priv.h"
#include "scsi/record.h"
#include "scsi/sbc_priv.h"

#define WUT_HDR 536		/* the parameter list before its ranges */
#define WUT_TOKEN 16		/* where the ROD token is */
#define RANGE_LEN 16

static uint32_t wut_list_id(const struct tcq_task *t)
{
	return get_be32(t->cdb + 6);
}

static bool wut_zero(const struct tcq_task *t)
{
	return get_be32((const uint8_t *)t->buf + WUT_TOKEN) == ODX_ROD_ZERO;
}

static struct exec_rc wut_fail(struct tcq_task *t, struct exec_rc rc)
{
	odx_result_fail(t, XCOPY_WRITE_USING_TOKEN, wut_list_id(t), rc,
			t->exec.pos);
	return rc;
}

/* The end: GOOD, with the result held as done, or as partial when the
 * ROD ran out before the ranges did. */
static struct exec_rc wut_finish(struct tcq_task *t, bool partial)
{
	const uint8_t *p = t->buf;
	struct odx_result res;

	if (!wut_zero(t) && (p[2] & 0x02))	/* DEL_TKN */
		odx_token_delete(p + WUT_TOKEN);
	memset(&res, 0, sizeof(res));
	res.sa = XCOPY_WRITE_USING_TOKEN;
	res.status = partial ? ODX_CS_PARTIAL : ODX_CS_OK;
	res.blocks = t->exec.pos;
	odx_result_put(t->lun, t->nexus, wut_list_id(t), &res);
	return exec_good(t);
}

/* One I/O of the copy to l, through t->exec.io; then(t) runs once it
 * completed. */
static struct exec_rc wut_io(struct tcq_task *t, struct lun *l,
			     enum bdev_op op, uint64_t lba, uint32_t blocks,
			     sbc_step *then)
{
	struct bdev_io *io = &t->exec.io;
	struct bdev_queue *q = l->bdev ?
		bdev_queue_get(l->bdev, reactor_self()) : NULL;

	if (!q)
		return wut_fail(t, exec_sense(SK_COPY_ABORTED,
				ASC_COPY_TARGET_DEVICE_NOT_REACHABLE));
	memset(io, 0, sizeof(*io));
	sbc_io_prepare(io, t, op, lba * l->block_size,
		       (uint64_t)blocks * l->block_size, t->exec.buf);
	io->flags = op == BDEV_WRITE && !lun_get_write_cache(l) ? BDEV_FUA : 0;
	t->exec.next = then;
	if (op == BDEV_WRITE) {
		/* What this writes cancels the tokens of those blocks, its
		 * own token's too: the copy then stops (TOKEN CANCELLED). */
		odx_note_range(l, lba, blocks);
		record_write(l, t, io);	/* the crash lab's, when recording */
	}
	bdev_submit(q, io);
	return EXEC_OK;
}

/* The current destination range, or false when all are written. */
static bool wut_range(const struct tcq_task *t, uint64_t *lba,
		      uint32_t *blocks)
{
	const uint8_t *p = t->buf;
	uint32_t n = get_be16(p + WUT_HDR - 2) / RANGE_LEN;

	if (t->exec.pending >= n)
		return false;
	const uint8_t *d = p + WUT_HDR + (size_t)RANGE_LEN * t->exec.pending;
	*lba = get_be64(d);
	*blocks = get_be32(d + 8);
	return true;
}

static struct exec_rc wut_step(struct tcq_task *t);

static struct exec_rc wut_write_done(struct tcq_task *t)
{
	struct lun *l = t->lun;
	const struct bdev_io *io = &t->exec.io;
	uint64_t lba;
	uint32_t blocks;

	if (io->result) {
		wut_range(t, &lba, &blocks);
		return wut_fail(t, exec_sense_info(SK_MEDIUM_ERROR,
			ASC_WRITE_ERROR, lba + t->req.lba));
	}
	/* a token made while this chunk was written may hold some of it */
	odx_note_range(l, io->offset / l->block_size, io->len / l->block_size);
	t->exec.pos += io->len / l->block_size;
	t->req.lba += io->len / l->block_size;
	return wut_step(t);
}

/* The chunk is read: written if the token is still live. */
static struct exec_rc wut_read_done(struct tcq_task *t)
{
	const uint8_t *p = t->buf;
	const struct bdev_io *io = &t->exec.io;
	struct odx_src src;
	uint64_t total, lba;
	uint32_t bs, blocks;

	if (io->result)
		return wut_fail(t, exec_sense(SK_COPY_ABORTED,
					      ASC_NO_ADDITIONAL_SENSE));
	struct exec_rc rc = odx_token_resolve(p + WUT_TOKEN, 0, &src, &total,
					      &bs);
	if (exec_failed(rc))
		return wut_fail(t, rc);
	wut_range(t, &lba, &blocks);
	return wut_io(t, t->lun, BDEV_WRITE, lba + t->req.lba,
		      (uint32_t)(io->len / t->lun->block_size),
		      wut_write_done);
}

/* The next chunk: from the ROD (or zeros) to the current range. */
static struct exec_rc wut_step(struct tcq_task *t)
{
	const uint8_t *p = t->buf;
	uint32_t bs = t->lun->block_size, blocks;
	uint64_t lba;

	for (;;) {
		if (!wut_range(t, &lba, &blocks))
			return wut_finish(t, false);
		if (t->req.lba < blocks)
			break;
		t->exec.pending++;	/* range done */
		t->req.lba = 0;
	}
	uint64_t n = MIN((uint64_t)blocks - t->req.lba, t->exec.buf_len / bs);
	if (wut_zero(t))
		return wut_io(t, t->lun, BDEV_WRITE, lba + t->req.lba,
			      (uint32_t)n, wut_write_done);
	struct odx_src src;
	uint64_t total;
	uint32_t sbs;
	struct exec_rc rc = odx_token_resolve(p + WUT_TOKEN,
		get_be64(p + 8) + t->exec.pos, &src, &total, &sbs);
	if (exec_failed(rc))
		return wut_fail(t, rc);
	if (!src.run)		/* the ROD ends before the ranges */
		return wut_finish(t, true);
	return wut_io(t, src.lun, BDEV_READ, src.lba,
		      (uint32_t)MIN(n, src.run), wut_read_done);
}

/* The parameter list and the token, before anything is written. */
static struct exec_rc wut_check(struct tcq_task *t)
{
	const uint8_t *p = t->buf;
	struct lun *l = t->lun;
	struct odx_range r[ODX_MAX_RANGES];
	struct odx_src src;
	uint64_t blocks, total;
	uint32_t dlen, bs;
	unsigned n;
	struct exec_rc rc = odx_check_list(t, WUT_HDR, WUT_HDR - 2, &dlen);

	if (exec_failed(rc))
		return rc;
	if (p[2] & ~0x03)		/* DEL_TKN, IMMED */
		return exec_param_field(2, -1);
	if (lun_write_protected(t))	/* also a :ro map */
		return exec_sense(SK_DATA_PROTECT, ASC_WRITE_PROTECTED);
	rc = odx_parse_ranges(l, p, WUT_HDR, dlen, r, &n, &blocks);
	if (exec_failed(rc) || wut_zero(t))
		return rc;
	rc = odx_token_resolve(p + WUT_TOKEN, get_be64(p + 8), &src, &total,
			       &bs);
	if (exec_failed(rc))
		return rc;
	if (bs != l->block_size)	/* blocks of another size */
		return exec_sense(SK_ILLEGAL_REQUEST,
				  ASC_INVALID_TOKEN_OPERATION);
	if (get_be64(p + 8) > total)	/* OFFSET INTO ROD past its end */
		return exec_param_field(8, -1);
	return EXEC_OK;
}

struct exec_rc sbc_write_using_token(struct tcq_task *t)
{
	struct exec_rc rc;

	t->exec.pos = 0;
	rc = wut_check(t);
	if (exec_failed(rc))
		return wut_fail(t, rc);
	rc = sbc_xbuf(t, SBC_WS_CHUNK);
	if (exec_failed(rc))
		return wut_fail(t, rc);
	if (wut_zero(t))
		memset(t->exec.buf, 0, t->exec.buf_len);
	t->exec.pending = 0;
	t->req.lba = 0;
	return wut_step(t);
}
