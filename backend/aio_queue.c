/*
 * aio: I/O through each reactor queue's io_context (see aio.c). A slot
 * per I/O in flight holds its iocb; submit() preps it into a batch that
 * goes to io_submit at once while the device is shallow, else at the end
 * of the pass; the queue's eventfd wakes the reactor to reap.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/eventfd.h>
#include <sys/epoll.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include "backend/aio_priv.h"
#include "tcq/bufpool.h"
#include "tcq/log.h"

static void aio_start(struct aio_queue *aq, struct aio_slot *s,
		      struct bdev_io *io);

/* ---- slots ------------------------------------------------------------- */

static void aio_batch_add(struct aio_queue *aq, struct aio_slot *s)
{
	io_set_eventfd(&s->cb, aq->efd);
	s->cb.data = s;
	aq->batch[aq->nbatch++] = &s->cb;
}

/* Returns s to the free list, or hands it straight to an I/O that waited
 * for a slot (only when queue_depth exceeds the slot count). */
static void aio_slot_release(struct aio_queue *aq, struct aio_slot *s)
{
	s->io = NULL;
	if (!list_empty(&aq->overflow)) {
		struct bdev_io *io = list_first_entry(&aq->overflow,
						      struct bdev_io, node);

		list_del(&io->node);
		aio_start(aq, s, io);
		return;
	}
	s->next_free = aq->free;
	aq->free = s;
}

void aio_finish(struct aio_queue *aq, struct aio_slot *s, int res)
{
	struct bdev_io *io = s->io;

	aio_slot_release(aq, s);
	bdev_complete(io, res);
}

/* ---- starting I/O ------------------------------------------------------ */

static void aio_start_sync(struct aio_queue *aq, struct aio_slot *s)
{
	s->stage = AIO_ST_SYNC;
	if (atomic_load_explicit(&aq->dev->aio_fsync_ok,
				 memory_order_relaxed)) {
		io_prep_fdsync(&s->cb, aq->dev->fd);
		aio_batch_add(aq, s);
	} else {
		aio_worker_queue(aq, s);
	}
}

static void aio_start(struct aio_queue *aq, struct aio_slot *s,
		      struct bdev_io *io)
{
	int fd = aq->dev->fd;

	s->io = io;
	s->stage = AIO_ST_RW;
	s->sync_after = false;
	switch (io->op) {
	case BDEV_READ:
		io_prep_pread(&s->cb, fd, io->buf, io->len, (long long)io->offset);
		break;
	case BDEV_WRITE:
		io_prep_pwrite(&s->cb, fd, io->buf, io->len,
			       (long long)io->offset);
		if (io->flags & BDEV_FUA) {
			if (atomic_load_explicit(&aq->dev->rwf_dsync_ok,
						 memory_order_relaxed))
				s->cb.aio_rw_flags = RWF_DSYNC;
			else
				s->sync_after = true;
		}
		break;
	default:		/* BDEV_FLUSH; the others never get a slot */
		aio_start_sync(aq, s);
		return;
	}
	aio_batch_add(aq, s);
}

/* io_submit of the batch from inside submit(): whatever the kernel does
 * not take (EAGAIN, an error to answer) stays for the end-of-pass flush,
 * so no I/O completes inside its own submit call. */
static void aio_submit_now(struct aio_queue *aq)
{
	int ret = io_submit(aq->ctx, aq->nbatch, aq->batch);

	if (ret <= 0)
		return;
	aq->nsubmitted += ret;
	aq->nbatch -= ret;
	memmove(aq->batch, aq->batch + ret, sizeof(*aq->batch) * aq->nbatch);
}

void aio_submit(struct bdev_queue *q, struct bdev_io *io)
{
	struct aio_queue *aq = q->priv;
	struct aio_slot *s;

	if (io->op == BDEV_DISCARD) {
		bdev_cq_push(&aq->sync_cq, io,
			     aio_discard(aq->dev, io->offset, io->len));
		return;
	}
	if (io->op == BDEV_WRITE_ZEROES) {
		bdev_cq_push(&aq->sync_cq, io,
			     aio_write_zeroes(aq->dev, &aq->zbuf, io->offset,
					      io->len));
		return;
	}
	s = aq->free;
	if (!s) {
		list_add_tail(&io->node, &aq->overflow);
		return;
	}
	aq->free = s->next_free;
	aio_start(aq, s, io);
	/* A device with little to do gets each I/O at once: waiting for the
	 * end of the pass (the rest of a wave of commands being parsed) would
	 * leave it idle. Once it is busy, I/Os batch into one io_submit. */
	if (aq->nsubmitted < AIO_SHALLOW)
		aio_submit_now(aq);
}

/* ---- io_submit --------------------------------------------------------- */

