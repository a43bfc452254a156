/* A recording read whole and indexed (history.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "crash/history.h"
#include "crash/vec.h"

static int task_index(const struct ch_history *h, uint64_t id)
{
	size_t lo = 0, hi = h->ntasks;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (h->tasks[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < h->ntasks && h->tasks[lo].id == id ? (int)lo : -1;
}

const struct ch_task *ch_task_by_id(const struct ch_history *h, uint64_t id)
{
	int i = task_index(h, id);

	return i < 0 ? NULL : &h->tasks[i];
}

struct loader {
	struct ch_history *h;
	size_t tcap, pcap, mcap;
	char *err;
	size_t errlen;
};

static int bad(struct loader *L, const struct rec *r, const char *why)
{
	snprintf(L->err, L->errlen, "record %llu (%s): %s",
		 (unsigned long long)r->seq, rec_type_name(r->type), why);
	return -1;
}

/* One record into the history; -1 when it contradicts what came before. */
static int take(struct loader *L, const struct rec *r)
{
	struct ch_history *h = L->h;
	struct ch_task *t;
	struct ch_piece *p;
	struct ch_mark *m;
	int ti;

	if (h->end_reason >= 0)
		return bad(L, r, "a record after the end");
	switch (r->type) {
	case REC_NEXUS:
		if (r->u.nexus.nexus != h->nnexus)
			return bad(L, r, "nexus numbers out of order");
		{
			void *nv = realloc(h->nexus_names, (h->nnexus + 1) *
					   sizeof(*h->nexus_names));
			if (!nv)
				return bad(L, r, "out of memory");
			h->nexus_names = nv;
		}
		memcpy(h->nexus_names[h->nnexus++], r->u.nexus.name,
		       REC_NAME_MAX);
		return 0;
	case REC_ARRIVE:
		if (h->ntasks && r->u.arrive.task <= h->tasks[h->ntasks - 1].id)
			return bad(L, r, "task numbers out of order");
		if (r->u.arrive.nexus >= h->nnexus)
			return bad(L, r, "an unknown nexus");
		if ((r->u.arrive.flags & REC_A_WRITE) &&
		    (r->u.arrive.lba > h->rd.hdr.nblocks ||
		     r->u.arrive.blocks > h->rd.hdr.nblocks - r->u.arrive.lba))
			return bad(L, r, "a write past the end of the LUN");
		t = vec_grow(&h->tasks, &h->ntasks, &L->tcap, sizeof(*t));
		if (!t)
			return bad(L, r, "out of memory");
		memset(t, 0, sizeof(*t));
		t->id = r->u.arrive.task;
		t->nexus = r->u.arrive.nexus;
		t->attr = r->u.arrive.attr;
		t->opcode = r->u.arrive.opcode;
		t->flags = r->u.arrive.flags;
		t->lba = r->u.arrive.lba;
		t->blocks = r->u.arrive.blocks;
		t->arrive = r->seq;
		return 0;
	case REC_WRITE:
		ti = task_index(h, r->u.write.task);
		if (ti < 0 || !(h->tasks[ti].flags & REC_A_WRITE))
			return bad(L, r, "a write of no recorded writing task");
		if (h->tasks[ti].done)
			return bad(L, r, "a write after its task ended");
		p = vec_grow(&h->pieces, &h->npieces, &L->pcap,
			 sizeof(*p));
		if (!p)
			return bad(L, r, "out of memory");
		p->task = (uint32_t)ti;
		p->seq = r->seq;
		p->lba = r->u.write.lba;
		p->blocks = r->u.write.blocks;
		p->kind = r->u.write.kind;
		p->flags = r->flags;
		p->data_off = r->u.write.data_off;
		return 0;
	case REC_DONE:
		ti = task_index(h, r->u.done.task);
		if (ti < 0)
			return bad(L, r, "the end of a task that never arrived");
		if (h->tasks[ti].done)
			return bad(L, r, "a task that ended twice");
		h->tasks[ti].done = r->seq;
		h->tasks[ti].status = r->u.done.status;
		h->tasks[ti].key = r->u.done.key;
		return 0;
	case REC_MARK:
		m = vec_grow(&h->marks, &h->nmarks, &L->mcap, sizeof(*m));
		if (!m)
			return bad(L, r, "out of memory");
		m->seq = r->seq;
		memcpy(m->text, r->u.mark.text, REC_NAME_MAX);
		return 0;
	case REC_END:
		h->end_reason = r->u.end.reason;
		memcpy(h->end_text, r->u.end.text, REC_NAME_MAX);
		return 0;
	}
	return bad(L, r, "unknown type");
}

static int cmp_version(const void *a, const void *b)
{
	const struct ch_version *x = a, *y = b;

	if (x->lba != y->lba)
		return x->lba < y->lba ? -1 : 1;
	return x->piece < y->piece ? -1 : x->piece > y->piece;
}

#define SK_MISCOMPARE 0x0e

bool ch_wrote_nothing(const struct ch_history *h, const struct ch_piece *p)
{
	const struct ch_task *t = &h->tasks[p->task];

	return t->done && t->key == SK_MISCOMPARE;
}

