/*
 * The flash model of the disk backend (disk_model.c has the interface and
 * the rotating disk; disk_model_priv.h).
 *
 * ---- Flash ------------------------------------------------------------
 *
 * channels x dies (per channel); 4 KiB pages striped over the dies
 * (page p on die p mod (channels*dies), channel = die mod channels).
 *
 * A command first passes the controller: one at a time at most
 * ctrl_iops a second (its ceiling; 0: none), then overhead (the
 * controller's own latency, overlapped between commands). A read holds
 * its die for read_us, then the die's data cross the channel (the bytes
 * the command asked of that page: ONFI's random data out reads a part of
 * the page register), the die held until they have; once every page is
 * in, the data cross the host interface (iface_rate, store and forward).
 * A write crosses the interface first, then each page the channel into
 * its die, which then programs for program_us. A command completes when
 * its last page does; a FLUSH when every die is idle.
 *
 * Each die serves its pages in the order commands reached the drive. A
 * channel and the interface are shared by dies that finish at different
 * times, so each keeps the intervals it is reserved for and a transfer
 * takes the first gap long enough from when its data are ready: a page
 * of an idle die never waits behind one a busy die will send later (no
 * head-of-line blocking). The drive holds at most `queue` commands (its
 * tags); more wait in the host queue.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include "backend/disk_model_priv.h"

/* ---- reserved intervals --------------------------------------------- */

/* Forgets what ended by now (no later request asks before it). */
static void busy_prune(struct dm_busy *b, uint64_t now)
{
	uint32_t k = 0;

	for (uint32_t i = 0; i < b->n; i++)
		if (b->iv[i][1] > now) {
			b->iv[k][0] = b->iv[i][0];
			b->iv[k][1] = b->iv[i][1];
			k++;
		}
	b->n = k;
}

/* Reserves len from the first gap at or after from; returns its start,
 * DM_NONE when out of memory. */
static uint64_t busy_take(struct dm_busy *b, uint64_t from, uint64_t len)
{
	uint64_t s = from;
	uint32_t i;

	for (i = 0; i < b->n; i++) {
		if (b->iv[i][0] >= s + len)
			break;		/* fits before this one */
		if (b->iv[i][1] > s)
			s = b->iv[i][1];
	}
	if (!len)
		return s;
	if (b->n == b->cap) {
		uint32_t cap = b->cap ? 2 * b->cap : 16;
		uint64_t (*iv)[2] = realloc(b->iv, cap * sizeof(*iv));

		if (!iv)
			return DM_NONE;
		b->iv = iv;
		b->cap = cap;
	}
	for (uint32_t j = b->n; j > i; j--) {
		b->iv[j][0] = b->iv[j - 1][0];
		b->iv[j][1] = b->iv[j - 1][1];
	}
	b->iv[i][0] = s;
	b->iv[i][1] = s + len;
	b->n++;
	return s;
}

/* busy_take, or (no memory) the end of the last reservation: later, never
 * earlier, than a gap. */
static uint64_t take(struct dm_busy *b, uint64_t from, uint64_t len)
{
	uint64_t s = busy_take(b, from, len);

	if (s == DM_NONE)
		s = dm_max_u64(from, b->n ? b->iv[b->n - 1][1] : 0);
	return s;
}

static uint64_t ns_for(uint64_t bytes, uint64_t bps)
{
	return (uint64_t)llround((double)bytes * DM_NS / (double)bps);
}

/* ---- service -------------------------------------------------------- */

/* Bytes of page p that [lba, lba+n) covers. */
static uint64_t page_bytes(const struct dm_req *r, uint64_t p)
{
	uint64_t a = r->lba * DM_SECTOR, b = (r->lba + r->nsect) * DM_SECTOR;
	uint64_t ps = p * DM_SSD_PAGE, pe = ps + DM_SSD_PAGE;

	return (b < pe ? b : pe) - (a > ps ? a : ps);
}

/* The pages of r from t1 (data already across the interface for a
 * write); returns when the last is done. */
