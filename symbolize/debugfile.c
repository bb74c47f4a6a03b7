// SPDX-License-Identifier: MIT
/*
 * debugfile.c: where an object's separate debug file is, for both tools (include/stk/elfobj.h).
 * A stripped object (Debian's libc, most distribution binaries) keeps only .dynsym: its local
 * functions (start_thread, __libc_start_call_main) are named only by the .symtab of its debug
 * file, which a debug package installs under /usr/lib/debug and debuginfod leaves in its client
 * cache. stkrec embeds those symbols (record/proc/objects.c), so that a report is the same on a
 * host without the debug files (docs/format.md 4.8); stkreport looks in the same places, plus its
 * --symfs and --debug-dir trees, then asks debuginfod (symbolize/sym_find.c).
 *
 * One list of candidates, the way gdb and elfutils lay debug files out; what a tool opens and
 * checks is its own (elfobj_debug_open() here for stkrec, root, reading files others may write;
 * symbolize/sym_find.c for stkreport, which also wants DWARF and tells a mismatch from an absence).
 *
 * libdwfl's dwfl_standard_find_debuginfo() walks a similar list, but it wants a Dwfl_Module (a
 * live or core-file address space) and checks candidates against a module it opened itself: an
 * OBJECTS record is made from a descriptor, a report from what a capture recorded.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "stk/elfobj.h"

/* libc's debug file is 4 MiB; a large C++ program's can be a few hundred. */
#define DEBUG_MAX (2ull << 30)

/* ---- the candidates ------------------------------------------------------------------------ */

struct search {
	const struct elfobj_debug_dirs *d;
	const struct elfobj_debug_want *w;
	int (*try)(void *arg, const char *file, unsigned int kind);
	void *arg;
	int ret;
};

/* Offer a + b + c + d to the callback: true when it took the file (the search stops). */
static bool offer(struct search *s, unsigned int kind, const char *a, const char *b,
		  const char *c, const char *d)
{
	char file[PATH_MAX];
	int n = snprintf(file, sizeof(file), "%s%s%s%s", a, b, c, d);

	if (n < 0 || n >= (int)sizeof(file))
		return false;
	s->ret = s->try(s->arg, file, kind);
	return s->ret != 0;
}

static bool by_build_id(struct search *s, const char *hex)
{
	const struct elfobj_debug_dirs *d = s->d;
	char tail[2 * CAP_BUILD_ID_MAX + 32];

	if (s->w->build_id_len < 2)
		return false;
	snprintf(tail, sizeof(tail), "/.build-id/%.2s/%s.debug", hex, hex + 2);
	if (d->symfs && d->root[0] && offer(s, 0, d->symfs, d->root, tail, ""))
		return true;
	for (int i = 0; i < d->ndirs; i++) {
		if (offer(s, 0, d->dirs[i], tail, "", ""))
			return true;
		/* a debug dir may also mirror the file system (DIR/usr/bin/foo) */
		if (s->w->path && offer(s, 0, d->dirs[i], s->w->path[0] == '/' ? "" : "/",
					s->w->path, ""))
			return true;
	}
	return d->root[0] && offer(s, ELFOBJ_CAND_ROOT, d->root, tail, "", "");
}

/* A file name as gdb takes a debuglink: no directory part, not "." or "..". */
static bool link_ok(const char *link)
{
	return link && *link && !strchr(link, '/') && strcmp(link, ".") && strcmp(link, "..");
}

/* gdb's order: the object's directory, its .debug/ subdirectory, then each global debug
 * directory followed by the object's directory. */
