/*
 * PERSISTENT RESERVE OUT (SPC-4 6.16, 5.13.5-5.13.11): the parameter list
 * is checked on the reactor (pr_out_parse), then the service action runs
 * on a state (pr_out_apply): the local one here, or with a store a copy
 * loaded from it on the store's worker (pr_store.c).
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "tcq/byteorder.h"
#include "tcq/compiler.h"
#include "tcq/scsi_proto.h"
#include "scsi/lun.h"
#include "scsi/pr.h"
#include "scsi/pr_priv.h"
#include "scsi/sdev.h"
#include "scsi/sense.h"
#include "scsi/taskset.h"

/* PROUT basic parameter list (SPC-4 6.16.3). */
#define PROUT_LEN 24
#define PROUT_SPEC_I_PT 0x08
#define PROUT_ALL_TG_PT 0x04
#define PROUT_APTPL 0x01
/* REGISTER AND MOVE parameter list (6.16.4), byte 17. */
#define PROUT_MOVE_UNREG 0x02
#define PROUT_MOVE_APTPL 0x01

static void bad_param(struct tcq_task *t, uint16_t byte, int bit)
{
	sense_set_field(t, ASC_INVALID_FIELD_IN_PARAMETER_LIST, false, byte,
			bit);
}

/* SPEC_I_PT: the TransportIDs after the basic list, all checked before
 * any is registered. Returns 0, or -1 with t's status set. */
static int register_spec(struct tcq_task *t, struct pr_state *ps,
			 const struct prout *po, const char *self)
{
	char ports[16][PR_PORT_MAX];
	unsigned np = 0;
	uint32_t off = PROUT_LEN + 4, dlen;

	if (po->len < PROUT_LEN + 4) {
		sense_set(t, SK_ILLEGAL_REQUEST,
			  ASC_PARAMETER_LIST_LENGTH_ERROR);
		return -1;
	}
	dlen = get_be32(po->p + PROUT_LEN);
	if (dlen > po->len - off) {
		sense_set(t, SK_ILLEGAL_REQUEST,
			  ASC_PARAMETER_LIST_LENGTH_ERROR);
		return -1;
	}
	while (off < PROUT_LEN + 4 + dlen) {
		uint32_t n;

		if (np == ARRAY_SIZE(ports)) {
			sense_set(t, SK_ILLEGAL_REQUEST,
				  ASC_INSUFFICIENT_REGISTRATION_RESOURCES);
			return -1;
		}
		n = pr_transport_id_parse(po->p + off,
					  PROUT_LEN + 4 + dlen - off, ports[np]);
		if (!n) {
			bad_param(t, (uint16_t)MIN(off, 0xffffu), -1);
			return -1;
		}
		/* An I_T nexus that is already registered conflicts. */
		if (pr_find_reg(ps, ports[np])) {
			pr_set_conflict(t);
			return -1;
		}
		np++;
		off += n;
	}
	if (ps->nregs + np + 1 > PR_REGS_MAX) {
		sense_set(t, SK_ILLEGAL_REQUEST,
			  ASC_INSUFFICIENT_REGISTRATION_RESOURCES);
		return -1;
	}
	for (unsigned i = 0; i < np; i++)
		if (strcasecmp(ports[i], self))
			pr_add_reg(ps, ports[i], po->sark,
				   po->flags & PROUT_ALL_TG_PT);
	return 0;
}

/* REGISTER and REGISTER AND IGNORE EXISTING KEY (SPC-4 5.13.7). Returns
 * true when the state changed. */
