// SPDX-License-Identifier: MIT
/*
 * sym_dwarf.c: source lines and inlined-function chains from DWARF, with libdw (see
 * sym_internal.h). The walk is the one eu-addr2line -i does: the compile unit holding the
 * address, the line table row for it (the position in the innermost inlined function), then
 * the scopes around it from the inside out, where each DW_TAG_inlined_subroutine names the
 * function inlined there and its DW_AT_call_file/DW_AT_call_line say where the next outer
 * function called it.
 */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <stdio.h>
#include <fcntl.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "htab.h"
#include "sym_internal.h"

struct sym_dwarf {
	int fd;
	Elf *elf;
	Dwarf *dw;
	struct rep_strtab paths;	/* file names made absolute */
};

static struct sym_dwarf *dwarf_from_elf(Elf *elf, int fd)
{
	struct sym_dwarf *d = NULL;
	Dwarf *dw = NULL;

	if (!elf || elf_kind(elf) != ELF_K_ELF)
		goto fail;
	dw = dwarf_begin_elf(elf, DWARF_C_READ, NULL);
	if (!dw)
		goto fail;
	d = calloc(1, sizeof(*d));
	if (!d)
		goto fail;
	d->fd = fd;
	d->elf = elf;
	d->dw = dw;
	return d;
fail:
	if (dw)
		dwarf_end(dw);
	if (elf)
		elf_end(elf);
	if (fd >= 0)
		close(fd);
	errno = ENOENT;
	return NULL;
}

struct sym_dwarf *sym_dwarf__open(const char *path)
{
	struct stat st;
	int fd;

	/* as sym_elf__open: never block on a FIFO or read a device named by a capture */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		errno = ENOEXEC;
		return NULL;
	}
	elf_version(EV_CURRENT);
	return dwarf_from_elf(elf_begin(fd, ELF_C_READ_MMAP, NULL), fd);
}

struct sym_dwarf *sym_dwarf__open_mem(const void *buf, size_t len)
{
	elf_version(EV_CURRENT);
	/* libelf takes a non-const image but only reads it in ELF_C_READ mode */
	return dwarf_from_elf(elf_memory((char *)buf, len), -1);
}

void sym_dwarf__close(struct sym_dwarf *d)
{
	if (!d)
		return;
	dwarf_end(d->dw);
	elf_end(d->elf);
	rep_strtab__clear(&d->paths);
	if (d->fd >= 0)
		close(d->fd);
	free(d);
}

/* The compile unit covering vaddr: .debug_aranges first, then every CU's ranges (some
 * compilers emit no aranges). */
static int find_cu(Dwarf *dw, uint64_t vaddr, Dwarf_Die *cu)
{
	Dwarf_Off off = 0, next;
	size_t hsize;

	if (dwarf_addrdie(dw, vaddr, cu))
		return 0;
	while (!dwarf_nextcu(dw, off, &next, &hsize, NULL, NULL, NULL)) {
		if (dwarf_offdie(dw, off + hsize, cu) && dwarf_haspc(cu, vaddr) > 0)
			return 0;
		off = next;
	}
	return -ENOENT;
}

static const char *die_name(Dwarf_Die *die)
{
	Dwarf_Attribute a;
	const char *s;

	/* the linkage name demangles to the qualified name with parameters, as the symbol
	 * table spells the function; the plain name is all C has */
	s = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_linkage_name, &a));
	if (!s)
		s = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &a));
	if (!s)
		s = dwarf_diename(die);
	return s ? s : "??";
}

/* Where an inlined subroutine was called from: DW_AT_call_file (an index into the CU's file
 * table) and DW_AT_call_line. */
static void call_site(Dwarf_Die *die, Dwarf_Files *files, size_t nfiles, const char **file,
		      uint32_t *line)
{
	Dwarf_Attribute a;
	Dwarf_Word w;

	*file = NULL;
	*line = 0;
	if (files && dwarf_formudata(dwarf_attr(die, DW_AT_call_file, &a), &w) == 0 && w < nfiles)
		*file = dwarf_filesrc(files, w, NULL, NULL);
	if (dwarf_formudata(dwarf_attr(die, DW_AT_call_line, &a), &w) == 0 && w <= UINT32_MAX)
		*line = w;
}

