/* tcqd's command line (cmdline.h). */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <config.h>	/* autoconf's, not target/config.h */
#include "tcq/log.h"
#include "backend/bdev.h"
#include "target/cmdline.h"
#include "target/config.h"
#include "target/portal.h"

#define EXPORT_DEFAULT_LISTEN "127.0.0.1:3260"
#define EXPORT_DEFAULT_IQN "iqn.2026-11.org.tcq:export"

static void usage(FILE *f)
{
	fprintf(f,
"usage: tcqd -c FILE [options]\n"
"       tcqd --export PATH [--size SIZE] [export options] [options]\n"
"\n"
"  -c, --config FILE        load targets and LUNs from FILE\n"
"                           (default " CMDLINE_DEFAULT_CONFIG ")\n"
"      --export PATH        serve PATH (file or block device) as LUN 0\n"
"export options:\n"
"      --size SIZE          size with K/M/G/T suffix; needed when PATH does\n"
"                           not exist (a sparse file is then created)\n"
"      --listen ADDR:PORT   portal (repeatable; default " EXPORT_DEFAULT_LISTEN ")\n"
"      --iqn IQN            target name (default " EXPORT_DEFAULT_IQN ")\n"
"      --block-size N       512 or 4096 (default 512)\n"
"      --read-only          refuse writes\n"
"      --queue-depth N      backend I/Os in flight for the LUN over all\n"
"                           reactors, 1..%d (default %d)\n"
"      --backend SPEC       backend spec (default " CFG_DEFAULT_BACKEND "): aio, null,\n"
"                           ram, rbd:pool=P,image=I[,conf=PATH][,id=CLIENT]\n"
"                           [,timeout=S][,cache=none|writeback] (Ceph; needs\n"
"                           no --export; cache=none, the default, for several\n"
"                           gateways: writes complete in RADOS, WCE 0), or\n"
"                           the test wrappers\n"
"                           delay, fault, cache (NAME:opts,base=SPEC; see\n"
"                           tcqd.conf), or a device model (timing from the\n"
"                           model, data to base=, default null):\n"
"                           disk:model=hdd|hdd-15k|ssd[,key=value...]\n"
"                           [,base=SPEC]; keys (each overrides the preset):\n"
"                           capacity=SIZE; hdd: rpm=N, heads=N, zones=N,\n"
"                           spt_outer=N, spt_inner=N (sectors per track,\n"
"                           linear over the zones), track_seek=T,\n"
"                           avg_seek=T, full_seek=T (seek curve fitted to\n"
"                           them), overhead=T, hit_overhead=T,\n"
"                           head_switch=T, ncq=1..32,\n"
"                           sched=fifo|sptf, aging=T,\n"
"                           elevator=none|deadline, readahead=on|off,\n"
"                           segments=N, segment_size=SIZE, wcache=on|off,\n"
"                           destage_idle=T, destage_dirty=1..100 (%%),\n"
"                           iface_rate=MB/s; ssd: channels=N, dies=N (per\n"
"                           channel), read_us=N, program_us=N,\n"
"                           channel_rate=MB/s, queue=1..1024 (tags),\n"
"                           ctrl_iops=N; seed=N,\n"
"                           time_scale=K (the drive K times slower than\n"
"                           real time)\n"
"      --write-cache on|off volatile write cache (default on)\n"
"      --barrier drain|flush|ignore  what an ORDERED task costs (default\n"
"                           drain: wait for older tasks; flush: also flush\n"
"                           the cache; ignore: run it as SIMPLE)\n"
"      --qam restricted|unrestricted  queue algorithm modifier of the\n"
"                           control mode page (default restricted)\n"
"      --cut-through auto|off  a large READ read in pieces, its Data-In\n"
"                           sent as they are read (default auto), or read\n"
"                           whole first (off)\n"
"      --removable          removable medium (START STOP UNIT ejects, PREVENT\n"
"                           ALLOW MEDIUM REMOVAL holds it)\n"
"      --thin auto|yes|no   thin provisioning: UNMAP, WRITE SAME with UNMAP\n"
"                           (default auto: sparse files are thin)\n"
"      --sanitize           allow SANITIZE (it erases the whole LUN)\n"
"      --chap USER:SECRET   require CHAP from initiators (secret: 12+ bytes;\n"
"                           split at the last ':')\n"
"      --mutual-chap USER:SECRET  the target's credentials for mutual CHAP\n"
"      --allow IQN          only this initiator may log in (repeatable;\n"
"                           wildcards * and ?)\n"
"      --serial S           unit serial number (1..32 characters); the NAA\n"
"                           follows it: give gateways of one LUN the same\n"
"                           serial and target name\n"
"      --tpg-id N           this gateway's target port group (default 1)\n"
"      --rel-port-id N      this gateway's relative target port (default 1);\n"
"                           also its portal group tag unless --tpgt is given\n"
"      --tpg ID:STATE:PORT[,PORT...]  a target port group of the target\n"
"                           (repeatable; STATE active-optimized,\n"
"                           active-non-optimized, standby or unavailable);\n"
"                           default: one active-optimized group of this port\n"
"      --tpgt N             target portal group tag (default: rel-port-id)\n"
"      --shared-state auto|none  auto (default): an rbd LUN keeps its\n"
"                           reservations in RADOS, shared by every gateway\n"
"                           of the image; none: in this process only\n"
"options:\n"
"      --threads N          reactor threads (default: number of CPUs; more\n"
"                           than the CPUs tcqd may run on is warned about)\n"
"      --io-engine auto|uring|aio  the event loop and file I/O: io_uring,\n"
"                           or epoll and libaio; auto (default): uring when\n"
"                           the kernel allows it (overrides io_engine in\n"
"                           [global])\n"
"      --cmd-window N       commands a session may send ahead (MaxCmdSN -\n"
"                           ExpCmdSN + 1; default 128; overrides cmd_window\n"
"                           in [global])\n"
"      --log-level LEVEL    error, warn, info or debug\n"
"      --ctl SOCKET         serve tcqctl on this unix socket (mode 0600;\n"
"                           overrides ctl in [global])\n"
"      --state-dir DIR      where APTPL reservations are kept (default\n"
"                           /var/lib/tcq; overrides state_dir in [global])\n"
"      --metrics [ADDR:]PORT  serve Prometheus /metrics over HTTP (PORT or\n"
"                           :PORT: 127.0.0.1; [::1]:PORT; overrides metrics\n"
"                           in [global])\n"
"  -v, --verbose            log at debug level\n"
"  -h, --help               show this help\n"
"  -V, --version            show the version\n",
		CFG_MAX_QUEUE_DEPTH, CFG_DEFAULT_QUEUE_DEPTH);
}

