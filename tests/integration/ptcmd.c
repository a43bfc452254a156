/*
 * ptcmd: SCSI commands with data over pdutest sessions (see ptcmd.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tcq/pdu.h"
#include "tcq/scsi_proto.h"
#include "tests/integration/ptcmd.h"

unsigned pc_seq;

int pc_start(struct pt_sess *s, struct pc_cmd *c)
{
	struct pdu_scsi_cmd sc = { 0 };
	uint8_t bhs[ISCSI_BHS_LEN];

	c->n_held = c->n_r2t = 0;
	c->r2t_bad = c->in_bad = c->done = false;
	c->in_bytes = 0;
	c->first_in_seq = c->done_seq = 0;
	c->status = c->response = -1;
	c->sense_key = c->asc = c->ascq = -1;
	c->residual = 0;
	c->pdus = 0;
	if (c->imm_len > c->edtl)
		c->imm_len = c->edtl;
	/* Follow the target if it consumed a CmdSN we did not expect. */
	if (sn_gt(s->exp_cmdsn, s->cmdsn))
		s->cmdsn = s->exp_cmdsn;
	c->itt = s->itt++;
	c->cmdsn = s->cmdsn++;
	sc.final = true;	/* InitialR2T=Yes: no unsolicited Data-Out */
	sc.read = c->read;
	sc.write = c->write;
	sc.attr = c->attr;
	sc.lun = pdu_lun_encode(c->lun);
	sc.itt = c->itt;
	sc.edtl = c->edtl;
	sc.cmdsn = c->cmdsn;
	sc.expstatsn = s->exp_statsn;
	sc.data_len = c->imm_len;
	memcpy(sc.cdb, c->cdb, 16);
	pdu_encode_scsi_cmd(bhs, &sc);
	pdu_set_data_len(bhs, c->imm_len);
	return pt_sess_send(s, bhs, c->imm_len ? c->buf : NULL, c->imm_len, 0,
			    c->imm_dd_xor);
}

/* Data-Out for one R2T, in segments the target accepts; DataSN starts
 * over for every R2T (RFC 7143 11.7.5). */
static int answer_r2t(struct pt_sess *s, struct pc_cmd *c,
		      const struct pdu_r2t *r2t)
{
	uint32_t seg = s->peer_mrdsl ? s->peer_mrdsl : 8192;
	uint32_t done = 0, datasn = 0;
	bool last_r2t = r2t->offset + r2t->length == c->edtl;

	while (done < r2t->length) {
		struct pdu_data_out d = { 0 };
		uint8_t bhs[ISCSI_BHS_LEN];
		uint32_t n = r2t->length - done;

		if (n > seg)
			n = seg;
		d.final = done + n == r2t->length;
		d.lun = r2t->lun;
		d.itt = c->itt;
		d.ttt = r2t->ttt;
		d.expstatsn = s->exp_statsn;
		d.datasn = datasn++;
		d.offset = r2t->offset + done;
		d.data_len = n;
		pdu_encode_data_out(bhs, &d);
		pdu_set_data_len(bhs, n);
		if (pt_sess_send(s, bhs, c->buf + d.offset, n, 0,
				 d.final && last_r2t ? c->last_dd_xor : 0) < 0)
			return -1;
		done += n;
	}
	return 0;
}

int pc_release(struct pt_sess *s, struct pc_cmd *c)
{
	unsigned i;
	int rc = 0;

	c->hold_r2t = false;
	for (i = 0; i < c->n_held && rc == 0; i++)
		rc = answer_r2t(s, c, &c->r2t[i]);
	c->n_held = 0;
	return rc;
}

/* Sense key, ASC and ASCQ from a SCSI Response's sense segment. */
static void take_sense(struct pc_cmd *c, const struct pt_rx *r)
{
	const uint8_t *sn;
	uint32_t slen;

	if (r->len < 4)
		return;
	slen = get_be16(r->data);
	if (slen + 2 > r->len || slen < 8)
		return;
	sn = r->data + 2;
	if ((sn[0] & 0x7f) >= 0x72) {
		c->sense_key = sn[1] & 0x0f;
		c->asc = sn[2];
		c->ascq = sn[3];
	} else if (slen >= 14) {
		c->sense_key = sn[2] & 0x0f;
		c->asc = sn[12];
		c->ascq = sn[13];
	}
}

