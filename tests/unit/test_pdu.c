/* PDU codec, structural checks, LUN addressing and CRC32C (the layout of
 * every opcode against RFC 7143's figures is test_pdu_layout.c). */
#include <check.h>
#include <stdlib.h>
#include <string.h>
#include "tcq/crc32c.h"
#include "tcq/pdu.h"
#include "tests/unit/harness.h"

static uint8_t bhs[ISCSI_BHS_LEN];

static void assert_zero(const uint8_t *b, int from, int to)
{
	for (int i = from; i < to; i++)
		ck_assert_msg(b[i] == 0, "byte %d is 0x%02x", i, b[i]);
}

START_TEST(scsi_cmd_key_bytes_and_round_trip)
{
	struct pdu_scsi_cmd p = {
		.immediate = true, .final = true, .read = true, .write = false,
		.attr = ISCSI_ATTR_ORDERED, .ahs_words = 0, .data_len = 0x123,
		.lun = 0x0005000000000000ULL, .itt = 0x11223344,
		.edtl = 0x00010000, .cmdsn = 0xa1a2a3a4, .expstatsn = 0xb1b2b3b4,
	}, q;

	for (int i = 0; i < 16; i++)
		p.cdb[i] = (uint8_t)(0x28 + i);
	pdu_encode_scsi_cmd(bhs, &p);
	ck_assert_uint_eq(bhs[0], 0x41);
	ck_assert_uint_eq(bhs[1], 0x80 | 0x40 | 0x02);
	assert_zero(bhs, 2, 5);
	ck_assert_uint_eq(bhs[5], 0x00);
	ck_assert_uint_eq(bhs[6], 0x01);
	ck_assert_uint_eq(bhs[7], 0x23);
	ck_assert_uint_eq(bhs[8], 0x00);
	ck_assert_uint_eq(bhs[9], 0x05);
	ck_assert_uint_eq(bhs[16], 0x11);
	ck_assert_uint_eq(bhs[19], 0x44);
	ck_assert_uint_eq(bhs[21], 0x01);	/* EDTL 0x00010000 */
	ck_assert_uint_eq(bhs[24], 0xa1);
	ck_assert_uint_eq(bhs[31], 0xb4);
	ck_assert_uint_eq(bhs[32], 0x28);
	ck_assert_uint_eq(bhs[47], 0x28 + 15);
	pdu_decode_scsi_cmd(bhs, &q);
	ck_assert(q.immediate && q.final && q.read && !q.write);
	ck_assert_uint_eq(q.attr, ISCSI_ATTR_ORDERED);
	ck_assert_uint_eq(q.data_len, 0x123);
	ck_assert_uint_eq(q.lun, p.lun);
	ck_assert_uint_eq(q.itt, p.itt);
	ck_assert_uint_eq(q.edtl, p.edtl);
	ck_assert_uint_eq(q.cmdsn, p.cmdsn);
	ck_assert_uint_eq(q.expstatsn, p.expstatsn);
	ck_assert_mem_eq(q.cdb, p.cdb, 16);
}
END_TEST

