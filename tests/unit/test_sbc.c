/*
 * Unit tests for the SBC-3 commands of scsi/sbc_*.c and scsi/xcopy.c:
 * commands go through lun_task_arrive on a LUN over the ram backend (or
 * the harness's memory backend where a check needs a CAW limit or a
 * medium that loses writes), on the harness's reactor; data and exact
 * sense are checked, ASC/ASCQ as SPC-4's bytes.
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
#include "scsi/stats.h"
#include "tests/unit/harness.h"

#define BS 512u
#define NBLOCKS 131072u	/* 64 MiB: above MAXIMUM WRITE SAME LENGTH */
#define A 0		/* the two nexuses */
#define B 1

static struct harness_lun H;

static void setup(void)
{
	harness_lun_setup(&H, "ram", NBLOCKS * BS, 2);
	ck_assert_ptr_nonnull(H.lun->sbc);
}

static void teardown(void)
{
	harness_lun_teardown(&H);
}

/* A LUN over the memory backend instead (its own fixture per check). */
static void setup_mem(uint32_t caw_blocks, uint64_t lost_lba)
{
	harness_lun_open_bdev(&H, harness_mem_bdev(1u << 20, caw_blocks,
						   lost_lba));
	harness_nexus_join(&H, 2);
}

static struct cmd *run(unsigned n, const uint8_t *cdb, uint16_t clen,
		       const void *out, uint32_t len, uint32_t in_len)
{
	return run_cdb(&H, n, cdb, clen, out, len, in_len);
}

/* A 10- or 16-byte CDB of the READ/WRITE layout: LBA and length. */
static void cdb_rw(uint8_t *cdb, unsigned len, uint8_t op, uint8_t b1,
		   uint64_t lba, uint32_t n)
{
	memset(cdb, 0, len);
	cdb[0] = op;
	cdb[1] = b1;
	if (len == 10) {
		put_be32(cdb + 2, (uint32_t)lba);
		put_be16(cdb + 7, (uint16_t)n);
	} else {
		put_be64(cdb + 2, lba);
		put_be32(cdb + 10, n);
	}
}

static void cdb16(uint8_t *cdb, uint8_t op, uint8_t b1, uint64_t lba,
		  uint32_t n)
{
	cdb_rw(cdb, 16, op, b1, lba, n);
}

static void write16(uint64_t lba, const void *data, uint32_t blocks)
{
	uint8_t cdb[16];

	cdb16(cdb, SOP_WRITE_16, 0, lba, blocks);
	EXPECT_GOOD(run(A, cdb, 16, data, blocks * BS, 0));
}

/* Reads blocks into out. */
static void read16(uint64_t lba, void *out, uint32_t blocks)
{
	uint8_t cdb[16];

	cdb16(cdb, SOP_READ_16, 0, lba, blocks);
	struct cmd *c = run(A, cdb, 16, NULL, 0, blocks * BS);
	EXPECT_GOOD(c);
	ck_assert_uint_eq(c->t.data_in_len, blocks * BS);
	memcpy(out, cmd_data(c), blocks * BS);
}

static void expect_blocks(uint64_t lba, uint32_t blocks, uint8_t byte)
{
	uint8_t *rb = malloc(blocks * BS);

	ck_assert_ptr_nonnull(rb);
	read16(lba, rb, blocks);
	for (unsigned i = 0; i < blocks * BS; i++)
		ck_assert_msg(rb[i] == byte, "byte %u is %#x, not %#x", i,
			      rb[i], byte);
	free(rb);
}

/* Backend I/Os submitted for the LUN so far. */
static uint64_t backend_ios(void)
{
	struct stats_snapshot snap;

	stats_snapshot(H.lun, &snap);
	return snap.c.ios;
}

