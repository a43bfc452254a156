/*
 * The medium as a whole (SBC-3 5.x): START STOP UNIT with eject and load
 * of a removable LUN, PREVENT ALLOW MEDIUM REMOVAL (per I_T nexus, ended
 * by nexus loss and LUN reset: SBC-3 5.13), READ DEFECT DATA (we have no
 * defects); SANITIZE is in sbc_sanitize.c.
 */
#include <stdlib.h>
#include <string.h>
#include "tcq/byteorder.h"
#include "tcq/compiler.h"
#include "tcq/scsi_proto.h"
#include "scsi/cdb.h"
#include "scsi/exec.h"
#include "scsi/lun.h"
#include "scsi/opcodes.h"
#include "scsi/sbc.h"
#include "scsi/sbc_priv.h"
#include "scsi/sense.h"
#include "scsi/spc.h"

/* NOT READY while a SANITIZE runs (SBC-3 4.11), with how far it is, or
 * while the medium is out: only the rows that allow it get through. */
struct exec_rc sbc_ready(const struct tcq_task *t)
{
	const struct sbc_lun *s = t->lun ? t->lun->sbc : NULL;
	struct exec_rc rc;

	if (!s)
		return EXEC_OK;
	unsigned f = t->req.cmd ? t->req.cmd->flags : 0;

	/* Only the commands that report state run during a SANITIZE; only
	 * those that do not touch the medium run without one (the row's
	 * OPC_F_SANITIZING, OPC_F_NO_MEDIUM). */
	if (__atomic_load_n(&s->sanitizing, __ATOMIC_RELAXED)) {
		if (f & OPC_F_SANITIZING)
			return EXEC_OK;
		rc = exec_sense(SK_NOT_READY, ASC_SANITIZE_IN_PROGRESS);
		if (sbc_sanitize_progress(t->lun, &rc.si.progress))
			rc.si.sksv = rc.si.progress_valid = true;
		return rc;
	}
	if (__atomic_load_n(&s->ejected, __ATOMIC_RELAXED) &&
	    !(f & OPC_F_NO_MEDIUM))
		return exec_sense(SK_NOT_READY,
				  ASC_MEDIUM_NOT_PRESENT_TRAY_OPEN);
	return EXEC_OK;
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

struct exec_rc sbc_prevent_allow(struct tcq_task *t)
{
	struct lun *l = t->lun;
	struct sbc_lun *s = l->sbc;
	bool prevent = t->req.flags & 1;	/* 1xb are obsolete */
	int rc = 0;

	if (!s || !l->removable)	/* nothing to hold in place */
		return exec_good(t);
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
		return exec_target_failure();
	return exec_good(t);
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

struct exec_rc sbc_start_stop(struct tcq_task *t)
{
	struct lun *l = t->lun;
	struct sbc_lun *s = l->sbc;
	uint8_t b4 = t->req.flags;
	bool prevented;

	/* A POWER CONDITION other than START_VALID makes LOEJ and START
	 * ignored; without LOEJ, START only spins a motor we do not have. */
	if ((b4 >> 4) != 0 || !(b4 & SSU_LOEJ) || !l->removable || !s)
		return exec_good(t);
	pthread_mutex_lock(&l->lock);
	prevented = s->nprevent > 0;
	if (!prevented)
		__atomic_store_n(&s->ejected, !(b4 & SSU_START),
				 __ATOMIC_RELAXED);
	pthread_mutex_unlock(&l->lock);
	if (prevented)
		return exec_sense(SK_ILLEGAL_REQUEST,
				  ASC_MEDIUM_REMOVAL_PREVENTED);
	return exec_good(t);
}

/* ---- READ DEFECT DATA (10/12) ----------------------------------------- */

/* An empty list in the format asked for (SBC-3 5.17, 5.18): the header
 * echoes which lists were requested and the list format. */
struct exec_rc sbc_read_defect_data(struct tcq_task *t)
{
	uint8_t buf[8];
	bool twelve = t->req.opcode == SOP_READ_DEFECT_DATA_12;
	uint8_t b = t->req.flags & 0x1f;	/* PLISTV, GLISTV, format */

	memset(buf, 0, sizeof(buf));
	buf[1] = b;
	return spc_reply(t, buf, twelve ? 8 : 4);
}
