/*
 * The INI parser for tcqd.conf, on libinih. inih reports only the first
 * bad line and does not tell its handler the line number, so we feed it
 * through our own line reader: the reader counts lines, handles section
 * headers itself (inih would not call us for an empty section) and
 * rejects malformed lines with a precise message, so inih only ever sees
 * clean "key = value" lines and the handler knows the current line.
 */
#include <errno.h>
#include <ini.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include "tcq/log.h"
#include "backend/bdev.h"
#include "target/config.h"
#include "target/config_priv.h"

static bool backend_is_aio(const char *spec)
{
	return bdev_spec_uses_path(spec);	/* aio, maybe under wrappers */
}

/* ---- the INI reader -------------------------------------------------- */

enum ktype {
	K_U32,		/* uint32_t, decimal, within min..max */
	K_U16,
	K_INT,
	K_SIZE32,	/* uint32_t byte count, K/M/G/T suffixes */
	K_SIZE64,	/* uint64_t byte count */
	K_BOOL,
	K_TRI,		/* auto|yes|no into int: -1, 1, 0 */
	K_DIGEST,	/* allow|deny into a bool */
	K_BLOCK,	/* 512 or 4096 */
	K_STR,		/* strdup into char *, replacing the old value */
	K_NAMEBUF,	/* copy into char[TCQ_NAME_MAX] */
	K_LISTEN,	/* repeatable */
	K_LOGLEVEL,
	K_USER,		/* CHAP user name into char[AUTH_USER_MAX] */
	K_SECRET,	/* CHAP secret into char[AUTH_SECRET_MAX] */
	K_CHAP_ALGS,	/* algorithm preference list */
	K_ACL_NAME,	/* repeatable: struct acl names */
	K_ACL_NET,	/* repeatable: struct acl networks */
	K_BARRIER,	/* drain|flush|ignore into a uint8_t */
	K_QAM,		/* restricted|unrestricted into a uint8_t */
	K_ALUA_GROUP,	/* repeatable: ID:STATE:PORTS into struct alua_cfg */
	K_SERIAL,	/* unit serial number into char[33] */
	K_SHARED,	/* auto|none into a bool (true: none) */
};

struct key {
	const char *name;
	enum ktype type;
	uint64_t min, max;
	size_t off;
};

#define SET(f) offsetof(struct tcq_settings, f)
static const struct key global_keys[] = {
	{ "listen", K_LISTEN, 0, 0, 0 },
	{ "threads", K_INT, 0, CFG_MAX_THREADS, SET(threads) },
	{ "log_level", K_LOGLEVEL, 0, 0, 0 },
	{ "max_recv_data_segment_length", K_SIZE32, 512, 16777215, SET(max_recv_dsl) },
	{ "max_burst_length", K_SIZE32, 512, 16777215, SET(max_burst) },
	{ "first_burst_length", K_SIZE32, 512, 16777215, SET(first_burst) },
	{ "max_outstanding_r2t", K_U32, 1, 65535, SET(max_outstanding_r2t) },
	{ "initial_r2t", K_BOOL, 0, 0, SET(initial_r2t) },
	{ "immediate_data", K_BOOL, 0, 0, SET(immediate_data) },
	{ "cmd_window", K_U32, 1, 65536, SET(cmd_window) },
	{ "nop_interval", K_U32, 0, 3600, SET(nop_interval_s) },
	{ "nop_timeout", K_U32, 1, 3600, SET(nop_timeout_s) },
	{ "login_timeout", K_U32, 1, 3600, SET(login_timeout_s) },
	{ "max_transfer_length", K_SIZE32, 4096, 1u << 30, SET(max_xfer_len) },
	{ "header_digest", K_DIGEST, 0, 0, SET(header_digest_allowed) },
	{ "data_digest", K_DIGEST, 0, 0, SET(data_digest_allowed) },
	{ "max_sessions", K_U32, 0, 65535, SET(max_sessions) },
	{ "login_idle_timeout", K_U32, 1, 3600, SET(login_idle_timeout_s) },
	{ "max_pending_logins", K_U32, 1, 65536, SET(max_pending_logins) },
	{ "chap_algorithms", K_CHAP_ALGS, 0, 0, SET(chap_algs) },
	{ "discovery_chap_user", K_USER, 0, 0, SET(discovery_chap.chap.user) },
	{ "discovery_chap_secret", K_SECRET, 0, 0, SET(discovery_chap.chap.secret) },
	{ "discovery_mutual_chap_user", K_USER, 0, 0, SET(discovery_chap.mutual.user) },
	{ "discovery_mutual_chap_secret", K_SECRET, 0, 0, SET(discovery_chap.mutual.secret) },
	{ "ctl", K_NAMEBUF, 0, 0, SET(ctl_path) },
	{ "state_dir", K_NAMEBUF, 0, 0, SET(state_dir) },
};
#undef SET

