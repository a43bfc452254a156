/* tcq-bench's logs and rates: fio's histogram bins, --percentiles'
 * list, the pacing arithmetic of --rate/--rate-iops and the log lines in
 * fio's format (HOWTO "Log File Formats"). */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "initiator/bench.h"
#include "initiator/bench_hist.h"
#include "initiator/bench_log.h"
#include "initiator/bench_rate.h"
#include "tests/unit/harness.h"

/* fio's stat.c plat_val_to_idx() with FIO_IO_U_PLAT_BITS 6,
 * FIO_IO_U_PLAT_VAL 64, FIO_IO_U_PLAT_NR 1856: the definition the
 * histogram log's bins follow. */
static unsigned fio_plat_val_to_idx(unsigned long long val)
{
	unsigned msb, error_bits, base, offset, idx;

	msb = val ? 63u - (unsigned)__builtin_clzll(val) : 0;
	if (msb <= 6)
		return (unsigned)val;
	error_bits = msb - 6;
	base = (error_bits + 1) << 6;
	offset = (64 - 1) & (unsigned)(val >> error_bits);
	idx = base + offset;
	return idx < 1856 - 1 ? idx : 1856 - 1;
}

START_TEST(hist_log_bins_are_fios)
{
	unsigned long long v, bad = 0;
	unsigned b;

	for (v = 0; v < 1u << 20; v++) {
		b = hist_bucket(v);
		bad += (b < FIO_PLAT_NR ? b : FIO_PLAT_NR - 1) !=
		       fio_plat_val_to_idx(v);
	}
	ck_assert_uint_eq(bad, 0);
	for (v = 1ull << 20; v < 1ull << 40; v = v * 3 / 2 + 7) {
		b = hist_bucket(v);
		ck_assert_uint_eq(b < FIO_PLAT_NR ? b : FIO_PLAT_NR - 1,
				  fio_plat_val_to_idx(v));
	}
	ck_assert_uint_eq(FIO_PLAT_NR, 1856);
}
END_TEST

START_TEST(percentile_list_sorted_unique)
{
	double p[BENCH_MAXPCT];
	unsigned n;

	ck_assert_int_eq(bench_pct_parse("99.9:50,99,50", p, &n), 0);
	ck_assert_uint_eq(n, 3);
	ck_assert(p[0] == 50 && p[1] == 99 && p[2] == 99.9);
	ck_assert_int_eq(bench_pct_parse("100", p, &n), 0);
	ck_assert_int_eq(bench_pct_parse("0", p, &n), -1);
	ck_assert_int_eq(bench_pct_parse("100.1", p, &n), -1);
	ck_assert_int_eq(bench_pct_parse("50,x", p, &n), -1);
	ck_assert_int_eq(bench_pct_parse(",", p, &n), -1);
	ck_assert_int_eq(bench_pct_parse("-5", p, &n), -1);
}
END_TEST

START_TEST(rate_arithmetic)
{
	struct bench_opts o;

	memset(&o, 0, sizeof(o));
	ck_assert(rate_point_iops(&o, 4096, 4) == 0);
	ck_assert_uint_eq(rate_interval_ns(&o, 4096, 4), 0);
	/* 200 IOPS a session (fio's per job): 5 ms between I/Os */
	o.rate.iops = 200;
	ck_assert(rate_point_iops(&o, 4096, 4) == 800);
	ck_assert_uint_eq(rate_interval_ns(&o, 4096, 4), 5000000);
	/* the point's 200 shared by 4 sessions: 20 ms each */
	o.rate.total = true;
	ck_assert(rate_point_iops(&o, 4096, 4) == 200);
	ck_assert_uint_eq(rate_interval_ns(&o, 4096, 4), 20000000);
	/* 1 MB/s = 10^6 bytes/s at 4096 bytes: 244.140625 IOPS; the lower
	 * of the two limits applies */
	o.rate.total = false;
	o.rate.mbps = 1;
	ck_assert(fabs(rate_point_iops(&o, 4096, 1) - 200) < 1e-9);
	o.rate.iops = 0;
	ck_assert(fabs(rate_point_iops(&o, 4096, 1) - 1e6 / 4096) < 1e-9);
	ck_assert(fabs(rate_point_iops(&o, 4096, 2) - 2e6 / 4096) < 1e-9);
	ck_assert_uint_eq(rate_interval_ns(&o, 4096, 1), 4096000);
	/* 10^-9 MB/s: a turn a day, not an overflow */
	o.rate.mbps = 1e-9;
	ck_assert_uint_eq(rate_interval_ns(&o, 4096, 1), 86400000000000ull);
}
END_TEST