static void on_pdu(struct pt_sess *s, struct pc_cmd *c, const struct pt_rx *r)
{
	uint8_t op = pdu_opcode(r->bhs);

	c->pdus++;
	if (op == ISCSI_OP_R2T) {
		struct pdu_r2t r2t;

		pdu_decode_r2t(r->bhs, &r2t);
		c->n_r2t++;
		if (!c->write || r2t.length == 0 ||
		    r2t.offset < c->imm_len || r2t.offset > c->edtl ||
		    r2t.length > c->edtl - r2t.offset) {
			c->r2t_bad = true;
			pt_note("R2T offset %u length %u outside the %u-byte transfer",
				r2t.offset, r2t.length, c->edtl);
			return;
		}
		if ((c->hold_r2t || c->n_held) && c->n_held < PC_MAX_R2T)
			c->r2t[c->n_held++] = r2t;
		else
			answer_r2t(s, c, &r2t);
	} else if (op == ISCSI_OP_DATA_IN) {
		struct pdu_data_in di;

		pdu_decode_data_in(r->bhs, &di);
		if (!c->first_in_seq && r->len)
			c->first_in_seq = ++pc_seq;
		if (!c->read || di.offset > c->edtl ||
		    r->len > c->edtl - di.offset)
			c->in_bad = true;
		else if (r->len)
			memcpy(c->buf + di.offset, r->data, r->len);
		c->in_bytes += r->len;
		if (di.status_present) {
			c->done = true;
			c->done_seq = ++pc_seq;
			c->status = di.status;
			c->response = 0;
			c->residual = di.residual;
		}
	} else if (op == ISCSI_OP_SCSI_RSP) {
		struct pdu_scsi_rsp sr;

		pdu_decode_scsi_rsp(r->bhs, &sr);
		c->done = true;
		c->done_seq = ++pc_seq;
		c->status = sr.status;
		c->response = sr.response;
		c->residual = sr.residual;
		take_sense(c, r);
	} else {
		pt_note("(opcode 0x%02x for ITT 0x%x)", op, c->itt);
	}
}

bool pc_is_done(const struct pc_cmd *c)
{
	return c->done;
}

bool pc_has_r2t(const struct pc_cmd *c)
{
	return c->n_held > 0;
}

/* Hands r to the listed command it belongs to; false when none. */
static bool route(struct pt_sess *s, struct pc_cmd **cmds, unsigned n,
		  const struct pt_rx *r)
{
	for (unsigned i = 0; i < n; i++) {
		if (pdu_itt(r->bhs) == cmds[i]->itt &&
		    pdu_opcode(r->bhs) != ISCSI_OP_REJECT) {
			on_pdu(s, cmds[i], r);
			return true;
		}
	}
	return false;
}

static void stray_pdu(const struct pt_rx *r, unsigned *stray)
{
	pt_note("(stray opcode 0x%02x ITT 0x%x, byte 2 0x%02x)",
		pdu_opcode(r->bhs), pdu_itt(r->bhs), r->bhs[BHS_B2]);
	if (stray)
		(*stray)++;
}

int pc_wait(struct pt_sess *s, struct pc_cmd **cmds, unsigned n,
	    const struct pc_cmd *target, pc_pred want, int timeout_ms,
	    unsigned *stray)
{
	int64_t deadline = pt_now_ms() + timeout_ms;

	for (;;) {
		struct pt_rx r;
		int64_t left;
		int rc;

		if (want && target && want(target))
			return 1;
		left = deadline - pt_now_ms();
		if (left <= 0)
			return 0;
		rc = pt_recv(s, &r, (int)left);
		if (rc <= 0)
			return rc;
		if (!route(s, cmds, n, &r))
			stray_pdu(&r, stray);
		pt_rx_free(&r);
	}
}

