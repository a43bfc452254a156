/*
 * fault: wraps another backend and fails chosen I/Os, to test how the
 * device server and initiators handle media errors. Options:
 *   lba=START-END  fail I/O touching these logical blocks (inclusive;
 *                  lba=N for one block; repeat the key or join ranges
 *                  with ';': lba=0-7;100-199)
 *   rate=F         also fail this share of I/Os at random (0..1)
 *   error=eio|enospc   the error returned (MEDIUM ERROR or SPACE
 *                  ALLOCATION FAILED at the SCSI level)
 *   ops=read|write|all which I/Os may fail; write covers WRITE, WRITE
 *                  ZEROES and UNMAP; all adds SYNCHRONIZE CACHE (which
 *                  only rate= can hit, it has no LBA)
 *   seed=N         PRNG seed for rate=
 *   base=SPEC      the wrapped backend (last; see wrap.h)
 * A failed I/O never reaches the base: a failed write changes nothing.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "backend/bdev_priv.h"
#include "backend/wrap.h"
#include "tcq/compiler.h"

#define FAULT_MAX_RANGES 64

#define FOPS_READ  0x1
#define FOPS_WRITE 0x2
#define FOPS_FLUSH 0x4

struct fault_range {
	uint64_t first, last;	/* blocks, inclusive */
};

struct fault_ranges {
	struct fault_range r[FAULT_MAX_RANGES];
	int n;
};

struct fault_opts {
	struct fault_ranges lba;
	double rate;
	int error;		/* -EIO or -ENOSPC */
	int ops;		/* FOPS_* */
	uint64_t seed;
};

struct fault {
	struct bdev *base;	/* first: wrap_lba_status */
	struct fault_opts o;
};

struct fault_q {
	struct fault *f;
	struct bdev_queue *bq;
	struct wrap_pool pool;
	struct bdev_cq failed;
	uint64_t rng;
};

static unsigned fault_class(enum bdev_op op)
{
	switch (op) {
	case BDEV_READ:
		return FOPS_READ;
	case BDEV_WRITE:
	case BDEV_DISCARD:
	case BDEV_WRITE_ZEROES:
	case BDEV_COMPARE_AND_WRITE:
	case BDEV_WRITE_SAME:
		return FOPS_WRITE;
	case BDEV_FLUSH:
		return FOPS_FLUSH;
	}
	return 0;
}

static bool fault_hit(struct fault_q *fq, const struct bdev_io *io)
{
	const struct fault_opts *f = &fq->f->o;
	uint32_t bs = fq->bq->bdev->block_size;

	if (!(fault_class(io->op) & (unsigned)f->ops))
		return false;
	if (io->op != BDEV_FLUSH && io->len) {
		uint64_t first = io->offset / bs;
		uint64_t last = (io->offset + io->len - 1) / bs;

		for (int i = 0; i < f->lba.n; i++)
			if (first <= f->lba.r[i].last &&
			    last >= f->lba.r[i].first)
				return true;
	}
	return f->rate > 0 && wrap_rand01(&fq->rng) < f->rate;
}

static void fault_base_done(struct bdev_io *bio)
{
	struct wrap_io *w = container_of(bio, struct wrap_io, bio);
	struct fault_q *fq = bio->ctx;
	struct bdev_io *up = w->up;

	wrap_io_put(&fq->pool, w);
	bdev_complete(up, bio->result);
}

static void fault_submit(struct bdev_queue *q, struct bdev_io *io)
{
	struct fault_q *fq = q->priv;
	struct wrap_io *w;

	if (fault_hit(fq, io)) {
		bdev_cq_push(&fq->failed, io, fq->f->o.error);
		return;
	}
	w = wrap_io_get(&fq->pool);
	if (!w) {
		bdev_cq_push(&fq->failed, io, -ENOMEM);
		return;
	}
	w->up = io;
	bdev_io_forward(&w->bio, io, fault_base_done, fq);
	bdev_submit(fq->bq, &w->bio);
}

static void fault_queue_fini(struct bdev_queue *q)
{
	struct fault_q *fq = q->priv;

	if (!fq)
		return;
	wrap_queue_put_base(fq->f->base, fq->bq, q->reactor);
	bdev_cq_fini(&fq->failed);
	wrap_pool_fini(&fq->pool);
	free(fq);
	q->priv = NULL;
}

static int fault_queue_init(struct bdev *b, struct bdev_queue *q)
{
	struct fault *f = b->priv;
	struct fault_q *fq = calloc(1, sizeof(*fq));

	if (!fq)
		return -1;
	fq->f = f;
	wrap_pool_init(&fq->pool);
	bdev_cq_init(&fq->failed, q->reactor, true);
	fq->rng = f->o.seed ^ (0xd1b54a32d192ed03ull * (uint64_t)(q->reactor->index + 1));
	q->priv = fq;
	fq->bq = bdev_queue_get(f->base, q->reactor);
	if (!fq->bq) {
		fault_queue_fini(q);
		return -1;
	}
	return 0;
}

