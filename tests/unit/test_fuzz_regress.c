/*
 * Replays the fuzzers' seed corpora (tests/fuzz/corpus/NAME) and every
 * input a fuzzer once crashed on (tests/fuzz/regress/NAME) through the
 * harness entry points, built here without libFuzzer (-DFUZZ_REGRESS). A
 * harness aborts on a broken invariant and the sanitizer build catches
 * memory errors, so a fixed bug that comes back fails this test; the last
 * checks plant a bad input and watch the runner fail on it.
 */
#include <check.h>
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "tests/fuzz/fuzz.h"
#include "tests/unit/harness.h"

typedef int (*fuzz_fn)(const uint8_t *data, size_t size);

static const char *srcdir(void)
{
	const char *s = getenv("top_srcdir");

	return s && *s ? s : ".";
}

/* Reads a whole file; NULL when it cannot. */
static uint8_t *slurp(const char *path, size_t *len)
{
	struct stat st;
	uint8_t *buf;
	FILE *f;

	if (stat(path, &st) < 0 || !S_ISREG(st.st_mode))
		return NULL;
	buf = malloc((size_t)st.st_size + 1);
	f = fopen(path, "rb");
	if (!buf || !f ||
	    fread(buf, 1, (size_t)st.st_size, f) != (size_t)st.st_size) {
		free(buf);
		buf = NULL;
	}
	if (f)
		fclose(f);
	*len = (size_t)st.st_size;
	return buf;
}

/*
 * The runner: every regular file of dir through fn. Returns how many ran
 * (0 when dir is missing), or -1 with the file in bad when one could not
 * be read or fn returned non-zero. A harness that aborts ends the process
 * here, which libcheck reports as this check's failure.
 */
static int replay_path(const char *dir, fuzz_fn fn, char *bad, size_t blen)
{
	char path[4096 + 256];
	struct dirent *de;
	DIR *d = opendir(dir);
	int n = 0;

	if (!d)
		return 0;
	while ((de = readdir(d)) != NULL) {
		uint8_t *buf;
		size_t len;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		buf = slurp(path, &len);
		if (!buf || fn(buf, len) != 0) {
			snprintf(bad, blen, "%s", path);
			free(buf);
			n = -1;
			break;
		}
		free(buf);
		n++;
	}
	closedir(d);
	return n;
}

static int replay_dir(const char *sub, const char *name, fuzz_fn fn)
{
	char dir[4096], bad[4096 + 256] = "";
	int n;

	snprintf(dir, sizeof(dir), "%s/tests/fuzz/%s/%s", srcdir(), sub, name);
	n = replay_path(dir, fn, bad, sizeof(bad));
	ck_assert_msg(n >= 0, "%s", bad);
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

START_TEST(replays_pdu_corpus_and_regressions) { replay("pdu", fuzz_pdu_one); }
END_TEST
START_TEST(replays_param_corpus_and_regressions)
{
	replay("param", fuzz_param_one);
}
END_TEST
START_TEST(replays_cdb_corpus_and_regressions) { replay("cdb", fuzz_cdb_one); }
END_TEST
START_TEST(replays_conn_corpus_and_regressions)
{
	replay("conn", fuzz_conn_one);
}
END_TEST

/* The harnesses of issue 29's entry points, one check each. */
#define REPLAY(name)							\
	START_TEST(replays_##name##_corpus_and_regressions)		\
	{								\
		replay(#name, fuzz_##name##_one);			\
	}								\
	END_TEST
REPLAY(auth_chap_step)
REPLAY(pdu_decode_cmd_ahs)
REPLAY(pr_out)
REPLAY(sbc_extended_copy)
REPLAY(sbc_unmap)
REPLAY(spc_mode_select)
REPLAY(sbc_compare_and_write)
REPLAY(cfg_load_string)
REPLAY(bdev_opts_parse)
REPLAY(ctl_request)
REPLAY(native_sess_rx)

/* The harnesses take what is valid and ignore what is empty. */
START_TEST(harnesses_pass_a_valid_cdb_and_empty_inputs)
{
	static const uint8_t inquiry[] = { 0, 0x12, 0, 0, 0, 0xff, 0 };

	ck_assert_int_eq(fuzz_cdb_one(inquiry, sizeof(inquiry)), 0);
	ck_assert_int_eq(fuzz_pdu_one(inquiry, sizeof(inquiry)), 0);
	ck_assert_int_eq(fuzz_param_one(NULL, 0), 0);
	ck_assert_int_eq(fuzz_conn_one(NULL, 0), 0);
}
END_TEST

/* ---- the runner catches a bad input ---------------------------------- */

#define PLANT "PLANTED"

/* The cdb harness with one more invariant, which this test breaks on
 * purpose: no input may begin with PLANT. Broken, it aborts as every
 * harness does on a broken invariant. */
static int abort_on_plant(const uint8_t *data, size_t size)
{
	if (size >= strlen(PLANT) && !memcmp(data, PLANT, strlen(PLANT)))
		abort();
	return fuzz_cdb_one(data, size);
}

/* The same invariant, reported by a return value instead. */
static int refuse_plant(const uint8_t *data, size_t size)
{
	if (size >= strlen(PLANT) && !memcmp(data, PLANT, strlen(PLANT)))
		return 1;
	return fuzz_cdb_one(data, size);
}

static void put_file(const char *dir, const char *name, const void *p,
		     size_t len)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "wb");
	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fwrite(p, 1, len, f), len);
	ck_assert_int_eq(fclose(f), 0);
}

