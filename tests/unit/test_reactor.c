/* Unit tests for the reactor: timers (ms and ns, the one timerfd), deferred
 * calls, posts, fd removal; each on both engines (epoll and io_uring, the
 * latter when the build and kernel have it; test_reactor_uring.c has
 * what only io_uring does). */
#include <check.h>
#include <stdio.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include "tcq/heap.h"
#include "tcq/reactor.h"
#include "tests/unit/harness.h"

static struct reactor R;

static void setup(void)
{
	reactor_set_engine(REACTOR_EPOLL);
	ck_assert_int_eq(reactor_init(&R, 3), 0);
	ck_assert_ptr_null(R.ring);
}

static void setup_uring(void)
{
	reactor_set_engine(REACTOR_URING);
	ck_assert_int_eq(reactor_init(&R, 3), 0);
	ck_assert_ptr_nonnull(R.ring);
	ck_assert_int_eq(R.epfd, -1);
}

static void teardown(void)
{
	reactor_fini(&R);
}

/* Every loop here runs under the harness's watchdog: a test whose loop
 * does not stop itself fails instead of hanging. */
static void run_guarded(void)
{
	harness_run_guarded(&R, 5000);
}

/* ---- timers ---- */

static int fired[8], nfired;
static void rec_timer(struct reactor_timer *t)
{
	fired[nfired++] = (int)(long)t->arg;
	if ((long)t->arg == 99)
		reactor_stop(&R);
}

START_TEST(timers_in_order)
{
	struct reactor_timer t[5];
	uint64_t start = reactor_now_ns();

	nfired = 0;
	reactor_timer_init(&t[0], rec_timer, (void *)30L);
	reactor_timer_init(&t[1], rec_timer, (void *)10L);
	reactor_timer_init(&t[2], rec_timer, (void *)20L);
	reactor_timer_init(&t[3], rec_timer, (void *)99L);
	reactor_timer_init(&t[4], rec_timer, (void *)15L);
	reactor_timer_arm(&R, &t[0], 30);
	reactor_timer_arm(&R, &t[1], 10);
	reactor_timer_arm(&R, &t[2], 20);
	reactor_timer_arm(&R, &t[3], 40);
	reactor_timer_arm(&R, &t[4], 15);
	ck_assert(reactor_timer_armed(&t[4]));
	reactor_timer_cancel(&R, &t[4]);
	ck_assert(!reactor_timer_armed(&t[4]));
	/* re-arming moves a timer: 20 becomes 5 */
	reactor_timer_arm(&R, &t[2], 5);
	run_guarded();
	ck_assert_int_eq(nfired, 4);
	ck_assert_int_eq(fired[0], 20);
	ck_assert_int_eq(fired[1], 10);
	ck_assert_int_eq(fired[2], 30);
	ck_assert_int_eq(fired[3], 99);
	ck_assert_uint_ge(reactor_now_ns() - start, 40 * 1000000ull);
	for (int i = 0; i < 5; i++)
		ck_assert(!reactor_timer_armed(&t[i]));
}
END_TEST

/* ---- nanosecond timers (reactor_timer_arm_at) ---- */

#define US 1000ull
#define MS_NS 1000000ull

/* What each firing saw: the timer's id and deadline, the pass's time. */
static struct fire {
	int id;
	uint64_t dl, pass, clock;
} fires[16];
static int nfires, stop_at;

static void fire_rec(struct reactor_timer *t)
{
	struct fire *f = &fires[nfires++];

	f->id = (int)(long)t->arg;
	f->dl = reactor_timer_deadline(t);
	f->pass = R.now_ns;
	f->clock = reactor_now_ns();
	if (nfires == stop_at)
		reactor_stop(&R);
}

static void fires_reset(struct reactor_timer *t, int n, int stop)
{
	nfires = 0;
	stop_at = stop;
	for (int i = 0; i < n; i++)
		reactor_timer_init(&t[i], fire_rec, (void *)(long)i);
}