static void usage_error(const char *fmt, const char *arg)
{
	fprintf(stderr, "tcqd: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\nTry 'tcqd --help'.\n");
	exit(2);
}

enum {
	OPT_EXPORT = 256, OPT_SIZE, OPT_LISTEN, OPT_IQN, OPT_BLOCK_SIZE,
	OPT_READ_ONLY, OPT_QUEUE_DEPTH, OPT_BACKEND, OPT_WRITE_CACHE,
	OPT_THREADS, OPT_LOG_LEVEL, OPT_CHAP, OPT_MUTUAL_CHAP, OPT_ALLOW,
};

enum { OPT_CTL = 512, OPT_STATE_DIR, OPT_METRICS, OPT_CMD_WINDOW,
       OPT_IO_ENGINE };	/* global options outside the export range */
/* LUN kind options of --export (scsi/sbc_media.c, sbc_ws.c). */
enum { OPT_REMOVABLE = 600, OPT_THIN, OPT_SANITIZE };
/* Ordering options of --export. */
enum { OPT_BARRIER = 700, OPT_QAM };
/* Identity and ALUA options of --export (scsi/alua.h). */
enum { OPT_SERIAL = 800, OPT_TPG_ID, OPT_REL_PORT_ID, OPT_TPG, OPT_TPGT };
/* Gateways sharing LUN state (backend/lun_store.h). */
enum { OPT_SHARED_STATE = 900 };
/* Reads of --export (scsi/sbc_cut.c). */
enum { OPT_CUT_THROUGH = 1000 };

