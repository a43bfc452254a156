/* Unit tests for the configuration (target/config_file.c, config_keys.c,
 * config_value.c, config.c). */
#include <check.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "tcq/log.h"
#include "target/config.h"
#include "target/config_keys.h"
#include "tests/unit/harness.h"

#define T1 "iqn.2026-11.org.tcq:disk1"

static const char good[] =
	"; a comment\n"
	"# another\n"
	"[global]\n"
	"listen = 127.0.0.1:3260\n"
	"  listen = [::1]:3261   ; indented, inline comment\n"
	"threads = 4\n"
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
	"data_digest = allow\n"
	"\n"
	"[target " T1 "]\n"
	"alias = first disk\n"
	"tpgt = 3\n"
	"\n"
	"[lun " T1 " 0]\n"
	"path = /tmp/x.img\n"
	"size = 1G\n"
	"block_size = 4096\n"
	"read_only = yes\n"
	"create = on\n"
	"queue_depth = 32\n"
	"write_cache = off\n"
	"\n"
	"[lun " T1 " 7]\n"
	"backend = null\n"
	"size = 4096K\n"
	"[target eui.0123456789abcdef]\n"
	"[lun eui.0123456789abcdef 0]\n"
	"path = /dev/null\n";

START_TEST(test_valid)
{
	struct cfg c;
	struct cfg_target *t;
	struct cfg_lun *l;

	cfg_init(&c);
	ck_assert_int_eq(cfg_load_string(&c, "t.conf", good), 0);
	ck_assert_int_eq(c.nerrors, 0);
	ck_assert_int_eq(c.nmsgs, 0);

	ck_assert_int_eq(c.nlisten, 2);
	ck_assert_str_eq(c.listen[0], "127.0.0.1:3260");
	ck_assert_str_eq(c.listen[1], "[::1]:3261");
	ck_assert_int_eq(c.set.threads, 4);
	ck_assert_uint_eq(c.set.io_engine, IO_ENGINE_AIO);
	ck_assert_int_eq(c.log_level, LOG_DEBUG);
	ck_assert_uint_eq(c.set.max_recv_dsl, 131072);
	ck_assert_uint_eq(c.set.max_burst, 2097152);
	ck_assert_uint_eq(c.set.first_burst, 262144);
	ck_assert_uint_eq(c.set.max_outstanding_r2t, 4);
	ck_assert(c.set.initial_r2t);
	ck_assert(!c.set.immediate_data);
	ck_assert_uint_eq(c.set.cmd_window, 64);
	ck_assert_uint_eq(c.set.nop_interval_s, 0);
	ck_assert_uint_eq(c.set.nop_timeout_s, 5);
	ck_assert_uint_eq(c.set.login_timeout_s, 7);
	ck_assert_uint_eq(c.set.max_xfer_len, 16u << 20);
	ck_assert(!c.set.header_digest_allowed);
	ck_assert(c.set.data_digest_allowed);

	ck_assert_int_eq(c.ntargets, 2);
	t = c.targets[0];
	ck_assert_str_eq(t->name, T1);
	ck_assert_str_eq(t->alias, "first disk");
	ck_assert_uint_eq(t->tpgt, 3);
	ck_assert_int_eq(t->line, 23);
	l = t->luns[0];
	ck_assert_ptr_nonnull(l);
	ck_assert_str_eq(l->path, "/tmp/x.img");
	ck_assert_str_eq(l->backend, "aio");
	ck_assert_uint_eq(l->size, 1ull << 30);
	ck_assert_uint_eq(l->block_size, 4096);
	ck_assert(l->read_only);
	ck_assert(l->create);
	ck_assert_uint_eq(l->queue_depth, 32);
	ck_assert(!l->write_cache);
	ck_assert_int_eq(l->line, 27);
	ck_assert_int_eq(l->size_line, 29);
	ck_assert_ptr_null(t->luns[1]);
	l = t->luns[7];
	ck_assert_ptr_nonnull(l);
	ck_assert_ptr_null(l->path);
	ck_assert_str_eq(l->backend, "null");
	ck_assert_uint_eq(l->size, 4u << 20);
	ck_assert_uint_eq(l->block_size, 512);
	ck_assert(l->write_cache);
	ck_assert(!l->read_only);
	ck_assert_uint_eq(l->queue_depth, CFG_DEFAULT_QUEUE_DEPTH);

	t = c.targets[1];
	ck_assert_str_eq(t->name, "eui.0123456789abcdef");
	ck_assert_uint_eq(t->tpgt, 1);
	ck_assert_str_eq(t->alias, "");
	ck_assert_str_eq(t->luns[0]->path, "/dev/null");
	ck_assert_int_eq(c.nluns, 3);
	cfg_free(&c);
}
END_TEST

