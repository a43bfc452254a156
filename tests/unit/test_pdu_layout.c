/*
 * Known answers for the PDU codec (common/pdu.c): the BHS of every opcode
 * written as bytes from the figures of RFC 7143 section 11, with a
 * distinct value in every field. Each check encodes a struct and compares
 * all 48 bytes with the figure (the buffer starts as 0xee, so a reserved
 * byte left unwritten shows), then decodes the figure and checks every
 * field. Rows are the figures' 4-byte words, offset on the left.
 */
#include <check.h>
#include <string.h>
#include "tcq/pdu.h"
#include "tests/unit/harness.h"

static uint8_t bhs[ISCSI_BHS_LEN];

/* The 8-byte LUN field of the figures below: distinct bytes, so a field
 * written in the wrong order shows (the codec carries it as is). */
#define LUN_BYTES 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08
#define LUN_VALUE 0x0102030405060708ull

static void expect_bhs(const uint8_t *rfc)
{
	for (int i = 0; i < ISCSI_BHS_LEN; i++)
		ck_assert_msg(bhs[i] == rfc[i], "byte %d is %#04x, the RFC "
			      "figure has %#04x", i, bhs[i], rfc[i]);
}

/* Encodes p over 0xee bytes and compares with the figure, then decodes
 * the figure into q (0xa5 bytes first, so a field left out shows). */
#define KNOWN_ANSWER(name, p, q, rfc) do { \
	memset(bhs, 0xee, sizeof(bhs)); \
	pdu_encode_##name(bhs, &(p)); \
	expect_bhs(rfc); \
	memset(&(q), 0xa5, sizeof(q)); \
	pdu_decode_##name(rfc, &(q)); \
} while (0)

/* The values the figures give the fields most PDUs share. */
#define ITT 0x0a0b0c0d
#define TTT 0x1a1b1c1d
#define SN24 0x2a2b2c2d		/* CmdSN or StatSN */
#define SN28 0x3a3b3c3d		/* ExpStatSN or ExpCmdSN */
#define SN32 0x4a4b4c4d		/* MaxCmdSN */
/* A target's StatSN, ExpCmdSN, MaxCmdSN at 24, 28, 32. */
#define EXPECT_TARGET_SNS(q) do { \
	ck_assert_uint_eq((q).statsn, SN24); \
	ck_assert_uint_eq((q).expcmdsn, SN28); \
	ck_assert_uint_eq((q).maxcmdsn, SN32); \
} while (0)

/* 11.18 NOP-Out */
START_TEST(nop_out_layout)
{
	static const uint8_t rfc[48] = {
		/*  0 */ 0x40, 0x80, 0x00, 0x00,	/* I, opcode 00h; F */
		/*  4 */ 0x00, 0x00, 0x01, 0x23,	/* DataSegmentLength */
		/*  8 */ LUN_BYTES,
		/* 16 */ 0x0a, 0x0b, 0x0c, 0x0d,	/* ITT */
		/* 20 */ 0x1a, 0x1b, 0x1c, 0x1d,	/* TTT */
		/* 24 */ 0x2a, 0x2b, 0x2c, 0x2d,	/* CmdSN */
		/* 28 */ 0x3a, 0x3b, 0x3c, 0x3d,	/* ExpStatSN */
		/* 32..47 reserved */
	};
	struct pdu_nop_out p = {
		.immediate = true, .data_len = 0x123, .lun = LUN_VALUE,
		.itt = ITT, .ttt = TTT, .cmdsn = SN24,
		.expstatsn = SN28,
	}, q;

	KNOWN_ANSWER(nop_out, p, q, rfc);
	ck_assert(q.immediate);
	ck_assert_uint_eq(q.data_len, 0x123);
	ck_assert_uint_eq(q.lun, LUN_VALUE);
	ck_assert_uint_eq(q.itt, ITT);
	ck_assert_uint_eq(q.ttt, TTT);
	ck_assert_uint_eq(q.cmdsn, SN24);
	ck_assert_uint_eq(q.expstatsn, SN28);
}
END_TEST

/* 11.19 NOP-In */
START_TEST(nop_in_layout)
{
	static const uint8_t rfc[48] = {
		/*  0 */ 0x20, 0x80, 0x00, 0x00,
		/*  4 */ 0x00, 0x00, 0x04, 0x56,	/* DataSegmentLength */
		/*  8 */ LUN_BYTES,
		/* 16 */ 0x0a, 0x0b, 0x0c, 0x0d,	/* ITT */
		/* 20 */ 0x1a, 0x1b, 0x1c, 0x1d,	/* TTT */
		/* 24 */ 0x2a, 0x2b, 0x2c, 0x2d,	/* StatSN */
		/* 28 */ 0x3a, 0x3b, 0x3c, 0x3d,	/* ExpCmdSN */
		/* 32 */ 0x4a, 0x4b, 0x4c, 0x4d,	/* MaxCmdSN */
		/* 36..47 reserved */
	};
	struct pdu_nop_in p = {
		.data_len = 0x456, .lun = LUN_VALUE, .itt = ITT,
		.ttt = TTT, .statsn = SN24,
		.expcmdsn = SN28, .maxcmdsn = SN32,
	}, q;

	KNOWN_ANSWER(nop_in, p, q, rfc);
	ck_assert_uint_eq(q.data_len, 0x456);
	ck_assert_uint_eq(q.lun, LUN_VALUE);
	ck_assert_uint_eq(q.itt, ITT);
	ck_assert_uint_eq(q.ttt, TTT);
	EXPECT_TARGET_SNS(q);
}
END_TEST

