/*
 * ODX (scsi/odx*.c): POPULATE TOKEN, WRITE USING TOKEN and RECEIVE ROD
 * TOKEN INFORMATION through the device server, on the ram LUN of the SBC
 * suites. Expected bytes come from the standards: the CDBs and parameter
 * lists of SBC-4 (POPULATE TOKEN 83h/10h: header of 16 bytes, ranges of
 * 16; WRITE USING TOKEN 83h/11h: OFFSET INTO ROD at 8, the token at 16,
 * range descriptor length at 534, ranges at 536), RECEIVE ROD TOKEN
 * INFORMATION (84h/07h, SPC-4: the RECEIVE COPY STATUS (LID4) layout,
 * then the ROD token descriptors), the SPC-4 ROD token (type, length
 * 01F8h, creator logical unit descriptor, bytes represented), the
 * third-party copy VPD page 8Fh and the sense codes (ASC 23h INVALID
 * TOKEN OPERATION and its qualifiers, 55h/0Dh INSUFFICIENT RESOURCES TO
 * CREATE ROD TOKEN, 26h/08h TOO MANY SEGMENT DESCRIPTORS).
 */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "tcq/byteorder.h"
#include "tcq/scsi_proto.h"
#include "scsi/lun.h"
#include "scsi/odx.h"
#include "tests/unit/sbc_util.h"

static uint64_t fake_secs = 1000;

static uint64_t fake_now(void)
{
	return fake_secs;
}

static void odx_setup(void)
{
	setup();
	fake_secs = 1000;
	odx_set_clock(fake_now);
}

/* Parameter lists ------------------------------------------------------- */

struct range {
	uint64_t lba;
	uint32_t blocks;
};

static uint32_t put_ranges(uint8_t *d, const struct range *r, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		memset(d + 16 * i, 0, 16);
		put_be64(d + 16 * i, r[i].lba);
		put_be32(d + 16 * i + 8, r[i].blocks);
	}
	return 16 * n;
}

/* POPULATE TOKEN from nexus n with LIST IDENTIFIER id. */
static struct cmd *populate(unsigned n, uint32_t id, uint32_t secs,
			    const struct range *r, unsigned nr)
{
	static uint8_t p[16 + 16 * 80];
	uint8_t cdb[16] = { SOP_EXTENDED_COPY, 0x10 };

	memset(p, 0, 16);
	put_be32(p + 4, secs);			/* INACTIVITY TIMEOUT */
	uint32_t dl = put_ranges(p + 16, r, nr);
	put_be16(p, (uint16_t)(14 + dl));	/* POPULATE TOKEN DATA LENGTH */
	put_be16(p + 14, (uint16_t)dl);
	put_be32(cdb + 6, id);
	put_be32(cdb + 10, 16 + dl);
	return run(n, cdb, 16, p, 16 + dl, 0);
}

/* RECEIVE ROD TOKEN INFORMATION for id: its data (GOOD expected). */
static const uint8_t *rrti(unsigned n, uint32_t id)
{
	uint8_t cdb[16] = { SOP_RECEIVE_COPY_RESULTS, 0x07 };

	put_be32(cdb + 2, id);
	put_be32(cdb + 10, 1024);
	struct cmd *c = run(n, cdb, 16, NULL, 0, 1024);
	EXPECT_GOOD(c);
	return cmd_data(c);
}

/* The token made by POPULATE TOKEN id (read with RRTI). */
static void token_of(unsigned n, uint32_t id, uint8_t tok[512])
{
	const uint8_t *d = rrti(n, id);

	ck_assert_uint_eq(get_be32(d + 32), 514);	/* descriptors length */
	memcpy(tok, d + 38, 512);
}

