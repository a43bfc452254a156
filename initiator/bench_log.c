/*
 * --log-interval, --hist-log, --percentiles: the options, each worker's
 * series of a point (no sharing on the hot path: merged once the point
 * is over), the percentiles of a point. bench_logfile.c writes the files
 * and plots. See bench_log.h.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "initiator/bench_log.h"

/* fio's default percentile_list */
static const double default_pct[] = {
	1, 5, 10, 20, 30, 40, 50, 60, 70, 80, 90, 95, 99, 99.5, 99.9, 99.95,
	99.99,
};

/* The list of the sweep, for bench_log_json (which sees only points). */
static double json_pct[BENCH_MAXPCT];
static unsigned json_npct;

void bench_log_usage(FILE *f)
{
	fputs(
"Logs and percentiles (fio's log files; see tcq-bench(1)):\n"
"  --log-interval MS    bandwidth, IOPS and latency logs averaged over MS\n"
"                       (fio's log_avg_msec): PREFIX_bw.N.log, _iops, _lat,\n"
"                       _clat, one N per run of a point (PREFIX_index.txt)\n"
"  --hist-log MS        fio's completion latency histogram log over MS\n"
"                       (log_hist_msec): PREFIX_clat_hist.N.log, 1856 bins\n"
"  --log-prefix PREFIX  log file names (default tcq-bench; fio's\n"
"                       write_bw_log=PREFIX)\n"
"  --percentiles LIST   latency percentiles printed and in --json, e.g.\n"
"                       50,90,99,99.9 (default fio's 1,5,...,99.99 in --json)\n"
"--plot FILE.svg also draws FILE-lat-time.svg (mean latency over time) and\n"
"FILE-lat-hist.svg (each run's latency histogram).\n"
"\n", f);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int bench_pct_parse(const char *s, double *pct, unsigned *n)
{
	char buf[512], *tok, *save, *end;
	unsigned i, k;

	if (strlen(s) >= sizeof(buf))
		return -1;
	strcpy(buf, s);
	*n = 0;
	for (tok = strtok_r(buf, ",:", &save); tok;
	     tok = strtok_r(NULL, ",:", &save)) {
		double v;

		errno = 0;
		v = strtod(tok, &end);
		if (errno || end == tok || *end || !(v > 0) || v > 100 ||
		    *n >= BENCH_MAXPCT)
			return -1;
		pct[(*n)++] = v;
	}
	if (!*n)
		return -1;
	qsort(pct, *n, sizeof(*pct), cmp_double);
	for (i = k = 1; i < *n; i++)
		if (pct[i] != pct[k - 1])
			pct[k++] = pct[i];
	*n = k;
	return 0;
}

static int parse_ms(const char *s, unsigned *v)
{
	char *end;
	unsigned long x;

	errno = 0;
	x = strtoul(s, &end, 10);
	if (errno || end == s || *end || *s == '-' || x == 0 ||
	    x > 3600 * 1000)
		return -1;
	*v = (unsigned)x;
	return 0;
}

int bench_log_opt(struct bench_opts *o, int c, const char *arg)
{
	struct bench_log_opts *l = &o->log;

	switch (c) {
	case OPT_LOG_INTERVAL:
		return parse_ms(arg, &l->interval_ms);
	case OPT_HIST_LOG:
		return parse_ms(arg, &l->hist_ms);
	case OPT_LOG_PREFIX:
		if (!*arg || strchr(arg, '\n'))
			return -1;
		l->prefix = arg;
		return 0;
	case OPT_PERCENTILES:
		l->pct_asked = true;
		return bench_pct_parse(arg, l->pct, &l->npct);
	}
	return 1;
}

/* A worker keeps every window of its run's bins (fio keeps a copy of its
 * histogram per window too): what that comes to at most. */
#define HIST_LOG_MAX_BYTES (1024ull << 20)
static double hist_log_bytes(const struct bench_opts *o)
{
	uint32_t sessions = 1;

	for (unsigned i = 0; i < o->nsessions; i++)
		if (o->sessions[i] > sessions)
			sessions = o->sessions[i];
	return (o->runtime * 1000 / o->log.hist_ms + 1) *
	       (sessions < o->threads ? sessions : o->threads) *
	       2.0 * FIO_PLAT_NR * sizeof(uint32_t);
}

int bench_log_check(struct bench_opts *o)
{
	struct bench_log_opts *l = &o->log;

	if (!l->npct) {
		l->npct = sizeof(default_pct) / sizeof(default_pct[0]);
		memcpy(l->pct, default_pct, sizeof(default_pct));
	}
	if (!l->prefix)
		l->prefix = "tcq-bench";
	if (l->hist_ms && hist_log_bytes(o) > HIST_LOG_MAX_BYTES) {
		fprintf(stderr, "tcq-bench: --hist-log %u: %.0f MiB of bins a run (%u ms windows over --runtime, 14.5 KiB each per worker thread); at most %u MiB: a longer window or a shorter run\n",
			l->hist_ms, hist_log_bytes(o) / 1048576, l->hist_ms,
			(unsigned)(HIST_LOG_MAX_BYTES >> 20));
		return -1;
	}
	if (o->plot && (strchr(o->plot, '\'') || strchr(o->plot, '\n'))) {
		fprintf(stderr, "tcq-bench: --plot: file name must not contain quotes\n");
		return -1;
	}
	memcpy(json_pct, l->pct, sizeof(json_pct));
	json_npct = l->npct;
	return 0;
}

/* ---- a worker's series */

struct bench_tlog {
	uint64_t origin, win_ns, hist_ns;
	struct tlog_win *w;
	unsigned nw, capw;
	uint32_t *bins;			/* nh x 2 x FIO_PLAT_NR */
	unsigned nh, caph;
	bool full;
};

/* The window of the series: --log-interval's, or 1/100 of the run time
 * (at least 10 ms) for the plot alone. */
static unsigned series_ms(const struct bench_opts *o)
{
	double ms = o->runtime * 10;

	if (o->log.interval_ms)
		return o->log.interval_ms;
	return ms < 10 ? 10 : (unsigned)ms;
}

struct bench_tlog *tlog_create(const struct bench_opts *o, uint64_t origin)
{
	struct bench_tlog *l;

	if (!o->log.interval_ms && !o->log.hist_ms && !o->plot)
		return NULL;
	l = calloc(1, sizeof(*l));
	if (!l)
		return NULL;
	l->origin = origin;
	l->win_ns = (uint64_t)series_ms(o) * 1000000ull;
	l->hist_ns = (uint64_t)o->log.hist_ms * 1000000ull;
	return l;
}

void tlog_free(struct bench_tlog *l)
{
	if (!l)
		return;
	free(l->w);
	free(l->bins);
	free(l);
}

/* Makes room for window k of an array of *cap elements of size sz;
 * false when out of memory. */
static bool grow(void **arr, unsigned *cap, unsigned k, size_t sz)
{
	unsigned ncap = *cap ? *cap : 64;
	void *p;

	if (k < *cap)
		return true;
	while (ncap <= k)
		ncap *= 2;
	p = realloc(*arr, (size_t)ncap * sz);
	if (!p)
		return false;
	memset((char *)p + (size_t)*cap * sz, 0, (size_t)(ncap - *cap) * sz);
	*arr = p;
	*cap = ncap;
	return true;
}

void tlog_add(struct bench_tlog *l, bool write, uint64_t t_ns,
	      uint64_t lat_ns, uint64_t bytes)
{
	uint64_t dt = t_ns > l->origin ? t_ns - l->origin : 0;
	unsigned k = (unsigned)(dt / l->win_ns), d = write ? 1 : 0, b;

	if (l->full)
		return;
	if (!grow((void **)&l->w, &l->capw, k, sizeof(*l->w)))
		goto full;
	if (k >= l->nw)
		l->nw = k + 1;
	l->w[k].ios[d]++;
	l->w[k].bytes[d] += bytes;
	l->w[k].lat_ns[d] += lat_ns;
	if (!l->hist_ns)
		return;
	k = (unsigned)(dt / l->hist_ns);
	if (!grow((void **)&l->bins, &l->caph, k,
		  2 * FIO_PLAT_NR * sizeof(*l->bins)))
		goto full;
	if (k >= l->nh)
		l->nh = k + 1;
	b = hist_bucket(lat_ns);
	if (b >= FIO_PLAT_NR)
		b = FIO_PLAT_NR - 1;
	l->bins[((size_t)k * 2 + d) * FIO_PLAT_NR + b]++;
	return;
full:
	l->full = true;
	fprintf(stderr, "tcq-bench: out of memory for the log series: later I/Os of this point are not in it\n");
}

/* ---- after a run */

static struct logplot_run *plot_runs;
static unsigned plot_nruns;
static unsigned run_number;

/* Sums the workers' windows (and bins) into *w (and *bins). */
static int merge(struct bench_tlog *const *logs, unsigned n,
		 struct tlog_win **w, unsigned *nw, uint32_t **bins,
		 unsigned *nh)
{
	unsigned i, k;
	size_t j, nb;

	*nw = *nh = 0;
	for (i = 0; i < n; i++) {
		if (logs[i] && logs[i]->nw > *nw)
			*nw = logs[i]->nw;
		if (logs[i] && logs[i]->nh > *nh)
			*nh = logs[i]->nh;
	}
	*w = calloc(*nw + 1, sizeof(**w));
	nb = (size_t)*nh * 2 * FIO_PLAT_NR;
	*bins = calloc(nb + 1, sizeof(**bins));
	if (!*w || !*bins)
		return -1;
	for (i = 0; i < n; i++) {
		const struct bench_tlog *l = logs[i];

		if (!l)
			continue;
		for (k = 0; k < l->nw; k++)
			for (int d = 0; d < 2; d++) {
				(*w)[k].ios[d] += l->w[k].ios[d];
				(*w)[k].bytes[d] += l->w[k].bytes[d];
				(*w)[k].lat_ns[d] += l->w[k].lat_ns[d];
			}
		for (j = 0; j < (size_t)l->nh * 2 * FIO_PLAT_NR; j++)
			(*bins)[j] += l->bins[j];
	}
	return 0;
}

/* Keeps the run's mean latency per window and its histogram. */
static void keep_for_plot(const struct bench_run_id *id,
			  const struct tlog_win *w, unsigned nw,
			  unsigned win_ms, uint64_t end_ms,
			  const struct bench_hist *hist)
{
	struct logplot_run *r, *p;
	unsigned k;

	p = realloc(plot_runs, (plot_nruns + 1) * sizeof(*p));
	if (!p)
		return;
	plot_runs = p;
	r = &p[plot_nruns];
	memset(r, 0, sizeof(*r));
	r->id = *id;
	r->t_s = calloc(nw + 1, sizeof(double));
	r->lat_us = calloc(nw + 1, sizeof(double));
	r->hist = malloc(sizeof(*r->hist));
	if (!r->t_s || !r->lat_us || !r->hist) {
		free(r->t_s);
		free(r->lat_us);
		free(r->hist);
		return;
	}
	*r->hist = *hist;
	for (k = 0; k < nw; k++) {
		uint64_t ios = w[k].ios[0] + w[k].ios[1];
		uint64_t t = (uint64_t)(k + 1) * win_ms;

		if (!ios)
			continue;
		r->t_s[r->nt] = (id->ramp_s * 1e3 + (double)(t < end_ms ? t : end_ms)) / 1e3;
		r->lat_us[r->nt++] = (double)(w[k].lat_ns[0] + w[k].lat_ns[1]) /
				     (double)ios / 1e3;
	}
	plot_nruns++;
}

int bench_log_run(const struct bench_opts *o, const struct bench_run_id *id,
		  struct bench_tlog *const *logs, unsigned n, uint64_t t_last,
		  const struct bench_hist *hist, struct bench_sample *out,
		  char *err, size_t errlen)
{
	const struct bench_log_opts *l = &o->log;
	struct tlog_win *w = NULL;
	uint32_t *bins = NULL;
	unsigned i, nw, nh, num;
	uint64_t origin = 0, end_ms = 0, ramp_ms;
	int rc = 0;

	for (i = 0; i < l->npct; i++) {
		char q[32];

		/* 99.9 / 100 is 0.9990000000000001: as a decimal it is the
		 * 0.999 of the fixed p999, the same rank */
		snprintf(q, sizeof(q), "%.12g", l->pct[i] / 100);
		out->pct_us[i] = (double)hist_quantile(hist, strtod(q, NULL)) / 1e3;
	}
	for (i = 0; i < n; i++)
		if (logs[i])
			origin = logs[i]->origin;
	if (!origin)
		return 0;	/* no series asked for */
	if (t_last > origin)
		end_ms = (t_last - origin) / 1000000ull;
	ramp_ms = (uint64_t)(id->ramp_s * 1e3 + 0.5);
	if (merge(logs, n, &w, &nw, &bins, &nh)) {
		snprintf(err, errlen, "out of memory for the logs");
		rc = -1;
		goto out;
	}
	if (o->plot)
		keep_for_plot(id, w, nw, series_ms(o), end_ms, hist);
	if (!l->interval_ms && !l->hist_ms)
		goto out;
	num = ++run_number;
	rc = logfile_index(l->prefix, num, id, err, errlen);
	if (!rc && l->interval_ms)
		rc = logfile_series(l->prefix, num, id->rw, w, nw,
				    l->interval_ms, ramp_ms, end_ms, err,
				    errlen);
	if (!rc && l->hist_ms)
		rc = logfile_hist(l->prefix, num, id->bs, bins, nh, l->hist_ms,
				  ramp_ms, end_ms, err, errlen);
out:
	free(w);
	free(bins);
	return rc;
}

void bench_log_print(FILE *f, const struct bench_opts *o,
		     const struct bench_point *pts, unsigned n)
{
	const struct bench_log_opts *l = &o->log;
	unsigned i, k;
	char bs[16];

	if (!l->pct_asked)
		return;
	fprintf(f, "latency percentiles (us):\n");
	for (i = 0; i < n; i++) {
		const struct bench_point *p = &pts[i];

		if (!p->nrep || p->rw == BENCH_JOURNAL)
			continue;
		bench_fmt_size(bs, sizeof(bs), p->bs);
		fprintf(f, "  %s sessions=%u bs=%s depth=%u:", bench_rw_name(p->rw),
			p->sessions, bs, p->depth);
		for (k = 0; k < l->npct; k++)
			fprintf(f, " %g%%=%.1f", l->pct[k], p->mean.pct_us[k]);
		fputc('\n', f);
	}
	fputc('\n', f);
}

void bench_log_json(json_object *jo, const struct bench_point *p)
{
	json_object *pj = json_object_new_object();
	char key[32], val[32];
	unsigned k;

	if (p->rw == BENCH_JOURNAL) {	/* its I/Os are transactions */
		json_object_put(pj);
		return;
	}
	/* keys as fio's "percentile" objects: "99.900000" */
	for (k = 0; k < json_npct; k++) {
		snprintf(key, sizeof(key), "%f", json_pct[k]);
		snprintf(val, sizeof(val), "%.3f", p->mean.pct_us[k]);
		json_object_object_add(pj, key,
				       json_object_new_double_s(p->mean.pct_us[k], val));
	}
	json_object_object_add(jo, "lat_percentiles_us", pj);
}

int bench_log_plot(const struct bench_opts *o, char *err, size_t errlen)
{
	int rc = 0;

	if (o->plot && plot_nruns)
		rc = logfile_plot(o->plot, plot_runs, plot_nruns, err, errlen);
	for (unsigned i = 0; i < plot_nruns; i++) {
		free(plot_runs[i].t_s);
		free(plot_runs[i].lat_us);
		free(plot_runs[i].hist);
	}
	free(plot_runs);
	plot_runs = NULL;
	plot_nruns = 0;
	return rc;
}
