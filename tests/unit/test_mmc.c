/*
 * Unit tests of the MMC device (scsi/mmc*.c): a cdrom LUN of the harness
 * (a 1000-block CD-ROM image over ram, or a 400,000-block DVD-ROM over
 * null) driven through lun_task_arrive. Expected bytes are MMC-6's (and
 * SPC-4's for INQUIRY and sense): INQUIRY, READ CAPACITY, READ (10/12),
 * READ TOC/PMA/ATIP formats 0-2, GET CONFIGURATION with RT 0/1/2, GET
 * EVENT STATUS NOTIFICATION, READ DISC/TRACK INFORMATION, MECHANISM
 * STATUS, START STOP UNIT with PREVENT, MODE SENSE/SELECT, READ CD (MSF),
 * READ DISC STRUCTURE, the medium's changes and their unit attention,
 * and the block commands an MMC device has not.
 */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "tcq/byteorder.h"
#include "tcq/scsi_proto.h"
#include "backend/bdev.h"
#include "scsi/cdb.h"
#include "scsi/lun.h"
#include "scsi/mmc.h"
#include "scsi/opcodes.h"
#include "tests/unit/harness.h"

#define A 0
#define B 1
#define NB 1000u		/* a CD-ROM image: 2,048,000 bytes */
#define DVD_NB 400000u		/* above 360,000 blocks: a DVD-ROM */

static struct harness_lun H;

/* A cdrom LUN over spec of nb 2048-byte blocks, two nexuses. */
static void cd_open(const char *spec, uint64_t nb)
{
	struct bdev_params bp = { .size = nb * 2048, .queue_depth = 8 };
	struct lun_params p;
	char err[256];

	memset(&H, 0, sizeof(H));
	list_init(&H.cmds);
	ck_assert_int_eq(reactor_init(&H.r, 0), 0);
	H.bd = bdev_open(spec, &bp, err, sizeof(err));
	ck_assert_msg(H.bd != NULL, "%s: %s", spec, err);
	strcpy(H.dev.name, "iqn.2026-11.org.tcq:unit-cd");
	lun_params_default(&p, &H.dev, 0, H.bd);
	p.cdrom = true;
	H.lun = lun_create(&p, err, sizeof(err));
	ck_assert_msg(H.lun != NULL, "lun_create: %s", err);
	H.dev.luns[0] = H.lun;
	H.dev.nluns = 1;
	harness_nexus_join(&H, 2);
}

static void setup(void)
{
	cd_open("ram", NB);
}

static void teardown(void)
{
	harness_lun_teardown(&H);
}

static struct cmd *cd(unsigned n, const uint8_t *cdb, uint16_t len,
		      uint32_t in_len)
{
	return run_cdb(&H, n, cdb, len, NULL, 0, in_len);
}

/* c returned GOOD with exactly the n bytes want. */
static void expect_data(const struct cmd *c, const uint8_t *want, uint32_t n)
{
	EXPECT_GOOD(c);
	ck_assert_uint_eq(c->t.data_in_len, n);
	for (uint32_t i = 0; i < n; i++)
		ck_assert_msg(cmd_data(c)[i] == want[i],
			      "byte %u is %02x, expected %02x", i,
			      cmd_data(c)[i], want[i]);
}

static const uint8_t tur[6] = { SOP_TEST_UNIT_READY };

/* ---- identity and capacity -------------------------------------------- */

START_TEST(inquiry_is_an_mmc_device)
{
	uint8_t inq[6] = { SOP_INQUIRY, 0, 0, 0, 96 };
	uint8_t vpd0[6] = { SOP_INQUIRY, 1, 0x00, 0, 16 };
	uint8_t vpdb0[6] = { SOP_INQUIRY, 1, 0xb0, 0, 64 };
	static const uint8_t pages[] = { 0x05, 0x00, 0x00, 0x03,
					 0x00, 0x80, 0x83 };
	struct cmd *c = cd(A, inq, 6, 96);

	EXPECT_GOOD(c);
	/* SPC-4 6.6.2: qualifier 0, device type 05h; RMB; TPGS 0 (no
	 * REPORT TARGET PORT GROUPS) */
	ck_assert_uint_eq(cmd_data(c)[0], 0x05);
	ck_assert_uint_eq(cmd_data(c)[1], 0x80);
	ck_assert_uint_eq(cmd_data(c)[5] & 0x30, 0);
	ck_assert(!memcmp(cmd_data(c) + 16, "tcq cdrom       ", 16));
	/* version descriptors: SAM-5, iSCSI, SPC-4, MMC-6 (no version
	 * claimed, SPC-4 table 32: 04E0h) */
	ck_assert_uint_eq(get_be16(cmd_data(c) + 58), 0x00a0);
	ck_assert_uint_eq(get_be16(cmd_data(c) + 64), 0x04e0);
	expect_data(cd(A, vpd0, 6, 16), pages, sizeof(pages));
	EXPECT_SENSE(cd(A, vpdb0, 6, 64), SK_ILLEGAL_REQUEST, 0x24, 0x00);
}
END_TEST

