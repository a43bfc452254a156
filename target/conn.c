/*
 * iSCSI connection: framing and the send queue (see conn.h).
 *
 * Receive: bytes land in a 64 KiB ring (rx.buf) with one read() per wakeup;
 * headers are parsed in place. A data segment goes where the session layer
 * says (a command's buffer at its offset, or the scratch buffer for
 * control PDUs); what the ring already holds is copied, and the rest of a
 * large segment is read with readv() straight into its destination, the
 * ring taking the bytes that follow. Transmit: PDUs queue on tx.queue and
 * leave in one sendmsg() per reactor pass (tx.flush), payload referenced,
 * not copied, for Data-In; while the disks are short of work a long queue
 * goes out in slices, one per pass (TX_SLICE).
 */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "tcq/compiler.h"
#include "tcq/crc32c.h"
#include "tcq/log.h"
#include "tcq/pdu.h"
#include "target/conn.h"
#include "target/login.h"
#include "target/session.h"
#include "target/target.h"

enum { RX_HDR, RX_DATA, RX_TRAILER };

#define LOGIN_MAX_DSL 65536	/* data segment cap before negotiation ends */
#define RX_BUDGET (4u << 20)	/* bytes read per wakeup before yielding */
#define TX_IOV_MAX 256	/* one sendmsg carries a wave of 4K Data-In */
/* While the reactor's devices have fewer than TX_SLICE_BUSY I/Os in
 * flight, one flush sends about TX_SLICE bytes (whole PDUs, at least one)
 * and yields to the next reactor pass: commands that arrived meanwhile
 * (the initiator answers the first Data-In while the rest is still being
 * copied) reach the disk before the rest of a wave of completions is
 * sent, instead of the disk idling while the wire drains. A busy device,
 * or one that answers at once (null, ram: average service time under
 * TX_SLICE_LAT_NS), gains nothing, and slicing costs CPU: then it is off. */
#define TX_SLICE (128u << 10)
#define TX_SLICE_BUSY 8
#define TX_SLICE_LAT_NS 50000

/* Per-reactor list of live connections, for shutdown. */
static __thread struct list_node live_head;
static __thread struct list_node *live_conns;
static __thread bool shutting_down;
static __thread unsigned live_count;

static void conn_rx_ready(struct reactor *r, uint32_t events, void *arg);
static void conn_tx_flush(struct reactor_defer *d);
static void conn_nop_fire(struct reactor_timer *t);
static void conn_maybe_free(struct conn *c);

static void conn_live_list_init(void)
{
	if (!live_conns) {
		live_conns = &live_head;
		list_init(live_conns);
	}
}

static void format_peer(struct conn *c)
{
	char host[INET6_ADDRSTRLEN] = "?";
	unsigned port = 0;

	if (c->peer.ss_family == AF_INET) {
		struct sockaddr_in *a = (struct sockaddr_in *)&c->peer;
		inet_ntop(AF_INET, &a->sin_addr, host, sizeof(host));
		port = ntohs(a->sin_port);
		snprintf(c->peer_text, sizeof(c->peer_text), "%s:%u", host, port);
	} else if (c->peer.ss_family == AF_INET6) {
		struct sockaddr_in6 *a = (struct sockaddr_in6 *)&c->peer;
		inet_ntop(AF_INET6, &a->sin6_addr, host, sizeof(host));
		port = ntohs(a->sin6_port);
		snprintf(c->peer_text, sizeof(c->peer_text), "[%s]:%u", host, port);
	} else {
		snprintf(c->peer_text, sizeof(c->peer_text), "unknown");
	}
}

