/*
 * rbd: a Ceph RBD image through librbd's asynchronous C API.
 *
 * Spec: rbd:pool=P,image=I[,conf=PATH][,id=CLIENT][,timeout=SECONDS]
 *          [,cache=none|writeback]
 * (pool defaults to "rbd", id to "admin"; conf to librados' search path,
 * which honours CEPH_CONF; cache to none). The capacity is the image's;
 * params->size is ignored.
 *
 * librbd completes I/O on its own threads. Each reactor queue keeps a
 * fixed array of slots (one per I/O in flight, no malloc per command);
 * the librbd callback appends the finished slot to the queue's done list
 * under a mutex and, when the list was empty, wakes the reactor through
 * an eventfd registered on it. The reactor drains the list and calls
 * bdev_complete on its own thread; it never waits for the cluster.
 *
 * Cache: librbd's cache lives in each client, so with several gateways
 * on one image a read through B misses a write still cached in A, and a
 * gateway killed loses the writes it cached and acknowledged. Hence
 * cache=none (the default, as ceph-iscsi does): rbd_cache=false, a write
 * completes once RADOS has it, the LUN reports no volatile write cache
 * (WCE 0, b->write_through) and FUA costs no flush. cache=writeback, for a
 * single gateway: rbd_cache=true with the writeback policy, librbd's
 * cache is the LUN's volatile write cache (WCE): open flushes once so it
 * runs write-back; a FUA write is the write followed by rbd_aio_flush.
 * FLUSH is rbd_aio_flush either way.
 *
 * COMPARE AND WRITE is rbd_aio_compare_and_write: librbd sends the compare
 * and the write to the OSD as one object operation, so it is atomic
 * across every gateway (the in-process range lock of the SBC layer is
 * not). librbd 16.2 takes exactly one 512-byte sector there (longer or
 * unaligned requests get -EINVAL), so b->caw_max is 512: a LUN of 512-byte
 * blocks reports MAXIMUM COMPARE AND WRITE LENGTH 1; with 4096-byte
 * blocks the SBC layer keeps its read-compare-write under its own lock,
 * atomic within this gateway only. librbd reports the miscompare offset
 * counted from the start of the object set, not of the request (16.2);
 * rbd_caw_offset turns it into the offset within the request.
 * WRITE SAME is rbd_aio_writesame: one block sent, librbd repeats it.
 *
 * DISCARD and WRITE_ZEROES are both rbd_aio_write_zeroes
 * (not thick-provisioned): it deallocates whole objects and zeroes the
 * pieces in between, so unmapped blocks read back as zeros as the LUN
 * reports (LBPRZ). rbd_aio_discard would silently skip pieces smaller than
 * rbd_discard_granularity_bytes (64K by default, and a librbd option that
 * a librados handle cannot set), leaving old data behind.
 *
 * Lost cluster: rados_osd_op_timeout, rados_mon_op_timeout and
 * client_mount_timeout are set to timeout= (default 30 s), so an
 * operation the cluster never answers fails with -ETIMEDOUT (the SCSI
 * layer turns it into sense data) instead of hanging; librados itself
 * keeps reconnecting to the monitors in the meantime.
 *
 * Resize: an update watch on the image wakes a small thread that reads
 * the new size (librbd may refresh the image there, which must not run on
 * librbd's notification thread nor on a reactor) and reports it through
 * bdev_resized, which gives every I_T nexus CAPACITY DATA HAS CHANGED.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"	/* autoconf's (HAVE_LIBRBD, _GNU_SOURCE) */
#endif
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stddef.h>
#include "backend/bdev.h"
#include "backend/lun_store.h"
#include "backend/bdev_priv.h"
#include "tcq/compiler.h"

/* The options, known with or without librbd (they list and write back
 * out all the same). */
struct rbd_opts {
	char pool[128], image[256], conf[512], id[128];
	uint64_t timeout;	/* seconds */
	int cache;		/* cache=writeback: librbd caches writes */
};

static const struct rbd_opts rbd_defaults = {
	.pool = "rbd", .id = "admin", .timeout = 30,
};

