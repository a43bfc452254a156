/*
 * What every backend I/O a task sends carries besides its operands, for
 * the layers below that read it (scsi/sbc.c sbc_io_prepare): the I_T
 * nexus that sent it, which the disk model's cfq elevator keys its
 * queues by, and, for the pieces of a cut-through READ
 * (scsi/sbc_cut.c), the one command they are pieces of, which the model
 * counts once. A cut READ's pieces once went down without their nexus:
 * cfq then ran every session's pieces from one queue, and kara-2009's
 * 32 streams fell to 0.15x. Through the harness's memory backend, which
 * notes what it was sent.
 */
#include <check.h>
#include <stdint.h>
#include <string.h>
#include "tcq/scsi_proto.h"
#include "backend/bdev.h"
#include "scsi/lun.h"
#include "tests/unit/sbc_util.h"

static unsigned ready_calls;

static void data_in_ready(struct tcq_task *t, uint32_t bytes)
{
	(void)t;
	(void)bytes;
	ready_calls++;
}

/* The I/Os the backend saw from index from on, of operation op. */
static unsigned seen_of(unsigned from, int op,
			const struct harness_io_seen **out, unsigned max)
{
	unsigned n, k = 0;
	const struct harness_io_seen *s = harness_mem_seen(H.bd, &n);

	ck_assert_uint_le(n, HARNESS_MEM_SEEN);
	for (unsigned i = from; i < n; i++)
		if (s[i].op == op && k < max)
			out[k++] = &s[i];
	return k;
}

static unsigned seen_now(void)
{
	unsigned n;

	harness_mem_seen(H.bd, &n);
	return n;
}

/* A READ of 256 KiB with a transport that takes Data-In as it is read
 * (64 KiB segments) goes down in four 64 KiB pieces, each sent by the
 * nexus that sent the READ, all naming one command. */
START_TEST(cut_read_pieces_carry_nexus_and_command)
{
	const struct harness_io_seen *r[8];
	uint8_t cdb[16];
	unsigned from;

	setup_mem(0, UINT64_MAX);
	from = seen_now();
	ready_calls = 0;
	cdb16(cdb, 0x88, 0, 64, 512);		/* READ (16), 512 blocks */
	struct cmd *c = start_cdb(&H, B, TASK_ATTR_SIMPLE, cdb, 16, NULL, 0,
				  512 * BS);
	c->t.data_in_ready = data_in_ready;	/* before it arrives */
	c->t.cut_seg = 64u << 10;
	wait_cmd(&H, c);
	EXPECT_GOOD(c);
	ck_assert_uint_ge(ready_calls, 1);	/* it was cut */
	ck_assert_uint_eq(seen_of(from, BDEV_READ, r, 8), 4);
	for (unsigned i = 0; i < 4; i++) {
		ck_assert_uint_eq(r[i]->offset, 64 * BS + i * (64u << 10));
		ck_assert_uint_eq(r[i]->len, 64u << 10);
		ck_assert_ptr_eq(r[i]->submitter, harness_nexus(&H, B));
		ck_assert_ptr_nonnull(r[i]->command);
		ck_assert_ptr_eq(r[i]->command, r[0]->command);
	}
	harness_lun_teardown(&H);
}
END_TEST

/* A READ the transport takes whole, a WRITE and a SYNCHRONIZE CACHE with
 * IMMED (its flush runs after the status) are whole commands of the
 * nexus that sent them. */
START_TEST(whole_commands_carry_their_nexus)
{
	static uint8_t d[8 * BS];
	const struct harness_io_seen *r[4];
	uint8_t cdb[16];
	unsigned from;

	setup_mem(0, UINT64_MAX);
	from = seen_now();
	cdb16(cdb, 0x8a, 0, 8, 8);		/* WRITE (16) */
	EXPECT_GOOD(run(B, cdb, 16, d, sizeof(d), 0));
	memset(cdb, 0, 10);
	cdb[0] = 0x35;				/* SYNCHRONIZE CACHE (10) */
	cdb[1] = 0x02;				/* IMMED */
	EXPECT_GOOD(run(B, cdb, 10, NULL, 0, 0));
	/* The READ after it also lets the flush's completion run. */
	cdb16(cdb, 0x88, 0, 8, 512);		/* READ (16), not cut */
	EXPECT_GOOD(run(A, cdb, 16, NULL, 0, 512 * BS));
	ck_assert_uint_eq(seen_of(from, BDEV_WRITE, r, 4), 1);
	ck_assert_ptr_eq(r[0]->submitter, harness_nexus(&H, B));
	ck_assert_ptr_null(r[0]->command);
	ck_assert_uint_eq(seen_of(from, BDEV_READ, r, 4), 1);
	ck_assert_uint_eq(r[0]->len, 512 * BS);
	ck_assert_ptr_eq(r[0]->submitter, harness_nexus(&H, A));
	ck_assert_ptr_null(r[0]->command);
	ck_assert_uint_eq(seen_of(from, BDEV_FLUSH, r, 4), 1);
	ck_assert_ptr_eq(r[0]->submitter, harness_nexus(&H, B));
	ck_assert_ptr_null(r[0]->command);
	harness_lun_teardown(&H);
}
END_TEST

static Suite *sbc_io_suite(void)
{
	Suite *s = suite_create("sbc_io");
	TCase *tc = tcase_create("memory-backend");

	tcase_set_timeout(tc, 30);
	harness_add(tc, cut_read_pieces_carry_nexus_and_command);
	harness_add(tc, whole_commands_carry_their_nexus);
	suite_add_tcase(s, tc);
	return s;
}

int main(int argc, char **argv)
{
	return harness_main(argc, argv, sbc_io_suite);
}
