/*
 * Unit tests for the rbd backend's parts that need no cluster: the spec
 * is checked before anything connects (or, built without librbd, the
 * open says so), a missing Ceph configuration is an error and not a hang,
 * and the resize hook carries a new size from a backend to its LUN and is
 * gone once the LUN is. The I/O path runs against a real cluster in
 * tests/integration/rbd.sh.
 */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "config.h"
#include "backend/bdev.h"
#include "scsi/lun.h"
#include "tests/unit/harness.h"

static char err[256];

static struct bdev *open_spec(const char *spec)
{
	struct bdev_params p = { .block_size = 512 };

	err[0] = 0;
	return bdev_open(spec, &p, err, sizeof(err));
}

#ifdef HAVE_LIBRBD
START_TEST(spec_errors)
{
	static const struct {
		const char *spec, *msg;
	} cases[] = {
		{ "rbd", "image= is required" },
		{ "rbd:pool=rbd", "image= is required" },
		{ "rbd:image=a,colour=blue", "unknown option 'colour'" },
		{ "rbd:image=a,timeout=0", "timeout '0'" },
		{ "rbd:image=a,timeout=x", "timeout 'x'" },
		{ "rbd:image=a,pool=", "pool: empty" },
		{ "rbd:image", "malformed options" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		ck_assert_ptr_null(open_spec(cases[i].spec));
		ck_assert_msg(strstr(err, cases[i].msg), "%s: got '%s'",
			      cases[i].spec, err);
	}
}
END_TEST

START_TEST(missing_conf)
{
	ck_assert_ptr_null(open_spec("rbd:image=a,conf=/nonexistent/ceph.conf"));
	ck_assert_msg(strstr(err, "cannot read the Ceph configuration"),
		      "got '%s'", err);
	ck_assert_msg(strstr(err, "/nonexistent/ceph.conf"), "got '%s'", err);
}
END_TEST
#else
START_TEST(without_librbd)
{
	ck_assert_ptr_null(open_spec("rbd:pool=rbd,image=a"));
	ck_assert_msg(strstr(err, "built without librbd"), "got '%s'", err);
}
END_TEST
#endif

static uint64_t seen_size;
static int seen_calls;

static void hook(void *arg, uint64_t size)
{
	ck_assert_ptr_eq(arg, &seen_size);
	seen_size = size;
	seen_calls++;
}

START_TEST(resize_hook)
{
	struct bdev *b = open_spec("null:size=1M");

	ck_assert_ptr_nonnull(b);
	seen_calls = 0;
	bdev_resized(b, 2u << 20);	/* no hook: only the size moves */
	ck_assert_uint_eq(b->size, 2u << 20);
	bdev_set_resize_hook(b, hook, &seen_size);
	bdev_resized(b, 4u << 20);
	ck_assert_int_eq(seen_calls, 1);
	ck_assert_uint_eq(seen_size, 4u << 20);
	bdev_set_resize_hook(b, NULL, NULL);
	bdev_resized(b, 8u << 20);
	ck_assert_int_eq(seen_calls, 1);
	ck_assert_uint_eq(b->size, 8u << 20);
	bdev_close(b);
}
END_TEST

START_TEST(resize_reaches_lun)
{
	struct bdev *b = open_spec("null:size=1M");
	struct lun *l;

	ck_assert_ptr_nonnull(b);
	l = harness_lun_create(NULL, 0, b);
	ck_assert_ptr_nonnull(l);
	ck_assert_uint_eq(l->nblocks, 2048);
	ck_assert_ptr_nonnull(b->on_resize);
	bdev_resized(b, 3u << 20);
	ck_assert_uint_eq(l->nblocks, 6144);
	ck_assert_uint_eq(b->size, 3u << 20);
	lun_destroy(l);
	/* The LUN is gone: a late resize must not reach it. */
	ck_assert_ptr_null(b->on_resize);
	bdev_resized(b, 4u << 20);
	bdev_close(b);
}
END_TEST

static Suite *rbd_suite(void)
{
	Suite *s = suite_create("rbd");
	TCase *tc = tcase_create("rbd");

#ifdef HAVE_LIBRBD
	harness_add(tc, spec_errors);
	harness_add(tc, missing_conf);
#else
	harness_add(tc, without_librbd);
#endif
	harness_add(tc, resize_hook);
	harness_add(tc, resize_reaches_lun);
	tcase_set_timeout(tc, 30);
	suite_add_tcase(s, tc);
	return s;
}

int main(int argc, char **argv)
{
	return harness_main(argc, argv, rbd_suite);
}
