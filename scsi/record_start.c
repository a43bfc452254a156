/*
 * Starting and stopping a recording (record.h): the base (the LUN's
 * content when recording begins) copied next to the recording, sparse,
 * the header, the writer thread; and the end.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE	/* O_DIRECT */
#endif
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "tcq/log.h"
#include "tcq/rec_format.h"
#include "backend/bdev.h"
#include "scsi/lun.h"
#include "scsi/record.h"
#include "scsi/record_priv.h"
#include "scsi/sdev.h"

#define COPY_CHUNK (1u << 20)

static bool all_zero(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return false;
	return true;
}

static int pwrite_all(int fd, const uint8_t *p, size_t n, uint64_t off)
{
	while (n) {
		ssize_t w = pwrite(fd, p, n, (off_t)off);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w;
		n -= (size_t)w;
		off += (uint64_t)w;
	}
	return 0;
}

/*
 * l's medium into base_path, sparse: the runs the backend says are
 * mapped, less their all-zero chunks. *zero: nothing but zeros (the file
 * is then removed). 0, or -1 with a message.
 */
static int copy_base(struct lun *l, const char *base_path, bool *zero,
		     char *err, size_t errlen)
{
	uint64_t size = l->nblocks * l->block_size, off = 0;
	uint8_t *buf = malloc(COPY_CHUNK);
	int fd = open(base_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
		      0600);
	int rc = -1;

	*zero = true;
	if (!buf || fd < 0) {
		snprintf(err, errlen, "%s: %s", base_path,
			 fd < 0 ? strerror(errno) : "out of memory");
		goto out;
	}
	if (ftruncate(fd, (off_t)size) < 0) {
		snprintf(err, errlen, "%s: %s", base_path, strerror(errno));
		goto out;
	}
	while (off < size) {
		uint64_t run = size - off;
		bool mapped = true;
		int e;

		if (bdev_lba_status(l->bdev, off, &run, &mapped) < 0 || !run)
			run = size - off, mapped = true;
		if (run > size - off)
			run = size - off;
		for (uint64_t o = off; mapped && o < off + run;) {
			size_t n = off + run - o < COPY_CHUNK ?
				   (size_t)(off + run - o) : COPY_CHUNK;

			e = bdev_read_sync(l->bdev, o, buf, n);
			if (e == -EOPNOTSUPP) {
				snprintf(err, errlen, "the %s backend cannot "
					 "give its content while serving: "
					 "record it from its creation (record "
					 "= FILE)", l->bdev->ops->name);
				goto out;
			}
			if (e < 0) {
				snprintf(err, errlen, "reading the LUN at %llu: "
					 "%s", (unsigned long long)o,
					 strerror(-e));
				goto out;
			}
			if (!all_zero(buf, n)) {
				*zero = false;
				if (pwrite_all(fd, buf, n, o) < 0) {
					snprintf(err, errlen, "%s: %s",
						 base_path, strerror(errno));
					goto out;
				}
			}
			o += n;
		}
		off += run;
	}
	if (fsync(fd) < 0) {
		snprintf(err, errlen, "%s: %s", base_path, strerror(errno));
		goto out;
	}
	rc = 0;
out:
	if (fd >= 0)
		close(fd);
	if (rc || *zero)
		unlink(base_path);
	free(buf);
	return rc;
}

/* The header of a new recording of l into fd. */
/* The header of a new recording of l into b (REC_HDR_MAX bytes): its
 * length, or 0. */
static size_t make_header(struct lun *l, uint8_t *b, const char *base,
			  bool zero)
{
	struct rec_header h = { .block_size = l->block_size,
				.nblocks = l->nblocks, .lun_id = l->id };
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	h.start_ns = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	h.flags = zero ? REC_HDR_BASE_ZERO : 0;
	snprintf(h.target, sizeof(h.target), "%s", l->dev ? l->dev->name : "");
	snprintf(h.base, sizeof(h.base), "%s", zero ? "" : base);
	return rec_put_header(b, REC_HDR_MAX, &h);
}

/* The recording's file: O_DIRECT where the file system has it (the ring
 * is written in whole aligned blocks, so no page cache is filled and
 * copied), else buffered. */
static int open_recording(const char *path, bool *direct)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC |
		      O_DIRECT, 0600);

	*direct = fd >= 0;
	if (fd < 0 && errno == EINVAL)
		fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
			  0600);
	return fd;
}

