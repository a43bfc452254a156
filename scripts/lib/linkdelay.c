/*
 * linkdelay: the one-way delay of scripts/link's wire. Every packet the
 * namespace's loopback receives is handed to this program by netfilter's
 * NFQUEUE (an iptables raw PREROUTING rule scripts/link adds), held for
 * DELAY and then let go unchanged, in the order it came. The kernel keeps the
 * packet (only its metadata is copied here); TCP sees a real round trip
 * on every segment and ACK, both directions, as on a wire: its RTT
 * estimate, its window and its ACK clock follow the delay.
 *
 *   linkdelay --queue N --delay-us US
 *
 * Binds NFQUEUE queue N of the current network namespace, prints "bound"
 * on stdout once it holds the queue, and runs until SIGTERM or SIGINT,
 * then prints how many packets it delayed and how many netfilter dropped
 * (a full queue). It never lets a packet through early: a message it
 * could not read (ENOBUFS) ends it, and without it the rule drops.
 *
 * Why NFQUEUE and not a qdisc: this kernel has neither netem nor fq (the
 * qdisc that honours an eBPF program's skb->tstamp), and tbf and htb
 * cannot hold a packet for a time (docs/link.md).
 *
 * The packets of one queue carry increasing ids and all wait the same
 * time, so the verdicts go out as one batch: "accept every id up to K"
 * (NFQNL_MSG_VERDICT_BATCH) for the last K whose time has come. A
 * packet's time starts when this program reads it, a few microseconds
 * after the kernel queued it: the delay can only come out longer.
 */
#include "config.h"	/* _GNU_SOURCE: ppoll */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nfnetlink_queue.h>
#include <linux/netlink.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define QUEUE_MAXLEN 65536u		/* packets the kernel may hold */
#define RCVBUF (16 * 1024 * 1024)

struct held {
	uint32_t id;
	uint64_t due_ns;
};

static volatile sig_atomic_t stop;
static struct held ring[QUEUE_MAXLEN];
static unsigned head, count;
static uint64_t delayed;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Appends attribute type with len bytes of data to the message at buf. */
static void put_attr(char *buf, uint16_t type, const void *data,
		     uint16_t len)
{
	struct nlmsghdr *nh = (struct nlmsghdr *)buf;
	struct nlattr *a = (struct nlattr *)(buf + NLMSG_ALIGN(nh->nlmsg_len));

	a->nla_type = type;
	a->nla_len = (uint16_t)(NLA_HDRLEN + len);
	memcpy((char *)a + NLA_HDRLEN, data, len);
	nh->nlmsg_len = NLMSG_ALIGN(nh->nlmsg_len) + NLA_ALIGN(a->nla_len);
}

/* Starts a message of the queue subsystem to queue qnum in buf. */
static void start_msg(char *buf, uint8_t msg, uint16_t qnum, uint16_t flags)
{
	struct nlmsghdr *nh = (struct nlmsghdr *)buf;
	struct nfgenmsg *g;

	memset(buf, 0, NLMSG_SPACE(sizeof(*g)));
	nh->nlmsg_len = NLMSG_LENGTH(sizeof(*g));
	nh->nlmsg_type = (NFNL_SUBSYS_QUEUE << 8) | msg;
	nh->nlmsg_flags = NLM_F_REQUEST | flags;
	g = NLMSG_DATA(nh);
	g->nfgen_family = AF_UNSPEC;
	g->version = NFNETLINK_V0;
	g->res_id = htons(qnum);
}

/* Sends the message in buf and, for a request with NLM_F_ACK, reads the
 * kernel's answer: 0, or -errno. */
static int talk(int fd, char *buf, int ack)
{
	struct nlmsghdr *nh = (struct nlmsghdr *)buf;
	char ans[8192];
	ssize_t n;

	if (send(fd, buf, nh->nlmsg_len, 0) < 0)
		return -errno;
	if (!ack)
		return 0;
	for (;;) {
		n = recv(fd, ans, sizeof(ans), 0);
		if (n < 0)
			return -errno;
		for (nh = (struct nlmsghdr *)ans; NLMSG_OK(nh, (size_t)n);
		     nh = NLMSG_NEXT(nh, n))
			if (nh->nlmsg_type == NLMSG_ERROR)
				return ((struct nlmsgerr *)NLMSG_DATA(nh))->error;
	}
}

