/* CDB decoding and sense data: fields, errors, exact sense and pointers. */
#include <check.h>
#include <stdlib.h>
#include <string.h>
#include "tcq/byteorder.h"
#include "tcq/scsi_proto.h"
#include "scsi/cdb.h"
#include "scsi/sense.h"
#include "tests/unit/harness.h"

static struct cdb_req req;
static struct sense_info err;
static uint8_t cdb[32];

static int dec(uint16_t len)
{
	return cdb_decode(cdb, len, 512, &req, &err);
}

static void clear(uint8_t op)
{
	memset(cdb, 0, sizeof(cdb));
	cdb[0] = op;
}

/* Asserts an INVALID FIELD IN CDB with this field pointer. */
static void expect_field(uint16_t byte, int bit)
{
	ck_assert_int_eq(err.key, SK_ILLEGAL_REQUEST);
	ck_assert_int_eq(err.asc, 0x2400);	/* INVALID FIELD IN CDB */
	ck_assert(err.sksv);
	ck_assert(err.cd);
	ck_assert_int_eq(err.field, byte);
	ck_assert_int_eq(err.bit, bit);
}

START_TEST(read6_write6)
{
	clear(SOP_READ_6);
	cdb[1] = 0xff;		/* top 3 bits are not LBA */
	cdb[2] = 0x12;
	cdb[3] = 0x34;
	cdb[4] = 0;		/* 0 = 256 blocks */
	ck_assert_int_eq(dec(16), 0);
	ck_assert_uint_eq(req.lba, 0x1f1234);
	ck_assert_uint_eq(req.blocks, 256);
	ck_assert_uint_eq(req.data_in_len, 256 * 512);
	ck_assert_uint_eq(req.data_out_len, 0);

	clear(SOP_WRITE_6);
	cdb[4] = 7;
	ck_assert_int_eq(dec(6), 0);
	ck_assert_uint_eq(req.blocks, 7);
	ck_assert_uint_eq(req.data_out_len, 7 * 512);
	ck_assert_uint_eq(req.data_in_len, 0);
	ck_assert_int_eq(cdb_access(&req), CDB_ACCESS_WRITE);
}
END_TEST

START_TEST(rw10_12_16)
{
	clear(SOP_READ_10);
	cdb[1] = 0x18;		/* DPO FUA */
	put_be32(cdb + 2, 0xdeadbeef);
	cdb[6] = 0x05;
	put_be16(cdb + 7, 0);	/* no data */
	ck_assert_int_eq(dec(16), 0);
	ck_assert_uint_eq(req.lba, 0xdeadbeef);
	ck_assert_uint_eq(req.blocks, 0);
	ck_assert_uint_eq(req.data_in_len, 0);
	ck_assert(req.fua && req.dpo);
	ck_assert_uint_eq(req.group, 5);

	clear(SOP_WRITE_12);
	put_be32(cdb + 2, 100);
	put_be32(cdb + 6, 9);
	cdb[10] = 3;
	ck_assert_int_eq(dec(16), 0);
	ck_assert_uint_eq(req.lba, 100);
	ck_assert_uint_eq(req.blocks, 9);
	ck_assert_uint_eq(req.data_out_len, 9 * 512);
	ck_assert(!req.fua);

	clear(SOP_WRITE_16);
	cdb[1] = 0x08;
	put_be64(cdb + 2, 0x123456789abcull);
	put_be32(cdb + 10, 16);
	ck_assert_int_eq(dec(16), 0);
	ck_assert_uint_eq(req.lba, 0x123456789abcull);
	ck_assert_uint_eq(req.blocks, 16);
	ck_assert(req.fua);
	ck_assert_uint_eq(req.data_out_len, 16 * 512);

	clear(SOP_READ_16);
	put_be32(cdb + 10, 0x00900000);	/* 4.5 GiB: no 32-bit length */
	ck_assert_int_eq(dec(16), -1);
	expect_field(10, -1);
}
END_TEST

START_TEST(protect_and_control)
{
	clear(SOP_READ_10);
	cdb[1] = 0x20;		/* RDPROTECT=001b */
	ck_assert_int_eq(dec(16), -1);
	expect_field(1, 7);

	clear(SOP_WRITE_10);
	cdb[9] = CDB_CONTROL_LINK;
	ck_assert_int_eq(dec(16), -1);
	expect_field(9, 0);

	clear(SOP_TEST_UNIT_READY);
	cdb[5] = CDB_CONTROL_NACA;	/* ACA is supported */
	ck_assert_int_eq(dec(16), 0);
	ck_assert_uint_eq(req.control, CDB_CONTROL_NACA);
	cdb[5] = 0x10;			/* reserved bit */
	ck_assert_int_eq(dec(16), -1);
	expect_field(5, 4);
	cdb[5] = 0;
	cdb[3] = 0x01;			/* reserved byte */
	ck_assert_int_eq(dec(16), -1);
	expect_field(3, 0);
}
END_TEST

