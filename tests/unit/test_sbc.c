/*
 * Unit tests for the other SBC-3 commands of scsi/sbc_*.c and
 * scsi/xcopy.c (those that compare data with the medium are
 * test_sbc_compare.c): range locks, ORWRITE, WRITE ATOMIC, UNMAP, WRITE
 * SAME, the removable medium, SANITIZE, EXTENDED COPY, through
 * lun_task_arrive on the harness's LUN over ram; data and exact sense
 * are checked, ASC/ASCQ as SPC-4's bytes.
 */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "tcq/byteorder.h"
#include "tcq/scsi_proto.h"
#include "scsi/lun.h"
#include "scsi/sbc.h"
#include "scsi/sbc_priv.h"
#include "tests/unit/sbc_util.h"

/* ---- range lock ------------------------------------------------------- */

static int resumed;

static void resume(struct tcq_task *t)
{
	resumed++;
	reactor_stop(&H.r);
}

START_TEST(range_lock_waits)
{
	struct tcq_task a, b, c;
	struct lun *lun = H.lun;

	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	memset(&c, 0, sizeof(c));
	a.lun = b.lun = c.lun = lun;
	resumed = 0;
	/* An exclusive holder of 10..19 makes an overlapping plain write
	 * wait, while one elsewhere goes on. */
	ck_assert_int_eq(sbc_lock(&a, 10, 10, true, resume), 0);
	ck_assert_int_eq(sbc_lock(&b, 15, 1, false, resume), 1);
	b.lock.r = &H.r;	/* taken outside reactor_run: resume on H.r */
	ck_assert_int_eq(sbc_lock(&c, 100, 1, false, resume), 0);
	sbc_unlock(&c);
	ck_assert_int_eq(resumed, 0);
	sbc_unlock(&a);		/* b is granted and resumed on H.r */
	harness_run_guarded(&H.r, HARNESS_WATCHDOG_MS);
	ck_assert_int_eq(resumed, 1);
	ck_assert_int_eq(b.lock.mode, LK_SHARED);
	/* Now b holds 15: an exclusive taker waits for it. */
	ck_assert_int_eq(sbc_lock(&a, 0, 16, true, resume), 1);
	a.lock.r = &H.r;
	sbc_unlock(&b);
	harness_run_guarded(&H.r, HARNESS_WATCHDOG_MS);
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
	a.lun = w.lun = H.lun;
	resumed = 0;
	/* A lock-free writer in flight: the exclusive taker must wait for
	 * it even though it cannot know its range. */
	ck_assert_int_eq(sbc_lock(&w, 500, 1, false, resume), 0);
	ck_assert_int_eq(w.lock.mode, LK_FAST);
	ck_assert_int_eq(sbc_lock(&a, 0, 8, true, resume), 1);
	a.lock.r = &H.r;
	sbc_unlock(&w);
	harness_run_guarded(&H.r, HARNESS_WATCHDOG_MS);
	ck_assert_int_eq(resumed, 1);
	sbc_unlock(&a);
}
END_TEST

/* ---- ORWRITE, WRITE ATOMIC ------------------------------------------- */

START_TEST(orwrite_ors_data_into_the_medium)
{
	static uint8_t d[2 * BS], rb[2 * BS];
	uint8_t cdb[16];

	memset(d, 0xf0, sizeof(d));
	write16(20, d, 2);
	memset(d, 0x0f, sizeof(d));
	d[7] = 0x01;
	cdb16(cdb, SOP_ORWRITE_16, 0, 20, 2);
	EXPECT_GOOD(run(A, cdb, 16, d, 2 * BS, 0));
	read16(20, rb, 2);
	ck_assert_uint_eq(rb[0], 0xff);
	ck_assert_uint_eq(rb[7], 0xf1);
	ck_assert_uint_eq(rb[2 * BS - 1], 0xff);
}
END_TEST

START_TEST(write_atomic_writes_and_refuses_over_its_maximum)
{
	static uint8_t d[4 * BS], rb[4 * BS];
	uint8_t cdb[16];

	memset(d, 0x5a, sizeof(d));
	cdb16(cdb, SOP_WRITE_ATOMIC_16, 0, 40, 0);
	put_be16(cdb + 12, 4);
	EXPECT_GOOD(run(A, cdb, 16, d, 4 * BS, 0));
	read16(40, rb, 4);
	ck_assert_int_eq(memcmp(d, rb, sizeof(d)), 0);
	/* Above MAXIMUM ATOMIC TRANSFER LENGTH (Block Limits bytes 44-47),
	 * TRANSFER LENGTH (bytes 12-13) is the field in error. */
	uint32_t max = (uint32_t)block_limits(44) << 24 |
		       (uint32_t)block_limits(45) << 16 |
		       (uint32_t)block_limits(46) << 8 | block_limits(47);
	ck_assert_uint_eq(max, SBC_MAX_ATOMIC_BLOCKS);
	uint32_t big = (max + 1) * BS;
	uint8_t *bd2 = calloc(1, big);
	ck_assert_ptr_nonnull(bd2);
	put_be16(cdb + 12, (uint16_t)(max + 1));
	struct cmd *c = run(A, cdb, 16, bd2, big, 0);
	EXPECT_INVALID_FIELD_IN_CDB(c, 12, -1);
	free(bd2);
}
END_TEST

