/*
 * tcqctl's view of the LUNs (ctl_priv.h): finding one by name, describing
 * it, and the commands that act on one: luns, set (live settings) and
 * crash (a simulated power loss of a cache backend).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tcq/log.h"
#include "backend/bdev.h"
#include "scsi/lun.h"
#include "scsi/ua.h"
#include "target/config.h"
#include "target/ctl.h"
#include "target/ctl_priv.h"
#include "target/target.h"

/* ---- finding and describing LUNs ---------------------------------------- */

static int parse_lun_nr(const char *s, unsigned *out)
{
	char *end;
	unsigned long v;

	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || v >= TCQ_MAX_LUNS)
		return -1;
	*out = (unsigned)v;
	return 0;
}

struct lun *ctl_find_lun(const char *spec, char *err, size_t errlen)
{
	const char *slash = strrchr(spec, '/');
	struct target *t = NULL;
	unsigned nr;

	if (!tcqd || tcqd->ntargets == 0) {
		snprintf(err, errlen, "no targets configured");
		return NULL;
	}
	if (slash) {
		char name[TCQ_NAME_MAX];
		size_t n = (size_t)(slash - spec);

		if (n == 0 || n >= sizeof(name)) {
			snprintf(err, errlen, "'%.64s': bad target name", spec);
			return NULL;
		}
		memcpy(name, spec, n);
		name[n] = '\0';
		t = target_find(name);
		if (!t) {
			snprintf(err, errlen, "no target '%s'", name);
			return NULL;
		}
		spec = slash + 1;
	} else if (tcqd->ntargets == 1) {
		t = tcqd->targets[0];
	} else {
		snprintf(err, errlen,
			 "%d targets: name the LUN as TARGET/N", tcqd->ntargets);
		return NULL;
	}
	if (parse_lun_nr(spec, &nr) < 0) {
		snprintf(err, errlen, "'%.64s' is not a LUN number (0..%d)",
			 spec, TCQ_MAX_LUNS - 1);
		return NULL;
	}
	if (!sdev_lun(&t->dev, nr)) {
		snprintf(err, errlen, "target %s has no LUN %u", t->dev.name,
			 nr);
		return NULL;
	}
	return sdev_lun(&t->dev, nr);
}

static const char *barrier_name(enum lun_barrier b)
{
	switch (b) {
	case BARRIER_DRAIN: return "drain";
	case BARRIER_FLUSH: return "flush";
	case BARRIER_IGNORE: return "ignore";
	}
	return "?";
}

json_object *ctl_lun_json(const struct lun *l)
{
	json_object *o = json_object_new_object();

	ctl_add_str(o, "target", l->dev ? l->dev->name : "");
	ctl_add_u64(o, "lun", l->id);
	ctl_add_str(o, "backend",
		    l->bdev && l->bdev->spec ? l->bdev->spec : "");
	ctl_add_u64(o, "blocks", l->nblocks);
	ctl_add_u64(o, "block_size", l->block_size);
	ctl_add_u64(o, "queue_depth", l->bdev ? atomic_load_explicit(
			&l->bdev->queue_depth, memory_order_relaxed) : 0);
	ctl_add_str(o, "barrier", barrier_name(lun_get_barrier(l)));
	ctl_add_bool(o, "write_cache", lun_get_write_cache(l));
	return o;
}

void ctl_for_each_lun(struct lun *only, void (*fn)(struct lun *l, void *a),
		      void *arg)
{
	if (only) {
		fn(only, arg);
		return;
	}
	for (int i = 0; tcqd && i < tcqd->ntargets; i++)
		for (int j = 0; j < sdev_nluns(&tcqd->targets[i]->dev); j++) {
			struct lun *l = sdev_lun(&tcqd->targets[i]->dev,
						 (uint64_t)j);
			if (l)
				fn(l, arg);
		}
}

json_object *ctl_reply_luns(char **argv, int argc,
			    void (*fn)(struct lun *l, void *array))
{
	struct lun *only = NULL;
	char err[300];
	json_object *r, *arr;

	if (argc == 1 && !(only = ctl_find_lun(argv[0], err, sizeof(err))))
		return ctl_reply_err("%s", err);
	r = ctl_reply_ok();
	arr = json_object_new_array();
	ctl_for_each_lun(only, fn, arr);
	json_object_object_add(r, "luns", arr);
	return r;
}

/* ---- luns --------------------------------------------------------------- */

static void luns_add(struct lun *l, void *array)
{
	json_object_array_add(array, ctl_lun_json(l));
}

json_object *ctl_cmd_luns(struct ctl_conn *cc, char **argv, int argc)
{
	return ctl_reply_luns(argv, argc, luns_add);
}

/* ---- set ---------------------------------------------------------------- */

struct lun_change {
	bool qd, barrier, wc;
	uint32_t queue_depth;
	enum lun_barrier b;
	bool write_cache;
};

static int parse_onoff(const char *v, bool *out)
{
	if (!strcmp(v, "on") || !strcmp(v, "yes") || !strcmp(v, "1") ||
	    !strcmp(v, "true")) {
		*out = true;
		return 0;
	}
	if (!strcmp(v, "off") || !strcmp(v, "no") || !strcmp(v, "0") ||
	    !strcmp(v, "false")) {
		*out = false;
		return 0;
	}
	return -1;
}

