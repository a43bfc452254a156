/* SBC-3 block commands over the bdev interface: one bdev_io per task. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "tcq/bufpool.h"
#include "tcq/byteorder.h"
#include "tcq/compiler.h"
#include "tcq/scsi_proto.h"
#include "backend/bdev.h"
#include "tcq/reactor.h"
#include "scsi/cdb.h"
#include "scsi/exec.h"
#include "scsi/lun.h"
#include "scsi/opcodes.h"
#include "scsi/sbc.h"
#include "scsi/record.h"
#include "scsi/sbc_priv.h"
#include "scsi/sense.h"
#include "scsi/spc.h"
#include "scsi/stats.h"
#include "scsi/taskset.h"

#define UNMAP_MAX_DESC 256	/* as the block limits VPD page says */

static void sbc_continue(struct tcq_task *t)
{
	struct exec_rc rc = t->exec.next(t);

	if (exec_failed(rc))
		exec_fail(t, rc);
}

void sbc_io_done(struct bdev_io *io)
{
	sbc_continue(io->ctx);
}

struct exec_rc sbc_lock_then(struct tcq_task *t, uint64_t lba,
			     uint64_t blocks, bool excl, sbc_step *run)
{
	t->exec.next = run;
	if (sbc_lock(t, lba, blocks, excl, sbc_continue))
		return EXEC_OK;	/* run(t) once granted */
	return run(t);
}

struct exec_rc sbc_xbuf(struct tcq_task *t, uint64_t len)
{
	void *p = len && len <= UINT32_MAX ? bufpool_alloc(len) : NULL;

	if (!p)
		return exec_target_failure();
	t->exec.buf = p;
	t->exec.buf_len = (uint32_t)len;
	return EXEC_OK;
}

bool sbc_thin(const struct tcq_task *t)
{
	return t->lun->bdev && t->lun->bdev->thin;
}

struct exec_rc sbc_check_access(const struct tcq_task *t, bool write)
{
	const struct lun *l = t->lun;
	struct sense_info si;
	uint32_t max = spc_max_xfer_blocks(l);

	if (write && lun_write_protected(t))
		return exec_sense(SK_DATA_PROTECT, ASC_WRITE_PROTECTED);
	if (max && t->req.blocks > max)	/* its row knows the field */
		return exec_cdb_field(t->req.cmd->len_byte, -1);
	if (cdb_check_range(&t->req, l->nblocks, &si))
		return exec_si(&si);
	return EXEC_OK;
}

void sbc_io_prepare(struct bdev_io *io, struct tcq_task *t, enum bdev_op op,
		    uint64_t off, uint64_t len, void *buf)
{
	io->op = op;
	io->flags = 0;
	io->offset = off;
	io->len = len;
	io->buf = buf;
	io->result = 0;
	io->done = sbc_io_done;
	io->ctx = t;
	io->submitter = t->nexus;	/* cfq keys its queues by it */
	io->command = NULL;
	list_init(&io->node);
}

struct exec_rc sbc_submit(struct tcq_task *t, enum bdev_op op,
			  unsigned flags, uint64_t off, uint64_t len,
			  void *buf, sbc_step *done)
{
	struct bdev_io *io = &t->exec.io;
	struct lun *l = t->lun;		/* t may be gone after bdev_submit */
	struct bdev_queue *q = bdev_queue_get(l->bdev, reactor_self());

	if (!q)
		return exec_target_failure();
	sbc_io_prepare(io, t, op, off, len, buf);	/* operands kept */
	io->flags = flags;
	t->exec.next = done;
	stats_io_submit(l, op, op == BDEV_FLUSH && t->order.barrier_flush);
	stats_path_submit(t);
	if (op != BDEV_READ && op != BDEV_FLUSH)
		record_write(l, t, io);	/* the crash lab's, when recording */
	bdev_submit(q, io);	/* may complete before returning */
	return EXEC_OK;
}

/* ---- READ CAPACITY ---------------------------------------------------- */

struct exec_rc sbc_read_capacity10(struct tcq_task *t)
{
	const struct lun *l = t->lun;
	uint8_t buf[8];
	uint64_t last = l->nblocks ? l->nblocks - 1 : 0;

	put_be32(buf, last > 0xfffffffeu ? 0xffffffffu : (uint32_t)last);
	put_be32(buf + 4, l->block_size);
	return spc_reply(t, buf, sizeof(buf));
}

