/*
 * One option parser for every backend, as nbdkit's .config is for its
 * plugins. A backend describes its keys once, in a table of struct
 * bdev_opt (name, type, where the value goes in the backend's own options
 * struct, a line of help); bdev_opts_parse walks a spec's "key=value,..."
 * against that table, and bdev_opts_format writes the keys that differ
 * from the defaults back out, so a spec can be listed, saved and read
 * again with the same grammar.
 *
 * A wrapper's (delay, fault, cache) "base=SPEC" must come last and takes
 * the rest of the string, commas included, so wrappers nest.
 */
#ifndef TCQ_BDEV_OPTS_H
#define TCQ_BDEV_OPTS_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum bdev_opt_type {
	BDEV_OPT_BOOL,		/* bool: 1|on|yes|true or 0|off|no|false */
	BDEV_OPT_SIZE,		/* uint64_t bytes: N[K|M|G|T] (binary), in
				 * [min, max] */
	BDEV_OPT_UINT,		/* uint64_t, decimal, in [min, max] */
	BDEV_OPT_TIME,		/* uint64_t ns: N{ns|us|ms|s}, bare N is us */
	BDEV_OPT_REAL,		/* double in [fmin, fmax] */
	BDEV_OPT_ENUM,		/* int: the value of one of words[] */
	BDEV_OPT_STRING,	/* char[len]: non-empty, shorter than len */
	BDEV_OPT_CUSTOM,	/* the backend's parse() and format() */
};

/* Flags of a key. */
#define BDEV_OPT_REQUIRED 0x1	/* the spec must give it */
#define BDEV_OPT_REPEAT   0x2	/* may come again (a CUSTOM parse adds) */
#define BDEV_OPT_ANY_BASE 0x4	/* UINT also in C syntax: 0x1f, 017 */

struct bdev_opt_word {
	const char *word;
	int value;
};

struct bdev_opt {
	const char *key;
	enum bdev_opt_type type;
	size_t offset;		/* of the value in the options struct */
	const char *help;	/* one line, for listings */
	unsigned flags;
	uint64_t min, max;	/* SIZE, UINT: inclusive; max 0: no bound */
	double fmin, fmax;	/* REAL: inclusive */
	const struct bdev_opt_word *words;	/* ENUM: ends with a NULL word */
	size_t len;		/* STRING: size of the char array */
	/* CUSTOM: parse val into the field (0, or -1 when malformed);
	 * format the field as snprintf does; syntax shows a value's form
	 * ("START-END[;...]") in messages and listings. */
	int (*parse)(const char *val, void *field);
	int (*format)(const void *field, char *buf, size_t len);
	const char *syntax;
};

/* A backend's option table. */
struct bdev_opts_def {
	const char *backend;	/* "null", "delay": names it in messages */
	const struct bdev_opt *opts;
	size_t nopts;		/* at most 64 */
	size_t size;		/* of the options struct */
	const void *defaults;	/* an options struct holding the defaults */
	bool wraps;		/* takes base=SPEC last */
	const char *default_base;	/* a wrapper's base without base=
					 * (NULL: aio on the LUN's path) */
};

/*
 * Applies the options in spec (the part after "NAME:") to vals, an
 * options struct of def->size bytes the caller filled (usually with
 * *def->defaults). Unknown keys, malformed items, bad values, keys given
 * twice and missing required keys fail with a message naming the backend
 * and the key; vals is then untouched. For a wrapper, *base is set to the
 * base spec ("" without base=: the LUN's path through aio); base may be
 * NULL otherwise. Returns 0 or -1.
 */
int bdev_opts_parse(const struct bdev_opts_def *def, const char *spec,
		    void *vals, const char **base, char *err, size_t errlen);

/*
 * Writes "key=value,..." for each key whose value in vals differs from
 * def->defaults, in table order, then ",base=BASE" when base is not
 * empty: a spec that bdev_opts_parse reads back into the same values.
 * Returns the length it needed, as snprintf (buf holds all of it when
 * that is below len), or -1 when a value cannot be written.
 */
int bdev_opts_format(const struct bdev_opts_def *def, const void *vals,
		     const char *base, char *buf, size_t len);

/* What a value of o looks like ("0|1", "N[K|M|G|T]", "1..3600",
 * "fixed|uniform|exp"), for messages and listings; as snprintf. */
int bdev_opt_syntax(const struct bdev_opt *o, char *buf, size_t len);

/* The base spec in a wrapper's options ("" when absent). */
const char *bdev_opts_base(const char *spec);

/* ---- one value <-> text, per type (backend/bdev_opt_value.c) ---------- */

/* Parses val into field; 0, or -1 when malformed or out of bounds. */
int bdev_opt_value_parse(const struct bdev_opt *o, const char *val,
			 void *field);
/* Writes field as text bdev_opt_value_parse reads back; as snprintf,
 * -1 when the value has no text (an ENUM value without a word). */
int bdev_opt_value_format(const struct bdev_opt *o, const void *field,
			  char *buf, size_t len);

/* "250us", "1ms", "2s", "1500ns"; a bare number is microseconds. */
int bdev_parse_time_ns(const char *s, uint64_t *ns);

/*
 * One "key=value" item of a comma-separated option string, pointing into
 * it; advances *s past the item. Returns 1, 0 at the end, -1 when the
 * item has no '=' or an empty key (key and klen then span the item, for
 * the message, and *s stays).
 */
struct bdev_opt_item {
	const char *key, *val;
	size_t klen, vlen;
};

int bdev_opt_item_next(const char **s, struct bdev_opt_item *it);
#endif
