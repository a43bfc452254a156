/*
 * The decoders of the command table's rows (see cdb_priv.h): each checks
 * the reserved and unsupported fields of its CDB and extracts what the
 * executor needs into struct cdb_req. Never trusts a length in the CDB.
 */
#include "tcq/byteorder.h"
#include "tcq/scsi_proto.h"
#include "scsi/cdb_priv.h"

/* ---- SPC-4 --------------------------------------------------------------- */

CDB_DECODER(cdb_dec_test_unit_ready)
{
	return cdb_rsvd_bytes(cdb, 1, 4, err);
}

CDB_DECODER(cdb_dec_request_sense)
{
	if (cdb_rsvd(cdb, 1, 0xfe, err))
		return -1;
	if (cdb[1] & 1)
		req->flags |= CDBF_DESC;
	req->alloc_len = req->data_in_len = cdb[4];
	return 0;
}

CDB_DECODER(cdb_dec_inquiry)
{
	if (cdb[1] & 0x02)	/* CmdDt: obsolete, not supported */
		return cdb_bad_field(err, 1, 1);
	if (cdb_rsvd(cdb, 1, 0xfc, err))
		return -1;
	if (cdb[1] & 0x01)
		req->flags |= CDBF_EVPD;
	req->page = cdb[2];
	if (!(cdb[1] & 0x01) && cdb[2])
		return cdb_bad_field(err, 2, -1);
	req->alloc_len = req->data_in_len = get_be16(cdb + 3);
	return 0;
}

