// SPDX-License-Identifier: MIT
/*
 * rep_sym_plt.c: PLT stubs named NAME@plt from the relocations (symbolize/syms.c
 * elfobj_syms_add_plt()), in the committed tests/golden/elf/plt.elf (built with IBT: lazy stubs
 * in .plt, the called ones in .plt.sec, __cxa_finalize's in .plt.got) and its stripped copy:
 * the same names from the list stkrec embeds and from the file stkreport opens, a stub with a
 * uprobe's int3 over its first byte still named, a sizeless symbol (_init) bounded by its
 * section, the names kept when a debug file's symbols replace an object's, C++ names demangled
 * before @plt. Run from the repository root.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <stk/elfobj.h>
#include <stk/symbolize.h>

#include "../../symbolize/sym_internal.h"
#include "../test.h"

#define PLT_ELF "tests/golden/elf/plt.elf"
#define PLT_STRIPPED "tests/golden/elf/plt-stripped.elf"

/* What objdump -d says of plt.elf: each stub's address, and the first byte past them */
static const struct {
	uint64_t addr;
	const char *name;
} stubs[] = {
	{ 0x1030, "getenv@plt" },	/* .plt: endbr64; push $0; jmp .plt */
	{ 0x1040, "puts@plt" },
	{ 0x1050, "strlen@plt" },
	{ 0x1060, "__cxa_finalize@plt" },	/* .plt.got: endbr64; jmp *GOT (GLOB_DAT) */
	{ 0x1070, "getenv@plt" },	/* .plt.sec: endbr64; jmp *GOT (JUMP_SLOT) */
	{ 0x1080, "puts@plt" },
	{ 0x1090, "strlen@plt" },
};
#define PLT0 0x1020	/* .plt's first entry: no function's */
#define INIT_END 0x1017	/* .init: _init, sizeless in crti.o */

/* The symbol of l holding addr, or NULL. */
static const struct elfobj_sym *holding(const struct elfobj_syms *l, uint64_t addr)
{
	for (uint32_t i = 0; i < l->n; i++)
		if (addr >= l->v[i].addr && addr - l->v[i].addr < l->v[i].c.size)
			return &l->v[i];
	return NULL;
}

/* The list stkrec embeds (objects.c), of the file at path or of image, and what lends its names. */
struct list {
	struct elfobj_syms l;
	Elf *e;
	int fd;
};

/* .symtab, else .dynsym, and the stubs. */
static bool read_list(const char *path, const uint8_t *image, size_t len, struct list *out)
{
	struct elfobj_syms *l = &out->l;
	bool ok;

	out->fd = image ? -1 : open(path, O_RDONLY | O_CLOEXEC);
	out->e = image ? elf_memory((char *)image, len) : elf_begin(out->fd, ELF_C_READ_MMAP, NULL);
	ok = out->e && elfobj_syms_add(l, out->e, SHT_SYMTAB, 0) >= 0;
	if (ok && !l->n)
		ok = elfobj_syms_add(l, out->e, SHT_DYNSYM, 0) >= 0;
	ok = ok && elfobj_syms_add_plt(l, out->e) == (int)(sizeof(stubs) / sizeof(stubs[0]));
	if (ok)
		elfobj_syms_unique(l);
	return ok;
}

static void free_list(struct list *out)
{
	elfobj_syms_clear(&out->l);
	if (out->e)
		elf_end(out->e);
	if (out->fd >= 0)
		close(out->fd);
	*out = (struct list){ .fd = -1 };
}

/* Every stub named as objdump names it, in the list; nothing over .plt's first entry. */
static void check_list(const char *test, const struct elfobj_syms *l)
{
	char name[128];

	for (size_t i = 0; i < sizeof(stubs) / sizeof(stubs[0]); i++) {
		const struct elfobj_sym *s = holding(l, stubs[i].addr + 4);

		snprintf(name, sizeof(name), "%s_%#llx", test, (unsigned long long)stubs[i].addr);
		(void)T_CHECK(name, s && s->addr == stubs[i].addr && s->c.size == 16 &&
				    !strcmp(s->c.name, stubs[i].name),
			      "expected %s, got %s", stubs[i].name, s ? s->c.name : "(none)");
	}
	snprintf(name, sizeof(name), "%s_plt0", test);
	(void)T_CHECK(name, !holding(l, PLT0), "PLT0 named %s", holding(l, PLT0)->c.name);
}

static void test_lists(void)
{
	struct list l = { .fd = -1 };
	const struct elfobj_sym *s;

	if (T_CHECK("test_sym_plt_read", read_list(PLT_ELF, NULL, 0, &l), "cannot read %s",
		    PLT_ELF)) {
		check_list("test_sym_plt_symtab", &l.l);
		s = holding(&l.l, INIT_END - 1);
		(void)T_CHECK("test_sym_plt_init_bounded", s && !strcmp(s->c.name, "_init") &&
				      s->addr + s->c.size == INIT_END,
			      "_init should end with .init at %#x", INIT_END);
	}
	free_list(&l);
	if (T_CHECK("test_sym_plt_read_stripped", read_list(PLT_STRIPPED, NULL, 0, &l),
		    "cannot read %s", PLT_STRIPPED))
		check_list("test_sym_plt_dynsym", &l.l);
	free_list(&l);
}

