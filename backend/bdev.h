/*
 * Block backends behind one small interface. A backend is opened once per
 * LUN (struct bdev) and gets one queue per reactor (struct bdev_queue), so
 * submission and completion stay on the thread of the connection that
 * issued the I/O. The generic layer (bdev_depth.c) caps the I/O in flight
 * at the LUN's queue_depth across all of its queues (one budget per bdev,
 * no lock) and keeps the excess of each queue in arrival order.
 */
#ifndef TCQ_BDEV_H
#define TCQ_BDEV_H
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/uio.h>
#include "tcq/list.h"
#include "tcq/reactor.h"

struct reactor;
struct bdev;
struct bdev_queue;

/* What a device model (the disk backend) tells of its queues and caches
 * since the LUN opened: why a benchmark's curve bends. */
struct bdev_model_stats {
	const char *model;		/* "hdd", "hdd-15k", "ssd" */
	uint64_t commands;		/* completed by the model */
	uint64_t read_hits;		/* reads served by read-ahead */
	uint64_t cached_writes;		/* writes completed in the cache */
	uint64_t media_ops;		/* seek + rotation + transfer */
	uint64_t destages;		/* dirty extents written back */
	double mean_drive_queue;	/* time average at the drive, the one
					 * in service included */
	double mean_host_queue;		/* waiting for a drive slot */
	double mean_commands;		/* commands in the model (host queue
					 * and drive), the pieces of one
					 * command counted once */
	double mean_busy_dies;		/* ssd */
	double busy_fraction;		/* hdd: mechanism busy, 0..1 */
	uint64_t elapsed_ns;		/* since the first command */
};

enum bdev_op {
	BDEV_READ,
	BDEV_WRITE,
	BDEV_FLUSH,		/* make completed writes durable */
	BDEV_DISCARD,		/* deallocate (UNMAP) */
	BDEV_WRITE_ZEROES,
	/* Optional operations, offered when the bdev says so (bdev.c
	 * refuses them with -EOPNOTSUPP otherwise). */
	BDEV_COMPARE_AND_WRITE,	/* b->caw_max: compares cmp_buf with the
				 * medium and writes buf only if equal, as one
				 * atomic step of the backend (across every
				 * client of a shared medium); a miscompare
				 * completes with -EILSEQ and miscompare set */
	BDEV_WRITE_SAME,	/* b->write_same: the pattern_len bytes at
				 * buf repeated over [offset, offset+len) */
};

#define BDEV_FUA 0x1		/* this write durable before completion */

struct bdev_io {
	enum bdev_op op;
	unsigned flags;
	uint64_t offset;	/* bytes */
	uint64_t len;		/* bytes */
	void *buf;		/* page-aligned for READ and WRITE */
	int result;		/* 0 or -errno, set before done() */
	void (*done)(struct bdev_io *io);
	void *ctx;
	const void *submitter;	/* who sent it (the task's I_T nexus), an
				 * opaque key a backend may compare (the
				 * disk model's cfq elevator), never
				 * dereference; NULL: the device itself */
	const void *command;	/* the command this I/O is a piece of: the
				 * pieces of one cut READ share it, so a
				 * device model counts the command once;
				 * NULL: a whole command. Opaque, as above */
	struct bdev_queue *q;
	struct list_node node;	/* wait list / backend-private queues */
	/* Operands of the optional operations (ignored by the others). */
	const void *cmp_buf;	/* COMPARE_AND_WRITE: len bytes to compare */
	uint32_t pattern_len;	/* WRITE_SAME: bytes at buf, divides len */
	uint64_t miscompare;	/* COMPARE_AND_WRITE -EILSEQ: offset of the
				 * first differing byte, from offset */
	uint64_t start_ns;	/* set by bdev: the reactor pass it started */
	uint64_t end_ns;	/* set by bdev: the pass that completed it */
	uint64_t ticket;	/* set by bdev when io waits: its place
				 * among the LUN's waiters (bdev_depth.c) */
};

struct lun_store;

