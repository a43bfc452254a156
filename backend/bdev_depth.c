/*
 * The LUN's queue depth, across reactors. queue_depth bounds the I/Os in
 * flight at a bdev over all of its per-reactor queues, with no lock:
 *
 * Tickets. Every I/O that passed bdev_check takes a ticket, its place in
 * the LUN's arrival order (budget.tickets), and may start once its ticket
 * is below done + queue_depth, done being the number of I/Os the bdev
 * ever completed. Every started I/O had a ticket below done + depth, done
 * only grows and tickets are distinct, so at most done + depth I/Os ever
 * started: at most depth are in flight. A depth lowered live lets nothing
 * new start until enough of what is in flight completed; a raised one
 * admits more at the next completion.
 *
 * Order, and no starvation. A queue takes its tickets in its own arrival
 * order, so its wait list is sorted and only its head need be watched.
 * Slots go out in ticket order over the whole LUN (the lowest waiting
 * ticket is always among those admitted next), so a busy reactor that
 * frees and refills slots on its own thread cannot keep another
 * reactor's waiters out: theirs are older, and are admitted first.
 *
 * Wake-ups. A queue whose head cannot start shows the head's ticket to
 * the others (wait_head[i], and bit i of waitmask), then reads done
 * again; a completion adds to done, then reads waitmask and the heads.
 * Both sides store, then load, sequentially consistent: at least one sees
 * the other, so either the waiter finds its slot itself or the completion
 * sees the head. A completion starts its own queue's admitted waiters and
 * posts a wake-up (reactor_post) to each other queue whose head is now
 * admitted; kickmask keeps that to one on its way per queue. No timer, no
 * polling: a reactor with nothing admitted sleeps.
 *
 * Lifetime. A wake-up names the bdev, not a queue (a queue may go while
 * the wake-up is in a mailbox): the woken reactor looks its own queue up
 * on its own thread, and counting the wake-up off (budget.kicks) is its
 * last touch of b. bdev_queue_put refuses while any wake-up is posted, so
 * a LUN released live (each reactor puts its queue, then b is closed) is
 * not closed under one.
 *
 * Cost on the data path: an I/O that starts at once takes a ticket, reads
 * done and counts itself in flight (two atomic adds, one load; a CAS
 * when it raises the peak); a completion takes itself out of inflight,
 * adds to done and reads waitmask, which is 0 unless the LUN is at its
 * depth. The budget shares a cache line between reactors, and nothing
 * else does.
 */
#include <stdatomic.h>
#include "backend/bdev.h"
#include "backend/bdev_priv.h"
#include "tcq/compiler.h"
#include "tcq/log.h"
#include "tcq/reactor.h"

static inline uint64_t depth_of(const struct bdev *b)
{
	uint32_t d = atomic_load_explicit(&b->queue_depth,
					  memory_order_relaxed);

	return d ? d : 1;
}

/* Tickets below this may start (sequentially consistent: see the top). */
static inline uint64_t admit_below(struct bdev *b)
{
	return atomic_load(&b->budget.done) + depth_of(b);
}

static inline uint64_t qbit(const struct bdev_queue *q)
{
	return 1ull << q->reactor->index;
}

static void io_start(struct bdev_queue *q, struct bdev_io *io)
{
	struct bdev *b = q->bdev;
	uint32_t n = atomic_fetch_add_explicit(&b->budget.inflight, 1,
					       memory_order_relaxed) + 1;
	uint32_t p = atomic_load_explicit(&b->budget.peak,
					  memory_order_relaxed);

	while (n > p && !atomic_compare_exchange_weak_explicit(
			&b->budget.peak, &p, n, memory_order_relaxed,
			memory_order_relaxed))
		;
	q->inflight++;
	q->reactor->io_inflight++;
	io->start_ns = q->reactor->now_ns;
	b->ops->submit(q, io);
	bdev_queue_flush_later(q);
}

/* Shows q's head ticket to the other reactors' completions. */
static void publish(struct bdev_queue *q, uint64_t head)
{
	struct bdev *b = q->bdev;

	atomic_store(&b->wait_head[q->reactor->index], head);
	if (q->published == BDEV_NO_TICKET)
		atomic_fetch_or(&b->budget.waitmask, qbit(q));
	q->published = head;
}

static void unpublish(struct bdev_queue *q)
{
	struct bdev *b = q->bdev;

	if (q->published == BDEV_NO_TICKET)
		return;
	atomic_fetch_and(&b->budget.waitmask, ~qbit(q));
	atomic_store(&b->wait_head[q->reactor->index], BDEV_NO_TICKET);
	q->published = BDEV_NO_TICKET;
}

/* Starts q's waiting I/O, oldest first, while the LUN admits it; shows
 * what is left to the other reactors. On q's thread. */
