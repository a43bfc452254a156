/*
 * The [initiator] sections of a running target (initiator.h): built from
 * the configuration, compared, replaced live, and read by logins (CHAP)
 * and sessions (their LUN map).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <openssl/crypto.h>
#include "target/config.h"
#include "target/config_keys.h"
#include "target/initiator.h"

void tinit_free(struct tgt_inits *ti)
{
	if (!ti)
		return;
	for (int i = 0; i < ti->n; i++) {
		OPENSSL_cleanse(&ti->v[i].chap, sizeof(ti->v[i].chap));
		free(ti->v[i].map);
	}
	free(ti);
}

/* The scsi/ form of a section's luns. */
static struct sdev_map *map_of(const struct cfg_initiator *ci)
{
	struct sdev_map *m = calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	for (int i = 0; i < ci->nmap; i++) {
		const struct cfg_map_ent *e = &ci->map[i];

		m->e[e->as].lun = e->lun;
		m->e[e->as].ro = e->ro;
		m->e[e->as].used = true;
		if (e->as + 1 > m->n)
			m->n = e->as + 1;
	}
	return m;
}

int tinit_build(const struct cfg *c, const char *target,
		struct tgt_inits **out, char *err, size_t errlen)
{
	struct tgt_inits *ti;
	int n = 0;

	*out = NULL;
	for (int i = 0; i < c->ninits; i++)
		n += !strcasecmp(c->inits[i]->target, target);
	if (!n)
		return 0;
	ti = calloc(1, sizeof(*ti) + sizeof(ti->v[0]) * (size_t)n);
	if (!ti)
		goto oom;
	for (int i = 0; i < c->ninits; i++) {
		const struct cfg_initiator *ci = c->inits[i];
		struct tgt_init *e = &ti->v[ti->n];

		if (strcasecmp(ci->target, target))
			continue;
		ti->n++;
		snprintf(e->name, sizeof(e->name), "%s", ci->name);
		e->chap = ci->chap;
		if (ci->has_map && !(e->map = map_of(ci)))
			goto oom;
	}
	*out = ti;
	return 0;
oom:
	tinit_free(ti);
	snprintf(err, errlen, "out of memory");
	return -1;
}

bool tinit_differ(const struct cfg *a, const struct cfg *b,
		  const char *target)
{
	const struct cfg *pair[2][2] = { { a, b }, { b, a } };

	for (int p = 0; p < 2; p++) {
		const struct cfg *x = pair[p][0], *y = pair[p][1];

		for (int i = 0; i < x->ninits; i++) {
			const struct cfg_initiator *ci = x->inits[i], *cj;

			if (strcasecmp(ci->target, target))
				continue;
			cj = cfg_find_initiator(y, target, ci->name);
			if (!cj)
				return true;
			for (size_t k = 0; k < cfg_nkeys; k++)
				if (cfg_keys[k].section == CFG_INITIATOR &&
				    !cfg_key_equal(&cfg_keys[k], x, ci, y, cj))
					return true;
		}
	}
	return false;
}

int tinit_attach(struct target *t, const struct cfg *c, char *err,
		 size_t errlen)
{
	struct tgt_inits *ti;

	if (tinit_build(c, t->dev.name, &ti, err, errlen) < 0)
		return -1;
	tinit_free(tinit_replace(t, ti));
	return 0;
}

struct tgt_inits *tinit_replace(struct target *t, struct tgt_inits *ti)
{
	struct tgt_inits *old = t->inits;

	t->inits = ti;
	/* Sessions copy their map again at their next command. */
	__atomic_add_fetch(&t->inits_gen, 1, __ATOMIC_RELEASE);
	return old;
}

static const struct tgt_init *find(const struct target *t, const char *iname)
{
	const struct tgt_inits *ti = t->inits;

	for (int i = 0; ti && i < ti->n; i++)
		if (!strcasecmp(ti->v[i].name, iname))
			return &ti->v[i];
	return NULL;
}

void tinit_chap(const struct target *t, const char *iname,
		struct auth_chap_cfg *out)
{
	const struct tgt_init *e = find(t, iname);

	*out = t->chap;
	if (e && e->chap.user[0])
		out->chap = e->chap;
}

int tinit_map_copy(const struct target *t, const char *iname,
		   struct sdev_map **out)
{
	const struct tgt_init *e = find(t, iname);

	*out = NULL;
	if (!e || !e->map)
		return 0;
	if (!(*out = malloc(sizeof(**out))))
		return -1;
	memcpy(*out, e->map, sizeof(**out));
	return 0;
}
