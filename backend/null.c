/*
 * null: stores nothing, reads return zeros. Completion is deferred to the
 * end of the pass so callers see the same completion context as with a
 * real device. Useful to measure the target without storage cost.
 * Options: size=N[KMGT] (default 1 GiB, or params->size).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "backend/bdev.h"
#include "backend/bdev_priv.h"

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

static const struct bdev_ops null_ops = {
	.name = "null",
	.queue_init = null_queue_init,
	.queue_fini = null_queue_fini,
	.submit = null_submit,
};

struct bdev *bdev_null_open(const char *opts, const struct bdev_params *p,
			    char *err, size_t errlen)
{
	uint64_t size = p->size ? p->size : (1ull << 30);
	char key[32], val[64];
	struct bdev *b;
	int rc;

	while ((rc = bdev_opt_next(&opts, key, sizeof(key), val,
				   sizeof(val))) > 0) {
		if (!strcmp(key, "size")) {
			if (bdev_parse_size(val, &size) < 0) {
				snprintf(err, errlen, "null: bad size '%s'", val);
				return NULL;
			}
		} else {
			snprintf(err, errlen, "null: unknown option '%s'", key);
			return NULL;
		}
	}
	if (rc < 0) {
		snprintf(err, errlen, "null: malformed options");
		return NULL;
	}
	b = bdev_alloc(&null_ops, p, size, err, errlen);
	if (b)
		b->thin = true;	/* discards are free and read back zeros */
	if (b)
		b->zero_reads = true;
	return b;
}
