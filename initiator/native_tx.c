/*
 * Send side of the native initiator. PDUs are generated lazily into a ring
 * (SCSI Commands once the CmdSN window allows, Data-Out runs for
 * unsolicited data and R2Ts) and leave in as few sendmsg() calls as the
 * socket allows; payloads are never copied: the iovecs point into the
 * I/O buffers, and a command is reported done only once no queued PDU
 * still points into its buffer.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include "initiator/native_sess.h"
#include "tcq/compiler.h"
#include "tcq/crc32c.h"
#include "tcq/pdu.h"

#define TX_CTRL_RESERVE 8	/* ring room kept for NOP-Out / Logout */
#define TX_MAX_IOV 1024

static struct native_txpdu *tx_next_slot(struct engine *e)
{
	return &e->tx[(e->tx_head + e->tx_count) % e->tx_cap];
}

/* Completes a slot whose BHS is in t->hdr: digests, padding, queued. */
static void tx_commit(struct engine *e, struct native_txpdu *t,
		      const uint8_t *data, uint32_t dlen,
		      struct native_cmd *cmd, void *owned)
{
	uint32_t pad = pdu_pad(dlen);

	t->hlen = ISCSI_BHS_LEN;
	if (e->p.header_digest) {
		native_put_le32(t->hdr + ISCSI_BHS_LEN,
				crc32c(t->hdr, ISCSI_BHS_LEN));
		t->hlen += ISCSI_DIGEST_LEN;
	}
	memset(t->trailer, 0, pad);
	t->tlen = (uint8_t)pad;
	if (e->p.data_digest && dlen) {
		uint32_t crc = crc32c_update(0xffffffffu, data, dlen);

		crc = ~crc32c_update(crc, t->trailer, pad);
		native_put_le32(t->trailer + pad, crc);
		t->tlen += ISCSI_DIGEST_LEN;
	}
	t->data = data;
	t->dlen = dlen;
	t->owned = owned;
	t->cmd = cmd;
	if (cmd)
		cmd->tx_refs++;
	e->tx_count++;
}

int native_tx_push_ctrl(struct engine *e, const uint8_t *bhs,
			const void *data, uint32_t dlen, void *owned)
{
	struct native_txpdu *t;

	if (e->tx_count == e->tx_cap) {
		free(owned);
		return -ENOBUFS;
	}
	t = tx_next_slot(e);
	memcpy(t->hdr, bhs, ISCSI_BHS_LEN);
	tx_commit(e, t, data, dlen, NULL, owned);
	return 0;
}

static void gen_cmd(struct engine *e, struct native_cmd *c)
{
	struct native_txpdu *t = tx_next_slot(e);
	struct pdu_scsi_cmd p;
	uint32_t imm = 0, unsol_end = 0;

	if (c->write) {
		if (e->p.immediate_data)
			imm = MIN(MIN(c->edtl, e->p.first_burst), e->p.max_send_dsl);
		unsol_end = e->p.initial_r2t ? imm : MIN(c->edtl, e->p.first_burst);
	}
	memset(&p, 0, sizeof(p));
	p.final = unsol_end <= imm;	/* no unsolicited Data-Out follows */
	p.read = c->read;
	p.write = c->write;
	p.attr = c->attr;
	p.data_len = imm;
	p.lun = e->lun_raw;
	p.itt = c->itt;
	p.edtl = c->edtl;
	p.cmdsn = e->cmdsn++;
	p.expstatsn = e->exp_statsn;
	memcpy(p.cdb, c->cdb, 16);
	pdu_encode_scsi_cmd(t->hdr, &p);
	tx_commit(e, t, imm ? c->io->buf : NULL, imm, imm ? c : NULL, NULL);
	if (unsol_end > imm) {
		struct native_stream *s = &c->streams[0];

		s->ttt = ISCSI_RSVD_TAG;
		s->offset = imm;
		s->end = unsol_end;
		s->datasn = 0;
		native_stream_push(e, s);
	}
}