/* 11.3 SCSI Command */
START_TEST(scsi_cmd_layout)
{
	static const uint8_t rfc[48] = {
		/*  0 */ 0x41, 0xc2, 0x00, 0x00,	/* I; F R, ATTR 2 */
		/*  4 */ 0x05, 0x00, 0x07, 0x89,	/* TotalAHSLength, DSL */
		/*  8 */ LUN_BYTES,
		/* 16 */ 0x0a, 0x0b, 0x0c, 0x0d,	/* ITT */
		/* 20 */ 0x00, 0x02, 0x00, 0x00,	/* EDTL */
		/* 24 */ 0x2a, 0x2b, 0x2c, 0x2d,	/* CmdSN */
		/* 28 */ 0x3a, 0x3b, 0x3c, 0x3d,	/* ExpStatSN */
		/* 32 */ 0x28, 0x10, 0x11, 0x12,	/* CDB */
		/* 36 */ 0x13, 0x14, 0x15, 0x16,
		/* 40 */ 0x17, 0x18, 0x19, 0x1a,
		/* 44 */ 0x1b, 0x1c, 0x1d, 0x1e,
	};
	struct pdu_scsi_cmd p = {
		.immediate = true, .final = true, .read = true,
		.attr = ISCSI_ATTR_ORDERED, .ahs_words = 5, .data_len = 0x789,
		.lun = LUN_VALUE, .itt = ITT, .edtl = 0x20000,
		.cmdsn = SN24, .expstatsn = SN28,
	}, q;

	memcpy(p.cdb, rfc + 32, 16);
	KNOWN_ANSWER(scsi_cmd, p, q, rfc);
	ck_assert(q.immediate && q.final && q.read && !q.write);
	ck_assert_uint_eq(q.attr, 2);
	ck_assert_uint_eq(q.ahs_words, 5);
	ck_assert_uint_eq(q.data_len, 0x789);
	ck_assert_uint_eq(q.lun, LUN_VALUE);
	ck_assert_uint_eq(q.itt, ITT);
	ck_assert_uint_eq(q.edtl, 0x20000);
	ck_assert_uint_eq(q.cmdsn, SN24);
	ck_assert_uint_eq(q.expstatsn, SN28);
	ck_assert_mem_eq(q.cdb, rfc + 32, 16);
	/* W is bit 5 of byte 1. */
	p.read = false;
	p.write = true;
	pdu_encode_scsi_cmd(bhs, &p);
	ck_assert_uint_eq(bhs[1], 0xa2);
}
END_TEST

/* 11.4 SCSI Response */
START_TEST(scsi_rsp_layout)
{
	static const uint8_t rfc[48] = {
		/*  0 */ 0x21, 0x8c, 0x01, 0x02,	/* 1 u O; Response, Status */
		/*  4 */ 0x00, 0x00, 0x00, 0x12,	/* DataSegmentLength */
		/*  8 */ 0, 0, 0, 0, 0, 0, 0, 0,
		/* 16 */ 0x0a, 0x0b, 0x0c, 0x0d,	/* ITT */
		/* 20 */ 0x1a, 0x1b, 0x1c, 0x1d,	/* SNACK Tag */
		/* 24 */ 0x2a, 0x2b, 0x2c, 0x2d,	/* StatSN */
		/* 28 */ 0x3a, 0x3b, 0x3c, 0x3d,	/* ExpCmdSN */
		/* 32 */ 0x4a, 0x4b, 0x4c, 0x4d,	/* MaxCmdSN */
		/* 36 */ 0x5a, 0x5b, 0x5c, 0x5d,	/* ExpDataSN */
		/* 40 */ 0x6a, 0x6b, 0x6c, 0x6d,	/* Bidi Read Residual */
		/* 44 */ 0x7a, 0x7b, 0x7c, 0x7d,	/* Residual Count */
	};
	struct pdu_scsi_rsp p = {
		.flags = ISCSI_FLAG_BIDI_UNDERFLOW | ISCSI_FLAG_OVERFLOW,
		.response = 1, .status = 2, .data_len = 0x12,
		.itt = ITT, .snack_tag = TTT,
		.statsn = SN24, .expcmdsn = SN28,
		.maxcmdsn = SN32, .expdatasn = 0x5a5b5c5d,
		.bidi_residual = 0x6a6b6c6d, .residual = 0x7a7b7c7d,
	}, q;

	KNOWN_ANSWER(scsi_rsp, p, q, rfc);
	ck_assert_uint_eq(q.flags, 0x0c);
	ck_assert_uint_eq(q.response, 1);
	ck_assert_uint_eq(q.status, 2);
	ck_assert_uint_eq(q.data_len, 0x12);
	ck_assert_uint_eq(q.itt, ITT);
	ck_assert_uint_eq(q.snack_tag, TTT);
	EXPECT_TARGET_SNS(q);
	ck_assert_uint_eq(q.expdatasn, 0x5a5b5c5d);
	ck_assert_uint_eq(q.bidi_residual, 0x6a6b6c6d);
	ck_assert_uint_eq(q.residual, 0x7a7b7c7d);
	/* o is bit 4, U bit 1. */
	p.flags = ISCSI_FLAG_BIDI_OVERFLOW | ISCSI_FLAG_UNDERFLOW;
	pdu_encode_scsi_rsp(bhs, &p);
	ck_assert_uint_eq(bhs[1], 0x92);
}
END_TEST

