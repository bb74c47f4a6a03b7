/* SPDX-License-Identifier: MIT */
/*
 * tests/unit/rep_sym.h: what the symbolizer tests that build objects with the binutils share:
 * the committed ELF file they start from, and a shell command runner.
 */
#ifndef STK_TEST_REP_SYM_H
#define STK_TEST_REP_SYM_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#define GOLDEN "tests/golden/elf/golden.elf"
#define READ_FILE 0x401194ull	/* a local function of GOLDEN: only .symtab names it */

/* Run a printf-formatted shell command; returns system()'s status. */
static int sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int sh(const char *fmt, ...)
{
	char cmd[4096];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	return system(cmd);
}

#endif /* STK_TEST_REP_SYM_H */
