/*
 * The iSNS messages tcqd sends (RFC 4171), through open-isns' libisns:
 * what target/isns.c's thread calls, and nothing else does (libisns keeps
 * global state and is not thread-safe). Each call opens a TCP connection
 * to the server, waits at most ISNSC_CALL_TIMEOUT_S for the answer, and
 * closes it. Built without libisns, every call fails with a message.
 */
#ifndef TCQ_ISNS_CLIENT_H
#define TCQ_ISNS_CLIENT_H
#include <stdint.h>
#include <stddef.h>
#include <sys/socket.h>
#include "target/target.h"

#define ISNSC_CALL_TIMEOUT_S 3

/* What tcqd has to register: its portals and its targets. */
struct isns_portal_v {
	struct sockaddr_storage addr;	/* a wildcard address: the one
					 * tcqd reaches the server from */
	uint16_t tpgt;			/* its portal group tag */
};

struct isns_node_v {
	char name[TCQ_NAME_MAX];
	char alias[TCQ_NAME_MAX];
};

struct isns_view {
	char host[TCQ_NAME_MAX];	/* the server; "" when off */
	uint16_t port;
	char eid[TCQ_NAME_MAX + 16];	/* the Entity Identifier */
	struct isns_portal_v *portals;
	int nportals;
	struct isns_node_v *nodes;
	int nnodes;
};

/* Once, before any call: libisns' settings (no security, timeouts, its
 * own messages to syslog rather than tcqd's stderr). */
void isnsc_init(void);
/* DevAttrReg with the Replace bit (5.6.5.1): the entity, its portals,
 * its targets and a portal group per target and portal, replacing what
 * the server had of the entity. source: the iSCSI name the message comes
 * from (one the server knows as the entity's, else one of v's). 0 and
 * *period, the registration period the server answered (0: none); -1
 * with err. */
int isnsc_register(const struct isns_view *v, const char *source,
		   uint32_t *period, char *err, size_t errlen);
/* DevAttrQry of the entity (6.2.6: any message refreshes the
 * registration period). 0: the server still has it; 1: it has not
 * (expired, or the server lost its database): register again; -1 with
 * err: no answer. */
int isnsc_refresh(const struct isns_view *v, const char *source, char *err,
		  size_t errlen);
/* DevDereg of the entity (5.6.5.4) and so of all it holds. */
int isnsc_deregister(const struct isns_view *v, const char *source,
		     char *err, size_t errlen);
#endif