START_TEST(data_in_key_bytes_and_status_only_with_s)
{
	struct pdu_data_in p = {
		.final = true, .ack = false, .status_present = true,
		.flags = ISCSI_FLAG_UNDERFLOW, .status = 0x02,
		.data_len = 512, .lun = 0x0001000000000000ULL, .itt = 7,
		.ttt = ISCSI_RSVD_TAG, .statsn = 100, .expcmdsn = 200,
		.maxcmdsn = 300, .datasn = 4, .offset = 0x2000, .residual = 9,
	}, q;

	pdu_encode_data_in(bhs, &p);
	ck_assert_uint_eq(bhs[0], 0x25);
	ck_assert_uint_eq(bhs[1], 0x80 | 0x02 | 0x01);
	ck_assert_uint_eq(bhs[2], 0);
	ck_assert_uint_eq(bhs[3], 0x02);
	ck_assert_uint_eq(bhs[6], 0x02);	/* 512 */
	ck_assert_uint_eq(bhs[7], 0x00);
	ck_assert_uint_eq(bhs[9], 0x01);
	ck_assert_uint_eq(bhs[19], 7);
	ck_assert_uint_eq(bhs[20], 0xff);
	ck_assert_uint_eq(bhs[23], 0xff);
	ck_assert_uint_eq(bhs[27], 100);
	ck_assert_uint_eq(bhs[31], 200);
	ck_assert_uint_eq(bhs[34], 0x01);	/* 300 = 0x12c */
	ck_assert_uint_eq(bhs[35], 0x2c);
	ck_assert_uint_eq(bhs[39], 4);
	ck_assert_uint_eq(bhs[42], 0x20);
	ck_assert_uint_eq(bhs[47], 9);
	pdu_decode_data_in(bhs, &q);
	ck_assert(q.final && !q.ack && q.status_present);
	ck_assert_uint_eq(q.flags, ISCSI_FLAG_UNDERFLOW);
	ck_assert_uint_eq(q.status, 2);
	ck_assert_uint_eq(q.offset, 0x2000);
	ck_assert_uint_eq(q.residual, 9);
	ck_assert_uint_eq(q.datasn, 4);
	/* Without S: no status, no residual on the wire. */
	p.status_present = false;
	p.final = false;
	pdu_encode_data_in(bhs, &p);
	ck_assert_uint_eq(bhs[1], 0);
	ck_assert_uint_eq(bhs[3], 0);
	assert_zero(bhs, 44, 48);
}
END_TEST

START_TEST(r2t_key_bytes_and_round_trip)
{
	struct pdu_r2t p = {
		.lun = 0x0002000000000000ULL, .itt = 0x01020304,
		.ttt = 0x05060708, .statsn = 0x10, .expcmdsn = 0x20,
		.maxcmdsn = 0x30, .r2tsn = 0x40, .offset = 0x50000,
		.length = 0x60000,
	}, q;

	pdu_encode_r2t(bhs, &p);
	ck_assert_uint_eq(bhs[0], 0x31);
	ck_assert_uint_eq(bhs[1], 0x80);
	assert_zero(bhs, 2, 8);
	ck_assert_uint_eq(bhs[9], 0x02);
	ck_assert_uint_eq(bhs[16], 0x01);
	ck_assert_uint_eq(bhs[20], 0x05);
	ck_assert_uint_eq(bhs[23], 0x08);
	ck_assert_uint_eq(bhs[27], 0x10);
	ck_assert_uint_eq(bhs[31], 0x20);
	ck_assert_uint_eq(bhs[35], 0x30);
	ck_assert_uint_eq(bhs[39], 0x40);
	ck_assert_uint_eq(bhs[41], 0x05);
	ck_assert_uint_eq(bhs[45], 0x06);
	pdu_decode_r2t(bhs, &q);
	ck_assert_mem_eq(&q, &p, sizeof(p));
}
END_TEST

START_TEST(login_rsp_key_bytes_and_round_trip)
{
	struct pdu_login_rsp p = {
		.transit = true, .cont = false, .csg = 1, .nsg = 3,
		.version_max = 0, .version_active = 0, .data_len = 0x30,
		.isid = { 0x80, 1, 2, 3, 4, 5 }, .tsih = 0x1234,
		.itt = 0xdeadbeef, .statsn = 0x11, .expcmdsn = 0x22,
		.maxcmdsn = 0x33, .status_class = 2, .status_detail = 7,
	}, q;

	pdu_encode_login_rsp(bhs, &p);
	ck_assert_uint_eq(bhs[0], 0x23);
	ck_assert_uint_eq(bhs[1], 0x80 | (1 << 2) | 3);
	ck_assert_uint_eq(bhs[7], 0x30);
	ck_assert_uint_eq(bhs[8], 0x80);
	ck_assert_uint_eq(bhs[13], 5);
	ck_assert_uint_eq(bhs[14], 0x12);
	ck_assert_uint_eq(bhs[15], 0x34);
	ck_assert_uint_eq(bhs[16], 0xde);
	assert_zero(bhs, 20, 24);
	ck_assert_uint_eq(bhs[27], 0x11);
	ck_assert_uint_eq(bhs[31], 0x22);
	ck_assert_uint_eq(bhs[35], 0x33);
	ck_assert_uint_eq(bhs[36], 2);
	ck_assert_uint_eq(bhs[37], 7);
	assert_zero(bhs, 38, 48);
	pdu_decode_login_rsp(bhs, &q);
	ck_assert(q.transit && !q.cont);
	ck_assert_uint_eq(q.csg, 1);
	ck_assert_uint_eq(q.nsg, 3);
	ck_assert_mem_eq(q.isid, p.isid, 6);
	ck_assert_uint_eq(q.tsih, 0x1234);
	ck_assert_uint_eq(q.status_class, 2);
	ck_assert_uint_eq(q.status_detail, 7);
}
END_TEST

