/*
 * Sequential prefetch for one LUN (prefetch.h). A medium opened O_DIRECT
 * has no page cache to read ahead, so a sequential reader at a low queue
 * depth waits for the disk on every command; this reads ahead of it.
 *
 * Streams. Each queue of the LUN (one per reactor; a session's commands
 * all come through one) knows up to PREFETCH_STREAMS streams by the byte
 * offset their next read is expected at, on its own thread, without a
 * lock. A read that starts there continues its stream; any other read
 * starts a new one in place of the least recently used. A stream reads
 * ahead only once it has made PREFETCH_TRIGGER reads in a row, so random
 * reads never cause a read-ahead (a chance continuation is one read in a
 * row, and the next random read breaks it), and while no buffer is held
 * they take no lock at all.
 *
 * Window. A stream keeps a window read ahead of its next read: twice its
 * request at first, doubling each time it reads ahead, up to the cap
 * (PREFETCH_WINDOW_MAX, at most a quarter of prefetch_max), as the
 * kernel's readahead grows. Whenever less than a window is ahead of it,
 * it reads ahead from where its read-ahead ends, in pieces of at most
 * PF_PIECE (whole requests): the disk has several at once, and a read
 * waits only for its own piece. After a write dropped read-ahead, each
 * stream starts again from where it is with its first window (a writer
 * working just ahead of a reader makes read-ahead waste).
 *
 * Buffers. Each piece fills one buffer of its own (page-aligned), through
 * the LUN's depth budget like any I/O; a dropped one's memory is kept as
 * a spare for the next (PF_SPARES). The bytes of every buffer not yet
 * freed (filling, valid, dropped while still copied from, spare) never
 * exceed prefetch_max: a read-ahead that would pass it first drops the
 * least recently used valid buffers nobody copies from, else it is not
 * made. A buffer the reader has read to its end is dropped (it passed).
 *
 * Hits. A read wholly inside a valid buffer is copied out on its own
 * reactor and completes from a deferred call of that pass (never inside
 * its submit), without a disk I/O. A read
 * wholly inside a buffer being filled through its own queue waits for the
 * fill and is copied out when it lands. Anything else goes to the disk
 * whole, a partial hit included: a stream's reads fall inside its windows
 * (whole multiples of its request), so a partial hit is a reader that
 * changed its request size, and splitting it would cost two commands.
 *
 * Never stale. Every write (WRITE, WRITE SAME, WRITE ZEROES, UNMAP,
 * COMPARE AND WRITE, EXTENDED COPY's writes: every operation but READ and
 * FLUSH) drops each buffer it overlaps before it is submitted, and again
 * when it completes, before its completion is reported. A buffer still
 * being filled is marked dead: its data is never installed and its
 * waiters go to the disk. The second drop catches a read-ahead started
 * while the write was in flight, which may have read the medium before
 * the write reached it; a read-ahead started after the write completed
 * reads what it wrote.
 *
 * Threads. A LUN is served by several reactors: the streams are per
 * queue; one mutex per LUN guards the buffer list, held for lookups and
 * bookkeeping only, never across a copy or an I/O. A buffer copied from
 * holds a reference, so a drop or an eviction only unlinks it and the
 * last reference frees it; the fill holds one too. A read waits only for a fill of its own
 * queue, which completes on its own reactor.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include "backend/bdev.h"
#include "backend/bdev_priv.h"
#include "backend/prefetch.h"
#include "tcq/compiler.h"
#include "tcq/list.h"

enum pf_state { PF_FILLING, PF_VALID, PF_DEAD };

struct pf_buf {
	struct list_node node;		/* pf->bufs unless dead */
	struct prefetch *pf;
	uint64_t off, len;		/* the medium's bytes it holds */
	void *data;
	enum pf_state state;
	unsigned refs;			/* the fill, and copies under way */
	uint64_t used;			/* LRU clock of its last hit */
	struct bdev_queue *q;		/* filled through it */
	struct list_node waiters;	/* q's reads waiting for the fill */
	struct bdev_io io;		/* the fill */
};

struct pf_stream {
	uint64_t next;			/* where its next read starts */
	uint64_t ahead;			/* read ahead up to here */
	uint64_t window;		/* its next read-ahead's size */
	uint32_t run;			/* reads in a row (0: unused) */
	uint64_t used;			/* LRU clock */
};

