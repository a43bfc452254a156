/* From a checked struct cfg to the runtime struct tcqd: backends, LUNs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <openssl/crypto.h>
#include "backend/bdev.h"
#include "scsi/alua.h"
#include "scsi/lun.h"
#include "backend/lun_store.h"
#include "scsi/pr.h"
#include "scsi/thin.h"
#include "target/config.h"
#include "target/portal.h"
#include "target/session.h"

struct lun *cfg_build_lun(struct target *t, const struct cfg_lun *cl,
			  char *err, size_t errlen)
{
	struct bdev_params bp = {
		.path = cl->path,
		.size = cl->size,
		.block_size = cl->block_size,
		.read_only = cl->read_only,
		.create = cl->create,
		.queue_depth = cl->queue_depth,
	};
	char berr[256];
	const char *bname;
	void *cluster;
	struct bdev *b;
	struct lun *l;

	b = bdev_open(cl->backend, &bp, berr, sizeof(berr));
	if (!b) {
		snprintf(err, errlen, "[lun %s %u] %s: %s", t->dev.name, cl->id,
			 cl->path ? cl->path : cl->backend, berr);
		return NULL;
	}
	l = lun_create(&t->dev, cl->id, b, t->dev.name);
	if (l && cl->serial[0])	/* the same identity on every gateway */
		lun_set_serial(l, cl->serial);
	if (!l) {
		bdev_close(b);
		snprintf(err, errlen, "[lun %s %u]: cannot create the LUN",
			 t->dev.name, cl->id);
		return NULL;
	}
	/* A backend without a volatile cache has no WCE to report. */
	l->write_cache = l->write_cache_default =
		cl->write_cache && !b->write_through;
	lun_set_barrier(l, (enum lun_barrier)cl->barrier);
	l->qam = cl->qam;
	l->removable = cl->removable;
	l->sanitize_ok = cl->sanitize;
	for (l->lbppbe = 0; cl->phys_block_size &&
	     (l->block_size << l->lbppbe) < cl->phys_block_size;)
		l->lbppbe++;
	if (cl->thin >= 0)	/* else the backend's choice (sparse file) */
		b->thin = cl->thin;
	l->read_only = cl->read_only || b->read_only;
	alua_lun_apply(l, &t->dev.alua);
	/* Provisioning counts once thin is settled; thin_threshold needs
	 * them. */
	if (thin_lun_setup(l, cl->thin_threshold, berr, sizeof(berr)) < 0) {
		snprintf(err, errlen, "[lun %s %u] thin_threshold = %u: %s",
			 t->dev.name, cl->id, cl->thin_threshold, berr);
		cfg_destroy_lun(l);
		return NULL;
	}
	if (!cl->no_shared_state && bdev_rbd_cluster(b, &cluster, &bname) == 0) {
		/* Gateways of one rbd image share reservations in RADOS
		 * (scsi/pr_store.c). */
		struct lun_store *s = rados_store_open(b, berr, sizeof(berr));

		if (!s || pr_store_attach(l, s, berr, sizeof(berr)) < 0) {
			lun_store_close(s);
			snprintf(err, errlen, "[lun %s %u] %s", t->dev.name, cl->id,
				 berr);
			cfg_destroy_lun(l);
			return NULL;
		}
	}
	return l;
}

void cfg_destroy_lun(struct lun *l)
{
	struct bdev *b;

	if (!l)
		return;
	/* The LUN borrows its backend: close it after the LUN. */
	b = l->bdev;
	lun_destroy(l);
	if (b)
		bdev_close(b);
}

