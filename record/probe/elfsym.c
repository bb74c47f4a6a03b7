// SPDX-License-Identifier: MIT
/*
 * elfsym.c: finding a library or binary the way bcc does, and enumerating its function symbols
 * (uprobe targets, as file offsets) and USDT probes (.note.stapsdt) with libelf.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "stk/elfobj.h"
#include "probe.h"

bool rec_soname_matches(const char *lib, const char *soname)
{
	size_t n = strlen(lib);

	/* bcc's which_so(): "lib" LIB ".so", optionally followed by a version (".6"). */
	if (strncmp(soname, "lib", 3) || strncmp(soname + 3, lib, n) || strncmp(soname + 3 + n, ".so", 3))
		return false;
	return soname[6 + n] == 0 || soname[6 + n] == '.';
}

int rec_ldconfig_line(const char *line, char *soname, size_t sz, char *path, size_t psz)
{
	const char *p = line + strspn(line, " \t"), *arrow = strstr(line, " => ");
	size_t n = strcspn(p, " \t");

	if (!arrow || !n || n >= sz)
		return -EINVAL;
	memcpy(soname, p, n);
	soname[n] = 0;
	arrow += 4;
	n = strcspn(arrow, "\n");
	if (!n || n >= psz)
		return -EINVAL;
	memcpy(path, arrow, n);
	path[n] = 0;
	return 0;
}

static bool is_regular(const char *path)
{
	struct stat st;

	return !stat(path, &st) && S_ISREG(st.st_mode);
}

static char *from_ldconfig(const char *lib)
{
	char line[PATH_MAX + 256], soname[256], path[PATH_MAX];
	char *found = NULL;
	FILE *f = popen("/sbin/ldconfig -p 2>/dev/null", "r");

	if (!f)
		return NULL;
	while (fgets(line, sizeof(line), f)) {
		if (found || rec_ldconfig_line(line, soname, sizeof(soname), path, sizeof(path)))
			continue;
#if defined(__x86_64__)
		if (!strstr(line, "x86-64"))
			continue;	/* a 32-bit copy of the library (libc6 without x86-64) */
#endif
		if (rec_soname_matches(lib, soname) && is_regular(path))
			found = strdup(path);
	}
	pclose(f);
	return found;
}

static char *from_pid_maps(const char *lib, int pid)
{
	char path[64], line[PATH_MAX + 128];
	char *found = NULL;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	f = fopen(path, "r");
	if (!f)
		return NULL;
	while (!found && fgets(line, sizeof(line), f)) {
		char *file = strchr(line, '/'), *base;

		if (!file)
			continue;
		file[strcspn(file, "\n")] = 0;
		base = strrchr(file, '/') + 1;
		if (rec_soname_matches(lib, base) || !strcmp(base, lib))
			found = strdup(file);
	}
	fclose(f);
	return found;
}

static char *from_path_env(const char *name)
{
	const char *env = getenv("PATH");
	char dir[PATH_MAX], path[2 * PATH_MAX + 2];

	if (!env)
		env = "/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin";
	while (*env) {
		size_t n = strcspn(env, ":");

		if (n && n < sizeof(dir)) {
			memcpy(dir, env, n);
			dir[n] = 0;
			snprintf(path, sizeof(path), "%s/%s", dir, name);
			if (is_regular(path) && !access(path, X_OK))
				return strdup(path);
		}
		env += n + (env[n] == ':');
	}
	return NULL;
}

char *rec_resolve_lib(const char *lib, int pid)
{
	char *path;

	if (strchr(lib, '/')) {
		if (!is_regular(lib)) {
			errno = ENOENT;
			return NULL;
		}
		return realpath(lib, NULL);
	}
	if (pid > 0 && (path = from_pid_maps(lib, pid)))
		return path;
	if ((path = from_ldconfig(lib)))
		return path;
	if ((path = from_path_env(lib)))
		return path;
	errno = ENOENT;
	return NULL;
}

/* ---- ELF ---------------------------------------------------------------------------------- */

static Elf *open_elf(const char *path, int *fd)
{
	Elf *e;

	elf_version(EV_CURRENT);
	*fd = cap_open_regular(path, true);	/* not a FIFO someone left at a probed path */
	if (*fd < 0) {
		errno = -*fd;
		*fd = -1;
		return NULL;
	}
	e = elf_begin(*fd, ELF_C_READ_MMAP, NULL);
	if (!e || elf_kind(e) != ELF_K_ELF) {
		if (e)
			elf_end(e);
		close(*fd);
		*fd = -1;
		errno = EINVAL;
		return NULL;
	}
	return e;
}

/* File offset of a virtual address, through the executable PT_LOAD segment that holds it. */
static int vaddr_to_offset(Elf *e, uint64_t vaddr, uint64_t *off)
{
	size_t n;
	GElf_Phdr ph;

	if (elf_getphdrnum(e, &n))
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		if (!gelf_getphdr(e, i, &ph) || ph.p_type != PT_LOAD || !(ph.p_flags & PF_X))
			continue;
		if (vaddr >= ph.p_vaddr && vaddr < ph.p_vaddr + ph.p_memsz) {
			*off = vaddr - ph.p_vaddr + ph.p_offset;
			return 0;
		}
	}
	return -ENOENT;
}

struct target_list {
	struct rec_target *v;
	uint32_t n;
};