static bool do_register(struct tcq_task *t, struct pr_fxlist *fx,
			struct pr_state *ps, const struct prout *po,
			const char *self)
{
	struct pr_reg *r = pr_find_reg(ps, self);
	bool ignore = po->sa == PRO_REGISTER_IGNORE;

	if (!r) {
		if (!ignore && po->rk) {
			pr_set_conflict(t);
			return false;
		}
		if (!po->sark) {
			if (po->flags & PROUT_SPEC_I_PT)
				bad_param(t, 20, 3);
			return false;	/* nothing to do: GOOD */
		}
		if ((po->flags & PROUT_SPEC_I_PT) &&
		    register_spec(t, ps, po, self) < 0)
			return false;
		if (!pr_add_reg(ps, self, po->sark,
				po->flags & PROUT_ALL_TG_PT)) {
			sense_set(t, SK_ILLEGAL_REQUEST,
				  ASC_INSUFFICIENT_REGISTRATION_RESOURCES);
			return false;
		}
		return true;
	}
	if (!ignore && po->rk != r->key) {
		pr_set_conflict(t);
		return false;
	}
	if (po->flags & PROUT_SPEC_I_PT) {
		bad_param(t, 20, 3);
		return false;
	}
	if (po->sark) {
		r->key = po->sark;
		return true;
	}
	/* Unregister: a holder's reservation goes with it (for
	 * all-registrants types only with the last registrant). */
	if (ps->resv && (r->holder || (pr_type_all_reg(ps->type) &&
				       ps->nregs == 1))) {
		uint8_t type = ps->type;

		pr_remove_reg(ps, r);
		pr_drop_reservation(ps);
		if (type == PR_TYPE_WE_RO || type == PR_TYPE_EA_RO)
			pr_ua_regs(fx, ps, ASC_RESERVATIONS_RELEASED);
	} else {
		pr_remove_reg(ps, r);
	}
	return true;
}

static bool do_reserve(struct tcq_task *t, struct pr_state *ps,
		       const struct prout *po, struct pr_reg *r)
{
	if (ps->resv) {
		if (!pr_is_holder(ps, r) || ps->type != po->type)
			pr_set_conflict(t);
		return false;
	}
	ps->resv = true;
	ps->type = po->type;
	r->holder = !pr_type_all_reg(po->type);
	return false;	/* RESERVE leaves the generation alone */
}

static bool do_release(struct tcq_task *t, struct pr_fxlist *fx,
		       struct pr_state *ps, const struct prout *po,
		       struct pr_reg *r)
{
	uint8_t type = ps->type;

	if (!ps->resv || !pr_is_holder(ps, r))
		return false;	/* GOOD, nothing released */
	if (po->type != ps->type) {
		sense_set(t, SK_ILLEGAL_REQUEST, ASC_INVALID_RELEASE_OF_PR);
		return false;
	}
	pr_drop_reservation(ps);
	if (type != PR_TYPE_WE && type != PR_TYPE_EA)
		pr_ua_regs(fx, ps, ASC_RESERVATIONS_RELEASED);
	return false;
}

static bool do_clear(struct pr_fxlist *fx, struct pr_state *ps)
{
	pr_ua_regs(fx, ps, ASC_RESERVATIONS_PREEMPTED);
	pr_drop_reservation(ps);
	ps->nregs = 0;
	return true;
}

/* Removes every registration with key (every one with all) but the
 * preempting one's own; returns how many went. *self is updated: it may
 * have moved. */
static unsigned preempt_key(struct pr_fxlist *fx, struct pr_state *ps,
			    uint64_t key, bool all, struct pr_reg **self,
			    bool abort)
{
	unsigned n = 0;
	char me[PR_PORT_MAX];

	pr_copy_port(me, (*self)->port);
	for (unsigned i = 0; i < ps->nregs;) {
		struct pr_reg *r = &ps->regs[i];

		if (r == *self || (!all && r->key != key)) {
			i++;
			continue;
		}
		pr_fx_add(fx, r->port, ASC_REGISTRATIONS_PREEMPTED, abort);
		pr_remove_reg(ps, r);
		n++;
	}
	*self = pr_find_reg(ps, me);
	return n;
}

/* Preempting registrations only (no reservation moves): SERVICE ACTION
 * RESERVATION KEY 0 is invalid, a key nobody has a conflict. */
static bool preempt_registrations(struct tcq_task *t, struct pr_fxlist *fx,
				  struct pr_state *ps, const struct prout *po,
				  struct pr_reg *self)
{
	if (po->sark == 0) {
		bad_param(t, 8, -1);
		return false;
	}
	if (!preempt_key(fx, ps, po->sark, false, &self,
			 po->sa == PRO_PREEMPT_ABORT)) {
		pr_set_conflict(t);
		return false;
	}
	return true;
}

/* The preemptor reserves with the type of the CDB. */
static void take_reservation(struct pr_state *ps, const struct prout *po,
			     struct pr_reg *self)
{
	pr_drop_reservation(ps);
	ps->resv = true;
	ps->type = po->type;
	self->holder = !pr_type_all_reg(po->type);
}