START_TEST(test_defaults)
{
	struct cfg c;

	cfg_init(&c);
	ck_assert_int_eq(cfg_load_string(&c, "d.conf",
		"[target " T1 "]\n[lun " T1 " 0]\npath=/x\n"), 0);
	/* No listen: the default portal. */
	ck_assert_int_eq(c.nlisten, 1);
	ck_assert_str_eq(c.listen[0], CFG_DEFAULT_LISTEN);
	ck_assert_int_eq(c.log_level, -1);
	ck_assert_uint_eq(c.set.max_recv_dsl, 262144);
	ck_assert_uint_eq(c.set.max_burst, 1048576);
	ck_assert_uint_eq(c.set.first_burst, 65536);
	ck_assert_uint_eq(c.set.max_outstanding_r2t, 1);
	ck_assert(!c.set.initial_r2t);
	ck_assert(c.set.immediate_data);
	ck_assert_uint_eq(c.set.cmd_window, 128);
	ck_assert_uint_eq(c.set.nop_interval_s, 30);
	ck_assert_uint_eq(c.set.nop_timeout_s, 15);
	ck_assert_uint_eq(c.set.login_timeout_s, 15);
	ck_assert_uint_eq(c.set.max_xfer_len, 8u << 20);
	ck_assert_int_eq(c.set.threads, 0);
	ck_assert_uint_eq(c.set.io_engine, IO_ENGINE_AUTO);
	ck_assert(c.set.header_digest_allowed && c.set.data_digest_allowed);
	cfg_free(&c);
}
END_TEST

/* Loads text and expects exactly the given messages, in order. */
static void expect(const char *text, int nerrors, const char *m1,
		   const char *m2)
{
	struct cfg c;
	int r;

	cfg_init(&c);
	r = cfg_load_string(&c, "tcqd.conf", text);
	ck_assert_int_eq(r, nerrors ? -1 : 0);
	ck_assert_int_eq(c.nerrors, nerrors);
	ck_assert_int_eq(c.nmsgs, m2 ? 2 : 1);
	ck_assert_str_eq(c.msgs[0], m1);
	if (m2)
		ck_assert_str_eq(c.msgs[1], m2);
	cfg_free(&c);
}

#define TGT "[target " T1 "]\n"
#define LUN0 "[lun " T1 " 0]\npath = /x\n"

START_TEST(test_unknown_key)
{
	expect(TGT "alias = a\nqueue_dept = 4\n" LUN0, 1,
	       "tcqd.conf:3: unknown key 'queue_dept' in [target " T1 "]", NULL);
	expect("[global]\nlisten = 127.0.0.1:1\nfoo = 1\n" TGT LUN0, 1,
	       "tcqd.conf:3: unknown key 'foo' in [global]", NULL);
	expect(TGT LUN0 "sise = 1G\n", 1,
	       "tcqd.conf:4: unknown key 'sise' in [lun " T1 " 0]", NULL);
}
END_TEST