/*
 * Round trips of every other opcode's struct: decode into a struct filled
 * with 0xa5 so a field the decoder misses shows up when re-encoded (struct
 * padding makes a memcmp of the structs unreliable).
 */
#define ROUND(name, ...) do { \
	struct pdu_##name a = { __VA_ARGS__ }, b; \
	uint8_t again[ISCSI_BHS_LEN]; \
	memset(&b, 0xa5, sizeof(b)); \
	pdu_encode_##name(bhs, &a); \
	pdu_decode_##name(bhs, &b); \
	pdu_encode_##name(again, &b); \
	ck_assert_msg(!memcmp(bhs, again, ISCSI_BHS_LEN), #name " round trip"); \
} while (0)

START_TEST(round_trips)
{
	ROUND(scsi_rsp, .flags = ISCSI_FLAG_OVERFLOW | ISCSI_FLAG_BIDI_UNDERFLOW,
	      .response = 1, .status = 0x18, .data_len = 20, .itt = 2,
	      .snack_tag = 3, .statsn = 4, .expcmdsn = 5, .maxcmdsn = 6,
	      .expdatasn = 7, .bidi_residual = 8, .residual = 9);
	ROUND(data_out, .final = true, .data_len = 4096, .lun = 1ULL << 48,
	      .itt = 10, .ttt = 11, .expstatsn = 12, .datasn = 13,
	      .offset = 14);
	ROUND(nop_out, .immediate = true, .data_len = 5, .lun = 2ULL << 48,
	      .itt = 15, .ttt = 16, .cmdsn = 17, .expstatsn = 18);
	ROUND(nop_in, .data_len = 6, .lun = 3ULL << 48, .itt = 19, .ttt = 20,
	      .statsn = 21, .expcmdsn = 22, .maxcmdsn = 23);
	ROUND(login_req, .transit = true, .cont = false, .csg = 0, .nsg = 1,
	      .version_max = 0, .version_min = 0, .data_len = 77,
	      .isid = { 1, 2, 3, 4, 5, 6 }, .tsih = 24, .cid = 25, .itt = 26,
	      .cmdsn = 27, .expstatsn = 28);
	ROUND(text_req, .immediate = true, .final = false, .cont = true,
	      .data_len = 29, .lun = 0, .itt = 30, .ttt = 31, .cmdsn = 32,
	      .expstatsn = 33);
	ROUND(text_rsp, .final = true, .cont = false, .data_len = 34,
	      .lun = 0, .itt = 35, .ttt = ISCSI_RSVD_TAG, .statsn = 36,
	      .expcmdsn = 37, .maxcmdsn = 38);
	ROUND(logout_req, .immediate = true, .reason = 1, .data_len = 0,
	      .itt = 39, .cid = 40, .cmdsn = 41, .expstatsn = 42);
	ROUND(logout_rsp, .response = 2, .itt = 43, .statsn = 44,
	      .expcmdsn = 45, .maxcmdsn = 46, .time2wait = 47,
	      .time2retain = 48);
	ROUND(tmf_req, .immediate = true, .function = ISCSI_TMF_LUN_RESET,
	      .data_len = 0, .lun = 4ULL << 48, .itt = 49, .rtt = 50,
	      .cmdsn = 51, .expstatsn = 52, .refcmdsn = 53, .expdatasn = 54);
	ROUND(tmf_rsp, .response = 5, .itt = 55, .statsn = 56,
	      .expcmdsn = 57, .maxcmdsn = 58);
	ROUND(reject, .reason = ISCSI_REJECT_PROTOCOL_ERROR, .data_len = 48,
	      .statsn = 59, .expcmdsn = 60, .maxcmdsn = 61, .datasn = 62);
	ROUND(async, .data_len = 63, .lun = 5ULL << 48, .statsn = 64,
	      .expcmdsn = 65, .maxcmdsn = 66, .event = 1, .vcode = 2,
	      .param1 = 67, .param2 = 68, .param3 = 69);
	ROUND(snack, .type = 1, .lun = 6ULL << 48, .itt = 70, .ttt = 71,
	      .expstatsn = 72, .begrun = 73, .runlength = 74);
}
END_TEST

