/*
 * The device models of the disk backend: pure arithmetic on a clock the
 * caller gives (disk_model.h). No reactor, no lock.
 *
 * ---- Rotating disk ----------------------------------------------------
 *
 * Geometry. `zones` zones of equal cylinder count; zone z (0 outermost)
 * has spt(z) = spt_outer + (spt_inner - spt_outer) * z / (zones - 1)
 * sectors per track (linear in between, rounded), `heads` tracks per
 * cylinder. Cylinders per zone = ceil(capacity / (heads * sum spt(z))),
 * so the modelled disk holds at least `capacity`. LBAs run from the
 * outer edge inwards, track after track; a sector's angle on its track
 * is index / spt. Track and cylinder switches inside one transfer are
 * free (the skew a real drive lays out hides them), so a transfer of n
 * sectors takes n / spt revolutions: the media rate of zone z is
 * spt(z) * 512 * rpm / 60 bytes/s.
 *
 * The head. Its cylinder is where the last media transfer (or the
 * read-ahead after it) ended; its angle is the spindle's, a function of
 * time alone: angle(t) = frac(phase + t / T), T = 60 s / rpm, phase from
 * the seed. Positioning to a sector = seek(|dc|) + the rotation that
 * brings its angle under the head after the seek.
 *
 * Seek curve. For d >= 1 cylinders, with x = (d - 1) / (C - 2) in [0, 1]
 * (C cylinders, so d = C - 1 is the full stroke):
 *     seek(d) = track_seek + (full_seek - track_seek) * f(x)
 *     f(x) = k sqrt(x)                           x <= x0
 *     f(x) = k (sqrt(x0) + (x - x0) / (2 sqrt(x0)))   x > x0
 *     k = 1 / (sqrt(x0) + (1 - x0) / (2 sqrt(x0)))
 * Square root (the arm accelerates and decelerates) then linear (coasting
 * at top speed), continuous in value and slope at x0, f(0) = 0 and
 * f(1) = 1, so seek(1) = track_seek and seek(C - 1) = full_seek exactly.
 * x0 is fitted (bisection; the mean grows with x0) so that the mean seek
 * over pairs of LBAs drawn uniformly -- a random workload's mean seek,
 * the spec sheets' "average seek" -- is avg_seek. The mean is summed over
 * 256 bands of cylinders, each weighted by the sectors it holds (outer
 * zones hold more), two draws in one band at a third of its width. x0 in
 * (0, 1] reaches means from about 1/3 (linear) to 8/15 (pure square
 * root) of the way from track_seek to full_seek for an unzoned disk; an
 * avg_seek outside what the family reaches is refused naming the key.
 *
 * A command's service: overhead, then for a media access seek + rotation
 * + n / spt revolutions; a read-ahead hit or a cached write costs only
 * overhead + n * 512 / iface rate. One command is in service at a time
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
 * and is a hit too (a sequential stream). A hit slides the segment's end
 * forward while the prefetch is still running; a segment that filled up
 * stays as it is (the head has left). Any other media access (a read
 * elsewhere, a write, a destage) stops the prefetch: this is how
 * reordering defeats read-ahead.
 *
 * Write cache (wcache=on): a write without FUA completes at cache speed
 * and becomes dirty; the drive destages dirty extents when it has no
 * command (oldest first with fifo, shortest positioning with sptf), one
 * media write each, once it has been idle for 10 ms (or at once when
 * half the cache is dirty); a command arriving meanwhile waits for the
 * destage in progress. When the dirty data would exceed segments * segment_size,
 * the write first destages the oldest extents itself. FUA writes and
 * FLUSH pay the media: a FLUSH destages everything dirty. With
 * wcache=off every write is a media write.
 *
 * ---- Flash ------------------------------------------------------------
 *
 * channels x dies (per channel); 4 KiB pages striped over the dies
 * (page p on die p mod (channels*dies), channel = die mod channels). A
 * read occupies its die for read_us then its channel for the page
 * transfer (4096 / channel rate); a write the channel, then the die for
 * program_us. Each die and channel serves its work in the order commands
 * reached the drive (a reservation when the command enters). A command
 * completes when its last page does, after overhead; a FLUSH when every
 * die is idle. The drive holds at most `queue` commands; more wait in the
 * host queue. Throughput grows with depth until the dies (or channels)
 * are all busy.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "backend/disk_model.h"

#define NS 1000000000.0
#define FIT_BANDS 256

static uint64_t max_u64(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

/* ---- seek curve ----------------------------------------------------- */

