/* Unit tests of what only the reactor's io_uring engine does
 * (common/reactor_uring.c): a pass hands the kernel everything it queued
 * in one io_uring_enter, and a handler deleted while its poll request is
 * in the kernel is never called. test_reactor.c runs the rest of the
 * reactor's cases on both engines. Skipped (77) where io_uring cannot
 * run. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include "tcq/reactor.h"
#include "tests/unit/harness.h"

static struct reactor R;

static void setup(void)
{
	reactor_set_engine(REACTOR_URING);
	ck_assert_int_eq(reactor_init(&R, 3), 0);
	ck_assert_ptr_nonnull(R.ring);
}

static void teardown(void)
{
	reactor_fini(&R);
}

/* ---- io_uring: the pass ---- */

static int level_calls;
static void level_cb(struct reactor *r, uint32_t events, void *arg)
{
	ck_assert(events & EPOLLIN);
	level_calls++;	/* reads nothing: the fd stays ready */
}

/* Runs exactly one pass (a stop asked before the run). */
static void one_pass(void)
{
	reactor_stop(&R);
	reactor_run(&R);
}

/* Eight ready fds: the pass that watches them first hands the kernel the
 * eight poll requests (and the mailbox's and timerfd's) in one
 * io_uring_enter, and the next pass their re-arming, again in one; they
 * were not read, so each is called again (level-triggered, as epoll). */
START_TEST(uring_pass_submits_once)
{
	struct reactor_fd h[8];
	int fds[8];
	uint64_t one = 1, e0, s0, e1, s1, e2, s2;

	level_calls = 0;
	for (int i = 0; i < 8; i++) {
		fds[i] = eventfd(0, EFD_NONBLOCK);
		ck_assert_int_eq(write(fds[i], &one, 8), 8);
		ck_assert_int_eq(reactor_add_fd(&R, &h[i], fds[i], EPOLLIN,
						level_cb, NULL), 0);
	}
	reactor_uring_counts(&R, &e0, &s0);
	ck_assert_uint_eq(s0, 10);	/* mailbox, timerfd, the eight */
	ck_assert_uint_eq(e0, 0);	/* queued, not yet submitted */
	one_pass();
	reactor_uring_counts(&R, &e1, &s1);
	ck_assert_uint_eq(e1 - e0, 1);
	ck_assert_int_eq(level_calls, 8);
	/* each armed again, and the mailbox (reactor_stop posts to it) */
	ck_assert_uint_eq(s1 - s0, 9);
	one_pass();
	reactor_uring_counts(&R, &e2, &s2);
	ck_assert_uint_eq(e2 - e1, 1);
	ck_assert_uint_eq(s2 - s1, 9);
	ck_assert_int_eq(level_calls, 16);
	for (int i = 0; i < 8; i++) {
		reactor_del_fd(&R, &h[i]);
		close(fds[i]);
	}
}
END_TEST

static int deleted_calls;
static void deleted_cb(struct reactor *r, uint32_t events, void *arg)
{
	deleted_calls++;
}

/* A handler deleted while its poll request is in the kernel, and freed,
 * hears nothing of the fd becoming ready (ASan sees any use of it). */
START_TEST(uring_deleted_fd_hears_nothing)
{
	struct reactor_fd *h = malloc(sizeof(*h));
	int fd = eventfd(0, EFD_NONBLOCK);
	uint64_t one = 1;

	deleted_calls = 0;
	ck_assert_int_eq(reactor_add_fd(&R, h, fd, EPOLLIN, deleted_cb,
					NULL), 0);
	one_pass();	/* the request is in the kernel now */
	reactor_del_fd(&R, h);
	free(h);
	ck_assert_int_eq(write(fd, &one, 8), 8);
	one_pass();
	one_pass();
	ck_assert_int_eq(deleted_calls, 0);
	close(fd);
}
END_TEST

static Suite *reactor_uring_suite(void)
{
	Suite *s = suite_create("reactor_uring");
	TCase *tc = tcase_create("pass");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 20);
	harness_add(tc, uring_pass_submits_once);
	harness_add(tc, uring_deleted_fd_hears_nothing);
	suite_add_tcase(s, tc);
	return s;
}

int main(int argc, char **argv)
{
	char why[200];

	if (reactor_uring_probe(why, sizeof(why)) < 0) {
		printf("io_uring cannot run here: %s\n", why);
		return 77;
	}
	return harness_main(argc, argv, reactor_uring_suite);
}
