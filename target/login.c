/*
 * The login phase (RFC 7143 section 6): per-PDU identity checks, stage
 * transitions, C-bit text continuation in both directions, the security
 * stage through a per-target auth policy, the operational stage through
 * negotiate.c, and the hand-over to session.c on the final response.
 */
#include <stdlib.h>
#include <string.h>
#include "tcq/log.h"
#include "tcq/pdu.h"
#include "target/conn.h"
#include "target/login.h"
#include "target/login_priv.h"
#include "target/session.h"
#include "target/target.h"

/* ---- auth policies ------------------------------------------------------ */

static bool auth_none_done(struct conn *c, const char *method)
{
	return method[0] == '\0' || strcmp(method, "None") == 0;
}

static const struct login_auth auth_none = {
	.methods = "None",
	.key = NULL,
	.done = auth_none_done,
};

/* Which policy applies to a target (NULL: discovery). CHAP goes here. */
static const struct login_auth *login_auth_policy(const struct target *t)
{
	return &auth_none;
}

/* ---- state --------------------------------------------------------------- */

struct login_state *login_state_get(struct conn *c)
{
	struct login_state *l = c->login;

	if (l)
		return l;
	l = calloc(1, sizeof(*l));
	if (!l)
		return NULL;
	kvbuf_init(&l->req);
	kvbuf_init(&l->rsp);
	kvbuf_init(&l->txt_req);
	kvbuf_init(&l->txt_rsp);
	l->next_ttt = 1;
	l->txt_ttt = ISCSI_RSVD_TAG;
	c->login = l;
	return l;
}

static void login_timeout(struct reactor_timer *t)
{
	struct conn *c = t->arg;

	if (c->state == CONN_LOGIN)
		conn_close(c, "login timeout");
}

int login_start(struct conn *c)
{
	struct login_state *l = login_state_get(c);

	if (!l)
		return -1;
	neg_init(&l->neg, &tcqd->set, NULL, true);
	reactor_timer_init(&c->login_timer, login_timeout, c);
	if (tcqd->set.login_timeout_s)
		reactor_timer_arm(c->r, &c->login_timer,
				  (uint64_t)tcqd->set.login_timeout_s * 1000);
	return 0;
}

void login_free(struct conn *c)
{
	struct login_state *l = c->login;

	if (!l)
		return;
	if (c->r && reactor_timer_armed(&c->login_timer))
		reactor_timer_cancel(c->r, &c->login_timer);
	kvbuf_free(&l->req);
	kvbuf_free(&l->rsp);
	kvbuf_free(&l->txt_req);
	kvbuf_free(&l->txt_rsp);
	free(l);
	c->login = NULL;
}

/* ---- responses ----------------------------------------------------------- */

static void login_fill_rsp(struct conn *c, struct login_state *l,
			   struct pdu_login_rsp *r)
{
	memset(r, 0, sizeof(*r));
	r->version_max = ISCSI_VERSION;
	r->version_active = ISCSI_VERSION;
	memcpy(r->isid, l->isid, 6);
	r->tsih = l->tsih;
	r->itt = l->itt;
	r->statsn = conn_next_statsn(c);
	r->expcmdsn = l->cmdsn;
	r->maxcmdsn = l->cmdsn;
	l->responded = true;
}

/* Answers with a login status class and drops the connection. */
static void login_fail(struct conn *c, int status, const char *why)
{
	struct login_state *l = c->login;
	struct pdu_login_rsp r;
	uint8_t bhs[ISCSI_BHS_LEN];

	login_fill_rsp(c, l, &r);
	r.csg = (uint8_t)(l->stage >= 0 ? l->stage : 0);
	r.status_class = (uint8_t)(status >> 8);
	r.status_detail = (uint8_t)status;
	pdu_encode_login_rsp(bhs, &r);
	conn_send_pdu(c, bhs, NULL, 0);
	log_info("%s: login failed (0x%04x): %s", c->peer_text, status, why);
	conn_close(c, why);
}

