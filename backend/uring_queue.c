/*
 * aio's device through the reactor's io_uring (io_engine = uring; aio.c
 * tells the device, aio_queue.c the same queue on libaio). A slot per I/O
 * in flight is the request's reactor_op: submit() preps an SQE on the
 * queue's reactor's ring, which the pass's one io_uring_submit_and_wait
 * hands to the kernel with the rest of the pass's requests (polls, other
 * LUNs' I/O), and the completion runs in the pass that reaps it, with no
 * eventfd and no io_getevents. The depth budget (bdev_depth.c) bounds what
 * is in flight; slots beyond AIO_NSLOTS wait on the overflow list.
 *
 * Durability as aio.c: FUA is RWF_DSYNC on the write (a kernel that
 * refuses it gets the write, then a data sync), FLUSH and that sync are
 * IORING_OP_FSYNC with IORING_FSYNC_DATASYNC. DISCARD and WRITE ZEROES
 * run synchronously on the reactor (aio_sync.c) and complete next pass.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <liburing.h>
#include "backend/aio_priv.h"
#include "tcq/bufpool.h"
#include "tcq/log.h"

struct uring_queue;

struct uring_slot {
	struct reactor_op op;
	struct bdev_io *io;
	struct uring_queue *uq;
	struct uring_slot *next_free;
	enum aio_stage stage;
	bool dsync;		/* the write asked RWF_DSYNC */
	bool sync_after;	/* FUA without RWF_DSYNC: sync once written */
};

struct uring_queue {
	struct bdev_queue *q;
	struct aio_dev *dev;
	struct uring_slot *slots;
	struct uring_slot *free;
	struct list_node overflow;	/* bdev_io waiting for a free slot */
	struct bdev_cq sync_cq;		/* finished without the ring */
	void *zbuf;			/* zeros for WRITE_ZEROES by hand */
};

static void uring_start(struct uring_queue *uq, struct uring_slot *s,
			struct bdev_io *io);

/* Returns s to the free list, or hands it to an I/O that waited. */
static void uring_slot_release(struct uring_queue *uq, struct uring_slot *s)
{
	s->io = NULL;
	if (!list_empty(&uq->overflow)) {
		struct bdev_io *io = list_first_entry(&uq->overflow,
						      struct bdev_io, node);

		list_del(&io->node);
		uring_start(uq, s, io);
		return;
	}
	s->next_free = uq->free;
	uq->free = s;
}

static void uring_finish(struct uring_queue *uq, struct uring_slot *s,
			 int res)
{
	struct bdev_io *io = s->io;

	uring_slot_release(uq, s);
	bdev_complete(io, res);
}

/* ---- starting I/O ------------------------------------------------------ */

static void uring_prep(struct uring_queue *uq, struct uring_slot *s,
		       struct io_uring_sqe *sqe)
{
	struct bdev_io *io = s->io;
	int fd = uq->dev->fd;

	if (s->stage == AIO_ST_SYNC) {
		io_uring_prep_fsync(sqe, fd, IORING_FSYNC_DATASYNC);
	} else if (io->op == BDEV_READ) {
		io_uring_prep_read(sqe, fd, io->buf, io->len, io->offset);
	} else {
		io_uring_prep_write(sqe, fd, io->buf, io->len, io->offset);
		if (s->dsync)
			sqe->rw_flags = RWF_DSYNC;
	}
	io_uring_sqe_set_data(sqe, &s->op);
}

/* Queues s's current stage on the ring; it goes with the pass's submit.
 * Without an SQE (a broken ring) the I/O fails next pass, not inside the
 * caller. */
static void uring_queue_stage(struct uring_queue *uq, struct uring_slot *s)
{
	struct io_uring_sqe *sqe = reactor_uring_sqe(uq->q->reactor);

	if (!sqe) {
		struct bdev_io *io = s->io;

		log_err("uring: no SQE for an I/O");
		uring_slot_release(uq, s);
		bdev_cq_push(&uq->sync_cq, io, -EIO);
		return;
	}
	uring_prep(uq, s, sqe);
}

