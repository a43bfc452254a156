/*
 * Unit tests for the SBC-3 commands of scsi/sbc_*.c and scsi/xcopy.c:
 * commands go through lun_task_arrive on a LUN over the ram backend, with
 * a reactor in the test thread; data and exact sense are checked.
 */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "backend/bdev.h"
#include "tcq/bufpool.h"
#include "tcq/byteorder.h"
#include "tcq/scsi_proto.h"
#include "scsi/lun.h"
#include "scsi/sbc.h"
#include "scsi/sbc_priv.h"
#include "scsi/stats.h"
#include "scsi/taskset.h"
#include "tcq/reactor.h"

#define BS 512u
#define NBLOCKS 131072u	/* 64 MiB: above MAXIMUM WRITE SAME LENGTH */

static struct reactor R;
static struct bdev *bd;
static struct lun *lun;
static struct taskset *ts_a, *ts_b, *cur_ts;
static int nexus_a, nexus_b;

struct cmd {
	struct tcq_task t;
	bool done;
};

static void task_done(struct tcq_task *t)
{
	struct cmd *c = (struct cmd *)t;

	c->done = true;
	reactor_stop(&R);
}

static void arrive_cb(void *arg)
{
	struct tcq_task *t = arg;

	if (lun_task_arrive(cur_ts, t))
		lun_task_data_ready(t);
}

static void watchdog(struct reactor_timer *tm)
{
	reactor_stop(&R);
}

/*
 * Runs one command to completion on nexus ts. out: Data-Out (len bytes,
 * also the expected length when out is set); in_len: expected Data-In.
 * The caller frees the returned command with cmd_free().
 */
static struct cmd *run(struct taskset *ts, const uint8_t *cdb, uint16_t clen,
		       const void *out, uint32_t len, uint32_t in_len)
{
	struct cmd *c = calloc(1, sizeof(*c));
	struct tcq_task *t = &c->t;
	struct reactor_timer wd;

	ck_assert_ptr_nonnull(c);
	memcpy(t->cdb, cdb, clen);
	t->cdb_len = clen < 16 ? 16 : clen;
	t->lun = lun;
	t->nexus = ts == ts_a ? (void *)&nexus_a : (void *)&nexus_b;
	t->attr = TASK_ATTR_SIMPLE;
	t->done = task_done;
	if (out) {
		t->dir_out = true;
		t->exp_len = len;
		t->buf = bufpool_alloc(len ? len : 1);
		t->buf_len = len;
		memcpy(t->buf, out, len);
		t->data_ready = false;
	} else if (in_len) {
		t->dir_in = true;
		t->exp_len = in_len;
	}
	cur_ts = ts;
	ck_assert_int_eq(reactor_post(&R, arrive_cb, t), 0);
	reactor_timer_init(&wd, watchdog, NULL);
	reactor_timer_arm(&R, &wd, 10000);
	while (!c->done)
		reactor_run(&R);
	reactor_timer_cancel(&R, &wd);
	ck_assert(c->done);
	return c;
}

static void cmd_free(struct cmd *c)
{
	if (c->t.dir_out && c->t.buf)
		bufpool_free(c->t.buf, c->t.buf_len ? c->t.buf_len : 1);
	else
		lun_task_release(&c->t);
	free(c);
}

/* Sense key and ASC/ASCQ of a fixed-format sense (D_SENSE=0). */
static unsigned sk(const struct cmd *c)
{
	return c->t.sense[2] & 0x0f;
}

static unsigned asc(const struct cmd *c)
{
	return (unsigned)c->t.sense[12] << 8 | c->t.sense[13];
}

static void expect_good(struct cmd *c)
{
	ck_assert_msg(c->t.status == SAM_STAT_GOOD,
		      "status %#x sense %x/%04x", c->t.status, sk(c), asc(c));
	cmd_free(c);
}

