/*
 * Everything tcq-bench prints or writes: the per-workload tables, the
 * detail view, the error footnotes, JSON (json-c, also read back for
 * --compare), CSV and the gnuplot SVG.
 */
#include <errno.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "initiator/bench.h"
#include "initiator/bench_log.h"
#include "initiator/bench_rate.h"

/* Numbers keep about three significant digits, like the example table. */
static void fmt_num(char *buf, size_t len, double v)
{
	double a = fabs(v);

	if (a >= 10 || a == 0)
		snprintf(buf, len, "%.0f", v);
	else if (a >= 1)
		snprintf(buf, len, "%.1f", v);
	else
		snprintf(buf, len, "%.2f", v);
}

void bench_format_cell(char *buf, size_t len, const struct bench_point *p,
		       enum bench_metric m)
{
	char a[32], b[32];
	size_t used;

	if (!p || !p->nrep) {
		snprintf(buf, len, "-");
		return;
	}
	fmt_num(a, sizeof(a), p->mean.v[m]);
	if (p->nrep > 1) {
		fmt_num(b, sizeof(b), p->sd[m]);
		snprintf(buf, len, "%s ± %s", a, b);
	} else {
		snprintf(buf, len, "%s", a);
	}
	used = strlen(buf);
	if (p->has_base && used < len) {
		if (p->base[m] != 0)
			snprintf(buf + used, len - used, " (%+.1f%%)",
				 (p->mean.v[m] - p->base[m]) / p->base[m] * 100);
		else
			snprintf(buf + used, len - used, " (n/a)");
	}
}

/* Display width: "±" is two bytes in UTF-8 but one column. */
static size_t text_width(const char *s)
{
	size_t w = 0;

	for (; *s; s++)
		if (((unsigned char)*s & 0xc0) != 0x80)
			w++;
	return w;
}

static void put_padded(FILE *f, const char *s, size_t width)
{
	size_t w = text_width(s);

	while (w++ < width)
		fputc(' ', f);
	fputs(s, f);
}

static const struct bench_point *find_point(const struct bench_point *pts,
					    unsigned n, int rw,
					    uint32_t sessions, uint32_t bs,
					    uint32_t depth)
{
	unsigned i;

	for (i = 0; i < n; i++)
		if (pts[i].rw == rw && pts[i].sessions == sessions &&
		    pts[i].bs == bs && pts[i].depth == depth)
			return &pts[i];
	return NULL;
}

/* Distinct values of bs or depth over one workload, in first-seen order. */
static unsigned axis(const struct bench_point *pts, unsigned n, int rw,
		     uint32_t sessions, bool depth, uint32_t *out,
		     unsigned max)
{
	unsigned i, j, k = 0;

	for (i = 0; i < n; i++) {
		uint32_t v = depth ? pts[i].depth : pts[i].bs;

		if (pts[i].rw != rw || pts[i].sessions != sessions)
			continue;
		for (j = 0; j < k && out[j] != v; j++)
			;
		if (j == k && k < max)
			out[k++] = v;
	}
	return k;
}

void bench_print_table(FILE *f, const struct bench_point *pts, unsigned n,
		       int rw, uint32_t sessions, enum bench_metric m)
{
	uint32_t bss[BENCH_MAXLIST], deps[BENCH_MAXLIST];
	size_t colw[BENCH_MAXLIST], w0 = 2;
	unsigned nb, nd, r, c;
	char cell[96], lab[32];

	nb = axis(pts, n, rw, sessions, false, bss, BENCH_MAXLIST);
	nd = axis(pts, n, rw, sessions, true, deps, BENCH_MAXLIST);
	if (!nb || !nd)
		return;
	for (r = 0; r < nb; r++) {
		bench_fmt_size(lab, sizeof(lab), bss[r]);
		if (strlen(lab) > w0)
			w0 = strlen(lab);
	}
	for (c = 0; c < nd; c++) {
		snprintf(cell, sizeof(cell), "%u", deps[c]);
		colw[c] = strlen(cell);
		for (r = 0; r < nb; r++) {
			bench_format_cell(cell, sizeof(cell),
					  find_point(pts, n, rw, sessions,
						     bss[r], deps[c]), m);
			if (text_width(cell) > colw[c])
				colw[c] = text_width(cell);
		}
	}
	fprintf(f, "%s, %u session%s: %s (rows: block size, columns: queue depth%s)\n",
		bench_rw_name(rw), sessions, sessions == 1 ? "" : "s",
		bench_metric_label(m), sessions > 1 ? " per session" : "");
	put_padded(f, "bs", w0);
	fputs(" |", f);
	for (c = 0; c < nd; c++) {
		snprintf(cell, sizeof(cell), "%u", deps[c]);
		fputs("  ", f);
		put_padded(f, cell, colw[c]);
	}
	fputc('\n', f);
	for (r = 0; r < nb; r++) {
		bench_fmt_size(lab, sizeof(lab), bss[r]);
		put_padded(f, lab, w0);
		fputs(" |", f);
		for (c = 0; c < nd; c++) {
			bench_format_cell(cell, sizeof(cell),
					  find_point(pts, n, rw, sessions,
						     bss[r], deps[c]), m);
			fputs("  ", f);
			put_padded(f, cell, colw[c]);
		}
		fputc('\n', f);
	}
}