START_TEST(read_capacity_is_the_image)
{
	uint8_t rc10[10] = { SOP_READ_CAPACITY_10 };
	static const uint8_t want[8] = { 0, 0, 0x03, 0xe7, 0, 0, 0x08, 0 };

	expect_data(cd(A, rc10, 10, 8), want, 8);	/* last LBA 999, 2048 */
}
END_TEST

START_TEST(reads_2048_byte_blocks)
{
	uint8_t r10[10] = { SOP_READ_10, 0, 0, 0, 0x03, 0xe6, 0, 0, 2 };
	uint8_t r12[12] = { SOP_READ_12, 0, 0, 0, 0, 0, 0, 0, 0, 3 };
	uint8_t beyond[10] = { SOP_READ_10, 0, 0, 0, 0x03, 0xe7, 0, 0, 2 };
	struct cmd *c = cd(A, r10, 10, 4096);

	EXPECT_GOOD(c);
	ck_assert_uint_eq(c->t.data_in_len, 4096);
	c = cd(A, r12, 12, 6144);
	EXPECT_GOOD(c);
	ck_assert_uint_eq(c->t.data_in_len, 6144);
	/* blocks 999 and 1000: past the last LBA */
	EXPECT_SENSE(cd(A, beyond, 10, 4096), SK_ILLEGAL_REQUEST, 0x21, 0x00);
}
END_TEST

START_TEST(block_commands_are_invalid_opcodes)
{
	uint8_t sync10[10] = { SOP_SYNC_CACHE_10 };
	uint8_t r16[16] = { SOP_READ_16, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1 };
	uint8_t r6[6] = { SOP_READ_6, 0, 0, 0, 1 };
	uint8_t verify[10] = { SOP_VERIFY_10 };
	uint8_t rtpg[12] = { SOP_MAINTENANCE_IN, MI_REPORT_TARGET_PORT_GROUPS,
			     0, 0, 0, 0, 0, 0, 1, 0 };
	uint8_t w10[10] = { SOP_WRITE_10 };

	EXPECT_SENSE(cd(A, sync10, 10, 0), SK_ILLEGAL_REQUEST, 0x20, 0x00);
	EXPECT_SENSE(cd(A, r16, 16, 512), SK_ILLEGAL_REQUEST, 0x20, 0x00);
	EXPECT_SENSE(cd(A, r6, 6, 2048), SK_ILLEGAL_REQUEST, 0x20, 0x00);
	EXPECT_SENSE(cd(A, verify, 10, 0), SK_ILLEGAL_REQUEST, 0x20, 0x00);
	/* MAINTENANCE IN exists (REPORT SUPPORTED OPERATION CODES), not
	 * this service action: INVALID FIELD IN CDB */
	EXPECT_SENSE(cd(A, rtpg, 12, 256), SK_ILLEGAL_REQUEST, 0x24, 0x00);
	/* a pressed disc: DATA PROTECT, WRITE PROTECTED */
	EXPECT_SENSE(cd(A, w10, 10, 0), SK_DATA_PROTECT, 0x27, 0x00);
}
END_TEST

/* ---- READ TOC/PMA/ATIP ------------------------------------------------ */