struct exec_rc sbc_read_capacity16(struct tcq_task *t)
{
	const struct lun *l = t->lun;
	uint8_t buf[32];

	memset(buf, 0, sizeof(buf));
	put_be64(buf, l->nblocks ? l->nblocks - 1 : 0);
	put_be32(buf + 8, l->block_size);
	/* LOGICAL BLOCKS PER PHYSICAL BLOCK EXPONENT from the LUN's
	 * physical_block_size (default 0: libiscsi's GET LBA STATUS test
	 * UnmapSingle only holds for 0); no protection information. */
	buf[13] = l->lbppbe & 0x0f;
	if (l->bdev && l->bdev->thin)
		buf[14] = 0x80 | 0x40;	/* LBPME, LBPRZ */
	return spc_reply(t, buf, sizeof(buf));
}

/* GET LBA STATUS (SBC-3 5.6): runs of mapped and deallocated blocks from
 * the backend, starting at the requested LBA. */
struct exec_rc sbc_get_lba_status(struct tcq_task *t)
{
	const struct lun *l = t->lun;
	uint32_t bs = l->block_size;
	uint8_t buf[8 + 16 * 32];
	uint32_t n = 0;
	uint64_t lba = t->req.lba;

	if (lba >= l->nblocks)
		return exec_sense_info(SK_ILLEGAL_REQUEST, ASC_LBA_OUT_OF_RANGE,
				       lba);
	memset(buf, 0, sizeof(buf));
	/* Descriptors beyond the allocation length are cut by spc_reply. */
	while (lba < l->nblocks && n < 32) {
		uint64_t len;
		bool mapped;
		uint8_t *d = buf + 8 + 16 * n;

		if (bdev_lba_status(l->bdev, lba * bs, &len, &mapped) < 0)
			break;
		len /= bs;
		if (!len)
			len = 1;
		if (len > UINT32_MAX)
			len = UINT32_MAX;
		if (lba + len > l->nblocks)
			len = l->nblocks - lba;
		put_be64(d, lba);
		put_be32(d + 8, (uint32_t)len);
		d[12] = mapped ? 0 : 1;	/* PROVISIONING STATUS */
		lba += len;
		n++;
	}
	put_be32(buf, 4 + 16 * n);	/* PARAMETER DATA LENGTH */
	return spc_reply(t, buf, 8 + 16 * n);
}

/* ---- READ / WRITE ----------------------------------------------------- */

static struct exec_rc read_done(struct tcq_task *t)
{
	const struct bdev_io *io = &t->exec.io;

	if (io->result)
		return exec_sense_info(SK_MEDIUM_ERROR,
				       ASC_UNRECOVERED_READ_ERROR, t->req.lba);
	t->data_in_len = (uint32_t)MIN((uint64_t)MIN(t->req.data_in_len,
						     t->exp_len), io->len);
	return exec_good(t);
}

struct exec_rc sbc_read(struct tcq_task *t)
{
	struct lun *l = t->lun;
	uint32_t bs = l->block_size;
	struct exec_rc rc = sbc_check_access(t, false);

	if (exec_failed(rc))
		return rc;
	/* Read what the initiator will take: SAM-5 lets the transport
	 * truncate at the expected length and report the overflow. */
	uint32_t want = t->dir_in ? MIN(t->req.data_in_len, t->exp_len) : 0;
	if (t->req.blocks == 0 || want == 0)
		return exec_good(t);
	uint64_t n = ALIGN_UP((uint64_t)want, (uint64_t)bs);
	if (!t->buf && l->bdev->zero_reads &&
	    (t->buf = bdev_zero_region(n)) != NULL) {
		/* All zeros anyway: Data-In goes out of the shared zero
		 * pages, nothing to allocate or fill. */
		t->buf_len = (uint32_t)n;
		t->buf_owned = false;
	} else if (!t->buf) {
		t->buf = bufpool_alloc(n);
		if (!t->buf)
			return exec_target_failure();
		t->buf_len = (uint32_t)n;
		t->buf_owned = true;
	} else if (t->buf_len < n) {
		n = t->buf_len / bs * bs;
		if (!n)
			return exec_target_failure();
	}
	/* Its own buffer: the Data-In may leave piece by piece. */
	uint32_t piece = t->buf_owned ? sbc_cut_piece(t, n) : 0;
	if (piece)
		return sbc_read_cut(t, piece, t->req.lba * bs, n,
				    (uint32_t)MIN((uint64_t)want, n));
	return sbc_submit(t, BDEV_READ, 0, t->req.lba * bs, n, t->buf,
			  read_done);
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

static struct exec_rc write_start(struct tcq_task *t)
{
	struct lun *l = t->lun;
	unsigned flags = 0;