/* n firings, each no earlier than its deadline, in deadline order. */
static void expect_fires(int n)
{
	ck_assert_int_eq(nfires, n);
	for (int i = 0; i < n; i++) {
		ck_assert_msg(fires[i].pass >= fires[i].dl &&
			      fires[i].clock >= fires[i].dl,
			      "timer %d fired %lld ns early", fires[i].id,
			      (long long)(fires[i].dl - fires[i].pass));
		if (i)
			ck_assert_uint_ge(fires[i].dl, fires[i - 1].dl);
	}
}

static int fire_pos(int id)
{
	for (int i = 0; i < nfires; i++)
		if (fires[i].id == id)
			return i;
	return -1;
}

/* 300 us and 1.5 ms deadlines fire among the ms timers by deadline. */
START_TEST(timer_ns_never_early_in_order_with_ms)
{
	struct reactor_timer t[5];
	uint64_t start = reactor_now_ns();

	fires_reset(t, 5, 5);
	ck_assert_int_eq(reactor_timer_arm_at(&R, &t[0], start + 300 * US), 0);
	reactor_timer_arm(&R, &t[1], 1);
	ck_assert_int_eq(reactor_timer_arm_at(&R, &t[2], start + 1500 * US),
			 0);
	reactor_timer_arm(&R, &t[3], 0);
	reactor_timer_arm(&R, &t[4], 2);
	run_guarded();
	expect_fires(5);
	ck_assert_int_lt(fire_pos(0), fire_pos(1));	/* 300 us, 1 ms */
	ck_assert_int_eq(fires[4].id, 4);		/* 2 ms, the last */
}
END_TEST

/* A pass that cannot sleep: an eventfd made ready before it; its
 * callback runs kick_fn, or stops the reactor. */
static int kick_fd;
static struct reactor_fd kick_rfd;
static void (*kick_fn)(void);

static void kick_ready(struct reactor *r, uint32_t events, void *arg)
{
	uint64_t v;

	ck_assert_int_eq(read(kick_fd, &v, sizeof(v)), 8);
	if (kick_fn)
		kick_fn();
	else
		reactor_stop(r);
}

static void kick_open(void (*fn)(void))
{
	kick_fn = fn;
	kick_fd = eventfd(0, EFD_NONBLOCK);
	ck_assert_int_ge(kick_fd, 0);
	ck_assert_int_eq(reactor_add_fd(&R, &kick_rfd, kick_fd, EPOLLIN,
					kick_ready, NULL), 0);
}

static void kick(void)
{
	uint64_t one = 1;

	ck_assert_int_eq(write(kick_fd, &one, sizeof(one)), 8);
}

static void kick_close(void)
{
	reactor_del_fd(&R, &kick_rfd);
	close(kick_fd);
}

static struct reactor_timer cancel_t[2];

/* In the pass that set the timerfd for cancel_t[0], before its timers. */
static void cancel_first(void)
{
	reactor_timer_cancel(&R, &cancel_t[0]);
	ck_assert(!reactor_timer_armed(&cancel_t[0]));
	reactor_timer_arm_at(&R, &cancel_t[1], reactor_now_ns() + 1 * MS_NS);
}

/* The earliest timer, cancelled after the timerfd was set for it, never
 * fires; the later one does, the timerfd set again for it. */
START_TEST(timer_ns_cancel)
{
	uint64_t sets = R.tfd_sets;

	fires_reset(cancel_t, 2, 1);
	kick_open(cancel_first);
	reactor_timer_arm_at(&R, &cancel_t[0], reactor_now_ns() + 300 * US);
	kick();
	run_guarded();
	expect_fires(1);
	ck_assert_int_eq(fires[0].id, 1);
	ck_assert_uint_le(R.tfd_sets, sets + 2);
	kick_close();
}
END_TEST

/* Re-arming moves a timer both ways: one moved from 50 ms to 300 us
 * fires first; one moved from 300 us to 2 ms not before 2 ms. */
