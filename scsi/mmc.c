/*
 * The MMC-6 device (scsi/mmc.h): its medium and tray, and the commands
 * that describe the disc (READ TOC/PMA/ATIP, READ DISC INFORMATION, READ
 * TRACK INFORMATION), report events (GET EVENT STATUS NOTIFICATION) and
 * the mechanism (MECHANISM STATUS), move the tray (START STOP UNIT), and
 * read it (READ CD; READ (10/12) are the block device's sbc_read;
 * PREVENT ALLOW MEDIUM REMOVAL keeps its list of nexuses in sbc_lun).
 * GET CONFIGURATION and READ DISC STRUCTURE are in mmc_config.c, the mode
 * pages in mmc_mode.c.
 */
#include <stdlib.h>
#include <string.h>
#include "tcq/byteorder.h"
#include "tcq/compiler.h"
#include "tcq/scsi_proto.h"
#include "scsi/cdb.h"
#include "scsi/exec.h"
#include "scsi/lun.h"
#include "scsi/mmc.h"
#include "scsi/opcodes.h"
#include "scsi/sbc.h"
#include "scsi/sbc_priv.h"
#include "scsi/spc.h"
#include "scsi/ua.h"

/* ADR 1 (Q sub-channel: the current position) and CONTROL 4 (a data
 * track, recorded uninterrupted): the one track of a data disc. */
#define ADR_CONTROL_DATA 0x14
#define LEAD_OUT 0xaa

struct mmc_lun *mmc_lun_new(bool empty)
{
	struct mmc_lun *m = calloc(1, sizeof(*m));

	if (m)
		m->empty = empty;
	return m;
}

void mmc_lun_free(struct mmc_lun *m)
{
	free(m);
}

static bool tray_open(const struct lun *l)
{
	return l->sbc && __atomic_load_n(&l->sbc->ejected, __ATOMIC_ACQUIRE);
}

static bool no_image(const struct lun *l)
{
	return __atomic_load_n(&l->mmc->empty, __ATOMIC_ACQUIRE);
}

static bool medium_ready(const struct lun *l)
{
	return !tray_open(l) && !no_image(l);
}

struct exec_rc mmc_ready(const struct tcq_task *t)
{
	const struct lun *l = t->lun;
	unsigned f = t->req.cmd ? t->req.cmd->flags : 0;

	if (f & OPC_F_NO_MEDIUM)
		return EXEC_OK;
	if (tray_open(l))
		return exec_sense(SK_NOT_READY,
				  ASC_MEDIUM_NOT_PRESENT_TRAY_OPEN);
	if (no_image(l))
		return exec_sense(SK_NOT_READY,
				  ASC_MEDIUM_NOT_PRESENT_TRAY_CLOSED);
	return EXEC_OK;
}

uint16_t mmc_profile(const struct lun *l)
{
	if (!medium_ready(l))
		return MMC_PROFILE_NONE;
	return __atomic_load_n(&l->nblocks, __ATOMIC_ACQUIRE) > MMC_CD_BLOCKS
	       ? MMC_PROFILE_DVD_ROM : MMC_PROFILE_CD_ROM;
}

const char *mmc_medium_state(const struct lun *l)
{
	return tray_open(l) ? "tray open" : no_image(l) ? "none" : "loaded";
}

bool mmc_prevented(struct lun *l)
{
	bool p;

	pthread_mutex_lock(&l->lock);
	p = l->sbc && l->sbc->nprevent > 0;
	pthread_mutex_unlock(&l->lock);
	return p;
}

static void set_event(struct lun *l, enum mmc_media_event ev)
{
	pthread_mutex_lock(&l->lock);
	l->mmc->event = (uint8_t)ev;
	pthread_mutex_unlock(&l->lock);
}

void mmc_medium_remove(struct lun *l)
{
	__atomic_store_n(&l->mmc->empty, true, __ATOMIC_RELEASE);
	set_event(l, MMC_EV_MEDIA_REMOVAL);
}

