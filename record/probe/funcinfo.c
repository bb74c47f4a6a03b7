// SPDX-License-Identifier: MIT
/*
 * funcinfo.c: the BTF func_info of a program's final instructions, for loading copies of it
 * with bpf_prog_load() (record/probe/probe.c: one fentry program per kernel function). A kernel
 * asks it of every program with callbacks (bpf_loop()'s: "missing btf func_info", EINVAL on 6.1);
 * libbpf builds it when it loads the program and, in 1.1, hands it to no one. Hand-written
 * for that reason.
 *
 * libbpf's final instructions are the program's own, then each static function it calls or
 * passes as a callback, appended once. The subprograms start at 0 and at the target of every
 * BPF-to-BPF call and callback reference (the verifier's own rule). Each is then matched to
 * the function of the object's .text section of the same length whose instructions' opcodes
 * agree most (libbpf rewrites immediates, registers and, for CO-RE, a load's size; never the
 * length), and gets that function's BTF FUNC type.
 */
#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/btf.h>
#include <linux/bpf.h>

#include "stk/elfobj.h"
#include "probe.h"

/* A function of .text: its first instruction and length, in instructions. */
struct text_func {
	const char *name;
	uint32_t at, len;
};

struct text {
	const struct bpf_insn *insns;	/* the section's */
	size_t ninsns;
	struct text_func *funcs;
	uint32_t nfuncs;
};

/* Where the subprogram that instruction i calls or references starts; -1 when it does neither. */
static int64_t subprog_target(const struct bpf_insn *insn, size_t i)
{
	bool call = insn->code == (BPF_JMP | BPF_CALL) && insn->src_reg == BPF_PSEUDO_CALL;
	bool func = insn->code == (BPF_LD | BPF_IMM | BPF_DW) && insn->src_reg == BPF_PSEUDO_FUNC;

	return call || func ? (int64_t)i + 1 + insn->imm : -1;
}

/*
 * The subprograms' first instructions into starts (n + 1 zeroes), in order; their count. A
 * mark per instruction first (a subprogram may have many callers), then the marks become offsets.
 */
static uint32_t subprog_starts(const struct bpf_insn *insns, size_t n, uint32_t *starts)
{
	uint32_t k = 0;

	starts[0] = 1;	/* the program's own code */
	for (size_t i = 0; i < n; i++) {
		int64_t t = subprog_target(&insns[i], i);

		if (t > 0 && t < (int64_t)n)
			starts[t] = 1;
	}
	for (size_t i = 0; i < n; i++)	/* marks to offsets, in place: k <= i */
		if (starts[i])
			starts[k++] = (uint32_t)i;
	return k;
}

/* The FUNC symbols of .text (the object's own ELF: trusted, built with stkrec). */
static int read_text(Elf *e, struct text *t)
{
	Elf_Scn *text, *symtab;
	Elf_Data *code, *syms;
	GElf_Shdr sh;
	GElf_Sym sym;
	size_t nsyms;

	if (!(text = elfobj_scn_named(e, ".text", &sh)) ||
	    !(symtab = elfobj_section(e, SHT_SYMTAB, &sh)) || !(code = elf_getdata(text, NULL)) ||
	    !(syms = elf_getdata(symtab, NULL)) || !sh.sh_entsize)
		return -EINVAL;
	t->insns = code->d_buf;
	t->ninsns = code->d_size / sizeof(*t->insns);
	nsyms = sh.sh_size / sh.sh_entsize;
	t->funcs = calloc(nsyms, sizeof(*t->funcs));
	if (!t->funcs)
		return -ENOMEM;
	for (size_t i = 0; i < nsyms; i++) {
		if (!gelf_getsym(syms, (int)i, &sym) || GELF_ST_TYPE(sym.st_info) != STT_FUNC ||
		    sym.st_shndx != elf_ndxscn(text) ||
		    (sym.st_value + sym.st_size) / sizeof(*t->insns) > t->ninsns)
			continue;
		t->funcs[t->nfuncs++] = (struct text_func){
			.name = elf_strptr(e, sh.sh_link, sym.st_name),
			.at = (uint32_t)(sym.st_value / sizeof(*t->insns)),
			.len = (uint32_t)(sym.st_size / sizeof(*t->insns)) };
	}
	return 0;
}

/* The .text function that n instructions at insns are a copy of; NULL when none has that length. */
static const struct text_func *match_func(const struct text *t, const struct bpf_insn *insns,
					  uint32_t n)
{
	const struct text_func *best = NULL;
	uint32_t best_same = 0;

	for (uint32_t i = 0; i < t->nfuncs; i++) {
		const struct text_func *f = &t->funcs[i];
		uint32_t same = 0;

		if (f->len != n || !f->name)
			continue;
		for (uint32_t j = 0; j < n; j++)
			same += t->insns[f->at + j].code == insns[j].code;
		if (!best || same > best_same) {
			best = f;
			best_same = same;
		}
	}
	return best;
}

static int func_type(const struct btf *btf, const char *name, uint32_t *id)
{
	int r = name ? btf__find_by_name_kind(btf, name, BTF_KIND_FUNC) : -ENOENT;

	if (r < 0)
		return r;
	*id = (uint32_t)r;
	return 0;
}

/* One record per subprogram of insns: starts[i] and its type. */
static int fill(const struct text *t, const struct btf *btf, const char *main_name,
		const struct bpf_insn *insns, size_t n, const uint32_t *starts, uint32_t nfi,
		struct bpf_func_info *fi)
{
	int err = func_type(btf, main_name, &fi[0].type_id);

	for (uint32_t i = 1; !err && i < nfi; i++) {
		uint32_t len = (i + 1 < nfi ? starts[i + 1] : (uint32_t)n) - starts[i];
		const struct text_func *f = match_func(t, insns + starts[i], len);

		fi[i].insn_off = starts[i];
		err = f ? func_type(btf, f->name, &fi[i].type_id) : -ENOENT;
	}
	return err;
}

int rec_func_info(const void *elf, size_t elf_size, const struct btf *btf, const char *main_name,
		  const struct bpf_insn *insns, size_t n, struct bpf_func_info **out,
		  uint32_t *nout)
{
	Elf *e = elf_version(EV_CURRENT) == EV_NONE ? NULL :
		 elf_memory((char *)elf, elf_size);
	uint32_t *starts = calloc(n + 1, sizeof(*starts)), nfi = 0;
	struct bpf_func_info *fi = NULL;
	struct text t = { 0 };
	int err = -ENOMEM;

	if (!starts)
		goto out;
	err = e ? read_text(e, &t) : -EINVAL;
	if (err)
		goto out;
	nfi = subprog_starts(insns, n, starts);
	fi = calloc(nfi, sizeof(*fi));
	err = fi ? fill(&t, btf, main_name, insns, n, starts, nfi, fi) : -ENOMEM;
	if (!err) {
		*out = fi;
		*nout = nfi;
		fi = NULL;
	}
out:
	free(fi);
	free(t.funcs);
	free(starts);
	if (e)
		elf_end(e);
	return err;
}
