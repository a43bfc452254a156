/*
 * Applying a new configuration to the running daemon (live.h). Three
 * steps: plan (compare the running cfg with the new one key by key and
 * prepare what can fail: backends opened, portals bound; any refusal
 * undoes the preparations), commit (nothing fails any more: lists and
 * settings change under the write lock, LUNs are published or
 * withdrawn, initiators are told), release (what was let go of is freed
 * reactor by reactor, live_lun.c and live_target.c; then done runs).
 */
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <openssl/crypto.h>
#include "tcq/log.h"
#include "tcq/reactor.h"
#include "tcq/scsi_proto.h"
#include "backend/bdev.h"
#include "scsi/lun.h"
#include "scsi/pr.h"
#include "scsi/qos.h"
#include "scsi/ua.h"
#include "target/config.h"
#include "target/config_keys.h"
#include "target/initiator.h"
#include "target/live.h"
#include "target/live_priv.h"
#include "target/portal.h"
#include "target/session.h"
#include "target/target.h"

static struct {
	struct reactor **rs;
	int n;
	int busy;			/* changes still releasing */
	struct portal **retired;	/* removed portals: connections may
					 * still point at them */
	int nretired;
} live;

struct reactor *live_reactor(int i)
{
	return live.rs[i];
}

int live_nreactors(void)
{
	return live.n;
}

void live_init(struct reactor **rs, int n)
{
	live.rs = rs;
	live.n = n;
}

bool live_busy(void)
{
	return live.busy > 0;
}

int live_busy_begin(char *err, size_t errlen)
{
	if (live.busy) {
		snprintf(err, errlen, "a change is still being completed; "
			 "try again in a moment");
		return -1;
	}
	live.busy++;
	return 0;
}

void live_busy_end(void)
{
	live.busy--;
}

/* ---- the plan ----------------------------------------------------------- */

/* One LUN slot of a kept target: removed (old), added (new), re-created
 * (both), or changed in place (old, with settings). */
struct lun_change {
	struct target *t;
	unsigned id;
	struct lun *old, *new;
	const struct cfg_lun *cl;	/* its new section */
	bool qd, barrier, wc, tas, resize, lying, cut;	/* lying: flush, fua */
	bool ident;		/* vendor, product, revision */
	bool qos;		/* qos_iops, qos_mbps */
	bool media;		/* a cdrom's disc changes (live_media.c) */
	struct bdev *medium;	/* its new image, opened; NULL: none */
};

struct target_update {
	struct target *t;
	const struct cfg_target *ct;
	bool inits;			/* its [initiator] sections changed: */
	struct tgt_inits *ti;		/* the new ones (before the commit),
					 * then the old ones, to free */
};

struct plan {
	const struct live_opts *o;
	struct cfg *n;
	struct portal **padd, **prm;
	int npadd, nprm;
	struct target **tadd, **trm;
	int ntadd, ntrm;
	struct target_update *tupd;
	int ntupd;
	struct lun_change *lc;
	int nlc;
	bool log_level, discovery_chap;
	char msg[1024];
	size_t msglen;
	/* the release */
	int pending;
	live_done_fn *done;
	void *arg;
};

#define PUSH(arr, n, v) do { \
	void *np_ = realloc((arr), sizeof(*(arr)) * (size_t)((n) + 1)); \
	if (!np_) \
		goto oom; \
	(arr) = np_; \
	(arr)[(n)++] = (v); \
} while (0)

