/* The order-check verifier on hand-built traces. */
#include <check.h>
#include <stdlib.h>
#include "initiator/engine.h"
#include "initiator/ordercheck.h"
#include "tests/unit/harness.h"

#define S BENCH_ATTR_SIMPLE
#define O BENCH_ATTR_ORDERED
#define H BENCH_ATTR_HOQ

static struct oc_cmd tr[16];
static size_t ntr;
static struct oc_violation seen[16];
static unsigned nseen;

static void add(uint8_t attr, bool write, uint64_t lba, uint64_t stamp,
		uint32_t seq, uint64_t t_submit, uint64_t t_done)
{
	struct oc_cmd *c = &tr[ntr];

	c->idx = (uint32_t)ntr;
	c->attr = attr;
	c->write = write;
	c->lba = lba;
	c->blocks = 1;
	c->stamp = stamp;
	c->seq = seq;
	c->status = 0;
	c->t_submit_ns = t_submit;
	c->t_done_ns = t_done;
	ntr++;
}

static void collect(void *ctx, const struct oc_violation *v)
{
	if (nseen < 16)
		seen[nseen++] = *v;
}

static uint64_t run(struct oc_stats *st)
{
	nseen = 0;
	return ordercheck_verify(tr, ntr, st, collect, NULL);
}

static void setup(void)
{
	ntr = 0;
	nseen = 0;
}

START_TEST(clean_trace_passes)
{
	struct oc_stats st;

	add(S, true, 0, 1, 10, 0, 50);
	add(O, true, 0, 2, 11, 1, 60);
	add(S, false, 0, 2, 12, 2, 70);	/* sees the ORDERED write */
	add(S, true, 0, 4, 13, 3, 80);
	add(S, false, 0, 4, 14, 4, 90);	/* a newer write is fine too */
	add(S, false, 1, 0, 15, 5, 95);	/* untouched block */
	ck_assert_uint_eq(run(&st), 0);
	ck_assert_uint_eq(st.cmds, 6);
	ck_assert_uint_eq(st.ordered, 1);
	ck_assert_uint_eq(st.writes, 3);
	ck_assert_uint_eq(st.reads, 3);
}
END_TEST

START_TEST(ordered_before_older_flagged)
{
	struct oc_stats st;

	add(S, true, 0, 1, 11, 0, 50);
	add(O, true, 1, 2, 10, 1, 40);	/* completed before #0 */
	ck_assert_uint_eq(run(&st), 1);
	ck_assert_int_eq(seen[0].rule, OC_ORDERED_BEFORE_OLDER);
	ck_assert_int_eq(seen[0].a, 1);
	ck_assert_int_eq(seen[0].b, 0);
}
END_TEST

START_TEST(newer_before_ordered_flagged)
{
	struct oc_stats st;

	add(O, true, 0, 1, 11, 0, 50);
	add(S, false, 1, 0, 10, 1, 40);	/* newer, but completed first */
	ck_assert_uint_eq(run(&st), 1);
	ck_assert_int_eq(seen[0].rule, OC_NEWER_BEFORE_ORDERED);
	ck_assert_int_eq(seen[0].a, 0);
	ck_assert_int_eq(seen[0].b, 1);
}
END_TEST

START_TEST(stale_read_flagged)
{
	struct oc_stats st;

	add(S, true, 3, 1, 10, 0, 50);
	add(O, true, 3, 2, 11, 1, 60);
	add(S, false, 3, 1, 12, 2, 70);	/* returns #0's data: stale */
	add(S, false, 3, 0, 13, 3, 80);	/* initial content: stale */
	ck_assert_uint_eq(run(&st), 2);
	ck_assert_int_eq(seen[0].rule, OC_STALE_READ);
	ck_assert_int_eq(seen[0].a, 2);
	ck_assert_int_eq(seen[0].b, 1);
	ck_assert_int_eq(seen[0].c, 0);
	ck_assert_int_eq(seen[1].a, 3);
}
END_TEST

START_TEST(hoq_overtaking_not_flagged)
{
	struct oc_stats st;

	add(O, true, 0, 1, 12, 0, 100);
	add(H, false, 0, 0, 10, 10, 20);	/* overtakes the ORDERED */
	add(S, false, 1, 0, 13, 11, 110);
	ck_assert_uint_eq(run(&st), 0);
	ck_assert_uint_eq(st.hoq, 1);
	ck_assert_uint_eq(st.hoq_while_ordered, 1);
	ck_assert_uint_eq(st.hoq_overtook, 1);
}
END_TEST

START_TEST(hoq_held_behind_dormant_flagged)
{
	struct oc_stats st;

	add(O, true, 0, 1, 11, 0, 100);
	add(H, false, 1, 0, 13, 10, 130);	/* sent while #0 outstanding */
	add(S, false, 2, 0, 12, 11, 120);	/* dormant, yet done first */
	ck_assert_uint_eq(run(&st), 1);
	ck_assert_int_eq(seen[0].rule, OC_HOQ_HELD);
	ck_assert_int_eq(seen[0].a, 1);
	ck_assert_int_eq(seen[0].b, 2);
	ck_assert_int_eq(seen[0].c, 0);
	ck_assert_uint_eq(st.hoq_overtook, 0);
}
END_TEST

START_TEST(statsn_wraps)
{
	struct oc_stats st;

	add(S, true, 0, 1, 0xfffffffeu, 0, 50);
	add(O, true, 0, 2, 0xffffffffu, 1, 60);
	add(S, false, 0, 2, 0, 2, 70);
	ck_assert_uint_eq(run(&st), 0);
	tr[2].seq = 0xfffffffdu;	/* now before the ORDERED one */
	ck_assert_uint_eq(run(&st), 1);
	ck_assert_int_eq(seen[0].rule, OC_NEWER_BEFORE_ORDERED);
}
END_TEST

START_TEST(failed_commands_ignored)
{
	struct oc_stats st;

	add(O, true, 0, 1, 11, 0, 50);
	add(S, false, 1, 0, 10, 1, 40);
	tr[1].status = 2;
	ck_assert_uint_eq(run(&st), 0);
	ck_assert_uint_eq(st.failed, 1);
}
END_TEST

static Suite *ordercheck_suite(void)
{
	Suite *s = suite_create("ordercheck");
	TCase *tc = tcase_create("rules");

	tcase_add_checked_fixture(tc, setup, NULL);
	harness_add(tc, clean_trace_passes);
	harness_add(tc, ordered_before_older_flagged);
	harness_add(tc, newer_before_ordered_flagged);
	harness_add(tc, stale_read_flagged);
	harness_add(tc, hoq_overtaking_not_flagged);
	harness_add(tc, hoq_held_behind_dormant_flagged);
	harness_add(tc, statsn_wraps);
	harness_add(tc, failed_commands_ignored);
	suite_add_tcase(s, tc);
	return s;
}

int main(int argc, char **argv)
{
	return harness_main(argc, argv, ordercheck_suite);
}
