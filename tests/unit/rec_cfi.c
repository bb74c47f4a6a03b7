// SPDX-License-Identifier: MIT
/*
 * Unit tests of record/unwind/cfi.c, the compact unwind tables.
 *  - real binaries (libc, ld.so, libperl, perl, python3.11, the vdso, and cfi_prog built by the
 *    Makefile with .eh_frame and with .debug_frame only): every row, at its first byte, its last
 *    and its middle, against the rules libdw (dwarf_cfi_addrframe) gives there, turned into the
 *    row the walker needs by an independent reading of libdw's ops; libc again without section
 *    headers (PT_GNU_EH_FRAME);
 *  - hand-assembled CFI in a minimal ELF image: every call frame instruction, CIE versions and
 *    augmentations, pointer encodings, gaps, merging, overlapping FDEs, the expression shapes
 *    (PLT, signal frame, DRAP), and hostile input: truncations, lengths past the end, missing
 *    CIEs, deep remember_state, row and span limits, and thousands of mutated sections.
 * `rec_cfi FILE...` runs only the comparison with libdw, on those files.
 */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdlib.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../test.h"
#include "../../record/rec.h"

#define MAX_ROWS (1u << 24)

/*
 * ---- rows as text: "10000 rsp+8, 10001 rsp+16 rbp@cfa-16, 10010 gap" -----------------------
 * rbx: "rbx@cfa-24" (STK_RBX_AT_CFA), "rbx<rbp" (the slot below rbp's), "rbx lost".
 */

static const char *const kind_names[STK_CFA__COUNT] = { "gap", "end", "rsp", "rbp", "plt",
							 "signal", "*rbp", "unsupported", "rsp8", "ra_rdi",
							 "rbx", "rcx", "ra_rcx" };

static int row_text(char *buf, size_t sz, const struct stk_urow *r)
{
	int cfa = STK_UROW_CFA(r->kind), rbp = STK_UROW_RBP(r->kind), rbx = STK_UROW_RBX(r->kind);
	int n;

	if (cfa == STK_CFA_RSP || cfa == STK_CFA_RBP || cfa == STK_CFA_RBX || cfa == STK_CFA_RCX)
		n = snprintf(buf, sz, "%s+%u", kind_names[cfa], r->cfa_off);
	else if (cfa == STK_CFA_RSP8)
		n = snprintf(buf, sz, "rsp+%u", r->cfa_off * 8);
	else if (cfa == STK_CFA_PLT)
		n = snprintf(buf, sz, "plt/%u", r->cfa_off);
	else if (cfa == STK_CFA_RBP_DEREF)
		n = snprintf(buf, sz, "*(rbp%+d)", (int16_t)r->cfa_off);
	else if (cfa == STK_CFA_RA_RDI || cfa == STK_CFA_RA_RCX)
		n = snprintf(buf, sz, "rsp+%u ra@%s", r->cfa_off, cfa == STK_CFA_RA_RDI ? "rdi" : "rcx");
	else
		n = snprintf(buf, sz, "%s", cfa < STK_CFA__COUNT ? kind_names[cfa] : "?");
	if (rbp)
		n += snprintf(buf + n, sz - n, " rbp@%s%+d", rbp == STK_RBP_AT_CFA ? "cfa" : "rbp",
			      r->rbp_off * 8);
	if (rbx == STK_RBX_AT_CFA)
		n += snprintf(buf + n, sz - n, " rbx@cfa%+d", r->rbp_off * 8);
	else if (rbx)
		n += snprintf(buf + n, sz - n, rbx == STK_RBX_BELOW_RBP ? " rbx<rbp" : " rbx lost");
	if (cfa >= STK_CFA_GAP && cfa <= STK_CFA_END && (r->cfa_off || r->kind >> 4 || r->rbp_off))
		n += snprintf(buf + n, sz - n, " (not zero)");
	return n;
}

static const char *table_text(const struct rec_cfi *t)
{
	static char buf[8192];
	size_t n = 0;

	buf[0] = 0;
	for (uint32_t i = 0; i < t->nrows && n < sizeof(buf) - 64; i++) {
		n += snprintf(buf + n, sizeof(buf) - n, "%s%" PRIx64 " ", i ? ", " : "",
			      t->base + t->rows[i].pc);
		n += row_text(buf + n, sizeof(buf) - n, &t->rows[i]);
	}
	return buf;
}

/* What every table must be: pcs increasing from 0, no two equal rows in a row, a gap at the end. */
static const char *table_broken(const struct rec_cfi *t)
{
	if (!t->nrows || !t->rows)
		return "no rows";
	if (t->rows[0].pc)
		return "rows[0].pc is not 0";
	for (uint32_t i = 1; i < t->nrows; i++) {
		if (t->rows[i].pc <= t->rows[i - 1].pc)
			return "pcs not increasing";
		if (t->rows[i].kind == t->rows[i - 1].kind &&
		    t->rows[i].cfa_off == t->rows[i - 1].cfa_off &&
		    t->rows[i].rbp_off == t->rows[i - 1].rbp_off)
			return "equal consecutive rows";
	}
	if (t->rows[t->nrows - 1].kind != STK_CFA_GAP)
		return "the last row is not a gap";
	return NULL;
}

/* ---- the oracle: libdw's rules at an address, as the row the walker needs ------------------ */

static bool is_breg(const Dwarf_Op *o, unsigned int reg, int64_t *off)
{
	if (o->atom == DW_OP_breg0 + reg) {
		*off = (int64_t)o->number;
		return true;
	}
	if (o->atom == DW_OP_bregx && o->number == reg) {
		*off = (int64_t)o->number2;
		return true;
	}
	return false;
}

/*
 * A register's rule saved at an address: DW_CFA_offset gives [call_frame_cfa, plus_uconst N]
 * (or just call_frame_cfa); DW_CFA_expression gives call_frame_cfa then the expression, which
 * for the shapes the row knows is one breg. Sets *base_reg (-1 for the CFA) and *off.
 */
static bool saved_at(const Dwarf_Op *ops, size_t n, int *base_reg, int64_t *off)
{
	if (n < 1 || ops[0].atom != DW_OP_call_frame_cfa)
		return false;
	*base_reg = -1;
	*off = 0;
	if (n == 1)
		return true;
	if (n == 2 && ops[1].atom == DW_OP_plus_uconst) {
		*off = (int64_t)ops[1].number;
		return true;
	}
	if (n == 2 && is_breg(&ops[1], 6, off)) {
		*base_reg = 6;
		return true;
	}
	if (n == 2 && is_breg(&ops[1], 7, off)) {
		*base_reg = 7;
		return true;
	}
	return false;
}

static bool plt_ops(const Dwarf_Op *o, size_t n, unsigned int *lit)
{
	static const uint8_t shape[] = { 0, 0, DW_OP_lit15, DW_OP_and, 0, DW_OP_ge, DW_OP_lit3,
					 DW_OP_shl, DW_OP_plus };
	int64_t off;

	if (n != 9 || !is_breg(&o[0], 7, &off) || off != 8 || !is_breg(&o[1], 16, &off) || off)
		return false;
	for (size_t i = 2; i < n; i++)
		if (shape[i] && o[i].atom != shape[i])
			return false;
	if (o[4].atom < DW_OP_lit0 || o[4].atom > DW_OP_lit15)
		return false;
	*lit = o[4].atom - DW_OP_lit0;
	return true;
}

static struct stk_urow unsupported(void)
{
	return (struct stk_urow){ .kind = STK_CFA_UNSUPPORTED };
}

static bool oracle_cfa(Dwarf_Frame *fr, struct stk_urow *r)
{
	Dwarf_Op *ops;
	size_t n;
	int64_t off;
	unsigned int lit;

	if (dwarf_frame_cfa(fr, &ops, &n) || !n)
		return false;
	if (n == 1 && is_breg(&ops[0], 7, &off) && off > 65535 && !(off & 7) && off / 8 <= 65535) {
		r->kind = STK_CFA_RSP8;
		r->cfa_off = (uint16_t)(off / 8);
		return true;
	}
	if (n == 1 && (is_breg(&ops[0], 7, &off) || is_breg(&ops[0], 6, &off) ||
		       is_breg(&ops[0], 3, &off) || is_breg(&ops[0], 2, &off))) {
		if (off < 0 || off > 65535)
			return false;
		r->kind = is_breg(&ops[0], 7, &off)   ? STK_CFA_RSP
			  : is_breg(&ops[0], 6, &off) ? STK_CFA_RBP
			  : is_breg(&ops[0], 3, &off) ? STK_CFA_RBX
						      : STK_CFA_RCX;
		r->cfa_off = (uint16_t)off;
		return true;
	}
	if (n == 2 && is_breg(&ops[0], 6, &off) && ops[1].atom == DW_OP_deref && off >= -32768 &&
	    off <= 32767) {
		r->kind = STK_CFA_RBP_DEREF;
		r->cfa_off = (uint16_t)(int16_t)off;
		return true;
	}
	if (plt_ops(ops, n, &lit)) {
		r->kind = STK_CFA_PLT;
		r->cfa_off = (uint16_t)lit;
		return true;
	}
	return false;
}

static bool oracle_rbp(Dwarf_Frame *fr, struct stk_urow *r)
{
	Dwarf_Op mem[3], *ops;
	size_t n;
	int base;
	int64_t off;

	if (dwarf_frame_register(fr, 6, mem, &ops, &n))
		return false;
	if (!n)
		return ops == NULL;	/* same value: fine; undefined: not */
	if (!saved_at(ops, n, &base, &off) || base == 7 || off % 8 || off < -1024 || off > 1016)
		return false;
	r->kind = STK_UROW_KIND(r->kind, base == 6 ? STK_RBP_AT_RBP : STK_RBP_AT_CFA, STK_RBX_SAME);
	r->rbp_off = (int8_t)(off / 8);
	return true;
}

/*
 * rbx (DWARF 3), after oracle_rbp(): same value; saved at CFA + 8k in the slot byte when rbp
 * left it free, or 8 below rbp's slot; anything else loses it (abi.h enum stk_rbx_rule).
 * libdw reads an rbx the CFI never mentions as undefined (its x86-64 defaults make rbp the same
 * value, not rbx), where cfi.c follows the psABI, rbx callee-saved: undefined is taken as the
 * same value here, so an explicit DW_CFA_undefined of rbx (none in the objects surveyed) is
 * left to the hand-made test_rbx_rules().
 */
static void oracle_rbx(Dwarf_Frame *fr, struct stk_urow *r)
{
	int rbp = STK_UROW_RBP(r->kind), rule = STK_RBX_LOST, base;
	Dwarf_Op mem[3], *ops;
	size_t n;
	int64_t off;

	if (dwarf_frame_register(fr, 3, mem, &ops, &n))
		rule = STK_RBX_LOST;
	else if (!n)
		rule = STK_RBX_SAME;	/* same value, or libdw's undefined (above) */
	else if (saved_at(ops, n, &base, &off) && base == -1 && !(off % 8)) {
		if (rbp == STK_RBP_SAME && off >= -1024 && off <= 1016) {
			rule = STK_RBX_AT_CFA;
			r->rbp_off = (int8_t)(off / 8);
		} else if (rbp == STK_RBP_AT_CFA && off == r->rbp_off * 8 - 8) {
			rule = STK_RBX_BELOW_RBP;
		}
	}
	r->kind = STK_UROW_KIND(STK_UROW_CFA(r->kind), rbp, rule);
}

static bool reg_saved_at_rsp(Dwarf_Frame *fr, int reg, int64_t want)
{
	Dwarf_Op mem[3], *ops;
	size_t n;
	int base;
	int64_t off;

	return !dwarf_frame_register(fr, reg, mem, &ops, &n) && saved_at(ops, n, &base, &off) &&
	       base == 7 && off == want;
}

static bool oracle_signal(Dwarf_Frame *fr)
{
	Dwarf_Op *ops;
	size_t n;
	int64_t off;

	return !dwarf_frame_cfa(fr, &ops, &n) && n == 2 && is_breg(&ops[0], 7, &off) &&
	       off == 160 && ops[1].atom == DW_OP_deref && reg_saved_at_rsp(fr, 16, 168) &&
	       reg_saved_at_rsp(fr, 6, 120);
}

/*
 * The return address in a register (libdw: DW_OP_regx): vfork's rdi (5), an exception return's
 * rcx (2); CFA = rsp + N, rbp unchanged.
 */
static bool oracle_ra_reg(Dwarf_Frame *fr, const Dwarf_Op *ra, size_t nra, struct stk_urow *r)
{
	Dwarf_Op mem[3], *ops;
	size_t n;
	int64_t off;

	if (nra != 1 || ra[0].atom != DW_OP_regx || (ra[0].number != 5 && ra[0].number != 2))
		return false;
	if (dwarf_frame_cfa(fr, &ops, &n) || n != 1 || !is_breg(&ops[0], 7, &off) || off < 0 ||
	    off > 65535)
		return false;
	/* rbp: same value (libdw: no ops, NULL), not undefined (no ops, not NULL) nor saved */
	if (dwarf_frame_register(fr, 6, mem, &ops, &n) || n || ops)
		return false;
	r->kind = ra[0].number == 5 ? STK_CFA_RA_RDI : STK_CFA_RA_RCX;
	r->cfa_off = (uint16_t)off;
	return true;
}

