/*
 * The daemon's runtime model: portals, targets and their LUNs, built from
 * the configuration (target/config_build.c) and read by login, discovery
 * and the device server, and changed live by tcqctl (target/live*.c) on
 * reactor 0.
 *
 * Who reads what, and how it stays safe while it changes:
 *  - the lists of portals and targets, and a target's login settings
 *    (alias, CHAP, ACL, limits, [initiator] sections), are read under
 *    tcqd_read_lock() (login, discovery, a session copying its LUN map;
 *    short) and changed under tcqd_write_lock();
 *  - a target outlives its removal while anything holds it: a login in
 *    progress or a session takes a reference (target_get/target_put);
 *  - the data path finds LUNs in the target's sdev map without a lock
 *    (published and withdrawn atomically, scsi/sdev.h); a LUN is freed
 *    only once every reactor has let go of it (target/live_lun.c), and
 *    under the write lock, so a reader off the reactors (metrics) may
 *    use the LUNs it finds while it holds the read lock;
 *  - a removed portal stays allocated until exit (connections point at
 *    it), only its socket closes.
 */
#ifndef TCQ_TARGET_H
#define TCQ_TARGET_H
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>
#include "target/acl.h"
#include "target/auth.h"
#include "scsi/sdev.h"

struct lun;
struct tgt_inits;

/* Why a login was refused, as tcqd's metrics count it (target/login.c,
 * target/session.c; docs/metrics.md): CHAP or another authentication
 * failure, the target's ACL, a session or pending-login limit, a
 * TargetName tcqd does not serve, anything else (protocol errors, out of
 * memory). */
enum login_refusal {
	LOGIN_REFUSED_CHAP,
	LOGIN_REFUSED_ACL,
	LOGIN_REFUSED_LIMIT,
	LOGIN_REFUSED_UNKNOWN_TARGET,
	LOGIN_REFUSED_OTHER,
	LOGIN_REFUSED_N
};
/* "chap", "acl", "limit", "unknown_target", "other". */
extern const char *const login_refusal_names[LOGIN_REFUSED_N];

#define TCQ_NAME_MAX SDEV_NAME_MAX	/* iSCSI names: at most 223 bytes */
#define TCQ_MAX_LUNS SDEV_MAX_LUNS
/* redirect = ADDR:PORT[,permanent]: a DNS name (253) and the rest */
#define TCQ_REDIRECT_MAX 280

struct portal {
	char *addr_text;	/* "127.0.0.1:3260", "[::1]:3260": the real one
				 * once it listens (port 0 picks one) */
	char *conf_text;	/* as configured (the listen line) */
	struct sockaddr_storage addr;
	socklen_t addr_len;
	uint16_t tpgt;		/* target portal group tag */
	int listen_fd;
};

/* An iSCSI target: the SCSI target device it serves (its name, portal
 * group tag, LUNs and port groups live there) and who may log in. */
struct target {
	struct sdev dev;
	/* login settings, under tcqd_read_lock */
	char alias[TCQ_NAME_MAX];
	struct auth_chap_cfg chap;	/* chap.user[0] == 0: no CHAP */
	struct acl acl;			/* who may log in; empty: anyone */
	uint32_t max_sessions;		/* 0: no limit */
	uint32_t max_sessions_per_initiator;
	/* "ADDR:PORT": a normal login is answered "target moved" there
	 * (target/login.c); "": served here */
	char redirect[TCQ_REDIRECT_MAX];
	bool redirect_permanent;	/* 0102h, else 0101h */
	/* [initiator] sections: their CHAP and LUN maps (initiator.h);
	 * inits_gen (atomic) counts their replacements */
	struct tgt_inits *inits;
	uint64_t inits_gen;
	/* logins refused, by enum login_refusal (atomic, relaxed) */
	uint64_t logins_refused[LOGIN_REFUSED_N];
	/* lifetime */
	unsigned refs;			/* atomic: logins and sessions */
	bool removed;			/* no longer in tcqd->targets */
};

