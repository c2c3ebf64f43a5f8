/*
 * pattern.h: regular expressions matched in time linear in the text, for
 * `cnntop exec --progress` (src/util/pattern_compile.c, pattern_match.c).
 *
 * The syntax is POSIX extended (regcomp's REG_EXTENDED) over bytes, as in
 * the C locale: literals, `.`, bracket expressions with ranges and the
 * classes [:alpha:] [:digit:] [:alnum:] [:upper:] [:lower:] [:space:]
 * [:blank:] [:punct:] [:print:] [:graph:] [:cntrl:] [:xdigit:] (ASCII),
 * [=c=] and [.c.] of one character, the anchors ^ and $, groups,
 * alternation, and the repetitions * + ? {m} {m,} {m,n} {,n}; and GNU's
 * \w \W \s \S \b \B \< \> \` \'.  Back-references (\1) are refused: no
 * matcher can do them in linear time.  So is an escaped letter or digit
 * GNU gives no meaning to (\d, \t: regcomp would read them as d and t).
 *
 * A pattern compiles to a program of at most PATTERN_PROG_MAX
 * instructions once its counted repetitions are written out (nested
 * counts multiply: (a{0,30}){0,30} is 1893), or is refused.  A Pike VM runs
 * it: time O(text length x program size), memory O(program size), whatever
 * the pattern and the text, and no recursion on the text or the pattern's
 * size.  Which match: the leftmost; among those starting there, the one
 * a backtracking matcher (Perl) finds first, i.e. alternatives in order
 * and repetitions greedy.  POSIX asks for the longest instead; the two
 * agree on where a match starts and on whether there is one, and differ
 * only in where it (or a group) ends when alternatives or repetitions
 * could stop in more than one place.
 *
 * Only the whole match and the first parenthesised group are reported,
 * which is all --progress reads.  The text may come in pieces
 * (PatternScan): a record of any length is matched without being kept.
 */
#ifndef CNNTOP_PATTERN_H
#define CNNTOP_PATTERN_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The most instructions a compiled pattern may have.  A program's size
 * bounds the work per byte of text: ~2000 instructions is a few
 * microseconds a byte at worst, and ordinary patterns are under 50. */
#define PATTERN_PROG_MAX 2000

/* Groups nested deeper than this are refused (and trees of repetitions
 * four times as deep), so that compiling never recurses far. */
#define PATTERN_DEPTH_MAX 64

/* An offset that is not set (a group that took no part in the match). */
#define PATTERN_NONE ((size_t)-1)

/* Where a match or a group lies: the bytes [so, eo) of the text. */
typedef struct PatternSpan {
    size_t so, eo;
} PatternSpan;

typedef struct Pattern Pattern;
typedef struct PatternScan PatternScan;

/*
 * Compiles the NUL-terminated src.  0 with *out set (free it with
 * pattern_free), or -CN_EINVAL with a one-line err saying what is wrong
 * ("back-references (\1) are not supported: ...", "'[' without its ']'"),
 * or -CN_ENOMEM.  Never crashes, whatever src.
 */
int pattern_compile(const char *src, Pattern **out, char *err, size_t errlen);

/* Frees p (NULL is fine). */
void pattern_free(Pattern *p);

/* The number of parenthesised groups in p's pattern. */
int pattern_groups(const Pattern *p);

/*
 * Matches p against the len bytes of text (NUL bytes are ordinary bytes).
 * 1 with m[0] the match and m[1] group 1 (PATTERN_NONE when it took no
 * part, or the pattern has none), 0 when there is no match, -CN_ENOMEM.
 */
int pattern_match(const Pattern *p, const char *text, size_t len, PatternSpan m[2]);

/* A match over a text given in pieces: new, feed..., end; reset for the
 * next text.  p must outlive it.  NULL when out of memory. */
PatternScan *pattern_scan_new(const Pattern *p);

/* Frees s (NULL is fine). */
void pattern_scan_free(PatternScan *s);

/* Starts a new text. */
void pattern_scan_reset(PatternScan *s);

/* The next n bytes of the text.  Returns 1 once the result is decided
 * (later bytes cannot change it, and are ignored), else 0. */
int pattern_scan_feed(PatternScan *s, const char *buf, size_t n);

/* The text ended: the result, as pattern_match() gives it (1 or 0). */
int pattern_scan_end(PatternScan *s, PatternSpan m[2]);

/* The bytes of the text fed so far. */
size_t pattern_scan_pos(const PatternScan *s);

/* The earliest offset at which the match can still start (the position
 * when nothing is pending): a caller that keeps the text to read the
 * match may drop the bytes before it. */
size_t pattern_scan_floor(const PatternScan *s);

#ifdef __cplusplus
}
#endif
#endif