static void aio_batch_drop_head(struct aio_queue *aq)
{
	aq->nbatch--;
	memmove(aq->batch, aq->batch + 1, sizeof(*aq->batch) * aq->nbatch);
}

/* The kernel refused the first iocb of the batch with err. */
static void aio_submit_error(struct aio_queue *aq, int err)
{
	struct aio_slot *s = aq->batch[0]->data;
	struct aio_dev *dev = aq->dev;

	if ((err == -EINVAL || err == -EOPNOTSUPP) && s->stage == AIO_ST_RW &&
	    s->cb.aio_rw_flags) {
		/* No RWF_DSYNC for aio here: write, then sync. */
		if (atomic_exchange(&dev->rwf_dsync_ok, false))
			log_warn("aio: kernel rejects RWF_DSYNC (%s); FUA "
				 "becomes write + fdatasync", strerror(-err));
		s->cb.aio_rw_flags = 0;
		s->sync_after = true;
		return;		/* stays at the head; resubmitted */
	}
	aio_batch_drop_head(aq);
	if ((err == -EINVAL || err == -EOPNOTSUPP) && s->stage == AIO_ST_SYNC) {
		if (atomic_exchange(&dev->aio_fsync_ok, false))
			log_warn("aio: kernel rejects aio fdsync (%s); using a "
				 "sync thread", strerror(-err));
		aio_worker_queue(aq, s);
		return;
	}
	aio_finish(aq, s, err);
}

void aio_flush(struct bdev_queue *q)
{
	struct aio_queue *aq = q->priv;

	while (aq->nbatch > 0) {
		int ret = io_submit(aq->ctx, aq->nbatch, aq->batch);

		if (ret > 0) {
			aq->nsubmitted += ret;
			aq->nbatch -= ret;
			memmove(aq->batch, aq->batch + ret,
				sizeof(*aq->batch) * aq->nbatch);
		} else if (ret == -EINTR) {
			continue;
		} else if (ret == -EAGAIN || ret == 0) {
			/* Kernel out of aio resources: retry when something
			 * completes, or shortly if nothing is in flight. */
			if (aq->nsubmitted == 0 &&
			    !reactor_timer_armed(&aq->retry))
				reactor_timer_arm(q->reactor, &aq->retry, 1);
			return;
		} else {
			aio_submit_error(aq, ret);
		}
	}
}

static void aio_retry_cb(struct reactor_timer *t)
{
	struct aio_queue *aq = t->arg;

	aio_flush(aq->q);
}

/* ---- completion -------------------------------------------------------- */

bool aio_read_past_eof(struct aio_dev *dev, struct bdev_io *io, uint64_t got)
{
	struct stat st;

	if (dev->is_blk || fstat(dev->fd, &st) < 0)
		return false;
	if ((uint64_t)st.st_size > io->offset + got)
		return false;
	memset((char *)io->buf + got, 0, io->len - got);
	return true;
}

static void aio_event(struct aio_queue *aq, struct aio_slot *s, long res)
{
	struct bdev_io *io = s->io;

	if (s->stage == AIO_ST_SYNC) {
		if ((res == -EINVAL || res == -EOPNOTSUPP) &&
		    atomic_exchange(&aq->dev->aio_fsync_ok, false)) {
			log_warn("aio: aio fdsync failed (%s); using a sync "
				 "thread", strerror((int)-res));
			aio_worker_queue(aq, s);
			return;
		}
		aio_finish(aq, s, res < 0 ? (int)res : 0);
		return;
	}
	if (res < 0) {
		aio_finish(aq, s, (int)res);
		return;
	}
	if ((uint64_t)res != io->len &&
	    !(io->op == BDEV_READ && aio_read_past_eof(aq->dev, io, (uint64_t)res))) {
		/* A file's write stops short when its file system runs out
		 * of space (the next write would say ENOSPC): the device
		 * server answers SPACE ALLOCATION FAILED for it. */
		aio_finish(aq, s, io->op == BDEV_WRITE && !aq->dev->is_blk ?
			   -ENOSPC : -EIO);
		return;
	}
	if (s->sync_after) {
		aio_start_sync(aq, s);
		return;
	}
	aio_finish(aq, s, 0);
}

/*
 * The completion ring the kernel shares with us at the address of the
 * io_context (fs/aio.c, struct aio_ring): it writes events at tail and
 * moves tail on; whoever reaps moves head. Reading it here saves the
 * io_getevents call per wake-up (fio's userspace_reap does the same);
 * a kernel without the layout (magic) gets io_getevents.
 */
struct aio_ring {
	unsigned id, nr, head, tail;
	unsigned magic, compat_features, incompat_features, header_length;
	struct io_event events[];
};
#define AIO_RING_MAGIC 0xa10a10a1u