START_TEST(timer_ns_rearm_earlier_and_later)
{
	struct reactor_timer t[3];
	uint64_t start = reactor_now_ns();

	fires_reset(t, 3, 3);
	reactor_timer_arm_at(&R, &t[0], start + 50 * MS_NS);
	reactor_timer_arm_at(&R, &t[1], start + 300 * US);
	reactor_timer_arm_at(&R, &t[2], start + 3 * MS_NS);
	reactor_timer_arm_at(&R, &t[0], start + 300 * US);
	reactor_timer_arm_at(&R, &t[1], start + 2 * MS_NS);
	run_guarded();
	expect_fires(3);
	ck_assert_int_eq(fires[0].id, 0);
	ck_assert_int_eq(fires[1].id, 1);
	ck_assert_uint_ge(fires[1].pass, start + 2 * MS_NS);
	ck_assert_int_eq(fires[2].id, 2);
}
END_TEST

/* One pass that sets the timerfd if it must and does not sleep (the
 * eventfd is ready, so no watchdog is needed). */
static void kick_pass(void)
{
	kick();
	reactor_run(&R);
}

/* The timerfd is set only when the earliest deadline becomes earlier
 * than its setting: arming a later timer, moving one later and
 * cancelling cost no timerfd_settime. Deadlines far off: none fires. */
START_TEST(timer_later_costs_no_timerfd_set)
{
	struct reactor_timer t[3];
	uint64_t now = reactor_now_ns(), sets = R.tfd_sets;

	fires_reset(t, 3, 0);
	kick_open(NULL);
	reactor_timer_arm_at(&R, &t[0], now + 200000 * MS_NS);
	kick_pass();
	ck_assert_uint_eq(R.tfd_sets, sets + 1);
	reactor_timer_arm_at(&R, &t[1], now + 300000 * MS_NS);	/* later */
	reactor_timer_arm_at(&R, &t[0], now + 250000 * MS_NS);	/* moved on */
	kick_pass();
	ck_assert_uint_eq(R.tfd_sets, sets + 1);
	reactor_timer_arm_at(&R, &t[2], now + 100000 * MS_NS);	/* earlier */
	kick_pass();
	ck_assert_uint_eq(R.tfd_sets, sets + 2);
	for (int i = 0; i < 3; i++)
		reactor_timer_cancel(&R, &t[i]);
	kick_pass();
	ck_assert_uint_eq(R.tfd_sets, sets + 2);
	ck_assert_int_eq(nfires, 0);
	kick_close();
}
END_TEST

/* Timers armed from a timer's callback, on the pass's time: one already
 * due, two in nanoseconds, one in ms; all fire in deadline order. */
static struct reactor_timer chain[5];

static void chain_first(struct reactor_timer *t)
{
	fire_rec(t);
	reactor_timer_arm_at(&R, &chain[1], R.now_ns);
	reactor_timer_arm_at(&R, &chain[2], R.now_ns + 500 * US);
	reactor_timer_arm_at(&R, &chain[3], R.now_ns + 100 * US);
	reactor_timer_arm(&R, &chain[4], 1);
}

START_TEST(timer_armed_from_a_timer)
{
	fires_reset(chain, 5, 5);
	reactor_timer_init(&chain[0], chain_first, (void *)0L);
	reactor_timer_arm_at(&R, &chain[0], reactor_now_ns() + 200 * US);
	run_guarded();
	expect_fires(5);
	ck_assert_int_eq(fires[0].id, 0);
	ck_assert_int_eq(fires[1].id, 1);	/* due when armed */
	ck_assert_int_eq(fires[2].id, 3);
	ck_assert_int_eq(fires[3].id, 2);
	ck_assert_int_eq(fires[4].id, 4);
	for (int i = 2; i < 5; i++)	/* not in the arming pass */
		ck_assert_uint_gt(fires[i].pass, fires[0].pass);
}
END_TEST

/* ---- deferred calls ---- */

static int runs_a, runs_b, runs_self;
static struct reactor_defer da, db, dself, dcancel;

