/* Implicit ALUA: target port groups from the configuration (scsi/alua.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "tcq/byteorder.h"
#include "tcq/compiler.h"
#include "tcq/scsi_proto.h"
#include "scsi/alua.h"
#include "scsi/lun.h"
#include "scsi/opcodes.h"
#include "scsi/sense.h"
#include "scsi/spc.h"
#include "scsi/taskset.h"

static const struct {
	const char *name, *abbrev;
} state_names[] = {
	[ALUA_ACTIVE_OPTIMIZED] = { "active-optimized", "ao" },
	[ALUA_ACTIVE_NON_OPTIMIZED] = { "active-non-optimized", "ano" },
	[ALUA_STANDBY] = { "standby", "sb" },
	[ALUA_UNAVAILABLE] = { "unavailable", "ua" },
};

int alua_parse_state(const char *s, uint8_t *out)
{
	for (uint8_t i = 0; i < ARRAY_SIZE(state_names); i++)
		if (!strcasecmp(s, state_names[i].name) ||
		    !strcasecmp(s, state_names[i].abbrev)) {
			*out = i;
			return 0;
		}
	return -1;
}

const char *alua_state_name(uint8_t state)
{
	return state < ARRAY_SIZE(state_names) ? state_names[state].name
					       : NULL;
}

/* A decimal 1..65535 of exactly [s, e). */
static int parse_id(const char *s, const char *e, uint16_t *out)
{
	unsigned long v = 0;

	if (s == e || e - s > 5)
		return -1;
	for (const char *p = s; p < e; p++) {
		if (*p < '0' || *p > '9')
			return -1;
		v = v * 10 + (unsigned long)(*p - '0');
	}
	if (v < 1 || v > 65535)
		return -1;
	*out = (uint16_t)v;
	return 0;
}

static struct alua_group *find_mut(struct alua_cfg *a, uint16_t id)
{
	for (unsigned i = 0; i < a->ngroups; i++)
		if (a->groups[i].id == id)
			return &a->groups[i];
	return NULL;
}

const struct alua_group *alua_find(const struct alua_cfg *a, uint16_t id)
{
	return find_mut((struct alua_cfg *)a, id);
}

