/*
 * A whole struct cfg as tcqd.conf text, and back (config.h): every key
 * whose value differs from its default, through the key table's
 * formatters (config_format.c); saving it atomically; copying a cfg by
 * writing and reading it again, so that a copy holds exactly what a file
 * would.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>
#include "scsi/alua.h"
#include "target/config.h"
#include "target/config_keys.h"
#include "target/config_priv.h"

/* ---- values of one key -------------------------------------------------- */

struct values {
	char **v;
	int n;
	bool oom;
};

static void collect(void *ctx, const char *value)
{
	struct values *vs = ctx;
	char **nv = realloc(vs->v, sizeof(*nv) * (size_t)(vs->n + 1));

	if (!nv || !(nv[vs->n] = strdup(value))) {
		if (nv)
			vs->v = nv;
		vs->oom = true;
		return;
	}
	vs->v = nv;
	vs->n++;
}

static void values_free(struct values *vs)
{
	for (int i = 0; i < vs->n; i++)
		free(vs->v[i]);
	free(vs->v);
	memset(vs, 0, sizeof(*vs));
}

static void values_of(const struct cfg_key *k, const struct cfg *c,
		      const void *base, struct values *vs)
{
	memset(vs, 0, sizeof(*vs));
	k->type->fmt(k, c, base, collect, vs);
}

static bool values_same(const struct values *a, const struct values *b)
{
	if (a->n != b->n)
		return false;
	for (int i = 0; i < a->n; i++)
		if (strcmp(a->v[i], b->v[i]))
			return false;
	return true;
}

bool cfg_key_equal(const struct cfg_key *k, const struct cfg *ca,
		   const void *a, const struct cfg *cb, const void *b)
{
	struct values va, vb;
	bool same;

	values_of(k, ca, a, &va);
	values_of(k, cb, b, &vb);
	same = !va.oom && !vb.oom && values_same(&va, &vb);
	values_free(&va);
	values_free(&vb);
	return same;
}

/* ---- text --------------------------------------------------------------- */

struct out {
	char *buf;
	size_t len, cap;
	bool oom;
};

