/*
 * The key=value text of Login and Text PDUs (RFC 7143 section 6.1): the
 * buffer that builds it and the splitter that checks and reads it.
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tcq/kv.h"

void kvbuf_init(struct kvbuf *b)
{
	b->data = NULL;
	b->len = b->cap = 0;
}

void kvbuf_free(struct kvbuf *b)
{
	free(b->data);
	kvbuf_init(b);
}

void kvbuf_reset(struct kvbuf *b)
{
	b->len = 0;
}

static int kvbuf_reserve(struct kvbuf *b, size_t more)
{
	size_t cap = b->cap ? b->cap : 256;
	char *n;

	if (b->len + more <= b->cap)
		return 0;
	while (cap < b->len + more)
		cap *= 2;
	n = realloc(b->data, cap);
	if (!n)
		return -1;
	b->data = n;
	b->cap = cap;
	return 0;
}

int kvbuf_add(struct kvbuf *b, const char *key, const char *value)
{
	size_t kl = strlen(key), vl = strlen(value);

	if (kvbuf_reserve(b, kl + vl + 2))
		return -1;
	memcpy(b->data + b->len, key, kl);
	b->data[b->len + kl] = '=';
	memcpy(b->data + b->len + kl + 1, value, vl);
	b->data[b->len + kl + 1 + vl] = '\0';
	b->len += kl + vl + 2;
	return 0;
}

int kvbuf_append(struct kvbuf *b, const void *data, size_t len)
{
	if (kvbuf_reserve(b, len))
		return -1;
	memcpy(b->data + b->len, data, len);
	b->len += len;
	return 0;
}

int kvbuf_addf(struct kvbuf *b, const char *key, const char *fmt, ...)
{
	char small[256], *v = small;
	va_list ap;
	int n, rc;

	va_start(ap, fmt);
	n = vsnprintf(small, sizeof(small), fmt, ap);
	va_end(ap);
	if (n < 0)
		return -1;
	if ((size_t)n >= sizeof(small)) {
		v = malloc((size_t)n + 1);
		if (!v)
			return -1;
		va_start(ap, fmt);
		vsnprintf(v, (size_t)n + 1, fmt, ap);
		va_end(ap);
	}
	rc = kvbuf_add(b, key, v);
	if (v != small)
		free(v);
	return rc;
}

/* RFC 7143 6.1: key names use letters, digits and . - + @ _ ; '#' only
 * appears in X# (IANA-registered) keys. */
static bool key_char_ok(unsigned char ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
	       (ch >= '0' && ch <= '9') || ch == '.' || ch == '-' ||
	       ch == '+' || ch == '@' || ch == '_' || ch == '#';
}

/* Checks one "key=value" of klen/vlen bytes; returns NULL or the fault. */
static const char *pair_check(const char *pair, size_t klen, size_t vlen)
{
	if (klen == 0)
		return "empty key";
	if (klen > KV_KEY_MAX)
		return "key name longer than 63 bytes";
	if (vlen > KV_VALUE_MAX)
		return "value longer than 8192 bytes";
	for (size_t i = 0; i < klen; i++)
		if (!key_char_ok((unsigned char)pair[i]))
			return "bad character in key name";
	for (size_t i = 0; i < vlen; i++) {
		unsigned char ch = (unsigned char)pair[klen + 1 + i];

		if (ch < 0x20 || ch == 0x7f)
			return "control character in value";
	}
	return NULL;
}

/*
 * Two passes: the whole text is validated before fn sees any pair, so a
 * malformed segment never leaves a negotiation half applied.
 */
int kv_split(const char *text, size_t len,
	     int (*fn)(void *arg, const char *key, const char *value),
	     void *arg, const char **why)
{
	static const char *unused;

	if (!why)
		why = &unused;
	*why = NULL;
	for (int pass = 0; pass < 2; pass++) {
		size_t pos = 0;

		while (pos < len) {
			const char *pair = text + pos;
			const char *end = memchr(pair, '\0', len - pos);
			const char *eq;
			char key[KV_KEY_MAX + 1];
			size_t klen;
			int rc;

			if (!end) {
				*why = "text not NUL-terminated";
				return -1;
			}
			pos += (size_t)(end - pair) + 1;
			if (end == pair)
				continue;	/* tolerate padding NULs */
			eq = memchr(pair, '=', (size_t)(end - pair));
			if (!eq) {
				*why = "key without '='";
				return -1;
			}
			klen = (size_t)(eq - pair);
			if (pass == 0) {
				*why = pair_check(pair, klen,
						  (size_t)(end - eq - 1));
				if (*why)
					return -1;
				continue;
			}
			memcpy(key, pair, klen);
			key[klen] = '\0';
			rc = fn(arg, key, eq + 1);
			if (rc)
				return rc;
		}
	}
	return 0;
}