void mmc_medium_insert(struct lun *l, uint64_t nblocks)
{
	__atomic_store_n(&l->nblocks, nblocks, __ATOMIC_RELEASE);
	/* A disc put in by the operator closes the tray. */
	if (l->sbc)
		__atomic_store_n(&l->sbc->ejected, false, __ATOMIC_RELEASE);
	__atomic_store_n(&l->mmc->empty, false, __ATOMIC_RELEASE);
	set_event(l, MMC_EV_NEW_MEDIA);
	ua_establish_all(l, ASC_NOT_READY_TO_READY_CHANGE);
}

/* ---- READ TOC/PMA/ATIP (MMC-6 6.33) ----------------------------------- */

/* An address as the MSF bit asks: an LBA, or 0, M, S, F with the
 * 150-frame (2 s) offset of the program area. */
static void put_addr(uint8_t *p, uint64_t lba, bool msf)
{
	if (!msf) {
		put_be32(p, (uint32_t)lba);
		return;
	}
	uint64_t f = lba + 150;

	p[0] = 0;
	p[1] = (uint8_t)(f / (60 * 75));
	p[2] = (uint8_t)(f / 75 % 60);
	p[3] = (uint8_t)(f % 75);
}

static void put_msf3(uint8_t *p, uint64_t lba)
{
	uint8_t a[4];

	put_addr(a, lba, true);
	memcpy(p, a + 1, 3);
}

/* Format 0: the track and the lead-out from the track number asked. */
static struct exec_rc toc_formatted(struct tcq_task *t, uint64_t nb,
				    uint8_t *buf, uint32_t *n)
{
	bool msf = t->req.flags & CDBF_MSF;
	uint8_t from = t->req.page;

	if (from > 1 && from != LEAD_OUT)
		return exec_cdb_field(6, -1);
	*n = 4;
	if (from <= 1) {
		buf[*n + 1] = ADR_CONTROL_DATA;
		buf[*n + 2] = 1;
		put_addr(buf + *n + 4, 0, msf);
		*n += 8;
	}
	buf[*n + 1] = ADR_CONTROL_DATA;
	buf[*n + 2] = LEAD_OUT;
	put_addr(buf + *n + 4, nb, msf);
	*n += 8;
	buf[2] = 1;	/* first and last track */
	buf[3] = 1;
	return EXEC_OK;
}

/* Format 2: the raw TOC of session 1, points A0h, A1h, A2h and 1. */
static struct exec_rc toc_raw(struct tcq_task *t, uint64_t nb, uint8_t *buf,
			      uint32_t *n)
{
	static const uint8_t points[] = { 0xa0, 0xa1, 0xa2, 0x01 };

	if (t->req.page > 1)
		return exec_cdb_field(6, -1);
	*n = 4;
	for (size_t i = 0; i < ARRAY_SIZE(points); i++) {
		uint8_t *d = buf + *n;

		d[0] = 1;			/* session */
		d[1] = ADR_CONTROL_DATA;
		d[3] = points[i];
		if (points[i] == 0xa0)
			d[8] = 1;	/* PMIN: first track; PSEC 00h:
					 * CD-DA or CD-ROM disc */
		else if (points[i] == 0xa1)
			d[8] = 1;	/* PMIN: last track */
		else if (points[i] == 0xa2)
			put_msf3(d + 8, nb);	/* lead-out start */
		else
			put_msf3(d + 8, 0);	/* track 1 start */
		*n += 11;
	}
	buf[2] = 1;	/* first and last complete session */
	buf[3] = 1;
	return EXEC_OK;
}

struct exec_rc mmc_read_toc(struct tcq_task *t)
{
	uint8_t buf[64];
	uint64_t nb = __atomic_load_n(&t->lun->nblocks, __ATOMIC_ACQUIRE);
	uint32_t n = 0;
	struct exec_rc rc;