static void put(struct out *o, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void put(struct out *o, const char *fmt, ...)
{
	va_list ap;
	int n;

	for (;;) {
		va_start(ap, fmt);
		n = vsnprintf(o->buf ? o->buf + o->len : NULL,
			      o->buf ? o->cap - o->len : 0, fmt, ap);
		va_end(ap);
		if (n < 0) {
			o->oom = true;
			return;
		}
		if (o->buf && o->len + (size_t)n < o->cap) {
			o->len += (size_t)n;
			return;
		}
		size_t ncap = (o->cap ? o->cap * 2 : 4096) + (size_t)n;
		char *nb = realloc(o->buf, ncap);

		if (!nb) {
			o->oom = true;
			return;
		}
		o->buf = nb;
		o->cap = ncap;
	}
}

/* The keys of one section that differ from the section's defaults. */
static void put_section(struct out *o, enum cfg_section sec,
			const struct cfg *c, const void *base,
			const struct cfg *dc, const void *dbase)
{
	for (size_t i = 0; i < cfg_nkeys; i++) {
		const struct cfg_key *k = &cfg_keys[i];
		struct values v, d;

		if (k->section != sec)
			continue;
		values_of(k, c, base, &v);
		values_of(k, dc, dbase, &d);
		o->oom |= v.oom || d.oom;
		/* listen is always written: its default is only a default
		 * while no listen line exists. */
		if (!values_same(&v, &d) || !strcmp(k->name, "listen"))
			for (int j = 0; j < v.n; j++)
				put(o, "%s = %s\n", k->name, v.v[j]);
		values_free(&v);
		values_free(&d);
	}
}

char *cfg_format(const struct cfg *c, const char *header)
{
	struct cfg dflt;
	struct cfg_target *dt;
	struct cfg_lun *dl;
	struct out o = { 0 };
	char err[300];

	cfg_init(&dflt);
	dt = cfg_add_target(&dflt, "iqn.2000-01.invalid:default", err,
			    sizeof(err));
	dl = cfg_add_lun(&dflt, "iqn.2000-01.invalid:default", 0, err,
			 sizeof(err));
	if (!dt || !dl) {
		cfg_free(&dflt);
		return NULL;
	}
	if (header)
		put(&o, "%s", header);
	put(&o, "[global]\n");
	put_section(&o, CFG_GLOBAL, c, &c->set, &dflt, &dflt.set);
	for (int i = 0; i < c->ntargets; i++) {
		const struct cfg_target *t = c->targets[i];
		struct alua_cfg da = dt->alua, groups = { 0 };

		/* A target's default port groups are the one cfg_finish
		 * makes from its own ids; the ids default to 1. */
		groups.tpg_id = t->alua.tpg_id;
		groups.rel_port_id = t->alua.rel_port_id;
		groups.ngroups = 0;
		alua_finish(&groups, err, sizeof(err));
		memset(&dt->alua, 0, sizeof(dt->alua));
		alua_finish(&dt->alua, err, sizeof(err));
		dt->alua.ngroups = groups.ngroups;
		memcpy(dt->alua.groups, groups.groups, sizeof(groups.groups));
		dt->tpgt = t->tpgt_set ? 0 : t->tpgt;
		/* A target added by hand (tcqctl) is not finished yet:
		 * write it as cfg_finish will make it. */
		struct cfg_target tf = *t;

		if (!tf.alua.tpg_id || !tf.alua.ngroups)
			alua_finish(&tf.alua, err, sizeof(err));
		put(&o, "\n[target %s]\n", t->name);
		put_section(&o, CFG_TARGET, c, &tf, &dflt, dt);
		dt->alua = da;
		for (int j = 0; j < TCQ_MAX_LUNS; j++) {
			if (!t->luns[j])
				continue;
			put(&o, "\n[lun %s %d]\n", t->name, j);
			put_section(&o, CFG_LUN, c, t->luns[j], &dflt, dl);
		}
	}
	/* After every target, so that one naming no target is written
	 * too, and refused when read back. */
	for (int i = 0; i < c->ninits; i++) {
		static const struct cfg_initiator none;
		const struct cfg_initiator *ci = c->inits[i];

		put(&o, "\n[initiator %s %s]\n", ci->target, ci->name);
		put_section(&o, CFG_INITIATOR, c, ci, &dflt, &none);
	}
	cfg_free(&dflt);
	if (o.oom) {
		free(o.buf);
		return NULL;
	}
	return o.buf;
}

/* ---- saving and copying ------------------------------------------------- */

int cfg_save(const struct cfg *c, const char *path, char *err,
	     size_t errlen)
{
	char tmp[4200], header[256], stamp[64];
	time_t now = time(NULL);
	struct tm tm;
	char *text;
	size_t len, off = 0;
	int fd;

	strftime(stamp, sizeof(stamp), "%Y-%m-%d %H:%M:%S %z",
		 localtime_r(&now, &tm));
	snprintf(header, sizeof(header),
		 "# tcqd configuration, written by tcqctl save at %s.\n"
		 "# Keys at their default are left out (tcqd.conf(5)).\n\n",
		 stamp);
	text = cfg_format(c, header);
	if (!text) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	len = strlen(text);
	if ((size_t)snprintf(tmp, sizeof(tmp), "%s.tmp.%ld", path,
			     (long)getpid()) >= sizeof(tmp)) {
		free(text);
		snprintf(err, errlen, "%s: path too long", path);
		return -1;
	}
	/* 0600 always: a file with CHAP secrets must not be readable by
	 * others, and tcqd warns about any that is. */
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0) {
		snprintf(err, errlen, "%s: %s", tmp, strerror(errno));
		free(text);
		return -1;
	}
	while (off < len) {
		ssize_t n = write(fd, text + off, len - off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			goto io_error;
		off += (size_t)n;
	}
	if (fsync(fd) < 0)
		goto io_error;
	if (close(fd) < 0) {
		fd = -1;
		goto io_error;
	}
	fd = -1;
	if (rename(tmp, path) < 0)
		goto io_error;
	free(text);
	/* The rename is durable once the folder is. */
	{
		char dir[4096];
		char *slash;

		snprintf(dir, sizeof(dir), "%s", path);
		slash = strrchr(dir, '/');
		if (slash == dir)
			slash[1] = '\0';
		else if (slash)
			*slash = '\0';
		else
			snprintf(dir, sizeof(dir), ".");
		int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

		if (dfd >= 0) {
			fsync(dfd);
			close(dfd);
		}
	}
	return 0;
io_error:
	snprintf(err, errlen, "%s: %s", path, strerror(errno));
	if (fd >= 0)
		close(fd);
	unlink(tmp);
	free(text);
	return -1;
}

/* The first error of a cfg read from text, its "configuration:LINE: "
 * replaced by the section the line is in: the text was made by
 * cfg_format, so its line numbers mean nothing to whoever asked. */
static void first_error(const struct cfg *c, const char *text, char *err,
			size_t errlen)
{
	for (int i = 0; i < c->nmsgs; i++) {
		const char *m = c->msgs[i], *rest;
		char section[TCQ_NAME_MAX + 16] = "";
		int line = 0, n = 0;

		if (sscanf(m, "configuration:%d: %n", &line, &n) < 1 || !n) {
			if (strncmp(m, "configuration: ", 15) == 0)
				m += 15;
			if (strncmp(m, "warning: ", 9) == 0)
				continue;
			snprintf(err, errlen, "%s", m);
			return;
		}
		rest = m + n;
		if (strncmp(rest, "warning: ", 9) == 0)
			continue;
		/* The last section header at or above that line. */
		for (const char *p = text; *p && line > 0; line--) {
			const char *eol = strchr(p, '\n');
			size_t len = eol ? (size_t)(eol - p) : strlen(p);

			if (*p == '[' && len < sizeof(section)) {
				memcpy(section, p, len);
				section[len] = '\0';
			}
			if (!eol)
				break;
			p = eol + 1;
		}
		if (rest[0] == '[')	/* it names its section itself */
			section[0] = '\0';
		snprintf(err, errlen, "%s%s%s", section, section[0] ? ": " : "",
			 rest);
		return;
	}
	snprintf(err, errlen, "the configuration does not check out");
}

int cfg_copy(struct cfg *dst, const struct cfg *src, char *err,
	     size_t errlen)
{
	char *text = cfg_format(src, NULL);
	int rc;

	cfg_init(dst);
	if (!text) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	rc = cfg_load_string(dst, "configuration", text);
	if (rc < 0)
		first_error(dst, text, err, errlen);
	free(text);
	if (rc < 0) {
		cfg_free(dst);
		return -1;
	}
	return 0;
}