static struct cmd *wut_at(unsigned n, uint64_t lun_nr, uint32_t id,
			  const uint8_t tok[512], uint64_t offset,
			  uint8_t flags, const struct range *r, unsigned nr)
{
	static uint8_t p[536 + 16 * 80];
	uint8_t cdb[16] = { SOP_EXTENDED_COPY, 0x11 };

	memset(p, 0, 536);
	p[2] = flags;
	put_be64(p + 8, offset);		/* OFFSET INTO ROD */
	memcpy(p + 16, tok, 512);
	uint32_t dl = put_ranges(p + 536, r, nr);
	put_be16(p, (uint16_t)(534 + dl));
	put_be16(p + 534, (uint16_t)dl);
	put_be32(cdb + 6, id);
	put_be32(cdb + 10, 536 + dl);
	return run_cdb_at(&H, n, lun_nr, cdb, 16, p, 536 + dl, 0);
}

static struct cmd *wut(unsigned n, uint32_t id, const uint8_t tok[512],
		       uint64_t offset, const struct range *r, unsigned nr)
{
	return wut_at(n, 0, id, tok, offset, 0, r, nr);
}

static void pattern(uint64_t lba, uint32_t blocks, uint8_t seed)
{
	uint8_t *d = malloc((size_t)blocks * BS);

	for (size_t i = 0; i < (size_t)blocks * BS; i++)
		d[i] = (uint8_t)(seed + i / 7);
	write16(lba, d, blocks);
	free(d);
}

static void expect_same(uint64_t a, uint64_t b, uint32_t blocks)
{
	uint8_t *x = malloc((size_t)blocks * BS), *y = malloc((size_t)blocks * BS);

	read16(a, x, blocks);
	read16(b, y, blocks);
	ck_assert_msg(!memcmp(x, y, (size_t)blocks * BS),
		      "blocks %llu and %llu differ", (unsigned long long)a,
		      (unsigned long long)b);
	free(x);
	free(y);
}

/* Makes a token of ranges r (list id 1, nexus A). */
static void make_token(const struct range *r, unsigned nr, uint32_t secs,
		       uint8_t tok[512])
{
	EXPECT_GOOD(populate(A, 1, secs, r, nr));
	token_of(A, 1, tok);
}

/* The checks ------------------------------------------------------------ */

START_TEST(vpd_page_8f_announces_odx)
{
	/* Standard INQUIRY: 3PC (byte 5 bit 3), a third-party copy
	 * manager addressable through the LUN (SPC-4 6.6.2). */
	uint8_t std[6] = { SOP_INQUIRY, 0, 0, 0, 96, 0 };
	struct cmd *c = run(A, std, 6, NULL, 0, 96);
	EXPECT_GOOD(c);
	ck_assert_uint_eq(cmd_data(c)[5] & 0x08, 0x08);

	uint8_t cdb[6] = { SOP_INQUIRY, 0x01, 0x00, 0, 255, 0 };
	c = run(A, cdb, 6, NULL, 0, 255);
	EXPECT_GOOD(c);
	const uint8_t *s = cmd_data(c);
	ck_assert_ptr_nonnull(memchr(s + 4, 0x8f, s[3]));

	cdb[2] = 0x8f;
	c = run(A, cdb, 6, NULL, 0, 255);
	EXPECT_GOOD(c);
	const uint8_t *p = cmd_data(c);
	/* Header: direct access, page 8Fh, PAGE LENGTH. */
	ck_assert_uint_eq(p[0], 0x00);
	ck_assert_uint_eq(p[1], 0x8f);
	ck_assert_uint_eq(get_be16(p + 2), 180);
	ck_assert_uint_eq(c->t.data_in_len, 184);
	/* Block Device ROD Token Limits: type 0000h, length 0020h. */
	static const uint8_t limits[36] = {
		0x00, 0x00, 0x00, 0x20, 0, 0, 0, 0, 0, 0,
		0x00, 64,			/* MAXIMUM RANGE DESCRIPTORS */
		0x00, 0x00, 0x02, 0x58,		/* MAX INACTIVITY TIMEOUT 600 */
		0x00, 0x00, 0x00, 0x3c,		/* DEFAULT 60 */
		0, 0, 0, 0, 0x00, 0x80, 0x00, 0x00, /* MAX TRANSFER 2^23 */
		0, 0, 0, 0, 0x00, 0x00, 0x08, 0x00, /* OPTIMAL 1 MiB */
	};
	ck_assert_int_eq(memcmp(p + 4, limits, 36), 0);
	/* Supported Commands: 83h with 00h 10h 11h, 84h with 00h 03h 07h. */
	static const uint8_t cmds[16] = {
		0x00, 0x01, 0x00, 0x0c, 10,
		0x83, 3, 0x00, 0x10, 0x11, 0x84, 3, 0x00, 0x03, 0x07, 0,
	};
	ck_assert_int_eq(memcmp(p + 40, cmds, 16), 0);
	/* ROD Token Features: no remote tokens, inactivity 600, one
	 * block device descriptor of 48 bytes. */
	const uint8_t *f = p + 56;
	ck_assert_uint_eq(get_be16(f), 0x0106);
	ck_assert_uint_eq(get_be16(f + 2), 92);
	ck_assert_uint_eq(f[4], 0);
	ck_assert_uint_eq(get_be32(f + 24), 600);
	ck_assert_uint_eq(get_be16(f + 46), 48);
	ck_assert_uint_eq(f[48], 0x00);
	ck_assert_uint_eq(get_be16(f + 50), 44);
	ck_assert_uint_eq(get_be64(f + 56), (uint64_t)BS << 23);
	/* Supported ROD Types: 00800001h in and out, FFFF0001h in. */
	static const uint8_t types[32] = {
		0x01, 0x08, 0x00, 0x1c, 0, 0, 0x00, 24,
		0x00, 0x80, 0x00, 0x01, 0x03, 0, 0, 0, 0, 0, 0, 0,
		0xff, 0xff, 0x00, 0x01, 0x02, 0, 0, 0, 0, 0, 0, 0,
	};
	ck_assert_int_eq(memcmp(p + 152, types, 32), 0);
}
END_TEST

