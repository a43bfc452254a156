/*
 * One measurement point (bench_point.c opens, starts and merges it; this
 * file is its workers): open `sessions` engine instances (round-robin
 * over the URLs), spread them
 * round-robin over min(threads, sessions) worker threads, keep `depth`
 * I/Os in flight on each session until the run time (or --ios) is used
 * up, then drain. Each worker owns its sessions, buffers and histogram:
 * the only shared state on the hot path is the --ios budget (one atomic)
 * and, with --verify, the per-block lock bytes.
 *
 * Losing a target (a gateway of a multipath setup) ends only its
 * sessions: their I/Os in flight complete with errors, and the other
 * sessions run to the end of the point. A later point opens what it can:
 * sessions that cannot log in any more are counted as errors and left out
 * (the first point needs all of them, so a typo in a URL stops the run).
 *
 * With --reconnect SECS a lost session is not ended: its I/Os without a
 * status keep their slots, verify locks and stamps in a retry list, the
 * worker tries a new login (the engine's reconnect(): same ISID) every
 * 0.1 s for up to SECS, then sends them again unchanged; the outage is
 * counted from the loss to the new login (bench_reconnect.c; the structs
 * the files share are in bench_run_priv.h).
 */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "initiator/bench_run_priv.h"
#include "tcq/bufpool.h"

#define DRAIN_TIMEOUT_NS (30ull * 1000000000ull)
#define VERIFY_REPORT_MAX 20

/* Stamps of --verify persist over the whole sweep: writes of one point
 * are checked by the reads of later points. */
static struct bench_verify *run_verify;
static uint64_t run_verify_first, run_verify_nblocks;
static _Atomic unsigned run_verify_reported;
bool run_tty;			/* a progress line may be on stderr */

uint64_t run_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t rng_next(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);	/* splitmix64 */

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

uint64_t run_rng(uint64_t *s)
{
	return rng_next(s);
}

int run_verify_open(const struct bench_opts *o, uint64_t first,
		    uint64_t count, uint32_t block_size, char *err,
		    size_t errlen)
{
	if (!run_verify) {
		run_verify = verify_create(first, count, block_size,
					   (uint32_t)(rng_next(&(uint64_t){ o->seed ^ (uint64_t)time(NULL) }) | 1),
					   o->verify_journal, err, errlen);
		if (!run_verify)
			return -1;
		run_verify_first = first;
		run_verify_nblocks = count;
	} else if (first != run_verify_first ||
		   count != run_verify_nblocks) {
		snprintf(err, errlen, "--verify: region changed");
		return -1;
	}
	return 0;
}

void bench_run_cleanup(void)
{
	verify_destroy(run_verify);
	run_verify = NULL;
}

void run_io_done(struct bench_io *io)
{
	struct run_io *r = io->ctx;

	r->s->inflight--;
	r->next_ready = r->s->ready;
	r->s->ready = r;
}

static void verify_report(void *ctx, uint64_t lba, const char *why)
{
	struct run_worker *w = ctx;

	if (!w->err.have_lba) {
		w->err.have_lba = true;
		w->err.first_lba = lba;
	}
	if (atomic_fetch_add(&run_verify_reported, 1) < VERIFY_REPORT_MAX)
		fprintf(stderr, "%sverify: LBA %" PRIu64 ": %s\n",
			run_tty ? "\r\033[K" : "", lba, why);
}

/* Accounts a finished I/O: latency, bytes, errors, verification. */
static void run_account(struct run_worker *w, struct run_io *r)
{
	struct bench_io *io = &r->io;
	struct run_point *pt = w->pt;
	bool miscompare = mix_miscompare(io);	/* not an error */

	if (!io->t_done_ns)
		io->t_done_ns = run_now_ns();
	if (io->status == 2 && !miscompare) {
		if (!w->err.check) {
			w->err.sense_key = io->sense_key;
			w->err.asc = io->asc;
			w->err.ascq = io->ascq;
		}
		w->err.check++;
	} else if (io->status > 0 && !miscompare) {
		w->err.status++;
	} else if (io->status < 0) {
		w->err.transport++;
	}
	if (run_verify) {
		if (io->status == 0 && !io->write)
			w->err.verify += verify_check(run_verify, io->buf,
						      io->lba, io->blocks,
						      verify_report, w);
		else if (io->status == 0 && io->write)
			verify_written(run_verify, io->lba, io->blocks);
		else if (io->status != 0 && io->write)
			verify_forget(run_verify, io->lba, io->blocks);
		verify_unlock(run_verify, io->lba, io->blocks);
	}
	if ((io->status == 0 || miscompare) &&
	    io->t_done_ns >= pt->t_ramp_end) {
		uint64_t lat = io->t_done_ns > io->t_submit_ns ?
			       io->t_done_ns - io->t_submit_ns : 0;

		hist_add(&w->hist, lat);
		if (w->tlog)
			tlog_add(w->tlog, io->write, io->t_done_ns, lat,
				 (uint64_t)io->blocks * pt->block_size);
		mix_account(w, io, lat);
		w->ios++;
		w->bytes += (uint64_t)io->blocks * pt->block_size;
		if (io->t_done_ns > w->last_done_ns)
			w->last_done_ns = io->t_done_ns;
	}
	atomic_fetch_add_explicit(&w->bytes_done,
				  (uint64_t)io->blocks * pt->block_size,
				  memory_order_relaxed);
}