/* Byte b of VPD page of 64 bytes. */
static uint8_t vpd_byte(uint8_t page, unsigned b)
{
	uint8_t cdb[6] = { SOP_INQUIRY, 0x01, page, 0, 64, 0 };
	struct cmd *c = run(A, cdb, 6, NULL, 0, 64);

	EXPECT_GOOD(c);
	ck_assert_uint_eq(c->t.data_in_len, 64);
	ck_assert_uint_eq(cmd_data(c)[1], page);
	return cmd_data(c)[b];
}

/* Byte b of the Block Limits VPD page (SBC-3 6.5.3). */
static uint8_t block_limits(unsigned b)
{
	return vpd_byte(0xb0, b);
}

#ifdef TCQ_UNIT_KNOWN_BUGS
/* Byte b of the Block Device Characteristics VPD page (SBC-4 6.6.2). */
static uint8_t block_device_characteristics(unsigned b)
{
	return vpd_byte(0xb1, b);
}
#endif

/* ---- COMPARE AND WRITE ------------------------------------------------ */

static void caw_cdb(uint8_t *cdb, uint8_t b1, uint64_t lba, uint8_t blocks)
{
	cdb16(cdb, SOP_COMPARE_AND_WRITE, b1, lba, 0);
	cdb[13] = blocks;	/* NUMBER OF LOGICAL BLOCKS */
}

START_TEST(caw_match_writes_the_new_data)
{
	static uint8_t d[8 * BS];
	uint8_t cdb[16];

	memset(d, 'A', 4 * BS);
	write16(10, d, 4);
	/* verify 'A' x4, write 'B' x4 */
	memset(d + 4 * BS, 'B', 4 * BS);
	caw_cdb(cdb, 0, 10, 4);
	EXPECT_GOOD(run(A, cdb, 16, d, 8 * BS, 0));
	expect_blocks(10, 4, 'B');
}
END_TEST

START_TEST(caw_miscompare_reports_offset)
{
	static uint8_t d[8 * BS];
	uint8_t cdb[16];

	memset(d, 'B', 4 * BS);
	write16(10, d, 4);
	/* Verify data 'B' with one byte off: MISCOMPARE, INFORMATION is
	 * the offset of that byte (SBC-3 5.2), the medium is untouched. */
	d[4 * BS - 27] = 'C';
	memset(d + 4 * BS, 'Z', 4 * BS);
	caw_cdb(cdb, 0, 10, 4);
	struct cmd *c = run(A, cdb, 16, d, 8 * BS, 0);
	EXPECT_SENSE(c, SK_MISCOMPARE, 0x1d, 0x00);
	/* MISCOMPARE DURING VERIFY OPERATION */
	EXPECT_SENSE_INFO(c, 4 * BS - 27);
	expect_blocks(10, 4, 'B');
}
END_TEST

/* The same miscompare with D_SENSE=1: descriptor format sense carries
 * the offset in its Information descriptor. */
START_TEST(caw_miscompare_in_descriptor_sense)
{
	static uint8_t d[2 * BS];
	uint8_t ms[6] = { SOP_MODE_SENSE_6, 0x08, 0x0a, 0, 255, 0 };
	uint8_t sel[6] = { SOP_MODE_SELECT_6, 0x10, 0, 0, 0, 0 };
	uint8_t page[4 + 12], cdb[16];

	/* The control page as it is, with D_SENSE (byte 2 bit 2) set. */
	struct cmd *c = run(A, ms, 6, NULL, 0, 255);
	EXPECT_GOOD(c);
	ck_assert_uint_eq(c->t.data_in_len, sizeof(page));
	memcpy(page, cmd_data(c), sizeof(page));
	ck_assert_uint_eq(page[4] & 0x3f, 0x0a);
	page[0] = 0;		/* MODE DATA LENGTH: reserved in MODE SELECT */
	page[4] &= 0x7f;	/* PS: reserved too */
	page[4 + 2] |= 0x04;
	sel[4] = sizeof(page);
	EXPECT_GOOD(run(A, sel, 6, page, sizeof(page), 0));

	memset(d, 'q', BS);
	write16(3, d, 1);
	d[17] = 'r';
	caw_cdb(cdb, 0, 3, 1);
	c = run(A, cdb, 16, d, 2 * BS, 0);
	EXPECT_SENSE(c, SK_MISCOMPARE, 0x1d, 0x00);
	/* MISCOMPARE DURING VERIFY OPERATION */
	ck_assert_uint_eq(c->t.sense[0], 0x72);
	EXPECT_SENSE_INFO(c, 17);
}
END_TEST

