/*
 * The target's key negotiation (RFC 7143 sections 6 and 13): from the
 * key table (tcq/login_keys.h) it answers the initiator's offers into a
 * kvbuf, adds the target's own offers and declarations, and accumulates
 * the outcome in a struct login_params. It does no I/O, so tests drive it
 * with plain strings.
 */
#ifndef TCQ_NEGOTIATE_H
#define TCQ_NEGOTIATE_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "tcq/kv.h"
#include "tcq/login_keys.h"
#include "target/target.h"

/* Where the keys are being exchanged. */
enum neg_stage {
	NEG_SECURITY = 0,	/* login, CSG 0 */
	NEG_OPERATIONAL = 1,	/* login, CSG 1 */
	NEG_FFP = 3,		/* Text Requests in the full feature phase */
};

enum neg_session { NEG_SESS_UNSET, NEG_SESS_NORMAL, NEG_SESS_DISCOVERY };

/* Return values of neg_process / neg_add_offers. */
#define NEG_OK 0
#define NEG_ERR_PROTOCOL (-1)	/* malformed text, duplicate key, ... : 0x0200 */
#define NEG_ERR_NOMEM (-2)

#define NEG_AUTH_MAX 64

struct neg {
	const struct tcq_settings *set;
	struct login_params p;		/* the outcome so far */
	bool leading;			/* leading connection of its session */
	enum neg_session session_type;
	uint64_t seen;			/* keys the initiator sent (by id) */
	uint64_t offered;		/* keys we offered, awaiting an answer */
	uint64_t answered;		/* our offers the initiator answered */
	bool mrdsl_declared;		/* our MaxRecvDataSegmentLength sent */
	bool offers_made;
	/* Declarative values the login code reads. */
	char initiator_name[TCQ_NAME_MAX];
	char initiator_alias[TCQ_NAME_MAX];
	char target_name[TCQ_NAME_MAX];
	bool have_initiator_name, have_target_name;
	/* AuthMethod: what we accept (comma list) and what was chosen. */
	const char *auth_accept;
	char auth_method[NEG_AUTH_MAX];
	bool auth_rejected;
	/* Security keys (CHAP_*) go to this hook when set. */
	int (*auth_key)(void *arg, const char *key, const char *value,
			struct kvbuf *rsp);
	void *auth_arg;
	/* SendTargets (FFP only): present and its value. */
	bool send_targets;
	char send_targets_val[TCQ_NAME_MAX];
	/* MaxRecvDataSegmentLength re-declared in FFP. */
	bool mrdsl_changed;
	const char *why;		/* set with NEG_ERR_PROTOCOL */
};

/*
 * Starts a negotiation from start: the connection's current values for
 * FFP, NULL for a login (the RFC defaults, login_params_defaults); our
 * MaxRecvDataSegmentLength comes from set.
 */
void neg_init(struct neg *n, const struct tcq_settings *set,
	      const struct login_params *start, bool leading);

/*
 * Processes one complete text (all PDUs of a C-bit sequence joined) in
 * stage st, appending the answers to rsp. Returns NEG_OK or NEG_ERR_*.
 */
int neg_process(struct neg *n, enum neg_stage st, const char *text,
		size_t len, struct kvbuf *rsp);

/*
 * Adds the target's declarations and offers the initiator has not yet
 * triggered (MaxRecvDataSegmentLength always; MaxBurstLength etc. when
 * ours differ from the defaults). Call after neg_process of an
 * operational-stage text (or before a security-stage transit straight to
 * the full feature phase).
 */
int neg_add_offers(struct neg *n, enum neg_stage st, struct kvbuf *rsp);

/* True while one of our offers is unanswered: the target must not
 * transit to the next stage yet. */
bool neg_pending(const struct neg *n);

/* Final consistency (FirstBurst <= MaxBurst) and the result. */
void neg_result(const struct neg *n, struct login_params *out);
#endif
