/*
 * Per-LUN QoS (scsi/qos.c) through the device server, by counts and
 * order only: what the burst lets through and what is held, the order
 * held commands reach their task sets in (FIFO per nexus, round robin
 * between nexuses, SAM-5's attributes kept), a command bigger than the
 * bucket, task management of held commands (SAM-5 7: they end like the
 * tasks of the task set, before the answer), and a limit removed live.
 *
 * Limits are chosen so that the bucket refills slowly next to the time
 * the test takes to send its commands (qos_iops = 20 holds one command
 * and refills one every 50 ms), so the counts do not depend on speed,
 * and quickly enough that the held commands end within the watchdog.
 */
#include <check.h>
#include <string.h>
#include "tcq/byteorder.h"
#include "tcq/scsi_proto.h"
#include "scsi/lun.h"
#include "scsi/qos.h"
#include "scsi/taskset.h"
#include "scsi/tmf.h"
#include "tests/unit/harness.h"

static struct harness_lun H;

static void setup(void)
{
	harness_lun_setup(&H, "ram", 8u << 20, 2);
}

static void teardown(void)
{
	harness_lun_teardown(&H);
}

static const uint8_t tur[6] = { SOP_TEST_UNIT_READY };

/* READ(10) of blocks blocks (512 bytes each) at lba on nexus n. */
static struct cmd *read_start(unsigned n, uint8_t attr, uint32_t lba,
			      uint16_t blocks)
{
	uint8_t cdb[10] = { SOP_READ_10 };

	put_be32(cdb + 2, lba);
	put_be16(cdb + 7, blocks);
	return start_cdb(&H, n, attr, cdb, sizeof(cdb), NULL, 0,
			 blocks * 512u);
}

static void wait_all(struct cmd **c, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		wait_cmd(&H, c[i]);
		EXPECT_GOOD(c[i]);
		ck_assert_uint_eq(c[i]->ndone, 1);
	}
}

static uint64_t delayed(void)
{
	uint64_t d;
	unsigned h;

	qos_counts(H.lun, &d, &h);
	return d;
}

static unsigned held(void)
{
	uint64_t d;
	unsigned h;

	qos_counts(H.lun, &d, &h);
	return h;
}

/* ---- the bucket ---- */

/* qos_iops = 40: a bucket of 2 commands (50 ms). Of 6 reads sent at
 * once, 2 pass and 4 are held, and each ends once, in the order sent. */
START_TEST(commands_beyond_the_burst_are_held)
{
	struct cmd *c[6];

	qos_set_limits(H.lun, 40, 0);
	for (unsigned i = 0; i < 6; i++)
		c[i] = read_start(0, TASK_ATTR_SIMPLE, i, 1);
	wait_cmd(&H, c[1]);
	ck_assert_uint_eq(delayed(), 4);
	wait_all(c, 6);
	for (unsigned i = 1; i < 6; i++)
		ck_assert_uint_lt(c[i - 1]->done_seq, c[i]->done_seq);
	ck_assert_uint_eq(held(), 0);
}
END_TEST

/* What costs nothing is never counted: TEST UNIT READY, INQUIRY. */
START_TEST(commands_without_medium_access_are_not_limited)
{
	static const uint8_t inq[6] = { SOP_INQUIRY, 0, 0, 0, 96, 0 };

	qos_set_limits(H.lun, 20, 1);
	for (unsigned i = 0; i < 8; i++) {
		EXPECT_GOOD(run_cdb(&H, 0, tur, 6, NULL, 0, 0));
		EXPECT_GOOD(run_cdb(&H, 1, inq, 6, NULL, 0, 96));
	}
	ck_assert_uint_eq(delayed(), 0);
}
END_TEST

/* qos_mbps = 20: a bucket of 1,000,000 bytes, less than one 1 MiB read.
 * The first passes on a full bucket (and leaves it in debt), the second
 * is held until the debt is paid off (about 52 ms): never held forever
 * (spdk/spdk#370), and driven by the reactor's timer alone. */
START_TEST(a_command_bigger_than_the_bucket_passes_and_pays_later)
{
	struct cmd *c[2];

	qos_set_limits(H.lun, 0, 20);
	c[0] = read_start(0, TASK_ATTR_SIMPLE, 0, 2048);
	c[1] = read_start(0, TASK_ATTR_SIMPLE, 2048, 2048);
	wait_cmd(&H, c[0]);
	ck_assert_uint_eq(delayed(), 1);
	wait_all(c, 2);
	ck_assert_uint_eq(c[1]->t.data_in_len, 1u << 20);
	ck_assert_uint_eq(held(), 0);
}
END_TEST

