/*
 * cache: a volatile write cache in front of another backend, to test
 * what an initiator's flushes and FUA writes are worth. Writes complete
 * once copied into memory; the data reaches the base on SYNCHRONIZE
 * CACHE, on a FUA write (which flushes like SYNCHRONIZE CACHE before it
 * completes) or by background write-back; reads see cached data.
 * bdev_cache_crash() drops all data not yet durable, as a power cut.
 * Options:
 *   writeback=MS   write back blocks dirty for MS milliseconds (0, the
 *                  default: only flushes and FUA writes write back)
 *   base=SPEC      the wrapped backend (last; see wrap.h)
 *
 * The cache is one per LUN, shared by the reactor queues under a mutex
 * (a test backend: simplicity over scaling). Data lives in chunks of 64
 * blocks found through a two-level table; each chunk has bitmaps:
 * present (cache holds the block), dirty (newer than the base), inwb
 * (a write-back of the block is in flight: never two at once, so the
 * base cannot see them land out of order). A flush snapshots which
 * blocks must reach the base (fdirty: needs a write-back started from
 * now on; fwb: needs the one in flight) and completes once none remain,
 * followed by a flush of the base. One flush runs at a time; flushes
 * arriving meanwhile share the next one.
 *
 * A read goes to the base and then overlays the cached blocks. A chunk
 * whose write-back completed is kept (clean) until every read that
 * started before then has finished, else such a read could miss both
 * the cache and the new base data.
 *
 * This file is the bdev (I/O paths, crash, setup); the chunk map and
 * the write-back engine are in cache_engine.c (cache_priv.h).
 */
#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "backend/cache_priv.h"
#include "tcq/compiler.h"
#include "tcq/log.h"

static const struct bdev_ops cache_ops;

/* ---- reads: the base's data, then the cached blocks over it ------------ */

static void read_done(struct bdev_io *bio)
{
	struct wrap_io *w = container_of(bio, struct wrap_io, bio);
	struct cache_q *cq = bio->ctx;
	struct cache *c = cq->c;
	struct bdev_io *up = w->up;
	int rc = bio->result;

	pthread_mutex_lock(&c->lock);
	list_del(&w->link);
	if (!rc)
		cache_overlay(c, up);
	clean_reap(c);
	pthread_mutex_unlock(&c->lock);
	wrap_io_put(&cq->pool, w);
	bdev_complete(up, rc);
}

static void cache_read(struct cache_q *cq, struct bdev_io *io)
{
	struct cache *c = cq->c;
	struct wrap_io *w = wrap_io_get(&cq->pool);

	if (!w) {
		bdev_cq_push(&cq->done, io, -ENOMEM);
		return;
	}
	w->up = io;
	bdev_io_forward(&w->bio, io, read_done, cq);
	pthread_mutex_lock(&c->lock);
	w->seq = ++c->seq;
	list_add_tail(&w->link, &c->reads);
	pthread_mutex_unlock(&c->lock);
	bdev_submit(cq->bq, &w->bio);
}

/* ---- DISCARD and WRITE ZEROES: straight to the base -------------------- */

/* Calls fn on every existing chunk touching io's range with its mask;
 * stops and returns false when fn does. */
static bool range_walk(struct cache *c, const struct bdev_io *io,
		       bool (*fn)(struct cache *, struct chunk *, uint64_t))
{
	uint64_t blk = io->offset / c->bs, end = blk + io->len / c->bs;

	while (blk < end) {
		uint64_t ci = blk / CH_BLOCKS;
		unsigned first = (unsigned)(blk % CH_BLOCKS);
		unsigned cnt = CH_BLOCKS - first;
		struct chunk *ch;

		if (!c->table[ci / PAGE_CHUNKS]) {	/* skip a whole page */
			blk = (ci / PAGE_CHUNKS + 1) * PAGE_CHUNKS * CH_BLOCKS;
			continue;
		}
		if (cnt > end - blk)
			cnt = (unsigned)(end - blk);
		ch = chunk_get(c, ci, false);
		if (ch && !fn(c, ch, bit_range(first, cnt)))
			return false;
		blk += cnt;
	}
	return true;
}

static bool no_wb(struct cache *c, struct chunk *ch, uint64_t m)
{
	return !(ch->inwb & m);
}

static bool forget(struct cache *c, struct chunk *ch, uint64_t m)
{
	ch->present &= ~m;
	ch->dirty &= ~m;
	ch->fdirty &= ~m;
	chunk_settle(c, ch);
	return true;
}

