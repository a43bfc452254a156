/*
 * /metrics over HTTP (metrics_http.h). libmicrohttpd runs its own polling
 * thread (MHD_USE_INTERNAL_POLLING_THREAD): a scrape never waits on a
 * reactor and a reactor never waits on a scrape. The thread reads the
 * daemon as prom_collect does from anywhere: targets and LUNs under
 * tcqd_read_lock, statistics by relaxed loads of the reactors' slots.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <sys/socket.h>
#include <microhttpd.h>
#include "tcq/log.h"
#include "target/metrics_http.h"
#include "target/metrics_prom.h"
#include "target/portal.h"

#if MHD_VERSION >= 0x00097002
typedef enum MHD_Result mhd_result;
#else
typedef int mhd_result;
#endif

#define METRICS_CONN_LIMIT 16
#define METRICS_CONN_TIMEOUT_S 10

static struct MHD_Daemon *mhd;
static char bound[80];

static mhd_result reply(struct MHD_Connection *conn, unsigned status,
			const char *text)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(
		strlen(text), (void *)text, MHD_RESPMEM_PERSISTENT);
	mhd_result rc;

	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE,
				"text/plain; charset=utf-8");
	if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
		MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
	rc = MHD_queue_response(conn, status, r);
	MHD_destroy_response(r);
	return rc;
}

static mhd_result serve(void *cls, struct MHD_Connection *conn,
			const char *url, const char *method,
			const char *version, const char *upload_data,
			size_t *upload_data_size, void **con_cls)
{
	struct MHD_Response *r;
	mhd_result rc;
	size_t len;
	char *text;

	if (strcmp(method, MHD_HTTP_METHOD_GET) &&
	    strcmp(method, MHD_HTTP_METHOD_HEAD))
		return reply(conn, MHD_HTTP_METHOD_NOT_ALLOWED,
			     "only GET and HEAD\n");
	if (strcmp(url, "/metrics"))
		return reply(conn, MHD_HTTP_NOT_FOUND,
			     "not found: tcqd serves /metrics\n");
	text = prom_text(&len);
	if (!text)
		return reply(conn, MHD_HTTP_INTERNAL_SERVER_ERROR,
			     "out of memory\n");
	r = MHD_create_response_from_buffer(len, text, MHD_RESPMEM_MUST_FREE);
	if (!r) {
		free(text);
		return MHD_NO;
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE,
				PROM_CONTENT_TYPE);
	rc = MHD_queue_response(conn, MHD_HTTP_OK, r);
	MHD_destroy_response(r);
	return rc;
}

int metrics_http_start(const char *addr, char *err, size_t errlen)
{
	struct sockaddr_storage ss;
	const union MHD_DaemonInfo *info;
	unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL;
	socklen_t sl;
	uint16_t port;
	char e[200];

	if (metrics_parse_addr(addr, &ss, &sl, e, sizeof(e)) < 0) {
		snprintf(err, errlen, "metrics: %s", e);
		return -1;
	}
	if (ss.ss_family == AF_INET6)
		flags |= MHD_USE_IPv6;
	port = ntohs(ss.ss_family == AF_INET6 ?
		     ((struct sockaddr_in6 *)&ss)->sin6_port :
		     ((struct sockaddr_in *)&ss)->sin_port);
	errno = 0;
	mhd = MHD_start_daemon(flags, port, NULL, NULL, serve, NULL,
			       MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&ss,
			       MHD_OPTION_CONNECTION_LIMIT,
			       (unsigned)METRICS_CONN_LIMIT,
			       MHD_OPTION_CONNECTION_TIMEOUT,
			       (unsigned)METRICS_CONN_TIMEOUT_S,
			       MHD_OPTION_END);
	if (!mhd) {
		snprintf(err, errlen, "metrics %s: cannot listen%s%s", addr,
			 errno ? ": " : "", errno ? strerror(errno) : "");
		return -1;
	}
	info = MHD_get_daemon_info(mhd, MHD_DAEMON_INFO_BIND_PORT);
	if (info && info->port) {
		if (ss.ss_family == AF_INET6)
			((struct sockaddr_in6 *)&ss)->sin6_port = htons(info->port);
		else
			((struct sockaddr_in *)&ss)->sin_port = htons(info->port);
	}
	portal_format_addr((struct sockaddr *)&ss, bound, sizeof(bound));
	return 0;
}

const char *metrics_http_addr(void)
{
	return bound;
}

void metrics_http_stop(void)
{
	if (!mhd)
		return;
	MHD_stop_daemon(mhd);
	mhd = NULL;
}
