/*
 * Fuzzer: the native initiator's receive path (native_sess_rx,
 * initiator/native_rx.c) as tcq-bench runs it against a target: a session
 * in the full feature phase with four commands in flight (two READs of
 * 8 KiB, two WRITEs of 8 KiB; ITTs 0x00010000 to 0x00010003, CmdSN from
 * 1), whose socket delivers the input as the target's byte stream. The
 * send side runs between reads (native_sess_tx), so R2Ts turn into
 * Data-Out. Input: byte 0 = control: HeaderDigest (bit 0), DataDigest
 * (bit 1), write chunk size (bits 2-4), MaxRecvDataSegmentLength 8 KiB
 * instead of 64 KiB (bit 5); the rest is the stream. Checks: each I/O
 * ends exactly once, by the PDUs or by the end of the connection, and
 * nothing is left in flight.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include "initiator/native_sess.h"
#include "tcq/login_keys.h"
#include "tcq/scsi_proto.h"
#include "tests/fuzz/fuzz.h"

#define NIO 4
#define IO_LEN 8192

struct fio {
	struct bench_io io;
	unsigned ndone;
};

static void io_done(struct bench_io *io)
{
	((struct fio *)io->ctx)->ndone++;
}

static void drain(int fd)
{
	static uint8_t sink[65536];

	while (read(fd, sink, sizeof(sink)) > 0)
		;
}

static void service(struct engine *e, int peer)
{
	(void)native_sess_rx(e);
	if (!e->failed)
		(void)native_sess_tx(e);
	drain(peer);
}

static void submit(struct engine *e, struct fio *f, unsigned i)
{
	uint8_t cdb[16] = { 0 };
	bool write = i >= 2;

	f->io.blocks = IO_LEN / 512;
	f->io.lba = i * 16;
	f->io.write = write;
	f->io.buf = calloc(1, IO_LEN);
	f->io.done = io_done;
	f->io.ctx = f;
	if (!f->io.buf)
		abort();
	cdb[0] = write ? SOP_WRITE_10 : SOP_READ_10;
	cdb[5] = (uint8_t)f->io.lba;
	cdb[8] = IO_LEN / 512;
	if (native_sess_submit_cdb(e, &f->io, cdb, IO_LEN, !write, write))
		abort();
}

int FUZZ_ENTRY(native_sess_rx)(const uint8_t *data, size_t size)
{
	static const size_t chunks[] = { 1u << 20, 1, 7, 48, 53, 512, 4096,
					 65536 };
	struct engine *e;
	struct fio f[NIO];
	size_t off, chunk;
	int sv[2];

	if (size < 1 || size > (1u << 20))
		return 0;
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) < 0)
		return 0;
	fcntl(sv[0], F_SETFL, fcntl(sv[0], F_GETFL) | O_NONBLOCK);
	fcntl(sv[1], F_SETFL, fcntl(sv[1], F_GETFL) | O_NONBLOCK);
	e = calloc(1, sizeof(*e));
	if (!e)
		abort();
	e->fd = sv[0];
	login_params_defaults(&e->p);
	e->p.header_digest = data[0] & 1;
	e->p.data_digest = data[0] & 2;
	e->p.max_recv_dsl = data[0] & 0x20 ? 8192 : 65536;
	e->p.max_send_dsl = 8192;
	e->p.immediate_data = false;
	e->p.initial_r2t = true;
	e->block_size = 512;
	e->nblocks = 2048;
	e->cmdsn = e->exp_cmdsn = 1;
	e->max_cmdsn = 64;
	if (native_sess_init(e, NIO) < 0)
		abort();
	memset(f, 0, sizeof(f));
	for (unsigned i = 0; i < NIO; i++)
		submit(e, &f[i], i);
	service(e, sv[1]);
	chunk = chunks[(data[0] >> 2) & 7];
	for (off = 1; off < size && !e->failed;) {
		size_t want = size - off < chunk ? size - off : chunk;
		ssize_t n = send(sv[1], data + off, want,
				 MSG_NOSIGNAL | MSG_DONTWAIT);

		if (n > 0)
			off += (size_t)n;
		else if (n < 0 && errno != EAGAIN && errno != EINTR)
			break;
		service(e, sv[1]);
	}
	/* The target hangs up: what is still in flight ends with an error. */
	shutdown(sv[1], SHUT_WR);
	for (int i = 0; i < 64 && !e->failed; i++)
		service(e, sv[1]);
	if (!e->failed)
		abort();	/* the end of the connection went unnoticed */
	native_sess_abort_all(e, e->failed);
	for (unsigned i = 0; i < NIO; i++) {
		if (f[i].ndone != 1)
			abort();	/* never ended, or ended twice */
		free(f[i].io.buf);
	}
	if (e->inflight)
		abort();
	native_sess_free(e);
	close(sv[0]);
	close(sv[1]);
	free(e);
	return 0;
}
