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
#include "target/acl.h"
#include "target/auth.h"
#include "target/conn.h"
#include "target/initiator.h"
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

/* Which policy applies to a target (NULL: discovery): CHAP when it has
 * credentials (auth.c), otherwise none. */
/* Copies the credentials the login will check (under the lock: they
 * change live) and picks the authentication they call for: an
 * initiator's own CHAP ([initiator] section) stands in for the
 * target's, so that one may need CHAP on a target without it. */
static const struct login_auth *login_auth_policy(struct login_state *l)
{
	const struct login_auth *a;

	tcqd_read_lock();
	if (l->target)
		tinit_chap(l->target, l->neg.initiator_name, &l->chap_cfg);
	else
		l->chap_cfg = tcqd->set.discovery_chap;
	tcqd_read_unlock();
	a = auth_login_policy(&l->chap_cfg);
	return a ? a : &auth_none;
}

/* ---- connections still logging in ------------------------------------- */

/* Per reactor, oldest first: a flood of connections that never log in is
 * shed from the oldest, so descriptors stay bounded and a real initiator
 * still gets in. */
static __thread struct list_node pend_head;
static __thread unsigned pend_count;
static __thread unsigned shed_count;
static __thread uint64_t shed_logged_ns;

static void pend_unlink(struct login_state *l)
{
	if (list_linked(&l->pend_node)) {
		list_del(&l->pend_node);
		pend_count--;
	}
}

static void pend_add(struct conn *c, struct login_state *l)
{
	unsigned threads = tcqd->set.threads > 0 ? (unsigned)tcqd->set.threads : 1;
	unsigned cap = tcqd->set.max_pending_logins / threads;
	struct login_state *victim = NULL;
	struct list_node *pos;

	if (!pend_head.next)
		list_init(&pend_head);
	if (cap < 1)
		cap = 1;
	/* Make room first: the oldest that never sent a PDU, else the
	 * oldest of all. */
	if (tcqd->set.max_pending_logins && pend_count >= cap) {
		list_for_each(pos, &pend_head) {
			struct login_state *o =
				list_entry(pos, struct login_state, pend_node);

			if (!o->started) {
				victim = o;
				break;
			}
		}
		if (!victim)
			victim = list_first_entry(&pend_head, struct login_state,
						  pend_node);
		/* One warning a second per reactor, not one per victim. */
		shed_count++;
		if (reactor_now_ns() - shed_logged_ns >= 1000000000ull) {
			log_warn("%s: %u connections still logging in: shedding the oldest (%u shed)",
				 victim->conn->peer_text, pend_count,
				 shed_count);
			shed_logged_ns = reactor_now_ns();
		}
		target_count_refusal(victim->target, LOGIN_REFUSED_LIMIT);
		conn_close(victim->conn, "too many connections logging in");
	}
	list_add_tail(&l->pend_node, &pend_head);
	pend_count++;
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
	auth_chap_init(&l->chap);
	list_init(&l->pend_node);
	l->conn = c;
	c->login = l;
	return l;
}

/*
 * Two limits on a connection still logging in: the whole login
 * (login_timeout) and silence (login_idle_timeout, so a connection that
 * never speaks goes early). Returns the ms to the nearer deadline, 0 when
 * one has passed, UINT64_MAX when neither applies.
 */
static uint64_t login_deadline_ms(struct conn *c, uint64_t now,
				  const char **why)
{
	const struct tcq_settings *s = &tcqd->set;
	uint64_t wait = UINT64_MAX;

	if (s->login_timeout_s) {
		uint64_t end = c->login->start_ns +
			       (uint64_t)s->login_timeout_s * 1000000000ull;

		if (now >= end) {
			*why = "login timeout";
			return 0;
		}
		wait = (end - now) / 1000000 + 1;
	}
	if (s->login_idle_timeout_s) {
		uint64_t end = c->last_rx_ns +
			       (uint64_t)s->login_idle_timeout_s * 1000000000ull;

		if (now >= end) {
			*why = "login idle timeout";
			return 0;
		}
		if ((end - now) / 1000000 + 1 < wait)
			wait = (end - now) / 1000000 + 1;
	}
	return wait;
}

static void login_timeout(struct reactor_timer *t)
{
	struct conn *c = t->arg;
	const char *why = NULL;
	uint64_t ms;

	if (c->state != CONN_LOGIN || !c->login)
		return;
	ms = login_deadline_ms(c, reactor_now_ns(), &why);
	if (ms == 0)
		conn_close(c, why);
	else if (ms != UINT64_MAX)
		reactor_timer_arm(c->r, t, ms);
}

