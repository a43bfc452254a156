/*
 * The values of tcqd.conf and of the command line: numbers, sizes,
 * booleans, the few words some keys take, serial numbers and iSCSI names.
 * Each parser gives 0, or -1 with a message in err that quotes the value.
 */
#include <config.h>	/* autoconf's (HAVE_LIBURING) */
#include <arpa/inet.h>
#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include "target/config.h"

int cfg_parse_uint(const char *s, uint64_t min, uint64_t max, uint64_t *out,
		   char *err, size_t errlen)
{
	uint64_t v = 0;
	const char *p = s;

	if (!*p)
		goto nan;
	for (; *p; p++) {
		if (*p < '0' || *p > '9')
			goto nan;
		unsigned d = (unsigned)(*p - '0');

		if (v > (UINT64_MAX - d) / 10)
			goto range;
		v = v * 10 + d;
	}
	if (v < min || v > max)
		goto range;
	*out = v;
	return 0;
nan:
	snprintf(err, errlen, "'%s' is not a number", s);
	return -1;
range:
	snprintf(err, errlen, "'%s' is out of range %llu..%llu", s,
		 (unsigned long long)min, (unsigned long long)max);
	return -1;
}

int cfg_parse_choice(const char *s, const char *const *words, unsigned n,
		     unsigned *out, char *err, size_t errlen)
{
	size_t len;

	for (unsigned i = 0; i < n; i++) {
		if (strcasecmp(s, words[i]) == 0) {
			*out = i;
			return 0;
		}
	}
	/* "'x' is not a, b or c" */
	len = (size_t)snprintf(err, errlen, "'%s' is not ", s);
	for (unsigned i = 0; i < n && len < errlen; i++)
		len += (size_t)snprintf(err + len, errlen - len, "%s%s",
					i == 0 ? "" : i + 1 == n ? " or " : ", ",
					words[i]);
	return -1;
}

int cfg_parse_barrier(const char *s, uint8_t *out, char *err, size_t errlen)
{
	/* In enum lun_barrier order (scsi/lun.h). */
	static const char *const names[] = { "drain", "flush", "ignore" };
	unsigned i;

	if (cfg_parse_choice(s, names, 3, &i, err, errlen) < 0)
		return -1;
	*out = (uint8_t)i;
	return 0;
}

int cfg_parse_io_engine(const char *s, uint8_t *out, char *err,
			size_t errlen)
{
	static const char *const names[] = { "auto", "uring", "aio" };
	unsigned i;

	if (cfg_parse_choice(s, names, 3, &i, err, errlen) < 0)
		return -1;
#ifndef HAVE_LIBURING
	if (i == IO_ENGINE_URING) {
		snprintf(err, errlen, "this tcqd was built without liburing "
			 "(apt-get install -y liburing-dev, then configure "
			 "--with-liburing): aio or auto only");
		return -1;
	}
#endif
	*out = (uint8_t)i;
	return 0;
}

int cfg_parse_qam(const char *s, uint8_t *out, char *err, size_t errlen)
{
	static const char *const names[] = { "restricted", "unrestricted" };
	unsigned i;

	if (cfg_parse_choice(s, names, 2, &i, err, errlen) < 0)
		return -1;
	*out = (uint8_t)i;
	return 0;
}

int cfg_parse_shared_state(const char *s, bool *none, char *err,
			   size_t errlen)
{
	static const char *const names[] = { "auto", "none" };
	unsigned i;

	if (cfg_parse_choice(s, names, 2, &i, err, errlen) < 0)
		return -1;
	*none = i == 1;
	return 0;
}

int cfg_parse_cut_through(const char *s, bool *off, char *err, size_t errlen)
{
	static const char *const words[] = { "auto", "off" };
	unsigned i;

	if (cfg_parse_choice(s, words, 2, &i, err, errlen) < 0)
		return -1;
	*off = i == 1;
	return 0;
}

int cfg_parse_honour(const char *s, bool *ignore, char *err, size_t errlen)
{
	static const char *const names[] = { "honour", "ignore" };
	unsigned i;

	if (cfg_parse_choice(s, names, 2, &i, err, errlen) < 0)
		return -1;
	*ignore = i == 1;
	return 0;
}

