/* SPC-4 primary commands: INQUIRY and VPD, REPORT LUNS, MODE SENSE/SELECT,
 * REQUEST SENSE, TEST UNIT READY, REPORT SUPPORTED OPERATION CODES. */
#include <stdio.h>
#include <string.h>
#include "tcq/bufpool.h"
#include "tcq/byteorder.h"
#include "tcq/compiler.h"
#include "tcq/pdu.h"
#include "tcq/scsi_proto.h"
#include "scsi/cdb.h"
#include "scsi/exec.h"
#include "scsi/lun.h"
#include "scsi/odx.h"
#include "scsi/sbc.h"
#include "scsi/sdev.h"
#include "scsi/sense.h"
#include "scsi/spc.h"
#include "scsi/thin.h"
#include "scsi/ua.h"


uint32_t spc_max_xfer_blocks(const struct lun *l)
{
	const struct sdev *d = l->dev;

	if (!d || !d->max_xfer_len || !l->block_size)
		return 0;
	return d->max_xfer_len / l->block_size;
}

struct exec_rc spc_data_in(struct tcq_task *t, const void *data,
			   uint32_t len)
{
	uint32_t n = MIN(len, t->req.alloc_len);
	uint32_t copy = MIN(n, t->exp_len);

	t->req.data_in_len = n;
	t->data_in_len = 0;
	if (!copy)
		return EXEC_OK;
	if (!t->buf) {
		t->buf = bufpool_alloc(copy);
		if (!t->buf)
			return exec_target_failure();
		t->buf_len = copy;
		t->buf_owned = true;
	}
	copy = MIN(copy, t->buf_len);
	memcpy(t->buf, data, copy);
	t->data_in_len = copy;
	return EXEC_OK;
}

struct exec_rc spc_reply(struct tcq_task *t, const void *data, uint32_t len)
{
	struct exec_rc rc = spc_data_in(t, data, len);

	return exec_failed(rc) ? rc : exec_good(t);
}

struct exec_rc spc_test_unit_ready(struct tcq_task *t)
{
	return exec_good(t);
}

static struct sdev *task_dev(const struct tcq_task *t)
{
	if (t->dev)
		return t->dev;
	return t->lun ? t->lun->dev : NULL;
}

/* ---- INQUIRY ---------------------------------------------------------- */

static void pad_ascii(uint8_t *dst, const char *s, size_t n)
{
	size_t l = strnlen(s, n);

	memset(dst, ' ', n);
	memcpy(dst, s, l);
}

static uint32_t inquiry_std(const struct lun *l, uint8_t *p)
{
	char vendor[9] = "TCQ", product[17] = "tcq disk", revision[5] = "";

	if (l)	/* tcqctl set may change it meanwhile */
		lun_identity(l, vendor, product, revision);
	memset(p, 0, 96);
	if (!l) {
		p[0] = (PQ_NOT_CONNECTABLE << 5) | PDT_UNKNOWN;
	} else if (l->mmc) {	/* no REPORT TARGET PORT GROUPS: TPGS 0 */
		p[0] = PDT_MMC;
		p[1] = 0x80;	/* RMB */
	} else {
		p[0] = PDT_DIRECT_ACCESS;
		p[1] = l->removable ? 0x80 : 0;
		p[5] |= 0x10;	/* TPGS 01b: implicit ALUA (scsi/alua.c) */
		p[5] |= 0x08;	/* 3PC: a copy manager (xcopy.c, odx*.c) */
	}
	p[2] = 0x06;		/* SPC-4 */
	p[3] = 0x20 | 0x10 | 0x02;	/* NormACA, HiSup, format 2 */
	p[4] = 96 - 5;
	p[7] = 0x02;		/* CmdQue */
	pad_ascii(p + 8, vendor, 8);
	pad_ascii(p + 16, product, 16);
	pad_ascii(p + 32, revision, 4);
	/* Version descriptors: SAM-5, iSCSI, SPC-4, SBC-3 (MMC-6). */
	put_be16(p + 58, 0x00a0);
	put_be16(p + 60, 0x0960);
	put_be16(p + 62, 0x0460);
	put_be16(p + 64, l && l->mmc ? 0x04e0 : 0x04c0);
	return 96;
}

