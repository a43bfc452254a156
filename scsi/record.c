/*
 * The crash lab's recorder (record.h): records into a ring under a lock,
 * a thread of its own writes the ring to the file.
 *
 * The data path leaves a REC_WRITE's CRC to that thread (it seals the
 * records before it writes them): the data path's share of a 4K write is
 * then one copy into the ring.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE	/* O_DIRECT */
#endif
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "tcq/crc32c.h"
#include "tcq/log.h"
#include "tcq/rec_format.h"
#include "tcq/scsi_proto.h"
#include "backend/bdev.h"
#include "scsi/cdb.h"
#include "scsi/opcodes.h"
#include "scsi/lun.h"
#include "scsi/record.h"
#include "scsi/record_priv.h"
#include "scsi/sdev.h"
#include "scsi/task.h"

/* While records come, the writer thread wakes by itself every
 * WRITER_PERIOD_MS and writes what came, so the data path signals nobody:
 * a wake-up costs a futex call, and in a virtual machine an interrupt
 * between CPUs. The data path wakes it only when half the ring waits
 * (r->wake), or for the first bytes after the writer went to sleep (a
 * period with none). A period's bytes (about 1 MiB at 100 000 4K writes
 * a second) stay in the CPU's caches until the writer seals them. */
#define WRITER_PERIOD_MS 2

int record_lun_init(struct lun *l)
{
	struct recorder *r = calloc(1, sizeof(*r));

	if (!r)
		return -1;
	pthread_mutex_init(&r->lock, NULL);
	{
		pthread_condattr_t ca;

		/* the writer's timed waits run on the monotonic clock */
		pthread_condattr_init(&ca);
		pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
		pthread_cond_init(&r->cond, &ca);
		pthread_condattr_destroy(&ca);
	}
	pthread_cond_init(&r->room, NULL);
	r->fd = -1;
	l->rec = r;
	return 0;
}

void record_wait_writer_locked(struct recorder *r)
{
	while (r->writer_running)
		pthread_cond_wait(&r->cond, &r->lock);
}

void record_lun_free(struct lun *l)
{
	struct recorder *r = l->rec;
	char err[64];

	if (!r)
		return;
	/* a LUN that goes (removed, re-created, tcqd's stop) ends it */
	record_stop(l, "the LUN went away", err, sizeof(err));
	pthread_mutex_lock(&r->lock);
	record_wait_writer_locked(r);
	pthread_mutex_unlock(&r->lock);
	pthread_mutex_destroy(&r->lock);
	pthread_cond_destroy(&r->cond);
	pthread_cond_destroy(&r->room);
	free(r->scratch);
	free(r);
	l->rec = NULL;
}

/* ---- the writer thread -------------------------------------------------- */

/* The ring's byte at (tail + i), modulo cap. */
static uint8_t ring_at(const struct recorder *r, size_t i)
{
	return r->ring[(r->tail + i) % r->cap];
}

/* crc continued over the n bytes at (tail + i), modulo cap. */
static uint32_t ring_crc(const struct recorder *r, uint32_t crc, size_t i,
			 size_t n)
{
	size_t at = (r->tail + i) % r->cap;
	size_t first = r->cap - at < n ? r->cap - at : n;

	crc = crc32c_update(crc, r->ring + at, first);
	return crc32c_update(crc, r->ring, n - first);
}

/*
 * Writes the CRC of every REC_WRITE in [tail + sealed, tail + upto); the
 * other records are small and rec_put gave them theirs. Those bytes are
 * the writer's to read: the data path appends past tail + len only, and
 * upto was len when the lock was last held. A record is put whole under
 * the lock, so upto ends at a record's end.
 */
static void seal(struct recorder *r, size_t upto)
{
	while (r->sealed + REC_FIXED <= upto) {
		size_t at = r->sealed;
		uint32_t len = 0, crc;

		for (int i = 3; i >= 0; i--)
			len = len << 8 | ring_at(r, at + (size_t)i);
		if (len < REC_FIXED + 4 || at + len > upto)
			break;	/* cannot be: records are put whole */
		r->sealed = at + len;
		if (ring_at(r, at + 4) != REC_WRITE)
			continue;
		crc = ~ring_crc(r, 0xffffffffu, at, len - 4);
		for (int i = 0; i < 4; i++)
			r->ring[(r->tail + at + len - 4 + (size_t)i) % r->cap] =
				(uint8_t)(crc >> (8 * i));
	}
}

