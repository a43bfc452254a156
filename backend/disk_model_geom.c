/*
 * The rotating disk's geometry and seek curve (disk_model.c is the
 * service; disk_model_priv.h). Pure arithmetic on the resolved parameters.
 *
 * Geometry. `zones` zones of equal cylinder count; zone z (0 outermost)
 * has spt(z) = spt_outer + (spt_inner - spt_outer) * z / (zones - 1)
 * sectors per track (linear in between, rounded), `heads` tracks per
 * cylinder. Cylinders per zone = ceil(capacity / (heads * sum spt(z))),
 * so the modelled disk holds at least `capacity`. LBAs run from the
 * outer edge inwards, track after track. Moving to the next track costs
 * head_switch (a head switch or a one-cylinder step; vendors give the
 * sustained rate as 512 * sectors per cylinder / ((heads - 1) * head
 * switch + cylinder change + heads revolutions)), and the layout skews
 * each track by it: sector i of the k-th track of a zone lies at angle
 * i / spt + k * head_switch / T, so a transfer of n sectors crossing b
 * track boundaries takes n / spt revolutions + b * head_switch and ends
 * exactly where the next sector comes under the head (a sequential
 * stream loses no revolution). The media rate of zone z on a track is
 * spt(z) * 512 * rpm / 60 bytes/s.
 *
 * The head. Its cylinder is where the last media transfer (or the
 * read-ahead after it) ended; its angle is the spindle's, a function of
 * time alone: angle(t) = frac(phase + t / T), T = 60 s / rpm, phase from
 * the seed. Positioning to a sector = seek(|dc|) + the rotation that
 * brings its angle under the head after the seek.
 *
 * Seek curve. For d >= 1 cylinders, with x = (d - 1) / (C - 2) in [0, 1]
 * (C cylinders, so d = C - 1 is the full stroke):
 *     seek(d) = track_seek + (full_seek - track_seek) * f(x)
 *     f(x) = k sqrt(x)                           x <= x0
 *     f(x) = k (sqrt(x0) + (x - x0) / (2 sqrt(x0)))   x > x0
 *     k = 1 / (sqrt(x0) + (1 - x0) / (2 sqrt(x0)))
 * Square root (the arm accelerates and decelerates) then linear (coasting
 * at top speed), continuous in value and slope at x0, f(0) = 0 and
 * f(1) = 1, so seek(1) = track_seek and seek(C - 1) = full_seek exactly.
 * x0 is fitted (bisection; the mean grows with x0) so that the mean seek
 * over all pairs of tracks -- the vendors' "average seek", the weighted
 * average of all possible seek combinations, sum over n of (max + 1 - n)
 * (Tn_in + Tn_out) / ((max + 1) max) -- is avg_seek. Every cylinder
 * weighs the same (it has `heads` tracks whatever its zone); the mean
 * is summed over 256 bands of cylinders, two draws in one band at a
 * third of its width. x0 in (0, 1] reaches means from about 1/3 (linear:
 * the mean distance of two uniform points is a third of the stroke) to
 * 8/15 (pure square root: the mean of sqrt|a - b|) of the way from
 * track_seek to full_seek.
 *
 * Past 8/15 the square root gives way to a power: f(x) = x^p, p fitted
 * in [0.1, 0.5) (the mean of x^p over pairs is 2 / ((p + 1)(p + 2)):
 * 8/15 at p = 1/2, 0.87 at p = 0.1). That is a short seek relatively
 * longer, as a small 2.5-inch drive's long settling makes it: the
 * Travelstar 7K320's sheet (1, 12 and 20 ms) needs p = 0.42. The same
 * ends as before, so seek(1) and seek(C - 1) are still exact. An
 * avg_seek outside what both reach is refused naming the key.
 */
#include <math.h>
#include <stdio.h>
#include "backend/disk_model_priv.h"

#define FIT_BANDS 256

/* ---- seek curve ----------------------------------------------------- */

#define SEEK_P_MIN 0.1

