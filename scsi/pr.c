/* Persistent reservations and RESERVE/RELEASE (see pr.h). */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#include "tcq/byteorder.h"
#include "tcq/compiler.h"
#include "tcq/log.h"
#include "tcq/scsi_proto.h"
#include "scsi/lun.h"
#include "scsi/opcodes.h"
#include "scsi/pr.h"
#include "scsi/pr_priv.h"
#include "scsi/sdev.h"
#include "backend/lun_store.h"
#include "scsi/sense.h"
#include "scsi/spc.h"
#include "scsi/taskset.h"
#include "scsi/ua.h"

/* PROUT basic parameter list (SPC-4 6.16.3). */
#define PROUT_LEN 24
#define PROUT_SPEC_I_PT 0x08
#define PROUT_ALL_TG_PT 0x04
#define PROUT_APTPL 0x01

/* Port names are cut to PR_PORT_MAX - 1 bytes (longer ones cannot be
 * iSCSI names). */
static void copy_port(char *dst, const char *src)
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

static void update_flag(struct lun *l, const struct pr_state *ps)
{
	__atomic_store_n(&l->resv_active, ps->resv || ps->r2,
			 __ATOMIC_RELEASE);
}

void pr_update_flag(struct lun *l)
{
	update_flag(l, l->pr);
}

/* The SPC-2 reservation ends (release, reset, nexus loss). */
static void r2_clear(struct pr_state *ps)
{
	ps->r2 = false;
	ps->r2_nexus = NULL;
	ps->r2_port[0] = 0;
	ps->r2_rtpi = 0;
	ps->r2_gw = 0;
}

static bool type_valid(uint8_t type)
{
	return type == PR_TYPE_WE || type == PR_TYPE_EA ||
	       type == PR_TYPE_WE_RO || type == PR_TYPE_EA_RO ||
	       type == PR_TYPE_WE_AR || type == PR_TYPE_EA_AR;
}

static bool type_all_reg(uint8_t type)
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

/* Does a registration's initiator port name denote port? iSCSI names
 * compare case-insensitively; a name-only registration (TransportID
 * format 00b) covers every ISID of that name. */
static bool port_match(const char *reg, const char *port)
{
	size_t n;

	if (strcasecmp(reg, port) == 0)
		return true;
	if (strstr(reg, ",i,0x"))
		return false;
	n = strlen(reg);
	return strncasecmp(reg, port, n) == 0 && strncmp(port + n, ",i,", 3) == 0;
}

static struct pr_reg *find_reg(struct pr_state *ps, const char *port)
{
	for (unsigned i = 0; i < ps->nregs; i++)
		if (port_match(ps->regs[i].port, port))
			return &ps->regs[i];
	return NULL;
}

static bool is_holder(const struct pr_state *ps, const struct pr_reg *r)
{
	return ps->resv && r && (type_all_reg(ps->type) || r->holder);
}

static void remove_reg(struct pr_state *ps, struct pr_reg *r)
{
	unsigned i = (unsigned)(r - ps->regs);

	ps->nregs--;
	memmove(&ps->regs[i], &ps->regs[i + 1],
		(ps->nregs - i) * sizeof(*r));
}

/* Reservation ends when its holder goes (or, for all-registrants types,
 * the last registrant). */
static void drop_reservation(struct pr_state *ps)
{
	ps->resv = false;
	ps->type = 0;
	for (unsigned i = 0; i < ps->nregs; i++)
		ps->regs[i].holder = false;
}

/* ---- unit attentions to registrants ----------------------------------- */

/* Records what r's nexuses are owed; applied once the change stands. */
static void fx_add(struct pr_fxlist *fx, const char *port, uint16_t asc,
		   bool abort)
{
	struct pr_fx *f;

	if (!fx || fx->n == PR_FX_MAX)
		return;	/* cannot happen: PR_FX_MAX covers two passes */
	f = &fx->fx[fx->n++];
	copy_port(f->port, port);
	f->asc = asc;
	f->abort = abort;
}

struct ua_to {
	const char *port;	/* the registration's port name */
	const void *except;	/* the nexus that caused it */
};

