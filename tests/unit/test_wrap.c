/*
 * Unit tests for the wrapping test backends: delay (out-of-order
 * completion, the parallelism bound), fault (LBA ranges, rate, error
 * codes, ops filter) and cache (reads see the cache; a crash keeps FUA
 * and flushed writes and drops the rest; background write-back). A
 * reactor in the test thread drives completions; bases are ram.
 */
#include <check.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "backend/bdev.h"
#include "backend/bdev_priv.h"
#include "backend/wrap.h"
#include "scsi/lun.h"
#include "target/config.h"
#include "tcq/reactor.h"
#include "tests/unit/harness.h"

#define BS 512
#define NIO 32

static struct reactor R;
static char err[256];
static int pending;
static bool all_done;	/* pending came down to 0 */
static int order[NIO], norder;
static uint64_t t0, done_ns[NIO], done_pass[NIO];

struct tio {
	struct bdev_io io;
	int id;
};

static void setup(void)
{
	ck_assert_int_eq(reactor_init(&R, 0), 0);
	err[0] = 0;
	norder = 0;
	pending = 0;
}

static void teardown(void)
{
	reactor_fini(&R);
}

/* Runs the reactor until every I/O counted in pending completed (the
 * harness's watchdog fails the check if that never happens). */
static void drive(void)
{
	all_done = pending == 0;
	if (!all_done)
		harness_run_until(&R, &all_done, HARNESS_WATCHDOG_MS);
	ck_assert_int_eq(pending, 0);
}

static void sleep_reactor_cb(struct reactor_timer *t)
{
	reactor_stop(&R);
}

/* Lets the reactor run for ms (background work). */
static void run_for(unsigned ms)
{
	struct reactor_timer t;

	reactor_timer_init(&t, sleep_reactor_cb, NULL);
	reactor_timer_arm(&R, &t, ms);
	while (reactor_timer_armed(&t))
		reactor_run(&R);
}

static void tio_done(struct bdev_io *io)
{
	struct tio *t = container_of(io, struct tio, io);

	if (norder < NIO) {
		done_ns[norder] = reactor_now_ns() - t0;
		done_pass[norder] = R.now_ns;	/* the reactor pass */
		order[norder++] = t->id;
	}
	if (--pending == 0) {
		all_done = true;
		reactor_stop(&R);
	}
}

static void tio_prep(struct tio *t, int id, enum bdev_op op, uint64_t lba,
		     uint32_t blocks, void *buf, unsigned flags)
{
	memset(t, 0, sizeof(*t));
	t->id = id;
	t->io.op = op;
	t->io.offset = lba * BS;
	t->io.len = (uint64_t)blocks * BS;
	t->io.buf = buf;
	t->io.flags = flags;
	t->io.result = 12345;
	t->io.done = tio_done;
}

static int do_io(struct bdev_queue *q, enum bdev_op op, uint64_t lba,
		 uint32_t blocks, void *buf, unsigned flags)
{
	struct tio t;

	tio_prep(&t, 0, op, lba, blocks, buf, flags);
	pending = 1;
	bdev_submit(q, &t.io);
	ck_assert_int_eq(pending, 1);	/* never inside submit */
	drive();
	return t.io.result;
}

static struct bdev *open_spec(const char *spec, struct bdev_queue **q)
{
	struct bdev_params p = { .queue_depth = 256 };
	struct bdev *b = bdev_open(spec, &p, err, sizeof(err));

	ck_assert_msg(b != NULL, "%s: %s", spec, err);
	*q = bdev_queue_get(b, &R);
	ck_assert_ptr_nonnull(*q);
	return b;
}

static unsigned char *blocks_buf(uint32_t blocks, int fillc)
{
	unsigned char *p = aligned_alloc(4096, ((size_t)blocks * BS + 4095) &
					       ~(size_t)4095);

	ck_assert_ptr_nonnull(p);
	memset(p, fillc, (size_t)blocks * BS);
	return p;
}

static bool all_byte(const unsigned char *p, size_t len, int c)
{
	for (size_t i = 0; i < len; i++)
		if (p[i] != (unsigned char)c)
			return false;
	return true;
}

/* ---- specs ---- */

