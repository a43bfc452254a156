/* From a checked struct cfg to the runtime struct tcqd: backends, LUNs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <openssl/crypto.h>
#include "backend/bdev.h"
#include "scsi/lun.h"
#include "target/config.h"
#include "target/initiator.h"
#include "target/portal.h"
#include "target/session.h"

enum bdev_prefetch cfg_lun_prefetch(const struct target *t,
				   const struct cfg_lun *cl)
{
	if (t->dev.alua.ngroups > 1)	/* other gateways write it too */
		return BDEV_PREFETCH_OFF;
	return (enum bdev_prefetch)cl->prefetch;
}

int cfg_open_lun_bdev(const struct target *t, const struct cfg_lun *cl,
		      struct bdev **out, char *err, size_t errlen)
{
	bool cdrom = cl->type == CFG_LUN_CDROM;
	struct bdev_params bp = {
		.path = cl->path,
		.size = cl->size,
		/* an image's 2048-byte sectors are read as 512-byte
		 * blocks of the backend: its size is checked here */
		.block_size = cdrom ? 512 : cl->block_size,
		.read_only = cl->read_only || cdrom,
		.create = cl->create,
		.queue_depth = cl->queue_depth,
	};
	char why[256];
	struct bdev *b;

	struct stat st;

	*out = NULL;
	if (cdrom && !cl->path)		/* an empty drive */
		return 0;
	if (cdrom && stat(cl->path, &st) == 0 && S_ISREG(st.st_mode) &&
	    (st.st_size % 2048 || !st.st_size))
		goto not_iso;
	b = bdev_open(cl->backend, &bp, why, sizeof(why));
	if (!b) {
		snprintf(err, errlen, "[lun %s %u] %s: %s", t->dev.name, cl->id,
			 cl->path ? cl->path : cl->backend, why);
		return -1;
	}
	/* Its state now, so that a live change cannot fail. */
	if (bdev_set_prefetch(b, cfg_lun_prefetch(t, cl),
			      cl->prefetch_max) < 0) {
		bdev_close(b);
		snprintf(err, errlen, "[lun %s %u] prefetch: out of memory",
			 t->dev.name, cl->id);
		return -1;
	}
	if (cdrom && b->size % 2048) {
		st.st_size = (off_t)b->size;
		bdev_close(b);
		goto not_iso;
	}
	*out = b;
	return 0;
not_iso:
	snprintf(err, errlen, "[lun %s %u] path = %s: %llu bytes is not an "
		 "ISO image (a whole number of 2048-byte sectors)",
		 t->dev.name, cl->id, cl->path, (unsigned long long)st.st_size);
	return -1;
}

struct lun *cfg_build_lun(struct target *t, const struct cfg_lun *cl,
			  char *err, size_t errlen)
{
	struct lun_params lp;
	char why[256];
	struct bdev *b;
	struct lun *l;

	if (cfg_open_lun_bdev(t, cl, &b, err, errlen) < 0)
		return NULL;
	lun_params_default(&lp, &t->dev, cl->id, b);
	lp.cdrom = cl->type == CFG_LUN_CDROM;
	lp.serial = cl->serial;
	lp.vendor = cl->vendor;
	lp.product = cl->product;
	lp.revision = cl->revision;
	lp.write_cache = cl->write_cache;
	lp.barrier = (enum lun_barrier)cl->barrier;
	lp.qam = cl->qam;
	lp.tas = cl->tas;
	lp.read_only = cl->read_only;
	lp.removable = cl->removable;
	lp.sanitize = cl->sanitize;
	lp.phys_block_size = cl->phys_block_size;
	lp.thin = cl->thin;
	lp.thin_threshold = cl->thin_threshold;
	lp.local_state = cl->no_shared_state;
	lp.flush_ignore = cl->flush_ignore;
	lp.fua_ignore = cl->fua_ignore;
	lp.cut_off = cl->cut_off;
	lp.qos_iops = cl->qos_iops;
	lp.qos_mbps = cl->qos_mbps;
	lp.record_path = cl->record;
	lp.record_max = cl->record_max;
	l = lun_create(&lp, why, sizeof(why));
	if (!l) {
		if (b)
			bdev_close(b);
		snprintf(err, errlen, "[lun %s %u] %s", t->dev.name, cl->id,
			 why);
		return NULL;
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
	if (cfg_parse_redirect(ct->redirect, t->redirect, sizeof(t->redirect),
			       &t->redirect_permanent, err, errlen) < 0)
		goto fail;
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
	tinit_free(t->inits);
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
		if (tinit_attach(t, c, err, errlen) < 0)
			goto fail;
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
