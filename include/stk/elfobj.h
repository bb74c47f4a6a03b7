/* SPDX-License-Identifier: MIT */
/*
 * elfobj.h: API of symbolize/ (libstksym.a), the ELF reading both tools need: an object's
 * build-id, loadable segments and function symbols, and the one search for its separate debug
 * file. stkrec reads the objects of traced processes with it (what it embeds in a capture),
 * stkreport the objects a capture names; each keeps what it builds from them (an OBJECTS record,
 * a symbolizer's object cache) and its own policy for which files it may open.
 *
 * Needs libelf and libdw (dwelf), and format/ (libstkcap.a): cap_symbol_prefer() is the one rule
 * choosing a name among aliases, cap_open_regular() and cap_file_crc32() read files others may
 * control. Nothing here prints or keeps global state; libelf's rules hold for thread safety (one
 * call per Elf at a time). Callers call elf_version(EV_CURRENT) before elf_begin().
 */
#ifndef STK_ELFOBJ_H
#define STK_ELFOBJ_H

#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

#include <stk/capture.h>

/* ---- one ELF image (elf.c) ---------------------------------------------------------------- */

/* e's GNU build-id copied to id: its length, 0 when it has none or one over CAP_BUILD_ID_MAX. */
uint32_t elfobj_build_id(Elf *e, uint8_t id[CAP_BUILD_ID_MAX]);

/* Lower-case hex of id into hex (2 * len + 1 bytes). */
void elfobj_hex(const uint8_t *id, uint32_t len, char *hex);

/* The first section of this type (SHT_*), its header in *sh; NULL when there is none. */
Elf_Scn *elfobj_section(Elf *e, uint32_t type, GElf_Shdr *sh);

/*
 * The first section called name that has bytes in the file (not SHT_NOBITS), its header in *sh;
 * NULL when there is none.
 */
Elf_Scn *elfobj_scn_named(Elf *e, const char *name, GElf_Shdr *sh);
/* The bytes of that section (elfobj_scn_named()); NULL without. Lent by e until elf_end(). */
Elf_Data *elfobj_section_named(Elf *e, const char *name, GElf_Shdr *sh);

/* Whether e carries DWARF debug information (.debug_info, or the old .zdebug_info) with bytes in
 * the file: what source lines and inline chains are read from. */
bool elfobj_has_dwarf(Elf *e);

/* A loadable (PT_LOAD) segment: file offset, link address, sizes, PF_* flags. */
struct elfobj_segment {
	uint64_t offset, vaddr, filesz, memsz;
	uint32_t flags;
};

/*
 * e's loadable segments in program header order: *segs (malloc'ed, never NULL on success; the
 * caller frees it) holds *n of them. 0, or -ENOMEM. Without program headers (a debug file may
 * have none that load) *n is 0.
 */
int elfobj_segments(Elf *e, struct elfobj_segment **segs, uint32_t *n);

/* ---- function symbols (syms.c) ----------------------------------------------------------- */

/*
 * A function symbol that may name addr; c.name (raw, with its version) is lent by its Elf, or by
 * the list (a PLT stub's).
 */
struct elfobj_sym {
	uint64_t addr;
	struct cap_symbol_cand c;
	bool label;		/* a sizeless STT_NOTYPE symbol in code (hand-written assembly) */
	uint64_t end;		/* a sizeless symbol's section's end (0: unknown) */
};

/* A growing list of function symbols, zero-initialized; elfobj_syms_clear() frees it. */
struct elfobj_syms {
	struct elfobj_sym *v;
	uint32_t n, cap;
	char **names;		/* the names the list owns (elfobj_syms_add_plt()) */
	uint32_t nnames;
};

/*
 * Append the defined functions (STT_FUNC, STT_GNU_IFUNC, at a non-zero address, with a name) and
 * code labels (sizeless STT_NOTYPE symbols in an executable section) of e's first section of this type (SHT_SYMTAB or SHT_DYNSYM) to l. limit (0: none) bounds the
 * bytes of the table and of its strings: a larger one adds nothing (a file read with ELF_C_READ
 * is read into memory section by section). Returns how many were added, or -ENOMEM. The names
 * are lent by e: l must not outlive it.
 */
int elfobj_syms_add(struct elfobj_syms *l, Elf *e, uint32_t type, uint64_t limit);

/*
 * Append a symbol NAME@plt (CAP_SYMBOL_PLT) for each x86-64 PLT stub of e (.plt, .plt.sec,
 * .plt.got), NAME the symbol of the GOT slot it jumps through (R_X86_64_JUMP_SLOT, GLOB_DAT) or,
 * for a lazy-binding stub of .plt that only pushes its relocation's index, of that relocation:
 * the entry's size, binding local (a real symbol at the address wins). The names are l's. A
 * section that cannot be read adds nothing. Returns how many were added, or -ENOMEM.
 */