/* Block Limits says how many blocks one COMPARE AND WRITE may cover, and
 * that many work. Over ram it is the most an 8-bit field holds. */
START_TEST(caw_of_the_maximum_length_runs)
{
	uint8_t max = block_limits(5);	/* MAXIMUM COMPARE AND WRITE LENGTH */
	uint8_t *d = calloc(2, (size_t)max * BS);
	uint8_t cdb[16];

	ck_assert_uint_eq(max, 255);
	ck_assert_ptr_nonnull(d);
	memset(d + (size_t)max * BS, 'M', (size_t)max * BS);
	caw_cdb(cdb, 0, 1000, max);
	EXPECT_GOOD(run(A, cdb, 16, d, 2u * max * BS, 0));
	expect_blocks(1000, max, 'M');
	free(d);
}
END_TEST

/* A backend with a smaller limit (as rbd's one block): one block over
 * the reported maximum is INVALID FIELD IN CDB at NUMBER OF LOGICAL
 * BLOCKS (SBC-3 5.2), and nothing is read or written. */
START_TEST(caw_one_block_over_the_limit_is_invalid_field)
{
	static uint8_t d[6 * BS];
	uint8_t cdb[16];

	setup_mem(2, UINT64_MAX);
	uint8_t max = block_limits(5);	/* MAXIMUM COMPARE AND WRITE LENGTH */
	ck_assert_uint_eq(max, 2);
	memset(d + 3 * BS, 'O', 3 * BS);
	uint64_t before = backend_ios();
	caw_cdb(cdb, 0, 20, max + 1);
	struct cmd *c = run(A, cdb, 16, d, 2 * (max + 1) * BS, 0);
	EXPECT_INVALID_FIELD_IN_CDB(c, 13, -1);
	ck_assert_uint_eq(backend_ios(), before);
	expect_blocks(20, 3, 0);
	/* At the limit it compares and writes, in the backend. */
	memset(d + 2 * BS, 'O', 2 * BS);
	caw_cdb(cdb, 0, 20, max);
	EXPECT_GOOD(run(A, cdb, 16, d, 2 * max * BS, 0));
	expect_blocks(20, 2, 'O');
	harness_lun_teardown(&H);
}
END_TEST

/* SBC-3 5.2: zero blocks read, compare and write nothing, and that is
 * not an error. */
START_TEST(caw_zero_blocks_is_good_and_writes_nothing)
{
	static uint8_t d[BS];
	uint8_t cdb[16];

	memset(d, 'z', BS);
	write16(40, d, 1);
	uint64_t before = backend_ios();
	caw_cdb(cdb, 0, 40, 0);
	EXPECT_GOOD(run(A, cdb, 16, NULL, 0, 0));
	ck_assert_uint_eq(backend_ios(), before);
	expect_blocks(40, 1, 'z');
}
END_TEST

START_TEST(caw_data_out_must_match_number_of_blocks)
{
	static uint8_t d[2 * BS];
	uint8_t cdb[16];

	/* 0 blocks but data sent: the two disagree, NUMBER OF LOGICAL
	 * BLOCKS is the field in error. */
	caw_cdb(cdb, 0, 0, 0);
	struct cmd *c = run(A, cdb, 16, d, 2 * BS, 0);
	EXPECT_INVALID_FIELD_IN_CDB(c, 13, -1);
}
END_TEST

