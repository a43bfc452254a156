/* tcq-bench statistics and output: histogram percentiles, table layout,
 * JSON round trip for --compare, verify stamps. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>
#include "initiator/bench.h"
#include "initiator/bench_hist.h"
#include "tests/unit/harness.h"

static struct bench_hist h;

START_TEST(hist_exact_small_values)
{
	uint64_t v;

	hist_reset(&h);
	for (v = 0; v < 100; v++)
		hist_add(&h, v);
	/* 50th smallest of 0..99 is 49; values below 128 are exact */
	ck_assert_uint_eq(hist_quantile(&h, 0.5), 49);
	ck_assert_uint_eq(hist_quantile(&h, 0.99), 98);
	ck_assert_uint_eq(hist_quantile(&h, 1.0), 99);
	ck_assert_uint_eq(hist_quantile(&h, 0.0), 0);
	ck_assert(fabs(hist_mean(&h) - 49.5) < 1e-9);
}
END_TEST

START_TEST(hist_uniform_percentiles)
{
	uint64_t v, p;

	hist_reset(&h);
	for (v = 1; v <= 1000000; v++)
		hist_add(&h, v * 100);	/* 100 ns .. 100 ms */
	p = hist_quantile(&h, 0.5);
	ck_assert_msg(fabs((double)p - 50000000.0) / 50000000.0 < 1.0 / 64,
		      "p50 %llu", (unsigned long long)p);
	p = hist_quantile(&h, 0.99);
	ck_assert_msg(fabs((double)p - 99000000.0) / 99000000.0 < 1.0 / 64,
		      "p99 %llu", (unsigned long long)p);
	p = hist_quantile(&h, 0.999);
	ck_assert_msg(fabs((double)p - 99900000.0) / 99900000.0 < 1.0 / 64,
		      "p999 %llu", (unsigned long long)p);
}
END_TEST

START_TEST(hist_two_point_distribution)
{
	struct bench_hist a;
	int i;

	/* 99% at 20 us, 1% at 5 ms (a typical tail): p50 and p99 sit on
	 * the fast mode, p99.9 on the slow one; also through a merge */
	hist_reset(&h);
	hist_reset(&a);
	for (i = 0; i < 9900; i++)
		hist_add(&h, 20000);
	for (i = 0; i < 100; i++)
		hist_add(&a, 5000000);
	hist_merge(&h, &a);
	ck_assert_uint_eq(h.total, 10000);
	ck_assert_uint_eq(h.min, 20000);
	ck_assert_uint_eq(h.max, 5000000);
	ck_assert(fabs((double)hist_quantile(&h, 0.5) - 20000) < 20000 / 64.0);
	ck_assert(fabs((double)hist_quantile(&h, 0.99) - 20000) < 20000 / 64.0);
	ck_assert(fabs((double)hist_quantile(&h, 0.999) - 5e6) < 5e6 / 64.0);
}
END_TEST

START_TEST(hist_bucket_bounds)
{
	uint64_t v, lo, hi;
	unsigned b, prev = 0;

	for (v = 1; v < (1ull << 42); v = v * 3 / 2 + 1) {
		b = hist_bucket(v);
		ck_assert_uint_lt(b, HIST_NBUCKETS);
		ck_assert_uint_ge(b, prev);	/* monotonic */
		prev = b;
		hist_bucket_range(b, &lo, &hi);
		ck_assert_msg(lo <= v && v <= hi, "v %llu in [%llu,%llu]",
			      (unsigned long long)v, (unsigned long long)lo,
			      (unsigned long long)hi);
		ck_assert(hi - lo + 1 <= (v < 128 ? 1 : v / 64));
	}
	/* minutes still fit; beyond the range clamps to the last bucket */
	ck_assert_uint_lt(hist_bucket(600ull * 1000000000ull), HIST_NBUCKETS - 1);
	ck_assert_uint_eq(hist_bucket(UINT64_MAX), HIST_NBUCKETS - 1);
}
END_TEST

static void mkpoint(struct bench_point *p, int rw, uint32_t bs, uint32_t d,
		    double mbps)
{
	memset(p, 0, sizeof(*p));
	p->rw = rw;
	p->bs = bs;
	p->depth = d;
	p->sessions = 1;
	p->nrep = 1;
	p->mean.v[METRIC_MBPS] = mbps;
	p->mean.v[METRIC_IOPS] = mbps * 1e6 / bs;
	p->mean.v[METRIC_P50] = 12.5;
	p->mean.v[METRIC_P99] = 40.25;
	p->mean.v[METRIC_P999] = 100;
	p->mean.v[METRIC_CPU] = 33;
	p->mean.lat_mean_us = 15;
	p->mean.runtime_s = 5;
	p->mean.ios = 1000;
}