int cfg_parse_size(const char *s, uint64_t *out, char *err, size_t errlen)
{
	uint64_t v = 0;
	const char *p = s;
	unsigned shift = 0;

	if (*p < '0' || *p > '9')
		goto bad;
	for (; *p >= '0' && *p <= '9'; p++) {
		unsigned d = (unsigned)(*p - '0');

		if (v > (UINT64_MAX - d) / 10)
			goto big;
		v = v * 10 + d;
	}
	switch (*p) {
	case 'k': case 'K': shift = 10; break;
	case 'm': case 'M': shift = 20; break;
	case 'g': case 'G': shift = 30; break;
	case 't': case 'T': shift = 40; break;
	case 0: break;
	default: goto bad;
	}
	if (shift) {
		p++;
		/* "64K", "64KiB" and "64KB" all mean 65536. */
		if (strcasecmp(p, "ib") == 0)
			p += 2;
		else if (strcasecmp(p, "b") == 0)
			p++;
	}
	if (*p)
		goto bad;
	if (shift && v > (UINT64_MAX >> shift))
		goto big;
	*out = v << shift;
	return 0;
bad:
	snprintf(err, errlen,
		 "'%s' is not a size (a number with an optional K, M, G or T suffix)",
		 s);
	return -1;
big:
	snprintf(err, errlen, "'%s' is too large", s);
	return -1;
}

int cfg_parse_block_size(const char *s, uint32_t *out, char *err,
			 size_t errlen)
{
	if (strcmp(s, "512") == 0) {
		*out = 512;
	} else if (strcmp(s, "4096") == 0) {
		*out = 4096;
	} else {
		snprintf(err, errlen, "'%s' is not 512 or 4096", s);
		return -1;
	}
	return 0;
}

int cfg_parse_bool(const char *s, bool *out, char *err, size_t errlen)
{
	static const char *const yes[] = { "yes", "on", "true", "1" };
	static const char *const no[] = { "no", "off", "false", "0" };

	for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
		if (strcasecmp(s, yes[i]) == 0) {
			*out = true;
			return 0;
		}
		if (strcasecmp(s, no[i]) == 0) {
			*out = false;
			return 0;
		}
	}
	snprintf(err, errlen, "'%s' is not a boolean (yes/no, on/off, true/false, 1/0)",
		 s);
	return -1;
}

int cfg_parse_serial(const char *s, char *out, char *err, size_t errlen)
{
	size_t n = strlen(s);

	/* VPD page 80h and the T10 designator carry it as ASCII. */
	if (n < 1 || n > 32) {
		snprintf(err, errlen, "a serial number must be 1..32 characters");
		return -1;
	}
	for (size_t i = 0; i < n; i++)
		if (s[i] <= 0x20 || s[i] >= 0x7f) {
			snprintf(err, errlen,
				 "'%s': a serial number is printable ASCII without spaces",
				 s);
			return -1;
		}
	memcpy(out, s, n + 1);
	return 0;
}

int cfg_parse_inquiry_text(const char *s, size_t max, char *out, char *err,
			   size_t errlen)
{
	size_t n = strlen(s);

	if (n < 1 || n > max) {
		snprintf(err, errlen, "'%s' is %zu characters: 1..%zu", s, n,
			 max);
		return -1;
	}
	for (size_t i = 0; i < n; i++)
		if (s[i] < 0x20 || s[i] > 0x7e || s[i] == ';') {
			snprintf(err, errlen, "'%s': printable ASCII (20h-7Eh) "
				 "without ';'", s);
			return -1;
		}
	if (s[0] == ' ' || s[n - 1] == ' ') {
		snprintf(err, errlen, "'%s': no leading or trailing space "
			 "(INQUIRY pads with spaces itself)", s);
		return -1;
	}
	memcpy(out, s, n + 1);
	return 0;
}

static bool is_hex_lower(char ch)
{
	return (ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'f');
}

static bool all_hex(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!is_hex_lower(s[i]))
			return false;
	return s[n] == 0;
}