/* Work for the writer (lock held): enough bytes, a waiter for room while
 * bytes wait, a ring to grow, or the end. With nothing to write it waits,
 * the lock released, even while the data path waits for room: an empty
 * ring has room, and the data path needs the lock to see it. */
static bool writer_has_work(const struct recorder *r)
{
	return r->draining || r->want > r->cap || r->len >= r->wake ||
	       (r->waiters && r->len);
}

/* One period's wait (lock held, released meanwhile): true when it timed
 * out, false when signalled. */
static bool writer_period(struct recorder *r)
{
	struct timespec until;

	clock_gettime(CLOCK_MONOTONIC, &until);
	until.tv_nsec += WRITER_PERIOD_MS * 1000000L;
	if (until.tv_nsec >= 1000000000L) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000L;
	}
	return pthread_cond_timedwait(&r->cond, &r->lock, &until) == ETIMEDOUT;
}

/*
 * Makes the ring r->want bytes (lock held; released while the new ring
 * is allocated and touched, the data path appending to the old one
 * meanwhile): what waits moves to the new ring's start. The writer alone
 * moves ring, cap and tail, and reads the ring unlocked, so it alone
 * swaps it. On no memory, the recording ends (the LUN goes on serving).
 */
static void writer_grow(struct lun *l, struct recorder *r)
{
	size_t want = r->want, first;
	uint8_t *ring;

	pthread_mutex_unlock(&r->lock);
	if (posix_memalign((void **)&ring, RING_ALIGN, want))
		ring = NULL;
	else	/* touched now, so no page fault costs the data path */
		memset(ring, 0, want);
	pthread_mutex_lock(&r->lock);
	if (r->want <= want)
		r->want = 0;
	if (!ring) {
		log_err("LUN %llu: recording %s: no memory for a ring of %zu "
			"bytes: recording ended", (unsigned long long)l->id,
			r->path, want);
		if (r->active)
			record_end_locked(l, r, REC_END_ERROR, "no memory for "
					  "the ring a large write needs");
		pthread_cond_broadcast(&r->room);
		return;
	}
	first = r->cap - r->tail < r->len ? r->cap - r->tail : r->len;
	memcpy(ring, r->ring + r->tail, first);
	memcpy(ring + first, r->ring, r->len - first);
	free(r->ring);
	r->ring = ring;
	r->cap = want;
	r->tail = 0;
	r->wake = want / 2;
	pthread_cond_broadcast(&r->room);
}

