/*
 * The device models of the disk backend: pure arithmetic on a clock the
 * caller gives (disk_model.h). No reactor, no lock.
 *
 * ---- Rotating disk ----------------------------------------------------
 *
 * The geometry, the head's angle and the seek curve are in
 * disk_model_geom.c, the flash model in disk_model_ssd.c (both through
 * disk_model_priv.h).
 *
 * A command's service: overhead, then for a media access seek + rotation
 * + n / spt revolutions (+ a head switch per track boundary), its data
 * to or from the host no faster than the interface; a read-ahead hit or
 * a cached write costs only hit_overhead + n * 512 / iface rate (drives
 * specify the two command overheads apart). One command is in service at a time
 * (one actuator). The drive holds at most ncq commands; more wait in the
 * host queue, handed on in arrival order or by the host's elevator
 * (disk_elevator.c). fifo serves the drive's queue in arrival
 * order; sptf the command of the shortest positioning time from the
 * head's current cylinder and angle (cache hits and cached writes
 * position in 0), except that once the oldest command has waited `aging`
 * at the drive it goes first: a command waits at most aging + ncq
 * services (the due ones go oldest first).
 *
 * Read-ahead: `segments` segments of `segment_size`. After a media read
 * the head keeps reading into the segment (least recently used one
 * taken) at the media rate, while no other media access moves it, until
 * the segment is full. A read inside what a segment holds is a hit; one
 * that starts in an active segment waits for the head to reach its end
 * and is a hit too (a sequential stream). A hit slides the segment's
 * window forward (what the reader consumed makes room); a segment that
 * filled up resumes its prefetch from where it stopped when a reader
 * makes room, as long as the head has not left. Any other media access
 * (a read elsewhere, a write, a destage) stops the prefetch, the head
 * staying where it got to: this is how reordering defeats read-ahead.
 *
 * Write cache (wcache=on): a write without FUA completes at cache speed
 * and becomes dirty, merged with the dirty extents it overlaps or
 * touches; the drive destages dirty extents when it has no command
 * (oldest first with fifo, shortest positioning with sptf), one media
 * write each, once it has been idle for destage_idle (or at once when
 * destage_pct of the cache is dirty); a command arriving meanwhile waits
 * for the destage in progress. When the dirty data would exceed segments * segment_size,
 * the write first destages the oldest extents itself. FUA writes and
 * FLUSH pay the media: a FLUSH destages everything dirty. With
 * wcache=off every write is a media write.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "backend/disk_model_priv.h"
#include "tcq/compiler.h"

/* ---- read-ahead segments -------------------------------------------- */

static uint64_t seg_valid_end(const struct disk_model *m,
			      const struct dm_segment *s, uint64_t t)
{
	uint64_t e;

	if (!s->active)
		return s->end;
	if (t <= s->t0)
		return s->lba0;
	e = s->lba0 + (uint64_t)((double)(t - s->t0) *
				 dm_stream_sect_per_ns(m, s->lba0));
	return e < s->cap_end ? e : s->cap_end;
}

/* Where the head is at t: prefetching on, or where it stopped. */
static uint32_t head_cyl_at(const struct disk_model *m, uint64_t t)
{
	for (uint32_t i = 0; i < m->p.segments; i++) {
		const struct dm_segment *s = &m->seg[i];

		if (s->valid && s->active) {
			uint64_t e = seg_valid_end(m, s, t);

			return dm_cyl(m, e ? e - 1 : 0, NULL);
		}
	}
	return m->head_cyl;
}

/* The prefetch into s stops at t; the head stays where it got to. */
static void seg_stop(struct disk_model *m, struct dm_segment *s, uint64_t t)
{
	s->end = seg_valid_end(m, s, t);
	s->active = false;
	m->head_cyl = dm_cyl(m, s->end ? s->end - 1 : 0, NULL);
}

/* A media access at t: the prefetch stops where the head got to. */
static void seg_freeze(struct disk_model *m, uint64_t t)
{
	for (uint32_t i = 0; i < m->p.segments; i++) {
		struct dm_segment *s = &m->seg[i];

		if (s->valid && s->active)
			seg_stop(m, s, t);
	}
}

