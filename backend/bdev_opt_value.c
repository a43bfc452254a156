/*
 * The grammar of one option value, per key type, both ways: text to
 * value for the parser and value to text for writing a spec back out.
 * Every format here yields text its parse reads back to the same value.
 * Also the item tokenizer that splits "key=value,..." (bdev_opts.h).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "backend/bdev_opts.h"
#include "backend/bdev_priv.h"

/* ---- items ------------------------------------------------------------- */

int bdev_opt_item_next(const char **s, struct bdev_opt_item *it)
{
	const char *p = *s, *eq, *end;

	while (*p == ',')
		p++;
	if (!*p) {
		*s = p;
		return 0;
	}
	end = strchr(p, ',');
	if (!end)
		end = p + strlen(p);
	it->key = p;
	eq = memchr(p, '=', (size_t)(end - p));
	if (!eq || eq == p) {
		it->klen = (size_t)(end - p);
		it->val = end;
		it->vlen = 0;
		return -1;
	}
	it->klen = (size_t)(eq - p);
	it->val = eq + 1;
	it->vlen = (size_t)(end - eq - 1);
	*s = end;
	return 1;
}

/* ---- numbers with units ------------------------------------------------ */

/* The decimal number a size or a time starts with (no sign, no space);
 * *end is what follows it. */
static int leading_number(const char *s, unsigned long long *v, char **end)
{
	if (!s || *s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	*v = strtoull(s, end, 10);
	return errno ? -EINVAL : 0;
}

int bdev_parse_size(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;
	unsigned shift = 0;

	if (leading_number(s, &v, &end) < 0)
		return -EINVAL;
	switch (*end) {
	case '\0': break;
	case 'k': case 'K': shift = 10; end++; break;
	case 'm': case 'M': shift = 20; end++; break;
	case 'g': case 'G': shift = 30; end++; break;
	case 't': case 'T': shift = 40; end++; break;
	default: return -EINVAL;
	}
	if (*end == 'i' || *end == 'B' || *end == 'b')	/* "MiB", "MB" */
		end += (*end == 'i' && (end[1] == 'B' || end[1] == 'b')) ? 2 : 1;
	if (*end || (shift && v > (~0ull >> shift)))
		return -EINVAL;
	*out = v << shift;
	return 0;
}

/* The largest binary suffix that keeps the size exact: "64M", "4K". */
static int size_format(uint64_t v, char *buf, size_t len)
{
	static const char suffix[] = "KMGT";
	int i = -1;

	while (i < 3 && v && !(v & 1023)) {
		v >>= 10;
		i++;
	}
	if (i < 0)
		return snprintf(buf, len, "%" PRIu64, v);
	return snprintf(buf, len, "%" PRIu64 "%c", v, suffix[i]);
}

static const struct {
	const char *unit;
	uint64_t ns;
} time_units[] = {	/* largest first, for formatting */
	{ "s", 1000000000 }, { "ms", 1000000 }, { "us", 1000 }, { "ns", 1 },
};

int bdev_parse_time_ns(const char *s, uint64_t *ns)
{
	unsigned long long v;
	uint64_t mult = 1000;	/* bare number: microseconds */
	char *end;
	size_t i;

	unsigned long long frac = 0, scale = 1;

	if (leading_number(s, &v, &end) < 0)
		return -EINVAL;
	/* "8.5ms": a fraction, as long as the time stays whole ns */
	if (*end == '.') {
		end++;
		if (*end < '0' || *end > '9')
			return -EINVAL;
		for (; *end >= '0' && *end <= '9'; end++) {
			if (scale >= 1000000000ull)
				return -EINVAL;
			frac = frac * 10 + (unsigned long long)(*end - '0');
			scale *= 10;
		}
	}
	for (i = 0; *end && i < sizeof(time_units) / sizeof(time_units[0]);
	     i++)
		if (!strcmp(end, time_units[i].unit))
			break;
	if (*end && i == sizeof(time_units) / sizeof(time_units[0]))
		return -EINVAL;
	if (*end)
		mult = time_units[i].ns;
	if (v > UINT64_MAX / mult / 4)	/* leave room for sums */
		return -EINVAL;
	if (frac * mult % scale)
		return -EINVAL;	/* finer than a nanosecond */
	*ns = v * mult + frac * mult / scale;
	return 0;
}

/* The largest unit that keeps the time exact: "250us", "2s". */
static int time_format(uint64_t ns, char *buf, size_t len)
{
	size_t i = 0;

	while (ns && ns % time_units[i].ns)
		i++;
	if (!ns)
		i = sizeof(time_units) / sizeof(time_units[0]) - 1;
	return snprintf(buf, len, "%" PRIu64 "%s", ns / time_units[i].ns,
			time_units[i].unit);
}

/* ---- the other types --------------------------------------------------- */

static int bool_parse(const char *v, bool *out)
{
	static const char *const yes[] = { "1", "on", "yes", "true" };
	static const char *const no[] = { "0", "off", "no", "false" };

	for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
		if (!strcmp(v, yes[i]) || !strcmp(v, no[i])) {
			*out = !strcmp(v, yes[i]);
			return 0;
		}
	}
	return -1;
}