static const struct key target_keys[] = {
	{ "alias", K_NAMEBUF, 0, 0, offsetof(struct cfg_target, alias) },
	{ "tpgt", K_U16, 1, 65535, offsetof(struct cfg_target, tpgt) },
	{ "chap_user", K_USER, 0, 0, offsetof(struct cfg_target, chap.chap.user) },
	{ "chap_secret", K_SECRET, 0, 0, offsetof(struct cfg_target, chap.chap.secret) },
	{ "mutual_chap_user", K_USER, 0, 0, offsetof(struct cfg_target, chap.mutual.user) },
	{ "mutual_chap_secret", K_SECRET, 0, 0, offsetof(struct cfg_target, chap.mutual.secret) },
	{ "allow_initiator", K_ACL_NAME, 0, 0, offsetof(struct cfg_target, acl) },
	{ "allow_network", K_ACL_NET, 0, 0, offsetof(struct cfg_target, acl) },
	{ "max_sessions", K_U32, 0, 65535, offsetof(struct cfg_target, max_sessions) },
	{ "max_sessions_per_initiator", K_U32, 0, 65535,
	  offsetof(struct cfg_target, max_sessions_per_initiator) },
	/* ALUA (scsi/alua.h): this gateway's group and port, and every
	 * group of the target. */
	{ "tpg_id", K_U16, 1, 65535, offsetof(struct cfg_target, alua.tpg_id) },
	{ "rel_port_id", K_U16, 1, 65535,
	  offsetof(struct cfg_target, alua.rel_port_id) },
	{ "tpg", K_ALUA_GROUP, 0, 0, offsetof(struct cfg_target, alua) },
};

#define LUN(f) offsetof(struct cfg_lun, f)
static const struct key lun_keys[] = {
	{ "path", K_STR, 0, 0, LUN(path) },
	{ "backend", K_STR, 0, 0, LUN(backend) },
	{ "size", K_SIZE64, 0, 0, LUN(size) },
	{ "block_size", K_BLOCK, 0, 0, LUN(block_size) },
	{ "physical_block_size", K_SIZE32, 512, 1u << 20,
	  LUN(phys_block_size) },
	{ "read_only", K_BOOL, 0, 0, LUN(read_only) },
	{ "create", K_BOOL, 0, 0, LUN(create) },
	{ "queue_depth", K_U32, 1, CFG_MAX_QUEUE_DEPTH, LUN(queue_depth) },
	{ "write_cache", K_BOOL, 0, 0, LUN(write_cache) },
	{ "barrier", K_BARRIER, 0, 0, LUN(barrier) },
	{ "qam", K_QAM, 0, 0, LUN(qam) },
	{ "removable", K_BOOL, 0, 0, LUN(removable) },
	{ "thin", K_TRI, 0, 0, LUN(thin) },
	{ "sanitize", K_BOOL, 0, 0, LUN(sanitize) },
	{ "serial", K_SERIAL, 0, 0, LUN(serial) },
	{ "shared_state", K_SHARED, 0, 0, LUN(no_shared_state) },
};
#undef LUN

#define NKEYS(a) (sizeof(a) / sizeof((a)[0]))

enum sect { S_NONE, S_GLOBAL, S_TARGET, S_LUN, S_SKIP };

