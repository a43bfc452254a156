/*
 * Unit tests of sequential prefetch (backend/prefetch.c) through the block
 * layer, on a ram LUN with prefetch on: the stream detector (sequential
 * detected, random not, several streams at once), the window's growth,
 * the memory bound, and never a stale read (a write drops what it
 * overlaps; a read-ahead in flight when a write passes it is not
 * installed). Expected figures come from the rules in prefetch.c's header
 * (PREFETCH_TRIGGER reads in a row, the first window twice the request,
 * doubling to a quarter of prefetch_max), never from a run.
 *
 * ram copies a read's data when it is submitted and completes it on the
 * next pass, in submission order: a write submitted in the same pass as a
 * read-ahead lands after the read-ahead took its data, before it
 * completes — the race the generation rule is for.
 */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "backend/bdev.h"
#include "backend/prefetch.h"
#include "tcq/bufpool.h"
#include "tcq/reactor.h"
#include "tests/unit/harness.h"

#define SIZE (4ull << 20)
#define STAMP(blk, ver) ((uint32_t)(blk) * 2654435761u + (ver))

static struct reactor R;
static struct bdev *B;
static struct bdev_queue *Q;
static int pending;
static bool all_done;
static char err[256];

static void io_done(struct bdev_io *io)
{
	(void)io;
	if (--pending == 0) {
		all_done = true;
		reactor_stop(&R);
	}
}

static void drive(void)
{
	all_done = pending == 0;
	if (!all_done)
		harness_run_until(&R, &all_done, HARNESS_WATCHDOG_MS);
	ck_assert_int_eq(pending, 0);
}

static void submit(struct bdev_io *io, enum bdev_op op, uint64_t off,
		   uint64_t len, void *buf)
{
	memset(io, 0, sizeof(*io));
	io->op = op;
	io->offset = off;
	io->len = len;
	io->buf = buf;
	io->done = io_done;
	pending++;
	bdev_submit(Q, io);
}

/* Every I/O submitted so far, read-aheads included, has completed: ram
 * completes in submission order, so a flush behind them ends last. */
static void settle(void)
{
	struct bdev_io io;

	submit(&io, BDEV_FLUSH, 0, 0, NULL);
	drive();
}

/* Each 512-byte block holds its number and a version in every word. */
static void stamp(void *buf, uint64_t off, uint64_t len, uint32_t ver)
{
	uint32_t *w = buf;

	for (uint64_t i = 0; i < len / 4; i++)
		w[i] = STAMP((off + i * 4) / 512, ver);
}

static void expect_stamp(const void *buf, uint64_t off, uint64_t len,
			 uint32_t ver)
{
	const uint32_t *w = buf;
	uint64_t i = 0;

	/* One assertion per buffer: check counts each one. */
	while (i < len / 4 && w[i] == STAMP((off + i * 4) / 512, ver))
		i++;
	ck_assert_msg(i == len / 4, "byte %llu: version %u expected",
		      (unsigned long long)(off + i * 4), ver);
}

static void write_ver(uint64_t off, uint64_t len, uint32_t ver)
{
	void *buf = bufpool_alloc(len);
	struct bdev_io io;

	stamp(buf, off, len, ver);
	submit(&io, BDEV_WRITE, off, len, buf);
	drive();
	ck_assert_int_eq(io.result, 0);
	bufpool_free(buf, len);
}

/* One read, waited for, its data checked against version ver. */
static void read_ver(uint64_t off, uint64_t len, uint32_t ver)
{
	void *buf = bufpool_alloc(len);
	struct bdev_io io;

	memset(buf, 0xee, len);
	submit(&io, BDEV_READ, off, len, buf);
	ck_assert_int_eq(pending, 1);	/* never completed inside submit */
	drive();
	ck_assert_int_eq(io.result, 0);
	expect_stamp(buf, off, len, ver);
	bufpool_free(buf, len);
	settle();
}

static struct bdev_prefetch_stats st(void)
{
	struct bdev_prefetch_stats s;

	ck_assert_int_eq(bdev_prefetch_stats(B, &s), 0);
	return s;
}

static void setup_max(uint64_t max)
{
	ck_assert_int_eq(reactor_init(&R, 0), 0);
	B = bdev_open("ram:size=4M", NULL, err, sizeof(err));
	ck_assert_msg(B != NULL, "%s", err);
	Q = bdev_queue_get(B, &R);
	ck_assert_ptr_nonnull(Q);
	pending = 0;
	for (uint64_t off = 0; off < SIZE; off += 1 << 20)
		write_ver(off, 1 << 20, 1);	/* before prefetch is on */
	ck_assert_int_eq(bdev_set_prefetch(B, BDEV_PREFETCH_ON, max), 0);
}

static void setup(void)
{
	setup_max(4u << 20);
}

static void teardown(void)
{
	settle();
	ck_assert_int_eq(bdev_queue_put(B, &R), 0);
	bdev_close(B);
	reactor_fini(&R);
	bufpool_thread_drain();
}

