/*
 * CDB decoding, the generic part: the CDB length against the group code,
 * the CONTROL byte, the command table lookup (scsi/opcodes.c), then the
 * row's own decoder (scsi/cdb_decode.c); and the helpers decoders share.
 */
#include <string.h>
#include "tcq/byteorder.h"
#include "tcq/scsi_proto.h"
#include "scsi/cdb.h"
#include "scsi/cdb_priv.h"
#include "scsi/opcodes.h"

/* SPC-4 4.2.5.1: group code (bits 7:5) to CDB length. */
uint16_t cdb_group_len(uint8_t opcode)
{
	switch (opcode >> 5) {
	case 0: return 6;
	case 1: case 2: return 10;
	case 4: return 16;
	case 5: return 12;
	default: return 0;	/* 3: reserved/variable, 6-7: vendor */
	}
}

int cdb_bad_field(struct sense_info *err, uint16_t byte, int bit)
{
	sense_field_info(err, ASC_INVALID_FIELD_IN_CDB, true, byte, bit);
	return -1;
}

static int highest_bit(uint8_t v)
{
	return 31 - __builtin_clz(v);
}

int cdb_rsvd(const uint8_t *cdb, uint16_t byte, uint8_t mask,
	     struct sense_info *err)
{
	uint8_t v = cdb[byte] & mask;

	return v ? cdb_bad_field(err, byte, highest_bit(v)) : 0;
}

int cdb_rsvd_bytes(const uint8_t *cdb, uint16_t from, uint16_t to,
		   struct sense_info *err)
{
	for (uint16_t i = from; i <= to; i++)
		if (cdb[i])
			return cdb_bad_field(err, i, highest_bit(cdb[i]));
	return 0;
}

int cdb_set_xfer(const struct opc_entry *e, struct cdb_req *req, uint32_t bs,
		 struct sense_info *err)
{
	uint64_t bytes = (uint64_t)req->blocks * bs;

	if (bytes > UINT32_MAX)
		return cdb_bad_field(err, e->len_byte, -1);
	if (e->dir == OPC_DIR_OUT)
		req->data_out_len = (uint32_t)bytes;
	else
		req->data_in_len = (uint32_t)bytes;
	return 0;
}

void cdb_lba_len(const uint8_t *cdb, const struct opc_entry *e,
		 struct cdb_req *req)
{
	const uint8_t *n = cdb + e->len_byte;

	switch (e->cdb_len) {
	case 10:
		req->lba = get_be32(cdb + 2);
		req->group = cdb[6] & 0x1f;
		req->blocks = get_be16(n);
		break;
	case 12:
		req->lba = get_be32(cdb + 2);
		req->blocks = get_be32(n);
		req->group = cdb[10] & 0x1f;
		break;
	default:
		req->lba = get_be64(cdb + 2);
		req->blocks = get_be32(n);
		req->group = cdb[14] & 0x1f;
		break;
	}
}

static int bad_opcode(struct sense_info *err)
{
	err->key = SK_ILLEGAL_REQUEST;
	err->asc = ASC_INVALID_COMMAND_OPERATION_CODE;
	return -1;
}

int cdb_decode(const uint8_t *cdb, uint16_t len, uint32_t block_size,
	       struct cdb_req *req, struct sense_info *err)
{
	return cdb_decode_for(cdb, len, block_size, 0, req, err);
}

int cdb_decode_for(const uint8_t *cdb, uint16_t len, uint32_t block_size,
		   unsigned feat, struct cdb_req *req, struct sense_info *err)
{
	memset(req, 0, sizeof(*req));
	memset(err, 0, sizeof(*err));
	err->bit = -1;
	if (len < 1)
		return bad_opcode(err);
	req->opcode = cdb[0];
	uint16_t clen = cdb_group_len(cdb[0]);
	if (clen == 0 || len < clen)
		return bad_opcode(err);
	/* CONTROL: NACA is supported (NormACA=1); LINK is not; bits 5:3
	 * are reserved, bit 1 obsolete, bits 7:6 vendor specific. */
	uint8_t ctl = cdb[clen - 1];
	req->control = ctl;
	if (ctl & CDB_CONTROL_LINK)
		return cdb_bad_field(err, clen - 1, 0);
	if (cdb_rsvd(cdb, clen - 1, 0x38, err))
		return -1;

	const struct opc_entry *e = opc_first(req->opcode, feat);
	if (!e)
		return bad_opcode(err);
	if (e->decode(e, cdb, block_size, req, err))
		return -1;
	if (e->flags & OPC_F_SA) {
		/* The decoder read and checked the service action. */
		e = opc_find(req->opcode, req->sa,
			     OPC_FEAT_ALL | (feat & OPC_FEAT_MMC));
		if (!e)
			return cdb_bad_field(err, 1, 4);
	}
	req->cmd = e;
	return 0;
}

int cdb_check_range(const struct cdb_req *req, uint64_t nblocks,
		    struct sense_info *err)
{
	if (req->lba <= nblocks && req->blocks <= nblocks - req->lba)
		return 0;
	memset(err, 0, sizeof(*err));
	err->key = SK_ILLEGAL_REQUEST;
	err->asc = ASC_LBA_OUT_OF_RANGE;
	err->bit = -1;
	return -1;
}

enum cdb_access cdb_access(const struct cdb_req *req)
{
	return req->cmd ? (enum cdb_access)req->cmd->access : CDB_ACCESS_NONE;
}
