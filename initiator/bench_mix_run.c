/*
 * What each I/O slot of a point sends under the command mixes (options
 * in bench_mix.c): after bench_run.c chose a read or a write and its
 * range, a share of the commands becomes UNMAP, WRITE SAME (with or
 * without UNMAP), COMPARE AND WRITE or EXTENDED COPY of that range, a
 * share of the writes gets FUA, and a session sends SYNCHRONIZE CACHE
 * after every N commands that write or every T ms. Each kind's latency
 * goes to a histogram of its own per worker, merged per point.
 *
 * COMPARE AND WRITE runs in two steps in one slot, like an ATS lock of a
 * cluster file system: READ of the blocks, then the CAW comparing with
 * what was read and writing its complement. Only the CAW is timed and
 * counted (the read took the slot's --ios unit). A write of another slot
 * landing between the two makes the CAW miscompare: counted apart, not as
 * an error.
 */
#include <stdlib.h>
#include <string.h>
#include "initiator/bench_run_priv.h"

#define CAW_MAX_BLOCKS 255	/* NUMBER OF LOGICAL BLOCKS is one byte */
#define SK_MISCOMPARE 0x0e

struct mix_worker {
	struct bench_hist hist[BK_COUNT];
	uint64_t miscompares;
};

uint32_t mix_caw_blocks(const struct run_point *pt)
{
	return pt->blocks < CAW_MAX_BLOCKS ? pt->blocks : CAW_MAX_BLOCKS;
}

size_t mix_buf_len(const struct bench_opts *o, uint32_t bs)
{
	/* a CAW sends its compare and its write blocks: at most 2 x bs */
	return o->cmds.caw_pct ? 2 * (size_t)bs : bs;
}

/* The engine's name and what it lacks for an option asked, or NULL. */
static const char *mix_missing(const struct bench_opts *o,
			       const struct engine_ops *ops, struct engine *e)
{
	static const struct {
		size_t off;
		int cmd;
		const char *what;
	} need[] = {
		{ offsetof(struct bench_mix, unmap_pct), BENCH_CMD_UNMAP, "--unmap (UNMAP)" },
		{ offsetof(struct bench_mix, ws_pct), BENCH_CMD_WS, "--write-same (WRITE SAME(16))" },
		{ offsetof(struct bench_mix, ws_unmap_pct), BENCH_CMD_WS_UNMAP, "--write-same-unmap (WRITE SAME(16) with UNMAP)" },
		{ offsetof(struct bench_mix, caw_pct), BENCH_CMD_CAW, "--caw (COMPARE AND WRITE)" },
		{ offsetof(struct bench_mix, xcopy_pct), BENCH_CMD_XCOPY, "--xcopy (EXTENDED COPY)" },
	};
	const struct bench_mix *m = &o->cmds;

	if (m->fua_pct &&
	    (!ops->supports_barriers || !ops->supports_barriers(e)))
		return "--fua (FUA writes)";
	if ((m->sync_every || m->sync_ms > 0) &&
	    (!ops->supports_cmd || !ops->supports_cmd(e, BENCH_CMD_SYNC16)))
		return m->sync_every ? "--sync-every (SYNCHRONIZE CACHE(16))" :
		       "--sync-interval (SYNCHRONIZE CACHE(16))";
	for (size_t i = 0; i < sizeof(need) / sizeof(need[0]); i++) {
		unsigned pct = *(const unsigned *)((const char *)m + need[i].off);

		if (pct && (!ops->supports_cmd || !ops->supports_cmd(e, need[i].cmd)))
			return need[i].what;
	}
	return NULL;
}

int mix_check_engine(const struct bench_opts *o, const struct engine_ops *ops,
		     struct engine *e, char *err, size_t errlen)
{
	const char *what = mix_missing(o, ops, e);

	if (!what)
		return 0;
	if (ops == &engine_native)	/* only --xcopy can be missing */
		snprintf(err, errlen, "%s: the LUN shows no NAA designator of 16 bytes (VPD page 83h) for EXTENDED COPY to name it by",
			 what);
	else
		snprintf(err, errlen, "the %s engine cannot send %s (use --engine native)",
			 ops->name, what);
	return -1;
}

int mix_worker_init(struct run_worker *w)
{
	if (!bench_mix_on(&w->pt->o->cmds))
		return 0;
	w->mix = malloc(sizeof(*w->mix));
	if (!w->mix)
		return -1;
	for (int k = 0; k < BK_COUNT; k++)
		hist_reset(&w->mix->hist[k]);
	w->mix->miscompares = 0;
	return 0;
}

void mix_worker_free(struct run_worker *w)
{
	free(w->mix);
	w->mix = NULL;
}

/* A SYNCHRONIZE CACHE(16) of the whole LUN in r's place. */
static void mix_sync(struct bench_io *io)
{
	io->cmd = BENCH_CMD_SYNC16;
	io->write = io->fua = io->sync = false;
	io->lba = 0;
	io->blocks = 0;
	io->attr = BENCH_ATTR_SIMPLE;
}

bool mix_sync_due(struct run_worker *w, struct run_sess *s,
		  struct run_io *r)
{
	const struct bench_mix *m = &w->pt->o->cmds;

