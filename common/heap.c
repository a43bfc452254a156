/* Binary min-heap of intrusive nodes (see heap.h). */
#include <errno.h>
#include <stdlib.h>
#include "tcq/heap.h"

static void put(struct heap *h, int i, struct heap_node *n)
{
	h->a[i] = n;
	n->idx = i;
}

static void sift_up(struct heap *h, int i)
{
	struct heap_node *n = h->a[i];

	while (i > 0) {
		int p = (i - 1) / 2;

		if (h->a[p]->key <= n->key)
			break;
		put(h, i, h->a[p]);
		i = p;
	}
	put(h, i, n);
}

static void sift_down(struct heap *h, int i)
{
	struct heap_node *n = h->a[i];

	for (;;) {
		int c = 2 * i + 1;

		if (c >= h->len)
			break;
		if (c + 1 < h->len && h->a[c + 1]->key < h->a[c]->key)
			c++;
		if (n->key <= h->a[c]->key)
			break;
		put(h, i, h->a[c]);
		i = c;
	}
	put(h, i, n);
}

int heap_push(struct heap *h, struct heap_node *n)
{
	if (h->len == h->cap) {
		int cap = h->cap ? h->cap * 2 : 64;
		struct heap_node **a = realloc(h->a, sizeof(*a) * (size_t)cap);

		if (!a)
			return -ENOMEM;
		h->a = a;
		h->cap = cap;
	}
	put(h, h->len, n);
	sift_up(h, h->len++);
	return 0;
}

void heap_remove(struct heap *h, struct heap_node *n)
{
	int i = n->idx;
	struct heap_node *last = h->a[--h->len];

	n->idx = -1;
	if (i == h->len)
		return;
	put(h, i, last);
	sift_down(h, i);
	sift_up(h, last->idx);
}

struct heap_node *heap_pop(struct heap *h)
{
	struct heap_node *top = heap_top(h);

	if (top)
		heap_remove(h, top);
	return top;
}

void heap_rekey(struct heap *h, struct heap_node *n)
{
	sift_down(h, n->idx);
	sift_up(h, n->idx);
}

void heap_fini(struct heap *h)
{
	for (int i = 0; i < h->len; i++)
		h->a[i]->idx = -1;
	free(h->a);
	h->a = NULL;
	h->len = h->cap = 0;
}
