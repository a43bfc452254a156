/*
 * tcq-bench --check-journal IMAGE|URL: the journal --rw journal left, read
 * from an image file (a crash state of tcq-crash) or a LUN through the
 * engine, judged by journal_check (bench_journal.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include "initiator/bench.h"
#include "initiator/bench_journal.h"
#include "tcq/bufpool.h"

#define READ_CHUNK (1u << 20)
#define MAX_LUN_BYTES (4ull << 30)

static const char *const log_words[] = {
	[JL_PRESENT] = "present", [JL_MISSING] = "missing",
	[JL_TORN] = "torn", [JL_STALE] = "stale",
	[JL_SUPERSEDED] = "superseded",
};

static void print_bad(void *ctx, const struct journal_bad *b)
{
	FILE *f = ctx;

	fprintf(f, "incomplete: txn %" PRIu64 " (run %" PRIu64 ", slot %u, commit at LBA %" PRIu64 "):",
		b->txn, b->run, b->slot, b->commit_lba);
	for (uint32_t i = 0; i < b->k; i++) {
		if (b->state[i] == JL_PRESENT)
			continue;
		fprintf(f, " log %u (LBA %" PRIu64 ") %s", i, b->log_lba[i],
			log_words[b->state[i]]);
		if (b->state[i] == JL_STALE)
			fprintf(f, " (holds txn %" PRIu64 ")", b->stale_txn[i]);
		fputc(';', f);
	}
	fputc('\n', f);
}

/* Completes one synchronous I/O of the engine. */
static void sync_done(struct bench_io *io)
{
	*(bool *)io->ctx = true;
}

/* Reads the whole LUN at url into a buffer; NULL with err filled. */
static uint8_t *read_lun(const struct bench_opts *o, const char *url,
			 uint64_t *size, char *err, size_t errlen)
{
	const struct engine_ops *ops = o->engine;
	struct engine_opts eo = o->eo;
	struct engine *e;
	struct bench_io io;
	uint8_t *img = NULL, *buf = NULL;
	uint32_t lbs;
	bool done;

	eo.queue_depth = 1;
	eo.max_io_bytes = READ_CHUNK;
	e = ops->open(url, &eo, err, errlen);
	if (!e)
		return NULL;
	lbs = ops->block_size(e);
	*size = ops->nblocks(e) * lbs;
	if (*size > MAX_LUN_BYTES) {
		snprintf(err, errlen, "LUN of %" PRIu64 " bytes: at most 4G is read",
			 *size);
		goto out;
	}
	img = malloc(*size ? *size : 1);
	buf = bufpool_alloc(READ_CHUNK);
	if (!img || !buf) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	for (uint64_t off = 0; off < *size; off += READ_CHUNK) {
		uint32_t len = *size - off < READ_CHUNK ?
			       (uint32_t)(*size - off) : READ_CHUNK;
		int rc;

		memset(&io, 0, sizeof(io));
		io.lba = off / lbs;
		io.blocks = len / lbs;
		io.buf = buf;
		io.done = sync_done;
		io.ctx = &done;
		done = false;
		rc = ops->submit(e, &io);
		while (!rc && !done) {
			struct pollfd pfd = { .fd = ops->get_fd(e),
					      .events = ops->events(e) };

			if (poll(&pfd, 1, 1000) < 0 && errno != EINTR)
				rc = -errno;
			else if (ops->service(e, pfd.revents) < 0 && !done)
				rc = -EIO;
		}
		if (rc || io.status) {
			snprintf(err, errlen, "READ at LBA %" PRIu64 " failed (%s)",
				 io.lba, rc ? strerror(-rc) : "SCSI status");
			goto fail;
		}
		memcpy(img + off, buf, len);
	}
	goto out;
fail:
	free(img);
	img = NULL;
out:
	if (buf)
		bufpool_free(buf, READ_CHUNK);
	ops->close(e);
	return img;
}

/* Maps an image file; NULL with err filled. */
static uint8_t *map_file(const char *path, uint64_t *size, char *err,
			 size_t errlen)
{
	struct stat st;
	void *p;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0 || fstat(fd, &st)) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	*size = (uint64_t)st.st_size;
	p = *size ? mmap(NULL, *size, PROT_READ, MAP_PRIVATE, fd, 0) :
		    MAP_FAILED;
	close(fd);
	if (p == MAP_FAILED) {
		snprintf(err, errlen, "%s: %s", path,
			 *size ? strerror(errno) : "empty file");
		return NULL;
	}
	return p;
}

int journal_check_main(const struct bench_opts *o, const char *what)
{
	struct journal_report r;
	bool url = strncmp(what, "iscsi://", 8) == 0;
	uint64_t size = 0;
	uint8_t *img;
	char err[512];
	int rc;

	img = url ? read_lun(o, what, &size, err, sizeof(err)) :
		    map_file(what, &size, err, sizeof(err));
	if (!img) {
		fprintf(stderr, "tcq-bench: --check-journal: %s\n", err);
		return 2;
	}
	rc = journal_check(img, size, &r, print_bad, stdout);
	if (rc == 2) {
		printf("%s: no journal layout found (no journal block in %" PRIu64 " bytes)\n",
		       what, size);
	} else {
		printf("journal: %" PRIu64 " committed transactions found: %" PRIu64
		       " complete, %" PRIu64 " superseded (slot reused), %" PRIu64
		       " incomplete\n", r.committed, r.complete, r.superseded,
		       r.incomplete);
		if (r.ignored)
			printf("journal: %" PRIu64 " torn or corrupt commit blocks ignored (not committed)\n",
			       r.ignored);
	}
	if (url)
		free(img);
	else
		munmap(img, size);
	return rc;
}