/* Both limits: a command passes when both allow it. qos_mbps = 20 alone
 * would let 244 reads of 4 KiB through at once; qos_iops = 20 lets one. */
START_TEST(both_limits_apply)
{
	struct cmd *c[3];

	qos_set_limits(H.lun, 20, 20);
	for (unsigned i = 0; i < 3; i++)
		c[i] = read_start(0, TASK_ATTR_SIMPLE, 8 * i, 8);
	wait_all(c, 3);
	ck_assert_uint_eq(delayed(), 2);
}
END_TEST

/* ---- order ---- */

/* Two nexuses, four reads each, all sent before any is served: nexus 0's
 * first passes, the rest are served one a turn, alternating between the
 * nexuses, each nexus' in the order sent. */
START_TEST(held_commands_go_round_robin_in_fifo_order)
{
	struct cmd *a[4], *b[4];
	struct cmd *want[8];

	qos_set_limits(H.lun, 20, 0);
	for (unsigned i = 0; i < 4; i++)
		a[i] = read_start(0, TASK_ATTR_SIMPLE, i, 1);
	for (unsigned i = 0; i < 4; i++)
		b[i] = read_start(1, TASK_ATTR_SIMPLE, 10 + i, 1);
	wait_all(a, 4);
	wait_all(b, 4);
	ck_assert_uint_eq(delayed(), 7);
	want[0] = a[0];
	want[1] = a[1];
	want[2] = b[0];
	want[3] = a[2];
	want[4] = b[1];
	want[5] = a[3];
	want[6] = b[2];
	want[7] = b[3];
	for (unsigned i = 1; i < 8; i++)
		ck_assert_msg(want[i - 1]->done_seq < want[i]->done_seq,
			      "completion %u out of round-robin order", i);
}
END_TEST

/* SAM-5's attributes across the hold: a SIMPLE TEST UNIT READY passes
 * the held SIMPLE read; an ORDERED one waits behind it (it must not be
 * enabled before an older task ends); a HEAD OF QUEUE read is charged
 * but goes before the held read (8.6.4). */
START_TEST(attributes_are_kept_across_the_hold)
{
	struct cmd *r1, *r2, *ts, *to, *hq;

	qos_set_limits(H.lun, 20, 0);
	r1 = read_start(0, TASK_ATTR_SIMPLE, 0, 1);	/* the burst */
	r2 = read_start(0, TASK_ATTR_SIMPLE, 1, 1);	/* held */
	ts = start_cdb(&H, 0, TASK_ATTR_SIMPLE, tur, 6, NULL, 0, 0);
	to = start_cdb(&H, 0, TASK_ATTR_ORDERED, tur, 6, NULL, 0, 0);
	hq = read_start(0, TASK_ATTR_HEAD_OF_QUEUE, 2, 1);
	wait_cmd(&H, to);
	EXPECT_GOOD(ts);
	EXPECT_GOOD(to);
	EXPECT_GOOD(hq);
	EXPECT_GOOD(r2);
	ck_assert_uint_lt(ts->done_seq, r2->done_seq);
	ck_assert_uint_lt(hq->done_seq, r2->done_seq);
	ck_assert_uint_lt(r2->done_seq, to->done_seq);
	ck_assert_uint_eq(delayed(), 3);	/* r2, to, hq */
	wait_cmd(&H, r1);
}
END_TEST

/* A held write's data comes in while it waits, and it is written. */
START_TEST(a_held_write_gets_its_data)
{
	uint8_t w[2][512], cdb[10] = { SOP_WRITE_10 };
	struct cmd *c[2], *r;

	qos_set_limits(H.lun, 20, 0);
	for (unsigned i = 0; i < 2; i++) {
		memset(w[i], 0xa0 + i, sizeof(w[i]));
		put_be32(cdb + 2, 100 + i);
		put_be16(cdb + 7, 1);
		c[i] = start_cdb(&H, 0, TASK_ATTR_SIMPLE, cdb, 10, w[i], 512,
				 0);
	}
	wait_all(c, 2);
	ck_assert_uint_eq(delayed(), 1);
	qos_set_limits(H.lun, 0, 0);
	r = read_start(0, TASK_ATTR_SIMPLE, 100, 2);
	wait_cmd(&H, r);
	EXPECT_GOOD(r);
	ck_assert(!memcmp(cmd_data(r), w[0], 512));
	ck_assert(!memcmp(cmd_data(r) + 512, w[1], 512));
}
END_TEST

