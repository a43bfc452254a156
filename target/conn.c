/*
 * iSCSI connection (see conn.h): accepting it, its NOP-In pings, and its
 * end. The framing is in conn_rx.c (receive) and conn_tx.c (the send
 * queue).
 */
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "tcq/compiler.h"
#include "tcq/log.h"
#include "tcq/pdu.h"
#include "target/conn.h"
#include "target/conn_priv.h"
#include "target/login.h"
#include "target/portal.h"
#include "target/session.h"
#include "target/target.h"

#define LOGIN_MAX_DSL 65536	/* data segment cap before negotiation ends */

/* Per-reactor list of live connections, for shutdown. */
static __thread struct list_node live_head;
static __thread struct list_node *live_conns;
static __thread bool shutting_down;
static __thread unsigned live_count;

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
	login_params_defaults(&c->params);
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
	portal_conn_ended(r);
	return -1;
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

/* ---- the end ----------------------------------------------------------- */

static void conn_free_deferred(struct reactor_defer *d)
{
	struct conn *c = d->arg;

	conn_tx_free(c);
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
	conn_tx_last_try(c);
	c->state = CONN_CLOSING;
	/* Before the log line: a test that saw it may count on it. */
	portal_conn_ended(c->r);
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