static const struct bdev_opt_word rbd_cache_modes[] = {
	{ "none", 0 }, { "writeback", 1 }, { NULL, 0 },
};

static const struct bdev_opt rbd_keys[] = {
	{ .key = "pool", .type = BDEV_OPT_STRING,
	  .len = sizeof(rbd_defaults.pool),
	  .offset = offsetof(struct rbd_opts, pool),
	  .help = "RADOS pool of the image (default rbd)" },
	{ .key = "image", .type = BDEV_OPT_STRING, .flags = BDEV_OPT_REQUIRED,
	  .len = sizeof(rbd_defaults.image),
	  .offset = offsetof(struct rbd_opts, image),
	  .help = "the RBD image" },
	{ .key = "conf", .type = BDEV_OPT_STRING,
	  .len = sizeof(rbd_defaults.conf),
	  .offset = offsetof(struct rbd_opts, conf),
	  .help = "Ceph configuration file (default: librados' search, "
		  "CEPH_CONF)" },
	{ .key = "id", .type = BDEV_OPT_STRING,
	  .len = sizeof(rbd_defaults.id),
	  .offset = offsetof(struct rbd_opts, id),
	  .help = "client name without 'client.' (default admin)" },
	{ .key = "timeout", .type = BDEV_OPT_UINT, .min = 1, .max = 3600,
	  .offset = offsetof(struct rbd_opts, timeout),
	  .help = "seconds before an unanswered operation fails (default 30)" },
	{ .key = "cache", .type = BDEV_OPT_ENUM, .words = rbd_cache_modes,
	  .offset = offsetof(struct rbd_opts, cache),
	  .help = "librbd's cache: none (write-through) or writeback (one "
		  "gateway only)" },
};

const struct bdev_opts_def bdev_rbd_opts = {
	.backend = "rbd", .opts = rbd_keys, .nopts = ARRAY_SIZE(rbd_keys),
	.size = sizeof(struct rbd_opts), .defaults = &rbd_defaults,
};

#ifndef HAVE_LIBRBD

struct bdev *bdev_rbd_open(const char *opts, const struct bdev_params *p,
			   char *err, size_t errlen)
{
	struct rbd_opts o = rbd_defaults;

	/* A bad option names itself in this build too. */
	if (bdev_opts_parse(&bdev_rbd_opts, opts, &o, NULL, err, errlen) < 0)
		return NULL;
	snprintf(err, errlen,
		 "rbd: tcq was built without librbd (install librbd-dev and "
		 "librados-dev, then re-run configure)");
	return NULL;
}

int bdev_rbd_cluster(struct bdev *b, void **cluster, const char **name)
{
	return -1;
}

#else

#include <signal.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <rados/librados.h>
#include <rbd/librbd.h>
#include "tcq/log.h"

#define RBD_NSLOTS 256		/* I/Os in flight per queue before overflow */
#define RBD_CAW_MAX 512		/* librbd 16.2: one sector per compare */

enum rbd_stage {
	RBD_ST_MAIN,		/* the operation itself */
	RBD_ST_FUA_FLUSH,	/* the flush that makes a FUA write durable */
};

struct rbd_queue;

struct rbd_slot {
	struct bdev_io *io;
	struct rbd_queue *rq;
	struct rbd_slot *next;	/* free list, or done list */
	enum rbd_stage stage;
	int res;		/* librbd's return value, set by the callback */
	uint64_t mismatch;	/* COMPARE AND WRITE: set by librbd */
};

struct rbd_dev {
	struct bdev *b;
	rados_t cluster;
	rados_ioctx_t ioctx;
	rbd_image_t image;
	bool watching;
	bool cache;		/* cache=writeback: librbd caches writes */
	uint64_t watch_handle;
	char *name;		/* "pool/image", for logs */
	/* Resize thread, woken by the update watch. */
	pthread_t rthread;
	bool rstarted;
	pthread_mutex_t rlock;
	pthread_cond_t rcond;
	bool rpending, rstop;
	uint64_t rsize;		/* last size reported */
};

