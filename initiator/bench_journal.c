/*
 * The journal layout of tcq-bench --rw journal (bench_journal.h defines
 * it byte by byte): its blocks written and read back, and the checker of
 * an image, which needs nothing but the image.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include "initiator/bench_journal.h"
#include "tcq/byteorder.h"
#include "tcq/crc32c.h"

#define HDR_VERSION 1u
#define OFF_CRC 56u
#define OFF_ENTRIES 64u
#define STAMP_LEN 32u

int journal_geom_init(struct journal_geom *g, uint64_t first_lba,
		      uint64_t nlba, uint32_t lbs, uint32_t bs, uint32_t k,
		      char *err, size_t errlen)
{
	uint64_t per_slot;

	memset(g, 0, sizeof(*g));
	if (lbs < JOURNAL_SECTOR || bs % lbs || bs > (1u << 20)) {
		snprintf(err, errlen, "journal: block size %u must be a multiple of the device block size %u (at most 1M)",
			 bs, lbs);
		return -1;
	}
	if (!k || k > JOURNAL_MAX_K) {
		snprintf(err, errlen, "journal: --journal-blocks must be 1..%u",
			 JOURNAL_MAX_K);
		return -1;
	}
	per_slot = (uint64_t)(k + 1) * (bs / lbs);
	g->first_lba = first_lba;
	g->lbs = lbs;
	g->bs = bs;
	g->k = k;
	g->nslots = nlba / per_slot;
	if (!g->nslots) {
		snprintf(err, errlen, "journal: the region holds no slot of %u blocks of %u bytes",
			 k + 1, bs);
		return -1;
	}
	return 0;
}

uint64_t journal_lba(const struct journal_geom *g, uint64_t slot,
		     uint32_t index)
{
	uint64_t bpb = g->bs / g->lbs;
	uint64_t base = g->first_lba + slot * (g->k + 1) * bpb;

	return index == JOURNAL_COMMIT_INDEX ? base : base + (index + 1) * bpb;
}

static uint64_t mix64(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* CRC32C of a journal block with its CRC field taken as zero. */
static uint32_t block_crc(const uint8_t *b, uint32_t bs)
{
	static const uint8_t zero[4];
	uint32_t c = 0xffffffffu;

	c = crc32c_update(c, b, OFF_CRC);
	c = crc32c_update(c, zero, sizeof(zero));
	c = crc32c_update(c, b + OFF_CRC + 4, bs - OFF_CRC - 4);
	return ~c;
}

/* Stamps, header and pattern of a block; the caller adds a commit's
 * entries, then seals it (block_seal). */
static void block_fill(uint8_t *b, const struct journal_geom *g,
		       uint32_t magic, uint64_t run, uint64_t txn,
		       uint32_t slot, uint32_t index, uint64_t lba)
{
	uint64_t seed = mix64(run ^ mix64(txn ^ mix64(index)));

	for (uint32_t s = 0; s < g->bs / JOURNAL_SECTOR; s++) {
		uint8_t *p = b + (size_t)s * JOURNAL_SECTOR;

		put_be32(p, magic);
		put_be32(p + 4, s);
		put_be64(p + 8, run);
		put_be64(p + 16, txn);
		put_be32(p + 24, slot);
		put_be32(p + 28, index);
		for (uint32_t o = STAMP_LEN; o < JOURNAL_SECTOR; o += 8)
			put_be64(p + o, mix64(seed + (uint64_t)s * JOURNAL_SECTOR + o));
	}
	memset(b + STAMP_LEN, 0, OFF_ENTRIES + JOURNAL_MAX_K * 16 - STAMP_LEN);
	put_be32(b + 32, HDR_VERSION);
	put_be32(b + 36, g->k);
	put_be32(b + 40, g->lbs);
	put_be32(b + 44, g->bs);
	put_be64(b + 48, lba);
}

static uint32_t block_seal(uint8_t *b, uint32_t bs)
{
	uint32_t crc = block_crc(b, bs);

	put_be32(b + OFF_CRC, crc);
	return crc;
}

uint32_t journal_encode_log(void *blk, const struct journal_geom *g,
			    uint64_t run, uint64_t txn, uint32_t slot,
			    uint32_t index)
{
	block_fill(blk, g, JOURNAL_LOG_MAGIC, run, txn, slot, index,
		   journal_lba(g, slot, index));
	return block_seal(blk, g->bs);
}

uint32_t journal_encode_commit(void *blk, const struct journal_geom *g,
			       uint64_t run, uint64_t txn, uint32_t slot,
			       const uint32_t *log_crc)
{
	uint8_t *b = blk;

	block_fill(b, g, JOURNAL_COMMIT_MAGIC, run, txn, slot,
		   JOURNAL_COMMIT_INDEX, journal_lba(g, slot,
						     JOURNAL_COMMIT_INDEX));
	for (uint32_t i = 0; i < g->k; i++) {
		put_be64(b + OFF_ENTRIES + 16 * i, journal_lba(g, slot, i));
		put_be32(b + OFF_ENTRIES + 16 * i + 8, log_crc[i]);
	}
	return block_seal(b, g->bs);
}

/* The stamp of the sector at off, or false when it carries none. */
static bool read_stamp(const uint8_t *img, uint64_t size, uint64_t off,
		       struct journal_hdr *h)
{
	const uint8_t *p = img + off;