static bool match_port(const struct taskset *ts, void *arg)
{
	const struct ua_to *u = arg;

	return ts->nexus != u->except &&
	       port_match(u->port, sdev_initiator_port(ts->lun, ts->nexus));
}

void pr_fx_apply_locked(struct lun *l, const struct pr_fxlist *fx,
			const void *except)
{
	for (unsigned i = 0; fx && i < fx->n; i++) {
		struct ua_to u = { fx->fx[i].port, except };

		ua_establish_match_locked(l, match_port, &u, fx->fx[i].asc);
		if (fx->fx[i].abort)
			sdev_abort_tasks(l, fx->fx[i].port, except);
	}
}

/* To every registrant except the nexus of the command. */
static void ua_regs(struct pr_fxlist *fx, struct pr_state *ps, uint16_t asc)
{
	for (unsigned i = 0; i < ps->nregs; i++)
		fx_add(fx, ps->regs[i].port, asc, false);
}

/* ---- APTPL: the state file -------------------------------------------- */

int pr_state_path(const struct lun *l, const char *dir, char *out,
		  size_t outlen)
{
	char name[SDEV_NAME_MAX];
	const char *tn = l->dev && l->dev->name[0] ? l->dev->name : "target";
	size_t i;
	int n;

	for (i = 0; tn[i] && i < sizeof(name) - 1; i++)
		name[i] = isalnum((unsigned char)tn[i]) || tn[i] == '.' ||
			  tn[i] == '-' ? tn[i] : '_';
	name[i] = 0;
	n = snprintf(out, outlen, "%s/%s-lun%llu.pr",
		     dir && *dir ? dir : PR_DEFAULT_STATE_DIR, name,
		     (unsigned long long)l->id);
	return n < 0 || (size_t)n >= outlen ? -1 : 0;
}

static const char *state_dir(const struct lun *l)
{
	const char *d = l->dev ? l->dev->state_dir : NULL;

	return d && *d ? d : PR_DEFAULT_STATE_DIR;
}

/* Writes (APTPL) or removes (no APTPL) the file; lun->lock held. */
static int pr_save(struct lun *l, struct pr_state *ps)
{
	char path[512], tmp[520];
	FILE *f;
	int rc = 0;

	if (l->store)	/* the store is the persistent copy */
		return 0;
	if (pr_state_path(l, state_dir(l), path, sizeof(path)) < 0)
		return -1;
	if (!ps->aptpl) {
		if (unlink(path) < 0 && errno != ENOENT)
			log_warn("pr: %s: %s", path, strerror(errno));
		return 0;
	}
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "w");
	if (!f) {
		log_err("pr: APTPL: %s: %s", tmp, strerror(errno));
		return -1;
	}
	fprintf(f, "tcq-pr 1\ngeneration %u\n", ps->generation);
	if (ps->resv)
		fprintf(f, "reservation %u\n", ps->type);
	for (unsigned i = 0; i < ps->nregs; i++)
		fprintf(f, "reg %016llx %d %d %s\n",
			(unsigned long long)ps->regs[i].key,
			ps->regs[i].all_tg_pt, ps->regs[i].holder,
			ps->regs[i].port);
	if (fflush(f) || fsync(fileno(f)))
		rc = -1;
	if (fclose(f))
		rc = -1;
	if (rc == 0 && rename(tmp, path) < 0)
		rc = -1;
	if (rc < 0) {
		log_err("pr: APTPL: %s: %s", path, strerror(errno));
		unlink(tmp);
	}
	return rc;
}

