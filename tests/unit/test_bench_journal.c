/* tcq-bench --rw journal: the layout of bench_journal.h byte by byte, and
 * the checker on images built by hand: a complete transaction passes; a
 * missing, stale or torn log block is reported; a torn or corrupt commit
 * commits nothing; a slot reused by a newer transaction is no alarm. */
#include <check.h>
#include <stdlib.h>
#include <string.h>
#include "initiator/bench_journal.h"
#include "tcq/byteorder.h"
#include "tcq/crc32c.h"
#include "tests/unit/harness.h"

#define IMG 65536u

static uint8_t img[IMG];
/* 512-byte device blocks, journal blocks of 1024, 2 log blocks: a slot
 * is 6 device blocks, the region starts at LBA 0 */
static struct journal_geom g;
static struct journal_bad last_bad;
static unsigned nbad;

static void setup(void)
{
	char err[128];

	memset(img, 0, sizeof(img));
	ck_assert_int_eq(journal_geom_init(&g, 0, IMG / 512, 512, 1024, 2,
					   err, sizeof(err)), 0);
	nbad = 0;
}

static void on_bad(void *ctx, const struct journal_bad *b)
{
	(void)ctx;
	last_bad = *b;
	nbad++;
}

/* Writes what the definition says: slot s's log i at LBA 6s + 2 + 2i,
 * its commit at LBA 6s. */
static uint32_t put_log(uint64_t run, uint64_t txn, uint32_t slot,
			uint32_t i)
{
	return journal_encode_log(img + (6 * slot + 2 + 2 * i) * 512, &g, run,
				  txn, slot, i);
}

static void put_commit(uint64_t run, uint64_t txn, uint32_t slot,
		       const uint32_t *crc)
{
	journal_encode_commit(img + 6 * slot * 512, &g, run, txn, slot, crc);
}

/* A whole transaction: both log blocks and the commit. */
static void put_txn(uint64_t run, uint64_t txn, uint32_t slot)
{
	uint32_t crc[2] = { put_log(run, txn, slot, 0),
			    put_log(run, txn, slot, 1) };

	put_commit(run, txn, slot, crc);
}

static int check(struct journal_report *r)
{
	return journal_check(img, sizeof(img), r, on_bad, NULL);
}

START_TEST(geometry_from_the_definition)
{
	struct journal_geom h;
	char err[128];

	/* region from LBA 8, 1024-byte blocks over 512: slot = 4 blocks of
	 * 2 LBAs; slot 2's commit at 8 + 2 * 8, its log 1 two blocks on */
	ck_assert_int_eq(journal_geom_init(&h, 8, 100, 512, 1024, 3, err,
					   sizeof(err)), 0);
	ck_assert_uint_eq(h.nslots, 100 / 8);
	ck_assert_uint_eq(journal_lba(&h, 2, JOURNAL_COMMIT_INDEX), 24);
	ck_assert_uint_eq(journal_lba(&h, 2, 1), 28);
	ck_assert_int_eq(journal_geom_init(&h, 0, 7, 512, 1024, 3, err,
					   sizeof(err)), -1);
	ck_assert_int_eq(journal_geom_init(&h, 0, 100, 4096, 1024, 3, err,
					   sizeof(err)), -1);
	ck_assert_int_eq(journal_geom_init(&h, 0, 1000, 512, 512, 17, err,
					   sizeof(err)), -1);
}
END_TEST

