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
#include "scsi/exec.h"
#include "scsi/lun.h"
#include "scsi/pr.h"
#include "scsi/pr_priv.h"
#include "scsi/sdev.h"
#include "scsi/sense.h"

/* PROUT basic parameter list (SPC-4 6.16.3). */
#define PROUT_LEN 24
#define PROUT_SPEC_I_PT 0x08
#define PROUT_ALL_TG_PT 0x04
#define PROUT_APTPL 0x01
/* REGISTER AND MOVE parameter list (6.16.4), byte 17. */
#define PROUT_MOVE_UNREG 0x02
#define PROUT_MOVE_APTPL 0x01

static struct exec_rc list_len_error(void)
{
	return exec_sense(SK_ILLEGAL_REQUEST, ASC_PARAMETER_LIST_LENGTH_ERROR);
}

static struct exec_rc no_resources(void)
{
	return exec_sense(SK_ILLEGAL_REQUEST,
			  ASC_INSUFFICIENT_REGISTRATION_RESOURCES);
}

/* SPEC_I_PT: the TransportIDs after the basic list, all checked before
 * any is registered. */
static struct exec_rc register_spec(struct pr_state *ps,
				    const struct prout *po, const char *self)
{
	char ports[16][PR_PORT_MAX];
	unsigned np = 0;
	uint32_t off = PROUT_LEN + 4, dlen;

	if (po->len < PROUT_LEN + 4)
		return list_len_error();
	dlen = get_be32(po->p + PROUT_LEN);
	if (dlen > po->len - off)
		return list_len_error();
	while (off < PROUT_LEN + 4 + dlen) {
		uint32_t n;

		if (np == ARRAY_SIZE(ports))
			return no_resources();
		n = pr_transport_id_parse(po->p + off,
					  PROUT_LEN + 4 + dlen - off, ports[np]);
		if (!n)
			return exec_param_field((uint16_t)MIN(off, 0xffffu),
						-1);
		/* An I_T nexus that is already registered conflicts. */
		if (pr_find_reg(ps, ports[np]))
			return exec_conflict();
		np++;
		off += n;
	}
	if (ps->nregs + np + 1 > PR_REGS_MAX)
		return no_resources();
	for (unsigned i = 0; i < np; i++)
		if (strcasecmp(ports[i], self))
			pr_add_reg(ps, ports[i], po->sark,
				   po->flags & PROUT_ALL_TG_PT);
	return EXEC_OK;
}

/* REGISTER and REGISTER AND IGNORE EXISTING KEY (SPC-4 5.13.7). Returns
 * true when the state changed; a failure goes to *rc. */