struct bdev_ops {
	const char *name;
	/* Per-reactor queue setup; q->priv is the backend's. */
	int (*queue_init)(struct bdev *b, struct bdev_queue *q);
	void (*queue_fini)(struct bdev_queue *q);
	/* Start io; completion later through bdev_complete() on q's reactor.
	 * Backends may batch: flush() runs at the end of the reactor pass. */
	void (*submit)(struct bdev_queue *q, struct bdev_io *io);
	void (*flush)(struct bdev_queue *q);
	void (*close)(struct bdev *b);
	/* Optional: is the run starting at offset mapped, and how long is
	 * it (bytes, at least one block)? Cheap metadata lookup (lseek
	 * SEEK_DATA/SEEK_HOLE), run synchronously. NULL: all mapped. */
	int (*lba_status)(struct bdev *b, uint64_t offset, uint64_t *len,
			  bool *mapped);
	/* Optional: the medium becomes *size bytes (a file grows, or with
	 * shrink shrinks), or, for a medium whose size is its own (a block
	 * device, an image), *size is read back from it (a given size must
	 * then match). Synchronous; 0, or -1 with a message in err. NULL:
	 * the backend cannot be resized. */
	int (*resize)(struct bdev *b, uint64_t *size, bool shrink, char *err,
		      size_t errlen);
	/* Optional: the space the medium holds and may still get (see
	 * bdev_space). Cheap (a stat), run synchronously. NULL: unknown. */
	int (*space)(struct bdev *b, uint64_t *allocated, uint64_t *available);
	/* Optional: a device model's statistics (see bdev_model_stats).
	 * Any thread. NULL: the backend models no device. */
	int (*model_stats)(struct bdev *b, struct bdev_model_stats *st);
	/* Optional: the medium is shared by gateways (an rbd image): opens
	 * the store of the LUN state they share, next to it (see
	 * bdev_shared_state). NULL: the medium is this process' alone. */
	struct lun_store *(*shared_state)(struct bdev *b, char *err,
					  size_t errlen);
	/* Optional: reads len bytes at off at once, from any thread, what
	 * a READ would return (the crash lab's copy of a still LUN). NULL:
	 * the backend cannot (bdev_read_sync says so). */
	int (*read_sync)(struct bdev *b, uint64_t off, void *buf, size_t len);
};

#define BDEV_MAX_QUEUES 64

struct bdev_queue {
	struct bdev *bdev;
	struct reactor *reactor;
	void *priv;
	uint32_t inflight;		/* this queue's share of the LUN's */
	struct list_node waiting;	/* no slot yet, in arrival order */
	uint64_t published;		/* head ticket shown to other
					 * reactors (BDEV_NO_TICKET: none) */
	struct reactor_defer flush_defer; /* ops->flush at end of pass */
};

#define BDEV_NO_TICKET UINT64_MAX

/*
 * The LUN-wide depth budget (bdev_depth.c). Every reactor's submissions
 * and completions write the first line; the second is written only while
 * I/O waits for a slot, and read by every submission. Padding in struct
 * bdev keeps both apart from the fields the data path only reads.
 */
struct bdev_budget {
	_Atomic uint32_t inflight;	/* started and not yet complete */
	_Atomic uint32_t peak;		/* highest inflight since reset */
	char line[56];
	_Atomic uint64_t waitmask;	/* bit i: queue i has waiting I/O */
	_Atomic uint64_t kickmask;	/* bit i: a wake-up posted to it */
	_Atomic uint64_t tickets;	/* I/Os that ever had to wait */
	_Atomic uint32_t kicks;		/* wake-ups posted, not yet run */
};

struct bdev {
	const struct bdev_ops *ops;
	char *spec;		/* as configured, for logs and tcqctl */
	uint64_t size;		/* bytes */
	uint32_t block_size;	/* logical block size: 512 or 4096 */
	bool read_only;
	bool thin;		/* sparse file: UNMAP punches holes */
	bool direct;		/* O_DIRECT in effect */
	bool zero_reads;	/* reads always return zeros (null): the
				 * device server may read into the shared
				 * zero region instead of a buffer */
	bool write_through;	/* no volatile write cache: a completed
				 * write is durable (the LUN reports WCE 0) */
	uint32_t caw_max;	/* bytes one BDEV_COMPARE_AND_WRITE may
				 * cover (0: not offered) */
	bool write_same;	/* BDEV_WRITE_SAME offered */
	_Atomic uint32_t queue_depth;	/* live-changeable cap on the I/O
					 * in flight over all queues */
	void *priv;
	pthread_mutex_t qlock;		/* guards queues[] creation and the
					 * resize hook */
	struct bdev_queue *queues[BDEV_MAX_QUEUES];
	/* Read by other reactors while a queue may go away: kept here, not
	 * in the queue. The head ticket of queue i's wait list
	 * (BDEV_NO_TICKET: none), and the reactor of queue i (set when the
	 * queue is made; reactors outlive the bdev). */
	_Atomic uint64_t wait_head[BDEV_MAX_QUEUES];
	struct reactor *qreactor[BDEV_MAX_QUEUES];
	char pad0[64];
	struct bdev_budget budget;
	char pad1[64];
	/* Who hears of a medium resized under us (the LUN); see
	 * bdev_set_resize_hook. */
	void (*on_resize)(void *arg, uint64_t size);
	void *resize_arg;
	/* Sequential read-ahead (backend/prefetch.h); NULL until the LUN
	 * sets it (bdev_set_prefetch), then kept until close. */
	struct prefetch *prefetch;
};