/* x0 < 1 or p = 1/2: the square root then linear; p < 1/2: x^p. */
static double curve(double x, double x0, double p)
{
	double s = sqrt(x0), k = 1.0 / (s + (1.0 - x0) / (2.0 * s));

	if (p < 0.5)
		return pow(x, p);
	if (x <= x0)
		return k * sqrt(x);
	return k * (s + (x - x0) / (2.0 * s));
}

static double seek_at(const struct disk_model *m, double d, double x0,
		      double p)
{
	double x;

	if (d <= 0.0)
		return 0.0;
	if (m->cylinders <= 2)
		return (double)m->p.track_seek_ns;
	x = (d - 1.0) / (double)(m->cylinders - 2);
	if (x < 0.0)
		x = 0.0;
	if (x > 1.0)
		x = 1.0;
	return (double)m->p.track_seek_ns +
	       (double)(m->p.full_seek_ns - m->p.track_seek_ns) *
	       curve(x, x0, p);
}

uint64_t dm_seek_ns(const struct disk_model *m, uint32_t d)
{
	return (uint64_t)llround(seek_at(m, (double)d, m->seek_x0,
					 m->seek_p));
}

/* Mean seek over all pairs of tracks for a given x0 (see the header):
 * nb bands of equal width, every cylinder as likely, so a pair's weight
 * depends only on how many bands k apart it is: nb pairs at k = 0 (a
 * third of the width apart on average), 2 (nb - k) at k. O(nb), where a
 * sum over every pair of bands would be O(nb^2) per step of the fit. */
static double mean_seek(const struct disk_model *m, int nb, double width,
			double x0, double p)
{
	double sum = nb * seek_at(m, width / 3.0, x0, p);

	for (int k = 1; k < nb; k++)
		sum += 2.0 * (nb - k) * seek_at(m, k * width, x0, p);
	return sum / ((double)nb * nb);
}

/* Past the square root's reach: p in [SEEK_P_MIN, 1/2), the mean falling
 * as p grows. want is in range (fit_seek checked). */
static void fit_power(struct disk_model *m, int nb, double width,
		      double want)
{
	double lo = SEEK_P_MIN, hi = 0.5;

	for (int it = 0; it < 60; it++) {
		double mid = 0.5 * (lo + hi);

		if (mean_seek(m, nb, width, 1.0, mid) > want)
			lo = mid;
		else
			hi = mid;
	}
	m->seek_x0 = 1.0;
	m->seek_p = 0.5 * (lo + hi);
}

static int fit_seek(struct disk_model *m, char *err, size_t errlen)
{
	double width, lo = 1e-9, hi = 1.0;
	double want = (double)m->p.avg_seek_ns, mlo, mhi;
	int nb = m->cylinders < FIT_BANDS ? (int)m->cylinders : FIT_BANDS;

	width = (double)m->cylinders / nb;
	m->seek_p = 0.5;
	mlo = mean_seek(m, nb, width, lo, 0.5);
	mhi = mean_seek(m, nb, width, hi, SEEK_P_MIN);
	if (want < mlo || want > mhi) {
		snprintf(err, errlen, "disk: avg_seek %.3fms cannot be fitted "
			 "between track_seek and full_seek (this curve reaches "
			 "%.3f..%.3fms)", want / 1e6, mlo / 1e6, mhi / 1e6);
		return -1;
	}
	if (want > mean_seek(m, nb, width, hi, 0.5)) {
		fit_power(m, nb, width, want);
		return 0;
	}
	for (int it = 0; it < 60; it++) {
		double mid = 0.5 * (lo + hi);

		if (mean_seek(m, nb, width, mid, 0.5) < want)
			lo = mid;
		else
			hi = mid;
	}
	m->seek_x0 = 0.5 * (lo + hi);
	return 0;
}

/* ---- geometry ------------------------------------------------------- */

static const struct dm_zone *zone_of(const struct disk_model *m, uint64_t lba)
{
	uint32_t lo = 0, hi = m->p.zones - 1;

	while (lo < hi) {
		uint32_t mid = (lo + hi + 1) / 2;

		if (m->zone[mid].first_lba <= lba)
			lo = mid;
		else
			hi = mid - 1;
	}
	return &m->zone[lo];
}

