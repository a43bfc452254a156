/* Unit tests for the way back from struct cfg to text (target/
 * config_format.c, config_save.c) and the live-change helpers of
 * config.c: what tcqctl save writes, tcqd reads back as the same
 * configuration, key by key. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "target/config.h"
#include "target/config_keys.h"
#include "tests/unit/harness.h"

#define T1 "iqn.2026-11.org.tcq:one"
#define T2 "iqn.2026-11.org.tcq:two"

/* Every key of the table at a value other than its default (the test
 * below checks that none is missed). */
static const char every_key[] =
	"[global]\n"
	"listen = 127.0.0.1:3260\n"
	"listen = [::1]:3261\n"
	"threads = 3\n"
	"io_engine = aio\n"
	"log_level = debug\n"
	"max_recv_data_segment_length = 128K\n"
	"max_burst_length = 2M\n"
	"first_burst_length = 256K\n"
	"max_outstanding_r2t = 4\n"
	"initial_r2t = yes\n"
	"immediate_data = no\n"
	"cmd_window = 64\n"
	"nop_interval = 0\n"
	"nop_timeout = 5\n"
	"login_timeout = 7\n"
	"max_transfer_length = 16M\n"
	"header_digest = deny\n"
	"data_digest = deny\n"
	"max_sessions = 9\n"
	"login_idle_timeout = 4\n"
	"max_pending_logins = 11\n"
	"chap_algorithms = SHA-256,MD5\n"
	"discovery_chap_user = disco\n"
	"discovery_chap_secret = discovery-secret-1\n"
	"discovery_mutual_chap_user = disco-target\n"
	"discovery_mutual_chap_secret = discovery-secret-2\n"
	"ctl = /run/tcq-test.sock\n"
	"state_dir = /var/lib/tcq-test\n"
	"metrics = 127.0.0.1:9470\n"
	"isns = [2001:db8::5]:3206\n"
	"\n"
	"[target " T1 "]\n"
	"alias = first disk\n"
	"tpgt = 3\n"
	"chap_user = user1\n"
	"chap_secret = initiator-secret-1\n"
	"mutual_chap_user = target1\n"
	"mutual_chap_secret = target-secret-01\n"
	"allow_initiator = iqn.2026-11.org.tcq:host*\n"
	"allow_initiator = iqn.2026-11.org.tcq:other\n"
	"allow_network = 10.0.0.0/8\n"
	"allow_network = fd00::/16\n"
	"max_sessions = 5\n"
	"max_sessions_per_initiator = 2\n"
	"redirect = [fd00::2]:3261,permanent\n"
	"tpg_id = 2\n"
	"rel_port_id = 7\n"
	"tpg = 1:active-optimized:1\n"
	"tpg = 2:standby:7,8\n"
	"\n"
	"[lun " T1 " 0]\n"
	"path = /srv/one.img\n"
	"backend = delay:latency=1ms,base=aio\n"
	"size = 64M\n"
	"block_size = 4096\n"
	"physical_block_size = 16K\n"
	"read_only = yes\n"
	"create = yes\n"
	"queue_depth = 7\n"
	"write_cache = no\n"
	"barrier = flush\n"
	"qam = unrestricted\n"
	"tas = 1\n"
	"removable = yes\n"
	"thin = no\n"
	"sanitize = yes\n"
	"serial = SER-0001\n"
	"vendor = ACME\n"
	"product = Bulk Store 9\n"
	"revision = 1.2\n"
	"qos_iops = 2000\n"
	"qos_mbps = 50\n"
	"prefetch = off\n"	/* on: refused with 2 port groups */
	"prefetch_max = 16M\n"
	"shared_state = none\n"
	"thin_threshold = 80\n"
	"flush = ignore\n"
	"fua = ignore\n"
	"cut_through = off\n"
	"record = /var/lib/tcq/save-test.rec\n"
	"record_max = 2G\n"
	"\n"
	"[lun " T1 " 5]\n"
	"path = /srv/install.iso\n"
	"type = cdrom\n"
	"\n"
	"[target " T2 "]\n"
	"\n"
	"[lun " T2 " 3]\n"
	"backend = null\n"
	"size = 1000448\n"
	"\n"
	"[initiator " T1 " iqn.2026-11.org.tcq:host1]\n"
	"chap_user = host1\n"
	"chap_secret = host1-secret-01\n"
	"luns = 0:5:ro\n"
	"\n"
	"[initiator " T2 " iqn.2026-11.org.tcq:host1]\n"
	"luns = 3:0\n"
	"\n"
	"[initiator " T2 " iqn.2026-11.org.tcq:host2]\n"
	"luns = none\n";

