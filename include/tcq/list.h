/* Intrusive circular doubly-linked list: no allocation to queue an object. */
#ifndef TCQ_LIST_H
#define TCQ_LIST_H
#include <stddef.h>
#include <stdbool.h>

struct list_node {
	struct list_node *next, *prev;
};

#define LIST_HEAD_INIT(h) { &(h), &(h) }
#define container_of(ptr, type, member) \
	((type *)((char *)(ptr) - offsetof(type, member)))
#define list_entry(ptr, type, member) container_of(ptr, type, member)
#define list_first_entry(h, type, member) list_entry((h)->next, type, member)

static inline void list_init(struct list_node *h)
{
	h->next = h->prev = h;
}
static inline bool list_empty(const struct list_node *h)
{
	return h->next == h;
}
static inline void list_insert_between(struct list_node *n,
				       struct list_node *prev,
				       struct list_node *next)
{
	next->prev = n;
	n->next = next;
	n->prev = prev;
	prev->next = n;
}
static inline void list_add_tail(struct list_node *n, struct list_node *h)
{
	list_insert_between(n, h->prev, h);
}
static inline void list_add_head(struct list_node *n, struct list_node *h)
{
	list_insert_between(n, h, h->next);
}
/* Removes n and leaves it self-linked, so a second del is harmless. */
static inline void list_del(struct list_node *n)
{
	n->prev->next = n->next;
	n->next->prev = n->prev;
	n->next = n->prev = n;
}
static inline bool list_linked(const struct list_node *n)
{
	return n->next != n;
}
#define list_for_each(pos, h) \
	for ((pos) = (h)->next; (pos) != (h); (pos) = (pos)->next)
#define list_for_each_safe(pos, tmp, h) \
	for ((pos) = (h)->next, (tmp) = (pos)->next; (pos) != (h); \
	     (pos) = (tmp), (tmp) = (pos)->next)
#endif
