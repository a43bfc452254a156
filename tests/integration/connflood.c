/*
 * connflood: opens N TCP connections to HOST:PORT that never say a word,
 * prints "opened N" once they are all up, holds them for SECONDS (or
 * until SIGTERM), then prints how many the target closed meanwhile. For
 * auth.sh: tcqd must shed them and still let a real login in.
 *
 *   connflood HOST PORT N SECONDS
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t stop;

static void on_term(int sig)
{
	stop = 1;
}

int main(int argc, char **argv)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	struct rlimit rl;
	struct pollfd *pf;
	int n, secs, opened = 0, closed = 0;
	time_t end;

	if (argc != 5 || inet_pton(AF_INET, argv[1], &sa.sin_addr) != 1) {
		fprintf(stderr, "usage: connflood IPV4 PORT N SECONDS\n");
		return 2;
	}
	sa.sin_port = htons((uint16_t)atoi(argv[2]));
	n = atoi(argv[3]);
	secs = atoi(argv[4]);
	if (n < 1 || n > 100000 || secs < 1)
		return 2;
	/* Room for n descriptors if the hard limit allows. */
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < (rlim_t)n + 16) {
		rl.rlim_cur = rl.rlim_max < (rlim_t)n + 16 ? rl.rlim_max :
							     (rlim_t)n + 16;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	signal(SIGTERM, on_term);
	signal(SIGINT, on_term);
	pf = calloc((size_t)n, sizeof(*pf));
	if (!pf)
		return 1;
	for (int i = 0; i < n; i++) {
		int fd = socket(AF_INET, SOCK_STREAM, 0);
		struct timeval tv = { .tv_sec = 2 };

		pf[i].fd = -1;
		if (fd < 0) {
			fprintf(stderr, "connflood: socket: %s\n", strerror(errno));
			break;
		}
		/* Bounds a connect to a full backlog. */
		setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
		if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
			/* The backlog may be full for a moment: count it. */
			close(fd);
			continue;
		}
		pf[i].fd = fd;
		pf[i].events = POLLIN;
		opened++;
	}
	printf("opened %d\n", opened);
	fflush(stdout);
	end = time(NULL) + secs;
	while (!stop && time(NULL) < end) {
		if (poll(pf, (nfds_t)n, 200) < 0 && errno != EINTR)
			break;
		for (int i = 0; i < n; i++) {
			char b[64];

			if (pf[i].fd < 0 || !(pf[i].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			if (read(pf[i].fd, b, sizeof(b)) <= 0) {
				close(pf[i].fd);
				pf[i].fd = -1;
				closed++;
			}
		}
	}
	printf("closed_by_peer %d\n", closed);
	for (int i = 0; i < n; i++)
		if (pf[i].fd >= 0)
			close(pf[i].fd);
	free(pf);
	return 0;
}
