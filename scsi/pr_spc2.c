/*
 * RESERVE and RELEASE (6/10), the SPC-2 reservations, next to persistent
 * ones with Compatible Reservation Handling (CRH=1, SPC-4 5.13.3). The
 * reservation belongs to the I_T nexus that made it.
 */
#include "tcq/scsi_proto.h"
#include "scsi/exec.h"
#include "scsi/lun.h"
#include "scsi/pr.h"
#include "scsi/pr_priv.h"
#include "scsi/sdev.h"

/* With a store, ps is a copy whose r2_nexus is the local holder's (or
 * NULL): the holder is the one of this gateway with t's nexus. */
struct exec_rc pr_reserve_apply(const struct tcq_task *t, struct lun *l,
				struct pr_state *ps, bool *changed)
{
	const char *self = sdev_initiator_port(t->lun, t->nexus);

	*changed = false;
	if (ps->resv) {
		/* CRH: a persistent reservation holder gets GOOD and nothing
		 * changes; anyone else conflicts (SPC-4 5.13.3). */
		if (!pr_is_holder(ps, pr_find_reg(ps, self)))
			return exec_conflict();
		return EXEC_OK;
	}
	if (ps->r2 && ps->r2_nexus != t->nexus)
		return exec_conflict();
	if (ps->r2)
		return EXEC_OK;	/* held by t's nexus already */
	ps->r2 = true;
	ps->r2_nexus = t->nexus;
	pr_copy_port(ps->r2_port, self);
	ps->r2_rtpi = l->rel_port_id;
	ps->r2_gw = pr_gateway_id();
	*changed = true;
	return EXEC_OK;
}

bool pr_release_apply(const struct tcq_task *t, struct pr_state *ps)
{
	/* Releasing what another nexus holds, or nothing, is GOOD and has
	 * no effect (SPC-2 7.17); so is RELEASE under a PR (CRH). */
	if (!ps->r2 || ps->r2_nexus != t->nexus)
		return false;
	pr_r2_clear(ps);
	return true;
}

/* RESERVE or RELEASE: apply, on the store's worker when there is one. */
static struct exec_rc reserve_or_release(struct tcq_task *t, bool reserve)
{
	struct lun *l = t->lun;
	struct exec_rc rc = EXEC_OK;
	bool changed;

	if (l->store)
		return pr_store_submit(t);
	pthread_mutex_lock(&l->lock);
	if (reserve)
		rc = pr_reserve_apply(t, l, l->pr, &changed);
	else
		changed = pr_release_apply(t, l->pr);
	if (changed)
		pr_update_flag(l);
	pthread_mutex_unlock(&l->lock);
	return exec_failed(rc) ? rc : exec_good(t);
}

struct exec_rc pr_reserve(struct tcq_task *t)
{
	return reserve_or_release(t, true);
}

struct exec_rc pr_release(struct tcq_task *t)
{
	return reserve_or_release(t, false);
}
