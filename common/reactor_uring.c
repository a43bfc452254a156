/*
 * The reactor on io_uring (include/tcq/reactor.h; reactor.c runs the
 * pass and everything both engines share). An fd is watched by a poll
 * request on the reactor's ring: a one-shot IORING_OP_POLL_ADD, armed
 * again after its callback ran, for a level-triggered handler (epoll's
 * default, which the callers rely on: a callback may leave input for a
 * later pass, and the new request completes at once while the fd is still
 * ready); a multishot one for an EPOLLET handler (the timerfd, eventfds
 * their callback drains), which stays in the kernel.
 *
 * A request lives in a struct ru_poll that outlives its handler while the
 * kernel holds it: reactor_del_fd cancels it, and the completion that ends
 * it frees it. So a handler may be freed as soon as it is deleted, and a
 * completion never reaches a deleted one.
 *
 * A pass: one io_uring_submit_and_wait hands the kernel everything the
 * last pass queued (polls armed again, backend I/O, cancellations) and
 * sleeps until the first completion (the timerfd's poll is one); then every
 * completion there is runs its reactor_op, and reactor.c goes on with the
 * timers and the deferred calls, which queue the next pass's SQEs.
 */
#include <config.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <liburing.h>
#include "common/reactor_priv.h"
#include "tcq/list.h"
#include "tcq/log.h"

#define RU_SQ_ENTRIES 512
#define RU_CQ_ENTRIES 4096	/* polls and backend I/O of one reactor */
#define RU_REAP 64		/* completions copied out at a time */
/* What a poll request may ask: epoll's flags (EPOLLET, ...) are ours. */
#define RU_POLL_MASK (EPOLLIN | EPOLLOUT | EPOLLPRI | EPOLLRDHUP | \
		      EPOLLERR | EPOLLHUP)

struct reactor_uring {
	struct io_uring ring;
	struct list_node polls;	/* every ru_poll, freed by ruring_fini */
	uint64_t enters, sqes;
};

struct ru_poll {
	struct reactor_op op;
	struct list_node node;
	struct reactor_fd *h;	/* NULL: deleted, freed once not armed */
	uint32_t mask;
	bool multishot;
	bool armed;		/* a request is queued or in the kernel */
	bool busy;		/* its callback is running */
};

/* ---- SQEs -------------------------------------------------------------- */

struct io_uring_sqe *reactor_uring_sqe(struct reactor *r)
{
	struct reactor_uring *ru = r->ring;
	struct io_uring_sqe *sqe;

	if (!ru)
		return NULL;
	sqe = io_uring_get_sqe(&ru->ring);
	if (!sqe) {
		/* Full: what is queued goes now, the rest with the pass. */
		int rc = io_uring_submit(&ru->ring);

		ru->enters++;
		if (rc < 0)
			log_err("reactor %d: io_uring_submit: %s", r->index,
				strerror(-rc));
		sqe = io_uring_get_sqe(&ru->ring);
		if (!sqe)
			return NULL;
	}
	ru->sqes++;
	return sqe;
}

void reactor_uring_counts(const struct reactor *r, uint64_t *enters,
			  uint64_t *sqes)
{
	*enters = r->ring ? r->ring->enters : 0;
	*sqes = r->ring ? r->ring->sqes : 0;
}

/* ---- polls ------------------------------------------------------------- */

static void ru_poll_free(struct ru_poll *p)
{
	list_del(&p->node);
	free(p);
}

static int ru_arm(struct reactor *r, struct ru_poll *p)
{
	struct io_uring_sqe *sqe = reactor_uring_sqe(r);

	if (!sqe) {
		log_err("reactor %d: no SQE to watch fd %d", r->index,
			p->h->fd);
		return -EBUSY;
	}
	if (p->multishot)
		io_uring_prep_poll_multishot(sqe, p->h->fd, p->mask);
	else
		io_uring_prep_poll_add(sqe, p->h->fd, p->mask);
	io_uring_sqe_set_data(sqe, &p->op);
	p->armed = true;
	return 0;
}

/* The kernel ends p's request; its completion (-ECANCELED, or an event
 * that raced) then frees p, since p has no handler. */
static void ru_cancel(struct reactor *r, struct ru_poll *p)
{
	struct io_uring_sqe *sqe = reactor_uring_sqe(r);

	if (!sqe) {	/* p stays until its request ends, or ruring_fini */
		log_err("reactor %d: no SQE to cancel a poll", r->index);
		return;
	}
	io_uring_prep_poll_remove(sqe, (__u64)(uintptr_t)&p->op);
	io_uring_sqe_set_data(sqe, NULL);
}

