/*
 * Cut-through reads: a large READ goes to the backend as several pieces
 * of one buffer, all submitted at once, and the transport is told
 * (t->data_in_ready) each time the bytes read in order grow, so its
 * Data-In leaves while the rest is still being read: a command no longer
 * costs the disk's time plus the wire's (docs/latency-path.md).
 *
 * The task stays one task: the task set, its ordering and task
 * management see nothing of the pieces; the status comes only after the
 * last piece, through the one completion (sbc_io_done, then
 * taskset_complete). A failed piece ends the task with MEDIUM ERROR, the
 * LBA of its first block in INFORMATION, and nothing past it is offered
 * to the transport, whatever the pieces after it did. An aborted task
 * is offered nothing more and completes once its last piece is back, so
 * the buffer outlives every I/O into it.
 */
#include <errno.h>
#include <stdlib.h>

#include "tcq/compiler.h"
#include "tcq/reactor.h"
#include "tcq/scsi_proto.h"
#include "backend/bdev.h"
#include "scsi/exec.h"
#include "scsi/lun.h"
#include "scsi/sbc.h"
#include "scsi/sbc_priv.h"
#include "scsi/stats.h"

#define CUT_PIECE_MIN (64u << 10)	/* below this a disk reads worse */

struct sbc_cut {
	struct tcq_task *t;
	uint32_t piece;		/* bytes per piece (the last may be less) */
	uint32_t n;		/* pieces */
	uint32_t left;		/* pieces not yet back */
	uint32_t next;		/* pieces read in order: [0, next) */
	uint32_t failed;	/* the first failed piece, or n */
	uint32_t want;		/* bytes the answer holds */
	uint64_t end_ns;	/* the pass that reaped the last piece */
	struct bdev_io *io;	/* n of them, after this struct */
	uint8_t *back;		/* n flags: piece i is back */
};

/* The initiator's segment, but no more than half the READ (a 128K READ
 * at the usual 256K segment is two pieces, or nothing overlaps) and no
 * less than 64K; in blocks. */
uint32_t sbc_cut_piece(const struct tcq_task *t, uint64_t len)
{
	uint32_t bs = t->lun->block_size;
	uint64_t piece;

	if (!t->data_in_ready || !t->cut_seg || lun_get_cut_off(t->lun))
		return 0;
	piece = MAX(MIN((uint64_t)t->cut_seg, len / 2), CUT_PIECE_MIN);
	piece = piece / bs * bs;
	if (!piece || len < 2 * piece)
		return 0;
	return (uint32_t)piece;
}

static struct exec_rc cut_done(struct tcq_task *t)
{
	struct sbc_cut *c = t->exec.cut;
	uint64_t lba = t->req.lba +
		       (uint64_t)c->failed * c->piece / t->lun->block_size;
	bool failed = c->failed < c->n;
	uint32_t want = c->want;

	t->exec.cut = NULL;
	free(c);
	if (failed)
		return exec_sense_info(SK_MEDIUM_ERROR,
				       ASC_UNRECOVERED_READ_ERROR, lba);
	t->data_in_len = want;
	return exec_good(t);
}

static void cut_piece_done(struct bdev_io *io)
{
	struct sbc_cut *c = io->ctx;
	struct tcq_task *t = c->t;
	uint32_t i = (uint32_t)(io - c->io);
	uint32_t before = c->next;

	c->back[i] = 1;
	if (io->result && i < c->failed)
		c->failed = i;
	c->end_ns = MAX(c->end_ns, io->end_ns);
	while (c->next < c->failed && c->back[c->next])
		c->next++;
	if (--c->left) {
		/* Not the whole answer yet (that goes with the status):
		 * pieces before the last end below want. */
		if (c->next > before && !t->aborted)
			t->data_in_ready(t, c->next * c->piece);
		return;
	}
	t->exec.io.end_ns = c->end_ns;	/* the path breakdown's backend */
	t->exec.io.ctx = t;
	sbc_io_done(&t->exec.io);	/* cut_done, in t's one completion */
}

struct exec_rc sbc_read_cut(struct tcq_task *t, uint32_t piece, uint64_t off,
			    uint64_t len, uint32_t want)
{
	struct lun *l = t->lun;
	struct bdev_queue *q = bdev_queue_get(l->bdev, reactor_self());
	uint32_t n = (uint32_t)((len + piece - 1) / piece);
	struct sbc_cut *c;

	if (!q)
		return exec_target_failure();
	c = calloc(1, sizeof(*c) + n * sizeof(struct bdev_io) + n);
	if (!c)
		return exec_target_failure();
	c->t = t;
	c->piece = piece;
	c->n = c->left = c->failed = n;
	c->want = want;
	c->io = (struct bdev_io *)(c + 1);
	c->back = (uint8_t *)(c->io + n);
	for (uint32_t i = 0; i < n; i++) {
		struct bdev_io *io = &c->io[i];

		sbc_io_prepare(io, t, BDEV_READ, off + (uint64_t)i * piece,
			       MIN((uint64_t)piece,
				   len - (uint64_t)i * piece),
			       (uint8_t *)t->buf + (size_t)i * piece);
		io->done = cut_piece_done;
		io->ctx = c;
		io->command = c;	/* one command to a device model */
	}
	t->exec.cut = c;
	t->exec.next = cut_done;
	t->cut_piece = piece;	/* the transport's PDUs fit in a piece */
	stats_path_submit(t);
	/* Each piece may complete, and the last one complete t and free c,
	 * inside bdev_submit: nothing of c is touched after the last. */
	struct bdev_io *io = c->io;
	for (uint32_t i = 0; i < n; i++) {
		stats_io_submit(l, BDEV_READ, false);
		bdev_submit(q, &io[i]);
	}
	return EXEC_OK;
}
