/*
 * PDU codec: struct <-> 48-byte BHS for every opcode (RFC 7143 section 11).
 * Encoders clear the BHS first so reserved bytes are always zero.
 */
#include <string.h>
#include "tcq/pdu.h"

/* Byte 0 with the immediate bit. */
static void put_op(uint8_t *bhs, uint8_t op, bool immediate)
{
	bhs[0] = (uint8_t)(op | (immediate ? ISCSI_OP_IMMEDIATE : 0));
}

static void bhs_clear(uint8_t *bhs)
{
	memset(bhs, 0, ISCSI_BHS_LEN);
}

/* ---- SCSI Command / Response ----------------------------------------- */

void pdu_decode_scsi_cmd(const uint8_t *bhs, struct pdu_scsi_cmd *p)
{
	p->immediate = pdu_immediate(bhs);
	p->final = bhs[1] & ISCSI_FLAG_FINAL;
	p->read = bhs[1] & ISCSI_CMD_READ;
	p->write = bhs[1] & ISCSI_CMD_WRITE;
	p->attr = bhs[1] & ISCSI_CMD_ATTR_MASK;
	p->ahs_words = bhs[BHS_TOTAL_AHS_LEN];
	p->data_len = pdu_data_len(bhs);
	p->lun = get_be64(bhs + BHS_LUN);
	p->itt = get_be32(bhs + BHS_ITT);
	p->edtl = get_be32(bhs + BHS_EDTL);
	p->cmdsn = get_be32(bhs + BHS_CMDSN);
	p->expstatsn = get_be32(bhs + BHS_EXPSTATSN);
	memcpy(p->cdb, bhs + BHS_CDB, 16);
}

void pdu_encode_scsi_cmd(uint8_t *bhs, const struct pdu_scsi_cmd *p)
{
	bhs_clear(bhs);
	put_op(bhs, ISCSI_OP_SCSI_CMD, p->immediate);
	bhs[1] = (uint8_t)((p->final ? ISCSI_FLAG_FINAL : 0) |
			   (p->read ? ISCSI_CMD_READ : 0) |
			   (p->write ? ISCSI_CMD_WRITE : 0) |
			   (p->attr & ISCSI_CMD_ATTR_MASK));
	bhs[BHS_TOTAL_AHS_LEN] = p->ahs_words;
	pdu_set_data_len(bhs, p->data_len);
	put_be64(bhs + BHS_LUN, p->lun);
	put_be32(bhs + BHS_ITT, p->itt);
	put_be32(bhs + BHS_EDTL, p->edtl);
	put_be32(bhs + BHS_CMDSN, p->cmdsn);
	put_be32(bhs + BHS_EXPSTATSN, p->expstatsn);
	memcpy(bhs + BHS_CDB, p->cdb, 16);
}

#define SCSI_RSP_FLAG_BITS (ISCSI_FLAG_BIDI_OVERFLOW | ISCSI_FLAG_BIDI_UNDERFLOW | \
			    ISCSI_FLAG_OVERFLOW | ISCSI_FLAG_UNDERFLOW)

void pdu_decode_scsi_rsp(const uint8_t *bhs, struct pdu_scsi_rsp *p)
{
	p->flags = bhs[1] & SCSI_RSP_FLAG_BITS;
	p->response = bhs[2];
	p->status = bhs[3];
	p->data_len = pdu_data_len(bhs);
	p->itt = get_be32(bhs + BHS_ITT);
	p->snack_tag = get_be32(bhs + BHS_F20);
	p->statsn = get_be32(bhs + BHS_STATSN);
	p->expcmdsn = get_be32(bhs + BHS_EXPCMDSN);
	p->maxcmdsn = get_be32(bhs + BHS_MAXCMDSN);
	p->expdatasn = get_be32(bhs + BHS_F36);
	p->bidi_residual = get_be32(bhs + BHS_BIDI_RESIDUAL);
	p->residual = get_be32(bhs + BHS_RESIDUAL);
}

