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
 *
 * On io_engine = uring the same device runs its queues on the reactor's
 * io_uring instead (uring_queue.c): reads, writes and the data syncs are
 * requests on the ring, with the same fallbacks.
 *
 * This file opens the file or device and answers for it; the queues are
 * in aio_queue.c (uring_queue.c), the worker thread and DISCARD/WRITE ZEROES in
 * aio_sync.c (aio_priv.h).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <config.h>	/* autoconf's (HAVE_LIBURING) */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include "backend/aio_priv.h"
#include "tcq/bufpool.h"
#include "tcq/compiler.h"
#include "tcq/log.h"

static void aio_close(struct bdev *b)
{
	struct aio_dev *dev = b->priv;

	if (!dev)
		return;
	aio_worker_stop(dev);
	close(dev->fd);
	if (dev->buffered_fd >= 0)
		close(dev->buffered_fd);
	free(dev);
	b->priv = NULL;
}

/* A file takes the new size (grown sparse; shrunk only when asked); a
 * block device's size is its own, read back. */
static int aio_resize(struct bdev *b, uint64_t *size, bool shrink, char *err,
		      size_t errlen)
{
	struct aio_dev *dev = b->priv;
	uint64_t cur = __atomic_load_n(&b->size, __ATOMIC_ACQUIRE);

	if (dev->is_blk) {
		uint64_t devsize;

		if (ioctl(dev->fd, BLKGETSIZE64, &devsize) < 0) {
			snprintf(err, errlen, "aio: BLKGETSIZE64: %s",
				 strerror(errno));
			return -1;
		}
		devsize -= devsize % b->block_size;
		if (*size && *size != devsize) {
			snprintf(err, errlen, "aio: the block device has %llu "
				 "bytes: resize the device itself",
				 (unsigned long long)devsize);
			return -1;
		}
		*size = devsize;
		return 0;
	}
	if (!*size) {
		snprintf(err, errlen, "aio: a file needs the new size");
		return -1;
	}
	if (*size < cur && !shrink) {
		snprintf(err, errlen, "aio: %llu bytes is smaller than the "
			 "LUN's %llu: shrinking needs --shrink",
			 (unsigned long long)*size, (unsigned long long)cur);
		return -1;
	}
	if (ftruncate(dev->fd, (off_t)*size) < 0) {
		snprintf(err, errlen, "aio: ftruncate: %s", strerror(errno));
		return -1;
	}
	return 0;
}

/* Through a buffered descriptor of the same file: no alignment rules, and
 * the O_DIRECT writes already dropped what the page cache held of it. */
