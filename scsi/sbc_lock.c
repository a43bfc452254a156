/*
 * LBA range lock of a LUN: COMPARE AND WRITE, ORWRITE and WRITE ATOMIC
 * must not see another write land between their read and their write,
 * whatever session or reactor that write comes from (SBC-3 5.2, 4.29).
 *
 * The common case costs plain writes two atomic operations: they count
 * themselves in wr_fast and proceed while no exclusive holder exists. An
 * exclusive holder first publishes itself (excl++), which sends newer
 * plain writes to the slow path (ranges in lists under lun->lock), then
 * waits until the lock-free writers already in flight have drained. Since
 * none join wr_fast for good while excl is set, the drain always ends.
 */
#include <stdlib.h>
#include "tcq/log.h"
#include "tcq/reactor.h"
#include "scsi/lun.h"
#include "scsi/sbc_priv.h"

struct sbc_lun *sbc_lun_new(void)
{
	struct sbc_lun *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	list_init(&s->held);
	list_init(&s->waiting);
	list_init(&s->draining);
	return s;
}

void sbc_lun_free(struct sbc_lun *s)
{
	if (!s)
		return;
	free(s->prevent);
	free(s->san.buf);	/* a SANITIZE cut short by shutdown */
	free(s);
}

static bool overlaps(const struct tcq_task *a, const struct tcq_task *b)
{
	return a->lock.lo < b->lock.hi && b->lock.lo < a->lock.hi;
}

/* Whether t (not yet holding) may take its range now. */
static bool can_take(struct sbc_lun *s, struct tcq_task *t, bool excl)
{
	struct list_node *pos;

	list_for_each(pos, &s->held) {
		struct tcq_task *o = list_entry(pos, struct tcq_task, lock.node);

		if ((excl || o->lock.mode == LK_EXCL) && overlaps(o, t))
			return false;
	}
	return true;
}

static void resume_cb(void *arg)
{
	struct tcq_task *t = arg;

	t->lock.resume(t);
}

/* Hands t back to its reactor thread. Called under lun->lock: posting
 * takes only the mailbox lock, and the task runs later, outside ours. */
static void wake(struct tcq_task *t)
{
	if (reactor_post(t->lock.r, resume_cb, t) < 0)
		log_err("sbc: out of memory resuming a task that waited for "
			"an LBA range");
}

/* Under lun->lock: an exclusive holder that still waits for lock-free
 * writers parks in draining; else it holds its range. Returns true if t
 * may run now. */
static bool grant(struct sbc_lun *s, struct tcq_task *t, bool excl)
{
	t->lock.mode = excl ? LK_EXCL : LK_SHARED;
	if (excl && atomic_load(&s->wr_fast) > 0) {
		list_add_tail(&t->lock.node, &s->draining);
		return false;
	}
	list_add_tail(&t->lock.node, &s->held);
	return true;
}

/* Under lun->lock: resumes drained exclusive holders, then waiters whose
 * ranges are now free, in arrival order. */
static void wake_ready(struct sbc_lun *s)
{
	struct list_node *pos, *tmp;

	if (atomic_load(&s->wr_fast) == 0) {
		list_for_each_safe(pos, tmp, &s->draining) {
			list_del(pos);
			list_add_tail(pos, &s->held);
			wake(list_entry(pos, struct tcq_task, lock.node));
		}
	}
	list_for_each_safe(pos, tmp, &s->waiting) {
		struct tcq_task *w = list_entry(pos, struct tcq_task, lock.node);
		bool excl = w->lock.mode == LK_EXCL;

		if (!can_take(s, w, excl))
			continue;
		list_del(pos);
		if (grant(s, w, excl))
			wake(w);
	}
}

static void fast_release(struct lun *l)
{
	struct sbc_lun *s = l->sbc;

	if (atomic_fetch_sub(&s->wr_fast, 1) == 1 && atomic_load(&s->excl)) {
		pthread_mutex_lock(&l->lock);
		wake_ready(s);
		pthread_mutex_unlock(&l->lock);
	}
}

int sbc_lock(struct tcq_task *t, uint64_t lba, uint64_t blocks, bool excl,
	     void (*resume)(struct tcq_task *t))
{
	struct lun *l = t->lun;
	struct sbc_lun *s = l->sbc;
	int rc = 0;

	if (!s || !blocks)
		return 0;
	t->lock.lo = lba;
	t->lock.hi = lba + blocks;
	t->lock.r = reactor_self();
	t->lock.resume = resume;
	if (!excl) {
		atomic_fetch_add(&s->wr_fast, 1);
		if (atomic_load(&s->excl) == 0) {
			t->lock.mode = LK_FAST;
			return 0;
		}
		fast_release(l);	/* an exclusive holder exists */
	}
	pthread_mutex_lock(&l->lock);
	if (excl)
		atomic_fetch_add(&s->excl, 1);
	if (!can_take(s, t, excl)) {
		t->lock.mode = excl ? LK_EXCL : LK_SHARED;
		list_add_tail(&t->lock.node, &s->waiting);
		rc = 1;
	} else if (!grant(s, t, excl)) {
		rc = 1;		/* resumed once the drain ends */
	}
	pthread_mutex_unlock(&l->lock);
	return rc;
}

void sbc_unlock(struct tcq_task *t)
{
	struct lun *l = t->lun;
	struct sbc_lun *s = l ? l->sbc : NULL;
	uint8_t mode = t->lock.mode;

	t->lock.mode = LK_NONE;
	if (!s || mode == LK_NONE)
		return;
	if (mode == LK_FAST) {
		fast_release(l);
		return;
	}
	pthread_mutex_lock(&l->lock);
	list_del(&t->lock.node);
	if (mode == LK_EXCL)
		atomic_fetch_sub(&s->excl, 1);
	wake_ready(s);
	pthread_mutex_unlock(&l->lock);
}
