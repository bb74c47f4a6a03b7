// SPDX-License-Identifier: MIT
/*
 * sym_dwarf.c: source lines and inlined-function chains from DWARF, with libdw (see
 * sym_internal.h). The walk is the one eu-addr2line -i does: the compile unit holding the
 * address, the line table row for it (the position in the innermost inlined function), then
 * the scopes around it from the inside out, where each DW_TAG_inlined_subroutine names the
 * function inlined there and its DW_AT_call_file/DW_AT_call_line say where the next outer
 * function called it.
 *
 * Bounded work (symbolize.h, struct sym_debug_budget): opening takes the sizes the compressed
 * debug sections declare from the debug budget before libdw inflates them, and lookups count
 * every unit, entry and address range they visit in it, and the bytes of the entries libdw
 * skips to find a sibling (SKIP_COST a byte). Compile units are found through .debug_aranges,
 * else through an index of every unit's address ranges built once (clang emits no aranges by
 * default), and the scopes below a unit through an index of each scope's children by range,
 * built the first time a lookup goes through the scope: a walk over every unit, or over a
 * scope's children, for each address would make the time the product of two things the input
 * controls (an embedded object whose every address passed one block of 16M childless entries,
 * 6 KB on disk, took 40 s for 200 addresses).
 */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <gelf.h>
#include <stdio.h>
#include <fcntl.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "stk/htab.h"
#include "sym_internal.h"

/* An address range [lo, hi) of a DIE (a compile unit, or a function in one) at offset die. */
struct die_range {
	uint64_t lo, hi;
	Dwarf_Off die;
};

/* Ranges of DIEs, sorted by lo, then die. */
struct range_index {
	struct die_range *r;
	size_t n, cap;
	bool cut;		/* the debug budget ran out while it was built */
};

/*
 * How far back from the last range starting at or below an address a lookup looks: ranges of
 * distinct units, or of distinct functions, do not overlap in real DWARF, so one is enough.
 */
#define LOOK_BACK 16u

/* The children with ranges of one scope (a compile unit, function, block...), by range. */
struct scope_index {
	Dwarf_Off die;
	struct range_index index;
};

/*
 * What libdw's sibling search costs per byte of the entries it skips, when an entry has
 * children and no DW_AT_sibling: it reads every one of them. A byte inflated counts one; an
 * entry takes one byte at least, and a visit SYM_DEBUG_VISIT_COST.
 */
#define SKIP_COST 4u

struct sym_dwarf {
	int fd;
	Elf *elf;
	Dwarf *dw;
	struct rep_strtab paths;	/* file names made absolute */
	struct sym_debug_budget *debug;
	struct range_index cus;		/* units by range, without .debug_aranges */
	bool cus_indexed;
	/* per scope a lookup went through: its children by range (scopes_of: DIE offset -> index) */
	struct scope_index *scopes;
	uint32_t nscopes, scopes_cap;
	struct rep_htab scopes_of;
};

/*
 * Bytes libdw inflates to open elf's DWARF: every compressed section (SHF_COMPRESSED), by the
 * size its compression header declares, and every .zdebug_* section by its "ZLIB" header's.
 * Declared sizes bound the work: libelf inflates into a buffer of that size and no further.
 */
static uint64_t inflate_cost(Elf *elf)
{
	Elf_Scn *scn = NULL;
	uint64_t total = 0, n;
	size_t shstrndx;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return 0;
	while ((scn = elf_nextscn(elf, scn))) {
		const uint8_t *h;
		const char *name;
		Elf_Data *raw;
		GElf_Shdr sh;
		GElf_Chdr ch;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS)
			continue;
		n = 0;
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (sh.sh_flags & SHF_COMPRESSED) {
			if (gelf_getchdr(scn, &ch))
				n = ch.ch_size;
		} else if (name && !strncmp(name, ".zdebug", 7) &&
			   (raw = elf_rawdata(scn, NULL)) && raw->d_buf && raw->d_size >= 12 &&
			   !memcmp(raw->d_buf, "ZLIB", 4)) {
			/* GNU .zdebug: "ZLIB", then the size as 8 big-endian bytes */
			h = (const uint8_t *)raw->d_buf + 4;
			for (int i = 0; i < 8; i++)
				n = n << 8 | h[i];
		}
		total = n > UINT64_MAX - total ? UINT64_MAX : total + n;
	}
	return total;
}

