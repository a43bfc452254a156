/*
 * The disk backend (backend/disk.c) around its model, on a reactor: data
 * reach the base and come back, the model's statistics are reported, bad
 * keys are refused naming the key, and time_scale stretches the model's
 * service times on the real clock. The models themselves are tested
 * against arithmetic in test_disk_model.c.
 */
#include <check.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

static Suite *suite(void)
{
	Suite *s = suite_create("disk_backend");
	TCase *tc = tcase_create("backend");

	tcase_set_timeout(tc, 30);
	harness_add(tc, backend_data_and_stats);
	harness_add(tc, backend_keys);
	harness_add(tc, time_scale_stretches_service);
	suite_add_tcase(s, tc);
	return s;
}

int main(int argc, char **argv)
{
	return harness_main(argc, argv, suite);
}