/* ---- UNMAP ------------------------------------------------------------ */

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
	EXPECT_GOOD(run(A, cdb, 10, p, len, 0));
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

static uint8_t ws_blk[BS];

static void ws_fill(void)
{
	for (unsigned i = 0; i < BS; i++)
		ws_blk[i] = (uint8_t)i;
}

START_TEST(write_same_repeats_the_block)
{
	static uint8_t rb[300 * BS];
	uint8_t cdb[16];

	ws_fill();
	cdb16(cdb, SOP_WRITE_SAME_16, 0, 100, 300);
	EXPECT_GOOD(run(A, cdb, 16, ws_blk, BS, 0));
	read16(100, rb, 300);
	for (unsigned b = 0; b < 300; b++)
		ck_assert_int_eq(memcmp(rb + b * BS, ws_blk, BS), 0);
}
END_TEST

START_TEST(write_same_unmap_reads_back_zeros)
{
	uint8_t cdb[16];

	ws_fill();
	cdb16(cdb, SOP_WRITE_SAME_16, 0, 100, 300);
	EXPECT_GOOD(run(A, cdb, 16, ws_blk, BS, 0));
	/* UNMAP on a thin LUN deallocates: zeros read back (LBPRZ). */
	cdb16(cdb, SOP_WRITE_SAME_16, 0x08, 100, 300);
	EXPECT_GOOD(run(A, cdb, 16, ws_blk, BS, 0));
	expect_blocks(100, 300, 0);
}
END_TEST

START_TEST(write_same_refuses_anchor_and_over_maximum)
{
	uint8_t cdb[16];
	struct cmd *c;

	ws_fill();
	/* ANCHOR (byte 1 bit 4): no anchored state (ANC_SUP=0). */
	cdb16(cdb, SOP_WRITE_SAME_16, 0x18, 100, 1);
	EXPECT_SENSE(run(A, cdb, 16, ws_blk, BS, 0), SK_ILLEGAL_REQUEST,
		     0x24, 0x00);
	/* INVALID FIELD IN CDB */
	/* More than MAXIMUM WRITE SAME LENGTH: NUMBER OF LOGICAL BLOCKS
	 * (bytes 10-13) is the field in error. */
	cdb16(cdb, SOP_WRITE_SAME_16, 0, 0, SBC_MAX_WS_BLOCKS + 1);
	c = run(A, cdb, 16, ws_blk, BS, 0);
	EXPECT_INVALID_FIELD_IN_CDB(c, 10, -1);
}
END_TEST

START_TEST(write_same_zero_blocks_runs_to_the_end)
{
	static uint8_t rb[2 * BS];
	uint8_t cdb[16];

	ws_fill();
	/* WSNZ=0: zero blocks write to the end of the medium. */
	cdb16(cdb, SOP_WRITE_SAME_16, 0, NBLOCKS - 2, 0);
	EXPECT_GOOD(run(A, cdb, 16, ws_blk, BS, 0));
	read16(NBLOCKS - 2, rb, 2);
	ck_assert_int_eq(memcmp(rb, ws_blk, BS), 0);
	ck_assert_int_eq(memcmp(rb + BS, ws_blk, BS), 0);
}
END_TEST

START_TEST(write_same_with_two_blocks_of_data_refused)
{
	static uint8_t two[2 * BS];
	uint8_t cdb[16];

	/* One block is the whole Data-Out; two cannot be written as one. */
	cdb16(cdb, SOP_WRITE_SAME_16, 0, 0, 1);
	EXPECT_SENSE(run(A, cdb, 16, two, 2 * BS, 0), SK_ILLEGAL_REQUEST,
		     0x0e, 0x03);
	/* INVALID FIELD IN INFORMATION UNIT */
}
END_TEST

/* ---- removable medium ------------------------------------------------- */

static struct cmd *ssu(unsigned n, uint8_t b4)
{
	uint8_t cdb[6] = { SOP_START_STOP_UNIT, 0, 0, 0, b4 };

	return run(n, cdb, 6, NULL, 0, 0);
}

