/*
 * The reservation state of a LUN and its rules (see pr.h): who is
 * registered, who holds, what conflicts with a reservation, and the unit
 * attentions and aborts a change owes to the nexuses of other initiator
 * ports. The commands that change it are in pr_spc2.c and pr_out.c.
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "tcq/scsi_proto.h"
#include "scsi/lun.h"
#include "scsi/opcodes.h"
#include "scsi/pr.h"
#include "scsi/pr_priv.h"
#include "scsi/sdev.h"
#include "scsi/tmf.h"
#include "scsi/taskset.h"
#include "scsi/ua.h"

void pr_copy_port(char *dst, const char *src)
{
	size_t n = strnlen(src, PR_PORT_MAX - 1);

	memcpy(dst, src, n);
	dst[n] = 0;
}

int pr_lun_init(struct lun *l)
{
	l->pr = calloc(1, sizeof(struct pr_state));
	return l->pr ? 0 : -1;
}

void pr_lun_free(struct lun *l)
{
	free(l->pr);
	l->pr = NULL;
}

void pr_update_flag(struct lun *l)
{
	const struct pr_state *ps = l->pr;

	__atomic_store_n(&l->resv_active, ps->resv || ps->r2,
			 __ATOMIC_RELEASE);
}

/* ---- types ------------------------------------------------------------ */

bool pr_type_valid(uint8_t type)
{
	return type == PR_TYPE_WE || type == PR_TYPE_EA ||
	       type == PR_TYPE_WE_RO || type == PR_TYPE_EA_RO ||
	       type == PR_TYPE_WE_AR || type == PR_TYPE_EA_AR;
}

bool pr_type_all_reg(uint8_t type)
{
	return type == PR_TYPE_WE_AR || type == PR_TYPE_EA_AR;
}

/* Registrants-only and all-registrants: registrants have full access. */
static bool type_reg_access(uint8_t type)
{
	return type >= PR_TYPE_WE_RO;
}

static bool type_write_excl(uint8_t type)
{
	return type == PR_TYPE_WE || type == PR_TYPE_WE_RO ||
	       type == PR_TYPE_WE_AR;
}

/* ---- registrations and holders ---------------------------------------- */

/* iSCSI names compare case-insensitively; a name-only registration
 * (TransportID format 00b) covers every ISID of that name. */
bool pr_port_match(const char *reg, const char *port)
{
	size_t n;

	if (strcasecmp(reg, port) == 0)
		return true;
	if (strstr(reg, ",i,0x"))
		return false;
	n = strlen(reg);
	return strncasecmp(reg, port, n) == 0 && strncmp(port + n, ",i,", 3) == 0;
}

struct pr_reg *pr_find_reg(struct pr_state *ps, const char *port)
{
	for (unsigned i = 0; i < ps->nregs; i++)
		if (pr_port_match(ps->regs[i].port, port))
			return &ps->regs[i];
	return NULL;
}

struct pr_reg *pr_add_reg(struct pr_state *ps, const char *port,
			  uint64_t key, bool all_tg_pt)
{
	struct pr_reg *r;

	if (ps->nregs == PR_REGS_MAX)
		return NULL;
	r = &ps->regs[ps->nregs++];
	memset(r, 0, sizeof(*r));
	pr_copy_port(r->port, port);
	r->key = key;
	r->all_tg_pt = all_tg_pt;
	return r;
}

void pr_remove_reg(struct pr_state *ps, struct pr_reg *r)
{
	unsigned i = (unsigned)(r - ps->regs);

	ps->nregs--;
	memmove(&ps->regs[i], &ps->regs[i + 1],
		(ps->nregs - i) * sizeof(*r));
}

bool pr_is_holder(const struct pr_state *ps, const struct pr_reg *r)
{
	return ps->resv && r && (pr_type_all_reg(ps->type) || r->holder);
}

/* The reservation ends when its holder goes (or, for all-registrants
 * types, the last registrant). */
void pr_drop_reservation(struct pr_state *ps)
{
	ps->resv = false;
	ps->type = 0;
	for (unsigned i = 0; i < ps->nregs; i++)
		ps->regs[i].holder = false;
}

void pr_r2_clear(struct pr_state *ps)
{
	ps->r2 = false;
	ps->r2_nexus = NULL;
	ps->r2_port[0] = 0;
	ps->r2_rtpi = 0;
	ps->r2_gw = 0;
}

