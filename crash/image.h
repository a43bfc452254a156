/*
 * Crash states as disk images, without a copy of the LUN per state: one
 * working image per crash point holds everything written up to it (the
 * base, sparse, and every piece in order); a state is that image with its
 * blocks in doubt set to the versions it picks, and put back afterwards.
 * So a state costs its blocks in doubt, not the LUN's size.
 */
#ifndef TCQ_CRASH_IMAGE_H
#define TCQ_CRASH_IMAGE_H
#include <stddef.h>
#include <stdint.h>
#include "crash/model.h"

struct img {
	int fd;
	const struct md_point *m;
	uint8_t *buf;		/* one block */
	uint32_t *applied;	/* per block in doubt: the pick it holds */
};

/* Writes the working image of m's point to path (created or truncated,
 * sparse): 0, or -1 with a message. */
int img_create(struct img *im, const struct md_point *m, const char *path,
	       char *err, size_t errlen);
/* Makes the image show state s (only the blocks that differ are
 * written): 0 or -1. */
int img_show(struct img *im, const struct md_state *s, char *err,
	     size_t errlen);
void img_close(struct img *im);
#endif