START_TEST(log_block_bytes)
{
	uint8_t b[1024], z[1024];
	uint32_t crc = journal_encode_log(b, &g, 0x1122334455667788ull, 9, 3, 1);
	struct journal_hdr h;

	ck_assert_uint_eq(get_be32(b), 0x4a4c4f47);	/* "JLOG" */
	for (unsigned s = 0; s < 2; s++) {
		const uint8_t *p = b + 512 * s;

		ck_assert_uint_eq(get_be32(p), 0x4a4c4f47);
		ck_assert_uint_eq(get_be32(p + 4), s);
		ck_assert_uint_eq(get_be64(p + 8), 0x1122334455667788ull);
		ck_assert_uint_eq(get_be64(p + 16), 9);
		ck_assert_uint_eq(get_be32(p + 24), 3);
		ck_assert_uint_eq(get_be32(p + 28), 1);
	}
	ck_assert_uint_eq(get_be32(b + 32), 1);		/* version */
	ck_assert_uint_eq(get_be32(b + 36), 2);		/* K */
	ck_assert_uint_eq(get_be32(b + 40), 512);
	ck_assert_uint_eq(get_be32(b + 44), 1024);
	ck_assert_uint_eq(get_be64(b + 48), 6 * 3 + 2 + 2);	/* own LBA */
	/* the CRC: CRC32C of the block with its field zero */
	memcpy(z, b, sizeof(z));
	memset(z + 56, 0, 4);
	ck_assert_uint_eq(get_be32(b + 56), crc32c(z, sizeof(z)));
	ck_assert_uint_eq(crc, crc32c(z, sizeof(z)));
	/* decoded where it belongs, and nowhere else */
	memcpy(img + 22 * 512, b, sizeof(b));
	ck_assert_int_eq(journal_decode(img, IMG, 22 * 512, &h), 0);
	ck_assert_uint_eq(h.txn, 9);
	ck_assert_uint_eq(h.index, 1);
	memcpy(img + 30 * 512, b, sizeof(b));
	ck_assert_int_eq(journal_decode(img, IMG, 30 * 512, &h), -1);
}
END_TEST

START_TEST(commit_block_bytes)
{
	uint8_t b[1024];
	uint32_t crc[2] = { 0xdeadbeef, 0x01020304 };
	struct journal_hdr h;

	journal_encode_commit(b, &g, 7, 5, 1, crc);
	ck_assert_uint_eq(get_be32(b), 0x4a434d54);	/* "JCMT" */
	ck_assert_uint_eq(get_be32(b + 28), 0xffffffffu);
	ck_assert_uint_eq(get_be32(b + 512 + 28), 0xffffffffu);
	ck_assert_uint_eq(get_be64(b + 48), 6);		/* slot 1 */
	ck_assert_uint_eq(get_be64(b + 64), 8);		/* log 0 */
	ck_assert_uint_eq(get_be32(b + 72), 0xdeadbeef);
	ck_assert_uint_eq(get_be64(b + 80), 10);	/* log 1 */
	ck_assert_uint_eq(get_be32(b + 88), 0x01020304);
	memcpy(img + 6 * 512, b, sizeof(b));
	ck_assert_int_eq(journal_decode(img, IMG, 6 * 512, &h), 0);
	ck_assert_uint_eq(h.magic, JOURNAL_COMMIT_MAGIC);
	ck_assert_uint_eq(h.log_lba[1], 10);
	ck_assert_uint_eq(h.log_crc[0], 0xdeadbeef);
}
END_TEST

START_TEST(complete_transactions_pass)
{
	struct journal_report r;

	put_txn(1, 1, 0);
	put_txn(1, 2, 1);
	ck_assert_int_eq(check(&r), 0);
	ck_assert_uint_eq(r.committed, 2);
	ck_assert_uint_eq(r.complete, 2);
	ck_assert_uint_eq(r.incomplete + r.superseded + r.ignored, 0);
	ck_assert_uint_eq(nbad, 0);
}
END_TEST

START_TEST(missing_log_reported)
{
	struct journal_report r;
	uint32_t crc[2];

	crc[0] = put_log(1, 4, 2, 0);
	crc[1] = put_log(1, 4, 2, 1);
	put_commit(1, 4, 2, crc);
	memset(img + (6 * 2 + 4) * 512, 0, 1024);	/* log 1 never landed */
	ck_assert_int_eq(check(&r), 1);
	ck_assert_uint_eq(r.incomplete, 1);
	ck_assert_uint_eq(nbad, 1);
	ck_assert_uint_eq(last_bad.txn, 4);
	ck_assert_uint_eq(last_bad.commit_lba, 12);
	ck_assert_uint_eq(last_bad.state[0], JL_PRESENT);
	ck_assert_uint_eq(last_bad.state[1], JL_MISSING);
	ck_assert_uint_eq(last_bad.log_lba[1], 16);
}
END_TEST