	if (sbc_fua(t) || t->order.barrier_flush)
		flags |= BDEV_FUA;
	t->exec.step = 2;
	return sbc_submit(t, BDEV_WRITE, flags, t->req.lba * l->block_size,
			  t->req.data_out_len, t->buf, write_done);
}

/* Barrier policy "flush": older writes are made durable first. */
static struct exec_rc barrier_flush_done(struct tcq_task *t)
{
	if (t->exec.io.result)
		return exec_sense_info(SK_MEDIUM_ERROR, ASC_WRITE_ERROR,
				       t->req.lba);
	return write_start(t);
}

static struct exec_rc write_locked(struct tcq_task *t)
{
	if (t->order.barrier_flush) {
		t->exec.step = 1;
		return sbc_submit(t, BDEV_FLUSH, 0, 0, 0, NULL,
				  barrier_flush_done);
	}
	return write_start(t);
}

struct exec_rc sbc_write_run(struct tcq_task *t, bool excl, sbc_step *run)
{
	struct exec_rc rc = sbc_check_access(t, true);

	if (exec_failed(rc))
		return rc;
	if (t->req.blocks == 0)
		return exec_good(t);
	if (!t->buf || t->buf_len < t->req.data_out_len)
		return exec_target_failure();
	return sbc_lock_then(t, t->req.lba, t->req.blocks, excl, run);
}

struct exec_rc sbc_write(struct tcq_task *t)
{
	/* Waits only while COMPARE AND WRITE & co. hold these blocks. */
	return sbc_write_run(t, false, write_locked);
}

/* ---- VERIFY ----------------------------------------------------------- */

/* The blocks read into exec.buf against the Data-Out (BYTCHK 01b: all of
 * it; 11b: one block compared with each). */
static struct exec_rc verify_done(struct tcq_task *t)
{
	const struct bdev_io *io = &t->exec.io;
	const uint8_t *got = io->buf, *want = t->buf;
	uint32_t bs = t->lun->block_size;
	bool one = (t->req.flags & CDBF_BYTCHK_MASK) == 3;

	if (io->result)
		return exec_sense_info(SK_MEDIUM_ERROR,
				       ASC_UNRECOVERED_READ_ERROR, t->req.lba);
	for (uint64_t i = 0; i < io->len; i++)
		if (got[i] != want[one ? i % bs : i])
			return exec_sense_info(SK_MISCOMPARE,
					       ASC_MISCOMPARE_DURING_VERIFY, i);
	return exec_good(t);
}

struct exec_rc sbc_verify(struct tcq_task *t)
{
	uint32_t bs = t->lun->block_size;
	struct exec_rc rc = sbc_check_access(t, false);

	if (exec_failed(rc))
		return rc;
	if ((t->req.flags & CDBF_BYTCHK_MASK) == 0 || t->req.blocks == 0)
		return exec_good(t);	/* medium check only: nothing to
					 * verify */
	if (!t->buf || t->buf_len < t->req.data_out_len)
		return exec_target_failure();
	uint64_t n = (uint64_t)t->req.blocks * bs;
	rc = sbc_xbuf(t, n);
	if (exec_failed(rc))
		return rc;
	return sbc_submit(t, BDEV_READ, 0, t->req.lba * bs, n, t->exec.buf,
			  verify_done);
}

/* ---- SYNCHRONIZE CACHE / PRE-FETCH ------------------------------------ */

static struct exec_rc sync_done(struct tcq_task *t)
{
	if (t->exec.io.result)
		return exec_sense(SK_MEDIUM_ERROR, ASC_WRITE_ERROR);
	return exec_good(t);
}

static void immed_flush_done(struct bdev_io *io)
{
	free(io);
}

struct exec_rc sbc_sync_cache(struct tcq_task *t)
{
	struct sense_info si;
	struct lun *l = t->lun;

