/*
 * The disk model's defects of issue 30, each against the arithmetic of a
 * drive's specification on a virtual clock (backend/disk_model*.c):
 *  (a) read-ahead resumes when a reader drains a full segment;
 *  (b) a cache hit pays the hit overhead, a miss the miss overhead, and
 *      no transfer beats the interface rate;
 *  (c) a transfer that continues the last one streams (no revolution
 *      lost to rounding);
 *  (d) crossing to the next track costs the head switch, and the
 *      Deskstar 7K500's sustained rate follows from it;
 *  (e) the seek curve's mean over pairs of tracks is avg_seek;
 *  (f) adjacent dirty writes are destaged as one, the triggers are the
 *      parameters';
 *  (g) a write into a segment being prefetched leaves the head where the
 *      prefetch took it;
 *  (h) flash: a page of an idle die does not wait for the channel behind
 *      one a busy die sends later; the P320h's controller stage.
 * Expected values come from the parameters (rpm, sectors per track,
 * rates, seek figures), never from a run of the model.
 */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "backend/disk_model.h"
#include "tests/unit/harness.h"

#define US 1000ull
#define MS 1000000ull

static char err[256];

/* The hdd preset (backend/disk.c): Hitachi Deskstar 7K500. */
static struct dm_params deskstar(void)
{
	struct dm_params p = {
		.kind = DM_HDD, .seed = 1, .overhead_ns = 230 * US,
		.iface_bps = 300000000, .capacity = 500107862016ull,
		.rpm = 7200, .heads = 10, .zones = 30, .spt_outer = 1242,
		.spt_inner = 594, .track_seek_ns = 1000 * US,
		.avg_seek_ns = 8500 * US, .full_seek_ns = 17 * MS, .ncq = 32,
		.sched = DM_SPTF, .aging_ns = 500 * MS, .readahead = false,
		.segments = 16, .segment_size = 1 << 20, .wcache = false,
		.hit_overhead_ns = 100 * US, .head_switch_ns = 1480 * US,
		.destage_idle_ns = 10 * MS, .destage_pct = 50,
	};
	return p;
}

/* One zone of 1000 sectors a track, one head: track k is cylinder k. */
static struct dm_params plain(void)
{
	struct dm_params p = deskstar();

	p.zones = 1;
	p.heads = 1;
	p.spt_outer = p.spt_inner = 1000;
	p.head_switch_ns = 0;
	return p;
}

static void init(struct disk_model *m, const struct dm_params *p)
{
	ck_assert_msg(dm_init(m, p, err, sizeof(err)) == 0, "%s", err);
}

/* Submits r at t and runs the model until it is done. */
static void run1(struct disk_model *m, struct dm_req *r, uint64_t t)
{
	struct list_node done;

	list_init(&done);
	dm_submit(m, r, t, &done);
	while (list_empty(&done)) {
		uint64_t n = dm_next(m);

		ck_assert_msg(n != DM_NONE, "the model stalled");
		dm_advance(m, n, &done);
	}
	list_del(&r->node);
}

static uint64_t iface_ns(const struct dm_params *p, uint32_t n)
{
	return (uint64_t)llround(n * 512.0 * 1e9 / (double)p->iface_bps);
}

static uint64_t rot_ns(const struct dm_params *p)
{
	return (uint64_t)llround(60e9 / p->rpm);
}

/* (a) 64K reads, each 50 ms after the last: the segment (1 MiB) fills
 * between reads, and the reader drains it. Every read after the first
 * must be a hit costing hit_overhead + the interface transfer; a
 * read-ahead that never resumed missed once the stream passed 1 MiB. */
START_TEST(readahead_resumes_when_drained)
{
	struct dm_params p = plain();
	struct disk_model m;
	struct dm_req r = { .op = DM_READ, .nsect = 128 };
	uint64_t t = 0;

	p.readahead = true;
	init(&m, &p);
	for (int i = 0; i < 100; i++) {
		r.lba = 5000000 + (uint64_t)i * 128;
		run1(&m, &r, t);
		if (i) {
			ck_assert_msg(r.hit && !r.media, "read %d missed", i);
			ck_assert_uint_eq(r.done - r.start,
					  p.hit_overhead_ns + iface_ns(&p, 128));
		}
		t = r.done + 50 * MS;
	}
	dm_fini(&m);
}
END_TEST