void pdu_encode_scsi_rsp(uint8_t *bhs, const struct pdu_scsi_rsp *p)
{
	bhs_clear(bhs);
	bhs[0] = ISCSI_OP_SCSI_RSP;
	bhs[1] = (uint8_t)(ISCSI_FLAG_FINAL | (p->flags & SCSI_RSP_FLAG_BITS));
	bhs[2] = p->response;
	bhs[3] = p->status;
	pdu_set_data_len(bhs, p->data_len);
	put_be32(bhs + BHS_ITT, p->itt);
	put_be32(bhs + BHS_F20, p->snack_tag);
	put_be32(bhs + BHS_STATSN, p->statsn);
	put_be32(bhs + BHS_EXPCMDSN, p->expcmdsn);
	put_be32(bhs + BHS_MAXCMDSN, p->maxcmdsn);
	put_be32(bhs + BHS_F36, p->expdatasn);
	put_be32(bhs + BHS_BIDI_RESIDUAL, p->bidi_residual);
	put_be32(bhs + BHS_RESIDUAL, p->residual);
}

/* ---- Data-Out / Data-In / R2T ----------------------------------------- */

void pdu_decode_data_out(const uint8_t *bhs, struct pdu_data_out *p)
{
	p->final = bhs[1] & ISCSI_FLAG_FINAL;
	p->data_len = pdu_data_len(bhs);
	p->lun = get_be64(bhs + BHS_LUN);
	p->itt = get_be32(bhs + BHS_ITT);
	p->ttt = get_be32(bhs + BHS_TTT);
	p->expstatsn = get_be32(bhs + BHS_EXPSTATSN);
	p->datasn = get_be32(bhs + BHS_F36);
	p->offset = get_be32(bhs + BHS_F40);
}

void pdu_encode_data_out(uint8_t *bhs, const struct pdu_data_out *p)
{
	bhs_clear(bhs);
	bhs[0] = ISCSI_OP_DATA_OUT;
	bhs[1] = p->final ? ISCSI_FLAG_FINAL : 0;
	pdu_set_data_len(bhs, p->data_len);
	put_be64(bhs + BHS_LUN, p->lun);
	put_be32(bhs + BHS_ITT, p->itt);
	put_be32(bhs + BHS_TTT, p->ttt);
	put_be32(bhs + BHS_EXPSTATSN, p->expstatsn);
	put_be32(bhs + BHS_F36, p->datasn);
	put_be32(bhs + BHS_F40, p->offset);
}

void pdu_decode_data_in(const uint8_t *bhs, struct pdu_data_in *p)
{
	p->final = bhs[1] & ISCSI_FLAG_FINAL;
	p->ack = bhs[1] & ISCSI_FLAG_ACK;
	p->status_present = bhs[1] & ISCSI_FLAG_STATUS;
	p->flags = bhs[1] & (ISCSI_FLAG_OVERFLOW | ISCSI_FLAG_UNDERFLOW);
	p->status = bhs[3];
	p->data_len = pdu_data_len(bhs);
	p->lun = get_be64(bhs + BHS_LUN);
	p->itt = get_be32(bhs + BHS_ITT);
	p->ttt = get_be32(bhs + BHS_TTT);
	p->statsn = get_be32(bhs + BHS_STATSN);
	p->expcmdsn = get_be32(bhs + BHS_EXPCMDSN);
	p->maxcmdsn = get_be32(bhs + BHS_MAXCMDSN);
	p->datasn = get_be32(bhs + BHS_F36);
	p->offset = get_be32(bhs + BHS_F40);
	p->residual = get_be32(bhs + BHS_RESIDUAL);
}

