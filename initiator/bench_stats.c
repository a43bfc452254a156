/* Names, parsing and the arithmetic of repeated samples. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "initiator/bench.h"

static const char *const rw_names[BENCH_NRW] = {
	"read", "write", "randread", "randwrite", "randrw", "journal",
};

static const char *const commit_names[COMMIT_COUNT] = {
	"flush", "fua", "ordered", "none",
};

static const char *const metric_names[METRIC_COUNT] = {
	"iops", "mbps", "lat-p50", "lat-p99", "lat-p999", "cpu",
};

static const char *const metric_labels[METRIC_COUNT] = {
	"IOPS", "MB/s", "p50 latency (us)", "p99 latency (us)",
	"p99.9 latency (us)", "CPU (% of one CPU)",
};

const char *bench_rw_name(int rw)
{
	return rw >= 0 && rw < BENCH_NRW ? rw_names[rw] : "?";
}

int bench_rw_parse(const char *s)
{
	int i;

	for (i = 0; i < BENCH_NRW; i++)
		if (strcmp(s, rw_names[i]) == 0)
			return i;
	return -1;
}

const char *bench_commit_name(enum bench_commit c)
{
	return (unsigned)c < COMMIT_COUNT ? commit_names[c] : "?";
}

int bench_commit_parse(const char *s)
{
	for (int i = 0; i < COMMIT_COUNT; i++)
		if (strcmp(s, commit_names[i]) == 0)
			return i;
	return -1;
}

const char *bench_metric_name(enum bench_metric m)
{
	return (unsigned)m < METRIC_COUNT ? metric_names[m] : "?";
}

const char *bench_metric_label(enum bench_metric m)
{
	return (unsigned)m < METRIC_COUNT ? metric_labels[m] : "?";
}

int bench_metric_parse(const char *s)
{
	int i;

	for (i = 0; i < METRIC_COUNT; i++)
		if (strcmp(s, metric_names[i]) == 0)
			return i;
	return -1;
}

void bench_fmt_size(char *buf, size_t len, uint64_t bytes)
{
	if (bytes && bytes % (1024 * 1024) == 0)
		snprintf(buf, len, "%" PRIu64 "M", bytes / (1024 * 1024));
	else if (bytes && bytes % 1024 == 0)
		snprintf(buf, len, "%" PRIu64 "K", bytes / 1024);
	else
		snprintf(buf, len, "%" PRIu64, bytes);
}

uint64_t bench_errors_total(const struct bench_errors *e)
{
	return e->check + e->status + e->transport + e->verify;
}

void bench_mean_sd(const double *x, unsigned n, double *mean, double *sd)
{
	double m = 0, ss = 0;
	unsigned i;

	for (i = 0; i < n; i++)
		m += x[i];
	m = n ? m / n : 0;
	for (i = 0; i < n; i++)
		ss += (x[i] - m) * (x[i] - m);
	*mean = m;
	*sd = n > 1 ? sqrt(ss / (n - 1)) : 0;
}

void bench_point_fold(struct bench_point *p, const struct bench_sample *s,
		      unsigned nrep)
{
	double x[64];
	unsigned i, k, n = nrep > 64 ? 64 : nrep;
	struct bench_errors *e = &p->mean.err;

	memset(&p->mean, 0, sizeof(p->mean));
	p->nrep = nrep;
	for (k = 0; k < METRIC_COUNT; k++) {
		for (i = 0; i < n; i++)
			x[i] = s[i].v[k];
		bench_mean_sd(x, n, &p->mean.v[k], &p->sd[k]);
	}
	for (i = 0; i < n; i++) {
		const struct bench_errors *se = &s[i].err;

		p->mean.lat_mean_us += s[i].lat_mean_us / n;
		for (k = 0; k < BENCH_MAXPCT; k++)
			p->mean.pct_us[k] += s[i].pct_us[k] / n;
		p->mean.rate_iops = s[i].rate_iops;
		p->mean.runtime_s += s[i].runtime_s / n;
		p->mean.ios += s[i].ios;
		e->check += se->check;
		e->status += se->status;
		e->transport += se->transport;
		e->verify += se->verify;
		e->unit_attention += se->unit_attention;
		e->reconnects += se->reconnects;
		e->outage_s += se->outage_s;
		if (se->have_lba && !e->have_lba) {
			e->have_lba = true;
			e->first_lba = se->first_lba;
		}
		if (se->check && !e->sense_key) {
			e->sense_key = se->sense_key;
			e->asc = se->asc;
			e->ascq = se->ascq;
		}
	}
	bench_mix_fold(&p->mean, s, n);
	if (n)
		p->mean.ios /= n;
}
