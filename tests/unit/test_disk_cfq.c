/*
 * The cfq elevator in front of the modelled disk (backend/disk_cfq.c,
 * disk:elevator=cfq) on a virtual clock, against the rules and defaults
 * of Linux 2.6.29's block/cfq-iosched.c: time slices per submitter
 * (slice_sync 100 ms, slice_async 40 ms, a slice starting at the queue's
 * first completion and ending at the first completion after it), idling
 * slice_idle (8 ms) on a sync queue that emptied, the fifo looked at once
 * a slice (fifo_expire sync 125 ms), and the back-seek rule (up to
 * back_max 16 MiB behind at back_penalty 2). Expected values are the
 * parameters' arithmetic; where a service time enters, it is the one the
 * model reports for that request, or a bound from the drive's parameters.
 * Commands of the controller's time only (DM_NOP, with FUA: a sync
 * request) make the clock exact where the rule alone is checked.
 */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include "backend/disk_model.h"
#include "tests/unit/harness.h"

#define US 1000ull
#define MS 1000000ull
#define SLICE_SYNC (100 * MS)
#define SLICE_ASYNC (40 * MS)
#define SLICE_IDLE (8 * MS)

static char err[256];

/* The hdd preset (backend/disk.c) with one command at the drive, as the
 * drive of kara-2009 (no NCQ); no read-ahead, no write cache unless a
 * check turns it on. */
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

static void init(struct disk_model *m, const struct dm_params *p)
{
	ck_assert_msg(dm_init(m, p, err, sizeof(err)) == 0, "%s", err);
}

/* ---- sequential readers on their own nexuses --------------------------- */

#define READERS 2
#define LOG_MAX 4096

struct reader {
	struct dm_req req;
	uint64_t lba, think, due;	/* due: next submission (DM_NONE) */
	int left;			/* reads still to send (-1: no end) */
};

struct log {
	int n;
	int who[LOG_MAX];
	uint64_t enter[LOG_MAX], done[LOG_MAX];
};

/* Runs the readers (each one read of nsect at a time, the next think
 * after the last completed) until every read is done or the clock
 * passes end; logs the completions in order. */
static void run_readers(struct disk_model *m, struct reader *rd, int n,
			uint32_t nsect, uint64_t end, struct log *lg)
{
	struct list_node done;

	list_init(&done);
	lg->n = 0;
	for (;;) {
		uint64_t t = dm_next(m);
		int sub = -1;

		for (int i = 0; i < n; i++)
			if (rd[i].due != DM_NONE && rd[i].due <= t &&
			    (sub < 0 || rd[i].due < rd[sub].due))
				sub = i;
		if (sub >= 0) {
			struct reader *r = &rd[sub];

			r->req = (struct dm_req){ .op = DM_READ, .lba = r->lba,
						  .nsect = nsect,
						  .who = r };
			r->lba += nsect;
			t = r->due;
			r->due = DM_NONE;
			if (r->left > 0)
				r->left--;
			dm_submit(m, &r->req, t, &done);
		} else if (t == DM_NONE || t > end) {
			break;
		} else {
			dm_advance(m, t, &done);
		}
		while (!list_empty(&done)) {
			struct dm_req *q = list_first_entry(&done,
							    struct dm_req,
							    node);
			struct reader *r = (struct reader *)q->who;

			list_del(&q->node);
			ck_assert_int_lt(lg->n, LOG_MAX);
			lg->who[lg->n] = (int)(r - rd);
			lg->enter[lg->n] = q->enter;
			lg->done[lg->n++] = q->done;
			if (r->left && q->done + r->think <= end)
				r->due = q->done + r->think;
		}
	}
}

static int switches(const struct log *lg)
{
	int s = 0;

	for (int i = 1; i < lg->n; i++)
		s += lg->who[i] != lg->who[i - 1];
	return s;
}

/* The longest a 64 KiB read can take on this drive: overhead, a full
 * stroke, a whole revolution, the transfer at the inner zone's rate. */
static uint64_t max_service(const struct dm_params *p, uint32_t nsect)
{
	uint64_t rev = 60 * 1000 * MS / p->rpm;

	return p->overhead_ns + p->full_seek_ns + rev +
	       rev * nsect / p->spt_inner + 1;
}

static void two_readers(struct disk_model *m, int elevator, uint64_t end,
			struct log *lg)
{
	struct dm_params p = hdd_ncq1(elevator);
	struct reader rd[READERS] = {
		{ .lba = 0, .think = MS, .due = 0, .left = -1 },
		{ .lba = 400000000, .think = MS, .due = 0, .left = -1 },
	};

	init(m, &p);
	run_readers(m, rd, READERS, 128, end, lg);
	dm_fini(m);
}

