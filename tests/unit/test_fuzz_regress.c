/*
 * Replays the fuzzers' seed corpora (tests/fuzz/corpus/NAME) and every
 * input a fuzzer once crashed on (tests/fuzz/regress/NAME) through the
 * harness entry points, built here without libFuzzer (-DFUZZ_REGRESS). A
 * harness aborts on a broken invariant and the sanitizer build catches
 * memory errors, so a fixed bug that comes back fails this test.
 */
#include <check.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "tests/fuzz/fuzz.h"

typedef int (*fuzz_fn)(const uint8_t *data, size_t size);

static const char *srcdir(void)
{
	const char *s = getenv("top_srcdir");

	return s && *s ? s : ".";
}

/* Runs every regular file of DIR through fn; returns how many ran. */
static int replay_dir(const char *sub, const char *name, fuzz_fn fn)
{
	char dir[4096], path[4096 + 256];
	struct dirent *de;
	DIR *d;
	int n = 0;

	snprintf(dir, sizeof(dir), "%s/tests/fuzz/%s/%s", srcdir(), sub, name);
	d = opendir(dir);
	if (!d)
		return 0;
	while ((de = readdir(d)) != NULL) {
		struct stat st;
		uint8_t *buf;
		FILE *f;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		if (stat(path, &st) < 0 || !S_ISREG(st.st_mode))
			continue;
		buf = malloc((size_t)st.st_size + 1);
		ck_assert_ptr_nonnull(buf);
		f = fopen(path, "rb");
		ck_assert_msg(f != NULL, "cannot open %s", path);
		ck_assert_uint_eq(fread(buf, 1, (size_t)st.st_size, f),
				  (size_t)st.st_size);
		fclose(f);
		ck_assert_msg(fn(buf, (size_t)st.st_size) == 0, "%s", path);
		free(buf);
		n++;
	}
	closedir(d);
	return n;
}

static void replay(const char *name, fuzz_fn fn)
{
	int seeds = replay_dir("corpus", name, fn);

	/* The seed corpus is part of the tree: an empty one means the
	 * test is looking in the wrong place. */
	ck_assert_int_gt(seeds, 0);
	replay_dir("regress", name, fn);
}

START_TEST(test_pdu) { replay("pdu", fuzz_pdu_one); }
END_TEST
START_TEST(test_param) { replay("param", fuzz_param_one); }
END_TEST
START_TEST(test_cdb) { replay("cdb", fuzz_cdb_one); }
END_TEST
START_TEST(test_conn) { replay("conn", fuzz_conn_one); }
END_TEST

/* The harnesses themselves must catch what they claim to: a CDB whose
 * decoding is fine passes, and an empty input is ignored. */
START_TEST(test_harness_inputs)
{
	static const uint8_t inquiry[] = { 0, 0x12, 0, 0, 0, 0xff, 0 };

	ck_assert_int_eq(fuzz_cdb_one(inquiry, sizeof(inquiry)), 0);
	ck_assert_int_eq(fuzz_pdu_one(inquiry, sizeof(inquiry)), 0);
	ck_assert_int_eq(fuzz_param_one(NULL, 0), 0);
	ck_assert_int_eq(fuzz_conn_one(NULL, 0), 0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("fuzz_regress");
	TCase *tc = tcase_create("replay");
	SRunner *sr;
	int failed;

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_pdu);
	tcase_add_test(tc, test_param);
	tcase_add_test(tc, test_cdb);
	tcase_add_test(tc, test_conn);
	tcase_add_test(tc, test_harness_inputs);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