static double curve(double x, double x0)
{
	double s = sqrt(x0), k = 1.0 / (s + (1.0 - x0) / (2.0 * s));

	if (x <= x0)
		return k * sqrt(x);
	return k * (s + (x - x0) / (2.0 * s));
}

static double seek_at(const struct disk_model *m, double d, double x0)
{
	double x;

	if (d <= 0.0)
		return 0.0;
	if (m->cylinders <= 2)
		return (double)m->p.track_seek_ns;
	x = (d - 1.0) / (double)(m->cylinders - 2);
	if (x < 0.0)
		x = 0.0;
	if (x > 1.0)
		x = 1.0;
	return (double)m->p.track_seek_ns +
	       (double)(m->p.full_seek_ns - m->p.track_seek_ns) * curve(x, x0);
}

uint64_t dm_seek_ns(const struct disk_model *m, uint32_t d)
{
	return (uint64_t)llround(seek_at(m, (double)d, m->seek_x0));
}

/* Mean seek over LBA-uniform pairs for a given x0 (see the header). */
static double mean_seek(const struct disk_model *m, const double *w,
			const double *c, int nb, double width, double x0)
{
	double sum = 0.0;

	for (int i = 0; i < nb; i++)
		for (int j = 0; j < nb; j++) {
			double d = i == j ? width / 3.0 : fabs(c[i] - c[j]);

			sum += w[i] * w[j] * seek_at(m, d, x0);
		}
	return sum;
}

static int fit_seek(struct disk_model *m, char *err, size_t errlen)
{
	double w[FIT_BANDS], c[FIT_BANDS], width, lo = 1e-9, hi = 1.0;
	double want = (double)m->p.avg_seek_ns, mlo, mhi, total = 0.0;
	int nb = m->cylinders < FIT_BANDS ? (int)m->cylinders : FIT_BANDS;

	width = (double)m->cylinders / nb;
	for (int i = 0; i < nb; i++) {
		uint32_t cyl = (uint32_t)((i + 0.5) * width), spt = 0;
		uint32_t z;

		for (z = 0; z + 1 < m->p.zones && m->zone[z + 1].first_cyl <= cyl;
		     z++)
			;
		spt = m->zone[z].spt;
		c[i] = (i + 0.5) * width;
		w[i] = (double)spt * width;
		total += w[i];
	}
	for (int i = 0; i < nb; i++)
		w[i] /= total;
	mlo = mean_seek(m, w, c, nb, width, lo);
	mhi = mean_seek(m, w, c, nb, width, hi);
	if (want < mlo || want > mhi) {
		snprintf(err, errlen, "disk: avg_seek %.3fms cannot be fitted "
			 "between track_seek and full_seek (this curve reaches "
			 "%.3f..%.3fms)", want / 1e6, mlo / 1e6, mhi / 1e6);
		return -1;
	}
	for (int it = 0; it < 60; it++) {
		double mid = 0.5 * (lo + hi);

		if (mean_seek(m, w, c, nb, width, mid) < want)
			lo = mid;
		else
			hi = mid;
	}
	m->seek_x0 = 0.5 * (lo + hi);
	return 0;
}

/* ---- geometry ------------------------------------------------------- */

