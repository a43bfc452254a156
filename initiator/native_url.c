/*
 * iscsi://[user%secret@]host[:port]/target-name/lun, the form libiscsi
 * and tcq-bench use. host may be an IPv6 literal in brackets.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "initiator/native.h"
#include "tcq/iscsi_proto.h"
#include "tcq/kv_value.h"

#define URL_PREFIX "iscsi://"

static int url_err(char *err, size_t errlen, const char *msg)
{
	snprintf(err, errlen, "bad iSCSI URL: %s", msg);
	return -1;
}

/* Copies [s, s+len) into dst (size cap); -1 when it does not fit. */
static int copy_part(char *dst, size_t cap, const char *s, size_t len)
{
	if (len >= cap)
		return -1;
	memcpy(dst, s, len);
	dst[len] = '\0';
	return 0;
}

int native_url_parse(const char *url, struct native_url *u,
		     char *err, size_t errlen)
{
	const char *p, *slash, *at, *hend, *lun_s;
	uint64_t lun;

	memset(u, 0, sizeof(*u));
	u->port = ISCSI_DEFAULT_PORT;
	if (!url || strncmp(url, URL_PREFIX, strlen(URL_PREFIX)) != 0)
		return url_err(err, errlen, "must start with iscsi://");
	p = url + strlen(URL_PREFIX);
	slash = strchr(p, '/');
	if (!slash)
		return url_err(err, errlen, "missing /target/lun");

	/* Credentials: the last '@' before the path, so secrets may hold '@'. */
	at = NULL;
	for (const char *q = p; q < slash; q++)
		if (*q == '@')
			at = q;
	if (at) {
		const char *pct = memchr(p, '%', (size_t)(at - p));

		if (!pct)
			return url_err(err, errlen, "credentials need user%secret");
		if (pct == p)
			return url_err(err, errlen, "empty CHAP user");
		if (copy_part(u->user, sizeof(u->user), p, (size_t)(pct - p)) ||
		    copy_part(u->secret, sizeof(u->secret), pct + 1,
			      (size_t)(at - pct - 1)))
			return url_err(err, errlen, "credentials too long");
		p = at + 1;
	}

	/* Host, bracketed for IPv6. */
	if (*p == '[') {
		const char *rb = memchr(p, ']', (size_t)(slash - p));

		if (!rb)
			return url_err(err, errlen, "unterminated [IPv6] host");
		if (copy_part(u->host, sizeof(u->host), p + 1,
			      (size_t)(rb - p - 1)))
			return url_err(err, errlen, "host too long");
		hend = rb + 1;
	} else {
		hend = p;
		while (hend < slash && *hend != ':')
			hend++;
		if (copy_part(u->host, sizeof(u->host), p, (size_t)(hend - p)))
			return url_err(err, errlen, "host too long");
	}
	if (!u->host[0])
		return url_err(err, errlen, "empty host");
	if (hend < slash) {
		char num[8];
		uint64_t port;

		if (*hend != ':')
			return url_err(err, errlen, "junk after host");
		if (copy_part(num, sizeof(num), hend + 1,
			      (size_t)(slash - hend - 1)) ||
		    kv_parse_number_in(num, 1, 65535, &port))
			return url_err(err, errlen, "bad port");
		u->port = (uint16_t)port;
	}

	/* /target-name/lun: the LUN is after the last '/'. */
	lun_s = strrchr(slash + 1, '/');
	if (!lun_s)
		return url_err(err, errlen, "missing /lun after the target name");
	if (lun_s == slash + 1)
		return url_err(err, errlen, "empty target name");
	if (copy_part(u->target, sizeof(u->target), slash + 1,
		      (size_t)(lun_s - slash - 1)))
		return url_err(err, errlen, "target name too long");
	if (strchr(u->target, '/'))
		return url_err(err, errlen, "target name contains '/'");
	if (kv_parse_number_in(lun_s + 1, 0, 16383, &lun))
		return url_err(err, errlen, "LUN must be a number 0..16383");
	u->lun = lun;
	return 0;
}
