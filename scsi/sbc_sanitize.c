/*
 * SANITIZE (SBC-3 5.19, 4.11) as a background operation of the LUN.
 *
 * The erase belongs to the logical unit, not to the task that asked for
 * it: with IMMED the task ends at once; without, it waits for the end,
 * but an abort, a reset or the loss of its I_T nexus only detaches it
 * and the erase goes on (SBC-3 4.11.2: a sanitize operation survives
 * them). While it runs, every command but the few that report state ends
 * with NOT READY, SANITIZE IN PROGRESS and a progress indication, as
 * REQUEST SENSE reports too. It takes as long as the work: OVERWRITE
 * writes every block of the medium once per pass, the erases deallocate
 * it (we have no key to drop for CRYPTO ERASE).
 *
 * The I/O runs on the reactor of the task that started it, one chunk at
 * a time through the LUN's backend queue of that reactor; reactors live
 * as long as the daemon, connections may come and go.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "tcq/byteorder.h"
#include "tcq/compiler.h"
#include "tcq/log.h"
#include "tcq/scsi_proto.h"
#include "scsi/exec.h"
#include "scsi/lun.h"
#include "scsi/sbc.h"
#include "scsi/record.h"
#include "scsi/sbc_priv.h"
#include "scsi/sense.h"

/* Bytes per erase I/O: small enough that an abort is seen quickly and
 * that progress moves, large enough to keep the backend streaming. */
#define SAN_WRITE_CHUNK (1u << 20)
#define SAN_DISCARD_CHUNK (64ull << 20)

static void san_kick(struct sbc_san *j);

static void san_end_task(struct sbc_san *j, int error)
{
	struct tcq_task *t = j->t;

	j->t = NULL;
	if (!t)
		return;
	/* The erase belongs to the LUN: its end is the task's completion,
	 * found outside any executor. */
	if (error)
		exec_fail(t, exec_sense(SK_MEDIUM_ERROR, ASC_WRITE_ERROR));
	else
		exec_good(t);
}

static void san_stop(struct sbc_san *j, int error)
{
	struct lun *l = j->l;

	if (error)
		log_err("LUN %llu: SANITIZE failed: %s",
			  (unsigned long long)l->id, strerror(-error));
	else
		log_info("LUN %llu: SANITIZE complete",
			 (unsigned long long)l->id);
	free(j->buf);
	j->buf = NULL;
	__atomic_store_n(&l->sbc->sanitizing, false, __ATOMIC_RELEASE);
	san_end_task(j, error);
}

static void san_io_done(struct bdev_io *io)
{
	struct sbc_san *j = io->ctx;

	if (io->result) {
		san_stop(j, io->result);
		return;
	}
	j->off += io->len;
	atomic_fetch_add_explicit(&j->done, io->len, memory_order_relaxed);
	san_kick(j);
}

/* One step: the next chunk, the next pass, or the end. */
static void san_step(struct sbc_san *j)
{
	struct lun *l = j->l;
	struct bdev_queue *q;

	/* The waiting task was aborted (ABORT TASK, a reset, nexus loss):
	 * it leaves now, the erase does not. */
	if (j->t && j->t->aborted)
		san_end_task(j, 0);
	if (j->off >= j->end) {
		if (!j->passes_left) {
			san_stop(j, 0);
			return;
		}
		j->passes_left--;
		j->off = 0;
		if (j->invert)
			for (uint64_t i = 0; i < j->chunk; i++)
				((uint8_t *)j->buf)[i] ^= 0xff;
	}
	q = bdev_queue_get(l->bdev, reactor_self());
	if (!q) {
		san_stop(j, -ENOMEM);
		return;
	}
	struct bdev_io *io = &j->io;
	io->op = j->op;
	io->flags = j->op == BDEV_WRITE ? BDEV_FUA : 0;
	io->offset = j->off;
	io->len = MIN(j->chunk, j->end - j->off);
	io->buf = j->op == BDEV_WRITE ? j->buf : NULL;
	io->result = 0;
	io->done = san_io_done;
	io->ctx = j;
	list_init(&io->node);
	bdev_submit(q, io);	/* may complete before returning */
}

/* Backends may complete synchronously: loop instead of recursing. */
static void san_kick(struct sbc_san *j)
{
	if (j->in_kick) {
		j->again = true;
		return;
	}
	j->in_kick = true;
	do {
		j->again = false;
		san_step(j);
	} while (j->again);
	j->in_kick = false;
}

/* The OVERWRITE parameter list (SBC-3 5.19.3): checks it and fills a
 * chunk with the pattern into j. */
static struct exec_rc overwrite_setup(const struct tcq_task *t,
				      struct sbc_san *j)
{
	struct lun *l = t->lun;
	uint32_t bs = l->block_size, len = t->req.data_out_len;
	const uint8_t *p = t->buf;