START_TEST(rate_gate_schedule)
{
	uint64_t next = 0, iv = 5000000, t0 = 1000000000ull;

	ck_assert(rate_gate(&next, 0, 7));	/* no rate: always */
	ck_assert_uint_eq(next, 0);
	ck_assert(rate_gate(&next, iv, t0));	/* the first at once */
	ck_assert_uint_eq(next, t0 + iv);
	ck_assert(!rate_gate(&next, iv, t0 + iv - 1));
	ck_assert(rate_gate(&next, iv, t0 + iv));
	ck_assert_uint_eq(next, t0 + 2 * iv);
	/* 3 intervals late: the lost turns are taken at once */
	ck_assert(rate_gate(&next, iv, t0 + 5 * iv));
	ck_assert(rate_gate(&next, iv, t0 + 5 * iv));
	ck_assert(rate_gate(&next, iv, t0 + 5 * iv));
	ck_assert(rate_gate(&next, iv, t0 + 5 * iv));
	ck_assert(!rate_gate(&next, iv, t0 + 5 * iv));
	/* 10 s late: at most RATE_CATCHUP_NS of turns are made up */
	next = t0;
	ck_assert(rate_gate(&next, iv, t0 + 10000000000ull));
	ck_assert_uint_eq(next, t0 + 10000000000ull - RATE_CATCHUP_NS);
}
END_TEST

START_TEST(rate_reached_threshold)
{
	struct bench_sample s;

	memset(&s, 0, sizeof(s));
	ck_assert(rate_reached(&s));		/* no rate asked */
	s.rate_iops = 200;
	s.v[METRIC_IOPS] = 190;
	ck_assert(rate_reached(&s));		/* 95% */
	s.v[METRIC_IOPS] = 189.9;
	ck_assert(!rate_reached(&s));
}
END_TEST

static char dir[64];

/* A fresh directory for the test's files, removed at its end. */
static void make_dir(void)
{
	snprintf(dir, sizeof(dir), "%s/tcq-lograte-XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	ck_assert(mkdtemp(dir) != NULL);
}

static void remove_dir(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	ck_assert_int_eq(system(cmd), 0);
}

static char *slurp(const char *name)
{
	char path[256], *buf = calloc(1, 1 << 16);
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "r");
	ck_assert_msg(f != NULL, "%s missing", path);
	n = fread(buf, 1, (1 << 16) - 1, f);
	buf[n] = 0;
	fclose(f);
	return buf;
}