START_TEST(populate_token_and_its_information)
{
	static const struct range src[2] = { { 100, 8 }, { 300, 24 } };
	uint8_t tok[512];

	EXPECT_GOOD(populate(A, 5, 0, src, 2));
	const uint8_t *d = rrti(A, 5);
	/* AVAILABLE DATA: 32 - 4 + no sense + 4 + 2 + 512. */
	ck_assert_uint_eq(get_be32(d), 546);
	ck_assert_uint_eq(d[4] & 0x1f, 0x10);	/* POPULATE TOKEN */
	ck_assert_uint_eq(d[5] & 0x7f, 0x01);	/* completed, no errors */
	ck_assert_uint_eq(d[12], 0x00);		/* GOOD */
	ck_assert_uint_eq(d[13], 0);		/* no sense data */
	ck_assert_uint_eq(d[15], 0xf1);		/* units: logical blocks */
	ck_assert_uint_eq(get_be64(d + 16), 32);	/* TRANSFER COUNT */
	ck_assert_uint_eq(get_be32(d + 32), 514);
	memcpy(tok, d + 38, 512);
	/* The ROD token (SPC-4): type, length, creator LU, bytes. */
	ck_assert_uint_eq(get_be32(tok), 0x00800001);
	ck_assert_uint_eq(get_be16(tok + 6), 0x01f8);
	ck_assert_uint_eq(tok[16], 0xe4);
	ck_assert_uint_eq(tok[21] & 0x0f, 3);	/* NAA */
	ck_assert_uint_eq(tok[23], 16);
	ck_assert_int_eq(memcmp(tok + 24, H.lun->naa, 16), 0);
	ck_assert_uint_eq(get_be24(tok + 45), BS);
	ck_assert_uint_eq(get_be64(tok + 48), 0);
	ck_assert_uint_eq(get_be64(tok + 56), 32 * BS);
	ck_assert_uint_eq(get_be32(tok + 96), BS);	/* block length */
	/* Reported once; another nexus never had it (INVALID FIELD IN
	 * CDB at the LIST IDENTIFIER). */
	uint8_t cdb[16] = { SOP_RECEIVE_COPY_RESULTS, 0x07 };
	put_be32(cdb + 2, 5);
	put_be32(cdb + 10, 1024);
	struct cmd *c = run(A, cdb, 16, NULL, 0, 1024);
	EXPECT_SENSE(c, SK_ILLEGAL_REQUEST, 0x24, 0x00);
	EXPECT_SENSE_FIELD(c, true, 2, -1);
	EXPECT_GOOD(populate(A, 6, 0, src, 2));
	EXPECT_SENSE(run(B, cdb, 16, NULL, 0, 1024), SK_ILLEGAL_REQUEST,
		     0x24, 0x00);
	/* Two tokens of the same ranges differ (unique, random part). */
	uint8_t tok2[512];
	token_of(A, 6, tok2);
	ck_assert_int_ne(memcmp(tok, tok2, 512), 0);
	ck_assert_int_ne(memcmp(tok + 160, tok2 + 160, 352), 0);
	/* A nexus that leaves takes its results with it. */
	EXPECT_GOOD(populate(A, 8, 0, src, 2));
	lun_nexus_leave(H.ts[A]);
	H.ts[A] = lun_nexus_join(H.lun, &H.r, harness_nexus(&H, A));
	static const uint8_t tur[6] = { SOP_TEST_UNIT_READY };
	EXPECT_SENSE(run(A, tur, 6, NULL, 0, 0), SK_UNIT_ATTENTION, 0x29,
		     0x00);	/* a new nexus: POWER ON, RESET ... */
	put_be32(cdb + 2, 8);
	EXPECT_SENSE(run(A, cdb, 16, NULL, 0, 1024), SK_ILLEGAL_REQUEST,
		     0x24, 0x00);
}
END_TEST