START_TEST(caw_beyond_the_end_and_wrprotect_refused)
{
	static uint8_t d[2 * BS];
	uint8_t cdb[16];

	caw_cdb(cdb, 0, NBLOCKS, 1);
	EXPECT_SENSE(run(A, cdb, 16, d, 2 * BS, 0), SK_ILLEGAL_REQUEST,
		     0x21, 0x00);
	/* LOGICAL BLOCK ADDRESS OUT OF RANGE */
	/* WRPROTECT (bits 7-5 of byte 1): no protection information. */
	caw_cdb(cdb, 0x20, 0, 1);
	struct cmd *c = run(A, cdb, 16, d, 2 * BS, 0);
	EXPECT_INVALID_FIELD_IN_CDB(c, 1, 7);
}
END_TEST

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

/* ---- ORWRITE, WRITE AND VERIFY, VERIFY, WRITE ATOMIC ------------------- */

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

static void write_verify10(uint8_t *cdb, uint8_t b1, uint32_t lba,
			   uint16_t blocks)
{
	cdb_rw(cdb, 10, SOP_WRITE_VERIFY_10, b1, lba, blocks);
}

/* SBC-4 5.49: the blocks are written, then read back and compared
 * byte by byte with the Data-Out (BYTCHK 01b); what the medium held
 * before does not matter. */
START_TEST(write_verify_bytchk_writes_then_compares_with_the_medium)
{
	static uint8_t d[3 * BS], rb[3 * BS];
	uint8_t cdb[10];

	memset(d, 0x3c, sizeof(d));
	write16(30, d, 3);
	for (unsigned i = 0; i < sizeof(d); i++)
		d[i] = (uint8_t)(i * 7);
	write_verify10(cdb, 0x02, 30, 3);	/* BYTCHK 01b */
	EXPECT_GOOD(run(A, cdb, 10, d, 3 * BS, 0));
	read16(30, rb, 3);
	ck_assert_int_eq(memcmp(d, rb, sizeof(d)), 0);
}
END_TEST

/* A medium that acknowledges a write it does not keep: the verify step
 * finds it, MISCOMPARE with the offset of the first byte that differs. */
START_TEST(write_verify_miscompare_when_the_medium_drops_the_write)
{
	static uint8_t d[3 * BS];
	uint8_t cdb[10];

	setup_mem(0, 31);		/* block 31 is never written */
	for (unsigned i = 0; i < sizeof(d); i++)
		d[i] = (uint8_t)(i | 1);	/* never 0, as the medium is */
	write_verify10(cdb, 0x02, 30, 3);
	struct cmd *c = run(A, cdb, 10, d, 3 * BS, 0);
	EXPECT_SENSE(c, SK_MISCOMPARE, 0x1d, 0x00);
	/* MISCOMPARE DURING VERIFY OPERATION */
	EXPECT_SENSE_INFO(c, BS);
	/* BYTCHK 00b verifies the medium only: the same write is GOOD. */
	write_verify10(cdb, 0x00, 30, 3);
	EXPECT_GOOD(run(A, cdb, 10, d, 3 * BS, 0));
	harness_lun_teardown(&H);
}
END_TEST

/* SBC-4 5.49: BYTCHK 10b and 11b are reserved for WRITE AND VERIFY; the
 * field pointer names BYTCHK's most significant bit (byte 1 bit 2). */
START_TEST(write_verify_reserved_bytchk_is_invalid_field)
{
	static uint8_t d[3 * BS];
	uint8_t cdb[10];

	for (uint8_t b1 = 0x04; b1 <= 0x06; b1 += 2) {
		write_verify10(cdb, b1, 30, 3);
		struct cmd *c = run(A, cdb, 10, d, 3 * BS, 0);
		EXPECT_INVALID_FIELD_IN_CDB(c, 1, 2);
	}
}
END_TEST

