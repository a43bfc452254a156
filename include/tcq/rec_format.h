/*
 * The crash lab's recording file (docs/crash-lab.md): what a LUN was asked
 * to write, flush and order, as tcqd saw it, written by the device server
 * (scsi/record.c) and read by tcq-crash and the crash backend (crash/).
 * Every field is little-endian; every record carries a CRC32C, and a
 * reader checks lengths, types, CRCs and the order of sequence numbers
 * before it trusts anything (rec_next).
 *
 *   file   = header record*
 *   header = "TCQREC1\n" u32 version u32 header_len u32 block_size
 *            u32 flags u64 nblocks u64 lun_id u64 start_ns(realtime)
 *            u16 target_len target u16 base_len base  u32 crc
 *   record = u32 len u8 type u8 flags u16 0 u64 seq payload u32 crc
 *            (len counts the whole record; crc covers what precedes it;
 *            seq counts records from 1 without gaps)
 *
 * The base is the LUN's content when recording began: a file next to the
 * recording (its name relative to the recording's directory), or none
 * when the LUN held only zeros (REC_HDR_BASE_ZERO).
 */
#ifndef TCQ_REC_FORMAT_H
#define TCQ_REC_FORMAT_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define REC_MAGIC "TCQREC1\n"
#define REC_VERSION 1
#define REC_NAME_MAX 256
#define REC_HDR_MAX (64 + 2 * REC_NAME_MAX)
#define REC_FIXED 16		/* len, type, flags, pad, seq */
#define REC_MAX_DATA (64u << 20)	/* one record's data, at most */

/* header flags */
#define REC_HDR_BASE_ZERO 0x1	/* no base file: the LUN was all zeros */

enum rec_type {
	REC_NEXUS = 1,	/* u32 nexus, u16 len, name: an I_T nexus, once */
	REC_ARRIVE,	/* a task the model needs entered the task set */
	REC_WRITE,	/* a piece of a task that goes to the medium */
	REC_DONE,	/* a recorded task ended (its status) */
	REC_MARK,	/* u16 len, text: tcqctl mark */
	REC_END,	/* u8 reason, u16 len, text: the recording stopped */
	REC_TYPE_MAX,
};

/* REC_ARRIVE: u64 task, u32 nexus, u8 attr (SAM-5 task attribute, 1
 * SIMPLE, 2 ORDERED, 3 HEAD OF QUEUE, 4 ACA), u8 opcode, u16 flags,
 * u64 lba, u32 blocks. */
#define REC_A_WRITE 0x01	/* it modifies the medium */
#define REC_A_SYNC 0x02		/* SYNCHRONIZE CACHE */
#define REC_A_FUA 0x04		/* FUA in the CDB */
#define REC_A_WCE 0x08		/* the write cache was on at arrival */
#define REC_A_IMMED 0x10	/* SYNCHRONIZE CACHE with IMMED=1 */
#define REC_A_IGNORED 0x20	/* flush = ignore: the sync flushed nothing */
#define REC_A_ATOMIC 0x40	/* WRITE ATOMIC: all of it or none */

/* REC_WRITE: u64 task, u64 lba, u32 blocks, u8 kind, u8 0, u16 0, then
 * the data: blocks x block_size bytes (REC_W_DATA), one block
 * (REC_W_SAME), none (REC_W_ZERO: zeros, REC_W_UNMAP: deallocated,
 * reading zeros). Flag REC_W_FUA: submitted with FUA (durable once the
 * task ends GOOD). */
enum rec_wkind { REC_W_DATA, REC_W_SAME, REC_W_ZERO, REC_W_UNMAP };
#define REC_W_FUA 0x01

/* REC_DONE: u64 task, u8 status (SAM status), u8 sense key, u16 ASC/ASCQ */

enum rec_end_reason {
	REC_END_STOPPED,	/* tcqctl record stop, or the LUN went */
	REC_END_FULL,		/* record_max reached */
	REC_END_ERROR,		/* the file could not be written */
};

struct rec_header {
	uint32_t version, block_size, flags;
	uint64_t nblocks, lun_id, start_ns;
	char target[REC_NAME_MAX];
	char base[REC_NAME_MAX];
};

struct rec_arrive {
	uint64_t task;
	uint32_t nexus;
	uint8_t attr, opcode;
	uint16_t flags;
	uint64_t lba;
	uint32_t blocks;
};

struct rec_write {
	uint64_t task, lba;
	uint32_t blocks;
	uint8_t kind;
	uint64_t data_off;	/* reader: where the data is in the file */
	uint32_t data_len;
};

struct rec_done {
	uint64_t task;
	uint8_t status, key;
	uint16_t asc;
};

/* One record as a reader sees it. */
struct rec {
	uint8_t type, flags;
	uint64_t seq;
	uint64_t off;		/* of the record in the file */
	union {
		struct { uint32_t nexus; char name[REC_NAME_MAX]; } nexus;
		struct rec_arrive arrive;
		struct rec_write write;
		struct rec_done done;
		struct { char text[REC_NAME_MAX]; } mark;
		struct { uint8_t reason; char text[REC_NAME_MAX]; } end;
	} u;
};

/* ---- writing (the bytes of one record into a buffer) ------------------ */

/* The header; returns its length, or 0 when out does not hold it. */
size_t rec_put_header(uint8_t *out, size_t cap, const struct rec_header *h);
/* The fixed part of every record type but REC_WRITE's data: returns the
 * length written (CRC included), 0 when out is too small. */
size_t rec_put(uint8_t *out, size_t cap, const struct rec *r);
/* REC_WRITE with its data (data_len bytes): header, data and CRC into
 * out; 0 when out is too small. */
size_t rec_put_write(uint8_t *out, size_t cap, uint64_t seq, uint8_t flags,
		     const struct rec_write *w, const void *data);
/* Bytes a REC_WRITE with data_len bytes of data takes. */
size_t rec_write_size(uint32_t data_len);
/* The REC_WRITE's first REC_WRITE_HEAD bytes, for a writer that appends
 * the data and the CRC32C itself (over the head, then the data). */
#define REC_WRITE_HEAD (REC_FIXED + 24)
void rec_write_head(uint8_t *out, uint64_t seq, uint8_t flags,
		    const struct rec_write *w);

/* ---- reading ------------------------------------------------------------ */

struct rec_reader {
	int fd;
	uint64_t size;		/* of the file */
	uint64_t pos;		/* of the next record */
	uint64_t next_seq;
	struct rec_header hdr;
	uint8_t *buf;		/* one record's fixed part */
	char err[256];
};

/* Opens path and checks its header; -1 with r->err set. */
int rec_open(struct rec_reader *r, const char *path);
void rec_close(struct rec_reader *r);
/* The next record: 1, 0 at a clean end of file, -1 on a truncated,
 * corrupt or out-of-order record (r->err says where and why). The data
 * of a REC_WRITE is checked (its CRC) but not kept: data_off says where
 * to read it. */
int rec_next(struct rec_reader *r, struct rec *out);
/* Reads len bytes of data at off (a REC_WRITE's data_off..): 0 or -1. */
int rec_read_data(struct rec_reader *r, uint64_t off, void *buf, size_t len);
/* A short name of a record type, for messages. */
const char *rec_type_name(uint8_t type);
#endif
