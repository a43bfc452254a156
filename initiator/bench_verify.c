/*
 * --verify stamps. Every block a write carries starts with a header
 * (magic, LBA, generation, run id, CRC32C of the whole block) and the rest
 * is a pattern derived from LBA and generation, so a torn, misplaced or
 * stale block is told apart from the right one.
 *
 * The expected generation of each block of the region lives in a compact
 * array (16 bits per block; 0 = not written in this run). I/Os in flight
 * never overlap in verify mode: each takes a per-block lock byte, so the
 * expected content of a block is known exactly when a read completes.
 *
 * A write that failed (its session lost, or an error status) may or may
 * not have reached the medium, block by block: such a block may hold its
 * old or its new generation, and nothing else. alt[] keeps that old one
 * (ALT_FLAG | gen, gen 0 for the content from before the run) from the
 * stamp until the write succeeds; a read that finds one of the two settles
 * the block on it. A block whose ambiguous write is followed by another
 * failed one could hold any of three or more: ALT_ANY, checked for
 * integrity only. Generations run from 1 to GEN_MAX so ALT_ANY stays free.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include "initiator/bench.h"
#include "tcq/crc32c.h"

#define VERIFY_MAGIC 0x5443514256524659ull	/* "TCQBVRFY" */
#define VERIFY_MAX_BLOCKS (128ull << 20)	/* ~640 MiB of state */
#define GEN_MAX 0x7ffeu
#define ALT_FLAG 0x8000u
#define ALT_ANY 0xffffu

struct verify_hdr {
	uint64_t magic;
	uint64_t lba;
	uint32_t gen;
	uint32_t run_id;
	uint32_t crc;
	uint32_t pad;
};

struct bench_verify {
	uint64_t first, nblocks;
	uint32_t block_size, run_id;
	uint16_t *gen;
	uint16_t *alt;		/* 0, ALT_FLAG | old generation, ALT_ANY */
	atomic_uchar *lock;
	/* --verify-journal: gen[] and alt[] live in this file's mapping */
	void *map;
	size_t maplen;
	int fd;
};

/*
 * The journal (--verify-journal FILE): a header, then gen[] and alt[] of
 * every block of the region, mapped shared, so each generation is in the
 * kernel's page cache the moment it is recorded, before the next I/O to
 * the block: a later run (after tcqd crashed or restarted, or tcq-bench
 * was killed) knows what each block must hold. msync at the end makes it
 * durable on the disk too. The run id is kept: blocks stamped by an
 * earlier run of the journal are this run's.
 */
#define JOURNAL_MAGIC 0x4c4e524a56514354ull	/* "TCQVJRNL" */
#define JOURNAL_VERSION 1

struct journal_hdr {
	uint64_t magic;
	uint32_t version, block_size;
	uint64_t first, nblocks;
	uint32_t run_id, pad;
};