uint32_t dm_cyl(const struct disk_model *m, uint64_t lba, uint32_t *spt)
{
	const struct dm_zone *z = zone_of(m, lba);
	uint64_t track = (lba - z->first_lba) / z->spt;

	if (spt)
		*spt = z->spt;
	return z->first_cyl + (uint32_t)(track / m->p.heads);
}

double dm_media_rate(const struct disk_model *m, uint64_t lba)
{
	return (double)zone_of(m, lba)->spt * DM_SECTOR * m->p.rpm / 60.0;
}

double dm_angle_of(const struct disk_model *m, uint64_t lba)
{
	const struct dm_zone *z = zone_of(m, lba);
	uint64_t k = (lba - z->first_lba) / z->spt;
	double a = (double)((lba - z->first_lba) % z->spt) / z->spt +
		   (double)(k * m->p.head_switch_ns % m->rot_ns) /
		   (double)m->rot_ns;

	return a - floor(a);
}

double dm_angle_at(const struct disk_model *m, uint64_t t)
{
	double a = m->phase + (double)(t % m->rot_ns) / (double)m->rot_ns;

	return a - floor(a);
}

/* Sectors the head reads per ns in the zone of lba. */
double dm_sect_per_ns(const struct disk_model *m, uint64_t lba)
{
	return (double)zone_of(m, lba)->spt / (double)m->rot_ns;
}

double dm_stream_sect_per_ns(const struct disk_model *m, uint64_t lba)
{
	return (double)zone_of(m, lba)->spt /
	       (double)(m->rot_ns + m->p.head_switch_ns);
}

uint64_t dm_xfer_ns(const struct disk_model *m, uint64_t lba, uint32_t n)
{
	const struct dm_zone *z = zone_of(m, lba);
	uint64_t k0 = (lba - z->first_lba) / z->spt;
	uint64_t k1 = (lba + (n ? n - 1 : 0) - z->first_lba) / z->spt;

	return (uint64_t)llround((double)n / dm_sect_per_ns(m, lba)) +
	       (k1 - k0) * m->p.head_switch_ns;
}

uint64_t dm_iface_ns(const struct disk_model *m, uint32_t n)
{
	return (uint64_t)llround((double)n * DM_SECTOR * DM_NS /
				 (double)m->p.iface_bps);
}

int dm_geom_init(struct disk_model *m, char *err, size_t errlen)
{
	const struct dm_params *p = &m->p;
	uint64_t cap_sect, sum = 0;
	uint32_t cpz;

	m->rot_ns = (uint64_t)llround(60.0 * DM_NS / p->rpm);
	cap_sect = p->capacity / DM_SECTOR;
	for (uint32_t z = 0; z < p->zones; z++) {
		uint32_t spt = p->zones == 1 ? p->spt_outer :
			(uint32_t)lround(p->spt_outer +
					 ((double)p->spt_inner - p->spt_outer) *
					 z / (p->zones - 1));

		m->zone[z].spt = spt;
		sum += spt;
	}
	cpz = (uint32_t)((cap_sect + (uint64_t)p->heads * sum - 1) /
			 ((uint64_t)p->heads * sum));
	if (cpz == 0)
		cpz = 1;
	for (uint32_t z = 0; z < p->zones; z++) {
		m->zone[z].first_cyl = z * cpz;
		m->zone[z].first_lba = z ? m->zone[z - 1].first_lba +
					   m->zone[z - 1].nsect : 0;
		m->zone[z].nsect = (uint64_t)cpz * p->heads * m->zone[z].spt;
	}
	m->cylinders = cpz * p->zones;
	if (m->cylinders < 3) {
		snprintf(err, errlen, "disk: capacity too small for a seek "
			 "curve (fewer than 3 cylinders)");
		return -1;
	}
	{
		uint64_t s = p->seed;
		uint64_t z = (s += 0x9e3779b97f4a7c15ull);

		z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
		z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
		z ^= z >> 31;
		m->phase = (double)(z >> 11) / 9007199254740992.0;
	}
	return fit_seek(m, err, errlen);
}
