/*
 * aio: what runs outside the kernel's aio (see aio.c). A worker thread
 * per device does fdatasync for kernels or files without aio fsync and
 * hands the slots back through each queue's eventfd; DISCARD and WRITE
 * ZEROES are quick ioctls or fallocate calls made on the reactor, with
 * zeros written by hand when neither is there.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>
#include <linux/falloc.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include "backend/aio_priv.h"
#include "tcq/bufpool.h"
#include "tcq/log.h"

/* ---- fdatasync worker (for kernels without aio fsync on this file) ----- */

/* Moves every node of from (maybe none) to the list head to. */
static void take_all(struct list_node *to, struct list_node *from)
{
	if (list_empty(from)) {
		list_init(to);
		return;
	}
	to->next = from->next;
	to->prev = from->prev;
	to->next->prev = to;
	to->prev->next = to;
	list_init(from);
}

/* Any thread: s is synced with result res; its queue's reactor hears. */
static void sync_done(struct aio_slot *s, int res)
{
	struct aio_queue *aq = s->aq;
	uint64_t one = 1;

	s->wres = res;
	pthread_mutex_lock(&aq->dlock);
	list_add_tail(&s->wnode, &aq->wdone);
	pthread_mutex_unlock(&aq->dlock);
	if (write(aq->efd, &one, sizeof(one)) < 0 && errno != EAGAIN)
		log_err("aio: worker eventfd write: %s", strerror(errno));
}

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
		take_all(&jobs, &dev->wjobs);
		pthread_mutex_unlock(&dev->wlock);

		res = fdatasync(dev->fd) < 0 ? -errno : 0;
		while (!list_empty(&jobs)) {
			struct aio_slot *s = list_first_entry(&jobs,
						struct aio_slot, wnode);

			list_del(&s->wnode);
			sync_done(s, res);
		}
		pthread_mutex_lock(&dev->wlock);
	}
	pthread_mutex_unlock(&dev->wlock);
	return NULL;
}

void aio_worker_queue(struct aio_queue *aq, struct aio_slot *s)
{
	struct aio_dev *dev = aq->dev;

	pthread_mutex_lock(&dev->wlock);
	if (!dev->wstarted) {
		if (pthread_create(&dev->wthread, NULL, aio_worker, dev)) {
			pthread_mutex_unlock(&dev->wlock);
			log_err("aio: cannot start sync worker; sync inline");
			/* Completed from aio_ready like the worker's. */
			sync_done(s, fdatasync(dev->fd) < 0 ? -errno : 0);
			return;
		}
		dev->wstarted = true;
	}
	list_add_tail(&s->wnode, &dev->wjobs);
	pthread_cond_signal(&dev->wcond);
	pthread_mutex_unlock(&dev->wlock);
}

void aio_worker_init(struct aio_dev *dev)
{
	pthread_mutex_init(&dev->wlock, NULL);
	pthread_cond_init(&dev->wcond, NULL);
	list_init(&dev->wjobs);
}

/* On aq's reactor: completes the slots the worker finished for it. */
void aio_worker_reap(struct aio_queue *aq)
{
	struct list_node done;

	pthread_mutex_lock(&aq->dlock);
	take_all(&done, &aq->wdone);
	pthread_mutex_unlock(&aq->dlock);
	while (!list_empty(&done)) {
		struct aio_slot *s = list_first_entry(&done, struct aio_slot,
						      wnode);

		list_del(&s->wnode);
		aio_finish(aq, s, s->wres);
	}
}

/* Ends the worker (no job may be pending) and frees what it used. */
void aio_worker_stop(struct aio_dev *dev)
{
	pthread_mutex_lock(&dev->wlock);
	dev->wstop = true;
	pthread_cond_signal(&dev->wcond);
	pthread_mutex_unlock(&dev->wlock);
	if (dev->wstarted)
		pthread_join(dev->wthread, NULL);
	pthread_mutex_destroy(&dev->wlock);
	pthread_cond_destroy(&dev->wcond);
}

/* ---- DISCARD and WRITE ZEROES ----------------------------------------- */

int aio_discard(struct aio_dev *dev, uint64_t off, uint64_t len)
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

int aio_write_zeroes(struct aio_dev *dev, void **zbuf, uint64_t off,
		     uint64_t len)
{
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
	if (!*zbuf) {
		*zbuf = bufpool_alloc(AIO_ZERO_CHUNK);
		if (!*zbuf)
			return -ENOMEM;
		memset(*zbuf, 0, AIO_ZERO_CHUNK);
	}
	while (len > 0) {
		size_t n = len > AIO_ZERO_CHUNK ? AIO_ZERO_CHUNK : (size_t)len;
		ssize_t w = pwrite(dev->fd, *zbuf, n, (off_t)off);

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
