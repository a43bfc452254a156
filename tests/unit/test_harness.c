/*
 * The harness's own checks: its sense parser against sense data written
 * byte by byte from SPC-4 4.5 (fixed and descriptor formats), that its
 * assertions refuse what they must, and that a suite run by name runs
 * just that check and fails on a name it does not have.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "tcq/scsi_proto.h"
#include "tests/unit/harness.h"

/* Fixed format (SPC-4 4.5.3): ILLEGAL REQUEST, 24h/00h, sense-key
 * specific C8h = SKSV, C/D (the CDB), BPV, bit 0; FIELD POINTER 000Dh. */
static const uint8_t fixed_field[18] = {
	0x70, 0x00, 0x05, 0x00, 0x00, 0x00, 0x00, 0x0a,
	0x00, 0x00, 0x00, 0x00, 0x24, 0x00, 0x00, 0xc8, 0x00, 0x0d,
};
/* Fixed with VALID: MISCOMPARE, 1Dh/00h, INFORMATION 000007E5h. */
static const uint8_t fixed_info[18] = {
	0xf0, 0x00, 0x0e, 0x00, 0x00, 0x07, 0xe5, 0x0a,
	0x00, 0x00, 0x00, 0x00, 0x1d, 0x00, 0x00, 0x00, 0x00, 0x00,
};
/* Descriptor format (4.5.2): MISCOMPARE, 1Dh/00h; an Information
 * descriptor (00h, VALID, 1_0000_07E5h) and a sense-key specific one
 * (02h: SKSV, C/D=0, no bit pointer, FIELD POINTER 012Ch). */
static const uint8_t desc[28] = {
	0x72, 0x0e, 0x1d, 0x00, 0x00, 0x00, 0x00, 0x14,
	0x00, 0x0a, 0x80, 0x00, 0x00, 0x00, 0x00, 0x01,
	0x00, 0x00, 0x07, 0xe5,
	0x02, 0x06, 0x00, 0x00, 0x80, 0x01, 0x2c, 0x00,
};

START_TEST(sense_parser_reads_fixed_format)
{
	struct harness_sense s;

	ck_assert(harness_sense_parse(fixed_field, sizeof(fixed_field), &s));
	ck_assert(!s.desc);
	ck_assert_uint_eq(s.key, 0x05);
	ck_assert_uint_eq(s.asc, 0x24);
	ck_assert_uint_eq(s.ascq, 0x00);
	ck_assert(!s.info_valid);
	ck_assert(s.sksv);
	ck_assert_uint_eq(s.sks[0], 0xc8);
	ck_assert_uint_eq(s.sks[2], 0x0d);

	ck_assert(harness_sense_parse(fixed_info, sizeof(fixed_info), &s));
	ck_assert_uint_eq(s.key, 0x0e);
	ck_assert_uint_eq(s.asc, 0x1d);
	ck_assert(s.info_valid);
	ck_assert_uint_eq(s.info, 0x7e5);
	ck_assert(!s.sksv);
}
END_TEST

START_TEST(sense_parser_reads_descriptor_format)
{
	struct harness_sense s;

	ck_assert(harness_sense_parse(desc, sizeof(desc), &s));
	ck_assert(s.desc);
	ck_assert_uint_eq(s.key, 0x0e);
	ck_assert_uint_eq(s.asc, 0x1d);
	ck_assert_uint_eq(s.ascq, 0x00);
	ck_assert(s.info_valid);
	ck_assert_uint_eq(s.info, 0x1000007e5ull);
	ck_assert(s.sksv);
	ck_assert_uint_eq(s.sks[0], 0x80);
	ck_assert_uint_eq(s.sks[1], 0x01);
	ck_assert_uint_eq(s.sks[2], 0x2c);
}
END_TEST

START_TEST(sense_parser_refuses_what_is_not_sense)
{
	struct harness_sense s;
	uint8_t b[18];

	memcpy(b, fixed_field, sizeof(b));
	b[0] = 0x7f;			/* vendor specific: not parsed */
	ck_assert(!harness_sense_parse(b, sizeof(b), &s));
	ck_assert(!harness_sense_parse(fixed_field, 13, &s));	/* no ASCQ */
	ck_assert(!harness_sense_parse(fixed_field, 0, &s));
	/* A descriptor that runs past the additional sense length. */
	memcpy(b, desc, sizeof(b));
	b[7] = 10;
	ck_assert(!harness_sense_parse(b, sizeof(b), &s));
}
END_TEST

static void answer(struct cmd *c, uint8_t status, const uint8_t *sense,
		   uint8_t len)
{
	memset(c, 0, sizeof(*c));
	c->t.status = status;
	memcpy(c->t.sense, sense, len);
	c->t.sense_len = len;
}

/* The predicates behind EXPECT_SENSE and friends: each accepts the
 * answer it names and refuses a neighbour, with a reason. */