int conn_accept(struct reactor *r, int fd, struct portal *p,
		const struct sockaddr *peer, socklen_t peer_len)
{
	struct conn *c = calloc(1, sizeof(*c));
	int one = 1;

	if (!c)
		goto fail;
	c->rx.buf = malloc(CONN_RXBUF);
	if (!c->rx.buf)
		goto fail;
	c->r = r;
	c->fd = fd;
	c->portal = p;
	if (peer_len > sizeof(c->peer))
		peer_len = sizeof(c->peer);
	memcpy(&c->peer, peer, peer_len);
	c->peer_len = peer_len;
	format_peer(c);
	c->state = CONN_LOGIN;
	param_defaults(&c->params);
	c->params.max_recv_dsl = LOGIN_MAX_DSL;
	c->ping.ttt = ISCSI_RSVD_TAG;
	c->ping.next_ttt = 1;
	list_init(&c->tx.queue);
	list_init(&c->tx.spare);
	list_init(&c->live_node);
	reactor_defer_init(&c->tx.flush, conn_tx_flush, c);
	reactor_timer_init(&c->ping.timer, conn_nop_fire, c);
	reactor_timer_init(&c->login_timer, NULL, c);
	c->last_rx_ns = reactor_now_ns();
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
	if (reactor_add_fd(r, &c->rfd, fd, EPOLLIN, conn_rx_ready, c) < 0)
		goto fail;
	conn_live_list_init();
	list_add_tail(&c->live_node, live_conns);
	live_count++;
	log_info("connection from %s", c->peer_text);
	if (login_start(c) < 0) {
		conn_close(c, "login setup failed");
		return -1;
	}
	return 0;
fail:
	log_err("cannot accept connection: out of memory");
	if (c)
		free(c->rx.buf);
	free(c);
	close(fd);
	return -1;
}

/* ---- transmit ---------------------------------------------------------- */

static struct txpdu *txpdu_get(struct conn *c)
{
	struct txpdu *t;

	if (!list_empty(&c->tx.spare)) {
		t = list_first_entry(&c->tx.spare, struct txpdu, node);
		list_del(&t->node);
	} else {
		t = malloc(sizeof(*t));
		if (!t)
			return NULL;
		list_init(&t->node);
	}
	t->data = NULL;
	t->data_len = 0;
	t->trailer_len = 0;
	t->own_data = false;
	t->cmd = NULL;
	t->last_of_cmd = false;
	return t;
}

static void txpdu_put(struct conn *c, struct txpdu *t)
{
	if (t->own_data)
		free((void *)t->data);
	t->own_data = false;
	list_add_head(&t->node, &c->tx.spare);
}

/* Drops what was not sent (queued PDUs may point into command buffers). */
static void conn_tx_drop_queue(struct conn *c)
{
	while (!list_empty(&c->tx.queue)) {
		struct txpdu *t = list_first_entry(&c->tx.queue, struct txpdu,
						   node);
		list_del(&t->node);
		txpdu_put(c, t);
	}
}

/* Completes a PDU's framing (digests, padding) and queues it. */
void conn_queue_txpdu(struct conn *c, struct txpdu *t)
{
	uint32_t pad = pdu_pad(t->data_len);

	pdu_set_data_len(t->bhs, t->data_len);
	/* Framing is fixed at queueing: the final Login Response goes out
	 * without digests even though they apply to everything after it. */
	t->hdigest_len = 0;
	if (c->params.header_digest) {
		uint32_t d = crc32c(t->bhs, ISCSI_BHS_LEN);
		memcpy(t->hdigest, &d, 4);
		t->hdigest_len = 4;
	}
	memset(t->trailer, 0, sizeof(t->trailer));
	t->trailer_len = (uint8_t)pad;
	if (t->data_len && c->params.data_digest) {
		uint32_t crc = crc32c_update(0xffffffffu, t->data, t->data_len);
		uint32_t d;

		crc = crc32c_update(crc, t->trailer, pad);
		d = ~crc;
		memcpy(t->trailer + pad, &d, 4);
		t->trailer_len += 4;
	}
	list_add_tail(&t->node, &c->tx.queue);
	if (!c->tx.blocked)
		reactor_defer(c->r, &c->tx.flush);
}

struct txpdu *conn_txpdu_alloc(struct conn *c)
{
	return txpdu_get(c);
}