static const struct option long_opts[] = {
	{ "config", required_argument, NULL, 'c' },
	{ "export", required_argument, NULL, OPT_EXPORT },
	{ "size", required_argument, NULL, OPT_SIZE },
	{ "listen", required_argument, NULL, OPT_LISTEN },
	{ "iqn", required_argument, NULL, OPT_IQN },
	{ "block-size", required_argument, NULL, OPT_BLOCK_SIZE },
	{ "read-only", no_argument, NULL, OPT_READ_ONLY },
	{ "queue-depth", required_argument, NULL, OPT_QUEUE_DEPTH },
	{ "backend", required_argument, NULL, OPT_BACKEND },
	{ "write-cache", required_argument, NULL, OPT_WRITE_CACHE },
	{ "threads", required_argument, NULL, OPT_THREADS },
	{ "log-level", required_argument, NULL, OPT_LOG_LEVEL },
	{ "ctl", required_argument, NULL, OPT_CTL },
	{ "state-dir", required_argument, NULL, OPT_STATE_DIR },
	{ "metrics", required_argument, NULL, OPT_METRICS },
	{ "cmd-window", required_argument, NULL, OPT_CMD_WINDOW },
	{ "io-engine", required_argument, NULL, OPT_IO_ENGINE },
	{ "chap", required_argument, NULL, OPT_CHAP },
	{ "mutual-chap", required_argument, NULL, OPT_MUTUAL_CHAP },
	{ "allow", required_argument, NULL, OPT_ALLOW },
	{ "removable", no_argument, NULL, OPT_REMOVABLE },
	{ "thin", required_argument, NULL, OPT_THIN },
	{ "sanitize", no_argument, NULL, OPT_SANITIZE },
	{ "barrier", required_argument, NULL, OPT_BARRIER },
	{ "qam", required_argument, NULL, OPT_QAM },
	{ "serial", required_argument, NULL, OPT_SERIAL },
	{ "tpg-id", required_argument, NULL, OPT_TPG_ID },
	{ "rel-port-id", required_argument, NULL, OPT_REL_PORT_ID },
	{ "tpg", required_argument, NULL, OPT_TPG },
	{ "tpgt", required_argument, NULL, OPT_TPGT },
	{ "shared-state", required_argument, NULL, OPT_SHARED_STATE },
	{ "cut-through", required_argument, NULL, OPT_CUT_THROUGH },
	{ "verbose", no_argument, NULL, 'v' },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	{ NULL, 0, NULL, 0 },
};


