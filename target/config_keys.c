/*
 * The keys of tcqd.conf (config_keys.h): the value types with their
 * setters, then the table. conf/tcqd.conf documents each key at length.
 */
#include <config.h>	/* autoconf's (HAVE_LIBISNS) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "tcq/log.h"
#include "target/config.h"
#include "target/config_keys.h"
#include "target/config_priv.h"
#include "target/portal.h"

#define FIELD(base, k) ((char *)(base) + (k)->off)

/* ---- numbers and sizes ------------------------------------------------- */

enum number_field { AS_U32, AS_U16, AS_INT };

/* A decimal number within the key's range. */
static int set_number(const struct cfg_key *k, void *base, const char *v,
		      enum number_field as, char *err, size_t errlen)
{
	char *field = FIELD(base, k);
	uint64_t u;

	if (cfg_parse_uint(v, k->min, k->max, &u, err, errlen) < 0)
		return -1;
	if (as == AS_U32)
		*(uint32_t *)field = (uint32_t)u;
	else if (as == AS_U16)
		*(uint16_t *)field = (uint16_t)u;
	else
		*(int *)field = (int)u;
	return 0;
}

static int set_u32(const struct cfg_key *k, struct cfg *c, void *base,
		   const char *v, char *err, size_t errlen)
{
	return set_number(k, base, v, AS_U32, err, errlen);
}

static int set_u16(const struct cfg_key *k, struct cfg *c, void *base,
		   const char *v, char *err, size_t errlen)
{
	return set_number(k, base, v, AS_U16, err, errlen);
}

static int set_int(const struct cfg_key *k, struct cfg *c, void *base,
		   const char *v, char *err, size_t errlen)
{
	return set_number(k, base, v, AS_INT, err, errlen);
}

/* tpgt given: the portal group tag is no longer rel_port_id's. */
static int set_tpgt(const struct cfg_key *k, struct cfg *c, void *base,
		    const char *v, char *err, size_t errlen)
{
	((struct cfg_target *)base)->tpgt_set = true;
	return set_u16(k, c, base, v, err, errlen);
}

static int set_size32(const struct cfg_key *k, struct cfg *c, void *base,
		      const char *v, char *err, size_t errlen)
{
	uint64_t u;

	if (cfg_parse_size(v, &u, err, errlen) < 0)
		return -1;
	if (u < k->min || u > k->max) {
		snprintf(err, errlen, "'%s' is out of range %llu..%llu", v,
			 (unsigned long long)k->min,
			 (unsigned long long)k->max);
		return -1;
	}
	*(uint32_t *)FIELD(base, k) = (uint32_t)u;
	return 0;
}

static int set_size64(const struct cfg_key *k, struct cfg *c, void *base,
		      const char *v, char *err, size_t errlen)
{
	return cfg_parse_size(v, (uint64_t *)FIELD(base, k), err, errlen);
}

static int set_block_size(const struct cfg_key *k, struct cfg *c,
			  void *base, const char *v, char *err, size_t errlen)
{
	return cfg_parse_block_size(v, (uint32_t *)FIELD(base, k), err,
				    errlen);
}

/* ---- words ------------------------------------------------------------- */

static int set_bool(const struct cfg_key *k, struct cfg *c, void *base,
		    const char *v, char *err, size_t errlen)
{
	return cfg_parse_bool(v, (bool *)FIELD(base, k), err, errlen);
}

/* auto|yes|no into an int: -1, 1, 0. */
static int set_tristate(const struct cfg_key *k, struct cfg *c, void *base,
			const char *v, char *err, size_t errlen)
{
	bool b;

	if (strcasecmp(v, "auto") == 0) {
		*(int *)FIELD(base, k) = -1;
		return 0;
	}
	if (cfg_parse_bool(v, &b, err, errlen) < 0)
		return -1;
	*(int *)FIELD(base, k) = b;
	return 0;
}

/* off|auto|on into a uint8_t: enum bdev_prefetch's order. */
static int set_prefetch(const struct cfg_key *k, struct cfg *c, void *base,
			const char *v, char *err, size_t errlen)
{
	static const char *const words[] = { "off", "auto", "on" };
	unsigned i;

	if (cfg_parse_choice(v, words, 3, &i, err, errlen) < 0)
		return -1;
	*(uint8_t *)FIELD(base, k) = (uint8_t)i;
	return 0;
}