START_TEST(toc_format_0)
{
	uint8_t lba[10] = { SOP_READ_TOC, 0, 0, 0, 0, 0, 0, 0, 20 };
	uint8_t msf[10] = { SOP_READ_TOC, 0x02, 0, 0, 0, 0, 0, 0, 20 };
	uint8_t lo[10] = { SOP_READ_TOC, 0, 0, 0, 0, 0, 0xaa, 0, 20 };
	uint8_t two[10] = { SOP_READ_TOC, 0, 0, 0, 0, 0, 2, 0, 20 };
	/* TOC data length 18, tracks 1..1; track 1: ADR 1, CONTROL 4 (data,
	 * uninterrupted) at 0; lead-out AAh at 1000 */
	static const uint8_t want[20] = {
		0x00, 0x12, 0x01, 0x01,
		0x00, 0x14, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00,
		0x00, 0x14, 0xaa, 0x00, 0x00, 0x00, 0x03, 0xe8 };
	/* MSF: 00:02:00 and 1150 frames = 00:15:25 */
	static const uint8_t want_msf[20] = {
		0x00, 0x12, 0x01, 0x01,
		0x00, 0x14, 0x01, 0x00, 0x00, 0x00, 0x02, 0x00,
		0x00, 0x14, 0xaa, 0x00, 0x00, 0x00, 0x0f, 0x19 };
	static const uint8_t want_lo[12] = {
		0x00, 0x0a, 0x01, 0x01,
		0x00, 0x14, 0xaa, 0x00, 0x00, 0x00, 0x03, 0xe8 };

	expect_data(cd(A, lba, 10, 20), want, 20);
	expect_data(cd(A, msf, 10, 20), want_msf, 20);
	expect_data(cd(A, lo, 10, 20), want_lo, 12);
	EXPECT_SENSE(cd(A, two, 10, 20), SK_ILLEGAL_REQUEST, 0x24, 0x00);
}
END_TEST

START_TEST(toc_formats_1_and_2)
{
	uint8_t f1[10] = { SOP_READ_TOC, 0, 0x01, 0, 0, 0, 0, 0, 12 };
	uint8_t f2[10] = { SOP_READ_TOC, 0, 0x02, 0, 0, 0, 1, 0, 52 };
	uint8_t f3[10] = { SOP_READ_TOC, 0, 0x03, 0, 0, 0, 0, 0, 52 };
	uint8_t rsvd[10] = { SOP_READ_TOC, 0x01, 0, 0, 0, 0, 0, 0, 20 };
	/* sessions 1..1; the first track of the last session: 1, at 0 */
	static const uint8_t want1[12] = {
		0x00, 0x0a, 0x01, 0x01,
		0x00, 0x14, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00 };
	/* raw TOC: session, ADR/CONTROL, TNO 0, POINT, ATIME 0, zero,
	 * PMIN PSEC PFRAME: A0h first track 1, disc type 00h; A1h last
	 * track 1; A2h lead-out 00:15:25; track 1 at 00:02:00 */
	static const uint8_t want2[48] = {
		0x00, 0x2e, 0x01, 0x01,
		0x01, 0x14, 0x00, 0xa0, 0, 0, 0, 0, 0x01, 0x00, 0x00,
		0x01, 0x14, 0x00, 0xa1, 0, 0, 0, 0, 0x01, 0x00, 0x00,
		0x01, 0x14, 0x00, 0xa2, 0, 0, 0, 0, 0x00, 0x0f, 0x19,
		0x01, 0x14, 0x00, 0x01, 0, 0, 0, 0, 0x00, 0x02, 0x00 };

	expect_data(cd(A, f1, 10, 12), want1, 12);
	expect_data(cd(A, f2, 10, 52), want2, 48);
	EXPECT_SENSE(cd(A, f3, 10, 52), SK_ILLEGAL_REQUEST, 0x24, 0x00);
	EXPECT_SENSE(cd(A, rsvd, 10, 20), SK_ILLEGAL_REQUEST, 0x24, 0x00);
}
END_TEST

/* ---- GET CONFIGURATION ------------------------------------------------ */

/* Profile List (0000h): persistent, current, 8 bytes: DVD-ROM, then
 * CD-ROM current */
static const uint8_t profile_list_cd[12] = {
	0x00, 0x00, 0x03, 0x08, 0x00, 0x10, 0x00, 0x00,
	0x00, 0x08, 0x01, 0x00 };

