/* Per-LUN statistics: one slot per reactor, summed on read (stats.h). */
#include <stdlib.h>
#include <string.h>
#include "tcq/compiler.h"
#include "backend/bdev.h"
#include "tcq/reactor.h"
#include "scsi/lun.h"
#include "scsi/opcodes.h"
#include "scsi/stats.h"
#include "scsi/task.h"

/* The owner thread is the only writer: a relaxed load-add-store is exact
 * and never tears for a concurrent reader. */
#define BUMP(x, n) __atomic_store_n(&(x), (x) + (n), __ATOMIC_RELAXED)
#define PUT(x, v) __atomic_store_n(&(x), (v), __ATOMIC_RELAXED)
#define GET(x) __atomic_load_n(&(x), __ATOMIC_RELAXED)

struct lun_stats *stats_new(void)
{
	return calloc(1, sizeof(struct lun_stats));
}

void stats_free(struct lun_stats *s)
{
	if (!s)
		return;
	for (int i = 0; i < STATS_MAX_SLOTS; i++)
		free(s->slot[i]);
	free(s);
}

/* ---- histograms -------------------------------------------------------- */

unsigned stats_hist_bucket(uint64_t v)
{
	unsigned e;

	if (v < STATS_HIST_SUB)
		return (unsigned)v;
	e = 63u - (unsigned)__builtin_clzll(v);	/* >= SUB_BITS */
	return (e - STATS_HIST_SUB_BITS + 1) * STATS_HIST_SUB +
	       (unsigned)(v >> (e - STATS_HIST_SUB_BITS)) - STATS_HIST_SUB;
}

uint64_t stats_hist_lo(unsigned i)
{
	unsigned g = i / STATS_HIST_SUB, s = i % STATS_HIST_SUB;

	if (g == 0)
		return i;
	return (uint64_t)(STATS_HIST_SUB + s) << (g - 1);
}

uint64_t stats_hist_hi(unsigned i)
{
	unsigned g = i / STATS_HIST_SUB;

	if (g == 0)
		return i;
	return stats_hist_lo(i) + ((1ull << (g - 1)) - 1);
}

static inline void hist_add(struct stats_hist *h, uint64_t v)
{
	unsigned i = stats_hist_bucket(v);

	BUMP(h->b[i], 1);
}

uint64_t stats_hist_count(const struct stats_hist *h)
{
	uint64_t n = 0;

	for (unsigned i = 0; i < STATS_HIST_BUCKETS; i++)
		n += h->b[i];
	return n;
}

uint64_t stats_hist_quantile(const struct stats_hist *h, double q)
{
	uint64_t total = stats_hist_count(h), rank, seen = 0;

	if (total == 0)
		return 0;
	if (q < 0)
		q = 0;
	if (q > 1)
		q = 1;
	/* The rank of the sample that q of them do not exceed (1-based). */
	rank = (uint64_t)(q * (double)total + 0.999999);
	if (rank == 0)
		rank = 1;
	if (rank > total)
		rank = total;
	for (unsigned i = 0; i < STATS_HIST_BUCKETS; i++) {
		seen += h->b[i];
		if (seen >= rank) {
			uint64_t lo = stats_hist_lo(i), hi = stats_hist_hi(i);

			return lo + (hi - lo) / 2;
		}
	}
	return stats_hist_hi(STATS_HIST_BUCKETS - 1);
}

/* ---- the calling reactor's slot ----------------------------------------- */

static struct stats_slot *slot_make(struct lun_stats *s, int idx)
{
	struct stats_slot *sl = aligned_alloc(64, sizeof(*sl));

	if (!sl)
		return NULL;
	memset(sl, 0, sizeof(*sl));
	/* Release: a reader that sees the pointer sees zeroed memory. */
	__atomic_store_n(&s->slot[idx], sl, __ATOMIC_RELEASE);
	return sl;
}

/* NULL off a reactor (unit tests) or without stats; allocates once per
 * reactor and LUN, never per command. */
static inline struct stats_slot *slot_get(const struct lun *l)
{
	struct reactor *r;
	struct stats_slot *sl;

	if (!l || !l->stats)
		return NULL;
	r = reactor_self();
	if (unlikely(!r || r->index < 0 || r->index >= STATS_MAX_SLOTS))
		return NULL;
	sl = l->stats->slot[r->index];	/* only this thread stores it */
	if (likely(sl))
		return sl;
	return slot_make(l->stats, r->index);
}

/* ---- data-path hooks ----------------------------------------------------- */