/* Picks the next operation for r; false when verify found no free range. */
static bool run_choose(struct run_worker *w, struct run_sess *s,
		       struct run_io *r)
{
	struct run_point *pt = w->pt;
	const struct bench_opts *o = pt->o;
	struct bench_io *io = &r->io;
	uint64_t chunk = 0, pct;
	unsigned tries;

	if (w->mix && mix_sync_due(w, s, r))
		return true;
	switch (pt->rw) {
	case BENCH_READ:
	case BENCH_RANDREAD:
		io->write = false;
		break;
	case BENCH_WRITE:
	case BENCH_RANDWRITE:
		io->write = true;
		break;
	default:
		io->write = rng_next(&w->rng) % 100 >= o->mix;
		break;
	}
	for (tries = 0; tries < 64; tries++) {
		if (pt->rw == BENCH_READ || pt->rw == BENCH_WRITE) {
			chunk = s->cursor;
			s->cursor = (s->cursor + 1) % pt->nchunks;
		} else {
			chunk = dist_next(&pt->dist, &w->rng);
		}
		io->lba = pt->first_lba + chunk * pt->blocks;
		if (!run_verify ||
		    verify_lock(run_verify, io->lba, pt->blocks))
			break;
	}
	if (tries == 64)
		return false;
	io->blocks = pt->blocks;
	io->attr = BENCH_ATTR_SIMPLE;
	if (o->ordered_pct || o->hoq_pct) {
		pct = rng_next(&w->rng) % 100;
		if (pct < o->ordered_pct)
			io->attr = BENCH_ATTR_ORDERED;
		else if (pct < o->ordered_pct + o->hoq_pct)
			io->attr = BENCH_ATTR_HOQ;
	}
	if (w->mix)
		mix_choose(w, s, r);
	if (run_verify && io->write)
		verify_stamp(run_verify, io->buf, io->lba, io->blocks);
	return true;
}

/* --thinktime, --depth-low: whether s holds its next I/O at t. Not once the point is over (its
 * time, --ios used up): no burst follows, so no pause either. */
static bool run_thinking(struct run_point *pt, struct run_sess *s,
			 uint64_t t)
{
	if ((!pt->o->acc.think.think_ns && !pt->o->acc.think.low_set) ||
	    t >= pt->t_end ||
	    atomic_load_explicit(&pt->stop, memory_order_relaxed) ||
	    (pt->o->ios && t >= pt->t_ramp_end &&
	     atomic_load(&pt->budget) <= 0))
		return false;
	return think_low_hold(&pt->o->acc.think, &s->think, s->inflight,
			      s->depth) ||
	       think_hold(&pt->o->acc.think, &s->think, s->inflight, t);
}

/* Whether new I/O may still be started at time t. */
static bool run_may_submit(struct run_point *pt, uint64_t t)
{
	if (atomic_load_explicit(&pt->stop, memory_order_relaxed))
		return false;
	if (t >= pt->t_end) {
		atomic_store(&pt->stop, true);
		return false;
	}
	if (pt->o->ios && t >= pt->t_ramp_end &&
	    atomic_fetch_sub(&pt->budget, 1) <= 0) {
		atomic_store(&pt->stop, true);
		return false;
	}
	return true;
}

/* What the free slot r of s does at t: 0 carry a new I/O (chosen), 1
 * wait (a pause between bursts, --rate's next turn, the initiator CPU
 * model's time, or every candidate range busy), -1 nothing (the point
 * is over). */
