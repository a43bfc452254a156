/*
 * tcq-bench's SCSI command mixes (--fua, --sync-every, --sync-interval,
 * --unmap, --write-same, --write-same-unmap, --caw, --xcopy): the
 * options (bench_mix.c), what each I/O slot sends (bench_mix_run.c), and
 * each command kind's latency, reported on its own (tables, JSON, CSV).
 */
#ifndef TCQ_BENCH_MIX_H
#define TCQ_BENCH_MIX_H
#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* The kinds of command a point reports apart. */
enum bench_kind {
	BK_READ, BK_WRITE, BK_FUA, BK_SYNC, BK_UNMAP, BK_WS, BK_WS_UNMAP,
	BK_CAW, BK_XCOPY, BK_COUNT
};

/* One kind's commands in one point: completed (GOOD, or a COMPARE AND
 * WRITE's MISCOMPARE, counted in miscompares too) and their latency. */
struct bench_kind_stat {
	uint64_t count, miscompares;
	double mean_us, p50_us, p99_us, p999_us;
};

/* The shares (% of commands; fua: % of the workload's WRITEs) and the
 * SYNCHRONIZE CACHE schedule (per session: after every sync_every
 * commands that write, or every sync_ms milliseconds). */
struct bench_mix {
	unsigned fua_pct, unmap_pct, ws_pct, ws_unmap_pct, caw_pct, xcopy_pct;
	uint32_t sync_every;
	double sync_ms;
};

/* Option values, apart from bench_main.c's (which start at 256). */
enum {
	BENCH_MIX_OPT_FUA = 0x1300, BENCH_MIX_OPT_SYNC_EVERY,
	BENCH_MIX_OPT_SYNC_INTERVAL, BENCH_MIX_OPT_UNMAP, BENCH_MIX_OPT_WS,
	BENCH_MIX_OPT_WS_UNMAP, BENCH_MIX_OPT_CAW, BENCH_MIX_OPT_XCOPY,
};
#define BENCH_MIX_LONG_OPTS \
	{ "fua", required_argument, NULL, BENCH_MIX_OPT_FUA }, \
	{ "sync-every", required_argument, NULL, BENCH_MIX_OPT_SYNC_EVERY }, \
	{ "sync-interval", required_argument, NULL, BENCH_MIX_OPT_SYNC_INTERVAL }, \
	{ "unmap", required_argument, NULL, BENCH_MIX_OPT_UNMAP }, \
	{ "write-same", required_argument, NULL, BENCH_MIX_OPT_WS }, \
	{ "write-same-unmap", required_argument, NULL, BENCH_MIX_OPT_WS_UNMAP }, \
	{ "caw", required_argument, NULL, BENCH_MIX_OPT_CAW }, \
	{ "xcopy", required_argument, NULL, BENCH_MIX_OPT_XCOPY }

struct bench_opts;
struct bench_point;
struct bench_sample;

/* Takes option c: 0, -1 for a bad value, 1 if c is not one of these. */
int bench_mix_opt(struct bench_opts *o, int c, const char *arg);
/* The options' lines of --help. */
void bench_mix_usage(FILE *f);
/* What the options ask of each other: 0, or -1 with the error printed. */
int bench_mix_check(const struct bench_opts *o);
/* Whether any of the options is given. */
bool bench_mix_on(const struct bench_mix *m);
const char *bench_kind_name(int kind);
/* The kinds of nrep samples into mean: counts summed, latencies their
 * mean. */
void bench_mix_fold(struct bench_sample *mean, const struct bench_sample *s,
		    unsigned nrep);
/* Whether any point counted a command other than READ and WRITE. */
bool bench_mix_any(const struct bench_point *pts, unsigned n);
/* One row per point and kind it sent: count, latency, miscompares. */
void bench_mix_print(FILE *f, const struct bench_point *pts, unsigned n);
/* CSV: the columns of every kind some point sent (none when only READ
 * and WRITE were), after the row's own. */
void bench_mix_csv_head(FILE *f, const struct bench_point *pts, unsigned n);
void bench_mix_csv_row(FILE *f, const struct bench_point *pts, unsigned n,
		       const struct bench_point *p);
struct json_object;
/* JSON: the point's "kinds" object, when it sent more than READ and
 * WRITE. */
void bench_mix_json(struct json_object *o, const struct bench_point *p);
#endif