void pdu_encode_data_in(uint8_t *bhs, const struct pdu_data_in *p)
{
	bhs_clear(bhs);
	bhs[0] = ISCSI_OP_DATA_IN;
	bhs[1] = (uint8_t)((p->final ? ISCSI_FLAG_FINAL : 0) |
			   (p->ack ? ISCSI_FLAG_ACK : 0) |
			   (p->status_present ? ISCSI_FLAG_STATUS |
			    (p->flags & (ISCSI_FLAG_OVERFLOW |
					 ISCSI_FLAG_UNDERFLOW)) : 0));
	/* Status and residual are only meaningful with the S bit. */
	if (p->status_present)
		bhs[3] = p->status;
	pdu_set_data_len(bhs, p->data_len);
	put_be64(bhs + BHS_LUN, p->lun);
	put_be32(bhs + BHS_ITT, p->itt);
	put_be32(bhs + BHS_TTT, p->ttt);
	put_be32(bhs + BHS_STATSN, p->statsn);
	put_be32(bhs + BHS_EXPCMDSN, p->expcmdsn);
	put_be32(bhs + BHS_MAXCMDSN, p->maxcmdsn);
	put_be32(bhs + BHS_F36, p->datasn);
	put_be32(bhs + BHS_F40, p->offset);
	if (p->status_present)
		put_be32(bhs + BHS_RESIDUAL, p->residual);
}

void pdu_decode_r2t(const uint8_t *bhs, struct pdu_r2t *p)
{
	p->lun = get_be64(bhs + BHS_LUN);
	p->itt = get_be32(bhs + BHS_ITT);
	p->ttt = get_be32(bhs + BHS_TTT);
	p->statsn = get_be32(bhs + BHS_STATSN);
	p->expcmdsn = get_be32(bhs + BHS_EXPCMDSN);
	p->maxcmdsn = get_be32(bhs + BHS_MAXCMDSN);
	p->r2tsn = get_be32(bhs + BHS_F36);
	p->offset = get_be32(bhs + BHS_F40);
	p->length = get_be32(bhs + BHS_F44);
}

void pdu_encode_r2t(uint8_t *bhs, const struct pdu_r2t *p)
{
	bhs_clear(bhs);
	bhs[0] = ISCSI_OP_R2T;
	bhs[1] = ISCSI_FLAG_FINAL;
	put_be64(bhs + BHS_LUN, p->lun);
	put_be32(bhs + BHS_ITT, p->itt);
	put_be32(bhs + BHS_TTT, p->ttt);
	put_be32(bhs + BHS_STATSN, p->statsn);
	put_be32(bhs + BHS_EXPCMDSN, p->expcmdsn);
	put_be32(bhs + BHS_MAXCMDSN, p->maxcmdsn);
	put_be32(bhs + BHS_F36, p->r2tsn);
	put_be32(bhs + BHS_F40, p->offset);
	put_be32(bhs + BHS_F44, p->length);
}

/* ---- NOP ---------------------------------------------------------------- */

void pdu_decode_nop_out(const uint8_t *bhs, struct pdu_nop_out *p)
{
	p->immediate = pdu_immediate(bhs);
	p->data_len = pdu_data_len(bhs);
	p->lun = get_be64(bhs + BHS_LUN);
	p->itt = get_be32(bhs + BHS_ITT);
	p->ttt = get_be32(bhs + BHS_TTT);
	p->cmdsn = get_be32(bhs + BHS_CMDSN);
	p->expstatsn = get_be32(bhs + BHS_EXPSTATSN);
}

void pdu_encode_nop_out(uint8_t *bhs, const struct pdu_nop_out *p)
{
	bhs_clear(bhs);
	put_op(bhs, ISCSI_OP_NOP_OUT, p->immediate);
	bhs[1] = ISCSI_FLAG_FINAL;
	pdu_set_data_len(bhs, p->data_len);
	put_be64(bhs + BHS_LUN, p->lun);
	put_be32(bhs + BHS_ITT, p->itt);
	put_be32(bhs + BHS_TTT, p->ttt);
	put_be32(bhs + BHS_CMDSN, p->cmdsn);
	put_be32(bhs + BHS_EXPSTATSN, p->expstatsn);
}

void pdu_decode_nop_in(const uint8_t *bhs, struct pdu_nop_in *p)
{
	p->data_len = pdu_data_len(bhs);
	p->lun = get_be64(bhs + BHS_LUN);
	p->itt = get_be32(bhs + BHS_ITT);
	p->ttt = get_be32(bhs + BHS_TTT);
	p->statsn = get_be32(bhs + BHS_STATSN);
	p->expcmdsn = get_be32(bhs + BHS_EXPCMDSN);
	p->maxcmdsn = get_be32(bhs + BHS_MAXCMDSN);
}

