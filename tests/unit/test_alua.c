/* Implicit ALUA (scsi/alua.c): the tpg syntax, REPORT TARGET PORT GROUPS
 * data, the standby/unavailable rules through the device server, and the
 * configuration keys (tpg_id, rel_port_id, tpg, serial). */
#include <check.h>
#include <stdlib.h>
#include <string.h>
#include "tcq/byteorder.h"
#include "tcq/scsi_proto.h"
#include "scsi/alua.h"
#include "scsi/cdb.h"
#include "scsi/lun.h"
#include "scsi/opcodes.h"
#include "target/config.h"
#include "tests/unit/harness.h"

static char err[300];

/* Three gateways: group 1 (port 1) preferred, 2 (ports 2, 4) second
 * choice, 3 (port 3) standby. */
static void three_groups(struct alua_cfg *a, uint16_t tpg, uint16_t port)
{
	memset(a, 0, sizeof(*a));
	a->tpg_id = tpg;
	a->rel_port_id = port;
	ck_assert_int_eq(alua_add_group(a, "1:active-optimized:1", err,
					sizeof(err)), 0);
	ck_assert_int_eq(alua_add_group(a, "2:ano:2,4", err, sizeof(err)), 0);
	ck_assert_int_eq(alua_add_group(a, "3:standby:3", err, sizeof(err)), 0);
	ck_assert_int_eq(alua_finish(a, err, sizeof(err)), 0);
}

START_TEST(parse_groups)
{
	struct alua_cfg a = { 0 };
	uint8_t st;

	ck_assert_int_eq(alua_parse_state("Active-Non-Optimized", &st), 0);
	ck_assert_uint_eq(st, ALUA_ACTIVE_NON_OPTIMIZED);
	ck_assert_int_eq(alua_parse_state("unavailable", &st), 0);
	ck_assert_uint_eq(st, ALUA_UNAVAILABLE);
	ck_assert_int_eq(alua_parse_state("offline", &st), -1);
	ck_assert_str_eq(alua_state_name(ALUA_STANDBY), "standby");
	ck_assert_ptr_null(alua_state_name(9));

	ck_assert_int_eq(alua_add_group(&a, "7:standby:65535,2", err,
					sizeof(err)), 0);
	ck_assert_uint_eq(a.ngroups, 1);
	ck_assert_uint_eq(a.groups[0].id, 7);
	ck_assert_uint_eq(a.groups[0].state, ALUA_STANDBY);
	ck_assert_uint_eq(a.groups[0].nports, 2);
	ck_assert_uint_eq(a.groups[0].ports[0], 65535);
	ck_assert_uint_eq(a.groups[0].ports[1], 2);

	static const char *const bad[] = {
		"", "1", "1:ao", "0:ao:1", "65536:ao:1", "1:fast:1", "1:ao:",
		"1:ao:1,", "1:ao:0", "1:ao:1,,2", "1:ao:x", "1:ao:1,1",
		"-1:ao:1", "1:ao:1:2", "7:ao:3",	/* group 7 exists */
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = 0;
		ck_assert_msg(alua_add_group(&a, bad[i], err, sizeof(err)) == -1,
			      "'%s' accepted", bad[i]);
		ck_assert_msg(err[0], "no message for '%s'", bad[i]);
	}
	ck_assert_uint_eq(a.ngroups, 1);
	ck_assert_int_eq(alua_add_group(&a, "8:ao:1,2,3,4,5,6,7,8,9,10,11,"
					"12,13,14,15,16,17", err, sizeof(err)),
			 -1);
	ck_assert_ptr_nonnull(strstr(err, "more than 16 ports"));
}
END_TEST

