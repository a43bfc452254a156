/* The crash lab's recording file: records in, records out (rec_format.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "tcq/crc32c.h"
#include "tcq/rec_format.h"

/* ---- little-endian fields -------------------------------------------- */

static void le16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

static void le32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static void le64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

static uint64_t get64(const uint8_t *p)
{
	return (uint64_t)get32(p) | (uint64_t)get32(p + 4) << 32;
}

/* A length-prefixed string (at most REC_NAME_MAX - 1 bytes). */
static size_t put_str(uint8_t *p, const char *s)
{
	size_t n = strnlen(s, REC_NAME_MAX - 1);

	le16(p, (uint16_t)n);
	memcpy(p + 2, s, n);
	return 2 + n;
}

/* ---- writing ------------------------------------------------------------ */

size_t rec_put_header(uint8_t *out, size_t cap, const struct rec_header *h)
{
	size_t n = 8 + 4 * 4 + 3 * 8;

	if (cap < REC_HDR_MAX)
		return 0;
	memcpy(out, REC_MAGIC, 8);
	le32(out + 8, REC_VERSION);
	le32(out + 16, h->block_size);
	le32(out + 20, h->flags);
	le64(out + 24, h->nblocks);
	le64(out + 32, h->lun_id);
	le64(out + 40, h->start_ns);
	n += put_str(out + n, h->target);
	n += put_str(out + n, h->base);
	le32(out + 12, (uint32_t)(n + 4));
	le32(out + n, crc32c(out, n));
	return n + 4;
}

/* The 16 bytes every record starts with. */
static void put_fixed(uint8_t *out, uint32_t len, uint8_t type,
		      uint8_t flags, uint64_t seq)
{
	le32(out, len);
	out[4] = type;
	out[5] = flags;
	le16(out + 6, 0);
	le64(out + 8, seq);
}

size_t rec_put(uint8_t *out, size_t cap, const struct rec *r)
{
	uint8_t body[8 + 4 + 4 + 8 + 4 + REC_NAME_MAX + 4];
	size_t n = 0;

	switch (r->type) {
	case REC_NEXUS:
		le32(body, r->u.nexus.nexus);
		n = 4 + put_str(body + 4, r->u.nexus.name);
		break;
	case REC_ARRIVE:
		le64(body, r->u.arrive.task);
		le32(body + 8, r->u.arrive.nexus);
		body[12] = r->u.arrive.attr;
		body[13] = r->u.arrive.opcode;
		le16(body + 14, r->u.arrive.flags);
		le64(body + 16, r->u.arrive.lba);
		le32(body + 24, r->u.arrive.blocks);
		n = 28;
		break;
	case REC_DONE:
		le64(body, r->u.done.task);
		body[8] = r->u.done.status;
		body[9] = r->u.done.key;
		le16(body + 10, r->u.done.asc);
		n = 12;
		break;
	case REC_MARK:
		n = put_str(body, r->u.mark.text);
		break;
	case REC_END:
		body[0] = r->u.end.reason;
		n = 1 + put_str(body + 1, r->u.end.text);
		break;
	default:
		return 0;
	}
	if (cap < REC_FIXED + n + 4)
		return 0;
	put_fixed(out, (uint32_t)(REC_FIXED + n + 4), r->type, r->flags,
		  r->seq);
	memcpy(out + REC_FIXED, body, n);
	le32(out + REC_FIXED + n, crc32c(out, REC_FIXED + n));
	return REC_FIXED + n + 4;
}

#define WRITE_HDR (REC_WRITE_HEAD - REC_FIXED)	/* task, lba, blocks, kind, pad */

size_t rec_write_size(uint32_t data_len)
{
	return REC_FIXED + WRITE_HDR + (size_t)data_len + 4;
}

