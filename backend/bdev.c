/*
 * The generic block layer: the backends by name, per-reactor queues, the
 * checks every I/O passes before the queue-depth budget (bdev_depth.c),
 * and end-of-pass flush so backends can batch what one reactor pass
 * produced.
 */
#include <errno.h>
#include <sys/mman.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "backend/bdev.h"
#include "backend/bdev_priv.h"
#include "backend/prefetch.h"
#include "tcq/compiler.h"
#include "tcq/log.h"

/* What bdev.c allocates per queue: the public part plus a list for I/O
 * rejected before reaching the backend (completed on the next pass). */
struct bdev_queue_impl {
	struct bdev_queue q;
	struct bdev_cq rejected;
};

/* ---- helpers for backends ---------------------------------------------- */

struct bdev *bdev_alloc(const struct bdev_ops *ops,
			const struct bdev_params *p, uint64_t size,
			char *err, size_t errlen)
{
	uint32_t bs = p->block_size ? p->block_size : 512;
	struct bdev *b;

	if (bs != 512 && bs != 4096) {
		snprintf(err, errlen, "block size %u: must be 512 or 4096", bs);
		return NULL;
	}
	if (size == 0) {
		snprintf(err, errlen, "%s: size is zero", ops->name);
		return NULL;
	}
	if (size % bs) {
		snprintf(err, errlen,
			 "%s: size %llu is not a multiple of block size %u",
			 ops->name, (unsigned long long)size, bs);
		return NULL;
	}
	b = calloc(1, sizeof(*b));
	if (!b) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	b->ops = ops;
	b->size = size;
	b->block_size = bs;
	b->read_only = p->read_only;
	atomic_init(&b->queue_depth,
		    p->queue_depth ? p->queue_depth : BDEV_DEFAULT_QUEUE_DEPTH);
	for (int i = 0; i < BDEV_MAX_QUEUES; i++)
		atomic_init(&b->wait_head[i], BDEV_NO_TICKET);
	pthread_mutex_init(&b->qlock, NULL);
	return b;
}

void bdev_free(struct bdev *b)
{
	if (!b)
		return;
	pthread_mutex_destroy(&b->qlock);
	free(b->spec);
	free(b);
}

static void bdev_cq_run(struct reactor_defer *d)
{
	struct bdev_cq *cq = d->arg;
	struct list_node batch;

	if (list_empty(&cq->list))
		return;
	/* Detach first: completions may queue more onto cq->list (they run
	 * in a later round through the re-armed defer). */
	batch.next = cq->list.next;
	batch.prev = cq->list.prev;
	batch.next->prev = &batch;
	batch.prev->next = &batch;
	list_init(&cq->list);
	while (!list_empty(&batch)) {
		struct bdev_io *io = list_first_entry(&batch, struct bdev_io,
						      node);

		list_del(&io->node);
		if (cq->counted)
			bdev_complete(io, io->result);
		else
			io->done(io);
	}
}

void bdev_cq_init(struct bdev_cq *cq, struct reactor *r, bool counted)
{
	list_init(&cq->list);
	reactor_defer_init(&cq->defer, bdev_cq_run, cq);
	cq->reactor = r;
	cq->counted = counted;
}

void bdev_cq_push(struct bdev_cq *cq, struct bdev_io *io, int result)
{
	io->result = result;
	list_add_tail(&io->node, &cq->list);
	reactor_defer(cq->reactor, &cq->defer);
}

void bdev_cq_fini(struct bdev_cq *cq)
{
	reactor_defer_cancel(&cq->defer);
	while (!list_empty(&cq->list))
		list_del(cq->list.next);
}

/* ---- open / close ------------------------------------------------------ */

static const struct bdev_backend bdev_backends[] = {
	{ "aio", bdev_aio_open, &bdev_aio_opts },
	{ "null", bdev_null_open, &bdev_null_opts },
	{ "ram", bdev_ram_open, &bdev_ram_opts },
	{ "delay", bdev_delay_open, &bdev_delay_opts },
	{ "fault", bdev_fault_open, &bdev_fault_opts },
	{ "cache", bdev_cache_open, &bdev_cache_opts },
	{ "rbd", bdev_rbd_open, &bdev_rbd_opts },
	{ "disk", bdev_disk_open, &bdev_disk_opts },
	{ "crash", bdev_crash_open, &bdev_crash_opts },
};

const struct bdev_backend *bdev_backend_find(const char *name, size_t len)
{
	for (size_t i = 0; i < ARRAY_SIZE(bdev_backends); i++)
		if (strlen(bdev_backends[i].name) == len &&
		    !strncmp(name, bdev_backends[i].name, len))
			return &bdev_backends[i];
	return NULL;
}