static void verify16(uint8_t *cdb, uint8_t bytchk, uint64_t lba,
		     uint32_t blocks)
{
	cdb16(cdb, SOP_VERIFY_16, (uint8_t)(bytchk << 1), lba, blocks);
}

/* VERIFY with BYTCHK 01b compares the Data-Out with the medium: equal is
 * GOOD, a difference is MISCOMPARE with INFORMATION the offset of the
 * first differing byte from the start of the Data-Out Buffer. */
START_TEST(verify_bytchk_miscompare_reports_offset)
{
	static uint8_t d[4 * BS];
	uint8_t cdb[16];

	memset(d, 'v', sizeof(d));
	write16(60, d, 4);
	verify16(cdb, 1, 60, 4);
	EXPECT_GOOD(run(A, cdb, 16, d, 4 * BS, 0));
	d[2 * BS + 100] = 'w';
	d[3 * BS + 1] = 'w';
	struct cmd *c = run(A, cdb, 16, d, 4 * BS, 0);
	EXPECT_SENSE(c, SK_MISCOMPARE, 0x1d, 0x00);
	/* MISCOMPARE DURING VERIFY OPERATION */
	EXPECT_SENSE_INFO(c, 2 * BS + 100);
}
END_TEST

/* BYTCHK 11b: one block of Data-Out stands for every block (SBC-4 5.32);
 * the offset counts in that duplicated buffer. */
START_TEST(verify_bytchk_one_block_compared_with_each)
{
	static uint8_t d[3 * BS];
	uint8_t cdb[16];

	memset(d, 'k', sizeof(d));
	d[2 * BS + 5] = 'j';
	write16(70, d, 3);
	verify16(cdb, 3, 70, 2);
	EXPECT_GOOD(run(A, cdb, 16, d, BS, 0));
	verify16(cdb, 3, 70, 3);
	struct cmd *c = run(A, cdb, 16, d, BS, 0);
	EXPECT_SENSE(c, SK_MISCOMPARE, 0x1d, 0x00);
	/* MISCOMPARE DURING VERIFY OPERATION */
	EXPECT_SENSE_INFO(c, 2 * BS + 5);
}
END_TEST

/* GET LBA STATUS (SBC-3 5.6) over a medium with one written run: three
 * descriptors, deallocated (1), mapped (0), deallocated. */
START_TEST(get_lba_status_reports_mapped_and_deallocated_runs)
{
	static uint8_t d[10 * BS];
	static const uint8_t want[8 + 3 * 16] = {
		0x00, 0x00, 0x00, 0x34, 0, 0, 0, 0,	/* 4 + 3 x 16 bytes */
		0, 0, 0, 0, 0, 0, 0, 0, 0x00, 0x00, 0x00, 0x0a, 0x01,
		0, 0, 0,
		0, 0, 0, 0, 0, 0, 0, 10, 0x00, 0x00, 0x00, 0x0a, 0x00,
		0, 0, 0,
		0, 0, 0, 0, 0, 0, 0, 20, 0x00, 0x00, 0x07, 0xec, 0x01,
		0, 0, 0,
	};
	uint8_t cdb[16];

	setup_mem(0, UINT64_MAX);	/* 1 MiB: 2048 blocks */
	write16(10, d, 10);
	cdb16(cdb, SOP_SERVICE_ACTION_IN_16, SAI_GET_LBA_STATUS, 0, 256);
	struct cmd *c = run(A, cdb, 16, NULL, 0, 256);
	EXPECT_GOOD(c);
	ck_assert_uint_eq(c->t.data_in_len, sizeof(want));
	ck_assert_mem_eq(cmd_data(c), want, sizeof(want));
	harness_lun_teardown(&H);
}
END_TEST

