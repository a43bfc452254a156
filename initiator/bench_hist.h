/*
 * Log-linear latency histogram (HDR-like): exact below 128 ns, then 64
 * sub-buckets per power of two, so every recorded value is known within
 * 1/64 of itself, from nanoseconds up to ~70 minutes. One per worker
 * (no sharing on the hot path); merged per point.
 */
#ifndef TCQ_BENCH_HIST_H
#define TCQ_BENCH_HIST_H
#include <stdint.h>

#define HIST_SUB_BITS 6
#define HIST_SUB (1u << HIST_SUB_BITS)		/* 64 */
#define HIST_MAX_MSB 42				/* 2^42 ns ~ 73 min */
#define HIST_NBUCKETS (2 * HIST_SUB + (HIST_MAX_MSB - HIST_SUB_BITS) * HIST_SUB)

struct bench_hist {
	uint64_t count[HIST_NBUCKETS];
	uint64_t total;
	uint64_t min, max;
	double sum;
};

void hist_reset(struct bench_hist *h);
void hist_add(struct bench_hist *h, uint64_t ns);
void hist_merge(struct bench_hist *into, const struct bench_hist *from);
/* Value (ns) at quantile q in [0,1]: the middle of the bucket holding the
 * ceil(q * total)-th smallest value; 0 when empty. */
uint64_t hist_quantile(const struct bench_hist *h, double q);
double hist_mean(const struct bench_hist *h);

/* Bucket index of a value, and the [lo, hi] range a bucket covers. */
unsigned hist_bucket(uint64_t ns);
void hist_bucket_range(unsigned b, uint64_t *lo, uint64_t *hi);
#endif
