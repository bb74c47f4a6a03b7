/* SPDX-License-Identifier: MIT */
/*
 * unwind.h: unwind/, user stacks without frame pointers: the CFI tables of each object (cfi.c)
 * and the tables and processes given to the BPF walker, and its C twin for deferred events
 * (unwind.c).
 */
#ifndef STK_REC_UNWIND_H
#define STK_REC_UNWIND_H

#include <libelf.h>
#include <stdbool.h>
#include <stdint.h>
#include <linux/types.h>

#include "stk/abi.h"
#include "stk/capture.h"

#include "../base/base.h"
#include "../python/python.h"

/* ---- unwind tables for BPF (unwind.c) ------------------------------------------------------ */

/* The tables the BPF walker reads: one per build-id, and each process's mappings. */
struct rec_maps;
struct rec_unwind;
struct rec_utable;

struct rec_unwind_stats {
	uint32_t objects;	/* tables built (one per build-id) */
	uint32_t over_limit;	/* objects whose table did not fit --unwind-memory */
	uint32_t rows;		/* rows of the tables in BPF */
	uint32_t chunks;	/* arrays of unwind_chunks created */
	uint32_t chunk_rows;	/* their rows together */
	uint64_t build_ns;	/* time spent building tables */
	uint64_t published;	/* process mapping lists written to BPF */
};

/* NULL with --unwind fp (every call below takes NULL and does nothing). */
struct rec_unwind *rec_unwind__new(const struct rec_opts *o);
/* Where the processes' interpreters are told (borrowed; NULL: none). */
void rec_unwind__set_python(struct rec_unwind *u, struct rec_python *py);
/* The size of the unwind_chunks map for o: the most chunks --unwind-memory can hold. */
uint32_t rec_unwind_slots(const struct rec_opts *o);
void rec_unwind__free(struct rec_unwind *u);
/* The BPF maps exist now (after load, before attach): tables and processes can go in. */
void rec_unwind__attach(struct rec_unwind *u, const struct rec_maps *maps);
/* The table of object e with this build-id, built on first use. NULL: none can be built. */
struct rec_utable *rec_unwind__table(struct rec_unwind *u, Elf *e, const uint8_t *build_id,
				     uint32_t len);
/* An address the walker met in none of a process's known mappings (0: none). */
struct rec_miss {
	uint64_t addr;
	uint64_t ts_ns;		/* when (CLOCK_MONOTONIC, as bpf_ktime_get_ns()) */
};

/* A read of a process's executable mappings, for rec_unwind__proc(). */
struct rec_uread {
	const struct cap_mapping *maps;	/* sorted by start */
	struct rec_utable *const *tables;	/* tables[i]: the table of maps[i], or NULL */
	uint32_t n;
	uint64_t read_ns;	/* when /proc/PID/maps was opened: a mapping made before is in maps */
	uint64_t image_ns;	/* the image maps are of: when its exec or fork was seen, 0 if never */
	struct rec_miss miss;	/* what the read was asked for */
};

/*
 * Write pid's mappings to the walker's map, uploading tables the first time one is used. A
 * missed address in none of these mappings either settles the process (struct stk_uproc),
 * unless the process exec'd since the walker met it. 0 or -errno.
 */
int rec_unwind__proc(struct rec_unwind *u, uint32_t pid, const struct rec_uread *rd);
/*
 * Before pid's first rec_unwind__proc(): rd is the image the one to be written replaced (of a
 * forked child that exec'd before stkrec read it: a copy of its parent's mappings, from the
 * kernel's fork record). Never written to BPF: rec_unwind__walk() walks a deferred event in it
 * when the event is stamped before the current image and its leaf is in none of the current
 * mappings. Nothing is done when the walker has an image of pid already. 0 or -errno.
 */
int rec_unwind__old_image(struct rec_unwind *u, uint32_t pid, const struct rec_uread *rd);
const struct rec_unwind_stats *rec_unwind__stats(const struct rec_unwind *u);
/* pid exited: drop its mappings, here and in BPF. */
void rec_unwind__forget(struct rec_unwind *u, uint32_t pid);
/* Were pid's mappings last written to BPF read at or after ns (CLOCK_MONOTONIC)? */
bool rec_unwind__read_since(const struct rec_unwind *u, uint32_t pid, uint64_t ns);
/*
 * Walk a deferred event's user stack (struct stk_deferred) by the BPF walker's rules, with the
 * mappings last written for its process, into ips (at most max words), splicing the event's
 * Python frames (chain, NULL: none) where the interpreter runs them. Returns the number of
 * words; *stop says why the walk ended (enum stk_stop) and, in bits 16-31, why its Python
 * frames did (enum stk_pystop, as struct stk_stack pystop; REC_WALK_STOP() takes it off),
 * *missing the address in no known mapping when stkrec should look for it (STK_MISS_ASKS(): a
 * leaf guess's too, with STK_STOP_BAD_FRAME).
 */