/* PREFETCH_TRIGGER reads in a row, then the stream reads ahead: later
 * reads are served from the buffer. Then (everything dropped, room for
 * every window) three streams read in turns: each is detected on its own
 * and served from its buffers once it has made its PREFETCH_TRIGGER
 * reads. */
START_TEST(sequential_streams)
{
	const uint64_t len = 64 << 10, len3 = 128 << 10;
	const uint64_t base[3] = { 1 << 20, 2 << 20, 3 << 20 };
	struct bdev_prefetch_stats s0;

	for (unsigned i = 0; i < 8; i++) {
		read_ver(i * len, len, 1);
		if (i + 1 < PREFETCH_TRIGGER)
			ck_assert_uint_eq(st().prefetched, 0);
	}
	ck_assert_uint_gt(st().prefetched, 0);
	ck_assert_uint_eq(st().misses, PREFETCH_TRIGGER);
	ck_assert_uint_eq(st().hits, 8 - PREFETCH_TRIGGER);
	ck_assert_uint_eq(st().dropped, 0);

	ck_assert_int_eq(bdev_set_prefetch(B, BDEV_PREFETCH_OFF, 4 << 20), 0);
	ck_assert_int_eq(bdev_set_prefetch(B, BDEV_PREFETCH_ON, 64 << 20), 0);
	s0 = st();
	for (unsigned i = 0; i < 8; i++)
		for (unsigned k = 0; k < 3; k++)
			read_ver(base[k] + i * len3, len3, 1);
	ck_assert_uint_eq(st().misses - s0.misses, 3 * PREFETCH_TRIGGER);
	ck_assert_uint_eq(st().hits - s0.hits, 3 * (8 - PREFETCH_TRIGGER));
}
END_TEST

/* Random reads, 32 at a time, none starting where a recent one ended:
 * no read-ahead at all. */
START_TEST(random_not)
{
	const uint64_t len = 4096, n = SIZE / len;
	struct bdev_io io[32];
	void *buf = bufpool_alloc(32 * len);

	for (uint64_t round = 0; round < 8; round++) {
		for (uint64_t i = 0; i < 32; i++) {
			uint64_t k = round * 32 + i;

			submit(&io[i], BDEV_READ, (k * 7919 % n) * len, len,
			       (char *)buf + i * len);
		}
		drive();
		for (uint64_t i = 0; i < 32; i++) {
			uint64_t k = round * 32 + i;

			ck_assert_int_eq(io[i].result, 0);
			expect_stamp((char *)buf + i * len,
				     (k * 7919 % n) * len, len, 1);
		}
	}
	settle();
	ck_assert_uint_eq(st().prefetched, 0);
	ck_assert_uint_eq(st().hits, 0);
	ck_assert_uint_eq(st().misses, 256);
	ck_assert_uint_eq(st().held, 0);
	bufpool_free(buf, 32 * len);
}
END_TEST

/* Bytes read ahead after each read, from the window's rules. 128K reads
 * (prefetch_max 4M: a 1M cap): the window is read in pieces of 256K, as
 * many as keep a window ahead of the next read: the third read reads
 * 256K (twice the request); the fourth, 384K ahead of a 512K window, two
 * pieces (768K in all); the fifth, 512K ahead of 1M, two more (1280K).
 * Then 4K reads at prefetch_max 256K: the window starts at 8K, doubles
 * while the stream keeps reading (16K, 32K), and stops at 64K (a quarter
 * of prefetch_max); a stream with a window left ahead reads no more. */
static void expect_after(uint64_t at, uint64_t len, const uint64_t *after,
			 unsigned n)
{
	uint64_t b0 = st().prefetched;

	for (unsigned i = 0; i < n; i++) {
		read_ver(at + i * len, len, 1);
		ck_assert_msg(st().prefetched - b0 == after[i],
			      "after read %u of %llu: %llu bytes read ahead, "
			      "%llu expected", i + 1, (unsigned long long)len,
			      (unsigned long long)(st().prefetched - b0),
			      (unsigned long long)after[i]);
	}
}

START_TEST(window_growth)
{
	static const uint64_t pieces[] = { 0, 0, 256 << 10, 768 << 10,
					   1280 << 10 };
	static const uint64_t small[] = {
		0, 0, 8 << 10,			/* reads 1-3: the third starts */
		24 << 10, 56 << 10, 120 << 10,	/* 16K, 32K, 64K */
		120 << 10, 120 << 10,		/* enough ahead */
	};
	const uint64_t at = 2 << 20;

	expect_after(0, 128 << 10, pieces, 5);
	ck_assert_int_eq(bdev_set_prefetch(B, BDEV_PREFETCH_OFF, 4 << 20), 0);
	ck_assert_int_eq(bdev_set_prefetch(B, BDEV_PREFETCH_ON, 256 << 10), 0);
	expect_after(at, 4096, small, 8);
	/* Further on, each read-ahead is the 64K cap. */
	for (unsigned i = 8; i < 200; i++) {
		uint64_t before = st().prefetched;

		read_ver(at + i * 4096, 4096, 1);
		ck_assert(st().prefetched == before ||
			  st().prefetched == before + (64 << 10));
	}
	ck_assert_uint_le(st().held, 256 << 10);
}
END_TEST

