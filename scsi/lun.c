/* Logical units: identity, and the device server's task entry points. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tcq/bufpool.h"
#include "tcq/log.h"
#include "tcq/scsi_proto.h"
#include "backend/bdev.h"
#include "scsi/alua.h"
#include "scsi/cdb.h"
#include "scsi/durability.h"
#include "scsi/exec.h"
#include "scsi/lun.h"
#include "scsi/mmc.h"
#include "scsi/odx.h"
#include "scsi/opcodes.h"
#include "backend/lun_store.h"
#include "scsi/sbc.h"
#include "scsi/sdev.h"
#include "scsi/sbc_priv.h"
#include "scsi/pr.h"
#include "scsi/qos.h"
#include "scsi/record.h"
#include "scsi/sense.h"
#include "scsi/spc.h"
#include "scsi/stats.h"
#include "scsi/taskset.h"
#include "scsi/thin.h"
#include "scsi/tmf.h"
#include "scsi/ua.h"

#ifndef PACKAGE_VERSION
#define PACKAGE_VERSION "0"
#endif

/* IEEE "private" company id (AC-DE-48), used for locally made NAAs. */
#define TCQ_COMPANY_ID 0xacde48u

static uint64_t fnv1a(uint64_t h, const void *p, size_t n)
{
	const uint8_t *b = p;

	for (size_t i = 0; i < n; i++) {
		h ^= b[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

/* NAA 6h: NAA(4) | company id(24) | vendor id(36) | extension(64). */
static void make_naa(uint8_t *naa, uint64_t h1, uint64_t h2)
{
	uint32_t c = TCQ_COMPANY_ID;

	naa[0] = (uint8_t)(0x60 | (c >> 20));
	naa[1] = (uint8_t)(c >> 12);
	naa[2] = (uint8_t)(c >> 4);
	naa[3] = (uint8_t)((c & 0xf) << 4 | ((h1 >> 32) & 0xf));
	for (int i = 0; i < 4; i++)
		naa[4 + i] = (uint8_t)(h1 >> (24 - 8 * i));
	for (int i = 0; i < 8; i++)
		naa[8 + i] = (uint8_t)(h2 >> (56 - 8 * i));
}

static void lun_bdev_resized(void *arg, uint64_t size)
{
	struct lun *l = arg;

	lun_capacity_changed(l, size / l->block_size);
}

void lun_params_default(struct lun_params *p, struct sdev *dev, uint64_t id,
			struct bdev *b)
{
	memset(p, 0, sizeof(*p));
	p->dev = dev;
	p->id = id;
	p->bdev = b;
	p->write_cache = true;
	p->barrier = BARRIER_DRAIN;
	p->thin = -1;
}

/* The default identity of a LUN: TCQ, tcq disk (tcq cdrom), and the
 * version's digits, at most 4 ("0.1.0" -> "010"). */
static void identity_default(const struct lun *l, char vendor[9],
			     char product[17], char revision[5])
{
	const char *v = PACKAGE_VERSION;
	size_t vi = 0;

	snprintf(vendor, 9, "TCQ");
	snprintf(product, 17, l->mmc ? "tcq cdrom" : "tcq disk");
	for (; *v && vi < 4; v++)
		if (*v >= '0' && *v <= '9')
			revision[vi++] = *v;
	revision[vi] = 0;
}

/* The parts every LUN has, from the defaults; NULL: out of memory. */
static struct lun *lun_new(struct sdev *dev, uint64_t id, struct bdev *b)
{
	struct lun *l = calloc(1, sizeof(*l));
	const char *target_name = dev ? dev->name : "";

	if (!l)
		return NULL;
	l->id = id;
	l->dev = dev;
	l->bdev = b;
	l->block_size = b && b->block_size ? b->block_size : 512;
	l->nblocks = b ? b->size / l->block_size : 0;
	l->read_only = b && b->read_only;
	l->write_cache = l->write_cache_default = true;
	l->lbpere = true;
	l->barrier = BARRIER_DRAIN;
	identity_default(l, l->vendor, l->product, l->revision);

	uint64_t h = fnv1a(0xcbf29ce484222325ull, target_name,
			   strlen(target_name));
	h = fnv1a(h, &id, sizeof(id));
	uint64_t h2 = fnv1a(h ^ 0x5bd1e995u, &id, sizeof(id));
	snprintf(l->serial, sizeof(l->serial), "%016llx",
		 (unsigned long long)h);
	make_naa(l->naa, h, h2);
	l->rel_port_id = 1;
	l->tpg_id = 1;
	pthread_mutex_init(&l->lock, NULL);
	list_init(&l->nexuses);
	l->sbc = sbc_lun_new();	/* NULL: no range locks, fixed medium */
	if (pr_lun_init(l) < 0) {
		lun_destroy(l);
		return NULL;
	}
	l->stats = stats_new();	/* NULL: the LUN runs without stats */
	l->qos = qos_new();
	if (!l->qos || record_lun_init(l) < 0 || durab_lun_init(l) < 0) {
		lun_destroy(l);
		return NULL;
	}
	return l;
}

/* Its reservations: shared with the other gateways of its medium, or
 * those this port kept with APTPL. */
static int lun_reservations(struct lun *l, const struct lun_params *p,
			    char *err, size_t errlen)
{
	struct lun_store *st = NULL;

	if (!p->local_state &&
	    bdev_shared_state(p->bdev, &st, err, errlen) < 0)
		return -1;
	if (st) {
		if (pr_store_attach(l, st, err, errlen) < 0) {
			lun_store_close(st);
			return -1;
		}
		return 0;
	}
	/* A LUN of no device (unit tests) has no state directory. */
	return p->dev ? pr_load(l, p->dev->state_dir, err, errlen) : 0;
}

struct lun *lun_create(const struct lun_params *p, char *err, size_t errlen)
{
	struct bdev *b = p->bdev;
	char why[256];
	struct lun *l = lun_new(p->dev, p->id, b);

	if (!l) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	if (p->cdrom) {	/* before the identity: its default product */
		l->mmc = mmc_lun_new(!b);
		if (!l->mmc) {
			snprintf(err, errlen, "out of memory");
			lun_destroy(l);
			return NULL;
		}
		l->block_size = MMC_BLOCK_SIZE;
		l->nblocks = b ? b->size / MMC_BLOCK_SIZE : 0;
	}
	if (p->serial && p->serial[0])	/* the same identity on every
					 * gateway */
		lun_set_serial(l, p->serial);
	lun_set_identity(l, p->vendor, p->product, p->revision);
	/* A backend without a volatile cache has no WCE to report. */
	l->write_cache = l->write_cache_default =
		p->write_cache && !(b && b->write_through);
	l->barrier = p->barrier;
	l->qam = p->qam;
	l->tas = p->tas;
	l->tas_default = p->tas;
	l->removable = p->removable || p->cdrom;
	l->sanitize_ok = p->sanitize;
	for (l->lbppbe = 0; p->phys_block_size &&
	     (l->block_size << l->lbppbe) < p->phys_block_size;)
		l->lbppbe++;
	if (b && p->thin >= 0)
		b->thin = p->thin;
	l->read_only = p->read_only || p->cdrom || (b && b->read_only);
	l->flush_ignore = p->flush_ignore;
	l->fua_ignore = p->fua_ignore;
	l->cut_off = p->cut_off;
	qos_set_limits(l, p->qos_iops, p->qos_mbps);
	if (p->dev)
		alua_lun_apply(l, &p->dev->alua);
	/* Provisioning counts once thin is settled; the threshold needs
	 * them. */
	if (thin_lun_setup(l, p->thin_threshold, why, sizeof(why)) < 0) {
		snprintf(err, errlen, "thin_threshold = %u: %s",
			 p->thin_threshold, why);
		lun_destroy(l);
		return NULL;
	}
	if (lun_reservations(l, p, err, errlen) < 0) {
		lun_destroy(l);
		return NULL;
	}
	/* Still: nothing has reached it yet. */
	if (p->record_path && p->record_path[0] &&
	    record_start(l, p->record_path, p->record_max, why,
			 sizeof(why)) < 0) {
		snprintf(err, errlen, "record = %s: %s", p->record_path, why);
		lun_destroy(l);
		return NULL;
	}
	if (b)	/* a backend resized under us (rbd) tells the initiators */
		bdev_set_resize_hook(b, lun_bdev_resized, l);
	return l;
}

bool lun_set_identity(struct lun *l, const char *vendor, const char *product,
		      const char *revision)
{
	char v[9], p[17], r[5];
	bool changed;

	identity_default(l, v, p, r);
	if (vendor && *vendor)
		snprintf(v, sizeof(v), "%s", vendor);
	if (product && *product)
		snprintf(p, sizeof(p), "%s", product);
	if (revision && *revision)
		snprintf(r, sizeof(r), "%s", revision);
	pthread_mutex_lock(&l->lock);
	changed = strcmp(v, l->vendor) || strcmp(p, l->product) ||
		  strcmp(r, l->revision);
	memcpy(l->vendor, v, sizeof(v));
	memcpy(l->product, p, sizeof(p));
	memcpy(l->revision, r, sizeof(r));
	pthread_mutex_unlock(&l->lock);
	return changed;
}

bool lun_set_mode_keys(struct lun *l, int wce, int tas)
{
	bool changed = false;

	pthread_mutex_lock(&l->lock);
	if (wce >= 0) {
		changed = lun_get_write_cache(l) != (wce != 0);
		lun_set_write_cache(l, wce != 0);
		l->write_cache_default = wce != 0;
	}
	if (tas >= 0) {
		changed |= l->tas != (tas != 0);
		l->tas = tas != 0;
		l->tas_default = tas != 0;
	}
	pthread_mutex_unlock(&l->lock);
	return changed;
}

void lun_identity(const struct lun *l, char vendor[9], char product[17],
		  char revision[5])
{
	struct lun *m = (struct lun *)l;	/* its lock, not its content */

	pthread_mutex_lock(&m->lock);
	memcpy(vendor, l->vendor, 9);
	memcpy(product, l->product, 17);
	memcpy(revision, l->revision, 5);
	pthread_mutex_unlock(&m->lock);
}

unsigned lun_opc_features(const struct lun *l)
{
	unsigned feat = 0;

	if (!l)
		return 0;
	if (l->mmc)
		return OPC_FEAT_MMC;
	if (l->bdev && l->bdev->thin)
		feat |= OPC_FEAT_THIN;
	if (l->sanitize_ok)
		feat |= OPC_FEAT_SANITIZE;
	return feat;
}

void lun_set_serial(struct lun *l, const char *serial)
{
	size_t n = strnlen(serial, sizeof(l->serial) - 1);
	uint64_t h = fnv1a(0xcbf29ce484222325ull, serial, n);

	memcpy(l->serial, serial, n);
	l->serial[n] = 0;
	/* The NAA follows the serial, so gateways that share a serial
	 * report one logical unit. */
	make_naa(l->naa, h, fnv1a(h ^ 0x5bd1e995u, serial, n));
}

/* The backend stays open: whoever opened it closes it. */
void lun_destroy(struct lun *l)
{
	if (!l)
		return;
	if (l->bdev)
		bdev_set_resize_hook(l->bdev, NULL, NULL);
	lun_store_close(l->store);	/* no more callbacks into l */
	l->store = NULL;
	odx_lun_gone(l);
	record_lun_free(l);
	durab_lun_free(l);
	pthread_mutex_destroy(&l->lock);
	sbc_lun_free(l->sbc);
	mmc_lun_free(l->mmc);
	thin_lun_free(l);
	pr_lun_free(l);
	stats_free(l->stats);
	qos_free(l->qos);
	free(l);
}

/*
 * The checks every command passes, in SPC-4's order, each reading the
 * states its row allows; then the row's executor. EXEC_OK when the
 * executor has the task, else the failure to complete it with.
 */
static struct exec_rc lun_dispatch(struct tcq_task *t)
{
	const struct opc_entry *e = t->req.cmd;
	struct exec_rc rc;

	if (!t->lun)	/* an OPC_F_ANY_LUN row: no LUN state to check */
		return e->exec(t);
	/* A port in a standby or unavailable group (SPC-4 5.15.2.4):
	 * before reservations, which the active ports enforce. */
	if (t->lun->alua_state) {
		uint16_t asc = alua_check(t->lun->alua_state, e);
		if (asc)
			return exec_sense(SK_NOT_READY, asc);
	}
	/* Checked when the task runs, so that a reservation made by an
	 * older task of the same nexus already counts. */
	if (pr_active(t->lun) && pr_conflict(t))
		return exec_conflict();
	rc = t->lun->mmc ? mmc_ready(t) : sbc_ready(t);	/* no medium,
							 * sanitizing */
	if (exec_failed(rc))
		return rc;
	odx_note_write(t);	/* a write cancels the tokens it touches */
	return e->exec(t);
}

/* Runs an enabled task whose data is in (the task set's executor; also a
 * task to no LUN that its row lets run); a failure, of a check or of the
 * executor, completes it here, once (scsi/exec.h). */
static void lun_execute(struct tcq_task *t)
{
	struct exec_rc rc;

	/* A task that waited while a recording began (tcqctl record start
	 * holds the LUN) is recorded as it starts: what it writes comes
	 * after the base. */
	if (t->lun && !t->rec_task && !t->rec_armed &&
	    lun_recording(t->lun))
		record_arrive(t);
	rc = lun_dispatch(t);

	if (exec_failed(rc))
		exec_fail(t, rc);
}

/* A task of one of l's sets has its final status. */
static void lun_task_completed(struct taskset *ts, struct tcq_task *t)
{
	struct lun *l = ts->lun;

	record_done(t);
	durab_done(t);
	odx_note_write(t);	/* tokens made while it wrote */
	stats_task_done(l, t);
	/* A write may have allocated (or UNMAP freed) space: the soft
	 * threshold is looked at shortly (scsi/thin.h). */
	thin_note_write(l, &t->req);
	if (t->status == SAM_STAT_CHECK_CONDITION && !t->aborted)
		tmf_qerr(ts, t);	/* QErr: others may be aborted */
}

static const struct taskset_ops lun_taskset_ops = {
	.exec = lun_execute,
	.completed = lun_task_completed,
};

struct taskset *lun_nexus_join(struct lun *l, struct reactor *r, void *nexus)
{
	struct taskset *ts = taskset_new(l, r, nexus, &lun_taskset_ops);

	if (!ts)
		return NULL;
	pthread_mutex_lock(&l->lock);
	list_add_tail(&ts->nexus_node, &l->nexuses);
	ua_attach_locked(ts);	/* POWER ON, RESET for a new nexus */
	pthread_mutex_unlock(&l->lock);
	return ts;
}

void lun_nexus_leave(struct taskset *ts)
{
	struct lun *l;
	bool held;

	if (!ts)
		return;
	l = ts->lun;
	pthread_mutex_lock(&l->lock);
	list_del(&ts->nexus_node);
	qos_nexus_leave_locked(ts);
	ua_detach_locked(ts);
	/* Task management on its way here frees it (scsi/tmf.c). */
	held = ts->refs > 0;
	ts->left = true;
	pthread_mutex_unlock(&l->lock);
	qos_nexus_gone(ts);
	pr_nexus_lost(l, ts->nexus);
	sbc_nexus_gone(l, ts->nexus);	/* PREVENT ends with it */
	odx_nexus_gone(l, ts->nexus);	/* its ODX results too */
	if (!held)
		taskset_free(ts);
}

void lun_nexus_abort(struct taskset *ts)
{
	qos_abort_all(ts, false);	/* the held ones never entered */
	taskset_abort_all(ts, false);
}

struct taskset *lun_nexus_find_locked(struct lun *l, const void *nexus)
{
	struct list_node *pos;

	list_for_each(pos, &l->nexuses) {
		struct taskset *ts = list_entry(pos, struct taskset,
						nexus_node);

		if (ts->nexus == nexus)
			return ts;
	}
	return NULL;
}

void lun_hold(struct lun *l)
{
	__atomic_store_n(&l->held, true, __ATOMIC_RELEASE);
}

void lun_release(struct lun *l)
{
	__atomic_store_n(&l->held, false, __ATOMIC_RELEASE);
	tmf_rescan_lun(l);
}

unsigned lun_running(struct lun *l)
{
	struct list_node *pos;
	unsigned n = 0;

	pthread_mutex_lock(&l->lock);
	list_for_each(pos, &l->nexuses)
		n += __atomic_load_n(&list_entry(pos, struct taskset,
						 nexus_node)->n_running,
				     __ATOMIC_RELAXED);
	pthread_mutex_unlock(&l->lock);
	return n;
}

unsigned lun_tasks(struct lun *l)
{
	struct list_node *pos;
	unsigned n = 0;

	pthread_mutex_lock(&l->lock);
	list_for_each(pos, &l->nexuses)
		n += taskset_count(list_entry(pos, struct taskset,
					      nexus_node));
	pthread_mutex_unlock(&l->lock);
	return n;
}

bool lun_task_arrive(struct taskset *ts, struct tcq_task *t)
{
	struct sense_info si;
	struct lun *l = t->lun;

	t->status = SAM_STAT_GOOD;
	t->sense_len = 0;
	t->data_in_len = 0;
	t->state = TASK_NEW;
	t->exec.pending = 0;
	t->exec.error = 0;
	t->aborted = false;
	t->spdtl = 0;
	t->lock.mode = 0;
	t->exec.buf = NULL;
	t->exec.buf_len = 0;
	t->order.set = NULL;
	list_init(&t->order.node);
	int bad = cdb_decode_for(t->cdb, t->cdb_len, l ? l->block_size : 512,
				 lun_opc_features(l), &t->req, &si);
	if (!l) {
		/* No LUN here: answered at once, outside any task set. Only
		 * the commands the table lets at any LUN (INQUIRY, REPORT
		 * LUNS, REQUEST SENSE) get further. */
		const struct opc_entry *e = t->cdb_len ? opc_first(t->cdb[0], 0)
						       : NULL;
		t->order.set = NULL;
		t->state = TASK_RUNNING;
		if (!bad && (e->flags & OPC_F_ANY_LUN)) {
			lun_execute(t);
			return false;
		}
		if (bad && e && (e->flags & OPC_F_ANY_LUN))
			sense_set_si(t, &si);
		else
			sense_set(t, SK_ILLEGAL_REQUEST, ASC_LUN_NOT_SUPPORTED);
		t->state = TASK_DONE;
		t->done(t);
		return false;
	}
	stats_task_arrive(l, t);
	if (ts && ua_pending(ts) && ua_check(ts, t)) {
		/* SAM-5 5.14: the unit attention is what t reports (the
		 * pending flag is read without the LUN lock). */
	} else if (bad) {
		sense_set_si(t, &si);
	} else if (t->req.data_out_len &&
		   (!t->dir_out || t->exp_len < t->req.data_out_len)) {
		uint32_t allowed = t->dir_out ? t->exp_len : 0;

		t->spdtl = t->req.data_out_len;
		if ((t->req.cmd->flags & OPC_F_TRIM_OVERFLOW) &&
		    allowed % l->block_size == 0) {
			/* FCP-4 / SAM-5 overflow rule (a): run the command,
			 * but on no data beyond what the initiator sends;
			 * the transport reports the overflow residual. */
			t->req.blocks = allowed / l->block_size;
			t->req.data_out_len = allowed;
		} else if (cdb_access(&t->req) == CDB_ACCESS_WRITE &&
			   lun_write_protected(t)) {
			/* The medium refuses the write whatever the data:
			 * that comes first (libiscsi's ReadOnly test sends
			 * WRITE SAME without its block). */
			sense_set(t, SK_DATA_PROTECT, ASC_WRITE_PROTECTED);
		} else {
			/* Rule (b): a partial block cannot be written. */
			sense_set(t, SK_ILLEGAL_REQUEST,
				  ASC_INVALID_FIELD_IN_INFORMATION_UNIT);
		}
	}
	if (t->status == SAM_STAT_GOOD) {
		record_arrive(t);	/* the crash lab's, when recording */
		durab_arrive(t);
	}
	if (!ts) {	/* transport bug: a LUN needs a task set */
		if (t->status == SAM_STAT_GOOD)
			sense_set(t, SK_HARDWARE_ERROR,
				  ASC_INTERNAL_TARGET_FAILURE);
		t->state = TASK_DONE;
		t->done(t);
		return false;
	}
	/* QoS may hold it before its task set: its Data-Out comes all the
	 * same, and it enters in its nexus' order (scsi/qos.h). */
	if (t->status == SAM_STAT_GOOD && qos_hold(ts, t))
		return t->req.data_out_len && !t->data_ready;
	return taskset_arrive(ts, t);
}

bool lun_task_abort(struct tcq_task *t)
{
	if (!t->order.set || t->state == TASK_DONE)
		return false;
	if (qos_abort_task(t->order.set, t, false))
		return true;
	taskset_abort_task(t->order.set, t, false);
	return true;
}

uint32_t lun_task_spdtl(const struct tcq_task *t)
{
	uint32_t n = t->req.data_in_len ? t->req.data_in_len :
		     t->spdtl ? t->spdtl : t->req.data_out_len;

	if (t->status != SAM_STAT_GOOD && t->req.data_in_len &&
	    !t->data_in_len && n <= t->exp_len)
		n = 0;
	return n;
}

void lun_task_data_ready(struct tcq_task *t)
{
	if (t->order.set)
		taskset_data_ready(t);
}

void lun_task_release(struct tcq_task *t)
{
	if (t->buf_owned && t->buf) {
		bufpool_free(t->buf, t->buf_len);
		t->buf = NULL;
		t->buf_len = 0;
	}
	t->buf_owned = false;
}

void lun_reset(struct lun *l)
{
	log_info("LUN %llu: logical unit reset", (unsigned long long)l->id);
	/* Every nexus gets BUS DEVICE RESET FUNCTION OCCURRED (it replaces
	 * what was pending) and the RESERVE(6/10) reservation ends; PR
	 * state is kept (SPC-4 5.13.12). */
	ua_establish_all(l, ASC_BUS_DEVICE_RESET);
	sbc_lun_reset(l);	/* PREVENT MEDIUM REMOVAL ends (SBC-3 4.x) */
	thin_lun_reset(l);	/* a soft threshold still reached notifies
				 * again */
}

void lun_capacity_changed(struct lun *l, uint64_t nblocks)
{
	__atomic_store_n(&l->nblocks, nblocks, __ATOMIC_RELEASE);
	ua_establish_all(l, ASC_CAPACITY_DATA_CHANGED);
}
