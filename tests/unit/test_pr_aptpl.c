/*
 * The APTPL state file (scsi/pr_aptpl.c) against text written by hand
 * from the format described at the top of pr_aptpl.c: a known state is
 * saved as exactly that text, that text loads as exactly that state, and
 * a file that is not one is refused without touching the LUN's state.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "scsi/lun.h"
#include "scsi/pr.h"
#include "scsi/pr_priv.h"
#include "scsi/sdev.h"
#include "pr_golden.h"
#include "tests/unit/harness.h"

#define PORT_A KNOWN_PORT_A
#define PORT_B KNOWN_PORT_B

/* The known state (pr_golden.h: A with ALL_TG_PT, B holding a Write
 * Exclusive - Registrants Only reservation, PRgeneration 0x01020304). */
#define GOLDEN_FILE \
	"tcq-pr 1\n" \
	"generation 16909060\n" \
	"reservation 5\n" \
	"reg 0123456789abcdef 1 0 " PORT_A "\n" \
	"reg fedcba9876543210 0 1 " PORT_B "\n"

/* Target "iqn.2026-11.org.tcq:unit", LUN 3: ':' becomes '_'. */
#define FILE_NAME "iqn.2026-11.org.tcq_unit-lun3.pr"

static char dir[64], path[256], err[512];
static struct sdev tgt;
static struct lun *lun;

