/*
 * --replay FILE: sends a trace (bench_replay.c reads it) on one session,
 * in the trace's order: I/O k+1 is submitted after I/O k, so the target
 * receives them in that order (CmdSN order). Each goes at its time from
 * the start (--replay-no-stall: at once), and at most --depth of them
 * are under way (the last --depth value given); one that could not go at
 * its time (the queue full) goes as soon as it can and counts as late.
 *
 * A flush point keeps its place: every I/O before it completes, then a
 * SYNCHRONIZE CACHE (the whole LUN) is sent and completes, and only then
 * does the next I/O go. fio's sync and datasync, blkparse's flush (F) and
 * preflush (a leading F: the flush, then the request) are flush points; a
 * FUA write (RWBS ...F) is sent with FUA. Both need the native engine.
 * The whole trace is checked against the LUN (block alignment, its end)
 * before anything is sent.
 */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "initiator/bench.h"
#include "initiator/bench_hist.h"
#include "initiator/bench_replay.h"
#include "initiator/bench_run_priv.h"
#include "tcq/bufpool.h"

#define LATE_NS 1000000ull	/* issued over 1 ms after its time: late */

struct rslot {
	struct bench_io io;
	struct rrun *r;
	bool busy;
};

struct rrun {
	const struct bench_opts *o;
	const struct engine_ops *ops;
	struct engine *e;
	struct replay_trace tr;
	struct rslot *slots, sync;
	uint32_t depth, inflight;
	bool barrier, after_sync;	/* a SYNCHRONIZE CACHE out; done */
	uint64_t rng;
	struct bench_hist hist;
	uint64_t done, bytes, late, syncs;
	struct bench_errors err;
};

static void rp_done(struct bench_io *io)
{
	struct rslot *s = io->ctx;
	struct rrun *r = s->r;

	s->busy = false;
	r->inflight--;
	if (s == &r->sync) {
		r->barrier = false;
		r->after_sync = true;
	}
	if (io->status == 2) {
		if (!r->err.check) {
			r->err.sense_key = io->sense_key;
			r->err.asc = io->asc;
			r->err.ascq = io->ascq;
		}
		r->err.check++;
	} else if (io->status > 0) {
		r->err.status++;
	} else if (io->status < 0) {
		r->err.transport++;
	} else {
		hist_add(&r->hist, io->t_done_ns > io->t_submit_ns ?
			 io->t_done_ns - io->t_submit_ns : 0);
		r->done++;
		r->bytes += io->sync ? 0 : (uint64_t)io->blocks *
				       r->ops->block_size(r->e);
	}
}

/* The task attribute of --ordered and --hoq's shares. */
static uint8_t rp_attr(struct rrun *r)
{
	uint64_t pct;

	if (!r->o->ordered_pct && !r->o->hoq_pct)
		return BENCH_ATTR_SIMPLE;
	r->rng = r->rng * 6364136223846793005ull + 1442695040888963407ull;
	pct = (r->rng >> 33) % 100;
	return pct < r->o->ordered_pct ? BENCH_ATTR_ORDERED :
	       pct < r->o->ordered_pct + r->o->hoq_pct ? BENCH_ATTR_HOQ :
	       BENCH_ATTR_SIMPLE;
}

static int rp_submit(struct rrun *r, struct rslot *s, uint64_t due,
		     uint64_t t)
{
	int rc;

	s->io.done = rp_done;
	s->io.t_done_ns = 0;
	s->io.status = 0;
	rc = r->ops->submit(r->e, &s->io);
	if (rc < 0) {
		fprintf(stderr, "tcq-bench: replay: submit failed: %s\n",
			strerror(-rc));
		r->err.transport++;
		return -1;
	}
	s->busy = true;
	r->inflight++;
	if (t > due + LATE_NS)
		r->late++;
	return 0;
}

/* Sends what may go at t; returns the ns until the next I/O's time (0:
 * waiting for completions), or -1 when the session failed. */