static int push_target(struct target_list *l, const char *name, const char *provider,
		       uint64_t offset)
{
	struct rec_target *t = realloc(l->v, (l->n + 1) * sizeof(*t));

	if (!t)
		return -ENOMEM;
	l->v = t;
	t += l->n;
	memset(t, 0, sizeof(*t));
	t->name = strdup(name);
	t->provider = provider ? strdup(provider) : NULL;
	t->offset = offset;
	t->nsites = 1;
	if (!t->name || (provider && !t->provider)) {
		free(t->name);
		free(t->provider);
		return -ENOMEM;
	}
	l->n++;
	return 0;
}

static void free_targets(struct target_list *l)
{
	for (uint32_t i = 0; i < l->n; i++) {
		free(l->v[i].name);
		free(l->v[i].provider);
	}
	free(l->v);
}

/*
 * The functions of e's .symtab and .dynsym that m matches, at their file offsets, and its PLT
 * stubs (NAME@plt, as reports name them).
 */
static int match_functions(Elf *e, const struct rec_matcher *m, struct target_list *l)
{
	struct elfobj_syms syms = { 0 };
	uint64_t off;
	int err;

	err = elfobj_syms_add(&syms, e, SHT_SYMTAB, 0);
	if (err >= 0)
		err = elfobj_syms_add(&syms, e, SHT_DYNSYM, 0);
	if (err >= 0)
		err = elfobj_syms_add_plt(&syms, e);
	for (uint32_t i = 0; err >= 0 && i < syms.n; i++) {
		const struct elfobj_sym *s = &syms.v[i];

		if (rec_matcher__match(m, s->c.name) && !vaddr_to_offset(e, s->addr, &off))
			err = push_target(l, s->c.name, NULL, off);
	}
	elfobj_syms_clear(&syms);
	return err < 0 ? err : 0;
}

static int cmp_offset(const void *a, const void *b)
{
	const struct rec_target *x = a, *y = b;

	if (x->offset != y->offset)
		return x->offset < y->offset ? -1 : 1;
	return strcmp(x->name, y->name);
}

/*
 * One uprobe per address: aliases (malloc, __libc_malloc) and the same symbol in .symtab and
 * .dynsym would otherwise count each call twice.
 */
static void unique_offsets(struct target_list *l)
{
	uint32_t n = 0;

	if (!l->n)
		return;
	qsort(l->v, l->n, sizeof(*l->v), cmp_offset);
	for (uint32_t i = 0; i < l->n; i++) {
		if (n && l->v[n - 1].offset == l->v[i].offset) {
			free(l->v[i].name);
			free(l->v[i].provider);
			continue;
		}
		l->v[n++] = l->v[i];
	}
	l->n = n;
}

int rec_elf_functions(const char *path, const struct rec_matcher *m,
		      struct rec_target **targets, uint32_t *n)
{
	struct target_list l = { 0 };
	int fd, err;
	Elf *e = open_elf(path, &fd);

	if (!e)
		return -errno;
	err = match_functions(e, m, &l);
	elf_end(e);
	close(fd);
	if (err) {
		free_targets(&l);
		return err;
	}
	unique_offsets(&l);
	*targets = l.v;
	*n = l.n;
	return 0;
}

/* ---- USDT --------------------------------------------------------------------------------- */

static struct rec_target *find_usdt(struct target_list *l, const char *provider, const char *name)
{
	for (uint32_t i = 0; i < l->n; i++)
		if (!strcmp(l->v[i].provider, provider) && !strcmp(l->v[i].name, name))
			return &l->v[i];
	return NULL;
}

/*
 * One stapsdt note: desc = pc, base, semaphore (each an address of the ELF class), then
 * "provider\0name\0args\0" (systemtap's SDT notes format).
 */
static int usdt_note(const char *desc, size_t len, size_t addr_sz, const struct rec_matcher *m,
		     struct target_list *l)
{
	const char *provider = desc + 3 * addr_sz, *name, *end = desc + len;
	struct rec_target *t;

	if (len < 3 * addr_sz + 2 || !memchr(provider, 0, end - provider))
		return 0;
	name = provider + strlen(provider) + 1;
	if (name >= end || !memchr(name, 0, end - name))
		return 0;
	if (!rec_matcher__match(m, name))
		return 0;
	t = find_usdt(l, provider, name);
	if (t) {
		t->nsites++;
		return 0;
	}
	return push_target(l, name, provider, 0);
}

static int scan_notes(Elf *e, Elf_Data *data, const struct rec_matcher *m,
		      struct target_list *l)
{
	size_t addr_sz = gelf_getclass(e) == ELFCLASS32 ? 4 : 8, off = 0, name_off, desc_off;
	GElf_Nhdr nh;
	int err;

	while (data && (off = gelf_getnote(data, off, &nh, &name_off, &desc_off)) > 0) {
		const char *owner = (const char *)data->d_buf + name_off;

		if (nh.n_type != 3 || nh.n_namesz != 8 || memcmp(owner, "stapsdt", 8))
			continue;
		err = usdt_note((const char *)data->d_buf + desc_off, nh.n_descsz, addr_sz,
				m, l);
		if (err)
			return err;
	}
	return 0;
}

int rec_elf_usdt(const char *path, const struct rec_matcher *m, struct rec_target **targets,
		 uint32_t *n)
{
	struct target_list l = { 0 };
	GElf_Shdr sh;
	Elf_Data *notes;
	int fd, err = 0;
	Elf *e = open_elf(path, &fd);

	if (!e)
		return -errno;
	notes = elfobj_section_named(e, ".note.stapsdt", &sh);
	if (notes && sh.sh_type == SHT_NOTE)
		err = scan_notes(e, notes, m, &l);
	elf_end(e);
	close(fd);
	if (err) {
		free_targets(&l);
		return err;
	}
	*targets = l.v;
	*n = l.n;
	return 0;
}