/* (b) A miss costs overhead + positioning + n / spt revolutions; a hit
 * and a cached write hit_overhead + n * 512 / iface; with an interface
 * slower than the media, a media read takes the interface's time. */
START_TEST(hit_and_miss_overheads_and_iface)
{
	struct dm_params p = plain();
	struct disk_model m;
	struct dm_req a = { .op = DM_READ, .lba = 3000000, .nsect = 8 };
	struct dm_req b = { .op = DM_READ, .lba = 3000008, .nsect = 8 };
	struct dm_req w = { .op = DM_WRITE, .lba = 9000000, .nsect = 8 };
	uint64_t pos, xfer = (uint64_t)llround(8.0 * rot_ns(&p) / 1000);

	p.readahead = p.wcache = true;
	init(&m, &p);
	pos = dm_position_ns(&m, p.overhead_ns, a.lba);
	run1(&m, &a, 0);
	ck_assert(a.media);
	ck_assert_uint_eq(a.done - a.start, p.overhead_ns + pos + xfer);
	run1(&m, &b, a.done + 10 * MS);
	ck_assert(b.hit);
	ck_assert_uint_eq(b.done - b.start,
			  p.hit_overhead_ns + iface_ns(&p, 8));
	run1(&m, &w, b.done);
	ck_assert(w.hit && !w.media);
	ck_assert_uint_eq(w.done - w.start,
			  p.hit_overhead_ns + iface_ns(&p, 8));
	dm_fini(&m);

	/* 10 MB/s: 64 KiB take 6.5536 ms over the wire, 0.87 ms at the head */
	p = plain();
	p.iface_bps = 10000000;
	init(&m, &p);
	a.nsect = 128;
	pos = dm_position_ns(&m, p.overhead_ns, a.lba);
	run1(&m, &a, 0);
	ck_assert_uint_eq(a.done - a.start, p.overhead_ns + pos + 6553600);
	dm_fini(&m);
}
END_TEST

/* (c) and (d): after a media read of [l, l+n), the next sector is under
 * the head at once when it is on the same track, and after exactly one
 * head switch when it starts the next track (the layout's skew). 3000
 * reads of random places and lengths, at random times. */
START_TEST(back_to_back_transfers_stream)
{
	struct dm_params p = deskstar();
	struct disk_model m;
	struct dm_req r = { .op = DM_READ };
	uint64_t t = 0, x = 12345;
	uint32_t spt;

	init(&m, &p);
	for (int i = 0; i < 3000; i++) {
		uint64_t nx, pos, l;

		x = x * 6364136223846793005ull + 1442695040888963407ull;
		r.lba = (x >> 20) % (p.capacity / 512 - 4096);
		r.nsect = 1 + (uint32_t)((x >> 8) % 1024);
		run1(&m, &r, t);
		nx = r.lba + r.nsect;
		pos = dm_position_ns(&m, r.done, nx);
		dm_cyl(&m, nx, &spt);
		l = nx - m.zone[0].first_lba;	/* zone starts are track starts */
		for (uint32_t z = 1; z < p.zones; z++)
			if (m.zone[z].first_lba <= nx)
				l = nx - m.zone[z].first_lba;
		if (l % spt == 0 && dm_cyl(&m, nx, NULL) ==
				    dm_cyl(&m, nx - 1, NULL))
			ck_assert_msg(llabs((long long)pos -
					    (long long)p.head_switch_ns) <= 2,
				      "read %d: %llu ns to the next track", i,
				      (unsigned long long)pos);
		else if (l % spt != 0)
			ck_assert_msg(pos <= 2, "read %d (%llu+%u): %llu ns to "
				      "the next sector", i,
				      (unsigned long long)r.lba, r.nsect,
				      (unsigned long long)pos);
		t = r.done + (x >> 40) % (20 * MS);
	}
	dm_fini(&m);
}
END_TEST

/* (d) A read of 10 whole tracks from a track start: 10 revolutions + 9
 * head switches. Whole cylinders of zone 0 stream at the sustained rate
 * of the 7K500's table 10, 512 * 1242 * 10 / (10 * (T + 1.48 ms)) =
 * 64.8 MB/s. */