static int64_t rp_pump(struct rrun *r, size_t *next, uint64_t t0, uint64_t t)
{
	uint32_t bsz = r->ops->block_size(r->e);

	while (*next < r->tr.n && !r->barrier && !bench_interrupted) {
		const struct replay_io *io = &r->tr.ios[*next];
		uint64_t due = r->o->acc.replay.no_stall ? t : t0 + io->t_ns;
		struct rslot *s = NULL;

		if (t < due)
			return (int64_t)(due - t);
		if ((io->op == RP_FLUSH || io->preflush) && !r->after_sync) {
			if (r->inflight)
				return 0;	/* the flush point waits */
			memset(&r->sync.io, 0, sizeof(r->sync.io));
			r->sync.io.sync = true;
			r->sync.io.attr = BENCH_ATTR_SIMPLE;
			r->sync.io.ctx = &r->sync;
			r->barrier = true;
			r->syncs++;
			return rp_submit(r, &r->sync, due, t) ? -1 : 0;
		}
		if (io->op == RP_FLUSH) {
			r->after_sync = false;
			(*next)++;
			continue;
		}
		for (uint32_t k = 0; k < r->depth && !s; k++)
			if (!r->slots[k].busy)
				s = &r->slots[k];
		if (!s)
			return 0;
		s->io.lba = (io->off + r->o->offset) / bsz;
		s->io.blocks = io->len / bsz;
		s->io.write = io->op == RP_WRITE;
		s->io.fua = io->fua;
		s->io.sync = false;
		s->io.attr = rp_attr(r);
		r->after_sync = false;
		if (rp_submit(r, s, due, t))
			return -1;
		(*next)++;
	}
	return 0;
}

/* Runs the loaded trace; 0, or -1 when the session failed. */
static int rp_loop(struct rrun *r)
{
	uint64_t t0 = run_now_ns(), t;
	size_t next = 0;
	int64_t wait;
	int rc = 0;

	/* after a failure, only what is under way is waited for */
	while ((next < r->tr.n && !bench_interrupted && !rc) || r->inflight) {
		struct pollfd pfd;
		int timeout = 100;

		t = run_now_ns();
		wait = rc ? 0 : rp_pump(r, &next, t0, t);
		if (wait < 0) {
			rc = -1;
			if (!r->inflight)
				break;
		}
		if (wait > 0)
			timeout = wait < 1000000 ? 0 :
				  wait > 100000000 ? 100 : (int)(wait / 1000000);
		if (!r->inflight && timeout) {
			poll(NULL, 0, timeout);
			continue;
		}
		if (!r->inflight)
			continue;
		pfd.fd = r->ops->get_fd(r->e);
		pfd.events = r->ops->events(r->e);
		pfd.revents = 0;
		if (poll(&pfd, 1, timeout) < 0 && errno != EINTR)
			return -1;
		if (pfd.revents && r->ops->service(r->e, pfd.revents) < 0) {
			/* the engine completed what was under way, as errors */
			fprintf(stderr, "tcq-bench: replay: session lost\n");
			return -1;
		}
	}
	return rc;
}

/* Opens the session and checks the trace against its LUN: 0, or -1
 * with err (nothing sent). */
