/* The crash states of one point, in their fixed order (states.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "crash/states.h"

enum { PH_ALL, PH_DURABLE, PH_DROP_ONE, PH_PREFIX_ARRIVAL, PH_PREFIX_DONE,
       PH_TORN, PH_RANDOM, PH_END };

#define RANDOM_TRIES 20	/* random draws per state wanted, at most */

static size_t nentries(const struct md_point *m)
{
	return m->ntasks ? m->tfirst[m->ntasks] : 0;
}

static uint64_t xorshift(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return *s = x;
}

static const struct ch_task *task_of(const struct md_point *m, size_t k)
{
	return &m->h->tasks[m->tasks[k]];
}

static int cmp_done(const void *a, const void *b, void *arg)
{
	const struct md_point *m = arg;
	const struct ch_task *x = task_of(m, *(const uint32_t *)a);
	const struct ch_task *y = task_of(m, *(const uint32_t *)b);
	uint64_t dx = x->done && x->done <= m->c ? x->done : UINT64_MAX;
	uint64_t dy = y->done && y->done <= m->c ? y->done : UINT64_MAX;

	if (dx != dy)
		return dx < dy ? -1 : 1;
	return x->arrive < y->arrive ? -1 : x->arrive > y->arrive;
}

int st_init(struct st_gen *g, const struct md_point *m, size_t max,
	    uint64_t seed)
{
	memset(g, 0, sizeof(*g));
	g->m = m;
	g->max = max ? max : 1;
	g->seed = seed;
	g->rng = seed * 0x9e3779b97f4a7c15ull + 0x632be59bd9b4e019ull;
	if (!g->rng)
		g->rng = 1;
	g->exhaustive = m->log2_states <= log2((double)g->max) + 1e-9;
	g->digit = calloc(m->nblocks + 1, sizeof(*g->digit));
	g->drop = calloc(nentries(m) + 1, 1);
	g->order = calloc(m->ntasks + 1, sizeof(*g->order));
	g->seen_cap = 1024;
	while (g->seen_cap < 4 * g->max && g->seen_cap < (1u << 24))
		g->seen_cap *= 2;
	g->seen = calloc(g->seen_cap, sizeof(*g->seen));
	if (!g->digit || !g->drop || !g->order || !g->seen) {
		st_free(g);
		return -1;
	}
	for (size_t k = 0; k < m->ntasks; k++)
		g->order[k] = (uint32_t)k;
	qsort_r(g->order, m->ntasks, sizeof(*g->order), cmp_done, (void *)m);
	return 0;
}

void st_free(struct st_gen *g)
{
	free(g->digit);
	free(g->drop);
	free(g->order);
	free(g->seen);
	memset(g, 0, sizeof(*g));
}

void st_from_drops(const struct md_point *m, const uint8_t *drop,
		   struct md_state *s)
{
	uint8_t *d = m->scratch;	/* per candidate: dropped */

	memset(d, 0, m->ncand);
	for (size_t e = 0; e < nentries(m); e++)
		if (drop[e])
			d[m->blocks[m->tblock[e].block].first +
			  m->tblock[e].ci] = 1;
	/* each block shows its newest version not dropped, the durable one
	 * (candidate 0) at least */
	for (size_t i = 0; i < m->nblocks; i++) {
		uint32_t pick = m->blocks[i].n - 1;

		while (pick > 0 && d[m->blocks[i].first + pick])
			pick--;
		s->pick[i] = pick;
	}
}

void st_to_drops(const struct md_point *m, const struct md_state *s,
		 uint8_t *drop)
{
	for (size_t k = 0; k < m->ntasks; k++)
		for (uint32_t e = m->tfirst[k]; e < m->tfirst[k + 1]; e++)
			drop[e] = m->tblock[e].ci > s->pick[m->tblock[e].block];
}

/* FNV-1a of the picks (0 is kept for "empty slot"). */
static uint64_t state_hash(const struct md_point *m, const struct md_state *s)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (size_t i = 0; i < m->nblocks; i++) {
		h ^= s->pick[i];
		h *= 0x100000001b3ull;
	}
	return h ? h : 1;
}

/* true when s was listed already; otherwise remembers it. */
static bool seen(struct st_gen *g, const struct md_state *s)
{
	uint64_t h = state_hash(g->m, s);
	size_t i = h & (g->seen_cap - 1);

	while (g->seen[i]) {
		if (g->seen[i] == h)
			return true;
		i = (i + 1) & (g->seen_cap - 1);
	}
	if (g->nseen * 2 >= g->seen_cap)
		return false;	/* full: a repeat may pass (states stay
				 * valid, merely listed twice) */
	g->seen[i] = h;
	g->nseen++;
	return false;
}

static void label_task(const struct md_point *m, size_t k, char *out,
		       size_t len, const char *what)
{
	const struct ch_task *t = task_of(m, k);

	snprintf(out, len, "%s task %" PRIu64 " (opcode 0x%02x, LBA %" PRIu64
		 " +%u)", what, t->id, t->opcode, t->lba, t->blocks);
}

