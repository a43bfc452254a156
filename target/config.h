/*
 * Configuration: an INI file (or the --export command line) becomes a
 * struct cfg of plain data first, with every mistake reported as
 * "FILE:LINE: message"; a separate step (config_build.c) opens backends and
 * turns it into the runtime struct tcqd. Keeping the two apart lets the
 * parser be tested without any backend.
 */
#ifndef TCQ_CONFIG_H
#define TCQ_CONFIG_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "target/target.h"
#include "target/config_keys.h"

#define CFG_DEFAULT_LISTEN "0.0.0.0:3260"
#define CFG_DEFAULT_BACKEND "aio"
#define CFG_DEFAULT_QUEUE_DEPTH 128
/* prefetch_max: its default and range (backend/prefetch.c) */
#define CFG_DEFAULT_PREFETCH_MAX (4u << 20)
#define CFG_MIN_PREFETCH_MAX (64u << 10)
#define CFG_MAX_PREFETCH_MAX (1u << 30)
#define CFG_MAX_QUEUE_DEPTH 1024
/* QoS limits (scsi/qos.h): far above what one LUN serves, and low enough
 * that the token arithmetic cannot overflow */
#define CFG_MAX_QOS_IOPS 1000000
#define CFG_MAX_QOS_MBPS 100000
#define CFG_MAX_THREADS 64	/* BDEV_MAX_QUEUES: one backend queue per reactor */

/* Words of the config file parser's bitmap of the keys a section set. */
#define CFG_SEEN_WORDS 2

struct bdev;

/* [lun] type: a block device (SBC), or a CD/DVD drive (MMC, scsi/mmc.h)
 * whose path is an ISO image. */
enum cfg_lun_type { CFG_LUN_DISK, CFG_LUN_CDROM };

struct cfg_lun {
	char target[TCQ_NAME_MAX];	/* owning target's name */
	unsigned id;			/* 0..TCQ_MAX_LUNS-1 */
	char *path;			/* NULL: none (null/ram backends; a
					 * cdrom without a medium) */
	uint8_t type;			/* enum cfg_lun_type */
	char *backend;			/* backend spec, default "aio" */
	uint64_t size;			/* bytes; 0: from the file */
	uint32_t block_size;		/* 512 or 4096 */
	uint32_t phys_block_size;	/* 0: block_size; else block_size
					 * times a power of two */
	bool read_only;
	bool create;			/* create a sparse file if missing */
	bool write_cache;		/* WCE */
	bool removable;			/* INQUIRY RMB: eject and load */
	int thin;			/* -1 auto (backend decides), 0, 1 */
	bool sanitize;			/* SANITIZE allowed */
	uint32_t thin_threshold;	/* soft threshold, percent allocated;
					 * 0: none (scsi/thin.h) */
	uint32_t queue_depth;		/* 1..CFG_MAX_QUEUE_DEPTH */
	uint8_t barrier;		/* enum lun_barrier: 0 drain (default),
					 * 1 flush, 2 ignore */
	uint8_t qam;			/* control page QAM: 0 restricted
					 * (default), 1 unrestricted */
	uint8_t tas;			/* control page TAS: 0 (default) or 1 */
	char serial[33];		/* LUN identity; "": from the names */
	char vendor[9];			/* INQUIRY identity; "": the default */
	char product[17];
	char revision[5];
	bool flush_ignore;		/* flush = ignore: a device that lies */
	bool fua_ignore;		/* fua = ignore */
	bool cut_off;			/* cut_through = off (default auto) */
	uint32_t qos_iops;		/* QoS limits (scsi/qos.h); 0: none */
	uint32_t qos_mbps;		/* MB/s, 1 MB = 10^6 bytes */
	uint8_t prefetch;		/* enum bdev_prefetch: 0 off, 1 auto
					 * (default), 2 on */
	uint32_t prefetch_max;		/* bytes its buffers may hold */
	char *record;			/* record = FILE (crash lab); NULL */
	uint64_t record_max;		/* its bytes at most; 0: default */
	bool no_shared_state;		/* shared_state = none: reservations
					 * stay in this process even on a
					 * shared medium */
	int line;			/* of the section header */
	int size_line;			/* of the size key, 0 if unset */
};