/* A write of [lba, lba+n) at t: the segments holding any of it are
 * dropped; one being prefetched stops first, so the head is left where
 * the prefetch took it, not where the read before it ended. */
static void seg_invalidate(struct disk_model *m, uint64_t lba, uint32_t n,
			   uint64_t t)
{
	for (uint32_t i = 0; i < m->p.segments; i++) {
		struct dm_segment *s = &m->seg[i];

		if (s->valid && lba < s->cap_end && s->start < lba + n) {
			if (s->active)
				seg_stop(m, s, t);
			s->valid = false;
		}
	}
}

/* The segment that serves a read of [lba, lba+n) started at t, and when
 * its data are all there (*ready); NULL: a miss. */
static struct dm_segment *seg_lookup(struct disk_model *m, uint64_t lba,
				     uint32_t n, uint64_t t, uint64_t *ready)
{
	if (!m->p.readahead)
		return NULL;
	for (uint32_t i = 0; i < m->p.segments; i++) {
		struct dm_segment *s = &m->seg[i];
		uint64_t e;

		if (!s->valid || lba < s->start)
			continue;
		e = seg_valid_end(m, s, t);
		if (lba + n <= e) {
			*ready = t;
			return s;
		}
		if (s->active && lba <= e && lba + n <= s->cap_end) {
			/* the head is on its way there */
			*ready = s->t0 + (uint64_t)ceil(
				(double)(lba + n - s->lba0) /
				dm_stream_sect_per_ns(m, s->lba0));
			return s;
		}
	}
	return NULL;
}

static void seg_fill_start(struct disk_model *m, uint64_t lba, uint32_t n,
			   uint64_t t0)
{
	struct dm_segment *v = NULL;
	uint64_t cap = m->p.segment_size / DM_SECTOR;

	if (!m->p.readahead)
		return;
	for (uint32_t i = 0; i < m->p.segments; i++) {
		struct dm_segment *s = &m->seg[i];

		if (!s->valid) {
			v = s;
			break;
		}
		if (!v || s->used < v->used)
			v = s;
	}
	v->valid = v->active = true;
	v->start = lba;
	v->cap_end = lba + (cap > n ? cap : n);
	v->lba0 = lba;
	v->t0 = t0;
	v->end = lba;
	v->used = ++m->lru;
}

/* ---- accounting ------------------------------------------------------ */

void dm_acc(struct disk_model *m, uint64_t t)
{
	if (!m->started) {
		m->started = true;
		m->t_first = t;
		m->acc_t = t;
	}
	if (t > m->acc_t) {
		m->area_drive += (double)m->ndrive * (double)(t - m->acc_t);
		m->area_host += (double)m->nhost * (double)(t - m->acc_t);
		m->area_cmd += (double)m->ncmd * (double)(t - m->acc_t);
		m->acc_t = t;
	}
}

/* ---- hdd service ----------------------------------------------------- */

uint64_t dm_position_ns(const struct disk_model *m, uint64_t t, uint64_t lba)
{
	uint32_t c = dm_cyl(m, lba, NULL), h = head_cyl_at(m, t);
	uint64_t seek = dm_seek_ns(m, c > h ? c - h : h - c);
	double wait = dm_angle_of(m, lba) - dm_angle_at(m, t + seek);

	wait -= floor(wait);
	/* Within 2 ns of a whole turn is the rounding of the transfer that
	 * ended at t (whole ns), not a sector just missed: a transfer that
	 * continues one streams on. */
	if ((1.0 - wait) * (double)m->rot_ns < 2.0)
		wait = 0.0;
	return seek + (uint64_t)llround(wait * (double)m->rot_ns);
}

/* One media access of [lba, lba+n) beginning at t; returns its end. */
static uint64_t media(struct disk_model *m, uint64_t t, uint64_t lba,
		      uint32_t n)
{
	uint64_t end;

	seg_freeze(m, t);
	end = t + dm_position_ns(m, t, lba) + dm_xfer_ns(m, lba, n);
	m->head_cyl = dm_cyl(m, lba + n - 1, NULL);
	m->head_lba = lba + n;
	m->st.media_ops++;
	return end;
}

static struct dm_extent *extent_get(struct disk_model *m)
{
	struct dm_extent *e;

