/*
 * disk:elevator=cfq: Linux 2.6.29's CFQ (block/cfq-iosched.c of v2.6.29)
 * in front of a modelled rotating disk, with its defaults from that
 * source:
 *   cfq_quantum = 4               at most 4 of a queue at the drive while
 *                                 other queues wait
 *   cfq_slice_sync = HZ / 10      100 ms time slice of a sync queue
 *   cfq_slice_async = HZ / 25     40 ms of an async queue
 *   cfq_slice_idle = HZ / 125     8 ms idling on a sync queue that emptied
 *   cfq_fifo_expire = { HZ / 4, HZ / 8 }   250 ms async, 125 ms sync
 *   cfq_back_max = 16 * 1024      KiB: a backward seek up to 16 MiB ...
 *   cfq_back_penalty = 2          ... counts twice its distance
 *   cfq_slice_async_rq = 2        (see below)
 *   CFQ_MIN_TT = 2                ms of idling for a seeky process
 *   CFQ_SLICE_SCALE = 5, CFQ_HW_QUEUE_MIN = 5, sample_valid: > 80
 *
 * What a process is to Linux, a submitter is here: the I_T nexus that
 * sent the command (struct dm_req's who, from bdev_io's submitter). Its
 * sync requests (reads, FUA writes, flushes: Linux's rq_is_sync, a read or
 * a write marked sync) go to its own queue; its async ones (writes without
 * FUA: the write cache is on, or sbc would have set FUA) go to the one
 * async queue all submitters share, as 2.6.29 keeps one per priority
 * (cfqd->async_cfqq).
 *
 * The algorithm, as in the source:
 * - the service tree: a queue with requests is keyed now + (busy queues -
 *   1) x (180 ms - its slice) + what is left of its last slice
 *   (cfq_slice_offset, cfq_service_tree_add), re-keyed when its slice
 *   ends; the smallest key is served next;
 * - a slice begins at the queue's first completion in it (slice_new) and
 *   ends at a completion or dispatch after slice_sync or slice_async;
 * - the active queue dispatches while its slice lasts (cfq_select_queue);
 *   once empty it keeps the disk while its requests are at the drive, or
 *   while the idle timer runs: a sync queue whose last request completed
 *   with nothing queued idles slice_idle (CFQ_MIN_TT when seeky), and a
 *   request arriving meanwhile is dispatched at once -- a sequential
 *   reader keeps the disk while it thinks (cfq_arm_slice_timer);
 * - within a queue: the oldest request once a slice if it has waited
 *   fifo_expire (cfq_check_fifo), otherwise the best by cfq_choose_req
 *   from where the last dispatch ended: forward by distance, backward
 *   within back_max at twice the distance, beyond that after everything
 *   else, lowest first. Linux keeps the same choice incrementally;
 * - no async dispatch while a sync request is at the drive (sync_flight),
 *   and at most quantum of the active queue at the drive while another
 *   queue waits;
 * - a sync request preempts an async slice; a request close to the head
 *   (within the idling queue's mean seek) preempts an idling queue; the
 *   preempted queue keeps what was left of its slice (cfq_should_preempt);
 * - think time and seek distance as exponential means of the submitter
 *   (cfq_update_io_thinktime/_seektime): a submitter whose mean think time
 *   exceeds slice_idle loses its idle window, as does a seeky one on a
 *   drive that queues (hw_tag).
 *
 * Left out, and why it does not change a test like kara-2009 (N
 * sequential readers of one priority): io priorities and classes (all
 * requests are best effort at priority 4, so every slice is the base
 * slice), group scheduling (not in 2.6.29), front merges (tcq-bench
 * sends whole requests), metadata preference (no filesystem). hw_tag is
 * the drive's ncq >= CFQ_HW_QUEUE_MIN, what Linux's detection converges
 * to under load. slice_async_rq limits an async round to 2 x (2 + 2 x 3) =
 * 16 dispatches, more than one round of quantum 4 can make, so it never
 * acts at the default priority. Linux hands up to quantum requests of a
 * queue to the dispatch list at once; here each of the drive's free slots
 * is filled by one decision. More than DM_CFQ_QUEUES submitters with
 * requests at once share the last queue. A FLUSH drains the elevator: what
 * arrived before it goes in arrival order, then it, as Linux's barrier
 * does (cfq_forced_dispatch). Times are the model's nanoseconds where
 * Linux counts jiffies (at HZ = 250 every time above is a whole number
 * of 4 ms ticks, so only when a timer fires within its tick differs).
 */
