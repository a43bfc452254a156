/*
 * The outcome of a login's key negotiation (RFC 7143 sections 6 and 13):
 * a struct iscsi_params per session (with the per-connection fields
 * filled for the leading connection). The key=value text is tcq/kv.h.
 */
#ifndef TCQ_PARAM_H
#define TCQ_PARAM_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "tcq/kv.h"

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

#endif
