/*
 * r2tio: writes through the write data rules and reads checked as they
 * come back (see r2tio.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tcq/pdu.h"
#include "tcq/scsi_proto.h"
#include "tests/integration/ptcmd.h"
#include "tests/integration/r2tio.h"

#define OUR_MRDSL 8192u		/* Data-In segments are at most this */
#define MAX_HELD 64u
#define WAIT_MS 5000

static uint32_t min3(uint32_t a, uint32_t b, uint32_t c)
{
	return pt_min(pt_min(a, b), c);
}

/* ---- login --------------------------------------------------------------- */

static bool answer_is(const struct pt_sess *s, const char *key,
		      const char *want)
{
	const char *v = pt_kv_find((const uint8_t *)s->login_rsp,
				   s->login_rsp_len, key);

	if (v && !strcmp(v, want))
		return true;
	pt_note("answer %s=%s, the result is %s", key, v ? v : "(none)", want);
	return false;
}

static bool answer_num(const struct pt_sess *s, const char *key, uint32_t v)
{
	char want[16];

	snprintf(want, sizeof(want), "%u", v);
	return answer_is(s, key, want);
}

int r2t_login(struct pt_sess *s, const struct r2t_keys *tgt,
	      const struct r2t_keys *ours, struct r2t_keys *n)
{
	char keys[256], num[3][16];
	size_t len = 0;
	struct pt_login_opts o = { .mrdsl = "8192" };
	bool ok;

	snprintf(num[0], sizeof(num[0]), "%u", ours->fbl);
	snprintf(num[1], sizeof(num[1]), "%u", ours->mbl);
	snprintf(num[2], sizeof(num[2]), "%u", ours->mor2t);
	len = pt_kv_add(keys, len, sizeof(keys), "InitialR2T",
			ours->ir2t ? "Yes" : "No");
	len = pt_kv_add(keys, len, sizeof(keys), "ImmediateData",
			ours->imm ? "Yes" : "No");
	len = pt_kv_add(keys, len, sizeof(keys), "FirstBurstLength", num[0]);
	len = pt_kv_add(keys, len, sizeof(keys), "MaxBurstLength", num[1]);
	len = pt_kv_add(keys, len, sizeof(keys), "MaxOutstandingR2T", num[2]);
	o.keys = keys;
	o.keys_len = (uint32_t)len;
	/* RFC 7143 13.10, 13.11: OR and AND; 13.12-13.14, 13.17: the
	 * minimum of the two offers. */
	n->ir2t = ours->ir2t || tgt->ir2t;
	n->imm = ours->imm && tgt->imm;
	n->fbl = pt_min(ours->fbl, tgt->fbl);
	n->mbl = pt_min(ours->mbl, tgt->mbl);
	n->mor2t = pt_min(ours->mor2t, tgt->mor2t);
	n->tmrdsl = tgt->tmrdsl;
	pt_note("offers InitialR2T=%d ImmediateData=%d FirstBurstLength=%u "
		"MaxBurstLength=%u MaxOutstandingR2T=%u", ours->ir2t,
		ours->imm, ours->fbl, ours->mbl, ours->mor2t);
	if (pt_login(s, &o) < 0) {
		PT_CHECK(0, "login");
		return -1;
	}
	ok = answer_is(s, "InitialR2T", n->ir2t ? "Yes" : "No");
	ok &= answer_is(s, "ImmediateData", n->imm ? "Yes" : "No");
	ok &= answer_num(s, "FirstBurstLength", n->fbl);
	ok &= answer_num(s, "MaxBurstLength", n->mbl);
	ok &= answer_num(s, "MaxOutstandingR2T", n->mor2t);
	ok &= s->peer_mrdsl == n->tmrdsl;
	PT_CHECK(ok, "the answers are the results: InitialR2T=%d "
		 "ImmediateData=%d FirstBurstLength=%u MaxBurstLength=%u "
		 "MaxOutstandingR2T=%u, target MaxRecvDataSegmentLength %u",
		 n->ir2t, n->imm, n->fbl, n->mbl, n->mor2t, s->peer_mrdsl);
	return ok ? 0 : -1;
}

/* ---- a write ------------------------------------------------------------- */

void r2t_write_plan(const struct r2t_keys *n, struct r2t_write *w)
{
	/* Immediate data: at most FirstBurstLength and one PDU the target
	 * takes; unsolicited Data-Out only where InitialR2T=No, up to
	 * FirstBurstLength in all (RFC 7143 13.10, 13.11, 13.14). */
	w->imm = n->imm ? min3(n->fbl, w->len, n->tmrdsl) : 0;
	w->unsol = n->ir2t ? w->imm : pt_min(n->fbl, w->len);
}

