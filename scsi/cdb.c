/* CDB decoding for the opcodes the device server implements. */
#include <string.h>
#include "tcq/byteorder.h"
#include "tcq/scsi_proto.h"
#include "scsi/cdb.h"

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

static int bad_field(struct sense_info *err, uint16_t byte, int bit)
{
	sense_field_info(err, ASC_INVALID_FIELD_IN_CDB, true, byte, bit);
	return -1;
}

static int highest_bit(uint8_t v)
{
	return 31 - __builtin_clz(v);
}

/* Reserved bits that are set make the CDB invalid (SPC-4 4.2.1). */
static int rsvd(const uint8_t *cdb, uint16_t byte, uint8_t mask,
		struct sense_info *err)
{
	uint8_t v = cdb[byte] & mask;

	return v ? bad_field(err, byte, highest_bit(v)) : 0;
}

static int rsvd_bytes(const uint8_t *cdb, uint16_t from, uint16_t to,
		      struct sense_info *err)
{
	for (uint16_t i = from; i <= to; i++)
		if (cdb[i])
			return bad_field(err, i, highest_bit(cdb[i]));
	return 0;
}

/* Transfer length in bytes must fit the 32-bit data length fields. */
static int set_xfer(struct cdb_req *req, uint32_t block_size, bool out,
		    uint16_t len_byte, struct sense_info *err)
{
	uint64_t bytes = (uint64_t)req->blocks * block_size;

	if (bytes > UINT32_MAX)
		return bad_field(err, len_byte, -1);
	if (out)
		req->data_out_len = (uint32_t)bytes;
	else
		req->data_in_len = (uint32_t)bytes;
	return 0;
}

/* READ/WRITE/VERIFY (10/12/16) byte 1: xPROTECT, DPO, FUA. */
static int rw_byte1(const uint8_t *cdb, struct cdb_req *req,
		    struct sense_info *err)
{
	if (cdb[1] & 0xe0)	/* no protection information */
		return bad_field(err, 1, 7);
	req->dpo = cdb[1] & 0x10;
	req->fua = cdb[1] & 0x08;
	return 0;
}

static int decode_rw(const uint8_t *cdb, uint16_t clen, uint32_t bs,
		     struct cdb_req *req, struct sense_info *err)
{
	bool out = req->opcode == SOP_WRITE_6 || req->opcode == SOP_WRITE_10 ||
		   req->opcode == SOP_WRITE_12 || req->opcode == SOP_WRITE_16;
	uint16_t len_byte;

	switch (clen) {
	case 6:
		req->lba = get_be24(cdb + 1) & 0x1fffff;
		/* SBC-3 5.x: a transfer length of 0 means 256 blocks here. */
		req->blocks = cdb[4] ? cdb[4] : 256;
		len_byte = 4;
		break;
	case 10:
		if (rw_byte1(cdb, req, err))
			return -1;
		req->lba = get_be32(cdb + 2);
		req->group = cdb[6] & 0x1f;
		req->blocks = get_be16(cdb + 7);
		len_byte = 7;
		break;
	case 12:
		if (rw_byte1(cdb, req, err))
			return -1;
		req->lba = get_be32(cdb + 2);
		req->blocks = get_be32(cdb + 6);
		req->group = cdb[10] & 0x1f;
		len_byte = 6;
		break;
	default:
		if (rw_byte1(cdb, req, err))
			return -1;
		req->lba = get_be64(cdb + 2);
		req->blocks = get_be32(cdb + 10);
		req->group = cdb[14] & 0x1f;
		len_byte = 10;
		break;
	}
	return set_xfer(req, bs, out, len_byte, err);
}

static int decode_verify(const uint8_t *cdb, uint16_t clen, uint32_t bs,
			 struct cdb_req *req, struct sense_info *err)
{
	if (cdb[1] & 0xe0)
		return bad_field(err, 1, 7);
	req->dpo = cdb[1] & 0x10;
	uint8_t bytchk = (cdb[1] >> 1) & 3;
	if (bytchk == 2)	/* reserved (SBC-3 5.25) */
		return bad_field(err, 1, 2);
	req->flags = bytchk;
	if (clen == 10) {
		req->lba = get_be32(cdb + 2);
		req->group = cdb[6] & 0x1f;
		req->blocks = get_be16(cdb + 7);
	} else if (clen == 12) {
		req->lba = get_be32(cdb + 2);
		req->blocks = get_be32(cdb + 6);
		req->group = cdb[10] & 0x1f;
	} else {
		req->lba = get_be64(cdb + 2);
		req->blocks = get_be32(cdb + 10);
		req->group = cdb[14] & 0x1f;
	}
	if (bytchk == 0)
		return 0;
	if (bytchk == 3) {	/* one block, compared with every block */
		req->data_out_len = req->blocks ? bs : 0;
		return 0;
	}
	return set_xfer(req, bs, true, clen == 10 ? 7 : clen == 12 ? 6 : 10,
			err);
}

