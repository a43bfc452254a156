/*
 * Unit tests for the backends' option parser (backend/bdev_opts.h): each
 * key type accepted and refused at its bounds, unknown, repeated and
 * malformed keys, base= nesting, writing options back out, and for every
 * real backend a bad key whose message proves its table is wired in.
 * Expected values come from the option grammar, not from the code.
 */
#include <check.h>
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "backend/bdev.h"
#include "backend/bdev_opts.h"
#include "tests/unit/harness.h"

static char err[256];

/* ---- a table with one key of every type --------------------------------- */

struct items {
	int v[4];
	int n;
};

/* "3:4" appends 3 and 4; single digits only. */
static int items_parse(const char *val, void *field)
{
	struct items *it = field;

	for (const char *p = val; *p; p++) {
		if (*p == ':')
			continue;
		if (*p < '0' || *p > '9' || it->n == 4)
			return -1;
		it->v[it->n++] = *p - '0';
	}
	return 0;
}

static int items_format(const void *field, char *buf, size_t len)
{
	const struct items *it = field;
	char tmp[16] = "";

	for (int i = 0; i < it->n; i++)
		snprintf(tmp + strlen(tmp), sizeof(tmp) - strlen(tmp), "%s%d",
			 i ? ":" : "", it->v[i]);
	return snprintf(buf, len, "%s", tmp);
}

struct topts {
	bool flag;
	uint64_t size, count, seed, delay;
	double share;
	int mode;
	char name[8];
	struct items items;
};

static const struct topts tdefaults = {
	.flag = false, .size = 8192, .count = 10, .seed = 1, .delay = 1000,
	.share = 0, .mode = 1, .name = "x",
};

static const struct bdev_opt_word tmodes[] = {
	{ "slow", 1 }, { "fast", 2 }, { NULL, 0 },
};

static const struct bdev_opt tkeys[] = {
	{ .key = "flag", .type = BDEV_OPT_BOOL,
	  .offset = offsetof(struct topts, flag) },
	{ .key = "size", .type = BDEV_OPT_SIZE, .min = 4096, .max = 1u << 30,
	  .offset = offsetof(struct topts, size) },
	{ .key = "count", .type = BDEV_OPT_UINT, .min = 1, .max = 100,
	  .offset = offsetof(struct topts, count) },
	{ .key = "seed", .type = BDEV_OPT_UINT, .flags = BDEV_OPT_ANY_BASE,
	  .offset = offsetof(struct topts, seed) },
	{ .key = "delay", .type = BDEV_OPT_TIME,
	  .offset = offsetof(struct topts, delay) },
	{ .key = "share", .type = BDEV_OPT_REAL, .fmin = 0, .fmax = 1,
	  .offset = offsetof(struct topts, share) },
	{ .key = "mode", .type = BDEV_OPT_ENUM, .words = tmodes,
	  .offset = offsetof(struct topts, mode) },
	{ .key = "name", .type = BDEV_OPT_STRING, .len = 8,
	  .offset = offsetof(struct topts, name) },
	{ .key = "item", .type = BDEV_OPT_CUSTOM, .flags = BDEV_OPT_REPEAT,
	  .parse = items_parse, .format = items_format, .syntax = "D[:D...]",
	  .offset = offsetof(struct topts, items) },
};

static const struct bdev_opts_def tdef = {
	.backend = "test", .opts = tkeys,
	.nopts = sizeof(tkeys) / sizeof(tkeys[0]),
	.size = sizeof(struct topts), .defaults = &tdefaults,
};

/* The same keys for a wrapper, which takes base= last. */
static const struct bdev_opts_def twrap = {
	.backend = "twrap", .opts = tkeys,
	.nopts = sizeof(tkeys) / sizeof(tkeys[0]),
	.size = sizeof(struct topts), .defaults = &tdefaults, .wraps = true,
};

/* One key that must be given. */
struct ropts {
	char image[16];
};

static const struct ropts rdefaults;

static const struct bdev_opt rkeys[] = {
	{ .key = "image", .type = BDEV_OPT_STRING, .len = 16,
	  .flags = BDEV_OPT_REQUIRED, .offset = offsetof(struct ropts, image) },
};

static const struct bdev_opts_def rdef = {
	.backend = "req", .opts = rkeys, .nopts = 1,
	.size = sizeof(struct ropts), .defaults = &rdefaults,
};

static struct topts o;