struct target *cfg_build_target(const struct cfg_target *ct,
				const struct tcq_settings *set, char *err,
				size_t errlen)
{
	struct target *t = calloc(1, sizeof(*t));

	if (!t) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	snprintf(t->dev.name, sizeof(t->dev.name), "%s", ct->name);
	snprintf(t->alias, sizeof(t->alias), "%s", ct->alias);
	t->dev.tpgt = ct->tpgt;
	t->dev.max_xfer_len = set->max_xfer_len;
	t->dev.ops = &sess_sdev_ops;
	t->dev.state_dir = set->state_dir;
	t->dev.alua = ct->alua;
	/* Done by cfg_finish; again for a cfg built by hand. */
	if (alua_finish(&t->dev.alua, err, errlen) < 0)
		goto fail;
	/* Each gateway is its own SCSI target port: unless tpgt is given,
	 * its portal group tag is its relative port id. */
	if (!ct->tpgt_set && ct->alua.rel_port_id)
		t->dev.tpgt = ct->alua.rel_port_id;
	t->chap = ct->chap;
	t->max_sessions = ct->max_sessions;
	t->max_sessions_per_initiator = ct->max_sessions_per_initiator;
	if (acl_copy(&t->acl, &ct->acl) < 0) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	for (int j = 0; j < TCQ_MAX_LUNS; j++) {
		struct lun *l;

		if (!ct->luns[j])
			continue;
		l = cfg_build_lun(t, ct->luns[j], err, errlen);
		if (!l)
			goto fail;
		sdev_set_lun(&t->dev, (unsigned)j, l);
	}
	return t;
fail:
	cfg_destroy_target(t);
	return NULL;
}

void cfg_destroy_target(struct target *t)
{
	if (!t)
		return;
	for (int j = 0; j < sdev_nluns(&t->dev); j++)
		cfg_destroy_lun(sdev_lun(&t->dev, (uint64_t)j));
	acl_free(&t->acl);
	OPENSSL_cleanse(&t->chap, sizeof(t->chap));
	free(t);
}

struct tcqd *cfg_build(const struct cfg *c, char *err, size_t errlen)
{
	struct tcqd *d = calloc(1, sizeof(*d));

	if (!d)
		goto oom;
	d->set = c->set;
	d->portals = calloc((size_t)c->nlisten, sizeof(*d->portals));
	d->targets = calloc((size_t)c->ntargets + 1, sizeof(*d->targets));
	if (!d->portals || !d->targets)
		goto oom;
	for (int i = 0; i < c->nlisten; i++) {
		struct portal *p = portal_new(c->listen[i], 1, err, errlen);

		if (!p)
			goto fail;
		d->portals[d->nportals++] = p;
	}
	for (int i = 0; i < c->ntargets; i++) {
		struct target *t = cfg_build_target(c->targets[i], &d->set,
						    err, errlen);

		if (!t)
			goto fail;
		d->targets[d->ntargets++] = t;
		/* One target: its portals are its portal group. */
		if (c->ntargets == 1)
			for (int j = 0; j < d->nportals; j++)
				d->portals[j]->tpgt = t->dev.tpgt;
	}
	return d;
oom:
	snprintf(err, errlen, "out of memory");
fail:
	cfg_destroy_tcqd(d);
	return NULL;
}

int cfg_load_reservations(struct tcqd *d, char *err, size_t errlen)
{
	for (int i = 0; d && i < d->ntargets; i++) {
		struct sdev *dev = &d->targets[i]->dev;

		for (int j = 0; j < dev->nluns; j++) {
			struct lun *l = dev->luns[j];

			/* A LUN on a store has its state from there. */
			if (l && !l->store &&
			    pr_load(l, dev->state_dir, err, errlen) < 0)
				return -1;
		}
	}
	return 0;
}

void cfg_destroy_tcqd(struct tcqd *d)
{
	if (!d)
		return;
	for (int i = 0; i < d->ntargets; i++)
		cfg_destroy_target(d->targets[i]);
	free(d->targets);
	for (int i = 0; i < d->nportals; i++)
		portal_free(d->portals[i]);
	free(d->portals);
	if (d->cfg) {
		cfg_free(d->cfg);
		free(d->cfg);
	}
	free(d);
}