static void expect_sense(struct cmd *c, unsigned key, unsigned code)
{
	ck_assert_int_eq(c->t.status, SAM_STAT_CHECK_CONDITION);
	ck_assert_uint_eq(sk(c), key);
	ck_assert_uint_eq(asc(c), code);
	cmd_free(c);
}

static void cdb16(uint8_t *cdb, uint8_t op, uint8_t b1, uint64_t lba,
		  uint32_t n)
{
	memset(cdb, 0, 16);
	cdb[0] = op;
	cdb[1] = b1;
	put_be64(cdb + 2, lba);
	put_be32(cdb + 10, n);
}

static void write16(uint64_t lba, const void *data, uint32_t blocks)
{
	uint8_t cdb[16];

	cdb16(cdb, SOP_WRITE_16, 0, lba, blocks);
	expect_good(run(ts_a, cdb, 16, data, blocks * BS, 0));
}

/* Reads blocks into out. */
static void read16(uint64_t lba, void *out, uint32_t blocks)
{
	uint8_t cdb[16];

	cdb16(cdb, SOP_READ_16, 0, lba, blocks);
	struct cmd *c = run(ts_a, cdb, 16, NULL, 0, blocks * BS);
	ck_assert_int_eq(c->t.status, SAM_STAT_GOOD);
	ck_assert_uint_eq(c->t.data_in_len, blocks * BS);
	memcpy(out, c->t.buf, blocks * BS);
	cmd_free(c);
}

static void tur(struct taskset *ts)
{
	uint8_t cdb[6] = { SOP_TEST_UNIT_READY };

	cmd_free(run(ts, cdb, 6, NULL, 0, 0));
}

static void setup(void)
{
	struct bdev_params bp = { .size = NBLOCKS * BS, .queue_depth = 8 };
	char err[256];

	ck_assert_int_eq(reactor_init(&R, 0), 0);
	bd = bdev_open("ram", &bp, err, sizeof(err));
	ck_assert_msg(bd != NULL, "%s", err);
	lun = lun_create(NULL, 0, bd, "iqn.2026-11.org.tcq:sbc");
	ck_assert_ptr_nonnull(lun);
	ck_assert_ptr_nonnull(lun->sbc);
	ts_a = lun_nexus_join(lun, &R, &nexus_a);
	ts_b = lun_nexus_join(lun, &R, &nexus_b);
	/* The first command of a nexus reports POWER ON: take it now. */
	tur(ts_a);
	tur(ts_b);
}

static void teardown(void)
{
	lun_nexus_leave(ts_a);
	lun_nexus_leave(ts_b);
	lun_destroy(lun);
	bdev_close(bd);
	reactor_fini(&R);
	bufpool_thread_drain();
}

/* ---- COMPARE AND WRITE ------------------------------------------------ */

START_TEST(caw_match_and_miscompare)
{
	static uint8_t d[8 * BS], rb[4 * BS];
	uint8_t cdb[16];

	memset(d, 'A', 4 * BS);
	write16(10, d, 4);
	/* verify 'A' x4, write 'B' x4 */
	memset(d + 4 * BS, 'B', 4 * BS);
	cdb16(cdb, SOP_COMPARE_AND_WRITE, 0, 10, 0);
	cdb[13] = 4;
	expect_good(run(ts_a, cdb, 16, d, 8 * BS, 0));
	read16(10, rb, 4);
	for (unsigned i = 0; i < 4 * BS; i++)
		ck_assert_uint_eq(rb[i], 'B');

	/* Verify data 'B' with one byte off: MISCOMPARE, INFORMATION is
	 * the offset of that byte, the medium is untouched. */
	memset(d, 'B', 4 * BS);
	d[4 * BS - 27] = 'C';
	memset(d + 4 * BS, 'Z', 4 * BS);
	struct cmd *c = run(ts_a, cdb, 16, d, 8 * BS, 0);
	ck_assert_int_eq(c->t.status, SAM_STAT_CHECK_CONDITION);
	ck_assert_uint_eq(sk(c), SK_MISCOMPARE);
	ck_assert_uint_eq(asc(c), ASC_MISCOMPARE_DURING_VERIFY);
	ck_assert(c->t.sense[0] & 0x80);	/* VALID */
	ck_assert_uint_eq(get_be32(c->t.sense + 3), 4 * BS - 27);
	cmd_free(c);
	read16(10, rb, 4);
	for (unsigned i = 0; i < 4 * BS; i++)
		ck_assert_uint_eq(rb[i], 'B');
}
END_TEST

