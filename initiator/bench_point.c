/*
 * One measurement point as the main thread runs it (bench_run.c has the
 * workers): the sessions opened and checked against the first one, the
 * region, the I/O slots, the workers started and watched (the CPU sample
 * at the end of the ramp, the progress line), then their counts merged
 * into one sample.
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>
#include "initiator/bench_run_priv.h"
#include "tcq/bufpool.h"

volatile sig_atomic_t bench_interrupted;

static bool run_opened_once;	/* a point opened all its sessions */

/* One point as the main thread sees it; the workers get pt. */
struct point {
	struct run_point pt;
	struct run_sess *ss;
	struct run_worker *ws;
	uint32_t bs, depth, sessions;
	unsigned rep;
	size_t buflen;		/* of a slot: bs, or more (mix_buf_len) */
	unsigned nthreads, started;
	uint64_t lost;		/* sessions that did not log in */
	double cpu0;		/* CPU seconds when the ramp ended */
};

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
int run_region(const struct bench_opts *o, uint32_t block_size,
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


/* Opens the point's sessions, round-robin over the URLs, each on the
 * first one's LUN. Returns the first session open, NULL on an error. */
static struct engine *point_open(struct point *p, char *err, size_t errlen)
{
	const struct bench_opts *o = p->pt.o;
	const struct engine_ops *ops = p->pt.ops;
	struct engine_opts eo = o->eo;
	struct engine *e0 = NULL;
	unsigned i;

	eo.queue_depth = p->depth;
	eo.max_io_bytes = (uint32_t)p->buflen;
	eo.want_designator = o->cmds.xcopy_pct > 0;
	for (i = 0; i < p->sessions; i++) {
		struct run_sess *s = &p->ss[i];
		const char *url = o->targets[i % (o->ntargets ? o->ntargets : 1)];
		char e2[256];

		if (!o->ntargets)
			url = o->target;
		s->e = ops->open(url, &eo, e2, sizeof(e2));
		if (!s->e && run_opened_once) {
			fprintf(stderr, "%stcq-bench: session %u (%s) left out: %s\n",
				run_tty ? "\r\033[K" : "", i, url, e2);
			s->dead = true;
			p->lost++;
			continue;
		}
		if (!s->e) {
			snprintf(err, errlen, "%s engine: %s: %s", ops->name,
				 url, e2);
			return NULL;
		}
		if (!e0) {
			e0 = s->e;
		} else if (ops->block_size(s->e) != ops->block_size(e0) ||
			   ops->nblocks(s->e) != ops->nblocks(e0)) {
			snprintf(err, errlen, "%s: capacity or block size differs "
				 "from the first session's (not the same LUN?)",
				 url);
			return NULL;
		}
		if ((o->ordered_pct || o->hoq_pct) && !ops->supports_attr(s->e)) {
			snprintf(err, errlen,
				 "the %s engine cannot send ORDERED or HEAD OF QUEUE tasks (use --engine native)",
				 ops->name);
			return NULL;
		}
		if (mix_check_engine(o, ops, s->e, err, errlen))
			return NULL;
	}
	if (!e0)
		snprintf(err, errlen, "no session could log in");
	else
		run_opened_once = true;
	return e0;
}

/* Fixes the region on e0's LUN in blocks, and --verify's (one region
 * over the whole sweep). */
static int point_region(struct point *p, struct engine *e0, char *err,
			size_t errlen)
{
	struct run_point *pt = &p->pt;
	uint64_t first, count;

	pt->block_size = pt->ops->block_size(e0);
	if (run_region(pt->o, pt->block_size, pt->ops->nblocks(e0), p->bs,
		       &first, &count, err, errlen))
		return -1;
	pt->first_lba = first;
	pt->blocks = p->bs / pt->block_size;
	pt->nchunks = count / pt->blocks;
	if (dist_gen_init(&pt->dist, &pt->o->acc.dist, pt->nchunks, p->bs,
			  err, errlen))
		return -1;
	if (pt->o->verify)
		return run_verify_open(pt->o, first, count, pt->block_size,
				       err, errlen);
	return 0;
}

/* Gives each session its depth of I/O slots with buffers, all ready. */
static int point_slots(struct point *p, char *err, size_t errlen)
{
	unsigned i, k;

	for (i = 0; i < p->sessions; i++) {
		struct run_sess *s = &p->ss[i];

		s->depth = p->depth;
		s->ios = calloc(p->depth, sizeof(*s->ios));
		if (!s->ios) {
			snprintf(err, errlen, "out of memory");
			return -1;
		}
		/* sessions start at different places of a sequential stream */
		s->cursor = p->pt.nchunks * i / p->sessions;
		for (k = 0; k < p->depth; k++) {
			struct run_io *r = &s->ios[k];

			r->s = s;
			r->io.ctx = r;
			r->io.buf = bufpool_alloc(p->buflen);
			if (!r->io.buf) {
				snprintf(err, errlen, "out of memory for buffers");
				return -1;
			}
			/* non-zero payload so nothing can cheat on zeroes */
			memset(r->io.buf, 0xa5 ^ (int)k, p->buflen);
			r->next_ready = s->ready;
			s->ready = r;
		}
	}
	return 0;
}

/* Deals the sessions round-robin to the workers, each with a random
 * stream seeded from --seed and the point. */
static int point_workers(struct point *p, unsigned rep, char *err,
			 size_t errlen)
{
	const struct bench_opts *o = p->pt.o;
	unsigned i;

	for (i = 0; i < p->nthreads; i++) {
		struct run_worker *w = &p->ws[i];

		w->pt = &p->pt;
		w->sess = calloc(p->sessions / p->nthreads + 1, sizeof(*w->sess));
		if (!w->sess) {
			snprintf(err, errlen, "out of memory");
			return -1;
		}
		hist_reset(&w->hist);
		if (mix_worker_init(w)) {
			snprintf(err, errlen, "out of memory");
			return -1;
		}
		w->rng = o->seed ^ (0x100000001b3ull * (i + 1)) ^
			 ((uint64_t)p->pt.rw << 56) ^ ((uint64_t)p->bs << 20) ^
			 ((uint64_t)p->depth << 8) ^ p->sessions ^
			 ((uint64_t)rep << 48);
	}
	for (i = 0; i < p->sessions; i++) {
		struct run_worker *w = &p->ws[i % p->nthreads];

		w->sess[w->nsess++] = &p->ss[i];
	}
	return 0;
}

/* Sets the point's clock and starts the workers (p->started of them);
 * returns the time it started. */
static uint64_t point_start(struct point *p, char *err, size_t errlen)
{
	struct run_point *pt = &p->pt;
	uint64_t t0 = run_now_ns();
	unsigned i;

	pt->t_ramp_end = t0 + (uint64_t)(pt->o->ramp * 1e9);
	pt->t_end = pt->t_ramp_end + (uint64_t)(pt->o->runtime * 1e9);
	atomic_store(&pt->budget, (int64_t)pt->o->ios);
	pt->rate_ns = rate_interval_ns(pt->o, p->bs, p->sessions);
	vcpu_init(&pt->cpu, &pt->o->cpu, p->bs);
	for (i = 0; i < p->nthreads; i++)
		p->ws[i].tlog = tlog_create(pt->o, pt->t_ramp_end);
	p->cpu0 = cpu_seconds();
	for (i = 0; i < p->nthreads; i++) {
		if (pthread_create(&p->ws[i].th, NULL, run_worker_main,
				   &p->ws[i])) {
			snprintf(err, errlen, "pthread_create failed");
			atomic_store(&pt->stop, true);
			break;
		}
		p->started++;
	}
	return t0;
}

/* The main thread only watches: CPU sample at ramp end, progress; it
 * joins the workers once all have finished. */
static void point_watch(struct point *p, uint64_t t0,
			const struct bench_progress *prog)
{
	struct run_point *pt = &p->pt;
	uint64_t prev_t = t0, prev_bytes = 0;
	bool cpu_sampled = pt->o->ramp <= 0;
	unsigned i;

	for (;;) {
		uint64_t t, done = 0;
		bool alive = false;

		usleep(200000);
		if (bench_interrupted)
			atomic_store(&pt->stop, true);
		t = run_now_ns();
		if (!cpu_sampled && t >= pt->t_ramp_end) {
			p->cpu0 = cpu_seconds();
			cpu_sampled = true;
		}
		for (i = 0; i < p->started; i++)
			done += atomic_load_explicit(&p->ws[i].bytes_done,
						     memory_order_relaxed);
		for (i = 0; i < p->started && !alive; i++)
			alive = !atomic_load(&p->ws[i].finished);
		if (!alive)
			break;
		if (run_tty)
			progress(prog, pt->rw, p->bs, p->depth, p->sessions,
				 (double)(done - prev_bytes) / 1e6 /
				 ((double)(t - prev_t) / 1e9),
				 t < pt->t_end ? (double)(pt->t_end - t) / 1e9 : 0);
		prev_bytes = done;
		prev_t = t;
	}
	for (i = 0; i < p->started; i++)
		pthread_join(p->ws[i].th, NULL);
}

/* --thinktime: the pauses the sessions took, a property of the I/O
 * sequence (one after every burst, on an empty queue). */
static void point_think_report(const struct point *p)
{
	uint64_t gaps = 0, ios = 0;
	char b[16];
	unsigned i;

	for (i = 0; i < p->sessions; i++) {
		gaps += p->ss[i].think.gaps;
		ios += p->ss[i].think.total;
	}
	bench_fmt_size(b, sizeof(b), p->bs);
	printf("thinktime: %s bs=%s depth=%u sessions=%u: %" PRIu64
	       " pauses, %" PRIu64 " I/Os issued\n", bench_rw_name(p->pt.rw),
	       b, p->depth, p->sessions, gaps, ios);
}

/* Adds a worker's errors to the sample's; the first CHECK CONDITION's
 * sense and the first failed LBA are kept. */
static void errors_add(struct bench_errors *e, const struct bench_errors *we)
{
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

/* Merges the workers' counts into out: rates over the time from the end
 * of the ramp to the last completion (cpu: CPU seconds used meanwhile),
 * latency quantiles. */
static int point_sample(const struct point *p, double cpu,
			struct bench_sample *out, char *err, size_t errlen)
{
	struct bench_hist *hist = malloc(sizeof(*hist));
	struct bench_tlog **logs = calloc(p->nthreads, sizeof(*logs));
	struct bench_run_id id = {
		.rw = p->pt.rw, .bs = p->bs, .depth = p->depth,
		.sessions = p->sessions, .rep = p->rep,
		.rate_iops = rate_point_iops(p->pt.o, p->bs, p->sessions),
		.ramp_s = p->pt.o->ramp,
	};
	uint64_t bytes = 0, last = 0;
	double secs;
	unsigned i;
	int rc;

	if (!hist || !logs) {
		free(hist);
		free(logs);
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	hist_reset(hist);
	for (i = 0; i < p->nthreads; i++) {
		const struct run_worker *w = &p->ws[i];

		hist_merge(hist, &w->hist);
		logs[i] = w->tlog;
		bytes += w->bytes;
		out->ios += w->ios;
		if (w->last_done_ns > last)
			last = w->last_done_ns;
		errors_add(&out->err, &w->err);
	}
	out->err.transport += p->lost;
	if (mix_sample(p->ws, p->nthreads, out)) {
		free(hist);
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	secs = last > p->pt.t_ramp_end ?
	       (double)(last - p->pt.t_ramp_end) / 1e9 : 0;
	out->runtime_s = secs;
	if (secs > 0) {
		out->v[METRIC_IOPS] = (double)out->ios / secs;
		out->v[METRIC_MBPS] = (double)bytes / 1e6 / secs;
		out->v[METRIC_CPU] = cpu / secs * 100;
	}
	out->v[METRIC_P50] = (double)hist_quantile(hist, 0.50) / 1e3;
	out->v[METRIC_P99] = (double)hist_quantile(hist, 0.99) / 1e3;
	out->v[METRIC_P999] = (double)hist_quantile(hist, 0.999) / 1e3;
	out->lat_mean_us = hist_mean(hist) / 1e3;
	out->rate_iops = id.rate_iops;
	rc = bench_log_run(p->pt.o, &id, logs, p->nthreads, last, hist, out,
			   err, errlen);
	free(logs);
	free(hist);
	return rc;
}

int bench_run_point(const struct bench_opts *o, int rw, uint32_t bs,
		    uint32_t depth, uint32_t sessions, unsigned rep,
		    const struct bench_progress *prog,
		    struct bench_sample *out, char *err, size_t errlen)
{
	struct point p;
	struct engine *e0;
	uint64_t t0;
	double cpu1;
	unsigned i;
	int rc = -1;

	if (rw == BENCH_JOURNAL)
		return bench_journal_point(o, bs, depth, out, err, errlen);
	memset(out, 0, sizeof(*out));
	memset(&p, 0, sizeof(p));
	run_tty = !o->quiet && isatty(2);
	p.pt.o = o;
	p.pt.ops = o->engine;
	p.pt.rw = rw;
	p.bs = bs;
	p.depth = depth;
	p.sessions = sessions;
	p.rep = rep;
	p.buflen = mix_buf_len(o, bs);
	p.ss = calloc(sessions, sizeof(*p.ss));
	p.nthreads = o->threads < sessions ? o->threads : sessions;
	if (!p.nthreads)
		p.nthreads = 1;
	p.ws = calloc(p.nthreads, sizeof(*p.ws));
	if (!p.ss || !p.ws) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	e0 = point_open(&p, err, errlen);
	if (!e0 || point_region(&p, e0, err, errlen) ||
	    point_slots(&p, err, errlen) || point_workers(&p, rep, err, errlen))
		goto out;
	t0 = point_start(&p, err, errlen);
	point_watch(&p, t0, prog);
	vcpu_destroy(&p.pt.cpu);	/* the workers are gone */
	cpu1 = cpu_seconds();
	if (run_tty)
		fprintf(stderr, "\r\033[K");
	if (p.started == p.nthreads)
		rc = point_sample(&p, cpu1 - p.cpu0, out, err, errlen);
	if (rc == 0 && o->acc.think.think_ns)
		point_think_report(&p);
out:
	if (p.ws)
		for (i = 0; i < p.nthreads; i++) {
			free(p.ws[i].sess);
			tlog_free(p.ws[i].tlog);
			mix_worker_free(&p.ws[i]);
		}
	free(p.ws);
	if (p.ss)
		run_close_sessions(p.pt.ops, p.ss, sessions, p.buflen);
	return rc;
}