static void defer_a(struct reactor_defer *d) { runs_a++; }
static void defer_b(struct reactor_defer *d)
{
	runs_b++;
	/* a call queued by a deferred call runs in the same pass */
	reactor_defer(&R, &da);
}
static void defer_cancelled(struct reactor_defer *d) { ck_abort(); }
static void defer_self(struct reactor_defer *d)
{
	if (++runs_self < 1000)
		reactor_defer(&R, d);
	else
		reactor_stop(&R);
}

START_TEST(deferred_batching)
{
	runs_a = runs_b = runs_self = 0;
	reactor_defer_init(&da, defer_a, NULL);
	reactor_defer_init(&db, defer_b, NULL);
	reactor_defer_init(&dself, defer_self, NULL);
	reactor_defer_init(&dcancel, defer_cancelled, NULL);
	reactor_defer(&R, &da);
	reactor_defer(&R, &da);		/* already queued: no-op */
	reactor_defer(&R, &db);
	reactor_defer(&R, &dcancel);
	reactor_defer_cancel(&dcancel);
	reactor_stop(&R);		/* one pass only */
	run_guarded();
	ck_assert_int_eq(runs_a, 2);	/* once queued, once by defer_b */
	ck_assert_int_eq(runs_b, 1);

	/* A call that keeps requeueing itself finishes over several passes
	 * without starving the loop. */
	reactor_defer(&R, &dself);
	run_guarded();
	ck_assert_int_eq(runs_self, 1000);
	ck_assert(!list_linked(&dself.node));
}
END_TEST

/* ---- calls put off to the next pass ---- */

static char order[16];
static int norder;
static int next_efd;
static struct reactor_fd next_rfd;
static struct reactor_defer dn_first, dn_same, dn_next, dn_idle;

static void next_fd_ready(struct reactor *r, uint32_t events, void *arg)
{
	uint64_t v;

	ck_assert_int_eq(read(next_efd, &v, sizeof(v)), (int)sizeof(v));
	order[norder++] = 'F';
}

static void dn_first_fn(struct reactor_defer *d)
{
	uint64_t one = 1;

	order[norder++] = '1';
	/* The fd becomes readable now; its event is dispatched in the next
	 * pass, before the call put off to that pass. */
	ck_assert_int_eq(write(next_efd, &one, sizeof(one)), (int)sizeof(one));
	reactor_defer_next(&R, &dn_next);
	reactor_defer(&R, &dn_next);	/* already queued: stays put off */
	reactor_defer(&R, &dn_same);
}

static void dn_same_fn(struct reactor_defer *d)
{
	order[norder++] = 'S';
}

static void dn_next_fn(struct reactor_defer *d)
{
	order[norder++] = 'N';
	/* With no fd event and no timer due, the next pass must not block. */
	reactor_defer_next(&R, &dn_idle);
}

static void dn_idle_fn(struct reactor_defer *d)
{
	order[norder++] = 'I';
	reactor_stop(&R);
}

START_TEST(defer_next_pass)
{
	norder = 0;
	memset(order, 0, sizeof(order));
	next_efd = eventfd(0, EFD_NONBLOCK);
	ck_assert_int_ge(next_efd, 0);
	ck_assert_int_eq(reactor_add_fd(&R, &next_rfd, next_efd, EPOLLIN,
					next_fd_ready, NULL), 0);
	reactor_defer_init(&dn_first, dn_first_fn, NULL);
	reactor_defer_init(&dn_same, dn_same_fn, NULL);
	reactor_defer_init(&dn_next, dn_next_fn, NULL);
	reactor_defer_init(&dn_idle, dn_idle_fn, NULL);
	reactor_defer(&R, &dn_first);
	run_guarded();
	ck_assert_str_eq(order, "1SFNI");
	ck_assert(!list_linked(&dn_next.node));

	/* A put-off call can be cancelled like any other. */
	norder = 0;
	memset(order, 0, sizeof(order));
	reactor_defer_next(&R, &dn_same);
	reactor_defer_cancel(&dn_same);
	reactor_defer_next(&R, &dn_idle);
	run_guarded();
	ck_assert_str_eq(order, "I");
	reactor_del_fd(&R, &next_rfd);
	close(next_efd);
}
END_TEST

