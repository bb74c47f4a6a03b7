// SPDX-License-Identifier: MIT
/*
 * cfi.c: compact unwind tables (struct stk_urow, include/stk/abi.h) from an object's .eh_frame
 * and .debug_frame, for the BPF walker of user stacks built without frame pointers.
 *
 * One pass over the CFI: entries are indexed (each CIE parsed once), FDEs sorted by start, and
 * each FDE's instructions executed once, a row at every location advance; consecutive rows that
 * encode the same rule merge (rows that differ only in registers the walker ignores, which on
 * x86-64 are few: a push moves the CFA too). elfutils' dwarf_cfi_addrframe() executes the FDE
 * again for every address asked: half a second for cc1's rows, 33 ms here.
 *
 * The objects come from traced processes and stkrec runs as root: the input is hostile. Every
 * read goes through a bounds-checked cursor, every loop consumes input or has a constant bound,
 * nothing recurses, and arrays grow with what was read (entries, rows), never with a length the
 * input claims. A malformed FDE is dropped and its addresses become a gap; the object fails only
 * when nothing usable is left.
 *
 * Sources: the .eh_frame section (found through PT_GNU_EH_FRAME when there is no such section:
 * no section headers) and the .debug_frame section; both when both exist, as in a program built with
 * -fno-asynchronous-unwind-tables, whose own functions are only in .debug_frame while crt1.o's
 * _start is in .eh_frame. And _init and _fini, which have none, where their code has the shape
 * of glibc's crti.o and crtn.o (add_crt_fde()). A compressed .debug_frame (SHF_COMPRESSED) is
 * not read, nor relocatable objects (.o), whose FDE addresses are still to be relocated: no
 * process maps them.
 *
 * Overlapping FDEs (the policy is deterministic): FDEs are sorted by start address, .eh_frame's
 * before .debug_frame's at equal starts, then the longer first, then in section order. An FDE
 * owns its whole range: a later one that starts inside it is clipped to begin where it ends (its
 * rules there are the ones its instructions give at that address), or dropped when it ends
 * inside it too. FDEs outside every executable PT_LOAD segment are dropped: .debug_frame keeps
 * the FDEs of discarded COMDAT copies, relocated to address 0.
 */
#include <dwarf.h>
#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>

#include "unwind.h"

/* DWARF register numbers of x86-64. */
#define REG_RCX 2
#define REG_RBX 3
#define REG_RDI 5
#define REG_RBP 6
#define REG_RSP 7
#define REG_RIP 16

/* remember_state nesting: gcc needs 1 or 2, glibc's hand-written asm 2. */
#define STATE_DEPTH 32
/* The longest expression the row can hold is the PLT one, 9 ops. */
#define EXPR_OPS 12
/* Executable segments kept for the FDE filter; real objects have one or two. */
#define XSEGS 16
/* The row stores a rbp (or rbx) slot in 8-byte words in an __s8. */
#define SLOT_MIN (-128 * 8)
#define SLOT_MAX (127 * 8)

/* ---- bounds-checked reading ------------------------------------------------------------- */

/*
 * A cursor over part of a section. A read past `end` sets `bad` and returns 0 without moving;
 * the flag is sticky, so a sequence of reads is checked once at its end.
 */
struct cur {
	const uint8_t *p, *end;
	const uint8_t *start;	/* the section's first byte, at address vaddr (pcrel pointers) */
	uint64_t vaddr;
	bool bad;
};

static uint64_t fail(struct cur *c)
{
	c->bad = true;
	return 0;
}

static bool has(struct cur *c, uint64_t n)
{
	if (c->bad || (uint64_t)(c->end - c->p) < n)
		c->bad = true;
	return !c->bad;
}

/* n (1..8) bytes, little-endian: x86-64 objects only. */
static uint64_t rd_uint(struct cur *c, unsigned int n)
{
	uint64_t v = 0;

	if (!has(c, n))
		return 0;
	for (unsigned int i = 0; i < n; i++)
		v |= (uint64_t)c->p[i] << (8 * i);
	c->p += n;
	return v;
}

static int64_t rd_sint(struct cur *c, unsigned int n)
{
	uint64_t v = rd_uint(c, n);

	if (n < 8 && (v >> (8 * n - 1)) & 1)
		v |= ~0ull << (8 * n);
	return (int64_t)v;
}

/* LEB128 of at most 10 bytes; one that does not fit in 64 bits is bad. */
static uint64_t rd_leb(struct cur *c, bool sign)
{
	uint64_t v = 0;
	unsigned int shift = 0;
	uint8_t b;

	do {
		if (!has(c, 1) || shift > 63)
			return fail(c);
		b = *c->p++;
		/* Bit 63 is the last: beyond it only zeros, or ones extending a negative sign. */
		if (shift == 63 && (b & 0x7f) && (b & 0x7f) != (sign ? 0x7f : 1))
			return fail(c);
		v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
	} while (b & 0x80);
	if (sign && shift < 64 && (b & 0x40))
		v |= ~0ull << shift;
	return v;
}

static uint64_t rd_uleb(struct cur *c)
{
	return rd_leb(c, false);
}

static int64_t rd_sleb(struct cur *c)
{
	return (int64_t)rd_leb(c, true);
}

/* n bytes in place; NULL (and bad) when fewer are left. */
static const uint8_t *rd_block(struct cur *c, uint64_t n)
{
	const uint8_t *p = c->p;

	if (!has(c, n))
		return NULL;
	c->p += n;
	return p;
}

/* A NUL-terminated string in place. */
static const char *rd_str(struct cur *c)
{
	const uint8_t *nul = c->bad ? NULL : memchr(c->p, 0, c->end - c->p);
	const char *s = (const char *)c->p;

	if (!nul) {
		fail(c);
		return "";
	}
	c->p = nul + 1;
	return s;
}

/* The value part of a DW_EH_PE encoding (the low 4 bits); absptr is 8 bytes in ELF64. */
static uint64_t rd_enc_value(struct cur *c, uint8_t enc)
{
	switch (enc & 0x0f) {
	case DW_EH_PE_absptr:
	case DW_EH_PE_udata8:
		return rd_uint(c, 8);
	case DW_EH_PE_uleb128:
		return rd_uleb(c);
	case DW_EH_PE_udata2:
		return rd_uint(c, 2);
	case DW_EH_PE_udata4:
		return rd_uint(c, 4);
	case DW_EH_PE_sleb128:
		return rd_sleb(c);
	case DW_EH_PE_sdata2:
		return rd_sint(c, 2);
	case DW_EH_PE_sdata4:
		return rd_sint(c, 4);
	case DW_EH_PE_signed:
	case DW_EH_PE_sdata8:
		return rd_sint(c, 8);
	}
	return fail(c);
}

/*
 * An encoded address: absolute, pc-relative (to the field's own address), or relative to
 * *datarel when the caller has a base for it (.eh_frame_hdr's own address). Indirect, textrel,
 * funcrel and aligned pointers are not needed for FDE ranges on x86-64: bad.
 */
static uint64_t rd_ptr(struct cur *c, uint8_t enc, const uint64_t *datarel)
{
	uint64_t here = c->vaddr + (uint64_t)(c->p - c->start);
	uint64_t v = rd_enc_value(c, enc);

	switch (enc & 0xf0) {
	case DW_EH_PE_absptr:
		return v;
	case DW_EH_PE_pcrel:
		return here + v;
	case DW_EH_PE_datarel:
		if (datarel)
			return *datarel + v;
		break;
	}
	return fail(c);
}