static void through_done(struct bdev_io *bio)
{
	struct wrap_io *w = container_of(bio, struct wrap_io, bio);
	struct cache_q *cq = bio->ctx;
	struct cache *c = cq->c;
	struct bdev_io *up = w->up;
	int rc = bio->result;

	wrap_io_put(&cq->pool, w);
	pthread_mutex_lock(&c->lock);
	if (--c->through == 0) {
		through_retry(cq);
		if (c->fl_running)
			flush_drive(cq);
	}
	cache_finish(up, rc);
	pthread_mutex_unlock(&c->lock);
}

/* Starts io at the base unless a write-back to its range is in flight
 * (it could land after us). The cached blocks of the range are dropped:
 * the base has the final word. */
static bool through_try(struct cache_q *cq, struct bdev_io *io)
{
	struct cache *c = cq->c;
	struct wrap_io *w;

	if (!range_walk(c, io, no_wb))
		return false;
	w = wrap_io_get(&cq->pool);
	if (!w) {
		cache_finish(io, -ENOMEM);
		return true;
	}
	range_walk(c, io, forget);
	c->through++;
	w->up = io;
	bdev_io_forward(&w->bio, io, through_done, cq);
	bdev_submit(cq->bq, &w->bio);
	flush_check(cq);
	return true;
}

void through_retry(struct cache_q *cq)
{
	struct list_node *pos, *tmp;

	list_for_each_safe(pos, tmp, &cq->c->blocked) {
		struct bdev_io *io = container_of(pos, struct bdev_io, node);

		list_del(&io->node);
		if (!through_try(cq, io)) {
			/* Back in its place: tmp still follows it. */
			list_insert_between(&io->node, tmp->prev, tmp);
		}
	}
}

/* ---- submit ------------------------------------------------------------ */

static void cache_submit(struct bdev_queue *q, struct bdev_io *io)
{
	struct cache_q *cq = q->priv;
	struct cache *c = cq->c;
	int rc;

	if (io->op == BDEV_READ) {
		cache_read(cq, io);
		return;
	}
	pthread_mutex_lock(&c->lock);
	switch (io->op) {
	case BDEV_WRITE:
		rc = cache_write(c, io);
		if (rc || !(io->flags & BDEV_FUA))
			bdev_cq_push(&cq->done, io, rc);
		else
			flush_join(cq, io);	/* FUA: durable first */
		break;
	case BDEV_FLUSH:
		flush_join(cq, io);
		break;
	case BDEV_DISCARD:
	case BDEV_WRITE_ZEROES:
		if (!list_empty(&c->blocked) || !through_try(cq, io))
			list_add_tail(&io->node, &c->blocked);
		break;
	default:
		bdev_cq_push(&cq->done, io, -EINVAL);
		break;
	}
	pthread_mutex_unlock(&c->lock);
}

/* ---- crash ------------------------------------------------------------- */

static void cache_kick(void *arg)
{
	struct cache *c = arg;

	pthread_mutex_lock(&c->lock);
	if (c->home)
		flush_check(c->home);
	pthread_mutex_unlock(&c->lock);
}

int bdev_cache_crash(struct bdev *b)
{
	struct reactor *self = reactor_self();
	struct list_node *pos, *tmp;
	struct cache *c;
	long dropped = 0;

	if (!b)
		return -EINVAL;
	/* Through test wrappers over a cache ("delay:...,base=cache:..."). */
	if (b->ops != &cache_ops) {
		if (strcmp(b->ops->name, "delay") && strcmp(b->ops->name, "fault"))
			return -EINVAL;
		return bdev_cache_crash(*(struct bdev **)b->priv);
	}
	c = b->priv;
	pthread_mutex_lock(&c->lock);
	list_for_each_safe(pos, tmp, &c->nondurable) {
		struct chunk *ch = container_of(pos, struct chunk, link);

		dropped += __builtin_popcountll(ch->dirty);
		/* Write-backs in flight still land, like data already on its
		 * way to the medium; the struct lives until they finish. */
		ch->present = ch->dirty = ch->fdirty = ch->fwb = 0;
		chunk_settle(c, ch);
	}
	list_for_each_safe(pos, tmp, &c->clean)
		chunk_free(c, container_of(pos, struct chunk, link));
	if (c->fl_running && !c->fl_base && c->fl_remaining == 0) {
		struct bdev_queue *q = NULL;

		if (self && self->index >= 0 && self->index < BDEV_MAX_QUEUES)
			q = b->queues[self->index];
		if (q)
			flush_check(q->priv);
		else if (c->home &&
			 reactor_post(c->home->q->reactor, cache_kick, c) < 0)
			log_err("cache: cannot restart a flush after crash");
	}
	pthread_mutex_unlock(&c->lock);
	log_info("cache %s: crash: %ld unflushed block%s dropped",
		 b->spec ? b->spec : "", dropped, dropped == 1 ? "" : "s");
	return dropped > INT_MAX ? INT_MAX : (int)dropped;
}

