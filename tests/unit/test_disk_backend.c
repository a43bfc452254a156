/*
 * The disk backend (backend/disk.c) around its model, on a reactor: data
 * reach the base and come back, the model's statistics are reported, bad
 * keys are refused naming the key, time_scale stretches the model's
 * service times on the real clock, two reactors share one model, and
 * the cfq elevator keys its queues by each bdev_io's submitter. The
 * models themselves are tested against arithmetic in test_disk_model.c.
 */
#include <check.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "backend/bdev.h"
#include "tcq/reactor.h"
#include "tests/unit/harness.h"

#define MS 1000000ull

static char err[256];

static struct reactor R;
static int pending;
static bool all_done;

static void io_done(struct bdev_io *io)
{
	ck_assert_int_eq(io->result, 0);
	if (--pending == 0) {
		all_done = true;
		reactor_stop(&R);
	}
}

static void run_io(struct bdev_queue *q, struct bdev_io *io)
{
	io->done = io_done;
	pending = 1;
	all_done = false;
	bdev_submit(q, io);
	harness_run_until(&R, &all_done, HARNESS_WATCHDOG_MS);
}

START_TEST(backend_data_and_stats)
{
	struct bdev_params bp = { 0 };
	struct bdev *b;
	struct bdev_queue *q;
	struct bdev_model_stats st;
	char *wbuf, *rbuf;
	struct bdev_io io;
	uint64_t t0;

	ck_assert_int_eq(reactor_init(&R, 0), 0);
	b = bdev_open("disk:model=hdd,capacity=1G,overhead=1ms,"
		      "base=ram:size=64M", &bp, err, sizeof(err));
	ck_assert_msg(b != NULL, "%s", err);
	ck_assert_uint_eq(b->size, 64 << 20);
	q = bdev_queue_get(b, &R);
	ck_assert_ptr_nonnull(q);
	ck_assert(posix_memalign((void **)&wbuf, 4096, 4096) == 0);
	ck_assert(posix_memalign((void **)&rbuf, 4096, 4096) == 0);
	memset(wbuf, 0x5a, 4096);
	memset(rbuf, 0, 4096);
	memset(&io, 0, sizeof(io));
	io.op = BDEV_WRITE;
	io.flags = BDEV_FUA;
	io.offset = 1 << 20;
	io.len = 4096;
	io.buf = wbuf;
	t0 = reactor_now_ns();
	run_io(q, &io);
	/* a media write: at least overhead + one track's seek... or none on
	 * the head's own cylinder, but always the overhead */
	ck_assert_uint_ge(reactor_now_ns() - t0, 1 * MS);
	memset(&io, 0, sizeof(io));
	io.op = BDEV_READ;
	io.offset = 1 << 20;
	io.len = 4096;
	io.buf = rbuf;
	run_io(q, &io);
	ck_assert(!memcmp(wbuf, rbuf, 4096));
	ck_assert_int_eq(bdev_model_stats(b, &st), 0);
	ck_assert_str_eq(st.model, "hdd");
	ck_assert_uint_eq(st.commands, 2);
	ck_assert_uint_ge(st.media_ops, 1);
	bdev_close(b);
	reactor_fini(&R);
	free(wbuf);
	free(rbuf);
	/* a backend that models nothing */
	b = bdev_open("null:size=1M", &bp, err, sizeof(err));
	ck_assert_ptr_nonnull(b);
	ck_assert_int_eq(bdev_model_stats(b, &st), -EOPNOTSUPP);
	bdev_close(b);
}
END_TEST

/* Bad keys are refused naming the backend and the key; the default base
 * is null of the model's capacity. */
START_TEST(backend_keys)
{
	static const struct {
		const char *spec, *words;
	} bad[] = {
		{ "disk:model=floppy", "bad model 'floppy'" },
		{ "disk:ncq=33", "bad ncq '33'" },
		{ "disk:sched=elevator", "bad sched 'elevator'" },
		{ "disk:queue=2000,model=ssd", "bad queue '2000'" },
		{ "disk:rpm=7200,rpm=5400", "'rpm' given twice" },
		{ "disk:bogus=1", "unknown option 'bogus'" },
		{ "disk:avg_seek=30ms", "avg_seek" },
		{ "disk:spt_inner=2000", "spt_inner" },
		{ "disk:capacity=1G,base=ram:size=2G", "capacity" },
	};
	struct bdev_params bp = { 0 };
	struct bdev *b;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = 0;
		ck_assert_ptr_null(bdev_open(bad[i].spec, &bp, err,
					     sizeof(err)));
		ck_assert_msg(!strncmp(err, "disk:", 5) &&
			      strstr(err, bad[i].words),
			      "%s: '%s' lacks '%s'", bad[i].spec, err,
			      bad[i].words);
	}
	/* decimals as the data sheets give them */
	b = bdev_open("disk:model=hdd,capacity=500G,avg_seek=8.5ms,"
		      "track_seek=1.0ms,full_seek=20ms,ncq=31,sched=sptf,"
		      "base=null", &bp, err, sizeof(err));
	ck_assert_msg(b != NULL, "%s", err);
	ck_assert_uint_eq(b->size, 500ull << 30);	/* bare null: capacity */
	bdev_close(b);
	b = bdev_open("disk:model=hdd-15k", &bp, err, sizeof(err));
	ck_assert_msg(b != NULL, "%s", err);
	ck_assert_uint_eq(b->size, 300000000000ull);
	bdev_close(b);
	b = bdev_open("disk:model=ssd,channels=4,dies=2", &bp, err,
		      sizeof(err));
	ck_assert_msg(b != NULL, "%s", err);
	bdev_close(b);
	ck_assert(!bdev_spec_uses_path("disk:model=hdd"));
	ck_assert(bdev_spec_uses_path("disk:model=hdd,base=aio"));
}
END_TEST