struct cfg_target {
	char name[TCQ_NAME_MAX];
	char alias[TCQ_NAME_MAX];
	uint16_t tpgt;
	struct cfg_lun *luns[TCQ_MAX_LUNS];	/* filled once parsing ends */
	int line;
	struct auth_chap_cfg chap;	/* CHAP credentials (auth.h) */
	struct acl acl;			/* allow_initiator, allow_network */
	uint32_t max_sessions, max_sessions_per_initiator;
	struct alua_cfg alua;		/* tpg_id, rel_port_id, tpg keys */
	bool tpgt_set;			/* tpgt given (else rel_port_id) */
	char redirect[TCQ_REDIRECT_MAX];	/* "ADDR:PORT[,permanent]";
						 * "": no redirect */
};

/* One entry of an initiator's LUN map: the target's LUN lun, seen by the
 * initiator as LUN as, read-only when ro. */
struct cfg_map_ent {
	uint16_t lun, as;
	bool ro;
};

/* [initiator TARGET NAME]: one initiator's own CHAP credentials and LUN
 * map on a target (config_initiator.c; target/initiator.h runs them).
 * Who may log in stays the target's acl keys' business. */
struct cfg_initiator {
	char target[TCQ_NAME_MAX];
	char name[TCQ_NAME_MAX];	/* the iSCSI initiator name */
	struct auth_cred chap;		/* user[0] == 0: the target's CHAP */
	bool has_map;			/* luns given: exactly these */
	int nmap;
	struct cfg_map_ent map[TCQ_MAX_LUNS];	/* in the order written */
	int line;			/* of the section header */
};

struct cfg {
	struct tcq_settings set;
	int log_level;			/* enum log_level, or -1: not set */
	char **listen;			/* "ADDR:PORT" texts as written */
	int nlisten;
	struct cfg_target **targets;
	int ntargets;
	struct cfg_lun **luns;		/* every LUN, in file order */
	int nluns;
	struct cfg_initiator **inits;	/* [initiator] sections, file order */
	int ninits;
	/* Diagnostics, "FILE:LINE: message", sorted by line once loaded. */
	char **msgs;
	int *msg_lines;			/* line of each message (sort key) */
	int nmsgs;
	int nerrors;			/* msgs that are errors, not warnings */
	bool has_secrets;		/* a CHAP secret was read */
};

void cfg_init(struct cfg *c);
void cfg_free(struct cfg *c);

/*
 * Parse a file / a string (fname names it in messages). Both finish with
 * cfg_finish(). Return 0 when there were no errors, -1 otherwise; the
 * messages are in c->msgs either way.
 */
int cfg_load_file(struct cfg *c, const char *path);
int cfg_load_string(struct cfg *c, const char *fname, const char *text);

/*
 * Links LUNs to their targets and applies the cross-checks (unknown
 * target, missing LUN 0, no listen address: the default is added). Called
 * by the loaders; call it yourself after building a cfg by hand.
 */
int cfg_finish(struct cfg *c, const char *fname);

/* Building a cfg by hand (--export); NULL/-1 with a message in err. */
struct cfg_target *cfg_add_target(struct cfg *c, const char *name,
				  char *err, size_t errlen);
struct cfg_lun *cfg_add_lun(struct cfg *c, const char *target, unsigned id,
			    char *err, size_t errlen);
int cfg_add_listen(struct cfg *c, const char *addr, char *err, size_t errlen);

/* Taking a cfg apart (live changes): 0, or -1 when there is no such
 * target / LUN / listen line. Removing a target removes its LUNs. */
