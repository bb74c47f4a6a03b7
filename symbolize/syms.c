// SPDX-License-Identifier: MIT
/*
 * syms.c: the function symbols of an ELF image, one per address (see include/stk/elfobj.h), and
 * the PLT stubs named after the functions they jump to. stkrec embeds them in OBJECTS records,
 * stkreport names frames with them when the capture has none, and stkrec finds uprobe targets
 * in them: one reading, so both tools keep the same symbols and name an address alike.
 */
#include <errno.h>
#include <stdio.h>
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

/* The end of a sizeless symbol's section, which it must not name past; 0 when unknown. */
static uint64_t section_end(Elf *e, const GElf_Sym *s)
{
	GElf_Shdr sh;

	if (s->st_size || s->st_shndx == SHN_UNDEF || s->st_shndx >= SHN_LORESERVE ||
	    !gelf_getshdr(elf_getscn(e, s->st_shndx), &sh) || s->st_value < sh.sh_addr ||
	    s->st_value - sh.sh_addr >= sh.sh_size)
		return 0;
	return sh.sh_addr + sh.sh_size;
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
						    label, section_end(e, &sym) };
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

/*
 * A sizeless symbol reaches up to the next symbol, but never past its section: _init (crti.o,
 * sizeless) is followed by .plt, whose stubs read _init+0x60 where they have no symbol.
 */
static void size_sizeless(struct elfobj_syms *l)
{
	for (uint32_t i = 0; i < l->n; i++) {
		struct elfobj_sym *s = &l->v[i];
		uint64_t end = s->end;

		if (s->c.size)
			continue;
		if (i + 1 < l->n && (!end || l->v[i + 1].addr < end))
			end = l->v[i + 1].addr;
		if (end > s->addr)
			s->c.size = end - s->addr;
	}
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
	size_sizeless(l);
}

void elfobj_syms_clear(struct elfobj_syms *l)
{
	for (uint32_t i = 0; i < l->nnames; i++)
		free(l->names[i]);
	free(l->names);
	free(l->v);
	*l = (struct elfobj_syms){ 0 };
}

/* ---- PLT stubs ------------------------------------------------------------------------------ */

/* A GOT slot and the symbol a relocation binds it to. */
struct got_slot {
	uint64_t addr;
	const char *name;	/* lent by the Elf */
};

/* What naming the stubs needs: the GOT slots relocated, by address; .rela.plt by index. */
struct plt_relocs {
	struct got_slot *slots;
	uint32_t n, cap;
	const char **jmprel;	/* .rela.plt's names by index (NULL: no symbol), for lazy stubs */
	uint32_t njmprel;
};