START_TEST(caw_limits)
{
	static uint8_t d[2 * BS];
	uint8_t cdb[16];

	/* More than MAXIMUM COMPARE AND WRITE LENGTH: INVALID FIELD. */
	cdb16(cdb, SOP_COMPARE_AND_WRITE, 0, 0, 0);
	cdb[13] = 0;	/* 0 blocks but data sent: a mismatch */
	expect_sense(run(ts_a, cdb, 16, d, 2 * BS, 0), SK_ILLEGAL_REQUEST,
		     ASC_INVALID_FIELD_IN_CDB);
	/* Beyond the end of the LUN. */
	cdb16(cdb, SOP_COMPARE_AND_WRITE, 0, NBLOCKS, 0);
	cdb[13] = 1;
	expect_sense(run(ts_a, cdb, 16, d, 2 * BS, 0), SK_ILLEGAL_REQUEST,
		     ASC_LBA_OUT_OF_RANGE);
	/* WRPROTECT is not supported. */
	cdb16(cdb, SOP_COMPARE_AND_WRITE, 0x20, 0, 0);
	cdb[13] = 1;
	expect_sense(run(ts_a, cdb, 16, d, 2 * BS, 0), SK_ILLEGAL_REQUEST,
		     ASC_INVALID_FIELD_IN_CDB);
}
END_TEST

/* ---- range lock ------------------------------------------------------- */

static int resumed;

static void resume(struct tcq_task *t)
{
	resumed++;
	reactor_stop(&R);
}

START_TEST(range_lock_waits)
{
	struct tcq_task a, b, c;

	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	memset(&c, 0, sizeof(c));
	a.lun = b.lun = c.lun = lun;
	resumed = 0;
	/* An exclusive holder of 10..19 makes an overlapping plain write
	 * wait, while one elsewhere goes on. */
	ck_assert_int_eq(sbc_lock(&a, 10, 10, true, resume), 0);
	ck_assert_int_eq(sbc_lock(&b, 15, 1, false, resume), 1);
	b.lock.r = &R;	/* taken outside reactor_run: resume on R */
	ck_assert_int_eq(sbc_lock(&c, 100, 1, false, resume), 0);
	sbc_unlock(&c);
	ck_assert_int_eq(resumed, 0);
	sbc_unlock(&a);		/* b is granted and resumed on R */
	reactor_run(&R);
	ck_assert_int_eq(resumed, 1);
	ck_assert_int_eq(b.lock.mode, LK_SHARED);
	/* Now b holds 15: an exclusive taker waits for it. */
	ck_assert_int_eq(sbc_lock(&a, 0, 16, true, resume), 1);
	a.lock.r = &R;
	sbc_unlock(&b);
	reactor_run(&R);
	ck_assert_int_eq(resumed, 2);
	ck_assert_int_eq(a.lock.mode, LK_EXCL);
	sbc_unlock(&a);
	ck_assert_uint_eq(atomic_load(&lun->sbc->excl), 0);
	ck_assert_uint_eq(atomic_load(&lun->sbc->wr_fast), 0);
}
END_TEST

START_TEST(range_lock_drains_fast_writers)
{
	struct tcq_task a, w;

	memset(&a, 0, sizeof(a));
	memset(&w, 0, sizeof(w));
	a.lun = w.lun = lun;
	resumed = 0;
	/* A lock-free writer in flight: the exclusive taker must wait for
	 * it even though it cannot know its range. */
	ck_assert_int_eq(sbc_lock(&w, 500, 1, false, resume), 0);
	ck_assert_int_eq(w.lock.mode, LK_FAST);
	ck_assert_int_eq(sbc_lock(&a, 0, 8, true, resume), 1);
	a.lock.r = &R;
	sbc_unlock(&w);
	reactor_run(&R);
	ck_assert_int_eq(resumed, 1);
	sbc_unlock(&a);
}
END_TEST

