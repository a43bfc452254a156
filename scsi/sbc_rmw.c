/*
 * Writes with a second step (SBC-3 5.3, 5.9, 5.34-5.36; SBC-4 5.48):
 * WRITE AND VERIFY, ORWRITE, COMPARE AND WRITE, WRITE ATOMIC. The ones
 * that read the medium before writing hold the LUN's exclusive LBA range
 * lock from the read until the write has completed; COMPARE AND WRITE
 * goes to the backend as one operation instead when it offers one
 * (BDEV_COMPARE_AND_WRITE: rbd, where only the cluster can make it atomic
 * for every gateway).
 */
#include <errno.h>
#include <string.h>
#include "tcq/byteorder.h"
#include "tcq/scsi_proto.h"
#include "scsi/cdb.h"
#include "scsi/exec.h"
#include "scsi/lun.h"
#include "scsi/opcodes.h"
#include "scsi/sbc.h"
#include "scsi/sbc_priv.h"
#include "scsi/sense.h"
#include "scsi/spc.h"

static unsigned wflags(const struct tcq_task *t)
{
	return sbc_fua(t) ? BDEV_FUA : 0;
}

static struct exec_rc write_done(struct tcq_task *t)
{
	int result = t->exec.io.result;

	if (result == -ENOSPC)
		return exec_sense_info(SK_DATA_PROTECT,
				       ASC_SPACE_ALLOCATION_FAILED, t->req.lba);
	if (result)
		return exec_sense_info(SK_MEDIUM_ERROR, ASC_WRITE_ERROR,
				       t->req.lba);
	return exec_good(t);
}

/* Data-Out present and as long as the CDB says (too much is refused
 * too: these commands have no use for a partial transfer). */
static struct exec_rc check_data(const struct tcq_task *t)
{
	if (t->exp_len != t->req.data_out_len)
		return exec_sense(SK_ILLEGAL_REQUEST,
				  ASC_INVALID_FIELD_IN_INFORMATION_UNIT);
	if (!t->buf || t->buf_len < t->req.data_out_len)
		return exec_target_failure();
	return EXEC_OK;
}

/* ---- WRITE AND VERIFY ------------------------------------------------- */

/*
 * The medium read back into exec.buf against the Data-Out at t->buf:
 * EXEC_OK when they match. Otherwise the failure: a read error, or
 * MISCOMPARE with INFORMATION the offset of the first byte that differs,
 * counted from the start of the compared data (SBC-3 5.2, SBC-4 5.49).
 */
static struct exec_rc read_back_matches(const struct tcq_task *t)
{
	const struct bdev_io *io = &t->exec.io;
	const uint8_t *got = t->exec.buf, *want = t->buf;

	if (io->result)
		return exec_sense_info(SK_MEDIUM_ERROR,
				       ASC_UNRECOVERED_READ_ERROR, t->req.lba);
	for (uint64_t i = 0; i < io->len; i++)
		if (got[i] != want[i])
			return exec_sense_info(SK_MISCOMPARE,
					       ASC_MISCOMPARE_DURING_VERIFY, i);
	return EXEC_OK;
}

static struct exec_rc wv_read_done(struct tcq_task *t)
{
	struct exec_rc rc = read_back_matches(t);

	return exec_failed(rc) ? rc : exec_good(t);
}

static struct exec_rc wv_write_done(struct tcq_task *t)
{
	const struct bdev_io *io = &t->exec.io;
	uint64_t off = io->offset, len = io->len;
	struct exec_rc rc;

	if (io->result || (t->req.flags & CDBF_BYTCHK_MASK) == 0)
		return write_done(t);
	/* BYTCHK 1: read the blocks back and compare with what we wrote. */
	rc = sbc_xbuf(t, len);
	if (exec_failed(rc))
		return rc;
	return sbc_submit(t, BDEV_READ, 0, off, len, t->exec.buf,
			  wv_read_done);
}

static struct exec_rc wv_locked(struct tcq_task *t)
{
	/* The verify reads the medium: the data must be there first. */
	return sbc_submit(t, BDEV_WRITE, BDEV_FUA,
			  t->req.lba * t->lun->block_size,
			  t->req.data_out_len, t->buf, wv_write_done);
}

struct exec_rc sbc_write_verify(struct tcq_task *t)
{
	return sbc_write_run(t, false, wv_locked);
}

/* ---- ORWRITE ---------------------------------------------------------- */

static struct exec_rc or_read_done(struct tcq_task *t)
{
	const struct bdev_io *io = &t->exec.io;
	uint8_t *p = t->exec.buf;
	const uint8_t *d = t->buf;

	if (io->result)
		return exec_sense_info(SK_MEDIUM_ERROR,
				       ASC_UNRECOVERED_READ_ERROR, t->req.lba);
	for (uint64_t i = 0; i < io->len; i++)
		p[i] |= d[i];
	return sbc_submit(t, BDEV_WRITE, wflags(t), io->offset, io->len,
			  t->exec.buf, write_done);
}