static void load(struct cfg *c, const char *text)
{
	cfg_init(c);
	int rc = cfg_load_string(c, "test.conf", text);

	ck_assert_msg(rc == 0, "does not load: %s",
		      c->nmsgs ? c->msgs[0] : "?");
}

/* Each section of a against the same section of b, key by key. */
static void expect_same(const struct cfg *a, const struct cfg *b)
{
	ck_assert_int_eq(a->ntargets, b->ntargets);
	ck_assert_int_eq(a->nluns, b->nluns);
	ck_assert_int_eq(a->ninits, b->ninits);
	for (size_t i = 0; i < cfg_nkeys; i++) {
		const struct cfg_key *k = &cfg_keys[i];

		if (k->section == CFG_GLOBAL)
			ck_assert_msg(cfg_key_equal(k, a, &a->set, b, &b->set),
				      "[global] %s differs", k->name);
		for (int t = 0; k->section == CFG_TARGET && t < a->ntargets;
		     t++) {
			struct cfg_target *ta = a->targets[t];
			struct cfg_target *tb = cfg_find_target(b, ta->name);

			ck_assert_ptr_nonnull(tb);
			ck_assert_msg(cfg_key_equal(k, a, ta, b, tb),
				      "[target %s] %s differs", ta->name,
				      k->name);
		}
		for (int l = 0; k->section == CFG_LUN && l < a->nluns; l++) {
			struct cfg_lun *la = a->luns[l];
			struct cfg_lun *lb = cfg_find_lun(b, la->target, la->id);

			ck_assert_ptr_nonnull(lb);
			ck_assert_msg(cfg_key_equal(k, a, la, b, lb),
				      "[lun %s %u] %s differs", la->target,
				      la->id, k->name);
		}
		for (int n = 0; k->section == CFG_INITIATOR && n < a->ninits;
		     n++) {
			struct cfg_initiator *ia = a->inits[n];
			struct cfg_initiator *ib =
				cfg_find_initiator(b, ia->target, ia->name);

			ck_assert_ptr_nonnull(ib);
			ck_assert_msg(cfg_key_equal(k, a, ia, b, ib),
				      "[initiator %s %s] %s differs",
				      ia->target, ia->name, k->name);
		}
	}
}

START_TEST(saved_config_loads_back_key_by_key)
{
	struct cfg a, b;
	char *ta, *tb;

	load(&a, every_key);
	ta = cfg_format(&a, NULL);
	ck_assert_ptr_nonnull(ta);
	load(&b, ta);
	expect_same(&a, &b);
	/* ... and the text is a fixed point. */
	tb = cfg_format(&b, NULL);
	ck_assert_str_eq(ta, tb);
	free(ta);
	free(tb);
	cfg_free(&a);
	cfg_free(&b);
}
END_TEST

/* The fixture sets every key off its default, so each must be written:
 * a key the formatter forgets would be lost by tcqctl save. */
START_TEST(every_non_default_key_is_written)
{
	struct cfg a;
	char *text;

	load(&a, every_key);
	text = cfg_format(&a, NULL);
	for (size_t i = 0; i < cfg_nkeys; i++) {
		char needle[80];

		snprintf(needle, sizeof(needle), "\n%s = ", cfg_keys[i].name);
		ck_assert_msg(strstr(text, needle) != NULL,
			      "%s is not written", cfg_keys[i].name);
	}
	free(text);
	cfg_free(&a);
}
END_TEST

/* Defaults are left out: a minimal file stays minimal. */
START_TEST(defaults_are_left_out)
{
	static const char expected[] =
		"[global]\n"
		"listen = 127.0.0.1:0\n"
		"\n"
		"[target " T2 "]\n"
		"\n"
		"[lun " T2 " 0]\n"
		"backend = null\n"
		"size = 1G\n"
		"queue_depth = 32\n";
	struct cfg a;
	char *text;

	load(&a, "[global]\nlisten = 127.0.0.1:0\n[target " T2 "]\n"
		 "[lun " T2 " 0]\nbackend = null\nsize = 1073741824\n"
		 "queue_depth = 32\nbarrier = drain\nwrite_cache = yes\n");
	text = cfg_format(&a, NULL);
	ck_assert_str_eq(text, expected);
	free(text);
	cfg_free(&a);
}
END_TEST

