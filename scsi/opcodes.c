/* Supported commands and REPORT SUPPORTED OPERATION CODES (SPC-4 6.35). */
#include <string.h>
#include "tcq/byteorder.h"
#include "tcq/compiler.h"
#include "tcq/scsi_proto.h"
#include "scsi/opcodes.h"

/* Timeouts in seconds, by class of command: emulated ones complete at
 * once; media access waits for the backend queue; a cache flush or an
 * UNMAP of a large range can take much longer. */
#define TO_EMUL 1, 5
#define TO_IO 1, 30
#define TO_FLUSH 10, 60
/* SANITIZE and EXTENDED COPY go over a whole medium. */
#define TO_SANITIZE 60, 3600

/* Usage data patterns shared by several commands. CONTROL is 0x04 in every
 * CDB: NACA is honoured (NormACA=1); LINK is rejected like a reserved bit
 * and the vendor bits are ignored. */
#define CTL 0x04
#define LBA4 0xff, 0xff, 0xff, 0xff
#define LBA8 LBA4, LBA4
#define LEN2 0xff, 0xff
#define LEN4 LBA4
/* READ/WRITE byte 1: DPO and FUA; xxPROTECT are 0 (no protection
 * information: a non-zero value is rejected), FUA_NV/obsolete ignored. */
#define RW1 0x18
/* VERIFY byte 1: DPO and BYTCHK; VRPROTECT 0 as above. */
#define VFY1 0x16
/* The GROUP NUMBER field is decoded but not acted on (no grouping
 * function), so it shows as ignored (0) everywhere. */

/*
 * Every command lun_execute() runs, as cdb_decode() checks it. A usage bit
 * is 1 only where a CDB bit changes what the device server does; bits it
 * rejects when set (reserved, protection fields, SP, CmdDt, ANCHOR) and
 * bits nothing reads (PF, IMMED of START STOP UNIT and PRE-FETCH, GROUP
 * NUMBER) are 0.
 */
static const struct opc_entry opc_tab[] = {
	{ SOP_TEST_UNIT_READY, 0, 0, 6, TO_EMUL,
	  { SOP_TEST_UNIT_READY, 0, 0, 0, 0, CTL } },
	{ SOP_REQUEST_SENSE, 0, 0, 6, TO_EMUL,
	  { SOP_REQUEST_SENSE, 0x01 /* DESC */, 0, 0, 0xff, CTL } },
	{ SOP_READ_6, 0, 0, 6, TO_IO,
	  { SOP_READ_6, 0x1f, 0xff, 0xff, 0xff, CTL } },
	{ SOP_WRITE_6, 0, 0, 6, TO_IO,
	  { SOP_WRITE_6, 0x1f, 0xff, 0xff, 0xff, CTL } },
	{ SOP_INQUIRY, 0, 0, 6, TO_EMUL,
	  { SOP_INQUIRY, 0x01 /* EVPD */, 0xff, LEN2, CTL } },
	{ SOP_MODE_SELECT_6, 0, 0, 6, TO_EMUL,
	  { SOP_MODE_SELECT_6, 0, 0, 0, 0xff, CTL } },
	{ SOP_MODE_SENSE_6, 0, 0, 6, TO_EMUL,
	  { SOP_MODE_SENSE_6, 0x08 /* DBD */, 0xff, 0xff, 0xff, CTL } },
	{ SOP_START_STOP_UNIT, 0, 0, 6, TO_EMUL,
	  { SOP_START_STOP_UNIT, 0, 0, 0, 0xf3 /* POWER CONDITION, LOEJ,
						  START */, CTL } },
	{ SOP_PREVENT_ALLOW, 0, 0, 6, TO_EMUL,
	  { SOP_PREVENT_ALLOW, 0, 0, 0, 0x01 /* PREVENT */, CTL } },
	{ SOP_READ_CAPACITY_10, 0, 0, 10, TO_EMUL,
	  { SOP_READ_CAPACITY_10, 0, LBA4, 0, 0, 0x01 /* PMI */, CTL } },
	{ SOP_READ_10, 0, 0, 10, TO_IO,
	  { SOP_READ_10, RW1, LBA4, 0, LEN2, CTL } },
	{ SOP_WRITE_10, 0, 0, 10, TO_IO,
	  { SOP_WRITE_10, RW1, LBA4, 0, LEN2, CTL } },
	{ SOP_VERIFY_10, 0, 0, 10, TO_IO,
	  { SOP_VERIFY_10, VFY1, LBA4, 0, LEN2, CTL } },
	{ SOP_PRE_FETCH_10, 0, 0, 10, TO_EMUL,
	  { SOP_PRE_FETCH_10, 0, LBA4, 0, LEN2, CTL } },
	{ SOP_SYNC_CACHE_10, 0, 0, 10, TO_FLUSH,
	  { SOP_SYNC_CACHE_10, 0x02 /* IMMED */, LBA4, 0, LEN2, CTL } },
	{ SOP_UNMAP, 0, OPC_F_THIN, 10, TO_FLUSH,
	  { SOP_UNMAP, 0, 0, 0, 0, 0, 0, LEN2, CTL } },
	{ SOP_MODE_SELECT_10, 0, 0, 10, TO_EMUL,
	  { SOP_MODE_SELECT_10, 0, 0, 0, 0, 0, 0, LEN2, CTL } },
	{ SOP_MODE_SENSE_10, 0, 0, 10, TO_EMUL,
	  { SOP_MODE_SENSE_10, 0x18 /* LLBAA, DBD */, 0xff, 0xff, 0, 0, 0,
	    LEN2, CTL } },
	/* Reservations (scsi/pr.c). PR OUT byte 2 is SCOPE and TYPE where
	 * the service action reads them; RESERVE/RELEASE take no fields. */
#define PRIN(sa) { SOP_PERSISTENT_RESERVE_IN, sa, OPC_F_SA, 10, TO_EMUL, \
	  { SOP_PERSISTENT_RESERVE_IN, sa, 0, 0, 0, 0, 0, LEN2, CTL } }
