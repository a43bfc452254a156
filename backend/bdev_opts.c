/*
 * A backend's options against its table (bdev_opts.h): the walk over a
 * spec with its error messages, writing the options back out, and what a
 * key's values look like. The value grammar is in bdev_opt_value.c.
 */
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "backend/bdev_opts.h"

#define BDEV_OPTS_MAX 64	/* keys per table: one bit each in a mask */
#define SHOWN 64		/* bytes of a bad key or value in messages */

/* How much of an n-byte bad key a message shows. */
static int shown(size_t n)
{
	return n > SHOWN ? SHOWN : (int)n;
}

/* Output with snprintf's contract: n counts all, buf holds what fits. */
struct out {
	char *buf;
	size_t len, n;
};

static void out_add(struct out *o, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void out_add(struct out *o, const char *fmt, ...)
{
	va_list ap;
	size_t room = o->n < o->len ? o->len - o->n : 0;
	int k;

	va_start(ap, fmt);
	k = vsnprintf(room ? o->buf + o->n : NULL, room, fmt, ap);
	va_end(ap);
	if (k > 0)
		o->n += (size_t)k;
}

static bool is_base(const char *p)
{
	return !strncmp(p, "base=", 5);
}

const char *bdev_opts_base(const char *spec)
{
	const char *p = spec;

	for (;;) {
		while (*p == ',')
			p++;
		if (is_base(p))
			return p + 5;
		p = strchr(p, ',');
		if (!p)
			return "";
	}
}

static const struct bdev_opt *find_key(const struct bdev_opts_def *def,
				       const char *key, size_t klen)
{
	for (size_t i = 0; i < def->nopts; i++)
		if (strlen(def->opts[i].key) == klen &&
		    !strncmp(def->opts[i].key, key, klen))
			return &def->opts[i];
	return NULL;
}

/* "pool, image, conf" and, for a wrapper, "base". */
static void key_list(const struct bdev_opts_def *def, char *buf, size_t len)
{
	struct out out = { buf, len, 0 };

	buf[0] = '\0';
	for (size_t i = 0; i < def->nopts; i++)
		out_add(&out, "%s%s", i ? ", " : "", def->opts[i].key);
	if (def->wraps)
		out_add(&out, "%sbase", def->nopts ? ", " : "");
}

/* The message for a value o refused. */
static void bad_value(const struct bdev_opts_def *def,
		      const struct bdev_opt *o, const char *val,
		      char *err, size_t errlen)
{
	char syntax[128];

	if (o->type == BDEV_OPT_STRING) {
		snprintf(err, errlen, "%s: %s: empty or too long (at most %zu "
			 "characters)", def->backend, o->key, o->len - 1);
		return;
	}
	bdev_opt_syntax(o, syntax, sizeof(syntax));
	snprintf(err, errlen, "%s: bad %s '%.*s' (expected %s)", def->backend,
		 o->key, SHOWN, val, syntax);
}

/* Applies one item to vals; -1 with err written when it is refused. */
static int apply_item(const struct bdev_opts_def *def,
		      const struct bdev_opt_item *it, void *vals,
		      uint64_t *seen, char *err, size_t errlen)
{
	const struct bdev_opt *o = find_key(def, it->key, it->klen);
	size_t i;
	char *val;
	int rc;

	if (!o) {
		char keys[256];

		key_list(def, keys, sizeof(keys));
		snprintf(err, errlen, "%s: unknown option '%.*s' (expected %s)",
			 def->backend, shown(it->klen), it->key, keys);
		return -1;
	}
	i = (size_t)(o - def->opts);
	if ((*seen & (1ull << i)) && !(o->flags & BDEV_OPT_REPEAT)) {
		snprintf(err, errlen, "%s: option '%s' given twice",
			 def->backend, o->key);
		return -1;
	}
	*seen |= 1ull << i;
	val = strndup(it->val, it->vlen);
	if (!val) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	rc = bdev_opt_value_parse(o, val, (char *)vals + o->offset);
	if (rc < 0)
		bad_value(def, o, val, err, errlen);
	free(val);
	return rc;
}

/* Walks spec into vals (a scratch copy: the caller's stays as it was
 * until everything is accepted). */
static int walk(const struct bdev_opts_def *def, const char *spec,
		void *vals, const char **base, char *err, size_t errlen)
{
	struct bdev_opt_item it;
	uint64_t seen = 0;
	int rc;

	if (base)
		*base = "";
	for (;;) {
		while (*spec == ',')
			spec++;
		if (def->wraps && is_base(spec)) {
			*base = spec + 5;	/* the rest, commas and all */
			break;
		}
		rc = bdev_opt_item_next(&spec, &it);
		if (rc == 0)
			break;
		if (rc < 0) {
			snprintf(err, errlen, "%s: malformed options: '%.*s' is "
				 "not key=value", def->backend, shown(it.klen),
				 it.key);
			return -1;
		}
		if (apply_item(def, &it, vals, &seen, err, errlen) < 0)
			return -1;
	}
	for (size_t i = 0; i < def->nopts; i++) {
		if ((def->opts[i].flags & BDEV_OPT_REQUIRED) &&
		    !(seen & (1ull << i))) {
			snprintf(err, errlen, "%s: %s= is required",
				 def->backend, def->opts[i].key);
			return -1;
		}
	}
	return 0;
}

int bdev_opts_parse(const struct bdev_opts_def *def, const char *spec,
		    void *vals, const char **base, char *err, size_t errlen)
{
	void *scratch;
	int rc;

	if (def->nopts > BDEV_OPTS_MAX || (def->wraps && !base)) {
		snprintf(err, errlen, "%s: bad option table", def->backend);
		return -1;
	}
	scratch = malloc(def->size ? def->size : 1);
	if (!scratch) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	memcpy(scratch, vals, def->size);
	rc = walk(def, spec ? spec : "", scratch, base, err, errlen);
	if (rc == 0)
		memcpy(vals, scratch, def->size);
	free(scratch);
	return rc;
}

/* ---- writing options back out ------------------------------------------ */

/* The text of one value, malloc'd; NULL when it has none. */
static char *value_text(const struct bdev_opt *o, const void *vals)
{
	const void *field = (const char *)vals + o->offset;
	int n = bdev_opt_value_format(o, field, NULL, 0);
	char *s;

	if (n < 0 || !(s = malloc((size_t)n + 1)))
		return NULL;
	bdev_opt_value_format(o, field, s, (size_t)n + 1);
	return s;
}

int bdev_opts_format(const struct bdev_opts_def *def, const void *vals,
		     const char *base, char *buf, size_t len)
{
	struct out out = { buf, len, 0 };

	if (len)
		buf[0] = '\0';
	for (size_t i = 0; i < def->nopts; i++) {
		const struct bdev_opt *o = &def->opts[i];
		char *v = value_text(o, vals);
		char *d = value_text(o, def->defaults);
		bool differs = v && (!d || strcmp(v, d));

		if (differs)
			out_add(&out, "%s%s=%s", out.n ? "," : "", o->key, v);
		free(d);
		if (!v)
			return -1;
		free(v);
	}
	if (base && *base)
		out_add(&out, "%sbase=%s", out.n ? "," : "", base);
	return out.n > INT_MAX ? -1 : (int)out.n;
}

/* ---- what a value looks like ------------------------------------------- */

static int words_syntax(const struct bdev_opt *o, char *buf, size_t len)
{
	struct out out = { buf, len, 0 };

	if (len)
		buf[0] = '\0';
	for (const struct bdev_opt_word *w = o->words; w->word; w++)
		out_add(&out, "%s%s", out.n ? "|" : "", w->word);
	return (int)out.n;
}

/* " in 1..3600", ", at least 1", "" (no bounds). */
static int bounds_syntax(const struct bdev_opt *o, char *buf, size_t len)
{
	if (o->max)
		return snprintf(buf, len, " in %llu..%llu",
				(unsigned long long)o->min,
				(unsigned long long)o->max);
	if (o->min)
		return snprintf(buf, len, ", at least %llu",
				(unsigned long long)o->min);
	return snprintf(buf, len, "%s", "");
}

int bdev_opt_syntax(const struct bdev_opt *o, char *buf, size_t len)
{
	char bounds[64];

	switch (o->type) {
	case BDEV_OPT_BOOL:
		return snprintf(buf, len, "0|1");
	case BDEV_OPT_SIZE:
	case BDEV_OPT_UINT:
		bounds_syntax(o, bounds, sizeof(bounds));
		return snprintf(buf, len, "%s%s", o->type == BDEV_OPT_SIZE ?
				"N[K|M|G|T]" : "N", bounds);
	case BDEV_OPT_TIME:
		return snprintf(buf, len, "N[ns|us|ms|s]");
	case BDEV_OPT_REAL:
		return snprintf(buf, len, "%g..%g", o->fmin, o->fmax);
	case BDEV_OPT_ENUM:
		return words_syntax(o, buf, len);
	case BDEV_OPT_STRING:
		return snprintf(buf, len, "TEXT");
	case BDEV_OPT_CUSTOM:
		return snprintf(buf, len, "%s", o->syntax ? o->syntax : "?");
	}
	return -1;
}