	r->caw_read = false;
	if (m->sync_every && s->mix_writes >= m->sync_every) {
		s->mix_writes = 0;
		mix_sync(&r->io);
		return true;
	}
	if (m->sync_ms > 0) {
		uint64_t t = run_now_ns(), every = (uint64_t)(m->sync_ms * 1e6);

		if (!s->mix_sync_ns) {
			s->mix_sync_ns = t + every;
		} else if (t >= s->mix_sync_ns) {
			s->mix_sync_ns += every;
			if (s->mix_sync_ns <= t)	/* no burst of catch-ups */
				s->mix_sync_ns = t + every;
			mix_sync(&r->io);
			return true;
		}
	}
	return false;
}

void mix_choose(struct run_worker *w, struct run_sess *s, struct run_io *r)
{
	const struct run_point *pt = w->pt;
	const struct bench_mix *m = &pt->o->cmds;
	struct bench_io *io = &r->io;
	unsigned u;

	io->cmd = BENCH_CMD_RW;
	io->fua = false;
	if (m->unmap_pct + m->ws_pct + m->ws_unmap_pct + m->caw_pct +
	    m->xcopy_pct) {
		u = (unsigned)(run_rng(&w->rng) % 100);
		if (u < m->unmap_pct)
			io->cmd = BENCH_CMD_UNMAP;
		else if ((u -= m->unmap_pct) < m->ws_pct)
			io->cmd = BENCH_CMD_WS;
		else if ((u -= m->ws_pct) < m->ws_unmap_pct)
			io->cmd = BENCH_CMD_WS_UNMAP;
		else if ((u -= m->ws_unmap_pct) < m->caw_pct)
			io->cmd = BENCH_CMD_CAW;
		else if ((u -= m->caw_pct) < m->xcopy_pct)
			io->cmd = BENCH_CMD_XCOPY;
	}
	if (io->cmd == BENCH_CMD_CAW) {
		/* first the READ of what the CAW will compare with */
		io->cmd = BENCH_CMD_RW;
		io->write = false;
		io->blocks = mix_caw_blocks(pt);
		r->caw_read = true;
	} else if (io->cmd == BENCH_CMD_XCOPY) {
		uint64_t chunk = (io->lba - pt->first_lba) / pt->blocks;

		if (pt->nchunks > 1)
			chunk = (chunk + 1 + run_rng(&w->rng) % (pt->nchunks - 1)) %
				pt->nchunks;
		io->lba2 = pt->first_lba + chunk * pt->blocks;
	}
	if (io->cmd != BENCH_CMD_RW)
		io->write = true;
	else if (io->write && m->fua_pct)
		io->fua = run_rng(&w->rng) % 100 < m->fua_pct;
	if (io->write || r->caw_read)
		s->mix_writes++;
}

bool mix_caw_next(struct run_worker *w, struct run_sess *s, struct run_io *r)
{
	struct bench_io *io = &r->io;
	size_t n = (size_t)io->blocks * w->pt->block_size;
	uint8_t *b = io->buf;
	int rc;

	if (!r->caw_read || io->status != 0)
		return false;
	r->caw_read = false;
	/* compare with what was read, write its complement */
	for (size_t i = 0; i < n; i++)
		b[n + i] = (uint8_t)~b[i];
	io->cmd = BENCH_CMD_CAW;
	io->write = true;
	io->done = run_io_done;
	io->t_done_ns = 0;
	rc = w->pt->ops->submit(s->e, io);
	if (rc < 0) {
		io->status = rc;
		return false;
	}
	s->inflight++;
	return true;
}

int mix_kind(const struct bench_io *io)
{
	switch (io->cmd) {
	case BENCH_CMD_SYNC16: return BK_SYNC;
	case BENCH_CMD_UNMAP: return BK_UNMAP;
	case BENCH_CMD_WS: return BK_WS;
	case BENCH_CMD_WS_UNMAP: return BK_WS_UNMAP;
	case BENCH_CMD_CAW: return BK_CAW;
	case BENCH_CMD_XCOPY: return BK_XCOPY;
	}
	if (io->sync)
		return BK_SYNC;
	return !io->write ? BK_READ : io->fua ? BK_FUA : BK_WRITE;
}

bool mix_miscompare(const struct bench_io *io)
{
	return io->cmd == BENCH_CMD_CAW && io->status == 2 &&
	       io->sense_key == SK_MISCOMPARE;
}

void mix_account(struct run_worker *w, const struct bench_io *io,
		 uint64_t lat_ns)
{
	if (!w->mix)
		return;
	hist_add(&w->mix->hist[mix_kind(io)], lat_ns);
	if (mix_miscompare(io))
		w->mix->miscompares++;
}

int mix_sample(const struct run_worker *ws, unsigned n,
	       struct bench_sample *out)
{
	struct bench_hist *h;
	uint64_t misc = 0;

	if (!n || !ws[0].mix)
		return 0;
	h = malloc(sizeof(*h));
	if (!h)
		return -1;
	for (int k = 0; k < BK_COUNT; k++) {
		struct bench_kind_stat *s = &out->kinds[k];

		hist_reset(h);
		for (unsigned i = 0; i < n; i++)
			hist_merge(h, &ws[i].mix->hist[k]);
		s->count = h->total;
		s->mean_us = hist_mean(h) / 1e3;
		s->p50_us = (double)hist_quantile(h, 0.50) / 1e3;
		s->p99_us = (double)hist_quantile(h, 0.99) / 1e3;
		s->p999_us = (double)hist_quantile(h, 0.999) / 1e3;
	}
	for (unsigned i = 0; i < n; i++)
		misc += ws[i].mix->miscompares;
	out->kinds[BK_CAW].miscompares = misc;
	free(h);
	return 0;
}