void cmdline_parse(int argc, char **argv, struct cmdline *o)
{
	int ch;

	while ((ch = getopt_long(argc, argv, "c:vhV", long_opts, NULL)) != -1) {
		if (ch >= OPT_SIZE && ch <= OPT_WRITE_CACHE)
			o->export_only_used = true;
		switch (ch) {
		case 'c': o->config = optarg; break;
		case OPT_EXPORT: o->export_path = optarg; break;
		case OPT_SIZE: o->size = optarg; break;
		case OPT_LISTEN:
			if (o->nlisten == (int)(sizeof(o->listen) / sizeof(o->listen[0])))
				usage_error("too many --listen options%s", "");
			o->listen[o->nlisten++] = optarg;
			break;
		case OPT_IQN: o->iqn = optarg; break;
		case OPT_BLOCK_SIZE: o->block_size = optarg; break;
		case OPT_READ_ONLY: o->read_only = true; break;
		case OPT_QUEUE_DEPTH: o->queue_depth = optarg; break;
		case OPT_BACKEND: o->backend = optarg; break;
		case OPT_WRITE_CACHE: o->write_cache = optarg; break;
		case OPT_REMOVABLE:
			o->removable = o->export_only_used = true;
			break;
		case OPT_THIN: o->thin = optarg; o->export_only_used = true; break;
		case OPT_BARRIER:
			o->barrier = optarg;
			o->export_only_used = true;
			break;
		case OPT_QAM: o->qam = optarg; o->export_only_used = true; break;
		case OPT_CUT_THROUGH:
			o->cut_through = optarg;
			o->export_only_used = true;
			break;
		case OPT_SANITIZE:
			o->sanitize = o->export_only_used = true;
			break;
		case OPT_THREADS: o->threads = optarg; break;
		case OPT_LOG_LEVEL: o->log_level = optarg; break;
		case OPT_CTL: o->ctl = optarg; break;
		case OPT_STATE_DIR: o->state_dir = optarg; break;
		case OPT_METRICS: o->metrics = optarg; break;
		case OPT_CMD_WINDOW: o->cmd_window = optarg; break;
		case OPT_IO_ENGINE: o->io_engine = optarg; break;
		case OPT_CHAP: o->chap = optarg; o->export_only_used = true; break;
		case OPT_MUTUAL_CHAP:
			o->mutual_chap = optarg;
			o->export_only_used = true;
			break;
		case OPT_ALLOW:
			if (o->nallow == (int)(sizeof(o->allow) / sizeof(o->allow[0])))
				usage_error("too many --allow options%s", "");
			o->allow[o->nallow++] = optarg;
			o->export_only_used = true;
			break;
		case OPT_SERIAL: case OPT_TPG_ID: case OPT_REL_PORT_ID:
		case OPT_TPGT:
			*(ch == OPT_SERIAL ? &o->serial :
			  ch == OPT_TPG_ID ? &o->tpg_id :
			  ch == OPT_REL_PORT_ID ? &o->rel_port_id : &o->tpgt) =
				optarg;
			o->export_only_used = true;
			break;
		case OPT_SHARED_STATE:
			o->shared_state = optarg;
			o->export_only_used = true;
			break;
		case OPT_TPG:
			if (o->ntpg == (int)(sizeof(o->tpg) / sizeof(o->tpg[0])))
				usage_error("too many --tpg options%s", "");
			o->tpg[o->ntpg++] = optarg;
			o->export_only_used = true;
			break;
		case 'v': o->verbose++; break;
		case 'h': usage(stdout); exit(0);
		case 'V': printf("tcqd %s\n", PACKAGE_VERSION); exit(0);
		default:
			fprintf(stderr, "Try 'tcqd --help'.\n");
			exit(2);
		}
	}
	if (optind < argc)
		usage_error("unexpected argument '%s'", argv[optind]);
	/* A backend that needs no path (rbd, null, ram) may stand alone:
	 * its spec then names the export. */
	if (!o->export_path && !o->config && o->backend &&
	    !bdev_spec_uses_path(o->backend))
		o->export_path = o->backend;
	if (o->config && o->export_path)
		usage_error("-c and --export exclude each other%s", "");
	if (!o->export_path && o->export_only_used)
		usage_error("--size, --listen, --iqn, --block-size, --read-only, "
			    "--queue-depth, --backend, --write-cache, --chap, "
			    "--mutual-chap, --allow, --removable, --thin, "
			    "--sanitize, --barrier, --qam, --serial, --tpg-id, "
			    "--rel-port-id, --tpg, --tpgt, --shared-state and "
			    "--cut-through go "
			    "with --export "
			    "(or with a --backend that needs no path)%s",
			    "");
}

/* --barrier, --qam and --cut-through into the LUN of --export. */
static void export_order_reads(struct cfg_lun *l, const struct cmdline *o)
{
	char err[256];

	if (o->barrier &&
	    cfg_parse_barrier(o->barrier, &l->barrier, err, sizeof(err)) < 0)
		usage_error("--barrier: %s", err);
	if (o->qam && cfg_parse_qam(o->qam, &l->qam, err, sizeof(err)) < 0)
		usage_error("--qam: %s", err);
	if (o->cut_through &&
	    cfg_parse_cut_through(o->cut_through, &l->cut_off, err,
				  sizeof(err)) < 0)
		usage_error("--cut-through: %s", err);
}

