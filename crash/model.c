/*
 * The crash lab's model: what a power cut may leave on the medium, from
 * the commands an initiator sent, their task attributes and how they
 * ended, as SBC-4 and SAM-5 define them. This file is the one place the
 * rules live; docs/crash-lab.md quotes them.
 *
 * Durability (SBC-4 4.15 caches; 5.x WRITE with FUA; 5.x SYNCHRONIZE
 * CACHE):
 *  D1 A write that ended GOOD with FUA, or while the write cache was off
 *     (WCE=0, which tcqd turns into FUA to the medium), is durable from
 *     its completion. (The recording says which pieces went with FUA;
 *     with fua = ignore, tcqd sent none: such a device lies, and the
 *     model follows what it did.)
 *  D2 A SYNCHRONIZE CACHE that ended GOOD makes durable every block of
 *     its range written by a write that completed before the SYNCHRONIZE
 *     CACHE was received. One with IMMED=1 promises nothing when it ends,
 *     and one a flush = ignore LUN swallowed promises nothing at all.
 *  D3 Nothing else is durable: a write still running at the crash, or
 *     one that ended in error, may be there in part or not at all.
 *
 * What a block may hold (SBC-4 4.15, SAM-5 5.x; the cache writes blocks
 * back in any order, one block at a time):
 *  B1 the version its last durable point left (or the base, the LUN as it
 *     was when recording began), or any version written to it after that,
 *     whatever the order they were written in;
 *  B2 each block on its own: a write of several blocks may tear at any
 *     block boundary, except WRITE ATOMIC (REC_A_ATOMIC: all or none,
 *     model_allows).
 *
 * The model "ordered" (the 2010 "ORDERED is a barrier" proposal) adds:
 *  O1 no write of an I_T nexus that arrived at or after an ORDERED task of
 *     that nexus (the task itself included) may be on the medium unless
 *     every write of that nexus that arrived before the ORDERED task is
 *     there whole (each of its blocks shows it, or a newer version). An
 *     ORDERED task orders its own nexus' task set (TST=001b).
 * The difference between the two models' state sets is what ORDERED tags
 * would have to guarantee for a stack to drop its cache flushes.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tcq/scsi_proto.h"
#include "crash/model.h"
#include "crash/vec.h"

#define ATTR_ORDERED 2	/* SAM-5 task attribute ORDERED */

/* The SYNCHRONIZE CACHE commands that count (D2) at point c. */
struct sync_ref {
	uint64_t arrive, lo, hi;	/* blocks [lo, hi) */
};

static bool good_by(const struct ch_task *t, uint64_t c)
{
	return t->done && t->done <= c && t->status == SAM_STAT_GOOD;
}

static size_t durable_syncs(const struct ch_history *h, uint64_t c,
			    struct sync_ref **out, uint64_t *all_arrive)
{
	size_t n = 0;

	*out = NULL;
	*all_arrive = 0;
	for (size_t i = 0; i < h->ntasks; i++) {
		const struct ch_task *t = &h->tasks[i];
		uint64_t lo = t->lba, hi;

		if (!(t->flags & REC_A_SYNC) || (t->flags & REC_A_IMMED) ||
		    (t->flags & REC_A_IGNORED) || !good_by(t, c))
			continue;
		hi = t->blocks ? lo + t->blocks : h->rd.hdr.nblocks;
		if (lo == 0 && hi >= h->rd.hdr.nblocks) {
			if (t->arrive > *all_arrive)
				*all_arrive = t->arrive;
			continue;
		}
		struct sync_ref *v = realloc(*out, (n + 1) * sizeof(*v));
		if (!v)
			return SIZE_MAX;
		*out = v;
		v[n].arrive = t->arrive;
		v[n].lo = lo;
		v[n++].hi = hi;
	}
	return n;
}

/* D1, D2: is block lba as written by piece p durable at c? */
static bool durable(const struct ch_history *h, uint64_t c,
		    const struct ch_piece *p, uint64_t lba,
		    const struct sync_ref *s, size_t ns, uint64_t all_arrive)
{
	const struct ch_task *t = &h->tasks[p->task];

	if (!good_by(t, c))
		return false;
	if (p->flags & REC_W_FUA)
		return true;
	if (t->done < all_arrive)
		return true;
	for (size_t i = 0; i < ns; i++)
		if (t->done < s[i].arrive && lba >= s[i].lo && lba < s[i].hi)
			return true;
	return false;
}

