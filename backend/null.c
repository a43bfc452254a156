/*
 * null: stores nothing, reads return zeros. Completion is deferred to the
 * end of the pass so callers see the same completion context as with a
 * real device. Useful to measure the target without storage cost.
 * Options: size=N[KMGT] (default 1 GiB, or params->size).
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "backend/bdev.h"
#include "backend/bdev_priv.h"
#include "tcq/compiler.h"

static int null_queue_init(struct bdev *b, struct bdev_queue *q)
{
	struct bdev_cq *cq = malloc(sizeof(*cq));

	if (!cq)
		return -1;
	bdev_cq_init(cq, q->reactor, true);
	q->priv = cq;
	return 0;
}

static void null_queue_fini(struct bdev_queue *q)
{
	bdev_cq_fini(q->priv);
	free(q->priv);
	q->priv = NULL;
}

static void null_submit(struct bdev_queue *q, struct bdev_io *io)
{
	if (io->op == BDEV_READ)
		if (!bdev_is_zero_region(io->buf))
			memset(io->buf, 0, io->len);
	bdev_cq_push(q->priv, io, 0);
}

/* No medium: any size will do. */
static int null_resize(struct bdev *b, uint64_t *size, bool shrink, char *err,
		       size_t errlen)
{
	if (!*size) {
		snprintf(err, errlen, "null: a size is needed");
		return -1;
	}
	return 0;
}

/* Nothing is ever stored: nothing allocated, all of it available. */
static int null_space(struct bdev *b, uint64_t *allocated,
		      uint64_t *available)
{
	*allocated = 0;
	*available = b->size;
	return 0;
}

static int null_read_sync(struct bdev *b, uint64_t off, void *buf, size_t len)
{
	memset(buf, 0, len);
	return 0;
}

static const struct bdev_ops null_ops = {
	.name = "null",
	.queue_init = null_queue_init,
	.queue_fini = null_queue_fini,
	.submit = null_submit,
	.resize = null_resize,
	.space = null_space,
	.read_sync = null_read_sync,
};

struct null_opts {
	uint64_t size;		/* 0: the LUN's size, else 1 GiB */
};

static const struct null_opts null_defaults;

static const struct bdev_opt null_keys[] = {
	{ .key = "size", .type = BDEV_OPT_SIZE, .min = 1,
	  .offset = offsetof(struct null_opts, size),
	  .help = "capacity (default: the LUN's size, else 1 GiB)" },
};

const struct bdev_opts_def bdev_null_opts = {
	.backend = "null", .opts = null_keys, .nopts = ARRAY_SIZE(null_keys),
	.size = sizeof(struct null_opts), .defaults = &null_defaults,
};

struct bdev *bdev_null_open(const char *opts, const struct bdev_params *p,
			    char *err, size_t errlen)
{
	struct null_opts o = null_defaults;
	uint64_t size;
	struct bdev *b;

	if (bdev_opts_parse(&bdev_null_opts, opts, &o, NULL, err, errlen) < 0)
		return NULL;
	size = o.size ? o.size : p->size ? p->size : (1ull << 30);
	b = bdev_alloc(&null_ops, p, size, err, errlen);
	if (b)
		b->thin = true;	/* discards are free and read back zeros */
	if (b)
		b->zero_reads = true;
	return b;
}