START_TEST(spec_parse)
{
	struct bdev_params p = { 0 };
	struct bdev *b;
	uint64_t ns;

	ck_assert_int_eq(bdev_parse_time_ns("250us", &ns), 0);
	ck_assert_uint_eq(ns, 250000);
	ck_assert_int_eq(bdev_parse_time_ns("3ms", &ns), 0);
	ck_assert_uint_eq(ns, 3000000);
	ck_assert_int_eq(bdev_parse_time_ns("2s", &ns), 0);
	ck_assert_uint_eq(ns, 2000000000ull);
	ck_assert_int_eq(bdev_parse_time_ns("7", &ns), 0);
	ck_assert_uint_eq(ns, 7000);
	ck_assert_int_eq(bdev_parse_time_ns("1h", &ns), -EINVAL);
	ck_assert_int_eq(bdev_parse_time_ns("ms", &ns), -EINVAL);

	/* Nesting: base= takes the rest of the spec. */
	b = bdev_open("cache:writeback=0,base=delay:latency=10us,"
		      "base=fault:lba=1-2;9,base=ram:size=2M", &p, err,
		      sizeof(err));
	ck_assert_msg(b != NULL, "%s", err);
	ck_assert_uint_eq(b->size, 2u << 20);
	ck_assert_uint_eq(b->block_size, 512);
	ck_assert_str_eq(b->ops->name, "cache");
	bdev_close(b);

	ck_assert_ptr_null(bdev_open("delay:latency=5parsecs,base=ram:size=1M",
				     &p, err, sizeof(err)));
	ck_assert_ptr_nonnull(strstr(err, "latency"));
	ck_assert_ptr_null(bdev_open("delay:dist=gauss,base=ram:size=1M", &p,
				     err, sizeof(err)));
	ck_assert_ptr_null(bdev_open("fault:lba=9-3,base=ram:size=1M", &p,
				     err, sizeof(err)));
	ck_assert_ptr_null(bdev_open("fault:rate=1.5,base=ram:size=1M", &p,
				     err, sizeof(err)));
	ck_assert_ptr_null(bdev_open("fault:error=eperm,base=ram:size=1M", &p,
				     err, sizeof(err)));
	ck_assert_ptr_null(bdev_open("cache:colour=red,base=ram:size=1M", &p,
				     err, sizeof(err)));
	ck_assert_ptr_nonnull(strstr(err, "colour"));
	/* The base's own errors come through. */
	ck_assert_ptr_null(bdev_open("fault:lba=1,base=ram", &p, err,
				     sizeof(err)));
	ck_assert_ptr_nonnull(strstr(err, "base"));
	/* A crash of something that is not a cache is refused. */
	b = bdev_open("ram:size=1M", &p, err, sizeof(err));
	ck_assert_ptr_nonnull(b);
	ck_assert_int_eq(bdev_cache_crash(b), -EINVAL);
	bdev_close(b);
}
END_TEST

/* ---- delay ---- */

START_TEST(delay_out_of_order)
{
	struct bdev_queue *q;
	struct bdev *b = open_spec("delay:latency=2ms,dist=uniform,seed=7,"
				   "base=ram:size=1M", &q);
	static struct tio t[NIO];
	unsigned char *buf = blocks_buf(NIO, 0);
	int inversions = 0;

	t0 = reactor_now_ns();
	pending = NIO;
	for (int i = 0; i < NIO; i++) {
		tio_prep(&t[i], i, BDEV_READ, (uint64_t)i, 1, buf + i * BS, 0);
		bdev_submit(q, &t[i].io);
	}
	drive();
	ck_assert_int_eq(norder, NIO);
	for (int i = 0; i < NIO; i++)
		ck_assert_int_eq(t[i].io.result, 0);
	for (int i = 1; i < NIO; i++)
		if (order[i] < order[i - 1])
			inversions++;
	ck_assert_int_gt(inversions, 0);
	free(buf);
	bdev_close(b);
}
END_TEST