START_TEST(fixed_bits)
{
	struct pdu_tmf_req t = { .function = ISCSI_TMF_ABORT_TASK, .itt = 1 };
	struct pdu_reject r = { .reason = 9, .data_len = 48 };
	struct pdu_login_req l = { .csg = 1, .nsg = 3, .transit = true };

	pdu_encode_tmf_req(bhs, &t);
	ck_assert_uint_eq(bhs[1], 0x81);	/* F bit + function */
	pdu_encode_reject(bhs, &r);
	ck_assert_uint_eq(bhs[0], 0x3f);
	ck_assert_uint_eq(bhs[1], 0x80);
	ck_assert_uint_eq(bhs[2], 9);
	ck_assert_uint_eq(get_be32(bhs + 16), 0xffffffffu);
	ck_assert_uint_eq(pdu_data_len(bhs), 48);
	pdu_encode_login_req(bhs, &l);
	ck_assert_uint_eq(bhs[0], 0x43);	/* immediate always */
	ck_assert_uint_eq(bhs[1], 0x87);
	ck_assert_str_eq(pdu_opcode_name(ISCSI_OP_R2T), "R2T");
	ck_assert_str_eq(pdu_opcode_name(0x3e), "unknown");
	ck_assert(pdu_opcode_is_initiator(ISCSI_OP_SNACK_REQ));
	ck_assert(!pdu_opcode_is_initiator(ISCSI_OP_NOP_IN));
}
END_TEST