int login_start(struct conn *c)
{
	struct login_state *l = login_state_get(c);

	if (!l)
		return -1;
	neg_init(&l->neg, &tcqd->set, NULL, true);
	l->start_ns = reactor_now_ns();
	reactor_timer_init(&c->login_timer, login_timeout, c);
	{
		const char *why = NULL;
		uint64_t ms = login_deadline_ms(c, l->start_ns, &why);

		if (ms != UINT64_MAX)
			reactor_timer_arm(c->r, &c->login_timer, ms ? ms : 1);
	}
	pend_add(c, l);
	return 0;
}

void login_free(struct conn *c)
{
	struct login_state *l = c->login;

	if (!l)
		return;
	if (c->r && reactor_timer_armed(&c->login_timer))
		reactor_timer_cancel(c->r, &c->login_timer);
	pend_unlink(l);
	target_put(l->target);
	auth_chap_wipe(&l->chap);
	chap_wipe(&l->chap_cfg, sizeof(l->chap_cfg));
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

/* Answers with a login status class and drops the connection (the
 * refusal already counted). */
static void login_reject(struct conn *c, int status, const char *why)
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
	log_warn("%s: login of %s failed (0x%04x): %s", c->peer_text,
		 l->neg.initiator_name[0] ? l->neg.initiator_name : "?",
		 status, why);
	conn_close(c, why);
}

/* The same, counting the refusal by its status (target_count_refusal). */
static void login_fail(struct conn *c, int status, const char *why)
{
	enum login_refusal r;

	switch (status) {
	case ISCSI_LS_AUTH_FAILED: r = LOGIN_REFUSED_CHAP; break;
	case ISCSI_LS_AUTHZ_FAILED: r = LOGIN_REFUSED_ACL; break;
	case ISCSI_LS_TARGET_NOT_FOUND: r = LOGIN_REFUSED_UNKNOWN_TARGET; break;
	default: r = LOGIN_REFUSED_OTHER; break;
	}
	target_count_refusal(c->login->target, r);
	login_reject(c, status, why);
}

/* Final response: bind the session (once), then switch the connection
 * to FFP. */
static int login_finish(struct conn *c, struct login_state *l,
			struct pdu_login_rsp *r)
{
	struct sess_login sl;
	uint16_t tsih = 0;
	int rc;