/* SYNCHRONIZE CACHE and PRE-FETCH share a layout (IMMED in byte 1). */
static int decode_sync(const uint8_t *cdb, uint16_t clen, struct cdb_req *req,
		       struct sense_info *err)
{
	req->immed = cdb[1] & 0x02;
	if (clen == 10) {
		req->lba = get_be32(cdb + 2);
		req->group = cdb[6] & 0x1f;
		req->blocks = get_be16(cdb + 7);
	} else {
		req->lba = get_be64(cdb + 2);
		req->blocks = get_be32(cdb + 10);
		req->group = cdb[14] & 0x1f;
	}
	return 0;
}

static int decode_mode_sense(const uint8_t *cdb, uint16_t clen,
			     struct cdb_req *req, struct sense_info *err)
{
	if (clen == 6) {
		if (rsvd(cdb, 1, 0xf7, err))
			return -1;
		req->alloc_len = cdb[4];
	} else {
		if (rsvd(cdb, 1, 0xe7, err))
			return -1;
		if (cdb[1] & 0x10)
			req->flags |= CDBF_LLBAA;
		req->alloc_len = get_be16(cdb + 7);
	}
	if (cdb[1] & 0x08)
		req->flags |= CDBF_DBD;
	req->flags |= (uint8_t)((cdb[2] >> 6) << CDBF_PC_SHIFT);
	req->page = cdb[2] & 0x3f;
	req->subpage = cdb[3];
	req->data_in_len = req->alloc_len;
	return 0;
}

static int decode_mode_select(const uint8_t *cdb, uint16_t clen,
			      struct cdb_req *req, struct sense_info *err)
{
	if (rsvd(cdb, 1, 0xee, err))
		return -1;
	if (cdb[1] & 0x01)	/* SP: we cannot save parameters */
		return bad_field(err, 1, 0);
	if (cdb[1] & 0x10)
		req->flags |= CDBF_PF;
	req->alloc_len = clen == 6 ? cdb[4] : get_be16(cdb + 7);
	req->data_out_len = req->alloc_len;
	return 0;
}

/* LBA and TRANSFER LENGTH of the 10/12/16-byte write layouts. */
static void lba_len(const uint8_t *cdb, uint16_t clen, struct cdb_req *req)
{
	if (clen == 10) {
		req->lba = get_be32(cdb + 2);
		req->group = cdb[6] & 0x1f;
		req->blocks = get_be16(cdb + 7);
	} else if (clen == 12) {
		req->lba = get_be32(cdb + 2);
		req->blocks = get_be32(cdb + 6);
		req->group = cdb[10] & 0x1f;
	} else {
		req->lba = get_be64(cdb + 2);
		req->blocks = get_be32(cdb + 10);
		req->group = cdb[14] & 0x1f;
	}
}

/* WRITE AND VERIFY (SBC-4 5.49-5.51): BYTCHK 00b or 01b only. */
static int decode_write_verify(const uint8_t *cdb, uint16_t clen,
			       uint32_t bs, struct cdb_req *req,
			       struct sense_info *err)
{
	if (cdb[1] & 0xe0)	/* WRPROTECT: no protection information */
		return bad_field(err, 1, 7);
	if (rsvd(cdb, 1, 0x08, err))
		return -1;
	uint8_t bytchk = (cdb[1] >> 1) & 3;
	if (bytchk > 1)
		return bad_field(err, 1, 2);
	req->dpo = cdb[1] & 0x10;
	req->flags = bytchk;
	lba_len(cdb, clen, req);
	return set_xfer(req, bs, true, clen == 10 ? 7 : clen == 12 ? 6 : 10,
			err);
}

/* WRITE SAME (10/16): ANCHOR needs an anchored state we do not have
 * (ANC_SUP=0); PBDATA/LBDATA are obsolete and not supported. */
static int decode_write_same(const uint8_t *cdb, uint16_t clen, uint32_t bs,
			     struct cdb_req *req, struct sense_info *err)
{
	if (cdb[1] & 0xe0)
		return bad_field(err, 1, 7);
	if (cdb[1] & 0x10)
		return bad_field(err, 1, 4);
	if (cdb[1] & 0x06)
		return bad_field(err, 1, cdb[1] & 0x04 ? 2 : 1);
	if (clen == 10 && (cdb[1] & 0x01))
		return bad_field(err, 1, 0);
	req->flags = cdb[1] & (CDBF_WS_UNMAP | CDBF_WS_NDOB);
	lba_len(cdb, clen, req);
	req->data_out_len = (req->flags & CDBF_WS_NDOB) ? 0 : bs;
	return 0;
}