START_TEST(table_columns_align)
{
	struct bench_point pts[6];
	char *text = NULL, *line, *save;
	size_t len = 0, w0 = 0;
	int nl = 0;
	FILE *f;

	mkpoint(&pts[0], BENCH_READ, 4096, 1, 16);
	mkpoint(&pts[1], BENCH_READ, 4096, 2, 25);
	mkpoint(&pts[2], BENCH_READ, 4096, 32, 34);
	mkpoint(&pts[3], BENCH_READ, 131072, 1, 120);
	mkpoint(&pts[4], BENCH_READ, 131072, 2, 1234.4);
	mkpoint(&pts[5], BENCH_READ, 131072, 32, 5.55);
	f = open_memstream(&text, &len);
	bench_print_table(f, pts, 6, BENCH_READ, 1, METRIC_MBPS);
	fclose(f);
	ck_assert_ptr_nonnull(strstr(text, "MB/s"));
	for (line = strtok_r(text, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save), nl++) {
		if (nl == 0)
			continue;	/* title */
		if (!w0)
			w0 = strlen(line);
		ck_assert_uint_eq(strlen(line), w0);	/* ASCII cells */
		if (nl == 1)
			ck_assert_str_eq(line, "  bs |    1     2   32");
		if (nl == 2)
			ck_assert_str_eq(line, "  4K |   16    25   34");
		if (nl == 3)
			ck_assert_str_eq(line, "128K |  120  1234  5.5");
	}
	ck_assert_int_eq(nl, 4);
	free(text);
}
END_TEST

START_TEST(cell_repeat_and_compare)
{
	struct bench_point p;
	struct bench_sample s[3];
	char buf[64];
	int i;

	memset(s, 0, sizeof(s));
	for (i = 0; i < 3; i++)
		s[i].v[METRIC_IOPS] = 100 + 10 * i;	/* 100,110,120 */
	s[1].err.check = 2;
	s[0].err.reconnects = 1;
	s[0].err.outage_s = 0.25;
	s[2].err.reconnects = 2;
	s[2].err.outage_s = 0.5;
	memset(&p, 0, sizeof(p));
	bench_point_fold(&p, s, 3);
	ck_assert(fabs(p.mean.v[METRIC_IOPS] - 110) < 1e-9);
	ck_assert(fabs(p.sd[METRIC_IOPS] - 10) < 1e-9);
	/* --reconnect: summed over the repeats, and no error */
	ck_assert_uint_eq(bench_errors_total(&p.mean.err), 2);
	ck_assert_uint_eq(p.mean.err.reconnects, 3);
	ck_assert(fabs(p.mean.err.outage_s - 0.75) < 1e-9);
	bench_format_cell(buf, sizeof(buf), &p, METRIC_IOPS);
	ck_assert_str_eq(buf, "110 ± 10");
	p.has_base = true;
	p.base[METRIC_IOPS] = 100;
	bench_format_cell(buf, sizeof(buf), &p, METRIC_IOPS);
	ck_assert_str_eq(buf, "110 ± 10 (+10.0%)");
}
END_TEST

START_TEST(json_round_trip)
{
	struct bench_point a[2], b[3];
	struct bench_meta meta = { "0.1.0", "local", "/tmp/x", "2026-01-01T00:00:00Z" };
	char path[] = "/tmp/tcq-bench-test-XXXXXX";
	char err[128];
	int fd;

	fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	close(fd);
	mkpoint(&a[0], BENCH_RANDREAD, 4096, 8, 123.456);
	mkpoint(&a[1], BENCH_WRITE, 65536, 1, 77);
	a[1].nrep = 2;
	a[1].sd[METRIC_MBPS] = 1.5;
	ck_assert_int_eq(bench_write_json(path, &meta, a, 2), 0);
	/* b: the same two points in another order, plus one not in the file */
	mkpoint(&b[0], BENCH_WRITE, 65536, 1, 0);
	mkpoint(&b[1], BENCH_READ, 4096, 8, 0);
	mkpoint(&b[2], BENCH_RANDREAD, 4096, 8, 0);
	ck_assert_int_eq(bench_load_compare(path, b, 3, err, sizeof(err)), 2);
	ck_assert(b[0].has_base);
	ck_assert(!b[1].has_base);
	ck_assert(b[2].has_base);
	ck_assert(fabs(b[0].base[METRIC_MBPS] - 77) < 1e-3);
	ck_assert(fabs(b[2].base[METRIC_MBPS] - 123.456) < 1e-3);
	ck_assert(fabs(b[2].base[METRIC_P99] - 40.25) < 1e-3);
	ck_assert(fabs(b[2].base[METRIC_CPU] - 33) < 1e-3);
	ck_assert(fabs(b[2].base[METRIC_IOPS] - 123.456e6 / 4096) < 1e-2);
	/* a file that is not ours is refused */
	fd = open(path, O_WRONLY | O_TRUNC);
	ck_assert_int_eq(write(fd, "{\"a\":1}", 7), 7);
	close(fd);
	ck_assert_int_eq(bench_load_compare(path, b, 3, err, sizeof(err)), -1);
	unlink(path);
}
END_TEST