static struct cmd *prevent(unsigned n, uint8_t v)
{
	uint8_t cdb[6] = { SOP_PREVENT_ALLOW, 0, 0, 0, v };

	return run(n, cdb, 6, NULL, 0, 0);
}

START_TEST(eject_and_prevent)
{
	uint8_t cdb[6] = { SOP_TEST_UNIT_READY };

	H.lun->removable = true;
	EXPECT_GOOD(ssu(A, 0x02));		/* LOEJ, START=0: eject */
	EXPECT_SENSE(run(A, cdb, 6, NULL, 0, 0), SK_NOT_READY, 0x3a, 0x02);
	/* MEDIUM NOT PRESENT - TRAY OPEN */
	EXPECT_GOOD(ssu(A, 0x03));		/* load */
	EXPECT_GOOD(run(A, cdb, 6, NULL, 0, 0));
	/* PREVENT from nexus B blocks eject from A, until B's nexus
	 * goes away. */
	EXPECT_GOOD(prevent(B, 1));
	EXPECT_SENSE(ssu(A, 0x02), SK_ILLEGAL_REQUEST, 0x53, 0x02);
	/* MEDIUM REMOVAL PREVENTED */
	/* A power condition makes LOEJ ignored. */
	EXPECT_GOOD(ssu(A, 0x12));
	sbc_nexus_gone(H.lun, harness_nexus(&H, B));
	EXPECT_GOOD(ssu(A, 0x02));
	EXPECT_GOOD(ssu(A, 0x03));
	/* LUN reset ends PREVENT too. */
	EXPECT_GOOD(prevent(A, 1));
	sbc_lun_reset(H.lun);
	EXPECT_GOOD(ssu(A, 0x02));
	EXPECT_GOOD(ssu(A, 0x03));
}
END_TEST

START_TEST(read_defect_data_reports_empty_lists)
{
	uint8_t cdb[10] = { SOP_READ_DEFECT_DATA_10, 0, 0x18 | 0x05 };

	put_be16(cdb + 7, 32);
	struct cmd *c = run(A, cdb, 10, NULL, 0, 32);
	EXPECT_GOOD(c);
	ck_assert_uint_eq(c->t.data_in_len, 4);
	const uint8_t *p = cmd_data(c);
	ck_assert_uint_eq(p[1], 0x1d);		/* PLISTV, GLISTV, format */
	ck_assert_uint_eq(get_be16(p + 2), 0);	/* empty list */
}
END_TEST

/* Extended INQUIRY Data VPD page: the task attributes we honour. */
START_TEST(vpd_extended_inquiry)
{
	uint8_t cdb[6] = { SOP_INQUIRY, 0x01, 0x86, 0, 64, 0 };
	struct cmd *c = run(A, cdb, 6, NULL, 0, 64);
	const uint8_t *p = cmd_data(c);

	EXPECT_GOOD(c);
	ck_assert_uint_eq(c->t.data_in_len, 64);
	ck_assert_uint_eq(p[1], 0x86);
	ck_assert_uint_eq(get_be16(p + 2), 0x3c);
	ck_assert_uint_eq(p[5], 0x07);		/* HEADSUP ORDSUP SIMPSUP */
	ck_assert_uint_eq(p[6] & 0x01, 0x01);	/* V_SUP */

	uint8_t list[6] = { SOP_INQUIRY, 0x01, 0x00, 0, 64, 0 };
	c = run(A, list, 6, NULL, 0, 64);
	p = cmd_data(c);
	EXPECT_GOOD(c);
	ck_assert_ptr_nonnull(memchr(p + 4, 0x86, p[3]));
}
END_TEST

/* ---- SANITIZE --------------------------------------------------------- */