START_TEST(get_configuration_rt)
{
	uint8_t rt0[10] = { SOP_GET_CONFIGURATION, 0, 0, 0, 0, 0, 0, 1, 0 };
	uint8_t rt1[10] = { SOP_GET_CONFIGURATION, 1, 0, 0, 0, 0, 0, 1, 0 };
	uint8_t rt2[10] = { SOP_GET_CONFIGURATION, 2, 0, 0, 0, 0, 0, 1, 0 };
	uint8_t rt2_core[10] = { SOP_GET_CONFIGURATION, 2, 0, 1, 0, 0, 0, 1,
				 0 };
	uint8_t rt2_none[10] = { SOP_GET_CONFIGURATION, 2, 0, 0x20, 0, 0, 0,
				 1, 0 };
	uint8_t rt3[10] = { SOP_GET_CONFIGURATION, 3, 0, 0, 0, 0, 0, 1, 0 };
	uint8_t from_10h[10] = { SOP_GET_CONFIGURATION, 0, 0, 0x10, 0, 0, 0,
				 1, 0 };
	uint8_t want[20];
	struct cmd *c;

	/* RT 10b, feature 0000h: the header (data length 16, current
	 * profile CD-ROM 0008h) and the Profile List */
	memset(want, 0, sizeof(want));
	want[3] = 16;
	want[7] = 0x08;
	memcpy(want + 8, profile_list_cd, 12);
	expect_data(cd(A, rt2, 10, 256), want, 20);
	/* Core (0001h): version 2, persistent, current; SCSI family
	 * (00000001h), DBE */
	static const uint8_t core[20] = {
		0, 0, 0, 16, 0, 0, 0, 0x08,
		0x00, 0x01, 0x0b, 0x08, 0, 0, 0, 1, 0x01, 0, 0, 0 };
	expect_data(cd(A, rt2_core, 10, 256), core, 20);
	/* a feature we have not: the header alone */
	static const uint8_t hdr[8] = { 0, 0, 0, 4, 0, 0, 0, 0x08 };
	expect_data(cd(A, rt2_none, 10, 256), hdr, 8);
	EXPECT_SENSE(cd(A, rt3, 10, 256), SK_ILLEGAL_REQUEST, 0x24, 0x00);
	/* RT 00b: every feature, current or not: 0000h 0001h 0002h 0003h
	 * 0010h 001Eh 001Fh (12+12+8+8+12+8+8 = 68 bytes + 8) */
	c = cd(A, rt0, 10, 256);
	EXPECT_GOOD(c);
	ck_assert_uint_eq(c->t.data_in_len, 76);
	ck_assert_uint_eq(get_be32(cmd_data(c)), 72);
	/* Random Readable: current, 2048, blocking 1, PP */
	static const uint8_t rr[12] = { 0x00, 0x10, 0x01, 0x08, 0, 0, 0x08,
					0, 0, 1, 0x01, 0 };
	ck_assert(!memcmp(cmd_data(c) + 48, rr, 12));
	/* CD Read current (version 2), DVD Read not (version 1) */
	ck_assert(!memcmp(cmd_data(c) + 60, "\x00\x1e\x09\x04", 4));
	ck_assert(!memcmp(cmd_data(c) + 68, "\x00\x1f\x04\x04", 4));
	/* RT 01b: the current ones: DVD Read left out */
	c = cd(A, rt1, 10, 256);
	EXPECT_GOOD(c);
	ck_assert_uint_eq(c->t.data_in_len, 68);
	/* from 0010h on: Random Readable, CD Read, DVD Read */
	c = cd(A, from_10h, 10, 256);
	EXPECT_GOOD(c);
	ck_assert_uint_eq(c->t.data_in_len, 8 + 12 + 8 + 8);
	ck_assert(!memcmp(cmd_data(c) + 8, rr, 12));
}
END_TEST

/* ---- GESN, MECHANISM STATUS, the tray --------------------------------- */

static struct cmd *gesn(unsigned n, uint8_t classes)
{
	uint8_t c[10] = { SOP_GET_EVENT_STATUS, 1, 0, 0, classes, 0, 0, 0,
			  8 };

	return cd(n, c, 10, 8);
}

/* The media class's answer: event code ev, media status st. */
static void expect_media_event(unsigned n, uint8_t ev, uint8_t st)
{
	/* event data length 6, NEA 0 class 4, classes 1, 4 and 6 */
	uint8_t want[8] = { 0, 6, 0x04, 0x52, ev, st, 0, 0 };

	expect_data(gesn(n, 0x10), want, 8);
}

START_TEST(gesn_polled_media_class)
{
	uint8_t async[10] = { SOP_GET_EVENT_STATUS, 0, 0, 0, 0x10, 0, 0, 0, 8 };
	/* no class asked is supported: NEA, length 2 */
	static const uint8_t nea[4] = { 0, 2, 0x80, 0x52 };
	/* operational change (class 1) asked with media: the lowest class
	 * without an event, NoChg */
	static const uint8_t opc[8] = { 0, 6, 0x01, 0x52, 0, 0, 0, 0 };

	EXPECT_SENSE(cd(A, async, 10, 8), SK_ILLEGAL_REQUEST, 0x24, 0x00);
	expect_data(gesn(A, 0x08), nea, 4);	/* external request */
	expect_data(gesn(A, 0x12), opc, 8);
	expect_media_event(A, 0, 0x02);		/* no change, present */
}
END_TEST