static const uint8_t vpd_pages[] = { 0x00, 0x80, 0x83, 0x86, 0x8f, 0xb0,
				     0xb1, 0xb2 };
/* An MMC device's: the block device's pages 86h, 8Fh and Bxh are SBC's. */
#define MMC_VPD_PAGES 3

static uint32_t vpd_designators(const struct lun *l, uint8_t *p)
{
	uint8_t *d = p + 4;
	const struct sdev *tg = l->dev;
	char vendor[9], product[17], revision[5];

	/* NAA IEEE Registered Extended, logical unit. */
	d[0] = 0x01;
	d[1] = 0x03;
	d[3] = 16;
	memcpy(d + 4, l->naa, 16);
	d += 20;
	/* T10 vendor ID: vendor (8, padded) + serial, logical unit. */
	size_t sl = strlen(l->serial);
	d[0] = 0x02;
	d[1] = 0x01;
	d[3] = (uint8_t)(8 + sl);
	lun_identity(l, vendor, product, revision);
	pad_ascii(d + 4, vendor, 8);
	memcpy(d + 12, l->serial, sl);
	d += 4 + d[3];
	if (tg) {
		/* SCSI name string of the target port: "<name>,t,0x<tpgt>",
		 * NUL terminated, padded to a multiple of 4. */
		char name[SDEV_NAME_MAX + 16];
		int nl = snprintf(name, sizeof(name), "%s,t,0x%04x", tg->name,
				  tg->tpgt);
		uint32_t len = ALIGN_UP((uint32_t)nl + 1, 4u);
		d[0] = 0x50 | 0x03;	/* iSCSI, UTF-8 */
		d[1] = 0x80 | 0x10 | 0x08;	/* PIV, target port, name */
		d[3] = (uint8_t)len;
		memset(d + 4, 0, len);
		memcpy(d + 4, name, (size_t)nl);
		d += 4 + len;
	}
	/* Relative target port identifier. */
	d[0] = 0x50 | 0x01;
	d[1] = 0x80 | 0x10 | 0x04;
	d[3] = 4;
	put_be16(d + 6, l->rel_port_id);
	d += 8;
	/* Target port group. */
	d[0] = 0x50 | 0x01;
	d[1] = 0x80 | 0x10 | 0x05;
	d[3] = 4;
	put_be16(d + 6, l->tpg_id);
	d += 8;
	put_be16(p + 2, (uint16_t)(d - p - 4));
	return (uint32_t)(d - p);
}