/* 11.5 Task Management Function Request */
START_TEST(tmf_req_layout)
{
	static const uint8_t rfc[48] = {
		/*  0 */ 0x42, 0x82, 0x00, 0x00,	/* I; 1, ABORT TASK SET */
		/*  4 */ 0x00, 0x00, 0x00, 0x00,
		/*  8 */ LUN_BYTES,
		/* 16 */ 0x0a, 0x0b, 0x0c, 0x0d,	/* ITT */
		/* 20 */ 0x1a, 0x1b, 0x1c, 0x1d,	/* Referenced Task Tag */
		/* 24 */ 0x2a, 0x2b, 0x2c, 0x2d,	/* CmdSN */
		/* 28 */ 0x3a, 0x3b, 0x3c, 0x3d,	/* ExpStatSN */
		/* 32 */ 0x4a, 0x4b, 0x4c, 0x4d,	/* RefCmdSN */
		/* 36 */ 0x5a, 0x5b, 0x5c, 0x5d,	/* ExpDataSN */
		/* 40..47 reserved */
	};
	struct pdu_tmf_req p = {
		.immediate = true, .function = ISCSI_TMF_ABORT_TASK_SET,
		.lun = LUN_VALUE, .itt = ITT, .rtt = TTT,
		.cmdsn = SN24, .expstatsn = SN28,
		.refcmdsn = SN32, .expdatasn = 0x5a5b5c5d,
	}, q;

	KNOWN_ANSWER(tmf_req, p, q, rfc);
	ck_assert(q.immediate);
	ck_assert_uint_eq(q.function, 2);
	ck_assert_uint_eq(q.data_len, 0);
	ck_assert_uint_eq(q.lun, LUN_VALUE);
	ck_assert_uint_eq(q.itt, ITT);
	ck_assert_uint_eq(q.rtt, TTT);
	ck_assert_uint_eq(q.cmdsn, SN24);
	ck_assert_uint_eq(q.expstatsn, SN28);
	ck_assert_uint_eq(q.refcmdsn, SN32);
	ck_assert_uint_eq(q.expdatasn, 0x5a5b5c5d);
}
END_TEST

/* 11.6 Task Management Function Response */
START_TEST(tmf_rsp_layout)
{
	static const uint8_t rfc[48] = {
		/*  0 */ 0x22, 0x80, 0x05, 0x00,	/* Response 5 */
		/*  4 */ 0x00, 0x00, 0x00, 0x00,
		/*  8 */ 0, 0, 0, 0, 0, 0, 0, 0,
		/* 16 */ 0x0a, 0x0b, 0x0c, 0x0d,	/* ITT */
		/* 20 */ 0x00, 0x00, 0x00, 0x00,
		/* 24 */ 0x2a, 0x2b, 0x2c, 0x2d,	/* StatSN */
		/* 28 */ 0x3a, 0x3b, 0x3c, 0x3d,	/* ExpCmdSN */
		/* 32 */ 0x4a, 0x4b, 0x4c, 0x4d,	/* MaxCmdSN */
		/* 36..47 reserved */
	};
	struct pdu_tmf_rsp p = {
		.response = ISCSI_TMF_RSP_NOT_SUPPORTED, .itt = ITT,
		.statsn = SN24, .expcmdsn = SN28,
		.maxcmdsn = SN32,
	}, q;

	KNOWN_ANSWER(tmf_rsp, p, q, rfc);
	ck_assert_uint_eq(q.response, 5);
	ck_assert_uint_eq(q.itt, ITT);
	EXPECT_TARGET_SNS(q);
}
END_TEST

