/* SPDX-License-Identifier: MIT */
/*
 * symbolize.h: addresses to names, offline, from what the capture carries.
 *
 * Kernel frames: the capture's kernel symbol table (struct sym_kernel), binary search.
 * User frames: process record -> mapping containing the address -> file offset
 * (addr - start + pgoff) -> ELF virtual address through the PT_LOAD segment holding that offset
 * (the same math for PIE and non-PIE objects) -> symbol from .symtab, else .dynsym.
 * Objects come from the capture's embedded copies (OBJECTS records, by build-id) first, else from
 * files: SYMFS + path, the recorded path, separate debug files (.build-id/xx/rest.debug,
 * .gnu_debuglink), MiniDebugInfo, debuginfod (see docs/stkreport.1, "How symbols are found").
 * A file whose GNU build-id differs from the recorded one is never used. Objects are cached by
 * (path, build-id). Source lines and inlined functions come from libdw, names are demangled
 * with libiberty, JIT frames are named from the capture's perf maps, interpreter frames (Python)
 * from its CODES records.
 *
 * A frame that cannot be named carries a reason (enum sym_reason) instead of a name.
 */
#ifndef REP_SYMBOLIZE_H
#define REP_SYMBOLIZE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <stk/capture.h>
#include <stk/elfobj.h>

enum sym_reason {
	SYM_OK = 0,
	SYM_R_NO_MAPS,		/* process exited before its maps were read, or no process record */
	SYM_R_OUTSIDE,		/* address outside every mapping of the process */
	SYM_R_SPECIAL,		/* vdso, JIT or other mapping without a file to read */
	SYM_R_NOT_FOUND,	/* object file not found (or not a readable ELF file) */
	SYM_R_BUILD_ID,		/* object found, but its build-id differs from the recorded one */
	SYM_R_NO_SYMBOLS,	/* no symbol table, or no symbol covers the address */
	SYM_R_KSYMS_HIDDEN,	/* kallsyms showed zeros when recorded (kptr_restrict) */
	SYM_R_NO_KSYMS,		/* the capture has no kallsyms snapshot */
	SYM_R_BUDGET,		/* the symbol table would exceed the memory budget (--max-memory) */
	SYM_R_CODE,		/* an interpreter frame whose code object has no names (format.md 4.11) */
	SYM_R__COUNT
};

/* Short human name of a reason ("build-id mismatch"), never NULL. */
const char *sym_reason_name(unsigned int reason);

/* A function inlined at an address (libdw), with the source location inside it. */
struct sym_inline {
	const char *name;	/* demangled unless told otherwise */
	const char *file;	/* NULL when unknown */
	uint32_t line;		/* 0 when unknown */
};

/*
 * Result of one lookup. Strings and build_id are lent by the symbolizer until its __free; the inl
 * array until the next lookup.
 */
struct sym_result {
	enum sym_reason reason;
	const char *name;	/* NULL when reason != SYM_OK; demangled unless told otherwise */
	uint64_t offset;	/* raw address - symbol start */
	const char *module;	/* basename of the object or "[vdso]"..., a kernel module's
				 * name; NULL if none (the kernel image) */
	const char *module_path;	/* the object's recorded path, NULL if none */
	uint64_t module_offset;	/* file offset of the address in module */
	const uint8_t *build_id;	/* of the object, NULL if unknown */
	uint32_t build_id_len;
	/* source location of the address in the (outermost, real) function; with lines only */
	const char *file;	/* NULL when unknown */
	uint32_t line;		/* 0 when unknown */
	/*
	 * Functions inlined at this address, innermost first: the address is in inl[0], which was
	 * inlined into inl[1], ..., into the function `name`. Empty unless inlines are wanted.
	 * inl[i].file/line: where in inl[i] the address is; file/line above: where in `name`
	 * the outermost inlined call sits.
	 */
	uint32_t ninl;
	const struct sym_inline *inl;
};

/*
 * Debug data a run may read (stkreport --max-debug), shared by its symbolizers. Compressed debug
 * sections inflate up to a thousandfold, and DWARF lookups walk what they find, so a small
 * hostile capture could ask for minutes of work per embedded object. The cost is counted in
 * bytes, deterministically (reports stay reproducible): each byte decompressed (DWARF sections,
 * .gnu_debugdata) counts one, each DWARF unit, entry or address range visited
 * SYM_DEBUG_VISIT_COST. Past the limit an object's debug data is left unread: its frames keep
 * their symbol names, without source lines, inlined functions or MiniDebugInfo's local symbols.
 * Not thread-safe.
 */
#define SYM_DEBUG_VISIT_COST 64u	/* about what a visit costs in time against a byte inflated */

struct sym_debug_budget {
	uint64_t limit;		/* 0: no limit */
	uint64_t used;
	uint64_t inflated;	/* bytes decompressed (counted in used) */
	uint32_t objects;	/* DWARF opened or .gnu_debugdata decompressed */
	uint32_t skipped;	/* objects whose debug data was left unread, in whole or in part */
};

/* What the symbolizer looks for and where (stkreport's options). */
struct sym_user_opts {
	/* the roots: copied by sym_user__new(), the caller's may go once it returns */
	const char *symfs;		/* --symfs DIR, or NULL */
	const char *const *debug_dirs;	/* --debug-dir DIRs */
	int ndebug_dirs;
	bool open_files;		/* false: never touch the file system (fuzzing) */
	bool lines;			/* fill file/line */
	bool inlines;			/* fill inl */
	bool demangle;			/* C++ and Rust names demangled */
	/* embedded objects and JIT maps from the capture(s); borrowed until __free */
	const struct cap_object *const *objects;
	uint32_t nobjects;
	const struct cap_perfmap *const *perfmaps;
	uint32_t nperfmaps;
	/* budgets of the run, borrowed until __free (NULL: no limit): symbol tables and copies of
	 * embedded objects are taken from memory; debug data is read within debug */
	struct cap_budget *memory;
	struct sym_debug_budget *debug;
};

