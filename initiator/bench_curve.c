/*
 * --curve (vdbench's curve): per point of the sweep, a run without a
 * rate finds the maximum IOPS, then one run at each --curve-pct of it
 * (the point's total rate); a table of latency against the IOPS done,
 * --json and a --plot of it. Each run is a point of its own for the
 * errors, the rate notes and the logs.
 */
#include <errno.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "config.h"
#include "initiator/bench_log.h"
#include "initiator/bench_rate.h"

/* The runs of point i are rows[i * per .. i * per + per), the first the
 * maximum; pct[] their percentages (0: the maximum). */
struct curve {
	const struct bench_opts *o;
	struct bench_point *rows;
	unsigned *pct;
	unsigned per, nrows;
};

static void print_point(FILE *f, const struct curve *c, unsigned i)
{
	const struct bench_point *r = &c->rows[i * c->per];
	char bs[16];
	unsigned k;

	bench_fmt_size(bs, sizeof(bs), r->bs);
	fprintf(f, "curve: %s sessions=%u bs=%s depth=%u: maximum %.0f IOPS\n",
		bench_rw_name(r->rw), r->sessions, bs, r->depth,
		r->mean.v[METRIC_IOPS]);
	fprintf(f, "      %% | asked IOPS |     IOPS |     MB/s |  mean us |   p50 us |   p99 us | p99.9 us\n");
	for (k = 0; k < c->per && i * c->per + k < c->nrows; k++) {
		const struct bench_point *p = &r[k];
		char pct[16] = "max", asked[32] = "-";

		if (c->pct[k]) {
			snprintf(pct, sizeof(pct), "%u", c->pct[k]);
			snprintf(asked, sizeof(asked), "%.0f", p->mean.rate_iops);
		}
		fprintf(f, "  %5s | %10s | %8.0f | %8.2f | %8.1f | %8.1f | %8.1f | %8.1f%s\n",
			pct, asked, p->mean.v[METRIC_IOPS],
			p->mean.v[METRIC_MBPS], p->mean.lat_mean_us,
			p->mean.v[METRIC_P50], p->mean.v[METRIC_P99],
			p->mean.v[METRIC_P999],
			rate_reached(&p->mean) ? "" : "  (rate not reached)");
	}
	fputc('\n', f);
}

static json_object *jd(double v)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%.3f", v);
	return json_object_new_double_s(v, buf);
}

static int write_json(const struct curve *c, const char *path,
		      const char *started)
{
	json_object *root = json_object_new_object(), *arr;
	unsigned i, k;
	int rc;

	json_object_object_add(root, "tool", json_object_new_string("tcq-bench"));
	json_object_object_add(root, "version", json_object_new_string(PACKAGE_VERSION));
	json_object_object_add(root, "engine", json_object_new_string(c->o->engine->name));
	json_object_object_add(root, "target", json_object_new_string(c->o->target));
	json_object_object_add(root, "started", json_object_new_string(started));
	arr = json_object_new_array();
	for (i = 0; i * c->per < c->nrows; i++) {
		const struct bench_point *r = &c->rows[i * c->per];
		json_object *po = json_object_new_object(), *ca;

		json_object_object_add(po, "rw", json_object_new_string(bench_rw_name(r->rw)));
		json_object_object_add(po, "bs", json_object_new_int64(r->bs));
		json_object_object_add(po, "depth", json_object_new_int64(r->depth));
		json_object_object_add(po, "sessions", json_object_new_int64(r->sessions));
		json_object_object_add(po, "max_iops", jd(r->mean.v[METRIC_IOPS]));
		ca = json_object_new_array();
		for (k = 0; k < c->per && i * c->per + k < c->nrows; k++) {
			const struct bench_point *p = &r[k];
			json_object *ro = json_object_new_object();
			json_object *lat = json_object_new_object();

			json_object_object_add(ro, "pct", json_object_new_int64(c->pct[k]));
			json_object_object_add(ro, "iops", jd(p->mean.v[METRIC_IOPS]));
			json_object_object_add(ro, "mbps", jd(p->mean.v[METRIC_MBPS]));
			json_object_object_add(lat, "mean", jd(p->mean.lat_mean_us));
			json_object_object_add(lat, "p50", jd(p->mean.v[METRIC_P50]));
			json_object_object_add(lat, "p99", jd(p->mean.v[METRIC_P99]));
			json_object_object_add(lat, "p999", jd(p->mean.v[METRIC_P999]));
			json_object_object_add(ro, "lat_us", lat);
			json_object_object_add(ro, "errors",
					       json_object_new_int64((int64_t)bench_errors_total(&p->mean.err)));
			json_object_object_add(ro, "ios", json_object_new_int64((int64_t)p->mean.ios));
			bench_log_json(ro, p);
			bench_rate_json(ro, p);
			json_object_array_add(ca, ro);
		}
		json_object_object_add(po, "curve", ca);
		json_object_array_add(arr, po);
	}
	json_object_object_add(root, "points", arr);
	rc = json_object_to_file_ext(path, root, JSON_C_TO_STRING_PRETTY |
				     JSON_C_TO_STRING_NOSLASHESCAPE);
	json_object_put(root);
	return rc;
}

/* Mean and p99 latency against the IOPS done, one pair of lines per
 * point, in rising IOPS (the maximum last). */