/* 11.7.1 SCSI Data-Out */
START_TEST(data_out_layout)
{
	static const uint8_t rfc[48] = {
		/*  0 */ 0x05, 0x80, 0x00, 0x00,	/* F */
		/*  4 */ 0x00, 0x00, 0x20, 0x00,	/* DataSegmentLength */
		/*  8 */ LUN_BYTES,
		/* 16 */ 0x0a, 0x0b, 0x0c, 0x0d,	/* ITT */
		/* 20 */ 0x1a, 0x1b, 0x1c, 0x1d,	/* TTT */
		/* 24 */ 0x00, 0x00, 0x00, 0x00,
		/* 28 */ 0x3a, 0x3b, 0x3c, 0x3d,	/* ExpStatSN */
		/* 32 */ 0x00, 0x00, 0x00, 0x00,
		/* 36 */ 0x5a, 0x5b, 0x5c, 0x5d,	/* DataSN */
		/* 40 */ 0x6a, 0x6b, 0x6c, 0x6d,	/* Buffer Offset */
		/* 44 */ 0x00, 0x00, 0x00, 0x00,
	};
	struct pdu_data_out p = {
		.final = true, .data_len = 0x2000, .lun = LUN_VALUE,
		.itt = ITT, .ttt = TTT, .expstatsn = SN28,
		.datasn = 0x5a5b5c5d, .offset = 0x6a6b6c6d,
	}, q;

	KNOWN_ANSWER(data_out, p, q, rfc);
	ck_assert(q.final);
	ck_assert_uint_eq(q.data_len, 0x2000);
	ck_assert_uint_eq(q.lun, LUN_VALUE);
	ck_assert_uint_eq(q.itt, ITT);
	ck_assert_uint_eq(q.ttt, TTT);
	ck_assert_uint_eq(q.expstatsn, SN28);
	ck_assert_uint_eq(q.datasn, 0x5a5b5c5d);
	ck_assert_uint_eq(q.offset, 0x6a6b6c6d);
}
END_TEST

/* 11.7.2 SCSI Data-In */
START_TEST(data_in_layout)
{
	static const uint8_t rfc[48] = {
		/*  0 */ 0x25, 0xc3, 0x00, 0x04,	/* F A U S; Status */
		/*  4 */ 0x00, 0x01, 0x00, 0x00,	/* DataSegmentLength */
		/*  8 */ LUN_BYTES,
		/* 16 */ 0x0a, 0x0b, 0x0c, 0x0d,	/* ITT */
		/* 20 */ 0xff, 0xff, 0xff, 0xff,	/* TTT: none */
		/* 24 */ 0x2a, 0x2b, 0x2c, 0x2d,	/* StatSN */
		/* 28 */ 0x3a, 0x3b, 0x3c, 0x3d,	/* ExpCmdSN */
		/* 32 */ 0x4a, 0x4b, 0x4c, 0x4d,	/* MaxCmdSN */
		/* 36 */ 0x5a, 0x5b, 0x5c, 0x5d,	/* DataSN */
		/* 40 */ 0x6a, 0x6b, 0x6c, 0x6d,	/* Buffer Offset */
		/* 44 */ 0x7a, 0x7b, 0x7c, 0x7d,	/* Residual Count */
	};
	struct pdu_data_in p = {
		.final = true, .ack = true, .status_present = true,
		.flags = ISCSI_FLAG_UNDERFLOW, .status = SAM_STAT_CONDITION_MET,
		.data_len = 0x10000, .lun = LUN_VALUE, .itt = ITT,
		.ttt = ISCSI_RSVD_TAG, .statsn = SN24,
		.expcmdsn = SN28, .maxcmdsn = SN32,
		.datasn = 0x5a5b5c5d, .offset = 0x6a6b6c6d,
		.residual = 0x7a7b7c7d,
	}, q;

	KNOWN_ANSWER(data_in, p, q, rfc);
	ck_assert(q.final && q.ack && q.status_present);
	ck_assert_uint_eq(q.flags, ISCSI_FLAG_UNDERFLOW);
	ck_assert_uint_eq(q.status, 0x04);
	ck_assert_uint_eq(q.data_len, 0x10000);
	ck_assert_uint_eq(q.lun, LUN_VALUE);
	ck_assert_uint_eq(q.itt, ITT);
	ck_assert_uint_eq(q.ttt, 0xffffffffu);
	EXPECT_TARGET_SNS(q);
	ck_assert_uint_eq(q.datasn, 0x5a5b5c5d);
	ck_assert_uint_eq(q.offset, 0x6a6b6c6d);
	ck_assert_uint_eq(q.residual, 0x7a7b7c7d);
	/* O is bit 2 of byte 1. */
	p.flags = ISCSI_FLAG_OVERFLOW;
	pdu_encode_data_in(bhs, &p);
	ck_assert_uint_eq(bhs[1], 0xc5);
}
END_TEST