/* Field by field: padding need not match. */
static bool same(const struct topts *a, const struct topts *b)
{
	return a->flag == b->flag && a->size == b->size &&
	       a->count == b->count && a->seed == b->seed &&
	       a->delay == b->delay && a->share == b->share &&
	       a->mode == b->mode && !strcmp(a->name, b->name) &&
	       a->items.n == b->items.n &&
	       !memcmp(a->items.v, b->items.v, sizeof(a->items.v[0]) *
		       (size_t)a->items.n);
}

static int parse(const char *spec)
{
	o = tdefaults;
	err[0] = '\0';
	return bdev_opts_parse(&tdef, spec, &o, NULL, err, sizeof(err));
}

/* ---- accepted values ---------------------------------------------------- */

#define AT(member) offsetof(struct topts, member)

/* Specs the grammar takes, and the number each leaves in its field. */
static const struct {
	const char *spec;
	size_t at;
	uint64_t want;
} numbers[] = {
	{ "size=4096", AT(size), 4096 },		/* the lower bound */
	{ "size=4k", AT(size), 4096 },
	{ "size=64K", AT(size), 65536 },
	{ "size=3M", AT(size), 3u << 20 },
	{ "size=2MiB", AT(size), 2u << 20 },
	{ "size=1G", AT(size), 1u << 30 },		/* the upper bound */
	{ "count=1", AT(count), 1 },
	{ "count=100", AT(count), 100 },
	{ "count=010", AT(count), 10 },			/* decimal */
	{ "seed=0x10", AT(seed), 16 },			/* C syntax */
	{ "seed=010", AT(seed), 8 },
	{ "seed=18446744073709551615", AT(seed), UINT64_MAX },
	{ "delay=1500ns", AT(delay), 1500 },
	{ "delay=250us", AT(delay), 250000 },
	{ "delay=3ms", AT(delay), 3000000 },
	{ "delay=2s", AT(delay), 2000000000ull },
	{ "delay=7", AT(delay), 7000 },			/* bare: us */
	{ "delay=8.5ms", AT(delay), 8500000 },		/* data sheets' */
	{ "delay=0.25", AT(delay), 250 },
	{ "delay=1.000000001s", AT(delay), 1000000001 },
};

START_TEST(number_accepted)
{
	uint64_t got;

	ck_assert_msg(parse(numbers[_i].spec) == 0, "%s: %s", numbers[_i].spec,
		      err);
	memcpy(&got, (char *)&o + numbers[_i].at, sizeof(got));
	ck_assert_msg(got == numbers[_i].want, "%s: got %llu", numbers[_i].spec,
		      (unsigned long long)got);
}
END_TEST

START_TEST(bool_accepted)
{
	static const char *const yes[] = { "1", "on", "yes", "true" };
	static const char *const no[] = { "0", "off", "no", "false" };
	char spec[32];

	for (int i = 0; i < 4; i++) {
		snprintf(spec, sizeof(spec), "flag=%s", yes[i]);
		ck_assert_int_eq(parse(spec), 0);
		ck_assert(o.flag);
		snprintf(spec, sizeof(spec), "flag=%s", no[i]);
		o.flag = true;
		ck_assert_int_eq(bdev_opts_parse(&tdef, spec, &o, NULL, err,
						 sizeof(err)), 0);
		ck_assert(!o.flag);
	}
}
END_TEST

START_TEST(other_types_accepted)
{
	ck_assert_int_eq(parse("share=0"), 0);
	ck_assert(o.share == 0.0);
	ck_assert_int_eq(parse("share=1"), 0);
	ck_assert(o.share == 1.0);
	ck_assert_int_eq(parse("share=0.25"), 0);
	ck_assert(o.share == 0.25);
	ck_assert_int_eq(parse("mode=fast"), 0);
	ck_assert_int_eq(o.mode, 2);
	ck_assert_int_eq(parse("name=abcdefg"), 0);	/* 7 + NUL fill 8 */
	ck_assert_str_eq(o.name, "abcdefg");
	ck_assert_int_eq(parse("name=/a/b"), 0);
	ck_assert_str_eq(o.name, "/a/b");
	/* A repeatable key adds to what came before. */
	ck_assert_int_eq(parse("item=3:4,item=5"), 0);
	ck_assert_int_eq(o.items.n, 3);
	ck_assert_int_eq(o.items.v[0], 3);
	ck_assert_int_eq(o.items.v[1], 4);
	ck_assert_int_eq(o.items.v[2], 5);
	/* Empty items between commas are no items. */
	ck_assert_int_eq(parse(",count=5,,mode=slow,"), 0);
	ck_assert_uint_eq(o.count, 5);
	ck_assert_int_eq(o.mode, 1);
	ck_assert_int_eq(parse(""), 0);
	ck_assert(same(&o, &tdefaults));
	ck_assert_int_eq(parse(NULL), 0);
}
END_TEST