struct parser {
	struct cfg *c;
	const char *fname;
	FILE *f;		/* input: a file ... */
	const char *s;		/* ... or a string */
	char *lb;		/* the current line */
	size_t lbcap;
	int line;
	bool eof;
	enum sect sect;
	char sect_text[TCQ_NAME_MAX + 32];	/* "[target NAME]" for messages */
	struct cfg_target *tgt;
	struct cfg_lun *lun;
	uint32_t seen;		/* keys set in the current section */
	uint32_t global_seen;	/* keys set in [global] (may recur) */
	int max_burst_line, first_burst_line;
};

#define ERR(p, ...) cfg_msg((p)->c, (p)->fname, (p)->line, true, __VA_ARGS__)

/* Checks that need the whole section: run when the next one starts. */
static void section_end(struct parser *p)
{
	struct cfg_lun *l = p->lun;

	if (p->sect == S_LUN && l) {
		if (l->size && l->size % l->block_size)
			cfg_msg(p->c, p->fname, l->size_line, true,
				"size %llu is not a multiple of block_size %u",
				(unsigned long long)l->size, l->block_size);
		if (l->create && !l->size)
			cfg_msg(p->c, p->fname, l->line, true,
				"create = yes needs a size");
		if (l->phys_block_size &&
		    (l->phys_block_size < l->block_size ||
		     (l->phys_block_size & (l->phys_block_size - 1))))
			cfg_msg(p->c, p->fname, l->line, true,
				"physical_block_size %u is not block_size %u "
				"times a power of two", l->phys_block_size,
				l->block_size);
		if (!l->path && backend_is_aio(l->backend))
			cfg_msg(p->c, p->fname, l->line, true,
				"[lun %s %u] has no path", l->target, l->id);
	}
	p->sect = S_NONE;
	p->tgt = NULL;
	p->lun = NULL;
	p->seen = 0;
}

static void section_begin(struct parser *p, char *hdr)
{
	char *w[4], *save = NULL, err[300];
	int n = 0;

	section_end(p);
	p->sect = S_SKIP;	/* until the header proves good */
	for (char *t = strtok_r(hdr, " \t", &save); t;
	     t = strtok_r(NULL, " \t", &save)) {
		if (n == 4)
			break;
		w[n++] = t;
	}
	if (n == 0) {
		ERR(p, "empty section name");
		return;
	}
	if (strcasecmp(w[0], "global") == 0) {
		if (n != 1) {
			ERR(p, "bad section header: expected [global]");
			return;
		}
		snprintf(p->sect_text, sizeof(p->sect_text), "[global]");
		p->sect = S_GLOBAL;
		p->seen = p->global_seen;
	} else if (strcasecmp(w[0], "target") == 0) {
		if (n != 2) {
			ERR(p, "bad section header: expected [target NAME]");
			return;
		}
		if (!(p->tgt = cfg_add_target(p->c, w[1], err, sizeof(err)))) {
			ERR(p, "%s", err);
			return;
		}
		p->tgt->line = p->line;
		snprintf(p->sect_text, sizeof(p->sect_text), "[target %s]", w[1]);
		p->sect = S_TARGET;
	} else if (strcasecmp(w[0], "lun") == 0) {
		uint64_t id;

		if (n != 3) {
			ERR(p, "bad section header: expected [lun TARGET-NAME N]");
			return;
		}
		if (cfg_parse_uint(w[2], 0, TCQ_MAX_LUNS - 1, &id, err,
				   sizeof(err)) < 0) {
			ERR(p, "bad LUN number: %s", err);
			return;
		}
		if (!(p->lun = cfg_add_lun(p->c, w[1], (unsigned)id, err,
					   sizeof(err)))) {
			ERR(p, "%s", err);
			return;
		}
		p->lun->line = p->line;
		snprintf(p->sect_text, sizeof(p->sect_text), "[lun %s %u]",
			 w[1], (unsigned)id);
		p->sect = S_LUN;
	} else {
		ERR(p, "unknown section [%s] (expected global, target or lun)",
		    w[0]);
	}
}

