/*
 * tcq-bench: shared types of the sweep driver (bench_main.c), the point
 * runner (bench_point.c, its workers in bench_run.c), verification stamps
 * (bench_verify.c) and output (bench_output.c).
 */
#ifndef TCQ_BENCH_H
#define TCQ_BENCH_H
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include "initiator/bench_access.h"
#include "initiator/bench_cpu.h"
#include "initiator/bench_mix.h"
#include "initiator/engine.h"

#define BENCH_MAXLIST 32
#define BENCH_MAXPCT 32		/* --percentiles */

enum bench_rw {
	BENCH_READ, BENCH_WRITE, BENCH_RANDREAD, BENCH_RANDWRITE, BENCH_RANDRW,
	BENCH_JOURNAL, BENCH_NRW
};

/* --commit: what orders a journal transaction's commit block after its
 * log blocks (bench_journal_run.c). */
enum bench_commit {
	COMMIT_FLUSH, COMMIT_FUA, COMMIT_ORDERED, COMMIT_NONE, COMMIT_COUNT
};

enum bench_metric {
	METRIC_IOPS, METRIC_MBPS, METRIC_P50, METRIC_P99, METRIC_P999,
	METRIC_CPU, METRIC_COUNT
};

/* --log-interval, --hist-log, --percentiles (bench_log.c). */
struct bench_log_opts {
	unsigned interval_ms;		/* fio's log_avg_msec; 0: no logs */
	unsigned hist_ms;		/* fio's log_hist_msec; 0: none */
	const char *prefix;		/* fio's write_*_log=PREFIX */
	double pct[BENCH_MAXPCT];	/* ascending, in (0, 100] */
	unsigned npct;
	bool pct_asked;			/* --percentiles given: print them */
};

/* --rate, --rate-iops, --rate-per, --curve (bench_rate.c). */
struct bench_rate_opts {
	double mbps, iops;		/* 0: no limit */
	bool total;			/* the rate is the point's, not a session's */
	bool curve;
	unsigned curve_pct[BENCH_MAXLIST];
	unsigned ncurve;
};

struct bench_opts {
	const struct engine_ops *engine;
	const char *target;		/* the first of targets[] */
	const char *targets[BENCH_MAXLIST];	/* sessions go round-robin */
	unsigned ntargets;
	struct engine_opts eo;
	int rw[BENCH_NRW];
	unsigned nrw;
	uint32_t bs[BENCH_MAXLIST];
	unsigned nbs;
	uint32_t depth[BENCH_MAXLIST];
	unsigned ndepth;
	uint32_t sessions[BENCH_MAXLIST];
	unsigned nsessions;
	unsigned threads;
	double runtime, ramp;
	uint64_t ios;			/* 0: no limit */
	uint64_t offset, span;		/* bytes; span 0: to the end */
	uint64_t seed;
	unsigned mix;			/* randrw: read percentage */
	unsigned ordered_pct, hoq_pct;
	struct bench_mix cmds;		/* --fua, --sync-every, ... */
	bool verify;
	const char *verify_journal;	/* --verify-journal FILE, or NULL */
	unsigned repeat;
	enum bench_metric metric;
	bool detail, quiet;
	const char *compare, *json, *csv, *plot;
	const char *ctl;		/* tcqd's control socket: model stats */
	uint32_t journal_blocks;	/* --rw journal: log blocks a txn */
	enum bench_commit commit;
	const char *check_journal;	/* --check-journal IMAGE|URL */
	struct bench_log_opts log;
	struct bench_rate_opts rate;
	struct bench_cpu_opts cpu;	/* --initiator-cpu */
	struct bench_access acc;	/* --dist, --thinktime, --replay */
};

/* Errors of one point, by cause. */
struct bench_errors {
	uint64_t check;		/* CHECK CONDITION */
	uint64_t unit_attention;	/* UNIT ATTENTIONs retried (no error) */
	uint64_t status;	/* other non-GOOD SCSI status (BUSY, ...) */
	uint64_t transport;	/* connection lost, timeouts, -errno */
	uint64_t verify;	/* stamp mismatches */
	uint64_t first_lba;	/* LBA of the first verify mismatch */
	bool have_lba;
	uint8_t sense_key, asc, ascq;	/* of the first CHECK CONDITION */
	/* --reconnect (not errors): sessions logged in again after a lost
	 * connection, and the seconds they were without service (from the
	 * loss to the new login), summed over the outages */
	uint64_t reconnects;
	double outage_s;
};