#include "backend/disk_model_priv.h"

#define MS 1000000ll
#define CFQ_QUANTUM 4u
#define CFQ_SLICE_SYNC (100 * MS)
#define CFQ_SLICE_ASYNC (40 * MS)
#define CFQ_SLICE_IDLE (8 * MS)
#define CFQ_FIFO_SYNC (125 * MS)
#define CFQ_FIFO_ASYNC (250 * MS)
#define CFQ_BACK_MAX (16ull * 1024 * 2)	/* sectors: 16 MiB */
#define CFQ_BACK_PENALTY 2u
#define CFQ_MIN_TT (2 * MS)
#define CFQ_SLICE_SCALE 5
#define CFQ_HW_QUEUE_MIN 5u
#define CFQ_SEEKY_SECT (8u * 1024)	/* CIC_SEEKY: mean seek above 4 MiB */
#define SAMPLE_VALID(n) ((n) > 80)

static bool req_sync(const struct dm_req *r)
{
	return r->op == DM_READ || r->op == DM_FLUSH || r->fua;
}

static int64_t base_slice(bool sync)
{
	return sync ? CFQ_SLICE_SYNC : CFQ_SLICE_ASYNC;
}

/* cfq_prio_slice at priority prio (4 for every queue here) */
static int64_t prio_slice(bool sync, int prio)
{
	return base_slice(sync) + base_slice(sync) / CFQ_SLICE_SCALE *
				  (4 - prio);
}

static bool slice_used(const struct dm_cfq_queue *q, uint64_t t)
{
	return !q->slice_new && t >= q->slice_end;
}

static void tree_add(struct dm_cfq *c, struct dm_cfq_queue *q, uint64_t t,
		     bool front)
{
	int64_t key;

	if (front) {
		key = INT64_MIN;
	} else {
		int64_t busy = c->busy_queues ? c->busy_queues - 1 : 0;

		key = (int64_t)t + busy * (prio_slice(true, 0) -
					   prio_slice(q->sync, 4));
		key += q->slice_resid;
		q->slice_resid = 0;
	}
	if (q->rb_seq && key == q->rb_key)
		return;		/* same place */
	q->rb_key = key;
	q->rb_seq = ++c->seq;	/* after those of equal key */
}

static void slice_expired(struct dm_cfq *c, uint64_t t, bool timed_out)
{
	struct dm_cfq_queue *q = c->active;

	if (!q)
		return;
	if (q->wait_request)
		c->idle_until = DM_NONE;
	q->wait_request = false;
	if (timed_out && !q->slice_new)
		q->slice_resid = (int64_t)q->slice_end - (int64_t)t;
	if (q->on_rr)
		tree_add(c, q, t, false);
	c->active = NULL;
}

static void set_active(struct dm_cfq *c, struct dm_cfq_queue *q)
{
	if (q) {
		q->slice_end = 0;
		q->fifo_checked = false;
		q->slice_new = true;
	}
	c->active = q;
}

static struct dm_cfq_queue *tree_first(struct dm_cfq *c)
{
	struct dm_cfq_queue *best = NULL;

	for (unsigned i = 0; i < DM_CFQ_QUEUES; i++) {
		struct dm_cfq_queue *q = &c->q[i];

		if (q->on_rr && (!best || q->rb_key < best->rb_key ||
				 (q->rb_key == best->rb_key &&
				  q->rb_seq < best->rb_seq)))
			best = q;
	}
	return best;
}

static bool queue_idle(const struct dm_cfq *c, const struct dm_cfq_queue *q)
{
	return !q->queued && !q->dispatched && q != c->active;
}

/* The queue of r: the submitter's sync queue, or the shared async one. */
static struct dm_cfq_queue *queue_of(struct dm_cfq *c, const struct dm_req *r,
				     uint64_t t)
{
	bool sync = req_sync(r);
	const void *who = sync ? r->who : NULL;
	struct dm_cfq_queue *spare = NULL;

	for (unsigned i = 0; i < DM_CFQ_QUEUES; i++) {
		struct dm_cfq_queue *q = &c->q[i];

		if (q->taken && q->sync == sync && q->who == who)
			return q;
		if (!spare && (!q->taken || queue_idle(c, q)))
			spare = q;
	}
	if (!spare)
		return &c->q[DM_CFQ_QUEUES - 1];
	*spare = (struct dm_cfq_queue){ .who = who, .taken = true,
				       .sync = sync, .idle_window = sync,
				       .last_end = t };
	return spare;
}