/* A sub-cursor over [p, end): same section, same addresses. */
static struct cur sub(const struct cur *c, const uint8_t *p, const uint8_t *end)
{
	struct cur s = *c;

	s.p = p;
	s.end = end;
	return s;
}

/* ---- register rules ---------------------------------------------------------------------- */

enum how {
	R_UNSPEC = 0,	/* not mentioned by the CFI */
	R_UNDEF,
	R_SAME,
	R_OFFSET,	/* saved at CFA + n */
	R_VAL_OFFSET,	/* the value is CFA + n */
	R_REGISTER,	/* in register n */
	R_EXPR,		/* saved at the address expr computes */
	R_VAL_EXPR,
};

struct rule {
	const uint8_t *expr;	/* R_EXPR, R_VAL_EXPR: n bytes in the section */
	int64_t n;
	uint8_t how;		/* enum how */
};

enum cfa_how { CFA_UNSET = 0, CFA_REG, CFA_EXPR };

struct cfa {
	uint8_t how;		/* enum cfa_how */
	uint64_t reg;		/* CFA_REG: CFA = reg + off; kept under an expression */
	int64_t off;
	const uint8_t *expr;	/* CFA_EXPR: len bytes in the section */
	uint64_t len;
};

/* The rules the walker needs; every other register is decoded and ignored. */
struct regs {
	struct cfa cfa;
	struct rule rbp, rbx, ra;
};

/*
 * Before a CIE's initial instructions: rbp and rbx are callee-saved, so unchanged unless said
 * otherwise (the x86-64 psABI, as elfutils' default); the return address is unknown until the
 * CIE says.
 */
static const struct regs abi_regs = { .rbp = { .how = R_SAME }, .rbx = { .how = R_SAME } };

/* ---- DWARF expressions: the few shapes a row can hold ------------------------------------ */

struct op {
	uint8_t code;	/* DW_OP_bregx for breg0..31 too, DW_OP_consts for every literal */
	uint64_t reg;
	int64_t n;
};

static bool op_literal(struct cur *c, uint8_t code, struct op *o)
{
	o->code = DW_OP_consts;
	if (code >= DW_OP_lit0 && code <= DW_OP_lit31)
		o->n = code - DW_OP_lit0;
	else if (code == DW_OP_const1u || code == DW_OP_const2u || code == DW_OP_const4u ||
		 code == DW_OP_const8u)
		o->n = (int64_t)rd_uint(c, 1u << ((code - DW_OP_const1u) / 2));
	else if (code == DW_OP_const1s || code == DW_OP_const2s || code == DW_OP_const4s ||
		 code == DW_OP_const8s)
		o->n = rd_sint(c, 1u << ((code - DW_OP_const1s) / 2));
	else if (code == DW_OP_constu)
		o->n = (int64_t)rd_uleb(c);
	else if (code == DW_OP_consts)
		o->n = rd_sleb(c);
	else
		return false;
	return true;
}

/* One op of the shapes below into o; false for any other op. */
static bool op_read(struct cur *c, struct op *o)
{
	uint8_t code = (uint8_t)rd_uint(c, 1);

	*o = (struct op){ .code = code };
	if (code >= DW_OP_breg0 && code <= DW_OP_breg31) {
		o->code = DW_OP_bregx;
		o->reg = code - DW_OP_breg0;
		o->n = rd_sleb(c);
		return true;
	}
	switch (code) {
	case DW_OP_bregx:
		o->reg = rd_uleb(c);
		o->n = rd_sleb(c);
		return true;
	case DW_OP_deref:
	case DW_OP_and:
	case DW_OP_ge:
	case DW_OP_shl:
	case DW_OP_plus:
		return true;
	}
	return op_literal(c, code, o);
}

/* Decode an expression; its op count, or -1 when it is none of the shapes (or malformed). */
static int expr_ops(const uint8_t *p, uint64_t len, struct op *ops)
{
	struct cur c = { .p = p, .end = p + len, .start = p };
	int n = 0;

	while (c.p < c.end) {
		if (n == EXPR_OPS || !op_read(&c, &ops[n]) || c.bad)
			return -1;
		n++;
	}
	return n;
}

static bool is_breg(const struct op *o, uint64_t reg)
{
	return o->code == DW_OP_bregx && o->reg == reg;
}

static bool is_const(const struct op *o, int64_t n)
{
	return o->code == DW_OP_consts && o->n == n;
}

/*
 * The PLT's CFA: rsp + 8, plus 8 past the push of a lazy-binding entry, N bytes into the entry:
 * DW_OP_breg7 8; DW_OP_breg16 0; lit15; and; litN; ge; lit3; shl; plus. Returns N or -1.
 */
static int plt_shape(const struct op *o, int n)
{
	static const uint8_t tail[] = { DW_OP_and, 0, DW_OP_ge, 0, DW_OP_shl, DW_OP_plus };

	if (n != 9 || !is_breg(&o[0], REG_RSP) || o[0].n != 8 || !is_breg(&o[1], REG_RIP) ||
	    o[1].n != 0 || !is_const(&o[2], 15) || !is_const(&o[6], 3))
		return -1;
	for (int i = 0; i < (int)sizeof(tail); i++)
		if (tail[i] && o[3 + i].code != tail[i])
			return -1;
	return o[4].code == DW_OP_consts && o[4].n >= 0 && o[4].n <= 15 ? (int)o[4].n : -1;
}

/* A rule's expression is exactly DW_OP_breg<reg> off. */
static bool rule_is_breg(const struct rule *r, uint64_t reg, int64_t off)
{
	struct op o[EXPR_OPS];

	return r->how == R_EXPR && expr_ops(r->expr, r->n, o) == 1 && is_breg(&o[0], reg) &&
	       o[0].n == off;
}

/*
 * glibc's __restore_rt (x86_64/libc_sigaction.c), in a CIE with the 'S' augmentation: the
 * interrupted registers are in the ucontext at rsp. CFA = *(rsp + 160), rip at rsp + 168, rbp at
 * rsp + 120. Only this exact layout is a STK_CFA_SIGNAL row: the walker hard-codes it.
 */
static bool is_signal(const struct regs *s)
{
	struct op o[EXPR_OPS];

	return s->cfa.how == CFA_EXPR && expr_ops(s->cfa.expr, s->cfa.len, o) == 2 &&
	       is_breg(&o[0], REG_RSP) && o[0].n == 160 && o[1].code == DW_OP_deref &&
	       rule_is_breg(&s->ra, REG_RSP, 168) && rule_is_breg(&s->rbp, REG_RSP, 120);
}

/* ---- encoding a row ---------------------------------------------------------------------- */

/* What the helpers below return when the rule fits the row. */
#define FITS REC_CFI_WHY__COUNT

