/*
 * A cdrom LUN's disc changed live (live_priv.h): tcqctl set LUN
 * path=OTHER.iso, or path= for an empty drive. The LUN and its nexuses
 * stay; only its backend changes, as a drive's disc does:
 *  1. the old disc goes at once (scsi/mmc.h: empty, so commands that need
 *     the medium get NOT READY; a MediaRemoval event);
 *  2. every reactor in turn lets go of the old backend's queue once the
 *     reads still in flight on it are done (bdev_queue_put), looking again
 *     every few milliseconds;
 *  3. on reactor 0 the new backend takes its place (under the write
 *     lock: tcqctl and the metrics read lun->bdev there), the old one is
 *     closed, and the new disc comes (ready, a NewMedia event, 06/28/00
 *     to every nexus).
 * The new image was opened while planning, so nothing here can fail.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tcq/log.h"
#include "tcq/reactor.h"
#include "backend/bdev.h"
#include "scsi/lun.h"
#include "scsi/mmc.h"
#include "target/config.h"
#include "target/config_keys.h"
#include "target/live.h"
#include "target/live_priv.h"
#include "target/target.h"

#define MEDIA_RETRY_MS 5

struct media_change {
	struct lun *l;
	struct bdev *old, *nb;
	int pending;			/* reactors still using old (atomic) */
	void (*done)(void *arg);	/* on reactor 0, once changed */
	void *arg;
};

struct media_step {
	struct media_change *mc;
	struct reactor *r;
	struct reactor_timer retry;
};

bool live_media_only(const struct cfg *o, const struct cfg_lun *ol,
		     const struct cfg *n, const struct cfg_lun *nl)
{
	bool path = false;

	if (ol->type != CFG_LUN_CDROM || nl->type != CFG_LUN_CDROM)
		return false;
	for (size_t i = 0; i < cfg_nkeys; i++) {
		const struct cfg_key *k = &cfg_keys[i];

		if (k->section != CFG_LUN || k->live != CFG_RECREATE ||
		    cfg_key_equal(k, o, ol, n, nl))
			continue;
		if (strcmp(k->name, "path"))
			return false;	/* something else re-creates it */
		path = true;
	}
	return path;
}

int live_media_prepare(struct target *t, struct lun *l,
		       const struct cfg_lun *nl, bool force, struct bdev **out,
		       char *err, size_t errlen)
{
	*out = NULL;
	if (!force && mmc_prevented(l)) {
		snprintf(err, errlen, "LUN %s/%u: an initiator prevents medium "
			 "removal (PREVENT ALLOW MEDIUM REMOVAL): the disc is "
			 "not changed (--force changes it)", t->dev.name,
			 nl->id);
		return -1;
	}
	return cfg_open_lun_bdev(t, nl, out, err, errlen);
}

static void media_finish(void *arg)	/* on reactor 0 */
{
	struct media_change *mc = arg;
	struct lun *l = mc->l;

	if (__atomic_sub_fetch(&mc->pending, 1, __ATOMIC_ACQ_REL))
		return;
	tcqd_write_lock();
	__atomic_store_n(&l->bdev, mc->nb, __ATOMIC_RELEASE);
	tcqd_write_unlock();
	if (mc->old)
		bdev_close(mc->old);
	if (mc->nb)
		mmc_medium_insert(l, mc->nb->size / MMC_BLOCK_SIZE);
	else
		__atomic_store_n(&l->nblocks, 0, __ATOMIC_RELEASE);
	log_info("%s/%llu: disc %s", l->dev ? l->dev->name : "?",
		 (unsigned long long)l->id,
		 mc->nb ? mc->nb->spec : "taken out");
	if (mc->done)
		mc->done(mc->arg);
	free(mc);
}

static void media_try(struct media_step *st)
{
	struct media_change *mc = st->mc;
	struct reactor *r0 = live_reactor(0);

	if (bdev_queue_put(mc->old, st->r) != 0) {
		reactor_timer_arm(st->r, &st->retry, MEDIA_RETRY_MS);
		return;
	}
	free(st);
	if (reactor_self() == r0 || reactor_post(r0, media_finish, mc))
		media_finish(mc);
}

static void media_retry(struct reactor_timer *t)
{
	media_try(t->arg);
}

static void media_start(void *arg)	/* on the step's reactor */
{
	media_try(arg);
}

void live_media_change(struct lun *l, struct bdev *nb,
		       void (*done)(void *arg), void *arg)
{
	struct media_change *mc = calloc(1, sizeof(*mc));
	int n = live_nreactors();

	mmc_medium_remove(l);	/* from now on nothing new reaches old */
	if (!mc) {
		/* Keeping the old backend open is safe; closing it under
		 * a read is not. The drive stays empty. */
		log_err("out of memory: LUN %llu's disc is out but not "
			"changed", (unsigned long long)l->id);
		if (nb)
			bdev_close(nb);
		if (done)
			done(arg);
		return;
	}
	mc->l = l;
	mc->old = l->bdev;
	mc->nb = nb;
	mc->done = done;
	mc->arg = arg;
	if (!mc->old) {		/* an empty drive: nothing to let go of */
		mc->pending = 1;
		media_finish(mc);
		return;
	}
	mc->pending = n;
	for (int i = 0; i < n; i++) {
		struct media_step *st = calloc(1, sizeof(*st));

		if (!st) {	/* never reaches 0: the old one is kept */
			log_err("out of memory: LUN %llu's disc is out but "
				"not changed", (unsigned long long)l->id);
			continue;
		}
		st->mc = mc;
		st->r = live_reactor(i);
		reactor_timer_init(&st->retry, media_retry, st);
		if (i == 0) {
			media_start(st);
		} else if (reactor_post(st->r, media_start, st) < 0) {
			free(st);	/* that reactor is gone */
			media_finish(mc);
		}
	}
}