static int plot(const struct curve *c, const char *path, char *err,
		size_t errlen)
{
	FILE *g = bench_gnuplot_open(path, "tcq-bench: latency against IOPS (curve)",
				     "IOPS done", "latency (us)",
				     "set xrange [0:*]\n", err, errlen);
	unsigned i, k, n = 0;
	char bs[16];

	if (!g)
		return -1;
	for (i = 0; i * c->per < c->nrows; i++, n++) {
		fprintf(g, "$d%u << EOD\n", i);
		for (k = 1; k <= c->per; k++) {
			unsigned j = k < c->per ? k : 0;
			const struct bench_point *p = &c->rows[i * c->per + j];

			if (i * c->per + j < c->nrows && p->nrep)
				fprintf(g, "%.3f %.3f %.3f\n", p->mean.v[METRIC_IOPS],
					p->mean.lat_mean_us, p->mean.v[METRIC_P99]);
		}
		fprintf(g, "EOD\n");
	}
	fprintf(g, "plot ");
	for (i = 0; i < n; i++) {
		const struct bench_point *r = &c->rows[i * c->per];

		bench_fmt_size(bs, sizeof(bs), r->bs);
		fprintf(g, "%s$d%u using 1:2 with linespoints title '%s s%u %s d%u mean', "
			   "$d%u using 1:3 with linespoints dashtype 2 title 'p99'",
			i ? ", " : "", i, bench_rw_name(r->rw), r->sessions, bs,
			r->depth, i);
	}
	fprintf(g, "\n");
	return bench_gnuplot_close(g, err, errlen);
}

/* One run of the curve into row; -1 when it could not run. */
static int run_one(const struct curve *c, const struct bench_point *pt,
		   unsigned pct, double max_iops, unsigned idx,
		   struct bench_point *row)
{
	struct bench_opts o2 = *c->o;
	struct bench_progress prog = {
		.point = idx + 1, .npoints = c->nrows,
		.secs_left = (double)(c->nrows - idx - 1) *
			     (c->o->runtime + c->o->ramp),
	};
	struct bench_sample s;
	char err[512];

	o2.rate.total = true;
	o2.rate.mbps = 0;
	o2.rate.iops = pct ? max_iops * pct / 100 : 0;
	*row = *pt;
	if (bench_run_point(&o2, pt->rw, pt->bs, pt->depth, pt->sessions, 0,
			    &prog, &s, err, sizeof(err))) {
		fprintf(stderr, "tcq-bench: %s\n", err);
		return -1;
	}
	bench_point_fold(row, &s, 1);
	return 0;
}

/* Runs the curves; *done: the rows measured. -1 when a run failed. */
static int run_all(struct curve *c, const struct bench_point *pts,
		   unsigned npts, unsigned *done)
{
	unsigned i, k;

	*done = 0;
	for (i = 0; i < npts && !bench_interrupted; i++) {
		struct bench_point *rows = &c->rows[i * c->per];

		for (k = 0; k < c->per && !bench_interrupted; k++) {
			if (k == 1 && rows[0].mean.v[METRIC_IOPS] <= 0) {
				fprintf(stderr, "tcq-bench: --curve: no I/O completed at the maximum: no rates to run\n");
				return -1;
			}
			if (run_one(c, &pts[i], c->pct[k],
				    rows[0].mean.v[METRIC_IOPS],
				    i * c->per + k, &rows[k]))
				return -1;
			*done = i * c->per + k + 1;
		}
	}
	return 0;
}

int bench_curve_main(const struct bench_opts *o, struct bench_point *pts,
		     unsigned npts, const char *started)
{
	struct curve c = { .o = o, .per = o->rate.ncurve + 1 };
	unsigned i, done;
	bool failed, any_err = false;
	char err[512];

	c.nrows = npts * c.per;
	c.rows = calloc(c.nrows, sizeof(*c.rows));
	c.pct = calloc(c.per, sizeof(*c.pct));
	if (!c.rows || !c.pct) {
		free(c.rows);
		free(c.pct);
		return 2;
	}
	memcpy(c.pct + 1, o->rate.curve_pct, o->rate.ncurve * sizeof(*c.pct));
	failed = run_all(&c, pts, npts, &done) != 0;
	bench_run_cleanup();
	if (bench_interrupted)
		fprintf(stderr, "tcq-bench: interrupted: %u of %u runs measured\n",
			done, c.nrows);
	c.nrows = done;
	for (i = 0; i * c.per < c.nrows; i++)
		print_point(stdout, &c, i);
	bench_print_errors(stdout, c.rows, c.nrows);
	bench_rate_print(stdout, c.rows, c.nrows);
	bench_log_print(stdout, o, c.rows, c.nrows);
	fflush(stdout);
	for (i = 0; i < c.nrows; i++)
		if (bench_errors_total(&c.rows[i].mean.err))
			any_err = true;
	if (o->json && write_json(&c, o->json, started)) {
		fprintf(stderr, "tcq-bench: cannot write %s\n", o->json);
		failed = true;
	}
	if ((o->plot && c.nrows && plot(&c, o->plot, err, sizeof(err))) ||
	    bench_log_plot(o, err, sizeof(err))) {
		fprintf(stderr, "tcq-bench: %s\n", err);
		failed = true;
	}
	free(c.rows);
	free(c.pct);
	return failed ? 2 : any_err ? 1 : 0;
}