/* 11.8 Ready To Transfer (R2T) */
START_TEST(r2t_layout)
{
	static const uint8_t rfc[48] = {
		/*  0 */ 0x31, 0x80, 0x00, 0x00,
		/*  4 */ 0x00, 0x00, 0x00, 0x00,
		/*  8 */ LUN_BYTES,
		/* 16 */ 0x0a, 0x0b, 0x0c, 0x0d,	/* ITT */
		/* 20 */ 0x1a, 0x1b, 0x1c, 0x1d,	/* TTT */
		/* 24 */ 0x2a, 0x2b, 0x2c, 0x2d,	/* StatSN */
		/* 28 */ 0x3a, 0x3b, 0x3c, 0x3d,	/* ExpCmdSN */
		/* 32 */ 0x4a, 0x4b, 0x4c, 0x4d,	/* MaxCmdSN */
		/* 36 */ 0x5a, 0x5b, 0x5c, 0x5d,	/* R2TSN */
		/* 40 */ 0x6a, 0x6b, 0x6c, 0x6d,	/* Buffer Offset */
		/* 44 */ 0x7a, 0x7b, 0x7c, 0x7d,	/* Desired Data Length */
	};
	struct pdu_r2t p = {
		.lun = LUN_VALUE, .itt = ITT, .ttt = TTT,
		.statsn = SN24, .expcmdsn = SN28,
		.maxcmdsn = SN32, .r2tsn = 0x5a5b5c5d,
		.offset = 0x6a6b6c6d, .length = 0x7a7b7c7d,
	}, q;

	KNOWN_ANSWER(r2t, p, q, rfc);
	ck_assert_uint_eq(q.lun, LUN_VALUE);
	ck_assert_uint_eq(q.itt, ITT);
	ck_assert_uint_eq(q.ttt, TTT);
	EXPECT_TARGET_SNS(q);
	ck_assert_uint_eq(q.r2tsn, 0x5a5b5c5d);
	ck_assert_uint_eq(q.offset, 0x6a6b6c6d);
	ck_assert_uint_eq(q.length, 0x7a7b7c7d);
}
END_TEST

/* 11.9 Asynchronous Message */
START_TEST(async_layout)
{
	static const uint8_t rfc[48] = {
		/*  0 */ 0x32, 0x80, 0x00, 0x00,
		/*  4 */ 0x00, 0x00, 0x00, 0x16,	/* DataSegmentLength */
		/*  8 */ LUN_BYTES,
		/* 16 */ 0xff, 0xff, 0xff, 0xff,
		/* 20 */ 0x00, 0x00, 0x00, 0x00,
		/* 24 */ 0x2a, 0x2b, 0x2c, 0x2d,	/* StatSN */
		/* 28 */ 0x3a, 0x3b, 0x3c, 0x3d,	/* ExpCmdSN */
		/* 32 */ 0x4a, 0x4b, 0x4c, 0x4d,	/* MaxCmdSN */
		/* 36 */ 0x02, 0x07, 0x5a, 0x5b,	/* AsyncEvent, VCode, P1 */
		/* 40 */ 0x6a, 0x6b, 0x6c, 0x6d,	/* Parameter2, 3 */
		/* 44 */ 0x00, 0x00, 0x00, 0x00,
	};
	struct pdu_async p = {
		.data_len = 0x16, .lun = LUN_VALUE, .statsn = SN24,
		.expcmdsn = SN28, .maxcmdsn = SN32,
		.event = ISCSI_ASYNC_DROP_CONNECTION, .vcode = 7,
		.param1 = 0x5a5b, .param2 = 0x6a6b, .param3 = 0x6c6d,
	}, q;

	KNOWN_ANSWER(async, p, q, rfc);
	ck_assert_uint_eq(q.data_len, 0x16);
	ck_assert_uint_eq(q.lun, LUN_VALUE);
	EXPECT_TARGET_SNS(q);
	ck_assert_uint_eq(q.event, 2);
	ck_assert_uint_eq(q.vcode, 7);
	ck_assert_uint_eq(q.param1, 0x5a5b);
	ck_assert_uint_eq(q.param2, 0x6a6b);
	ck_assert_uint_eq(q.param3, 0x6c6d);
}
END_TEST

/* 11.10 Text Request */
START_TEST(text_req_layout)
{
	static const uint8_t rfc[48] = {
		/*  0 */ 0x44, 0x40, 0x00, 0x00,	/* I; C */
		/*  4 */ 0x00, 0x00, 0x00, 0x1d,	/* DataSegmentLength */
		/*  8 */ LUN_BYTES,
		/* 16 */ 0x0a, 0x0b, 0x0c, 0x0d,	/* ITT */
		/* 20 */ 0x1a, 0x1b, 0x1c, 0x1d,	/* TTT */
		/* 24 */ 0x2a, 0x2b, 0x2c, 0x2d,	/* CmdSN */
		/* 28 */ 0x3a, 0x3b, 0x3c, 0x3d,	/* ExpStatSN */
		/* 32..47 reserved */
	};
	struct pdu_text_req p = {
		.immediate = true, .cont = true, .data_len = 0x1d,
		.lun = LUN_VALUE, .itt = ITT, .ttt = TTT,
		.cmdsn = SN24, .expstatsn = SN28,
	}, q;

	KNOWN_ANSWER(text_req, p, q, rfc);
	ck_assert(q.immediate && !q.final && q.cont);
	ck_assert_uint_eq(q.data_len, 0x1d);
	ck_assert_uint_eq(q.lun, LUN_VALUE);
	ck_assert_uint_eq(q.itt, ITT);
	ck_assert_uint_eq(q.ttt, TTT);
	ck_assert_uint_eq(q.cmdsn, SN24);
	ck_assert_uint_eq(q.expstatsn, SN28);
}
END_TEST