static int run_next(struct run_worker *w, struct run_sess *s,
		    struct run_io *r, uint64_t t)
{
	/* the CPU model's wait comes before --ios counts the command */
	if (run_thinking(w->pt, s, t) || !run_cpu_gate(w->pt, s, r, t))
		return 1;
	if (!run_may_submit(w->pt, t))
		return -1;
	if (!rate_gate(&s->rate_next, w->pt->rate_ns, t))
		return 1;
	r->cpu_due = 0;		/* its CPU time went to this command */
	return run_choose(w, s, r) ? 0 : 1;
}

/* Whether a finished I/O of the list has no status (-errno). */
static bool run_any_transport_error(const struct run_io *r)
{
	for (; r; r = r->next_ready)
		if (r->io.done && r->io.status < 0)
			return true;
	return false;
}

/* A UNIT ATTENTION reports an event (reset, mode or capacity change), not
 * a failed I/O: like any initiator, send the same command again (three
 * times at most). 1: r is in flight again; 2: its connection failed, r
 * waits for the new login (*lost set); 0: r is accounted as it ended. */
static int run_retry_ua(struct run_worker *w, struct run_sess *s,
			struct run_io *r, bool *lost)
{
	int rc;

	if (r->io.status != 2 || r->io.sense_key != 6 || r->ua_retries >= 3 ||
	    s->dead || s->lost || *lost)
		return 0;
	r->ua_retries++;
	w->err.unit_attention++;
	r->io.status = 0;
	r->io.t_done_ns = 0;
	rc = w->pt->ops->submit(s->e, &r->io);
	if (rc == 0) {
		s->inflight++;
		return 1;
	}
	r->io.status = -EIO;
	if (run_can_reconnect(w->pt) && run_conn_error(rc)) {
		*lost = true;
		return 2;
	}
	return 0;
}

/* Accounts every finished I/O of s and starts new ones in their place.
 * With --reconnect, a connection found failed here (an I/O without
 * status, a submit refused) makes s lost instead: its I/Os without
 * status wait for the new login rather than count as errors. */
static void run_refill(struct run_worker *w, struct run_sess *s, uint64_t t)
{
	struct run_io *r, *next, *keep = NULL;
	bool lost = false;
	int rc;

	/* The connection may have failed outside service() (in a send of
	 * submit or events()): its I/Os are back without status. */
	if (run_can_reconnect(w->pt) && !s->lost && !s->dead &&
	    run_any_transport_error(s->ready) &&
	    w->pt->ops->service(s->e, 0) < 0)
		run_lost(w, s, t);
	r = s->ready;
	s->ready = NULL;
	s->stalled = false;
	s->cpu_wake = 0;
	for (; r; r = next) {
		next = r->next_ready;
		if ((s->lost || lost) && !r->io.done) {
			/* a free slot: kept for after the reconnect */
			r->next_ready = keep;
			keep = r;
			continue;
		}
		if (lost && r->io.done && r->io.status == 2 &&
		    r->io.sense_key == 6) {
			/* a UNIT ATTENTION to retry: after the new login */
			r->next_ready = keep;
			keep = r;
			continue;
		}
		if (r->io.done) {	/* a finished I/O, not a fresh slot */
			if (r->caw_read && !s->dead && !s->lost && !lost &&
			    mix_caw_next(w, s, r))
				continue;	/* its CAW is on the way */
			rc = run_retry_ua(w, s, r, &lost);
			if (rc == 1)
				continue;
			if (rc == 2) {	/* sent again after the new login */
				r->next_ready = keep;
				keep = r;
				continue;
			}
			r->ua_retries = 0;
			think_completed(&s->think);
			run_account(w, r);
			r->io.done = NULL;
		}
		if (s->dead || s->lost || lost)
			continue;
		rc = run_next(w, s, r, t);
		if (rc < 0)
			continue;
		if (rc > 0) {
			/* a pause between bursts, or every candidate range
			 * busy: retry shortly */
			r->next_ready = keep;
			keep = r;
			s->stalled = true;
			continue;
		}
		r->io.done = run_io_done;
		r->io.t_done_ns = 0;
		rc = w->pt->ops->submit(s->e, &r->io);
		if (rc < 0) {
			r->io.done = NULL;
			if (run_verify) {
				/* the stamp's generation never reached the disk */
				if (r->io.write)
					verify_cancel(run_verify, r->io.lba,
						      r->io.blocks);
				verify_unlock(run_verify, r->io.lba,
					      r->io.blocks);
			}
			if (rc == -EAGAIN) {
				r->next_ready = keep;
				keep = r;
				s->stalled = true;
				continue;
			}
			if (run_can_reconnect(w->pt) && run_conn_error(rc)) {
				/* never sent: a free slot again */
				lost = true;
				r->next_ready = keep;
				keep = r;
				continue;
			}
			fprintf(stderr, "%stcq-bench: submit failed: %s\n",
				run_tty ? "\r\033[K" : "", strerror(-rc));
			w->err.transport++;
			s->dead = true;
			continue;
		}
		s->inflight++;
		think_issued(&s->think);
	}
	/* I/Os completed meanwhile (a connection that failed in a submit
	 * completes everything in flight) are in s->ready already: add. */
	while (keep) {
		next = keep->next_ready;
		keep->next_ready = s->ready;
		s->ready = keep;
		keep = next;
	}
	if (lost && !s->lost)
		run_lost(w, s, t);
}