START_TEST(test_bad_values)
{
	expect("[global]\ncmd_window = abc\n" TGT LUN0, 1,
	       "tcqd.conf:2: bad value for 'cmd_window': 'abc' is not a number",
	       NULL);
	expect("[global]\ncmd_window = 0\n" TGT LUN0, 1,
	       "tcqd.conf:2: bad value for 'cmd_window': '0' is out of range 1..65536",
	       NULL);
	expect("[global]\ncmd_window = -1\n" TGT LUN0, 1,
	       "tcqd.conf:2: bad value for 'cmd_window': '-1' is not a number",
	       NULL);
	expect("[global]\nio_engine = epoll\n" TGT LUN0, 1,
	       "tcqd.conf:2: bad value for 'io_engine': 'epoll' is not auto, "
	       "uring or aio", NULL);
	expect("[global]\nthreads = 99999999999999999999999\n" TGT LUN0, 1,
	       "tcqd.conf:2: bad value for 'threads': "
	       "'99999999999999999999999' is out of range 0..64", NULL);
	expect(TGT LUN0 "read_only = maybe\n", 1,
	       "tcqd.conf:4: bad value for 'read_only': 'maybe' is not a boolean "
	       "(yes/no, on/off, true/false, 1/0)", NULL);
	expect(TGT LUN0 "block_size = 1024\n", 1,
	       "tcqd.conf:4: bad value for 'block_size': '1024' is not 512 or 4096",
	       NULL);
	expect(TGT LUN0 "size = 10X\n", 1,
	       "tcqd.conf:4: bad value for 'size': '10X' is not a size "
	       "(a number with an optional K, M, G or T suffix)", NULL);
	expect(TGT LUN0 "queue_depth = 1025\n", 1,
	       "tcqd.conf:4: bad value for 'queue_depth': '1025' is out of range 1..1024",
	       NULL);
	expect("[global]\nheader_digest = maybe\n" TGT LUN0, 1,
	       "tcqd.conf:2: bad value for 'header_digest': 'maybe' is not allow or deny",
	       NULL);
	expect("[global]\nlog_level = loud\n" TGT LUN0, 1,
	       "tcqd.conf:2: bad value for 'log_level': "
	       "'loud' is not error, warn, info or debug", NULL);
	expect("[global]\nlisten = 1.2.3:3260\n" TGT LUN0, 1,
	       "tcqd.conf:2: bad value for 'listen': bad IPv4 address '1.2.3'",
	       NULL);
	expect("[global]\nlisten = ::1:3260\n" TGT LUN0, 1,
	       "tcqd.conf:2: bad value for 'listen': bad address '::1:3260': "
	       "put IPv6 addresses in brackets, [ADDR]:PORT", NULL);
	expect("[global]\nlisten = 127.0.0.1:70000\n" TGT LUN0, 1,
	       "tcqd.conf:2: bad value for 'listen': bad port in '127.0.0.1:70000'",
	       NULL);
	expect("[global]\nlisten = *:3260\nlisten = *:3260\n" TGT LUN0, 1,
	       "tcqd.conf:3: bad value for 'listen': duplicate listen address '*:3260'",
	       NULL);
	expect("[global]\nmax_burst_length = 64K\nfirst_burst_length = 128K\n"
	       TGT LUN0, 1,
	       "tcqd.conf:3: first_burst_length 131072 exceeds max_burst_length 65536",
	       NULL);
	expect("[global]\nmax_recv_data_segment_length = 16M\n" TGT LUN0, 1,
	       "tcqd.conf:2: bad value for 'max_recv_data_segment_length': "
	       "'16M' is out of range 512..16777215", NULL);
	expect(TGT "tpgt = 0\n" LUN0, 1,
	       "tcqd.conf:2: bad value for 'tpgt': '0' is out of range 1..65535",
	       NULL);
	/* INQUIRY identity: SPC-4 6.6.2's lengths (8, 16, 4) and 4.4.1's
	 * ASCII (20h-7Eh) */
	expect(TGT LUN0 "vendor = ACMEACME9\n", 1,
	       "tcqd.conf:4: bad value for 'vendor': 'ACMEACME9' is 9 "
	       "characters: 1..8", NULL);
	expect(TGT LUN0 "product = ABCDEFGHIJKLMNOPQ\n", 1,
	       "tcqd.conf:4: bad value for 'product': 'ABCDEFGHIJKLMNOPQ' is "
	       "17 characters: 1..16", NULL);
	expect(TGT LUN0 "revision = 1.2.3\n", 1,
	       "tcqd.conf:4: bad value for 'revision': '1.2.3' is 5 "
	       "characters: 1..4", NULL);
	expect(TGT LUN0 "product = Disk\x7f\n", 1,
	       "tcqd.conf:4: bad value for 'product': 'Disk\x7f': printable "
	       "ASCII (20h-7Eh) without ';'", NULL);
	/* QoS limits: whole numbers, 0 (none) up to the documented bounds */
	expect(TGT LUN0 "qos_iops = -1\n", 1,
	       "tcqd.conf:4: bad value for 'qos_iops': '-1' is not a number",
	       NULL);
	expect(TGT LUN0 "qos_mbps = 1.5\n", 1,
	       "tcqd.conf:4: bad value for 'qos_mbps': '1.5' is not a number",
	       NULL);
	expect(TGT LUN0 "qos_mbps = fast\n", 1,
	       "tcqd.conf:4: bad value for 'qos_mbps': 'fast' is not a "
	       "number", NULL);
	expect(TGT LUN0 "qos_iops = 1000001\n", 1,
	       "tcqd.conf:4: bad value for 'qos_iops': '1000001' is out of "
	       "range 0..1000000", NULL);
	expect(TGT LUN0 "qos_mbps = 100001\n", 1,
	       "tcqd.conf:4: bad value for 'qos_mbps': '100001' is out of "
	       "range 0..100000", NULL);
	expect(TGT LUN0 "prefetch = always\n", 1,
	       "tcqd.conf:4: bad value for 'prefetch': 'always' is not off, "
	       "auto or on", NULL);
	expect(TGT LUN0 "prefetch_max = 32K\n", 1,
	       "tcqd.conf:4: bad value for 'prefetch_max': '32K' is out of "
	       "range 65536..1073741824", NULL);
}
END_TEST

START_TEST(test_names)
{
	expect("[target iqn.2026-11.org.TCQ:x]\n" TGT LUN0, 1,
	       "tcqd.conf:1: bad iSCSI name 'iqn.2026-11.org.TCQ:x': must be lower case",
	       NULL);
	expect("[target iqn.2026-13.org.tcq]\n" TGT LUN0, 1,
	       "tcqd.conf:1: bad iSCSI name 'iqn.2026-13.org.tcq': "
	       "expected iqn.YYYY-MM.reversed.domain[:identifier]", NULL);
	expect("[target eui.0123]\n" TGT LUN0, 1,
	       "tcqd.conf:1: bad iSCSI name 'eui.0123': expected eui. and 16 hex digits",
	       NULL);
	expect("[target foo.bar]\n" TGT LUN0, 1,
	       "tcqd.conf:1: bad iSCSI name 'foo.bar': must start with iqn., eui. or naa.",
	       NULL);
	expect("[target iqn.2026-11.org.tcq:a_b]\n" TGT LUN0, 1,
	       "tcqd.conf:1: bad iSCSI name 'iqn.2026-11.org.tcq:a_b': "
	       "only a-z, 0-9, '-', '.' and ':' are allowed", NULL);
	/* Keys of a rejected section are not reported again. */
	expect("[target bad]\nalias = x\nnonsense = 1\n" TGT LUN0, 1,
	       "tcqd.conf:1: bad iSCSI name 'bad': must start with iqn., eui. or naa.",
	       NULL);
}
END_TEST