/* The drop set of the current targeted step into g->drop; false when the
 * phase is over (the caller moves on). */
static bool targeted(struct st_gen *g, struct st_info *info)
{
	const struct md_point *m = g->m;
	size_t n = m->ntasks, k = g->k;

	memset(g->drop, 0, nentries(m));
	switch (g->phase) {
	case PH_ALL:
		if (k)
			return false;
		info->origin = ST_ALL;
		snprintf(info->label, sizeof(info->label),
			 "everything written");
		return true;
	case PH_DURABLE:
		if (k)
			return false;
		memset(g->drop, 1, nentries(m));
		info->origin = ST_DURABLE;
		snprintf(info->label, sizeof(info->label), "only the durable");
		return true;
	case PH_DROP_ONE:
		if (k >= n)
			return false;
		memset(g->drop + m->tfirst[k], 1,
		       m->tfirst[k + 1] - m->tfirst[k]);
		info->origin = ST_DROP_ONE;
		label_task(m, k, info->label, sizeof(info->label), "drop");
		return true;
	case PH_PREFIX_ARRIVAL:
	case PH_PREFIX_DONE:
		if (k + 1 >= n)
			return false;
		/* the first k + 1 writes kept, the rest dropped */
		for (size_t r = k + 1; r < n; r++) {
			size_t t = g->phase == PH_PREFIX_DONE ? g->order[r] : r;

			memset(g->drop + m->tfirst[t], 1,
			       m->tfirst[t + 1] - m->tfirst[t]);
		}
		info->origin = g->phase == PH_PREFIX_DONE ? ST_PREFIX_DONE :
							    ST_PREFIX_ARRIVAL;
		snprintf(info->label, sizeof(info->label),
			 "the first %zu of %zu writes in doubt, by %s", k + 1,
			 n, g->phase == PH_PREFIX_DONE ? "completion" :
			 "arrival");
		return true;
	case PH_TORN: {
		size_t t = k / 3, v = k % 3, first, nb;

		if (t >= n)
			return false;
		first = m->tfirst[t];
		nb = m->tfirst[t + 1] - first;
		if (nb < 2) {
			info->label[0] = 0;	/* nothing to tear: skipped */
			return true;
		}
		if (v == 0)		/* only its first block */
			memset(g->drop + first + 1, 1, nb - 1);
		else if (v == 1)	/* all but its first block */
			g->drop[first] = 1;
		else			/* its first half */
			memset(g->drop + first + nb / 2, 1, nb - nb / 2);
		info->origin = ST_TORN;
		label_task(m, t, info->label, sizeof(info->label),
			   v == 0 ? "torn (first block only):" :
			   v == 1 ? "torn (all but the first block):" :
				    "torn (first half):");
		return true;
	}
	}
	return false;
}

/* A random state into s. */
static void random_state(struct st_gen *g, struct md_state *s,
			 struct st_info *info)
{
	const struct md_point *m = g->m;

	info->origin = ST_RANDOM;
	if (g->tried & 1) {	/* block by block */
		for (size_t i = 0; i < m->nblocks; i++)
			s->pick[i] = (uint32_t)(xorshift(&g->rng) %
						m->blocks[i].n);
		snprintf(info->label, sizeof(info->label),
			 "random, block by block (seed %" PRIu64 ")", g->seed);
		return;
	}
	for (size_t k = 0; k < m->ntasks; k++)	/* whole writes */
		memset(g->drop + m->tfirst[k], xorshift(&g->rng) & 1,
		       m->tfirst[k + 1] - m->tfirst[k]);
	st_from_drops(m, g->drop, s);
	snprintf(info->label, sizeof(info->label),
		 "random, whole writes (seed %" PRIu64 ")", g->seed);
}

/* The next exhaustive state: an odometer over the blocks' candidates,
 * everything written first. */
static bool exhaustive(struct st_gen *g, struct md_state *s,
		       struct st_info *info)
{
	const struct md_point *m = g->m;
	size_t i;

	if (g->done_exh)
		return false;
	for (i = 0; i < m->nblocks; i++)
		s->pick[i] = m->blocks[i].n - 1 - g->digit[i];
	for (i = 0; i < m->nblocks; i++) {
		if (++g->digit[i] < m->blocks[i].n)
			break;
		g->digit[i] = 0;
	}
	if (i == m->nblocks)
		g->done_exh = true;
	info->origin = ST_EXHAUSTIVE;
	snprintf(info->label, sizeof(info->label), "exhaustive");
	return true;
}

/* The next candidate (allowed or not, new or not); false at the end. */
static bool candidate(struct st_gen *g, struct md_state *s,
		      struct st_info *info)
{
	if (g->exhaustive)
		return exhaustive(g, s, info);
	while (g->phase < PH_RANDOM) {
		if (targeted(g, info)) {
			g->k++;
			if (!info->label[0])
				continue;	/* a step with nothing to do */
			st_from_drops(g->m, g->drop, s);
			return true;
		}
		g->phase++;
		g->k = 0;
	}
	if (g->tried >= RANDOM_TRIES * g->max || !g->m->nblocks)
		return false;
	random_state(g, s, info);
	g->tried++;
	return true;
}

