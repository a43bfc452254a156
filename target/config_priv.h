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
#endif
