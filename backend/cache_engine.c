/*
 * cache: the chunk map and the write-back engine (see cache.c). Dirty
 * blocks reach the base by write-back, each run of a chunk one write;
 * a flush snapshots what must be written and waits for it, then flushes
 * the base; the background timer writes back what stayed dirty long
 * enough.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "backend/cache_priv.h"
#include "tcq/log.h"

/* ---- chunk table ------------------------------------------------------- */

struct chunk *chunk_get(struct cache *c, uint64_t ci, bool create)
{
	uint64_t top = ci / PAGE_CHUNKS;
	struct chunk **page, *ch;

	if (top >= c->ntop)
		return NULL;
	page = c->table[top];
	if (!page) {
		if (!create)
			return NULL;
		page = calloc(PAGE_CHUNKS, sizeof(*page));
		if (!page)
			return NULL;
		c->table[top] = page;
	}
	ch = page[ci % PAGE_CHUNKS];
	if (ch || !create)
		return ch;
	ch = calloc(1, sizeof(*ch));
	if (!ch)
		return NULL;
	ch->data = aligned_alloc(WB_ALIGN, (size_t)CH_BLOCKS * c->bs);
	if (!ch->data) {
		free(ch);
		return NULL;
	}
	ch->idx = ci;
	list_init(&ch->link);
	page[ci % PAGE_CHUNKS] = ch;
	return ch;
}

void chunk_free(struct cache *c, struct chunk *ch)
{
	c->table[ch->idx / PAGE_CHUNKS][ch->idx % PAGE_CHUNKS] = NULL;
	list_del(&ch->link);
	free(ch->data);
	free(ch);
}

/* Frees clean chunks no read in flight may still need. */
void clean_reap(struct cache *c)
{
	uint64_t oldest = UINT64_MAX;

	if (!list_empty(&c->reads))
		oldest = list_first_entry(&c->reads, struct wrap_io, link)->seq;
	while (!list_empty(&c->clean)) {
		struct chunk *ch = list_first_entry(&c->clean, struct chunk,
						    link);

		if (ch->clean_seq >= oldest)
			break;
		chunk_free(c, ch);
	}
}

/* Bookkeeping after a chunk's bitmaps changed. */
void chunk_settle(struct cache *c, struct chunk *ch)
{
	if (ch->counted && !(ch->fdirty | ch->fwb)) {
		ch->counted = false;
		c->fl_remaining--;
	}
	if (ch->dirty | ch->inwb) {
		if (ch->where != CH_NONDURABLE) {
			list_del(&ch->link);
			list_add_tail(&ch->link, &c->nondurable);
			ch->where = CH_NONDURABLE;
		}
		return;
	}
	if (!ch->present) {
		chunk_free(c, ch);
		return;
	}
	if (ch->where != CH_CLEAN) {
		list_del(&ch->link);
		ch->clean_seq = ++c->seq;
		list_add_tail(&ch->link, &c->clean);
		ch->where = CH_CLEAN;
	}
}

/* ---- completing upper I/O from any thread ------------------------------ */

static void cache_post_cb(void *arg)
{
	struct bdev_io *io = arg;
	struct cache_q *cq = io->q->priv;

	bdev_cq_push(&cq->done, io, io->result);
}

/* Completes io on its own queue's reactor, in a later pass. */
void cache_finish(struct bdev_io *io, int rc)
{
	struct reactor *self = reactor_self();
	struct cache_q *cq = io->q->priv;

	if (!self || self == io->q->reactor) {
		bdev_cq_push(&cq->done, io, rc);
		return;
	}
	io->result = rc;
	if (reactor_post(io->q->reactor, cache_post_cb, io) < 0)
		log_err("cache: cannot post a completion: I/O is lost");
}

/* ---- write-back -------------------------------------------------------- */

static void cache_wb_start(struct cache_q *cq, struct chunk *ch);