void pdu_encode_nop_in(uint8_t *bhs, const struct pdu_nop_in *p)
{
	bhs_clear(bhs);
	bhs[0] = ISCSI_OP_NOP_IN;
	bhs[1] = ISCSI_FLAG_FINAL;
	pdu_set_data_len(bhs, p->data_len);
	put_be64(bhs + BHS_LUN, p->lun);
	put_be32(bhs + BHS_ITT, p->itt);
	put_be32(bhs + BHS_TTT, p->ttt);
	put_be32(bhs + BHS_STATSN, p->statsn);
	put_be32(bhs + BHS_EXPCMDSN, p->expcmdsn);
	put_be32(bhs + BHS_MAXCMDSN, p->maxcmdsn);
}

/* ---- Login ------------------------------------------------------------- */

static uint8_t login_flags(bool transit, bool cont, uint8_t csg, uint8_t nsg)
{
	return (uint8_t)((transit ? ISCSI_LOGIN_TRANSIT : 0) |
			 (cont ? ISCSI_LOGIN_CONTINUE : 0) |
			 ((csg << ISCSI_LOGIN_CSG_SHIFT) & ISCSI_LOGIN_CSG_MASK) |
			 (nsg & ISCSI_LOGIN_NSG_MASK));
}

void pdu_decode_login_req(const uint8_t *bhs, struct pdu_login_req *p)
{
	p->transit = bhs[1] & ISCSI_LOGIN_TRANSIT;
	p->cont = bhs[1] & ISCSI_LOGIN_CONTINUE;
	p->csg = (bhs[1] & ISCSI_LOGIN_CSG_MASK) >> ISCSI_LOGIN_CSG_SHIFT;
	p->nsg = bhs[1] & ISCSI_LOGIN_NSG_MASK;
	p->version_max = bhs[2];
	p->version_min = bhs[3];
	p->data_len = pdu_data_len(bhs);
	memcpy(p->isid, bhs + BHS_ISID, 6);
	p->tsih = get_be16(bhs + BHS_TSIH);
	p->itt = get_be32(bhs + BHS_ITT);
	p->cid = get_be16(bhs + BHS_CID);
	p->cmdsn = get_be32(bhs + BHS_CMDSN);
	p->expstatsn = get_be32(bhs + BHS_EXPSTATSN);
}

void pdu_encode_login_req(uint8_t *bhs, const struct pdu_login_req *p)
{
	bhs_clear(bhs);
	/* Login Requests always carry the immediate bit. */
	put_op(bhs, ISCSI_OP_LOGIN_REQ, true);
	bhs[1] = login_flags(p->transit, p->cont, p->csg, p->nsg);
	bhs[2] = p->version_max;
	bhs[3] = p->version_min;
	pdu_set_data_len(bhs, p->data_len);
	memcpy(bhs + BHS_ISID, p->isid, 6);
	put_be16(bhs + BHS_TSIH, p->tsih);
	put_be32(bhs + BHS_ITT, p->itt);
	put_be16(bhs + BHS_CID, p->cid);
	put_be32(bhs + BHS_CMDSN, p->cmdsn);
	put_be32(bhs + BHS_EXPSTATSN, p->expstatsn);
}

void pdu_decode_login_rsp(const uint8_t *bhs, struct pdu_login_rsp *p)
{
	p->transit = bhs[1] & ISCSI_LOGIN_TRANSIT;
	p->cont = bhs[1] & ISCSI_LOGIN_CONTINUE;
	p->csg = (bhs[1] & ISCSI_LOGIN_CSG_MASK) >> ISCSI_LOGIN_CSG_SHIFT;
	p->nsg = bhs[1] & ISCSI_LOGIN_NSG_MASK;
	p->version_max = bhs[2];
	p->version_active = bhs[3];
	p->data_len = pdu_data_len(bhs);
	memcpy(p->isid, bhs + BHS_ISID, 6);
	p->tsih = get_be16(bhs + BHS_TSIH);
	p->itt = get_be32(bhs + BHS_ITT);
	p->statsn = get_be32(bhs + BHS_STATSN);
	p->expcmdsn = get_be32(bhs + BHS_EXPCMDSN);
	p->maxcmdsn = get_be32(bhs + BHS_MAXCMDSN);
	p->status_class = bhs[36];
	p->status_detail = bhs[37];
}