/* ---- a limit removed live ---- */

struct marker {
	bool done;
	unsigned held;
};

/* Runs after whatever the reactor was sent before it. */
static void mark(void *arg)
{
	struct marker *m = arg;

	m->held = held();
	m->done = true;
	reactor_stop(reactor_self());
}

/* qos_iops = 1: the twenty held reads would take twenty seconds, the
 * next one a second. Removing the limit lets every one go at once: by
 * the time a message sent after the change arrives, none is held (not
 * one waited for the timer); each nexus' go in order. */
START_TEST(removing_the_limit_releases_every_held_command)
{
	struct cmd *c[21];
	struct marker m = { 0 };

	qos_set_limits(H.lun, 1, 0);
	for (unsigned i = 0; i < 21; i++)
		c[i] = read_start(i % 2, TASK_ATTR_SIMPLE, i, 1);
	wait_cmd(&H, c[0]);
	ck_assert_uint_eq(delayed(), 20);
	ck_assert_uint_eq(held(), 20);
	qos_set_limits(H.lun, 0, 0);
	ck_assert_int_eq(reactor_post(&H.r, mark, &m), 0);
	harness_run_until(&H.r, &m.done, HARNESS_WATCHDOG_MS);
	ck_assert_uint_eq(m.held, 0);
	wait_all(c, 21);
	for (unsigned i = 3; i < 21; i++)
		ck_assert_uint_lt(c[i - 2]->done_seq, c[i]->done_seq);
	ck_assert_uint_eq(held(), 0);
	ck_assert_uint_eq(delayed(), 20);
}
END_TEST

/* ---- task management of held commands ---- */

static enum tmf_response run_tmf(struct harness_tmf *c, enum tmf_function fn,
				 unsigned n, struct tcq_task *t)
{
	return harness_run_tmf(&H, c, fn, n, t);
}

/* Ended, aborted, before the answer: silently, or with TASK ABORTED. */
#define EXPECT_ABORTED(cmd, call, report) do { \
	ck_assert_msg((cmd)->done && (cmd)->t.aborted, "not aborted"); \
	ck_assert_uint_eq((cmd)->ndone, 1); \
	ck_assert_uint_lt((cmd)->done_seq, (call)->seq); \
	if (report) \
		EXPECT_STATUS(cmd, SAM_STAT_TASK_ABORTED); \
	else \
		ck_assert_uint_ne((cmd)->t.status, SAM_STAT_TASK_ABORTED); \
} while (0)

/* QUERY TASK finds a held command (it is in the task set as far as the
 * initiator can tell), ABORT TASK ends it; the other held one stays. */
START_TEST(abort_task_of_a_held_command)
{
	struct cmd *r1, *r2, *r3;
	struct harness_tmf c;

	qos_set_limits(H.lun, 1, 0);
	r1 = read_start(0, TASK_ATTR_SIMPLE, 0, 1);
	r2 = read_start(0, TASK_ATTR_SIMPLE, 1, 1);
	r3 = read_start(0, TASK_ATTR_SIMPLE, 2, 1);
	wait_cmd(&H, r1);
	ck_assert_int_eq(run_tmf(&c, TMF_QUERY_TASK, 0, &r2->t),
			 TMF_FUNCTION_SUCCEEDED);
	ck_assert_int_eq(run_tmf(&c, TMF_ABORT_TASK, 0, &r2->t),
			 TMF_FUNCTION_COMPLETE);
	EXPECT_ABORTED(r2, &c, false);
	ck_assert(!r3->done);
	ck_assert_uint_eq(held(), 1);
	qos_set_limits(H.lun, 0, 0);
	wait_cmd(&H, r3);
	EXPECT_GOOD(r3);
	ck_assert_uint_eq(r2->ndone, 1);
}
END_TEST

/* ABORT TASK SET: the requester's held commands, not the other
 * nexus'. */
