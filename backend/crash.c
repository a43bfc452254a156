/*
 * crash: serves one crash state of a recording, read-only, so that any
 * initiator (Windows chkdsk, FreeBSD fsck, an application's own check)
 * can look at what a power cut may have left (docs/crash-lab.md).
 *
 *   crash:record=FILE,state=K[,model=sbc|ordered][,upto=MARK][,max=N]
 *         [,seed=S]
 *
 * state is an index of `tcq-crash states` with the same model, upto, max
 * and seed, or "all", "durable", "drop:TASK[:A-B]...". The LUN has the
 * recording's size and block size; a size given that differs is refused.
 * Nothing is copied: each block is read from the base or the recording,
 * as the state picks it.
 */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "backend/bdev.h"
#include "backend/bdev_priv.h"
#include "crash/history.h"
#include "crash/model.h"
#include "crash/states.h"
#include "tcq/compiler.h"

struct crash_opts {
	char record[4096];
	char state[256];
	int model;		/* enum model_kind */
	char upto[256];
	uint64_t max, seed;
};

struct crash_dev {
	struct ch_history h;
	uint64_t *lba;		/* blocks written up to the point, sorted */
	uint32_t *piece;	/* what each shows (CH_NONE: the base) */
	size_t n;
};

/* The piece block lba shows, CH_NONE for the base. */
static uint32_t shown(const struct crash_dev *d, uint64_t lba)
{
	size_t lo = 0, hi = d->n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (d->lba[mid] < lba)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < d->n && d->lba[lo] == lba ? d->piece[lo] : CH_NONE;
}

static int crash_read(struct bdev *b, uint64_t off, void *buf, size_t len)
{
	struct crash_dev *d = b->priv;
	uint32_t bs = b->block_size;
	uint8_t *p = buf;

	for (uint64_t lba = off / bs; len; lba++, p += bs, len -= bs)
		if (ch_block_data(&d->h, shown(d, lba), lba, p) < 0)
			return -EIO;
	return 0;
}

static int crash_queue_init(struct bdev *b, struct bdev_queue *q)
{
	struct bdev_cq *cq = malloc(sizeof(*cq));

	if (!cq)
		return -1;
	bdev_cq_init(cq, q->reactor, true);
	q->priv = cq;
	return 0;
}

static void crash_queue_fini(struct bdev_queue *q)
{
	bdev_cq_fini(q->priv);
	free(q->priv);
	q->priv = NULL;
}

static void crash_submit(struct bdev_queue *q, struct bdev_io *io)
{
	int rc = 0;

	if (io->op == BDEV_READ)
		rc = crash_read(q->bdev, io->offset, io->buf, io->len);
	else if (io->op != BDEV_FLUSH)
		rc = -EROFS;	/* read-only: the device server refuses first */
	bdev_cq_push(q->priv, io, rc);
}

static void crash_close(struct bdev *b)
{
	struct crash_dev *d = b->priv;

	if (!d)
		return;
	ch_free(&d->h);
	free(d->lba);
	free(d->piece);
	free(d);
	b->priv = NULL;
}

static const struct bdev_ops crash_ops = {
	.name = "crash",
	.queue_init = crash_queue_init,
	.queue_fini = crash_queue_fini,
	.submit = crash_submit,
	.close = crash_close,
	.read_sync = crash_read,
};

static const struct crash_opts crash_defaults = { .max = 10000, .seed = 1 };

static const struct bdev_opt_word crash_models[] = {
	{ "sbc", MODEL_SBC }, { "ordered", MODEL_ORDERED }, { NULL, 0 },
};

static const struct bdev_opt crash_keys[] = {
	{ .key = "record", .type = BDEV_OPT_STRING, .flags = BDEV_OPT_REQUIRED,
	  .offset = offsetof(struct crash_opts, record),
	  .len = sizeof(((struct crash_opts *)0)->record),
	  .help = "the recording (tcqd's record = FILE, tcqctl record)" },
	{ .key = "state", .type = BDEV_OPT_STRING, .flags = BDEV_OPT_REQUIRED,
	  .offset = offsetof(struct crash_opts, state),
	  .len = sizeof(((struct crash_opts *)0)->state),
	  .help = "index of tcq-crash states, all, durable, or drop:..." },
	{ .key = "model", .type = BDEV_OPT_ENUM, .words = crash_models,
	  .offset = offsetof(struct crash_opts, model),
	  .help = "sbc (default) or ordered" },
	{ .key = "upto", .type = BDEV_OPT_STRING,
	  .offset = offsetof(struct crash_opts, upto),
	  .len = sizeof(((struct crash_opts *)0)->upto),
	  .help = "the crash point: a mark, a record number (default: end)" },
	{ .key = "max", .type = BDEV_OPT_UINT, .min = 1, .max = 100000000,
	  .offset = offsetof(struct crash_opts, max),
	  .help = "states listed at most, as tcq-crash --max (default 10000)" },
	{ .key = "seed", .type = BDEV_OPT_UINT,
	  .offset = offsetof(struct crash_opts, seed),
	  .help = "seed of the random states, as tcq-crash --seed (default 1)" },
};

const struct bdev_opts_def bdev_crash_opts = {
	.backend = "crash", .opts = crash_keys, .nopts = ARRAY_SIZE(crash_keys),
	.size = sizeof(struct crash_opts), .defaults = &crash_defaults,
};