START_TEST(finish_rules)
{
	struct alua_cfg a = { 0 };

	/* Nothing configured: one active/optimized group 1 of port 1. */
	ck_assert_int_eq(alua_finish(&a, err, sizeof(err)), 0);
	ck_assert_uint_eq(a.tpg_id, 1);
	ck_assert_uint_eq(a.rel_port_id, 1);
	ck_assert_uint_eq(a.ngroups, 1);
	ck_assert_uint_eq(a.groups[0].state, ALUA_ACTIVE_OPTIMIZED);
	ck_assert_uint_eq(a.groups[0].ports[0], 1);

	memset(&a, 0, sizeof(a));
	a.tpg_id = 5;
	a.rel_port_id = 9;
	ck_assert_int_eq(alua_finish(&a, err, sizeof(err)), 0);
	ck_assert_uint_eq(a.groups[0].id, 5);
	ck_assert_uint_eq(a.groups[0].ports[0], 9);

	/* This gateway's group must be listed and hold its port. */
	memset(&a, 0, sizeof(a));
	a.tpg_id = 2;
	ck_assert_int_eq(alua_add_group(&a, "1:ao:1", err, sizeof(err)), 0);
	ck_assert_int_eq(alua_finish(&a, err, sizeof(err)), -1);
	ck_assert_str_eq(err, "tpg_id 2 is not among the tpg groups");
	memset(&a, 0, sizeof(a));
	a.rel_port_id = 2;
	ck_assert_int_eq(alua_add_group(&a, "1:ao:1", err, sizeof(err)), 0);
	ck_assert_int_eq(alua_finish(&a, err, sizeof(err)), -1);
	ck_assert_str_eq(err, "rel_port_id 2 is not a port of target port group 1");
	/* A port in two groups. */
	memset(&a, 0, sizeof(a));
	ck_assert_int_eq(alua_add_group(&a, "1:ao:1,3", err, sizeof(err)), 0);
	ck_assert_int_eq(alua_add_group(&a, "2:ano:2,3", err, sizeof(err)), 0);
	ck_assert_int_eq(alua_finish(&a, err, sizeof(err)), -1);
	ck_assert_str_eq(err, "relative port 3 is in groups 1 and 2");
}
END_TEST

/* The target port group descriptors of three_groups (SPC-4 6.37,
 * table 285): PREF/ASYMMETRIC ACCESS STATE, the supported states (AO AN
 * S U), the group, its port count, then a relative port per 4 bytes. */
static const uint8_t groups[] = {
	/* group 1: PREF, AO; supports AO AN S U; port 1 */
	0x80, 0x0f, 0x00, 0x01, 0, 0, 0, 1, 0, 0, 0x00, 0x01,
	/* group 2: ANO; ports 2 and 4 */
	0x01, 0x0f, 0x00, 0x02, 0, 0, 0, 2, 0, 0, 0x00, 0x02,
	0, 0, 0x00, 0x04,
	/* group 3: standby; port 3 */
	0x02, 0x0f, 0x00, 0x03, 0, 0, 0, 1, 0, 0, 0x00, 0x03,
};

START_TEST(rtpg_encoding)
{
	struct alua_cfg a;
	uint8_t buf[256];

	three_groups(&a, 3, 3);
	memset(buf, 0xee, sizeof(buf));
	uint32_t n = alua_encode_rtpg(&a, ALUA_RTPG_LENGTH, buf, sizeof(buf));
	ck_assert_uint_eq(n, 4 + sizeof(groups));
	ck_assert_uint_eq(get_be32(buf), sizeof(groups));
	ck_assert_mem_eq(buf + 4, groups, sizeof(groups));
	ck_assert_uint_eq(buf[n], 0xee);

	memset(buf, 0xee, sizeof(buf));
	n = alua_encode_rtpg(&a, ALUA_RTPG_EXTENDED, buf, sizeof(buf));
	ck_assert_uint_eq(n, 8 + sizeof(groups));
	ck_assert_uint_eq(get_be32(buf), 4 + sizeof(groups));
	ck_assert_uint_eq(buf[4], 0x10);	/* FORMAT TYPE 001b */
	ck_assert_uint_eq(buf[5], 0);
	ck_assert_uint_eq(get_be16(buf + 6), 0);
	ck_assert_mem_eq(buf + 8, groups, sizeof(groups));

	/* Truncated to cap, full length returned. */
	memset(buf, 0xee, sizeof(buf));
	n = alua_encode_rtpg(&a, ALUA_RTPG_LENGTH, buf, 6);
	ck_assert_uint_eq(n, 4 + sizeof(groups));
	ck_assert_uint_eq(buf[4], 0x80);
	ck_assert_uint_eq(buf[6], 0xee);

	/* Every gateway of the target reports the same groups. */
	struct alua_cfg b;
	uint8_t other[256];
	three_groups(&b, 1, 1);
	n = alua_encode_rtpg(&b, ALUA_RTPG_LENGTH, other, sizeof(other));
	alua_encode_rtpg(&a, ALUA_RTPG_LENGTH, buf, sizeof(buf));
	ck_assert_mem_eq(buf, other, n);
}
END_TEST