START_TEST(eject_and_load_with_events)
{
	uint8_t eject[6] = { SOP_START_STOP_UNIT, 0, 0, 0, 0x02 };
	uint8_t load[6] = { SOP_START_STOP_UNIT, 0, 0, 0, 0x03 };
	uint8_t mech[12] = { SOP_MECHANISM_STATUS, 0, 0, 0, 0, 0, 0, 0, 0, 8 };
	uint8_t rc10[10] = { SOP_READ_CAPACITY_10 };
	static const uint8_t open[8] = { 0, 0x10, 0, 0, 0, 0, 0, 0 };
	static const uint8_t closed[8] = { 0 };

	EXPECT_GOOD(cd(A, eject, 6, 0));
	EXPECT_SENSE(cd(A, tur, 6, 0), SK_NOT_READY, 0x3a, 0x02);
	EXPECT_SENSE(cd(A, rc10, 10, 8), SK_NOT_READY, 0x3a, 0x02);
	expect_data(cd(A, mech, 12, 8), open, 8);	/* door open */
	expect_media_event(A, MMC_EV_MEDIA_REMOVAL, 0x01);	/* tray open */
	expect_media_event(A, 0, 0x01);		/* reported once */
	EXPECT_GOOD(cd(A, load, 6, 0));
	expect_data(cd(A, mech, 12, 8), closed, 8);
	EXPECT_GOOD(cd(A, tur, 6, 0));	/* A loaded it */
	/* the other nexus: NOT READY TO READY CHANGE, MEDIUM MAY HAVE
	 * CHANGED */
	EXPECT_SENSE(cd(B, tur, 6, 0), SK_UNIT_ATTENTION, 0x28, 0x00);
	EXPECT_GOOD(cd(B, tur, 6, 0));
	expect_media_event(B, MMC_EV_NEW_MEDIA, 0x02);
}
END_TEST

START_TEST(prevent_holds_the_tray)
{
	uint8_t prevent[6] = { SOP_PREVENT_ALLOW, 0, 0, 0, 1 };
	uint8_t allow[6] = { SOP_PREVENT_ALLOW };
	uint8_t eject[6] = { SOP_START_STOP_UNIT, 0, 0, 0, 0x02 };
	uint8_t ms[10] = { SOP_MODE_SENSE_10, 0, 0x2a, 0, 0, 0, 0, 0, 64 };
	struct cmd *c;

	EXPECT_GOOD(cd(B, prevent, 6, 0));
	ck_assert(mmc_prevented(H.lun));
	EXPECT_SENSE(cd(A, eject, 6, 0), SK_ILLEGAL_REQUEST, 0x53, 0x02);
	c = cd(A, ms, 10, 64);	/* page 2Ah byte 6: tray, Eject, Lock
				 * State, Lock */
	EXPECT_GOOD(c);
	ck_assert_uint_eq(cmd_data(c)[8 + 6], 0x2b);
	EXPECT_GOOD(cd(B, allow, 6, 0));
	ck_assert(!mmc_prevented(H.lun));
	EXPECT_GOOD(cd(A, eject, 6, 0));
}
END_TEST

START_TEST(medium_change_and_unit_attention)
{
	uint8_t rt2[10] = { SOP_GET_CONFIGURATION, 2, 0, 0, 0, 0, 0, 1, 0 };
	uint8_t r10[10] = { SOP_READ_10, 0, 0, 0, 0, 0, 0, 0, 1 };
	struct cmd *c;

	mmc_medium_remove(H.lun);	/* tcqctl set LUN path= */
	EXPECT_SENSE(cd(A, tur, 6, 0), SK_NOT_READY, 0x3a, 0x01);
	EXPECT_SENSE(cd(A, r10, 10, 2048), SK_NOT_READY, 0x3a, 0x01);
	ck_assert_str_eq(mmc_medium_state(H.lun), "none");
	c = cd(A, rt2, 10, 256);	/* current profile 0000h, no CurrentP */
	EXPECT_GOOD(c);
	ck_assert_uint_eq(get_be16(cmd_data(c) + 6), 0);
	ck_assert_uint_eq(cmd_data(c)[8 + 6], 0);
	ck_assert_uint_eq(cmd_data(c)[8 + 10], 0);
	expect_media_event(A, MMC_EV_MEDIA_REMOVAL, 0x00);
	mmc_medium_insert(H.lun, NB);
	EXPECT_SENSE(cd(A, tur, 6, 0), SK_UNIT_ATTENTION, 0x28, 0x00);
	EXPECT_SENSE(cd(B, tur, 6, 0), SK_UNIT_ATTENTION, 0x28, 0x00);
	EXPECT_GOOD(cd(A, r10, 10, 2048));
	expect_media_event(B, MMC_EV_NEW_MEDIA, 0x02);
	ck_assert_str_eq(mmc_medium_state(H.lun), "loaded");
}
END_TEST