START_TEST(group_codes)
{
	static const uint8_t bad[] = { 0x04, 0x7e, 0x7f, 0xc0, 0xe5, 0x60 };

	for (size_t i = 0; i < sizeof(bad); i++) {
		clear(bad[i]);
		ck_assert_int_eq(dec(16), -1);
		ck_assert_int_eq(err.key, SK_ILLEGAL_REQUEST);
		ck_assert_int_eq(err.asc, 0x2000);	/* INVALID COMMAND OP. CODE */
		ck_assert(!err.sksv);
	}
	ck_assert_uint_eq(cdb_group_len(0x12), 6);
	ck_assert_uint_eq(cdb_group_len(0x28), 10);
	ck_assert_uint_eq(cdb_group_len(0x5a), 10);
	ck_assert_uint_eq(cdb_group_len(0x88), 16);
	ck_assert_uint_eq(cdb_group_len(0xa0), 12);
	/* A CDB shorter than its group's length. */
	clear(SOP_READ_16);
	ck_assert_int_eq(dec(10), -1);
	ck_assert_int_eq(err.asc, 0x2000);	/* INVALID COMMAND OP. CODE */
}
END_TEST

START_TEST(inquiry)
{
	clear(SOP_INQUIRY);
	put_be16(cdb + 3, 511);
	ck_assert_int_eq(dec(6), 0);
	ck_assert_uint_eq(req.alloc_len, 511);
	ck_assert_uint_eq(req.data_in_len, 511);
	ck_assert(!(req.flags & CDBF_EVPD));

	cdb[1] = 1;
	cdb[2] = 0x83;
	ck_assert_int_eq(dec(6), 0);
	ck_assert(req.flags & CDBF_EVPD);
	ck_assert_uint_eq(req.page, 0x83);

	cdb[1] = 0;		/* page code without EVPD */
	ck_assert_int_eq(dec(6), -1);
	expect_field(2, -1);

	cdb[1] = 2;		/* CmdDt */
	cdb[2] = 0;
	ck_assert_int_eq(dec(6), -1);
	expect_field(1, 1);
}
END_TEST

START_TEST(capacity_and_luns)
{
	clear(SOP_READ_CAPACITY_10);
	put_be32(cdb + 2, 5);	/* LBA without PMI */
	ck_assert_int_eq(dec(10), -1);
	expect_field(2, -1);
	cdb[8] = 1;
	ck_assert_int_eq(dec(10), 0);
	ck_assert(req.flags & CDBF_PMI);
	ck_assert_uint_eq(req.data_in_len, 8);

	clear(SOP_SERVICE_ACTION_IN_16);
	cdb[1] = SAI_READ_CAPACITY_16;
	put_be32(cdb + 10, 32);
	ck_assert_int_eq(dec(16), 0);
	ck_assert_uint_eq(req.sa, SAI_READ_CAPACITY_16);
	ck_assert_uint_eq(req.alloc_len, 32);
	cdb[1] = 0x11;		/* unsupported service action */
	ck_assert_int_eq(dec(16), -1);
	expect_field(1, 4);

	clear(SOP_REPORT_LUNS);
	cdb[2] = 2;
	put_be32(cdb + 6, 4096);
	ck_assert_int_eq(dec(12), 0);
	ck_assert_uint_eq(req.alloc_len, 4096);
	cdb[2] = 3;
	ck_assert_int_eq(dec(12), -1);
	expect_field(2, -1);
}
END_TEST

START_TEST(mode_sense_select_sync_verify)
{
	clear(SOP_MODE_SENSE_6);
	cdb[1] = 0x08;
	cdb[2] = 0x80 | 0x0a;	/* default values, control page */
	cdb[4] = 200;
	ck_assert_int_eq(dec(6), 0);
	ck_assert(req.flags & CDBF_DBD);
	ck_assert_int_eq(req.flags >> CDBF_PC_SHIFT, 2);
	ck_assert_uint_eq(req.page, 0x0a);
	ck_assert_uint_eq(req.alloc_len, 200);

	clear(SOP_MODE_SENSE_10);
	cdb[1] = 0x10;
	cdb[2] = 0x3f;
	put_be16(cdb + 7, 1000);
	ck_assert_int_eq(dec(10), 0);
	ck_assert(req.flags & CDBF_LLBAA);
	ck_assert_uint_eq(req.alloc_len, 1000);

	clear(SOP_MODE_SELECT_6);
	cdb[1] = 0x11;		/* PF, SP: saving not supported */
	cdb[4] = 24;
	ck_assert_int_eq(dec(6), -1);
	expect_field(1, 0);
	cdb[1] = 0x10;
	ck_assert_int_eq(dec(6), 0);
	ck_assert_uint_eq(req.data_out_len, 24);

	clear(SOP_SYNC_CACHE_10);
	cdb[1] = 0x02;
	put_be32(cdb + 2, 77);
	put_be16(cdb + 7, 3);
	ck_assert_int_eq(dec(10), 0);
	ck_assert(req.immed);
	ck_assert_uint_eq(req.lba, 77);
	ck_assert_uint_eq(req.blocks, 3);

	clear(SOP_VERIFY_16);
	cdb[1] = 0x04;		/* BYTCHK=10b: reserved */
	ck_assert_int_eq(dec(16), -1);
	expect_field(1, 2);
	cdb[1] = 0x02;		/* BYTCHK=01b: compare with data-out */
	put_be32(cdb + 10, 4);
	ck_assert_int_eq(dec(16), 0);
	ck_assert_uint_eq(req.flags & CDBF_BYTCHK_MASK, 1);
	ck_assert_uint_eq(req.data_out_len, 4 * 512);
	cdb[1] = 0;		/* BYTCHK=0: no data */
	ck_assert_int_eq(dec(16), 0);
	ck_assert_uint_eq(req.data_out_len, 0);
}
END_TEST