struct rbd_queue {
	struct bdev_queue *q;
	struct rbd_dev *dev;
	int efd;
	struct reactor_fd rfd;
	struct rbd_slot *slots;
	struct rbd_slot *free;
	struct list_node overflow;	/* bdev_io waiting for a slot */
	struct bdev_cq fail_cq;		/* refused at submission */
	/* Filled by librbd threads, drained by the reactor. */
	pthread_mutex_t dlock;
	struct rbd_slot *done_head, *done_tail;
};

static void rbd_start(struct rbd_queue *rq, struct rbd_slot *s,
		      struct bdev_io *io);

/* ---- completion: librbd thread -> reactor ------------------------------ */

static void rbd_cb(rbd_completion_t c, void *arg)
{
	struct rbd_slot *s = arg;
	struct rbd_queue *rq = s->rq;
	bool wake;

	s->res = (int)rbd_aio_get_return_value(c);
	rbd_aio_release(c);
	s->next = NULL;
	pthread_mutex_lock(&rq->dlock);
	wake = rq->done_head == NULL;
	if (wake)
		rq->done_head = s;
	else
		rq->done_tail->next = s;
	rq->done_tail = s;
	pthread_mutex_unlock(&rq->dlock);
	/* One wake-up per batch: the reactor takes the whole list. */
	if (wake) {
		uint64_t one = 1;

		if (write(rq->efd, &one, sizeof(one)) < 0 && errno != EAGAIN)
			log_err("rbd: eventfd write: %s", strerror(errno));
	}
}

/* Returns s to the free list, or hands it to an I/O that waited. */
static void rbd_slot_release(struct rbd_queue *rq, struct rbd_slot *s)
{
	s->io = NULL;
	if (!list_empty(&rq->overflow)) {
		struct bdev_io *io = list_first_entry(&rq->overflow,
						      struct bdev_io, node);

		list_del(&io->node);
		rbd_start(rq, s, io);
		return;
	}
	s->next = rq->free;
	rq->free = s;
}

static void rbd_finish(struct rbd_queue *rq, struct rbd_slot *s, int res)
{
	struct bdev_io *io = s->io;

	rbd_slot_release(rq, s);
	bdev_complete(io, res);
}

/* Issues the librbd call for s's current stage; <0 when librbd refused. */
static int rbd_issue(struct rbd_queue *rq, struct rbd_slot *s)
{
	rbd_image_t img = rq->dev->image;
	struct bdev_io *io = s->io;
	rbd_completion_t c;
	int rc;

	rc = rbd_aio_create_completion(s, rbd_cb, &c);
	if (rc < 0)
		return rc;
	if (s->stage == RBD_ST_FUA_FLUSH) {
		rc = rbd_aio_flush(img, c);
	} else {
		switch (io->op) {
		case BDEV_READ:
			rc = rbd_aio_read(img, io->offset, io->len, io->buf, c);
			break;
		case BDEV_WRITE:
			rc = rbd_aio_write(img, io->offset, io->len, io->buf, c);
			break;
		case BDEV_FLUSH:
			rc = rbd_aio_flush(img, c);
			break;
		case BDEV_DISCARD:	/* see the header comment */
		case BDEV_WRITE_ZEROES:
			rc = rbd_aio_write_zeroes(img, io->offset, io->len, c,
						  0, 0);
			break;
		case BDEV_COMPARE_AND_WRITE:
			s->mismatch = UINT64_MAX;
			rc = (int)rbd_aio_compare_and_write(img, io->offset,
				io->len, io->cmp_buf, io->buf, c, &s->mismatch,
				0);
			break;
		case BDEV_WRITE_SAME:
			rc = (int)rbd_aio_writesame(img, io->offset, io->len,
						    io->buf, io->pattern_len,
						    c, 0);
			break;
		default:
			rc = -EINVAL;
			break;
		}
	}
	if (rc < 0)
		rbd_aio_release(c);	/* no callback will come */
	return rc;
}

static void rbd_start(struct rbd_queue *rq, struct rbd_slot *s,
		      struct bdev_io *io)
{
	int rc;

	s->io = io;
	s->stage = RBD_ST_MAIN;
	rc = rbd_issue(rq, s);
	if (rc < 0) {
		/* Complete on the next pass, as if the device answered. */
		rbd_slot_release(rq, s);
		bdev_cq_push(&rq->fail_cq, io, rc);
	}
}