/* ---- disc and track information --------------------------------------- */

START_TEST(disc_and_track_information)
{
	uint8_t rdi[10] = { SOP_READ_DISC_INFO, 0, 0, 0, 0, 0, 0, 0, 34 };
	uint8_t rdi1[10] = { SOP_READ_DISC_INFO, 1, 0, 0, 0, 0, 0, 0, 34 };
	uint8_t rti[10] = { SOP_READ_TRACK_INFO, 1, 0, 0, 0, 1, 0, 0, 48 };
	uint8_t rti2[10] = { SOP_READ_TRACK_INFO, 1, 0, 0, 0, 2, 0, 0, 48 };
	uint8_t rti_lba[10] = { SOP_READ_TRACK_INFO, 0, 0, 0, 0x03, 0xe8, 0,
				0, 48 };
	/* length 32; not erasable, last session complete, disc complete;
	 * first track 1; 1 session; tracks 1..1 in it; CD-ROM; lead-in and
	 * lead-out of a complete disc FFFFFFFFh */
	uint8_t want[34] = { 0, 32, 0x0e, 1, 1, 1, 1 };
	uint8_t want_t[48] = { 0, 46, 1, 1, 0, 0x04, 0x01 };

	memset(want + 16, 0xff, 8);
	put_be32(want_t + 24, NB);	/* track size */
	expect_data(cd(A, rdi, 10, 34), want, 34);
	EXPECT_SENSE(cd(A, rdi1, 10, 34), SK_ILLEGAL_REQUEST, 0x24, 0x00);
	expect_data(cd(A, rti, 10, 48), want_t, 48);
	EXPECT_SENSE(cd(A, rti2, 10, 48), SK_ILLEGAL_REQUEST, 0x24, 0x00);
	EXPECT_SENSE(cd(A, rti_lba, 10, 48), SK_ILLEGAL_REQUEST, 0x21, 0x00);
	rti_lba[5] = 0xe7;	/* LBA 999: track 1 */
	expect_data(cd(A, rti_lba, 10, 48), want_t, 48);
}
END_TEST

/* ---- mode pages ------------------------------------------------------- */

START_TEST(mode_pages)
{
	uint8_t ms10[10] = { SOP_MODE_SENSE_10, 0, 0x2a, 0, 0, 0, 0, 0, 64 };
	uint8_t all6[6] = { SOP_MODE_SENSE_6, 0, 0x3f, 0, 255 };
	uint8_t ctl[10] = { SOP_MODE_SENSE_10, 0, 0x0a, 0, 0, 0, 0, 0, 64 };
	uint8_t saved[10] = { SOP_MODE_SENSE_10, 0, 0xc1, 0, 0, 0, 0, 0, 64 };
	uint8_t chg[10] = { SOP_MODE_SENSE_10, 0, 0x41, 0, 0, 0, 0, 0, 64 };
	/* header of 8 (mode data length 28, no block descriptors), page
	 * 2Ah of 22 (MMC-2 layout): DVD-ROM read, multi-session, tray with
	 * eject and lock, speeds 7056 kB/s */
	static const uint8_t want[30] = {
		0, 28, 0, 0, 0, 0, 0, 0,
		0x2a, 0x14, 0x08, 0x00, 0x40, 0x00, 0x29, 0x00, 0x1b, 0x90,
		0, 0, 0, 0, 0x1b, 0x90, 0, 0, 0, 0, 0, 0 };
	static const uint8_t chg01[20] = { 0, 18, 0, 0, 0, 0, 0, 0,
					   0x01, 0x0a };
	struct cmd *c;

	expect_data(cd(A, ms10, 10, 64), want, 30);
	/* all pages: 01h (12), 0Dh (8: 60 S per M, 75 F per S), 1Ah (12),
	 * 2Ah (22) after a 4-byte header */
	c = cd(A, all6, 6, 255);
	EXPECT_GOOD(c);
	ck_assert_uint_eq(c->t.data_in_len, 58);
	ck_assert_uint_eq(cmd_data(c)[0], 57);
	ck_assert_uint_eq(cmd_data(c)[3], 0);	/* no block descriptor */
	ck_assert(!memcmp(cmd_data(c) + 16, "\x0d\x06\x00\x00\x00\x3c\x00\x4b",
			  8));
	ck_assert_uint_eq(cmd_data(c)[24], 0x1a);
	ck_assert_uint_eq(cmd_data(c)[36], 0x2a);
	EXPECT_SENSE(cd(A, ctl, 10, 64), SK_ILLEGAL_REQUEST, 0x24, 0x00);
	EXPECT_SENSE(cd(A, saved, 10, 64), SK_ILLEGAL_REQUEST, 0x39, 0x00);
	expect_data(cd(A, chg, 10, 64), chg01, 20);	/* nothing changes */
}
END_TEST