/* 11.11 Text Response */
START_TEST(text_rsp_layout)
{
	static const uint8_t rfc[48] = {
		/*  0 */ 0x24, 0x80, 0x00, 0x00,	/* F */
		/*  4 */ 0x00, 0x00, 0x00, 0x22,	/* DataSegmentLength */
		/*  8 */ LUN_BYTES,
		/* 16 */ 0x0a, 0x0b, 0x0c, 0x0d,	/* ITT */
		/* 20 */ 0x1a, 0x1b, 0x1c, 0x1d,	/* TTT */
		/* 24 */ 0x2a, 0x2b, 0x2c, 0x2d,	/* StatSN */
		/* 28 */ 0x3a, 0x3b, 0x3c, 0x3d,	/* ExpCmdSN */
		/* 32 */ 0x4a, 0x4b, 0x4c, 0x4d,	/* MaxCmdSN */
		/* 36..47 reserved */
	};
	struct pdu_text_rsp p = {
		.final = true, .data_len = 0x22, .lun = LUN_VALUE,
		.itt = ITT, .ttt = TTT, .statsn = SN24,
		.expcmdsn = SN28, .maxcmdsn = SN32,
	}, q;

	KNOWN_ANSWER(text_rsp, p, q, rfc);
	ck_assert(q.final && !q.cont);
	ck_assert_uint_eq(q.data_len, 0x22);
	ck_assert_uint_eq(q.lun, LUN_VALUE);
	ck_assert_uint_eq(q.itt, ITT);
	ck_assert_uint_eq(q.ttt, TTT);
	EXPECT_TARGET_SNS(q);
}
END_TEST

/* 11.12 Login Request */
START_TEST(login_req_layout)
{
	static const uint8_t rfc[48] = {
		/*  0 */ 0x43, 0x87, 0x05, 0x03,	/* T, CSG 1, NSG 3; versions */
		/*  4 */ 0x00, 0x00, 0x01, 0x4d,	/* DataSegmentLength */
		/*  8 */ 0x80, 0x12, 0x34, 0x56,	/* ISID */
		/* 12 */ 0x78, 0x9a, 0x0e, 0x0f,	/* ISID, TSIH */
		/* 16 */ 0x0a, 0x0b, 0x0c, 0x0d,	/* ITT */
		/* 20 */ 0x1a, 0x1b, 0x00, 0x00,	/* CID */
		/* 24 */ 0x2a, 0x2b, 0x2c, 0x2d,	/* CmdSN */
		/* 28 */ 0x3a, 0x3b, 0x3c, 0x3d,	/* ExpStatSN */
		/* 32..47 reserved */
	};
	struct pdu_login_req p = {
		.transit = true, .csg = 1, .nsg = 3, .version_max = 5,
		.version_min = 3, .data_len = 0x14d,
		.isid = { 0x80, 0x12, 0x34, 0x56, 0x78, 0x9a }, .tsih = 0x0e0f,
		.itt = ITT, .cid = 0x1a1b, .cmdsn = SN24,
		.expstatsn = SN28,
	}, q;

	KNOWN_ANSWER(login_req, p, q, rfc);
	ck_assert(q.transit && !q.cont);
	ck_assert_uint_eq(q.csg, 1);
	ck_assert_uint_eq(q.nsg, 3);
	ck_assert_uint_eq(q.version_max, 5);
	ck_assert_uint_eq(q.version_min, 3);
	ck_assert_uint_eq(q.data_len, 0x14d);
	ck_assert_mem_eq(q.isid, rfc + 8, 6);
	ck_assert_uint_eq(q.tsih, 0x0e0f);
	ck_assert_uint_eq(q.itt, ITT);
	ck_assert_uint_eq(q.cid, 0x1a1b);
	ck_assert_uint_eq(q.cmdsn, SN24);
	ck_assert_uint_eq(q.expstatsn, SN28);
}
END_TEST

