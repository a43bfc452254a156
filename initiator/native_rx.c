/*
 * Receive side of the native initiator. One buffer is filled with large
 * reads and parsed in place; a Data-In payload goes to the I/O buffer
 * (what already sits in the receive buffer is copied, the rest is read
 * there directly with readv). Every length and sequence number from the
 * target is checked; a violation ends the connection (ERL 0).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>
#include "initiator/native_sess.h"
#include "tcq/compiler.h"
#include "tcq/crc32c.h"
#include "tcq/log.h"
#include "tcq/pdu.h"

#define RX_READ_BUDGET 16	/* reads per service call */
#define RX_MAX_HDR (ISCSI_BHS_LEN + 255 * 4 + ISCSI_DIGEST_LEN)
#define SAM_CHECK_CONDITION 0x02

static void proto_err(struct engine *e, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void proto_err(struct engine *e, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	log_err("native: protocol error from target: %s", msg);
	native_sess_fail(e, -EPROTO);
}

static struct native_cmd *cmd_lookup(struct engine *e, uint32_t itt)
{
	uint32_t idx = itt & 0xffff;
	struct native_cmd *c;

	if (idx >= e->ncmds)
		return NULL;
	c = &e->cmds[idx];
	if (!c->busy || c->done_pending || c->itt != itt)
		return NULL;
	return c;
}

/* RFC 7143 4.2.2.1: ignore a MaxCmdSN below ExpCmdSN - 1; never go back. */
static void sn_update(struct engine *e, uint32_t expcmdsn, uint32_t maxcmdsn)
{
	if (sn_lt(maxcmdsn, expcmdsn - 1))
		return;
	if (sn_gt(expcmdsn, e->exp_cmdsn))
		e->exp_cmdsn = expcmdsn;
	if (sn_gt(maxcmdsn, e->max_cmdsn))
		e->max_cmdsn = maxcmdsn;
}

static void statsn_seen(struct engine *e, uint32_t statsn)
{
	if (sn_le(e->exp_statsn, statsn))
		e->exp_statsn = statsn + 1;
}

/* Sense data (fixed or descriptor format) into the bench_io. */
static void sense_fill(struct bench_io *io, const uint8_t *d, uint32_t dlen)
{
	uint32_t slen;
	const uint8_t *s = d + 2;
	uint8_t code;

	if (dlen < 2)
		return;
	slen = get_be16(d);
	if (slen > dlen - 2)
		slen = dlen - 2;
	if (slen < 1)
		return;
	code = s[0] & 0x7f;
	if ((code == 0x70 || code == 0x71) && slen >= 3) {
		io->sense_key = s[2] & 0x0f;
		if (slen >= 14) {
			io->asc = s[12];
			io->ascq = s[13];
		}
	} else if ((code == 0x72 || code == 0x73) && slen >= 4) {
		io->sense_key = s[1] & 0x0f;
		io->asc = s[2];
		io->ascq = s[3];
	}
}

/* A GOOD status that moved less data than asked is a failed I/O for a
 * benchmark: report it rather than count it. */
static int good_status(struct engine *e, struct native_cmd *c, uint8_t flags,
		       uint32_t residual)
{
	bool short_io = (flags & (ISCSI_FLAG_UNDERFLOW | ISCSI_FLAG_OVERFLOW)) &&
			residual;

	if (c->read && c->received != c->edtl &&
	    !(flags & ISCSI_FLAG_UNDERFLOW && c->received + residual == c->edtl))
		short_io = true;
	if (!short_io)
		return 0;
	if (!e->warned_residual) {
		log_warn("native: GOOD status with residual %u (flags 0x%02x, %u of %u bytes read)",
			 residual, flags, c->received, c->edtl);
		e->warned_residual = true;
	}
	return -EIO;
}

static void on_scsi_rsp(struct engine *e, const uint8_t *bhs,
			const uint8_t *data, uint32_t dlen)
{
	struct pdu_scsi_rsp r;
	struct native_cmd *c;
	int status;

	pdu_decode_scsi_rsp(bhs, &r);
	sn_update(e, r.expcmdsn, r.maxcmdsn);
	statsn_seen(e, r.statsn);
	c = cmd_lookup(e, r.itt);
	if (!c) {
		log_warn("native: SCSI Response for unknown ITT 0x%08x ignored", r.itt);
		return;
	}
	if (r.response != ISCSI_RSP_COMPLETED) {
		status = -EIO;
	} else {
		status = r.status;
		if (status == SAM_CHECK_CONDITION)
			sense_fill(c->io, data, dlen);
		else if (status == 0)
			status = good_status(e, c, r.flags, r.residual);
	}
	native_cmd_complete(e, c, status, r.statsn);
}

/* Data-In header: validates it and points the receive at the buffer.
 * Returns 1 when the payload goes to the I/O buffer, 0 to discard it. */
static int data_in_start(struct engine *e, const uint8_t *bhs, uint32_t dlen)
{
	struct pdu_data_in d;
	struct native_cmd *c;

	pdu_decode_data_in(bhs, &d);
	c = cmd_lookup(e, d.itt);
	if (!c) {
		log_warn("native: Data-In for unknown ITT 0x%08x discarded", d.itt);
		return 0;
	}
	if (!c->read) {
		proto_err(e, "Data-In for a command without the R bit (ITT 0x%08x)", d.itt);
		return -1;
	}
	if (d.datasn != c->next_datasn) {
		proto_err(e, "Data-In DataSN %u, expected %u (ITT 0x%08x)",
			  d.datasn, c->next_datasn, d.itt);
		return -1;
	}
	if (d.offset != c->received) {
		proto_err(e, "Data-In offset %u, expected %u (DataPDUInOrder, ITT 0x%08x)",
			  d.offset, c->received, d.itt);
		return -1;
	}
	if (dlen > c->edtl - d.offset) {
		proto_err(e, "Data-In offset %u + length %u beyond the transfer length %u",
			  d.offset, dlen, c->edtl);
		return -1;
	}
	e->rx_cmd = c;
	e->d_dst = (uint8_t *)c->io->buf + d.offset;
	e->d_len = dlen;
	e->d_got = 0;
	e->t_len = pdu_pad(dlen) + (e->p.data_digest ? ISCSI_DIGEST_LEN : 0);
	e->t_got = 0;
	return 1;
}

/* Data-In fully received (payload, if any, is in place). */
static void data_in_end(struct engine *e, struct native_cmd *c, uint32_t dlen)
{
	struct pdu_data_in d;
	int status;

	pdu_decode_data_in(e->cur, &d);
	sn_update(e, d.expcmdsn, d.maxcmdsn);
	c->received += dlen;
	c->next_datasn++;
	if (!d.status_present)
		return;
	statsn_seen(e, d.statsn);
	status = d.status;
	if (status == 0)
		status = good_status(e, c, d.flags, d.residual);
	native_cmd_complete(e, c, status, d.statsn);
}

static void on_r2t(struct engine *e, const uint8_t *bhs)
{
	struct pdu_r2t r;
	struct native_cmd *c;
	struct native_stream *s = NULL;
	uint32_t active = 0;

	pdu_decode_r2t(bhs, &r);
	sn_update(e, r.expcmdsn, r.maxcmdsn);
	c = cmd_lookup(e, r.itt);
	if (!c) {
		log_warn("native: R2T for unknown ITT 0x%08x ignored", r.itt);
		return;
	}
	if (!c->write)
		return proto_err(e, "R2T for a command without the W bit");
	if (r.length == 0 || r.offset > c->edtl ||
	    r.length > c->edtl - r.offset)
		return proto_err(e, "R2T offset %u length %u outside the transfer length %u",
				 r.offset, r.length, c->edtl);
	if (r.length > e->p.max_burst)
		return proto_err(e, "R2T length %u above MaxBurstLength %u",
				 r.length, e->p.max_burst);
	for (int i = 1; i <= NATIVE_MAX_R2T; i++) {
		if (c->streams[i].active)
			active++;
		else if (!s)
			s = &c->streams[i];
	}
	if (!s || active >= e->p.max_outstanding_r2t)
		return proto_err(e, "more than MaxOutstandingR2T=%u R2Ts for ITT 0x%08x",
				 e->p.max_outstanding_r2t, r.itt);
	s->ttt = r.ttt;
	s->offset = r.offset;
	s->end = r.offset + r.length;
	s->datasn = 0;
	native_stream_push(e, s);
}

static void on_nop_in(struct engine *e, const uint8_t *bhs,
		      const uint8_t *data, uint32_t dlen)
{
	struct pdu_nop_in n;
	struct pdu_nop_out o;
	uint8_t out[ISCSI_BHS_LEN];
	void *copy = NULL;

	pdu_decode_nop_in(bhs, &n);
	sn_update(e, n.expcmdsn, n.maxcmdsn);
	if (n.itt != ISCSI_RSVD_TAG)
		statsn_seen(e, n.statsn);	/* answer to a ping of ours */
	if (n.ttt == ISCSI_RSVD_TAG)
		return;
	/* The target pings: answer with its TTT and echo its data. */
	log_debug("native: NOP-In ping TTT 0x%08x, %u data bytes", n.ttt, dlen);
	if (dlen) {
		copy = malloc(dlen);
		if (!copy)
			return native_sess_fail(e, -ENOMEM);
		memcpy(copy, data, dlen);
	}
	memset(&o, 0, sizeof(o));
	o.immediate = true;
	o.data_len = dlen;
	o.lun = n.lun;
	o.itt = ISCSI_RSVD_TAG;
	o.ttt = n.ttt;
	o.cmdsn = e->cmdsn;
	o.expstatsn = e->exp_statsn;
	pdu_encode_nop_out(out, &o);
	if (native_tx_push_ctrl(e, out, copy, dlen, copy))
		log_warn("native: send ring full, NOP-In ping not answered");
}

static void on_reject(struct engine *e, const uint8_t *bhs,
		      const uint8_t *data, uint32_t dlen)
{
	struct pdu_reject r;
	struct native_cmd *c;
	uint32_t itt;

	pdu_decode_reject(bhs, &r);
	statsn_seen(e, r.statsn);
	sn_update(e, r.expcmdsn, r.maxcmdsn);
	if (dlen < ISCSI_BHS_LEN) {
		log_err("native: Reject (reason 0x%02x) without the rejected header",
			r.reason);
		return;
	}
	itt = pdu_itt(data);
	log_err("native: target rejected a %s PDU, ITT 0x%08x, reason 0x%02x",
		pdu_opcode_name(pdu_opcode(data)), itt, r.reason);
	c = cmd_lookup(e, itt);
	if (c)
		native_cmd_complete(e, c, -EIO, r.statsn);
}

static void on_async(struct engine *e, const uint8_t *bhs)
{
	struct pdu_async a;

	pdu_decode_async(bhs, &a);
	statsn_seen(e, a.statsn);
	sn_update(e, a.expcmdsn, a.maxcmdsn);
	log_warn("native: Async Message event %u (vcode %u, params %u %u %u)",
		 a.event, a.vcode, a.param1, a.param2, a.param3);
}

static void rx_dispatch(struct engine *e, const uint8_t *bhs,
			const uint8_t *data, uint32_t dlen)
{
	switch (pdu_opcode(bhs)) {
	case ISCSI_OP_SCSI_RSP:
		on_scsi_rsp(e, bhs, data, dlen);
		break;
	case ISCSI_OP_DATA_IN: {
		/* Only a Data-In whose payload is discarded (unknown ITT) or
		 * empty gets here. */
		struct native_cmd *c = cmd_lookup(e, pdu_itt(bhs));

		if (!dlen && c) {
			if (!c->read)
				return proto_err(e, "Data-In for a write");
			if (get_be32(bhs + BHS_F36) != c->next_datasn)
				return proto_err(e, "Data-In DataSN out of order");
			data_in_end(e, c, 0);
		}
		break;
	}
	case ISCSI_OP_R2T:
		on_r2t(e, bhs);
		break;
	case ISCSI_OP_NOP_IN:
		on_nop_in(e, bhs, data, dlen);
		break;
	case ISCSI_OP_REJECT:
		on_reject(e, bhs, data, dlen);
		break;
	case ISCSI_OP_ASYNC_MSG:
		on_async(e, bhs);
		break;
	case ISCSI_OP_LOGOUT_RSP: {
		struct pdu_logout_rsp l;

		pdu_decode_logout_rsp(bhs, &l);
		statsn_seen(e, l.statsn);
		if (l.response != ISCSI_LOGOUT_RSP_SUCCESS)
			log_warn("native: Logout response %u", l.response);
		e->logged_out = true;
		break;
	}
	default:
		log_warn("native: unexpected %s PDU ignored",
			 pdu_opcode_name(pdu_opcode(bhs)));
		statsn_seen(e, get_be32(bhs + BHS_STATSN));
		break;
	}
}

static bool digest_ok(const uint8_t *data, uint32_t dlen, const uint8_t *pad,
		      uint32_t padlen, const uint8_t *dig)
{
	uint32_t crc = crc32c_update(0xffffffffu, data, dlen);

	crc = ~crc32c_update(crc, pad, padlen);
	return crc == native_get_le32(dig);
}

/* Handles every complete PDU (or PDU part) in the receive buffer. */
static void rx_parse(struct engine *e)
{
	while (!e->failed) {
		size_t avail = e->rx_tail - e->rx_head;
		uint8_t *p = e->rx + e->rx_head;

		switch (e->rx_phase) {
		case RX_DIRECT: {
			size_t take = MIN(avail, (size_t)(e->d_len - e->d_got));

			memcpy(e->d_dst + e->d_got, p, take);
			e->d_got += (uint32_t)take;
			e->rx_head += take;
			p += take;
			avail -= take;
			take = MIN(avail, (size_t)(e->t_len - e->t_got));
			memcpy(e->trailer + e->t_got, p, take);
			e->t_got += (uint32_t)take;
			e->rx_head += take;
			if (e->d_got < e->d_len || e->t_got < e->t_len)
				return;
			if (e->p.data_digest) {
				uint32_t pad = pdu_pad(e->d_len);

				if (!digest_ok(e->d_dst, e->d_len, e->trailer,
					       pad, e->trailer + pad))
					return proto_err(e, "Data-In data digest error (ITT 0x%08x)",
							 pdu_itt(e->cur));
			}
			e->rx_phase = RX_HDR;
			data_in_end(e, e->rx_cmd, e->d_len);
			break;
		}
		case RX_HDR: {
			size_t hlen;
			uint32_t dlen;
			const char *why;
			int rc;

			if (avail < ISCSI_BHS_LEN)
				return;
			hlen = ISCSI_BHS_LEN + pdu_ahs_len(p) +
			       (e->p.header_digest ? ISCSI_DIGEST_LEN : 0);
			if (avail < hlen)
				return;
			if (e->p.header_digest &&
			    crc32c(p, hlen - ISCSI_DIGEST_LEN) !=
			    native_get_le32(p + hlen - ISCSI_DIGEST_LEN))
				return proto_err(e, "header digest error on %s",
						 pdu_opcode_name(pdu_opcode(p)));
			if (pdu_check_target_bhs(p, &why))
				return proto_err(e, "bad %s header: %s",
						 pdu_opcode_name(pdu_opcode(p)), why);
			dlen = pdu_data_len(p);
			if (dlen > e->p.max_recv_dsl)
				return proto_err(e, "%s with %u data bytes, above our MaxRecvDataSegmentLength %u",
						 pdu_opcode_name(pdu_opcode(p)),
						 dlen, e->p.max_recv_dsl);
			memcpy(e->cur, p, ISCSI_BHS_LEN);
			e->rx_head += hlen;
			if (pdu_opcode(p) == ISCSI_OP_DATA_IN && dlen) {
				rc = data_in_start(e, e->cur, dlen);
				if (rc < 0)
					return;
				if (rc > 0) {
					e->rx_phase = RX_DIRECT;
					break;
				}
			}
			e->seg_len = dlen + pdu_pad(dlen) +
				     (e->p.data_digest && dlen ? ISCSI_DIGEST_LEN : 0);
			e->rx_phase = RX_SEG;
			break;
		}
		case RX_SEG: {
			uint32_t dlen = pdu_data_len(e->cur);

			if (avail < e->seg_len)
				return;
			if (e->p.data_digest && dlen &&
			    !digest_ok(p, dlen, p + dlen, pdu_pad(dlen),
				       p + dlen + pdu_pad(dlen)))
				return proto_err(e, "data digest error on %s",
						 pdu_opcode_name(pdu_opcode(e->cur)));
			e->rx_head += e->seg_len;
			e->rx_phase = RX_HDR;
			rx_dispatch(e, e->cur, p, dlen);
			break;
		}
		}
	}
}

/* One read (or readv straight into a Data-In buffer); *drained is set
 * when it returned less than asked, so the socket is empty for now. */
static ssize_t rx_read(struct engine *e, bool *drained)
{
	ssize_t n;

	if (e->rx_head == e->rx_tail)
		e->rx_head = e->rx_tail = 0;
	if (e->rx_phase == RX_DIRECT) {
		/* rx_parse consumed the buffer, so it is empty here. */
		struct iovec iov[3];
		int cnt = 0;
		size_t a;

		if (e->d_got < e->d_len) {
			iov[cnt].iov_base = e->d_dst + e->d_got;
			iov[cnt++].iov_len = e->d_len - e->d_got;
		}
		if (e->t_got < e->t_len) {
			iov[cnt].iov_base = e->trailer + e->t_got;
			iov[cnt++].iov_len = e->t_len - e->t_got;
		}
		iov[cnt].iov_base = e->rx + e->rx_tail;
		iov[cnt++].iov_len = e->rx_cap - e->rx_tail;
		a = 0;
		for (int i = 0; i < cnt; i++)
			a += iov[i].iov_len;
		n = readv(e->fd, iov, cnt);
		if (n <= 0)
			return n;
		*drained = (size_t)n < a;
		a = MIN((size_t)n, (size_t)(e->d_len - e->d_got));
		e->d_got += (uint32_t)a;
		n -= (ssize_t)a;
		a = MIN((size_t)n, (size_t)(e->t_len - e->t_got));
		e->t_got += (uint32_t)a;
		n -= (ssize_t)a;
		e->rx_tail += (size_t)n;
		return 1;
	}
	{
		size_t need = e->rx_phase == RX_SEG ? e->seg_len : RX_MAX_HDR;

		if (e->rx_head && (e->rx_cap - e->rx_head < need ||
				   e->rx_cap - e->rx_tail < 4096)) {
			memmove(e->rx, e->rx + e->rx_head, e->rx_tail - e->rx_head);
			e->rx_tail -= e->rx_head;
			e->rx_head = 0;
		}
	}
	n = read(e->fd, e->rx + e->rx_tail, e->rx_cap - e->rx_tail);
	if (n > 0) {
		*drained = (size_t)n < e->rx_cap - e->rx_tail;
		e->rx_tail += (size_t)n;
	}
	return n;
}

int native_sess_rx(struct engine *e)
{
	rx_parse(e);
	for (int i = 0; i < RX_READ_BUDGET && !e->failed; i++) {
		bool drained = false;
		ssize_t n = rx_read(e, &drained);

		if (n == 0) {
			if (e->logged_out)
				e->failed = -ECONNRESET;	/* expected close */
			else
				native_sess_fail(e, -ECONNRESET);
			break;
		}
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno != EAGAIN && errno != EWOULDBLOCK)
				native_sess_fail(e, -errno);
			break;
		}
		rx_parse(e);
		/* Another read would only say EAGAIN; poll() tells us when
		 * more arrives. */
		if (drained)
			break;
	}
	return e->failed;
}
