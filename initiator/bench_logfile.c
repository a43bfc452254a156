/*
 * The files of --log-interval and --hist-log in fio's formats (fio's
 * HOWTO, "Log File Formats"; stat.c's flush_hist_samples), their index,
 * and --plot's latency over time and latency histograms (gnuplot).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "initiator/bench_log.h"

static FILE *open_log(const char *prefix, const char *kind, unsigned n,
		      const char *mode, char *err, size_t errlen)
{
	char path[4096];
	FILE *f;

	if (n)
		snprintf(path, sizeof(path), "%s_%s.%u.log", prefix, kind, n);
	else
		snprintf(path, sizeof(path), "%s_%s.txt", prefix, kind);
	f = fopen(path, mode);
	if (!f)
		snprintf(err, errlen, "cannot write %s: %s", path,
			 strerror(errno));
	return f;
}

static int close_log(FILE *f, const char *prefix, char *err, size_t errlen)
{
	if (ferror(f) | fclose(f)) {
		snprintf(err, errlen, "cannot write the logs of %s: %s",
			 prefix, strerror(errno));
		return -1;
	}
	return 0;
}

/* The data directions of a workload: bit 0 read, bit 1 write. */
static unsigned rw_dirs(int rw)
{
	switch (rw) {
	case BENCH_READ: case BENCH_RANDREAD: return 1;
	case BENCH_RANDRW: return 3;
	default: return 2;
	}
}

int logfile_index(const char *prefix, unsigned n,
		  const struct bench_run_id *id, char *err, size_t errlen)
{
	FILE *f = open_log(prefix, "index", 0, n == 1 ? "w" : "a", err,
			   errlen);

	if (!f)
		return -1;
	if (n == 1)
		fprintf(f, "# N, rw, bs, depth, sessions, repeat, rate_iops\n");
	fprintf(f, "%u, %s, %" PRIu32 ", %" PRIu32 ", %" PRIu32 ", %u, %.0f\n",
		n, bench_rw_name(id->rw), id->bs, id->depth, id->sessions,
		id->rep + 1, id->rate_iops);
	return close_log(f, prefix, err, errlen);
}

/* fio's windowed entry as fio 3.33 writes it (log_offset=0: no
 * offset): time (ms), value, direction, block size (0 in windowed
 * logs), command priority (0: normal). */
static void entry(FILE *f, uint64_t t_ms, uint64_t v, unsigned d)
{
	fprintf(f, "%" PRIu64 ", %" PRIu64 ", %u, 0, 0\n", t_ms, v, d);
}

int logfile_series(const char *prefix, unsigned n, int rw,
		   const struct tlog_win *w, unsigned nw, unsigned win_ms,
		   uint64_t ramp_ms, uint64_t end_ms, char *err, size_t errlen)
{
	/* slat stays empty, as fio leaves it for an engine without a
	 * submission stage of its own (psync): fio_generate_plots needs it */
	static const char *const kind[5] = {
		"bw", "iops", "lat", "clat", "slat",
	};
	FILE *f[5] = { NULL };
	unsigned i, k, d, dirs = rw_dirs(rw);
	int rc = -1;

	for (i = 0; i < 5; i++) {
		f[i] = open_log(prefix, kind[i], n, "w", err, errlen);
		if (!f[i])
			goto out;
	}
	for (k = 0; k < nw; k++) {
		uint64_t start = (uint64_t)k * win_ms;
		/* the last window ends with the last I/O (1 ms at least) */
		uint64_t end = end_ms > start ? end_ms : start + 1;
		uint64_t t = start + win_ms < end ? start + win_ms : end;
		uint64_t len = t - start;

		for (d = 0; d < 2; d++) {
			if (!(dirs >> d & 1))
				continue;
			/* bandwidth in KiB/s, IOPS: rates over the window */
			entry(f[0], ramp_ms + t,
			      w[k].bytes[d] * 1000 / 1024 / len, d);
			entry(f[1], ramp_ms + t, w[k].ios[d] * 1000 / len, d);
			if (!w[k].ios[d])
				continue;
			/* latency in ns; tcq-bench times an I/O from its
			 * submission, so completion latency is all of it */
			entry(f[2], ramp_ms + t, w[k].lat_ns[d] / w[k].ios[d], d);
			entry(f[3], ramp_ms + t, w[k].lat_ns[d] / w[k].ios[d], d);
		}
	}
	rc = 0;
out:
	for (i = 0; i < 5; i++)
		if (f[i] && close_log(f[i], prefix, err, errlen))
			rc = -1;
	return rc;
}

