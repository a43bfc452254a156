/*
 * Sequential prefetch (read-ahead) of one LUN's backend, for a medium no
 * page cache reads ahead of (O_DIRECT). bdev.c calls it from its submit
 * path, for any backend whose LUN turned it on (bdev_set_prefetch); the
 * rules are prefetch.c's header comment.
 */
#ifndef TCQ_PREFETCH_H
#define TCQ_PREFETCH_H
#include <stdbool.h>
#include <stdint.h>

struct bdev;
struct bdev_queue;
struct bdev_io;
struct bdev_prefetch_stats;
struct prefetch;

/* Sequential streams tracked per queue (reactor) of a LUN, the least
 * recently used replaced. */
#define PREFETCH_STREAMS 8
/* Reads in a row a stream makes before it reads ahead. */
#define PREFETCH_TRIGGER 3
/* The largest read-ahead (the window's cap; also prefetch_max / 4). */
#define PREFETCH_WINDOW_MAX (1u << 20)
/* Buffers held at most (filling, valid, or being copied from). */
#define PREFETCH_MAX_BUFS 32

/* Off, with no buffer; NULL: out of memory. */
struct prefetch *prefetch_new(struct bdev *b);
/* Nothing of it in flight (every queue of b torn down). */
void prefetch_free(struct prefetch *pf);
/* Any thread: on or off, and the bytes its buffers may hold. Off drops
 * every buffer; a lower max drops the least recently used until the rest
 * fit. */
void prefetch_set(struct prefetch *pf, bool on, uint64_t max);
/* Every buffer dropped (a resize: the medium changed under it). */
void prefetch_drop_all(struct prefetch *pf);

/* On q's reactor, for a checked READ: true when prefetch took io (copied
 * from a buffer and completed by a deferred call, waiting for a buffer
 * being filled, or sent to the disk followed by a read-ahead); false: the
 * caller submits io (off, or a read no stream and no buffer concerns). */
bool prefetch_read(struct prefetch *pf, struct bdev_queue *q,
		   struct bdev_io *io);
/* A write of any kind to [off, off + len): every buffer it overlaps is
 * dropped, one being filled is never installed. Called as the write is
 * submitted and again as it completes (before its done). */
void prefetch_write(struct prefetch *pf, uint64_t off, uint64_t len);
/* Is anything to drop for a write (a buffer filling or valid)? One
 * load: the write path's test before prefetch_write. */
bool prefetch_active(const struct prefetch *pf);

void prefetch_stats(struct prefetch *pf, struct bdev_prefetch_stats *st);
#endif
