/*
 * The control socket server (ctl.h): accepting clients, reading one
 * request line, checking it against the command table (tcq/ctl_cmds.h),
 * running its handler and writing the reply; the handlers are in
 * ctl_luns.c, ctl_stats.c, ctl_sessions.c and ctl_live.c. Everything here runs on reactor 0, except what a
 * command asks to run on every reactor (ctl_on_every_reactor).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE	/* accept4 */
#endif
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>
#include <json-c/json.h>
#include "tcq/ctl_cmds.h"
#include "tcq/ctl_words.h"
#include "tcq/list.h"
#include "tcq/log.h"
#include "tcq/reactor.h"
#include "target/ctl.h"
#include "target/ctl_priv.h"

#define CTL_LINE_MAX 4096	/* one request line */
#define CTL_MAX_ARGS 16
#define CTL_MAX_CONNS 32
#define CTL_IDLE_MS 10000	/* a client that sends nothing is dropped */

struct ctl_op;

/* One client: one request, one reply. */
struct ctl_conn {
	struct list_node node;
	struct reactor_fd rfd;
	int fd;
	char in[CTL_LINE_MAX + 1];
	size_t inlen;
	bool overlong;		/* discarding a too long request to its end */
	char *out;		/* reply being written */
	size_t outlen, outoff;
	struct ctl_op *op;	/* a request waiting for other reactors */
	struct reactor_timer idle;
};

/* A request that runs on every reactor: replies once all ran it. */
struct ctl_op {
	int pending;		/* reactors still to run it (atomic) */
	struct ctl_conn *cc;	/* NULL once the client went away */
	void (*fn)(void *arg);
	void *arg;
};

static struct {
	int fd;
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	struct reactor **reactors;
	int nreactors;
	struct reactor_fd rfd;
	struct list_node conns;
	int nconns;
	bool running;
} ctl = { .fd = -1 };

static void ctl_conn_close(struct ctl_conn *cc);
static void ctl_conn_reply(struct ctl_conn *cc, json_object *reply);

/* ---- the commands ------------------------------------------------------- */

/* tcqd's side of each row of the command table (tcq/ctl_cmds.h). */
ctl_handler *const ctl_handlers[CTL_NCMDS] = {
	[CTL_CMD_STATS] = ctl_cmd_stats,
	[CTL_CMD_LUNS] = ctl_cmd_luns,
	[CTL_CMD_TARGETS] = ctl_cmd_targets,
	[CTL_CMD_SESSIONS] = ctl_cmd_sessions,
	[CTL_CMD_CONFIG] = ctl_cmd_config,
	[CTL_CMD_METRICS] = ctl_cmd_metrics,
	[CTL_CMD_RESET] = ctl_cmd_reset,
	[CTL_CMD_TARGET] = ctl_cmd_target,
	[CTL_CMD_LUN] = ctl_cmd_lun,
	[CTL_CMD_SET] = ctl_cmd_set,
	[CTL_CMD_PORTAL] = ctl_cmd_portal,
	[CTL_CMD_ACL] = ctl_cmd_acl,
	[CTL_CMD_CHAP] = ctl_cmd_chap,
	[CTL_CMD_SAVE] = ctl_cmd_save,
	[CTL_CMD_RELOAD] = ctl_cmd_reload,
	[CTL_CMD_CRASH] = ctl_cmd_crash,
	[CTL_CMD_RECORD] = ctl_cmd_record,
	[CTL_CMD_MARK] = ctl_cmd_mark,
	[CTL_CMD_ISNS] = ctl_cmd_isns,
};

const char *ctl_usage(enum ctl_cmd_id id, const char *form, char *buf,
		      size_t len)
{
	int n = snprintf(buf, len, "usage: ");

	if (n > 0 && (size_t)n < len)
		ctl_cmd_def_usage(&ctl_cmd_defs[id], form, buf + n,
				  len - (size_t)n);
	return buf;
}

static json_object *ctl_unknown_command(const char *name)
{
	char names[256];
	size_t n = 0;

	names[0] = '\0';
	for (unsigned i = 0; i < CTL_NCMDS && n < sizeof(names); i++)
		n += (size_t)snprintf(names + n, sizeof(names) - n, "%s%s",
				      i ? ", " : "", ctl_cmd_defs[i].name);
	return ctl_reply_err("unknown command '%.64s' (%s)", name, names);
}

