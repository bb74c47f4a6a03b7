/* SPDX-License-Identifier: MIT */
/*
 * tests/unit/rep_sym.h: what the symbolizer tests that build objects with the binutils share:
 * the committed ELF file they start from (sh(), the shell command runner, is in tests/test.h).
 */
#ifndef STK_TEST_REP_SYM_H
#define STK_TEST_REP_SYM_H

#define GOLDEN "tests/golden/elf/golden.elf"
#define READ_FILE 0x401194ull	/* a local function of GOLDEN: only .symtab names it */

#endif /* STK_TEST_REP_SYM_H */