/* PREEMPT and PREEMPT AND ABORT (SPC-4 5.13.11.4). With ABORT, the
 * preempted nexuses' tasks on this LUN are aborted too (each on its own
 * reactor, through the session layer). */
static bool do_preempt(struct tcq_task *t, struct pr_fxlist *fx,
		       struct pr_state *ps, const struct prout *po,
		       struct pr_reg *self)
{
	bool abort = po->sa == PRO_PREEMPT_ABORT;
	uint64_t hkey = 0;
	uint8_t old;

	if (!ps->resv || pr_type_all_reg(ps->type)) {
		if (ps->resv && po->sark == 0) {
			/* All-registrants: zero preempts everyone else and
			 * the preemptor reserves with the new type. */
			preempt_key(fx, ps, 0, true, &self, abort);
			take_reservation(ps, po, self);
			return true;
		}
		return preempt_registrations(t, fx, ps, po, self);
	}
	for (unsigned i = 0; i < ps->nregs; i++)
		if (ps->regs[i].holder)
			hkey = ps->regs[i].key;
	if (po->sark != hkey)
		return preempt_registrations(t, fx, ps, po, self);
	/* The holder's key: its registrations go, the reservation moves to
	 * the preemptor with the type of this CDB. */
	old = ps->type;
	preempt_key(fx, ps, po->sark, false, &self, abort);
	take_reservation(ps, po, self);
	if (old != po->type)
		pr_ua_regs(fx, ps, ASC_RESERVATIONS_RELEASED);
	return true;
}

/* REGISTER AND MOVE (SPC-4 5.13.8). */
static bool do_move(struct tcq_task *t, struct pr_state *ps,
		    const struct prout *po, struct pr_reg *self,
		    uint16_t rtpi)
{
	char dest[PR_PORT_MAX], me[PR_PORT_MAX];
	struct pr_reg *d;
	uint32_t tlen;

	if (!ps->resv || pr_type_all_reg(ps->type) || !self->holder) {
		pr_set_conflict(t);
		return false;
	}
	if (!po->sark) {
		bad_param(t, 8, -1);
		return false;
	}
	if (get_be16(po->p + 18) != rtpi) {
		bad_param(t, 18, -1);
		return false;
	}
	tlen = get_be32(po->p + 20);
	if (tlen > po->len - PROUT_LEN) {
		sense_set(t, SK_ILLEGAL_REQUEST,
			  ASC_PARAMETER_LIST_LENGTH_ERROR);
		return false;
	}
	if (!pr_transport_id_parse(po->p + PROUT_LEN, tlen, dest) ||
	    pr_port_match(self->port, dest) || pr_port_match(dest, self->port)) {
		bad_param(t, PROUT_LEN, -1);
		return false;
	}
	pr_copy_port(me, self->port);
	d = pr_find_reg(ps, dest);
	if (!d && !(d = pr_add_reg(ps, dest, po->sark, false))) {
		sense_set(t, SK_ILLEGAL_REQUEST,
			  ASC_INSUFFICIENT_REGISTRATION_RESOURCES);
		return false;
	}
	d->key = po->sark;
	self = pr_find_reg(ps, me);
	self->holder = false;
	d->holder = true;
	if (po->p[17] & PROUT_MOVE_UNREG)
		pr_remove_reg(ps, self);
	return true;
}

