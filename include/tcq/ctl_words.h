/*
 * The words of a control socket request (target/ctl.c): a request is one
 * line of words separated by spaces, so a word that holds a space (an
 * INQUIRY product name, say) travels percent-encoded: tcqctl encodes
 * space, tab, CR, LF and '%' as %XX (RFC 3986's form), tcqd decodes each
 * word. A '%' not followed by two hex digits stays as it is, and so
 * does "%00" (a NUL would cut the word short).
 */
#ifndef TCQ_CTL_WORDS_H
#define TCQ_CTL_WORDS_H
#include <stddef.h>

/* Encodes w into out (outlen bytes, NUL-terminated); its length, or
 * (size_t)-1 when it does not fit. */
size_t ctl_word_encode(const char *w, char *out, size_t outlen);
/* Decodes w in place (the result is never longer). */
void ctl_word_decode(char *w);
#endif
