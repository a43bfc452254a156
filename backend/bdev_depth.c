/*
 * The LUN's queue depth, across reactors. queue_depth bounds the I/Os in
 * flight at a bdev over all of its per-reactor queues, with no lock:
 *
 * The bound. budget.inflight counts the LUN's I/Os in flight. An I/O
 * starts only by raising it from below queue_depth with a compare-and-
 * swap, and its completion lowers it: it never passes the depth, and
 * tcqctl's "now" (inflight) and "peak" (the largest value a CAS wrote)
 * count the same thing. A depth lowered live lets nothing start until
 * enough of what is in flight completed; a raised one admits more at the
 * next completion.
 *
 * Waiting in order, without starvation. An I/O that finds no slot waits
 * in its queue's list, in arrival order, with a ticket: its place among
 * the LUN's waiters (budget.tickets, taken only when waiting). While
 * anything waits (waitmask != 0) new I/O skips the fast path and waits
 * behind, and a free slot goes to the oldest waiter of the LUN: a queue
 * starts its head only while no other queue shows an older one
 * (wait_head[]). So a reactor that frees and refills slots on its own
 * thread cannot keep another reactor's waiters out; the only I/O that can
 * pass a waiter is one that read waitmask just before the waiter set it.
 *
 * Wake-ups. A queue whose head cannot start shows the head's ticket
 * (wait_head[i], then bit i of waitmask), then tries for a slot again; a
 * completion lowers inflight, then reads waitmask. Both store, then load,
 * sequentially consistent, so at least one side sees the other: either
 * the waiter finds the slot itself, or the completion sees the waiter. A
 * slot that may be free while the oldest head is another queue's is
 * handed on (hand_on): a wake-up posted (reactor_post) to that queue's
 * reactor, which starts what it may and hands on in turn; kickmask keeps
 * it to one wake-up on its way per queue. No timer and no polling: a
 * reactor with nothing to start sleeps.
 *
 * Lifetime. A wake-up names the bdev, not a queue (a queue may go while
 * the wake-up is in a mailbox): the woken reactor looks its own queue up
 * on its own thread, and counting the wake-up off (budget.kicks) is its
 * last touch of b. bdev_queue_put refuses while any wake-up is posted, so
 * a LUN released live (each reactor puts its queue, then b is closed) is
 * not closed under one.
 *
 * Cost on the data path while nothing waits: a submission reads waitmask
 * (on a line written only when I/O waits, so it stays shared in every
 * cache) and raises inflight with one CAS; a completion lowers inflight
 * with one atomic subtract and reads waitmask.
 */
#include <stdatomic.h>
#include "backend/bdev.h"
#include "backend/bdev_priv.h"
#include "backend/prefetch.h"
#include "tcq/compiler.h"
#include "tcq/log.h"
#include "tcq/reactor.h"

static inline uint32_t depth_of(const struct bdev *b)
{
	uint32_t d = atomic_load_explicit(&b->queue_depth,
					  memory_order_relaxed);

	return d ? d : 1;
}

static inline int qidx(const struct bdev_queue *q)
{
	return q->reactor->index;
}

/* One slot of the LUN's budget; false when it is at its depth. The load
 * is sequentially consistent: a waiter tries after showing its head. */
static bool slot_take(struct bdev *b)
{
	uint32_t depth = depth_of(b);
	uint32_t n = atomic_load(&b->budget.inflight);
	uint32_t p;

	do {
		if (n >= depth)
			return false;
	} while (!atomic_compare_exchange_weak(&b->budget.inflight, &n,
					       n + 1));
	p = atomic_load_explicit(&b->budget.peak, memory_order_relaxed);
	while (n + 1 > p && !atomic_compare_exchange_weak_explicit(
			&b->budget.peak, &p, n + 1, memory_order_relaxed,
			memory_order_relaxed))
		;
	return true;
}

/* io holds a slot: to the backend. */
static void io_start(struct bdev_queue *q, struct bdev_io *io)
{
	q->inflight++;
	q->reactor->io_inflight++;
	if (io->submitter)
		q->reactor->io_task_inflight++;
	io->start_ns = q->reactor->now_ns;
	q->bdev->ops->submit(q, io);
	bdev_queue_flush_later(q);
}

/* The queue whose shown head is the oldest of the LUN's waiters (-1:
 * none shows one), and that head. */
static int oldest(struct bdev *b, uint64_t *head)
{
	uint64_t mask = atomic_load(&b->budget.waitmask);
	int best = -1;

	*head = BDEV_NO_TICKET;
	while (mask) {
		int i = __builtin_ctzll(mask);
		uint64_t h = atomic_load(&b->wait_head[i]);

		mask &= mask - 1;
		if (h < *head) {
			*head = h;
			best = i;
		}
	}
	return best;
}

static bool older_elsewhere(struct bdev *b, const struct bdev_queue *q,
			    uint64_t ticket)
{
	uint64_t head;
	int i = oldest(b, &head);

	return i >= 0 && i != qidx(q) && head < ticket;
}

/* Shows q's head ticket to the other reactors (head first, then the bit:
 * who sees the bit sees the head). */
static void publish(struct bdev_queue *q, uint64_t head)
{
	struct bdev *b = q->bdev;

	atomic_store(&b->wait_head[qidx(q)], head);
	if (q->published == BDEV_NO_TICKET)
		atomic_fetch_or(&b->budget.waitmask, 1ull << qidx(q));
	q->published = head;
}