START_TEST(head_switch_costs_and_sustained_rate)
{
	struct dm_params p = deskstar();
	struct disk_model m;
	struct dm_req r = { .op = DM_READ, .lba = 1242 * 100 };
	uint64_t pos, rot = rot_ns(&p);
	double rate;

	init(&m, &p);
	r.nsect = 1242 * 10;
	pos = dm_position_ns(&m, p.overhead_ns, r.lba);
	run1(&m, &r, 0);
	ck_assert_uint_eq(r.done - r.start - p.overhead_ns - pos,
			  10 * rot + 9 * p.head_switch_ns);
	/* 50 cylinders from a cylinder start: 500 tracks, 499 switches */
	r.lba = 1242 * 10 * 200;
	r.nsect = 1242 * 10 * 50;
	pos = dm_position_ns(&m, r.done + p.overhead_ns, r.lba);
	run1(&m, &r, r.done);
	rate = (double)r.nsect * 512 * 1e9 /
	       (double)(r.done - r.start - p.overhead_ns - pos);
	ck_assert_msg(fabs(rate - 64.8e6) < 0.005 * 64.8e6,
		      "sustained %.2f MB/s, the sheet 64.8", rate / 1e6);
	dm_fini(&m);
}
END_TEST

/* (e) Vendors' average seek: over all pairs of tracks, every cylinder as
 * likely (Hitachi's weighted average of all seek lengths). Sampled with
 * the model's own curve on the zoned 7K500, whose outer cylinders hold
 * twice the sectors of the inner: a fit over sectors misses by >1%. */
START_TEST(seek_fit_averages_track_pairs)
{
	struct dm_params p = deskstar();
	struct disk_model m;
	uint64_t x = 99;
	double sum = 0;

	init(&m, &p);
	for (int i = 0; i < 400000; i++) {
		uint32_t a, b;

		x = x * 6364136223846793005ull + 1442695040888963407ull;
		a = (uint32_t)((x >> 33) % m.cylinders);
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		b = (uint32_t)((x >> 33) % m.cylinders);
		sum += (double)dm_seek_ns(&m, a > b ? a - b : b - a);
	}
	sum /= 400000;
	ck_assert_msg(fabs(sum - 8.5e6) < 0.004 * 8.5e6,
		      "mean over track pairs %.4f ms, avg_seek 8.5", sum / 1e6);
	dm_fini(&m);
}
END_TEST

/* (e) again, for a small drive: the Travelstar 7K320's sheet (7K320 SATA
 * OEM Specification 4.4.2, tables 5-7, reads: single track 1.0 ms,
 * average 12 ms, full stroke 20.0 ms) puts the average 58% of the way
 * from single track to full stroke, past a square root's 8/15 (the mean
 * of sqrt|a - b| over uniform pairs). Still fitted: ends exact, never
 * falling, 12 ms over track pairs. 19 ms, 95% of the way, is past any
 * curve the model takes (x^0.1: 2 / (1.1 * 2.1) = 87%) and is refused. */
START_TEST(seek_fit_reaches_a_small_drives_average)
{
	struct dm_params p = deskstar();
	struct disk_model m;
	uint64_t x = 7, prev = 0;
	double sum = 0;

	p.capacity = 160000000000ull;
	p.track_seek_ns = 1 * MS;
	p.avg_seek_ns = 12 * MS;
	p.full_seek_ns = 20 * MS;
	init(&m, &p);
	ck_assert_uint_eq(dm_seek_ns(&m, 1), 1 * MS);
	ck_assert_uint_eq(dm_seek_ns(&m, m.cylinders - 1), 20 * MS);
	for (uint32_t d = 1; d < m.cylinders; d += 89) {
		uint64_t s = dm_seek_ns(&m, d);

		ck_assert_uint_ge(s, prev);
		prev = s;
	}
	for (int i = 0; i < 400000; i++) {
		uint32_t a, b;

		x = x * 6364136223846793005ull + 1442695040888963407ull;
		a = (uint32_t)((x >> 33) % m.cylinders);
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		b = (uint32_t)((x >> 33) % m.cylinders);
		sum += (double)dm_seek_ns(&m, a > b ? a - b : b - a);
	}
	sum /= 400000;
	ck_assert_msg(fabs(sum - 12e6) < 0.004 * 12e6,
		      "mean over track pairs %.4f ms, avg_seek 12", sum / 1e6);
	dm_fini(&m);
	p.avg_seek_ns = 19 * MS;
	ck_assert_int_eq(dm_init(&m, &p, err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, "avg_seek 19.000ms cannot be fitted"),
		      "%s", err);
}
END_TEST