/* strtoull's grammar (as the backends always took numbers), bounded. */
static int uint_parse(const struct bdev_opt *o, const char *v, uint64_t *out)
{
	unsigned long long n;
	char *end;

	errno = 0;
	n = strtoull(v, &end, o->flags & BDEV_OPT_ANY_BASE ? 0 : 10);
	if (errno || end == v || *end)
		return -1;
	*out = n;
	return 0;
}

static int real_parse(const struct bdev_opt *o, const char *v, double *out)
{
	char *end;
	double d;

	errno = 0;
	d = strtod(v, &end);
	if (errno || end == v || *end || !(d >= o->fmin) || d > o->fmax)
		return -1;
	*out = d;
	return 0;
}

/* The shortest of %.15g and %.17g that reads back as d. */
static int real_format(double d, char *buf, size_t len)
{
	char tmp[40];

	snprintf(tmp, sizeof(tmp), "%.15g", d);
	if (strtod(tmp, NULL) != d)
		snprintf(tmp, sizeof(tmp), "%.17g", d);
	return snprintf(buf, len, "%s", tmp);
}

static int enum_parse(const struct bdev_opt *o, const char *v, int *out)
{
	for (const struct bdev_opt_word *w = o->words; w->word; w++) {
		if (!strcmp(v, w->word)) {
			*out = w->value;
			return 0;
		}
	}
	return -1;
}

static int enum_format(const struct bdev_opt *o, int value, char *buf,
		       size_t len)
{
	for (const struct bdev_opt_word *w = o->words; w->word; w++)
		if (w->value == value)
			return snprintf(buf, len, "%s", w->word);
	return -1;
}

static bool in_bounds(const struct bdev_opt *o, uint64_t v)
{
	return v >= o->min && (!o->max || v <= o->max);
}

int bdev_opt_value_parse(const struct bdev_opt *o, const char *val,
			 void *field)
{
	uint64_t n;

	switch (o->type) {
	case BDEV_OPT_BOOL:
		return bool_parse(val, field);
	case BDEV_OPT_SIZE:
	case BDEV_OPT_UINT:
		if ((o->type == BDEV_OPT_SIZE ? bdev_parse_size(val, &n) :
		     uint_parse(o, val, &n)) < 0 || !in_bounds(o, n))
			return -1;
		*(uint64_t *)field = n;
		return 0;
	case BDEV_OPT_TIME:
		return bdev_parse_time_ns(val, field) < 0 ? -1 : 0;
	case BDEV_OPT_REAL:
		return real_parse(o, val, field);
	case BDEV_OPT_ENUM:
		return enum_parse(o, val, field);
	case BDEV_OPT_STRING:
		if (!*val || strlen(val) >= o->len)
			return -1;
		memcpy(field, val, strlen(val) + 1);
		return 0;
	case BDEV_OPT_CUSTOM:
		return o->parse(val, field);
	}
	return -1;
}

int bdev_opt_value_format(const struct bdev_opt *o, const void *field,
			  char *buf, size_t len)
{
	switch (o->type) {
	case BDEV_OPT_BOOL:
		return snprintf(buf, len, "%d", *(const bool *)field ? 1 : 0);
	case BDEV_OPT_SIZE:
		return size_format(*(const uint64_t *)field, buf, len);
	case BDEV_OPT_UINT:
		return snprintf(buf, len, "%" PRIu64, *(const uint64_t *)field);
	case BDEV_OPT_TIME:
		return time_format(*(const uint64_t *)field, buf, len);
	case BDEV_OPT_REAL:
		return real_format(*(const double *)field, buf, len);
	case BDEV_OPT_ENUM:
		return enum_format(o, *(const int *)field, buf, len);
	case BDEV_OPT_STRING:
		return snprintf(buf, len, "%s", (const char *)field);
	case BDEV_OPT_CUSTOM:
		return o->format(field, buf, len);
	}
	return -1;
}
