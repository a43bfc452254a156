/*
 * What the MMC device says it is: GET CONFIGURATION (MMC-6 6.6, its
 * features 5.2-5.3) and, of a DVD-ROM, READ DISC STRUCTURE (MMC-6 6.23).
 *
 * Features, each persistent unless its medium decides: Profile List
 * (0000h: DVD-ROM and CD-ROM), Core (0001h, SCSI family, DBE), Morphing
 * (0002h, OCEvent), Removable Medium (0003h, a tray that ejects and
 * locks), Random Readable (0010h, 2048-byte blocks), CD Read (001Eh) and
 * DVD Read (001Fh), current as the image's profile is (scsi/mmc.h).
 */
#include <string.h>
#include "tcq/byteorder.h"
#include "tcq/compiler.h"
#include "tcq/scsi_proto.h"
#include "scsi/cdb.h"
#include "scsi/lun.h"
#include "scsi/mmc.h"
#include "scsi/spc.h"

/* Feature descriptor header, byte 2: VERSION, PERSISTENT, CURRENT. */
#define FD_PERSISTENT 0x02
#define FD_CURRENT 0x01
#define FD_VERSION(v) ((uint8_t)((v) << 2))

#define F_PROFILE_LIST 0x0000
#define F_CORE 0x0001
#define F_MORPHING 0x0002
#define F_REMOVABLE 0x0003
#define F_RANDOM_READABLE 0x0010
#define F_CD_READ 0x001e
#define F_DVD_READ 0x001f

static const uint16_t features[] = { F_PROFILE_LIST, F_CORE, F_MORPHING,
				     F_REMOVABLE, F_RANDOM_READABLE,
				     F_CD_READ, F_DVD_READ };

/* Writes feature code's descriptor for the current profile into p and
 * returns its length. */
static uint32_t feature(uint16_t code, uint16_t profile, uint8_t *p)
{
	bool medium = profile != MMC_PROFILE_NONE;
	uint8_t b2 = 0;
	uint32_t add = 4;

	memset(p, 0, 16);
	put_be16(p, code);
	switch (code) {
	case F_PROFILE_LIST:	/* most capable first */
		b2 = FD_PERSISTENT | FD_CURRENT;
		add = 8;
		put_be16(p + 4, MMC_PROFILE_DVD_ROM);
		p[6] = profile == MMC_PROFILE_DVD_ROM;	/* CurrentP */
		put_be16(p + 8, MMC_PROFILE_CD_ROM);
		p[10] = profile == MMC_PROFILE_CD_ROM;
		break;
	case F_CORE:
		b2 = FD_VERSION(2) | FD_PERSISTENT | FD_CURRENT;
		add = 8;
		put_be32(p + 4, 1);	/* physical interface: SCSI family */
		p[8] = 0x01;		/* DBE: device busy events */
		break;
	case F_MORPHING:
		b2 = FD_VERSION(1) | FD_PERSISTENT | FD_CURRENT;
		p[4] = 0x02;		/* OCEvent; ASYNC 0: polled */
		break;
	case F_REMOVABLE:
		b2 = FD_PERSISTENT | FD_CURRENT;
		p[4] = 0x20 | 0x08 | 0x01;	/* tray, Eject, Lock */
		break;
	case F_RANDOM_READABLE:
		b2 = medium ? FD_CURRENT : 0;
		add = 8;
		put_be32(p + 4, MMC_BLOCK_SIZE);
		/* Blocking: blocks in a readable unit, a DVD's ECC block
		 * of 16 sectors; PP: the error recovery page is there. */
		put_be16(p + 8, profile == MMC_PROFILE_DVD_ROM ? 16 : 1);
		p[10] = 0x01;
		break;
	case F_CD_READ:		/* no CD-Text, C2 pointers or audio */
		b2 = FD_VERSION(2) |
		     (profile == MMC_PROFILE_CD_ROM ? FD_CURRENT : 0);
		break;
	case F_DVD_READ:	/* no MULTI110, DUAL-R, DUAL-RW */
		b2 = FD_VERSION(1) |
		     (profile == MMC_PROFILE_DVD_ROM ? FD_CURRENT : 0);
		break;
	}
	p[2] = b2;
	p[3] = (uint8_t)add;
	return 4 + add;
}