/* Data buffers of dropped read-aheads kept for the next ones: a fresh
 * allocation of a window is an mmap, page faults in io_submit and an
 * munmap (a TLB shootdown across the reactors' CPUs) per read-ahead. */
#define PF_SPARES 8
/* A window is read in pieces of at most this (whole requests), at most
 * PF_FILLS of them started by one read. */
#define PF_PIECE (256u << 10)
#define PF_FILLS 8

struct pf_spare {
	void *data;
	uint64_t len;
};

/* One queue's (reactor's) streams, touched by its thread alone: the
 * detector takes no lock. Counters written by that thread, read by any. */
struct pf_queue {
	struct pf_stream s[PREFETCH_STREAMS];
	uint64_t clock;			/* LRU of its streams */
	uint64_t drops;			/* pf->drops its streams have seen */
	_Atomic uint64_t hits, misses;
	char pad[64];			/* apart from the next queue's */
};

struct prefetch {
	/* Read by every I/O of the LUN: on, whether a write has anything to
	 * drop (buffers linked), and how many times writes dropped some. */
	_Atomic bool on;
	_Atomic uint32_t nbufs;		/* linked buffers */
	_Atomic uint64_t drops;
	struct pf_queue *qs;		/* BDEV_MAX_QUEUES, by reactor index */
	struct bdev *bdev;
	pthread_mutex_t lock;		/* all below */
	uint64_t max;			/* prefetch_max */
	uint64_t held;			/* bytes of buffers not yet freed,
					 * spares included */
	uint64_t clock;
	struct list_node bufs;		/* filling and valid */
	struct pf_spare spare[PF_SPARES];
	unsigned nspare;
	_Atomic uint64_t prefetched, dropped;
};

/* ---- buffers (under pf->lock) ------------------------------------------ */

/* A spare of len bytes, out of the spares (its bytes stay in held, now
 * the new buffer's); NULL: none. */
static void *spare_take(struct prefetch *pf, uint64_t len)
{
	for (unsigned i = 0; i < pf->nspare; i++)
		if (pf->spare[i].len == len) {
			void *p = pf->spare[i].data;

			pf->spare[i] = pf->spare[--pf->nspare];
			return p;
		}
	return NULL;
}

/* Kept as a spare (still counted in held), or freed. */
static void data_put(struct prefetch *pf, void *data, uint64_t len)
{
	if (pf->nspare < PF_SPARES && pf->held <= pf->max) {
		pf->spare[pf->nspare].data = data;
		pf->spare[pf->nspare++].len = len;
		return;
	}
	pf->held -= len;
	free(data);
}

static void spares_free(struct prefetch *pf)
{
	while (pf->nspare) {
		struct pf_spare *sp = &pf->spare[--pf->nspare];

		pf->held -= sp->len;
		free(sp->data);
	}
}

static void buf_put(struct prefetch *pf, struct pf_buf *b)
{
	if (--b->refs || b->state != PF_DEAD)
		return;
	data_put(pf, b->data, b->len);
	free(b);
}

/* Out of the list: no read finds it again; freed with its last reference
 * (a fill under way keeps it, and its data, until it lands). */
static void buf_unlink(struct prefetch *pf, struct pf_buf *b)
{
	if (b->state == PF_DEAD)
		return;
	b->state = PF_DEAD;
	list_del(&b->node);
	atomic_fetch_sub(&pf->nbufs, 1);
	b->refs++;
	buf_put(pf, b);
}

/* The buffer holding all of [off, off + len), or NULL. */
static struct pf_buf *buf_find(struct prefetch *pf, uint64_t off,
			       uint64_t len)
{
	struct list_node *n;

	list_for_each(n, &pf->bufs) {
		struct pf_buf *b = list_entry(n, struct pf_buf, node);

		if (off >= b->off && off + len <= b->off + b->len)
			return b;
	}
	return NULL;
}

/* Room for need more bytes and one more buffer, dropping the least
 * recently used valid buffers nobody copies from; false: none is left to
 * drop. */