/* iqn.YYYY-MM.reversed.domain[:identifier] (RFC 7143 3.2.6.3.1). */
static bool iqn_ok(const char *n)
{
	const char *p = n + 4, *dom;
	int month;

	for (int i = 0; i < 4; i++)
		if (!isdigit((unsigned char)p[i]))
			return false;
	if (p[4] != '-' || !isdigit((unsigned char)p[5]) ||
	    !isdigit((unsigned char)p[6]) || p[7] != '.')
		return false;
	month = (p[5] - '0') * 10 + (p[6] - '0');
	if (month < 1 || month > 12)
		return false;
	/* One or more non-empty labels of letters, digits and '-'. */
	dom = p = p + 8;
	for (;; p++) {
		if (*p == '.' || *p == ':' || *p == 0) {
			if (p == dom)
				return false;
			if (*p != '.')
				break;
			dom = p + 1;
		} else if (!(islower((unsigned char)*p) ||
			     isdigit((unsigned char)*p) || *p == '-')) {
			return false;
		}
	}
	/* A ':' must be followed by an identifier. */
	return *p == 0 || p[1] != 0;
}

int cfg_check_name(const char *n, char *err, size_t errlen)
{
	size_t len = strlen(n);
	const char *why = NULL;

	if (len == 0) {
		snprintf(err, errlen, "empty iSCSI name");
		return -1;
	}
	if (len > TCQ_NAME_MAX - 1) {
		snprintf(err, errlen, "bad iSCSI name '%.32s...': longer than %d bytes",
			 n, TCQ_NAME_MAX - 1);
		return -1;
	}
	for (const char *p = n; *p; p++) {
		unsigned char ch = (unsigned char)*p;

		if (isupper(ch)) {
			why = "must be lower case";
			break;
		}
		if (!(islower(ch) || isdigit(ch) || ch == '-' || ch == '.' ||
		      ch == ':')) {
			why = "only a-z, 0-9, '-', '.' and ':' are allowed";
			break;
		}
	}
	if (!why) {
		if (strncmp(n, "iqn.", 4) == 0) {
			if (!iqn_ok(n))
				why = "expected iqn.YYYY-MM.reversed.domain[:identifier]";
		} else if (strncmp(n, "eui.", 4) == 0) {
			if (len != 20 || !all_hex(n + 4, 16))
				why = "expected eui. and 16 hex digits";
		} else if (strncmp(n, "naa.", 4) == 0) {
			if ((len != 20 && len != 36) || !all_hex(n + 4, len - 4))
				why = "expected naa. and 16 or 32 hex digits";
		} else {
			why = "must start with iqn., eui. or naa.";
		}
	}
	if (why) {
		snprintf(err, errlen, "bad iSCSI name '%s': %s", n, why);
		return -1;
	}
	return 0;
}

/* ---- redirect = ADDR:PORT[,permanent] ----------------------------------- */

/* A DNS host name (RFC 1123 2.1): labels of letters, digits and '-', 1..63
 * bytes, not starting or ending with '-'; at most 253 bytes. */
static bool is_dns_name(const char *h, size_t n)
{
	size_t label = 0;

	if (n == 0 || n > 253)
		return false;
	for (size_t i = 0; i <= n; i++) {
		char ch = i < n ? h[i] : '.';

		if (ch == '.') {
			if (label == 0 || label > 63 || h[i - 1] == '-')
				return false;
			label = 0;
		} else if (isalnum((unsigned char)ch) ||
			   (ch == '-' && label > 0)) {
			label++;
		} else {
			return false;
		}
	}
	return true;
}

/* ADDR of ADDR:PORT (h, n bytes): a bracketed IPv6 address, a dotted IPv4
 * address (a name of digits and dots alone must be one) or a DNS name.
 * Also isns's HOST. */
static int check_redirect_host(const char *h, size_t n, char *err,
			       size_t errlen)
{
	char buf[256];
	unsigned char a[16];

	if (n == 0 || n >= sizeof(buf)) {
		snprintf(err, errlen, "'%.*s': no address before ':PORT'",
			 (int)(n < 64 ? n : 64), h);
		return -1;
	}
	memcpy(buf, h, n);
	buf[n] = '\0';
	if (buf[0] == '[') {
		buf[n - 1] = '\0';
		if (n < 3 || h[n - 1] != ']' ||
		    inet_pton(AF_INET6, buf + 1, a) != 1) {
			snprintf(err, errlen, "'%.*s' is not a bracketed IPv6 "
				 "address", (int)n, h);
			return -1;
		}
		return 0;
	}
	if (strchr(buf, ':')) {
		snprintf(err, errlen, "'%s': an IPv6 address goes in brackets, "
			 "[ADDR]:PORT", buf);
		return -1;
	}
	if (strspn(buf, "0123456789.") == n) {
		if (inet_pton(AF_INET, buf, a) != 1) {
			snprintf(err, errlen, "'%s' is not an IPv4 address", buf);
			return -1;
		}
		return 0;
	}
	if (!is_dns_name(buf, n)) {
		snprintf(err, errlen, "'%s' is not an IPv4 address, a "
			 "bracketed IPv6 address or a DNS name", buf);
		return -1;
	}
	return 0;
}

