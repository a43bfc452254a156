/*
 * One event loop per thread. A pass is: wait on epoll (not at all when
 * deferred calls are pending or a timer is due; else until an fd is
 * ready, the reactor's timerfd among them), dispatch fd events, fire due
 * timers, then run deferred calls. Deferred calls are last so that
 * everything a pass produced can be batched by them.
 *
 * Timers. One heap of nanosecond deadlines; the ms API is the same timers
 * with deadlines on the clock. epoll's own timeout is not used for them
 * (it is whole milliseconds, and may wake up to a slack late): the pass
 * that is about to sleep sets the timerfd to the earliest deadline, and
 * only when it is earlier than the timerfd's setting (tfd_at). A setting
 * that has passed has fired; one for a timer cancelled or moved later
 * wakes one pass for nothing, which sets it again. So arming a timer no
 * earlier than the setting, moving timers later, cancelling, and every
 * pass that does not sleep (work deferred, a timer due) cost no syscall.
 * The timerfd is edge-triggered and never read: it only wakes the pass;
 * run_timers decides what is due from the pass's time.
 *
 * On io_uring (reactor_uring.c) the pass is the same but for its wait:
 * one io_uring_submit_and_wait instead of epoll_wait, with the fds watched
 * by poll requests on the ring, then every completion dispatched.
 */
#include <config.h>	/* autoconf's (HAVE_LIBURING) */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>
#include "tcq/reactor.h"
#include "tcq/log.h"
#include "common/reactor_priv.h"

#define REACTOR_MAX_EVENTS 128
/* Deferred calls queued by deferred calls run in further rounds of the
 * same pass, up to this many; the rest waits for the next (non-blocking)
 * pass so a self-requeueing call cannot starve fd events. */
#define REACTOR_DEFER_ROUNDS 16
#define TFD_NONE UINT64_MAX

/*
 * The epoll batch being dispatched on this thread. reactor_del_fd clears
 * later events of the batch that point at the deleted handler, so the
 * owner may free a reactor_fd as soon as reactor_del_fd returns.
 */
static __thread struct {
	struct reactor *r;
	struct epoll_event *ev;
	int next, n;
} tls_batch;

static __thread struct reactor *tls_self;

/* Set once at start (before the reactor threads exist), or by a test
 * between its reactors. */
static enum reactor_engine engine = REACTOR_EPOLL;

void reactor_set_engine(enum reactor_engine e)
{
	engine = e;
}

enum reactor_engine reactor_engine(void)
{
	return engine;
}

const char *reactor_engine_name(enum reactor_engine e)
{
	return e == REACTOR_URING ? "uring" : "aio";
}

#ifndef HAVE_LIBURING
/* Built without liburing: epoll and libaio only. */
int reactor_uring_probe(char *why, size_t whylen)
{
	snprintf(why, whylen, "tcq was built without liburing");
	return -ENOSYS;
}

struct io_uring_sqe *reactor_uring_sqe(struct reactor *r)
{
	return NULL;
}

void reactor_uring_counts(const struct reactor *r, uint64_t *enters,
			  uint64_t *sqes)
{
	*enters = *sqes = 0;
}

int ruring_init(struct reactor *r)
{
	return -ENOSYS;
}
#endif

uint64_t reactor_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

struct reactor *reactor_self(void)
{
	return tls_self;
}

/* ---- mailbox ----------------------------------------------------------- */

static void mbox_ready(struct reactor *r, uint32_t events, void *arg)
{
	struct reactor_msg *m, *next;
	uint64_t cnt;

	/* Drain the counter first: a post racing with us re-arms it. */
	if (read(r->mbox_fd, &cnt, sizeof(cnt)) < 0 && errno != EAGAIN)
		log_warn("reactor %d: mailbox read: %s", r->index,
			 strerror(errno));
	pthread_mutex_lock(&r->mbox_lock);
	m = r->mbox_head;
	r->mbox_head = r->mbox_tail = NULL;
	pthread_mutex_unlock(&r->mbox_lock);
	for (; m; m = next) {
		bool owned = m->owned;

		/* An owned message may be freed or sent again by fn. */
		next = m->next;
		m->fn(m->arg);
		if (!owned)
			free(m);
	}
}