static void ru_poll_done(struct reactor *r, struct reactor_op *op, int res,
			 uint32_t flags)
{
	struct ru_poll *p = container_of(op, struct ru_poll, op);
	struct reactor_fd *h = p->h;
	bool failed = false;

	if (!p->multishot || !(flags & IORING_CQE_F_MORE))
		p->armed = false;
	if (!h) {
		if (!p->armed)
			ru_poll_free(p);
		return;
	}
	if (res == -ECANCELED) {	/* not by us: ours have no handler */
		if (!p->armed)
			ru_arm(r, p);
		return;
	}
	if (res < 0) {	/* told once, as EPOLLERR; not watched again */
		log_err("reactor %d: poll on fd %d: %s", r->index, h->fd,
			strerror(-res));
		res = EPOLLERR;
		failed = true;
	}
	p->busy = true;
	h->fn(r, (uint32_t)res, h->arg);
	p->busy = false;
	if (!p->h) {	/* deleted by its callback */
		if (!p->armed)
			ru_poll_free(p);
		return;
	}
	if (!p->armed && !failed)
		ru_arm(r, p);
}

static struct ru_poll *ru_poll_new(struct reactor *r, struct reactor_fd *h,
				   uint32_t events)
{
	struct ru_poll *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->op.fn = ru_poll_done;
	p->h = h;
	p->mask = events & RU_POLL_MASK;
	p->multishot = events & EPOLLET;
	list_add_tail(&p->node, &r->ring->polls);
	h->poll = p;
	return p;
}

int ruring_add_fd(struct reactor *r, struct reactor_fd *h)
{
	struct ru_poll *p;
	int rc;

	/* epoll_ctl would refuse it now; a poll request only later. */
	if (fcntl(h->fd, F_GETFD) < 0)
		return -errno;
	p = ru_poll_new(r, h, h->events);
	if (!p)
		return -ENOMEM;
	rc = ru_arm(r, p);
	if (rc < 0) {
		h->poll = NULL;
		ru_poll_free(p);
	}
	return rc;
}

int ruring_mod_fd(struct reactor *r, struct reactor_fd *h, uint32_t events)
{
	struct ru_poll *p = h->poll, *n;

	if (!p)
		return -ENOENT;
	if (!p->armed) {
		/* Its callback is running (armed again after it, with these)
		 * or it failed. */
		p->mask = events & RU_POLL_MASK;
		p->multishot = events & EPOLLET;
		return p->busy ? 0 : ru_arm(r, p);
	}
	/* In the kernel with the old mask: a new request replaces it. */
	n = ru_poll_new(r, h, events);
	if (!n)
		return -ENOMEM;
	if (ru_arm(r, n) < 0) {
		h->poll = p;
		ru_poll_free(n);
		return -EBUSY;
	}
	p->h = NULL;
	ru_cancel(r, p);
	return 0;
}

void ruring_del_fd(struct reactor *r, struct reactor_fd *h)
{
	struct ru_poll *p = h->poll;

	h->poll = NULL;
	if (!p)
		return;
	p->h = NULL;
	if (p->armed)
		ru_cancel(r, p);
	else if (!p->busy)
		ru_poll_free(p);
}

/* ---- the pass ---------------------------------------------------------- */

void ruring_wait(struct reactor *r, int timeout_ms)
{
	struct reactor_uring *ru = r->ring;
	struct io_uring_cqe *cqe;
	int rc;

	if (timeout_ms != 0 || io_uring_sq_ready(&ru->ring))
		ru->enters++;
	if (timeout_ms == 0) {
		rc = io_uring_submit(&ru->ring);
	} else if (timeout_ms < 0) {
		rc = io_uring_submit_and_wait(&ru->ring, 1);
	} else {
		struct __kernel_timespec ts = {
			.tv_sec = timeout_ms / 1000,
			.tv_nsec = (long long)(timeout_ms % 1000) * 1000000,
		};

		rc = io_uring_submit_and_wait_timeout(&ru->ring, &cqe, 1, &ts,
						      NULL);
	}
	/* EINTR: a signal; ETIME: the timeout; EBUSY/EAGAIN: completions
	 * to reap first, which the pass does now. */
	if (rc < 0 && rc != -EINTR && rc != -ETIME && rc != -EBUSY &&
	    rc != -EAGAIN)
		log_err("reactor %d: io_uring_enter: %s", r->index,
			strerror(-rc));
}

