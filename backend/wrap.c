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
		w->heap_idx = -1;
	}
	return w;
}

void wrap_io_put(struct wrap_pool *p, struct wrap_io *w)
{
	w->up = NULL;
	w->heap_idx = -1;
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

int wrap_split(const char *opts, char **own, const char **base)
{
	const char *p = opts;
	size_t n;

	*base = "";
	for (;;) {
		if (!strncmp(p, "base=", 5)) {
			*base = p + 5;
			break;
		}
		p = strchr(p, ',');
		if (!p)
			break;
		p++;
	}
	n = (**base) ? (size_t)(*base - 5 - opts) : strlen(opts);
	*own = strndup(opts, n);
	return *own ? 0 : -1;
}

struct bdev *wrap_alloc(const struct bdev_ops *ops, const char *name,
			const char *basespec, const struct bdev_params *p,
			struct bdev **basep, char *err, size_t errlen)
{
	struct bdev_params bp = *p;
	struct bdev *base, *b;
	char sub[200];

	*basep = NULL;
	base = bdev_open(basespec, p, sub, sizeof(sub));
	if (!base) {
		snprintf(err, errlen, "%s: base: %s", name, sub);
		return NULL;
	}
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

int wrap_lba_status(struct bdev *b, uint64_t offset, uint64_t *len,
		    bool *mapped)
{
	struct bdev *base = *(struct bdev **)b->priv;

	return bdev_lba_status(base, offset, len, mapped);
}

bool bdev_spec_uses_path(const char *spec)
{
	static const char *const wrappers[] = { "delay", "fault", "cache" };

	for (;;) {
		const char *colon = strchr(spec, ':'), *opts, *base;
		size_t n = colon ? (size_t)(colon - spec) : strlen(spec);
		bool wrapper = false;
		char *own;

		if (n == 0 || (n == 3 && !strncmp(spec, "aio", 3)))
			return true;
		for (size_t i = 0; i < 3; i++)
			if (strlen(wrappers[i]) == n &&
			    !strncmp(spec, wrappers[i], n))
				wrapper = true;
		if (!wrapper)
			return false;
		opts = colon ? colon + 1 : "";
		if (wrap_split(opts, &own, &base) < 0)
			return false;
		free(own);
		spec = base;	/* "" without base=: aio on the path */
	}
}
