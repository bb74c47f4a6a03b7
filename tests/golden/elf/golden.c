/* SPDX-License-Identifier: MIT */
/*
 * golden.c: the program whose symbols the golden captures name. Built once by build.sh into
 * golden.elf (non-PIE) and golden-pie.elf (PIE); the binaries are committed, and
 * tests/tools/mkgolden.c reads their symbols and build-ids to write the synthetic captures.
 * Never run: only its symbol table matters.
 */
#include <stdio.h>

#define NOINLINE __attribute__((noinline))

NOINLINE int stk_leaf(int x)
{
	return x * 3 + 1;
}

NOINLINE int stk_mid(int x)
{
	return stk_leaf(x + 1) + 2;
}

NOINLINE int stk_top(int x)
{
	return stk_mid(x * 2) - 1;
}

NOINLINE int read_file(const char *path)
{
	FILE *f = fopen(path, "r");
	int n = 0;

	if (f) {
		while (fgetc(f) != EOF)
			n++;
		fclose(f);
	}
	return n;
}

NOINLINE int parse_config(const char *path)
{
	return read_file(path) > 10;
}

int main(int argc, char **argv)
{
	return stk_top(argc) + parse_config(argc > 1 ? argv[1] : "/etc/hostname");
}