/* The rule for the row of op/sa in the command table. */
static uint16_t check(uint8_t state, uint8_t op, uint8_t sa)
{
	const struct opc_entry *e = opc_find(op, sa, OPC_FEAT_ALL);

	ck_assert_ptr_nonnull(e);
	return alua_check(state, e);
}

/* 04h/0Bh LOGICAL UNIT NOT ACCESSIBLE, TARGET PORT IN STANDBY STATE and
 * 04h/0Ch ... IN UNAVAILABLE STATE (SPC-4 5.15.2.4.4-5). */
START_TEST(access_rules)
{
	/* Active states run everything. */
	ck_assert_uint_eq(check(ALUA_ACTIVE_OPTIMIZED, SOP_WRITE_10, 0), 0);
	ck_assert_uint_eq(check(ALUA_ACTIVE_NON_OPTIMIZED, SOP_READ_16, 0),
			  0);
	/* Standby: reports, mode pages and reservations only. */
	ck_assert_uint_eq(check(ALUA_STANDBY, SOP_READ_10, 0),
			  0x040b);
	ck_assert_uint_eq(check(ALUA_STANDBY, SOP_TEST_UNIT_READY, 0),
			  0x040b);
	ck_assert_uint_eq(check(ALUA_STANDBY, SOP_SYNC_CACHE_10, 0),
			  0x040b);
	ck_assert_uint_eq(check(ALUA_STANDBY, SOP_INQUIRY, 0), 0);
	ck_assert_uint_eq(check(ALUA_STANDBY, SOP_MODE_SENSE_10, 0), 0);
	ck_assert_uint_eq(check(ALUA_STANDBY, SOP_PERSISTENT_RESERVE_OUT,
				     0), 0);
	ck_assert_uint_eq(check(ALUA_STANDBY, SOP_MAINTENANCE_IN,
				     MI_REPORT_TARGET_PORT_GROUPS), 0);
	/* Unavailable: not even mode pages or reservations. */
	ck_assert_uint_eq(check(ALUA_UNAVAILABLE, SOP_MODE_SENSE_6, 0),
			  0x040c);
	ck_assert_uint_eq(check(ALUA_UNAVAILABLE,
				     SOP_PERSISTENT_RESERVE_IN, 0),
			  0x040c);
	ck_assert_uint_eq(check(ALUA_UNAVAILABLE, SOP_WRITE_16, 0),
			  0x040c);
	ck_assert_uint_eq(check(ALUA_UNAVAILABLE, SOP_REPORT_LUNS, 0), 0);
	ck_assert_uint_eq(check(ALUA_UNAVAILABLE, SOP_REQUEST_SENSE, 0), 0);
}
END_TEST

START_TEST(decode_rtpg)
{
	uint8_t cdb[16] = { SOP_MAINTENANCE_IN, MI_REPORT_TARGET_PORT_GROUPS };
	struct cdb_req req;
	struct sense_info si;

	put_be32(cdb + 6, 0x1234);
	ck_assert_int_eq(cdb_decode(cdb, 16, 512, &req, &si), 0);
	ck_assert_uint_eq(req.sa, MI_REPORT_TARGET_PORT_GROUPS);
	ck_assert_uint_eq(req.flags, ALUA_RTPG_LENGTH);
	ck_assert_uint_eq(req.alloc_len, 0x1234);
	ck_assert_uint_eq(req.data_in_len, 0x1234);
	cdb[1] = 0x20 | MI_REPORT_TARGET_PORT_GROUPS;
	ck_assert_int_eq(cdb_decode(cdb, 16, 512, &req, &si), 0);
	ck_assert_uint_eq(req.flags, ALUA_RTPG_EXTENDED);
	/* Formats 010b..111b are reserved. */
	cdb[1] = 0x40 | MI_REPORT_TARGET_PORT_GROUPS;
	ck_assert_int_eq(cdb_decode(cdb, 16, 512, &req, &si), -1);
	ck_assert_uint_eq(si.asc, ASC_INVALID_FIELD_IN_CDB);
	ck_assert_uint_eq(si.field, 1);
	ck_assert_int_eq(si.bit, 7);
	cdb[1] = MI_REPORT_TARGET_PORT_GROUPS;
	cdb[4] = 1;	/* reserved */
	ck_assert_int_eq(cdb_decode(cdb, 16, 512, &req, &si), -1);
	ck_assert_uint_eq(si.field, 4);
	cdb[4] = 0;
	cdb[10] = 0x80;
	ck_assert_int_eq(cdb_decode(cdb, 16, 512, &req, &si), -1);
	ck_assert_uint_eq(si.field, 10);

	/* SET TARGET PORT GROUPS: implicit ALUA only, not supported. */
	uint8_t set[16] = { SOP_MAINTENANCE_OUT, MO_SET_TARGET_PORT_GROUPS };
	ck_assert_int_eq(cdb_decode(set, 16, 512, &req, &si), -1);
	ck_assert_uint_eq(si.key, SK_ILLEGAL_REQUEST);
	ck_assert_uint_eq(si.asc, ASC_INVALID_COMMAND_OPERATION_CODE);
	ck_assert_ptr_nonnull(opc_find(SOP_MAINTENANCE_IN,
				       MI_REPORT_TARGET_PORT_GROUPS, 0));
	ck_assert_ptr_null(opc_find(SOP_MAINTENANCE_OUT,
				    MO_SET_TARGET_PORT_GROUPS, 0));
}
END_TEST