/* CFA = reg + off (def_cfa, or an expression that is one breg). */
static enum rec_cfi_why cfa_reg(uint64_t reg, int64_t off, struct stk_urow *r)
{
	if (reg != REG_RSP && reg != REG_RBP && reg != REG_RBX && reg != REG_RCX)
		return REC_CFI_WHY_CFA_REG;
	/* a frame over 64 KiB: rsp-based and 8-aligned in every object surveyed */
	if (reg == REG_RSP && off > UINT16_MAX && !(off & 7) && off / 8 <= UINT16_MAX) {
		r->kind = STK_CFA_RSP8;
		r->cfa_off = (uint16_t)(off / 8);
		return FITS;
	}
	if (off < 0 || off > UINT16_MAX)
		return REC_CFI_WHY_CFA_OFF;
	r->kind = reg == REG_RSP ? STK_CFA_RSP : reg == REG_RBP ? STK_CFA_RBP :
		  reg == REG_RBX ? STK_CFA_RBX : STK_CFA_RCX;
	r->cfa_off = (uint16_t)off;
	return FITS;
}

static enum rec_cfi_why cfa_expr(const struct cfa *cfa, struct stk_urow *r)
{
	struct op o[EXPR_OPS];
	int n = expr_ops(cfa->expr, cfa->len, o), plt;

	if (n == 1 && o[0].code == DW_OP_bregx)
		return cfa_reg(o[0].reg, o[0].n, r);
	/* gcc's stack realignment (DRAP): the CFA was saved just below the frame's rbp. */
	if (n == 2 && is_breg(&o[0], REG_RBP) && o[1].code == DW_OP_deref) {
		if (o[0].n < INT16_MIN || o[0].n > INT16_MAX)
			return REC_CFI_WHY_CFA_OFF;
		r->kind = STK_CFA_RBP_DEREF;
		r->cfa_off = (uint16_t)(int16_t)o[0].n;
		return FITS;
	}
	plt = plt_shape(o, n);
	if (plt < 0)
		return REC_CFI_WHY_CFA_EXPR;
	r->kind = STK_CFA_PLT;
	r->cfa_off = (uint16_t)plt;
	return FITS;
}

/* rbp's rule into r's upper kind bits and rbp_off. */
static enum rec_cfi_why rbp_rule(const struct rule *rbp, struct stk_urow *r)
{
	struct op o[EXPR_OPS];
	int64_t slot;
	int rule;

	if (rbp->how == R_SAME || rbp->how == R_UNSPEC)
		return FITS;
	if (rbp->how == R_OFFSET) {
		slot = rbp->n;
		rule = STK_RBP_AT_CFA;
	} else if (rbp->how == R_EXPR && expr_ops(rbp->expr, rbp->n, o) == 1 &&
		   is_breg(&o[0], REG_RBP)) {
		slot = o[0].n;	/* DRAP: rbp saved at the new rbp */
		rule = STK_RBP_AT_RBP;
	} else {
		return REC_CFI_WHY_RBP;
	}
	if (slot % 8 || slot < SLOT_MIN || slot > SLOT_MAX)
		return REC_CFI_WHY_RBP;
	r->kind = STK_UROW_KIND(r->kind, rule, STK_RBX_SAME);
	r->rbp_off = (int8_t)(slot / 8);
	return FITS;
}

/*
 * rbx's rule into r's top kind bits (after rbp_rule()): in the slot byte when rbp leaves it
 * free, or just below rbp's slot, gcc's push order. Any other rule only loses rbx for the
 * frames further out (enum stk_rbx_rule): the row itself stays usable.
 */
static void rbx_rule(const struct rule *rbx, struct stk_urow *r)
{
	int rbx_how = STK_RBX_LOST, rbp_how = STK_UROW_RBP(r->kind);
	int64_t slot = rbx->n;

	if (rbx->how == R_SAME || rbx->how == R_UNSPEC)
		return;
	if (rbx->how == R_OFFSET && !(slot % 8)) {
		if (rbp_how == STK_RBP_SAME && slot >= SLOT_MIN && slot <= SLOT_MAX) {
			rbx_how = STK_RBX_AT_CFA;
			r->rbp_off = (int8_t)(slot / 8);
		} else if (rbp_how == STK_RBP_AT_CFA && slot == r->rbp_off * 8 - 8) {
			rbx_how = STK_RBX_BELOW_RBP;
		}
	}
	r->kind = STK_UROW_KIND(STK_UROW_CFA(r->kind), rbp_how, rbx_how);
}

/*
 * The return address in a register: glibc's vfork's rdi, libgcc's exception return's rcx; CFA =
 * rsp + off, rbp untouched (abi.h). rbx's rule stays in the row, which the walker leaves alone
 * there (the leaf's rbx is the event's).
 */
static enum rec_cfi_why ra_in_reg(const struct regs *s, struct stk_urow *r)
{
	if (s->cfa.how != CFA_REG || s->cfa.reg != REG_RSP)
		return REC_CFI_WHY_RA;
	if (s->cfa.off < 0 || s->cfa.off > UINT16_MAX)
		return REC_CFI_WHY_CFA_OFF;
	if (s->rbp.how != R_SAME && s->rbp.how != R_UNSPEC)
		return REC_CFI_WHY_RBP;
	r->kind = s->ra.n == REG_RDI ? STK_CFA_RA_RDI : STK_CFA_RA_RCX;
	r->cfa_off = (uint16_t)s->cfa.off;
	return FITS;
}

/*
 * The row for rules s: the walker's view of them, or STK_CFA_UNSUPPORTED with the first reason
 * in *why (left alone otherwise). signal: the CIE has the 'S' augmentation.
 */
static struct stk_urow encode(const struct regs *s, bool signal, enum rec_cfi_why *why)
{
	struct stk_urow r = { 0 };
	enum rec_cfi_why w;

	if (s->ra.how == R_UNDEF)
		return (struct stk_urow){ .kind = STK_CFA_END };
	if (signal && is_signal(s))
		return (struct stk_urow){ .kind = STK_CFA_SIGNAL };
	/*
	 * x86-64: call pushes the return address, so CFA - 8 is the only place the walker reads,
	 * but for glibc's vfork, which keeps it in rdi, and libgcc's exception return in rcx.
	 */
	if (s->ra.how == R_REGISTER && (s->ra.n == REG_RDI || s->ra.n == REG_RCX))
		w = ra_in_reg(s, &r);
	else if (s->ra.how != R_OFFSET || s->ra.n != -8)
		w = REC_CFI_WHY_RA;
	else if (s->cfa.how == CFA_UNSET)
		w = REC_CFI_WHY_CFA_REG;
	else if (s->cfa.how == CFA_REG)
		w = cfa_reg(s->cfa.reg, s->cfa.off, &r);
	else
		w = cfa_expr(&s->cfa, &r);
	if (w == FITS)	/* a no-op for ra_in_reg()'s rows: it took rbp untouched only */
		w = rbp_rule(&s->rbp, &r);
	if (w == FITS) {
		rbx_rule(&s->rbx, &r);
		return r;
	}
	*why = w;
	return (struct stk_urow){ .kind = STK_CFA_UNSUPPORTED };
}

/* ---- the table being built --------------------------------------------------------------- */

struct table {
	struct stk_urow *rows;
	uint32_t n, cap, max;
	uint64_t base;		/* rows[].pc = vaddr - base */
};

static bool same_rule(const struct stk_urow *a, const struct stk_urow *b)
{
	return a->kind == b->kind && a->cfa_off == b->cfa_off && a->rbp_off == b->rbp_off;
}

static int table_grow(struct table *t)
{
	uint64_t cap = t->cap ? 2ull * t->cap : 1024;
	struct stk_urow *rows;

	if (cap > t->max)	/* table_put() grows only while n < max */
		cap = t->max;
	rows = realloc(t->rows, (size_t)cap * sizeof(*rows));
	if (!rows)
		return -ENOMEM;
	t->rows = rows;
	t->cap = (uint32_t)cap;
	return 0;
}

