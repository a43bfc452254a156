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
#include "scsi/lun.h"
#include "scsi/sbc.h"
#include "scsi/record.h"
#include "scsi/sbc_priv.h"
#include "scsi/sense.h"
#include "scsi/spc.h"
#include "scsi/stats.h"
#include "scsi/taskset.h"

#define UNMAP_MAX_DESC 256	/* as the block limits VPD page says */

static void good(struct tcq_task *t)
{
	t->status = SAM_STAT_GOOD;
	sbc_finish(t);
}

#define fail sbc_fail
#define fail_lba sbc_fail_lba

void sbc_finish(struct tcq_task *t)
{
	sbc_unlock(t);
	if (t->exec.buf) {
		bufpool_free(t->exec.buf, t->exec.buf_len);
		t->exec.buf = NULL;
		t->exec.buf_len = 0;
	}
	taskset_complete(t);
}

void sbc_fail(struct tcq_task *t, uint8_t key, uint16_t asc)
{
	sense_set(t, key, asc);
	sbc_finish(t);
}

void sbc_fail_lba(struct tcq_task *t, uint8_t key, uint16_t asc)
{
	sense_set_info(t, key, asc, t->req.lba);
	sbc_finish(t);
}

void sbc_fail_cdb(struct tcq_task *t, uint16_t byte, int bit)
{
	sense_invalid_cdb(t, byte, bit);
	sbc_finish(t);
}

int sbc_xbuf(struct tcq_task *t, uint64_t len)
{
	void *p = len && len <= UINT32_MAX ? bufpool_alloc(len) : NULL;

	if (!p) {
		sbc_fail(t, SK_HARDWARE_ERROR, ASC_INTERNAL_TARGET_FAILURE);
		return -1;
	}
	t->exec.buf = p;
	t->exec.buf_len = (uint32_t)len;
	return 0;
}

bool sbc_thin(const struct tcq_task *t)
{
	return t->lun->bdev && t->lun->bdev->thin;
}

/* Common checks of media access commands; completes t when they fail. */
int sbc_check_access(struct tcq_task *t, bool write)
{
	struct lun *l = t->lun;
	struct sense_info si;
	uint32_t max = spc_max_xfer_blocks(l);

	if (write && (l->read_only || l->swp)) {
		fail(t, SK_DATA_PROTECT, ASC_WRITE_PROTECTED);
		return -1;
	}
	if (max && t->req.blocks > max) {
		sense_invalid_cdb(t, cdb_len_field(cdb_group_len(t->req.opcode)), -1);
		taskset_complete(t);
		return -1;
	}
	if (cdb_check_range(&t->req, l->nblocks, &si)) {
		sense_set_si(t, &si);
		taskset_complete(t);
		return -1;
	}
	return 0;
}

void sbc_submit(struct tcq_task *t, enum bdev_op op, unsigned flags,
		   uint64_t off, uint64_t len, void *buf,
		   void (*done)(struct bdev_io *io))
{
	struct bdev_io *io = &t->exec.io;
	struct lun *l = t->lun;		/* t may be gone after bdev_submit */
	struct bdev_queue *q = bdev_queue_get(l->bdev, reactor_self());

	if (!q) {
		fail(t, SK_HARDWARE_ERROR, ASC_INTERNAL_TARGET_FAILURE);
		return;
	}
	io->op = op;
	io->flags = flags;
	io->offset = off;
	io->len = len;
	io->buf = buf;
	io->result = 0;
	io->done = done;
	io->ctx = t;
	list_init(&io->node);
	stats_io_submit(l, op, op == BDEV_FLUSH && t->order.barrier_flush);
	stats_path_submit(t);
	if (op != BDEV_READ && op != BDEV_FLUSH)
		record_write(l, t, io);	/* the crash lab's, when recording */
	bdev_submit(q, io);	/* may complete before returning */
}

/* ---- READ CAPACITY ---------------------------------------------------- */