static void wb_done(struct bdev_io *bio)
{
	struct cache_wb *wb = bio->ctx;
	struct cache_q *cq = wb->cq;
	struct cache *c = cq->c;
	struct chunk *ch = wb->ch;

	pthread_mutex_lock(&c->lock);
	if (bio->result && !wb->error)
		wb->error = bio->result;
	if (--wb->pending > 0) {
		pthread_mutex_unlock(&c->lock);
		return;
	}
	ch->inwb &= ~wb->bits;
	ch->fwb &= ~wb->bits;
	if (wb->error) {
		/* Keep the data dirty (a drive would retry); a flush that
		 * waited for it fails. */
		if (c->fl_running)
			c->fl_error = wb->error;
		if (!ch->dirty)
			ch->since_ns = reactor_now_ns();
		ch->dirty |= wb->bits & ch->present;
	}
	free(wb->buf);
	free(wb);
	if (c->fl_running && !c->through && (ch->fdirty & ~ch->inwb)) {
		/* The write-back that was in flight at the snapshot held older
		 * data; now the snapshot's data can go. */
		cache_wb_start(cq, ch);
	}
	chunk_settle(c, ch);
	if (!c->through)
		through_retry(cq);
	flush_check(cq);
	clean_reap(c);
	pthread_mutex_unlock(&c->lock);
}

/* Writes the chunk's dirty blocks that have no write-back in flight. */
static void cache_wb_start(struct cache_q *cq, struct chunk *ch)
{
	struct cache *c = cq->c;
	uint64_t bits = ch->dirty & ~ch->inwb;
	struct cache_wb *wb;
	size_t off = 0;
	unsigned i = 0;

	if (!bits || c->through)
		return;
	wb = calloc(1, sizeof(*wb));
	if (!wb)
		return;
	/* Each run gets its own page-aligned piece, fine for O_DIRECT. */
	wb->buf = aligned_alloc(WB_ALIGN, (size_t)CH_BLOCKS * c->bs +
					  (CH_BLOCKS / 2) * WB_ALIGN);
	if (!wb->buf) {
		free(wb);
		return;
	}
	wb->cq = cq;
	wb->ch = ch;
	wb->bits = bits;
	ch->dirty &= ~bits;
	ch->inwb |= bits;
	ch->fwb |= ch->fdirty & bits;
	ch->fdirty &= ~bits;
	while (i < CH_BLOCKS) {
		struct bdev_io *io;
		unsigned s, e;
		size_t len;

		if (!(bits & (1ull << i))) {
			i++;
			continue;
		}
		for (s = i, e = i; e < CH_BLOCKS && (bits & (1ull << e)); e++)
			;
		len = (size_t)(e - s) * c->bs;
		memcpy(wb->buf + off, ch->data + (size_t)s * c->bs, len);
		io = &wb->io[wb->pending++];
		io->op = BDEV_WRITE;
		io->flags = 0;
		io->offset = (ch->idx * CH_BLOCKS + s) * c->bs;
		io->len = len;
		io->buf = wb->buf + off;
		io->done = wb_done;
		io->ctx = wb;
		off += (len + WB_ALIGN - 1) & ~(size_t)(WB_ALIGN - 1);
		i = e;
	}
	for (int k = 0, n = wb->pending; k < n; k++)
		bdev_submit(cq->bq, &wb->io[k]);
}

/* ---- flush ------------------------------------------------------------- */

static void flush_begin(struct cache_q *cq);

static void flush_base_done(struct bdev_io *bio)
{
	struct cache_q *cq = bio->ctx;
	struct cache *c = cq->c;
	int rc;

	pthread_mutex_lock(&c->lock);
	rc = bio->result ? bio->result : c->fl_error;
	while (!list_empty(&c->fl_active)) {
		struct bdev_io *io = list_first_entry(&c->fl_active,
						      struct bdev_io, node);

		list_del(&io->node);
		cache_finish(io, rc);
	}
	c->fl_running = false;
	if (!list_empty(&c->fl_next))
		flush_begin(cq);
	pthread_mutex_unlock(&c->lock);
}

/* Once the snapshot is on the base, flush the base itself. */
void flush_check(struct cache_q *cq)
{
	struct cache *c = cq->c;

	if (!c->fl_running || c->fl_base || c->fl_remaining > 0)
		return;
	c->fl_base = true;
	memset(&c->fl_io, 0, sizeof(c->fl_io));
	c->fl_io.op = BDEV_FLUSH;
	c->fl_io.done = flush_base_done;
	c->fl_io.ctx = cq;
	bdev_submit(cq->bq, &c->fl_io);
}

