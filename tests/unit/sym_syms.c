// SPDX-License-Identifier: MIT
/*
 * sym_syms.c: which symbols of an ELF image name code (elfobj_syms_add(), elfobj_syms_unique(),
 * symbolize/syms.c), read from this test's own .symtab: functions, and sizeless STT_NOTYPE labels
 * in code as hand-written assembly leaves them (ld.so's `_start`), but neither a label inside a
 * sized function (a jump target) nor a label in data.
 */
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include <stk/elfobj.h>

#include "../test.h"

__asm__(".text\n"
	".globl sym_syms_label\n"	/* as ld.so's _start: no .type, no .size */
	"sym_syms_label:\n\tnop\n\tnop\n"
	".globl sym_syms_sized\n"
	".type sym_syms_sized, @function\n"
	"sym_syms_sized:\n\tnop\n"
	".globl sym_syms_inner\n"
	"sym_syms_inner:\n\tnop\n\tret\n"
	".size sym_syms_sized, .-sym_syms_sized\n"
	".data\n"
	".globl sym_syms_data\n"
	"sym_syms_data:\n\t.long 1\n"
	".text\n");

/* The kept symbol of this name, or NULL. */
static const struct elfobj_sym *find(const struct elfobj_syms *l, const char *name)
{
	for (uint32_t i = 0; i < l->n; i++)
		if (!strcmp(l->v[i].c.name, name))
			return &l->v[i];
	return NULL;
}

int main(void)
{
	struct elfobj_syms l = { 0 };
	const struct elfobj_sym *s;
	int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	Elf *e;

	elf_version(EV_CURRENT);
	e = fd >= 0 ? elf_begin(fd, ELF_C_READ, NULL) : NULL;
	if (!e || elfobj_syms_add(&l, e, SHT_SYMTAB, 0) <= 0) {
		T_FAIL("test_sym_syms_read", "cannot read this program's .symtab");
		T_EXIT();
	}
	elfobj_syms_unique(&l);
	s = find(&l, "sym_syms_label");
	/* sized up to the next symbol, as it was named up to it */
	T_CHECK("test_sym_syms_code_label", s && s->label && s->c.size == 2, "label %s",
		s ? "not 2 bytes long" : "missing");
	s = find(&l, "sym_syms_sized");
	T_CHECK("test_sym_syms_function", s && !s->label && s->c.size == 3, "sized %s",
		s ? "wrong" : "missing");
	T_CHECK("test_sym_syms_jump_target_dropped", !find(&l, "sym_syms_inner"),
		"a label inside a function was kept");
	T_CHECK("test_sym_syms_data_label_dropped", !find(&l, "sym_syms_data"),
		"a label in data was kept");
	T_CHECK("test_sym_syms_main", find(&l, "main") != NULL, "main missing");
	elfobj_syms_clear(&l);
	elf_end(e);
	close(fd);
	T_EXIT();
}
