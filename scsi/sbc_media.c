/*
 * The medium as a whole (SBC-3 5.x): START STOP UNIT with eject and load
 * of a removable LUN, PREVENT ALLOW MEDIUM REMOVAL (per I_T nexus, ended
 * by nexus loss and LUN reset: SBC-3 5.13), READ DEFECT DATA (we have no
 * defects), and SANITIZE (SBC-3 5.19).
 */
#include <stdlib.h>
#include <string.h>
#include "tcq/byteorder.h"
#include "tcq/compiler.h"
#include "tcq/scsi_proto.h"
#include "scsi/cdb.h"
#include "scsi/lun.h"
#include "scsi/sbc.h"
#include "scsi/sbc_priv.h"
#include "scsi/sense.h"
#include "scsi/spc.h"
#include "scsi/taskset.h"

static void good(struct tcq_task *t)
{
	t->status = SAM_STAT_GOOD;
	sbc_finish(t);
}

/* NOT READY while a SANITIZE runs (SBC-3 4.11): only commands that
 * report state get through. 0 or the ASC to report. */
uint16_t sbc_not_ready(const struct tcq_task *t)
{
	const struct sbc_lun *s = t->lun ? t->lun->sbc : NULL;

	if (!s)
		return 0;
	if (__atomic_load_n(&s->sanitizing, __ATOMIC_RELAXED)) {
		switch (t->req.opcode) {
		case SOP_INQUIRY: case SOP_REPORT_LUNS:
		case SOP_REQUEST_SENSE: case SOP_MAINTENANCE_IN:
		case SOP_LOG_SENSE:
			return 0;
		default:
			return ASC_SANITIZE_IN_PROGRESS;
		}
	}
	if (__atomic_load_n(&s->ejected, __ATOMIC_RELAXED) &&
	    sbc_needs_medium(t->req.opcode))
		return ASC_MEDIUM_NOT_PRESENT_TRAY_OPEN;
	return 0;
}

/* Commands that work without a medium (SPC-4 / SBC-3: they do not touch
 * it): everything else gets NOT READY, MEDIUM NOT PRESENT. */
bool sbc_needs_medium(uint8_t op)
{
	switch (op) {
	case SOP_INQUIRY: case SOP_REPORT_LUNS: case SOP_REQUEST_SENSE:
	case SOP_START_STOP_UNIT: case SOP_PREVENT_ALLOW:
	case SOP_MODE_SENSE_6: case SOP_MODE_SENSE_10:
	case SOP_MODE_SELECT_6: case SOP_MODE_SELECT_10:
	case SOP_MAINTENANCE_IN: case SOP_MAINTENANCE_OUT:
	case SOP_PERSISTENT_RESERVE_IN: case SOP_PERSISTENT_RESERVE_OUT:
	case SOP_RESERVE_6: case SOP_RELEASE_6:
	case SOP_RESERVE_10: case SOP_RELEASE_10:
	case SOP_LOG_SENSE: case SOP_LOG_SELECT:
	case SOP_RECEIVE_COPY_RESULTS:
		return false;
	default:
		return true;
	}
}

/* ---- PREVENT ALLOW MEDIUM REMOVAL ------------------------------------- */

/* Under lun->lock. */
static int prevent_find(const struct sbc_lun *s, const void *nexus)
{
	for (unsigned i = 0; i < s->nprevent; i++)
		if (s->prevent[i] == nexus)
			return (int)i;
	return -1;
}

static void prevent_drop(struct sbc_lun *s, int i)
{
	s->prevent[i] = s->prevent[--s->nprevent];
}