START_TEST(verify_stamps)
{
	uint64_t buf[64];		/* one 512-byte block */
	uint32_t gen;

	verify_fill_block(buf, 512, 77, 5, 0x1234);
	ck_assert_ptr_null(verify_check_block(buf, 512, 77, 5, &gen));
	ck_assert_uint_eq(gen, 5);
	ck_assert_ptr_null(verify_check_block(buf, 512, 77, 0, &gen));
	ck_assert_ptr_nonnull(verify_check_block(buf, 512, 77, 6, &gen));
	ck_assert_ptr_nonnull(verify_check_block(buf, 512, 78, 5, &gen));
	((unsigned char *)buf)[300] ^= 1;
	ck_assert_ptr_nonnull(strstr(verify_check_block(buf, 512, 77, 0, &gen),
				     "checksum"));
	memset(buf, 0, sizeof(buf));
	ck_assert_ptr_null(verify_check_block(buf, 512, 77, 0, &gen));
	ck_assert_ptr_nonnull(verify_check_block(buf, 512, 77, 1, &gen));
}
END_TEST

/* What a read of lba finds when the medium holds generation gen of run
 * (gen 0: a block never stamped). Returns the mismatches counted. */
static uint64_t read_back(struct bench_verify *v, uint64_t lba, uint32_t gen,
			  uint32_t run)
{
	uint64_t blk[64];

	memset(blk, 0, sizeof(blk));
	if (gen)
		verify_fill_block(blk, 512, lba, gen, run);
	return verify_check(v, blk, lba, 1, NULL, NULL);
}

/* A write that failed or whose session was lost may have landed or not:
 * the old or the new generation passes, nothing else, and the first read
 * settles which one the block holds. */
START_TEST(verify_unacknowledged_writes)
{
	uint64_t buf[64];
	char err[128];
	const uint32_t run = 7;
	struct bench_verify *v = verify_create(0, 8, 512, run, NULL, err,
					       sizeof(err));

	ck_assert_ptr_nonnull(v);
	/* acknowledged: exactly the last generation */
	verify_stamp(v, buf, 0, 1);		/* gen 1 */
	verify_written(v, 0, 1);
	ck_assert_uint_eq(read_back(v, 0, 1, run), 0);
	ck_assert_uint_eq(read_back(v, 0, 0, run), 1);	/* write lost */
	ck_assert_uint_eq(read_back(v, 0, 1, run + 1), 1);	/* other run */
	/* unacknowledged gen 2 over gen 1: the old one passes and settles */
	verify_stamp(v, buf, 0, 1);
	verify_forget(v, 0, 1);
	ck_assert_uint_eq(read_back(v, 0, 1, run), 0);
	ck_assert_uint_eq(read_back(v, 0, 2, run), 1);	/* not now */
	/* ... or the new one, then only that */
	verify_stamp(v, buf, 1, 1);		/* gen 1 */
	verify_written(v, 1, 1);
	verify_stamp(v, buf, 1, 1);		/* gen 2, lost */
	verify_forget(v, 1, 1);
	ck_assert_uint_eq(read_back(v, 1, 2, run), 0);
	ck_assert_uint_eq(read_back(v, 1, 1, run), 1);
	/* any third content is an error: older generation, no stamp,
	 * another run's stamp */
	verify_stamp(v, buf, 2, 1);
	verify_written(v, 2, 1);
	verify_stamp(v, buf, 2, 1);
	verify_written(v, 2, 1);
	verify_stamp(v, buf, 2, 1);		/* gen 3, lost */
	verify_forget(v, 2, 1);
	ck_assert_uint_eq(read_back(v, 2, 1, run), 1);
	ck_assert_uint_eq(read_back(v, 2, 0, run), 1);
	ck_assert_uint_eq(read_back(v, 2, 2, run + 1), 1);
	ck_assert_uint_eq(read_back(v, 2, 2, run), 0);
	/* first write of the run lost: the content from before the run
	 * (anything not of this run) or the new generation */
	verify_stamp(v, buf, 3, 1);
	verify_forget(v, 3, 1);
	ck_assert_uint_eq(read_back(v, 3, 5, run + 1), 0);
	verify_stamp(v, buf, 4, 1);
	verify_forget(v, 4, 1);
	ck_assert_uint_eq(read_back(v, 4, 3, run), 1);	/* not ours */
	ck_assert_uint_eq(read_back(v, 4, 1, run), 0);
	/* a later acknowledged write ends the ambiguity */
	verify_stamp(v, buf, 5, 1);
	verify_forget(v, 5, 1);
	verify_stamp(v, buf, 5, 1);		/* gen 2 */
	verify_written(v, 5, 1);
	ck_assert_uint_eq(read_back(v, 5, 1, run), 1);
	ck_assert_uint_eq(read_back(v, 5, 2, run), 0);
	/* a write never sent leaves the old generation expected */
	verify_stamp(v, buf, 6, 1);
	verify_written(v, 6, 1);
	verify_stamp(v, buf, 6, 1);
	verify_cancel(v, 6, 1);
	ck_assert_uint_eq(read_back(v, 6, 2, run), 1);
	ck_assert_uint_eq(read_back(v, 6, 1, run), 0);
	/* two lost writes in a row: any intact block of this LBA passes */
	verify_stamp(v, buf, 7, 1);
	verify_written(v, 7, 1);
	verify_stamp(v, buf, 7, 1);
	verify_forget(v, 7, 1);
	verify_stamp(v, buf, 7, 1);
	verify_forget(v, 7, 1);
	ck_assert_uint_eq(read_back(v, 7, 1, run), 0);
	ck_assert_uint_eq(read_back(v, 7, 3, run), 1);	/* settled on 1 */
	/* the stamp in the write buffer is what verify_check expects */
	verify_stamp(v, buf, 7, 1);		/* gen 2 */
	verify_written(v, 7, 1);
	ck_assert_uint_eq(verify_check(v, buf, 7, 1, NULL, NULL), 0);
	verify_destroy(v);
}
END_TEST