static void uring_start(struct uring_queue *uq, struct uring_slot *s,
			struct bdev_io *io)
{
	s->io = io;
	s->stage = AIO_ST_RW;
	s->dsync = s->sync_after = false;
	if (io->op == BDEV_WRITE && (io->flags & BDEV_FUA)) {
		if (atomic_load_explicit(&uq->dev->rwf_dsync_ok,
					 memory_order_relaxed))
			s->dsync = true;
		else
			s->sync_after = true;
	} else if (io->op != BDEV_READ && io->op != BDEV_WRITE) {
		s->stage = AIO_ST_SYNC;	/* BDEV_FLUSH; the others never
					 * get a slot */
	}
	uring_queue_stage(uq, s);
}

void uring_submit(struct bdev_queue *q, struct bdev_io *io)
{
	struct uring_queue *uq = q->priv;
	struct uring_slot *s;

	if (io->op == BDEV_DISCARD) {
		bdev_cq_push(&uq->sync_cq, io,
			     aio_discard(uq->dev, io->offset, io->len));
		return;
	}
	if (io->op == BDEV_WRITE_ZEROES) {
		bdev_cq_push(&uq->sync_cq, io,
			     aio_write_zeroes(uq->dev, &uq->zbuf, io->offset,
					      io->len));
		return;
	}
	s = uq->free;
	if (!s) {
		list_add_tail(&io->node, &uq->overflow);
		return;
	}
	uq->free = s->next_free;
	uring_start(uq, s, io);
}

/* ---- completion -------------------------------------------------------- */

static void uring_done(struct reactor *r, struct reactor_op *op, int res,
		       uint32_t flags)
{
	struct uring_slot *s = container_of(op, struct uring_slot, op);
	struct uring_queue *uq = s->uq;
	struct bdev_io *io = s->io;

	if (s->stage == AIO_ST_SYNC) {
		uring_finish(uq, s, res < 0 ? res : 0);
		return;
	}
	if (s->dsync && (res == -EINVAL || res == -EOPNOTSUPP)) {
		/* No RWF_DSYNC here: write, then sync. */
		if (atomic_exchange(&uq->dev->rwf_dsync_ok, false))
			log_warn("uring: kernel rejects RWF_DSYNC (%s); FUA "
				 "becomes write + fdatasync", strerror(-res));
		s->dsync = false;
		s->sync_after = true;
		uring_queue_stage(uq, s);
		return;
	}
	if (res < 0) {
		uring_finish(uq, s, res);
		return;
	}
	if ((uint64_t)res != io->len &&
	    !(io->op == BDEV_READ &&
	      aio_read_past_eof(uq->dev, io, (uint64_t)res))) {
		/* As aio_queue.c: a file's short write is its file system
		 * running out of space. */
		uring_finish(uq, s, io->op == BDEV_WRITE && !uq->dev->is_blk ?
			     -ENOSPC : -EIO);
		return;
	}
	if (s->sync_after) {
		s->sync_after = false;
		s->stage = AIO_ST_SYNC;
		uring_queue_stage(uq, s);
		return;
	}
	uring_finish(uq, s, 0);
}

/* ---- queues ------------------------------------------------------------ */

static void uring_queue_free(struct uring_queue *uq)
{
	if (uq->zbuf)
		bufpool_free(uq->zbuf, AIO_ZERO_CHUNK);
	free(uq->slots);
	free(uq);
}

int uring_queue_init(struct bdev *b, struct bdev_queue *q)
{
	struct uring_queue *uq;

	/* A queue on an epoll reactor (a test's) has no ring to use. */
	if (!q->reactor->ring)
		return -EOPNOTSUPP;
	uq = calloc(1, sizeof(*uq));
	if (!uq)
		return -ENOMEM;
	uq->slots = calloc(AIO_NSLOTS, sizeof(*uq->slots));
	if (!uq->slots) {
		free(uq);
		return -ENOMEM;
	}
	uq->q = q;
	uq->dev = b->priv;
	list_init(&uq->overflow);
	bdev_cq_init(&uq->sync_cq, q->reactor, true);
	for (int i = AIO_NSLOTS - 1; i >= 0; i--) {
		uq->slots[i].op.fn = uring_done;
		uq->slots[i].uq = uq;
		uq->slots[i].next_free = uq->free;
		uq->free = &uq->slots[i];
	}
	q->priv = uq;
	return 0;
}

/* The caller has drained I/O: no slot is in the kernel. */
void uring_queue_fini(struct bdev_queue *q)
{
	struct uring_queue *uq = q->priv;

	if (!uq)
		return;
	bdev_cq_fini(&uq->sync_cq);
	uring_queue_free(uq);
	q->priv = NULL;
}
