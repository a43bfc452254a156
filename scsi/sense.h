/*
 * Sense data (SPC-4 4.5): fixed (70h) or descriptor (72h) format, chosen
 * by the control mode page D_SENSE bit of the task's LUN.
 */
#ifndef TCQ_SENSE_H
#define TCQ_SENSE_H
#include <stdbool.h>
#include <stdint.h>
#include "tcq/scsi_proto.h"

struct tcq_task;

/* Everything one sense report carries; also how cdb_decode reports. */
struct sense_info {
	uint8_t key;
	uint16_t asc;		/* ASC << 8 | ASCQ */
	bool info_valid;
	uint64_t info;		/* INFORMATION (e.g. the failing LBA) */
	bool sksv;		/* field pointer below is valid */
	bool cd;		/* pointer is into the CDB (else param list) */
	int8_t bit;		/* bit pointer 0..7, or -1: not given */
	uint16_t field;		/* byte of the field in error */
	/* With sksv: the sense-key specific bytes carry a PROGRESS
	 * INDICATION (x/65536 done; SPC-4 4.5.2.4.4) instead. */
	bool progress_valid;
	uint16_t progress;
};

/* Writes sense into buf (at least SENSE_BUF_MAX); returns its length. */
uint8_t sense_build(uint8_t *buf, bool desc, const struct sense_info *si);

/* The sense_set family puts t in CHECK CONDITION with that sense, for the
 * checks at a task's arrival (lun_task_arrive, ua_check, the task set);
 * executors return theirs instead (scsi/exec.h). */
void sense_set_si(struct tcq_task *t, const struct sense_info *si);
void sense_set(struct tcq_task *t, uint8_t key, uint16_t asc);
/* Fills si for an ILLEGAL REQUEST with field pointer; bit < 0 for "whole
 * byte". */
void sense_field_info(struct sense_info *si, uint16_t asc, bool cdb,
		      uint16_t byte, int bit);
#endif