/*
 * DWARF 5 line tables name files relative to the compile directory; print them as addr2line
 * does, absolute, so that a name means the same whichever directory the report runs in.
 */
static const char *abs_path(struct sym_dwarf *d, Dwarf_Die *cu, const char *name)
{
	Dwarf_Attribute a;
	const char *dir;
	char *s;
	int64_t id;

	if (!name || name[0] == '/')
		return name;
	dir = dwarf_formstring(dwarf_attr(cu, DW_AT_comp_dir, &a));
	if (!dir || !*dir || asprintf(&s, "%s/%s", dir, name) < 0)
		return name;
	id = rep_strtab__intern(&d->paths, s);
	free(s);
	return id < 0 ? name : rep_strtab__str(&d->paths, id);
}

/* Tags without address ranges that can hold functions (C++ namespaces and classes). */
static bool is_container(int tag)
{
	return tag == DW_TAG_namespace || tag == DW_TAG_class_type ||
	       tag == DW_TAG_structure_type || tag == DW_TAG_union_type || tag == DW_TAG_module;
}

static bool has_ranges(int tag)
{
	return tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine ||
	       tag == DW_TAG_lexical_block || tag == DW_TAG_try_block || tag == DW_TAG_catch_block;
}

/*
 * The chain of inlined subroutines at pc, outermost first, below parent. dwarf_getscopes()
 * cannot give it: past the innermost inlined instance it continues with that function's
 * abstract definition (what variable lookup wants), not with its concrete callers. So walk down
 * from the compile unit through the DIEs whose ranges hold pc.
 */
static uint32_t inline_chain(Dwarf_Die *parent, uint64_t pc, Dwarf_Die *out, uint32_t max,
			     uint32_t n, int depth)
{
	Dwarf_Die child;

	/* a hostile file could nest without end */
	if (depth > 64 || dwarf_child(parent, &child))
		return n;
	do {
		int tag = dwarf_tag(&child);

		if (is_container(tag))
			n = inline_chain(&child, pc, out, max, n, depth + 1);
		else if (has_ranges(tag) && dwarf_haspc(&child, pc) > 0) {
			if (tag == DW_TAG_inlined_subroutine && n < max)
				out[n++] = child;
			return inline_chain(&child, pc, out, max, n, depth + 1);
		}
	} while (dwarf_siblingof(&child, &child) == 0);
	return n;
}

int sym_dwarf__lookup(struct sym_dwarf *d, uint64_t vaddr, struct sym_dwarf_frame *out,
		      uint32_t max, const char **file, uint32_t *line)
{
	Dwarf_Die cu, chain[64];
	Dwarf_Files *files = NULL;
	Dwarf_Line *l;
	size_t nfiles = 0;
	const char *f = NULL;
	uint32_t n, i, ln = 0;
	int lineno;

	*file = NULL;
	*line = 0;
	if (!d || find_cu(d->dw, vaddr, &cu))
		return -ENOENT;
	l = dwarf_getsrc_die(&cu, vaddr);
	if (l) {
		f = abs_path(d, &cu, dwarf_linesrc(l, NULL, NULL));
		if (!dwarf_lineno(l, &lineno) && lineno > 0)
			ln = lineno;
	}
	if (dwarf_getsrcfiles(&cu, &files, &nfiles))
		files = NULL;
	n = inline_chain(&cu, vaddr, chain, max < 64 ? max : 64, 0, 0);
	/* innermost first: each level's position is inside it, then the next outer function is at
	 * its call site */
	for (i = 0; i < n; i++) {
		Dwarf_Die *die = &chain[n - 1 - i];

		out[i].name = die_name(die);
		out[i].file = f;
		out[i].line = ln;
		call_site(die, files, nfiles, &f, &ln);
		f = abs_path(d, &cu, f);
	}
	*file = f;
	*line = ln;
	return n;
}