/* cfq_update_io_thinktime, _seektime and cfq_update_idle_window */
static void update_history(const struct disk_model *m, struct dm_cfq_queue *q,
			   const struct dm_req *r, uint64_t t)
{
	uint64_t tt = t - q->last_end, sd, lim;

	if (tt > 2 * CFQ_SLICE_IDLE)
		tt = 2 * CFQ_SLICE_IDLE;
	q->ttime_samples = (7 * q->ttime_samples + 256) / 8;
	q->ttime_total = (7 * q->ttime_total + 256 * tt) / 8;
	q->ttime_mean = (q->ttime_total + 128) / q->ttime_samples;

	sd = r->lba > q->last_pos ? r->lba - q->last_pos : q->last_pos - r->lba;
	lim = q->seek_mean * 4 + (q->seek_samples <= 60 ? 2 * 1024 * 1024 :
							  2 * 1024 * 64);
	if (sd > lim)
		sd = lim;
	q->seek_samples = (7 * q->seek_samples + 256) / 8;
	q->seek_total = (7 * q->seek_total + 256 * sd) / 8;
	q->seek_mean = (q->seek_total + q->seek_samples / 2) / q->seek_samples;
	q->last_pos = r->lba + r->nsect;

	if (m->p.ncq >= CFQ_HW_QUEUE_MIN && q->seek_mean > CFQ_SEEKY_SECT)
		q->idle_window = false;
	else if (SAMPLE_VALID(q->ttime_samples))
		q->idle_window = q->ttime_mean <= CFQ_SLICE_IDLE;
}

static uint64_t dist_from(uint64_t a, uint64_t b)
{
	return a > b ? a - b : b - a;
}

/* cfq_should_preempt: may q, which just got r, take the disk now? */
static bool should_preempt(const struct dm_cfq *c, const struct dm_req *r,
			   uint64_t t)
{
	const struct dm_cfq_queue *a = c->active;

	if (!a)
		return false;
	if (slice_used(a, t))
		return true;
	if (req_sync(r) && !a->sync)
		return true;
	if (!a->wait_request)
		return false;
	/* as good as what the idling queue would send next (cfq_rq_close) */
	return SAMPLE_VALID(a->seek_samples) &&
	       dist_from(r->lba, c->last_pos) <= a->seek_mean;
}

void dm_cfq_add(struct disk_model *m, struct dm_req *r, uint64_t t)
{
	struct dm_cfq *c = &m->cfq;
	struct dm_cfq_queue *q;

	if (r->op == DM_FLUSH)
		return;		/* drains the elevator: dm_cfq_pick */
	q = queue_of(c, r, t);
	r->elv = q;
	q->queued++;
	if (!q->on_rr) {
		q->on_rr = true;
		c->busy_queues++;
		tree_add(c, q, t, false);
	}
	if (q->sync)
		update_history(m, q, r, t);
	if (q == c->active) {
		if (q->wait_request)	/* let it rip */
			c->idle_until = DM_NONE;
	} else if (should_preempt(c, r, t)) {
		slice_expired(c, t, true);
		tree_add(c, q, t, true);
		q->slice_end = 0;
		q->slice_new = true;
	}
}

/* cfq_select_queue: the queue to dispatch from, or NULL: wait (for the
 * active queue's requests at the drive, its idle timer, or work). */
static struct dm_cfq_queue *select_queue(struct dm_cfq *c, uint64_t t)
{
	struct dm_cfq_queue *q = c->active;

	if (q) {
		if (slice_used(q, t))
			goto expire;
		if (q->queued)
			return q;
		if ((c->idle_until != DM_NONE && t < c->idle_until) ||
		    (q->dispatched && q->idle_window))
			return NULL;
expire:
		slice_expired(c, t, false);
	}
	set_active(c, tree_first(c));
	return c->active;
}

/* cfq_choose_req from pos: which of a and b is better served next. */
static struct dm_req *choose(struct dm_req *a, struct dm_req *b, uint64_t pos)
{
	uint64_t da = 0, db = 0;
	bool wa = false, wb = false;