/* The runner over dir in a child process; its wait status. The child
 * exits 0 when inputs ran and all passed, 1 when one failed. */
static int replay_in_child(const char *dir, fuzz_fn fn)
{
	char bad[4096 + 256];
	int st;
	pid_t pid = fork();

	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		signal(SIGABRT, SIG_DFL);
		_exit(replay_path(dir, fn, bad, sizeof(bad)) > 0 ? 0 : 1);
	}
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	return st;
}

START_TEST(regress_runner_fails_on_a_planted_bad_input)
{
	static const uint8_t inquiry[] = { 0, 0x12, 0, 0, 0, 0xff, 0 };
	static const uint8_t planted[] = PLANT "\x12\x00\x00\x00\xff";
	char dir[] = "/tmp/tcq-fuzz-regress.XXXXXX", path[512];
	int st;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	put_file(dir, "inquiry", inquiry, sizeof(inquiry));
	/* Without the bad input, the runner passes. */
	st = replay_in_child(dir, abort_on_plant);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "status %#x", st);
	/* With it, the harness aborts and takes the run down with it... */
	put_file(dir, "planted", planted, sizeof(planted) - 1);
	st = replay_in_child(dir, abort_on_plant);
	ck_assert_msg(WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT,
		      "status %#x: the bad input went unnoticed", st);
	/* ... and a harness that reports it fails the run too. */
	st = replay_in_child(dir, refuse_plant);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 1, "status %#x", st);
	snprintf(path, sizeof(path), "%s/inquiry", dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/planted", dir);
	unlink(path);
	ck_assert_int_eq(rmdir(dir), 0);
}
END_TEST

static Suite *regress_suite(void)
{
	Suite *s = suite_create("fuzz_regress");
	TCase *tc = tcase_create("replay");

	tcase_set_timeout(tc, 120);
	harness_add(tc, replays_pdu_corpus_and_regressions);
	harness_add(tc, replays_param_corpus_and_regressions);
	harness_add(tc, replays_cdb_corpus_and_regressions);
	harness_add(tc, replays_conn_corpus_and_regressions);
	harness_add(tc, replays_auth_chap_step_corpus_and_regressions);
	harness_add(tc, replays_pdu_decode_cmd_ahs_corpus_and_regressions);
	harness_add(tc, replays_pr_out_corpus_and_regressions);
	harness_add(tc, replays_sbc_extended_copy_corpus_and_regressions);
	harness_add(tc, replays_sbc_unmap_corpus_and_regressions);
	harness_add(tc, replays_spc_mode_select_corpus_and_regressions);
	harness_add(tc, replays_sbc_compare_and_write_corpus_and_regressions);
	harness_add(tc, replays_cfg_load_string_corpus_and_regressions);
	harness_add(tc, replays_bdev_opts_parse_corpus_and_regressions);
	harness_add(tc, replays_ctl_request_corpus_and_regressions);
	harness_add(tc, replays_native_sess_rx_corpus_and_regressions);
	harness_add(tc, harnesses_pass_a_valid_cdb_and_empty_inputs);
	harness_add(tc, regress_runner_fails_on_a_planted_bad_input);
	suite_add_tcase(s, tc);
	return s;
}

int main(int argc, char **argv)
{
	return harness_main(argc, argv, regress_suite);
}
