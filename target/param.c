/* Parameter defaults (RFC 7143 section 13). The negotiation rules live
 * in negotiate.c. */
#include <string.h>
#include "target/param.h"

void param_defaults(struct iscsi_params *p)
{
	memset(p, 0, sizeof(*p));
	p->header_digest = false;
	p->data_digest = false;
	p->max_recv_dsl = 8192;
	p->max_send_dsl = 8192;
	p->max_connections = 1;
	p->initial_r2t = true;
	p->immediate_data = true;
	p->max_burst = 262144;
	p->first_burst = 65536;
	p->default_time2wait = 2;
	p->default_time2retain = 20;
	p->max_outstanding_r2t = 1;
	p->data_pdu_in_order = true;
	p->data_sequence_in_order = true;
	p->erl = 0;
}
