/*
 * struct cfg (config.h): the configuration as plain data, built by the
 * file parser (config_file.c) or by hand (--export); its messages, sorted
 * by line; and the cross-checks that need all of it (cfg_finish).
 */
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <openssl/crypto.h>
#include "backend/bdev.h"
#include "target/config.h"
#include "target/config_priv.h"
#include "target/portal.h"

/* ---- diagnostics --------------------------------------------------- */

void cfg_msg(struct cfg *c, const char *fname, int line, bool error,
	     const char *fmt, ...)
{
	char text[512], full[800];
	va_list ap;
	char **m;
	int *l;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	if (line > 0)
		snprintf(full, sizeof(full), "%s:%d: %s%s", fname, line,
			 error ? "" : "warning: ", text);
	else
		snprintf(full, sizeof(full), "%s: %s%s", fname,
			 error ? "" : "warning: ", text);
	m = realloc(c->msgs, sizeof(*m) * (size_t)(c->nmsgs + 1));
	if (m)
		c->msgs = m;
	l = realloc(c->msg_lines, sizeof(*l) * (size_t)(c->nmsgs + 1));
	if (l)
		c->msg_lines = l;
	if (error)
		c->nerrors++;	/* counted even if the text is lost */
	if (!m || !l || !(c->msgs[c->nmsgs] = strdup(full)))
		return;
	c->msg_lines[c->nmsgs++] = line;
}

/* Stable insertion sort by line: errors found at the end (unknown target
 * of a LUN) land next to the ones found while reading. */
void cfg_sort_msgs(struct cfg *c)
{
	for (int i = 1; i < c->nmsgs; i++) {
		char *m = c->msgs[i];
		int l = c->msg_lines[i], j = i;

		for (; j > 0 && c->msg_lines[j - 1] > l; j--) {
			c->msgs[j] = c->msgs[j - 1];
			c->msg_lines[j] = c->msg_lines[j - 1];
		}
		c->msgs[j] = m;
		c->msg_lines[j] = l;
	}
}

/* ---- struct cfg ------------------------------------------------------ */

void cfg_init(struct cfg *c)
{
	memset(c, 0, sizeof(*c));
	tcq_settings_default(&c->set);
	c->log_level = -1;
}

void cfg_free(struct cfg *c)
{
	for (int i = 0; i < c->nlisten; i++)
		free(c->listen[i]);
	free(c->listen);
	for (int i = 0; i < c->ntargets; i++) {
		acl_free(&c->targets[i]->acl);
		OPENSSL_cleanse(&c->targets[i]->chap, sizeof(c->targets[i]->chap));
		free(c->targets[i]);
	}
	free(c->targets);
	OPENSSL_cleanse(&c->set.discovery_chap, sizeof(c->set.discovery_chap));
	for (int i = 0; i < c->nluns; i++) {
		free(c->luns[i]->path);
		free(c->luns[i]->backend);
		free(c->luns[i]->record);
		free(c->luns[i]);
	}
	free(c->luns);
	cfg_free_initiators(c, NULL);
	for (int i = 0; i < c->nmsgs; i++)
		free(c->msgs[i]);
	free(c->msgs);
	free(c->msg_lines);
	memset(c, 0, sizeof(*c));
}

static struct cfg_target *find_target(const struct cfg *c, const char *name)
{
	for (int i = 0; i < c->ntargets; i++)
		if (strcasecmp(c->targets[i]->name, name) == 0)
			return c->targets[i];
	return NULL;
}

static struct cfg_lun *find_lun(const struct cfg *c, const char *target,
				unsigned id)
{
	for (int i = 0; i < c->nluns; i++)
		if (c->luns[i]->id == id &&
		    strcasecmp(c->luns[i]->target, target) == 0)
			return c->luns[i];
	return NULL;
}

