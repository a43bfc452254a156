/*
 * iSNS registration ([global] isns = HOST[:PORT], RFC 4171): tcqd's
 * network entity, every target (an iSCSI Storage Node of type Target)
 * and every portal, kept registered with the server while tcqd runs.
 *
 * libisns is blocking and keeps global state, so every message goes from
 * one thread of its own (target/isns.c, target/isns_client.c), never from
 * a reactor. Reactor 0 hands it what to register after every committed
 * change (isnsr_sync); the thread registers it whole (replacing what the
 * server had), keeps it alive by refreshing it at half the registration
 * period the server gave, registers again when the server lost it, and
 * retries in the background with a bounded backoff (1 s doubling to 30 s)
 * while the server does not answer. A state change is logged once.
 */
#ifndef TCQ_ISNS_H
#define TCQ_ISNS_H
#include <stdint.h>
#include "target/target.h"

#define ISNSR_BACKOFF_MAX_S 30

enum isnsr_state {
	ISNSR_OFF,		/* no server configured */
	ISNSR_REGISTERING,	/* a first attempt under way */
	ISNSR_REGISTERED,	/* the server has what tcqd serves */
	ISNSR_RETRYING,		/* the last attempt failed; retrying */
};

struct isnsr_status {
	enum isnsr_state state;
	char server[TCQ_NAME_MAX];	/* as configured; "" when off */
	char error[256];		/* the last failure; "" since success */
	int targets, portals;		/* registered (ISNSR_REGISTERED) */
	uint32_t period;		/* registration period, s; 0: none */
	uint64_t registrations;		/* messages the server took */
	uint64_t failures;		/* messages it did not take */
};

/* "off", "registering", "registered", "retrying". */
const char *isnsr_state_name(enum isnsr_state s);
/* On reactor 0 (or before the reactors run), once the portals listen and
 * after each committed change: hands tcqd's targets, portals and iSNS
 * server to the thread (started the first time a server is set). Never
 * blocks on the server. */
void isnsr_sync(void);
/* A copy of the state, from any thread. */
void isnsr_status(struct isnsr_status *s);
/* Deregisters (one attempt, at most a few seconds) and ends the thread. */
void isnsr_stop(void);
#endif