START_TEST(save_is_atomic_and_private)
{
	char dir[] = "/tmp/tcq-cfgsave.XXXXXX", path[64], stray[80];
	struct cfg a, b;
	struct stat st;
	char err[300];

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/tcqd.conf", dir);
	load(&a, every_key);
	ck_assert_int_eq(cfg_save(&a, path, err, sizeof(err)), 0);
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_uint_eq(st.st_mode & 0777, 0600);
	snprintf(stray, sizeof(stray), "%s.tmp.%ld", path, (long)getpid());
	ck_assert_int_ne(access(stray, F_OK), 0);
	cfg_init(&b);
	ck_assert_int_eq(cfg_load_file(&b, path), 0);
	expect_same(&a, &b);
	/* A folder that is not there: an error naming the file. */
	ck_assert_int_eq(cfg_save(&a, "/nonexistent-dir/x.conf", err,
				  sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "/nonexistent-dir/x.conf"));
	unlink(path);
	rmdir(dir);
	cfg_free(&a);
	cfg_free(&b);
}
END_TEST

START_TEST(pairs_name_the_bad_key)
{
	struct cfg a;
	char err[300];
	char *bad_value[] = { "queue_depth=0" };
	char *unknown[] = { "queue_dept=8" };
	char *no_eq[] = { "queue_depth" };
	char *good[] = { "queue_depth=8", "barrier=ignore" };
	struct cfg_lun *l;

	load(&a, every_key);
	l = cfg_find_lun(&a, T2, 3);
	ck_assert_ptr_nonnull(l);
	ck_assert_int_eq(cfg_set_pairs(&a, CFG_LUN, l, bad_value, 1, err,
				       sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "'queue_depth'"));
	ck_assert_int_eq(cfg_set_pairs(&a, CFG_LUN, l, unknown, 1, err,
				       sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "unknown key 'queue_dept'"));
	ck_assert_int_eq(cfg_set_pairs(&a, CFG_LUN, l, no_eq, 1, err,
				       sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "key=value"));
	ck_assert_int_eq(cfg_set_pairs(&a, CFG_LUN, l, good, 2, err,
				       sizeof(err)), 0);
	ck_assert_uint_eq(l->queue_depth, 8);
	ck_assert_uint_eq(l->barrier, 2);
	cfg_free(&a);
}
END_TEST

/* [initiator] sections are written after the targets, each with its
 * keys as they were read, and set by key=value words (tcqctl acl set). */
START_TEST(initiator_sections_written_and_set)
{
	static const char want[] =
		"\n[initiator " T1 " iqn.2026-11.org.tcq:host1]\n"
		"chap_user = host1\n"
		"chap_secret = host1-secret-01\n"
		"luns = 0:5:ro\n"
		"\n[initiator " T2 " iqn.2026-11.org.tcq:host1]\n"
		"luns = 3:0\n"
		"\n[initiator " T2 " iqn.2026-11.org.tcq:host2]\n"
		"luns = none\n";
	char *remap[] = { "luns=3:9:ro" }, *bad[] = { "luns=3:1,3:2" };
	char *short_secret[] = { "chap_secret=short" };
	struct cfg a;
	struct cfg_initiator *ci;
	char err[300], *text;

	load(&a, every_key);
	text = cfg_format(&a, NULL);
	ck_assert_ptr_nonnull(strstr(text, want));
	free(text);
	ci = cfg_find_initiator(&a, T2, "iqn.2026-11.org.tcq:host2");
	ck_assert_int_eq(cfg_set_pairs(&a, CFG_INITIATOR, ci, remap, 1, err,
				       sizeof(err)), 0);
	ck_assert(ci->nmap == 1 && ci->map[0].as == 9 && ci->map[0].ro);
	ck_assert_int_eq(cfg_set_pairs(&a, CFG_INITIATOR, ci, bad, 1, err,
				       sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "'luns'"));
	ck_assert_int_eq(cfg_set_pairs(&a, CFG_INITIATOR, ci, short_secret, 1,
				       err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "'chap_secret'"));
	ck_assert_ptr_null(strstr(err, "short"));	/* never echoed */
	text = cfg_format(&a, NULL);
	ck_assert_ptr_nonnull(strstr(text, "host2]\nluns = 3:9:ro\n"));
	free(text);
	cfg_free(&a);
}
END_TEST

