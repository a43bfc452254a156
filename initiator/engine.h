/*
 * tcq-bench engines: one engine instance drives one I/O channel (an iSCSI
 * session, or a local libaio context) from one worker thread. The worker
 * multiplexes its engines with poll(): each exposes a file descriptor and
 * the events it waits for, and service() makes progress on them, calling
 * each finished bench_io's done(). Engines never block.
 */
#ifndef TCQ_ENGINE_H
#define TCQ_ENGINE_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct engine;

/* Task attributes (SAM-5), as sent in the iSCSI SCSI Command PDU. */
enum bench_attr {
	BENCH_ATTR_SIMPLE = 1,
	BENCH_ATTR_ORDERED = 2,
	BENCH_ATTR_HOQ = 3,
};

/* What a bench_io sends (bench_mix.c chooses; engine_ops.supports_cmd
 * says what an engine can send). BENCH_CMD_RW is READ or WRITE, with
 * .fua and the old whole-LUN .sync (SYNCHRONIZE CACHE(10)). */
enum bench_cmd {
	BENCH_CMD_RW = 0,
	BENCH_CMD_SYNC16,	/* SYNCHRONIZE CACHE(16) of the whole LUN */
	BENCH_CMD_UNMAP,	/* UNMAP of [lba, lba+blocks): one descriptor */
	BENCH_CMD_WS,		/* WRITE SAME(16): buf's first block */
	BENCH_CMD_WS_UNMAP,	/* WRITE SAME(16) with UNMAP=1 */
	BENCH_CMD_CAW,		/* COMPARE AND WRITE: buf holds 2 x blocks */
	BENCH_CMD_XCOPY,	/* EXTENDED COPY (LID1) of blocks, lba to lba2 */
	BENCH_CMD_COUNT
};

struct bench_io {
	uint64_t lba;
	uint32_t blocks;
	bool write;
	bool fua;		/* a write with FUA (supports_barriers) */
	bool sync;		/* SYNCHRONIZE CACHE of the whole LUN instead
				 * (lba, blocks, write and buf unused) */
	uint8_t attr;		/* enum bench_attr */
	uint8_t cmd;		/* enum bench_cmd */
	uint64_t lba2;		/* BENCH_CMD_XCOPY: the destination */
	void *buf;		/* blocks * block_size bytes, page-aligned */
	/* results, set before done() */
	int status;		/* SCSI status (0 GOOD), or -errno on transport
				 * failure (connection lost, ...) */
	uint8_t sense_key;
	uint8_t asc, ascq;
	uint32_t seq;		/* completion order within the engine, as the
				 * target reported it (StatSN for iSCSI) */
	uint64_t t_submit_ns, t_done_ns;
	void (*done)(struct bench_io *io);
	void *ctx;
};

struct engine_opts {
	const char *initiator_name;	/* NULL: a default */
	const char *chap_user, *chap_secret;	/* from the URL or options */
	const char *mutual_user, *mutual_secret;
	const char *chap_algs;		/* native: "SHA3-256,SHA-256,SHA-1,MD5" */
	bool header_digest, data_digest;	/* native: ask for CRC32C */
	uint32_t queue_depth;		/* most I/Os in flight at once */
	uint32_t max_io_bytes;		/* largest I/O that will be submitted */
	bool direct;			/* local: O_DIRECT (default true) */
	double reconnect;		/* --reconnect SECS (0: a lost
					 * connection ends the channel) */
	bool want_designator;		/* native: read the LUN's NAA
					 * designator at open (EXTENDED COPY) */
};

struct engine_ops {
	const char *name;
	/* Opens one channel to target (URL or path). Returns NULL and fills
	 * err on failure. */
	struct engine *(*open)(const char *target, const struct engine_opts *o,
			       char *err, size_t errlen);
	void (*close)(struct engine *e);
	uint32_t (*block_size)(struct engine *e);
	uint64_t (*nblocks)(struct engine *e);
	/* Queues io; returns 0, or -errno (then done() is not called). */
	int (*submit)(struct engine *e, struct bench_io *io);
	/* The fd to poll and the poll(2) events wanted now. */
	int (*get_fd)(struct engine *e);
	short (*events)(struct engine *e);
	/* Makes progress after poll() reported revents on the fd. Returns
	 * 0, or -errno when the channel failed (in-flight I/Os were
	 * completed with an error status). */
	int (*service)(struct engine *e, short revents);
	/* Whether the channel can send ORDERED/HEAD OF QUEUE attributes. */
	bool (*supports_attr)(struct engine *e);
	/* Whether the channel can send FUA writes and SYNCHRONIZE CACHE
	 * (bench_io.fua, .sync). NULL: it cannot. */
	bool (*supports_barriers)(struct engine *e);
	/* Whether the channel can send cmd (enum bench_cmd other than
	 * BENCH_CMD_RW). NULL: it cannot. */
	bool (*supports_cmd)(struct engine *e, int cmd);
	/* After service() failed and every I/O was completed: opens the
	 * channel again as the same initiator port (iSCSI: same ISID, so
	 * the target reinstates the session). Returns 0, or -1 with err
	 * filled (then the channel stays failed; it may be called again).
	 * NULL: the engine cannot (or reconnects by itself). */
	int (*reconnect)(struct engine *e, char *err, size_t errlen);
	/* An engine that reconnects by itself (libiscsi): the new logins
	 * it completed since the last call, with outage_s set to their
	 * seconds without service (each from the loss it noticed to its
	 * new login), summed. NULL: the engine does not reconnect by
	 * itself. */
	unsigned (*relogged)(struct engine *e, double *outage_s);
};

extern const struct engine_ops engine_native;
extern const struct engine_ops engine_libiscsi;
extern const struct engine_ops engine_local;

const struct engine_ops *engine_find(const char *name);
#endif