/* The share of a point's commands the model's caches served: reads from
 * read-ahead, writes completed in the write cache (-1: no commands). */
static double model_hit_pct(const struct bench_model_point *m)
{
	if (m->commands <= 0)
		return -1;
	return (m->read_hits + m->cached_writes) / m->commands * 100;
}

void bench_print_detail(FILE *f, const struct bench_point *pts, unsigned n)
{
	unsigned i;
	char bs[16];
	bool model = false;

	/* The model's columns only when a point has its statistics (--ctl
	 * and a disk backend), so the table is unchanged otherwise. */
	for (i = 0; i < n; i++)
		if (pts[i].nrep && pts[i].model.ok)
			model = true;
	fprintf(f, "%-9s %4s %6s %5s %10s %9s %9s %9s %9s %9s %6s %7s",
		"rw", "sess", "bs", "depth", "iops", "MB/s", "p50us",
		"p99us", "p999us", "meanus", "cpu%", "errors");
	if (model)
		fprintf(f, " %8s %8s %6s", "drive q", "host q", "hit %");
	fputc('\n', f);
	for (i = 0; i < n; i++) {
		const struct bench_point *p = &pts[i];

		if (!p->nrep)
			continue;
		bench_fmt_size(bs, sizeof(bs), p->bs);
		fprintf(f, "%-9s %4u %6s %5u %10.0f %9.1f %9.1f %9.1f %9.1f %9.1f %6.1f %7" PRIu64,
			bench_rw_name(p->rw), p->sessions, bs, p->depth,
			p->mean.v[METRIC_IOPS], p->mean.v[METRIC_MBPS],
			p->mean.v[METRIC_P50], p->mean.v[METRIC_P99],
			p->mean.v[METRIC_P999], p->mean.lat_mean_us,
			p->mean.v[METRIC_CPU], bench_errors_total(&p->mean.err));
		if (model && p->model.ok) {
			double hit = model_hit_pct(&p->model);

			fprintf(f, " %8.2f %8.2f", p->model.mean_drive_queue,
				p->model.mean_host_queue);
			if (hit < 0)
				fprintf(f, " %6s", "-");
			else
				fprintf(f, " %6.1f", hit);
		} else if (model) {
			fprintf(f, " %8s %8s %6s", "-", "-", "-");
		}
		fputc('\n', f);
		if (p->model.ok)
			fprintf(f, "%9s model %s: read hits %.0f, cached writes "
				"%.0f, destages %.0f, busy dies %.1f\n", "",
				p->model.model, p->model.read_hits,
				p->model.cached_writes, p->model.destages,
				p->model.mean_busy_dies);
	}
}