/* ---- unit attentions and aborts owed ---------------------------------- */

/* Recorded while the rules run; applied once the change stands. */
void pr_fx_add(struct pr_fxlist *fx, const char *port, uint16_t asc,
	       bool abort)
{
	struct pr_fx *f;

	if (!fx || fx->n == PR_FX_MAX)
		return;	/* cannot happen: PR_FX_MAX covers two passes */
	f = &fx->fx[fx->n++];
	pr_copy_port(f->port, port);
	f->asc = asc;
	f->abort = abort;
}

void pr_ua_regs(struct pr_fxlist *fx, const struct pr_state *ps,
		uint16_t asc)
{
	for (unsigned i = 0; i < ps->nregs; i++)
		pr_fx_add(fx, ps->regs[i].port, asc, false);
}

struct ua_to {
	const char *port;	/* the registration's port name */
	const void *except;	/* the nexus that caused it */
};

static bool match_port(const struct taskset *ts, void *arg)
{
	const struct ua_to *u = arg;

	return ts->nexus != u->except &&
	       pr_port_match(u->port, sdev_initiator_port(ts->lun, ts->nexus));
}

void pr_fx_apply_locked(struct lun *l, const struct pr_fxlist *fx,
			const void *except)
{
	for (unsigned i = 0; fx && i < fx->n; i++) {
		struct ua_to u = { fx->fx[i].port, except };

		ua_establish_match_locked(l, match_port, &u, fx->fx[i].asc);
	}
}

void pr_fx_abort(struct lun *l, const struct pr_fxlist *fx,
		 const void *except)
{
	for (unsigned i = 0; fx && i < fx->n; i++)
		if (fx->fx[i].abort)
			tmf_abort_port(l, fx->fx[i].port, except);
}

/* ---- reservation conflicts -------------------------------------------- */

/* Whether t conflicts (SPC-4 5.13.1 table 66 for persistent
 * reservations, SPC-2 5.5.1 for RESERVE(6/10)), from its command's
 * reservation class and flags in the command table. */
static bool conflict_locked(struct pr_state *ps, const struct tcq_task *t)
{
	const struct opc_entry *e = t->req.cmd;
	const struct pr_reg *r;

	if (ps->r2 && ps->r2_nexus != t->nexus)
		return !(e->flags & OPC_F_SPC2_OK);
	if (!ps->resv || e->resv == OPC_RESV_ALLOWED)
		return false;
	r = pr_find_reg(ps, sdev_initiator_port(t->lun, t->nexus));
	if (pr_is_holder(ps, r) || (r && type_reg_access(ps->type)))
		return false;
	return !(type_write_excl(ps->type) && e->resv == OPC_RESV_READ);
}

bool pr_conflict(struct tcq_task *t)
{
	struct lun *l = t->lun;
	bool c;

	/* Shared: RESERVE / RELEASE decide against the store's state (the
	 * local copy may lag a release made through another gateway). */
	if (l->store && (t->req.cmd->flags & OPC_F_SPC2_RESV))
		return false;
	pthread_mutex_lock(&l->lock);
	c = l->pr && conflict_locked(l->pr, t);
	pthread_mutex_unlock(&l->lock);
	return c;
}

/* ---- the I_T nexus and the LUN around it ------------------------------ */

void pr_nexus_lost(struct lun *l, const void *nexus)
{
	struct pr_state *ps = l->pr;
	char port[PR_PORT_MAX];
	bool shared = false;

	pthread_mutex_lock(&l->lock);
	if (ps && ps->r2 && ps->r2_nexus == nexus) {
		if (l->store) {
			/* The store releases it (other gateways learn it
			 * from there); meanwhile no nexus here holds it. */
			ps->r2_nexus = NULL;
			pr_copy_port(port, ps->r2_port);
			shared = true;
		} else {
			pr_r2_clear(ps);
			pr_update_flag(l);
		}
	}
	pthread_mutex_unlock(&l->lock);
	if (shared)
		pr_store_nexus_lost(l, port);
}

void pr_reset_locked(struct lun *l)
{
	struct pr_state *ps = l->pr;

	if (ps && ps->r2) {
		pr_r2_clear(ps);
		pr_update_flag(l);
	}
}