void *record_writer_main(void *arg)
{
	struct lun *l = arg;
	struct recorder *r = l->rec;
	bool idle = false;

	pthread_mutex_lock(&r->lock);
	for (;;) {
		size_t n, wn;
		uint64_t off;
		ssize_t w;

		while (!writer_has_work(r)) {
			if (!r->len && idle) {
				r->sleeping = true;
				pthread_cond_wait(&r->cond, &r->lock);
				r->sleeping = false;
				idle = false;
				continue;
			}
			if (!writer_period(r))
				continue;
			if (r->len)
				break;
			idle = true;	/* a period without records */
		}
		if (r->want > r->cap) {
			writer_grow(l, r);
			continue;
		}
		if (!r->len) {
			if (r->draining)
				break;	/* drained */
			continue;
		}
		if (r->sealed < r->len) {
			size_t upto = r->len;

			pthread_mutex_unlock(&r->lock);
			seal(r, upto);
			pthread_mutex_lock(&r->lock);
		}
		n = r->cap - r->tail < r->sealed ? r->cap - r->tail : r->sealed;
		wn = n;
		if (r->direct) {
			/* whole blocks; the last piece padded (the bytes
			 * past it are cut off at the end) */
			if (r->draining && n == r->len && n == r->sealed)
				wn = (n + RING_ALIGN - 1) / RING_ALIGN *
				     RING_ALIGN;
			else
				wn = n = n / RING_ALIGN * RING_ALIGN;
			if (!n) {	/* a block's worth later */
				writer_period(r);
				continue;
			}
		}
		off = r->file_off;
		pthread_mutex_unlock(&r->lock);
		w = pwrite(r->fd, r->ring + r->tail, wn, (off_t)off);
		if (w < 0 && errno == EINVAL && r->direct) {
			/* O_DIRECT refused after all: buffered from now */
			int fl = fcntl(r->fd, F_GETFL);

			if (fl >= 0 && fcntl(r->fd, F_SETFL, fl & ~O_DIRECT) == 0) {
				pthread_mutex_lock(&r->lock);
				r->direct = false;
				continue;
			}
		}
		pthread_mutex_lock(&r->lock);
		if (w < 0 && errno == EINTR)
			continue;
		if (w > 0 && (size_t)w < wn && !r->direct)
			n = (size_t)w;	/* the rest next time */
		else if (w > 0 && (size_t)w < wn)
			w = 0;		/* a short direct write: give up */
		if (w <= 0) {
			log_err("LUN %llu: recording %s: %s: recording ended",
				(unsigned long long)l->id, r->path,
				w < 0 ? strerror(errno) : "short write");
			snprintf(r->ended, sizeof(r->ended), "write error: %s",
				 w < 0 ? strerror(errno) : "short write");
			r->active = false;
			__atomic_store_n(&l->recording, false, __ATOMIC_RELAXED);
			pthread_cond_broadcast(&r->room);
			break;
		}
		r->tail = (r->tail + n) % r->cap;
		r->len -= n;
		r->sealed -= n;
		r->file_off += n;
		if (r->waiters)
			pthread_cond_broadcast(&r->room);
	}
	/* the padding of the last direct block goes */
	if (r->direct && ftruncate(r->fd, (off_t)r->file_off) < 0)
		log_err("recording %s: ftruncate: %s", r->path,
			strerror(errno));
	if (fsync(r->fd) < 0)
		log_err("recording %s: fsync: %s", r->path, strerror(errno));
	close(r->fd);
	r->fd = -1;
	free(r->ring);
	r->ring = NULL;
	r->len = r->tail = r->sealed = 0;
	r->writer_running = false;
	pthread_cond_broadcast(&r->cond);
	pthread_mutex_unlock(&r->lock);
	return NULL;
}

/* ---- appending ---------------------------------------------------------- */

/* Room for one record of n bytes in the scratch buffer. */
static uint8_t *scratch(struct recorder *r, size_t n)
{
	if (n > r->scratch_cap) {
		uint8_t *p = realloc(r->scratch, n);

		if (!p)
			return NULL;
		r->scratch = p;
		r->scratch_cap = n;
	}
	return r->scratch;
}

static void ring_put(struct recorder *r, const uint8_t *p, size_t n)
{
	size_t head = (r->tail + r->len) % r->cap;
	size_t first = r->cap - head < n ? r->cap - head : n;

	memcpy(r->ring + head, p, first);
	memcpy(r->ring, p + first, n - first);
	r->len += n;
}

/* Ends the recording with a REC_END (lock held). */
void record_end_locked(struct lun *l, struct recorder *r, uint8_t reason,
		       const char *why)
{
	struct rec e = { .type = REC_END, .seq = r->seq + 1 };
	uint8_t b[REC_FIXED + 8 + REC_NAME_MAX];
	size_t n;

	e.u.end.reason = reason;
	snprintf(e.u.end.text, sizeof(e.u.end.text), "%s", why);
	n = rec_put(b, sizeof(b), &e);
	if (n && r->cap - r->len >= n) {
		ring_put(r, b, n);
		r->seq++;
		r->records++;
		r->bytes += n;
	}
	snprintf(r->ended, sizeof(r->ended), "%s", why);
	if (reason == REC_END_FULL)
		r->full_total++;
	r->active = false;
	__atomic_store_n(&l->recording, false, __ATOMIC_RELAXED);
	r->draining = true;
	pthread_cond_broadcast(&r->cond);
	pthread_cond_broadcast(&r->room);
}

/* Room for a record of n bytes in the ring (lock held; the data path
 * may wait here for the writer): false when the recording ended instead. */