	if (off + JOURNAL_SECTOR > size)
		return false;
	h->magic = get_be32(p);
	if (h->magic != JOURNAL_LOG_MAGIC && h->magic != JOURNAL_COMMIT_MAGIC)
		return false;
	h->run = get_be64(p + 8);
	h->txn = get_be64(p + 16);
	h->slot = get_be32(p + 24);
	h->index = get_be32(p + 28);
	return true;
}

int journal_decode(const uint8_t *img, uint64_t size, uint64_t off,
		   struct journal_hdr *h)
{
	const uint8_t *p = img + off;

	memset(h, 0, sizeof(*h));
	if (!read_stamp(img, size, off, h) || get_be32(p + 4) != 0 ||
	    get_be32(p + 32) != HDR_VERSION)
		return -1;
	h->k = get_be32(p + 36);
	h->lbs = get_be32(p + 40);
	h->bs = get_be32(p + 44);
	h->lba = get_be64(p + 48);
	h->crc = get_be32(p + OFF_CRC);
	if (!h->k || h->k > JOURNAL_MAX_K || h->lbs < JOURNAL_SECTOR ||
	    h->lbs > 65536 || (h->lbs & (h->lbs - 1)) || h->bs % h->lbs ||
	    h->bs > (1u << 20) || off + h->bs > size ||
	    h->lba != off / h->lbs || off % h->lbs)
		return -1;
	if (h->magic == JOURNAL_COMMIT_MAGIC ?
	    h->index != JOURNAL_COMMIT_INDEX : h->index >= h->k)
		return -1;
	if (block_crc(p, h->bs) != h->crc)
		return -1;
	for (uint32_t i = 0; h->magic == JOURNAL_COMMIT_MAGIC && i < h->k; i++) {
		h->log_lba[i] = get_be64(p + OFF_ENTRIES + 16 * i);
		h->log_crc[i] = get_be32(p + OFF_ENTRIES + 16 * i + 8);
	}
	return 0;
}

static bool newer(uint64_t run, uint64_t txn, const struct journal_hdr *c)
{
	return run > c->run || (run == c->run && txn > c->txn);
}

/* What log block i of commit c is in the image. */
static enum journal_log_state log_state(const uint8_t *img, uint64_t size,
					const struct journal_hdr *c,
					uint32_t i, uint64_t *stale_txn)
{
	struct journal_hdr h;
	uint64_t off = c->log_lba[i] * c->lbs, end = off + c->bs;
	bool some = false;

	if (c->log_lba[i] > size / c->lbs || end > size)
		return JL_MISSING;
	if (journal_decode(img, size, off, &h) == 0 &&
	    h.magic == JOURNAL_LOG_MAGIC) {
		if (h.run == c->run && h.txn == c->txn && h.index == i &&
		    h.slot == c->slot && h.crc == c->log_crc[i])
			return JL_PRESENT;
		if (newer(h.run, h.txn, c))
			return JL_SUPERSEDED;
		*stale_txn = h.txn;
		return JL_STALE;
	}
	/* not whole: whose sectors does it hold? */
	for (; off < end; off += JOURNAL_SECTOR) {
		if (!read_stamp(img, size, off, &h) ||
		    h.magic != JOURNAL_LOG_MAGIC)
			continue;
		if (newer(h.run, h.txn, c))
			return JL_SUPERSEDED;
		if (h.run == c->run && h.txn == c->txn && h.index == i)
			some = true;
	}
	return some ? JL_TORN : JL_MISSING;
}

/* Judges one whole commit block: counts it, reports it when incomplete. */
static void judge(const uint8_t *img, uint64_t size,
		  const struct journal_hdr *c, struct journal_report *r,
		  void (*bad)(void *ctx, const struct journal_bad *b),
		  void *ctx)
{
	struct journal_bad b;
	bool superseded = false, incomplete = false;

	memset(&b, 0, sizeof(b));
	b.run = c->run;
	b.txn = c->txn;
	b.commit_lba = c->lba;
	b.slot = c->slot;
	b.k = c->k;
	for (uint32_t i = 0; i < c->k; i++) {
		b.log_lba[i] = c->log_lba[i];
		b.state[i] = (uint8_t)log_state(img, size, c, i,
						 &b.stale_txn[i]);
		if (b.state[i] == JL_SUPERSEDED)
			superseded = true;
		else if (b.state[i] != JL_PRESENT)
			incomplete = true;
	}
	r->committed++;
	if (superseded) {
		r->superseded++;
	} else if (incomplete) {
		r->incomplete++;
		if (bad)
			bad(ctx, &b);
	} else {
		r->complete++;
	}
}

int journal_check(const uint8_t *img, uint64_t size,
		  struct journal_report *r,
		  void (*bad)(void *ctx, const struct journal_bad *b),
		  void *ctx)
{
	struct journal_hdr h;

	memset(r, 0, sizeof(*r));
	for (uint64_t off = 0; off + JOURNAL_SECTOR <= size;
	     off += JOURNAL_SECTOR) {
		if (!read_stamp(img, size, off, &h))
			continue;
		r->stamps++;
		if (h.magic != JOURNAL_COMMIT_MAGIC ||
		    get_be32(img + off + 4) != 0)
			continue;
		if (journal_decode(img, size, off, &h) == 0)
			judge(img, size, &h, r, bad, ctx);
		else
			r->ignored++;
	}
	if (!r->stamps)
		return 2;
	return r->incomplete ? 1 : 0;
}
