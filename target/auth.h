/*
 * CHAP on the target side (RFC 7143 section 12.1.3): who must
 * authenticate (the credentials of a target or of discovery), one-way and
 * mutual exchanges, and their logs. The algorithms, digests and encodings
 * are the shared ones of tcq/chap.h and tcq/kv_value.h. The exchange is a
 * small state machine fed with the initiator's CHAP_* keys
 * (auth_chap_key) and run once per login text (auth_chap_step), so tests
 * drive it without a connection; the glue to the login code (struct
 * login_auth) is auth_login_policy.
 */
#ifndef TCQ_AUTH_H
#define TCQ_AUTH_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "tcq/chap.h"

#define AUTH_USER_MAX 256		/* bytes with the NUL */
#define AUTH_SECRET_MAX 256
#define AUTH_SECRET_MIN 12		/* shorter secrets are refused */

/* One set of credentials; user[0] == 0 means "not configured". */
struct auth_cred {
	char user[AUTH_USER_MAX];
	char secret[AUTH_SECRET_MAX];
};

/* What a target (or discovery) requires: chap set means CHAP is
 * mandatory; mutual set lets initiators authenticate the target. */
struct auth_chap_cfg {
	struct auth_cred chap;
	struct auth_cred mutual;
};

/* ---- configuration ----------------------------------------------------- */

/* A configured preference: a comma (or blank) separated list of
 * algorithm names into algs[]; count, or -1 with err (unknown or repeated
 * names, an empty list). */
int auth_chap_algs_parse(const char *list, uint8_t *algs, int max,
			 char *err, size_t errlen);
/* Configuration check of one credential pair; -1 with err. */
int auth_cred_check(const struct auth_cred *c, const char *what, char *err,
		    size_t errlen);
/* "USER:SECRET" (split at the last ':') into c; -1 with err. */
int auth_cred_parse(const char *text, struct auth_cred *c, char *err,
		    size_t errlen);

/* ---- the exchange ------------------------------------------------------ */

enum auth_chap_phase {
	CHAP_WAIT_A,		/* expecting CHAP_A */
	CHAP_WAIT_R,		/* challenge sent, expecting CHAP_N + CHAP_R */
	CHAP_DONE,		/* initiator authenticated */
	CHAP_FAILED,
};

struct auth_chap_state {
	enum auth_chap_phase phase;
	uint8_t alg, id;
	uint8_t chal[CHAP_DIGEST_MAX];
	size_t chal_len;
	/* keys of the text being processed */
	bool got_a, got_n, got_r, got_i, got_c, bad;
	char a[64];
	char n[AUTH_USER_MAX];
	uint8_t r[CHAP_DIGEST_MAX];
	long r_len;
	uint8_t ii;
	uint8_t ic[CHAP_BINARY_MAX];
	long ic_len;
	const char *why;	/* reason of the failure, for the log */
};

void auth_chap_init(struct auth_chap_state *st);
/* Wipes challenge and received values. */
void auth_chap_wipe(struct auth_chap_state *st);

/* One CHAP_* key of the initiator's text: stored for auth_chap_step. */
void auth_chap_key(struct auth_chap_state *st, const char *key,
		   const char *value);

struct kvbuf;
/*
 * Runs the exchange on the keys the text carried, appending our keys to
 * rsp. cfg: the credentials; algs: our preference. Returns 0, or a login
 * status (0x0201 authentication failure, 0x0302 out of memory) with
 * st->why set.
 */
int auth_chap_step(struct auth_chap_state *st,
		   const struct auth_chap_cfg *cfg, const uint8_t *algs,
		   int nalgs, struct kvbuf *rsp);

/* Test hook: the next challenge/identifier come from here, not RAND. */
extern int (*auth_rand_bytes)(uint8_t *buf, int n);

/* ---- login glue ------------------------------------------------------- */

struct login_auth;
/* The policy for a target's (NULL: discovery) logins. */
const struct login_auth *auth_login_policy(const struct auth_chap_cfg *cfg);
#endif