START_TEST(delay_fixed_parallel_bound)
{
	struct bdev_queue *q;
	struct bdev *b = open_spec("delay:latency=5ms,dist=fixed,parallel=2,"
				   "base=ram:size=1M", &q);
	static struct tio t[8];
	unsigned char *buf = blocks_buf(8, 0x5a);

	t0 = reactor_now_ns();
	pending = 8;
	for (int i = 0; i < 8; i++) {
		tio_prep(&t[i], i, BDEV_WRITE, (uint64_t)i * 8, 1,
			 buf + i * BS, 0);
		bdev_submit(q, &t[i].io);
	}
	drive();
	/* Two at a time in service, fixed latency: FIFO, in pairs. */
	for (int i = 0; i < 8; i++) {
		ck_assert_int_eq(order[i], i);
		ck_assert_int_eq(t[i].io.result, 0);
		ck_assert_msg(done_ns[i] >= (uint64_t)(i / 2 + 1) * 5000000ull,
			      "io %d done after %llu ns", i,
			      (unsigned long long)done_ns[i]);
	}
	/* The writes reached the base. */
	memset(buf, 0, BS);
	ck_assert_int_eq(do_io(q, BDEV_READ, 56, 1, buf, 0), 0);
	ck_assert(all_byte(buf, BS, 0x5a));
	free(buf);
	bdev_close(b);
}
END_TEST

struct eight {
	struct reactor_defer d;
	struct bdev_queue *q;
	struct tio t[8];
	unsigned char *buf;
};

/* Submits the eight reads from inside one pass, as tcqd's data path
 * does; t0 is that pass's time, when they arrived. */
static void eight_submit(struct reactor_defer *d)
{
	struct eight *e = d->arg;

	t0 = R.now_ns;
	for (int i = 0; i < 8; i++) {
		tio_prep(&e->t[i], i, BDEV_READ, (uint64_t)i, 1,
			 e->buf + i * BS, 0);
		bdev_submit(e->q, &e->t[i].io);
	}
}

/* Eight reads of fixed latency (20 ms) through a delay backend, all
 * submitted in one reactor pass: the pass each completed in (its cached
 * time) into done_pass. None may complete before its service time. */
static void delay_eight(const char *spec)
{
	static struct eight e;
	struct bdev *b = open_spec(spec, &e.q);

	e.buf = blocks_buf(8, 0);
	reactor_defer_init(&e.d, eight_submit, &e);
	norder = 0;
	pending = 8;
	reactor_defer(&R, &e.d);
	drive();
	ck_assert_int_eq(norder, 8);
	for (int i = 0; i < 8; i++) {
		unsigned seen = 0;

		for (int k = 0; k < 8; k++)	/* each read exactly once */
			seen += order[k] == i;
		ck_assert_uint_eq(seen, 1);
		ck_assert_int_eq(e.t[i].io.result, 0);
		ck_assert_msg(done_ns[i] >= 20000000ull,	/* never early */
			      "io %d done %llu ns after it arrived", i,
			      (unsigned long long)done_ns[i]);
	}
	free(e.buf);
	bdev_close(b);
}

/* Without a bound all eight are in service together: arrived in one
 * pass, they share one deadline and complete in one pass of the reactor,
 * however late that pass comes on a loaded machine. */
START_TEST(delay_unbounded_overlaps)
{
	delay_eight("delay:latency=20ms,dist=fixed,base=null:size=1M");
	for (int i = 1; i < 8; i++)
		ck_assert_msg(done_pass[i] == done_pass[0],
			      "io %d completed in another pass than io 0", i);
}
END_TEST

/* The control: one at a time, each in a pass of its own, each a whole
 * service time after the one before it (the next starts in the pass the
 * previous completed in). */
START_TEST(delay_parallel_one_serializes)
{
	delay_eight("delay:latency=20ms,dist=fixed,parallel=1,"
		    "base=null:size=1M");
	for (int i = 1; i < 8; i++) {
		ck_assert_int_eq(order[i], i);	/* in arrival order */
		ck_assert_msg(done_pass[i] > done_pass[i - 1],
			      "io %d completed in the pass of io %d", i, i - 1);
		ck_assert_msg(done_pass[i] - done_pass[i - 1] >= 20000000ull,
			      "io %d done %llu ns after io %d", i,
			      (unsigned long long)(done_pass[i] -
						   done_pass[i - 1]), i - 1);
	}
}
END_TEST

/* ---- fault ---- */

