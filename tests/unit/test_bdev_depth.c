/*
 * The LUN-wide queue depth (backend/bdev_depth.c): one bdev with queues
 * on two reactors, a backend the test completes by hand, and each
 * reactor's passes run on the test thread, so every step is in the
 * test's order: the bound holds over both queues, slots go out in
 * arrival order over the LUN (a reactor that completes does not take the
 * slot from an older waiter elsewhere), the waiter's reactor is woken,
 * and a depth lowered below what is in flight holds new I/O back.
 */
#include <check.h>
#include <errno.h>
#include <stdatomic.h>
#include "backend/bdev.h"
#include "backend/bdev_priv.h"
#include "tcq/reactor.h"
#include "tests/unit/harness.h"

static struct reactor R0, R1;
static char err[256];

static struct bdev_io *seen[16];	/* in the order they started */
static int nseen;

static void manual_submit(struct bdev_queue *q, struct bdev_io *io)
{
	(void)q;
	seen[nseen++] = io;
}

static const struct bdev_ops manual_ops = {
	.name = "manual",
	.submit = manual_submit,
};

static void nop_done(struct bdev_io *io)
{
	(void)io;
}

static struct bdev_io ios[16];

static void submit(struct bdev_queue *q, int i)
{
	ios[i].op = BDEV_READ;
	ios[i].offset = 0;
	ios[i].len = 512;
	ios[i].done = nop_done;
	list_init(&ios[i].node);
	bdev_submit(q, &ios[i]);
}

/* Runs passes of r until its mailbox is empty (a posted wake-up ran). */
static void pass(struct reactor *r)
{
	for (int i = 0; i < 3; i++) {
		reactor_stop(r);
		reactor_run(r);
	}
}

static void counts(struct bdev *b, uint32_t now, uint32_t peak)
{
	uint32_t n, p;

	bdev_depth_counts(b, &n, &p);
	ck_assert_uint_eq(n, now);
	ck_assert_uint_eq(p, peak);
}

static void setup(void)
{
	ck_assert_int_eq(reactor_init(&R0, 0), 0);
	ck_assert_int_eq(reactor_init(&R1, 1), 0);
	nseen = 0;
}

static void teardown(void)
{
	reactor_fini(&R1);
	reactor_fini(&R0);
}

START_TEST(bound_and_order_over_two_reactors)
{
	struct bdev_params p = { .size = 1 << 20, .queue_depth = 2 };
	struct bdev *b = bdev_alloc(&manual_ops, &p, p.size, err, sizeof(err));
	struct bdev_queue *q0, *q1;

	ck_assert_msg(b != NULL, "%s", err);
	q0 = bdev_queue_get(b, &R0);
	q1 = bdev_queue_get(b, &R1);
	submit(q1, 0);			/* 0 and 1 start */
	submit(q1, 1);
	submit(q0, 2);			/* 2 and 3 wait on reactor 0 */
	submit(q0, 3);
	submit(q1, 4);			/* 4 waits on reactor 1, last */
	ck_assert_int_eq(nseen, 2);	/* per queue it would be 4 */
	counts(b, 2, 2);

	/* Reactor 1 frees a slot: it goes to 2, older than 1's own 4, and
	 * reactor 0 is woken for it. */
	bdev_complete(&ios[0], 0);
	ck_assert_int_eq(nseen, 2);
	ck_assert_uint_eq(atomic_load(&b->budget.kicks), 1);
	ck_assert_int_eq(bdev_queue_put(b, &R1), -EBUSY);
	pass(&R0);
	ck_assert_int_eq(nseen, 3);
	ck_assert_uint_eq(atomic_load(&b->budget.kicks), 0);
	counts(b, 2, 2);

	bdev_complete(&ios[1], 0);	/* 3 next, on reactor 0 again */
	pass(&R0);
	ck_assert_int_eq(nseen, 4);
	bdev_complete(&ios[2], 0);	/* on reactor 0: 4 is reactor 1's */
	ck_assert_int_eq(nseen, 4);
	pass(&R1);
	ck_assert_int_eq(nseen, 5);
	counts(b, 2, 2);

	bdev_complete(&ios[3], 0);
	bdev_complete(&ios[4], 0);
	counts(b, 0, 2);
	for (int i = 0; i < 5; i++)	/* arrival order over the LUN */
		ck_assert_ptr_eq(seen[i], &ios[i]);
	pass(&R0);
	pass(&R1);
	ck_assert_int_eq(bdev_queue_put(b, &R0), 0);
	ck_assert_int_eq(bdev_queue_put(b, &R1), 0);
	bdev_peak_reset(b);
	counts(b, 0, 0);
	bdev_close(b);
}
END_TEST

START_TEST(depth_lowered_below_in_flight)
{
	struct bdev_params p = { .size = 1 << 20, .queue_depth = 4 };
	struct bdev *b = bdev_alloc(&manual_ops, &p, p.size, err, sizeof(err));
	struct bdev_queue *q0, *q1;

	ck_assert_msg(b != NULL, "%s", err);
	q0 = bdev_queue_get(b, &R0);
	q1 = bdev_queue_get(b, &R1);
	submit(q0, 0);
	submit(q1, 1);
	submit(q0, 2);
	submit(q1, 3);
	ck_assert_int_eq(nseen, 4);
	atomic_store(&b->queue_depth, 1);	/* tcqctl set, live */
	submit(q1, 5);
	submit(q0, 6);
	for (int i = 0; i < 3; i++) {		/* 4 then 3, 2, 1 in flight */
		bdev_complete(seen[i], 0);
		pass(&R0);
		pass(&R1);
		ck_assert_int_eq(nseen, 4);
	}
	bdev_complete(seen[3], 0);		/* 0 in flight: 5 may go */
	pass(&R0);
	pass(&R1);
	ck_assert_int_eq(nseen, 5);
	ck_assert_ptr_eq(seen[4], &ios[5]);
	counts(b, 1, 4);
	/* Raised again: the next completion admits what waits. */
	atomic_store(&b->queue_depth, 8);
	bdev_complete(&ios[5], 0);
	pass(&R0);
	ck_assert_int_eq(nseen, 6);
	bdev_complete(&ios[6], 0);
	counts(b, 0, 4);
	pass(&R0);
	pass(&R1);
	ck_assert_int_eq(bdev_queue_put(b, &R0), 0);
	ck_assert_int_eq(bdev_queue_put(b, &R1), 0);
	bdev_close(b);
}
END_TEST

static Suite *depth_suite(void)
{
	Suite *s = suite_create("bdev_depth");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 30);
	harness_add(tc, bound_and_order_over_two_reactors);
	harness_add(tc, depth_lowered_below_in_flight);
	suite_add_tcase(s, tc);
	return s;
}

int main(int argc, char **argv)
{
	return harness_main(argc, argv, depth_suite);
}
