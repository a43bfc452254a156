/*
 * What the files of the aio backend share (aio.c tells the design):
 * aio.c opens the file or device and answers for it (geometry, options,
 * provisioning), aio_queue.c moves I/O through each reactor's io_context,
 * aio_sync.c does what runs outside the kernel's aio (the fdatasync
 * worker thread, DISCARD and WRITE ZEROES); uring_queue.c moves the same
 * device's I/O through the reactor's io_uring instead, when tcqd runs
 * io_engine = uring. Private to backend/.
 */
#ifndef TCQ_BACKEND_AIO_PRIV_H
#define TCQ_BACKEND_AIO_PRIV_H
#include <libaio.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include "backend/bdev.h"
#include "backend/bdev_priv.h"

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
	int buffered_fd;	/* read_sync's (not O_DIRECT); -1 until used */
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

/* aio_queue.c: the bdev_ops of a queue. */
int aio_queue_init(struct bdev *b, struct bdev_queue *q);
void aio_queue_fini(struct bdev_queue *q);
void aio_submit(struct bdev_queue *q, struct bdev_io *io);
void aio_flush(struct bdev_queue *q);
/* Frees s (or gives it to a waiting I/O) and completes its I/O. */
void aio_finish(struct aio_queue *aq, struct aio_slot *s, int res);

/* aio_sync.c: the fdatasync worker of a device, started on first use. */
void aio_worker_init(struct aio_dev *dev);
/* Hands s to the worker; it completes through aq's eventfd. */
void aio_worker_queue(struct aio_queue *aq, struct aio_slot *s);
void aio_worker_reap(struct aio_queue *aq);
void aio_worker_stop(struct aio_dev *dev);
/* Synchronous on the reactor; 0 or -errno. zbuf: the queue's buffer of
 * zeros for writing them by hand, allocated on first need. */
int aio_discard(struct aio_dev *dev, uint64_t off, uint64_t len);
int aio_write_zeroes(struct aio_dev *dev, void **zbuf, uint64_t off,
		     uint64_t len);
/* aio_queue.c: a short read got bytes short of io's end because the file
 * ends there: the rest is zeroed and it counts as whole. */
bool aio_read_past_eof(struct aio_dev *dev, struct bdev_io *io, uint64_t got);

/* uring_queue.c: the queue ops on the reactor's io_uring, for a reactor
 * of REACTOR_URING (aio.c picks them at open); no flush op: the pass's
 * one submit takes the SQEs. */
int uring_queue_init(struct bdev *b, struct bdev_queue *q);
void uring_queue_fini(struct bdev_queue *q);
void uring_submit(struct bdev_queue *q, struct bdev_io *io);
#endif
