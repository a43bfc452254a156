/*
 * A connection's receive path (conn.h): bytes land in a 64 KiB ring
 * (rx.buf) with one read() per wakeup; headers are parsed in place. A data
 * segment goes where the session layer says (a command's buffer at its
 * offset, or the scratch buffer for control PDUs); what the ring already
 * holds is copied, and the rest of a large segment is read with readv()
 * straight into its destination, the ring taking the bytes that follow.
 * Digests are checked here; a digest error ends the connection (ERL 0).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/uio.h>
#include <unistd.h>

#include "tcq/compiler.h"
#include "tcq/crc32c.h"
#include "tcq/log.h"
#include "tcq/pdu.h"
#include "target/conn.h"
#include "target/conn_priv.h"
#include "target/login.h"
#include "target/session.h"

enum { RX_HDR, RX_DATA, RX_TRAILER };

#define RX_BUDGET (4u << 20)	/* bytes read per wakeup before yielding */

static uint32_t hdr_len(const struct conn *c, const uint8_t *bhs)
{
	return ISCSI_BHS_LEN + pdu_ahs_len(bhs) +
	       (c->params.header_digest ? 4 : 0);
}

static bool scratch_reserve(struct conn *c, uint32_t len)
{
	if (len <= c->rx.scratch_cap)
		return true;
	uint8_t *p = realloc(c->rx.scratch, len);
	if (!p)
		return false;
	c->rx.scratch = p;
	c->rx.scratch_cap = len;
	return true;
}

/* A full header is at rxbuf[head]; decides where its data segment goes. */
static int conn_rx_header(struct conn *c)
{
	uint8_t *h = c->rx.buf + c->rx.head;
	uint32_t ahs = pdu_ahs_len(h);
	uint32_t dlen = pdu_data_len(h);

	memcpy(c->rx.bhs, h, ISCSI_BHS_LEN);
	if (c->params.header_digest) {
		uint32_t want = crc32c(h, ISCSI_BHS_LEN + ahs);
		uint32_t got;

		memcpy(&got, h + ISCSI_BHS_LEN + ahs, 4);
		if (want != got) {
			/* ERL 0: a header digest error leaves the framing
			 * unknown; the connection is dropped. */
			conn_close(c, "header digest error");
			return -1;
		}
	}
	c->rx.ahs = ahs ? h + ISCSI_BHS_LEN : NULL;
	c->rx.ahs_len = ahs;
	c->rx.data_len = dlen;
	c->rx.data_got = 0;
	c->rx.discard = false;
	c->rx.dst = NULL;
	c->rx.trailer_len = pdu_pad(dlen) +
			    (dlen && c->params.data_digest ? 4 : 0);
	c->rx.trailer_got = 0;

	if (dlen > c->params.max_recv_dsl) {
		log_warn("%s: %s data segment of %u bytes exceeds "
			 "MaxRecvDataSegmentLength %u", c->peer_text,
			 pdu_opcode_name(pdu_opcode(h)), dlen,
			 c->params.max_recv_dsl);
		conn_send_reject(c, h, ISCSI_REJECT_PROTOCOL_ERROR);
		conn_close(c, "oversized data segment");
		return -1;
	}
	if (c->state == CONN_FFP) {
		int err = 0;
		bool discard = false;
		uint8_t *dst = sess_rx_header(c, c->rx.bhs, &discard, &err);

		if (err < 0 || c->state == CONN_CLOSING)
			return -1;
		c->rx.discard = discard;
		c->rx.dst = dst;
	}
	if (!c->rx.dst && dlen) {
		if (!scratch_reserve(c, dlen)) {
			conn_close(c, "out of memory");
			return -1;
		}
		c->rx.dst = c->rx.scratch;
	}
	return 0;
}

/* The whole PDU is in: hand it on. */
static void conn_rx_complete(struct conn *c)
{
	uint8_t *data = c->rx.dst;
	uint32_t len = c->rx.data_len;

	if (len && c->params.data_digest) {
		uint32_t pad = pdu_pad(len);
		uint32_t crc = crc32c_update(0xffffffffu, data, len);
		uint32_t got;

		crc = crc32c_update(crc, c->rx.trailer, pad);
		memcpy(&got, c->rx.trailer + pad, 4);
		if (~crc != got) {
			/* ERL 0: the command is not executed; drop. */
			conn_close(c, "data digest error");
			return;
		}
	}
	c->last_rx_ns = c->r->now_ns ? c->r->now_ns : reactor_now_ns();
	if (c->rx.discard)
		return;
	if (c->state == CONN_LOGIN)
		login_rx(c, c->rx.bhs, data, len);
	else if (c->state == CONN_FFP)
		sess_rx_pdu(c, c->rx.bhs, data, len);
}