/* The state of one write while it runs. */
struct wrun {
	struct r2t_write *w;
	const struct r2t_keys *n;
	uint8_t cmd_bhs[ISCSI_BHS_LEN];
	uint32_t itt, ping_itt;
	uint32_t covered;		/* data asked for so far (R2Ts or not) */
	struct pdu_r2t held[MAX_HELD];
	unsigned nheld;
	bool done, pinged, bad;
};

static int send_data(struct pt_sess *s, struct wrun *u, uint32_t ttt,
		     uint32_t off, uint32_t len, uint32_t seg)
{
	uint32_t done = 0, datasn = 0;

	while (done < len) {
		struct pdu_data_out d = { 0 };
		uint8_t bhs[ISCSI_BHS_LEN];
		uint32_t n = pt_min(seg, len - done);

		d.final = done + n == len;
		d.itt = u->itt;
		d.ttt = ttt;
		d.expstatsn = s->exp_statsn;
		d.datasn = datasn++;	/* from 0 in every sequence: 11.7.5 */
		d.offset = off + done;
		d.data_len = n;
		pdu_encode_data_out(bhs, &d);
		pdu_set_data_len(bhs, n);
		if (pt_sess_send(s, bhs, u->w->buf + d.offset, n, 0, 0) < 0) {
			PT_CHECK(0, "Data-Out sent");
			return -1;
		}
		done += n;
	}
	return 0;
}

static void r2t_bad(struct wrun *u, const char *why, const struct pdu_r2t *r)
{
	u->bad = true;
	PT_CHECK(0, "R2T R2TSN %u offset %u length %u of a %u-byte write: %s",
		 r->r2tsn, r->offset, r->length, u->w->len, why);
}

/* RFC 7143 11.8: one R2T, as it must be given what came before. */
static void take_r2t(struct pt_sess *s, struct wrun *u, const struct pt_rx *x)
{
	struct pdu_r2t r;
	uint32_t statsn = get_be32(x->bhs + BHS_STATSN);

	pdu_decode_r2t(x->bhs, &r);
	if (x->bhs[1] != ISCSI_FLAG_FINAL || pdu_ahs_len(x->bhs) || x->len)
		r2t_bad(u, "byte 1 not 80h (F bit alone), or AHS or data", &r);
	else if (r.r2tsn != u->w->r2ts)
		r2t_bad(u, "R2TSN not the next from 0 for the task", &r);
	else if (r.ttt == ISCSI_RSVD_TAG)
		r2t_bad(u, "Target Transfer Tag ffffffffh", &r);
	else if (statsn != s->exp_statsn)
		r2t_bad(u, "StatSN is not the next one", &r);
	else if (r.offset != u->covered)
		r2t_bad(u, "Buffer Offset not where the data not yet sent "
			"or asked for begins", &r);
	else if (!r.length || r.length > u->n->mbl)
		r2t_bad(u, "Desired Data Transfer Length 0 or past "
			"MaxBurstLength", &r);
	else if (r.length > u->w->len - r.offset)
		r2t_bad(u, "past the end of the transfer", &r);
	else if (u->nheld >= u->n->mor2t || u->nheld >= MAX_HELD)
		r2t_bad(u, "more R2Ts outstanding than MaxOutstandingR2T", &r);
	u->w->r2ts++;
	if (u->bad)
		return;
	u->covered += r.length;
	u->held[u->nheld++] = r;
}

static void take_rsp(struct wrun *u, const struct pt_rx *x)
{
	struct pdu_scsi_rsp rsp;
	const uint8_t *sn = x->len >= 2 + 4 ? x->data + 2 : NULL;

	pdu_decode_scsi_rsp(x->bhs, &rsp);
	u->done = u->w->answered = true;
	u->w->status = rsp.status;
	u->w->residual_flags = rsp.flags & (ISCSI_FLAG_OVERFLOW |
					    ISCSI_FLAG_UNDERFLOW);
	if (rsp.response != ISCSI_RSP_COMPLETED)
		PT_CHECK(0, "iSCSI response 0x%02x", rsp.response);
	if (!sn)
		return;
	if (x->len >= 2 + 14 && get_be16(x->data) >= 14 &&
	    (sn[0] & 0x7f) == 0x70) {
		u->w->sense_key = sn[2] & 0x0f;
		u->w->asc = sn[12];
		u->w->ascq = sn[13];
	} else if ((sn[0] & 0x7f) == 0x72) {
		u->w->sense_key = sn[1] & 0x0f;
		u->w->asc = sn[2];
		u->w->ascq = sn[3];
	}
}