void pdu_encode_login_rsp(uint8_t *bhs, const struct pdu_login_rsp *p)
{
	bhs_clear(bhs);
	bhs[0] = ISCSI_OP_LOGIN_RSP;
	bhs[1] = login_flags(p->transit, p->cont, p->csg, p->nsg);
	bhs[2] = p->version_max;
	bhs[3] = p->version_active;
	pdu_set_data_len(bhs, p->data_len);
	memcpy(bhs + BHS_ISID, p->isid, 6);
	put_be16(bhs + BHS_TSIH, p->tsih);
	put_be32(bhs + BHS_ITT, p->itt);
	put_be32(bhs + BHS_STATSN, p->statsn);
	put_be32(bhs + BHS_EXPCMDSN, p->expcmdsn);
	put_be32(bhs + BHS_MAXCMDSN, p->maxcmdsn);
	bhs[36] = p->status_class;
	bhs[37] = p->status_detail;
}

/* ---- Text -------------------------------------------------------------- */

void pdu_decode_text_req(const uint8_t *bhs, struct pdu_text_req *p)
{
	p->immediate = pdu_immediate(bhs);
	p->final = bhs[1] & ISCSI_FLAG_FINAL;
	p->cont = bhs[1] & ISCSI_TEXT_CONTINUE;
	p->data_len = pdu_data_len(bhs);
	p->lun = get_be64(bhs + BHS_LUN);
	p->itt = get_be32(bhs + BHS_ITT);
	p->ttt = get_be32(bhs + BHS_TTT);
	p->cmdsn = get_be32(bhs + BHS_CMDSN);
	p->expstatsn = get_be32(bhs + BHS_EXPSTATSN);
}

void pdu_encode_text_req(uint8_t *bhs, const struct pdu_text_req *p)
{
	bhs_clear(bhs);
	put_op(bhs, ISCSI_OP_TEXT_REQ, p->immediate);
	bhs[1] = (uint8_t)((p->final ? ISCSI_FLAG_FINAL : 0) |
			   (p->cont ? ISCSI_TEXT_CONTINUE : 0));
	pdu_set_data_len(bhs, p->data_len);
	put_be64(bhs + BHS_LUN, p->lun);
	put_be32(bhs + BHS_ITT, p->itt);
	put_be32(bhs + BHS_TTT, p->ttt);
	put_be32(bhs + BHS_CMDSN, p->cmdsn);
	put_be32(bhs + BHS_EXPSTATSN, p->expstatsn);
}

void pdu_decode_text_rsp(const uint8_t *bhs, struct pdu_text_rsp *p)
{
	p->final = bhs[1] & ISCSI_FLAG_FINAL;
	p->cont = bhs[1] & ISCSI_TEXT_CONTINUE;
	p->data_len = pdu_data_len(bhs);
	p->lun = get_be64(bhs + BHS_LUN);
	p->itt = get_be32(bhs + BHS_ITT);
	p->ttt = get_be32(bhs + BHS_TTT);
	p->statsn = get_be32(bhs + BHS_STATSN);
	p->expcmdsn = get_be32(bhs + BHS_EXPCMDSN);
	p->maxcmdsn = get_be32(bhs + BHS_MAXCMDSN);
}