/* Moves what the ring holds of one part of the PDU (len bytes, *got of
 * them in already) to dst; true once the part is whole. */
static inline bool rx_take(struct conn_rx *rx, uint8_t *dst, uint32_t *got,
			   uint32_t len)
{
	uint32_t n;

	if (*got == len)	/* most PDUs have no data, most no trailer */
		return true;
	n = MIN(len - *got, rx->tail - rx->head);

	if (n && dst)
		memcpy(dst + *got, rx->buf + rx->head, n);
	rx->head += n;
	*got += n;
	return *got == len;
}

/* Parses what rx.buf holds; returns -1 when the connection went away. */
static int conn_rx_parse(struct conn *c)
{
	for (;;) {
		uint32_t avail = c->rx.tail - c->rx.head;

		if (c->state == CONN_CLOSING)
			return -1;
		if (c->state == CONN_LOGGED_OUT) {
			c->rx.head = c->rx.tail;	/* ignore after logout */
			return 0;
		}
		switch (c->rx.state) {
		case RX_HDR: {
			uint32_t need;

			if (avail < ISCSI_BHS_LEN)
				return 0;
			need = hdr_len(c, c->rx.buf + c->rx.head);
			if (avail < need)
				return 0;
			if (conn_rx_header(c) < 0)
				return -1;
			c->rx.head += need;
			c->rx.state = RX_DATA;
			break;
		}
		case RX_DATA:
			if (!rx_take(&c->rx, c->rx.dst, &c->rx.data_got,
				     c->rx.data_len))
				return 0;
			c->rx.state = RX_TRAILER;
			break;
		case RX_TRAILER:
			if (!rx_take(&c->rx, c->rx.trailer, &c->rx.trailer_got,
				     c->rx.trailer_len))
				return 0;
			c->rx.state = RX_HDR;
			conn_rx_complete(c);
			break;
		}
	}
}

static void conn_rx_compact(struct conn *c)
{
	uint32_t avail = c->rx.tail - c->rx.head;

	if (c->rx.head == 0)
		return;
	if (avail)
		memmove(c->rx.buf, c->rx.buf + c->rx.head, avail);
	c->rx.head = 0;
	c->rx.tail = avail;
}

void conn_rx_ready(struct reactor *r, uint32_t events, void *arg)
{
	struct conn *c = arg;
	uint32_t budget = RX_BUDGET;

	if (events & EPOLLOUT) {
		conn_tx_flush(&c->tx.flush);
		if (c->state == CONN_CLOSING)
			return;
	}
	if (!(events & (EPOLLIN | EPOLLERR | EPOLLHUP)))
		return;
	while (budget && c->state != CONN_CLOSING &&
	       c->state != CONN_LOGGED_OUT) {
		ssize_t n;
		size_t want;

		conn_rx_compact(c);
		if (c->rx.state == RX_DATA && c->rx.head == c->rx.tail &&
		    c->rx.dst && c->rx.data_len - c->rx.data_got > 4096) {
			/* Large remainder: read it straight into place. */
			struct iovec iov[2] = {
				{ c->rx.dst + c->rx.data_got,
				  c->rx.data_len - c->rx.data_got },
				{ c->rx.buf, CONN_RXBUF },
			};
			want = iov[0].iov_len + iov[1].iov_len;
			n = readv(c->fd, iov, 2);
			if (n > 0) {
				uint32_t direct = (uint32_t)MIN((size_t)n,
							iov[0].iov_len);
				c->rx.data_got += direct;
				c->rx.head = 0;
				c->rx.tail = (uint32_t)n - direct;
			}
		} else {
			if (c->rx.tail == CONN_RXBUF) {
				/* Cannot happen: a header never exceeds the
				 * ring, and data is consumed as it comes. */
				conn_close(c, "receive buffer overrun");
				return;
			}
			want = CONN_RXBUF - c->rx.tail;
			n = read(c->fd, c->rx.buf + c->rx.tail, want);
			if (n > 0)
				c->rx.tail += (uint32_t)n;
		}
		if (n == 0) {
			conn_close(c, "peer closed the connection");
			return;
		}
		if (n < 0) {
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				break;
			if (errno == EINTR)
				continue;
			conn_close(c, "receive failed");
			return;
		}
		c->last_rx_ns = r->now_ns;
		budget = (uint32_t)n >= budget ? 0 : budget - (uint32_t)n;
		if (conn_rx_parse(c) < 0)
			return;
		/* A short read drained the socket: another read would only
		 * say EAGAIN (level-triggered epoll reports what comes next). */
		if ((size_t)n < want)
			break;
	}
}