void stats_task_arrive(struct lun *l, struct tcq_task *t)
{
	struct stats_slot *sl = slot_get(l);
	unsigned a;

	t->t_arrive_ns = sl ? reactor_now_ns() : 0;
	t->t_submit_ns = t->t_status_ns = 0;
	if (!sl)
		return;
	switch (t->attr) {
	case TASK_ATTR_ORDERED: a = 1; break;
	case TASK_ATTR_HEAD_OF_QUEUE: a = 2; break;
	case TASK_ATTR_ACA: a = 3; break;
	default: a = 0; break;	/* SIMPLE, untagged, reserved */
	}
	BUMP(sl->c.cmds[a], 1);
	BUMP(sl->c.cls[t->req.cmd ? t->req.cmd->access : CDB_ACCESS_NONE], 1);
}

/* The sense key of t's sense data, fixed (70h/71h) or descriptor
 * (72h/73h) format (SPC-4 4.5). */
static inline unsigned sense_key_of(const struct tcq_task *t)
{
	unsigned at = (t->sense[0] & 0x7e) == 0x72 ? 1 : 2;

	return t->sense_len > at ? t->sense[at] & 0xfu : SK_NO_SENSE;
}

void stats_task_done(struct lun *l, struct tcq_task *t)
{
	struct stats_slot *sl;
	uint64_t now, d;

	if (!t->t_arrive_ns || !(sl = slot_get(l)))
		return;
	now = reactor_now_ns();
	if (t->t_rx_ns)
		t->t_status_ns = now;
	d = now > t->t_arrive_ns ? now - t->t_arrive_ns : 0;
	BUMP(sl->c.completed, 1);
	BUMP(sl->c.lat_ns_total, d);
	hist_add(&sl->lat, d);
	if (likely(t->status == SAM_STAT_GOOD)) {
		if (!t->req.cmd)
			return;
		if (t->req.cmd->access == CDB_ACCESS_READ)
			BUMP(sl->c.read_bytes, t->data_in_len);
		else if (t->req.cmd->access == CDB_ACCESS_WRITE)
			BUMP(sl->c.write_bytes, t->req.data_out_len);
	} else if (t->status == SAM_STAT_CHECK_CONDITION) {
		BUMP(sl->c.sense[sense_key_of(t)], 1);
	}
}

void stats_ordered_enabled(struct lun *l, const struct tcq_task *t)
{
	struct stats_slot *sl;
	uint64_t now, d;

	if (!t->t_arrive_ns || !(sl = slot_get(l)))
		return;
	now = reactor_now_ns();
	d = now > t->t_arrive_ns ? now - t->t_arrive_ns : 0;
	BUMP(sl->c.ordered_enabled, 1);
	BUMP(sl->c.drain_ns_total, d);
	if (d > sl->c.drain_ns_max)
		PUT(sl->c.drain_ns_max, d);
	hist_add(&sl->drain, d);
}

void stats_path_submit(struct tcq_task *t)
{
	if (t->t_rx_ns && t->t_arrive_ns && !t->t_submit_ns)
		t->t_submit_ns = reactor_now_ns();
}

/* b - a, or 0 when a stamp is missing or out of order (a pass-granular
 * stamp can precede a precise one of the same pass). */
static inline uint64_t span(uint64_t a, uint64_t b)
{
	return a && b > a ? b - a : 0;
}

void stats_task_sent(struct tcq_task *t)
{
	struct stats_slot *sl;
	uint64_t now, io_done;

	if (!t->t_rx_ns || !t->t_status_ns || !(sl = slot_get(t->lun)))
		return;
	now = reactor_now_ns();
	BUMP(sl->c.path_samples, 1);
	BUMP(sl->c.path_ns[STATS_PATH_IN], span(t->t_rx_ns, t->t_arrive_ns));
	if (t->t_submit_ns) {
		/* The completion's pass may have begun before the submit
		 * of a backend that completes in the same pass. */
		io_done = MAX(t->exec.io.end_ns, t->t_submit_ns);
		BUMP(sl->c.path_io_samples, 1);
		BUMP(sl->c.path_ns[STATS_PATH_TO_SUBMIT],
		     span(t->t_arrive_ns, t->t_submit_ns));
		BUMP(sl->c.path_ns[STATS_PATH_BACKEND],
		     span(t->t_submit_ns, io_done));
		BUMP(sl->c.path_ns[STATS_PATH_TO_STATUS],
		     span(io_done, t->t_status_ns));
	} else {
		BUMP(sl->c.path_ns[STATS_PATH_TO_STATUS],
		     span(t->t_arrive_ns, t->t_status_ns));
	}
	BUMP(sl->c.path_ns[STATS_PATH_OUT], span(t->t_status_ns, now));
	t->t_rx_ns = 0;		/* counted once */
}

void stats_io_submit(struct lun *l, int op, bool barrier)
{
	struct stats_slot *sl = slot_get(l);

	if (!sl)
		return;
	BUMP(sl->c.ios, 1);
	if (op == BDEV_FLUSH) {
		BUMP(sl->c.flushes, 1);
		if (barrier)
			BUMP(sl->c.barrier_flushes, 1);
	}
	/* The LUN's occupancy, not this reactor's: queue_depth is the
	 * LUN's (backend/bdev_depth.c). */
	if (l->bdev)
		hist_add(&sl->occ, atomic_load_explicit(
				&l->bdev->budget.inflight, memory_order_relaxed));
}

