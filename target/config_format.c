/*
 * The way back from struct cfg to tcqd.conf text (config.h): one
 * formatter per value type of the key table (config_keys.c), so that what
 * the parser reads the formatter writes, and a value formatted then
 * parsed is the value again. tcqctl save, tcqctl config and the live
 * changes' copy of the configuration are built on it.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>
#include <arpa/inet.h>
#include "tcq/chap.h"
#include "tcq/log.h"
#include "scsi/alua.h"
#include "target/config.h"
#include "target/config_keys.h"
#include "target/config_priv.h"

#define FIELD(base, k) ((const char *)(base) + (k)->off)

/* ---- one formatter per type ------------------------------------------- */

void cfg_fmt_u32(const struct cfg_key *k, const struct cfg *c,
		    const void *base, cfg_emit *emit, void *ctx)
{
	char v[24];

	snprintf(v, sizeof(v), "%u", *(const uint32_t *)FIELD(base, k));
	emit(ctx, v);
}

void cfg_fmt_u16(const struct cfg_key *k, const struct cfg *c,
		    const void *base, cfg_emit *emit, void *ctx)
{
	char v[8];

	snprintf(v, sizeof(v), "%u", *(const uint16_t *)FIELD(base, k));
	emit(ctx, v);
}

void cfg_fmt_int(const struct cfg_key *k, const struct cfg *c,
		    const void *base, cfg_emit *emit, void *ctx)
{
	char v[16];

	snprintf(v, sizeof(v), "%d", *(const int *)FIELD(base, k));
	emit(ctx, v);
}

/* The largest unit that divides the size exactly: 1G, 64M, 4K, 1000. */
static void fmt_size_value(uint64_t s, cfg_emit *emit, void *ctx)
{
	static const char units[] = "KMGT";
	char v[32];
	int u = -1;

	while (u < 3 && s && (s & 1023) == 0) {
		s >>= 10;
		u++;
	}
	if (u < 0)
		snprintf(v, sizeof(v), "%llu", (unsigned long long)s);
	else
		snprintf(v, sizeof(v), "%llu%c", (unsigned long long)s,
			 units[u]);
	emit(ctx, v);
}

void cfg_fmt_size32(const struct cfg_key *k, const struct cfg *c,
		       const void *base, cfg_emit *emit, void *ctx)
{
	fmt_size_value(*(const uint32_t *)FIELD(base, k), emit, ctx);
}

void cfg_fmt_size64(const struct cfg_key *k, const struct cfg *c,
		       const void *base, cfg_emit *emit, void *ctx)
{
	fmt_size_value(*(const uint64_t *)FIELD(base, k), emit, ctx);
}

void cfg_fmt_bool(const struct cfg_key *k, const struct cfg *c,
		     const void *base, cfg_emit *emit, void *ctx)
{
	emit(ctx, *(const bool *)FIELD(base, k) ? "yes" : "no");
}

void cfg_fmt_tristate(const struct cfg_key *k, const struct cfg *c,
			 const void *base, cfg_emit *emit, void *ctx)
{
	int v = *(const int *)FIELD(base, k);

	emit(ctx, v < 0 ? "auto" : v ? "yes" : "no");
}

void cfg_fmt_digest(const struct cfg_key *k, const struct cfg *c,
		       const void *base, cfg_emit *emit, void *ctx)
{
	emit(ctx, *(const bool *)FIELD(base, k) ? "allow" : "deny");
}

void cfg_fmt_barrier(const struct cfg_key *k, const struct cfg *c,
			const void *base, cfg_emit *emit, void *ctx)
{
	static const char *const names[] = { "drain", "flush", "ignore" };
	uint8_t v = *(const uint8_t *)FIELD(base, k);

	emit(ctx, v < 3 ? names[v] : "drain");
}

void cfg_fmt_io_engine(const struct cfg_key *k, const struct cfg *c,
		       const void *base, cfg_emit *emit, void *ctx)
{
	static const char *const names[] = { "auto", "uring", "aio" };
	uint8_t v = *(const uint8_t *)FIELD(base, k);

	emit(ctx, v < 3 ? names[v] : "auto");
}

void cfg_fmt_qam(const struct cfg_key *k, const struct cfg *c,
		    const void *base, cfg_emit *emit, void *ctx)
{
	emit(ctx, *(const uint8_t *)FIELD(base, k) ? "unrestricted" :
						     "restricted");
}

void cfg_fmt_bit(const struct cfg_key *k, const struct cfg *c,
		 const void *base, cfg_emit *emit, void *ctx)
{
	emit(ctx, *(const uint8_t *)FIELD(base, k) ? "1" : "0");
}

void cfg_fmt_shared_state(const struct cfg_key *k, const struct cfg *c,
			     const void *base, cfg_emit *emit, void *ctx)
{
	emit(ctx, *(const bool *)FIELD(base, k) ? "none" : "auto");
}

void cfg_fmt_honour(const struct cfg_key *k, const struct cfg *c,
		    const void *base, cfg_emit *emit, void *ctx)
{
	emit(ctx, *(const bool *)FIELD(base, k) ? "ignore" : "honour");
}

