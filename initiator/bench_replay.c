/*
 * --replay: reads a trace into the I/Os to send, in order, with their
 * times. Formats (the first line tells):
 *
 *  - fio iolog v2 (fio's HOWTO, "Trace file format v2"): "fio version 2
 *    iolog", then "FILE add|open|close" and "FILE ACTION OFFSET LENGTH"
 *    with ACTION read, write, sync, datasync, trim or wait (wait: OFFSET
 *    microseconds after the previous wait; under 100 discarded, as fio);
 *  - fio iolog v3: "fio version 3 iolog", each line led by its time in
 *    microseconds from the start (what fio's write_iolog writes), no wait;
 *  - blkparse's default text output ("MAJ,MIN CPU SEQ SECS.NSECS PID ACT
 *    RWBS SECTOR + COUNT [PROC]"): the Q (queued) events, as fio's
 *    blktrace replay takes them, sectors of 512 bytes. RWBS (the kernel's
 *    blk_fill_rwbs): a leading F is a flush before the request (REQ_PREFLUSH),
 *    then R read, W write, D discard (DE secure erase), F a flush alone,
 *    N nothing; an F after that is FUA. Summary lines (CPU0 ..., Total
 *    ...) end the events.
 *
 * One file or device per trace (it becomes the LUN); sync and datasync,
 * preflushes and flushes become SYNCHRONIZE CACHE (bench_replay_run.c);
 * trims and discards are counted, not sent.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "initiator/bench_replay.h"

#define LINE_MAX_LEN 1024

struct rp_ctx {
	struct replay_trace *tr;
	const char *path;
	unsigned line;
	char file[LINE_MAX_LEN];	/* the one file (iolog) or device */
	uint64_t t_ns;			/* v2: the sum of the waits */
	bool have_t0;
	double t0;			/* blkparse: the first event's time */
	char *err;
	size_t errlen;
};

static int rp_bad(struct rp_ctx *c, const char *why)
{
	snprintf(c->err, c->errlen, "%s:%u: %s", c->path, c->line, why);
	return -1;
}

static int rp_add(struct rp_ctx *c, const struct replay_io *io)
{
	struct replay_trace *tr = c->tr;

	if (tr->n == tr->cap) {
		size_t cap = tr->cap ? tr->cap * 2 : 1024;
		struct replay_io *n = realloc(tr->ios, cap * sizeof(*n));

		if (!n)
			return rp_bad(c, "out of memory");
		tr->ios = n;
		tr->cap = cap;
	}
	tr->ios[tr->n] = *io;
	tr->ios[tr->n].line = c->line;
	tr->n++;
	if (io->op == RP_READ)
		tr->reads++;
	else if (io->op == RP_WRITE)
		tr->writes++;
	if (io->op == RP_FLUSH || io->preflush)
		tr->flushes++;
	tr->fua += io->fua;
	if (io->len > tr->max_len)
		tr->max_len = io->len;
	return 0;
}

/* The trace's one file: the first named; another is refused. */
static int rp_file(struct rp_ctx *c, const char *name)
{
	if (!c->file[0])
		snprintf(c->file, sizeof(c->file), "%s", name);
	else if (strcmp(c->file, name))
		return rp_bad(c, "a second file or device in the trace (tcq-bench replays one onto the LUN)");
	return 0;
}

