/* Log-linear latency histogram; see bench_hist.h. */
#include <string.h>
#include "initiator/bench_hist.h"

void hist_reset(struct bench_hist *h)
{
	memset(h, 0, sizeof(*h));
	h->min = UINT64_MAX;
}

unsigned hist_bucket(uint64_t ns)
{
	unsigned msb, shift;

	if (ns < 2 * HIST_SUB)
		return (unsigned)ns;
	msb = 63u - (unsigned)__builtin_clzll(ns);
	if (msb > HIST_MAX_MSB)
		return HIST_NBUCKETS - 1;
	shift = msb - HIST_SUB_BITS;
	/* mantissa in [64, 127]: the 7 top bits of the value */
	return 2 * HIST_SUB + (msb - HIST_SUB_BITS - 1) * HIST_SUB +
	       (unsigned)((ns >> shift) - HIST_SUB);
}

void hist_bucket_range(unsigned b, uint64_t *lo, uint64_t *hi)
{
	unsigned grp, shift;
	uint64_t mant;

	if (b < 2 * HIST_SUB) {
		*lo = *hi = b;
		return;
	}
	grp = (b - 2 * HIST_SUB) / HIST_SUB;	/* msb - SUB_BITS - 1 */
	mant = HIST_SUB + (b - 2 * HIST_SUB) % HIST_SUB;
	shift = grp + 1;
	*lo = mant << shift;
	*hi = *lo + (1ull << shift) - 1;
}

void hist_add(struct bench_hist *h, uint64_t ns)
{
	h->count[hist_bucket(ns)]++;
	h->total++;
	h->sum += (double)ns;
	if (ns < h->min)
		h->min = ns;
	if (ns > h->max)
		h->max = ns;
}

void hist_merge(struct bench_hist *into, const struct bench_hist *from)
{
	unsigned i;

	if (!from->total)
		return;
	for (i = 0; i < HIST_NBUCKETS; i++)
		into->count[i] += from->count[i];
	into->total += from->total;
	into->sum += from->sum;
	if (from->min < into->min)
		into->min = from->min;
	if (from->max > into->max)
		into->max = from->max;
}

uint64_t hist_quantile(const struct bench_hist *h, double q)
{
	uint64_t want, seen = 0, lo, hi;
	unsigned i;

	if (!h->total)
		return 0;
	if (q <= 0)
		return h->min;
	if (q >= 1)
		return h->max;
	want = (uint64_t)(q * (double)h->total);
	if ((double)want < q * (double)h->total)
		want++;
	if (want == 0)
		want = 1;
	for (i = 0; i < HIST_NBUCKETS; i++) {
		seen += h->count[i];
		if (seen >= want) {
			hist_bucket_range(i, &lo, &hi);
			lo += (hi - lo) / 2;
			/* never report outside what was actually seen */
			if (lo < h->min)
				lo = h->min;
			if (lo > h->max)
				lo = h->max;
			return lo;
		}
	}
	return h->max;
}

double hist_mean(const struct bench_hist *h)
{
	return h->total ? h->sum / (double)h->total : 0.0;
}
