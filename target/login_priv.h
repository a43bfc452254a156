/*
 * State shared by login.c and discovery.c: one per connection, created by
 * login_start and kept (without its login buffers) through the full
 * feature phase for Text Request continuation and SendTargets.
 */
#ifndef TCQ_LOGIN_PRIV_H
#define TCQ_LOGIN_PRIV_H
#include <stdbool.h>
#include <stdint.h>
#include "tcq/list.h"
#include "target/auth.h"
#include "target/negotiate.h"
#include "tcq/kv.h"
#include "tcq/login_keys.h"

struct conn;

/*
 * Authentication policy of a target: AuthMethod values it accepts
 * (preferred first), a hook for the security keys (CHAP_*) and a check
 * that authentication finished. auth.c (CHAP) plugs in here.
 */
struct login_auth {
	const char *methods;
	int (*key)(void *arg, const char *key, const char *value,
		   struct kvbuf *rsp);
	bool (*done)(struct conn *c, const char *method);
	/* Optional: runs after each security-stage text (the keys of one
	 * text may come in any order); 0 or a login status to fail with. */
	int (*end)(struct conn *c, struct kvbuf *rsp);
	/* Optional: the exchange is under way, so a T bit from the
	 * initiator is answered with T=0 instead of a failure. */
	bool (*busy)(struct conn *c, const char *method);
};

/* Largest text a Login or Text sequence may accumulate (C bit). */
#define LOGIN_TEXT_MAX 65536
/* Data segment limit while logging in (RFC 7143 default). */
#define LOGIN_CHUNK 8192

struct login_state {
	/* identity of this login, fixed by its first PDU */
	bool started;
	uint8_t isid[6];
	uint16_t tsih, cid;
	uint32_t itt, cmdsn;
	int stage;			/* CSG the next request must carry */
	bool names_checked;		/* InitiatorName / TargetName resolved */
	bool tpgt_sent;
	bool responded;			/* a response carried a StatSN */
	bool discovery;
	bool settling;			/* final response waits (sess_settle) */
	bool settled;			/* the session may go ahead */
	struct target *target;
	const struct login_auth *auth;
	struct neg neg;
	struct kvbuf req;		/* request text (C bit) */
	struct kvbuf rsp;		/* response text being sent */
	size_t rsp_off;
	bool rsp_transit;
	uint8_t rsp_csg, rsp_nsg;
	/* full feature phase Text Requests */
	struct kvbuf txt_req, txt_rsp;
	size_t txt_off;
	uint32_t txt_itt, txt_ttt;
	bool txt_req_pending;		/* accumulating a C-bit request */
	bool txt_rsp_pending;		/* response continues (C bit) */
	bool txt_final;			/* the request's F bit */
	uint32_t next_ttt;
	/* CHAP exchange of this login (auth.c), with the credentials it
	 * checks against as they were when the login resolved its target
	 * (tcqctl may change them meanwhile). */
	struct auth_chap_state chap;
	struct auth_chap_cfg chap_cfg;
	bool chap_logged;
	/* connections still logging in, per reactor, oldest first: a
	 * flood of idle ones is shed (login.c) */
	struct list_node pend_node;
	struct conn *conn;
	uint64_t start_ns;
};

/* The connection's login state, created on demand for FFP text. */
struct login_state *login_state_get(struct conn *c);
#endif