int pr_load(struct lun *l, const char *dir, char *err, size_t errlen)
{
	struct pr_state *ps = l->pr, nps;
	char path[512], line[PR_PORT_MAX + 64];
	unsigned lineno = 0, v;
	FILE *f;

	if (!ps || pr_state_path(l, dir, path, sizeof(path)) < 0) {
		snprintf(err, errlen, "pr: no state for LUN %llu",
			 (unsigned long long)l->id);
		return -1;
	}
	f = fopen(path, "r");
	if (!f) {
		if (errno == ENOENT)
			return 0;
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	memset(&nps, 0, sizeof(nps));
	nps.aptpl = true;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long key;
		int atp, hold, off = 0;

		lineno++;
		line[strcspn(line, "\n")] = 0;
		if (lineno == 1) {
			if (strcmp(line, "tcq-pr 1"))
				goto bad;
		} else if (sscanf(line, "generation %u", &v) == 1) {
			nps.generation = v;
		} else if (sscanf(line, "reservation %u", &v) == 1) {
			if (!type_valid((uint8_t)v) || v > 0xff)
				goto bad;
			nps.resv = true;
			nps.type = (uint8_t)v;
		} else if (sscanf(line, "reg %llx %d %d %n", &key, &atp, &hold,
				  &off) == 3 && off > 0) {
			struct pr_reg *r;

			if (nps.nregs == PR_REGS_MAX || !line[off] ||
			    strlen(line + off) >= PR_PORT_MAX)
				goto bad;
			r = &nps.regs[nps.nregs++];
			r->key = key;
			r->all_tg_pt = atp;
			r->holder = hold;
			copy_port(r->port, line + off);
		} else if (line[0]) {
			goto bad;
		}
	}
	fclose(f);
	pthread_mutex_lock(&l->lock);
	r2_clear(&nps);
	*ps = nps;
	update_flag(l, ps);
	pthread_mutex_unlock(&l->lock);
	log_info("pr: %s: %u registration%s, %s", path, nps.nregs,
		 nps.nregs == 1 ? "" : "s",
		 nps.resv ? "reserved" : "not reserved");
	return 0;
bad:
	fclose(f);
	snprintf(err, errlen, "%s:%u: not a tcq reservation state file", path,
		 lineno);
	return -1;
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
	r = find_reg(ps, sdev_initiator_port(t->lun, t->nexus));
	if (is_holder(ps, r) || (r && type_reg_access(ps->type)))
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
			copy_port(port, ps->r2_port);
			shared = true;
		} else {
			r2_clear(ps);
			update_flag(l, ps);
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
		r2_clear(ps);
		update_flag(l, ps);
	}
}

/* ---- RESERVE / RELEASE (6/10) ----------------------------------------- */

static void finish(struct tcq_task *t)
{
	taskset_complete(t);
}

static void conflict(struct tcq_task *t)
{
	t->status = SAM_STAT_RESERVATION_CONFLICT;
	t->sense_len = 0;
}

/* With a store, ps is a copy whose r2_nexus is the local holder's (or
 * NULL): the holder is the one of this gateway with t's nexus. */
bool pr_reserve_apply(struct tcq_task *t, struct lun *l, struct pr_state *ps)
{
	if (ps->resv) {
		/* CRH: a persistent reservation holder gets GOOD and nothing
		 * changes; anyone else conflicts (SPC-4 5.13.3). */
		if (!is_holder(ps, find_reg(ps, sdev_initiator_port(t->lun, t->nexus))))
			conflict(t);
		return false;
	}
	if (ps->r2 && ps->r2_nexus != t->nexus) {
		conflict(t);
		return false;
	}
	if (ps->r2)
		return false;	/* held by t's nexus already */
	ps->r2 = true;
	ps->r2_nexus = t->nexus;
	copy_port(ps->r2_port, sdev_initiator_port(t->lun, t->nexus));
	ps->r2_rtpi = l->rel_port_id;
	ps->r2_gw = pr_gateway_id();
	return true;
}

bool pr_release_apply(struct tcq_task *t, struct pr_state *ps)
{
	/* Releasing what another nexus holds, or nothing, is GOOD and has
	 * no effect (SPC-2 7.17); so is RELEASE under a PR (CRH). */
	if (!ps->r2 || ps->r2_nexus != t->nexus)
		return false;
	r2_clear(ps);
	return true;
}

void pr_reserve(struct tcq_task *t)
{
	struct lun *l = t->lun;

	if (l->store) {
		pr_store_submit(t);
		return;
	}
	pthread_mutex_lock(&l->lock);
	if (pr_reserve_apply(t, l, l->pr))
		update_flag(l, l->pr);
	pthread_mutex_unlock(&l->lock);
	finish(t);
}

