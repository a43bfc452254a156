/*
 * The login phase (RFC 7143 section 6): security stage (AuthMethod, CHAP in
 * auth.c), operational stage (negotiate.c), text continuation both ways,
 * TSIH assignment and session reinstatement through session.c, and the
 * login status classes. Also the entry of the full feature phase's Text
 * Requests (discovery.c: SendTargets and renegotiation), which share the
 * key machinery and the connection's login state (login_priv.h).
 */
#ifndef TCQ_LOGIN_H
#define TCQ_LOGIN_H
#include <stdint.h>

struct conn;

/* Called when a connection is accepted: sets up login state and the
 * login timeout. */
int login_start(struct conn *c);
/* One Login Request PDU, data segment complete (may be empty). */
void login_rx(struct conn *c, const uint8_t *bhs, const uint8_t *data,
	      uint32_t len);
/* Releases login state (on success or close). */
void login_free(struct conn *c);

/* One Text Request PDU in the full feature phase, in CmdSN order. */
void text_rx(struct conn *c, const uint8_t *bhs, const uint8_t *data,
	     uint32_t len);
#endif
