/*
 * Thin provisioning that warns (scsi/thin.c, scsi/spc_log.c): the
 * Logical Block Provisioning VPD page (SBC-3 6.6.4), LOG SENSE (SPC-4
 * 6.6) with the Supported Log Pages and Logical Block Provisioning log
 * pages (SPC-4 7.3.18-19, SBC-3 6.4.x), the Logical Block Provisioning
 * mode page (SBC-3 6.5.x), the soft threshold's unit attention (SBC-3
 * 4.7.3.7.6), thin_threshold in tcqd.conf, and SPACE ALLOCATION FAILED
 * WRITE PROTECT for every writing command on a full medium.
 *
 * The thin LUNs are sparse files (aio, buffered) in TMPDIR: their
 * allocation is the file's st_blocks, which the checks read themselves.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include "tcq/byteorder.h"
#include "tcq/scsi_proto.h"
#include "backend/bdev.h"
#include "scsi/thin.h"
#include "target/config.h"
#include "target/target.h"
#include "tests/unit/harness.h"

#define BS 512u
#define A 0
#define B 1

static struct harness_lun H;
static char path[256];
static int path_fd = -1;	/* the LUN file, unlinked once opened */

/* A thin LUN over a sparse file of size bytes, its soft threshold at pct
 * (0: none), n nexuses joined. */
static void thin_open(uint64_t size, unsigned pct, unsigned n)
{
	const char *dir = getenv("TMPDIR");
	char spec[320], err[256];

	snprintf(path, sizeof(path), "%s/tcq-thin-XXXXXX",
		 dir && *dir ? dir : "/tmp");
	int fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	close(fd);
	snprintf(spec, sizeof(spec), "aio:path=%s,direct=0", path);
	harness_lun_open(&H, spec, size);
	/* Gone from TMPDIR even if the check fails: the backend and we
	 * keep it open. */
	path_fd = open(path, O_RDONLY);
	ck_assert_int_ge(path_fd, 0);
	unlink(path);
	ck_assert(H.bd->thin);
	/* lun_create set it up with no threshold: again with pct */
	thin_lun_free(H.lun);
	ck_assert_msg(thin_lun_setup(H.lun, pct, err, sizeof(err)) == 0,
		      "%s", err);
	harness_nexus_join(&H, n);
}

static void thin_close(void)
{
	harness_lun_teardown(&H);
	close(path_fd);
	path_fd = -1;
}

static uint64_t file_allocated(void)
{
	struct stat st;

	ck_assert_int_eq(fstat(path_fd, &st), 0);
	return (uint64_t)st.st_blocks * 512;
}

static struct cmd *run(unsigned n, const uint8_t *cdb, uint16_t len,
		       const void *out, uint32_t out_len, uint32_t in_len)
{
	return run_cdb(&H, n, cdb, len, out, out_len, in_len);
}

/* WRITE (16) of blocks filled with byte from nexus n; GOOD expected. */
static void write_blocks(unsigned n, uint64_t lba, uint32_t blocks,
			 uint8_t byte)
{
	uint8_t cdb[16] = { SOP_WRITE_16 };
	uint8_t *d = malloc((size_t)blocks * BS);

	memset(d, byte, (size_t)blocks * BS);
	put_be64(cdb + 2, lba);
	put_be32(cdb + 10, blocks);
	EXPECT_GOOD(run(n, cdb, 16, d, blocks * BS, 0));
	free(d);
}

/* WRITE SAME (16) with UNMAP and NDOB: deallocates the blocks. */
static void unmap_blocks(uint64_t lba, uint32_t blocks)
{
	uint8_t cdb[16] = { SOP_WRITE_SAME_16, 0x09 };

	put_be64(cdb + 2, lba);
	put_be32(cdb + 10, blocks);
	EXPECT_GOOD(run(A, cdb, 16, NULL, 0, 0));
}

static void stop_timer(struct reactor_timer *t)
{
	*(bool *)t->arg = true;
	reactor_stop(reactor_self());
}

/* Runs the reactor for ms: the threshold's check (THIN_CHECK_MS after a
 * write) happens in there. */
static void wait_ms(unsigned ms)
{
	struct reactor_timer t;
	bool done = false;

	reactor_timer_init(&t, stop_timer, &done);
	reactor_timer_arm(&H.r, &t, ms);
	harness_run_until(&H.r, &done, ms + 5000);
}