/* (f) 16 adjacent cached 4K writes and a FLUSH: one destage of 128
 * sectors, the flush costing overhead + positioning + one transfer. The
 * triggers: an idle drive looks again exactly destage_idle after its
 * last command; destage_pct dirty starts a destage at once (and 0 is
 * refused, naming the key). */
START_TEST(write_back_coalesces_and_triggers)
{
	struct dm_params p = plain();
	struct disk_model m;
	struct dm_req w = { .op = DM_WRITE, .nsect = 8 };
	struct dm_req fl = { .op = DM_FLUSH };
	struct dm_stats st;
	uint64_t t = 0, pos;

	p.wcache = true;
	p.destage_idle_ns = 7 * MS;
	init(&m, &p);
	for (int i = 0; i < 16; i++) {
		w.lba = 4000000 + (uint64_t)(i ^ 1) * 8;	/* pairs swapped */
		run1(&m, &w, t);
		ck_assert(w.hit);
		ck_assert_uint_eq(dm_next(&m), w.done + p.destage_idle_ns);
		t = w.done;
	}
	pos = dm_position_ns(&m, t + p.overhead_ns, 4000000);
	run1(&m, &fl, t);
	dm_get_stats(&m, fl.done, &st);
	ck_assert_uint_eq(st.destages, 1);
	ck_assert_uint_eq(fl.done - fl.start, p.overhead_ns + pos +
			  (uint64_t)llround(128.0 * rot_ns(&p) / 1000));
	dm_fini(&m);

	/* 25%: a quarter of 16 MiB dirty starts the destage at once */
	p.destage_pct = 25;
	init(&m, &p);
	w.lba = 0;
	w.nsect = 8192;		/* 4 MiB */
	run1(&m, &w, 0);
	ck_assert(w.hit);
	ck_assert_ptr_nonnull(m.destaging);	/* at once, not at wake */
	dm_fini(&m);
	p.destage_pct = 0;
	ck_assert_int_eq(dm_init(&m, &p, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "destage_dirty"));
}
END_TEST

/* (g) A read at a track start, then 10 revolutions of prefetch (one
 * track each, a cylinder each with one head), then a cached write into
 * the segment: the head is at the cylinder the prefetch reached,
 * (l + 10 * spt) / spt, not back at the read's. */
START_TEST(invalidated_prefetch_keeps_the_head)
{
	struct dm_params p = plain();
	struct disk_model m;
	struct dm_req r = { .op = DM_READ, .lba = 1000 * 500, .nsect = 8 };
	struct dm_req w = { .op = DM_WRITE, .lba = 1000 * 500 + 16,
			    .nsect = 8 };
	uint64_t t0, rot = rot_ns(&p);
	uint32_t want;

	p.readahead = p.wcache = true;
	p.segment_size = 16 << 20;
	init(&m, &p);
	run1(&m, &r, 0);
	t0 = r.done - (uint64_t)llround(8.0 * rot / 1000);
	run1(&m, &w, t0 + 10 * rot + rot / 2);
	ck_assert(w.hit);
	want = (uint32_t)((r.lba + (w.start - t0) * 1000 / rot - 1) / 1000);
	ck_assert_uint_eq(want, 510);
	ck_assert_msg(abs((int)m.head_cyl - (int)want) <= 1,
		      "head at cylinder %u, the prefetch reached %u",
		      m.head_cyl, want);
	dm_fini(&m);
}
END_TEST

/* (h) One channel, two dies. A write programs die 0 (200 us), a read
 * of die 0 must wait for it, then a read of die 1 arrives: its page is
 * read by 10 + 25 us and crosses the idle channel at once, done at
 * overhead + read + 4096 / channel + 4096 / iface, not after the die 0
 * read's transfer booked for 255 us on. */