void flush_drive(struct cache_q *cq)
{
	struct list_node *pos;

	list_for_each(pos, &cq->c->nondurable) {
		struct chunk *ch = container_of(pos, struct chunk, link);

		if (ch->fdirty & ~ch->inwb)
			cache_wb_start(cq, ch);
	}
}

static void flush_begin(struct cache_q *cq)
{
	struct cache *c = cq->c;
	struct list_node *pos;

	/* Everyone waiting joins this flush: all their writes are cached. */
	while (!list_empty(&c->fl_next)) {
		struct list_node *n = c->fl_next.next;

		list_del(n);
		list_add_tail(n, &c->fl_active);
	}
	c->fl_running = true;
	c->fl_base = false;
	c->fl_error = 0;
	c->fl_remaining = 0;
	list_for_each(pos, &c->nondurable) {
		struct chunk *ch = container_of(pos, struct chunk, link);

		ch->fdirty = ch->dirty;
		ch->fwb = ch->inwb & ~ch->dirty;
		ch->counted = (ch->fdirty | ch->fwb) != 0;
		if (ch->counted)
			c->fl_remaining++;
	}
	if (!c->through)
		flush_drive(cq);
	flush_check(cq);
}

void flush_join(struct cache_q *cq, struct bdev_io *io)
{
	struct cache *c = cq->c;

	list_add_tail(&io->node, &c->fl_next);
	if (!c->fl_running)
		flush_begin(cq);
}

/* ---- data into and out of the chunks ----------------------------------- */

int cache_write(struct cache *c, const struct bdev_io *io)
{
	uint64_t blk = io->offset / c->bs, n = io->len / c->bs;
	const unsigned char *src = io->buf;

	while (n) {
		unsigned first = (unsigned)(blk % CH_BLOCKS);
		unsigned cnt = CH_BLOCKS - first;
		struct chunk *ch;
		uint64_t m;

		if (cnt > n)
			cnt = (unsigned)n;
		ch = chunk_get(c, blk / CH_BLOCKS, true);
		if (!ch)
			return -ENOMEM;	/* earlier chunks hold the start */
		memcpy(ch->data + (size_t)first * c->bs, src,
		       (size_t)cnt * c->bs);
		m = bit_range(first, cnt);
		if (!ch->dirty)
			ch->since_ns = reactor_now_ns();
		ch->present |= m;
		ch->dirty |= m;
		chunk_settle(c, ch);
		src += (size_t)cnt * c->bs;
		blk += cnt;
		n -= cnt;
	}
	return 0;
}

/* Copies the cached blocks of io's range over what the base returned. */
void cache_overlay(struct cache *c, struct bdev_io *io)
{
	uint64_t blk = io->offset / c->bs, n = io->len / c->bs;
	unsigned char *dst = io->buf;

	while (n) {
		unsigned first = (unsigned)(blk % CH_BLOCKS);
		unsigned cnt = CH_BLOCKS - first;
		struct chunk *ch;

		if (cnt > n)
			cnt = (unsigned)n;
		ch = chunk_get(c, blk / CH_BLOCKS, false);
		if (ch && (ch->present & bit_range(first, cnt))) {
			for (unsigned i = first; i < first + cnt; i++)
				if (ch->present & (1ull << i))
					memcpy(dst + (size_t)(i - first) * c->bs,
					       ch->data + (size_t)i * c->bs,
					       c->bs);
		}
		dst += (size_t)cnt * c->bs;
		blk += cnt;
		n -= cnt;
	}
}

/* ---- background write-back --------------------------------------------- */

void wb_tick(struct reactor_timer *t)
{
	struct cache *c = t->arg;
	struct cache_q *cq = c->home;
	uint64_t now = reactor_now_ns(), age = c->o.writeback_ms * 1000000ull;
	struct list_node *pos;

	pthread_mutex_lock(&c->lock);
	if (!c->through)
		list_for_each(pos, &c->nondurable) {
			struct chunk *ch = container_of(pos, struct chunk, link);

			if ((ch->dirty & ~ch->inwb) && now - ch->since_ns >= age)
				cache_wb_start(cq, ch);
		}
	pthread_mutex_unlock(&c->lock);
	reactor_timer_arm(cq->q->reactor, &c->wb_timer, c->o.writeback_ms);
}