int st_next(struct st_gen *g, struct md_state *s, struct st_info *info)
{
	while (g->emitted < g->max) {
		memset(info, 0, sizeof(*info));
		if (!candidate(g, s, info))
			return 0;
		if (seen(g, s))
			continue;
		if (!model_allows(g->m, s)) {
			g->skipped_model++;
			continue;
		}
		info->index = g->emitted++;
		return 1;
	}
	return 0;
}

/* ---- descriptions ---------------------------------------------------- */

void st_describe(const struct md_point *m, const uint8_t *drop, FILE *f,
		 bool json, const char *indent)
{
	bool any = false;

	if (json)
		fputc('[', f);
	for (size_t k = 0; k < m->ntasks; k++) {
		const struct ch_task *t = task_of(m, k);
		bool first = true;
		uint64_t run_lo = 0, run_hi = 0;
		bool in_run = false;

		for (uint32_t e = m->tfirst[k]; e <= m->tfirst[k + 1]; e++) {
			bool d = e < m->tfirst[k + 1] && drop[e];
			uint64_t lba = d ? m->blocks[m->tblock[e].block].lba : 0;

			if (d && in_run && lba == run_hi + 1) {
				run_hi = lba;
				continue;
			}
			if (in_run) {	/* end of a run of dropped blocks */
				if (first) {
					if (json)
						fprintf(f, "%s{\"task\": %" PRIu64
							", \"nexus\": %u, \"opcode\": "
							"%u, \"lba\": %" PRIu64
							", \"blocks\": %u, \"dropped\""
							": [", any ? ", " : "", t->id,
							t->nexus, t->opcode, t->lba,
							t->blocks);
					else
						fprintf(f, "%stask %" PRIu64 " (nexus "
							"%u, opcode 0x%02x, LBA %" PRIu64
							" +%u): dropped at", indent,
							t->id, t->nexus, t->opcode,
							t->lba, t->blocks);
					any = true;
				}
				if (json)
					fprintf(f, "%s[%" PRIu64 ", %" PRIu64 "]",
						first ? "" : ", ", run_lo, run_hi);
				else if (run_lo == run_hi)
					fprintf(f, "%s %" PRIu64, first ? "" : ",",
						run_lo);
				else
					fprintf(f, "%s %" PRIu64 "-%" PRIu64,
						first ? "" : ",", run_lo, run_hi);
				first = false;
				in_run = false;
			}
			if (d) {
				in_run = true;
				run_lo = run_hi = lba;
			}
		}
		if (!first)
			fputs(json ? "]}" : "\n", f);
	}
	if (json)
		fputc(']', f);
	else if (!any)
		fprintf(f, "%severything written\n", indent);
}

int st_parse(const struct md_point *m, const char *spec, struct md_state *s,
	     char *err, size_t errlen)
{
	uint8_t *drop;
	const char *p;

	if (!strcmp(spec, "all")) {
		model_all_applied(m, s);
		return 0;
	}
	drop = calloc(nentries(m) + 1, 1);
	if (!drop) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	if (!strcmp(spec, "durable")) {
		memset(drop, 1, nentries(m));
		goto done;
	}
	if (strncmp(spec, "drop:", 5)) {
		snprintf(err, errlen, "state \"%s\": a number, \"all\", "
			 "\"durable\" or \"drop:TASK[:FIRST-LAST],...\"", spec);
		goto bad;
	}
	for (p = spec + 5; *p;) {
		char *end;
		unsigned long long id, lo = 0, hi = UINT64_MAX;
		const struct ch_task *t;
		long k;

		errno = 0;
		id = strtoull(p, &end, 10);
		if (end == p || errno)
			goto syntax;
		if (*end == ':') {
			lo = strtoull(end + 1, &end, 10);
			hi = lo;
			if (*end == '-')
				hi = strtoull(end + 1, &end, 10);
			if (hi < lo)
				goto syntax;
		}
		t = ch_task_by_id(m->h, id);
		k = t ? model_task(m, (uint32_t)(t - m->h->tasks)) : -1;
		if (k < 0) {
			snprintf(err, errlen, "state \"%s\": task %llu has no "
				 "write in doubt at this point", spec, id);
			goto bad;
		}
		for (uint32_t e = m->tfirst[k]; e < m->tfirst[k + 1]; e++) {
			uint64_t lba = m->blocks[m->tblock[e].block].lba;

			if (lba >= lo && lba <= hi)
				drop[e] = 1;
		}
		if (*end == ',')
			end++;
		else if (*end)
			goto syntax;
		p = end;
	}
done:
	st_from_drops(m, drop, s);
	free(drop);
	return 0;
syntax:
	snprintf(err, errlen, "state \"%s\": cannot read it at \"%s\"", spec,
		 p);
bad:
	free(drop);
	return -1;
}