START_TEST(fault_ranges)
{
	struct bdev_queue *q;
	struct bdev *b = open_spec("fault:lba=8-15;100,lba=200,"
				   "base=ram:size=1M", &q);
	unsigned char *buf = blocks_buf(16, 0x11);

	ck_assert_int_eq(do_io(q, BDEV_WRITE, 0, 8, buf, 0), 0);
	ck_assert_int_eq(do_io(q, BDEV_READ, 0, 8, buf, 0), 0);
	ck_assert_int_eq(do_io(q, BDEV_READ, 4, 8, buf, 0), -EIO);
	ck_assert_int_eq(do_io(q, BDEV_READ, 15, 1, buf, 0), -EIO);
	ck_assert_int_eq(do_io(q, BDEV_READ, 16, 16, buf, 0), 0);
	ck_assert_int_eq(do_io(q, BDEV_READ, 99, 1, buf, 0), 0);
	ck_assert_int_eq(do_io(q, BDEV_READ, 100, 1, buf, 0), -EIO);
	ck_assert_int_eq(do_io(q, BDEV_READ, 101, 1, buf, 0), 0);
	ck_assert_int_eq(do_io(q, BDEV_WRITE, 200, 1, buf, 0), -EIO);
	ck_assert_int_eq(do_io(q, BDEV_FLUSH, 0, 0, NULL, 0), 0);
	bdev_close(b);

	/* ops=write: reads of the range work, writes fail with ENOSPC
	 * and change nothing. */
	b = open_spec("fault:lba=8-15,ops=write,error=enospc,"
		      "base=ram:size=1M", &q);
	memset(buf, 0x77, 8 * BS);
	ck_assert_int_eq(do_io(q, BDEV_WRITE, 8, 8, buf, 0), -ENOSPC);
	ck_assert_int_eq(do_io(q, BDEV_WRITE_ZEROES, 10, 1, NULL, 0), -ENOSPC);
	ck_assert_int_eq(do_io(q, BDEV_READ, 8, 8, buf, 0), 0);
	ck_assert(all_byte(buf, 8 * BS, 0));
	ck_assert_int_eq(do_io(q, BDEV_WRITE, 0, 8, buf, 0), 0);
	free(buf);
	bdev_close(b);
}
END_TEST

START_TEST(fault_rate)
{
	struct bdev_queue *q;
	struct bdev *b;
	unsigned char *buf = blocks_buf(1, 0);
	int fails = 0;

	b = open_spec("fault:rate=0.5,seed=42,ops=read,base=ram:size=1M", &q);
	for (int i = 0; i < 200; i++) {
		int rc = do_io(q, BDEV_READ, (uint64_t)i, 1, buf, 0);

		ck_assert(rc == 0 || rc == -EIO);
		fails += rc != 0;
	}
	ck_assert_int_gt(fails, 60);
	ck_assert_int_lt(fails, 140);
	/* ops=read: writes and flushes never fail */
	for (int i = 0; i < 50; i++)
		ck_assert_int_eq(do_io(q, BDEV_WRITE, (uint64_t)i, 1, buf, 0), 0);
	ck_assert_int_eq(do_io(q, BDEV_FLUSH, 0, 0, NULL, 0), 0);
	bdev_close(b);

	b = open_spec("fault:rate=1,base=ram:size=1M", &q);
	ck_assert_int_eq(do_io(q, BDEV_FLUSH, 0, 0, NULL, 0), -EIO);
	ck_assert_int_eq(do_io(q, BDEV_WRITE, 3, 1, buf, 0), -EIO);
	bdev_close(b);
	b = open_spec("fault:rate=0,base=ram:size=1M", &q);
	for (int i = 0; i < 50; i++)
		ck_assert_int_eq(do_io(q, BDEV_READ, (uint64_t)i, 1, buf, 0), 0);
	free(buf);
	bdev_close(b);
}
END_TEST

/* ---- cache ---- */

