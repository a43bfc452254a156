/*
 * tcq-bench's SCSI command mixes: the options, what they ask of each
 * other, and each command kind's count and latency in the tables, JSON
 * and CSV (bench_mix_run.c sends them). FUA writes, SYNCHRONIZE CACHE
 * every N writes or T ms, UNMAP, WRITE SAME with and without UNMAP,
 * COMPARE AND WRITE and EXTENDED COPY, beside --ordered and --hoq.
 */
#include <errno.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>
#include "initiator/bench.h"

static const char *const kind_names[BK_COUNT] = {
	"read", "write", "fua", "sync", "unmap", "ws", "ws-unmap", "caw",
	"xcopy",
};

const char *bench_kind_name(int kind)
{
	return kind >= 0 && kind < BK_COUNT ? kind_names[kind] : "?";
}

void bench_mix_usage(FILE *f)
{
	fputs(
"SCSI command mixes (native engine; libiscsi all but --xcopy; each kind's\n"
"latency on its own):\n"
"  --fua PCT            share of the workload's WRITEs sent with FUA\n"
"  --sync-every N       a SYNCHRONIZE CACHE(16) after every N commands that\n"
"                       write, per session\n"
"  --sync-interval MS   a SYNCHRONIZE CACHE(16) every MS milliseconds, per\n"
"                       session\n"
"  --unmap PCT          share of commands sent as UNMAP of the I/O's range\n"
"  --write-same PCT     share sent as WRITE SAME(16) of the range\n"
"  --write-same-unmap PCT  share sent as WRITE SAME(16) with UNMAP=1\n"
"  --caw PCT            share sent as COMPARE AND WRITE of min(bs, 255\n"
"                       blocks): the blocks are read first, the CAW compares\n"
"                       against what was read (a MISCOMPARE, another write\n"
"                       having come between, is counted apart, not an error)\n"
"  --xcopy PCT          share sent as EXTENDED COPY (LID1) of the range to\n"
"                       another random range of the region, same LUN\n",
	f);
}

static int mix_pct(const char *s, unsigned *v)
{
	char *end;
	unsigned long x;

	errno = 0;
	x = strtoul(s, &end, 10);
	if (errno || end == s || *end || x > 100 || *s == '-')
		return -1;
	*v = (unsigned)x;
	return 0;
}

int bench_mix_opt(struct bench_opts *o, int c, const char *arg)
{
	struct bench_mix *m = &o->cmds;
	unsigned long long n;
	char *end;

	switch (c) {
	case BENCH_MIX_OPT_FUA: return mix_pct(arg, &m->fua_pct);
	case BENCH_MIX_OPT_UNMAP: return mix_pct(arg, &m->unmap_pct);
	case BENCH_MIX_OPT_WS: return mix_pct(arg, &m->ws_pct);
	case BENCH_MIX_OPT_WS_UNMAP: return mix_pct(arg, &m->ws_unmap_pct);
	case BENCH_MIX_OPT_CAW: return mix_pct(arg, &m->caw_pct);
	case BENCH_MIX_OPT_XCOPY: return mix_pct(arg, &m->xcopy_pct);
	case BENCH_MIX_OPT_SYNC_EVERY:
		errno = 0;
		n = strtoull(arg, &end, 10);
		if (errno || end == arg || *end || !n || n > UINT32_MAX ||
		    *arg == '-')
			return -1;
		m->sync_every = (uint32_t)n;
		return 0;
	case BENCH_MIX_OPT_SYNC_INTERVAL:
		errno = 0;
		m->sync_ms = strtod(arg, &end);
		if (errno || end == arg || *end || !(m->sync_ms > 0) ||
		    m->sync_ms > 3600e3)
			return -1;
		return 0;
	}
	return 1;
}

bool bench_mix_on(const struct bench_mix *m)
{
	return m->fua_pct || m->unmap_pct || m->ws_pct || m->ws_unmap_pct ||
	       m->caw_pct || m->xcopy_pct || m->sync_every || m->sync_ms > 0;
}

int bench_mix_check(const struct bench_opts *o)
{
	const struct bench_mix *m = &o->cmds;
	unsigned other = m->unmap_pct + m->ws_pct + m->ws_unmap_pct +
			 m->caw_pct + m->xcopy_pct;

	if (!bench_mix_on(m))
		return 0;
	if (other > 100) {
		fprintf(stderr, "tcq-bench: --unmap + --write-same + --write-same-unmap + --caw + --xcopy exceed 100%%\n");
		return -1;
	}
	for (unsigned i = 0; i < o->nrw; i++)
		if (o->rw[i] == BENCH_JOURNAL) {
			fprintf(stderr, "tcq-bench: --rw journal orders its commits by --commit; --fua, --sync-every, --sync-interval, --unmap, --write-same, --write-same-unmap, --caw and --xcopy do not apply to it\n");
			return -1;
		}
	/* These change blocks without a stamp: --verify could not say
	 * what a later read must find. */
	if (o->verify && other) {
		fprintf(stderr, "tcq-bench: --verify checks stamped writes: it cannot run with --%s (which writes no stamp)\n",
			m->unmap_pct ? "unmap" : m->ws_pct ? "write-same" :
			m->ws_unmap_pct ? "write-same-unmap" :
			m->caw_pct ? "caw" : "xcopy");
		return -1;
	}
	return 0;
}

