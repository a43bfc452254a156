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
#include <stdint.h>
#include "scsi/alua.h"

#define SDEV_NAME_MAX 224	/* iSCSI names are at most 223 bytes */
#define SDEV_MAX_LUNS 256

struct lun;
struct sdev;

struct sdev_ops {
	/* The initiator port name of nexus: "iname,i,0xISID" (the SPC-4
	 * iSCSI TransportID form), stable across session reinstatement. */
	const char *(*initiator_port)(const void *nexus);
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

/* What the ops say about a nexus of l's device; a LUN without a device
 * or ops has nexuses with an empty port name. */
const char *sdev_initiator_port(const struct lun *l, const void *nexus);
#endif
