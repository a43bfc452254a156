/*
 * What bench_point.c (one measurement point), bench_run.c (its workers)
 * and bench_reconnect.c (--reconnect: a lost session logs in again)
 * share: the point, its workers, sessions and I/O slots, and the helpers
 * they call.
 */
#ifndef TCQ_INITIATOR_BENCH_RUN_PRIV_H
#define TCQ_INITIATOR_BENCH_RUN_PRIV_H
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include "initiator/bench.h"
#include "initiator/bench_cpu.h"
#include "initiator/bench_hist.h"
#include "initiator/bench_log.h"
#include "initiator/bench_rate.h"

struct run_sess;

struct run_io {
	struct bench_io io;
	struct run_sess *s;
	struct run_io *next_ready;
	uint8_t ua_retries;	/* UNIT ATTENTION resubmissions of this I/O */
	bool caw_read;		/* the READ before a COMPARE AND WRITE */
	uint64_t cpu_due;	/* --initiator-cpu: its CPU time ends; 0 none */
};

struct run_sess {
	struct engine *e;
	struct run_io *ios;
	uint32_t depth, inflight;
	struct run_io *ready;		/* completed, waiting to be reused */
	uint64_t cursor;		/* sequential: next chunk */
	bool dead, stalled;
	/* --reconnect: the connection was lost at lost_ns; the I/Os that
	 * had no status wait in retry until a new login sends them again */
	bool lost;
	uint64_t lost_ns, next_try_ns;
	struct run_io *retry;
	char lost_why[256];
	uint64_t rate_next;		/* --rate: its next I/O's time */
	uint64_t cpu_wake;		/* --initiator-cpu: a slot's CPU time ends */
	struct think_state think;	/* --thinktime */
	/* --sync-every: commands that write since the last SYNCHRONIZE
	 * CACHE; --sync-interval: when the next one is due */
	uint32_t mix_writes;
	uint64_t mix_sync_ns;
};

struct run_point;
struct mix_worker;

struct run_worker {
	pthread_t th;
	struct run_point *pt;
	struct run_sess **sess;
	unsigned nsess;
	uint64_t rng;
	struct bench_hist hist;
	_Atomic uint64_t bytes_done;	/* for the progress line */
	uint64_t ios, bytes, last_done_ns;
	struct bench_errors err;
	struct bench_tlog *tlog;	/* --log-interval, --plot: or NULL */
	_Atomic bool finished;
	struct mix_worker *mix;		/* each kind's histogram, or NULL */
};

struct run_point {
	const struct bench_opts *o;
	const struct engine_ops *ops;
	int rw;
	uint32_t block_size, blocks;	/* per I/O */
	uint64_t first_lba, nchunks;
	struct dist_gen dist;		/* --dist over the nchunks */
	uint64_t t_ramp_end, t_end;
	uint64_t rate_ns;		/* --rate: a session's interval */
	struct bench_vcpu cpu;		/* --initiator-cpu */
	_Atomic int64_t budget;		/* --ios: submissions left */
	_Atomic bool stop;
};

/* ---- bench_run.c ---- */
extern bool run_tty;		/* a progress line may be on stderr */
uint64_t run_now_ns(void);	/* CLOCK_MONOTONIC */
/* The engine's completion callback: r back on its session's ready list. */
void run_io_done(struct bench_io *io);
/* A worker thread (arg: its struct run_worker) until its sessions end. */
void *run_worker_main(void *arg);
/* --verify's stamps over the region of first, count blocks: made at the
 * first point, kept over the sweep (a later point must not move it). */
int run_verify_open(const struct bench_opts *o, uint64_t first,
		    uint64_t count, uint32_t block_size, char *err,
		    size_t errlen);

/* splitmix64: the worker's random stream */
uint64_t run_rng(uint64_t *s);

/* ---- bench_mix_run.c: the command mixes (--fua, --sync-every, ...) ---- */
/* The engine can send what the options ask: 0, or -1 with err filled
 * naming the option. */
int mix_check_engine(const struct bench_opts *o, const struct engine_ops *ops,
		     struct engine *e, char *err, size_t errlen);
/* Bytes of a slot's buffer for I/Os of bs bytes (a CAW needs 2 x). */
size_t mix_buf_len(const struct bench_opts *o, uint32_t bs);
uint32_t mix_caw_blocks(const struct run_point *pt);
/* The worker's kind histograms when a mix is on: 0, or -1 (memory). */
int mix_worker_init(struct run_worker *w);
void mix_worker_free(struct run_worker *w);
/* A SYNCHRONIZE CACHE is due on s: r is made one (true). */
bool mix_sync_due(struct run_worker *w, struct run_sess *s,
		  struct run_io *r);
/* Turns the read or write chosen for r (its range set) into the kind
 * the shares draw. */
void mix_choose(struct run_worker *w, struct run_sess *s, struct run_io *r);
/* r finished the READ of a COMPARE AND WRITE: the CAW is sent in the
 * same slot (true), or r is accounted as it is (false). */
bool mix_caw_next(struct run_worker *w, struct run_sess *s, struct run_io *r);
/* The kind of a finished I/O (enum bench_kind). */
int mix_kind(const struct bench_io *io);
/* A COMPARE AND WRITE that found other data: counted apart. */
bool mix_miscompare(const struct bench_io *io);
/* A completed command of lat_ns into its kind's histogram. */
void mix_account(struct run_worker *w, const struct bench_io *io,
		 uint64_t lat_ns);
/* The workers' kinds into out->kinds: 0, or -1 (memory). */
int mix_sample(const struct run_worker *ws, unsigned n,
	       struct bench_sample *out);

/* ---- bench_point.c ---- */
/* The region of --offset and --span in device blocks, checked against a
 * device of nblocks and I/Os of bs bytes; -1 with err filled. */
int run_region(const struct bench_opts *o, uint32_t block_size,
	       uint64_t nblocks, uint32_t bs, uint64_t *first,
	       uint64_t *count, char *err, size_t errlen);

/* ---- bench_cpu.c ---- */
/* --initiator-cpu: whether slot r of s may send its command at t (its
 * CPU time, queued for at its first call, has passed: r->cpu_due, which
 * the caller clears once the command goes); if not, s->cpu_wake says
 * when to try again. Always true without the model or once the point is
 * over. */
bool run_cpu_gate(struct run_point *pt, struct run_sess *s, struct run_io *r,
		  uint64_t t);

/* ---- bench_reconnect.c ---- */
/* --reconnect applies: the option is on and the engine can log in again. */
bool run_can_reconnect(const struct run_point *pt);
/* A submit error that means a failed connection (not a bad request). */
bool run_conn_error(int rc);
/* s's connection failed at t: keep what had no status for a new login. */
void run_lost(struct run_worker *w, struct run_sess *s, uint64_t t);
/* Hands the retry list to the accounting (as the errors they are). */
void run_retry_fail(struct run_sess *s);
/* One login attempt of a lost session at t; sends the retry list on
 * success, ends the session once --reconnect's time is up. */
void run_try_reconnect(struct run_worker *w, struct run_sess *s,
		       uint64_t t);
/* After service(): the new logins of an engine that reconnects by
 * itself (engine_ops.relogged), counted like ours. */
void run_self_relogged(struct run_worker *w, struct run_sess *s);
#endif
