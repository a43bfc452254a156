/* Logical block provisioning: resource counts and the soft threshold
 * (see thin.h). */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tcq/byteorder.h"
#include "tcq/log.h"
#include "tcq/reactor.h"
#include "tcq/scsi_proto.h"
#include "backend/bdev.h"
#include "scsi/lun.h"
#include "scsi/thin.h"
#include "scsi/ua.h"

unsigned thin_check_ms = THIN_CHECK_MS;

struct thin_lun {
	struct lun *l;
	uint8_t exponent;	/* THRESHOLD EXPONENT */
	unsigned pct;		/* thin_threshold; 0: no threshold */
	uint64_t set_bytes;	/* bytes in a threshold set */
	uint64_t cap_bytes;	/* the LUN's capacity */
	uint32_t count;		/* THRESHOLD COUNT, in sets */
	uint64_t reach_bytes;	/* allocation that reaches the threshold */
	uint64_t rearm_bytes;	/* below this it re-arms */
	bool reached;		/* notified for this crossing (lun->lock) */
	/* The pending check: armed by the first write-class completion on
	 * some reactor, fired there THIN_CHECK_MS later. */
	atomic_bool scheduled;
	struct reactor *timer_r;
	struct reactor_timer timer;
};

/* Compares the allocation with the threshold; establishes the unit
 * attention for every nexus on the way up, re-arms on the way down. */
static void evaluate(struct thin_lun *tl, uint64_t allocated)
{
	struct lun *l = tl->l;
	bool fired = false;

	if (!tl->pct)
		return;
	pthread_mutex_lock(&l->lock);
	/* LBPERE 0 (MODE SELECT): no notification; a threshold reached
	 * meanwhile notifies once it is 1 again. */
	if (!l->lbpere) {
		pthread_mutex_unlock(&l->lock);
		return;
	}
	if (!tl->reached && allocated >= tl->reach_bytes) {
		tl->reached = fired = true;
		ua_establish_match_locked(l, NULL, NULL,
			ASC_THIN_PROVISIONING_SOFT_THRESHOLD_REACHED);
	} else if (tl->reached && allocated < tl->rearm_bytes) {
		tl->reached = false;
	}
	pthread_mutex_unlock(&l->lock);
	if (fired)
		log_warn("LUN %llu: %llu of %llu bytes allocated: soft "
			 "threshold of %u%% reached",
			 (unsigned long long)l->id,
			 (unsigned long long)allocated,
			 (unsigned long long)tl->cap_bytes, tl->pct);
}

static int check(struct thin_lun *tl, uint64_t *allocated,
		 uint64_t *available)
{
	int rc = bdev_space(tl->l->bdev, allocated, available);

	if (rc == 0)
		evaluate(tl, *allocated);
	return rc;
}

static void timer_fired(struct reactor_timer *t)
{
	struct thin_lun *tl = t->arg;
	uint64_t a, v;

	/* Writes completing from now on schedule the next check. */
	atomic_store(&tl->scheduled, false);
	check(tl, &a, &v);
}

void thin_write_done(struct lun *l)
{
	struct thin_lun *tl = l->thin;
	struct reactor *r = reactor_self();

	if (!r || atomic_exchange(&tl->scheduled, true))
		return;
	tl->timer_r = r;
	reactor_timer_arm(r, &tl->timer, thin_check_ms);
}

static uint32_t sets_up(const struct thin_lun *tl, uint64_t bytes)
{
	uint64_t n = (bytes + tl->set_bytes - 1) / tl->set_bytes;

	return n > UINT32_MAX ? UINT32_MAX : (uint32_t)n;
}