/*
 * libdw's CFI of one object: .eh_frame's, and .debug_frame's when it has one; and its _init
 * and _fini, which have none (crt[]: .init, .fini when they are [endbr64] sub $8,%rsp ... add
 * $8,%rsp; ret, where cfi.c adds their rules).
 */
struct oracle_cfi {
	Dwarf_CFI *eh, *dbg;
	struct {
		uint64_t lo, sub_end, hi;
	} crt[2];
	int ncrt;
};

/* The row libdw's rules at vaddr make; -ENOENT when no FDE covers it. */
static int oracle_one(Dwarf_CFI *cfi, uint64_t vaddr, struct stk_urow *r)
{
	Dwarf_Frame *fr = NULL;
	Dwarf_Op mem[3], *ops;
	Dwarf_Addr start, end;
	bool signal = false;
	size_t n;
	int64_t off;
	int base;

	if (dwarf_cfi_addrframe(cfi, vaddr, &fr))
		return -ENOENT;
	*r = (struct stk_urow){ 0 };
	if (dwarf_frame_info(fr, &start, &end, &signal) != 16 ||
	    dwarf_frame_register(fr, 16, mem, &ops, &n))
		*r = unsupported();
	else if (!n && ops)
		r->kind = STK_CFA_END;
	else if (signal && oracle_signal(fr))
		r->kind = STK_CFA_SIGNAL;
	else if (!oracle_ra_reg(fr, ops, n, r) &&
		 (!saved_at(ops, n, &base, &off) || base != -1 || off != -8 || !oracle_cfa(fr, r) ||
		  !oracle_rbp(fr, r)))
		*r = unsupported();
	else
		oracle_rbx(fr, r);
	free(fr);
	return 0;
}

/* In _init or _fini: CFA = rsp + 16 after the sub, but at the ret. */
static int oracle_crt(const struct oracle_cfi *cfi, uint64_t vaddr, struct stk_urow *r)
{
	for (int i = 0; i < cfi->ncrt; i++) {
		if (vaddr < cfi->crt[i].lo || vaddr >= cfi->crt[i].hi)
			continue;
		*r = (struct stk_urow){ .kind = STK_CFA_RSP, .cfa_off = 8 };
		if (vaddr >= cfi->crt[i].sub_end && vaddr < cfi->crt[i].hi - 1)
			r->cfa_off = 16;
		return 0;
	}
	return -ENOENT;
}

/* .eh_frame first: where both sections cover an address, cfi.c keeps .eh_frame's FDE. */
static int oracle(const struct oracle_cfi *cfi, uint64_t vaddr, struct stk_urow *r)
{
	if (cfi->eh && !oracle_one(cfi->eh, vaddr, r))
		return 0;
	if (cfi->dbg && !oracle_one(cfi->dbg, vaddr, r))
		return 0;
	return oracle_crt(cfi, vaddr, r);
}

/* e's .init and .fini, when they have the shape of glibc's crti.o + crtn.o */
static void find_crt(Elf *e, struct oracle_cfi *cfi)
{
	static const uint8_t endbr64[] = { 0xf3, 0x0f, 0x1e, 0xfa }, sub8[] = { 0x48, 0x83, 0xec, 8 };
	static const uint8_t add8_ret[] = { 0x48, 0x83, 0xc4, 8, 0xc3 };
	static const char *const names[] = { ".init", ".fini" };
	GElf_Shdr sh;

	for (int i = 0; i < 2; i++) {
		Elf_Data *d = elfobj_section_named(e, names[i], &sh);
		const uint8_t *p = d ? d->d_buf : NULL;
		size_t n = d ? d->d_size : 0, at;

		if (!p || n < 9)
			continue;
		at = n >= 13 && !memcmp(p, endbr64, 4) ? 4 : 0;
		if (memcmp(p + at, sub8, 4) || memcmp(p + n - 5, add8_ret, 5))
			continue;
		cfi->crt[cfi->ncrt].lo = sh.sh_addr;
		cfi->crt[cfi->ncrt].sub_end = sh.sh_addr + at + 4;
		cfi->crt[cfi->ncrt++].hi = sh.sh_addr + n;
	}
}

/* ---- real binaries against the oracle ----------------------------------------------------- */

struct oracle_run {
	uint64_t addrs, mismatches, unsupported;
};

static void compare_at(const struct oracle_cfi *cfi, const struct rec_cfi *t, uint32_t i, uint64_t vaddr,
		       struct oracle_run *run, const char *name)
{
	struct stk_urow want, got = t->rows[i];
	char a[96], b[96];

	if (oracle(cfi, vaddr, &want))
		want = (struct stk_urow){ .kind = STK_CFA_GAP };
	run->addrs++;
	got.pc = 0;
	if (!memcmp(&want, &got, sizeof(want)))
		return;
	if (++run->mismatches <= 10) {
		row_text(a, sizeof(a), &want);
		row_text(b, sizeof(b), &got);
		printf("# %s: %#" PRIx64 " (row %u): libdw says %s, the table %s\n", name, vaddr, i,
		       a, b);
	}
}