/* Rule r from vaddr on (vaddr - base fits in 32 bits: checked before any row is put). */
static int table_put(struct table *t, uint64_t vaddr, struct stk_urow r)
{
	struct stk_urow *last = t->n ? &t->rows[t->n - 1] : NULL;

	r.pc = (uint32_t)(vaddr - t->base);
	if (last && last->pc == r.pc) {
		/* A clipped FDE's rules up to the clip land on one pc (as a gap put again after a
		 * malformed FDE): the last one holds. */
		*last = r;
		if (t->n > 1 && same_rule(last - 1, last))
			t->n--;
		return 0;
	}
	if (last && same_rule(last, &r))
		return 0;
	if (t->n == t->max)
		return -E2BIG;
	if (t->n == t->cap && table_grow(t))
		return -ENOMEM;
	t->rows[t->n++] = r;
	return 0;
}

/* ---- CIEs, FDEs and running their instructions ------------------------------------------- */

struct cie {
	uint64_t off;		/* of the entry in its source: the key FDEs refer to it by */
	uint32_t src;
	bool ok;		/* parsed, and its initial instructions ran */
	bool aug_data;		/* 'z': FDEs carry augmentation data, with its length */
	bool signal;		/* 'S': a signal trampoline's frame */
	uint8_t fde_enc;	/* how FDE addresses are encoded ('R'; absolute otherwise) */
	uint64_t caf;		/* code alignment factor */
	int64_t daf;		/* data alignment factor */
	struct regs init;	/* after the initial instructions: what DW_CFA_restore goes back to */
};

struct fde {
	uint64_t lo, hi;	/* the code range [lo, hi), ELF virtual addresses */
	struct cur insns;	/* the instructions (after the augmentation data) */
	uint32_t cie;		/* index in builder.cies */
	uint32_t src;
	uint32_t seq;		/* discovery order: the last key of the sort */
	uint64_t cie_off;	/* before resolve_fdes(): the CIE pointer, as an offset */
	/* src SRC_CRT, _init or _fini (add_crt_fde()): CFA = rsp + 16 in [lo + sub_end, lo + add_end) */
	uint32_t sub_end, add_end;
};

/* One run of instructions: a CIE's initial ones (t NULL), or an FDE's. */
struct exec {
	const struct cie *cie;
	const struct regs *init;	/* DW_CFA_restore's rules */
	struct regs st;
	struct regs stack[STATE_DEPTH];
	uint32_t depth;
	uint64_t loc;		/* address the current rules start at */
	uint64_t lo, hi;	/* rows are kept for [lo, hi): the FDE's range, clipped */
	struct table *t;
	struct rec_cfi *out;	/* statistics */
};

/* The current rules hold from x->loc up to `to`: one row, for the part inside [lo, hi). */
static int emit(struct exec *x, uint64_t to)
{
	uint64_t from = x->loc > x->lo ? x->loc : x->lo;
	enum rec_cfi_why why = REC_CFI_WHY__COUNT;
	struct stk_urow r;

	if (to > x->hi)
		to = x->hi;
	if (from >= to)
		return 0;
	r = encode(&x->st, x->cie->signal, &why);
	x->out->ndwarf_rows++;
	if (why < REC_CFI_WHY__COUNT)
		x->out->why[why]++;
	return table_put(x->t, from, r);
}

static int move_to(struct exec *x, uint64_t to)
{
	int err;

	if (!x->t || to < x->loc)
		return -EBADMSG;	/* a location in a CIE, or one going backwards */
	err = emit(x, to);
	x->loc = to;
	return err;
}

/* An advance past the end of the address space only ends the FDE early. */
static int advance(struct exec *x, uint64_t delta)
{
	uint64_t to;

	if (__builtin_mul_overflow(delta, x->cie->caf, &delta) ||
	    __builtin_add_overflow(x->loc, delta, &to))
		to = UINT64_MAX;
	return move_to(x, to);
}

/* An unsigned (sign false) or signed operand times the data alignment factor. */
static int64_t factored(struct exec *x, struct cur *c, bool sign)
{
	uint64_t u = sign ? 0 : rd_uleb(c);
	int64_t v = sign ? rd_sleb(c) : (int64_t)u, r;

	if (u > INT64_MAX || __builtin_mul_overflow(v, x->cie->daf, &r))
		return (int64_t)fail(c);
	return r;
}

static void set_rule(struct exec *x, uint64_t reg, struct rule r)
{
	if (reg == REG_RBP)
		x->st.rbp = r;
	else if (reg == REG_RBX)
		x->st.rbx = r;
	else if (reg == REG_RIP)
		x->st.ra = r;
}

static void restore(struct exec *x, uint64_t reg)
{
	if (reg == REG_RBP)
		x->st.rbp = x->init->rbp;
	else if (reg == REG_RBX)
		x->st.rbx = x->init->rbx;
	else if (reg == REG_RIP)
		x->st.ra = x->init->ra;
}

/* DW_CFA_{offset,val_offset}*: reg's rule becomes `how` with a factored offset. */
static int op_offset(struct exec *x, struct cur *c, uint64_t reg, uint8_t how, bool sign,
		     bool negate)
{
	int64_t n = factored(x, c, sign);

	if (negate && n == INT64_MIN)
		return -EBADMSG;
	set_rule(x, reg, (struct rule){ .how = how, .n = negate ? -n : n });
	return 0;
}

/* DW_CFA_{val_,}expression: reg's rule is the block that follows. */
static int op_expression(struct exec *x, struct cur *c, uint8_t how)
{
	uint64_t reg = rd_uleb(c), len = rd_uleb(c);
	const uint8_t *expr = rd_block(c, len);

	if (expr)
		set_rule(x, reg, (struct rule){ .how = how, .expr = expr, .n = (int64_t)len });
	return 0;
}

static int op_def_cfa(struct exec *x, struct cur *c, bool sign)
{
	uint64_t reg = rd_uleb(c), u = sign ? 0 : rd_uleb(c);
	int64_t off = sign ? factored(x, c, true) : (int64_t)u;

	if (u > INT64_MAX)
		return -EBADMSG;
	x->st.cfa = (struct cfa){ .how = CFA_REG, .reg = reg, .off = off };
	return 0;
}

/*
 * def_cfa_register and def_cfa_offset change half of a register rule. After an expression,
 * DWARF leaves them undefined (elfutils refuses them); libgcc, which unwinds the program's own
 * exceptions, goes back to the register and offset of the rule before the expression, and
 * libgcrypt's hand-written asm relies on it: so do we. Without any rule before, malformed.
 */
static int op_cfa_part(struct exec *x, struct cur *c, uint8_t op)
{
	uint64_t u = op == DW_CFA_def_cfa_offset_sf ? 0 : rd_uleb(c);
	int64_t off = op == DW_CFA_def_cfa_offset_sf ? factored(x, c, true) : (int64_t)u;

	if (x->st.cfa.how == CFA_UNSET || u > INT64_MAX)
		return -EBADMSG;
	x->st.cfa.how = CFA_REG;
	if (op == DW_CFA_def_cfa_register)
		x->st.cfa.reg = u;
	else
		x->st.cfa.off = off;
	return 0;
}