void bench_mix_fold(struct bench_sample *mean, const struct bench_sample *s,
		    unsigned nrep)
{
	unsigned i, k;

	if (!nrep)
		return;
	for (k = 0; k < BK_COUNT; k++) {
		struct bench_kind_stat *d = &mean->kinds[k];

		memset(d, 0, sizeof(*d));
		for (i = 0; i < nrep; i++) {
			const struct bench_kind_stat *x = &s[i].kinds[k];

			d->count += x->count;
			d->miscompares += x->miscompares;
			d->mean_us += x->mean_us / nrep;
			d->p50_us += x->p50_us / nrep;
			d->p99_us += x->p99_us / nrep;
			d->p999_us += x->p999_us / nrep;
		}
	}
}

static bool point_mixed(const struct bench_point *p)
{
	for (int k = BK_FUA; k < BK_COUNT; k++)
		if (p->mean.kinds[k].count)
			return true;
	return false;
}

bool bench_mix_any(const struct bench_point *pts, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		if (pts[i].nrep && point_mixed(&pts[i]))
			return true;
	return false;
}

void bench_mix_print(FILE *f, const struct bench_point *pts, unsigned n)
{
	char b[16];

	if (!bench_mix_any(pts, n))
		return;
	fprintf(f, "Command kinds (latency in microseconds; count summed over repeats):\n");
	fprintf(f, "%-10s %6s %6s %4s %-9s %9s %9s %9s %9s %9s %7s\n", "rw", "bs",
		"depth", "sess", "kind", "count", "mean", "p50", "p99",
		"p99.9", "miscmp");
	for (unsigned i = 0; i < n; i++) {
		const struct bench_point *p = &pts[i];

		if (!p->nrep)
			continue;
		bench_fmt_size(b, sizeof(b), p->bs);
		for (int k = 0; k < BK_COUNT; k++) {
			const struct bench_kind_stat *s = &p->mean.kinds[k];

			if (!s->count)
				continue;
			fprintf(f, "%-10s %6s %6u %4u %-9s %9" PRIu64 " %9.1f %9.1f %9.1f %9.1f %7" PRIu64 "\n",
				bench_rw_name(p->rw), b, p->depth, p->sessions,
				kind_names[k], s->count, s->mean_us, s->p50_us,
				s->p99_us, s->p999_us, s->miscompares);
		}
	}
	fputc('\n', f);
}

/* Whether some point counted kind k (CSV columns are the run's). */
static bool kind_seen(const struct bench_point *pts, unsigned n, int k)
{
	for (unsigned i = 0; i < n; i++)
		if (pts[i].nrep && pts[i].mean.kinds[k].count)
			return true;
	return false;
}

void bench_mix_csv_head(FILE *f, const struct bench_point *pts, unsigned n)
{
	if (!bench_mix_any(pts, n))
		return;
	for (int k = 0; k < BK_COUNT; k++)
		if (kind_seen(pts, n, k))
			fprintf(f, ",%s_count,%s_mean_us,%s_p50_us,%s_p99_us,%s_p999_us,%s_miscompares",
				kind_names[k], kind_names[k], kind_names[k],
				kind_names[k], kind_names[k], kind_names[k]);
}

void bench_mix_csv_row(FILE *f, const struct bench_point *pts, unsigned n,
		       const struct bench_point *p)
{
	if (!bench_mix_any(pts, n))
		return;
	for (int k = 0; k < BK_COUNT; k++) {
		const struct bench_kind_stat *s = &p->mean.kinds[k];

		if (kind_seen(pts, n, k))
			fprintf(f, ",%" PRIu64 ",%.3f,%.3f,%.3f,%.3f,%" PRIu64,
				s->count, s->mean_us, s->p50_us, s->p99_us,
				s->p999_us, s->miscompares);
	}
}

void bench_mix_json(struct json_object *o, const struct bench_point *p)
{
	json_object *kinds;

	if (!point_mixed(p))
		return;
	kinds = json_object_new_object();
	for (int k = 0; k < BK_COUNT; k++) {
		const struct bench_kind_stat *s = &p->mean.kinds[k];
		json_object *j, *lat;

		if (!s->count)
			continue;
		j = json_object_new_object();
		lat = json_object_new_object();
		json_object_object_add(j, "count",
				       json_object_new_int64((int64_t)s->count));
		json_object_object_add(lat, "mean", json_object_new_double(s->mean_us));
		json_object_object_add(lat, "p50", json_object_new_double(s->p50_us));
		json_object_object_add(lat, "p99", json_object_new_double(s->p99_us));
		json_object_object_add(lat, "p999", json_object_new_double(s->p999_us));
		json_object_object_add(j, "lat_us", lat);
		json_object_object_add(j, "miscompares",
				       json_object_new_int64((int64_t)s->miscompares));
		json_object_object_add(kinds, kind_names[k], j);
	}
	json_object_object_add(o, "kinds", kinds);
}
