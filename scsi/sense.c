/* Sense data builders (SPC-4 4.5.2 descriptor, 4.5.3 fixed). */
#include <string.h>
#include "tcq/byteorder.h"
#include "tcq/scsi_proto.h"
#include "scsi/lun.h"
#include "scsi/sense.h"

/* Sense-key specific bytes for a field pointer (SPC-4 4.5.2.4.2). */
static void put_sks(uint8_t *p, const struct sense_info *si)
{
	if (si->progress_valid) {
		p[0] = 0x80;
		put_be16(p + 1, si->progress);
		return;
	}
	p[0] = 0x80 | (si->cd ? 0x40 : 0);
	if (si->bit >= 0)
		p[0] |= 0x08 | (si->bit & 7);
	put_be16(p + 1, si->field);
}

uint8_t sense_build(uint8_t *buf, bool desc, const struct sense_info *si)
{
	if (!desc) {
		memset(buf, 0, 18);
		buf[0] = SENSE_FIXED_CURRENT;
		buf[2] = si->key & 0xf;
		/* INFORMATION has 4 bytes here; VALID only when it fits. */
		if (si->info_valid && si->info <= UINT32_MAX) {
			buf[0] |= 0x80;
			put_be32(buf + 3, (uint32_t)si->info);
		}
		buf[7] = 10;
		buf[12] = (uint8_t)(si->asc >> 8);
		buf[13] = (uint8_t)si->asc;
		if (si->sksv)
			put_sks(buf + 15, si);
		return 18;
	}
	uint8_t n = 8;
	memset(buf, 0, 8);
	buf[0] = SENSE_DESC_CURRENT;
	buf[1] = si->key & 0xf;
	buf[2] = (uint8_t)(si->asc >> 8);
	buf[3] = (uint8_t)si->asc;
	if (si->info_valid) {
		uint8_t *d = buf + n;
		memset(d, 0, 12);
		d[0] = 0x00;	/* information descriptor */
		d[1] = 0x0a;
		d[2] = 0x80;	/* VALID */
		put_be64(d + 4, si->info);
		n += 12;
	}
	if (si->sksv) {
		uint8_t *d = buf + n;
		memset(d, 0, 8);
		d[0] = 0x02;	/* sense key specific descriptor */
		d[1] = 0x06;
		put_sks(d + 4, si);
		n += 8;
	}
	buf[7] = n - 8;
	return n;
}

void sense_set_si(struct tcq_task *t, const struct sense_info *si)
{
	bool desc = t->lun && t->lun->d_sense;

	t->status = SAM_STAT_CHECK_CONDITION;
	t->sense_len = sense_build(t->sense, desc, si);
}

void sense_set(struct tcq_task *t, uint8_t key, uint16_t asc)
{
	struct sense_info si = { .key = key, .asc = asc, .bit = -1 };

	sense_set_si(t, &si);
}

void sense_field_info(struct sense_info *si, uint16_t asc, bool cdb,
		      uint16_t byte, int bit)
{
	memset(si, 0, sizeof(*si));
	si->key = SK_ILLEGAL_REQUEST;
	si->asc = asc;
	si->sksv = true;
	si->cd = cdb;
	si->field = byte;
	si->bit = (int8_t)(bit < 0 ? -1 : bit);
}