static void set_value(struct parser *p, const struct key *k, void *base,
		      const char *v)
{
	char err[300];
	uint64_t u;
	bool b;
	char *field = (char *)base + k->off;

	switch (k->type) {
	case K_U32:
	case K_U16:
	case K_INT:
		if (cfg_parse_uint(v, k->min, k->max, &u, err, sizeof(err)) < 0)
			goto bad;
		if (k->type == K_U32)
			*(uint32_t *)field = (uint32_t)u;
		else if (k->type == K_U16)
			*(uint16_t *)field = (uint16_t)u;
		else
			*(int *)field = (int)u;
		return;
	case K_SIZE32:
	case K_SIZE64:
		if (cfg_parse_size(v, &u, err, sizeof(err)) < 0)
			goto bad;
		if (k->type == K_SIZE64) {
			*(uint64_t *)field = u;
			p->lun->size_line = p->line;
			return;
		}
		if (u < k->min || u > k->max) {
			snprintf(err, sizeof(err), "'%s' is out of range %llu..%llu",
				 v, (unsigned long long)k->min,
				 (unsigned long long)k->max);
			goto bad;
		}
		*(uint32_t *)field = (uint32_t)u;
		if (strcmp(k->name, "max_burst_length") == 0)
			p->max_burst_line = p->line;
		else if (strcmp(k->name, "first_burst_length") == 0)
			p->first_burst_line = p->line;
		return;
	case K_BOOL:
		if (cfg_parse_bool(v, &b, err, sizeof(err)) < 0)
			goto bad;
		*(bool *)field = b;
		return;
	case K_TRI:
		if (strcasecmp(v, "auto") == 0) {
			*(int *)field = -1;
			return;
		}
		if (cfg_parse_bool(v, &b, err, sizeof(err)) < 0)
			goto bad;
		*(int *)field = b;
		return;
	case K_DIGEST:
		if (strcasecmp(v, "allow") == 0) {
			*(bool *)field = true;
		} else if (strcasecmp(v, "deny") == 0) {
			*(bool *)field = false;
		} else {
			snprintf(err, sizeof(err), "'%s' is not allow or deny", v);
			goto bad;
		}
		return;
	case K_BLOCK:
		if (strcmp(v, "512") == 0) {
			*(uint32_t *)field = 512;
		} else if (strcmp(v, "4096") == 0) {
			*(uint32_t *)field = 4096;
		} else {
			snprintf(err, sizeof(err), "'%s' is not 512 or 4096", v);
			goto bad;
		}
		return;
	case K_STR: {
		char *d;

		if (!*v) {
			snprintf(err, sizeof(err), "empty value");
			goto bad;
		}
		if (!(d = strdup(v))) {
			snprintf(err, sizeof(err), "out of memory");
			goto bad;
		}
		free(*(char **)field);
		*(char **)field = d;
		return;
	}
	case K_NAMEBUF:
		if (strlen(v) >= TCQ_NAME_MAX) {
			snprintf(err, sizeof(err), "longer than %d bytes",
				 TCQ_NAME_MAX - 1);
			goto bad;
		}
		snprintf(field, TCQ_NAME_MAX, "%s", v);
		return;
	case K_LISTEN:
		if (cfg_add_listen(p->c, v, err, sizeof(err)) < 0)
			goto bad;
		return;
	case K_USER:
		if (!*v || strlen(v) >= AUTH_USER_MAX) {
			snprintf(err, sizeof(err), "must be 1..%d bytes",
				 AUTH_USER_MAX - 1);
			goto bad;
		}
		snprintf(field, AUTH_USER_MAX, "%s", v);
		return;
	case K_SECRET:
		/* Never echo the secret in a message. */
		if (strlen(v) < AUTH_SECRET_MIN || strlen(v) >= AUTH_SECRET_MAX) {
			snprintf(err, sizeof(err),
				 "a CHAP secret must be %d..%d bytes long",
				 AUTH_SECRET_MIN, AUTH_SECRET_MAX - 1);
			goto bad;
		}
		snprintf(field, AUTH_SECRET_MAX, "%s", v);
		p->c->has_secrets = true;
		return;
	case K_CHAP_ALGS: {
		int n = auth_chap_algs_parse(v, p->c->set.chap_algs,
					     AUTH_CHAP_ALGS_MAX, err,
					     sizeof(err));

		if (n < 0)
			goto bad;
		p->c->set.nchap_algs = (uint8_t)n;
		return;
	}
	case K_ACL_NAME:
		if (acl_add_name((struct acl *)field, v, err, sizeof(err)) < 0)
			goto bad;
		return;
	case K_ACL_NET:
		if (acl_add_net((struct acl *)field, v, err, sizeof(err)) < 0)
			goto bad;
		return;
	case K_BARRIER:
		if (cfg_parse_barrier(v, (uint8_t *)field, err, sizeof(err)) < 0)
			goto bad;
		return;
	case K_QAM:
		if (cfg_parse_qam(v, (uint8_t *)field, err, sizeof(err)) < 0)
			goto bad;
		return;
	case K_ALUA_GROUP:
		if (alua_add_group((struct alua_cfg *)field, v, err,
				   sizeof(err)) < 0)
			goto bad;
		return;
	case K_SERIAL:
		if (cfg_parse_serial(v, field, err, sizeof(err)) < 0)
			goto bad;
		return;
	case K_SHARED:
		if (cfg_parse_shared_state(v, (bool *)field, err,
					   sizeof(err)) < 0)
			goto bad;
		return;
	case K_LOGLEVEL: {
		int lv = log_parse_level(v);

		if (lv < 0) {
			snprintf(err, sizeof(err),
				 "'%s' is not error, warn, info or debug", v);
			goto bad;
		}
		p->c->log_level = lv;
		return;
	}
	}
	return;
bad:
	ERR(p, "bad value for '%s': %s", k->name, err);
}