static const struct dm_zone *zone_of(const struct disk_model *m, uint64_t lba)
{
	uint32_t lo = 0, hi = m->p.zones - 1;

	while (lo < hi) {
		uint32_t mid = (lo + hi + 1) / 2;

		if (m->zone[mid].first_lba <= lba)
			lo = mid;
		else
			hi = mid - 1;
	}
	return &m->zone[lo];
}

uint32_t dm_cyl(const struct disk_model *m, uint64_t lba, uint32_t *spt)
{
	const struct dm_zone *z = zone_of(m, lba);
	uint64_t track = (lba - z->first_lba) / z->spt;

	if (spt)
		*spt = z->spt;
	return z->first_cyl + (uint32_t)(track / m->p.heads);
}

double dm_media_rate(const struct disk_model *m, uint64_t lba)
{
	return (double)zone_of(m, lba)->spt * DM_SECTOR * m->p.rpm / 60.0;
}

static double angle_of(const struct disk_model *m, uint64_t lba)
{
	const struct dm_zone *z = zone_of(m, lba);

	return (double)((lba - z->first_lba) % z->spt) / z->spt;
}

static double angle_at(const struct disk_model *m, uint64_t t)
{
	double a = m->phase + (double)(t % m->rot_ns) / (double)m->rot_ns;

	return a - floor(a);
}

/* Sectors the head reads per ns in the zone of lba. */
static double sect_per_ns(const struct disk_model *m, uint64_t lba)
{
	return (double)zone_of(m, lba)->spt / (double)m->rot_ns;
}

static uint64_t xfer_ns(const struct disk_model *m, uint64_t lba, uint32_t n)
{
	return (uint64_t)llround((double)n / sect_per_ns(m, lba));
}

static uint64_t iface_ns(const struct disk_model *m, uint32_t n)
{
	return (uint64_t)llround((double)n * DM_SECTOR * NS /
				 (double)m->p.iface_bps);
}

/* ---- read-ahead segments -------------------------------------------- */

