/*
 * aio: libaio on a regular file or a block device, O_DIRECT when the
 * filesystem allows it.
 *
 * Each reactor queue has its own io_context and eventfd: submit() preps
 * an iocb from the queue's slot array and adds it to a batch; while the
 * device has little in flight the batch goes to io_submit at once, else
 * the end-of-pass flush() hands the whole batch to one io_submit. The
 * eventfd wakes the reactor to reap completions without blocking.
 *
 * Durability: FUA uses RWF_DSYNC on the write; a kernel that rejects it
 * gets a write followed by a data sync. FLUSH is an aio fdsync; a kernel
 * that rejects that gets fdatasync() on a worker thread, completed through
 * the same eventfd. DISCARD and WRITE_ZEROES run synchronously on the
 * reactor (fallocate / BLKDISCARD / BLKZEROOUT are usually quick) and
 * complete on the next pass.
 *
 * Options: path=FILE (else params->path), direct=0|1 (default 1),
 * rwf_dsync=0 and aio_fsync=0 force the fallbacks above (for kernels or
 * filesystems where those misbehave; the tests use them too).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <libaio.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/falloc.h>
#include <linux/fs.h>
#include <sys/eventfd.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include "backend/bdev.h"
#include "backend/bdev_priv.h"
#include "tcq/bufpool.h"
#include "tcq/compiler.h"
#include "tcq/log.h"

#define AIO_NSLOTS 1024		/* io_setup size and iocbs per queue */
#define AIO_REAP 64		/* events per io_getevents call */
#define AIO_SHALLOW 16		/* in flight below this: submit at once */
#define AIO_ZERO_CHUNK (1u << 20)

enum aio_stage {
	AIO_ST_RW,		/* the read or write itself */
	AIO_ST_SYNC,		/* fdsync: FLUSH, or the second half of FUA */
};

struct aio_queue;

struct aio_slot {
	struct iocb cb;
	struct bdev_io *io;
	struct aio_queue *aq;
	struct aio_slot *next_free;
	struct list_node wnode;	/* worker job list, then worker done list */
	enum aio_stage stage;
	bool sync_after;	/* FUA without RWF_DSYNC: sync once written */
	int wres;		/* fdatasync result from the worker */
};

struct aio_dev {
	int fd;
	bool is_blk;
	_Atomic bool rwf_dsync_ok;
	_Atomic bool aio_fsync_ok;
	/* fdatasync fallback thread, started on first need */
	pthread_mutex_t wlock;
	pthread_cond_t wcond;
	struct list_node wjobs;
	bool wstarted, wstop;
	pthread_t wthread;
};

struct aio_queue {
	struct bdev_queue *q;
	struct aio_dev *dev;
	io_context_t ctx;
	int nslots;
	int efd;
	struct reactor_fd rfd;
	struct aio_slot *slots;
	struct aio_slot *free;
	struct iocb **batch;	/* prepped, not yet accepted by io_submit */
	int nbatch;
	int nsubmitted;		/* accepted by the kernel, not yet reaped */
	struct list_node overflow;	/* bdev_io waiting for a free slot */
	struct bdev_cq sync_cq;	/* finished without the kernel's aio */
	struct reactor_timer retry;	/* io_submit EAGAIN with none in flight */
	pthread_mutex_t dlock;
	struct list_node wdone;	/* slots the worker finished */
	void *zbuf;		/* zeros for WRITE_ZEROES by hand */
};

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

static void aio_finish(struct aio_queue *aq, struct aio_slot *s, int res)
{
	struct bdev_io *io = s->io;

	aio_slot_release(aq, s);
	bdev_complete(io, res);
}

/* ---- fdatasync worker (for kernels without aio fsync on this file) ----- */