/* ---- refused specs ------------------------------------------------------ */

/* Each spec fails, its message holds both words (the key, and what was
 * expected), and the values are left as they were. */
static const struct {
	const char *spec, *w1, *w2;
} refusals[] = {
	{ "flag=maybe", "test: bad flag 'maybe'", "0|1" },
	{ "flag=", "bad flag ''", NULL },
	{ "flag=On", "bad flag 'On'", NULL },
	{ "size=4095", "bad size '4095'", "4096..1073741824" },
	{ "size=1073741825", "bad size", NULL },
	{ "size=1T", "bad size '1T'", NULL },
	{ "size=12x", "bad size '12x'", NULL },
	{ "size=-4096", "bad size", NULL },
	{ "count=0", "bad count '0'", "1..100" },
	{ "count=101", "bad count '101'", NULL },
	{ "count=0x10", "bad count", NULL },
	{ "count=5x", "bad count '5x'", NULL },
	{ "count=", "bad count ''", NULL },
	{ "count=99999999999999999999", "bad count", NULL },
	{ "seed=18446744073709551616", "bad seed", NULL },
	{ "seed=x", "bad seed 'x'", NULL },
	{ "delay=5parsecs", "bad delay '5parsecs'", "N[ns|us|ms|s]" },
	{ "delay=1h", "bad delay", NULL },
	{ "delay=ms", "bad delay", NULL },
	{ "delay=-1ms", "bad delay", NULL },
	{ "delay=1.ms", "bad delay '1.ms'", NULL },
	{ "delay=0.5ns", "bad delay '0.5ns'", NULL },	/* below 1 ns */
	{ "delay=1.0000000001s", "bad delay", NULL },
	{ "share=1.01", "bad share '1.01'", "0..1" },
	{ "share=-0.5", "bad share", NULL },
	{ "share=nan", "bad share", NULL },
	{ "share=0.5x", "bad share", NULL },
	{ "mode=medium", "bad mode 'medium'", "slow|fast" },
	{ "mode=FAST", "bad mode", NULL },
	{ "name=abcdefgh", "name: empty or too long", "at most 7" },
	{ "name=", "name: empty", NULL },
	{ "item=1,item=x", "bad item 'x'", "D[:D...]" },
	{ "item=1:2:3:4:5", "bad item", NULL },
	/* unknown keys, with what the table knows */
	{ "colour=red", "test: unknown option 'colour'",
	  "(expected flag, size, count, seed, delay, share, mode, name, item)" },
	{ "count=5,Count=6", "unknown option 'Count'", NULL },
	{ "base=null", "unknown option 'base'", NULL },	/* not a wrapper */
	/* keys given twice */
	{ "count=5,count=6", "test: option 'count' given twice", NULL },
	{ "count=5,count=5", "'count' given twice", NULL },
	{ "flag=1,size=8K,flag=1", "'flag' given twice", NULL },
	/* no value: not key=value */
	{ "count", "test: malformed options", "'count'" },
	{ "count=5,size", "malformed", "'size'" },
	{ "=5", "malformed", NULL },
	/* earlier good items are not applied either */
	{ "count=7,mode=fast,name=ok,mode=slow", "'mode' given twice", NULL },
	{ "count=7,size=1", "bad size '1'", NULL },
	{ "count=7,nope=1", "unknown option 'nope'", NULL },
};

START_TEST(refused)
{
	const char *spec = refusals[_i].spec;
	struct topts before;

	o = tdefaults;
	o.count = 42;		/* not a default: proves nothing was copied */
	before = o;
	err[0] = '\0';
	ck_assert_int_eq(bdev_opts_parse(&tdef, spec, &o, NULL, err,
					 sizeof(err)), -1);
	ck_assert_msg(strstr(err, refusals[_i].w1), "%s: '%s' lacks '%s'", spec,
		      err, refusals[_i].w1);
	ck_assert_msg(!refusals[_i].w2 || strstr(err, refusals[_i].w2),
		      "%s: '%s' lacks '%s'", spec, err, refusals[_i].w2);
	ck_assert_msg(same(&o, &before), "%s changed the values", spec);
}
END_TEST

