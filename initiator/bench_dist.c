/*
 * --dist: where random I/O goes, with fio's random_distribution
 * definitions (HOWTO, random_distribution). The distribution is fio's,
 * the sequence is not:
 *
 *  - zipf:THETA  rank k (1..n) is drawn with probability k^-THETA / H(n,
 *    THETA), exactly (Hormann and Derflinger's rejection-inversion, so no
 *    table and no 10M-term sum; fio approximates the tail after Gray et
 *    al.);
 *  - pareto:H    rank floor((n-1) * u^(log H / log(1-H))): the hottest
 *    fraction H of the blocks gets 1-H of the accesses (pareto:0.2 is
 *    the 80/20 rule), fio's formula;
 *  - normal:SD   a Gaussian of standard deviation SD% of the region
 *    around its middle (fio sums uniforms to approximate one);
 *  - zoned:A/S:... A% of the accesses to the next S% of the region,
 *    zoned_abs:A/SIZE:... the same with sizes in bytes.
 *
 * A second value (zipf:1.2:0.25) puts the hottest block at that fraction
 * of the region and the next ranks after it (normal: the mean there).
 * Without one, fio scatters the ranks with a hash; here rank r goes to
 * chunk (r * m) mod n with m prime to n, a permutation, so no two ranks
 * share a block and the hottest 10% stay exactly 10% of the blocks.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "initiator/bench_access.h"

static uint64_t dist_rng(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);	/* splitmix64 */

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* Uniform in [0, 1). */
static double dist_unit(uint64_t *s)
{
	return (double)(dist_rng(s) >> 11) * 0x1.0p-53;
}

/* A number with an optional k/m/g/t suffix (powers of 1024, as fio). */
static int parse_bytes(const char *s, double *v)
{
	char *end;
	double mul = 1;

	errno = 0;
	*v = strtod(s, &end);
	if (errno || end == s)
		return -1;
	switch (*end) {
	case 'k': case 'K': mul = 1024.0; end++; break;
	case 'm': case 'M': mul = 1048576.0; end++; break;
	case 'g': case 'G': mul = 1073741824.0; end++; break;
	case 't': case 'T': mul = 1099511627776.0; end++; break;
	}
	if (*end == 'i' || *end == 'I')
		end++;
	if (*end == 'b' || *end == 'B')
		end++;
	*v *= mul;
	return *end ? -1 : 0;
}

static int parse_num(const char *s, double *v)
{
	char *end;

	errno = 0;
	*v = strtod(s, &end);
	return errno || end == s || *end || !isfinite(*v) ? -1 : 0;
}

/* "A/S:A/S:..." into d->zones. */
static int parse_zones(char *s, struct bench_dist *d, char *err,
		       size_t errlen)
{
	char *tok, *save, *slash;
	double sum = 0, size_sum = 0;

	for (tok = strtok_r(s, ":", &save); tok;
	     tok = strtok_r(NULL, ":", &save)) {
		struct dist_zone *z = &d->zones[d->nzones];

		slash = strchr(tok, '/');
		if (d->nzones >= DIST_MAX_ZONES || !slash) {
			snprintf(err, errlen, "zone '%s': ACCESS%%/SIZE expected (at most %u zones)",
				 tok, DIST_MAX_ZONES);
			return -1;
		}
		*slash = 0;
		if (parse_num(tok, &z->access) || z->access < 0 ||
		    z->access > 100 ||
		    (d->kind == DIST_ZONED ? parse_num(slash + 1, &z->size) :
		     parse_bytes(slash + 1, &z->size)) || z->size <= 0) {
			snprintf(err, errlen, "zone %u: bad access share or size",
				 d->nzones + 1);
			return -1;
		}
		sum += z->access;
		size_sum += z->size;
		d->nzones++;
	}
	if (!d->nzones || fabs(sum - 100) > 1e-9) {
		snprintf(err, errlen, "the zones' access shares add up to %g%%, not 100%%",
			 sum);
		return -1;
	}
	if (d->kind == DIST_ZONED && size_sum > 100 + 1e-9) {
		snprintf(err, errlen, "the zones cover %g%% of the region, more than 100%%",
			 size_sum);
		return -1;
	}
	return 0;
}