/* ---- ORWRITE, WRITE AND VERIFY, WRITE ATOMIC --------------------------- */

START_TEST(orwrite_ors)
{
	static uint8_t d[2 * BS], rb[2 * BS];
	uint8_t cdb[16];

	memset(d, 0xf0, sizeof(d));
	write16(20, d, 2);
	memset(d, 0x0f, sizeof(d));
	d[7] = 0x01;
	cdb16(cdb, SOP_ORWRITE_16, 0, 20, 2);
	expect_good(run(ts_a, cdb, 16, d, 2 * BS, 0));
	read16(20, rb, 2);
	ck_assert_uint_eq(rb[0], 0xff);
	ck_assert_uint_eq(rb[7], 0xf1);
	ck_assert_uint_eq(rb[2 * BS - 1], 0xff);
}
END_TEST

START_TEST(write_verify_bytchk)
{
	static uint8_t d[3 * BS], rb[3 * BS];
	uint8_t cdb[10] = { SOP_WRITE_VERIFY_10, 0x02 /* BYTCHK 1 */ };

	for (unsigned i = 0; i < sizeof(d); i++)
		d[i] = (uint8_t)(i * 7);
	put_be32(cdb + 2, 30);
	put_be16(cdb + 7, 3);
	expect_good(run(ts_a, cdb, 10, d, 3 * BS, 0));
	read16(30, rb, 3);
	ck_assert_int_eq(memcmp(d, rb, sizeof(d)), 0);
	/* BYTCHK 10b is reserved. */
	cdb[1] = 0x04;
	expect_sense(run(ts_a, cdb, 10, d, 3 * BS, 0), SK_ILLEGAL_REQUEST,
		     ASC_INVALID_FIELD_IN_CDB);
}
END_TEST

START_TEST(write_atomic)
{
	static uint8_t d[4 * BS], rb[4 * BS];
	uint8_t cdb[16];

	memset(d, 0x5a, sizeof(d));
	cdb16(cdb, SOP_WRITE_ATOMIC_16, 0, 40, 0);
	put_be16(cdb + 12, 4);
	expect_good(run(ts_a, cdb, 16, d, 4 * BS, 0));
	read16(40, rb, 4);
	ck_assert_int_eq(memcmp(d, rb, sizeof(d)), 0);
	/* Above MAXIMUM ATOMIC TRANSFER LENGTH. */
	uint32_t big = (SBC_MAX_ATOMIC_BLOCKS + 1) * BS;
	uint8_t *bd2 = calloc(1, big);
	put_be16(cdb + 12, SBC_MAX_ATOMIC_BLOCKS + 1);
	expect_sense(run(ts_a, cdb, 16, bd2, big, 0), SK_ILLEGAL_REQUEST,
		     ASC_INVALID_FIELD_IN_CDB);
	free(bd2);
}
END_TEST

/* ---- UNMAP ------------------------------------------------------------ */

/* Backend I/Os submitted for lun so far. */
static uint64_t backend_ios(void)
{
	struct stats_snapshot snap;

	stats_snapshot(lun, &snap);
	return snap.c.ios;
}

/* Runs UNMAP with the n (lba, count) pairs of d; GOOD expected. */
static void unmap(const uint64_t *d, unsigned n)
{
	static uint8_t p[8 + 16 * 256];
	uint8_t cdb[10] = { SOP_UNMAP };
	uint32_t len = 8 + 16 * n;

	memset(p, 0, sizeof(p));
	put_be16(p, (uint16_t)(len - 2));
	put_be16(p + 2, (uint16_t)(16 * n));
	for (unsigned i = 0; i < n; i++) {
		put_be64(p + 8 + 16 * i, d[2 * i]);
		put_be32(p + 8 + 16 * i + 8, (uint32_t)d[2 * i + 1]);
	}
	put_be16(cdb + 7, (uint16_t)len);
	expect_good(run(ts_a, cdb, 10, p, len, 0));
}

