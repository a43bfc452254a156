/*
 * The device server fixture of the parameter list harnesses
 * (fuzz_pr_out.c, fuzz_sbc_extended_copy.c, fuzz_sbc_unmap.c,
 * fuzz_spc_mode_select.c, fuzz_sbc_compare_and_write.c): a device with
 * one ram LUN (256 KiB, 512-byte blocks) and two I_T nexuses, made fresh
 * for each input (also without APTPL state) and torn down after it, so
 * every input starts from the same state and LeakSanitizer sees what one
 * input leaked. Commands run
 * through lun_task_arrive and lun_task_data_ready as the transport runs
 * them (target/cmd.c).
 */
#ifndef TCQ_FUZZ_LUN_H
#define TCQ_FUZZ_LUN_H
#include <stddef.h>
#include <stdint.h>

#define FUZZ_LUN_BLOCKS 512
#define FUZZ_LUN_BS 512
#define FUZZ_LUN_NEXUSES 2
/* Parameter lists and commands of one input are separated by this. */
#define FUZZ_SEP "FUZZ"

/* Makes the device, with no APTPL state; aborts when it cannot. */
void fuzz_lun_open(void);
/* Closes it and makes it again over the APTPL state it left (a restart
 * of tcqd): aborts when the LUN cannot be made from that state. */
void fuzz_lun_reopen(void);
/* Ends every command, the nexuses, the LUN and its backend. */
void fuzz_lun_close(void);
/* One command's data and answer. */
struct fuzz_io {
	const uint8_t *out;	/* Data-Out, or NULL: a Data-In command */
	uint32_t out_len;
	uint8_t *in;		/* where the Data-In goes (may be NULL) */
	uint32_t in_len;	/* its room (0 with in NULL: 64 KiB) */
	uint32_t got;		/* out: Data-In bytes copied */
	uint8_t key;		/* out: the sense key of a CHECK CONDITION */
	uint16_t asc;		/* out: its ASC and ASCQ */
};
/*
 * Runs one command from nexus n (mod FUZZ_LUN_NEXUSES) to its end. Aborts
 * when it does not end, ends twice, or ends with a status or sense that
 * no command may give (anything but GOOD, CHECK CONDITION with fixed or
 * descriptor sense, RESERVATION CONFLICT). Returns the status.
 */
uint8_t fuzz_lun_run(unsigned n, const uint8_t *cdb, uint16_t cdb_len,
		     struct fuzz_io *io);
/* The LUN's NAA designator (16 bytes, VPD page 83h). */
const uint8_t *fuzz_lun_naa(void);
/* Calls fn for each FUZZ_SEP-separated part of data (at most max). */
void fuzz_split(const uint8_t *data, size_t size, unsigned max,
		void (*fn)(unsigned i, const uint8_t *p, size_t len));
#endif