#ifdef TCQ_UNIT_KNOWN_BUGS
/*
 * Known bug, kept out of the build (to see it fail, in the build
 * directory: rm tests/unit/test_sbc-test_sbc.o; make tests/unit/test_sbc
 * CPPFLAGS=-DTCQ_UNIT_KNOWN_BUGS; then run the check by name). SBC-4 5.30
 * (VERIFY (10), BYTCHK field) says that with
 * BYTCHK 01b or 11b, VBULS=0 in the Block Device Characteristics VPD
 * page (byte 8 bit 0, which this LUN reports as 0) and any LBA of the
 * command unmapped, the command ends in CHECK CONDITION, MISCOMPARE,
 * 1Dh/01h MISCOMPARE VERIFY OF UNMAPPED LBA. scsi/sbc.c sbc_verify
 * compares the data without asking the backend whether the blocks are
 * mapped, and answers GOOD here.
 */
START_TEST(verify_bytchk_of_an_unmapped_block_is_miscompare_of_unmapped_lba)
{
	static uint8_t zeros[BS];
	uint8_t cdb[16];

	setup_mem(0, UINT64_MAX);
	ck_assert_uint_eq(block_device_characteristics(8) & 0x01, 0); /* VBULS */
	cdb16(cdb, SOP_VERIFY_16, 0x02, 50, 1);	/* never written */
	EXPECT_SENSE(run(A, cdb, 16, zeros, BS, 0), SK_MISCOMPARE, 0x1d, 0x01);
	/* MISCOMPARE VERIFY OF UNMAPPED LBA */
	harness_lun_teardown(&H);
}
END_TEST
#endif

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
	TCase *mem = tcase_create("memory-backend");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 30);
	harness_add(tc, caw_match_writes_the_new_data);
	harness_add(tc, caw_miscompare_reports_offset);
	harness_add(tc, caw_miscompare_in_descriptor_sense);
	harness_add(tc, caw_of_the_maximum_length_runs);
	harness_add(tc, caw_zero_blocks_is_good_and_writes_nothing);
	harness_add(tc, caw_data_out_must_match_number_of_blocks);
	harness_add(tc, caw_beyond_the_end_and_wrprotect_refused);
	harness_add(tc, range_lock_waits);
	harness_add(tc, range_lock_drains_fast_writers);
	harness_add(tc, orwrite_ors_data_into_the_medium);
	harness_add(tc, write_verify_bytchk_writes_then_compares_with_the_medium);
	harness_add(tc, write_verify_reserved_bytchk_is_invalid_field);
	harness_add(tc, verify_bytchk_miscompare_reports_offset);
	harness_add(tc, verify_bytchk_one_block_compared_with_each);
	harness_add(tc, write_atomic_writes_and_refuses_over_its_maximum);
	harness_add(tc, write_same_repeats_the_block);
	harness_add(tc, write_same_unmap_reads_back_zeros);
	harness_add(tc, write_same_refuses_anchor_and_over_maximum);
	harness_add(tc, write_same_zero_blocks_runs_to_the_end);
	harness_add(tc, write_same_with_two_blocks_of_data_refused);
	harness_add(tc, unmap_joins_adjacent_descriptors);
	harness_add(tc, eject_and_prevent);
	harness_add(tc, read_defect_data_reports_empty_lists);
	harness_add(tc, vpd_extended_inquiry);
	harness_add(tc, sanitize_overwrite_and_block_erase);
	harness_add(tc, extended_copy);
	suite_add_tcase(s, tc);
	/* These open their own LUN over the memory backend. */
	tcase_set_timeout(mem, 30);
	harness_add(mem, caw_one_block_over_the_limit_is_invalid_field);
	harness_add(mem, write_verify_miscompare_when_the_medium_drops_the_write);
	harness_add(mem, get_lba_status_reports_mapped_and_deallocated_runs);
#ifdef TCQ_UNIT_KNOWN_BUGS
	harness_add(mem,
	    verify_bytchk_of_an_unmapped_block_is_miscompare_of_unmapped_lba);
#endif
	suite_add_tcase(s, mem);
	return s;
}

int main(int argc, char **argv)
{
	return harness_main(argc, argv, sbc_suite);
}
