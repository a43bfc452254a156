/*
 * tcqd: load the configuration (a file, or one LUN from the command line),
 * build the daemon, listen, and run one reactor per thread until SIGTERM
 * or SIGINT. Exit status: 0 after a clean shutdown, 1 for a runtime or
 * configuration error, 2 for bad usage.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE	/* sched_getaffinity, CPU_COUNT */
#endif
#include <errno.h>
#include <malloc.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <unistd.h>
#include "tcq/log.h"
#include "target/cmdline.h"
#include "target/config.h"
#include "target/conn.h"
#include "target/ctl.h"
#include "target/live.h"
#include "target/isns.h"
#include "target/metrics_http.h"
#include "target/metrics_prom.h"
#include "target/notify.h"
#include "target/portal.h"
#include "tcq/reactor.h"
#include "target/target.h"
#include "scsi/pr.h"

#define SHUTDOWN_GRACE_MS 30000
#define MALLOC_TRIM_MS 30000

static struct reactor **reactors;
static int nreactors;
static struct reactor_fd sig_rfd;
static int sig_fd = -1;
static bool shutting_down;
static struct reactor_timer grace_timer;
static struct reactor_timer trim_timer;

/* ---- running --------------------------------------------------------- */

static void *reactor_thread(void *arg)
{
	reactor_run(arg);
	return NULL;
}

/* Sessions coming and going churn allocations of every size, and glibc
 * keeps the free pages between live ones resident: over days RSS creeps
 * up although what is allocated does not (tcqctl stats' memory shows
 * both). Handing free pages back every 30 s keeps RSS what is in use;
 * the walk of the free lists takes well under a millisecond. */
static void trim_fire(struct reactor_timer *t)
{
	malloc_trim(0);
	if (!shutting_down)
		reactor_timer_arm(reactors[0], t, MALLOC_TRIM_MS);
}

static void shutdown_post(void *arg)
{
	conn_reactor_shutdown(arg);
}

static void grace_expired(struct reactor_timer *t)
{
	log_err("shutdown: connections did not close in %d s; exiting",
		SHUTDOWN_GRACE_MS / 1000);
	_exit(1);
}

static void reload_done(void *arg, int rc, const char *msg)
{
	log_info("reload: %s", *msg ? msg : "nothing changed");
}

/* SIGHUP: the file again, applied live (target/live_reload.c). */
static void reload_on_signal(void)
{
	char err[4096];

	if (shutting_down)
		return;
	log_info("SIGHUP: reloading %s", tcqd->cfg_path[0] ? tcqd->cfg_path :
		 "(no file)");
	if (live_reload(reload_done, NULL, err, sizeof(err)) < 0)
		log_err("reload refused: %s", err);
}

/* The command line's overrides, put back on each file a reload reads. */
static void reapply_overrides(struct cfg *c, const void *arg)
{
	cmdline_override(c, arg);
}

static void on_signal(struct reactor *r, uint32_t events, void *arg)
{
	struct signalfd_siginfo si;

	while (read(sig_fd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
		if (si.ssi_signo == SIGHUP) {
			reload_on_signal();
			continue;
		}
		if (shutting_down) {
			log_warn("second signal %u: exiting at once", si.ssi_signo);
			_exit(1);
		}
		shutting_down = true;
		log_info("signal %u: shutting down", si.ssi_signo);
		notify_stopping();
		portal_stop();
		reactor_timer_arm(r, &grace_timer, SHUTDOWN_GRACE_MS);
		for (int i = 0; i < nreactors; i++)
			if (reactor_post(reactors[i], shutdown_post, reactors[i]) < 0)
				reactor_stop(reactors[i]);
	}
}

/* One URL per LUN, on the first portal; tests read the port from it. */
static void print_urls(const struct tcqd *d)
{
	const struct portal *p = d->portals[0];
	char host[INET6_ADDRSTRLEN + 2];
	unsigned port;

	if (p->addr.ss_family == AF_INET6) {
		const struct sockaddr_in6 *s6 = (const void *)&p->addr;

		if (IN6_IS_ADDR_UNSPECIFIED(&s6->sin6_addr))
			snprintf(host, sizeof(host), "[::1]");
		else
			portal_format_addr((const struct sockaddr *)s6, host,
					   sizeof(host));
		port = ntohs(s6->sin6_port);
	} else {
		const struct sockaddr_in *s4 = (const void *)&p->addr;

		if (s4->sin_addr.s_addr == htonl(INADDR_ANY))
			snprintf(host, sizeof(host), "127.0.0.1");
		else
			portal_format_addr((const struct sockaddr *)s4, host,
					   sizeof(host));
		port = ntohs(s4->sin_port);
	}
	/* portal_format_addr gave "HOST:PORT": keep the host part. */
	if (strrchr(host, ':') && host[strlen(host) - 1] != ']')
		*strrchr(host, ':') = 0;
	for (int i = 0; i < d->ntargets; i++)
		for (int j = 0; j < d->targets[i]->dev.nluns; j++)
			if (d->targets[i]->dev.luns[j])
				printf("iscsi://%s:%u/%s/%d\n", host, port,
				       d->targets[i]->dev.name, j);
	fflush(stdout);
}

/* The CPUs this process may run on (its affinity mask, as nproc(1)
 * counts them), else those online. */
static long usable_cpus(void)
{
	cpu_set_t set;

	if (sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) > 0)
		return CPU_COUNT(&set);
	return sysconf(_SC_NPROCESSORS_ONLN);
}