CDB_DECODER(cdb_dec_mode_sense)
{
	if (e->cdb_len == 6) {
		if (cdb_rsvd(cdb, 1, 0xf7, err))
			return -1;
		req->alloc_len = cdb[4];
	} else {
		if (cdb_rsvd(cdb, 1, 0xe7, err))
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

CDB_DECODER(cdb_dec_mode_select)
{
	if (cdb_rsvd(cdb, 1, 0xee, err))
		return -1;
	if (cdb[1] & 0x01)	/* SP: we cannot save parameters */
		return cdb_bad_field(err, 1, 0);
	if (cdb[1] & 0x10)
		req->flags |= CDBF_PF;
	req->alloc_len = e->cdb_len == 6 ? cdb[4] : get_be16(cdb + 7);
	req->data_out_len = req->alloc_len;
	return 0;
}

/* LOG SENSE (SPC-4 6.6): byte 1 bit 1 (PPC, obsolete) is not implemented
 * and SP asks to save, which we cannot: both rejected. PC, the page and
 * subpage codes and the PARAMETER POINTER are checked by the executor
 * (scsi/spc_log.c), which knows the LUN's pages. */
CDB_DECODER(cdb_dec_log_sense)
{
	if (cdb_rsvd(cdb, 1, 0xfe, err) || cdb_rsvd_bytes(cdb, 4, 4, err))
		return -1;
	if (cdb[1] & 0x01)	/* SP */
		return cdb_bad_field(err, 1, 0);
	req->flags |= (uint8_t)((cdb[2] >> 6) << CDBF_PC_SHIFT);
	req->page = cdb[2] & 0x3f;
	req->subpage = cdb[3];
	req->param_ptr = get_be16(cdb + 5);
	req->alloc_len = req->data_in_len = get_be16(cdb + 7);
	return 0;
}

CDB_DECODER(cdb_dec_report_luns)
{
	req->page = cdb[2];	/* SELECT REPORT */
	if (req->page > 2)
		return cdb_bad_field(err, 2, -1);
	req->alloc_len = req->data_in_len = get_be32(cdb + 6);
	return 0;
}

/* REPORT TARGET PORT GROUPS (scsi/alua.c) and REPORT SUPPORTED
 * OPERATION CODES (scsi/rsoc.c). */
CDB_DECODER(cdb_dec_maintenance_in)
{
	req->sa = cdb[1] & 0x1f;
	if (req->sa == MI_REPORT_TARGET_PORT_GROUPS) {
		/* SPC-4 6.36: PARAMETER DATA FORMAT 000b or 001b into
		 * flags. */
		if (cdb[1] & 0xc0)
			return cdb_bad_field(err, 1, 7);
		if (cdb_rsvd_bytes(cdb, 2, 5, err) ||
		    cdb_rsvd_bytes(cdb, 10, 10, err))
			return -1;
		req->flags = cdb[1] >> 5;
		req->alloc_len = req->data_in_len = get_be32(cdb + 6);
		return 0;
	}
	if (req->sa != MI_REPORT_SUPPORTED_OPCODES)
		return cdb_bad_field(err, 1, 4);
	if (cdb_rsvd(cdb, 1, 0xe0, err) || cdb_rsvd(cdb, 2, 0x78, err) ||
	    cdb_rsvd_bytes(cdb, 10, 10, err))
		return -1;
	req->flags = cdb[2] & 0x87;	/* RCTD, REPORTING OPTIONS */
	req->page = cdb[3];		/* requested opcode */
	req->lba = get_be16(cdb + 4);	/* requested service action */
	req->alloc_len = req->data_in_len = get_be32(cdb + 6);
	return 0;
}

/* Reservations (scsi/pr_in.c, pr_out.c, pr_spc2.c). */
#define PROUT_PARAM_MAX 65536	/* basic list + every TransportID we keep */

CDB_DECODER(cdb_dec_pr_in)
{
	req->sa = cdb[1] & 0x1f;
	if (cdb_rsvd(cdb, 1, 0xe0, err))
		return -1;
	if (req->sa > 3)	/* READ KEYS .. READ FULL STATUS */
		return cdb_bad_field(err, 1, 4);
	if (cdb_rsvd_bytes(cdb, 2, 6, err))
		return -1;
	req->alloc_len = req->data_in_len = get_be16(cdb + 7);
	return 0;
}

CDB_DECODER(cdb_dec_pr_out)
{
	req->sa = cdb[1] & 0x1f;
	if (cdb_rsvd(cdb, 1, 0xe0, err))
		return -1;
	if (req->sa > 7)	/* REGISTER .. REGISTER AND MOVE */
		return cdb_bad_field(err, 1, 4);
	if (cdb_rsvd_bytes(cdb, 3, 4, err))
		return -1;
	req->alloc_len = get_be32(cdb + 5);
	if (req->alloc_len > PROUT_PARAM_MAX)
		return cdb_bad_field(err, 5, -1);
	req->data_out_len = req->alloc_len;
	return 0;
}

/* RESERVE / RELEASE: third-party and extent reservations are not
 * supported (6: 3RDPTY and the extent bit; 10: 3RDPTY and LONGID). */
CDB_DECODER(cdb_dec_reserve_6)
{
	return cdb_rsvd(cdb, 1, 0x11, err);
}

CDB_DECODER(cdb_dec_reserve_10)
{
	return cdb_rsvd(cdb, 1, 0x12, err);
}

/* Copy operations (scsi/xcopy.c). */
CDB_DECODER(cdb_dec_extended_copy)
{
	req->sa = cdb[1] & 0x1f;
	if (req->sa != XCOPY_LID1 && req->sa != XCOPY_POPULATE_TOKEN &&
	    req->sa != XCOPY_WRITE_USING_TOKEN)
		return cdb_bad_field(err, 1, 4);
	/* POPULATE TOKEN, WRITE USING TOKEN (SBC-4): bytes 2-5 reserved,
	 * LIST IDENTIFIER at 6 (read by scsi/odx*.c). */
	for (int i = 2; req->sa != XCOPY_LID1 && i < 6; i++)
		if (cdb[i])
			return cdb_bad_field(err, (uint16_t)i, -1);
	req->alloc_len = req->data_out_len = get_be32(cdb + 10);
	return 0;
}

CDB_DECODER(cdb_dec_receive_copy_results)
{
	req->sa = cdb[1] & 0x1f;
	if (req->sa != RCR_COPY_STATUS && req->sa != RCR_OPERATING_PARAMS &&
	    req->sa != RCR_ROD_TOKEN_INFO)
		return cdb_bad_field(err, 1, 4);
	/* LIST IDENTIFIER: byte 2; RECEIVE ROD TOKEN INFORMATION's is
	 * bytes 2-5 (scsi/odx.c reads it there). */
	req->page = cdb[2];
	req->alloc_len = req->data_in_len = get_be32(cdb + 10);
	return 0;
}

/* ---- SBC-3 --------------------------------------------------------------- */

/* READ/WRITE/WRITE ATOMIC... byte 1: xPROTECT, DPO, FUA. */
static int rw_byte1(const uint8_t *cdb, struct cdb_req *req,
		    struct sense_info *err)
{
	if (cdb[1] & 0xe0)	/* no protection information */
		return cdb_bad_field(err, 1, 7);
	req->dpo = cdb[1] & 0x10;
	req->fua = cdb[1] & 0x08;
	return 0;
}

CDB_DECODER(cdb_dec_read_write)
{
	if (e->cdb_len == 6) {
		req->lba = get_be24(cdb + 1) & 0x1fffff;
		/* SBC-3 5.x: a transfer length of 0 means 256 blocks here. */
		req->blocks = cdb[e->len_byte] ? cdb[e->len_byte] : 256;
	} else {
		if (rw_byte1(cdb, req, err))
			return -1;
		cdb_lba_len(cdb, e, req);
	}
	return cdb_set_xfer(e, req, bs, err);
}

CDB_DECODER(cdb_dec_verify)
{
	if (cdb[1] & 0xe0)
		return cdb_bad_field(err, 1, 7);
	req->dpo = cdb[1] & 0x10;
	uint8_t bytchk = (cdb[1] >> 1) & 3;
	if (bytchk == 2)	/* reserved (SBC-3 5.25) */
		return cdb_bad_field(err, 1, 2);
	req->flags = bytchk;
	cdb_lba_len(cdb, e, req);
	if (bytchk == 0)
		return 0;
	if (bytchk == 3) {	/* one block, compared with every block */
		req->data_out_len = req->blocks ? bs : 0;
		return 0;
	}
	return cdb_set_xfer(e, req, bs, err);
}

/* SYNCHRONIZE CACHE and PRE-FETCH share a layout (IMMED in byte 1). */
CDB_DECODER(cdb_dec_sync)
{
	req->immed = cdb[1] & 0x02;
	cdb_lba_len(cdb, e, req);
	return 0;
}

CDB_DECODER(cdb_dec_read_capacity_10)
{
	if (cdb_rsvd(cdb, 1, 0xff, err))
		return -1;
	req->lba = get_be32(cdb + 2);
	if (cdb[8] & 1)
		req->flags |= CDBF_PMI;
	else if (req->lba)	/* SBC-3 5.16: LBA needs PMI */
		return cdb_bad_field(err, 2, -1);
	req->data_in_len = req->alloc_len = 8;
	return 0;
}

/* READ CAPACITY (16) and GET LBA STATUS. */
CDB_DECODER(cdb_dec_service_action_in)
{
	req->sa = cdb[1] & 0x1f;
	if (req->sa == SAI_GET_LBA_STATUS) {
		req->lba = get_be64(cdb + 2);
		req->alloc_len = req->data_in_len = get_be32(cdb + 10);
		return 0;
	}
	if (req->sa != SAI_READ_CAPACITY_16)
		return cdb_bad_field(err, 1, 4);
	req->lba = get_be64(cdb + 2);
	req->alloc_len = req->data_in_len = get_be32(cdb + 10);
	if (cdb[14] & 1)
		req->flags |= CDBF_PMI;
	else if (req->lba)
		return cdb_bad_field(err, 2, -1);
	return 0;
}

CDB_DECODER(cdb_dec_start_stop)
{
	req->immed = cdb[1] & 1;
	req->flags = cdb[4];	/* POWER CONDITION, LOEJ, START */
	return 0;
}

CDB_DECODER(cdb_dec_prevent_allow)
{
	req->flags = cdb[4] & 3;	/* PREVENT */
	return 0;
}

/* WRITE AND VERIFY (SBC-4 5.49-5.51): BYTCHK 00b or 01b only. */
CDB_DECODER(cdb_dec_write_verify)
{
	if (cdb[1] & 0xe0)	/* WRPROTECT: no protection information */
		return cdb_bad_field(err, 1, 7);
	if (cdb_rsvd(cdb, 1, 0x08, err))
		return -1;
	uint8_t bytchk = (cdb[1] >> 1) & 3;
	if (bytchk > 1)
		return cdb_bad_field(err, 1, 2);
	req->dpo = cdb[1] & 0x10;
	req->flags = bytchk;
	cdb_lba_len(cdb, e, req);
	return cdb_set_xfer(e, req, bs, err);
}

/* WRITE SAME (10/16): ANCHOR needs an anchored state we do not have
 * (ANC_SUP=0); PBDATA/LBDATA are obsolete and not supported. */
CDB_DECODER(cdb_dec_write_same)
{
	if (cdb[1] & 0xe0)
		return cdb_bad_field(err, 1, 7);
	if (cdb[1] & 0x10)
		return cdb_bad_field(err, 1, 4);
	if (cdb[1] & 0x06)
		return cdb_bad_field(err, 1, cdb[1] & 0x04 ? 2 : 1);
	if (e->cdb_len == 10 && (cdb[1] & 0x01))
		return cdb_bad_field(err, 1, 0);
	req->flags = cdb[1] & (CDBF_WS_UNMAP | CDBF_WS_NDOB);
	cdb_lba_len(cdb, e, req);
	req->data_out_len = (req->flags & CDBF_WS_NDOB) ? 0 : bs;
	return 0;
}

/* ORWRITE (16), COMPARE AND WRITE, WRITE ATOMIC (16): byte 1 carries
 * xPROTECT, DPO, FUA (and FUA_NV, ignored); the LBA is 8 bytes at 2. */
static int rmw_common(const uint8_t *cdb, struct cdb_req *req,
		      struct sense_info *err)
{
	if (rw_byte1(cdb, req, err))
		return -1;
	req->lba = get_be64(cdb + 2);
	req->group = cdb[14] & 0x1f;
	return 0;
}

CDB_DECODER(cdb_dec_orwrite)
{
	if (rmw_common(cdb, req, err))
		return -1;
	req->blocks = get_be32(cdb + e->len_byte);
	return cdb_set_xfer(e, req, bs, err);
}

CDB_DECODER(cdb_dec_compare_and_write)
{
	if (rmw_common(cdb, req, err) || cdb_rsvd_bytes(cdb, 10, 12, err))
		return -1;
	req->blocks = cdb[e->len_byte];
	/* verify data then write data: twice the blocks */
	req->data_out_len = 2 * req->blocks * bs;
	return 0;
}

CDB_DECODER(cdb_dec_write_atomic)
{
	if (rmw_common(cdb, req, err) || cdb_rsvd_bytes(cdb, 10, 11, err))
		return -1;
	req->blocks = get_be16(cdb + e->len_byte);
	return cdb_set_xfer(e, req, bs, err);
}

CDB_DECODER(cdb_dec_read_defect_10)
{
	if (cdb_rsvd(cdb, 2, 0xe0, err))
		return -1;
	req->flags = cdb[2] & 0x1f;	/* REQ_PLIST, REQ_GLIST, format */
	req->alloc_len = req->data_in_len = get_be16(cdb + 7);
	return 0;
}

CDB_DECODER(cdb_dec_read_defect_12)
{
	req->flags = cdb[1] & 0x1f;
	req->lba = get_be32(cdb + 2);	/* ADDRESS DESCRIPTOR INDEX */
	req->alloc_len = req->data_in_len = get_be32(cdb + 6);
	return 0;
}

CDB_DECODER(cdb_dec_sanitize)
{
	if (cdb_rsvd(cdb, 1, 0x40, err) || cdb_rsvd_bytes(cdb, 2, 6, err))
		return -1;
	req->immed = cdb[1] & 0x80;
	req->sa = cdb[1] & 0x1f;
	if (req->sa != SAN_OVERWRITE && req->sa != SAN_BLOCK_ERASE &&
	    req->sa != SAN_CRYPTO_ERASE && req->sa != SAN_EXIT_FAILURE_MODE)
		return cdb_bad_field(err, 1, 4);
	req->alloc_len = req->data_out_len = get_be16(cdb + 7);
	return 0;
}

CDB_DECODER(cdb_dec_unmap)
{
	if (cdb[1] & CDBF_ANCHOR)	/* no anchored state */
		return cdb_bad_field(err, 1, 0);
	req->group = cdb[6] & 0x1f;
	req->alloc_len = req->data_out_len = get_be16(cdb + 7);
	return 0;
}
