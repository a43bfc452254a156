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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include "backend/bdev.h"
#include "target/config.h"
#include "target/config_keys.h"
#include "target/config_priv.h"

enum sect { S_NONE, S_GLOBAL, S_TARGET, S_LUN, S_INITIATOR, S_SKIP };

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
	char sect_text[2 * TCQ_NAME_MAX + 32];	/* "[target NAME]" for
						 * messages */
	struct cfg_target *tgt;
	struct cfg_lun *lun;
	struct cfg_initiator *init;
	/* keys set in the current section, a bit per place in cfg_keys[],
	 * and in [global] (which may recur) */
	uint64_t seen[CFG_SEEN_WORDS], global_seen[CFG_SEEN_WORDS];
	int max_burst_line, first_burst_line;
};

#define ERR(p, ...) cfg_msg((p)->c, (p)->fname, (p)->line, true, __VA_ARGS__)

/* ---- sections ------------------------------------------------------ */

static bool backend_is_aio(const char *spec)
{
	return bdev_spec_uses_path(spec);	/* aio, maybe under wrappers */
}

static bool key_seen(const struct parser *p, const char *name)
{
	const struct cfg_key *k = cfg_key_find(CFG_LUN, name);
	size_t i = (size_t)(k - cfg_keys);

	return k && (p->seen[i / 64] & (1ull << (i % 64)));
}

/*
 * type = cdrom (scsi/mmc.h): a read-only, removable medium of 2048-byte
 * blocks (which block_size cannot say) whose size is the image's. Keys
 * that would say otherwise, or that act on writes or on a block device
 * only, are refused by name.
 */
static void cdrom_section_end(struct parser *p, struct cfg_lun *l)
{
	static const char *const no[] = {
		"size", "create", "block_size", "physical_block_size",
		"write_cache",
		"thin", "thin_threshold", "sanitize", "flush", "fua",
		"record", "record_max", "barrier", "qam",
	};

	for (size_t i = 0; i < sizeof(no) / sizeof(no[0]); i++)
		if (key_seen(p, no[i]))
			cfg_msg(p->c, p->fname, l->line, true,
				"[lun %s %u] type = cdrom: %s does not apply "
				"(a read-only CD/DVD image)", l->target, l->id,
				no[i]);
	if (key_seen(p, "read_only") && !l->read_only)
		cfg_msg(p->c, p->fname, l->line, true,
			"[lun %s %u] type = cdrom: read_only = no: a CD/DVD "
			"image is read-only", l->target, l->id);
	if (key_seen(p, "removable") && !l->removable)
		cfg_msg(p->c, p->fname, l->line, true,
			"[lun %s %u] type = cdrom: removable = no: a CD/DVD "
			"drive's medium is removable", l->target, l->id);
}

/* Checks that need the whole section: run when the next one starts. */
static void section_end(struct parser *p)
{
	struct cfg_lun *l = p->lun;

	if (p->sect == S_LUN && l && l->type == CFG_LUN_CDROM)
		cdrom_section_end(p, l);
	else if (p->sect == S_LUN && l) {
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
	p->init = NULL;
	memset(p->seen, 0, sizeof(p->seen));
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
		memcpy(p->seen, p->global_seen, sizeof(p->seen));
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
	} else if (strcasecmp(w[0], "initiator") == 0) {
		if (n != 3) {
			ERR(p, "bad section header: expected [initiator "
			    "TARGET-NAME INITIATOR-NAME]");
			return;
		}
		if (!(p->init = cfg_add_initiator(p->c, w[1], w[2], err,
						  sizeof(err)))) {
			ERR(p, "%s", err);
			return;
		}
		p->init->line = p->line;
		snprintf(p->sect_text, sizeof(p->sect_text),
			 "[initiator %s %s]", w[1], w[2]);
		p->sect = S_INITIATOR;
	} else {
		ERR(p, "unknown section [%s] (expected global, target, lun or "
		    "initiator)", w[0]);
	}
}

/* ---- keys ---------------------------------------------------------- */

/* Lines that the checks at the end of a section or of the file name. */
static void note_line(struct parser *p, const struct cfg_key *k)
{
	if (k->section == CFG_LUN && strcmp(k->name, "size") == 0)
		p->lun->size_line = p->line;
	else if (strcmp(k->name, "max_burst_length") == 0)
		p->max_burst_line = p->line;
	else if (strcmp(k->name, "first_burst_length") == 0)
		p->first_burst_line = p->line;
}

static int on_key(void *user, const char *section, const char *name,
		  const char *value)
{
	struct parser *p = user;
	const struct cfg_key *k;
	enum cfg_section cs;
	uint64_t bit;
	size_t word;
	char err[300];
	void *base;

	switch (p->sect) {
	case S_NONE:
		ERR(p, "key '%s' outside any section", name);
		return 1;
	case S_SKIP:		/* the header was already reported */
		return 1;
	case S_GLOBAL:
		cs = CFG_GLOBAL;
		base = &p->c->set;
		break;
	case S_TARGET:
		cs = CFG_TARGET;
		base = p->tgt;
		break;
	case S_INITIATOR:
		cs = CFG_INITIATOR;
		base = p->init;
		break;
	case S_LUN:
	default:
		cs = CFG_LUN;
		base = p->lun;
		break;
	}
	k = cfg_key_find(cs, name);
	if (!k) {
		ERR(p, "unknown key '%s' in %s", name, p->sect_text);
		return 1;
	}
	bit = 1ull << ((k - cfg_keys) % 64);
	word = (size_t)(k - cfg_keys) / 64;
	if (!k->type->repeatable && (p->seen[word] & bit)) {
		ERR(p, "duplicate key '%s' in %s", k->name, p->sect_text);
		return 1;
	}
	p->seen[word] |= bit;
	if (p->sect == S_GLOBAL)
		memcpy(p->global_seen, p->seen, sizeof(p->seen));
	if (k->type->set(k, p->c, base, value, err, sizeof(err)) < 0)
		ERR(p, "bad value for '%s': %s", k->name, err);
	else
		note_line(p, k);
	return 1;	/* errors are ours to report: keep inih going */
}

/* ---- lines --------------------------------------------------------- */

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