static int resolve_threads(int configured)
{
	long cpus = usable_cpus();
	long n = configured;

	if (n <= 0)
		n = sysconf(_SC_NPROCESSORS_ONLN);
	if (n < 1)
		n = 1;
	if (n > CFG_MAX_THREADS)
		n = CFG_MAX_THREADS;
	/* Warned, not refused: more reactors than CPUs still work (a test
	 * of two reactors on one CPU), but they take turns on a CPU, and a
	 * session on a reactor that is not running waits for the others'
	 * time slices. */
	if (cpus > 0 && n > cpus)
		log_warn("threads %ld is more than the %ld CPU%s tcqd may run "
			 "on: reactors will share CPUs and wait for each other",
			 n, cpus, cpus == 1 ? "" : "s");
	return (int)n;
}

/*
 * io_engine: auto takes io_uring when the kernel and liburing allow it
 * (reactor_uring_probe), else epoll and libaio, and says why; uring
 * insists. Set before anything opens a LUN: the backends pick their
 * queues by it. 0, or -1 (logged) when uring cannot run.
 */
static int resolve_io_engine(uint8_t asked)
{
	char why[200] = "";
	bool uring_ok = false;

	if (asked != IO_ENGINE_AIO)
		uring_ok = reactor_uring_probe(why, sizeof(why)) == 0;
	if (asked == IO_ENGINE_URING && !uring_ok) {
		log_err("io_engine = uring: %s", why);
		return -1;
	}
	reactor_set_engine(uring_ok ? REACTOR_URING : REACTOR_EPOLL);
	if (uring_ok)
		log_info("io engine: uring");
	else
		log_info("io engine: aio (%s)", asked == IO_ENGINE_AIO ?
			 "io_engine = aio" : why);
	return 0;
}

/* The configuration: the file, or one LUN from the command line, with
 * the command line's overrides on it. Its messages go to stderr. */
static int load_config(const struct cmdline *o, struct cfg *c,
		       const char **cfgname)
{
	int rc;

	cfg_init(c);
	if (o->export_path) {
		cmdline_export_cfg(c, o);
		*cfgname = "command line";
		rc = cfg_finish(c, *cfgname);
	} else {
		*cfgname = o->config ? o->config : CMDLINE_DEFAULT_CONFIG;
		rc = cfg_load_file(c, *cfgname);
	}
	for (int i = 0; i < c->nmsgs; i++)
		fprintf(stderr, "%s\n", c->msgs[i]);
	if (rc < 0) {
		fprintf(stderr, "tcqd: %s: %d error%s, not starting\n", *cfgname,
			c->nerrors, c->nerrors == 1 ? "" : "s");
		cfg_free(c);
		return -1;
	}
	cmdline_override(c, o);
	if (c->log_level >= 0)
		log_set_level((enum log_level)c->log_level);
	return 0;
}

/* tcqd from the configuration c, which it keeps as the running one. */
static int build_daemon(struct cfg *c, const struct cmdline *o,
			const char *cfgname)
{
	char err[512];

	if (resolve_io_engine(c->set.io_engine) < 0) {
		cfg_free(c);
		return -1;
	}
	tcqd = cfg_build(c, err, sizeof(err));
	if (!tcqd) {
		cfg_free(c);
		log_err("%s", err);
		return -1;
	}
	/* The running configuration, which live changes follow and tcqctl
	 * save writes. */
	if (!(tcqd->cfg = malloc(sizeof(*tcqd->cfg)))) {
		log_err("out of memory");
		return -1;
	}
	*tcqd->cfg = *c;
	if (!o->export_path)
		snprintf(tcqd->cfg_path, sizeof(tcqd->cfg_path), "%s", cfgname);
	live_set_overrides(reapply_overrides, o);
	live_set_reload_notify(notify_reloading, notify_ready);
	live_set_commit_notify(isnsr_sync);	/* iSNS follows live changes */
	nreactors = resolve_threads(tcqd->set.threads);
	tcqd->set.threads = nreactors;
	return 0;
}

/* Signals go to the signalfd on reactor 0: block them everywhere before
 * any thread exists, so each thread inherits the mask. */
static void block_signals(sigset_t *sigs)
{
	signal(SIGPIPE, SIG_IGN);
	sigemptyset(sigs);
	sigaddset(sigs, SIGTERM);
	sigaddset(sigs, SIGINT);
	sigaddset(sigs, SIGHUP);	/* reload, not the default exit */
	pthread_sigmask(SIG_BLOCK, sigs, NULL);
}