static int op_cfa_expression(struct exec *x, struct cur *c)
{
	uint64_t len = rd_uleb(c);
	const uint8_t *expr = rd_block(c, len);

	if (expr) {
		x->st.cfa.how = CFA_EXPR;
		x->st.cfa.expr = expr;
		x->st.cfa.len = len;
	}
	return 0;
}

static int op_state(struct exec *x, uint8_t op)
{
	if (op == DW_CFA_remember_state) {
		if (x->depth == STATE_DEPTH)
			return -EBADMSG;
		x->stack[x->depth++] = x->st;
	} else {
		if (!x->depth)
			return -EBADMSG;
		x->st = x->stack[--x->depth];
	}
	return 0;
}

/* Everything but the three opcodes with an operand in their low 6 bits. */
static int step_extended(struct exec *x, struct cur *c, uint8_t op)
{
	uint64_t reg, reg2;

	switch (op) {
	case DW_CFA_nop:
		return 0;
	case DW_CFA_GNU_args_size:
		rd_uleb(c);
		return 0;
	case DW_CFA_set_loc:
		return move_to(x, rd_ptr(c, x->cie->fde_enc, NULL));
	case DW_CFA_advance_loc1:
		return advance(x, rd_uint(c, 1));
	case DW_CFA_advance_loc2:
		return advance(x, rd_uint(c, 2));
	case DW_CFA_advance_loc4:
		return advance(x, rd_uint(c, 4));
	case DW_CFA_MIPS_advance_loc8:
		return advance(x, rd_uint(c, 8));
	case DW_CFA_offset_extended:
	case DW_CFA_offset_extended_sf:
	case DW_CFA_GNU_negative_offset_extended:
		reg = rd_uleb(c);
		return op_offset(x, c, reg, R_OFFSET, op == DW_CFA_offset_extended_sf,
				 op == DW_CFA_GNU_negative_offset_extended);
	case DW_CFA_val_offset:
	case DW_CFA_val_offset_sf:
		reg = rd_uleb(c);
		return op_offset(x, c, reg, R_VAL_OFFSET, op == DW_CFA_val_offset_sf, false);
	case DW_CFA_restore_extended:
		restore(x, rd_uleb(c));
		return 0;
	case DW_CFA_undefined:
	case DW_CFA_same_value:
		reg = rd_uleb(c);
		set_rule(x, reg, (struct rule){ .how = op == DW_CFA_undefined ? R_UNDEF : R_SAME });
		return 0;
	case DW_CFA_register:
		reg = rd_uleb(c);
		reg2 = rd_uleb(c);
		set_rule(x, reg, (struct rule){ .how = R_REGISTER, .n = (int64_t)reg2 });
		return 0;
	case DW_CFA_remember_state:
	case DW_CFA_restore_state:
		return op_state(x, op);
	case DW_CFA_def_cfa:
	case DW_CFA_def_cfa_sf:
		return op_def_cfa(x, c, op == DW_CFA_def_cfa_sf);
	case DW_CFA_def_cfa_register:
	case DW_CFA_def_cfa_offset:
	case DW_CFA_def_cfa_offset_sf:
		return op_cfa_part(x, c, op);
	case DW_CFA_def_cfa_expression:
		return op_cfa_expression(x, c);
	case DW_CFA_expression:
	case DW_CFA_val_expression:
		return op_expression(x, c, op == DW_CFA_expression ? R_EXPR : R_VAL_EXPR);
	}
	return -EBADMSG;	/* unknown, or another architecture's (GNU_window_save) */
}

static int step(struct exec *x, struct cur *c)
{
	uint8_t op = (uint8_t)rd_uint(c, 1), low = op & 0x3f;

	switch (op & 0xc0) {
	case DW_CFA_advance_loc:
		return advance(x, low);
	case DW_CFA_offset:
		return op_offset(x, c, low, R_OFFSET, false, false);
	case DW_CFA_restore:
		restore(x, low);
		return 0;
	}
	return step_extended(x, c, op);
}

/* Field by field: the state stack (3 KB) needs no clearing for each of cc1's 45,000 FDEs. */
static void exec_start(struct exec *x, const struct cie *cie, const struct regs *init,
		       uint64_t loc, uint64_t lo, uint64_t hi, struct table *t)
{
	x->cie = cie;
	x->init = init;
	x->st = *init;
	x->depth = 0;
	x->loc = loc;
	x->lo = lo;
	x->hi = hi;
	x->t = t;
}

/*
 * Run instructions from x's current state: each consumes at least one byte, and an FDE stops
 * once past its range. A truncated operand is -EBADMSG, as an unknown opcode.
 */
static int run(struct exec *x, struct cur c)
{
	int err = 0;

	while (!err && !c.bad && c.p < c.end && x->loc < x->hi)
		err = step(x, &c);
	if (!err && c.bad)
		err = -EBADMSG;
	if (!err && x->t)
		err = emit(x, x->hi);	/* the last rules hold to the end of the range */
	return err;
}

/* ---- sources ----------------------------------------------------------------------------- */

struct src {
	struct cur data;	/* the whole section */
	bool eh;		/* .eh_frame rules: CIE id 0, relative CIE pointers */
};

/* The source number of _init's and _fini's rules: after .eh_frame's and .debug_frame's */
#define SRC_CRT 2

struct builder {
	struct src src[2];
	uint32_t nsrc;
	struct cur crt[2];	/* .init and .fini: the code, for add_crt_fde() */
	uint32_t ncrt;
	struct cie *cies;	/* sorted by (src, off): appended in reading order */
	uint32_t ncies, cies_cap;
	struct fde *fdes;
	uint32_t nfdes, fdes_cap;
	uint64_t xsegs[XSEGS][2];	/* executable PT_LOAD ranges */
	uint32_t nxsegs;
	bool has_phdrs;
	uint32_t nbad;		/* malformed entries */
	struct exec x;
	struct table t;
	struct rec_cfi *out;
};

static void add_src(struct builder *b, const void *data, size_t size, uint64_t vaddr, bool eh)
{
	struct src *s = &b->src[b->nsrc++];

	s->data = (struct cur){ .p = data, .end = (const uint8_t *)data + size, .start = data,
				.vaddr = vaddr };
	s->eh = eh;
}

static void add_crt(struct builder *b, const Elf_Data *d, uint64_t vaddr)
{
	if (d && d->d_buf)
		b->crt[b->ncrt++] = (struct cur){ .p = d->d_buf, .start = d->d_buf,
						  .end = (const uint8_t *)d->d_buf + d->d_size,
						  .vaddr = vaddr };
}

/*
 * The sections by name; SHT_NOBITS (a debug file's .eh_frame) and compressed ones are not read.
 * Returns whether there is an .eh_frame section, of any type or size: only an object without
 * one is looked at through its program headers (a debug file's would lead to other bytes).
 */
