/*
 * tcqctl's view of the LUNs (ctl_priv.h): finding one by name, describing
 * it, and the commands that act on one: luns and crash (a simulated
 * power loss of a cache backend); set is a live change (ctl_live.c).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tcq/log.h"
#include "backend/bdev.h"
#include "scsi/lun.h"
#include "scsi/qos.h"
#include "scsi/mmc.h"
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

/* A device model's statistics (the disk backend), as "model": {...}:
 * why a benchmark's curve bends. Nothing for other backends. */
static void model_json(json_object *o, struct bdev *b)
{
	struct bdev_model_stats st;
	json_object *m;

	if (!b || bdev_model_stats(b, &st) < 0)
		return;
	m = json_object_new_object();
	ctl_add_str(m, "model", st.model);
	ctl_add_u64(m, "commands", st.commands);
	ctl_add_u64(m, "read_hits", st.read_hits);
	ctl_add_u64(m, "cached_writes", st.cached_writes);
	ctl_add_u64(m, "media_ops", st.media_ops);
	ctl_add_u64(m, "destages", st.destages);
	json_object_object_add(m, "mean_drive_queue",
			       json_object_new_double(st.mean_drive_queue));
	json_object_object_add(m, "mean_host_queue",
			       json_object_new_double(st.mean_host_queue));
	json_object_object_add(m, "mean_commands",
			       json_object_new_double(st.mean_commands));
	json_object_object_add(m, "mean_busy_dies",
			       json_object_new_double(st.mean_busy_dies));
	json_object_object_add(m, "busy_fraction",
			       json_object_new_double(st.busy_fraction));
	ctl_add_u64(m, "elapsed_ns", st.elapsed_ns);
	json_object_object_add(o, "model", m);
}

/* Sequential prefetch (backend/prefetch.c), as "prefetch": {...}, on a
 * LUN whose backend has it set: whether it is in effect, and what it did
 * since the LUN opened. */
static void prefetch_json(json_object *o, struct bdev *b)
{
	struct bdev_prefetch_stats st;
	json_object *m;

	if (!b || bdev_prefetch_stats(b, &st) < 0)
		return;
	m = json_object_new_object();
	ctl_add_bool(m, "on", st.on);
	ctl_add_u64(m, "max", st.max);
	ctl_add_u64(m, "held", st.held);
	ctl_add_u64(m, "hits", st.hits);
	ctl_add_u64(m, "misses", st.misses);
	ctl_add_u64(m, "bytes_prefetched", st.prefetched);
	ctl_add_u64(m, "bytes_dropped", st.dropped);
	json_object_object_add(o, "prefetch", m);
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
	ctl_add_str(o, "cut_through", lun_get_cut_off(l) ? "off" : "auto");
	ctl_add_bool(o, "write_cache", lun_get_write_cache(l));
	{
		char v[9], p[17], r[5];

		lun_identity(l, v, p, r);
		ctl_add_str(o, "vendor", v);
		ctl_add_str(o, "product", p);
		ctl_add_str(o, "revision", r);
	}
	{
		uint32_t iops, mbps;

		qos_limits(l, &iops, &mbps);
		ctl_add_u64(o, "qos_iops", iops);
		ctl_add_u64(o, "qos_mbps", mbps);
	}
	ctl_add_str(o, "type", l->mmc ? "cdrom" : "disk");
	if (l->mmc) {	/* the disc as the drive sees it */
		uint16_t prof = mmc_profile(l);

		ctl_add_str(o, "medium", mmc_medium_state(l));
		ctl_add_str(o, "profile", prof == MMC_PROFILE_DVD_ROM ?
			    "DVD-ROM" : prof == MMC_PROFILE_CD_ROM ? "CD-ROM" :
			    "none");
	}
	model_json(o, l->bdev);
	prefetch_json(o, l->bdev);
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