static int rp_open(struct rrun *r, char *err, size_t errlen)
{
	const struct bench_opts *o = r->o;
	struct engine_opts eo = o->eo;
	uint32_t bsz;
	char e2[256];

	eo.queue_depth = r->depth + 1;	/* and the SYNCHRONIZE CACHE */
	if (!r->tr.max_len)	/* flushes only: buffers of a block */
		r->tr.max_len = 4096;
	eo.max_io_bytes = r->tr.max_len;
	r->e = r->ops->open(o->target, &eo, e2, sizeof(e2));
	if (!r->e) {
		snprintf(err, errlen, "%s engine: %s: %s", r->ops->name,
			 o->target, e2);
		return -1;
	}
	bsz = r->ops->block_size(r->e);
	if (replay_check(&r->tr, o->acc.replay.path, o->offset, bsz,
			 r->ops->nblocks(r->e), err, errlen))
		return -1;
	if ((r->tr.flushes || r->tr.fua) &&
	    (!r->ops->supports_barriers || !r->ops->supports_barriers(r->e))) {
		snprintf(err, errlen, "the trace has %" PRIu64 " flush points and %" PRIu64 " FUA writes: the %s engine cannot send SYNCHRONIZE CACHE or FUA (use --engine native)",
			 r->tr.flushes, r->tr.fua, r->ops->name);
		return -1;
	}
	if ((o->ordered_pct || o->hoq_pct) && !r->ops->supports_attr(r->e)) {
		snprintf(err, errlen, "the %s engine cannot send ORDERED or HEAD OF QUEUE tasks (use --engine native)",
			 r->ops->name);
		return -1;
	}
	r->slots = calloc(r->depth, sizeof(*r->slots));
	if (!r->slots) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	for (uint32_t k = 0; k < r->depth; k++) {
		r->slots[k].r = r;
		r->slots[k].io.ctx = &r->slots[k];
		r->slots[k].io.buf = bufpool_alloc(r->tr.max_len);
		if (!r->slots[k].io.buf) {
			snprintf(err, errlen, "out of memory for buffers");
			return -1;
		}
		memset(r->slots[k].io.buf, 0xa5 ^ (int)k, r->tr.max_len);
	}
	r->sync.r = r;
	return 0;
}

static void rp_report(const struct rrun *r, double secs)
{
	const struct replay_trace *tr = &r->tr;
	const struct bench_errors *e = &r->err;

	printf("replay: %s (%s): %zu requests: %" PRIu64 " reads, %" PRIu64
	       " writes (%" PRIu64 " FUA), %" PRIu64 " flush points",
	       r->o->acc.replay.path, tr->format, tr->n, tr->reads,
	       tr->writes, tr->fua, tr->flushes);
	if (tr->discards)
		printf("; %" PRIu64 " trims/discards not sent", tr->discards);
	printf("\nreplay: depth %u%s: %" PRIu64 " commands done (%" PRIu64
	       " SYNCHRONIZE CACHE) in %.3f s (the trace spans %.3f s), "
	       "%.0f IOPS, %.2f MB/s, latency p50 %.0f us, p99 %.0f us; %"
	       PRIu64 " sent over 1 ms late\n", r->depth,
	       r->o->acc.replay.no_stall ? ", no stall" : "", r->done,
	       r->syncs, secs, tr->n ? (double)tr->ios[tr->n - 1].t_ns / 1e9 :
	       0, secs > 0 ? (double)r->done / secs : 0,
	       secs > 0 ? (double)r->bytes / 1e6 / secs : 0,
	       (double)hist_quantile(&r->hist, 0.5) / 1e3,
	       (double)hist_quantile(&r->hist, 0.99) / 1e3, r->late);
	if (bench_errors_total(e))
		printf("errors: %" PRIu64 " CHECK CONDITION (first: sense key %#x, ASC/ASCQ %02x/%02x), %" PRIu64 " other status, %" PRIu64 " transport\n",
		       e->check, e->sense_key, e->asc, e->ascq, e->status,
		       e->transport);
}

int bench_replay_main(const struct bench_opts *o)
{
	struct rrun *r = calloc(1, sizeof(*r));
	char err[512];
	uint64_t t0;
	int rc = 2;

	if (!r)
		return 2;
	r->o = o;
	r->ops = o->engine;
	r->depth = o->depth[o->ndepth - 1];
	r->rng = o->seed;
	hist_reset(&r->hist);
	if (replay_load(o->acc.replay.path, &r->tr, err, sizeof(err)) ||
	    rp_open(r, err, sizeof(err))) {
		fprintf(stderr, "tcq-bench: replay: %s\n", err);
		goto out;
	}
	t0 = run_now_ns();
	rc = rp_loop(r);
	rp_report(r, (double)(run_now_ns() - t0) / 1e9);
	rc = rc || bench_errors_total(&r->err) ? 1 : 0;
out:
	if (r->e)
		r->ops->close(r->e);
	if (r->slots)
		for (uint32_t k = 0; k < r->depth; k++)
			if (r->slots[k].io.buf)
				bufpool_free(r->slots[k].io.buf, r->tr.max_len);
	free(r->slots);
	replay_free(&r->tr);
	free(r);
	return rc;
}