/* "PARAM[:CENTER]" of zipf, pareto and normal. */
static int parse_param(char *s, struct bench_dist *d, char *err,
		       size_t errlen)
{
	char *colon = strchr(s, ':');
	bool ok;

	if (colon) {
		*colon = 0;
		if (parse_num(colon + 1, &d->center) || d->center < 0 ||
		    d->center > 1) {
			snprintf(err, errlen, "center '%s' is not in 0..1",
				 colon + 1);
			return -1;
		}
	}
	if (parse_num(s, &d->param)) {
		snprintf(err, errlen, "'%s' is not a number", s);
		return -1;
	}
	ok = d->kind == DIST_ZIPF ? d->param > 0 && d->param <= 100 :
	     d->kind == DIST_PARETO ? d->param > 0 && d->param < 1 :
	     d->param >= 0 && d->param <= 100;
	if (!ok)
		snprintf(err, errlen, "%s", d->kind == DIST_ZIPF ?
			 "zipf's theta must be above 0" :
			 d->kind == DIST_PARETO ?
			 "pareto's h must be between 0 and 1" :
			 "normal's deviation is a percentage, 0..100");
	return ok ? 0 : -1;
}

int dist_parse(const char *s, struct bench_dist *d, char *err, size_t errlen)
{
	static const struct { const char *name; enum dist_kind kind; } kinds[] = {
		{ "zipf", DIST_ZIPF }, { "pareto", DIST_PARETO },
		{ "normal", DIST_NORMAL }, { "zoned", DIST_ZONED },
		{ "zoned_abs", DIST_ZONED_ABS },
	};
	char buf[4096];
	size_t len;
	unsigned i;

	memset(d, 0, sizeof(*d));
	d->center = -1;
	if (!strcmp(s, "random") || !strcmp(s, "uniform"))
		return 0;
	if (strlen(s) >= sizeof(buf)) {
		snprintf(err, errlen, "too long");
		return -1;
	}
	for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		len = strlen(kinds[i].name);
		if (!strncmp(s, kinds[i].name, len) && s[len] == ':')
			break;
	}
	if (i == sizeof(kinds) / sizeof(kinds[0])) {
		snprintf(err, errlen, "random, zipf:THETA, pareto:H, normal:SD, zoned:A/S:... or zoned_abs:A/SIZE:... expected");
		return -1;
	}
	d->kind = kinds[i].kind;
	strcpy(buf, s + len + 1);
	if (strchr(buf, ',')) {
		snprintf(err, errlen, "one distribution for reads and writes (no ',')");
		return -1;
	}
	if (d->kind == DIST_ZONED || d->kind == DIST_ZONED_ABS)
		return parse_zones(buf, d, err, errlen);
	return parse_param(buf, d, err, errlen);
}

/* Rejection-inversion for Zipf (Hormann, Derflinger 1996): H is an
 * integral of h(x) = x^-theta, written to stay exact near theta = 1. */
static double zipf_h(const struct dist_gen *g, double x)
{
	return exp(-g->theta * log(x));
}

static double zipf_hint(const struct dist_gen *g, double x)
{
	double lx = log(x), y = (1 - g->theta) * lx;

	return (fabs(y) > 1e-8 ? expm1(y) / y : 1 + y / 2 * (1 + y / 3)) * lx;
}

static double zipf_hinv(const struct dist_gen *g, double x)
{
	double t = x * (1 - g->theta);

	if (t < -1)
		t = -1;
	return exp((fabs(t) > 1e-8 ? log1p(t) / t : 1 - t / 2 + t * t / 3) * x);
}

/* Rank 1..n. */
static uint64_t zipf_next(const struct dist_gen *g, uint64_t *rng)
{
	for (;;) {
		double u = g->hxn + dist_unit(rng) * (g->hx1 - g->hxn);
		double x = zipf_hinv(g, u), kd;
		uint64_t k;

		kd = floor(x + 0.5);
		k = kd < 1 ? 1 : kd > (double)g->n ? g->n : (uint64_t)kd;
		if ((double)k - x <= g->s ||
		    u >= zipf_hint(g, (double)k + 0.5) - zipf_h(g, (double)k))
			return k;
	}
}

static uint64_t gcd64(uint64_t a, uint64_t b)
{
	while (b) {
		uint64_t t = a % b;

		a = b;
		b = t;
	}
	return a;
}