/* One PDU of the target for this write. */
static void take(struct pt_sess *s, struct wrun *u, const struct pt_rx *x)
{
	uint8_t op = pdu_opcode(x->bhs);
	uint32_t itt = pdu_itt(x->bhs);

	if (op == ISCSI_OP_NOP_IN && itt == u->ping_itt) {
		u->pinged = true;
	} else if (op == ISCSI_OP_R2T && itt == u->itt) {
		take_r2t(s, u, x);
	} else if (op == ISCSI_OP_SCSI_RSP && itt == u->itt) {
		take_rsp(u, x);
	} else if (op == ISCSI_OP_REJECT) {
		u->w->reject_reason = x->bhs[BHS_B2];
		u->w->reject_has_header = x->len == ISCSI_BHS_LEN &&
			!memcmp(x->data, u->cmd_bhs, ISCSI_BHS_LEN);
	} else {
		u->bad = true;
		PT_CHECK(0, "unexpected opcode 0x%02x ITT 0x%x during the "
			 "write", op, itt);
	}
}

/* Receives until a ping sent now is answered (ping) or one PDU came:
 * what the target sent before the ping's answer is then all in. */
static int collect(struct pt_sess *s, struct wrun *u, bool ping)
{
	struct pt_rx x;

	u->pinged = false;
	u->ping_itt = s->itt++;
	if (ping && pt_send_nop_ping(s, u->ping_itt, NULL, 0, 0) < 0)
		return -1;
	do {
		int rc = pt_recv(s, &x, WAIT_MS);

		if (rc <= 0) {
			PT_CHECK(0, "%s within %d ms", rc < 0 ? "connection "
				 "open" : ping ? "ping answered" : "R2T or "
				 "status", WAIT_MS);
			return -1;
		}
		take(s, u, &x);
		pt_rx_free(&x);
	} while (ping && !u->pinged);
	return 0;
}

static int send_cmd(struct pt_sess *s, struct wrun *u)
{
	struct r2t_write *w = u->w;
	struct pdu_scsi_cmd sc = { 0 };

	if (sn_gt(s->exp_cmdsn, s->cmdsn))
		s->cmdsn = s->exp_cmdsn;
	u->itt = s->itt++;
	sc.final = w->final_anyway || w->unsol == w->imm;
	sc.write = true;
	sc.attr = ISCSI_ATTR_SIMPLE;
	sc.itt = u->itt;
	sc.edtl = w->len;
	sc.cmdsn = s->cmdsn++;
	sc.expstatsn = s->exp_statsn;
	sc.data_len = w->imm;
	sc.cdb[0] = SOP_WRITE_10;
	put_be32(sc.cdb + 2, w->lba);
	put_be16(sc.cdb + 7, (uint16_t)(w->len / PC_BS));
	pdu_encode_scsi_cmd(u->cmd_bhs, &sc);
	pdu_set_data_len(u->cmd_bhs, w->imm);
	if (pt_sess_send(s, u->cmd_bhs, w->buf, w->imm, 0, 0) < 0)
		return -1;
	/* The unsolicited Data-Out: one sequence, no TTT (11.7.4). */
	if (w->unsol > w->imm &&
	    send_data(s, u, ISCSI_RSVD_TAG, w->imm, w->unsol - w->imm,
		      u->n->tmrdsl) < 0)
		return -1;
	/* With F set on the command, the target expects none of it. */
	u->covered = w->final_anyway ? w->imm : w->unsol;
	return 0;
}

/* Answers the oldest R2T. The first one gets the planned fault, in
 * PDUs of 3/4 of its length, so that the PDU that goes past it is one
 * the R2T still owns. */
static int answer_oldest(struct pt_sess *s, struct wrun *u)
{
	struct pdu_r2t r = u->held[0];
	int64_t len = (int64_t)r.length;
	uint32_t seg = u->n->tmrdsl;

	if (u->w->reply_delta && r.r2tsn == 0) {
		len += u->w->reply_delta;
		seg = pt_min(seg, r.length / 4 * 3);
	}
	memmove(u->held, u->held + 1, --u->nheld * sizeof(u->held[0]));
	return send_data(s, u, r.ttt, r.offset, (uint32_t)len, seg);
}

int r2t_write_run(struct pt_sess *s, const struct r2t_keys *n,
		  struct r2t_write *w)
{
	struct wrun u = { .w = w, .n = n };