/* Binds queue qnum: metadata only, GSO packets whole, a long queue. */
static int bind_queue(int fd, uint16_t qnum)
{
	char buf[256];
	struct nfqnl_msg_config_cmd cmd = { .command = NFQNL_CFG_CMD_BIND };
	struct nfqnl_msg_config_params p = { .copy_range = 0,
					     .copy_mode = NFQNL_COPY_META };
	uint32_t maxlen = htonl(QUEUE_MAXLEN), fl = htonl(NFQA_CFG_F_GSO);
	int rc;

	start_msg(buf, NFQNL_MSG_CONFIG, qnum, NLM_F_ACK);
	put_attr(buf, NFQA_CFG_CMD, &cmd, sizeof(cmd));
	if ((rc = talk(fd, buf, 1)) < 0)
		return rc;
	start_msg(buf, NFQNL_MSG_CONFIG, qnum, NLM_F_ACK);
	put_attr(buf, NFQA_CFG_PARAMS, &p, sizeof(p));
	put_attr(buf, NFQA_CFG_QUEUE_MAXLEN, &maxlen, sizeof(maxlen));
	put_attr(buf, NFQA_CFG_FLAGS, &fl, sizeof(fl));
	put_attr(buf, NFQA_CFG_MASK, &fl, sizeof(fl));
	return talk(fd, buf, 1);
}

/* Accepts every queued packet with an id up to id. */
static int release_upto(int fd, uint16_t qnum, uint32_t id)
{
	char buf[128];
	struct nfqnl_msg_verdict_hdr v = { .verdict = htonl(NF_ACCEPT),
					   .id = htonl(id) };

	start_msg(buf, NFQNL_MSG_VERDICT_BATCH, qnum, 0);
	put_attr(buf, NFQA_VERDICT_HDR, &v, sizeof(v));
	return talk(fd, buf, 0);
}

/* The packet id of one queued-packet message, or -1. */
static int64_t packet_id(struct nlmsghdr *nh)
{
	struct nlattr *a;
	int len;

	if ((nh->nlmsg_type & 0xff) != NFQNL_MSG_PACKET)
		return -1;
	len = (int)nh->nlmsg_len - NLMSG_LENGTH(sizeof(struct nfgenmsg));
	a = (struct nlattr *)((char *)NLMSG_DATA(nh) +
			      NLMSG_ALIGN(sizeof(struct nfgenmsg)));
	while (len >= NLA_HDRLEN && a->nla_len >= NLA_HDRLEN &&
	       a->nla_len <= len) {
		if ((a->nla_type & NLA_TYPE_MASK) == NFQA_PACKET_HDR) {
			struct nfqnl_msg_packet_hdr h;

			memcpy(&h, (char *)a + NLA_HDRLEN, sizeof(h));
			return ntohl(h.packet_id);
		}
		len -= NLA_ALIGN(a->nla_len);
		a = (struct nlattr *)((char *)a + NLA_ALIGN(a->nla_len));
	}
	return -1;
}

/* Reads every message waiting, each packet held until now + delay. */
static int take_packets(int fd, uint64_t delay_ns)
{
	static char buf[65536];
	struct nlmsghdr *nh;
	ssize_t n;
	int64_t id;

	for (;;) {
		n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
		/* ENOBUFS (a message lost: its packet would go with a later
		 * batch, early) ends the run like any error: never faked */
		if (n < 0)
			return errno == EAGAIN || errno == EINTR ? 0 : -errno;
		for (nh = (struct nlmsghdr *)buf; NLMSG_OK(nh, (size_t)n);
		     nh = NLMSG_NEXT(nh, n)) {
			id = packet_id(nh);
			if (id < 0 || count == QUEUE_MAXLEN)
				continue;
			ring[(head + count) % QUEUE_MAXLEN] = (struct held){
				(uint32_t)id, now_ns() + delay_ns };
			count++;
		}
	}
}