static uint64_t seg_valid_end(const struct disk_model *m,
			      const struct dm_segment *s, uint64_t t)
{
	uint64_t e;

	if (!s->active)
		return s->end;
	if (t <= s->t0)
		return s->lba0;
	e = s->lba0 + (uint64_t)((double)(t - s->t0) * sect_per_ns(m, s->lba0));
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

/* A media access at t: the prefetch stops where the head got to. */
static void seg_freeze(struct disk_model *m, uint64_t t)
{
	for (uint32_t i = 0; i < m->p.segments; i++) {
		struct dm_segment *s = &m->seg[i];

		if (s->valid && s->active) {
			s->end = seg_valid_end(m, s, t);
			s->active = false;
			m->head_cyl = dm_cyl(m, s->end ? s->end - 1 : 0, NULL);
		}
	}
}

static void seg_invalidate(struct disk_model *m, uint64_t lba, uint32_t n)
{
	for (uint32_t i = 0; i < m->p.segments; i++) {
		struct dm_segment *s = &m->seg[i];

		if (s->valid && lba < s->cap_end && s->start < lba + n)
			s->valid = s->active = false;
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
			*ready = s->t0 + (uint64_t)ceil((double)(lba + n - s->lba0) /
						      sect_per_ns(m, s->lba0));
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

static void acc(struct disk_model *m, uint64_t t)
{
	if (!m->started) {
		m->started = true;
		m->t_first = t;
		m->acc_t = t;
	}
	if (t > m->acc_t) {
		m->area_drive += (double)m->ndrive * (double)(t - m->acc_t);
		m->area_host += (double)m->nhost * (double)(t - m->acc_t);
		m->acc_t = t;
	}
}

/* ---- hdd service ----------------------------------------------------- */

uint64_t dm_position_ns(const struct disk_model *m, uint64_t t, uint64_t lba)
{
	uint32_t c = dm_cyl(m, lba, NULL), h = head_cyl_at(m, t);
	uint64_t seek = dm_seek_ns(m, c > h ? c - h : h - c);
	double wait = angle_of(m, lba) - angle_at(m, t + seek);

	wait -= floor(wait);
	return seek + (uint64_t)llround(wait * (double)m->rot_ns);
}

/* One media access of [lba, lba+n) beginning at t; returns its end. */
static uint64_t media(struct disk_model *m, uint64_t t, uint64_t lba,
		      uint32_t n)
{
	uint64_t end;

	seg_freeze(m, t);
	end = t + dm_position_ns(m, t, lba) + xfer_ns(m, lba, n);
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

/* Positioning cost of r at t, for sptf. */
/* Media transfer of r at the head: nsect / spt revolutions (one zone). */
static uint64_t media_xfer_ns(const struct disk_model *m,
			      const struct dm_req *r)
{
	return (uint64_t)llround((double)r->nsect * (double)m->rot_ns /
				 (double)zone_of(m, r->lba)->spt);
}

/* sptf's measure: the time from t until r's data are through the head
 * (positioning plus media transfer), or for a read the cache will hold,
 * until they are in it. Both sides count the transfer: positioning alone
 * would rank a read-ahead hit, whose wait is the prefetch reading it,
 * behind the media read just after it, which then stops the prefetch --
 * sptf defeating a sequential stream it could have streamed. */
static uint64_t pos_cost(struct disk_model *m, struct dm_req *r, uint64_t t)
{
	uint64_t ready;

	switch (r->op) {
	case DM_READ:
		if (seg_lookup(m, r->lba, r->nsect, t, &ready))
			return ready > t ? ready - t : 0;
		return dm_position_ns(m, t, r->lba) + media_xfer_ns(m, r);
	case DM_WRITE:
		if (cacheable_write(m, r))
			return 0;
		return dm_position_ns(m, t, r->lba) + media_xfer_ns(m, r);
	default:
		return 0;
	}
}

/* Serves r from t; returns its completion time. */
static uint64_t serve(struct disk_model *m, struct dm_req *r, uint64_t t)
{
	uint64_t t1 = t + m->p.overhead_ns, ready, end;
	struct dm_segment *s;
	struct dm_extent *e;

	r->start = t;
	switch (r->op) {
	case DM_READ:
		s = seg_lookup(m, r->lba, r->nsect, t1, &ready);
		if (s) {
			uint64_t cap = m->p.segment_size / DM_SECTOR;

			r->hit = true;
			m->st.read_hits++;
			s->used = ++m->lru;
			/* A stream: what it read is consumed, the window
			 * slides on while the head is still reading. */
			if (s->active && seg_valid_end(m, s, t1) < s->cap_end &&
			    r->lba + cap > s->cap_end) {
				s->start = r->lba;
				s->cap_end = r->lba + cap;
			}
			return max_u64(t1 + iface_ns(m, r->nsect), ready);
		}
		r->media = true;
		end = media(m, t1, r->lba, r->nsect);
		seg_fill_start(m, r->lba, r->nsect,
			       end - xfer_ns(m, r->lba, r->nsect));
		return end;
	case DM_WRITE:
		seg_invalidate(m, r->lba, r->nsect);
		if (cacheable_write(m, r)) {
			end = t1;
			while (m->dirty_sect + r->nsect > m->dirty_max &&
			       (e = pick_dirty(m, end)))
				end = destage(m, e, end);
			e = extent_get(m);
			if (!e) {	/* no memory: write through */
				r->media = true;
				return media(m, end, r->lba, r->nsect);
			}
			e->lba = r->lba;
			e->nsect = r->nsect;
			e->since = t;
			list_add_tail(&e->node, &m->dirty);
			m->dirty_sect += r->nsect;
			r->hit = true;
			m->st.cached_writes++;
			return end + iface_ns(m, r->nsect);
		}
		r->media = true;
		return media(m, t1, r->lba, r->nsect);
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
	uint64_t bt = DM_NONE, t1 = t + m->p.overhead_ns;
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
		uint64_t c = pos_cost(m, r, t1);

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

		acc(m, t);
		list_del(&r->node);
		m->nhost--;
		r->enter = t;
		list_add_tail(&r->node, &m->drive);
		m->ndrive++;
	}
}

/* Should an idle drive destage at t? Once it has been idle for
 * DM_IDLE_DESTAGE_NS, or at once when half the cache is dirty; else
 * m->wake says when to look again. */
static bool destage_now(struct disk_model *m, uint64_t t)
{
	if (list_empty(&m->dirty))
		return false;
	if (m->idle_since == DM_NONE)
		m->idle_since = t;
	if (m->dirty_sect * 2 >= m->dirty_max ||
	    t >= m->idle_since + DM_IDLE_DESTAGE_NS)
		return true;
	m->wake = m->idle_since + DM_IDLE_DESTAGE_NS;
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
		if (m->idle_since == DM_NONE)
			m->idle_since = t;
		m->busy = false;
		return;
	}
	m->busy_ns += (double)(m->busy_end - t);
}

static void finish(struct disk_model *m, struct dm_req *r, uint64_t t,
		   struct list_node *done)
{
	acc(m, t);
	list_del(&r->node);
	m->ndrive--;
	r->done = t;
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
			finish(m, m->cur, t, done);
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

/* ---- ssd service ----------------------------------------------------- */

static void ssd_enter(struct disk_model *m, struct dm_req *r, uint64_t t)
{
	uint32_t ndies = m->p.channels * m->p.dies;
	uint64_t t1 = t + m->p.overhead_ns, end = t1;
	uint64_t tx = (uint64_t)llround(DM_SSD_PAGE * NS /
					(double)m->p.channel_bps);
	struct list_node *n;

	r->start = t;
	r->media = true;
	if (r->op == DM_FLUSH) {
		for (uint32_t g = 0; g < ndies; g++)
			end = max_u64(end, m->die_free[g]);
	} else if (r->op == DM_READ || r->op == DM_WRITE) {
		uint64_t first = r->lba * DM_SECTOR / DM_SSD_PAGE;
		uint64_t last = ((r->lba + r->nsect) * DM_SECTOR - 1) /
				DM_SSD_PAGE;

		for (uint64_t p = first; p <= last; p++) {
			uint32_t g = (uint32_t)(p % ndies), c = g % m->p.channels;
			uint64_t s, e;

			if (r->op == DM_READ) {
				s = max_u64(t1, m->die_free[g]);
				e = max_u64(s + m->p.read_ns, m->ch_free[c]) + tx;
				m->die_free[g] = m->ch_free[c] = e;
				m->die_busy_ns += (double)(e - s);
			} else {
				s = max_u64(t1, max_u64(m->ch_free[c],
							m->die_free[g]));
				m->ch_free[c] = s + tx;
				e = s + tx + m->p.program_ns;
				m->die_free[g] = e;
				m->die_busy_ns += (double)(e - s);
			}
			end = max_u64(end, e);
		}
	}
	r->done = end;
	/* in flight, by completion time (arrival order among equals) */
	for (n = m->inflight.prev; n != &m->inflight; n = n->prev)
		if (list_entry(n, struct dm_req, node)->done <= end)
			break;
	list_insert_between(&r->node, n, n->next);
}

static void ssd_fill(struct disk_model *m, uint64_t t)
{
	while (m->ndrive < m->p.queue && !list_empty(&m->host)) {
		struct dm_req *r = list_first_entry(&m->host, struct dm_req,
						    node);

		acc(m, t);
		list_del(&r->node);
		m->nhost--;
		r->enter = t;
		m->ndrive++;
		ssd_enter(m, r, t);
	}
}

static void ssd_advance(struct disk_model *m, uint64_t now,
			struct list_node *done)
{
	while (!list_empty(&m->inflight)) {
		struct dm_req *r = list_first_entry(&m->inflight, struct dm_req,
						    node);
		uint64_t t = r->done;

		if (t > now)
			break;
		finish(m, r, t, done);
		ssd_fill(m, t);
	}
	ssd_fill(m, now);
}

/* ---- interface ------------------------------------------------------- */

void dm_advance(struct disk_model *m, uint64_t now, struct list_node *done)
{
	if (now < m->now)
		now = m->now;
	if (m->p.kind == DM_SSD)
		ssd_advance(m, now, done);
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
	acc(m, now);
	r->arrive = now;
	r->hit = r->media = false;
	r->enter = r->start = r->done = 0;
	list_add_tail(&r->node, &m->host);
	m->nhost++;
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
		acc(m, now > m->acc_t ? now : m->acc_t);
	*st = m->st;
	el = m->started ? (double)(m->acc_t - m->t_first) : 0.0;
	st->elapsed_ns = (uint64_t)el;
	if (el > 0) {
		st->mean_drive_queue = m->area_drive / el;
		st->mean_host_queue = m->area_host / el;
		st->busy_fraction = m->busy_ns / el;
		st->mean_busy_dies = m->die_busy_ns / el;
		if (st->busy_fraction > 1.0)
			st->busy_fraction = 1.0;
	}
}

int dm_init(struct disk_model *m, const struct dm_params *p, char *err,
	    size_t errlen)
{
	uint64_t cap_sect, sum = 0;
	uint32_t cpz;

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
	if (p->kind == DM_SSD) {
		uint32_t nd = p->channels * p->dies;

		if (!p->channels || !p->dies || !p->channel_bps || !p->queue) {
			snprintf(err, errlen, "disk: channels, dies, "
				 "channel_rate and queue must be above 0");
			return -1;
		}
		m->die_free = calloc(nd, sizeof(uint64_t));
		m->ch_free = calloc(p->channels, sizeof(uint64_t));
		if (!m->die_free || !m->ch_free) {
			dm_fini(m);
			snprintf(err, errlen, "disk: out of memory");
			return -1;
		}
		return 0;
	}
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
	m->rot_ns = (uint64_t)llround(60.0 * NS / p->rpm);
	cap_sect = p->capacity / DM_SECTOR;
	for (uint32_t z = 0; z < p->zones; z++) {
		uint32_t spt = p->zones == 1 ? p->spt_outer :
			(uint32_t)lround(p->spt_outer +
					 ((double)p->spt_inner - p->spt_outer) *
					 z / (p->zones - 1));

		m->zone[z].spt = spt;
		sum += spt;
	}
	cpz = (uint32_t)((cap_sect + (uint64_t)p->heads * sum - 1) /
			 ((uint64_t)p->heads * sum));
	if (cpz == 0)
		cpz = 1;
	for (uint32_t z = 0; z < p->zones; z++) {
		m->zone[z].first_cyl = z * cpz;
		m->zone[z].first_lba = z ? m->zone[z - 1].first_lba +
					   m->zone[z - 1].nsect : 0;
		m->zone[z].nsect = (uint64_t)cpz * p->heads * m->zone[z].spt;
	}
	m->cylinders = cpz * p->zones;
	if (m->cylinders < 3) {
		snprintf(err, errlen, "disk: capacity too small for a seek "
			 "curve (fewer than 3 cylinders)");
		return -1;
	}
	{
		uint64_t s = p->seed;
		uint64_t z = (s += 0x9e3779b97f4a7c15ull);

		z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
		z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
		z ^= z >> 31;
		m->phase = (double)(z >> 11) / 9007199254740992.0;
	}
	m->wake = m->idle_since = DM_NONE;
	m->dirty_max = (uint64_t)p->segments * p->segment_size / DM_SECTOR;
	if (fit_seek(m, err, errlen) < 0)
		return -1;
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
	free(m->die_free);
	free(m->ch_free);
	m->die_free = m->ch_free = NULL;
}
