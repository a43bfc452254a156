/*
 * REPORT SUPPORTED OPERATION CODES (SPC-4 6.35), generated from the
 * command table (scsi/opcodes.c): what the device server reports is what
 * it decodes and runs.
 */
#include <string.h>
#include "tcq/byteorder.h"
#include "tcq/compiler.h"
#include "tcq/scsi_proto.h"
#include "scsi/lun.h"
#include "scsi/opcodes.h"
#include "scsi/rsoc.h"
#include "scsi/spc.h"

/* Appends n bytes at *off, keeping only what fits in cap. */
static void put(uint8_t *buf, uint32_t cap, uint32_t *off, const void *p,
		uint32_t n)
{
	if (*off < cap)
		memcpy(buf + *off, p, MIN(n, cap - *off));
	*off += n;
}

static void put_timeouts(uint8_t *buf, uint32_t cap, uint32_t *off,
			 const struct opc_entry *e)
{
	uint8_t d[OPC_TIMEOUTS_LEN] = { 0 };

	put_be16(d, OPC_TIMEOUTS_LEN - 2);	/* DESCRIPTOR LENGTH: 0Ah */
	put_be32(d + 4, e->nominal_to);
	put_be32(d + 8, e->recommended_to);
	put(buf, cap, off, d, sizeof(d));
}

uint32_t opc_encode_all(uint8_t *buf, uint32_t cap, bool rctd, unsigned feat)
{
	unsigned n;
	const struct opc_entry *tab = opc_table_for(feat, &n);
	uint32_t off = 4;

	for (unsigned i = 0; i < n; i++) {
		const struct opc_entry *e = &tab[i];
		uint8_t d[OPC_DESC_LEN] = { 0 };

		if (!opc_present(e, feat))
			continue;
		d[0] = e->op;
		if (e->flags & OPC_F_SA) {
			put_be16(d + 2, e->sa);
			d[5] |= 0x01;		/* SERVACTV */
		}
		if (rctd)
			d[5] |= 0x02;		/* CTDP */
		put_be16(d + 6, e->cdb_len);
		put(buf, cap, &off, d, sizeof(d));
		if (rctd)
			put_timeouts(buf, cap, &off, e);
	}
	uint8_t h[4];
	uint32_t hoff = 0;
	put_be32(h, off - 4);			/* COMMAND DATA LENGTH */
	put(buf, cap, &hoff, h, sizeof(h));
	return off;
}

static int bad_option(struct sense_info *err)
{
	sense_field_info(err, ASC_INVALID_FIELD_IN_CDB, true, 2, 2);
	return -1;
}

int opc_encode_one(uint8_t *buf, uint32_t cap, unsigned opt, uint8_t op,
		   uint16_t sa, bool rctd, unsigned feat,
		   struct sense_info *err)
{
	bool has_sa = opc_has_sa(op, feat);
	const struct opc_entry *e;
	uint8_t h[4] = { 0 };
	uint32_t off = 0;

	switch (opt) {
	case RSOC_OP:		/* service action ignored; none allowed */
		if (has_sa)
			return bad_option(err);
		break;
	case RSOC_OP_SA:	/* an opcode we run without SAs cannot */
		if (!has_sa && opc_find(op, 0, feat))
			return bad_option(err);
		break;
	case RSOC_OP_ANY:
		break;
	default:		/* 000b is not one_command; 1xxb reserved */
		return bad_option(err);
	}
	/* An opcode we do not run at all is "not supported" whatever the
	 * option; so is an unknown service action of one we do run. */
	e = opc_find(op, has_sa ? sa : 0, feat);
	if (!e) {
		h[1] = RSOC_SUPPORT_NONE;
		put(buf, cap, &off, h, sizeof(h));
		return (int)off;
	}
	h[1] = (uint8_t)((rctd ? 0x80 : 0) | RSOC_SUPPORT_STD);	/* CTDP */
	put_be16(h + 2, e->cdb_len);
	put(buf, cap, &off, h, sizeof(h));
	put(buf, cap, &off, e->usage, e->cdb_len);
	if (rctd)
		put_timeouts(buf, cap, &off, e);
	return (int)off;
}

struct exec_rc rsoc_report_supported_opcodes(struct tcq_task *t)
{
	uint8_t buf[OPC_REPORT_MAX];
	const struct lun *l = t->lun;
	unsigned feat = lun_opc_features(l);
	bool rctd = t->req.flags & RSOC_RCTD;
	unsigned opt = t->req.flags & RSOC_OPT_MASK;
	struct sense_info si;
	int n;

	if (opt == RSOC_ALL)
		n = (int)opc_encode_all(buf, sizeof(buf), rctd, feat);
	else
		n = opc_encode_one(buf, sizeof(buf), opt, t->req.page,
				   (uint16_t)t->req.lba, rctd, feat, &si);
	if (n < 0)
		return exec_si(&si);
	/* Cut to the allocation length (spc_reply); the length fields
	 * still give the full size. */
	return spc_reply(t, buf, MIN((uint32_t)n, sizeof(buf)));
}
