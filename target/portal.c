/*
 * Listening sockets. Accepting happens on reactor 0 only; accepting is
 * cheap next to serving, and one acceptor sees every placement: each
 * connection goes to the reactor with the fewest open connections (ties
 * in turn). Plain round-robin over connections is uneven as soon as some
 * are short-lived: an initiator that opens a discovery session, or a
 * probe, before each login would put every session on one reactor of two.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE	/* accept4 */
#endif
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdatomic.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>
#include "tcq/log.h"
#include "target/config.h"
#include "target/conn.h"
#include "target/portal.h"
#include "tcq/reactor.h"

#define PORTAL_BACKLOG 128
#define PORTAL_PAUSE_MS 100		/* after EMFILE/ENFILE */
#define PORTAL_WARN_EVERY_NS 10000000000ull

struct listener {
	struct list_node node;
	struct portal *p;
	struct reactor_fd rfd;
	struct reactor_timer pause;	/* re-enables accept after EMFILE */
};

/* The listeners of the process, used on reactor 0's thread only. */
static struct list_node listeners = LIST_HEAD_INIT(listeners);
static struct reactor **reactors;
static int nreactors;
static unsigned next_reactor;
/* Connections placed on each reactor and not yet closed: raised here on
 * reactor 0, lowered by the connection's own reactor as it closes. */
static _Atomic unsigned placed[CFG_MAX_THREADS];
static uint64_t last_emfile_warn_ns;

/* A connection on its way to another reactor's thread. */
struct handoff {
	struct reactor *r;
	int fd;
	struct portal *p;
	socklen_t peer_len;
	struct sockaddr_storage peer;
};

int portal_listen(struct portal *p, char *err, size_t errlen)
{
	int fd, one = 1;
	struct sockaddr_storage real;
	socklen_t rlen = sizeof(real);
	int family = p->addr.ss_family;

	fd = socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		snprintf(err, errlen, "%s: socket: %s", p->addr_text,
			 strerror(errno));
		return -1;
	}
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	/* A v6 portal is v6 only, so "[::]:3260" and "0.0.0.0:3260" can
	 * be configured side by side. */
	if (family == AF_INET6)
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&p->addr, p->addr_len) < 0) {
		snprintf(err, errlen, "%s: bind: %s", p->addr_text,
			 strerror(errno));
		goto fail;
	}
	if (listen(fd, PORTAL_BACKLOG) < 0) {
		snprintf(err, errlen, "%s: listen: %s", p->addr_text,
			 strerror(errno));
		goto fail;
	}
	if (getsockname(fd, (struct sockaddr *)&real, &rlen) == 0 &&
	    rlen <= sizeof(p->addr)) {
		char text[INET6_ADDRSTRLEN + 16];
		char *dup;

		memcpy(&p->addr, &real, rlen);
		p->addr_len = rlen;
		portal_format_addr((struct sockaddr *)&real, text, sizeof(text));
		if ((dup = strdup(text))) {
			free(p->addr_text);
			p->addr_text = dup;
		}
	}
	p->listen_fd = fd;
	return 0;
fail:
	close(fd);
	return -1;
}

static void handoff_run(void *arg)
{
	struct handoff *h = arg;

	/* conn_accept owns the socket from here, and closes it on failure. */
	conn_accept(h->r, h->fd, h->p, (struct sockaddr *)&h->peer, h->peer_len);
	free(h);
}

/* The reactor with the fewest open connections; among equals the next
 * in turn after the last one chosen. Counts it placed there. */
static struct reactor *place(void)
{
	unsigned n = (unsigned)nreactors, best = 0, least = UINT_MAX;

	for (unsigned k = 0; k < n; k++) {
		unsigned i = (next_reactor + k) % n;
		unsigned c = atomic_load_explicit(&placed[i],
						  memory_order_relaxed);

		if (c < least) {
			least = c;
			best = i;
		}
	}
	next_reactor = best + 1;
	atomic_fetch_add_explicit(&placed[best], 1, memory_order_relaxed);
	return reactors[best];
}

void portal_conn_ended(struct reactor *r)
{
	_Atomic unsigned *c;
	unsigned v;

	if (!r || r->index < 0 || r->index >= CFG_MAX_THREADS)
		return;
	c = &placed[r->index];
	/* Never below 0: a connection made without place() (a test's). */
	v = atomic_load_explicit(c, memory_order_relaxed);
	while (v && !atomic_compare_exchange_weak_explicit(c, &v, v - 1,
			memory_order_relaxed, memory_order_relaxed))
		;
}