START_TEST(assertions_refuse_other_answers)
{
	static struct cmd c;
	char why[256];

	answer(&c, SAM_STAT_CHECK_CONDITION, fixed_field, sizeof(fixed_field));
	ck_assert(harness_sense_is(&c, 0x05, 0x24, 0x00, why, sizeof(why)));
	ck_assert(!harness_sense_is(&c, 0x05, 0x24, 0x01, why, sizeof(why)));
	ck_assert_str_eq(why, "sense 05/24/00, expected 05/24/01");
	ck_assert(!harness_sense_is(&c, 0x06, 0x24, 0x00, why, sizeof(why)));
	ck_assert(harness_field_is(&c, true, 13, 0, why, sizeof(why)));
	ck_assert(!harness_field_is(&c, true, 13, -1, why, sizeof(why)));
	ck_assert(!harness_field_is(&c, false, 13, 0, why, sizeof(why)));
	ck_assert(!harness_field_is(&c, true, 12, 0, why, sizeof(why)));
	ck_assert(!harness_info_is(&c, 0, why, sizeof(why)));	/* not valid */

	answer(&c, SAM_STAT_CHECK_CONDITION, desc, sizeof(desc));
	ck_assert(harness_sense_is(&c, 0x0e, 0x1d, 0x00, why, sizeof(why)));
	ck_assert(harness_info_is(&c, 0x1000007e5ull, why, sizeof(why)));
	ck_assert(!harness_info_is(&c, 0x7e5, why, sizeof(why)));
	ck_assert(harness_field_is(&c, false, 300, -1, why, sizeof(why)));

	/* The right sense under another status is no CHECK CONDITION. */
	answer(&c, SAM_STAT_GOOD, fixed_field, sizeof(fixed_field));
	ck_assert(!harness_sense_is(&c, 0x05, 0x24, 0x00, why, sizeof(why)));
	ck_assert_str_eq(why, "status 0, expected CHECK CONDITION");
	answer(&c, SAM_STAT_CHECK_CONDITION, fixed_field, 0);
	ck_assert(!harness_sense_is(&c, 0x05, 0x24, 0x00, why, sizeof(why)));
}
END_TEST

/* Runs this binary with args; returns its exit status (-1: a signal)
 * and the checks libcheck counted in *checks. */
static int run_self(const char *a1, const char *a2, int *checks)
{
	char out[4096], *p;
	size_t len = 0;
	ssize_t n;
	int fd[2], st;
	pid_t pid;

	ck_assert_int_eq(pipe(fd), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		close(fd[0]);
		if (dup2(fd[1], 1) < 0 || !freopen("/dev/null", "w", stderr))
			_exit(99);
		execl("/proc/self/exe", "test_harness", a1, a2, (char *)NULL);
		_exit(98);
	}
	close(fd[1]);
	while ((n = read(fd[0], out + len, sizeof(out) - 1 - len)) > 0)
		len += (size_t)n;
	close(fd[0]);
	out[len] = 0;
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	p = strstr(out, "Checks: ");
	*checks = p ? atoi(p + 8) : 0;
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* Fails only when run by name; the suite run whole skips it (below). */
START_TEST(fails_when_asked_for)
{
	ck_abort_msg("planted failure, run only by name");
}
END_TEST

START_TEST(checks_run_by_name)
{
	int n;

	/* One check by name: it runs, and alone (the planted failure
	 * does not). */
	ck_assert_int_eq(run_self("sense_parser_reads_fixed_format", NULL, &n),
			 0);
	ck_assert_int_eq(n, 1);
	/* The planted failure, asked for, fails the run. */
	ck_assert_int_eq(run_self("fails_when_asked_for", NULL, &n), 1);
	ck_assert_int_eq(n, 1);
	ck_assert_int_eq(run_self("sense_parser_reads_fixed_format",
				  "fails_when_asked_for", &n), 1);
	ck_assert_int_eq(n, 2);
	/* A name no check has fails instead of passing with none run. */
	ck_assert_int_eq(run_self("no_such_check", NULL, &n), 1);
	ck_assert_int_eq(n, 0);
}
END_TEST

static bool named_only;

static Suite *harness_suite(void)
{
	Suite *s = suite_create("harness");
	TCase *tc = tcase_create("core");

	harness_add(tc, sense_parser_reads_fixed_format);
	harness_add(tc, sense_parser_reads_descriptor_format);
	harness_add(tc, sense_parser_refuses_what_is_not_sense);
	harness_add(tc, assertions_refuse_other_answers);
	harness_add(tc, checks_run_by_name);
	/* checks_run_by_name starts this binary four times: under the
	 * sanitizers, beside make -j's other tests, that took longer than
	 * libcheck's default 4 s. The timeout guards against a hang only. */
	tcase_set_timeout(tc, 60);
	if (named_only)
		harness_add(tc, fails_when_asked_for);
	suite_add_tcase(s, tc);
	return s;
}

int main(int argc, char **argv)
{
	named_only = argc > 1;
	return harness_main(argc, argv, harness_suite);
}