#define REC_WALK_STOP(stop) ((stop) & 0xffff)
#define REC_WALK_PYSTOP(stop) ((stop) >> 16)
uint32_t rec_unwind__walk(const struct rec_unwind *u, const struct stk_deferred *d,
			  const struct stk_pychain *chain, uint64_t *ips, uint32_t max,
			  uint32_t *stop, uint64_t *missing);
/*
 * rec_unwind__walk() in rd's mappings (an image that has ended: nothing missed in it is asked
 * about), not in the ones written last for the process; uploads tables not used before.
 * Without memory the stack is the leaf, stopped at STK_STOP_NO_MAPPING.
 */
uint32_t rec_unwind__walk_read(struct rec_unwind *u, const struct rec_uread *rd,
			       const struct stk_deferred *d, const struct stk_pychain *chain,
			       uint64_t *ips, uint32_t max, uint32_t *stop);

/* "fp", "cfi" or "auto": --unwind's spelling and the meta key `unwind`. */
const char *rec_unwind_mode_name(uint32_t mode);

/* ---- CFI unwind tables (cfi.c) ------------------------------------------------------------ */

/* Why a DWARF row became STK_CFA_UNSUPPORTED: the first of these that applies. */
enum rec_cfi_why {
	REC_CFI_WHY_RA = 0,	/* return address not at CFA - 8, in rdi or rcx, nor undefined */
	REC_CFI_WHY_CFA_REG,	/* CFA from a register other than rsp, rbp, rbx, rcx; or none */
	REC_CFI_WHY_CFA_OFF,	/* CFA offset outside 0..65535 (-32768..32767 for DRAP) */
	REC_CFI_WHY_CFA_EXPR,	/* CFA expression of none of the shapes a row holds */
	REC_CFI_WHY_RBP,	/* rbp neither unchanged nor in an 8-byte slot (s8 words) of CFA or rbp */
	REC_CFI_WHY__COUNT
};

/* Where a table's CFI came from (rec_cfi.sources). */
#define REC_CFI_SRC_EH_FRAME 0x1	/* the .eh_frame section */
#define REC_CFI_SRC_EH_FRAME_HDR 0x2	/* .eh_frame found by PT_GNU_EH_FRAME: no section headers */
#define REC_CFI_SRC_DEBUG_FRAME 0x4	/* the .debug_frame section */

/*
 * The compact unwind table of one x86-64 object (include/stk/abi.h): rows sorted by pc, each
 * valid up to the next row, consecutive rows never equal (kind, cfa_off, rbp_off). rows[0].pc is
 * 0; every address no FDE covers is in a STK_CFA_GAP row, and the last row is one.
 */
struct rec_cfi {
	uint64_t base;		/* ELF virtual address that rows[].pc counts from */
	uint32_t nrows;
	struct stk_urow *rows;
	/* What building it found, for a summary (filled on errors too). */
	uint32_t sources;	/* REC_CFI_SRC_* */
	uint32_t nfdes;		/* FDEs whose rules are in the table */
	uint32_t nfdes_overlap;	/* FDEs starting inside an earlier one: clipped, or dropped */
	uint32_t nfdes_dropped;	/* empty FDEs, or outside every executable segment */
	uint32_t nbad;		/* malformed entries skipped: CIEs, FDEs (their range is a gap) */
	uint32_t ndwarf_rows;	/* rows the FDEs' instructions gave, before merging */
	uint32_t kinds[STK_CFA__COUNT];	/* rows of the table per enum stk_cfa */
	uint32_t why[REC_CFI_WHY__COUNT];	/* DWARF rows per reason they are unsupported */
};

/*
 * Build the table of e from its .eh_frame (through PT_GNU_EH_FRAME when it has no .eh_frame
 * section: no section headers) and its .debug_frame, .eh_frame winning where both cover an
 * address (record/unwind/cfi.c says how overlapping FDEs are resolved), and rules for an _init and
 * _fini without CFI. e's data is not referenced after the call.
 * Returns 0; -ENOENT when e has no CFI for its code; -EBADMSG when it has some but none usable;
 * -E2BIG when the table would have more than max_rows rows, or cover more than 4 GiB; -ENOTSUP
 * when e is not an x86-64 executable or shared object (ELFCLASS64, EM_X86_64, not ET_REL);
 * -ENOMEM. On error out has no rows, only statistics.
 * Thread safety: one call per Elf at a time (libelf's rules).
 */
int rec_cfi__build(Elf *e, uint32_t max_rows, struct rec_cfi *out);
/* Free t's rows (t itself is the caller's); takes NULL. */
void rec_cfi__free(struct rec_cfi *t);
/* The row covering ELF virtual address vaddr, lent by t; NULL below the first row. */
const struct stk_urow *rec_cfi__lookup(const struct rec_cfi *t, uint64_t vaddr);

#endif /* STK_REC_UNWIND_H */