static struct sym_dwarf *dwarf_from_elf(Elf *elf, int fd, struct sym_debug_budget *debug)
{
	struct sym_dwarf *d = NULL;
	Dwarf *dw = NULL;
	int err = ENOENT;

	if (!elf || elf_kind(elf) != ELF_K_ELF)
		goto fail;
	if (!sym_debug_inflate(debug, inflate_cost(elf))) {
		err = EFBIG;
		goto fail;
	}
	dw = dwarf_begin_elf(elf, DWARF_C_READ, NULL);
	if (!dw)
		goto fail;
	d = calloc(1, sizeof(*d));
	if (!d)
		goto fail;
	d->fd = fd;
	d->elf = elf;
	d->dw = dw;
	d->debug = debug;
	return d;
fail:
	if (dw)
		dwarf_end(dw);
	if (elf)
		elf_end(elf);
	if (fd >= 0)
		close(fd);
	errno = err;
	return NULL;
}

struct sym_dwarf *sym_dwarf__open(const char *path, struct sym_debug_budget *debug)
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
	return dwarf_from_elf(elf_begin(fd, ELF_C_READ_MMAP, NULL), fd, debug);
}

struct sym_dwarf *sym_dwarf__open_mem(const void *buf, size_t len,
				      struct sym_debug_budget *debug)
{
	elf_version(EV_CURRENT);
	/* libelf takes a non-const image but only reads it in ELF_C_READ mode */
	return dwarf_from_elf(elf_memory((char *)buf, len), -1, debug);
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
	free(d->cus.r);
	for (uint32_t i = 0; i < d->nscopes; i++)
		free(d->scopes[i].index.r);
	free(d->scopes);
	rep_htab__clear(&d->scopes_of);
	free(d);
}

static int range_cmp(const void *a, const void *b)
{
	const struct die_range *x = a, *y = b;

	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	return x->die < y->die ? -1 : x->die > y->die;
}

/*
 * Add the ranges of die to ix, each costing SYM_DEBUG_VISIT_COST (an index holds 24 bytes per
 * range: its memory stays below the budget too). false when the budget ran out (ix->cut set)
 * or memory did.
 */
static bool index_ranges(struct sym_dwarf *d, struct range_index *ix, Dwarf_Die *die)
{
	Dwarf_Addr base, lo, hi;
	ptrdiff_t it = 0;

	while ((it = dwarf_ranges(die, it, &base, &lo, &hi)) > 0) {
		if (!sym_debug_take(d->debug, SYM_DEBUG_VISIT_COST)) {
			ix->cut = true;
			return false;
		}
		if (lo >= hi)
			continue;
		if (ix->n == ix->cap) {
			size_t ncap = ix->cap ? ix->cap * 2 : 64;
			struct die_range *v = realloc(ix->r, ncap * sizeof(*v));

			if (!v) {
				ix->cut = true;	/* what is indexed serves */
				return false;
			}
			ix->r = v;
			ix->cap = ncap;
		}
		ix->r[ix->n++] = (struct die_range){ lo, hi, dwarf_dieoffset(die) };
	}
	return true;
}

/*
 * The DIE of ix holding vaddr: of the ranges starting at or below it, the nearest LOOK_BACK;
 * where several hold it (hostile input), the first DIE in the file wins, as a walk over the
 * DIEs in order would find it. 0, -ENOENT, or -EFBIG when ix was cut short.
 */