/* "FILE ACTION [OFFSET LENGTH]" of an iolog, after v3's time. */
static int rp_iolog_action(struct rp_ctx *c, const char *rest, bool v3)
{
	char file[LINE_MAX_LEN], act[32];
	unsigned long long off = 0, len = 0;
	struct replay_io io = { .t_ns = c->t_ns };
	int n = sscanf(rest, "%1023s %31s %llu %llu", file, act, &off, &len);

	if (n < 2)
		return rp_bad(c, "FILE ACTION [OFFSET LENGTH] expected");
	if (rp_file(c, file))
		return -1;
	if (n == 2) {
		if (strcmp(act, "add") && strcmp(act, "open") &&
		    strcmp(act, "close"))
			return rp_bad(c, "unknown file action (add, open or close expected)");
		return 0;
	}
	if (n != 4)
		return rp_bad(c, "FILE ACTION OFFSET LENGTH expected");
	if (!strcmp(act, "wait")) {
		if (v3)
			return rp_bad(c, "wait in a version 3 iolog (its times say it)");
		if (off >= 100)	/* as fio: shorter waits are discarded */
			c->t_ns += off * 1000;
		return 0;
	}
	if (!strcmp(act, "sync") || !strcmp(act, "datasync")) {
		io.op = RP_FLUSH;
		return rp_add(c, &io);
	}
	if (!strcmp(act, "trim")) {
		c->tr->discards++;
		return 0;
	}
	if (strcmp(act, "read") && strcmp(act, "write"))
		return rp_bad(c, "unknown action (read, write, sync, datasync, trim or wait expected)");
	if (!len || len > UINT32_MAX)
		return rp_bad(c, "I/O length 0 or over 4 GiB");
	io.op = act[0] == 'r' ? RP_READ : RP_WRITE;
	io.off = off;
	io.len = (uint32_t)len;
	return rp_add(c, &io);
}

static int rp_iolog_line(struct rp_ctx *c, const char *s, bool v3)
{
	unsigned long long us;
	char *end;

	if (!v3)
		return rp_iolog_action(c, s, false);
	errno = 0;
	us = strtoull(s, &end, 10);
	if (errno || end == s || (*end != ' ' && *end != '\t'))
		return rp_bad(c, "a time in microseconds expected first (fio version 3 iolog)");
	if (us > UINT64_MAX / 1000)
		return rp_bad(c, "time out of range");
	c->t_ns = us * 1000;
	return rp_iolog_action(c, end, true);
}

/* RWBS into io: op, FUA, preflush. 0, 1 for a request with nothing to
 * send (N without a flush), -1 for one not known. *discard: D. Old
 * kernels' B (barrier: a flush before, the write with FUA) is taken so. */
static int rp_rwbs(const char *s, struct replay_io *io, bool *discard)
{
	size_t i = 0, j;

	*discard = false;
	if (s[0] == 'F' && s[1] && strchr("RWDFN", s[1])) {
		io->preflush = true;
		i = 1;
	}
	switch (s[i]) {
	case 'R': io->op = RP_READ; break;
	case 'W': io->op = RP_WRITE; break;
	case 'F': io->op = RP_FLUSH; break;
	case 'D': *discard = true; break;
	case 'N': io->op = RP_FLUSH; break;
	default: return -1;
	}
	for (j = i + 1; s[j]; j++)
		if (!strchr("FASMEB", s[j]))
			return -1;
	io->fua = strchr(s + i + 1, 'F') != NULL;
	if (strchr(s + i + 1, 'B') && io->op == RP_WRITE)
		io->preflush = io->fua = true;
	return s[i] == 'N' && !io->preflush ? 1 : 0;
}