/* Returns the page length, or 0 when the page is not supported. */
static uint32_t inquiry_vpd(const struct lun *l, uint8_t page, uint8_t *p)
{
	uint32_t n;

	memset(p, 0, 512);	/* caller's buffer is 512 bytes */
	p[0] = l->mmc ? PDT_MMC : PDT_DIRECT_ACCESS;
	p[1] = page;
	if (l->mmc && page != 0x00 && page != 0x80 && page != 0x83)
		return 0;
	switch (page) {
	case 0x00:
		n = l->mmc ? MMC_VPD_PAGES : sizeof(vpd_pages);
		memcpy(p + 4, vpd_pages, n);
		p[3] = (uint8_t)n;
		return 4 + n;
	case 0x80:
		n = (uint32_t)strlen(l->serial);
		memcpy(p + 4, l->serial, n);
		p[3] = (uint8_t)n;
		return 4 + n;
	case 0x83:
		return vpd_designators(l, p);
	case 0x86:		/* extended INQUIRY data (SPC-4 7.8.7) */
		p[3] = 0x3c;
		p[5] = 0x07;	/* HEADSUP, ORDSUP, SIMPSUP: task attributes */
		if (!(l->bdev && l->bdev->write_through))
			p[6] = 0x01;	/* V_SUP: a volatile write cache */
		p[13] = SENSE_BUF_MAX;	/* longest sense data we return */
		return 64;
	case 0x8f:		/* third-party copy (scsi/odx.c) */
		return odx_vpd_tpc(l, p);
	case 0xb0: {		/* block limits */
		uint32_t bs = l->block_size;
		p[3] = 0x3c;
		put_be16(p + 6, bs < 4096 ? (uint16_t)(4096 / bs) : 1);
		put_be32(p + 8, spc_max_xfer_blocks(l));
		put_be32(p + 12, spc_max_xfer_blocks(l));
		if (l->bdev && l->bdev->thin) {
			put_be32(p + 20, 0xffffffffu);	/* max unmap LBAs */
			put_be32(p + 24, 256);		/* descriptors */
			put_be32(p + 28, bs < 4096 ? 4096 / bs : 1);
		}
		sbc_block_limits(l, p);	/* CAW, WRITE SAME, atomic */
		return 64;
	}
	case 0xb1:		/* block device characteristics */
		p[3] = 0x3c;
		put_be16(p + 4, 1);	/* MEDIUM ROTATION RATE: none */
		if (l->sanitize_ok)	/* reads after an erase: GOOD */
			p[7] = 0x40 | 0x10;	/* WABEREQ 01b, WACEREQ 01b */
		/* VBULS: VERIFY with BYTCHK compares an unmapped block with
		 * what a read of it returns (SBC-4 5.30), as sbc_verify
		 * does, instead of failing with MISCOMPARE VERIFY OF
		 * UNMAPPED LBA. */
		p[8] = 0x01;
		return 64;
	case 0xb2:		/* logical block provisioning */
		p[3] = 4;
		/* THRESHOLD EXPONENT: resource counts (LOG SENSE 0Ch) and the
		 * soft threshold (mode page 1Ch/02h) in sets of 2^n blocks;
		 * 0 where the allocation is not known. */
		p[4] = thin_exponent(l);
		if (l->bdev && l->bdev->thin) {
			/* LBPU (UNMAP), LBPWS and LBPWS10 (WRITE SAME with
			 * UNMAP), LBPRZ; ANC_SUP 0: no anchored state. */
			p[5] = 0x80 | 0x40 | 0x20 | 0x04;
			p[6] = 0x02;	/* thin provisioned */
		}
		return 8;
	default:
		return 0;
	}
}

struct exec_rc spc_inquiry(struct tcq_task *t)
{
	uint8_t buf[512];
	uint32_t n;

	if (!(t->req.flags & CDBF_EVPD)) {
		n = inquiry_std(t->lun, buf);
	} else if (!t->lun) {
		return exec_sense(SK_ILLEGAL_REQUEST, ASC_LUN_NOT_SUPPORTED);
	} else {
		n = inquiry_vpd(t->lun, t->req.page, buf);
		if (!n)
			return exec_cdb_field(2, -1);
	}
	return spc_reply(t, buf, n);
}

/* ---- REPORT LUNS / REQUEST SENSE -------------------------------------- */

struct exec_rc spc_report_luns(struct tcq_task *t)
{
	uint8_t buf[8 + SDEV_MAX_LUNS * 8];
	const struct sdev *tg = task_dev(t);
	const struct sdev_map *m = sdev_nexus_map(tg, t->nexus);
	int nr = m ? m->n : sdev_nluns(tg);
	uint32_t n = 8;
	bool ro;

	memset(buf, 0, 8);
	/* SELECT REPORT 1 (well known LUs only): none. Else the LUNs this
	 * nexus reaches, under its own numbers (its map's). */
	if (t->req.page != 1) {
		if (tg) {
			for (int i = 0; i < nr; i++)
				if (sdev_map_lun(tg, m, (uint64_t)i, &ro)) {
					put_be64(buf + n, pdu_lun_encode(
						 (uint64_t)i));
					n += 8;
				}
		} else if (t->lun) {
			put_be64(buf + n, pdu_lun_encode(t->lun->id));
			n += 8;
		}
	}
	put_be32(buf, n - 8);
	struct exec_rc rc = spc_data_in(t, buf, n);
	if (exec_failed(rc))
		return rc;
	/* SPC-4 6.33: the inventory is now known to this I_T nexus: its
	 * REPORTED LUNS DATA HAS CHANGED is cleared on every LUN, so a
	 * scan is not followed by one more per LUN. */
	for (int i = 0; tg && i < sdev_nluns(tg); i++) {
		struct lun *l = sdev_lun(tg, (uint64_t)i);

		if (l)
			ua_clear_nexus(l, t->nexus, ASC_REPORTED_LUNS_CHANGED);
	}
	return exec_good(t);
}