/* Final response: bind the session, then switch the connection to FFP. */
static int login_finish(struct conn *c, struct login_state *l,
			struct pdu_login_rsp *r)
{
	struct sess_login sl;
	uint16_t tsih = 0;
	int rc;

	memset(&sl, 0, sizeof(sl));
	sl.discovery = l->discovery;
	sl.target = l->discovery ? NULL : l->target;
	memcpy(sl.initiator_name, l->neg.initiator_name, TCQ_NAME_MAX);
	memcpy(sl.initiator_alias, l->neg.initiator_alias, TCQ_NAME_MAX);
	memcpy(sl.isid, l->isid, 6);
	sl.cmdsn = l->cmdsn;
	neg_result(&l->neg, &sl.params);
	sl.params.max_recv_dsl = tcqd->set.max_recv_dsl;
	rc = sess_create(c, &sl, &tsih);
	if (rc)
		return rc;
	/* The final response still travels with the login framing:
	 * conn_enter_ffp switches to the negotiated one after it. */
	r->tsih = tsih;
	r->expcmdsn = sess_exp_cmdsn(c);
	r->maxcmdsn = sess_max_cmdsn(c);
	return 0;
}

/* Sends the next piece of l->rsp (login text is split at 8192 bytes). */
static void login_send_chunk(struct conn *c, struct login_state *l)
{
	size_t remain = l->rsp.len - l->rsp_off;
	size_t chunk = remain > LOGIN_CHUNK ? LOGIN_CHUNK : remain;
	bool more = remain > chunk;
	bool transit = !more && l->rsp_transit;
	bool final = transit && l->rsp_nsg == ISCSI_STAGE_FULL_FEATURE;
	struct pdu_login_rsp r;
	uint8_t bhs[ISCSI_BHS_LEN];

	login_fill_rsp(c, l, &r);
	r.transit = transit;
	r.cont = more;
	r.csg = l->rsp_csg;
	r.nsg = transit ? l->rsp_nsg : 0;
	r.data_len = (uint32_t)chunk;
	if (final) {
		int rc = login_finish(c, l, &r);

		if (rc) {
			login_fail(c, rc, "session creation failed");
			return;
		}
	}
	pdu_encode_login_rsp(bhs, &r);
	if (conn_send_pdu(c, bhs, l->rsp.data + l->rsp_off, (uint32_t)chunk)) {
		conn_close(c, "cannot queue login response");
		return;
	}
	l->rsp_off += chunk;
	if (transit)
		l->stage = l->rsp_nsg;
	if (final) {
		conn_enter_ffp(c);
		if (reactor_timer_armed(&c->login_timer))
			reactor_timer_cancel(c->r, &c->login_timer);
		/* Keep the small state for FFP text; drop login buffers. */
		kvbuf_free(&l->req);
		kvbuf_free(&l->rsp);
		l->rsp_off = 0;
		log_info("%s: logged in (%s)", c->peer_text,
			 l->discovery ? "discovery" : l->target->name);
	}
}

static void login_respond(struct conn *c, struct login_state *l, bool transit,
			  uint8_t csg, uint8_t nsg)
{
	l->rsp_off = 0;
	l->rsp_transit = transit;
	l->rsp_csg = csg;
	l->rsp_nsg = nsg;
	login_send_chunk(c, l);
}

/* ---- request processing ------------------------------------------------- */

struct prescan {
	bool have_type, bad_type, discovery;
	char target[TCQ_NAME_MAX];
};

static int prescan_key(void *arg, const char *key, const char *value)
{
	struct prescan *ps = arg;

	if (!strcmp(key, "SessionType")) {
		ps->have_type = true;
		if (!strcmp(value, "Discovery"))
			ps->discovery = true;
		else if (strcmp(value, "Normal"))
			ps->bad_type = true;
	} else if (!strcmp(key, "TargetName") && strlen(value) < TCQ_NAME_MAX) {
		memcpy(ps->target, value, strlen(value) + 1);
	}
	return 0;
}

