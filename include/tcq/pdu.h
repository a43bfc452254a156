/*
 * PDU codec shared by the target and the native initiator: one decoded
 * struct per opcode, and a decode/encode pair for each that converts
 * between it and a 48-byte BHS. Encoders write every byte of the BHS
 * (reserved bytes zero) except the data segment length, which the caller
 * sets with pdu_set_data_len / the struct's data_len field.
 */
#ifndef TCQ_PDU_H
#define TCQ_PDU_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "tcq/iscsi_proto.h"
#include "tcq/byteorder.h"

static inline uint8_t pdu_opcode(const uint8_t *bhs)
{
	return bhs[0] & ISCSI_OPCODE_MASK;
}
static inline bool pdu_immediate(const uint8_t *bhs)
{
	return bhs[0] & ISCSI_OP_IMMEDIATE;
}
static inline uint32_t pdu_data_len(const uint8_t *bhs)
{
	return get_be24(bhs + BHS_DATA_LEN);
}
static inline void pdu_set_data_len(uint8_t *bhs, uint32_t len)
{
	put_be24(bhs + BHS_DATA_LEN, len);
}
/* AHS length in bytes (the BHS holds it in 4-byte words). */
static inline uint32_t pdu_ahs_len(const uint8_t *bhs)
{
	return (uint32_t)bhs[BHS_TOTAL_AHS_LEN] * 4;
}
static inline uint32_t pdu_itt(const uint8_t *bhs)
{
	return get_be32(bhs + BHS_ITT);
}
/* Bytes of padding after a data segment of len bytes. */
static inline uint32_t pdu_pad(uint32_t len)
{
	return (4 - (len & 3)) & 3;
}
/* Name of an opcode for logs ("SCSI-Command", ...), "unknown" otherwise. */
const char *pdu_opcode_name(uint8_t opcode);
/* True for opcodes an initiator may send (RFC 7143 10.2.1.2). */
bool pdu_opcode_is_initiator(uint8_t opcode);

struct pdu_scsi_cmd {
	bool immediate, final, read, write;
	uint8_t attr;
	uint8_t ahs_words;
	uint32_t data_len;
	uint64_t lun;
	uint32_t itt, edtl, cmdsn, expstatsn;
	uint8_t cdb[16];
};

struct pdu_scsi_rsp {
	uint8_t flags;		/* o u O U bits (ISCSI_FLAG_*) */
	uint8_t response;	/* ISCSI_RSP_* */
	uint8_t status;
	uint32_t data_len;	/* sense length + 2 when sense is present */
	uint32_t itt, snack_tag, statsn, expcmdsn, maxcmdsn, expdatasn;
	uint32_t bidi_residual, residual;
};

struct pdu_data_out {
	bool final;
	uint32_t data_len;
	uint64_t lun;
	uint32_t itt, ttt, expstatsn, datasn, offset;
};

struct pdu_data_in {
	bool final, ack, status_present;
	uint8_t flags;		/* O U bits, valid with status_present */
	uint8_t status;
	uint32_t data_len;
	uint64_t lun;
	uint32_t itt, ttt, statsn, expcmdsn, maxcmdsn, datasn, offset, residual;
};

struct pdu_r2t {
	uint64_t lun;
	uint32_t itt, ttt, statsn, expcmdsn, maxcmdsn, r2tsn, offset, length;
};

struct pdu_nop_out {
	bool immediate;
	uint32_t data_len;
	uint64_t lun;
	uint32_t itt, ttt, cmdsn, expstatsn;
};

struct pdu_nop_in {
	uint32_t data_len;
	uint64_t lun;
	uint32_t itt, ttt, statsn, expcmdsn, maxcmdsn;
};

struct pdu_login_req {
	bool transit, cont;
	uint8_t csg, nsg, version_max, version_min;
	uint32_t data_len;
	uint8_t isid[6];
	uint16_t tsih, cid;
	uint32_t itt, cmdsn, expstatsn;
};

struct pdu_login_rsp {
	bool transit, cont;
	uint8_t csg, nsg, version_max, version_active;
	uint32_t data_len;
	uint8_t isid[6];
	uint16_t tsih;
	uint32_t itt, statsn, expcmdsn, maxcmdsn;
	uint8_t status_class, status_detail;
};

struct pdu_text_req {
	bool immediate, final, cont;
	uint32_t data_len;
	uint64_t lun;
	uint32_t itt, ttt, cmdsn, expstatsn;
};

struct pdu_text_rsp {
	bool final, cont;
	uint32_t data_len;
	uint64_t lun;
	uint32_t itt, ttt, statsn, expcmdsn, maxcmdsn;
};

