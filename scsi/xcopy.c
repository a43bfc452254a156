/*
 * EXTENDED COPY (LID1) and RECEIVE COPY RESULTS (SPC-4 6.3, 6.18): the
 * copy manager moves blocks between LUNs of the task's own target. Copy
 * targets are identification descriptors (E4h) naming a LUN by the NAA
 * designator of its VPD page 0x83; segments are block-to-block (02h).
 * Data goes through one scratch buffer, SBC_WS_CHUNK bytes at a time.
 */
#include <errno.h>
#include <string.h>
#include "tcq/byteorder.h"
#include "tcq/compiler.h"
#include "tcq/scsi_proto.h"
#include "tcq/reactor.h"
#include "scsi/exec.h"
#include "scsi/lun.h"
#include "scsi/odx.h"
#include "scsi/sdev.h"
#include "scsi/sbc.h"
#include "scsi/record.h"
#include "scsi/sbc_priv.h"
#include "scsi/sense.h"
#include "scsi/spc.h"

#define XC_HDR 16
#define XC_TGT_LEN 32
#define XC_B2B_LEN 28
#define XC_MAX_TGT 8
#define XC_MAX_SEG 8
#define XC_MAX_LIST (XC_MAX_TGT * XC_TGT_LEN + XC_MAX_SEG * XC_B2B_LEN)
#define XC_TGT_IDENT 0xe4
#define XC_SEG_B2B 0x02

/* COPY MANAGER STATUS values. */
enum { XCS_RUNNING = 0, XCS_OK = 1, XCS_FAILED = 2 };

/* ---- results ---------------------------------------------------------- */

static struct sbc_xc_result *xc_find(struct sbc_lun *s, void *nexus,
				     uint8_t id)
{
	for (unsigned i = 0; i < SBC_XC_RESULTS; i++)
		if (s->xc[i].nexus == nexus && s->xc[i].list_id == id)
			return &s->xc[i];
	return NULL;
}

static void xc_record(struct tcq_task *t, uint8_t status)
{
	struct lun *l = t->lun;
	struct sbc_lun *s = l->sbc;
	const uint8_t *p = t->buf;
	uint8_t usage = (p[1] >> 3) & 3;

	/* LIST ID USAGE 00b and 01b hold the results; 1xb do not. */
	if (!s || usage > 1)
		return;
	pthread_mutex_lock(&l->lock);
	struct sbc_xc_result *r = xc_find(s, t->nexus, p[0]);
	if (!r) {
		r = &s->xc[s->xc_next];
		s->xc_next = (s->xc_next + 1) % SBC_XC_RESULTS;
	}
	r->nexus = t->nexus;
	r->list_id = p[0];
	r->status = status;
	r->segs = (uint16_t)t->exec.pending;
	r->bytes = t->exec.pos;
	pthread_mutex_unlock(&l->lock);
}

/* ---- the copy --------------------------------------------------------- */

struct xc_seg {
	struct lun *src, *dst;
	uint64_t src_lba, dst_lba;
	uint32_t blocks;
};

/* COPY ABORTED with asc, the copy's result recorded as failed. */
static struct exec_rc xc_abort(struct tcq_task *t, uint16_t asc)
{
	xc_record(t, XCS_FAILED);
	return exec_sense(SK_COPY_ABORTED, asc);
}

/* The LUN an identification target descriptor names, or NULL; one the
 * nexus' LUN map does not show is not reachable for it, and *ro says
 * whether the map makes it read-only. */
static struct lun *xc_target_lun(struct tcq_task *t, const uint8_t *d,
				 bool *ro)
{
	struct sdev *tg = t->lun->dev;
	uint8_t dlen = d[7];

	*ro = t->map_ro;

	if ((d[1] & 0x1f) != PDT_DIRECT_ACCESS)
		return NULL;
	/* Designator: NAA (type 3), 16 bytes, associated with the LU. */
	if ((d[5] & 0x0f) != 3 || (d[5] & 0x30) != 0 || dlen != 16)
		return NULL;
	if (!tg)
		return memcmp(d + 8, t->lun->naa, 16) ? NULL : t->lun;
	for (int i = 0; i < sdev_nluns(tg); i++) {
		struct lun *l = sdev_lun(tg, (uint64_t)i);
		if (l && !memcmp(d + 8, l->naa, 16)) {
			uint32_t bs = get_be24(d + 29);

			if (sdev_map_number(sdev_nexus_map(tg, t->nexus),
					    l->id, ro) < 0)
				return NULL;
			return bs == l->block_size ? l : NULL;
		}
	}
	return NULL;
}

/* Resolves segment number t->exec.pending into sg, or the failure. */
static struct exec_rc xc_segment(struct tcq_task *t, struct xc_seg *sg)
{
	const uint8_t *p = t->buf;
	uint32_t tdl = get_be16(p + 2);
	const uint8_t *d = p + XC_HDR + tdl + (size_t)XC_B2B_LEN * t->exec.pending;
	uint16_t si = get_be16(d + 4), di = get_be16(d + 6);