START_TEST(test_name_check)
{
	char err[300];
	static const char *const ok[] = {
		"iqn.2001-04.com.example",
		"iqn.2001-04.com.example:storage:diskarrays-sn-a8675309",
		"iqn.2001-04.com.example:storage.tape1.sys1.xyz",
		"eui.02004567a425678d",
		"naa.52004567ba64678d",
		"naa.62004567ba64678d0123456789abcdef",
	};
	static const char *const bad[] = {
		"", "iqn.", "iqn.2001-04", "iqn.2001-04.", "iqn.2001-04..com",
		"iqn.2001-4.com.example", "iqn.2001-04.com.example:",
		"iqn.01-04.com", "eui.02004567A425678D", "eui.02004567a425678",
		"naa.52004567ba64678d00", "naa.zz004567ba64678d", "iqn.2001-04.com ex",
	};
	char longname[300];

	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
		ck_assert_msg(cfg_check_name(ok[i], err, sizeof(err)) == 0,
			      "%s: %s", ok[i], err);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ck_assert_msg(cfg_check_name(bad[i], err, sizeof(err)) < 0,
			      "'%s' accepted", bad[i]);
	memset(longname, 'a', sizeof(longname));
	memcpy(longname, "iqn.2001-04.com.example:", 24);
	longname[223] = 0;
	ck_assert_int_eq(cfg_check_name(longname, err, sizeof(err)), 0);
	longname[223] = 'a';
	longname[224] = 0;
	ck_assert_int_lt(cfg_check_name(longname, err, sizeof(err)), 0);
}
END_TEST

START_TEST(test_sections)
{
	expect(TGT LUN0 TGT, 1,
	       "tcqd.conf:4: duplicate target '" T1 "' (first defined at line 1)",
	       NULL);
	expect(TGT LUN0 "[lun " T1 " 0]\n", 1,
	       "tcqd.conf:4: duplicate LUN 0 of target '" T1 "' (first defined at line 2)",
	       NULL);
	expect(TGT LUN0 "[lun " T1 " 256]\n", 1,
	       "tcqd.conf:4: bad LUN number: '256' is out of range 0..255", NULL);
	expect(TGT LUN0 "[lun " T1 "]\n", 1,
	       "tcqd.conf:4: bad section header: expected [lun TARGET-NAME N]", NULL);
	/* The LUN comes before any target: reported at its own line. */
	expect("[lun iqn.2026-11.org.tcq:other 0]\npath = /x\n" TGT LUN0, 1,
	       "tcqd.conf:1: LUN 0: unknown target 'iqn.2026-11.org.tcq:other' "
	       "(no [target iqn.2026-11.org.tcq:other] section)", NULL);
	expect(TGT LUN0 "[disk]\nx = 1\n", 1,
	       "tcqd.conf:4: unknown section [disk] (expected global, target, "
	       "lun or initiator)",
	       NULL);
	expect("x = 1\n" TGT LUN0, 1,
	       "tcqd.conf:1: key 'x' outside any section", NULL);
	expect(TGT "alias = a\nalias = b\n" LUN0, 1,
	       "tcqd.conf:3: duplicate key 'alias' in [target " T1 "]", NULL);
	/* [global] may recur; its keys still may not. */
	expect("[global]\nthreads = 1\n" TGT LUN0 "[global]\nthreads = 2\n", 1,
	       "tcqd.conf:7: duplicate key 'threads' in [global]", NULL);
}
END_TEST

/* [initiator TARGET NAME]: an initiator's own CHAP and LUN map. */
#define I1 "iqn.2026-11.org.tcq:host1"
#define LUN1 "[lun " T1 " 1]\npath = /y\n"
#define INIT "[initiator " T1 " " I1 "]\n"

START_TEST(test_initiator_sections)
{
	struct cfg c;
	const struct cfg_initiator *ci;

	cfg_init(&c);
	ck_assert_int_eq(cfg_load_string(&c, "tcqd.conf",
		TGT LUN0 LUN1 INIT "chap_user = host1\n"
		"chap_secret = host1-secret-1\nluns = 1:0:ro, 0:7\n"
		"[initiator " T1 " iqn.2026-11.org.tcq:host2]\nluns = none\n"
		"[initiator " T1 " iqn.2026-11.org.tcq:host3]\n"
		"luns = 0:Ro\n"), 0);
	ck_assert_int_eq(c.ninits, 3);
	ci = cfg_find_initiator(&c, T1, "IQN.2026-11.org.tcq:HOST1");
	ck_assert_ptr_nonnull(ci);
	ck_assert_str_eq(ci->chap.user, "host1");
	ck_assert_str_eq(ci->chap.secret, "host1-secret-1");
	ck_assert(ci->has_map);
	ck_assert_int_eq(ci->nmap, 2);
	ck_assert_uint_eq(ci->map[0].lun, 1);
	ck_assert_uint_eq(ci->map[0].as, 0);
	ck_assert(ci->map[0].ro);
	ck_assert_uint_eq(ci->map[1].lun, 0);
	ck_assert_uint_eq(ci->map[1].as, 7);
	ck_assert(!ci->map[1].ro);
	ci = cfg_find_initiator(&c, T1, "iqn.2026-11.org.tcq:host2");
	ck_assert(ci->has_map && ci->nmap == 0);
	ci = cfg_find_initiator(&c, T1, "iqn.2026-11.org.tcq:host3");
	ck_assert(ci->map[0].ro && ci->map[0].as == 0);
	ck_assert_ptr_null(cfg_find_initiator(&c, T1, "iqn.2026-11.org.tcq:x"));
	cfg_free(&c);
}
END_TEST

