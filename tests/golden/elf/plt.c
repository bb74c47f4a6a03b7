/* SPDX-License-Identifier: MIT */
/*
 * plt.c: a program whose PLT stubs the golden case plt and tests/unit/sym_plt.c name. Built once
 * by build.sh with IBT (-fcf-protection, -z ibtplt): lazy stubs in .plt (endbr64; push $index),
 * the stubs called in .plt.sec, and in .plt.got the stub of a function whose address it also
 * takes (getenv). Never run: only its tables matter.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char *(*volatile lookup)(const char *) = getenv;

__attribute__((noinline)) int plt_leaf(const char *s)
{
	return (int)strlen(s) + (getenv(s) != NULL);
}

int main(int argc, char **argv)
{
	puts(argv[0]);
	return plt_leaf(argc > 1 ? argv[1] : "x") + (lookup("HOME") != NULL);
}