START_TEST(write_using_token_copies_ranges)
{
	static const struct range src[2] = { { 100, 8 }, { 300, 2100 } };
	static const struct range dst[3] = { { 5000, 1000 }, { 9000, 8 },
					     { 7000, 1100 } };
	uint8_t tok[512];

	pattern(100, 8, 1);
	pattern(300, 2100, 77);	/* over one 1 MiB chunk */
	make_token(src, 2, 0, tok);
	EXPECT_GOOD(wut(A, 9, tok, 0, dst, 3));
	/* The ROD is the ranges in order: 8 + 2100 blocks. */
	expect_same(100, 5000, 8);
	expect_same(300, 5008, 992);
	expect_same(1292, 9000, 8);
	expect_same(1300, 7000, 1100);
	const uint8_t *d = rrti(A, 9);
	ck_assert_uint_eq(d[4] & 0x1f, 0x11);	/* WRITE USING TOKEN */
	ck_assert_uint_eq(d[5] & 0x7f, 0x01);
	ck_assert_uint_eq(d[15], 0xf1);
	ck_assert_uint_eq(get_be64(d + 16), 2108);
	ck_assert_uint_eq(get_be32(d + 32), 0);	/* no token */
	ck_assert_uint_eq(get_be32(d), 32);
}
END_TEST

START_TEST(offset_into_rod_and_a_short_rod)
{
	static const struct range src[1] = { { 200, 16 } };
	static const struct range dst[1] = { { 4000, 20 } };
	uint8_t tok[512];

	pattern(200, 16, 9);
	expect_blocks(4013, 7, 0);
	make_token(src, 1, 0, tok);
	/* From block 3 of the ROD: 13 blocks are left for 20. */
	EXPECT_GOOD(wut(A, 2, tok, 3, dst, 1));
	expect_same(203, 4000, 13);
	expect_blocks(4013, 7, 0);
	const uint8_t *d = rrti(A, 2);
	/* COMPLETED WITHOUT ERRORS BUT WITH PARTIAL ROD TOKEN USAGE. */
	ck_assert_uint_eq(d[5] & 0x7f, 0x03);
	ck_assert_uint_eq(get_be64(d + 16), 13);
	/* An offset past the ROD: INVALID FIELD IN PARAMETER LIST at 8. */
	struct cmd *c = wut(A, 3, tok, 17, dst, 1);
	EXPECT_SENSE(c, SK_ILLEGAL_REQUEST, 0x26, 0x00);
	EXPECT_SENSE_FIELD(c, false, 8, -1);
}
END_TEST

