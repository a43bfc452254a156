/*
 * Every key of tcqd.conf in one table: its section, the type of its value
 * (how it is written, how it is parsed and stored) and a line saying what
 * it does. The file parser (config_file.c) reads keys through it; so can
 * anything else that sets a key by name.
 */
#ifndef TCQ_CONFIG_KEYS_H
#define TCQ_CONFIG_KEYS_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct cfg;
struct cfg_key;

enum cfg_section {
	CFG_GLOBAL,	/* [global]: into struct tcq_settings */
	CFG_TARGET,	/* [target NAME]: into struct cfg_target */
	CFG_LUN,	/* [lun TARGET N]: into struct cfg_lun */
	CFG_INITIATOR,	/* [initiator TARGET NAME]: into struct
			 * cfg_initiator */
};

/* Parses v and stores it into base, the section's struct (a few types
 * reach the rest of c: listen, log_level, secrets, chap_algorithms).
 * 0, or -1 with a message in err. */
typedef int cfg_setter(const struct cfg_key *k, struct cfg *c, void *base,
		       const char *v, char *err, size_t errlen);

/* Gives the value(s) of k in base (or c) as the text the setter reads:
 * emit once per value (a repeatable key: once per line), not at all when
 * unset. */
typedef void cfg_emit(void *ctx, const char *value);
typedef void cfg_formatter(const struct cfg_key *k, const struct cfg *c,
			   const void *base, cfg_emit *emit, void *ctx);

struct cfg_type {
	const char *syntax;	/* how a value is written: "NUMBER", "yes|no" */
	cfg_setter *set;
	bool repeatable;	/* each line adds one more (listen, tpg, ...) */
	cfg_formatter *fmt;	/* config_format.c */
};

/* What a changed value takes on a running tcqd (reload, tcqctl). */
enum cfg_live {
	CFG_LIVE,	/* changes in place, sessions stay up */
	CFG_RECREATE,	/* the LUN or target is made again (remove + add:
			 * refused while it is busy) */
	CFG_RESTART,	/* only a restart applies it; reload refuses it */
};

struct cfg_key {
	const char *name;
	enum cfg_section section;
	size_t off;		/* of the value in the section's struct */
	const struct cfg_type *type;
	uint64_t min, max;	/* the range of a number or size, if any */
	const char *help;	/* one line */
	enum cfg_live live;
};

extern const struct cfg_key cfg_keys[];
extern const size_t cfg_nkeys;

/* The key of that section and name (any case); NULL if there is none. */
const struct cfg_key *cfg_key_find(enum cfg_section section,
				   const char *name);
#endif