static int rp_blkparse_line(struct rp_ctx *c, const char *s)
{
	unsigned maj, mn, cpu, pid;
	unsigned long long seq, sector = 0, count = 0;
	char act[8], rwbs[16], dev[32];
	double ts;
	struct replay_io io = { 0 };
	bool discard;
	int n, rc;

	n = sscanf(s, "%u,%u %u %llu %lf %u %7s %15s %llu + %llu", &maj, &mn,
		   &cpu, &seq, &ts, &pid, act, rwbs, &sector, &count);
	if (n < 8)
		return 1;	/* not an event: a summary, the end */
	if (strcmp(act, "Q"))
		return 0;	/* fio replays the queue events only */
	snprintf(dev, sizeof(dev), "%u,%u", maj, mn);
	if (rp_file(c, dev))
		return -1;
	if (!c->have_t0) {
		c->have_t0 = true;
		c->t0 = ts;
	}
	io.t_ns = ts > c->t0 ? (uint64_t)((ts - c->t0) * 1e9 + 0.5) : 0;
	rc = rp_rwbs(rwbs, &io, &discard);
	if (rc < 0)
		return rp_bad(c, "unknown RWBS (the kernel's R, W, D, F, N with F, A, S, M)");
	if (discard) {
		c->tr->discards++;
		return 0;
	}
	if (rc > 0)
		return 0;	/* N: no data, no flush */
	if (io.op != RP_FLUSH && (n != 10 || !count)) {
		/* a data-less write with a preflush: the flush alone */
		if (!io.preflush)
			return rp_bad(c, "SECTOR + COUNT expected");
		io.op = RP_FLUSH;
	}
	if (io.op == RP_FLUSH) {
		io.preflush = false;
		io.fua = false;
	} else {
		if (count > UINT32_MAX / 512 || sector > UINT64_MAX / 512)
			return rp_bad(c, "I/O out of range");
		io.off = sector * 512;
		io.len = (uint32_t)(count * 512);
	}
	return rp_add(c, &io);
}

int replay_load(const char *path, struct replay_trace *tr, char *err,
		size_t errlen)
{
	struct rp_ctx c = { .tr = tr, .path = path, .err = err,
			    .errlen = errlen };
	char buf[LINE_MAX_LEN + 2];
	FILE *f = fopen(path, "r");
	int kind = -1, rc = 0;	/* 2, 3: iolog; 0: blkparse */

	memset(tr, 0, sizeof(*tr));
	if (!f) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	while (rc >= 0 && fgets(buf, sizeof(buf), f)) {
		size_t len = strlen(buf);

		c.line++;
		if (len && buf[len - 1] == '\n')
			buf[--len] = 0;
		else if (!feof(f)) {
			rc = rp_bad(&c, "line too long");
			break;
		}
		if (kind < 0) {
			kind = !strcmp(buf, "fio version 2 iolog") ? 2 :
			       !strcmp(buf, "fio version 3 iolog") ? 3 : 0;
			tr->format = kind == 2 ? "fio iolog v2" :
				     kind == 3 ? "fio iolog v3" : "blkparse";
			if (kind)
				continue;
		}
		if (!buf[strspn(buf, " \t")])
			continue;
		if (kind)
			rc = rp_iolog_line(&c, buf, kind == 3);
		else if ((rc = rp_blkparse_line(&c, buf)) > 0)
			break;	/* blkparse's summary: no more events */
	}
	fclose(f);
	if (rc >= 0 && !tr->n) {
		snprintf(err, errlen, "%s: no I/O in the trace (a fio iolog v2 or v3, or blkparse's text output expected)",
			 path);
		rc = -1;
	}
	if (rc < 0)
		replay_free(tr);
	return rc < 0 ? -1 : 0;
}

void replay_free(struct replay_trace *tr)
{
	free(tr->ios);
	tr->ios = NULL;
	tr->n = tr->cap = 0;
}

int replay_check(const struct replay_trace *tr, const char *path,
		 uint64_t shift, uint32_t block_size, uint64_t nblocks,
		 char *err, size_t errlen)
{
	uint64_t size = nblocks * block_size;

	for (size_t i = 0; i < tr->n; i++) {
		const struct replay_io *io = &tr->ios[i];

		if (io->op == RP_FLUSH)
			continue;
		if ((io->off + shift) % block_size || io->len % block_size) {
			snprintf(err, errlen, "%s:%u: I/O of %u bytes at byte %" PRIu64 " is not in whole blocks of the LUN (%u bytes)",
				 path, io->line, io->len, io->off + shift,
				 block_size);
			return -1;
		}
		if (io->off + shift > size || io->len > size - io->off - shift) {
			snprintf(err, errlen, "%s:%u: I/O of %u bytes at byte %" PRIu64 " ends past the LUN's end (%" PRIu64 " bytes); nothing was sent",
				 path, io->line, io->len, io->off + shift, size);
			return -1;
		}
	}
	return 0;
}
