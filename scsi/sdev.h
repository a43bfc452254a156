/*
 * The SCSI target device as the device server sees it (SAM-5 4.6): the
 * logical units one target exports, by LUN, and the identity of the
 * target port they are reached through. The transport embeds one in each
 * of its targets (target/target.h) and hands in the ops through which the
 * device server reaches the transport's I_T nexuses, as LIO's fabric ops
 * and SPDK's ports do: scsi/ never calls into the transport by name.
 *
 * A nexus is an opaque pointer the transport chose (the session); the
 * device server compares it, keeps it, and asks the ops about it.
 */
#ifndef TCQ_SDEV_H
#define TCQ_SDEV_H
#include <stdbool.h>
#include <stdint.h>
#include "scsi/alua.h"

#define SDEV_NAME_MAX 224	/* iSCSI names are at most 223 bytes */
#define SDEV_MAX_LUNS 256

struct lun;
struct sdev;

/*
 * One I_T nexus' own view of the device (an initiator's LUN map, as
 * LIO's mapped LUNs): the LUN number the initiator uses (the index)
 * reaches the device's LUN lun, read-only when ro. A nexus without a map
 * sees every LUN under its own number, as the device has it. The
 * transport looks the map up once per command (sdev_map_lun); the device
 * server asks it of a nexus for REPORT LUNS and EXTENDED COPY.
 */
struct sdev_map_ent {
	uint16_t lun;			/* the device's LUN */
	bool used, ro;
};

struct sdev_map {
	int n;				/* highest mapped number + 1 */
	struct sdev_map_ent e[SDEV_MAX_LUNS];
};

struct sdev_ops {
	/* The initiator port name of nexus: "iname,i,0xISID" (the SPC-4
	 * iSCSI TransportID form), stable across session reinstatement. */
	const char *(*initiator_port)(const void *nexus);
	/* The nexus' LUN map, or NULL (every LUN, read-write). Read on the
	 * nexus' own reactor, where the transport changes it. */
	const struct sdev_map *(*lun_map)(const void *nexus);
};

struct sdev {
	char name[SDEV_NAME_MAX];	/* the SCSI target name */
	uint16_t tpgt;			/* target port "<name>,t,0x<tpgt>" */
	struct alua_cfg alua;		/* target port groups (scsi/alua.h) */
	/* Logical units, indexed by LUN; NULL gaps. Changed live (a LUN
	 * published or withdrawn with one atomic store) while reactors
	 * look LUNs up: read them through sdev_lun and sdev_nluns. */
	struct lun *luns[SDEV_MAX_LUNS];
	int nluns;			/* highest LUN + 1 */
	uint32_t max_xfer_len;		/* bytes one command may move (Block
					 * Limits VPD; the transport refuses
					 * more Data-Out before buffering it);
					 * 0: no limit (unit tests) */
	const char *state_dir;		/* APTPL files (scsi/pr_aptpl.c); NULL:
					 * the default */
	const struct sdev_ops *ops;	/* NULL: no transport (unit tests) */
};

/* The LUN numbered nr, or NULL. */
struct lun *sdev_lun(const struct sdev *d, uint64_t nr);
/* One more than the highest LUN number in use (an upper bound to walk). */
int sdev_nluns(const struct sdev *d);
/* Publishes l as LUN nr (NULL withdraws it); the caller serializes
 * changes. A withdrawn LUN may still be in use by tasks that found it. */
void sdev_set_lun(struct sdev *d, unsigned nr, struct lun *l);

/* The LUN the initiator's number nr reaches through map m (NULL m: nr
 * itself), or NULL when nr is not mapped or that LUN does not exist;
 * *ro tells whether the map makes it read-only. */
struct lun *sdev_map_lun(const struct sdev *d, const struct sdev_map *m,
			 uint64_t nr, bool *ro);
/* The number under which map m shows the device's LUN lun (NULL m:
 * lun), or -1 when m does not show it; *ro as above. */
int sdev_map_number(const struct sdev_map *m, unsigned lun, bool *ro);
/* The map of nexus on d (NULL: none, or no transport). */
const struct sdev_map *sdev_nexus_map(const struct sdev *d,
				      const void *nexus);

/* What the ops say about a nexus of l's device; a LUN without a device
 * or ops has nexuses with an empty port name. */
const char *sdev_initiator_port(const struct lun *l, const void *nexus);
#endif