	if (l->settled) {
		r->tsih = sess_tsih(c->sess);
		r->expcmdsn = sess_exp_cmdsn(c);
		r->maxcmdsn = sess_max_cmdsn(c);
		return 0;
	}
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

static void login_send_chunk(struct conn *c, struct login_state *l);

/* The new session may go ahead (sess_settle): the final response. */
static void login_settled(struct conn *c)
{
	struct login_state *l = c->login;

	if (c->state != CONN_LOGIN || !l || !l->settling)
		return;		/* closed meanwhile */
	l->settling = false;
	l->settled = true;
	login_send_chunk(c, l);
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
			/* sess_create counted why (a limit, memory). */
			login_reject(c, rc, "session creation failed");
			return;
		}
		if (!l->settled) {
			/* The answer waits until the initiator's earlier
			 * nexuses are gone (sess_settle). */
			l->settling = true;
			if (sess_settle(c, login_settled) < 0) {
				login_reject(c, ISCSI_LS_OUT_OF_RESOURCES,
					     "out of memory");
			}
			return;
		}
	}
	pdu_encode_login_rsp(bhs, &r);
	/* An empty response has no buffer: no pointer arithmetic on NULL. */
	if (conn_send_pdu(c, bhs, chunk ? l->rsp.data + l->rsp_off : NULL,
			  (uint32_t)chunk)) {
		conn_close(c, "cannot queue login response");
		return;
	}
	l->rsp_off += chunk;
	if (transit)
		l->stage = l->rsp_nsg;
	if (final) {
		pend_unlink(l);
		conn_enter_ffp(c);
		if (reactor_timer_armed(&c->login_timer))
			reactor_timer_cancel(c->r, &c->login_timer);
		/* Keep the small state for FFP text; drop login buffers. */
		kvbuf_free(&l->req);
		kvbuf_free(&l->rsp);
		l->rsp_off = 0;
		log_info("%s: logged in (%s)", c->peer_text,
			 l->discovery ? "discovery" : l->target->dev.name);
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

/*
 * A target that has moved (redirect = ADDR:PORT): the first response to a
 * leading normal login says so (RFC 7143 11.13.5, status 0101h or 0102h)
 * and names the new address in TargetAddress, without the comma and
 * portal group tag (13.8: a redirect omits them), before any security
 * negotiation (11.13.5 allows either). No session is made and no refusal
 * counted; the connection closes (11.13.5: a status class other than 0).
 * False when the target is served here.
 */
static bool login_redirect(struct conn *c, struct login_state *l)
{
	char addr[TCQ_REDIRECT_MAX];
	bool permanent;
	struct pdu_login_rsp r;
	uint8_t bhs[ISCSI_BHS_LEN];

	tcqd_read_lock();
	memcpy(addr, l->target->redirect, sizeof(addr));
	permanent = l->target->redirect_permanent;
	tcqd_read_unlock();
	if (!addr[0])
		return false;
	kvbuf_reset(&l->rsp);
	if (kvbuf_add(&l->rsp, "TargetAddress", addr)) {
		login_fail(c, ISCSI_LS_OUT_OF_RESOURCES, "out of memory");
		return true;
	}
	login_fill_rsp(c, l, &r);
	r.csg = (uint8_t)l->stage;
	r.status_class = ISCSI_LS_TARGET_MOVED_TEMP >> 8;
	r.status_detail = (uint8_t)(permanent ? ISCSI_LS_TARGET_MOVED_PERM :
					       ISCSI_LS_TARGET_MOVED_TEMP);
	r.data_len = (uint32_t)l->rsp.len;
	pdu_encode_login_rsp(bhs, &r);
	log_info("%s: login of %s to %s redirected (0x%04x, target moved %s) "
		 "to %s", c->peer_text, l->neg.initiator_name,
		 l->target->dev.name, 0x0100 | r.status_detail,
		 permanent ? "permanently" : "temporarily", addr);
	/* conn_close sends what is queued before it frees l->rsp. */
	if (conn_send_pdu(c, bhs, l->rsp.data, r.data_len))
		conn_close(c, "cannot queue login response");
	else
		conn_close(c, "login redirected");
	return true;
}

/* ---- request processing ------------------------------------------------- */

struct prescan {
	bool have_type, bad_type, discovery;
	char target[TCQ_NAME_MAX];
	char initiator[TCQ_NAME_MAX];
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
	} else if (!strcmp(key, "InitiatorName") &&
		   strlen(value) < TCQ_NAME_MAX) {
		memcpy(ps->initiator, value, strlen(value) + 1);
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
	if (kv_split(l->req.data, l->req.len, prescan_key, &ps, &serr)) {
		*why = serr;
		return ISCSI_LS_INIT_ERR;
	}
	if (ps.bad_type) {
		*why = "unsupported SessionType";
		return ISCSI_LS_SESSION_TYPE_UNSUPPORTED;
	}
	l->discovery = ps.discovery;
	/* Named in failure logs even if the text fails to negotiate. */
	memcpy(l->neg.initiator_name, ps.initiator, sizeof(ps.initiator));
	if (!l->discovery) {
		if (!ps.target[0]) {
			*why = "normal session without TargetName";
			return ISCSI_LS_MISSING_PARAM;
		}
		/* Held until the login ends (login_free); the session
		 * takes its own reference. */
		l->target = target_get(ps.target);
		if (!l->target) {
			*why = "unknown TargetName";
			return ISCSI_LS_TARGET_NOT_FOUND;
		}
		/* Access control (acl.c): by name and by address. */
		tcqd_read_lock();
		bool allowed = !ps.initiator[0] ||
			       acl_allows(&l->target->acl, ps.initiator,
					  (const struct sockaddr *)&c->peer);
		tcqd_read_unlock();
		if (!allowed) {
			log_warn("%s: initiator %s is not allowed on %s",
				 c->peer_text, ps.initiator, l->target->dev.name);
			*why = "initiator not allowed on this target";
			return ISCSI_LS_AUTHZ_FAILED;
		}
	}
	l->auth = login_auth_policy(l);
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
		/* A leading login of a named initiator (an added connection
		 * or a nameless one gets its error below). */
		if (!l->discovery && !l->tsih && l->neg.initiator_name[0] &&
		    login_redirect(c, l))
			return;
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
		unsigned tpgt = c->portal ? c->portal->tpgt : l->target->dev.tpgt;

		if (kvbuf_addf(&l->rsp, "TargetPortalGroupTag", "%u", tpgt) ||
		    (l->target->alias[0] &&
		     kvbuf_add(&l->rsp, "TargetAlias", l->target->alias))) {
			login_fail(c, ISCSI_LS_OUT_OF_RESOURCES, "out of memory");
			return;
		}
		l->tpgt_sent = true;
	}
	if (req->csg == ISCSI_STAGE_SECURITY) {
		if (l->auth->end) {
			rc = l->auth->end(c, &l->rsp);
			if (rc) {
				login_fail(c, rc, l->chap.why ? l->chap.why :
					   "authentication failed");
				return;
			}
		}
		/* The exchange goes on: stay in this stage (T=0). */
		if (transit && !l->neg.auth_rejected && l->auth->busy &&
		    l->auth->busy(c, l->neg.auth_method))
			transit = false;
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
		/* No way around the security stage when it is required. */
		if (!l->auth->done(c, l->neg.auth_method)) {
			login_fail(c, ISCSI_LS_AUTH_FAILED,
				   "authentication required");
			return;
		}
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
	if (l->settling) {
		/* Nothing may come before the final response. */
		conn_close(c, "PDU before the final login response");
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
