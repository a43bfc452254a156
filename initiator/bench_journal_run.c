/*
 * tcq-bench --rw journal: transactions of K log blocks and a commit block
 * (the layout is bench_journal.h's), `depth` of them at once on one
 * session, each in a slot no other transaction in flight uses. What
 * orders the commit after the log is --commit:
 *   flush    the log completes, SYNCHRONIZE CACHE completes, then the commit;
 *   fua      the log completes, then the commit with FUA (no flush: with a
 *            write cache the log itself is not durable);
 *   ordered  the log SIMPLE and at once the commit as an ORDERED task;
 *   none     everything SIMPLE at once.
 * It measures little; it leaves on the LUN what a crash checker
 * (tcq-crash check --cmd 'tcq-bench --check-journal {image}') judges.
 */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "initiator/bench_hist.h"
#include "initiator/bench_journal.h"
#include "initiator/bench_run_priv.h"
#include "tcq/bufpool.h"

#define DRAIN_NS (30ull * 1000000000ull)

enum jphase { JP_IDLE, JP_LOG, JP_SYNC, JP_COMMIT };

struct jtx {
	struct jrun *r;
	uint64_t txn, slot, t0;
	enum jphase phase;
	unsigned pending;
	bool failed;
	struct bench_io io[JOURNAL_MAX_K + 2];	/* logs, commit, sync */
	struct jtx *next_ready;
};

struct jrun {
	const struct bench_opts *o;
	const struct engine_ops *ops;
	struct engine *e;
	struct journal_geom g;
	uint64_t run, next_txn, next_slot, t_end, started;
	uint8_t *busy;			/* per slot */
	struct jtx *tx, *ready;
	uint32_t ntx, active;
	bool stop, dead;
	struct bench_hist hist;
	uint64_t txns, bytes;
	struct bench_errors err;
};

static void jio_done(struct bench_io *io)
{
	struct jtx *t = io->ctx;

	if (io->status)
		t->failed = true;
	if (io->status == 2 && !t->r->err.check) {
		t->r->err.sense_key = io->sense_key;
		t->r->err.asc = io->asc;
		t->r->err.ascq = io->ascq;
	}
	if (io->status == 2)
		t->r->err.check++;
	else if (io->status > 0)
		t->r->err.status++;
	else if (io->status < 0)
		t->r->err.transport++;
	if (--t->pending == 0) {
		t->next_ready = t->r->ready;
		t->r->ready = t;
	}
}

static void jsubmit(struct jtx *t, unsigned i, uint8_t attr, bool fua)
{
	struct jrun *r = t->r;
	struct bench_io *io = &t->io[i];
	int rc;

	io->attr = attr;
	io->fua = fua;
	io->done = jio_done;
	io->ctx = t;
	t->pending++;
	rc = r->ops->submit(r->e, io);
	if (rc < 0) {
		fprintf(stderr, "tcq-bench: journal: submit failed: %s\n",
			strerror(-rc));
		r->err.transport++;
		r->dead = true;
		t->failed = true;
		t->pending--;
	}
}

/* Whether another transaction may start (run time, --ios). */
static bool jmay_start(struct jrun *r)
{
	if (r->stop || r->dead || run_now_ns() >= r->t_end ||
	    (r->o->ios && r->started >= r->o->ios))
		r->stop = true;
	return !r->stop;
}

