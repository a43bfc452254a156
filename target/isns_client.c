/*
 * tcqd's iSNS messages through libisns (isns_client.h). The messages and
 * their attributes are RFC 4171's: the Network Entity (EID, protocol
 * iSCSI), a Portal per address and port, an iSCSI Storage Node of type
 * Target per target (with its alias), and a Portal Group per target and
 * portal with the portal's tag (what a login answers as
 * TargetPortalGroupTag). Every registration replaces the whole entity, as
 * target-isns learnt to do (open-iscsi/target-isns#44: a partial update
 * some servers refuse), and names as source a node the server knows as
 * the entity's (target-isns#10, #38: a removed target as source is
 * refused).
 */
#include <config.h>	/* autoconf's (HAVE_LIBISNS) */
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "target/isns_client.h"

#ifndef HAVE_LIBISNS

void isnsc_init(void)
{
}

static int no_isns(char *err, size_t errlen)
{
	snprintf(err, errlen, "tcqd was built without libisns");
	return -1;
}

int isnsc_register(const struct isns_view *v, const char *source,
		   uint32_t *period, char *err, size_t errlen)
{
	return no_isns(err, errlen);
}

int isnsc_refresh(const struct isns_view *v, const char *source, char *err,
		  size_t errlen)
{
	return no_isns(err, errlen);
}

int isnsc_deregister(const struct isns_view *v, const char *source,
		     char *err, size_t errlen)
{
	return no_isns(err, errlen);
}

#else
#include <libisns/isns.h>
#include <libisns/util.h>

void isnsc_init(void)
{
	isns_config.ic_security = 0;	/* else it loads DSA keys, or exits */
	isns_config.ic_network.call_timeout = ISNSC_CALL_TIMEOUT_S;
	isns_config.ic_network.connect_timeout = 1;
	isns_config.ic_network.reconnect_timeout = 1;
	isns_log_background();
}

/* A client of the server: a socket (connected when a message goes) and
 * the source name. NULL with err. */
static isns_client_t *client_open(const struct isns_view *v,
				  const char *source, char *err,
				  size_t errlen)
{
	isns_client_t *c = isns_calloc(1, sizeof(*c));
	char host[TCQ_NAME_MAX + 2], port[8];

	if (!c) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	/* libisns reads "[v6]" and "v4-or-name" as addresses */
	snprintf(host, sizeof(host), strchr(v->host, ':') ? "[%s]" : "%s",
		 v->host);
	snprintf(port, sizeof(port), "%u", v->port);
	c->ic_socket = isns_create_client_socket(host, port, AF_UNSPEC,
						 SOCK_STREAM);
	if (!c->ic_socket) {
		snprintf(err, errlen, "cannot resolve %s", host);
		isns_free(c);
		return NULL;
	}
	isns_socket_set_security_ctx(c->ic_socket, NULL);
	c->ic_source = isns_source_create_iscsi(source);
	return c;
}

static int status_err(int status, char *err, size_t errlen)
{
	if (status == ISNS_INTERNAL_ERROR)
		snprintf(err, errlen, "no answer within %d s",
			 ISNSC_CALL_TIMEOUT_S);
	else
		snprintf(err, errlen, "the server answered %s (status %d)",
			 isns_strerror(status), status);
	return -1;
}

/* The address tcqd reaches the server from (for wildcard portals):
 * a UDP socket connected to it sends nothing. */
static int local_addr(const struct isns_view *v, struct sockaddr_storage *ss)
{
	struct addrinfo hints = { .ai_socktype = SOCK_DGRAM }, *ai = NULL;
	char port[8];
	socklen_t len = sizeof(*ss);
	int fd, rc = -1;

	snprintf(port, sizeof(port), "%u", v->port);
	if (getaddrinfo(v->host, port, &hints, &ai) || !ai)
		return -1;
	fd = socket(ai->ai_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd >= 0 && connect(fd, ai->ai_addr, ai->ai_addrlen) == 0 &&
	    getsockname(fd, (struct sockaddr *)ss, &len) == 0)
		rc = 0;
	if (fd >= 0)
		close(fd);
	freeaddrinfo(ai);
	return rc;
}

/* p's portal info; a wildcard address becomes the local one. */
static void portal_info(const struct isns_portal_v *p,
			const struct sockaddr_storage *local,
			isns_portal_info_t *pi)
{
	struct sockaddr_storage a = p->addr;

	isns_portal_init(pi, (const struct sockaddr *)&a, IPPROTO_TCP);
	if (local && isns_portal_is_wildcard(pi)) {
		uint16_t port = (uint16_t)isns_portal_tcpudp_port(pi);

		a = *local;
		if (a.ss_family == AF_INET)
			((struct sockaddr_in *)&a)->sin_port = htons(port);
		else
			((struct sockaddr_in6 *)&a)->sin6_port = htons(port);
		isns_portal_init(pi, (const struct sockaddr *)&a, IPPROTO_TCP);
	}
}