int cfg_remove_target(struct cfg *c, const char *name);
int cfg_remove_lun(struct cfg *c, const char *target, unsigned id);
int cfg_remove_listen(struct cfg *c, const char *addr);
struct cfg_target *cfg_find_target(const struct cfg *c, const char *name);
struct cfg_lun *cfg_find_lun(const struct cfg *c, const char *target,
			     unsigned id);
/* [initiator TARGET NAME] sections (config_initiator.c): added (refused
 * when the names are bad or the section exists: NULL with err), found,
 * removed (-1: none). Removing a target removes its sections. */
struct cfg_initiator *cfg_add_initiator(struct cfg *c, const char *target,
					const char *name, char *err,
					size_t errlen);
struct cfg_initiator *cfg_find_initiator(const struct cfg *c,
					 const char *target,
					 const char *name);
int cfg_remove_initiator(struct cfg *c, const char *target,
			 const char *name);
/* A luns value, "N[:M][:ro],..." or "none", added to ci's map; -1 with
 * a message naming the entry (bad number, M given twice, N twice), and
 * the map unchanged. */
int cfg_parse_lun_map(const char *s, struct cfg_initiator *ci, char *err,
		      size_t errlen);
/* "0,1:2:ro" again from entries from..to-1 of ci's map ("none" for an
 * empty map). */
void cfg_format_lun_map(const struct cfg_initiator *ci, int from, int to,
			char *out, size_t len);
#define CFG_MAP_PER_LINE 16	/* entries per luns line written */
/* "key=value" words into a section (base: &c->set, a cfg_target or a
 * cfg_lun), through the key table: the same keys and values as the
 * file. 0, or -1 with a message naming the key in err (base may be
 * half changed: work on a copy). */
int cfg_set_pairs(struct cfg *c, enum cfg_section sec, void *base,
		  char *const *words, int n, char *err, size_t errlen);

/* config_save.c. The configuration as tcqd.conf text, every key that
 * differs from its default (header first if given); malloc'ed, NULL when
 * out of memory. */
char *cfg_format(const struct cfg *c, const char *header);
/* Writes it to path atomically (a temporary file, fsync, rename), mode
 * 0600. 0, or -1 with a message in err. */
int cfg_save(const struct cfg *c, const char *path, char *err,
	     size_t errlen);
/* dst becomes a checked copy of src (written as text and read back). 0,
 * or -1 with the first message in err. */
int cfg_copy(struct cfg *dst, const struct cfg *src, char *err,
	     size_t errlen);
/* Whether key k has the same value(s) in section a of ca and b of cb. */
struct cfg_key;
bool cfg_key_equal(const struct cfg_key *k, const struct cfg *ca,
		   const void *a, const struct cfg *cb, const void *b);

/* Value parsers shared with the command line; 0 or -1 with err set. */
int cfg_parse_size(const char *s, uint64_t *out, char *err, size_t errlen);
int cfg_parse_bool(const char *s, bool *out, char *err, size_t errlen);
/* A logical block size: "512" or "4096". */
int cfg_parse_block_size(const char *s, uint32_t *out, char *err,
			 size_t errlen);
/* One of n words, in any case: *out is its index. The message lists
 * them. */
int cfg_parse_choice(const char *s, const char *const *words, unsigned n,
		     unsigned *out, char *err, size_t errlen);
/* "auto|off" ([lun] cut_through) into *off. */
int cfg_parse_cut_through(const char *s, bool *off, char *err, size_t errlen);
/* "drain|flush|ignore" into enum lun_barrier's value. */
int cfg_parse_barrier(const char *s, uint8_t *out, char *err, size_t errlen);
/* "auto|uring|aio" into enum tcq_io_engine; uring refused by a build
 * without liburing. */
int cfg_parse_io_engine(const char *s, uint8_t *out, char *err,
			size_t errlen);