/* Builds the one-LUN configuration of --export; usage errors exit 2. */
void cmdline_export_cfg(struct cfg *c, const struct cmdline *o)
{
	const char *iqn = o->iqn ? o->iqn : EXPORT_DEFAULT_IQN;
	char err[300];
	struct cfg_target *t;
	struct cfg_lun *l;
	struct stat st;
	uint64_t v;
	bool exists = stat(o->export_path, &st) == 0;
	int stat_errno = errno;

	if (!(t = cfg_add_target(c, iqn, err, sizeof(err))))
		usage_error("--iqn: %s", err);
	if (o->chap && auth_cred_parse(o->chap, &t->chap.chap, err,
				       sizeof(err)) < 0)
		usage_error("--chap: %s", err);
	if (o->mutual_chap) {
		if (!o->chap)
			usage_error("--mutual-chap needs --chap%s", "");
		if (auth_cred_parse(o->mutual_chap, &t->chap.mutual, err,
				    sizeof(err)) < 0)
			usage_error("--mutual-chap: %s", err);
		if (!strcmp(t->chap.mutual.secret, t->chap.chap.secret))
			usage_error("--mutual-chap: the secret must differ from "
				    "the --chap one%s", "");
	}
	for (int i = 0; i < o->nallow; i++)
		if (acl_add_name(&t->acl, o->allow[i], err, sizeof(err)) < 0)
			usage_error("--allow: %s", err);
	if (!(l = cfg_add_lun(c, iqn, 0, err, sizeof(err))))
		usage_error("%s", err);
	if (!(l->path = strdup(o->export_path)))
		usage_error("%s", "out of memory");
	if (o->backend) {
		free(l->backend);
		if (!(l->backend = strdup(o->backend)))
			usage_error("%s", "out of memory");
	}
	if (o->block_size && cfg_parse_block_size(o->block_size, &l->block_size,
						  err, sizeof(err)) < 0)
		usage_error("--block-size: %s", err);
	if (o->size) {
		if (cfg_parse_size(o->size, &l->size, err, sizeof(err)) < 0)
			usage_error("--size: %s", err);
		if (l->size == 0 || l->size % l->block_size) {
			snprintf(err, sizeof(err),
				 "'%s' is not a positive multiple of the block size %u",
				 o->size, l->block_size);
			usage_error("--size: %s", err);
		}
	}
	if (!exists && stat_errno != ENOENT)
		usage_error("--export: %s", strerror(stat_errno));
	/* Only a file backend (maybe under test wrappers) can create its
	 * file. */
	if (!exists && bdev_spec_uses_path(l->backend)) {
		if (!o->size)
			usage_error("--size is required: '%s' does not exist",
				    o->export_path);
		l->create = true;
	}
	l->read_only = o->read_only;
	if (o->queue_depth) {
		if (cfg_parse_uint(o->queue_depth, 1, CFG_MAX_QUEUE_DEPTH, &v, err,
				   sizeof(err)) < 0)
			usage_error("--queue-depth: %s", err);
		l->queue_depth = (uint32_t)v;
	}
	if (o->write_cache &&
	    cfg_parse_bool(o->write_cache, &l->write_cache, err, sizeof(err)) < 0)
		usage_error("--write-cache: %s", err);
	l->removable = o->removable;
	l->sanitize = o->sanitize;
	export_order_reads(l, o);
	if (o->thin && strcmp(o->thin, "auto") != 0) {
		bool thin;
		if (cfg_parse_bool(o->thin, &thin, err, sizeof(err)) < 0)
			usage_error("--thin: %s", err);
		l->thin = thin;
	}
	if (o->serial && cfg_parse_serial(o->serial, l->serial, err,
					  sizeof(err)) < 0)
		usage_error("--serial: %s", err);
	if (o->shared_state &&
	    cfg_parse_shared_state(o->shared_state, &l->no_shared_state, err,
				   sizeof(err)) < 0)
		usage_error("--shared-state: %s", err);
	if (o->tpg_id) {
		if (cfg_parse_uint(o->tpg_id, 1, 65535, &v, err, sizeof(err)) < 0)
			usage_error("--tpg-id: %s", err);
		t->alua.tpg_id = (uint16_t)v;
	}
	if (o->rel_port_id) {
		if (cfg_parse_uint(o->rel_port_id, 1, 65535, &v, err,
				   sizeof(err)) < 0)
			usage_error("--rel-port-id: %s", err);
		t->alua.rel_port_id = (uint16_t)v;
	}
	if (o->tpgt) {
		if (cfg_parse_uint(o->tpgt, 1, 65535, &v, err, sizeof(err)) < 0)
			usage_error("--tpgt: %s", err);
		t->tpgt = (uint16_t)v;
		t->tpgt_set = true;
	}
	for (int i = 0; i < o->ntpg; i++)
		if (alua_add_group(&t->alua, o->tpg[i], err, sizeof(err)) < 0)
			usage_error("--tpg: %s", err);
	for (int i = 0; i < o->nlisten; i++)
		if (cfg_add_listen(c, o->listen[i], err, sizeof(err)) < 0)
			usage_error("--listen: %s", err);
	if (o->nlisten == 0 &&
	    cfg_add_listen(c, EXPORT_DEFAULT_LISTEN, err, sizeof(err)) < 0)
		usage_error("%s", err);
}