/* Lets go of every packet whose time has come; the time of the next
 * one (0: none held). */
static uint64_t release_due(int fd, uint16_t qnum, int *err)
{
	uint64_t t = now_ns();
	uint32_t last = 0;
	unsigned n = 0;

	while (count && ring[head].due_ns <= t) {
		last = ring[head].id;
		head = (head + 1) % QUEUE_MAXLEN;
		count--;
		n++;
	}
	if (n) {
		*err = release_upto(fd, qnum, last);
		delayed += n;
	}
	return count ? ring[head].due_ns : 0;
}

static int run(int fd, uint16_t qnum, uint64_t delay_ns)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	struct timespec ts, *tsp;
	uint64_t next, t;
	int err = 0;

	while (!stop) {
		next = release_due(fd, qnum, &err);
		if (err < 0)
			return err;
		tsp = NULL;
		if (next) {
			t = now_ns();
			t = next > t ? next - t : 0;
			ts.tv_sec = (time_t)(t / 1000000000ull);
			ts.tv_nsec = (long)(t % 1000000000ull);
			tsp = &ts;
		}
		if (ppoll(&pfd, 1, tsp, NULL) < 0 && errno != EINTR)
			return -errno;
		if (pfd.revents && (err = take_packets(fd, delay_ns)) < 0)
			return err;
	}
	return 0;
}

/* What netfilter dropped on queue qnum (full queue, no listener). */
static void print_drops(uint16_t qnum)
{
	FILE *f = fopen("/proc/net/netfilter/nfnetlink_queue", "r");
	unsigned q, pid, len, mode, range, qdrop, udrop;

	if (!f)
		return;
	while (fscanf(f, "%u %u %u %u %u %u %u %*[^\n]", &q, &pid, &len,
		      &mode, &range, &qdrop, &udrop) == 7)
		if (q == qnum)
			printf("linkdelay: queue %u: %u dropped (full), %u "
			       "dropped (not delivered)\n", q, qdrop, udrop);
	fclose(f);
}

static int usage(void)
{
	fprintf(stderr, "usage: linkdelay --queue N --delay-us US\n");
	return 2;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "queue", required_argument, NULL, 'q' },
		{ "delay-us", required_argument, NULL, 'd' },
		{ NULL, 0, NULL, 0 },
	};
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	struct sigaction act = { .sa_handler = on_signal };
	double delay_us = -1;
	long qnum = -1;
	char *end;
	int c, fd, rc, sz = RCVBUF;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (c == 'q')
			qnum = strtol(optarg, &end, 10);
		else if (c == 'd')
			delay_us = strtod(optarg, &end);
		else
			return usage();
		if (*end)
			return usage();
	}
	if (optind != argc || qnum < 0 || qnum > 65535 || !(delay_us > 0) ||
	    delay_us > 1e7)
		return usage();
	/* the default 50 us of timer slack would be added to every wait */
	prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
	sigaction(SIGTERM, &act, NULL);
	sigaction(SIGINT, &act, NULL);
	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_NETFILTER);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		perror("linkdelay: netlink socket");
		return 1;
	}
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &sz, sizeof(sz)) < 0)
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz));
	rc = bind_queue(fd, (uint16_t)qnum);
	if (rc < 0) {
		fprintf(stderr, "linkdelay: cannot bind NFQUEUE %ld: %s\n",
			qnum, strerror(-rc));
		return 1;
	}
	printf("bound\n");
	fflush(stdout);
	rc = run(fd, (uint16_t)qnum, (uint64_t)(delay_us * 1000 + 0.5));
	if (rc < 0)
		fprintf(stderr, "linkdelay: %s\n", strerror(-rc));
	printf("linkdelay: %llu packets delayed %.1f us\n",
	       (unsigned long long)delayed, delay_us);
	print_drops((uint16_t)qnum);
	close(fd);
	return rc < 0 ? 1 : 0;
}