START_TEST(unmap_joins_adjacent_descriptors)
{
	static uint8_t d[128 * BS], rb[128 * BS];
	static uint64_t desc[2 * 64];
	uint64_t before;

	memset(d, 'u', sizeof(d));
	write16(200, d, 128);
	/* 64 one-block descriptors, each continuing the one before (one
	 * overlapping the next two); the empty one leaves block 220 mapped,
	 * so the run breaks there: two backend discards. */
	for (unsigned i = 0; i < 64; i++) {
		desc[2 * i] = 200 + i;
		desc[2 * i + 1] = 1;
	}
	desc[2 * 10 + 1] = 3;	/* 210..212, overlapping the next two */
	desc[2 * 20 + 1] = 0;	/* empty: block 220 stays */
	before = backend_ios();
	unmap(desc, 64);
	ck_assert_uint_eq(backend_ios() - before, 2);
	read16(200, rb, 128);
	for (unsigned i = 0; i < 64 * BS; i++)
		ck_assert_uint_eq(rb[i], i / BS == 20 ? 'u' : 0);
	for (unsigned i = 64 * BS; i < 128 * BS; i++)
		ck_assert_uint_eq(rb[i], 'u');

	/* Gaps and a step back start a new run: three discards. */
	write16(200, d, 128);
	uint64_t apart[] = { 200, 4, 210, 4, 205, 2 };
	before = backend_ios();
	unmap(apart, 3);
	ck_assert_uint_eq(backend_ios() - before, 3);
	read16(200, rb, 16);
	for (unsigned b = 0; b < 16; b++) {
		bool gone = b < 4 || (b >= 5 && b < 7) || (b >= 10 && b < 14);
		ck_assert_uint_eq(rb[b * BS], gone ? 0 : 'u');
	}
}
END_TEST

/* ---- WRITE SAME ------------------------------------------------------- */

START_TEST(write_same)
{
	static uint8_t blk[BS], rb[300 * BS];
	uint8_t cdb[16];

	for (unsigned i = 0; i < BS; i++)
		blk[i] = (uint8_t)i;
	cdb16(cdb, SOP_WRITE_SAME_16, 0, 100, 300);
	expect_good(run(ts_a, cdb, 16, blk, BS, 0));
	read16(100, rb, 300);
	for (unsigned b = 0; b < 300; b++)
		ck_assert_int_eq(memcmp(rb + b * BS, blk, BS), 0);
	/* UNMAP on a thin LUN deallocates: zeros read back (LBPRZ). */
	cdb16(cdb, SOP_WRITE_SAME_16, 0x08, 100, 300);
	expect_good(run(ts_a, cdb, 16, blk, BS, 0));
	read16(100, rb, 300);
	for (unsigned i = 0; i < 300 * BS; i++)
		ck_assert_uint_eq(rb[i], 0);
	/* ANCHOR: no anchored state. */
	cdb16(cdb, SOP_WRITE_SAME_16, 0x18, 100, 1);
	expect_sense(run(ts_a, cdb, 16, blk, BS, 0), SK_ILLEGAL_REQUEST,
		     ASC_INVALID_FIELD_IN_CDB);
	/* More than MAXIMUM WRITE SAME LENGTH. */
	cdb16(cdb, SOP_WRITE_SAME_16, 0, 0, SBC_MAX_WS_BLOCKS + 1);
	expect_sense(run(ts_a, cdb, 16, blk, BS, 0), SK_ILLEGAL_REQUEST,
		     ASC_INVALID_FIELD_IN_CDB);
	/* Zero blocks: to the end of the medium. */
	cdb16(cdb, SOP_WRITE_SAME_16, 0, NBLOCKS - 2, 0);
	expect_good(run(ts_a, cdb, 16, blk, BS, 0));
	read16(NBLOCKS - 2, rb, 2);
	ck_assert_int_eq(memcmp(rb + BS, blk, BS), 0);
	/* Data-Out of two blocks: refused. */
	cdb16(cdb, SOP_WRITE_SAME_16, 0, 0, 1);
	struct cmd *c = run(ts_a, cdb, 16, rb, 2 * BS, 0);
	ck_assert_int_eq(c->t.status, SAM_STAT_CHECK_CONDITION);
	cmd_free(c);
}
END_TEST