/* Starts a transaction in t: a free slot, its blocks, the first sends. */
static void jstart(struct jtx *t)
{
	struct jrun *r = t->r;
	const struct journal_geom *g = &r->g;
	uint32_t crc[JOURNAL_MAX_K], k = g->k, i;
	bool together = r->o->commit == COMMIT_ORDERED ||
			r->o->commit == COMMIT_NONE;

	t->phase = JP_IDLE;
	if (!jmay_start(r))
		return;
	while (r->busy[r->next_slot])
		r->next_slot = (r->next_slot + 1) % g->nslots;
	t->slot = r->next_slot;
	r->next_slot = (r->next_slot + 1) % g->nslots;
	r->busy[t->slot] = 1;
	t->txn = ++r->next_txn;
	r->started++;
	r->active++;
	t->failed = false;
	t->t0 = run_now_ns();
	for (i = 0; i < k; i++) {
		t->io[i].lba = journal_lba(g, t->slot, i);
		crc[i] = journal_encode_log(t->io[i].buf, g, r->run, t->txn,
					    (uint32_t)t->slot, i);
	}
	t->io[k].lba = journal_lba(g, t->slot, JOURNAL_COMMIT_INDEX);
	journal_encode_commit(t->io[k].buf, g, r->run, t->txn,
			      (uint32_t)t->slot, crc);
	t->phase = together ? JP_COMMIT : JP_LOG;
	t->pending = 1;		/* held until every send is made */
	for (i = 0; i < k; i++)
		jsubmit(t, i, BENCH_ATTR_SIMPLE, false);
	if (together)
		jsubmit(t, k, r->o->commit == COMMIT_ORDERED ?
			BENCH_ATTR_ORDERED : BENCH_ATTR_SIMPLE, false);
	t->pending--;
	if (!t->pending) {
		t->next_ready = r->ready;
		r->ready = t;
	}
}

/* A transaction's sends all completed: its next step. */
static void jadvance(struct jtx *t)
{
	struct jrun *r = t->r;
	uint32_t k = r->g.k;

	if (!t->failed && t->phase == JP_LOG) {
		t->pending = 1;
		if (r->o->commit == COMMIT_FLUSH) {
			t->phase = JP_SYNC;
			jsubmit(t, k + 1, BENCH_ATTR_SIMPLE, false);
		} else {
			t->phase = JP_COMMIT;
			jsubmit(t, k, BENCH_ATTR_SIMPLE, true);
		}
	} else if (!t->failed && t->phase == JP_SYNC) {
		t->pending = 1;
		t->phase = JP_COMMIT;
		jsubmit(t, k, BENCH_ATTR_SIMPLE, false);
	} else {
		if (!t->failed) {
			hist_add(&r->hist, run_now_ns() - t->t0);
			r->txns++;
			r->bytes += (uint64_t)(k + 1) * r->g.bs;
		}
		r->busy[t->slot] = 0;
		r->active--;
		jstart(t);
		return;
	}
	if (--t->pending == 0) {
		t->next_ready = r->ready;
		r->ready = t;
	}
}

static void jrun_ready(struct jrun *r)
{
	while (r->ready) {
		struct jtx *t = r->ready;

		r->ready = t->next_ready;
		jadvance(t);
	}
}

/* Runs the transactions until time or --ios is up and all have ended. */
static void jloop(struct jrun *r)
{
	uint64_t drain = 0;

	for (uint32_t i = 0; i < r->ntx; i++)
		jstart(&r->tx[i]);
	jrun_ready(r);
	while (r->active) {
		struct pollfd pfd = { .fd = r->ops->get_fd(r->e),
				      .events = r->ops->events(r->e) };
		uint64_t t;

		if (poll(&pfd, 1, 100) < 0 && errno != EINTR)
			break;
		if (r->ops->service(r->e, pfd.revents) < 0 && !r->dead) {
			fprintf(stderr, "tcq-bench: journal: session lost\n");
			r->dead = true;
		}
		jrun_ready(r);
		t = run_now_ns();
		if (r->stop && !drain)
			drain = t;
		if (drain && t - drain > DRAIN_NS) {
			fprintf(stderr, "tcq-bench: journal: I/O did not complete within 30 s\n");
			r->err.transport += r->active;
			break;
		}
	}
}

/* Opens the session and checks that it can order the commit. */
static int jopen(struct jrun *r, uint32_t bs, uint32_t depth, char *err,
		 size_t errlen)
{
	struct engine_opts eo = r->o->eo;
	enum bench_commit c = r->o->commit;
	char e2[256];

	eo.queue_depth = depth * (r->o->journal_blocks + 2);
	eo.max_io_bytes = bs;
	r->e = r->ops->open(r->o->target, &eo, e2, sizeof(e2));
	if (!r->e) {
		snprintf(err, errlen, "%s engine: %s: %s", r->ops->name,
			 r->o->target, e2);
		return -1;
	}
	if ((c == COMMIT_FLUSH || c == COMMIT_FUA) &&
	    (!r->ops->supports_barriers || !r->ops->supports_barriers(r->e))) {
		snprintf(err, errlen, "--rw journal --commit %s needs FUA and SYNCHRONIZE CACHE, which the %s engine cannot send (use --engine native)",
			 bench_commit_name(c), r->ops->name);
		return -1;
	}
	if (c == COMMIT_ORDERED && !r->ops->supports_attr(r->e)) {
		snprintf(err, errlen, "--rw journal --commit ordered needs ORDERED tasks, which the %s engine cannot send (use --engine native)",
			 r->ops->name);
		return -1;
	}
	return 0;
}