START_TEST(a_write_to_the_source_cancels_the_token)
{
	static const struct range src[2] = { { 100, 8 }, { 300, 8 } };
	static const struct range dst[1] = { { 6000, 16 } };
	uint8_t tok[512], blk[BS];

	memset(blk, 0xa5, sizeof(blk));
	make_token(src, 2, 0, tok);
	/* A write next to the ranges leaves it alone ... */
	write16(108, blk, 1);
	write16(299, blk, 1);
	EXPECT_GOOD(wut(A, 2, tok, 0, dst, 1));
	/* ... one into them, from another nexus, cancels it. */
	uint8_t cdb[16];
	cdb16(cdb, SOP_WRITE_16, 0, 307, 1);
	EXPECT_GOOD(run(B, cdb, 16, blk, BS, 0));
	struct cmd *c = wut(A, 3, tok, 0, dst, 1);
	EXPECT_SENSE(c, SK_ILLEGAL_REQUEST, 0x23, 0x08);
	/* INVALID TOKEN OPERATION, TOKEN CANCELLED; and RRTI says so. */
	const uint8_t *d = rrti(A, 3);
	ck_assert_uint_eq(d[5] & 0x7f, 0x02);	/* completed with errors */
	ck_assert_uint_eq(d[12], SAM_STAT_CHECK_CONDITION);
	ck_assert_uint_eq(d[13], 18);
	ck_assert_uint_eq(d[32 + 2] & 0x0f, SK_ILLEGAL_REQUEST);
	ck_assert_uint_eq(d[32 + 12], 0x23);
	ck_assert_uint_eq(d[32 + 13], 0x08);
	/* WRITE SAME over a range cancels as well. */
	make_token(src, 2, 0, tok);
	uint8_t ws[16];
	cdb16(ws, SOP_WRITE_SAME_16, 0, 98, 4);
	EXPECT_GOOD(run(B, ws, 16, blk, BS, 0));
	EXPECT_SENSE(wut(A, 4, tok, 0, dst, 1), SK_ILLEGAL_REQUEST, 0x23,
		     0x08);
}
END_TEST

/* A write still with the backend when a token of its blocks is made may
 * land after it: the token is cancelled when the write ends. */
START_TEST(a_token_made_during_a_write_is_cancelled_when_it_ends)
{
	static const struct range src[1] = { { 100, 8 } };
	static const struct range dst[1] = { { 200, 8 } };
	uint8_t tok[512], blk[BS], cdb[16];

	teardown();
	harness_lun_setup(&H, "delay:latency=2s,base=ram", 1u << 24, 2);
	memset(blk, 0x5a, sizeof(blk));
	cdb16(cdb, SOP_WRITE_16, 0, 104, 1);
	struct cmd *w = start_cdb(&H, B, TASK_ATTR_SIMPLE, cdb, 16, blk, BS,
				  0);
	make_token(src, 1, 0, tok);
	ck_assert_msg(!w->done, "the write ended before the token was made");
	wait_cmd(&H, w);
	EXPECT_GOOD(w);
	EXPECT_SENSE(wut(A, 2, tok, 0, dst, 1), SK_ILLEGAL_REQUEST, 0x23,
		     0x08);
}
END_TEST