static void mbox_kick(struct reactor *r)
{
	uint64_t one = 1;

	/* EAGAIN means the counter is saturated: already signalled. */
	while (write(r->mbox_fd, &one, sizeof(one)) < 0 && errno == EINTR)
		;
}

static void mbox_put(struct reactor *r, struct reactor_msg *m)
{
	pthread_mutex_lock(&r->mbox_lock);
	if (r->mbox_tail)
		r->mbox_tail->next = m;
	else
		r->mbox_head = m;
	r->mbox_tail = m;
	pthread_mutex_unlock(&r->mbox_lock);
	mbox_kick(r);
}

void reactor_send(struct reactor *r, struct reactor_msg *m,
		  void (*fn)(void *arg), void *arg)
{
	m->next = NULL;
	m->fn = fn;
	m->arg = arg;
	m->owned = true;
	mbox_put(r, m);
}

/* ---- joins and barriers -------------------------------------------------- */

void reactor_join_init(struct reactor_join *j, struct reactor *home,
		       void (*fn)(void *arg), void *arg)
{
	j->home = home;
	j->pending = 1;
	j->fn = fn;
	j->arg = arg;
}

void reactor_join_add(struct reactor_join *j, unsigned n)
{
	__atomic_add_fetch(&j->pending, n, __ATOMIC_RELAXED);
}

void reactor_join_done(struct reactor_join *j)
{
	/* Release: what this part wrote is seen by fn on the home thread
	 * (the mailbox's lock orders it too). */
	if (__atomic_sub_fetch(&j->pending, 1, __ATOMIC_ACQ_REL) != 0)
		return;
	if (j->home)
		reactor_send(j->home, &j->msg, j->fn, j->arg);
	else
		j->fn(j->arg);
}

static void barrier_pass_done(struct reactor_defer *d)
{
	struct reactor_barrier_part *p = d->arg;

	reactor_join_done(p->j);
}

static void barrier_arrived(void *arg)
{
	struct reactor_barrier_part *p = arg;

	/* After the next pass's fd events: whatever was ready when the
	 * message came has been dispatched, and its deferred work run. */
	reactor_defer_init(&p->defer, barrier_pass_done, p);
	reactor_defer_next(p->r, &p->defer);
}

void reactor_barrier(struct reactor *const *rs, int n,
		     struct reactor_barrier_part *parts,
		     struct reactor_join *j)
{
	if (n <= 0)
		return;
	reactor_join_add(j, (unsigned)n);
	for (int i = 0; i < n; i++) {
		parts[i].r = rs[i];
		parts[i].j = j;
		reactor_send(rs[i], &parts[i].msg, barrier_arrived, &parts[i]);
	}
}

int reactor_post(struct reactor *r, void (*fn)(void *arg), void *arg)
{
	struct reactor_msg *m = malloc(sizeof(*m));

	if (!m)
		return -ENOMEM;
	m->next = NULL;
	m->fn = fn;
	m->arg = arg;
	m->owned = false;
	mbox_put(r, m);
	return 0;
}

void reactor_stop(struct reactor *r)
{
	__atomic_store_n(&r->stopping, true, __ATOMIC_RELEASE);
	mbox_kick(r);
}

/* ---- init -------------------------------------------------------------- */

static void engine_fini(struct reactor *r)
{
#ifdef HAVE_LIBURING
	ruring_fini(r);
#endif
	if (r->epfd >= 0)
		close(r->epfd);
	r->epfd = -1;
}

static void timerfd_ready(struct reactor *r, uint32_t events, void *arg)
{
	/* Nothing to read (edge-triggered): the pass it woke runs the
	 * timers that are due. */
}