static void tur_good(unsigned n)
{
	static const uint8_t tur[6] = { SOP_TEST_UNIT_READY };

	EXPECT_GOOD(run(n, tur, 6, NULL, 0, 0));
}

/* TEST UNIT READY on n reports the soft threshold: UNIT ATTENTION,
 * 38h/07h, INFORMATION 16 (the threshold descriptor's offset in the
 * Logical Block Provisioning mode page). */
static void tur_threshold(unsigned n)
{
	static const uint8_t tur[6] = { SOP_TEST_UNIT_READY };
	struct cmd *c = run(n, tur, 6, NULL, 0, 0);

	EXPECT_SENSE(c, SK_UNIT_ATTENTION, 0x38, 0x07);
	EXPECT_SENSE_INFO(c, 16);
}

static struct cmd *log_sense(uint8_t b1, uint8_t b2, uint8_t sub,
			     uint16_t ptr, uint16_t alloc)
{
	uint8_t cdb[10] = { SOP_LOG_SENSE, b1, b2, sub };

	put_be16(cdb + 5, ptr);
	put_be16(cdb + 7, alloc);
	return run(A, cdb, 10, NULL, 0, alloc);
}

static void expect_data(const struct cmd *c, const uint8_t *want,
			uint32_t len)
{
	EXPECT_GOOD(c);
	ck_assert_uint_eq(c->t.data_in_len, len);
	for (uint32_t i = 0; i < len; i++)
		ck_assert_msg(cmd_data(c)[i] == want[i],
			      "byte %u: %02x, expected %02x", i,
			      cmd_data(c)[i], want[i]);
}

/* ---- the VPD page and the exponent ------------------------------------ */

/* 1 GiB of 512-byte blocks is 2^21 blocks; at most 65536 threshold sets
 * makes a set 2^5 blocks: THRESHOLD EXPONENT 5. LBPU, LBPWS, LBPWS10,
 * LBPRZ; PROVISIONING TYPE 010b (thin). */
START_TEST(vpd_b2_reports_the_threshold_exponent)
{
	static const uint8_t want[8] = { 0x00, 0xb2, 0x00, 0x04,
					 5, 0xe4, 0x02, 0x00 };
	uint8_t cdb[6] = { SOP_INQUIRY, 0x01, 0xb2, 0, 64, 0 };

	thin_open(1ull << 30, 50, 1);
	expect_data(run(A, cdb, 6, NULL, 0, 64), want, 8);
	thin_close();
}
END_TEST

/* Without a known allocation (ram) there are no thresholds: exponent 0,
 * and the log page is not listed. */
START_TEST(vpd_b2_exponent_zero_without_counts)
{
	static const uint8_t want[8] = { 0x00, 0xb2, 0x00, 0x04,
					 0, 0xe4, 0x02, 0x00 };
	static const uint8_t pages[5] = { 0x00, 0x00, 0x00, 0x01, 0x00 };
	uint8_t cdb[6] = { SOP_INQUIRY, 0x01, 0xb2, 0, 64, 0 };
	char err[200];

	harness_lun_setup(&H, "ram:size=1M", 0, 1);
	ck_assert_int_eq(thin_lun_setup(H.lun, 0, err, sizeof(err)), 0);
	expect_data(run(A, cdb, 6, NULL, 0, 64), want, 8);
	expect_data(log_sense(0, 0x40, 0, 0, 64), pages, 5);
	EXPECT_INVALID_FIELD_IN_CDB(log_sense(0, 0x4c, 0, 0, 64), 2, 5);
	/* A threshold needs the allocation. */
	ck_assert_int_eq(thin_lun_setup(H.lun, 50, err, sizeof(err)), -1);
	ck_assert_str_eq(err, "backend ram cannot tell how much of the LUN "
			 "is allocated");
	harness_lun_teardown(&H);
}
END_TEST

/* ---- LOG SENSE -------------------------------------------------------- */

/* SPC-4 7.3.18: DS 0, SPF 0, page 00h, the codes in ascending order;
 * 7.3.19 (subpage FFh): SPF 1, (page, subpage) pairs. */