START_TEST(sanitize_overwrite_and_block_erase)
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
	EXPECT_SENSE(run(A, cdb, 10, p, sizeof(p), 0), SK_ILLEGAL_REQUEST,
		     0x20, 0x00);
	/* INVALID COMMAND OPERATION CODE */
	H.lun->sanitize_ok = true;
	EXPECT_GOOD(run(A, cdb, 10, p, sizeof(p), 0));
	read16(NBLOCKS - 1, rb, 1);
	for (unsigned i = 0; i < BS; i++)
		ck_assert_uint_eq(rb[i], "abcd"[i % 4]);
	/* OWCOUNT 0 is invalid. */
	p[0] = 0;
	EXPECT_SENSE(run(A, cdb, 10, p, sizeof(p), 0), SK_ILLEGAL_REQUEST,
		     0x26, 0x00);
	/* INVALID FIELD IN PARAMETER LIST */
	/* BLOCK ERASE deallocates everything. */
	cdb[1] = SAN_BLOCK_ERASE;
	put_be16(cdb + 7, 0);
	EXPECT_GOOD(run(A, cdb, 10, NULL, 0, 0));
	expect_blocks(NBLOCKS - 1, 1, 0);
	/* An unknown service action. */
	cdb[1] = 0x05;
	EXPECT_SENSE(run(A, cdb, 10, NULL, 0, 0), SK_ILLEGAL_REQUEST,
		     0x24, 0x00);
	/* INVALID FIELD IN CDB */
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
	memcpy(td + 8, H.lun->naa, 16);
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
	EXPECT_GOOD(run(A, cdb, 16, p, n, 0));
	read16(1000, rb, 64);
	ck_assert_int_eq(memcmp(d, rb, sizeof(d)), 0);

	/* Copy status of list 7: completed, one segment, all the bytes. */
	put_be32(rcr + 10, 64);
	struct cmd *c = run(A, rcr, 16, NULL, 0, 64);
	EXPECT_GOOD(c);
	const uint8_t *s = cmd_data(c);
	ck_assert_uint_eq(s[4] & 0x7f, 1);
	ck_assert_uint_eq(get_be16(s + 5), 1);
	ck_assert_uint_eq(get_be32(s + 8), 64 * BS);
	/* Reported once; another nexus never had it. */
	EXPECT_SENSE(run(A, rcr, 16, NULL, 0, 64), SK_ILLEGAL_REQUEST,
		     0x24, 0x00);
	/* INVALID FIELD IN CDB */
	EXPECT_SENSE(run(B, rcr, 16, NULL, 0, 64), SK_ILLEGAL_REQUEST,
		     0x24, 0x00);
	/* INVALID FIELD IN CDB */

	/* Stream segment descriptors are not supported. */
	n = xcopy_list(p, 8, 1, 0, 1, 0x03);
	EXPECT_SENSE(run(A, cdb, 16, p, n, 0), SK_ILLEGAL_REQUEST,
		     0x26, 0x09);
	/* UNSUPPORTED SEGMENT DESCRIPTOR TYPE CODE */
	/* Destination beyond the end: COPY ABORTED. */
	n = xcopy_list(p, 8, 2, 0, NBLOCKS - 1, 0x02);
	c = run(A, cdb, 16, p, n, 0);
	EXPECT_STATUS(c, SAM_STAT_CHECK_CONDITION);
	ck_assert_uint_eq(c->t.sense[2] & 0x0f, SK_COPY_ABORTED);
	/* A parameter list shorter than its descriptors say. */
	put_be32(cdb + 10, n - 1);
	EXPECT_SENSE(run(A, cdb, 16, p, n - 1, 0), SK_ILLEGAL_REQUEST,
		     0x1a, 0x00);
	/* PARAMETER LIST LENGTH ERROR */
	/* Operating parameters name the supported descriptors. */
	uint8_t op[16] = { SOP_RECEIVE_COPY_RESULTS, RCR_OPERATING_PARAMS };
	put_be32(op + 10, 64);
	c = run(B, op, 16, NULL, 0, 64);
	EXPECT_GOOD(c);
	s = cmd_data(c);
	ck_assert_uint_ge(get_be16(s + 8), 1);
	ck_assert_uint_eq(s[43], 2);
	ck_assert_uint_eq(s[44], 0x02);
	ck_assert_uint_eq(s[45], 0xe4);
}
END_TEST

static Suite *sbc_suite(void)
{
	Suite *s = suite_create("sbc");
	TCase *tc = tcase_create("commands");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 30);
	harness_add(tc, range_lock_waits);
	harness_add(tc, range_lock_drains_fast_writers);
	harness_add(tc, orwrite_ors_data_into_the_medium);
	harness_add(tc, write_atomic_writes_and_refuses_over_its_maximum);
	harness_add(tc, unmap_joins_adjacent_descriptors);
	harness_add(tc, write_same_repeats_the_block);
	harness_add(tc, write_same_unmap_reads_back_zeros);
	harness_add(tc, write_same_refuses_anchor_and_over_maximum);
	harness_add(tc, write_same_zero_blocks_runs_to_the_end);
	harness_add(tc, write_same_with_two_blocks_of_data_refused);
	harness_add(tc, eject_and_prevent);
	harness_add(tc, read_defect_data_reports_empty_lists);
	harness_add(tc, vpd_extended_inquiry);
	harness_add(tc, sanitize_overwrite_and_block_erase);
	harness_add(tc, extended_copy);
	suite_add_tcase(s, tc);
	return s;
}

int main(int argc, char **argv)
{
	return harness_main(argc, argv, sbc_suite);
}