/* Every block of every piece, by block then write order. */
static int index_versions(struct ch_history *h, char *err, size_t errlen)
{
	size_t n = 0, k = 0;

	for (size_t i = 0; i < h->npieces; i++)
		if (!ch_wrote_nothing(h, &h->pieces[i]))
			n += h->pieces[i].blocks;
	h->versions = n ? malloc(n * sizeof(*h->versions)) : NULL;
	if (n && !h->versions) {
		snprintf(err, errlen, "out of memory (%zu block versions)", n);
		return -1;
	}
	for (size_t i = 0; i < h->npieces; i++)
		for (uint32_t b = 0; !ch_wrote_nothing(h, &h->pieces[i]) &&
		     b < h->pieces[i].blocks; b++) {
			h->versions[k].lba = h->pieces[i].lba + b;
			h->versions[k++].piece = (uint32_t)i;
		}
	h->nversions = n;
	/* pieces are in seq order, so piece index order is write order */
	if (n)		/* no versions: versions is NULL, which qsort may not get */
		qsort(h->versions, n, sizeof(*h->versions), cmp_version);
	return 0;
}

/* The base file, named relative to the recording's directory. */
static int find_base(struct ch_history *h, const char *path, char *err,
		     size_t errlen)
{
	const char *slash = strrchr(path, '/');
	struct stat st;
	int n;

	h->base_path[0] = 0;
	if (h->rd.hdr.flags & REC_HDR_BASE_ZERO)
		return 0;
	if (strchr(h->rd.hdr.base, '/')) {
		snprintf(err, errlen, "%s: its base \"%s\" is not a plain file "
			 "name", path, h->rd.hdr.base);
		return -1;
	}
	n = snprintf(h->base_path, sizeof(h->base_path), "%.*s%s",
		     slash ? (int)(slash - path + 1) : 0, path,
		     h->rd.hdr.base);
	if (n < 0 || (size_t)n >= sizeof(h->base_path)) {
		snprintf(err, errlen, "%s: path too long", path);
		return -1;
	}
	if (stat(h->base_path, &st) < 0) {
		snprintf(err, errlen, "%s: its base %s: %s", path, h->base_path,
			 strerror(errno));
		return -1;
	}
	if ((uint64_t)st.st_size != h->rd.hdr.nblocks * h->rd.hdr.block_size) {
		snprintf(err, errlen, "%s: its base %s has %llu bytes, the LUN "
			 "%llu: another LUN's", path, h->base_path,
			 (unsigned long long)st.st_size,
			 (unsigned long long)(h->rd.hdr.nblocks *
					      h->rd.hdr.block_size));
		return -1;
	}
	return 0;
}

int ch_load(struct ch_history *h, const char *path, char *err, size_t errlen)
{
	struct loader L = { .h = h, .err = err, .errlen = errlen };
	struct rec r;
	int rc;

	memset(h, 0, sizeof(*h));
	h->end_reason = -1;
	h->base_fd = -1;
	if (rec_open(&h->rd, path) < 0) {
		snprintf(err, errlen, "%s", h->rd.err);
		return -1;
	}
	while ((rc = rec_next(&h->rd, &r)) > 0) {
		if (take(&L, &r) < 0) {
			char why[300];

			snprintf(why, sizeof(why), "%s", err);
			snprintf(err, errlen, "%s: %s", path, why);
			goto fail;
		}
		h->last_seq = r.seq;
	}
	if (rc < 0) {
		snprintf(err, errlen, "%s: %s", path, h->rd.err);
		goto fail;
	}
	if (find_base(h, path, err, errlen) < 0 ||
	    index_versions(h, err, errlen) < 0)
		goto fail;
	return 0;
fail:
	ch_free(h);
	return -1;
}

void ch_free(struct ch_history *h)
{
	rec_close(&h->rd);
	if (h->base_fd >= 0)
		close(h->base_fd);
	free(h->tasks);
	free(h->pieces);
	free(h->marks);
	free(h->versions);
	free(h->nexus_names);
	memset(h, 0, sizeof(*h));
	h->base_fd = -1;
}

uint64_t ch_point(const struct ch_history *h, const char *what, char *err,
		  size_t errlen)
{
	char *end;
	unsigned long long v;

	if (!what || !strcmp(what, "end"))
		return h->last_seq;
	for (size_t i = h->nmarks; i-- > 0;)
		if (!strcmp(h->marks[i].text, what))
			return h->marks[i].seq;
	v = strtoull(what, &end, 10);
	if (*what && !*end && v >= 1 && v <= h->last_seq)
		return v;
	snprintf(err, errlen, "\"%s\" is no mark of the recording (%zu marks) "
		 "and no record number 1..%llu", what, h->nmarks,
		 (unsigned long long)h->last_seq);
	return 0;
}

int ch_block_data(struct ch_history *h, uint32_t piece, uint64_t lba,
		  void *buf)
{
	uint32_t bs = h->rd.hdr.block_size;
	const struct ch_piece *p;

	if (piece == CH_NONE) {
		ssize_t n;

		if (!h->base_path[0]) {
			memset(buf, 0, bs);
			return 0;
		}
		if (h->base_fd < 0 &&
		    (h->base_fd = open(h->base_path, O_RDONLY | O_CLOEXEC)) < 0)
			return -1;
		n = pread(h->base_fd, buf, bs, (off_t)(lba * bs));
		return n == (ssize_t)bs ? 0 : -1;
	}
	p = &h->pieces[piece];
	switch (p->kind) {
	case REC_W_DATA:
		return rec_read_data(&h->rd, p->data_off + (lba - p->lba) * bs,
				     buf, bs);
	case REC_W_SAME:
		return rec_read_data(&h->rd, p->data_off, buf, bs);
	default:	/* zeros, deallocated (LBPRZ: reads zeros) */
		memset(buf, 0, bs);
		return 0;
	}
}
