/* The harness's main (checks chosen by name) and its reactor driver. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include "tests/unit/harness.h"

/* ---- checks by name ---------------------------------------------------- */

static char **wanted;		/* names from the command line, or NULL */
static int nwanted;
static bool *matched;

void harness_add(TCase *tc, const TTest *t)
{
	if (!wanted) {
		tcase_add_test(tc, t);
		return;
	}
	for (int i = 0; i < nwanted; i++)
		if (!strcmp(wanted[i], t->name)) {
			matched[i] = true;
			tcase_add_test(tc, t);
			return;
		}
}

int harness_main(int argc, char **argv, Suite *(*build)(void))
{
	bool seen[argc > 1 ? argc : 1];
	Suite *s;
	SRunner *sr;
	int failed;

	memset(seen, 0, sizeof(seen));
	if (argc > 1) {
		wanted = argv + 1;
		nwanted = argc - 1;
		matched = seen;
	}
	s = build();
	sr = srunner_create(s);
	failed = 0;
	for (int i = 0; i < nwanted; i++)
		if (!matched[i]) {
			/* A check asked for and not run must not pass. */
			fprintf(stderr, "%s: no check named '%s'\n", argv[0],
				wanted[i]);
			failed++;
		}
	if (!failed) {
		srunner_run_all(sr, CK_ENV);
		failed = srunner_ntests_failed(sr);
	}
	srunner_free(sr);
	wanted = NULL;
	nwanted = 0;
	return failed ? 1 : 0;
}

/* ---- the reactor, guarded ------------------------------------------------ */

struct watchdog {
	struct reactor *r;
	bool fired;
};

static void watchdog_fired(struct reactor_timer *t)
{
	struct watchdog *w = t->arg;

	w->fired = true;
	reactor_stop(w->r);
}

static void run_guarded(struct reactor *r, const bool *done, unsigned ms)
{
	struct watchdog w = { .r = r };
	struct reactor_timer tm;

	reactor_timer_init(&tm, watchdog_fired, &w);
	reactor_timer_arm(r, &tm, ms);
	do
		reactor_run(r);
	while (done && !*done && !w.fired);
	reactor_timer_cancel(r, &tm);
	ck_assert_msg(!w.fired, "the reactor was still busy after %u ms", ms);
}

void harness_run_until(struct reactor *r, const bool *done, unsigned ms)
{
	run_guarded(r, done, ms);
}

void harness_run_guarded(struct reactor *r, unsigned ms)
{
	run_guarded(r, NULL, ms);
}

/* ---- a reactor thread ---------------------------------------------------- */

static void *thread_main(void *arg)
{
	reactor_run(arg);
	return NULL;
}

void harness_thread_start(struct harness_thread *h, struct reactor *r)
{
	h->r = r;
	ck_assert_int_eq(pthread_create(&h->th, NULL, thread_main, r), 0);
}

struct call {
	void (*fn)(void *);
	void *arg;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool done;
};

static void call_tramp(void *arg)
{
	struct call *c = arg;

	c->fn(c->arg);
	pthread_mutex_lock(&c->lock);
	c->done = true;
	pthread_cond_signal(&c->cond);
	pthread_mutex_unlock(&c->lock);
}

void harness_call_on(struct reactor *r, void (*fn)(void *), void *arg)
{
	struct call c = { .fn = fn, .arg = arg };
	struct timespec until;
	int rc = 0;

	pthread_mutex_init(&c.lock, NULL);
	pthread_cond_init(&c.cond, NULL);
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += HARNESS_WATCHDOG_MS / 1000;
	ck_assert_int_eq(reactor_post(r, call_tramp, &c), 0);
	pthread_mutex_lock(&c.lock);
	while (!c.done && rc != ETIMEDOUT)
		rc = pthread_cond_timedwait(&c.cond, &c.lock, &until);
	pthread_mutex_unlock(&c.lock);
	/* Timed out, c stays posted: the process must not go on. */
	ck_assert_msg(c.done, "the reactor thread did not run the call");
	pthread_cond_destroy(&c.cond);
	pthread_mutex_destroy(&c.lock);
}

struct last_call {
	struct reactor *r;
	void (*fn)(void *);
	void *arg;
};

static void stop_tramp(void *arg)
{
	struct last_call *l = arg;

	if (l->fn)
		l->fn(l->arg);
	reactor_stop(l->r);
}

void harness_thread_stop(struct harness_thread *h, void (*last)(void *),
			 void *arg)
{
	struct last_call l = { .r = h->r, .fn = last, .arg = arg };

	ck_assert_int_eq(reactor_post(h->r, stop_tramp, &l), 0);
	pthread_join(h->th, NULL);
}