/* ---- removable medium ------------------------------------------------- */

static struct cmd *ssu(struct taskset *ts, uint8_t b4)
{
	uint8_t cdb[6] = { SOP_START_STOP_UNIT, 0, 0, 0, b4 };

	return run(ts, cdb, 6, NULL, 0, 0);
}

static struct cmd *prevent(struct taskset *ts, uint8_t v)
{
	uint8_t cdb[6] = { SOP_PREVENT_ALLOW, 0, 0, 0, v };

	return run(ts, cdb, 6, NULL, 0, 0);
}

START_TEST(eject_and_prevent)
{
	uint8_t cdb[6] = { SOP_TEST_UNIT_READY };

	lun->removable = true;
	expect_good(ssu(ts_a, 0x02));		/* LOEJ, START=0: eject */
	expect_sense(run(ts_a, cdb, 6, NULL, 0, 0), SK_NOT_READY,
		     ASC_MEDIUM_NOT_PRESENT_TRAY_OPEN);
	expect_good(ssu(ts_a, 0x03));		/* load */
	expect_good(run(ts_a, cdb, 6, NULL, 0, 0));
	/* PREVENT from nexus B blocks eject from A, until B's nexus
	 * goes away. */
	expect_good(prevent(ts_b, 1));
	expect_sense(ssu(ts_a, 0x02), SK_ILLEGAL_REQUEST,
		     ASC_MEDIUM_REMOVAL_PREVENTED);
	/* A power condition makes LOEJ ignored. */
	expect_good(ssu(ts_a, 0x12));
	sbc_nexus_gone(lun, &nexus_b);
	expect_good(ssu(ts_a, 0x02));
	expect_good(ssu(ts_a, 0x03));
	/* LUN reset ends PREVENT too. */
	expect_good(prevent(ts_a, 1));
	sbc_lun_reset(lun);
	expect_good(ssu(ts_a, 0x02));
	expect_good(ssu(ts_a, 0x03));
}
END_TEST

START_TEST(read_defect_data)
{
	uint8_t cdb[10] = { SOP_READ_DEFECT_DATA_10, 0, 0x18 | 0x05 };

	put_be16(cdb + 7, 32);
	struct cmd *c = run(ts_a, cdb, 10, NULL, 0, 32);
	ck_assert_int_eq(c->t.status, SAM_STAT_GOOD);
	ck_assert_uint_eq(c->t.data_in_len, 4);
	const uint8_t *p = c->t.buf;
	ck_assert_uint_eq(p[1], 0x1d);		/* PLISTV, GLISTV, format */
	ck_assert_uint_eq(get_be16(p + 2), 0);	/* empty list */
	cmd_free(c);
}
END_TEST

/* Extended INQUIRY Data VPD page: the task attributes we honour. */
START_TEST(vpd_extended_inquiry)
{
	uint8_t cdb[6] = { SOP_INQUIRY, 0x01, 0x86, 0, 64, 0 };
	struct cmd *c = run(ts_a, cdb, 6, NULL, 0, 64);
	const uint8_t *p = c->t.buf;

	ck_assert_int_eq(c->t.status, SAM_STAT_GOOD);
	ck_assert_uint_eq(c->t.data_in_len, 64);
	ck_assert_uint_eq(p[1], 0x86);
	ck_assert_uint_eq(get_be16(p + 2), 0x3c);
	ck_assert_uint_eq(p[5], 0x07);		/* HEADSUP ORDSUP SIMPSUP */
	ck_assert_uint_eq(p[6] & 0x01, 0x01);	/* V_SUP */
	cmd_free(c);

	uint8_t list[6] = { SOP_INQUIRY, 0x01, 0x00, 0, 64, 0 };
	c = run(ts_a, list, 6, NULL, 0, 64);
	p = c->t.buf;
	ck_assert_int_eq(c->t.status, SAM_STAT_GOOD);
	ck_assert_ptr_nonnull(memchr(p + 4, 0x86, p[3]));
	cmd_free(c);
}
END_TEST

