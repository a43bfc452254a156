/*
 * The text of Login and Text PDUs (RFC 7143 section 6.1): "key=value"
 * pairs, each ended by a NUL. kvbuf builds such a text; kv_split reads
 * one. Both the target and the initiator speak it.
 */
#ifndef TCQ_KV_H
#define TCQ_KV_H
#include <stddef.h>

#define KV_KEY_MAX 63		/* bytes of a key name */
#define KV_VALUE_MAX 8192	/* bytes of any value */
/* Bytes of a value unless its key allows more. */
#define KV_VALUE_STD_MAX 255

/*
 * A growing buffer of "key=value\0" pairs: login and text responses are
 * built in one, and split across PDUs (C bit) by the caller.
 */
struct kvbuf {
	char *data;
	size_t len, cap;
};
void kvbuf_init(struct kvbuf *b);
void kvbuf_free(struct kvbuf *b);
void kvbuf_reset(struct kvbuf *b);
/* Appends "key=value\0"; returns -1 on allocation failure. */
int kvbuf_add(struct kvbuf *b, const char *key, const char *value);
/* Appends raw bytes (a received text segment); -1 on allocation failure. */
int kvbuf_append(struct kvbuf *b, const void *data, size_t len);
int kvbuf_addf(struct kvbuf *b, const char *key, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/*
 * Splits a text data segment into pairs, calling fn for each; a non-zero
 * return of fn stops the walk and is returned. Returns 0, or -1 when the
 * text is malformed (no '=', empty key, key longer than KV_KEY_MAX bytes,
 * value longer than KV_VALUE_MAX, not NUL-terminated, bad characters);
 * *why then says what. The whole text is checked before fn sees a pair.
 */
int kv_split(const char *text, size_t len,
	     int (*fn)(void *arg, const char *key, const char *value),
	     void *arg, const char **why);
#endif