START_TEST(check_initiator)
{
	const char *why;
	struct pdu_scsi_cmd c = { .final = true, .read = true, .attr = 1 };
	struct pdu_nop_out n = { .itt = 1 };
	struct pdu_text_req t = { .final = true };

	pdu_encode_scsi_cmd(bhs, &c);
	ck_assert_int_eq(pdu_check_initiator_bhs(bhs, &why), 0);
	/* A target opcode and an unassigned one. */
	bhs[0] = ISCSI_OP_SCSI_RSP;
	ck_assert_int_eq(pdu_check_initiator_bhs(bhs, &why),
			 ISCSI_REJECT_CMD_NOT_SUPPORTED);
	ck_assert_ptr_nonnull(why);
	bhs[0] = 0x1c;
	ck_assert_int_eq(pdu_check_initiator_bhs(bhs, &why),
			 ISCSI_REJECT_CMD_NOT_SUPPORTED);
	/* Bidirectional without AHS; with AHS it passes. */
	c.write = true;
	pdu_encode_scsi_cmd(bhs, &c);
	ck_assert_int_eq(pdu_check_initiator_bhs(bhs, &why),
			 ISCSI_REJECT_PROTOCOL_ERROR);
	bhs[BHS_TOTAL_AHS_LEN] = 2;
	ck_assert_int_eq(pdu_check_initiator_bhs(bhs, &why), 0);
	/* Reserved task attribute. */
	c.write = false;
	c.attr = 6;
	pdu_encode_scsi_cmd(bhs, &c);
	ck_assert_int_eq(pdu_check_initiator_bhs(bhs, &why),
			 ISCSI_REJECT_INVALID_PDU_FIELD);
	/* NOP-Out: AHS not allowed, F mandatory. */
	pdu_encode_nop_out(bhs, &n);
	ck_assert_int_eq(pdu_check_initiator_bhs(bhs, &why), 0);
	bhs[BHS_TOTAL_AHS_LEN] = 1;
	ck_assert_int_eq(pdu_check_initiator_bhs(bhs, &why),
			 ISCSI_REJECT_PROTOCOL_ERROR);
	bhs[BHS_TOTAL_AHS_LEN] = 0;
	bhs[1] = 0;
	ck_assert_int_eq(pdu_check_initiator_bhs(bhs, &why),
			 ISCSI_REJECT_PROTOCOL_ERROR);
	/* Text with F and C. */
	t.cont = true;
	pdu_encode_text_req(bhs, &t);
	ck_assert_int_eq(pdu_check_initiator_bhs(bhs, &why),
			 ISCSI_REJECT_PROTOCOL_ERROR);
	/* Login with T and C. */
	memset(bhs, 0, sizeof(bhs));
	bhs[0] = 0x43;
	bhs[1] = ISCSI_LOGIN_TRANSIT | ISCSI_LOGIN_CONTINUE;
	ck_assert_int_eq(pdu_check_initiator_bhs(bhs, &why),
			 ISCSI_REJECT_PROTOCOL_ERROR);
	/* TMF without F bit. */
	memset(bhs, 0, sizeof(bhs));
	bhs[0] = ISCSI_OP_TMF_REQ;
	bhs[1] = ISCSI_TMF_ABORT_TASK;
	ck_assert_int_eq(pdu_check_initiator_bhs(bhs, &why),
			 ISCSI_REJECT_PROTOCOL_ERROR);
}
END_TEST

START_TEST(check_target)
{
	const char *why;
	struct pdu_data_in d = { .final = true, .status_present = true };

	pdu_encode_data_in(bhs, &d);
	ck_assert_int_eq(pdu_check_target_bhs(bhs, &why), 0);
	bhs[1] = ISCSI_FLAG_STATUS;	/* S without F */
	ck_assert_int_eq(pdu_check_target_bhs(bhs, &why),
			 ISCSI_REJECT_PROTOCOL_ERROR);
	bhs[0] = ISCSI_OP_SCSI_CMD;
	ck_assert_int_eq(pdu_check_target_bhs(bhs, &why),
			 ISCSI_REJECT_CMD_NOT_SUPPORTED);
	memset(bhs, 0, sizeof(bhs));
	bhs[0] = ISCSI_OP_R2T;		/* F missing */
	ck_assert_int_eq(pdu_check_target_bhs(bhs, &why),
			 ISCSI_REJECT_PROTOCOL_ERROR);
}
END_TEST

START_TEST(lun_addressing)
{
	ck_assert_uint_eq(pdu_lun_encode(0), 0);
	ck_assert_uint_eq(pdu_lun_encode(5), 0x0005000000000000ULL);
	ck_assert_uint_eq(pdu_lun_encode(255), 0x00ff000000000000ULL);
	ck_assert_uint_eq(pdu_lun_encode(256), 0x4100000000000000ULL);
	ck_assert_uint_eq(pdu_lun_encode(0x3fff), 0x7fff000000000000ULL);
	for (uint64_t l = 0; l < 0x4000; l += 17)
		ck_assert_uint_eq(pdu_lun_decode(pdu_lun_encode(l)), l);
	/* Flat addressing of a small LUN. */
	ck_assert_uint_eq(pdu_lun_decode(0x4003000000000000ULL), 3);
	/* Peripheral with a bus number, second level, logical unit
	 * addressing, extended: not supported. */
	ck_assert_uint_eq(pdu_lun_decode(0x0105000000000000ULL), UINT64_MAX);
	ck_assert_uint_eq(pdu_lun_decode(0x0005000100000000ULL), UINT64_MAX);
	ck_assert_uint_eq(pdu_lun_decode(0x8005000000000000ULL), UINT64_MAX);
	ck_assert_uint_eq(pdu_lun_decode(0xc005000000000000ULL), UINT64_MAX);
}
END_TEST

