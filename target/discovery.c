/*
 * Text Requests in the full feature phase: SendTargets (RFC 7143 appendix
 * C), renegotiation through negotiate.c, and continuation of long texts
 * in both directions with the C bit and a Target Transfer Tag.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include "tcq/log.h"
#include "tcq/pdu.h"
#include "target/acl.h"
#include "target/conn.h"
#include "target/login.h"
#include "target/login_priv.h"
#include "target/session.h"
#include "target/target.h"

static uint32_t text_new_ttt(struct login_state *l)
{
	uint32_t t = l->next_ttt++;

	if (l->next_ttt == ISCSI_RSVD_TAG)
		l->next_ttt = 1;
	return t;
}

static bool addr_is_wildcard(const struct sockaddr_storage *ss)
{
	if (ss->ss_family == AF_INET)
		return ((const struct sockaddr_in *)ss)->sin_addr.s_addr ==
		       htonl(INADDR_ANY);
	if (ss->ss_family == AF_INET6)
		return IN6_IS_ADDR_UNSPECIFIED(
			&((const struct sockaddr_in6 *)ss)->sin6_addr);
	return false;
}

static uint16_t addr_port(const struct sockaddr_storage *ss)
{
	if (ss->ss_family == AF_INET)
		return ntohs(((const struct sockaddr_in *)ss)->sin_port);
	if (ss->ss_family == AF_INET6)
		return ntohs(((const struct sockaddr_in6 *)ss)->sin6_port);
	return ISCSI_DEFAULT_PORT;
}

/* "a.b.c.d:port" or "[v6]:port"; v4-mapped v6 prints as IPv4. */
static int addr_format(const struct sockaddr_storage *ss, uint16_t port,
		       char *out, size_t outsz)
{
	char host[INET6_ADDRSTRLEN];

	if (ss->ss_family == AF_INET) {
		const struct sockaddr_in *s4 = (const struct sockaddr_in *)ss;

		if (!inet_ntop(AF_INET, &s4->sin_addr, host, sizeof(host)))
			return -1;
		snprintf(out, outsz, "%s:%u", host, port);
		return 0;
	}
	if (ss->ss_family == AF_INET6) {
		const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)ss;

		if (IN6_IS_ADDR_V4MAPPED(&s6->sin6_addr)) {
			if (!inet_ntop(AF_INET, &s6->sin6_addr.s6_addr[12],
				       host, sizeof(host)))
				return -1;
			snprintf(out, outsz, "%s:%u", host, port);
			return 0;
		}
		if (!inet_ntop(AF_INET6, &s6->sin6_addr, host, sizeof(host)))
			return -1;
		snprintf(out, outsz, "[%s]:%u", host, port);
		return 0;
	}
	return -1;
}

/* The family an address is reached by: an IPv4-mapped IPv6 one by IPv4. */
static int addr_family(const struct sockaddr_storage *ss)
{
	if (ss->ss_family == AF_INET6 &&
	    IN6_IS_ADDR_V4MAPPED(&((const struct sockaddr_in6 *)ss)->sin6_addr))
		return AF_INET;
	return ss->ss_family;
}

/* TargetAddress of a portal as this connection's initiator can reach it;
 * -1 for none. A wildcard portal is the address this connection reached,
 * if that is of the portal's family: an IPv4 wildcard does not listen on
 * the IPv6 address a connection came to, nor [::] (IPV6_V6ONLY) on an
 * IPv4 one. */
static int portal_address(struct conn *c, const struct portal *p, char *out,
			  size_t outsz)
{
	struct sockaddr_storage local;
	socklen_t ll = sizeof(local);

	if (addr_is_wildcard(&p->addr)) {
		if (getsockname(c->fd, (struct sockaddr *)&local, &ll) < 0)
			return -1;
		if (addr_family(&local) != p->addr.ss_family)
			return -1;
		return addr_format(&local, addr_port(&p->addr), out, outsz);
	}
	return addr_format(&p->addr, addr_port(&p->addr), out, outsz);
}