/* 0|1 into a uint8_t: a mode page bit the standard names by its value. */
static int set_bit(const struct cfg_key *k, struct cfg *c, void *base,
		   const char *v, char *err, size_t errlen)
{
	static const char *const words[] = { "0", "1" };
	unsigned i;

	if (cfg_parse_choice(v, words, 2, &i, err, errlen) < 0)
		return -1;
	*(uint8_t *)FIELD(base, k) = (uint8_t)i;
	return 0;
}

/* disk|cdrom into enum cfg_lun_type. */
static int set_lun_type(const struct cfg_key *k, struct cfg *c, void *base,
			const char *v, char *err, size_t errlen)
{
	static const char *const words[] = { "disk", "cdrom" };
	unsigned i;

	if (cfg_parse_choice(v, words, 2, &i, err, errlen) < 0)
		return -1;
	*(uint8_t *)FIELD(base, k) = (uint8_t)i;
	return 0;
}

/* auto|off into a bool that is true for off (cut_through). */
static int set_cut_through(const struct cfg_key *k, struct cfg *c,
			   void *base, const char *v, char *err, size_t errlen)
{
	return cfg_parse_cut_through(v, (bool *)FIELD(base, k), err, errlen);
}

/* A path, or none when empty (a cdrom without a medium: tcqctl set LUN
 * path= takes the image out). */
static int set_path(const struct cfg_key *k, struct cfg *c, void *base,
		    const char *v, char *err, size_t errlen)
{
	char **field = (char **)FIELD(base, k);
	char *d = NULL;

	if (*v && !(d = strdup(v))) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	free(*field);
	*field = d;
	return 0;
}

/* allow|deny into a bool. */
static int set_digest(const struct cfg_key *k, struct cfg *c, void *base,
		      const char *v, char *err, size_t errlen)
{
	static const char *const words[] = { "allow", "deny" };
	unsigned i;

	if (cfg_parse_choice(v, words, 2, &i, err, errlen) < 0)
		return -1;
	*(bool *)FIELD(base, k) = i == 0;
	return 0;
}

static int set_barrier(const struct cfg_key *k, struct cfg *c, void *base,
		       const char *v, char *err, size_t errlen)
{
	return cfg_parse_barrier(v, (uint8_t *)FIELD(base, k), err, errlen);
}

static int set_io_engine(const struct cfg_key *k, struct cfg *c, void *base,
			 const char *v, char *err, size_t errlen)
{
	return cfg_parse_io_engine(v, (uint8_t *)FIELD(base, k), err, errlen);
}

static int set_qam(const struct cfg_key *k, struct cfg *c, void *base,
		   const char *v, char *err, size_t errlen)
{
	return cfg_parse_qam(v, (uint8_t *)FIELD(base, k), err, errlen);
}

static int set_shared_state(const struct cfg_key *k, struct cfg *c,
			    void *base, const char *v, char *err,
			    size_t errlen)
{
	return cfg_parse_shared_state(v, (bool *)FIELD(base, k), err, errlen);
}

static int set_honour(const struct cfg_key *k, struct cfg *c, void *base,
		      const char *v, char *err, size_t errlen)
{
	return cfg_parse_honour(v, (bool *)FIELD(base, k), err, errlen);
}

static int set_log_level(const struct cfg_key *k, struct cfg *c, void *base,
			 const char *v, char *err, size_t errlen)
{
	int lv = log_parse_level(v);

	if (lv < 0) {
		snprintf(err, errlen, "'%s' is not error, warn, info or debug",
			 v);
		return -1;
	}
	c->log_level = lv;
	return 0;
}

/* ---- text -------------------------------------------------------------- */

/* A strdup'ed string, replacing the old one. */
static int set_string(const struct cfg_key *k, struct cfg *c, void *base,
		      const char *v, char *err, size_t errlen)
{
	char **field = (char **)FIELD(base, k);
	char *d;

	if (!*v) {
		snprintf(err, errlen, "empty value");
		return -1;
	}
	if (!(d = strdup(v))) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	free(*field);
	*field = d;
	return 0;
}