void pr_release(struct tcq_task *t)
{
	struct lun *l = t->lun;

	if (l->store) {
		pr_store_submit(t);
		return;
	}
	pthread_mutex_lock(&l->lock);
	if (pr_release_apply(t, l->pr))
		update_flag(l, l->pr);
	pthread_mutex_unlock(&l->lock);
	finish(t);
}

/* ---- PERSISTENT RESERVE IN -------------------------------------------- */

/* iSCSI TransportID (SPC-4 7.6.4.6) for a registration's port name. */
static uint32_t put_transport_id(uint8_t *p, const char *port)
{
	size_t n = strlen(port) + 1;
	uint32_t len = (uint32_t)((n + 3) & ~(size_t)3);

	memset(p, 0, 4 + len);
	/* FORMAT CODE 01b: name and ISID; 00b: name only. */
	p[0] = (uint8_t)((strstr(port, ",i,0x") ? 0x40 : 0x00) | 0x05);
	put_be16(p + 2, (uint16_t)len);
	memcpy(p + 4, port, n);
	return 4 + len;
}

static uint32_t prin_read_keys(struct pr_state *ps, uint8_t *buf)
{
	uint32_t n = 8;

	put_be32(buf, ps->generation);
	for (unsigned i = 0; i < ps->nregs; i++, n += 8)
		put_be64(buf + n, ps->regs[i].key);
	put_be32(buf + 4, n - 8);
	return n;
}

static uint32_t prin_read_resv(struct pr_state *ps, uint8_t *buf)
{
	memset(buf, 0, 24);
	put_be32(buf, ps->generation);
	if (!ps->resv)
		return 8;
	put_be32(buf + 4, 16);
	/* All-registrants: the key shown is zero (SPC-4 6.15.3.3). */
	if (!type_all_reg(ps->type))
		for (unsigned i = 0; i < ps->nregs; i++)
			if (ps->regs[i].holder)
				put_be64(buf + 8, ps->regs[i].key);
	buf[21] = ps->type;	/* SCOPE 0: logical unit */
	return 24;
}

static uint32_t prin_report_caps(struct pr_state *ps, uint8_t *buf)
{
	memset(buf, 0, 8);
	put_be16(buf, 8);
	buf[2] = 0x10 | 0x08 | 0x04 | 0x01;	/* CRH SIP_C ATP_C PTPL_C */
	buf[3] = 0x80 | (ps->aptpl ? 0x01 : 0);	/* TMV, PTPL_A */
	buf[4] = 0x80 | 0x40 | 0x20 | 0x08 | 0x02; /* WE_AR EA_RO WE_RO EA WE */
	buf[5] = 0x01;				/* EA_AR */
	return 8;
}

static uint32_t prin_full_status(struct lun *l, struct pr_state *ps,
				 uint8_t *buf)
{
	uint32_t n = 8;

	put_be32(buf, ps->generation);
	for (unsigned i = 0; i < ps->nregs; i++) {
		const struct pr_reg *r = &ps->regs[i];
		uint8_t *d = buf + n;
		uint32_t tl;

		memset(d, 0, 24);
		put_be64(d, r->key);
		if (r->all_tg_pt)
			d[12] |= 0x02;
		if (is_holder(ps, r)) {
			d[12] |= 0x01;
			d[13] = ps->type;
		}
		put_be16(d + 18, r->all_tg_pt ? 0 : l->rel_port_id);
		tl = put_transport_id(d + 24, r->port);
		put_be32(d + 20, tl);
		n += 24 + tl;
	}
	put_be32(buf + 4, n - 8);
	return n;
}

/* Largest READ FULL STATUS: every descriptor with the longest name. */
#define PRIN_MAX (8 + PR_REGS_MAX * (24 + 4 + PR_PORT_MAX))

void pr_in(struct tcq_task *t)
{
	if (t->lun->store)	/* refreshed from the store first */
		pr_store_submit(t);
	else
		pr_in_local(t);
}

