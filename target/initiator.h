/*
 * The [initiator TARGET NAME] sections of a running target (tcqd.conf(5);
 * config_initiator.c reads them): an initiator's own CHAP credentials,
 * which its logins check instead of the target's, and its own LUN map
 * (scsi/sdev.h), which each of its sessions copies and looks LUNs up in.
 *
 * The list hangs off the target and is read and replaced under the tcqd
 * lock (target/target.h), like the target's other login settings. Each
 * replacement raises the target's inits_gen; a session compares it with
 * the generation of its copy at each command (one relaxed load) and
 * copies its map again when they differ (target/session_map.c), so a
 * change reaches open sessions without a walk of the registry, and no
 * login can miss it.
 */
#ifndef TCQ_INITIATOR_H
#define TCQ_INITIATOR_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "target/target.h"

struct cfg;

struct tgt_init {
	char name[TCQ_NAME_MAX];	/* the initiator name */
	struct auth_cred chap;		/* user[0] == 0: the target's CHAP */
	struct sdev_map *map;		/* NULL: the target's own LUNs */
};

struct tgt_inits {
	int n;
	struct tgt_init v[];
};

/* The sections of c for target name, as a list for the target (*out
 * NULL when there are none). 0, or -1 when out of memory (err set). */
int tinit_build(const struct cfg *c, const char *target,
		struct tgt_inits **out, char *err, size_t errlen);
void tinit_free(struct tgt_inits *ti);
/* Whether the sections of target differ between a and b. */
bool tinit_differ(const struct cfg *a, const struct cfg *b,
		  const char *target);
/* Hangs t's list built from c on t (a target just built); 0 or -1. */
int tinit_attach(struct target *t, const struct cfg *c, char *err,
		 size_t errlen);
/* Replaces t's list (under tcqd_write_lock): the old one is returned for
 * the caller to free once the lock is dropped. */
struct tgt_inits *tinit_replace(struct target *t, struct tgt_inits *ti);

/* Under tcqd_read_lock. The credentials a login of iname to t checks:
 * the target's, with iname's own CHAP name and secret in place of the
 * target's when its section has them. */
void tinit_chap(const struct target *t, const char *iname,
		struct auth_chap_cfg *out);
/* A copy of iname's map on t into *out (NULL: none, the target's own
 * LUNs). 0, or -1 when out of memory. */
int tinit_map_copy(const struct target *t, const char *iname,
		   struct sdev_map **out);
#endif