int elfobj_syms_add_plt(struct elfobj_syms *l, Elf *e);

/*
 * Sort l by address and keep one symbol per address: of aliases, the one cap_symbol_prefer()
 * puts first (format.md 4.8), so that both tools name an address alike. A label inside a sized
 * symbol is dropped. A sizeless symbol gets a size: up to the next symbol or the end of its
 * section, whichever comes first (_init's must not name the PLT after it).
 */
void elfobj_syms_unique(struct elfobj_syms *l);

/* Free l's array and the names it owns, and empty it; takes an empty list. */
void elfobj_syms_clear(struct elfobj_syms *l);

/* ---- separate debug files (debugfile.c) -------------------------------------------------- */

#define ELFOBJ_DEBUG_ROOT "/usr/lib/debug"
#define ELFOBJ_DEBUG_CACHES 2

/* Where debug files are looked for. An empty string or NULL: no such place. */
struct elfobj_debug_dirs {
	char root[PATH_MAX];			/* the system's, ELFOBJ_DEBUG_ROOT */
	char cache[ELFOBJ_DEBUG_CACHES][PATH_MAX];	/* debuginfod client caches */
	const char *symfs;		/* a copy of another file system (stkreport --symfs) */
	const char *const *dirs;	/* more debug roots (stkreport --debug-dir), each also */
	int ndirs;			/* searched as a copy of the file system */
};

/*
 * stkrec's places: ELFOBJ_DEBUG_ROOT, and the debuginfod client caches of the environment
 * ($DEBUGINFOD_CACHE_PATH, else $XDG_CACHE_HOME/debuginfod_client, else
 * $HOME/.cache/debuginfod_client) and of root. No symfs, no more dirs.
 */
void elfobj_debug_dirs_default(struct elfobj_debug_dirs *d);

/* The object whose debug file is looked for; everything is borrowed for the call. */
struct elfobj_debug_want {
	const char *path;	/* its path (absolute); NULL: none usable (another namespace) */
	const uint8_t *build_id;	/* its GNU build-id (never a pseudo id) */
	uint32_t build_id_len;	/* 0: none */
	const char *debuglink;	/* its .gnu_debuglink name, NULL or "" if none */
	uint32_t crc;		/* the CRC32 in its .gnu_debuglink */
};

/* What a candidate is (elfobj_debug_search()'s try callback). */
#define ELFOBJ_CAND_LINK 0x1	/* named by the debuglink: without a build-id, the CRC decides */
#define ELFOBJ_CAND_ROOT 0x2	/* under d->root, which root owns: symbolic links may be followed */

/*
 * Offer each candidate file for w's debug file to try(arg, file, ELFOBJ_CAND_*), in this order,
 * until try returns non-zero:
 *   SYMFS/ROOT/.build-id/xx/rest.debug; each DIR/.build-id/xx/rest.debug and DIR/PATH;
 *   ROOT/.build-id/xx/rest.debug                    by the build-id (2 bytes or more)
 *   SYMFS/D/LINK, SYMFS/D/.debug/LINK, D/LINK, D/.debug/LINK, each DIR/D/LINK,
 *   SYMFS/ROOT/D/LINK, ROOT/D/LINK                  by the debuglink name (gdb's directories)
 *   CACHE/BUILD-ID/debuginfo                        in debuginfod client caches
 * ROOT is d->root, DIR each of d->dirs, D the directory of w->path; a debuglink with a '/' (or
 * "." or "..") is no file name and is not followed. A name over PATH_MAX is skipped. file is
 * lent for the call. Returns what try returned last (0 when no candidate was taken). try decides
 * what it opens and checks: the candidates are only names.
 */
int elfobj_debug_search(const struct elfobj_debug_dirs *d, const struct elfobj_debug_want *w,
			int (*try)(void *arg, const char *file, unsigned int kind), void *arg);

/*
 * Open w's debug file as stkrec may, root, reading files others can write: a candidate is
 * used only when it is a regular file (never a FIFO or device, never blocking) of at most 2 GiB
 * with a .symtab and w's build-id, or, found by the debuglink without a build-id, the link's
 * CRC32; symbolic links are followed only under d->root. Read with pread (ELF_C_READ), never
 * mapped, so a file truncated meanwhile cannot fault the caller. Returns the descriptor with *e
 * its ELF (the caller calls elf_end(*e), then closes it), or -ENOENT.
 */
int elfobj_debug_open(const struct elfobj_debug_dirs *d, const struct elfobj_debug_want *w,
		      Elf **e);

#endif /* STK_ELFOBJ_H */