void bench_print_errors(FILE *f, const struct bench_point *pts, unsigned n)
{
	unsigned i;
	char bs[16];

	for (i = 0; i < n; i++) {
		const struct bench_point *p = &pts[i];
		const struct bench_errors *e = &p->mean.err;

		if (e->unit_attention) {
			bench_fmt_size(bs, sizeof(bs), p->bs);
			fprintf(f, "note: %s sessions=%u bs=%s depth=%u: %" PRIu64
				" UNIT ATTENTION answers, commands sent again\n",
				bench_rw_name(p->rw), p->sessions, bs, p->depth,
				e->unit_attention);
		}
		if (e->reconnects) {
			bench_fmt_size(bs, sizeof(bs), p->bs);
			fprintf(f, "note: %s sessions=%u bs=%s depth=%u: %" PRIu64
				" reconnects, %.3f s without service\n",
				bench_rw_name(p->rw), p->sessions, bs, p->depth,
				e->reconnects, e->outage_s);
		}
		if (!bench_errors_total(e))
			continue;
		bench_fmt_size(bs, sizeof(bs), p->bs);
		fprintf(f, "errors: %s sessions=%u bs=%s depth=%u: %" PRIu64,
			bench_rw_name(p->rw), p->sessions, bs, p->depth,
			bench_errors_total(e));
		if (e->check)
			fprintf(f, ", %" PRIu64 " CHECK CONDITION (first: sense key 0x%x ASC/ASCQ 0x%02x/0x%02x)",
				e->check, e->sense_key, e->asc, e->ascq);
		if (e->status)
			fprintf(f, ", %" PRIu64 " other SCSI status", e->status);
		if (e->transport)
			fprintf(f, ", %" PRIu64 " transport (connection lost or I/O error)",
				e->transport);
		if (e->verify) {
			fprintf(f, ", %" PRIu64 " verify mismatches", e->verify);
			if (e->have_lba)
				fprintf(f, " (first at LBA %" PRIu64 ")",
					e->first_lba);
		}
		fputc('\n', f);
	}
}

/* ---- JSON */

static json_object *jdouble(double v)
{
	char buf[48];

	if (!isfinite(v))
		v = 0;
	snprintf(buf, sizeof(buf), "%.3f", v);
	return json_object_new_double_s(v, buf);
}

int bench_write_json(const char *path, const struct bench_meta *meta,
		     const struct bench_point *pts, unsigned n)
{
	json_object *root = json_object_new_object(), *arr;
	unsigned i;
	int rc;

	json_object_object_add(root, "tool", json_object_new_string("tcq-bench"));
	json_object_object_add(root, "version",
			       json_object_new_string(meta->version));
	json_object_object_add(root, "engine",
			       json_object_new_string(meta->engine));
	json_object_object_add(root, "target",
			       json_object_new_string(meta->target));
	json_object_object_add(root, "started",
			       json_object_new_string(meta->started));
	arr = json_object_new_array();
	for (i = 0; i < n; i++) {
		const struct bench_point *p = &pts[i];
		json_object *o, *lat;

		if (!p->nrep)
			continue;
		o = json_object_new_object();
		lat = json_object_new_object();
		json_object_object_add(o, "rw",
				       json_object_new_string(bench_rw_name(p->rw)));
		json_object_object_add(o, "bs", json_object_new_int64(p->bs));
		json_object_object_add(o, "depth", json_object_new_int64(p->depth));
		json_object_object_add(o, "sessions",
				       json_object_new_int64(p->sessions));
		json_object_object_add(o, "iops", jdouble(p->mean.v[METRIC_IOPS]));
		json_object_object_add(o, "mbps", jdouble(p->mean.v[METRIC_MBPS]));
		json_object_object_add(lat, "p50", jdouble(p->mean.v[METRIC_P50]));
		json_object_object_add(lat, "p99", jdouble(p->mean.v[METRIC_P99]));
		json_object_object_add(lat, "p999", jdouble(p->mean.v[METRIC_P999]));
		json_object_object_add(lat, "mean", jdouble(p->mean.lat_mean_us));
		json_object_object_add(o, "lat_us", lat);
		json_object_object_add(o, "errors",
				       json_object_new_int64((int64_t)bench_errors_total(&p->mean.err)));
		json_object_object_add(o, "reconnects",
				       json_object_new_int64((int64_t)p->mean.err.reconnects));
		json_object_object_add(o, "outage_s", jdouble(p->mean.err.outage_s));
		json_object_object_add(o, "cpu_pct", jdouble(p->mean.v[METRIC_CPU]));
		json_object_object_add(o, "runtime_s", jdouble(p->mean.runtime_s));
		json_object_object_add(o, "ios",
				       json_object_new_int64((int64_t)p->mean.ios));
		bench_log_json(o, p);
		bench_rate_json(o, p);
		if (p->model.ok) {
			json_object *m = json_object_new_object();

			json_object_object_add(m, "model",
					       json_object_new_string(p->model.model));
			json_object_object_add(m, "mean_drive_queue",
					       jdouble(p->model.mean_drive_queue));
			json_object_object_add(m, "mean_host_queue",
					       jdouble(p->model.mean_host_queue));
			json_object_object_add(m, "mean_commands",
					       jdouble(p->model.mean_commands));
			json_object_object_add(m, "mean_busy_dies",
					       jdouble(p->model.mean_busy_dies));
			json_object_object_add(m, "commands",
					       jdouble(p->model.commands));
			json_object_object_add(m, "read_hits",
					       jdouble(p->model.read_hits));
			json_object_object_add(m, "cached_writes",
					       jdouble(p->model.cached_writes));
			json_object_object_add(m, "destages",
					       jdouble(p->model.destages));
			json_object_object_add(o, "model", m);
		}
		bench_mix_json(o, p);
		if (p->nrep > 1) {
			json_object_object_add(o, "repeat",
					       json_object_new_int64(p->nrep));
			json_object_object_add(o, "iops_sd",
					       jdouble(p->sd[METRIC_IOPS]));
			json_object_object_add(o, "mbps_sd",
					       jdouble(p->sd[METRIC_MBPS]));
		}
		json_object_array_add(arr, o);
	}
	json_object_object_add(root, "points", arr);
	rc = json_object_to_file_ext(path, root, JSON_C_TO_STRING_PRETTY |
				     JSON_C_TO_STRING_SPACED);
	json_object_put(root);
	return rc < 0 ? -1 : 0;
}