const struct bdev_opts_def *bdev_backend_opts(const char *name)
{
	const struct bdev_backend *be = bdev_backend_find(name, strlen(name));

	return be ? be->opts : NULL;
}

struct bdev *bdev_open(const char *spec, const struct bdev_params *p,
		       char *err, size_t errlen)
{
	static const struct bdev_params none;
	const struct bdev_backend *be;
	struct bdev_params bare;
	struct bdev *b = NULL;
	const char *colon, *opts;
	size_t nlen;

	if (!p)
		p = &none;
	if (!spec || !*spec) {
		if (!p->path) {
			snprintf(err, errlen, "empty backend spec");
			return NULL;
		}
		spec = "aio";	/* just a path given: a file or device */
	}
	colon = strchr(spec, ':');
	nlen = colon ? (size_t)(colon - spec) : strlen(spec);
	opts = colon ? colon + 1 : "";
	be = bdev_backend_find(spec, nlen);
	if (be) {
		b = be->open(opts, p, err, errlen);
		goto opened;
	}
	/* A bare path (no backend name) is a file or device for aio. */
	if (strchr(spec, '/') || access(spec, F_OK) == 0) {
		bare = *p;
		bare.path = spec;
		b = bdev_aio_open("", &bare, err, errlen);
		goto opened;
	}
	snprintf(err, errlen,
		 "unknown backend '%.*s' (expected aio, null, ram, rbd, delay, "
		 "fault, cache, disk or a path)",
		 (int)(nlen > 64 ? 64 : nlen), spec);
	return NULL;
opened:
	if (!b)
		return NULL;
	b->spec = strdup(spec);
	if (!b->spec) {
		bdev_close(b);
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	return b;
}

/* The caller makes sure no I/O is in flight and, for backends that
 * register fds or arm timers, that each queue's reactor is idle or is the
 * caller (wrappers close their bases' queues with their own:
 * wrap_queue_put_base). */
static void queue_free(struct bdev *b, int i)
{
	struct bdev_queue *q = b->queues[i];
	struct bdev_queue_impl *qi = container_of(q, struct bdev_queue_impl, q);

	if (b->ops->queue_fini)
		b->ops->queue_fini(q);
	reactor_defer_cancel(&q->flush_defer);
	bdev_cq_fini(&qi->rejected);
	free(qi);
	__atomic_store_n(&b->queues[i], NULL, __ATOMIC_RELEASE);
}

void bdev_close(struct bdev *b)
{
	if (!b)
		return;
	for (int i = 0; i < BDEV_MAX_QUEUES; i++)
		if (b->queues[i])
			queue_free(b, i);
	if (b->ops->close)
		b->ops->close(b);
	prefetch_free(b->prefetch);
	bdev_free(b);
}

int bdev_queue_put(struct bdev *b, struct reactor *r)
{
	struct bdev_queue *q;
	struct bdev_queue_impl *qi;
	int rc = 0;

	if (r->index < 0 || r->index >= BDEV_MAX_QUEUES)
		return 0;
	pthread_mutex_lock(&b->qlock);
	q = b->queues[r->index];
	if (q) {
		qi = container_of(q, struct bdev_queue_impl, q);
		/* A wake-up posted to any reactor still names b (see
		 * bdev_depth.c): b must outlive it, and the last queue to go
		 * is what lets b be closed. */
		if (q->inflight || !list_empty(&q->waiting) ||
		    !list_empty(&qi->rejected.list) ||
		    atomic_load_explicit(&b->budget.kicks,
					 memory_order_acquire))
			rc = -EBUSY;
		else
			queue_free(b, r->index);
	}
	pthread_mutex_unlock(&b->qlock);
	return rc;
}

int bdev_resize(struct bdev *b, uint64_t size, bool shrink, char *err,
		size_t errlen)
{
	uint64_t want = size;

	if (size % b->block_size) {
		snprintf(err, errlen, "size %llu is not a multiple of the "
			 "block size %u", (unsigned long long)size,
			 b->block_size);
		return -1;
	}
	if (!b->ops->resize) {
		snprintf(err, errlen, "the %s backend cannot be resized",
			 b->ops->name);
		return -1;
	}
	if (b->ops->resize(b, &want, shrink, err, errlen) < 0)
		return -1;
	if (!want || want % b->block_size) {
		snprintf(err, errlen, "%s: the medium reports %llu bytes",
			 b->ops->name, (unsigned long long)want);
		return -1;
	}
	bdev_resized(b, want);
	return 0;
}

/* ---- queues ------------------------------------------------------------ */

static void bdev_flush_cb(struct reactor_defer *d)
{
	struct bdev_queue *q = d->arg;

	q->bdev->ops->flush(q);
}

void bdev_queue_flush_later(struct bdev_queue *q)
{
	if (q->bdev->ops->flush)
		reactor_defer(q->reactor, &q->flush_defer);
}

struct bdev_queue *bdev_queue_get(struct bdev *b, struct reactor *r)
{
	struct bdev_queue_impl *qi;
	struct bdev_queue *q;

	if (r->index < 0 || r->index >= BDEV_MAX_QUEUES)
		return NULL;
	q = __atomic_load_n(&b->queues[r->index], __ATOMIC_ACQUIRE);
	if (q)
		return q;
	pthread_mutex_lock(&b->qlock);
	q = b->queues[r->index];
	if (q)
		goto out;
	qi = calloc(1, sizeof(*qi));
	if (!qi)
		goto out;
	q = &qi->q;
	q->bdev = b;
	q->reactor = r;
	list_init(&q->waiting);
	q->published = BDEV_NO_TICKET;
	b->qreactor[r->index] = r;
	reactor_defer_init(&q->flush_defer, bdev_flush_cb, q);
	bdev_cq_init(&qi->rejected, r, false);
	if (b->ops->queue_init && b->ops->queue_init(b, q) < 0) {
		log_err("%s: cannot set up queue for reactor %d",
			b->spec ? b->spec : b->ops->name, r->index);
		free(qi);
		q = NULL;
		goto out;
	}
	__atomic_store_n(&b->queues[r->index], q, __ATOMIC_RELEASE);
out:
	pthread_mutex_unlock(&b->qlock);
	return q;
}

/* ---- submission and completion ----------------------------------------- */

/* 0 when io may go to the backend, else the -errno to complete it with. */
static int bdev_check(const struct bdev *b, const struct bdev_io *io)
{
	uint64_t size;

	switch (io->op) {
	case BDEV_FLUSH:
		return 0;
	case BDEV_COMPARE_AND_WRITE:
	case BDEV_WRITE_SAME:
		if (io->op == BDEV_COMPARE_AND_WRITE ?
		    !b->caw_max || io->len > b->caw_max || !io->cmp_buf :
		    !b->write_same || !io->pattern_len ||
		    io->len % io->pattern_len)
			return -EOPNOTSUPP;
		/* fall through */
	case BDEV_WRITE:
	case BDEV_DISCARD:
	case BDEV_WRITE_ZEROES:
		if (b->read_only)
			return -EROFS;
		/* fall through */
	case BDEV_READ:
		size = __atomic_load_n(&b->size, __ATOMIC_ACQUIRE); /* resize */
		if (io->offset > size || io->len > size - io->offset)
			return -ERANGE;
		if ((io->offset | io->len) & (b->block_size - 1))
			return -EINVAL;
		return 0;
	}
	return -EINVAL;
}

void bdev_io_forward(struct bdev_io *down, const struct bdev_io *io,
		     void (*done)(struct bdev_io *), void *ctx)
{
	memset(down, 0, sizeof(*down));
	down->op = io->op;
	down->flags = io->flags;
	down->offset = io->offset;
	down->len = io->len;
	down->buf = io->buf;
	down->cmp_buf = io->cmp_buf;
	down->pattern_len = io->pattern_len;
	down->submitter = io->submitter;
	down->command = io->command;
	down->done = done;
	down->ctx = ctx;
	list_init(&down->node);
}

void bdev_submit(struct bdev_queue *q, struct bdev_io *io)
{
	struct prefetch *pf;
	int rc;

	io->q = q;
	io->result = 0;
	rc = bdev_check(q->bdev, io);
	if (unlikely(rc)) {
		struct bdev_queue_impl *qi =
			container_of(q, struct bdev_queue_impl, q);

		bdev_cq_push(&qi->rejected, io, rc);
		return;
	}
	/* Prefetch serves a read, or drops what a write overwrites before
	 * it is submitted (backend/prefetch.c). */
	pf = __atomic_load_n(&q->bdev->prefetch, __ATOMIC_ACQUIRE);
	if (unlikely(pf)) {
		if (io->op == BDEV_READ) {
			if (prefetch_read(pf, q, io))
				return;
		} else if (io->op != BDEV_FLUSH && prefetch_active(pf)) {
			prefetch_write(pf, io->offset, io->len);
		}
	}
	bdev_depth_submit(q, io);	/* bdev_depth.c: the LUN's budget */
}

void bdev_queue_done_later(struct bdev_queue *q, struct bdev_io *io,
			   int result)
{
	struct bdev_queue_impl *qi = container_of(q, struct bdev_queue_impl, q);

	bdev_cq_push(&qi->rejected, io, result);
}

int bdev_set_prefetch(struct bdev *b, enum bdev_prefetch mode, uint64_t max)
{
	bool on = mode == BDEV_PREFETCH_ON ||
		  (mode == BDEV_PREFETCH_AUTO && b->direct);
	int rc = 0;

	pthread_mutex_lock(&b->qlock);
	if (!b->prefetch) {
		struct prefetch *pf = prefetch_new(b);

		if (pf)
			__atomic_store_n(&b->prefetch, pf, __ATOMIC_RELEASE);
		else
			rc = -ENOMEM;
	}
	if (b->prefetch)
		prefetch_set(b->prefetch, on, max);
	pthread_mutex_unlock(&b->qlock);
	return rc;
}

int bdev_prefetch_stats(struct bdev *b, struct bdev_prefetch_stats *st)
{
	struct prefetch *pf = __atomic_load_n(&b->prefetch, __ATOMIC_ACQUIRE);

	memset(st, 0, sizeof(*st));
	if (!pf)
		return -EOPNOTSUPP;
	prefetch_stats(pf, st);
	return 0;
}

/* ---- resize ------------------------------------------------------------ */

void bdev_set_resize_hook(struct bdev *b,
			  void (*fn)(void *arg, uint64_t size), void *arg)
{
	pthread_mutex_lock(&b->qlock);
	b->on_resize = fn;
	b->resize_arg = arg;
	pthread_mutex_unlock(&b->qlock);
}

void bdev_resized(struct bdev *b, uint64_t size)
{
	pthread_mutex_lock(&b->qlock);
	/* Reactors read b->size in bdev_check without the lock. */
	__atomic_store_n(&b->size, size, __ATOMIC_RELEASE);
	if (b->prefetch)	/* read from a medium that changed */
		prefetch_drop_all(b->prefetch);
	if (b->on_resize)
		b->on_resize(b->resize_arg, size);
	pthread_mutex_unlock(&b->qlock);
}

int bdev_lba_status(struct bdev *b, uint64_t offset, uint64_t *len,
		    bool *mapped)
{
	if (offset >= b->size)
		return -ERANGE;
	if (!b->ops->lba_status) {
		*mapped = true;
		*len = b->size - offset;
		return 0;
	}
	return b->ops->lba_status(b, offset, len, mapped);
}

int bdev_space(struct bdev *b, uint64_t *allocated, uint64_t *available)
{
	*allocated = *available = 0;
	if (!b->ops->space)
		return -EOPNOTSUPP;
	return b->ops->space(b, allocated, available);
}

int bdev_model_stats(struct bdev *b, struct bdev_model_stats *st)
{
	if (!b || !b->ops->model_stats)
		return -EOPNOTSUPP;
	return b->ops->model_stats(b, st);
}

/* 16 MiB of zero pages mapped read-only once: the kernel backs them all
 * with the one zero page, so it costs no memory. */
#define ZERO_REGION (16u << 20)
static void *zero_region;
static pthread_once_t zero_once = PTHREAD_ONCE_INIT;

static void zero_region_init(void)
{
	void *p = mmap(NULL, ZERO_REGION, PROT_READ,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	zero_region = p == MAP_FAILED ? NULL : p;
}

void *bdev_zero_region(size_t len)
{
	if (len > ZERO_REGION)
		return NULL;
	pthread_once(&zero_once, zero_region_init);
	return zero_region;
}

bool bdev_is_zero_region(const void *p)
{
	return zero_region && (const char *)p >= (const char *)zero_region &&
	       (const char *)p < (const char *)zero_region + ZERO_REGION;
}

int bdev_shared_state(struct bdev *b, struct lun_store **s, char *err,
		      size_t errlen)
{
	*s = NULL;
	if (!b || !b->ops->shared_state)
		return 0;
	*s = b->ops->shared_state(b, err, errlen);
	return *s ? 0 : -1;
}

int bdev_read_sync(struct bdev *b, uint64_t off, void *buf, size_t len)
{
	if (!b->ops->read_sync)
		return -EOPNOTSUPP;
	if (off > b->size || len > b->size - off)
		return -EINVAL;
	return b->ops->read_sync(b, off, buf, len);
}