static void dispatch(struct reactor *self, int fd, struct portal *p,
		     const struct sockaddr_storage *peer, socklen_t peer_len)
{
	struct reactor *r = place();
	struct handoff *h;

	if (r == self) {
		conn_accept(r, fd, p, (const struct sockaddr *)peer, peer_len);
		return;
	}
	h = malloc(sizeof(*h));
	if (!h) {
		close(fd);
		portal_conn_ended(r);
		return;
	}
	h->r = r;
	h->fd = fd;
	h->p = p;
	h->peer = *peer;
	h->peer_len = peer_len;
	if (reactor_post(r, handoff_run, h) < 0) {
		log_warn("portal %s: cannot hand a connection to reactor %d",
			 p->addr_text, r->index);
		close(fd);
		free(h);
		portal_conn_ended(r);
	}
}

static void pause_end(struct reactor_timer *t)
{
	struct listener *l = t->arg;

	if (l->p->listen_fd >= 0)
		reactor_mod_fd(reactors[0], &l->rfd, EPOLLIN);
}

static void on_accept(struct reactor *r, uint32_t events, void *arg)
{
	struct listener *l = arg;
	struct portal *p = l->p;

	for (;;) {
		struct sockaddr_storage peer;
		socklen_t plen = sizeof(peer);
		int one = 1;
		int fd = accept4(p->listen_fd, (struct sockaddr *)&peer, &plen,
				 SOCK_NONBLOCK | SOCK_CLOEXEC);

		if (fd < 0) {
			if (errno == EINTR || errno == ECONNABORTED ||
			    errno == EPROTO)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return;
			if (errno == EMFILE || errno == ENFILE ||
			    errno == ENOBUFS || errno == ENOMEM) {
				uint64_t now = reactor_now_ns();

				if (now - last_emfile_warn_ns >= PORTAL_WARN_EVERY_NS ||
				    last_emfile_warn_ns == 0) {
					log_warn("portal %s: accept: %s; pausing",
						 p->addr_text, strerror(errno));
					last_emfile_warn_ns = now;
				}
				/* Pending connections stay in the backlog;
				 * try again once some descriptors are free. */
				reactor_mod_fd(r, &l->rfd, 0);
				reactor_timer_arm(r, &l->pause, PORTAL_PAUSE_MS);
				return;
			}
			log_err("portal %s: accept: %s", p->addr_text,
				strerror(errno));
			return;
		}
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		dispatch(r, fd, p, &peer, plen);
	}
}

struct portal *portal_new(const char *text, uint16_t tpgt, char *err,
			  size_t errlen)
{
	struct portal *p = calloc(1, sizeof(*p));

	err[0] = '\0';
	if (!p) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	p->listen_fd = -1;
	p->tpgt = tpgt;
	if (portal_parse_addr(text, &p->addr, &p->addr_len, err, errlen) < 0 ||
	    !(p->addr_text = strdup(text)) || !(p->conf_text = strdup(text))) {
		if (!err[0])
			snprintf(err, errlen, "out of memory");
		portal_free(p);
		return NULL;
	}
	return p;
}

void portal_free(struct portal *p)
{
	if (!p)
		return;
	free(p->addr_text);
	free(p->conf_text);
	free(p);
}

int portal_watch(struct portal *p)
{
	struct listener *l = calloc(1, sizeof(*l));

	if (!l)
		return -1;
	l->p = p;
	reactor_timer_init(&l->pause, pause_end, l);
	if (reactor_add_fd(reactors[0], &l->rfd, p->listen_fd, EPOLLIN,
			   on_accept, l) < 0) {
		log_err("portal %s: cannot watch the socket", p->addr_text);
		free(l);
		return -1;
	}
	list_add_tail(&l->node, &listeners);
	return 0;
}

static void listener_close(struct listener *l)
{
	reactor_timer_cancel(reactors[0], &l->pause);
	reactor_del_fd(reactors[0], &l->rfd);
	close(l->p->listen_fd);
	l->p->listen_fd = -1;
	list_del(&l->node);
	free(l);
}

void portal_unwatch(struct portal *p)
{
	struct list_node *pos, *tmp;

	list_for_each_safe(pos, tmp, &listeners) {
		struct listener *l = list_entry(pos, struct listener, node);

		if (l->p == p) {
			listener_close(l);
			return;
		}
	}
	if (p->listen_fd >= 0) {	/* listening, never watched */
		close(p->listen_fd);
		p->listen_fd = -1;
	}
}

int portal_start(struct tcqd *d, struct reactor **rs, int nrs)
{
	reactors = rs;
	nreactors = nrs;
	next_reactor = 0;
	for (int i = 0; i < CFG_MAX_THREADS; i++)
		atomic_store_explicit(&placed[i], 0, memory_order_relaxed);
	for (int i = 0; i < d->nportals; i++)
		if (d->portals[i]->listen_fd >= 0 && portal_watch(d->portals[i]))
			return -1;
	return 0;
}

void portal_stop(void)
{
	while (!list_empty(&listeners))
		listener_close(list_first_entry(&listeners, struct listener,
						node));
}