static void *aio_worker(void *arg)
{
	struct aio_dev *dev = arg;
	struct list_node jobs;

	pthread_mutex_lock(&dev->wlock);
	for (;;) {
		int res;

		while (list_empty(&dev->wjobs) && !dev->wstop)
			pthread_cond_wait(&dev->wcond, &dev->wlock);
		if (list_empty(&dev->wjobs))
			break;
		/* One fdatasync covers every job queued before it started. */
		jobs.next = dev->wjobs.next;
		jobs.prev = dev->wjobs.prev;
		jobs.next->prev = &jobs;
		jobs.prev->next = &jobs;
		list_init(&dev->wjobs);
		pthread_mutex_unlock(&dev->wlock);

		res = fdatasync(dev->fd) < 0 ? -errno : 0;
		while (!list_empty(&jobs)) {
			struct aio_slot *s = list_first_entry(&jobs,
						struct aio_slot, wnode);
			struct aio_queue *aq = s->aq;
			uint64_t one = 1;

			list_del(&s->wnode);
			s->wres = res;
			pthread_mutex_lock(&aq->dlock);
			list_add_tail(&s->wnode, &aq->wdone);
			pthread_mutex_unlock(&aq->dlock);
			if (write(aq->efd, &one, sizeof(one)) < 0 &&
			    errno != EAGAIN)
				log_err("aio: worker eventfd write: %s",
					strerror(errno));
		}
		pthread_mutex_lock(&dev->wlock);
	}
	pthread_mutex_unlock(&dev->wlock);
	return NULL;
}

static void aio_worker_queue(struct aio_queue *aq, struct aio_slot *s)
{
	struct aio_dev *dev = aq->dev;

	pthread_mutex_lock(&dev->wlock);
	if (!dev->wstarted) {
		if (pthread_create(&dev->wthread, NULL, aio_worker, dev)) {
			uint64_t one = 1;

			pthread_mutex_unlock(&dev->wlock);
			log_err("aio: cannot start sync worker; sync inline");
			s->wres = fdatasync(dev->fd) < 0 ? -errno : 0;
			pthread_mutex_lock(&aq->dlock);
			list_add_tail(&s->wnode, &aq->wdone);
			pthread_mutex_unlock(&aq->dlock);
			/* Completed from aio_ready like the worker's. */
			if (write(aq->efd, &one, sizeof(one)) < 0)
				log_err("aio: eventfd write: %s",
					strerror(errno));
			return;
		}
		dev->wstarted = true;
	}
	list_add_tail(&s->wnode, &dev->wjobs);
	pthread_cond_signal(&dev->wcond);
	pthread_mutex_unlock(&dev->wlock);
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

static int aio_discard(struct aio_dev *dev, uint64_t off, uint64_t len)
{
	if (dev->is_blk) {
		uint64_t range[2] = { off, len };

		return ioctl(dev->fd, BLKDISCARD, range) < 0 ? -errno : 0;
	}
	if (fallocate(dev->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
		      (off_t)off, (off_t)len) < 0)
		return -errno;
	return 0;
}

static int aio_write_zeroes(struct aio_queue *aq, uint64_t off, uint64_t len)
{
	struct aio_dev *dev = aq->dev;

	if (dev->is_blk) {
		uint64_t range[2] = { off, len };

		if (ioctl(dev->fd, BLKZEROOUT, range) == 0)
			return 0;
	} else {
		if (fallocate(dev->fd, FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE,
			      (off_t)off, (off_t)len) == 0)
			return 0;
		if (fallocate(dev->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
			      (off_t)off, (off_t)len) == 0)
			return 0;
	}
	/* Neither: write zeros (aligned buffer, fine for O_DIRECT). */
	if (!aq->zbuf) {
		aq->zbuf = bufpool_alloc(AIO_ZERO_CHUNK);
		if (!aq->zbuf)
			return -ENOMEM;
		memset(aq->zbuf, 0, AIO_ZERO_CHUNK);
	}
	while (len > 0) {
		size_t n = len > AIO_ZERO_CHUNK ? AIO_ZERO_CHUNK : (size_t)len;
		ssize_t w = pwrite(dev->fd, aq->zbuf, n, (off_t)off);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (w == 0)
			return -EIO;
		off += (uint64_t)w;
		len -= (uint64_t)w;
	}
	return 0;
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

static void aio_submit(struct bdev_queue *q, struct bdev_io *io)
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
			     aio_write_zeroes(aq, io->offset, io->len));
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

static void aio_flush(struct bdev_queue *q)
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

/* A short read that ends at the file's end reads zeros beyond it. */
static bool aio_read_past_eof(struct aio_queue *aq, struct bdev_io *io,
			      uint64_t got)
{
	struct stat st;

	if (aq->dev->is_blk || fstat(aq->dev->fd, &st) < 0)
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
	    !(io->op == BDEV_READ && aio_read_past_eof(aq, io, (uint64_t)res))) {
		aio_finish(aq, s, -EIO);
		return;
	}
	if (s->sync_after) {
		aio_start_sync(aq, s);
		return;
	}
	aio_finish(aq, s, 0);
}

