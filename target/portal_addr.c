/* Portal address texts <-> socket addresses, without touching sockets. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "target/portal.h"

static int parse_port(const char *s, uint16_t *port)
{
	unsigned long v = 0;

	if (!*s)
		return -1;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return -1;
		v = v * 10 + (unsigned long)(*s - '0');
		if (v > 65535)
			return -1;
	}
	*port = (uint16_t)v;
	return 0;
}

int portal_parse_addr(const char *text, struct sockaddr_storage *ss,
		      socklen_t *len, char *err, size_t errlen)
{
	char host[INET6_ADDRSTRLEN + 1];
	const char *colon, *hs;
	size_t hl;
	uint16_t port;

	memset(ss, 0, sizeof(*ss));
	if (text[0] == '[') {
		const char *close = strchr(text, ']');

		if (!close || close[1] != ':') {
			snprintf(err, errlen, "bad address '%s': expected [IPV6]:PORT",
				 text);
			return -1;
		}
		hs = text + 1;
		hl = (size_t)(close - hs);
		colon = close + 1;
	} else {
		colon = strrchr(text, ':');
		if (!colon) {
			snprintf(err, errlen, "bad address '%s': expected ADDR:PORT",
				 text);
			return -1;
		}
		hs = text;
		hl = (size_t)(colon - text);
		if (memchr(hs, ':', hl)) {
			snprintf(err, errlen,
				 "bad address '%s': put IPv6 addresses in brackets, "
				 "[ADDR]:PORT", text);
			return -1;
		}
	}
	if (parse_port(colon + 1, &port) < 0) {
		snprintf(err, errlen, "bad port in '%s'", text);
		return -1;
	}
	if (hl == 0 || hl >= sizeof(host)) {
		snprintf(err, errlen, "bad address '%s'", text);
		return -1;
	}
	memcpy(host, hs, hl);
	host[hl] = 0;

	if (text[0] == '[') {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;

		if (inet_pton(AF_INET6, host, &s6->sin6_addr) != 1) {
			snprintf(err, errlen, "bad IPv6 address '%s'", host);
			return -1;
		}
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons(port);
		*len = sizeof(*s6);
	} else {
		struct sockaddr_in *s4 = (struct sockaddr_in *)ss;

		if (strcmp(host, "*") == 0) {
			s4->sin_addr.s_addr = htonl(INADDR_ANY);
		} else if (inet_pton(AF_INET, host, &s4->sin_addr) != 1) {
			snprintf(err, errlen, "bad IPv4 address '%s'", host);
			return -1;
		}
		s4->sin_family = AF_INET;
		s4->sin_port = htons(port);
		*len = sizeof(*s4);
	}
	return 0;
}

int metrics_parse_addr(const char *text, struct sockaddr_storage *ss,
		       socklen_t *len, char *err, size_t errlen)
{
	char buf[sizeof("127.0.0.1:") + 8];
	bool bare = (text[0] == ':' && !strchr(text + 1, ':')) ||
		    (text[0] && !strpbrk(text, ":[]*."));
	uint16_t p;

	/* PORT or :PORT: loopback only, unless an address is given. */
	if (bare) {
		if (parse_port(text + (text[0] == ':'), &p) < 0) {
			snprintf(err, errlen, "'%s': expected [ADDR:]PORT, "
				 "[IPV6]:PORT or :PORT (PORT 0..65535)", text);
			return -1;
		}
		snprintf(buf, sizeof(buf), "127.0.0.1:%u", p);
		text = buf;
	}
	if (portal_parse_addr(text, ss, len, err, errlen) < 0)
		return -1;
	return 0;
}

void portal_format_addr(const struct sockaddr *sa, char *buf, size_t len)
{
	char host[INET6_ADDRSTRLEN];

	if (sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)sa;

		inet_ntop(AF_INET6, &s6->sin6_addr, host, sizeof(host));
		snprintf(buf, len, "[%s]:%u", host, ntohs(s6->sin6_port));
	} else if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *s4 = (const struct sockaddr_in *)sa;

		inet_ntop(AF_INET, &s4->sin_addr, host, sizeof(host));
		snprintf(buf, len, "%s:%u", host, ntohs(s4->sin_port));
	} else {
		snprintf(buf, len, "?");
	}
}
