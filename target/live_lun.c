/*
 * Letting go of a LUN withdrawn live (live.h): once the LUN is out of its
 * target's map, every reactor in turn has its sessions leave it (after
 * aborting their tasks, with force) and closes its backend queue; when
 * all have, reactor 0 destroys it. A reactor that still has tasks or I/O
 * on the LUN looks again a few milliseconds later.
 */
#include <stdlib.h>
#include "tcq/log.h"
#include "tcq/reactor.h"
#include "backend/bdev.h"
#include "scsi/lun.h"
#include "scsi/thin.h"
#include "target/config.h"
#include "target/live.h"
#include "target/live_priv.h"
#include "scsi/tmf.h"
#include "target/session.h"
#include "target/target.h"

#define RELEASE_RETRY_MS 5

struct release {
	struct lun *l;
	int pending;			/* reactors still holding it (atomic) */
	void (*done)(void *arg);	/* on reactor 0, once destroyed */
	void *arg;
};

/* One reactor's part. */
struct release_step {
	struct release *rel;
	struct reactor *r;
	struct reactor_timer retry;
};

static void release_finish(void *arg)	/* on reactor 0 */
{
	struct release *rel = arg;

	if (__atomic_sub_fetch(&rel->pending, 1, __ATOMIC_ACQ_REL))
		return;
	log_info("%s/%llu: removed", rel->l->dev ? rel->l->dev->name : "?",
		 (unsigned long long)rel->l->id);
	/* Readers off the reactors (the metrics endpoint) walk LUN maps
	 * under the read lock: none may be inside this LUN as it goes. */
	tcqd_write_lock();
	cfg_destroy_lun(rel->l);
	tcqd_write_unlock();
	if (rel->done)
		rel->done(rel->arg);
	free(rel);
}

static void release_try(struct release_step *st)
{
	struct release *rel = st->rel;
	unsigned busy;

	busy = sess_release_lun(st->r, rel->l);
	if (!busy && (!rel->l->bdev || bdev_queue_put(rel->l->bdev, st->r) == 0)) {
		struct reactor *r0 = live_reactor(0);

		thin_lun_quiesce(rel->l, st->r);

		free(st);
		if (reactor_self() == r0 || reactor_post(r0, release_finish, rel))
			release_finish(rel);
		return;
	}
	reactor_timer_arm(st->r, &st->retry, RELEASE_RETRY_MS);
}

static void release_retry(struct reactor_timer *t)
{
	release_try(t->arg);
}

static void release_start(void *arg)	/* on the step's reactor */
{
	release_try(arg);
}

/* Every reactor lets go of the LUN, each in turn (on reactor 0). */
static void release_spread(void *arg)
{
	struct release *rel = arg;
	struct lun *l = rel->l;
	int n = rel->pending;

	for (int i = 0; i < n; i++) {
		struct release_step *st = calloc(1, sizeof(*st));

		if (!st) {
			log_err("out of memory: LUN %llu is withdrawn but kept",
				(unsigned long long)l->id);
			continue;	/* never reaches 0: kept */
		}
		st->rel = rel;
		st->r = live_reactor(i);
		reactor_timer_init(&st->retry, release_retry, st);
		if (i == 0 || reactor_post(st->r, release_start, st) < 0) {
			if (i == 0) {
				release_start(st);
			} else {
				free(st);	/* that reactor is gone */
				release_finish(rel);
			}
		}
	}
}

void live_lun_release(struct lun *l, bool abort, void (*done)(void *arg),
		      void *arg)
{
	struct release *rel = calloc(1, sizeof(*rel));

	if (!rel) {
		/* Leaking the LUN is safe; freeing it while used is not. */
		log_err("out of memory: LUN %llu is withdrawn but kept",
			(unsigned long long)l->id);
		if (done)
			done(arg);
		return;
	}
	rel->l = l;
	rel->pending = live_nreactors();
	rel->done = done;
	rel->arg = arg;
	/* By force: its tasks are aborted first, as a LUN reset aborts
	 * other nexuses' tasks (TAS as l says), and gone before. */
	if (abort)
		tmf_abort_lun(l, release_spread, rel);
	else
		release_spread(rel);
}

unsigned live_lun_tasks(struct lun *l)
{
	return lun_tasks(l);
}