	if (!list_empty(&m->extent_free)) {
		e = list_first_entry(&m->extent_free, struct dm_extent, node);
		list_del(&e->node);
		return e;
	}
	return calloc(1, sizeof(*e));
}

static void extent_put(struct disk_model *m, struct dm_extent *e)
{
	list_add_head(&e->node, &m->extent_free);
}

/* The dirty extent to destage next from the head's position at t. */
static struct dm_extent *pick_dirty(struct disk_model *m, uint64_t t)
{
	struct dm_extent *best = NULL;
	uint64_t bt = DM_NONE;
	struct list_node *n;

	if (list_empty(&m->dirty))
		return NULL;
	if (m->p.sched == DM_FIFO)
		return list_first_entry(&m->dirty, struct dm_extent, node);
	list_for_each(n, &m->dirty) {
		struct dm_extent *e = list_entry(n, struct dm_extent, node);
		uint64_t pt = dm_position_ns(m, t, e->lba);

		if (pt < bt) {
			bt = pt;
			best = e;
		}
	}
	return best;
}

/* Destages e synchronously from t; returns the end. */
static uint64_t destage(struct disk_model *m, struct dm_extent *e, uint64_t t)
{
	uint64_t end = media(m, t, e->lba, e->nsect);

	list_del(&e->node);
	m->dirty_sect -= e->nsect;
	m->st.destages++;
	extent_put(m, e);
	return end;
}

static bool cacheable_write(const struct disk_model *m, const struct dm_req *r)
{
	return r->op == DM_WRITE && m->p.wcache && !r->fua;
}

/* sptf's measure: the time from t, the service's start, until r's data
 * are through the head (overhead, positioning, media transfer), or for a
 * read the cache will hold, until they are in it (hit_overhead at least;
 * a cached write: hit_overhead). Both sides count the transfer: positioning alone
 * would rank a read-ahead hit, whose wait is the prefetch reading it,
 * behind the media read just after it, which then stops the prefetch --
 * sptf defeating a sequential stream it could have streamed. */
static uint64_t pos_cost(struct disk_model *m, struct dm_req *r, uint64_t t)
{
	uint64_t t1 = t + m->p.overhead_ns, th = t + m->p.hit_overhead_ns;
	uint64_t ready;

	switch (r->op) {
	case DM_READ:
		if (seg_lookup(m, r->lba, r->nsect, th, &ready))
			return dm_max_u64(ready, th) - t;
		break;
	case DM_WRITE:
		if (cacheable_write(m, r))
			return th - t;
		break;
	default:
		return 0;
	}
	return t1 - t + dm_position_ns(m, t1, r->lba) +
	       dm_xfer_ns(m, r->lba, r->nsect);
}

/* A read hit on s, a segment being prefetched, at t. The reader has
 * consumed up to lba: the segment keeps a window of its size from there.
 * While the head is still reading the window slides on; once it had
 * filled the segment and stopped, the room the reader made lets it read
 * on from where it stopped, as soon as that sector comes round again. */
static void seg_consume(struct disk_model *m, struct dm_segment *s,
			uint64_t lba, uint64_t t)
{
	uint64_t cap = m->p.segment_size / DM_SECTOR;

	if (lba + cap <= s->cap_end)
		return;		/* no room made */
	if (seg_valid_end(m, s, t) >= s->cap_end) {
		uint64_t at = s->cap_end;

		s->t0 = t + dm_position_ns(m, t, at);
		s->lba0 = at;
	}
	s->start = lba;
	s->cap_end = lba + cap;
}

/* A cached write of [lba, lba+n) at t becomes dirty, merged with every
 * dirty extent it overlaps or touches (one media write destages them;
 * the oldest one's place and age are kept). The extent being destaged
 * is left alone. false: no memory. */