/*
 * Two sequential readers of 64 KiB, 1 ms of think time each (under
 * slice_idle, so cfq idles for them), 200 GB apart. cfq gives each a
 * slice: from its first completion, at least slice_sync and at most
 * slice_sync + think + one service; so in 2 s the disk changes hands at
 * most 2 s / slice_sync + 1 = 21 times and at least 2 s / (slice_sync + 2
 * x the longest service) - 1 (the slice's first read comes before it
 * starts). deadline, in sector order from where the last read ended,
 * takes the other reader's waiting read each time: every read switches.
 */
START_TEST(cfq_serves_each_reader_in_slices)
{
	struct dm_params p = hdd_ncq1(DM_ELV_CFQ);
	uint64_t smax = max_service(&p, 128), end = 2000 * MS;
	struct disk_model m;
	struct log *lg = calloc(1, sizeof(*lg));
	int s, lo, hi, first = 0;

	ck_assert_ptr_nonnull(lg);
	two_readers(&m, DM_ELV_CFQ, end, lg);
	s = switches(lg);
	lo = (int)(end / (SLICE_SYNC + 2 * smax)) - 1;
	hi = (int)(end / SLICE_SYNC) + 1;
	ck_assert_msg(s >= lo && s <= hi, "cfq: %d switches in 2 s "
		      "(want %d..%d), %d reads", s, lo, hi, lg->n);
	/* every slice but the last (cut by the end of the run) */
	for (int i = 1; i < lg->n; i++) {
		if (lg->who[i] == lg->who[i - 1])
			continue;
		ck_assert_uint_ge(lg->done[i - 1], lg->done[first] + SLICE_SYNC);
		ck_assert_uint_le(lg->done[i - 1],
				  lg->done[first] + SLICE_SYNC + MS + smax);
		first = i;
	}
	two_readers(&m, DM_ELV_DEADLINE, end, lg);
	s = switches(lg);
	ck_assert_msg(lg->n > 20 && s == lg->n - 1,
		      "deadline: %d switches in %d reads", s, lg->n);
	free(lg);
}
END_TEST

/*
 * A reads 3 times (1 ms of think time) and stops; B's read has waited
 * since t = 0. cfq keeps the disk for A while it thinks, and once A's
 * last read has completed with nothing after it, idles slice_idle: B's
 * read reaches the drive exactly 8 ms after A's last completion.
 */
START_TEST(cfq_idles_slice_idle_then_moves_on)
{
	struct dm_params p = hdd_ncq1(DM_ELV_CFQ);
	struct disk_model m;
	struct reader rd[READERS] = {
		{ .lba = 0, .think = MS, .due = 0, .left = 3 },
		{ .lba = 400000000, .think = MS, .due = 0, .left = 1 },
	};
	struct log lg;

	init(&m, &p);
	run_readers(&m, rd, READERS, 128, 1000 * MS, &lg);
	ck_assert_int_eq(lg.n, 4);
	for (int i = 0; i < 3; i++)
		ck_assert_int_eq(lg.who[i], 0);
	ck_assert_int_eq(lg.who[3], 1);
	ck_assert_uint_eq(lg.enter[3], lg.done[2] + SLICE_IDLE);
	dm_fini(&m);
}
END_TEST

/*
 * Async writes (no FUA, write cache on) share one queue, which gets
 * slice_async. S1 reads once and stops; 400 cached writes and S2's read
 * wait meanwhile, the writes first on the service tree. After S1's idle
 * (8 ms) the writes run; their slice starts at the first write's
 * completion and ends at the first completion 40 ms or more after it,
 * when S2's read goes to the drive.
 */
START_TEST(cfq_async_writes_get_slice_async)
{
	struct dm_params p = hdd_ncq1(DM_ELV_CFQ);
	struct disk_model m;
	struct list_node done;
	struct dm_req r1 = { .op = DM_READ, .lba = 0, .nsect = 128,
			     .who = &r1 };
	struct dm_req r2 = { .op = DM_READ, .lba = 400000000, .nsect = 128,
			     .who = &r2 };
	struct dm_req *w = calloc(400, sizeof(*w));
	uint64_t first = DM_NONE, wmax = 0, want = DM_NONE;

	ck_assert_ptr_nonnull(w);
	p.wcache = true;
	init(&m, &p);
	list_init(&done);
	dm_submit(&m, &r1, 0, &done);
	for (int i = 0; i < 400; i++) {
		w[i] = (struct dm_req){ .op = DM_WRITE, .nsect = 8,
					.lba = 10000000 + 8 * (uint64_t)i,
					.who = &w[i] };
		dm_submit(&m, &w[i], 0, &done);
	}
	dm_submit(&m, &r2, 0, &done);
	while (!r2.done) {
		uint64_t t = dm_next(&m);

		ck_assert_msg(t != DM_NONE, "the model stalled");
		dm_advance(&m, t, &done);
		list_init(&done);
	}
	ck_assert_uint_eq(w[0].enter, r1.done + SLICE_IDLE);
	for (int i = 0; i < 400 && w[i].done; i++) {
		if (first == DM_NONE)
			first = w[i].done;
		if (w[i].done - w[i].start > wmax)
			wmax = w[i].done - w[i].start;
		if (want == DM_NONE && w[i].done >= first + SLICE_ASYNC)
			want = w[i].done;
	}
	ck_assert_uint_eq(r2.enter, want);
	ck_assert_uint_lt(r2.enter, first + SLICE_ASYNC + wmax);
	dm_fini(&m);
	free(w);
}
END_TEST