struct exec_rc spc_request_sense(struct tcq_task *t)
{
	struct taskset *ts = t->order.set;
	struct sense_info si = { .key = SK_NO_SENSE, .bit = -1 };
	uint8_t buf[SENSE_BUF_MAX];

	if (!t->lun) {
		si.key = SK_ILLEGAL_REQUEST;
		si.asc = ASC_LUN_NOT_SUPPORTED;
	} else if (ts && ua_take(ts, &si)) {
		/* SAM-5 5.14: a pending unit attention is the sense data,
		 * and reporting it clears it. */
	} else if (ts && ts->pending_valid) {
		si = ts->pending;
		ts->pending_valid = false;
	} else if (sbc_sanitize_progress(t->lun, &si.progress)) {
		/* SPC-4 5.11: the not-ready state, with how far it is. */
		si.key = SK_NOT_READY;
		si.asc = ASC_SANITIZE_IN_PROGRESS;
		si.sksv = si.progress_valid = true;
	}
	uint8_t n = sense_build(buf, t->req.flags & CDBF_DESC, &si);
	return spc_reply(t, buf, n);
}

/* ---- MODE SENSE / MODE SELECT ----------------------------------------- */

enum { PC_CURRENT, PC_CHANGEABLE, PC_DEFAULT, PC_SAVED };

#define MP_RW_ERROR 0x01
#define MP_CACHING 0x08
#define MP_CONTROL 0x0a
#define MP_IEC 0x1c
#define MP_ALL 0x3f

static const uint8_t mode_pages[] = { MP_RW_ERROR, MP_CACHING, MP_CONTROL,
				      MP_IEC };

/* Writes page code's page for pc into p; returns its length or 0. */
static uint32_t mode_page(const struct lun *l, uint8_t code, int pc,
			  uint8_t *p)
{
	switch (code) {
	case MP_RW_ERROR:
		/* SBC-3 6.5.10, only where a soft threshold is set: LBPERE
		 * enables its notification (default 1, changeable); no error
		 * recovery to tune, the rest is 0. */
		if (!l->thin_warn)
			return 0;
		memset(p, 0, 12);
		p[0] = MP_RW_ERROR;
		p[1] = 0x0a;
		if (pc == PC_CHANGEABLE || pc == PC_DEFAULT ||
		    (pc == PC_CURRENT && l->lbpere))
			p[7] = 0x80;	/* LBPERE */
		return 12;
	case MP_CACHING:
		memset(p, 0, 20);
		p[0] = MP_CACHING;
		p[1] = 0x12;
		if (pc == PC_CHANGEABLE) {
			/* No cache (rbd cache=none): WCE stays 0. */
			if (!(l->bdev && l->bdev->write_through))
				p[2] = 0x04;
		} else if ((pc == PC_CURRENT ? l->write_cache
					   : l->write_cache_default))
			p[2] = 0x04;	/* WCE; RCD=0 */
		return 20;
	case MP_CONTROL:
		memset(p, 0, 12);
		p[0] = MP_CONTROL;
		p[1] = 0x0a;
		if (pc == PC_CHANGEABLE) {
			p[2] = 0x04;	/* D_SENSE */
			p[3] = 0x16;	/* QAM 0 or 1, QErr (scsi/tmf.c) */
			p[4] = 0x08;	/* SWP */
			p[5] = 0x40;	/* TAS */
			return 12;
		}
		p[2] = 0x20;		/* TST=001b: per I_T nexus */
		if (pc == PC_CURRENT) {
			p[2] |= l->d_sense ? 0x04 : 0;
			p[3] = (uint8_t)((l->qam & 0xf) << 4 |
					 (l->qerr & 3) << 1);
			p[4] = l->swp ? 0x08 : 0;
			p[5] = l->tas ? 0x40 : 0;
		} else if (l->tas_default) {	/* [lun] tas = 1 */
			p[5] = 0x40;
		}
		put_be16(p + 8, 0xffff);	/* busy timeout: unlimited */
		return 12;
	case MP_IEC:
		memset(p, 0, 12);
		p[0] = MP_IEC;
		p[1] = 0x0a;
		if (pc != PC_CHANGEABLE)
			p[2] = 0x08;	/* DEXCPT: no exception reporting */
		return 12;
	default:
		return 0;
	}
}