/* ---- cross-thread posts ---- */

#define NPOSTS 2000
static int post_count, post_wrong_thread;

static void post_fn(void *arg)
{
	if (reactor_self() != &R)
		post_wrong_thread++;
	post_count++;
	if ((long)arg == NPOSTS - 1)
		reactor_stop(&R);
}

static void *poster(void *arg)
{
	for (long i = 0; i < NPOSTS; i++)
		ck_assert_int_eq(reactor_post(&R, post_fn, (void *)i), 0);
	return NULL;
}

static void *stopper(void *arg)
{
	usleep(20000);
	reactor_stop(&R);
	return NULL;
}

START_TEST(post_from_thread)
{
	pthread_t th;

	post_count = post_wrong_thread = 0;
	ck_assert_ptr_null(reactor_self());
	pthread_create(&th, NULL, poster, NULL);
	run_guarded();
	pthread_join(th, NULL);
	ck_assert_int_eq(post_count, NPOSTS);
	ck_assert_int_eq(post_wrong_thread, 0);
	ck_assert_ptr_null(reactor_self());

	/* reactor_stop from another thread wakes a blocked loop */
	pthread_create(&th, NULL, stopper, NULL);
	run_guarded();
	pthread_join(th, NULL);
}
END_TEST

/* ---- deleting fds from callbacks ---- */

struct evh {
	struct reactor_fd rfd;
	int fd;
	int *calls;
	struct evh **peer;	/* the other handler, freed by whoever runs */
};

static struct evh *h1, *h2;
static int calls;

static void evh_free(struct evh *h)
{
	reactor_del_fd(&R, &h->rfd);
	close(h->fd);
	free(h);
}

static void evh_cb(struct reactor *r, uint32_t events, void *arg)
{
	struct evh *h = arg;

	calls++;
	ck_assert(events & EPOLLIN);
	/* Free the peer first (its event may be later in this batch), then
	 * ourselves, from inside our own callback. */
	if (*h->peer) {
		evh_free(*h->peer);
		*h->peer = NULL;
	}
	if (h == h1)
		h1 = NULL;
	else
		h2 = NULL;
	evh_free(h);
	reactor_stop(r);
}

static struct evh *evh_new(struct evh **peer)
{
	struct evh *h = calloc(1, sizeof(*h));
	uint64_t one = 1;

	h->fd = eventfd(0, EFD_NONBLOCK);
	h->peer = peer;
	ck_assert_int_ge(h->fd, 0);
	ck_assert_int_eq(write(h->fd, &one, 8), 8);	/* readable now */
	ck_assert_int_eq(reactor_add_fd(&R, &h->rfd, h->fd, EPOLLIN, evh_cb, h),
			 0);
	return h;
}

START_TEST(del_fd_in_callback)
{
	calls = 0;
	h1 = evh_new(&h2);
	h2 = evh_new(&h1);
	run_guarded();
	/* Both were ready in the same batch; only one callback may run. */
	ck_assert_int_eq(calls, 1);
	ck_assert_ptr_null(h1);
	ck_assert_ptr_null(h2);
}
END_TEST

static int mod_calls;
static void mod_cb(struct reactor *r, uint32_t events, void *arg)
{
	struct reactor_fd *h = arg;

	mod_calls++;
	ck_assert(events & EPOLLOUT);
	ck_assert_int_eq(reactor_mod_fd(r, h, EPOLLIN), 0);
	reactor_stop(r);
}

START_TEST(mod_fd)
{
	struct reactor_fd h;
	int fd = eventfd(0, EFD_NONBLOCK);

	mod_calls = 0;
	/* not readable yet; only EPOLLOUT fires, then we switch it off */
	ck_assert_int_eq(reactor_add_fd(&R, &h, fd, EPOLLIN, mod_cb, &h), 0);
	ck_assert_int_eq(reactor_mod_fd(&R, &h, EPOLLOUT), 0);
	ck_assert_uint_eq(h.events, EPOLLOUT);
	run_guarded();
	ck_assert_int_eq(mod_calls, 1);
	ck_assert_uint_eq(h.events, EPOLLIN);
	reactor_del_fd(&R, &h);
	ck_assert_int_eq(h.fd, -1);
	close(fd);
}
END_TEST