/* A uprobe on puts@plt: the kernel's int3 over the first byte of the stub (endbr64). */
static void test_uprobe_int3(void)
{
	struct list l = { .fd = -1 };
	uint8_t *image = NULL;
	size_t len = 0;
	FILE *f = fopen(PLT_ELF, "r");

	if (f) {
		image = malloc(64 << 10);
		len = image ? fread(image, 1, 64 << 10, f) : 0;
		fclose(f);
	}
	if (!T_CHECK("test_sym_plt_int3_read", len > 0x10a0, "cannot read %s", PLT_ELF))
		goto out;
	image[0x1080] = 0xcc;	/* .plt.sec at file offset = address */
	image[0x1040] = 0xcc;	/* a lazy stub */
	image[0x1064] = 0xcc;	/* .plt.got's jmp, past its endbr64 */
	if (T_CHECK("test_sym_plt_int3_list", read_list(NULL, image, len, &l), "stubs lost"))
		check_list("test_sym_plt_int3", &l.l);
out:
	free_list(&l);
	free(image);
}

/* stkreport's object from the file: its symbols, without the version and with @plt. */
static void test_sym_elf(const char *test, const char *path)
{
	struct sym_elf *e = sym_elf__open(path);
	char name[128];

	if (!T_CHECK(test, e != NULL, "cannot open %s: %s", path, strerror(errno)))
		return;
	for (size_t i = 0; i < sizeof(stubs) / sizeof(stubs[0]); i++) {
		const struct sym_symbol *s = sym_symbols_find(e->syms, e->nsyms, stubs[i].addr + 15);

		snprintf(name, sizeof(name), "%s_%#llx", test, (unsigned long long)stubs[i].addr);
		(void)T_CHECK(name, s && !strcmp(s->name, stubs[i].name), "expected %s, got %s",
			      stubs[i].name, s ? s->name : "(none)");
	}
	snprintf(name, sizeof(name), "%s_plt0", test);
	(void)T_CHECK(name, !sym_symbols_find(e->syms, e->nsyms, PLT0), "PLT0 named");
	sym_elf__close(e);
}

/*
 * A debug file's symbols (here one made-up function) replace a stripped object's: the object's
 * stubs stay, as no debug file has their bytes.
 */
static void test_take_symbols(void)
{
	struct sym_elf *e = sym_elf__open(PLT_STRIPPED), *dbg = calloc(1, sizeof(*dbg));
	const struct sym_symbol *s;

	if (!T_CHECK("test_sym_plt_take_open", e && dbg, "cannot open %s", PLT_STRIPPED))
		goto out;
	dbg->names = strdup("plt_leaf");
	dbg->syms = calloc(1, sizeof(*dbg->syms));
	if (!dbg->names || !dbg->syms)
		goto out;
	dbg->syms[0] = (struct sym_symbol){ 0x1160, 0x20, dbg->names };
	dbg->nsyms = 1;
	(void)T_EQ_INT("test_sym_plt_take_rc", 0, sym_elf__take_symbols(e, dbg));
	s = sym_symbols_find(e->syms, e->nsyms, 0x1168);
	(void)T_CHECK("test_sym_plt_take_debug_symbol", s && !strcmp(s->name, "plt_leaf"),
		      "got %s", s ? s->name : "(none)");
	s = sym_symbols_find(e->syms, e->nsyms, 0x1084);
	(void)T_CHECK("test_sym_plt_take_stub_kept", s && !strcmp(s->name, "puts@plt"), "got %s",
		      s ? s->name : "(none)");
	s = sym_symbols_find(e->syms, e->nsyms, 0x1064);
	(void)T_CHECK("test_sym_plt_take_got_stub_kept",
		      s && !strcmp(s->name, "__cxa_finalize@plt"), "got %s", s ? s->name : "(none)");
	(void)T_EQ_INT("test_sym_plt_take_count", 1 + 7, e->nsyms);
out:
	sym_elf__close(dbg);
	sym_elf__close(e);
}

static void test_names(void)
{
	char *d = sym_demangle("_ZNKSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEE4dataEv@plt");

	(void)T_CHECK("test_sym_plt_demangled",
		      d && !strcmp(d, "std::__cxx11::basic_string<char, std::char_traits<char>, "
				      "std::allocator<char> >::data() const@plt"),
		      "got %s", d ? d : "(none)");
	free(d);
	(void)T_EQ_U64("test_sym_plt_no_version", strlen("memcmp@plt"),
		       cap_symbol_base_len("memcmp@plt"));
	(void)T_EQ_U64("test_sym_plt_version_still", 6, cap_symbol_base_len("memcmp@GLIBC_2.2.5"));
}

int main(void)
{
	if (access(PLT_ELF, R_OK)) {
		printf("skip test_sym_plt: %s not found (run from the repository root)\n", PLT_ELF);
		return 0;
	}
	elf_version(EV_CURRENT);
	test_lists();
	test_uprobe_int3();
	test_sym_elf("test_sym_plt_file", PLT_ELF);
	test_sym_elf("test_sym_plt_file_stripped", PLT_STRIPPED);
	test_take_symbols();
	test_names();
	T_EXIT();
}