void pdu_encode_text_rsp(uint8_t *bhs, const struct pdu_text_rsp *p)
{
	bhs_clear(bhs);
	bhs[0] = ISCSI_OP_TEXT_RSP;
	bhs[1] = (uint8_t)((p->final ? ISCSI_FLAG_FINAL : 0) |
			   (p->cont ? ISCSI_TEXT_CONTINUE : 0));
	pdu_set_data_len(bhs, p->data_len);
	put_be64(bhs + BHS_LUN, p->lun);
	put_be32(bhs + BHS_ITT, p->itt);
	put_be32(bhs + BHS_TTT, p->ttt);
	put_be32(bhs + BHS_STATSN, p->statsn);
	put_be32(bhs + BHS_EXPCMDSN, p->expcmdsn);
	put_be32(bhs + BHS_MAXCMDSN, p->maxcmdsn);
}

/* ---- Logout ------------------------------------------------------------ */

void pdu_decode_logout_req(const uint8_t *bhs, struct pdu_logout_req *p)
{
	p->immediate = pdu_immediate(bhs);
	p->reason = bhs[1] & 0x7f;
	p->data_len = pdu_data_len(bhs);
	p->itt = get_be32(bhs + BHS_ITT);
	p->cid = get_be16(bhs + BHS_CID);
	p->cmdsn = get_be32(bhs + BHS_CMDSN);
	p->expstatsn = get_be32(bhs + BHS_EXPSTATSN);
}

void pdu_encode_logout_req(uint8_t *bhs, const struct pdu_logout_req *p)
{
	bhs_clear(bhs);
	put_op(bhs, ISCSI_OP_LOGOUT_REQ, p->immediate);
	bhs[1] = (uint8_t)(ISCSI_FLAG_FINAL | (p->reason & 0x7f));
	pdu_set_data_len(bhs, p->data_len);
	put_be32(bhs + BHS_ITT, p->itt);
	put_be16(bhs + BHS_CID, p->cid);
	put_be32(bhs + BHS_CMDSN, p->cmdsn);
	put_be32(bhs + BHS_EXPSTATSN, p->expstatsn);
}

void pdu_decode_logout_rsp(const uint8_t *bhs, struct pdu_logout_rsp *p)
{
	p->response = bhs[2];
	p->itt = get_be32(bhs + BHS_ITT);
	p->statsn = get_be32(bhs + BHS_STATSN);
	p->expcmdsn = get_be32(bhs + BHS_EXPCMDSN);
	p->maxcmdsn = get_be32(bhs + BHS_MAXCMDSN);
	p->time2wait = get_be16(bhs + 40);
	p->time2retain = get_be16(bhs + 42);
}

void pdu_encode_logout_rsp(uint8_t *bhs, const struct pdu_logout_rsp *p)
{
	bhs_clear(bhs);
	bhs[0] = ISCSI_OP_LOGOUT_RSP;
	bhs[1] = ISCSI_FLAG_FINAL;
	bhs[2] = p->response;
	put_be32(bhs + BHS_ITT, p->itt);
	put_be32(bhs + BHS_STATSN, p->statsn);
	put_be32(bhs + BHS_EXPCMDSN, p->expcmdsn);
	put_be32(bhs + BHS_MAXCMDSN, p->maxcmdsn);
	put_be16(bhs + 40, p->time2wait);
	put_be16(bhs + 42, p->time2retain);
}

/* ---- Task management ---------------------------------------------------- */

void pdu_decode_tmf_req(const uint8_t *bhs, struct pdu_tmf_req *p)
{
	p->immediate = pdu_immediate(bhs);
	p->function = bhs[1] & 0x7f;
	p->data_len = pdu_data_len(bhs);
	p->lun = get_be64(bhs + BHS_LUN);
	p->itt = get_be32(bhs + BHS_ITT);
	p->rtt = get_be32(bhs + BHS_F20);
	p->cmdsn = get_be32(bhs + BHS_CMDSN);
	p->expstatsn = get_be32(bhs + BHS_EXPSTATSN);
	p->refcmdsn = get_be32(bhs + BHS_F32);
	p->expdatasn = get_be32(bhs + BHS_F36);
}