START_TEST(cache_crash_semantics)
{
	struct bdev_queue *q;
	struct bdev *b = open_spec("cache:base=ram:size=1M", &q);
	unsigned char *buf = blocks_buf(8, 0);

	/* A: FUA. B: plain, then flushed. C: plain, never flushed. */
	memset(buf, 0xaa, 8 * BS);
	ck_assert_int_eq(do_io(q, BDEV_WRITE, 0, 8, buf, BDEV_FUA), 0);
	memset(buf, 0xbb, 8 * BS);
	ck_assert_int_eq(do_io(q, BDEV_WRITE, 64, 8, buf, 0), 0);
	ck_assert_int_eq(do_io(q, BDEV_FLUSH, 0, 0, NULL, 0), 0);
	memset(buf, 0xcc, 8 * BS);
	ck_assert_int_eq(do_io(q, BDEV_WRITE, 130, 8, buf, 0), 0);
	/* One block of C straddles nothing; overwrite one block of B after
	 * the flush: the flushed value must come back, not the new one. */
	memset(buf, 0xdd, BS);
	ck_assert_int_eq(do_io(q, BDEV_WRITE, 66, 1, buf, 0), 0);

	/* Reads see the cache, merged with the base around it. */
	memset(buf, 0, 8 * BS);
	ck_assert_int_eq(do_io(q, BDEV_READ, 128, 8, buf, 0), 0);
	ck_assert(all_byte(buf, 2 * BS, 0));
	ck_assert(all_byte(buf + 2 * BS, 6 * BS, 0xcc));
	ck_assert_int_eq(do_io(q, BDEV_READ, 64, 4, buf, 0), 0);
	ck_assert(all_byte(buf + 2 * BS, BS, 0xdd));

	ck_assert_int_eq(bdev_cache_crash(b), 9);	/* 8 of C + 1 */

	ck_assert_int_eq(do_io(q, BDEV_READ, 0, 8, buf, 0), 0);
	ck_assert(all_byte(buf, 8 * BS, 0xaa));
	ck_assert_int_eq(do_io(q, BDEV_READ, 64, 8, buf, 0), 0);
	ck_assert(all_byte(buf, 8 * BS, 0xbb));
	ck_assert_int_eq(do_io(q, BDEV_READ, 130, 8, buf, 0), 0);
	ck_assert(all_byte(buf, 8 * BS, 0));
	/* Nothing left to drop. */
	ck_assert_int_eq(bdev_cache_crash(b), 0);
	free(buf);
	bdev_close(b);
}
END_TEST

START_TEST(cache_fua_flushes_older_writes_too)
{
	struct bdev_queue *q;
	struct bdev *b = open_spec("cache:base=ram:size=1M", &q);
	unsigned char *buf = blocks_buf(1, 0x31);

	/* Many writes in flight at once with a FUA one in the middle. */
	static struct tio t[NIO];
	static unsigned char data[NIO][BS] __attribute__((aligned(4096)));

	pending = NIO;
	for (int i = 0; i < NIO; i++) {
		memset(data[i], i + 1, BS);
		tio_prep(&t[i], i, BDEV_WRITE, (uint64_t)i * 60, 1, data[i],
			 i == NIO / 2 ? BDEV_FUA : 0);
		bdev_submit(q, &t[i].io);
	}
	drive();
	for (int i = 0; i < NIO; i++)
		ck_assert_int_eq(t[i].io.result, 0);
	bdev_cache_crash(b);
	/* The FUA write survived; so did everything acknowledged before
	 * it was submitted (we flush the whole cache). */
	for (int i = 0; i <= NIO / 2; i++) {
		ck_assert_int_eq(do_io(q, BDEV_READ, (uint64_t)i * 60, 1, buf,
				       0), 0);
		ck_assert_msg(all_byte(buf, BS, i + 1), "block of write %d", i);
	}
	free(buf);
	bdev_close(b);
}
END_TEST

START_TEST(cache_background_writeback)
{
	struct bdev_queue *q;
	struct bdev *b = open_spec("cache:writeback=5,base=ram:size=1M", &q);
	unsigned char *buf = blocks_buf(4, 0x42);

	ck_assert_int_eq(do_io(q, BDEV_WRITE, 300, 4, buf, 0), 0);
	run_for(60);
	ck_assert_int_eq(bdev_cache_crash(b), 0);
	memset(buf, 0, 4 * BS);
	ck_assert_int_eq(do_io(q, BDEV_READ, 300, 4, buf, 0), 0);
	ck_assert(all_byte(buf, 4 * BS, 0x42));
	free(buf);
	bdev_close(b);
}
END_TEST

