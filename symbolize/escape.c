// SPDX-License-Identifier: MIT
/*
 * escape.c: C-style escapes for the names text outputs print (escape.h has the convention).
 *
 * Speed: the scan is one table lookup per byte and a clean run goes out in one fwrite(), with
 * no copy and no allocation; still several times strlen()'s cost per byte. So the per-frame
 * paths (-f, the stack lists) do not scan frames: the model checked each distinct frame text
 * once (REP_FRAME_F_ESCAPE, agg.c), and only comms and group names are scanned per line. On
 * mkbig's 1M-row capture, -f then runs 0.9% more instructions than printing names raw (9% when
 * every frame was scanned here).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "stk/escape.h"

#define C_STOP 0x1u	/* NUL (ends the scan) or a byte always escaped */
#define C_SEMI 0x2u	/* ';', escaped with REP_ESC_SEMICOLON */

static const unsigned char byte_class[256] = {
	[0x00 ... 0x1f] = C_STOP,
	[';'] = C_SEMI,
	['\\'] = C_STOP,
	[0x7f] = C_STOP,
};

/* The letter of the short escapes; 0: \xHH */
static const char letter[128] = {
	['\a'] = 'a', ['\b'] = 'b', ['\t'] = 't', ['\n'] = 'n', ['\v'] = 'v', ['\f'] = 'f',
	['\r'] = 'r', ['\\'] = '\\',
};

static unsigned int stop_mask(unsigned int flags)
{
	return C_STOP | (flags & REP_ESC_SEMICOLON ? C_SEMI : 0);
}

/* The escape of byte c (one that needs it) into u[4]; returns its length, 2 or 4. */
static size_t unit(unsigned char c, char u[4])
{
	static const char hex[] = "0123456789abcdef";

	u[0] = '\\';
	if (letter[c]) {
		u[1] = letter[c];
		return 2;
	}
	u[1] = 'x';
	u[2] = hex[c >> 4];
	u[3] = hex[c & 0xf];
	return 4;
}

void rep_fputs_escaped(FILE *out, const char *str, unsigned int flags)
{
	const unsigned char *s = (const unsigned char *)str, *run;
	unsigned int stop = stop_mask(flags);
	char u[4];

	for (;;) {
		for (run = s; !(byte_class[*s] & stop); s++)
			;
		if (s > run)
			fwrite(run, 1, s - run, out);
		if (!*s)
			return;
		fwrite(u, 1, unit(*s++, u), out);
	}
}

bool rep_needs_escape(const char *str, unsigned int flags)
{
	const unsigned char *s = (const unsigned char *)str;
	unsigned int stop = stop_mask(flags);

	while (!(byte_class[*s] & stop))
		s++;
	return *s;
}

size_t rep_escape(char *buf, size_t len, const char *str, unsigned int flags)
{
	const unsigned char *s = (const unsigned char *)str;
	unsigned int stop = stop_mask(flags);
	size_t n = 0, w = 0, k;	/* n: the whole escaped length, w: what went into buf */
	bool cut = false;
	char u[4];

	for (; *s; s++) {
		if (byte_class[*s] & stop) {
			k = unit(*s, u);
		} else {
			u[0] = *s;
			k = 1;
		}
		/* the first unit that does not fit ends the copy; the rest is only counted */
		if (!cut && w + k < len) {
			memcpy(buf + w, u, k);
			w += k;
		} else {
			cut = true;
		}
		n += k;
	}
	buf[w] = 0;
	return n;
}

char *rep_escape_dup(const char *s, unsigned int flags)
{
	char one;
	size_t n = rep_escape(&one, 1, s, flags);
	char *copy = malloc(n + 1);

	if (!copy) {
		errno = ENOMEM;
		return NULL;
	}
	rep_escape(copy, n + 1, s, flags);
	return copy;
}