static int on_key(void *user, const char *section, const char *name,
		  const char *value)
{
	struct parser *p = user;
	const struct key *keys;
	size_t nkeys, i;
	void *base;

	switch (p->sect) {
	case S_NONE:
		ERR(p, "key '%s' outside any section", name);
		return 1;
	case S_SKIP:		/* the header was already reported */
		return 1;
	case S_GLOBAL:
		keys = global_keys, nkeys = NKEYS(global_keys);
		base = &p->c->set;
		break;
	case S_TARGET:
		keys = target_keys, nkeys = NKEYS(target_keys);
		base = p->tgt;
		break;
	case S_LUN:
	default:
		keys = lun_keys, nkeys = NKEYS(lun_keys);
		base = p->lun;
		break;
	}
	for (i = 0; i < nkeys; i++)
		if (strcasecmp(keys[i].name, name) == 0)
			break;
	if (i == nkeys) {
		ERR(p, "unknown key '%s' in %s", name, p->sect_text);
		return 1;
	}
	if (keys[i].type != K_LISTEN && keys[i].type != K_ACL_NAME &&
	    keys[i].type != K_ACL_NET && keys[i].type != K_ALUA_GROUP &&
	    (p->seen & (1u << i))) {
		ERR(p, "duplicate key '%s' in %s", keys[i].name, p->sect_text);
		return 1;
	}
	p->seen |= 1u << i;
	if (p->sect == S_GLOBAL)
		p->global_seen = p->seen;
	set_value(p, &keys[i], base, value);
	if (p->sect == S_TARGET && !strcasecmp(keys[i].name, "tpgt"))
		p->tgt->tpgt_set = true;
	return 1;	/* errors are ours to report: keep inih going */
}

/* Next raw line into p->lb without its line ending; false at the end. */
static bool next_line(struct parser *p)
{
	size_t n;

	if (p->f) {
		ssize_t r = getline(&p->lb, &p->lbcap, p->f);

		if (r < 0)
			return false;
		n = (size_t)r;
	} else {
		const char *e;

		if (!*p->s)
			return false;
		e = strchr(p->s, '\n');
		n = e ? (size_t)(e - p->s) + 1 : strlen(p->s);
		if (n + 1 > p->lbcap) {
			char *nb = realloc(p->lb, n + 1);

			if (!nb)
				return false;
			p->lb = nb;
			p->lbcap = n + 1;
		}
		memcpy(p->lb, p->s, n);
		p->lb[n] = 0;
		p->s += n;
	}
	while (n && (p->lb[n - 1] == '\n' || p->lb[n - 1] == '\r'))
		p->lb[--n] = 0;
	return true;
}