/* ---- through the device server ----------------------------------------- */

static struct harness_lun H;
static struct alua_cfg cfg;

/* Runs a Data-In (or no data) command on the nexus. */
static struct cmd *run(const uint8_t *cdb, uint32_t in_len)
{
	return run_cdb(&H, 0, cdb, 16, NULL, 0, in_len);
}

/* A LUN of this gateway (tpg, port) of the three groups; the nexus's
 * POWER ON unit attention taken. */
static void ds_setup(uint16_t tpg, uint16_t port)
{
	harness_lun_open(&H, "ram", 1 << 20);
	three_groups(&cfg, tpg, port);
	alua_lun_apply(H.lun, &cfg);
	harness_nexus_join(&H, 1);
}

static void ds_teardown(void)
{
	harness_lun_teardown(&H);
}

/* Finds designator type in VPD page 83h data; NULL if absent. */
static const uint8_t *find_desig(const uint8_t *p, uint32_t len, uint8_t type)
{
	for (uint32_t off = 4; off + 4 <= len; off += 4u + p[off + 3])
		if ((p[off + 1] & 0x0f) == type)
			return p + off;
	return NULL;
}

START_TEST(standby_port)
{
	uint8_t read10[16] = { SOP_READ_10, 0, 0, 0, 0, 0, 0, 0, 1 };
	uint8_t tur[16] = { SOP_TEST_UNIT_READY };
	uint8_t inq[16] = { SOP_INQUIRY, 0, 0, 0, 96 };
	uint8_t vpd83[16] = { SOP_INQUIRY, 1, 0x83, 0, 255 };
	uint8_t rtpg[16] = { SOP_MAINTENANCE_IN,
			     0x20 | MI_REPORT_TARGET_PORT_GROUPS };
	uint8_t expect[256];
	struct cmd *c;

	ds_setup(3, 3);
	ck_assert_uint_eq(H.lun->alua_state, ALUA_STANDBY);
	ck_assert_uint_eq(H.lun->tpg_id, 3);
	ck_assert_uint_eq(H.lun->rel_port_id, 3);
	EXPECT_SENSE(run(tur, 0), SK_NOT_READY, 0x04, 0x0b);
	/* LOGICAL UNIT NOT ACCESSIBLE, TARGET PORT IN STANDBY STATE */
	EXPECT_SENSE(run(read10, 512), SK_NOT_READY, 0x04, 0x0b);

	c = run(inq, 96);
	EXPECT_GOOD(c);
	ck_assert_uint_eq(((uint8_t *)c->t.buf)[5] & 0x30, 0x10);	/* TPGS */

	c = run(vpd83, 255);
	EXPECT_GOOD(c);
	const uint8_t *d = find_desig(c->t.buf, c->t.data_in_len, 0x4);
	ck_assert_ptr_nonnull(d);
	ck_assert_uint_eq(d[1] & 0x30, 0x10);	/* target port */
	ck_assert_uint_eq(get_be16(d + 6), 3);
	d = find_desig(c->t.buf, c->t.data_in_len, 0x5);
	ck_assert_ptr_nonnull(d);
	ck_assert_uint_eq(get_be16(d + 6), 3);

	put_be32(rtpg + 6, 255);
	c = run(rtpg, 255);
	EXPECT_GOOD(c);
	uint32_t n = alua_encode_rtpg(&cfg, ALUA_RTPG_EXTENDED, expect,
				      sizeof(expect));
	ck_assert_uint_eq(c->t.data_in_len, n);
	ck_assert_mem_eq(c->t.buf, expect, n);
	/* Extended header (FORMAT TYPE 001b), then the groups as SPC-4
	 * lays them out. */
	ck_assert_uint_eq(n, 8 + sizeof(groups));
	ck_assert_uint_eq(get_be32(cmd_data(c)), 4 + sizeof(groups));
	ck_assert_uint_eq(cmd_data(c)[4], 0x10);
	ck_assert_mem_eq(cmd_data(c) + 8, groups, sizeof(groups));

	/* Allocation length cuts the data, not the length field. */
	put_be32(rtpg + 6, 10);
	c = run(rtpg, 255);
	EXPECT_GOOD(c);
	ck_assert_uint_eq(c->t.data_in_len, 10);
	ck_assert_uint_eq(get_be32(c->t.buf), n - 4);
	ds_teardown();
}
END_TEST