/* The measured result of one run of one point. */
struct bench_sample {
	double v[METRIC_COUNT];	/* iops, mbps, p50/p99/p999 us, cpu % */
	double lat_mean_us;
	double pct_us[BENCH_MAXPCT];	/* latency at log.pct[i] */
	double rate_iops;		/* asked of the point (total); 0: none */
	double runtime_s;
	uint64_t ios;
	struct bench_errors err;
	struct bench_kind_stat kinds[BK_COUNT];	/* each kind on its own */
};

/* A device model's statistics over one point (bench_model.c). */
struct bench_model_point {
	bool ok;
	char model[16];
	double mean_drive_queue, mean_host_queue, mean_busy_dies;
	double mean_commands;	/* a cut command's pieces counted once */
	double commands, read_hits, cached_writes, destages;
};

struct bench_model_snap {
	bool ok;
	char model[16];
	double commands, read_hits, cached_writes, destages;
	double elapsed, drive_area, host_area, dies_area, cmd_area;
};

/* The model statistics of the LUN at url (its target and LUN number) from
 * tcqd's control socket; 0, or -1 (no socket, no such LUN, no model). */
int bench_model_snap(const char *sock, const char *url,
		     struct bench_model_snap *s);
/* What happened between snapshots a and b. */
void bench_model_delta(const struct bench_model_snap *a,
		       const struct bench_model_snap *b,
		       struct bench_model_point *out);

struct bench_point {
	int rw;
	uint32_t bs, depth, sessions;
	unsigned nrep;
	struct bench_sample mean;	/* mean over repeats; errors summed */
	double sd[METRIC_COUNT];	/* 0 without --repeat */
	bool has_base;
	double base[METRIC_COUNT];	/* from --compare */
	struct bench_model_point model;	/* --ctl */
};

uint64_t bench_errors_total(const struct bench_errors *e);

const char *bench_rw_name(int rw);
int bench_rw_parse(const char *s);
const char *bench_metric_name(enum bench_metric m);
const char *bench_metric_label(enum bench_metric m);	/* with unit */
int bench_metric_parse(const char *s);
/* "4K", "128K", "1M", or bytes. */
void bench_fmt_size(char *buf, size_t len, uint64_t bytes);

/* Mean and sample standard deviation of n values. */
void bench_mean_sd(const double *x, unsigned n, double *mean, double *sd);
/* Folds nrep samples into p (mean, sd, errors summed). */
void bench_point_fold(struct bench_point *p, const struct bench_sample *s,
		      unsigned nrep);

/* Set by SIGINT or SIGTERM (bench_main.c): the point running ends now,
 * with what it measured, and no other point starts. */
extern volatile sig_atomic_t bench_interrupted;

/* ---- bench_point.c, bench_run.c: one measurement point */
/* Which point of the sweep this is, for the live progress line. */
struct bench_progress {
	unsigned point, npoints;
	double secs_left;		/* after this point */
};
/* Runs one point. Returns 0 (errors of the I/O are in out->err), or -1
 * when the point could not run at all (err filled). */
int bench_run_point(const struct bench_opts *o, int rw, uint32_t bs,
		    uint32_t depth, uint32_t sessions, unsigned rep,
		    const struct bench_progress *prog,
		    struct bench_sample *out, char *err, size_t errlen);
/* ---- bench_journal_run.c: --rw journal's point (one session; depth
 * transactions at once; a sample's I/Os are transactions). */
int bench_journal_point(const struct bench_opts *o, uint32_t bs,
			uint32_t depth, struct bench_sample *out, char *err,
			size_t errlen);
const char *bench_commit_name(enum bench_commit c);
int bench_commit_parse(const char *s);
/* Frees state kept over the sweep (the --verify generations). */
void bench_run_cleanup(void);

/* ---- bench_verify.c: block stamps */
struct bench_verify;
/* journal: NULL, or the --verify-journal file that keeps the
 * generations over runs (created, or continued if it is of this region). */