static bool buf_room(struct prefetch *pf, uint64_t need)
{
	if (pf->held + need > pf->max)
		spares_free(pf);
	while (pf->held + need > pf->max ||
	       atomic_load_explicit(&pf->nbufs, memory_order_relaxed) >=
	       PREFETCH_MAX_BUFS) {
		struct pf_buf *lru = NULL;
		struct list_node *n;

		list_for_each(n, &pf->bufs) {
			struct pf_buf *b = list_entry(n, struct pf_buf, node);

			if (b->state == PF_VALID && !b->refs &&
			    (!lru || b->used < lru->used))
				lru = b;
		}
		if (!lru)
			return false;
		buf_unlink(pf, lru);
	}
	return true;
}

/* ---- streams (on their queue's thread) --------------------------------- */

/* The stream [off, off + len) continues, or the one it starts. Streams
 * whose read-ahead a write (or an off, a resize) may have dropped since
 * their last read read ahead again from where they are, with their first
 * window: a writer just ahead of a reader would otherwise cost a whole
 * large window each time. */
static struct pf_stream *stream_see(struct prefetch *pf, struct pf_queue *pq,
				    uint64_t off, uint64_t len)
{
	struct pf_stream *s, *lru = &pq->s[0];
	uint64_t drops = atomic_load_explicit(&pf->drops,
					      memory_order_relaxed);

	if (drops != pq->drops) {
		pq->drops = drops;
		for (int i = 0; i < PREFETCH_STREAMS; i++) {
			pq->s[i].ahead = pq->s[i].next;
			pq->s[i].window = 0;
		}
	}
	for (int i = 0; i < PREFETCH_STREAMS; i++) {
		s = &pq->s[i];
		if (s->run && s->next == off) {
			s->run++;
			goto seen;
		}
		if (s->used < lru->used)
			lru = s;
	}
	s = lru;
	memset(s, 0, sizeof(*s));
	s->run = 1;
seen:
	s->next = off + len;
	s->used = ++pq->clock;
	return s;
}

/* A buffer of want bytes at off to fill (linked, filling, holding the
 * fill's reference); NULL: no room or no memory. */
static struct pf_buf *buf_new(struct prefetch *pf, struct bdev_queue *q,
			      uint64_t off, uint64_t want)
{
	struct pf_buf *b = NULL;
	void *data = spare_take(pf, want);	/* already counted in held */

	if (!buf_room(pf, data ? 0 : want) || !(b = calloc(1, sizeof(*b))))
		goto fail;
	if (!data) {
		if (posix_memalign(&data, 4096, want)) {
			data = NULL;
			goto fail;
		}
		pf->held += want;
	}
	b->data = data;
	b->pf = pf;
	b->off = off;
	b->len = want;
	b->state = PF_FILLING;
	b->refs = 1;
	b->used = ++pf->clock;
	b->q = q;
	list_init(&b->waiters);
	list_add_tail(&b->node, &pf->bufs);
	/* Before the fill is submitted: a write completing after it sees
	 * a buffer to drop (prefetch_active). */
	atomic_fetch_add(&pf->nbufs, 1);
	return b;
fail:
	if (data) {
		pf->held -= want;
		free(data);
	}
	free(b);
	return NULL;
}

/* The read-aheads s makes now, up to PF_FILLS of them, into fills[]:
 * while less than a window is read ahead of it, pieces of at most
 * PF_PIECE (whole requests), so the disk has several at once and a read
 * waits only for its own piece; then the window doubles. */
static unsigned stream_ahead(struct prefetch *pf, struct pf_stream *s,
			     struct bdev_queue *q, uint64_t len,
			     struct pf_buf **fills)
{
	uint64_t cap = pf->max / 4 < PREFETCH_WINDOW_MAX ? pf->max / 4 :
		       PREFETCH_WINDOW_MAX;
	uint64_t size = __atomic_load_n(&pf->bdev->size, __ATOMIC_ACQUIRE);
	unsigned n = 0;

	cap &= ~(uint64_t)4095;
	if (s->run < PREFETCH_TRIGGER || len > cap)
		return 0;
	if (!s->window)
		s->window = 2 * len < cap ? 2 * len : cap;
	if (s->ahead < s->next)
		s->ahead = s->next;
	while (n < PF_FILLS && s->ahead - s->next < s->window &&
	       s->ahead < size) {
		uint64_t want = s->window < PF_PIECE ? s->window : PF_PIECE;

		want = want / len * len;	/* whole requests, >= one */
		if (want > size - s->ahead)
			want = size - s->ahead;
		if (!(fills[n] = buf_new(pf, q, s->ahead, want)))
			break;
		s->ahead += want;
		n++;
	}
	if (n)
		s->window = 2 * s->window < cap ? 2 * s->window : cap;
	return n;
}