int alua_add_group(struct alua_cfg *a, const char *spec, char *err,
		   size_t errlen)
{
	struct alua_group g = { 0 };
	const char *c1 = strchr(spec, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
	char state[32];

	if (!c1 || !c2) {
		snprintf(err, errlen,
			 "'%s' is not ID:STATE:PORT[,PORT...]", spec);
		return -1;
	}
	if (parse_id(spec, c1, &g.id) < 0) {
		snprintf(err, errlen, "'%s': the group id must be 1..65535",
			 spec);
		return -1;
	}
	size_t sl = (size_t)(c2 - c1 - 1);
	if (sl >= sizeof(state))
		sl = sizeof(state) - 1;
	memcpy(state, c1 + 1, sl);
	state[sl] = 0;
	if (alua_parse_state(state, &g.state) < 0) {
		snprintf(err, errlen,
			 "'%s': the state must be active-optimized, "
			 "active-non-optimized, standby or unavailable", spec);
		return -1;
	}
	for (const char *p = c2 + 1;;) {
		const char *e = strchr(p, ',');
		uint16_t port;

		if (!e)
			e = p + strlen(p);
		if (parse_id(p, e, &port) < 0) {
			snprintf(err, errlen,
				 "'%s': relative port ids must be 1..65535",
				 spec);
			return -1;
		}
		for (unsigned i = 0; i < g.nports; i++)
			if (g.ports[i] == port) {
				snprintf(err, errlen,
					 "'%s': port %u listed twice", spec,
					 port);
				return -1;
			}
		if (g.nports == ALUA_MAX_PORTS) {
			snprintf(err, errlen, "'%s': more than %d ports", spec,
				 ALUA_MAX_PORTS);
			return -1;
		}
		g.ports[g.nports++] = port;
		if (!*e)
			break;
		p = e + 1;
	}
	if (find_mut(a, g.id)) {
		snprintf(err, errlen, "target port group %u defined twice",
			 g.id);
		return -1;
	}
	if (a->ngroups == ALUA_MAX_GROUPS) {
		snprintf(err, errlen, "more than %d target port groups",
			 ALUA_MAX_GROUPS);
		return -1;
	}
	a->groups[a->ngroups++] = g;
	return 0;
}

int alua_finish(struct alua_cfg *a, char *err, size_t errlen)
{
	if (!a->tpg_id)
		a->tpg_id = 1;
	if (!a->rel_port_id)
		a->rel_port_id = 1;
	if (!a->ngroups) {
		struct alua_group *g = &a->groups[a->ngroups++];

		memset(g, 0, sizeof(*g));
		g->id = a->tpg_id;
		g->state = ALUA_ACTIVE_OPTIMIZED;
		g->ports[g->nports++] = a->rel_port_id;
		return 0;
	}
	const struct alua_group *own = alua_find(a, a->tpg_id);
	if (!own) {
		snprintf(err, errlen, "tpg_id %u is not among the tpg groups",
			 a->tpg_id);
		return -1;
	}
	bool has_port = false;
	for (unsigned i = 0; i < own->nports; i++)
		has_port |= own->ports[i] == a->rel_port_id;
	if (!has_port) {
		snprintf(err, errlen,
			 "rel_port_id %u is not a port of target port group %u",
			 a->rel_port_id, a->tpg_id);
		return -1;
	}
	/* A target port belongs to one group (SPC-4 5.15.2.1). */
	for (unsigned i = 0; i < a->ngroups; i++)
		for (unsigned j = 0; j < a->groups[i].nports; j++)
			for (unsigned k = i + 1; k < a->ngroups; k++)
				for (unsigned m = 0; m < a->groups[k].nports; m++)
					if (a->groups[k].ports[m] ==
					    a->groups[i].ports[j]) {
						snprintf(err, errlen,
							 "relative port %u is in groups %u and %u",
							 a->groups[i].ports[j],
							 a->groups[i].id,
							 a->groups[k].id);
						return -1;
					}
	return 0;
}

/* The states a configuration can give a group (byte 1 of a descriptor):
 * AO_SUP, AN_SUP, S_SUP, U_SUP. No transitioning, offline or LBA
 * dependent state is ever reported. */
#define ALUA_SUPPORTED 0x0f

uint32_t alua_encode_rtpg(const struct alua_cfg *a, unsigned fmt,
			  uint8_t *buf, uint32_t cap)
{
	uint8_t tmp[8 + ALUA_MAX_GROUPS * (8 + 4 * ALUA_MAX_PORTS)];
	uint32_t n = fmt == ALUA_RTPG_EXTENDED ? 8 : 4;

	memset(tmp, 0, n);
	if (fmt == ALUA_RTPG_EXTENDED) {
		tmp[4] = 0x10;	/* FORMAT TYPE 001b */
		tmp[5] = 0;	/* IMPLICIT TRANSITION TIME: none happen */
	}
	for (unsigned i = 0; i < a->ngroups; i++) {
		const struct alua_group *g = &a->groups[i];
		uint8_t *d = tmp + n;

		memset(d, 0, 8);
		/* PREF marks the groups a host should use first. */
		d[0] = (uint8_t)((g->state == ALUA_ACTIVE_OPTIMIZED ? 0x80 : 0) |
				 (g->state & 0x0f));
		d[1] = ALUA_SUPPORTED;
		put_be16(d + 2, g->id);
		d[5] = 0;	/* STATUS CODE: no status available */
		d[7] = g->nports;
		n += 8;
		for (unsigned j = 0; j < g->nports; j++) {
			memset(tmp + n, 0, 4);
			put_be16(tmp + n + 2, g->ports[j]);
			n += 4;
		}
	}
	put_be32(tmp, n - 4);	/* RETURN DATA LENGTH */
	memcpy(buf, tmp, MIN(n, cap));
	return n;
}

uint16_t alua_check(uint8_t state, const struct opc_entry *e)
{
	unsigned f = e ? e->flags : 0;

	if (state == ALUA_ACTIVE_OPTIMIZED || state == ALUA_ACTIVE_NON_OPTIMIZED)
		return 0;
	/* SPC-4 5.15.2.4.4/5: what both inaccessible states still accept
	 * (the reports), and what standby accepts besides (mode pages,
	 * reservations). */
	if (f & OPC_F_ALUA_ANY)
		return 0;
	if (state == ALUA_STANDBY)
		return (f & OPC_F_ALUA_STANDBY) ? 0 : ASC_ALUA_STANDBY;
	return state == ALUA_UNAVAILABLE ? ASC_ALUA_UNAVAILABLE
					 : ASC_ALUA_TRANSITION;
}

void alua_lun_apply(struct lun *l, const struct alua_cfg *a)
{
	const struct alua_group *g = alua_find(a, a->tpg_id);

	l->alua = a;
	l->tpg_id = a->tpg_id;
	l->rel_port_id = a->rel_port_id;
	l->alua_state = g ? g->state : ALUA_ACTIVE_OPTIMIZED;
}

struct exec_rc alua_report_tpg(struct tcq_task *t)
{
	const struct lun *l = t->lun;
	struct alua_cfg one;
	const struct alua_cfg *a = l->alua;
	uint8_t buf[8 + ALUA_MAX_GROUPS * (8 + 4 * ALUA_MAX_PORTS)];

	if (!a) {	/* a LUN made without a target: its own ids only */
		memset(&one, 0, sizeof(one));
		one.tpg_id = l->tpg_id;
		one.rel_port_id = l->rel_port_id;
		one.ngroups = 1;
		one.groups[0].id = l->tpg_id;
		one.groups[0].state = l->alua_state;
		one.groups[0].nports = 1;
		one.groups[0].ports[0] = l->rel_port_id;
		a = &one;
	}
	uint32_t n = alua_encode_rtpg(a, t->req.flags, buf, sizeof(buf));
	return spc_reply(t, buf, n);
}
