/*
 * What the two files of the cache backend share (cache.c tells the
 * design): cache_engine.c keeps the chunk map and moves dirty data to
 * the base (write-back, flushes, background write-back); cache.c is the
 * bdev: reads, writes, DISCARD/WRITE ZEROES, crash and setup. The
 * functions below but wb_tick (which takes it) expect c->lock held.
 * Private to backend/.
 */
#ifndef TCQ_BACKEND_CACHE_PRIV_H
#define TCQ_BACKEND_CACHE_PRIV_H
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include "backend/bdev_priv.h"
#include "backend/wrap.h"

#define CH_BLOCKS 64
#define PAGE_CHUNKS 512
#define WB_ALIGN 4096u

enum ch_where { CH_NONE, CH_NONDURABLE, CH_CLEAN };

struct chunk {
	uint64_t idx;
	uint64_t present, dirty, inwb;
	uint64_t fdirty, fwb;	/* what the running flush waits for */
	uint64_t since_ns;	/* dirty since (background write-back) */
	uint64_t clean_seq;	/* c->seq when it became clean */
	struct list_node link;	/* nondurable or clean list */
	enum ch_where where;
	bool counted;		/* in c->fl_remaining */
	unsigned char *data;	/* CH_BLOCKS blocks */
};

struct cache_q;

struct cache_opts {
	uint64_t writeback_ms;	/* 0: only flushes and FUA write back */
};

struct cache {
	struct bdev *base;	/* first: wrap_lba_status */
	pthread_mutex_t lock;
	uint32_t bs;
	uint64_t ntop;
	struct chunk ***table;
	struct list_node nondurable;	/* dirty or inwb, FIFO */
	struct list_node clean;		/* by clean_seq */
	struct list_node reads;		/* in flight, by start seq */
	struct list_node blocked;	/* DISCARD/WRITE ZEROES waiting */
	uint64_t seq;
	uint32_t through;		/* DISCARD/WRITE ZEROES at the base */
	/* flush */
	struct list_node fl_active, fl_next;
	bool fl_running, fl_base;
	int fl_remaining, fl_error;
	struct bdev_io fl_io;
	struct cache_opts o;	/* background write-back */
	struct cache_q *home;
	struct reactor_timer wb_timer;
};

struct cache_q {
	struct cache *c;
	struct bdev_queue *q, *bq;
	struct wrap_pool pool;
	struct bdev_cq done;
};

struct cache_wb {
	struct cache_q *cq;
	struct chunk *ch;
	uint64_t bits;
	int pending, error;
	unsigned char *buf;
	struct bdev_io io[CH_BLOCKS / 2];
};

static inline uint64_t bit_range(unsigned first, unsigned cnt)
{
	return (cnt >= 64 ? ~0ull : ((1ull << cnt) - 1)) << first;
}

/* The chunk holding chunk index ci; created (zeroed) when create. */
struct chunk *chunk_get(struct cache *c, uint64_t ci, bool create);
void chunk_free(struct cache *c, struct chunk *ch);
/* Bookkeeping after a chunk's bitmaps changed. */
void chunk_settle(struct cache *c, struct chunk *ch);
/* Frees clean chunks no read in flight may still need. */
void clean_reap(struct cache *c);
/* Copies io's data into the cache (dirty); -ENOMEM part way. */
int cache_write(struct cache *c, const struct bdev_io *io);
/* Copies the cached blocks of io's range over what the base returned. */
void cache_overlay(struct cache *c, struct bdev_io *io);

/* Completes io on its own queue's reactor, in a later pass. */
void cache_finish(struct bdev_io *io, int rc);

/* io (a FLUSH, or a FUA write already cached) completes once what was
 * dirty before it is on the base and the base flushed. */
void flush_join(struct cache_q *cq, struct bdev_io *io);
/* Once the running flush's snapshot is on the base, flush the base. */
void flush_check(struct cache_q *cq);
/* Starts the write-backs the running flush waits for. */
void flush_drive(struct cache_q *cq);
/* The background write-back timer (c->o.writeback_ms). */
void wb_tick(struct reactor_timer *t);

/* cache.c: retries the DISCARD/WRITE ZEROES a write-back held up. */
void through_retry(struct cache_q *cq);
#endif