int conn_send_pdu(struct conn *c, const uint8_t *bhs, const void *data,
		  uint32_t len)
{
	struct txpdu *t;

	if (c->state == CONN_CLOSING)
		return -1;
	t = txpdu_get(c);
	if (!t)
		return -1;
	memcpy(t->bhs, bhs, ISCSI_BHS_LEN);
	if (len) {
		void *copy = malloc(len);

		if (!copy) {
			txpdu_put(c, t);
			return -1;
		}
		memcpy(copy, data, len);
		t->data = copy;
		t->own_data = true;
		t->data_len = len;
	}
	conn_queue_txpdu(c, t);
	return 0;
}

uint32_t conn_next_statsn(struct conn *c)
{
	return c->statsn++;
}

void conn_send_reject(struct conn *c, const uint8_t *bad_bhs, uint8_t reason)
{
	uint8_t bhs[ISCSI_BHS_LEN];
	struct pdu_reject rj = {
		.reason = reason,
		.data_len = ISCSI_BHS_LEN,
		.datasn = 0,
	};

	rj.statsn = conn_next_statsn(c);
	rj.expcmdsn = sess_exp_cmdsn(c);
	rj.maxcmdsn = sess_max_cmdsn(c);
	pdu_encode_reject(bhs, &rj);
	log_warn("%s: reject %s PDU (ITT 0x%08x), reason 0x%02x",
		 c->peer_text, pdu_opcode_name(pdu_opcode(bad_bhs)),
		 pdu_itt(bad_bhs), reason);
	conn_send_pdu(c, bhs, bad_bhs, ISCSI_BHS_LEN);
}

_Static_assert(offsetof(struct txpdu, hdigest) ==
	       offsetof(struct txpdu, bhs) + ISCSI_BHS_LEN,
	       "header digest follows the BHS: one iovec covers both");

/* One sendmsg() over the queue, up to about limit bytes (whole PDUs, at
 * least one); retires sent PDUs and returns the bytes sent in *sent_out. */
static int conn_tx_once(struct conn *c, size_t limit, size_t *sent_out)
{
	struct iovec iov[TX_IOV_MAX];
	struct msghdr msg = { .msg_iov = iov };
	struct list_node *pos;
	int n = 0;
	uint32_t skip = c->tx.head_sent;
	size_t total = 0;
	ssize_t sent;

	*sent_out = 0;
	list_for_each(pos, &c->tx.queue) {
		struct txpdu *t = list_entry(pos, struct txpdu, node);
		struct iovec parts[3] = {
			{ t->bhs, ISCSI_BHS_LEN + t->hdigest_len },
			{ (void *)t->data, t->data_len },
			{ t->trailer, t->trailer_len },
		};

		if (n > TX_IOV_MAX - 3 || total >= limit)
			break;
		total += parts[0].iov_len + parts[1].iov_len + parts[2].iov_len;
		for (int i = 0; i < 3; i++) {
			if (!parts[i].iov_len)
				continue;
			if (skip >= parts[i].iov_len) {
				skip -= (uint32_t)parts[i].iov_len;
				continue;
			}
			iov[n].iov_base = (char *)parts[i].iov_base + skip;
			iov[n].iov_len = parts[i].iov_len - skip;
			skip = 0;
			n++;
		}
	}
	if (!n)
		return 0;
	msg.msg_iovlen = (size_t)n;
	sent = sendmsg(c->fd, &msg, MSG_NOSIGNAL | MSG_DONTWAIT);
	if (sent < 0) {
		if (errno == EAGAIN || errno == EWOULDBLOCK)
			return 1;
		if (errno == EINTR)
			return 2;
		return -1;
	}
	*sent_out = (size_t)sent;
	/* Retire whole PDUs covered by the bytes sent. */
	uint64_t left = (uint64_t)sent + c->tx.head_sent;
	while (!list_empty(&c->tx.queue)) {
		struct txpdu *t = list_first_entry(&c->tx.queue, struct txpdu,
						   node);
		uint64_t size = ISCSI_BHS_LEN + t->hdigest_len +
				t->data_len + t->trailer_len;

		if (left < size)
			break;
		left -= size;
		list_del(&t->node);
		if (t->cmd && t->last_of_cmd)
			sess_cmd_sent(t->cmd);
		txpdu_put(c, t);
	}
	c->tx.head_sent = (uint32_t)left;
	return list_empty(&c->tx.queue) ? 0 : 2;
}