struct exec_rc spc_mode_sense(struct tcq_task *t)
{
	const struct lun *l = t->lun;
	uint8_t buf[512];
	bool ten = t->req.opcode == SOP_MODE_SENSE_10;
	int pc = t->req.flags >> CDBF_PC_SHIFT;
	uint8_t page = t->req.page, sub = t->req.subpage;
	uint32_t hl = ten ? 8 : 4, n;

	if (pc == PC_SAVED)
		return exec_field(ASC_SAVING_PARAMETERS_NOT_SUPPORTED, true, 2,
				  7);
	/* Subpages: the Logical Block Provisioning page (1Ch/02h) of a
	 * LUN with provisioning counts; FFh: every subpage too. */
	bool lbp_page = page == THIN_MODE_PAGE && sub == THIN_MODE_SUBPAGE;
	if ((sub != 0 && sub != 0xff && !lbp_page) ||
	    (lbp_page && !thin_supported(l)))
		return exec_cdb_field(3, -1);
	memset(buf, 0, hl);
	n = hl;
	if (!(t->req.flags & CDBF_DBD)) {
		bool llba = ten && (t->req.flags & CDBF_LLBAA);
		uint8_t *bd = buf + n;
		if (llba) {
			memset(bd, 0, 16);
			put_be64(bd, l->nblocks);
			put_be32(bd + 12, l->block_size);
			buf[4] = 0x01;	/* LONGLBA */
			n += 16;
		} else {
			memset(bd, 0, 8);
			put_be32(bd, l->nblocks > 0xffffffffu ? 0xffffffffu
							       : (uint32_t)l->nblocks);
			put_be24(bd + 5, l->block_size);
			n += 8;
		}
	}
	uint32_t bdl = n - hl;
	if (page == MP_ALL) {
		for (size_t i = 0; i < ARRAY_SIZE(mode_pages); i++)
			n += mode_page(l, mode_pages[i], pc, buf + n);
		if (sub == 0xff)
			n += thin_mode_page(l, pc, buf + n);
	} else if (lbp_page) {
		n += thin_mode_page(l, pc, buf + n);
	} else {
		uint32_t pl = mode_page(l, page, pc, buf + n);
		if (!pl)
			return exec_cdb_field(2, 5);
		n += pl;
		if (page == THIN_MODE_PAGE && sub == 0xff)
			n += thin_mode_page(l, pc, buf + n);
	}
	uint8_t dsp = 0x10;	/* DPOFUA */
	if (lun_write_protected(t))
		dsp |= 0x80;	/* WP (SBC-3 6.4.1), as this nexus sees it */
	if (ten) {
		put_be16(buf, (uint16_t)(n - 2));
		buf[3] = dsp;
		put_be16(buf + 6, (uint16_t)bdl);
	} else {
		buf[0] = (uint8_t)(n - 1);
		buf[2] = dsp;
		buf[3] = (uint8_t)bdl;
	}
	return spc_reply(t, buf, n);
}

static struct exec_rc bad_param(uint32_t byte, int bit)
{
	return exec_param_field((uint16_t)byte, bit);
}