static bool jget_num(json_object *o, const char *key, double *v)
{
	json_object *x;

	if (!json_object_object_get_ex(o, key, &x))
		return false;
	if (!json_object_is_type(x, json_type_double) &&
	    !json_object_is_type(x, json_type_int))
		return false;
	*v = json_object_get_double(x);
	return true;
}

int bench_load_compare(const char *path, struct bench_point *pts, unsigned n,
		       char *err, size_t errlen)
{
	json_object *root, *arr, *x, *lat;
	size_t i, len;
	unsigned j;
	int matched = 0;

	root = json_object_from_file(path);
	if (!root) {
		snprintf(err, errlen, "%s: cannot read JSON: %s", path,
			 json_util_get_last_err() ? json_util_get_last_err() :
			 "parse error");
		return -1;
	}
	if (!json_object_object_get_ex(root, "tool", &x) ||
	    !json_object_is_type(x, json_type_string) ||
	    strcmp(json_object_get_string(x), "tcq-bench") != 0 ||
	    !json_object_object_get_ex(root, "points", &arr) ||
	    !json_object_is_type(arr, json_type_array)) {
		snprintf(err, errlen, "%s: not a tcq-bench --json file", path);
		json_object_put(root);
		return -1;
	}
	len = json_object_array_length(arr);
	for (i = 0; i < len; i++) {
		json_object *o = json_object_array_get_idx(arr, i);
		double bs, depth, sess, v;
		int rw;

		if (!json_object_is_type(o, json_type_object) ||
		    !json_object_object_get_ex(o, "rw", &x) ||
		    !json_object_is_type(x, json_type_string) ||
		    !jget_num(o, "bs", &bs) || !jget_num(o, "depth", &depth) ||
		    !jget_num(o, "sessions", &sess))
			continue;
		rw = bench_rw_parse(json_object_get_string(x));
		for (j = 0; j < n; j++) {
			struct bench_point *p = &pts[j];

			if (p->rw != rw || p->bs != (uint32_t)bs ||
			    p->depth != (uint32_t)depth ||
			    p->sessions != (uint32_t)sess)
				continue;
			memset(p->base, 0, sizeof(p->base));
			if (jget_num(o, "iops", &v))
				p->base[METRIC_IOPS] = v;
			if (jget_num(o, "mbps", &v))
				p->base[METRIC_MBPS] = v;
			if (jget_num(o, "cpu_pct", &v))
				p->base[METRIC_CPU] = v;
			if (json_object_object_get_ex(o, "lat_us", &lat)) {
				if (jget_num(lat, "p50", &v))
					p->base[METRIC_P50] = v;
				if (jget_num(lat, "p99", &v))
					p->base[METRIC_P99] = v;
				if (jget_num(lat, "p999", &v))
					p->base[METRIC_P999] = v;
			}
			p->has_base = true;
			matched++;
		}
	}
	json_object_put(root);
	return matched;
}

/* ---- CSV */