	if (cdb_check_range(&t->req, l->nblocks, &si))
		return exec_si(&si);
	if (lun_get_flush_ignore(l))
		return exec_good(t);	/* flush = ignore: a device that lies */
	if (!t->req.immed)
		return sbc_submit(t, BDEV_FLUSH, 0, 0, 0, NULL, sync_done);
	/* IMMED: status now, the flush runs on its own (rare: malloc). */
	struct bdev_io *io = calloc(1, sizeof(*io));
	struct bdev_queue *q = bdev_queue_get(l->bdev, reactor_self());
	if (io && q) {
		sbc_io_prepare(io, t, BDEV_FLUSH, 0, 0, NULL);
		io->done = immed_flush_done;	/* t is answered already */
		io->ctx = NULL;
		stats_io_submit(l, BDEV_FLUSH, false);
		bdev_submit(q, io);
	} else {
		free(io);
	}
	return exec_good(t);
}

struct exec_rc sbc_prefetch(struct tcq_task *t)
{
	struct sense_info si;

	if (cdb_check_range(&t->req, t->lun->nblocks, &si))
		return exec_si(&si);
	return exec_good(t);	/* no cache to fill: GOOD rather than
				 * CONDITION MET */
}

/* ---- UNMAP ------------------------------------------------------------ */

static struct exec_rc unmap_next(struct tcq_task *t);

static struct exec_rc unmap_done(struct tcq_task *t)
{
	if (t->exec.io.result)
		return exec_sense(SK_MEDIUM_ERROR, ASC_WRITE_ERROR);
	return unmap_next(t);
}

/*
 * One run of descriptors at a time through t->exec.io; exec.pending is the index
 * of the next descriptor. Descriptors that continue (or overlap) the run
 * before them join it, so a list of adjacent one-block descriptors costs
 * one backend discard, not one each (a discard is a cluster round trip on
 * rbd).
 */
static struct exec_rc unmap_next(struct tcq_task *t)
{
	const uint8_t *p = t->buf;
	uint32_t bs = t->lun->block_size;
	uint32_t ndesc = t->req.lba;	/* set by sbc_unmap */

	while (t->exec.pending < ndesc) {
		const uint8_t *d = p + 8 + 16 * t->exec.pending;
		uint64_t lba = get_be64(d);
		uint64_t end = lba + get_be32(d + 8);
		t->exec.pending++;
		while (end > lba && t->exec.pending < ndesc) {
			const uint8_t *n = p + 8 + 16 * t->exec.pending;
			uint64_t nlba = get_be64(n);
			uint64_t nend = nlba + get_be32(n + 8);
			if (nend == nlba) {	/* empty: skip */
				t->exec.pending++;
				continue;
			}
			if (nlba < lba || nlba > end)
				break;
			end = MAX(end, nend);
			t->exec.pending++;
		}
		if (end > lba)
			return sbc_submit(t, BDEV_DISCARD, 0, lba * bs,
					  (end - lba) * bs, NULL, unmap_done);
	}
	t->exec.pending = 0;
	return exec_good(t);
}

struct exec_rc sbc_unmap(struct tcq_task *t)
{
	struct lun *l = t->lun;
	uint32_t len = t->req.data_out_len;
	const uint8_t *p = t->buf;

	if (!l->bdev || !l->bdev->thin)
		return exec_sense(SK_ILLEGAL_REQUEST,
				  ASC_INVALID_COMMAND_OPERATION_CODE);
	if (lun_write_protected(t))
		return exec_sense(SK_DATA_PROTECT, ASC_WRITE_PROTECTED);
	if (len == 0)
		return exec_good(t);
	if (len < 8)
		return exec_sense(SK_ILLEGAL_REQUEST,
				  ASC_PARAMETER_LIST_LENGTH_ERROR);
	if (!p || t->buf_len < len)
		return exec_target_failure();
	uint32_t bdl = MIN((uint32_t)get_be16(p + 2), len - 8);
	uint32_t ndesc = bdl / 16;
	if (ndesc > UNMAP_MAX_DESC)
		return exec_param_field(2, -1);
	for (uint32_t i = 0; i < ndesc; i++) {
		const uint8_t *d = p + 8 + 16 * i;
		uint64_t lba = get_be64(d);
		uint32_t cnt = get_be32(d + 8);
		if (lba > l->nblocks || cnt > l->nblocks - lba)
			return exec_sense_info(SK_ILLEGAL_REQUEST,
					       ASC_LBA_OUT_OF_RANGE, lba);
	}
	t->req.lba = ndesc;	/* UNMAP has no LBA field: reuse it */
	t->exec.pending = 0;
	return unmap_next(t);
}