void sbc_prevent_allow(struct tcq_task *t)
{
	struct lun *l = t->lun;
	struct sbc_lun *s = l->sbc;
	bool prevent = t->req.flags & 1;	/* 1xb are obsolete */
	int rc = 0;

	if (!s || !l->removable) {	/* nothing to hold in place */
		good(t);
		return;
	}
	pthread_mutex_lock(&l->lock);
	int i = prevent_find(s, t->nexus);
	if (prevent && i < 0) {
		if (s->nprevent == s->prevent_cap) {
			unsigned cap = s->prevent_cap ? 2 * s->prevent_cap : 4;
			void **p = realloc(s->prevent, cap * sizeof(*p));
			if (p) {
				s->prevent = p;
				s->prevent_cap = cap;
			} else {
				rc = -1;
			}
		}
		if (!rc)
			s->prevent[s->nprevent++] = t->nexus;
	} else if (!prevent && i >= 0) {
		prevent_drop(s, i);
	}
	pthread_mutex_unlock(&l->lock);
	if (rc)
		sbc_fail(t, SK_HARDWARE_ERROR, ASC_INTERNAL_TARGET_FAILURE);
	else
		good(t);
}

void sbc_nexus_gone(struct lun *l, void *nexus)
{
	struct sbc_lun *s = l ? l->sbc : NULL;

	if (!s)
		return;
	pthread_mutex_lock(&l->lock);
	int i = prevent_find(s, nexus);
	if (i >= 0)
		prevent_drop(s, i);
	for (unsigned k = 0; k < SBC_XC_RESULTS; k++)	/* copy results */
		if (s->xc[k].nexus == nexus)
			s->xc[k].nexus = NULL;
	pthread_mutex_unlock(&l->lock);
}

void sbc_lun_reset(struct lun *l)
{
	struct sbc_lun *s = l ? l->sbc : NULL;

	if (!s)
		return;
	pthread_mutex_lock(&l->lock);
	s->nprevent = 0;
	pthread_mutex_unlock(&l->lock);
}

/* ---- START STOP UNIT -------------------------------------------------- */

#define SSU_START 0x01
#define SSU_LOEJ 0x02

void sbc_start_stop(struct tcq_task *t)
{
	struct lun *l = t->lun;
	struct sbc_lun *s = l->sbc;
	uint8_t b4 = t->req.flags;
	bool prevented;

	/* A POWER CONDITION other than START_VALID makes LOEJ and START
	 * ignored; without LOEJ, START only spins a motor we do not have. */
	if ((b4 >> 4) != 0 || !(b4 & SSU_LOEJ) || !l->removable || !s) {
		good(t);
		return;
	}
	pthread_mutex_lock(&l->lock);
	prevented = s->nprevent > 0;
	if (!prevented)
		__atomic_store_n(&s->ejected, !(b4 & SSU_START),
				 __ATOMIC_RELAXED);
	pthread_mutex_unlock(&l->lock);
	if (prevented)
		sbc_fail(t, SK_ILLEGAL_REQUEST, ASC_MEDIUM_REMOVAL_PREVENTED);
	else
		good(t);
}

/* ---- READ DEFECT DATA (10/12) ----------------------------------------- */

/* An empty list in the format asked for (SBC-3 5.17, 5.18): the header
 * echoes which lists were requested and the list format. */
void sbc_read_defect_data(struct tcq_task *t)
{
	uint8_t buf[8];
	bool twelve = t->req.opcode == SOP_READ_DEFECT_DATA_12;
	uint8_t b = t->req.flags & 0x1f;	/* PLISTV, GLISTV, format */

	memset(buf, 0, sizeof(buf));
	buf[1] = b;
	if (spc_data_in(t, buf, twelve ? 8 : 4) == 0)
		t->status = SAM_STAT_GOOD;
	sbc_finish(t);
}

/* ---- SANITIZE --------------------------------------------------------- */

static void san_next(struct tcq_task *t);

static void san_set(struct lun *l, bool on)
{
	if (l->sbc)
		__atomic_store_n(&l->sbc->sanitizing, on, __ATOMIC_RELAXED);
}

static void san_io_done(struct bdev_io *io)
{
	struct tcq_task *t = io->ctx;

	if (io->result) {
		san_set(t->lun, false);
		sbc_fail(t, SK_MEDIUM_ERROR, ASC_WRITE_ERROR);
		return;
	}
	t->xpos += io->len / t->lun->block_size;
	san_next(t);
}