/*
 * Who is logging in to what: resolved once, from the first complete text,
 * before its keys are negotiated (AuthMethod depends on the target).
 */
static int login_resolve(struct conn *c, struct login_state *l,
			 const char **why)
{
	struct prescan ps;
	const char *serr;

	memset(&ps, 0, sizeof(ps));
	if (param_split(l->req.data, l->req.len, prescan_key, &ps, &serr)) {
		*why = serr;
		return ISCSI_LS_INIT_ERR;
	}
	if (ps.bad_type) {
		*why = "unsupported SessionType";
		return ISCSI_LS_SESSION_TYPE_UNSUPPORTED;
	}
	l->discovery = ps.discovery;
	if (!l->discovery) {
		if (!ps.target[0]) {
			*why = "normal session without TargetName";
			return ISCSI_LS_MISSING_PARAM;
		}
		l->target = target_find(ps.target);
		if (!l->target) {
			*why = "unknown TargetName";
			return ISCSI_LS_TARGET_NOT_FOUND;
		}
	}
	l->auth = login_auth_policy(l->target);
	l->neg.auth_accept = l->auth->methods;
	l->neg.auth_key = l->auth->key;
	l->neg.auth_arg = c;
	return 0;
}

static void login_process(struct conn *c, struct login_state *l,
			  const struct pdu_login_req *req)
{
	bool first = !l->names_checked;
	bool transit = req->transit;
	const char *why = NULL;
	int rc;

	kvbuf_reset(&l->rsp);
	if (first) {
		rc = login_resolve(c, l, &why);
		if (rc) {
			login_fail(c, rc, why);
			return;
		}
	}
	rc = neg_process(&l->neg, (enum neg_stage)req->csg, l->req.data,
			 l->req.len, &l->rsp);
	if (rc == NEG_ERR_NOMEM) {
		login_fail(c, ISCSI_LS_OUT_OF_RESOURCES, "out of memory");
		return;
	}
	if (rc) {
		login_fail(c, ISCSI_LS_INIT_ERR,
			   l->neg.why ? l->neg.why : "negotiation error");
		return;
	}
	if (first) {
		l->names_checked = true;
		if (!l->neg.have_initiator_name) {
			login_fail(c, ISCSI_LS_MISSING_PARAM,
				   "no InitiatorName in the first login request");
			return;
		}
		if (l->tsih) {
			/* MaxConnections=1: no connection joins a session. */
			if (sess_tsih_exists(l->tsih))
				login_fail(c, ISCSI_LS_TOO_MANY_CONNS,
					   "connection for an existing session");
			else
				login_fail(c, ISCSI_LS_SESSION_NOT_EXIST,
					   "TSIH of an unknown session");
			return;
		}
	}
	/* RFC 7143 13.9: TPGT in the first response to a Normal login. */
	if (!l->discovery && !l->tpgt_sent) {
		unsigned tpgt = c->portal ? c->portal->tpgt : l->target->tpgt;

		if (kvbuf_addf(&l->rsp, "TargetPortalGroupTag", "%u", tpgt) ||
		    (l->target->alias[0] &&
		     kvbuf_add(&l->rsp, "TargetAlias", l->target->alias))) {
			login_fail(c, ISCSI_LS_OUT_OF_RESOURCES, "out of memory");
			return;
		}
		l->tpgt_sent = true;
	}
	if (req->csg == ISCSI_STAGE_SECURITY) {
		if (transit) {
			if (l->neg.auth_rejected ||
			    !l->auth->done(c, l->neg.auth_method)) {
				login_fail(c, ISCSI_LS_AUTH_FAILED,
					   "authentication not completed");
				return;
			}
			/* Skipping the operational stage: declare anyway. */
			if (req->nsg == ISCSI_STAGE_FULL_FEATURE)
				rc = neg_add_offers(&l->neg, NEG_SECURITY,
						    &l->rsp);
		}
	} else {
		rc = neg_add_offers(&l->neg, NEG_OPERATIONAL, &l->rsp);
		/* Our offers need answers before the stage may end. */
		if (neg_pending(&l->neg))
			transit = false;
	}
	if (rc) {
		login_fail(c, ISCSI_LS_OUT_OF_RESOURCES, "out of memory");
		return;
	}
	login_respond(c, l, transit, req->csg, req->nsg);
}

