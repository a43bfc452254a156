/*
 * Access control of a target: which initiator names (exact, or wildcards
 * with * and ?) and which networks (CIDR, IPv4 and IPv6) may log in. An
 * empty list allows everyone; with both lists set, an initiator must
 * match both (its name and its address).
 */
#ifndef TCQ_ACL_H
#define TCQ_ACL_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

struct acl_net {
	int family;		/* AF_INET or AF_INET6 */
	uint8_t addr[16];	/* network byte order, host bits cleared */
	unsigned prefix;	/* 0..32 or 0..128 */
};

struct acl {
	char **names;		/* patterns, lower case */
	int nnames;
	struct acl_net *nets;
	int nnets;
};

void acl_init(struct acl *a);
void acl_free(struct acl *a);
/* Deep copy (dst is overwritten); -1 when out of memory. */
int acl_copy(struct acl *dst, const struct acl *src);
bool acl_empty(const struct acl *a);

/* Repeatable configuration entries; -1 with a message in err. */
int acl_add_name(struct acl *a, const char *pattern, char *err,
		 size_t errlen);
int acl_add_net(struct acl *a, const char *cidr, char *err, size_t errlen);

/* Removes an entry added with the same text; -1 when there is none. */
int acl_remove_name(struct acl *a, const char *pattern);
int acl_remove_net(struct acl *a, const char *cidr);

/* "10.0.0.0/8", "fd00::/8", or a single address (full-length prefix). */
int acl_parse_net(const char *cidr, struct acl_net *out, char *err,
		  size_t errlen);
/* Glob match, case-insensitive: * any run, ? one character. */
bool acl_name_match(const char *pattern, const char *name);
/* Whether sa (IPv4, IPv6, or v4-mapped IPv6) lies in n. */
bool acl_net_match(const struct acl_net *n, const struct sockaddr *sa);

/* May initiator iname, connecting from peer, use the target? */
bool acl_allows(const struct acl *a, const char *iname,
		const struct sockaddr *peer);
#endif