/* io_engine: the reactors' event loop and file I/O (main.c picks auto's
 * at start; common/reactor.h runs them). */
enum tcq_io_engine {
	IO_ENGINE_AUTO,		/* uring where the kernel allows it, else aio */
	IO_ENGINE_URING,	/* io_uring for sockets and files */
	IO_ENGINE_AIO,		/* epoll and libaio */
};

/* Settings that apply daemon-wide, from [global] or the command line. */
struct tcq_settings {
	uint32_t max_recv_dsl;		/* our MaxRecvDataSegmentLength */
	uint32_t max_burst;		/* MaxBurstLength we accept */
	uint32_t first_burst;		/* FirstBurstLength we accept */
	uint32_t max_outstanding_r2t;
	bool initial_r2t;		/* what we offer/require */
	bool immediate_data;
	uint32_t cmd_window;		/* MaxCmdSN - ExpCmdSN + 1 */
	uint32_t nop_interval_s;	/* ping an idle initiator; 0: never */
	uint32_t nop_timeout_s;		/* drop when a ping goes unanswered */
	uint32_t login_timeout_s;
	uint32_t max_xfer_len;		/* max_transfer_length: only builds each
					 * target's sdev.max_xfer_len, the one
					 * the device server and cmd.c read */
	int threads;			/* reactors; 0: number of CPUs */
	uint8_t io_engine;		/* enum tcq_io_engine: what io_engine
					 * asks; main.c resolves auto */
	bool header_digest_allowed, data_digest_allowed;
	/* security and limits (target/auth.c, target/login.c) */
	uint32_t max_sessions;		/* all sessions; 0: no limit */
	uint32_t login_idle_timeout_s;	/* silence before login completes */
	uint32_t max_pending_logins;	/* connections not yet logged in */
	uint8_t chap_algs[CHAP_ALG_COUNT];	/* CHAP_A, preferred first */
	uint8_t nchap_algs;
	struct auth_chap_cfg discovery_chap;
	char ctl_path[TCQ_NAME_MAX];	/* tcqctl's unix socket; "": none */
	char state_dir[TCQ_NAME_MAX];	/* APTPL reservations (scsi/pr_aptpl.c);
					 * "": /var/lib/tcq */
	char metrics[TCQ_NAME_MAX];	/* Prometheus /metrics on [ADDR:]PORT
					 * (target/metrics_http.c); "": none */
	char isns[TCQ_NAME_MAX];	/* iSNS server HOST[:PORT]
					 * (target/isns.c); "": none */
};

struct cfg;

struct tcqd {
	struct tcq_settings set;
	struct portal **portals;
	int nportals;
	struct target **targets;
	int ntargets;
	/* The live configuration, kept in step with every change (tcqctl
	 * save writes it), and the file it came from ("" for --export). */
	struct cfg *cfg;
	char cfg_path[4096];
	/* The reactors, fixed once started (none in unit tests). */
	struct reactor **reactors;
	int nreactors;
};

extern struct tcqd *tcqd;	/* the daemon (one per process) */

/* The lock of the lists and the login settings (see above). */
void tcqd_read_lock(void);
void tcqd_read_unlock(void);
void tcqd_write_lock(void);
void tcqd_write_unlock(void);

/* The target of that name, with a reference the caller drops with
 * target_put; NULL when there is none. */
struct target *target_get(const char *name);
/* One more reference to a target the caller holds already. */
void target_hold(struct target *t);
void target_put(struct target *t);
/* A target's references now (0: nothing holds it but the list). */
unsigned target_refs(const struct target *t);
/* The target of that name without a reference: under tcqd_read_lock, or
 * on reactor 0 (where the lists change). */
struct target *target_find(const char *name);
void tcq_settings_default(struct tcq_settings *s);

/* Counts a refused login, daemon-wide and, when t is not NULL, for t;
 * from any thread (relaxed atomics). */
void target_count_refusal(struct target *t, enum login_refusal why);
/* The daemon-wide counts, by enum login_refusal. */
void tcqd_refusals(uint64_t out[LOGIN_REFUSED_N]);
#endif