static bool by_debuglink(struct search *s)
{
	const struct elfobj_debug_dirs *d = s->d;
	const char *path = s->w->path, *slash = path ? strrchr(path, '/') : NULL;
	char dir[PATH_MAX], link[NAME_MAX + 2];
	const unsigned int k = ELFOBJ_CAND_LINK;
	int n;

	if (!link_ok(s->w->debuglink) || !slash || path[0] != '/' ||
	    (size_t)(slash - path) >= sizeof(dir))
		return false;
	memcpy(dir, path, slash - path);
	dir[slash - path] = 0;
	n = snprintf(link, sizeof(link), "/%s", s->w->debuglink);
	if (n < 0 || n >= (int)sizeof(link))
		return false;
	if (d->symfs && (offer(s, k, d->symfs, dir, link, "") ||
			 offer(s, k, d->symfs, dir, "/.debug", link)))
		return true;
	if (offer(s, k, dir, link, "", "") || offer(s, k, dir, "/.debug", link, ""))
		return true;
	for (int i = 0; i < d->ndirs; i++)
		if (offer(s, k, d->dirs[i], dir, link, ""))
			return true;
	if (d->symfs && d->root[0] && offer(s, k, d->symfs, d->root, dir, link))
		return true;
	/* only ROOT is root's: a link beside the object is the object owner's */
	return d->root[0] && offer(s, k | ELFOBJ_CAND_ROOT, d->root, dir, link, "");
}

int elfobj_debug_search(const struct elfobj_debug_dirs *d, const struct elfobj_debug_want *w,
			int (*try)(void *arg, const char *file, unsigned int kind), void *arg)
{
	struct search s = { .d = d, .w = w, .try = try, .arg = arg };
	char hex[2 * CAP_BUILD_ID_MAX + 1];

	if (w->build_id_len > CAP_BUILD_ID_MAX)
		return 0;
	elfobj_hex(w->build_id, w->build_id_len, hex);
	if (by_build_id(&s, hex) || by_debuglink(&s))
		return s.ret;
	for (int i = 0; w->build_id_len && i < ELFOBJ_DEBUG_CACHES; i++)
		if (d->cache[i][0] && offer(&s, 0, d->cache[i], "/", hex, "/debuginfo"))
			return s.ret;
	return 0;
}

/* ---- stkrec's rules ------------------------------------------------------------------------ */

struct safe_open {
	const struct elfobj_debug_want *w;
	Elf *e;
	int fd;
};

static bool has_symtab(Elf *e)
{
	GElf_Shdr sh;

	return elfobj_section(e, SHT_SYMTAB, &sh) && sh.sh_size;
}

/* Is file the debug file of w? 1 with s->fd and s->e set, or 0. */
static int try_safe(void *arg, const char *file, unsigned int kind)
{
	struct safe_open *s = arg;
	int fd = cap_open_regular(file, kind & ELFOBJ_CAND_ROOT);
	uint8_t id[CAP_BUILD_ID_MAX];
	struct stat st;
	uint32_t n, crc;
	Elf *e = NULL;
	bool ok = false;

	if (fd < 0)
		return 0;
	if (fstat(fd, &st) || !st.st_size || (uint64_t)st.st_size > DEBUG_MAX)
		goto out;
	e = elf_begin(fd, ELF_C_READ, NULL);
	if (!e || elf_kind(e) != ELF_K_ELF || !has_symtab(e))
		goto out;
	/* another build-id is another build, whatever its name; without one, the link's CRC */
	n = elfobj_build_id(e, id);
	if (n)
		ok = n == s->w->build_id_len && !memcmp(id, s->w->build_id, n);
	else if (kind & ELFOBJ_CAND_LINK)
		ok = !cap_file_crc32(fd, st.st_size, &crc) && crc == s->w->crc;
out:
	if (ok) {
		s->e = e;
		s->fd = fd;
		return 1;
	}
	if (e)
		elf_end(e);
	close(fd);
	return 0;
}

int elfobj_debug_open(const struct elfobj_debug_dirs *d, const struct elfobj_debug_want *w,
		      Elf **e)
{
	struct safe_open s = { .w = w, .fd = -ENOENT };

	elfobj_debug_search(d, w, try_safe, &s);
	*e = s.e;
	return s.fd;
}
