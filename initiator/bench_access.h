/*
 * tcq-bench's access patterns, as fio users know them: where random I/O
 * goes (--dist, bench_dist.c), pauses between bursts (--thinktime,
 * bench_think.c), a trace replayed in order and in time (--replay,
 * bench_replay.c parses, bench_replay_run.c sends), and fio job files
 * turned into these options (--job, bench_job.c). Their options are
 * parsed here (bench_access.c), for bench_main.c's one option parser.
 */
#ifndef TCQ_BENCH_ACCESS_H
#define TCQ_BENCH_ACCESS_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* ---- --dist (fio's random_distribution) ---- */
enum dist_kind {
	DIST_UNIFORM, DIST_ZIPF, DIST_PARETO, DIST_NORMAL, DIST_ZONED,
	DIST_ZONED_ABS,
};

#define DIST_MAX_ZONES 256	/* as fio */

struct dist_zone {
	double access;		/* percent of the accesses */
	double size;		/* percent of the region, or bytes (abs) */
};

struct bench_dist {
	enum dist_kind kind;
	double param;		/* zipf theta, pareto h, normal SD in % */
	double center;		/* 0..1, or -1: fio's default */
	unsigned nzones;
	struct dist_zone zones[DIST_MAX_ZONES];
};

/* The generator of one point: read-only while the workers run. */
struct dist_gen {
	enum dist_kind kind;
	uint64_t n;		/* chunks of the region */
	double theta, hx1, hxn, s;	/* zipf (rejection-inversion) */
	double pareto_pow;
	double mean, sd;	/* normal, in chunks */
	uint64_t mult, off;	/* rank -> chunk: (rank * mult + off) % n */
	bool scatter;		/* hot ranks spread over the region */
	unsigned nzones;
	uint64_t zone_first[DIST_MAX_ZONES + 1];	/* chunks */
	double zone_cum[DIST_MAX_ZONES];	/* cumulative access share */
};

/* "zipf:1.2", "pareto:0.2:0.5", "normal:10", "zoned:60/10:40/90",
 * "zoned_abs:60/20G:40/100G", "random": 0, or -1 with err naming what
 * is wrong. */
int dist_parse(const char *s, struct bench_dist *d, char *err, size_t errlen);
/* Prepares d over n chunks of chunk_bytes each: 0, or -1 with err. */
int dist_gen_init(struct dist_gen *g, const struct bench_dist *d, uint64_t n,
		  uint64_t chunk_bytes, char *err, size_t errlen);
/* The next chunk in [0, n), drawing from the splitmix64 state *rng. */
uint64_t dist_next(const struct dist_gen *g, uint64_t *rng);

/* ---- --thinktime (fio's thinktime, _spin, _blocks, _blocks_type) ---- */
struct bench_think {
	uint64_t think_ns, spin_ns;	/* think_ns 0: no think time */
	uint32_t blocks;		/* I/Os between pauses (default 1) */
	bool on_issue;			/* count issued, not completed */
	uint32_t depth_low;		/* fio's iodepth_low, if low_set */
	bool low_set;
};

/* One session's place in its think cycle. */
struct think_state {
	uint64_t issued, completed;	/* since the last pause */
	uint64_t spin_end, end;		/* of the pause under way */
	uint8_t phase;			/* THINK_RUN, _DRAIN, _PAUSE */
	uint64_t gaps;			/* pauses taken */
	uint64_t total;			/* I/Os issued, over all bursts */
	bool low_wait;			/* --depth-low: draining to it */
};

enum { THINK_RUN, THINK_DRAIN, THINK_PAUSE };

/* Whether the session must hold its next I/O at time t (inflight: its
 * I/Os under way); starts a pause once the burst is done and drained. */
bool think_hold(const struct bench_think *k, struct think_state *st,
		uint32_t inflight, uint64_t t);
void think_issued(struct think_state *st);
/* --depth-low: whether a session of this depth with inflight under way
 * waits (once full, it drains to depth_low before it fills again). */
bool think_low_hold(const struct bench_think *k, struct think_state *st,
		    uint32_t inflight, uint32_t depth);
void think_completed(struct think_state *st);
/* The poll timeout (ms) a holding session allows: 0 while spinning or
 * when less than a millisecond is left, else the milliseconds left. */
int think_poll_ms(const struct bench_think *k, const struct think_state *st,
		  uint64_t t);
/* "100", "100us", "5ms", "1s": nanoseconds; fio's default unit is us. */
int think_parse_time(const char *s, uint64_t *ns);

/* ---- --replay (fio's read_iolog, replay_no_stall) ---- */
struct bench_replay {
	const char *path;	/* NULL: no replay */
	bool no_stall;		/* as fast as possible, order kept */
};

/* ---- all of them, in struct bench_opts ---- */
struct bench_access {
	struct bench_dist dist;
	struct bench_think think;
	struct bench_replay replay;
};

/* getopt_long values of these options (above bench_main.c's own). */
enum {
	OPT_ACCESS_DIST = 1000, OPT_ACCESS_THINK, OPT_ACCESS_THINK_SPIN,
	OPT_ACCESS_THINK_BLOCKS, OPT_ACCESS_THINK_TYPE, OPT_ACCESS_REPLAY,
	OPT_ACCESS_NO_STALL, OPT_ACCESS_JOB, OPT_ACCESS_DEPTH_LOW,
};

/* Entries of bench_main.c's struct option table. */
#define BENCH_ACCESS_LONGOPTS \
	{ "dist", required_argument, NULL, OPT_ACCESS_DIST }, \
	{ "thinktime", required_argument, NULL, OPT_ACCESS_THINK }, \
	{ "thinktime-spin", required_argument, NULL, OPT_ACCESS_THINK_SPIN }, \
	{ "thinktime-blocks", required_argument, NULL, OPT_ACCESS_THINK_BLOCKS }, \
	{ "thinktime-blocks-type", required_argument, NULL, OPT_ACCESS_THINK_TYPE }, \
	{ "replay", required_argument, NULL, OPT_ACCESS_REPLAY }, \
	{ "replay-no-stall", no_argument, NULL, OPT_ACCESS_NO_STALL }, \
	{ "job", required_argument, NULL, OPT_ACCESS_JOB }, \
	{ "depth-low", required_argument, NULL, OPT_ACCESS_DEPTH_LOW }

/* Sets the defaults (uniform, no think time, no replay). */
void access_defaults(struct bench_access *a);
/* One of the options above: 0 taken, -1 bad value (an error printed
 * when the value's fault needs more words than "bad value"), 1 not
 * one of them. */
int access_opt(struct bench_access *a, int c, const char *arg);
/* What the options ask of each other once all are read: 0, or -1 with
 * the error printed. */
int access_finish(const struct bench_access *a);
void access_usage(FILE *f);

/* ---- --job FILE (bench_job.c) ---- */
/* Rewrites argv when it holds --job FILE: the job's options first, then
 * the command line's (which win). 0 (argv unchanged when there is no
 * --job), or -1 with the error (FILE:LINE: the key) printed. The new
 * argv lives until the program ends. */
int bench_job_expand(int *argc, char ***argv);

/* ---- --replay's run (bench_replay_run.c) ---- */
struct bench_opts;
/* Replays o->acc.replay against o->target: the exit code (0 done, 1 an
 * I/O failed, 2 nothing could be sent: a bad trace, or one past the
 * LUN's end). */
int bench_replay_main(const struct bench_opts *o);
#endif