	if (si >= tdl / XC_TGT_LEN || di >= tdl / XC_TGT_LEN)
		return xc_abort(t, ASC_COPY_TARGET_DEVICE_NOT_REACHABLE);
	bool src_ro, dst_ro;

	sg->src = xc_target_lun(t, p + XC_HDR + XC_TGT_LEN * si, &src_ro);
	sg->dst = xc_target_lun(t, p + XC_HDR + XC_TGT_LEN * di, &dst_ro);
	if (!sg->src || !sg->dst || !sg->src->bdev || !sg->dst->bdev)
		return xc_abort(t, ASC_COPY_TARGET_DEVICE_NOT_REACHABLE);
	sg->blocks = get_be16(d + 10);
	sg->src_lba = get_be64(d + 12);
	sg->dst_lba = get_be64(d + 20);
	if (sg->src_lba > sg->src->nblocks ||
	    sg->blocks > sg->src->nblocks - sg->src_lba ||
	    sg->dst_lba > sg->dst->nblocks ||
	    sg->blocks > sg->dst->nblocks - sg->dst_lba)
		return xc_abort(t, ASC_NO_ADDITIONAL_SENSE);
	if (sg->dst->read_only || sg->dst->swp || dst_ro) {
		xc_record(t, XCS_FAILED);
		return exec_sense(SK_DATA_PROTECT, ASC_WRITE_PROTECTED);
	}
	return EXEC_OK;
}

/* One I/O of the copy to LUN l (the source or the destination), through
 * t->exec.io; then(t) runs once it completed (sbc_io_done). */
static struct exec_rc xc_io(struct tcq_task *t, struct lun *l,
			    enum bdev_op op, uint64_t off, uint64_t len,
			    sbc_step *then)
{
	struct bdev_io *io = &t->exec.io;
	struct bdev_queue *q = bdev_queue_get(l->bdev, reactor_self());

	if (!q)
		return xc_abort(t, ASC_COPY_TARGET_DEVICE_NOT_REACHABLE);
	memset(io, 0, sizeof(*io));
	sbc_io_prepare(io, t, op, off, len, t->exec.buf);
	io->flags = op == BDEV_WRITE && !l->write_cache ? BDEV_FUA : 0;
	t->exec.next = then;
	if (op == BDEV_WRITE) {
		/* ODX tokens of those blocks are cancelled (scsi/odx.h). */
		odx_note_range(l, off / l->block_size,
			       (len + l->block_size - 1) / l->block_size);
		record_write(l, t, io);	/* the crash lab's, when recording */
	}
	bdev_submit(q, io);
	return EXEC_OK;
}

static struct exec_rc xc_step(struct tcq_task *t);

static struct exec_rc xc_write_done(struct tcq_task *t)
{
	const struct bdev_io *io = &t->exec.io;

	if (io->result)
		return xc_abort(t, ASC_NO_ADDITIONAL_SENSE);
	t->exec.pos += io->len;
	t->req.lba += io->len;
	return xc_step(t);
}

static struct exec_rc xc_read_done(struct tcq_task *t)
{
	const struct bdev_io *io = &t->exec.io;
	struct xc_seg sg;
	struct exec_rc rc;

	if (io->result)
		return xc_abort(t, ASC_NO_ADDITIONAL_SENSE);
	rc = xc_segment(t, &sg);
	if (exec_failed(rc))
		return rc;
	uint64_t done = t->req.lba;	/* bytes of this segment copied */
	return xc_io(t, sg.dst, BDEV_WRITE,
		     sg.dst_lba * sg.dst->block_size + done, io->len,
		     xc_write_done);
}

/* Next chunk of the current segment (t->req.lba: bytes done in it). */
static struct exec_rc xc_step(struct tcq_task *t)
{
	const uint8_t *p = t->buf;
	uint32_t nseg = (uint32_t)(get_be32(p + 8) / XC_B2B_LEN);
	struct xc_seg sg;

	for (;;) {
		if (t->exec.pending >= nseg) {
			xc_record(t, XCS_OK);
			return exec_good(t);
		}
		struct exec_rc rc = xc_segment(t, &sg);
		if (exec_failed(rc))
			return rc;
		uint64_t total = (uint64_t)sg.blocks * sg.src->block_size;
		if (t->req.lba < total) {
			uint64_t n = MIN(total - t->req.lba,
					 (uint64_t)t->exec.buf_len);
			return xc_io(t, sg.src, BDEV_READ,
				     sg.src_lba * sg.src->block_size +
				     t->req.lba, n, xc_read_done);
		}
		t->exec.pending++;	/* segment done */
		t->req.lba = 0;
	}
}

/* The parameter list (SPC-4 6.3.x): header, identification target
 * descriptors, block-to-block segment descriptors, no inline data. */
static struct exec_rc xc_check_list(const struct tcq_task *t)
{
	uint32_t len = t->req.data_out_len;
	const uint8_t *p = t->buf;
	struct exec_rc list_len = exec_sense(SK_ILLEGAL_REQUEST,
					     ASC_PARAMETER_LIST_LENGTH_ERROR);