START_TEST(test_initiator_refusals)
{
	expect(TGT LUN0 "[initiator iqn.2026-11.org.tcq:other " I1 "]\n"
	       "luns = 0\n", 1, "tcqd.conf:4: [initiator "
	       "iqn.2026-11.org.tcq:other " I1 "]: unknown target "
	       "'iqn.2026-11.org.tcq:other' (no [target "
	       "iqn.2026-11.org.tcq:other] section)", NULL);
	expect(TGT LUN0 INIT "luns = 0,5\n", 1, "tcqd.conf:4: [initiator "
	       T1 " " I1 "]: luns: target " T1 " has no LUN 5", NULL);
	expect(TGT LUN0 LUN1 INIT "luns = 0:3,1:3\n", 1,
	       "tcqd.conf:7: bad value for 'luns': LUN 3 is mapped twice "
	       "(entries 1 and 2)", NULL);
	expect(TGT LUN0 LUN1 INIT "luns = 1:2,1:3\n", 1,
	       "tcqd.conf:7: bad value for 'luns': target LUN 1 is listed "
	       "twice (entries 1 and 2)", NULL);
	expect(TGT LUN0 INIT "luns = 256\n", 1,
	       "tcqd.conf:5: bad value for 'luns': '256': expected "
	       "N[:M][:ro] with LUN numbers 0..255", NULL);
	expect(TGT LUN0 INIT "luns = 0:1:ro:ro\n", 1,
	       "tcqd.conf:5: bad value for 'luns': '0:1:ro:ro': expected "
	       "N[:M][:ro] with LUN numbers 0..255", NULL);
	expect(TGT LUN0 INIT "luns = 0,,1\n", 1,
	       "tcqd.conf:5: bad value for 'luns': '': expected "
	       "N[:M][:ro] with LUN numbers 0..255", NULL);
	/* the target's own rule for a secret: 12..255 bytes */
	expect(TGT LUN0 INIT "chap_user = u\nchap_secret = 12345678901\n", 2,
	       "tcqd.conf:4: [initiator " T1 " " I1 "]: CHAP needs both "
	       "chap_user and chap_secret",
	       "tcqd.conf:6: bad value for 'chap_secret': a CHAP secret must "
	       "be 12..255 bytes long");
	expect(TGT LUN0 INIT INIT, 1, "tcqd.conf:5: duplicate [initiator "
	       T1 " " I1 "] (first defined earlier)", NULL);
	expect(TGT LUN0 "[initiator " T1 "]\n", 1, "tcqd.conf:4: bad section "
	       "header: expected [initiator TARGET-NAME INITIATOR-NAME]",
	       NULL);
	expect(TGT LUN0 "[initiator " T1 " iqn.2026-11.org.tcq:Host]\n", 1,
	       "tcqd.conf:4: bad initiator name: bad iSCSI name "
	       "'iqn.2026-11.org.tcq:Host': must be lower case", NULL);
	expect(TGT LUN0 INIT "alias = x\n", 1, "tcqd.conf:5: unknown key "
	       "'alias' in [initiator " T1 " " I1 "]", NULL);
}
END_TEST

START_TEST(test_syntax)
{
	expect(TGT LUN0 "[lun " T1 " 1\n", 1,
	       "tcqd.conf:4: syntax error: missing ']'", NULL);
	expect(TGT LUN0 "just words\n", 1,
	       "tcqd.conf:4: syntax error: expected key = value", NULL);
	expect(TGT LUN0 "[lun " T1 " 1] junk\npath=/x\n", 1,
	       "tcqd.conf:4: syntax error: text after ']'", NULL);
	{
		char text[600];

		snprintf(text, sizeof(text), TGT LUN0 "alias = %0300d\n", 1);
		expect(text, 1, "tcqd.conf:4: line too long (at most 197 characters)",
		       NULL);
	}
	/* CRLF line endings and a UTF-8 BOM are fine. */
	expect("\xef\xbb\xbf[target " T1 "]\r\n[lun " T1 " 0]\r\npath = /x\r\n"
	       "bogus = 1\r\n", 1,
	       "tcqd.conf:4: unknown key 'bogus' in [lun " T1 " 0]", NULL);
}
END_TEST

START_TEST(test_lun_checks)
{
	expect(TGT "[lun " T1 " 0]\npath = /x\nsize = 1000\n", 1,
	       "tcqd.conf:4: size 1000 is not a multiple of block_size 512", NULL);
	/* Checked at the end of the section, whatever the key order. */
	expect(TGT "[lun " T1 " 0]\nsize = 6K\npath = /x\nblock_size = 4096\n", 1,
	       "tcqd.conf:3: size 6144 is not a multiple of block_size 4096", NULL);
	expect(TGT "[lun " T1 " 0]\npath = /x\ncreate = yes\n", 1,
	       "tcqd.conf:2: create = yes needs a size", NULL);
	expect(TGT "[lun " T1 " 0]\nsize = 1M\n", 1,
	       "tcqd.conf:2: [lun " T1 " 0] has no path", NULL);
	/* An empty path is none (a cdrom's empty drive): a disk has no
	 * path then. */
	expect(TGT "[lun " T1 " 0]\npath =\n", 1,
	       "tcqd.conf:2: [lun " T1 " 0] has no path", NULL);
}
END_TEST

