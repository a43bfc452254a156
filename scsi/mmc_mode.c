/*
 * The MMC device's mode pages (MMC-6 7; MODE SENSE (6/10), MODE SELECT
 * (10)): Read/Write Error Recovery (01h), CD Device Parameters (0Dh),
 * Power Condition (1Ah) and the CD/DVD Capabilities and Mechanical
 * Status page (2Ah, MMC-2's layout, which Linux's sr driver reads for
 * what the drive can do). No block descriptors (MMC-6 7.2) and no
 * changeable parameter: MODE SELECT takes the pages as they are.
 */
#include <string.h>
#include "tcq/byteorder.h"
#include "tcq/compiler.h"
#include "tcq/scsi_proto.h"
#include "scsi/cdb.h"
#include "scsi/lun.h"
#include "scsi/mmc.h"
#include "scsi/spc.h"

enum { PC_CURRENT, PC_CHANGEABLE, PC_DEFAULT, PC_SAVED };

#define MP_RW_ERROR 0x01
#define MP_CD 0x0d
#define MP_POWER 0x1a
#define MP_CAPABILITIES 0x2a
#define MP_ALL 0x3f
#define READ_SPEED_KBS 7056	/* 40 x 176.4 kB/s */

static const uint8_t pages[] = { MP_RW_ERROR, MP_CD, MP_POWER,
				 MP_CAPABILITIES };

/* Writes page code's page into p (changeable: all zero); returns its
 * length, 0 when there is no such page. */
static uint32_t mode_page(struct lun *l, uint8_t code, int pc, uint8_t *p)
{
	uint32_t len;

	switch (code) {
	case MP_RW_ERROR:	/* no error recovery to tune */
	case MP_POWER:		/* no idle or standby timers */
		len = 12;
		break;
	case MP_CD:
		len = 8;
		break;
	case MP_CAPABILITIES:
		len = 22;
		break;
	default:
		return 0;
	}
	memset(p, 0, len);
	p[0] = code;
	p[1] = (uint8_t)(len - 2);
	if (pc == PC_CHANGEABLE)
		return len;
	if (code == MP_CD) {
		put_be16(p + 4, 60);	/* S units per M */
		put_be16(p + 6, 75);	/* F units per S */
	} else if (code == MP_CAPABILITIES) {
		p[2] = 0x08;		/* reads DVD-ROM (and CD-ROM) */
		p[4] = 0x40;		/* multi-session */
		/* A tray (001b) that ejects and locks; Lock State while an
		 * I_T nexus prevents its removal. */
		p[6] = 0x20 | 0x08 | 0x01 | (mmc_prevented(l) ? 0x02 : 0);
		put_be16(p + 8, READ_SPEED_KBS);
		put_be16(p + 14, READ_SPEED_KBS);
	}
	return len;
}

struct exec_rc mmc_mode_sense(struct tcq_task *t)
{
	uint8_t buf[8 + 12 + 8 + 12 + 22];
	bool ten = t->req.opcode == SOP_MODE_SENSE_10;
	int pc = t->req.flags >> CDBF_PC_SHIFT;
	uint8_t page = t->req.page, sub = t->req.subpage;
	uint32_t hl = ten ? 8 : 4, n = hl;

	if (pc == PC_SAVED)
		return exec_field(ASC_SAVING_PARAMETERS_NOT_SUPPORTED, true, 2,
				  7);
	if (sub != 0 && !(sub == 0xff && page == MP_ALL))
		return exec_cdb_field(3, -1);
	memset(buf, 0, hl);
	if (page == MP_ALL) {
		for (size_t i = 0; i < ARRAY_SIZE(pages); i++)
			n += mode_page(t->lun, pages[i], pc, buf + n);
	} else {
		uint32_t pl = mode_page(t->lun, page, pc, buf + n);

		if (!pl)
			return exec_cdb_field(2, 5);
		n += pl;
	}
	if (ten)	/* medium type, device-specific 0; no descriptors */
		put_be16(buf, (uint16_t)(n - 2));
	else
		buf[0] = (uint8_t)(n - 1);
	return spc_reply(t, buf, n);
}

/* Every page sent must be one of ours, as it is: nothing changes. */
struct exec_rc mmc_mode_select(struct tcq_task *t)
{
	const uint8_t *p = t->buf;
	uint32_t len = t->req.data_out_len, off = 8;

	if (len == 0)
		return exec_good(t);
	if (!p || t->buf_len < len)
		return exec_target_failure();
	if (len < 8)
		return exec_sense(SK_ILLEGAL_REQUEST,
				  ASC_PARAMETER_LIST_LENGTH_ERROR);
	if (get_be16(p + 6) != 0)	/* no block descriptors */
		return exec_param_field(6, -1);
	while (off < len) {
		uint8_t cur[32];
		uint32_t pl;

		if (off + 2 > len)
			return exec_sense(SK_ILLEGAL_REQUEST,
					  ASC_PARAMETER_LIST_LENGTH_ERROR);
		if (p[off] & 0x40)	/* SPF: no subpages */
			return exec_param_field((uint16_t)off, 6);
		pl = mode_page(t->lun, p[off] & 0x3f, PC_CURRENT, cur);
		if (!pl)
			return exec_param_field((uint16_t)off, 5);
		if (p[off + 1] != cur[1])
			return exec_param_field((uint16_t)(off + 1), -1);
		if (off + pl > len)
			return exec_sense(SK_ILLEGAL_REQUEST,
					  ASC_PARAMETER_LIST_LENGTH_ERROR);
		for (uint32_t i = 2; i < pl; i++) {
			uint8_t diff = p[off + i] ^ cur[i];

			if (diff)
				return exec_param_field((uint16_t)(off + i),
							31 - __builtin_clz(diff));
		}
		off += pl;
	}
	return exec_good(t);
}
