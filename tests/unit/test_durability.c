/*
 * The live durability audit (scsi/durability.c) through the harness:
 * what SBC-4 says a power cut could lose now. A write acknowledged with
 * the write cache on and no FUA is not durable until a SYNCHRONIZE CACHE
 * received after its completion ends GOOD; FUA and WCE=0 writes are
 * durable at once; a sync a flush = ignore LUN swallows makes nothing
 * durable, nor does FUA that fua = ignore drops.
 */
#include <check.h>
#include <string.h>
#include "tcq/byteorder.h"
#include "tcq/scsi_proto.h"
#include "scsi/durability.h"
#include "scsi/lun.h"
#include "tests/unit/harness.h"

static struct harness_lun H;
static uint8_t data[4096];

static void setup(void)
{
	harness_lun_setup(&H, "ram", 1 << 20, 2);
}

static void teardown(void)
{
	harness_lun_teardown(&H);
}

/* WRITE(10) of 8 blocks (4 KiB) at lba from nexus n, FUA as asked. */
static struct cmd *write8(unsigned n, uint32_t lba, bool fua)
{
	uint8_t cdb[10] = { SOP_WRITE_10, fua ? 0x08 : 0 };

	put_be32(cdb + 2, lba);
	put_be16(cdb + 7, 8);
	return run_cdb(&H, n, cdb, sizeof(cdb), data, sizeof(data), 0);
}

static struct cmd *sync_cache(unsigned n)
{
	static const uint8_t cdb[10] = { 0x35 };

	return run_cdb(&H, n, cdb, sizeof(cdb), NULL, 0, 0);
}

static uint64_t unflushed(void)
{
	struct durab_info d;

	durab_info(H.lun, &d);
	return d.bytes;
}

START_TEST(acknowledged_writes_until_a_sync)
{
	struct durab_info d;

	EXPECT_GOOD(write8(0, 0, false));
	EXPECT_GOOD(write8(1, 8, false));
	EXPECT_GOOD(write8(1, 16, false));
	durab_info(H.lun, &d);
	ck_assert_uint_eq(d.bytes, 3 * 4096);
	ck_assert_uint_eq(d.nports, 2);
	ck_assert_uint_eq(d.ports[0].bytes, 4096);
	ck_assert_uint_eq(d.ports[1].bytes, 2 * 4096);
	ck_assert(d.oldest_s >= d.ports[1].oldest_s);
	/* a sync from either nexus: the cache is the LUN's */
	EXPECT_GOOD(sync_cache(1));
	ck_assert_uint_eq(unflushed(), 0);
	durab_info(H.lun, &d);
	ck_assert_uint_eq(d.nports, 0);
	ck_assert(d.oldest_s == 0);
}
END_TEST

START_TEST(fua_and_write_through_are_durable_at_once)
{
	EXPECT_GOOD(write8(0, 0, true));
	ck_assert_uint_eq(unflushed(), 0);
	lun_set_write_cache(H.lun, false);
	EXPECT_GOOD(write8(0, 8, false));
	ck_assert_uint_eq(unflushed(), 0);
}
END_TEST

START_TEST(lying_device_keeps_them_unflushed)
{
	H.lun->fua_ignore = true;
	EXPECT_GOOD(write8(0, 0, true));
	ck_assert_uint_eq(unflushed(), 4096);
	H.lun->flush_ignore = true;
	EXPECT_GOOD(sync_cache(0));
	ck_assert_uint_eq(unflushed(), 4096);
	H.lun->flush_ignore = false;
	EXPECT_GOOD(sync_cache(0));
	ck_assert_uint_eq(unflushed(), 0);
}
END_TEST

/* IMMED=1 ends before the flush: it promises nothing at its end. */
START_TEST(immed_sync_makes_nothing_durable)
{
	static const uint8_t immed[10] = { 0x35, 0x02 };

	EXPECT_GOOD(write8(0, 0, false));
	EXPECT_GOOD(run_cdb(&H, 0, immed, sizeof(immed), NULL, 0, 0));
	ck_assert_uint_eq(unflushed(), 4096);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("durability");
	TCase *tc = tcase_create("audit");

	tcase_add_checked_fixture(tc, setup, teardown);
	harness_add(tc, acknowledged_writes_until_a_sync);
	harness_add(tc, fua_and_write_through_are_durable_at_once);
	harness_add(tc, lying_device_keeps_them_unflushed);
	harness_add(tc, immed_sync_makes_nothing_durable);
	suite_add_tcase(s, tc);
	return s;
}

int main(int argc, char **argv)
{
	return harness_main(argc, argv, suite);
}