START_TEST(mode_select_takes_pages_as_they_are)
{
	uint8_t sel[10] = { SOP_MODE_SELECT_10, 0x10, 0, 0, 0, 0, 0, 0, 20 };
	uint8_t list[20] = { 0, 0, 0, 0, 0, 0, 0, 0, 0x01, 0x0a };

	EXPECT_GOOD(run_cdb(&H, A, sel, 10, list, 20, 0));
	list[10] = 0x04;	/* PER: not changeable */
	struct cmd *c = run_cdb(&H, A, sel, 10, list, 20, 0);
	EXPECT_SENSE(c, SK_ILLEGAL_REQUEST, 0x26, 0x00);
	EXPECT_SENSE_FIELD(c, false, 10, 2);
}
END_TEST

/* ---- READ CD, READ CD MSF --------------------------------------------- */

START_TEST(read_cd_user_data)
{
	/* Mode 1 sectors (010b), user data only, 2 blocks from 998 */
	uint8_t rcd[12] = { SOP_READ_CD, 0x08, 0, 0, 0x03, 0xe6, 0, 0, 2,
			    0x10, 0 };
	uint8_t cdda[12] = { SOP_READ_CD, 0x04, 0, 0, 0, 0, 0, 0, 1, 0x10 };
	uint8_t hdr[12] = { SOP_READ_CD, 0, 0, 0, 0, 0, 0, 0, 1, 0xf8 };
	uint8_t sub[12] = { SOP_READ_CD, 0, 0, 0, 0, 0, 0, 0, 1, 0x10, 1 };
	/* 00:02:00 up to 00:02:03: blocks 0..2 */
	uint8_t msf[12] = { SOP_READ_CD_MSF, 0, 0, 0, 2, 0, 0, 2, 3, 0x10 };
	uint8_t back[12] = { SOP_READ_CD_MSF, 0, 0, 0, 2, 3, 0, 2, 0, 0x10 };
	struct cmd *c = cd(A, rcd, 12, 4096);

	EXPECT_GOOD(c);
	ck_assert_uint_eq(c->t.data_in_len, 4096);
	c = cd(A, msf, 12, 6144);
	EXPECT_GOOD(c);
	ck_assert_uint_eq(c->t.data_in_len, 6144);
	EXPECT_SENSE_FIELD(cd(A, cdda, 12, 2352), true, 1, 4);
	EXPECT_SENSE_FIELD(cd(A, hdr, 12, 2352), true, 9, -1);
	EXPECT_SENSE_FIELD(cd(A, sub, 12, 2352), true, 10, 2);
	EXPECT_SENSE_FIELD(cd(A, back, 12, 2048), true, 6, -1);
}
END_TEST

/* ---- a DVD-ROM -------------------------------------------------------- */