START_TEST(abort_task_set_ends_the_requesters_held_commands)
{
	struct cmd *r0, *h0, *h1;
	struct harness_tmf c;

	qos_set_limits(H.lun, 1, 0);
	r0 = read_start(0, TASK_ATTR_SIMPLE, 0, 1);
	h0 = read_start(0, TASK_ATTR_SIMPLE, 1, 1);
	h1 = read_start(1, TASK_ATTR_SIMPLE, 2, 1);
	wait_cmd(&H, r0);
	ck_assert_int_eq(run_tmf(&c, TMF_ABORT_TASK_SET, 0, NULL),
			 TMF_FUNCTION_COMPLETE);
	EXPECT_ABORTED(h0, &c, false);
	ck_assert(!h1->done);
	ck_assert_uint_eq(held(), 1);
	qos_set_limits(H.lun, 0, 0);
	wait_cmd(&H, h1);
	EXPECT_GOOD(h1);
}
END_TEST

/* LOGICAL UNIT RESET ends every nexus' held commands before its answer;
 * TAS=1: the other nexus' with TASK ABORTED (SPC-4 7.5.8), the
 * requester's silently; then each nexus hears of the reset (29h/03h). */
START_TEST(lun_reset_ends_every_held_command)
{
	struct cmd *r0, *h0, *h1a, *h1b;
	struct harness_tmf c;

	H.lun->tas = 1;
	qos_set_limits(H.lun, 1, 0);
	r0 = read_start(0, TASK_ATTR_SIMPLE, 0, 1);
	h0 = read_start(0, TASK_ATTR_SIMPLE, 1, 1);
	h1a = read_start(1, TASK_ATTR_SIMPLE, 2, 1);
	h1b = read_start(1, TASK_ATTR_ORDERED, 3, 1);
	wait_cmd(&H, r0);
	ck_assert_int_eq(run_tmf(&c, TMF_LOGICAL_UNIT_RESET, 0, NULL),
			 TMF_FUNCTION_COMPLETE);
	EXPECT_ABORTED(h0, &c, false);
	EXPECT_ABORTED(h1a, &c, true);
	EXPECT_ABORTED(h1b, &c, true);
	ck_assert_uint_eq(held(), 0);
	qos_set_limits(H.lun, 0, 0);
	for (unsigned n = 0; n < 2; n++)
		EXPECT_SENSE(run_cdb(&H, n, tur, 6, NULL, 0, 0),
			     SK_UNIT_ATTENTION, 0x29, 0x03);
}
END_TEST

static void nexus_lost(void *ts)
{
	lun_nexus_abort(ts);
}

/* The nexus is lost (its session ends): its held commands end without
 * status, the other nexus' go on. */
START_TEST(nexus_loss_ends_its_held_commands)
{
	struct cmd *r0, *h0, *h1;

	qos_set_limits(H.lun, 1, 0);
	r0 = read_start(0, TASK_ATTR_SIMPLE, 0, 1);
	h0 = read_start(0, TASK_ATTR_SIMPLE, 1, 1);
	h1 = read_start(1, TASK_ATTR_SIMPLE, 2, 1);
	wait_cmd(&H, r0);
	ck_assert_uint_eq(taskset_count(H.ts[0]), 1);	/* held counts */
	ck_assert_int_eq(reactor_post(&H.r, nexus_lost, H.ts[0]), 0);
	wait_cmd(&H, h0);
	ck_assert(h0->t.aborted);
	ck_assert_uint_ne(h0->t.status, SAM_STAT_TASK_ABORTED);
	ck_assert_uint_eq(taskset_count(H.ts[0]), 0);
	ck_assert(!h1->done);
	qos_set_limits(H.lun, 0, 0);
	wait_cmd(&H, h1);
	EXPECT_GOOD(h1);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("qos");
	TCase *tc = tcase_create("qos");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 30);
	harness_add(tc, commands_beyond_the_burst_are_held);
	harness_add(tc, commands_without_medium_access_are_not_limited);
	harness_add(tc, a_command_bigger_than_the_bucket_passes_and_pays_later);
	harness_add(tc, both_limits_apply);
	harness_add(tc, held_commands_go_round_robin_in_fifo_order);
	harness_add(tc, attributes_are_kept_across_the_hold);
	harness_add(tc, a_held_write_gets_its_data);
	harness_add(tc, removing_the_limit_releases_every_held_command);
	harness_add(tc, abort_task_of_a_held_command);
	harness_add(tc, abort_task_set_ends_the_requesters_held_commands);
	harness_add(tc, lun_reset_ends_every_held_command);
	harness_add(tc, nexus_loss_ends_its_held_commands);
	suite_add_tcase(s, tc);
	return s;
}

int main(int argc, char **argv)
{
	return harness_main(argc, argv, suite);
}
