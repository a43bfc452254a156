/*
 * What a crash may leave on the medium, at one point of a recording: the
 * crash lab's model of SBC-4 and SAM-5, in one place (model.c says the
 * rules and where they come from).
 *
 * At crash point c (the state after record c), each block written before
 * c has a list of candidate versions, oldest first: the version its last
 * durable point left (a piece, or the base), then every version written to
 * it since. A block with one candidate is certain; the others are "in
 * doubt". A crash state picks one candidate per block in doubt. The
 * model "ordered" also forbids some combinations (model_allows).
 */
#ifndef TCQ_CRASH_MODEL_H
#define TCQ_CRASH_MODEL_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "crash/history.h"

enum model_kind {
	MODEL_SBC,	/* what SBC-4 and SAM-5 promise */
	MODEL_ORDERED,	/* and an ORDERED task is a durability barrier */
};

/* A block in doubt and its candidates: cand[first .. first + n). */
struct md_block {
	uint64_t lba;
	uint32_t first, n;
};

/* An ORDERED task's rule: if a write that arrived at or after it is
 * present, every write of before[first .. first + n) is present whole. */
struct md_barrier {
	uint64_t arrive;	/* of the ORDERED task */
	uint32_t first, n;	/* into before[] (in-doubt task indices) */
};

struct md_point {
	const struct ch_history *h;
	enum model_kind kind;
	uint64_t c;			/* the crash point: a record number */
	struct md_block *blocks;	/* in doubt, by lba */
	size_t nblocks;
	uint32_t *cand;			/* piece indices (CH_NONE: the base) */
	size_t ncand;
	uint8_t *scratch;		/* ncand bytes for the state code */
	/* Tasks with a version in doubt, by arrival, and for each its
	 * blocks in doubt (tblock[tfirst[i] .. tfirst[i + 1]), indices
	 * into blocks). */
	uint32_t *tasks;		/* indices into h->tasks */
	size_t ntasks;
	uint32_t *tfirst;		/* ntasks + 1 */
	struct md_tblock { uint32_t block, ci; } *tblock;	/* the block in
					 * doubt and the task's candidate there */
	/* The ordered model's barriers. */
	struct md_barrier *barriers;
	size_t nbarriers;
	uint32_t *before;
	/* Counts for reports. */
	uint64_t pieces, durable_blocks, written_blocks;
	double log2_states;		/* of the block-level state space */
};

/* A state: the candidate each block in doubt shows (an index into its
 * candidates; n - 1 is the newest). */
struct md_state {
	uint32_t *pick;			/* nblocks */
};

int model_point(struct md_point *m, const struct ch_history *h,
		enum model_kind kind, uint64_t c, char *err, size_t errlen);
void model_point_free(struct md_point *m);
/* The newest candidate everywhere: everything that was written is there. */
void model_all_applied(const struct md_point *m, struct md_state *s);
/* The piece block i shows in s (CH_NONE: the base). */
static inline uint32_t model_shown(const struct md_point *m,
				   const struct md_state *s, size_t i)
{
	return m->cand[m->blocks[i].first + s->pick[i]];
}
/* Whether the model allows s (always under MODEL_SBC). */
bool model_allows(const struct md_point *m, const struct md_state *s);
/* Index of block lba among the blocks in doubt, or -1. */
long model_block(const struct md_point *m, uint64_t lba);
/* Index of task ti (into h->tasks) among the tasks in doubt, or -1. */
long model_task(const struct md_point *m, uint32_t ti);
#endif