/* ---- the min-heap under the timers (tcq/heap.h) ------------------------- */

/* 200 keys from a fixed LCG pop in ascending order; equal keys and a
 * node removed from the middle or re-keyed keep the order. */
START_TEST(heap_pops_in_key_order_after_remove_and_rekey)
{
	static struct heap_node n[200];
	struct heap h = { 0 };
	uint64_t x = 12345, prev = 0;
	struct heap_node *top;
	int count = 0;

	for (int i = 0; i < 200; i++) {
		heap_node_init(&n[i]);
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		n[i].key = (x >> 33) % 1000;	/* duplicates on purpose */
		ck_assert_int_eq(heap_push(&h, &n[i]), 0);
		ck_assert(heap_node_queued(&n[i]));
	}
	heap_remove(&h, &n[77]);
	ck_assert(!heap_node_queued(&n[77]));
	n[5].key = 0;			/* to the front */
	heap_rekey(&h, &n[5]);
	n[6].key = 5000;		/* to the back */
	heap_rekey(&h, &n[6]);
	ck_assert_uint_eq(heap_top(&h)->key, 0);	/* n[5], or a tie */
	while ((top = heap_pop(&h))) {
		ck_assert_uint_ge(top->key, prev);
		ck_assert(!heap_node_queued(top));
		prev = top->key;
		count++;
	}
	ck_assert_int_eq(count, 199);
	ck_assert_uint_eq(prev, 5000);
	ck_assert_ptr_null(heap_top(&h));
	heap_fini(&h);
}
END_TEST

/* ---- joins and barriers ---- */

static int join_runs, join_seen_pending;
static bool join_on_home;

static void join_fn(void *arg)
{
	struct reactor_join *j = arg;

	join_runs++;
	join_seen_pending = (int)__atomic_load_n(&j->pending, __ATOMIC_ACQUIRE);
	join_on_home = reactor_self() == &R;
	reactor_stop(&R);
}

static void *join_parts(void *arg)
{
	for (int i = 0; i < 3; i++) {
		usleep(2000);
		reactor_join_done(arg);
	}
	return NULL;
}

static void stop_timer(struct reactor_timer *t)
{
	reactor_stop(&R);
}

/* fn runs once, on the home reactor, after the starter's part and three
 * parts ended on another thread; not while one part is still open. */
START_TEST(join_runs_once_on_home_after_last_part)
{
	static struct reactor_join j;
	struct reactor_timer t;
	pthread_t th;

	join_runs = 0;
	reactor_join_init(&j, &R, join_fn, &j);
	reactor_join_add(&j, 4);
	pthread_create(&th, NULL, join_parts, &j);
	pthread_join(th, NULL);
	reactor_join_done(&j);		/* the starter's part */
	/* one part still open: nothing runs */
	reactor_timer_init(&t, stop_timer, NULL);
	reactor_timer_arm(&R, &t, 50);
	run_guarded();
	ck_assert_int_eq(join_runs, 0);
	reactor_join_done(&j);		/* the last */
	ck_assert_int_eq(join_runs, 0);	/* never inside the caller */
	run_guarded();
	ck_assert_int_eq(join_runs, 1);
	ck_assert_int_eq(join_seen_pending, 0);
	ck_assert(join_on_home);
}
END_TEST

static struct reactor R2;
static int seq, fd_seq, fd_defer_seq, barrier_seq;

static void fd_defer_fn(struct reactor_defer *d)
{
	fd_defer_seq = __atomic_add_fetch(&seq, 1, __ATOMIC_SEQ_CST);
}

static struct reactor_defer fd_defer;

static void ready_fd_cb(struct reactor *r, uint32_t events, void *arg)
{
	uint64_t v;

	if (read(*(int *)arg, &v, sizeof(v)) < 0)
		return;
	fd_seq = __atomic_add_fetch(&seq, 1, __ATOMIC_SEQ_CST);
	reactor_defer(r, &fd_defer);	/* work it leaves for the pass' end */
}