void cmdline_override(struct cfg *c, const struct cmdline *o)
{
	char err[512];

	if (o->ctl) {
		if (!*o->ctl || strlen(o->ctl) >= sizeof(c->set.ctl_path))
			usage_error("--ctl: '%s' is empty or too long", o->ctl);
		snprintf(c->set.ctl_path, sizeof(c->set.ctl_path), "%s", o->ctl);
	}
	if (o->state_dir) {
		if (!*o->state_dir || strlen(o->state_dir) >= sizeof(c->set.state_dir))
			usage_error("--state-dir: '%s' is empty or too long",
				    o->state_dir);
		snprintf(c->set.state_dir, sizeof(c->set.state_dir), "%s",
			 o->state_dir);
	}
	if (o->metrics) {
		struct sockaddr_storage ss;
		socklen_t len;

		if (strlen(o->metrics) >= sizeof(c->set.metrics) ||
		    metrics_parse_addr(o->metrics, &ss, &len, err,
				       sizeof(err)) < 0)
			usage_error("--metrics: %s", strlen(o->metrics) >=
				    sizeof(c->set.metrics) ? "too long" : err);
		snprintf(c->set.metrics, sizeof(c->set.metrics), "%s",
			 o->metrics);
	}
	if (o->threads) {
		uint64_t v;

		if (cfg_parse_uint(o->threads, 0, CFG_MAX_THREADS, &v, err,
				   sizeof(err)) < 0)
			usage_error("--threads: %s", err);
		c->set.threads = (int)v;
	}
	if (o->io_engine &&
	    cfg_parse_io_engine(o->io_engine, &c->set.io_engine, err,
				sizeof(err)) < 0)
		usage_error("--io-engine: %s", err);
	if (o->cmd_window) {
		uint64_t v;

		/* the range of cmd_window in [global] (config_keys.c) */
		if (cfg_parse_uint(o->cmd_window, 1, 65536, &v, err,
				   sizeof(err)) < 0)
			usage_error("--cmd-window: %s", err);
		c->set.cmd_window = (uint32_t)v;
	}
	if (o->log_level) {
		c->log_level = log_parse_level(o->log_level);
		if (c->log_level < 0)
			usage_error("--log-level: '%s' is not error, warn, info or debug",
				    o->log_level);
	}
	if (o->verbose)
		c->log_level = LOG_DEBUG;
}