void pdu_encode_tmf_req(uint8_t *bhs, const struct pdu_tmf_req *p)
{
	bhs_clear(bhs);
	put_op(bhs, ISCSI_OP_TMF_REQ, p->immediate);
	bhs[1] = (uint8_t)(ISCSI_FLAG_FINAL | (p->function & 0x7f));
	pdu_set_data_len(bhs, p->data_len);
	put_be64(bhs + BHS_LUN, p->lun);
	put_be32(bhs + BHS_ITT, p->itt);
	put_be32(bhs + BHS_F20, p->rtt);
	put_be32(bhs + BHS_CMDSN, p->cmdsn);
	put_be32(bhs + BHS_EXPSTATSN, p->expstatsn);
	put_be32(bhs + BHS_F32, p->refcmdsn);
	put_be32(bhs + BHS_F36, p->expdatasn);
}

void pdu_decode_tmf_rsp(const uint8_t *bhs, struct pdu_tmf_rsp *p)
{
	p->response = bhs[2];
	p->itt = get_be32(bhs + BHS_ITT);
	p->statsn = get_be32(bhs + BHS_STATSN);
	p->expcmdsn = get_be32(bhs + BHS_EXPCMDSN);
	p->maxcmdsn = get_be32(bhs + BHS_MAXCMDSN);
}

void pdu_encode_tmf_rsp(uint8_t *bhs, const struct pdu_tmf_rsp *p)
{
	bhs_clear(bhs);
	bhs[0] = ISCSI_OP_TMF_RSP;
	bhs[1] = ISCSI_FLAG_FINAL;
	bhs[2] = p->response;
	put_be32(bhs + BHS_ITT, p->itt);
	put_be32(bhs + BHS_STATSN, p->statsn);
	put_be32(bhs + BHS_EXPCMDSN, p->expcmdsn);
	put_be32(bhs + BHS_MAXCMDSN, p->maxcmdsn);
}

/* ---- Reject / Async / SNACK --------------------------------------------- */

void pdu_decode_reject(const uint8_t *bhs, struct pdu_reject *p)
{
	p->reason = bhs[2];
	p->data_len = pdu_data_len(bhs);
	p->statsn = get_be32(bhs + BHS_STATSN);
	p->expcmdsn = get_be32(bhs + BHS_EXPCMDSN);
	p->maxcmdsn = get_be32(bhs + BHS_MAXCMDSN);
	p->datasn = get_be32(bhs + BHS_F36);
}

void pdu_encode_reject(uint8_t *bhs, const struct pdu_reject *p)
{
	bhs_clear(bhs);
	bhs[0] = ISCSI_OP_REJECT;
	bhs[1] = ISCSI_FLAG_FINAL;
	bhs[2] = p->reason;
	pdu_set_data_len(bhs, p->data_len);
	put_be32(bhs + BHS_ITT, ISCSI_RSVD_TAG);
	put_be32(bhs + BHS_STATSN, p->statsn);
	put_be32(bhs + BHS_EXPCMDSN, p->expcmdsn);
	put_be32(bhs + BHS_MAXCMDSN, p->maxcmdsn);
	put_be32(bhs + BHS_F36, p->datasn);
}

void pdu_decode_async(const uint8_t *bhs, struct pdu_async *p)
{
	p->data_len = pdu_data_len(bhs);
	p->lun = get_be64(bhs + BHS_LUN);
	p->statsn = get_be32(bhs + BHS_STATSN);
	p->expcmdsn = get_be32(bhs + BHS_EXPCMDSN);
	p->maxcmdsn = get_be32(bhs + BHS_MAXCMDSN);
	p->event = bhs[36];
	p->vcode = bhs[37];
	p->param1 = get_be16(bhs + 38);
	p->param2 = get_be16(bhs + 40);
	p->param3 = get_be16(bhs + 42);
}

void pdu_encode_async(uint8_t *bhs, const struct pdu_async *p)
{
	bhs_clear(bhs);
	bhs[0] = ISCSI_OP_ASYNC_MSG;
	bhs[1] = ISCSI_FLAG_FINAL;
	pdu_set_data_len(bhs, p->data_len);
	put_be64(bhs + BHS_LUN, p->lun);
	put_be32(bhs + BHS_ITT, ISCSI_RSVD_TAG);
	put_be32(bhs + BHS_STATSN, p->statsn);
	put_be32(bhs + BHS_EXPCMDSN, p->expcmdsn);
	put_be32(bhs + BHS_MAXCMDSN, p->maxcmdsn);
	bhs[36] = p->event;
	bhs[37] = p->vcode;
	put_be16(bhs + 38, p->param1);
	put_be16(bhs + 40, p->param2);
	put_be16(bhs + 42, p->param3);
}