static void unpublish(struct bdev_queue *q)
{
	struct bdev *b = q->bdev;

	if (q->published == BDEV_NO_TICKET)
		return;
	atomic_fetch_and(&b->budget.waitmask, ~(1ull << qidx(q)));
	atomic_store(&b->wait_head[qidx(q)], BDEV_NO_TICKET);
	q->published = BDEV_NO_TICKET;
}

static void wake(void *arg);

/* Posts a wake-up to queue i's reactor, unless one is on its way. */
static void kick(struct bdev *b, int i)
{
	uint64_t bit = 1ull << i;

	if (atomic_fetch_or(&b->budget.kickmask, bit) & bit)
		return;
	atomic_fetch_add(&b->budget.kicks, 1);
	if (reactor_post(b->qreactor[i], wake, b) < 0) {
		/* Out of memory: the next completion tries again. */
		atomic_fetch_and(&b->budget.kickmask, ~bit);
		atomic_fetch_sub(&b->budget.kicks, 1);
		log_warn("%s: cannot wake reactor %d",
			 b->spec ? b->spec : b->ops->name, i);
	}
}

/* A slot may be free: the oldest waiter gets it. Its own queue's is the
 * caller's to start (it just tried); another's is woken. */
static void hand_on(struct bdev *b, const struct bdev_queue *self)
{
	uint64_t head;
	int i;

	if (atomic_load(&b->budget.inflight) >= depth_of(b))
		return;
	i = oldest(b, &head);
	if (i >= 0 && i != qidx(self))
		kick(b, i);
}

/* Starts q's waiting I/O, oldest first, while the LUN has slots and no
 * older waiter is elsewhere; shows what is left. On q's thread. */
static void queue_run(struct bdev_queue *q)
{
	struct bdev *b = q->bdev;
	struct bdev_io *io;

	for (;;) {
		while (!list_empty(&q->waiting)) {
			io = list_first_entry(&q->waiting, struct bdev_io,
					      node);
			if (older_elsewhere(b, q, io->ticket) ||
			    !slot_take(b))
				break;
			list_del(&io->node);
			io_start(q, io);
		}
		if (list_empty(&q->waiting)) {
			unpublish(q);
			break;
		}
		io = list_first_entry(&q->waiting, struct bdev_io, node);
		/* Shown before the last try: a completion after it sees
		 * the head and hands its slot on. */
		if (io->ticket == q->published)
			break;
		publish(q, io->ticket);
		/* Then try once more (store, then load). */
	}
	hand_on(b, q);
}

/* A posted wake-up, on the reactor of the queue it is for. */
static void wake(void *arg)
{
	struct bdev *b = arg;
	struct reactor *r = reactor_self();
	struct bdev_queue *q;

	/* Cleared first: a hand-on that finds the bit still set knows this
	 * run has not looked at the budget yet, and posts no other. */
	atomic_fetch_and(&b->budget.kickmask, ~(1ull << r->index));
	q = __atomic_load_n(&b->queues[r->index], __ATOMIC_ACQUIRE);
	if (q)
		queue_run(q);
	/* The last touch of b: once no wake-up is counted, b may go. */
	atomic_fetch_sub_explicit(&b->budget.kicks, 1, memory_order_release);
}

void bdev_depth_submit(struct bdev_queue *q, struct bdev_io *io)
{
	struct bdev *b = q->bdev;

	/* Nothing waits anywhere: a slot, if there is one. */
	if (likely(list_empty(&q->waiting) &&
		   !atomic_load_explicit(&b->budget.waitmask,
					 memory_order_relaxed)) &&
	    slot_take(b)) {
		io_start(q, io);
		return;
	}
	/* Behind every older waiter of the LUN. */
	io->ticket = atomic_fetch_add_explicit(&b->budget.tickets, 1,
					       memory_order_relaxed);
	list_add_tail(&io->node, &q->waiting);
	queue_run(q);
}

void bdev_complete(struct bdev_io *io, int result)
{
	struct bdev_queue *q = io->q;
	struct bdev *b = q->bdev;
	struct reactor *r = q->reactor;
	struct prefetch *pf;
	/* Pass-granular service time: 0 for a backend that completes in the
	 * pass that submitted (null, ram). */
	int64_t lat = (int64_t)(r->now_ns - io->start_ns);

	io->result = result;
	io->end_ns = r->now_ns;
	q->inflight--;
	r->io_inflight--;
	if (io->submitter)
		r->io_task_inflight--;
	r->io_lat_ns += (lat - r->io_lat_ns) / 8;
	atomic_fetch_sub(&b->budget.inflight, 1);	/* then read waitmask */
	/* A write's range dropped again from the read-ahead before it is
	 * reported: one started meanwhile may hold what it overwrote. */
	pf = __atomic_load_n(&b->prefetch, __ATOMIC_ACQUIRE);
	if (unlikely(pf) && io->op != BDEV_READ && io->op != BDEV_FLUSH &&
	    prefetch_active(pf))
		prefetch_write(pf, io->offset, io->len);
	io->done(io);		/* may free io or submit more */
	/* A queue with waiters shows them, so waitmask is 0 unless the LUN
	 * is at its depth. */
	if (unlikely(atomic_load(&b->budget.waitmask)))
		queue_run(q);	/* its own oldest first, then hands on */
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