/* Runs one request line; NULL when the answer comes later (cc->op). */
static json_object *ctl_request(struct ctl_conn *cc, char *line)
{
	char *argv[CTL_MAX_ARGS + 1], *save = NULL, *name, usage[512];
	const struct ctl_cmd_def *cmd;
	enum ctl_cmd_id id;
	int argc = 0;

	name = strtok_r(line, " \t\r", &save);
	if (!name)
		return ctl_reply_err("empty request");
	for (char *w; (w = strtok_r(NULL, " \t\r", &save));) {
		if (argc == CTL_MAX_ARGS)
			return ctl_reply_err("too many arguments");
		ctl_word_decode(w);	/* tcqctl percent-encodes each word */
		argv[argc++] = w;
	}
	argv[argc] = NULL;
	cmd = ctl_cmd_def_find(name);
	if (!cmd)
		return ctl_unknown_command(name);
	id = (enum ctl_cmd_id)(cmd - ctl_cmd_defs);
	if (argc < cmd->min_args ||
	    (cmd->max_args >= 0 && argc > cmd->max_args))
		return ctl_reply_err("%s", ctl_usage(id, NULL, usage,
						      sizeof(usage)));
	return ctl_handlers[id](cc, argv, argc);
}

/* ---- replies ------------------------------------------------------------ */

json_object *ctl_reply_ok(void)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "ok", json_object_new_boolean(1));
	return o;
}

json_object *ctl_reply_err(const char *fmt, ...)
{
	json_object *o = json_object_new_object();
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	json_object_object_add(o, "ok", json_object_new_boolean(0));
	json_object_object_add(o, "error", json_object_new_string(msg));
	return o;
}

void ctl_add_u64(json_object *o, const char *k, uint64_t v)
{
	json_object_object_add(o, k, json_object_new_int64((int64_t)v));
}

void ctl_add_str(json_object *o, const char *k, const char *v)
{
	json_object_object_add(o, k, json_object_new_string(v));
}

void ctl_add_bool(json_object *o, const char *k, bool v)
{
	json_object_object_add(o, k, json_object_new_boolean(v));
}

void ctl_add_us(json_object *o, const char *k, uint64_t ns)
{
	/* microseconds with ns precision, rounded to 0.1 us for people */
	json_object_object_add(o, k,
			       json_object_new_double((double)(ns / 100) / 10.0));
}

/* ---- requests that run on every reactor --------------------------------- */

static void ctl_op_finish(void *arg)	/* on reactor 0 */
{
	struct ctl_op *op = arg;

	if (op->cc) {
		op->cc->op = NULL;
		ctl_conn_reply(op->cc, ctl_reply_ok());
	}
	free(op);
}

static void ctl_op_step(struct ctl_op *op)
{
	if (__atomic_sub_fetch(&op->pending, 1, __ATOMIC_ACQ_REL) != 0)
		return;
	if (reactor_self() == ctl.reactors[0])
		ctl_op_finish(op);
	else if (reactor_post(ctl.reactors[0], ctl_op_finish, op) < 0)
		log_err("tcqctl: cannot answer a request (out of memory)");
}

static void ctl_op_run(void *arg)
{
	struct ctl_op *op = arg;

	op->fn(op->arg);
	ctl_op_step(op);
}

json_object *ctl_on_every_reactor(struct ctl_conn *cc, void (*fn)(void *),
				  void *arg)
{
	struct ctl_op *op = calloc(1, sizeof(*op));

	if (!op)
		return ctl_reply_err("out of memory");
	op->cc = cc;
	op->fn = fn;
	op->arg = arg;
	op->pending = ctl.nreactors;
	cc->op = op;
	for (int i = 1; i < ctl.nreactors; i++) {
		if (reactor_post(ctl.reactors[i], ctl_op_run, op) < 0)
			ctl_op_step(op);	/* that reactor is left out */
	}
	ctl_op_run(op);	/* ours, last: may reply at once */
	return NULL;
}

/* ---- answers that come later ------------------------------------------- */

struct ctl_op *ctl_defer(struct ctl_conn *cc)
{
	struct ctl_op *op = calloc(1, sizeof(*op));

	if (!op)
		return NULL;
	op->cc = cc;
	cc->op = op;
	return op;
}