START_TEST(log_sense_supported_pages)
{
	static const uint8_t pages[6] = { 0x00, 0x00, 0x00, 0x02, 0x00, 0x0c };
	static const uint8_t subpages[10] = { 0x40, 0xff, 0x00, 0x06,
					      0x00, 0x00, 0x00, 0xff,
					      0x0c, 0x00 };

	thin_open(4u << 20, 0, 1);
	/* PC 01b (cumulative) and the others alike. */
	expect_data(log_sense(0, 0x40, 0, 0, 64), pages, 6);
	expect_data(log_sense(0, 0x00, 0, 0, 64), pages, 6);
	expect_data(log_sense(0, 0x40, 0xff, 0, 64), subpages, 10);
	/* ALLOCATION LENGTH cuts the data, not the PAGE LENGTH. */
	expect_data(log_sense(0, 0x40, 0, 0, 5), pages, 5);
	/* No parameters: any PARAMETER POINTER is beyond the largest. */
	EXPECT_INVALID_FIELD_IN_CDB(log_sense(0, 0x40, 0, 1, 64), 5, -1);
	thin_close();
}
END_TEST

/* SBC-3 6.4.x: DS 1, page 0Ch; parameter 0001h (available) and 0002h
 * (used): binary format list (DU 0, TSD 1, ETC 0, TMC 00b, FORMAT AND
 * LINKING 11b: 23h), length 08h, RESOURCE COUNT in threshold sets,
 * SCOPE 10b (the file system is shared) and 01b (dedicated). */
START_TEST(log_sense_lbp_page_counts)
{
	const uint64_t size = 4u << 20;	/* 8192 blocks: exponent 1 */
	const uint64_t set = 2 * BS;
	struct statvfs sv;
	uint8_t want[28] = { 0x8c, 0x00, 0x00, 0x18,
			     0x00, 0x01, 0x23, 0x08, 0, 0, 0, 0, 0x02, 0, 0, 0,
			     0x00, 0x02, 0x23, 0x08, 0, 0, 0, 0, 0x01, 0, 0, 0 };

	thin_open(size, 0, 1);
	ck_assert_int_eq(fstatvfs(path_fd, &sv), 0);
	ck_assert_msg((uint64_t)sv.f_bavail * sv.f_frsize > 4 * size,
		      "TMPDIR needs room for the check");
	for (int round = 0; round < 2; round++) {
		/* Then 1 MiB more is allocated. */
		if (round)
			write_blocks(A, 100, 2048, 0x5a);
		uint64_t a = file_allocated();
		put_be32(want + 8, (uint32_t)((size - a) / set));
		put_be32(want + 20, (uint32_t)((a + set - 1) / set));
		expect_data(log_sense(0, 0x4c, 0, 0, 64), want, 28);
		if (round)
			ck_assert_uint_ge(get_be32(want + 20), 1024);
	}
	/* Every PAGE CONTROL value: the current values. */
	expect_data(log_sense(0, 0x0c, 0, 0, 64), want, 28);
	expect_data(log_sense(0, 0x8c, 0, 0, 64), want, 28);
	expect_data(log_sense(0, 0xcc, 0, 0, 64), want, 28);
	/* PARAMETER POINTER 0002h: from the used count on. */
	uint8_t from2[16];
	memcpy(from2, want, 4);
	memcpy(from2 + 4, want + 16, 12);
	from2[3] = 0x0c;
	expect_data(log_sense(0, 0x4c, 0, 2, 64), from2, 16);
	expect_data(log_sense(0, 0x4c, 0, 1, 64), want, 28);
	EXPECT_INVALID_FIELD_IN_CDB(log_sense(0, 0x4c, 0, 3, 64), 5, -1);
	/* Truncated at the allocation length. */
	expect_data(log_sense(0, 0x4c, 0, 0, 10), want, 10);
	thin_close();
}
END_TEST

/* SPC-4 6.6: SP set and no saving: INVALID FIELD IN CDB; the obsolete
 * PPC bit is not implemented; reserved byte 4; pages and subpages the
 * LUN has not. */