static int sendtargets_add(struct conn *c, const struct target *t,
			   struct kvbuf *rsp)
{
	char addr[INET6_ADDRSTRLEN + 16];

	if (kvbuf_add(rsp, "TargetName", t->dev.name))
		return -1;
	for (int i = 0; i < tcqd->nportals; i++) {
		const struct portal *p = tcqd->portals[i];

		if (portal_address(c, p, addr, sizeof(addr)))
			continue;
		if (kvbuf_addf(rsp, "TargetAddress", "%s,%u", addr, p->tpgt))
			return -1;
	}
	return 0;
}

/* Only targets the asking initiator (name and address) may log in to
 * are shown: the others' names are none of its business. */
static bool sendtargets_visible(struct conn *c, struct login_state *l,
				const struct target *t)
{
	return acl_allows(&t->acl, l->neg.initiator_name,
			  (const struct sockaddr *)&c->peer);
}

/* SendTargets=All | <name> | (empty) per RFC 7143 appendix C; the lists
 * and ACLs under the lock (tcqctl changes them live). */
static int sendtargets_locked(struct conn *c, struct login_state *l,
			      const char *val, struct kvbuf *rsp)
{
	bool discovery = l->discovery || !l->target;

	if (!strcmp(val, "All")) {
		if (!discovery)
			return kvbuf_add(rsp, "SendTargets", "Reject");
		for (int i = 0; i < tcqd->ntargets; i++)
			if (sendtargets_visible(c, l, tcqd->targets[i]) &&
			    sendtargets_add(c, tcqd->targets[i], rsp))
				return -1;
		return 0;
	}
	if (!val[0]) {
		if (discovery)
			return kvbuf_add(rsp, "SendTargets", "Reject");
		return sendtargets_add(c, l->target, rsp);
	}
	/* A named target: only the session's own in a Normal session. */
	{
		struct target *t = target_find(val);

		if (t && (discovery || t == l->target) &&
		    sendtargets_visible(c, l, t))
			return sendtargets_add(c, t, rsp);
	}
	return 0;
}

static int sendtargets(struct conn *c, struct login_state *l,
		       const char *val, struct kvbuf *rsp)
{
	int rc;

	tcqd_read_lock();
	rc = sendtargets_locked(c, l, val, rsp);
	tcqd_read_unlock();
	return rc;
}

/* Sends the next Text Response piece of l->txt_rsp. */
static void text_send_chunk(struct conn *c, struct login_state *l,
			    uint64_t lun)
{
	size_t remain = l->txt_rsp.len - l->txt_off;
	size_t max = c->params.max_send_dsl ? c->params.max_send_dsl : 8192;
	size_t chunk = remain > max ? max : remain;
	bool more = remain > chunk;
	struct pdu_text_rsp r;
	uint8_t bhs[ISCSI_BHS_LEN];

	memset(&r, 0, sizeof(r));
	r.cont = more;
	r.final = !more && l->txt_final;
	r.data_len = (uint32_t)chunk;
	r.lun = lun;
	r.itt = l->txt_itt;
	/* F=1 closes the exchange; otherwise the initiator continues it
	 * with the tag we give. */
	if (r.final) {
		r.ttt = ISCSI_RSVD_TAG;
		l->txt_ttt = ISCSI_RSVD_TAG;
	} else {
		l->txt_ttt = text_new_ttt(l);
		r.ttt = l->txt_ttt;
	}
	r.statsn = conn_next_statsn(c);
	r.expcmdsn = sess_exp_cmdsn(c);
	r.maxcmdsn = sess_max_cmdsn(c);
	pdu_encode_text_rsp(bhs, &r);
	if (conn_send_pdu(c, bhs, chunk ? l->txt_rsp.data + l->txt_off : NULL,
			  (uint32_t)chunk)) {
		conn_close(c, "cannot queue text response");
		return;
	}
	l->txt_off += chunk;
	l->txt_rsp_pending = more;
	if (!more) {
		kvbuf_reset(&l->txt_rsp);
		l->txt_off = 0;
	}
}