static void fault_close(struct bdev *b)
{
	struct fault *f = b->priv;

	if (!f)
		return;
	bdev_close(f->base);
	free(f);
	b->priv = NULL;
}

static const struct bdev_ops fault_ops = {
	.name = "fault",
	.queue_init = fault_queue_init,
	.queue_fini = fault_queue_fini,
	.submit = fault_submit,
	.close = fault_close,
	.lba_status = wrap_lba_status,
	.read_sync = wrap_read_sync,
	.resize = wrap_resize,
	.space = wrap_space,
};

/* "A-B;C;D-E" appended to the ranges (the key may come again). */
static int fault_parse_ranges(const char *s, void *field)
{
	struct fault_ranges *lr = field;

	while (*s) {
		unsigned long long a, b;
		char *end;

		if (*s < '0' || *s > '9')
			return -1;
		errno = 0;
		a = strtoull(s, &end, 0);
		b = a;
		if (*end == '-') {
			s = end + 1;
			if (*s < '0' || *s > '9')
				return -1;
			b = strtoull(s, &end, 0);
		}
		if (errno || b < a || lr->n == FAULT_MAX_RANGES)
			return -1;
		lr->r[lr->n].first = a;
		lr->r[lr->n].last = b;
		lr->n++;
		if (*end == ';')
			end++;
		else if (*end)
			return -1;
		s = end;
	}
	return 0;
}

static int fault_format_ranges(const void *field, char *buf, size_t len)
{
	const struct fault_ranges *lr = field;
	size_t n = 0;

	if (len)
		buf[0] = '\0';
	for (int i = 0; i < lr->n; i++) {
		const struct fault_range *r = &lr->r[i];
		size_t room = n < len ? len - n : 0;
		char *at = room ? buf + n : NULL;
		int k = r->first == r->last ?
			snprintf(at, room, "%s%llu", i ? ";" : "",
				 (unsigned long long)r->first) :
			snprintf(at, room, "%s%llu-%llu", i ? ";" : "",
				 (unsigned long long)r->first,
				 (unsigned long long)r->last);

		n += (size_t)k;
	}
	return (int)n;
}

static const struct fault_opts fault_defaults = {
	.error = -EIO, .ops = FOPS_READ | FOPS_WRITE | FOPS_FLUSH, .seed = 1,
};

static const struct bdev_opt_word fault_errors[] = {
	{ "eio", -EIO }, { "enospc", -ENOSPC }, { NULL, 0 },
};

static const struct bdev_opt_word fault_op_classes[] = {
	{ "read", FOPS_READ }, { "write", FOPS_WRITE },
	{ "all", FOPS_READ | FOPS_WRITE | FOPS_FLUSH }, { NULL, 0 },
};

static const struct bdev_opt fault_keys[] = {
	{ .key = "lba", .type = BDEV_OPT_CUSTOM, .flags = BDEV_OPT_REPEAT,
	  .parse = fault_parse_ranges, .format = fault_format_ranges,
	  .syntax = "START[-END][;...]",
	  .offset = offsetof(struct fault_opts, lba),
	  .help = "fail I/O touching these blocks (inclusive ranges)" },
	{ .key = "rate", .type = BDEV_OPT_REAL, .fmin = 0, .fmax = 1,
	  .offset = offsetof(struct fault_opts, rate),
	  .help = "also fail this share of I/Os at random" },
	{ .key = "error", .type = BDEV_OPT_ENUM, .words = fault_errors,
	  .offset = offsetof(struct fault_opts, error),
	  .help = "MEDIUM ERROR (eio) or SPACE ALLOCATION FAILED (enospc)" },
	{ .key = "ops", .type = BDEV_OPT_ENUM, .words = fault_op_classes,
	  .offset = offsetof(struct fault_opts, ops),
	  .help = "which I/Os may fail (write: also WRITE ZEROES and UNMAP; "
		  "all: also SYNCHRONIZE CACHE)" },
	{ .key = "seed", .type = BDEV_OPT_UINT, .flags = BDEV_OPT_ANY_BASE,
	  .offset = offsetof(struct fault_opts, seed),
	  .help = "PRNG seed for rate=" },
};

const struct bdev_opts_def bdev_fault_opts = {
	.backend = "fault", .opts = fault_keys,
	.nopts = ARRAY_SIZE(fault_keys), .size = sizeof(struct fault_opts),
	.defaults = &fault_defaults, .wraps = true,
};

struct bdev *bdev_fault_open(const char *opts, const struct bdev_params *p,
			     char *err, size_t errlen)
{
	return wrap_open(&fault_ops, &bdev_fault_opts, sizeof(struct fault),
			 offsetof(struct fault, o), opts, p, err, errlen);
}
