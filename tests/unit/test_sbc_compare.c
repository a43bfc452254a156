/*
 * The SBC commands that compare data with the medium (scsi/sbc_rmw.c,
 * scsi/sbc.c): COMPARE AND WRITE and its limits, WRITE AND VERIFY, VERIFY
 * with BYTCHK, and GET LBA STATUS, through the device server on the
 * harness's LUN (ram, or the memory backend where a check needs a CAW
 * limit, a medium that loses writes or unmapped blocks).
 */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "tcq/byteorder.h"
#include "tcq/scsi_proto.h"
#include "scsi/sbc.h"
#include "tests/unit/sbc_util.h"

/* Byte b of the Block Device Characteristics VPD page (SBC-4 6.6.2). */
static uint8_t block_device_characteristics(unsigned b)
{
	return vpd_byte(0xb1, b);
}

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

/* ---- WRITE AND VERIFY, VERIFY, GET LBA STATUS ------------------------ */

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

/*
 * SBC-4 5.30 (VERIFY (10), BYTCHK field): with BYTCHK 01b or 11b and any
 * LBA of the command unmapped, a device server that reports VBULS=0 in
 * the Block Device Characteristics VPD page (byte 8 bit 0) answers
 * MISCOMPARE VERIFY OF UNMAPPED LBA (1Dh/01h); one that reports VBULS=1
 * verifies the unmapped blocks like the others. This LUN reports VBULS=1
 * and compares an unmapped block with what a read returns: zeros.
 */
START_TEST(verify_bytchk_of_an_unmapped_block_compares_it_as_zeros)
{
	static uint8_t data[BS];
	uint8_t cdb[16];

	setup_mem(0, UINT64_MAX);
	ck_assert_uint_eq(block_device_characteristics(8) & 0x01, 1); /* VBULS */
	cdb16(cdb, SOP_VERIFY_16, 0x02, 50, 1);	/* never written */
	EXPECT_GOOD(run(A, cdb, 16, data, BS, 0));
	data[7] = 0x5a;
	struct cmd *c = run(A, cdb, 16, data, BS, 0);
	EXPECT_SENSE(c, SK_MISCOMPARE, 0x1d, 0x00);
	/* MISCOMPARE DURING VERIFY OPERATION, at the differing byte */
	EXPECT_SENSE_INFO(c, 7);
	harness_lun_teardown(&H);
}
END_TEST

static Suite *compare_suite(void)
{
	Suite *s = suite_create("sbc_compare");
	TCase *tc = tcase_create("ram");
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
	harness_add(tc,
	    write_verify_bytchk_writes_then_compares_with_the_medium);
	harness_add(tc, write_verify_reserved_bytchk_is_invalid_field);
	harness_add(tc, verify_bytchk_miscompare_reports_offset);
	harness_add(tc, verify_bytchk_one_block_compared_with_each);
	suite_add_tcase(s, tc);
	/* These open their own LUN over the memory backend. */
	tcase_set_timeout(mem, 30);
	harness_add(mem, caw_one_block_over_the_limit_is_invalid_field);
	harness_add(mem,
	    write_verify_miscompare_when_the_medium_drops_the_write);
	harness_add(mem, get_lba_status_reports_mapped_and_deallocated_runs);
	harness_add(mem, verify_bytchk_of_an_unmapped_block_compares_it_as_zeros);
	suite_add_tcase(s, mem);
	return s;
}

int main(int argc, char **argv)
{
	return harness_main(argc, argv, compare_suite);
}
