/* Access control lists of targets (see acl.h). */
#include <arpa/inet.h>
#include <ctype.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "target/acl.h"

#define ACL_NAME_MAX 224

void acl_init(struct acl *a)
{
	memset(a, 0, sizeof(*a));
}

void acl_free(struct acl *a)
{
	for (int i = 0; i < a->nnames; i++)
		free(a->names[i]);
	free(a->names);
	free(a->nets);
	acl_init(a);
}

bool acl_empty(const struct acl *a)
{
	return a->nnames == 0 && a->nnets == 0;
}

int acl_copy(struct acl *dst, const struct acl *src)
{
	acl_init(dst);
	if (src->nnames) {
		dst->names = calloc((size_t)src->nnames, sizeof(*dst->names));
		if (!dst->names)
			goto oom;
		for (; dst->nnames < src->nnames; dst->nnames++) {
			dst->names[dst->nnames] = strdup(src->names[dst->nnames]);
			if (!dst->names[dst->nnames])
				goto oom;
		}
	}
	if (src->nnets) {
		dst->nets = malloc(sizeof(*dst->nets) * (size_t)src->nnets);
		if (!dst->nets)
			goto oom;
		memcpy(dst->nets, src->nets, sizeof(*dst->nets) * (size_t)src->nnets);
		dst->nnets = src->nnets;
	}
	return 0;
oom:
	acl_free(dst);
	return -1;
}