struct bench_verify *verify_create(uint64_t first_lba, uint64_t nblocks,
				   uint32_t block_size, uint32_t run_id,
				   const char *journal, char *err,
				   size_t errlen);
void verify_destroy(struct bench_verify *v);
/* Exclusive use of [lba, lba+blocks): false when an I/O in flight
 * overlaps (then pick another range). */
bool verify_lock(struct bench_verify *v, uint64_t lba, uint32_t blocks);
void verify_unlock(struct bench_verify *v, uint64_t lba, uint32_t blocks);
/* Stamps buf for a write of [lba, lba+blocks): bumps each block's
 * generation. Call with the range locked. */
void verify_stamp(struct bench_verify *v, void *buf, uint64_t lba,
		  uint32_t blocks);
/* A write completed GOOD: its blocks hold exactly the stamped generation.
 * Call with the range locked. */
void verify_written(struct bench_verify *v, uint64_t lba, uint32_t blocks);
/* A write failed or was never acknowledged (session lost): each of its
 * blocks may hold its old or its new generation, and nothing else, until
 * a read finds which (then that one is expected) or a write succeeds. */
void verify_forget(struct bench_verify *v, uint64_t lba, uint32_t blocks);
/* A stamped write that was never sent: back to the state before it. */
void verify_cancel(struct bench_verify *v, uint64_t lba, uint32_t blocks);
/* Checks a completed read; reports each bad block through report() and
 * returns the number of bad blocks. Call with the range locked. */
uint64_t verify_check(struct bench_verify *v, const void *buf, uint64_t lba,
		      uint32_t blocks,
		      void (*report)(void *ctx, uint64_t lba, const char *why),
		      void *ctx);
/* Pure helpers for one block (also used by tests). */
void verify_fill_block(void *blk, uint32_t block_size, uint64_t lba,
		       uint32_t gen, uint32_t run_id);
/* 0 ok; else a short reason. expect_gen 0: any generation (block not
 * written in this run: only self-consistency is checked, and a block
 * never stamped passes). */
const char *verify_check_block(const void *blk, uint32_t block_size,
			       uint64_t lba, uint32_t expect_gen,
			       uint32_t *found_gen);

/* ---- bench_output.c */
struct bench_meta {
	const char *version, *engine, *target, *started;
};
/* One table per workload (rw x sessions): rows block size, columns depth. */
void bench_print_table(FILE *f, const struct bench_point *pts, unsigned n,
		       int rw, uint32_t sessions, enum bench_metric m);
void bench_print_detail(FILE *f, const struct bench_point *pts, unsigned n);
void bench_print_errors(FILE *f, const struct bench_point *pts, unsigned n);
/* The text of one cell: "34", "34 ± 2", "34 (+5.1%)". */
void bench_format_cell(char *buf, size_t len, const struct bench_point *p,
		       enum bench_metric m);
int bench_write_json(const char *path, const struct bench_meta *meta,
		     const struct bench_point *pts, unsigned n);
/* Loads a --json file; fills base[] of matching points (rw, bs, depth,
 * sessions). Returns the number matched, or -1 (err filled). */
int bench_load_compare(const char *path, struct bench_point *pts, unsigned n,
		       char *err, size_t errlen);
int bench_write_csv(const char *path, const struct bench_point *pts,
		    unsigned n);
/* gnuplot drawing one SVG (960x600 on white) into PATH: its title, axis
 * labels, grid, key outside on the right, y from 0, and XSETUP's lines
 * ("" for none); NULL with ERR set when gnuplot cannot run. The caller
 * writes the data blocks and the plot line, then closes it with
 * bench_gnuplot_close, which says in ERR when gnuplot failed (both in
 * bench_logfile.c). */
FILE *bench_gnuplot_open(const char *path, const char *title,
			 const char *xlabel, const char *ylabel,
			 const char *xsetup, char *err, size_t errlen);
int bench_gnuplot_close(FILE *g, char *err, size_t errlen);
int bench_plot(const char *path, const struct bench_point *pts, unsigned n,
	       char *err, size_t errlen);
/* Whether gnuplot can be run (checked before a sweep). */
bool bench_have_gnuplot(void);

/* ---- ordercheck_run.c */
int ordercheck_main(int argc, char **argv);
#endif