/* ---- the data path ----------------------------------------------------- */

/* A counter of the queue's own thread: no read-modify-write. */
static void count(_Atomic uint64_t *c)
{
	atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed)
			      + 1, memory_order_relaxed);
}

static void copy_out(const struct pf_buf *b, struct bdev_io *io)
{
	memcpy(io->buf, (const char *)b->data + (io->offset - b->off),
	       io->len);
}

/* After a copy out of b: the reference dropped, and b too once the reader
 * has read it to its end. */
static void buf_copied(struct prefetch *pf, struct pf_buf *b,
		       const struct bdev_io *io)
{
	if (io->offset + io->len == b->off + b->len)
		buf_unlink(pf, b);
	buf_put(pf, b);
}

static void fill_done(struct bdev_io *fio)
{
	struct pf_buf *b = fio->ctx;
	struct prefetch *pf = b->pf;
	struct pf_queue *pq = &pf->qs[b->q->reactor->index];
	struct list_node w;
	bool ok;

	pthread_mutex_lock(&pf->lock);
	list_init(&w);
	while (!list_empty(&b->waiters)) {
		struct list_node *n = b->waiters.next;

		list_del(n);
		list_add_tail(n, &w);
	}
	if (b->state == PF_FILLING && fio->result == 0) {
		b->state = PF_VALID;
		atomic_fetch_add_explicit(&pf->prefetched, b->len,
					  memory_order_relaxed);
	} else {
		buf_unlink(pf, b);	/* a write passed it, or an error */
	}
	ok = b->state == PF_VALID;
	pthread_mutex_unlock(&pf->lock);
	while (!list_empty(&w)) {
		struct bdev_io *io = list_first_entry(&w, struct bdev_io,
						      node);

		list_del(&io->node);
		count(ok ? &pq->hits : &pq->misses);
		if (!ok) {	/* never installed: to the disk */
			bdev_depth_submit(b->q, io);
			continue;
		}
		copy_out(b, io);
		pthread_mutex_lock(&pf->lock);
		b->refs++;
		buf_copied(pf, b, io);
		pthread_mutex_unlock(&pf->lock);
		io->result = 0;
		io->end_ns = b->q->reactor->now_ns;
		io->done(io);
	}
	pthread_mutex_lock(&pf->lock);
	buf_put(pf, b);		/* the fill's reference */
	pthread_mutex_unlock(&pf->lock);
}

static void fill_start(struct bdev_queue *q, struct pf_buf *b)
{
	memset(&b->io, 0, sizeof(b->io));
	b->io.op = BDEV_READ;
	b->io.offset = b->off;
	b->io.len = b->len;
	b->io.buf = b->data;
	b->io.done = fill_done;
	b->io.ctx = b;
	b->io.q = q;
	bdev_depth_submit(q, &b->io);
}

bool prefetch_read(struct prefetch *pf, struct bdev_queue *q,
		   struct bdev_io *io)
{
	struct pf_queue *pq = &pf->qs[q->reactor->index];
	struct pf_buf *hit, *fills[PF_FILLS];
	struct pf_stream *s;
	bool waits = false;
	unsigned nfill = 0;

	if (!atomic_load_explicit(&pf->on, memory_order_relaxed))
		return false;
	s = stream_see(pf, pq, io->offset, io->len);
	/* Random reads end here: no buffer to look in, no stream to read
	 * ahead for, no lock. */
	if (s->run < PREFETCH_TRIGGER &&
	    !atomic_load_explicit(&pf->nbufs, memory_order_relaxed)) {
		count(&pq->misses);
		return false;
	}
	pthread_mutex_lock(&pf->lock);
	hit = buf_find(pf, io->offset, io->len);
	if (hit && hit->state == PF_FILLING) {
		waits = hit->q == q;
		if (waits)
			list_add_tail(&io->node, &hit->waiters);
		hit = NULL;
	} else if (hit) {
		hit->refs++;
		hit->used = ++pf->clock;
	}
	if (atomic_load_explicit(&pf->on, memory_order_relaxed))
		nfill = stream_ahead(pf, s, q, io->len, fills);
	pthread_mutex_unlock(&pf->lock);
	io->start_ns = io->end_ns = q->reactor->now_ns;
	if (hit) {
		copy_out(hit, io);
		pthread_mutex_lock(&pf->lock);
		buf_copied(pf, hit, io);
		pthread_mutex_unlock(&pf->lock);
		bdev_queue_done_later(q, io, 0);
	} else if (!waits) {
		bdev_depth_submit(q, io);
	}
	if (!waits)	/* a waiter counts when its fill lands */
		count(hit ? &pq->hits : &pq->misses);
	for (unsigned i = 0; i < nfill; i++)	/* after the read they run
						 * ahead of */
		fill_start(q, fills[i]);
	return true;
}

