/*
 * tcq-bench's time series and distributions: --log-interval (fio's
 * bandwidth, IOPS and latency logs), --hist-log (fio's histogram logs),
 * --percentiles, and the plots of latency over time and of each point's
 * latency histogram (bench_log.c: options, recording, percentiles;
 * bench_logfile.c: the log files and the plots).
 */
#ifndef TCQ_BENCH_LOG_H
#define TCQ_BENCH_LOG_H
#include <json-c/json.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include "initiator/bench.h"
#include "initiator/bench_hist.h"

/* fio's completion latency histogram (stat.h): FIO_IO_U_PLAT_BITS 6,
 * FIO_IO_U_PLAT_VAL 64, FIO_IO_U_PLAT_GROUP_NR 29. Its bins are
 * bench_hist's buckets (same log-linear layout), the last one open. */
#define FIO_PLAT_NR (29 * 64)		/* 1856 */

enum {
	OPT_LOG_INTERVAL = 0x1100, OPT_LOG_PREFIX, OPT_HIST_LOG,
	OPT_PERCENTILES,
};
/* bench_main.c's long options table takes these. */
#define BENCH_LOG_OPTIONS \
	{ "log-interval", required_argument, NULL, OPT_LOG_INTERVAL }, \
	{ "log-prefix", required_argument, NULL, OPT_LOG_PREFIX }, \
	{ "hist-log", required_argument, NULL, OPT_HIST_LOG }, \
	{ "percentiles", required_argument, NULL, OPT_PERCENTILES }

/* The option c of these: 0 taken, -1 bad value, 1 not one of them. */
int bench_log_opt(struct bench_opts *o, int c, const char *arg);
/* After the options: the default percentiles; -1 (said) if bad. */
int bench_log_check(struct bench_opts *o);
void bench_log_usage(FILE *f);
/* Parses "99,99.9,50" into ascending unique values in (0, 100]. */
int bench_pct_parse(const char *s, double *pct, unsigned *n);

/* One worker's series over a point: per window of --log-interval (or
 * the plot's) I/Os, bytes and summed latency by direction, and per
 * window of --hist-log fio's bins. */
struct bench_tlog;
/* NULL when nothing asks for a series (no log, no plot). */
struct bench_tlog *tlog_create(const struct bench_opts *o, uint64_t origin);
void tlog_free(struct bench_tlog *l);
/* A measured I/O completed at t_ns (>= origin). Out of memory: the
 * series stops growing (its later I/Os are left out, and said). */
void tlog_add(struct bench_tlog *l, bool write, uint64_t t_ns,
	      uint64_t lat_ns, uint64_t bytes);

/* What a run of a point is, for its log files' index and the plots. */
struct bench_run_id {
	int rw;
	uint32_t bs, depth, sessions;
	unsigned rep;
	double rate_iops;	/* asked of the point; 0: none */
	double ramp_s;		/* time of the origin from the run's start */
};
/* After a run: merges its workers' series, writes the log files of
 * this run (numbered in the order of the runs) and keeps what the plots
 * need; fills out->pct_us from hist. -1 with err filled when a log
 * file cannot be written. */
int bench_log_run(const struct bench_opts *o, const struct bench_run_id *id,
		  struct bench_tlog *const *logs, unsigned n, uint64_t t_last,
		  const struct bench_hist *hist, struct bench_sample *out,
		  char *err, size_t errlen);
/* After the sweep: the percentile table (with --percentiles), the
 * plots of latency over time and the histograms (with --plot). */
void bench_log_print(FILE *f, const struct bench_opts *o,
		     const struct bench_point *pts, unsigned n);
int bench_log_plot(const struct bench_opts *o, char *err, size_t errlen);
/* A point's percentiles into its --json object. */
void bench_log_json(json_object *jo, const struct bench_point *p);

/* ---- bench_logfile.c (bench_log.c's writers) */
struct tlog_win {
	uint64_t ios[2], bytes[2], lat_ns[2];	/* [0] read, [1] write */
};
/* Writes PREFIX_bw/_iops/_lat/_clat.N.log of the merged windows w[0..nw)
 * of win_ms each, the last ending end_ms after the origin. */
int logfile_series(const char *prefix, unsigned n, int rw,
		   const struct tlog_win *w, unsigned nw, unsigned win_ms,
		   uint64_t ramp_ms, uint64_t end_ms, char *err, size_t errlen);
/* Writes PREFIX_clat_hist.N.log: nh windows of fio's bins (2 directions
 * each) of hist_ms, of I/Os of bs bytes. */
int logfile_hist(const char *prefix, unsigned n, uint32_t bs,
		 const uint32_t *bins, unsigned nh, unsigned hist_ms,
		 uint64_t ramp_ms, uint64_t end_ms, char *err, size_t errlen);
/* Appends a line for run n to PREFIX_index.txt (created at run 1). */
int logfile_index(const char *prefix, unsigned n,
		  const struct bench_run_id *id, char *err, size_t errlen);
/* Kept per run for --plot: mean latency per window, the histogram. */
struct logplot_run {
	struct bench_run_id id;
	double *t_s, *lat_us;
	unsigned nt;
	struct bench_hist *hist;
};
int logfile_plot(const char *plot, const struct logplot_run *runs,
		 unsigned n, char *err, size_t errlen);
#endif