static bool dirty_add(struct disk_model *m, uint64_t lba, uint32_t n,
		      uint64_t t)
{
	uint64_t lo = lba, hi = lba + n;
	struct dm_extent *keep = NULL;
	struct list_node *i, *nx;

	for (i = m->dirty.next; i != &m->dirty; i = nx) {
		struct dm_extent *e = list_entry(i, struct dm_extent, node);

		nx = i->next;
		if (e == m->destaging || e->lba > hi || e->lba + e->nsect < lo)
			continue;
		lo = e->lba < lo ? e->lba : lo;
		hi = e->lba + e->nsect > hi ? e->lba + e->nsect : hi;
		m->dirty_sect -= e->nsect;
		if (keep) {
			list_del(&e->node);
			extent_put(m, e);
		} else {
			keep = e;
		}
	}
	if (!keep) {
		keep = extent_get(m);
		if (!keep)
			return false;
		keep->since = t;
		list_add_tail(&keep->node, &m->dirty);
	}
	keep->lba = lo;
	keep->nsect = (uint32_t)(hi - lo);
	m->dirty_sect += hi - lo;
	return true;
}

/* A media transfer that ended at end carried n sectors to or from the
 * host, which cannot take them faster than the interface. */
static uint64_t iface_cap(const struct disk_model *m, const struct dm_req *r,
			  uint64_t end)
{
	uint64_t x = dm_xfer_ns(m, r->lba, r->nsect);
	uint64_t i = dm_iface_ns(m, r->nsect);

	return i > x ? end - x + i : end;
}

/* Serves r from t; returns its completion time. A hit or a cached write
 * pays hit_overhead, a media access overhead. */
static uint64_t serve(struct disk_model *m, struct dm_req *r, uint64_t t)
{
	uint64_t t1 = t + m->p.overhead_ns, th = t + m->p.hit_overhead_ns;
	uint64_t ready, end;
	struct dm_segment *s;
	struct dm_extent *e;

	r->start = t;
	switch (r->op) {
	case DM_READ:
		s = seg_lookup(m, r->lba, r->nsect, th, &ready);
		if (s) {
			r->hit = true;
			m->st.read_hits++;
			s->used = ++m->lru;
			if (s->active)
				seg_consume(m, s, r->lba, th);
			return dm_max_u64(th + dm_iface_ns(m, r->nsect), ready);
		}
		r->media = true;
		end = media(m, t1, r->lba, r->nsect);
		seg_fill_start(m, r->lba, r->nsect,
			       end - dm_xfer_ns(m, r->lba, r->nsect));
		return iface_cap(m, r, end);
	case DM_WRITE:
		seg_invalidate(m, r->lba, r->nsect, t);
		if (cacheable_write(m, r)) {
			end = th;
			while (m->dirty_sect + r->nsect > m->dirty_max &&
			       (e = pick_dirty(m, end)))
				end = destage(m, e, end);
			if (!dirty_add(m, r->lba, r->nsect, t)) {
				/* no memory: write through */
				r->media = true;
				return iface_cap(m, r, media(m, end, r->lba,
							     r->nsect));
			}
			r->hit = true;
			m->st.cached_writes++;
			return end + dm_iface_ns(m, r->nsect);
		}
		r->media = true;
		return iface_cap(m, r, media(m, t1, r->lba, r->nsect));
	case DM_FLUSH:
		end = t1;
		while ((e = pick_dirty(m, end))) {
			r->media = true;
			end = destage(m, e, end);
		}
		return end;
	default:
		return t1;
	}
}

static struct dm_req *pick_next(struct disk_model *m, uint64_t t)
{
	struct dm_req *oldest, *best = NULL;
	uint64_t bt = DM_NONE;
	struct list_node *n;

	if (list_empty(&m->drive))
		return NULL;
	oldest = list_first_entry(&m->drive, struct dm_req, node);
	if (m->p.sched == DM_FIFO)
		return oldest;
	if (m->p.aging_ns && t - oldest->enter >= m->p.aging_ns)
		return oldest;
	list_for_each(n, &m->drive) {
		struct dm_req *r = list_entry(n, struct dm_req, node);
		uint64_t c = pos_cost(m, r, t);

		if (c < bt) {
			bt = c;
			best = r;
		}
	}
	return best;
}

static void fill_drive(struct disk_model *m, uint64_t t, uint32_t depth)
{
	while (m->ndrive < depth && !list_empty(&m->host)) {
		struct dm_req *r = dm_elevator_pick(m, t);

		if (!r)		/* the elevator idles the drive */
			break;
		dm_acc(m, t);
		list_del(&r->node);
		m->nhost--;
		r->enter = t;
		list_add_tail(&r->node, &m->drive);
		m->ndrive++;
	}
}

