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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "backend/bdev_priv.h"
#include "backend/wrap.h"

#define FAULT_MAX_RANGES 64

#define FOPS_READ  0x1
#define FOPS_WRITE 0x2
#define FOPS_FLUSH 0x4

struct fault_range {
	uint64_t first, last;	/* blocks, inclusive */
};

struct fault {
	struct bdev *base;	/* first: wrap_lba_status */
	struct fault_range ranges[FAULT_MAX_RANGES];
	int nranges;
	double rate;
	int error;		/* -EIO or -ENOSPC */
	unsigned ops;
	uint64_t seed;
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
	const struct fault *f = fq->f;
	uint32_t bs = fq->bq->bdev->block_size;

	if (!(fault_class(io->op) & f->ops))
		return false;
	if (io->op != BDEV_FLUSH && io->len) {
		uint64_t first = io->offset / bs;
		uint64_t last = (io->offset + io->len - 1) / bs;

		for (int i = 0; i < f->nranges; i++)
			if (first <= f->ranges[i].last &&
			    last >= f->ranges[i].first)
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
		bdev_cq_push(&fq->failed, io, fq->f->error);
		return;
	}
	w = wrap_io_get(&fq->pool);
	if (!w) {
		bdev_cq_push(&fq->failed, io, -ENOMEM);
		return;
	}
	w->up = io;
	w->bio.op = io->op;
	w->bio.flags = io->flags;
	w->bio.offset = io->offset;
	w->bio.len = io->len;
	w->bio.buf = io->buf;
	w->bio.done = fault_base_done;
	w->bio.ctx = fq;
	bdev_submit(fq->bq, &w->bio);
}

static void fault_queue_fini(struct bdev_queue *q)
{
	struct fault_q *fq = q->priv;

	if (!fq)
		return;
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
	fq->rng = f->seed ^ (0xd1b54a32d192ed03ull * (uint64_t)(q->reactor->index + 1));
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
};

/* "A-B;C;D-E" appended to f->ranges. */
static int fault_parse_ranges(struct fault *f, const char *s)
{
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
		if (errno || b < a || f->nranges == FAULT_MAX_RANGES)
			return -1;
		f->ranges[f->nranges].first = a;
		f->ranges[f->nranges].last = b;
		f->nranges++;
		if (*end == ';')
			end++;
		else if (*end)
			return -1;
		s = end;
	}
	return 0;
}

static int fault_parse(struct fault *f, const char *opts, char *err,
		       size_t errlen)
{
	char key[32], val[512], *end;
	int rc;

	while ((rc = bdev_opt_next(&opts, key, sizeof(key), val,
				   sizeof(val))) > 0) {
		if (!strcmp(key, "lba")) {
			if (fault_parse_ranges(f, val) < 0)
				goto bad;
		} else if (!strcmp(key, "rate")) {
			errno = 0;
			f->rate = strtod(val, &end);
			if (errno || *end || end == val || !(f->rate >= 0) ||
			    f->rate > 1)
				goto bad;
		} else if (!strcmp(key, "error")) {
			if (!strcmp(val, "eio"))
				f->error = -EIO;
			else if (!strcmp(val, "enospc"))
				f->error = -ENOSPC;
			else
				goto bad;
		} else if (!strcmp(key, "ops")) {
			if (!strcmp(val, "read"))
				f->ops = FOPS_READ;
			else if (!strcmp(val, "write"))
				f->ops = FOPS_WRITE;
			else if (!strcmp(val, "all"))
				f->ops = FOPS_READ | FOPS_WRITE | FOPS_FLUSH;
			else
				goto bad;
		} else if (!strcmp(key, "seed")) {
			errno = 0;
			f->seed = strtoull(val, &end, 0);
			if (errno || *end || end == val)
				goto bad;
		} else {
			snprintf(err, errlen, "fault: unknown option '%s'", key);
			return -1;
		}
	}
	if (rc < 0) {
		snprintf(err, errlen, "fault: malformed options");
		return -1;
	}
	return 0;
bad:
	snprintf(err, errlen, "fault: bad %s '%s'", key, val);
	return -1;
}

struct bdev *bdev_fault_open(const char *opts, const struct bdev_params *p,
			     char *err, size_t errlen)
{
	struct fault *f = calloc(1, sizeof(*f));
	const char *basespec;
	char *own = NULL;
	struct bdev *b;

	if (!f || wrap_split(opts, &own, &basespec) < 0) {
		snprintf(err, errlen, "out of memory");
		free(f);
		return NULL;
	}
	f->error = -EIO;
	f->ops = FOPS_READ | FOPS_WRITE | FOPS_FLUSH;
	f->seed = 1;
	if (fault_parse(f, own, err, errlen) < 0) {
		free(own);
		free(f);
		return NULL;
	}
	free(own);
	b = wrap_alloc(&fault_ops, "fault", basespec, p, &f->base, err, errlen);
	if (!b) {
		free(f);
		return NULL;
	}
	b->priv = f;
	return b;
}