int thin_lun_setup(struct lun *l, unsigned pct, char *err, size_t errlen)
{
	struct bdev *b = l->bdev;
	uint64_t a, v;
	struct thin_lun *tl;

	if (!b || !b->thin) {
		if (pct)
			snprintf(err, errlen, "the LUN is not thin provisioned "
				 "(thin = no, or a block device)");
		return pct ? -1 : 0;
	}
	if (bdev_space(b, &a, &v) < 0 || !l->nblocks) {
		if (pct)
			snprintf(err, errlen, "backend %s cannot tell how much "
				 "of the LUN is allocated", b->ops->name);
		return pct ? -1 : 0;
	}
	tl = calloc(1, sizeof(*tl));
	if (!tl) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	tl->l = l;
	tl->pct = pct;
	tl->exponent = 1;
	while (tl->exponent < 63 &&
	       ((l->nblocks - 1) >> tl->exponent) + 1 > THIN_MAX_SETS)
		tl->exponent++;
	tl->set_bytes = (uint64_t)l->block_size << tl->exponent;
	tl->cap_bytes = l->nblocks * l->block_size;
	if (pct) {
		/* pct% of the capacity, in blocks, then in sets (rounded up:
		 * the threshold is never below what was asked). */
		uint64_t blocks = (l->nblocks * pct + 99) / 100;
		uint64_t sets = ((blocks - 1) >> tl->exponent) + 1;

		tl->count = (uint32_t)sets;
		tl->reach_bytes = sets * tl->set_bytes;
		tl->rearm_bytes = (sets - 1) * tl->set_bytes;
	}
	atomic_init(&tl->scheduled, false);
	reactor_timer_init(&tl->timer, timer_fired, tl);
	l->thin = tl;
	l->thin_warn = pct != 0;
	return 0;
}

void thin_lun_free(struct lun *l)
{
	struct thin_lun *tl = l->thin;

	if (!tl)
		return;
	if (tl->timer_r && reactor_timer_armed(&tl->timer))
		reactor_timer_cancel(tl->timer_r, &tl->timer);
	free(tl);
	l->thin = NULL;
	l->thin_warn = false;
}

void thin_lun_quiesce(struct lun *l, struct reactor *r)
{
	struct thin_lun *tl = l->thin;

	if (tl && tl->timer_r == r && reactor_timer_armed(&tl->timer))
		reactor_timer_cancel(r, &tl->timer);
}

void thin_lun_reset(struct lun *l)
{
	struct thin_lun *tl = l->thin;

	if (!tl)
		return;
	pthread_mutex_lock(&l->lock);
	tl->reached = false;
	pthread_mutex_unlock(&l->lock);
}

uint8_t thin_exponent(const struct lun *l)
{
	return l->thin ? l->thin->exponent : 0;
}

unsigned thin_threshold_pct(const struct lun *l)
{
	return l->thin ? l->thin->pct : 0;
}

int thin_counts(struct lun *l, uint32_t *used, uint32_t *available)
{
	struct thin_lun *tl = l->thin;
	uint64_t a, v;
	int rc;

	*used = *available = 0;
	if (!tl)
		return -EOPNOTSUPP;
	rc = check(tl, &a, &v);
	if (rc < 0)
		return rc;
	*used = sets_up(tl, a);
	/* What the LUN could still map: the file system's free space, but
	 * never more than the LUN's unmapped part. */
	uint64_t room = a < tl->cap_bytes ? tl->cap_bytes - a : 0;
	uint64_t n = (v < room ? v : room) / tl->set_bytes;
	*available = n > UINT32_MAX ? UINT32_MAX : (uint32_t)n;
	return 0;
}

uint32_t thin_mode_page(const struct lun *l, int pc, uint8_t *p)
{
	const struct thin_lun *tl = l->thin;

	if (!tl)
		return 0;
	memset(p, 0, THIN_MODE_PAGE_LEN);
	p[0] = 0x40 | THIN_MODE_PAGE;	/* PS 0, SPF 1 */
	p[1] = THIN_MODE_SUBPAGE;
	put_be16(p + 2, THIN_MODE_PAGE_LEN - 4);
	/* SITUA 0: the notification goes to every I_T nexus. Nothing is
	 * changeable: the threshold comes from tcqd.conf. */
	if (pc == 1)
		return THIN_MODE_PAGE_LEN;
	uint8_t *d = p + THIN_UA_INFO;
	/* ENABLED, THRESHOLD TYPE 000b (soft), THRESHOLD ARMING 001b
	 * (armed increasing); THRESHOLD RESOURCE 02h: used LBA mapping
	 * resources (SBC-3 table 7). */
	d[0] = (tl->pct ? 0x80 : 0) | 0x01;
	d[1] = 0x02;
	put_be32(d + 4, tl->count);
	return THIN_MODE_PAGE_LEN;
}