void ctl_deferred_reply(struct ctl_op *op, json_object *reply)
{
	if (op->cc) {
		op->cc->op = NULL;
		ctl_conn_reply(op->cc, reply);
	} else {
		json_object_put(reply);	/* the client went away */
	}
	free(op);
}

/* ---- connections -------------------------------------------------------- */

static void ctl_conn_close(struct ctl_conn *cc)
{
	if (cc->op)
		cc->op->cc = NULL;	/* the op frees itself when done */
	reactor_timer_cancel(ctl.reactors[0], &cc->idle);
	reactor_del_fd(ctl.reactors[0], &cc->rfd);
	close(cc->fd);
	list_del(&cc->node);
	ctl.nconns--;
	free(cc->out);
	free(cc);
}

static void ctl_conn_flush(struct ctl_conn *cc)
{
	while (cc->outoff < cc->outlen) {
		ssize_t n = send(cc->fd, cc->out + cc->outoff,
				 cc->outlen - cc->outoff, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN) {
			reactor_mod_fd(ctl.reactors[0], &cc->rfd, EPOLLOUT);
			return;
		}
		if (n <= 0) {
			ctl_conn_close(cc);
			return;
		}
		cc->outoff += (size_t)n;
	}
	ctl_conn_close(cc);	/* one request per connection */
}

static void ctl_conn_reply(struct ctl_conn *cc, json_object *reply)
{
	const char *txt = json_object_to_json_string_ext(
		reply, JSON_C_TO_STRING_PLAIN);
	size_t n = strlen(txt);

	cc->out = malloc(n + 2);
	if (cc->out) {
		memcpy(cc->out, txt, n);
		cc->out[n] = '\n';
		cc->outlen = n + 1;
	}
	json_object_put(reply);
	if (!cc->out) {
		ctl_conn_close(cc);
		return;
	}
	ctl_conn_flush(cc);
}

/* One request is all a client gets: no more input is read. */
static void ctl_conn_stop_reading(struct ctl_conn *cc)
{
	reactor_mod_fd(ctl.reactors[0], &cc->rfd, 0);
}

static void ctl_conn_request(struct ctl_conn *cc)
{
	json_object *r;

	ctl_conn_stop_reading(cc);
	r = ctl_request(cc, cc->in);
	if (r)
		ctl_conn_reply(cc, r);
}

