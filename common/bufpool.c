/*
 * Power-of-two size classes from 4 KiB to 16 MiB, each with a per-thread
 * free list threaded through the cached buffers themselves. A buffer freed
 * on another thread simply joins that thread's cache. Caches are capped
 * so a burst of large I/O does not pin memory forever.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include "tcq/bufpool.h"

#define BUFPOOL_MIN_SHIFT 12			/* 4 KiB */
#define BUFPOOL_MAX_SHIFT 24			/* 16 MiB */
#define BUFPOOL_NCLASSES (BUFPOOL_MAX_SHIFT - BUFPOOL_MIN_SHIFT + 1)
#define BUFPOOL_THREAD_CAP (64u << 20)		/* bytes cached per thread */
#define BUFPOOL_CLASS_CAP (32u << 20)		/* ... and per class */

struct bufpool_free_buf {
	struct bufpool_free_buf *next;
};

struct bufpool_cache {
	struct bufpool_free_buf *head[BUFPOOL_NCLASSES];
	size_t bytes[BUFPOOL_NCLASSES];
	size_t total;
	int registered;
};

static __thread struct bufpool_cache tls_cache;

/* Buffers handed out and not yet freed, counted per thread (a buffer
 * freed on another thread counts -1 there: only the sum means anything).
 * Each counter is written by its thread alone, so the data path pays no
 * atomic read-modify-write; counters outlive their threads, in a list
 * bufpool_in_use() sums. */
struct bufpool_count {
	struct bufpool_count *next;
	long in_use;
	long cached;	/* bytes in this thread's free lists */
};
static __thread struct bufpool_count *tls_count;
static struct bufpool_count *all_counts;
static pthread_mutex_t counts_lock = PTHREAD_MUTEX_INITIALIZER;

static struct bufpool_count *thread_count(void)
{
	struct bufpool_count *c = tls_count;

	if (!c) {
		c = calloc(1, sizeof(*c));
		if (!c)
			return NULL;	/* uncounted, never wrong by more */
		pthread_mutex_lock(&counts_lock);
		c->next = all_counts;
		all_counts = c;
		pthread_mutex_unlock(&counts_lock);
		tls_count = c;
	}
	return c;
}

static void count(long d)
{
	struct bufpool_count *c = thread_count();

	if (c)
		__atomic_store_n(&c->in_use, c->in_use + d, __ATOMIC_RELAXED);
}

/* Mirrors tls_cache.total where bufpool_cached_bytes() can read it. */
static void count_cached(void)
{
	struct bufpool_count *c = thread_count();

	if (c)
		__atomic_store_n(&c->cached, (long)tls_cache.total,
				 __ATOMIC_RELAXED);
}

size_t bufpool_cached_bytes(void)
{
	long n = 0;

	pthread_mutex_lock(&counts_lock);
	for (struct bufpool_count *c = all_counts; c; c = c->next)
		n += __atomic_load_n(&c->cached, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&counts_lock);
	return n > 0 ? (size_t)n : 0;
}

long bufpool_in_use(void)
{
	long n = 0;

	pthread_mutex_lock(&counts_lock);
	for (struct bufpool_count *c = all_counts; c; c = c->next)
		n += __atomic_load_n(&c->in_use, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&counts_lock);
	return n;
}
static pthread_key_t bufpool_key;
static pthread_once_t bufpool_once = PTHREAD_ONCE_INIT;

/* Class index for len, or -1 when larger than the largest class. */
static int bufpool_class(size_t len)
{
	int shift;

	if (len <= (1u << BUFPOOL_MIN_SHIFT))
		return 0;
	if (len > (1u << BUFPOOL_MAX_SHIFT))
		return -1;
	/* ceil(log2(len)) */
	shift = 64 - __builtin_clzll((unsigned long long)(len - 1));
	return shift - BUFPOOL_MIN_SHIFT;
}

static void bufpool_thread_exit(void *unused)
{
	bufpool_thread_drain();
}

static void bufpool_make_key(void)
{
	pthread_key_create(&bufpool_key, bufpool_thread_exit);
}

/* Arms the thread-exit hook so a dying thread's cache is released. */
static void bufpool_register(void)
{
	pthread_once(&bufpool_once, bufpool_make_key);
	pthread_setspecific(bufpool_key, &tls_cache);
	tls_cache.registered = 1;
}

void *bufpool_alloc(size_t len)
{
	int c = bufpool_class(len);
	size_t sz;
	void *p;

	if (c >= 0) {
		struct bufpool_free_buf *b = tls_cache.head[c];

		sz = (size_t)1 << (c + BUFPOOL_MIN_SHIFT);
		if (b) {
			tls_cache.head[c] = b->next;
			tls_cache.bytes[c] -= sz;
			tls_cache.total -= sz;
			count(1);
			count_cached();
			return b;
		}
	} else {
		sz = (len + BUFPOOL_ALIGN - 1) & ~(size_t)(BUFPOOL_ALIGN - 1);
	}
	if (posix_memalign(&p, BUFPOOL_ALIGN, sz))
		return NULL;
	count(1);
	return p;
}

void bufpool_free(void *p, size_t len)
{
	int c;
	size_t sz;
	struct bufpool_free_buf *b = p;

	if (!p)
		return;
	count(-1);
	c = bufpool_class(len);
	if (c < 0) {
		free(p);
		return;
	}
	sz = (size_t)1 << (c + BUFPOOL_MIN_SHIFT);
	if (tls_cache.total + sz > BUFPOOL_THREAD_CAP ||
	    (tls_cache.bytes[c] + sz > BUFPOOL_CLASS_CAP &&
	     tls_cache.head[c] != NULL)) {
		free(p);
		return;
	}
	if (!tls_cache.registered)
		bufpool_register();
	b->next = tls_cache.head[c];
	tls_cache.head[c] = b;
	tls_cache.bytes[c] += sz;
	tls_cache.total += sz;
	count_cached();
}

void bufpool_thread_drain(void)
{
	for (int c = 0; c < BUFPOOL_NCLASSES; c++) {
		struct bufpool_free_buf *b = tls_cache.head[c], *next;

		for (; b; b = next) {
			next = b->next;
			free(b);
		}
		tls_cache.head[c] = NULL;
		tls_cache.bytes[c] = 0;
	}
	tls_cache.total = 0;
	count_cached();
}