static void gen_data_out(struct engine *e, struct native_stream *s)
{
	struct native_txpdu *t = tx_next_slot(e);
	struct native_cmd *c = s->cmd;
	uint32_t len = MIN(s->end - s->offset, e->p.max_send_dsl);
	struct pdu_data_out p = {
		.final = s->offset + len == s->end,
		.data_len = len, .lun = e->lun_raw, .itt = c->itt,
		.ttt = s->ttt, .expstatsn = e->exp_statsn,
		.datasn = s->datasn++, .offset = s->offset,
	};

	pdu_encode_data_out(t->hdr, &p);
	tx_commit(e, t, (const uint8_t *)c->io->buf + s->offset, len, c, NULL);
	s->offset += len;
	if (s->offset == s->end) {
		e->st_head = s->next;
		if (!e->st_head)
			e->st_tail = NULL;
		s->active = false;
	}
}

static bool window_open(struct engine *e)
{
	return sn_le(e->cmdsn, e->max_cmdsn);
}

static void tx_fill(struct engine *e)
{
	while (e->tx_count + TX_CTRL_RESERVE < e->tx_cap) {
		if (e->st_head)
			gen_data_out(e, e->st_head);
		else if (e->pend_head >= 0 && window_open(e))
			gen_cmd(e, native_pend_pop(e));
		else
			break;
	}
}

bool native_sess_want_tx(struct engine *e)
{
	return e->tx_count || e->st_head ||
	       (e->pend_head >= 0 && window_open(e));
}

static void iov_add(struct iovec *iov, int *n, const void *p, size_t len,
		    size_t *skip)
{
	if (*skip >= len) {
		*skip -= len;
		return;
	}
	iov[*n].iov_base = (uint8_t *)p + *skip;
	iov[*n].iov_len = len - *skip;
	*skip = 0;
	(*n)++;
}

/* Retires the first n bytes of the ring. */
static void tx_consume(struct engine *e, size_t n)
{
	size_t left = n + e->tx_off;

	while (e->tx_count) {
		struct native_txpdu *t = &e->tx[e->tx_head];
		size_t total = (size_t)t->hlen + t->dlen + t->tlen;
		struct native_cmd *c = t->cmd;

		if (left < total) {
			e->tx_off = left;
			return;
		}
		left -= total;
		free(t->owned);
		t->owned = NULL;
		t->cmd = NULL;
		e->tx_head = (e->tx_head + 1) % e->tx_cap;
		e->tx_count--;
		if (c && --c->tx_refs == 0 && c->done_pending)
			native_cmd_release(e, c);
	}
	e->tx_off = 0;
}

/* Sends until the ring is empty or the socket is full. */
static void tx_flush(struct engine *e)
{
	struct iovec iov[TX_MAX_IOV];

	while (e->tx_count && !e->failed) {
		size_t skip = e->tx_off;
		struct msghdr mh;
		ssize_t w;
		int n = 0;

		for (uint32_t i = 0; i < e->tx_count && n + 3 <= TX_MAX_IOV; i++) {
			struct native_txpdu *t = &e->tx[(e->tx_head + i) % e->tx_cap];

			iov_add(iov, &n, t->hdr, t->hlen, &skip);
			if (t->dlen)
				iov_add(iov, &n, t->data, t->dlen, &skip);
			if (t->tlen)
				iov_add(iov, &n, t->trailer, t->tlen, &skip);
		}
		memset(&mh, 0, sizeof(mh));
		mh.msg_iov = iov;
		mh.msg_iovlen = (size_t)n;
		w = sendmsg(e->fd, &mh, MSG_NOSIGNAL);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			if (errno != EAGAIN && errno != EWOULDBLOCK)
				native_sess_fail(e, -errno);
			return;
		}
		tx_consume(e, (size_t)w);
	}
}

int native_sess_tx(struct engine *e)
{
	while (!e->failed) {
		tx_fill(e);
		if (!e->tx_count)
			break;
		tx_flush(e);
		if (e->tx_count)
			break;	/* socket full: wait for POLLOUT */
	}
	return e->failed;
}

int native_sess_logout(struct engine *e)
{
	struct pdu_logout_req r = {
		.immediate = true, .reason = ISCSI_LOGOUT_CLOSE_SESSION,
		.itt = NATIVE_LOGOUT_ITT, .cid = 0, .cmdsn = e->cmdsn,
		.expstatsn = e->exp_statsn,
	};
	uint8_t bhs[ISCSI_BHS_LEN];

	pdu_encode_logout_req(bhs, &r);
	return native_tx_push_ctrl(e, bhs, NULL, 0, NULL);
}