static void conn_tx_flush(struct reactor_defer *d)
{
	struct conn *c = d->arg;
	int rc;

	size_t budget = c->r->io_inflight < TX_SLICE_BUSY &&
			c->r->io_lat_ns >= TX_SLICE_LAT_NS ? TX_SLICE : SIZE_MAX;
	size_t sent;

	if (c->state == CONN_CLOSING)
		return;
	do {
		rc = conn_tx_once(c, budget, &sent);
		budget -= MIN(budget, sent);
	} while (rc == 2 && budget);
	if (rc < 0) {
		conn_close(c, "send failed");
		return;
	}
	if (rc == 2) {
		/* Slice used up: the rest goes after the next epoll round. */
		reactor_defer_next(c->r, &c->tx.flush);
		if (c->tx.blocked) {
			c->tx.blocked = false;
			reactor_mod_fd(c->r, &c->rfd, EPOLLIN);
		}
		return;
	}
	if (rc == 1 && !c->tx.blocked) {
		c->tx.blocked = true;
		reactor_mod_fd(c->r, &c->rfd, EPOLLIN | EPOLLOUT);
	} else if (rc == 0 && c->tx.blocked) {
		c->tx.blocked = false;
		reactor_mod_fd(c->r, &c->rfd, EPOLLIN);
	}
	if (rc == 0 && c->state == CONN_LOGGED_OUT)
		conn_close(c, "logged out");
}

/* ---- receive ----------------------------------------------------------- */

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

/* Parses what rxbuf holds; returns -1 when the connection went away. */
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
		case RX_DATA: {
			uint32_t want = c->rx.data_len - c->rx.data_got;
			uint32_t n = MIN(want, avail);

			if (n) {
				if (c->rx.dst)
					memcpy(c->rx.dst + c->rx.data_got,
					       c->rx.buf + c->rx.head, n);
				c->rx.head += n;
				c->rx.data_got += n;
			}
			if (c->rx.data_got < c->rx.data_len)
				return 0;
			c->rx.state = RX_TRAILER;
			break;
		}
		case RX_TRAILER: {
			uint32_t want = c->rx.trailer_len - c->rx.trailer_got;
			uint32_t n = MIN(want, avail);

			memcpy(c->rx.trailer + c->rx.trailer_got,
			       c->rx.buf + c->rx.head, n);
			c->rx.head += n;
			c->rx.trailer_got += n;
			if (c->rx.trailer_got < c->rx.trailer_len)
				return 0;
			c->rx.state = RX_HDR;
			conn_rx_complete(c);
			break;
		}
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

static void conn_rx_ready(struct reactor *r, uint32_t events, void *arg)
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

/* ---- liveness ---------------------------------------------------------- */

static void conn_nop_arm(struct conn *c, uint64_t ms)
{
	if (c->state == CONN_FFP && ms)
		reactor_timer_arm(c->r, &c->ping.timer, ms);
}

static void conn_nop_fire(struct reactor_timer *t)
{
	struct conn *c = t->arg;
	const struct tcq_settings *s = &tcqd->set;
	uint64_t now = reactor_now_ns();
	uint64_t idle_ms = (now - c->last_rx_ns) / 1000000;

	if (c->state != CONN_FFP)
		return;
	if (c->ping.ttt != ISCSI_RSVD_TAG) {
		if (idle_ms >= (uint64_t)s->nop_timeout_s * 1000) {
			conn_close(c, "NOP-In ping not answered");
			return;
		}
		if (c->last_rx_ns > now - (uint64_t)s->nop_timeout_s * 1000000000ull)
			c->ping.ttt = ISCSI_RSVD_TAG;	/* traffic is proof */
	}
	if (idle_ms >= (uint64_t)s->nop_interval_s * 1000 &&
	    c->ping.ttt == ISCSI_RSVD_TAG) {
		uint8_t bhs[ISCSI_BHS_LEN];
		struct pdu_nop_in nop = {
			.itt = ISCSI_RSVD_TAG,
			.lun = 0,
		};

		c->ping.ttt = c->ping.next_ttt++;
		if (c->ping.next_ttt == ISCSI_RSVD_TAG)
			c->ping.next_ttt = 1;
		nop.ttt = c->ping.ttt;
		nop.statsn = c->statsn;	/* not advanced by a ping */
		nop.expcmdsn = sess_exp_cmdsn(c);
		nop.maxcmdsn = sess_max_cmdsn(c);
		pdu_encode_nop_in(bhs, &nop);
		conn_send_pdu(c, bhs, NULL, 0);
		conn_nop_arm(c, (uint64_t)s->nop_timeout_s * 1000);
		return;
	}
	if (c->ping.ttt != ISCSI_RSVD_TAG)
		conn_nop_arm(c, (uint64_t)s->nop_timeout_s * 1000 / 2 + 1);
	else
		conn_nop_arm(c, (uint64_t)s->nop_interval_s * 1000 -
				MIN(idle_ms, (uint64_t)s->nop_interval_s * 1000) + 1);
}

