/*
 * Helpers for backends that wrap another backend (delay, fault, cache):
 * opening the base with the LUN's parameters, a pool of per-I/O wrappers
 * (no malloc per command once warm) and a seeded PRNG. Their options,
 * base= included, go through bdev_opts_parse. Private to backend/.
 *
 * Spec syntax: "NAME:opt=v,...,base=BASESPEC". base= must come last and
 * takes the rest of the string, commas included, so wrappers nest:
 * "delay:latency=1ms,base=fault:lba=0-7,base=ram:size=64M". Without
 * base= the base is the LUN's path through aio.
 */
#ifndef TCQ_BACKEND_WRAP_H
#define TCQ_BACKEND_WRAP_H
#include <stddef.h>
#include <stdint.h>
#include "backend/bdev.h"
#include "tcq/reactor.h"
#include "backend/bdev_opts.h"

/* A bdev_io the wrapper sends to its base on behalf of an upper one. */
struct wrap_io {
	struct bdev_io bio;	/* goes to the base */
	struct bdev_io *up;	/* the I/O we were given */
	struct list_node link;	/* pool free list / backend lists */
	struct reactor_timer timer;	/* delay: the end of its service */
	uint64_t seq;		/* cache: order of arrival */
};

struct wrap_pool {
	struct list_node free;
};

void wrap_pool_init(struct wrap_pool *p);
/* A zeroed-enough wrapper; NULL only when out of memory. */
struct wrap_io *wrap_io_get(struct wrap_pool *p);
void wrap_io_put(struct wrap_pool *p, struct wrap_io *w);
void wrap_pool_fini(struct wrap_pool *p);

/*
 * From a wrapper's queue_fini (on r, or with r idle): closes the base's
 * queue of r too (bq, NULL if none was made). A base's queue may hold r's
 * timers or fds, which only r's thread may touch, while bdev_close of the
 * whole stack may run on another reactor (a LUN removed live is destroyed
 * on reactor 0). A base queue still busy is left to bdev_close.
 */
void wrap_queue_put_base(struct bdev *base, struct bdev_queue *bq,
			 struct reactor *r);

/*
 * Opens a wrapper: its private state (priv_size bytes, zeroed, starting
 * with the struct bdev * of its base) gets the options at opts_off, from
 * def's defaults and opts; then the base opens with the LUN's parameters
 * and the wrapper bdev takes the base's geometry and flags, with b->priv
 * the state. NULL with err written (nothing left open).
 */
struct bdev *wrap_open(const struct bdev_ops *ops,
		       const struct bdev_opts_def *def, size_t priv_size,
		       size_t opts_off, const char *opts,
		       const struct bdev_params *p, char *err, size_t errlen);

/* Forwards GET LBA STATUS to the base (b->priv must start with it). */
int wrap_lba_status(struct bdev *b, uint64_t offset, uint64_t *len,
		    bool *mapped);
/* Forwards a resize to the base (b->priv must start with it). */
int wrap_resize(struct bdev *b, uint64_t *size, bool shrink, char *err,
		size_t errlen);

/* Forwards the allocation query to the base (bdev_space). */
int wrap_space(struct bdev *b, uint64_t *allocated, uint64_t *available);
int wrap_read_sync(struct bdev *b, uint64_t off, void *buf, size_t len);

/* splitmix64: small, seedable, good enough for test distributions. */
static inline uint64_t wrap_rand(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* Uniform in [0, 1). */
static inline double wrap_rand01(uint64_t *s)
{
	return (double)(wrap_rand(s) >> 11) * (1.0 / 9007199254740992.0);
}
#endif