void pr_in_local(struct tcq_task *t)
{
	struct lun *l = t->lun;
	struct pr_state *ps = l->pr;
	uint8_t *buf = malloc(PRIN_MAX);
	uint32_t n = 0;

	if (!buf) {
		sense_set(t, SK_HARDWARE_ERROR, ASC_INTERNAL_TARGET_FAILURE);
		finish(t);
		return;
	}
	pthread_mutex_lock(&l->lock);
	switch (t->req.sa) {
	case PRI_READ_KEYS: n = prin_read_keys(ps, buf); break;
	case PRI_READ_RESERVATION: n = prin_read_resv(ps, buf); break;
	case PRI_REPORT_CAPS: n = prin_report_caps(ps, buf); break;
	case PRI_READ_FULL_STATUS: n = prin_full_status(l, ps, buf); break;
	}
	pthread_mutex_unlock(&l->lock);
	if (spc_data_in(t, buf, n) == 0)
		t->status = SAM_STAT_GOOD;
	free(buf);
	finish(t);
}

/* ---- PERSISTENT RESERVE OUT ------------------------------------------- */

static void bad_param(struct tcq_task *t, uint16_t byte, int bit)
{
	sense_set_field(t, ASC_INVALID_FIELD_IN_PARAMETER_LIST, false, byte,
			bit);
}

/*
 * Parses one iSCSI TransportID at p (avail bytes) into port; returns its
 * length or 0 when it is malformed or not iSCSI.
 */
static uint32_t parse_transport_id(const uint8_t *p, uint32_t avail,
				   char *port)
{
	uint32_t len, n;
	uint8_t fmt;

	if (avail < 4 || (p[0] & 0x0f) != 0x05)
		return 0;
	fmt = p[0] >> 6;
	len = get_be16(p + 2);
	if (fmt > 1 || len < 4 || len % 4 || len > avail - 4 ||
	    len >= PR_PORT_MAX)
		return 0;
	n = (uint32_t)strnlen((const char *)p + 4, len);
	if (n == 0 || n == len)		/* must be NUL terminated */
		return 0;
	memcpy(port, p + 4, n);
	port[n] = 0;
	if (fmt == 1) {			/* "name,i,0xISID": 12 hex digits */
		const char *s = strstr(port, ",i,0x");

		if (!s || s == port || strlen(s + 5) != 12)
			return 0;
		for (const char *h = s + 5; *h; h++)
			if (!isxdigit((unsigned char)*h))
				return 0;
	} else if (strchr(port, ',')) {
		return 0;
	}
	return 4 + len;
}