/* One "key=value" of set into ch; NULL, or the error reply. */
static json_object *set_parse(char *kv, struct lun_change *ch)
{
	char *eq = strchr(kv, '=');
	const char *k = kv, *v;
	char err[160];
	uint64_t d;

	if (!eq || eq == kv)
		return ctl_reply_err("'%.64s': expected key=value", kv);
	*eq = '\0';
	v = eq + 1;
	if (!strcmp(k, "queue_depth")) {
		if (cfg_parse_uint(v, 1, CFG_MAX_QUEUE_DEPTH, &d, err,
				   sizeof(err)) < 0)
			return ctl_reply_err("queue_depth '%.32s': expected "
					     "1..%d", v, CFG_MAX_QUEUE_DEPTH);
		ch->qd = true;
		ch->queue_depth = (uint32_t)d;
	} else if (!strcmp(k, "barrier")) {
		if (!strcmp(v, "drain"))
			ch->b = BARRIER_DRAIN;
		else if (!strcmp(v, "flush"))
			ch->b = BARRIER_FLUSH;
		else if (!strcmp(v, "ignore"))
			ch->b = BARRIER_IGNORE;
		else
			return ctl_reply_err("barrier '%.32s': expected "
					     "drain, flush or ignore", v);
		ch->barrier = true;
	} else if (!strcmp(k, "write_cache")) {
		if (parse_onoff(v, &ch->write_cache) < 0)
			return ctl_reply_err("write_cache '%.32s': expected "
					     "on or off", v);
		ch->wc = true;
	} else {
		return ctl_reply_err("unknown setting '%.64s' (queue_depth, "
				     "barrier, write_cache)", k);
	}
	return NULL;
}

/* Each value is one atomic store the data path reads relaxed: sessions
 * keep running and see the new value on their next task (queue_depth: on
 * their next submit or completion). */
static void set_apply(struct lun *l, const struct lun_change *ch)
{
	if (ch->qd)
		atomic_store_explicit(&l->bdev->queue_depth, ch->queue_depth,
				      memory_order_relaxed);
	if (ch->barrier)
		lun_set_barrier(l, ch->b);
	if (ch->wc) {
		bool changed;

		pthread_mutex_lock(&l->lock);	/* vs MODE SELECT */
		changed = lun_get_write_cache(l) != ch->write_cache;
		lun_set_write_cache(l, ch->write_cache);
		pthread_mutex_unlock(&l->lock);
		/* WCE is a mode parameter: every I_T nexus is told (SPC-4
		 * 5.14: MODE PARAMETERS CHANGED). */
		if (changed)
			ua_establish_all(l, ASC_MODE_PARAMETERS_CHANGED);
	}
}

/* Checks every key=value before applying any, so a bad request changes
 * nothing. */
json_object *ctl_cmd_set(struct ctl_conn *cc, char **argv, int argc)
{
	struct lun_change ch = { 0 };
	char err[300];
	struct lun *l;
	json_object *r;

	l = ctl_find_lun(argv[0], err, sizeof(err));
	if (!l)
		return ctl_reply_err("%s", err);
	for (int i = 1; i < argc; i++) {
		if ((r = set_parse(argv[i], &ch)))
			return r;
	}
	if (ch.qd && !l->bdev)
		return ctl_reply_err("LUN has no backend");
	/* A write-through backend (rbd cache=none) has no cache to turn on:
	 * WCE would claim writes may be lost that never can be. */
	if (ch.wc && ch.write_cache && l->bdev && l->bdev->write_through)
		return ctl_reply_err("write_cache on: the backend has no "
				     "volatile write cache (%.64s)",
				     l->bdev->spec);
	set_apply(l, &ch);
	log_info("tcqctl: %s/%llu: settings changed",
		 l->dev ? l->dev->name : "?", (unsigned long long)l->id);
	r = ctl_reply_ok();
	json_object_object_add(r, "lun", ctl_lun_json(l));
	return r;
}

/* ---- crash -------------------------------------------------------------- */

json_object *ctl_cmd_crash(struct ctl_conn *cc, char **argv, int argc)
{
	char err[300];
	struct lun *l;
	json_object *r;
	int rc;

	if (!(l = ctl_find_lun(argv[0], err, sizeof(err))))
		return ctl_reply_err("%s", err);
	/* Any thread may call it (backend/bdev.h): it takes the cache's
	 * lock, and I/O in flight completes normally afterwards. */
	rc = bdev_cache_crash(l->bdev);
	if (rc < 0)
		return ctl_reply_err("crash: %s", rc == -EINVAL ?
				     "the LUN's backend is not 'cache'" :
				     strerror(-rc));
	log_warn("tcqctl: %s/%llu: simulated power loss: %d unsaved block%s "
		 "dropped", l->dev ? l->dev->name : "?",
		 (unsigned long long)l->id, rc, rc == 1 ? "" : "s");
	r = ctl_reply_ok();
	ctl_add_u64(r, "dropped_blocks", (uint64_t)rc);
	return r;
}