int pc_tmf(struct pt_sess *s, struct pc_tmf *t, struct pc_cmd **cmds,
	   unsigned n, unsigned *stray)
{
	struct pdu_tmf_req q = { 0 };
	uint8_t bhs[ISCSI_BHS_LEN];
	int64_t deadline;

	if (sn_gt(s->exp_cmdsn, s->cmdsn))
		s->cmdsn = s->exp_cmdsn;
	q.immediate = !t->queued;
	q.function = t->function;
	q.lun = pdu_lun_encode(t->lun);
	q.itt = t->itt = s->itt++;
	q.rtt = t->rtt;
	q.cmdsn = t->queued ? s->cmdsn++ : s->cmdsn;
	q.expstatsn = s->exp_statsn;
	q.refcmdsn = t->refcmdsn;
	t->response = -1;
	pdu_encode_tmf_req(bhs, &q);
	pdu_set_data_len(bhs, 0);
	if (pt_sess_send(s, bhs, NULL, 0, 0, 0) < 0)
		return -1;
	deadline = pt_now_ms() + 5000;
	while (t->response < 0) {
		int64_t left = deadline - pt_now_ms();
		struct pt_rx r;

		if (left <= 0 || pt_recv(s, &r, (int)left) <= 0)
			break;
		if (pdu_opcode(r.bhs) == ISCSI_OP_TMF_RSP &&
		    pdu_itt(r.bhs) == t->itt) {
			memcpy(t->rsp, r.bhs, ISCSI_BHS_LEN);
			t->rsp_len = r.len;
			t->response = r.bhs[BHS_B2];
		} else if (!route(s, cmds, n, &r)) {
			stray_pdu(&r, stray);
		}
		pt_rx_free(&r);
	}
	return t->response;
}

int pc_run(struct pt_sess *s, struct pc_cmd *c, int timeout_ms)
{
	struct pc_cmd *one[1] = { c };

	if (pc_start(s, c) < 0)
		return -1;
	if (pc_wait(s, one, 1, c, pc_is_done, timeout_ms, NULL) <= 0)
		return -1;
	return c->status;
}

void pc_rw10(struct pc_cmd *c, bool write, uint32_t lba, uint16_t blocks,
	     uint8_t *buf, uint32_t block_size)
{
	memset(c, 0, sizeof(*c));
	c->cdb[0] = write ? SOP_WRITE_10 : SOP_READ_10;
	put_be32(c->cdb + 2, lba);
	put_be16(c->cdb + 7, blocks);
	c->attr = ISCSI_ATTR_SIMPLE;
	c->read = !write;
	c->write = write;
	c->edtl = (uint32_t)blocks * block_size;
	c->buf = buf;
}

void pc_nodata(struct pc_cmd *c, const uint8_t *cdb, unsigned cdb_len)
{
	memset(c, 0, sizeof(*c));
	memcpy(c->cdb, cdb, cdb_len > 16 ? 16 : cdb_len);
	c->attr = ISCSI_ATTR_SIMPLE;
}

void pc_fill(uint8_t *buf, uint32_t len, uint32_t seed)
{
	uint32_t x = seed * 2654435761u + 12345u, i;

	for (i = 0; i < len; i++) {
		/* xorshift: cheap, and no two seeds look alike */
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		buf[i] = (uint8_t)x;
	}
}

int pc_run_past_ua(struct pt_sess *s, struct pc_cmd *c, int ua[4])
{
	unsigned n = 0, i;
	int st = -1;

	for (i = 0; i < 4; i++) {
		st = pc_run(s, c, 5000);
		if (st != SAM_STAT_CHECK_CONDITION || c->sense_key != 6)
			break;
		pt_note("(unit attention: ASC 0x%02x ASCQ 0x%02x)", c->asc,
			c->ascq);
		if (ua && n < 3)
			ua[n++] = c->asc << 8 | c->ascq;
	}
	if (ua)
		ua[n] = 0;
	return st;
}

int pc_tur_ua(struct pt_sess *s, int ua[4])
{
	static const uint8_t tur[6] = { SOP_TEST_UNIT_READY };
	struct pc_cmd c;

	pc_nodata(&c, tur, sizeof(tur));
	return pc_run_past_ua(s, &c, ua);
}