static void barrier_fn(void *arg)
{
	barrier_seq = __atomic_add_fetch(&seq, 1, __ATOMIC_SEQ_CST);
	reactor_stop(&R);
}

static void *run_r2(void *arg)
{
	reactor_run(&R2);
	return NULL;
}

/* A barrier over a reactor ends after what that reactor was told before
 * it (a readable fd) was handled, the pass's deferred work included. */
START_TEST(barrier_after_what_was_pending)
{
	static struct reactor_join j;
	static struct reactor_barrier_part part;
	struct reactor *rs[1] = { &R2 };
	struct reactor_fd rfd;
	uint64_t one = 1;
	pthread_t th;
	int efd;

	seq = fd_seq = fd_defer_seq = barrier_seq = 0;
	ck_assert_int_eq(reactor_init(&R2, 4), 0);
	efd = eventfd(0, EFD_NONBLOCK);
	ck_assert_int_ge(efd, 0);
	reactor_defer_init(&fd_defer, fd_defer_fn, NULL);
	ck_assert_int_eq(reactor_add_fd(&R2, &rfd, efd, EPOLLIN, ready_fd_cb,
					&efd), 0);
	ck_assert_int_eq(write(efd, &one, sizeof(one)), 8);	/* told first */
	reactor_join_init(&j, &R, barrier_fn, NULL);
	reactor_barrier(rs, 1, &part, &j);
	reactor_join_done(&j);
	pthread_create(&th, NULL, run_r2, NULL);
	run_guarded();
	reactor_stop(&R2);
	pthread_join(th, NULL);
	ck_assert_int_gt(fd_seq, 0);
	ck_assert_int_gt(fd_defer_seq, fd_seq);
	ck_assert_int_gt(barrier_seq, fd_defer_seq);
	reactor_del_fd(&R2, &rfd);
	close(efd);
	reactor_fini(&R2);
}
END_TEST

/* Every case on epoll; on io_uring the ones whose wait goes through the
 * engine (the timerfd's wake-up, fds added, changed and deleted, the
 * mailbox, a pass that must not block): the heap, the timers' arithmetic,
 * the deferred calls' rounds, joins and barriers are the same code on
 * both, and each case costs a forked process (LeakSanitizer at its exit),
 * the time CI counts. */
static void add_core(Suite *s, const char *name, void (*setup_fn)(void),
		     bool all)
{
	TCase *tc = tcase_create(name);

	tcase_add_checked_fixture(tc, setup_fn, teardown);
	tcase_set_timeout(tc, 20);
	harness_add(tc, timers_in_order);
	harness_add(tc, defer_next_pass);
	harness_add(tc, post_from_thread);
	harness_add(tc, del_fd_in_callback);
	harness_add(tc, mod_fd);
	if (all) {
		harness_add(tc, barrier_after_what_was_pending);
		harness_add(tc, timer_ns_never_early_in_order_with_ms);
		harness_add(tc, timer_ns_cancel);
		harness_add(tc, timer_ns_rearm_earlier_and_later);
		harness_add(tc, timer_later_costs_no_timerfd_set);
		harness_add(tc, timer_armed_from_a_timer);
		harness_add(tc, heap_pops_in_key_order_after_remove_and_rekey);
		harness_add(tc, deferred_batching);
		harness_add(tc, join_runs_once_on_home_after_last_part);
	}
	suite_add_tcase(s, tc);
}

static Suite *reactor_suite(void)
{
	Suite *s = suite_create("reactor");
	char why[200];

	add_core(s, "epoll", setup, true);
	if (reactor_uring_probe(why, sizeof(why)) == 0) {
		add_core(s, "uring", setup_uring, false);
	} else {
		fprintf(stderr, "# io_uring cases skipped: %s\n", why);
	}
	return s;
}

int main(int argc, char **argv)
{
	return harness_main(argc, argv, reactor_suite);
}