/* ---- SANITIZE --------------------------------------------------------- */

START_TEST(sanitize)
{
	static uint8_t p[4 + 4], d[BS], rb[BS];
	uint8_t cdb[10] = { SOP_SANITIZE, SAN_OVERWRITE };

	memset(d, 'x', BS);
	write16(NBLOCKS - 1, d, 1);
	p[0] = 1;			/* OWCOUNT 1 */
	put_be16(p + 2, 4);
	memcpy(p + 4, "abcd", 4);
	put_be16(cdb + 7, sizeof(p));
	/* Not allowed on this LUN yet. */
	expect_sense(run(ts_a, cdb, 10, p, sizeof(p), 0), SK_ILLEGAL_REQUEST,
		     ASC_INVALID_COMMAND_OPERATION_CODE);
	lun->sanitize_ok = true;
	expect_good(run(ts_a, cdb, 10, p, sizeof(p), 0));
	read16(NBLOCKS - 1, rb, 1);
	for (unsigned i = 0; i < BS; i++)
		ck_assert_uint_eq(rb[i], "abcd"[i % 4]);
	/* OWCOUNT 0 is invalid. */
	p[0] = 0;
	expect_sense(run(ts_a, cdb, 10, p, sizeof(p), 0), SK_ILLEGAL_REQUEST,
		     ASC_INVALID_FIELD_IN_PARAMETER_LIST);
	/* BLOCK ERASE deallocates everything. */
	cdb[1] = SAN_BLOCK_ERASE;
	put_be16(cdb + 7, 0);
	expect_good(run(ts_a, cdb, 10, NULL, 0, 0));
	read16(NBLOCKS - 1, rb, 1);
	for (unsigned i = 0; i < BS; i++)
		ck_assert_uint_eq(rb[i], 0);
	/* An unknown service action. */
	cdb[1] = 0x05;
	expect_sense(run(ts_a, cdb, 10, NULL, 0, 0), SK_ILLEGAL_REQUEST,
		     ASC_INVALID_FIELD_IN_CDB);
}
END_TEST

/* ---- EXTENDED COPY / RECEIVE COPY RESULTS ----------------------------- */

static uint32_t xcopy_list(uint8_t *p, uint8_t list_id, uint16_t blocks,
			   uint64_t src, uint64_t dst, uint8_t seg_type)
{
	memset(p, 0, 16 + 32 + 28);
	p[0] = list_id;
	put_be16(p + 2, 32);
	put_be32(p + 8, 28);
	uint8_t *td = p + 16;
	td[0] = 0xe4;			/* identification descriptor */
	td[4] = 0x01;			/* binary */
	td[5] = 0x03;			/* NAA, associated with the LU */
	td[7] = 16;
	memcpy(td + 8, lun->naa, 16);
	put_be24(td + 29, BS);
	uint8_t *sd = p + 48;
	sd[0] = seg_type;
	put_be16(sd + 2, 0x18);
	put_be16(sd + 10, blocks);
	put_be64(sd + 12, src);
	put_be64(sd + 20, dst);
	return 16 + 32 + 28;
}

