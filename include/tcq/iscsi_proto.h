/* iSCSI wire format (RFC 7143): opcodes, flags, BHS field offsets. */
#ifndef TCQ_ISCSI_PROTO_H
#define TCQ_ISCSI_PROTO_H
#include <stdint.h>

#define ISCSI_BHS_LEN 48
#define ISCSI_DIGEST_LEN 4
#define ISCSI_RSVD_TAG 0xffffffffu
#define ISCSI_DEFAULT_PORT 3260
#define ISCSI_VERSION 0x00

/* Byte 0: opcode (low 6 bits) and the immediate bit. */
#define ISCSI_OPCODE_MASK 0x3f
#define ISCSI_OP_IMMEDIATE 0x40

/* Initiator opcodes. */
#define ISCSI_OP_NOP_OUT 0x00
#define ISCSI_OP_SCSI_CMD 0x01
#define ISCSI_OP_TMF_REQ 0x02
#define ISCSI_OP_LOGIN_REQ 0x03
#define ISCSI_OP_TEXT_REQ 0x04
#define ISCSI_OP_DATA_OUT 0x05
#define ISCSI_OP_LOGOUT_REQ 0x06
#define ISCSI_OP_SNACK_REQ 0x10
/* Target opcodes. */
#define ISCSI_OP_NOP_IN 0x20
#define ISCSI_OP_SCSI_RSP 0x21
#define ISCSI_OP_TMF_RSP 0x22
#define ISCSI_OP_LOGIN_RSP 0x23
#define ISCSI_OP_TEXT_RSP 0x24
#define ISCSI_OP_DATA_IN 0x25
#define ISCSI_OP_LOGOUT_RSP 0x26
#define ISCSI_OP_R2T 0x31
#define ISCSI_OP_ASYNC_MSG 0x32
#define ISCSI_OP_REJECT 0x3f

/* Byte 1 flags. */
#define ISCSI_FLAG_FINAL 0x80
/* SCSI Command */
#define ISCSI_CMD_READ 0x40
#define ISCSI_CMD_WRITE 0x20
#define ISCSI_CMD_ATTR_MASK 0x07
/* Task attributes (SCSI Command byte 1, bits 0-2). */
#define ISCSI_ATTR_UNTAGGED 0
#define ISCSI_ATTR_SIMPLE 1
#define ISCSI_ATTR_ORDERED 2
#define ISCSI_ATTR_HEAD_OF_QUEUE 3
#define ISCSI_ATTR_ACA 4
/* SCSI Response / Data-In */
#define ISCSI_FLAG_ACK 0x40          /* Data-In A bit */
#define ISCSI_FLAG_BIDI_OVERFLOW 0x10 /* o */
#define ISCSI_FLAG_BIDI_UNDERFLOW 0x08 /* u */
#define ISCSI_FLAG_OVERFLOW 0x04     /* O */
#define ISCSI_FLAG_UNDERFLOW 0x02    /* U */
#define ISCSI_FLAG_STATUS 0x01       /* Data-In S bit */
/* Login */
#define ISCSI_LOGIN_TRANSIT 0x80
#define ISCSI_LOGIN_CONTINUE 0x40
#define ISCSI_LOGIN_CSG_SHIFT 2
#define ISCSI_LOGIN_CSG_MASK 0x0c
#define ISCSI_LOGIN_NSG_MASK 0x03
#define ISCSI_STAGE_SECURITY 0
#define ISCSI_STAGE_OPERATIONAL 1
#define ISCSI_STAGE_FULL_FEATURE 3
/* Text */
#define ISCSI_TEXT_CONTINUE 0x40

/* SCSI Response byte 2: iSCSI response code. */
#define ISCSI_RSP_COMPLETED 0x00
#define ISCSI_RSP_TARGET_FAILURE 0x01

/* Login status class / detail (byte 36, 37). */
#define ISCSI_LOGIN_STATUS(cls, det) (((cls) << 8) | (det))
#define ISCSI_LS_SUCCESS 0x0000
#define ISCSI_LS_TARGET_MOVED_TEMP 0x0101
#define ISCSI_LS_TARGET_MOVED_PERM 0x0102
#define ISCSI_LS_INIT_ERR 0x0200
#define ISCSI_LS_AUTH_FAILED 0x0201
#define ISCSI_LS_AUTHZ_FAILED 0x0202
#define ISCSI_LS_TARGET_NOT_FOUND 0x0203
#define ISCSI_LS_TARGET_REMOVED 0x0204
#define ISCSI_LS_UNSUPPORTED_VERSION 0x0205
#define ISCSI_LS_TOO_MANY_CONNS 0x0206
#define ISCSI_LS_MISSING_PARAM 0x0207
#define ISCSI_LS_NO_SESSION_SPANNING 0x0208
#define ISCSI_LS_SESSION_TYPE_UNSUPPORTED 0x0209
#define ISCSI_LS_SESSION_NOT_EXIST 0x020a
#define ISCSI_LS_INVALID_DURING_LOGIN 0x020b
#define ISCSI_LS_TARGET_ERROR 0x0300
#define ISCSI_LS_SERVICE_UNAVAILABLE 0x0301
#define ISCSI_LS_OUT_OF_RESOURCES 0x0302