bool pr_out_parse(struct tcq_task *t, struct prout *po)
{
	memset(po, 0, sizeof(*po));
	po->sa = t->req.sa;
	po->scope = t->cdb[2] >> 4;
	po->type = t->cdb[2] & 0x0f;
	po->p = t->buf;
	po->len = t->req.data_out_len;
	if (po->len < PROUT_LEN || !t->buf || t->buf_len < po->len) {
		sense_set(t, SK_ILLEGAL_REQUEST,
			  ASC_PARAMETER_LIST_LENGTH_ERROR);
		return false;
	}
	po->rk = get_be64(po->p);
	po->sark = get_be64(po->p + 8);
	po->flags = po->p[20];
	/* Only REGISTER with SPEC_I_PT and REGISTER AND MOVE carry more
	 * than the basic 24 bytes (SPC-4 6.16.3). */
	if (po->len != PROUT_LEN && po->sa != PRO_REGISTER_MOVE &&
	    !(po->sa == PRO_REGISTER && (po->flags & PROUT_SPEC_I_PT))) {
		sense_set(t, SK_ILLEGAL_REQUEST,
			  ASC_PARAMETER_LIST_LENGTH_ERROR);
		return false;
	}
	if (po->sa == PRO_RESERVE || po->sa == PRO_RELEASE ||
	    po->sa == PRO_PREEMPT || po->sa == PRO_PREEMPT_ABORT ||
	    po->sa == PRO_REGISTER_MOVE) {
		if (po->scope != 0) {
			sense_invalid_cdb(t, 2, 7);
			return false;
		}
		if (!pr_type_valid(po->type)) {
			sense_invalid_cdb(t, 2, 3);
			return false;
		}
	}
	if (po->sa != PRO_REGISTER_MOVE && (po->flags & PROUT_ALL_TG_PT) &&
	    po->sa != PRO_REGISTER && po->sa != PRO_REGISTER_IGNORE) {
		bad_param(t, 20, 2);
		return false;
	}
	return true;
}

/* The service actions a registered nexus with the right key may run. */
static bool apply_registered(struct tcq_task *t, struct lun *l,
			     struct pr_state *ps, const struct prout *po,
			     struct pr_fxlist *fx, struct pr_reg *r)
{
	bool changed = false;

	switch (po->sa) {
	case PRO_RESERVE:
		return do_reserve(t, ps, po, r);
	case PRO_RELEASE:
		return do_release(t, fx, ps, po, r);
	case PRO_CLEAR:
		return do_clear(fx, ps);
	case PRO_PREEMPT: case PRO_PREEMPT_ABORT:
		return do_preempt(t, fx, ps, po, r);
	case PRO_REGISTER_MOVE:
		changed = do_move(t, ps, po, r, l->rel_port_id);
		if (changed)
			ps->aptpl = po->p[17] & PROUT_MOVE_APTPL;
		return changed;
	}
	return false;
}

bool pr_out_apply(struct tcq_task *t, struct lun *l, struct pr_state *ps,
		  const struct prout *po, struct pr_fxlist *fx)
{
	const char *self = sdev_initiator_port(t->lun, t->nexus);
	bool changed = false;
	struct pr_reg *r;

	if (po->sa == PRO_REGISTER || po->sa == PRO_REGISTER_IGNORE) {
		changed = do_register(t, fx, ps, po, self);
		if (changed)
			ps->aptpl = po->flags & PROUT_APTPL;
	} else {
		r = pr_find_reg(ps, self);
		if (!r || r->key != po->rk)
			pr_set_conflict(t);
		else
			changed = apply_registered(t, l, ps, po, fx, r);
	}
	if (changed)
		ps->generation++;
	return changed;
}

void pr_out(struct tcq_task *t)
{
	struct lun *l = t->lun;
	struct pr_state *ps = l->pr;
	struct pr_fxlist *fx;
	struct prout po;
	bool aptpl;

	if (!pr_out_parse(t, &po)) {
		taskset_complete(t);
		return;
	}
	if (l->store) {
		pr_store_submit(t);
		return;
	}
	fx = malloc(sizeof(*fx));
	if (!fx) {
		sense_set(t, SK_HARDWARE_ERROR, ASC_INTERNAL_TARGET_FAILURE);
		taskset_complete(t);
		return;
	}
	fx->n = 0;
	pthread_mutex_lock(&l->lock);
	aptpl = ps->aptpl;
	pr_out_apply(t, l, ps, &po, fx);
	pr_fx_apply_locked(l, fx, t->nexus);
	pr_update_flag(l);
	/* Persist every change of what APTPL covers; the reservation
	 * itself changes without a generation bump, so save then too. */
	if (t->status == SAM_STAT_GOOD && (ps->aptpl || aptpl) &&
	    pr_aptpl_save(l, ps) < 0)
		sense_set(t, SK_HARDWARE_ERROR, ASC_INTERNAL_TARGET_FAILURE);
	pthread_mutex_unlock(&l->lock);
	pr_fx_abort(l, fx, t->nexus);
	free(fx);
	taskset_complete(t);
}