/* inih's line source: see the comment at the top. */
static char *reader(char *buf, int num, void *stream)
{
	struct parser *p = stream;
	char *s, *e;
	size_t len;

	if (p->eof)
		return NULL;
	if (!next_line(p)) {
		section_end(p);
		p->eof = true;
		return NULL;
	}
	p->line++;
	s = p->lb;
	if (p->line == 1 && (unsigned char)s[0] == 0xef &&
	    (unsigned char)s[1] == 0xbb && (unsigned char)s[2] == 0xbf)
		s += 3;
	/* No leading blanks: inih would take the line as a continuation. */
	while (*s == ' ' || *s == '\t')
		s++;
	len = strlen(s);
	while (len && (s[len - 1] == ' ' || s[len - 1] == '\t'))
		s[--len] = 0;
	snprintf(buf, (size_t)num, "\n");

	if (!*s || *s == ';' || *s == '#')
		return buf;
	if (*s == '[') {
		e = strchr(s, ']');
		if (!e) {
			section_end(p);
			p->sect = S_SKIP;
			ERR(p, "syntax error: missing ']'");
			return buf;
		}
		if (e[1] && e[1 + strspn(e + 1, " \t")] != ';' &&
		    e[1 + strspn(e + 1, " \t")] != '#') {
			section_end(p);
			p->sect = S_SKIP;
			ERR(p, "syntax error: text after ']'");
			return buf;
		}
		*e = 0;
		section_begin(p, s + 1);
		return buf;
	}
	if (!strpbrk(s, "=:")) {
		ERR(p, "syntax error: expected key = value");
		return buf;
	}
	if (len + 2 > (size_t)num) {
		ERR(p, "line too long (at most %d characters)", num - 3);
		return buf;
	}
	snprintf(buf, (size_t)num, "%s\n", s);
	return buf;
}

static int cfg_run(struct cfg *c, struct parser *p)
{
	int r;

	p->c = c;
	r = ini_parse_stream(reader, p, on_key, p);
	free(p->lb);
	/* Our reader passes inih clean lines only; anything it still finds
	 * wrong is a syntax error we did not foresee. */
	if (r > 0) {
		bool known = false;

		for (int i = 0; i < c->nmsgs; i++)
			known |= c->msg_lines[i] == r;
		if (!known)
			cfg_msg(c, p->fname, r, true, "syntax error");
	} else if (r < 0) {
		cfg_msg(c, p->fname, 0, true, "cannot parse (out of memory)");
	}
	if (c->set.first_burst > c->set.max_burst)
		cfg_msg(c, p->fname,
			p->first_burst_line ? p->first_burst_line : p->max_burst_line,
			true, "first_burst_length %u exceeds max_burst_length %u",
			c->set.first_burst, c->set.max_burst);
	return cfg_finish(c, p->fname);
}

int cfg_load_string(struct cfg *c, const char *fname, const char *text)
{
	struct parser p = { .fname = fname, .s = text };

	return cfg_run(c, &p);
}

int cfg_load_file(struct cfg *c, const char *path)
{
	struct parser p = { .fname = path };
	struct stat st;
	int r;

	p.f = fopen(path, "re");
	if (!p.f) {
		cfg_msg(c, path, 0, true, "cannot open: %s", strerror(errno));
		return -1;
	}
	r = cfg_run(c, &p);
	/* Secrets in a file others can read are no secrets. */
	if (c->has_secrets && fstat(fileno(p.f), &st) == 0 &&
	    (st.st_mode & (S_IRWXG | S_IRWXO))) {
		cfg_msg(c, path, 0, false,
			"holds CHAP secrets but is readable by group or others (mode %03o); chmod 600 it",
			(unsigned)(st.st_mode & 0777));
		cfg_sort_msgs(c);
	}
	fclose(p.f);
	return r;
}
