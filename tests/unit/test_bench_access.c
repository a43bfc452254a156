/* tcq-bench's access patterns, against their definitions:
 *  - --dist: over a fixed seed, the share of the hits on the hottest
 *    blocks matches the distribution's arithmetic, computed here from
 *    the definitions (fio's HOWTO, random_distribution), not from
 *    bench_dist.c: zipf by the sums of k^-theta, pareto by its 80/20
 *    rule, normal by erf, zoned by its percentages. Tolerances are
 *    stated with each check (the sampling error of 2M draws is ~0.0003);
 *  - --thinktime: the pauses are a property of the I/O sequence;
 *  - --replay: fio iolog v2 and v3 and blkparse text read into the I/Os,
 *    flushes and FUA they say; a trace past the LUN's end is refused. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "initiator/bench_access.h"
#include "initiator/bench_replay.h"
#include "tests/unit/harness.h"

#define N 10000u		/* chunks of the region */
#define DRAWS 2000000u

static uint32_t hits[N];

static int desc(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? 1 : x > y ? -1 : 0;
}

/* Draws DRAWS chunks of spec over n chunks into hits[]. */
static void draw(const char *spec, uint64_t n, uint64_t chunk_bytes)
{
	struct bench_dist d;
	struct dist_gen g;
	char err[256];
	uint64_t rng = 42, outside = 0;

	ck_assert_int_eq(dist_parse(spec, &d, err, sizeof(err)), 0);
	ck_assert_int_eq(dist_gen_init(&g, &d, n, chunk_bytes, err,
				       sizeof(err)), 0);
	memset(hits, 0, sizeof(hits));
	for (unsigned i = 0; i < DRAWS; i++) {
		uint64_t c = dist_next(&g, &rng);

		if (c < n)
			hits[c]++;
		else
			outside++;
	}
	ck_assert_uint_eq(outside, 0);
}

/* The share of the draws on the hottest k chunks (sorts hits[]). */
static double top_share(unsigned k)
{
	uint64_t sum = 0;

	qsort(hits, N, sizeof(hits[0]), desc);
	for (unsigned i = 0; i < k; i++)
		sum += hits[i];
	return (double)sum / DRAWS;
}

START_TEST(zipf_hottest_tenth_matches_the_sums)
{
	double top = 0, all = 0;
	unsigned deciles[10] = { 0 }, spread = 0, hottest = 0;

	/* zipf:1.2: rank k drawn with probability k^-1.2 / sum over all */
	for (unsigned k = 1; k <= N; k++) {
		all += pow(k, -1.2);
		if (k <= N / 10)
			top += pow(k, -1.2);
	}
	draw("zipf:1.2", N, 4096);
	for (unsigned c = 0; c < N; c++)
		if (hits[c] > hits[hottest])
			hottest = c;
	/* the hot blocks are scattered over the region, as fio's */
	for (unsigned c = 0; c < N; c++)
		if (hits[c] >= 100)	/* about the 1000 hottest */
			deciles[c / (N / 10)]++;
	for (unsigned i = 0; i < 10; i++)
		spread += deciles[i] > 0;
	ck_assert_uint_ge(spread, 8);
	/* the hottest block alone: 1 / sum, within 0.005 */
	ck_assert_double_eq_tol((double)hits[hottest] / DRAWS, 1 / all, 0.005);
	/* the hottest 10%: within 0.01 */
	ck_assert_double_eq_tol(top_share(N / 10), top / all, 0.01);
}
END_TEST

START_TEST(zipf_theta_below_one)
{
	double top = 0, all = 0;

	for (unsigned k = 1; k <= N; k++) {
		all += pow(k, -0.8);
		if (k <= N / 10)
			top += pow(k, -0.8);
	}
	draw("zipf:0.8", N, 4096);
	ck_assert_double_eq_tol(top_share(N / 10), top / all, 0.01);
}
END_TEST

START_TEST(pareto_is_the_80_20_rule)
{
	/* pareto:H: the hottest fraction H of the blocks gets 1-H of the
	 * accesses; the hottest 5%: 0.05^(log 0.8 / log 0.2) */
	draw("pareto:0.2", N, 4096);
	ck_assert_double_eq_tol(top_share(N / 5), 0.8, 0.01);
	ck_assert_double_eq_tol(top_share(N / 20),
				pow(0.05, log(0.8) / log(0.2)), 0.01);
}
END_TEST

START_TEST(center_puts_the_hottest_block_there)
{
	unsigned hottest = 0;

	draw("pareto:0.2:0.5", N, 4096);
	for (unsigned c = 0; c < N; c++)
		if (hits[c] > hits[hottest])
			hottest = c;
	ck_assert_uint_eq(hottest, N / 2);
}
END_TEST

