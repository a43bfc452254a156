/*
 * [initiator TARGET NAME] sections of tcqd.conf (config.h): one
 * initiator's own CHAP credentials and LUN map on one target, as LIO's
 * node ACLs with mapped LUNs. Their keys are in the key table
 * (config_keys.c, section CFG_INITIATOR); here are the sections
 * themselves, the luns value, and the checks that need the whole file
 * (cfg_finish_initiators: the target and the LUNs named exist, CHAP
 * comes in pairs).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <openssl/crypto.h>
#include "target/config.h"
#include "target/config_priv.h"

static void free_initiator(struct cfg_initiator *ci)
{
	OPENSSL_cleanse(&ci->chap, sizeof(ci->chap));
	free(ci);
}

struct cfg_initiator *cfg_find_initiator(const struct cfg *c,
					 const char *target, const char *name)
{
	for (int i = 0; i < c->ninits; i++)
		if (!strcasecmp(c->inits[i]->target, target) &&
		    !strcasecmp(c->inits[i]->name, name))
			return c->inits[i];
	return NULL;
}

struct cfg_initiator *cfg_add_initiator(struct cfg *c, const char *target,
					const char *name, char *err,
					size_t errlen)
{
	struct cfg_initiator *ci, *old, **v;
	char why[300];

	if (cfg_check_name(target, why, sizeof(why)) < 0) {
		snprintf(err, errlen, "bad target name: %s", why);
		return NULL;
	}
	if (cfg_check_name(name, why, sizeof(why)) < 0) {
		snprintf(err, errlen, "bad initiator name: %s", why);
		return NULL;
	}
	if ((old = cfg_find_initiator(c, target, name))) {
		snprintf(err, errlen, "duplicate [initiator %s %s]%s", target,
			 name, old->line > 0 ? " (first defined earlier)" : "");
		return NULL;
	}
	v = realloc(c->inits, sizeof(*v) * (size_t)(c->ninits + 1));
	ci = calloc(1, sizeof(*ci));
	if (v)
		c->inits = v;
	if (!v || !ci) {
		free(ci);
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	snprintf(ci->target, sizeof(ci->target), "%s", target);
	snprintf(ci->name, sizeof(ci->name), "%s", name);
	c->inits[c->ninits++] = ci;
	return ci;
}

int cfg_remove_initiator(struct cfg *c, const char *target, const char *name)
{
	for (int i = 0; i < c->ninits; i++) {
		struct cfg_initiator *ci = c->inits[i];

		if (strcasecmp(ci->target, target) ||
		    (name && strcasecmp(ci->name, name)))
			continue;
		free_initiator(ci);
		memmove(&c->inits[i], &c->inits[i + 1],
			sizeof(*c->inits) * (size_t)(c->ninits - i - 1));
		c->ninits--;
		return 0;
	}
	return -1;
}

/* Every section of target (cfg_remove_target), or of every target
 * (target NULL: cfg_free). */
void cfg_free_initiators(struct cfg *c, const char *target)
{
	if (!target) {
		for (int i = 0; i < c->ninits; i++)
			free_initiator(c->inits[i]);
		free(c->inits);
		c->inits = NULL;
		c->ninits = 0;
		return;
	}
	while (cfg_remove_initiator(c, target, NULL) == 0)
		;
}

/* ---- luns = N[:M][:ro],... ----------------------------------------------- */

/* A LUN number 0..TCQ_MAX_LUNS-1 of exactly the text s..e. */
static int map_number(const char *s, size_t n, uint16_t *out)
{
	unsigned v = 0;

	if (n == 0 || n > 3)
		return -1;
	for (size_t i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = v * 10 + (unsigned)(s[i] - '0');
	}
	if (v >= TCQ_MAX_LUNS)
		return -1;
	*out = (uint16_t)v;
	return 0;
}

/* One entry "N", "N:M", "N:ro" or "N:M:ro" (n bytes at s). */
static int map_entry(const char *s, size_t n, struct cfg_map_ent *e,
		     char *err, size_t errlen)
{
	const char *parts[3];
	size_t lens[3];
	int np = 0;

	for (const char *p = s, *end = s + n;;) {
		const char *colon = memchr(p, ':', (size_t)(end - p));

		if (np == 3)
			goto bad;	/* a fourth part */
		parts[np] = p;
		lens[np++] = colon ? (size_t)(colon - p) : (size_t)(end - p);
		if (!colon)
			break;
		p = colon + 1;
	}
	e->ro = np > 1 && lens[np - 1] == 2 &&
		!strncasecmp(parts[np - 1], "ro", 2);
	if (e->ro)
		np--;
	if (np > 2 || map_number(parts[0], lens[0], &e->lun) < 0)
		goto bad;
	e->as = e->lun;
	if (np == 2 && map_number(parts[1], lens[1], &e->as) < 0)
		goto bad;
	return 0;
bad:
	snprintf(err, errlen, "'%.*s': expected N[:M][:ro] with LUN numbers "
		 "0..%d", (int)(n > 40 ? 40 : n), s, TCQ_MAX_LUNS - 1);
	return -1;
}

