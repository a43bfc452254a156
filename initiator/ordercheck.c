/* The order-check verifier; the rules are in ordercheck.h. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include "initiator/engine.h"
#include "initiator/ordercheck.h"

struct oc_ctx {
	const struct oc_cmd *t;
	size_t n;
	uint32_t ref;		/* serial-arithmetic origin of seq */
	struct oc_stats *st;
	oc_report_fn report;
	void *rctx;
};

/* seq relative to an origin far below every seq of the trace, so plain
 * comparisons work across StatSN wrap-around. */
static uint32_t rel(const struct oc_ctx *c, size_t i)
{
	return c->t[i].seq - c->ref;
}

static bool ok(const struct oc_ctx *c, size_t i)
{
	return c->t[i].status == 0;
}

static void flag(struct oc_ctx *c, enum oc_rule r, int64_t a, int64_t b,
		 int64_t x)
{
	struct oc_violation v = { .rule = r, .a = a, .b = b, .c = x };

	c->st->violations++;
	if (c->report)
		c->report(c->rctx, &v);
}

static bool covers(const struct oc_cmd *w, uint64_t lba)
{
	return lba >= w->lba && lba - w->lba < w->blocks;
}

/* Rule 1. */
static void check_ordered(struct oc_ctx *c)
{
	size_t o, j;

	for (o = 0; o < c->n; o++) {
		if (c->t[o].attr != BENCH_ATTR_ORDERED || !ok(c, o))
			continue;
		for (j = 0; j < o; j++)
			if (ok(c, j) && rel(c, j) > rel(c, o))
				flag(c, OC_ORDERED_BEFORE_OLDER, (int64_t)o,
				     (int64_t)j, -1);
		for (j = o + 1; j < c->n; j++)
			if (ok(c, j) && c->t[j].attr != BENCH_ATTR_HOQ &&
			    rel(c, j) < rel(c, o))
				flag(c, OC_NEWER_BEFORE_ORDERED, (int64_t)o,
				     (int64_t)j, -1);
	}
}

/* Index of the write that carried stamp s, or -1 (linear: traces are a few
 * thousand commands and violations are rare). */
static int64_t writer_of(const struct oc_ctx *c, uint64_t s)
{
	size_t i;

	for (i = 0; i < c->n; i++)
		if (c->t[i].write && c->t[i].stamp == s)
			return (int64_t)i;
	return -1;
}

/* Rule 2. */
static void check_reads(struct oc_ctx *c)
{
	size_t r;
	int64_t w, src;

	for (r = 0; r < c->n; r++) {
		const struct oc_cmd *rd = &c->t[r];

		if (rd->write || !ok(c, r) || rd->attr == BENCH_ATTR_HOQ)
			continue;
		/* the newest ORDERED write older than R on R's block */
		for (w = (int64_t)r - 1; w >= 0; w--)
			if (c->t[w].write && c->t[w].attr == BENCH_ATTR_ORDERED &&
			    ok(c, (size_t)w) && covers(&c->t[w], rd->lba))
				break;
		if (w < 0)
			continue;
		if (rd->stamp == OC_STAMP_INITIAL || rd->stamp == OC_STAMP_NONE) {
			flag(c, OC_STALE_READ, (int64_t)r, w, -1);
			continue;
		}
		src = writer_of(c, rd->stamp);
		if (src < 0 || src < w || !covers(&c->t[src], rd->lba))
			flag(c, OC_STALE_READ, (int64_t)r, w, src);
	}
}

/* Rule 3 and the HoQ statistics. */
static void check_hoq(struct oc_ctx *c)
{
	size_t h, j;
	int64_t o;

	for (h = 0; h < c->n; h++) {
		const struct oc_cmd *hq = &c->t[h];

		if (hq->attr != BENCH_ATTR_HOQ || !ok(c, h))
			continue;
		/* the newest older ORDERED task still outstanding when H
		 * was sent */
		for (o = (int64_t)h - 1; o >= 0; o--)
			if (c->t[o].attr == BENCH_ATTR_ORDERED &&
			    ok(c, (size_t)o) &&
			    c->t[o].t_done_ns > hq->t_submit_ns)
				break;
		if (o < 0)
			continue;
		c->st->hoq_while_ordered++;
		if (rel(c, h) < rel(c, (size_t)o))
			c->st->hoq_overtook++;
		for (j = h + 1; j < c->n; j++)
			if (ok(c, j) && c->t[j].attr != BENCH_ATTR_HOQ &&
			    rel(c, j) < rel(c, h)) {
				flag(c, OC_HOQ_HELD, (int64_t)h, (int64_t)j, o);
				break;
			}
	}
}

uint64_t ordercheck_verify(const struct oc_cmd *t, size_t n,
			   struct oc_stats *st, oc_report_fn report,
			   void *ctx)
{
	struct oc_ctx c = { .t = t, .n = n, .st = st, .report = report,
			    .rctx = ctx };
	size_t i;

	*st = (struct oc_stats){ 0 };
	st->cmds = n;
	for (i = 0; i < n; i++) {
		if (t[i].write)
			st->writes++;
		else
			st->reads++;
		if (t[i].attr == BENCH_ATTR_ORDERED)
			st->ordered++;
		else if (t[i].attr == BENCH_ATTR_HOQ)
			st->hoq++;
		else
			st->simple++;
		if (t[i].status)
			st->failed++;
	}
	for (i = 0; i < n && t[i].status; i++)
		;
	if (i == n)
		return 0;
	/* all seqs of one session lie within far less than 2^30 */
	c.ref = t[i].seq - (1u << 30);
	check_ordered(&c);
	check_reads(&c);
	check_hoq(&c);
	return st->violations;
}

const char *ordercheck_rule_text(enum oc_rule r)
{
	switch (r) {
	case OC_ORDERED_BEFORE_OLDER:
		return "ORDERED task completed before an older task";
	case OC_NEWER_BEFORE_ORDERED:
		return "newer (non-HoQ) task completed before an ORDERED task";
	case OC_STALE_READ:
		return "read after an ORDERED write returned older data";
	case OC_HOQ_HELD:
		return "HEAD OF QUEUE task held behind a task dormant behind ORDERED";
	}
	return "?";
}

void ordercheck_format_cmd(char *buf, size_t len, const struct oc_cmd *c)
{
	static const char *const attr[] = { "?", "SIMPLE", "ORDERED", "HOQ" };

	snprintf(buf, len, "#%u %s %s lba %" PRIu64 "+%u seq %u stamp %" PRIu64 "%s",
		 c->idx, attr[c->attr <= 3 ? c->attr : 0],
		 c->write ? "write" : "read", c->lba, c->blocks, c->seq,
		 c->stamp == OC_STAMP_NONE ? 0 : c->stamp,
		 c->stamp == OC_STAMP_NONE ? " (no stamp)" : "");
}