static int cmp_slot(const void *a, const void *b)
{
	const struct got_slot *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* The name of relocation r of a SHT_RELA section whose symbols are in the section sym_link. */
static const char *reloc_name(Elf *e, const GElf_Rela *r, Elf_Data *syms, GElf_Word str_link)
{
	GElf_Sym sym;
	const char *name;

	if (!GELF_R_SYM(r->r_info) || !gelf_getsym(syms, GELF_R_SYM(r->r_info), &sym))
		return NULL;
	name = elf_strptr(e, str_link, sym.st_name);
	return name && *name ? name : NULL;
}

/* One SHT_RELA section's GOT relocations into pr; .rela.plt's also by index. */
static int read_relocs(Elf *e, Elf_Scn *scn, const GElf_Shdr *sh, const char *secname,
		       struct plt_relocs *pr)
{
	Elf_Data *data = elf_getdata(scn, NULL), *syms;
	GElf_Shdr symsh;
	Elf_Scn *symscn = elf_getscn(e, sh->sh_link);
	uint32_t n = sh->sh_entsize ? sh->sh_size / sh->sh_entsize : 0;
	bool jmprel = !strcmp(secname, ".rela.plt");

	if (!data || !symscn || !gelf_getshdr(symscn, &symsh) || !(syms = elf_getdata(symscn, NULL)))
		return 0;
	if (jmprel && !pr->jmprel) {
		pr->jmprel = calloc(n ? n : 1, sizeof(*pr->jmprel));
		if (!pr->jmprel)
			return -ENOMEM;
		pr->njmprel = n;
	}
	for (uint32_t i = 0; i < n; i++) {
		const char *name;
		GElf_Rela r;

		if (!gelf_getrela(data, i, &r))
			continue;
		if (GELF_R_TYPE(r.r_info) != R_X86_64_JUMP_SLOT &&
		    GELF_R_TYPE(r.r_info) != R_X86_64_GLOB_DAT)
			continue;
		name = reloc_name(e, &r, syms, symsh.sh_link);
		if (!name)
			continue;
		if (jmprel && pr->njmprel == n)
			pr->jmprel[i] = name;
		if (pr->n == pr->cap) {
			uint32_t cap = pr->cap ? pr->cap * 2 : 64;
			struct got_slot *v = realloc(pr->slots, cap * sizeof(*v));

			if (!v)
				return -ENOMEM;
			pr->slots = v;
			pr->cap = cap;
		}
		pr->slots[pr->n++] = (struct got_slot){ r.r_offset, name };
	}
	return 0;
}

static const char *slot_name(const struct plt_relocs *pr, uint64_t addr)
{
	struct got_slot key = { .addr = addr }, *s;

	s = bsearch(&key, pr->slots, pr->n, sizeof(key), cmp_slot);
	return s ? s->name : NULL;
}

/*
 * An instruction that starts with op at p, or with the int3 of a uprobe over op: the kernel
 * writes a uprobe's breakpoint into every mapping of the file that may execute, stkrec's own
 * read-only view of it too (uprobe_mmap()), and a stub probed as NAME@plt lost its name.
 */
static bool op_at(const uint8_t *p, uint8_t op)
{
	return *p == op || *p == 0xcc;
}

/*
 * The function the stub at addr (bytes p, len of them) jumps to: [endbr64] [bnd] jmp
 * *GOT(%rip), the GOT slot's symbol (.plt without IBT, .plt.sec, .plt.got); or [endbr64] push
 * $index; [bnd] jmp .plt, the index-th relocation of .rela.plt (.plt's lazy stubs beside a
 * .plt.sec). .plt's first entry jumps through a slot no relocation names: none.
 */
static const char *stub_target(const uint8_t *p, uint32_t len, uint64_t addr,
			       const struct plt_relocs *pr)
{
	static const uint8_t endbr64[] = { 0xf3, 0x0f, 0x1e, 0xfa };
	uint32_t i = len >= 4 && op_at(p, endbr64[0]) && !memcmp(p + 1, endbr64 + 1, 3) ? 4 : 0;
	int32_t disp;
	uint32_t index;

	if (i + 7 <= len && op_at(p + i, 0xf2) && p[i + 1] == 0xff && p[i + 2] == 0x25)
		i++;	/* bnd */
	if (i + 6 <= len && op_at(p + i, 0xff) && p[i + 1] == 0x25) {
		memcpy(&disp, p + i + 2, 4);
		return slot_name(pr, addr + i + 6 + (int64_t)disp);
	}
	/* push, then a jump to .plt's first entry: [bnd] jmp rel32 */
	if (i + 7 <= len && op_at(p + i, 0x68) &&
	    (p[i + 5] == 0xe9 || (p[i + 5] == 0xf2 && p[i + 6] == 0xe9))) {
		memcpy(&index, p + i + 1, 4);
		return index < pr->njmprel ? pr->jmprel[index] : NULL;
	}
	return NULL;
}

/* The stubs of one PLT section into l. Their count, or -ENOMEM. */
static int add_stubs(struct elfobj_syms *l, Elf_Scn *scn, const GElf_Shdr *sh, uint32_t entsize,
		     const struct plt_relocs *pr)
{
	Elf_Data *d = elf_getdata(scn, NULL);
	int added = 0;

	if (!d || !d->d_buf || d->d_size < sh->sh_size || sh->sh_type != SHT_PROGBITS)
		return 0;
	for (uint64_t off = 0; off + entsize <= sh->sh_size; off += entsize) {
		const char *target = stub_target((const uint8_t *)d->d_buf + off, entsize,
						 sh->sh_addr + off, pr);
		char *name, **names;

		if (!target)
			continue;
		names = realloc(l->names, (l->nnames + 1) * sizeof(*names));
		if (!names)
			return -ENOMEM;
		l->names = names;
		if (asprintf(&name, "%s" CAP_SYMBOL_PLT, target) < 0)
			return -ENOMEM;
		l->names[l->nnames++] = name;
		if (grow(l))
			return -ENOMEM;
		l->v[l->n++] = (struct elfobj_sym){ sh->sh_addr + off, { entsize, STB_LOCAL, name } };
		added++;
	}
	return added;
}

int elfobj_syms_add_plt(struct elfobj_syms *l, Elf *e)
{
	struct plt_relocs pr = { 0 };
	Elf_Scn *scn = NULL;
	GElf_Ehdr eh;
	size_t shstrndx;
	int err = 0, added = 0;

	if (!gelf_getehdr(e, &eh) || eh.e_machine != EM_X86_64 || elf_getshdrstrndx(e, &shstrndx))
		return 0;
	while (!err && (scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		const char *name;

		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_RELA &&
		    (name = elf_strptr(e, shstrndx, sh.sh_name)))
			err = read_relocs(e, scn, &sh, name, &pr);
	}
	if (!err && pr.n)
		qsort(pr.slots, pr.n, sizeof(*pr.slots), cmp_slot);
	while (!err && pr.n && (scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		const char *name;
		uint32_t entsize;
		int n;

		if (!gelf_getshdr(scn, &sh) || !(name = elf_strptr(e, shstrndx, sh.sh_name)) ||
		    (strcmp(name, ".plt") && strcmp(name, ".plt.sec") && strcmp(name, ".plt.got")))
			continue;
		/* ld gives .plt.got 8-byte entries without IBT and does not always say so */
		entsize = sh.sh_entsize ? sh.sh_entsize : strcmp(name, ".plt.got") ? 16 : 8;
		if (entsize < 8 || entsize > 32)
			continue;
		n = add_stubs(l, scn, &sh, entsize, &pr);
		err = n < 0 ? n : 0;
		added += n > 0 ? n : 0;
	}
	free(pr.slots);
	free(pr.jmprel);
	return err ? err : added;
}