static int journal_open(struct bench_verify *v, const char *path,
			char *err, size_t errlen)
{
	size_t len = sizeof(struct journal_hdr) + 4 * (size_t)v->nblocks;
	struct journal_hdr *h;
	struct stat st;
	int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	bool fresh;

	if (fd < 0 || fstat(fd, &st) < 0) {
		snprintf(err, errlen, "--verify-journal %s: %s", path,
			 strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	fresh = st.st_size == 0;
	if (!fresh && (size_t)st.st_size != len) {
		snprintf(err, errlen, "--verify-journal %s: %lld bytes, not a "
			 "journal of this region (%zu bytes)", path,
			 (long long)st.st_size, len);
		close(fd);
		return -1;
	}
	if (fresh && ftruncate(fd, (off_t)len) < 0) {
		snprintf(err, errlen, "--verify-journal %s: %s", path,
			 strerror(errno));
		close(fd);
		return -1;
	}
	h = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (h == MAP_FAILED) {
		snprintf(err, errlen, "--verify-journal %s: mmap: %s", path,
			 strerror(errno));
		close(fd);
		return -1;
	}
	if (fresh) {
		h->magic = JOURNAL_MAGIC;
		h->version = JOURNAL_VERSION;
		h->block_size = v->block_size;
		h->first = v->first;
		h->nblocks = v->nblocks;
		h->run_id = v->run_id;
	} else if (h->magic != JOURNAL_MAGIC || h->version != JOURNAL_VERSION ||
		   h->block_size != v->block_size || h->first != v->first ||
		   h->nblocks != v->nblocks) {
		snprintf(err, errlen, "--verify-journal %s: kept for another "
			 "region or block size (LBA %" PRIu64 " + %" PRIu64
			 " blocks of %u bytes)", path, h->first, h->nblocks,
			 h->block_size);
		munmap(h, len);
		close(fd);
		return -1;
	} else {
		v->run_id = h->run_id;	/* its blocks are this run's */
	}
	v->map = h;
	v->maplen = len;
	v->fd = fd;
	v->gen = (uint16_t *)(h + 1);
	v->alt = v->gen + v->nblocks;
	return 0;
}

struct bench_verify *verify_create(uint64_t first_lba, uint64_t nblocks,
				   uint32_t block_size, uint32_t run_id,
				   const char *journal, char *err,
				   size_t errlen)
{
	struct bench_verify *v;

	if (block_size < sizeof(struct verify_hdr) || block_size % 8) {
		snprintf(err, errlen, "--verify: block size %u unsupported",
			 block_size);
		return NULL;
	}
	if (nblocks > VERIFY_MAX_BLOCKS) {
		snprintf(err, errlen,
			 "--verify: region of %" PRIu64 " blocks is too large "
			 "to track; limit it with --span", nblocks);
		return NULL;
	}
	v = calloc(1, sizeof(*v));
	if (!v) {
		snprintf(err, errlen, "--verify: out of memory");
		return NULL;
	}
	v->fd = -1;
	v->first = first_lba;
	v->nblocks = nblocks;
	v->block_size = block_size;
	v->run_id = run_id;
	/* calloc'd zero pages cost nothing until a block is used */
	v->lock = calloc(nblocks, sizeof(*v->lock));
	if (journal && v->lock) {
		if (journal_open(v, journal, err, errlen) < 0) {
			free((void *)v->lock);
			free(v);
			return NULL;
		}
	} else if (v->lock) {
		v->gen = calloc(nblocks, sizeof(*v->gen));
		v->alt = calloc(nblocks, sizeof(*v->alt));
	}
	if (!v->gen || !v->alt || !v->lock) {
		verify_destroy(v);
		snprintf(err, errlen, "--verify: out of memory");
		return NULL;
	}
	return v;
}

void verify_destroy(struct bench_verify *v)
{
	if (!v)
		return;
	if (v->map) {
		msync(v->map, v->maplen, MS_SYNC);
		munmap(v->map, v->maplen);
		fsync(v->fd);
		close(v->fd);
	} else {
		free(v->gen);
		free(v->alt);
	}
	free((void *)v->lock);
	free(v);
}

bool verify_lock(struct bench_verify *v, uint64_t lba, uint32_t blocks)
{
	uint64_t i, b = lba - v->first;

	for (i = 0; i < blocks; i++) {
		if (atomic_exchange_explicit(&v->lock[b + i], 1,
					     memory_order_acquire)) {
			while (i--)
				atomic_store_explicit(&v->lock[b + i], 0,
						      memory_order_release);
			return false;
		}
	}
	return true;
}

void verify_unlock(struct bench_verify *v, uint64_t lba, uint32_t blocks)
{
	uint64_t i, b = lba - v->first;

	for (i = 0; i < blocks; i++)
		atomic_store_explicit(&v->lock[b + i], 0, memory_order_release);
}

static uint32_t block_crc(const uint8_t *blk, uint32_t block_size)
{
	uint32_t c = 0xffffffffu;

	c = crc32c_update(c, blk, offsetof(struct verify_hdr, crc));
	c = crc32c_update(c, blk + offsetof(struct verify_hdr, pad),
			  block_size - offsetof(struct verify_hdr, pad));
	return ~c;
}

void verify_fill_block(void *blk, uint32_t block_size, uint64_t lba,
		       uint32_t gen, uint32_t run_id)
{
	struct verify_hdr h = {
		.magic = VERIFY_MAGIC, .lba = lba, .gen = gen,
		.run_id = run_id,
	};
	uint64_t *w = (uint64_t *)blk;
	uint64_t x = lba * 0x9e3779b97f4a7c15ull ^ ((uint64_t)gen << 32) ^ run_id;
	uint32_t i;

	for (i = sizeof(h) / 8; i < block_size / 8; i++) {
		x ^= x << 13;	/* xorshift: cheap, never constant */
		x ^= x >> 7;
		x ^= x << 17;
		w[i] = x;
	}
	memcpy(blk, &h, sizeof(h));
	h.crc = block_crc(blk, block_size);
	memcpy(blk, &h, sizeof(h));
}

const char *verify_check_block(const void *blk, uint32_t block_size,
			       uint64_t lba, uint32_t expect_gen,
			       uint32_t *found_gen)
{
	struct verify_hdr h;

	memcpy(&h, blk, sizeof(h));
	*found_gen = 0;
	if (h.magic != VERIFY_MAGIC)
		return expect_gen ? "block not stamped" : NULL;
	*found_gen = h.gen;
	if (h.crc != block_crc(blk, block_size))
		return "checksum mismatch (corrupted block)";
	if (h.lba != lba)
		return "stamp of another LBA (misplaced block)";
	if (expect_gen && h.gen != expect_gen)
		return "stale or unexpected generation";
	return NULL;
}

void verify_stamp(struct bench_verify *v, void *buf, uint64_t lba,
		  uint32_t blocks)
{
	uint32_t i;

	for (i = 0; i < blocks; i++) {
		uint64_t b = lba + i - v->first;
		uint16_t *g = &v->gen[b];

		/* Until it succeeds, the block may keep what it holds now. */
		v->alt[b] = v->alt[b] ? ALT_ANY : (uint16_t)(ALT_FLAG | *g);
		/* 0 means "not written in this run" */
		*g = *g >= GEN_MAX ? 1 : *g + 1;
		verify_fill_block((uint8_t *)buf + (size_t)i * v->block_size,
				  v->block_size, lba + i,
				  *g, v->run_id);
	}
}

void verify_written(struct bench_verify *v, uint64_t lba, uint32_t blocks)
{
	memset(&v->alt[lba - v->first], 0, (size_t)blocks * sizeof(*v->alt));
}

void verify_cancel(struct bench_verify *v, uint64_t lba, uint32_t blocks)
{
	uint32_t i;

	for (i = 0; i < blocks; i++) {
		uint64_t b = lba + i - v->first;

		if (v->alt[b] != ALT_ANY) {	/* else no way back */
			v->gen[b] = v->alt[b] & ~ALT_FLAG;
			v->alt[b] = 0;
		}
	}
}

void verify_forget(struct bench_verify *v, uint64_t lba, uint32_t blocks)
{
	(void)v;	/* alt[] keeps the old generation since the stamp */
	(void)lba;
	(void)blocks;
}

/* Checks one block against the state of a block whose last write failed
 * (alt != 0); on success settles the block on what it holds. */
static const char *check_ambiguous(struct bench_verify *v, const void *blk,
				   uint64_t lba)
{
	uint64_t b = lba - v->first;
	uint16_t alt = v->alt[b], old = alt & ~ALT_FLAG;
	uint32_t found;
	const char *why;
	struct verify_hdr h;

	why = verify_check_block(blk, v->block_size, lba, 0, &found);
	if (why)
		return why;
	memcpy(&h, blk, sizeof(h));
	bool ours = found && h.magic == VERIFY_MAGIC && h.run_id == v->run_id;
	if (alt == ALT_ANY) {
		if (ours) {	/* settled on a generation of this run */
			v->gen[b] = (uint16_t)found;
			v->alt[b] = 0;
		}
		return NULL;
	}
	if (ours && found == v->gen[b]) {	/* the failed write landed */
		v->alt[b] = 0;
		return NULL;
	}
	if (old ? ours && found == old : !ours) {	/* it did not */
		v->gen[b] = old;
		v->alt[b] = 0;
		return NULL;
	}
	return "neither the old nor the new generation of an unacknowledged "
	       "write";
}

uint64_t verify_check(struct bench_verify *v, const void *buf, uint64_t lba,
		      uint32_t blocks,
		      void (*report)(void *ctx, uint64_t lba, const char *why),
		      void *ctx)
{
	uint64_t bad = 0;
	uint32_t i, found;

	for (i = 0; i < blocks; i++) {
		const uint8_t *blk = (const uint8_t *)buf +
				     (size_t)i * v->block_size;
		uint32_t want = v->gen[lba + i - v->first];
		const char *why;
		struct verify_hdr h;

		if (v->alt[lba + i - v->first]) {
			why = check_ambiguous(v, blk, lba + i);
			if (why) {
				bad++;
				if (report)
					report(ctx, lba + i, why);
			}
			continue;
		}
		why = verify_check_block(blk, v->block_size, lba + i, want,
					 &found);
		/* A block of this run must carry this run's id too. */
		if (!why && want) {
			memcpy(&h, blk, sizeof(h));
			if (h.run_id != v->run_id)
				why = "stamp from an earlier run (write lost)";
		}
		if (why) {
			bad++;
			if (report)
				report(ctx, lba + i, why);
		}
	}
	return bad;
}