START_TEST(check_range_refuses_past_the_end_and_wraps)
{
	struct cdb_req r = { .lba = 90, .blocks = 10 };

	ck_assert_int_eq(cdb_check_range(&r, 100, &err), 0);
	r.blocks = 11;
	ck_assert_int_eq(cdb_check_range(&r, 100, &err), -1);
	ck_assert_int_eq(err.key, SK_ILLEGAL_REQUEST);
	ck_assert_int_eq(err.asc, 0x2100);	/* LBA OUT OF RANGE */
	r.lba = 100;		/* zero length at the end: fine */
	r.blocks = 0;
	ck_assert_int_eq(cdb_check_range(&r, 100, &err), 0);
	r.lba = 101;
	ck_assert_int_eq(cdb_check_range(&r, 100, &err), -1);
	r.lba = UINT64_MAX;	/* no wrap-around */
	r.blocks = 2;
	ck_assert_int_eq(cdb_check_range(&r, 100, &err), -1);
	r.lba = 0xffffffffull;
	r.blocks = 0;
	ck_assert_int_eq(cdb_check_range(&r, 100, &err), -1);
}
END_TEST

START_TEST(sense_build_fixed_and_descriptor_formats)
{
	uint8_t b[SENSE_BUF_MAX];
	struct sense_info si;

	sense_field_info(&si, ASC_INVALID_FIELD_IN_CDB, true, 9, 0);
	ck_assert_uint_eq(sense_build(b, false, &si), 18);
	ck_assert_uint_eq(b[0], 0x70);
	ck_assert_uint_eq(b[2], SK_ILLEGAL_REQUEST);
	ck_assert_uint_eq(b[7], 10);
	ck_assert_uint_eq(b[12], 0x24);
	ck_assert_uint_eq(b[13], 0x00);
	ck_assert_uint_eq(b[15], 0x80 | 0x40 | 0x08 | 0);
	ck_assert_uint_eq(get_be16(b + 16), 9);

	sense_field_info(&si, ASC_INVALID_FIELD_IN_PARAMETER_LIST, false, 300,
			 -1);
	ck_assert_uint_eq(sense_build(b, true, &si), 16);
	ck_assert_uint_eq(b[0], 0x72);
	ck_assert_uint_eq(b[1], SK_ILLEGAL_REQUEST);
	ck_assert_uint_eq(b[2], 0x26);
	ck_assert_uint_eq(b[7], 8);
	ck_assert_uint_eq(b[8], 0x02);
	ck_assert_uint_eq(b[9], 0x06);
	ck_assert_uint_eq(b[12], 0x80);	/* SKSV, C/D=0, no bit pointer */
	ck_assert_uint_eq(get_be16(b + 13), 300);

	memset(&si, 0, sizeof(si));
	si.key = SK_MEDIUM_ERROR;
	si.asc = ASC_UNRECOVERED_READ_ERROR;
	si.bit = -1;
	si.info_valid = true;
	si.info = 0x1234;
	ck_assert_uint_eq(sense_build(b, false, &si), 18);
	ck_assert_uint_eq(b[0], 0xf0);	/* VALID */
	ck_assert_uint_eq(get_be32(b + 3), 0x1234);
	ck_assert_uint_eq(b[15], 0);
	si.info = 0x100000000ull;	/* too wide for fixed format */
	sense_build(b, false, &si);
	ck_assert_uint_eq(b[0], 0x70);
	ck_assert_uint_eq(sense_build(b, true, &si), 20);
	ck_assert_uint_eq(b[8], 0x00);
	ck_assert_uint_eq(b[10], 0x80);
	ck_assert_uint_eq(get_be64(b + 12), 0x100000000ull);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("cdb");
	TCase *tc = tcase_create("decode");

	harness_add(tc, read6_write6);
	harness_add(tc, rw10_12_16);
	harness_add(tc, protect_and_control);
	harness_add(tc, group_codes);
	harness_add(tc, inquiry);
	harness_add(tc, capacity_and_luns);
	harness_add(tc, mode_sense_select_sync_verify);
	harness_add(tc, check_range_refuses_past_the_end_and_wraps);
	harness_add(tc, sense_build_fixed_and_descriptor_formats);
	suite_add_tcase(s, tc);
	return s;
}

int main(int argc, char **argv)
{
	return harness_main(argc, argv, suite);
}