START_TEST(log_sense_rejects)
{
	thin_open(4u << 20, 0, 1);
	EXPECT_INVALID_FIELD_IN_CDB(log_sense(0x01, 0x4c, 0, 0, 64), 1, 0);
	EXPECT_INVALID_FIELD_IN_CDB(log_sense(0x02, 0x4c, 0, 0, 64), 1, 1);
	EXPECT_INVALID_FIELD_IN_CDB(log_sense(0x80, 0x40, 0, 0, 64), 1, 7);
	uint8_t cdb[10] = { SOP_LOG_SENSE, 0, 0x40, 0, 0x01, 0, 0, 0, 64, 0 };
	EXPECT_INVALID_FIELD_IN_CDB(run(A, cdb, 10, NULL, 0, 64), 4, 0);
	EXPECT_INVALID_FIELD_IN_CDB(log_sense(0, 0x4d, 0, 0, 64), 2, 5);
	EXPECT_INVALID_FIELD_IN_CDB(log_sense(0, 0x7f, 0, 0, 64), 2, 5);
	EXPECT_INVALID_FIELD_IN_CDB(log_sense(0, 0x4c, 0x01, 0, 64), 3, -1);
	EXPECT_INVALID_FIELD_IN_CDB(log_sense(0, 0x4c, 0xff, 0, 64), 3, -1);
	EXPECT_INVALID_FIELD_IN_CDB(log_sense(0, 0x40, 0x01, 0, 64), 3, -1);
	thin_close();
}
END_TEST

/* ---- the mode page ---------------------------------------------------- */

/* SBC-3: PS 0, SPF 1, 1Ch/02h, PAGE LENGTH 0014h, SITUA 0; the threshold
 * descriptor at byte 16: ENABLED, TYPE 000b (soft), ARMING 001b
 * (increasing), RESOURCE 02h (used), THRESHOLD COUNT: 50% of 2^21 blocks
 * in sets of 2^5 blocks = 32768. */
START_TEST(mode_page_describes_the_threshold)
{
	static const uint8_t want[24] = { 0x5c, 0x02, 0x00, 0x14,
					  0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
					  0x81, 0x02, 0x00, 0x00,
					  0x00, 0x00, 0x80, 0x00 };
	uint8_t cdb[10] = { SOP_MODE_SENSE_10, 0x08, 0x1c, 0x02, 0, 0, 0,
			    0, 255, 0 };

	thin_open(1ull << 30, 50, 1);
	struct cmd *c = run(A, cdb, 10, NULL, 0, 255);
	EXPECT_GOOD(c);
	ck_assert_uint_eq(c->t.data_in_len, 8 + 24);
	ck_assert_uint_eq(get_be16(cmd_data(c)), 8 + 24 - 2);
	ck_assert(memcmp(cmd_data(c) + 8, want, 24) == 0);
	/* Changeable values: none. */
	cdb[2] = 0x40 | 0x1c;
	c = run(A, cdb, 10, NULL, 0, 255);
	EXPECT_GOOD(c);
	ck_assert_uint_eq(c->t.data_in_len, 8 + 24);
	ck_assert(memcmp(cmd_data(c) + 8, want, 4) == 0);
	for (unsigned i = 12; i < 32; i++)
		ck_assert_uint_eq(cmd_data(c)[i], 0);
	/* 1Ch/FFh: the Informational Exceptions page, then this one. */
	cdb[2] = 0x1c;
	cdb[3] = 0xff;
	c = run(A, cdb, 10, NULL, 0, 255);
	EXPECT_GOOD(c);
	ck_assert_uint_eq(c->t.data_in_len, 8 + 12 + 24);
	ck_assert_uint_eq(cmd_data(c)[8], 0x1c);
	ck_assert(memcmp(cmd_data(c) + 20, want, 24) == 0);
	/* 3Fh/FFh has it; 3Fh/00h has not. */
	cdb[2] = 0x3f;
	c = run(A, cdb, 10, NULL, 0, 255);
	EXPECT_GOOD(c);
	ck_assert(memcmp(cmd_data(c) + c->t.data_in_len - 24, want, 24) == 0);
	cdb[3] = 0;
	uint32_t all = run(A, cdb, 10, NULL, 0, 255)->t.data_in_len;
	ck_assert_uint_eq(all + 24, c->t.data_in_len);
	thin_close();

	/* No counts (ram): no such page. */
	harness_lun_setup(&H, "ram:size=1M", 0, 1);
	cdb[2] = 0x1c;
	cdb[3] = 0x02;
	EXPECT_INVALID_FIELD_IN_CDB(run(A, cdb, 10, NULL, 0, 255), 3, -1);
	harness_lun_teardown(&H);
}
END_TEST