struct cfg_target *cfg_add_target(struct cfg *c, const char *name,
				  char *err, size_t errlen)
{
	struct cfg_target *t, *old, **v;

	if (cfg_check_name(name, err, errlen) < 0)
		return NULL;
	if ((old = find_target(c, name))) {
		if (old->line > 0)
			snprintf(err, errlen,
				 "duplicate target '%s' (first defined at line %d)",
				 name, old->line);
		else
			snprintf(err, errlen, "duplicate target '%s'", name);
		return NULL;
	}
	v = realloc(c->targets, sizeof(*v) * (size_t)(c->ntargets + 1));
	t = calloc(1, sizeof(*t));
	if (v)
		c->targets = v;
	if (!v || !t) {
		free(t);
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	snprintf(t->name, sizeof(t->name), "%s", name);
	t->tpgt = 1;
	c->targets[c->ntargets++] = t;
	return t;
}

struct cfg_lun *cfg_add_lun(struct cfg *c, const char *target, unsigned id,
			    char *err, size_t errlen)
{
	struct cfg_lun *l, *old, **v;
	struct cfg_target *t;

	if (cfg_check_name(target, err, errlen) < 0)
		return NULL;
	if (id >= TCQ_MAX_LUNS) {
		snprintf(err, errlen, "bad LUN number %u: must be 0..%d", id,
			 TCQ_MAX_LUNS - 1);
		return NULL;
	}
	if ((old = find_lun(c, target, id))) {
		if (old->line > 0)
			snprintf(err, errlen,
				 "duplicate LUN %u of target '%s' (first defined at line %d)",
				 id, target, old->line);
		else
			snprintf(err, errlen, "duplicate LUN %u of target '%s'",
				 id, target);
		return NULL;
	}
	v = realloc(c->luns, sizeof(*v) * (size_t)(c->nluns + 1));
	l = calloc(1, sizeof(*l));
	if (v)
		c->luns = v;
	if (!v || !l || !(l->backend = strdup(CFG_DEFAULT_BACKEND))) {
		free(l);
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	snprintf(l->target, sizeof(l->target), "%s", target);
	l->id = id;
	l->block_size = 512;
	l->write_cache = true;
	l->thin = -1;
	l->queue_depth = CFG_DEFAULT_QUEUE_DEPTH;
	l->prefetch = 1;		/* auto */
	l->prefetch_max = CFG_DEFAULT_PREFETCH_MAX;
	c->luns[c->nluns++] = l;
	/* Linked now if its target is known; else by cfg_finish. */
	if ((t = find_target(c, target)))
		t->luns[id] = l;
	return l;
}

int cfg_add_listen(struct cfg *c, const char *addr, char *err, size_t errlen)
{
	struct sockaddr_storage ss, o;
	socklen_t len, olen;
	char **v, *dup;

	if (portal_parse_addr(addr, &ss, &len, err, errlen) < 0)
		return -1;
	/* Two sockets on one fixed address cannot both bind; port 0 can. */
	for (int i = 0; i < c->nlisten; i++) {
		if (portal_parse_addr(c->listen[i], &o, &olen, err, errlen) == 0 &&
		    olen == len && memcmp(&o, &ss, len) == 0 &&
		    ((struct sockaddr_in *)&ss)->sin_port != 0) {
			snprintf(err, errlen, "duplicate listen address '%s'", addr);
			return -1;
		}
	}
	v = realloc(c->listen, sizeof(*v) * (size_t)(c->nlisten + 1));
	if (v)
		c->listen = v;
	if (!v || !(dup = strdup(addr))) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	c->listen[c->nlisten++] = dup;
	return 0;
}


/* CHAP settings that only make sense together. */
static void cfg_check_chap(struct cfg *c, const char *fname,
			   const struct auth_chap_cfg *a, const char *what,
			   int line)
{
	const struct auth_cred *ic = &a->chap, *mc = &a->mutual;

	if (!ic->user[0] != !ic->secret[0])
		cfg_msg(c, fname, line, true,
			"%s: CHAP needs both a user and a secret", what);
	if (!mc->user[0] != !mc->secret[0])
		cfg_msg(c, fname, line, true,
			"%s: mutual CHAP needs both a user and a secret", what);
	if (mc->user[0] && !ic->user[0])
		cfg_msg(c, fname, line, true,
			"%s: mutual CHAP needs (one-way) CHAP too", what);
	if (mc->secret[0] && !strcmp(mc->secret, ic->secret))
		cfg_msg(c, fname, line, true,
			"%s: the mutual CHAP secret must differ from the initiator's",
			what);
}

/*
 * A target with several port groups is served by other gateways too
 * (DESIGN.md, ALUA), which write the same medium: a read-ahead buffer of
 * this tcqd cannot see their writes and would return older data. So
 * prefetch = on is refused there (auto resolves to off: cfg_lun_prefetch).
 */
static void cfg_check_shared_prefetch(struct cfg *c, const char *fname,
				      const struct cfg_target *t)
{
	if (t->alua.ngroups < 2)
		return;
	for (int j = 0; j < TCQ_MAX_LUNS; j++) {
		const struct cfg_lun *l = t->luns[j];

		if (l && l->prefetch == BDEV_PREFETCH_ON)
			cfg_msg(c, fname, l->line, true,
				"[lun %s %u] prefetch = on: target '%s' has %u "
				"port groups, whose other gateways write the "
				"same medium unseen by a read-ahead buffer "
				"here; use auto (off here) or off",
				t->name, l->id, t->name, t->alua.ngroups);
	}
}

int cfg_finish(struct cfg *c, const char *fname)
{
	char err[300];

	if (c->nlisten == 0 && cfg_add_listen(c, CFG_DEFAULT_LISTEN, err,
					      sizeof(err)) < 0)
		cfg_msg(c, fname, 0, true, "%s", err);
	for (int i = 0; i < c->nluns; i++) {
		struct cfg_lun *l = c->luns[i];
		struct cfg_target *t = find_target(c, l->target);

		if (!t) {
			cfg_msg(c, fname, l->line, true,
				"LUN %u: unknown target '%s' (no [target %s] section)",
				l->id, l->target, l->target);
			continue;
		}
		t->luns[l->id] = l;
	}
	for (int i = 0; i < c->ntargets; i++) {
		struct cfg_target *t = c->targets[i];
		bool any = false;

		for (int j = 0; j < TCQ_MAX_LUNS && !any; j++)
			any = t->luns[j] != NULL;
		if (!any)
			cfg_msg(c, fname, t->line, false,
				"target '%s' has no LUNs", t->name);
		else if (!t->luns[0])
			cfg_msg(c, fname, t->line, false,
				"target '%s' has no LUN 0; some initiators look for it first",
				t->name);
	}
	if (c->ntargets == 0)
		cfg_msg(c, fname, 0, false, "no targets configured");
	cfg_check_chap(c, fname, &c->set.discovery_chap, "[global] discovery",
		       0);
	for (int i = 0; i < c->ntargets; i++) {
		char what[TCQ_NAME_MAX + 16];

		snprintf(what, sizeof(what), "[target %s]", c->targets[i]->name);
		cfg_check_chap(c, fname, &c->targets[i]->chap, what,
			       c->targets[i]->line);
		if (alua_finish(&c->targets[i]->alua, err, sizeof(err)) < 0)
			cfg_msg(c, fname, c->targets[i]->line, true, "%s: %s",
				what, err);
		cfg_check_shared_prefetch(c, fname, c->targets[i]);
	}
	cfg_finish_initiators(c, fname);
	cfg_sort_msgs(c);
	return c->nerrors ? -1 : 0;
}

/* ---- live changes ----------------------------------------------------- */

struct cfg_target *cfg_find_target(const struct cfg *c, const char *name)
{
	return find_target(c, name);
}

struct cfg_lun *cfg_find_lun(const struct cfg *c, const char *target,
			     unsigned id)
{
	return find_lun(c, target, id);
}

static void free_lun(struct cfg_lun *l)
{
	free(l->path);
	free(l->backend);
	free(l->record);
	free(l);
}

int cfg_remove_lun(struct cfg *c, const char *target, unsigned id)
{
	for (int i = 0; i < c->nluns; i++) {
		struct cfg_lun *l = c->luns[i];
		struct cfg_target *t;

		if (l->id != id || strcasecmp(l->target, target))
			continue;
		if ((t = find_target(c, target)) && id < TCQ_MAX_LUNS &&
		    t->luns[id] == l)
			t->luns[id] = NULL;
		free_lun(l);
		memmove(&c->luns[i], &c->luns[i + 1],
			sizeof(*c->luns) * (size_t)(c->nluns - i - 1));
		c->nluns--;
		return 0;
	}
	return -1;
}

int cfg_remove_target(struct cfg *c, const char *name)
{
	for (int i = 0; i < c->ntargets; i++) {
		struct cfg_target *t = c->targets[i];

		if (strcasecmp(t->name, name))
			continue;
		for (unsigned j = 0; j < TCQ_MAX_LUNS; j++)
			if (t->luns[j])
				cfg_remove_lun(c, t->name, j);
		cfg_free_initiators(c, t->name);
		acl_free(&t->acl);
		OPENSSL_cleanse(&t->chap, sizeof(t->chap));
		free(t);
		memmove(&c->targets[i], &c->targets[i + 1],
			sizeof(*c->targets) * (size_t)(c->ntargets - i - 1));
		c->ntargets--;
		return 0;
	}
	return -1;
}

int cfg_remove_listen(struct cfg *c, const char *addr)
{
	for (int i = 0; i < c->nlisten; i++) {
		if (strcasecmp(c->listen[i], addr))
			continue;
		free(c->listen[i]);
		memmove(&c->listen[i], &c->listen[i + 1],
			sizeof(*c->listen) * (size_t)(c->nlisten - i - 1));
		c->nlisten--;
		return 0;
	}
	return -1;
}

int cfg_set_pairs(struct cfg *c, enum cfg_section sec, void *base,
		  char *const *words, int n, char *err, size_t errlen)
{
	static const char *const names[] = { "[global]", "[target]",
					     "[lun]", "[initiator]" };

	for (int i = 0; i < n; i++) {
		const char *eq = strchr(words[i], '=');
		char key[64], verr[300];
		const struct cfg_key *k;
		size_t kl = eq ? (size_t)(eq - words[i]) : 0;

		if (!eq || kl == 0 || kl >= sizeof(key)) {
			snprintf(err, errlen, "'%.64s': expected key=value",
				 words[i]);
			return -1;
		}
		memcpy(key, words[i], kl);
		key[kl] = '\0';
		k = cfg_key_find(sec, key);
		if (!k) {
			snprintf(err, errlen, "unknown key '%s' for a %s section",
				 key, names[sec]);
			return -1;
		}
		if (k->type->set(k, c, base, eq + 1, verr, sizeof(verr)) < 0) {
			snprintf(err, errlen, "bad value for '%s': %s", k->name,
				 verr);
			return -1;
		}
	}
	return 0;
}