int bench_write_csv(const char *path, const struct bench_point *pts,
		    unsigned n)
{
	FILE *f = fopen(path, "w");
	unsigned i;

	if (!f)
		return -1;
	fprintf(f, "rw,bs,depth,sessions,iops,mbps,lat_p50_us,lat_p99_us,lat_p999_us,lat_mean_us,errors,cpu_pct,runtime_s,ios,repeat,iops_sd,mbps_sd");
	bench_mix_csv_head(f, pts, n);
	fputc('\n', f);
	for (i = 0; i < n; i++) {
		const struct bench_point *p = &pts[i];

		if (!p->nrep)
			continue;
		fprintf(f, "%s,%u,%u,%u,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%" PRIu64 ",%.3f,%.3f,%" PRIu64 ",%u,%.3f,%.3f",
			bench_rw_name(p->rw), p->bs, p->depth, p->sessions,
			p->mean.v[METRIC_IOPS], p->mean.v[METRIC_MBPS],
			p->mean.v[METRIC_P50], p->mean.v[METRIC_P99],
			p->mean.v[METRIC_P999], p->mean.lat_mean_us,
			bench_errors_total(&p->mean.err), p->mean.v[METRIC_CPU],
			p->mean.runtime_s, p->mean.ios, p->nrep,
			p->sd[METRIC_IOPS], p->sd[METRIC_MBPS]);
		bench_mix_csv_row(f, pts, n, p);
		fputc('\n', f);
	}
	return fclose(f) ? -1 : 0;
}

/* ---- gnuplot */

bool bench_have_gnuplot(void)
{
	const char *path = getenv("PATH");
	char buf[4096];
	const char *p, *q;

	if (!path)
		path = "/usr/bin:/bin";
	for (p = path; *p; p = *q ? q + 1 : q) {
		q = strchr(p, ':');
		if (!q)
			q = p + strlen(p);
		snprintf(buf, sizeof(buf), "%.*s/gnuplot", (int)(q - p), p);
		if (access(buf, X_OK) == 0)
			return true;
	}
	return false;
}

int bench_plot(const char *path, const struct bench_point *pts, unsigned n,
	       char *err, size_t errlen)
{
	uint32_t bss[BENCH_MAXLIST], deps[BENCH_MAXLIST];
	unsigned i, j, b, d, nb, nd, nset = 0;
	char lab[16];
	FILE *g;

	if (strchr(path, '\'') || strchr(path, '\n')) {
		snprintf(err, errlen, "--plot: file name must not contain quotes");
		return -1;
	}
	g = bench_gnuplot_open(path, "tcq-bench: MB/s vs queue depth",
			       "queue depth (per session)", "MB/s",
			       "set logscale x 2\n", err, errlen);
	if (!g)
		return -1;
	/* one data block per (workload, block size) line */
	for (i = 0; i < n; i++) {
		const struct bench_point *p = &pts[i];
		unsigned si;

		for (si = 0; si < i; si++)
			if (pts[si].rw == p->rw && pts[si].sessions == p->sessions)
				break;
		if (si < i)
			continue;	/* workload already done */
		nb = axis(pts, n, p->rw, p->sessions, false, bss, BENCH_MAXLIST);
		nd = axis(pts, n, p->rw, p->sessions, true, deps, BENCH_MAXLIST);
		for (b = 0; b < nb; b++) {
			fprintf(g, "$d%u << EOD\n", nset);
			for (d = 0; d < nd; d++) {
				for (j = 0; j < n; j++)
					if (pts[j].rw == p->rw &&
					    pts[j].sessions == p->sessions &&
					    pts[j].bs == bss[b] &&
					    pts[j].depth == deps[d] && pts[j].nrep)
						break;
				if (j < n)
					fprintf(g, "%u %.3f\n", deps[d],
						pts[j].mean.v[METRIC_MBPS]);
			}
			fprintf(g, "EOD\n");
			nset++;
		}
	}
	fprintf(g, "plot ");
	nset = 0;
	for (i = 0; i < n; i++) {
		const struct bench_point *p = &pts[i];
		unsigned si;

		for (si = 0; si < i; si++)
			if (pts[si].rw == p->rw && pts[si].sessions == p->sessions)
				break;
		if (si < i)
			continue;
		nb = axis(pts, n, p->rw, p->sessions, false, bss, BENCH_MAXLIST);
		for (b = 0; b < nb; b++) {
			bench_fmt_size(lab, sizeof(lab), bss[b]);
			fprintf(g, "%s$d%u using 1:2 with linespoints title '%s s%u %s'",
				nset ? ", " : "", nset, bench_rw_name(p->rw),
				p->sessions, lab);
			nset++;
		}
	}
	fprintf(g, "\n");
	return bench_gnuplot_close(g, err, errlen);
}