START_TEST(series_lines_in_fios_format)
{
	struct tlog_win w[2];
	char prefix[128], err[256], *s;

	make_dir();
	snprintf(prefix, sizeof(prefix), "%s/x", dir);
	memset(w, 0, sizeof(w));
	/* window 0 (0..500 ms): 100 reads of 4096 bytes, 50 us each;
	 * window 1 ends with the last I/O at 750 ms: 10 reads, 10 writes */
	w[0].ios[0] = 100;
	w[0].bytes[0] = 409600;
	w[0].lat_ns[0] = 100 * 50000;
	w[1].ios[0] = 10;
	w[1].bytes[0] = 40960;
	w[1].lat_ns[0] = 10 * 20000;
	w[1].ios[1] = 10;
	w[1].bytes[1] = 40960;
	w[1].lat_ns[1] = 10 * 30000;
	ck_assert_int_eq(logfile_series(prefix, 3, BENCH_RANDRW, w, 2, 500,
					1000, 750, err, sizeof(err)), 0);
	/* time (ms from the run's start: ramp 1000 + window end), value,
	 * direction, block size 0, priority 0 (fio 3.33 without log_offset);
	 * bandwidth in KiB/s:
	 * 409600 B in 0.5 s = 800 KiB/s; 40960 B in 0.25 s = 160 KiB/s */
	s = slurp("x_bw.3.log");
	ck_assert_str_eq(s, "1500, 800, 0, 0, 0\n1500, 0, 1, 0, 0\n"
			    "1750, 160, 0, 0, 0\n1750, 160, 1, 0, 0\n");
	free(s);
	s = slurp("x_iops.3.log");
	ck_assert_str_eq(s, "1500, 200, 0, 0, 0\n1500, 0, 1, 0, 0\n"
			    "1750, 40, 0, 0, 0\n1750, 40, 1, 0, 0\n");
	free(s);
	/* latency in ns, a line only for a direction with I/Os */
	s = slurp("x_lat.3.log");
	ck_assert_str_eq(s, "1500, 50000, 0, 0, 0\n"
			    "1750, 20000, 0, 0, 0\n1750, 30000, 1, 0, 0\n");
	free(s);
	s = slurp("x_clat.3.log");
	ck_assert_str_eq(s, "1500, 50000, 0, 0, 0\n"
			    "1750, 20000, 0, 0, 0\n1750, 30000, 1, 0, 0\n");
	free(s);
	remove_dir();
}
END_TEST

START_TEST(hist_lines_in_fios_format)
{
	uint32_t *bins = calloc(2 * 2 * FIO_PLAT_NR, sizeof(*bins));
	char prefix[128], err[256], *s, *p;
	unsigned commas = 0;

	make_dir();
	snprintf(prefix, sizeof(prefix), "%s/h", dir);
	bins[0 * FIO_PLAT_NR + 5] = 7;			/* window 0, reads */
	bins[3 * FIO_PLAT_NR + FIO_PLAT_NR - 1] = 2;	/* window 1, writes */
	ck_assert_int_eq(logfile_hist(prefix, 1, 4096, bins, 2, 1000, 0, 1500,
				      err, sizeof(err)), 0);
	s = slurp("h_clat_hist.1.log");
	/* time, direction, block size, then the 1856 bins */
	ck_assert(strncmp(s, "1000, 0, 4096, 0, 0, 0, 0, 0, 7, 0,", 35) == 0);
	p = strchr(s, '\n');
	ck_assert(p != NULL);
	for (char *q = s; q < p; q++)
		commas += *q == ',';
	ck_assert_uint_eq(commas, 3 + FIO_PLAT_NR - 1);
	ck_assert(strncmp(p + 1, "1500, 1, 4096, 0", 16) == 0);
	ck_assert_str_eq(p + strlen(p) - 5, "0, 2\n");
	ck_assert(strstr(p + 1, "\n") == p + strlen(p) - 1);
	free(s);
	free(bins);
	remove_dir();
}
END_TEST

static Suite *bench_lograte_suite(void)
{
	Suite *s = suite_create("bench_lograte");
	TCase *tc = tcase_create("lograte");

	harness_add(tc, hist_log_bins_are_fios);
	harness_add(tc, percentile_list_sorted_unique);
	harness_add(tc, rate_arithmetic);
	harness_add(tc, rate_gate_schedule);
	harness_add(tc, rate_reached_threshold);
	harness_add(tc, series_lines_in_fios_format);
	harness_add(tc, hist_lines_in_fios_format);
	suite_add_tcase(s, tc);
	return s;
}

int main(int argc, char **argv)
{
	return harness_main(argc, argv, bench_lograte_suite);
}
