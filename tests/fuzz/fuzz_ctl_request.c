/*
 * Fuzzer: the control socket's request parser (target/ctl.c: reading one
 * request line, the overlong and NUL cases, splitting it into words,
 * percent-decoding them, finding the command and checking its argument
 * count) through a real control socket on a reactor, as tcqctl reaches
 * it. The command handlers are this harness's probes instead of tcqd's
 * (which change the running daemon and write files): each checks that
 * what the parser hands over is within the command table's bounds and
 * made of words tcqctl could have sent, and answers "ok". Input: the
 * bytes a client sends before it shuts its side down. Checks: every
 * request gets exactly one JSON object back, or none for an empty one,
 * within a bounded number of reactor passes.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#include <json-c/json.h>
#include "tcq/ctl_words.h"
#include "tcq/log.h"
#include "tcq/reactor.h"
#include "target/ctl.h"
#include "target/ctl_priv.h"
#include "tests/fuzz/fuzz.h"

#define MAX_PASSES 2000

static struct reactor reactor;
static struct reactor *reactors[1] = { &reactor };
static struct sockaddr_un addr = { .sun_family = AF_UNIX };
static bool ready;

static json_object *probe(enum ctl_cmd_id id, char **argv, int argc)
{
	const struct ctl_cmd_def *d = &ctl_cmd_defs[id];
	char enc[4096 * 3 + 1], dec[4096 * 3 + 1];

	if (argc < d->min_args || (d->max_args >= 0 && argc > d->max_args) ||
	    argv[argc] != NULL)
		abort();	/* the count check let it through */
	for (int i = 0; i < argc; i++) {
		/* A word tcqctl encodes comes back the same. */
		if (!argv[i][0] ||
		    ctl_word_encode(argv[i], enc, sizeof(enc)) == (size_t)-1)
			abort();
		strcpy(dec, enc);
		ctl_word_decode(dec);
		if (strcmp(dec, argv[i]) || strpbrk(enc, " \t\r\n"))
			abort();
	}
	return ctl_reply_ok();
}

#define PROBE(fn, id)							\
	json_object *fn(struct ctl_conn *cc, char **argv, int argc)	\
	{								\
		(void)cc;						\
		return probe(id, argv, argc);				\
	}
PROBE(ctl_cmd_stats, CTL_CMD_STATS)
PROBE(ctl_cmd_luns, CTL_CMD_LUNS)
PROBE(ctl_cmd_targets, CTL_CMD_TARGETS)
PROBE(ctl_cmd_sessions, CTL_CMD_SESSIONS)
PROBE(ctl_cmd_config, CTL_CMD_CONFIG)
PROBE(ctl_cmd_metrics, CTL_CMD_METRICS)
PROBE(ctl_cmd_reset, CTL_CMD_RESET)
PROBE(ctl_cmd_target, CTL_CMD_TARGET)
PROBE(ctl_cmd_lun, CTL_CMD_LUN)
PROBE(ctl_cmd_set, CTL_CMD_SET)
PROBE(ctl_cmd_portal, CTL_CMD_PORTAL)
PROBE(ctl_cmd_acl, CTL_CMD_ACL)
PROBE(ctl_cmd_chap, CTL_CMD_CHAP)
PROBE(ctl_cmd_save, CTL_CMD_SAVE)
PROBE(ctl_cmd_reload, CTL_CMD_RELOAD)
PROBE(ctl_cmd_crash, CTL_CMD_CRASH)
PROBE(ctl_cmd_record, CTL_CMD_RECORD)
PROBE(ctl_cmd_mark, CTL_CMD_MARK)
PROBE(ctl_cmd_isns, CTL_CMD_ISNS)

/* ctl_stop's hook for the recorder: the probes start no recording. */
void ctl_record_quiesce(void)
{
}

static void stop(void)
{
	ctl_stop();	/* removes the socket file */
}

static void setup(void)
{
	char err[256];

	if (getenv("FUZZ_VERBOSE") == NULL)
		log_set_level(LOG_ERR);
	if (reactor_init(&reactor, 0) < 0)
		abort();
	snprintf(addr.sun_path, sizeof(addr.sun_path),
		 "/tmp/tcq-fuzz-ctl.%d.sock", (int)getpid());
	if (ctl_start(addr.sun_path, reactors, 1, err, sizeof(err)) < 0) {
		fprintf(stderr, "fuzz_ctl_request: %s\n", err);
		abort();
	}
	atexit(stop);
	ready = true;
}

static void one_pass(void)
{
	reactor_stop(&reactor);
	reactor_run(&reactor);
}

int FUZZ_ENTRY(ctl_request)(const uint8_t *data, size_t size)
{
	static char reply[1 << 16];
	size_t off = 0, got = 0;
	bool eof = false;
	json_object *o;
	int fd, i;

	if (size > 16384)
		return 0;
	if (!ready)
		setup();
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return 0;
	if (connect(fd, (struct sockaddr *)&addr, sizeof(addr)) < 0)
		abort();
	if (size == 0)
		shutdown(fd, SHUT_WR);
	for (i = 0; i < MAX_PASSES && !eof; i++) {
		ssize_t n;

		if (off < size) {
			n = send(fd, data + off, size - off, MSG_NOSIGNAL);
			if (n > 0)
				off += (size_t)n;
			else if (n < 0 && errno != EAGAIN)
				off = size;	/* tcqd closed: it answered */
			if (off == size)
				shutdown(fd, SHUT_WR);
		}
		one_pass();
		while ((n = read(fd, reply + got, sizeof(reply) - 1 - got)) > 0)
			got += (size_t)n;
		if (n == 0 || (n < 0 && errno != EAGAIN))
			eof = true;
	}
	close(fd);
	one_pass();
	if (!eof)
		abort();	/* no answer, and the connection still open */
	reply[got] = 0;
	if (!got) {
		if (size)
			abort();	/* a request without an answer */
		return 0;
	}
	o = json_tokener_parse(reply);
	if (!o || !json_object_is_type(o, json_type_object))
		abort();	/* not one JSON object */
	json_object_put(o);
	return 0;
}
