/* What the recorder's files share (record.c, record_start.c). */
#ifndef TCQ_RECORD_PRIV_H
#define TCQ_RECORD_PRIV_H
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "tcq/rec_format.h"

struct lun;

/* The ring starts at RING_START bytes: one that the data path laps every
 * few periods of the writer stays in the CPU's caches and TLB, where a
 * 64 MiB one cost every copy into it a miss (docs/crash-lab.md, "What
 * recording costs"). It grows, up to RING_MAX, for a record that does
 * not fit (a large write): twice that record. */
#define RING_START (4u << 20)
#define RING_MAX (64u << 20)	/* bytes waiting for the writer, at most */
#define RING_ALIGN 4096		/* the writer's O_DIRECT unit */
#define NEXUS_MAX 1024

struct recorder {
	pthread_mutex_t lock;
	pthread_cond_t cond;	/* the writer waits for bytes; stop for it */
	pthread_cond_t room;	/* the data path waits for room in the ring */
	unsigned waiters;	/* ... this many */
	bool active;		/* records are taken */
	bool writer_running;	/* its thread has not finished */
	int fd;
	bool direct;		/* fd is O_DIRECT: whole RING_ALIGN blocks */
	uint64_t file_off;	/* where the ring's tail goes in the file */
	char path[4096];
	uint64_t seq, next_task, bytes, records, max;
	uint64_t full_total;
	char ended[160];
	uint8_t *ring;		/* [tail, tail + len) waits, modulo cap */
	size_t cap, tail, len;
	size_t limit;		/* cap may grow up to this */
	size_t want;		/* > cap: the data path needs a ring this
				 * big; the writer makes it (record_grow) */
	size_t wake;		/* this many bytes waiting wake the writer */
	size_t sealed;		/* [tail, tail + sealed) has its CRCs: the
				 * writer's, which alone moves tail and this */
	bool draining;		/* no more records: write what is left */
	bool sleeping;		/* the writer waits for a signal, not a
				 * timer: the first bytes wake it */
	const void *nexus[NEXUS_MAX];	/* a recorded nexus' number */
	uint32_t nnexus;
	uint8_t *scratch;	/* one record, encoded */
	size_t scratch_cap;
};

/* The writer thread (arg: the LUN); it ends once draining and empty. */
void *record_writer_main(void *arg);
void record_wait_writer_locked(struct recorder *r);
/* Ends the recording with REC_END (lock held): no record is taken after. */
void record_end_locked(struct lun *l, struct recorder *r, uint8_t reason,
		       const char *why);
/* A record of fixed size, its seq filled in: false when it could not be
 * taken (the recording ended, or no memory). Lock held. */
bool record_put_locked(struct lun *l, struct recorder *r, struct rec *x);
#endif
