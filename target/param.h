/*
 * Operational key negotiation (RFC 7143 sections 6 and 13). The engine
 * knows every key's type and rule; login.c feeds it the initiator's
 * key=value pairs and collects the answers. The result is a struct
 * iscsi_params per session (with the per-connection fields filled for the
 * leading connection).
 */
#ifndef TCQ_PARAM_H
#define TCQ_PARAM_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct iscsi_params {
	/* per connection */
	bool header_digest, data_digest;	/* CRC32C when true */
	uint32_t max_recv_dsl;	/* what we accept (our declaration) */
	uint32_t max_send_dsl;	/* what the peer accepts (its declaration) */
	/* per session */
	uint32_t max_connections;
	bool initial_r2t, immediate_data;
	uint32_t max_burst, first_burst;
	uint32_t default_time2wait, default_time2retain;
	uint32_t max_outstanding_r2t;
	bool data_pdu_in_order, data_sequence_in_order;
	uint8_t erl;
};

/* RFC 7143 defaults (what applies when a key is never negotiated). */
void param_defaults(struct iscsi_params *p);

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
 * Splits a text data segment into pairs, calling fn for each. Returns 0,
 * or -1 when the text is malformed (no '=', empty key, key longer than 63
 * bytes, value longer than 8192 (255 for most keys is checked later), not
 * NUL-terminated, bad characters); *why then says what.
 */
int param_split(const char *text, size_t len,
		int (*fn)(void *arg, const char *key, const char *value),
		void *arg, const char **why);
#endif