/* 11.13 Login Response */
START_TEST(login_rsp_layout)
{
	static const uint8_t rfc[48] = {
		/*  0 */ 0x23, 0x41, 0x05, 0x02,	/* C, CSG 0, NSG 1 */
		/*  4 */ 0x00, 0x00, 0x00, 0x3c,	/* DataSegmentLength */
		/*  8 */ 0x80, 0x12, 0x34, 0x56,	/* ISID */
		/* 12 */ 0x78, 0x9a, 0x0e, 0x0f,	/* ISID, TSIH */
		/* 16 */ 0x0a, 0x0b, 0x0c, 0x0d,	/* ITT */
		/* 20 */ 0x00, 0x00, 0x00, 0x00,
		/* 24 */ 0x2a, 0x2b, 0x2c, 0x2d,	/* StatSN */
		/* 28 */ 0x3a, 0x3b, 0x3c, 0x3d,	/* ExpCmdSN */
		/* 32 */ 0x4a, 0x4b, 0x4c, 0x4d,	/* MaxCmdSN */
		/* 36 */ 0x02, 0x01, 0x00, 0x00,	/* Status-Class, -Detail */
		/* 40..47 reserved */
	};
	struct pdu_login_rsp p = {
		.cont = true, .csg = 0, .nsg = 1, .version_max = 5,
		.version_active = 2, .data_len = 0x3c,
		.isid = { 0x80, 0x12, 0x34, 0x56, 0x78, 0x9a }, .tsih = 0x0e0f,
		.itt = ITT, .statsn = SN24,
		.expcmdsn = SN28, .maxcmdsn = SN32,
		.status_class = 2, .status_detail = 1,
	}, q;

	KNOWN_ANSWER(login_rsp, p, q, rfc);
	ck_assert(!q.transit && q.cont);
	ck_assert_uint_eq(q.csg, 0);
	ck_assert_uint_eq(q.nsg, 1);
	ck_assert_uint_eq(q.version_max, 5);
	ck_assert_uint_eq(q.version_active, 2);
	ck_assert_uint_eq(q.data_len, 0x3c);
	ck_assert_mem_eq(q.isid, rfc + 8, 6);
	ck_assert_uint_eq(q.tsih, 0x0e0f);
	ck_assert_uint_eq(q.itt, ITT);
	EXPECT_TARGET_SNS(q);
	ck_assert_uint_eq(q.status_class, 2);
	ck_assert_uint_eq(q.status_detail, 1);
}
END_TEST

/* 11.14 Logout Request */
START_TEST(logout_req_layout)
{
	static const uint8_t rfc[48] = {
		/*  0 */ 0x46, 0x82, 0x00, 0x00,	/* I; 1, remove for recovery */
		/*  4 */ 0x00, 0x00, 0x00, 0x00,
		/*  8 */ 0, 0, 0, 0, 0, 0, 0, 0,
		/* 16 */ 0x0a, 0x0b, 0x0c, 0x0d,	/* ITT */
		/* 20 */ 0x1a, 0x1b, 0x00, 0x00,	/* CID */
		/* 24 */ 0x2a, 0x2b, 0x2c, 0x2d,	/* CmdSN */
		/* 28 */ 0x3a, 0x3b, 0x3c, 0x3d,	/* ExpStatSN */
		/* 32..47 reserved */
	};
	struct pdu_logout_req p = {
		.immediate = true, .reason = ISCSI_LOGOUT_REMOVE_FOR_RECOVERY,
		.itt = ITT, .cid = 0x1a1b, .cmdsn = SN24,
		.expstatsn = SN28,
	}, q;

	KNOWN_ANSWER(logout_req, p, q, rfc);
	ck_assert(q.immediate);
	ck_assert_uint_eq(q.reason, 2);
	ck_assert_uint_eq(q.data_len, 0);
	ck_assert_uint_eq(q.itt, ITT);
	ck_assert_uint_eq(q.cid, 0x1a1b);
	ck_assert_uint_eq(q.cmdsn, SN24);
	ck_assert_uint_eq(q.expstatsn, SN28);
}
END_TEST

/* 11.15 Logout Response */
START_TEST(logout_rsp_layout)
{
	static const uint8_t rfc[48] = {
		/*  0 */ 0x26, 0x80, 0x03, 0x00,	/* Response 3 */
		/*  4 */ 0x00, 0x00, 0x00, 0x00,
		/*  8 */ 0, 0, 0, 0, 0, 0, 0, 0,
		/* 16 */ 0x0a, 0x0b, 0x0c, 0x0d,	/* ITT */
		/* 20 */ 0x00, 0x00, 0x00, 0x00,
		/* 24 */ 0x2a, 0x2b, 0x2c, 0x2d,	/* StatSN */
		/* 28 */ 0x3a, 0x3b, 0x3c, 0x3d,	/* ExpCmdSN */
		/* 32 */ 0x4a, 0x4b, 0x4c, 0x4d,	/* MaxCmdSN */
		/* 36 */ 0x00, 0x00, 0x00, 0x00,
		/* 40 */ 0x6a, 0x6b, 0x6c, 0x6d,	/* Time2Wait, Time2Retain */
		/* 44 */ 0x00, 0x00, 0x00, 0x00,
	};
	struct pdu_logout_rsp p = {
		.response = ISCSI_LOGOUT_RSP_CLEANUP_FAILED, .itt = ITT,
		.statsn = SN24, .expcmdsn = SN28,
		.maxcmdsn = SN32, .time2wait = 0x6a6b,
		.time2retain = 0x6c6d,
	}, q;

	KNOWN_ANSWER(logout_rsp, p, q, rfc);
	ck_assert_uint_eq(q.response, 3);
	ck_assert_uint_eq(q.itt, ITT);
	EXPECT_TARGET_SNS(q);
	ck_assert_uint_eq(q.time2wait, 0x6a6b);
	ck_assert_uint_eq(q.time2retain, 0x6c6d);
}
END_TEST