int logfile_hist(const char *prefix, unsigned n, uint32_t bs,
		 const uint32_t *bins, unsigned nh, unsigned hist_ms,
		 uint64_t ramp_ms, uint64_t end_ms, char *err, size_t errlen)
{
	FILE *f = open_log(prefix, "clat_hist", n, "w", err, errlen);
	unsigned k, d, b;

	if (!f)
		return -1;
	for (k = 0; k < nh; k++) {
		uint64_t t = (uint64_t)(k + 1) * hist_ms;

		if (t > end_ms && end_ms > (uint64_t)k * hist_ms)
			t = end_ms;
		for (d = 0; d < 2; d++) {
			const uint32_t *h = bins + ((size_t)k * 2 + d) * FIO_PLAT_NR;
			uint64_t sum = 0;

			for (b = 0; b < FIO_PLAT_NR; b++)
				sum += h[b];
			if (!sum)
				continue;
			/* time, direction, block size, the bins */
			fprintf(f, "%" PRIu64 ", %u, %" PRIu32, ramp_ms + t, d,
				bs);
			for (b = 0; b < FIO_PLAT_NR; b++)
				fprintf(f, ", %" PRIu32, h[b]);
			fputc('\n', f);
		}
	}
	return close_log(f, prefix, err, errlen);
}

static void run_title(char *buf, size_t len, const struct bench_run_id *id)
{
	char bs[16], rate[32] = "";

	bench_fmt_size(bs, sizeof(bs), id->bs);
	if (id->rate_iops > 0)
		snprintf(rate, sizeof(rate), " at %.0f IOPS", id->rate_iops);
	snprintf(buf, len, "%s s%u %s d%u%s%s", bench_rw_name(id->rw),
		 id->sessions, bs, id->depth, rate, id->rep ? " (again)" : "");
}

FILE *bench_gnuplot_open(const char *path, const char *title,
			 const char *xlabel, const char *ylabel,
			 const char *xsetup, char *err, size_t errlen)
{
	FILE *g = popen("gnuplot", "w");

	if (!g) {
		snprintf(err, errlen, "cannot run gnuplot: %s", strerror(errno));
		return NULL;
	}
	fprintf(g, "set terminal svg size 960,600 dynamic background rgb 'white'\n"
		   "set output '%s'\nset title '%s'\nset xlabel '%s'\n"
		   "set ylabel '%s'\nset grid\nset key outside right\n"
		   "set yrange [0:*]\n%s", path, title, xlabel, ylabel, xsetup);
	return g;
}

int bench_gnuplot_close(FILE *g, char *err, size_t errlen)
{
	int rc = pclose(g);

	if (rc != 0) {
		snprintf(err, errlen, "gnuplot failed (status %d)", rc);
		return -1;
	}
	return 0;
}

static int plot_close(FILE *g, const struct logplot_run *runs, unsigned n,
		      char *err, size_t errlen)
{
	char t[96];

	fprintf(g, "plot ");
	for (unsigned i = 0; i < n; i++) {
		run_title(t, sizeof(t), &runs[i].id);
		fprintf(g, "%s$d%u using 1:2 with linespoints title '%s'",
			i ? ", " : "", i, t);
	}
	fprintf(g, "\n");
	return bench_gnuplot_close(g, err, errlen);
}

/* The share of a run's I/Os per 1/8 of a power of two of latency. */
static void hist_block(FILE *g, unsigned i, const struct bench_hist *h)
{
	uint64_t lo, hi, c = 0, first_lo = 0;
	unsigned b, inb = 0;

	fprintf(g, "$d%u << EOD\n", i);
	for (b = 0; b < HIST_NBUCKETS && h->total; b++) {
		hist_bucket_range(b, &lo, &hi);
		if (!inb)
			first_lo = lo;
		c += h->count[b];
		/* 8 sub-buckets a bin above 128 ns, 128 ns below */
		if (++inb < (b < 2 * HIST_SUB ? 2 * HIST_SUB : 8))
			continue;
		if (c)
			fprintf(g, "%.3f %.4f\n", (double)(first_lo + hi) / 2e3,
				100.0 * (double)c / (double)h->total);
		c = 0;
		inb = 0;
	}
	fprintf(g, "EOD\n");
}

int logfile_plot(const char *plot, const struct logplot_run *runs,
		 unsigned n, char *err, size_t errlen)
{
	char base[4096], path[4200];
	size_t len = strlen(plot);
	unsigned i, k;
	FILE *g;

	snprintf(base, sizeof(base), "%.*s",
		 (int)(len > 4 && strcmp(plot + len - 4, ".svg") == 0 ?
		       len - 4 : len), plot);
	snprintf(path, sizeof(path), "%s-lat-time.svg", base);
	g = bench_gnuplot_open(path, "tcq-bench: mean latency over time",
			       "seconds from the start of the run",
			       "latency (us)", "", err, errlen);
	if (!g)
		return -1;
	for (i = 0; i < n; i++) {
		fprintf(g, "$d%u << EOD\n", i);
		for (k = 0; k < runs[i].nt; k++)
			fprintf(g, "%.3f %.3f\n", runs[i].t_s[k],
				runs[i].lat_us[k]);
		fprintf(g, "EOD\n");
	}
	if (plot_close(g, runs, n, err, errlen))
		return -1;
	snprintf(path, sizeof(path), "%s-lat-hist.svg", base);
	g = bench_gnuplot_open(path, "tcq-bench: latency histogram",
			       "latency (us)", "% of I/Os", "", err, errlen);
	if (!g)
		return -1;
	fprintf(g, "set logscale x 10\n");
	for (i = 0; i < n; i++)
		hist_block(g, i, runs[i].hist);
	return plot_close(g, runs, n, err, errlen);
}