static struct pr_reg *add_reg(struct pr_state *ps, const char *port,
			      uint64_t key, bool all_tg_pt)
{
	struct pr_reg *r;

	if (ps->nregs == PR_REGS_MAX)
		return NULL;
	r = &ps->regs[ps->nregs++];
	memset(r, 0, sizeof(*r));
	copy_port(r->port, port);
	r->key = key;
	r->all_tg_pt = all_tg_pt;
	return r;
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
		n = parse_transport_id(po->p + off, PROUT_LEN + 4 + dlen - off,
				       ports[np]);
		if (!n) {
			bad_param(t, (uint16_t)MIN(off, 0xffffu), -1);
			return -1;
		}
		/* An I_T nexus that is already registered conflicts. */
		if (find_reg(ps, ports[np])) {
			conflict(t);
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
			add_reg(ps, ports[i], po->sark,
				po->flags & PROUT_ALL_TG_PT);
	return 0;
}

/* REGISTER and REGISTER AND IGNORE EXISTING KEY (SPC-4 5.13.7). Returns
 * true when the state changed. */
static bool do_register(struct tcq_task *t, struct pr_fxlist *fx,
			struct pr_state *ps, const struct prout *po,
			const char *self)
{
	struct pr_reg *r = find_reg(ps, self);
	bool ignore = po->sa == PRO_REGISTER_IGNORE;

	if (!r) {
		if (!ignore && po->rk) {
			conflict(t);
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
		if (!add_reg(ps, self, po->sark, po->flags & PROUT_ALL_TG_PT)) {
			sense_set(t, SK_ILLEGAL_REQUEST,
				  ASC_INSUFFICIENT_REGISTRATION_RESOURCES);
			return false;
		}
		return true;
	}
	if (!ignore && po->rk != r->key) {
		conflict(t);
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
	if (ps->resv && (r->holder || (type_all_reg(ps->type) &&
				       ps->nregs == 1))) {
		uint8_t type = ps->type;

		remove_reg(ps, r);
		drop_reservation(ps);
		if (type == PR_TYPE_WE_RO || type == PR_TYPE_EA_RO)
			ua_regs(fx, ps, ASC_RESERVATIONS_RELEASED);
	} else {
		remove_reg(ps, r);
	}
	return true;
}

static bool do_reserve(struct tcq_task *t, struct pr_state *ps,
		       const struct prout *po, struct pr_reg *r)
{
	if (ps->resv) {
		if (!is_holder(ps, r) || ps->type != po->type)
			conflict(t);
		return false;
	}
	ps->resv = true;
	ps->type = po->type;
	r->holder = !type_all_reg(po->type);
	return false;	/* RESERVE leaves the generation alone */
}

static bool do_release(struct tcq_task *t, struct pr_fxlist *fx,
		       struct pr_state *ps, const struct prout *po,
		       struct pr_reg *r)
{
	uint8_t type = ps->type;

	if (!ps->resv || !is_holder(ps, r))
		return false;	/* GOOD, nothing released */
	if (po->type != ps->type) {
		sense_set(t, SK_ILLEGAL_REQUEST, ASC_INVALID_RELEASE_OF_PR);
		return false;
	}
	drop_reservation(ps);
	if (type != PR_TYPE_WE && type != PR_TYPE_EA)
		ua_regs(fx, ps, ASC_RESERVATIONS_RELEASED);
	return false;
}

static bool do_clear(struct tcq_task *t, struct pr_fxlist *fx,
		     struct pr_state *ps)
{
	ua_regs(fx, ps, ASC_RESERVATIONS_PREEMPTED);
	drop_reservation(ps);
	ps->nregs = 0;
	return true;
}

/* Removes every registration with key (but the preempting one's own);
 * returns how many went. */
static unsigned preempt_key(struct pr_fxlist *fx, struct pr_state *ps,
			    uint64_t key, bool all, struct pr_reg **self,
			    bool abort)
{
	unsigned n = 0;
	char me[PR_PORT_MAX];

	copy_port(me, (*self)->port);
	for (unsigned i = 0; i < ps->nregs;) {
		struct pr_reg *r = &ps->regs[i];

		if (r == *self || (!all && r->key != key)) {
			i++;
			continue;
		}
		fx_add(fx, r->port, ASC_REGISTRATIONS_PREEMPTED, abort);
		remove_reg(ps, r);
		n++;
	}
	*self = find_reg(ps, me);	/* it may have moved */
	return n;
}

/* PREEMPT and PREEMPT AND ABORT (SPC-4 5.13.11.4). With ABORT, the
 * preempted nexuses' tasks on this LUN are aborted too (each on its own
 * reactor, through the session layer). */
static bool do_preempt(struct tcq_task *t, struct pr_fxlist *fx,
		       struct pr_state *ps, const struct prout *po,
		       struct pr_reg *self)
{
	if (!ps->resv || type_all_reg(ps->type)) {
		if (ps->resv && po->sark == 0) {
			/* All-registrants: zero preempts everyone else and
			 * the preemptor reserves with the new type. */
			preempt_key(fx, ps, 0, true, &self,
				    po->sa == PRO_PREEMPT_ABORT);
			drop_reservation(ps);
			ps->resv = true;
			ps->type = po->type;
			self->holder = !type_all_reg(po->type);
			return true;
		}
		if (po->sark == 0) {
			bad_param(t, 8, -1);
			return false;
		}
		if (!preempt_key(fx, ps, po->sark, false, &self,
				    po->sa == PRO_PREEMPT_ABORT)) {
			conflict(t);
			return false;
		}
		return true;
	}
	uint64_t hkey = 0;
	for (unsigned i = 0; i < ps->nregs; i++)
		if (ps->regs[i].holder)
			hkey = ps->regs[i].key;
	if (po->sark != hkey) {
		if (po->sark == 0) {
			bad_param(t, 8, -1);
			return false;
		}
		if (!preempt_key(fx, ps, po->sark, false, &self,
				    po->sa == PRO_PREEMPT_ABORT)) {
			conflict(t);
			return false;
		}
		return true;
	}
	/* The holder's key: its registrations go, the reservation moves to
	 * the preemptor with the type of this CDB. */
	uint8_t old = ps->type;
	preempt_key(fx, ps, po->sark, false, &self,
				    po->sa == PRO_PREEMPT_ABORT);
	drop_reservation(ps);
	ps->resv = true;
	ps->type = po->type;
	self->holder = !type_all_reg(po->type);
	if (old != po->type)
		ua_regs(fx, ps, ASC_RESERVATIONS_RELEASED);
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

	if (!ps->resv || type_all_reg(ps->type) || !self->holder) {
		conflict(t);
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
	if (tlen > po->len - PROUT_LEN ||
	    !parse_transport_id(po->p + PROUT_LEN, tlen, dest)) {
		if (tlen > po->len - PROUT_LEN)
			sense_set(t, SK_ILLEGAL_REQUEST,
				  ASC_PARAMETER_LIST_LENGTH_ERROR);
		else
			bad_param(t, PROUT_LEN, -1);
		return false;
	}
	if (port_match(self->port, dest) || port_match(dest, self->port)) {
		bad_param(t, PROUT_LEN, -1);
		return false;
	}
	copy_port(me, self->port);
	d = find_reg(ps, dest);
	if (!d && !(d = add_reg(ps, dest, po->sark, false))) {
		sense_set(t, SK_ILLEGAL_REQUEST,
			  ASC_INSUFFICIENT_REGISTRATION_RESOURCES);
		return false;
	}
	d->key = po->sark;
	self = find_reg(ps, me);
	self->holder = false;
	d->holder = true;
	if (po->p[17] & 0x02)	/* UNREG */
		remove_reg(ps, self);
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
		if (!type_valid(po->type)) {
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
		r = find_reg(ps, self);
		if (!r || r->key != po->rk) {
			conflict(t);
		} else {
			switch (po->sa) {
			case PRO_RESERVE:
				changed = do_reserve(t, ps, po, r);
				break;
			case PRO_RELEASE:
				changed = do_release(t, fx, ps, po, r);
				break;
			case PRO_CLEAR:
				changed = do_clear(t, fx, ps);
				break;
			case PRO_PREEMPT: case PRO_PREEMPT_ABORT:
				changed = do_preempt(t, fx, ps, po, r);
				break;
			case PRO_REGISTER_MOVE:
				changed = do_move(t, ps, po, r,
						  l->rel_port_id);
				if (changed)
					ps->aptpl = po->p[17] & 0x01;
				break;
			}
		}
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
		finish(t);
		return;
	}
	if (l->store) {
		pr_store_submit(t);
		return;
	}
	fx = malloc(sizeof(*fx));
	if (!fx) {
		sense_set(t, SK_HARDWARE_ERROR, ASC_INTERNAL_TARGET_FAILURE);
		finish(t);
		return;
	}
	fx->n = 0;
	pthread_mutex_lock(&l->lock);
	aptpl = ps->aptpl;
	pr_out_apply(t, l, ps, &po, fx);
	pr_fx_apply_locked(l, fx, t->nexus);
	update_flag(l, ps);
	/* Persist every change of what APTPL covers; the reservation
	 * itself changes without a generation bump, so save then too. */
	if (t->status == SAM_STAT_GOOD && (ps->aptpl || aptpl) &&
	    pr_save(l, ps) < 0)
		sense_set(t, SK_HARDWARE_ERROR, ASC_INTERNAL_TARGET_FAILURE);
	pthread_mutex_unlock(&l->lock);
	free(fx);
	finish(t);
}