/* Into char[TCQ_NAME_MAX]. */
static int set_name_text(const struct cfg_key *k, struct cfg *c, void *base,
			 const char *v, char *err, size_t errlen)
{
	if (strlen(v) >= TCQ_NAME_MAX) {
		snprintf(err, errlen, "longer than %d bytes", TCQ_NAME_MAX - 1);
		return -1;
	}
	snprintf(FIELD(base, k), TCQ_NAME_MAX, "%s", v);
	return 0;
}

/* [ADDR:]PORT of /metrics (target/metrics_http.c), checked now. */
static int set_metrics(const struct cfg_key *k, struct cfg *c, void *base,
		       const char *v, char *err, size_t errlen)
{
	struct sockaddr_storage ss;
	socklen_t len;

	if (strlen(v) >= TCQ_NAME_MAX) {
		snprintf(err, errlen, "longer than %d bytes", TCQ_NAME_MAX - 1);
		return -1;
	}
	if (metrics_parse_addr(v, &ss, &len, err, errlen) < 0)
		return -1;
	snprintf(FIELD(base, k), TCQ_NAME_MAX, "%s", v);
	return 0;
}

/* iSNS server HOST[:PORT], or off (stored as ""). */
static int set_isns(const struct cfg_key *k, struct cfg *c, void *base,
		    const char *v, char *err, size_t errlen)
{
	char host[TCQ_NAME_MAX];
	uint16_t port;

	if (strlen(v) >= TCQ_NAME_MAX) {
		snprintf(err, errlen, "longer than %d bytes", TCQ_NAME_MAX - 1);
		return -1;
	}
	if (cfg_parse_isns(v, host, sizeof(host), &port, err, errlen) < 0)
		return -1;
#ifndef HAVE_LIBISNS
	if (host[0]) {
		snprintf(err, errlen, "this tcqd was built without libisns "
			 "(configure --with-isns)");
		return -1;
	}
#endif
	snprintf(FIELD(base, k), TCQ_NAME_MAX, "%s", host[0] ? v : "");
	return 0;
}

static int set_serial(const struct cfg_key *k, struct cfg *c, void *base,
		      const char *v, char *err, size_t errlen)
{
	return cfg_parse_serial(v, FIELD(base, k), err, errlen);
}

/* vendor, product, revision: the key's max is the field's length. */
static int set_inq_text(const struct cfg_key *k, struct cfg *c, void *base,
			const char *v, char *err, size_t errlen)
{
	return cfg_parse_inquiry_text(v, (size_t)k->max, FIELD(base, k), err,
				      errlen);
}

/* redirect: checked, and kept as "ADDR:PORT[,permanent]" with the port in
 * plain decimal; "" clears it. */
static int set_redirect(const struct cfg_key *k, struct cfg *c, void *base,
			const char *v, char *err, size_t errlen)
{
	char addr[TCQ_REDIRECT_MAX - sizeof(",permanent")];
	bool permanent;

	if (strlen(v) >= TCQ_REDIRECT_MAX) {
		snprintf(err, errlen, "longer than %d bytes",
			 TCQ_REDIRECT_MAX - 1);
		return -1;
	}
	if (cfg_parse_redirect(v, addr, sizeof(addr), &permanent, err,
			       errlen) < 0)
		return -1;
	snprintf(FIELD(base, k), TCQ_REDIRECT_MAX, "%s%s", addr,
		 permanent ? ",permanent" : "");
	return 0;
}

/* ---- CHAP -------------------------------------------------------------- */

static int set_chap_user(const struct cfg_key *k, struct cfg *c, void *base,
			 const char *v, char *err, size_t errlen)
{
	if (!*v || strlen(v) >= AUTH_USER_MAX) {
		snprintf(err, errlen, "must be 1..%d bytes", AUTH_USER_MAX - 1);
		return -1;
	}
	snprintf(FIELD(base, k), AUTH_USER_MAX, "%s", v);
	return 0;
}

static int set_chap_secret(const struct cfg_key *k, struct cfg *c,
			   void *base, const char *v, char *err,
			   size_t errlen)
{
	/* Never echo the secret in a message. */
	if (strlen(v) < AUTH_SECRET_MIN || strlen(v) >= AUTH_SECRET_MAX) {
		snprintf(err, errlen, "a CHAP secret must be %d..%d bytes long",
			 AUTH_SECRET_MIN, AUTH_SECRET_MAX - 1);
		return -1;
	}
	snprintf(FIELD(base, k), AUTH_SECRET_MAX, "%s", v);
	c->has_secrets = true;
	return 0;
}