void *run_worker_main(void *arg)
{
	struct run_worker *w = arg;
	struct run_point *pt = w->pt;
	struct pollfd *pfd = calloc(w->nsess, sizeof(*pfd));
	uint64_t t, drain_start = 0, wake;
	unsigned i, busy;
	int timeout, n, rc;

	if (!pfd) {
		w->err.transport++;
		atomic_store(&w->finished, true);
		return NULL;
	}
	t = run_now_ns();
	for (i = 0; i < w->nsess; i++)
		run_refill(w, w->sess[i], t);
	for (;;) {
		busy = 0;
		timeout = 100;
		wake = 0;
		for (i = 0; i < w->nsess; i++) {
			struct run_sess *s = w->sess[i];

			pfd[i].fd = -1;
			pfd[i].events = 0;
			pfd[i].revents = 0;
			if (s->lost) {
				if (timeout > 20)
					timeout = 20;
				continue;
			}
			/* a slot waiting (a busy verify range, --rate's next
			 * turn, a think pause) is tried again in 1 ms, at the
			 * turn, or when the pause ends */
			if (s->stalled && !s->dead) {
				int ms = think_poll_ms(&pt->o->acc.think,
						       &s->think, t);

				if (ms < timeout)
					timeout = ms;
			}
			if (s->stalled && pt->rate_ns && s->rate_next > t &&
			    (!wake || s->rate_next < wake))
				wake = s->rate_next;
			if (s->stalled && s->cpu_wake > t &&
			    (!wake || s->cpu_wake < wake))
				wake = s->cpu_wake;
			if (s->dead || !s->inflight)
				continue;
			busy++;
			pfd[i].fd = pt->ops->get_fd(s->e);
			pfd[i].events = pt->ops->events(s->e);
		}
		t = run_now_ns();
		/* Nothing in flight and nothing waiting to be retried: the
		 * point is over for this worker (time, --ios, or failure). */
		if (!busy && timeout == 100)
			break;
		if (t < pt->t_end && (pt->t_end - t) / 1000000 < (uint64_t)timeout)
			timeout = (int)((pt->t_end - t) / 1000000) + 1;
		n = rate_poll(pfd, w->nsess, timeout, wake, t);
		if (n < 0 && errno != EINTR) {
			w->err.transport++;
			break;
		}
		t = run_now_ns();
		for (i = 0; i < w->nsess; i++) {
			struct run_sess *s = w->sess[i];

			rc = 0;
			if (pfd[i].fd >= 0 && pfd[i].revents) {
				rc = pt->ops->service(s->e, pfd[i].revents);
				run_self_relogged(w, s);
			}
			if (rc < 0 && !s->lost) {
				if (!s->dead && run_can_reconnect(pt)) {
					run_lost(w, s, t);
				} else {
					if (!s->dead) {
						fprintf(stderr, "%stcq-bench: session lost\n",
							run_tty ? "\r\033[K" : "");
						w->err.transport++;
					}
					s->dead = true;
				}
			}
			if (s->lost) {
				run_try_reconnect(w, s, t);
				t = run_now_ns();
			}
			if (s->ready || s->stalled)
				run_refill(w, s, t);
		}
		if (t >= pt->t_end || atomic_load(&pt->stop)) {
			if (!drain_start)
				drain_start = t;
			else if (t - drain_start > DRAIN_TIMEOUT_NS +
				 (uint64_t)(pt->o->eo.reconnect * 1e9)) {
				for (i = 0; i < w->nsess; i++)
					if (w->sess[i]->inflight ||
					    w->sess[i]->retry) {
						w->err.transport +=
							w->sess[i]->inflight;
						w->sess[i]->dead = true;
					}
				fprintf(stderr, "%stcq-bench: I/O did not complete within 30 s\n",
					run_tty ? "\r\033[K" : "");
				break;
			}
		}
	}
	free(pfd);
	atomic_store(&w->finished, true);
	return NULL;
}
