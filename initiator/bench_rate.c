/*
 * --rate, --rate-iops, --rate-per, --curve-pct: the options, the pacing
 * of a session (fio's linear rate: I/O k of a session starts no earlier
 * than k intervals after its first), and the rate a point did not reach.
 * See bench_rate.h.
 */
#include "config.h"	/* _GNU_SOURCE: ppoll */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "initiator/bench_rate.h"

static const unsigned default_curve[] = { 10, 50, 70, 80, 90, 100 };

void bench_rate_usage(FILE *f)
{
	fputs(
"Offered load (fio's rate and rate_iops, vdbench's curve; see tcq-bench(1)):\n"
"  --rate MB/s          at most this many MB/s (10^6 bytes) per session\n"
"  --rate-iops N        at most N I/Os per second per session\n"
"  --rate-per WHO       session (default, fio's per job) or total: the rate\n"
"                       is the whole point's, shared by its sessions\n"
"  --curve              per point: a run without limit finds the maximum\n"
"                       IOPS, then runs at --curve-pct of it (total rate);\n"
"                       a table, --json and --plot of latency against IOPS\n"
"  --curve-pct LIST     percentages of the maximum (default\n"
"                       10,50,70,80,90,100)\n"
"A point below 95% of its rate says so under the tables and in --json\n"
"(rate_reached).\n"
"\n", f);
}

static int parse_rate(const char *s, double *v)
{
	char *end;

	errno = 0;
	*v = strtod(s, &end);
	return errno || end == s || *end || !(*v > 0) || *v > 1e9 ? -1 : 0;
}

/* Comma separated percentages in [1, 100], kept in the order given. */
static int parse_pcts(const char *s, unsigned *out, unsigned *n)
{
	char buf[512], *tok, *save, *end;

	if (strlen(s) >= sizeof(buf))
		return -1;
	strcpy(buf, s);
	*n = 0;
	for (tok = strtok_r(buf, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		unsigned long v;

		errno = 0;
		v = strtoul(tok, &end, 10);
		if (errno || end == tok || *end || *tok == '-' || v < 1 ||
		    v > 100 || *n >= BENCH_MAXLIST)
			return -1;
		out[(*n)++] = (unsigned)v;
	}
	return *n ? 0 : -1;
}

int bench_rate_opt(struct bench_opts *o, int c, const char *arg)
{
	struct bench_rate_opts *r = &o->rate;

	switch (c) {
	case OPT_RATE:
		return parse_rate(arg, &r->mbps);
	case OPT_RATE_IOPS:
		return parse_rate(arg, &r->iops);
	case OPT_RATE_PER:
		if (strcmp(arg, "session") == 0)
			r->total = false;
		else if (strcmp(arg, "total") == 0)
			r->total = true;
		else
			return -1;
		return 0;
	case OPT_CURVE:
		r->curve = true;
		return 0;
	case OPT_CURVE_PCT:
		r->curve = true;
		return parse_pcts(arg, r->curve_pct, &r->ncurve);
	}
	return 1;
}

int bench_rate_check(struct bench_opts *o)
{
	struct bench_rate_opts *r = &o->rate;
	bool rate = r->mbps > 0 || r->iops > 0;

	for (unsigned i = 0; i < o->nrw; i++)
		if (o->rw[i] == BENCH_JOURNAL && (rate || r->curve)) {
			fprintf(stderr, "tcq-bench: --rate, --rate-iops and --curve do not apply to --rw journal\n");
			return -1;
		}
	if (r->curve && rate) {
		fprintf(stderr, "tcq-bench: --curve sets the rate of its runs itself: without --rate or --rate-iops\n");
		return -1;
	}
	if (r->curve && (o->repeat > 1 || o->compare || o->csv)) {
		fprintf(stderr, "tcq-bench: --curve runs each rate once and writes --json: without --repeat, --compare or --csv\n");
		return -1;
	}
	if (r->curve && !r->ncurve) {
		r->ncurve = sizeof(default_curve) / sizeof(default_curve[0]);
		memcpy(r->curve_pct, default_curve, sizeof(default_curve));
	}
	return 0;
}

double rate_point_iops(const struct bench_opts *o, uint32_t bs,
		       uint32_t sessions)
{
	const struct bench_rate_opts *r = &o->rate;
	double per = r->total ? 1 : sessions, iops = 0;

	if (r->mbps > 0)
		iops = r->mbps * 1e6 / bs * per;
	if (r->iops > 0 && (iops == 0 || r->iops * per < iops))
		iops = r->iops * per;
	return iops;
}

uint64_t rate_interval_ns(const struct bench_opts *o, uint32_t bs,
			  uint32_t sessions)
{
	double iops = rate_point_iops(o, bs, sessions), ns;

	if (iops <= 0 || !sessions)
		return 0;
	/* each session gets its share of the point's rate (a turn a day at
	 * the least: the double stays within uint64_t) */
	ns = 1e9 * sessions / iops + 0.5;
	return ns < 86400e9 ? (uint64_t)ns : (uint64_t)86400e9;
}

bool rate_gate(uint64_t *next, uint64_t interval_ns, uint64_t t)
{
	if (!interval_ns)
		return true;
	if (!*next)
		*next = t;
	if (t < *next)
		return false;
	*next += interval_ns;
	if (*next + RATE_CATCHUP_NS < t)
		*next = t - RATE_CATCHUP_NS;
	return true;
}

int rate_poll(struct pollfd *pfd, nfds_t n, int timeout_ms, uint64_t wake_ns,
	      uint64_t now)
{
	struct timespec ts;
	uint64_t d;

	if (!wake_ns || (timeout_ms >= 0 &&
			 wake_ns >= now + (uint64_t)timeout_ms * 1000000ull))
		return poll(pfd, n, timeout_ms);
	d = wake_ns > now ? wake_ns - now : 0;
	ts.tv_sec = (time_t)(d / 1000000000ull);
	ts.tv_nsec = (long)(d % 1000000000ull);
	return ppoll(pfd, n, &ts, NULL);
}

bool rate_reached(const struct bench_sample *s)
{
	return s->rate_iops <= 0 ||
	       s->v[METRIC_IOPS] >= RATE_REACHED * s->rate_iops;
}

void bench_rate_print(FILE *f, const struct bench_point *pts, unsigned n)
{
	char bs[16];

	for (unsigned i = 0; i < n; i++) {
		const struct bench_point *p = &pts[i];

		if (!p->nrep || rate_reached(&p->mean))
			continue;
		bench_fmt_size(bs, sizeof(bs), p->bs);
		fprintf(f, "rate not reached: %s sessions=%u bs=%s depth=%u: asked %.0f IOPS (%.3f MB/s), did %.0f IOPS (%.3f MB/s)\n",
			bench_rw_name(p->rw), p->sessions, bs, p->depth,
			p->mean.rate_iops, p->mean.rate_iops * p->bs / 1e6,
			p->mean.v[METRIC_IOPS], p->mean.v[METRIC_MBPS]);
	}
}

void bench_rate_json(json_object *jo, const struct bench_point *p)
{
	char buf[32];

	if (p->mean.rate_iops <= 0)
		return;
	snprintf(buf, sizeof(buf), "%.3f", p->mean.rate_iops);
	json_object_object_add(jo, "rate_iops",
			       json_object_new_double_s(p->mean.rate_iops, buf));
	json_object_object_add(jo, "rate_reached",
			       json_object_new_boolean(rate_reached(&p->mean)));
}