/* The geometry, the slots' flags and depth transactions with buffers. */
static int jsetup(struct jrun *r, uint32_t bs, uint32_t depth, char *err,
		  size_t errlen)
{
	uint32_t lbs = r->ops->block_size(r->e), k = r->o->journal_blocks;
	uint64_t first, count;
	struct timespec ts;

	if (run_region(r->o, lbs, r->ops->nblocks(r->e), bs, &first, &count,
		       err, errlen) ||
	    journal_geom_init(&r->g, first, count, lbs, bs, k, err, errlen))
		return -1;
	r->ntx = depth < r->g.nslots ? depth : (uint32_t)r->g.nslots;
	r->busy = calloc(r->g.nslots, 1);
	r->tx = calloc(r->ntx, sizeof(*r->tx));
	if (!r->busy || !r->tx) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	for (uint32_t i = 0; i < r->ntx; i++) {
		r->tx[i].r = r;
		for (uint32_t j = 0; j <= k; j++) {
			r->tx[i].io[j].blocks = bs / lbs;
			r->tx[i].io[j].write = true;
			r->tx[i].io[j].buf = bufpool_alloc(bs);
			if (!r->tx[i].io[j].buf) {
				snprintf(err, errlen, "out of memory for buffers");
				return -1;
			}
		}
		r->tx[i].io[k + 1].sync = true;
	}
	clock_gettime(CLOCK_REALTIME, &ts);
	r->run = (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000;
	hist_reset(&r->hist);
	return 0;
}

static void jfree(struct jrun *r, uint32_t bs)
{
	for (uint32_t i = 0; r->tx && i < r->ntx; i++)
		for (uint32_t j = 0; j <= r->g.k; j++)
			if (r->tx[i].io[j].buf)
				bufpool_free(r->tx[i].io[j].buf, bs);
	free(r->tx);
	free(r->busy);
	if (r->e)
		r->ops->close(r->e);
}

int bench_journal_point(const struct bench_opts *o, uint32_t bs,
			uint32_t depth, struct bench_sample *out, char *err,
			size_t errlen)
{
	struct jrun r;
	uint64_t t0, t1;
	double secs;
	int rc = -1;

	memset(out, 0, sizeof(*out));
	memset(&r, 0, sizeof(r));
	r.o = o;
	r.ops = o->engine;
	if (jopen(&r, bs, depth, err, errlen) ||
	    jsetup(&r, bs, depth, err, errlen))
		goto out;
	t0 = run_now_ns();
	r.t_end = t0 + (uint64_t)((o->ramp + o->runtime) * 1e9);
	jloop(&r);
	t1 = run_now_ns();
	secs = (double)(t1 - t0) / 1e9;
	out->ios = r.txns;
	out->runtime_s = secs;
	out->err = r.err;
	out->v[METRIC_IOPS] = (double)r.txns / secs;
	out->v[METRIC_MBPS] = (double)r.bytes / 1e6 / secs;
	out->v[METRIC_P50] = (double)hist_quantile(&r.hist, 0.50) / 1e3;
	out->v[METRIC_P99] = (double)hist_quantile(&r.hist, 0.99) / 1e3;
	out->v[METRIC_P999] = (double)hist_quantile(&r.hist, 0.999) / 1e3;
	out->lat_mean_us = hist_mean(&r.hist) / 1e3;
	printf("journal: %" PRIu64 " transactions committed (run %" PRIu64
	       ", --commit %s, %u log blocks of %u bytes, %" PRIu64
	       " slots from LBA %" PRIu64 ", %u at once)\n",
	       r.txns, r.run, bench_commit_name(o->commit), r.g.k, r.g.bs,
	       r.g.nslots, r.g.first_lba, r.ntx);
	rc = 0;
out:
	jfree(&r, bs);
	return rc;
}