int cfg_parse_redirect(const char *s, char *addr, size_t addrlen,
		       bool *permanent, char *err, size_t errlen)
{
	const char *comma = strchr(s, ','), *colon;
	size_t n = comma ? (size_t)(comma - s) : strlen(s);
	uint64_t port;
	char perr[128];

	*permanent = false;
	addr[0] = '\0';
	if (!*s)
		return 0;	/* no redirect */
	if (comma) {
		if (strcmp(comma, ",permanent")) {
			snprintf(err, errlen, "'%s': after ADDR:PORT only "
				 "',permanent' may follow", s);
			return -1;
		}
		*permanent = true;
	}
	/* The port follows the last ':' (an IPv6 address is bracketed). */
	colon = NULL;
	for (size_t i = 0; i < n; i++)
		if (s[i] == ':')
			colon = s + i;
	if (!colon || (s[0] == '[' && colon[-1] != ']')) {
		snprintf(err, errlen, "'%s': no port (ADDR:PORT[,permanent])",
			 s);
		return -1;
	}
	{
		char p[16];
		size_t pl = n - (size_t)(colon + 1 - s);

		if (pl >= sizeof(p))
			pl = sizeof(p) - 1;
		memcpy(p, colon + 1, pl);
		p[pl] = '\0';
		if (cfg_parse_uint(p, 1, 65535, &port, perr,
				   sizeof(perr)) < 0) {
			snprintf(err, errlen, "'%s': port %s", s, perr);
			return -1;
		}
	}
	if (check_redirect_host(s, (size_t)(colon - s), err, errlen) < 0)
		return -1;
	if ((size_t)snprintf(addr, addrlen, "%.*s:%u", (int)(colon - s), s,
			     (unsigned)port) >= addrlen) {
		snprintf(err, errlen, "'%s' is too long", s);
		addr[0] = '\0';
		return -1;
	}
	return 0;
}

/* ---- isns = HOST[:PORT]|off --------------------------------------------- */

int cfg_parse_isns(const char *s, char *host, size_t hostlen, uint16_t *port,
		   char *err, size_t errlen)
{
	const char *end, *colon = strchr(s, ':');
	char perr[128];
	uint64_t v = CFG_ISNS_PORT;
	size_t n;

	host[0] = '\0';
	*port = CFG_ISNS_PORT;
	if (!*s || !strcmp(s, "off"))
		return 0;
	if (*s == '[') {		/* [v6] or [v6]:PORT */
		end = strchr(s, ']');
		end = end ? end + 1 : s + strlen(s);
		colon = *end == ':' ? end : NULL;
		if (*end && !colon) {
			snprintf(err, errlen, "'%s': only :PORT may follow "
				 "[ADDR]", s);
			return -1;
		}
	} else if (colon && strchr(colon + 1, ':')) {
		colon = NULL;	/* an IPv6 address without brackets */
	}
	n = colon ? (size_t)(colon - s) : strlen(s);
	if (check_redirect_host(s, n, err, errlen) < 0)
		return -1;
	if (colon && cfg_parse_uint(colon + 1, 1, 65535, &v, perr,
				    sizeof(perr)) < 0) {
		snprintf(err, errlen, "'%s': port %s", s, perr);
		return -1;
	}
	if (*s == '[') {
		s++;
		n -= 2;
	}
	if (n >= hostlen) {
		snprintf(err, errlen, "'%s': too long", s);
		return -1;
	}
	memcpy(host, s, n);
	host[n] = '\0';
	*port = (uint16_t)v;
	return 0;
}