static int set_chap_algs(const struct cfg_key *k, struct cfg *c, void *base,
			 const char *v, char *err, size_t errlen)
{
	int n = auth_chap_algs_parse(v, c->set.chap_algs, CHAP_ALG_COUNT,
				     err, errlen);

	if (n < 0)
		return -1;
	c->set.nchap_algs = (uint8_t)n;
	return 0;
}

/* luns of an [initiator] section: each line adds to the map. */
static int set_lun_map(const struct cfg_key *k, struct cfg *c, void *base,
		       const char *v, char *err, size_t errlen)
{
	return cfg_parse_lun_map(v, base, err, errlen);
}

/* ---- repeatable: each line adds one ------------------------------------ */

static int add_listen(const struct cfg_key *k, struct cfg *c, void *base,
		      const char *v, char *err, size_t errlen)
{
	return cfg_add_listen(c, v, err, errlen);
}

static int add_allowed_name(const struct cfg_key *k, struct cfg *c,
			    void *base, const char *v, char *err,
			    size_t errlen)
{
	return acl_add_name((struct acl *)FIELD(base, k), v, err, errlen);
}

static int add_allowed_net(const struct cfg_key *k, struct cfg *c,
			   void *base, const char *v, char *err,
			   size_t errlen)
{
	return acl_add_net((struct acl *)FIELD(base, k), v, err, errlen);
}

static int add_port_group(const struct cfg_key *k, struct cfg *c,
			  void *base, const char *v, char *err, size_t errlen)
{
	return alua_add_group((struct alua_cfg *)FIELD(base, k), v, err,
			      errlen);
}

/* ---- the types --------------------------------------------------------- */

static const struct cfg_type
	T_U32 = { "NUMBER", set_u32, false, cfg_fmt_u32 },
	T_U16 = { "NUMBER", set_u16, false, cfg_fmt_u16 },
	T_INT = { "NUMBER", set_int, false, cfg_fmt_int },
	T_TPGT = { "NUMBER", set_tpgt, false, cfg_fmt_u16 },
	T_SIZE32 = { "SIZE", set_size32, false, cfg_fmt_size32 },
	T_SIZE64 = { "SIZE", set_size64, false, cfg_fmt_size64 },
	T_BLOCK_SIZE = { "512|4096", set_block_size, false, cfg_fmt_u32 },
	T_BOOL = { "yes|no", set_bool, false, cfg_fmt_bool },
	T_BIT = { "0|1", set_bit, false, cfg_fmt_bit },
	T_TRISTATE = { "auto|yes|no", set_tristate, false, cfg_fmt_tristate },
	T_DIGEST = { "allow|deny", set_digest, false, cfg_fmt_digest },
	T_BARRIER = { "drain|flush|ignore", set_barrier, false, cfg_fmt_barrier },
	T_QAM = { "restricted|unrestricted", set_qam, false, cfg_fmt_qam },
	T_IO_ENGINE = { "auto|uring|aio", set_io_engine, false, cfg_fmt_io_engine },
	T_SHARED_STATE = { "auto|none", set_shared_state, false, cfg_fmt_shared_state },
	T_HONOUR = { "honour|ignore", set_honour, false, cfg_fmt_honour },
	T_PREFETCH = { "auto|on|off", set_prefetch, false, cfg_fmt_prefetch },
	T_CUT = { "auto|off", set_cut_through, false, cfg_fmt_cut_through },
	T_LOG_LEVEL = { "error|warn|info|debug", set_log_level, false, cfg_fmt_log_level },
	T_STRING = { "TEXT", set_string, false, cfg_fmt_string },
	T_FILE = { "FILE", set_string, false, cfg_fmt_string },
	T_PATH = { "TEXT", set_path, false, cfg_fmt_string },
	T_LUN_TYPE = { "disk|cdrom", set_lun_type, false, cfg_fmt_lun_type },
	T_NAME_TEXT = { "TEXT", set_name_text, false, cfg_fmt_text },
	T_SERIAL = { "SERIAL", set_serial, false, cfg_fmt_text },
	T_INQ_TEXT = { "TEXT", set_inq_text, false, cfg_fmt_text },
	T_METRICS = { "[ADDR:]PORT", set_metrics, false, cfg_fmt_text },
	T_REDIRECT = { "ADDR:PORT[,permanent]", set_redirect, false, cfg_fmt_text },
	T_ISNS = { "HOST[:PORT]|off", set_isns, false, cfg_fmt_text },
	T_CHAP_USER = { "NAME", set_chap_user, false, cfg_fmt_text },
	T_CHAP_SECRET = { "SECRET", set_chap_secret, false, cfg_fmt_text },
	T_CHAP_ALGS = { "ALG[,ALG...]", set_chap_algs, false, cfg_fmt_chap_algs },
	T_LUN_MAP = { "N[:M][:ro],...", set_lun_map, true, cfg_fmt_lun_map },
	T_LISTEN = { "ADDR:PORT", add_listen, true, cfg_fmt_listen },
	T_ALLOW_NAME = { "NAME-PATTERN", add_allowed_name, true, cfg_fmt_allow_name },
	T_ALLOW_NET = { "ADDR[/BITS]", add_allowed_net, true, cfg_fmt_allow_net },
	T_PORT_GROUP = { "ID:STATE:PORT[,PORT...]", add_port_group, true, cfg_fmt_port_group };

