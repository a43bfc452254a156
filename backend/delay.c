/*
 * delay: wraps another backend and holds every I/O for a service time
 * before passing it on, like a drive with its own queue. Options:
 *   latency=T      mean service time (ns/us/ms/s suffix; bare: us)
 *   dist=fixed|uniform|exp   fixed T, uniform in [0, 2T], exponential
 *   parallel=N     at most N I/Os in service per queue, the rest wait in
 *                  arrival order (0: no bound beyond queue_depth)
 *   seed=N         PRNG seed (each reactor queue derives its own)
 *   base=SPEC      the wrapped backend (last; see wrap.h)
 * With a random dist, completions come back out of order. A service time
 * starts at the reactor pass the I/O arrived in. Each I/O in service is a
 * reactor timer on its queue's reactor (nanosecond deadlines, the
 * reactor's one timerfd): every I/O whose deadline a pass has reached
 * goes to the base in that pass, in deadline order.
 */
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include "backend/bdev_priv.h"
#include "backend/wrap.h"
#include "tcq/compiler.h"

enum delay_dist { DIST_FIXED, DIST_UNIFORM, DIST_EXP };

struct delay_opts {
	uint64_t latency_ns;
	int dist;		/* enum delay_dist */
	uint64_t parallel;
	uint64_t seed;
};

struct delay {
	struct bdev *base;	/* first: wrap_lba_status */
	struct delay_opts o;
};

struct delay_q {
	struct delay *d;
	struct bdev_queue *q, *bq;
	struct wrap_pool pool;
	struct bdev_cq errs;		/* I/O failed before the base */
	struct list_node waiting;	/* beyond parallel, arrival order */
	uint32_t busy;			/* in service */
	uint64_t rng;
};

/* ---- service ----------------------------------------------------------- */

static uint64_t delay_sample(struct delay_q *dq)
{
	const struct delay *d = dq->d;
	double u;

	switch (d->o.dist) {
	case DIST_UNIFORM:
		return (uint64_t)(wrap_rand01(&dq->rng) * 2.0 *
				  (double)d->o.latency_ns);
	case DIST_EXP:
		u = wrap_rand01(&dq->rng);
		return (uint64_t)(-log(1.0 - u) * (double)d->o.latency_ns);
	case DIST_FIXED:
		break;
	}
	return d->o.latency_ns;
}

static void delay_start(struct delay_q *dq, struct bdev_io *io);

/*
 * When an I/O arrived: inside a pass of the queue's reactor, the pass's
 * time, so the I/Os one pass submits share one deadline and complete in
 * one pass, however long the pass took to submit them; outside a pass
 * (a caller driving the queue from its own thread), the clock.
 */
static uint64_t delay_arrival_ns(const struct delay_q *dq)
{
	struct reactor *r = dq->q->reactor;

	return reactor_self() == r ? r->now_ns : reactor_now_ns();
}

static void delay_base_done(struct bdev_io *bio)
{
	struct wrap_io *w = container_of(bio, struct wrap_io, bio);
	struct delay_q *dq = bio->ctx;
	struct bdev_io *up = w->up;
	int rc = bio->result;

	wrap_io_put(&dq->pool, w);
	dq->busy--;
	/* The freed slot goes to the oldest waiter before we complete, so
	 * a resubmission from done() queues behind it. */
	if (!list_empty(&dq->waiting)) {
		struct bdev_io *next = list_first_entry(&dq->waiting,
							struct bdev_io, node);

		list_del(&next->node);
		delay_start(dq, next);
	}
	bdev_complete(up, rc);
}

static void delay_issue(struct delay_q *dq, struct wrap_io *w)
{
	struct bdev_io *up = w->up, *bio = &w->bio;

	bdev_io_forward(bio, up, delay_base_done, dq);
	bdev_submit(dq->bq, bio);
}

/* Its service time is over: to the base. */
static void delay_due(struct reactor_timer *t)
{
	delay_issue(t->arg, container_of(t, struct wrap_io, timer));
}

static void delay_start(struct delay_q *dq, struct bdev_io *io)
{
	struct wrap_io *w = wrap_io_get(&dq->pool);
	uint64_t t;

	if (!w) {
		bdev_cq_push(&dq->errs, io, -ENOMEM);
		return;
	}
	dq->busy++;
	w->up = io;
	t = delay_sample(dq);
	if (t == 0) {
		delay_issue(dq, w);
		return;
	}
	reactor_timer_init(&w->timer, delay_due, dq);
	if (reactor_timer_arm_at(dq->q->reactor, &w->timer,
				 delay_arrival_ns(dq) + t) < 0)
		delay_issue(dq, w);	/* no room to wait: serve now */
}