static int aio_read_sync(struct bdev *b, uint64_t off, void *buf, size_t len)
{
	struct aio_dev *dev = b->priv;
	char proc[64];
	uint8_t *p = buf;

	if (dev->buffered_fd < 0) {
		snprintf(proc, sizeof(proc), "/proc/self/fd/%d", dev->fd);
		dev->buffered_fd = open(proc, O_RDONLY | O_CLOEXEC);
		if (dev->buffered_fd < 0)
			return -errno;
	}
	while (len) {
		ssize_t n = pread(dev->buffered_fd, p, len, (off_t)off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0) {		/* past a file's end: zeros */
			memset(p, 0, len);
			break;
		}
		p += n;
		off += (uint64_t)n;
		len -= (size_t)n;
	}
	return 0;
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

/* A sparse file: the blocks it holds, and the free space of its file
 * system (what an unprivileged writer may still get). A block device
 * has no such accounting. */
static int aio_space(struct bdev *b, uint64_t *allocated,
		     uint64_t *available)
{
	struct aio_dev *dev = b->priv;
	struct stat st;
	struct statvfs sv;

	if (dev->is_blk)
		return -EOPNOTSUPP;
	if (fstat(dev->fd, &st) < 0 || fstatvfs(dev->fd, &sv) < 0)
		return -errno;
	*allocated = (uint64_t)st.st_blocks * 512;
	*available = (uint64_t)sv.f_bavail * sv.f_frsize;
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
	.read_sync = aio_read_sync,
	.resize = aio_resize,
	.space = aio_space,
};

#ifdef HAVE_LIBURING
/* The same device with its queues on the reactors' io_uring. */
static const struct bdev_ops aio_uring_ops = {
	.name = "aio",
	.queue_init = uring_queue_init,
	.queue_fini = uring_queue_fini,
	.submit = uring_submit,
	.close = aio_close,
	.lba_status = aio_lba_status,
	.read_sync = aio_read_sync,
	.resize = aio_resize,
	.space = aio_space,
};
#endif

/* The queues of the engine the reactors run (reactor_set_engine). */
static const struct bdev_ops *aio_engine_ops(void)
{
#ifdef HAVE_LIBURING
	if (reactor_engine() == REACTOR_URING)
		return &aio_uring_ops;
#endif
	return &aio_ops;
}

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

/* The file or device while bdev_aio_open opens it. */
struct aio_opening {
	const char *path;
	int fd, flags;
	bool direct, created, is_blk;
	uint64_t size;
};

/* What the parameters ask of any file: a path, a block size of 512 or
 * 4096, a size in whole blocks. */
static int aio_check_params(const char *path, const struct bdev_params *p,
			    uint32_t bs, char *err, size_t errlen)
{
	if (!path || !*path) {
		snprintf(err, errlen, "aio: no path given");
		return -1;
	}
	if (bs != 512 && bs != 4096) {
		snprintf(err, errlen, "block size %u: must be 512 or 4096", bs);
		return -1;
	}
	if (p->size % bs) {
		snprintf(err, errlen, "aio: size %llu is not a multiple of "
			 "block size %u", (unsigned long long)p->size, bs);
		return -1;
	}
	return 0;
}

/* Opens the path (created when missing if asked, writable and sized),
 * with O_DIRECT unless the filesystem refuses it. */
static int aio_open_path(struct aio_opening *ao, const struct bdev_params *p,
			 char *err, size_t errlen)
{
	struct stat st;

	ao->flags = (p->read_only ? O_RDONLY : O_RDWR) | O_CLOEXEC;
	if (stat(ao->path, &st) < 0) {
		if (errno == ENOENT && !p->create && !p->read_only) {
			/* say how to get it: the key that creates it */
			snprintf(err, errlen, "aio: %s: no such file (create=yes "
				 "with a size creates it)", ao->path);
			return -1;
		}
		if (errno != ENOENT || !p->create || p->read_only) {
			snprintf(err, errlen, "aio: %s: %s", ao->path,
				 strerror(errno));
			return -1;
		}
		if (!p->size) {
			snprintf(err, errlen, "aio: %s: a size is needed to "
				 "create it", ao->path);
			return -1;
		}
		ao->flags |= O_CREAT | O_EXCL;
		ao->created = true;
	}
	ao->fd = open(ao->path, ao->flags | (ao->direct ? O_DIRECT : 0), 0644);
	if (ao->fd < 0 && ao->direct && errno == EINVAL) {
		log_warn("aio: %s: O_DIRECT not supported, using buffered I/O",
			 ao->path);
		ao->direct = false;
		if (ao->created)
			unlink(ao->path);
		ao->fd = open(ao->path, ao->flags, 0644);
	}
	if (ao->fd < 0) {
		snprintf(err, errlen, "aio: %s: %s", ao->path, strerror(errno));
		return -1;
	}
	return 0;
}

/* A regular file: the size asked, else its own; buffered I/O when its
 * O_DIRECT alignment is coarser than ours. */
static int aio_size_file(struct aio_opening *ao, const struct stat *st,
			 const struct bdev_params *p, uint32_t bs, char *err,
			 size_t errlen)
{
	ao->size = p->size ? p->size : (uint64_t)st->st_size;
	if (p->size > (uint64_t)st->st_size) {
		/* Grow sparse; a smaller file is never shrunk. */
		if (p->read_only) {
			snprintf(err, errlen, "aio: %s is %llu bytes, "
				 "smaller than the size asked and "
				 "read-only", ao->path,
				 (unsigned long long)st->st_size);
			return -1;
		}
		if (ftruncate(ao->fd, (off_t)p->size) < 0) {
			snprintf(err, errlen, "aio: %s: extend: %s",
				 ao->path, strerror(errno));
			return -1;
		}
	}
	if (ao->direct && !aio_dio_fits(ao->fd, bs)) {
		int fd2 = open(ao->path, ao->flags & ~(O_CREAT | O_EXCL));

		if (fd2 < 0) {
			snprintf(err, errlen, "aio: %s: %s", ao->path,
				 strerror(errno));
			return -1;
		}
		log_warn("aio: %s: O_DIRECT alignment exceeds block "
			 "size %u, using buffered I/O", ao->path, bs);
		close(ao->fd);
		ao->fd = fd2;
		ao->direct = false;
	}
	return 0;
}

/* A block device: its own size, which must hold the size asked; with
 * O_DIRECT its logical block size must divide ours. */
static int aio_size_blk(struct aio_opening *ao, const struct bdev_params *p,
			uint32_t bs, char *err, size_t errlen)
{
	uint64_t devsize;
	int lbs;

	if (ioctl(ao->fd, BLKGETSIZE64, &devsize) < 0 ||
	    ioctl(ao->fd, BLKSSZGET, &lbs) < 0) {
		snprintf(err, errlen, "aio: %s: %s", ao->path, strerror(errno));
		return -1;
	}
	if (p->size > devsize) {
		snprintf(err, errlen, "aio: %s is a %llu-byte device; "
			 "cannot grow it to %llu", ao->path,
			 (unsigned long long)devsize,
			 (unsigned long long)p->size);
		return -1;
	}
	if (ao->direct && lbs > 0 && bs % (uint32_t)lbs) {
		snprintf(err, errlen, "aio: %s: device block size %d "
			 "does not divide block size %u", ao->path, lbs, bs);
		return -1;
	}
	ao->size = p->size ? p->size : devsize;
	return 0;
}

/* The bdev over the opened file or device. */
static struct bdev *aio_new_bdev(const struct aio_opts *o,
				 const struct bdev_params *p,
				 const struct aio_opening *ao, char *err,
				 size_t errlen)
{
	struct aio_dev *dev;
	struct bdev *b;

	b = bdev_alloc(aio_engine_ops(), p, ao->size, err, errlen);
	if (!b)
		return NULL;
	dev = calloc(1, sizeof(*dev));
	if (!dev) {
		snprintf(err, errlen, "out of memory");
		bdev_free(b);
		return NULL;
	}
	dev->fd = ao->fd;
	dev->buffered_fd = -1;
	dev->is_blk = ao->is_blk;
	atomic_init(&dev->rwf_dsync_ok, o->rwf_dsync);
	atomic_init(&dev->aio_fsync_ok, o->aio_fsync);
	aio_worker_init(dev);
	b->priv = dev;
	b->direct = ao->direct;
	b->thin = !ao->is_blk;
	return b;
}

struct bdev *bdev_aio_open(const char *opts, const struct bdev_params *p,
			   char *err, size_t errlen)
{
	struct aio_opts o = aio_defaults;
	struct aio_opening ao = { .fd = -1 };
	uint32_t bs = p->block_size ? p->block_size : 512;
	struct stat st;
	struct bdev *b;
	int rc;

	if (bdev_opts_parse(&bdev_aio_opts, opts, &o, NULL, err, errlen) < 0)
		return NULL;
	ao.path = o.path[0] ? o.path : p->path;
	ao.direct = o.direct;
	if (aio_check_params(ao.path, p, bs, err, errlen) < 0 ||
	    aio_open_path(&ao, p, err, errlen) < 0)
		return NULL;
	if (fstat(ao.fd, &st) < 0) {
		snprintf(err, errlen, "aio: %s: %s", ao.path, strerror(errno));
		goto fail;
	}
	ao.is_blk = S_ISBLK(st.st_mode);
	if (S_ISREG(st.st_mode)) {
		rc = aio_size_file(&ao, &st, p, bs, err, errlen);
	} else if (ao.is_blk) {
		rc = aio_size_blk(&ao, p, bs, err, errlen);
	} else {
		snprintf(err, errlen, "aio: %s: not a regular file or block "
			 "device", ao.path);
		rc = -1;
	}
	if (rc < 0)
		goto fail;
	b = aio_new_bdev(&o, p, &ao, err, errlen);
	if (b)
		return b;
fail:
	close(ao.fd);
	if (ao.created)
		unlink(ao.path);
	return NULL;
}
