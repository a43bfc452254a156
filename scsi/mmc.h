/*
 * The MMC-6 device: a LUN of type cdrom ([lun] type = cdrom) serves an
 * ISO image as a read-only CD-ROM or DVD-ROM in a drive with a tray. It
 * has its own command table (scsi/mmc_opcodes.c), which the device server
 * picks through the OPC_FEAT_MMC feature of the LUN; a command not in it
 * is INVALID COMMAND OPERATION CODE.
 *
 * The medium: an image (2048-byte logical blocks, a single-session disc
 * with one data track), or none. Its state, one of
 *   loaded     the tray is closed with the image in it: ready;
 *   tray open  START STOP UNIT ejected it (LoEj, Start=0): NOT READY,
 *              MEDIUM NOT PRESENT - TRAY OPEN (3A/02); LoEj, Start=1
 *              closes the tray on the same image;
 *   empty      no image (tcqctl set LUN path=, or a change of image in
 *              progress): NOT READY, MEDIUM NOT PRESENT - TRAY CLOSED
 *              (3A/01).
 * Each change gives the media class of GET EVENT STATUS NOTIFICATION its
 * event (MediaRemoval 3h, NewMedia 2h: one pending event per LUN, the
 * newest, cleared when reported) and a medium that becomes ready gives
 * every I_T nexus NOT READY TO READY CHANGE, MEDIUM MAY HAVE CHANGED
 * (06/28/00) (MMC-6 4.1.6, SPC-4 5.14).
 *
 * The current profile comes from the image's size: up to MMC_CD_BLOCKS
 * blocks (an 80-minute CD, 737,280,000 bytes) CD-ROM (0008h), larger
 * DVD-ROM (0010h).
 */
#ifndef TCQ_MMC_H
#define TCQ_MMC_H
#include <stdbool.h>
#include <stdint.h>
#include "scsi/exec.h"
#include "scsi/task.h"

struct lun;
struct opc_entry;

#define MMC_BLOCK_SIZE 2048u
#define MMC_CD_BLOCKS 360000u		/* 80 min x 60 s x 75 frames */
#define MMC_PROFILE_NONE 0x0000
#define MMC_PROFILE_CD_ROM 0x0008
#define MMC_PROFILE_DVD_ROM 0x0010

/* GET EVENT STATUS NOTIFICATION media event codes (MMC-6 6.8.2.4). */
enum mmc_media_event {
	MMC_EV_NONE = 0,
	MMC_EV_EJECT_REQUEST = 1,
	MMC_EV_NEW_MEDIA = 2,
	MMC_EV_MEDIA_REMOVAL = 3,
};

/* A cdrom LUN's own state (lun->mmc); the tray and PREVENT are the
 * removable medium's (sbc_lun.ejected, its prevent list). */
struct mmc_lun {
	bool empty;		/* no image: atomic (acquire/release) */
	uint8_t event;		/* enum mmc_media_event pending; lun->lock */
};

struct mmc_lun *mmc_lun_new(bool empty);
void mmc_lun_free(struct mmc_lun *m);

/* The table of the MMC device's commands (scsi/mmc_opcodes.c). */
const struct opc_entry *mmc_opc_table(unsigned *n);

/* NOT READY unless a medium is loaded, for the rows without
 * OPC_F_NO_MEDIUM (lun_execute's check for a cdrom LUN). */
struct exec_rc mmc_ready(const struct tcq_task *t);
/* The current profile (MMC_PROFILE_*): none without a ready medium. */
uint16_t mmc_profile(const struct lun *l);
/* "loaded", "tray open" or "none" (tcqctl luns). */
const char *mmc_medium_state(const struct lun *l);
/* Whether an I_T nexus holds PREVENT MEDIUM REMOVAL (tcqctl refuses to
 * change the image then, unless forced). */
bool mmc_prevented(struct lun *l);
/* The image goes (a change of image begins, or path= empty): empty, a
 * MediaRemoval event. The caller then lets go of the old backend. */
void mmc_medium_remove(struct lun *l);
/* A new image of nblocks is in l->bdev: ready, a NewMedia event, and
 * 06/28/00 for every nexus. */
void mmc_medium_insert(struct lun *l, uint64_t nblocks);

/* Executors (scsi/mmc.c). */
struct exec_rc mmc_read_toc(struct tcq_task *t);
struct exec_rc mmc_read_disc_info(struct tcq_task *t);
struct exec_rc mmc_read_track_info(struct tcq_task *t);
struct exec_rc mmc_gesn(struct tcq_task *t);
struct exec_rc mmc_mechanism_status(struct tcq_task *t);
struct exec_rc mmc_start_stop(struct tcq_task *t);
struct exec_rc mmc_set_cd_speed(struct tcq_task *t);
struct exec_rc mmc_read_cd(struct tcq_task *t);
struct exec_rc mmc_write(struct tcq_task *t);
/* scsi/mmc_config.c */
struct exec_rc mmc_get_configuration(struct tcq_task *t);
struct exec_rc mmc_read_disc_structure(struct tcq_task *t);
/* scsi/mmc_mode.c */
struct exec_rc mmc_mode_sense(struct tcq_task *t);
struct exec_rc mmc_mode_select(struct tcq_task *t);
#endif