void conn_nop_answered(struct conn *c, uint32_t ttt)
{
	if (ttt == c->ping.ttt)
		c->ping.ttt = ISCSI_RSVD_TAG;
}

void conn_enter_ffp(struct conn *c)
{
	/* Negotiated framing (digests, segment sizes) starts with the next
	 * PDU in each direction. */
	if (c->sess)
		c->params = *sess_params(c->sess);
	c->state = CONN_FFP;
	reactor_timer_cancel(c->r, &c->login_timer);
	if (tcqd->set.nop_interval_s)
		conn_nop_arm(c, (uint64_t)tcqd->set.nop_interval_s * 1000);
}

/* ---- teardown ---------------------------------------------------------- */

static void conn_free_deferred(struct reactor_defer *d)
{
	struct conn *c = d->arg;

	conn_tx_drop_queue(c);
	while (!list_empty(&c->tx.spare)) {
		struct txpdu *t = list_first_entry(&c->tx.spare, struct txpdu,
						   node);
		list_del(&t->node);
		free(t);
	}
	free(c->rx.scratch);
	free(c->rx.buf);
	free(c);
	live_count--;
	if (shutting_down && live_count == 0)
		reactor_stop(reactor_self());
}

static void conn_maybe_free(struct conn *c)
{
	if (c->state != CONN_CLOSING || c->refs)
		return;
	/* Free at the end of the pass: epoll may still report this fd's
	 * events in the current batch. */
	c->tx.flush.fn = conn_free_deferred;
	reactor_defer(c->r, &c->tx.flush);
}

void conn_put(struct conn *c)
{
	if (--c->refs == 0)
		conn_maybe_free(c);
}

void conn_close(struct conn *c, const char *why)
{
	if (c->state == CONN_CLOSING)
		return;
	/* Whatever is queued (a login reject, a logout response) gets one
	 * last non-blocking attempt. */
	if (!list_empty(&c->tx.queue)) {
		size_t sent;
		int rc;
		do {
			rc = conn_tx_once(c, SIZE_MAX, &sent);
		} while (rc == 2);
	}
	c->state = CONN_CLOSING;
	log_info("%s: connection closed: %s", c->peer_text, why);
	reactor_timer_cancel(c->r, &c->ping.timer);
	reactor_timer_cancel(c->r, &c->login_timer);
	reactor_defer_cancel(&c->tx.flush);
	reactor_del_fd(c->r, &c->rfd);
	close(c->fd);
	c->fd = -1;
	list_del(&c->live_node);
	login_free(c);
	/* Queued PDUs may point into command buffers: drop them before the
	 * commands go (a closing connection owes no answers). */
	conn_tx_drop_queue(c);
	c->tx.head_sent = 0;
	if (c->sess)
		sess_conn_lost(c);
	conn_maybe_free(c);
}

void conn_reactor_shutdown(struct reactor *r)
{
	conn_live_list_init();
	shutting_down = true;
	if (list_empty(live_conns) && live_count == 0) {
		reactor_stop(r);
		return;
	}
	while (!list_empty(live_conns)) {
		struct conn *c = list_first_entry(live_conns, struct conn,
						  live_node);
		conn_close(c, "target shutting down");
	}
}
