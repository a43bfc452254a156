/*
 * A binary min-heap of intrusive nodes keyed by a 64-bit value (a
 * deadline): the reactor's timers and the delay backend's service times.
 * The node records its index, so an element is removed or re-keyed in
 * O(log n) without a search. Not thread-safe: one owner (a reactor).
 */
#ifndef TCQ_HEAP_H
#define TCQ_HEAP_H
#include <stdbool.h>
#include <stdint.h>

struct heap_node {
	uint64_t key;
	int idx;		/* -1 when not in a heap */
};

struct heap {
	struct heap_node **a;
	int len, cap;
};

static inline void heap_node_init(struct heap_node *n)
{
	n->idx = -1;
}
static inline bool heap_node_queued(const struct heap_node *n)
{
	return n->idx >= 0;
}
/* The smallest key's node, or NULL when empty. */
static inline struct heap_node *heap_top(const struct heap *h)
{
	return h->len ? h->a[0] : NULL;
}

/* Inserts n (not queued) with its key; 0, or -ENOMEM and n unqueued. */
int heap_push(struct heap *h, struct heap_node *n);
/* Removes a queued node. */
void heap_remove(struct heap *h, struct heap_node *n);
/* Removes and returns the top node; NULL when empty. */
struct heap_node *heap_pop(struct heap *h);
/* A queued node's key changed: restores the order. */
void heap_rekey(struct heap *h, struct heap_node *n);
/* Unqueues every node and frees the array. */
void heap_fini(struct heap *h);
#endif