/* The state the options name, into s. */
static int pick_state(const struct md_point *m, const struct crash_opts *o,
		      struct md_state *s, char *err, size_t errlen)
{
	char *end;
	unsigned long long k = strtoull(o->state, &end, 10);
	struct st_gen g;
	struct st_info info;

	if (!*end && end != o->state) {
		if (st_init(&g, m, o->max, o->seed) < 0) {
			snprintf(err, errlen, "out of memory");
			return -1;
		}
		while (st_next(&g, s, &info) > 0)
			if (info.index == k) {
				st_free(&g);
				return 0;
			}
		snprintf(err, errlen, "state %llu: there are %zu states at this "
			 "point (max=%llu)", k, g.emitted,
			 (unsigned long long)o->max);
		st_free(&g);
		return -1;
	}
	if (st_parse(m, o->state, s, err, errlen) < 0)
		return -1;
	if (!model_allows(m, s)) {
		snprintf(err, errlen, "state %s: the model does not allow it",
			 o->state);
		return -1;
	}
	return 0;
}

/* Every block written up to m's point and the piece it shows in s. */
static int build_map(struct crash_dev *d, const struct md_point *m,
		     const struct md_state *s)
{
	const struct ch_history *h = &d->h;
	size_t cap = 0;

	for (size_t i = 0; i < h->nversions; i++) {
		const struct ch_version *v = &h->versions[i];
		long b;

		if (h->pieces[v->piece].seq > m->c)
			continue;
		if (d->n && d->lba[d->n - 1] == v->lba) {
			d->piece[d->n - 1] = v->piece;	/* a newer version */
			continue;
		}
		if (d->n == cap) {
			size_t nc = cap ? cap * 2 : 4096;
			uint64_t *nl = realloc(d->lba, nc * sizeof(*nl));
			uint32_t *np = nl ? realloc(d->piece, nc * sizeof(*np)) :
					    NULL;

			if (nl)
				d->lba = nl;
			if (!np)
				return -1;
			d->piece = np;
			cap = nc;
		}
		d->lba[d->n] = v->lba;
		d->piece[d->n++] = v->piece;
		(void)b;
	}
	for (size_t i = 0; i < m->nblocks; i++) {	/* what is in doubt */
		uint64_t lba = m->blocks[i].lba;
		size_t lo = 0, hi = d->n;

		while (lo < hi) {
			size_t mid = (lo + hi) / 2;

			if (d->lba[mid] < lba)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo < d->n && d->lba[lo] == lba)
			d->piece[lo] = model_shown(m, s, i);
	}
	return 0;
}

struct bdev *bdev_crash_open(const char *opts, const struct bdev_params *p,
			     char *err, size_t errlen)
{
	struct crash_opts o = crash_defaults;
	struct crash_dev *d;
	struct md_point m;
	struct md_state s = { NULL };
	struct bdev *b = NULL;
	char why[512];
	uint64_t c, size;

	if (bdev_opts_parse(&bdev_crash_opts, opts, &o, NULL, err, errlen) < 0)
		return NULL;
	d = calloc(1, sizeof(*d));
	if (!d || ch_load(&d->h, o.record, why, sizeof(why)) < 0) {
		snprintf(err, errlen, "crash: %s", d ? why : "out of memory");
		free(d);
		return NULL;
	}
	size = d->h.rd.hdr.nblocks * d->h.rd.hdr.block_size;
	if ((p->size && p->size != size) ||
	    (p->block_size && p->block_size != d->h.rd.hdr.block_size)) {
		snprintf(err, errlen, "crash: %s records a LUN of %llu bytes in "
			 "blocks of %u, not %llu in blocks of %u", o.record,
			 (unsigned long long)size, d->h.rd.hdr.block_size,
			 (unsigned long long)p->size, p->block_size);
		goto fail;
	}
	c = ch_point(&d->h, o.upto[0] ? o.upto : NULL, why, sizeof(why));
	if (!c && d->h.last_seq) {
		snprintf(err, errlen, "crash: upto=%s: %s", o.upto, why);
		goto fail;
	}
	if (model_point(&m, &d->h, (enum model_kind)o.model, c, why,
			sizeof(why)) < 0) {
		snprintf(err, errlen, "crash: %s", why);
		goto fail;
	}
	s.pick = malloc((m.nblocks + 1) * sizeof(*s.pick));
	if (!s.pick || pick_state(&m, &o, &s, why, sizeof(why)) < 0 ||
	    build_map(d, &m, &s) < 0) {
		snprintf(err, errlen, "crash: %s", s.pick ? why :
			 "out of memory");
		model_point_free(&m);
		free(s.pick);
		goto fail;
	}
	model_point_free(&m);
	free(s.pick);
	if (d->h.base_path[0] &&
	    (d->h.base_fd = open(d->h.base_path, O_RDONLY | O_CLOEXEC)) < 0) {
		snprintf(err, errlen, "crash: %s: %s", d->h.base_path,
			 strerror(errno));
		goto fail;
	}
	{
		struct bdev_params bp = *p;

		bp.block_size = d->h.rd.hdr.block_size;
		bp.read_only = true;
		b = bdev_alloc(&crash_ops, &bp, size, err, errlen);
	}
	if (!b)
		goto fail;
	b->read_only = true;
	b->write_through = true;	/* nothing to flush */
	b->priv = d;
	return b;
fail:
	ch_free(&d->h);
	free(d->lba);
	free(d->piece);
	free(d);
	return NULL;
}