/* The offset of the first differing byte within io's range, from what
 * librbd reported: the request's own offset (as documented), the image's,
 * or (16.2) the object set's plus the request's. io->offset is 512-aligned
 * and io->len 512 at most (RBD_CAW_MAX), so the remainder modulo 512 is
 * the offset in all three cases; larger requests take it as given. */
static uint64_t rbd_caw_offset(const struct bdev_io *io, uint64_t m)
{
	if (m >= io->offset && m - io->offset < io->len)
		return m - io->offset;
	if (m < io->len)
		return m;
	return io->len <= RBD_CAW_MAX && !(io->offset % RBD_CAW_MAX) ?
	       m % RBD_CAW_MAX : 0;
}

/* Whether io is a write that FUA makes durable with a flush after it. */
static bool rbd_needs_fua_flush(const struct rbd_dev *dev,
				const struct bdev_io *io)
{
	if (!dev->cache || !(io->flags & BDEV_FUA))
		return false;	/* no cache: a completed write is in RADOS */
	return io->op == BDEV_WRITE || io->op == BDEV_WRITE_ZEROES ||
	       io->op == BDEV_COMPARE_AND_WRITE || io->op == BDEV_WRITE_SAME;
}

/* A slot librbd finished: next stage, or complete its I/O. */
static void rbd_reap_one(struct rbd_queue *rq, struct rbd_slot *s)
{
	struct bdev_io *io = s->io;
	int res = s->res;

	if (res == -EILSEQ && s->stage == RBD_ST_MAIN &&
	    io->op == BDEV_COMPARE_AND_WRITE) {
		io->miscompare = rbd_caw_offset(io, s->mismatch);
		rbd_finish(rq, s, res);	/* an answer, not a failure */
		return;
	}
	if (res < 0) {
		log_debug("rbd %s: %s at %llu+%llu failed: %s", rq->dev->name,
			  s->stage == RBD_ST_FUA_FLUSH ? "FUA flush" : "I/O",
			  (unsigned long long)io->offset,
			  (unsigned long long)io->len, strerror(-res));
		rbd_finish(rq, s, res);
		return;
	}
	/* Reads return the byte count, writes and the rest 0: both succeed
	 * (librbd zero-fills reads past written data). */
	if (s->stage == RBD_ST_MAIN && rbd_needs_fua_flush(rq->dev, io)) {
		s->stage = RBD_ST_FUA_FLUSH;
		res = rbd_issue(rq, s);
		if (res == 0)
			return;
	}
	rbd_finish(rq, s, res < 0 ? res : 0);
}

static void rbd_efd_ready(struct reactor *r, uint32_t events, void *arg)
{
	struct rbd_queue *rq = arg;
	struct rbd_slot *s;
	uint64_t n;

	/* Read first: a callback after the swap below writes again. */
	if (read(rq->efd, &n, sizeof(n)) < 0 && errno != EAGAIN)
		log_err("rbd: eventfd read: %s", strerror(errno));
	pthread_mutex_lock(&rq->dlock);
	s = rq->done_head;
	rq->done_head = rq->done_tail = NULL;
	pthread_mutex_unlock(&rq->dlock);
	while (s) {
		struct rbd_slot *next = s->next;

		rbd_reap_one(rq, s);	/* may reuse s: read next first */
		s = next;
	}
}

/* ---- queues ------------------------------------------------------------ */

static void rbd_submit(struct bdev_queue *q, struct bdev_io *io)
{
	struct rbd_queue *rq = q->priv;
	struct rbd_slot *s = rq->free;

	if (!s) {	/* queue_depth above RBD_NSLOTS */
		list_add_tail(&io->node, &rq->overflow);
		return;
	}
	rq->free = s->next;
	rbd_start(rq, s, io);
}

static void rbd_queue_free(struct rbd_queue *rq)
{
	if (rq->efd >= 0)
		close(rq->efd);
	pthread_mutex_destroy(&rq->dlock);
	free(rq->slots);
	free(rq);
}

