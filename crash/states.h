/*
 * The crash states of one point, listed in a fixed order (the same
 * recording, model, point, limit and seed give the same list, so a state
 * is named by its index):
 *  - every state, when the model's state space has at most max states
 *    (exhaustive, block by block);
 *  - otherwise the ones that expose missing flushes and barriers first:
 *    everything written; only what is durable; each write in doubt
 *    dropped alone; the prefixes of the writes in doubt by arrival and by
 *    completion (what a log replay gives); each multi-block write torn
 *    (its first block only, all but its first, its first half); then
 *    seeded random states (whole writes dropped, or block by block),
 *    until max states or no new one comes.
 * States the model does not allow are skipped (and counted); a state
 * already listed is not listed again.
 */
#ifndef TCQ_CRASH_STATES_H
#define TCQ_CRASH_STATES_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "crash/model.h"

enum st_origin {
	ST_EXHAUSTIVE,
	ST_ALL,		/* everything written is there */
	ST_DURABLE,	/* only what was durable */
	ST_DROP_ONE,
	ST_PREFIX_ARRIVAL,
	ST_PREFIX_DONE,
	ST_TORN,
	ST_RANDOM,
};

struct st_info {
	size_t index;		/* in the list */
	enum st_origin origin;
	char label[160];
};

struct st_gen {
	const struct md_point *m;
	size_t max;
	uint64_t seed, rng;
	bool exhaustive;
	size_t emitted, skipped_model, tried;
	/* where the generator is */
	int phase;
	size_t k;
	uint32_t *digit;	/* exhaustive: one per block */
	bool done_exh;
	/* a drop set being built: per task in doubt, per its block entry */
	uint8_t *drop;		/* m->tfirst[m->ntasks] entries */
	uint32_t *order;	/* tasks in doubt by completion */
	/* states already listed (their hashes) */
	uint64_t *seen;
	size_t seen_cap, nseen;
};

int st_init(struct st_gen *g, const struct md_point *m, size_t max,
	    uint64_t seed);
void st_free(struct st_gen *g);
/* The next state (into s, whose pick has m->nblocks entries) and what it
 * is: 1, or 0 when the list is over. */
int st_next(struct st_gen *g, struct md_state *s, struct st_info *info);

/* ---- states as drop sets -------------------------------------------- */

/* s from a drop set: drop[e] for each entry e of m->tblock (task k's
 * entries are tfirst[k] .. tfirst[k + 1]); each block shows the newest
 * version not dropped there (the durable one at least). */
void st_from_drops(const struct md_point *m, const uint8_t *drop,
		   struct md_state *s);
/* The drop set of s: the versions newer than what each block shows. */
void st_to_drops(const struct md_point *m, const struct md_state *s,
		 uint8_t *drop);
/* Writes s as the writes it drops, one line each ("task N: OPCODE LBA
 * +BLOCKS, nexus X: dropped at A-B,C"); "everything written" when none.
 * json: as a JSON array of {"task", "nexus", "opcode", "lba", "blocks",
 * "dropped": [[first, last], ...]}. */
void st_describe(const struct md_point *m, const uint8_t *drop, FILE *f,
		 bool json, const char *indent);
/* Parses a state named by "drop:T[:A-B],T..." (T a task number, A-B its
 * blocks; all of its blocks in doubt when no range), "all" or "durable"
 * into s: 0, or -1 with a message. */
int st_parse(const struct md_point *m, const char *spec, struct md_state *s,
	     char *err, size_t errlen);
#endif