/* ---- writes, settings, statistics -------------------------------------- */

/* Only linked buffers (filling or valid) can hold what a write
 * overwrites; with none, the write takes no lock. A read-ahead linked
 * just after this load reads the medium after the write was submitted
 * and is caught as the write completes, when it is linked. */
bool prefetch_active(const struct prefetch *pf)
{
	return atomic_load(&pf->nbufs) != 0;
}

void prefetch_write(struct prefetch *pf, uint64_t off, uint64_t len)
{
	struct list_node *n, *t;
	uint64_t end = off + len;
	bool any = false;

	pthread_mutex_lock(&pf->lock);
	list_for_each_safe(n, t, &pf->bufs) {
		struct pf_buf *b = list_entry(n, struct pf_buf, node);

		if (b->off < end && off < b->off + b->len) {
			atomic_fetch_add_explicit(&pf->dropped, b->len,
						  memory_order_relaxed);
			buf_unlink(pf, b);
			any = true;
		}
	}
	if (any)	/* the streams start their read-ahead again */
		atomic_fetch_add(&pf->drops, 1);
	pthread_mutex_unlock(&pf->lock);
}

static void drop_all_locked(struct prefetch *pf)
{
	struct list_node *n, *t;

	list_for_each_safe(n, t, &pf->bufs)
		buf_unlink(pf, list_entry(n, struct pf_buf, node));
	spares_free(pf);
	atomic_fetch_add(&pf->drops, 1);
}

void prefetch_drop_all(struct prefetch *pf)
{
	pthread_mutex_lock(&pf->lock);
	drop_all_locked(pf);
	pthread_mutex_unlock(&pf->lock);
}

void prefetch_set(struct prefetch *pf, bool on, uint64_t max)
{
	pthread_mutex_lock(&pf->lock);
	atomic_store_explicit(&pf->on, on, memory_order_relaxed);
	pf->max = max;
	if (!on)
		drop_all_locked(pf);
	else
		buf_room(pf, 0);
	pthread_mutex_unlock(&pf->lock);
}

struct prefetch *prefetch_new(struct bdev *b)
{
	struct prefetch *pf = calloc(1, sizeof(*pf));

	if (!pf)
		return NULL;
	pf->qs = calloc(BDEV_MAX_QUEUES, sizeof(*pf->qs));
	if (!pf->qs) {
		free(pf);
		return NULL;
	}
	pf->bdev = b;
	pthread_mutex_init(&pf->lock, NULL);
	list_init(&pf->bufs);
	return pf;
}

void prefetch_free(struct prefetch *pf)
{
	if (!pf)
		return;
	prefetch_drop_all(pf);
	pthread_mutex_destroy(&pf->lock);
	free(pf->qs);
	free(pf);
}

void prefetch_stats(struct prefetch *pf, struct bdev_prefetch_stats *st)
{
	pthread_mutex_lock(&pf->lock);
	st->on = atomic_load_explicit(&pf->on, memory_order_relaxed);
	st->max = pf->max;
	st->held = pf->held;
	pthread_mutex_unlock(&pf->lock);
	st->hits = st->misses = 0;
	for (int i = 0; i < BDEV_MAX_QUEUES; i++) {
		st->hits += atomic_load_explicit(&pf->qs[i].hits,
						 memory_order_relaxed);
		st->misses += atomic_load_explicit(&pf->qs[i].misses,
						   memory_order_relaxed);
	}
	st->prefetched = atomic_load_explicit(&pf->prefetched,
					      memory_order_relaxed);
	st->dropped = atomic_load_explicit(&pf->dropped, memory_order_relaxed);
}