	if (len < 5 || len > bs + 4)
		return exec_cdb_field(7, -1);
	if (!p || t->buf_len < len)
		return exec_target_failure();
	uint8_t owcount = p[0] & 0x1f;
	uint32_t ipl = get_be16(p + 2);
	if (!owcount)
		return exec_param_field(0, 4);
	if (ipl == 0 || ipl > bs || ipl + 4 != len)
		return exec_param_field(2, -1);
	uint64_t chunk = MIN((uint64_t)SAN_WRITE_CHUNK, l->nblocks * bs);
	chunk -= chunk % bs;
	void *buf = NULL;
	if (!chunk || posix_memalign(&buf, 4096, chunk))
		return exec_target_failure();
	/* The pattern repeats in every block (a shorter one repeats within
	 * the block); INVERT flips it between consecutive passes. */
	uint8_t *x = buf;
	for (uint64_t i = 0; i < chunk; i++)
		x[i] = p[4 + (i % bs) % ipl];
	j->buf = buf;
	j->chunk = chunk;
	j->op = BDEV_WRITE;
	j->passes_left = owcount - 1u;
	j->invert = p[0] & 0x80;
	return EXEC_OK;
}

/* The service action and LUN allow this SANITIZE. */
static struct exec_rc sanitize_check(const struct tcq_task *t)
{
	const struct lun *l = t->lun;
	uint8_t sa = t->req.sa;

	if (!l->sanitize_ok || !l->sbc)
		return exec_sense(SK_ILLEGAL_REQUEST,
				  ASC_INVALID_COMMAND_OPERATION_CODE);
	if (sa != SAN_OVERWRITE && sa != SAN_BLOCK_ERASE &&
	    sa != SAN_CRYPTO_ERASE && sa != SAN_EXIT_FAILURE_MODE)
		return exec_cdb_field(1, 4);
	if (sa != SAN_OVERWRITE && t->req.data_out_len)
		return exec_cdb_field(7, -1);	/* these take no parameter
						 * list */
	if (lun_write_protected(t))
		return exec_sense(SK_DATA_PROTECT, ASC_WRITE_PROTECTED);
	if (sa != SAN_OVERWRITE && sa != SAN_EXIT_FAILURE_MODE &&
	    !sbc_thin(t))
		return exec_cdb_field(1, 4);	/* no way to erase but
						 * overwriting */
	return EXEC_OK;
}

struct exec_rc sbc_sanitize(struct tcq_task *t)
{
	struct lun *l = t->lun;
	struct sbc_lun *s = l->sbc;
	uint8_t sa = t->req.sa;
	struct exec_rc rc = sanitize_check(t);

	if (exec_failed(rc))
		return rc;
	if (sa == SAN_EXIT_FAILURE_MODE)	/* never in failure mode */
		return exec_good(t);
	/* Commands are refused while one runs (sbc_ready), so a second
	 * one only gets here in a race between two nexuses. */
	bool busy = true;
	pthread_mutex_lock(&l->lock);
	if (!__atomic_load_n(&s->sanitizing, __ATOMIC_ACQUIRE)) {
		__atomic_store_n(&s->sanitizing, true, __ATOMIC_RELEASE);
		busy = false;
	}
	pthread_mutex_unlock(&l->lock);
	if (busy)
		return exec_sense(SK_NOT_READY, ASC_SANITIZE_IN_PROGRESS);
	struct sbc_san *j = &s->san;
	j->l = l;
	j->t = NULL;
	j->buf = NULL;
	j->in_kick = j->again = false;
	if (sa == SAN_OVERWRITE) {
		rc = overwrite_setup(t, j);
		if (exec_failed(rc)) {
			__atomic_store_n(&s->sanitizing, false,
					 __ATOMIC_RELEASE);
			return rc;
		}
	} else {
		j->op = BDEV_DISCARD;
		j->chunk = SAN_DISCARD_CHUNK;
		j->passes_left = 0;
		j->invert = false;
	}
	j->off = 0;
	j->end = l->nblocks * l->block_size;
	atomic_store_explicit(&j->done, 0, memory_order_relaxed);
	atomic_store_explicit(&j->total, j->end * (j->passes_left + 1u),
			      memory_order_relaxed);
	record_interrupt(l, "SANITIZE: the recorder does not follow it");
	log_info("LUN %llu: SANITIZE %s started%s",
		 (unsigned long long)l->id,
		 sa == SAN_OVERWRITE ? "OVERWRITE" :
		 sa == SAN_BLOCK_ERASE ? "BLOCK ERASE" : "CRYPTO ERASE",
		 t->req.immed ? " (IMMED)" : "");
	if (t->req.immed)	/* GOOD now; progress through sense data */
		exec_good(t);
	else
		j->t = t;
	san_kick(j);
	return EXEC_OK;
}

bool sbc_sanitize_progress(const struct lun *l, uint16_t *progress)
{
	const struct sbc_lun *s = l ? l->sbc : NULL;

	if (!s || !__atomic_load_n(&s->sanitizing, __ATOMIC_ACQUIRE))
		return false;
	uint64_t total = atomic_load_explicit(&s->san.total,
					      memory_order_relaxed);
	uint64_t done = atomic_load_explicit(&s->san.done,
					     memory_order_relaxed);
	/* done / total in 1/65536ths, without overflowing a shift. */
	*progress = (uint16_t)MIN(done / (total / 65536 + 1), 0xffffull);
	return true;
}