/* ORWRITE (16), COMPARE AND WRITE, WRITE ATOMIC (16): byte 1 carries
 * xPROTECT, DPO, FUA (and FUA_NV, ignored). */
static int decode_rmw(const uint8_t *cdb, uint32_t bs, struct cdb_req *req,
		      struct sense_info *err)
{
	if (cdb[1] & 0xe0)
		return bad_field(err, 1, 7);
	req->dpo = cdb[1] & 0x10;
	req->fua = cdb[1] & 0x08;
	req->lba = get_be64(cdb + 2);
	req->group = cdb[14] & 0x1f;
	switch (req->opcode) {
	case SOP_COMPARE_AND_WRITE:
		if (rsvd_bytes(cdb, 10, 12, err))
			return -1;
		req->blocks = cdb[13];
		/* verify data then write data: twice the blocks */
		req->data_out_len = 2 * req->blocks * bs;
		return 0;
	case SOP_WRITE_ATOMIC_16:
		if (rsvd_bytes(cdb, 10, 11, err))
			return -1;
		req->blocks = get_be16(cdb + 12);
		return set_xfer(req, bs, true, 12, err);
	default:
		req->blocks = get_be32(cdb + 10);
		return set_xfer(req, bs, true, 10, err);
	}
}

/* PERSISTENT RESERVE IN/OUT, RESERVE/RELEASE (6/10) (scsi/pr.c). */
#define PROUT_PARAM_MAX 65536	/* basic list + every TransportID we keep */
static int decode_reservation(const uint8_t *cdb, struct cdb_req *req,
			      struct sense_info *err)
{
	switch (req->opcode) {
	case SOP_PERSISTENT_RESERVE_IN:
		req->sa = cdb[1] & 0x1f;
		if (rsvd(cdb, 1, 0xe0, err))
			return -1;
		if (req->sa > 3)	/* READ KEYS .. READ FULL STATUS */
			return bad_field(err, 1, 4);
		if (rsvd_bytes(cdb, 2, 6, err))
			return -1;
		req->alloc_len = req->data_in_len = get_be16(cdb + 7);
		return 0;
	case SOP_PERSISTENT_RESERVE_OUT:
		req->sa = cdb[1] & 0x1f;
		if (rsvd(cdb, 1, 0xe0, err))
			return -1;
		if (req->sa > 7)	/* REGISTER .. REGISTER AND MOVE */
			return bad_field(err, 1, 4);
		if (rsvd_bytes(cdb, 3, 4, err))
			return -1;
		req->alloc_len = get_be32(cdb + 5);
		if (req->alloc_len > PROUT_PARAM_MAX)
			return bad_field(err, 5, -1);
		req->data_out_len = req->alloc_len;
		return 0;
	case SOP_RESERVE_6: case SOP_RELEASE_6:
		/* Third-party and extent reservations are not supported. */
		return rsvd(cdb, 1, 0x11, err);
	default:	/* RESERVE(10), RELEASE(10): 3RDPTY, LONGID */
		return rsvd(cdb, 1, 0x12, err);
	}
}

int cdb_decode(const uint8_t *cdb, uint16_t len, uint32_t block_size,
	       struct cdb_req *req, struct sense_info *err)
{
	memset(req, 0, sizeof(*req));
	memset(err, 0, sizeof(*err));
	err->bit = -1;
	if (len < 1) {
		err->key = SK_ILLEGAL_REQUEST;
		err->asc = ASC_INVALID_COMMAND_OPERATION_CODE;
		return -1;
	}
	req->opcode = cdb[0];
	uint16_t clen = cdb_group_len(cdb[0]);
	if (clen == 0 || len < clen) {
		err->key = SK_ILLEGAL_REQUEST;
		err->asc = ASC_INVALID_COMMAND_OPERATION_CODE;
		return -1;
	}
	/* CONTROL: NACA is supported (NormACA=1); LINK is not; bits 5:3
	 * are reserved, bit 1 obsolete, bits 7:6 vendor specific. */
	uint8_t ctl = cdb[clen - 1];
	req->control = ctl;
	if (ctl & CDB_CONTROL_LINK)
		return bad_field(err, clen - 1, 0);
	if (rsvd(cdb, clen - 1, 0x38, err))
		return -1;

