/*
 * The host's elevator in front of the modelled disk
 * (backend/disk_elevator.c, disk:elevator=deadline) on a virtual clock:
 * the dispatch order Linux's deadline scheduler gives (sector order from
 * where the last command ended, then the oldest when the sweep runs out),
 * the read_expire bound (500 ms, deadline-iosched.rst), the fifo looked at
 * only when a batch of 16 ends, the FLUSH wall,
 * and what sorting buys a drive that takes one command at a time.
 * Expected orders are worked out from the rule by hand.
 */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include "backend/disk_model.h"
#include "tests/unit/harness.h"

#define US 1000ull
#define MS 1000000ull

static char err[256];

/* The hdd preset (backend/disk.c) with one command at the drive. */
static struct dm_params hdd_ncq1(int elevator)
{
	struct dm_params p = {
		.kind = DM_HDD, .seed = 1, .overhead_ns = 200 * US,
		.iface_bps = 300000000, .capacity = 500107862016ull,
		.rpm = 7200, .heads = 6, .zones = 16, .spt_outer = 1170,
		.spt_inner = 600, .track_seek_ns = 800 * US,
		.avg_seek_ns = 8500 * US, .full_seek_ns = 17 * MS, .ncq = 1,
		.sched = DM_FIFO, .aging_ns = 500 * MS, .segments = 16,
		.segment_size = 1 << 20, .elevator = elevator,
	};
	return p;
}

static void init(struct disk_model *m, int elevator)
{
	struct dm_params p = hdd_ncq1(elevator);

	ck_assert_msg(dm_init(m, &p, err, sizeof(err)) == 0, "%s", err);
}

/* Submits n requests at t = 0 (the first goes to the idle drive at
 * once), runs the model dry and writes the completion order (indexes
 * into reqs) to order. */
static void run_batch(struct disk_model *m, struct dm_req *reqs, int n,
		      int *order)
{
	struct list_node done;
	int k = 0;

	list_init(&done);
	for (int i = 0; i < n; i++)
		dm_submit(m, &reqs[i], 0, &done);
	while (k < n) {
		if (list_empty(&done)) {
			uint64_t t = dm_next(m);

			ck_assert_msg(t != DM_NONE, "the model stalled");
			dm_advance(m, t, &done);
		}
		while (!list_empty(&done)) {
			struct dm_req *r = list_first_entry(&done,
							    struct dm_req,
							    node);

			list_del(&r->node);
			order[k++] = (int)(r - reqs);
		}
	}
}

static void reads(struct dm_req *reqs, const uint64_t *lba, int n)
{
	for (int i = 0; i < n; i++)
		reqs[i] = (struct dm_req){ .op = lba[i] == UINT64_MAX ?
					   DM_FLUSH : DM_READ,
					   .lba = lba[i] == UINT64_MAX ?
					   0 : lba[i],
					   .nsect = lba[i] == UINT64_MAX ?
					   0 : 8 };
}

static void check_order(int elevator, const uint64_t *lba, int n,
			const int *want)
{
	struct disk_model m;
	struct dm_req reqs[8];
	int order[8];

	init(&m, elevator);
	reads(reqs, lba, n);
	run_batch(&m, reqs, n, order);
	for (int i = 0; i < n; i++)
		ck_assert_msg(order[i] == want[i], "dispatch %d: request %d, "
			      "want %d", i, order[i], want[i]);
	dm_fini(&m);
}

/* 1000 goes to the drive on arrival; then upward from 1008: 3000, 4000,
 * 5000; nothing beyond, so the oldest waiting, 200; nothing beyond 208
 * but 100. Without the elevator: arrival order. */
START_TEST(deadline_sweeps_in_sector_order)
{
	static const uint64_t lba[] = { 1000, 5000, 200, 3000, 100, 4000 };
	static const int sorted[] = { 0, 3, 5, 1, 2, 4 };
	static const int arrival[] = { 0, 1, 2, 3, 4, 5 };

	check_order(DM_ELV_DEADLINE, lba, 6, sorted);
	check_order(DM_ELV_NONE, lba, 6, arrival);
}
END_TEST

/* 3000 may not pass the FLUSH that arrived before it, though it lies
 * between 1000 and 5000. */
START_TEST(deadline_never_moves_across_a_flush)
{
	static const uint64_t lba[] = { 1000, 5000, UINT64_MAX, 3000 };
	static const int want[] = { 0, 1, 2, 3 };
	static const uint64_t lba2[] = { 1000, 5000, 3000, UINT64_MAX };
	static const int want2[] = { 0, 2, 1, 3 };

	check_order(DM_ELV_DEADLINE, lba, 4, want);
	check_order(DM_ELV_DEADLINE, lba2, 4, want2);
}
END_TEST

/* A read behind the head while new reads keep arriving ahead of it: the
 * sweep never runs out, so only read_expire brings it in, within a batch
 * (16 dispatches) of its expiry. */