static bool find_sections(Elf *e, struct builder *b)
{
	Elf_Data *eh = NULL, *dbg = NULL;
	uint64_t eh_addr = 0;
	Elf_Scn *scn = NULL;
	bool has_eh = false;
	size_t shstrndx;
	GElf_Shdr sh;
	const char *name;

	if (elf_getshdrstrndx(e, &shstrndx))
		return false;
	while ((scn = elf_nextscn(e, scn))) {
		if (!gelf_getshdr(scn, &sh) || !(name = elf_strptr(e, shstrndx, sh.sh_name)))
			continue;
		has_eh |= !strcmp(name, ".eh_frame");
		if (sh.sh_type == SHT_NOBITS || (sh.sh_flags & SHF_COMPRESSED))
			continue;
		if (!eh && !strcmp(name, ".eh_frame")) {
			eh = elf_getdata(scn, NULL);
			eh_addr = sh.sh_addr;
		} else if (!dbg && !strcmp(name, ".debug_frame")) {
			dbg = elf_getdata(scn, NULL);
		} else if ((!strcmp(name, ".init") || !strcmp(name, ".fini")) && b->ncrt < 2 &&
			   (sh.sh_flags & SHF_EXECINSTR)) {
			add_crt(b, elf_getdata(scn, NULL), sh.sh_addr);
		}
	}
	if (eh) {
		add_src(b, eh->d_buf, eh->d_size, eh_addr, true);
		b->out->sources |= REC_CFI_SRC_EH_FRAME;
	}
	if (dbg) {
		add_src(b, dbg->d_buf, dbg->d_size, 0, false);
		b->out->sources |= REC_CFI_SRC_DEBUG_FRAME;
	}
	return has_eh;
}

/* The first program header of type `type` holding vaddr (any vaddr when type is not PT_LOAD). */
static bool find_phdr(Elf *e, uint32_t type, uint64_t vaddr, GElf_Phdr *ph)
{
	size_t n;

	if (elf_getphdrnum(e, &n))
		return false;
	for (size_t i = 0; i < n; i++) {
		if (!gelf_getphdr(e, (int)i, ph) || ph->p_type != type)
			continue;
		if (type != PT_LOAD || (vaddr >= ph->p_vaddr && vaddr - ph->p_vaddr < ph->p_filesz))
			return true;
	}
	return false;
}

/*
 * Without section headers (sstrip, or a bare image): .eh_frame_hdr's eh_frame_ptr gives
 * .eh_frame's address; it runs to its zero terminator, at most to the end of its PT_LOAD.
 */
static void find_by_phdr(Elf *e, struct builder *b)
{
	GElf_Phdr hdr, load;
	Elf_Data *d;
	struct cur c;
	uint64_t at, datarel, off;
	uint8_t version, enc;

	if (!find_phdr(e, PT_GNU_EH_FRAME, 0, &hdr) || hdr.p_offset > INT64_MAX)
		return;
	d = elf_getdata_rawchunk(e, (int64_t)hdr.p_offset, hdr.p_filesz, ELF_T_BYTE);
	if (!d)
		return;
	c = (struct cur){ .p = d->d_buf, .end = (const uint8_t *)d->d_buf + d->d_size,
			  .start = d->d_buf, .vaddr = hdr.p_vaddr };
	version = (uint8_t)rd_uint(&c, 1);
	enc = (uint8_t)rd_uint(&c, 1);
	rd_uint(&c, 2);		/* the search table's encodings: not used */
	datarel = hdr.p_vaddr;
	at = rd_ptr(&c, enc, &datarel);
	if (c.bad || version != 1 || !find_phdr(e, PT_LOAD, at, &load) ||
	    __builtin_add_overflow(load.p_offset, at - load.p_vaddr, &off) || off > INT64_MAX) {
		b->nbad++;
		return;
	}
	/* libelf checks the chunk against the file's size. */
	d = elf_getdata_rawchunk(e, (int64_t)off, load.p_filesz - (at - load.p_vaddr), ELF_T_BYTE);
	if (!d) {
		b->nbad++;
		return;
	}
	add_src(b, d->d_buf, d->d_size, at, true);
	b->out->sources |= REC_CFI_SRC_EH_FRAME_HDR;
}

/* The executable segments FDEs must start in; without program headers, no filter. */
static void find_xsegs(Elf *e, struct builder *b)
{
	GElf_Phdr ph;
	size_t n;

	if (elf_getphdrnum(e, &n) || !n)
		return;
	b->has_phdrs = true;
	for (size_t i = 0; i < n && b->nxsegs < XSEGS; i++) {
		if (!gelf_getphdr(e, (int)i, &ph) || ph.p_type != PT_LOAD || !(ph.p_flags & PF_X) ||
		    ph.p_vaddr + ph.p_memsz < ph.p_vaddr)
			continue;
		b->xsegs[b->nxsegs][0] = ph.p_vaddr;
		b->xsegs[b->nxsegs][1] = ph.p_vaddr + ph.p_memsz;
		b->nxsegs++;
	}
}

/* ---- indexing entries -------------------------------------------------------------------- */

/* Room for element n of *arr, doubling; n grows with entries read, never with a claimed count. */
static int reserve(void **arr, uint32_t *cap, uint32_t n, size_t size)
{
	uint32_t c;
	void *p;

	if (n < *cap)
		return 0;
	if (*cap > UINT32_MAX / 2)
		return -E2BIG;
	c = *cap ? *cap * 2 : 64;
	p = realloc(*arr, (size_t)c * size);
	if (!p)
		return -ENOMEM;
	*arr = p;
	*cap = c;
	return 0;
}

/*
 * The data of augmentation letter l at a; false for a letter we do not know, or a personality
 * pointer with DW_EH_PE_aligned (its padding depends on an address we do not track).
 */
static bool aug_letter(struct cie *cie, char l, struct cur *a)
{
	uint8_t enc;

	switch (l) {
	case 'R':
		cie->fde_enc = (uint8_t)rd_uint(a, 1);
		return true;
	case 'L':
		rd_uint(a, 1);	/* the LSDA's encoding: the pointer is in the FDE's data */
		return true;
	case 'P':
		enc = (uint8_t)rd_uint(a, 1);
		rd_enc_value(a, enc);	/* the personality routine: not needed */
		return (enc & 0x70) != DW_EH_PE_aligned;
	case 'S':
		cie->signal = true;
		return true;
	}
	return false;
}

/* The 'z' augmentation data: the letters we know, up to the first we do not. */
static int cie_augmentation(struct cie *cie, const char *aug, struct cur *c)
{
	uint64_t len = rd_uleb(c);
	const uint8_t *data = rd_block(c, len);
	struct cur a = sub(c, data, data + len);
	const char *p;

	if (!data)
		return -EBADMSG;
	cie->aug_data = true;
	for (p = aug + 1; *p && aug_letter(cie, *p, &a); p++)
		;
	/* After an unknown letter, whose data has an unknown size, an 'R' cannot be found. */
	if (a.bad || (*p && strchr(p, 'R')))
		return -EBADMSG;
	cie->signal |= *p && strchr(p, 'S');	/* 'S' has no data: it counts anywhere */
	return 0;
}