void pdu_decode_snack(const uint8_t *bhs, struct pdu_snack *p)
{
	p->type = bhs[1] & 0x0f;
	p->lun = get_be64(bhs + BHS_LUN);
	p->itt = get_be32(bhs + BHS_ITT);
	p->ttt = get_be32(bhs + BHS_TTT);
	p->expstatsn = get_be32(bhs + BHS_EXPSTATSN);
	p->begrun = get_be32(bhs + BHS_F40);
	p->runlength = get_be32(bhs + BHS_F44);
}

void pdu_encode_snack(uint8_t *bhs, const struct pdu_snack *p)
{
	bhs_clear(bhs);
	bhs[0] = ISCSI_OP_SNACK_REQ;
	bhs[1] = (uint8_t)(ISCSI_FLAG_FINAL | (p->type & 0x0f));
	put_be64(bhs + BHS_LUN, p->lun);
	put_be32(bhs + BHS_ITT, p->itt);
	put_be32(bhs + BHS_TTT, p->ttt);
	put_be32(bhs + BHS_EXPSTATSN, p->expstatsn);
	put_be32(bhs + BHS_F40, p->begrun);
	put_be32(bhs + BHS_F44, p->runlength);
}

/* ---- AHS of the SCSI Command ------------------------------------------- */

int pdu_decode_cmd_ahs(const uint8_t *ahs, uint32_t len, uint32_t ext_max,
		       struct pdu_cmd_ahs *out)
{
	memset(out, 0, sizeof(*out));
	while (len) {
		uint32_t alen, total;

		if (len < 4)
			return -1;
		alen = get_be16(ahs);
		total = (3 + alen + 3) & ~3u;	/* header, data, padding */
		if (!alen || total > len)
			return -1;
		switch (ahs[2]) {
		case ISCSI_AHS_EXTENDED_CDB:
			/* AHSLength counts the reserved byte before the CDB. */
			if (out->ext_cdb || alen - 1 > ext_max)
				return -1;
			out->ext_cdb = ahs + 4;
			out->ext_cdb_len = alen - 1;
			break;
		case ISCSI_AHS_BIDI_READ_LEN:
			if (alen != 5)
				return -1;
			out->has_bidi_read_len = true;
			out->bidi_read_len = get_be32(ahs + 4);
			break;
		default:
			return -1;
		}
		ahs += total;
		len -= total;
	}
	return 0;
}

uint32_t pdu_encode_ext_cdb_ahs(uint8_t *out, const uint8_t *cdb_tail,
				uint32_t n)
{
	uint32_t total = (4 + n + 3) & ~3u;

	memset(out, 0, total);
	put_be16(out, (uint16_t)(n + 1));
	out[2] = ISCSI_AHS_EXTENDED_CDB;
	memcpy(out + 4, cdb_tail, n);
	return total;
}

/* ---- LUN ----------------------------------------------------------------- */

uint64_t pdu_lun_decode(uint64_t raw)
{
	unsigned method = (unsigned)(raw >> 62);

	/* Single level only: the second to fourth levels must be empty. */
	if (raw & 0x0000ffffffffffffULL)
		return UINT64_MAX;
	switch (method) {
	case 0: /* peripheral: bus 0, LUN in byte 1 */
		if ((raw >> 56) & 0x3f)
			return UINT64_MAX;
		return (raw >> 48) & 0xff;
	case 1: /* flat: 14 bits */
		return (raw >> 48) & 0x3fff;
	default:
		return UINT64_MAX;
	}
}

uint64_t pdu_lun_encode(uint64_t lun)
{
	if (lun < 256)
		return lun << 48;
	return (0x4000ULL | (lun & 0x3fff)) << 48;
}