static int zones_init(struct dist_gen *g, const struct bench_dist *d,
		      uint64_t chunk_bytes, char *err, size_t errlen)
{
	uint64_t first = 0, len;
	double cum = 0;
	unsigned i;

	g->nzones = d->nzones;
	for (i = 0; i < d->nzones; i++) {
		const struct dist_zone *z = &d->zones[i];

		len = d->kind == DIST_ZONED ?
		      (uint64_t)(z->size / 100 * (double)g->n) :
		      (uint64_t)(z->size / (double)chunk_bytes);
		if (d->kind == DIST_ZONED && i == d->nzones - 1 &&
		    fabs(z->size + cum - 100) < 1e-9 && first + len < g->n)
			len = g->n - first;
		if (!len && z->access > 0) {
			snprintf(err, errlen, "--dist: zone %u holds no whole I/O of %llu bytes",
				 i + 1, (unsigned long long)chunk_bytes);
			return -1;
		}
		if (first + len > g->n) {
			snprintf(err, errlen, "--dist: the zones end past the region (zone %u)",
				 i + 1);
			return -1;
		}
		g->zone_first[i] = first;
		first += len;
		cum += d->kind == DIST_ZONED ? z->size : 0;
		g->zone_cum[i] = (i ? g->zone_cum[i - 1] : 0) + z->access / 100;
	}
	g->zone_first[i] = first;
	return 0;
}

int dist_gen_init(struct dist_gen *g, const struct bench_dist *d, uint64_t n,
		  uint64_t chunk_bytes, char *err, size_t errlen)
{
	memset(g, 0, sizeof(*g));
	g->kind = d->kind;
	g->n = n ? n : 1;
	g->scatter = d->center < 0;
	g->mult = 1;
	if (g->scatter) {
		g->mult = (uint64_t)((double)g->n * 0.6180339887498949) | 1;
		while (gcd64(g->mult, g->n) != 1)
			g->mult++;
	} else {
		g->off = (uint64_t)(d->center * (double)g->n) % g->n;
	}
	switch (d->kind) {
	case DIST_ZIPF:
		g->theta = d->param;
		g->hx1 = zipf_hint(g, 1.5) - 1;
		g->hxn = zipf_hint(g, (double)g->n + 0.5);
		g->s = 2 - zipf_hinv(g, zipf_hint(g, 2.5) - zipf_h(g, 2));
		break;
	case DIST_PARETO:
		g->pareto_pow = log(d->param) / log(1 - d->param);
		break;
	case DIST_NORMAL:
		g->mean = (d->center < 0 ? 0.5 : d->center) * (double)g->n;
		g->sd = d->param / 100 * (double)g->n;
		break;
	case DIST_ZONED:
	case DIST_ZONED_ABS:
		return zones_init(g, d, chunk_bytes, err, errlen);
	case DIST_UNIFORM:
		break;
	}
	return 0;
}

static uint64_t rank_to_chunk(const struct dist_gen *g, uint64_t rank)
{
	return (uint64_t)(((unsigned __int128)rank * g->mult + g->off) % g->n);
}

static uint64_t normal_next(const struct dist_gen *g, uint64_t *rng)
{
	double x = g->mean;
	unsigned tries;

	for (tries = 0; tries < 64 && g->sd > 0; tries++) {
		double u1 = 1 - dist_unit(rng), u2 = dist_unit(rng);

		x = g->mean + g->sd * sqrt(-2 * log(u1)) * cos(2 * M_PI * u2);
		if (x >= 0 && x < (double)g->n)
			break;
	}
	if (x < 0 || x >= (double)g->n)
		x = g->mean;
	return x >= (double)g->n ? g->n - 1 : (uint64_t)x;
}

static uint64_t zoned_next(const struct dist_gen *g, uint64_t *rng)
{
	double u = dist_unit(rng);
	unsigned i = 0;
	uint64_t len;

	while (i + 1 < g->nzones &&
	       (u >= g->zone_cum[i] ||
		g->zone_first[i + 1] == g->zone_first[i]))
		i++;
	len = g->zone_first[i + 1] - g->zone_first[i];
	return g->zone_first[i] + (len ? dist_rng(rng) % len : 0);
}

uint64_t dist_next(const struct dist_gen *g, uint64_t *rng)
{
	switch (g->kind) {
	case DIST_ZIPF:
		return rank_to_chunk(g, zipf_next(g, rng) - 1);
	case DIST_PARETO:
		return rank_to_chunk(g, (uint64_t)((double)(g->n - 1) *
					pow(dist_unit(rng), g->pareto_pow)));
	case DIST_NORMAL:
		return normal_next(g, rng);
	case DIST_ZONED:
	case DIST_ZONED_ABS:
		return zoned_next(g, rng);
	case DIST_UNIFORM:
		break;
	}
	return dist_rng(rng) % g->n;
}