/* "restricted|unrestricted" into the QAM code (0 or 1). */
int cfg_parse_qam(const char *s, uint8_t *out, char *err, size_t errlen);
/* shared_state "auto|none": *none set for none. */
/* "honour" or "ignore" (flush, fua): *ignore. */
int cfg_parse_honour(const char *s, bool *ignore, char *err, size_t errlen);
int cfg_parse_shared_state(const char *s, bool *none, char *err,
			   size_t errlen);
int cfg_parse_uint(const char *s, uint64_t min, uint64_t max, uint64_t *out,
		   char *err, size_t errlen);
/* LUN serial number: 1..32 printable ASCII characters, no spaces; copied
 * into out (33 bytes). */
int cfg_parse_serial(const char *s, char *out, char *err, size_t errlen);
/* An INQUIRY identity field (SPC-4 6.6.2: ASCII 20h-7Eh, left-aligned, at
 * most max bytes: vendor 8, product 16, revision 4); no leading or
 * trailing space and no ';', so that tcqd.conf reads back what it saved.
 * Copied to out (max + 1 bytes); -1 with a message otherwise. */
int cfg_parse_inquiry_text(const char *s, size_t max, char *out, char *err,
			   size_t errlen);
/* redirect = ADDR:PORT[,permanent]: ADDR a dotted IPv4 address, a
 * bracketed IPv6 address or a DNS name, PORT 1..65535 (RFC 7143 13.8's
 * TargetAddress as a redirect carries it: without a portal group tag).
 * addr gets "ADDR:PORT" (the port in plain decimal), *permanent the
 * suffix; "" is no redirect (addr ""). -1 with a message otherwise. */
int cfg_parse_redirect(const char *s, char *addr, size_t addrlen,
		       bool *permanent, char *err, size_t errlen);
/* [global] isns: "" or "off" (no iSNS), else HOST[:PORT] with HOST an
 * IPv4 address, a host name (RFC 1123 labels) or an IPv6 address in
 * brackets, PORT 1..65535 (default 3205, RFC 4171's). host gets HOST
 * without brackets ("" for off; hostlen >= TCQ_NAME_MAX). */
#define CFG_ISNS_PORT 3205
int cfg_parse_isns(const char *s, char *host, size_t hostlen, uint16_t *port,
		   char *err, size_t errlen);
/* RFC 7143 3.2.6 iqn./eui./naa. syntax, lower case, at most 223 bytes. */
int cfg_check_name(const char *name, char *err, size_t errlen);

/* Builds the runtime daemon from a checked cfg: portals (not yet
 * listening), targets, backends and LUNs. NULL with a message in err. */
struct tcqd *cfg_build(const struct cfg *c, char *err, size_t errlen);
/* One target of a checked cfg (its LUNs published in its sdev, the
 * target itself in no list yet), and one LUN of t (not yet published):
 * NULL with a message in err. The destroyers close LUNs and backends. */
struct target *cfg_build_target(const struct cfg_target *ct,
				const struct tcq_settings *set, char *err,
				size_t errlen);
void cfg_destroy_target(struct target *t);
struct lun *cfg_build_lun(struct target *t, const struct cfg_lun *cl,
			  char *err, size_t errlen);
void cfg_destroy_lun(struct lun *l);
/* The read-ahead mode a LUN of t runs with: its prefetch key, but off
 * where t has several port groups, whose other gateways write the same
 * medium (cfg_finish refuses on there). */
enum bdev_prefetch cfg_lun_prefetch(const struct target *t,
				    const struct cfg_lun *cl);
/* Opens the backend of cl into *out (NULL: a cdrom with no medium); -1
 * with a message naming the LUN, and for a cdrom an image that is not a
 * whole number of 2048-byte sectors, naming path. */
int cfg_open_lun_bdev(const struct target *t, const struct cfg_lun *cl,
		      struct bdev **out, char *err, size_t errlen);
/* Closes LUNs and backends and frees what cfg_build made. */
void cfg_destroy_tcqd(struct tcqd *d);
#endif