static void text_reset(struct login_state *l)
{
	l->txt_req_pending = false;
	l->txt_rsp_pending = false;
	l->txt_ttt = ISCSI_RSVD_TAG;
	kvbuf_reset(&l->txt_req);
	kvbuf_reset(&l->txt_rsp);
	l->txt_off = 0;
}

void text_rx(struct conn *c, const uint8_t *bhs, const uint8_t *data,
	     uint32_t len)
{
	struct login_state *l = login_state_get(c);
	struct pdu_text_req tr;
	struct neg n;
	int rc;

	if (!l) {
		conn_close(c, "out of memory");
		return;
	}
	pdu_decode_text_req(bhs, &tr);
	if (tr.final && tr.cont) {
		conn_send_reject(c, bhs, ISCSI_REJECT_PROTOCOL_ERROR);
		return;
	}
	if (tr.ttt != ISCSI_RSVD_TAG) {
		bool ours = tr.ttt == l->txt_ttt && tr.itt == l->txt_itt;

		if (!ours) {
			conn_send_reject(c, bhs, ISCSI_REJECT_INVALID_PDU_FIELD);
			return;
		}
		if (l->txt_rsp_pending) {
			/* Continuation of our response: an empty request. */
			if (len || tr.cont) {
				conn_send_reject(c, bhs,
						 ISCSI_REJECT_PROTOCOL_ERROR);
				return;
			}
			text_send_chunk(c, l, tr.lun);
			return;
		}
		/* Next piece of the initiator's text, or its next round. */
		if (!l->txt_req_pending)
			kvbuf_reset(&l->txt_req);
	} else {
		/* TTT 0xffffffff starts afresh: drop any continuation. */
		text_reset(l);
	}
	if (l->txt_req.len + len > LOGIN_TEXT_MAX) {
		text_reset(l);
		conn_send_reject(c, bhs, ISCSI_REJECT_PROTOCOL_ERROR);
		return;
	}
	if (len && kvbuf_append(&l->txt_req, data, len)) {
		conn_close(c, "out of memory");
		return;
	}
	l->txt_itt = tr.itt;
	if (tr.cont) {
		/* Ask for the rest with an empty response and a tag. */
		l->txt_req_pending = true;
		l->txt_final = false;
		kvbuf_reset(&l->txt_rsp);
		l->txt_off = 0;
		text_send_chunk(c, l, tr.lun);
		l->txt_req_pending = true;
		return;
	}
	l->txt_req_pending = false;

	neg_init(&n, &tcqd->set, &c->params, true);
	n.session_type = l->discovery ? NEG_SESS_DISCOVERY : NEG_SESS_NORMAL;
	kvbuf_reset(&l->txt_rsp);
	l->txt_off = 0;
	rc = neg_process(&n, NEG_FFP, l->txt_req.data, l->txt_req.len,
			 &l->txt_rsp);
	kvbuf_reset(&l->txt_req);
	if (rc == NEG_ERR_NOMEM) {
		conn_close(c, "out of memory");
		return;
	}
	if (rc) {
		log_info("%s: bad text request: %s", c->peer_text,
			 n.why ? n.why : "?");
		text_reset(l);
		conn_send_reject(c, bhs, ISCSI_REJECT_PROTOCOL_ERROR);
		return;
	}
	if (n.mrdsl_changed)
		c->params.max_send_dsl = n.p.max_send_dsl;
	if (n.send_targets &&
	    sendtargets(c, l, n.send_targets_val, &l->txt_rsp)) {
		conn_close(c, "out of memory");
		return;
	}
	l->txt_final = tr.final;
	text_send_chunk(c, l, tr.lun);
}
