/*
 * What the files of the configuration share: config.c (struct cfg and its
 * messages), config_file.c (the INI parser). Not for other modules.
 */
#ifndef TCQ_CONFIG_PRIV_H
#define TCQ_CONFIG_PRIV_H
#include <stdbool.h>

struct cfg;

/* Adds "FNAME:LINE: [warning: ]text" to c->msgs (no LINE when line is 0);
 * an error also counts in c->nerrors. */
void cfg_msg(struct cfg *c, const char *fname, int line, bool error,
	     const char *fmt, ...) __attribute__((format(printf, 5, 6)));
/* Sorts the messages by line, keeping the order of one line's. */
void cfg_sort_msgs(struct cfg *c);
/* config_initiator.c: frees the [initiator] sections of target (NULL:
 * all); the checks of them that need the whole file. */
void cfg_free_initiators(struct cfg *c, const char *target);
void cfg_finish_initiators(struct cfg *c, const char *fname);

/* config_format.c: the formatter of each value type (config_keys.h). */
#include "target/config_keys.h"
cfg_formatter cfg_fmt_u32;
cfg_formatter cfg_fmt_u16;
cfg_formatter cfg_fmt_int;
cfg_formatter cfg_fmt_size32;
cfg_formatter cfg_fmt_size64;
cfg_formatter cfg_fmt_bool;
cfg_formatter cfg_fmt_tristate;
cfg_formatter cfg_fmt_digest;
cfg_formatter cfg_fmt_barrier;
cfg_formatter cfg_fmt_qam;
cfg_formatter cfg_fmt_io_engine;
cfg_formatter cfg_fmt_shared_state;
cfg_formatter cfg_fmt_honour;
cfg_formatter cfg_fmt_prefetch;
cfg_formatter cfg_fmt_cut_through;
cfg_formatter cfg_fmt_lun_type;
cfg_formatter cfg_fmt_bit;
cfg_formatter cfg_fmt_log_level;
cfg_formatter cfg_fmt_string;
cfg_formatter cfg_fmt_text;
cfg_formatter cfg_fmt_chap_algs;
cfg_formatter cfg_fmt_listen;
cfg_formatter cfg_fmt_allow_name;
cfg_formatter cfg_fmt_allow_net;
cfg_formatter cfg_fmt_port_group;
cfg_formatter cfg_fmt_lun_map;
#endif
