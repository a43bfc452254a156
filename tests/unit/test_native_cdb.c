/*
 * The native engine's CDBs and parameter lists of the command mixes
 * (initiator/native_cdb.c), byte for byte against SBC-3 and SPC-4:
 * SYNCHRONIZE CACHE(16) (SBC-3 5.23), UNMAP and its parameter list
 * (5.28, 5.28.2), WRITE SAME(16) with its UNMAP bit (5.42), COMPARE AND
 * WRITE (5.2), EXTENDED COPY LID1 with an identification CSCD descriptor
 * and a block-to-block segment descriptor (SPC-4 6.3, 6.3.6.4, 6.3.7.5),
 * and the NAA designator of a Device Identification VPD page (7.8.6).
 */
#include <check.h>
#include <errno.h>
#include <string.h>
#include "initiator/native_sess.h"
#include "tests/unit/harness.h"

static struct engine e;
static uint8_t buf[8192], cdb[16];
static struct bench_io io;

static void setup_io(int cmd, uint64_t lba, uint32_t blocks)
{
	memset(&e, 0, sizeof(e));
	e.block_size = 512;
	e.nblocks = 1000;
	memset(&io, 0, sizeof(io));
	memset(buf, 0xee, sizeof(buf));
	io.cmd = (uint8_t)cmd;
	io.lba = lba;
	io.blocks = blocks;
	io.buf = buf;
}

START_TEST(sync16_whole_lun)
{
	static const uint8_t want[16] = { 0x91 };
	uint32_t edtl = 9;

	setup_io(BENCH_CMD_SYNC16, 0, 0);
	ck_assert_int_eq(native_cdb_build(&e, &io, cdb, &edtl), 0);
	ck_assert_mem_eq(cdb, want, 16);
	ck_assert_uint_eq(edtl, 0);
}
END_TEST

START_TEST(unmap_one_descriptor)
{
	/* CDB: 42h, PARAMETER LIST LENGTH (bytes 7-8) 24 */
	static const uint8_t want_cdb[10] = { 0x42, 0, 0, 0, 0, 0, 0, 0, 24, 0 };
	/* UNMAP DATA LENGTH 22, BLOCK DESCRIPTOR DATA LENGTH 16, reserved;
	 * descriptor: LBA 0x1234, 8 blocks, reserved */
	static const uint8_t want_list[24] = {
		0, 22, 0, 16, 0, 0, 0, 0,
		0, 0, 0, 0, 0, 0, 0x12, 0x34, 0, 0, 0, 8, 0, 0, 0, 0,
	};
	uint32_t edtl;

	setup_io(BENCH_CMD_UNMAP, 0x1234, 8);
	e.nblocks = 0x2000;
	ck_assert_int_eq(native_cdb_build(&e, &io, cdb, &edtl), 0);
	ck_assert_mem_eq(cdb, want_cdb, 10);
	ck_assert_uint_eq(edtl, 24);
	ck_assert_mem_eq(buf, want_list, 24);
}
END_TEST

START_TEST(write_same16_with_and_without_unmap)
{
	static const uint8_t want[16] = {
		0x93, 0x08, 0, 0, 0, 0, 0, 0, 0x01, 0x02, 0, 0, 0, 16, 0, 0,
	};
	uint32_t edtl;

	setup_io(BENCH_CMD_WS_UNMAP, 0x102, 16);
	ck_assert_int_eq(native_cdb_build(&e, &io, cdb, &edtl), 0);
	ck_assert_mem_eq(cdb, want, 16);
	ck_assert_uint_eq(edtl, 512);	/* one logical block of data */
	setup_io(BENCH_CMD_WS, 0x102, 16);
	ck_assert_int_eq(native_cdb_build(&e, &io, cdb, &edtl), 0);
	ck_assert_uint_eq(cdb[1], 0);	/* UNMAP (byte 1 bit 3) clear */
	ck_assert_mem_eq(cdb + 2, want + 2, 14);
}
END_TEST

START_TEST(compare_and_write_two_n_blocks)
{
	static const uint8_t want[16] = {
		0x89, 0, 0, 0, 0, 0, 0, 0, 0, 7, 0, 0, 0, 3, 0, 0,
	};
	uint32_t edtl;

	setup_io(BENCH_CMD_CAW, 7, 3);
	ck_assert_int_eq(native_cdb_build(&e, &io, cdb, &edtl), 0);
	ck_assert_mem_eq(cdb, want, 16);
	ck_assert_uint_eq(edtl, 2 * 3 * 512);	/* verify, then write data */
	setup_io(BENCH_CMD_CAW, 0, 256);	/* the field is one byte */
	ck_assert_int_eq(native_cdb_build(&e, &io, cdb, &edtl), -EINVAL);
}
END_TEST