/* Should an idle drive destage at t? Once it has been idle for
 * destage_idle, or at once when destage_pct of the cache is dirty; else
 * m->wake says when to look again. */
static bool destage_now(struct disk_model *m, uint64_t t)
{
	if (list_empty(&m->dirty))
		return false;
	if (m->idle_since == DM_NONE)
		m->idle_since = t;
	if (m->dirty_sect * 100 >= m->dirty_max * m->p.destage_pct ||
	    t >= m->idle_since + m->p.destage_idle_ns)
		return true;
	m->wake = m->idle_since + m->p.destage_idle_ns;
	return false;
}

/* The mechanism is free at t: the next command, or a destage, or idle. */
static void hdd_start(struct disk_model *m, uint64_t t)
{
	struct dm_req *r;
	struct dm_extent *e;

	fill_drive(m, t, m->p.ncq);
	r = pick_next(m, t);
	m->cur = r;
	m->destaging = NULL;
	m->wake = DM_NONE;
	if (r) {
		m->idle_since = DM_NONE;
		m->busy = true;
		m->busy_end = serve(m, r, t);
	} else if (m->p.wcache && destage_now(m, t) &&
		   (e = pick_dirty(m, t))) {
		/* idle: destage one extent (freed when it ends) */
		uint64_t end = media(m, t, e->lba, e->nsect);

		m->destaging = e;
		m->busy = true;
		m->busy_end = end;
	} else {
		uint64_t ew = dm_elevator_wake(m, t);

		if (m->idle_since == DM_NONE)
			m->idle_since = t;
		if (ew < m->wake)
			m->wake = ew;
		m->busy = false;
		return;
	}
	m->busy_ns += (double)(m->busy_end - t);
}

/* Whether a piece of command cmd is still in the model (the host queue,
 * the drive, the ssd's flight). A scan, but only for the pieces of a cut
 * command: a whole command (cmd NULL) never asks. */
static bool cmd_in_model(const struct disk_model *m, const void *cmd)
{
	const struct list_node *lists[] = { &m->host, &m->drive,
					    &m->inflight };

	for (size_t i = 0; i < ARRAY_SIZE(lists); i++) {
		const struct list_node *n;

		list_for_each(n, lists[i])
			if (list_entry(n, struct dm_req, node)->cmd == cmd)
				return true;
	}
	return false;
}

void dm_finish(struct disk_model *m, struct dm_req *r, uint64_t t,
	       struct list_node *done)
{
	dm_acc(m, t);
	list_del(&r->node);
	m->ndrive--;
	if (!r->cmd || !cmd_in_model(m, r->cmd))
		m->ncmd--;	/* its last piece out */
	r->done = t;
	dm_elevator_done(m, r, t);
	m->st.commands++;
	if (r->op == DM_READ)
		m->st.reads++;
	else if (r->op == DM_WRITE)
		m->st.writes++;
	else if (r->op == DM_FLUSH)
		m->st.flushes++;
	list_add_tail(&r->node, done);
}

static void hdd_advance(struct disk_model *m, uint64_t now,
			struct list_node *done)
{
	for (;;) {
		uint64_t t;

		if (!m->busy && m->wake != DM_NONE && m->wake <= now) {
			hdd_start(m, m->wake);
			continue;
		}
		if (!m->busy || m->busy_end > now)
			break;
		t = m->busy_end;

		if (m->cur) {
			dm_finish(m, m->cur, t, done);
		} else if (m->destaging) {
			struct dm_extent *e = m->destaging;

			list_del(&e->node);
			m->dirty_sect -= e->nsect;
			m->st.destages++;
			extent_put(m, e);
		}
		m->cur = NULL;
		m->destaging = NULL;
		hdd_start(m, t);
	}
	/* arrivals take the drive's free slots at once */
	fill_drive(m, now, m->p.ncq);
	if (!m->busy)
		hdd_start(m, now);
}


/* ---- interface ------------------------------------------------------- */