/* The portals (no two alike) and the nodes, children of entity. */
static void add_objects(isns_simple_t *reg, const struct isns_view *v,
			isns_object_t *entity)
{
	struct sockaddr_storage local;
	bool have_local = local_addr(v, &local) == 0;
	isns_object_t *portals[v->nportals > 0 ? v->nportals : 1];
	isns_portal_info_t pis[v->nportals > 0 ? v->nportals : 1];
	int np = 0;

	for (int i = 0; i < v->nportals; i++) {
		bool dup = false;

		portal_info(&v->portals[i], have_local ? &local : NULL,
			    &pis[np]);
		for (int j = 0; j < np; j++)
			dup |= isns_portal_equal(&pis[j], &pis[np]);
		if (dup)
			continue;
		portals[np] = isns_create_portal(&pis[np], entity);
		isns_registration_add_object(reg, portals[np]);
		np++;
	}
	for (int i = 0; i < v->nnodes; i++) {
		isns_object_t *node = isns_create_iscsi_target(v->nodes[i].name,
							       entity);

		if (v->nodes[i].alias[0])
			isns_object_set_string(node, ISNS_TAG_ISCSI_ALIAS,
					       v->nodes[i].alias);
		isns_registration_add_object(reg, node);
		for (int j = 0, k = 0; j < v->nportals && k < np; j++) {
			isns_portal_info_t pi;
			isns_object_t *pg;

			portal_info(&v->portals[j], have_local ? &local : NULL,
				    &pi);
			if (!isns_portal_equal(&pi, &pis[k]))
				continue;	/* a duplicate, skipped above */
			pg = isns_create_portal_group(portals[k], node,
						      v->portals[j].tpgt);
			isns_registration_add_object(reg, pg);
			isns_object_release(pg);
			k++;
		}
		isns_object_release(node);
	}
	for (int i = 0; i < np; i++)
		isns_object_release(portals[i]);
}

/* The registration period in the answer's entity; 0 when none. */
static uint32_t answered_period(isns_simple_t *resp)
{
	isns_object_list_t objs = ISNS_OBJECT_LIST_INIT;
	uint32_t period = 0;

	if (isns_registration_response_get_objects(resp, &objs) == 0)
		for (unsigned i = 0; i < objs.iol_count; i++)
			if (isns_object_is_entity(objs.iol_data[i]))
				isns_object_get_uint32(objs.iol_data[i],
						ISNS_TAG_REGISTRATION_PERIOD,
						&period);
	isns_object_list_destroy(&objs);
	return period;
}

int isnsc_register(const struct isns_view *v, const char *source,
		   uint32_t *period, char *err, size_t errlen)
{
	isns_client_t *c = client_open(v, source, err, errlen);
	isns_object_t *entity;
	isns_simple_t *reg;
	int status;

	if (!c)
		return -1;
	entity = isns_create_entity(ISNS_ENTITY_PROTOCOL_ISCSI, v->eid);
	reg = isns_create_registration(c, entity);
	isns_registration_set_replace(reg, 1);
	isns_registration_add_object(reg, entity);
	add_objects(reg, v, entity);
	status = isns_client_call(c, &reg);
	*period = status == ISNS_SUCCESS ? answered_period(reg) : 0;
	isns_simple_free(reg);
	isns_object_release(entity);
	isns_client_destroy(c);
	return status == ISNS_SUCCESS ? 0 : status_err(status, err, errlen);
}

int isnsc_refresh(const struct isns_view *v, const char *source, char *err,
		  size_t errlen)
{
	isns_client_t *c = client_open(v, source, err, errlen);
	isns_attr_list_t key = ISNS_ATTR_LIST_INIT;
	isns_object_list_t objs = ISNS_OBJECT_LIST_INIT;
	isns_simple_t *q;
	int status, rc;

	if (!c)
		return -1;
	isns_attr_list_append_string(&key, ISNS_TAG_ENTITY_IDENTIFIER, v->eid);
	q = isns_create_query(c, &key);
	isns_query_request_attr_tag(q, ISNS_TAG_ENTITY_IDENTIFIER);
	status = isns_client_call(c, &q);
	if (status == ISNS_SUCCESS) {
		rc = isns_query_response_get_objects(q, &objs) == 0 &&
		     objs.iol_count > 0 ? 0 : 1;
	} else if (status == ISNS_INTERNAL_ERROR) {
		rc = status_err(status, err, errlen);
	} else {
		rc = 1;	/* source unknown, no such entry: not ours any more */
	}
	isns_object_list_destroy(&objs);
	isns_attr_list_destroy(&key);
	isns_simple_free(q);
	isns_client_destroy(c);
	return rc;
}

int isnsc_deregister(const struct isns_view *v, const char *source,
		     char *err, size_t errlen)
{
	isns_client_t *c = client_open(v, source, err, errlen);
	isns_attr_list_t attrs = ISNS_ATTR_LIST_INIT;
	isns_simple_t *d;
	int status;

	if (!c)
		return -1;
	isns_attr_list_append_string(&attrs, ISNS_TAG_ENTITY_IDENTIFIER,
				     v->eid);
	d = isns_create_deregistration(c, &attrs);
	status = isns_client_call(c, &d);
	isns_attr_list_destroy(&attrs);
	isns_simple_free(d);
	isns_client_destroy(c);
	return status == ISNS_SUCCESS ? 0 : status_err(status, err, errlen);
}
#endif /* HAVE_LIBISNS */