/* ---- the soft threshold ----------------------------------------------- */

/* 4 MiB, 50%: 2 MiB allocated reaches it. Each nexus reports 38h/07h once
 * on its next command; more writes do not repeat it; UNMAP below the
 * threshold re-arms it and writing back past it notifies again. */
START_TEST(soft_threshold_warns_each_nexus_once_per_crossing)
{
	thin_open(4u << 20, 50, 2);
	write_blocks(A, 0, 2048, 1);		/* 1 MiB: 25% */
	wait_ms(THIN_CHECK_MS + 50);
	tur_good(A);
	tur_good(B);
	write_blocks(B, 2048, 2048, 2);		/* 2 MiB: 50% */
	ck_assert_uint_ge(file_allocated(), 2u << 20);
	wait_ms(THIN_CHECK_MS + 50);
	tur_threshold(A);
	tur_good(A);
	tur_threshold(B);
	tur_good(B);
	/* Still above: no second warning. */
	write_blocks(A, 4096, 1024, 3);
	wait_ms(THIN_CHECK_MS + 50);
	tur_good(A);
	tur_good(B);
	/* Back below the threshold, then past it again. */
	unmap_blocks(0, 8192);
	ck_assert_uint_lt(file_allocated(), 1u << 20);
	wait_ms(THIN_CHECK_MS + 50);
	tur_good(A);
	tur_good(B);
	write_blocks(A, 0, 4096, 4);
	wait_ms(THIN_CHECK_MS + 50);
	tur_threshold(A);
	tur_threshold(B);
	tur_good(A);
	tur_good(B);
	thin_close();
}
END_TEST

/* The check is not on the write path: before the timer fires nothing is
 * reported (the timer is made long here so that it cannot fire first);
 * LOG SENSE reads the allocation at once and warns too. */
START_TEST(soft_threshold_checked_by_timer_or_log_sense)
{
	thin_check_ms = 60000;
	thin_open(4u << 20, 50, 2);
	write_blocks(A, 0, 4096, 1);
	tur_good(B);
	EXPECT_GOOD(log_sense(0, 0x4c, 0, 0, 64));	/* nexus A */
	tur_threshold(A);
	tur_threshold(B);
	thin_close();
	thin_check_ms = THIN_CHECK_MS;
}
END_TEST

/* A LUN reset drops pending unit attentions; a threshold still reached
 * warns again at the next check. */
START_TEST(soft_threshold_again_after_lun_reset)
{
	thin_open(4u << 20, 50, 1);
	write_blocks(A, 0, 4096, 1);
	wait_ms(THIN_CHECK_MS + 50);
	lun_reset(H.lun);
	static const uint8_t tur[6] = { SOP_TEST_UNIT_READY };
	EXPECT_SENSE(run(A, tur, 6, NULL, 0, 0), SK_UNIT_ATTENTION, 0x29, 0x03);
	write_blocks(A, 0, 1, 1);
	wait_ms(THIN_CHECK_MS + 50);
	tur_threshold(A);
	thin_close();
}
END_TEST

/* SBC-3 6.5.10: the Read-Write Error Recovery page of a LUN with a soft
 * threshold has LBPERE 1, changeable; MODE SELECT of LBPERE 0 disables
 * the notification (the other nexus hears MODE PARAMETERS CHANGED), 1
 * enables it again and a threshold reached meanwhile then notifies. */