int reactor_init(struct reactor *r, int index)
{
	int err;

	memset(r, 0, sizeof(*r));
	r->index = index;
	r->mbox_fd = r->tfd = -1;
	r->tfd_at = TFD_NONE;
	list_init(&r->deferred);
	list_init(&r->next_pass);
	r->epfd = -1;
	if (engine == REACTOR_URING) {
		err = ruring_init(r);
		if (err < 0)
			return err;
	} else {
		r->epfd = epoll_create1(EPOLL_CLOEXEC);
		if (r->epfd < 0)
			return -errno;
	}
	pthread_mutex_init(&r->mbox_lock, NULL);
	r->mbox_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (r->mbox_fd < 0) {
		err = -errno;
		goto fail;
	}
	r->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (r->tfd < 0) {
		err = -errno;
		goto fail;
	}
	err = reactor_add_fd(r, &r->mbox_rfd, r->mbox_fd, EPOLLIN, mbox_ready,
			     NULL);
	if (err)
		goto fail;
	err = reactor_add_fd(r, &r->tfd_rfd, r->tfd, EPOLLIN | EPOLLET,
			     timerfd_ready, NULL);
	if (err)
		goto fail;
	r->now_ns = reactor_now_ns();
	return 0;
fail:
	pthread_mutex_destroy(&r->mbox_lock);
	if (r->tfd >= 0)
		close(r->tfd);
	if (r->mbox_fd >= 0)
		close(r->mbox_fd);
	engine_fini(r);
	return err;
}

void reactor_fini(struct reactor *r)
{
	struct reactor_msg *m, *next;

	reactor_del_fd(r, &r->mbox_rfd);
	reactor_del_fd(r, &r->tfd_rfd);
	/* Messages never delivered are dropped; their owners are gone too. */
	for (m = r->mbox_head; m; m = next) {
		next = m->next;
		if (!m->owned)
			free(m);
	}
	r->mbox_head = r->mbox_tail = NULL;
	pthread_mutex_destroy(&r->mbox_lock);
	close(r->mbox_fd);
	close(r->tfd);
	engine_fini(r);
	r->mbox_fd = r->tfd = -1;
	heap_fini(&r->timers);
	while (!list_empty(&r->deferred))
		list_del(r->deferred.next);
	while (!list_empty(&r->next_pass))
		list_del(r->next_pass.next);
}

/* ---- fds --------------------------------------------------------------- */

int reactor_add_fd(struct reactor *r, struct reactor_fd *h, int fd,
		   uint32_t events, reactor_fd_fn fn, void *arg)
{
	struct epoll_event ev = { .events = events, .data.ptr = h };

	h->fd = fd;
	h->events = events;
	h->fn = fn;
	h->arg = arg;
	h->poll = NULL;
#ifdef HAVE_LIBURING
	if (r->ring)
		return ruring_add_fd(r, h);
#endif
	if (epoll_ctl(r->epfd, EPOLL_CTL_ADD, fd, &ev) < 0)
		return -errno;
	return 0;
}

int reactor_mod_fd(struct reactor *r, struct reactor_fd *h, uint32_t events)
{
	struct epoll_event ev = { .events = events, .data.ptr = h };

	if (h->events == events)
		return 0;
#ifdef HAVE_LIBURING
	if (r->ring) {
		int err = ruring_mod_fd(r, h, events);

		if (err == 0)
			h->events = events;
		return err;
	}
#endif
	if (epoll_ctl(r->epfd, EPOLL_CTL_MOD, h->fd, &ev) < 0)
		return -errno;
	h->events = events;
	return 0;
}

