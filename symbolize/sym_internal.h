/* SPDX-License-Identifier: MIT */
/*
 * sym_internal.h: the pieces of the symbolizer (symbolize/symbolize.c and symbolize/sym_*.c) that
 * only it uses: finding object and debug files (sym_find.c) and libdebuginfod's functions
 * (sym_debuginfod.c), source lines and inline chains (sym_dwarf.c), demangling
 * (sym_demangle.c) and JIT symbols from perf maps (sym_jit.c).
 */
#ifndef REP_SYM_INTERNAL_H
#define REP_SYM_INTERNAL_H

#include <elfutils/debuginfod.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "stk/symbolize.h"

/* ---- the debug budget (symbolize.h) ------------------------------------------------------ */

/* Take n bytes of work from b: true when they fit (always with NULL), else nothing is taken. */
static inline bool sym_debug_take(struct sym_debug_budget *b, uint64_t n)
{
	if (!b)
		return true;
	if (b->limit && (b->used > b->limit || n > b->limit - b->used))
		return false;
	b->used += n;
	return true;
}

/*
 * One object's debug data inflated, n bytes (libdw's sections, .gnu_debugdata): taken from b,
 * and counted in inflated and objects when they fit. false (nothing counted) when they do not.
 */
static inline bool sym_debug_inflate(struct sym_debug_budget *b, uint64_t n)
{
	if (!sym_debug_take(b, n))
		return false;
	if (b) {
		b->inflated += n;
		b->objects++;
	}
	return true;
}

/* Bytes of work left in b (UINT64_MAX without a limit). */
static inline uint64_t sym_debug_left(const struct sym_debug_budget *b)
{
	if (!b || !b->limit)
		return UINT64_MAX;
	return b->used < b->limit ? b->limit - b->used : 0;
}

/* ---- sym_find.c: where an object's files are -------------------------------------------- */

/* What a search is looking for: the recorded object, and the options saying where to look. */
struct sym_want {
	const char *path;		/* recorded path */
	const uint8_t *build_id;	/* recorded build-id (every candidate must carry it) */
	uint32_t build_id_len;
	const char *debuglink;		/* .gnu_debuglink name, NULL if unknown */
	uint32_t debuglink_crc;		/* its CRC32, valid when has_crc */
	bool has_crc;
};

struct sym_finder;

/* o is borrowed until __free. NULL + ENOMEM. Never fails for a missing debuginfod. */
struct sym_finder *sym_finder__new(const struct sym_user_opts *o);
void sym_finder__free(struct sym_finder *f);

/*
 * The object file itself: SYMFS + path, each debug dir + path, the recorded path, then
 * debuginfod's executable (when DEBUGINFOD_URLS is set). Returns SYM_OK with *out set, else
 * SYM_R_BUILD_ID when some candidate existed but carried another build-id, else
 * SYM_R_NOT_FOUND. *found_path (malloc'ed) names the file used.
 */
enum sym_reason sym_finder__object(struct sym_finder *f, const struct sym_want *w,
				   struct sym_elf **out, char **found_path);

/*
 * A separate debug file for the object: .build-id/xx/rest.debug under SYMFS/usr/lib/debug, each
 * debug dir and /usr/lib/debug; the .gnu_debuglink name beside the object, in .debug/ and under
 * the debug dirs (CRC checked when known); debuginfod. need_dwarf: only a file with DWARF will
 * do (else one with a full .symtab). Returns 0 with *out and *found_path set, or -ENOENT.
 */
int sym_finder__debug(struct sym_finder *f, const struct sym_want *w, bool need_dwarf,
		      struct sym_elf **out, char **found_path);

/* ---- sym_debuginfod.c: libdebuginfod, linked or loaded ---------------------------------- */

/* The functions of libdebuginfod that sym_find.c calls (elfutils/debuginfod.h). */
struct sym_dbgd_api {
	debuginfod_client *(*begin)(void);
	void (*end)(debuginfod_client *c);
	int (*find_debuginfo)(debuginfod_client *c, const unsigned char *id, int len, char **path);
	int (*find_executable)(debuginfod_client *c, const unsigned char *id, int len, char **path);
	void (*set_user_data)(debuginfod_client *c, void *data);
	void *(*get_user_data)(debuginfod_client *c);
	void (*set_progressfn)(debuginfod_client *c, debuginfod_progressfn_t fn);
	void (*free)(void *p);	/* frees the paths find_* return: the library's own free() */
};