#define PROUT(sa, st) { SOP_PERSISTENT_RESERVE_OUT, sa, OPC_F_SA, 10, \
	  TO_EMUL, { SOP_PERSISTENT_RESERVE_OUT, sa, st, 0, 0, LEN4, CTL } }
	PRIN(0), PRIN(1), PRIN(2), PRIN(3),
	PROUT(0, 0), PROUT(1, 0xff), PROUT(2, 0xff), PROUT(3, 0),
	PROUT(4, 0xff), PROUT(5, 0xff), PROUT(6, 0), PROUT(7, 0xff),
#undef PRIN
#undef PROUT
	{ SOP_RESERVE_6, 0, 0, 6, TO_EMUL,
	  { SOP_RESERVE_6, 0, 0, 0, 0, CTL } },
	{ SOP_RELEASE_6, 0, 0, 6, TO_EMUL,
	  { SOP_RELEASE_6, 0, 0, 0, 0, CTL } },
	{ SOP_RESERVE_10, 0, 0, 10, TO_EMUL,
	  { SOP_RESERVE_10, 0, 0, 0, 0, 0, 0, 0, 0, CTL } },
	{ SOP_RELEASE_10, 0, 0, 10, TO_EMUL,
	  { SOP_RELEASE_10, 0, 0, 0, 0, 0, 0, 0, 0, CTL } },
	{ SOP_READ_16, 0, 0, 16, TO_IO,
	  { SOP_READ_16, RW1, LBA8, LEN4, 0, CTL } },
	{ SOP_WRITE_16, 0, 0, 16, TO_IO,
	  { SOP_WRITE_16, RW1, LBA8, LEN4, 0, CTL } },
	{ SOP_VERIFY_16, 0, 0, 16, TO_IO,
	  { SOP_VERIFY_16, VFY1, LBA8, LEN4, 0, CTL } },
	{ SOP_PRE_FETCH_16, 0, 0, 16, TO_EMUL,
	  { SOP_PRE_FETCH_16, 0, LBA8, LEN4, 0, CTL } },
	{ SOP_SYNC_CACHE_16, 0, 0, 16, TO_FLUSH,
	  { SOP_SYNC_CACHE_16, 0x02 /* IMMED */, LBA8, LEN4, 0, CTL } },
	{ SOP_SERVICE_ACTION_IN_16, SAI_READ_CAPACITY_16, OPC_F_SA, 16, TO_EMUL,
	  { SOP_SERVICE_ACTION_IN_16, SAI_READ_CAPACITY_16, LBA8, LEN4,
	    0x01 /* PMI */, CTL } },
	{ SOP_SERVICE_ACTION_IN_16, SAI_GET_LBA_STATUS, OPC_F_SA, 16, TO_IO,
	  { SOP_SERVICE_ACTION_IN_16, SAI_GET_LBA_STATUS, LBA8, LEN4, 0,
	    CTL } },
	{ SOP_REPORT_LUNS, 0, 0, 12, TO_EMUL,
	  { SOP_REPORT_LUNS, 0, 0xff /* SELECT REPORT */, 0, 0, 0, LEN4, 0,
	    CTL } },
	{ SOP_MAINTENANCE_IN, MI_REPORT_SUPPORTED_OPCODES, OPC_F_SA, 12,
	  TO_EMUL,
	  { SOP_MAINTENANCE_IN, MI_REPORT_SUPPORTED_OPCODES,
	    RSOC_RCTD | RSOC_OPT_MASK, 0xff, LEN2, LEN4, 0, CTL } },
	/* scsi/alua.c; byte 1 bits 7:5: PARAMETER DATA FORMAT. */
	{ SOP_MAINTENANCE_IN, MI_REPORT_TARGET_PORT_GROUPS, OPC_F_SA, 12,
	  TO_EMUL,
	  { SOP_MAINTENANCE_IN, 0xe0 | MI_REPORT_TARGET_PORT_GROUPS, 0, 0, 0,
	    0, LEN4, 0, CTL } },
	{ SOP_READ_12, 0, 0, 12, TO_IO,
	  { SOP_READ_12, RW1, LBA4, LEN4, 0, CTL } },
	{ SOP_WRITE_12, 0, 0, 12, TO_IO,
	  { SOP_WRITE_12, RW1, LBA4, LEN4, 0, CTL } },
	{ SOP_VERIFY_12, 0, 0, 12, TO_IO,
	  { SOP_VERIFY_12, VFY1, LBA4, LEN4, 0, CTL } },
	/* SBC-3/4 block commands of scsi/sbc_rmw.c, sbc_ws.c, sbc_media.c,
	 * xcopy.c. WRITE AND VERIFY byte 1: DPO and BYTCHK 0/1 (bit 1). */
	{ SOP_WRITE_VERIFY_10, 0, 0, 10, TO_IO,
	  { SOP_WRITE_VERIFY_10, 0x12, LBA4, 0, LEN2, CTL } },
	{ SOP_WRITE_VERIFY_12, 0, 0, 12, TO_IO,
	  { SOP_WRITE_VERIFY_12, 0x12, LBA4, LEN4, 0, CTL } },
	{ SOP_WRITE_VERIFY_16, 0, 0, 16, TO_IO,
	  { SOP_WRITE_VERIFY_16, 0x12, LBA8, LEN4, 0, CTL } },
	{ SOP_ORWRITE_16, 0, 0, 16, TO_IO,
	  { SOP_ORWRITE_16, RW1, LBA8, LEN4, 0, CTL } },
	{ SOP_COMPARE_AND_WRITE, 0, 0, 16, TO_IO,
	  { SOP_COMPARE_AND_WRITE, RW1, LBA8, 0, 0, 0, 0xff, 0, CTL } },
	{ SOP_WRITE_ATOMIC_16, 0, 0, 16, TO_IO,
	  { SOP_WRITE_ATOMIC_16, RW1, LBA8, 0, 0, LEN2, 0, CTL } },
	/* WRITE SAME byte 1: UNMAP (and NDOB in the 16-byte CDB). */
	{ SOP_WRITE_SAME_10, 0, 0, 10, TO_FLUSH,
	  { SOP_WRITE_SAME_10, 0x08, LBA4, 0, LEN2, CTL } },
	{ SOP_WRITE_SAME_16, 0, 0, 16, TO_FLUSH,
	  { SOP_WRITE_SAME_16, 0x09, LBA8, LEN4, 0, CTL } },
	{ SOP_READ_DEFECT_DATA_10, 0, 0, 10, TO_EMUL,
	  { SOP_READ_DEFECT_DATA_10, 0, 0x1f, 0, 0, 0, 0, LEN2, CTL } },
	{ SOP_READ_DEFECT_DATA_12, 0, 0, 12, TO_EMUL,
	  { SOP_READ_DEFECT_DATA_12, 0x1f, 0, 0, 0, 0, LEN4, 0, CTL } },
	{ SOP_SANITIZE, SAN_OVERWRITE, OPC_F_SA | OPC_F_SANITIZE, 10,
	  TO_SANITIZE,
	  { SOP_SANITIZE, SAN_OVERWRITE, 0, 0, 0, 0, 0, LEN2, CTL } },
	{ SOP_SANITIZE, SAN_BLOCK_ERASE,
	  OPC_F_SA | OPC_F_SANITIZE | OPC_F_THIN, 10, TO_SANITIZE,
	  { SOP_SANITIZE, SAN_BLOCK_ERASE, 0, 0, 0, 0, 0, LEN2, CTL } },
	{ SOP_SANITIZE, SAN_CRYPTO_ERASE,
	  OPC_F_SA | OPC_F_SANITIZE | OPC_F_THIN, 10, TO_SANITIZE,
	  { SOP_SANITIZE, SAN_CRYPTO_ERASE, 0, 0, 0, 0, 0, LEN2, CTL } },
	{ SOP_SANITIZE, SAN_EXIT_FAILURE_MODE, OPC_F_SA | OPC_F_SANITIZE, 10,
	  TO_EMUL,
	  { SOP_SANITIZE, SAN_EXIT_FAILURE_MODE, 0, 0, 0, 0, 0, LEN2, CTL } },
	{ SOP_EXTENDED_COPY, XCOPY_LID1, OPC_F_SA, 16, TO_SANITIZE,
	  { SOP_EXTENDED_COPY, XCOPY_LID1, 0, 0, 0, 0, 0, 0, 0, 0, LEN4, 0,
	    CTL } },
	{ SOP_RECEIVE_COPY_RESULTS, RCR_COPY_STATUS, OPC_F_SA, 16, TO_EMUL,
	  { SOP_RECEIVE_COPY_RESULTS, RCR_COPY_STATUS, 0xff, 0, 0, 0, 0, 0, 0,
	    0, LEN4, 0, CTL } },
	{ SOP_RECEIVE_COPY_RESULTS, RCR_OPERATING_PARAMS, OPC_F_SA, 16,
	  TO_EMUL,
	  { SOP_RECEIVE_COPY_RESULTS, RCR_OPERATING_PARAMS, 0, 0, 0, 0, 0, 0,
	    0, 0, LEN4, 0, CTL } },
};