static int index_find(const struct range_index *ix, uint64_t vaddr, Dwarf_Off *die)
{
	Dwarf_Off best = (Dwarf_Off)-1;
	size_t lo = 0, hi = ix->n, i, tries;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (ix->r[mid].lo <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (i = lo, tries = 0; i > 0 && tries < LOOK_BACK; i--, tries++)
		if (vaddr < ix->r[i - 1].hi && ix->r[i - 1].die < best)
			best = ix->r[i - 1].die;
	if (best != (Dwarf_Off)-1) {
		*die = best;
		return 0;
	}
	return ix->cut ? -EFBIG : -ENOENT;
}

static void index_sort(struct range_index *ix)
{
	if (ix->n)
		qsort(ix->r, ix->n, sizeof(*ix->r), range_cmp);
}

/* Every compile unit's address ranges, once; a unit visited costs SYM_DEBUG_VISIT_COST. */
static void index_cus(struct sym_dwarf *d)
{
	Dwarf_Off off = 0, next;
	size_t hsize;

	d->cus_indexed = true;
	while (!dwarf_nextcu(d->dw, off, &next, &hsize, NULL, NULL, NULL)) {
		Dwarf_Die cu;

		if (!sym_debug_take(d->debug, SYM_DEBUG_VISIT_COST)) {
			d->cus.cut = true;
			break;
		}
		if (dwarf_offdie(d->dw, off + hsize, &cu) && !index_ranges(d, &d->cus, &cu))
			break;
		off = next;
	}
	index_sort(&d->cus);
}

/*
 * The compile unit covering vaddr: .debug_aranges first, then the index of every unit's
 * ranges. 0, -ENOENT, or -EFBIG when the budget cut the index short.
 */
static int find_cu(struct sym_dwarf *d, uint64_t vaddr, Dwarf_Die *cu)
{
	Dwarf_Off off;
	int err;

	if (dwarf_addrdie(d->dw, vaddr, cu))
		return 0;
	if (!d->cus_indexed)
		index_cus(d);
	err = index_find(&d->cus, vaddr, &off);
	if (err)
		return err;
	return dwarf_offdie(d->dw, off, cu) ? 0 : -ENOENT;
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

/* Longest directory or file name joined (a hostile unit may hold names of megabytes). */
#define PATH_PART_MAX 4096

/*
 * DWARF 5 line tables name files relative to the compile directory; print them as addr2line
 * does, absolute, so that a name means the same whichever directory the report runs in. Each
 * part is cut at PATH_PART_MAX bytes: a lookup must not cost what a hostile name's length is
 * (the resolver cuts what frames carry further, resolve.c).
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
	if (!dir || !*dir || asprintf(&s, "%.*s/%.*s", PATH_PART_MAX, dir, PATH_PART_MAX, name) < 0)
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
 * The next sibling of die into die: false at the last one, or when the debug budget ran out
 * (*cut). Without DW_AT_sibling, libdw reads every entry below die to find it: those bytes are
 * charged, SKIP_COST each.
 */
static bool next_sibling(struct sym_dwarf *d, Dwarf_Die *die, bool *cut)
{
	bool walks = dwarf_haschildren(die) > 0 && !dwarf_hasattr(die, DW_AT_sibling);
	Dwarf_Off from = dwarf_dieoffset(die);

	if (dwarf_siblingof(die, die) != 0)
		return false;
	if (walks && !sym_debug_take(d->debug, (dwarf_dieoffset(die) - from) * SKIP_COST)) {
		*cut = true;
		return false;
	}
	return true;
}

/*
 * The children with ranges of parent, as a walk down to an address would meet them: through
 * namespaces and classes. Each DIE visited costs SYM_DEBUG_VISIT_COST.
 */
static void collect_scopes(struct sym_dwarf *d, Dwarf_Die *parent, struct range_index *ix,
			   int depth)
{
	Dwarf_Die child;

	if (depth > 64 || dwarf_child(parent, &child))
		return;
	do {
		int tag;

		if (!sym_debug_take(d->debug, SYM_DEBUG_VISIT_COST)) {
			ix->cut = true;
			return;
		}
		tag = dwarf_tag(&child);
		if (is_container(tag))
			collect_scopes(d, &child, ix, depth + 1);
		else if (has_ranges(tag))
			index_ranges(d, ix, &child);
		if (ix->cut)
			return;
	} while (next_sibling(d, &child, &ix->cut));
}

struct scope_key {
	const struct sym_dwarf *d;
	Dwarf_Off die;
};

static bool scope_eq(const void *ctx, uint32_t val)
{
	const struct scope_key *k = ctx;

	return k->d->scopes[val].die == k->die;
}

/*
 * The children of scope die by range, indexed on its first lookup: each lookup then descends
 * through the one child holding the address instead of walking them all (a C++ unit has tens of
 * thousands of entries in its namespaces and classes). NULL when out of memory.
 */
static struct range_index *scopes_of(struct sym_dwarf *d, Dwarf_Die *die)
{
	struct scope_key key = { d, dwarf_dieoffset(die) };
	uint64_t h = rep_hash_u64(0, key.die);
	struct scope_index *s;
	uint32_t id;

	if (rep_htab__find(&d->scopes_of, h, scope_eq, &key, &id))
		return &d->scopes[id].index;
	if (d->nscopes == d->scopes_cap) {
		uint32_t cap = d->scopes_cap ? d->scopes_cap * 2 : 16;
		struct scope_index *v = realloc(d->scopes, cap * sizeof(*v));

		if (!v)
			return NULL;
		d->scopes = v;
		d->scopes_cap = cap;
	}
	if (rep_htab__insert(&d->scopes_of, h, d->nscopes))
		return NULL;
	s = &d->scopes[d->nscopes++];
	*s = (struct scope_index){ .die = key.die };
	collect_scopes(d, die, &s->index, 0);
	index_sort(&s->index);
	return &s->index;
}

/*
 * The chain of inlined subroutines at pc below parent, outermost first, into out[n..max).
 * dwarf_getscopes() cannot give it: past the innermost inlined instance it continues with that
 * function's abstract definition (what variable lookup wants), not with its concrete callers.
 * So go down from the compile unit through the scopes whose ranges hold pc, each found in its
 * parent's index (scopes_of()). *cut: the debug budget ran out, the chain is worthless.
 */
static uint32_t inline_chain(struct sym_dwarf *d, Dwarf_Die *parent, uint64_t pc, Dwarf_Die *out,
			     uint32_t max, uint32_t n, bool *cut)
{
	struct range_index *ix;
	Dwarf_Die child;
	Dwarf_Off off;
	int depth, err;

	/* a hostile file could nest without end */
	for (depth = 0; depth <= 64; depth++) {
		ix = scopes_of(d, parent);
		err = ix ? index_find(ix, pc, &off) : -ENOENT;
		*cut = err == -EFBIG;
		if (err || !dwarf_offdie(d->dw, off, &child))
			break;
		if (dwarf_tag(&child) == DW_TAG_inlined_subroutine && n < max)
			out[n++] = child;
		*parent = child;
	}
	return n;
}

int sym_dwarf__lookup(struct sym_dwarf *d, uint64_t vaddr, struct sym_dwarf_frame *out,
		      uint32_t max, const char **file, uint32_t *line)
{
	Dwarf_Die cu, scope, chain[64];
	Dwarf_Files *files = NULL;
	Dwarf_Line *l;
	size_t nfiles = 0;
	const char *f = NULL;
	uint32_t n, i, ln = 0;
	bool cut = false;
	int lineno, err;

	*file = NULL;
	*line = 0;
	if (!d)
		return -ENOENT;
	err = find_cu(d, vaddr, &cu);
	if (err)
		return err;
	l = dwarf_getsrc_die(&cu, vaddr);
	if (l) {
		f = abs_path(d, &cu, dwarf_linesrc(l, NULL, NULL));
		if (!dwarf_lineno(l, &lineno) && lineno > 0)
			ln = lineno;
	}
	if (dwarf_getsrcfiles(&cu, &files, &nfiles))
		files = NULL;
	max = max < 64 ? max : 64;
	scope = cu;
	n = inline_chain(d, &scope, vaddr, chain, max, 0, &cut);
	if (cut)
		return -EFBIG;
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