static int rbd_queue_init(struct bdev *b, struct bdev_queue *q)
{
	struct rbd_queue *rq = calloc(1, sizeof(*rq));

	if (!rq)
		return -1;
	rq->q = q;
	rq->dev = b->priv;
	list_init(&rq->overflow);
	pthread_mutex_init(&rq->dlock, NULL);
	bdev_cq_init(&rq->fail_cq, q->reactor, true);
	rq->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	rq->slots = calloc(RBD_NSLOTS, sizeof(*rq->slots));
	if (rq->efd < 0 || !rq->slots)
		goto fail;
	for (int i = RBD_NSLOTS - 1; i >= 0; i--) {
		rq->slots[i].rq = rq;
		rq->slots[i].next = rq->free;
		rq->free = &rq->slots[i];
	}
	if (reactor_add_fd(q->reactor, &rq->rfd, rq->efd, EPOLLIN,
			   rbd_efd_ready, rq) < 0)
		goto fail;
	q->priv = rq;
	return 0;
fail:
	rbd_queue_free(rq);
	return -1;
}

/* No I/O is in flight (bdev_close's contract). */
static void rbd_queue_fini(struct bdev_queue *q)
{
	struct rbd_queue *rq = q->priv;

	if (!rq)
		return;
	reactor_del_fd(q->reactor, &rq->rfd);
	bdev_cq_fini(&rq->fail_cq);
	rbd_queue_free(rq);
	q->priv = NULL;
}

/* ---- resize ------------------------------------------------------------ */

static void *rbd_resize_thread(void *arg)
{
	struct rbd_dev *dev = arg;

	pthread_mutex_lock(&dev->rlock);
	for (;;) {
		uint64_t size;
		int rc;

		while (!dev->rpending && !dev->rstop)
			pthread_cond_wait(&dev->rcond, &dev->rlock);
		if (dev->rstop)
			break;
		dev->rpending = false;
		pthread_mutex_unlock(&dev->rlock);
		rc = rbd_get_size(dev->image, &size);
		pthread_mutex_lock(&dev->rlock);
		if (rc < 0) {
			log_warn("rbd %s: cannot read the size after an "
				 "update: %s", dev->name, strerror(-rc));
			continue;
		}
		size -= size % dev->b->block_size;
		if (size == dev->rsize || size == 0)
			continue;	/* another kind of update */
		log_info("rbd %s: resized from %llu to %llu bytes", dev->name,
			 (unsigned long long)dev->rsize,
			 (unsigned long long)size);
		dev->rsize = size;
		bdev_resized(dev->b, size);
	}
	pthread_mutex_unlock(&dev->rlock);
	return NULL;
}

/* librbd's notification thread: only wake the resize thread. */
static void rbd_update_cb(void *arg)
{
	struct rbd_dev *dev = arg;

	pthread_mutex_lock(&dev->rlock);
	dev->rpending = true;
	pthread_cond_signal(&dev->rcond);
	pthread_mutex_unlock(&dev->rlock);
}

/* ---- open / close ------------------------------------------------------ */

static void rbd_dev_free(struct rbd_dev *dev)
{
	if (dev->watching)
		rbd_update_unwatch(dev->image, dev->watch_handle);
	if (dev->rstarted) {
		pthread_mutex_lock(&dev->rlock);
		dev->rstop = true;
		pthread_cond_signal(&dev->rcond);
		pthread_mutex_unlock(&dev->rlock);
		pthread_join(dev->rthread, NULL);
	}
	if (dev->image)
		rbd_close(dev->image);
	if (dev->ioctx)
		rados_ioctx_destroy(dev->ioctx);
	if (dev->cluster)
		rados_shutdown(dev->cluster);
	pthread_mutex_destroy(&dev->rlock);
	pthread_cond_destroy(&dev->rcond);
	free(dev->name);
	free(dev);
}

static void rbd_close_dev(struct bdev *b)
{
	if (b->priv)
		rbd_dev_free(b->priv);
	b->priv = NULL;
}

/* The image's size is its own (`rbd resize`): read it back now, rather
 * than wait for the update watch. */