void dm_advance(struct disk_model *m, uint64_t now, struct list_node *done)
{
	if (now < m->now)
		now = m->now;
	if (m->p.kind == DM_SSD)
		dm_ssd_advance(m, now, done);
	else
		hdd_advance(m, now, done);
	m->now = now;
}

void dm_submit(struct disk_model *m, struct dm_req *r, uint64_t now,
	       struct list_node *done)
{
	if (now < m->now)
		now = m->now;
	/* events due first, so r sees the drive as it is at now */
	dm_advance(m, now, done);
	dm_acc(m, now);
	r->arrive = now;
	r->hit = r->media = false;
	r->enter = r->start = r->done = 0;
	r->elv = NULL;
	if (!r->cmd || !cmd_in_model(m, r->cmd))
		m->ncmd++;	/* its first piece in */
	list_add_tail(&r->node, &m->host);
	m->nhost++;
	dm_elevator_add(m, r, now);
	dm_advance(m, now, done);
}

uint64_t dm_next(const struct disk_model *m)
{
	if (m->p.kind == DM_SSD)
		return list_empty(&m->inflight) ? DM_NONE :
		       list_first_entry(&m->inflight, struct dm_req,
					node)->done;
	return m->busy ? m->busy_end : m->wake;
}

void dm_get_stats(struct disk_model *m, uint64_t now, struct dm_stats *st)
{
	double el;

	if (m->started)
		dm_acc(m, now > m->acc_t ? now : m->acc_t);
	*st = m->st;
	el = m->started ? (double)(m->acc_t - m->t_first) : 0.0;
	st->elapsed_ns = (uint64_t)el;
	if (el > 0) {
		st->mean_drive_queue = m->area_drive / el;
		st->mean_host_queue = m->area_host / el;
		st->mean_commands = m->area_cmd / el;
		st->busy_fraction = m->busy_ns / el;
		st->mean_busy_dies = m->die_busy_ns / el;
		if (st->busy_fraction > 1.0)
			st->busy_fraction = 1.0;
	}
}

int dm_init(struct disk_model *m, const struct dm_params *p, char *err,
	    size_t errlen)
{
	memset(m, 0, sizeof(*m));
	m->p = *p;
	list_init(&m->host);
	list_init(&m->drive);
	list_init(&m->dirty);
	list_init(&m->extent_free);
	list_init(&m->inflight);
	if (!p->iface_bps) {
		snprintf(err, errlen, "disk: iface_rate must be above 0");
		return -1;
	}
	if (p->kind == DM_SSD)
		return dm_ssd_init(m, err, errlen);
	if (p->spt_inner > p->spt_outer) {
		snprintf(err, errlen, "disk: spt_inner %u is above spt_outer %u",
			 p->spt_inner, p->spt_outer);
		return -1;
	}
	if (!(p->track_seek_ns < p->avg_seek_ns &&
	      p->avg_seek_ns < p->full_seek_ns)) {
		snprintf(err, errlen, "disk: avg_seek must lie between "
			 "track_seek and full_seek");
		return -1;
	}
	if (p->wcache || p->readahead) {
		if (!p->segments || p->segment_size < DM_SECTOR) {
			snprintf(err, errlen, "disk: segments and segment_size "
				 "must be above 0 with readahead or wcache");
			return -1;
		}
	}
	if (p->wcache && (!p->destage_pct || p->destage_pct > 100)) {
		snprintf(err, errlen, "disk: destage_dirty %u%% is not "
			 "1..100", p->destage_pct);
		return -1;
	}
	if (dm_geom_init(m, err, errlen) < 0)
		return -1;
	m->wake = m->idle_since = DM_NONE;
	m->cfq.idle_until = DM_NONE;
	m->dirty_max = (uint64_t)p->segments * p->segment_size / DM_SECTOR;
	return 0;
}

void dm_fini(struct disk_model *m)
{
	while (!list_empty(&m->dirty)) {
		struct dm_extent *e = list_first_entry(&m->dirty,
						       struct dm_extent, node);

		list_del(&e->node);
		free(e);
	}
	while (!list_empty(&m->extent_free)) {
		struct dm_extent *e = list_first_entry(&m->extent_free,
						       struct dm_extent, node);

		list_del(&e->node);
		free(e);
	}
	dm_ssd_fini(m);
}