START_TEST(required_key)
{
	struct ropts r = rdefaults;

	ck_assert_int_eq(bdev_opts_parse(&rdef, "", &r, NULL, err, sizeof(err)),
			 -1);
	ck_assert_ptr_nonnull(strstr(err, "req: image= is required"));
	ck_assert_int_eq(bdev_opts_parse(&rdef, "image=disk", &r, NULL, err,
					 sizeof(err)), 0);
	ck_assert_str_eq(r.image, "disk");
}
END_TEST

START_TEST(base_last)
{
	const char *base = "unset";

	o = tdefaults;
	ck_assert_int_eq(bdev_opts_parse(&twrap, "count=2,base=delay:"
		"latency=1ms,base=fault:lba=0-7,base=ram:size=1M", &o, &base,
		err, sizeof(err)), 0);
	ck_assert_uint_eq(o.count, 2);
	ck_assert_str_eq(base, "delay:latency=1ms,base=fault:lba=0-7,"
			 "base=ram:size=1M");

	/* base= first takes everything, own keys included. */
	o = tdefaults;
	ck_assert_int_eq(bdev_opts_parse(&twrap, "base=null,count=3", &o, &base,
					 err, sizeof(err)), 0);
	ck_assert_uint_eq(o.count, tdefaults.count);
	ck_assert_str_eq(base, "null,count=3");

	/* Without base=, the base is "" (aio on the LUN's path). */
	ck_assert_int_eq(bdev_opts_parse(&twrap, "count=4", &o, &base, err,
					 sizeof(err)), 0);
	ck_assert_str_eq(base, "");

	/* Errors before base= are the wrapper's own. */
	ck_assert_int_eq(bdev_opts_parse(&twrap, "count=0,base=null", &o,
					 &base, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "twrap: bad count '0'"));

	ck_assert_str_eq(bdev_opts_base("latency=1ms,base=ram:size=1M"),
			 "ram:size=1M");
	ck_assert_str_eq(bdev_opts_base("latency=1ms"), "");
	ck_assert_str_eq(bdev_opts_base(",,base=a,base=b"), "a,base=b");
}
END_TEST

/* ---- writing options back out ------------------------------------------ */

START_TEST(format_defaults_empty)
{
	char buf[64] = "junk";

	ck_assert_int_eq(bdev_opts_format(&tdef, &tdefaults, NULL, buf,
					  sizeof(buf)), 0);
	ck_assert_str_eq(buf, "");
	ck_assert_int_eq(bdev_opts_format(&twrap, &tdefaults, "ram:size=1M", buf,
					  sizeof(buf)), 16);
	ck_assert_str_eq(buf, "base=ram:size=1M");
}
END_TEST

START_TEST(format_round_trip)
{
	static const char spec[] = "flag=yes,size=65536,count=010,seed=0x10,"
		"delay=2000ms,share=0.1,mode=fast,name=disk,item=1:2,item=3";
	/* Table order, canonical forms: size in the largest exact unit,
	 * time likewise, bool 0|1, numbers decimal. */
	static const char canon[] = "flag=1,size=64K,count=10,seed=16,"
		"delay=2s,share=0.1,mode=fast,name=disk,item=1:2:3";
	struct topts x, y;
	char buf[256], small[8];

	/* count=10 is the default: it drops out. */
	static const char want[] = "flag=1,size=64K,seed=16,delay=2s,"
		"share=0.1,mode=fast,name=disk,item=1:2:3";

	ck_assert_int_eq(parse(spec), 0);
	x = o;
	ck_assert_int_eq(bdev_opts_format(&tdef, &x, NULL, buf, sizeof(buf)),
			 (int)strlen(want));
	ck_assert_str_eq(buf, want);
	ck_assert_int_eq(parse(canon), 0);
	ck_assert(same(&o, &x));
	ck_assert_int_eq(parse(buf), 0);
	y = o;
	ck_assert(same(&x, &y));
	ck_assert(y.flag && y.size == 65536 && y.seed == 16 &&
		  y.delay == 2000000000ull && y.share == 0.1 && y.mode == 2 &&
		  !strcmp(y.name, "disk") && y.items.n == 3);

	/* Too small a buffer: truncated, and the length it needed. */
	ck_assert_int_eq(bdev_opts_format(&tdef, &x, NULL, small,
					  sizeof(small)), (int)strlen(want));
	ck_assert_str_eq(small, "flag=1,");
}
END_TEST

