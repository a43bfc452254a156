/*
 * tcq-bench's offered load: --rate MB/s and --rate-iops N (fio's rate
 * and rate_iops), per session or for the whole point (--rate-per), and
 * --curve (vdbench's: the maximum, then runs at fractions of it).
 * bench_rate.c: options, the pacing of a session, the rate a point did
 * not reach; bench_curve.c: the curve's runs, table, --json and plot.
 */
#ifndef TCQ_BENCH_RATE_H
#define TCQ_BENCH_RATE_H
#include <json-c/json.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include "initiator/bench.h"

enum {
	OPT_RATE = 0x1200, OPT_RATE_IOPS, OPT_RATE_PER, OPT_CURVE,
	OPT_CURVE_PCT,
};
/* bench_main.c's long options table takes these. */
#define BENCH_RATE_OPTIONS \
	{ "rate", required_argument, NULL, OPT_RATE }, \
	{ "rate-iops", required_argument, NULL, OPT_RATE_IOPS }, \
	{ "rate-per", required_argument, NULL, OPT_RATE_PER }, \
	{ "curve", no_argument, NULL, OPT_CURVE }, \
	{ "curve-pct", required_argument, NULL, OPT_CURVE_PCT }

/* A point below this share of its asked rate did not reach it. */
#define RATE_REACHED 0.95
/* A session behind its schedule catches up at most this far back. */
#define RATE_CATCHUP_NS 1000000000ull

/* The option c of these: 0 taken, -1 bad value, 1 not one of them. */
int bench_rate_opt(struct bench_opts *o, int c, const char *arg);
/* After the options: what they ask of each other; -1 (said) if bad. */
int bench_rate_check(struct bench_opts *o);
void bench_rate_usage(FILE *f);

/* The IOPS a point of bs bytes and `sessions` sessions is asked for in
 * all (the lower of --rate and --rate-iops); 0: no limit. */
double rate_point_iops(const struct bench_opts *o, uint32_t bs,
		       uint32_t sessions);
/* The time between two I/Os of one session of such a point; 0: none. */
uint64_t rate_interval_ns(const struct bench_opts *o, uint32_t bs,
			  uint32_t sessions);
/* Whether a session paced at interval_ns may start an I/O at t: then
 * its schedule *next moves one interval on (from t at the first I/O).
 * A session behind keeps the lost I/Os of at most RATE_CATCHUP_NS. */
bool rate_gate(uint64_t *next, uint64_t interval_ns, uint64_t t);
/* poll() that returns by wake_ns (CLOCK_MONOTONIC, 0: none; past: at
 * once) when that is sooner than timeout_ms: a paced session's next turn
 * to the microsecond, not the millisecond. now: the time now. */
int rate_poll(struct pollfd *pfd, nfds_t n, int timeout_ms, uint64_t wake_ns,
	      uint64_t now);
/* Whether a point reached the rate asked (or had none). */
bool rate_reached(const struct bench_sample *s);
/* The points that did not reach their rate, said under the tables. */
void bench_rate_print(FILE *f, const struct bench_point *pts, unsigned n);
void bench_rate_json(json_object *jo, const struct bench_point *p);

/* ---- bench_curve.c: --curve instead of the sweep's tables; returns
 * the exit status (0, 1 with I/O errors, 2 when a run failed). */
int bench_curve_main(const struct bench_opts *o, struct bench_point *pts,
		     unsigned npts, const char *started);
#endif
