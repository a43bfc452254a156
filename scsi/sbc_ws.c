/*
 * WRITE SAME (10/16) (SBC-3 5.41-5.43, SBC-4 NDOB): one block of data
 * written to a range, or the range deallocated when the UNMAP bit asks
 * for it on a thin LUN. A backend that repeats a block itself (rbd:
 * BDEV_WRITE_SAME) gets the one block and the whole range; for the others
 * the range is written in chunks of SBC_WS_CHUNK bytes from one scratch
 * buffer filled with copies of the block.
 */
#include <errno.h>
#include <string.h>
#include "tcq/byteorder.h"
#include "tcq/compiler.h"
#include "tcq/scsi_proto.h"
#include "scsi/cdb.h"
#include "scsi/exec.h"
#include "scsi/lun.h"
#include "scsi/opcodes.h"
#include "scsi/sbc.h"
#include "scsi/sbc_priv.h"
#include "scsi/sense.h"
#include "scsi/spc.h"

static struct exec_rc ws_next(struct tcq_task *t);

static struct exec_rc ws_io_done(struct tcq_task *t)
{
	const struct bdev_io *io = &t->exec.io;

	if (io->result == -ENOSPC)
		return exec_sense_info(SK_DATA_PROTECT,
				       ASC_SPACE_ALLOCATION_FAILED, t->req.lba);
	if (io->result)
		return exec_sense_info(SK_MEDIUM_ERROR, ASC_WRITE_ERROR,
				       t->req.lba);
	t->exec.pos += io->len / t->lun->block_size;
	return ws_next(t);
}

/* Writes the next chunk; t->req.blocks is the whole range here. */
static struct exec_rc ws_next(struct tcq_task *t)
{
	uint32_t bs = t->lun->block_size;
	uint64_t left = t->req.blocks - t->exec.pos;
	unsigned flags = t->lun->write_cache ? 0 : BDEV_FUA;

	if (!left)
		return exec_good(t);
	uint64_t n = MIN(left, (uint64_t)t->exec.buf_len / bs);
	return sbc_submit(t, BDEV_WRITE, flags,
			  (t->req.lba + t->exec.pos) * bs, n * bs,
			  t->exec.buf, ws_io_done);
}

static struct exec_rc ws_locked(struct tcq_task *t)
{
	uint32_t bs = t->lun->block_size;
	bool ndob = t->req.flags & CDBF_WS_NDOB;
	uint64_t bytes = (uint64_t)t->req.blocks * bs;
	unsigned fua = t->lun->write_cache ? 0 : BDEV_FUA;

	/* UNMAP: the blocks are deallocated whatever the data block holds
	 * (SBC-3 5.42; they then read back as zeros, LBPRZ), as initiators
	 * and libiscsi's tests expect. */
	if (t->req.flags & CDBF_WS_UNMAP)
		return sbc_submit(t, BDEV_DISCARD, 0, t->req.lba * bs, bytes,
				  NULL, ws_io_done);
	if (ndob)
		return sbc_submit(t, BDEV_WRITE_ZEROES, fua, t->req.lba * bs,
				  bytes, NULL, ws_io_done);
	if (t->lun->bdev->write_same) {
		t->exec.io.pattern_len = bs;
		return sbc_submit(t, BDEV_WRITE_SAME, fua, t->req.lba * bs,
				  bytes, t->buf, ws_io_done);
	}
	uint64_t chunk = MIN(bytes, (uint64_t)MAX(SBC_WS_CHUNK, bs));
	chunk -= chunk % bs;
	struct exec_rc rc = sbc_xbuf(t, chunk);
	if (exec_failed(rc))
		return rc;
	for (uint64_t off = 0; off < chunk; off += bs)
		memcpy((uint8_t *)t->exec.buf + off, t->buf, bs);
	return ws_next(t);
}

struct exec_rc sbc_write_same(struct tcq_task *t)
{
	struct lun *l = t->lun;
	struct sense_info si;
	bool ndob = t->req.flags & CDBF_WS_NDOB;

	if (lun_write_protected(t))
		return exec_sense(SK_DATA_PROTECT, ASC_WRITE_PROTECTED);
	if (cdb_check_range(&t->req, l->nblocks, &si))
		return exec_si(&si);
	if ((t->req.flags & CDBF_WS_UNMAP) && !sbc_thin(t))
		return exec_cdb_field(1, 3);	/* no deallocation here
						 * (LBPME=0) */
	/* WSNZ=0: zero blocks means "to the end of the medium". */
	if (t->req.blocks == 0)
		t->req.blocks = (uint32_t)MIN(l->nblocks - t->req.lba,
					      (uint64_t)UINT32_MAX);
	if (t->req.blocks > SBC_MAX_WS_BLOCKS)
		return exec_cdb_field(t->req.cmd->len_byte, -1);
	if (!ndob) {
		if (t->exp_len != l->block_size)
			return exec_sense(SK_ILLEGAL_REQUEST,
					  ASC_INVALID_FIELD_IN_INFORMATION_UNIT);
		if (!t->buf || t->buf_len < l->block_size)
			return exec_target_failure();
	}
	if (t->req.blocks == 0)		/* LBA == capacity, to the end */
		return exec_good(t);
	t->exec.pos = 0;
	return sbc_lock_then(t, t->req.lba, t->req.blocks, false, ws_locked);
}

/* Block Limits VPD (SBC-4 6.6.4) fields for the commands of this area. */
void sbc_block_limits(const struct lun *l, uint8_t *p)
{
	uint32_t maxx = spc_max_xfer_blocks(l);
	uint32_t atomic = SBC_MAX_ATOMIC_BLOCKS;

	if (maxx && atomic > maxx)
		atomic = maxx;
	p[5] = (uint8_t)sbc_caw_max_blocks(l);	/* MAXIMUM COMPARE AND WRITE
						 * LENGTH */
	put_be64(p + 36, SBC_MAX_WS_BLOCKS);	/* MAXIMUM WRITE SAME LENGTH */
	put_be32(p + 44, atomic);	/* MAXIMUM ATOMIC TRANSFER LENGTH */
	put_be32(p + 48, SBC_ATOMIC_ALIGN);
	put_be32(p + 52, SBC_ATOMIC_GRAN);
}