/* Logout reason (byte 1 low 7 bits) and response (byte 2). */
#define ISCSI_LOGOUT_CLOSE_SESSION 0
#define ISCSI_LOGOUT_CLOSE_CONNECTION 1
#define ISCSI_LOGOUT_REMOVE_FOR_RECOVERY 2
#define ISCSI_LOGOUT_RSP_SUCCESS 0
#define ISCSI_LOGOUT_RSP_CID_NOT_FOUND 1
#define ISCSI_LOGOUT_RSP_RECOVERY_UNSUPPORTED 2
#define ISCSI_LOGOUT_RSP_CLEANUP_FAILED 3

/* Task management function codes (byte 1 low 7 bits) and responses. */
#define ISCSI_TMF_ABORT_TASK 1
#define ISCSI_TMF_ABORT_TASK_SET 2
#define ISCSI_TMF_CLEAR_ACA 3
#define ISCSI_TMF_CLEAR_TASK_SET 4
#define ISCSI_TMF_LUN_RESET 5
#define ISCSI_TMF_TARGET_WARM_RESET 6
#define ISCSI_TMF_TARGET_COLD_RESET 7
#define ISCSI_TMF_TASK_REASSIGN 8
#define ISCSI_TMF_QUERY_TASK 9
#define ISCSI_TMF_QUERY_TASK_SET 10
#define ISCSI_TMF_I_T_NEXUS_RESET 11
#define ISCSI_TMF_QUERY_ASYNC_EVENT 12
#define ISCSI_TMF_RSP_COMPLETE 0
#define ISCSI_TMF_RSP_NO_TASK 1
#define ISCSI_TMF_RSP_NO_LUN 2
#define ISCSI_TMF_RSP_TASK_ALLEGIANT 3
#define ISCSI_TMF_RSP_NO_REASSIGN 4
#define ISCSI_TMF_RSP_NOT_SUPPORTED 5
#define ISCSI_TMF_RSP_AUTH_FAILED 6
#define ISCSI_TMF_RSP_SUCCEEDED 7 /* function succeeded (QUERY: task exists) */
#define ISCSI_TMF_RSP_REJECTED 255

/* Reject reasons (byte 2). */
#define ISCSI_REJECT_DIGEST_ERROR 0x02
#define ISCSI_REJECT_SNACK_REJECT 0x03
#define ISCSI_REJECT_PROTOCOL_ERROR 0x04
#define ISCSI_REJECT_CMD_NOT_SUPPORTED 0x05
#define ISCSI_REJECT_IMM_CMD_REJECT 0x06
#define ISCSI_REJECT_TASK_IN_PROGRESS 0x07
#define ISCSI_REJECT_INVALID_DATA_ACK 0x08
#define ISCSI_REJECT_INVALID_PDU_FIELD 0x09
#define ISCSI_REJECT_LONG_OP_REJECT 0x0a
#define ISCSI_REJECT_NEGOTIATION_RESET 0x0b
#define ISCSI_REJECT_WAITING_FOR_LOGOUT 0x0c
/* SNACK types (RFC 7143 11.16.1) */
#define ISCSI_SNACK_DATA_R2T 0
#define ISCSI_SNACK_STATUS 1
#define ISCSI_SNACK_DATA_ACK 2
#define ISCSI_SNACK_RDATA 3

/* Async message events (byte 36). */
#define ISCSI_ASYNC_SCSI_EVENT 0
#define ISCSI_ASYNC_LOGOUT_REQUEST 1
#define ISCSI_ASYNC_DROP_CONNECTION 2
#define ISCSI_ASYNC_DROP_SESSION 3
#define ISCSI_ASYNC_NEGOTIATE 4

/* AHS types. */
#define ISCSI_AHS_EXTENDED_CDB 1
#define ISCSI_AHS_BIDI_READ_LEN 2

/*
 * BHS field offsets. Fields shared by most PDUs sit at the same offsets;
 * opcode-specific ones are named after the PDU.
 */
#define BHS_OPCODE 0
#define BHS_FLAGS 1
#define BHS_B2 2            /* response / reject reason / login versions */
#define BHS_B3 3            /* status / login version-active */
#define BHS_TOTAL_AHS_LEN 4 /* in 4-byte words */
#define BHS_DATA_LEN 5      /* 3 bytes */
#define BHS_LUN 8           /* 8 bytes; also login ISID(8..13)+TSIH(14..15) */
#define BHS_ITT 16
#define BHS_F20 20          /* TTT, EDTL, SNACK tag, RTT, CID+rsvd */
#define BHS_F24 24          /* CmdSN (in) / StatSN (out) */
#define BHS_F28 28          /* ExpStatSN (in) / ExpCmdSN (out) */
#define BHS_F32 32          /* MaxCmdSN (out) / RefCmdSN (TMF) */
#define BHS_F36 36          /* DataSN, R2TSN, ExpDataSN, status class */
#define BHS_F40 40          /* Buffer offset, BegRun */
#define BHS_F44 44          /* Desired data transfer length, residual, RunLength */
#define BHS_CDB 32          /* SCSI Command: 16-byte CDB */
#define BHS_EDTL 20         /* SCSI Command: expected data transfer length */
#define BHS_CMDSN 24
#define BHS_EXPSTATSN 28
#define BHS_STATSN 24
#define BHS_EXPCMDSN 28
#define BHS_MAXCMDSN 32
#define BHS_TTT 20
#define BHS_ISID 8
#define BHS_TSIH 14
#define BHS_CID 20
#define BHS_RESIDUAL 44
#define BHS_BIDI_RESIDUAL 40

#endif