START_TEST(extended_copy_lid1_block_to_block)
{
	static const uint8_t naa[16] = {
		0x60, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15,
	};
	/* CDB: 83h, service action 00h, PARAMETER LIST LENGTH 76 */
	static const uint8_t want_cdb[16] = {
		0x83, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 76, 0, 0,
	};
	/* header: LIST ID 0, LIST ID USAGE 11b, CSCD list 32, segment
	 * list 28, no inline data */
	static const uint8_t want_hdr[16] = {
		0, 0x18, 0, 32, 0, 0, 0, 0, 0, 0, 0, 28, 0, 0, 0, 0,
	};
	/* E4h, direct access; designator: binary, LU/NAA, 16 bytes */
	static const uint8_t want_cscd_head[8] = { 0xe4, 0, 0, 0, 1, 3, 0, 16 };
	/* 02h, DESCRIPTOR LENGTH 24, CSCD 0 to CSCD 0, 8 blocks, LBA 5 to
	 * LBA 300 */
	static const uint8_t want_seg[28] = {
		0x02, 0, 0, 24, 0, 0, 0, 0, 0, 0, 0, 8,
		0, 0, 0, 0, 0, 0, 0, 5, 0, 0, 0, 0, 0, 0, 0x01, 0x2c,
	};
	uint32_t edtl;

	setup_io(BENCH_CMD_XCOPY, 5, 8);
	io.lba2 = 300;
	ck_assert_int_eq(native_cdb_build(&e, &io, cdb, &edtl), -EINVAL);
	memcpy(e.naa, naa, 16);
	e.have_naa = true;
	ck_assert_int_eq(native_cdb_build(&e, &io, cdb, &edtl), 0);
	ck_assert_mem_eq(cdb, want_cdb, 16);
	ck_assert_uint_eq(edtl, 76);
	ck_assert_mem_eq(buf, want_hdr, 16);
	ck_assert_mem_eq(buf + 16, want_cscd_head, 8);
	ck_assert_mem_eq(buf + 24, naa, 16);
	/* DISK BLOCK LENGTH (bytes 29-31 of the descriptor): 512 */
	ck_assert_uint_eq(buf[16 + 29], 0);
	ck_assert_uint_eq(buf[16 + 30], 2);
	ck_assert_uint_eq(buf[16 + 31], 0);
	ck_assert_mem_eq(buf + 48, want_seg, 28);
	io.lba2 = 995;		/* past the LUN's end */
	ck_assert_int_eq(native_cdb_build(&e, &io, cdb, &edtl), -EINVAL);
}
END_TEST

START_TEST(vpd83_naa_of_the_logical_unit)
{
	/* a T10 vendor ID descriptor, an NAA one of the target port
	 * (association 01b), then the LU's 16-byte NAA */
	uint8_t page[4 + 12 + 20 + 20] = { 0, 0x83, 0, 52 };
	uint8_t *d = page + 4, naa[16];

	d[0] = 2; d[1] = 0x01; d[3] = 8;
	d += 12;
	d[0] = 1; d[1] = 0x13; d[3] = 16; d[4] = 0x61;
	d += 20;
	d[0] = 1; d[1] = 0x03; d[3] = 16; d[4] = 0x60; d[19] = 0x42;
	ck_assert(native_vpd83_naa(page, sizeof(page), naa));
	ck_assert_uint_eq(naa[0], 0x60);
	ck_assert_uint_eq(naa[15], 0x42);
	page[3] = 32;		/* the page ends before the LU's descriptor */
	ck_assert(!native_vpd83_naa(page, sizeof(page), naa));
}
END_TEST

static Suite *native_cdb_suite(void)
{
	Suite *s = suite_create("native_cdb");
	TCase *t = tcase_create("cdb");

	harness_add(t, sync16_whole_lun);
	harness_add(t, unmap_one_descriptor);
	harness_add(t, write_same16_with_and_without_unmap);
	harness_add(t, compare_and_write_two_n_blocks);
	harness_add(t, extended_copy_lid1_block_to_block);
	harness_add(t, vpd83_naa_of_the_logical_unit);
	suite_add_tcase(s, t);
	return s;
}

int main(int argc, char **argv)
{
	return harness_main(argc, argv, native_cdb_suite);
}