START_TEST(lbpere_enables_the_notification)
{
	static const uint8_t page[12] = { 0x01, 0x0a, 0, 0, 0, 0, 0, 0x80,
					  0, 0, 0, 0 };
	uint8_t ms[10] = { SOP_MODE_SENSE_10, 0x08, 0x01, 0, 0, 0, 0, 0, 255,
			   0 };
	uint8_t sel[10] = { SOP_MODE_SELECT_10, 0x10, 0, 0, 0, 0, 0, 0, 20,
			    0 };
	uint8_t list[20];
	static const uint8_t tur[6] = { SOP_TEST_UNIT_READY };

	thin_open(4u << 20, 50, 2);
	struct cmd *c = run(A, ms, 10, NULL, 0, 255);
	EXPECT_GOOD(c);
	ck_assert_uint_eq(c->t.data_in_len, 8 + 12);
	ck_assert(memcmp(cmd_data(c) + 8, page, 12) == 0);
	ms[2] = 0x40 | 0x01;		/* changeable: LBPERE */
	c = run(A, ms, 10, NULL, 0, 255);
	EXPECT_GOOD(c);
	ck_assert(memcmp(cmd_data(c) + 8, page, 12) == 0);

	memset(list, 0, sizeof(list));
	memcpy(list + 8, page, 12);
	list[8 + 7] = 0;		/* LBPERE 0 */
	EXPECT_GOOD(run(A, sel, 10, list, 20, 0));
	EXPECT_SENSE(run(B, tur, 6, NULL, 0, 0), SK_UNIT_ATTENTION, 0x2a, 0x01);
	ms[2] = 0x01;
	c = run(A, ms, 10, NULL, 0, 255);
	EXPECT_GOOD(c);
	ck_assert_uint_eq(cmd_data(c)[8 + 7], 0);
	write_blocks(A, 0, 4096, 1);
	wait_ms(THIN_CHECK_MS + 50);
	tur_good(A);
	tur_good(B);

	list[8 + 7] = 0x80;		/* LBPERE 1 */
	EXPECT_GOOD(run(A, sel, 10, list, 20, 0));
	EXPECT_SENSE(run(B, tur, 6, NULL, 0, 0), SK_UNIT_ATTENTION, 0x2a, 0x01);
	write_blocks(A, 0, 1, 1);
	wait_ms(THIN_CHECK_MS + 50);
	tur_threshold(A);
	tur_threshold(B);
	thin_close();

	/* Without a threshold there is no such page. */
	thin_open(4u << 20, 0, 1);
	EXPECT_INVALID_FIELD_IN_CDB(run(A, ms, 10, NULL, 0, 255), 2, 5);
	thin_close();
}
END_TEST

/* ---- tcqd.conf -------------------------------------------------------- */

#define TN "iqn.2026-11.org.tcq:thin"

static const char *build_error(const char *lun_keys)
{
	static char e[300];
	char text[600];
	struct cfg c;

	snprintf(text, sizeof(text), "[global]\nlisten = 127.0.0.1:0\n"
		 "[target " TN "]\n[lun " TN " 0]\n%s", lun_keys);
	cfg_init(&c);
	ck_assert_int_eq(cfg_load_string(&c, "t.conf", text), 0);
	struct tcqd *d = cfg_build(&c, e, sizeof(e));
	if (d) {
		struct lun *l = d->targets[0]->dev.luns[0];
		ck_assert_uint_eq(thin_threshold_pct(l), 40);
		ck_assert_uint_ne(thin_exponent(l), 0);
		cfg_destroy_tcqd(d);
		e[0] = 0;
	}
	cfg_free(&c);
	return e;
}

START_TEST(config_thin_threshold)
{
	ck_assert_str_eq(build_error("backend = null\nsize = 1M\n"
				     "thin_threshold = 40\n"), "");
	ck_assert_str_eq(build_error("backend = null\nsize = 1M\nthin = no\n"
				     "thin_threshold = 40\n"),
			 "[lun " TN " 0] thin_threshold = 40: the LUN is not "
			 "thin provisioned (thin = no, or a block device)");
	ck_assert_str_eq(build_error("backend = ram:size=1M\n"
				     "thin_threshold = 40\n"),
			 "[lun " TN " 0] thin_threshold = 40: backend ram "
			 "cannot tell how much of the LUN is allocated");

	struct cfg c;
	cfg_init(&c);
	ck_assert_int_eq(cfg_load_string(&c, "t.conf", "[target " TN "]\n"
					 "[lun " TN " 0]\nbackend = null\n"
					 "thin_threshold = 0\n"), -1);
	ck_assert_str_eq(c.msgs[0], "t.conf:4: bad value for "
			 "'thin_threshold': '0' is out of range 1..100");
	cfg_free(&c);
}
END_TEST

/* ---- a full medium ---------------------------------------------------- */

/* Every command that writes answers DATA PROTECT, SPACE ALLOCATION FAILED
 * WRITE PROTECT (07h/27h/07h) when the backend has no space (fault:
 * ENOSPC on writes of blocks 0-63), with the LBA in INFORMATION; reads
 * keep working and writes elsewhere too. */