/* 11.16 SNACK Request */
START_TEST(snack_layout)
{
	static const uint8_t rfc[48] = {
		/*  0 */ 0x10, 0x83, 0x00, 0x00,	/* 1, Type 3 (R-Data) */
		/*  4 */ 0x00, 0x00, 0x00, 0x00,
		/*  8 */ LUN_BYTES,
		/* 16 */ 0x0a, 0x0b, 0x0c, 0x0d,	/* ITT */
		/* 20 */ 0x1a, 0x1b, 0x1c, 0x1d,	/* TTT or SNACK Tag */
		/* 24 */ 0x00, 0x00, 0x00, 0x00,
		/* 28 */ 0x3a, 0x3b, 0x3c, 0x3d,	/* ExpStatSN */
		/* 32 */ 0x00, 0x00, 0x00, 0x00,
		/* 36 */ 0x00, 0x00, 0x00, 0x00,
		/* 40 */ 0x6a, 0x6b, 0x6c, 0x6d,	/* BegRun */
		/* 44 */ 0x7a, 0x7b, 0x7c, 0x7d,	/* RunLength */
	};
	struct pdu_snack p = {
		.type = 3, .lun = LUN_VALUE, .itt = ITT,
		.ttt = TTT, .expstatsn = SN28,
		.begrun = 0x6a6b6c6d, .runlength = 0x7a7b7c7d,
	}, q;

	KNOWN_ANSWER(snack, p, q, rfc);
	ck_assert_uint_eq(q.type, 3);
	ck_assert_uint_eq(q.lun, LUN_VALUE);
	ck_assert_uint_eq(q.itt, ITT);
	ck_assert_uint_eq(q.ttt, TTT);
	ck_assert_uint_eq(q.expstatsn, SN28);
	ck_assert_uint_eq(q.begrun, 0x6a6b6c6d);
	ck_assert_uint_eq(q.runlength, 0x7a7b7c7d);
}
END_TEST

/* 11.17 Reject */
START_TEST(reject_layout)
{
	static const uint8_t rfc[48] = {
		/*  0 */ 0x3f, 0x80, 0x09, 0x00,	/* Reason 9 */
		/*  4 */ 0x00, 0x00, 0x00, 0x30,	/* the rejected BHS */
		/*  8 */ 0, 0, 0, 0, 0, 0, 0, 0,
		/* 16 */ 0xff, 0xff, 0xff, 0xff,
		/* 20 */ 0x00, 0x00, 0x00, 0x00,
		/* 24 */ 0x2a, 0x2b, 0x2c, 0x2d,	/* StatSN */
		/* 28 */ 0x3a, 0x3b, 0x3c, 0x3d,	/* ExpCmdSN */
		/* 32 */ 0x4a, 0x4b, 0x4c, 0x4d,	/* MaxCmdSN */
		/* 36 */ 0x5a, 0x5b, 0x5c, 0x5d,	/* DataSN/R2TSN */
		/* 40..47 reserved */
	};
	struct pdu_reject p = {
		.reason = ISCSI_REJECT_INVALID_PDU_FIELD, .data_len = 48,
		.statsn = SN24, .expcmdsn = SN28,
		.maxcmdsn = SN32, .datasn = 0x5a5b5c5d,
	}, q;

	KNOWN_ANSWER(reject, p, q, rfc);
	ck_assert_uint_eq(q.reason, 9);
	ck_assert_uint_eq(q.data_len, 48);
	EXPECT_TARGET_SNS(q);
	ck_assert_uint_eq(q.datasn, 0x5a5b5c5d);
}
END_TEST

static Suite *layout_suite(void)
{
	Suite *s = suite_create("pdu_layout");
	TCase *tc = tcase_create("rfc7143");

	harness_add(tc, nop_out_layout);
	harness_add(tc, nop_in_layout);
	harness_add(tc, scsi_cmd_layout);
	harness_add(tc, scsi_rsp_layout);
	harness_add(tc, tmf_req_layout);
	harness_add(tc, tmf_rsp_layout);
	harness_add(tc, data_out_layout);
	harness_add(tc, data_in_layout);
	harness_add(tc, r2t_layout);
	harness_add(tc, async_layout);
	harness_add(tc, text_req_layout);
	harness_add(tc, text_rsp_layout);
	harness_add(tc, login_req_layout);
	harness_add(tc, login_rsp_layout);
	harness_add(tc, logout_req_layout);
	harness_add(tc, logout_rsp_layout);
	harness_add(tc, snack_layout);
	harness_add(tc, reject_layout);
	suite_add_tcase(s, tc);
	return s;
}

int main(int argc, char **argv)
{
	return harness_main(argc, argv, layout_suite);
}