/* Options a LUN passes to open a backend (from config or --export). */
struct bdev_params {
	const char *path;
	uint64_t size;		/* 0: take from the file or device */
	uint32_t block_size;	/* 0: 512 */
	bool read_only;
	bool create;		/* create a sparse file of size if missing */
	uint32_t queue_depth;	/* 0: 128 */
};

/*
 * Opens a backend from a spec "NAME[:key=value,...]" ("aio", "null", "ram";
 * a bare path, or an empty spec with p->path, means aio). Options: aio
 * path=, direct=0|1, rwf_dsync=0, aio_fsync=0; null and ram size=N[KMGT].
 * Returns NULL and writes a message to err.
 */
struct bdev *bdev_open(const char *spec, const struct bdev_params *p,
		       char *err, size_t errlen);
/* No I/O may be in flight; queues are torn down on the caller's thread,
 * so call it before their reactors are finalised, and either after
 * bdev_queue_put returned 0 for every queue (no wake-up still posted) or
 * once the reactors no longer run (undelivered posts are dropped). */
void bdev_close(struct bdev *b);

/* The queue of b for reactor r, created on first use (call it on r's
 * thread); NULL when r->index >= BDEV_MAX_QUEUES or setup failed. */
struct bdev_queue *bdev_queue_get(struct bdev *b, struct reactor *r);
/* On r's thread, while the reactors run (a LUN removed live): tears
 * down b's queue for r once nothing is in flight on it. 0 (also when
 * there is none), -EBUSY when I/O is still in flight or waiting, or a
 * wake-up for b is still posted to any reactor: call it again later. bdev_close then has no queue of r left to tear down. */
int bdev_queue_put(struct bdev *b, struct reactor *r);

/* Changes the medium's size while it is in use (size 0: read it back
 * from a medium whose size is its own): see bdev_ops.resize. On success
 * the size is published and the resize hook runs (the LUN tells its
 * initiators). 0, or -1 with a message in err; nothing changes then. */
int bdev_resize(struct bdev *b, uint64_t size, bool shrink, char *err,
		size_t errlen);

/* Submits io on q; io->done runs later on q's reactor thread. It starts
 * at once when the LUN has fewer than queue_depth I/Os in flight over
 * all its queues, else it waits in q's list (bdev_depth.c). */
void bdev_submit(struct bdev_queue *q, struct bdev_io *io);
/* Called by backends when io finished (on q's reactor thread). */
void bdev_complete(struct bdev_io *io, int result);
/* A wrapper's I/O to its base for io from above: down zeroed, then io's
 * operation, its operands and who sent it (submitter, command) copied,
 * so no layer between the SCSI core and the device model drops one;
 * done and ctx are the wrapper's. */
void bdev_io_forward(struct bdev_io *down, const struct bdev_io *io,
		     void (*done)(struct bdev_io *), void *ctx);

/* The LUN's I/Os in flight at the backend now, over every queue, and the
 * most there were at once since open or bdev_peak_reset (never below
 * *now). Any thread, relaxed loads. */
void bdev_depth_counts(const struct bdev *b, uint32_t *now, uint32_t *peak);
/* The peak starts again from what is in flight now (stats reset). */
void bdev_peak_reset(struct bdev *b);

/*
 * Resize notification, for backends whose medium can change size under
 * the target (rbd). The owner of b (lun_create) sets the hook, and clears
 * it (fn NULL) before it goes away. A backend that sees a new size calls
 * bdev_resized from any thread: b->size is updated, then fn(arg, size)
 * runs, serialised with hook changes.
 */
void bdev_set_resize_hook(struct bdev *b,
			  void (*fn)(void *arg, uint64_t size), void *arg);
void bdev_resized(struct bdev *b, uint64_t size);

/* A read-only, all-zero region of at least len bytes shared by everyone
 * (NULL when len is larger than it): Data-In for a zero_reads backend is
 * sent from it, with no buffer to fill. */
void *bdev_zero_region(size_t len);
bool bdev_is_zero_region(const void *p);

/* The device model's statistics of b (through no wrapper): 0, or
 * -EOPNOTSUPP when b models no device. Any thread. */
int bdev_model_stats(struct bdev *b, struct bdev_model_stats *st);

/*
 * Sequential prefetch (backend/prefetch.c): off; auto, on when the
 * backend reads the medium directly (O_DIRECT: no page cache reads
 * ahead); or on whatever the backend. max: the bytes its buffers may hold
 * (at least 64 KiB). The first call allocates its state and may fail
 * (-ENOMEM, nothing changed); later ones cannot fail (a live change).
 * Any thread.
 */
enum bdev_prefetch { BDEV_PREFETCH_OFF, BDEV_PREFETCH_AUTO, BDEV_PREFETCH_ON };
int bdev_set_prefetch(struct bdev *b, enum bdev_prefetch mode, uint64_t max);

