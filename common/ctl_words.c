/* Percent-encoding of a control request's words (tcq/ctl_words.h). */
#include <stdbool.h>
#include <string.h>
#include "tcq/ctl_words.h"
#include "tcq/kv_value.h"	/* kv_hex_digit */

size_t ctl_word_encode(const char *w, char *out, size_t outlen)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t n = 0;

	for (; *w; w++) {
		unsigned char c = (unsigned char)*w;
		bool esc = c == ' ' || c == '\t' || c == '\r' || c == '\n' ||
			   c == '%';

		if (n + (esc ? 3 : 1) >= outlen)
			return (size_t)-1;
		if (esc) {
			out[n++] = '%';
			out[n++] = hex[c >> 4];
			out[n++] = hex[c & 15];
		} else {
			out[n++] = (char)c;
		}
	}
	if (n >= outlen)
		return (size_t)-1;
	out[n] = '\0';
	return n;
}

void ctl_word_decode(char *w)
{
	char *o = w;

	for (; *w; w++) {
		int hi, lo;

		/* %00 stays as it is: a NUL would end the word there, and
		 * tcqctl never sends one (a C string cannot hold it). */
		if (*w == '%' &&
		    (hi = kv_hex_digit((unsigned char)w[1])) >= 0 &&
		    (lo = kv_hex_digit((unsigned char)w[2])) >= 0 &&
		    (hi | lo)) {
			*o++ = (char)(hi << 4 | lo);
			w += 2;
		} else {
			*o++ = *w;
		}
	}
	*o = '\0';
}