struct exec_rc mmc_get_configuration(struct tcq_task *t)
{
	uint8_t buf[8 + ARRAY_SIZE(features) * 16];
	uint16_t profile = mmc_profile(t->lun);
	uint16_t start = (uint16_t)t->req.lba;
	uint8_t rt = t->req.flags;	/* RT: 0 all, 1 current, 2 one */
	uint32_t n = 8;

	memset(buf, 0, 8);
	put_be16(buf + 6, profile);
	for (size_t i = 0; i < ARRAY_SIZE(features); i++) {
		uint16_t code = features[i];

		if (code < start || (rt == 2 && code != start))
			continue;
		uint32_t len = feature(code, profile, buf + n);

		if (rt == 1 && !(buf[n + 2] & FD_CURRENT))
			continue;
		n += len;
	}
	put_be32(buf, n - 4);	/* what follows the length itself */
	return spc_reply(t, buf, n);
}

/* ---- READ DISC STRUCTURE ---------------------------------------------- */

#define DS_PHYSICAL 0x00
#define DS_COPYRIGHT 0x01
#define DS_LIST 0xff
#define DVD_FIRST_PSN 0x030000u	/* first physical sector of the data
				 * zone of a DVD-ROM */

/* Format 00h: a single-layer 120 mm DVD-ROM with an embossed layer. */
static uint32_t ds_physical(const struct lun *l, uint8_t *p)
{
	uint64_t nb = __atomic_load_n(&l->nblocks, __ATOMIC_ACQUIRE);

	put_be16(p, 2048 + 2);
	p[4] = 0x01;	/* disk category DVD-ROM, part version 1 */
	p[5] = 0x02;	/* 120 mm, maximum rate 10.08 Mbps */
	p[6] = 0x01;	/* one layer, parallel track path, embossed */
	p[7] = 0x00;	/* 0.267 um/bit, 0.74 um/track */
	put_be32(p + 8, DVD_FIRST_PSN);
	put_be32(p + 12, DVD_FIRST_PSN + (uint32_t)nb - 1);
	return 4 + 2048;
}

struct exec_rc mmc_read_disc_structure(struct tcq_task *t)
{
	uint8_t page[4 + 2048];
	uint32_t n;

	memset(page, 0, sizeof(page));
	if (t->req.page < 0xc0 && mmc_profile(t->lun) != MMC_PROFILE_DVD_ROM)
		return exec_sense(SK_ILLEGAL_REQUEST,
				  ASC_CANNOT_READ_MEDIUM_INCOMPATIBLE);
	if (t->req.page < 0xc0 && t->req.subpage != 0)	/* one layer */
		return exec_cdb_field(6, -1);
	switch (t->req.page) {
	case DS_PHYSICAL:
		n = ds_physical(t->lun, page);
		break;
	case DS_COPYRIGHT:	/* no copy protection system, all regions */
		put_be16(page, 6);
		n = 8;
		break;
	case DS_LIST:		/* the structures above, readable (RDS) */
		put_be16(page, 2 + 3 * 4);
		page[4] = DS_PHYSICAL;
		page[5] = 0x40;
		put_be16(page + 6, 4 + 2048);
		page[8] = DS_COPYRIGHT;
		page[9] = 0x40;
		put_be16(page + 10, 8);
		page[12] = DS_LIST;
		page[13] = 0x40;
		put_be16(page + 14, 4 + 3 * 4);
		n = 4 + 3 * 4;
		break;
	default:
		return exec_cdb_field(7, -1);
	}
	return spc_reply(t, page, n);
}