START_TEST(no_space_fails_every_write_with_07_27_07)
{
	static uint8_t d[16 * BS];
	uint8_t w10[10] = { SOP_WRITE_10, 0, 0, 0, 0, 8, 0, 0, 2, 0 };
	uint8_t w16[16] = { SOP_WRITE_16, 0, 0, 0, 0, 0, 0, 0, 0, 9,
			    0, 0, 0, 2, 0, 0 };
	uint8_t ws10[10] = { SOP_WRITE_SAME_10, 0, 0, 0, 0, 10, 0, 0, 4, 0 };
	uint8_t ws16[16] = { SOP_WRITE_SAME_16, 0, 0, 0, 0, 0, 0, 0, 0, 11,
			     0, 0, 0, 4, 0, 0 };
	uint8_t ws16z[16] = { SOP_WRITE_SAME_16, 0x01, 0, 0, 0, 0, 0, 0, 0,
			      12, 0, 0, 0, 4, 0, 0 };
	uint8_t caw[16] = { SOP_COMPARE_AND_WRITE, 0, 0, 0, 0, 0, 0, 0, 0, 13,
			    0, 0, 0, 1, 0, 0 };
	uint8_t wv10[10] = { SOP_WRITE_VERIFY_10, 0x02, 0, 0, 0, 14, 0, 0, 1,
			     0 };
	uint8_t wv16[16] = { SOP_WRITE_VERIFY_16, 0, 0, 0, 0, 0, 0, 0, 0, 15,
			     0, 0, 0, 1, 0, 0 };
	uint8_t r16[16] = { SOP_READ_16, 0, 0, 0, 0, 0, 0, 0, 0, 8,
			    0, 0, 0, 8, 0, 0 };
	struct {
		const uint8_t *cdb;
		uint16_t len;
		uint32_t out;
		uint64_t lba;
	} cmds[] = {
		{ w10, 10, 2 * BS, 8 }, { w16, 16, 2 * BS, 9 },
		{ ws10, 10, BS, 10 }, { ws16, 16, BS, 11 },
		{ ws16z, 16, 0, 12 }, { caw, 16, 2 * BS, 13 },
		{ wv10, 10, BS, 14 }, { wv16, 16, BS, 15 },
	};

	harness_lun_setup(&H, "fault:lba=0-63,ops=write,error=enospc,"
			  "base=ram:size=1M", 0, 1);
	memset(d, 0, sizeof(d));
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		struct cmd *c = run(A, cmds[i].cdb, cmds[i].len,
				    cmds[i].out ? d : NULL, cmds[i].out, 0);
		ck_assert_msg(c->t.status == SAM_STAT_CHECK_CONDITION,
			      "command %zu (%02x): status %#x", i,
			      cmds[i].cdb[0], c->t.status);
		EXPECT_SENSE(c, SK_DATA_PROTECT, 0x27, 0x07);
		EXPECT_SENSE_INFO(c, cmds[i].lba);
	}
	struct cmd *c = run(A, r16, 16, NULL, 0, 8 * BS);
	EXPECT_GOOD(c);
	ck_assert_uint_eq(c->t.data_in_len, 8 * BS);
	w16[9] = 64;		/* past the full part */
	EXPECT_GOOD(run(A, w16, 16, d, 2 * BS, 0));
	harness_lun_teardown(&H);
}
END_TEST

static Suite *thin_suite(void)
{
	Suite *s = suite_create("thin");
	TCase *tc = tcase_create("thin");

	tcase_set_timeout(tc, 30);
	harness_add(tc, vpd_b2_reports_the_threshold_exponent);
	harness_add(tc, vpd_b2_exponent_zero_without_counts);
	harness_add(tc, log_sense_supported_pages);
	harness_add(tc, log_sense_lbp_page_counts);
	harness_add(tc, log_sense_rejects);
	harness_add(tc, mode_page_describes_the_threshold);
	harness_add(tc, soft_threshold_warns_each_nexus_once_per_crossing);
	harness_add(tc, soft_threshold_checked_by_timer_or_log_sense);
	harness_add(tc, soft_threshold_again_after_lun_reset);
	harness_add(tc, lbpere_enables_the_notification);
	harness_add(tc, config_thin_threshold);
	harness_add(tc, no_space_fails_every_write_with_07_27_07);
	suite_add_tcase(s, tc);
	return s;
}

int main(int argc, char **argv)
{
	return harness_main(argc, argv, thin_suite);
}
