/*
 * Asymmetric logical unit access (SPC-4 5.15), implicit only: several
 * tcqd processes (gateways) export the same logical unit, each one SCSI
 * target port in its own target port group. The groups and their access
 * states come from the configuration, identical on every gateway, so each
 * answers REPORT TARGET PORT GROUPS the same way; states change only with
 * the configuration (TPGS = 01b, SET TARGET PORT GROUPS not supported).
 */
#ifndef TCQ_ALUA_H
#define TCQ_ALUA_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct tcq_task;
struct lun;

#define ALUA_MAX_GROUPS 16	/* target port groups of one target */
#define ALUA_MAX_PORTS 16	/* relative target ports per group */

/* ASYMMETRIC ACCESS STATE codes (SPC-4 6.27). */
enum alua_state {
	ALUA_ACTIVE_OPTIMIZED = 0x0,
	ALUA_ACTIVE_NON_OPTIMIZED = 0x1,
	ALUA_STANDBY = 0x2,
	ALUA_UNAVAILABLE = 0x3,
};

/* Sense codes of the inaccessible states (LOGICAL UNIT NOT ACCESSIBLE). */
#define ASC_ALUA_TRANSITION 0x040a
#define ASC_ALUA_STANDBY 0x040b
#define ASC_ALUA_UNAVAILABLE 0x040c

/* REPORT TARGET PORT GROUPS PARAMETER DATA FORMAT (CDB byte 1, 7:5). */
#define ALUA_RTPG_LENGTH 0	/* length header only */
#define ALUA_RTPG_EXTENDED 1	/* with format type and transition time */

struct alua_group {
	uint16_t id;			/* TARGET PORT GROUP, 1..65535 */
	uint8_t state;			/* enum alua_state */
	uint8_t nports;
	uint16_t ports[ALUA_MAX_PORTS];	/* RELATIVE TARGET PORT IDENTIFIERs */
};

/*
 * The ALUA view of one target, as configured. All zero means "not
 * configured": alua_finish() makes it one active/optimized group 1 with
 * relative port 1, which is what a single gateway reports.
 */
struct alua_cfg {
	uint16_t tpg_id;		/* this gateway's group */
	uint16_t rel_port_id;		/* this gateway's relative port */
	uint8_t ngroups;
	struct alua_group groups[ALUA_MAX_GROUPS];
};

/* "active-optimized|ao", "active-non-optimized|ano", "standby",
 * "unavailable" into enum alua_state; NULL names for bad codes. */
int alua_parse_state(const char *s, uint8_t *out);
const char *alua_state_name(uint8_t state);

/*
 * Adds one group from "ID:STATE:PORT[,PORT...]" (the tpg key). 0, or -1
 * with a message in err: bad syntax, ids out of 1..65535, duplicate
 * group, too many groups or ports.
 */
int alua_add_group(struct alua_cfg *a, const char *spec, char *err,
		   size_t errlen);

/*
 * Completes and checks a configuration: defaults the ids to 1 and, with
 * no groups listed, makes the single group {tpg_id, active/optimized,
 * rel_port_id}. This gateway's group must be listed and hold its port, and
 * no relative port may be in two groups. 0, or -1 with err set.
 */
int alua_finish(struct alua_cfg *a, char *err, size_t errlen);

/* The group with this id, or NULL. */
const struct alua_group *alua_find(const struct alua_cfg *a, uint16_t id);

/*
 * REPORT TARGET PORT GROUPS parameter data (SPC-4 6.27) in format fmt
 * (ALUA_RTPG_*). Writes at most cap bytes, returns the full length.
 */
uint32_t alua_encode_rtpg(const struct alua_cfg *a, unsigned fmt,
			  uint8_t *buf, uint32_t cap);

/*
 * Whether the command of row e may run through a port in state (SPC-4
 * 5.15.2.4; the row's OPC_F_ALUA_* flags): 0 when it may, else the
 * ASC/ASCQ of the NOT READY it gets.
 */
struct opc_entry;
uint16_t alua_check(uint8_t state, const struct opc_entry *e);

/* Applies a target's configuration to one of its LUNs (ids, state). */
void alua_lun_apply(struct lun *l, const struct alua_cfg *a);

/* MAINTENANCE IN / REPORT TARGET PORT GROUPS (scsi/exec.h). */
struct exec_rc;
struct exec_rc alua_report_tpg(struct tcq_task *t);
#endif