START_TEST(stale_and_torn_logs_reported)
{
	struct journal_report r;
	uint32_t crc[2];

	/* txn 5 whole in slot 0; txn 9 reuses it, but only its commit and
	 * the first sector of its log 0 land: log 0 torn, log 1 still 5's */
	put_txn(1, 5, 0);
	{
		uint8_t l0[1024];

		crc[0] = journal_encode_log(l0, &g, 1, 9, 0, 0);
		memcpy(img + 2 * 512, l0, 512);
		crc[1] = 0x12345678;
	}
	put_commit(1, 9, 0, crc);
	ck_assert_int_eq(check(&r), 1);
	ck_assert_uint_eq(r.committed, 1);
	ck_assert_uint_eq(nbad, 1);
	ck_assert_uint_eq(last_bad.txn, 9);
	ck_assert_uint_eq(last_bad.state[0], JL_TORN);
	ck_assert_uint_eq(last_bad.state[1], JL_STALE);
	ck_assert_uint_eq(last_bad.stale_txn[1], 5);
}
END_TEST

START_TEST(torn_or_garbage_commit_commits_nothing)
{
	struct journal_report r;
	uint32_t crc[2] = { 1, 2 };	/* its log never written */

	put_commit(1, 3, 0, crc);
	memset(img + 512, 0, 512);	/* second sector of the commit lost */
	put_commit(1, 4, 1, crc);
	img[6 * 512 + 700] ^= 1;	/* one bit of the commit flipped */
	ck_assert_int_eq(check(&r), 0);
	ck_assert_uint_eq(r.committed, 0);
	ck_assert_uint_eq(r.ignored, 2);
	ck_assert_uint_eq(nbad, 0);
}
END_TEST

START_TEST(slot_reuse_is_no_alarm)
{
	struct journal_report r;
	uint8_t l1[1024];

	/* txn 1 committed in slot 0; txn 2 takes the slot: its log 0 lands
	 * whole, half of its log 1 lands, its commit not yet */
	put_txn(1, 1, 0);
	put_log(1, 2, 0, 0);
	journal_encode_log(l1, &g, 1, 2, 0, 1);
	memcpy(img + 4 * 512 + 512, l1 + 512, 512);
	/* slot 1: run 1's txn 3, then a later run's txn 1 over its log 0 */
	put_txn(1, 3, 1);
	put_log(2, 1, 1, 0);
	ck_assert_int_eq(check(&r), 0);
	ck_assert_uint_eq(r.committed, 2);
	ck_assert_uint_eq(r.superseded, 2);
	ck_assert_uint_eq(r.incomplete, 0);
	ck_assert_uint_eq(nbad, 0);
}
END_TEST

START_TEST(no_journal_no_layout)
{
	struct journal_report r;

	memset(img, 0x5a, sizeof(img));
	ck_assert_int_eq(check(&r), 2);
	ck_assert_uint_eq(r.stamps, 0);
}
END_TEST

static Suite *bench_journal_suite(void)
{
	Suite *s = suite_create("bench_journal");
	TCase *tc = tcase_create("journal");

	tcase_add_checked_fixture(tc, setup, NULL);
	harness_add(tc, geometry_from_the_definition);
	harness_add(tc, log_block_bytes);
	harness_add(tc, commit_block_bytes);
	harness_add(tc, complete_transactions_pass);
	harness_add(tc, missing_log_reported);
	harness_add(tc, stale_and_torn_logs_reported);
	harness_add(tc, torn_or_garbage_commit_commits_nothing);
	harness_add(tc, slot_reuse_is_no_alarm);
	harness_add(tc, no_journal_no_layout);
	suite_add_tcase(s, tc);
	return s;
}

int main(int argc, char **argv)
{
	return harness_main(argc, argv, bench_journal_suite);
}