START_TEST(active_port)
{
	uint8_t read10[16] = { SOP_READ_10, 0, 0, 0, 0, 0, 0, 0, 1 };
	uint8_t rtpg[16] = { SOP_MAINTENANCE_IN, MI_REPORT_TARGET_PORT_GROUPS,
			     0, 0, 0, 0, 0, 0, 1, 0 };
	uint8_t expect[256];
	struct cmd *c;

	ds_setup(2, 4);
	ck_assert_uint_eq(H.lun->alua_state, ALUA_ACTIVE_NON_OPTIMIZED);
	c = run(read10, 512);
	EXPECT_GOOD(c);
	c = run(rtpg, 256);
	EXPECT_GOOD(c);
	uint32_t n = alua_encode_rtpg(&cfg, ALUA_RTPG_LENGTH, expect,
				      sizeof(expect));
	ck_assert_uint_eq(c->t.data_in_len, n);
	ck_assert_mem_eq(c->t.buf, expect, n);
	ck_assert_uint_eq(n, 4 + sizeof(groups));
	ck_assert_mem_eq(cmd_data(c) + 4, groups, sizeof(groups));
	ds_teardown();
}
END_TEST

START_TEST(unavailable_port)
{
	uint8_t ms[16] = { SOP_MODE_SENSE_6, 0, 0x3f, 0, 255 };
	uint8_t luns[16] = { SOP_REPORT_LUNS, 0, 0, 0, 0, 0, 0, 0, 1, 0 };
	struct cmd *c;

	ds_setup(1, 1);
	cfg.groups[0].state = ALUA_UNAVAILABLE;
	alua_lun_apply(H.lun, &cfg);
	EXPECT_SENSE(run(ms, 255), SK_NOT_READY, 0x04, 0x0c);
	/* LOGICAL UNIT NOT ACCESSIBLE, TARGET PORT IN UNAVAILABLE STATE */
	c = run(luns, 256);
	EXPECT_GOOD(c);
	ds_teardown();
}
END_TEST

/* ---- configuration -------------------------------------------------------- */

#define T1 "iqn.2026-11.org.tcq:shared"

