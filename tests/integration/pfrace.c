/*
 * pfrace: a sequential reader and a writer racing it over the same
 * ranges, for prefetch.sh: never a stale read.
 *
 *   pfrace URL CHUNKS ROUNDS
 *
 * Two sessions to the LU (two initiator names, so two I_T nexuses, which
 * tcqd puts on two reactors when it has them). The writer first writes
 * every chunk of 64 KiB of [0, CHUNKS x 64 KiB) with generation 1. Then,
 * ROUNDS times, the reader reads the region from its start in order, one
 * chunk a command, which makes it a stream tcqd reads ahead of; after each
 * read of chunk k, the writer overwrites a chunk 1 to 4 ahead (the range
 * tcqd has read ahead, or is reading ahead) with the next generation, by
 * WRITE(16), or every third time by WRITE SAME(16) of one block, and waits
 * for its GOOD. The reader's next read of that chunk follows the write's
 * completion, so SBC-4 allows it the new data only: every read is checked
 * against what the writer last wrote there.
 *
 * Each 512-byte block holds 64 words of (chunk, generation, block): a
 * WRITE SAME's blocks all hold block 0's. Prints "reads N writes N
 * stale 0" and exits 0, or prints each stale read ("STALE chunk K: byte B
 * holds generation G, expected H") and exits 1; 2 on usage or transport
 * errors.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/integration/iscsiclient.h"

#define BS 512
#define CHUNK (64u << 10)
#define BPC (CHUNK / BS)		/* blocks a chunk */
#define WORD(c, g, b) (((uint64_t)(c) << 40) | ((uint64_t)(g) << 16) | (b))

struct model {
	uint32_t gen;			/* last generation written */
	int same;			/* by WRITE SAME: every block 0's */
};

static void fill(uint64_t *w, uint32_t chunk, const struct model *m)
{
	for (uint32_t b = 0; b < BPC; b++)
		for (uint32_t i = 0; i < BS / 8; i++)
			w[b * (BS / 8) + i] = WORD(chunk, m->gen,
						   m->same ? 0 : b);
}

/* 0, or 1 with the first stale word described. */
static int check(const unsigned char *data, size_t len, uint32_t chunk,
		 const struct model *m, uint64_t *want)
{
	uint64_t got;

	fill(want, chunk, m);
	if (len != CHUNK) {
		printf("SHORT chunk %u: %zu bytes\n", chunk, len);
		return 1;
	}
	for (size_t i = 0; i < CHUNK / 8; i++) {
		memcpy(&got, data + i * 8, 8);
		if (got != want[i]) {
			printf("STALE chunk %u: byte %zu holds generation "
			       "%llu, expected %u\n", chunk, i * 8,
			       (unsigned long long)((got >> 16) & 0xffffff),
			       m->gen);
			return 1;
		}
	}
	return 0;
}

static int write_chunk(struct iscsi_context *w, int lun, uint32_t chunk,
		       struct model *m, uint64_t *buf)
{
	struct scsi_task *t;
	int ok;

	fill(buf, chunk, m);
	if (m->same)
		t = iscsi_writesame16_sync(w, lun, (uint64_t)chunk * BPC,
					   (unsigned char *)buf, BS, BPC, 0, 0,
					   0, 0);
	else
		t = iscsi_write16_sync(w, lun, (uint64_t)chunk * BPC,
				       (unsigned char *)buf, CHUNK, BS, 0, 0,
				       0, 0, 0);
	ok = t && t->status == SCSI_STATUS_GOOD;
	if (!ok) {
		fprintf(stderr, "pfrace: write of chunk %u: %s\n", chunk,
			t ? "not GOOD" : iscsi_get_error(w));
		if (t)
			ic_print_status(t);
	}
	if (t)
		scsi_free_scsi_task(t);
	return ok ? 0 : 2;
}

static int race(struct iscsi_context *r, int rlun, struct iscsi_context *w,
		int wlun, uint32_t chunks, uint32_t rounds, struct model *m,
		uint64_t *buf)
{
	unsigned long reads = 0, writes = 0, stale = 0;
	uint64_t *want = buf + CHUNK / 8;

	for (uint32_t g = 0; g < rounds; g++)
		for (uint32_t k = 0; k < chunks; k++) {
			struct scsi_task *t;
			uint32_t ahead = k + 1 + (k + g) % 4;

			t = iscsi_read16_sync(r, rlun, (uint64_t)k * BPC, CHUNK,
					      BS, 0, 0, 0, 0, 0);
			if (!t || t->status != SCSI_STATUS_GOOD) {
				fprintf(stderr, "pfrace: read of chunk %u: "
					"%s\n", k, t ? "not GOOD" :
					iscsi_get_error(r));
				return 2;
			}
			reads++;
			stale += (unsigned long)check(t->datain.data,
						      (size_t)t->datain.size,
						      k, &m[k], want);
			scsi_free_scsi_task(t);
			if (ahead >= chunks)
				continue;
			m[ahead].gen++;
			m[ahead].same = writes % 3 == 2;
			if (write_chunk(w, wlun, ahead, &m[ahead], buf))
				return 2;
			writes++;
		}
	printf("reads %lu writes %lu stale %lu\n", reads, writes, stale);
	return stale ? 1 : 0;
}

int main(int argc, char **argv)
{
	static const struct ic_opts ro = {
		.prog = "pfrace",
		.initiator = "iqn.2026-11.org.tcq:pfrace-reader",
	}, wo = {
		.prog = "pfrace",
		.initiator = "iqn.2026-11.org.tcq:pfrace-writer",
	};
	struct iscsi_context *r, *w;
	uint32_t chunks, rounds;
	struct model *m;
	uint64_t *buf;
	int rc, rlun, wlun;

	if (argc != 4 || (chunks = (uint32_t)atoi(argv[2])) < 8 ||
	    chunks > 4096 || (rounds = (uint32_t)atoi(argv[3])) < 1) {
		fprintf(stderr, "usage: pfrace URL CHUNKS(8..4096) ROUNDS\n");
		return 2;
	}
	m = calloc(chunks, sizeof(*m));
	buf = malloc(2 * CHUNK);
	if (!m || !buf)
		return 2;
	if ((rc = ic_connect(argv[1], &wo, &w, &wlun)))
		return 2;
	if ((rc = ic_connect(argv[1], &ro, &r, &rlun))) {
		ic_close(w);
		return 2;
	}
	for (uint32_t k = 0; k < chunks && !rc; k++) {
		m[k].gen = 1;
		rc = write_chunk(w, wlun, k, &m[k], buf);
	}
	if (!rc)
		rc = race(r, rlun, w, wlun, chunks, rounds, m, buf);
	ic_close(r);
	ic_close(w);
	free(m);
	free(buf);
	return rc;
}
