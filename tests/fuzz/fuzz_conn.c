/*
 * Fuzzer 4: a whole connection. The target's side of a socketpair becomes
 * a struct conn on a reactor (conn_accept, as the portal does) in a daemon
 * built in memory from a configuration with two ram LUNs (512 and 4096
 * byte blocks). The input is written to the initiator's side, reactor
 * passes run until nothing moves, the target's answers are drained, and
 * the connection is closed; everything it allocated must be freed by
 * then (LeakSanitizer checks after each input).
 *
 * Input: byte 0 is control. Bit 0 set: a canned login (operational stage
 * straight to the full feature phase, no digests, ImmediateData=Yes,
 * InitialR2T=No) goes first, so the fuzzer spends its time on full
 * feature phase PDUs; clear: the input is the whole byte stream, login
 * included. Bits 1-3 pick the write chunk size so partial headers, AHS
 * and data segments are exercised.
 */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>
#include "tcq/log.h"
#include "tcq/pdu.h"
#include "target/config.h"
#include "target/conn.h"
#include "tcq/reactor.h"
#include "target/target.h"
#include "tests/fuzz/fuzz.h"

#define FUZZ_IQN "iqn.2026-11.org.tcq:fuzz"
#define FUZZ_INITIATOR "iqn.2026-11.org.tcq:fuzzer"
#define MAX_PASSES 20000

static struct reactor reactor;
static bool ready;

static int setup(void)
{
	struct cfg c;
	struct cfg_lun *l;
	char err[256];

	if (getenv("FUZZ_VERBOSE") == NULL)
		log_set_level(LOG_ERR);
	if (reactor_init(&reactor, 0) < 0)
		return -1;
	cfg_init(&c);
	if (!cfg_add_target(&c, FUZZ_IQN, err, sizeof(err)))
		goto fail;
	for (unsigned id = 0; id < 2; id++) {
		l = cfg_add_lun(&c, FUZZ_IQN, id, err, sizeof(err));
		if (!l)
			goto fail;
		free(l->backend);
		l->backend = strdup("ram");
		l->size = 4u << 20;
		l->block_size = id ? 4096 : 512;
		l->queue_depth = 8;
	}
	if (cfg_add_listen(&c, "127.0.0.1:0", err, sizeof(err)) < 0 ||
	    cfg_finish(&c, "fuzz") < 0)
		goto fail;
	/* Small enough to keep each input cheap, large enough for bursts. */
	c.set.max_xfer_len = 1u << 20;
	c.set.max_recv_dsl = 65536;
	tcqd = cfg_build(&c, err, sizeof(err));
	cfg_free(&c);
	if (!tcqd) {
		fprintf(stderr, "fuzz_conn: %s\n", err);
		return -1;
	}
	return 0;
fail:
	fprintf(stderr, "fuzz_conn: %s\n", err);
	for (int i = 0; i < c.nmsgs; i++)
		fprintf(stderr, "%s\n", c.msgs[i]);
	cfg_free(&c);
	return -1;
}

static void one_pass(void)
{
	reactor_stop(&reactor);
	reactor_run(&reactor);
}

/* Reads and drops what the target sent; returns the byte count. */
static size_t drain(int fd)
{
	static uint8_t sink[65536];
	size_t total = 0;
	ssize_t n;

	while ((n = read(fd, sink, sizeof(sink))) > 0)
		total += (size_t)n;
	return total;
}

/* Bytes written to fd that the target has not read yet. */
static int unread(int fd)
{
	int n = 0;

	if (ioctl(fd, TIOCOUTQ, &n) < 0)
		return 0;
	return n;
}

static size_t kv(uint8_t *buf, size_t off, const char *k, const char *v)
{
	off += (size_t)sprintf((char *)buf + off, "%s=%s", k, v);
	buf[off++] = 0;
	return off;
}