/* A map of all 256 LUNs is written in lines that a file holds (at most
 * 197 characters each) and loads back whole, in its order. */
START_TEST(long_map_saved_in_lines_that_load_back)
{
	static char text[40000];
	size_t o = 0;
	struct cfg a, b;
	char *saved;
	const char *p;

	o += (size_t)snprintf(text + o, sizeof(text) - o,
			      "[global]\nlisten = 127.0.0.1:0\n[target " T2
			      "]\n");
	for (int i = 0; i < 256; i++)
		o += (size_t)snprintf(text + o, sizeof(text) - o,
				      "[lun " T2 " %d]\nbackend = null\n"
				      "size = 1M\n", i);
	o += (size_t)snprintf(text + o, sizeof(text) - o,
			      "[initiator " T2 " iqn.2026-11.org.tcq:host1]\n");
	for (int i = 0; i < 256; i++)
		o += (size_t)snprintf(text + o, sizeof(text) - o,
				      "%s%d:%d:ro%s", i % 10 ? "," : "luns = ",
				      i, 255 - i, i % 10 == 9 ? "\n" : "");
	snprintf(text + o, sizeof(text) - o, "\n");
	load(&a, text);
	ck_assert_int_eq(a.inits[0]->nmap, 256);
	saved = cfg_format(&a, NULL);
	for (p = saved; *p; p = strchr(p, '\n') + 1)
		ck_assert_uint_le(strcspn(p, "\n"), 197);
	load(&b, saved);
	ck_assert_int_eq(b.inits[0]->nmap, 256);
	for (int i = 0; i < 256; i++) {
		const struct cfg_map_ent *x = &a.inits[0]->map[i];
		const struct cfg_map_ent *y = &b.inits[0]->map[i];

		ck_assert(x->lun == y->lun && x->as == y->as && x->ro == y->ro);
		ck_assert(x->lun == i && x->as == 255 - i && x->ro);
	}
	free(saved);
	cfg_free(&a);
	cfg_free(&b);
}
END_TEST

START_TEST(removing_parts)
{
	struct cfg a, b;
	char err[300], *text;

	load(&a, every_key);
	ck_assert_int_eq(cfg_remove_lun(&a, T2, 3), 0);
	ck_assert_int_eq(cfg_remove_lun(&a, T2, 3), -1);
	ck_assert_int_eq(cfg_remove_listen(&a, "[::1]:3261"), 0);
	ck_assert_int_eq(cfg_remove_initiator(&a, T2,
					      "iqn.2026-11.org.tcq:host2"), 0);
	ck_assert_int_eq(cfg_remove_initiator(&a, T2,
					      "iqn.2026-11.org.tcq:host2"), -1);
	/* a target goes with its [initiator] sections; the LUN a map
	 * named goes first, so T2's map must go too */
	ck_assert_int_eq(cfg_remove_initiator(&a, T2,
					      "iqn.2026-11.org.tcq:host1"), 0);
	ck_assert_int_eq(cfg_remove_target(&a, T1), 0);
	ck_assert_int_eq(a.ntargets, 1);
	ck_assert_int_eq(a.nluns, 0);
	ck_assert_int_eq(a.ninits, 0);
	ck_assert_int_eq(cfg_copy(&b, &a, err, sizeof(err)), 0);
	text = cfg_format(&b, NULL);
	ck_assert_ptr_null(strstr(text, "[::1]:3261"));
	ck_assert_ptr_null(strstr(text, T1));
	ck_assert_ptr_null(strstr(text, "[initiator"));
	ck_assert_ptr_nonnull(strstr(text, "[target " T2 "]"));
	free(text);
	cfg_free(&a);
	cfg_free(&b);
}
END_TEST

static Suite *config_save_suite(void)
{
	Suite *s = suite_create("config_save");
	TCase *tc = tcase_create("save");

	harness_add(tc, saved_config_loads_back_key_by_key);
	harness_add(tc, every_non_default_key_is_written);
	harness_add(tc, defaults_are_left_out);
	harness_add(tc, save_is_atomic_and_private);
	harness_add(tc, pairs_name_the_bad_key);
	harness_add(tc, initiator_sections_written_and_set);
	harness_add(tc, long_map_saved_in_lines_that_load_back);
	harness_add(tc, removing_parts);
	suite_add_tcase(s, tc);
	return s;
}

int main(int argc, char **argv)
{
	return harness_main(argc, argv, config_save_suite);
}