START_TEST(format_exact_units)
{
	char buf[128];

	o = tdefaults;
	o.size = 3ull << 30;
	o.delay = 1500;
	o.share = 1.0 / 3;
	ck_assert_int_gt(bdev_opts_format(&tdef, &o, NULL, buf, sizeof(buf)),
			 0);
	ck_assert_ptr_nonnull(strstr(buf, "size=3G,"));
	ck_assert_ptr_nonnull(strstr(buf, "delay=1500ns,"));
	o.size = 4097;
	o.delay = 250000;
	ck_assert_int_gt(bdev_opts_format(&tdef, &o, NULL, buf, sizeof(buf)),
			 0);
	ck_assert_ptr_nonnull(strstr(buf, "size=4097,"));
	ck_assert_ptr_nonnull(strstr(buf, "delay=250us,"));
	/* A third needs 17 digits to read back the same. */
	ck_assert_int_eq(parse(buf), 0);
	ck_assert(o.share == 1.0 / 3);
	/* An enum value without a word cannot be written. */
	o.mode = 7;
	ck_assert_int_eq(bdev_opts_format(&tdef, &o, NULL, buf, sizeof(buf)),
			 -1);
}
END_TEST

/* ---- the real backends ------------------------------------------------- */

/* spec round-trips through backend name's table: written back as want. */
static void backend_round_trip(const char *name, const char *spec,
			       const char *want)
{
	const struct bdev_opts_def *def = bdev_backend_opts(name);
	const char *base = NULL;
	void *x, *y;
	char buf[512];

	ck_assert_msg(def != NULL, "%s has no table", name);
	ck_assert_str_eq(def->backend, name);
	x = malloc(def->size);
	y = malloc(def->size);
	ck_assert(x && y);
	memcpy(x, def->defaults, def->size);
	memcpy(y, def->defaults, def->size);
	ck_assert_msg(!bdev_opts_parse(def, spec, x, &base, err, sizeof(err)),
		      "%s: %s", spec, err);
	ck_assert_int_ge(bdev_opts_format(def, x, base, buf, sizeof(buf)), 0);
	ck_assert_str_eq(buf, want);
	ck_assert_msg(!bdev_opts_parse(def, buf, y, &base, err, sizeof(err)),
		      "%s: %s", buf, err);
	ck_assert_msg(!memcmp(x, y, def->size), "%s: %s reads back otherwise",
		      name, buf);
	free(x);
	free(y);
}

START_TEST(backend_tables_round_trip)
{
	backend_round_trip("null", "size=2048M", "size=2G");
	backend_round_trip("ram", "size=1048576", "size=1M");
	backend_round_trip("aio", "path=/srv/d.img,direct=off,rwf_dsync=no,"
			   "aio_fsync=false",
			   "path=/srv/d.img,direct=0,rwf_dsync=0,aio_fsync=0");
	backend_round_trip("aio", "direct=1", "");
	backend_round_trip("delay", "seed=0x10,latency=250us,dist=exp,"
			   "parallel=8,base=ram:size=1M",
			   "latency=250us,dist=exp,parallel=8,seed=16,"
			   "base=ram:size=1M");
	backend_round_trip("fault", "lba=0x10-31;5,lba=7,rate=0.5,"
			   "error=enospc,ops=write,seed=9",
			   "lba=16-31;5;7,rate=0.5,error=enospc,ops=write,"
			   "seed=9");
	backend_round_trip("fault", "error=eio,ops=all,base=null", "base=null");
	backend_round_trip("cache", "writeback=5,base=aio", "writeback=5,"
			   "base=aio");
	backend_round_trip("rbd", "cache=writeback,timeout=3,id=gw,conf=/c,"
			   "image=vm1,pool=p",
			   "pool=p,image=vm1,conf=/c,id=gw,timeout=3,"
			   "cache=writeback");
	backend_round_trip("rbd", "pool=rbd,image=i,timeout=30,cache=none",
			   "image=i");
	backend_round_trip("disk", "model=hdd", "");
	backend_round_trip("disk", "sched=fifo,model=hdd-15k,ncq=4,"
			   "readahead=off,avg_seek=4ms,capacity=1G,"
			   "base=ram:size=1M",
			   "model=hdd-15k,capacity=1G,avg_seek=4ms,ncq=4,"
			   "sched=fifo,readahead=off,base=ram:size=1M");
	backend_round_trip("disk", "model=ssd,queue=256,dies=4,wcache=default",
			   "model=ssd,dies=4,queue=256");
	ck_assert_ptr_null(bdev_backend_opts("bogus"));
}
END_TEST