/* ---- kernel -------------------------------------------------------------------------------- */

struct sym_kernel;

/*
 * Index a kernel symbol table (format.md 4.10; NULL: none recorded). Borrows ks until __free.
 * NULL + ENOMEM.
 */
struct sym_kernel *sym_kernel__new(const struct cap_ksyms *ks);
void sym_kernel__free(struct sym_kernel *k);
/*
 * Name the kernel address addr: the symbol at or below it, if its size (KSYMS_ADD) reaches addr;
 * one without a size (KSYMS) reaches up to the next symbol, the last one past the end.
 */
void sym_kernel__lookup(const struct sym_kernel *k, uint64_t addr, struct sym_result *res);

/* ---- one ELF object ------------------------------------------------------------------------ */

struct sym_symbol {
	uint64_t addr, size;
	const char *name;
};

/*
 * Loadable segments, symbols sorted by address (one per address, as format.md 4.8 chooses it),
 * build-id. Names are copied out of the file, without their symbol version (format.md 4.8).
 */
struct sym_elf {
	uint32_t nsegs, nsyms;
	struct elfobj_segment *segs;	/* PT_LOAD */
	struct sym_symbol *syms;
	char *names;
	uint32_t build_id_len;
	uint8_t build_id[CAP_BUILD_ID_MAX];
	bool full_symtab;	/* from a .symtab (a debug file's too) or .gnu_debugdata */
	bool from_debugdata;	/* .gnu_debugdata (MiniDebugInfo) added the local functions */
	bool has_dwarf;		/* the file has .debug_info (lines and inlines possible) */
	char *debuglink;	/* .gnu_debuglink file name, or NULL */
	uint32_t debuglink_crc;	/* its CRC32 of the debug file */
	uint64_t bytes;		/* heap bytes of segs, syms and names (for the memory budget) */
};

/* Read path. NULL with errno: open() errors, ENOEXEC not an ELF file, ENOMEM. */
struct sym_elf *sym_elf__open(const char *path);
/* The same, decompressing .gnu_debugdata within debug (NULL: up to CAP_MAX_CHUNK_RAW). */
struct sym_elf *sym_elf__open_debug(const char *path, struct sym_debug_budget *debug);
void sym_elf__close(struct sym_elf *e);
/*
 * from's symbols replace e's (a stripped object's: its separate debug file's .symtab, or a
 * record's), but for e's PLT stubs (CAP_SYMBOL_PLT), which only e's relocations name: they stay
 * where from has no symbol. from keeps none. 0, or -ENOMEM with e unchanged.
 */
int sym_elf__take_symbols(struct sym_elf *e, struct sym_elf *from);

/* File offset -> virtual address through the segment containing it. 0, or -ENOENT if none. */
int sym_segments_to_vaddr(const struct elfobj_segment *segs, uint32_t nsegs, uint64_t off,
			  uint64_t *vaddr);
/* The symbol containing vaddr, or NULL. syms sorted by addr. */
const struct sym_symbol *sym_symbols_find(const struct sym_symbol *syms, uint32_t nsyms,
					  uint64_t vaddr);

/* ---- user space ---------------------------------------------------------------------------- */

struct sym_user;

/*
 * o is copied; what it points to is borrowed until __free. open_files false: never open an
 * object (every file frame without an embedded copy is "object not found"; the fuzzer keeps off
 * the host's files). NULL + ENOMEM.
 */
struct sym_user *sym_user__new(const struct sym_user_opts *o);
void sym_user__free(struct sym_user *u);
/*
 * Name addr in process proc (NULL: no record). is_return: addr is a return address (non-leaf
 * frame), so addr - 1 is looked up; offsets stay relative to the raw address.
 */
void sym_user__lookup(struct sym_user *u, const struct cap_process *proc, uint64_t addr,
		      bool is_return, struct sym_result *res);

/*
 * What the name of addr in proc depends on, for caching: *obj (an opaque token: the object, a
 * special mapping, or a "no object" outcome) and *off (the file offset in it). Two frames with
 * equal (obj, off, is_return) get equal results from sym_user__lookup(), whatever their process:
 * libc frames of a thousand processes are symbolized once. Returns 0 or -ENOMEM.
 */
int sym_user__locate(struct sym_user *u, const struct cap_process *proc, uint64_t addr,
		     bool is_return, const void **obj, uint64_t *off);

/* ---- interpreter frames (sym_codes.c) ------------------------------------------------------ */
/*
 * From a capture's CODES records (format.md 4.11) alone: a report needs no interpreter, process
 * or file. Not thread-safe.
 */

/* Sort CODES entries by id, for sym_code_find(). */
void sym_codes_sort(const struct cap_code **codes, uint32_t n);
/* The entry of id among codes (sorted by sym_codes_sort()), or NULL. Lent from codes. */
const struct cap_code *sym_code_find(const struct cap_code *const *codes, uint32_t n, uint32_t id);
/*
 * The line code c executes at instruction offset off (a CAP_CODE_FRAME's): the last line run
 * starting at or before off; the first line when off is CAP_CODE_OFF_NONE or no run holds it.
 */
uint32_t sym_code_line(const struct cap_code *c, uint32_t off);

#endif /* REP_SYMBOLIZE_H */