static void note(struct plan *p, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void note(struct plan *p, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (p->msglen + 3 >= sizeof(p->msg))
		return;
	if (p->msglen)
		p->msglen += (size_t)snprintf(p->msg + p->msglen,
					      sizeof(p->msg) - p->msglen, "; ");
	va_start(ap, fmt);
	n = vsnprintf(p->msg + p->msglen, sizeof(p->msg) - p->msglen, fmt, ap);
	va_end(ap);
	if (n > 0)
		p->msglen += (size_t)n;
	if (p->msglen >= sizeof(p->msg))
		p->msglen = sizeof(p->msg) - 1;
}

/* Undoes the preparations of a refused plan. */
static void plan_free(struct plan *p, bool committed)
{
	if (!committed) {
		for (int i = 0; i < p->npadd; i++) {
			portal_unwatch(p->padd[i]);
			portal_free(p->padd[i]);
		}
		for (int i = 0; i < p->ntadd; i++)
			cfg_destroy_target(p->tadd[i]);
		for (int i = 0; i < p->nlc; i++) {
			cfg_destroy_lun(p->lc[i].new);
			if (p->lc[i].medium)
				bdev_close(p->lc[i].medium);
		}
		cfg_free(p->n);
		free(p->n);
	}
	for (int i = 0; i < p->ntupd; i++)
		tinit_free(p->tupd[i].ti);
	free(p->padd);
	free(p->prm);
	free(p->tadd);
	free(p->trm);
	free(p->tupd);
	free(p->lc);
}

/* Whether any key of section sec in the given live class differs;
 * the first such key in *which. */
static bool section_differs(enum cfg_section sec, enum cfg_live live_class,
			    const struct cfg *a, const void *ba,
			    const struct cfg *b, const void *bb,
			    const char **which)
{
	for (size_t i = 0; i < cfg_nkeys; i++) {
		const struct cfg_key *k = &cfg_keys[i];

		if (k->section != sec || k->live != live_class)
			continue;
		if (!cfg_key_equal(k, a, ba, b, bb)) {
			if (which)
				*which = k->name;
			return true;
		}
	}
	return false;
}

static bool key_differs(const char *name, enum cfg_section sec,
			const struct cfg *a, const void *ba,
			const struct cfg *b, const void *bb)
{
	const struct cfg_key *k = cfg_key_find(sec, name);

	return k && !cfg_key_equal(k, a, ba, b, bb);
}

static int plan_global(struct plan *p, const struct cfg *o, char *err,
		       size_t errlen)
{
	const struct cfg *n = p->n;

	for (size_t i = 0; i < cfg_nkeys; i++) {
		const struct cfg_key *k = &cfg_keys[i];

		if (k->section != CFG_GLOBAL ||
		    cfg_key_equal(k, o, &o->set, n, &n->set))
			continue;
		if (k->live != CFG_LIVE) {
			snprintf(err, errlen, "[global] %s changes only with a "
				 "restart of tcqd", k->name);
			return -1;
		}
		if (!strcmp(k->name, "log_level"))
			p->log_level = true;
		else if (!strncmp(k->name, "discovery_", 10))
			p->discovery_chap = true;
		/* listen: plan_portals */
	}
	return 0;
}

/* Running portals are matched to the new listen lines one to one by
 * their configured text (two "127.0.0.1:0" lines are two portals). */
static int plan_portals(struct plan *p, const struct cfg *o, char *err,
			size_t errlen)
{
	const struct cfg *n = p->n;
	bool used[n->nlisten + 1];

	memset(used, 0, sizeof(used));
	for (int i = 0; i < tcqd->nportals; i++) {
		struct portal *pt = tcqd->portals[i];
		bool kept = false;

		for (int j = 0; j < n->nlisten && !kept; j++) {
			if (!used[j] && !strcasecmp(n->listen[j], pt->conf_text))
				used[j] = kept = true;
		}
		if (!kept)
			PUSH(p->prm, p->nprm, pt);
	}
	for (int j = 0; j < n->nlisten; j++) {
		struct portal *pt;

		if (used[j])
			continue;
		/* The portal group of the portals there are (cfg_build). */
		pt = portal_new(n->listen[j], tcqd->nportals ?
				tcqd->portals[0]->tpgt : 1, err, errlen);
		if (!pt)
			return -1;
		if (portal_listen(pt, err, errlen) < 0) {
			portal_free(pt);
			return -1;
		}
		PUSH(p->padd, p->npadd, pt);
	}
	return 0;
oom:
	snprintf(err, errlen, "out of memory");
	return -1;
}

static int refuse_busy_lun(struct plan *p, struct lun *l, const char *why,
			   char *err, size_t errlen)
{
	unsigned n = live_lun_tasks(l);

	if (!n || p->o->force)
		return 0;
	snprintf(err, errlen, "LUN %s/%llu has %u task%s in flight: %s refused "
		 "(--force aborts them)", l->dev->name,
		 (unsigned long long)l->id, n, n == 1 ? "" : "s", why);
	return -1;
}

/* The LUNs of a kept target t: old section oc, new nc. */
static int plan_luns(struct plan *p, struct target *t, const struct cfg *o,
		     const struct cfg_target *oc, const struct cfg_target *nc,
		     char *err, size_t errlen)
{
	struct lun *fresh = NULL;	/* built, not yet in the plan */
	struct bdev *fresh_disc = NULL;	/* opened, not yet in the plan */

	for (unsigned id = 0; id < TCQ_MAX_LUNS; id++) {
		const struct cfg_lun *ol = oc->luns[id], *nl = nc->luns[id];
		struct lun_change c = { .t = t, .id = id, .cl = nl };
		const char *which = NULL;

		if (!ol && !nl)
			continue;
		c.old = ol ? sdev_lun(&t->dev, id) : NULL;
		if (ol && !c.old) {
			snprintf(err, errlen, "LUN %s/%u is not running",
				 t->dev.name, id);
			return -1;
		}
		c.media = ol && nl && live_media_only(o, ol, p->n, nl);
		if (ol && nl && (c.media ||
				 !section_differs(CFG_LUN, CFG_RECREATE, o, ol,
						  p->n, nl, &which))) {
			/* Changed in place, if at all. */
#define DIFF(key) key_differs(key, CFG_LUN, o, ol, p->n, nl)
			c.qd = DIFF("queue_depth") || DIFF("prefetch") ||
			       DIFF("prefetch_max");
			c.barrier = DIFF("barrier");
			c.wc = DIFF("write_cache");
			c.lying = DIFF("flush") || DIFF("fua");
			c.resize = DIFF("size");
			c.cut = DIFF("cut_through");
			c.tas = DIFF("tas");
			c.ident = DIFF("vendor") || DIFF("product") ||
				  DIFF("revision");
			c.qos = DIFF("qos_iops") || DIFF("qos_mbps");
#undef DIFF
			if (c.wc && nl->write_cache && c.old->bdev &&
			    c.old->bdev->write_through) {
				snprintf(err, errlen, "LUN %s/%u: write_cache on: "
					 "the backend has no volatile write cache",
					 t->dev.name, id);
				return -1;
			}
			if (c.resize && nl->thin_threshold) {
				/* Its threshold sets are counted from the size
				 * it was made with (scsi/thin.h). */
				snprintf(err, errlen, "LUN %s/%u has a "
					 "thin_threshold: it is not resized in "
					 "place (remove and add it)", t->dev.name,
					 id);
				return -1;
			}
			if (c.resize && nl->size &&
			    nl->size < c.old->nblocks * c.old->block_size &&
			    !p->o->shrink) {
				snprintf(err, errlen, "LUN %s/%u: size %llu is "
					 "smaller than the LUN (%llu bytes): "
					 "shrinking takes tcqctl lun resize "
					 "--shrink", t->dev.name, id,
					 (unsigned long long)nl->size,
					 (unsigned long long)(c.old->nblocks *
							      c.old->block_size));
				return -1;
			}
			if (c.media && live_media_prepare(t, c.old, nl,
							  p->o->force, &c.medium,
							  err, errlen) < 0)
				return -1;
			fresh_disc = c.medium;
			if (c.qd || c.barrier || c.wc || c.resize || c.lying ||
			    c.tas || c.ident || c.qos || c.media || c.cut)
				PUSH(p->lc, p->nlc, c);
			fresh_disc = NULL;
			continue;
		}
		if (c.old && refuse_busy_lun(p, c.old, nl ? "re-creating it" :
					     "removing it", err, errlen) < 0) {
			if (nl)
				snprintf(err + strlen(err), errlen - strlen(err),
					 "; it is re-created because %s changed",
					 which);
			return -1;
		}
		if (nl) {
			c.new = cfg_build_lun(t, nl, err, errlen);
			if (!c.new)
				return -1;
		}
		fresh = c.new;
		PUSH(p->lc, p->nlc, c);
		fresh = NULL;
	}
	return 0;
oom:
	cfg_destroy_lun(fresh);
	if (fresh_disc)
		bdev_close(fresh_disc);
	snprintf(err, errlen, "out of memory");
	return -1;
}

static int plan_targets(struct plan *p, const struct cfg *o, char *err,
			size_t errlen)
{
	const struct cfg *n = p->n;

	for (int i = 0; i < tcqd->ntargets; i++) {
		struct target *t = tcqd->targets[i], *nt;
		const struct cfg_target *oc = cfg_find_target(o, t->dev.name);
		const struct cfg_target *nc = cfg_find_target(n, t->dev.name);
		const char *which = NULL;
		unsigned ns = sess_count_target(t);

		if (!oc) {
			snprintf(err, errlen, "target %s is not in the running "
				 "configuration", t->dev.name);
			return -1;
		}
		if (nc && !section_differs(CFG_TARGET, CFG_RECREATE, o, oc, n,
					   nc, &which)) {
			struct target_update u = { t, nc, false, NULL };

			u.inits = tinit_differ(o, n, t->dev.name);
			if (u.inits || section_differs(CFG_TARGET, CFG_LIVE, o,
						       oc, n, nc, NULL)) {
				PUSH(p->tupd, p->ntupd, u);
				/* prepared now; plan_free frees it if refused */
				if (u.inits &&
				    tinit_build(n, t->dev.name,
						&p->tupd[p->ntupd - 1].ti, err,
						errlen) < 0)
					return -1;
			}
			if (plan_luns(p, t, o, oc, nc, err, errlen) < 0)
				return -1;
			continue;
		}
		if (ns && !p->o->force) {
			snprintf(err, errlen, "target %s has %u session%s: %s "
				 "refused (--force logs them out)%s%s",
				 t->dev.name, ns, ns == 1 ? "" : "s",
				 nc ? "re-creating it" : "removing it",
				 nc ? "; it is re-created because of " : "",
				 nc ? which : "");
			return -1;
		}
		PUSH(p->trm, p->ntrm, t);
		if (!nc)
			continue;
		if (!(nt = cfg_build_target(nc, &n->set, err, errlen)))
			return -1;
		PUSH(p->tadd, p->ntadd, nt);
		if (tinit_attach(nt, n, err, errlen) < 0)
			return -1;
	}
	for (int i = 0; i < n->ntargets; i++) {
		struct target *nt;

		if (cfg_find_target(o, n->targets[i]->name))
			continue;
		if (!(nt = cfg_build_target(n->targets[i], &n->set, err,
					    errlen)))
			return -1;
		PUSH(p->tadd, p->ntadd, nt);
		if (tinit_attach(nt, n, err, errlen) < 0)
			return -1;
	}
	return 0;
oom:
	snprintf(err, errlen, "out of memory");
	return -1;
}

/* ---- the commit ----------------------------------------------------------- */

static void release_step_done(void *arg)
{
	struct plan *p = arg;

	if (--p->pending)
		return;
	live.busy--;
	if (p->done)
		p->done(p->arg, 0, p->msg);
	plan_free(p, true);
	free(p);
}

/* A re-created LUN's slot is free once the old one is gone. */
struct republish {
	struct plan *p;
	struct lun_change *c;
};

static void announce_luns_changed(struct target *t)
{
	for (int j = 0; j < sdev_nluns(&t->dev); j++) {
		struct lun *l = sdev_lun(&t->dev, (uint64_t)j);

		if (l)
			ua_establish_all(l, ASC_REPORTED_LUNS_CHANGED);
	}
}

static void republish_done(void *arg)
{
	struct republish *rp = arg;
	struct lun_change *c = rp->c;

	sdev_set_lun(&c->t->dev, c->id, c->new);
	announce_luns_changed(c->t);
	release_step_done(rp->p);
	free(rp);
}

static void apply_settings(struct lun_change *c)
{
	struct lun *l = c->old;
	const struct cfg_lun *cl = c->cl;

	/* Each is one store the data path reads relaxed (tcqctl set). */
	if (c->qd && l->bdev) {	/* prefetch's state exists: cannot fail */
		atomic_store_explicit(&l->bdev->queue_depth, cl->queue_depth,
				      memory_order_relaxed);
		bdev_set_prefetch(l->bdev, cfg_lun_prefetch(c->t, cl),
				  cl->prefetch_max);
	}
	if (c->barrier)
		lun_set_barrier(l, (enum lun_barrier)cl->barrier);
	if (c->cut)	/* reads that started keep their way */
		lun_set_cut_off(l, cl->cut_off);
	if (c->lying) {
		__atomic_store_n(&l->flush_ignore, cl->flush_ignore,
				 __ATOMIC_RELAXED);
		__atomic_store_n(&l->fua_ignore, cl->fua_ignore,
				 __ATOMIC_RELAXED);
	}
	/* SPC-4 5.14: MODE PARAMETERS CHANGED (vs MODE SELECT: its lock) */
	if ((c->wc || c->tas) &&
	    lun_set_mode_keys(l, c->wc ? cl->write_cache : -1,
			      c->tas ? cl->tas : -1))
		ua_establish_all(l, ASC_MODE_PARAMETERS_CHANGED);
	/* SPC-4 5.14: a changed standard INQUIRY data (or VPD page 83h's
	 * T10 vendor ID) is reported to every nexus */
	if (c->ident && lun_set_identity(l, cl->vendor, cl->product,
					 cl->revision))
		ua_establish_all(l, ASC_INQUIRY_DATA_HAS_CHANGED);
	/* In place: held commands go at the new rates (all, with none) */
	if (c->qos)
		qos_set_limits(l, cl->qos_iops, cl->qos_mbps);
}

/* Resizes first: the only step of a commit that can still fail. */
static int commit_resizes(struct plan *p, char *err, size_t errlen)
{
	for (int i = 0; i < p->nlc; i++) {
		struct lun_change *c = &p->lc[i];

		if (!c->resize)
			continue;
		if (bdev_resize(c->old->bdev, c->cl->size, p->o->shrink, err,
				errlen) < 0) {
			char m[300];

			snprintf(m, sizeof(m), "%s", err);
			snprintf(err, errlen, "LUN %s/%u: resize: %s",
				 c->t->dev.name, c->id, m);
			return -1;
		}
		note(p, "LUN %s/%u resized to %llu bytes", c->t->dev.name,
		     c->id, (unsigned long long)(c->old->nblocks *
						  c->old->block_size));
	}
	return 0;
}

static void commit_lists(struct plan *p)
{
	struct portal **pv;
	struct target **tv;
	int np = 0, nt = 0;

	pv = calloc((size_t)(tcqd->nportals + p->npadd), sizeof(*pv));
	tv = calloc((size_t)(tcqd->ntargets + p->ntadd + 1), sizeof(*tv));
	if (!pv || !tv) {
		/* Out of memory this late: keep the old arrays, grow none. */
		log_err("live change: out of memory updating the lists");
		free(pv);
		free(tv);
		return;
	}
	tcqd_write_lock();
	for (int i = 0; i < tcqd->nportals; i++) {
		bool gone = false;

		for (int j = 0; j < p->nprm; j++)
			gone |= tcqd->portals[i] == p->prm[j];
		if (!gone)
			pv[np++] = tcqd->portals[i];
	}
	for (int i = 0; i < p->npadd; i++)
		pv[np++] = p->padd[i];
	for (int i = 0; i < tcqd->ntargets; i++) {
		bool gone = false;

		for (int j = 0; j < p->ntrm; j++)
			gone |= tcqd->targets[i] == p->trm[j];
		if (gone)
			tcqd->targets[i]->removed = true;
		else
			tv[nt++] = tcqd->targets[i];
	}
	for (int i = 0; i < p->ntadd; i++)
		tv[nt++] = p->tadd[i];
	free(tcqd->portals);
	tcqd->portals = pv;
	tcqd->nportals = np;
	free(tcqd->targets);
	tcqd->targets = tv;
	tcqd->ntargets = nt;
	for (int i = 0; i < p->ntupd; i++) {
		struct target *t = p->tupd[i].t;
		const struct cfg_target *ct = p->tupd[i].ct;
		struct acl acl;
		char rerr[300];

		snprintf(t->alias, sizeof(t->alias), "%s", ct->alias);
		OPENSSL_cleanse(&t->chap, sizeof(t->chap));
		t->chap = ct->chap;
		t->max_sessions = ct->max_sessions;
		t->max_sessions_per_initiator = ct->max_sessions_per_initiator;
		/* Checked when set; sessions already open stay where they are. */
		if (cfg_parse_redirect(ct->redirect, t->redirect,
				       sizeof(t->redirect),
				       &t->redirect_permanent, rerr,
				       sizeof(rerr)) < 0)
			log_err("target %s: redirect: %s", t->dev.name, rerr);
		/* The old list is freed with the plan, after the lock. */
		if (p->tupd[i].inits)
			p->tupd[i].ti = tinit_replace(t, p->tupd[i].ti);
		acl_init(&acl);
		if (acl_copy(&acl, &ct->acl) == 0) {
			acl_free(&t->acl);
			t->acl = acl;
		} else {
			log_err("target %s: out of memory: its ACL is unchanged",
				t->dev.name);
		}
	}
	if (p->discovery_chap) {
		OPENSSL_cleanse(&tcqd->set.discovery_chap,
				sizeof(tcqd->set.discovery_chap));
		tcqd->set.discovery_chap = p->n->set.discovery_chap;
	}
	memcpy(tcqd->set.isns, p->n->set.isns, sizeof(tcqd->set.isns));
	tcqd_write_unlock();
}

static void commit(struct plan *p)
{
	for (int i = 0; i < p->nprm; i++) {
		portal_unwatch(p->prm[i]);
		note(p, "portal %s removed", p->prm[i]->addr_text);
		struct portal **v = realloc(live.retired, sizeof(*v) *
					    (size_t)(live.nretired + 1));
		if (v) {
			live.retired = v;
			live.retired[live.nretired++] = p->prm[i];
		}
	}
	for (int i = 0; i < p->npadd; i++) {
		if (portal_watch(p->padd[i]) < 0)
			log_err("portal %s: cannot accept on it",
				p->padd[i]->addr_text);
		note(p, "portal %s added", p->padd[i]->addr_text);
	}
	commit_lists(p);
	for (int i = 0; i < p->ntupd; i++)
		note(p, "target %s changed%s", p->tupd[i].t->dev.name,
		     p->tupd[i].inits ? " (its [initiator] sections)" : "");
	if (p->log_level && p->n->log_level >= 0)
		log_set_level((enum log_level)p->n->log_level);
	if (p->discovery_chap)
		note(p, "discovery CHAP changed");
	if (strcmp(tcqd->cfg->set.isns, p->n->set.isns))
		note(p, "iSNS server %s", p->n->set.isns[0] ? p->n->set.isns :
		     "off");
	for (int i = 0; i < p->ntadd; i++)
		note(p, "target %s added", p->tadd[i]->dev.name);

	p->pending = 1;		/* this function's own, dropped at the end */
	for (int i = 0; i < p->nlc; i++) {
		struct lun_change *c = &p->lc[i];

		if (c->old && !c->new && !c->cl) {		/* removed */
			sdev_set_lun(&c->t->dev, c->id, NULL);
			announce_luns_changed(c->t);
			p->pending++;
			live_lun_release(c->old, p->o->force, release_step_done,
					 p);
			note(p, "LUN %s/%u removed", c->t->dev.name, c->id);
		} else if (!c->old && c->new) {		/* added */
			sdev_set_lun(&c->t->dev, c->id, c->new);
			announce_luns_changed(c->t);
			note(p, "LUN %s/%u added", c->t->dev.name, c->id);
		} else if (c->old && c->new) {		/* re-created */
			struct republish *rp = malloc(sizeof(*rp));

			sdev_set_lun(&c->t->dev, c->id, NULL);
			if (!rp) {	/* publish at once; the slot is free
					 * of nothing worse than stale sets */
				log_err("out of memory re-creating a LUN");
				continue;
			}
			rp->p = p;
			rp->c = c;
			p->pending++;
			live_lun_release(c->old, p->o->force, republish_done,
					 rp);
			c->old = NULL;	/* freed by the release */
			note(p, "LUN %s/%u re-created", c->t->dev.name, c->id);
		} else if (c->old) {			/* settings */
			apply_settings(c);
			if (c->media) {
				p->pending++;
				live_media_change(c->old, c->medium,
						  release_step_done, p);
				c->medium = NULL;	/* the LUN's now */
				note(p, "LUN %s/%u disc changed",
				     c->t->dev.name, c->id);
			}
			if (c->qd || c->barrier || c->wc || c->lying ||
			    c->tas || c->ident || c->qos || c->cut)
				note(p, "LUN %s/%u settings changed",
				     c->t->dev.name, c->id);
		}
	}
	for (int i = 0; i < p->ntrm; i++) {
		note(p, "target %s removed", p->trm[i]->dev.name);
		p->pending++;
		live_target_release(p->trm[i], release_step_done, p);
	}
	/* The new configuration runs: what tcqctl save writes. */
	cfg_free(tcqd->cfg);
	free(tcqd->cfg);
	tcqd->cfg = p->n;
	p->n = NULL;
	/* LUNs added were published: the plan no longer owns them. */
	for (int i = 0; i < p->nlc; i++)
		p->lc[i].new = NULL;
	p->ntadd = 0;
	p->npadd = 0;
	live.busy++;
	if (p->msglen)
		log_info("live change: %s", p->msg);
	if (live_commit_notify)
		live_commit_notify();
	release_step_done(p);
}

int live_apply(struct cfg *n, const struct live_opts *o, live_done_fn *done,
	       void *arg, char *err, size_t errlen)
{
	static const struct live_opts none;
	struct plan *p;

	if (!tcqd || !tcqd->cfg) {
		snprintf(err, errlen, "no running configuration");
		goto refuse;
	}
	if (live.busy) {
		snprintf(err, errlen, "an earlier change is still being "
			 "completed; try again in a moment");
		goto refuse;
	}
	if (!(p = calloc(1, sizeof(*p)))) {
		snprintf(err, errlen, "out of memory");
		goto refuse;
	}
	p->o = o ? o : &none;
	p->n = n;
	p->done = done;
	p->arg = arg;
	if (plan_global(p, tcqd->cfg, err, errlen) < 0 ||
	    plan_targets(p, tcqd->cfg, err, errlen) < 0 ||
	    plan_portals(p, tcqd->cfg, err, errlen) < 0 ||
	    commit_resizes(p, err, errlen) < 0) {
		plan_free(p, false);
		free(p);
		return -1;
	}
	commit(p);
	return 0;
refuse:
	cfg_free(n);
	free(n);
	return -1;
}

void live_fini(void)
{
	for (int i = 0; i < live.nretired; i++)
		portal_free(live.retired[i]);
	free(live.retired);
	live.retired = NULL;
	live.nretired = 0;
}