_Static_assert(ARRAY_SIZE(opc_tab) <= OPC_MAX_ENTRIES,
	       "raise OPC_MAX_ENTRIES");

const struct opc_entry *opc_table(unsigned *n)
{
	*n = ARRAY_SIZE(opc_tab);
	return opc_tab;
}

static bool present(const struct opc_entry *e, unsigned feat)
{
	return (!(e->flags & OPC_F_THIN) || (feat & OPC_FEAT_THIN)) &&
	       (!(e->flags & OPC_F_SANITIZE) || (feat & OPC_FEAT_SANITIZE));
}

const struct opc_entry *opc_find(uint8_t op, uint16_t sa, unsigned feat)
{
	for (size_t i = 0; i < ARRAY_SIZE(opc_tab); i++) {
		const struct opc_entry *e = &opc_tab[i];

		if (e->op != op || !present(e, feat))
			continue;
		if (!(e->flags & OPC_F_SA) || e->sa == sa)
			return e;
	}
	return NULL;
}

bool opc_has_sa(uint8_t op, unsigned feat)
{
	for (size_t i = 0; i < ARRAY_SIZE(opc_tab); i++)
		if (opc_tab[i].op == op && present(&opc_tab[i], feat))
			return opc_tab[i].flags & OPC_F_SA;
	return false;
}

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
	uint32_t off = 4;

	for (size_t i = 0; i < ARRAY_SIZE(opc_tab); i++) {
		const struct opc_entry *e = &opc_tab[i];
		uint8_t d[OPC_DESC_LEN] = { 0 };

		if (!present(e, feat))
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