/* Every row at its first byte, last byte and middle (the last row, a gap, at its start). */
static void check_oracle(const char *name, const struct rec_cfi *t, const struct oracle_cfi *cfi)
{
	struct oracle_run run = { 0 };
	char test[128];

	for (uint32_t i = 0; i < t->nrows; i++) {
		uint64_t lo = t->base + t->rows[i].pc;
		uint64_t hi = i + 1 < t->nrows ? t->base + t->rows[i + 1].pc - 1 : lo;

		compare_at(cfi, t, i, lo, &run, name);
		if (hi != lo)
			compare_at(cfi, t, i, hi, &run, name);
		if (hi - lo > 1)
			compare_at(cfi, t, i, lo + (hi - lo) / 2, &run, name);
		if (STK_UROW_CFA(t->rows[i].kind) == STK_CFA_UNSUPPORTED) {
			run.unsupported++;
			printf("# %s: unsupported row at %#" PRIx64 "\n", name, lo);
		}
	}
	snprintf(test, sizeof(test), "test_rec_cfi_oracle_%s", name);
	(void)T_CHECK(test, !run.mismatches,
		      "%" PRIu64 " of %" PRIu64 " addresses differ from libdw (%u rows)",
		      run.mismatches, run.addrs, t->nrows);
	printf("# %s: %u rows, %" PRIu64 " addresses checked, %" PRIu64 " unsupported rows\n", name,
	       t->nrows, run.addrs, run.unsupported);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Build e's table, check its shape, and compare it with libdw's reading of the same CFI. */
static void check_object(const char *name, Elf *e)
{
	Dwarf *dw = dwarf_begin_elf(e, DWARF_C_READ, NULL);	/* NULL without .debug_info */
	struct oracle_cfi cfi = { .eh = dwarf_getcfi_elf(e), .dbg = dw ? dwarf_getcfi(dw) : NULL };
	struct rec_cfi t;
	char test[128];
	const char *broken;
	uint64_t t0 = now_ns();
	int err = rec_cfi__build(e, MAX_ROWS, &t);

	printf("# %s: built in %.2f ms\n", name, (now_ns() - t0) / 1e6);
	find_crt(e, &cfi);
	snprintf(test, sizeof(test), "test_rec_cfi_build_%s", name);
	if (!T_EQ_INT(test, 0, err))
		goto out;
	broken = table_broken(&t);
	snprintf(test, sizeof(test), "test_rec_cfi_shape_%s", name);
	(void)T_CHECK(test, !broken, "%s", broken);
	snprintf(test, sizeof(test), "test_rec_cfi_oracle_%s", name);
	if (!cfi.eh && !cfi.dbg)
		T_FAIL(test, "libdw has no CFI for it: %s", dwarf_errmsg(-1));
	else
		check_oracle(name, &t, &cfi);
out:
	rec_cfi__free(&t);
	if (cfi.eh)
		dwarf_cfi_end(cfi.eh);
	if (dw)
		dwarf_end(dw);	/* ends cfi.dbg too */
}

static void check_file(const char *name, const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	Elf *e = fd >= 0 ? elf_begin(fd, ELF_C_READ_MMAP, NULL) : NULL;

	if (!e)
		printf("skip test_rec_cfi_oracle_%s: cannot read %s\n", name, path);
	else
		check_object(name, e);
	if (e)
		elf_end(e);
	if (fd >= 0)
		close(fd);
}

/* A copy of this process's vdso, as objects.c takes it. */
static char *vdso_image(size_t *len)
{
	uintptr_t base = getauxval(AT_SYSINFO_EHDR), lo, hi;
	char line[512], *image = NULL;
	FILE *f = fopen("/proc/self/maps", "r");

	while (base && f && !image && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx", &lo, &hi) != 2 || lo != base || !strstr(line, "[vdso]"))
			continue;
		image = malloc(hi - lo);
		if (image)
			memcpy(image, (const void *)lo, hi - lo);
		*len = hi - lo;
	}
	if (f)
		fclose(f);
	return image;
}

static void test_vdso(void)
{
	size_t len = 0;
	char *image = vdso_image(&len);
	Elf *e = image ? elf_memory(image, len) : NULL;

	if (!e)
		printf("skip test_rec_cfi_oracle_vdso: no vdso in this process\n");
	else
		check_object("vdso", e);
	if (e)
		elf_end(e);
	free(image);
}

static const char *input(const char *file)
{
	static char path[4096];
	const char *out = getenv("OUTPUT");

	snprintf(path, sizeof(path), "%s/tests/inputs/%s", out && *out ? out : ".output", file);
	return path;
}

/* The Makefile's cfi_prog: its own functions' CFI in .eh_frame, then in .debug_frame only. */
static void test_cfi_prog(void)
{
	int fd = open(input("cfi_prog_debug_frame"), O_RDONLY | O_CLOEXEC);
	Elf *e = fd >= 0 ? elf_begin(fd, ELF_C_READ_MMAP, NULL) : NULL;
	struct rec_cfi t = { 0 };
	int err = e ? rec_cfi__build(e, MAX_ROWS, &t) : -ENOENT;

	check_file("cfi_prog_eh_frame", input("cfi_prog_eh_frame"));
	check_file("cfi_prog_debug_frame", input("cfi_prog_debug_frame"));
	if (!e)
		printf("skip test_rec_cfi_both_sections: no %s (make check-bins)\n",
		       input("cfi_prog_debug_frame"));
	else if (T_EQ_INT("test_rec_cfi_both_sections_rc", 0, err)) {
		(void)T_EQ_INT("test_rec_cfi_both_sections",
			       REC_CFI_SRC_EH_FRAME | REC_CFI_SRC_DEBUG_FRAME, t.sources);
		(void)T_EQ_INT("test_rec_cfi_both_sections_end", 1, t.kinds[STK_CFA_END]);
		/* two: rbx saved by an expression from the second on (STK_RBX_LOST) */
		(void)T_EQ_INT("test_rec_cfi_both_sections_drap", 2, t.kinds[STK_CFA_RBP_DEREF]);
	}
	rec_cfi__free(&t);
	if (e)
		elf_end(e);
	if (fd >= 0)
		close(fd);
}

/*
 * libc without section headers: .eh_frame through PT_GNU_EH_FRAME must give the same table as
 * through the section (libc has no .debug_frame).
 */
static void test_no_section_headers(const char *path)
{
	struct rec_cfi a = { 0 }, b = { 0 };
	int fd = open(path, O_RDONLY | O_CLOEXEC), ea = -1, eb = -1;
	struct stat st;
	uint8_t *image = NULL;
	Elf *e = NULL;
	Elf64_Ehdr *eh;

	if (fd < 0 || fstat(fd, &st) || !(image = malloc(st.st_size)) ||
	    pread(fd, image, st.st_size, 0) != st.st_size) {
		printf("skip test_rec_cfi_no_section_headers: cannot read %s\n", path);
		goto out;
	}
	e = elf_memory((char *)image, st.st_size);
	ea = e ? rec_cfi__build(e, MAX_ROWS, &a) : -EINVAL;
	if (e)
		elf_end(e);
	eh = (Elf64_Ehdr *)image;
	eh->e_shoff = 0;
	eh->e_shnum = 0;
	eh->e_shstrndx = 0;
	e = elf_memory((char *)image, st.st_size);
	eb = e ? rec_cfi__build(e, MAX_ROWS, &b) : -EINVAL;
	(void)T_EQ_INT("test_rec_cfi_no_section_headers_rc", 0, ea || eb);
	(void)T_EQ_INT("test_rec_cfi_no_section_headers_source", REC_CFI_SRC_EH_FRAME_HDR,
		       b.sources);
	(void)T_CHECK("test_rec_cfi_no_section_headers_same",
		      a.nrows == b.nrows && a.base == b.base && a.nrows &&
			      !memcmp(a.rows, b.rows, a.nrows * sizeof(*a.rows)),
		      "%u rows at %#" PRIx64 " with sections, %u at %#" PRIx64 " without", a.nrows,
		      a.base, b.nrows, b.base);
out:
	if (e)
		elf_end(e);
	rec_cfi__free(&a);
	rec_cfi__free(&b);
	free(image);
	if (fd >= 0)
		close(fd);
}

static void test_real_binaries(void)
{
	check_file("libc", "/lib/x86_64-linux-gnu/libc.so.6");
	check_file("ld_so", "/lib64/ld-linux-x86-64.so.2");
	check_file("libperl", "/usr/lib/x86_64-linux-gnu/libperl.so.5.36");
	check_file("perl", "/usr/bin/perl");
	check_file("python3_11", "/usr/bin/python3.11");
	/* the exception return of _Unwind_RaiseException and its siblings: CFA from rcx, then the
	 * return address in rcx */
	check_file("libgcc_s", "/lib/x86_64-linux-gnu/libgcc_s.so.1");
	test_vdso();
	test_cfi_prog();
	test_no_section_headers("/lib/x86_64-linux-gnu/libc.so.6");
}

/* ---- hand-assembled CFI ------------------------------------------------------------------- */

struct bb {
	uint8_t b[16384];
	size_t n;
};

static void put(struct bb *b, const void *p, size_t n)
{
	if (b->n + n > sizeof(b->b))
		abort();	/* a test assembles more than it should */
	memcpy(b->b + b->n, p, n);
	b->n += n;
}

static void u8(struct bb *b, uint8_t v)
{
	put(b, &v, 1);
}

static void u16(struct bb *b, uint16_t v)
{
	put(b, &v, 2);
}

static void u32(struct bb *b, uint32_t v)
{
	put(b, &v, 4);
}

static void u64(struct bb *b, uint64_t v)
{
	put(b, &v, 8);
}

static void uleb(struct bb *b, uint64_t v)
{
	do {
		u8(b, (uint8_t)((v & 0x7f) | (v > 0x7f ? 0x80 : 0)));
		v >>= 7;
	} while (v);
}

static void sleb(struct bb *b, int64_t v)
{
	bool more;

	do {
		uint8_t byte = v & 0x7f;

		v >>= 7;
		more = !((v == 0 && !(byte & 0x40)) || (v == -1 && (byte & 0x40)));
		u8(b, byte | (more ? 0x80 : 0));
	} while (more);
}

/* An entry's length, patched by end(). */
static size_t begin(struct bb *b)
{
	size_t at = b->n;

	u32(b, 0);
	return at;
}

static void end(struct bb *b, size_t at)
{
	uint32_t len = (uint32_t)(b->n - at - 4);

	memcpy(b->b + at, &len, 4);
}

/* The image puts .eh_frame here (and .debug_frame at DBG_OFF): pcrel pointers need it. */
#define EH_VADDR 0x1000u
#define DBG_OFF 0x290u
#define CODE_END 0x100000u	/* the executable segment's memsz */

/* A CIE of gcc's usual shape, version and code alignment aside: daf -8, ra 16; augmentation
 * data (after "z") as given. The caller adds initial instructions, then end(). */
static size_t cie_start(struct bb *b, uint32_t id, uint8_t version, const char *aug,
			const void *augdata, size_t augn, uint64_t caf)
{
	size_t at = begin(b);

	u32(b, id);
	u8(b, version);
	put(b, aug, strlen(aug) + 1);
	uleb(b, caf);
	sleb(b, -8);
	if (version == 1)
		u8(b, 16);
	else
		uleb(b, 16);
	if (aug[0] == 'z') {
		uleb(b, augn);
		put(b, augdata, augn);
	}
	return at;
}

/* CFA = rsp + 8, return address at CFA - 8: every function's entry. */
static void entry_rules(struct bb *b)
{
	u8(b, DW_CFA_def_cfa);
	uleb(b, 7);
	uleb(b, 8);
	u8(b, DW_CFA_offset | 16);
	uleb(b, 1);
}

/* The usual .eh_frame CIE ("zR", FDE addresses udata4 unless enc says otherwise). */
static size_t std_cie(struct bb *b, uint8_t enc)
{
	size_t at = cie_start(b, 0, 1, "zR", &enc, 1, 1);

	entry_rules(b);
	end(b, at);
	return at;
}

/* An address of FDE encoding enc at b's end, for .eh_frame at EH_VADDR. */
static void enc_ptr(struct bb *b, uint8_t enc, uint64_t v)
{
	if ((enc & 0x70) == DW_EH_PE_pcrel)
		v -= EH_VADDR + b->n;
	switch (enc & 0x0f) {
	case DW_EH_PE_absptr:
	case DW_EH_PE_udata8:
	case DW_EH_PE_sdata8:
		u64(b, v);
		break;
	case DW_EH_PE_udata2:
	case DW_EH_PE_sdata2:
		u16(b, (uint16_t)v);
		break;
	case DW_EH_PE_udata4:
	case DW_EH_PE_sdata4:
		u32(b, (uint32_t)v);
		break;
	case DW_EH_PE_uleb128:
		uleb(b, v);
		break;
	case DW_EH_PE_sleb128:
		sleb(b, (int64_t)v);
		break;
	}
}

/* An .eh_frame FDE of [lo, lo + len) under the CIE at cie_at; the caller adds instructions. */
static size_t fde_enc(struct bb *b, size_t cie_at, uint8_t enc, uint64_t lo, uint64_t len)
{
	size_t at = begin(b);

	u32(b, (uint32_t)(b->n - cie_at));
	enc_ptr(b, enc, lo);
	enc_ptr(b, enc & 0x0f, len);
	uleb(b, 0);	/* augmentation data */
	return at;
}

static size_t fde(struct bb *b, size_t cie_at, uint64_t lo, uint64_t len)
{
	return fde_enc(b, cie_at, DW_EH_PE_udata4, lo, len);
}

/* A .debug_frame FDE: absolute CIE offset, 8-byte addresses. */
static size_t dbg_fde(struct bb *b, size_t cie_at, uint64_t lo, uint64_t len)
{
	size_t at = begin(b);

	u32(b, (uint32_t)cie_at);
	u64(b, lo);
	u64(b, len);
	return at;
}

static void adv(struct bb *b, unsigned int delta)
{
	u8(b, DW_CFA_advance_loc | delta);
}

static void op1(struct bb *b, uint8_t op, uint64_t a)
{
	u8(b, op);
	uleb(b, a);
}

static void op2(struct bb *b, uint8_t op, uint64_t a, uint64_t c)
{
	u8(b, op);
	uleb(b, a);
	uleb(b, c);
}

static void op2s(struct bb *b, uint8_t op, uint64_t a, int64_t c)
{
	u8(b, op);
	uleb(b, a);
	sleb(b, c);
}

/* DW_CFA_def_cfa_expression, DW_CFA_expression (reg >= 0) of the given bytes. */
static void expr(struct bb *b, uint8_t op, int reg, const uint8_t *e, size_t n)
{
	u8(b, op);
	if (reg >= 0)
		uleb(b, (uint64_t)reg);
	uleb(b, n);
	put(b, e, n);
}

/* DW_OP_breg<reg> off as bytes: its length. */
static size_t breg(uint8_t *e, unsigned int reg, int64_t off)
{
	struct bb t = { .n = 0 };

	u8(&t, (uint8_t)(DW_OP_breg0 + reg));
	sleb(&t, off);
	memcpy(e, t.b, t.n);
	return t.n;
}

/* ---- a minimal x86-64 image around the CFI ------------------------------------------------ */

enum {
	IMG_NO_SECTIONS = 1,	/* no section headers: PT_GNU_EH_FRAME only */
	IMG_NO_PHDRS = 2,	/* no program headers: no executable-segment filter */
	IMG_AARCH64 = 4,
	IMG_NO_HDR = 8,		/* no PT_GNU_EH_FRAME */
	IMG_BAD_HDR = 16,	/* eh_frame_ptr points outside every segment */
	IMG_EH_NOBITS = 32,	/* .eh_frame is SHT_NOBITS, as in a separate debug file */
};

/*
 * ELF header, PT_LOAD (the whole file at vaddr 0, executable, memsz CODE_END) and
 * PT_GNU_EH_FRAME, .eh_frame_hdr at 0x100, .shstrtab, section headers, .debug_frame at DBG_OFF,
 * and .eh_frame last, at EH_VADDR: the image is malloc'ed to size, so a read past .eh_frame
 * is one past the allocation (ASan).
 */
struct img {
	uint8_t *buf;
	Elf *e;
};

static void shdr(uint8_t *buf, int i, uint32_t name, uint32_t type, uint64_t flags, uint64_t addr,
		 uint64_t off, uint64_t size)
{
	Elf64_Shdr sh = { .sh_name = name, .sh_type = type, .sh_flags = flags, .sh_addr = addr,
			  .sh_offset = off, .sh_size = size, .sh_addralign = 1 };

	memcpy(buf + 0x150 + i * sizeof(sh), &sh, sizeof(sh));
}

static Elf *img_open(struct img *im, const struct bb *eh, const struct bb *dbg, unsigned int flags)
{
	static const char names[] = "\0.eh_frame\0.eh_frame_hdr\0.debug_frame\0.shstrtab";
	size_t en = eh ? eh->n : 0, dn = dbg ? dbg->n : 0, len = EH_VADDR + en;
	Elf64_Ehdr *h;
	Elf64_Phdr ph[2] = {
		{ .p_type = PT_LOAD, .p_flags = PF_R | PF_X, .p_filesz = len,
		  .p_memsz = len > CODE_END ? len : CODE_END, .p_align = 0x1000 },
		{ .p_type = PT_GNU_EH_FRAME, .p_flags = PF_R, .p_offset = 0x100, .p_vaddr = 0x100,
		  .p_filesz = 12, .p_memsz = 12, .p_align = 4 },
	};
	uint8_t hdr[12] = { 1, DW_EH_PE_pcrel | DW_EH_PE_sdata4, DW_EH_PE_udata4, 0x3b };
	int32_t ptr = (int32_t)(EH_VADDR - 0x104) + (flags & IMG_BAD_HDR ? 0x7000000 : 0);
	int nsh = 0;

	if (dn > EH_VADDR - DBG_OFF)
		abort();
	im->buf = calloc(1, len);
	if (!im->buf)
		abort();
	h = (Elf64_Ehdr *)im->buf;
	memcpy(h->e_ident, ELFMAG, SELFMAG);
	h->e_ident[EI_CLASS] = ELFCLASS64;
	h->e_ident[EI_DATA] = ELFDATA2LSB;
	h->e_ident[EI_VERSION] = EV_CURRENT;
	h->e_type = ET_DYN;
	h->e_machine = flags & IMG_AARCH64 ? EM_AARCH64 : EM_X86_64;
	h->e_version = EV_CURRENT;
	h->e_ehsize = sizeof(*h);
	h->e_phentsize = sizeof(ph[0]);
	h->e_shentsize = sizeof(Elf64_Shdr);
	if (!(flags & IMG_NO_PHDRS)) {
		h->e_phoff = 64;
		h->e_phnum = flags & IMG_NO_HDR || !eh ? 1 : 2;
		memcpy(im->buf + 64, ph, sizeof(ph));
	}
	memcpy(hdr + 4, &ptr, 4);
	memcpy(im->buf + 0x100, hdr, sizeof(hdr));
	memcpy(im->buf + 0x110, names, sizeof(names));
	if (dn)
		memcpy(im->buf + DBG_OFF, dbg->b, dn);
	if (en)
		memcpy(im->buf + EH_VADDR, eh->b, en);
	shdr(im->buf, nsh++, 0, SHT_NULL, 0, 0, 0, 0);
	if (eh) {
		shdr(im->buf, nsh++, 1, flags & IMG_EH_NOBITS ? SHT_NOBITS : SHT_PROGBITS, SHF_ALLOC,
		     EH_VADDR, EH_VADDR, en);
		shdr(im->buf, nsh++, 11, SHT_PROGBITS, SHF_ALLOC, 0x100, 0x100, sizeof(hdr));
	}
	if (dbg)
		shdr(im->buf, nsh++, 25, SHT_PROGBITS, 0, 0, DBG_OFF, dn);
	h->e_shstrndx = nsh;
	shdr(im->buf, nsh++, 38, SHT_STRTAB, 0, 0, 0x110, sizeof(names));
	if (!(flags & IMG_NO_SECTIONS)) {
		h->e_shoff = 0x150;
		h->e_shnum = nsh;
	} else {
		h->e_shstrndx = 0;
	}
	im->e = elf_memory((char *)im->buf, len);
	return im->e;
}

static void img_close(struct img *im)
{
	if (im->e)
		elf_end(im->e);
	free(im->buf);
	*im = (struct img){ 0 };
}

/* Build the table of an image of eh and dbg: the error, t filled. */
static int build(const struct bb *eh, const struct bb *dbg, unsigned int flags, uint32_t max,
		 struct rec_cfi *t)
{
	struct img im;
	int err;

	if (!img_open(&im, eh, dbg, flags)) {
		img_close(&im);
		return -EINVAL;
	}
	err = rec_cfi__build(im.e, max, t);
	img_close(&im);
	return err;
}

/* The table of eh (and dbg) must read `want` (see table_text()). */
static void expect_rows(const char *name, const struct bb *eh, const struct bb *dbg,
			unsigned int flags, const char *want)
{
	struct rec_cfi t;
	const char *broken;
	int err = build(eh, dbg, flags, 1000, &t);

	if (err) {
		T_FAIL(name, "expected rows \"%s\", got %s", want, strerror(-err));
		return;
	}
	broken = table_broken(&t);
	if (broken)
		T_FAIL(name, "%s: %s", broken, table_text(&t));
	else
		(void)T_EQ_STR(name, want, table_text(&t));
	rec_cfi__free(&t);
}

static void expect_err(const char *name, const struct bb *eh, const struct bb *dbg,
		       unsigned int flags, uint32_t max, int want)
{
	struct rec_cfi t;
	int err = build(eh, dbg, flags, max, &t);

	(void)T_CHECK(name, err == want && (!err || (!t.rows && !t.nrows)),
		      "expected %s, got %s (%u rows)", want ? strerror(-want) : "success",
		      err ? strerror(-err) : "success", t.nrows);
	rec_cfi__free(&t);
}

/* ---- instructions ------------------------------------------------------------------------- */

/* push rbp; mov rsp, rbp; ...; leave; ret (FDE addresses of encoding enc) */
static void prologue(struct bb *b, size_t cie, uint8_t enc)
{
	size_t f = fde_enc(b, cie, enc, 0x10000, 0x10);

	adv(b, 1);
	op1(b, DW_CFA_def_cfa_offset, 16);
	u8(b, DW_CFA_offset | 6);
	uleb(b, 2);
	adv(b, 3);
	op1(b, DW_CFA_def_cfa_register, 6);
	adv(b, 10);
	op2(b, DW_CFA_def_cfa, 7, 8);
	end(b, f);
}

static void test_prologue(void)
{
	struct bb b = { .n = 0 };
	struct rec_cfi t;
	const struct stk_urow *r;

	prologue(&b, std_cie(&b, DW_EH_PE_udata4), DW_EH_PE_udata4);
	expect_rows("test_rec_cfi_prologue", &b, NULL, 0,
		    "10000 rsp+8, 10001 rsp+16 rbp@cfa-16, 10004 rbp+16 rbp@cfa-16, "
		    "1000e rsp+8 rbp@cfa-16, 10010 gap");
	if (!T_EQ_INT("test_rec_cfi_lookup_build", 0, build(&b, NULL, 0, 1000, &t)))
		return;
	(void)T_EQ_U64("test_rec_cfi_lookup_base", 0x10000, t.base);
	(void)T_CHECK("test_rec_cfi_lookup_below", !rec_cfi__lookup(&t, 0xffff), "a row below");
	r = rec_cfi__lookup(&t, 0x10003);
	(void)T_CHECK("test_rec_cfi_lookup_inside", r == &t.rows[1], "row %td", r ? r - t.rows : -1);
	r = rec_cfi__lookup(&t, 0x1000f);
	(void)T_CHECK("test_rec_cfi_lookup_last_byte", r == &t.rows[3], "row %td",
		      r ? r - t.rows : -1);
	r = rec_cfi__lookup(&t, 0x10010);
	(void)T_CHECK("test_rec_cfi_lookup_end", r == &t.rows[4], "row %td", r ? r - t.rows : -1);
	r = rec_cfi__lookup(&t, 0x10000 + (1ull << 33));
	(void)T_CHECK("test_rec_cfi_lookup_far", r == &t.rows[4], "row %td", r ? r - t.rows : -1);
	(void)T_EQ_INT("test_rec_cfi_stats_fdes", 1, t.nfdes);
	(void)T_EQ_INT("test_rec_cfi_stats_dwarf_rows", 4, t.ndwarf_rows);
	(void)T_EQ_INT("test_rec_cfi_stats_gap", 1, t.kinds[STK_CFA_GAP]);
	(void)T_EQ_INT("test_rec_cfi_stats_rsp", 3, t.kinds[STK_CFA_RSP]);
	(void)T_EQ_INT("test_rec_cfi_stats_sources", REC_CFI_SRC_EH_FRAME, t.sources);
	rec_cfi__free(&t);
	rec_cfi__free(&t);	/* a second free does nothing */
	rec_cfi__free(NULL);
}

static void test_advance_forms(void)
{
	struct bb b = { .n = 0 };
	size_t cie = std_cie(&b, DW_EH_PE_udata4), f = fde(&b, cie, 0x10000, 0x20000), at;

	u8(&b, DW_CFA_advance_loc1);
	u8(&b, 0x10);
	op1(&b, DW_CFA_def_cfa_offset, 16);
	u8(&b, DW_CFA_advance_loc2);
	u16(&b, 0x100);
	op1(&b, DW_CFA_def_cfa_offset, 24);
	u8(&b, DW_CFA_advance_loc4);
	u32(&b, 0x1000);
	op1(&b, DW_CFA_def_cfa_offset, 32);
	u8(&b, DW_CFA_MIPS_advance_loc8);
	u64(&b, 0x10);
	op1(&b, DW_CFA_def_cfa_offset, 40);
	u8(&b, DW_CFA_set_loc);
	u32(&b, 0x20000);
	op1(&b, DW_CFA_def_cfa_offset, 48);
	end(&b, f);
	expect_rows("test_rec_cfi_advance_forms", &b, NULL, 0,
		    "10000 rsp+8, 10010 rsp+16, 10110 rsp+24, 11110 rsp+32, 11120 rsp+40, "
		    "20000 rsp+48, 30000 gap");

	/* Code alignment factor 4: advance_loc 4 is 16 bytes. */
	b.n = 0;
	at = cie_start(&b, 0, 1, "zR", (uint8_t[]){ DW_EH_PE_udata4 }, 1, 4);
	entry_rules(&b);
	end(&b, at);
	f = fde(&b, at, 0x10000, 0x100);
	adv(&b, 4);
	op1(&b, DW_CFA_def_cfa_offset, 16);
	end(&b, f);
	expect_rows("test_rec_cfi_code_alignment", &b, NULL, 0, "10000 rsp+8, 10010 rsp+16, 10100 gap");

	/* An advance past the end of the address space ends the FDE. */
	b.n = 0;
	at = cie_start(&b, 0, 1, "zR", (uint8_t[]){ DW_EH_PE_udata4 }, 1, 1ull << 62);
	entry_rules(&b);
	end(&b, at);
	f = fde(&b, at, 0x10000, 0x100);
	adv(&b, 8);
	op1(&b, DW_CFA_def_cfa_offset, 16);
	end(&b, f);
	expect_rows("test_rec_cfi_advance_overflow", &b, NULL, 0, "10000 rsp+8, 10100 gap");

	/* set_loc backwards is malformed. */
	b.n = 0;
	cie = std_cie(&b, DW_EH_PE_udata4);
	f = fde(&b, cie, 0x10000, 0x100);
	adv(&b, 8);
	u8(&b, DW_CFA_set_loc);
	u32(&b, 0x10004);
	end(&b, f);
	expect_err("test_rec_cfi_set_loc_backwards", &b, NULL, 0, 1000, -EBADMSG);
}

static void test_remember_state(void)
{
	struct bb b = { .n = 0 };
	size_t cie = std_cie(&b, DW_EH_PE_udata4), f = fde(&b, cie, 0x10000, 0x40);

	adv(&b, 1);
	op1(&b, DW_CFA_def_cfa_offset, 16);
	u8(&b, DW_CFA_offset | 6);
	uleb(&b, 2);
	adv(&b, 3);
	u8(&b, DW_CFA_remember_state);
	op1(&b, DW_CFA_def_cfa_offset, 8);
	u8(&b, DW_CFA_restore | 6);
	adv(&b, 1);
	u8(&b, DW_CFA_restore_state);
	adv(&b, 1);
	op1(&b, DW_CFA_def_cfa_offset, 24);
	end(&b, f);
	expect_rows("test_rec_cfi_remember_state", &b, NULL, 0,
		    "10000 rsp+8, 10001 rsp+16 rbp@cfa-16, 10004 rsp+8, 10005 rsp+16 rbp@cfa-16, "
		    "10006 rsp+24 rbp@cfa-16, 10040 gap");
}

/* DW_CFA_restore goes back to the CIE's rule, or to "unchanged" for rbp when it has none. */
static void test_restore(void)
{
	struct bb b = { .n = 0 };
	size_t cie = cie_start(&b, 0, 1, "zR", (uint8_t[]){ DW_EH_PE_udata4 }, 1, 1), f;

	entry_rules(&b);
	u8(&b, DW_CFA_offset | 6);
	uleb(&b, 3);
	end(&b, cie);
	f = fde(&b, cie, 0x10000, 0x10);
	adv(&b, 1);
	u8(&b, DW_CFA_offset | 6);
	uleb(&b, 2);
	adv(&b, 1);
	u8(&b, DW_CFA_restore | 6);
	adv(&b, 1);
	op1(&b, DW_CFA_same_value, 6);
	adv(&b, 1);
	op1(&b, DW_CFA_restore_extended, 6);
	adv(&b, 1);
	op2(&b, DW_CFA_offset_extended, 16, 2);
	adv(&b, 1);
	u8(&b, DW_CFA_restore | 16);
	end(&b, f);
	expect_rows("test_rec_cfi_restore", &b, NULL, 0,
		    "10000 rsp+8 rbp@cfa-24, 10001 rsp+8 rbp@cfa-16, 10002 rsp+8 rbp@cfa-24, "
		    "10003 rsp+8, 10004 rsp+8 rbp@cfa-24, 10005 unsupported, 10006 rsp+8 rbp@cfa-24, "
		    "10010 gap");
}

static void test_factored_forms(void)
{
	struct bb b = { .n = 0 };
	size_t cie = std_cie(&b, DW_EH_PE_udata4), f = fde(&b, cie, 0x10000, 0x10);
	struct rec_cfi t;

	adv(&b, 1);
	op2s(&b, DW_CFA_def_cfa_sf, 7, -3);
	adv(&b, 1);
	u8(&b, DW_CFA_def_cfa_offset_sf);
	sleb(&b, -4);
	adv(&b, 1);
	op2s(&b, DW_CFA_offset_extended_sf, 6, 2);
	adv(&b, 1);
	op2(&b, DW_CFA_GNU_negative_offset_extended, 6, 3);
	adv(&b, 1);
	op2(&b, DW_CFA_offset_extended, 6, 4);
	adv(&b, 1);
	op1(&b, DW_CFA_def_cfa_register, 6);
	adv(&b, 1);
	op2(&b, DW_CFA_val_offset, 6, 2);
	adv(&b, 1);
	op2s(&b, DW_CFA_val_offset_sf, 6, 2);
	adv(&b, 1);
	u8(&b, DW_CFA_offset | 6);
	uleb(&b, 2);
	adv(&b, 1);
	op1(&b, DW_CFA_GNU_args_size, 16);
	u8(&b, DW_CFA_nop);
	end(&b, f);
	expect_rows("test_rec_cfi_factored_forms", &b, NULL, 0,
		    "10000 rsp+8, 10001 rsp+24, 10002 rsp+32, 10003 rsp+32 rbp@cfa-16, "
		    "10004 rsp+32 rbp@cfa+24, 10005 rsp+32 rbp@cfa-32, 10006 rbp+32 rbp@cfa-32, "
		    "10007 unsupported, 10009 rbp+32 rbp@cfa-16, 10010 gap");
	if (!build(&b, NULL, 0, 1000, &t)) {
		(void)T_EQ_INT("test_rec_cfi_why_rbp", 2, t.why[REC_CFI_WHY_RBP]);
		(void)T_EQ_INT("test_rec_cfi_merged_dwarf_rows", 11, t.ndwarf_rows);
	}
	rec_cfi__free(&t);
}

static void test_rbp_rules(void)
{
	struct bb b = { .n = 0 };
	size_t cie = std_cie(&b, DW_EH_PE_udata4), f = fde(&b, cie, 0x10000, 0x20);
	uint8_t e[16];

	adv(&b, 1);
	op2(&b, DW_CFA_register, 6, 3);			/* 10001: in rbx */
	adv(&b, 1);
	expr(&b, DW_CFA_expression, 6, e, breg(e, 6, 16));	/* 10002: at rbp + 16 */
	adv(&b, 1);
	expr(&b, DW_CFA_val_expression, 6, e, breg(e, 6, 0));	/* 10003: a value */
	adv(&b, 1);
	expr(&b, DW_CFA_expression, 6, e, breg(e, 7, 8));	/* 10004: at rsp + 8 */
	adv(&b, 1);
	expr(&b, DW_CFA_expression, 6, e, breg(e, 6, 12));	/* 10005: not 8-aligned */
	adv(&b, 1);
	op1(&b, DW_CFA_undefined, 6);				/* 10006 */
	adv(&b, 1);
	op2(&b, DW_CFA_offset_extended, 6, 128);		/* 10007: cfa - 1024 */
	adv(&b, 1);
	op2(&b, DW_CFA_offset_extended, 6, 129);		/* 10008: cfa - 1032 */
	adv(&b, 1);
	op2s(&b, DW_CFA_offset_extended_sf, 6, -127);		/* 10009: cfa + 1016 */
	adv(&b, 1);
	op2s(&b, DW_CFA_offset_extended_sf, 6, -128);		/* 1000a: cfa + 1024 */
	adv(&b, 1);
	op1(&b, DW_CFA_same_value, 6);				/* 1000b */
	end(&b, f);
	expect_rows("test_rec_cfi_rbp_rules", &b, NULL, 0,
		    "10000 rsp+8, 10001 unsupported, 10002 rsp+8 rbp@rbp+16, 10003 unsupported, "
		    "10007 rsp+8 rbp@cfa-1024, 10008 unsupported, 10009 rsp+8 rbp@cfa+1016, "
		    "1000a unsupported, 1000b rsp+8, 10020 gap");
}

/*
 * rbx: in the slot byte when rbp is not saved, just below rbp's slot when it is (gcc's pushes),
 * lost otherwise; a CFA from rbx (ld.so's _dl_runtime_resolve_xsavec: push rbx; mov rsp, rbx).
 */
static void test_rbx_rules(void)
{
	struct bb b = { .n = 0 };
	size_t cie = std_cie(&b, DW_EH_PE_udata4), f = fde(&b, cie, 0x10000, 0x20);
	uint8_t e[16];

	op1(&b, DW_CFA_def_cfa_offset, 32);
	u8(&b, DW_CFA_offset | 3);
	uleb(&b, 4);						/* 10000: cfa - 32 */
	adv(&b, 1);
	op1(&b, DW_CFA_def_cfa_register, 3);			/* 10001: CFA = rbx + 32 */
	adv(&b, 1);
	op1(&b, DW_CFA_def_cfa_offset, 65535);			/* 10002 */
	adv(&b, 1);
	op1(&b, DW_CFA_def_cfa_offset, 65536);			/* 10003: too far for rbx */
	adv(&b, 1);
	op2(&b, DW_CFA_def_cfa, 7, 24);
	u8(&b, DW_CFA_offset | 6);
	uleb(&b, 2);
	u8(&b, DW_CFA_offset | 3);
	uleb(&b, 3);						/* 10004: below rbp */
	adv(&b, 1);
	u8(&b, DW_CFA_offset | 3);
	uleb(&b, 4);						/* 10005: not just below */
	adv(&b, 1);
	u8(&b, DW_CFA_restore | 6);
	op2(&b, DW_CFA_offset_extended, 3, 128);		/* 10006: cfa - 1024 */
	adv(&b, 1);
	op2(&b, DW_CFA_offset_extended, 3, 129);		/* 10007: cfa - 1032 */
	adv(&b, 1);
	op2(&b, DW_CFA_register, 3, 12);			/* 10008: in r12 */
	adv(&b, 1);
	expr(&b, DW_CFA_expression, 3, e, breg(e, 6, -8));	/* 10009: at rbp - 8 */
	adv(&b, 1);
	op1(&b, DW_CFA_undefined, 3);				/* 1000a */
	adv(&b, 1);
	u8(&b, DW_CFA_restore | 3);				/* 1000b: the CIE's, unmentioned */
	end(&b, f);
	expect_rows("test_rec_cfi_rbx_rules", &b, NULL, 0,
		    "10000 rsp+32 rbx@cfa-32, 10001 rbx+32 rbx@cfa-32, 10002 rbx+65535 rbx@cfa-32, "
		    "10003 unsupported, 10004 rsp+24 rbp@cfa-16 rbx<rbp, "
		    "10005 rsp+24 rbp@cfa-16 rbx lost, 10006 rsp+24 rbx@cfa-1024, "
		    "10007 rsp+24 rbx lost, 1000b rsp+24, 10020 gap");
}

static void test_return_address(void)
{
	struct bb b = { .n = 0 };
	size_t cie = std_cie(&b, DW_EH_PE_udata4), f = fde(&b, cie, 0x10000, 0x10);
	struct rec_cfi t;

	adv(&b, 1);
	op1(&b, DW_CFA_undefined, 16);
	adv(&b, 1);
	u8(&b, DW_CFA_offset | 16);
	uleb(&b, 1);
	adv(&b, 1);
	u8(&b, DW_CFA_offset | 16);
	uleb(&b, 2);
	adv(&b, 1);
	op2(&b, DW_CFA_register, 16, 0);
	adv(&b, 1);
	op1(&b, DW_CFA_same_value, 16);
	adv(&b, 1);
	u8(&b, DW_CFA_offset | 16);
	uleb(&b, 1);
	end(&b, f);
	expect_rows("test_rec_cfi_return_address", &b, NULL, 0,
		    "10000 rsp+8, 10001 end, 10002 rsp+8, 10003 unsupported, 10006 rsp+8, 10010 gap");
	if (!build(&b, NULL, 0, 1000, &t))
		(void)T_EQ_INT("test_rec_cfi_why_ra", 3, t.why[REC_CFI_WHY_RA]);
	rec_cfi__free(&t);

	/* A CIE whose return-address column is not rip: not x86-64's CFI. */
	b.n = 0;
	cie = begin(&b);
	u32(&b, 0);
	u8(&b, 1);
	put(&b, "zR", 3);
	uleb(&b, 1);
	sleb(&b, -8);
	u8(&b, 15);
	uleb(&b, 1);
	u8(&b, DW_EH_PE_udata4);
	end(&b, cie);
	end(&b, fde(&b, cie, 0x10000, 0x10));
	expect_err("test_rec_cfi_ra_column", &b, NULL, 0, 1000, -EBADMSG);
}

/*
 * glibc's vfork: `pop %rdi` keeps the return address in rdi (CFA = rsp + 0, then rsp + 8 after
 * `push %rdi`); libgcc's exception return, `mov %rcx,%rsp` (CFA = rcx + 8), `pop %rcx` (CFA =
 * rsp + 8), `jmp *%rcx` (CFA = rsp + 0, the return address in rcx). The return address in
 * another register, or with a CFA not from rsp, is not a row the walker follows.
 */
static void test_ra_in_rdi(void)
{
	struct bb b = { .n = 0 };
	size_t cie = std_cie(&b, DW_EH_PE_udata4), f = fde(&b, cie, 0x10000, 0x22);

	adv(&b, 1);
	op1(&b, DW_CFA_def_cfa_offset, 0);
	op2(&b, DW_CFA_register, 16, 5);
	adv(&b, 8);
	op1(&b, DW_CFA_def_cfa_offset, 8);
	end(&b, f);
	f = fde(&b, cie, 0x10040, 0x10);
	adv(&b, 1);
	op2(&b, DW_CFA_register, 16, 1);	/* rdx: __longjmp's */
	adv(&b, 1);
	op2(&b, DW_CFA_register, 16, 5);
	op2(&b, DW_CFA_def_cfa, 6, 16);	/* CFA from rbp */
	adv(&b, 1);
	op2(&b, DW_CFA_def_cfa, 7, 8);
	u8(&b, DW_CFA_offset | 6);	/* rbp saved: the row has no room for it */
	uleb(&b, 2);
	end(&b, f);
	f = fde(&b, cie, 0x10060, 0x10);	/* libgcc's, its rbx saved in the frame left */
	u8(&b, DW_CFA_offset | 3);
	uleb(&b, 7);
	adv(&b, 1);
	op2(&b, DW_CFA_def_cfa, 2, 8);
	adv(&b, 3);
	op1(&b, DW_CFA_def_cfa_register, 7);
	adv(&b, 1);
	op2(&b, DW_CFA_register, 16, 2);
	op1(&b, DW_CFA_def_cfa_offset, 0);
	end(&b, f);
	expect_rows("test_rec_cfi_ra_in_rdi", &b, NULL, 0,
		    "10000 rsp+8, 10001 rsp+0 ra@rdi, 10009 rsp+8 ra@rdi, 10022 gap, 10040 rsp+8, "
		    "10041 unsupported, 10050 gap, 10060 rsp+8 rbx@cfa-56, 10061 rcx+8 rbx@cfa-56, "
		    "10064 rsp+8 rbx@cfa-56, 10065 rsp+0 ra@rcx rbx@cfa-56, 10070 gap");
}

static void test_cfa_rules(void)
{
	struct bb b = { .n = 0 };
	size_t cie = std_cie(&b, DW_EH_PE_udata4), f = fde(&b, cie, 0x10000, 0x10);
	uint8_t e[16], n;

	adv(&b, 1);
	op1(&b, DW_CFA_def_cfa_offset, 65535);
	adv(&b, 1);
	op1(&b, DW_CFA_def_cfa_offset, 65536);	/* over 64 KiB, 8-aligned: rsp8 */
	adv(&b, 1);
	op1(&b, DW_CFA_def_cfa_offset, 65540);	/* not 8-aligned */
	adv(&b, 1);
	op2(&b, DW_CFA_def_cfa, 10, 8);
	adv(&b, 1);
	expr(&b, DW_CFA_def_cfa_expression, -1, e, breg(e, 7, 16));
	adv(&b, 1);
	expr(&b, DW_CFA_def_cfa_expression, -1, e, breg(e, 6, 16));
	adv(&b, 1);
	expr(&b, DW_CFA_def_cfa_expression, -1, (uint8_t[]){ DW_OP_bregx, 7, 24 }, 3);
	adv(&b, 1);
	expr(&b, DW_CFA_def_cfa_expression, -1, e, breg(e, 7, -8));
	adv(&b, 1);
	n = (uint8_t)breg(e, 7, 8);
	e[n++] = DW_OP_deref;
	expr(&b, DW_CFA_def_cfa_expression, -1, e, n);
	adv(&b, 1);
	n = (uint8_t)breg(e, 7, 8);
	e[n++] = DW_OP_nop;
	expr(&b, DW_CFA_def_cfa_expression, -1, e, n);
	adv(&b, 1);
	op2(&b, DW_CFA_def_cfa, 7, 8);
	end(&b, f);
	expect_rows("test_rec_cfi_cfa_rules", &b, NULL, 0,
		    "10000 rsp+8, 10001 rsp+65535, 10002 rsp+65536, 10003 unsupported, "
		    "10005 rsp+16, 10006 rbp+16, 10007 rsp+24, 10008 unsupported, 1000b rsp+8, "
		    "10010 gap");

	/* After an expression, def_cfa_register and def_cfa_offset go back to the register rule
	 * before it (libgcc; libgcrypt's asm). */
	b.n = 0;
	cie = std_cie(&b, DW_EH_PE_udata4);
	f = fde(&b, cie, 0x10000, 0x10);
	op1(&b, DW_CFA_def_cfa_offset, 56);
	op1(&b, DW_CFA_def_cfa_register, 0);
	adv(&b, 1);
	expr(&b, DW_CFA_def_cfa_expression, -1, e, breg(e, 7, 16));
	adv(&b, 1);
	op1(&b, DW_CFA_def_cfa_register, 7);
	adv(&b, 1);
	expr(&b, DW_CFA_def_cfa_expression, -1, e, breg(e, 7, 16));
	op1(&b, DW_CFA_def_cfa_offset, 48);
	end(&b, f);
	expect_rows("test_rec_cfi_cfa_part_after_expression", &b, NULL, 0,
		    "10000 unsupported, 10001 rsp+16, 10002 rsp+56, 10003 rsp+48, 10010 gap");
	/* ...but without any register rule before, there is nothing to go back to. */
	b.n = 0;
	cie = cie_start(&b, 0, 1, "zR", (uint8_t[]){ DW_EH_PE_udata4 }, 1, 1);
	u8(&b, DW_CFA_offset | 16);
	uleb(&b, 1);
	end(&b, cie);
	f = fde(&b, cie, 0x10000, 0x10);
	op1(&b, DW_CFA_def_cfa_offset, 8);
	end(&b, f);
	expect_err("test_rec_cfi_cfa_offset_without_rule", &b, NULL, 0, 1000, -EBADMSG);
}

/* The PLT's: rsp + 8, and 8 more from byte N of a 16-byte entry on (gcc, binutils). */
static size_t plt_expr(uint8_t *e, uint8_t lit, int64_t rsp_off)
{
	size_t n = breg(e, 7, rsp_off);

	n += breg(e + n, 16, 0);
	memcpy(e + n, (uint8_t[]){ DW_OP_lit15, DW_OP_and, lit, DW_OP_ge, DW_OP_lit3, DW_OP_shl,
				   DW_OP_plus }, 7);
	return n + 7;
}

static void test_plt(void)
{
	struct bb b = { .n = 0 };
	size_t cie = std_cie(&b, DW_EH_PE_udata4), f;
	uint8_t e[32];

	f = fde(&b, cie, 0x10000, 0x20);
	op1(&b, DW_CFA_def_cfa_offset, 16);
	adv(&b, 6);
	op1(&b, DW_CFA_def_cfa_offset, 24);
	adv(&b, 10);
	expr(&b, DW_CFA_def_cfa_expression, -1, e, plt_expr(e, DW_OP_lit11, 8));
	end(&b, f);
	f = fde(&b, cie, 0x10020, 0x10);
	expr(&b, DW_CFA_def_cfa_expression, -1, e, plt_expr(e, DW_OP_lit10, 8));
	end(&b, f);
	f = fde(&b, cie, 0x10030, 0x10);
	expr(&b, DW_CFA_def_cfa_expression, -1, e, plt_expr(e, DW_OP_lit10, 16));
	end(&b, f);
	expect_rows("test_rec_cfi_plt", &b, NULL, 0,
		    "10000 rsp+16, 10006 rsp+24, 10010 plt/11, 10020 plt/10, 10030 unsupported, "
		    "10040 gap");
}

/* glibc's __restore_rt: the registers in the ucontext at rsp. */
static void signal_fde(struct bb *b, size_t cie, int64_t rbp_at)
{
	size_t f = fde(b, cie, 0x10000, 0x10);
	uint8_t e[16], n = (uint8_t)breg(e, 7, 160);

	e[n++] = DW_OP_deref;
	expr(b, DW_CFA_def_cfa_expression, -1, e, n);
	expr(b, DW_CFA_expression, 8, e, breg(e, 7, 40));
	expr(b, DW_CFA_expression, 6, e, breg(e, 7, rbp_at));
	expr(b, DW_CFA_expression, 16, e, breg(e, 7, 168));
	end(b, f);
}

static size_t signal_cie(struct bb *b, const char *aug)
{
	size_t at = cie_start(b, 0, 1, aug, (uint8_t[]){ DW_EH_PE_udata4 }, 1, 1);

	end(b, at);
	return at;
}

static void test_signal(void)
{
	struct bb b = { .n = 0 };

	signal_fde(&b, signal_cie(&b, "zRS"), 120);
	expect_rows("test_rec_cfi_signal", &b, NULL, 0, "10000 signal, 10010 gap");
	b.n = 0;
	signal_fde(&b, signal_cie(&b, "zRS"), 128);
	expect_rows("test_rec_cfi_signal_other_layout", &b, NULL, 0, "10000 unsupported, 10010 gap");
	b.n = 0;
	signal_fde(&b, signal_cie(&b, "zR"), 120);
	expect_rows("test_rec_cfi_signal_without_s", &b, NULL, 0, "10000 unsupported, 10010 gap");
}

/* gcc's realigned stack: CFA in r10, then saved below rbp, rbp's own slot at rbp. */
static void test_drap(void)
{
	struct bb b = { .n = 0 };
	size_t cie = std_cie(&b, DW_EH_PE_udata4), f = fde(&b, cie, 0x10000, 0x40);
	uint8_t e[16], n;

	adv(&b, 5);
	op2(&b, DW_CFA_def_cfa, 10, 0);
	u8(&b, DW_CFA_advance_loc1);
	u8(&b, 40);
	expr(&b, DW_CFA_expression, 6, e, breg(e, 6, 0));
	adv(&b, 2);
	n = (uint8_t)breg(e, 6, -8);
	e[n++] = DW_OP_deref;
	expr(&b, DW_CFA_def_cfa_expression, -1, e, n);
	adv(&b, 8);
	op2(&b, DW_CFA_def_cfa, 10, 0);
	adv(&b, 8);
	op2(&b, DW_CFA_def_cfa, 7, 8);
	end(&b, f);
	f = fde(&b, cie, 0x10040, 0x10);
	n = (uint8_t)breg(e, 6, -40000);
	e[n++] = DW_OP_deref;
	expr(&b, DW_CFA_def_cfa_expression, -1, e, n);
	end(&b, f);
	expect_rows("test_rec_cfi_drap", &b, NULL, 0,
		    "10000 rsp+8, 10005 unsupported, 1002f *(rbp-8) rbp@rbp+0, 10037 unsupported, "
		    "1003f rsp+8 rbp@rbp+0, 10040 unsupported, 10050 gap");
}

/* Rules for registers the walker ignores make no rows. */
static void test_merge(void)
{
	struct bb b = { .n = 0 };
	size_t cie = std_cie(&b, DW_EH_PE_udata4), f = fde(&b, cie, 0x10000, 0x10);
	struct rec_cfi t;

	adv(&b, 1);
	u8(&b, DW_CFA_offset | 13);
	uleb(&b, 2);
	adv(&b, 1);
	u8(&b, DW_CFA_offset | 12);
	uleb(&b, 3);
	adv(&b, 1);
	op1(&b, DW_CFA_def_cfa_offset, 16);
	end(&b, f);
	expect_rows("test_rec_cfi_merge", &b, NULL, 0, "10000 rsp+8, 10003 rsp+16, 10010 gap");
	if (!build(&b, NULL, 0, 1000, &t))
		(void)T_EQ_INT("test_rec_cfi_merge_dwarf_rows", 4, t.ndwarf_rows);
	rec_cfi__free(&t);
}

/* FDEs out of order, adjacent ones, a hole between them, an empty one. */
static void test_gaps(void)
{
	struct bb b = { .n = 0 };
	size_t cie = std_cie(&b, DW_EH_PE_udata4), f;

	end(&b, fde(&b, cie, 0x10030, 0x10));
	end(&b, fde(&b, cie, 0x10000, 0x10));
	end(&b, fde(&b, cie, 0x10028, 0));
	f = fde(&b, cie, 0x10010, 0x10);
	op1(&b, DW_CFA_def_cfa_offset, 16);
	end(&b, f);
	expect_rows("test_rec_cfi_gaps", &b, NULL, 0,
		    "10000 rsp+8, 10010 rsp+16, 10020 gap, 10030 rsp+8, 10040 gap");
}

/* An FDE owns its range; later ones starting inside it are clipped or dropped. */
static void test_overlap(void)
{
	struct bb b = { .n = 0 }, d = { .n = 0 };
	size_t cie = std_cie(&b, DW_EH_PE_udata4), f, dcie;
	struct rec_cfi t;

	end(&b, fde(&b, cie, 0x10000, 0x100));
	f = fde(&b, cie, 0x10080, 0x180);
	op1(&b, DW_CFA_def_cfa_offset, 16);
	adv(&b, 0x10);
	op1(&b, DW_CFA_def_cfa_offset, 24);
	u8(&b, DW_CFA_advance_loc1);
	u8(&b, 0x80);
	op1(&b, DW_CFA_def_cfa_offset, 32);
	end(&b, f);
	f = fde(&b, cie, 0x10010, 0x10);
	op1(&b, DW_CFA_def_cfa_offset, 48);
	end(&b, f);
	expect_rows("test_rec_cfi_overlap", &b, NULL, 0,
		    "10000 rsp+8, 10100 rsp+24, 10110 rsp+32, 10200 gap");
	if (!build(&b, NULL, 0, 1000, &t)) {
		(void)T_EQ_INT("test_rec_cfi_overlap_count", 2, t.nfdes_overlap);
		(void)T_EQ_INT("test_rec_cfi_overlap_fdes", 2, t.nfdes);
	}
	rec_cfi__free(&t);

	/* Equal starts: the longer first. */
	b.n = 0;
	cie = std_cie(&b, DW_EH_PE_udata4);
	f = fde(&b, cie, 0x10000, 0x10);
	op1(&b, DW_CFA_def_cfa_offset, 16);
	end(&b, f);
	f = fde(&b, cie, 0x10000, 0x20);
	op1(&b, DW_CFA_def_cfa_offset, 24);
	end(&b, f);
	expect_rows("test_rec_cfi_overlap_longer", &b, NULL, 0, "10000 rsp+24, 10020 gap");

	/* Equal starts in both sections: .eh_frame first, however long. */
	b.n = 0;
	end(&b, fde(&b, std_cie(&b, DW_EH_PE_udata4), 0x10000, 0x10));
	dcie = cie_start(&d, 0xffffffff, 1, "", NULL, 0, 1);
	entry_rules(&d);
	end(&d, dcie);
	f = dbg_fde(&d, dcie, 0x10000, 0x20);
	op1(&d, DW_CFA_def_cfa_offset, 16);
	end(&d, f);
	expect_rows("test_rec_cfi_overlap_sections", &b, &d, 0, "10000 rsp+8, 10010 rsp+16, 10020 gap");
}

static void test_versions(void)
{
	struct bb b = { .n = 0 }, d = { .n = 0 };
	size_t cie, f;
	struct rec_cfi t;

	/* .eh_frame, CIE version 3: the return-address column is a ULEB128. */
	cie = cie_start(&b, 0, 3, "zR", (uint8_t[]){ DW_EH_PE_udata4 }, 1, 1);
	entry_rules(&b);
	end(&b, cie);
	end(&b, fde(&b, cie, 0x10000, 0x10));
	expect_rows("test_rec_cfi_cie_v3", &b, NULL, 0, "10000 rsp+8, 10010 gap");
	b.n = 0;
	cie = cie_start(&b, 0, 2, "zR", (uint8_t[]){ DW_EH_PE_udata4 }, 1, 1);
	entry_rules(&b);
	end(&b, cie);
	end(&b, fde(&b, cie, 0x10000, 0x10));
	expect_err("test_rec_cfi_cie_v2", &b, NULL, 0, 1000, -EBADMSG);

	/* .debug_frame only, version 4: address and segment selector sizes. */
	cie = begin(&d);
	u32(&d, 0xffffffff);
	u8(&d, 4);
	u8(&d, 0);	/* no augmentation */
	u8(&d, 4);	/* address size */
	u8(&d, 0);	/* segment selector size */
	uleb(&d, 1);
	sleb(&d, -8);
	uleb(&d, 16);
	entry_rules(&d);
	end(&d, cie);
	f = begin(&d);
	u32(&d, (uint32_t)cie);
	u32(&d, 0x10000);
	u32(&d, 0x10);
	op1(&d, DW_CFA_def_cfa_offset, 16);
	end(&d, f);
	expect_rows("test_rec_cfi_debug_frame_v4", NULL, &d, 0, "10000 rsp+16, 10010 gap");
	if (!build(NULL, &d, 0, 1000, &t))
		(void)T_EQ_INT("test_rec_cfi_debug_frame_source", REC_CFI_SRC_DEBUG_FRAME, t.sources);
	rec_cfi__free(&t);
	d.b[cie + 9] = 1;	/* segment selectors */
	expect_err("test_rec_cfi_debug_frame_segments", NULL, &d, 0, 1000, -EBADMSG);

	/* .debug_frame, 64-bit DWARF: 0xffffffff, 8-byte length and CIE id, 8-byte CIE pointer. */
	d.n = 0;
	u32(&d, 0xffffffff);
	u64(&d, 0);
	u64(&d, UINT64_MAX);
	u8(&d, 1);
	u8(&d, 0);
	uleb(&d, 1);
	sleb(&d, -8);
	u8(&d, 16);
	entry_rules(&d);
	memcpy(d.b + 4, (uint64_t[]){ d.n - 12 }, 8);
	u32(&d, 0xffffffff);
	u64(&d, 8 + 16 + 2);
	u64(&d, 0);
	u64(&d, 0x10000);
	u64(&d, 0x10);
	op1(&d, DW_CFA_def_cfa_offset, 24);
	expect_rows("test_rec_cfi_debug_frame_64bit", NULL, &d, 0, "10000 rsp+24, 10010 gap");
}

static void test_augmentations(void)
{
	struct bb b = { .n = 0 };
	uint8_t plr[] = { DW_EH_PE_indirect | DW_EH_PE_pcrel | DW_EH_PE_sdata4, 1, 2, 3, 4,
			  DW_EH_PE_pcrel | DW_EH_PE_sdata4, DW_EH_PE_udata4 };
	size_t cie, f;

	/* gcc's C++ CIE: personality, LSDA and FDE encodings; the FDE carries its LSDA. */
	cie = cie_start(&b, 0, 1, "zPLR", plr, sizeof(plr), 1);
	entry_rules(&b);
	end(&b, cie);
	f = begin(&b);
	u32(&b, (uint32_t)(b.n - cie));
	u32(&b, 0x10000);
	u32(&b, 0x10);
	uleb(&b, 4);
	u32(&b, 0x12345678);
	op1(&b, DW_CFA_def_cfa_offset, 16);
	end(&b, f);
	expect_rows("test_rec_cfi_aug_plr", &b, NULL, 0, "10000 rsp+16, 10010 gap");

	/* Unknown letters: fine after R, their data skipped through 'z''s length... */
	b.n = 0;
	cie = cie_start(&b, 0, 1, "zRX", (uint8_t[]){ DW_EH_PE_udata4, 9, 9 }, 3, 1);
	entry_rules(&b);
	end(&b, cie);
	end(&b, fde(&b, cie, 0x10000, 0x10));
	expect_rows("test_rec_cfi_aug_unknown_after_r", &b, NULL, 0, "10000 rsp+8, 10010 gap");

	/* ...but R after one cannot be found. */
	b.n = 0;
	cie = cie_start(&b, 0, 1, "zXR", (uint8_t[]){ 9, DW_EH_PE_udata4 }, 2, 1);
	entry_rules(&b);
	end(&b, cie);
	end(&b, fde(&b, cie, 0x10000, 0x10));
	expect_err("test_rec_cfi_aug_unknown_before_r", &b, NULL, 0, 1000, -EBADMSG);

	/* No 'z': nothing says where the instructions start. */
	b.n = 0;
	cie = cie_start(&b, 0, 1, "eh", NULL, 0, 1);
	entry_rules(&b);
	end(&b, cie);
	end(&b, fde(&b, cie, 0x10000, 0x10));
	expect_err("test_rec_cfi_aug_eh", &b, NULL, 0, 1000, -EBADMSG);

	/* An aligned personality pointer, R after it. */
	b.n = 0;
	cie = cie_start(&b, 0, 1, "zPR", (uint8_t[]){ DW_EH_PE_aligned, 0, 0, 0, 0, 0, 0, 0, 0,
						      DW_EH_PE_udata4 }, 10, 1);
	entry_rules(&b);
	end(&b, cie);
	end(&b, fde(&b, cie, 0x10000, 0x10));
	expect_err("test_rec_cfi_aug_aligned_personality", &b, NULL, 0, 1000, -EBADMSG);

	/* Augmentation data longer than the CIE. */
	b.n = 0;
	cie = begin(&b);
	u32(&b, 0);
	u8(&b, 1);
	put(&b, "zR", 3);
	uleb(&b, 1);
	sleb(&b, -8);
	u8(&b, 16);
	uleb(&b, 100);
	u8(&b, DW_EH_PE_udata4);
	end(&b, cie);
	end(&b, fde(&b, cie, 0x10000, 0x10));
	expect_err("test_rec_cfi_aug_too_long", &b, NULL, 0, 1000, -EBADMSG);
}

static void test_encodings(void)
{
	static const uint8_t encs[] = {
		DW_EH_PE_absptr, DW_EH_PE_uleb128, DW_EH_PE_udata2, DW_EH_PE_udata4, DW_EH_PE_udata8,
		DW_EH_PE_sleb128, DW_EH_PE_sdata2, DW_EH_PE_sdata4, DW_EH_PE_sdata8,
		DW_EH_PE_pcrel | DW_EH_PE_sdata4, DW_EH_PE_pcrel | DW_EH_PE_sdata8,
		DW_EH_PE_pcrel | DW_EH_PE_udata2,
	};
	char name[64];
	struct bb b;
	size_t cie;

	for (size_t i = 0; i < sizeof(encs); i++) {
		b.n = 0;
		cie = std_cie(&b, encs[i]);
		end(&b, fde_enc(&b, cie, encs[i], 0x7000, 0x10));
		snprintf(name, sizeof(name), "test_rec_cfi_encoding_%#x", encs[i]);
		expect_rows(name, &b, NULL, 0, "7000 rsp+8, 7010 gap");
	}
	b.n = 0;
	cie = std_cie(&b, DW_EH_PE_datarel | DW_EH_PE_sdata4);
	end(&b, fde_enc(&b, cie, DW_EH_PE_sdata4, 0x7000, 0x10));
	expect_err("test_rec_cfi_encoding_datarel", &b, NULL, 0, 1000, -EBADMSG);
	b.n = 0;
	cie = std_cie(&b, DW_EH_PE_indirect | DW_EH_PE_udata4);
	end(&b, fde_enc(&b, cie, DW_EH_PE_udata4, 0x7000, 0x10));
	expect_err("test_rec_cfi_encoding_indirect", &b, NULL, 0, 1000, -EBADMSG);
	b.n = 0;
	cie = std_cie(&b, 0x07);
	end(&b, fde_enc(&b, cie, DW_EH_PE_udata4, 0x7000, 0x10));
	expect_err("test_rec_cfi_encoding_unknown", &b, NULL, 0, 1000, -EBADMSG);
	/* The range wraps around the address space. */
	b.n = 0;
	cie = std_cie(&b, DW_EH_PE_udata8);
	end(&b, fde_enc(&b, cie, DW_EH_PE_udata8, 0xffffffffffff0000ull, 0x20000));
	expect_err("test_rec_cfi_range_wraps", &b, NULL, IMG_NO_PHDRS, 1000, -EBADMSG);
}

/* Without section headers, .eh_frame_hdr leads to .eh_frame, read up to its terminator. */
static void test_no_sections(void)
{
	struct bb b = { .n = 0 };
	struct rec_cfi t;

	prologue(&b, std_cie(&b, DW_EH_PE_pcrel | DW_EH_PE_sdata4), DW_EH_PE_pcrel | DW_EH_PE_sdata4);
	u32(&b, 0);
	u32(&b, 0x12345678);	/* garbage after the terminator */
	expect_rows("test_rec_cfi_no_sections", &b, NULL, IMG_NO_SECTIONS,
		    "10000 rsp+8, 10001 rsp+16 rbp@cfa-16, 10004 rbp+16 rbp@cfa-16, "
		    "1000e rsp+8 rbp@cfa-16, 10010 gap");
	if (!build(&b, NULL, IMG_NO_SECTIONS, 1000, &t))
		(void)T_EQ_INT("test_rec_cfi_no_sections_source", REC_CFI_SRC_EH_FRAME_HDR, t.sources);
	rec_cfi__free(&t);
	expect_err("test_rec_cfi_no_sections_bad_hdr", &b, NULL, IMG_NO_SECTIONS | IMG_BAD_HDR, 1000,
		   -EBADMSG);
	expect_err("test_rec_cfi_no_sections_no_hdr", &b, NULL, IMG_NO_SECTIONS | IMG_NO_HDR, 1000,
		   -ENOENT);
}

/* A debug file: .eh_frame is NOBITS, so PT_GNU_EH_FRAME leads to other bytes; .debug_frame only. */
static void test_debug_file(void)
{
	struct bb b = { .n = 0 }, d = { .n = 0 };
	size_t cie;

	end(&b, fde(&b, std_cie(&b, DW_EH_PE_udata4), 0x10000, 0x10));
	u32(&b, 0);
	cie = cie_start(&d, 0xffffffff, 1, "", NULL, 0, 1);
	entry_rules(&d);
	end(&d, cie);
	end(&d, dbg_fde(&d, cie, 0x20000, 0x10));
	expect_rows("test_rec_cfi_debug_file", &b, &d, IMG_EH_NOBITS, "20000 rsp+8, 20010 gap");
}

static void test_empty(void)
{
	struct bb b = { .n = 0 };

	expect_err("test_rec_cfi_empty_section", &b, NULL, 0, 1000, -ENOENT);
	expect_err("test_rec_cfi_no_cfi", NULL, NULL, 0, 1000, -ENOENT);
	u32(&b, 0);
	expect_err("test_rec_cfi_terminator_only", &b, NULL, 0, 1000, -ENOENT);
	b.n = 0;
	std_cie(&b, DW_EH_PE_udata4);
	expect_err("test_rec_cfi_cie_only", &b, NULL, 0, 1000, -ENOENT);
	b.n = 0;
	end(&b, fde(&b, std_cie(&b, DW_EH_PE_udata4), 0x200000, 0x10));
	expect_err("test_rec_cfi_outside_code", &b, NULL, 0, 1000, -ENOENT);
	expect_rows("test_rec_cfi_no_phdrs_no_filter", &b, NULL, IMG_NO_PHDRS, "200000 rsp+8, 200010 gap");
	expect_err("test_rec_cfi_not_x86_64", &b, NULL, IMG_AARCH64, 1000, -ENOTSUP);
}

static void test_limits(void)
{
	struct bb b = { .n = 0 };
	size_t cie;

	prologue(&b, std_cie(&b, DW_EH_PE_udata4), DW_EH_PE_udata4);
	expect_err("test_rec_cfi_max_rows_exact", &b, NULL, 0, 5, 0);
	expect_err("test_rec_cfi_max_rows", &b, NULL, 0, 4, -E2BIG);
	expect_err("test_rec_cfi_max_rows_zero", &b, NULL, 0, 0, -E2BIG);

	/* rows[].pc is 32 bits: the gap after the last FDE at base + 2^32 - 1 at most. */
	b.n = 0;
	cie = std_cie(&b, DW_EH_PE_udata8);
	end(&b, fde_enc(&b, cie, DW_EH_PE_udata8, 0x10000, 0x10));
	end(&b, fde_enc(&b, cie, DW_EH_PE_udata8, 0x10000 + 0xffffffffull - 0x10, 0x10));
	expect_err("test_rec_cfi_span_4g", &b, NULL, IMG_NO_PHDRS, 1000, 0);
	b.n = 0;
	cie = std_cie(&b, DW_EH_PE_udata8);
	end(&b, fde_enc(&b, cie, DW_EH_PE_udata8, 0x10000, 0x10));
	end(&b, fde_enc(&b, cie, DW_EH_PE_udata8, 0x10000 + 0xffffffffull - 0xf, 0x10));
	expect_err("test_rec_cfi_span_over_4g", &b, NULL, IMG_NO_PHDRS, 1000, -E2BIG);
}

/* ---- hostile input ------------------------------------------------------------------------ */

static void test_truncated(void)
{
	struct bb b = { .n = 0 };
	size_t cie, f;
	struct rec_cfi t;

	/* A CIE whose length runs past the section. */
	cie = std_cie(&b, DW_EH_PE_udata4);
	memcpy(b.b + cie, (uint32_t[]){ 100 }, 4);
	expect_err("test_rec_cfi_cie_past_end", &b, NULL, 0, 1000, -EBADMSG);

	/* A CIE too short for its own fields. */
	b.n = 0;
	cie = std_cie(&b, DW_EH_PE_udata4);
	memcpy(b.b + cie, (uint32_t[]){ 6 }, 4);
	b.n = cie + 10;
	end(&b, fde(&b, cie, 0x10000, 0x10));
	expect_err("test_rec_cfi_cie_short", &b, NULL, 0, 1000, -EBADMSG);

	/* A good FDE, then one whose length runs past the section: the first stays. */
	b.n = 0;
	cie = std_cie(&b, DW_EH_PE_udata4);
	end(&b, fde(&b, cie, 0x10000, 0x10));
	f = fde(&b, cie, 0x10010, 0x10);
	op1(&b, DW_CFA_def_cfa_offset, 16);
	end(&b, f);
	memcpy(b.b + f, (uint32_t[]){ 1000 }, 4);
	expect_rows("test_rec_cfi_fde_past_end", &b, NULL, 0, "10000 rsp+8, 10010 gap");
	if (!build(&b, NULL, 0, 1000, &t))
		(void)T_EQ_INT("test_rec_cfi_fde_past_end_bad", 1, t.nbad);
	rec_cfi__free(&t);

	/* An FDE shorter than its address fields; a length too short for a CIE id. */
	b.n = 0;
	cie = std_cie(&b, DW_EH_PE_udata4);
	end(&b, fde(&b, cie, 0x10000, 0x10));
	f = begin(&b);
	u32(&b, (uint32_t)(b.n - cie));
	u16(&b, 0x1000);
	end(&b, f);
	u32(&b, 2);
	u16(&b, 0);
	expect_rows("test_rec_cfi_fde_short", &b, NULL, 0, "10000 rsp+8, 10010 gap");

	/* Operands cut off by the end of the FDE. */
	b.n = 0;
	cie = std_cie(&b, DW_EH_PE_udata4);
	f = fde(&b, cie, 0x10000, 0x10);
	adv(&b, 1);
	u8(&b, DW_CFA_def_cfa);
	u8(&b, 7);
	end(&b, f);
	expect_err("test_rec_cfi_operand_cut", &b, NULL, 0, 1000, -EBADMSG);

	/* An expression longer than its FDE. */
	b.n = 0;
	cie = std_cie(&b, DW_EH_PE_udata4);
	f = fde(&b, cie, 0x10000, 0x10);
	u8(&b, DW_CFA_def_cfa_expression);
	uleb(&b, 100);
	u8(&b, DW_OP_breg7);
	u8(&b, 8);
	end(&b, f);
	expect_err("test_rec_cfi_expression_past_end", &b, NULL, 0, 1000, -EBADMSG);
	b.n = 0;
	cie = std_cie(&b, DW_EH_PE_udata4);
	f = fde(&b, cie, 0x10000, 0x10);
	u8(&b, DW_CFA_def_cfa_expression);
	uleb(&b, UINT64_MAX);
	end(&b, f);
	expect_err("test_rec_cfi_expression_huge", &b, NULL, 0, 1000, -EBADMSG);
}

static void test_leb(void)
{
	struct bb b = { .n = 0 };
	size_t cie = std_cie(&b, DW_EH_PE_udata4), f = fde(&b, cie, 0x10000, 0x10);

	/* 2^64 - 1 in 10 bytes is fine as a ULEB128 but no CFA offset. */
	op1(&b, DW_CFA_def_cfa_offset, UINT64_MAX);
	end(&b, f);
	expect_err("test_rec_cfi_leb_max", &b, NULL, 0, 1000, -EBADMSG);
	b.n = 0;
	cie = std_cie(&b, DW_EH_PE_udata4);
	f = fde(&b, cie, 0x10000, 0x10);
	u8(&b, DW_CFA_def_cfa_offset);
	put(&b, (uint8_t[]){ 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00 },
	    11);
	end(&b, f);
	expect_err("test_rec_cfi_leb_11_bytes", &b, NULL, 0, 1000, -EBADMSG);
	b.n = 0;
	cie = std_cie(&b, DW_EH_PE_udata4);
	f = fde(&b, cie, 0x10000, 0x10);
	u8(&b, DW_CFA_def_cfa_offset);
	put(&b, (uint8_t[]){ 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x02 }, 10);
	end(&b, f);
	expect_err("test_rec_cfi_leb_over_64_bits", &b, NULL, 0, 1000, -EBADMSG);
	/* A factored offset that overflows. */
	b.n = 0;
	cie = std_cie(&b, DW_EH_PE_udata4);
	f = fde(&b, cie, 0x10000, 0x10);
	op2(&b, DW_CFA_offset_extended, 6, 1ull << 61);
	end(&b, f);
	expect_err("test_rec_cfi_factored_overflow", &b, NULL, 0, 1000, -EBADMSG);
}

static void test_missing_cie(void)
{
	struct bb b = { .n = 0 }, d = { .n = 0 };
	size_t cie = std_cie(&b, DW_EH_PE_udata4), f, first;
	struct rec_cfi t;

	first = fde(&b, cie, 0x10000, 0x10);
	end(&b, first);
	f = fde(&b, cie, 0x10020, 0x10);	/* CIE pointer to the first FDE */
	memcpy(b.b + f + 4, (uint32_t[]){ (uint32_t)(f + 4 - first) }, 4);
	end(&b, f);
	f = fde(&b, cie, 0x10040, 0x10);	/* before the section */
	memcpy(b.b + f + 4, (uint32_t[]){ (uint32_t)(f + 4 + 16) }, 4);
	end(&b, f);
	expect_rows("test_rec_cfi_missing_cie", &b, NULL, 0, "10000 rsp+8, 10010 gap");
	if (!build(&b, NULL, 0, 1000, &t))
		(void)T_EQ_INT("test_rec_cfi_missing_cie_bad", 2, t.nbad);
	rec_cfi__free(&t);

	/* .debug_frame: a CIE offset past the section, an FDE before its CIE. */
	end(&d, dbg_fde(&d, 0x1000, 0x10000, 0x10));
	f = dbg_fde(&d, 0, 0x10010, 0x10);
	op1(&d, DW_CFA_def_cfa_offset, 16);
	end(&d, f);
	cie = cie_start(&d, 0xffffffff, 1, "", NULL, 0, 1);
	entry_rules(&d);
	end(&d, cie);
	memcpy(d.b + f + 4, (uint32_t[]){ (uint32_t)cie }, 4);
	expect_rows("test_rec_cfi_debug_frame_cie_after", NULL, &d, 0, "10010 rsp+16, 10020 gap");
}

static void test_state_stack(void)
{
	struct bb b = { .n = 0 };
	size_t cie = std_cie(&b, DW_EH_PE_udata4), f;

	f = fde(&b, cie, 0x10000, 0x10);
	for (int i = 0; i < 32; i++)
		u8(&b, DW_CFA_remember_state);
	op1(&b, DW_CFA_def_cfa_offset, 16);
	for (int i = 0; i < 32; i++)
		u8(&b, DW_CFA_restore_state);
	end(&b, f);
	expect_rows("test_rec_cfi_remember_32", &b, NULL, 0, "10000 rsp+8, 10010 gap");
	b.n = 0;
	cie = std_cie(&b, DW_EH_PE_udata4);
	f = fde(&b, cie, 0x10000, 0x10);
	for (int i = 0; i < 10000; i++)
		u8(&b, DW_CFA_remember_state);
	end(&b, f);
	expect_err("test_rec_cfi_remember_deep", &b, NULL, 0, 1000, -EBADMSG);
	b.n = 0;
	cie = std_cie(&b, DW_EH_PE_udata4);
	f = fde(&b, cie, 0x10000, 0x10);
	u8(&b, DW_CFA_restore_state);
	end(&b, f);
	expect_err("test_rec_cfi_restore_empty", &b, NULL, 0, 1000, -EBADMSG);
	/* remember_state in a CIE does not carry over into its FDEs. */
	b.n = 0;
	cie = cie_start(&b, 0, 1, "zR", (uint8_t[]){ DW_EH_PE_udata4 }, 1, 1);
	entry_rules(&b);
	u8(&b, DW_CFA_remember_state);
	end(&b, cie);
	f = fde(&b, cie, 0x10000, 0x10);
	u8(&b, DW_CFA_restore_state);
	end(&b, f);
	expect_err("test_rec_cfi_cie_state", &b, NULL, 0, 1000, -EBADMSG);
	/* Locations in a CIE make no sense. */
	b.n = 0;
	cie = cie_start(&b, 0, 1, "zR", (uint8_t[]){ DW_EH_PE_udata4 }, 1, 1);
	entry_rules(&b);
	adv(&b, 1);
	end(&b, cie);
	end(&b, fde(&b, cie, 0x10000, 0x10));
	expect_err("test_rec_cfi_cie_advance", &b, NULL, 0, 1000, -EBADMSG);
}

/* A malformed FDE between two good ones: its rows undone, its range a gap. */
static void test_bad_fde_is_gap(void)
{
	struct bb b = { .n = 0 };
	size_t cie = std_cie(&b, DW_EH_PE_udata4), f;
	struct rec_cfi t;

	end(&b, fde(&b, cie, 0x10000, 0x10));
	f = fde(&b, cie, 0x10010, 0x10);
	adv(&b, 1);
	op1(&b, DW_CFA_def_cfa_offset, 24);
	adv(&b, 1);
	u8(&b, DW_CFA_GNU_window_save);
	end(&b, f);
	f = fde(&b, cie, 0x10020, 0x10);
	op1(&b, DW_CFA_def_cfa_offset, 16);
	end(&b, f);
	expect_rows("test_rec_cfi_bad_fde_is_gap", &b, NULL, 0,
		    "10000 rsp+8, 10010 gap, 10020 rsp+16, 10030 gap");
	if (!build(&b, NULL, 0, 1000, &t)) {
		(void)T_EQ_INT("test_rec_cfi_bad_fde_count", 1, t.nbad);
		(void)T_EQ_INT("test_rec_cfi_bad_fde_dwarf_rows", 2, t.ndwarf_rows);
	}
	rec_cfi__free(&t);

	/* The first FDE malformed: rows start at the next; base moves with them. */
	b.n = 0;
	cie = std_cie(&b, DW_EH_PE_udata4);
	f = fde(&b, cie, 0x10000, 0x10);
	u8(&b, 0x3f);
	end(&b, f);
	end(&b, fde(&b, cie, 0x10020, 0x10));
	expect_rows("test_rec_cfi_bad_first_fde", &b, NULL, 0, "10020 rsp+8, 10030 gap");
}

/* xorshift64*: the same mutations on every run. */
static uint64_t rnd(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545f4914f6cdd1dull;
}

/* CFI using most of the decoder: the tests above, one section. */
static void rich_cfi(struct bb *b)
{
	uint8_t plr[] = { DW_EH_PE_indirect | DW_EH_PE_pcrel | DW_EH_PE_sdata4, 1, 2, 3, 4,
			  DW_EH_PE_pcrel | DW_EH_PE_sdata4, DW_EH_PE_pcrel | DW_EH_PE_sdata4 };
	size_t cie = std_cie(b, DW_EH_PE_udata4), cie2, f;
	uint8_t e[32];

	prologue(b, cie, DW_EH_PE_udata4);
	f = fde(b, cie, 0x10100, 0x40);
	u8(b, DW_CFA_remember_state);
	op2s(b, DW_CFA_def_cfa_sf, 7, -3);
	op2(b, DW_CFA_offset_extended, 6, 4);
	u8(b, DW_CFA_advance_loc1);
	u8(b, 3);
	u8(b, DW_CFA_restore_state);
	expr(b, DW_CFA_expression, 6, e, breg(e, 6, 0));
	adv(b, 2);
	expr(b, DW_CFA_def_cfa_expression, -1, e, plt_expr(e, DW_OP_lit11, 8));
	adv(b, 2);
	op2(b, DW_CFA_register, 6, 3);
	op2(b, DW_CFA_val_offset, 3, 2);
	adv(b, 2);
	u8(b, DW_CFA_restore | 6);
	op1(b, DW_CFA_undefined, 16);
	end(b, f);
	cie2 = cie_start(b, 0, 3, "zPLRS", plr, sizeof(plr), 1);
	entry_rules(b);
	end(b, cie2);
	f = begin(b);
	u32(b, (uint32_t)(b->n - cie2));
	u32(b, (uint32_t)(0x10200 - (EH_VADDR + b->n)));
	u32(b, 0x10);
	uleb(b, 4);
	u32(b, 0);
	signal_fde(b, cie, 120);
	end(b, f);
	u32(b, 0);
}

static const char *check_mutant(const struct bb *b, unsigned int flags)
{
	struct rec_cfi t;
	int err = build(b, NULL, flags, 64, &t);
	const char *broken = NULL;

	if (err && err != -ENOENT && err != -EBADMSG && err != -E2BIG)
		broken = "unexpected error";
	else if (err && (t.rows || t.nrows))
		broken = "rows left after an error";
	else if (!err)
		broken = t.nrows > 64 ? "more rows than max_rows" : table_broken(&t);
	rec_cfi__free(&t);
	return broken;
}

/*
 * Every truncation of a rich section, and thousands of copies with a few random bytes changed:
 * an error or a well-formed table, never a crash or a read past .eh_frame (under ASan, the
 * section ends the allocation).
 */
static void test_mutations(void)
{
	struct bb rich = { .n = 0 }, m;
	uint64_t seed = 0x5eed;
	const char *broken = NULL;
	size_t cut;
	int i;

	rich_cfi(&rich);
	expect_err("test_rec_cfi_rich", &rich, NULL, 0, 64, 0);
	for (cut = 0; cut <= rich.n && !broken; cut++) {
		m = rich;
		m.n = cut;
		broken = check_mutant(&m, 0);
		if (!broken)
			broken = check_mutant(&m, IMG_NO_SECTIONS);
	}
	(void)T_CHECK("test_rec_cfi_truncations", !broken, "cut at %zu: %s", cut - 1, broken);
	for (i = 0; i < 4000 && !broken; i++) {
		m = rich;
		for (uint64_t k = rnd(&seed) % 4 + 1; k; k--)
			m.b[rnd(&seed) % m.n] = (uint8_t)rnd(&seed);
		broken = check_mutant(&m, i & 1 ? IMG_NO_SECTIONS : 0);
	}
	(void)T_CHECK("test_rec_cfi_mutations", !broken, "mutant %d: %s", i - 1, broken);
}

static void test_synthetic(void)
{
	test_prologue();
	test_advance_forms();
	test_remember_state();
	test_restore();
	test_factored_forms();
	test_rbp_rules();
	test_rbx_rules();
	test_return_address();
	test_ra_in_rdi();
	test_cfa_rules();
	test_plt();
	test_signal();
	test_drap();
	test_merge();
	test_gaps();
	test_overlap();
	test_versions();
	test_augmentations();
	test_encodings();
	test_no_sections();
	test_debug_file();
	test_empty();
	test_limits();
	test_truncated();
	test_leb();
	test_missing_cie();
	test_state_stack();
	test_bad_fde_is_gap();
	test_mutations();
}

/* rec_cfi FILE...: only the comparison with libdw, on those files (a survey's check). */
int main(int argc, char **argv)
{
	elf_version(EV_CURRENT);
	for (int i = 1; i < argc; i++)
		check_file(argv[i], argv[i]);
	if (argc > 1)
		T_EXIT();
	test_synthetic();
	test_real_binaries();
	T_EXIT();
}