/* Blocks in doubt and their candidates (B1). */
static int find_blocks(struct md_point *m, const struct sync_ref *s,
		       size_t ns, uint64_t all_arrive)
{
	const struct ch_history *h = m->h;
	size_t bcap = 0, ccap = 0, i = 0;

	while (i < h->nversions) {
		uint64_t lba = h->versions[i].lba;
		size_t j = i, end, last = SIZE_MAX;

		while (j < h->nversions && h->versions[j].lba == lba &&
		       h->pieces[h->versions[j].piece].seq <= m->c)
			j++;
		end = j;
		while (j < h->nversions && h->versions[j].lba == lba)
			j++;	/* written after the crash point */
		if (end > i)
			m->written_blocks++;
		for (size_t k = end; k-- > i;) {
			if (durable(h, m->c, &h->pieces[h->versions[k].piece],
				    lba, s, ns, all_arrive)) {
				last = k;
				break;
			}
		}
		if (last != SIZE_MAX)
			m->durable_blocks++;
		size_t from = last == SIZE_MAX ? i : last + 1;
		if (end > from) {	/* newer versions than the durable one */
			struct md_block b = { lba, (uint32_t)m->ncand,
					      (uint32_t)(end - from + 1) };

			uint32_t c0 = last == SIZE_MAX ? CH_NONE :
				      h->versions[last].piece;

			if (vec_push(&m->cand, &m->ncand, &ccap,
				     sizeof(*m->cand), &c0) ||
			    vec_push(&m->blocks, &m->nblocks, &bcap,
				     sizeof(*m->blocks), &b))
				return -1;
			for (size_t k = from; k < end; k++)
				if (vec_push(&m->cand, &m->ncand, &ccap,
					     sizeof(*m->cand),
					     &h->versions[k].piece))
					return -1;
			m->log2_states += log2((double)b.n);
		}
		i = j;
	}
	return 0;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* The tasks with a version in doubt, and each one's blocks. */
static int find_tasks(struct md_point *m)
{
	const struct ch_history *h = m->h;
	size_t n = 0, cap = 0, nt = 0;
	uint32_t *all = NULL;
	uint32_t *count;

	for (size_t b = 0; b < m->nblocks; b++)
		for (uint32_t k = 1; k < m->blocks[b].n; k++) {
			uint32_t t = h->pieces[m->cand[m->blocks[b].first +
						       k]].task;
			if (vec_push(&all, &n, &cap, sizeof(*all), &t)) {
				free(all);
				return -1;
			}
		}
	if (n)		/* qsort's base may not be NULL, even for none */
		qsort(all, n, sizeof(*all), cmp_u32);
	for (size_t i = 0; i < n; i++)
		if (!i || all[i] != all[i - 1])
			all[nt++] = all[i];
	m->tasks = all;
	m->ntasks = nt;
	m->tfirst = calloc(nt + 1, sizeof(*m->tfirst));
	count = calloc(nt + 1, sizeof(*count));
	if (!m->tfirst || !count) {
		free(count);
		return -1;
	}
	/* tasks are indices into h->tasks, which is in arrival order */
	for (size_t b = 0; b < m->nblocks; b++)
		for (uint32_t k = 1; k < m->blocks[b].n; k++)
			count[model_task(m, h->pieces[m->cand[
				m->blocks[b].first + k]].task)]++;
	for (size_t i = 0; i < nt; i++)
		m->tfirst[i + 1] = m->tfirst[i] + count[i];
	m->tblock = malloc((m->tfirst[nt] + 1) * sizeof(*m->tblock));
	if (!m->tblock) {
		free(count);
		return -1;
	}
	memset(count, 0, (nt + 1) * sizeof(*count));
	for (size_t b = 0; b < m->nblocks; b++)
		for (uint32_t k = 1; k < m->blocks[b].n; k++) {
			long t = model_task(m, h->pieces[m->cand[
				m->blocks[b].first + k]].task);
			struct md_tblock *e =
				&m->tblock[m->tfirst[t] + count[t]++];

			e->block = (uint32_t)b;
			e->ci = k;
		}
	free(count);
	return 0;
}

/* O1: one barrier per ORDERED task before the crash point whose nexus
 * has writes in doubt on both sides of it. */
static int find_barriers(struct md_point *m)
{
	const struct ch_history *h = m->h;
	size_t bcap = 0, ncap = 0, nbefore = 0;

	for (size_t i = 0; i < h->ntasks; i++) {
		const struct ch_task *o = &h->tasks[i];
		struct md_barrier bar = { o->arrive, (uint32_t)nbefore, 0 };

		if (o->attr != ATTR_ORDERED || o->arrive > m->c)
			continue;
		for (size_t k = 0; k < m->ntasks; k++) {
			const struct ch_task *w = &h->tasks[m->tasks[k]];

			uint32_t ku = (uint32_t)k;

			if (w->nexus != o->nexus || w->arrive >= o->arrive)
				continue;
			if (vec_push(&m->before, &nbefore, &ncap,
				     sizeof(*m->before), &ku))
				return -1;
			bar.n++;
		}
		if (bar.n && vec_push(&m->barriers, &m->nbarriers, &bcap,
				      sizeof(*m->barriers), &bar))
			return -1;
	}
	return 0;
}

int model_point(struct md_point *m, const struct ch_history *h,
		enum model_kind kind, uint64_t c, char *err, size_t errlen)
{
	struct sync_ref *s;
	uint64_t all_arrive;
	size_t ns;

	memset(m, 0, sizeof(*m));
	m->h = h;
	m->kind = kind;
	m->c = c;
	ns = durable_syncs(h, c, &s, &all_arrive);
	if (ns == SIZE_MAX)
		goto oom;
	for (size_t i = 0; i < h->npieces; i++)
		m->pieces += h->pieces[i].seq <= c;
	if (find_blocks(m, s, ns, all_arrive) < 0 || find_tasks(m) < 0 ||
	    (kind == MODEL_ORDERED && find_barriers(m) < 0) ||
	    !(m->scratch = malloc(m->ncand + 1)))
		goto oom;
	free(s);
	return 0;
oom:
	free(s);
	model_point_free(m);
	snprintf(err, errlen, "out of memory computing the crash states");
	return -1;
}

void model_point_free(struct md_point *m)
{
	free(m->blocks);
	free(m->cand);
	free(m->tasks);
	free(m->tfirst);
	free(m->tblock);
	free(m->barriers);
	free(m->before);
	free(m->scratch);
	memset(m, 0, sizeof(*m));
}

void model_all_applied(const struct md_point *m, struct md_state *s)
{
	for (size_t i = 0; i < m->nblocks; i++)
		s->pick[i] = m->blocks[i].n - 1;
}

long model_block(const struct md_point *m, uint64_t lba)
{
	size_t lo = 0, hi = m->nblocks;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (m->blocks[mid].lba < lba)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < m->nblocks && m->blocks[lo].lba == lba ? (long)lo : -1;
}

long model_task(const struct md_point *m, uint32_t ti)
{
	size_t lo = 0, hi = m->ntasks;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (m->tasks[mid] < ti)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < m->ntasks && m->tasks[lo] == ti ? (long)lo : -1;
}

/* Task k (in doubt) shows at one of its blocks at least. */
static bool present(const struct md_point *m, const struct md_state *s,
		    size_t k)
{
	for (uint32_t e = m->tfirst[k]; e < m->tfirst[k + 1]; e++)
		if (s->pick[m->tblock[e].block] == m->tblock[e].ci)
			return true;
	return false;
}

/* Every block of task k shows it or a newer version. */
static bool whole(const struct md_point *m, const struct md_state *s,
		  size_t k)
{
	for (uint32_t e = m->tfirst[k]; e < m->tfirst[k + 1]; e++)
		if (s->pick[m->tblock[e].block] < m->tblock[e].ci)
			return false;
	return true;
}

bool model_allows(const struct md_point *m, const struct md_state *s)
{
	const struct ch_history *h = m->h;

	/* B2: WRITE ATOMIC is all or none, in both models. */
	for (size_t k = 0; k < m->ntasks; k++)
		if ((h->tasks[m->tasks[k]].flags & REC_A_ATOMIC) &&
		    present(m, s, k) && !whole(m, s, k))
			return false;
	if (m->kind != MODEL_ORDERED)
		return true;
	for (size_t b = 0; b < m->nbarriers; b++) {
		const struct md_barrier *bar = &m->barriers[b];
		uint32_t nexus = h->tasks[m->tasks[m->before[bar->first]]].nexus;
		bool after = false;

		for (size_t k = 0; k < m->ntasks && !after; k++) {
			const struct ch_task *x = &h->tasks[m->tasks[k]];

			after = x->nexus == nexus && x->arrive >= bar->arrive &&
				present(m, s, k);
		}
		if (!after)
			continue;
		for (uint32_t i = 0; i < bar->n; i++)
			if (!whole(m, s, m->before[bar->first + i]))
				return false;
	}
	return true;
}
