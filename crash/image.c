/* Crash states as disk images over one working image (image.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "crash/image.h"

static int write_all(int fd, const void *buf, size_t len, uint64_t off)
{
	const uint8_t *p = buf;

	while (len) {
		ssize_t n = pwrite(fd, p, len, (off_t)off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= (size_t)n;
		off += (uint64_t)n;
	}
	return 0;
}

/* Bytes [o, end) of in at the same offsets of fd: copy_file_range, else
 * (another file system: EXDEV; or none at all) read and write. */
static int copy_range(int in, int fd, off_t o, off_t end)
{
	static char buf[1 << 16];

	while (o < end) {
		loff_t ri = o, wo = o;
		size_t want = (size_t)(end - o);
		ssize_t n = copy_file_range(in, &ri, fd, &wo, want, 0);

		if (n < 0 && (errno == EXDEV || errno == ENOSYS ||
			      errno == EOPNOTSUPP || errno == EINVAL)) {
			n = pread(in, buf, want < sizeof(buf) ? want :
				  sizeof(buf), o);
			if (n > 0 && write_all(fd, buf, (size_t)n,
					       (uint64_t)o) < 0)
				return -1;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		o += n;
	}
	return 0;
}

/* The base's data extents into fd (its holes stay holes). */
static int copy_base(int fd, const char *path, uint64_t size)
{
	int in = open(path, O_RDONLY | O_CLOEXEC);
	off_t data = 0, hole;
	int rc = 0;

	if (in < 0)
		return -1;
	while ((uint64_t)data < size) {
		data = lseek(in, data, SEEK_DATA);
		if (data < 0) {
			rc = errno == ENXIO ? 0 : -1;	/* no more data */
			break;
		}
		hole = lseek(in, data, SEEK_HOLE);
		if (hole < 0) {
			rc = -1;
			break;
		}
		if (copy_range(in, fd, data, hole) < 0) {
			rc = -1;
			break;
		}
		data = hole;
	}
	close(in);
	return rc;
}

/* Piece p (up to the crash point) written into the image. */
static int apply_piece(struct img *im, const struct ch_piece *p)
{
	struct ch_history *h = (struct ch_history *)im->m->h;
	uint32_t bs = h->rd.hdr.block_size;
	uint64_t off = p->lba * bs, len = (uint64_t)p->blocks * bs;

	switch (p->kind) {
	case REC_W_DATA: {
		uint8_t chunk[1 << 16];

		for (uint64_t done = 0; done < len;) {
			size_t n = len - done < sizeof(chunk) ?
				   (size_t)(len - done) : sizeof(chunk);

			if (rec_read_data(&h->rd, p->data_off + done, chunk, n) ||
			    write_all(im->fd, chunk, n, off + done))
				return -1;
			done += n;
		}
		return 0;
	}
	case REC_W_SAME:
		if (rec_read_data(&h->rd, p->data_off, im->buf, bs))
			return -1;
		for (uint32_t b = 0; b < p->blocks; b++)
			if (write_all(im->fd, im->buf, bs, off + (uint64_t)b * bs))
				return -1;
		return 0;
	default:	/* zeros (UNMAP reads zeros): a hole where it can */
		if (fallocate(im->fd, FALLOC_FL_PUNCH_HOLE |
			      FALLOC_FL_KEEP_SIZE, (off_t)off, (off_t)len) == 0)
			return 0;
		memset(im->buf, 0, bs);
		for (uint32_t b = 0; b < p->blocks; b++)
			if (write_all(im->fd, im->buf, bs, off + (uint64_t)b * bs))
				return -1;
		return 0;
	}
}

int img_create(struct img *im, const struct md_point *m, const char *path,
	       char *err, size_t errlen)
{
	const struct ch_history *h = m->h;
	uint64_t size = h->rd.hdr.nblocks * h->rd.hdr.block_size;

	memset(im, 0, sizeof(*im));
	im->m = m;
	im->fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	im->buf = malloc(h->rd.hdr.block_size);
	im->applied = malloc((m->nblocks + 1) * sizeof(*im->applied));
	if (im->fd < 0 || !im->buf || !im->applied) {
		snprintf(err, errlen, "%s: %s", path,
			 im->fd < 0 ? strerror(errno) : "out of memory");
		goto fail;
	}
	if (ftruncate(im->fd, (off_t)size) < 0 ||
	    (h->base_path[0] && copy_base(im->fd, h->base_path, size) < 0)) {
		snprintf(err, errlen, "%s: copying the base %s: %s", path,
			 h->base_path, strerror(errno));
		goto fail;
	}
	for (size_t i = 0; i < h->npieces && h->pieces[i].seq <= m->c; i++)
		if (!ch_wrote_nothing(h, &h->pieces[i]) &&
		    apply_piece(im, &h->pieces[i]) < 0) {
			snprintf(err, errlen, "%s: writing record %llu: %s",
				 path, (unsigned long long)h->pieces[i].seq,
				 errno ? strerror(errno) : h->rd.err);
			goto fail;
		}
	for (size_t i = 0; i < m->nblocks; i++)
		im->applied[i] = m->blocks[i].n - 1;	/* the newest */
	return 0;
fail:
	img_close(im);
	return -1;
}

int img_show(struct img *im, const struct md_state *s, char *err,
	     size_t errlen)
{
	const struct md_point *m = im->m;
	struct ch_history *h = (struct ch_history *)m->h;
	uint32_t bs = h->rd.hdr.block_size;

	for (size_t i = 0; i < m->nblocks; i++) {
		if (s->pick[i] == im->applied[i])
			continue;
		if (ch_block_data(h, model_shown(m, s, i), m->blocks[i].lba,
				  im->buf) < 0 ||
		    write_all(im->fd, im->buf, bs, m->blocks[i].lba * bs) < 0) {
			snprintf(err, errlen, "block %llu of the image: %s",
				 (unsigned long long)m->blocks[i].lba,
				 errno ? strerror(errno) : "cannot read it");
			return -1;
		}
		im->applied[i] = s->pick[i];
	}
	return 0;	/* a checker reads it through the same page cache */
}

void img_close(struct img *im)
{
	if (im->fd >= 0 && im->m)
		close(im->fd);
	free(im->buf);
	free(im->applied);
	memset(im, 0, sizeof(*im));
	im->fd = -1;
}