	switch (req->opcode) {
	case SOP_TEST_UNIT_READY:
		return rsvd_bytes(cdb, 1, 4, err);
	case SOP_PERSISTENT_RESERVE_IN: case SOP_PERSISTENT_RESERVE_OUT:
	case SOP_RESERVE_6: case SOP_RELEASE_6:
	case SOP_RESERVE_10: case SOP_RELEASE_10:
		return decode_reservation(cdb, req, err);
	case SOP_REQUEST_SENSE:
		if (rsvd(cdb, 1, 0xfe, err))
			return -1;
		if (cdb[1] & 1)
			req->flags |= CDBF_DESC;
		req->alloc_len = req->data_in_len = cdb[4];
		return 0;
	case SOP_INQUIRY:
		if (cdb[1] & 0x02)	/* CmdDt: obsolete, not supported */
			return bad_field(err, 1, 1);
		if (rsvd(cdb, 1, 0xfc, err))
			return -1;
		if (cdb[1] & 0x01)
			req->flags |= CDBF_EVPD;
		req->page = cdb[2];
		if (!(cdb[1] & 0x01) && cdb[2])
			return bad_field(err, 2, -1);
		req->alloc_len = req->data_in_len = get_be16(cdb + 3);
		return 0;
	case SOP_READ_6: case SOP_WRITE_6:
	case SOP_READ_10: case SOP_WRITE_10:
	case SOP_READ_12: case SOP_WRITE_12:
	case SOP_READ_16: case SOP_WRITE_16:
		return decode_rw(cdb, clen, block_size, req, err);
	case SOP_VERIFY_10: case SOP_VERIFY_12: case SOP_VERIFY_16:
		return decode_verify(cdb, clen, block_size, req, err);
	case SOP_SYNC_CACHE_10: case SOP_SYNC_CACHE_16:
	case SOP_PRE_FETCH_10: case SOP_PRE_FETCH_16:
		return decode_sync(cdb, clen, req, err);
	case SOP_READ_CAPACITY_10:
		if (rsvd(cdb, 1, 0xff, err))
			return -1;
		req->lba = get_be32(cdb + 2);
		if (cdb[8] & 1)
			req->flags |= CDBF_PMI;
		else if (req->lba)	/* SBC-3 5.16: LBA needs PMI */
			return bad_field(err, 2, -1);
		req->data_in_len = req->alloc_len = 8;
		return 0;
	case SOP_SERVICE_ACTION_IN_16:
		req->sa = cdb[1] & 0x1f;
		if (req->sa == SAI_GET_LBA_STATUS) {
			req->lba = get_be64(cdb + 2);
			req->alloc_len = req->data_in_len = get_be32(cdb + 10);
			return 0;
		}
		if (req->sa != SAI_READ_CAPACITY_16)
			return bad_field(err, 1, 4);
		req->lba = get_be64(cdb + 2);
		req->alloc_len = req->data_in_len = get_be32(cdb + 10);
		if (cdb[14] & 1)
			req->flags |= CDBF_PMI;
		else if (req->lba)
			return bad_field(err, 2, -1);
		return 0;
	case SOP_MAINTENANCE_IN:
		req->sa = cdb[1] & 0x1f;
		if (req->sa == MI_REPORT_TARGET_PORT_GROUPS) {
			/* SPC-4 6.36: PARAMETER DATA FORMAT 000b or 001b
			 * into flags (scsi/alua.c). */
			if (cdb[1] & 0xc0)
				return bad_field(err, 1, 7);
			if (rsvd_bytes(cdb, 2, 5, err) ||
			    rsvd_bytes(cdb, 10, 10, err))
				return -1;
			req->flags = cdb[1] >> 5;
			req->alloc_len = req->data_in_len = get_be32(cdb + 6);
			return 0;
		}
		if (req->sa != MI_REPORT_SUPPORTED_OPCODES)
			return bad_field(err, 1, 4);
		if (rsvd(cdb, 1, 0xe0, err) || rsvd(cdb, 2, 0x78, err) ||
		    rsvd_bytes(cdb, 10, 10, err))
			return -1;
		req->flags = cdb[2] & 0x87;	/* RCTD, REPORTING OPTIONS */
		req->page = cdb[3];		/* requested opcode */
		req->lba = get_be16(cdb + 4);	/* requested service action */
		req->alloc_len = req->data_in_len = get_be32(cdb + 6);
		return 0;
	case SOP_MODE_SENSE_6: case SOP_MODE_SENSE_10:
		return decode_mode_sense(cdb, clen, req, err);
	case SOP_MODE_SELECT_6: case SOP_MODE_SELECT_10:
		return decode_mode_select(cdb, clen, req, err);
	case SOP_REPORT_LUNS:
		req->page = cdb[2];	/* SELECT REPORT */
		if (req->page > 2)
			return bad_field(err, 2, -1);
		req->alloc_len = req->data_in_len = get_be32(cdb + 6);
		return 0;
	case SOP_START_STOP_UNIT:
		req->immed = cdb[1] & 1;
		req->flags = cdb[4];	/* POWER CONDITION, LOEJ, START */
		return 0;
	case SOP_PREVENT_ALLOW:
		req->flags = cdb[4] & 3;	/* PREVENT */
		return 0;
	case SOP_WRITE_VERIFY_10: case SOP_WRITE_VERIFY_12:
	case SOP_WRITE_VERIFY_16:
		return decode_write_verify(cdb, clen, block_size, req, err);
	case SOP_WRITE_SAME_10: case SOP_WRITE_SAME_16:
		return decode_write_same(cdb, clen, block_size, req, err);
	case SOP_ORWRITE_16: case SOP_COMPARE_AND_WRITE:
	case SOP_WRITE_ATOMIC_16:
		return decode_rmw(cdb, block_size, req, err);
	case SOP_READ_DEFECT_DATA_10:
		if (rsvd(cdb, 2, 0xe0, err))
			return -1;
		req->flags = cdb[2] & 0x1f;	/* REQ_PLIST, REQ_GLIST, format */
		req->alloc_len = req->data_in_len = get_be16(cdb + 7);
		return 0;
	case SOP_READ_DEFECT_DATA_12:
		req->flags = cdb[1] & 0x1f;
		req->lba = get_be32(cdb + 2);	/* ADDRESS DESCRIPTOR INDEX */
		req->alloc_len = req->data_in_len = get_be32(cdb + 6);
		return 0;
	case SOP_SANITIZE:
		if (rsvd(cdb, 1, 0x40, err) || rsvd_bytes(cdb, 2, 6, err))
			return -1;
		req->immed = cdb[1] & 0x80;
		req->sa = cdb[1] & 0x1f;
		if (req->sa != SAN_OVERWRITE && req->sa != SAN_BLOCK_ERASE &&
		    req->sa != SAN_CRYPTO_ERASE &&
		    req->sa != SAN_EXIT_FAILURE_MODE)
			return bad_field(err, 1, 4);
		req->alloc_len = req->data_out_len = get_be16(cdb + 7);
		return 0;
	case SOP_EXTENDED_COPY:
		req->sa = cdb[1] & 0x1f;
		if (req->sa != XCOPY_LID1)
			return bad_field(err, 1, 4);
		req->alloc_len = req->data_out_len = get_be32(cdb + 10);
		return 0;
	case SOP_RECEIVE_COPY_RESULTS:
		req->sa = cdb[1] & 0x1f;
		if (req->sa != RCR_COPY_STATUS && req->sa != RCR_OPERATING_PARAMS)
			return bad_field(err, 1, 4);
		req->page = cdb[2];		/* LIST IDENTIFIER */
		req->alloc_len = req->data_in_len = get_be32(cdb + 10);
		return 0;
	case SOP_UNMAP:
		if (cdb[1] & CDBF_ANCHOR)	/* no anchored state */
			return bad_field(err, 1, 0);
		req->group = cdb[6] & 0x1f;
		req->alloc_len = req->data_out_len = get_be16(cdb + 7);
		return 0;
	default:
		err->key = SK_ILLEGAL_REQUEST;
		err->asc = ASC_INVALID_COMMAND_OPERATION_CODE;
		return -1;
	}
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
	switch (req->opcode) {
	case SOP_READ_6: case SOP_READ_10: case SOP_READ_12: case SOP_READ_16:
	case SOP_VERIFY_10: case SOP_VERIFY_12: case SOP_VERIFY_16:
		return CDB_ACCESS_READ;
	case SOP_WRITE_6: case SOP_WRITE_10: case SOP_WRITE_12:
	case SOP_WRITE_16:
	case SOP_WRITE_VERIFY_10: case SOP_WRITE_VERIFY_12:
	case SOP_WRITE_VERIFY_16:
	case SOP_WRITE_SAME_10: case SOP_WRITE_SAME_16:
	case SOP_ORWRITE_16: case SOP_COMPARE_AND_WRITE:
	case SOP_WRITE_ATOMIC_16:
		return CDB_ACCESS_WRITE;
	default:
		return CDB_ACCESS_NONE;
	}
}