/* ---- setup ------------------------------------------------------------- */

static void cache_queue_fini(struct bdev_queue *q)
{
	struct cache_q *cq = q->priv;
	struct cache *c;

	if (!cq)
		return;
	c = cq->c;
	pthread_mutex_lock(&c->lock);
	if (c->home == cq) {
		reactor_timer_cancel(q->reactor, &c->wb_timer);
		c->home = NULL;
	}
	pthread_mutex_unlock(&c->lock);
	wrap_queue_put_base(c->base, cq->bq, q->reactor);
	bdev_cq_fini(&cq->done);
	wrap_pool_fini(&cq->pool);
	free(cq);
	q->priv = NULL;
}

static int cache_queue_init(struct bdev *b, struct bdev_queue *q)
{
	struct cache *c = b->priv;
	struct cache_q *cq = calloc(1, sizeof(*cq));

	if (!cq)
		return -1;
	cq->c = c;
	cq->q = q;
	wrap_pool_init(&cq->pool);
	bdev_cq_init(&cq->done, q->reactor, true);
	q->priv = cq;
	cq->bq = bdev_queue_get(c->base, q->reactor);
	if (!cq->bq) {
		cache_queue_fini(q);
		return -1;
	}
	pthread_mutex_lock(&c->lock);
	if (!c->home) {
		c->home = cq;
		if (c->o.writeback_ms)
			reactor_timer_arm(q->reactor, &c->wb_timer,
					  c->o.writeback_ms);
	}
	pthread_mutex_unlock(&c->lock);
	return 0;
}

static void cache_close(struct bdev *b)
{
	struct cache *c = b->priv;
	long lost = 0;

	if (!c)
		return;
	for (uint64_t t = 0; t < c->ntop; t++) {
		if (!c->table[t])
			continue;
		for (int i = 0; i < PAGE_CHUNKS; i++) {
			struct chunk *ch = c->table[t][i];

			if (ch) {
				lost += __builtin_popcountll(ch->dirty);
				free(ch->data);
				free(ch);
			}
		}
		free(c->table[t]);
	}
	if (lost)
		log_warn("cache %s: closed with %ld unflushed block%s",
			 b->spec ? b->spec : "", lost, lost == 1 ? "" : "s");
	free(c->table);
	bdev_close(c->base);
	pthread_mutex_destroy(&c->lock);
	free(c);
	b->priv = NULL;
}

static const struct bdev_ops cache_ops = {
	.name = "cache",
	.queue_init = cache_queue_init,
	.queue_fini = cache_queue_fini,
	.submit = cache_submit,
	.close = cache_close,
	.lba_status = wrap_lba_status,
	.resize = wrap_resize,
	.space = wrap_space,
};

static const struct cache_opts cache_defaults;

static const struct bdev_opt cache_keys[] = {
	{ .key = "writeback", .type = BDEV_OPT_UINT, .max = 86400000,
	  .offset = offsetof(struct cache_opts, writeback_ms),
	  .help = "write back blocks dirty this many milliseconds (0: only "
		  "flushes and FUA writes do)" },
};

const struct bdev_opts_def bdev_cache_opts = {
	.backend = "cache", .opts = cache_keys,
	.nopts = ARRAY_SIZE(cache_keys), .size = sizeof(struct cache_opts),
	.defaults = &cache_defaults, .wraps = true,
};

struct bdev *bdev_cache_open(const char *opts, const struct bdev_params *p,
			     char *err, size_t errlen)
{
	struct bdev *b = wrap_open(&cache_ops, &bdev_cache_opts,
				   sizeof(struct cache),
				   offsetof(struct cache, o), opts, p, err,
				   errlen);
	struct cache *c;
	uint64_t nchunks;

	if (!b)
		return NULL;
	c = b->priv;
	c->bs = b->block_size;
	nchunks = (b->size / c->bs + CH_BLOCKS - 1) / CH_BLOCKS;
	c->ntop = (nchunks + PAGE_CHUNKS - 1) / PAGE_CHUNKS;
	c->table = calloc(c->ntop, sizeof(*c->table));
	if (!c->table) {
		snprintf(err, errlen, "out of memory");
		bdev_close(c->base);
		free(c);
		bdev_free(b);
		return NULL;
	}
	pthread_mutex_init(&c->lock, NULL);
	list_init(&c->nondurable);
	list_init(&c->clean);
	list_init(&c->reads);
	list_init(&c->blocked);
	list_init(&c->fl_active);
	list_init(&c->fl_next);
	reactor_timer_init(&c->wb_timer, wb_tick, c);
	return b;
}