static bool room_locked(struct lun *l, struct recorder *r, size_t n)
{
	char why[160];

	if (r->bytes + n + 512 > r->max) {
		snprintf(why, sizeof(why), "full: record_max %llu bytes "
			 "reached", (unsigned long long)r->max);
		log_warn("LUN %llu: recording %s %s; the LUN goes on serving",
			 (unsigned long long)l->id, r->path, why);
		record_end_locked(l, r, REC_END_FULL, why);
		return false;
	}
	if (n + 512 > r->limit) {
		snprintf(why, sizeof(why), "a record of %zu bytes does not fit "
			 "the ring", n);
		record_end_locked(l, r, REC_END_ERROR, why);
		return false;
	}
	/* A record larger than the ring has room for: the writer makes a
	 * ring of twice it (writer_grow), once. */
	while (r->active && r->cap < n + 512) {
		size_t want = 2 * (n + 512);

		want = (want + RING_ALIGN - 1) / RING_ALIGN * RING_ALIGN;
		want = want < r->limit ? want : r->limit;
		if (r->want < want)
			r->want = want;
		r->waiters++;
		pthread_cond_signal(&r->cond);
		pthread_cond_wait(&r->room, &r->lock);
		r->waiters--;
	}
	/* The file cannot keep up: the data path waits for room (the
	 * recording costs time then, never a write). */
	while (r->active && r->cap - r->len < n + 512) {
		r->waiters++;
		pthread_cond_signal(&r->cond);
		pthread_cond_wait(&r->room, &r->lock);
		r->waiters--;
	}
	return r->active;	/* false: the writer failed meanwhile */
}

/* The n bytes just put in the ring are the next record. */
static void taken_locked(struct recorder *r, size_t n)
{
	r->seq++;
	r->records++;
	r->bytes += n;
	/* The writer wakes by itself while records come (record_writer_main) */
	if ((r->sleeping && r->len == n) ||
	    (r->len >= r->wake && r->len - n < r->wake))
		pthread_cond_signal(&r->cond);
}

/* Takes the n bytes in r->scratch as the next record (its seq set by the
 * caller as r->seq + 1); false when the recording ended instead. */
static bool append_locked(struct lun *l, struct recorder *r, size_t n)
{
	if (!room_locked(l, r, n))
		return false;
	ring_put(r, r->scratch, n);
	taken_locked(r, n);
	return true;
}

/* A fixed-size record (not REC_WRITE), lock held. */
bool record_put_locked(struct lun *l, struct recorder *r, struct rec *x)
{
	uint8_t *b = scratch(r, REC_FIXED + 64 + REC_NAME_MAX);
	size_t n;

	if (!b)
		return false;
	x->seq = r->seq + 1;
	n = rec_put(b, r->scratch_cap, x);
	return n && append_locked(l, r, n);
}

/* The number of nexus in this recording (a REC_NEXUS the first time). */
static int nexus_locked(struct lun *l, struct recorder *r, const void *nexus)
{
	struct rec x = { .type = REC_NEXUS };

	for (uint32_t i = 0; i < r->nnexus; i++)
		if (r->nexus[i] == nexus)
			return (int)i;
	if (r->nnexus == NEXUS_MAX)
		return -1;
	x.u.nexus.nexus = r->nnexus;
	snprintf(x.u.nexus.name, sizeof(x.u.nexus.name), "%s",
		 sdev_initiator_port(l, nexus));
	if (!record_put_locked(l, r, &x))
		return -1;
	r->nexus[r->nnexus] = nexus;
	return (int)r->nnexus++;
}

/* ---- the data path's hooks --------------------------------------------- */

#define OP_SYNC_10 0x35
#define OP_SYNC_16 0x91
#define OP_WRITE_ATOMIC_16 0x9c
#define ATTR_ORDERED 2

/* The task's REC_ARRIVE into l's recording, with task number *id; lock
 * held. */
static bool arrive_locked(struct lun *l, struct recorder *r,
			  const struct tcq_task *t, uint16_t flags,
			  uint64_t lba, uint32_t blocks, uint64_t *id)
{
	struct rec x = { .type = REC_ARRIVE };
	int nexus = nexus_locked(l, r, t->nexus);

	if (nexus < 0)
		return false;
	x.u.arrive.task = r->next_task + 1;
	x.u.arrive.nexus = (uint32_t)nexus;
	x.u.arrive.attr = t->attr;
	x.u.arrive.opcode = t->cdb[0];
	x.u.arrive.flags = flags;
	x.u.arrive.lba = lba;
	x.u.arrive.blocks = blocks;
	if (!record_put_locked(l, r, &x))
		return false;
	*id = ++r->next_task;
	return true;
}