void sbc_read_capacity10(struct tcq_task *t)
{
	const struct lun *l = t->lun;
	uint8_t buf[8];
	uint64_t last = l->nblocks ? l->nblocks - 1 : 0;

	put_be32(buf, last > 0xfffffffeu ? 0xffffffffu : (uint32_t)last);
	put_be32(buf + 4, l->block_size);
	if (spc_data_in(t, buf, sizeof(buf)) == 0)
		t->status = SAM_STAT_GOOD;
	taskset_complete(t);
}

void sbc_read_capacity16(struct tcq_task *t)
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
	if (spc_data_in(t, buf, sizeof(buf)) == 0)
		t->status = SAM_STAT_GOOD;
	taskset_complete(t);
}

/* GET LBA STATUS (SBC-3 5.6): runs of mapped and deallocated blocks from
 * the backend, starting at the requested LBA. */
void sbc_get_lba_status(struct tcq_task *t)
{
	const struct lun *l = t->lun;
	uint32_t bs = l->block_size;
	uint8_t buf[8 + 16 * 32];
	uint32_t n = 0;
	uint64_t lba = t->req.lba;

	if (lba >= l->nblocks) {
		fail_lba(t, SK_ILLEGAL_REQUEST, ASC_LBA_OUT_OF_RANGE);
		return;
	}
	memset(buf, 0, sizeof(buf));
	/* Descriptors beyond the allocation length are cut by spc_data_in. */
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
	if (spc_data_in(t, buf, 8 + 16 * n) == 0)
		t->status = SAM_STAT_GOOD;
	taskset_complete(t);
}

/* ---- READ / WRITE ----------------------------------------------------- */

static void read_done(struct bdev_io *io)
{
	struct tcq_task *t = io->ctx;

	if (io->result) {
		fail_lba(t, SK_MEDIUM_ERROR, ASC_UNRECOVERED_READ_ERROR);
		return;
	}
	t->data_in_len = (uint32_t)MIN((uint64_t)MIN(t->req.data_in_len,
						     t->exp_len), io->len);
	good(t);
}

void sbc_read(struct tcq_task *t)
{
	struct lun *l = t->lun;
	uint32_t bs = l->block_size;

	if (sbc_check_access(t, false))
		return;
	/* Read what the initiator will take: SAM-5 lets the transport
	 * truncate at the expected length and report the overflow. */
	uint32_t want = t->dir_in ? MIN(t->req.data_in_len, t->exp_len) : 0;
	if (t->req.blocks == 0 || want == 0) {
		good(t);
		return;
	}
	uint64_t n = ALIGN_UP((uint64_t)want, (uint64_t)bs);
	if (!t->buf && l->bdev->zero_reads &&
	    (t->buf = bdev_zero_region(n)) != NULL) {
		/* All zeros anyway: Data-In goes out of the shared zero
		 * pages, nothing to allocate or fill. */
		t->buf_len = (uint32_t)n;
		t->buf_owned = false;
	} else if (!t->buf) {
		t->buf = bufpool_alloc(n);
		if (!t->buf) {
			fail(t, SK_HARDWARE_ERROR, ASC_INTERNAL_TARGET_FAILURE);
			return;
		}
		t->buf_len = (uint32_t)n;
		t->buf_owned = true;
	} else if (t->buf_len < n) {
		n = t->buf_len / bs * bs;
		if (!n) {
			fail(t, SK_HARDWARE_ERROR, ASC_INTERNAL_TARGET_FAILURE);
			return;
		}
	}
	sbc_submit(t, BDEV_READ, 0, t->req.lba * bs, n, t->buf, read_done);
}

static void write_done(struct bdev_io *io)
{
	struct tcq_task *t = io->ctx;

	if (io->result == -ENOSPC)
		fail_lba(t, SK_DATA_PROTECT, ASC_SPACE_ALLOCATION_FAILED);
	else if (io->result)
		fail_lba(t, SK_MEDIUM_ERROR, ASC_WRITE_ERROR);
	else
		good(t);
}

static void write_start(struct tcq_task *t)
{
	struct lun *l = t->lun;
	unsigned flags = 0;

	if (sbc_fua(t) || t->order.barrier_flush)
		flags |= BDEV_FUA;
	t->exec.step = 2;
	sbc_submit(t, BDEV_WRITE, flags, t->req.lba * l->block_size,
	       t->req.data_out_len, t->buf, write_done);
}

