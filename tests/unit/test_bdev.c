/*
 * Unit tests for the block layer and backends (aio on a temp file, ram,
 * null), the depth cap, spec errors, and the buffer pool. A reactor runs
 * in the test thread to drive completions.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "backend/bdev.h"
#include "backend/bdev_priv.h"
#include "tcq/bufpool.h"
#include "tcq/log.h"
#include "tcq/reactor.h"
#include "tests/unit/harness.h"

static struct reactor R;
static char tmpdir[512];
static char path[600];
static char err[256];
static int pending;
static bool all_done;	/* pending came down to 0 */

static void setup(void)
{
	const char *t = getenv("TMPDIR");

	ck_assert_int_eq(reactor_init(&R, 0), 0);
	snprintf(tmpdir, sizeof(tmpdir), "%s/tcq-bdev-XXXXXX",
		 t && *t ? t : "/tmp");
	ck_assert_ptr_nonnull(mkdtemp(tmpdir));
	snprintf(path, sizeof(path), "%s/lun.img", tmpdir);
	err[0] = 0;
}

static void teardown(void)
{
	unlink(path);
	rmdir(tmpdir);
	reactor_fini(&R);
	bufpool_thread_drain();
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

static void io_done(struct bdev_io *io)
{
	if (--pending == 0) {
		all_done = true;
		reactor_stop(&R);
	}
}

static void io_prep(struct bdev_io *io, enum bdev_op op, uint64_t off,
		    uint64_t len, void *buf, unsigned flags)
{
	memset(io, 0, sizeof(*io));
	io->op = op;
	io->offset = off;
	io->len = len;
	io->buf = buf;
	io->flags = flags;
	io->result = 12345;
	io->done = io_done;
}

/* Submits one I/O and waits for it; returns its result. */
static int do_io(struct bdev_queue *q, enum bdev_op op, uint64_t off,
		 uint64_t len, void *buf, unsigned flags)
{
	struct bdev_io io;

	io_prep(&io, op, off, len, buf, flags);
	pending = 1;
	bdev_submit(q, &io);
	ck_assert_int_eq(pending, 1);	/* never completed inside submit */
	drive();
	return io.result;
}

static void fill(unsigned char *p, size_t len, unsigned seed)
{
	for (size_t i = 0; i < len; i++)
		p[i] = (unsigned char)(seed * 31 + i * 7 + (i >> 9));
}

static bool all_zero(const unsigned char *p, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (p[i])
			return false;
	return true;
}

/* ---- aio ---- */

START_TEST(aio_create_sparse)
{
	struct bdev_params p = { .path = path, .size = 64ull << 20,
				 .create = true };
	struct stat st;
	struct bdev *b = bdev_open("aio", &p, err, sizeof(err));

	ck_assert_msg(b != NULL, "%s", err);
	ck_assert_uint_eq(b->size, 64ull << 20);
	ck_assert_uint_eq(b->block_size, 512);
	ck_assert_str_eq(b->spec, "aio");
	ck_assert(b->thin);
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_int_eq(st.st_size, 64 << 20);
	ck_assert_int_lt(st.st_blocks * 512, 1 << 20);	/* sparse */
	bdev_close(b);

	/* Exists now: reopen without size takes the file's size; a larger
	 * size extends it. */
	p.size = 0;
	p.create = false;
	b = bdev_open(path, &p, err, sizeof(err));	/* bare path = aio */
	ck_assert_msg(b != NULL, "%s", err);
	ck_assert_uint_eq(b->size, 64ull << 20);
	bdev_close(b);
	p.size = 128ull << 20;
	p.block_size = 4096;
	b = bdev_open("aio", &p, err, sizeof(err));
	ck_assert_msg(b != NULL, "%s", err);
	ck_assert_uint_eq(b->size, 128ull << 20);
	ck_assert_uint_eq(b->block_size, 4096);
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_int_eq(st.st_size, 128 << 20);
	bdev_close(b);

	/* missing file without create: error, no file made */
	unlink(path);
	p.create = false;
	ck_assert_ptr_null(bdev_open("aio", &p, err, sizeof(err)));
	ck_assert_ptr_nonnull(strstr(err, ": no such file (create=yes with a size creates it)"));
	ck_assert_int_ne(access(path, F_OK), 0);
}
END_TEST

static void aio_pattern(const char *spec)
{
	struct bdev_params p = { .path = path, .size = 8ull << 20,
				 .create = true, .queue_depth = 16 };
	struct bdev *b = bdev_open(spec, &p, err, sizeof(err));
	struct bdev_queue *q;
	struct bdev_io ios[8];
	unsigned char *w, *r;
	const size_t chunk = 64 << 10;

	ck_assert_msg(b != NULL, "%s", err);
	q = bdev_queue_get(b, &R);
	ck_assert_ptr_nonnull(q);
	ck_assert_ptr_eq(bdev_queue_get(b, &R), q);
	ck_assert_ptr_eq(q->reactor, &R);
	w = bufpool_alloc(8 * chunk);
	r = bufpool_alloc(8 * chunk);
	fill(w, 8 * chunk, 1);
	memset(r, 0xee, 8 * chunk);

	/* 8 writes batched in one pass, the last with FUA */
	pending = 8;
	for (int i = 0; i < 8; i++) {
		io_prep(&ios[i], BDEV_WRITE, 1048576 + i * chunk, chunk,
			w + i * chunk, i == 7 ? BDEV_FUA : 0);
		bdev_submit(q, &ios[i]);
	}
	drive();
	for (int i = 0; i < 8; i++)
		ck_assert_int_eq(ios[i].result, 0);
	ck_assert_uint_eq(q->inflight, 0);

	ck_assert_int_eq(do_io(q, BDEV_FLUSH, 0, 0, NULL, 0), 0);
	ck_assert_int_eq(do_io(q, BDEV_READ, 1048576, 8 * chunk, r, 0), 0);
	ck_assert_mem_eq(r, w, 8 * chunk);

	/* FUA write of a single block at the very end */
	fill(w, 4096, 9);
	ck_assert_int_eq(do_io(q, BDEV_WRITE, (8 << 20) - 4096, 4096, w,
			       BDEV_FUA), 0);
	ck_assert_int_eq(do_io(q, BDEV_READ, (8 << 20) - 4096, 4096, r, 0), 0);
	ck_assert_mem_eq(r, w, 4096);

	/* write zeroes and discard read back as zeros */
	ck_assert_int_eq(do_io(q, BDEV_WRITE_ZEROES, 1048576, chunk, NULL, 0),
			 0);
	ck_assert_int_eq(do_io(q, BDEV_DISCARD, 1048576 + chunk, chunk, NULL,
			       0), 0);
	memset(r, 0xee, 2 * chunk);
	ck_assert_int_eq(do_io(q, BDEV_READ, 1048576, 2 * chunk, r, 0), 0);
	ck_assert(all_zero(r, 2 * chunk));

	/* bad input is refused, completed later, never reaches the file */
	ck_assert_int_eq(do_io(q, BDEV_READ, 8 << 20, 4096, r, 0), -ERANGE);
	ck_assert_int_eq(do_io(q, BDEV_READ, ~0ull - 511, 4096, r, 0),
			 -ERANGE);
	ck_assert_int_eq(do_io(q, BDEV_WRITE, 100, 512, w, 0), -EINVAL);
	ck_assert_uint_eq(q->inflight, 0);

	bufpool_free(w, 8 * chunk);
	bufpool_free(r, 8 * chunk);
	bdev_close(b);
}

START_TEST(aio_rw_direct)
{
	aio_pattern("aio");
}
END_TEST

START_TEST(aio_rw_buffered)
{
	aio_pattern("aio:direct=0");
}
END_TEST

START_TEST(aio_rw_fallbacks)
{
	/* FUA as write + fdatasync, FLUSH on the sync thread */
	aio_pattern("aio:rwf_dsync=0,aio_fsync=0");
}
END_TEST

START_TEST(aio_read_past_eof)
{
	struct bdev_params p = { .path = path, .size = 1 << 20,
				 .create = true };
	struct bdev *b = bdev_open("aio:direct=off", &p, err, sizeof(err));
	struct bdev_queue *q;
	unsigned char *buf = bufpool_alloc(8192);

	ck_assert_msg(b != NULL, "%s", err);
	ck_assert(!b->direct);
	q = bdev_queue_get(b, &R);
	fill(buf, 8192, 3);
	ck_assert_int_eq(do_io(q, BDEV_WRITE, 0, 8192, buf, 0), 0);
	/* Someone shrinks the file under us: the read straddling the new
	 * end gets data up to it and zeros after. */
	ck_assert_int_eq(truncate(path, 4096), 0);
	memset(buf, 0xee, 8192);
	ck_assert_int_eq(do_io(q, BDEV_READ, 0, 8192, buf, 0), 0);
	ck_assert(!all_zero(buf, 4096));
	ck_assert(all_zero(buf + 4096, 4096));
	bufpool_free(buf, 8192);
	bdev_close(b);
}
END_TEST

START_TEST(aio_read_only)
{
	struct bdev_params p = { .path = path, .size = 1 << 20,
				 .create = true };
	struct bdev *b = bdev_open("aio", &p, err, sizeof(err));
	struct bdev_queue *q;
	unsigned char *buf = bufpool_alloc(4096);

	ck_assert_msg(b != NULL, "%s", err);
	bdev_close(b);
	p.read_only = true;
	p.create = false;
	b = bdev_open("aio", &p, err, sizeof(err));
	ck_assert_msg(b != NULL, "%s", err);
	ck_assert(b->read_only);
	q = bdev_queue_get(b, &R);
	ck_assert_int_eq(do_io(q, BDEV_READ, 0, 4096, buf, 0), 0);
	ck_assert(all_zero(buf, 4096));
	ck_assert_int_eq(do_io(q, BDEV_WRITE, 0, 4096, buf, 0), -EROFS);
	ck_assert_int_eq(do_io(q, BDEV_DISCARD, 0, 4096, NULL, 0), -EROFS);
	bdev_close(b);
	/* a read-only file cannot be grown */
	p.size = 2 << 20;
	ck_assert_ptr_null(bdev_open("aio", &p, err, sizeof(err)));
	ck_assert_ptr_nonnull(strstr(err, "smaller"));
	bufpool_free(buf, 4096);
}
END_TEST

/* ---- depth cap, with a backend the test completes by hand ---- */

static struct bdev_io *seen[16];
static int nseen;
static uint32_t max_inflight;

static void manual_submit(struct bdev_queue *q, struct bdev_io *io)
{
	seen[nseen++] = io;
	if (q->inflight > max_inflight)
		max_inflight = q->inflight;
}

static const struct bdev_ops manual_ops = {
	.name = "manual",
	.submit = manual_submit,
};

static int order[16], norder;
static struct bdev_io dios[16];

static void order_done(struct bdev_io *io)
{
	int idx = (int)(io - dios);

	order[norder++] = idx;
	/* a completion may submit more: the new one queues behind */
	if (idx == 0) {
		io_prep(&dios[10], BDEV_READ, 0, 512, NULL, 0);
		dios[10].done = order_done;
		bdev_submit(io->q, &dios[10]);
	}
}

START_TEST(depth_limit)
{
	struct bdev_params p = { .size = 1 << 20, .queue_depth = 2 };
	struct bdev *b = bdev_alloc(&manual_ops, &p, p.size, err, sizeof(err));
	struct bdev_queue *q;

	ck_assert_msg(b != NULL, "%s", err);
	q = bdev_queue_get(b, &R);
	nseen = norder = 0;
	max_inflight = 0;
	for (int i = 0; i < 10; i++) {
		io_prep(&dios[i], BDEV_READ, (uint64_t)i * 512, 512, NULL, 0);
		dios[i].done = order_done;
		bdev_submit(q, &dios[i]);
	}
	ck_assert_int_eq(nseen, 2);
	ck_assert_uint_eq(q->inflight, 2);
	/* complete in start order; each completion starts the next */
	for (int i = 0; i < 11; i++) {
		ck_assert_int_gt(nseen, i);
		bdev_complete(seen[i], 0);
		ck_assert_uint_le(q->inflight, 2);
	}
	ck_assert_int_eq(nseen, 11);
	ck_assert_uint_eq(max_inflight, 2);
	for (int i = 0; i < 11; i++) {
		ck_assert_ptr_eq(seen[i], &dios[i]);	/* arrival order */
		ck_assert_int_eq(order[i], i);
	}
	ck_assert_uint_eq(q->inflight, 0);
	ck_assert(list_empty(&q->waiting));

	/* raising the depth live lets more through */
	nseen = norder = 0;
	atomic_store(&b->queue_depth, 4);
	for (int i = 1; i < 7; i++) {
		io_prep(&dios[i], BDEV_READ, 0, 512, NULL, 0);
		dios[i].done = order_done;
		bdev_submit(q, &dios[i]);
	}
	ck_assert_int_eq(nseen, 4);
	for (int i = 0; i < 6; i++)
		bdev_complete(seen[i], 0);
	ck_assert_int_eq(nseen, 6);
	bdev_close(b);
}
END_TEST

/* Same cap through a real backend and the reactor. */
static uint32_t aio_max;
static void depth_done(struct bdev_io *io)
{
	if (io->q->inflight + 1 > aio_max)
		aio_max = io->q->inflight + 1;
	order[norder++] = (int)(io - dios);
	ck_assert_int_eq(io->result, 0);
	io_done(io);
}

START_TEST(depth_limit_aio)
{
	struct bdev_params p = { .path = path, .size = 1 << 20,
				 .create = true, .queue_depth = 2 };
	struct bdev *b = bdev_open("aio", &p, err, sizeof(err));
	struct bdev_queue *q;
	void *buf = bufpool_alloc(4096 * 10);

	ck_assert_msg(b != NULL, "%s", err);
	q = bdev_queue_get(b, &R);
	aio_max = 0;
	norder = 0;
	pending = 10;
	for (int i = 0; i < 10; i++) {
		io_prep(&dios[i], BDEV_WRITE, (uint64_t)i * 4096, 4096,
			(char *)buf + i * 4096, 0);
		dios[i].done = depth_done;
		bdev_submit(q, &dios[i]);
		ck_assert_uint_le(q->inflight, 2);
	}
	drive();
	ck_assert_int_eq(norder, 10);
	ck_assert_uint_le(aio_max, 2);
	bufpool_free(buf, 4096 * 10);
	bdev_close(b);
}
END_TEST

/* ---- ram and null ---- */

START_TEST(ram_backend)
{
	struct bdev_params p = { 0 };
	struct bdev *b = bdev_open("ram:size=4M", &p, err, sizeof(err));
	struct bdev_queue *q;
	unsigned char *w = bufpool_alloc(16384), *r = bufpool_alloc(16384);
	struct bdev_io io;

	ck_assert_msg(b != NULL, "%s", err);
	ck_assert_uint_eq(b->size, 4 << 20);
	q = bdev_queue_get(b, &R);
	fill(w, 16384, 5);
	ck_assert_int_eq(do_io(q, BDEV_WRITE, 8192, 16384, w, BDEV_FUA), 0);
	ck_assert_int_eq(do_io(q, BDEV_READ, 8192, 16384, r, 0), 0);
	ck_assert_mem_eq(r, w, 16384);
	/* unaligned-to-page discard clears exactly its range */
	ck_assert_int_eq(do_io(q, BDEV_DISCARD, 8192 + 512, 8192, NULL, 0), 0);
	ck_assert_int_eq(do_io(q, BDEV_READ, 8192, 16384, r, 0), 0);
	ck_assert_mem_eq(r, w, 512);
	ck_assert(all_zero(r + 512, 8192));
	ck_assert_mem_eq(r + 8704, w + 8704, 16384 - 8704);
	ck_assert_int_eq(do_io(q, BDEV_FLUSH, 0, 0, NULL, 0), 0);
	ck_assert_int_eq(do_io(q, BDEV_WRITE, (4 << 20) - 512, 1024, w, 0),
			 -ERANGE);

	/* completion is deferred, never inside submit */
	io_prep(&io, BDEV_READ, 0, 512, r, 0);
	pending = 1;
	bdev_submit(q, &io);
	ck_assert_int_eq(pending, 1);
	drive();
	ck_assert_int_eq(io.result, 0);
	bdev_close(b);

	/* size through params, 4096-byte blocks */
	p.size = 1 << 20;
	p.block_size = 4096;
	b = bdev_open("ram", &p, err, sizeof(err));
	ck_assert_msg(b != NULL, "%s", err);
	ck_assert_uint_eq(b->block_size, 4096);
	q = bdev_queue_get(b, &R);
	ck_assert_int_eq(do_io(q, BDEV_READ, 0, 512, r, 0), -EINVAL);
	bdev_close(b);
	bufpool_free(w, 16384);
	bufpool_free(r, 16384);
}
END_TEST

START_TEST(null_backend)
{
	struct bdev_params p = { 0 };
	struct bdev *b = bdev_open("null", &p, err, sizeof(err));
	struct bdev_queue *q;
	unsigned char *buf = bufpool_alloc(4096);

	ck_assert_msg(b != NULL, "%s", err);
	ck_assert_uint_eq(b->size, 1ull << 30);
	q = bdev_queue_get(b, &R);
	memset(buf, 0xab, 4096);
	ck_assert_int_eq(do_io(q, BDEV_WRITE, 0, 4096, buf, 0), 0);
	ck_assert_int_eq(do_io(q, BDEV_READ, 0, 4096, buf, 0), 0);
	ck_assert(all_zero(buf, 4096));
	bdev_close(b);
	b = bdev_open("null:size=2G", &p, err, sizeof(err));
	ck_assert_msg(b != NULL, "%s", err);
	ck_assert_uint_eq(b->size, 2ull << 30);
	bdev_close(b);
	bufpool_free(buf, 4096);
}
END_TEST

START_TEST(bad_specs)
{
	struct bdev_params p = { 0 };

	ck_assert_ptr_null(bdev_open("bogus", &p, err, sizeof(err)));
	ck_assert_ptr_nonnull(strstr(err, "unknown backend 'bogus'"));
	ck_assert_ptr_null(bdev_open("bogus:size=1", &p, err, sizeof(err)));
	ck_assert_ptr_nonnull(strstr(err, "unknown backend"));
	ck_assert_ptr_null(bdev_open("", &p, err, sizeof(err)));
	ck_assert_ptr_nonnull(strstr(err, "empty"));
	ck_assert_ptr_null(bdev_open("ram", &p, err, sizeof(err)));
	ck_assert_ptr_nonnull(strstr(err, "size is required"));
	ck_assert_ptr_null(bdev_open("null:size=12x", &p, err, sizeof(err)));
	ck_assert_ptr_nonnull(strstr(err, "bad size"));
	ck_assert_ptr_null(bdev_open("null:colour=red", &p, err, sizeof(err)));
	ck_assert_ptr_nonnull(strstr(err, "unknown option 'colour'"));
	ck_assert_ptr_null(bdev_open("null:size", &p, err, sizeof(err)));
	ck_assert_ptr_nonnull(strstr(err, "malformed"));
	ck_assert_ptr_null(bdev_open("ram:size=1000", &p, err, sizeof(err)));
	ck_assert_ptr_nonnull(strstr(err, "multiple of block size"));
	p.block_size = 1024;
	ck_assert_ptr_null(bdev_open("null", &p, err, sizeof(err)));
	ck_assert_ptr_nonnull(strstr(err, "512 or 4096"));
	p.block_size = 0;
	ck_assert_ptr_null(bdev_open("aio", &p, err, sizeof(err)));
	ck_assert_ptr_nonnull(strstr(err, "no path"));
	ck_assert_ptr_null(bdev_open("aio:path=/proc/nonexistent/x", &p, err,
				     sizeof(err)));
	ck_assert_ptr_nonnull(strstr(err, "/proc/nonexistent/x"));
	p.path = "/dev/null";	/* a char device is neither file nor disk */
	ck_assert_ptr_null(bdev_open("aio:direct=0", &p, err, sizeof(err)));
	ck_assert_ptr_nonnull(strstr(err, "not a regular file"));
	ck_assert_ptr_null(bdev_open("aio:direct=maybe", &p, err, sizeof(err)));
	ck_assert_ptr_nonnull(strstr(err, "bad direct"));
}
END_TEST

START_TEST(parse_helpers)
{
	uint64_t v;
	const char *s = "a=1,,bb=xyz";
	struct bdev_opt_item it;

	ck_assert_int_eq(bdev_parse_size("4096", &v), 0);
	ck_assert_uint_eq(v, 4096);
	ck_assert_int_eq(bdev_parse_size("64k", &v), 0);
	ck_assert_uint_eq(v, 65536);
	ck_assert_int_eq(bdev_parse_size("3MiB", &v), 0);
	ck_assert_uint_eq(v, 3 << 20);
	ck_assert_int_eq(bdev_parse_size("1T", &v), 0);
	ck_assert_uint_eq(v, 1ull << 40);
	ck_assert_int_eq(bdev_parse_size("-1", &v), -EINVAL);
	ck_assert_int_eq(bdev_parse_size("99999999999999T", &v), -EINVAL);
	/* The option tokenizer: items, an empty one skipped, the end. */
	ck_assert_int_eq(bdev_opt_item_next(&s, &it), 1);
	ck_assert_uint_eq(it.klen, 1);
	ck_assert(!strncmp(it.key, "a", 1) && it.vlen == 1 && it.val[0] == '1');
	ck_assert_int_eq(bdev_opt_item_next(&s, &it), 1);
	ck_assert(it.klen == 2 && !strncmp(it.key, "bb", 2));
	ck_assert(it.vlen == 3 && !strncmp(it.val, "xyz", 3));
	ck_assert_int_eq(bdev_opt_item_next(&s, &it), 0);
	/* An item without '=' or with an empty key is malformed. */
	s = "novalue";
	ck_assert_int_eq(bdev_opt_item_next(&s, &it), -1);
	s = "=1";
	ck_assert_int_eq(bdev_opt_item_next(&s, &it), -1);

	ck_assert_int_eq(log_threshold, LOG_INFO);
	ck_assert_int_eq(log_parse_level("debug"), LOG_DEBUG);
	ck_assert_int_eq(log_parse_level("WARN"), LOG_WARN);
	ck_assert_int_eq(log_parse_level("error"), LOG_ERR);
	ck_assert_int_eq(log_parse_level("info"), LOG_INFO);
	ck_assert_int_eq(log_parse_level("loud"), -1);
}
END_TEST

/* ---- bufpool ---- */

static void *freer(void *p)
{
	bufpool_free(p, 1 << 20);	/* joins this thread's cache */
	return NULL;
}

START_TEST(bufpool_classes)
{
	void *a = bufpool_alloc(100), *b, *c, *big;
	pthread_t th;

	ck_assert_ptr_nonnull(a);
	ck_assert_uint_eq((uintptr_t)a % BUFPOOL_ALIGN, 0);
	memset(a, 1, 4096);
	bufpool_free(a, 100);
	b = bufpool_alloc(4096);	/* same class: cached buffer back */
	ck_assert_ptr_eq(a, b);
	c = bufpool_alloc(5000);	/* 8 KiB class */
	ck_assert_ptr_ne(c, b);
	memset(c, 2, 8192);
	bufpool_free(b, 4096);
	bufpool_free(c, 5000);
	big = bufpool_alloc((16 << 20) + 1);	/* beyond the largest class */
	ck_assert_uint_eq((uintptr_t)big % BUFPOOL_ALIGN, 0);
	memset(big, 3, (16 << 20) + 1);
	bufpool_free(big, (16 << 20) + 1);
	a = bufpool_alloc(1 << 20);
	ck_assert_uint_eq((uintptr_t)a % BUFPOOL_ALIGN, 0);
	pthread_create(&th, NULL, freer, a);
	pthread_join(th, NULL);
	bufpool_thread_drain();
}
END_TEST

static Suite *bdev_suite(void)
{
	Suite *s = suite_create("bdev");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 30);
	harness_add(tc, aio_create_sparse);
	harness_add(tc, aio_rw_direct);
	harness_add(tc, aio_rw_buffered);
	harness_add(tc, aio_rw_fallbacks);
	harness_add(tc, aio_read_past_eof);
	harness_add(tc, aio_read_only);
	harness_add(tc, depth_limit);
	harness_add(tc, depth_limit_aio);
	harness_add(tc, ram_backend);
	harness_add(tc, null_backend);
	harness_add(tc, bad_specs);
	harness_add(tc, parse_helpers);
	harness_add(tc, bufpool_classes);
	suite_add_tcase(s, tc);
	return s;
}

int main(int argc, char **argv)
{
	return harness_main(argc, argv, bdev_suite);
}