static void aio_ready(struct reactor *r, uint32_t events, void *arg)
{
	struct aio_queue *aq = arg;
	struct io_event ev[AIO_REAP];
	struct timespec zero = { 0, 0 };
	struct list_node done;
	uint64_t cnt;
	int n;

	if (read(aq->efd, &cnt, sizeof(cnt)) < 0 && errno != EAGAIN)
		log_err("aio: eventfd read: %s", strerror(errno));
	do {
		n = io_getevents(aq->ctx, 0, AIO_REAP, ev, &zero);
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

	pthread_mutex_lock(&aq->dlock);
	if (list_empty(&aq->wdone)) {
		list_init(&done);
	} else {
		done.next = aq->wdone.next;
		done.prev = aq->wdone.prev;
		done.next->prev = &done;
		done.prev->next = &done;
		list_init(&aq->wdone);
	}
	pthread_mutex_unlock(&aq->dlock);
	while (!list_empty(&done)) {
		struct aio_slot *s = list_first_entry(&done, struct aio_slot,
						      wnode);

		list_del(&s->wnode);
		aio_finish(aq, s, s->wres);
	}
	/* Second stages, slots reused by waiting I/O, EAGAIN leftovers. */
	if (aq->nbatch > 0)
		reactor_defer(r, &aq->q->flush_defer);
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

static int aio_queue_init(struct bdev *b, struct bdev_queue *q)
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
	rc = reactor_add_fd(q->reactor, &aq->rfd, aq->efd, EPOLLIN, aio_ready,
			    aq);
	if (rc < 0)
		goto fail;
	q->priv = aq;
	return 0;
fail:
	aio_queue_free(aq);
	return rc;
}

/* The caller has drained I/O; io_destroy would wait for stragglers. */
static void aio_queue_fini(struct bdev_queue *q)
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

static void aio_close(struct bdev *b)
{
	struct aio_dev *dev = b->priv;

	if (!dev)
		return;
	pthread_mutex_lock(&dev->wlock);
	dev->wstop = true;
	pthread_cond_signal(&dev->wcond);
	pthread_mutex_unlock(&dev->wlock);
	if (dev->wstarted)
		pthread_join(dev->wthread, NULL);
	pthread_mutex_destroy(&dev->wlock);
	pthread_cond_destroy(&dev->wcond);
	close(dev->fd);
	free(dev);
	b->priv = NULL;
}

/* Holes of a sparse file are deallocated blocks; a block device (or a
 * filesystem without SEEK_DATA) reports everything mapped. */
static int aio_lba_status(struct bdev *b, uint64_t offset, uint64_t *len,
			  bool *mapped)
{
	struct aio_dev *dev = b->priv;
	uint64_t bs = b->block_size;
	off_t data, hole;

	*mapped = true;
	*len = b->size - offset;
	if (dev->is_blk)
		return 0;
	data = lseek(dev->fd, (off_t)offset, SEEK_DATA);
	if (data < 0) {
		if (errno == ENXIO) {	/* no data up to the end */
			*mapped = false;
			return 0;
		}
		return 0;		/* unsupported: all mapped */
	}
	if ((uint64_t)data > offset) {
		/* A hole first; partial blocks of data count as mapped. */
		uint64_t end = (uint64_t)data / bs * bs;
		if (end > offset) {
			*mapped = false;
			*len = end - offset;
			return 0;
		}
	}
	hole = lseek(dev->fd, (off_t)offset, SEEK_HOLE);
	if (hole > (off_t)offset) {
		uint64_t end = ((uint64_t)hole + bs - 1) / bs * bs;
		if (end > b->size)
			end = b->size;
		*len = end - offset;
	}
	return 0;
}

static const struct bdev_ops aio_ops = {
	.name = "aio",
	.queue_init = aio_queue_init,
	.queue_fini = aio_queue_fini,
	.submit = aio_submit,
	.flush = aio_flush,
	.close = aio_close,
	.lba_status = aio_lba_status,
};

/* ---- open -------------------------------------------------------------- */

struct aio_opts {
	char path[4096];	/* "": the LUN's path */
	bool direct, rwf_dsync, aio_fsync;
};

static const struct aio_opts aio_defaults = {
	.direct = true, .rwf_dsync = true, .aio_fsync = true,
};

static const struct bdev_opt aio_keys[] = {
	{ .key = "path", .type = BDEV_OPT_STRING,
	  .len = sizeof(aio_defaults.path),
	  .offset = offsetof(struct aio_opts, path),
	  .help = "file or block device (default: the LUN's path)" },
	{ .key = "direct", .type = BDEV_OPT_BOOL,
	  .offset = offsetof(struct aio_opts, direct),
	  .help = "O_DIRECT where the filesystem allows it" },
	{ .key = "rwf_dsync", .type = BDEV_OPT_BOOL,
	  .offset = offsetof(struct aio_opts, rwf_dsync),
	  .help = "FUA as RWF_DSYNC (0: a write, then a data sync)" },
	{ .key = "aio_fsync", .type = BDEV_OPT_BOOL,
	  .offset = offsetof(struct aio_opts, aio_fsync),
	  .help = "FLUSH as an aio fdsync (0: fdatasync on a worker thread)" },
};

const struct bdev_opts_def bdev_aio_opts = {
	.backend = "aio", .opts = aio_keys, .nopts = ARRAY_SIZE(aio_keys),
	.size = sizeof(struct aio_opts), .defaults = &aio_defaults,
};

/* O_DIRECT on a regular file: does the filesystem's alignment fit ours? */
static bool aio_dio_fits(int fd, uint32_t bs)
{
#ifdef STATX_DIOALIGN
	struct statx stx;

	if (statx(fd, "", AT_EMPTY_PATH, STATX_DIOALIGN, &stx) == 0 &&
	    (stx.stx_mask & STATX_DIOALIGN) && stx.stx_dio_offset_align &&
	    (bs % stx.stx_dio_offset_align ||
	     BUFPOOL_ALIGN % stx.stx_dio_mem_align))
		return false;
#endif
	return true;
}

struct bdev *bdev_aio_open(const char *opts, const struct bdev_params *p,
			   char *err, size_t errlen)
{
	struct aio_opts o = aio_defaults;
	const char *path;
	uint32_t bs = p->block_size ? p->block_size : 512;
	bool direct, created = false, is_blk;
	uint64_t size;
	struct stat st;
	struct aio_dev *dev;
	struct bdev *b;
	int fd, flags;

	if (bdev_opts_parse(&bdev_aio_opts, opts, &o, NULL, err, errlen) < 0)
		return NULL;
	path = o.path[0] ? o.path : p->path;
	direct = o.direct;
	if (!path || !*path) {
		snprintf(err, errlen, "aio: no path given");
		return NULL;
	}
	if (bs != 512 && bs != 4096) {
		snprintf(err, errlen, "block size %u: must be 512 or 4096", bs);
		return NULL;
	}
	if (p->size % bs) {
		snprintf(err, errlen, "aio: size %llu is not a multiple of "
			 "block size %u", (unsigned long long)p->size, bs);
		return NULL;
	}

	flags = (p->read_only ? O_RDONLY : O_RDWR) | O_CLOEXEC;
	if (stat(path, &st) < 0) {
		if (errno != ENOENT || !p->create || p->read_only) {
			snprintf(err, errlen, "aio: %s: %s", path, strerror(errno));
			return NULL;
		}
		if (!p->size) {
			snprintf(err, errlen, "aio: %s: a size is needed to "
				 "create it", path);
			return NULL;
		}
		flags |= O_CREAT | O_EXCL;
		created = true;
	}
	fd = open(path, flags | (direct ? O_DIRECT : 0), 0644);
	if (fd < 0 && direct && errno == EINVAL) {
		log_warn("aio: %s: O_DIRECT not supported, using buffered I/O",
			 path);
		direct = false;
		if (created)
			unlink(path);
		fd = open(path, flags, 0644);
	}
	if (fd < 0) {
		snprintf(err, errlen, "aio: %s: %s", path, strerror(errno));
		return NULL;
	}
	if (fstat(fd, &st) < 0) {
		snprintf(err, errlen, "aio: %s: %s", path, strerror(errno));
		goto fail;
	}
	is_blk = S_ISBLK(st.st_mode);
	if (S_ISREG(st.st_mode)) {
		size = p->size ? p->size : (uint64_t)st.st_size;
		if (p->size > (uint64_t)st.st_size) {
			/* Grow sparse; a smaller file is never shrunk. */
			if (p->read_only) {
				snprintf(err, errlen, "aio: %s is %llu bytes, "
					 "smaller than the size asked and "
					 "read-only", path,
					 (unsigned long long)st.st_size);
				goto fail;
			}
			if (ftruncate(fd, (off_t)p->size) < 0) {
				snprintf(err, errlen, "aio: %s: extend: %s",
					 path, strerror(errno));
				goto fail;
			}
		}
		if (direct && !aio_dio_fits(fd, bs)) {
			int fd2 = open(path, flags & ~(O_CREAT | O_EXCL));

			if (fd2 < 0) {
				snprintf(err, errlen, "aio: %s: %s", path,
					 strerror(errno));
				goto fail;
			}
			log_warn("aio: %s: O_DIRECT alignment exceeds block "
				 "size %u, using buffered I/O", path, bs);
			close(fd);
			fd = fd2;
			direct = false;
		}
	} else if (is_blk) {
		uint64_t devsize;
		int lbs;

		if (ioctl(fd, BLKGETSIZE64, &devsize) < 0 ||
		    ioctl(fd, BLKSSZGET, &lbs) < 0) {
			snprintf(err, errlen, "aio: %s: %s", path,
				 strerror(errno));
			goto fail;
		}
		if (p->size > devsize) {
			snprintf(err, errlen, "aio: %s is a %llu-byte device; "
				 "cannot grow it to %llu", path,
				 (unsigned long long)devsize,
				 (unsigned long long)p->size);
			goto fail;
		}
		if (direct && lbs > 0 && bs % (uint32_t)lbs) {
			snprintf(err, errlen, "aio: %s: device block size %d "
				 "does not divide block size %u", path, lbs, bs);
			goto fail;
		}
		size = p->size ? p->size : devsize;
	} else {
		snprintf(err, errlen, "aio: %s: not a regular file or block "
			 "device", path);
		goto fail;
	}

	b = bdev_alloc(&aio_ops, p, size, err, errlen);
	if (!b)
		goto fail;
	dev = calloc(1, sizeof(*dev));
	if (!dev) {
		snprintf(err, errlen, "out of memory");
		bdev_free(b);
		goto fail;
	}
	dev->fd = fd;
	dev->is_blk = is_blk;
	atomic_init(&dev->rwf_dsync_ok, o.rwf_dsync);
	atomic_init(&dev->aio_fsync_ok, o.aio_fsync);
	pthread_mutex_init(&dev->wlock, NULL);
	pthread_cond_init(&dev->wcond, NULL);
	list_init(&dev->wjobs);
	b->priv = dev;
	b->direct = direct;
	b->thin = !is_blk;
	return b;
fail:
	close(fd);
	if (created)
		unlink(path);
	return NULL;
}