START_TEST(a_large_image_is_a_dvd)
{
	uint8_t rt2[10] = { SOP_GET_CONFIGURATION, 2, 0, 0, 0, 0, 0, 1, 0 };
	uint8_t pfi[12] = { SOP_READ_DISC_STRUCTURE, 0, 0, 0, 0, 0, 0, 0x00,
			    0x08, 0x04 };
	uint8_t cpr[12] = { SOP_READ_DISC_STRUCTURE, 0, 0, 0, 0, 0, 0, 0x01,
			    0, 8 };
	uint8_t layer1[12] = { SOP_READ_DISC_STRUCTURE, 0, 0, 0, 0, 0, 1, 0,
			       0x08, 0x04 };
	uint8_t rcd[12] = { SOP_READ_CD, 0, 0, 0, 0, 0, 0, 0, 1, 0x10 };
	/* DVD-ROM current, CD-ROM not */
	static const uint8_t want[20] = {
		0, 0, 0, 16, 0, 0, 0, 0x10,
		0x00, 0x00, 0x03, 0x08, 0x00, 0x10, 0x01, 0x00,
		0x00, 0x08, 0x00, 0x00 };
	/* physical format: DVD-ROM part 1, 120 mm 10.08 Mbps, one
	 * embossed layer, data zone 030000h..030000h + 399999 */
	uint8_t pf[16] = { 0x08, 0x02, 0, 0, 0x01, 0x02, 0x01, 0x00,
			   0x00, 0x03, 0x00, 0x00 };
	static const uint8_t cp[8] = { 0, 6, 0, 0, 0, 0, 0, 0 };
	struct cmd *c;

	harness_lun_teardown(&H);
	cd_open("null", DVD_NB);
	expect_data(cd(A, rt2, 10, 256), want, 20);
	put_be32(pf + 12, 0x030000 + DVD_NB - 1);
	c = cd(A, pfi, 12, 2052);
	EXPECT_GOOD(c);
	ck_assert_uint_eq(c->t.data_in_len, 2052);
	ck_assert(!memcmp(cmd_data(c), pf, 16));
	expect_data(cd(A, cpr, 12, 8), cp, 8);
	EXPECT_SENSE(cd(A, layer1, 12, 2052), SK_ILLEGAL_REQUEST, 0x24, 0x00);
	/* READ CD reads CD media only: CANNOT READ MEDIUM - INCOMPATIBLE
	 * FORMAT */
	EXPECT_SENSE(cd(A, rcd, 12, 2048), SK_ILLEGAL_REQUEST, 0x30, 0x02);
}
END_TEST

START_TEST(disc_structure_of_a_cd_is_incompatible)
{
	uint8_t pfi[12] = { SOP_READ_DISC_STRUCTURE, 0, 0, 0, 0, 0, 0, 0x00,
			    0x08, 0x04 };

	EXPECT_SENSE(cd(A, pfi, 12, 2052), SK_ILLEGAL_REQUEST, 0x30, 0x02);
}
END_TEST

/* ---- the table -------------------------------------------------------- */

START_TEST(mmc_rows_are_whole)
{
	unsigned n;
	const struct opc_entry *tab = mmc_opc_table(&n);

	for (unsigned i = 0; i < n; i++) {
		const struct opc_entry *e = &tab[i];

		ck_assert_uint_eq(e->usage[0], e->op);
		ck_assert_uint_eq(e->cdb_len, cdb_group_len(e->op));
		ck_assert_msg(e->decode && e->exec, "row %02x", e->op);
		ck_assert_ptr_eq(opc_find(e->op, e->sa, OPC_FEAT_MMC), e);
		/* CONTROL: NACA evaluated, as every row */
		ck_assert_uint_eq(e->usage[e->cdb_len - 1], 0x04);
	}
	ck_assert_ptr_null(opc_find(SOP_SYNC_CACHE_10, 0, OPC_FEAT_MMC));
	ck_assert_ptr_null(opc_find(SOP_READ_TOC, 0, 0));
	ck_assert_ptr_nonnull(opc_first(SOP_READ_TOC, OPC_FEAT_MMC));
	ck_assert_ptr_null(opc_first(SOP_READ_TOC, 0));
}
END_TEST

static Suite *mmc_suite(void)
{
	Suite *s = suite_create("mmc");
	TCase *tc = tcase_create("mmc");

	tcase_set_timeout(tc, 30);
	tcase_add_checked_fixture(tc, setup, teardown);
	harness_add(tc, inquiry_is_an_mmc_device);
	harness_add(tc, read_capacity_is_the_image);
	harness_add(tc, reads_2048_byte_blocks);
	harness_add(tc, block_commands_are_invalid_opcodes);
	harness_add(tc, toc_format_0);
	harness_add(tc, toc_formats_1_and_2);
	harness_add(tc, get_configuration_rt);
	harness_add(tc, gesn_polled_media_class);
	harness_add(tc, eject_and_load_with_events);
	harness_add(tc, prevent_holds_the_tray);
	harness_add(tc, medium_change_and_unit_attention);
	harness_add(tc, disc_and_track_information);
	harness_add(tc, mode_pages);
	harness_add(tc, mode_select_takes_pages_as_they_are);
	harness_add(tc, read_cd_user_data);
	harness_add(tc, a_large_image_is_a_dvd);
	harness_add(tc, disc_structure_of_a_cd_is_incompatible);
	harness_add(tc, mmc_rows_are_whole);
	suite_add_tcase(s, tc);
	return s;
}

int main(int argc, char **argv)
{
	return harness_main(argc, argv, mmc_suite);
}