START_TEST(normal_within_one_and_two_deviations)
{
	/* normal:10 around the middle: SD = 10% of 10000 chunks = 1000 */
	uint64_t in1 = 0, in2 = 0;

	draw("normal:10", N, 4096);
	for (unsigned c = 0; c < N; c++) {
		if (c >= 4000 && c < 6000)
			in1 += hits[c];
		if (c >= 3000 && c < 7000)
			in2 += hits[c];
	}
	ck_assert_double_eq_tol((double)in1 / DRAWS, erf(1 / sqrt(2)), 0.01);
	ck_assert_double_eq_tol((double)in2 / DRAWS, erf(2 / sqrt(2)), 0.01);
}
END_TEST

START_TEST(zoned_shares_by_zone)
{
	static const unsigned first[] = { 0, 1000, 3000, 6000, 10000 };
	static const double share[] = { 0.60, 0.30, 0.08, 0.02 };

	draw("zoned:60/10:30/20:8/30:2/40", N, 4096);
	for (unsigned z = 0; z < 4; z++) {
		uint64_t sum = 0;

		for (unsigned c = first[z]; c < first[z + 1]; c++)
			sum += hits[c];
		ck_assert_double_eq_tol((double)sum / DRAWS, share[z], 0.005);
	}
}
END_TEST

START_TEST(zoned_abs_in_bytes)
{
	uint64_t sum = 0;

	/* 20K and 40K zones of 4K chunks: chunks 0-4 and 5-14 */
	draw("zoned_abs:60/20k:40/40k", 100, 4096);
	for (unsigned c = 0; c < 5; c++)
		sum += hits[c];
	ck_assert_double_eq_tol((double)sum / DRAWS, 0.6, 0.005);
	for (unsigned c = 15; c < 100; c++)
		ck_assert_uint_eq(hits[c], 0);
}
END_TEST

START_TEST(bad_distributions_refused)
{
	static const char *const bad[] = {
		"zipf:0", "zipf:x", "pareto:1", "pareto:0", "normal:101",
		"zoned:50/10:40/20", "zoned:60/10:40/100", "zoned:100",
		"sequence:1,2", "zipf:1.2:1.5", "zipf:1.2,zipf:1.1", "",
	};
	struct bench_dist d;
	char err[256];

	for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = 0;
		ck_assert_msg(dist_parse(bad[i], &d, err, sizeof(err)) < 0,
			      "'%s' taken", bad[i]);
		ck_assert_msg(err[0], "'%s': no error text", bad[i]);
	}
}
END_TEST

START_TEST(same_seed_same_sequence)
{
	struct bench_dist d;
	struct dist_gen g;
	char err[64];
	uint64_t a = 7, b = 7;

	ck_assert_int_eq(dist_parse("zipf:1.1", &d, err, sizeof(err)), 0);
	ck_assert_int_eq(dist_gen_init(&g, &d, 1000, 4096, err, sizeof(err)), 0);
	for (unsigned i = 0; i < 1000; i++)
		ck_assert_uint_eq(dist_next(&g, &a), dist_next(&g, &b));
}
END_TEST

/* A session at depth 16 issuing 40 I/Os, bursts of 4 counted at issue:
 * a pause after every 4th, on an empty queue, never more than 4 I/Os
 * between pauses; completions come whenever the session waits. */
START_TEST(thinktime_pauses_follow_the_sequence)
{
	struct bench_think k = { .think_ns = 1000000, .blocks = 4,
				 .on_issue = true };
	struct think_state st = { 0 };
	uint64_t t = 0, issued = 0, burst = 0, gaps_seen = 0;
	uint32_t inflight = 0;

	while (issued < 40) {
		if (think_hold(&k, &st, inflight, t)) {
			if (st.phase == THINK_DRAIN) {
				inflight = 0;	/* the burst completes */
				think_completed(&st);
			} else {
				ck_assert_uint_eq(inflight, 0);
				t += 250000;	/* time passes: 4 polls */
			}
			continue;
		}
		if (burst && st.gaps > gaps_seen) {
			gaps_seen = st.gaps;
			ck_assert_uint_eq(burst, 4);
			burst = 0;
		}
		ck_assert_uint_lt(inflight, 16);
		inflight++;
		issued++;
		burst++;
		think_issued(&st);
	}
	/* pauses after I/O 4, 8, ..., 36: the 40th ends the sequence */
	ck_assert_uint_eq(st.gaps, 9);
	ck_assert_uint_eq(st.total, 40);
}
END_TEST