/* --verify-journal: what one run acknowledged, the next one expects,
 * whatever its own run id; a stale block then fails. */
START_TEST(verify_journal_remembers)
{
	char path[] = "/tmp/tcq-journal.XXXXXX", err[256];
	uint64_t buf[64];
	struct bench_verify *v;
	int fd = mkstemp(path);

	ck_assert_int_ge(fd, 0);
	close(fd);
	unlink(path);		/* verify_create makes it */
	v = verify_create(0, 8, 512, 11, path, err, sizeof(err));
	ck_assert_msg(v != NULL, "%s", err);
	verify_stamp(v, buf, 2, 1);	/* gen 1 */
	verify_written(v, 2, 1);
	verify_stamp(v, buf, 2, 1);	/* gen 2 */
	verify_written(v, 2, 1);
	verify_stamp(v, buf, 5, 1);	/* gen 1, never acknowledged */
	verify_forget(v, 5, 1);
	verify_destroy(v);

	/* A new run (another run id asked for): the journal's state and id. */
	v = verify_create(0, 8, 512, 99, path, err, sizeof(err));
	ck_assert_msg(v != NULL, "%s", err);
	ck_assert_uint_eq(read_back(v, 2, 2, 11), 0);	/* as acknowledged */
	ck_assert_uint_eq(read_back(v, 2, 1, 11), 1);	/* stale: lost write */
	ck_assert_uint_eq(read_back(v, 2, 0, 11), 1);	/* not stamped */
	ck_assert_uint_eq(read_back(v, 5, 0, 11), 0);	/* old content, or */
	ck_assert_uint_eq(read_back(v, 3, 0, 11), 0);	/* never written */
	verify_destroy(v);

	/* The same file for another region is refused, naming it. */
	ck_assert_ptr_null(verify_create(0, 16, 512, 1, path, err, sizeof(err)));
	ck_assert_ptr_nonnull(strstr(err, path));
	ck_assert_ptr_null(verify_create(8, 8, 512, 1, path, err, sizeof(err)));
	unlink(path);
}
END_TEST

static Suite *bench_stats_suite(void)
{
	Suite *s = suite_create("bench_stats");
	TCase *tc = tcase_create("stats");

	tcase_set_timeout(tc, 30);
	harness_add(tc, hist_exact_small_values);
	harness_add(tc, hist_uniform_percentiles);
	harness_add(tc, hist_two_point_distribution);
	harness_add(tc, hist_bucket_bounds);
	harness_add(tc, table_columns_align);
	harness_add(tc, cell_repeat_and_compare);
	harness_add(tc, json_round_trip);
	harness_add(tc, verify_stamps);
	harness_add(tc, verify_unacknowledged_writes);
	harness_add(tc, verify_journal_remembers);
	suite_add_tcase(s, tc);
	return s;
}

int main(int argc, char **argv)
{
	return harness_main(argc, argv, bench_stats_suite);
}
