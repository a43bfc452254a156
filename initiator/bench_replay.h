/*
 * --replay's trace, as bench_replay.c reads it and bench_replay_run.c
 * sends it: every I/O with its time, in the trace's order.
 */
#ifndef TCQ_BENCH_REPLAY_H
#define TCQ_BENCH_REPLAY_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum replay_op { RP_READ, RP_WRITE, RP_FLUSH };

struct replay_io {
	uint64_t t_ns;		/* from the trace's start */
	uint64_t off;		/* bytes */
	uint32_t len;		/* bytes; 0 for RP_FLUSH */
	uint8_t op;		/* enum replay_op */
	bool fua;		/* blkparse: FUA in RWBS */
	bool preflush;		/* blkparse: F first in RWBS: flush before */
	unsigned line;		/* of the trace, for messages */
};

struct replay_trace {
	const char *format;	/* "fio iolog v2", "fio iolog v3", "blkparse" */
	struct replay_io *ios;
	size_t n, cap;
	uint64_t discards;	/* trims and discards: not sent */
	uint64_t reads, writes, fua, flushes;	/* flushes incl. preflushes */
	uint32_t max_len;
};

/* Reads path (the format from its first line): 0, or -1 with err
 * naming the file and line. */
int replay_load(const char *path, struct replay_trace *tr, char *err,
		size_t errlen);
void replay_free(struct replay_trace *tr);
/* Checks every I/O, moved by shift bytes, against a LUN of nblocks
 * blocks of block_size: aligned, and not past the end. 0, or -1 with
 * err naming the first I/O that is not. */
int replay_check(const struct replay_trace *tr, const char *path,
		 uint64_t shift, uint32_t block_size, uint64_t nblocks,
		 char *err, size_t errlen);
#endif