/* --depth-low 2 at depth 8: fills to 8, holds until 2 are left, fills
 * again (fio's iodepth_low). */
START_TEST(depth_low_drains_then_fills)
{
	struct bench_think k = { .depth_low = 2, .low_set = true,
				 .blocks = 1 };
	struct think_state st = { 0 };

	/* asked before each I/O with the number under way */
	for (uint32_t q = 0; q < 8; q++)
		ck_assert(!think_low_hold(&k, &st, q, 8));
	/* the 8th filled it: completions bring it down to 2 */
	for (uint32_t q = 7; q > 2; q--)
		ck_assert(think_low_hold(&k, &st, q, 8));
	ck_assert(!think_low_hold(&k, &st, 2, 8));
	ck_assert(!think_low_hold(&k, &st, 3, 8));	/* filling again */
	k.depth_low = 8;	/* at the depth or over: no effect */
	ck_assert(!think_low_hold(&k, &st, 7, 8));
}
END_TEST

START_TEST(thinktime_spin_then_sleep)
{
	struct bench_think k = { .think_ns = 5000000, .spin_ns = 2000000,
				 .blocks = 1 };
	struct think_state st = { 0 };
	uint64_t ns;

	think_issued(&st);
	think_completed(&st);
	ck_assert(think_hold(&k, &st, 0, 1000));
	ck_assert_int_eq(think_poll_ms(&k, &st, 1000), 0);	/* spinning */
	ck_assert_int_eq(think_poll_ms(&k, &st, 1000 + 2000000), 3);
	ck_assert(think_hold(&k, &st, 0, 1000 + 4999999));
	ck_assert(!think_hold(&k, &st, 0, 1000 + 5000000));
	ck_assert_int_eq(think_parse_time("100", &ns), 0);
	ck_assert_uint_eq(ns, 100000);	/* fio: microseconds by default */
	ck_assert_int_eq(think_parse_time("5ms", &ns), 0);
	ck_assert_uint_eq(ns, 5000000);
	ck_assert_int_eq(think_parse_time("5 ms", &ns), -1);
}
END_TEST

static const char *put(const char *name, const char *text)
{
	static char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", getenv("TMPDIR") ?
		 getenv("TMPDIR") : "/tmp", name);
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
	return path;
}

static void want(const struct replay_io *io, uint64_t t_us, int op,
		 uint64_t off, uint32_t len, bool fua, bool preflush)
{
	ck_assert_uint_eq(io->t_ns, t_us * 1000);
	ck_assert_int_eq(io->op, op);
	ck_assert_uint_eq(io->off, off);
	ck_assert_uint_eq(io->len, len);
	ck_assert_int_eq(io->fua, fua);
	ck_assert_int_eq(io->preflush, preflush);
}

START_TEST(replay_fio_iolog_v2_and_v3)
{
	struct replay_trace tr;
	char err[256];

	ck_assert_int_eq(replay_load(put("b31-v2.log",
		"fio version 2 iolog\n/dev/sdb add\n/dev/sdb open\n"
		"/dev/sdb write 0 4096\n/dev/sdb wait 1000 0\n"
		"/dev/sdb read 4096 8192\n/dev/sdb wait 50 0\n"
		"/dev/sdb sync 0 0\n/dev/sdb trim 0 4096\n/dev/sdb close\n"),
		&tr, err, sizeof(err)), 0);
	ck_assert_uint_eq(tr.n, 3);
	want(&tr.ios[0], 0, RP_WRITE, 0, 4096, false, false);
	want(&tr.ios[1], 1000, RP_READ, 4096, 8192, false, false);
	want(&tr.ios[2], 1000, RP_FLUSH, 0, 0, false, false);	/* wait 50: < 100 */
	ck_assert_uint_eq(tr.discards, 1);
	replay_free(&tr);
	ck_assert_int_eq(replay_load(put("b31-v3.log",
		"fio version 3 iolog\n0 /dev/sdb add\n0 /dev/sdb open\n"
		"100 /dev/sdb write 0 4096\n2500 /dev/sdb read 8192 4096\n"
		"2600 /dev/sdb datasync 0 0\n"), &tr, err, sizeof(err)), 0);
	ck_assert_uint_eq(tr.n, 3);
	want(&tr.ios[0], 100, RP_WRITE, 0, 4096, false, false);
	want(&tr.ios[1], 2500, RP_READ, 8192, 4096, false, false);
	want(&tr.ios[2], 2600, RP_FLUSH, 0, 0, false, false);
	replay_free(&tr);
}
END_TEST