static int rbd_resize_dev(struct bdev *b, uint64_t *size, bool shrink,
			  char *err, size_t errlen)
{
	struct rbd_dev *dev = b->priv;
	uint64_t now;
	int rc = rbd_get_size(dev->image, &now);

	if (rc < 0) {
		snprintf(err, errlen, "rbd: %s: size: %s", dev->name,
			 strerror(-rc));
		return -1;
	}
	now -= now % b->block_size;
	if (*size && *size != now) {
		snprintf(err, errlen, "rbd: %s has %llu bytes: resize the "
			 "image itself (rbd resize)", dev->name,
			 (unsigned long long)now);
		return -1;
	}
	pthread_mutex_lock(&dev->rlock);
	dev->rsize = now;	/* the watch need not report it again */
	pthread_mutex_unlock(&dev->rlock);
	*size = now;
	return 0;
}

static const struct bdev_ops rbd_ops = {
	.name = "rbd",
	.queue_init = rbd_queue_init,
	.queue_fini = rbd_queue_fini,
	.submit = rbd_submit,
	.close = rbd_close_dev,
	.resize = rbd_resize_dev,
	.shared_state = rados_store_open,	/* gateways of one image */
};

/* Connects and opens the image; fills dev, or writes err. */
static int rbd_connect(struct rbd_dev *dev, const struct rbd_opts *o,
		       bool read_only, char *err, size_t errlen)
{
	static const char *const tmo_keys[] = {
		"rados_osd_op_timeout", "rados_mon_op_timeout",
		"client_mount_timeout",
	};
	char name[160], tmo[16];
	int rc;

	snprintf(name, sizeof(name), "client.%s", o->id);
	rc = rados_create2(&dev->cluster, "ceph", name, 0);
	if (rc < 0) {
		dev->cluster = NULL;
		snprintf(err, errlen, "rbd: rados_create2: %s", strerror(-rc));
		return -1;
	}
	rc = rados_conf_read_file(dev->cluster, o->conf[0] ? o->conf : NULL);
	if (rc < 0) {
		snprintf(err, errlen, "rbd: cannot read the Ceph configuration "
			 "%s: %s", o->conf[0] ? o->conf : "(default search, "
			 "CEPH_CONF)", strerror(-rc));
		return -1;
	}
	rados_conf_parse_env(dev->cluster, NULL);	/* CEPH_ARGS */
	snprintf(tmo, sizeof(tmo), "%llu", (unsigned long long)o->timeout);
	for (size_t i = 0; i < sizeof(tmo_keys) / sizeof(tmo_keys[0]); i++) {
		rc = rados_conf_set(dev->cluster, tmo_keys[i], tmo);
		if (rc < 0) {
			snprintf(err, errlen, "rbd: setting %s: %s",
				 tmo_keys[i], strerror(-rc));
			return -1;
		}
	}
	/* librbd reads its options from this handle's configuration. */
	rc = rados_conf_set(dev->cluster, "rbd_cache",
			    o->cache ? "true" : "false");
	if (rc == 0 && o->cache)
		rc = rados_conf_set(dev->cluster, "rbd_cache_policy",
				    "writeback");
	if (rc < 0) {
		snprintf(err, errlen, "rbd: setting rbd_cache: %s",
			 strerror(-rc));
		return -1;
	}
	rc = rados_connect(dev->cluster);
	if (rc < 0) {
		snprintf(err, errlen, "rbd: cannot connect to the cluster as "
			 "%s: %s", name, strerror(-rc));
		rados_shutdown(dev->cluster);
		dev->cluster = NULL;	/* shut down already */
		return -1;
	}
	rc = rados_ioctx_create(dev->cluster, o->pool, &dev->ioctx);
	if (rc < 0) {
		dev->ioctx = NULL;
		snprintf(err, errlen, "rbd: pool '%s': %s", o->pool,
			 strerror(-rc));
		return -1;
	}
	rc = read_only ? rbd_open_read_only(dev->ioctx, o->image, &dev->image,
					    NULL)
		       : rbd_open(dev->ioctx, o->image, &dev->image, NULL);
	if (rc < 0) {
		dev->image = NULL;
		snprintf(err, errlen, "rbd: image '%s' in pool '%s': %s",
			 o->image, o->pool, strerror(-rc));
		return -1;
	}
	return 0;
}