/*
 * libdebuginfod's functions, lent for the process's life. The dynamic stkreport links the
 * library and always returns them. The static one (make static) loads it on the first call,
 * which must come after any setenv() of a DEBUGINFOD_* variable (the library's libc copies the
 * environment when it is loaded); when it cannot be used there it prints one warning, on the
 * first call, and returns NULL, then and on every later call. Not thread safe.
 */
const struct sym_dbgd_api *sym_dbgd_api(void);

/* ---- sym_elf.c: ELF reading also used by sym_find.c ------------------------------------ */

/*
 * Read an ELF image in memory (copied: the caller keeps buf). Same as sym_elf__open_debug
 * otherwise. NULL + errno (ENOEXEC, ENOMEM).
 */
struct sym_elf *sym_elf__open_mem(const void *buf, size_t len, struct sym_debug_budget *debug);
/*
 * Whether e carries exactly the build-id id. Without one (len 0) nothing proves a file is the
 * one that ran: only a file that has none either matches.
 */
bool sym_elf__build_id_is(const struct sym_elf *e, const uint8_t *id, uint32_t len);

/* ---- sym_dwarf.c: source lines and inlined functions ----------------------------------- */

struct sym_dwarf;

/*
 * Open the DWARF of a file, or of an image in memory (borrowed until __close). libdw inflates
 * compressed debug sections when it opens them: their sizes (from the section headers) are
 * taken from debug first (NULL: no limit, borrowed until __close), and lookups then count their
 * visits in it. NULL + errno: EFBIG over debug's limit (nothing inflated), others.
 */
struct sym_dwarf *sym_dwarf__open(const char *path, struct sym_debug_budget *debug);
struct sym_dwarf *sym_dwarf__open_mem(const void *buf, size_t len,
				      struct sym_debug_budget *debug);
void sym_dwarf__close(struct sym_dwarf *d);

/* A source position found by sym_dwarf__lookup(); strings lent until sym_dwarf__close(). */
struct sym_dwarf_frame {
	const char *name;	/* raw (linkage name when present) */
	const char *file;
	uint32_t line;
};

/*
 * Source position of vaddr. out[0..n-1]: the inlined functions at vaddr, innermost first, each
 * with the position inside it (as struct sym_inline); *file and *line: the position inside the
 * real function. At most max entries. Returns n (>= 0), -ENOENT when no DWARF covers vaddr, or
 * -EFBIG when the debug budget ran out (nothing returned).
 */
int sym_dwarf__lookup(struct sym_dwarf *d, uint64_t vaddr, struct sym_dwarf_frame *out,
		      uint32_t max, const char **file, uint32_t *line);

/* ---- sym_demangle.c -------------------------------------------------------------------- */

/*
 * Demangled C++ (Itanium ABI) or Rust (legacy and v0) name, malloc'ed, or NULL when name is not
 * mangled (or not demangleable). Parameters included, Rust hashes dropped.
 */
char *sym_demangle(const char *name);

/* ---- sym_jit.c: perf map symbols ------------------------------------------------------- */

struct sym_jit;
struct sym_jit_proc;

/*
 * Index the capture's perf map records by process generation (borrowed until __free), taking
 * the tables from budget (NULL: no limit). Over it, the index has no process (sym_jit__refused()).
 * NULL + ENOMEM.
 */
struct sym_jit *sym_jit__new(const struct cap_perfmap *const *maps, uint32_t n,
			     struct cap_budget *budget);
void sym_jit__free(struct sym_jit *j);
/* Whether the tables were over the memory budget: JIT frames are unnamed for that reason. */
bool sym_jit__refused(const struct sym_jit *j);
/* The JIT symbols of one process generation, or NULL. */
const struct sym_jit_proc *sym_jit__proc(const struct sym_jit *j, uint32_t pid,
					 uint64_t start_time);
/* The symbol holding addr (the latest entry wins where entries overlap), or NULL. */
const struct cap_symbol *sym_jit_proc__find(const struct sym_jit_proc *p, uint64_t addr);

#endif /* REP_SYM_INTERNAL_H */