void record_arrive(struct tcq_task *t)
{
	struct lun *l = t->lun;
	struct recorder *r;
	uint16_t flags = 0;
	uint64_t lba = 0;
	uint32_t blocks = 0;
	uint8_t op = t->cdb[0];

	t->rec_task = t->rec_xtask = 0;
	t->rec_xlun = NULL;
	t->rec_armed = false;
	if (!l || !lun_recording(l) || t->status != SAM_STAT_GOOD ||
	    !t->req.cmd)
		return;
	/* A command that writes only through its parameter data (EXTENDED
	 * COPY) is recorded at its first write (record_write). */
	t->rec_armed = true;
	if (cdb_access(&t->req) == CDB_ACCESS_WRITE) {
		flags |= REC_A_WRITE;
		if (!(t->req.cmd->flags & OPC_F_RANGE_IN_DATA)) {
			lba = t->req.lba;
			blocks = t->req.blocks;
		}
	} else if (op == OP_SYNC_10 || op == OP_SYNC_16) {
		flags |= REC_A_SYNC;
		lba = t->req.lba;
		blocks = t->req.blocks;
		if (t->req.immed)
			flags |= REC_A_IMMED;
		if (lun_get_flush_ignore(l))
			flags |= REC_A_IGNORED;
	} else if (t->attr != ATTR_ORDERED) {
		return;		/* the model needs neither reads nor the rest */
	}
	if (t->req.fua)
		flags |= REC_A_FUA;
	if (lun_get_write_cache(l))
		flags |= REC_A_WCE;
	if (op == OP_WRITE_ATOMIC_16)
		flags |= REC_A_ATOMIC;
	r = l->rec;
	pthread_mutex_lock(&r->lock);
	if (r->active)
		arrive_locked(l, r, t, flags, lba, blocks, &t->rec_task);
	pthread_mutex_unlock(&r->lock);
}

/* REC_WRITE of len bytes at off of l, as io does it (lock held). */
static void write_locked(struct lun *l, struct recorder *r, uint64_t task,
			 const struct bdev_io *io)
{
	uint32_t bs = l->block_size;
	struct rec_write w = { .task = task, .lba = io->offset / bs,
			       .blocks = (uint32_t)(io->len / bs) };
	uint8_t flags = (io->flags & BDEV_FUA) ? REC_W_FUA : 0;
	uint8_t head[REC_WRITE_HEAD];
	const void *data = NULL;
	size_t n;

	switch (io->op) {
	case BDEV_WRITE:
	case BDEV_COMPARE_AND_WRITE:
		w.kind = REC_W_DATA;
		w.data_len = (uint32_t)io->len;
		data = io->buf;
		break;
	case BDEV_WRITE_SAME:
		w.kind = REC_W_SAME;
		w.data_len = bs;
		data = io->buf;
		if (io->pattern_len != bs) {
			record_end_locked(l, r, REC_END_ERROR, "a WRITE SAME "
					  "pattern of another size than a block");
			return;
		}
		break;
	case BDEV_WRITE_ZEROES:
		w.kind = REC_W_ZERO;
		break;
	case BDEV_DISCARD:
		w.kind = REC_W_UNMAP;
		break;
	default:
		return;
	}
	if (!w.blocks || io->len % bs || w.data_len > REC_MAX_DATA) {
		record_end_locked(l, r, REC_END_ERROR, "a write the recording "
				  "format cannot hold");
		return;
	}
	/* Straight into the ring, the data copied once; the CRC's four
	 * bytes are the writer's (seal). */
	n = rec_write_size(w.data_len);
	if (!room_locked(l, r, n))
		return;
	rec_write_head(head, r->seq + 1, flags, &w);
	ring_put(r, head, sizeof(head));
	if (w.data_len)
		ring_put(r, data, w.data_len);
	r->len += 4;
	taken_locked(r, n);
}