	memset(buf, 0, sizeof(buf));
	switch (t->req.subpage) {	/* the Format field */
	case 0:
		rc = toc_formatted(t, nb, buf, &n);
		break;
	case 1:		/* session information: session 1 starts at 0 */
		n = 12;
		buf[2] = buf[3] = 1;
		buf[5] = ADR_CONTROL_DATA;
		buf[6] = 1;
		put_addr(buf + 8, 0, t->req.flags & CDBF_MSF);
		rc = EXEC_OK;
		break;
	case 2:
		rc = toc_raw(t, nb, buf, &n);
		break;
	default:	/* PMA, ATIP, CD-TEXT: not on a pressed disc */
		return exec_cdb_field(2, 3);
	}
	if (exec_failed(rc))
		return rc;
	put_be16(buf, (uint16_t)(n - 2));
	return spc_reply(t, buf, n);
}

/* ---- READ DISC INFORMATION (MMC-6 6.22), READ TRACK INFORMATION ------- */

struct exec_rc mmc_read_disc_info(struct tcq_task *t)
{
	uint8_t buf[34];

	if (t->req.flags != 0)	/* only standard disc information */
		return exec_cdb_field(1, 2);
	memset(buf, 0, sizeof(buf));
	put_be16(buf, sizeof(buf) - 2);
	/* Not erasable, last session complete (11b), disc finalized
	 * (10b). */
	buf[2] = 0x0c | 0x02;
	buf[3] = 1;		/* first track on disc */
	buf[4] = 1;		/* sessions */
	buf[5] = 1;		/* first track in last session */
	buf[6] = 1;		/* last track in last session */
	buf[8] = 0x00;		/* CD-DA or CD-ROM disc */
	/* A complete disc has no next lead-in or lead-out: FFFFFFFFh. */
	put_be32(buf + 16, 0xffffffffu);
	put_be32(buf + 20, 0xffffffffu);
	return spc_reply(t, buf, sizeof(buf));
}

struct exec_rc mmc_read_track_info(struct tcq_task *t)
{
	uint64_t nb = __atomic_load_n(&t->lun->nblocks, __ATOMIC_ACQUIRE);
	uint32_t a = (uint32_t)t->req.lba;
	uint8_t buf[48];

	switch (t->req.flags & 3) {	/* ADDRESS/NUMBER TYPE */
	case 0:		/* the track holding LBA a */
		if (a >= nb)
			return exec_sense(SK_ILLEGAL_REQUEST,
					  ASC_LBA_OUT_OF_RANGE);
		break;
	case 1:		/* track a */
	case 2:		/* the first track of session a */
		if (a != 1)
			return exec_cdb_field(2, -1);
		break;
	default:
		return exec_cdb_field(1, 1);
	}
	memset(buf, 0, sizeof(buf));
	put_be16(buf, sizeof(buf) - 2);
	buf[2] = 1;		/* track */
	buf[3] = 1;		/* session */
	buf[5] = 0x04;		/* track mode: data, uninterrupted */
	buf[6] = 0x01;		/* data mode 1; not blank, no NWA */
	put_be32(buf + 24, (uint32_t)nb);	/* track size */
	return spc_reply(t, buf, sizeof(buf));
}

/* ---- GET EVENT STATUS NOTIFICATION (MMC-6 6.7) ------------------------ */

#define GESN_CLASS_OPCHANGE 1
#define GESN_CLASS_MEDIA 4
#define GESN_CLASS_BUSY 6
/* Supported Event Classes: operational change (Morphing's OCEvent),
 * media, device busy (Core's DBE). */
#define GESN_SUPPORTED (1u << GESN_CLASS_OPCHANGE | 1u << GESN_CLASS_MEDIA | \
			1u << GESN_CLASS_BUSY)

struct exec_rc mmc_gesn(struct tcq_task *t)
{
	struct lun *l = t->lun;
	uint8_t buf[8], asked = t->req.page & GESN_SUPPORTED;
	uint8_t cls = 0, ev = 0;