static void setup(void)
{
	snprintf(dir, sizeof(dir), "/tmp/tcq-test-aptpl-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(tgt.name, sizeof(tgt.name), "iqn.2026-11.org.tcq:unit");
	tgt.state_dir = dir;
	lun = harness_lun_create(&tgt, 3, NULL);
	ck_assert_ptr_nonnull(lun);
	snprintf(path, sizeof(path), "%s/" FILE_NAME, dir);
}

static void teardown(void)
{
	lun_destroy(lun);
	unlink(path);
	rmdir(dir);
}

/* What a file never holds: it ends at start-up. */
static void expect_no_spc2(const struct pr_state *s)
{
	ck_assert(!s->r2);
	ck_assert_uint_eq(s->r2_port[0], 0);
}

static void write_file(const char *text)
{
	FILE *f = fopen(path, "w");

	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(fputs(text, f) >= 0, 1);
	ck_assert_int_eq(fclose(f), 0);
}

/* The file's whole text (NUL terminated). */
static char *read_file(void)
{
	static char text[64 * 1024];
	FILE *f = fopen(path, "r");
	size_t n;

	ck_assert_ptr_nonnull(f);
	n = fread(text, 1, sizeof(text) - 1, f);
	fclose(f);
	text[n] = 0;
	return text;
}

static int save(const struct pr_state *s)
{
	int rc;

	pthread_mutex_lock(&lun->lock);
	rc = pr_aptpl_save(lun, s);
	pthread_mutex_unlock(&lun->lock);
	return rc;
}

START_TEST(path_from_target_and_lun)
{
	char p[256];

	ck_assert_int_eq(pr_state_path(lun, dir, p, sizeof(p)), 0);
	ck_assert_str_eq(p, path);
	ck_assert_int_eq(pr_state_path(lun, NULL, p, sizeof(p)), 0);
	ck_assert_str_eq(p, "/var/lib/tcq/" FILE_NAME);
	/* Too small a buffer is an error, not a cut path. */
	ck_assert_int_eq(pr_state_path(lun, dir, p, strlen(path)), -1);
}
END_TEST

START_TEST(state_saves_as_golden)
{
	struct pr_state s;
	char tmp[300];

	known_state(&s);
	/* A RESERVE(6/10) is no part of the file. */
	s.r2 = true;
	strcpy(s.r2_port, PORT_B);
	s.r2_rtpi = 1;
	ck_assert_int_eq(save(&s), 0);
	ck_assert_str_eq(read_file(), GOLDEN_FILE);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	ck_assert_int_ne(access(tmp, F_OK), 0);	/* renamed, not left */
	/* Saved again without APTPL: the file goes. */
	s.aptpl = false;
	ck_assert_int_eq(save(&s), 0);
	ck_assert_int_ne(access(path, F_OK), 0);
}
END_TEST

START_TEST(unreserved_state_saves_as_golden)
{
	struct pr_state s;

	memset(&s, 0, sizeof(s));
	s.generation = 7;
	s.aptpl = true;
	ck_assert_int_eq(save(&s), 0);
	ck_assert_str_eq(read_file(), "tcq-pr 1\ngeneration 7\n");
}
END_TEST

START_TEST(golden_loads_as_state)
{
	struct pr_state *ps = lun->pr;

	ps->r2 = true;		/* a RESERVE(6/10) from before: it ends */
	write_file(GOLDEN_FILE);
	ck_assert_int_eq(pr_load(lun, dir, err, sizeof(err)), 0);
	expect_known_state(ps);
	expect_no_spc2(ps);
	ck_assert_int_eq(lun->resv_active, 1);
	/* What loaded saves as what was read. */
	ck_assert_int_eq(save(ps), 0);
	ck_assert_str_eq(read_file(), GOLDEN_FILE);
}
END_TEST

START_TEST(reading_is_looser_than_writing)
{
	write_file("tcq-pr 1\n"
		   "\n"
		   "reg 123456789ABCDEF   1 0 " PORT_A "\n"
		   "reservation 5\n"
		   "generation 9\n"
		   "generation 16909060\n"
		   "reg FEDCBA9876543210\t0 1 " PORT_B "\n");
	ck_assert_int_eq(pr_load(lun, dir, err, sizeof(err)), 0);
	expect_known_state(lun->pr);
	expect_no_spc2(lun->pr);
}
END_TEST

START_TEST(missing_file_is_no_state)
{
	ck_assert_int_eq(pr_load(lun, dir, err, sizeof(err)), 0);
	ck_assert_uint_eq(lun->pr->nregs, 0);
	ck_assert_int_eq(lun->resv_active, 0);
	write_file("");
	ck_assert_int_eq(pr_load(lun, dir, err, sizeof(err)), 0);
	ck_assert(lun->pr->aptpl);
	ck_assert_int_eq(lun->resv_active, 0);
}
END_TEST

/* text is refused at line; the state loaded before stays. */
static void expect_refused(const char *text, unsigned line)
{
	char want[512];

	write_file(text);
	ck_assert_int_eq(pr_load(lun, dir, err, sizeof(err)), -1);
	snprintf(want, sizeof(want),
		 "%s:%u: not a tcq reservation state file", path, line);
	ck_assert_str_eq(err, want);
	expect_known_state(lun->pr);
}

START_TEST(not_a_state_file_refused)
{
	static char text[200 * 64], port[PR_PORT_MAX + 1];
	size_t n;

	write_file(GOLDEN_FILE);
	ck_assert_int_eq(pr_load(lun, dir, err, sizeof(err)), 0);
	expect_refused("garbage\n", 1);
	expect_refused("tcq-pr 2\ngeneration 1\n", 1);
	expect_refused("\ntcq-pr 1\n", 1);
	expect_refused("tcq-pr 1\nreservation 2\n", 2);
	expect_refused("tcq-pr 1\nreservation 256\n", 2);
	expect_refused("tcq-pr 1\ngeneration 1\nreg 0123 1 0\n", 3);
	expect_refused("tcq-pr 1\nregistration 1\n", 2);
	/* A port name one byte too long for PR_PORT_MAX. */
	memset(port, 'x', PR_PORT_MAX);
	port[PR_PORT_MAX] = 0;
	snprintf(text, sizeof(text), "tcq-pr 1\nreg 1 0 0 %s\n", port);
	expect_refused(text, 2);
	/* One registration more than a LUN holds. */
	n = (size_t)snprintf(text, sizeof(text), "tcq-pr 1\n");
	for (unsigned i = 0; i <= PR_REGS_MAX; i++)
		n += (size_t)snprintf(text + n, sizeof(text) - n,
				      "reg %x 0 0 iqn.x:%u\n", i + 1, i);
	expect_refused(text, PR_REGS_MAX + 2);
}
END_TEST

static Suite *pr_aptpl_suite(void)
{
	Suite *s = suite_create("pr_aptpl");
	TCase *c = tcase_create("file");

	tcase_add_checked_fixture(c, setup, teardown);
	harness_add(c, path_from_target_and_lun);
	harness_add(c, state_saves_as_golden);
	harness_add(c, unreserved_state_saves_as_golden);
	harness_add(c, golden_loads_as_state);
	harness_add(c, reading_is_looser_than_writing);
	harness_add(c, missing_file_is_no_state);
	harness_add(c, not_a_state_file_refused);
	suite_add_tcase(s, c);
	return s;
}

int main(int argc, char **argv)
{
	return harness_main(argc, argv, pr_aptpl_suite);
}