void rec_write_head(uint8_t *out, uint64_t seq, uint8_t flags,
		    const struct rec_write *w)
{
	uint8_t *p = out + REC_FIXED;

	put_fixed(out, (uint32_t)rec_write_size(w->data_len), REC_WRITE, flags,
		  seq);
	le64(p, w->task);
	le64(p + 8, w->lba);
	le32(p + 16, w->blocks);
	p[20] = w->kind;
	p[21] = 0;
	le16(p + 22, 0);
}

size_t rec_put_write(uint8_t *out, size_t cap, uint64_t seq, uint8_t flags,
		     const struct rec_write *w, const void *data)
{
	size_t n = rec_write_size(w->data_len);
	uint8_t *p = out + REC_FIXED;

	if (cap < n || w->data_len > REC_MAX_DATA)
		return 0;
	rec_write_head(out, seq, flags, w);
	if (w->data_len)
		memcpy(p + WRITE_HDR, data, w->data_len);
	le32(out + n - 4, crc32c(out, n - 4));
	return n;
}

/* ---- reading ------------------------------------------------------------ */

static int fail(struct rec_reader *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int fail(struct rec_reader *r, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(r->err, sizeof(r->err), fmt, ap);
	va_end(ap);
	return -1;
}

static int read_at(struct rec_reader *r, uint64_t off, void *buf, size_t len)
{
	uint8_t *p = buf;

	while (len) {
		ssize_t n = pread(r->fd, p, len, (off_t)off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		off += (uint64_t)n;
		len -= (size_t)n;
	}
	return 0;
}

/* A length-prefixed string at p within end; its length or -1. */
static int get_str(const uint8_t *p, const uint8_t *end, char *out)
{
	uint16_t n;

	if (end - p < 2)
		return -1;
	n = get16(p);
	if (n >= REC_NAME_MAX || end - p - 2 < n)
		return -1;
	memcpy(out, p + 2, n);
	out[n] = 0;
	if (memchr(out, 0, n))
		return -1;	/* a name with a NUL in it */
	return 2 + n;
}

int rec_open(struct rec_reader *r, const char *path)
{
	uint8_t h[REC_HDR_MAX];
	struct stat st;
	uint32_t hl;
	int n;

	memset(r, 0, sizeof(*r));
	r->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (r->fd < 0)
		return fail(r, "%s: %s", path, strerror(errno));
	if (fstat(r->fd, &st) < 0) {
		fail(r, "%s: %s", path, strerror(errno));
		goto bad;
	}
	r->size = (uint64_t)st.st_size;
	if (r->size < 64 || read_at(r, 0, h, 16) < 0 ||
	    memcmp(h, REC_MAGIC, 8)) {
		fail(r, "%s: not a tcq recording (no TCQREC1 header)", path);
		goto bad;
	}
	hl = get32(h + 12);
	if (get32(h + 8) != REC_VERSION) {
		fail(r, "%s: recording version %u, this tcq reads %u", path,
		     get32(h + 8), REC_VERSION);
		goto bad;
	}
	if (hl < 52 || hl > REC_HDR_MAX || hl > r->size ||
	    read_at(r, 0, h, hl) < 0 || crc32c(h, hl - 4) != get32(h + hl - 4)) {
		fail(r, "%s: the header is truncated or corrupt", path);
		goto bad;
	}
	r->hdr.version = REC_VERSION;
	r->hdr.block_size = get32(h + 16);
	r->hdr.flags = get32(h + 20);
	r->hdr.nblocks = get64(h + 24);
	r->hdr.lun_id = get64(h + 32);
	r->hdr.start_ns = get64(h + 40);
	n = get_str(h + 48, h + hl - 4, r->hdr.target);
	if (n < 0 || get_str(h + 48 + n, h + hl - 4, r->hdr.base) < 0) {
		fail(r, "%s: the header's names are malformed", path);
		goto bad;
	}
	if ((r->hdr.block_size != 512 && r->hdr.block_size != 4096) ||
	    !r->hdr.nblocks || r->hdr.nblocks > (UINT64_MAX >> 13)) {
		fail(r, "%s: block size %u, %llu blocks: not a LUN tcq serves",
		     path, r->hdr.block_size,
		     (unsigned long long)r->hdr.nblocks);
		goto bad;
	}
	if (!(r->hdr.flags & REC_HDR_BASE_ZERO) && !r->hdr.base[0]) {
		fail(r, "%s: the header names no base", path);
		goto bad;
	}
	r->pos = hl;
	r->next_seq = 1;
	return 0;
bad:
	close(r->fd);
	r->fd = -1;
	return -1;
}

void rec_close(struct rec_reader *r)
{
	if (r->fd >= 0)
		close(r->fd);
	r->fd = -1;
}

int rec_read_data(struct rec_reader *r, uint64_t off, void *buf, size_t len)
{
	if (off > r->size || len > r->size - off || read_at(r, off, buf, len))
		return fail(r, "data at %llu (%zu bytes) is past the end",
			    (unsigned long long)off, len);
	return 0;
}

/* Checks the CRC of a record too long to hold: its data is read in
 * pieces. */
static int crc_ok(struct rec_reader *r, const uint8_t *head, size_t headlen,
		  uint32_t len)
{
	uint8_t chunk[65536], tail[4];
	uint32_t crc = crc32c_update(0xffffffffu, head, headlen);
	uint64_t off = r->pos + headlen, end = r->pos + len - 4;

	while (off < end) {
		size_t n = end - off < sizeof(chunk) ? end - off : sizeof(chunk);

		if (read_at(r, off, chunk, n) < 0)
			return 0;
		crc = crc32c_update(crc, chunk, n);
		off += n;
	}
	return read_at(r, end, tail, 4) == 0 && get32(tail) == ~crc;
}

static const char *const type_names[REC_TYPE_MAX] = {
	[REC_NEXUS] = "nexus", [REC_ARRIVE] = "arrive", [REC_WRITE] = "write",
	[REC_DONE] = "done", [REC_MARK] = "mark", [REC_END] = "end",
};

const char *rec_type_name(uint8_t type)
{
	return type && type < REC_TYPE_MAX ? type_names[type] : "?";
}

/* The payload of a fixed-size record type into out; -1 when malformed. */
static int parse(struct rec_reader *r, const uint8_t *b, uint32_t len,
		 struct rec *out)
{
	const uint8_t *p = b + REC_FIXED, *end = b + len - 4;
	size_t n = (size_t)(end - p);

	switch (out->type) {
	case REC_NEXUS:
		if (n < 4)
			return -1;
		out->u.nexus.nexus = get32(p);
		return get_str(p + 4, end, out->u.nexus.name) == (int)n - 4 ?
		       0 : -1;
	case REC_ARRIVE:
		if (n != 28)
			return -1;
		out->u.arrive.task = get64(p);
		out->u.arrive.nexus = get32(p + 8);
		out->u.arrive.attr = p[12];
		out->u.arrive.opcode = p[13];
		out->u.arrive.flags = get16(p + 14);
		out->u.arrive.lba = get64(p + 16);
		out->u.arrive.blocks = get32(p + 24);
		return 0;
	case REC_DONE:
		if (n != 12)
			return -1;
		out->u.done.task = get64(p);
		out->u.done.status = p[8];
		out->u.done.key = p[9];
		out->u.done.asc = get16(p + 10);
		return 0;
	case REC_MARK:
		return get_str(p, end, out->u.mark.text) == (int)n ? 0 : -1;
	case REC_END:
		if (n < 1)
			return -1;
		out->u.end.reason = p[0];
		return get_str(p + 1, end, out->u.end.text) == (int)n - 1 ?
		       0 : -1;
	}
	(void)r;
	return -1;
}

/* REC_WRITE: its fixed part, then the data length it must have. */
static int parse_write(struct rec_reader *r, const uint8_t *p, uint32_t len,
		       struct rec *out)
{
	struct rec_write *w = &out->u.write;
	uint64_t want;

	w->task = get64(p);
	w->lba = get64(p + 8);
	w->blocks = get32(p + 16);
	w->kind = p[20];
	w->data_off = r->pos + REC_FIXED + WRITE_HDR;
	w->data_len = len - (REC_FIXED + WRITE_HDR + 4);
	switch (w->kind) {
	case REC_W_DATA:
		want = (uint64_t)w->blocks * r->hdr.block_size;
		break;
	case REC_W_SAME:
		want = r->hdr.block_size;
		break;
	case REC_W_ZERO:
	case REC_W_UNMAP:
		want = 0;
		break;
	default:
		return fail(r, "record %llu (write) of unknown kind %u",
			    (unsigned long long)out->seq, w->kind);
	}
	if (!w->blocks || w->data_len != want || w->lba >= r->hdr.nblocks ||
	    w->blocks > r->hdr.nblocks - w->lba)
		return fail(r, "record %llu (write of %u blocks at %llu) does "
			    "not fit the LUN or its data", (unsigned long long)
			    out->seq, w->blocks, (unsigned long long)w->lba);
	return 0;
}

int rec_next(struct rec_reader *r, struct rec *out)
{
	uint8_t b[REC_FIXED + WRITE_HDR + 4 + REC_NAME_MAX + 64];
	uint32_t len;

	if (r->pos == r->size)
		return 0;
	if (r->size - r->pos < REC_FIXED + 4 ||
	    read_at(r, r->pos, b, REC_FIXED) < 0)
		return fail(r, "truncated record at offset %llu (after record "
			    "%llu)", (unsigned long long)r->pos,
			    (unsigned long long)(r->next_seq - 1));
	len = get32(b);
	memset(out, 0, sizeof(*out));
	out->type = b[4];
	out->flags = b[5];
	out->seq = get64(b + 8);
	out->off = r->pos;
	if (len < REC_FIXED + 4 || len > r->size - r->pos)
		return fail(r, "record at offset %llu claims %u bytes: "
			    "truncated or corrupt", (unsigned long long)r->pos,
			    len);
	if (out->type == 0 || out->type >= REC_TYPE_MAX)
		return fail(r, "record at offset %llu has unknown type %u",
			    (unsigned long long)r->pos, out->type);
	if (out->seq != r->next_seq)
		return fail(r, "record at offset %llu has sequence %llu, "
			    "expected %llu", (unsigned long long)r->pos,
			    (unsigned long long)out->seq,
			    (unsigned long long)r->next_seq);
	if (out->type == REC_WRITE) {
		if (len < REC_FIXED + WRITE_HDR + 4 ||
		    len - (REC_FIXED + WRITE_HDR + 4) > REC_MAX_DATA ||
		    read_at(r, r->pos, b, REC_FIXED + WRITE_HDR) < 0 ||
		    !crc_ok(r, b, REC_FIXED + WRITE_HDR, len))
			return fail(r, "record %llu (write) at offset %llu is "
				    "corrupt (CRC)", (unsigned long long)
				    out->seq, (unsigned long long)r->pos);
		if (parse_write(r, b + REC_FIXED, len, out) < 0)
			return -1;
	} else {
		if (len > sizeof(b) || read_at(r, r->pos, b, len) < 0 ||
		    crc32c(b, len - 4) != get32(b + len - 4))
			return fail(r, "record %llu (%s) at offset %llu is "
				    "corrupt (CRC)", (unsigned long long)
				    out->seq, rec_type_name(out->type),
				    (unsigned long long)r->pos);
		if (parse(r, b, len, out) < 0)
			return fail(r, "record %llu (%s) is malformed",
				    (unsigned long long)out->seq,
				    rec_type_name(out->type));
	}
	r->pos += len;
	r->next_seq++;
	return 1;
}
