// SPDX-License-Identifier: MIT
/*
 * syms.c: the function symbols of an ELF image, one per address (see include/stk/elfobj.h).
 * stkrec embeds them in OBJECTS records, stkreport names frames with them when the capture has
 * none, and stkrec finds uprobe targets in them: one reading, so both tools keep the same
 * symbols and name an address alike.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "stk/elfobj.h"

static bool is_function(const GElf_Sym *s)
{
	int type = GELF_ST_TYPE(s->st_info);

	return (type == STT_FUNC || type == STT_GNU_IFUNC) && s->st_shndx != SHN_UNDEF &&
	       s->st_value;
}

/*
 * A code label: a sizeless STT_NOTYPE symbol in an executable section, as hand-written assembly
 * leaves them. ld.so's entry point is one: Debian's debug file has `_start` and `_dl_start_user`
 * so, and without them the outermost frame of every stack walked from a process's start in
 * ld.so was [unknown]. A label inside a sized function is one of its jump targets, and
 * elfobj_syms_unique() drops it.
 */
static bool is_code_label(Elf *e, const GElf_Sym *s)
{
	GElf_Shdr sh;

	if (GELF_ST_TYPE(s->st_info) != STT_NOTYPE || s->st_size || !s->st_value ||
	    s->st_shndx == SHN_UNDEF || s->st_shndx >= SHN_LORESERVE)
		return false;
	return gelf_getshdr(elf_getscn(e, s->st_shndx), &sh) && (sh.sh_flags & SHF_EXECINSTR);
}

static int grow(struct elfobj_syms *l)
{
	uint32_t cap = l->cap ? l->cap * 2 : 1024;
	struct elfobj_sym *v;

	if (l->n < l->cap)
		return 0;
	if (cap <= l->cap || cap > UINT32_MAX / 2)
		return -ENOMEM;
	v = realloc(l->v, (size_t)cap * sizeof(*v));
	if (!v)
		return -ENOMEM;
	l->v = v;
	l->cap = cap;
	return 0;
}

int elfobj_syms_add(struct elfobj_syms *l, Elf *e, uint32_t type, uint64_t limit)
{
	GElf_Shdr sh, strs;
	Elf_Scn *scn = elfobj_section(e, type, &sh);
	Elf_Data *data;
	uint32_t n, added = 0;
	GElf_Sym sym;

	if (!scn || !sh.sh_entsize)
		return 0;
	if (limit && (sh.sh_size > limit || !gelf_getshdr(elf_getscn(e, sh.sh_link), &strs) ||
		      strs.sh_size > limit))
		return 0;
	data = elf_getdata(scn, NULL);
	if (!data)
		return 0;
	n = sh.sh_size / sh.sh_entsize;
	for (uint32_t i = 0; i < n; i++) {
		const char *name;
		bool label;

		if (!gelf_getsym(data, i, &sym))
			continue;
		label = is_code_label(e, &sym);
		if (!label && !is_function(&sym))
			continue;
		name = elf_strptr(e, sh.sh_link, sym.st_name);
		if (!name || !*name)
			continue;
		if (grow(l))
			return -ENOMEM;
		l->v[l->n++] = (struct elfobj_sym){ sym.st_value,
						    { sym.st_size, GELF_ST_BIND(sym.st_info), name },
						    label };
		added++;
	}
	return added;
}

static int cmp_sym(const void *a, const void *b)
{
	const struct elfobj_sym *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	/* of aliases at one address, the one a report names it by first (it is kept) */
	return cap_symbol_prefer(&x->c, &y->c);
}

void elfobj_syms_unique(struct elfobj_syms *l)
{
	uint64_t end = 0;	/* the end of the sized symbols so far */
	uint32_t kept = 0;

	if (!l->n)
		return;
	qsort(l->v, l->n, sizeof(*l->v), cmp_sym);
	for (uint32_t i = 0; i < l->n; i++) {
		const struct elfobj_sym *s = &l->v[i];

		if (kept && l->v[kept - 1].addr == s->addr)
			continue;
		if (s->label && s->addr < end)
			continue;	/* a jump target inside a function */
		if (s->c.size && s->addr + s->c.size > end)
			end = s->addr + s->c.size;
		l->v[kept++] = *s;
	}
	l->n = kept;
}

void elfobj_syms_clear(struct elfobj_syms *l)
{
	free(l->v);
	*l = (struct elfobj_syms){ 0 };
}