static bool do_register(struct exec_rc *rc, struct pr_fxlist *fx,
			struct pr_state *ps, const struct prout *po,
			const char *self)
{
	struct pr_reg *r = pr_find_reg(ps, self);
	bool ignore = po->sa == PRO_REGISTER_IGNORE;

	if (!r) {
		if (!ignore && po->rk) {
			*rc = exec_conflict();
			return false;
		}
		if (!po->sark) {
			if (po->flags & PROUT_SPEC_I_PT)
				*rc = exec_param_field(20, 3);
			return false;	/* nothing to do: GOOD */
		}
		if (po->flags & PROUT_SPEC_I_PT) {
			*rc = register_spec(ps, po, self);
			if (exec_failed(*rc))
				return false;
		}
		if (!pr_add_reg(ps, self, po->sark,
				po->flags & PROUT_ALL_TG_PT)) {
			*rc = no_resources();
			return false;
		}
		return true;
	}
	if (!ignore && po->rk != r->key) {
		*rc = exec_conflict();
		return false;
	}
	if (po->flags & PROUT_SPEC_I_PT) {
		*rc = exec_param_field(20, 3);
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

static bool do_reserve(struct exec_rc *rc, struct pr_state *ps,
		       const struct prout *po, struct pr_reg *r)
{
	if (ps->resv) {
		if (!pr_is_holder(ps, r) || ps->type != po->type)
			*rc = exec_conflict();
		return false;
	}
	ps->resv = true;
	ps->type = po->type;
	r->holder = !pr_type_all_reg(po->type);
	return false;	/* RESERVE leaves the generation alone */
}

static bool do_release(struct exec_rc *rc, struct pr_fxlist *fx,
		       struct pr_state *ps, const struct prout *po,
		       struct pr_reg *r)
{
	uint8_t type = ps->type;

	if (!ps->resv || !pr_is_holder(ps, r))
		return false;	/* GOOD, nothing released */
	if (po->type != ps->type) {
		*rc = exec_sense(SK_ILLEGAL_REQUEST, ASC_INVALID_RELEASE_OF_PR);
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
static bool preempt_registrations(struct exec_rc *rc, struct pr_fxlist *fx,
				  struct pr_state *ps, const struct prout *po,
				  struct pr_reg *self)
{
	if (po->sark == 0) {
		*rc = exec_param_field(8, -1);
		return false;
	}
	if (!preempt_key(fx, ps, po->sark, false, &self,
			 po->sa == PRO_PREEMPT_ABORT)) {
		*rc = exec_conflict();
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
static bool do_preempt(struct exec_rc *rc, struct pr_fxlist *fx,
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
		return preempt_registrations(rc, fx, ps, po, self);
	}
	for (unsigned i = 0; i < ps->nregs; i++)
		if (ps->regs[i].holder)
			hkey = ps->regs[i].key;
	if (po->sark != hkey)
		return preempt_registrations(rc, fx, ps, po, self);
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
static bool do_move(struct exec_rc *rc, struct pr_state *ps,
		    const struct prout *po, struct pr_reg *self,
		    uint16_t rtpi)
{
	char dest[PR_PORT_MAX], me[PR_PORT_MAX];
	struct pr_reg *d;
	uint32_t tlen;

	if (!ps->resv || pr_type_all_reg(ps->type) || !self->holder) {
		*rc = exec_conflict();
		return false;
	}
	if (!po->sark) {
		*rc = exec_param_field(8, -1);
		return false;
	}
	if (get_be16(po->p + 18) != rtpi) {
		*rc = exec_param_field(18, -1);
		return false;
	}
	tlen = get_be32(po->p + 20);
	if (tlen > po->len - PROUT_LEN) {
		*rc = list_len_error();
		return false;
	}
	if (!pr_transport_id_parse(po->p + PROUT_LEN, tlen, dest) ||
	    pr_port_match(self->port, dest) || pr_port_match(dest, self->port)) {
		*rc = exec_param_field(PROUT_LEN, -1);
		return false;
	}
	pr_copy_port(me, self->port);
	d = pr_find_reg(ps, dest);
	if (!d && !(d = pr_add_reg(ps, dest, po->sark, false))) {
		*rc = no_resources();
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

struct exec_rc pr_out_parse(const struct tcq_task *t, struct prout *po)
{
	memset(po, 0, sizeof(*po));
	po->sa = t->req.sa;
	po->scope = t->cdb[2] >> 4;
	po->type = t->cdb[2] & 0x0f;
	po->p = t->buf;
	po->len = t->req.data_out_len;
	if (po->len < PROUT_LEN || !t->buf || t->buf_len < po->len)
		return list_len_error();
	po->rk = get_be64(po->p);
	po->sark = get_be64(po->p + 8);
	po->flags = po->p[20];
	/* Only REGISTER with SPEC_I_PT and REGISTER AND MOVE carry more
	 * than the basic 24 bytes (SPC-4 6.16.3). */
	if (po->len != PROUT_LEN && po->sa != PRO_REGISTER_MOVE &&
	    !(po->sa == PRO_REGISTER && (po->flags & PROUT_SPEC_I_PT)))
		return list_len_error();
	if (po->sa == PRO_RESERVE || po->sa == PRO_RELEASE ||
	    po->sa == PRO_PREEMPT || po->sa == PRO_PREEMPT_ABORT ||
	    po->sa == PRO_REGISTER_MOVE) {
		if (po->scope != 0)
			return exec_cdb_field(2, 7);
		if (!pr_type_valid(po->type))
			return exec_cdb_field(2, 3);
	}
	if (po->sa != PRO_REGISTER_MOVE && (po->flags & PROUT_ALL_TG_PT) &&
	    po->sa != PRO_REGISTER && po->sa != PRO_REGISTER_IGNORE)
		return exec_param_field(20, 2);
	return EXEC_OK;
}

/* The service actions a registered nexus with the right key may run. */
static bool apply_registered(struct exec_rc *rc, struct lun *l,
			     struct pr_state *ps, const struct prout *po,
			     struct pr_fxlist *fx, struct pr_reg *r)
{
	bool changed = false;

	switch (po->sa) {
	case PRO_RESERVE:
		return do_reserve(rc, ps, po, r);
	case PRO_RELEASE:
		return do_release(rc, fx, ps, po, r);
	case PRO_CLEAR:
		return do_clear(fx, ps);
	case PRO_PREEMPT: case PRO_PREEMPT_ABORT:
		return do_preempt(rc, fx, ps, po, r);
	case PRO_REGISTER_MOVE:
		changed = do_move(rc, ps, po, r, l->rel_port_id);
		if (changed)
			ps->aptpl = po->p[17] & PROUT_MOVE_APTPL;
		return changed;
	}
	return false;
}

struct exec_rc pr_out_apply(const struct tcq_task *t, struct lun *l,
			    struct pr_state *ps, const struct prout *po,
			    struct pr_fxlist *fx)
{
	const char *self = sdev_initiator_port(t->lun, t->nexus);
	struct exec_rc rc = EXEC_OK;
	bool changed = false;
	struct pr_reg *r;

	if (po->sa == PRO_REGISTER || po->sa == PRO_REGISTER_IGNORE) {
		changed = do_register(&rc, fx, ps, po, self);
		if (changed)
			ps->aptpl = po->flags & PROUT_APTPL;
	} else {
		r = pr_find_reg(ps, self);
		if (!r || r->key != po->rk)
			rc = exec_conflict();
		else
			changed = apply_registered(&rc, l, ps, po, fx, r);
	}
	if (changed)
		ps->generation++;
	return rc;
}

struct exec_rc pr_out(struct tcq_task *t)
{
	struct lun *l = t->lun;
	struct pr_state *ps = l->pr;
	struct pr_fxlist *fx;
	struct prout po;
	struct exec_rc rc = pr_out_parse(t, &po);
	bool aptpl;

	if (exec_failed(rc))
		return rc;
	if (l->store)
		return pr_store_submit(t);
	fx = malloc(sizeof(*fx));
	if (!fx)
		return exec_target_failure();
	fx->n = 0;
	pthread_mutex_lock(&l->lock);
	aptpl = ps->aptpl;
	rc = pr_out_apply(t, l, ps, &po, fx);
	pr_fx_apply_locked(l, fx, t->nexus);
	pr_update_flag(l);
	/* Persist every change of what APTPL covers; the reservation
	 * itself changes without a generation bump, so save then too. */
	if (!exec_failed(rc) && (ps->aptpl || aptpl) &&
	    pr_aptpl_save(l, ps) < 0)
		rc = exec_target_failure();
	pthread_mutex_unlock(&l->lock);
	pr_fx_abort(l, fx, t->nexus);
	free(fx);
	return exec_failed(rc) ? rc : exec_good(t);
}