/* ---- names --------------------------------------------------------------- */

const char *stats_attr_name(unsigned i)
{
	static const char *const n[STATS_NATTR] = {
		"simple", "ordered", "head_of_queue", "aca",
	};

	return i < STATS_NATTR ? n[i] : "?";
}

const char *stats_path_stage_name(unsigned i)
{
	static const char *const n[STATS_NPATH] = {
		[STATS_PATH_IN] = "transport_in",
		[STATS_PATH_TO_SUBMIT] = "to_submit",
		[STATS_PATH_BACKEND] = "backend",
		[STATS_PATH_TO_STATUS] = "to_status",
		[STATS_PATH_OUT] = "transport_out",
	};

	return i < STATS_NPATH ? n[i] : "?";
}

const char *stats_class_name(unsigned i)
{
	static const char *const n[STATS_NCLASS] = {
		[CDB_ACCESS_NONE] = "other",
		[CDB_ACCESS_READ] = "read",
		[CDB_ACCESS_WRITE] = "write",
	};

	return i < STATS_NCLASS ? n[i] : "?";
}

const char *stats_sense_key_name(unsigned key)
{
	static const char *const n[STATS_NSENSE] = {
		"no_sense", "recovered_error", "not_ready", "medium_error",
		"hardware_error", "illegal_request", "unit_attention",
		"data_protect", "blank_check", "vendor_specific",
		"copy_aborted", "aborted_command", "obsolete_0c",
		"volume_overflow", "miscompare", "completed",
	};

	return key < STATS_NSENSE ? n[key] : "?";
}

/* ---- readers ------------------------------------------------------------- */

static void hist_sum(struct stats_hist *dst, const struct stats_hist *src)
{
	for (unsigned i = 0; i < STATS_HIST_BUCKETS; i++)
		dst->b[i] += GET(src->b[i]);
}

void stats_snapshot(const struct lun *l, struct stats_snapshot *out)
{
	memset(out, 0, sizeof(*out));
	if (l->stats) {
		for (int i = 0; i < STATS_MAX_SLOTS; i++) {
			const struct stats_slot *sl =
				__atomic_load_n(&l->stats->slot[i],
						__ATOMIC_ACQUIRE);
			const struct stats_counters *c;

			if (!sl)
				continue;
			c = &sl->c;
			for (int a = 0; a < STATS_NATTR; a++)
				out->c.cmds[a] += GET(c->cmds[a]);
			out->c.completed += GET(c->completed);
			out->c.ios += GET(c->ios);
			out->c.flushes += GET(c->flushes);
			out->c.barrier_flushes += GET(c->barrier_flushes);
			out->c.ordered_enabled += GET(c->ordered_enabled);
			out->c.drain_ns_total += GET(c->drain_ns_total);
			out->c.drain_ns_max = MAX(out->c.drain_ns_max,
						  GET(c->drain_ns_max));
			out->c.lat_ns_total += GET(c->lat_ns_total);
			for (int k = 0; k < STATS_NCLASS; k++)
				out->c.cls[k] += GET(c->cls[k]);
			out->c.read_bytes += GET(c->read_bytes);
			out->c.write_bytes += GET(c->write_bytes);
			for (int k = 0; k < STATS_NSENSE; k++)
				out->c.sense[k] += GET(c->sense[k]);
			out->c.path_samples += GET(c->path_samples);
			out->c.path_io_samples += GET(c->path_io_samples);
			for (int k = 0; k < STATS_NPATH; k++)
				out->c.path_ns[k] += GET(c->path_ns[k]);
			hist_sum(&out->lat, &sl->lat);
			hist_sum(&out->occ, &sl->occ);
			hist_sum(&out->drain, &sl->drain);
		}
	}
	if (l->bdev) {
		uint32_t now, peak;

		bdev_depth_counts(l->bdev, &now, &peak);
		out->inflight = now;
		out->peak_inflight = peak;
	}
}

void stats_reset_local(struct lun *l)
{
	struct lun_stats *s = l->stats;
	struct reactor *r = reactor_self();
	struct stats_slot *sl;
	uint64_t *w;

	/* LUN-wide, so any reactor's reset does it (each does: harmless). */
	if (l->bdev)
		bdev_peak_reset(l->bdev);
	if (!s || !r || r->index < 0 || r->index >= STATS_MAX_SLOTS)
		return;
	sl = s->slot[r->index];
	if (!sl)
		return;
	/* Word by word: a reader summing meanwhile never sees torn values. */
	w = (uint64_t *)sl;
	for (size_t i = 0; i < sizeof(*sl) / sizeof(*w); i++)
		PUT(w[i], 0);
}