START_TEST(cache_discard_and_zeroes)
{
	struct bdev_queue *q;
	struct bdev *b = open_spec("cache:base=ram:size=1M", &q);
	unsigned char *buf = blocks_buf(64, 0x99);

	ck_assert_int_eq(do_io(q, BDEV_WRITE, 0, 64, buf, 0), 0);
	ck_assert_int_eq(do_io(q, BDEV_FLUSH, 0, 0, NULL, 0), 0);
	ck_assert_int_eq(do_io(q, BDEV_WRITE, 0, 64, buf, 0), 0); /* dirty */
	ck_assert_int_eq(do_io(q, BDEV_WRITE_ZEROES, 8, 8, NULL, 0), 0);
	ck_assert_int_eq(do_io(q, BDEV_DISCARD, 32, 8, NULL, 0), 0);
	ck_assert_int_eq(do_io(q, BDEV_READ, 0, 64, buf, 0), 0);
	ck_assert(all_byte(buf, 8 * BS, 0x99));
	ck_assert(all_byte(buf + 8 * BS, 8 * BS, 0));
	ck_assert(all_byte(buf + 16 * BS, 16 * BS, 0x99));
	ck_assert(all_byte(buf + 32 * BS, 8 * BS, 0));
	ck_assert(all_byte(buf + 40 * BS, 24 * BS, 0x99));
	/* Zeroing a whole 1 MiB LUN walks the table quickly. */
	ck_assert_int_eq(do_io(q, BDEV_WRITE_ZEROES, 0, 2048, NULL, 0), 0);
	ck_assert_int_eq(do_io(q, BDEV_READ, 0, 64, buf, 0), 0);
	ck_assert(all_byte(buf, 64 * BS, 0));
	free(buf);
	bdev_close(b);
}
END_TEST

/* Cache over an out-of-order delay: flushed data all survives. */
START_TEST(cache_over_delay)
{
	struct bdev_queue *q;
	struct bdev *b = open_spec("cache:writeback=1,base=delay:latency=1ms,"
				   "dist=exp,seed=3,base=ram:size=1M", &q);
	static struct tio t[NIO];
	static unsigned char data[NIO][4 * BS] __attribute__((aligned(4096)));
	unsigned char *buf = blocks_buf(4, 0);

	for (int round = 0; round < 3; round++) {
		pending = NIO;
		for (int i = 0; i < NIO; i++) {
			memset(data[i], round * NIO + i + 1, sizeof(data[i]));
			/* overlapping neighbours: block i*3 .. i*3+3 */
			tio_prep(&t[i], i, BDEV_WRITE, (uint64_t)i * 3, 4,
				 data[i], 0);
			bdev_submit(q, &t[i].io);
			if (i % 4 == 0)
				run_for(1);	/* let write-back race */
		}
		drive();
		ck_assert_int_eq(do_io(q, BDEV_FLUSH, 0, 0, NULL, 0), 0);
	}
	ck_assert_int_eq(bdev_cache_crash(b), 0);
	/* Later writes win: each block holds the last writer's byte. */
	for (int i = 0; i < NIO; i++) {
		ck_assert_int_eq(do_io(q, BDEV_READ, (uint64_t)i * 3, 3, buf,
				       0), 0);
		ck_assert_msg(all_byte(buf, 3 * BS, 2 * NIO + i + 1),
			      "write %d", i);
	}
	free(buf);
	bdev_close(b);
}
END_TEST

/* Closing a wrapper's queue closes its base's queue of the same reactor,
 * down the stack, on that reactor: a base queue holds reactor state (the
 * disk model's pending write-cache destage keeps its queue's timer
 * armed), and bdev_close of the stack may run on another reactor. */
START_TEST(wrapper_queue_put_closes_base_queues)
{
	struct bdev_queue *q;
	struct bdev *b = open_spec("cache:writeback=0,base=delay:latency=1ms,"
				   "base=disk:model=hdd,capacity=1G,"
				   "base=ram:size=1M", &q);
	unsigned char *buf = blocks_buf(8, 0x3c);
	struct bdev *level = b;

	ck_assert_int_eq(do_io(q, BDEV_WRITE, 0, 8, buf, BDEV_FUA), 0);
	ck_assert_int_eq(do_io(q, BDEV_WRITE, 64, 8, buf, 0), 0);
	ck_assert_int_eq(bdev_queue_put(b, &R), 0);
	for (int depth = 0; depth < 4; depth++) {
		ck_assert_msg(level->queues[R.index] == NULL,
			      "%s keeps its queue", level->ops->name);
		if (depth < 3)	/* each wrapper's state starts with its base */
			level = *(struct bdev **)level->priv;
	}
	ck_assert_str_eq(level->ops->name, "ram");
	free(buf);
	bdev_close(b);
}
END_TEST

/* ---- LUN settings from the configuration ---- */