/* The canned login: one Login Request, CSG 1 -> FFP, CmdSN 1. */
static size_t canned_login(uint8_t *buf)
{
	static const uint8_t isid[6] = { 0x80, 0x00, 0x00, 0x01, 0x00, 0x01 };
	struct pdu_login_req q = {
		.transit = true,
		.csg = ISCSI_STAGE_OPERATIONAL,
		.nsg = ISCSI_STAGE_FULL_FEATURE,
		.itt = 0x1000,
		.cmdsn = 1,
		.expstatsn = 0,
	};
	size_t d = ISCSI_BHS_LEN;

	memcpy(q.isid, isid, 6);
	d = kv(buf, d, "InitiatorName", FUZZ_INITIATOR);
	d = kv(buf, d, "TargetName", FUZZ_IQN);
	d = kv(buf, d, "SessionType", "Normal");
	d = kv(buf, d, "HeaderDigest", "None");
	d = kv(buf, d, "DataDigest", "None");
	d = kv(buf, d, "MaxRecvDataSegmentLength", "65536");
	d = kv(buf, d, "InitialR2T", "No");
	d = kv(buf, d, "ImmediateData", "Yes");
	d = kv(buf, d, "MaxBurstLength", "262144");
	d = kv(buf, d, "FirstBurstLength", "65536");
	d = kv(buf, d, "MaxOutstandingR2T", "2");
	d = kv(buf, d, "ErrorRecoveryLevel", "0");
	q.data_len = (uint32_t)(d - ISCSI_BHS_LEN);
	pdu_encode_login_req(buf, &q);
	pdu_set_data_len(buf, q.data_len);
	while (d & 3)
		buf[d++] = 0;
	return d;
}

/* Runs passes until the reactor has nothing left to do. */
static void settle(int fd)
{
	int idle = 0;

	for (int i = 0; i < MAX_PASSES && idle < 3; i++) {
		size_t got;

		one_pass();
		got = drain(fd);
		if (got || !list_empty(&reactor.deferred) ||
		    (fd >= 0 && unread(fd) > 0))
			idle = 0;
		else
			idle++;
	}
}

static void feed(int fd, const uint8_t *p, size_t len, size_t chunk)
{
	size_t off = 0;
	int stuck = 0;

	while (off < len && stuck < 1000) {
		size_t want = len - off < chunk ? len - off : chunk;
		ssize_t n = send(fd, p + off, want, MSG_NOSIGNAL | MSG_DONTWAIT);

		if (n > 0) {
			off += (size_t)n;
			stuck = 0;
		} else if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK &&
			   errno != EINTR) {
			return;		/* the target closed the connection */
		} else {
			stuck++;
		}
		one_pass();
		drain(fd);
	}
}

int FUZZ_ENTRY(conn)(const uint8_t *data, size_t size)
{
	static const size_t chunks[] = { 1u << 20, 1, 7, 48, 53, 512, 4096,
					 65536 };
	static uint8_t login[1024];
	struct sockaddr_in peer = { .sin_family = AF_INET,
				    .sin_port = htons(40000) };
	int sv[2];
	size_t chunk;

	if (size < 1 || size > (1u << 20))
		return 0;
	if (!ready) {
		if (setup() < 0)
			abort();
		ready = true;
	}
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) < 0)
		return 0;
	fcntl(sv[1], F_SETFL, fcntl(sv[1], F_GETFL) | O_NONBLOCK);
	peer.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (conn_accept(&reactor, sv[0], tcqd->portals[0],
			(const struct sockaddr *)&peer, sizeof(peer)) < 0) {
		close(sv[1]);
		settle(-1);
		return 0;
	}
	chunk = chunks[(data[0] >> 1) & 7];
	if (data[0] & 1) {
		size_t n = canned_login(login);

		feed(sv[1], login, n, n);
		settle(sv[1]);
	}
	feed(sv[1], data + 1, size - 1, chunk);
	settle(sv[1]);
	/* End of input: the initiator goes away; the connection, its
	 * session and every command must be torn down and freed. */
	shutdown(sv[1], SHUT_WR);
	settle(sv[1]);
	close(sv[1]);
	settle(-1);
	return 0;
}