static void queue_run(struct bdev_queue *q)
{
	struct bdev *b = q->bdev;

	for (;;) {
		uint64_t below = admit_below(b);
		struct bdev_io *io;

		while (!list_empty(&q->waiting)) {
			io = list_first_entry(&q->waiting, struct bdev_io,
					      node);
			if (io->ticket >= below)
				break;
			list_del(&io->node);
			io_start(q, io);
		}
		if (list_empty(&q->waiting)) {
			unpublish(q);
			return;
		}
		io = list_first_entry(&q->waiting, struct bdev_io, node);
		/* Shown before done was read: a completion after that read
		 * sees it and wakes us. */
		if (io->ticket == q->published)
			return;
		publish(q, io->ticket);
		/* Then read done again (store, then load). */
	}
}

/* A posted wake-up, on the reactor of the queue it is for. */
static void wake(void *arg)
{
	struct bdev *b = arg;
	struct reactor *r = reactor_self();
	struct bdev_queue *q;

	/* Cleared first: a completion that finds the bit still set knows
	 * this run has not read done yet, and posts no other. */
	atomic_fetch_and(&b->budget.kickmask, ~(1ull << r->index));
	q = __atomic_load_n(&b->queues[r->index], __ATOMIC_ACQUIRE);
	if (q)
		queue_run(q);
	/* The last touch of b: once no wake-up is counted, b may go. */
	atomic_fetch_sub_explicit(&b->budget.kicks, 1, memory_order_release);
}

/* After a completion: wakes the queues of mask whose head is admitted. */
static void wake_others(struct bdev *b, uint64_t mask)
{
	uint64_t below = admit_below(b);

	while (mask) {
		int i = __builtin_ctzll(mask);
		uint64_t bit = 1ull << i;

		mask &= mask - 1;
		if (atomic_load(&b->wait_head[i]) >= below)
			continue;	/* no slot for its head yet */
		if (atomic_fetch_or(&b->budget.kickmask, bit) & bit)
			continue;	/* one is on its way */
		atomic_fetch_add(&b->budget.kicks, 1);
		if (reactor_post(b->qreactor[i], wake, b) < 0) {
			/* Out of memory: the next completion tries again. */
			atomic_fetch_and(&b->budget.kickmask, ~bit);
			atomic_fetch_sub(&b->budget.kicks, 1);
			log_warn("%s: cannot wake reactor %d",
				 b->spec ? b->spec : b->ops->name, i);
		}
	}
}

void bdev_depth_submit(struct bdev_queue *q, struct bdev_io *io)
{
	struct bdev *b = q->bdev;

	/* Only the ticket's uniqueness and per-queue order matter. */
	io->ticket = atomic_fetch_add_explicit(&b->budget.tickets, 1,
					       memory_order_relaxed);
	/* Anything already waiting here goes first: keep arrival order. */
	if (likely(list_empty(&q->waiting)) && io->ticket < admit_below(b)) {
		io_start(q, io);
		return;
	}
	list_add_tail(&io->node, &q->waiting);
	queue_run(q);
}

void bdev_complete(struct bdev_io *io, int result)
{
	struct bdev_queue *q = io->q;
	struct bdev *b = q->bdev;
	struct reactor *r = q->reactor;
	/* Pass-granular service time: 0 for a backend that completes in the
	 * pass that submitted (null, ram). */
	int64_t lat = (int64_t)(r->now_ns - io->start_ns);
	uint64_t others;

	io->result = result;
	q->inflight--;
	r->io_inflight--;
	r->io_lat_ns += (lat - r->io_lat_ns) / 8;
	/* Out of inflight before done grows: inflight never counts more
	 * than the tickets admitted minus done. */
	atomic_fetch_sub_explicit(&b->budget.inflight, 1,
				  memory_order_relaxed);
	atomic_fetch_add(&b->budget.done, 1);	/* then read waitmask */
	io->done(io);		/* may free io or submit more */
	queue_run(q);
	others = atomic_load(&b->budget.waitmask) & ~qbit(q);
	if (unlikely(others))
		wake_others(b, others);
}

void bdev_depth_counts(const struct bdev *b, uint32_t *now, uint32_t *peak)
{
	uint32_t n = atomic_load_explicit(&b->budget.inflight,
					  memory_order_relaxed);
	uint32_t p = atomic_load_explicit(&b->budget.peak,
					  memory_order_relaxed);

	/* An I/O counts itself in flight before it raises the peak: a
	 * reader in between would see now above the peak. */
	*now = n;
	*peak = p > n ? p : n;
}

void bdev_peak_reset(struct bdev *b)
{
	atomic_store_explicit(&b->budget.peak,
			      atomic_load_explicit(&b->budget.inflight,
						   memory_order_relaxed),
			      memory_order_relaxed);
}