/* Barrier policy "flush": older writes are made durable first. */
static void barrier_flush_done(struct bdev_io *io)
{
	struct tcq_task *t = io->ctx;

	if (io->result) {
		fail_lba(t, SK_MEDIUM_ERROR, ASC_WRITE_ERROR);
		return;
	}
	write_start(t);
}

static void write_locked(struct tcq_task *t)
{
	if (t->order.barrier_flush) {
		t->exec.step = 1;
		sbc_submit(t, BDEV_FLUSH, 0, 0, 0, NULL, barrier_flush_done);
		return;
	}
	write_start(t);
}

void sbc_write_run(struct tcq_task *t, bool excl,
		   void (*run)(struct tcq_task *t))
{
	if (sbc_check_access(t, true))
		return;
	if (t->req.blocks == 0) {
		good(t);
		return;
	}
	if (!t->buf || t->buf_len < t->req.data_out_len) {
		fail(t, SK_HARDWARE_ERROR, ASC_INTERNAL_TARGET_FAILURE);
		return;
	}
	if (sbc_lock(t, t->req.lba, t->req.blocks, excl, run))
		return;
	run(t);
}

void sbc_write(struct tcq_task *t)
{
	/* Waits only while COMPARE AND WRITE & co. hold these blocks. */
	sbc_write_run(t, false, write_locked);
}

/* ---- VERIFY ----------------------------------------------------------- */

static void verify_done(struct bdev_io *io)
{
	struct tcq_task *t = io->ctx;
	const uint8_t *got = io->buf, *want = t->buf;
	uint32_t bs = t->lun->block_size;
	bool one = (t->req.flags & CDBF_BYTCHK_MASK) == 3;
	uint64_t bad = UINT64_MAX;

	if (!io->result) {
		for (uint64_t i = 0; i < io->len; i++)
			if (got[i] != want[one ? i % bs : i]) {
				bad = i;
				break;
			}
	}
	bufpool_free(io->buf, io->len);
	io->buf = NULL;
	if (io->result)
		fail_lba(t, SK_MEDIUM_ERROR, ASC_UNRECOVERED_READ_ERROR);
	else if (bad != UINT64_MAX) {
		sense_set_info(t, SK_MISCOMPARE, ASC_MISCOMPARE_DURING_VERIFY,
			       bad);
		taskset_complete(t);
	} else
		good(t);
}

void sbc_verify(struct tcq_task *t)
{
	uint32_t bs = t->lun->block_size;

	if (sbc_check_access(t, false))
		return;
	if ((t->req.flags & CDBF_BYTCHK_MASK) == 0 || t->req.blocks == 0) {
		good(t);	/* medium check only: nothing to verify */
		return;
	}
	if (!t->buf || t->buf_len < t->req.data_out_len) {
		fail(t, SK_HARDWARE_ERROR, ASC_INTERNAL_TARGET_FAILURE);
		return;
	}
	uint64_t n = (uint64_t)t->req.blocks * bs;
	void *rb = n <= UINT32_MAX ? bufpool_alloc(n) : NULL;
	if (!rb) {
		fail(t, SK_HARDWARE_ERROR, ASC_INTERNAL_TARGET_FAILURE);
		return;
	}
	sbc_submit(t, BDEV_READ, 0, t->req.lba * bs, n, rb, verify_done);
}

/* ---- SYNCHRONIZE CACHE / PRE-FETCH ------------------------------------ */

static void sync_done(struct bdev_io *io)
{
	struct tcq_task *t = io->ctx;

	if (io->result)
		fail(t, SK_MEDIUM_ERROR, ASC_WRITE_ERROR);
	else
		good(t);
}

static void immed_flush_done(struct bdev_io *io)
{
	free(io);
}