START_TEST(replay_blkparse_text)
{
	struct replay_trace tr;
	char err[256];

	ck_assert_int_eq(replay_load(put("b31-blk.txt",
"  8,0    1        1     5.000000000  4242  Q   W 2048 + 8 [dd]\n"
"  8,0    1        2     5.000001000  4242  G   W 2048 + 8 [dd]\n"
"  8,0    1        3     5.000500000  4242  Q  WS 4096 + 16 [dd]\n"
"  8,0    1        4     5.001000000  4242  Q FWFS 8192 + 8 [jbd2/sda-8]\n"
"  8,0    1        5     5.002000000  4242  Q FWS [jbd2/sda-8]\n"
"  8,0    1        6     5.003000000  4242  Q   R 0 + 8 [cat]\n"
"  8,0    1        7     5.004000000  4242  Q   D 100 + 8 [fstrim]\n"
"  8,0    1        8     5.004000000  4242  D   R 0 + 8 [cat]\n"
"CPU1 (8,0):\n"
" Reads Queued:           1,        4KiB  Writes Queued:           3,       16KiB\n"),
		&tr, err, sizeof(err)), 0);
	ck_assert_uint_eq(tr.n, 5);
	want(&tr.ios[0], 0, RP_WRITE, 2048 * 512, 4096, false, false);
	want(&tr.ios[1], 500, RP_WRITE, 4096 * 512, 8192, false, false);
	/* F first: a flush before; the F after W: FUA */
	want(&tr.ios[2], 1000, RP_WRITE, 8192 * 512, 4096, true, true);
	want(&tr.ios[3], 2000, RP_FLUSH, 0, 0, false, false);
	want(&tr.ios[4], 3000, RP_READ, 0, 4096, false, false);
	ck_assert_uint_eq(tr.flushes, 2);
	ck_assert_uint_eq(tr.fua, 1);
	ck_assert_uint_eq(tr.discards, 1);
	replay_free(&tr);
}
END_TEST

START_TEST(replay_refusals_name_the_line)
{
	struct replay_trace tr;
	char err[256];

	ck_assert_int_eq(replay_load(put("b31-two.log",
		"fio version 2 iolog\n/dev/a add\n/dev/b add\n"), &tr, err,
		sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "b31-two.log:3: a second file"));
	ck_assert_int_eq(replay_load(put("b31-wait.log",
		"fio version 3 iolog\n0 /dev/a wait 100 0\n"), &tr, err,
		sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, ":2: wait"));
	ck_assert_int_eq(replay_load(put("b31-empty.log", "hello\n"), &tr, err,
		sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "no I/O"));
	/* a LUN of 16 blocks of 512 bytes: the read at 8192 ends past it */
	ck_assert_int_eq(replay_load(put("b31-end.log",
		"fio version 2 iolog\n/dev/a add\n/dev/a write 0 4096\n"
		"/dev/a read 8192 512\n"), &tr, err, sizeof(err)), 0);
	ck_assert_int_eq(replay_check(&tr, "T", 0, 512, 32, err, sizeof(err)), 0);
	ck_assert_int_eq(replay_check(&tr, "T", 0, 512, 16, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "T:4: I/O of 512 bytes at byte 8192 ends past the LUN's end (8192 bytes)"));
	ck_assert_int_eq(replay_check(&tr, "T", 0, 4096, 16, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "T:4:"));
	ck_assert_ptr_nonnull(strstr(err, "whole blocks"));
	replay_free(&tr);
}
END_TEST

static Suite *bench_access_suite(void)
{
	Suite *s = suite_create("bench_access");
	TCase *tc = tcase_create("access");

	tcase_set_timeout(tc, 120);
	harness_add(tc, zipf_hottest_tenth_matches_the_sums);
	harness_add(tc, zipf_theta_below_one);
	harness_add(tc, pareto_is_the_80_20_rule);
	harness_add(tc, center_puts_the_hottest_block_there);
	harness_add(tc, normal_within_one_and_two_deviations);
	harness_add(tc, zoned_shares_by_zone);
	harness_add(tc, zoned_abs_in_bytes);
	harness_add(tc, bad_distributions_refused);
	harness_add(tc, same_seed_same_sequence);
	harness_add(tc, thinktime_pauses_follow_the_sequence);
	harness_add(tc, thinktime_spin_then_sleep);
	harness_add(tc, depth_low_drains_then_fills);
	harness_add(tc, replay_fio_iolog_v2_and_v3);
	harness_add(tc, replay_blkparse_text);
	harness_add(tc, replay_refusals_name_the_line);
	suite_add_tcase(s, tc);
	return s;
}

int main(int argc, char **argv)
{
	return harness_main(argc, argv, bench_access_suite);
}