struct pdu_logout_req {
	bool immediate;
	uint8_t reason;
	uint32_t data_len;
	uint32_t itt;
	uint16_t cid;
	uint32_t cmdsn, expstatsn;
};

struct pdu_logout_rsp {
	uint8_t response;
	uint32_t itt, statsn, expcmdsn, maxcmdsn;
	uint16_t time2wait, time2retain;
};

struct pdu_tmf_req {
	bool immediate;
	uint8_t function;
	uint32_t data_len;
	uint64_t lun;
	uint32_t itt, rtt, cmdsn, expstatsn, refcmdsn, expdatasn;
};

struct pdu_tmf_rsp {
	uint8_t response;
	uint32_t itt, statsn, expcmdsn, maxcmdsn;
};

struct pdu_reject {
	uint8_t reason;
	uint32_t data_len;	/* 48: the rejected BHS travels as data */
	uint32_t statsn, expcmdsn, maxcmdsn, datasn;
};

struct pdu_async {
	uint32_t data_len;
	uint64_t lun;
	uint32_t statsn, expcmdsn, maxcmdsn;
	uint8_t event, vcode;
	uint16_t param1, param2, param3;
};

struct pdu_snack {
	uint8_t type;
	uint64_t lun;
	uint32_t itt, ttt, expstatsn, begrun, runlength;
};

#define PDU_CODEC(name) \
	void pdu_decode_##name(const uint8_t *bhs, struct pdu_##name *p); \
	void pdu_encode_##name(uint8_t *bhs, const struct pdu_##name *p);
PDU_CODEC(scsi_cmd)
PDU_CODEC(scsi_rsp)
PDU_CODEC(data_out)
PDU_CODEC(data_in)
PDU_CODEC(r2t)
PDU_CODEC(nop_out)
PDU_CODEC(nop_in)
PDU_CODEC(login_req)
PDU_CODEC(login_rsp)
PDU_CODEC(text_req)
PDU_CODEC(text_rsp)
PDU_CODEC(logout_req)
PDU_CODEC(logout_rsp)
PDU_CODEC(tmf_req)
PDU_CODEC(tmf_rsp)
PDU_CODEC(reject)
PDU_CODEC(async)
PDU_CODEC(snack)
#undef PDU_CODEC

/*
 * Structural checks a receiver makes on a BHS before reading further:
 * opcode valid for the direction, AHS only where allowed, reserved/fixed
 * bits as RFC 7143 requires. Returns 0, or a Reject reason
 * (ISCSI_REJECT_*) and sets *why to a short explanation.
 */
int pdu_check_initiator_bhs(const uint8_t *bhs, const char **why);
int pdu_check_target_bhs(const uint8_t *bhs, const char **why);

/*
 * The AHS of a SCSI Command (RFC 7143 11.2.1.2-11.2.1.4): each segment is
 * AHSLength (2 bytes: AHS-specific byte plus data), AHSType, the
 * AHS-specific byte, then the data padded to a multiple of 4. An
 * Extended CDB AHS (type 1) carries the CDB bytes past the first 16 (its
 * AHSLength is their count + 1); a Bidirectional Read Expected Data
 * Transfer Length AHS (type 2, AHSLength 5) carries 4 bytes.
 */
struct pdu_cmd_ahs {
	const uint8_t *ext_cdb;		/* NULL: none */
	uint32_t ext_cdb_len;		/* bytes past the BHS's 16 */
	bool has_bidi_read_len;
	uint32_t bidi_read_len;
};
/* Parses len bytes of AHS (pointers into ahs). 0, or -1 when malformed:
 * a short or zero-length segment, one past the end, a second Extended
 * CDB, one longer than ext_max, or an unknown type. */
int pdu_decode_cmd_ahs(const uint8_t *ahs, uint32_t len, uint32_t ext_max,
		       struct pdu_cmd_ahs *out);
/* Writes an Extended CDB AHS for the n CDB bytes past the first 16 into
 * out (room for 4 + n rounded up to 4); returns the bytes written. */
uint32_t pdu_encode_ext_cdb_ahs(uint8_t *out, const uint8_t *cdb_tail,
				uint32_t n);

/* 8-byte LUN field <-> flat LUN number (SAM-5 single level, peripheral
 * and flat addressing). Returns UINT64_MAX when the format is not one of
 * those (the caller answers LOGICAL UNIT NOT SUPPORTED). */
uint64_t pdu_lun_decode(uint64_t raw);
uint64_t pdu_lun_encode(uint64_t lun);

#endif