static struct exec_rc or_locked(struct tcq_task *t)
{
	uint64_t n = t->req.data_out_len;
	struct exec_rc rc = sbc_xbuf(t, n);

	if (exec_failed(rc))
		return rc;
	return sbc_submit(t, BDEV_READ, 0, t->req.lba * t->lun->block_size, n,
			  t->exec.buf, or_read_done);
}

struct exec_rc sbc_orwrite(struct tcq_task *t)
{
	return sbc_write_run(t, true, or_locked);
}

/* ---- COMPARE AND WRITE ------------------------------------------------ */

bool sbc_caw_native(const struct lun *l)
{
	return l->bdev && l->bdev->caw_max >= l->block_size;
}

uint32_t sbc_caw_max_blocks(const struct lun *l)
{
	uint32_t n;

	if (!sbc_caw_native(l))
		return SBC_MAX_CAW_BLOCKS;
	n = l->bdev->caw_max / l->block_size;
	return n < SBC_MAX_CAW_BLOCKS ? n : SBC_MAX_CAW_BLOCKS;
}

/* The backend compared and wrote in one step. */
static struct exec_rc caw_native_done(struct tcq_task *t)
{
	if (t->exec.io.result == -EILSEQ)	/* SBC-3 5.2, as below */
		return exec_sense_info(SK_MISCOMPARE,
				       ASC_MISCOMPARE_DURING_VERIFY,
				       t->exec.io.miscompare);
	return write_done(t);
}

static struct exec_rc caw_read_done(struct tcq_task *t)
{
	const struct bdev_io *io = &t->exec.io;
	struct exec_rc rc = read_back_matches(t);

	if (exec_failed(rc))
		return rc;
	return sbc_submit(t, BDEV_WRITE, wflags(t), io->offset, io->len,
			  (uint8_t *)t->buf + io->len, write_done);
}

static struct exec_rc caw_locked(struct tcq_task *t)
{
	uint64_t n = (uint64_t)t->req.blocks * t->lun->block_size;
	struct exec_rc rc = sbc_xbuf(t, n);

	if (exec_failed(rc))
		return rc;
	return sbc_submit(t, BDEV_READ, 0, t->req.lba * t->lun->block_size, n,
			  t->exec.buf, caw_read_done);
}

struct exec_rc sbc_compare_and_write(struct tcq_task *t)
{
	struct exec_rc rc;

	/* NUMBER OF LOGICAL BLOCKS must match the data sent too (an 8-bit
	 * field: 256 blocks wrap to 0 and must not pass as "nothing"). */
	if (t->req.blocks > sbc_caw_max_blocks(t->lun) ||
	    t->exp_len != t->req.data_out_len)
		return exec_cdb_field(t->req.cmd->len_byte, -1);
	rc = sbc_check_access(t, true);
	if (exec_failed(rc))
		return rc;
	if (t->req.blocks == 0)
		return exec_good(t);
	rc = check_data(t);
	if (exec_failed(rc))
		return rc;
	if (sbc_caw_native(t->lun)) {
		/* No range lock: the backend serialises the compare and the
		 * write against every other write it receives. */
		uint64_t n = (uint64_t)t->req.blocks * t->lun->block_size;

		t->exec.io.cmp_buf = t->buf;
		return sbc_submit(t, BDEV_COMPARE_AND_WRITE, wflags(t),
				  t->req.lba * t->lun->block_size, n,
				  (uint8_t *)t->buf + n, caw_native_done);
	}
	return sbc_lock_then(t, t->req.lba, t->req.blocks, true, caw_locked);
}

/* ---- WRITE ATOMIC (16) ------------------------------------------------ */

static struct exec_rc atomic_locked(struct tcq_task *t)
{
	return sbc_submit(t, BDEV_WRITE, wflags(t),
			  t->req.lba * t->lun->block_size,
			  t->req.data_out_len, t->buf, write_done);
}

/* One backend write while the range is held exclusively: no other
 * write of this target can interleave with it (SBC-4 4.29). */
struct exec_rc sbc_write_atomic(struct tcq_task *t)
{
	uint32_t maxx = spc_max_xfer_blocks(t->lun);

	uint16_t len_byte = t->req.cmd->len_byte;

	if (t->req.blocks > SBC_MAX_ATOMIC_BLOCKS ||
	    (maxx && t->req.blocks > maxx))
		return exec_cdb_field(len_byte, -1);
	if (t->req.lba % SBC_ATOMIC_ALIGN)
		return exec_cdb_field(2, -1);	/* LOGICAL BLOCK ADDRESS */
	if (t->req.blocks % SBC_ATOMIC_GRAN)
		return exec_cdb_field(len_byte, -1);
	return sbc_write_run(t, true, atomic_locked);
}