/* type = cdrom: keys a read-only 2048-byte disc has not are refused by
 * name, whatever their value; no path is an empty drive. */
START_TEST(test_cdrom_checks)
{
	static const char *const no[] = { "write_cache = yes", "thin = no",
					  "block_size = 512", "size = 1M",
					  "sanitize = no", "barrier = drain" };
	char text[256], msg[256], key[32];
	struct cfg c;

	for (size_t i = 0; i < sizeof(no) / sizeof(no[0]); i++) {
		snprintf(text, sizeof(text), TGT "[lun " T1 " 0]\ntype = cdrom"
			 "\npath = /x.iso\n%s\n", no[i]);
		sscanf(no[i], "%31s", key);
		snprintf(msg, sizeof(msg), "tcqd.conf:2: [lun " T1 " 0] type = "
			 "cdrom: %s does not apply (a read-only CD/DVD image)",
			 key);
		expect(text, 1, msg, NULL);
	}
	expect(TGT "[lun " T1 " 0]\ntype = cdrom\nread_only = no\n", 1,
	       "tcqd.conf:2: [lun " T1 " 0] type = cdrom: read_only = no: a "
	       "CD/DVD image is read-only", NULL);
	expect(TGT "[lun " T1 " 0]\ntype = cdrom\nremovable = no\n", 1,
	       "tcqd.conf:2: [lun " T1 " 0] type = cdrom: removable = no: a "
	       "CD/DVD drive's medium is removable", NULL);
	expect(TGT "[lun " T1 " 0]\ntype = tape\npath = /x\n", 1,
	       "tcqd.conf:3: bad value for 'type': 'tape' is not disk or "
	       "cdrom", NULL);
	/* an empty drive, read_only and removable as they are */
	cfg_init(&c);
	ck_assert_int_eq(cfg_load_string(&c, "tcqd.conf", TGT "[lun " T1
					 " 0]\ntype = cdrom\nread_only = yes\n"
					 "removable = yes\n"), 0);
	ck_assert_int_eq(c.nmsgs, 0);
	ck_assert_ptr_null(c.luns[0]->path);
	ck_assert_uint_eq(c.luns[0]->type, CFG_LUN_CDROM);
	cfg_free(&c);
}
END_TEST

START_TEST(test_warnings)
{
	expect(TGT "[lun " T1 " 1]\npath = /x\n", 0,
	       "tcqd.conf:1: warning: target '" T1 "' has no LUN 0; "
	       "some initiators look for it first", NULL);
	expect(TGT, 0, "tcqd.conf:1: warning: target '" T1 "' has no LUNs", NULL);
	expect("[global]\n", 0, "tcqd.conf: warning: no targets configured", NULL);
}
END_TEST

START_TEST(test_several_errors_sorted)
{
	struct cfg c;

	cfg_init(&c);
	ck_assert_int_eq(cfg_load_string(&c, "x.conf",
		"[lun iqn.2026-11.org.tcq:none 0]\npath=/x\n"
		"[global]\ncmd_window = x\nthreads = y\n"), -1);
	ck_assert_int_eq(c.nerrors, 3);
	ck_assert_int_eq(c.nmsgs, 4);	/* plus "no targets" */
	ck_assert_str_eq(c.msgs[0], "x.conf: warning: no targets configured");
	ck_assert(strncmp(c.msgs[1], "x.conf:1: LUN 0: unknown target", 31) == 0);
	ck_assert(strncmp(c.msgs[2], "x.conf:4: bad value for 'cmd_window'", 36) == 0);
	ck_assert(strncmp(c.msgs[3], "x.conf:5: bad value for 'threads'", 33) == 0);
	cfg_free(&c);
}
END_TEST

START_TEST(test_file)
{
	char path[] = "/tmp/tcq-test-config-XXXXXX";
	int fd = mkstemp(path);
	struct cfg c;
	FILE *f;

	ck_assert_int_ge(fd, 0);
	f = fdopen(fd, "w");
	ck_assert_ptr_nonnull(f);
	fputs(good, f);
	fputs("nonsense\n", f);
	fclose(f);
	cfg_init(&c);
	ck_assert_int_eq(cfg_load_file(&c, path), -1);
	ck_assert_int_eq(c.nmsgs, 1);
	ck_assert(strstr(c.msgs[0], ":42: syntax error: expected key = value"));
	ck_assert_int_eq(c.ntargets, 2);
	cfg_free(&c);
	unlink(path);

	cfg_init(&c);
	ck_assert_int_eq(cfg_load_file(&c, path), -1);
	ck_assert_int_eq(c.nerrors, 1);
	ck_assert(strstr(c.msgs[0], ": cannot open: No such file or directory"));
	cfg_free(&c);
}
END_TEST