static void delay_submit(struct bdev_queue *q, struct bdev_io *io)
{
	struct delay_q *dq = q->priv;
	uint64_t par = dq->d->o.parallel;

	if (par && (dq->busy >= par || !list_empty(&dq->waiting))) {
		list_add_tail(&io->node, &dq->waiting);
		return;
	}
	delay_start(dq, io);
}

/* ---- setup ------------------------------------------------------------- */

static void delay_queue_fini(struct bdev_queue *q)
{
	struct delay_q *dq = q->priv;

	if (!dq)
		return;
	/* No I/O is in flight at close: every wrapper is back in the pool,
	 * its timer disarmed. */
	wrap_queue_put_base(dq->d->base, dq->bq, q->reactor);
	wrap_pool_fini(&dq->pool);
	bdev_cq_fini(&dq->errs);
	free(dq);
	q->priv = NULL;
}

static int delay_queue_init(struct bdev *b, struct bdev_queue *q)
{
	struct delay *d = b->priv;
	struct delay_q *dq = calloc(1, sizeof(*dq));

	if (!dq)
		return -1;
	dq->d = d;
	dq->q = q;
	wrap_pool_init(&dq->pool);
	bdev_cq_init(&dq->errs, q->reactor, true);
	list_init(&dq->waiting);
	dq->rng = d->o.seed ^ (0x9e3779b97f4a7c15ull * (uint64_t)(q->reactor->index + 1));
	q->priv = dq;
	dq->bq = bdev_queue_get(d->base, q->reactor);
	if (!dq->bq) {
		delay_queue_fini(q);
		return -1;
	}
	return 0;
}

static void delay_close(struct bdev *b)
{
	struct delay *d = b->priv;

	if (!d)
		return;
	bdev_close(d->base);
	free(d);
	b->priv = NULL;
}

static const struct bdev_ops delay_ops = {
	.name = "delay",
	.queue_init = delay_queue_init,
	.queue_fini = delay_queue_fini,
	.submit = delay_submit,
	.close = delay_close,
	.lba_status = wrap_lba_status,
	.read_sync = wrap_read_sync,
	.resize = wrap_resize,
	.space = wrap_space,
};

static const struct delay_opts delay_defaults = {
	.latency_ns = 1000000, .dist = DIST_FIXED, .parallel = 0, .seed = 1,
};

static const struct bdev_opt_word delay_dists[] = {
	{ "fixed", DIST_FIXED }, { "uniform", DIST_UNIFORM },
	{ "exp", DIST_EXP }, { NULL, 0 },
};

static const struct bdev_opt delay_keys[] = {
	{ .key = "latency", .type = BDEV_OPT_TIME,
	  .offset = offsetof(struct delay_opts, latency_ns),
	  .help = "mean service time (default 1ms)" },
	{ .key = "dist", .type = BDEV_OPT_ENUM, .words = delay_dists,
	  .offset = offsetof(struct delay_opts, dist),
	  .help = "fixed latency, uniform in [0, 2*latency], or exponential" },
	{ .key = "parallel", .type = BDEV_OPT_UINT, .max = 1u << 20,
	  .offset = offsetof(struct delay_opts, parallel),
	  .help = "I/Os in service per queue at most (0: no bound)" },
	{ .key = "seed", .type = BDEV_OPT_UINT, .flags = BDEV_OPT_ANY_BASE,
	  .offset = offsetof(struct delay_opts, seed),
	  .help = "PRNG seed (each reactor queue derives its own)" },
};

const struct bdev_opts_def bdev_delay_opts = {
	.backend = "delay", .opts = delay_keys,
	.nopts = ARRAY_SIZE(delay_keys), .size = sizeof(struct delay_opts),
	.defaults = &delay_defaults, .wraps = true,
};

struct bdev *bdev_delay_open(const char *opts, const struct bdev_params *p,
			     char *err, size_t errlen)
{
	return wrap_open(&delay_ops, &bdev_delay_opts, sizeof(struct delay),
			 offsetof(struct delay, o), opts, p, err, errlen);
}
