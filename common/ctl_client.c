/*
 * A client of tcqd's control socket (tcq/ctl_client.h). The request is
 * sent whole and the write side shut, so tcqd sees its end even without
 * a newline; the answer ends when tcqd closes the connection.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>
#include "tcq/ctl_client.h"

#define CTL_ANSWER_MAX (64u << 20)	/* refuse absurd answers */

/* A connected socket with its timeouts, or -1 with errno kept. */
static int ctl_connect(const char *path, int timeout_s, char *err,
		       size_t errlen)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct timeval tv = { .tv_sec = timeout_s };
	int fd, e;

	if (strlen(path) >= sizeof(sa.sun_path)) {
		snprintf(err, errlen, "%s: path too long", path);
		errno = ENAMETOOLONG;
		return -1;
	}
	memcpy(sa.sun_path, path, strlen(path) + 1);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		e = errno;
		snprintf(err, errlen, "cannot connect to %s: %s", path,
			 strerror(e));
		errno = e;
		return -1;
	}
	/* The send timeout also bounds connect() on a full backlog. */
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		e = errno;
		snprintf(err, errlen, "cannot connect to %s: %s", path,
			 e == EAGAIN ? "timed out" : strerror(e));
		close(fd);
		errno = e;
		return -1;
	}
	return fd;
}

static int ctl_send(int fd, const char *path, const char *line, char *err,
		    size_t errlen)
{
	size_t n = strlen(line), off = 0;

	while (off < n) {
		ssize_t w = send(fd, line + off, n - off, MSG_NOSIGNAL);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			int e = w < 0 ? errno : EIO;

			snprintf(err, errlen, "%s: send: %s", path,
				 e == EAGAIN ? "timed out" : strerror(e));
			errno = e;
			return -1;
		}
		off += (size_t)w;
	}
	shutdown(fd, SHUT_WR);
	return 0;
}

/* Everything until tcqd closes, NUL-terminated; NULL with err. */
static char *ctl_receive(int fd, const char *path, char *err, size_t errlen)
{
	size_t len = 0, cap = 4096;
	char *buf = malloc(cap);

	for (;;) {
		ssize_t r;

		if (!buf) {
			snprintf(err, errlen, "out of memory");
			errno = ENOMEM;
			return NULL;
		}
		if (len + 1 == cap) {
			char *nb = cap >= CTL_ANSWER_MAX ? NULL :
				   realloc(buf, cap * 2);

			if (!nb) {
				snprintf(err, errlen, "answer too large");
				free(buf);
				errno = EMSGSIZE;
				return NULL;
			}
			buf = nb;
			cap *= 2;
		}
		r = recv(fd, buf + len, cap - 1 - len, 0);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int e = errno;

			snprintf(err, errlen, "%s: %s", path, e == EAGAIN ?
				 "no answer (timed out)" : strerror(e));
			free(buf);
			errno = e;
			return NULL;
		}
		if (r == 0)
			break;
		len += (size_t)r;
	}
	buf[len] = '\0';
	return buf;
}

char *ctl_client_request(const char *path, const char *line, int timeout_s,
			 char *err, size_t errlen)
{
	char *answer = NULL;
	int fd = ctl_connect(path, timeout_s, err, errlen), e;

	if (fd < 0)
		return NULL;
	if (ctl_send(fd, path, line, err, errlen) == 0)
		answer = ctl_receive(fd, path, err, errlen);
	e = errno;
	close(fd);
	errno = e;
	return answer;
}