void reactor_del_fd(struct reactor *r, struct reactor_fd *h)
{
#ifdef HAVE_LIBURING
	if (r->ring) {
		ruring_del_fd(r, h);
		h->fd = -1;
		h->fn = NULL;
		return;
	}
#endif
	if (h->fd >= 0)
		epoll_ctl(r->epfd, EPOLL_CTL_DEL, h->fd, NULL);
	h->fd = -1;
	h->fn = NULL;
	if (tls_batch.r == r) {
		for (int i = tls_batch.next; i < tls_batch.n; i++)
			if (tls_batch.ev[i].data.ptr == h)
				tls_batch.ev[i].data.ptr = NULL;
	}
}

/* ---- timers: a min-heap on the deadline (tcq/heap.h), one timerfd ---- */

void reactor_timer_init(struct reactor_timer *t,
			void (*fn)(struct reactor_timer *t), void *arg)
{
	t->hn.key = 0;
	heap_node_init(&t->hn);
	t->fn = fn;
	t->arg = arg;
}

int reactor_timer_arm_at(struct reactor *r, struct reactor_timer *t,
			 uint64_t deadline_ns)
{
	/* The timerfd follows when the pass is about to sleep
	 * (wait_timeout). */
	t->hn.key = deadline_ns;
	if (heap_node_queued(&t->hn)) {
		heap_rekey(&r->timers, &t->hn);
		return 0;
	}
	if (heap_push(&r->timers, &t->hn) < 0) {
		/* No slot: the timer stays disarmed; say so. */
		log_err("reactor %d: cannot arm timer: out of memory",
			r->index);
		return -ENOMEM;
	}
	return 0;
}

void reactor_timer_arm(struct reactor *r, struct reactor_timer *t,
		       uint64_t delay_ms)
{
	reactor_timer_arm_at(r, t, reactor_now_ns() + delay_ms * 1000000ull);
}

void reactor_timer_cancel(struct reactor *r, struct reactor_timer *t)
{
	if (heap_node_queued(&t->hn))
		heap_remove(&r->timers, &t->hn);
}

static void run_timers(struct reactor *r)
{
	/* Bounded by the number armed at entry so a timer re-armed with a
	 * zero delay fires once per pass, not forever. */
	int budget = r->timers.len;
	struct heap_node *top;

	while (budget-- > 0 && (top = heap_top(&r->timers)) &&
	       top->key <= r->now_ns) {
		struct reactor_timer *t = container_of(top, struct reactor_timer,
						       hn);

		heap_remove(&r->timers, top);
		t->fn(t);
	}
}

/* ---- deferred calls ---------------------------------------------------- */

void reactor_defer_init(struct reactor_defer *d,
			void (*fn)(struct reactor_defer *d), void *arg)
{
	list_init(&d->node);
	d->fn = fn;
	d->arg = arg;
}

void reactor_defer(struct reactor *r, struct reactor_defer *d)
{
	if (!list_linked(&d->node))
		list_add_tail(&d->node, &r->deferred);
}

void reactor_defer_cancel(struct reactor_defer *d)
{
	list_del(&d->node);
}

void reactor_defer_next(struct reactor *r, struct reactor_defer *d)
{
	if (!list_linked(&d->node))
		list_add_tail(&d->node, &r->next_pass);
}

/* Moves the calls put off to this pass behind the ones its fd events
 * queued (the I/O they submit goes first). */
static void take_next_pass(struct reactor *r)
{
	struct list_node *first = r->next_pass.next, *last = r->next_pass.prev;

	if (list_empty(&r->next_pass))
		return;
	first->prev = r->deferred.prev;
	r->deferred.prev->next = first;
	last->next = &r->deferred;
	r->deferred.prev = last;
	list_init(&r->next_pass);
}

static void run_deferred(struct reactor *r)
{
	for (int round = 0; round < REACTOR_DEFER_ROUNDS; round++) {
		struct list_node batch;

		if (list_empty(&r->deferred))
			return;
		/* Take this round's calls; calls they queue land on
		 * r->deferred for the next round. Cancelling a call still in
		 * batch just unlinks it from batch. */
		batch.next = r->deferred.next;
		batch.prev = r->deferred.prev;
		batch.next->prev = &batch;
		batch.prev->next = &batch;
		list_init(&r->deferred);
		while (!list_empty(&batch)) {
			struct reactor_defer *d =
				list_first_entry(&batch, struct reactor_defer,
						 node);

			list_del(&d->node);
			d->fn(d);
		}
	}
}

