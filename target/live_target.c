/*
 * Letting go of a target removed live (live_priv.h). It is out of
 * tcqd->targets already, so no new login finds it. Its sessions are
 * asked to log out (an Async Message, RFC 7143 11.9.1) and closed if
 * they have not within the time given; once nothing holds the target (no
 * login in progress, no session), its LUNs are released like LUNs
 * removed alone, and it is freed.
 */
#include <stdlib.h>
#include "tcq/log.h"
#include "tcq/reactor.h"
#include "scsi/lun.h"
#include "target/config.h"
#include "target/live_priv.h"
#include "target/session.h"
#include "target/target.h"

#define LOGOUT_S 2		/* Parameter3: time the initiator has */
#define CLOSE_AFTER_MS 4000	/* then the connections are closed */
#define POLL_MS 20

struct target_release {
	struct target *t;
	struct reactor_timer poll;
	uint64_t asked_ns;
	bool closed;
	int luns;			/* LUNs still being released */
	void (*done)(void *arg);
	void *arg;
};

static void target_free(struct target_release *tr)
{
	log_info("target %s: removed", tr->t->dev.name);
	/* Its LUNs are gone: cfg_destroy_target frees the rest. */
	tcqd_write_lock();	/* see release_finish (live_lun.c) */
	cfg_destroy_target(tr->t);
	tcqd_write_unlock();
	if (tr->done)
		tr->done(tr->arg);
	free(tr);
}

static void lun_gone(void *arg)
{
	struct target_release *tr = arg;

	if (--tr->luns == 0)
		target_free(tr);
}

static void release_luns(struct target_release *tr)
{
	struct sdev *dev = &tr->t->dev;
	int n = sdev_nluns(dev);
	struct lun *ls[TCQ_MAX_LUNS];
	int k = 0;

	for (int i = 0; i < n; i++) {
		struct lun *l = sdev_lun(dev, (uint64_t)i);

		if (l) {
			sdev_set_lun(dev, (unsigned)i, NULL);
			ls[k++] = l;
		}
	}
	if (!k) {
		target_free(tr);
		return;
	}
	tr->luns = k;
	for (int i = 0; i < k; i++)
		live_lun_release(ls[i], true, lun_gone, tr);
}

static void target_poll(struct reactor_timer *tm)
{
	struct target_release *tr = tm->arg;

	if (target_refs(tr->t) == 0 && sess_count_target(tr->t) == 0) {
		release_luns(tr);
		return;
	}
	if (!tr->closed &&
	    reactor_now_ns() - tr->asked_ns > CLOSE_AFTER_MS * 1000000ull) {
		log_warn("target %s: sessions did not log out in %d s; closing "
			 "them", tr->t->dev.name, CLOSE_AFTER_MS / 1000);
		sess_close_target(tr->t, NULL, "target removed");
		tr->closed = true;
	}
	reactor_timer_arm(live_reactor(0), &tr->poll, POLL_MS);
}

void live_target_release(struct target *t, void (*done)(void *arg),
			 void *arg)
{
	struct target_release *tr = calloc(1, sizeof(*tr));

	if (!tr) {
		log_err("out of memory: target %s is withdrawn but kept",
			t->dev.name);
		if (done)
			done(arg);
		return;
	}
	tr->t = t;
	tr->done = done;
	tr->arg = arg;
	tr->asked_ns = reactor_now_ns();
	reactor_timer_init(&tr->poll, target_poll, tr);
	if (sess_count_target(t))
		sess_logout_target(t, LOGOUT_S);
	target_poll(&tr->poll);
}
