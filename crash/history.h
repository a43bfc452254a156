/*
 * A recording (tcq/rec_format.h) read whole, checked, and indexed for the
 * model: its tasks (what arrived, with which attribute, on which nexus,
 * and how each ended), the pieces they put on the medium, the marks, and
 * every block's versions in the order they were written.
 */
#ifndef TCQ_CRASH_HISTORY_H
#define TCQ_CRASH_HISTORY_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "tcq/rec_format.h"

#define CH_NONE UINT32_MAX	/* no task, no piece: the base version */

struct ch_task {
	uint64_t id;		/* the recording's task number */
	uint32_t nexus;
	uint8_t attr, opcode;
	uint16_t flags;		/* REC_A_* */
	uint64_t lba;
	uint32_t blocks;
	uint64_t arrive;	/* record of its REC_ARRIVE */
	uint64_t done;		/* of its REC_DONE; 0: it never ended */
	uint8_t status;		/* SAM status at done */
	uint8_t key;		/* its sense key (CHECK CONDITION) */
};

struct ch_piece {
	uint32_t task;		/* index into tasks */
	uint64_t seq;		/* its REC_WRITE */
	uint64_t lba;
	uint32_t blocks;
	uint8_t kind;		/* enum rec_wkind */
	uint8_t flags;		/* REC_W_FUA */
	uint64_t data_off;	/* in the recording file */
};

struct ch_mark {
	uint64_t seq;
	char text[REC_NAME_MAX];
};

/* One version of one block: the piece that wrote it (seq order within a
 * block). */
struct ch_version {
	uint64_t lba;
	uint32_t piece;
};

struct ch_history {
	struct rec_reader rd;	/* kept open: the data is read from it */
	char base_path[4096];	/* "" when the base is zeros */
	int base_fd;		/* opened on first use; -1 */
	uint64_t last_seq;
	int end_reason;		/* enum rec_end_reason; -1: no REC_END */
	char end_text[REC_NAME_MAX];
	struct ch_task *tasks;	/* in id order (arrival order) */
	size_t ntasks;
	struct ch_piece *pieces;	/* in seq order */
	size_t npieces;
	struct ch_mark *marks;
	size_t nmarks;
	struct ch_version *versions;	/* by lba, then seq */
	size_t nversions;
	uint32_t nnexus;
	char (*nexus_names)[REC_NAME_MAX];
};

/* Reads and checks path: -1 with a message in err (the record and why). */
int ch_load(struct ch_history *h, const char *path, char *err, size_t errlen);
void ch_free(struct ch_history *h);
/* A piece of a COMPARE AND WRITE that miscompared: it wrote nothing
 * (SBC-4 5.3), whatever it carried. */
bool ch_wrote_nothing(const struct ch_history *h, const struct ch_piece *p);
/* The task of recording id, or NULL. */
const struct ch_task *ch_task_by_id(const struct ch_history *h, uint64_t id);
/* The record a crash point names: a mark's text or number (its last
 * match), "end", or a record number. 0 with a message when it names
 * nothing. */
uint64_t ch_point(const struct ch_history *h, const char *what, char *err,
		  size_t errlen);
/* Reads block lba as written by piece p (CH_NONE: the base) into buf
 * (block_size bytes): 0 or -1. The base file is opened when needed. */
int ch_block_data(struct ch_history *h, uint32_t piece, uint64_t lba,
		  void *buf);
#endif