START_TEST(test_value_parsers)
{
	char err[300];
	uint64_t v;
	bool b;

	ck_assert_int_eq(cfg_parse_size("0", &v, err, sizeof(err)), 0);
	ck_assert_uint_eq(v, 0);
	ck_assert_int_eq(cfg_parse_size("512", &v, err, sizeof(err)), 0);
	ck_assert_uint_eq(v, 512);
	ck_assert_int_eq(cfg_parse_size("3k", &v, err, sizeof(err)), 0);
	ck_assert_uint_eq(v, 3072);
	ck_assert_int_eq(cfg_parse_size("2GiB", &v, err, sizeof(err)), 0);
	ck_assert_uint_eq(v, 2ull << 30);
	ck_assert_int_eq(cfg_parse_size("5TB", &v, err, sizeof(err)), 0);
	ck_assert_uint_eq(v, 5ull << 40);
	ck_assert_int_lt(cfg_parse_size("", &v, err, sizeof(err)), 0);
	ck_assert_int_lt(cfg_parse_size("1.5G", &v, err, sizeof(err)), 0);
	ck_assert_int_lt(cfg_parse_size("G", &v, err, sizeof(err)), 0);
	ck_assert_int_lt(cfg_parse_size("1 G", &v, err, sizeof(err)), 0);
	ck_assert_int_lt(cfg_parse_size("1GG", &v, err, sizeof(err)), 0);
	ck_assert_int_lt(cfg_parse_size("16777216T", &v, err, sizeof(err)), 0);
	ck_assert_str_eq(err, "'16777216T' is too large");
	ck_assert_int_eq(cfg_parse_size("16777215T", &v, err, sizeof(err)), 0);
	ck_assert_uint_eq(v, 16777215ull << 40);

	ck_assert_int_eq(cfg_parse_uint("18446744073709551615", 0, UINT64_MAX,
					&v, err, sizeof(err)), 0);
	ck_assert_uint_eq(v, UINT64_MAX);
	ck_assert_int_lt(cfg_parse_uint("18446744073709551616", 0, UINT64_MAX,
					&v, err, sizeof(err)), 0);
	ck_assert_int_lt(cfg_parse_uint("+1", 0, 10, &v, err, sizeof(err)), 0);
	ck_assert_int_lt(cfg_parse_uint("", 0, 10, &v, err, sizeof(err)), 0);

	ck_assert_int_eq(cfg_parse_bool("YES", &b, err, sizeof(err)), 0);
	ck_assert(b);
	ck_assert_int_eq(cfg_parse_bool("off", &b, err, sizeof(err)), 0);
	ck_assert(!b);
	ck_assert_int_eq(cfg_parse_bool("0", &b, err, sizeof(err)), 0);
	ck_assert(!b);
	ck_assert_int_lt(cfg_parse_bool("y", &b, err, sizeof(err)), 0);
}
END_TEST

/* redirect = ADDR:PORT[,permanent]: RFC 7143 13.8's TargetAddress forms
 * (a DNS name, a dotted IPv4 address, a bracketed IPv6 address as RFC
 * 3986 writes it) with the port, which a redirect must carry here. */
static void redirect_ok(const char *v, const char *addr, bool perm)
{
	char a[TCQ_REDIRECT_MAX], err[300] = "";
	bool p = !perm;

	ck_assert_msg(cfg_parse_redirect(v, a, sizeof(a), &p, err,
					 sizeof(err)) == 0, "'%s': %s", v, err);
	ck_assert_str_eq(a, addr);
	ck_assert(p == perm);
}

static void redirect_bad(const char *v, const char *msg)
{
	char a[TCQ_REDIRECT_MAX], err[300] = "";
	bool p;

	ck_assert_msg(cfg_parse_redirect(v, a, sizeof(a), &p, err,
					 sizeof(err)) < 0, "'%s' accepted", v);
	ck_assert_str_eq(err, msg);
}

#define NOT_AN_ADDR "' is not an IPv4 address, a bracketed IPv6 address " \
		    "or a DNS name"

