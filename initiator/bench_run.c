/*
 * One measurement point: open `sessions` engine instances (round-robin
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
 * both files use are in bench_run_priv.h).
 */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
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
static bool run_opened_once;	/* a point opened all its sessions */
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

	if (!io->t_done_ns)
		io->t_done_ns = run_now_ns();
	if (io->status == 2) {
		if (!w->err.check) {
			w->err.sense_key = io->sense_key;
			w->err.asc = io->asc;
			w->err.ascq = io->ascq;
		}
		w->err.check++;
	} else if (io->status > 0) {
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
	if (io->status == 0 && io->t_done_ns >= pt->t_ramp_end) {
		uint64_t lat = io->t_done_ns > io->t_submit_ns ?
			       io->t_done_ns - io->t_submit_ns : 0;

		hist_add(&w->hist, lat);
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
			chunk = rng_next(&w->rng) % pt->nchunks;
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
	if (run_verify && io->write)
		verify_stamp(run_verify, io->buf, io->lba, io->blocks);
	return true;
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

/* Whether a finished I/O of the list has no status (-errno). */
static bool run_any_transport_error(const struct run_io *r)
{
	for (; r; r = r->next_ready)
		if (r->io.done && r->io.status < 0)
			return true;
	return false;
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
			/* A UNIT ATTENTION reports an event (reset, mode or
			 * capacity change), not a failed I/O: like any
			 * initiator, send the same command again. */
			if (r->io.status == 2 && r->io.sense_key == 6 &&
			    r->ua_retries < 3 && !s->dead && !s->lost &&
			    !lost) {
				r->ua_retries++;
				w->err.unit_attention++;
				r->io.status = 0;
				r->io.t_done_ns = 0;
				rc = w->pt->ops->submit(s->e, &r->io);
				if (rc == 0) {
					s->inflight++;
					continue;
				}
				r->io.status = -EIO;
				if (run_can_reconnect(w->pt) &&
				    run_conn_error(rc)) {
					/* sent again after the new login */
					lost = true;
					r->next_ready = keep;
					keep = r;
					continue;
				}
			}
			r->ua_retries = 0;
			run_account(w, r);
			r->io.done = NULL;
		}
		if (s->dead || s->lost || lost || !run_may_submit(w->pt, t))
			continue;
		if (!run_choose(w, s, r)) {
			/* every candidate range is busy: retry shortly */
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

static void *run_worker_main(void *arg)
{
	struct run_worker *w = arg;
	struct run_point *pt = w->pt;
	struct pollfd *pfd = calloc(w->nsess, sizeof(*pfd));
	uint64_t t, drain_start = 0;
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
			if (s->dead || !s->inflight) {
				if (s->stalled && !s->dead)
					timeout = 1;
				continue;
			}
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
		n = poll(pfd, w->nsess, timeout);
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

static void run_close_sessions(const struct engine_ops *ops,
			       struct run_sess *ss, uint32_t n, size_t buflen)
{
	uint32_t i, k;

	for (i = 0; i < n; i++) {
		if (ss[i].e)
			ops->close(ss[i].e);
		if (!ss[i].ios)
			continue;
		for (k = 0; k < ss[i].depth; k++)
			if (ss[i].ios[k].io.buf)
				bufpool_free(ss[i].ios[k].io.buf, buflen);
		free(ss[i].ios);
	}
	free(ss);
}

static double cpu_seconds(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
	       (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
}

static void progress(const struct bench_progress *prog, int rw, uint32_t bs,
		     uint32_t depth, uint32_t sessions, double mbps,
		     double left)
{
	char b[16];

	bench_fmt_size(b, sizeof(b), bs);
	fprintf(stderr, "\r\033[K[%u/%u] %s bs=%s depth=%u sessions=%u: %.1f MB/s, %.0f s left",
		prog->point, prog->npoints, bench_rw_name(rw), b, depth,
		sessions, mbps, left + prog->secs_left);
	fflush(stderr);
}

/* Fixes the region in blocks; checks it against the device. */
static int run_region(const struct bench_opts *o, uint32_t block_size,
		      uint64_t nblocks, uint32_t bs, uint64_t *first,
		      uint64_t *count, char *err, size_t errlen)
{
	uint64_t size = nblocks * block_size, span;

	if (bs % block_size || o->offset % block_size) {
		snprintf(err, errlen,
			 "block size %u and offset must be multiples of the device block size %u",
			 bs, block_size);
		return -1;
	}
	if (o->offset >= size) {
		snprintf(err, errlen, "--offset beyond the end of the device (%" PRIu64 " bytes)",
			 size);
		return -1;
	}
	span = o->span ? o->span : size - o->offset;
	if (span > size - o->offset) {
		snprintf(err, errlen, "--offset + --span beyond the end of the device (%" PRIu64 " bytes)",
			 size);
		return -1;
	}
	if (span < bs) {
		snprintf(err, errlen, "region of %" PRIu64 " bytes smaller than block size %u",
			 span, bs);
		return -1;
	}
	*first = o->offset / block_size;
	*count = span / block_size;
	return 0;
}

int bench_run_point(const struct bench_opts *o, int rw, uint32_t bs,
		    uint32_t depth, uint32_t sessions, unsigned rep,
		    const struct bench_progress *prog,
		    struct bench_sample *out, char *err, size_t errlen)
{
	struct run_point pt;
	struct run_sess *ss;
	struct run_worker *ws;
	struct engine_opts eo = o->eo;
	struct bench_hist *hist = NULL;
	struct engine *e0 = NULL;	/* the first session open */
	uint64_t lost = 0;		/* sessions that did not log in */
	uint64_t first, count, t0, bytes = 0, last = 0, prev_bytes = 0;
	uint64_t prev_t;
	unsigned nthreads, i, k, started = 0;
	double cpu0, cpu1, secs;
	bool tty = !o->quiet && isatty(2), cpu_sampled = false;
	int rc = -1;

	memset(out, 0, sizeof(*out));
	memset(&pt, 0, sizeof(pt));
	run_tty = tty;
	pt.o = o;
	pt.ops = o->engine;
	pt.rw = rw;
	eo.queue_depth = depth;
	eo.max_io_bytes = bs;
	ss = calloc(sessions, sizeof(*ss));
	nthreads = o->threads < sessions ? o->threads : sessions;
	if (!nthreads)
		nthreads = 1;
	ws = calloc(nthreads, sizeof(*ws));
	if (!ss || !ws) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	for (i = 0; i < sessions; i++) {
		const char *url = o->targets[i % (o->ntargets ? o->ntargets : 1)];
		char e2[256];

		if (!o->ntargets)
			url = o->target;
		ss[i].e = pt.ops->open(url, &eo, e2, sizeof(e2));
		if (!ss[i].e && run_opened_once) {
			fprintf(stderr, "%stcq-bench: session %u (%s) left out: %s\n",
				tty ? "\r\033[K" : "", i, url, e2);
			ss[i].dead = true;
			lost++;
			continue;
		}
		if (!ss[i].e) {
			snprintf(err, errlen, "%s engine: %s: %s", pt.ops->name,
				 url, e2);
			goto out;
		}
		if (!e0) {
			e0 = ss[i].e;
		} else if (pt.ops->block_size(ss[i].e) !=
			   pt.ops->block_size(e0) ||
			   pt.ops->nblocks(ss[i].e) != pt.ops->nblocks(e0)) {
			snprintf(err, errlen, "%s: capacity or block size differs "
				 "from the first session's (not the same LUN?)",
				 url);
			goto out;
		}
		if ((o->ordered_pct || o->hoq_pct) &&
		    !pt.ops->supports_attr(ss[i].e)) {
			snprintf(err, errlen,
				 "the %s engine cannot send ORDERED or HEAD OF QUEUE tasks (use --engine native)",
				 pt.ops->name);
			goto out;
		}
	}
	if (!e0) {
		snprintf(err, errlen, "no session could log in");
		goto out;
	}
	run_opened_once = true;
	pt.block_size = pt.ops->block_size(e0);
	if (run_region(o, pt.block_size, pt.ops->nblocks(e0), bs, &first,
		       &count, err, errlen))
		goto out;
	pt.first_lba = first;
	pt.blocks = bs / pt.block_size;
	pt.nchunks = count / pt.blocks;
	if (o->verify) {
		if (!run_verify) {
			run_verify = verify_create(first, count, pt.block_size,
						   (uint32_t)(rng_next(&(uint64_t){ o->seed ^ (uint64_t)time(NULL) }) | 1),
						   o->verify_journal, err, errlen);
			if (!run_verify)
				goto out;
			run_verify_first = first;
			run_verify_nblocks = count;
		} else if (first != run_verify_first ||
			   count != run_verify_nblocks) {
			snprintf(err, errlen, "--verify: region changed");
			goto out;
		}
	}
	for (i = 0; i < sessions; i++) {
		struct run_sess *s = &ss[i];

		s->depth = depth;
		s->ios = calloc(depth, sizeof(*s->ios));
		if (!s->ios) {
			snprintf(err, errlen, "out of memory");
			goto out;
		}
		/* sessions start at different places of a sequential stream */
		s->cursor = pt.nchunks * i / sessions;
		for (k = 0; k < depth; k++) {
			struct run_io *r = &s->ios[k];

			r->s = s;
			r->io.ctx = r;
			r->io.buf = bufpool_alloc(bs);
			if (!r->io.buf) {
				snprintf(err, errlen, "out of memory for buffers");
				goto out;
			}
			/* non-zero payload so nothing can cheat on zeroes */
			memset(r->io.buf, 0xa5 ^ (int)k, bs);
			r->next_ready = s->ready;
			s->ready = r;
		}
	}
	for (i = 0; i < nthreads; i++) {
		ws[i].pt = &pt;
		ws[i].sess = calloc(sessions / nthreads + 1, sizeof(*ws[i].sess));
		if (!ws[i].sess) {
			snprintf(err, errlen, "out of memory");
			goto out;
		}
		hist_reset(&ws[i].hist);
		ws[i].rng = o->seed ^ (0x100000001b3ull * (i + 1)) ^
			    ((uint64_t)rw << 56) ^ ((uint64_t)bs << 20) ^
			    ((uint64_t)depth << 8) ^ sessions ^
			    ((uint64_t)rep << 48);
	}
	for (i = 0; i < sessions; i++) {
		struct run_worker *w = &ws[i % nthreads];

		w->sess[w->nsess++] = &ss[i];
	}
	t0 = run_now_ns();
	pt.t_ramp_end = t0 + (uint64_t)(o->ramp * 1e9);
	pt.t_end = pt.t_ramp_end + (uint64_t)(o->runtime * 1e9);
	atomic_store(&pt.budget, (int64_t)o->ios);
	cpu0 = cpu_seconds();
	if (o->ramp <= 0)
		cpu_sampled = true;
	for (i = 0; i < nthreads; i++) {
		if (pthread_create(&ws[i].th, NULL, run_worker_main, &ws[i])) {
			snprintf(err, errlen, "pthread_create failed");
			atomic_store(&pt.stop, true);
			break;
		}
		started++;
	}
	prev_t = t0;
	/* The main thread only watches: CPU sample at ramp end, progress. */
	for (;;) {
		uint64_t t, done = 0;
		bool alive = false;

		usleep(200000);
		t = run_now_ns();
		if (!cpu_sampled && t >= pt.t_ramp_end) {
			cpu0 = cpu_seconds();
			cpu_sampled = true;
		}
		for (i = 0; i < started; i++)
			done += atomic_load_explicit(&ws[i].bytes_done,
						     memory_order_relaxed);
		for (i = 0; i < started && !alive; i++)
			alive = !atomic_load(&ws[i].finished);
		if (!alive)
			break;
		if (tty)
			progress(prog, rw, bs, depth, sessions,
				 (double)(done - prev_bytes) / 1e6 /
				 ((double)(t - prev_t) / 1e9),
				 t < pt.t_end ? (double)(pt.t_end - t) / 1e9 : 0);
		prev_bytes = done;
		prev_t = t;
	}
	for (i = 0; i < started; i++)
		pthread_join(ws[i].th, NULL);
	cpu1 = cpu_seconds();
	if (tty)
		fprintf(stderr, "\r\033[K");
	if (started < nthreads)
		goto out;
	hist = malloc(sizeof(*hist));
	if (!hist) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	hist_reset(hist);
	for (i = 0; i < nthreads; i++) {
		struct bench_errors *e = &out->err, *we = &ws[i].err;

		hist_merge(hist, &ws[i].hist);
		bytes += ws[i].bytes;
		out->ios += ws[i].ios;
		if (ws[i].last_done_ns > last)
			last = ws[i].last_done_ns;
		if (we->check && !e->check) {
			e->sense_key = we->sense_key;
			e->asc = we->asc;
			e->ascq = we->ascq;
		}
		if (we->have_lba && !e->have_lba) {
			e->have_lba = true;
			e->first_lba = we->first_lba;
		}
		e->check += we->check;
		e->unit_attention += we->unit_attention;
		e->status += we->status;
		e->transport += we->transport;
		e->reconnects += we->reconnects;
		e->outage_s += we->outage_s;
		e->verify += we->verify;
	}
	out->err.transport += lost;
	secs = last > pt.t_ramp_end ? (double)(last - pt.t_ramp_end) / 1e9 : 0;
	out->runtime_s = secs;
	if (secs > 0) {
		out->v[METRIC_IOPS] = (double)out->ios / secs;
		out->v[METRIC_MBPS] = (double)bytes / 1e6 / secs;
		out->v[METRIC_CPU] = (cpu1 - cpu0) / secs * 100;
	}
	out->v[METRIC_P50] = (double)hist_quantile(hist, 0.50) / 1e3;
	out->v[METRIC_P99] = (double)hist_quantile(hist, 0.99) / 1e3;
	out->v[METRIC_P999] = (double)hist_quantile(hist, 0.999) / 1e3;
	out->lat_mean_us = hist_mean(hist) / 1e3;
	rc = 0;
out:
	free(hist);
	if (ws)
		for (i = 0; i < nthreads; i++)
			free(ws[i].sess);
	free(ws);
	if (ss)
		run_close_sessions(pt.ops, ss, sessions, bs);
	return rc;
}