START_TEST(deadline_read_expire_bounds_the_wait)
{
	struct disk_model m;
	struct list_node done;
	struct dm_req reqs[9], *behind = &reqs[8];
	uint64_t next = 1000000, max_service = 0;

	init(&m, DM_ELV_DEADLINE);
	list_init(&done);
	for (int i = 0; i < 8; i++, next += 200000)
		reqs[i] = (struct dm_req){ .op = DM_READ, .lba = next,
					   .nsect = 8 };
	*behind = (struct dm_req){ .op = DM_READ, .lba = 8, .nsect = 8 };
	for (int i = 0; i < 9; i++)
		dm_submit(&m, &reqs[i], 0, &done);
	while (!behind->done) {
		if (list_empty(&done))
			dm_advance(&m, dm_next(&m), &done);
		while (!list_empty(&done)) {
			struct dm_req *r = list_first_entry(&done,
							    struct dm_req,
							    node);

			list_del(&r->node);
			if (r == behind)
				break;
			if (r->done - r->start > max_service)
				max_service = r->done - r->start;
			r->lba = next;
			next += 200000;
			dm_submit(&m, r, r->done, &done);
		}
	}
	ck_assert_uint_ge(behind->start, 500 * MS);
	ck_assert_msg(behind->start <= 500 * MS + 17 * max_service,
		      "waited %llu ms (services up to %llu us)",
		      (unsigned long long)(behind->start / MS),
		      (unsigned long long)(max_service / US));
	dm_fini(&m);
}
END_TEST

/*
 * Linux's deadline looks at its fifo only when a batch ends (16
 * dispatches, or the sweep runs out), and a batch ends whichever way that
 * goes: between two looks lie 16 dispatches. Commands of the controller's
 * time only (DM_NOP, overhead 10 ms, no head movement) make the clock
 * exact: B0 goes to the idle drive at t = 0; then the n-th dispatch is at
 * (n - 1) x 10 ms. The old command O lies past every other, so the sweep
 * (S1, S2, ... in sector order) reaches it last; the fifo is looked at on
 * dispatches 17 (t = 160 ms), 33 (320 ms), 49 (480 ms): O has not waited
 * read_expire (500 ms) yet; on 65 (640 ms) it has, and goes. Checked on
 * every dispatch past the first batch, O would go on dispatch 51
 * (500 ms).
 */
START_TEST(deadline_checks_the_fifo_only_when_a_batch_ends)
{
	struct disk_model m;
	struct dm_params p = hdd_ncq1(DM_ELV_DEADLINE);
	struct dm_req reqs[102];
	int order[102], at = -1;

	p.overhead_ns = 10 * MS;
	ck_assert_msg(dm_init(&m, &p, err, sizeof(err)) == 0, "%s", err);
	reqs[0] = (struct dm_req){ .op = DM_NOP, .lba = 0, .nsect = 1 };
	reqs[1] = (struct dm_req){ .op = DM_NOP, .lba = 900000, .nsect = 1 };
	for (int i = 2; i < 102; i++)
		reqs[i] = (struct dm_req){ .op = DM_NOP,
					   .lba = 1000 * (uint64_t)(i - 1),
					   .nsect = 1 };
	run_batch(&m, reqs, 102, order);
	for (int i = 0; i < 102; i++)
		if (order[i] == 1)
			at = i + 1;
	ck_assert_int_eq(at, 65);
	ck_assert_uint_eq(reqs[1].start, 640 * MS);
	ck_assert_uint_eq(reqs[1].done, 650 * MS);
	dm_fini(&m);
}
END_TEST

/* 48 random 4K reads over the first 32 GiB waiting for a drive that takes
 * one at a time: in sector order each seek is a short hop instead of a
 * random one over the span, so deadline serves at least 10% more. */
static double ncq1_depth48(int elevator)
{
	struct disk_model m;
	struct list_node done;
	struct dm_req reqs[48];
	uint64_t span = (32ull << 30) / DM_SECTOR / 8, z = 42, n = 0, end = 0;

	init(&m, elevator);
	list_init(&done);
	for (int i = 0; i < 48; i++) {
		z = z * 6364136223846793005ull + 1442695040888963407ull;
		reqs[i] = (struct dm_req){ .op = DM_READ,
					   .lba = ((z >> 33) % span) * 8,
					   .nsect = 8 };
		dm_submit(&m, &reqs[i], 0, &done);
	}
	while (n < 3000) {
		if (list_empty(&done))
			dm_advance(&m, dm_next(&m), &done);
		while (!list_empty(&done)) {
			struct dm_req *r = list_first_entry(&done,
							    struct dm_req,
							    node);

			list_del(&r->node);
			n++;
			end = r->done;
			z = z * 6364136223846793005ull + 1442695040888963407ull;
			r->lba = ((z >> 33) % span) * 8;
			dm_submit(&m, r, r->done, &done);
		}
	}
	dm_fini(&m);
	return (double)n * 1e9 / (double)end;
}

START_TEST(deadline_sorting_helps_a_drive_of_depth_1)
{
	double none = ncq1_depth48(DM_ELV_NONE),
	       sorted = ncq1_depth48(DM_ELV_DEADLINE);

	ck_assert_msg(sorted >= 1.10 * none, "deadline %.1f IOPS, none %.1f",
		      sorted, none);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("disk_elevator");
	TCase *tc = tcase_create("deadline");

	tcase_set_timeout(tc, 30);
	harness_add(tc, deadline_sweeps_in_sector_order);
	harness_add(tc, deadline_never_moves_across_a_flush);
	harness_add(tc, deadline_read_expire_bounds_the_wait);
	harness_add(tc, deadline_checks_the_fifo_only_when_a_batch_ends);
	harness_add(tc, deadline_sorting_helps_a_drive_of_depth_1);
	suite_add_tcase(s, tc);
	return s;
}

int main(int argc, char **argv)
{
	return harness_main(argc, argv, suite);
}
