/*
 * What the per-command CDB decoders share (scsi/cdb.c, cdb_decode.c),
 * and the decoders the command table (scsi/opcodes.c) points at. Private
 * to scsi/.
 *
 * A decoder gets the table row of the opcode (for an opcode with service
 * actions: its first row; the decoder reads and checks the SA), a CDB at
 * least row->cdb_len bytes long whose CONTROL byte is already checked,
 * and the LUN's block size. It fills req and returns 0, or -1 with err
 * set (ILLEGAL REQUEST, INVALID FIELD IN CDB with the field pointer).
 */
#ifndef TCQ_CDB_PRIV_H
#define TCQ_CDB_PRIV_H
#include <stdbool.h>
#include <stdint.h>
#include "scsi/cdb.h"
#include "scsi/opcodes.h"

/* INVALID FIELD IN CDB at byte (bit < 0: the whole field); returns -1. */
int cdb_bad_field(struct sense_info *err, uint16_t byte, int bit);
/* Reserved bits set in cdb[byte] & mask, or in bytes from..to, make
 * the CDB invalid (SPC-4 4.2.1): 0, or -1 pointing at the highest. */
int cdb_rsvd(const uint8_t *cdb, uint16_t byte, uint8_t mask,
	     struct sense_info *err);
int cdb_rsvd_bytes(const uint8_t *cdb, uint16_t from, uint16_t to,
		   struct sense_info *err);
/* req->blocks * bs into data_out_len (an OUT row) or data_in_len; a
 * transfer that does not fit 32 bits points at the row's length field. */
int cdb_set_xfer(const struct opc_entry *e, struct cdb_req *req, uint32_t bs,
		 struct sense_info *err);
/* LOGICAL BLOCK ADDRESS and GROUP NUMBER of the 10, 12 and 16-byte
 * layouts the block commands share (SBC-3 5), and the block count at the
 * row's len_byte (two bytes in a 10-byte CDB, else four). */
void cdb_lba_len(const uint8_t *cdb, const struct opc_entry *e,
		 struct cdb_req *req);

#define CDB_DECODER(name)                                                  \
	int name(const struct opc_entry *e, const uint8_t *cdb, uint32_t bs, \
		 struct cdb_req *req, struct sense_info *err)

/* SPC-4 */
CDB_DECODER(cdb_dec_test_unit_ready);
CDB_DECODER(cdb_dec_request_sense);
CDB_DECODER(cdb_dec_inquiry);
CDB_DECODER(cdb_dec_mode_sense);
CDB_DECODER(cdb_dec_mode_select);
CDB_DECODER(cdb_dec_log_sense);
CDB_DECODER(cdb_dec_report_luns);
CDB_DECODER(cdb_dec_maintenance_in);
CDB_DECODER(cdb_dec_pr_in);
CDB_DECODER(cdb_dec_pr_out);
CDB_DECODER(cdb_dec_reserve_6);
CDB_DECODER(cdb_dec_reserve_10);
CDB_DECODER(cdb_dec_extended_copy);
CDB_DECODER(cdb_dec_receive_copy_results);
/* SBC-3 */
CDB_DECODER(cdb_dec_read_write);
CDB_DECODER(cdb_dec_verify);
CDB_DECODER(cdb_dec_sync);
CDB_DECODER(cdb_dec_read_capacity_10);
CDB_DECODER(cdb_dec_service_action_in);
CDB_DECODER(cdb_dec_start_stop);
CDB_DECODER(cdb_dec_prevent_allow);
CDB_DECODER(cdb_dec_write_verify);
CDB_DECODER(cdb_dec_write_same);
CDB_DECODER(cdb_dec_orwrite);
CDB_DECODER(cdb_dec_compare_and_write);
CDB_DECODER(cdb_dec_write_atomic);
CDB_DECODER(cdb_dec_read_defect_10);
CDB_DECODER(cdb_dec_read_defect_12);
CDB_DECODER(cdb_dec_sanitize);
CDB_DECODER(cdb_dec_unmap);
/* MMC-6 (scsi/mmc_decode.c) */
CDB_DECODER(cdb_dec_read_toc);
CDB_DECODER(cdb_dec_get_configuration);
CDB_DECODER(cdb_dec_gesn);
CDB_DECODER(cdb_dec_read_disc_info);
CDB_DECODER(cdb_dec_read_track_info);
CDB_DECODER(cdb_dec_mechanism_status);
CDB_DECODER(cdb_dec_set_cd_speed);
CDB_DECODER(cdb_dec_read_cd);
CDB_DECODER(cdb_dec_read_disc_structure);
#endif
