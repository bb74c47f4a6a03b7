// SPDX-License-Identifier: MIT
/*
 * symbols.c: how a function symbol names an address (format.md 4.8), one rule for stkrec, which
 * keeps one symbol per address when it embeds a table, and stkreport, which names addresses from
 * embedded tables and from files on disk: whichever source names a frame, the name is the same.
 */
#include <elf.h>
#include <string.h>

#include "stk/capture.h"

bool cap_symbol_is_plt(const char *name)
{
	const char *at = name[0] ? strchr(name + 1, '@') : NULL;

	return at && !strcmp(at, CAP_SYMBOL_PLT);
}

size_t cap_symbol_base_len(const char *name)
{
	const char *at = name[0] ? strchr(name + 1, '@') : NULL, *ver;

	/*
	 * A .symtab names each versioned definition NAME@VERSION (NAME@@VERSION for the default
	 * one), where .dynsym has the plain name and the version in .gnu.version: only the plain
	 * name is the same whichever table names a frame. One version, not empty, after one or
	 * two '@'.
	 */
	if (!at || cap_symbol_is_plt(name))
		return strlen(name);
	ver = at + 1 + (at[1] == '@');
	if (!*ver || strchr(ver, '@'))
		return strlen(name);
	return at - name;
}

static int bind_rank(unsigned char bind)
{
	return bind == STB_GLOBAL ? 0 : bind == STB_WEAK ? 1 : 2;
}

int cap_symbol_prefer(const struct cap_symbol_cand *a, const struct cap_symbol_cand *b)
{
	size_t la, lb;
	int c;

	/* a size bounds the symbol; a sizeless one (hand-written assembly) is a label */
	if (!a->size != !b->size)
		return a->size ? -1 : 1;
	/* the name a user knows: a global's, then a weak alias's, then a local's */
	if (bind_rank(a->bind) != bind_rank(b->bind))
		return bind_rank(a->bind) - bind_rank(b->bind);
	/* the shorter name: glibc's internal aliases add a prefix (__GI___clone3 of __clone3) */
	la = cap_symbol_base_len(a->name);
	lb = cap_symbol_base_len(b->name);
	if (la != lb)
		return la < lb ? -1 : 1;
	c = memcmp(a->name, b->name, la);
	if (c)
		return c;
	if (a->size != b->size)
		return a->size > b->size ? -1 : 1;
	return strcmp(a->name, b->name);
}
