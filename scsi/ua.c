/* Unit attention conditions, per I_T nexus per LUN (see ua.h). */
#include <stdlib.h>
#include <string.h>
#include "tcq/scsi_proto.h"
#include "scsi/lun.h"
#include "scsi/opcodes.h"
#include "scsi/pr.h"
#include "scsi/sense.h"
#include "scsi/thin.h"
#include "scsi/ua.h"

_Static_assert(sizeof(((struct taskset *)0)->ua_q) / sizeof(uint16_t) ==
	       UA_QUEUE_MAX, "UA_QUEUE_MAX must match taskset.ua_q");

static void set_flag(struct taskset *ts)
{
	__atomic_store_n(&ts->ua_pending, ts->ua_n != 0, __ATOMIC_RELEASE);
}

void ua_establish_locked(struct taskset *ts, uint16_t asc)
{
	for (unsigned i = 0; i < ts->ua_n; i++)
		if (ts->ua_q[i] == asc)
			return;
	if (ts->ua_n == UA_QUEUE_MAX) {
		/* Full: the newest condition replaces the last one; the
		 * initiator learns something changed either way. */
		ts->ua_q[UA_QUEUE_MAX - 1] = asc;
	} else {
		ts->ua_q[ts->ua_n++] = asc;
	}
	set_flag(ts);
}

void ua_attach_locked(struct taskset *ts)
{
	ts->ua_n = 0;
	ua_establish_locked(ts, ASC_POWER_ON_RESET);
}

void ua_detach_locked(struct taskset *ts)
{
	ts->ua_n = 0;
	set_flag(ts);
}

/* Pops the oldest code; lun->lock held. */
static bool pop_locked(struct taskset *ts, uint16_t *asc)
{
	if (!ts->ua_n)
		return false;
	*asc = ts->ua_q[0];
	ts->ua_n--;
	memmove(ts->ua_q, ts->ua_q + 1, ts->ua_n * sizeof(ts->ua_q[0]));
	set_flag(ts);
	return true;
}

bool ua_take(struct taskset *ts, struct sense_info *si)
{
	struct lun *l = ts->lun;
	uint16_t asc;
	bool got;

	if (!ua_pending(ts))
		return false;
	pthread_mutex_lock(&l->lock);
	got = pop_locked(ts, &asc);
	pthread_mutex_unlock(&l->lock);
	if (!got)
		return false;
	memset(si, 0, sizeof(*si));
	si->key = SK_UNIT_ATTENTION;
	si->asc = asc;
	si->bit = -1;
	if (asc == ASC_THIN_PROVISIONING_SOFT_THRESHOLD_REACHED) {
		/* SBC-3 4.7.3.7.6: INFORMATION is the offset of the threshold
		 * descriptor in the Logical Block Provisioning mode page. */
		si->info_valid = true;
		si->info = THIN_UA_INFO;
	}
	return true;
}

bool ua_check(struct taskset *ts, struct tcq_task *t)
{
	struct sense_info si;
	/* A CDB that did not decode has no row: its opcode's stands in. */
	const struct opc_entry *e = t->req.cmd ? t->req.cmd :
				    t->cdb_len ? opc_first(t->cdb[0],
				    lun_opc_features(t->lun)) : NULL;

	/* SAM-5 5.14: the rows that say so run while a UA is pending;
	 * REQUEST SENSE takes the UA itself (spc_request_sense). */
	if (e && (e->flags & OPC_F_UA_OK))
		return false;
	if (!ua_take(ts, &si))
		return false;
	sense_set_si(t, &si);
	return true;
}

void ua_establish(struct taskset *ts, uint16_t asc)
{
	struct lun *l = ts->lun;

	pthread_mutex_lock(&l->lock);
	ua_establish_locked(ts, asc);
	pthread_mutex_unlock(&l->lock);
}

void ua_establish_match_locked(struct lun *l, ua_match_fn match, void *arg,
			       uint16_t asc)
{
	struct list_node *pos;

	list_for_each(pos, &l->nexuses) {
		struct taskset *ts = list_entry(pos, struct taskset,
						nexus_node);

		if (!match || match(ts, arg))
			ua_establish_locked(ts, asc);
	}
}

static bool not_nexus(const struct taskset *ts, void *arg)
{
	return ts->nexus != arg;
}

void ua_establish_others(struct lun *l, const void *nexus, uint16_t asc)
{
	pthread_mutex_lock(&l->lock);
	ua_establish_match_locked(l, not_nexus, (void *)nexus, asc);
	pthread_mutex_unlock(&l->lock);
}

static bool drop_all(const struct taskset *ts, void *arg)
{
	((struct taskset *)ts)->ua_n = 0;
	return true;
}

void ua_establish_all(struct lun *l, uint16_t asc)
{
	bool reset = (asc >> 8) == (ASC_POWER_ON_RESET >> 8);

	pthread_mutex_lock(&l->lock);
	if (reset)
		pr_reset_locked(l);
	ua_establish_match_locked(l, reset ? drop_all : NULL, NULL, asc);
	pthread_mutex_unlock(&l->lock);
}

void ua_clear_nexus(struct lun *l, const void *nexus, uint16_t asc)
{
	struct taskset *ts;

	pthread_mutex_lock(&l->lock);
	ts = lun_nexus_find_locked(l, nexus);
	if (ts) {
		unsigned k = 0;

		for (unsigned i = 0; i < ts->ua_n; i++)
			if (ts->ua_q[i] != asc)
				ts->ua_q[k++] = ts->ua_q[i];
		ts->ua_n = (uint8_t)k;
		set_flag(ts);
	}
	pthread_mutex_unlock(&l->lock);
}
