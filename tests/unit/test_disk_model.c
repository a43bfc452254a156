/*
 * The device models of the disk backend (backend/disk_model.c) against
 * arithmetic on their parameters, driven with a virtual clock (no
 * reactor, no sleeping: each check runs in milliseconds): the seek curve
 * through its three points, the mean random-read service time at depth 1,
 * the media rate from sectors per track and rpm, what a queue buys with
 * sptf and does not with fifo, the aging bound, read-ahead hits, the
 * write cache, FUA and flushes, and the flash model's scaling with depth.
 * The backend around the model (backend/disk.c) is tested in
 * test_disk_backend.c.
 *
 * Expected values come from the parameters (overhead, seeks, rpm, sectors
 * per track, page times), never from a run of the model.
 */
#include <check.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "backend/bdev.h"
#include "backend/disk_model.h"
#include "tcq/reactor.h"
#include "tests/unit/harness.h"

#define MS 1000000ull
#define US 1000ull

static char err[256];

/* A 7200 rpm SATA drive of 2006 (the earlier hdd preset, Barracuda
 * 7200.10 class; backend/disk.c's is now the Deskstar 7K500, checked in
 * test_disk_model_defects.c): the arithmetic below is written for these
 * numbers. No head switch, so a track's media rate is its sustained one. */
static struct dm_params hdd(void)
{
	struct dm_params p = {
		.kind = DM_HDD, .seed = 1, .overhead_ns = 200 * US,
		.iface_bps = 300000000, .capacity = 500107862016ull,
		.rpm = 7200, .heads = 6, .zones = 16, .spt_outer = 1170,
		.spt_inner = 600, .track_seek_ns = 800 * US,
		.avg_seek_ns = 8500 * US, .full_seek_ns = 17 * MS, .ncq = 32,
		.sched = DM_SPTF, .aging_ns = 500 * MS, .readahead = false,
		.segments = 16, .segment_size = 1 << 20, .wcache = false,
		.hit_overhead_ns = 200 * US, .destage_idle_ns = 10 * MS,
		.destage_pct = 50,
	};
	return p;
}

/* The ssd preset's numbers (backend/disk.c, Micron P320h). */
static struct dm_params ssd(void)
{
	struct dm_params p = {
		.kind = DM_SSD, .seed = 1, .overhead_ns = 10 * US,
		.iface_bps = 3200000000, .capacity = 350000000000ull,
		.channels = 32, .dies = 8, .read_ns = 25 * US,
		.program_ns = 200 * US, .channel_bps = 200000000,
		.queue = 256, .ctrl_iops = 785000,
	};
	return p;
}

static uint64_t rng_state;