int cfg_parse_lun_map(const char *s, struct cfg_initiator *ci, char *err,
		      size_t errlen)
{
	struct cfg_map_ent map[TCQ_MAX_LUNS];
	int n = ci->nmap;

	/* Each line adds to the map (a long one takes several lines: a
	 * line holds at most 197 characters): the line's entries are
	 * checked against the map so far, and all of them go in, or none. */
	memcpy(map, ci->map, sizeof(map[0]) * (size_t)n);
	if (!strcasecmp(s, "none")) {
		ci->has_map = true;
		return 0;
	}
	for (const char *p = s;;) {
		size_t len = strcspn(p, ",");
		size_t lead = strspn(p, " \t");
		size_t w = len - lead;

		while (w && (p[lead + w - 1] == ' ' || p[lead + w - 1] == '\t'))
			w--;
		if (n == TCQ_MAX_LUNS) {
			snprintf(err, errlen, "more than %d entries",
				 TCQ_MAX_LUNS);
			return -1;
		}
		if (map_entry(p + lead, w, &map[n], err, errlen) < 0)
			return -1;
		for (int i = 0; i < n; i++) {
			if (map[i].as == map[n].as) {
				snprintf(err, errlen, "LUN %u is mapped twice "
					 "(entries %d and %d)", map[n].as,
					 i + 1, n + 1);
				return -1;
			}
			if (map[i].lun == map[n].lun) {
				snprintf(err, errlen, "target LUN %u is listed "
					 "twice (entries %d and %d)",
					 map[n].lun, i + 1, n + 1);
				return -1;
			}
		}
		n++;
		if (!p[len])
			break;
		p += len + 1;
	}
	memcpy(ci->map, map, sizeof(map[0]) * (size_t)n);
	ci->nmap = n;
	ci->has_map = true;
	return 0;
}

void cfg_format_lun_map(const struct cfg_initiator *ci, int from, int to,
			char *out, size_t len)
{
	size_t o = 0;

	if (len)
		out[0] = '\0';
	if (ci->nmap == 0) {
		snprintf(out, len, "none");
		return;
	}
	for (int i = from; i < to && i < ci->nmap && o < len; i++) {
		const struct cfg_map_ent *e = &ci->map[i];
		int w;

		if (e->as == e->lun)
			w = snprintf(out + o, len - o, "%s%u%s",
				     i > from ? "," : "", e->lun,
				     e->ro ? ":ro" : "");
		else
			w = snprintf(out + o, len - o, "%s%u:%u%s",
				     i > from ? "," : "", e->lun, e->as,
				     e->ro ? ":ro" : "");
		if (w < 0)
			break;
		o += (size_t)w;
	}
}

/* ---- the whole file's checks ------------------------------------------ */

void cfg_finish_initiators(struct cfg *c, const char *fname)
{
	for (int i = 0; i < c->ninits; i++) {
		struct cfg_initiator *ci = c->inits[i];
		const struct cfg_target *t = cfg_find_target(c, ci->target);
		char what[2 * TCQ_NAME_MAX + 16];

		snprintf(what, sizeof(what), "[initiator %s %s]", ci->target,
			 ci->name);
		if (!t) {
			cfg_msg(c, fname, ci->line, true,
				"%s: unknown target '%s' (no [target %s] "
				"section)", what, ci->target, ci->target);
			continue;
		}
		for (int j = 0; j < ci->nmap; j++)
			if (!t->luns[ci->map[j].lun])
				cfg_msg(c, fname, ci->line, true,
					"%s: luns: target %s has no LUN %u",
					what, t->name, ci->map[j].lun);
		if (!ci->chap.user[0] != !ci->chap.secret[0])
			cfg_msg(c, fname, ci->line, true,
				"%s: CHAP needs both chap_user and "
				"chap_secret", what);
		if (ci->chap.secret[0] && t->chap.mutual.secret[0] &&
		    !strcmp(ci->chap.secret, t->chap.mutual.secret))
			cfg_msg(c, fname, ci->line, true,
				"%s: chap_secret must differ from the target's "
				"mutual CHAP secret", what);
	}
}