START_TEST(tokens_refused_with_their_reason)
{
	static const struct range src[1] = { { 10, 4 } };
	static const struct range dst[1] = { { 20, 4 } };
	uint8_t tok[512], bad[512];

	make_token(src, 1, 0, tok);
	/* A token never made: TOKEN UNKNOWN. */
	memcpy(bad, tok, 512);
	put_be64(bad + 8, get_be64(tok + 8) + 1000);
	EXPECT_SENSE(wut(A, 2, bad, 0, dst, 1), SK_ILLEGAL_REQUEST, 0x23,
		     0x04);
	/* Its random part altered: TOKEN CORRUPT. */
	memcpy(bad, tok, 512);
	bad[400] ^= 1;
	EXPECT_SENSE(wut(A, 2, bad, 0, dst, 1), SK_ILLEGAL_REQUEST, 0x23,
		     0x05);
	/* Another ROD type: UNSUPPORTED TOKEN TYPE; another length:
	 * INVALID TOKEN LENGTH. */
	memcpy(bad, tok, 512);
	put_be32(bad, 0x00010000);
	EXPECT_SENSE(wut(A, 2, bad, 0, dst, 1), SK_ILLEGAL_REQUEST, 0x23,
		     0x01);
	memcpy(bad, tok, 512);
	put_be16(bad + 6, 0x01f0);
	EXPECT_SENSE(wut(A, 2, bad, 0, dst, 1), SK_ILLEGAL_REQUEST, 0x23,
		     0x0a);
	/* DEL_TKN: used once, then TOKEN DELETED. */
	EXPECT_GOOD(wut_at(A, 0, 2, tok, 0, 0x02, dst, 1));
	EXPECT_SENSE(wut(A, 2, tok, 0, dst, 1), SK_ILLEGAL_REQUEST, 0x23,
		     0x09);
}
END_TEST

START_TEST(inactivity_timeout_honoured_up_to_the_maximum)
{
	static const struct range src[1] = { { 10, 4 } };
	static const struct range dst[1] = { { 20, 4 } };
	uint8_t tok[512], dflt[512];

	/* Over the maximum of the VPD page: INVALID FIELD at byte 4. */
	struct cmd *c = populate(A, 1, 601, src, 1);
	EXPECT_SENSE(c, SK_ILLEGAL_REQUEST, 0x26, 0x00);
	EXPECT_SENSE_FIELD(c, false, 4, -1);
	make_token(src, 1, 5, tok);
	EXPECT_GOOD(populate(A, 7, 0, src, 1));	/* the default, 60 */
	token_of(A, 7, dflt);
	fake_secs += 5;		/* 5 s idle: still live; using it restarts */
	EXPECT_GOOD(wut(A, 2, tok, 0, dst, 1));
	fake_secs += 6;		/* 6 s idle: expired */
	EXPECT_SENSE(wut(A, 2, tok, 0, dst, 1), SK_ILLEGAL_REQUEST, 0x23,
		     0x07);
	fake_secs += 49;	/* 60 s since the default one was made */
	EXPECT_GOOD(wut(A, 2, dflt, 0, dst, 1));
	fake_secs += 61;
	EXPECT_SENSE(wut(A, 2, dflt, 0, dst, 1), SK_ILLEGAL_REQUEST, 0x23,
		     0x07);
}
END_TEST

START_TEST(limits_of_ranges_and_tokens)
{
	struct range r[65];
	uint8_t tok[512];

	for (unsigned i = 0; i < 65; i++)
		r[i] = (struct range){ 10 * i, 2 };
	EXPECT_SENSE(populate(A, 1, 0, r, 65), SK_ILLEGAL_REQUEST, 0x26,
		     0x08);
	/* TOO MANY SEGMENT DESCRIPTORS */
	r[0] = (struct range){ NBLOCKS - 1, 2 };
	EXPECT_SENSE(populate(A, 1, 0, r, 1), SK_ILLEGAL_REQUEST, 0x21, 0x00);
	/* Overlapping ranges: INVALID FIELD IN PARAMETER LIST. */
	r[0] = (struct range){ 10, 4 };
	r[1] = (struct range){ 12, 4 };
	EXPECT_SENSE(populate(A, 1, 0, r, 2), SK_ILLEGAL_REQUEST, 0x26, 0x00);
	/* 64 live tokens a LUN; the 65th: INSUFFICIENT RESOURCES TO
	 * CREATE ROD TOKEN, until one is no longer live. */
	r[0] = (struct range){ 1000, 1 };
	for (unsigned i = 0; i < 63; i++)
		EXPECT_GOOD(populate(A, 100 + i, 600, r, 1));
	make_token(r, 1, 1, tok);
	EXPECT_SENSE(populate(A, 2, 0, r, 1), SK_ILLEGAL_REQUEST, 0x55, 0x0d);
	fake_secs += 2;		/* the one of 1 s expires */
	EXPECT_GOOD(populate(A, 2, 0, r, 1));
}
END_TEST