void record_write(struct lun *l, struct tcq_task *t, const struct bdev_io *io)
{
	struct recorder *r;
	uint64_t *task;

	if (!lun_recording(l))
		return;
	if (l == t->lun) {
		if (!t->rec_task && !t->rec_armed)
			return;	/* arrived before the recording began */
		task = &t->rec_task;
	} else if (t->rec_xlun && t->rec_xlun != l) {
		return;		/* one copy destination is recorded */
	} else {
		task = &t->rec_xtask;
	}
	r = l->rec;
	pthread_mutex_lock(&r->lock);
	if (r->active && !*task) {	/* EXTENDED COPY into this LUN */
		if (arrive_locked(l, r, t, REC_A_WRITE |
				  (lun_get_write_cache(l) ? REC_A_WCE : 0),
				  0, 0, task) && l != t->lun)
			t->rec_xlun = l;
	}
	if (r->active && *task)
		write_locked(l, r, *task, io);
	pthread_mutex_unlock(&r->lock);
}

/* Sense key and ASC/ASCQ of fixed (70h/71h) or descriptor (72h/73h)
 * sense data (SPC-4 4.5). */
static void sense_of(const struct tcq_task *t, uint8_t *key, uint16_t *asc)
{
	const uint8_t *s = t->sense;
	bool desc = (s[0] & 0x7e) == 0x72;

	*key = 0;
	*asc = 0;
	if (t->sense_len >= (desc ? 4 : 14)) {
		*key = s[desc ? 1 : 2] & 0x0f;
		*asc = (uint16_t)(desc ? s[2] << 8 | s[3] : s[12] << 8 | s[13]);
	}
}

static void done_locked(struct lun *l, uint64_t task, const struct tcq_task *t)
{
	struct recorder *r = l->rec;
	struct rec x = { .type = REC_DONE };

	pthread_mutex_lock(&r->lock);
	if (r->active) {
		x.u.done.task = task;
		x.u.done.status = t->status;
		if (t->status == SAM_STAT_CHECK_CONDITION)
			sense_of(t, &x.u.done.key, &x.u.done.asc);
		record_put_locked(l, r, &x);
	}
	pthread_mutex_unlock(&r->lock);
}

void record_done(struct tcq_task *t)
{
	if (t->rec_task)
		done_locked(t->lun, t->rec_task, t);
	if (t->rec_xtask && t->rec_xlun)
		done_locked(t->rec_xlun, t->rec_xtask, t);
	t->rec_task = t->rec_xtask = 0;
	t->rec_xlun = NULL;
}

int record_mark(struct lun *l, const char *text, char *err, size_t errlen)
{
	struct recorder *r = l->rec;
	struct rec x = { .type = REC_MARK };
	int rc = -1;

	if (strlen(text) >= REC_NAME_MAX) {
		snprintf(err, errlen, "a mark is at most %d bytes",
			 REC_NAME_MAX - 1);
		return -1;
	}
	snprintf(x.u.mark.text, sizeof(x.u.mark.text), "%s", text);
	pthread_mutex_lock(&r->lock);
	if (!r->active)
		snprintf(err, errlen, "LUN %llu is not recording%s%s",
			 (unsigned long long)l->id, r->ended[0] ?
			 " (its recording ended: " : "", r->ended[0] ?
			 r->ended : "");
	else if (!record_put_locked(l, r, &x))
		snprintf(err, errlen, "the recording ended: %s", r->ended);
	else
		rc = 0;
	if (rc && r->ended[0] && strchr(err, '(') && !strchr(err, ')'))
		strncat(err, ")", errlen - strlen(err) - 1);
	pthread_mutex_unlock(&r->lock);
	return rc;
}

void record_info(struct lun *l, struct record_info *out)
{
	struct recorder *r = l->rec;

	memset(out, 0, sizeof(*out));
	if (!r)
		return;
	pthread_mutex_lock(&r->lock);
	out->active = r->active;
	snprintf(out->path, sizeof(out->path), "%s", r->path);
	out->bytes = r->bytes;
	out->records = r->records;
	out->max_bytes = r->max;
	out->full = r->full_total;
	snprintf(out->ended, sizeof(out->ended), "%s", r->ended);
	pthread_mutex_unlock(&r->lock);
}

void record_interrupt(struct lun *l, const char *why)
{
	struct recorder *r = l->rec;

	if (!r || !lun_recording(l))
		return;
	pthread_mutex_lock(&r->lock);
	if (r->active) {
		log_warn("LUN %llu: recording %s ended: %s",
			 (unsigned long long)l->id, r->path, why);
		record_end_locked(l, r, REC_END_ERROR, why);
	}
	pthread_mutex_unlock(&r->lock);
}