START_TEST(extended_copy)
{
	static uint8_t d[64 * BS], rb[64 * BS], p[128];
	uint8_t cdb[16] = { SOP_EXTENDED_COPY, XCOPY_LID1 };
	uint8_t rcr[16] = { SOP_RECEIVE_COPY_RESULTS, RCR_COPY_STATUS, 7 };

	for (unsigned i = 0; i < sizeof(d); i++)
		d[i] = (uint8_t)(i / 3);
	write16(0, d, 64);
	uint32_t n = xcopy_list(p, 7, 64, 0, 1000, 0x02);
	put_be32(cdb + 10, n);
	expect_good(run(ts_a, cdb, 16, p, n, 0));
	read16(1000, rb, 64);
	ck_assert_int_eq(memcmp(d, rb, sizeof(d)), 0);

	/* Copy status of list 7: completed, one segment, all the bytes. */
	put_be32(rcr + 10, 64);
	struct cmd *c = run(ts_a, rcr, 16, NULL, 0, 64);
	ck_assert_int_eq(c->t.status, SAM_STAT_GOOD);
	const uint8_t *s = c->t.buf;
	ck_assert_uint_eq(s[4] & 0x7f, 1);
	ck_assert_uint_eq(get_be16(s + 5), 1);
	ck_assert_uint_eq(get_be32(s + 8), 64 * BS);
	cmd_free(c);
	/* Reported once; another nexus never had it. */
	expect_sense(run(ts_a, rcr, 16, NULL, 0, 64), SK_ILLEGAL_REQUEST,
		     ASC_INVALID_FIELD_IN_CDB);

	/* Stream segment descriptors are not supported. */
	n = xcopy_list(p, 8, 1, 0, 1, 0x03);
	expect_sense(run(ts_a, cdb, 16, p, n, 0), SK_ILLEGAL_REQUEST,
		     ASC_UNSUPPORTED_SEGMENT_DESCRIPTOR_TYPE);
	/* Destination beyond the end: COPY ABORTED. */
	n = xcopy_list(p, 8, 2, 0, NBLOCKS - 1, 0x02);
	c = run(ts_a, cdb, 16, p, n, 0);
	ck_assert_int_eq(c->t.status, SAM_STAT_CHECK_CONDITION);
	ck_assert_uint_eq(sk(c), SK_COPY_ABORTED);
	cmd_free(c);
	/* A parameter list shorter than its descriptors say. */
	put_be32(cdb + 10, n - 1);
	expect_sense(run(ts_a, cdb, 16, p, n - 1, 0), SK_ILLEGAL_REQUEST,
		     ASC_PARAMETER_LIST_LENGTH_ERROR);
	/* Operating parameters name the supported descriptors. */
	uint8_t op[16] = { SOP_RECEIVE_COPY_RESULTS, RCR_OPERATING_PARAMS };
	put_be32(op + 10, 64);
	c = run(ts_b, op, 16, NULL, 0, 64);
	ck_assert_int_eq(c->t.status, SAM_STAT_GOOD);
	s = c->t.buf;
	ck_assert_uint_ge(get_be16(s + 8), 1);
	ck_assert_uint_eq(s[43], 2);
	ck_assert_uint_eq(s[44], 0x02);
	ck_assert_uint_eq(s[45], 0xe4);
	cmd_free(c);
}
END_TEST

static Suite *sbc_suite(void)
{
	Suite *s = suite_create("sbc");
	TCase *tc = tcase_create("commands");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, caw_match_and_miscompare);
	tcase_add_test(tc, caw_limits);
	tcase_add_test(tc, range_lock_waits);
	tcase_add_test(tc, range_lock_drains_fast_writers);
	tcase_add_test(tc, orwrite_ors);
	tcase_add_test(tc, write_verify_bytchk);
	tcase_add_test(tc, write_atomic);
	tcase_add_test(tc, write_same);
	tcase_add_test(tc, unmap_joins_adjacent_descriptors);
	tcase_add_test(tc, eject_and_prevent);
	tcase_add_test(tc, read_defect_data);
	tcase_add_test(tc, vpd_extended_inquiry);
	tcase_add_test(tc, sanitize);
	tcase_add_test(tc, extended_copy);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(sbc_suite());

	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