/* time_scale=10: a flash write costs the 1 ms overhead and a 200 us
 * page program of model time (some 1.25 ms unscaled), so at least 10 ms
 * of real time; the model's elapsed time is reported on the real
 * clock. */
START_TEST(time_scale_stretches_service)
{
	struct bdev_params bp = { 0 };
	struct bdev *b;
	struct bdev_queue *q;
	struct bdev_model_stats st;
	struct bdev_io io;
	char *buf;
	uint64_t t0, took;

	ck_assert_int_eq(reactor_init(&R, 0), 0);
	b = bdev_open("disk:model=ssd,capacity=1G,overhead=1ms,time_scale=10,"
		      "base=ram:size=64M", &bp, err, sizeof(err));
	ck_assert_msg(b != NULL, "%s", err);
	q = bdev_queue_get(b, &R);
	ck_assert_ptr_nonnull(q);
	ck_assert(posix_memalign((void **)&buf, 4096, 4096) == 0);
	memset(buf, 0xa5, 4096);
	memset(&io, 0, sizeof(io));
	io.op = BDEV_WRITE;
	io.flags = BDEV_FUA;
	io.offset = 8 << 20;
	io.len = 4096;
	io.buf = buf;
	t0 = reactor_now_ns();
	run_io(q, &io);
	took = reactor_now_ns() - t0;
	ck_assert_msg(took >= 10 * MS, "a write took %llu ns, want >= 10 ms",
		      (unsigned long long)took);
	ck_assert_int_eq(bdev_model_stats(b, &st), 0);
	ck_assert_uint_eq(st.commands, 1);
	/* elapsed since the first command, in real time: the write's own */
	ck_assert_uint_ge(st.elapsed_ns, 10 * MS);
	bdev_close(b);
	reactor_fini(&R);
	free(buf);
	ck_assert_ptr_null(bdev_open("disk:time_scale=0", &bp, err,
				     sizeof(err)));
	ck_assert_msg(strstr(err, "time_scale"), "%s", err);
	ck_assert_ptr_null(bdev_open("disk:time_scale=1001", &bp, err,
				     sizeof(err)));
	ck_assert_msg(strstr(err, "time_scale"), "%s", err);
}
END_TEST

/* ---- elevator=cfq keys its queues by bdev_io's submitter ---- */

static struct bdev_io *order[3];
static int norder;

static void order_done(struct bdev_io *io)
{
	ck_assert_int_eq(io->result, 0);
	order[norder++] = io;
	if (--pending == 0) {
		all_done = true;
		reactor_stop(&R);
	}
}

/*
 * A1 and A2 from one nexus, B1 from another, sent together; A1 goes to
 * the idle drive (one command at a time). cfq keeps A's queue active for
 * its slice: A2 follows A1, though B1 lies much nearer A1's end (sector
 * 1024 against 1048576), where the one queue of unkeyed commands would
 * go next. A command of 100 ms (overhead) keeps the three in the host
 * queue together however slow this host is between the submissions.
 */
START_TEST(cfq_queues_follow_the_submitter)
{
	struct bdev_params bp = { 0 };
	struct bdev *b;
	struct bdev_queue *q;
	struct bdev_io io[3];
	static const uint64_t off[3] = { 0, 512 << 10, 512 << 20 };
	static int nexus_a, nexus_b;
	const void *who[3] = { &nexus_a, &nexus_b, &nexus_a };
	char *buf;

	ck_assert_int_eq(reactor_init(&R, 0), 0);
	b = bdev_open("disk:model=hdd,capacity=1G,ncq=1,elevator=cfq,"
		      "overhead=100ms,readahead=off,wcache=off", &bp, err,
		      sizeof(err));
	ck_assert_msg(b != NULL, "%s", err);
	q = bdev_queue_get(b, &R);
	ck_assert_ptr_nonnull(q);
	ck_assert(posix_memalign((void **)&buf, 4096, 3 * 4096) == 0);
	norder = 0;
	pending = 3;
	all_done = false;
	for (int i = 0; i < 3; i++) {
		memset(&io[i], 0, sizeof(io[i]));
		io[i].op = BDEV_READ;
		io[i].offset = off[i];
		io[i].len = 4096;
		io[i].buf = buf + i * 4096;
		io[i].submitter = who[i];
		io[i].done = order_done;
	}
	for (int i = 0; i < 3; i++)
		bdev_submit(q, &io[i]);
	harness_run_until(&R, &all_done, HARNESS_WATCHDOG_MS);
	ck_assert_int_eq(norder, 3);
	ck_assert_ptr_eq(order[0], &io[0]);
	ck_assert_msg(order[1] == &io[2] && order[2] == &io[1],
		      "A1, A2, B1 wanted; B1 came %s",
		      order[1] == &io[1] ? "second" : "first");
	bdev_close(b);
	reactor_fini(&R);
	free(buf);
}
END_TEST