static uint64_t ssd_pages(struct disk_model *m, struct dm_req *r, uint64_t t1)
{
	uint32_t ndies = m->p.channels * m->p.dies;
	uint64_t first = r->lba * DM_SECTOR / DM_SSD_PAGE;
	uint64_t last = ((r->lba + r->nsect) * DM_SECTOR - 1) / DM_SSD_PAGE;
	uint64_t end = t1;

	for (uint64_t p = first; p <= last; p++) {
		uint32_t g = (uint32_t)(p % ndies), c = g % m->p.channels;
		struct dm_busy *ch = &m->ch_busy[c];
		uint64_t tx = ns_for(page_bytes(r, p), m->p.channel_bps);
		uint64_t s, e;

		if (r->op == DM_READ) {
			s = dm_max_u64(t1, m->die_free[g]);
			e = take(ch, s + m->p.read_ns, tx) + tx;
		} else {
			s = take(ch, dm_max_u64(t1, m->die_free[g]), tx);
			e = s + tx + m->p.program_ns;
		}
		m->die_free[g] = e;
		m->die_busy_ns += (double)(e - s);
		end = dm_max_u64(end, e);
	}
	return end;
}

static void ssd_enter(struct disk_model *m, struct dm_req *r, uint64_t t)
{
	uint32_t ndies = m->p.channels * m->p.dies;
	uint64_t t1 = t, end, bytes = (uint64_t)r->nsect * DM_SECTOR;
	uint64_t ifc = ns_for(bytes, m->p.iface_bps);
	struct list_node *n;

	r->start = t;
	r->media = true;
	for (uint32_t c = 0; c < m->p.channels; c++)
		busy_prune(&m->ch_busy[c], t);
	busy_prune(&m->iface_busy, t);
	if (m->p.ctrl_iops) {	/* the controller's slot, in arrival order */
		t1 = dm_max_u64(t, m->ctrl_free);
		m->ctrl_free = t1 + (uint64_t)llround(DM_NS /
						      (double)m->p.ctrl_iops);
	}
	t1 += m->p.overhead_ns;
	end = t1;
	if (r->op == DM_FLUSH) {
		for (uint32_t g = 0; g < ndies; g++)
			end = dm_max_u64(end, m->die_free[g]);
	} else if (r->op == DM_READ) {
		end = ssd_pages(m, r, t1);
		end = take(&m->iface_busy, end, ifc) + ifc;
	} else if (r->op == DM_WRITE) {
		end = ssd_pages(m, r, take(&m->iface_busy, t1, ifc) + ifc);
	}
	r->done = end;
	/* in flight, by completion time (arrival order among equals) */
	for (n = m->inflight.prev; n != &m->inflight; n = n->prev)
		if (list_entry(n, struct dm_req, node)->done <= end)
			break;
	list_insert_between(&r->node, n, n->next);
}

static void ssd_fill(struct disk_model *m, uint64_t t)
{
	while (m->ndrive < m->p.queue && !list_empty(&m->host)) {
		struct dm_req *r = list_first_entry(&m->host, struct dm_req,
						    node);

		dm_acc(m, t);
		list_del(&r->node);
		m->nhost--;
		r->enter = t;
		m->ndrive++;
		ssd_enter(m, r, t);
	}
}

void dm_ssd_advance(struct disk_model *m, uint64_t now,
			struct list_node *done)
{
	while (!list_empty(&m->inflight)) {
		struct dm_req *r = list_first_entry(&m->inflight, struct dm_req,
						    node);
		uint64_t t = r->done;

		if (t > now)
			break;
		dm_finish(m, r, t, done);
		ssd_fill(m, t);
	}
	ssd_fill(m, now);
}

int dm_ssd_init(struct disk_model *m, char *err, size_t errlen)
{
	const struct dm_params *p = &m->p;
	uint32_t nd = p->channels * p->dies;

	if (!p->channels || !p->dies || !p->channel_bps || !p->queue) {
		snprintf(err, errlen, "disk: channels, dies, "
			 "channel_rate and queue must be above 0");
		return -1;
	}
	m->die_free = calloc(nd, sizeof(uint64_t));
	m->ch_busy = calloc(p->channels, sizeof(*m->ch_busy));
	if (!m->die_free || !m->ch_busy) {
		dm_fini(m);
		snprintf(err, errlen, "disk: out of memory");
		return -1;
	}
	return 0;
}

void dm_ssd_fini(struct disk_model *m)
{
	if (m->ch_busy)
		for (uint32_t c = 0; c < m->p.channels; c++)
			free(m->ch_busy[c].iv);
	free(m->ch_busy);
	free(m->iface_busy.iv);
	free(m->die_free);
	m->ch_busy = NULL;
	m->iface_busy.iv = NULL;
	m->die_free = NULL;
}
