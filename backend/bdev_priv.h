/*
 * Helpers shared by the backends (not part of the bdev contract).
 *
 * Backend constructors allocate the bdev with bdev_alloc(), fill b->priv
 * and friends, and on failure call bdev_free(). ops->close frees only the
 * backend's own state; bdev_close frees the rest.
 */
#ifndef TCQ_BDEV_PRIV_H
#define TCQ_BDEV_PRIV_H
#include <stddef.h>
#include "backend/bdev.h"
#include "backend/bdev_opts.h"

#define BDEV_DEFAULT_QUEUE_DEPTH 128
/* The queue_depth a wrapper (or the disk model) opens its base with: the
 * bdev above holds the LUN's budget, and a depth changed live on it must
 * not meet a second cap fixed at open. */
#define BDEV_DEPTH_UNBOUNDED UINT32_MAX

/* Validates block size (0 -> 512; 512 or 4096) and that it divides size. */
struct bdev *bdev_alloc(const struct bdev_ops *ops,
			const struct bdev_params *p, uint64_t size,
			char *err, size_t errlen);
void bdev_free(struct bdev *b);

/* "123", "64k", "10M", "2G", "1T" (binary multiples). 0 or -EINVAL.
 * (backend/bdev_opt_value.c, with the rest of the option grammar) */
int bdev_parse_size(const char *s, uint64_t *out);

/* A backend by name, for bdev_open: its constructor and option table. */
struct bdev_backend {
	const char *name;
	struct bdev *(*open)(const char *opts, const struct bdev_params *p,
			     char *err, size_t errlen);
	const struct bdev_opts_def *opts;
};

/* The backend called name[0..len); NULL when there is none. */
const struct bdev_backend *bdev_backend_find(const char *name, size_t len);

/* Each backend's option table, defined next to its constructor. */
extern const struct bdev_opts_def bdev_aio_opts, bdev_null_opts,
	bdev_crash_opts,
	bdev_ram_opts, bdev_delay_opts, bdev_fault_opts, bdev_cache_opts,
	bdev_rbd_opts, bdev_disk_opts;

/*
 * A completion list drained by a deferred call: lets a backend that
 * finishes I/O synchronously still complete it on the next pass, like a
 * real device would. counted: complete through bdev_complete() (the I/O
 * was counted in flight); else call io->done() directly.
 */
struct bdev_cq {
	struct list_node list;
	struct reactor_defer defer;
	struct reactor *reactor;
	bool counted;
};

void bdev_cq_init(struct bdev_cq *cq, struct reactor *r, bool counted);
void bdev_cq_push(struct bdev_cq *cq, struct bdev_io *io, int result);
/* Cancels the pending deferred call; queued I/Os are dropped. */
void bdev_cq_fini(struct bdev_cq *cq);

/* bdev_depth.c: io passed bdev_check; it starts now or waits for a slot
 * of the LUN's budget. */
void bdev_depth_submit(struct bdev_queue *q, struct bdev_io *io);
/* bdev.c: io, never counted in flight, completes (io->done) with result
 * on the next pass of q's reactor (a read prefetch served). */
void bdev_queue_done_later(struct bdev_queue *q, struct bdev_io *io,
			   int result);
/* bdev.c: runs ops->flush at the end of this pass, when there is one. */
void bdev_queue_flush_later(struct bdev_queue *q);
#endif