void cfg_fmt_prefetch(const struct cfg_key *k, const struct cfg *c,
		      const void *base, cfg_emit *emit, void *ctx)
{
	static const char *const names[] = { "off", "auto", "on" };
	uint8_t v = *(const uint8_t *)FIELD(base, k);

	emit(ctx, v < 3 ? names[v] : "auto");
}

void cfg_fmt_cut_through(const struct cfg_key *k, const struct cfg *c,
			 const void *base, cfg_emit *emit, void *ctx)
{
	emit(ctx, *(const bool *)FIELD(base, k) ? "off" : "auto");
}

void cfg_fmt_lun_type(const struct cfg_key *k, const struct cfg *c,
		      const void *base, cfg_emit *emit, void *ctx)
{
	emit(ctx, *(const uint8_t *)FIELD(base, k) == CFG_LUN_CDROM ? "cdrom"
								    : "disk");
}

void cfg_fmt_log_level(const struct cfg_key *k, const struct cfg *c,
			  const void *base, cfg_emit *emit, void *ctx)
{
	static const char *const names[] = { "error", "warn", "info",
					     "debug" };

	if (c->log_level >= 0 && c->log_level < 4)
		emit(ctx, names[c->log_level]);
}

/* A malloc'ed string, NULL when unset. */
void cfg_fmt_string(const struct cfg_key *k, const struct cfg *c,
		       const void *base, cfg_emit *emit, void *ctx)
{
	const char *v = *(char *const *)FIELD(base, k);

	if (v)
		emit(ctx, v);
}

/* A char array; "" when unset. */
void cfg_fmt_text(const struct cfg_key *k, const struct cfg *c,
		     const void *base, cfg_emit *emit, void *ctx)
{
	const char *v = FIELD(base, k);

	if (*v)
		emit(ctx, v);
}

void cfg_fmt_chap_algs(const struct cfg_key *k, const struct cfg *c,
			  const void *base, cfg_emit *emit, void *ctx)
{
	char v[64] = "";
	size_t n = 0;

	for (int i = 0; i < c->set.nchap_algs && n < sizeof(v); i++)
		n += (size_t)snprintf(v + n, sizeof(v) - n, "%s%s",
				      i ? "," : "",
				      chap_alg_name(c->set.chap_algs[i]));
	emit(ctx, v);
}

void cfg_fmt_listen(const struct cfg_key *k, const struct cfg *c,
		       const void *base, cfg_emit *emit, void *ctx)
{
	for (int i = 0; i < c->nlisten; i++)
		emit(ctx, c->listen[i]);
}

void cfg_fmt_allow_name(const struct cfg_key *k, const struct cfg *c,
			   const void *base, cfg_emit *emit, void *ctx)
{
	const struct acl *a = (const struct acl *)FIELD(base, k);

	for (int i = 0; i < a->nnames; i++)
		emit(ctx, a->names[i]);
}

void cfg_fmt_allow_net(const struct cfg_key *k, const struct cfg *c,
			  const void *base, cfg_emit *emit, void *ctx)
{
	const struct acl *a = (const struct acl *)FIELD(base, k);

	for (int i = 0; i < a->nnets; i++) {
		const struct acl_net *n = &a->nets[i];
		char host[INET6_ADDRSTRLEN], v[INET6_ADDRSTRLEN + 8];

		if (!inet_ntop(n->family, n->addr, host, sizeof(host)))
			continue;
		snprintf(v, sizeof(v), "%s/%u", host, n->prefix);
		emit(ctx, v);
	}
}

void cfg_fmt_port_group(const struct cfg_key *k, const struct cfg *c,
			   const void *base, cfg_emit *emit, void *ctx)
{
	const struct alua_cfg *a = (const struct alua_cfg *)FIELD(base, k);

	for (unsigned i = 0; i < a->ngroups; i++) {
		const struct alua_group *g = &a->groups[i];
		char v[64 + ALUA_MAX_PORTS * 6];
		size_t n;

		n = (size_t)snprintf(v, sizeof(v), "%u:%s:", g->id,
				     alua_state_name(g->state));
		for (unsigned j = 0; j < g->nports && n < sizeof(v); j++)
			n += (size_t)snprintf(v + n, sizeof(v) - n, "%s%u",
					      j ? "," : "", g->ports[j]);
		emit(ctx, v);
	}
}

/* luns: the map, from the section itself (the key's field is only a
 * place holder), 16 entries a line so that each fits a line of the file
 * ("255:255:ro," is 11 characters). */
void cfg_fmt_lun_map(const struct cfg_key *k, const struct cfg *c,
		     const void *base, cfg_emit *emit, void *ctx)
{
	const struct cfg_initiator *ci = base;
	char v[CFG_MAP_PER_LINE * 12 + 8];
	int i = 0;

	if (!ci->has_map)
		return;
	do {
		cfg_format_lun_map(ci, i, i + CFG_MAP_PER_LINE, v, sizeof(v));
		emit(ctx, v);
		i += CFG_MAP_PER_LINE;
	} while (i < ci->nmap);
}