bool pc_has_ua(const int ua[4], int asc_ascq)
{
	for (unsigned i = 0; ua[i]; i++)
		if (ua[i] == asc_ascq)
			return true;
	return false;
}

int pc_rw(struct pt_sess *s, bool write, uint32_t lba, uint32_t len,
	  uint8_t *buf, uint32_t imm)
{
	struct pc_cmd c;

	pc_rw10(&c, write, lba, (uint16_t)(len / PC_BS), buf, PC_BS);
	c.imm_len = imm;
	return pc_run_past_ua(s, &c, NULL);
}

int pc_same_as(struct pt_sess *s, uint32_t lba, uint32_t len,
	       const uint8_t *want)
{
	uint8_t *got = malloc(len);
	int rc = -1;

	if (!got)
		return -1;
	memset(got, 0xee, len);
	if (pc_rw(s, false, lba, len, got, 0) == SAM_STAT_GOOD)
		rc = !memcmp(got, want, len);
	free(got);
	return rc;
}

int pc_mode_page(struct pt_sess *s, uint8_t page, uint8_t *out,
		 unsigned outlen)
{
	uint8_t cdb[6] = { SOP_MODE_SENSE_6, 0x08, page, 0, 255 };
	uint8_t buf[255];
	struct pc_cmd c;
	uint32_t off;

	pc_nodata(&c, cdb, sizeof(cdb));
	c.read = true;
	c.edtl = sizeof(buf);
	c.buf = buf;
	memset(buf, 0, sizeof(buf));
	if (pc_run_past_ua(s, &c, NULL) != SAM_STAT_GOOD || c.in_bytes < 4)
		return -1;
	off = 4u + buf[3];	/* past the header and block descriptors */
	if (off + 2 > c.in_bytes || (buf[off] & 0x3f) != page)
		return -1;
	if (outlen > c.in_bytes - off)
		outlen = c.in_bytes - off;
	memcpy(out, buf + off, outlen);
	return (int)outlen;
}

int pc_pending_write(struct pt_sess *s, struct pc_cmd *w, uint32_t lba,
		     uint32_t len, uint8_t *buf)
{
	struct pc_cmd *one[1] = { w };
	int rc;

	pc_rw10(w, true, lba, (uint16_t)(len / PC_BS), buf, PC_BS);
	w->hold_r2t = true;
	if (pc_start(s, w) < 0) {
		PT_CHECK(0, "send the WRITE");
		return -1;
	}
	rc = pc_wait(s, one, 1, w, pc_has_r2t, 5000, NULL);
	PT_CHECK(rc == 1, "the WRITE got its R2T and waits for Data-Out (%s)",
		 rc == 1 ? "R2T" : w->done ? "completed instead" :
		 rc ? "connection closed" : "timeout");
	return rc == 1 ? 0 : -1;
}

unsigned pc_after_abort(struct pt_sess *s, struct pc_cmd *w, int ua[4],
			int *tur_status)
{
	static const uint8_t tur[6] = { SOP_TEST_UNIT_READY };
	struct pc_cmd t, *both[2] = { w, &t };
	unsigned pdus = w->pdus, stray = 0, n = 0, i;

	/* Its Data-Out may already be on the way: the target drops it. */
	pc_release(s, w);
	*tur_status = -1;
	for (i = 0; i < 4; i++) {
		pc_nodata(&t, tur, sizeof(tur));
		if (pc_start(s, &t) < 0 ||
		    pc_wait(s, both, 2, &t, pc_is_done, 5000, &stray) <= 0)
			break;
		*tur_status = t.status;
		if (t.status != SAM_STAT_CHECK_CONDITION || t.sense_key != 6)
			break;
		pt_note("(unit attention ASC 0x%02x ASCQ 0x%02x)", t.asc, t.ascq);
		if (n < 3)
			ua[n++] = t.asc << 8 | t.ascq;
	}
	ua[n] = 0;
	if (stray)
		pt_note("(%u other PDU(s), e.g. Rejects of the late Data-Out)",
			stray);
	return w->pdus - pdus;
}