/* Overwrites the whole medium with the pattern block in xbuf. */
static void san_next(struct tcq_task *t)
{
	struct lun *l = t->lun;
	uint64_t left = l->nblocks - t->xpos;

	if (!left) {
		san_set(l, false);
		good(t);
		return;
	}
	uint64_t n = MIN(left, (uint64_t)t->xbuf_len / l->block_size);
	sbc_submit(t, BDEV_WRITE, BDEV_FUA, t->xpos * l->block_size,
		   n * l->block_size, t->xbuf, san_io_done);
}

static void bad_param(struct tcq_task *t, uint16_t byte, int bit)
{
	sense_set_field(t, ASC_INVALID_FIELD_IN_PARAMETER_LIST, false, byte,
			bit);
	sbc_finish(t);
}

static void sanitize_overwrite(struct tcq_task *t)
{
	struct lun *l = t->lun;
	uint32_t bs = l->block_size, len = t->req.data_out_len;
	const uint8_t *p = t->buf;

	if (len < 5 || len > bs + 4) {
		sbc_fail_cdb(t, 7, -1);
		return;
	}
	if (!p || t->buf_len < len) {
		sbc_fail(t, SK_HARDWARE_ERROR, ASC_INTERNAL_TARGET_FAILURE);
		return;
	}
	uint8_t owcount = p[0] & 0x1f;
	uint32_t ipl = get_be16(p + 2);
	if (!owcount) {
		bad_param(t, 0, 4);
		return;
	}
	if (ipl == 0 || ipl > bs || ipl + 4 != len) {
		bad_param(t, 2, -1);
		return;
	}
	uint64_t chunk = MIN((uint64_t)SBC_WS_CHUNK, l->nblocks * bs);
	chunk -= chunk % bs;
	if (sbc_xbuf(t, chunk))
		return;
	/* Only the last pass stays on the medium: it carries the pattern
	 * inverted when INVERT is set and the pass count is even. */
	bool inv = (p[0] & 0x80) && !(owcount & 1);
	uint8_t *x = t->xbuf;
	for (uint64_t i = 0; i < chunk; i++)
		x[i] = (uint8_t)(p[4 + (i % bs) % ipl] ^ (inv ? 0xff : 0));
	t->xpos = 0;
	san_set(l, true);
	san_next(t);
}

static void sanitize_erase(struct tcq_task *t)
{
	struct lun *l = t->lun;

	if (!sbc_thin(t)) {	/* no way to erase but overwriting */
		sbc_fail_cdb(t, 1, 4);
		return;
	}
	t->xpos = 0;
	san_set(l, true);
	sbc_submit(t, BDEV_DISCARD, 0, 0, l->nblocks * l->block_size, NULL,
		   san_io_done);
}

void sbc_sanitize(struct tcq_task *t)
{
	struct lun *l = t->lun;
	uint8_t sa = t->req.sa;

	if (!l->sanitize_ok) {
		sbc_fail(t, SK_ILLEGAL_REQUEST,
			 ASC_INVALID_COMMAND_OPERATION_CODE);
		return;
	}
	if (sa != SAN_OVERWRITE && sa != SAN_BLOCK_ERASE &&
	    sa != SAN_CRYPTO_ERASE && sa != SAN_EXIT_FAILURE_MODE) {
		sbc_fail_cdb(t, 1, 4);
		return;
	}
	if (sa != SAN_OVERWRITE && t->req.data_out_len) {
		sbc_fail_cdb(t, 7, -1);	/* these take no parameter list */
		return;
	}
	if (l->read_only || l->swp) {
		sbc_fail(t, SK_DATA_PROTECT, ASC_WRITE_PROTECTED);
		return;
	}
	switch (sa) {
	case SAN_OVERWRITE:
		sanitize_overwrite(t);
		break;
	case SAN_BLOCK_ERASE:
	case SAN_CRYPTO_ERASE:	/* no key to drop: deallocate instead */
		sanitize_erase(t);
		break;
	default:		/* never in failure mode: nothing to exit */
		good(t);
		break;
	}
}
