/*
 * Shared plumbing of the wrapping backends (see wrap.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "backend/bdev_priv.h"
#include "backend/wrap.h"

void wrap_pool_init(struct wrap_pool *p)
{
	list_init(&p->free);
}

struct wrap_io *wrap_io_get(struct wrap_pool *p)
{
	struct wrap_io *w;

	if (!list_empty(&p->free)) {
		w = list_first_entry(&p->free, struct wrap_io, link);
		list_del(&w->link);
		return w;
	}
	w = calloc(1, sizeof(*w));
	if (w) {
		list_init(&w->link);
		reactor_timer_init(&w->timer, NULL, NULL);
	}
	return w;
}

void wrap_io_put(struct wrap_pool *p, struct wrap_io *w)
{
	w->up = NULL;
	list_add_head(&w->link, &p->free);	/* hot first */
}

void wrap_pool_fini(struct wrap_pool *p)
{
	while (!list_empty(&p->free)) {
		struct wrap_io *w = list_first_entry(&p->free, struct wrap_io,
						     link);

		list_del(&w->link);
		free(w);
	}
}

void wrap_queue_put_base(struct bdev *base, struct bdev_queue *bq,
			 struct reactor *r)
{
	if (bq)
		bdev_queue_put(base, r);
}

/* Opens base and allocates the wrapper bdev over it with the base's
 * geometry and flags. On failure closes base, returns NULL. */
static struct bdev *wrap_alloc(const struct bdev_ops *ops, const char *name,
			       const char *basespec,
			       const struct bdev_params *p,
			       struct bdev **basep, char *err, size_t errlen)
{
	struct bdev_params bp = *p;
	struct bdev *base, *b;
	char sub[200];

	*basep = NULL;
	bp.queue_depth = BDEV_DEPTH_UNBOUNDED;	/* ours is the LUN's */
	base = bdev_open(basespec, &bp, sub, sizeof(sub));
	if (!base) {
		snprintf(err, errlen, "%s: base: %s", name, sub);
		return NULL;
	}
	bp = *p;
	bp.size = base->size;
	bp.block_size = base->block_size;
	b = bdev_alloc(ops, &bp, base->size, err, errlen);
	if (!b) {
		bdev_close(base);
		return NULL;
	}
	b->read_only = p->read_only || base->read_only;
	b->thin = base->thin;
	b->direct = base->direct;
	*basep = base;
	return b;
}

struct bdev *wrap_open(const struct bdev_ops *ops,
			const struct bdev_opts_def *def, size_t priv_size,
			size_t opts_off, const char *opts,
			const struct bdev_params *p, char *err, size_t errlen)
{
	char *priv = calloc(1, priv_size);
	const char *basespec;
	struct bdev *b;

	if (!priv) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	memcpy(priv + opts_off, def->defaults, def->size);
	if (bdev_opts_parse(def, opts, priv + opts_off, &basespec, err,
			    errlen) < 0) {
		free(priv);
		return NULL;
	}
	b = wrap_alloc(ops, def->backend, basespec, p, (struct bdev **)priv,
		       err, errlen);
	if (!b) {
		free(priv);
		return NULL;
	}
	b->priv = priv;
	return b;
}

int wrap_lba_status(struct bdev *b, uint64_t offset, uint64_t *len,
		    bool *mapped)
{
	struct bdev *base = *(struct bdev **)b->priv;

	return bdev_lba_status(base, offset, len, mapped);
}

int wrap_resize(struct bdev *b, uint64_t *size, bool shrink, char *err,
		size_t errlen)
{
	struct bdev *base = *(struct bdev **)b->priv;

	if (!base->ops->resize) {
		snprintf(err, errlen, "the %s backend cannot be resized",
			 base->ops->name);
		return -1;
	}
	if (base->ops->resize(base, size, shrink, err, errlen) < 0)
		return -1;
	bdev_resized(base, *size);	/* no hook: the LUN hooks b */
	return 0;
}

int wrap_read_sync(struct bdev *b, uint64_t off, void *buf, size_t len)
{
	return bdev_read_sync(*(struct bdev **)b->priv, off, buf, len);
}

int wrap_space(struct bdev *b, uint64_t *allocated, uint64_t *available)
{
	struct bdev *base = *(struct bdev **)b->priv;

	return bdev_space(base, allocated, available);
}

bool bdev_spec_uses_path(const char *spec)
{
	for (;;) {
		const char *colon = strchr(spec, ':');
		size_t n = colon ? (size_t)(colon - spec) : strlen(spec);
		const struct bdev_backend *be;

		if (n == 0 || (n == 3 && !strncmp(spec, "aio", 3)))
			return true;
		be = bdev_backend_find(spec, n);
		if (!be || !be->opts->wraps)
			return false;
		/* "" without base=: aio on the path, or the backend's own
		 * default base */
		spec = bdev_opts_base(colon ? colon + 1 : "");
		if (!*spec && be->opts->default_base)
			spec = be->opts->default_base;
	}
}
