/*
 * The login and text keys of RFC 7143 (sections 12 and 13, and
 * iSCSIProtocolLevel of RFC 7144): one table of what each key is, who may
 * send it, where, how it is negotiated and its default. The target
 * (target/negotiate.c) and the initiator (initiator/native_keys.c) both
 * answer from it, and struct login_params holds what they agree on.
 */
#ifndef TCQ_LOGIN_KEYS_H
#define TCQ_LOGIN_KEYS_H
#include <stdbool.h>
#include <stdint.h>

enum login_key_id {
	LOGIN_KEY_HEADER_DIGEST,
	LOGIN_KEY_DATA_DIGEST,
	LOGIN_KEY_MAX_CONNECTIONS,
	LOGIN_KEY_SEND_TARGETS,
	LOGIN_KEY_TARGET_NAME,
	LOGIN_KEY_INITIATOR_NAME,
	LOGIN_KEY_TARGET_ALIAS,
	LOGIN_KEY_INITIATOR_ALIAS,
	LOGIN_KEY_TARGET_ADDRESS,
	LOGIN_KEY_TARGET_PORTAL_GROUP_TAG,
	LOGIN_KEY_INITIAL_R2T,
	LOGIN_KEY_IMMEDIATE_DATA,
	LOGIN_KEY_MAX_RECV_DSL,		/* MaxRecvDataSegmentLength */
	LOGIN_KEY_MAX_BURST,
	LOGIN_KEY_FIRST_BURST,
	LOGIN_KEY_TIME2WAIT,		/* DefaultTime2Wait */
	LOGIN_KEY_TIME2RETAIN,		/* DefaultTime2Retain */
	LOGIN_KEY_MAX_OUTSTANDING_R2T,
	LOGIN_KEY_DATA_PDU_IN_ORDER,
	LOGIN_KEY_DATA_SEQUENCE_IN_ORDER,
	LOGIN_KEY_ERROR_RECOVERY_LEVEL,
	LOGIN_KEY_SESSION_TYPE,
	LOGIN_KEY_AUTH_METHOD,
	LOGIN_KEY_TASK_REPORTING,
	LOGIN_KEY_PROTOCOL_LEVEL,	/* iSCSIProtocolLevel */
	LOGIN_KEY_IF_MARKER,
	LOGIN_KEY_OF_MARKER,
	LOGIN_KEY_IF_MARK_INT,
	LOGIN_KEY_OF_MARK_INT,
	LOGIN_KEY_CHAP_A,
	LOGIN_KEY_CHAP_I,
	LOGIN_KEY_CHAP_C,
	LOGIN_KEY_CHAP_N,
	LOGIN_KEY_CHAP_R,
	LOGIN_KEY_COUNT
};

/* What the value is (section 6.1). */
enum login_key_kind {
	LOGIN_KIND_NUMBER,	/* numerical-value, within [min, max] */
	LOGIN_KIND_BOOLEAN,	/* Yes or No */
	LOGIN_KIND_LIST,	/* list-of-values */
	LOGIN_KIND_STRING,	/* text, a name or an address */
	LOGIN_KIND_BINARY,	/* binary-value in hex or base64 */
};

/* How the outcome is reached (section 6.2). */
enum login_key_rule {
	LOGIN_RULE_MIN,		/* the smaller of offer and answer */
	LOGIN_RULE_MAX,		/* the larger */
	LOGIN_RULE_OR,
	LOGIN_RULE_AND,
	LOGIN_RULE_FIRST_MATCH,	/* the first offered value the responder has */
	LOGIN_RULE_DECLARATIVE,	/* each side states its own, nothing answers */
	LOGIN_RULE_AUTH,	/* steps of the authentication method (CHAP) */
	LOGIN_RULE_OBSOLETE,	/* section 13.26: answered with Reject */
};

/* Whose state the value is (the "Scope" of a key). */
enum login_key_scope {
	LOGIN_SCOPE_CONNECTION,	/* CO */
	LOGIN_SCOPE_SESSION,	/* SW */
};

/* When the key may be sent (the "Use" of a key). */
enum login_key_use {
	LOGIN_USE_IO,		/* login of any connection (initialize only) */
	LOGIN_USE_LO,		/* login of the leading connection only */
	LOGIN_USE_ALL,		/* login and full feature phase */
	LOGIN_USE_FFP,		/* full feature phase only */
	LOGIN_USE_SECURITY,	/* security negotiation stage only */
};

/* Who may send the key (a bit set). */
#define LOGIN_SENT_BY_INITIATOR 1u
#define LOGIN_SENT_BY_TARGET 2u
#define LOGIN_SENT_BY_BOTH (LOGIN_SENT_BY_INITIATOR | LOGIN_SENT_BY_TARGET)

struct login_key {
	const char *name;
	enum login_key_kind kind;
	enum login_key_rule rule;
	enum login_key_scope scope;
	enum login_key_use use;
	unsigned senders;		/* LOGIN_SENT_BY_* */
	uint32_t min, max;		/* range of a LOGIN_KIND_NUMBER */
	const char *rfc_default;	/* NULL: the RFC gives none */
	/* "Irrelevant when: SessionType=Discovery" */
	bool irrelevant_in_discovery;
};

/* The row of a key; id must be below LOGIN_KEY_COUNT. */
const struct login_key *login_key(enum login_key_id id);
/* The id of a key name (exact, case-sensitive), or -1 when unknown. */
int login_key_lookup(const char *name);
/* The RFC default of a number (its value) or a boolean (1 for Yes). */
uint32_t login_key_default(enum login_key_id id);

/* The result functions of section 6.2.2 for a MIN/MAX or OR/AND rule. */
uint64_t login_key_result_number(enum login_key_rule rule, uint64_t a,
				 uint64_t b);
bool login_key_result_bool(enum login_key_rule rule, bool a, bool b);

/* ---- the outcome ------------------------------------------------------- */

/*
 * The values a login settles: per session, and per connection for the
 * connection that carried the login.
 */
struct login_params {
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

/* The RFC defaults (what applies when a key is never negotiated). */
void login_params_defaults(struct login_params *p);
/*
 * Stores the outcome v of key id in its field of p (booleans as 0/1,
 * digests as 1 for CRC32C; MaxRecvDataSegmentLength is the peer's
 * declaration, so it goes to max_send_dsl). Keys without a field are
 * ignored; returns whether there was one.
 */
bool login_params_store(struct login_params *p, enum login_key_id id,
			uint32_t v);
#endif