/* ---- one model, two reactors ---- */

static struct reactor R2;
static struct bdev_queue *q2;
static int r2_submitted;
static bool r_done, r2_done, both_done;

struct xio {
	struct bdev_io io;
	struct reactor *home, *on;	/* its queue's reactor, where done */
	uint64_t at, took;
	int result;
};
static struct xio x1, x2;

static void both_check(void)
{
	both_done = r_done && r2_done;
	if (both_done)
		reactor_stop(&R);
}

static void r2_back(void *arg)
{
	r2_done = true;
	both_check();
}

/* Records what it saw; asserts are the test thread's. */
static void x_done(struct bdev_io *io)
{
	struct xio *x = container_of(io, struct xio, io);

	x->on = reactor_self();
	x->took = reactor_now_ns() - x->at;
	x->result = io->result;
	if (x->home != &R) {
		ck_assert_int_eq(reactor_post(&R, r2_back, NULL), 0);
		return;
	}
	r_done = true;
	both_check();
}

static void x_prep(struct xio *x, struct reactor *home, uint64_t off,
		   void *buf)
{
	memset(x, 0, sizeof(*x));
	x->home = home;
	x->io.op = BDEV_READ;
	x->io.offset = off;
	x->io.len = 4096;
	x->io.buf = buf;
	x->io.done = x_done;
}

/* On R2: its read into the model, then R2 busy for 30 ms, so that R's
 * timer is likely to run the model when the read finishes. */
static void r2_submit_then_sleep(void *arg)
{
	x2.at = reactor_now_ns();
	bdev_submit(q2, &x2.io);
	__atomic_store_n(&r2_submitted, 1, __ATOMIC_RELEASE);
	usleep(30000);
}

/* Two reactors' queues of one LUN share its model: a read completes on
 * its own queue's reactor, also when another thread's run of the model
 * finished it (a wake-up through that reactor's mailbox), and never
 * before the model's 1 ms of overhead. */
START_TEST(two_reactors_share_one_model)
{
	struct bdev_params bp = { 0 };
	struct harness_thread t2;
	struct bdev_queue *q1;
	struct bdev *b;
	char *buf;

	ck_assert_int_eq(reactor_init(&R, 0), 0);
	ck_assert_int_eq(reactor_init(&R2, 1), 0);
	b = bdev_open("disk:model=ssd,capacity=1G,overhead=1ms,"
		      "base=ram:size=64M", &bp, err, sizeof(err));
	ck_assert_msg(b != NULL, "%s", err);
	q1 = bdev_queue_get(b, &R);
	q2 = bdev_queue_get(b, &R2);
	ck_assert(q1 && q2);
	ck_assert(posix_memalign((void **)&buf, 4096, 8192) == 0);
	x_prep(&x1, &R, 0, buf);
	x_prep(&x2, &R2, 1 << 20, buf + 4096);
	r_done = r2_done = both_done = false;
	r2_submitted = 0;
	harness_thread_start(&t2, &R2);
	ck_assert_int_eq(reactor_post(&R2, r2_submit_then_sleep, NULL), 0);
	while (!__atomic_load_n(&r2_submitted, __ATOMIC_ACQUIRE))
		usleep(100);
	x1.at = reactor_now_ns();
	bdev_submit(q1, &x1.io);
	harness_run_until(&R, &both_done, HARNESS_WATCHDOG_MS);
	harness_thread_stop(&t2, NULL, NULL);
	ck_assert_int_eq(x1.result, 0);
	ck_assert_int_eq(x2.result, 0);
	ck_assert_ptr_eq(x1.on, &R);
	ck_assert_ptr_eq(x2.on, &R2);
	ck_assert_uint_ge(x1.took, 1 * MS);
	ck_assert_uint_ge(x2.took, 1 * MS);
	bdev_close(b);
	reactor_fini(&R2);
	reactor_fini(&R);
	free(buf);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("disk_backend");
	TCase *tc = tcase_create("backend");

	tcase_set_timeout(tc, 30);
	harness_add(tc, backend_data_and_stats);
	harness_add(tc, backend_keys);
	harness_add(tc, time_scale_stretches_service);
	harness_add(tc, two_reactors_share_one_model);
	harness_add(tc, cfq_queues_follow_the_submitter);
	suite_add_tcase(s, tc);
	return s;
}

int main(int argc, char **argv)
{
	return harness_main(argc, argv, suite);
}