START_TEST(ssd_no_head_of_line_blocking)
{
	struct dm_params p = {
		.kind = DM_SSD, .overhead_ns = 10 * US,
		.iface_bps = 100000000000ull, .capacity = 1ull << 30,
		.channels = 1, .dies = 2, .read_ns = 25 * US,
		.program_ns = 200 * US, .channel_bps = 200000000,
		.queue = 16,
	};
	struct dm_req w = { .op = DM_WRITE, .lba = 0, .nsect = 8 };
	struct dm_req r0 = { .op = DM_READ, .lba = 0, .nsect = 8 };
	struct dm_req r1 = { .op = DM_READ, .lba = 8, .nsect = 8 };
	struct list_node done;
	struct disk_model m;

	init(&m, &p);
	list_init(&done);
	dm_submit(&m, &w, 0, &done);
	dm_submit(&m, &r0, 0, &done);
	dm_submit(&m, &r1, 0, &done);
	ck_assert_uint_eq(r1.done, 10000 + 25000 + 20480 + 41);
	ck_assert_uint_eq(r0.done, 10000 + 41 + 20480 + 200000 + 25000 +
			  20480 + 41);
	dm_fini(&m);
}
END_TEST

/* The P320h preset's controller stage against its data sheet: a
 * 512-byte read at depth 1 takes 10 + 25 + 512 / 200 MB/s + 512 / 3.2
 * GB/s = 37.72 us (< 47 us); with the interface out of the way, 256
 * commands of 4K reads run at the controller's 785K IOPS. */
START_TEST(ssd_controller_stage)
{
	struct dm_params p = {
		.kind = DM_SSD, .overhead_ns = 10 * US,
		.iface_bps = 3200000000ull, .capacity = 350000000000ull,
		.channels = 32, .dies = 8, .read_ns = 25 * US,
		.program_ns = 200 * US, .channel_bps = 200000000,
		.queue = 256, .ctrl_iops = 785000,
	};
	struct dm_req q[256], r = { .op = DM_READ, .lba = 77, .nsect = 1 };
	struct list_node done;
	struct disk_model m;
	uint64_t n = 0, end = 0, x = 7;
	double iops;

	init(&m, &p);
	run1(&m, &r, 0);
	ck_assert_uint_eq(r.done - r.start, 10000 + 25000 + 2560 + 160);
	dm_fini(&m);
	p.iface_bps = 100000000000ull;
	init(&m, &p);
	list_init(&done);
	for (int i = 0; i < 256; i++) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		q[i] = (struct dm_req){ .op = DM_READ, .nsect = 8,
					.lba = ((x >> 20) % 80000000) * 8 };
		dm_submit(&m, &q[i], 0, &done);
	}
	while (n < 50000) {
		if (list_empty(&done))
			dm_advance(&m, dm_next(&m), &done);
		while (!list_empty(&done)) {
			struct dm_req *d = list_first_entry(&done,
							    struct dm_req,
							    node);

			list_del(&d->node);
			n++;
			end = d->done;
			x = x * 6364136223846793005ull + 1442695040888963407ull;
			d->lba = ((x >> 20) % 80000000) * 8;
			dm_submit(&m, d, d->done, &done);
		}
	}
	iops = (double)n * 1e9 / (double)end;
	ck_assert_msg(iops <= 785000 * 1.001 && iops >= 0.99 * 785000,
		      "%.0f IOPS, the controller's ceiling 785000", iops);
	dm_fini(&m);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("disk_model_defects");
	TCase *tc = tcase_create("defects");

	tcase_set_timeout(tc, 60);
	harness_add(tc, readahead_resumes_when_drained);
	harness_add(tc, hit_and_miss_overheads_and_iface);
	harness_add(tc, back_to_back_transfers_stream);
	harness_add(tc, head_switch_costs_and_sustained_rate);
	harness_add(tc, seek_fit_averages_track_pairs);
	harness_add(tc, seek_fit_reaches_a_small_drives_average);
	harness_add(tc, write_back_coalesces_and_triggers);
	harness_add(tc, invalidated_prefetch_keeps_the_head);
	harness_add(tc, ssd_no_head_of_line_blocking);
	harness_add(tc, ssd_controller_stage);
	suite_add_tcase(s, tc);
	return s;
}

int main(int argc, char **argv)
{
	return harness_main(argc, argv, suite);
}