START_TEST(test_redirect)
{
	struct cfg c;

	redirect_ok("", "", false);
	redirect_ok("10.0.0.1:3260", "10.0.0.1:3260", false);
	redirect_ok("10.0.0.1:3260,permanent", "10.0.0.1:3260", true);
	redirect_ok("[fd00::1]:3261", "[fd00::1]:3261", false);
	redirect_ok("[::1]:1,permanent", "[::1]:1", true);
	redirect_ok("gw-2.Example.com:65535", "gw-2.Example.com:65535", false);
	redirect_ok("gw2:03260", "gw2:3260", false);	/* plain decimal */
	redirect_bad("10.0.0.1", "'10.0.0.1': no port (ADDR:PORT[,permanent])");
	redirect_bad("10.0.0.1,permanent",
		     "'10.0.0.1,permanent': no port (ADDR:PORT[,permanent])");
	redirect_bad("[fd00::1]", "'[fd00::1]': no port (ADDR:PORT[,permanent])");
	redirect_bad("10.0.0.1:0",
		     "'10.0.0.1:0': port '0' is out of range 1..65535");
	redirect_bad("10.0.0.1:65536",
		     "'10.0.0.1:65536': port '65536' is out of range 1..65535");
	redirect_bad("10.0.0.1:", "'10.0.0.1:': port '' is not a number");
	redirect_bad("10.0.0.1:32x", "'10.0.0.1:32x': port '32x' is not a number");
	redirect_bad("10.0.0.1:3260,temporary", "'10.0.0.1:3260,temporary': "
		     "after ADDR:PORT only ',permanent' may follow");
	redirect_bad("10.0.0.1:3260,", "'10.0.0.1:3260,': after ADDR:PORT "
		     "only ',permanent' may follow");
	redirect_bad("10.0.0.1:3260,1", "'10.0.0.1:3260,1': after ADDR:PORT "
		     "only ',permanent' may follow");
	redirect_bad(":3260", "'': no address before ':PORT'");
	redirect_bad("fd00::1:3260",
		     "'fd00::1': an IPv6 address goes in brackets, [ADDR]:PORT");
	redirect_bad("[fd00::zz]:3260",
		     "'[fd00::zz]' is not a bracketed IPv6 address");
	redirect_bad("256.0.0.1:3260", "'256.0.0.1' is not an IPv4 address");
	redirect_bad("10.0.1:3260", "'10.0.1' is not an IPv4 address");
	redirect_bad("-gw.example.com:3260", "'-gw.example.com" NOT_AN_ADDR);
	redirect_bad("gw-.example.com:3260", "'gw-.example.com" NOT_AN_ADDR);
	redirect_bad("gw..example.com:3260", "'gw..example.com" NOT_AN_ADDR);
	redirect_bad("gw_2:3260", "'gw_2" NOT_AN_ADDR);
	redirect_bad("gw 2:3260", "'gw 2" NOT_AN_ADDR);
	/* RFC 1123 2.1: a label has 63 bytes at most. */
	redirect_ok("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa:1",
		    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa:1",
		    false);
	redirect_bad("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa:1",
		     "'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
		     NOT_AN_ADDR);

	/* In a file: named by its key and line; kept normalised; empty is
	 * no redirect. */
	expect(TGT "redirect = 10.0.0.1\n" LUN0, 1, "tcqd.conf:2: bad value "
	       "for 'redirect': '10.0.0.1': no port (ADDR:PORT[,permanent])",
	       NULL);
	expect(TGT "redirect = 10.0.0.1:3260,perm\n" LUN0, 1, "tcqd.conf:2: "
	       "bad value for 'redirect': '10.0.0.1:3260,perm': after "
	       "ADDR:PORT only ',permanent' may follow", NULL);
	cfg_init(&c);
	ck_assert_int_eq(cfg_load_string(&c, "tcqd.conf", TGT "redirect = "
					 "[::1]:03261,permanent\n" LUN0), 0);
	ck_assert_str_eq(c.targets[0]->redirect, "[::1]:3261,permanent");
	cfg_free(&c);
	cfg_init(&c);
	ck_assert_int_eq(cfg_load_string(&c, "tcqd.conf", TGT "redirect =\n"
					 LUN0), 0);
	ck_assert_str_eq(c.targets[0]->redirect, "");
	cfg_free(&c);
}
END_TEST

START_TEST(test_by_hand)

{
	struct cfg c;
	char err[300];
	struct cfg_lun *l;

	cfg_init(&c);
	ck_assert_ptr_nonnull(cfg_add_target(&c, T1, err, sizeof(err)));
	ck_assert_ptr_null(cfg_add_target(&c, T1, err, sizeof(err)));
	ck_assert_str_eq(err, "duplicate target '" T1 "'");
	l = cfg_add_lun(&c, T1, 0, err, sizeof(err));
	ck_assert_ptr_nonnull(l);
	ck_assert_ptr_null(cfg_add_lun(&c, T1, 256, err, sizeof(err)));
	ck_assert_str_eq(err, "bad LUN number 256: must be 0..255");
	ck_assert_int_eq(cfg_add_listen(&c, "127.0.0.1:0", err, sizeof(err)), 0);
	/* Port 0 twice is fine: each gets its own port. */
	ck_assert_int_eq(cfg_add_listen(&c, "127.0.0.1:0", err, sizeof(err)), 0);
	ck_assert_int_eq(cfg_finish(&c, "command line"), 0);
	ck_assert_int_eq(c.nmsgs, 0);
	ck_assert_ptr_eq(c.targets[0]->luns[0], l);
	ck_assert_int_eq(c.nlisten, 2);
	cfg_free(&c);
}
END_TEST

static Suite *config_suite(void)
{
	Suite *s = suite_create("config");
	TCase *tc = tcase_create("parse");

	harness_add(tc, test_valid);
	harness_add(tc, test_defaults);
	harness_add(tc, test_unknown_key);
	harness_add(tc, test_bad_values);
	harness_add(tc, test_names);
	harness_add(tc, test_name_check);
	harness_add(tc, test_sections);
	harness_add(tc, test_initiator_sections);
	harness_add(tc, test_initiator_refusals);
	harness_add(tc, test_syntax);
	harness_add(tc, test_lun_checks);
	harness_add(tc, test_cdrom_checks);
	harness_add(tc, test_warnings);
	harness_add(tc, test_several_errors_sorted);
	harness_add(tc, test_file);
	harness_add(tc, test_value_parsers);
	harness_add(tc, test_redirect);
	harness_add(tc, test_by_hand);
	suite_add_tcase(s, tc);
	return s;
}

int main(int argc, char **argv)
{
	return harness_main(argc, argv, config_suite);
}