/* ---- loop -------------------------------------------------------------- */

/* Sets the timerfd to dl (absolute, monotonic); 0 or -errno. */
static int timerfd_set(struct reactor *r, uint64_t dl)
{
	struct itimerspec its = { 0 };

	its.it_value.tv_sec = (time_t)(dl / 1000000000ull);
	its.it_value.tv_nsec = (long)(dl % 1000000000ull);
	r->tfd_sets++;
	if (timerfd_settime(r->tfd, TFD_TIMER_ABSTIME, &its, NULL) < 0) {
		int err = -errno;

		log_err("reactor %d: timerfd_settime: %s", r->index,
			strerror(errno));
		r->tfd_at = TFD_NONE;
		return err;
	}
	r->tfd_at = dl;
	return 0;
}

/* epoll's timeout for this pass: 0 when there is work now, else -1 with
 * the timerfd set no later than the earliest timer (see the top). */
static int wait_timeout(struct reactor *r)
{
	struct heap_node *top = heap_top(&r->timers);
	uint64_t now, ms;

	if (!list_empty(&r->deferred) || !list_empty(&r->next_pass) ||
	    __atomic_load_n(&r->stopping, __ATOMIC_ACQUIRE))
		return 0;
	if (!top)
		return -1;
	now = reactor_now_ns();
	if (top->key <= now)
		return 0;
	if (r->tfd_at <= now)
		r->tfd_at = TFD_NONE;	/* fired (or fires now, for nothing) */
	if (top->key >= r->tfd_at || timerfd_set(r, top->key) == 0)
		return -1;
	/* No timerfd: epoll's timeout, rounded up so we never wake just
	 * before the deadline and spin. */
	ms = (top->key - now + 999999) / 1000000;
	return ms > 3600000 ? 3600000 : (int)ms;
}

static void dispatch(struct reactor *r, struct epoll_event *ev, int n)
{
	tls_batch.r = r;
	tls_batch.ev = ev;
	tls_batch.n = n;
	for (int i = 0; i < n; i++) {
		struct reactor_fd *h = ev[i].data.ptr;

		tls_batch.next = i + 1;
		if (!h || !h->fn)
			continue;
		h->fn(r, ev[i].events, h->arg);
	}
	tls_batch.r = NULL;
	tls_batch.n = 0;
}

/* The io_uring pass's wait and completions (reactor_uring.c). */
static void ruring_pass_io(struct reactor *r)
{
#ifdef HAVE_LIBURING
	ruring_wait(r, wait_timeout(r));
	r->now_ns = reactor_now_ns();
	ruring_dispatch(r);
#endif
}

int reactor_run(struct reactor *r)
{
	struct epoll_event ev[REACTOR_MAX_EVENTS];
	struct reactor *prev = tls_self;

	tls_self = r;
	r->thread = pthread_self();
	for (;;) {
		if (r->ring) {
			ruring_pass_io(r);
		} else {
			int n = epoll_wait(r->epfd, ev, REACTOR_MAX_EVENTS,
					   wait_timeout(r));

			if (n < 0) {
				if (errno != EINTR)
					log_err("reactor %d: epoll_wait: %s",
						r->index, strerror(errno));
				n = 0;
			}
			r->now_ns = reactor_now_ns();
			dispatch(r, ev, n);
		}
		run_timers(r);
		take_next_pass(r);
		run_deferred(r);
		if (__atomic_load_n(&r->stopping, __ATOMIC_ACQUIRE))
			break;
	}
	/* Cleared on the way out so the reactor can be run again. */
	__atomic_store_n(&r->stopping, false, __ATOMIC_RELEASE);
	tls_self = prev;
	return 0;
}