START_TEST(config_barrier_qam)
{
	static const char text[] =
		"[global]\nlisten = 127.0.0.1:0\n"
		"[target iqn.2026-11.org.tcq:t]\n"
		"[lun iqn.2026-11.org.tcq:t 0]\n"
		"backend = cache:writeback=10,base=delay:latency=1ms,base=aio\n"
		"path = /nonexistent/x.img\nsize = 1M\ncreate = yes\n"
		"barrier = flush\nqam = unrestricted\n"
		"[lun iqn.2026-11.org.tcq:t 1]\n"
		"backend = fault:rate=0.1,base=ram:size=1M\n"
		"[lun iqn.2026-11.org.tcq:t 2]\n"
		"backend = delay:latency=1ms\n";	/* base aio: needs a path */
	struct cfg c;
	uint8_t v;

	ck_assert_int_eq(cfg_parse_barrier("drain", &v, err, sizeof(err)), 0);
	ck_assert_int_eq(v, BARRIER_DRAIN);
	ck_assert_int_eq(cfg_parse_barrier("flush", &v, err, sizeof(err)), 0);
	ck_assert_int_eq(v, BARRIER_FLUSH);
	ck_assert_int_eq(cfg_parse_barrier("ignore", &v, err, sizeof(err)), 0);
	ck_assert_int_eq(v, BARRIER_IGNORE);
	ck_assert_int_eq(cfg_parse_barrier("fence", &v, err, sizeof(err)), -1);
	ck_assert_int_eq(cfg_parse_qam("unrestricted", &v, err, sizeof(err)), 0);
	ck_assert_int_eq(v, 1);
	ck_assert_int_eq(cfg_parse_qam("restricted", &v, err, sizeof(err)), 0);
	ck_assert_int_eq(v, 0);
	ck_assert_int_eq(cfg_parse_qam("loose", &v, err, sizeof(err)), -1);

	ck_assert(bdev_spec_uses_path(""));
	ck_assert(bdev_spec_uses_path("aio:direct=0"));
	ck_assert(bdev_spec_uses_path("delay:latency=1ms"));
	ck_assert(bdev_spec_uses_path("cache:base=fault:lba=1,base=aio"));
	ck_assert(!bdev_spec_uses_path("cache:base=ram:size=1M"));
	ck_assert(!bdev_spec_uses_path("null"));

	cfg_init(&c);
	ck_assert_int_eq(cfg_load_string(&c, "t.conf", text), -1);
	ck_assert_int_eq(c.nluns, 3);
	ck_assert_int_eq(c.luns[0]->barrier, BARRIER_FLUSH);
	ck_assert_int_eq(c.luns[0]->qam, 1);
	ck_assert_int_eq(c.luns[1]->barrier, BARRIER_DRAIN);
	ck_assert_int_eq(c.luns[1]->qam, 0);
	/* Only LUN 2 is wrong: a wrapper over aio without a path. */
	ck_assert_int_eq(c.nerrors, 1);
	ck_assert_ptr_nonnull(strstr(c.msgs[0], "no path"));
	cfg_free(&c);

	cfg_init(&c);
	ck_assert_int_eq(cfg_load_string(&c, "t.conf",
		"[target iqn.2026-11.org.tcq:t]\n"
		"[lun iqn.2026-11.org.tcq:t 0]\nbackend = null\n"
		"barrier = sometimes\n"), -1);
	ck_assert_int_eq(c.nerrors, 1);
	ck_assert_ptr_nonnull(strstr(c.msgs[0], "drain, flush or ignore"));
	cfg_free(&c);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("wrap");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 30);
	harness_add(tc, spec_parse);
	harness_add(tc, delay_out_of_order);
	harness_add(tc, delay_fixed_parallel_bound);
	harness_add(tc, delay_unbounded_overlaps);
	harness_add(tc, delay_parallel_one_serializes);
	harness_add(tc, fault_ranges);
	harness_add(tc, fault_rate);
	harness_add(tc, cache_crash_semantics);
	harness_add(tc, cache_fua_flushes_older_writes_too);
	harness_add(tc, cache_background_writeback);
	harness_add(tc, cache_discard_and_zeroes);
	harness_add(tc, cache_over_delay);
	harness_add(tc, wrapper_queue_put_closes_base_queues);
	harness_add(tc, config_barrier_qam);
	suite_add_tcase(s, tc);
	return s;
}

int main(int argc, char **argv)
{
	return harness_main(argc, argv, suite);
}