static int aio_reap_some(struct aio_queue *aq, struct io_event *ev, int max)
{
	struct aio_ring *ring = (struct aio_ring *)aq->ctx;
	struct timespec zero = { 0, 0 };
	unsigned head, tail;
	int n = 0;

	if (ring->magic != AIO_RING_MAGIC || ring->incompat_features)
		return io_getevents(aq->ctx, 0, max, ev, &zero);
	head = ring->head;
	/* Acquire: the events up to tail are written before tail moved. */
	tail = __atomic_load_n(&ring->tail, __ATOMIC_ACQUIRE);
	while (head != tail && n < max) {
		ev[n++] = ring->events[head];
		head = head + 1 < ring->nr ? head + 1 : 0;
	}
	/* Release: the kernel reuses the slots once head passed them. */
	__atomic_store_n(&ring->head, head, __ATOMIC_RELEASE);
	return n;
}

/* Reaps every completion there is. */
static void aio_reap(struct aio_queue *aq)
{
	struct io_event ev[AIO_REAP];
	int n;

	do {
		n = aio_reap_some(aq, ev, AIO_REAP);
		if (n < 0) {
			if (n != -EINTR)
				log_err("aio: io_getevents: %s", strerror(-n));
			break;
		}
		aq->nsubmitted -= n;
		/* res is a signed long carried in an unsigned field; res2 is
		 * unused for file and block I/O. */
		for (int i = 0; i < n; i++)
			aio_event(aq, ev[i].data, (long)ev[i].res);
	} while (n == AIO_REAP);
	aio_worker_reap(aq);
	/* Second stages, slots reused by waiting I/O, EAGAIN leftovers. */
	if (aq->nbatch > 0)
		reactor_defer(aq->q->reactor, &aq->q->flush_defer);
}

/* The eventfd is edge-triggered and never read: every completion the
 * kernel posts signals it again, and each wake-up reaps them all. */
static void aio_ready(struct reactor *r, uint32_t events, void *arg)
{
	(void)r;
	(void)events;
	aio_reap(arg);
}

/* ---- queues ------------------------------------------------------------ */

static void aio_queue_free(struct aio_queue *aq)
{
	if (aq->ctx)
		io_destroy(aq->ctx);
	if (aq->efd >= 0)
		close(aq->efd);
	pthread_mutex_destroy(&aq->dlock);
	if (aq->zbuf)
		bufpool_free(aq->zbuf, AIO_ZERO_CHUNK);
	free(aq->slots);
	free(aq->batch);
	free(aq);
}

int aio_queue_init(struct bdev *b, struct bdev_queue *q)
{
	struct aio_queue *aq = calloc(1, sizeof(*aq));
	int rc = -ENOMEM, n;

	if (!aq)
		return -ENOMEM;
	aq->q = q;
	aq->dev = b->priv;
	aq->efd = -1;
	list_init(&aq->overflow);
	list_init(&aq->wdone);
	pthread_mutex_init(&aq->dlock, NULL);
	bdev_cq_init(&aq->sync_cq, q->reactor, true);
	reactor_timer_init(&aq->retry, aio_retry_cb, aq);
	/* aio-max-nr is system-wide: settle for a smaller context. */
	for (n = AIO_NSLOTS; n >= 16; n /= 2) {
		rc = io_setup(n, &aq->ctx);
		if (rc != -EAGAIN)
			break;
	}
	if (rc < 0) {
		log_err("aio: io_setup: %s", strerror(-rc));
		aq->ctx = 0;
		goto fail;
	}
	aq->nslots = n;
	aq->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	aq->slots = calloc((size_t)n, sizeof(*aq->slots));
	aq->batch = calloc((size_t)n, sizeof(*aq->batch));
	if (aq->efd < 0 || !aq->slots || !aq->batch) {
		rc = aq->efd < 0 ? -errno : -ENOMEM;
		goto fail;
	}
	for (int i = n - 1; i >= 0; i--) {
		aq->slots[i].aq = aq;
		list_init(&aq->slots[i].wnode);
		aq->slots[i].next_free = aq->free;
		aq->free = &aq->slots[i];
	}
	rc = reactor_add_fd(q->reactor, &aq->rfd, aq->efd, EPOLLIN | EPOLLET,
			    aio_ready, aq);
	if (rc < 0)
		goto fail;
	q->priv = aq;
	return 0;
fail:
	aio_queue_free(aq);
	return rc;
}

/* The caller has drained I/O; io_destroy would wait for stragglers. */
void aio_queue_fini(struct bdev_queue *q)
{
	struct aio_queue *aq = q->priv;

	if (!aq)
		return;
	reactor_del_fd(q->reactor, &aq->rfd);
	reactor_timer_cancel(q->reactor, &aq->retry);
	bdev_cq_fini(&aq->sync_cq);
	aio_queue_free(aq);
	q->priv = NULL;
}
