/* Growing arrays for the crash lab's indexes. */
#ifndef TCQ_CRASH_VEC_H
#define TCQ_CRASH_VEC_H
#include <stdlib.h>
#include <string.h>

/* Room for one more item of size sz at the end of *v (*n items, *cap
 * allocated), which is counted; NULL when out of memory. */
static inline void *vec_grow(void *v, size_t *n, size_t *cap, size_t sz)
{
	void **pv = v;

	if (*n == *cap) {
		size_t nc = *cap ? *cap * 2 : 64;
		void *nv = realloc(*pv, nc * sz);

		if (!nv)
			return NULL;
		*pv = nv;
		*cap = nc;
	}
	return (char *)*pv + (*n)++ * sz;
}

/* Appends the sz bytes at x: 0, or -1 when out of memory. */
static inline int vec_push(void *v, size_t *n, size_t *cap, size_t sz,
			   const void *x)
{
	void *slot = vec_grow(v, n, cap, sz);

	if (!slot)
		return -1;
	memcpy(slot, x, sz);
	return 0;
}
#endif