int record_start(struct lun *l, const char *path, uint64_t max, char *err,
		 size_t errlen)
{
	struct recorder *r = l->rec;
	char base_path[4200], base_name[REC_NAME_MAX];
	uint8_t hdr[REC_HDR_MAX];
	bool direct;
	size_t hl;
	const char *slash = strrchr(path, '/');
	pthread_attr_t attr;
	sigset_t all, old;
	int created;
	pthread_t th;
	bool zero;
	int fd;

	if (!l->bdev) {
		snprintf(err, errlen, "LUN %llu has no medium to record",
			 (unsigned long long)l->id);
		return -1;
	}
	pthread_mutex_lock(&r->lock);
	if (r->active || r->writer_running) {
		snprintf(err, errlen, "LUN %llu records already (to %s)",
			 (unsigned long long)l->id, r->path);
		pthread_mutex_unlock(&r->lock);
		return -1;
	}
	pthread_mutex_unlock(&r->lock);
	if (strlen(path) >= sizeof(r->path) - 8 ||
	    strlen(slash ? slash + 1 : path) + 5 >= REC_NAME_MAX) {
		snprintf(err, errlen, "%s: the name is too long", path);
		return -1;
	}
	snprintf(base_path, sizeof(base_path), "%s.base", path);
	if (copy_base(l, base_path, &zero, err, errlen) < 0)
		return -1;
	/* The header names the base as a file beside the recording. */
	snprintf(base_name, sizeof(base_name), "%s.base",
		 slash ? slash + 1 : path);
	fd = open_recording(path, &direct);
	if (fd < 0) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		goto fail;
	}
	if (!(hl = make_header(l, hdr, base_name, zero))) {
		snprintf(err, errlen, "%s: the header does not fit", path);
		goto fail;
	}
	pthread_mutex_lock(&r->lock);
	r->max = max ? max : RECORD_MAX_DEFAULT;
	r->limit = r->max < RING_MAX ? (size_t)r->max + 2 * RING_ALIGN :
		   RING_MAX;
	r->limit = (r->limit + RING_ALIGN - 1) / RING_ALIGN * RING_ALIGN;
	r->cap = r->limit < RING_START ? r->limit : RING_START;
	r->wake = r->cap / 2;
	r->want = 0;
	if (posix_memalign((void **)&r->ring, RING_ALIGN, r->cap))
		r->ring = NULL;
	else	/* touched now, so no page fault costs the data path */
		memset(r->ring, 0, r->cap);
	if (!r->ring) {
		pthread_mutex_unlock(&r->lock);
		snprintf(err, errlen, "out of memory (%zu bytes of ring)",
			 r->cap);
		goto fail;
	}
	r->fd = fd;
	r->direct = direct;
	r->file_off = 0;
	snprintf(r->path, sizeof(r->path), "%s", path);
	r->seq = r->next_task = r->records = 0;
	r->bytes = (uint64_t)hl;
	/* the header goes first, through the ring like every record */
	memcpy(r->ring, hdr, hl);
	r->tail = 0;
	r->len = hl;
	r->sealed = hl;	/* the header carries its own CRC */
	r->nnexus = 0;
	r->ended[0] = 0;
	r->draining = false;
	r->writer_running = true;
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	/* The thread takes no signal: tcqd's go to its signalfd, and a
	 * recording may start before tcqd blocks them. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	created = pthread_create(&th, &attr, record_writer_main, l);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (created) {
		r->writer_running = false;
		free(r->ring);
		r->ring = NULL;
		r->fd = -1;
		pthread_mutex_unlock(&r->lock);
		pthread_attr_destroy(&attr);
		snprintf(err, errlen, "cannot start the recording's thread");
		goto fail;
	}
	pthread_attr_destroy(&attr);
	r->active = true;
	__atomic_store_n(&l->recording, true, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&r->lock);
	log_info("LUN %llu: recording into %s (base %s, at most %llu bytes)",
		 (unsigned long long)l->id, path, zero ? "zeros" : base_path,
		 (unsigned long long)r->max);
	return 0;
fail:
	if (fd >= 0)
		close(fd);
	unlink(path);
	unlink(base_path);
	return -1;
}

int record_stop(struct lun *l, const char *why, char *err, size_t errlen)
{
	struct recorder *r = l->rec;
	int rc = 0;

	pthread_mutex_lock(&r->lock);
	if (r->active) {
		record_end_locked(l, r, REC_END_STOPPED, why);
		log_info("LUN %llu: recording %s stopped: %llu records, %llu "
			 "bytes", (unsigned long long)l->id, r->path,
			 (unsigned long long)r->records,
			 (unsigned long long)r->bytes);
	} else if (!r->writer_running) {
		snprintf(err, errlen, "LUN %llu is not recording%s%s%s",
			 (unsigned long long)l->id,
			 r->ended[0] ? " (it ended: " : "", r->ended,
			 r->ended[0] ? ")" : "");
		rc = -1;
	}
	record_wait_writer_locked(r);
	pthread_mutex_unlock(&r->lock);
	return rc;
}