void ruring_dispatch(struct reactor *r)
{
	struct io_uring *ring = &r->ring->ring;
	struct {
		struct reactor_op *op;
		int res;
		uint32_t flags;
	} c[RU_REAP];
	struct io_uring_cqe *cqe;
	unsigned head, n;

	/* Copied out first: a callback may queue (and, with the SQ full,
	 * submit) requests whose completions come in the next round. */
	do {
		n = 0;
		io_uring_for_each_cqe(ring, head, cqe) {
			c[n].op = io_uring_cqe_get_data(cqe);
			c[n].res = cqe->res;
			c[n].flags = cqe->flags;
			if (++n == RU_REAP)
				break;
		}
		io_uring_cq_advance(ring, n);
		for (unsigned i = 0; i < n; i++)
			if (c[i].op)
				c[i].op->fn(r, c[i].op, c[i].res, c[i].flags);
	} while (n == RU_REAP);
}

/* ---- set-up ------------------------------------------------------------ */

int ruring_init(struct reactor *r)
{
	struct reactor_uring *ru = calloc(1, sizeof(*ru));
	struct io_uring_params p;
	int rc;

	if (!ru)
		return -ENOMEM;
	list_init(&ru->polls);
	/* Task work runs when the pass enters the kernel anyway (no
	 * interrupting the thread for it); a bad SQE does not hold back the
	 * rest of the batch. Older kernels get a plain ring. */
	memset(&p, 0, sizeof(p));
	p.flags = IORING_SETUP_CQSIZE | IORING_SETUP_COOP_TASKRUN |
		  IORING_SETUP_TASKRUN_FLAG | IORING_SETUP_SUBMIT_ALL;
	p.cq_entries = RU_CQ_ENTRIES;
	rc = io_uring_queue_init_params(RU_SQ_ENTRIES, &ru->ring, &p);
	if (rc == -EINVAL) {
		memset(&p, 0, sizeof(p));
		p.flags = IORING_SETUP_CQSIZE;
		p.cq_entries = RU_CQ_ENTRIES;
		rc = io_uring_queue_init_params(RU_SQ_ENTRIES, &ru->ring, &p);
	}
	if (rc < 0) {
		free(ru);
		return rc;
	}
	r->ring = ru;
	return 0;
}

void ruring_fini(struct reactor *r)
{
	struct reactor_uring *ru = r->ring;

	if (!ru)
		return;
	/* Ends every request the kernel still holds. */
	io_uring_queue_exit(&ru->ring);
	while (!list_empty(&ru->polls)) {
		struct ru_poll *p = list_first_entry(&ru->polls,
						     struct ru_poll, node);

		if (p->h)
			p->h->poll = NULL;
		ru_poll_free(p);
	}
	free(ru);
	r->ring = NULL;
}

int reactor_uring_probe(char *why, size_t whylen)
{
	static const struct {
		int op;
		const char *name;
	} need[] = {
		{ IORING_OP_POLL_ADD, "POLL_ADD" },
		{ IORING_OP_POLL_REMOVE, "POLL_REMOVE" },
		{ IORING_OP_READ, "READ" },
		{ IORING_OP_WRITE, "WRITE" },
		{ IORING_OP_FSYNC, "FSYNC" },
	};
	struct io_uring ring;
	struct io_uring_probe *pr;
	int rc = io_uring_queue_init(8, &ring, 0);

	if (rc < 0) {
		snprintf(why, whylen, "io_uring_setup: %s", strerror(-rc));
		return rc;
	}
	pr = io_uring_get_probe_ring(&ring);
	if (!pr) {
		snprintf(why, whylen, "the kernel cannot list io_uring's ops");
		rc = -EOPNOTSUPP;
	}
	for (size_t i = 0; pr && i < sizeof(need) / sizeof(need[0]); i++)
		if (!io_uring_opcode_supported(pr, need[i].op)) {
			snprintf(why, whylen, "the kernel's io_uring has no %s",
				 need[i].name);
			rc = -EOPNOTSUPP;
			break;
		}
	if (pr)
		io_uring_free_probe(pr);
	io_uring_queue_exit(&ring);
	return rc;
}