	if (len < XC_HDR || len > XC_HDR + XC_MAX_LIST)
		return list_len;
	uint32_t tdl = get_be16(p + 2), sdl = get_be32(p + 8);
	uint32_t inl = get_be32(p + 12);
	if ((uint64_t)XC_HDR + tdl + sdl + inl > len)
		return list_len;
	if (inl)		/* no inline data segments here */
		return exec_param_field(12, -1);
	if (tdl % XC_TGT_LEN)
		return exec_param_field(2, -1);
	if (tdl / XC_TGT_LEN > XC_MAX_TGT)
		return exec_sense(SK_ILLEGAL_REQUEST,
				  ASC_TOO_MANY_TARGET_DESCRIPTORS);
	for (uint32_t off = 0; off < tdl; off += XC_TGT_LEN)
		if (p[XC_HDR + off] != XC_TGT_IDENT)
			return exec_sense(SK_ILLEGAL_REQUEST,
				ASC_UNSUPPORTED_TARGET_DESCRIPTOR_TYPE);
	/* Segment descriptors: every one must be block-to-block. */
	uint32_t nseg = 0;
	for (uint32_t off = 0; off < sdl; nseg++) {
		const uint8_t *d = p + XC_HDR + tdl + off;
		if (sdl - off < 4)
			return list_len;
		if (d[0] != XC_SEG_B2B)
			return exec_sense(SK_ILLEGAL_REQUEST,
				ASC_UNSUPPORTED_SEGMENT_DESCRIPTOR_TYPE);
		if (get_be16(d + 2) != XC_B2B_LEN - 4 ||
		    sdl - off < XC_B2B_LEN)
			return list_len;
		off += XC_B2B_LEN;
	}
	if (nseg > XC_MAX_SEG)
		return exec_sense(SK_ILLEGAL_REQUEST,
				  ASC_TOO_MANY_SEGMENT_DESCRIPTORS);
	return EXEC_OK;
}

struct exec_rc sbc_extended_copy(struct tcq_task *t)
{
	uint32_t len = t->req.data_out_len;
	struct exec_rc rc;

	if (len == 0)		/* no copy requested: not an error */
		return exec_good(t);
	if (!t->buf || t->buf_len < len)
		return exec_target_failure();
	rc = xc_check_list(t);
	if (exec_failed(rc))
		return rc;
	rc = sbc_xbuf(t, SBC_WS_CHUNK);
	if (exec_failed(rc))
		return rc;
	t->exec.pending = 0;	/* segments done */
	t->exec.pos = 0;		/* bytes copied */
	t->req.lba = 0;		/* bytes of the current segment copied */
	return xc_step(t);
}

/* ---- RECEIVE COPY RESULTS --------------------------------------------- */

static struct exec_rc rcr_op_params(struct tcq_task *t)
{
	uint8_t b[46];

	memset(b, 0, sizeof(b));
	put_be32(b, sizeof(b) - 4);		/* AVAILABLE DATA */
	put_be16(b + 8, XC_MAX_TGT);
	put_be16(b + 10, XC_MAX_SEG);
	put_be32(b + 12, XC_MAX_LIST);		/* MAXIMUM DESCRIPTOR LIST */
	put_be32(b + 16, 0xffffu * t->lun->block_size); /* SEGMENT LENGTH */
	put_be16(b + 34, 1);			/* TOTAL CONCURRENT COPIES */
	b[36] = 1;				/* MAXIMUM CONCURRENT COPIES */
	b[37] = (uint8_t)__builtin_ctz(t->lun->block_size);
	b[43] = 2;				/* implemented descriptors: */
	b[44] = XC_SEG_B2B;
	b[45] = XC_TGT_IDENT;
	return spc_reply(t, b, sizeof(b));
}

static struct exec_rc rcr_copy_status(struct tcq_task *t)
{
	struct lun *l = t->lun;
	struct sbc_lun *s = l->sbc;
	struct sbc_xc_result r, *f = NULL;
	uint8_t b[12];

	if (s) {
		pthread_mutex_lock(&l->lock);
		f = xc_find(s, t->nexus, t->req.page);
		if (f) {
			r = *f;
			f->nexus = NULL;	/* reported once, then gone */
		}
		pthread_mutex_unlock(&l->lock);
	}
	if (!f)			/* no such list identifier held */
		return exec_cdb_field(2, -1);
	memset(b, 0, sizeof(b));
	put_be32(b, 8);
	b[4] = r.status;
	put_be16(b + 5, r.segs);
	if (r.bytes <= UINT32_MAX) {
		b[7] = 0x00;		/* bytes */
		put_be32(b + 8, (uint32_t)r.bytes);
	} else {
		b[7] = 0x02;		/* mebibytes */
		put_be32(b + 8, (uint32_t)MIN(r.bytes >> 20,
					      (uint64_t)UINT32_MAX));
	}
	return spc_reply(t, b, sizeof(b));
}

struct exec_rc sbc_receive_copy_results(struct tcq_task *t)
{
	if (t->req.sa == RCR_OPERATING_PARAMS)
		return rcr_op_params(t);
	return rcr_copy_status(t);
}