START_TEST(config_keys)
{
	struct cfg c;
	static const char text[] =
		"[target " T1 "]\n"
		"tpg_id = 2\n"
		"rel_port_id = 2\n"
		"tpg = 1:active-optimized:1\n"
		"tpg = 2:active-non-optimized:2\n"
		"[lun " T1 " 0]\n"
		"backend = null\n"
		"size = 1M\n"
		"serial = gw-shared-0001\n";

	cfg_init(&c);
	ck_assert_int_eq(cfg_load_string(&c, "t.conf", text), 0);
	ck_assert_int_eq(c.ntargets, 1);
	const struct cfg_target *t = c.targets[0];
	ck_assert_uint_eq(t->alua.tpg_id, 2);
	ck_assert_uint_eq(t->alua.rel_port_id, 2);
	ck_assert_uint_eq(t->alua.ngroups, 2);
	ck_assert_uint_eq(t->alua.groups[1].state, ALUA_ACTIVE_NON_OPTIMIZED);
	ck_assert(!t->tpgt_set);
	ck_assert_str_eq(c.luns[0]->serial, "gw-shared-0001");
	cfg_free(&c);

	static const struct {
		const char *text, *msg;
	} bad[] = {
		{ "[target " T1 "]\ntpg = 1:ao\n",
		  "t.conf:2: bad value for 'tpg': '1:ao' is not ID:STATE:PORT[,PORT...]" },
		{ "[target " T1 "]\ntpg_id = 0\n",
		  "t.conf:2: bad value for 'tpg_id': '0' is out of range 1..65535" },
		{ "[target " T1 "]\ntpg_id = 3\ntpg = 1:ao:1\n",
		  "t.conf:1: [target " T1 "]: tpg_id 3 is not among the tpg groups" },
		{ "[target " T1 "]\n[lun " T1 " 0]\nbackend = null\nsize = 1M\n"
		  "serial = has space\n",
		  "t.conf:5: bad value for 'serial': 'has space': a serial number is printable ASCII without spaces" },
		{ "[target " T1 "]\n[lun " T1 " 0]\nbackend = null\nsize = 1M\n"
		  "serial = 0123456789abcdef0123456789abcdef0\n",
		  "t.conf:5: bad value for 'serial': a serial number must be 1..32 characters" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		cfg_init(&c);
		ck_assert_int_eq(cfg_load_string(&c, "t.conf", bad[i].text), -1);
		bool found = false;
		for (int m = 0; m < c.nmsgs; m++)
			found |= !strcmp(c.msgs[m], bad[i].msg);
		ck_assert_msg(found, "case %zu: no '%s' (first: '%s')", i,
			      bad[i].msg, c.nmsgs ? c.msgs[0] : "");
		cfg_free(&c);
	}
}
END_TEST

/* cfg_build: identity, ALUA and the transfer limit (its one home, the
 * target's sdev) reach the target and its LUNs. */
START_TEST(config_build)
{
	struct cfg c;
	static const char text[] =
		"[global]\nlisten = 127.0.0.1:0\n"
		"max_transfer_length = 64K\n"
		"[target " T1 "]\n"
		"tpg_id = 3\n"
		"rel_port_id = 3\n"
		"tpg = 1:ao:1\n"
		"tpg = 3:standby:3\n"
		"[lun " T1 " 0]\n"
		"backend = null\n"
		"size = 1M\n"
		"serial = gw-shared-0001\n";
	char e[300];

	cfg_init(&c);
	ck_assert_int_eq(cfg_load_string(&c, "t.conf", text), 0);
	struct tcqd *d = cfg_build(&c, e, sizeof(e));
	ck_assert_msg(d != NULL, "%s", e);
	struct target *t = d->targets[0];
	struct lun *l = t->dev.luns[0];
	ck_assert_uint_eq(t->dev.tpgt, 3);		/* from rel_port_id */
	ck_assert_uint_eq(t->dev.max_xfer_len, 65536);
	ck_assert_uint_eq(d->portals[0]->tpgt, 3);
	ck_assert_uint_eq(l->tpg_id, 3);
	ck_assert_uint_eq(l->rel_port_id, 3);
	ck_assert_uint_eq(l->alua_state, ALUA_STANDBY);
	ck_assert_ptr_eq(l->alua, &t->dev.alua);
	ck_assert_str_eq(l->serial, "gw-shared-0001");
	uint8_t naa[16];
	memcpy(naa, l->naa, 16);
	ck_assert_uint_eq(naa[0] >> 4, 6);
	cfg_destroy_tcqd(d);
	cfg_free(&c);

	/* Another gateway with the same serial under another name: the
	 * same NAA. A LUN without a serial gets a different one. */
	struct lun *l2 = harness_lun_create(NULL, 0, NULL);
	ck_assert_ptr_nonnull(l2);
	ck_assert(memcmp(l2->naa, naa, 16) != 0);
	lun_set_serial(l2, "gw-shared-0001");
	ck_assert_mem_eq(l2->naa, naa, 16);
	ck_assert_str_eq(l2->serial, "gw-shared-0001");
	lun_destroy(l2);
}
END_TEST

static Suite *alua_suite(void)
{
	Suite *s = suite_create("alua");
	TCase *tc = tcase_create("core");

	harness_add(tc, parse_groups);
	harness_add(tc, finish_rules);
	harness_add(tc, rtpg_encoding);
	harness_add(tc, access_rules);
	harness_add(tc, decode_rtpg);
	harness_add(tc, standby_port);
	harness_add(tc, active_port);
	harness_add(tc, unavailable_port);
	harness_add(tc, config_keys);
	harness_add(tc, config_build);
	suite_add_tcase(s, tc);
	return s;
}

int main(int argc, char **argv)
{
	return harness_main(argc, argv, alua_suite);
}
