/* SPDX-License-Identifier: MIT */
/*
 * escape.h: names are data. Every name a text output prints comes from a capture someone else
 * may have made (comms any process sets with prctl(PR_SET_NAME), function names from any symbol
 * table, object paths, host names, probe specs), so the text layouts (stack lists, -v, -s, -f,
 * --tree, --diff, stacksnoop's, the summary, the --sql table and CSV) print them through these
 * functions: no byte of a name may reach the terminal raw or split an output line.
 *
 * The escapes are C's, as `ls -b` prints them but in hexadecimal (stkreport(1), OUTPUT):
 *
 *   \a \b \t \n \v \f \r   for 0x07 to 0x0d
 *   \\                     for a backslash, so that the escaping can be undone
 *   \xHH                   (two lower-case hex digits) for every other byte 0x01-0x1f and 0x7f
 *                          (ESC is \x1b), and with REP_ESC_SEMICOLON for ';' (\x3b)
 *
 * Bytes 0x80 and above pass as they are: UTF-8 names stay readable. JSON, SVG and the SQLite
 * database have their own escaping (or none: the database keeps the raw bytes).
 */
#ifndef REP_ESCAPE_H
#define REP_ESCAPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* Also escape ';': the frame separator of folded paths (-f, --diff). */
#define REP_ESC_SEMICOLON 0x1u

/*
 * Write s (NUL-terminated) to out, escaped. The common case, a name with nothing to escape,
 * is one scan and one fwrite(): no copy, no allocation.
 */
void rep_fputs_escaped(FILE *out, const char *s, unsigned int flags);

/* Whether s holds a byte that rep_fputs_escaped() would escape. */
bool rep_needs_escape(const char *s, unsigned int flags);

/*
 * Escape s into buf of len bytes (len >= 1), always NUL-terminated. An escape is never cut:
 * when the text does not fit, it stops before the first character or escape that does not.
 * Returns the length of the whole escaped text (as snprintf does), so `>= len` means cut.
 */
size_t rep_escape(char *buf, size_t len, const char *s, unsigned int flags);

/* The escaped text of s, malloc'ed (the caller frees it); NULL with errno ENOMEM. */
char *rep_escape_dup(const char *s, unsigned int flags);

#endif /* REP_ESCAPE_H */
