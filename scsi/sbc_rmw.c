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
#include "scsi/lun.h"
#include "scsi/sbc.h"
#include "scsi/sbc_priv.h"
#include "scsi/sense.h"
#include "scsi/spc.h"
#include "scsi/taskset.h"

static void good(struct tcq_task *t)
{
	t->status = SAM_STAT_GOOD;
	sbc_finish(t);
}

static unsigned wflags(const struct tcq_task *t)
{
	return sbc_fua(t) ? BDEV_FUA : 0;
}

static void write_done(struct bdev_io *io)
{
	struct tcq_task *t = io->ctx;

	if (io->result == -ENOSPC)
		sbc_fail_lba(t, SK_DATA_PROTECT, ASC_SPACE_ALLOCATION_FAILED);
	else if (io->result)
		sbc_fail_lba(t, SK_MEDIUM_ERROR, ASC_WRITE_ERROR);
	else
		good(t);
}

/* Data-Out present and as long as the CDB says (too much is refused
 * too: these commands have no use for a partial transfer). */
static int check_data(struct tcq_task *t)
{
	if (t->exp_len != t->req.data_out_len) {
		sbc_fail(t, SK_ILLEGAL_REQUEST,
			 ASC_INVALID_FIELD_IN_INFORMATION_UNIT);
		return -1;
	}
	if (!t->buf || t->buf_len < t->req.data_out_len) {
		sbc_fail(t, SK_HARDWARE_ERROR, ASC_INTERNAL_TARGET_FAILURE);
		return -1;
	}
	return 0;
}

/* ---- WRITE AND VERIFY ------------------------------------------------- */

/*
 * The medium read back into exec.buf against the Data-Out at t->buf:
 * true when they match. Otherwise t is finished: a read error, or
 * MISCOMPARE with INFORMATION the offset of the first byte that differs,
 * counted from the start of the compared data (SBC-3 5.2, SBC-4 5.49).
 */
static bool read_back_matches(struct bdev_io *io)
{
	struct tcq_task *t = io->ctx;
	const uint8_t *got = t->exec.buf, *want = t->buf;

	if (io->result) {
		sbc_fail_lba(t, SK_MEDIUM_ERROR, ASC_UNRECOVERED_READ_ERROR);
		return false;
	}
	for (uint64_t i = 0; i < io->len; i++)
		if (got[i] != want[i]) {
			sense_set_info(t, SK_MISCOMPARE,
				       ASC_MISCOMPARE_DURING_VERIFY, i);
			sbc_finish(t);
			return false;
		}
	return true;
}

static void wv_read_done(struct bdev_io *io)
{
	if (read_back_matches(io))
		good(io->ctx);
}

static void wv_write_done(struct bdev_io *io)
{
	struct tcq_task *t = io->ctx;

	if (io->result || (t->req.flags & CDBF_BYTCHK_MASK) == 0) {
		write_done(io);
		return;
	}
	/* BYTCHK 1: read the blocks back and compare with what we wrote. */
	if (sbc_xbuf(t, io->len))
		return;
	sbc_submit(t, BDEV_READ, 0, io->offset, io->len, t->exec.buf,
		   wv_read_done);
}

static void wv_locked(struct tcq_task *t)
{
	/* The verify reads the medium: the data must be there first. */
	sbc_submit(t, BDEV_WRITE, BDEV_FUA, t->req.lba * t->lun->block_size,
		   t->req.data_out_len, t->buf, wv_write_done);
}

void sbc_write_verify(struct tcq_task *t)
{
	sbc_write_run(t, false, wv_locked);
}

/* ---- ORWRITE ---------------------------------------------------------- */

static void or_read_done(struct bdev_io *io)
{
	struct tcq_task *t = io->ctx;
	uint8_t *p = t->exec.buf;
	const uint8_t *d = t->buf;

	if (io->result) {
		sbc_fail_lba(t, SK_MEDIUM_ERROR, ASC_UNRECOVERED_READ_ERROR);
		return;
	}
	for (uint64_t i = 0; i < io->len; i++)
		p[i] |= d[i];
	sbc_submit(t, BDEV_WRITE, wflags(t), io->offset, io->len, t->exec.buf,
		   write_done);
}