int acl_add_name(struct acl *a, const char *pattern, char *err, size_t errlen)
{
	size_t len = strlen(pattern);
	char **v, *d;

	if (len == 0 || len >= ACL_NAME_MAX) {
		snprintf(err, errlen, "initiator name pattern must be 1..%d bytes",
			 ACL_NAME_MAX - 1);
		return -1;
	}
	for (const char *p = pattern; *p; p++) {
		unsigned char ch = (unsigned char)*p;

		if (!(isalnum(ch) || ch == '-' || ch == '.' || ch == ':' ||
		      ch == '*' || ch == '?')) {
			snprintf(err, errlen,
				 "bad initiator name pattern '%s': only letters, digits, '-', '.', ':', '*' and '?'",
				 pattern);
			return -1;
		}
	}
	v = realloc(a->names, sizeof(*v) * (size_t)(a->nnames + 1));
	if (!v || !(d = strdup(pattern))) {
		if (v)
			a->names = v;
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	a->names = v;
	for (char *p = d; *p; p++)
		*p = (char)tolower((unsigned char)*p);
	a->names[a->nnames++] = d;
	return 0;
}

int acl_parse_net(const char *cidr, struct acl_net *out, char *err,
		  size_t errlen)
{
	char host[INET6_ADDRSTRLEN + 1];
	const char *slash = strchr(cidr, '/');
	size_t hl = slash ? (size_t)(slash - cidr) : strlen(cidr);
	unsigned max, prefix;

	memset(out, 0, sizeof(*out));
	if (hl == 0 || hl >= sizeof(host))
		goto bad;
	memcpy(host, cidr, hl);
	host[hl] = 0;
	if (inet_pton(AF_INET, host, out->addr) == 1) {
		out->family = AF_INET;
		max = 32;
	} else if (inet_pton(AF_INET6, host, out->addr) == 1) {
		out->family = AF_INET6;
		max = 128;
	} else {
		goto bad;
	}
	prefix = max;
	if (slash) {
		const char *p = slash + 1;

		if (!*p || strlen(p) > 3)
			goto bad;
		prefix = 0;
		for (; *p; p++) {
			if (*p < '0' || *p > '9')
				goto bad;
			prefix = prefix * 10 + (unsigned)(*p - '0');
		}
		if (prefix > max)
			goto bad;
	}
	out->prefix = prefix;
	/* Clear host bits, so matching is a plain masked compare. */
	for (unsigned i = 0; i < max / 8; i++) {
		unsigned keep = prefix > i * 8 ? prefix - i * 8 : 0;

		if (keep < 8)
			out->addr[i] &= (uint8_t)(0xff00u >> keep);
	}
	return 0;
bad:
	snprintf(err, errlen,
		 "bad network '%s': expected ADDRESS[/PREFIX], IPv4 or IPv6", cidr);
	return -1;
}

int acl_add_net(struct acl *a, const char *cidr, char *err, size_t errlen)
{
	struct acl_net n, *v;

	if (acl_parse_net(cidr, &n, err, errlen) < 0)
		return -1;
	v = realloc(a->nets, sizeof(*v) * (size_t)(a->nnets + 1));
	if (!v) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	a->nets = v;
	a->nets[a->nnets++] = n;
	return 0;
}

/* Iterative glob with one backtrack point: linear in practice, and
 * never worse than len(pattern) * len(name). */
bool acl_name_match(const char *pat, const char *name)
{
	const char *star = NULL, *resume = NULL;

	while (*name) {
		if (*pat == '*') {
			star = pat++;
			resume = name;
		} else if (*pat == '?' ||
			   (*pat && tolower((unsigned char)*pat) ==
					tolower((unsigned char)*name))) {
			pat++;
			name++;
		} else if (star) {
			pat = star + 1;
			name = ++resume;
		} else {
			return false;
		}
	}
	while (*pat == '*')
		pat++;
	return *pat == 0;
}

static bool prefix_equal(const uint8_t *a, const uint8_t *b, unsigned prefix)
{
	unsigned full = prefix / 8, rest = prefix % 8;

	if (memcmp(a, b, full))
		return false;
	if (rest) {
		uint8_t m = (uint8_t)(0xff00u >> rest);

		return (a[full] & m) == (b[full] & m);
	}
	return true;
}

bool acl_net_match(const struct acl_net *n, const struct sockaddr *sa)
{
	const uint8_t *addr;
	int family = sa->sa_family;

	if (family == AF_INET) {
		addr = (const uint8_t *)&((const struct sockaddr_in *)sa)->sin_addr;
	} else if (family == AF_INET6) {
		const struct in6_addr *a6 =
			&((const struct sockaddr_in6 *)sa)->sin6_addr;

		addr = a6->s6_addr;
		if (IN6_IS_ADDR_V4MAPPED(a6)) {
			family = AF_INET;
			addr += 12;
		}
	} else {
		return false;
	}
	if (family != n->family)
		return false;
	return prefix_equal(addr, n->addr, n->prefix);
}

bool acl_allows(const struct acl *a, const char *iname,
		const struct sockaddr *peer)
{
	bool name_ok = a->nnames == 0, net_ok = a->nnets == 0;

	for (int i = 0; i < a->nnames && !name_ok; i++)
		name_ok = acl_name_match(a->names[i], iname);
	for (int i = 0; i < a->nnets && !net_ok && peer; i++)
		net_ok = acl_net_match(&a->nets[i], peer);
	return name_ok && net_ok;
}

int acl_remove_name(struct acl *a, const char *pattern)
{
	for (int i = 0; i < a->nnames; i++) {
		if (strcasecmp(a->names[i], pattern))
			continue;
		free(a->names[i]);
		memmove(&a->names[i], &a->names[i + 1],
			sizeof(*a->names) * (size_t)(a->nnames - i - 1));
		a->nnames--;
		return 0;
	}
	return -1;
}

int acl_remove_net(struct acl *a, const char *cidr)
{
	struct acl_net n;
	char err[160];

	if (acl_parse_net(cidr, &n, err, sizeof(err)) < 0)
		return -1;
	for (int i = 0; i < a->nnets; i++) {
		if (a->nets[i].family != n.family ||
		    a->nets[i].prefix != n.prefix ||
		    memcmp(a->nets[i].addr, n.addr, sizeof(n.addr)))
			continue;
		memmove(&a->nets[i], &a->nets[i + 1],
			sizeof(*a->nets) * (size_t)(a->nnets - i - 1));
		a->nnets--;
		return 0;
	}
	return -1;
}