/* The reactors, and room for the threads of all but reactor 0. */
static int create_reactors(pthread_t **threads)
{
	reactors = calloc((size_t)nreactors, sizeof(*reactors));
	*threads = calloc((size_t)nreactors, sizeof(**threads));
	if (!reactors || !*threads) {
		log_err("out of memory");
		return -1;
	}
	for (int i = 0; i < nreactors; i++) {
		reactors[i] = calloc(1, sizeof(**reactors));
		if (!reactors[i] || reactor_init(reactors[i], i) < 0) {
			log_err("cannot create reactor %d", i);
			return -1;
		}
	}
	live_init(reactors, nreactors);
	tcqd->reactors = reactors;
	tcqd->nreactors = nreactors;
	return 0;
}

/* The portals' sockets, the signalfd, the control socket and /metrics. */
static int open_services(const sigset_t *sigs)
{
	char err[512];

	for (int i = 0; i < tcqd->nportals; i++) {
		if (portal_listen(tcqd->portals[i], err, sizeof(err)) < 0) {
			log_err("%s", err);
			return -1;
		}
		log_info("listening on %s", tcqd->portals[i]->addr_text);
	}
	sig_fd = signalfd(-1, sigs, SFD_NONBLOCK | SFD_CLOEXEC);
	if (sig_fd < 0 ||
	    reactor_add_fd(reactors[0], &sig_rfd, sig_fd, EPOLLIN, on_signal,
			   NULL) < 0) {
		log_err("signalfd: %s", strerror(errno));
		return -1;
	}
	if (tcqd->set.ctl_path[0]) {
		if (ctl_start(tcqd->set.ctl_path, reactors, nreactors, err,
			      sizeof(err)) < 0) {
			log_err("%s", err);
			return -1;
		}
		log_info("control socket %s", tcqd->set.ctl_path);
	}
	/* Its own thread, after the signal mask: it inherits it. */
	if (tcqd->set.metrics[0]) {
		if (metrics_http_start(tcqd->set.metrics, err, sizeof(err)) < 0) {
			log_err("%s", err);
			return -1;
		}
		log_info("metrics on http://%s/metrics", metrics_http_addr());
	}
	return 0;
}

/* Running: the URLs on stdout, the log, systemd told; the trim timer. */
static void announce_ready(void)
{
	print_urls(tcqd);
	log_info("tcqd ready: %d target%s, %d reactor%s", tcqd->ntargets,
		 tcqd->ntargets == 1 ? "" : "s", nreactors,
		 nreactors == 1 ? "" : "s");
	notify_status("%d target%s on %d portal%s", tcqd->ntargets,
		      tcqd->ntargets == 1 ? "" : "s", tcqd->nportals,
		      tcqd->nportals == 1 ? "" : "s");
	notify_ready();
	reactor_timer_init(&trim_timer, trim_fire, NULL);
	reactor_timer_arm(reactors[0], &trim_timer, MALLOC_TRIM_MS);
}

/* After reactor 0 returned: the other reactors' threads joined, then
 * everything taken down in the order it depends on. */
static void stop_daemon(pthread_t *threads, int started)
{
	for (int i = 1; i < started; i++)
		pthread_join(threads[i], NULL);
	if (reactor_timer_armed(&grace_timer))
		reactor_timer_cancel(reactors[0], &grace_timer);
	if (reactor_timer_armed(&trim_timer))
		reactor_timer_cancel(reactors[0], &trim_timer);
	reactor_del_fd(reactors[0], &sig_rfd);
	close(sig_fd);
	ctl_stop();
	metrics_http_stop();	/* it reads tcqd: before it goes */
	isnsr_stop();		/* deregisters: one attempt */
	/* Backends keep per-reactor queues: close them while reactors live. */
	cfg_destroy_tcqd(tcqd);
	tcqd = NULL;
	live_fini();
	for (int i = 0; i < nreactors; i++) {
		reactor_fini(reactors[i]);
		free(reactors[i]);
	}
	free(reactors);
	free(threads);
}

int main(int argc, char **argv)
{
	struct cmdline o = { 0 };
	struct cfg c;
	const char *cfgname;
	pthread_t *threads = NULL;
	sigset_t sigs;
	int rc, started = 1;

	log_set_level(LOG_INFO);
	prom_set_start_time();
	reactor_timer_init(&grace_timer, grace_expired, NULL);
	cmdline_parse(argc, argv, &o);
	if (load_config(&o, &c, &cfgname) < 0 ||
	    build_daemon(&c, &o, cfgname) < 0)
		return 1;
	block_signals(&sigs);
	if (create_reactors(&threads) < 0 || open_services(&sigs) < 0 ||
	    portal_start(tcqd, reactors, nreactors) < 0)
		return 1;
	for (; started < nreactors; started++) {
		rc = pthread_create(&threads[started], NULL, reactor_thread,
				    reactors[started]);
		if (rc) {
			log_err("pthread_create: %s", strerror(rc));
			return 1;
		}
	}
	announce_ready();
	isnsr_sync();	/* its own thread: a server down never holds us */

	reactor_run(reactors[0]);

	stop_daemon(threads, started);
	log_info("tcqd stopped");
	return 0;
}