static struct bdev *rbd_open_dev(const struct rbd_opts *o,
				 const struct bdev_params *p,
				 char *err, size_t errlen);

int bdev_rbd_cluster(struct bdev *b, void **cluster, const char **name)
{
	struct rbd_dev *dev;

	if (!b || b->ops != &rbd_ops || !(dev = b->priv))
		return -1;
	*cluster = dev->cluster;
	*name = dev->name;
	return 0;
}

struct bdev *bdev_rbd_open(const char *opts, const struct bdev_params *p,
			   char *err, size_t errlen)
{
	struct rbd_opts o;
	struct bdev *b;
	sigset_t all, old;

	o = rbd_defaults;
	if (bdev_opts_parse(&bdev_rbd_opts, opts, &o, NULL, err, errlen) < 0)
		return NULL;
	/* librados starts its threads here, maybe before the daemon blocks
	 * SIGTERM for its signalfd: they must not take process signals. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	b = rbd_open_dev(&o, p, err, errlen);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return b;
}

static struct bdev *rbd_open_dev(const struct rbd_opts *o,
				 const struct bdev_params *p,
				 char *err, size_t errlen)
{
	struct rbd_dev *dev;
	struct bdev *b;
	uint64_t size;
	uint32_t bs = p->block_size ? p->block_size : 512;
	int rc;

	dev = calloc(1, sizeof(*dev));
	if (!dev) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	pthread_mutex_init(&dev->rlock, NULL);
	pthread_cond_init(&dev->rcond, NULL);
	if (asprintf(&dev->name, "%s/%s", o->pool, o->image) < 0) {
		dev->name = NULL;
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	if (rbd_connect(dev, o, p->read_only, err, errlen) < 0)
		goto fail;
	rc = rbd_get_size(dev->image, &size);
	if (rc < 0) {
		snprintf(err, errlen, "rbd: %s: size: %s", dev->name,
			 strerror(-rc));
		goto fail;
	}
	/* librbd's cache stays write-through until the first flush, for
	 * guests that never flush. SCSI initiators see the volatile write
	 * cache (WCE) and flush, and FUA and WCE=0 writes are flushed one by
	 * one, so start in write-back: without it a 4K write waits for the
	 * OSD's disk (milliseconds instead of a fraction of one). */
	dev->cache = o->cache;
	if (!p->read_only && o->cache) {
		rc = rbd_flush(dev->image);
		if (rc < 0) {
			snprintf(err, errlen, "rbd: %s: flush: %s", dev->name,
				 strerror(-rc));
			goto fail;
		}
	}
	size -= size % bs;	/* a partial last block is not addressable */
	b = bdev_alloc(&rbd_ops, p, size, err, errlen);
	if (!b)
		goto fail;
	b->priv = dev;
	b->thin = true;		/* discard deallocates, reads back zeros */
	b->write_through = !o->cache;
	b->caw_max = RBD_CAW_MAX;
	b->write_same = true;
	dev->b = b;
	dev->rsize = size;
	if (pthread_create(&dev->rthread, NULL, rbd_resize_thread, dev) != 0) {
		snprintf(err, errlen, "rbd: cannot start the resize thread");
		goto fail_b;
	}
	dev->rstarted = true;
	rc = rbd_update_watch(dev->image, &dev->watch_handle, rbd_update_cb,
			      dev);
	if (rc < 0)	/* serve anyway: only resizes go unnoticed */
		log_warn("rbd %s: no update watch (%s): resizes will not be "
			 "seen", dev->name, strerror(-rc));
	else
		dev->watching = true;
	log_info("rbd %s: %llu bytes, block size %u, cache %s%s", dev->name,
		 (unsigned long long)size, b->block_size,
		 o->cache ? "writeback" : "none",
		 p->read_only ? ", read-only" : "");
	return b;
fail_b:
	b->priv = NULL;
	bdev_free(b);
fail:
	rbd_dev_free(dev);
	return NULL;
}

#endif /* HAVE_LIBRBD */