/* Three streams on a small prefetch_max (their windows do not all fit):
 * the buffers never hold more than it, and every read returns the
 * medium's data. */
START_TEST(memory_bounded)
{
	const uint64_t len = 16 << 10;

	ck_assert_int_eq(bdev_set_prefetch(B, BDEV_PREFETCH_ON, 128 << 10), 0);
	for (unsigned i = 0; i < 40; i++)
		for (unsigned s = 0; s < 3; s++) {
			read_ver((uint64_t)s * (1 << 20) + i * len, len, 1);
			ck_assert_uint_le(st().held, 128 << 10);
		}
	ck_assert_uint_gt(st().hits, 0);
	/* Off drops every buffer. */
	ck_assert_int_eq(bdev_set_prefetch(B, BDEV_PREFETCH_OFF, 128 << 10), 0);
	ck_assert_uint_eq(st().held, 0);
	ck_assert(!st().on);
	/* auto on a backend that does not read O_DIRECT: off. */
	ck_assert_int_eq(bdev_set_prefetch(B, BDEV_PREFETCH_AUTO, 4 << 20), 0);
	ck_assert(!st().on);
}
END_TEST

/* A write to a range read ahead drops it: the next read of that range
 * goes to the disk and returns what was written, its neighbours still
 * come back right. Every kind of write. */
START_TEST(write_invalidates)
{
	const uint64_t len = 64 << 10;
	static const enum bdev_op ops[] = { BDEV_WRITE, BDEV_WRITE_ZEROES,
					    BDEV_DISCARD };

	for (unsigned k = 0; k < 3; k++) {
		uint64_t at = k * (1ull << 20);
		struct bdev_io io;
		void *z = bufpool_alloc(len);

		for (unsigned i = 0; i < 4; i++)
			read_ver(at + i * len, len, 1);
		ck_assert_uint_gt(st().held, 0);	/* ahead: at + 4 len */
		if (ops[k] == BDEV_WRITE) {
			write_ver(at + 5 * len, len, 2);
		} else {
			submit(&io, ops[k], at + 5 * len, len, NULL);
			drive();
			ck_assert_int_eq(io.result, 0);
		}
		ck_assert_uint_gt(st().dropped, 0);
		read_ver(at + 4 * len, len, 1);
		if (ops[k] == BDEV_WRITE) {
			read_ver(at + 5 * len, len, 2);
		} else {	/* ram reads back zeros */
			memset(z, 0xee, len);
			submit(&io, BDEV_READ, at + 5 * len, len, z);
			drive();
			ck_assert(((uint8_t *)z)[0] == 0 &&
				  !memcmp(z, (uint8_t *)z + 1, len - 1));
			settle();
		}
		read_ver(at + 6 * len, len, 1);
		bufpool_free(z, len);
	}
}
END_TEST

/* The third read starts a read-ahead of [3 len, 5 len), which ram copies
 * at once; a write to 4 len is submitted in the same pass, so the
 * read-ahead holds the old data when it completes: it must not be
 * installed, and the read of 4 len returns the write's data. */
START_TEST(inflight_overtaken)
{
	const uint64_t len = 64 << 10;
	void *r = bufpool_alloc(3 * len), *w = bufpool_alloc(len);
	struct bdev_io io[4];

	for (unsigned i = 0; i < 3; i++)
		submit(&io[i], BDEV_READ, i * len, len, (char *)r + i * len);
	stamp(w, 4 * len, len, 2);
	submit(&io[3], BDEV_WRITE, 4 * len, len, w);
	drive();
	settle();
	for (unsigned i = 0; i < 4; i++)
		ck_assert_int_eq(io[i].result, 0);
	expect_stamp(r, 0, 3 * len, 1);
	ck_assert_uint_eq(st().prefetched, 0);	/* never installed */
	ck_assert_uint_eq(st().dropped, 2 * len);
	read_ver(3 * len, len, 1);
	read_ver(4 * len, len, 2);
	bufpool_free(r, 3 * len);
	bufpool_free(w, len);
}
END_TEST

static Suite *prefetch_suite(void)
{
	Suite *s = suite_create("prefetch");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 30);
	harness_add(tc, sequential_streams);
	harness_add(tc, random_not);
	harness_add(tc, window_growth);
	harness_add(tc, memory_bounded);
	harness_add(tc, write_invalidates);
	harness_add(tc, inflight_overtaken);
	suite_add_tcase(s, tc);
	return s;
}

int main(int argc, char **argv)
{
	return harness_main(argc, argv, prefetch_suite);
}