/* Each real backend's table is wired in: bdev_open(spec) fails with a
 * message that starts with the backend and names the key. */
static const struct {
	const char *spec, *backend, *words;
} wired[] = {
	{ "null:size=abc", "null", "bad size 'abc'" },
	{ "null:size=0", "null", "bad size '0'" },
	{ "null:size=1M,size=2M", "null", "'size' given twice" },
	{ "ram:size=1Q", "ram", "bad size '1Q'" },
	{ "ram:bogus=1", "ram", "unknown option 'bogus'" },
	{ "aio:direct=maybe", "aio", "bad direct 'maybe'" },
	{ "aio:rwf_dsync=2", "aio", "bad rwf_dsync '2'" },
	{ "aio:aio_fsync", "aio", "'aio_fsync' is not key=value" },
	{ "aio:x=1", "aio", "unknown option 'x'" },
	{ "delay:dist=gauss,base=ram:size=1M", "delay", "bad dist 'gauss'" },
	{ "delay:parallel=2000000,base=ram:size=1M", "delay", "bad parallel" },
	{ "delay:latency=1ms,latency=2ms,base=ram:size=1M", "delay",
	  "'latency' given twice" },
	{ "fault:ops=none,base=ram:size=1M", "fault", "bad ops 'none'" },
	{ "fault:seed=x,base=ram:size=1M", "fault", "bad seed 'x'" },
	{ "cache:writeback=86400001,base=ram:size=1M", "cache",
	  "bad writeback '86400001'" },
	/* checked before anything connects, with or without librbd */
	{ "rbd:image=a,cache=lots", "rbd", "bad cache 'lots'" },
	{ "rbd:image=a,id=", "rbd", "id: empty" },
	{ "rbd:image=a,image=b", "rbd", "'image' given twice" },
	{ "rbd:pool=p", "rbd", "image= is required" },
	{ "disk:model=tape", "disk", "bad model 'tape'" },
	{ "disk:ncq=0", "disk", "bad ncq '0'" },
	{ "disk:wcache=maybe", "disk", "bad wcache 'maybe'" },
	{ "disk:full_seek=5ms", "disk", "avg_seek" },
	/* a wrapper's base goes through its own table */
	{ "cache:base=fault:ops=x,base=ram:size=1M", "cache",
	  "base: fault: bad ops 'x'" },
};

START_TEST(backend_wired)
{
	struct bdev_params p = { .path = "/nonexistent/tcq-opts" };
	const char *spec = wired[_i].spec;
	size_t n = strlen(wired[_i].backend);

	err[0] = '\0';
	ck_assert_ptr_null(bdev_open(spec, &p, err, sizeof(err)));
	ck_assert_msg(!strncmp(err, wired[_i].backend, n) && err[n] == ':',
		      "%s: got '%s'", spec, err);
	ck_assert_msg(strstr(err, wired[_i].words), "%s: '%s' lacks '%s'",
		      spec, err, wired[_i].words);
}
END_TEST

static Suite *opts_suite(void)
{
	Suite *s = suite_create("bdev_opts");
	TCase *tc = tcase_create("parse");

	tcase_add_loop_test(tc, number_accepted, 0,
			    sizeof(numbers) / sizeof(numbers[0]));
	harness_add(tc, bool_accepted);
	harness_add(tc, other_types_accepted);
	tcase_add_loop_test(tc, refused, 0,
			    sizeof(refusals) / sizeof(refusals[0]));
	harness_add(tc, required_key);
	harness_add(tc, base_last);
	suite_add_tcase(s, tc);
	tc = tcase_create("format");
	harness_add(tc, format_defaults_empty);
	harness_add(tc, format_round_trip);
	harness_add(tc, format_exact_units);
	suite_add_tcase(s, tc);
	tc = tcase_create("backends");
	harness_add(tc, backend_tables_round_trip);
	tcase_add_loop_test(tc, backend_wired, 0,
			    sizeof(wired) / sizeof(wired[0]));
	suite_add_tcase(s, tc);
	return s;
}

int main(int argc, char **argv)
{
	return harness_main(argc, argv, opts_suite);
}