/* The 8-byte LUN field as SAM-5 4.7 lays out one level: peripheral
 * device addressing (00b, bus 0, the LUN in byte 1) below 256, flat
 * space addressing (01b, 14 bits) above. */
static void lun_bytes(uint64_t lun, const uint8_t want[8])
{
	uint8_t b[8];

	put_be64(b, pdu_lun_encode(lun));
	ck_assert_mem_eq(b, want, 8);
	ck_assert_uint_eq(pdu_lun_decode(get_be64(want)), lun);
}

START_TEST(lun_encoding_known_answers)
{
	static const uint8_t l0[8] = { 0x00, 0x00 };
	static const uint8_t l5[8] = { 0x00, 0x05 };
	static const uint8_t l255[8] = { 0x00, 0xff };
	static const uint8_t l256[8] = { 0x41, 0x00 };
	static const uint8_t l1234[8] = { 0x52, 0x34 };
	static const uint8_t l3fff[8] = { 0x7f, 0xff };
	static const uint8_t flat3[8] = { 0x40, 0x03 };
	static const uint8_t bus1[8] = { 0x01, 0x05 };
	static const uint8_t level2[8] = { 0x00, 0x05, 0x00, 0x01 };
	static const uint8_t logical_unit[8] = { 0x80, 0x05 };
	static const uint8_t extended[8] = { 0xc0, 0x05 };

	lun_bytes(0, l0);
	lun_bytes(5, l5);
	lun_bytes(255, l255);
	lun_bytes(256, l256);
	lun_bytes(0x1234, l1234);
	lun_bytes(0x3fff, l3fff);
	/* Flat space addressing of a LUN below 256 means the same LUN. */
	ck_assert_uint_eq(pdu_lun_decode(get_be64(flat3)), 3);
	/* A bus number, a second level, the logical unit and extended
	 * addressing methods: not ours (LOGICAL UNIT NOT SUPPORTED). */
	ck_assert_uint_eq(pdu_lun_decode(get_be64(bus1)), UINT64_MAX);
	ck_assert_uint_eq(pdu_lun_decode(get_be64(level2)), UINT64_MAX);
	ck_assert_uint_eq(pdu_lun_decode(get_be64(logical_unit)), UINT64_MAX);
	ck_assert_uint_eq(pdu_lun_decode(get_be64(extended)), UINT64_MAX);
}
END_TEST

/*
 * A SCSI Command carrying an Extended CDB AHS (RFC 7143 11.3.1.1: a
 * 32-byte CDB, AHSLength 17 with its reserved byte, 20 bytes) and a
 * Bidirectional Read Expected Data Transfer Length AHS (11.3.1.2:
 * AHSLength 5, 8 bytes): TotalAHSLength counts 4-byte words, 7 here.
 * (The AHS themselves: ahs_segments_known_answers.)
 */