/* ---- within one queue: NOPs with FUA, 1 ms each ------------------------ */

static struct dm_params exact(void)
{
	struct dm_params p = hdd_ncq1(DM_ELV_CFQ);

	p.overhead_ns = MS;
	return p;
}

static struct dm_req nop(uint64_t lba, const void *who)
{
	return (struct dm_req){ .op = DM_NOP, .fua = true, .lba = lba,
				.nsect = 8, .who = who };
}

/*
 * One submitter: X0 goes to the drive at t = 0; O lies far behind it
 * (more than back_max: served after everything ahead), and new requests
 * keep coming ahead, one per completion. The fifo is looked at once a
 * slice, on its first dispatch: the slice that starts at 1 ms (X0's
 * completion) ends at 101 ms, the next one's first dispatch (101 ms) finds
 * O 101 ms old, under fifo_expire sync (125 ms); that slice starts at its
 * first completion, 102 ms, and ends at 202 ms, when O, 202 ms old, goes.
 */
START_TEST(cfq_fifo_expiry_promotes_an_old_request)
{
	struct dm_params p = exact();
	struct disk_model m;
	struct list_node done;
	struct dm_req r[4];
	uint64_t ahead = 1000000;
	int who;

	init(&m, &p);
	list_init(&done);
	r[0] = nop(ahead, &who);
	r[1] = nop(0, &who);
	r[2] = nop(ahead += 100, &who);
	r[3] = nop(ahead += 100, &who);
	for (int i = 0; i < 4; i++)
		dm_submit(&m, &r[i], 0, &done);
	while (!r[1].done) {
		uint64_t t = dm_next(&m);

		ck_assert_msg(t != DM_NONE && t < 1000 * MS,
			      "the old request never went");
		dm_advance(&m, t, &done);
		while (!list_empty(&done)) {
			struct dm_req *q = list_first_entry(&done,
							    struct dm_req,
							    node);

			list_del(&q->node);
			if (q == &r[1])
				break;
			*q = nop(ahead += 100, &who);
			dm_submit(&m, q, t, &done);
		}
	}
	ck_assert_uint_eq(r[1].start, 202 * MS);
	dm_fini(&m);
}
END_TEST

/* X0 (8 sectors at 100000: the next dispatch measures from 100008), then
 * f and b queued together; returns true when b went before f. */
static bool back_first(uint64_t f, uint64_t b)
{
	struct dm_params p = exact();
	struct disk_model m;
	struct list_node done;
	struct dm_req r[3];
	int who;

	init(&m, &p);
	list_init(&done);
	r[0] = nop(100000, &who);
	r[1] = nop(f, &who);
	r[2] = nop(b, &who);
	for (int i = 0; i < 3; i++)
		dm_submit(&m, &r[i], 0, &done);
	while (!r[1].done || !r[2].done) {
		dm_advance(&m, dm_next(&m), &done);
		list_init(&done);
	}
	dm_fini(&m);
	return r[2].start < r[1].start;
}

/*
 * cfq_choose_req from 100008: forward by distance, backward within
 * back_max (16 MiB = 32768 sectors) at twice the distance, beyond that
 * after anything forward.
 */
START_TEST(cfq_back_seek_within_16_mib)
{
	/* 400 back (800) beats 1000 ahead */
	ck_assert(back_first(101008, 99608));
	/* 400 back (800) loses to 500 ahead */
	ck_assert(!back_first(100508, 99608));
	/* exactly 32768 back (65536) beats 1000000 ahead */
	ck_assert(back_first(1100008, 100008 - 32768));
	/* 32769 back is beyond back_max: after the forward one */
	ck_assert(!back_first(1100008, 100008 - 32769));
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("disk_cfq");
	TCase *tc = tcase_create("cfq");

	tcase_set_timeout(tc, 30);
	harness_add(tc, cfq_serves_each_reader_in_slices);
	harness_add(tc, cfq_idles_slice_idle_then_moves_on);
	harness_add(tc, cfq_async_writes_get_slice_async);
	harness_add(tc, cfq_fifo_expiry_promotes_an_old_request);
	harness_add(tc, cfq_back_seek_within_16_mib);
	suite_add_tcase(s, tc);
	return s;
}

int main(int argc, char **argv)
{
	return harness_main(argc, argv, suite);
}
