/* Unit tests of [global] isns (target/config_value.c cfg_parse_isns, its
 * key in target/config_keys.c): the values taken and each refusal's
 * message, alone and in a file. A file of its own: test_config.c is at
 * its length limit. */
#include <check.h>
#include <stdio.h>
#include <string.h>
#include "target/config.h"
#include "tests/unit/harness.h"

#define T1 "iqn.2026-12.org.tcq:isns"
#define TGT_LUN0 "[target " T1 "]\n[lun " T1 " 0]\npath = /x\n"

/* A [global] line the file refuses, with exactly msg. */
static void file_refuses(const char *line, const char *msg)
{
	char text[512];
	struct cfg c;

	snprintf(text, sizeof(text), "[global]\n%s\n" TGT_LUN0, line);
	cfg_init(&c);
	ck_assert_int_eq(cfg_load_string(&c, "tcqd.conf", text), -1);
	ck_assert_int_eq(c.nerrors, 1);
	ck_assert_str_eq(c.msgs[0], msg);
	cfg_free(&c);
}

/* One isns value: accepted as host and port, or refused with msg. */
static void isns_case(const char *v, const char *host, unsigned port,
		      const char *msg)
{
	char h[TCQ_NAME_MAX], err[300] = "";
	uint16_t p = 0;
	int rc = cfg_parse_isns(v, h, sizeof(h), &p, err, sizeof(err));

	if (msg) {
		ck_assert_msg(rc < 0, "isns '%s' taken", v);
		ck_assert_str_eq(err, msg);
		return;
	}
	ck_assert_msg(rc == 0, "isns '%s' refused: %s", v, err);
	ck_assert_str_eq(h, host);
	ck_assert_uint_eq(p, port);
}

/* [global] isns: RFC 4171's port 3205 when none is given, TCP's 1..65535
 * otherwise; HOST as redirect's ADDR (RFC 1123 labels, a dotted IPv4
 * address, an IPv6 address in brackets as RFC 3986 3.2.2 writes it);
 * "off" or empty: none. */
#define NOT_HOST "' is not an IPv4 address, a bracketed IPv6 address or " \
		 "a DNS name"

START_TEST(isns_key_takes_host_port_and_refuses_by_name)
{
	isns_case("isns.example.com", "isns.example.com", 3205, NULL);
	isns_case("192.0.2.1:3206", "192.0.2.1", 3206, NULL);
	isns_case("[2001:db8::1]:65535", "2001:db8::1", 65535, NULL);
	isns_case("[::1]", "::1", 3205, NULL);
	isns_case("a-b.c9:1", "a-b.c9", 1, NULL);
	isns_case("off", "", 3205, NULL);
	isns_case("", "", 3205, NULL);
	isns_case("h:0", NULL, 0, "'h:0': port '0' is out of range 1..65535");
	isns_case("h:65536", NULL, 0,
		  "'h:65536': port '65536' is out of range 1..65535");
	isns_case("h:x", NULL, 0, "'h:x': port 'x' is not a number");
	isns_case("h:", NULL, 0, "'h:': port '' is not a number");
	isns_case(":3205", NULL, 0, "'': no address before ':PORT'");
	isns_case("2001:db8::1", NULL, 0, "'2001:db8::1': an IPv6 address goes "
		  "in brackets, [ADDR]:PORT");
	isns_case("[::1", NULL, 0, "'[::1' is not a bracketed IPv6 address");
	isns_case("[zz::1]", NULL, 0, "'[zz::1]' is not a bracketed IPv6 address");
	isns_case("[]:1", NULL, 0, "'[]' is not a bracketed IPv6 address");
	isns_case("[::1]x", NULL, 0, "'[::1]x': only :PORT may follow [ADDR]");
	isns_case("256.1.1.1", NULL, 0, "'256.1.1.1' is not an IPv4 address");
	isns_case("1.2.3", NULL, 0, "'1.2.3' is not an IPv4 address");
	isns_case("bad_host", NULL, 0, "'bad_host" NOT_HOST);
	isns_case("-a.b", NULL, 0, "'-a.b" NOT_HOST);
	isns_case("a-.b", NULL, 0, "'a-.b" NOT_HOST);
	isns_case("a..b", NULL, 0, "'a..b" NOT_HOST);
	isns_case("a b", NULL, 0, "'a b" NOT_HOST);
	file_refuses("isns = 192.0.2.1:70000", "tcqd.conf:2: bad value for "
		     "'isns': '192.0.2.1:70000': port '70000' is out of range "
		     "1..65535");
	file_refuses("isns = [::1", "tcqd.conf:2: bad value for 'isns': "
		     "'[::1' is not a bracketed IPv6 address");
}
END_TEST

/* No key: no iSNS; a good one is kept as written. */
START_TEST(isns_default_off_and_kept_as_written)
{
	struct cfg c;

	cfg_init(&c);
	ck_assert_int_eq(cfg_load_string(&c, "d.conf", TGT_LUN0), 0);
	ck_assert_str_eq(c.set.isns, "");
	cfg_free(&c);
	cfg_init(&c);
	ck_assert_int_eq(cfg_load_string(&c, "d.conf", "[global]\nisns = "
					 "[::1]:3206\n" TGT_LUN0), 0);
	ck_assert_str_eq(c.set.isns, "[::1]:3206");
	cfg_free(&c);
	cfg_init(&c);
	ck_assert_int_eq(cfg_load_string(&c, "d.conf", "[global]\nisns = off\n"
					 TGT_LUN0), 0);
	ck_assert_str_eq(c.set.isns, "");
	cfg_free(&c);
}
END_TEST

static Suite *isns_suite(void)
{
	Suite *s = suite_create("config_isns");
	TCase *tc = tcase_create("isns");

	harness_add(tc, isns_key_takes_host_port_and_refuses_by_name);
	harness_add(tc, isns_default_off_and_kept_as_written);
	suite_add_tcase(s, tc);
	return s;
}

int main(int argc, char **argv)
{
	return harness_main(argc, argv, isns_suite);
}