void sbc_sync_cache(struct tcq_task *t)
{
	struct sense_info si;
	struct lun *l = t->lun;

	if (cdb_check_range(&t->req, l->nblocks, &si)) {
		sense_set_si(t, &si);
		taskset_complete(t);
		return;
	}
	if (lun_get_flush_ignore(l)) {
		good(t);	/* flush = ignore: a device that lies */
		return;
	}
	if (!t->req.immed) {
		sbc_submit(t, BDEV_FLUSH, 0, 0, 0, NULL, sync_done);
		return;
	}
	/* IMMED: status now, the flush runs on its own (rare: malloc). */
	struct bdev_io *io = calloc(1, sizeof(*io));
	struct bdev_queue *q = bdev_queue_get(l->bdev, reactor_self());
	if (io && q) {
		io->op = BDEV_FLUSH;
		io->done = immed_flush_done;
		list_init(&io->node);
		stats_io_submit(l, BDEV_FLUSH, false);
		bdev_submit(q, io);
	} else {
		free(io);
	}
	good(t);
}

void sbc_prefetch(struct tcq_task *t)
{
	struct sense_info si;

	if (cdb_check_range(&t->req, t->lun->nblocks, &si)) {
		sense_set_si(t, &si);
		taskset_complete(t);
		return;
	}
	good(t);	/* no cache to fill: GOOD rather than CONDITION MET */
}

/* ---- UNMAP ------------------------------------------------------------ */

static void unmap_next(struct tcq_task *t);

static void unmap_done(struct bdev_io *io)
{
	struct tcq_task *t = io->ctx;

	if (io->result) {
		fail(t, SK_MEDIUM_ERROR, ASC_WRITE_ERROR);
		return;
	}
	unmap_next(t);
}

/*
 * One run of descriptors at a time through t->exec.io; exec.pending is the index
 * of the next descriptor. Descriptors that continue (or overlap) the run
 * before them join it, so a list of adjacent one-block descriptors costs
 * one backend discard, not one each (a discard is a cluster round trip on
 * rbd).
 */
static void unmap_next(struct tcq_task *t)
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
		if (end > lba) {
			sbc_submit(t, BDEV_DISCARD, 0, lba * bs,
				   (end - lba) * bs, NULL, unmap_done);
			return;
		}
	}
	t->exec.pending = 0;
	good(t);
}

void sbc_unmap(struct tcq_task *t)
{
	struct lun *l = t->lun;
	uint32_t len = t->req.data_out_len;
	const uint8_t *p = t->buf;

	if (!l->bdev || !l->bdev->thin) {
		fail(t, SK_ILLEGAL_REQUEST, ASC_INVALID_COMMAND_OPERATION_CODE);
		return;
	}
	if (l->read_only || l->swp) {
		fail(t, SK_DATA_PROTECT, ASC_WRITE_PROTECTED);
		return;
	}
	if (len == 0) {
		good(t);
		return;
	}
	if (len < 8) {
		fail(t, SK_ILLEGAL_REQUEST, ASC_PARAMETER_LIST_LENGTH_ERROR);
		return;
	}
	if (!p || t->buf_len < len) {
		fail(t, SK_HARDWARE_ERROR, ASC_INTERNAL_TARGET_FAILURE);
		return;
	}
	uint32_t bdl = MIN((uint32_t)get_be16(p + 2), len - 8);
	uint32_t ndesc = bdl / 16;
	if (ndesc > UNMAP_MAX_DESC) {
		sense_set_field(t, ASC_INVALID_FIELD_IN_PARAMETER_LIST, false,
				2, -1);
		taskset_complete(t);
		return;
	}
	for (uint32_t i = 0; i < ndesc; i++) {
		const uint8_t *d = p + 8 + 16 * i;
		uint64_t lba = get_be64(d);
		uint32_t cnt = get_be32(d + 8);
		if (lba > l->nblocks || cnt > l->nblocks - lba) {
			sense_set_info(t, SK_ILLEGAL_REQUEST,
				       ASC_LBA_OUT_OF_RANGE, lba);
			taskset_complete(t);
			return;
		}
	}
	t->req.lba = ndesc;	/* UNMAP has no LBA field: reuse it */
	t->exec.pending = 0;
	unmap_next(t);
}