static void or_locked(struct tcq_task *t)
{
	uint64_t n = t->req.data_out_len;

	if (sbc_xbuf(t, n))
		return;
	sbc_submit(t, BDEV_READ, 0, t->req.lba * t->lun->block_size, n,
		   t->exec.buf, or_read_done);
}

void sbc_orwrite(struct tcq_task *t)
{
	sbc_write_run(t, true, or_locked);
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
static void caw_native_done(struct bdev_io *io)
{
	struct tcq_task *t = io->ctx;

	if (io->result == -EILSEQ) {	/* SBC-3 5.2, as below */
		sense_set_info(t, SK_MISCOMPARE, ASC_MISCOMPARE_DURING_VERIFY,
			       io->miscompare);
		sbc_finish(t);
		return;
	}
	write_done(io);
}

static void caw_read_done(struct bdev_io *io)
{
	struct tcq_task *t = io->ctx;

	if (!read_back_matches(io))
		return;
	sbc_submit(t, BDEV_WRITE, wflags(t), io->offset, io->len,
		   (uint8_t *)t->buf + io->len, write_done);
}

static void caw_locked(struct tcq_task *t)
{
	uint64_t n = (uint64_t)t->req.blocks * t->lun->block_size;

	if (sbc_xbuf(t, n))
		return;
	sbc_submit(t, BDEV_READ, 0, t->req.lba * t->lun->block_size, n,
		   t->exec.buf, caw_read_done);
}

void sbc_compare_and_write(struct tcq_task *t)
{
	/* NUMBER OF LOGICAL BLOCKS must match the data sent too (an 8-bit
	 * field: 256 blocks wrap to 0 and must not pass as "nothing"). */
	if (t->req.blocks > sbc_caw_max_blocks(t->lun) ||
	    t->exp_len != t->req.data_out_len) {
		sbc_fail_cdb(t, 13, -1);
		return;
	}
	if (sbc_check_access(t, true))
		return;
	if (t->req.blocks == 0) {
		good(t);
		return;
	}
	if (check_data(t))
		return;
	if (sbc_caw_native(t->lun)) {
		/* No range lock: the backend serialises the compare and the
		 * write against every other write it receives. */
		uint64_t n = (uint64_t)t->req.blocks * t->lun->block_size;

		t->exec.io.cmp_buf = t->buf;
		sbc_submit(t, BDEV_COMPARE_AND_WRITE, wflags(t),
			   t->req.lba * t->lun->block_size, n,
			   (uint8_t *)t->buf + n, caw_native_done);
		return;
	}
	if (sbc_lock(t, t->req.lba, t->req.blocks, true, caw_locked))
		return;
	caw_locked(t);
}

/* ---- WRITE ATOMIC (16) ------------------------------------------------ */

static void atomic_locked(struct tcq_task *t)
{
	sbc_submit(t, BDEV_WRITE, wflags(t), t->req.lba * t->lun->block_size,
		   t->req.data_out_len, t->buf, write_done);
}

/* One backend write while the range is held exclusively: no other
 * write of this target can interleave with it (SBC-4 4.29). */
void sbc_write_atomic(struct tcq_task *t)
{
	uint32_t maxx = spc_max_xfer_blocks(t->lun);

	if (t->req.blocks > SBC_MAX_ATOMIC_BLOCKS ||
	    (maxx && t->req.blocks > maxx)) {
		sbc_fail_cdb(t, 12, -1);
		return;
	}
	if (t->req.lba % SBC_ATOMIC_ALIGN) {
		sbc_fail_cdb(t, 2, -1);
		return;
	}
	if (t->req.blocks % SBC_ATOMIC_GRAN) {
		sbc_fail_cdb(t, 12, -1);
		return;
	}
	sbc_write_run(t, true, atomic_locked);
}