START_TEST(ahs_length_counts_words)
{
	static const uint8_t rfc[48] = {
		0x01, 0xe1, 0x00, 0x00,		/* F R W, SIMPLE */
		0x07, 0x00, 0x00, 0x00,		/* TotalAHSLength 7 */
		[20] = 0x00, 0x00, 0x10, 0x00,	/* EDTL (the write) */
		[32] = 0x7f,			/* a variable-length CDB */
	};
	struct pdu_scsi_cmd q;
	const char *why;

	ck_assert_uint_eq(pdu_ahs_len(rfc), 28);
	pdu_decode_scsi_cmd(rfc, &q);
	ck_assert_uint_eq(q.ahs_words, 7);
	ck_assert(q.read && q.write);
	ck_assert_uint_eq(q.edtl, 0x1000);
	/* Bidirectional with its AHS passes; without it, it cannot. */
	ck_assert_int_eq(pdu_check_initiator_bhs(rfc, &why), 0);
	memcpy(bhs, rfc, sizeof(bhs));
	bhs[4] = 0;
	ck_assert_int_eq(pdu_check_initiator_bhs(bhs, &why),
			 ISCSI_REJECT_PROTOCOL_ERROR);
	/* No other opcode may carry AHS. */
	bhs[0] = ISCSI_OP_NOP_OUT;
	bhs[1] = 0x80;
	bhs[4] = 1;
	ck_assert_int_eq(pdu_check_initiator_bhs(bhs, &why),
			 ISCSI_REJECT_PROTOCOL_ERROR);
}
END_TEST

/*
 * The AHS segments of that command, written from RFC 7143 11.2.1.2-4
 * (AHSLength counts the AHS-specific byte and the data, not the padding):
 * an Extended CDB AHS for a 32-byte CDB (AHSLength 0x0011: the reserved
 * byte and the 16 bytes past the BHS's; type 1; 20 bytes) and a
 * Bidirectional Read Expected Data Transfer Length AHS (AHSLength
 * 0x0005, type 2, reserved, 4 bytes; 8 bytes): 28 bytes, 7 words.
 */
START_TEST(ahs_segments_known_answers)
{
	static const uint8_t ahs[28] = {
		0x00, 0x11, 0x01, 0x00,
		0x10, 0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17,
		0x18, 0x19, 0x1a, 0x1b, 0x1c, 0x1d, 0x1e, 0x1f,
		0x00, 0x05, 0x02, 0x00, 0x00, 0x01, 0x02, 0x00,
	};
	static const uint8_t two_cdbs[16] = {
		0x00, 0x05, 0x01, 0x00, 1, 2, 3, 4,
		0x00, 0x05, 0x01, 0x00, 1, 2, 3, 4,
	};
	static const uint8_t unknown[4] = { 0x00, 0x01, 0x03, 0x00 };
	static const uint8_t zero[4] = { 0x00, 0x00, 0x01, 0x00 };
	static const uint8_t bidi4[8] = { 0x00, 0x04, 0x02, 0x00, 0, 0, 1, 0 };
	struct pdu_cmd_ahs a;
	uint8_t tail[16], out[20];

	ck_assert_int_eq(pdu_decode_cmd_ahs(ahs, sizeof(ahs), 244, &a), 0);
	ck_assert_ptr_eq(a.ext_cdb, ahs + 4);
	ck_assert_uint_eq(a.ext_cdb_len, 16);
	ck_assert(a.has_bidi_read_len);
	ck_assert_uint_eq(a.bidi_read_len, 0x00010200);
	/* The Extended CDB AHS alone. */
	ck_assert_int_eq(pdu_decode_cmd_ahs(ahs, 20, 244, &a), 0);
	ck_assert_uint_eq(a.ext_cdb_len, 16);
	ck_assert(!a.has_bidi_read_len);
	/* Cut short, or a CDB longer than the room for it: malformed. */
	ck_assert_int_eq(pdu_decode_cmd_ahs(ahs, 27, 244, &a), -1);
	ck_assert_int_eq(pdu_decode_cmd_ahs(ahs, 2, 244, &a), -1);
	ck_assert_int_eq(pdu_decode_cmd_ahs(ahs, 28, 15, &a), -1);
	/* Two Extended CDB AHS, an unknown type, AHSLength 0, a
	 * bidirectional length of 4 bytes: each malformed. */
	ck_assert_int_eq(pdu_decode_cmd_ahs(two_cdbs, 16, 244, &a), -1);
	ck_assert_int_eq(pdu_decode_cmd_ahs(unknown, 4, 244, &a), -1);
	ck_assert_int_eq(pdu_decode_cmd_ahs(zero, 4, 244, &a), -1);
	ck_assert_int_eq(pdu_decode_cmd_ahs(bidi4, 8, 244, &a), -1);
	/* The encoder writes the first segment byte for byte. */
	for (int i = 0; i < 16; i++)
		tail[i] = (uint8_t)(0x10 + i);
	ck_assert_uint_eq(pdu_encode_ext_cdb_ahs(out, tail, 16), 20);
	ck_assert_mem_eq(out, ahs, 20);
}
END_TEST