	w->status = w->sense_key = w->asc = w->ascq = w->reject_reason = -1;
	w->residual_flags = 0;
	w->r2ts = 0;
	w->reject_has_header = w->answered = false;
	if (send_cmd(s, &u) < 0) {
		PT_CHECK(0, "command sent");
		return -1;
	}
	while (!u.done && !u.bad) {
		/* Everything the target would send now is in: the R2Ts
		 * it has outstanding, at most MaxOutstandingR2T. */
		if (collect(s, &u, true) < 0)
			return -1;
		if (u.done || u.bad || (w->expect_reject && w->reject_reason >= 0))
			break;
		if (!u.nheld) {
			if (collect(s, &u, false) < 0)
				return -1;
			continue;
		}
		if (answer_oldest(s, &u) < 0)
			return -1;
	}
	if (w->expect_reject && w->reject_reason < 0)
		PT_CHECK(0, "a Reject for the command");
	if (!w->expect_reject && !u.done)
		return -1;
	if (!u.bad && !w->expect_reject && !w->reply_delta &&
	    !w->final_anyway && w->status == SAM_STAT_GOOD)
		PT_CHECK(u.covered == w->len && !u.nheld, "the R2Ts asked for "
			 "the %u bytes not sent unsolicited, no more",
			 w->len - w->unsol);
	return u.bad ? -1 : 0;
}

/* ---- a read -------------------------------------------------------------- */

/* RFC 7143 11.7: one Data-In PDU of the read, given what came before. */
static bool data_in_ok(const struct pt_rx *x, const struct r2t_keys *n,
		       uint32_t len, uint32_t got, uint32_t datasn,
		       uint32_t *in_seq)
{
	struct pdu_data_in d;

	pdu_decode_data_in(x->bhs, &d);
	*in_seq += x->len;
	if (d.datasn != datasn || d.offset != got || !x->len ||
	    x->len > OUR_MRDSL || x->len > len - got || d.ack ||
	    *in_seq > n->mbl || (got + x->len == len && !d.final)) {
		PT_CHECK(0, "Data-In DataSN %u (want %u) offset %u (want %u) "
			 "length %u, F=%d A=%d, %u bytes in its sequence "
			 "(MaxBurstLength %u)", d.datasn, datasn, d.offset,
			 got, x->len, d.final, d.ack, *in_seq, n->mbl);
		return false;
	}
	if (d.final)
		*in_seq = 0;
	return true;
}

void r2t_read_check(struct pt_sess *s, const struct r2t_keys *n,
		    uint32_t lba, uint32_t len, const uint8_t *want)
{
	uint8_t *got = calloc(1, len);
	struct pdu_scsi_cmd sc = { 0 };
	uint8_t bhs[ISCSI_BHS_LEN];
	uint32_t itt = s->itt++, in = 0, datasn = 0, in_seq = 0;
	int status = -1;
	bool ok = got != NULL;

	if (sn_gt(s->exp_cmdsn, s->cmdsn))
		s->cmdsn = s->exp_cmdsn;
	sc.final = sc.read = true;
	sc.attr = ISCSI_ATTR_SIMPLE;
	sc.itt = itt;
	sc.edtl = len;
	sc.cmdsn = s->cmdsn++;
	sc.expstatsn = s->exp_statsn;
	sc.cdb[0] = SOP_READ_10;
	put_be32(sc.cdb + 2, lba);
	put_be16(sc.cdb + 7, (uint16_t)(len / PC_BS));
	pdu_encode_scsi_cmd(bhs, &sc);
	pdu_set_data_len(bhs, 0);
	ok = ok && pt_sess_send(s, bhs, NULL, 0, 0, 0) == 0;
	while (ok && status < 0) {
		struct pt_rx x;

		if (pt_recv(s, &x, WAIT_MS) <= 0) {
			ok = false;
			break;
		}
		if (pdu_itt(x.bhs) != itt) {
			ok = false;
		} else if (pdu_opcode(x.bhs) == ISCSI_OP_DATA_IN) {
			ok = data_in_ok(&x, n, len, in, datasn++, &in_seq);
			if (ok)
				memcpy(got + in, x.data, x.len);
			in += x.len;
			if (x.bhs[BHS_FLAGS] & ISCSI_FLAG_STATUS)
				status = x.bhs[BHS_B3];
		} else if (pdu_opcode(x.bhs) == ISCSI_OP_SCSI_RSP) {
			status = x.bhs[BHS_B3];
		} else {
			ok = false;
		}
		pt_rx_free(&x);
	}
	PT_CHECK(ok && status == SAM_STAT_GOOD && in == len &&
		 !memcmp(got, want, len), "%u bytes read back as written "
		 "(status %d, %u bytes of Data-In)", len, status, in);
	free(got);
}