/* What prefetch did since the LUN opened (tcqctl stats, metrics). */
struct bdev_prefetch_stats {
	bool on;		/* in effect (auto resolved) */
	uint64_t max;		/* prefetch_max */
	uint64_t held;		/* bytes its buffers hold now */
	uint64_t hits;		/* reads served from a buffer, no disk I/O */
	uint64_t misses;	/* reads sent to the disk while on */
	uint64_t prefetched;	/* bytes read ahead and installed */
	uint64_t dropped;	/* bytes read ahead, dropped by writes */
};
/* 0, or -EOPNOTSUPP when prefetch was never set on b. Any thread. */
int bdev_prefetch_stats(struct bdev *b, struct bdev_prefetch_stats *st);

/* Provisioning status of the run at offset (GET LBA STATUS). */
int bdev_lba_status(struct bdev *b, uint64_t offset, uint64_t *len,
		    bool *mapped);

/*
 * Allocation of a thin medium, in bytes: *allocated is what the medium
 * holds now (a sparse file's st_blocks * 512), *available what it may
 * still allocate (the free space of the file system under it; may be
 * shared with other files). 0, or -EOPNOTSUPP when the backend cannot
 * tell (block devices, ram, rbd), or another -errno.
 */
int bdev_space(struct bdev *b, uint64_t *allocated, uint64_t *available);

/* The option table of the backend called name ("null", "delay", ...;
 * NULL when there is none such): its keys with their types and help, for
 * listings, and for writing options back out (backend/bdev_opts.h). */
struct bdev_opts_def;
const struct bdev_opts_def *bdev_backend_opts(const char *name);

/* Backend constructors, used by bdev_open. */
struct bdev *bdev_aio_open(const char *opts, const struct bdev_params *p,
			   char *err, size_t errlen);
/* One crash state of a recording, read-only (backend/crash.c):
 * "crash:record=FILE,state=K[,model=sbc|ordered][,upto=MARK][,max=N]
 * [,seed=S]". */
struct bdev *bdev_crash_open(const char *opts, const struct bdev_params *p,
			     char *err, size_t errlen);
struct bdev *bdev_null_open(const char *opts, const struct bdev_params *p,
			    char *err, size_t errlen);
struct bdev *bdev_ram_open(const char *opts, const struct bdev_params *p,
			   char *err, size_t errlen);
/* Ceph RBD image over librbd (backend/rbd.c): "rbd:pool=P,image=I[,conf=
 * PATH][,id=CLIENT][,timeout=SECONDS][,cache=none|writeback]". Fails with a clear message when
 * tcq was built without librbd. */
struct bdev *bdev_rbd_open(const char *opts, const struct bdev_params *p,
			   char *err, size_t errlen);
/* The medium's bytes [off, off + len) read at once (no queue, any thread;
 * nothing may be writing them): 0, -EOPNOTSUPP when the backend cannot,
 * or -errno. */
int bdev_read_sync(struct bdev *b, uint64_t off, void *buf, size_t len);
/* The store of the state gateways of b's medium share (reservations;
 * backend/lun_store.h): 0 with *s NULL when the medium is not shared, 0
 * with the store opened, or -1 with a message in err. */
int bdev_shared_state(struct bdev *b, struct lun_store **s, char *err,
		      size_t errlen);
/* The rados_t of an rbd backend and its "pool/image" name, for state
 * kept next to the image (backend/rados_store.c); -1: b is not rbd. */
int bdev_rbd_cluster(struct bdev *b, void **cluster, const char **name);
/* Test backends wrapping another one ("NAME:opts,base=SPEC", base=
 * last; see backend/wrap.h and conf/tcqd.conf). */
struct bdev *bdev_delay_open(const char *opts, const struct bdev_params *p,
			     char *err, size_t errlen);
struct bdev *bdev_fault_open(const char *opts, const struct bdev_params *p,
			     char *err, size_t errlen);
struct bdev *bdev_cache_open(const char *opts, const struct bdev_params *p,
			     char *err, size_t errlen);
/* A device model (backend/disk.c): "disk:model=hdd|hdd-15k|ssd[,key=
 * value...][,base=SPEC]"; base defaults to null of the model's
 * capacity. */
struct bdev *bdev_disk_open(const char *opts, const struct bdev_params *p,
			    char *err, size_t errlen);
/* Power cut on a cache backend: drops every write not yet durable (no
 * FUA, no completed flush). Any thread. Returns the number of dirty
 * blocks dropped, or -EINVAL when b is not a cache backend. */
int bdev_cache_crash(struct bdev *b);
/* Does spec end up on aio over the LUN's path (so the path is needed,
 * and may be created)? True for "", "aio[:...]" and wrappers whose
 * innermost base is one of those. */
bool bdev_spec_uses_path(const char *spec);
#endif