/* A CIE's fields after its id, then its initial instructions, into cie. */
static int parse_cie(struct builder *b, struct cur c, bool eh, struct cie *cie)
{
	uint8_t version = (uint8_t)rd_uint(&c, 1);
	const char *aug = rd_str(&c);
	uint8_t addr_size = 8;
	uint64_t ra;
	int err;

	if (version != 1 && version != 3 && version != 4)
		return -EBADMSG;
	if (version == 4) {
		addr_size = (uint8_t)rd_uint(&c, 1);
		if (rd_uint(&c, 1) || (addr_size != 4 && addr_size != 8))
			return -EBADMSG;	/* segment selectors: not on x86-64 */
	}
	/* .debug_frame's addresses are absolute, address-sized; .eh_frame says with 'R'. */
	cie->fde_enc = eh || addr_size == 8 ? DW_EH_PE_absptr : DW_EH_PE_udata4;
	cie->caf = rd_uleb(&c);
	cie->daf = rd_sleb(&c);
	ra = version == 1 ? rd_uint(&c, 1) : rd_uleb(&c);
	if (c.bad || ra != REG_RIP || (*aug && *aug != 'z'))
		return -EBADMSG;
	if (*aug && (err = cie_augmentation(cie, aug, &c)))
		return err;
	exec_start(&b->x, cie, &abi_regs, 0, 0, UINT64_MAX, NULL);
	err = run(&b->x, c);
	cie->init = b->x.st;
	return err;
}

static int add_cie(struct builder *b, struct cur c, uint32_t src, uint64_t off)
{
	struct cie *cie;
	int err = reserve((void **)&b->cies, &b->cies_cap, b->ncies, sizeof(*cie));

	if (err)
		return err;
	cie = &b->cies[b->ncies++];
	*cie = (struct cie){ .off = off, .src = src };
	cie->ok = !parse_cie(b, c, b->src[src].eh, cie);
	b->nbad += !cie->ok;
	return 0;
}

static int add_fde(struct builder *b, struct cur c, uint32_t src, uint64_t cie_off)
{
	struct fde *f;
	int err = reserve((void **)&b->fdes, &b->fdes_cap, b->nfdes, sizeof(*f));

	if (err)
		return err;
	f = &b->fdes[b->nfdes];
	*f = (struct fde){ .insns = c, .src = src, .seq = b->nfdes, .cie_off = cie_off };
	b->nfdes++;
	return 0;
}

/*
 * One entry at c: a CIE is parsed, an FDE noted with its CIE's offset. Moves c past the entry;
 * returns 1 at the end of the entries (terminator, or a length past the end), 0, or -errno.
 */
static int index_entry(struct builder *b, uint32_t si, struct cur *c)
{
	const struct src *s = &b->src[si];
	uint64_t off = (uint64_t)(c->p - c->start), len = rd_uint(c, 4), id, id_off;
	unsigned int idsz = 4;
	struct cur e;

	if (len == 0xffffffff) {	/* 64-bit DWARF */
		len = rd_uint(c, 8);
		idsz = 8;
	}
	if (!c->bad && !len)
		return 1;	/* the .eh_frame terminator */
	if (!has(c, len) || len < idsz) {
		b->nbad++;
		return 1;	/* nothing after a bad length can be found */
	}
	e = sub(c, c->p, c->p + len);
	c->p += len;
	id_off = (uint64_t)(e.p - e.start);
	id = rd_uint(&e, idsz);
	if (s->eh ? !id : id == (idsz == 4 ? 0xffffffffull : UINT64_MAX))
		return add_cie(b, e, si, off);
	if (!s->eh)
		return add_fde(b, e, si, id);
	/* .eh_frame: the distance back from the id field to the CIE. */
	if (id > id_off) {
		b->nbad++;
		return 0;
	}
	return add_fde(b, e, si, id_off - id);
}

static int index_src(struct builder *b, uint32_t si)
{
	struct cur c = b->src[si].data;
	int err = 0;

	while (!err && c.p < c.end)
		err = index_entry(b, si, &c);
	return err < 0 ? err : 0;
}

/*
 * glibc's crti.o and crtn.o give _init and _fini (.init, .fini) no CFI: [endbr64] sub $8,%rsp,
 * the body (calls), then add $8,%rsp; ret. A sample in a program's or a library's _init took
 * the leaf guess, whose return address at rsp is wrong after the sub (cc1 and as, 1-2 stacks a
 * minute of compile loops), and a frame above it had no rule. For that exact shape the rules
 * are known: an entry of its own (SRC_CRT, sorted after any real FDE at the same address, so
 * CFI where there is some wins). A section of any other shape gets none.
 */
static int add_crt_fde(struct builder *b, const struct cur *code)
{
	static const uint8_t endbr64[] = { 0xf3, 0x0f, 0x1e, 0xfa };
	static const uint8_t sub8[] = { 0x48, 0x83, 0xec, 0x08 };
	static const uint8_t add8_ret[] = { 0x48, 0x83, 0xc4, 0x08, 0xc3 };
	size_t n = (size_t)(code->end - code->p), at;
	struct fde *f;
	int err;

	at = n >= sizeof(endbr64) && !memcmp(code->p, endbr64, sizeof(endbr64)) ? sizeof(endbr64) : 0;
	if (n < at + sizeof(sub8) + sizeof(add8_ret) || memcmp(code->p + at, sub8, sizeof(sub8)) ||
	    memcmp(code->end - sizeof(add8_ret), add8_ret, sizeof(add8_ret)))
		return 0;
	err = reserve((void **)&b->fdes, &b->fdes_cap, b->nfdes, sizeof(*f));
	if (err)
		return err;
	f = &b->fdes[b->nfdes];
	*f = (struct fde){ .lo = code->vaddr, .hi = code->vaddr + n, .src = SRC_CRT,
			   .seq = b->nfdes, .sub_end = (uint32_t)(at + sizeof(sub8)),
			   .add_end = (uint32_t)(n - 1) };
	b->nfdes++;
	return 0;
}

/* ---- FDE ranges, the order, the rows ----------------------------------------------------- */

static int cmp_cie_key(const void *key, const void *elem)
{
	const struct cie *k = key, *c = elem;

	if (k->src != c->src)
		return k->src < c->src ? -1 : 1;
	return k->off < c->off ? -1 : k->off > c->off;
}

static bool in_xseg(const struct builder *b, uint64_t lo, uint64_t *hi)
{
	if (!b->has_phdrs)
		return true;
	for (uint32_t i = 0; i < b->nxsegs; i++) {
		if (lo < b->xsegs[i][0] || lo >= b->xsegs[i][1])
			continue;
		if (*hi > b->xsegs[i][1])
			*hi = b->xsegs[i][1];
		return true;
	}
	return false;
}

/*
 * An FDE's CIE, range and instructions. Returns 1 to keep it, 0 to drop it (empty, outside the
 * code), -EBADMSG when malformed.
 */
static int resolve_fde(struct builder *b, struct fde *f)
{
	struct cie key = { .off = f->cie_off, .src = f->src }, *cie;
	struct cur c = f->insns;
	uint64_t range;

	if (f->src == SRC_CRT)
		return in_xseg(b, f->lo, &f->hi);
	cie = b->ncies ? bsearch(&key, b->cies, b->ncies, sizeof(*cie), cmp_cie_key) : NULL;
	if (!cie || !cie->ok)
		return -EBADMSG;
	f->cie = (uint32_t)(cie - b->cies);
	f->lo = rd_ptr(&c, cie->fde_enc, NULL);
	range = rd_enc_value(&c, cie->fde_enc);
	if (cie->aug_data)
		rd_block(&c, rd_uleb(&c));
	if (c.bad || __builtin_add_overflow(f->lo, range, &f->hi))
		return -EBADMSG;
	f->insns = c;
	return f->lo < f->hi && in_xseg(b, f->lo, &f->hi);
}