/* ---- the table --------------------------------------------------------- */

#define G(f) CFG_GLOBAL, offsetof(struct tcq_settings, f)
#define T(f) CFG_TARGET, offsetof(struct cfg_target, f)
#define L(f) CFG_LUN, offsetof(struct cfg_lun, f)
#define I(f) CFG_INITIATOR, offsetof(struct cfg_initiator, f)
#define G_CFG CFG_GLOBAL, 0	/* [global], but kept in struct cfg itself */
#define DSL_MAX 16777215	/* data segment and burst lengths: 2^24 - 1 */

const struct cfg_key cfg_keys[] = {
	/* [global] */
	{ "listen", G_CFG, &T_LISTEN, 0, 0,
	  "a portal to listen on (default 0.0.0.0:3260)",
	  CFG_LIVE },
	{ "threads", G(threads), &T_INT, 0, CFG_MAX_THREADS,
	  "reactor threads; 0: one per CPU",
	  CFG_RESTART },
	{ "io_engine", G(io_engine), &T_IO_ENGINE, 0, 0,
	  "event loop and file I/O: io_uring, or epoll and libaio",
	  CFG_RESTART },
	{ "log_level", G_CFG, &T_LOG_LEVEL, 0, 0,
	  "what the log tells (default info)",
	  CFG_LIVE },
	{ "max_recv_data_segment_length", G(max_recv_dsl), &T_SIZE32, 512,
	  DSL_MAX, "MaxRecvDataSegmentLength: the largest data segment taken",
	  CFG_RESTART },
	{ "max_burst_length", G(max_burst), &T_SIZE32, 512, DSL_MAX,
	  "MaxBurstLength: the largest solicited burst or Data-In run",
	  CFG_RESTART },
	{ "first_burst_length", G(first_burst), &T_SIZE32, 512, DSL_MAX,
	  "FirstBurstLength: unsolicited data per command",
	  CFG_RESTART },
	{ "max_outstanding_r2t", G(max_outstanding_r2t), &T_U32, 1, 65535,
	  "MaxOutstandingR2T: R2Ts per command at a time",
	  CFG_RESTART },
	{ "initial_r2t", G(initial_r2t), &T_BOOL, 0, 0,
	  "InitialR2T: no lets initiators send unsolicited Data-Out",
	  CFG_RESTART },
	{ "immediate_data", G(immediate_data), &T_BOOL, 0, 0,
	  "ImmediateData: data may ride in the SCSI Command PDU",
	  CFG_RESTART },
	{ "cmd_window", G(cmd_window), &T_U32, 1, 65536,
	  "commands a session may send ahead: MaxCmdSN - ExpCmdSN + 1",
	  CFG_RESTART },
	{ "nop_interval", G(nop_interval_s), &T_U32, 0, 3600,
	  "seconds between NOP-In pings to an idle initiator; 0: none",
	  CFG_RESTART },
	{ "nop_timeout", G(nop_timeout_s), &T_U32, 1, 3600,
	  "seconds a ping may go unanswered before the connection drops",
	  CFG_RESTART },
	{ "login_timeout", G(login_timeout_s), &T_U32, 1, 3600,
	  "seconds a connection may take to log in",
	  CFG_RESTART },
	{ "max_transfer_length", G(max_xfer_len), &T_SIZE32, 4096, 1u << 30,
	  "the largest transfer one command may ask for",
	  CFG_RESTART },
	{ "header_digest", G(header_digest_allowed), &T_DIGEST, 0, 0,
	  "CRC32C header digests if the initiator asks, or never",
	  CFG_RESTART },
	{ "data_digest", G(data_digest_allowed), &T_DIGEST, 0, 0,
	  "CRC32C data digests if the initiator asks, or never",
	  CFG_RESTART },
	{ "max_sessions", G(max_sessions), &T_U32, 0, 65535,
	  "sessions in all, at most; 0: no limit",
	  CFG_RESTART },
	{ "login_idle_timeout", G(login_idle_timeout_s), &T_U32, 1, 3600,
	  "seconds a connection not yet logged in may stay silent",
	  CFG_RESTART },
	{ "max_pending_logins", G(max_pending_logins), &T_U32, 1, 65536,
	  "connections not yet logged in, at most",
	  CFG_RESTART },
	{ "chap_algorithms", G(chap_algs), &T_CHAP_ALGS, 0, 0,
	  "CHAP_A algorithms taken, preferred first",
	  CFG_LIVE },
	{ "discovery_chap_user", G(discovery_chap.chap.user), &T_CHAP_USER,
	  0, 0, "CHAP name a discovery session must log in with",
	  CFG_LIVE },
	{ "discovery_chap_secret", G(discovery_chap.chap.secret),
	  &T_CHAP_SECRET, 0, 0, "its CHAP secret",
	  CFG_LIVE },
	{ "discovery_mutual_chap_user", G(discovery_chap.mutual.user),
	  &T_CHAP_USER, 0, 0, "the target's name for mutual CHAP (discovery)",
	  CFG_LIVE },
	{ "discovery_mutual_chap_secret", G(discovery_chap.mutual.secret),
	  &T_CHAP_SECRET, 0, 0,
	  "the target's secret for mutual CHAP (discovery)",
	  CFG_LIVE },
	{ "ctl", G(ctl_path), &T_NAME_TEXT, 0, 0,
	  "unix socket tcqctl talks to; none if unset",
	  CFG_RESTART },
	{ "state_dir", G(state_dir), &T_NAME_TEXT, 0, 0,
	  "folder for APTPL reservations (default /var/lib/tcq)",
	  CFG_RESTART },
	{ "metrics", G(metrics), &T_METRICS, 0, 0,
	  "serve Prometheus /metrics over HTTP here; PORT alone: loopback",
	  CFG_RESTART },
	{ "isns", G(isns), &T_ISNS, 0, 0,
	  "register targets and portals with this iSNS server (port 3205)",
	  CFG_LIVE },

	/* [target NAME] */
	{ "alias", T(alias), &T_NAME_TEXT, 0, 0,
	  "TargetAlias, sent at login",
	  CFG_LIVE },
	{ "tpgt", T(tpgt), &T_TPGT, 1, 65535,
	  "target portal group tag (default: rel_port_id)",
	  CFG_RECREATE },
	{ "chap_user", T(chap.chap.user), &T_CHAP_USER, 0, 0,
	  "CHAP name initiators must log in with",
	  CFG_LIVE },
	{ "chap_secret", T(chap.chap.secret), &T_CHAP_SECRET, 0, 0,
	  "its CHAP secret",
	  CFG_LIVE },
	{ "mutual_chap_user", T(chap.mutual.user), &T_CHAP_USER, 0, 0,
	  "the target's name for mutual CHAP",
	  CFG_LIVE },
	{ "mutual_chap_secret", T(chap.mutual.secret), &T_CHAP_SECRET, 0, 0,
	  "the target's secret for mutual CHAP",
	  CFG_LIVE },
	{ "allow_initiator", T(acl), &T_ALLOW_NAME, 0, 0,
	  "an initiator name that may log in (wildcards * and ?)",
	  CFG_LIVE },
	{ "allow_network", T(acl), &T_ALLOW_NET, 0, 0,
	  "a network initiators may log in from",
	  CFG_LIVE },
	{ "max_sessions", T(max_sessions), &T_U32, 0, 65535,
	  "sessions to this target, at most; 0: no limit",
	  CFG_LIVE },
	{ "max_sessions_per_initiator", T(max_sessions_per_initiator), &T_U32,
	  0, 65535, "sessions of one initiator name, at most; 0: no limit",
	  CFG_LIVE },
	{ "redirect", T(redirect), &T_REDIRECT, 0, 0,
	  "answer normal logins 'target moved' to ADDR:PORT (RFC 7143 0101h; "
	  "0102h with ,permanent); empty: none",
	  CFG_LIVE },
	/* ALUA (scsi/alua.h): this gateway's group and port, and every
	 * group of the target. */
	{ "tpg_id", T(alua.tpg_id), &T_U16, 1, 65535,
	  "this gateway's target port group",
	  CFG_RECREATE },
	{ "rel_port_id", T(alua.rel_port_id), &T_U16, 1, 65535,
	  "this gateway's relative target port",
	  CFG_RECREATE },
	{ "tpg", T(alua), &T_PORT_GROUP, 0, 0,
	  "a target port group of the target, its state and ports",
	  CFG_RECREATE },

	/* [lun TARGET N] */
	{ "path", L(path), &T_PATH, 0, 0,
	  "file or block device to serve (type cdrom: an ISO image, changed "
	  "live; empty: no medium)",
	  CFG_RECREATE },
	{ "type", L(type), &T_LUN_TYPE, 0, 0,
	  "disk (SBC block device) or cdrom (MMC CD/DVD drive serving path as "
	  "a read-only ISO image)",
	  CFG_RECREATE },
	{ "backend", L(backend), &T_STRING, 0, 0,
	  "backend spec, NAME[:key=value,...] (default aio)",
	  CFG_RECREATE },
	{ "size", L(size), &T_SIZE64, 0, 0,
	  "size in bytes; 0: that of the file or device",
	  CFG_LIVE },
	{ "block_size", L(block_size), &T_BLOCK_SIZE, 0, 0,
	  "logical block size",
	  CFG_RECREATE },
	{ "physical_block_size", L(phys_block_size), &T_SIZE32, 512, 1u << 20,
	  "physical block size: block_size times a power of two",
	  CFG_RECREATE },
	{ "read_only", L(read_only), &T_BOOL, 0, 0, "refuse writes",
	  CFG_RECREATE },
	{ "create", L(create), &T_BOOL, 0, 0,
	  "create path as a sparse file of the given size if missing",
	  CFG_RECREATE },
	{ "queue_depth", L(queue_depth), &T_U32, 1, CFG_MAX_QUEUE_DEPTH,
	  "backend I/Os in flight for the LUN, over all reactors; more wait in arrival order",
	  CFG_LIVE },
	{ "write_cache", L(write_cache), &T_BOOL, 0, 0,
	  "volatile write cache (WCE)",
	  CFG_LIVE },
	{ "barrier", L(barrier), &T_BARRIER, 0, 0,
	  "what an ORDERED task costs",
	  CFG_LIVE },
	{ "qam", L(qam), &T_QAM, 0, 0,
	  "queue algorithm modifier of the control mode page",
	  CFG_RECREATE },
	{ "tas", L(tas), &T_BIT, 0, 0,
	  "control mode page TAS: tasks aborted by another I_T nexus end "
	  "with TASK ABORTED status (1) or silently (0)",
	  CFG_LIVE },
	{ "removable", L(removable), &T_BOOL, 0, 0,
	  "a removable medium: START STOP UNIT ejects and loads it",
	  CFG_RECREATE },
	{ "thin", L(thin), &T_TRISTATE, 0, 0,
	  "thin provisioning (auto: the backend decides)",
	  CFG_RECREATE },
	{ "thin_threshold", L(thin_threshold), &T_U32, 1, 100,
	  "percent of a thin LUN allocated that warns every initiator",
	  CFG_RECREATE },
	{ "sanitize", L(sanitize), &T_BOOL, 0, 0,
	  "allow SANITIZE, which erases the whole LUN",
	  CFG_RECREATE },
	{ "serial", L(serial), &T_SERIAL, 0, 0,
	  "unit serial number, the same on every gateway of the LUN",
	  CFG_RECREATE },
	{ "vendor", L(vendor), &T_INQ_TEXT, 1, 8,
	  "INQUIRY vendor identification, 1..8 ASCII characters (default TCQ)",
	  CFG_LIVE },
	{ "product", L(product), &T_INQ_TEXT, 1, 16,
	  "INQUIRY product identification, 1..16 ASCII characters (default "
	  "tcq disk)",
	  CFG_LIVE },
	{ "revision", L(revision), &T_INQ_TEXT, 1, 4,
	  "INQUIRY product revision level, 1..4 ASCII characters (default "
	  "the version's digits)",
	  CFG_LIVE },
	{ "flush", L(flush_ignore), &T_HONOUR, 0, 0,
	  "SYNCHRONIZE CACHE flushes (honour), or completes at once without "
	  "(ignore: a device that lies, for the crash lab)",
	  CFG_LIVE },
	{ "fua", L(fua_ignore), &T_HONOUR, 0, 0,
	  "the FUA bit of a write reaches the medium (honour), or not (ignore)",
	  CFG_LIVE },
	{ "cut_through", L(cut_off), &T_CUT, 0, 0,
	  "a large READ is read in pieces, each piece's Data-In sent as soon "
	  "as it and all before it are read (auto: when it is at least two "
	  "pieces), or read whole before its Data-In (off)",
	  CFG_LIVE },
	{ "qos_iops", L(qos_iops), &T_U32, 0, CFG_MAX_QOS_IOPS,
	  "QoS: the LUN's reads, writes and other medium commands per second, "
	  "over every initiator, shared round robin (0: no limit)",
	  CFG_LIVE },
	{ "qos_mbps", L(qos_mbps), &T_U32, 0, CFG_MAX_QOS_MBPS,
	  "QoS: the LUN's data moved to and from the medium, MB/s (10^6 "
	  "bytes), over every initiator, shared round robin (0: no limit)",
	  CFG_LIVE },
	{ "prefetch", L(prefetch), &T_PREFETCH, 0, 0,
	  "sequential read-ahead into a buffer of the LUN (auto: where the "
	  "backend reads the medium O_DIRECT)",
	  CFG_LIVE },
	{ "prefetch_max", L(prefetch_max), &T_SIZE32, CFG_MIN_PREFETCH_MAX,
	  CFG_MAX_PREFETCH_MAX,
	  "bytes the LUN's read-ahead buffers may hold",
	  CFG_LIVE },
	{ "record", L(record), &T_FILE, 0, 0,
	  "record what the LUN is asked to write, flush and order into FILE "
	  "from its creation (crash lab; tcq-crash reads it)",
	  CFG_RECREATE },
	{ "record_max", L(record_max), &T_SIZE64, 0, 0,
	  "bytes a recording may take; full, it ends and the LUN serves on "
	  "(0: 1G)",
	  CFG_RECREATE },
	{ "shared_state", L(no_shared_state), &T_SHARED_STATE, 0, 0,
	  "reservations of an rbd LUN in RADOS (auto) or here only (none)",
	  CFG_RECREATE },

	/* [initiator TARGET NAME] (config_initiator.c) */
	{ "chap_user", I(chap.user), &T_CHAP_USER, 0, 0,
	  "this initiator's own CHAP name, instead of the target's",
	  CFG_LIVE },
	{ "chap_secret", I(chap.secret), &T_CHAP_SECRET, 0, 0,
	  "its CHAP secret (the next login uses it)",
	  CFG_LIVE },
	{ "luns", I(chap), &T_LUN_MAP, 0, 0,
	  "the LUNs it sees: target LUN N as M, read-only with :ro; none: "
	  "no LUN (default: the target's own)",
	  CFG_LIVE },
};

const size_t cfg_nkeys = sizeof(cfg_keys) / sizeof(cfg_keys[0]);

/* The file parser notes the keys a section has set as bits, by their
 * place in the table. */
_Static_assert(sizeof(cfg_keys) / sizeof(cfg_keys[0]) <= 64 * CFG_SEEN_WORDS,
	       "more keys than bits in struct parser's seen");

const struct cfg_key *cfg_key_find(enum cfg_section section,
				   const char *name)
{
	for (size_t i = 0; i < cfg_nkeys; i++) {
		if (cfg_keys[i].section == section &&
		    strcasecmp(cfg_keys[i].name, name) == 0)
			return &cfg_keys[i];
	}
	return NULL;
}
