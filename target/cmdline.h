/*
 * tcqd's command line: the options, the one-LUN configuration that
 * --export builds from them, and the global settings they override in
 * any configuration. Bad usage exits with status 2.
 */
#ifndef TCQ_CMDLINE_H
#define TCQ_CMDLINE_H
#include <stdbool.h>
#include "scsi/alua.h"

#ifndef TCQ_SYSCONFDIR
#define TCQ_SYSCONFDIR "/etc"
#endif
#define CMDLINE_DEFAULT_CONFIG TCQ_SYSCONFDIR "/tcqd.conf"

struct cfg;

struct cmdline {
	const char *config;		/* -c FILE */
	/* --export PATH and the options that only go with it */
	const char *export_path;
	bool export_only_used;		/* one of those was given */
	const char *size, *iqn, *block_size, *queue_depth, *backend;
	const char *write_cache;
	const char *thin;
	bool removable, sanitize;
	const char *barrier, *qam;
	const char *cut_through;	/* --cut-through */
	const char *listen[16];
	int nlisten;
	bool read_only;
	const char *chap, *mutual_chap;
	const char *allow[64];
	int nallow;
	const char *serial, *tpg_id, *rel_port_id, *tpgt;
	const char *shared_state;
	const char *tpg[ALUA_MAX_GROUPS + 1];
	int ntpg;
	/* options for any configuration */
	const char *threads, *log_level;
	int verbose;
	const char *ctl;
	const char *state_dir;
	const char *metrics;		/* --metrics [ADDR:]PORT */
	const char *cmd_window;		/* --cmd-window N */
	const char *io_engine;		/* --io-engine auto|uring|aio */
};

/* Parses argv into o; --help and --version exit 0. */
void cmdline_parse(int argc, char **argv, struct cmdline *o);
/* The configuration of --export (o->export_path set). */
void cmdline_export_cfg(struct cfg *c, const struct cmdline *o);
/* --ctl, --state-dir, --metrics, --threads, --io-engine, --cmd-window,
 * --log-level
 * and -v over what c says. */
void cmdline_override(struct cfg *c, const struct cmdline *o);
#endif