static uint64_t rnd(void)
{
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* A 4 KiB-aligned sector in [0, span) sectors. */
static uint64_t rnd_lba(uint64_t span)
{
	return (rnd() % (span / 8)) * 8;
}

struct run {
	uint64_t n;		/* completed */
	uint64_t end;		/* last completion */
	double sum_service;	/* done - start */
	double sum_latency;	/* done - arrive */
	uint64_t max_wait;	/* start - enter */
};

/*
 * A closed loop of depth commands of 4 KiB (reads unless write), each
 * replaced by a new one when it completes (no think time), until total
 * completed; LBAs from next_lba. Returns what it measured.
 */
static struct run closed_loop_d(struct disk_model *m, unsigned depth,
				unsigned total, int op, bool drain,
				uint64_t (*next_lba)(void *), void *arg)
{
	struct dm_req *reqs = calloc(depth, sizeof(*reqs));
	struct list_node done;
	struct run r = { 0 };
	unsigned issued = 0;

	ck_assert_ptr_nonnull(reqs);
	list_init(&done);
	for (unsigned i = 0; i < depth; i++, issued++) {
		reqs[i].op = op;
		reqs[i].lba = next_lba(arg);
		reqs[i].nsect = 8;
		dm_submit(m, &reqs[i], 0, &done);
	}
	while (r.n < total) {
		if (list_empty(&done)) {
			uint64_t t = dm_next(m);

			ck_assert_msg(t != DM_NONE, "the model stalled");
			dm_advance(m, t, &done);
		}
		while (!list_empty(&done)) {
			struct dm_req *q = list_first_entry(&done,
							    struct dm_req,
							    node);

			list_del(&q->node);
			r.n++;
			r.end = q->done;
			r.sum_service += (double)(q->done - q->start);
			r.sum_latency += (double)(q->done - q->arrive);
			if (q->start - q->enter > r.max_wait)
				r.max_wait = q->start - q->enter;
			if (!drain || issued < total) {
				issued++;
				q->lba = next_lba(arg);
				dm_submit(m, q, q->done, &done);
			}
		}
	}
	free(reqs);
	return r;
}

/* Without draining: the queue stays full to the end. */
static struct run closed_loop(struct disk_model *m, unsigned depth,
			      unsigned total, int op,
			      uint64_t (*next_lba)(void *), void *arg)
{
	return closed_loop_d(m, depth, total, op, false, next_lba, arg);
}

static uint64_t uniform_lba(void *arg)
{
	return rnd_lba(*(uint64_t *)arg);
}

static double iops(struct disk_model *m, unsigned depth, unsigned total)
{
	uint64_t span = m->p.capacity / DM_SECTOR;
	struct run r = closed_loop(m, depth, total, DM_READ, uniform_lba,
				   &span);

	return (double)r.n * 1e9 / (double)r.end;
}

static void init(struct disk_model *m, const struct dm_params *p)
{
	ck_assert_msg(dm_init(m, p, err, sizeof(err)) == 0, "%s", err);
	rng_state = 42;
}

/* ---- the seek curve --------------------------------------------------- */

START_TEST(seek_curve_points)
{
	struct dm_params p = hdd();
	struct disk_model m;
	uint64_t prev = 0;

	init(&m, &p);
	ck_assert_uint_eq(dm_seek_ns(&m, 0), 0);
	ck_assert_uint_eq(dm_seek_ns(&m, 1), p.track_seek_ns);
	ck_assert_uint_eq(dm_seek_ns(&m, m.cylinders - 1), p.full_seek_ns);
	for (uint32_t d = 1; d < m.cylinders; d += 97) {
		uint64_t s = dm_seek_ns(&m, d);

		ck_assert_uint_ge(s, prev);
		prev = s;
	}
	/* the fitted x0 makes the mean over pairs of tracks (cylinders
	 * drawn uniformly) the data sheet's avg, as vendors define it */
	{
		double sum = 0;

		for (int i = 0; i < 200000; i++) {
			uint32_t a = (uint32_t)(rnd() % m.cylinders);
			uint32_t b = (uint32_t)(rnd() % m.cylinders);

			sum += (double)dm_seek_ns(&m, a > b ? a - b : b - a);
		}
		sum /= 200000;
		ck_assert_msg(fabs(sum - (double)p.avg_seek_ns) <
			      0.01 * (double)p.avg_seek_ns,
			      "mean seek %.0f ns, avg_seek %llu", sum,
			      (unsigned long long)p.avg_seek_ns);
	}
	dm_fini(&m);
}
END_TEST

/* ---- depth 1 ------------------------------------------------------------ */

/* Mean service of 4K random reads at depth 1 = overhead + avg_seek + half
 * a revolution + the transfer (8 sectors of a track of spt_inner at most),
 * within 5%. */
static void qd1_mean(struct dm_params p)
{
	struct disk_model m;
	uint64_t span;
	double rot = 60e9 / p.rpm, want, got;
	struct run r;

	init(&m, &p);
	span = p.capacity / DM_SECTOR;
	r = closed_loop(&m, 1, 5000, DM_READ, uniform_lba, &span);
	want = (double)p.overhead_ns + (double)p.avg_seek_ns + rot / 2 +
	       8.0 / p.spt_inner * rot;
	got = r.sum_service / (double)r.n;
	ck_assert_msg(fabs(got - want) <= 0.05 * want,
		      "mean service %.3f ms, arithmetic %.3f ms", got / 1e6,
		      want / 1e6);
	dm_fini(&m);
}

START_TEST(hdd_qd1_random_read_mean)
{
	struct dm_params p = hdd();

	qd1_mean(p);
	p.sched = DM_FIFO;
	qd1_mean(p);
}
END_TEST

START_TEST(hdd15k_qd1_random_read_mean)
{
	struct dm_params p = hdd();

	/* the hdd-15k preset: Cheetah 15K.5 class */
	p.capacity = 300000000000ull;
	p.rpm = 15000;
	p.heads = 8;
	p.spt_outer = 977;
	p.spt_inner = 570;
	p.track_seek_ns = 200 * US;
	p.avg_seek_ns = 3500 * US;
	p.full_seek_ns = 7 * MS;
	p.overhead_ns = 100 * US;
	qd1_mean(p);
}
END_TEST

/* A long read from the head's own cylinder transfers at spt * 512 *
 * rpm / 60 bytes/s: its service is overhead + at most one revolution of
 * latency + n / spt revolutions. */
START_TEST(hdd_sequential_media_rate)
{
	struct dm_params p = hdd();
	struct disk_model m;
	struct list_node done;
	struct dm_req r = { .op = DM_READ, .lba = 0 };
	double rot = 60e9 / p.rpm, rate, xfer;

	p.zones = 1;
	p.spt_outer = p.spt_inner = 1000;
	init(&m, &p);
	rate = 1000.0 * 512 * 7200 / 60;	/* 61.44 MB/s */
	ck_assert(fabs(dm_media_rate(&m, 12345) - rate) < 1e-6);
	r.nsect = 100 * 1000;			/* 100 tracks */
	list_init(&done);
	dm_submit(&m, &r, 0, &done);
	dm_advance(&m, dm_next(&m), &done);
	ck_assert(!list_empty(&done));
	xfer = (double)(r.done - r.start - p.overhead_ns);
	ck_assert_msg(xfer >= 100 * rot - 1 && xfer <= 101 * rot + 1,
		      "100 tracks in %.3f ms, a revolution %.3f ms", xfer / 1e6,
		      rot / 1e6);
	ck_assert_msg(r.nsect * 512.0 * 1e9 / xfer >= rate * 100 / 101 - 1,
		      "media rate %.0f B/s", r.nsect * 512.0 * 1e9 / xfer);
	dm_fini(&m);

	/* zones: spt linear from outer to inner, the rate follows */
	p.zones = 3;
	p.spt_outer = 1000;
	p.spt_inner = 500;
	init(&m, &p);
	ck_assert_uint_eq(m.zone[1].spt, 750);
	ck_assert(fabs(dm_media_rate(&m, m.zone[1].first_lba) -
		       750.0 * 512 * 7200 / 60) < 1e-6);
	ck_assert(fabs(dm_media_rate(&m, m.zone[2].first_lba + 7) -
		       500.0 * 512 * 7200 / 60) < 1e-6);
	dm_fini(&m);
}
END_TEST

/* ---- queues ----------------------------------------------------------- */

START_TEST(sptf_depth32_beats_fifo)
{
	struct dm_params p = hdd();
	struct disk_model m;
	double fifo, sptf;

	p.sched = DM_FIFO;
	init(&m, &p);
	fifo = iops(&m, 32, 4000);
	dm_fini(&m);
	p.sched = DM_SPTF;
	init(&m, &p);
	sptf = iops(&m, 32, 4000);
	dm_fini(&m);
	ck_assert_msg(sptf >= 1.25 * fifo, "sptf %.1f IOPS, fifo %.1f IOPS",
		      sptf, fifo);
}
END_TEST

START_TEST(fifo_depth32_no_better_than_depth1)
{
	struct dm_params p = hdd();
	struct disk_model m;
	double qd1, qd32, rot = 60e9 / p.rpm;

	p.sched = DM_FIFO;
	init(&m, &p);
	qd1 = iops(&m, 1, 3000);
	dm_fini(&m);
	init(&m, &p);
	qd32 = iops(&m, 32, 3000);
	dm_fini(&m);
	ck_assert_msg(qd32 <= 1.15 * qd1, "fifo depth 32 %.1f IOPS, depth 1 "
		      "%.1f IOPS", qd32, qd1);
	/* and both near 1 / (overhead + avg_seek + rot/2) */
	ck_assert(fabs(qd1 - 1e9 / (200e3 + 8.5e6 + rot / 2)) < 0.06 * qd1);
}
END_TEST

/* The queue statistics: a closed loop of 32 keeps 32 at the drive (ncq
 * 32); with ncq 8, 8 at the drive and 24 in the host queue. */
START_TEST(stats_queue_lengths)
{
	struct dm_params p = hdd();
	struct disk_model m;
	struct dm_stats st;

	init(&m, &p);
	iops(&m, 32, 2000);
	dm_get_stats(&m, m.now, &st);
	ck_assert_msg(fabs(st.mean_drive_queue - 32) < 0.1, "%f",
		      st.mean_drive_queue);
	ck_assert(st.mean_host_queue < 0.1);
	/* whole commands: each one is a command */
	ck_assert(fabs(st.mean_commands - st.mean_drive_queue -
		       st.mean_host_queue) < 1e-9);
	ck_assert_uint_eq(st.commands, 2000);
	ck_assert(st.busy_fraction > 0.99);
	dm_fini(&m);
	p.ncq = 8;
	init(&m, &p);
	iops(&m, 32, 2000);
	dm_get_stats(&m, m.now, &st);
	ck_assert_msg(fabs(st.mean_drive_queue - 8) < 0.1, "%f",
		      st.mean_drive_queue);
	ck_assert_msg(fabs(st.mean_host_queue - 24) < 0.1, "%f",
		      st.mean_host_queue);
	dm_fini(&m);
}
END_TEST

/* Two pieces of one command (a cut READ's, sharing cmd) and nothing else:
 * from their arrival to the second one's completion exactly one command
 * is in the model, while the pieces' own average is 1 + T1 / T2 (both
 * queued until the first completes at T1). The same two as whole
 * commands count as two each while both are in. */
static void two_pieces(struct disk_model *m, const void *cmd,
		       struct dm_stats *st, uint64_t *t1, uint64_t *t2)
{
	struct dm_req r[2];
	struct list_node done;
	unsigned n = 0;

	memset(r, 0, sizeof(r));
	list_init(&done);
	for (unsigned i = 0; i < 2; i++) {
		r[i].op = DM_READ;
		r[i].lba = 1000000 + 128 * i;	/* 64 KiB each, adjacent */
		r[i].nsect = 128;
		r[i].cmd = cmd;
		dm_submit(m, &r[i], 0, &done);
	}
	while (n < 2) {
		if (list_empty(&done)) {
			ck_assert(dm_next(m) != DM_NONE);
			dm_advance(m, dm_next(m), &done);
			continue;
		}
		struct dm_req *q = list_first_entry(&done, struct dm_req, node);

		list_del(&q->node);
		*(n++ ? t2 : t1) = q->done;
	}
	dm_get_stats(m, *t2, st);
}

START_TEST(stats_pieces_count_once)
{
	struct dm_params p = hdd();
	struct disk_model m;
	struct dm_stats st;
	uint64_t t1, t2;
	int cmd;
	double pieces;

	init(&m, &p);
	two_pieces(&m, &cmd, &st, &t1, &t2);
	pieces = st.mean_drive_queue + st.mean_host_queue;
	ck_assert_msg(t1 > 0 && t2 > t1, "%llu %llu", (unsigned long long)t1,
		      (unsigned long long)t2);
	ck_assert_msg(fabs(st.mean_commands - 1.0) < 1e-9, "%f",
		      st.mean_commands);
	ck_assert_msg(fabs(pieces - (1.0 + (double)t1 / (double)t2)) < 1e-9,
		      "%f", pieces);
	dm_fini(&m);
	init(&m, &p);
	two_pieces(&m, NULL, &st, &t1, &t2);
	ck_assert_msg(fabs(st.mean_commands - (1.0 + (double)t1 / (double)t2))
		      < 1e-9, "%f", st.mean_commands);
	dm_fini(&m);
}
END_TEST

/* Aging: a far request among a stream of near ones. The stream (first
 * MiB) always positions faster, so pure sptf leaves the far one until the
 * stream ends; with aging it starts within aging + ncq services (each at
 * most overhead + full_seek + a revolution + the transfer). */
struct aging_gen {
	int calls;
	uint64_t far;
};

static uint64_t near_then_far(void *arg)
{
	struct aging_gen *g = arg;

	if (g->calls++ == 1)
		return g->far;
	return rnd_lba(2048);
}

static uint64_t aging_far_wait(uint64_t aging, uint64_t *bound)
{
	struct dm_params p = hdd();
	struct aging_gen g = { 0 };
	struct disk_model m;
	struct run r;
	double rot = 60e9 / p.rpm;

	p.ncq = 4;
	p.aging_ns = aging;
	init(&m, &p);
	g.far = p.capacity / DM_SECTOR - 64;
	*bound = aging + p.ncq * (p.overhead_ns + p.full_seek_ns +
				  (uint64_t)rot + (uint64_t)(8 * rot / 600));
	r = closed_loop_d(&m, 4, 3000, DM_READ, true, near_then_far, &g);
	dm_fini(&m);
	return r.max_wait;
}

START_TEST(sptf_aging_bound)
{
	uint64_t bound, w;

	w = aging_far_wait(100 * MS, &bound);
	ck_assert_msg(w <= bound, "waited %llu ns, bound %llu ns",
		      (unsigned long long)w, (unsigned long long)bound);
	/* without aging the far request starves far past that bound */
	w = aging_far_wait(0, &bound);
	ck_assert_msg(w > 2 * bound, "without aging waited only %llu ns",
		      (unsigned long long)w);
}
END_TEST

/* ---- caches ------------------------------------------------------------ */

/* A read, then after 10 ms the next 4K: read-ahead holds it, so it costs
 * overhead + the interface transfer, no seek, no rotation. */
START_TEST(cache_hit_costs_no_seek)
{
	struct dm_params p = hdd();
	struct disk_model m;
	struct list_node done;
	struct dm_req a = { .op = DM_READ, .lba = 123456 * 8, .nsect = 8 };
	struct dm_req b = { .op = DM_READ, .lba = 123456 * 8 + 8, .nsect = 8 };
	struct dm_req c = { .op = DM_READ, .lba = 7 * 8, .nsect = 8 };
	uint64_t t;

	p.readahead = true;
	init(&m, &p);
	list_init(&done);
	dm_submit(&m, &a, 0, &done);
	dm_advance(&m, dm_next(&m), &done);
	ck_assert(a.media && !a.hit);
	t = a.done + 10 * MS;
	dm_submit(&m, &b, t, &done);
	dm_advance(&m, dm_next(&m), &done);
	ck_assert(b.hit && !b.media);
	/* 8 sectors at 300 MB/s: 13653 ns */
	ck_assert_uint_eq(b.done - b.start,
			  p.overhead_ns + (uint64_t)llround(8 * 512 * 1e9 / 3e8));
	ck_assert_uint_lt(b.done - b.start, p.track_seek_ns);
	/* a read elsewhere misses and pays at least a seek */
	dm_submit(&m, &c, b.done, &done);
	dm_advance(&m, dm_next(&m), &done);
	ck_assert(c.media && !c.hit);
	ck_assert_uint_ge(c.done - c.start, p.overhead_ns + p.track_seek_ns);
	dm_fini(&m);
}
END_TEST

/* With read-ahead a sequential stream at depth 1 runs at the media rate;
 * without it every 64K read waits most of a revolution. */
static uint64_t seq_next;

static uint64_t sequential(void *arg)
{
	uint64_t l = seq_next;

	seq_next += 128;
	return l;
}

START_TEST(readahead_streams_at_media_rate)
{
	struct dm_params p = hdd();
	struct disk_model m;
	struct dm_req *q;
	double rate = 1170.0 * 512 * 7200 / 60, got;
	struct list_node done;
	uint64_t t = 0;
	int n = 2000;

	for (int ra = 0; ra < 2; ra++) {
		p.readahead = ra;
		init(&m, &p);
		seq_next = 0;
		list_init(&done);
		q = calloc(1, sizeof(*q));
		t = 0;
		for (int i = 0; i < n; i++) {
			q->op = DM_READ;
			q->lba = sequential(NULL);
			q->nsect = 128;
			dm_submit(&m, q, t, &done);
			dm_advance(&m, dm_next(&m), &done);
			ck_assert(!list_empty(&done));
			list_del(&q->node);
			t = q->done;
		}
		got = (double)n * 128 * 512 * 1e9 / (double)t;
		if (ra)
			ck_assert_msg(got >= 0.9 * rate, "read-ahead: %.1f MB/s, "
				      "media %.1f MB/s", got / 1e6, rate / 1e6);
		else	/* one revolution lost per command, at least half */
			ck_assert_msg(got <= 0.6 * rate, "no read-ahead: %.1f "
				      "MB/s", got / 1e6);
		free(q);
		dm_fini(&m);
	}
}
END_TEST

/* A sequential stream eight deep at a drive ordering by sptf: the next
 * command is the read-ahead's, so the queue streams at the media rate
 * as depth 1 does; ranking the queue by positioning alone (without the
 * transfer) picked the command after it, stopped the prefetch and lost
 * about a third. */
START_TEST(sptf_keeps_a_queued_stream_at_media_rate)
{
	struct dm_params p = hdd();
	struct disk_model m;
	double rate = 1170.0 * 512 * 7200 / 60, got;
	struct dm_req q[8];
	struct list_node done;
	uint64_t n = 0, end = 0;

	p.readahead = true;
	init(&m, &p);
	seq_next = 0;
	list_init(&done);
	for (int i = 0; i < 8; i++) {
		q[i] = (struct dm_req){ .op = DM_READ, .nsect = 128,
					.lba = sequential(NULL) };
		dm_submit(&m, &q[i], 0, &done);
	}
	while (n < 2000) {
		if (list_empty(&done))
			dm_advance(&m, dm_next(&m), &done);
		while (!list_empty(&done)) {
			struct dm_req *r = list_first_entry(&done,
							    struct dm_req,
							    node);

			list_del(&r->node);
			n++;
			end = r->done;
			r->lba = sequential(NULL);
			dm_submit(&m, r, r->done, &done);
		}
	}
	got = (double)n * 128 * 512 * 1e9 / (double)end;
	ck_assert_msg(got >= 0.9 * rate, "depth 8: %.1f MB/s, media %.1f MB/s",
		      got / 1e6, rate / 1e6);
	dm_fini(&m);
}
END_TEST

/* Write cache on: a write completes at cache speed; a FUA write pays the
 * media (overhead + positioning + transfer, at least a transfer), and a
 * FLUSH destages what is dirty. Write cache off: every write is media. */
START_TEST(fua_writes_cost_media)
{
	struct dm_params p = hdd();
	struct disk_model m;
	struct list_node done;
	struct dm_req w[4] = { { 0 } }, fl = { .op = DM_FLUSH };
	double rot = 60e9 / p.rpm;
	uint64_t pos, t, cache_ns = (uint64_t)llround(8 * 512 * 1e9 / 3e8);
	struct dm_stats st;

	p.wcache = true;
	init(&m, &p);
	list_init(&done);
	/* FUA first, on an idle drive with nothing dirty */
	w[0] = (struct dm_req){ .op = DM_WRITE, .fua = true,
				.lba = 5000000 * 8, .nsect = 8 };
	pos = dm_position_ns(&m, p.overhead_ns, w[0].lba);
	dm_submit(&m, &w[0], 0, &done);
	dm_advance(&m, dm_next(&m), &done);
	ck_assert(w[0].media && !w[0].hit);
	ck_assert_uint_ge(w[0].done - w[0].start,
			  p.overhead_ns + (uint64_t)(8 / 1170.0 * rot));
	ck_assert(llabs((long long)(w[0].done - w[0].start) -
			(long long)(p.overhead_ns + pos +
				    8 / 1170.0 * rot)) <= (long long)(8 / 600.0 * rot));
	/* cached: overhead + interface time, exactly */
	t = w[0].done;
	for (int i = 1; i < 4; i++) {
		w[i] = (struct dm_req){ .op = DM_WRITE,
					.lba = (uint64_t)i * 10000000 * 8,
					.nsect = 8 };
		dm_submit(&m, &w[i], t, &done);
		dm_advance(&m, w[i].start + p.overhead_ns + cache_ns, &done);
		ck_assert(w[i].hit && !w[i].media);
		ck_assert_uint_eq(w[i].done - w[i].start,
				  p.overhead_ns + cache_ns);
		t = w[i].done;
	}
	/* the flush destages the three (each at least a transfer) */
	dm_submit(&m, &fl, t, &done);
	while (!fl.done)
		dm_advance(&m, dm_next(&m), &done);
	ck_assert(fl.media);
	ck_assert_uint_ge(fl.done - fl.start,
			  p.overhead_ns + 3 * (uint64_t)(8 / 1170.0 * rot));
	dm_get_stats(&m, fl.done, &st);
	ck_assert_uint_eq(st.destages, 3);
	ck_assert_uint_eq(st.cached_writes, 3);
	dm_fini(&m);

	p.wcache = false;
	init(&m, &p);
	list_init(&done);
	w[1].fua = false;
	dm_submit(&m, &w[1], 0, &done);
	dm_advance(&m, dm_next(&m), &done);
	ck_assert(w[1].media && !w[1].hit);
	dm_fini(&m);
}
END_TEST

/* ---- flash -------------------------------------------------------------- */

/* 4K random reads. Depth 32 cannot beat 32 commands each taking at least
 * overhead + read + one page on the channel + the interface; depth 256
 * reaches the card's ceiling, the interface's 3.2 GB/s / 4096 = 781K
 * IOPS (the controller's 785K is just above), within 3%. Without the
 * ceilings (ctrl_iops 0, a fast interface) the dies' and channels'
 * parallelism gives depth 256 at least twice the IOPS of depth 32. */
START_TEST(ssd_depth_256_doubles_depth_32)
{
	struct dm_params p = ssd();
	struct disk_model m;
	double tx = 4096 / 200e6 * 1e9;		/* 20480 ns */
	double ifc = 4096 / 3.2e9 * 1e9;	/* 1280 ns */
	double q32, q256, max32, max256;
	struct dm_stats st;

	init(&m, &p);
	q32 = iops(&m, 32, 20000);
	dm_fini(&m);
	init(&m, &p);
	q256 = iops(&m, 256, 40000);
	dm_fini(&m);
	max32 = 32e9 / (10e3 + 25e3 + tx + ifc);
	max256 = 3.2e9 / 4096;
	ck_assert_msg(q32 <= max32 * 1.001, "%.0f > %.0f", q32, max32);
	ck_assert_msg(q256 <= max256 * 1.001 && q256 >= 0.97 * max256,
		      "depth 256 %.0f IOPS, the interface's ceiling %.0f",
		      q256, max256);

	p.ctrl_iops = 0;
	p.iface_bps = 100000000000ull;
	p.queue = 1024;
	init(&m, &p);
	q32 = iops(&m, 32, 20000);
	dm_fini(&m);
	init(&m, &p);
	q256 = iops(&m, 256, 40000);
	dm_get_stats(&m, m.now, &st);
	dm_fini(&m);
	max256 = fmin(32e9 / tx, 256e9 / (25e3 + tx));
	ck_assert_msg(q256 <= max256 * 1.001, "%.0f > %.0f", q256, max256);
	ck_assert_msg(q256 >= 2 * q32, "depth 256 %.0f IOPS, depth 32 %.0f",
		      q256, q32);
	ck_assert(st.mean_busy_dies > 32);	/* more than depth 32 could */
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("disk_model");
	TCase *tc = tcase_create("hdd");

	tcase_set_timeout(tc, 60);
	harness_add(tc, seek_curve_points);
	harness_add(tc, hdd_qd1_random_read_mean);
	harness_add(tc, hdd15k_qd1_random_read_mean);
	harness_add(tc, hdd_sequential_media_rate);
	harness_add(tc, sptf_depth32_beats_fifo);
	harness_add(tc, fifo_depth32_no_better_than_depth1);
	harness_add(tc, stats_queue_lengths);
	harness_add(tc, sptf_aging_bound);
	harness_add(tc, cache_hit_costs_no_seek);
	harness_add(tc, readahead_streams_at_media_rate);
	harness_add(tc, sptf_keeps_a_queued_stream_at_media_rate);
	harness_add(tc, fua_writes_cost_media);
	harness_add(tc, stats_pieces_count_once);
	suite_add_tcase(s, tc);
	tc = tcase_create("ssd");
	tcase_set_timeout(tc, 60);
	harness_add(tc, ssd_depth_256_doubles_depth_32);
	suite_add_tcase(s, tc);
	return s;
}

int main(int argc, char **argv)
{
	return harness_main(argc, argv, suite);
}
