/*
 * Page-aligned I/O buffers (O_DIRECT-safe) from per-thread free lists of
 * power-of-two size classes: no malloc and no lock per command on the
 * data path. A buffer must be freed with the length it was allocated with.
 */
#ifndef TCQ_BUFPOOL_H
#define TCQ_BUFPOOL_H
#include <stddef.h>
#define BUFPOOL_ALIGN 4096
void *bufpool_alloc(size_t len);
void bufpool_free(void *p, size_t len);
/* Buffers allocated and not yet freed, over every thread (a snapshot:
 * 0 when nothing holds one; tcqctl stats shows it). */
long bufpool_in_use(void);
/* Bytes held in the per-thread free lists, over every thread: memory
 * the process keeps on purpose (capped per thread), not a leak. */
size_t bufpool_cached_bytes(void);
/* Frees the calling thread's cached buffers (thread exit, tests). */
void bufpool_thread_drain(void);
#endif