/* Validates the parameter list and applies it only when all of it is
 * acceptable (SPC-4 6.11: changeable bits only, known pages only). */
static struct exec_rc mode_select_parse(struct tcq_task *t, const uint8_t *p,
					uint32_t len)
{
	struct exec_rc list_len = exec_sense(SK_ILLEGAL_REQUEST,
					     ASC_PARAMETER_LIST_LENGTH_ERROR);
	struct lun *l = t->lun;
	bool ten = t->req.opcode == SOP_MODE_SELECT_10;
	uint32_t hl = ten ? 8 : 4, bdl, off;
	bool wce = l->write_cache, swp = l->swp, lbpere = l->lbpere;
	uint8_t dsense = l->d_sense, qam = l->qam, qerr = l->qerr;
	uint8_t tas = l->tas;

	if (len < hl)
		return list_len;
	bdl = ten ? get_be16(p + 6) : p[3];
	uint32_t dsize = ten && (p[4] & 1) ? 16 : 8;
	if (bdl % dsize || hl + bdl > len)
		return list_len;
	for (off = hl; off < hl + bdl; off += dsize) {
		uint32_t blen = dsize == 16 ? get_be32(p + off + 12)
					    : get_be24(p + off + 5);
		if (blen != l->block_size)
			return bad_param(off + dsize - 3, -1);
	}
	while (off < len) {
		uint8_t cur[32], chg[32];
		if (off + 2 > len)
			return list_len;
		uint8_t code = p[off] & 0x3f;
		if (p[off] & 0x40)	/* SPF: no subpages here */
			return bad_param(off, 6);
		uint32_t pl = mode_page(l, code, PC_CURRENT, cur);
		if (!pl)
			return bad_param(off, 5);
		if (p[off + 1] != cur[1])
			return bad_param(off + 1, -1);
		if (off + pl > len)
			return list_len;
		mode_page(l, code, PC_CHANGEABLE, chg);
		const uint8_t *np = p + off;
		for (uint32_t i = 2; i < pl; i++) {
			uint8_t diff = (np[i] ^ cur[i]) & ~chg[i];
			if (diff)
				return bad_param(off + i,
						 31 - __builtin_clz(diff));
		}
		if (code == MP_CACHING) {
			wce = np[2] & 0x04;
		} else if (code == MP_CONTROL) {
			dsense = (np[2] & 0x04) ? 1 : 0;
			qam = np[3] >> 4;
			qerr = (np[3] >> 1) & 3;
			if (qerr == 2)	/* 10b is reserved */
				return bad_param(off + 3, 2);
			swp = np[4] & 0x08;
			tas = (np[5] & 0x40) ? 1 : 0;
		} else if (code == MP_RW_ERROR) {
			lbpere = np[7] & 0x80;
		}
		off += pl;
	}
	pthread_mutex_lock(&l->lock);
	bool changed = l->write_cache != wce || l->d_sense != dsense ||
		       l->qam != qam || l->swp != swp || l->lbpere != lbpere ||
		       l->qerr != qerr || l->tas != tas;
	l->lbpere = lbpere;
	l->write_cache = wce;
	l->d_sense = dsense;
	l->qam = qam;
	l->qerr = qerr;
	l->tas = tas;
	l->swp = swp;
	pthread_mutex_unlock(&l->lock);
	/* SPC-4 6.11: the other I_T nexuses learn of it by a UA. */
	if (changed)
		ua_establish_others(l, t->nexus, ASC_MODE_PARAMETERS_CHANGED);
	return EXEC_OK;
}

struct exec_rc spc_mode_select(struct tcq_task *t)
{
	uint32_t len = t->req.data_out_len;
	struct exec_rc rc;

	if (len == 0)
		return exec_good(t);
	if (!t->buf || t->buf_len < len)
		return exec_target_failure();
	rc = mode_select_parse(t, t->buf, len);
	return exec_failed(rc) ? rc : exec_good(t);
}

/* ---- REPORT SUPPORTED OPERATION CODES --------------------------------- */

/* Everything comes from the one table in scsi/opcodes.c. */
