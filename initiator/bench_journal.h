/*
 * tcq-bench --rw journal: the on-disk layout of its transactions and the
 * checker of an image (bench_journal.c), the workload (bench_journal_run.c)
 * and --check-journal (bench_journal_check.c).
 *
 * Layout. The region (--offset, --span) is cut into slots of K + 1
 * journal blocks of --bs bytes each: the slot's commit block, then its K
 * log blocks. A transaction takes a free slot, writes its K log blocks
 * there, then its commit block; the slot is taken by a later transaction
 * only once this one has completed, so a log block of a newer transaction
 * over a commit's log means that commit was superseded, never lost.
 *
 * Every 512-byte sector of a journal block starts with a stamp (all
 * big-endian), so a block torn at any sector boundary still tells whose
 * pieces it holds:
 *   0 u32 magic (JOURNAL_LOG_MAGIC or JOURNAL_COMMIT_MAGIC)
 *   4 u32 the sector's index in the block
 *   8 u64 run id (microseconds of the wall clock at the run's start:
 *         a later run has a larger one)
 *  16 u64 transaction number (from 1, in the order transactions start)
 *  24 u32 slot
 *  28 u32 log block index (0 .. K-1; 0xffffffff in a commit block)
 * Sector 0 goes on with the header:
 *  32 u32 version (1)     36 u32 K      40 u32 device block size (bytes)
 *  44 u32 journal block size (bytes)    48 u64 the block's own LBA
 *  56 u32 CRC32C of the whole journal block, this field taken as zero
 *  60 u32 zero
 * A commit block then names its log blocks, 16 bytes each from byte 64:
 *   u64 LBA, u32 the log block's CRC (its header field), u32 zero.
 * Every other byte is a pattern of (run, txn, index, offset), so two
 * versions of a block never agree on their content.
 */
#ifndef TCQ_INITIATOR_BENCH_JOURNAL_H
#define TCQ_INITIATOR_BENCH_JOURNAL_H
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define JOURNAL_LOG_MAGIC 0x4a4c4f47u	/* "JLOG" */
#define JOURNAL_COMMIT_MAGIC 0x4a434d54u	/* "JCMT" */
#define JOURNAL_SECTOR 512u
#define JOURNAL_MAX_K 16u
#define JOURNAL_COMMIT_INDEX 0xffffffffu

/* Where a transaction of slot `slot` lives. */
struct journal_geom {
	uint64_t first_lba;	/* the region's */
	uint32_t lbs;		/* device block size */
	uint32_t bs;		/* journal block size: a multiple of lbs */
	uint32_t k;		/* log blocks per transaction */
	uint64_t nslots;
};

/* Geometry of a region of nlba device blocks; -1 (err filled) when not
 * even one slot fits or the sizes do not agree. */
int journal_geom_init(struct journal_geom *g, uint64_t first_lba,
		      uint64_t nlba, uint32_t lbs, uint32_t bs, uint32_t k,
		      char *err, size_t errlen);
/* LBA of a slot's commit block (index JOURNAL_COMMIT_INDEX) or log block. */
uint64_t journal_lba(const struct journal_geom *g, uint64_t slot,
		     uint32_t index);

/* One journal block's header, as decoded. */
struct journal_hdr {
	uint32_t magic;
	uint64_t run, txn;
	uint32_t slot, index, k, lbs, bs;
	uint64_t lba;
	uint32_t crc;
	/* a commit's log blocks */
	uint64_t log_lba[JOURNAL_MAX_K];
	uint32_t log_crc[JOURNAL_MAX_K];
};

/* Fills blk (g->bs bytes) as log block `index` of (run, txn) in slot;
 * returns its CRC. */
uint32_t journal_encode_log(void *blk, const struct journal_geom *g,
			    uint64_t run, uint64_t txn, uint32_t slot,
			    uint32_t index);
/* Fills blk as the commit block of (run, txn), naming the CRCs of its
 * log blocks (log_crc[0 .. k)); returns its CRC. */
uint32_t journal_encode_commit(void *blk, const struct journal_geom *g,
			       uint64_t run, uint64_t txn, uint32_t slot,
			       const uint32_t *log_crc);
/* Decodes the journal block at byte `off` of an image of `size` bytes:
 * 0 when it is whole (magic, sane header, its own LBA, CRC), else -1. */
int journal_decode(const uint8_t *img, uint64_t size, uint64_t off,
		   struct journal_hdr *h);

/* What became of one log block of a committed transaction. */
enum journal_log_state {
	JL_PRESENT,	/* the block the commit names */
	JL_MISSING,	/* no sector of it there */
	JL_TORN,	/* some sectors of it, not all */
	JL_STALE,	/* a whole log block of an older transaction */
	JL_SUPERSEDED,	/* a newer transaction's: the slot was reused */
};

/* A committed transaction whose log blocks are not all there. */
struct journal_bad {
	uint64_t run, txn, commit_lba;
	uint32_t slot, k;
	uint8_t state[JOURNAL_MAX_K];	/* enum journal_log_state */
	uint64_t log_lba[JOURNAL_MAX_K];
	uint64_t stale_txn[JOURNAL_MAX_K];	/* JL_STALE: whose it is */
};

struct journal_report {
	uint64_t stamps;	/* sectors with a journal stamp */
	uint64_t committed;	/* whole commit blocks */
	uint64_t complete, superseded, incomplete;
	uint64_t ignored;	/* commit blocks torn or corrupt */
};

/*
 * Checks an image: every whole commit block is a committed transaction;
 * it is complete when each of its log blocks holds exactly the block it
 * names, superseded when a newer transaction's log is over any of them
 * (the slot was reused), incomplete otherwise (bad() is called). A
 * commit block that is not whole (torn, garbage) commits nothing.
 * Returns 0 when no transaction is incomplete, 1 when some are, 2 when
 * the image holds no journal stamp at all (no layout).
 */
int journal_check(const uint8_t *img, uint64_t size,
		  struct journal_report *r,
		  void (*bad)(void *ctx, const struct journal_bad *b),
		  void *ctx);

/* ---- bench_journal_check.c: tcq-bench --check-journal IMAGE|URL */
struct bench_opts;
int journal_check_main(const struct bench_opts *o, const char *what);
#endif
