/*
 * The local engine: libaio on a file or block device, O_DIRECT by default,
 * so tcq-bench can measure the raw device the target would export. The
 * completion eventfd is what the worker polls; service() reaps without
 * blocking. Control blocks live in a per-engine array sized by the queue
 * depth: nothing is allocated per I/O.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE	/* O_DIRECT */
#endif
#include <errno.h>
#include <fcntl.h>
#include <libaio.h>
#include <linux/fs.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "initiator/engine.h"

#define LOCAL_BLOCK 512u

struct engine {
	int fd, efd;
	io_context_t ctx;
	uint64_t nblocks;
	uint32_t depth, inflight, seq;
	struct iocb *cbs;		/* depth control blocks */
	struct iocb **free_cbs;		/* stack of unused ones */
	uint32_t nfree;
	struct io_event *events;
};

static uint64_t local_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void local_close(struct engine *e)
{
	if (!e)
		return;
	if (e->ctx)
		io_destroy(e->ctx);
	if (e->efd >= 0)
		close(e->efd);
	if (e->fd >= 0)
		close(e->fd);
	free(e->cbs);
	free(e->free_cbs);
	free(e->events);
	free(e);
}

static struct engine *local_open(const char *target, const struct engine_opts *o,
				 char *err, size_t errlen)
{
	struct engine *e;
	struct stat st;
	uint64_t size = 0;
	uint32_t i;
	int rc;

	e = calloc(1, sizeof(*e));
	if (!e) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	e->fd = e->efd = -1;
	e->depth = o->queue_depth ? o->queue_depth : 1;
	e->fd = open(target, O_RDWR | O_CLOEXEC | (o->direct ? O_DIRECT : 0));
	if (e->fd < 0) {
		snprintf(err, errlen, "%s: %s%s", target, strerror(errno),
			 errno == EINVAL && o->direct ?
			 " (O_DIRECT not supported here; try --buffered)" : "");
		goto fail;
	}
	if (fstat(e->fd, &st) < 0) {
		snprintf(err, errlen, "%s: fstat: %s", target, strerror(errno));
		goto fail;
	}
	if (S_ISBLK(st.st_mode)) {
		if (ioctl(e->fd, BLKGETSIZE64, &size) < 0) {
			snprintf(err, errlen, "%s: BLKGETSIZE64: %s", target,
				 strerror(errno));
			goto fail;
		}
	} else if (S_ISREG(st.st_mode)) {
		size = (uint64_t)st.st_size;
	} else {
		snprintf(err, errlen, "%s: not a regular file or block device",
			 target);
		goto fail;
	}
	e->nblocks = size / LOCAL_BLOCK;
	if (e->nblocks == 0) {
		snprintf(err, errlen, "%s: smaller than one block", target);
		goto fail;
	}
	rc = io_setup((int)e->depth, &e->ctx);
	if (rc < 0) {
		e->ctx = 0;
		snprintf(err, errlen, "io_setup(%u): %s", e->depth, strerror(-rc));
		goto fail;
	}
	e->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (e->efd < 0) {
		snprintf(err, errlen, "eventfd: %s", strerror(errno));
		goto fail;
	}
	e->cbs = calloc(e->depth, sizeof(*e->cbs));
	e->free_cbs = calloc(e->depth, sizeof(*e->free_cbs));
	e->events = calloc(e->depth, sizeof(*e->events));
	if (!e->cbs || !e->free_cbs || !e->events) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	for (i = 0; i < e->depth; i++)
		e->free_cbs[i] = &e->cbs[i];
	e->nfree = e->depth;
	return e;
fail:
	local_close(e);
	return NULL;
}

static uint32_t local_block_size(struct engine *e)
{
	return LOCAL_BLOCK;
}

static uint64_t local_nblocks(struct engine *e)
{
	return e->nblocks;
}

static int local_submit(struct engine *e, struct bench_io *io)
{
	struct iocb *cb, *one[1];
	size_t len = (size_t)io->blocks * LOCAL_BLOCK;
	long long off = (long long)(io->lba * LOCAL_BLOCK);
	int rc;

	if (io->blocks == 0 || io->lba + io->blocks > e->nblocks)
		return -EINVAL;
	if (e->nfree == 0)
		return -EAGAIN;
	cb = e->free_cbs[--e->nfree];
	if (io->write)
		io_prep_pwrite(cb, e->fd, io->buf, len, off);
	else
		io_prep_pread(cb, e->fd, io->buf, len, off);
	io_set_eventfd(cb, e->efd);
	cb->data = io;
	io->t_submit_ns = local_now_ns();
	one[0] = cb;
	rc = io_submit(e->ctx, 1, one);
	if (rc != 1) {
		e->free_cbs[e->nfree++] = cb;
		return rc < 0 ? rc : -EAGAIN;
	}
	e->inflight++;
	return 0;
}

static int local_get_fd(struct engine *e)
{
	return e->efd;
}

static short local_events(struct engine *e)
{
	return POLLIN;
}

static int local_service(struct engine *e, short revents)
{
	struct timespec zero = { 0, 0 };
	uint64_t cnt;
	int n, i;

	/* Drain the counter first so a completion racing with the reap
	 * below re-arms the fd instead of being lost. */
	if (read(e->efd, &cnt, sizeof(cnt)) < 0 && errno != EAGAIN)
		return -errno;
	while (e->inflight) {
		n = io_getevents(e->ctx, 0, (long)e->depth, e->events, &zero);
		if (n < 0)
			return n;
		if (n == 0)
			break;
		for (i = 0; i < n; i++) {
			struct iocb *cb = e->events[i].obj;
			struct bench_io *io = cb->data;
			long res = (long)e->events[i].res;
			size_t want = (size_t)io->blocks * LOCAL_BLOCK;

			e->free_cbs[e->nfree++] = cb;
			e->inflight--;
			io->t_done_ns = local_now_ns();
			io->seq = e->seq++;
			io->sense_key = io->asc = io->ascq = 0;
			if (res < 0)
				io->status = (int)res;
			else if ((size_t)res != want)
				io->status = -EIO;	/* short transfer */
			else
				io->status = 0;
			io->done(io);
		}
	}
	return 0;
}

static bool local_supports_attr(struct engine *e)
{
	return false;
}

const struct engine_ops engine_local = {
	.name = "local",
	.open = local_open,
	.close = local_close,
	.block_size = local_block_size,
	.nblocks = local_nblocks,
	.submit = local_submit,
	.get_fd = local_get_fd,
	.events = local_events,
	.service = local_service,
	.supports_attr = local_supports_attr,
};