static void ctl_conn_event(struct reactor *r, uint32_t events, void *arg)
{
	struct ctl_conn *cc = arg;
	char *nl;
	ssize_t n;

	if (cc->out) {
		if (events & (EPOLLOUT | EPOLLERR | EPOLLHUP))
			ctl_conn_flush(cc);
		return;
	}
	if (cc->op) {	/* waiting for other reactors */
		if (events & (EPOLLERR | EPOLLHUP))
			ctl_conn_close(cc);
		return;
	}
	for (;;) {
		size_t room = CTL_LINE_MAX - cc->inlen;

		if (room == 0) {
			/* Read the rest before answering: closing on unread
			 * input would reset the connection under the reply. */
			cc->overlong = true;
			cc->inlen = 0;
			room = CTL_LINE_MAX;
		}
		n = recv(cc->fd, cc->in + cc->inlen, room, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return;
		if (n < 0) {
			ctl_conn_close(cc);
			return;
		}
		if (cc->overlong &&
		    (n == 0 || memchr(cc->in + cc->inlen, '\n', (size_t)n))) {
			ctl_conn_stop_reading(cc);
			ctl_conn_reply(cc, ctl_reply_err(
				"request longer than %d bytes", CTL_LINE_MAX));
			return;
		}
		if (n == 0) {	/* EOF: what came is the request */
			if (cc->inlen == 0) {
				ctl_conn_close(cc);
				return;
			}
			cc->in[cc->inlen] = '\0';
			ctl_conn_request(cc);
			return;
		}
		cc->inlen += (size_t)n;
		cc->in[cc->inlen] = '\0';
		if (cc->overlong) {
			cc->inlen = 0;
			continue;
		}
		if (memchr(cc->in, '\0', cc->inlen)) {
			ctl_conn_stop_reading(cc);
			ctl_conn_reply(cc, ctl_reply_err(
				"NUL byte in request"));
			return;
		}
		nl = strchr(cc->in, '\n');
		if (nl) {
			*nl = '\0';
			ctl_conn_request(cc);
			return;
		}
	}
}

static void ctl_conn_idle(struct reactor_timer *t)
{
	struct ctl_conn *cc = t->arg;

	if (cc->op)
		return;		/* the reply is on its way */
	log_debug("tcqctl: idle control connection dropped");
	ctl_conn_close(cc);
}

static void ctl_accept(struct reactor *r, uint32_t events, void *arg)
{
	for (;;) {
		int fd = accept4(ctl.fd, NULL, NULL,
				 SOCK_NONBLOCK | SOCK_CLOEXEC);
		struct ctl_conn *cc;

		if (fd < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			if (errno != EAGAIN)
				log_warn("tcqctl: accept: %s", strerror(errno));
			return;
		}
		if (ctl.nconns >= CTL_MAX_CONNS ||
		    !(cc = calloc(1, sizeof(*cc)))) {
			close(fd);
			continue;
		}
		cc->fd = fd;
		reactor_timer_init(&cc->idle, ctl_conn_idle, cc);
		if (reactor_add_fd(r, &cc->rfd, fd, EPOLLIN, ctl_conn_event,
				   cc) < 0) {
			close(fd);
			free(cc);
			continue;
		}
		list_add_tail(&cc->node, &ctl.conns);
		ctl.nconns++;
		reactor_timer_arm(r, &cc->idle, CTL_IDLE_MS);
	}
}

/* ---- start / stop ------------------------------------------------------- */

/* A socket file nobody answers on is a leftover of a dead tcqd. */
static bool socket_is_live(const struct sockaddr_un *sa)
{
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	bool live;

	if (fd < 0)
		return true;	/* cannot tell: do not steal it */
	live = connect(fd, (const struct sockaddr *)sa, sizeof(*sa)) == 0 ||
	       errno != ECONNREFUSED;
	close(fd);
	return live;
}

int ctl_start(const char *path, struct reactor **reactors, int nreactors,
	      char *err, size_t errlen)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct stat st;
	mode_t old;
	int fd;

	if (!path || !*path) {
		snprintf(err, errlen, "control socket: empty path");
		return -1;
	}
	for (unsigned i = 0; i < CTL_NCMDS; i++) {
		if (!ctl_handlers[i]) {	/* tests/unit/test_ctl_cmds.c */
			snprintf(err, errlen, "control socket: command %s has "
				 "no handler", ctl_cmd_defs[i].name);
			return -1;
		}
	}
	if (strlen(path) >= sizeof(sa.sun_path)) {
		snprintf(err, errlen, "control socket %s: path longer than %zu "
			 "bytes", path, sizeof(sa.sun_path) - 1);
		return -1;
	}
	memcpy(sa.sun_path, path, strlen(path) + 1);
	if (lstat(path, &st) == 0) {
		if (!S_ISSOCK(st.st_mode)) {
			snprintf(err, errlen, "control socket %s: exists and is "
				 "not a socket", path);
			return -1;
		}
		if (socket_is_live(&sa)) {
			snprintf(err, errlen, "control socket %s: in use (is "
				 "another tcqd running?)", path);
			return -1;
		}
		unlink(path);
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		snprintf(err, errlen, "control socket: %s", strerror(errno));
		return -1;
	}
	/* The file is born 0600: no window where others could connect. */
	old = umask(0177);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		umask(old);
		snprintf(err, errlen, "control socket %s: %s", path,
			 strerror(errno));
		close(fd);
		return -1;
	}
	umask(old);
	if (listen(fd, 16) < 0 ||
	    reactor_add_fd(reactors[0], &ctl.rfd, fd, EPOLLIN, ctl_accept,
			   NULL) < 0) {
		snprintf(err, errlen, "control socket %s: %s", path,
			 strerror(errno));
		close(fd);
		unlink(path);
		return -1;
	}
	ctl.fd = fd;
	memcpy(ctl.path, sa.sun_path, sizeof(ctl.path));
	ctl.reactors = reactors;
	ctl.nreactors = nreactors;
	list_init(&ctl.conns);
	ctl.running = true;
	return 0;
}

void ctl_stop(void)
{
	if (!ctl.running)
		return;
	while (!list_empty(&ctl.conns))
		ctl_conn_close(list_first_entry(&ctl.conns, struct ctl_conn,
						node));
	reactor_del_fd(ctl.reactors[0], &ctl.rfd);
	close(ctl.fd);
	ctl.fd = -1;
	unlink(ctl.path);
	ctl.running = false;
	ctl_record_quiesce();	/* before the LUNs go */
}
