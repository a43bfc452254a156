/*
 * Running a user's checkers on crash states, and shrinking a failing
 * state to the fewest dropped writes that still fail (delta debugging,
 * Zeller's ddmin over the writes the state drops, each with the blocks it
 * drops there).
 */
#ifndef TCQ_CRASH_CHECK_H
#define TCQ_CRASH_CHECK_H
#include <stdbool.h>
#include <stddef.h>
#include "crash/image.h"
#include "crash/states.h"

#define CHECK_MAX_CMDS 8

struct checker {
	const char *cmds[CHECK_MAX_CMDS];	/* with {image}, {mark}, {point},
						 * {state} in them */
	int ncmds;
	const char *image_path;
	const char *mark;		/* the crash point's mark, or "" */
	bool verbose;			/* show the commands' output */
	unsigned runs;			/* commands run so far */
};

/* Shows s in the image and runs every command: 0 all passed, 1 one
 * failed (*which says which), -1 could not run (err). */
int check_state(struct checker *ck, struct img *im, const struct md_state *s,
		size_t index, int *which, char *err, size_t errlen);
/*
 * Shrinks the failing state's drop set (drop, m->tfirst[m->ntasks]
 * entries) in place to a 1-minimal one: dropping any one write fewer
 * makes the checkers pass (or the model forbid it). Returns the states
 * tried, or -1 (err).
 */
long check_minimize(struct checker *ck, struct img *im,
		    const struct md_point *m, uint8_t *drop, char *err,
		    size_t errlen);
#endif