START_TEST(zero_rod_token_writes_zeros)
{
	static const struct range dst[2] = { { 50, 3 }, { 2000, 2100 } };
	uint8_t tok[512];

	pattern(50, 3, 4);
	pattern(2000, 2100, 5);
	memset(tok, 0, sizeof(tok));
	put_be32(tok, 0xffff0001);	/* block device zero ROD token */
	put_be16(tok + 6, 0x01f8);
	EXPECT_GOOD(wut(A, 1, tok, 0, dst, 2));
	expect_blocks(50, 3, 0);
	expect_blocks(2000, 2100, 0);
	ck_assert_uint_eq(get_be64(rrti(A, 1) + 16), 2103);
}
END_TEST

START_TEST(write_using_token_to_another_lun)
{
	static const struct range src[1] = { { 64, 40 } };
	static const struct range dst[1] = { { 8, 40 } };
	struct bdev_params bp = { .size = 1 << 20, .queue_depth = 8 };
	char err[256];
	uint8_t tok[512];

	struct bdev *bd = bdev_open("ram", &bp, err, sizeof(err));
	ck_assert_ptr_nonnull(bd);
	struct lun *l1 = harness_lun_create(&H.dev, 1, bd);
	sdev_set_lun(&H.dev, 1, l1);
	pattern(64, 40, 3);
	make_token(src, 1, 0, tok);
	EXPECT_GOOD(wut_at(A, 1, 1, tok, 0, 0, dst, 1));
	/* READ (16) of LUN 1 against LUN 0's blocks. */
	uint8_t cdb[16], want[40 * BS];
	cdb16(cdb, SOP_READ_16, 0, 8, 40);
	struct cmd *c = run_cdb_at(&H, A, 1, cdb, 16, NULL, 0, 40 * BS);
	EXPECT_GOOD(c);
	read16(64, want, 40);
	ck_assert_int_eq(memcmp(cmd_data(c), want, sizeof(want)), 0);
	/* A write on LUN 1 does not cancel LUN 0's token. */
	EXPECT_GOOD(wut_at(A, 1, 1, tok, 0, 0, src, 1));
	sdev_set_lun(&H.dev, 1, NULL);
	lun_destroy(l1);
	bdev_close(bd);
}
END_TEST

static Suite *odx_suite(void)
{
	Suite *s = suite_create("odx");
	TCase *tc = tcase_create("tokens");

	tcase_add_checked_fixture(tc, odx_setup, teardown);
	tcase_set_timeout(tc, 30);
	harness_add(tc, vpd_page_8f_announces_odx);
	harness_add(tc, populate_token_and_its_information);
	harness_add(tc, write_using_token_copies_ranges);
	harness_add(tc, offset_into_rod_and_a_short_rod);
	harness_add(tc, a_write_to_the_source_cancels_the_token);
	harness_add(tc, a_token_made_during_a_write_is_cancelled_when_it_ends);
	harness_add(tc, tokens_refused_with_their_reason);
	harness_add(tc, inactivity_timeout_honoured_up_to_the_maximum);
	harness_add(tc, limits_of_ranges_and_tokens);
	harness_add(tc, zero_rod_token_writes_zeros);
	harness_add(tc, write_using_token_to_another_lun);
	suite_add_tcase(s, tc);
	return s;
}

int main(int argc, char **argv)
{
	return harness_main(argc, argv, odx_suite);
}