	if (!a)
		return b;
	if (req_sync(a) != req_sync(b))
		return req_sync(a) ? a : b;
	if (a->lba >= pos)
		da = a->lba - pos;
	else if (a->lba + CFQ_BACK_MAX >= pos)
		da = (pos - a->lba) * CFQ_BACK_PENALTY;
	else
		wa = true;
	if (b->lba >= pos)
		db = b->lba - pos;
	else if (b->lba + CFQ_BACK_MAX >= pos)
		db = (pos - b->lba) * CFQ_BACK_PENALTY;
	else
		wb = true;
	if (wa != wb)
		return wa ? b : a;
	if (wa)			/* both behind: the furthest back first */
		return a->lba <= b->lba ? a : b;
	if (da != db)
		return da < db ? a : b;
	return a->lba >= b->lba ? a : b;
}

/* The request q sends next: its expired oldest (once a slice), else the
 * best from where the last dispatch ended. */
static struct dm_req *next_of(struct disk_model *m, struct dm_cfq_queue *q,
			      uint64_t t)
{
	struct dm_req *oldest = NULL, *best = NULL;
	struct list_node *n;

	list_for_each(n, &m->host) {
		struct dm_req *r = list_entry(n, struct dm_req, node);

		if (r->elv != q)
			continue;
		if (!oldest)
			oldest = r;
		best = choose(best, r, m->cfq.last_pos);
	}
	if (!q->fifo_checked) {
		q->fifo_checked = true;
		if (t - oldest->arrive >= (uint64_t)(q->sync ? CFQ_FIFO_SYNC :
							      CFQ_FIFO_ASYNC))
			return oldest;
	}
	return best;
}

/* cfq_dispatch_insert: r leaves its queue for the drive. */
static struct dm_req *dispatch(struct dm_cfq *c, struct dm_req *r)
{
	struct dm_cfq_queue *q = r->elv;

	c->last_pos = r->lba + r->nsect;
	if (!q)
		return r;	/* a FLUSH */
	if (!--q->queued && q->on_rr) {
		q->on_rr = false;
		c->busy_queues--;
	}
	q->dispatched++;
	if (q->sync)
		c->sync_flight++;
	return r;
}

struct dm_req *dm_cfq_pick(struct disk_model *m, uint64_t t)
{
	struct dm_cfq *c = &m->cfq;
	struct dm_cfq_queue *q;
	struct list_node *n;

	list_for_each(n, &m->host) {
		if (list_entry(n, struct dm_req, node)->op == DM_FLUSH) {
			/* a barrier: forced dispatch in arrival order */
			slice_expired(c, t, false);
			return dispatch(c, list_first_entry(&m->host,
							    struct dm_req,
							    node));
		}
	}
	q = select_queue(c, t);
	if (!q)
		return NULL;
	if (q->dispatched >= CFQ_QUANTUM && c->busy_queues > 1)
		return NULL;
	if (c->sync_flight && !q->sync)
		return NULL;
	q->wait_request = false;
	c->idle_until = DM_NONE;
	return dispatch(c, next_of(m, q, t));
}

/* cfq_completed_request, with cfq_arm_slice_timer */
void dm_cfq_done(struct disk_model *m, struct dm_req *r, uint64_t t)
{
	struct dm_cfq *c = &m->cfq;
	struct dm_cfq_queue *q = r->elv;

	if (!q)
		return;
	q->dispatched--;
	if (q->sync) {
		c->sync_flight--;
		q->last_end = t;
	}
	if (c->active != q)
		return;
	if (q->slice_new) {
		q->slice_end = t + (uint64_t)prio_slice(q->sync, 4);
		q->slice_new = false;
	}
	if (slice_used(q, t)) {
		slice_expired(c, t, true);
	} else if (q->sync && !q->queued && q->idle_window && !m->ndrive) {
		uint64_t sl = CFQ_SLICE_IDLE;

		if (SAMPLE_VALID(q->seek_samples) &&
		    q->seek_mean > CFQ_SEEKY_SECT)
			sl = CFQ_MIN_TT;
		q->wait_request = true;
		c->idle_until = t + sl;
	}
}

uint64_t dm_cfq_wake(const struct disk_model *m, uint64_t t)
{
	uint64_t u = m->cfq.idle_until;

	return u != DM_NONE && u > t ? u : DM_NONE;
}
