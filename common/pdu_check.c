/*
 * What a receiver checks on a BHS before it reads further (pdu.h): the
 * opcodes of each direction, and the structural rules of RFC 7143 11 a
 * PDU must meet (AHS only where allowed, reserved and fixed bits).
 */
#include "tcq/pdu.h"

const char *pdu_opcode_name(uint8_t opcode)
{
	switch (opcode) {
	case ISCSI_OP_NOP_OUT: return "NOP-Out";
	case ISCSI_OP_SCSI_CMD: return "SCSI-Command";
	case ISCSI_OP_TMF_REQ: return "TMF-Request";
	case ISCSI_OP_LOGIN_REQ: return "Login-Request";
	case ISCSI_OP_TEXT_REQ: return "Text-Request";
	case ISCSI_OP_DATA_OUT: return "Data-Out";
	case ISCSI_OP_LOGOUT_REQ: return "Logout-Request";
	case ISCSI_OP_SNACK_REQ: return "SNACK";
	case ISCSI_OP_NOP_IN: return "NOP-In";
	case ISCSI_OP_SCSI_RSP: return "SCSI-Response";
	case ISCSI_OP_TMF_RSP: return "TMF-Response";
	case ISCSI_OP_LOGIN_RSP: return "Login-Response";
	case ISCSI_OP_TEXT_RSP: return "Text-Response";
	case ISCSI_OP_DATA_IN: return "Data-In";
	case ISCSI_OP_LOGOUT_RSP: return "Logout-Response";
	case ISCSI_OP_R2T: return "R2T";
	case ISCSI_OP_ASYNC_MSG: return "Async-Message";
	case ISCSI_OP_REJECT: return "Reject";
	default: return "unknown";
	}
}

bool pdu_opcode_is_initiator(uint8_t opcode)
{
	switch (opcode) {
	case ISCSI_OP_NOP_OUT:
	case ISCSI_OP_SCSI_CMD:
	case ISCSI_OP_TMF_REQ:
	case ISCSI_OP_LOGIN_REQ:
	case ISCSI_OP_TEXT_REQ:
	case ISCSI_OP_DATA_OUT:
	case ISCSI_OP_LOGOUT_REQ:
	case ISCSI_OP_SNACK_REQ:
		return true;
	default:
		return false;
	}
}

static bool pdu_opcode_is_target(uint8_t opcode)
{
	switch (opcode) {
	case ISCSI_OP_NOP_IN:
	case ISCSI_OP_SCSI_RSP:
	case ISCSI_OP_TMF_RSP:
	case ISCSI_OP_LOGIN_RSP:
	case ISCSI_OP_TEXT_RSP:
	case ISCSI_OP_DATA_IN:
	case ISCSI_OP_LOGOUT_RSP:
	case ISCSI_OP_R2T:
	case ISCSI_OP_ASYNC_MSG:
	case ISCSI_OP_REJECT:
		return true;
	default:
		return false;
	}
}

/* ---- Structural checks --------------------------------------------------- */

#define BAD(reason, text) do { *why = (text); return (reason); } while (0)