/* RFC 3720 appendix B.4: the digest bytes as they go on the wire. */
static void crc_wire(const uint8_t *buf, size_t len, const uint8_t want[4])
{
	uint32_t v = crc32c(buf, len);
	uint8_t wire[4] = { (uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16),
			    (uint8_t)(v >> 24) };

	ck_assert_mem_eq(wire, want, 4);
}

START_TEST(crc32c_rfc3720_vectors)
{
	uint8_t buf[32];
	static const uint8_t zeros[4] = { 0xaa, 0x36, 0x91, 0x8a };
	static const uint8_t ones[4] = { 0x43, 0xab, 0xa8, 0x62 };
	static const uint8_t inc[4] = { 0x4e, 0x79, 0xdd, 0x46 };
	static const uint8_t dec[4] = { 0x5c, 0xdb, 0x3f, 0x11 };
	uint32_t c;

	memset(buf, 0, 32);
	crc_wire(buf, 32, zeros);
	memset(buf, 0xff, 32);
	crc_wire(buf, 32, ones);
	for (int i = 0; i < 32; i++)
		buf[i] = (uint8_t)i;
	crc_wire(buf, 32, inc);
	for (int i = 0; i < 32; i++)
		buf[i] = (uint8_t)(31 - i);
	crc_wire(buf, 32, dec);
	/* B.4's iSCSI Read (10) Command PDU: ITT 14h, EDTL 400h (1 KiB),
	 * CmdSN 14h, ExpStatSN 18h, READ (10) of 2 blocks at LBA 0. */
	static const uint8_t read_pdu[48] = {
		0x01, 0xc0, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
		0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
		0x14, 0x00, 0x00, 0x00, 0x00, 0x00, 0x04, 0x00,
		0x00, 0x00, 0x00, 0x14, 0x00, 0x00, 0x00, 0x18,
		0x28, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
		0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	};
	static const uint8_t read_crc[4] = { 0x56, 0x3a, 0x96, 0xd9 };
	crc_wire(read_pdu, sizeof(read_pdu), read_crc);
	/* The classic check value. */
	ck_assert_uint_eq(crc32c("123456789", 9), 0xe3069283u);
	/* Incremental equals one shot. */
	c = crc32c_update(0xffffffffu, buf, 10);
	c = crc32c_update(c, buf + 10, 22);
	ck_assert_uint_eq(~c, crc32c(buf, 32));
	ck_assert_uint_eq(crc32c(buf, 0), 0);
}
END_TEST

static Suite *pdu_suite(void)
{
	Suite *s = suite_create("pdu");
	TCase *tc = tcase_create("codec");

	harness_add(tc, scsi_cmd_key_bytes_and_round_trip);
	harness_add(tc, data_in_key_bytes_and_status_only_with_s);
	harness_add(tc, r2t_key_bytes_and_round_trip);
	harness_add(tc, login_rsp_key_bytes_and_round_trip);
	harness_add(tc, round_trips);
	harness_add(tc, fixed_bits);
	harness_add(tc, check_initiator);
	harness_add(tc, check_target);
	harness_add(tc, lun_addressing);
	harness_add(tc, lun_encoding_known_answers);
	harness_add(tc, ahs_length_counts_words);
	harness_add(tc, ahs_segments_known_answers);
	harness_add(tc, crc32c_rfc3720_vectors);
	suite_add_tcase(s, tc);
	return s;
}

int main(int argc, char **argv)
{
	return harness_main(argc, argv, pdu_suite);
}