static int cmp_fde(const void *a, const void *b)
{
	const struct fde *x = a, *y = b;

	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	if (x->src != y->src)	/* .eh_frame is src 0 when there is one */
		return x->src < y->src ? -1 : 1;
	if (x->hi != y->hi)
		return x->hi > y->hi ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Keep the FDEs with a usable range, sorted; base is the lowest start. */
static int resolve_fdes(struct builder *b)
{
	uint32_t kept = 0;
	uint64_t hi = 0;
	int r;

	for (uint32_t i = 0; i < b->nfdes; i++) {
		r = resolve_fde(b, &b->fdes[i]);
		b->nbad += r < 0;
		b->out->nfdes_dropped += !r;
		if (r > 0)
			b->fdes[kept++] = b->fdes[i];
	}
	b->nfdes = kept;
	if (!kept)
		return b->nbad ? -EBADMSG : -ENOENT;
	qsort(b->fdes, kept, sizeof(*b->fdes), cmp_fde);
	for (uint32_t i = 0; i < kept; i++)
		hi = b->fdes[i].hi > hi ? b->fdes[i].hi : hi;
	b->t.base = b->fdes[0].lo;
	/* The gap row at the last end needs a 32-bit pc too. */
	return hi - b->t.base > UINT32_MAX ? -E2BIG : 0;
}

/* An _init's or _fini's rows (add_crt_fde()) from lo: CFA = rsp + 8, + 16 after the sub, + 8 */
static int run_crt(struct builder *b, const struct fde *f, uint64_t lo)
{
	const uint64_t at[4] = { f->lo, f->lo + f->sub_end, f->lo + f->add_end, f->hi };
	int err = 0;

	for (int i = 0; !err && i < 3; i++) {
		struct stk_urow r = { .kind = STK_UROW_KIND(STK_CFA_RSP, STK_RBP_SAME, STK_RBX_SAME),
				      .cfa_off = i == 1 ? 16 : 8 };

		if (at[i + 1] > lo)
			err = table_put(&b->t, at[i] > lo ? at[i] : lo, r);
	}
	return err;
}

/* Rows of FDE f from lo (its start, or later when clipped). -EBADMSG leaves the table as it was. */
static int run_fde(struct builder *b, const struct fde *f, uint64_t lo)
{
	const struct cie *cie = &b->cies[f->cie];
	uint32_t n = b->t.n, ndwarf = b->out->ndwarf_rows, why[REC_CFI_WHY__COUNT];
	int err;

	memcpy(why, b->out->why, sizeof(why));
	exec_start(&b->x, cie, &cie->init, f->lo, lo, f->hi, &b->t);
	err = run(&b->x, f->insns);
	if (err == -EBADMSG) {
		/* Rows before lo are never replaced by f's (see table_put): truncating undoes f. */
		b->t.n = n;
		b->out->ndwarf_rows = ndwarf;
		memcpy(b->out->why, why, sizeof(why));
	}
	return err;
}

static const struct stk_urow gap_row = { .kind = STK_CFA_GAP };

/*
 * Every FDE in order, from where the FDEs before it end (*end; *any once one made rows), a gap
 * row before it unless it starts right there. A malformed one is counted and its range left to
 * the next gap row.
 */
static int put_fde(struct builder *b, const struct fde *f, uint64_t *end, bool *any)
{
	uint64_t lo = *any && f->lo < *end ? *end : f->lo;
	int err = 0;

	b->out->nfdes_overlap += lo != f->lo;
	if (lo >= f->hi)
		return 0;
	if (*any && *end < lo)
		err = table_put(&b->t, *end, gap_row);
	if (!err)
		err = f->src == SRC_CRT ? run_crt(b, f, lo) : run_fde(b, f, lo);
	if (err == -EBADMSG) {
		b->nbad++;
		return 0;
	}
	if (!err) {
		b->out->nfdes++;
		*any = true;
		*end = f->hi;
	}
	return err;
}

static int build_rows(struct builder *b)
{
	uint64_t end = 0;
	bool any = false;
	int err = 0;

	for (uint32_t i = 0; !err && i < b->nfdes; i++)
		err = put_fde(b, &b->fdes[i], &end, &any);
	if (!err && any)
		err = table_put(&b->t, end, gap_row);
	if (!err && !any)
		err = -EBADMSG;	/* every FDE with a range was malformed */
	return err;
}

/* rows[0].pc is 0 (a first FDE that failed leaves a hole below), the array no larger than needed. */
static void finish(struct builder *b, struct rec_cfi *out)
{
	struct table *t = &b->t;
	uint32_t first = t->rows[0].pc;
	struct stk_urow *rows;

	for (uint32_t i = 0; i < t->n; i++) {
		t->rows[i].pc -= first;
		out->kinds[STK_UROW_CFA(t->rows[i].kind)]++;
	}
	rows = realloc(t->rows, (size_t)t->n * sizeof(*rows));
	out->rows = rows ? rows : t->rows;
	out->nrows = t->n;
	out->base = t->base + first;
	t->rows = NULL;
}

static int check_object(Elf *e)
{
	GElf_Ehdr eh;

	if (elf_kind(e) != ELF_K_ELF || !gelf_getehdr(e, &eh))
		return -ENOTSUP;
	if (eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_ident[EI_DATA] != ELFDATA2LSB ||
	    eh.e_machine != EM_X86_64)
		return -ENOTSUP;
	/* A .o's FDE addresses wait for relocations this file does not apply; no process maps one. */
	return eh.e_type == ET_REL ? -ENOTSUP : 0;
}

int rec_cfi__build(Elf *e, uint32_t max_rows, struct rec_cfi *out)
{
	struct builder *b;
	int err;

	memset(out, 0, sizeof(*out));
	b = calloc(1, sizeof(*b));
	if (!b)
		return -ENOMEM;
	b->out = out;
	b->x.out = out;
	b->t.max = max_rows;
	err = check_object(e);
	if (err)
		goto out;
	if (!find_sections(e, b))
		find_by_phdr(e, b);
	find_xsegs(e, b);
	for (uint32_t i = 0; !err && i < b->nsrc; i++)
		err = index_src(b, i);
	for (uint32_t i = 0; !err && b->nfdes && i < b->ncrt; i++)
		err = add_crt_fde(b, &b->crt[i]);
	if (!err && !b->nfdes)
		err = b->nbad ? -EBADMSG : -ENOENT;
	if (!err)
		err = resolve_fdes(b);
	if (!err)
		err = build_rows(b);
	if (!err)
		finish(b, out);
out:
	out->nbad = b->nbad;
	free(b->t.rows);
	free(b->fdes);
	free(b->cies);
	free(b);
	return err;
}

void rec_cfi__free(struct rec_cfi *t)
{
	if (!t)
		return;
	free(t->rows);
	t->rows = NULL;
	t->nrows = 0;
}

const struct stk_urow *rec_cfi__lookup(const struct rec_cfi *t, uint64_t vaddr)
{
	uint32_t lo = 0, hi = t->nrows, mid;
	uint64_t pc;

	if (!t->nrows || vaddr < t->base)
		return NULL;
	pc = vaddr - t->base;
	if (pc > UINT32_MAX)
		return &t->rows[t->nrows - 1];
	while (hi - lo > 1) {	/* the last row with rows[].pc <= pc */
		mid = lo + (hi - lo) / 2;
		if (t->rows[mid].pc <= pc)
			lo = mid;
		else
			hi = mid;
	}
	return t->rows[lo].pc <= pc ? &t->rows[lo] : NULL;
}