int pdu_check_initiator_bhs(const uint8_t *bhs, const char **why)
{
	static const char *unused;
	uint8_t op = pdu_opcode(bhs);
	uint8_t f = bhs[1];

	if (!why)
		why = &unused;
	*why = NULL;
	if (!pdu_opcode_is_initiator(op))
		BAD(ISCSI_REJECT_CMD_NOT_SUPPORTED, "opcode not valid from an initiator");
	/* Only the SCSI Command may carry AHS (extended CDB, bidi length). */
	if (op != ISCSI_OP_SCSI_CMD && bhs[BHS_TOTAL_AHS_LEN])
		BAD(ISCSI_REJECT_PROTOCOL_ERROR, "AHS on an opcode that has none");

	switch (op) {
	case ISCSI_OP_SCSI_CMD:
		if ((f & ISCSI_CMD_READ) && (f & ISCSI_CMD_WRITE) &&
		    !bhs[BHS_TOTAL_AHS_LEN])
			BAD(ISCSI_REJECT_PROTOCOL_ERROR,
			    "bidirectional command without Bidi AHS");
		if ((f & ISCSI_CMD_ATTR_MASK) > ISCSI_ATTR_ACA)
			BAD(ISCSI_REJECT_INVALID_PDU_FIELD, "reserved task attribute");
		break;
	case ISCSI_OP_NOP_OUT:
	case ISCSI_OP_TMF_REQ:
	case ISCSI_OP_LOGOUT_REQ:
	case ISCSI_OP_SNACK_REQ:
		if (!(f & ISCSI_FLAG_FINAL))
			BAD(ISCSI_REJECT_PROTOCOL_ERROR, "F bit must be set");
		if (op == ISCSI_OP_TMF_REQ && (f & 0x7f) == 0)
			BAD(ISCSI_REJECT_INVALID_PDU_FIELD, "TMF function 0");
		if (op == ISCSI_OP_LOGOUT_REQ &&
		    (f & 0x7f) > ISCSI_LOGOUT_REMOVE_FOR_RECOVERY)
			BAD(ISCSI_REJECT_INVALID_PDU_FIELD, "bad logout reason");
		/* TMF and Logout carry no data segment. */
		if ((op == ISCSI_OP_TMF_REQ || op == ISCSI_OP_LOGOUT_REQ ||
		     op == ISCSI_OP_SNACK_REQ) && pdu_data_len(bhs))
			BAD(ISCSI_REJECT_PROTOCOL_ERROR, "unexpected data segment");
		break;
	case ISCSI_OP_LOGIN_REQ:
		if ((f & ISCSI_LOGIN_TRANSIT) && (f & ISCSI_LOGIN_CONTINUE))
			BAD(ISCSI_REJECT_PROTOCOL_ERROR, "login with both T and C");
		break;
	case ISCSI_OP_TEXT_REQ:
		if ((f & ISCSI_FLAG_FINAL) && (f & ISCSI_TEXT_CONTINUE))
			BAD(ISCSI_REJECT_PROTOCOL_ERROR, "text with both F and C");
		break;
	}
	return 0;
}

int pdu_check_target_bhs(const uint8_t *bhs, const char **why)
{
	static const char *unused;
	uint8_t op = pdu_opcode(bhs);
	uint8_t f = bhs[1];

	if (!why)
		why = &unused;
	*why = NULL;
	if (!pdu_opcode_is_target(op))
		BAD(ISCSI_REJECT_CMD_NOT_SUPPORTED, "opcode not valid from a target");
	if (op != ISCSI_OP_SCSI_RSP && bhs[BHS_TOTAL_AHS_LEN])
		BAD(ISCSI_REJECT_PROTOCOL_ERROR, "AHS on an opcode that has none");

	switch (op) {
	case ISCSI_OP_SCSI_RSP:
	case ISCSI_OP_NOP_IN:
	case ISCSI_OP_TMF_RSP:
	case ISCSI_OP_LOGOUT_RSP:
	case ISCSI_OP_R2T:
	case ISCSI_OP_ASYNC_MSG:
	case ISCSI_OP_REJECT:
		if (!(f & ISCSI_FLAG_FINAL))
			BAD(ISCSI_REJECT_PROTOCOL_ERROR, "F bit must be set");
		break;
	case ISCSI_OP_DATA_IN:
		if ((f & ISCSI_FLAG_STATUS) && !(f & ISCSI_FLAG_FINAL))
			BAD(ISCSI_REJECT_PROTOCOL_ERROR, "S bit without F bit");
		if ((f & (ISCSI_FLAG_OVERFLOW | ISCSI_FLAG_UNDERFLOW)) &&
		    !(f & ISCSI_FLAG_STATUS))
			BAD(ISCSI_REJECT_PROTOCOL_ERROR, "residual flags without S bit");
		if ((f & ISCSI_FLAG_OVERFLOW) && (f & ISCSI_FLAG_UNDERFLOW))
			BAD(ISCSI_REJECT_PROTOCOL_ERROR, "both O and U set");
		break;
	case ISCSI_OP_LOGIN_RSP:
		if ((f & ISCSI_LOGIN_TRANSIT) && (f & ISCSI_LOGIN_CONTINUE))
			BAD(ISCSI_REJECT_PROTOCOL_ERROR, "login with both T and C");
		break;
	case ISCSI_OP_TEXT_RSP:
		if ((f & ISCSI_FLAG_FINAL) && (f & ISCSI_TEXT_CONTINUE))
			BAD(ISCSI_REJECT_PROTOCOL_ERROR, "text with both F and C");
		break;
	}
	return 0;
}