	if (!(t->req.flags & 1))	/* Polled=0: no asynchronous mode */
		return exec_cdb_field(1, 0);
	memset(buf, 0, sizeof(buf));
	buf[3] = GESN_SUPPORTED;
	if (!asked) {		/* NEA: no class asked for is supported */
		put_be16(buf, 2);
		buf[2] = 0x80;
		return spc_reply(t, buf, 4);
	}
	pthread_mutex_lock(&l->lock);
	/* The lowest class asked for that has an event, else the lowest
	 * class asked for, with "no change". */
	if ((asked & 1u << GESN_CLASS_MEDIA) && l->mmc->event)
		cls = GESN_CLASS_MEDIA;
	else
		cls = (uint8_t)__builtin_ctz(asked);
	if (cls == GESN_CLASS_MEDIA) {
		ev = l->mmc->event;
		l->mmc->event = MMC_EV_NONE;	/* reported: cleared */
	}
	pthread_mutex_unlock(&l->lock);
	put_be16(buf, 6);
	buf[2] = cls;
	buf[4] = ev;		/* event code; status 0: ready, not busy */
	if (cls == GESN_CLASS_MEDIA)	/* Media Present, Door or Tray Open */
		buf[5] = (medium_ready(l) ? 0x02 : 0) |
			 (tray_open(l) ? 0x01 : 0);
	return spc_reply(t, buf, sizeof(buf));
}

/* ---- MECHANISM STATUS (MMC-6 6.11) ------------------------------------ */

struct exec_rc mmc_mechanism_status(struct tcq_task *t)
{
	uint8_t buf[8];

	memset(buf, 0, sizeof(buf));
	/* No fault, no changer, slot 0; mechanism idle; door open while the
	 * tray is; no slot tables. */
	buf[1] = tray_open(t->lun) ? 0x10 : 0;
	return spc_reply(t, buf, sizeof(buf));
}

/* ---- START STOP UNIT (MMC-6 6.39), SET CD SPEED ----------------------- */

struct exec_rc mmc_start_stop(struct tcq_task *t)
{
	struct lun *l = t->lun;
	struct sbc_lun *s = l->sbc;
	uint8_t b4 = t->req.flags;
	bool load = b4 & 0x01, prevented, was_open = false;

	/* LoEj with a power condition of 0 moves the tray; the rest starts
	 * or stops a spindle we have not. */
	if ((b4 >> 4) != 0 || !(b4 & 0x02) || !s)
		return exec_good(t);
	pthread_mutex_lock(&l->lock);
	/* PREVENT holds the disc in (MMC-6 6.39): an eject is refused; a
	 * load finds the tray closed already. */
	prevented = !load && s->nprevent > 0;
	if (!prevented) {
		was_open = s->ejected;
		__atomic_store_n(&s->ejected, !load, __ATOMIC_RELEASE);
		if (was_open == load && !no_image(l))	/* the disc moved */
			l->mmc->event = load ? MMC_EV_NEW_MEDIA
					     : MMC_EV_MEDIA_REMOVAL;
	}
	pthread_mutex_unlock(&l->lock);
	if (prevented)
		return exec_sense(SK_ILLEGAL_REQUEST,
				  ASC_MEDIUM_REMOVAL_PREVENTED);
	/* The same disc back: a new medium to the other initiators. */
	if (load && was_open && !no_image(l))
		ua_establish_others(l, t->nexus, ASC_NOT_READY_TO_READY_CHANGE);
	return exec_good(t);
}

/* The speed asked for is a wish (MMC-6 6.37): we read at memory speed. */
struct exec_rc mmc_set_cd_speed(struct tcq_task *t)
{
	return exec_good(t);
}

/* ---- READ CD, READ CD MSF (MMC-6 6.19, 6.20), WRITE ------------------- */

/* The decoder let through user data only, of a Mode 1 or any sector:
 * the 2048 bytes of each block, as READ (10) reads them. */
struct exec_rc mmc_read_cd(struct tcq_task *t)
{
	if (mmc_profile(t->lun) != MMC_PROFILE_CD_ROM)
		return exec_sense(SK_ILLEGAL_REQUEST,
				  ASC_CANNOT_READ_MEDIUM_INCOMPATIBLE);
	return sbc_read(t);
}

/* A pressed disc takes no writes (DATA PROTECT, WRITE PROTECTED). */
struct exec_rc mmc_write(struct tcq_task *t)
{
	(void)t;
	return exec_sense(SK_DATA_PROTECT, ASC_WRITE_PROTECTED);
}