/* Answers an intermediate PDU of a C-bit request with an empty response. */
static void login_ack_continue(struct conn *c, struct login_state *l,
			       uint8_t csg)
{
	kvbuf_reset(&l->rsp);
	login_respond(c, l, false, csg, 0);
}

void login_rx(struct conn *c, const uint8_t *bhs, const uint8_t *data,
	      uint32_t len)
{
	struct login_state *l = c->login;
	struct pdu_login_req req;

	if (!l) {
		conn_close(c, "login PDU without login state");
		return;
	}
	if (pdu_opcode(bhs) != ISCSI_OP_LOGIN_REQ) {
		/* Only Login Requests are valid before the FFP. */
		if (!l->started)
			l->stage = 0;
		login_fail(c, ISCSI_LS_INIT_ERR, "non-login PDU during login");
		return;
	}
	pdu_decode_login_req(bhs, &req);
	if (!l->started) {
		l->started = true;
		memcpy(l->isid, req.isid, 6);
		l->tsih = req.tsih;
		l->cid = req.cid;
		l->itt = req.itt;
		l->cmdsn = req.cmdsn;
		l->stage = req.csg;
		c->cid = req.cid;
	} else if (memcmp(l->isid, req.isid, 6) || l->tsih != req.tsih ||
		   l->cid != req.cid || l->itt != req.itt ||
		   l->cmdsn != req.cmdsn) {
		login_fail(c, ISCSI_LS_INIT_ERR,
			   "ISID/TSIH/CID/ITT/CmdSN changed during login");
		return;
	}
	if (l->responded) {
		c->exp_statsn = req.expstatsn;
		c->exp_statsn_valid = true;
	}
	if (req.version_min > ISCSI_VERSION) {
		login_fail(c, ISCSI_LS_UNSUPPORTED_VERSION,
			   "unsupported iSCSI version");
		return;
	}
	if (req.transit && req.cont) {
		login_fail(c, ISCSI_LS_INIT_ERR, "T and C both set");
		return;
	}
	if (req.csg != l->stage ||
	    (req.csg != ISCSI_STAGE_SECURITY &&
	     req.csg != ISCSI_STAGE_OPERATIONAL)) {
		login_fail(c, ISCSI_LS_INIT_ERR, "unexpected login stage");
		return;
	}
	if (req.transit && (req.nsg <= req.csg || req.nsg == 2)) {
		login_fail(c, ISCSI_LS_INIT_ERR, "invalid stage transition");
		return;
	}
	/* A response split with the C bit continues on empty requests. */
	if (l->rsp_off < l->rsp.len) {
		if (len || req.cont) {
			login_fail(c, ISCSI_LS_INIT_ERR,
				   "text while a response is continued");
			return;
		}
		login_send_chunk(c, l);
		return;
	}
	if (l->req.len + len > LOGIN_TEXT_MAX) {
		login_fail(c, ISCSI_LS_INIT_ERR, "login text too long");
		return;
	}
	if (len && kvbuf_append(&l->req, data, len)) {
		login_fail(c, ISCSI_LS_OUT_OF_RESOURCES, "out of memory");
		return;
	}
	if (req.cont) {
		login_ack_continue(c, l, req.csg);
		return;
	}
	login_process(c, l, &req);
	if (c->login == l && c->state == CONN_LOGIN)
		kvbuf_reset(&l->req);
}
